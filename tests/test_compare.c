/* tests/test_compare.c: the comparison statistics behind `dbtr validate` (recon/compare.c). */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recon/backend.h"
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

/* A source that hands out copies of pieces of two arrays (so nothing can read beyond a
 * piece), checking that each read asks for whole chunks within the bound promised. */
typedef struct {
  const char *a, *b;
  size_t ea, eb, n, piece, reads, bad;
  char *ca, *cb; /* the copies, dbtr_diff_read_max(n, piece) elements each */
} pieces;

static int read_piece(void *user, size_t lo, size_t hi, const void **a, const void **b) {
  pieces *p = user;
  p->reads++;
  if (hi <= lo || hi > p->n || hi - lo > dbtr_diff_read_max(p->n, p->piece)) {
    p->bad++;
    return DBTR_EINTERNAL;
  }
  memcpy(p->ca, p->a + lo * p->ea, (hi - lo) * p->ea);
  memcpy(p->cb, p->b + lo * p->eb, (hi - lo) * p->eb);
  *a = p->ca;
  *b = p->cb;
  return 0;
}

static dbtr_diff_source piece_source(pieces *p, const void *a, size_t ea, const void *b, size_t eb, size_t n,
                                     size_t piece) {
  size_t m = dbtr_diff_read_max(n, piece);
  *p = (pieces){a, b, ea, eb, n, piece, 0, 0, malloc(m * ea), malloc(m * eb)};
  return (dbtr_diff_source){read_piece, p, piece};
}

static void same_stats(const dbtr_diff_stats *x, const dbtr_diff_stats *y) {
  CHECK_EQ_INT(x->n_differ, y->n_differ);
  CHECK_EQ_INT(x->n_differ_u16, y->n_differ_u16);
  CHECK_EQ_INT(x->beyond_4ulp, y->beyond_4ulp);
  CHECK_EQ_U64(x->max_ulp, y->max_ulp);
  CHECK_EQ_U64(x->median_ulp, y->median_ulp);
  /* The same sums in the same order: the same bits. */
  CHECK(x->max_abs == y->max_abs && x->mean_abs == y->mean_abs && x->rel_l2 == y->rel_l2 &&
        x->scale_ulp == y->scale_ulp);
}

/* dbtr_rel_l2_read of two arrays in memory, in one piece. */
static double rel_l2(dbtr_precision pa, const void *a, const double *b, size_t n) {
  pieces p;
  dbtr_diff_source src = piece_source(&p, a, dbtr_precision_size(pa), b, sizeof *b, n, n);
  double r = -1.0;
  CHECK_OK(dbtr_rel_l2_read(pa, n, &src, &r));
  free(p.ca), free(p.cb);
  return r;
}

/* ||a - b|| / ||b|| with a in float and b in double, and the rounding errors of double-double
 * values: their rounding to double has error lo, to float the float's distance. */
DBTR_TEST(rel_l2_mixed_and_rounding) {
  float a[2] = {1.0f, 2.0f};
  double b[2] = {1.0, 2.5};
  CHECK_NEAR(rel_l2(DBTR_PREC_FLOAT, a, b, 2), 0.5 / sqrt(7.25), 1e-15);
  CHECK(rel_l2(DBTR_PREC_DOUBLE, b, b, 2) == 0.0);
  /* x = 1 + 2^-30 + 2^-60: to double it is 1 + 2^-30 (error 2^-60), to float 1 (error
   * 2^-30 + 2^-60); x = 3, exact in both. */
  dbtr_dd x[2] = {{1.0 + 0x1p-30, 0x1p-60}, {3.0, 0.0}};
  float xf[2] = {1.0f, 3.0f};
  double rf, rd, h = 1.0 + 0x1p-30, norm = sqrt(h * h + 9.0); /* hi's squares stand for x's */
  pieces p;
  dbtr_diff_source src = piece_source(&p, x, sizeof *x, xf, sizeof *xf, 2, 2);
  CHECK_OK(dbtr_rounding_rel_l2_read(2, &src, &rf, &rd));
  free(p.ca), free(p.cb);
  /* A few roundings of relative 2^-53 each: 1e-15 relative covers them. */
  CHECK_NEAR(rd, 0x1p-60 / norm, 1e-15 * 0x1p-60);
  CHECK_NEAR(rf, (0x1p-30 + 0x1p-60) / norm, 1e-15 * 0x1p-30);
}

/* dbtr validate reads its recorded references a piece at a time: every statistic must be
 * the one of the whole arrays, bit for bit, for any piece size, with the median found in the
 * counts (distances up to 40 ulp) and among the large distances (up to 4000), which reads
 * the arrays twice. */
DBTR_TEST(pieces_give_the_whole_arrays_statistics) {
  enum { N = 100003 }; /* not a multiple of the 256 chunks */
  float *af = malloc(N * sizeof *af), *bf = malloc(N * sizeof *bf);
  double *ad = malloc(N * sizeof *ad), *bd = malloc(N * sizeof *bd);
  dbtr_dd *x = malloc(N * sizeof *x);
  REQUIRE(af && bf && ad && bd && x);
  dbtr_display_scale scale = {0.0, 2.0};
  for (int large = 0; large < 2; large++) {
    srand(11u + (unsigned)large);
    for (size_t i = 0; i < N; i++) {
      bf[i] = 1.0f + (float)(rand() % 1000) / 1000.0f;
      af[i] = bf[i] + (float)(rand() % 40 * (large ? 100 : 1)) * FLT_EPSILON;
      bd[i] = (double)bf[i];
      ad[i] = bd[i] + (double)(rand() % 40 * (large ? 100 : 1)) * DBL_EPSILON;
      x[i] = (dbtr_dd){bd[i], (double)(rand() % 100) * 0x1p-70};
      bf[i] = (float)bd[i];
    }
    dbtr_diff_stats whole_f, whole_d, st;
    double rel_whole = rel_l2(DBTR_PREC_FLOAT, af, bd, N), rf_whole, rd_whole, rel, rf, rd;
    CHECK_OK(dbtr_diff_stats_f(af, bf, N, &scale, &whole_f));
    CHECK_OK(dbtr_diff_stats_d(ad, bd, N, &scale, &whole_d));
    pieces p;
    dbtr_diff_source src = piece_source(&p, x, sizeof *x, bf, sizeof *bf, N, N);
    CHECK_OK(dbtr_rounding_rel_l2_read(N, &src, &rf_whole, &rd_whole));
    free(p.ca), free(p.cb);
    CHECK(large ? whole_f.median_ulp >= 1024 : whole_f.median_ulp < 1024); /* both ways of finding it */
    const size_t piece[] = {1, 1000, 7777, N};
    for (size_t k = 0; k < sizeof piece / sizeof *piece; k++) {
      src = piece_source(&p, af, sizeof *af, bf, sizeof *bf, N, piece[k]);
      CHECK_OK(dbtr_diff_stats_read(DBTR_PREC_FLOAT, N, &src, &scale, &st));
      same_stats(&st, &whole_f);
      free(p.ca), free(p.cb);
      src = piece_source(&p, ad, sizeof *ad, bd, sizeof *bd, N, piece[k]);
      CHECK_OK(dbtr_diff_stats_read(DBTR_PREC_DOUBLE, N, &src, &scale, &st));
      same_stats(&st, &whole_d);
      free(p.ca), free(p.cb);
      src = piece_source(&p, af, sizeof *af, bd, sizeof *bd, N, piece[k]);
      CHECK_OK(dbtr_rel_l2_read(DBTR_PREC_FLOAT, N, &src, &rel));
      CHECK(rel == rel_whole);
      free(p.ca), free(p.cb);
      src = piece_source(&p, x, sizeof *x, bf, sizeof *bf, N, piece[k]);
      CHECK_OK(dbtr_rounding_rel_l2_read(N, &src, &rf, &rd));
      CHECK(rf == rf_whole && rd == rd_whole);
      CHECK_EQ_INT(p.bad, 0);
      /* One read a chunk at piece 1 (256 chunks), one in all for the whole array. */
      if (piece[k] == 1) CHECK_EQ_INT(p.reads, 256);
      if (piece[k] == N) CHECK_EQ_INT(p.reads, 1);
      free(p.ca), free(p.cb);
    }
  }
  free(af), free(bf), free(ad), free(bd), free(x);
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
               rel_l2_mixed_and_rounding, pieces_give_the_whole_arrays_statistics, nan_never_counts_as_identical)
