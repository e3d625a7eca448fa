/* viewer/logic.c: the viewer's arithmetic, free of any display: window/level, percentiles,
 * diff classification and counts, slice search, viewport fitting, the title text. The GL
 * half draws exactly what these functions compute (the diff mask it colours comes from
 * dbtr_view_classify, the same function that counts), so tests of this file pin down what
 * the user sees. */
#include "viewer/viewer.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recon/compare.h"
#include "recon/error.h"

const unsigned char dbtr_view_background[3] = {20, 20, 31};

double dbtr_view_wl_map(double v, double window, double level) {
  double g = (v - (level - 0.5 * window)) / window;
  /* !(g > 0) also catches NaN, which shows black rather than whatever clamp makes of it. */
  if (!(g > 0.0)) return 0.0;
  if (g >= 1.0) return 1.0;
  return g;
}

int dbtr_view_grey8(double v, double window, double level) {
  return (int)lround(255.0 * dbtr_view_wl_map(v, window, level));
}

static int cmp_float(const void *pa, const void *pb) {
  float a = *(const float *)pa, b = *(const float *)pb;
  return (a > b) - (a < b);
}

static double quantile_sorted(const float *v, size_t m, double p) {
  if (p <= 0.0) return (double)v[0];
  if (p >= 1.0) return (double)v[m - 1];
  double pos = p * (double)(m - 1);
  size_t i = (size_t)pos;
  if (i >= m - 1) return (double)v[m - 1];
  double frac = pos - (double)i;
  return (double)v[i] + frac * ((double)v[i + 1] - (double)v[i]);
}

int dbtr_view_percentiles(const float *data, size_t n, size_t max_samples, double p_lo, double p_hi,
                          double *lo, double *hi) {
  *lo = *hi = 0.0;
  if (n == 0 || max_samples == 0) return dbtr_err(DBTR_EINVAL, "percentiles of an empty volume");
  size_t m = n < max_samples ? n : max_samples;
  float *s;
  int rc = dbtr_alloc((void **)&s, m, sizeof *s, "viewer percentile sample");
  if (rc) return rc;
  /* Sample j sits at floor(j * n / m), written so that j * n cannot overflow: the sample
   * spreads evenly over the whole volume, every slice included. */
  size_t q = n / m, r = n % m, c = 0;
  for (size_t j = 0; j < m; j++) {
    float v = data[j * q + (j * r) / m];
    if (isfinite(v)) s[c++] = v;
  }
  if (c == 0) {
    free(s);
    return dbtr_err(DBTR_EINVAL, "percentiles: no finite value among %zu sampled voxels", m);
  }
  qsort(s, c, sizeof *s, cmp_float);
  *lo = quantile_sorted(s, c, p_lo);
  *hi = quantile_sorted(s, c, p_hi);
  free(s);
  return 0;
}

void dbtr_view_auto_window(double lo, double hi, double *window, double *level) {
  if (hi > lo && isfinite(hi - lo)) {
    *window = hi - lo;
    *level = 0.5 * (lo + hi);
    return;
  }
  /* A constant volume has no range to spread: show it mid-grey with a window as wide as
   * the value itself, so that small deviations from it still show. */
  *window = (lo != 0.0 && isfinite(lo)) ? fabs(lo) : 1.0;
  *level = isfinite(lo) ? lo : 0.0;
}

int dbtr_view_classify(float a, float b, const dbtr_view_threshold *t) {
  int na = isnan(a), nb = isnan(b);
  if (na || nb) return (na && nb) ? DBTR_VIEW_SAME : DBTR_VIEW_NAN;
  uint64_t ulp = dbtr_ulp_distance_f(a, b);
  if (ulp == 0) return DBTR_VIEW_SAME;
  if (t->mode == DBTR_VIEW_THR_ULP) {
    if (ulp <= t->ulp) return DBTR_VIEW_SAME;
  } else {
    /* The difference of two floats is computed in double, where it is exact unless
     * their exponents are far apart, and then it is far above any useful threshold. */
    double d = fabs((double)a - (double)b);
    if (!(d > t->abs)) return DBTR_VIEW_SAME;
  }
  return a > b ? DBTR_VIEW_A_GREATER : DBTR_VIEW_A_LESS;
}

void dbtr_view_diff_totals(const dbtr_view_state *s, size_t *total, size_t *slices) {
  *total = *slices = 0;
  for (size_t k = 0; s->diff_counts && k < s->nz; k++) {
    *total += s->diff_counts[k];
    *slices += s->diff_counts[k] != 0;
  }
}

void dbtr_view_threshold_str(const dbtr_view_threshold *t, char *buf, size_t n) {
  if (t->mode == DBTR_VIEW_THR_ULP) {
    if (t->ulp == 0)
      snprintf(buf, n, "any bit");
    else
      snprintf(buf, n, "> %" PRIu64 " ULP", t->ulp);
  } else {
    if (t->abs == 0.0)
      snprintf(buf, n, "any bit");
    else
      snprintf(buf, n, "|A-B| > %.3g", t->abs);
  }
}

void dbtr_view_count_diffs(const float *a, const float *b, size_t nx, size_t ny, size_t nz,
                           const dbtr_view_threshold *t, size_t *counts, double *max_mag) {
  size_t per = nx * ny;
  double top = 0.0;
  /* One thread owns each slice's count, so the counts do not depend on the thread count;
   * a maximum does not depend on the order it is taken in. */
#pragma omp parallel for schedule(dynamic, 1) reduction(max : top)
  for (size_t k = 0; k < nz; k++) {
    const float *sa = a + k * per, *sb = b + k * per;
    size_t c = 0;
    for (size_t i = 0; i < per; i++) {
      int cls = dbtr_view_classify(sa[i], sb[i], t);
      if (cls == DBTR_VIEW_SAME) continue;
      c++;
      if (cls != DBTR_VIEW_NAN) top = fmax(top, dbtr_view_diff_magnitude(sa[i], sb[i], t->mode));
    }
    counts[k] = c;
  }
  if (max_mag) *max_mag = top;
}

double dbtr_view_diff_magnitude(float a, float b, dbtr_view_thr_mode mode) {
  if (mode == DBTR_VIEW_THR_ULP) return (double)dbtr_ulp_distance_f(a, b);
  return fabs((double)a - (double)b);
}

double dbtr_view_scale_pos(double m, dbtr_view_thr_mode mode, double range) {
  if (mode == DBTR_VIEW_THR_ULP) return range > 1.0 ? log2(fmax(m, 1.0)) / log2(range) : 1.0;
  return range > 0.0 ? m / range : 1.0;
}

int dbtr_view_diff_level(float a, float b, const dbtr_view_threshold *t, double range) {
  int cls = dbtr_view_classify(a, b, t);
  if (cls == DBTR_VIEW_SAME || cls == DBTR_VIEW_NAN) return cls == DBTR_VIEW_NAN ? DBTR_VIEW_LEVEL_NAN : 0;
  /* Level k covers scale positions [(k-1)/L, k/L); the top one also everything beyond. */
  double f = dbtr_view_scale_pos(dbtr_view_diff_magnitude(a, b, t->mode), t->mode, range);
  double k = floor(f * DBTR_VIEW_LEVELS) + 1.0;
  int level = k >= DBTR_VIEW_LEVELS ? DBTR_VIEW_LEVELS : (k < 1.0 ? 1 : (int)k);
  return cls == DBTR_VIEW_A_GREATER ? level : -level;
}

void dbtr_view_diff_rgb(int level, unsigned char rgb[3]) {
  if (level == DBTR_VIEW_LEVEL_NAN) {
    rgb[0] = rgb[1] = 255;
    rgb[2] = 0;
    return;
  }
  if (level == 0) {
    memcpy(rgb, dbtr_view_background, 3);
    return;
  }
  /* The other two channels fall from 200 (pale, still clearly tinted against any grey,
   * since one channel is 255) at level 1 to 0 at the last level. */
  int k = abs(level) > DBTR_VIEW_LEVELS ? DBTR_VIEW_LEVELS : abs(level);
  unsigned char other = (unsigned char)lround(200.0 * (double)(DBTR_VIEW_LEVELS - k) / (DBTR_VIEW_LEVELS - 1));
  rgb[0] = level > 0 ? 255 : other;
  rgb[1] = other;
  rgb[2] = level > 0 ? other : 255;
}

double dbtr_view_nice_range(double max_mag, dbtr_view_thr_mode mode) {
  if (mode == DBTR_VIEW_THR_ULP) {
    double r = 2.0;
    while (r < max_mag && r < 0x1p64) r *= 2.0;
    return r;
  }
  if (!(max_mag > 0.0) || !isfinite(max_mag)) return 1.0;
  double decade = pow(10.0, floor(log10(max_mag)));
  /* pow and log10 may land a hair off an exact power of ten: step until the value fits. */
  static const double steps[] = {1.0, 2.0, 5.0, 10.0, 20.0};
  for (int i = 0; i < 5; i++)
    if (steps[i] * decade >= max_mag) return steps[i] * decade;
  return 50.0 * decade;
}

void dbtr_view_diff_mask(const float *a, const float *b, size_t n, const dbtr_view_threshold *t, double range,
                         float *mask) {
  for (size_t i = 0; i < n; i++) mask[i] = (float)dbtr_view_diff_level(a[i], b[i], t, range);
}

long dbtr_view_next_diff(const size_t *counts, size_t nz, size_t from, int dir) {
  if (!counts) return -1;
  if (dir > 0) {
    for (size_t k = from + 1; k < nz; k++)
      if (counts[k]) return (long)k;
  } else {
    for (size_t k = from < nz ? from : nz; k-- > 0;)
      if (counts[k]) return (long)k;
  }
  return -1;
}

int dbtr_view_check_pair(const char *name_a, const dbtr_grid *a, const char *name_b, const dbtr_grid *b) {
  if (a->nx == b->nx && a->ny == b->ny && a->nz == b->nz) return 0;
  return dbtr_err(DBTR_EINVAL,
                  "%s is %zu x %zu x %zu voxels but %s is %zu x %zu x %zu (nx x ny x nz): "
                  "the two volumes must have the same grid to be compared",
                  name_a, a->nx, a->ny, a->nz, name_b, b->nx, b->ny, b->nz);
}

dbtr_view_rect dbtr_view_fit(double w_mm, double h_mm, int vw, int vh, double zoom, double pan_x, double pan_y) {
  dbtr_view_rect r = {0.0, 0.0, 0.0, 0.0};
  if (!(w_mm > 0.0) || !(h_mm > 0.0) || vw <= 0 || vh <= 0) return r;
  double s = fmin((double)vw / w_mm, (double)vh / h_mm) * zoom;
  r.w = w_mm * s;
  r.h = h_mm * s;
  r.x = 0.5 * ((double)vw - r.w) + pan_x;
  r.y = 0.5 * ((double)vh - r.h) + pan_y;
  return r;
}

int dbtr_view_shot_size(const dbtr_grid *g, int scale, int *w, int *h) {
  double nx = (double)g->nx, aspect = (double)g->ny * g->dy / g->dx;
  double s = scale > 0 ? scale : fmax(1.0, ceil(DBTR_VIEW_SHOT_MIN_W / nx));
  double pw = nx * s, ph = fmax(1.0, round(aspect * s));
  if (pw > DBTR_VIEW_SHOT_MAX || ph > DBTR_VIEW_SHOT_MAX)
    return dbtr_err(DBTR_EINVAL, "--scale %.0f: a slice of %zu x %zu voxels would be %.0f x %.0f pixels (%d at most)",
                    s, g->nx, g->ny, pw, ph, DBTR_VIEW_SHOT_MAX);
  *w = (int)pw;
  *h = (int)ph;
  return 0;
}

int dbtr_view_pick(const dbtr_view_rect *r, size_t nx, size_t ny, double px, double py, size_t *ix, size_t *iy) {
  if (!(r->w > 0.0) || !(r->h > 0.0)) return 0;
  double u = (px - r->x) / r->w, v = (py - r->y) / r->h;
  if (!(u >= 0.0 && u < 1.0 && v >= 0.0 && v < 1.0)) return 0;
  size_t x = (size_t)(u * (double)nx), y = (size_t)(v * (double)ny);
  /* u < 1 can still round u * nx up to nx. */
  *ix = x < nx ? x : nx - 1;
  *iy = y < ny ? y : ny - 1;
  return 1;
}

/* Appends to buf at *len, never past n. */
#define TITLE_APPEND(...)                                                 \
  do {                                                                    \
    if (len < n) {                                                        \
      int w_ = snprintf(buf + len, n - len, __VA_ARGS__);                 \
      if (w_ > 0) len = len + (size_t)w_ < n ? len + (size_t)w_ : n;      \
    }                                                                     \
  } while (0)

void dbtr_view_title(const dbtr_view_state *s, const char *name_a, const char *name_b, const dbtr_view_probe *probe,
                     char *buf, size_t n) {
  size_t len = 0;
  if (n == 0) return;
  buf[0] = '\0';
  int b_shown = s->have_b && s->show_b;
  TITLE_APPEND("dbtr view: %s %s", b_shown ? "B" : "A", b_shown ? name_b : name_a);
  TITLE_APPEND(" | slice %zu/%zu z %.4g mm | W %.4g L %.4g", s->slice, s->nz ? s->nz - 1 : 0,
               s->z0 + (double)s->slice * s->dz, s->window, s->level);
  if (s->have_b && s->diff_counts) {
    size_t total, slices;
    dbtr_view_diff_totals(s, &total, &slices);
    char thr[64];
    dbtr_view_threshold_str(&s->thr, thr, sizeof thr);
    TITLE_APPEND(" | diff %zu here, %zu in %zu slices (%s)%s", s->diff_counts[s->slice], total, slices, thr,
                 s->diff_on ? "" : " overlay off");
  }
  if (probe && probe->valid) {
    TITLE_APPEND(" | x %zu y %zu: A %.9g", probe->ix, probe->iy, (double)probe->a);
    if (s->have_b) {
      uint64_t ulp = dbtr_ulp_distance_f(probe->a, probe->b);
      TITLE_APPEND(" B %.9g A-B %.3g", (double)probe->b, (double)probe->a - (double)probe->b);
      if (ulp == UINT64_MAX)
        TITLE_APPEND(" (NaN)");
      else
        TITLE_APPEND(" (%" PRIu64 " ULP)", ulp);
    }
  }
}
