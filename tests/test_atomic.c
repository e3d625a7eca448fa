/* tests/test_atomic.c: what io/atomic_file.c promises: outputs appear whole or not at all,
 * only regular files are replaced, a file that appears during a write is not clobbered,
 * and a signal during a write leaves no temporary behind. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/atomic_file.h"
#include "recon/error.h"
#include "tests/test.h"
#include "tests/tmpdir.h"

/* A new file and a replaced one (it existed at begin: the caller allowed --force). */
DBTR_TEST(commit_new_and_replace) {
  char dir[64], p[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(p, dir, "out");
  dbtr_atomic_file f;
  REQUIRE_OK(dbtr_atomic_begin(&f, p));
  CHECK_EQ_INT(f.replace, 0);
  REQUIRE(write_text(f.tmp, "one") == 0);
  CHECK_OK(dbtr_atomic_commit(&f));
  CHECK(file_is(p, "one"));
  REQUIRE_OK(dbtr_atomic_begin(&f, p));
  CHECK_EQ_INT(f.replace, 1);
  REQUIRE(write_text(f.tmp, "two") == 0);
  CHECK_OK(dbtr_atomic_commit(&f));
  CHECK(file_is(p, "two"));
  CHECK_EQ_INT(tmp_count(dir), 1); /* the output, no temporary */
  tmp_remove(dir);
}

/* Two runs writing the same new file: the one that commits second finds the first's file
 * and must leave it alone, failing with exit code 2 (DBTR_EINVAL) and no temporary. */
DBTR_TEST(appeared_meanwhile_is_not_clobbered) {
  char dir[64], p[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(p, dir, "out");
  dbtr_atomic_file first, second;
  REQUIRE_OK(dbtr_atomic_begin(&first, p));
  REQUIRE_OK(dbtr_atomic_begin(&second, p));
  REQUIRE(write_text(first.tmp, "first") == 0);
  REQUIRE(write_text(second.tmp, "second") == 0);
  CHECK_OK(dbtr_atomic_commit(&first));
  int rc = dbtr_atomic_commit(&second);
  CHECK_EQ_INT(rc, DBTR_EINVAL);
  CHECK_EQ_INT(dbtr_exit_code(rc), 2);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "appeared while dbtr was writing it");
  CHECK(file_is(p, "first"));
  CHECK_EQ_INT(tmp_count(dir), 1);
  tmp_remove(dir);
}

static void check_refused(const char *path, const char *what) {
  dbtr_atomic_file f;
  int rc = dbtr_atomic_begin(&f, path);
  CHECK_EQ_INT(rc, DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), path);
  CHECK_STR_CONTAINS(dbtr_errmsg(), what);
  CHECK_EQ_INT(dbtr_atomic_check_target(path), DBTR_EINVAL);
}

/* Devices, FIFOs, sockets, folders and symbolic links are never replaced, --force or not:
 * as root, replacing /dev/null with a file would break the whole system. */
DBTR_TEST(non_regular_targets_refused) {
  char dir[64], fifo[256], link_p[256], target[256], sub[256];
  REQUIRE(tmp_make(dir) == 0);
  check_refused("/dev/null", "a device");
  tmp_path(fifo, dir, "fifo");
  REQUIRE(mkfifo(fifo, 0600) == 0);
  check_refused(fifo, "a FIFO");
  tmp_path(target, dir, "real");
  REQUIRE(write_text(target, "keep") == 0);
  tmp_path(link_p, dir, "link");
  REQUIRE(symlink(target, link_p) == 0);
  check_refused(link_p, "a symbolic link");
  tmp_path(sub, dir, "sub");
  REQUIRE(mkdir(sub, 0700) == 0);
  check_refused(sub, "a folder");
  CHECK(file_is(target, "keep"));
  CHECK_EQ_INT(tmp_count(dir), 4); /* fifo, real, link, sub: no temporary */
  CHECK_EQ_INT(dbtr_atomic_check_target(target), 0);
  tmp_remove(dir);
}

/* A child begins a write, then receives sig; it must exit 128 + sig having removed its
 * temporary, so the folder holds only the file that was there before. */
static void signal_case(int sig) {
  char dir[64], p[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(p, dir, "out");
  REQUIRE(write_text(p, "old") == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dbtr_atomic_cleanup_on_signals();
    dbtr_atomic_file f;
    if (dbtr_atomic_begin(&f, p) || write_text(f.tmp, "partial") != 0) _exit(1);
    raise(sig);
    _exit(1); /* not reached when the handler runs */
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK_EQ_INT(WEXITSTATUS(status), 128 + sig);
  CHECK_EQ_INT(tmp_count(dir), 1);
  CHECK(file_is(p, "old"));
  tmp_remove(dir);
}

DBTR_TEST(sigint_removes_temporary) { signal_case(SIGINT); }
DBTR_TEST(sigterm_removes_temporary) { signal_case(SIGTERM); }
DBTR_TEST(sighup_removes_temporary) { signal_case(SIGHUP); }

/* Under a file-size limit the write fails with EFBIG (SIGXFSZ ignored) instead of the
 * process being killed by the signal. */
static int write_past_limit(void *arg) {
  const char *p = arg;
  dbtr_atomic_cleanup_on_signals();
  dbtr_atomic_file f;
  if (dbtr_atomic_begin(&f, p)) return 0;
  int fd = open(f.tmp, O_WRONLY);
  static char block[1024];
  ssize_t n = 0;
  /* 8 blocks are twice the limit: a write stops at the limit, the next fails. */
  for (int i = 0; i < 8 && fd >= 0 && (n = write(fd, block, sizeof block)) == (ssize_t)sizeof block; i++) {
  }
  int efbig = n < 0 && errno == EFBIG;
  if (fd >= 0) close(fd);
  dbtr_atomic_abort(&f);
  return efbig;
}

DBTR_TEST(file_size_limit_is_an_error_not_a_signal) {
  char dir[64], p[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(p, dir, "out");
  /* run_with_file_limit ignores SIGXFSZ itself; the child calls the handler set-up too,
   * which must keep it ignored. */
  CHECK(run_with_file_limit(4096, write_past_limit, p));
  CHECK_EQ_INT(tmp_count(dir), 0);
  tmp_remove(dir);
}

DBTR_TEST_MAIN(commit_new_and_replace, appeared_meanwhile_is_not_clobbered, non_regular_targets_refused,
               sigint_removes_temporary, sigterm_removes_temporary, sighup_removes_temporary,
               file_size_limit_is_an_error_not_a_signal)
