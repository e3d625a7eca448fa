/* recon/geom.h: the one geometry convention of dbtr (docs/ARCHITECTURE.md, Geometry).
 *
 * All lengths in mm. x along the chest wall, y from the chest wall toward the nipple, z up
 * from the detector toward the source. Each view is four 3-vectors in the ASTRA cone_vec
 * convention: source, detector centre, u (step from column c to c+1) and v (step from row
 * r to r+1). The centre of pixel (r, c) is
 *   detector_center + (c - (n_cols-1)/2) u + (r - (n_rows-1)/2) v.
 * The volume is nx*ny*nz voxels of dx*dy*dz whose voxel (0,0,0) centre is at origin;
 * arrays are C order (nz, ny, nx), x fastest; projections are (n_views, n_rows, n_cols). */
#ifndef DBTR_GEOM_H
#define DBTR_GEOM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  size_t nx, ny, nz;     /* voxels along x, y, z */
  double dx, dy, dz;     /* voxel size, mm */
  double origin[3];      /* centre of voxel (0,0,0), mm */
} dbtr_grid;

typedef struct {
  size_t n_views, n_rows, n_cols;
  double *source;          /* (n_views, 3), mm */
  double *detector_center; /* (n_views, 3), mm */
  double *detector_u;      /* (n_views, 3), mm per column */
  double *detector_v;      /* (n_views, 3), mm per row */
} dbtr_geom;

/* Allocates the four (n_views, 3) arrays, zeroed. Sizes are overflow checked. */
int dbtr_geom_init(dbtr_geom *g, size_t n_views, size_t n_rows, size_t n_cols);
/* Frees and zeroes; safe to call twice or on a zeroed struct. */
void dbtr_geom_free(dbtr_geom *g);
/* Deep copy into an uninitialised dst. */
int dbtr_geom_copy(dbtr_geom *dst, const dbtr_geom *src);
/* Copies the views listed in idx (n of them) into an uninitialised dst. */
int dbtr_geom_select(dbtr_geom *dst, const dbtr_geom *src, const size_t *idx, size_t n);

/* Centre of pixel (r, c) of view k, mm. */
void dbtr_geom_pixel_center(const dbtr_geom *g, size_t k, double r, double c, double out[3]);

/* Elements in one projection stack, overflow checked. */
int dbtr_geom_proj_count(const dbtr_geom *g, size_t *out);
/* Voxels in the grid, overflow checked. */
int dbtr_grid_count(const dbtr_grid *grid, size_t *out);

/* The largest detector side (rows, columns) and grid side (x, y) in pixels and voxels:
 * 2^22 = 4194304 (the projectors' floor_int, recon/proj_impl.h). */
#define DBTR_MAX_SIDE (1u << 22)

/* Checks a geometry before any projector sees it: at most DBTR_MAX_SIDE pixels a side,
 * finite vectors, non-zero u and v that are not parallel, the source off the detector
 * plane, and every ray within 45 deg of the slice normal (z). `what` names the source of
 * the geometry in the message. */
int dbtr_geom_check(const dbtr_geom *g, const char *what);
/* Checks a grid: positive finite voxel sizes, dims from 1 to DBTR_MAX_SIDE (x, y) and 2^30
 * (z), a finite origin, the voxel count overflow free, every slice below every source, and
 * the grid seen by the detector of at least one view. */
int dbtr_grid_check(const dbtr_grid *grid, const dbtr_geom *g, const char *what);

#ifdef __cplusplus
}
#endif

#endif
