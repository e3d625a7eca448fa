/* recon/geom.h: the one geometry convention of dbtr (docs/ARCHITECTURE.md, Geometry).
 *
 * All lengths in mm. x along the chest wall, y from the chest wall toward the nipple, z up
 * from the detector toward the source. Each view is four 3-vectors in the ASTRA cone_vec
 * convention: source, detector centre, u (step from column c to c+1) and v (step from row
 * r to r+1). The centre of pixel (r, c) is
 *   detector_center + (c - (n_cols-1)/2) u + (r - (n_rows-1)/2) v.
 * The volume is nx*ny*nz voxels of dx*dy*dz whose voxel (0,0,0) centre is at origin;
 * arrays are C order (nz, ny, nx), x fastest; projections are (n_views, n_rows, n_cols).
 * The types dbtr_geom and dbtr_grid and their init, free, count and check functions are
 * public (include/dbtr.h); this header adds what only the library uses. */
#ifndef DBTR_GEOM_H
#define DBTR_GEOM_H

#include <stddef.h>

#include "include/dbtr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Deep copy into an uninitialised dst. */
int dbtr_geom_copy(dbtr_geom *dst, const dbtr_geom *src);
/* Copies the views listed in idx (n of them) into an uninitialised dst. */
int dbtr_geom_select(dbtr_geom *dst, const dbtr_geom *src, const size_t *idx, size_t n);

/* Centre of pixel (r, c) of view k, mm. */
void dbtr_geom_pixel_center(const dbtr_geom *g, size_t k, double r, double c, double out[3]);

/* The largest detector side (rows, columns) and grid side (x, y) in pixels and voxels:
 * 2^22 = 4194304 (the projectors' floor_int, recon/proj_impl.h), which dbtr_geom_check and
 * dbtr_grid_check enforce. */
#define DBTR_MAX_SIDE (1u << 22)

#ifdef __cplusplus
}
#endif

#endif
