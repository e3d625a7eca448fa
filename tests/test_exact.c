/* tests/test_exact.c: the dd referee (CPU --precision dd) against an independent 256-bit MPFR
 * computation of the same mathematical function, from the same double inputs.
 *
 * The MPFR side is written from the maths of docs/ARCHITECTURE.md (Projectors, ML-EM), not from
 * recon/proj_impl.h: each pixel's ray runs from the source through the pixel's centre in mm; its
 * crossing with the plane of slice k (z = oz + k dz) is turned into index coordinates, split into
 * the 4 bilinear corners (corners beyond the grid count as zero), and A's entry for a corner is
 * its bilinear weight times the path length per slice dz |ray| / |ray_z|. A^T is the transpose
 * of that, scattered over the corners. None of dbtr's operation orders, reductions to index
 * coordinates or ray records is used, so the test holds whichever of the equivalent formulas
 * dbtr computes the record with. At 256 bits every such value is within about 2^-240 of the exact
 * one (relative to its terms), 2^-134 of u^2: "exact" below.
 *
 * Each case bounds, per output element, the dd error to first order (the derivation is at EPS
 * and WEIGHT_ERR), checks the full dd value (hi + lo) against twice that bound, then rounds both
 * to double and checks their distance in double ulps: at most 1 + floor(2 bound / ulp), i.e. 1
 * ulp (a rounding boundary between the two) wherever the bound is below an ulp, which it is, by
 * 10^6 or more, everywhere but at clipped voxels (exact value 0). It prints the largest and the
 * median distance, and how close the bound comes to an ulp.
 *
 * Genericity: a crossing exactly on a voxel boundary (or on the grid band's edge -1 or n) could
 * split differently in dd and in MPFR. The values that differ there are continuous (a bilinear
 * weight goes to 0 at the boundary), so no result jumps, but the geometry is made generic all the
 * same (source, detector and grid numbers with no short binary or decimal form), and each case
 * checks that no crossing lies within 1e-9 index units of an integer, about 10^18 times dd's
 * error there (2^8 u^2 m, WEIGHT_ERR), so that dd and MPFR split every crossing the same way. Without MPFR every case skips
 * (exit 77). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recon/backend.h"
#include "recon/dd.h"
#include "recon/error.h"
#include "recon/mlem.h"
#include "tests/rng.h"
#include "tests/test.h"
#include "tests/mpfr.h"

#ifdef DBTR_HAVE_MPFR

#define U2 0x1p-106 /* u^2, u = 2^-53 */
enum { PREC = 256 };

/* ---- The problem ----------------------------------------------------------------------------
 * 4 views of a 24 x 16 detector of 0.6137 x 0.7291 mm pixels in z = 0 (u along +x, v along +y),
 * the source 588 mm from a pivot 23.17 mm above the detector, turning in the x-z plane over
 * -13.1 .. 13.03 deg; a 12 x 10 x 4 grid of 0.7 x 0.9 x 2 mm voxels whose first centre is at
 * (-3.917, 0.5813, 9.871). The outer views' rays leave the detector's and the grid's edges, so
 * partial rays and corners beyond the grid are exercised. */
enum { N_VIEWS = 4, N_ROWS = 16, N_COLS = 24, NX = 12, NY = 10, NZ = 4 };
enum { NP = N_VIEWS * N_ROWS * N_COLS, NV = NX * NY * NZ };

typedef struct {
  dbtr_geom g;
  dbtr_grid grid;
  double y[NP], i0[NP];
} problem;

/* The geometry; turn_deg turns the detector's u and v about z (a non-separable view, so the CPU
 * takes its per-pixel gather instead of the separable tables). */
static int problem_geometry(problem *p, double turn_deg) {
  memset(p, 0, sizeof *p);
  int rc = dbtr_geom_init(&p->g, N_VIEWS, N_ROWS, N_COLS);
  if (rc) return rc;
  const double pi = 3.14159265358979323846, ct = cos(turn_deg * pi / 180.0), st = sin(turn_deg * pi / 180.0);
  for (size_t k = 0; k < N_VIEWS; k++) {
    double th = (-13.1 + 8.71 * (double)k) * pi / 180.0, *s = p->g.source + 3 * k;
    s[0] = 0.0731 + 588.2 * sin(th);
    s[1] = 1.283;
    s[2] = 23.17 + 588.2 * cos(th);
    double *d = p->g.detector_center + 3 * k, *u = p->g.detector_u + 3 * k, *v = p->g.detector_v + 3 * k;
    d[0] = 0.2131, d[1] = 5.419, d[2] = 0.0;
    u[0] = 0.6137 * ct, u[1] = 0.6137 * st;
    v[0] = -0.7291 * st, v[1] = 0.7291 * ct;
  }
  p->grid = (dbtr_grid){NX, NY, NZ, 0.7, 0.9, 2.0, {-3.917, 0.5813, 9.871}};
  return 0;
}

/* Counts: a smooth line integral L, a step from 0.003 to 0.9 across the detector (oblique, 3
 * pixels wide), so that the first update clips the voxels that see only the low side (their
 * N / D < -1) and nearly cancels next to them; i0 varying by 5% over the pixels;
 * y = round(i0 exp(-L) (1 + 2% deterministic noise)). */
static void problem_counts(problem *p) {
  uint64_t state = 20240611;
  for (size_t k = 0; k < N_VIEWS; k++)
    for (size_t r = 0; r < N_ROWS; r++)
      for (size_t c = 0; c < N_COLS; c++) {
        size_t i = (k * N_ROWS + r) * N_COLS + c;
        double a = ((double)c - 11.2 + 0.4 * ((double)r - 7.5)) / 1.7;
        double l = 0.003 + 0.9 / (1.0 + exp(-a)) + 0.002 * (double)k;
        p->i0[i] = 1e4 * (1.0 + 0.05 * cos(0.37 * (double)i));
        p->y[i] = round(p->i0[i] * exp(-l) * (1.0 + 0.02 * uniform(&state, -1.0, 1.0)));
      }
}

/* ---- The exact side (MPFR) ----------------------------------------------------------------- */

typedef struct {
  const problem *p;
  mpfr_t s[3], d[3]; /* the current ray: source and direction (pixel centre - source), mm */
  mpfr_t t, f[2], w[2], one_w[2], x;
  double lattice; /* the smallest distance of any crossing from an integer, index units */
  double m;       /* the largest magnitude a crossing is formed from, index units (WEIGHT_ERR) */
} exact;

static void exact_init(exact *e, const problem *p) {
  e->p = p;
  for (int i = 0; i < 3; i++) mpfr_inits2(PREC, e->s[i], e->d[i], (mpfr_ptr)0);
  for (int i = 0; i < 2; i++) mpfr_inits2(PREC, e->f[i], e->w[i], e->one_w[i], (mpfr_ptr)0);
  mpfr_inits2(PREC, e->t, e->x, (mpfr_ptr)0);
  e->lattice = INFINITY;
  e->m = 0.0;
}
static void exact_free(exact *e) {
  for (int i = 0; i < 3; i++) mpfr_clears(e->s[i], e->d[i], (mpfr_ptr)0);
  for (int i = 0; i < 2; i++) mpfr_clears(e->f[i], e->w[i], e->one_w[i], (mpfr_ptr)0);
  mpfr_clears(e->t, e->x, (mpfr_ptr)0);
}

/* The ray of pixel (r, c) of view k, and its path length per slice dz |d| / |d_z| into len. The
 * pixel centre (ARCHITECTURE.md, Geometry) is exact at 256 bits: products of doubles by
 * half-integers, and sums of four such numbers whose exponents lie within 100 of each other. */
static void ray_set(exact *e, size_t k, size_t r, size_t c, mpfr_t len) {
  const dbtr_geom *g = &e->p->g;
  const dbtr_grid *gr = &e->p->grid;
  double oc = (double)c - 0.5 * (double)(g->n_cols - 1), orow = (double)r - 0.5 * (double)(g->n_rows - 1);
  for (size_t i = 0; i < 3; i++) {
    mpfr_set_d(e->s[i], g->source[3 * k + i], MPFR_RNDN);
    mpfr_set_d(e->d[i], g->detector_u[3 * k + i], MPFR_RNDN);
    mpfr_mul_d(e->d[i], e->d[i], oc, MPFR_RNDN);
    mpfr_set_d(e->t, g->detector_v[3 * k + i], MPFR_RNDN);
    mpfr_mul_d(e->t, e->t, orow, MPFR_RNDN);
    mpfr_add(e->d[i], e->d[i], e->t, MPFR_RNDN);
    mpfr_add_d(e->d[i], e->d[i], g->detector_center[3 * k + i], MPFR_RNDN);
    mpfr_sub(e->d[i], e->d[i], e->s[i], MPFR_RNDN);
    /* The magnitudes a crossing is formed from, in index units: source and pixel point, and
     * the largest slope times the source's height (WEIGHT_ERR). */
    double o = gr->origin[i], h = i == 0 ? gr->dx : i == 1 ? gr->dy : gr->dz;
    double si = (g->source[3 * k + i] - o) / h, pi = si + mpfr_get_d(e->d[i], MPFR_RNDN) / h;
    e->m = fmax(e->m, fmax(fabs(si), fabs(pi)));
  }
  double dz_d = mpfr_get_d(e->d[2], MPFR_RNDN), sz = (g->source[3 * k + 2] - gr->origin[2]) / gr->dz;
  double slope = fmax(fabs(mpfr_get_d(e->d[0], MPFR_RNDN)) / gr->dx, fabs(mpfr_get_d(e->d[1], MPFR_RNDN)) / gr->dy) /
                 (fabs(dz_d) / gr->dz);
  e->m = fmax(e->m, slope * (fabs(sz) + (double)gr->nz));
  mpfr_sqr(len, e->d[0], MPFR_RNDN);
  mpfr_fma(len, e->d[1], e->d[1], len, MPFR_RNDN);
  mpfr_fma(len, e->d[2], e->d[2], len, MPFR_RNDN);
  mpfr_sqrt(len, len, MPFR_RNDN);
  mpfr_div(len, len, e->d[2], MPFR_RNDN);
  mpfr_abs(len, len, MPFR_RNDN);
  mpfr_mul_d(len, len, gr->dz, MPFR_RNDN);
}

/* The current ray's crossing with slice k: the voxel indices of its in-grid bilinear corners
 * (at most 4) and their weights (w[0..n), initialised by the caller); returns how many. */
static int corners(exact *e, int k, size_t idx[4], mpfr_t w[4]) {
  const dbtr_grid *gr = &e->p->grid;
  const int n[2] = {(int)gr->nx, (int)gr->ny};
  const double o[2] = {gr->origin[0], gr->origin[1]}, h[2] = {gr->dx, gr->dy};
  long fl[2];
  /* The ray point s + t d at z = oz + k dz: t = (z - s_z) / d_z. */
  mpfr_set_d(e->t, gr->dz, MPFR_RNDN);
  mpfr_mul_si(e->t, e->t, k, MPFR_RNDN);
  mpfr_add_d(e->t, e->t, gr->origin[2], MPFR_RNDN);
  mpfr_sub(e->t, e->t, e->s[2], MPFR_RNDN);
  mpfr_div(e->t, e->t, e->d[2], MPFR_RNDN);
  int inside = 1;
  for (int a = 0; a < 2; a++) {
    mpfr_fma(e->f[a], e->t, e->d[a], e->s[a], MPFR_RNDN);
    mpfr_sub_d(e->f[a], e->f[a], o[a], MPFR_RNDN);
    mpfr_div_d(e->f[a], e->f[a], h[a], MPFR_RNDN);
    mpfr_floor(e->x, e->f[a]);
    fl[a] = mpfr_get_si(e->x, MPFR_RNDN);
    mpfr_sub(e->w[a], e->f[a], e->x, MPFR_RNDN); /* the upper neighbour's weight */
    mpfr_ui_sub(e->one_w[a], 1, e->w[a], MPFR_RNDN);
    double frac = mpfr_get_d(e->w[a], MPFR_RNDN);
    e->lattice = fmin(e->lattice, fmin(frac, 1.0 - frac));
    if (!(mpfr_cmp_si(e->f[a], -1) > 0 && mpfr_cmp_si(e->f[a], n[a]) < 0)) inside = 0;
  }
  if (!inside) return 0;
  int m = 0;
  for (int b = 0; b < 2; b++)
    for (int a = 0; a < 2; a++) {
      long x = fl[0] + a, y = fl[1] + b;
      if (x < 0 || x >= n[0] || y < 0 || y >= n[1]) continue;
      idx[m] = ((size_t)k * gr->ny + (size_t)y) * gr->nx + (size_t)x;
      mpfr_mul(w[m], a ? e->w[0] : e->one_w[0], b ? e->w[1] : e->one_w[1], MPFR_RNDN);
      m++;
    }
  return m;
}

/* mpfr arrays */
static mpfr_t *mp_array(size_t n) {
  mpfr_t *a = malloc(n * sizeof(mpfr_t));
  if (a)
    for (size_t i = 0; i < n; i++) mpfr_init2(a[i], PREC);
  return a;
}
static void mp_array_free(mpfr_t *a, size_t n) {
  if (!a) return;
  for (size_t i = 0; i < n; i++) mpfr_clear(a[i]);
  free(a);
}
static void mp_set_dd(mpfr_t r, dbtr_dd a) {
  mpfr_set_d(r, a.hi, MPFR_RNDN);
  mpfr_add_d(r, r, a.lo, MPFR_RNDN);
}

/* ---- The bound ------------------------------------------------------------------------------
 * Every dd operation has a relative error of a few u^2 (docs/crmath.md: add 3u^2, mul 5u^2,
 * div 15u^2, sqrt 4.2u^2, exp 7.3u^2). Two kinds of error follow, bounded to first order (the
 * products of errors are below 2^-200 of the values):
 * - EPS, relative, for a value formed from exact inputs by a chain of operations on terms of
 *   one sign: the path length (3 products, 2 sums, a sqrt, a quotient: under 40u^2), exp and
 *   the products of the pixel terms (under 25u^2), and a recursive sum of n terms, whose error
 *   is at most (n - 1) 3u^2 times the sum of the terms' magnitudes: with n <= 64 (checked,
 *   MAX_TERMS) under 190u^2. In all under 260u^2; EPS = 2^10 u^2.
 * - WEIGHT_ERR(m), absolute, for a bilinear corner weight. A crossing is a coordinate of
 *   magnitude up to m (index units: the source's and the pixel point's coordinates, and a slope
 *   times the source's height, whichever formula of the ray record forms it) reached through
 *   about a dozen dd operations (reduction to index coordinates, pixel point, direction, slope,
 *   a + k b), each within 15u^2 of values at most m: under 2^8 u^2 m absolute. Its split into
 *   floor and fraction is exact; 1 - w adds 3u^2, the product of the two axes' weights (each at
 *   most 1) 5u^2 and both errors: under 2^9 u^2 m + 8u^2. WEIGHT_ERR(m) = 2^10 u^2 (m + 1).
 * A weight's error is absolute, so it is charged against the magnitude of what it multiplies,
 * not against the result: a sum that cancels (the update's numerator) keeps a bound scaled by
 * its terms. The check allows twice the first-order bound. */
#define EPS (0x1p10 * U2)
#define WEIGHT_ERR(m) (0x1p10 * U2 * ((m) + 1.0))
enum { MAX_TERMS = 64 };

/* The ordered distance between two doubles, in ulps (+0 and -0 are one). */
static double ulp_dist(double a, double b) {
  int64_t ia, ib;
  memcpy(&ia, &a, sizeof ia);
  memcpy(&ib, &b, sizeof ib);
  if (ia < 0) ia = INT64_MIN - ia;
  if (ib < 0) ib = INT64_MIN - ib;
  return fabs((double)ia - (double)ib);
}
static double ulp_of(double x) {
  x = fabs(x);
  return nextafter(x, INFINITY) - x;
}
static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Checks got (dd) against want (exact) element by element: |got - want| <= 2 bound, and, both
 * rounded to double, at most 1 + floor(2 bound / ulp) ulps apart (each rounding moves a value
 * by at most half an ulp). mag is the magnitude of each
 * element's terms, for the printed error in u^2. */
static void compare(const char *what, size_t n, const dbtr_dd *got, mpfr_t *want, const double *bound,
                    const double *mag) {
  double *ulps = malloc(n * sizeof(double)), max_u2 = 0.0, max_ratio = 0.0, max_bound_ulp = 0.0;
  size_t wide = 0, over = 0, far = 0;
  mpfr_t g;
  mpfr_init2(g, PREC);
  for (size_t i = 0; i < n && ulps; i++) {
    mp_set_dd(g, got[i]);
    mpfr_sub(g, g, want[i], MPFR_RNDN);
    double err = fabs(mpfr_get_d(g, MPFR_RNDN)), allow = 2.0 * bound[i], w = mpfr_get_d(want[i], MPFR_RNDN);
    if (mag[i] > 0.0) max_u2 = fmax(max_u2, err / mag[i] / U2);
    if (allow > 0.0) max_ratio = fmax(max_ratio, err / allow);
    double ulp = ulp_of(fmin(fabs(w), fabs(got[i].hi))), ulp_allow = 1.0 + floor(allow / ulp);
    if (w != 0.0) max_bound_ulp = fmax(max_bound_ulp, allow / ulp);
    wide += ulp_allow > 1.0;
    ulps[i] = ulp_dist(dbtr_dd_to_double(got[i]), w);
    if (!(err <= allow) && over++ < 5)
      TEST__FAIL("%s %zu: dd %.17g%+.3g, exact %.17g: error %.3g > 2 x bound %.3g", what, i, got[i].hi, got[i].lo, w,
                 err, allow);
    if (!(ulps[i] <= ulp_allow) && far++ < 5)
      TEST__FAIL("%s %zu: dd %.17g, exact %.17g: %.0f ulps > %.0f", what, i, got[i].hi, w, ulps[i], ulp_allow);
  }
  mpfr_clear(g);
  if (!ulps) {
    TEST__FAIL("%s: out of memory", what);
    return;
  }
  qsort(ulps, n, sizeof(double), cmp_double);
  printf("%s: %zu values; dd - exact at most %.3g u^2 of the terms' magnitude, %.3g of 2 x bound; "
         "rounded to double: max %.0f ulp, median %.0f ulp; 2 x bound at most %.3g ulp where the exact value "
         "is not 0; %zu allowed more than 1 ulp\n",
         what, n, max_u2, max_ratio, ulps[n - 1], ulps[n / 2], max_bound_ulp, wide);
  free(ulps);
}

/* ---- The exact projections and their bounds ------------------------------------------------- */

/* l = A mu for every pixel, the path lengths, and each l's bound: the weights' errors against
 * len sum |mu| over the touched corners, EPS against l (mu >= 0 here, so l has no cancellation
 * but the bound does not rely on it). */
static void exact_forward(exact *e, const dbtr_dd *mu, mpfr_t *l, mpfr_t *len, double *bound, double *mag) {
  mpfr_t w[4], v;
  for (int c = 0; c < 4; c++) mpfr_init2(w[c], PREC);
  mpfr_init2(v, PREC);
  for (size_t k = 0, i = 0; k < N_VIEWS; k++)
    for (size_t r = 0; r < N_ROWS; r++)
      for (size_t c = 0; c < N_COLS; c++, i++) {
        ray_set(e, k, r, c, len[i]);
        double touched = 0.0, terms = 0.0;
        mpfr_set_zero(l[i], 1);
        for (int z = 0; z < NZ; z++) {
          size_t idx[4];
          int n = corners(e, z, idx, w);
          for (int j = 0; j < n; j++) {
            mp_set_dd(v, mu[idx[j]]);
            mpfr_fma(l[i], w[j], v, l[i], MPFR_RNDN);
            touched += fabs(mu[idx[j]].hi);
            terms += mpfr_get_d(w[j], MPFR_RNDN) * fabs(mu[idx[j]].hi);
          }
        }
        mpfr_mul(l[i], l[i], len[i], MPFR_RNDN);
        double ld = mpfr_get_d(len[i], MPFR_RNDN);
        mag[i] = ld * terms;
        bound[i] = ld * (WEIGHT_ERR(e->m) * touched + EPS * terms);
      }
  for (int c = 0; c < 4; c++) mpfr_clear(w[c]);
  mpfr_clear(v);
}

/* acc = A^T-gather of the pixel values v (one input): acc_j = sum over rays i, slices and
 * corners of voxel j of weight x v_i (len is already in v, as in dbtr's pixel terms). Adds to
 * bound_j the weights' errors against |v_i| and EPS against weight x (|v_i| + dv_i), where dv_i
 * is v_i's own bound; mag_j gets sum weight |v_i|; terms_j counts the terms. */
static void exact_back(exact *e, mpfr_t *v, const double *dv, mpfr_t *acc, double *bound, double *mag,
                       int *terms) {
  mpfr_t w[4], len;
  for (int c = 0; c < 4; c++) mpfr_init2(w[c], PREC);
  mpfr_init2(len, PREC);
  for (size_t j = 0; j < NV; j++) {
    mpfr_set_zero(acc[j], 1);
    bound[j] = mag[j] = 0.0;
    terms[j] = 0;
  }
  for (size_t k = 0, i = 0; k < N_VIEWS; k++)
    for (size_t r = 0; r < N_ROWS; r++)
      for (size_t c = 0; c < N_COLS; c++, i++) {
        ray_set(e, k, r, c, len);
        double av = fabs(mpfr_get_d(v[i], MPFR_RNDN));
        for (int z = 0; z < NZ; z++) {
          size_t idx[4];
          int n = corners(e, z, idx, w);
          for (int q = 0; q < n; q++) {
            size_t j = idx[q];
            double wd = mpfr_get_d(w[q], MPFR_RNDN);
            mpfr_fma(acc[j], w[q], v[i], acc[j], MPFR_RNDN);
            bound[j] += WEIGHT_ERR(e->m) * av + wd * (dv[i] + EPS * av);
            mag[j] += wd * av;
            terms[j]++;
          }
        }
      }
  for (int c = 0; c < 4; c++) mpfr_clear(w[c]);
  mpfr_clear(len);
}

static int max_int(const int *a, size_t n) {
  int m = 0;
  for (size_t i = 0; i < n; i++) m = a[i] > m ? a[i] : m;
  return m;
}

/* A smooth positive volume (0.01 to 0.05 /mm, breast tissue) whose low parts are not zero: the
 * dd path must carry them. */
static void smooth_volume(dbtr_dd *mu) {
  for (size_t j = 0; j < NV; j++) {
    double hi = 0.03 + 0.02 * sin(0.7 * (double)j) * cos(0.13 * (double)j);
    mu[j] = dbtr__dd_fast_two_sum(hi, hi * 0x1p-60 * cos(1.3 * (double)j));
  }
}

static void report_geometry(const exact *e) {
  printf("crossings: nearest to a voxel boundary %.3g index units; magnitude m = %.1f, weight error "
         "bound %.3g\n",
         e->lattice, e->m, WEIGHT_ERR(e->m));
  /* dd's crossings are within 2^8 u^2 m (about 1e-27 here) of the exact ones: with none
   * within 1e-9 of an integer, both split every crossing the same way. */
  CHECK_GT(e->lattice, 1e-9);
}

/* dd's A mu (the public CPU projector) of a smooth volume against the exact one. */
static void check_forward(double turn_deg) {
  static problem p;
  static dbtr_dd mu[NV], proj[NP];
  static double bound[NP], mag[NP];
  REQUIRE_OK(problem_geometry(&p, turn_deg));
  smooth_volume(mu);
  dbtr_cpu_projector *cp = NULL;
  REQUIRE_OK(dbtr_cpu_projector_create(&cp, &p.g, &p.grid, DBTR_PREC_DD, 2));
  REQUIRE_OK(dbtr_cpu_forward(cp, mu, proj));
  dbtr_cpu_projector_destroy(&cp);
  exact e;
  exact_init(&e, &p);
  mpfr_t *l = mp_array(NP), *len = mp_array(NP);
  REQUIRE(l && len);
  exact_forward(&e, mu, l, len, bound, mag);
  report_geometry(&e);
  compare("forward A mu", NP, proj, l, bound, mag);
  mp_array_free(l, NP);
  mp_array_free(len, NP);
  exact_free(&e);
  dbtr_geom_free(&p.g);
}

/* dd's A^T v (the public CPU projector) of signed pixel values, whose sums cancel in part,
 * against the exact one. dbtr folds len into v first (one product: EPS of |v len|). */
static void check_back(double turn_deg) {
  static problem p;
  static dbtr_dd v[NP], vol[NV];
  static double dv[NP], bound[NV], mag[NV];
  static int terms[NV];
  REQUIRE_OK(problem_geometry(&p, turn_deg));
  for (size_t i = 0; i < NP; i++) {
    double hi = 0.3 + cos(0.31 * (double)i);
    v[i] = dbtr__dd_fast_two_sum(hi, hi * 0x1p-58 * sin(0.9 * (double)i));
  }
  dbtr_cpu_projector *cp = NULL;
  REQUIRE_OK(dbtr_cpu_projector_create(&cp, &p.g, &p.grid, DBTR_PREC_DD, 2));
  REQUIRE_OK(dbtr_cpu_back(cp, v, vol));
  dbtr_cpu_projector_destroy(&cp);
  exact e;
  exact_init(&e, &p);
  mpfr_t *vl = mp_array(NP), *acc = mp_array(NV), len;
  REQUIRE(vl && acc);
  mpfr_init2(len, PREC);
  for (size_t k = 0, i = 0; k < N_VIEWS; k++)
    for (size_t r = 0; r < N_ROWS; r++)
      for (size_t c = 0; c < N_COLS; c++, i++) {
        ray_set(&e, k, r, c, len);
        mp_set_dd(vl[i], v[i]);
        mpfr_mul(vl[i], vl[i], len, MPFR_RNDN);
        dv[i] = EPS * fabs(mpfr_get_d(vl[i], MPFR_RNDN));
      }
  exact_back(&e, vl, dv, acc, bound, mag, terms);
  report_geometry(&e);
  CHECK_LE(max_int(terms, NV), MAX_TERMS);
  compare("back A^T v", NV, vol, acc, bound, mag);
  mpfr_clear(len);
  mp_array_free(vl, NP);
  mp_array_free(acc, NV);
  exact_free(&e);
  dbtr_geom_free(&p.g);
}

/* The pixel terms of transmission ML-convex (ARCHITECTURE.md, ML-EM): yhat = i0 exp(-l),
 * e1 = (yhat - y) len, e2 = l yhat len, with their bounds from l's (dl): yhat is off by
 * yhat (dl + EPS); e1 by len (dyhat + EPS (yhat + y)), the difference cancelling against its
 * terms' magnitude; e2 = l yhat len by len yhat (dl (1 + l) + EPS l). */
static void exact_pixel_terms(const problem *p, mpfr_t *l, mpfr_t *len, const double *dl, mpfr_t *e1, mpfr_t *e2,
                              double *de1, double *de2) {
  mpfr_t yhat;
  mpfr_init2(yhat, PREC);
  for (size_t i = 0; i < NP; i++) {
    mpfr_neg(yhat, l[i], MPFR_RNDN);
    mpfr_exp(yhat, yhat, MPFR_RNDN);
    mpfr_mul_d(yhat, yhat, p->i0[i], MPFR_RNDN);
    mpfr_sub_d(e1[i], yhat, p->y[i], MPFR_RNDN);
    mpfr_mul(e1[i], e1[i], len[i], MPFR_RNDN);
    mpfr_mul(e2[i], l[i], yhat, MPFR_RNDN);
    mpfr_mul(e2[i], e2[i], len[i], MPFR_RNDN);
    double yh = mpfr_get_d(yhat, MPFR_RNDN), ld = mpfr_get_d(l[i], MPFR_RNDN), lend = mpfr_get_d(len[i], MPFR_RNDN);
    double dyhat = yh * (dl[i] + EPS);
    de1[i] = lend * (dyhat + EPS * (yh + p->y[i]));
    de2[i] = lend * yh * (dl[i] * (1.0 + ld) + EPS * ld);
  }
  mpfr_clear(yhat);
}

/* The update mu + mu N / D clipped at 0 (a voxel with D <= 0 keeps mu), into x, with its bound:
 * mu/D (dN + |N| dD / D) for the quotient's inputs, EPS (|mu N/D| + |x|) for its own product,
 * quotient and sum. The clip moves nothing further apart. Returns how many voxels were clipped. */
static size_t exact_update(const dbtr_dd *mu0, mpfr_t *n, mpfr_t *d, const double *dn, const double *dd, mpfr_t *x,
                           double *bound, double *mag) {
  mpfr_t q;
  mpfr_init2(q, PREC);
  size_t clipped = 0;
  for (size_t j = 0; j < NV; j++) {
    mp_set_dd(x[j], mu0[j]);
    double mu = fabs(mu0[j].hi);
    bound[j] = 0.0;
    mag[j] = mu;
    if (mpfr_sgn(d[j]) <= 0) continue;
    mpfr_mul(q, x[j], n[j], MPFR_RNDN);
    mpfr_div(q, q, d[j], MPFR_RNDN);
    mpfr_add(x[j], x[j], q, MPFR_RNDN);
    double nd = fabs(mpfr_get_d(n[j], MPFR_RNDN)), den = mpfr_get_d(d[j], MPFR_RNDN);
    double qd = fabs(mpfr_get_d(q, MPFR_RNDN));
    bound[j] = mu / den * (dn[j] + nd * dd[j] / den) + EPS * (qd + fabs(mpfr_get_d(x[j], MPFR_RNDN)));
    mag[j] = mu + qd;
    if (mpfr_sgn(x[j]) < 0) {
      mpfr_set_zero(x[j], 1);
      clipped++;
    }
  }
  mpfr_clear(q);
  return clipped;
}

/* One dd iteration of the ML-EM driver (transmission, 1 subset, the start from the data): the
 * start volume, the result and the forward projection it made. */
static void dd_iteration(const problem *p, dbtr_dd *mu0, dbtr_dd *mu1, dbtr_dd *l) {
  dbtr_data data = {.geom = &p->g, .grid = &p->grid, .algo = DBTR_ALGO_TRANSMISSION, .y = p->y, .i0 = p->i0};
  dbtr_mlem m;
  dbtr_backend *b = NULL;
  double dev;
  REQUIRE_OK(dbtr_mlem_init(&m, &data, 1, 2));
  REQUIRE_OK(dbtr_cpu_backend_create(&b, DBTR_PREC_DD, &m.prob));
  REQUIRE_OK(dbtr_mlem_load(&m, b, 0.0));
  CHECK_OK(b->get_volume(b, mu0));
  CHECK_OK(dbtr_mlem_iterate(&m, b, &dev));
  CHECK_OK(b->get_volume(b, mu1));
  CHECK_OK(b->get_projections(b, l));
  dbtr_backend_destroy(&b);
  dbtr_mlem_free(&m);
}

/* One transmission ML-convex iteration: dd against exact, from the start volume dd used. */
static void check_iteration(double turn_deg) {
  static problem p;
  static dbtr_dd mu0[NV], mu1[NV], l_dd[NP];
  static double dl[NP], magl[NP], de1[NP], de2[NP], dn[NV], dd[NV], magn[NV], magd[NV], bx[NV], magx[NV];
  static int terms[NV];
  REQUIRE_OK(problem_geometry(&p, turn_deg));
  problem_counts(&p);
  dd_iteration(&p, mu0, mu1, l_dd);
  exact e;
  exact_init(&e, &p);
  mpfr_t *l = mp_array(NP), *len = mp_array(NP), *e1 = mp_array(NP), *e2 = mp_array(NP);
  mpfr_t *n = mp_array(NV), *d = mp_array(NV), *x = mp_array(NV);
  REQUIRE(l && len && e1 && e2 && n && d && x);
  exact_forward(&e, mu0, l, len, dl, magl);
  exact_pixel_terms(&p, l, len, dl, e1, e2, de1, de2);
  exact_back(&e, e1, de1, n, dn, magn, terms);
  exact_back(&e, e2, de2, d, dd, magd, terms);
  size_t clipped = exact_update(mu0, n, d, dn, dd, x, bx, magx), untouched = 0;
  double cancel = INFINITY; /* the smallest |x| against its terms |mu| + |mu N / D|, x > 0 */
  for (size_t j = 0; j < NV; j++) {
    untouched += mpfr_sgn(d[j]) <= 0;
    if (mpfr_sgn(x[j]) > 0) cancel = fmin(cancel, mpfr_get_d(x[j], MPFR_RNDN) / magx[j]);
  }
  report_geometry(&e);
  printf("start %.17g /mm; %zu voxels clipped at 0, %zu untouched (D = 0); the closest to cancelling is "
         "%.3g of its terms\n",
         mu0[0].hi, clipped, untouched, cancel);
  CHECK_LE(max_int(terms, NV), MAX_TERMS);
  CHECK_GT(clipped, 0); /* the data make the clip and the cancellation next to it happen */
  compare("iteration's A mu", NP, l_dd, l, dl, magl);
  compare("iteration's volume", NV, mu1, x, bx, magx);
  mpfr_t *arrays[] = {l, len, e1, e2, n, d, x};
  for (size_t i = 0; i < 7; i++) mp_array_free(arrays[i], i < 4 ? NP : NV);
  exact_free(&e);
  dbtr_geom_free(&p.g);
}

#else
#define check_forward(turn) ((void)(turn))
#define check_back(turn) ((void)(turn))
#define check_iteration(turn) ((void)(turn))
#endif

/* The view like the presets: u along +x, v along +y, the CPU's separable tables. */
DBTR_TEST(forward_mpfr) {
  NEED_MPFR();
  check_forward(0.0);
}
DBTR_TEST(back_mpfr) {
  NEED_MPFR();
  check_back(0.0);
}
DBTR_TEST(iteration_mpfr) {
  NEED_MPFR();
  check_iteration(0.0);
}
/* The detector turned by 3.7 deg about z: the per-pixel forms. */
DBTR_TEST(iteration_turned_mpfr) {
  NEED_MPFR();
  check_iteration(3.7);
}

DBTR_TEST_MAIN(forward_mpfr, back_mpfr, iteration_mpfr, iteration_turned_mpfr)
