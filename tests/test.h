/* tests/test.h: a tiny test harness. One executable per module, one CTest entry per case.
 *
 *   DBTR_TEST(adjoint_tiny) { ... CHECK_EQ_INT(a, b); ... }
 *   DBTR_TEST_MAIN(adjoint_tiny, adjoint_hologic)
 *
 * `test_x NAME` runs one case; without an argument it runs them all. tests/CMakeLists.txt
 * reads the DBTR_TEST(...) lines and registers each case as its own CTest test. A case
 * that cannot run here (no GPU, no display) calls TEST_SKIP, which exits 77 (CTest SKIP).
 * Every check prints both operands and the place when it fails. */
#ifndef DBTR_TEST_H
#define DBTR_TEST_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *name;
  void (*fn)(void);
} dbtr_test_case;

extern int dbtr_test_failures;

#define DBTR_TEST(name) static void test_##name(void)

#define TEST__FAIL(...)                                          \
  do {                                                           \
    fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);        \
    fprintf(stderr, __VA_ARGS__);                                \
    fprintf(stderr, "\n");                                       \
    dbtr_test_failures++;                                        \
  } while (0)

#define CHECK(cond)                                   \
  do {                                                \
    if (!(cond)) TEST__FAIL("%s", #cond);             \
  } while (0)
#define REQUIRE(cond)                                 \
  do {                                                \
    if (!(cond)) {                                    \
      TEST__FAIL("%s (required; case stops)", #cond); \
      return;                                         \
    }                                                 \
  } while (0)
#define CHECK_EQ_INT(a, b)                                                                          \
  do {                                                                                              \
    long long a_ = (long long)(a), b_ = (long long)(b);                                             \
    if (a_ != b_) TEST__FAIL("%s == %s: %lld != %lld", #a, #b, a_, b_);                            \
  } while (0)
#define CHECK_EQ_U64(a, b)                                                                          \
  do {                                                                                              \
    uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                                \
    if (a_ != b_) TEST__FAIL("%s == %s: %" PRIu64 " != %" PRIu64, #a, #b, a_, b_);                  \
  } while (0)
#define CHECK_LT(a, b)                                                                              \
  do {                                                                                              \
    double a_ = (double)(a), b_ = (double)(b);                                                      \
    if (!(a_ < b_)) TEST__FAIL("%s < %s: %.17g >= %.17g", #a, #b, a_, b_);                          \
  } while (0)
#define CHECK_LE(a, b)                                                                              \
  do {                                                                                              \
    double a_ = (double)(a), b_ = (double)(b);                                                      \
    if (!(a_ <= b_)) TEST__FAIL("%s <= %s: %.17g > %.17g", #a, #b, a_, b_);                         \
  } while (0)
#define CHECK_GT(a, b) CHECK_LT(b, a)
/* |a - b| <= tol, with the reason for tol written at the call. */
#define CHECK_NEAR(a, b, tol)                                                                       \
  do {                                                                                              \
    double a_ = (double)(a), b_ = (double)(b), t_ = (double)(tol);                                  \
    if (!(fabs(a_ - b_) <= t_)) TEST__FAIL("|%s - %s| <= %s: |%.17g - %.17g| = %.3g > %.3g", #a, #b, #tol, a_, b_, fabs(a_ - b_), t_); \
  } while (0)
#define CHECK_STR_CONTAINS(hay, needle)                                                             \
  do {                                                                                              \
    const char *h_ = (hay), *n_ = (needle);                                                         \
    if (!h_ || !strstr(h_, n_)) TEST__FAIL("\"%s\" contains \"%s\"", h_ ? h_ : "(null)", n_);      \
  } while (0)
/* For library calls: rc must be 0; prints dbtr_errmsg() otherwise. */
#define CHECK_OK(call)                                                                              \
  do {                                                                                              \
    int rc_ = (call);                                                                               \
    if (rc_ != 0) TEST__FAIL("%s returned %d: %s", #call, rc_, dbtr_errmsg());                      \
  } while (0)
#define REQUIRE_OK(call)                                                                            \
  do {                                                                                              \
    int rc_ = (call);                                                                               \
    if (rc_ != 0) {                                                                                 \
      TEST__FAIL("%s returned %d: %s (required; case stops)", #call, rc_, dbtr_errmsg());           \
      return;                                                                                       \
    }                                                                                               \
  } while (0)

#define TEST_SKIP(...)                             \
  do {                                             \
    fprintf(stderr, "SKIP: " __VA_ARGS__);         \
    fprintf(stderr, "\n");                         \
    exit(77);                                      \
  } while (0)

/* Skips the case (exit 77, SKIP) where no CUDA GPU is found, as every GPU case does; never
 * when the GPU path fails. The file declares dbtr_gpu_available (include/dbtr.h). */
#define TEST_NEED_GPU()                                                                         \
  do {                                                                                          \
    char test_gpu_name_[256];                                                                   \
    if (!dbtr_gpu_available(test_gpu_name_, sizeof test_gpu_name_))                             \
      TEST_SKIP("no CUDA GPU (or a build without CUDA)");                                       \
  } while (0)

#define DBTR__TEST_ENTRY(name) {#name, test_##name},
#define DBTR__TEST_E1(a) DBTR__TEST_ENTRY(a)
/* Lists the cases; CMake finds them by the DBTR_TEST(name) lines, this table runs them. */
#define DBTR_TEST_MAIN(...)                                                          \
  int dbtr_test_failures = 0;                                                        \
  int main(int argc, char **argv) {                                                  \
    static const char *names = #__VA_ARGS__;                                         \
    void (*fns[])(void) = {DBTR__TEST_FNS(__VA_ARGS__)};                             \
    return dbtr_test_run(argc, argv, names, fns, sizeof fns / sizeof fns[0]);        \
  }

/* Up to 40 cases per file. */
#define DBTR__TF1(a) test_##a
#define DBTR__TEST_FNS(...) DBTR__MAP(DBTR__TF1, __VA_ARGS__)
#define DBTR__MAP(f, ...) DBTR__MAPN(DBTR__NARG(__VA_ARGS__), f, __VA_ARGS__)
#define DBTR__MAPN(n, f, ...) DBTR__MAPN_(n, f, __VA_ARGS__)
#define DBTR__MAPN_(n, f, ...) DBTR__MAP##n(f, __VA_ARGS__)
#define DBTR__NARG(...) DBTR__NARG_(__VA_ARGS__, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
#define DBTR__NARG_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, _33, _34, _35, _36, _37, _38, _39, _40, N, ...) N
#define DBTR__MAP1(f, a) f(a)
#define DBTR__MAP2(f, a, ...) f(a), DBTR__MAP1(f, __VA_ARGS__)
#define DBTR__MAP3(f, a, ...) f(a), DBTR__MAP2(f, __VA_ARGS__)
#define DBTR__MAP4(f, a, ...) f(a), DBTR__MAP3(f, __VA_ARGS__)
#define DBTR__MAP5(f, a, ...) f(a), DBTR__MAP4(f, __VA_ARGS__)
#define DBTR__MAP6(f, a, ...) f(a), DBTR__MAP5(f, __VA_ARGS__)
#define DBTR__MAP7(f, a, ...) f(a), DBTR__MAP6(f, __VA_ARGS__)
#define DBTR__MAP8(f, a, ...) f(a), DBTR__MAP7(f, __VA_ARGS__)
#define DBTR__MAP9(f, a, ...) f(a), DBTR__MAP8(f, __VA_ARGS__)
#define DBTR__MAP10(f, a, ...) f(a), DBTR__MAP9(f, __VA_ARGS__)
#define DBTR__MAP11(f, a, ...) f(a), DBTR__MAP10(f, __VA_ARGS__)
#define DBTR__MAP12(f, a, ...) f(a), DBTR__MAP11(f, __VA_ARGS__)
#define DBTR__MAP13(f, a, ...) f(a), DBTR__MAP12(f, __VA_ARGS__)
#define DBTR__MAP14(f, a, ...) f(a), DBTR__MAP13(f, __VA_ARGS__)
#define DBTR__MAP15(f, a, ...) f(a), DBTR__MAP14(f, __VA_ARGS__)
#define DBTR__MAP16(f, a, ...) f(a), DBTR__MAP15(f, __VA_ARGS__)
#define DBTR__MAP17(f, a, ...) f(a), DBTR__MAP16(f, __VA_ARGS__)
#define DBTR__MAP18(f, a, ...) f(a), DBTR__MAP17(f, __VA_ARGS__)
#define DBTR__MAP19(f, a, ...) f(a), DBTR__MAP18(f, __VA_ARGS__)
#define DBTR__MAP20(f, a, ...) f(a), DBTR__MAP19(f, __VA_ARGS__)
#define DBTR__MAP21(f, a, ...) f(a), DBTR__MAP20(f, __VA_ARGS__)
#define DBTR__MAP22(f, a, ...) f(a), DBTR__MAP21(f, __VA_ARGS__)
#define DBTR__MAP23(f, a, ...) f(a), DBTR__MAP22(f, __VA_ARGS__)
#define DBTR__MAP24(f, a, ...) f(a), DBTR__MAP23(f, __VA_ARGS__)
#define DBTR__MAP25(f, a, ...) f(a), DBTR__MAP24(f, __VA_ARGS__)
#define DBTR__MAP26(f, a, ...) f(a), DBTR__MAP25(f, __VA_ARGS__)
#define DBTR__MAP27(f, a, ...) f(a), DBTR__MAP26(f, __VA_ARGS__)
#define DBTR__MAP28(f, a, ...) f(a), DBTR__MAP27(f, __VA_ARGS__)
#define DBTR__MAP29(f, a, ...) f(a), DBTR__MAP28(f, __VA_ARGS__)
#define DBTR__MAP30(f, a, ...) f(a), DBTR__MAP29(f, __VA_ARGS__)
#define DBTR__MAP31(f, a, ...) f(a), DBTR__MAP30(f, __VA_ARGS__)
#define DBTR__MAP32(f, a, ...) f(a), DBTR__MAP31(f, __VA_ARGS__)
#define DBTR__MAP33(f, a, ...) f(a), DBTR__MAP32(f, __VA_ARGS__)
#define DBTR__MAP34(f, a, ...) f(a), DBTR__MAP33(f, __VA_ARGS__)
#define DBTR__MAP35(f, a, ...) f(a), DBTR__MAP34(f, __VA_ARGS__)
#define DBTR__MAP36(f, a, ...) f(a), DBTR__MAP35(f, __VA_ARGS__)
#define DBTR__MAP37(f, a, ...) f(a), DBTR__MAP36(f, __VA_ARGS__)
#define DBTR__MAP38(f, a, ...) f(a), DBTR__MAP37(f, __VA_ARGS__)
#define DBTR__MAP39(f, a, ...) f(a), DBTR__MAP38(f, __VA_ARGS__)
#define DBTR__MAP40(f, a, ...) f(a), DBTR__MAP39(f, __VA_ARGS__)

/* Runs the named case (argv[1]) or all; returns 0 if every check held, 1 otherwise. */
static inline int dbtr_test_run(int argc, char **argv, const char *names, void (**fns)(void), size_t n) {
  char buf[4096];
  size_t len = strlen(names);
  if (len >= sizeof buf) len = sizeof buf - 1;
  memcpy(buf, names, len);
  buf[len] = '\0';
  const char *list[64];
  size_t m = 0;
  for (char *tok = strtok(buf, ", \t\n"); tok && m < 64; tok = strtok(NULL, ", \t\n")) list[m++] = tok;
  if (m != n) {
    fprintf(stderr, "test harness: %zu names for %zu cases\n", m, n);
    return 1;
  }
  int ran = 0;
  for (size_t i = 0; i < n; i++) {
    if (argc > 1 && strcmp(argv[1], list[i]) != 0) continue;
    int before = dbtr_test_failures;
    fns[i]();
    printf("%s %s\n", dbtr_test_failures == before ? "ok" : "FAILED", list[i]);
    ran++;
  }
  if (!ran) {
    fprintf(stderr, "no test case named %s\n", argc > 1 ? argv[1] : "(none)");
    return 1;
  }
  return dbtr_test_failures ? 1 : 0;
}

#endif
