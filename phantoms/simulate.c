/* phantoms/simulate.c: phantom -> exact line integrals -> Poisson counts -> scan. */
#include "phantoms/simulate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recon/error.h"

/* The line integrals of every view, one view at a time so the caller hears between views.
 * A view's rays depend on its own four vectors only, so a geometry of that one view gives
 * the bits all views at once would. */
static int project_views(const dbtr_simulate_opts *o, const dbtr_phantom *ph, const dbtr_geom *g, double *line) {
  size_t n_pix = g->n_rows * g->n_cols;
  for (size_t k = 0; k < g->n_views; k++) {
    dbtr_geom one = *g;
    one.n_views = 1;
    one.source += 3 * k;
    one.detector_center += 3 * k;
    one.detector_u += 3 * k;
    one.detector_v += 3 * k;
    int rc = dbtr_phantom_project(ph, &one, o->supersample, line + k * n_pix);
    if (rc) return rc;
    if (o->advance) o->advance(o->user, DBTR_SIMULATE_SCANNED, (double)(k + 1) / (double)g->n_views);
  }
  return 0;
}

/* The ground truth (3^3 points a voxel), a slice at a time for the same reason. */
static int voxelize_slices(const dbtr_simulate_opts *o, const dbtr_phantom *ph, float *truth) {
  const dbtr_grid *grid = &o->system->grid;
  for (size_t z = 0; z < grid->nz; z++) {
    int rc = dbtr_phantom_voxelize_slices(ph, grid, 3, z, z + 1, truth + z * grid->ny * grid->nx);
    if (rc) return rc;
    if (o->advance) o->advance(o->user, DBTR_SIMULATE_VOXELISED, (double)(z + 1) / (double)grid->nz);
  }
  return 0;
}

int dbtr_simulate(const dbtr_simulate_opts *o, dbtr_scan *scan, float **truth) {
  memset(scan, 0, sizeof *scan);
  if (truth) *truth = NULL;
  if (!o->system) return dbtr_err(DBTR_EINVAL, "simulate: no system preset given");
  dbtr_phantom ph = {0};
  double *line = NULL;
  size_t n = 0, n_vox = 0;
  int rc = dbtr_system_geometry(o->system, &scan->geom);
  if (!rc) rc = dbtr_geom_proj_count(&scan->geom, &n);
  if (!rc) rc = dbtr_grid_count(&o->system->grid, &n_vox);
  if (!rc) rc = dbtr_phantom_make(&ph, o->kind, &o->system->grid, o->seed);
  if (!rc) rc = dbtr_alloc((void **)&line, n, sizeof(double), "line integrals");
  if (!rc) rc = project_views(o, &ph, &scan->geom, line);
  if (rc) goto fail;
  scan->has_grid = 1;
  scan->grid = o->system->grid;
  double dose = o->dose > 0.0 ? o->dose : o->system->i0;
  if ((rc = dbtr_simulate_store(scan, &line, n, o->line_integrals ? 0.0 : dose, o->seed))) goto fail;
  if (o->progress) o->progress(o->user, DBTR_SIMULATE_SCANNED, &ph);
  if (truth) {
    if ((rc = dbtr_alloc((void **)truth, n_vox, sizeof(float), "ground truth")) || (rc = voxelize_slices(o, &ph, *truth)))
      goto fail;
    if (o->progress) o->progress(o->user, DBTR_SIMULATE_VOXELISED, &ph);
  }
  free(line);
  if (o->phantom)
    *o->phantom = ph;
  else
    dbtr_phantom_free(&ph);
  return 0;
fail:
  free(line);
  dbtr_phantom_free(&ph);
  dbtr_scan_free(scan);
  if (truth) {
    free(*truth);
    *truth = NULL;
  }
  return rc;
}

int dbtr_simulate_store(dbtr_scan *scan, double **line, size_t n, double i0, uint64_t seed) {
  if (i0 <= 0.0) {
    scan->quantity = DBTR_QUANTITY_LINE_INTEGRAL;
    scan->proj = *line;
    *line = NULL;
    return 0;
  }
  scan->quantity = DBTR_QUANTITY_COUNTS;
  double *i0s = NULL;
  int rc;
  if ((rc = dbtr_alloc((void **)&i0s, n, sizeof(double), "i0")) ||
      (rc = dbtr_alloc((void **)&scan->proj, n, sizeof(double), "counts")) ||
      (rc = dbtr_alloc((void **)&scan->i0, 1, sizeof(double), "i0"))) {
    free(i0s);
    return rc;
  }
  for (size_t i = 0; i < n; i++) i0s[i] = i0;
  scan->i0[0] = i0;
  scan->i0_shape = DBTR_I0_SCALAR;
  rc = dbtr_poisson_counts(*line, i0s, n, seed, scan->proj);
  free(i0s);
  return rc;
}

/* The largest |value| of the volume and where it is, for the refusal below. */
static size_t largest_voxel(const float *vol, size_t n) {
  size_t at = 0;
  for (size_t i = 1; i < n; i++)
    if (fabsf(vol[i]) > fabsf(vol[at])) at = i;
  return at;
}

int dbtr_simulate_check_range(const char *what, const dbtr_grid *grid, const float *vol, const dbtr_geom *g,
                              const double *line, double i0, double limit, const char *type) {
  size_t n = g->n_views * g->n_rows * g->n_cols, i = 0;
  /* A count i0 exp(-l) is at most limit where -l <= log(limit / i0); a large l only makes
   * it 0. A line integral is stored as it is. */
  const double lowest = i0 > 0.0 ? log(i0) - log(limit) : -limit, highest = i0 > 0.0 ? HUGE_VAL : limit;
  while (i < n && line[i] >= lowest && line[i] <= highest) i++;
  if (i == n) return 0;
  size_t pix = g->n_rows * g->n_cols, v = largest_voxel(vol, grid->nx * grid->ny * grid->nz);
  size_t nxy = grid->nx * grid->ny;
  char value[160];
  if (i0 > 0.0)
    snprintf(value, sizeof value, "gives counts i0 exp(-l) = %g x exp(%g), beyond", i0, -line[i]);
  else
    snprintf(value, sizeof value, "is %g, beyond", line[i]);
  return dbtr_err(DBTR_EFORMAT,
                  "%s: the line integral of view %zu, row %zu, column %zu %s what %s holds (%g); the volume's largest "
                  "value is %g at voxel (%zu, %zu, %zu), where attenuation coefficients in 1/mm are below about 10",
                  what, i / pix, i % pix / g->n_cols, i % g->n_cols, value, type, limit, (double)vol[v], v % grid->nx,
                  v % nxy / grid->nx, v / nxy);
}
