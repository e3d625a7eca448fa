/* kernels/gpu.h: what the CUDA backend offers beyond recon/backend.h: timing of its
 * kernels with CUDA events, for bench/. */
#ifndef DBTR_GPU_H
#define DBTR_GPU_H

#include "recon/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  double forward_ms;   /* forward projection of every view (with the pixel terms), median */
  double back_ms;      /* gather back projection of every view with the update, median */
  double iteration_ms; /* one full ML-EM iteration (all subsets, fit included), median */
  double bytes;        /* device memory the backend holds */
  int separable;       /* 1: the separable gather runs (recon/proj_impl.h), 0: the per-pixel one */
} dbtr_gpu_timing;

/* Times a GPU backend's kernels: warm-up, then `repeats` runs of each, CUDA events, medians.
 * The backend's volume changes (iterations run); reload it afterwards if it matters. */
int dbtr_gpu_benchmark(dbtr_backend *b, int repeats, dbtr_gpu_timing *out);

#ifdef __cplusplus
}
#endif

#endif
