/* tests/test_outputs.c: what the dbtr command promises about its outputs, through the
 * function every command calls before its work (cli_check_output) and the writer under
 * every output (io/atomic_file.c): without --force no existing file is replaced, not even
 * one that appeared while the command ran (two runs writing the same -o). */
#include <sys/stat.h>
#include <unistd.h>

#include "app/cli.h"
#include "io/atomic_file.h"
#include "recon/error.h"
#include "tests/test.h"
#include "tests/tmpdir.h"

static int write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  int ok = fputs(text, f) >= 0;
  return fclose(f) == 0 && ok ? 0 : -1;
}

static int file_is(const char *path, const char *text) {
  char buf[64] = {0};
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  return n == strlen(text) && memcmp(buf, text, n) == 0;
}

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

DBTR_TEST_MAIN(no_force_keeps_a_file_that_appeared, force_replaces_the_output_it_names,
               own_file_saved_again_but_not_anothers)
