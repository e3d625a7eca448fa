/* io/scan_guard.c: reading a scan with libhdf5 kept at arm's length.
 *
 * HDF5 1.10 trusts its own structures (object headers, heaps) in a file, and some damaged
 * files make it read through bad pointers, or loop for ever, while it decodes the file's
 * metadata, before any of dbtr's checks can act (tests/fuzz/hdf5_known/, docs/errors.md).
 * Every such file the fuzzers found fails in the header: attributes, shapes, the geometry.
 * So the header is read first in a forked child, with a time limit:
 * - the child reads up to the end of the header (dbtr_scan_read_hooked's header_done), and
 *   reports success, or dbtr's own refusal (code and message), through a pipe;
 * - a crash whose faulting instruction lies in libhdf5 is reported by the child's handler
 *   as a damaged file; a crash anywhere else (dbtr's own code) is not excused: the parent
 *   raises the same signal and dies loudly, so a reader regression fails the tests;
 * - a child still working after the time limit is killed: a loop in libhdf5.
 * Then the parent reads the whole file itself, with no handlers: the bulk arrays' reading
 * time grows with the file and the storage, and is not timed. */
#define _GNU_SOURCE /* dladdr, REG_RIP */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "io/guard.h"
#include "io/scan.h"
#include "io/scan_h5.h"
#include "recon/error.h"

/* What the child sends: code 0 (success), a DBTR_E* code with dbtr's message, or
 * LIBHDF5_CRASH with the signal number in sig. */
enum { LIBHDF5_CRASH = 1 };
typedef struct {
  int code, sig;
  char msg[1024];
} report;

static int report_fd = -1;
/* The library whose crashes the child reports as a damaged file (set in the child only). */
static const dbtr__guard_lib *guarded;

static const dbtr__guard_lib hdf5_lib = {{"libhdf5"}, "libhdf5", "reading the file's header", 0};

static void send_report(const report *r) {
  const char *p = (const char *)r;
  size_t n = sizeof *r;
  while (n > 0) {
    ssize_t w = write(report_fd, p, n);
    if (w <= 0) return;
    p += w;
    n -= (size_t)w;
  }
}

/* The faulting instruction's address, where the platform says where to find it. */
static void *fault_pc(void *uc) {
#if defined(__x86_64__)
  return (void *)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
  return (void *)((ucontext_t *)uc)->uc_mcontext.pc;
#else
  (void)uc;
  return NULL;
#endif
}

static int in_library(void *addr, const char *name) {
  Dl_info dl;
  return addr && dladdr(addr, &dl) && dl.dli_fname && strstr(dl.dli_fname, name);
}

static int in_guarded(void *addr) {
  for (int i = 0; i < 4 && guarded->match[i]; i++)
    if (in_library(addr, guarded->match[i])) return 1;
  return 0;
}

/* The C and C++ runtimes, which a library calls (memcpy, operator delete; abort() after a
 * failed assert, or when free() finds the heap corrupted) and which do not decide whose
 * crash it is. */
static int in_runtime(void *addr) { return in_library(addr, "libc.so") || in_library(addr, "libstdc++.so"); }

/* Whether the crash is the guarded library's: the faulting instruction is in it, or in a
 * runtime called by it: the first frame of the interrupted stack outside the runtimes
 * decides. A return address points after its call, hence the - 1. */
static int crashed_in_guarded(void *uc) {
  void *pc = fault_pc(uc), *frames[64];
  if (in_guarded(pc)) return 1;
  if (!in_runtime(pc)) return 0;
  int n = backtrace(frames, 64), i = 0;
  while (i < n && frames[i] != pc) i++;
  for (i++; i < n; i++)
    if (!in_runtime(frames[i])) return in_guarded((char *)frames[i] - 1);
  return 0;
}

/* In the child only. dladdr and backtrace are not on POSIX's async-signal-safe list; they
 * read the loader's tables and the stack, and should one hang, the parent's time limit
 * ends the child. */
static void on_crash(int sig, siginfo_t *info, void *uc) {
  (void)info;
  if (crashed_in_guarded(uc)) {
    report r = {.code = LIBHDF5_CRASH, .sig = sig};
    send_report(&r);
    _exit(0);
  }
  signal(sig, SIG_DFL); /* not the library's: die of the signal, for the parent to pass on */
  raise(sig);
}

void dbtr__guard_succeed(void) {
  report r = {0};
  send_report(&r);
  _exit(0);
}

static void child(int (*fn)(void *ctx), void *ctx) {
  void *warm[1];
  backtrace(warm, 1); /* loads the unwinder now, not inside the signal handler */
  static char alt_stack[1 << 16]; /* a stack overflow in a recursive HDF5 routine is caught too */
  stack_t ss = {.ss_sp = alt_stack, .ss_size = sizeof alt_stack};
  sigaltstack(&ss, NULL);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_crash;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
  int rc = fn(ctx);
  report r = {.code = rc};
  if (rc) snprintf(r.msg, sizeof r.msg, "%s", dbtr_errmsg());
  send_report(&r);
  _exit(0);
}

static const char *signal_name(int sig) {
  switch (sig) {
  case SIGSEGV: return "SIGSEGV";
  case SIGBUS: return "SIGBUS";
  case SIGFPE: return "SIGFPE";
  case SIGILL: return "SIGILL";
  case SIGABRT: return "SIGABRT";
  default: return "a signal";
  }
}

/* Waits up to seconds for the child's report; kills it after that. Returns 1 with *r filled,
 * 0 on time-out, -1 when the child ended without a whole report. */
static int await_report(int fd, pid_t pid, unsigned seconds, report *r, int *status) {
  size_t got = 0;
  int timed_out = 0;
  while (got < sizeof *r) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int n = poll(&p, 1, (int)(seconds * 1000u));
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {
      timed_out = 1;
      break;
    }
    ssize_t k = read(fd, (char *)r + got, sizeof *r - got);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    got += (size_t)k;
  }
  if (timed_out) kill(pid, SIGKILL);
  while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
  return timed_out ? 0 : got == sizeof *r ? 1 : -1;
}

int dbtr__guarded_call(int (*fn)(void *ctx), void *ctx, unsigned seconds, const char *path) {
  return dbtr__guarded_call_in(&hdf5_lib, fn, ctx, seconds, path);
}

int dbtr__guarded_call_in(const dbtr__guard_lib *lib, int (*fn)(void *ctx), void *ctx, unsigned seconds,
                          const char *path) {
  int fds[2];
  if (pipe(fds) != 0) return dbtr_err(DBTR_EIO, "%s: cannot make a pipe for the header check: %s", path, strerror(errno));
  fflush(NULL); /* nothing buffered is written twice by the child */
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return dbtr_err(DBTR_EIO, "%s: cannot start the header check: %s", path, strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    report_fd = fds[1];
    guarded = lib;
    int null_fd = lib->quiet ? open("/dev/null", O_WRONLY) : -1;
    if (null_fd >= 0) dup2(null_fd, STDERR_FILENO);
    child(fn, ctx);
  }
  close(fds[1]);
  report r;
  int status = 0, got = await_report(fds[0], pid, seconds, &r, &status);
  close(fds[0]);
  if (got == 0)
    return dbtr_err(DBTR_EFORMAT, "%s: %s did not finish in %u s; %s loops on some damaged files (docs/errors.md)",
                    path, lib->reading, seconds, lib->name);
  if (got < 0 && WIFSIGNALED(status)) {
    /* A crash outside the library: a bug of dbtr's, which must not pass for a damaged file. */
    fprintf(stderr, "dbtr: %s: %s crashed outside %s (%s): a bug in dbtr\n", path, lib->reading, lib->name,
            signal_name(WTERMSIG(status)));
    signal(WTERMSIG(status), SIG_DFL);
    raise(WTERMSIG(status));
  }
  if (got < 0)
    return dbtr_err(DBTR_EINTERNAL, "%s: the header check ended without a report (exit status %d)", path,
                    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  if (r.code == LIBHDF5_CRASH)
    return dbtr_err(DBTR_EFORMAT, "%s: %s crashed %s (%s); the file is damaged in a way %s does not detect "
                    "(docs/errors.md)", path, lib->reading, lib->name, signal_name(r.sig), lib->name);
  r.msg[sizeof r.msg - 1] = 0;
  return r.code ? dbtr_err(r.code, "%s", r.msg) : 0;
}

static void header_done(void *ctx) {
  (void)ctx;
  dbtr__guard_succeed();
}

/* In the child: reads up to the end of the header, where header_done reports success. */
static int read_header(void *ctx) {
  dbtr_scan s;
  int rc = dbtr_scan_read_hooked(&s, ctx, header_done, NULL);
  return rc ? rc : dbtr_err(DBTR_EINTERNAL, "%s: the header check returned without reading the header", (char *)ctx);
}

int dbtr_scan_read_guarded(dbtr_scan *s, const char *path, unsigned header_seconds) {
  if (!s) return dbtr_err(DBTR_EINVAL, "dbtr_scan_read: no scan struct given");
  memset(s, 0, sizeof *s);
  if (!path || !*path) return dbtr_err(DBTR_EINVAL, "scan path is empty");
  int rc = dbtr__guarded_call(read_header, (void *)path, header_seconds, path);
  return rc ? rc : dbtr_scan_read(s, path);
}
