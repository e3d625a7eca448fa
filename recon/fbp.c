/* recon/fbp.c: the FBP filter (recon/fbp.h, docs/fbp.md). */
#include "recon/fbp.h"

#include <math.h>
#include <string.h>

#include "recon/cpu.h"
#include "recon/error.h"

static const double PI = 3.14159265358979323846;

/* sin(r) and cos(r) for |r| <= pi/4: Taylor series by Horner, coefficients 1/k! (k to 23 and 22:
 * the first term left out is below (pi/4)^25 / 25! < 1e-26). */
static double sin_small(double r) {
  double r2 = r * r, p = 0.0;
  for (int k = 23; k >= 3; k -= 2) {
    double c = 1.0;
    for (int j = 2; j <= k; j++) c /= (double)j;
    p = (p + (((k / 2) % 2) ? -c : c)) * r2;
  }
  return r + r * p;
}

static double cos_small(double r) {
  double r2 = r * r, p = 0.0;
  for (int k = 22; k >= 2; k -= 2) {
    double c = 1.0;
    for (int j = 2; j <= k; j++) c /= (double)j;
    p = (p + (((k / 2) % 2) ? -c : c)) * r2;
  }
  return 1.0 + p;
}

double dbtr_fbp_sin(double x) {
  /* pi/2 in two parts (fdlibm's pio2_1, 33 bits, and pio2_1t): k * P1 is exact for |k| < 2^20. */
  static const double P1 = 1.57079632673412561417e+00, P2 = 6.07710050650619224932e-11;
  double q = x * (2.0 / PI);
  long long k = (long long)(q + (q >= 0.0 ? 0.5 : -0.5));
  double r = (x - (double)k * P1) - (double)k * P2;
  switch (k & 3) {
  case 0: return sin_small(r);
  case 1: return cos_small(r);
  case 2: return -sin_small(r);
  default: return -cos_small(r);
  }
}

double dbtr_fbp_asin(double s) {
  /* asin s = sum over n of c_n s^(2n+1) / (2n+1), c_0 = 1, c_(n+1) = c_n (2n+1) / (2n+2): for
   * s <= 0.75 each term is below 0.57 of the one before, and 80 terms end far below 1 ulp. */
  double sum = s, c = 1.0, p = s, s2 = s * s;
  for (int n = 0; n < 80; n++) {
    c = c * (double)(2 * n + 1) / (double)(2 * n + 2);
    p *= s2;
    double t = c * p / (double)(2 * n + 3);
    if (sum + t == sum) break;
    sum += t;
  }
  return sum;
}

/* K(t) = sin t / t - 2 sin^2(t/2) / t^2 = the integral of u cos(t u) over u in [0, 1]; K(0) = 1/2.
 * The form with sin^2(t/2) has no cancellation of cos t - 1 near 0. */
static double ramp_k(double t) {
  if (t == 0.0) return 0.5;
  double h = dbtr_fbp_sin(0.5 * t);
  return dbtr_fbp_sin(t) / t - 2.0 * h * h / (t * t);
}

/* S(t) = sin t / t = the integral of cos(t u) over u in [0, 1]; S(0) = 1. */
static double lowpass_s(double t) { return t == 0.0 ? 1.0 : dbtr_fbp_sin(t) / t; }

void dbtr_fbp_ramp_kernel(double tau, double cutoff, size_t half, double *h) {
  double fc = cutoff / (2.0 * tau);
  for (size_t n = 0; n <= half; n++) {
    double cn = cutoff * (double)n;
    h[n] = fc * fc * (ramp_k(PI * cn) + 0.5 * ramp_k(PI * (cn + 1.0)) + 0.5 * ramp_k(PI * (cn - 1.0)));
  }
}

size_t dbtr_fbp_lowpass_half(double cutoff) { return (size_t)ceil(8.0 / cutoff); }

void dbtr_fbp_lowpass_kernel(double cutoff, size_t half, double *g) {
  double sum = 0.0;
  for (size_t n = 0; n <= half; n++) {
    double cn = cutoff * (double)n;
    g[n] = 0.5 * cutoff * (lowpass_s(PI * cn) + 0.5 * lowpass_s(PI * (cn + 1.0)) + 0.5 * lowpass_s(PI * (cn - 1.0)));
    sum += n ? 2.0 * g[n] : g[n];
  }
  for (size_t n = 0; n <= half; n++) g[n] /= sum;
}

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static double norm3(const double *a) { return sqrt(dot3(a, a)); }

/* View k's share of the arc (radians): half the angles between its central ray's direction and
 * its neighbours', a neighbour's whole angle at the ends. The angle between unit vectors a and b
 * is 2 asin(|a - b| / 2); rays within 45 deg of the normal keep |a - b| / 2 below 0.71. */
static double view_dtheta(const dbtr_geom *g, size_t k) {
  double w[2] = {0.0, 0.0};
  for (int side = 0; side < 2; side++) {
    long long j = (long long)k + (side ? 1 : -1);
    if (j < 0 || j >= (long long)g->n_views) continue;
    double d0[3], d1[3], e[3];
    for (int i = 0; i < 3; i++) {
      d0[i] = g->source[3 * k + (size_t)i] - g->detector_center[3 * k + (size_t)i];
      d1[i] = g->source[3 * (size_t)j + (size_t)i] - g->detector_center[3 * (size_t)j + (size_t)i];
    }
    double n0 = norm3(d0), n1 = norm3(d1);
    for (int i = 0; i < 3; i++) e[i] = d0[i] / n0 - d1[i] / n1;
    w[side] = 2.0 * dbtr_fbp_asin(0.5 * norm3(e));
  }
  return k == 0 ? w[1] : k + 1 == g->n_views ? w[0] : 0.5 * (w[0] + w[1]);
}

int dbtr_fbp_plan_make(const dbtr_geom *g, dbtr_fbp_plan *plan) {
  if (g->n_views < 2) return dbtr_err(DBTR_EINVAL, "fbp: %zu view: filtered back projection needs 2 or more", g->n_views);
  const double *s0 = g->source, *s1 = g->source + 3 * (g->n_views - 1);
  double m[3] = {s1[0] - s0[0], s1[1] - s0[1], s1[2] - s0[2]};
  const double *u = g->detector_u, *v = g->detector_v;
  double mu = fabs(dot3(m, u)) / norm3(u), mv = fabs(dot3(m, v)) / norm3(v);
  if (!(mu > 0.0 || mv > 0.0))
    return dbtr_err(DBTR_EINVAL, "fbp: the first and the last source are at the same place: no motion to filter along");
  plan->axis = mv > mu;
  plan->tau = norm3(plan->axis ? v : u);
  plan->arc = 0.0;
  for (size_t k = 0; k < g->n_views; k++) plan->arc += view_dtheta(g, k);
  return 0;
}

/* The ray from view k's source through pixel (r, c): its direction d. */
static void pixel_ray(const dbtr_geom *g, size_t k, size_t r, size_t c, double *d) {
  double oc = (double)c - 0.5 * (double)(g->n_cols - 1), orow = (double)r - 0.5 * (double)(g->n_rows - 1);
  for (int i = 0; i < 3; i++)
    d[i] = g->detector_center[3 * k + (size_t)i] + oc * g->detector_u[3 * k + (size_t)i] +
           orow * g->detector_v[3 * k + (size_t)i] - g->source[3 * k + (size_t)i];
}

void dbtr_fbp_lambda_view(const dbtr_geom *g, size_t k, double *out) {
  for (size_t r = 0; r < g->n_rows; r++)
    for (size_t c = 0; c < g->n_cols; c++) {
      double d[3];
      pixel_ray(g, k, r, c, d);
      out[r * g->n_cols + c] = fabs(d[2]) / norm3(d);
    }
}

/* out[i] = sum over taps t of k[|t|] in[i - t], the line continued by zeros, taps in increasing
 * t for every i: each element's sum in one fixed order, whichever i the compiler does together. */
static void convolve(const double *in, size_t n, size_t in_stride, const double *k, size_t half, double *out,
                     size_t out_stride) {
  for (size_t i = 0; i < n; i++) out[i * out_stride] = 0.0;
  long long hl = (long long)half, nn = (long long)n;
  for (long long t = -hl; t <= hl; t++) {
    double w = k[t < 0 ? -t : t];
    long long lo = t > 0 ? t : 0, hi = t < 0 ? nn + t : nn; /* 0 <= i - t < n */
    for (long long i = lo; i < hi; i++) out[(size_t)i * out_stride] += w * in[(size_t)(i - t) * in_stride];
  }
}

void dbtr_fbp_filter_view(const dbtr_geom *g, const dbtr_fbp_plan *plan, const dbtr_fbp_opts *o, size_t k,
                          const double *lines_k, const double *h, const double *gs, size_t gs_half, double *work,
                          double *out, int threads) {
  int nt = dbtr_cpu_threads(threads);
  size_t nr = g->n_rows, nc = g->n_cols, npix = nr * nc;
  const double *u = g->detector_u + 3 * k, *v = g->detector_v + 3 * k;
  /* The detector's normal and the unit vector of the filter axis. */
  double nrm[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
  double nn = norm3(nrm), ax[3];
  for (int i = 0; i < 3; i++) {
    nrm[i] /= nn;
    ax[i] = (plan->axis ? v[i] : u[i]) / plan->tau;
  }
  double *pre = work, *ramp = work + npix;
  double dtheta = view_dtheta(g, k);
  long long nrl = (long long)nr;
  /* cos(phi): the ray's length in the plane of the motion over its whole length. */
#pragma omp parallel for schedule(static) num_threads(nt)
  for (long long rr = 0; rr < nrl; rr++)
    for (size_t r = (size_t)rr, c = 0; c < nc; c++) {
      double d[3];
      pixel_ray(g, k, r, c, d);
      double dn = dot3(d, nrm), da = dot3(d, ax);
      pre[r * nc + c] = lines_k[r * nc + c] * sqrt(dn * dn + da * da) / norm3(d);
    }
  /* The ramp along the axis, one line at a time, with the kernel's full length (n - 1 taps each
   * side): the ramp's tails fall as 1/n^2, and cutting them would leak a constant offset. */
  size_t len = plan->axis ? nr : nc, lines = plan->axis ? nc : nr;
  size_t step = plan->axis ? nc : 1, next = plan->axis ? 1 : nc;
  long long nl = (long long)lines, nlen = (long long)len;
#pragma omp parallel for schedule(dynamic, 4) num_threads(nt)
  for (long long l = 0; l < nl; l++)
    convolve(pre + (size_t)l * next, len, step, h, len - 1, ramp + (size_t)l * next, step);
  const double *filtered = ramp;
  if (o->slice > 0.0) {
#pragma omp parallel for schedule(static) num_threads(nt)
    for (long long l = 0; l < nlen; l++)
      convolve(ramp + (size_t)l * step, lines, next, gs, gs_half, pre + (size_t)l * step, next);
    filtered = pre;
  }
#pragma omp parallel for schedule(static) num_threads(nt)
  for (long long rr = 0; rr < nrl; rr++)
    for (size_t r = (size_t)rr, c = 0; c < nc; c++) {
      double d[3];
      pixel_ray(g, k, r, c, d);
      double dn = dot3(d, nrm), da = dot3(d, ax), dd = norm3(d);
      double lambda = fabs(d[2]) / dd, cos_m = fabs(dn) / sqrt(dn * dn + da * da);
      out[r * nc + c] = dtheta * lambda / cos_m * filtered[r * nc + c];
    }
}

void dbtr_fbp_normalise(const dbtr_geom *g, const dbtr_grid *grid, const double *n, const double *d, double *vol) {
  size_t per_slice = grid->nx * grid->ny;
  for (size_t z = 0; z < grid->nz; z++) {
    double zz = grid->origin[2] + (double)z * grid->dz, rho = 0.0;
    for (size_t k = 0; k < g->n_views; k++) {
      double sz = g->source[3 * k + 2];
      rho += (sz - zz) / (sz - g->detector_center[3 * k + 2]);
    }
    rho /= (double)g->n_views;
    double scale = (double)g->n_views / rho;
    for (size_t i = z * per_slice; i < (z + 1) * per_slice; i++) vol[i] = d[i] != 0.0 ? scale * n[i] / d[i] : 0.0;
  }
}
