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

/* Threads the CPU code will use for a request (0 = all). */
int dbtr_cpu_threads(int requested);

#endif
