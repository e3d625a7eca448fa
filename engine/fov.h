/* engine/fov.h: the field of view: which voxels of the grid some ray of the scan reaches.
 * ML-EM leaves a voxel no ray reaches at its start value (both its denominators are 0:
 * docs/ARCHITECTURE.md, Zero denominators), a constant band at the edge of the upper slices;
 * the outputs write it as 0 instead (docs/volume-format.md, "The field of view").
 *
 * The decision is made once, on the host, by the CPU reference in the run's precision, and
 * then applied to whatever backend computed the volume, so it is the same for the CPU and every
 * GPU mode of that precision, and the match modes stay bitwise the CPU's. Its definition: a
 * voxel is unseen iff the back projection of ones, A^T 1, is exactly 0 there. A^T 1 sums
 * weights >= 0 from +0, so it is 0 exactly where every ray's weight on the voxel is, which is
 * where ML-EM's updates cannot move it. */
#ifndef DBTR_ENGINE_FOV_H
#define DBTR_ENGINE_FOV_H

#include <stddef.h>

#include "include/dbtr.h"

/* mask receives (nz, ny, nx) bytes, x fastest: 1 where a ray reaches the voxel, 0 where none
 * does, and *n_unseen the 0s. The work takes a CPU projector of precision p on threads (0:
 * all) and n_proj + n_vox elements of p, freed before it returns (dbtr_fov_bytes). */
int dbtr_fov_mask(const dbtr_geom *g, const dbtr_grid *grid, dbtr_precision p, int threads, unsigned char *mask,
                  size_t *n_unseen);
/* The host memory dbtr_fov_mask takes while it runs, beside the mask. */
double dbtr_fov_bytes(const dbtr_geom *g, const dbtr_grid *grid, dbtr_precision p);
/* Sets to 0 the voxels of vol (n_vox elements of es bytes: float, double or double-double)
 * that mask says no ray reaches. */
void dbtr_fov_apply(const unsigned char *mask, size_t n_vox, size_t es, void *vol);

#endif
