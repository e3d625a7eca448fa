/* bench/gpu_timing.c: CUDA-event timing of a GPU backend's phases (bench/gpu_timing.h). Each
 * run records an event, queues the phase (kernels/gpu.h: the backend leaves its first GPU
 * current, where the events are), records a second event and waits for it; the time between
 * the two is the GPU's, without the host's wait. */
#include "bench/gpu_timing.h"

#include <cuda_runtime.h>
#include <stdlib.h>

#include "recon/error.h"

enum { PHASE_ITERATION = -1 }; /* none of dbtr_gpu_phase's values: every subset of one iteration */

/* One run of phase `what`: a dbtr_gpu_phase or PHASE_ITERATION. */
static int run(dbtr_backend *b, const dbtr_problem *prob, int what) {
  if (what != PHASE_ITERATION) return dbtr_gpu_run_phase(b, (dbtr_gpu_phase)what);
  double fit = 0.0;
  int rc = 0;
  for (size_t sub = 0; sub < prob->n_subsets && !rc; sub++) rc = b->subset(b, sub, &fit);
  return rc;
}

static int median_ms(dbtr_backend *b, const dbtr_problem *prob, int repeats, int what, double *out) {
  cudaEvent_t a, z;
  if (cudaEventCreate(&a) != cudaSuccess) return dbtr_err(DBTR_EGPU, "benchmark: no CUDA event");
  if (cudaEventCreate(&z) != cudaSuccess) {
    cudaEventDestroy(a);
    return dbtr_err(DBTR_EGPU, "benchmark: no CUDA event");
  }
  double *t = malloc((size_t)repeats * sizeof(double));
  int rc = t ? 0 : dbtr_err(DBTR_ENOMEM, "benchmark: out of memory");
  for (int r = 0; r < repeats && !rc; r++) {
    cudaEventRecord(a, 0);
    rc = run(b, prob, what);
    cudaEventRecord(z, 0);
    cudaEventSynchronize(z);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, a, z);
    if (!rc) t[r] = (double)ms;
  }
  if (!rc) {
    for (int i = 1; i < repeats; i++)
      for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
        double u = t[j];
        t[j] = t[j - 1];
        t[j - 1] = u;
      }
    *out = t[repeats / 2];
  }
  free(t);
  cudaEventDestroy(a);
  cudaEventDestroy(z);
  cudaError_t e = cudaGetLastError();
  if (!rc && e != cudaSuccess) rc = dbtr_err(DBTR_EGPU, "benchmark: %s", cudaGetErrorString(e));
  return rc;
}

int dbtr_gpu_benchmark(dbtr_backend *b, const dbtr_problem *prob, int repeats, dbtr_gpu_timing *out) {
  dbtr_gpu_memory mem;
  if (repeats < 1) repeats = 1;
  int rc = dbtr_gpu_memory_of(b, &mem);
  if (rc) return rc;
  /* Warm-up: module load and first-touch costs stay out of the numbers. It also leaves b's
   * first GPU current, where the events are then made. */
  if ((rc = run(b, prob, PHASE_ITERATION))) return rc;
  if ((rc = median_ms(b, prob, repeats, DBTR_GPU_PHASE_FORWARD, &out->forward_ms))) return rc;
  if ((rc = median_ms(b, prob, repeats, DBTR_GPU_PHASE_GATHER, &out->back_ms))) return rc;
  if ((rc = median_ms(b, prob, repeats, PHASE_ITERATION, &out->iteration_ms))) return rc;
  out->exchange_ms = 0.0;
  if (mem.gpus > 1 && (rc = median_ms(b, prob, repeats, DBTR_GPU_PHASE_EXCHANGE, &out->exchange_ms))) return rc;
  out->bytes = (double)mem.used;
  if ((rc = dbtr_gpu_separable(b)) < 0) return rc;
  out->separable = rc;
  return 0;
}
