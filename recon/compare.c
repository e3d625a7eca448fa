/* recon/compare.c: element-wise comparison statistics between two results. */
#include "recon/compare.h"

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
 * result is the same for any thread count. */
typedef struct {
  size_t n_differ, n_differ_u16;
  uint64_t max_ulp;
  double max_abs, sum_abs, sum_d2, sum_b2;
} dbtr__part;
enum { DBTR__CHUNKS = 256 };

#define DBTR__DIFF_STATS(NAME, T, ULP)                                                                 \
  int NAME(const T *a, const T *b, size_t n, const dbtr_display_scale *scale, dbtr_diff_stats *out) { \
    memset(out, 0, sizeof *out);                                                                       \
    out->n = n;                                                                                        \
    if (n == 0) return 0;                                                                              \
    uint64_t *ulps;                                                                                    \
    dbtr__part part[DBTR__CHUNKS];                                                                     \
    int rc = dbtr_alloc((void **)&ulps, n, sizeof *ulps, "comparison");                                \
    if (rc) return rc;                                                                                 \
    _Pragma("omp parallel for schedule(static)") for (int c = 0; c < DBTR__CHUNKS; c++) {              \
      dbtr__part q = {0};                                                                              \
      size_t lo = n * (size_t)c / DBTR__CHUNKS, hi = n * (size_t)(c + 1) / DBTR__CHUNKS;               \
      for (size_t i = lo; i < hi; i++) {                                                               \
        uint64_t u = ULP(a[i], b[i]);                                                                  \
        ulps[i] = u;                                                                                   \
        if (u != 0) q.n_differ++;                                                                      \
        if (u > q.max_ulp) q.max_ulp = u;                                                              \
        double d = fabs((double)a[i] - (double)b[i]);                                                  \
        if (d > q.max_abs || isnan(d)) q.max_abs = d;                                                  \
        q.sum_abs += d;                                                                                \
        q.sum_d2 += d * d;                                                                             \
        q.sum_b2 += (double)b[i] * (double)b[i];                                                       \
        if (scale && display_value((double)a[i], scale) != display_value((double)b[i], scale))        \
          q.n_differ_u16++;                                                                            \
      }                                                                                                \
      part[c] = q;                                                                                     \
    }                                                                                                  \
    double sum_abs = 0.0, sum_d2 = 0.0, sum_b2 = 0.0;                                                  \
    for (int c = 0; c < DBTR__CHUNKS; c++) {                                                           \
      out->n_differ += part[c].n_differ;                                                               \
      out->n_differ_u16 += part[c].n_differ_u16;                                                       \
      if (part[c].max_ulp > out->max_ulp) out->max_ulp = part[c].max_ulp;                              \
      if (part[c].max_abs > out->max_abs || isnan(part[c].max_abs)) out->max_abs = part[c].max_abs;    \
      sum_abs += part[c].sum_abs;                                                                      \
      sum_d2 += part[c].sum_d2;                                                                        \
      sum_b2 += part[c].sum_b2;                                                                        \
    }                                                                                                  \
    out->mean_abs = sum_abs / (double)n;                                                               \
    out->rel_l2 = sum_b2 > 0.0 ? sqrt(sum_d2 / sum_b2) : (sum_d2 > 0.0 ? (double)INFINITY : 0.0);      \
    out->median_ulp = select_kth(ulps, n, n / 2);                                                      \
    free(ulps);                                                                                        \
    return 0;                                                                                          \
  }

DBTR__DIFF_STATS(dbtr_diff_stats_f, float, dbtr_ulp_distance_f)
DBTR__DIFF_STATS(dbtr_diff_stats_d, double, dbtr_ulp_distance_d)
