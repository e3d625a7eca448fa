/* tests/test_outputs.c: what the dbtr command promises about its outputs, through the
 * function every command calls before its work (cli_check_output) and the writer under
 * every output (io/atomic_file.c): without --force no existing file is replaced, not even
 * one that appeared while the command ran (two runs writing the same -o); temporaries that
 * killed runs left are removed, with a line each, and a live run's never. */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "app/cli.h"
#include "io/atomic_file.h"
#include "recon/error.h"
#include "tests/test.h"
#include "tests/tmpdir.h"

/* One write of text to path as a command does it, after its check: begin, write, commit. */
static int save(const char *path, const char *text) {
  dbtr_atomic_file f;
  int rc = dbtr_atomic_begin(&f, path);
  if (rc) return rc;
  if (write_text(f.tmp, text) != 0) {
    dbtr_atomic_abort(&f);
    return DBTR_EIO;
  }
  return dbtr_atomic_commit(&f);
}

/* Issue 23, item 5. The command checked its -o (absent) and ran; meanwhile another run wrote
 * the same -o; this one's write begins after that. The target exists at begin, but no
 * --force allowed replacing it: the commit must keep the other run's file and fail (exit 2)
 * naming it, and leave no temporary. */
DBTR_TEST(no_force_keeps_a_file_that_appeared) {
  char dir[64], p[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(p, dir, "out.tif");
  REQUIRE(cli_check_output("test", p, NULL, 0, 0) == 0);
  REQUIRE(write_text(p, "other run") == 0);
  int rc = save(p, "this run");
  CHECK_EQ_INT(rc, DBTR_EINVAL);
  CHECK_EQ_INT(dbtr_exit_code(rc), 2);
  CHECK_STR_CONTAINS(dbtr_errmsg(), p);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "was left as it is");
  CHECK(file_is(p, "other run"));
  CHECK_EQ_INT(tmp_count(dir), 1); /* the other run's file, no temporary */
  tmp_remove(dir);
}

/* With --force the output named is replaced, spelled another way too ("DIR/./out.tif"). */
DBTR_TEST(force_replaces_the_output_it_names) {
  char dir[64], p[256], other[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(p, dir, "out.tif");
  tmp_path(other, dir, "./out.tif");
  REQUIRE(write_text(p, "old") == 0);
  REQUIRE(cli_check_output("test", other, NULL, 0, 1) == 0);
  CHECK_OK(save(p, "new"));
  CHECK(file_is(p, "new"));
  CHECK_EQ_INT(tmp_count(dir), 1);
  tmp_remove(dir);
}

/* A checkpoint saved every K iterations without --force: the first save creates the file,
 * the later ones replace it, as it is this process's own; a file another run put in its
 * place meanwhile is not, and is kept. */
DBTR_TEST(own_file_saved_again_but_not_anothers) {
  char dir[64], p[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(p, dir, "state.ckpt");
  REQUIRE(cli_check_output("test", p, NULL, 0, 0) == 0);
  CHECK_OK(save(p, "iteration 1"));
  CHECK_OK(save(p, "iteration 2"));
  CHECK(file_is(p, "iteration 2"));
  REQUIRE(unlink(p) == 0);
  REQUIRE(write_text(p, "other run") == 0);
  CHECK_EQ_INT(save(p, "iteration 3"), DBTR_EINVAL);
  CHECK(file_is(p, "other run"));
  CHECK_EQ_INT(tmp_count(dir), 1);
  tmp_remove(dir);
}

/* cli_check_output(p) with stderr caught in err (what it printed, up to its size). */
static int check_output_said(const char *dir, const char *p, char *err, size_t len) {
  char log[256];
  tmp_path(log, dir, "stderr.txt"); /* removed before the caller counts the folder */
  fflush(stderr);
  int saved = dup(STDERR_FILENO), fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (saved < 0 || fd < 0) return -1;
  dup2(fd, STDERR_FILENO);
  close(fd);
  int ex = cli_check_output("test", p, NULL, 0, 0);
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  FILE *f = fopen(log, "r");
  size_t n = f ? fread(err, 1, len - 1, f) : 0;
  err[n] = '\0';
  if (f) fclose(f);
  unlink(log);
  return ex;
}

/* Issue 23, item 6. A run writing out.tif is stopped (alive, holding its temporary), then
 * killed by SIGKILL, which no handler sees. While it lives its temporary is kept, though
 * another process looks at the folder; once it is dead, the next command writing to the
 * folder removes the temporary and says so in a line that names it. */
DBTR_TEST(killed_runs_temporary_removed_live_ones_kept) {
  char dir[64], p[256], err[1024];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(p, dir, "out.tif");
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dbtr_atomic_file f;
    char ok = dbtr_atomic_begin(&f, p) == 0 && write_text(f.tmp, "partial") == 0;
    if (write(ready[1], &ok, 1) != 1) _exit(1);
    pause(); /* a long run, until the parent kills it */
    _exit(1);
  }
  close(ready[1]);
  char ok = 0;
  REQUIRE(read(ready[0], &ok, 1) == 1 && ok);
  close(ready[0]);
  CHECK_EQ_INT(check_output_said(dir, p, err, sizeof err), 0);
  CHECK_EQ_INT(tmp_count(dir), 1); /* the live run's temporary */
  CHECK(strstr(err, "removed") == NULL);
  kill(pid, SIGKILL);
  int status;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK_EQ_INT(tmp_count(dir), 1); /* SIGKILL left it behind */
  CHECK_EQ_INT(check_output_said(dir, p, err, sizeof err), 0);
  CHECK_EQ_INT(tmp_count(dir), 0);
  CHECK_STR_CONTAINS(err, "dbtr test: removed ");
  CHECK_STR_CONTAINS(err, "/.out.tif.");
  CHECK_STR_CONTAINS(err, "killed");
  tmp_remove(dir);
}

/* This process's own temporary, open in a write, is locked against the process itself
 * too: a command that checks a second output in the same folder meanwhile keeps it. */
DBTR_TEST(own_live_temporary_kept) {
  char dir[64], p[256], q[256], err[1024];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(p, dir, "out.tif");
  tmp_path(q, dir, "truth.tif");
  dbtr_atomic_file f;
  REQUIRE_OK(dbtr_atomic_begin(&f, p));
  CHECK_EQ_INT(check_output_said(dir, q, err, sizeof err), 0);
  CHECK_EQ_INT(tmp_count(dir), 1);
  CHECK(strstr(err, "removed") == NULL);
  dbtr_atomic_abort(&f);
  CHECK_EQ_INT(tmp_count(dir), 0);
  tmp_remove(dir);
}

/* Temporaries of a dbtr before the locks (.NAME.PID.N.tmp) never had a lock to prove their
 * writer alive: one is taken for dead only when unchanged for 10 minutes (a writer of that
 * time changes it every few seconds). So one an hour old goes and one just written stays;
 * a file of another program whose name merely ends in .tmp is not dbtr's and stays. */
DBTR_TEST(legacy_temporaries_removed_only_when_idle) {
  char dir[64], p[256], old[256], fresh[256], other[256], err[1024];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(p, dir, "out.tif");
  tmp_path(old, dir, ".out.tif.4242.0.tmp");
  tmp_path(fresh, dir, ".out.tif.4243.0.tmp");
  tmp_path(other, dir, ".session.tmp");
  REQUIRE(write_text(old, "old") == 0 && write_text(fresh, "fresh") == 0 && write_text(other, "x") == 0);
  struct timespec hour_ago[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}}; /* 6 x the 10 minutes */
  REQUIRE(utimensat(AT_FDCWD, old, hour_ago, 0) == 0);
  REQUIRE(utimensat(AT_FDCWD, other, hour_ago, 0) == 0);
  CHECK_EQ_INT(check_output_said(dir, p, err, sizeof err), 0);
  CHECK(access(old, F_OK) != 0);
  CHECK(access(fresh, F_OK) == 0);
  CHECK(access(other, F_OK) == 0);
  CHECK_STR_CONTAINS(err, ".out.tif.4242.0.tmp");
  tmp_remove(dir);
}

/* Issue 23, poor messages: an output name of 244 characters (the file system allows 255)
 * failed, as the temporary's name (the output's, a dot, PID, N and .dbtr.tmp) did not fit.
 * The temporary cuts the name to fit, at a character's start: here a 2-byte UTF-8 letter
 * sits where the cut falls. */
DBTR_TEST(long_output_name) {
  char dir[64], p[512], name[256];
  REQUIRE(tmp_make(dir) == 0);
  memset(name, 'a', 244);
  /* The cut falls after 255 - 1 - strlen(".PID.0.dbtr.tmp") bytes of the name: é's two
   * bytes are put on either side of it. */
  char tail[64];
  size_t cut = 255 - 1 - (size_t)snprintf(tail, sizeof tail, ".%ld.0.dbtr.tmp", (long)getpid());
  memcpy(name + cut - 1, "\xc3\xa9", 2);
  memcpy(name + 240, ".tif", 5);
  snprintf(p, sizeof p, "%s/%s", dir, name);
  REQUIRE(cli_check_output("test", p, NULL, 0, 0) == 0);
  dbtr_atomic_file f;
  REQUIRE_OK(dbtr_atomic_begin(&f, p));
  const char *base = strrchr(f.tmp, '/') + 1;
  CHECK_LE(strlen(base), 255);
  CHECK(strstr(base, "\xc3.") == NULL); /* é not cut in half: it is left out whole */
  dbtr_atomic_abort(&f);
  CHECK_OK(save(p, "whole"));
  CHECK(file_is(p, "whole"));
  CHECK_EQ_INT(tmp_count(dir), 1);
  tmp_remove(dir);
}

DBTR_TEST_MAIN(no_force_keeps_a_file_that_appeared, force_replaces_the_output_it_names,
               own_file_saved_again_but_not_anothers, killed_runs_temporary_removed_live_ones_kept,
               own_live_temporary_kept, legacy_temporaries_removed_only_when_idle, long_output_name)
