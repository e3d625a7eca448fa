/* recon/compare.c: element-wise comparison statistics between two results. */
#include "recon/compare.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "recon/backend.h"
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
 * result is the same for any thread count, and for any cut into pieces (a piece is whole
 * chunks). Each chunk also counts its ULP distances below DBTR__SMALL, one by one, and those
 * above: the median is then found in the counts, and only where it lies above (rarely: most
 * distances are 0 or a few ulps) among the distances above, gathered in a second pass.
 * Before, a quickselect over every distance, on one thread, took about 1.5 s a comparison at
 * hologic size. */
enum { DBTR__CHUNKS = 256, DBTR__SMALL = 1024 };
typedef struct {
  size_t n_differ, n_differ_u16, n_large, beyond_4ulp;
  uint64_t max_ulp;
  double max_abs, max_b, sum_abs, sum_d2, sum_b2;
  size_t small[DBTR__SMALL];
} dbtr__part;

/* Where chunk c of an array of n elements begins (c = DBTR__CHUNKS: its end). */
static size_t chunk_lo(size_t n, int c) { return n / DBTR__CHUNKS * (size_t)c + n % DBTR__CHUNKS * (size_t)c / DBTR__CHUNKS; }

size_t dbtr_diff_read_max(size_t n, size_t piece) {
  size_t chunk = n / DBTR__CHUNKS + (n % DBTR__CHUNKS != 0);
  return piece > chunk ? piece : chunk;
}

/* The chunk after the last of the piece that starts at chunk c0: as many whole chunks as
 * src->piece elements hold, at least one. */
static int piece_end(size_t n, int c0, size_t piece) {
  int c1 = c0 + 1;
  while (c1 < DBTR__CHUNKS && chunk_lo(n, c1 + 1) - chunk_lo(n, c0) <= piece) c1++;
  return c1;
}

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

/* One chunk's partial statistics (m elements of a against b), and its distances of at least
 * DBTR__SMALL ulp in index order, for the second pass. */
#define DBTR__CHUNK_FNS(SUF, T, ULP)                                                                         \
  static void part_##SUF(const T *a, const T *b, size_t m, const dbtr_display_scale *scale, dbtr__part *q) { \
    memset(q, 0, sizeof *q);                                                                                 \
    for (size_t i = 0; i < m; i++) {                                                                         \
      uint64_t u = ULP(a[i], b[i]);                                                                          \
      if (u < DBTR__SMALL)                                                                                   \
        q->small[u]++;                                                                                       \
      else                                                                                                   \
        q->n_large++;                                                                                        \
      if (u != 0) q->n_differ++;                                                                             \
      if (u > DBTR__FEW_ULP) q->beyond_4ulp++;                                                               \
      if (u > q->max_ulp) q->max_ulp = u;                                                                    \
      double d = fabs((double)a[i] - (double)b[i]), mb = fabs((double)b[i]);                                \
      if (d > q->max_abs || isnan(d)) q->max_abs = d;                                                        \
      if (mb > q->max_b) q->max_b = mb;                                                                      \
      q->sum_abs += d;                                                                                       \
      q->sum_d2 += d * d;                                                                                    \
      q->sum_b2 += (double)b[i] * (double)b[i];                                                              \
      if (scale && display_value((double)a[i], scale) != display_value((double)b[i], scale))                \
        q->n_differ_u16++;                                                                                   \
    }                                                                                                        \
  }                                                                                                          \
  static void large_##SUF(const T *a, const T *b, size_t m, uint64_t *out) {                                \
    for (size_t i = 0; i < m; i++) {                                                                         \
      uint64_t u = ULP(a[i], b[i]);                                                                          \
      if (u >= DBTR__SMALL) *out++ = u;                                                                      \
    }                                                                                                        \
  }
DBTR__CHUNK_FNS(f, float, dbtr_ulp_distance_f)
DBTR__CHUNK_FNS(d, double, dbtr_ulp_distance_d)

/* Calls fn(ctx, c, a, b, m) for every chunk c, a and b pointing at its m elements (of ea and
 * eb bytes), the chunks of each piece src reads on every thread. */
typedef void (*chunk_fn)(void *ctx, int c, const char *a, const char *b, size_t m);

static int for_chunks(size_t n, const dbtr_diff_source *src, size_t ea, size_t eb, chunk_fn fn, void *ctx) {
  for (int c0 = 0, c1; c0 < DBTR__CHUNKS; c0 = c1) {
    c1 = piece_end(n, c0, src->piece);
    size_t lo = chunk_lo(n, c0);
    const void *a, *b;
    int rc = src->read(src->user, lo, chunk_lo(n, c1), &a, &b);
    if (rc) return rc;
#pragma omp parallel for schedule(static)
    for (int c = c0; c < c1; c++) {
      size_t off = chunk_lo(n, c) - lo;
      fn(ctx, c, (const char *)a + off * ea, (const char *)b + off * eb, chunk_lo(n, c + 1) - chunk_lo(n, c));
    }
  }
  return 0;
}

/* The two passes of the statistics: 0 fills part[], 1 gathers the large distances of chunk c
 * at large + at[c]. */
typedef struct {
  int pass;
  dbtr_precision p;
  const dbtr_display_scale *scale;
  dbtr__part *part;
  const size_t *at;
  uint64_t *large;
} diff_pass;

static void diff_chunk(void *ctx, int c, const char *a, const char *b, size_t m) {
  const diff_pass *d = ctx;
  int f = d->p == DBTR_PREC_FLOAT;
  if (d->pass == 0 && f) part_f((const float *)a, (const float *)b, m, d->scale, &d->part[c]);
  if (d->pass == 0 && !f) part_d((const double *)a, (const double *)b, m, d->scale, &d->part[c]);
  if (d->pass == 1 && f) large_f((const float *)a, (const float *)b, m, d->large + d->at[c]);
  if (d->pass == 1 && !f) large_d((const double *)a, (const double *)b, m, d->large + d->at[c]);
}

int dbtr_diff_stats_read(dbtr_precision p, size_t n, const dbtr_diff_source *src, const dbtr_display_scale *scale,
                         dbtr_diff_stats *out) {
  memset(out, 0, sizeof *out);
  out->n = n;
  if (n == 0) return 0;
  if (p != DBTR_PREC_FLOAT && p != DBTR_PREC_DOUBLE) return dbtr_err(DBTR_EINVAL, "comparison: float or double only");
  dbtr__part *part;
  int rc = dbtr_alloc((void **)&part, DBTR__CHUNKS, sizeof *part, "comparison");
  if (rc) return rc;
  size_t es = dbtr_precision_size(p);
  diff_pass first = {0, p, scale, part, NULL, NULL};
  if ((rc = for_chunks(n, src, es, es, diff_chunk, &first))) {
    free(part);
    return rc;
  }
  double sum_abs = 0.0, sum_d2 = 0.0, sum_b2 = 0.0, max_b = 0.0;
  for (int c = 0; c < DBTR__CHUNKS; c++) {
    out->n_differ += part[c].n_differ;
    out->beyond_4ulp += part[c].beyond_4ulp;
    if (part[c].max_b > max_b) max_b = part[c].max_b;
    out->n_differ_u16 += part[c].n_differ_u16;
    if (part[c].max_ulp > out->max_ulp) out->max_ulp = part[c].max_ulp;
    if (part[c].max_abs > out->max_abs || isnan(part[c].max_abs)) out->max_abs = part[c].max_abs;
    sum_abs += part[c].sum_abs;
    sum_d2 += part[c].sum_d2;
    sum_b2 += part[c].sum_b2;
  }
  out->mean_abs = sum_abs / (double)n;
  out->scale_ulp = out->max_abs / (p == DBTR_PREC_FLOAT ? ulp_at_f(max_b) : ulp_at_d(max_b));
  out->rel_l2 = sum_b2 > 0.0 ? sqrt(sum_d2 / sum_b2) : (sum_d2 > 0.0 ? (double)INFINITY : 0.0);
  rc = median_of(part, n, out);
  if (rc == 1) {
    /* The median lies among the large distances: gather them, chunk by chunk, and select. */
    size_t at[DBTR__CHUNKS], m = 0, k = n / 2;
    uint64_t *large;
    for (int c = 0; c < DBTR__CHUNKS; c++) {
      at[c] = m;
      m += part[c].n_large;
    }
    for (size_t v = 0; v < DBTR__SMALL; v++)
      for (int c = 0; c < DBTR__CHUNKS; c++) k -= part[c].small[v];
    if (!(rc = dbtr_alloc((void **)&large, m, sizeof *large, "comparison"))) {
      diff_pass second = {1, p, NULL, NULL, at, large};
      if (!(rc = for_chunks(n, src, es, es, diff_chunk, &second))) out->median_ulp = select_kth(large, m, k);
      free(large);
    }
  }
  free(part);
  return rc;
}

/* The source of two whole arrays in memory, in one piece: a of ea-byte elements, b of eb. */
typedef struct {
  const char *a, *b;
  size_t ea, eb;
} whole;

static int read_whole(void *user, size_t lo, size_t hi, const void **a, const void **b) {
  (void)hi;
  const whole *w = user;
  *a = w->a + lo * w->ea;
  *b = w->b + lo * w->eb;
  return 0;
}

int dbtr_diff_stats_f(const float *a, const float *b, size_t n, const dbtr_display_scale *scale, dbtr_diff_stats *out) {
  whole w = {(const char *)a, (const char *)b, sizeof *a, sizeof *b};
  dbtr_diff_source src = {read_whole, &w, n};
  return dbtr_diff_stats_read(DBTR_PREC_FLOAT, n, &src, scale, out);
}

int dbtr_diff_stats_d(const double *a, const double *b, size_t n, const dbtr_display_scale *scale,
                      dbtr_diff_stats *out) {
  whole w = {(const char *)a, (const char *)b, sizeof *a, sizeof *b};
  dbtr_diff_source src = {read_whole, &w, n};
  return dbtr_diff_stats_read(DBTR_PREC_DOUBLE, n, &src, scale, out);
}

/* ||d|| / ||b|| from the chunks' sums of d^2 and b^2, added in chunk order. */
static double rel_of(const double (*sum)[2]) {
  double d2 = 0.0, b2 = 0.0;
  for (int c = 0; c < DBTR__CHUNKS; c++) {
    d2 += sum[c][0];
    b2 += sum[c][1];
  }
  return b2 > 0.0 ? sqrt(d2 / b2) : (d2 > 0.0 ? (double)INFINITY : 0.0);
}

/* Each chunk's sums of squares, [c][0] of the differences, [c][1] of the reference's. */
typedef struct {
  dbtr_precision pa;
  double (*sum)[2];
} l2_sums;

static void l2_chunk(void *ctx, int c, const char *a, const char *bv, size_t m) {
  const l2_sums *s = ctx;
  const double *b = (const double *)bv;
  double d2 = 0.0, b2 = 0.0;
  for (size_t i = 0; i < m; i++) {
    double x = s->pa == DBTR_PREC_FLOAT ? (double)((const float *)a)[i] : ((const double *)a)[i], d = x - b[i];
    d2 += d * d;
    b2 += b[i] * b[i];
  }
  s->sum[c][0] = d2;
  s->sum[c][1] = b2;
}

int dbtr_rel_l2_read(dbtr_precision pa, size_t n, const dbtr_diff_source *src, double *out) {
  double sum[DBTR__CHUNKS][2];
  l2_sums s = {pa, sum};
  int rc = for_chunks(n, src, dbtr_precision_size(pa), sizeof(double), l2_chunk, &s);
  if (!rc) *out = rel_of((const double(*)[2])sum);
  return rc;
}

/* Each chunk's sums of squares of the float and the double rounding errors, and of x. */
typedef struct {
  double (*sf)[2], (*sd)[2];
} rounding_sums;

static void rounding_chunk(void *ctx, int c, const char *xv, const char *fv, size_t m) {
  const rounding_sums *s = ctx;
  const dbtr_dd *x = (const dbtr_dd *)xv;
  const float *xf = (const float *)fv;
  double f2 = 0.0, d2 = 0.0, x2 = 0.0;
  for (size_t i = 0; i < m; i++) {
    /* xf - hi is exact (the two are within a factor of 2 of each other, or xf is 0, where hi
     * is below float's range), so the float error xf - (hi + lo) is rounded once. hi's square
     * stands for x's: they differ by 2^-52 relative. */
    double f = ((double)xf[i] - x[i].hi) - x[i].lo;
    f2 += f * f;
    d2 += x[i].lo * x[i].lo;
    x2 += x[i].hi * x[i].hi;
  }
  s->sf[c][0] = f2;
  s->sd[c][0] = d2;
  s->sf[c][1] = s->sd[c][1] = x2;
}

int dbtr_rounding_rel_l2_read(size_t n, const dbtr_diff_source *src, double *rel_f, double *rel_d) {
  double sf[DBTR__CHUNKS][2], sd[DBTR__CHUNKS][2];
  rounding_sums s = {sf, sd};
  int rc = for_chunks(n, src, sizeof(dbtr_dd), sizeof(float), rounding_chunk, &s);
  if (rc) return rc;
  *rel_f = rel_of((const double(*)[2])sf);
  *rel_d = rel_of((const double(*)[2])sd);
  return 0;
}
