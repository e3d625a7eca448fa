/* recon/cpu.h: the CPU reference projectors, multi-threaded, in float and double.
 *
 * Every output element (a ray sum, a voxel gather) is computed by one thread in a fixed
 * order, so results are bitwise identical for any thread count. The arithmetic is
 * recon/proj_impl.h, the same the GPU kernels run. The projector (dbtr_cpu_projector_create,
 * dbtr_cpu_forward, dbtr_cpu_back) is public (include/dbtr.h); the backend is in
 * recon/backend.h. */
#ifndef DBTR_CPU_H
#define DBTR_CPU_H

#include <stddef.h>

#include "include/dbtr.h"
#include "recon/backend.h"
#include "recon/geom.h"

/* Bytes a CPU backend (dbtr_cpu_backend_create) allocates for geometry g and grid in
 * precision p, at most: the ray records (4 per pixel, of one view at a time where the views
 * are separable) and lengths, the data, i0, forward projections and two pixel terms, the
 * volume, and the separable tables (recon/cpu_impl.h, backend_create and sep_init); the
 * footprints and per-row sums are small beside them. For the up-front memory check. */
double dbtr_cpu_backend_bytes(dbtr_precision p, const dbtr_geom *g, const dbtr_grid *grid);
/* Of those, the bytes of a CPU projector alone (dbtr_cpu_projector_create): the ray records,
 * path lengths and separable tables, at most. Whether the records are made one view at a
 * time depends on the grid's voxel size and origin; where they are not known yet
 * (grid_known 0: only the dims are), every view's records are counted. */
double dbtr_cpu_projector_bytes(dbtr_precision p, const dbtr_geom *g, const dbtr_grid *grid, int grid_known);

/* Where every view of p is separable (recon/separable.h): mask (n_vox bytes) = 1 for the voxels
 * that dbtr_cpu_back of all ones makes nonzero, 0 for the others, read off the separable tables
 * (recon/cpu_impl.h, reached_sep) in a small part of a back projection's time; 0 on success.
 * Where a view is not separable: 1, and mask untouched (the caller back-projects ones). */
int dbtr_cpu_projector_reached(const dbtr_cpu_projector *p, unsigned char *mask);

/* Threads the CPU code will use for a request (0 = all). */
int dbtr_cpu_threads(int requested);

#endif
