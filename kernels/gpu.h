/* kernels/gpu.h: what the CUDA backend offers beyond recon/backend.h: how it fits the
 * memory it may take, which gather it runs, and its phases one at a time, which bench/ times
 * (bench/gpu_timing.h). */
#ifndef DBTR_GPU_H
#define DBTR_GPU_H

#include "recon/backend.h"
#include "recon/data_terms.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a GPU backend fits its memory budget (docs/performance.md, "GPU memory"). Everything
 * lives in one arena. When all of it fits, the ray records of every view stay on the GPU;
 * otherwise they are made again for `batch` views at a time as each subset runs, which gives
 * the same bits, since each view's records are computed on their own. */
typedef struct {
  size_t need;        /* bytes with every view's ray records on the GPU */
  size_t need_min;    /* bytes with the ray records of one view at a time */
  size_t allowed;     /* what the backend may take */
  size_t used;        /* what it took: need, or the arena for batches of `batch` views */
  size_t batch;       /* views whose ray records are on the GPU at once; n_views: all */
  size_t n_views;
  size_t requested;   /* the budget asked for (--gpu-memory); 0: none */
  size_t free_bytes;  /* the GPU's free memory at set-up (capped, below) */
  size_t total_bytes; /* the GPU's memory */
  int capped;         /* 1: DBTR_GPU_MAX_BYTES capped free_bytes */
  int gpus;           /* the GPUs the backend spreads over; the sizes above are each one's (the
                       * largest, batch the smallest) */
  size_t one_gpu;     /* where the GPUs split the problem (each holds its bands of rows): the need of
                       * one GPU holding all of it; else 0 */
} dbtr_gpu_memory;

/* The CUDA backend computing GPU row `mode` of the mode table (recon/modes.def), or
 * DBTR_ENOGPU with the reason (no device, or a build without CUDA). engine/backends.c calls it
 * through its factory table. */
int dbtr_gpu_backend_create(dbtr_backend **out, dbtr_mode mode, const dbtr_problem *prob);

/* Pins a host buffer the caller keeps (cudaHostRegister), so that the copies of a GPU backend
 * to and from it run at the bus's speed and not through the runtime's staging buffers; for the
 * buffers a worker reuses scan after scan (engine/batch.c). 0, or DBTR_EGPU; a build without
 * CUDA pins nothing and returns 0. dbtr_gpu_host_unpin before the buffer is freed. */
int dbtr_gpu_host_pin(void *p, size_t bytes);
void dbtr_gpu_host_unpin(void *p);

/* The CUDA devices this machine has; 0 without (or in a build without CUDA). */
int dbtr_gpu_count(void);

/* How GPU backend b fits its memory (b->memory says it in words); DBTR_EINVAL for a
 * backend that is not a GPU one. */
int dbtr_gpu_memory_of(const dbtr_backend *b, dbtr_gpu_memory *out);

/* 1 where GPU backend b's gather runs over the separable tables (docs/ARCHITECTURE.md,
 * Separable views), 0 where it runs per pixel; DBTR_EINVAL for a backend that is not a GPU one. */
int dbtr_gpu_separable(const dbtr_backend *b);

/* One phase of an ML-EM subset over every view of GPU backend b, as bench/ times it. */
typedef enum {
  DBTR_GPU_PHASE_FORWARD = 0, /* the forward projection with the pixel terms and the data fit */
  DBTR_GPU_PHASE_GATHER = 1,  /* the gather back projection with the update (the volume changes) */
  /* On several GPUs, the two phases' exchange alone: each part's pixel terms and partial sums,
   * then its voxel rows, sent as the phases send them (to the parts that read them), with no
   * compute to hide behind (on one GPU, nothing) */
  DBTR_GPU_PHASE_EXCHANGE = 2
} dbtr_gpu_phase;

/* Runs one phase of b. Its launches are queued on the default stream of b's first GPU, which
 * the call leaves current (on several GPUs the others have finished theirs): a CUDA event
 * recorded after the call completes with the phase, and one recorded before it, on that GPU,
 * times it without the host's wait. cudaDeviceSynchronize waits for it. */
int dbtr_gpu_run_phase(dbtr_backend *b, dbtr_gpu_phase phase);

/* ---- Data in a GPU's memory (dbtr_recon_open_device, include/dbtr.h; kernels/device_data.cu).
 * Each gives what its host counterpart gives of the same values, bit for bit: the data never
 * cross the bus; only a few results (an index, a value, the blocks' sums) come back. */

/* The first of the n elements of array name, v (of type, float or double, in the memory of
 * device: else DBTR_EINVAL naming it), that dbtr_value_bad refuses: *at its index (n where none
 * is) and *x its value. */
int dbtr_gpu_first_bad(int device, const char *name, const void *v, dbtr_precision type, size_t n, int counts,
                       int positive, size_t *at, double *x);

/* The blocks' sums of recon/data_terms.h of d's n elements (npix a view; i0 laid out as shape
 * says) into blocks, host memory of 2 ceil(n / DBTR_DATA_BLOCK) doubles. */
int dbtr_gpu_data_sums(const dbtr_device_data *d, dbtr_i0_shape shape, dbtr_data_kind kind, size_t n, size_t npix,
                       double *blocks);

/* GPU backend b (of ML-EM, on d's device) takes d's data as its load takes the host's (recon/
 * backend.h): converted on the device into its type, the line integrals made of counts for kind
 * DBTR_DATA_COUNTS_AS_LINES; and the uniform start volume fill. */
int dbtr_gpu_load_device(dbtr_backend *b, const dbtr_device_data *d, dbtr_i0_shape shape, dbtr_data_kind kind,
                         double fill);

/* GPU backend b's volume into out (n_vox of its type, in the memory of its first GPU), with
 * the voxels fov marks 0 (host memory, engine/fov.h) set to 0. */
int dbtr_gpu_volume_device(dbtr_backend *b, void *out, const unsigned char *fov);

#ifdef __cplusplus
}
#endif

#endif
