/* phantoms/shapes.c: exact chords through convex shapes, line integrals, point values,
 * projections and voxelizations of an analytic phantom.
 *
 * Every shape (ellipsoid, finite elliptic cylinder, box, each in its own rotated frame,
 * each optionally cut by an axis-aligned clip box) is convex, so a line meets it in one
 * parameter interval; the chord is the length of the intersection of that interval with
 * the clip box's interval and with the segment's [0, 1]. Nothing is sampled: a projection
 * is exact up to rounding, so reconstruction tests that use it commit no inverse crime.
 * Sums run over the shapes in list order, and each output element is computed by one
 * thread, so every result is bitwise the same for any thread count. The helpers the phantom
 * builders (phantoms/breast.c, phantoms/acr.c) make their shapes with are here too; the
 * builders call this file, never the other way (phantoms/phantom.c picks the builder). */
#include "phantoms/shapes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recon/error.h"

/* ---- building ---- */

int dbtr__builder_push(dbtr__builder *b, const dbtr_shape *s, const dbtr__what *w) {
  dbtr_phantom *p = b->p;
  if (p->n_shapes == b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 64, bytes, info_bytes;
    int rc = dbtr_size_mul(cap, sizeof(dbtr_shape), &bytes, "phantom shapes");
    if (!rc) rc = dbtr_size_mul(cap, sizeof(dbtr_object_info), &info_bytes, "phantom objects");
    if (rc) return rc;
    dbtr_shape *grown = realloc(p->shapes, bytes);
    if (grown) p->shapes = grown;
    dbtr_object_info *info = grown ? realloc(p->info, info_bytes) : NULL;
    if (info) p->info = info;
    if (!grown || !info)
      return dbtr_err(DBTR_ENOMEM, "phantom %s: cannot grow the shape list to %zu shapes", p->name, cap);
    b->cap = cap;
  }
  dbtr_object_info *o = p->info + p->n_shapes;
  memset(o, 0, sizeof *o);
  snprintf(o->kind, sizeof o->kind, "%s", w->kind);
  snprintf(o->material, sizeof o->material, "%s", w->material);
  o->mu = w->mu;
  o->contrast = s->mu;
  o->surround = w->surround;
  o->target = w->target;
  p->shapes[p->n_shapes++] = *s;
  return 0;
}

dbtr_shape dbtr__shape(dbtr_shape_kind kind, double cx, double cy, double cz, double hx, double hy, double hz,
                       double mu) {
  dbtr_shape s;
  memset(&s, 0, sizeof s);
  s.kind = kind;
  s.center[0] = cx;
  s.center[1] = cy;
  s.center[2] = cz;
  s.half[0] = hx;
  s.half[1] = hy;
  s.half[2] = hz;
  for (int i = 0; i < 3; i++) s.axes[i][i] = 1.0;
  s.mu = mu;
  return s;
}

void dbtr__shape_turn_z(dbtr_shape *s, double angle) {
  double c = cos(angle), sn = sin(angle);
  for (int i = 0; i < 3; i++) {
    double x = s->axes[i][0], y = s->axes[i][1];
    s->axes[i][0] = c * x - sn * y;
    s->axes[i][1] = sn * x + c * y;
  }
}

void dbtr__shape_clip(dbtr_shape *s, const double lo[3], const double hi[3]) {
  s->clipped = 1;
  memcpy(s->clip_lo, lo, sizeof s->clip_lo);
  memcpy(s->clip_hi, hi, sizeof s->clip_hi);
}

void dbtr_shape_bounds(const dbtr_shape *s, double lo[3], double hi[3]) {
  const double *h = s->half;
  for (int j = 0; j < 3; j++) {
    /* Half extent along world axis j: the support function of the shape in direction e_j. */
    double a0 = h[0] * s->axes[0][j], a1 = h[1] * s->axes[1][j], a2 = h[2] * s->axes[2][j], e;
    if (s->kind == DBTR_SHAPE_ELLIPSOID)
      e = sqrt(a0 * a0 + a1 * a1 + a2 * a2);
    else if (s->kind == DBTR_SHAPE_CYLINDER)
      e = sqrt(a0 * a0 + a1 * a1) + fabs(a2);
    else
      e = fabs(a0) + fabs(a1) + fabs(a2);
    lo[j] = s->center[j] - e;
    hi[j] = s->center[j] + e;
    if (s->clipped) {
      lo[j] = fmax(lo[j], s->clip_lo[j]);
      hi[j] = fmin(hi[j], s->clip_hi[j]);
    }
  }
}

void dbtr__grid_bounds(const dbtr_grid *grid, double lo[3], double hi[3]) {
  size_t n[3] = {grid->nx, grid->ny, grid->nz};
  double d[3] = {grid->dx, grid->dy, grid->dz};
  for (int j = 0; j < 3; j++) {
    lo[j] = grid->origin[j] - 0.5 * d[j];
    hi[j] = grid->origin[j] + ((double)n[j] - 0.5) * d[j];
  }
}

/* ---- chords ---- */

/* Narrows [*lo, *hi] to the t where |q0 + t qd| <= h (one slab of a box or clip box). */
static void slab(double q0, double qd, double h, double *lo, double *hi) {
  if (qd == 0.0) {
    if (!(fabs(q0) <= h)) *lo = HUGE_VAL, *hi = -HUGE_VAL;
    return;
  }
  double ta = (-h - q0) / qd, tb = (h - q0) / qd;
  if (ta > tb) {
    double t = ta;
    ta = tb;
    tb = t;
  }
  if (ta > *lo) *lo = ta;
  if (tb < *hi) *hi = tb;
}

/* Narrows [*lo, *hi] to the t where clo <= a + t d <= chi. The bounds are used as given
 * (not as centre and half width), so infinite clip bounds work and the chord agrees with
 * the point test of dbtr_phantom_mu_at. */
static void clip_slab(double a, double d, double clo, double chi, double *lo, double *hi) {
  if (d == 0.0) {
    if (!(a >= clo && a <= chi)) *lo = HUGE_VAL, *hi = -HUGE_VAL;
    return;
  }
  double ta = (clo - a) / d, tb = (chi - a) / d;
  if (ta > tb) {
    double t = ta;
    ta = tb;
    tb = t;
  }
  if (ta > *lo) *lo = ta;
  if (tb < *hi) *hi = tb;
}

/* Narrows [*lo, *hi] to the t where |o + t e|^2 <= 1 over the first m components (the
 * unit ball of the shape's scaled frame). The closest approach tm and the squared
 * distance there give the half-chord directly, which avoids the cancellation of the
 * textbook b^2 - 4ac. */
static void unit_ball(const double *o, const double *e, int m, double *lo, double *hi) {
  double ee = 0.0, oe = 0.0, oo = 0.0;
  for (int i = 0; i < m; i++) {
    ee += e[i] * e[i];
    oe += o[i] * e[i];
    oo += o[i] * o[i];
  }
  if (ee == 0.0) {
    /* The line runs along the cylinder axis (or the segment is a point): inside for all
     * t or for none. */
    if (!(oo <= 1.0)) *lo = HUGE_VAL, *hi = -HUGE_VAL;
    return;
  }
  double tm = -oe / ee, d2 = 0.0;
  for (int i = 0; i < m; i++) {
    double w = o[i] + tm * e[i];
    d2 += w * w;
  }
  if (!(d2 < 1.0)) {
    *lo = HUGE_VAL, *hi = -HUGE_VAL;
    return;
  }
  double half = sqrt((1.0 - d2) / ee);
  if (tm - half > *lo) *lo = tm - half;
  if (tm + half < *hi) *hi = tm + half;
}

/* Length of the part of segment a + t d, t in [0, 1], inside shape s; len = |d|. */
static double chord(const dbtr_shape *s, const double a[3], const double d[3], double len) {
  double lo = 0.0, hi = 1.0, q0[3], qd[3];
  for (int i = 0; i < 3; i++) {
    const double *ax = s->axes[i];
    q0[i] = ax[0] * (a[0] - s->center[0]) + ax[1] * (a[1] - s->center[1]) + ax[2] * (a[2] - s->center[2]);
    qd[i] = ax[0] * d[0] + ax[1] * d[1] + ax[2] * d[2];
  }
  if (s->kind == DBTR_SHAPE_BOX) {
    for (int i = 0; i < 3; i++) slab(q0[i], qd[i], s->half[i], &lo, &hi);
  } else {
    int m = s->kind == DBTR_SHAPE_ELLIPSOID ? 3 : 2;
    double o[3], e[3];
    for (int i = 0; i < m; i++) {
      o[i] = q0[i] / s->half[i];
      e[i] = qd[i] / s->half[i];
    }
    unit_ball(o, e, m, &lo, &hi);
    if (s->kind == DBTR_SHAPE_CYLINDER) slab(q0[2], qd[2], s->half[2], &lo, &hi);
  }
  if (s->clipped)
    for (int j = 0; j < 3; j++) clip_slab(a[j], d[j], s->clip_lo[j], s->clip_hi[j], &lo, &hi);
  return hi > lo ? (hi - lo) * len : 0.0;
}

/* Sum of mu x chord over the listed shapes (all of them when idx is NULL), in order. */
static double segment_integral(const dbtr_phantom *p, const size_t *idx, size_t n, const double a[3],
                               const double b[3]) {
  double d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
  double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), sum = 0.0;
  for (size_t i = 0; i < n; i++) {
    const dbtr_shape *s = p->shapes + (idx ? idx[i] : i);
    sum += s->mu * chord(s, a, d, len);
  }
  return sum;
}

double dbtr_phantom_line_integral(const dbtr_phantom *p, const double a[3], const double b[3]) {
  return segment_integral(p, NULL, p->n_shapes, a, b);
}

int dbtr_shape_inside(const dbtr_shape *s, const double x[3]) {
  if (s->clipped)
    for (int j = 0; j < 3; j++)
      if (!(x[j] >= s->clip_lo[j] && x[j] <= s->clip_hi[j])) return 0;
  double q[3];
  for (int i = 0; i < 3; i++) {
    const double *ax = s->axes[i];
    q[i] = (ax[0] * (x[0] - s->center[0]) + ax[1] * (x[1] - s->center[1]) + ax[2] * (x[2] - s->center[2])) /
           s->half[i];
  }
  if (s->kind == DBTR_SHAPE_ELLIPSOID) return q[0] * q[0] + q[1] * q[1] + q[2] * q[2] <= 1.0;
  if (s->kind == DBTR_SHAPE_CYLINDER) return q[0] * q[0] + q[1] * q[1] <= 1.0 && fabs(q[2]) <= 1.0;
  return fabs(q[0]) <= 1.0 && fabs(q[1]) <= 1.0 && fabs(q[2]) <= 1.0;
}

double dbtr_phantom_mu_at(const dbtr_phantom *p, const double x[3]) {
  double mu = 0.0;
  for (size_t i = 0; i < p->n_shapes; i++)
    if (dbtr_shape_inside(p->shapes + i, x)) mu += p->shapes[i].mu;
  return mu;
}

/* ---- projection ---- */

/* A sphere that contains the (clipped) shape: (x, y, z, radius). The clip box's own
 * sphere is used when it is the smaller one. */
static void bounding_sphere(const dbtr_shape *s, double out[4]) {
  const double *h = s->half;
  double r;
  if (s->kind == DBTR_SHAPE_ELLIPSOID)
    r = fmax(h[0], fmax(h[1], h[2]));
  else if (s->kind == DBTR_SHAPE_CYLINDER)
    r = sqrt(fmax(h[0], h[1]) * fmax(h[0], h[1]) + h[2] * h[2]);
  else
    r = sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2]);
  memcpy(out, s->center, 3 * sizeof(double));
  out[3] = r;
  if (s->clipped) {
    double hc[3], rc = 0.0;
    for (int j = 0; j < 3; j++) {
      hc[j] = 0.5 * (s->clip_hi[j] - s->clip_lo[j]);
      rc += hc[j] * hc[j];
    }
    rc = sqrt(rc);
    if (rc < r)
      for (int j = 0; j < 4; j++) out[j] = j < 3 ? 0.5 * (s->clip_lo[j] + s->clip_hi[j]) : rc;
  }
}

/* One detector row of view k. All rays of one sub-row lie in the plane through the source
 * and that sub-row's line of pixel points, so only shapes whose bounding sphere meets
 * the plane can contribute; the others would add exact zeros, so skipping them changes
 * no bit of the result. */
static void project_row(const dbtr_phantom *p, const dbtr_geom *g, const double *spheres, size_t k, size_t r, int ss,
                        size_t *cand, double *acc, double *out) {
  const double *s = g->source + 3 * k, *u = g->detector_u + 3 * k;
  memset(acc, 0, g->n_cols * sizeof(double));
  for (int i = 0; i < ss; i++) {
    double rr = (double)r + ((double)i + 0.5) / (double)ss - 0.5, base[3];
    dbtr_geom_pixel_center(g, k, rr, 0.0, base);
    double w[3] = {base[0] - s[0], base[1] - s[1], base[2] - s[2]};
    double n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
    double nn = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    size_t nc = 0;
    for (size_t j = 0; j < p->n_shapes; j++) {
      const double *sp = spheres + 4 * j;
      double dist = fabs(n[0] * (sp[0] - s[0]) + n[1] * (sp[1] - s[1]) + n[2] * (sp[2] - s[2])) / nn;
      /* 1e-6 mm covers the rounding of the plane (about 1e-13 mm at 1 m) many times over. */
      if (!(dist > sp[3] + 1e-6)) cand[nc++] = j;
    }
    for (size_t c = 0; c < g->n_cols; c++)
      for (int j = 0; j < ss; j++) {
        double pix[3];
        dbtr_geom_pixel_center(g, k, rr, (double)c + ((double)j + 0.5) / (double)ss - 0.5, pix);
        acc[c] += segment_integral(p, cand, nc, s, pix);
      }
  }
  double scale = 1.0 / ((double)ss * (double)ss);
  for (size_t c = 0; c < g->n_cols; c++) out[c] = acc[c] * scale;
}

/* Supersampling beyond 64 x 64 rays per pixel buys nothing but time. */
#define DBTR__MAX_SS 64

int dbtr_phantom_project(const dbtr_phantom *p, const dbtr_geom *g, int ss, double *out) {
  size_t n;
  if (!p || !g || !out) return dbtr_err(DBTR_EINVAL, "phantom project: NULL argument");
  if (ss < 1 || ss > DBTR__MAX_SS)
    return dbtr_err(DBTR_EINVAL, "phantom project: supersampling %d: must be 1 to %d rays per pixel side", ss,
                    DBTR__MAX_SS);
  int rc = dbtr_geom_proj_count(g, &n);
  if (rc) return rc;
  double *spheres;
  rc = dbtr_alloc((void **)&spheres, p->n_shapes, 4 * sizeof(double), "phantom project: bounding spheres");
  if (rc) return rc;
  for (size_t j = 0; j < p->n_shapes; j++) bounding_sphere(p->shapes + j, spheres + 4 * j);
  size_t rows = g->n_views * g->n_rows; /* <= n, so no overflow */
  int failed = 0;
#pragma omp parallel
  {
    size_t *cand = malloc((p->n_shapes + 1) * sizeof(size_t));
    double *acc = malloc(g->n_cols * sizeof(double));
    if (!cand || !acc) {
#pragma omp atomic write
      failed = 1;
    }
#pragma omp for schedule(static)
    for (size_t kr = 0; kr < rows; kr++)
      if (cand && acc) project_row(p, g, spheres, kr / g->n_rows, kr % g->n_rows, ss, cand, acc, out + kr * g->n_cols);
    free(cand);
    free(acc);
  }
  free(spheres);
  if (failed) return dbtr_err(DBTR_ENOMEM, "phantom project: cannot allocate per-thread row buffers");
  return 0;
}

/* ---- voxelization ---- */

/* One row of voxels (fixed y and z index). Only shapes whose bounding box reaches the
 * row's sample points are visited, and each only over the voxels its box spans. */
static void voxelize_row(const dbtr_phantom *p, const dbtr_grid *grid, const double *boxes, size_t kz, size_t ky,
                         int ss, double *acc, float *out) {
  double f0 = 0.5 / (double)ss - 0.5, f1 = -f0; /* first and last sample offset, in voxels */
  double yc = grid->origin[1] + (double)ky * grid->dy, zc = grid->origin[2] + (double)kz * grid->dz;
  double ylo = yc + f0 * grid->dy, yhi = yc + f1 * grid->dy, zlo = zc + f0 * grid->dz, zhi = zc + f1 * grid->dz;
  memset(acc, 0, grid->nx * sizeof(double));
  for (size_t j = 0; j < p->n_shapes; j++) {
    const double *b = boxes + 6 * j; /* lo[3], hi[3] */
    if (b[1] > yhi || b[4] < ylo || b[2] > zhi || b[5] < zlo) continue;
    double ilo = floor((b[0] - grid->origin[0]) / grid->dx - f1) - 1.0;
    double ihi = ceil((b[3] - grid->origin[0]) / grid->dx - f0) + 1.0;
    if (ihi < 0.0 || ilo > (double)(grid->nx - 1)) continue;
    size_t i0 = ilo < 0.0 ? 0 : (size_t)ilo;
    size_t i1 = ihi > (double)(grid->nx - 1) ? grid->nx - 1 : (size_t)ihi;
    const dbtr_shape *s = p->shapes + j;
    for (size_t i = i0; i <= i1; i++) {
      double xc = grid->origin[0] + (double)i * grid->dx, count = 0.0, x[3];
      for (int a = 0; a < ss; a++) {
        x[2] = zc + (f0 + (double)a / (double)ss) * grid->dz;
        for (int bb = 0; bb < ss; bb++) {
          x[1] = yc + (f0 + (double)bb / (double)ss) * grid->dy;
          for (int c = 0; c < ss; c++) {
            x[0] = xc + (f0 + (double)c / (double)ss) * grid->dx;
            count += dbtr_shape_inside(s, x);
          }
        }
      }
      acc[i] += s->mu * count;
    }
  }
  double scale = 1.0 / ((double)ss * (double)ss * (double)ss);
  for (size_t i = 0; i < grid->nx; i++) out[i] = (float)(acc[i] * scale);
}

int dbtr_phantom_voxelize(const dbtr_phantom *p, const dbtr_grid *grid, int ss, float *out) {
  return dbtr_phantom_voxelize_slices(p, grid, ss, 0, grid ? grid->nz : 0, out);
}

int dbtr_phantom_voxelize_slices(const dbtr_phantom *p, const dbtr_grid *grid, int ss, size_t z0, size_t z1,
                                 float *out) {
  size_t n;
  if (!p || !grid || !out) return dbtr_err(DBTR_EINVAL, "phantom voxelize: NULL argument");
  if (z0 > z1 || z1 > grid->nz)
    return dbtr_err(DBTR_EINVAL, "phantom voxelize: slices %zu to %zu of a grid of %zu", z0, z1, grid->nz);
  if (ss < 1 || ss > DBTR__MAX_SS)
    return dbtr_err(DBTR_EINVAL, "phantom voxelize: supersampling %d: must be 1 to %d points per voxel side", ss,
                    DBTR__MAX_SS);
  int rc = dbtr_grid_check(grid, NULL, "phantom voxelize grid");
  if (rc) return rc;
  rc = dbtr_grid_count(grid, &n);
  if (rc) return rc;
  double *boxes;
  rc = dbtr_alloc((void **)&boxes, p->n_shapes, 6 * sizeof(double), "phantom voxelize: bounding boxes");
  if (rc) return rc;
  for (size_t j = 0; j < p->n_shapes; j++) dbtr_shape_bounds(p->shapes + j, boxes + 6 * j, boxes + 6 * j + 3);
  size_t row0 = z0 * grid->ny, rows = z1 * grid->ny;
  int failed = 0;
#pragma omp parallel
  {
    double *acc = malloc(grid->nx * sizeof(double));
    if (!acc) {
#pragma omp atomic write
      failed = 1;
    }
#pragma omp for schedule(static)
    for (size_t zy = row0; zy < rows; zy++)
      if (acc) voxelize_row(p, grid, boxes, zy / grid->ny, zy % grid->ny, ss, acc, out + (zy - row0) * grid->nx);
    free(acc);
  }
  free(boxes);
  if (failed) return dbtr_err(DBTR_ENOMEM, "phantom voxelize: cannot allocate per-thread row buffers");
  return 0;
}
