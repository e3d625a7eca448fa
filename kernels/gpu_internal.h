/* kernels/gpu_internal.h: what the per-mode backends share: the device memory arena (the
 * one owner of all device memory, sized up front), uploads, and the rounding of the host's
 * double geometry to the mode's type. C++ (CUDA) only. */
#ifndef DBTR_GPU_INTERNAL_H
#define DBTR_GPU_INTERNAL_H

#include <stddef.h>

#include "kernels/gpu.h"
#include "recon/backend.h"
#include "recon/rays.h"

/* Every GPU backend's impl starts with this. */
typedef struct {
  int (*bench)(dbtr_backend *b, int repeats, dbtr_gpu_timing *out);
} dbtr__gpu_common;

enum { DBTR__ARENA_MAX = 32 };
typedef struct {
  void *base;   /* the one cudaMalloc */
  size_t size;  /* bytes planned */
  size_t n;
  void **slots[DBTR__ARENA_MAX];
  size_t offsets[DBTR__ARENA_MAX];
  int overflow;
} dbtr__gpu_arena;

/* Plans a buffer of n elements of elem bytes (256-byte aligned); the pointer is set by
 * dbtr__gpu_arena_alloc. Overflowing sizes are remembered and reported there. */
void dbtr__gpu_arena_plan(dbtr__gpu_arena *a, void **slot, size_t n, size_t elem);
/* Allocates everything planned, or fails with "needs X GiB, the GPU has Y free". */
int dbtr__gpu_arena_alloc(dbtr__gpu_arena *a);
void dbtr__gpu_arena_free(dbtr__gpu_arena *a);
int dbtr__gpu_upload(void *dst, const void *src, size_t bytes);

static inline void dbtr__gpu_view_convert(const dbtr_view_d *in, dbtr_view_f *out) { dbtr_view_to_f(in, out); }
static inline void dbtr__gpu_view_convert(const dbtr_view_d *in, dbtr_view_d *out) { *out = *in; }
static inline void dbtr__gpu_foot_convert(const dbtr_footprint_d *in, dbtr_footprint_f *out) { dbtr_footprint_to_f(in, out); }
static inline void dbtr__gpu_foot_convert(const dbtr_footprint_d *in, dbtr_footprint_d *out) { *out = *in; }

/* One create function per mode object (kernels/backend_mode.cu, DBTR_MODE_ID 0..11), in
 * dbtr_gpu_mode order. */
#define DBTR__GPU_MODES(X)                                                                          \
  X(fast) X(ieee) X(cpu_match) X(double) X(double_match) X(cpu_match_fma) X(cpu_match_approx_div) \
  X(cpu_match_libm_exp) X(cpu_match_fast_exp) X(cpu_match_ftz) X(double_match_fma) X(double_match_libm_exp)
#define DBTR__GPU_DECLARE(m) int dbtr__gpu_create_##m(dbtr_backend **out, const dbtr_problem *prob);
extern "C" {
DBTR__GPU_MODES(DBTR__GPU_DECLARE)
}

#endif
