/* kernels/gpu_backend.cu: choosing a device and a mode, and the device memory arena that
 * owns every buffer of a GPU backend. */
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda_util.h"
#include "kernels/gpu_internal.h"

void dbtr__gpu_arena_plan(dbtr__gpu_arena *a, void **slot, size_t n, size_t elem) {
  size_t bytes;
  if (a->n >= DBTR__ARENA_MAX || dbtr_size_mul(n, elem, &bytes, "GPU buffer") || bytes > ((size_t)1 << 50) ||
      a->size > ((size_t)1 << 50)) {
    dbtr_err_clear();
    a->overflow = 1;
    return;
  }
  size_t off = (a->size + 255) & ~(size_t)255;
  a->slots[a->n] = slot;
  a->offsets[a->n] = off;
  a->n++;
  a->size = off + bytes;
}

size_t dbtr__gpu_arena_bytes(const dbtr__gpu_arena *a) { return a->overflow ? SIZE_MAX : a->size; }

static const double gib = 1024.0 * 1024.0 * 1024.0;

int dbtr__gpu_budget(size_t request, dbtr_gpu_memory *mem) {
  size_t free_b = 0, total_b = 0;
  DBTR_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
  mem->capped = 0;
  const char *cap = getenv("DBTR_GPU_MAX_BYTES");
  if (cap && *cap) {
    unsigned long long c = strtoull(cap, NULL, 10);
    if (c < free_b) {
      free_b = (size_t)c;
      mem->capped = 1;
    }
  }
  mem->free_bytes = free_b;
  mem->total_bytes = total_b;
  mem->requested = request;
  mem->allowed = free_b > DBTR__GPU_MARGIN ? free_b - DBTR__GPU_MARGIN : 0;
  if (request && request < mem->allowed) mem->allowed = request;
  return 0;
}

/* Where the budget comes from, after "X GiB allowed". */
static void budget_source(const dbtr_gpu_memory *m, char *out, size_t len) {
  if (m->requested && m->requested <= m->allowed)
    snprintf(out, len, "(--gpu-memory)");
  else
    snprintf(out, len, "(the GPU has %.3f GiB free%s of %.2f GiB, less %.2f GiB for the CUDA runtime)",
             (double)m->free_bytes / gib, m->capped ? ", capped by DBTR_GPU_MAX_BYTES," : "", (double)m->total_bytes / gib,
             (double)DBTR__GPU_MARGIN / gib);
}

int dbtr__gpu_no_room(const dbtr_gpu_memory *m) {
  char src[256];
  budget_source(m, src, sizeof src);
  if (m->need == SIZE_MAX) return dbtr_err(DBTR_EOVERFLOW, "GPU memory: the problem's buffers overflow the address space");
  /* Batches save nothing where their carried sums (the per-pixel gather's) outweigh the ray records. */
  char batched[96] = "";
  if (m->need_min < m->need)
    snprintf(batched, sizeof batched, " (%.3f GiB with one view's ray records at a time)", (double)m->need_min / gib);
  return dbtr_err(DBTR_EGPU, "GPU memory: the reconstruction needs %.3f GiB%s, %.3f GiB allowed %s",
                  (double)m->need / gib, batched, (double)m->allowed / gib, src);
}

void dbtr__gpu_memory_describe(const dbtr_gpu_memory *m, char *out, size_t len) {
  char src[256], each[200] = "";
  budget_source(m, src, sizeof src);
  if (m->gpus > 1 && m->one_gpu)
    snprintf(each, sizeof each, " on each of %d GPUs (each holds its bands of detector and voxel rows: at most %.2fx "
             "the %.3f GiB one GPU needs)", m->gpus, (double)m->need / (double)m->one_gpu, (double)m->one_gpu / gib);
  else if (m->gpus > 1)
    snprintf(each, sizeof each, " on each of %d GPUs (each holds the whole problem: the views are not separable)",
             m->gpus);
  if (m->batch >= m->n_views)
    snprintf(out, len, "GPU memory%s: %.3f GiB needed, %.3f GiB allowed %s", each, (double)m->need / gib,
             (double)m->allowed / gib, src);
  else
    snprintf(out, len, "GPU memory%s: %.3f GiB needed, %.3f GiB allowed %s: ray records made again for %zu of %zu "
             "views at a time, %.3f GiB used", each, (double)m->need / gib, (double)m->allowed / gib, src, m->batch,
             m->n_views, (double)m->used / gib);
}

int dbtr__gpu_arena_alloc(dbtr__gpu_arena *a) {
  if (a->overflow) return dbtr_err(DBTR_EOVERFLOW, "GPU memory: the problem's buffers overflow the address space");
  cudaError_t e = cudaMalloc(&a->base, a->size);
  if (e != cudaSuccess) {
    a->base = NULL;
    return dbtr_err(DBTR_EGPU, "GPU memory: allocating %.3f GiB failed: %s", (double)a->size / gib,
                    cudaGetErrorString(e));
  }
  for (size_t i = 0; i < a->n; i++) *a->slots[i] = (char *)a->base + a->offsets[i];
  return 0;
}

void dbtr__gpu_arena_free(dbtr__gpu_arena *a) {
  if (a->base) cudaFree(a->base);
  for (size_t i = 0; i < a->n; i++) *a->slots[i] = NULL;
  memset(a, 0, sizeof *a);
}

int dbtr__gpu_upload(void *dst, const void *src, size_t bytes) {
  DBTR_CUDA_TRY(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  return 0;
}

extern "C" int dbtr_gpu_host_pin(void *p, size_t bytes) {
  cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterDefault);
  if (e == cudaSuccess) return 0;
  cudaGetLastError();
  return dbtr_err(DBTR_EGPU, "pinning %.3f GiB of host memory for the GPU: %s", (double)bytes / gib,
                  cudaGetErrorString(e));
}

extern "C" void dbtr_gpu_host_unpin(void *p) {
  if (p && cudaHostUnregister(p) != cudaSuccess) cudaGetLastError();
}

extern "C" int dbtr_gpu_count(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

extern "C" int dbtr_gpu_available(char *name, unsigned long name_len) {
  int n = 0;
  if (name && name_len) name[0] = '\0';
  if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
    cudaGetLastError(); /* clear the sticky "no device" error */
    return 0;
  }
  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return 0;
  if (name && name_len) snprintf(name, name_len, "%s", p.name);
  return 1;
}

/* Direct copies between GPUs first .. first + n - 1 where they can (elsewhere cudaMemcpyPeer goes through
 * the host). Peer access lasts as long as the process, and enabling it twice is an error the
 * runtime reports (and compute-sanitizer counts), so each pair is enabled once, whichever
 * thread makes a backend first. */
static void enable_peers(int first, int n) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static unsigned char done[DBTR_GPUS_MAX][DBTR_GPUS_MAX];
  int dev = 0;
  cudaGetDevice(&dev);
  pthread_mutex_lock(&lock);
  for (int i = first; i < first + n; i++)
    for (int j = first; j < first + n; j++) {
      int can = 0;
      if (i == j || done[i][j] || cudaDeviceCanAccessPeer(&can, i, j) != cudaSuccess || !can) continue;
      cudaSetDevice(i);
      /* Failing, it was enabled already (by another library in this process): either way on. */
      if (cudaDeviceEnablePeerAccess(j, 0) != cudaSuccess) cudaGetLastError();
      done[i][j] = 1;
    }
  pthread_mutex_unlock(&lock);
  cudaSetDevice(dev);
}

extern "C" int dbtr_gpu_backend_create(dbtr_backend **out, dbtr_mode mode, const dbtr_problem *prob) {
  *out = NULL;
  char dev[256];
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n < 1) {
    cudaGetLastError();
    return dbtr_err(DBTR_ENOGPU, "no CUDA GPU found (%s)", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
  }
  dbtr_gpu_available(dev, sizeof dev);
  typedef int (*create_fn)(dbtr_backend **, const dbtr_problem *);
  static const create_fn create[DBTR_MODE_ALL_COUNT] = {
#define DBTR_MODE(id, ...) dbtr__gpu_create_##id,
#define DBTR_VARIANT(id, ...) dbtr__gpu_create_##id,
#include "recon/modes.def"
  };
  if ((unsigned)mode >= DBTR_MODE_ALL_COUNT) return dbtr_err(DBTR_EINVAL, "unknown GPU mode %d", (int)mode);
  dbtr_problem p = *prob;
  if (p.gpu_first < 0 || p.gpu_first >= n)
    return dbtr_err(DBTR_EINVAL, "GPU %d: this machine has %d GPU%s", p.gpu_first, n, n == 1 ? "" : "s");
  if (p.gpus < 0) p.gpus = n - p.gpu_first < DBTR_GPUS_MAX ? n - p.gpu_first : DBTR_GPUS_MAX;
  if (p.gpus > n - p.gpu_first && !p.gpu_share)
    return dbtr_err(DBTR_EINVAL, "--gpus %d: this machine has %d GPU%s", p.gpus, n, n == 1 ? "" : "s");
  if (!p.gpu_share) enable_peers(p.gpu_first, p.gpus);
  int rc = create[mode](out, &p);
  if (!rc) {
    snprintf((*out)->name, sizeof (*out)->name, "gpu:%s", dbtr_mode_name_of(mode));
    (*out)->mode = mode;
  }
  return rc;
}

extern "C" int dbtr_gpu_memory_of(const dbtr_backend *b, dbtr_gpu_memory *out) {
  if (!b || strncmp(b->name, "gpu:", 4) != 0) return dbtr_err(DBTR_EINVAL, "GPU memory: not a GPU backend");
  *out = ((const dbtr__gpu_common *)b->impl)->memory;
  return 0;
}
