/* tests/test_scan_guard.c: io/scan_guard.c tells a file that crashes libhdf5 (refused as
 * damaged) from a crash in dbtr's own code (a bug, which must kill the caller loudly), and
 * ends a header read that does not finish. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/scan.h"
#include "io/scan_h5.h"
#include "recon/error.h"
#include "tests/test.h"

static int succeeds(void *ctx) {
  (void)ctx;
  dbtr__guard_succeed();
  return DBTR_EINTERNAL; /* not reached */
}

static int refuses(void *ctx) {
  (void)ctx;
  return dbtr_err(DBTR_EGEOM, "scan.h5: /geometry: view 3: refused in the child");
}

static int loops(void *ctx) {
  (void)ctx;
  for (;;) pause(); /* until the guard's SIGKILL */
  return 0;
}

static int crashes_in_own_code(void *ctx) {
  volatile int *p = ctx; /* NULL: a bug of ours */
  *p = 1;
  return 0;
}

static int reads_libhdf5_crash(void *ctx) {
  dbtr_scan s;
  return dbtr_scan_read(&s, ctx);
}

DBTR_TEST(success_and_refusal_pass_through) {
  CHECK_OK(dbtr__guarded_call(succeeds, NULL, 10, "scan.h5"));
  CHECK_EQ_INT(dbtr__guarded_call(refuses, NULL, 10, "scan.h5"), DBTR_EGEOM);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "view 3: refused in the child");
}

DBTR_TEST(loop_times_out) {
  CHECK_EQ_INT(dbtr__guarded_call(loops, NULL, 1, "loop.h5"), DBTR_EFORMAT);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "loop.h5");
  CHECK_STR_CONTAINS(dbtr_errmsg(), "did not finish in 1 s");
}

/* The crash of tests/fuzz/hdf5_known/local_heap_lookup_segv: a memcpy from a null buffer,
 * called by libhdf5. */
DBTR_TEST(libhdf5_crash_is_a_damaged_file) {
#if defined(__SANITIZE_ADDRESS__)
  TEST_SKIP("AddressSanitizer reports libhdf5's bad access itself before any handler");
#endif
  const char *path = DBTR_SOURCE_DIR "/tests/fuzz/hdf5_known/local_heap_lookup_segv";
  CHECK_EQ_INT(dbtr__guarded_call(reads_libhdf5_crash, (void *)path, 30, path), DBTR_EFORMAT);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "crashed libhdf5 (SIGSEGV)");
}

/* A crash in dbtr's own code is not passed off as a damaged file: the process that asked
 * for the guarded call dies of the same signal. */
DBTR_TEST(own_crash_kills_the_caller) {
#if defined(__SANITIZE_ADDRESS__)
  TEST_SKIP("AddressSanitizer reports the null write itself before any handler");
#endif
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int rc = dbtr__guarded_call(crashes_in_own_code, NULL, 30, "scan.h5");
    _exit(rc == 0 ? 0 : 1); /* not reached when the crash is passed on */
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status));
  if (WIFSIGNALED(status)) CHECK_EQ_INT(WTERMSIG(status), SIGSEGV);
}

DBTR_TEST_MAIN(success_and_refusal_pass_through, loop_times_out, libhdf5_crash_is_a_damaged_file,
               own_crash_kills_the_caller)
