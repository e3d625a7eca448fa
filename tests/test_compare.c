/* tests/test_compare.c: the comparison statistics behind `dbtr validate` (recon/compare.c). */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>

#include "recon/compare.h"
#include "recon/error.h"
#include "tests/test.h"

DBTR_TEST(ulp_distance_cases) {
  CHECK_EQ_U64(dbtr_ulp_distance_f(1.0f, 1.0f), 0);
  CHECK_EQ_U64(dbtr_ulp_distance_f(0.0f, -0.0f), 0);          /* +0 and -0 compare equal */
  CHECK_EQ_U64(dbtr_ulp_distance_f(1.0f, nextafterf(1.0f, 2.0f)), 1);
  CHECK_EQ_U64(dbtr_ulp_distance_f(-FLT_TRUE_MIN, FLT_TRUE_MIN), 2); /* across zero: -min, 0, +min */
  CHECK_EQ_U64(dbtr_ulp_distance_f(1.0f, 2.0f), 1u << 23);    /* one binade holds 2^23 floats */
  CHECK_EQ_U64(dbtr_ulp_distance_f(NAN, 1.0f), UINT64_MAX);
  CHECK_EQ_U64(dbtr_ulp_distance_f(1.0f, NAN), UINT64_MAX);
  CHECK_EQ_U64(dbtr_ulp_distance_d(1.0, 2.0), (uint64_t)1 << 52);
  CHECK_EQ_U64(dbtr_ulp_distance_d(-DBL_MAX, DBL_MAX), 2 * (uint64_t)0x7fefffffffffffff); /* no overflow */
}

/* The median ULP distance equals the middle of the sorted distances, on random arrays of
 * random sizes with many ties, as ULP distances have: in odd trials up to 39 ulps (the median
 * found in the counts of distances below 1024), in even ones up to 39 x 100 (often above,
 * found by selection among the large ones). */
static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

DBTR_TEST(median_is_the_sorted_middle) {
  srand(5);
  for (int trial = 0; trial < 300; trial++) {
    size_t n = 1 + (size_t)(rand() % 2000);
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    uint64_t *u = malloc(n * sizeof *u);
    REQUIRE(a && b && u);
    for (size_t i = 0; i < n; i++) {
      b[i] = 1.0f;
      a[i] = rand() % 3 ? 1.0f + (float)(rand() % 40 * (trial % 2 ? 1 : 100)) * FLT_EPSILON : 1.0f;
      u[i] = dbtr_ulp_distance_f(a[i], b[i]);
    }
    dbtr_diff_stats st;
    CHECK_OK(dbtr_diff_stats_f(a, b, n, NULL, &st));
    qsort(u, n, sizeof *u, cmp_u64);
    CHECK_EQ_U64(st.median_ulp, u[n / 2]);
    free(a);
    free(b);
    free(u);
  }
}

DBTR_TEST(stats_known_differences) {
  float a[4] = {1.0f, 2.0f, 3.0f, 4.0f}, b[4] = {1.0f, 2.0f, 3.5f, 4.0f};
  dbtr_display_scale scale = {0.0, 4.0}; /* 3.0 shows as 15000, 3.5 as 17500 */
  dbtr_diff_stats st;
  CHECK_OK(dbtr_diff_stats_f(a, b, 4, &scale, &st));
  CHECK_EQ_INT(st.n_differ, 1);
  CHECK_EQ_INT(st.n_differ_u16, 1);
  CHECK(st.max_abs == 0.5);
  CHECK(st.mean_abs == 0.125);
  CHECK_EQ_U64(st.max_ulp, 1u << 21); /* 3 and 3.5 are 2^22 * 0.5 apart in [2, 4) */
  CHECK_EQ_U64(st.median_ulp, 0);
  /* ||a - b|| / ||b|| = 0.5 / sqrt(1 + 4 + 12.25 + 16) */
  CHECK_NEAR(st.rel_l2, 0.5 / sqrt(33.25), 1e-15);
  CHECK_EQ_INT(st.beyond_4ulp, 1);
  /* The largest |b| is 4, whose float ulp (the gap above it) is 2^-21: 0.5 is 2^20 of those. */
  CHECK(st.scale_ulp == 1048576.0);
}

/* Scale ulps against elementwise ulps where a value touches zero: 1e-25 against 1e-20 is
 * more than 10^8 float ulps apart (about 17 binades of 2^23 floats each), but 1e-20 is a tiny
 * fraction of the ulp of the largest value, 1 (2^-23). Beside it, an element 3 ulp off is not
 * beyond 4 ulp, and sets the scale error. */
DBTR_TEST(scale_ulp_against_elementwise_ulp) {
  float a[3] = {1e-25f, 1.0f, 0.5f}, b[3] = {1e-20f, 1.0f, 0.5f};
  a[2] = nextafterf(nextafterf(nextafterf(0.5f, 1.0f), 1.0f), 1.0f); /* 3 ulp of 0.5 (2^-24 each) above */
  dbtr_diff_stats st;
  CHECK_OK(dbtr_diff_stats_f(a, b, 3, NULL, &st));
  CHECK_GT(st.max_ulp, 100000000u);
  CHECK_EQ_INT(st.beyond_4ulp, 1); /* the element near zero */
  /* max |a - b| is 3 x 2^-24 (the 0.5 element; 1e-20 is far smaller), 1.5 ulps of 1. */
  CHECK(st.scale_ulp == 1.5);
  /* In double, the same values: the largest |b| is 1, whose double ulp is 2^-52. */
  double c[2] = {1.0 + 0x1p-50, 0.25}, d[2] = {1.0, 0.25};
  CHECK_OK(dbtr_diff_stats_d(c, d, 2, NULL, &st));
  CHECK_EQ_U64(st.max_ulp, 4);
  CHECK_EQ_INT(st.beyond_4ulp, 0); /* 4 ulp is not beyond 4 */
  CHECK(st.scale_ulp == 4.0);
  /* A reference of zeros: its scale is the smallest subnormal, so one of those is 1 scale ulp. */
  float z[2] = {0.0f, 0.0f}, m[2] = {0.0f, FLT_TRUE_MIN};
  CHECK_OK(dbtr_diff_stats_f(m, z, 2, NULL, &st));
  CHECK(st.scale_ulp == 1.0);
}

/* ||a - b|| / ||b|| with a in float and b in double, and the rounding errors of double-double
 * values: their rounding to double has error lo, to float the float's distance. */
DBTR_TEST(rel_l2_mixed_and_rounding) {
  float a[2] = {1.0f, 2.0f};
  double b[2] = {1.0, 2.5};
  CHECK_NEAR(dbtr_rel_l2_d(DBTR_PREC_FLOAT, a, b, 2), 0.5 / sqrt(7.25), 1e-15);
  CHECK(dbtr_rel_l2_d(DBTR_PREC_DOUBLE, b, b, 2) == 0.0);
  /* x = 1 + 2^-30 + 2^-60: to double it is 1 + 2^-30 (error 2^-60), to float 1 (error
   * 2^-30 + 2^-60); x = 3, exact in both. */
  dbtr_dd x[2] = {{1.0 + 0x1p-30, 0x1p-60}, {3.0, 0.0}};
  float xf[2] = {1.0f, 3.0f};
  double rf, rd, h = 1.0 + 0x1p-30, norm = sqrt(h * h + 9.0); /* hi's squares stand for x's */
  dbtr_rounding_rel_l2(x, xf, 2, &rf, &rd);
  /* A few roundings of relative 2^-53 each: 1e-15 relative covers them. */
  CHECK_NEAR(rd, 0x1p-60 / norm, 1e-15 * 0x1p-60);
  CHECK_NEAR(rf, (0x1p-30 + 0x1p-60) / norm, 1e-15 * 0x1p-30);
}

/* Two paths that both produce NaN have not agreed on anything: validate must report them
 * as differing (compare.h), whether the NaNs' bits are equal or not. */
DBTR_TEST(nan_never_counts_as_identical) {
  float qnan = NAN, other = -NAN; /* the same NaN bits, and NaN with the sign flipped */
  CHECK_EQ_U64(dbtr_ulp_distance_f(qnan, qnan), UINT64_MAX);
  CHECK_EQ_U64(dbtr_ulp_distance_f(qnan, other), UINT64_MAX);
  CHECK_EQ_U64(dbtr_ulp_distance_d((double)NAN, (double)NAN), UINT64_MAX);
  float a[3] = {1.0f, NAN, 2.0f}, b[3] = {1.0f, NAN, 2.0f};
  dbtr_diff_stats st;
  CHECK_OK(dbtr_diff_stats_f(a, b, 3, NULL, &st));
  CHECK_EQ_INT(st.n_differ, 1); /* the NaN element, though its bits are the same in a and b */
  CHECK_EQ_U64(st.max_ulp, UINT64_MAX);
  double c[2] = {(double)NAN, 0.5}, d[2] = {(double)NAN, 0.5};
  CHECK_OK(dbtr_diff_stats_d(c, d, 2, NULL, &st));
  CHECK_EQ_INT(st.n_differ, 1);
}

DBTR_TEST_MAIN(ulp_distance_cases, median_is_the_sorted_middle, stats_known_differences, scale_ulp_against_elementwise_ulp,
               rel_l2_mixed_and_rounding, nan_never_counts_as_identical)
