/* bench/gpu_timing.h: times a GPU backend's phases with CUDA events, for bench_modes: the
 * forward projection, the gather and a whole iteration, each the median of a few runs after a
 * warm-up. The backend runs each phase (kernels/gpu.h, dbtr_gpu_run_phase); the timing is
 * bench/'s. */
#ifndef DBTR_BENCH_GPU_TIMING_H
#define DBTR_BENCH_GPU_TIMING_H

#include "kernels/gpu.h"
#include "recon/backend.h"

typedef struct {
  double forward_ms;   /* forward projection of every view (with the pixel terms), median */
  double back_ms;      /* gather back projection of every view with the update, median */
  double iteration_ms; /* one full ML-EM iteration (all subsets, fit included), median */
  double exchange_ms;  /* on several GPUs, the exchange of a forward projection and a gather alone
                          (DBTR_GPU_PHASE_EXCHANGE), median; 0 on one */
  double bytes;        /* device memory the backend holds */
  int separable;       /* 1: the separable gather runs (docs/ARCHITECTURE.md), 0: the per-pixel one */
} dbtr_gpu_timing;

/* Times GPU backend b, made for problem prob: warm-up, then `repeats` runs of each phase, CUDA
 * events on b's first GPU, medians. The backend's volume changes (iterations run); reload it
 * afterwards if it matters. */
int dbtr_gpu_benchmark(dbtr_backend *b, const dbtr_problem *prob, int repeats, dbtr_gpu_timing *out);

#endif
