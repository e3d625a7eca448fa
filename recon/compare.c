/* recon/compare.c: element-wise comparison statistics between two results. */
#include "recon/compare.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "recon/error.h"

/* Maps a float's bits to a line on which neighbouring floats are consecutive integers:
 * negative floats are mirrored below zero, and -0 lands on +0. */
static int64_t ordered_f(float a) {
  int32_t i;
  memcpy(&i, &a, sizeof i);
  return i < 0 ? -(int64_t)(i & 0x7fffffff) : (int64_t)i;
}

static int64_t ordered_d(double a) {
  int64_t i;
  memcpy(&i, &a, sizeof i);
  return i < 0 ? -(i & INT64_MAX) : i;
}

uint64_t dbtr_ulp_distance_f(float a, float b) {
  if (isnan(a) || isnan(b)) return UINT64_MAX;
  int64_t d = ordered_f(a) - ordered_f(b);
  return (uint64_t)(d < 0 ? -d : d);
}

uint64_t dbtr_ulp_distance_d(double a, double b) {
  if (isnan(a) || isnan(b)) return UINT64_MAX;
  int64_t ia = ordered_d(a), ib = ordered_d(b);
  /* The difference of two values on the ordered line can exceed INT64_MAX (a huge
   * positive against a huge negative): compute it in unsigned arithmetic. */
  return ia >= ib ? (uint64_t)ia - (uint64_t)ib : (uint64_t)ib - (uint64_t)ia;
}

static long display_value(double v, const dbtr_display_scale *s) {
  double x = (v - s->lo) / (s->hi - s->lo) * 20000.0;
  if (!(x > 0.0)) return 0;
  if (x >= 65535.0) return 65535;
  return lround(x);
}

/* The k-th smallest of a[0..n) (0-based), by quickselect with a median-of-three pivot:
 * linear time on average, where sorting 10^8 distances took tens of seconds. a is
 * reordered. */
static uint64_t select_kth(uint64_t *a, size_t n, size_t k) {
  size_t lo = 0, hi = n - 1;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    uint64_t x = a[lo], y = a[mid], z = a[hi];
    uint64_t pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
    size_t i = lo, j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        uint64_t t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        if (j == 0) break;
        j--;
      }
    }
    if (k <= j)
      hi = j;
    else if (k >= i)
      lo = i;
    else
      return a[k];
  }
  return a[k];
}

/* Partial statistics of one chunk. The array is cut into DBTR__CHUNKS fixed chunks, each
 * summed in index order by one thread and the partials combined in chunk order, so the
 * result is the same for any thread count. Each chunk also counts its ULP distances below
 * DBTR__SMALL, one by one, and those above: the median is then found in the counts, and
 * only where it lies above (rarely: most distances are 0 or a few ulps) among the distances
 * above, gathered in a second pass. Before, a quickselect over every distance, on one thread,
 * took about 1.5 s a comparison at hologic size. */
enum { DBTR__CHUNKS = 256, DBTR__SMALL = 1024 };
typedef struct {
  size_t n_differ, n_differ_u16, n_large, beyond_4ulp;
  uint64_t max_ulp;
  double max_abs, max_b, sum_abs, sum_d2, sum_b2;
  size_t small[DBTR__SMALL];
} dbtr__part;

/* The median (the (n/2)-th smallest, 0-based) of the distances from the chunks' counts into
 * out->median_ulp: 0 when it is below DBTR__SMALL, 1 when it lies among the larger ones. */
static int median_of(const dbtr__part *part, size_t n, dbtr_diff_stats *out) {
  size_t k = n / 2, below = 0;
  for (size_t v = 0; v < DBTR__SMALL; v++) {
    for (int c = 0; c < DBTR__CHUNKS; c++) below += part[c].small[v];
    if (below > k) {
      out->median_ulp = v;
      return 0;
    }
  }
  return 1;
}

/* The unit in the last place at x >= 0, in float and in double: the gap from x to the next
 * larger value (IEEE's ulp at a power of two is the gap above it), the gap below for the
 * largest finite value, and NaN for infinity or NaN. Exact: neighbours subtract exactly. */
static double ulp_at_f(double x) {
  float f = (float)x; /* exact: x is a float's magnitude */
  if (!isfinite(f)) return (double)NAN;
  return f == FLT_MAX ? (double)(f - nextafterf(f, 0.0f)) : (double)(nextafterf(f, INFINITY) - f);
}

static double ulp_at_d(double x) {
  if (!isfinite(x)) return (double)NAN;
  return x == DBL_MAX ? x - nextafter(x, 0.0) : nextafter(x, (double)INFINITY) - x;
}

/* An element more than this many ulp from its reference counts in beyond_4ulp. */
enum { DBTR__FEW_ULP = 4 };

#define DBTR__DIFF_STATS(NAME, T, ULP, ULP_AT)                                                         \
  int NAME(const T *a, const T *b, size_t n, const dbtr_display_scale *scale, dbtr_diff_stats *out) { \
    memset(out, 0, sizeof *out);                                                                       \
    out->n = n;                                                                                        \
    if (n == 0) return 0;                                                                              \
    dbtr__part *part;                                                                                  \
    int rc = dbtr_alloc((void **)&part, DBTR__CHUNKS, sizeof *part, "comparison");                     \
    if (rc) return rc;                                                                                 \
    _Pragma("omp parallel for schedule(static)") for (int c = 0; c < DBTR__CHUNKS; c++) {              \
      dbtr__part *q = &part[c];                                                                        \
      memset(q, 0, sizeof *q);                                                                         \
      size_t lo = n * (size_t)c / DBTR__CHUNKS, hi = n * (size_t)(c + 1) / DBTR__CHUNKS;               \
      for (size_t i = lo; i < hi; i++) {                                                               \
        uint64_t u = ULP(a[i], b[i]);                                                                  \
        if (u < DBTR__SMALL)                                                                           \
          q->small[u]++;                                                                               \
        else                                                                                           \
          q->n_large++;                                                                                \
        if (u != 0) q->n_differ++;                                                                     \
        if (u > DBTR__FEW_ULP) q->beyond_4ulp++;                                                       \
        if (u > q->max_ulp) q->max_ulp = u;                                                            \
        double d = fabs((double)a[i] - (double)b[i]), mb = fabs((double)b[i]);                        \
        if (d > q->max_abs || isnan(d)) q->max_abs = d;                                                \
        if (mb > q->max_b) q->max_b = mb;                                                              \
        q->sum_abs += d;                                                                               \
        q->sum_d2 += d * d;                                                                            \
        q->sum_b2 += (double)b[i] * (double)b[i];                                                      \
        if (scale && display_value((double)a[i], scale) != display_value((double)b[i], scale))        \
          q->n_differ_u16++;                                                                           \
      }                                                                                                \
    }                                                                                                  \
    double sum_abs = 0.0, sum_d2 = 0.0, sum_b2 = 0.0, max_b = 0.0;                                     \
    for (int c = 0; c < DBTR__CHUNKS; c++) {                                                           \
      out->n_differ += part[c].n_differ;                                                               \
      out->beyond_4ulp += part[c].beyond_4ulp;                                                         \
      if (part[c].max_b > max_b) max_b = part[c].max_b;                                                \
      out->n_differ_u16 += part[c].n_differ_u16;                                                       \
      if (part[c].max_ulp > out->max_ulp) out->max_ulp = part[c].max_ulp;                              \
      if (part[c].max_abs > out->max_abs || isnan(part[c].max_abs)) out->max_abs = part[c].max_abs;    \
      sum_abs += part[c].sum_abs;                                                                      \
      sum_d2 += part[c].sum_d2;                                                                        \
      sum_b2 += part[c].sum_b2;                                                                        \
    }                                                                                                  \
    out->mean_abs = sum_abs / (double)n;                                                               \
    out->scale_ulp = out->max_abs / ULP_AT(max_b);                                                     \
    out->rel_l2 = sum_b2 > 0.0 ? sqrt(sum_d2 / sum_b2) : (sum_d2 > 0.0 ? (double)INFINITY : 0.0);      \
    rc = median_of(part, n, out);                                                                      \
    if (rc == 1) {                                                                                     \
      /* The median lies among the large distances: gather them, chunk by chunk, and select. */       \
      size_t at[DBTR__CHUNKS], m = 0, k = n / 2;                                                       \
      uint64_t *large;                                                                                 \
      for (int c = 0; c < DBTR__CHUNKS; c++) {                                                         \
        at[c] = m;                                                                                     \
        m += part[c].n_large;                                                                          \
      }                                                                                                \
      for (size_t v = 0; v < DBTR__SMALL; v++)                                                         \
        for (int c = 0; c < DBTR__CHUNKS; c++) k -= part[c].small[v];                                 \
      rc = dbtr_alloc((void **)&large, m, sizeof *large, "comparison");                                \
      if (!rc) {                                                                                       \
        _Pragma("omp parallel for schedule(static)") for (int c = 0; c < DBTR__CHUNKS; c++) {          \
          size_t lo = n * (size_t)c / DBTR__CHUNKS, hi = n * (size_t)(c + 1) / DBTR__CHUNKS, j = at[c]; \
          for (size_t i = lo; i < hi; i++) {                                                           \
            uint64_t u = ULP(a[i], b[i]);                                                              \
            if (u >= DBTR__SMALL) large[j++] = u;                                                      \
          }                                                                                            \
        }                                                                                              \
        out->median_ulp = select_kth(large, m, k);                                                     \
        free(large);                                                                                   \
      }                                                                                                \
    }                                                                                                  \
    free(part);                                                                                        \
    return rc;                                                                                         \
  }

DBTR__DIFF_STATS(dbtr_diff_stats_f, float, dbtr_ulp_distance_f, ulp_at_f)
DBTR__DIFF_STATS(dbtr_diff_stats_d, double, dbtr_ulp_distance_d, ulp_at_d)

/* ||d|| / ||b|| from the chunks' sums of d^2 and b^2, added in chunk order. */
static double rel_of(const double (*sum)[2]) {
  double d2 = 0.0, b2 = 0.0;
  for (int c = 0; c < DBTR__CHUNKS; c++) {
    d2 += sum[c][0];
    b2 += sum[c][1];
  }
  return b2 > 0.0 ? sqrt(d2 / b2) : (d2 > 0.0 ? (double)INFINITY : 0.0);
}

double dbtr_rel_l2_d(dbtr_precision pa, const void *a, const double *b, size_t n) {
  double sum[DBTR__CHUNKS][2];
#pragma omp parallel for schedule(static)
  for (int c = 0; c < DBTR__CHUNKS; c++) {
    size_t lo = n * (size_t)c / DBTR__CHUNKS, hi = n * (size_t)(c + 1) / DBTR__CHUNKS;
    double d2 = 0.0, b2 = 0.0;
    for (size_t i = lo; i < hi; i++) {
      double x = pa == DBTR_PREC_FLOAT ? (double)((const float *)a)[i] : ((const double *)a)[i], d = x - b[i];
      d2 += d * d;
      b2 += b[i] * b[i];
    }
    sum[c][0] = d2;
    sum[c][1] = b2;
  }
  return rel_of((const double(*)[2])sum);
}

void dbtr_rounding_rel_l2(const dbtr_dd *x, const float *xf, size_t n, double *rel_f, double *rel_d) {
  double sf[DBTR__CHUNKS][2], sd[DBTR__CHUNKS][2];
#pragma omp parallel for schedule(static)
  for (int c = 0; c < DBTR__CHUNKS; c++) {
    size_t lo = n * (size_t)c / DBTR__CHUNKS, hi = n * (size_t)(c + 1) / DBTR__CHUNKS;
    double f2 = 0.0, d2 = 0.0, x2 = 0.0;
    for (size_t i = lo; i < hi; i++) {
      /* xf - hi is exact (the two are within a factor of 2 of each other, or xf is 0, where
       * hi is below float's range), so the float error xf - (hi + lo) is rounded once. hi's
       * square stands for x's: they differ by 2^-52 relative. */
      double f = ((double)xf[i] - x[i].hi) - x[i].lo;
      f2 += f * f;
      d2 += x[i].lo * x[i].lo;
      x2 += x[i].hi * x[i].hi;
    }
    sf[c][0] = f2;
    sd[c][0] = d2;
    sf[c][1] = sd[c][1] = x2;
  }
  *rel_f = rel_of((const double(*)[2])sf);
  *rel_d = rel_of((const double(*)[2])sd);
}
