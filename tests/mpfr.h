/* tests/mpfr.h: MPFR for the tests that measure against it (test_crmath, test_dd, test_exact),
 * where the build found it (DBTR_HAVE_MPFR, tests/CMakeLists.txt). Without it such a test
 * cannot decide anything, so each of its cases begins with NEED_MPFR(), which skips (exit 77)
 * and says how to get it. Include after tests/test.h. */
#ifndef DBTR_TESTS_MPFR_H
#define DBTR_TESTS_MPFR_H

#ifdef DBTR_HAVE_MPFR
#include <mpfr.h>
#define NEED_MPFR() ((void)0)
#else
#define NEED_MPFR() TEST_SKIP("built without MPFR: apt-get install libmpfr-dev and reconfigure")
#endif

#endif
