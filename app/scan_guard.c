/* app/scan_guard.c: reading a scan file with guards against libhdf5 crashing or looping.
 *
 * HDF5 1.10 trusts its own structures (object headers, heaps) in a file, and some damaged
 * files make it read through bad pointers, or loop for ever, before any of dbtr's checks
 * can act (tests/fuzz/hdf5_known/, docs/errors.md). While dbtr_scan_read runs:
 * - a fatal signal ends the process with the exit code of a bad file (2) and one line
 *   that names the command, the file and the signal, instead of a core dump;
 * - the header (attributes, shapes, geometry: a few kilobytes, read in milliseconds from
 *   a valid file) must be read within DBTR_SCAN_HEADER_SECONDS (default 60), or the process
 *   ends the same way. Every loop the fuzzers found is there, in the decoding of a
 *   variable-length string attribute. The bulk arrays that follow are not timed: their
 *   reading time grows with the file and the storage.
 * Nothing has been written at that point: every command reads its scan before it creates
 * any output. The handlers use only write() and _exit() (async-signal-safe) and run on
 * their own stack, so a stack overflow in a recursive HDF5 routine is caught too. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/cli.h"
#include "recon/error.h"

enum { HEADER_SECONDS_DEFAULT = 60, HEADER_SECONDS_MAX = 86400 };

static const int guard_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM};
static const char *const guard_names[] = {"SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT", "SIGALRM"};
enum { GUARD_N = sizeof guard_signals / sizeof guard_signals[0] };

static char guard_crash[1024]; /* "dbtr CMD: PATH: reading the file crashed (" */
static char guard_hang[1280];  /* the whole line for SIGALRM */
static size_t guard_crash_len, guard_hang_len;
static int guard_exit;
static const char guard_tail[] = "); the file is damaged in a way libhdf5 does not detect (docs/errors.md). "
                                 "Nothing was written.\n";

static void put(const char *s, size_t n) {
  while (n > 0) {
    ssize_t w = write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= (size_t)w;
  }
}

static void on_signal(int sig) {
  if (sig == SIGALRM) {
    put(guard_hang, guard_hang_len);
  } else {
    put(guard_crash, guard_crash_len);
    for (size_t i = 0; i < GUARD_N; i++)
      if (guard_signals[i] == sig) put(guard_names[i], strlen(guard_names[i]));
    put(guard_tail, sizeof guard_tail - 1);
  }
  _exit(guard_exit);
}

static size_t clamp_len(int n, size_t cap) { return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1; }

/* DBTR_SCAN_HEADER_SECONDS, or the default (with a warning) when it is not a whole number of
 * seconds from 1 to HEADER_SECONDS_MAX. */
static unsigned header_seconds(const char *cmd) {
  const char *v = getenv("DBTR_SCAN_HEADER_SECONDS");
  if (!v || !*v) return HEADER_SECONDS_DEFAULT;
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (errno || *end || n < 1 || n > HEADER_SECONDS_MAX) {
    fprintf(stderr, "dbtr %s: DBTR_SCAN_HEADER_SECONDS='%s' is not a whole number of seconds from 1 to %d; using %d\n",
            cmd, v, HEADER_SECONDS_MAX, HEADER_SECONDS_DEFAULT);
    return HEADER_SECONDS_DEFAULT;
  }
  return (unsigned)n;
}

static void header_done(void *ctx) {
  (void)ctx;
  alarm(0);
}

int cli_read_scan(const char *cmd, dbtr_scan *s, const char *path) {
  static char alt_stack[1 << 16];
  unsigned secs = header_seconds(cmd);
  int n = snprintf(guard_crash, sizeof guard_crash, "dbtr %s: %s: reading the file crashed (", cmd, path);
  guard_crash_len = clamp_len(n, sizeof guard_crash);
  n = snprintf(guard_hang, sizeof guard_hang,
               "dbtr %s: %s: reading the file's header did not finish in %u s; libhdf5 loops on some damaged files "
               "(docs/errors.md). Nothing was written.\n",
               cmd, path, secs);
  guard_hang_len = clamp_len(n, sizeof guard_hang);
  guard_exit = dbtr_exit_code(DBTR_EFORMAT);
  stack_t ss = {.ss_sp = alt_stack, .ss_size = sizeof alt_stack}, old_ss;
  int have_alt = sigaltstack(&ss, &old_ss) == 0;
  struct sigaction sa, old[GUARD_N];
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_ONSTACK; /* the handler does not return, so no SA_RESETHAND */
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < GUARD_N; i++) sigaction(guard_signals[i], &sa, &old[i]);
  alarm(secs);
  int rc = dbtr_scan_read_hooked(s, path, header_done, NULL);
  alarm(0);
  for (size_t i = 0; i < GUARD_N; i++) sigaction(guard_signals[i], &old[i], NULL);
  if (have_alt) sigaltstack(&old_ss, NULL);
  return rc;
}
