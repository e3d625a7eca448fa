/* recon/backend.h: the interface every reconstruction backend implements (the CPU
 * reference in recon/cpu.c, the CUDA modes in kernels/). The ML-EM driver (recon/mlem.c)
 * owns the iteration loop and calls a backend one ordered subset at a time, so the
 * schedule, the callbacks and the data fit are written once. Which backend computes a row of
 * the mode table is the engine's choice (engine/backends.h): recon/ names no GPU. dbtr_algo
 * and dbtr_precision are public (include/dbtr.h). */
#ifndef DBTR_BACKEND_H
#define DBTR_BACKEND_H

#include <stddef.h>

#include "include/dbtr.h"
#include "recon/geom.h"
#include "recon/modes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a backend reconstructs. The pointers must outlive the backend. */
typedef struct {
  const dbtr_geom *geom;
  const dbtr_grid *grid;
  dbtr_algo algo;
  size_t n_subsets;
  const size_t *subset_views; /* n_views entries: the views of subset 0, then subset 1, ... */
  const size_t *subset_start; /* n_subsets + 1 offsets into subset_views */
  int threads;                /* CPU threads; 0 means all the machine has */
  size_t gpu_memory;          /* bytes a GPU backend may take on each GPU; 0: what the GPU has free, less a margin */
  int gpus;                   /* GPUs a GPU backend spreads over: 0 or 1: one; n: devices gpu_first .. gpu_first + n - 1; -1: all */
  int gpu_first;              /* the first of them: 0, or a worker's own GPU (engine/batch.h) */
  int gpu_share;              /* 1: every one of those GPUs is device 0 (tests: the paths of several GPUs on one) */
  /* 1: a projector (engine/projector.c): no data and no ML-EM state, only the projections of
   * `project`, on one GPU; algo and the schedule are ignored. */
  int projector;
} dbtr_problem;

/* The most GPUs one backend spreads over. */
enum { DBTR_GPUS_MAX = 16 };

/* How far a subset has come, for a person waiting on a long one. A backend that can tell
 * calls fn from the thread that called subset, with the fraction of the subset done (0 to
 * 1), as often as it likes; one that cannot ignores it. It changes nothing the subset
 * computes. */
typedef struct {
  void (*fn)(void *user, double fraction);
  void *user;
} dbtr_subset_watch;

/* The room for a backend's memory line (dbtr_backend.memory), its end included. */
#define DBTR_MEMORY_LINE 512

typedef struct dbtr_backend dbtr_backend;
struct dbtr_backend {
  char name[64];            /* "cpu-float", "gpu:cpu-match", ... */
  dbtr_mode mode;           /* the row of the mode table it computes (engine/backends.c sets it) */
  /* How a GPU backend fits the memory it may take, in words (kernels/gpu.h); "" on the CPU:
   * "GPU memory: 23.26 GiB needed, 16.00 GiB allowed (--gpu-memory): ray records made
   * again for 5 views at a time, 15.91 GiB used" */
  char memory[DBTR_MEMORY_LINE];
  dbtr_precision precision; /* the element type T of every buffer below */
  /* Takes the data, y (n_proj elements of T: counts or line integrals) and i0 (n_proj of T,
   * NULL for emission), and starts the volume with every voxel fill rounded to T, made by
   * the backend itself (on the GPU, no volume crosses the bus). */
  int (*load)(dbtr_backend *b, const void *y, const void *i0, double fill);
  /* One ordered-subset step on subset s: forward-project its views, form the pixel
   * terms, back-project and update the volume. Adds the subset's data-fit terms
   * (recon/fit.h) to *fit. */
  int (*subset)(dbtr_backend *b, size_t s, double *fit);
  int (*get_volume)(dbtr_backend *b, void *out);       /* n_vox of T */
  int (*set_volume)(dbtr_backend *b, const void *in);  /* n_vox of T */
  int (*get_projections)(dbtr_backend *b, void *out);  /* A mu of every view as last computed, n_proj of T */
  /* The volume, or with proj the projections, where the backend keeps them in host memory
   * (the CPU's): n_vox or n_proj of T, to read only, until the next call into the backend.
   * NULL on the GPU, whose state the two above copy out. A caller that only reads a state,
   * as dbtr validate recording its references does, needs no copy of its own then. */
  const void *(*host_state)(dbtr_backend *b, int proj);
  /* A projector's backend (dbtr_problem.projector) has this entry alone, and no ML-EM entries
   * above; other backends have it NULL. The plain projections of every view: out = A in (back
   * 0: in a volume, out the projections) or out = A^T in (back 1), of T. With device 0 both are
   * host memory; with device 1 both are the memory of the backend's GPU (the CPU backend
   * refuses), contiguous, read and written in place. Returns once out holds the result. */
  int (*project)(dbtr_backend *b, int back, const void *in, void *out, int device);
  void (*destroy)(dbtr_backend *b);
  void *impl;
  /* Set by the ML-EM driver for the duration of a subset when its caller watches progress
   * (recon/mlem.h); NULL otherwise. */
  const dbtr_subset_watch *watch;
};

/* Frees a backend; safe with NULL. */
void dbtr_backend_destroy(dbtr_backend **b);

int dbtr_cpu_backend_create(dbtr_backend **out, dbtr_precision precision, const dbtr_problem *prob);

#ifdef __cplusplus
}
#endif

#endif
