/* app/simulate.c: phantom -> exact line integrals -> Poisson counts -> scan. */
#include "app/simulate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli.h"
#include "recon/error.h"

int app_simulate(const char *cmd, const app_sim_opts *o, dbtr_scan *scan, float **truth) {
  memset(scan, 0, sizeof *scan);
  if (truth) *truth = NULL;
  dbtr_phantom ph = {0};
  double *line = NULL;
  size_t n = 0, n_vox = 0;
  double t0 = cli_now();
  int rc = dbtr_system_geometry(o->system, &scan->geom);
  if (!rc) rc = dbtr_geom_proj_count(&scan->geom, &n);
  if (!rc) rc = dbtr_grid_count(&o->system->grid, &n_vox);
  if (!rc) rc = dbtr_phantom_make(&ph, o->kind, &o->system->grid, o->seed);
  if (!rc) rc = dbtr_alloc((void **)&line, n, sizeof(double), "line integrals");
  if (!rc) rc = dbtr_phantom_project(&ph, &scan->geom, o->supersample, line);
  if (rc) goto fail;
  scan->has_grid = 1;
  scan->grid = o->system->grid;
  double dose = o->dose > 0.0 ? o->dose : o->system->i0;
  if ((rc = app_store_projections(scan, &line, n, o->line_integrals ? 0.0 : dose, o->seed))) goto fail;
  if (!o->quiet)
    fprintf(stderr, "dbtr %s: %s phantom on the %s system: %zu views of %zu x %zu pixels, %s (%.2f s)\n", cmd,
            ph.name, o->system->name, scan->geom.n_views, scan->geom.n_cols, scan->geom.n_rows,
            o->line_integrals ? "noiseless line integrals" : "Poisson counts", cli_now() - t0);
  if (truth) {
    t0 = cli_now();
    if ((rc = dbtr_alloc((void **)truth, n_vox, sizeof(float), "ground truth")) ||
        (rc = dbtr_phantom_voxelize(&ph, &o->system->grid, 3, *truth)))
      goto fail;
    if (!o->quiet) fprintf(stderr, "dbtr %s: ground truth voxelised (%.2f s)\n", cmd, cli_now() - t0);
  }
  free(line);
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
  return cli_fail(cmd, rc);
}

int app_store_projections(dbtr_scan *scan, double **line, size_t n, double i0, uint64_t seed) {
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
