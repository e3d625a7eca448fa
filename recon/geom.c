/* recon/geom.c: geometry containers and the checks every geometry passes before use. */
#include "recon/geom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "recon/error.h"

int dbtr_geom_init(dbtr_geom *g, size_t n_views, size_t n_rows, size_t n_cols) {
  memset(g, 0, sizeof *g);
  size_t n;
  int rc = dbtr_size_mul(n_views, 3, &n, "geometry");
  if (rc) return rc;
  if (n_views == 0 || n_rows == 0 || n_cols == 0)
    return dbtr_err(DBTR_EINVAL, "geometry: %zu views of %zu x %zu pixels: every size must be positive",
                    n_views, n_rows, n_cols);
  double **arrays[4] = {&g->source, &g->detector_center, &g->detector_u, &g->detector_v};
  for (int i = 0; i < 4; i++) {
    *arrays[i] = calloc(n, sizeof(double));
    if (!*arrays[i]) {
      dbtr_geom_free(g);
      return dbtr_err(DBTR_ENOMEM, "geometry: cannot allocate %zu views", n_views);
    }
  }
  g->n_views = n_views;
  g->n_rows = n_rows;
  g->n_cols = n_cols;
  return 0;
}

void dbtr_geom_free(dbtr_geom *g) {
  free(g->source);
  free(g->detector_center);
  free(g->detector_u);
  free(g->detector_v);
  memset(g, 0, sizeof *g);
}

int dbtr_geom_select(dbtr_geom *dst, const dbtr_geom *src, const size_t *idx, size_t n) {
  int rc = dbtr_geom_init(dst, n, src->n_rows, src->n_cols);
  if (rc) return rc;
  for (size_t i = 0; i < n; i++) {
    size_t k = idx[i];
    memcpy(dst->source + 3u * i, src->source + 3u * k, 3u * sizeof(double));
    memcpy(dst->detector_center + 3u * i, src->detector_center + 3u * k, 3u * sizeof(double));
    memcpy(dst->detector_u + 3u * i, src->detector_u + 3u * k, 3u * sizeof(double));
    memcpy(dst->detector_v + 3u * i, src->detector_v + 3u * k, 3u * sizeof(double));
  }
  return 0;
}

int dbtr_geom_copy(dbtr_geom *dst, const dbtr_geom *src) {
  int rc = dbtr_geom_init(dst, src->n_views, src->n_rows, src->n_cols);
  if (rc) return rc;
  size_t bytes = 3u * src->n_views * sizeof(double);
  memcpy(dst->source, src->source, bytes);
  memcpy(dst->detector_center, src->detector_center, bytes);
  memcpy(dst->detector_u, src->detector_u, bytes);
  memcpy(dst->detector_v, src->detector_v, bytes);
  return 0;
}

void dbtr_geom_pixel_center(const dbtr_geom *g, size_t k, double r, double c, double out[3]) {
  double oc = c - 0.5 * (double)(g->n_cols - 1);
  double orow = r - 0.5 * (double)(g->n_rows - 1);
  for (size_t i = 0; i < 3; i++)
    out[i] = g->detector_center[3 * k + i] + oc * g->detector_u[3 * k + i] + orow * g->detector_v[3 * k + i];
}

int dbtr_geom_proj_count(const dbtr_geom *g, size_t *out) {
  return dbtr_size_mul3(g->n_views, g->n_rows, g->n_cols, out, "projections");
}

int dbtr_grid_count(const dbtr_grid *grid, size_t *out) {
  return dbtr_size_mul3(grid->nx, grid->ny, grid->nz, out, "volume");
}

static int finite3(const double *v) { return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]); }
static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void cross3(const double *a, const double *b, double *o) {
  o[0] = a[1] * b[2] - a[2] * b[1];
  o[1] = a[2] * b[0] - a[0] * b[2];
  o[2] = a[0] * b[1] - a[1] * b[0];
}

int dbtr_geom_check(const dbtr_geom *g, const char *what) {
  if (g->n_views == 0 || g->n_rows == 0 || g->n_cols == 0)
    return dbtr_err(DBTR_EGEOM, "%s: empty geometry (%zu views of %zu x %zu pixels)", what, g->n_views,
                    g->n_rows, g->n_cols);
  /* The projectors split pixel and voxel positions into index and fraction for |f| < 2^22
   * (floor_int, recon/proj_impl.h); no detector comes near (DBT detectors have ~4000). */
  if (g->n_rows > DBTR_MAX_SIDE || g->n_cols > DBTR_MAX_SIDE)
    return dbtr_err(DBTR_EOVERFLOW, "%s: detector %zu x %zu pixels: each side must be at most %u", what, g->n_cols,
                    g->n_rows, DBTR_MAX_SIDE);
  for (size_t k = 0; k < g->n_views; k++) {
    const double *s = g->source + 3 * k, *d = g->detector_center + 3 * k;
    const double *u = g->detector_u + 3 * k, *v = g->detector_v + 3 * k;
    if (!finite3(s) || !finite3(d) || !finite3(u) || !finite3(v))
      return dbtr_err(DBTR_EGEOM, "%s: view %zu: geometry vector is not finite", what, k);
    double nu = sqrt(dot3(u, u)), nv = sqrt(dot3(v, v));
    if (!(nu > 0.0) || !(nv > 0.0))
      return dbtr_err(DBTR_EGEOM, "%s: view %zu: detector %s has zero length", what, k, nu > 0.0 ? "v" : "u");
    double n[3];
    cross3(u, v, n);
    double nn = sqrt(dot3(n, n));
    if (!(nn > 1e-9 * nu * nv))
      return dbtr_err(DBTR_EGEOM, "%s: view %zu: detector u and v are parallel", what, k);
    double sd[3] = {s[0] - d[0], s[1] - d[1], s[2] - d[2]};
    double h = dot3(sd, n) / nn; /* source height over the detector plane */
    if (!(fabs(h) > 1e-6))
      return dbtr_err(DBTR_EGEOM, "%s: view %zu: the source lies on the detector plane", what, k);
    /* The ratio |ray_xy| / |ray_z| is quasi-convex over the (planar, convex) detector, so
     * its largest value is at one of the four corners. */
    double rows[2] = {-0.5, (double)g->n_rows - 0.5}, cols[2] = {-0.5, (double)g->n_cols - 0.5};
    for (int a = 0; a < 2; a++)
      for (int b = 0; b < 2; b++) {
        double p[3];
        dbtr_geom_pixel_center(g, k, rows[a], cols[b], p);
        double rx = p[0] - s[0], ry = p[1] - s[1], rz = p[2] - s[2];
        double angle = atan2(sqrt(rx * rx + ry * ry), fabs(rz)) * 180.0 / 3.14159265358979323846;
        if (!(angle <= 45.0))
          return dbtr_err(DBTR_EGEOM,
                          "%s: view %zu: the ray to detector corner (row %g, col %g) is %.1f deg from the "
                          "slice normal; dbtr's projector handles at most 45 deg",
                          what, k, rows[a], cols[b], angle);
      }
  }
  return 0;
}

/* The voxel sizes against the geometry's extent L: the largest distance from the grid's
 * origin to a source or a detector corner, in mm. The projectors work in index coordinates,
 * (x - origin) / d, so every position they compute is at most L / d voxels from the origin,
 * and they need it within 2^22 (floor_int's exact range, recon/proj_impl.h), as the grid's
 * own sides are. That bound also keeps a float path's ray records and path lengths (about d)
 * normal floats, and the attenuation values (about a line integral over the slab, so at
 * most some 30 / (nz dz)) far from float's overflow; a voxel of 1e-300 mm made every voxel
 * NaN. The other side, d at most 2^22 L, keeps the grid's extent and the footprints'
 * products of mm lengths with d (recon/rays.c) finite. Both are far from any real grid: a
 * geometry 700 mm across allows voxels from 0.17 um up. */
static int check_voxel_scale(const dbtr_grid *grid, const dbtr_geom *g, const char *what) {
  const double side = (double)DBTR_MAX_SIDE;
  double L = 0.0;
  double rows[2] = {-0.5, (double)g->n_rows - 0.5}, cols[2] = {-0.5, (double)g->n_cols - 0.5};
  for (size_t k = 0; k < g->n_views; k++) {
    double p[5][3];
    memcpy(p[4], g->source + 3 * k, sizeof p[4]);
    for (int a = 0; a < 4; a++) dbtr_geom_pixel_center(g, k, rows[a / 2], cols[a % 2], p[a]);
    for (int a = 0; a < 5; a++) {
      /* hypot: no overflow for distances past 1e154. */
      L = fmax(L, hypot(hypot(p[a][0] - grid->origin[0], p[a][1] - grid->origin[1]), p[a][2] - grid->origin[2]));
    }
  }
  const double d[3] = {grid->dx, grid->dy, grid->dz};
  for (int i = 0; i < 3; i++)
    if (!(L / d[i] <= side && d[i] <= side * L))
      return dbtr_err(DBTR_EGEOM,
                      "%s: voxel size %g x %g x %g mm: the geometry reaches %g mm from the grid's origin, %g voxels "
                      "along %c; dbtr computes positions in voxels up to 2^22, so each voxel size must be from %g "
                      "to %g mm",
                      what, grid->dx, grid->dy, grid->dz, L, L / d[i], "xyz"[i], L / side, L * side);
  return 0;
}

int dbtr_grid_check(const dbtr_grid *grid, const dbtr_geom *g, const char *what) {
  size_t n;
  if (grid->nx == 0 || grid->ny == 0 || grid->nz == 0)
    return dbtr_err(DBTR_EINVAL, "%s: volume dims %zu x %zu x %zu: every dim must be positive", what, grid->nx,
                    grid->ny, grid->nz);
  if (grid->nx > DBTR_MAX_SIDE || grid->ny > DBTR_MAX_SIDE || grid->nz > (1u << 30))
    return dbtr_err(DBTR_EOVERFLOW, "%s: volume dims %zu x %zu x %zu: x and y must be at most %u, z at most 2^30",
                    what, grid->nx, grid->ny, grid->nz, DBTR_MAX_SIDE);
  int rc = dbtr_grid_count(grid, &n);
  if (rc) return rc;
  double d[3] = {grid->dx, grid->dy, grid->dz};
  for (size_t i = 0; i < 3; i++)
    if (!(isfinite(d[i]) && d[i] > 0.0))
      return dbtr_err(DBTR_EINVAL, "%s: voxel size %g x %g x %g mm: each must be positive and finite", what,
                      grid->dx, grid->dy, grid->dz);
  if (!finite3(grid->origin)) return dbtr_err(DBTR_EINVAL, "%s: volume origin is not finite", what);
  if (!g) return 0;
  /* Printed with %g: 1e300 in 6 characters, not 300 digits, and a bottom 1 nm below the
   * detector as -1e-06, not as -0.00. */
  double ztop = grid->origin[2] + grid->dz * ((double)grid->nz - 0.5);
  double zbot = grid->origin[2] - 0.5 * grid->dz;
  int seen = 0;
  for (size_t k = 0; k < g->n_views; k++) {
    double sz = g->source[3 * k + 2], dz0 = g->detector_center[3 * k + 2];
    if (!(ztop < sz))
      return dbtr_err(DBTR_EGEOM, "%s: the volume top (z = %g mm) is not below the source of view %zu (z = %g mm)",
                      what, ztop, k, sz);
    if (!(zbot > dz0 - 1e-9 || dz0 > sz))
      return dbtr_err(DBTR_EGEOM, "%s: the volume bottom (z = %g mm) lies below the detector of view %zu (z = %g mm)",
                      what, zbot, k, dz0);
    /* Field of view: does the ray to the detector centre cross the grid's mid slice
     * inside the grid's xy extent, or any corner ray? Checking the detector's 4 corners
     * and centre against the grid's xy box at the mid slice is enough for a verdict of
     * "at least partly seen". */
    double zmid = grid->origin[2] + 0.5 * grid->dz * (double)(grid->nz - 1);
    double x0 = grid->origin[0] - 0.5 * grid->dx, x1 = x0 + grid->dx * (double)grid->nx;
    double y0 = grid->origin[1] - 0.5 * grid->dy, y1 = y0 + grid->dy * (double)grid->ny;
    double lo[2] = {HUGE_VAL, HUGE_VAL}, hi[2] = {-HUGE_VAL, -HUGE_VAL};
    double rows[2] = {-0.5, (double)g->n_rows - 0.5}, cols[2] = {-0.5, (double)g->n_cols - 0.5};
    const double *s = g->source + 3 * k;
    for (int a = 0; a < 2; a++)
      for (int b = 0; b < 2; b++) {
        double p[3];
        dbtr_geom_pixel_center(g, k, rows[a], cols[b], p);
        double t = (zmid - s[2]) / (p[2] - s[2]);
        for (int i = 0; i < 2; i++) {
          double q = s[i] + t * (p[i] - s[i]);
          lo[i] = fmin(lo[i], q);
          hi[i] = fmax(hi[i], q);
        }
      }
    if (lo[0] < x1 && hi[0] > x0 && lo[1] < y1 && hi[1] > y0) seen = 1;
  }
  if (!seen)
    return dbtr_err(DBTR_EGEOM, "%s: the volume grid lies outside the field of view of every view", what);
  /* After the placement, whose refusals say more about a misplaced grid (an origin 1e300 mm
   * away) than the scale would. */
  return check_voxel_scale(grid, g, what);
}
