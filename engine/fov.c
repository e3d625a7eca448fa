/* engine/fov.c: the field of view (engine/fov.h), from the CPU reference's back projection of
 * ones: read off its separable tables where every view is separable (recon/cpu.h,
 * dbtr_cpu_projector_reached), else computed. */
#include "engine/fov.h"

#include <stdlib.h>
#include <string.h>

#include "recon/cpu.h"
#include "recon/error.h"
#include "recon/mlem.h"

double dbtr_fov_bytes(const dbtr_geom *g, const dbtr_grid *grid, dbtr_precision p) {
  double n_proj = (double)g->n_views * (double)g->n_rows * (double)g->n_cols;
  double n_vox = (double)grid->nx * (double)grid->ny * (double)grid->nz;
  return (double)dbtr_precision_size(p) * (n_proj + n_vox) + dbtr_cpu_projector_bytes(p, g, grid, 1);
}

/* mask from the back projection of ones through pr, computed (a view is not separable). */
static int mask_of_back(dbtr_cpu_projector *pr, dbtr_precision p, size_t n_proj, size_t n_vox, unsigned char *mask) {
  size_t es = dbtr_precision_size(p);
  unsigned char *ones = NULL, *back = NULL;
  int rc = dbtr_alloc((void **)&ones, n_proj, es, "field of view: projections");
  if (!rc) rc = dbtr_alloc((void **)&back, n_vox, es, "field of view: volume");
  if (!rc) {
    /* 1 in p, the way the driver converts data (dd: 1 + 0), copied to every pixel. */
    const double one = 1.0;
    dbtr_convert_from_double(p, &one, 1, ones);
    for (size_t i = 1; i < n_proj; i++) memcpy(ones + i * es, ones, es);
    rc = dbtr_cpu_back(pr, ones, back);
  }
  /* A double-double is 0 exactly when its high part is (normalized: hi = fl(hi + lo)). */
  for (size_t i = 0; !rc && i < n_vox; i++) {
    const void *e = back + i * es;
    mask[i] = (p == DBTR_PREC_FLOAT ? (double)*(const float *)e : *(const double *)e) != 0.0;
  }
  free(ones);
  free(back);
  return rc;
}

int dbtr_fov_mask(const dbtr_geom *g, const dbtr_grid *grid, dbtr_precision p, int threads, unsigned char *mask,
                  size_t *n_unseen) {
  size_t n_proj, n_vox;
  int rc = dbtr_geom_proj_count(g, &n_proj);
  if (!rc) rc = dbtr_grid_count(grid, &n_vox);
  dbtr_cpu_projector *pr = NULL;
  if (!rc) rc = dbtr_cpu_projector_create(&pr, g, grid, p, threads);
  /* Separable views (every preset): read off the tables; else computed. */
  if (!rc && (rc = dbtr_cpu_projector_reached(pr, mask)) > 0) rc = mask_of_back(pr, p, n_proj, n_vox, mask);
  dbtr_cpu_projector_destroy(&pr);
  if (rc) return rc;
  size_t unseen = 0;
  for (size_t i = 0; i < n_vox; i++) unseen += !mask[i];
  *n_unseen = unseen;
  return 0;
}

void dbtr_fov_apply(const unsigned char *mask, size_t n_vox, size_t es, void *vol) {
  unsigned char *v = vol;
  for (size_t i = 0; i < n_vox; i++)
    if (!mask[i]) memset(v + i * es, 0, es);
}
