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

/* One create function per row of recon/modes.def, each defined by that row's object of
 * kernels/backend_mode.cu. */
extern "C" {
#define DBTR_MODE(id, ...) int dbtr__gpu_create_##id(dbtr_backend **out, const dbtr_problem *prob);
#define DBTR_VARIANT(id, ...) int dbtr__gpu_create_##id(dbtr_backend **out, const dbtr_problem *prob);
#include "recon/modes.def"
}

#endif
