/* recon/rays.c: per-view reduction of the geometry, in double, on the host. */
#include "recon/rays.h"

#include <math.h>

void dbtr_view_reduce(const dbtr_geom *g, const dbtr_grid *grid, size_t k, dbtr_view_d *out) {
  const double d[3] = {grid->dx, grid->dy, grid->dz};
  double p0[3];
  dbtr_geom_pixel_center(g, k, 0.0, 0.0, p0);
  for (size_t i = 0; i < 3; i++) {
    out->src[i] = (g->source[3 * k + i] - grid->origin[i]) / d[i];
    out->p0[i] = (p0[i] - grid->origin[i]) / d[i];
    out->du[i] = g->detector_u[3 * k + i] / d[i];
    out->dv[i] = g->detector_v[3 * k + i] / d[i];
    out->scale[i] = d[i];
  }
}

void dbtr_view_reduce_dd(const dbtr_geom *g, const dbtr_grid *grid, size_t k, dbtr_view_dd *out) {
  const double d[3] = {grid->dx, grid->dy, grid->dz};
  /* dbtr_geom_pixel_center's offsets of pixel (0, 0) from the detector's centre: halves of
   * integers below 2^22, exact in double. */
  dbtr_dd oc = dbtr_dd_of(-0.5 * (double)(g->n_cols - 1)), orow = dbtr_dd_of(-0.5 * (double)(g->n_rows - 1));
  for (size_t i = 0; i < 3; i++) {
    dbtr_dd di = dbtr_dd_of(d[i]), o = dbtr_dd_of(grid->origin[i]), u = dbtr_dd_of(g->detector_u[3 * k + i]),
            v = dbtr_dd_of(g->detector_v[3 * k + i]);
    dbtr_dd p0 = dbtr_dd_add(dbtr_dd_add(dbtr_dd_of(g->detector_center[3 * k + i]), dbtr_dd_mul(oc, u)),
                             dbtr_dd_mul(orow, v));
    out->src[i] = dbtr_dd_div(dbtr_dd_sub(dbtr_dd_of(g->source[3 * k + i]), o), di);
    out->p0[i] = dbtr_dd_div(dbtr_dd_sub(p0, o), di);
    out->du[i] = dbtr_dd_div(u, di);
    out->dv[i] = dbtr_dd_div(v, di);
    out->scale[i] = di;
  }
}

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void cross3(const double *a, const double *b, double *o) {
  o[0] = a[1] * b[2] - a[2] * b[1];
  o[1] = a[2] * b[0] - a[0] * b[2];
  o[2] = a[0] * b[1] - a[1] * b[0];
}

void dbtr_footprint_map(const double h[9], double x, double y, double *c, double *r) {
  double w = h[6] * x + h[7] * y + h[8];
  *c = (h[0] * x + h[1] * y + h[2]) / w;
  *r = (h[3] * x + h[4] * y + h[5]) / w;
}

void dbtr_footprint_reduce(const dbtr_geom *g, const dbtr_grid *grid, size_t k, size_t z, dbtr_footprint_d *out) {
  /* A slice point X(x, y) = (ox + x dx, oy + y dy, oz + z dz) projects from the source S
   * onto the detector plane (normal n = u x v through D0, the centre of pixel (0,0)) at
   * P = S + t (X - S), t = n.(D0 - S) / n.(X - S). Then P - D0 = c u + r v with
   * c = (P - D0).(v x n) / |n|^2 and r = (P - D0).(n x u) / |n|^2. Multiplying through by
   * n.(X - S) leaves numerators and denominator linear in X, hence in (x, y). */
  const double *s = g->source + 3 * k, *u = g->detector_u + 3 * k, *v = g->detector_v + 3 * k;
  double d0[3], n[3], ac[3], ar[3];
  dbtr_geom_pixel_center(g, k, 0.0, 0.0, d0);
  cross3(u, v, n);
  double nn = dot3(n, n);
  cross3(v, n, ac);
  cross3(n, u, ar);
  for (size_t i = 0; i < 3; i++) {
    ac[i] /= nn;
    ar[i] /= nn;
  }
  double sd0[3] = {s[0] - d0[0], s[1] - d0[1], s[2] - d0[2]};
  double h_num = -dot3(n, sd0); /* n.(D0 - S) */
  double acs = dot3(ac, sd0), ars = dot3(ar, sd0);
  /* Each linear function f(X) = g.X + g0 becomes, over the slice, f = g_x dx x + g_y dy y
   * + (g.X(0,0) + g0), with X(0,0) = (ox, oy, oz + z dz). */
  double x00[3] = {grid->origin[0], grid->origin[1], grid->origin[2] + (double)z * grid->dz};
  double step_x[3] = {grid->dx, 0.0, 0.0}, step_y[3] = {0.0, grid->dy, 0.0};
  /* den(X) = n.(X - S); num_c(X) = acs * den(X) + h_num * ac.(X - S); likewise r. */
  double xs[3] = {x00[0] - s[0], x00[1] - s[1], x00[2] - s[2]};
  double den[3] = {dot3(n, step_x), dot3(n, step_y), dot3(n, xs)};
  double lin_c[3] = {dot3(ac, step_x), dot3(ac, step_y), dot3(ac, xs)};
  double lin_r[3] = {dot3(ar, step_x), dot3(ar, step_y), dot3(ar, xs)};
  for (size_t i = 0; i < 3; i++) {
    out->h[i] = acs * den[i] + h_num * lin_c[i];
    out->h[3 + i] = ars * den[i] + h_num * lin_r[i];
    out->h[6 + i] = den[i];
  }
  /* Radii: the largest distance, over the slice, between the projection of a voxel
   * centre and the projections of the corners of its support square. For a detector
   * parallel to the slices the map is affine and one evaluation is exact; otherwise the
   * slice is sampled on a 9 x 9 lattice including its corners. */
  double rc = 0.0, rr = 0.0;
  const int m = 9;
  for (int a = 0; a < m; a++)
    for (int b = 0; b < m; b++) {
      double x = -1.0 + (double)a / (m - 1) * ((double)grid->nx + 1.0);
      double y = -1.0 + (double)b / (m - 1) * ((double)grid->ny + 1.0);
      double c0, r0;
      dbtr_footprint_map(out->h, x, y, &c0, &r0);
      for (int cx = -1; cx <= 1; cx += 2)
        for (int cy = -1; cy <= 1; cy += 2) {
          double c1, r1;
          dbtr_footprint_map(out->h, x + cx, y + cy, &c1, &r1);
          rc = fmax(rc, fabs(c1 - c0));
          rr = fmax(rr, fabs(r1 - r0));
        }
    }
  out->rc = rc + DBTR_FOOTPRINT_MARGIN;
  out->rr = rr + DBTR_FOOTPRINT_MARGIN;
}

void dbtr_footprint_to_f(const dbtr_footprint_d *in, dbtr_footprint_f *out) {
  for (int i = 0; i < 9; i++) out->h[i] = (float)in->h[i];
  out->rc = (float)in->rc;
  out->rr = (float)in->rr;
}

void dbtr_footprint_to_dd(const dbtr_footprint_d *in, dbtr_footprint_dd *out) {
  for (int i = 0; i < 9; i++) out->h[i] = dbtr_dd_of(in->h[i]);
  out->rc = dbtr_dd_of(in->rc);
  out->rr = dbtr_dd_of(in->rr);
}
