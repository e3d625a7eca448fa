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
  dbtr_gpu_memory memory; /* how the backend fits the memory it may take */
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
 * dbtr__gpu_arena_alloc. Overflowing sizes are remembered: the plan's size is then
 * SIZE_MAX. */
void dbtr__gpu_arena_plan(dbtr__gpu_arena *a, void **slot, size_t n, size_t elem);
/* The bytes a's plan takes: SIZE_MAX when a size overflowed. */
size_t dbtr__gpu_arena_bytes(const dbtr__gpu_arena *a);
/* What a backend may take (mem->allowed, with mem->free_bytes, mem->total_bytes, mem->capped
 * and mem->requested): the GPU's free memory (capped by DBTR_GPU_MAX_BYTES, which stands for
 * a smaller GPU), less DBTR__GPU_MARGIN, and at most request bytes when request is not 0. */
int dbtr__gpu_budget(size_t request, dbtr_gpu_memory *mem);
/* Room left on the GPU for the CUDA runtime's own allocations (module loading, launch
 * resources) and for the allocation granularity (2 MiB pages) beside the one arena. */
#define DBTR__GPU_MARGIN ((size_t)256 << 20)
/* The message of a plan that does not fit: "GPU memory: ... needs X GiB ..., Y GiB allowed
 * (why)", as DBTR_EGPU. */
int dbtr__gpu_no_room(const dbtr_gpu_memory *mem);
/* The line b->memory holds (kernels/gpu.h). */
void dbtr__gpu_memory_describe(const dbtr_gpu_memory *mem, char *out, size_t len);
/* Allocates everything planned in one cudaMalloc. */
int dbtr__gpu_arena_alloc(dbtr__gpu_arena *a);
void dbtr__gpu_arena_free(dbtr__gpu_arena *a);
int dbtr__gpu_upload(void *dst, const void *src, size_t bytes);

/* View k and a footprint in the mode's type: the CPU reference's (recon/cpu.c), so both start
 * from the same bits. The view is double's in float and double (float's geometry is double's)
 * and reduced in double-double for the referee. */
static inline void dbtr__gpu_view_of(const dbtr_geom *g, const dbtr_grid *grid, size_t k, dbtr_view_d *out) {
  dbtr_view_reduce(g, grid, k, out);
}
static inline void dbtr__gpu_view_of(const dbtr_geom *g, const dbtr_grid *grid, size_t k, dbtr_view_dd *out) {
  dbtr_view_reduce_dd(g, grid, k, out);
}
static inline void dbtr__gpu_foot_convert(const dbtr_footprint_d *in, dbtr_footprint_f *out) { dbtr_footprint_to_f(in, out); }
static inline void dbtr__gpu_foot_convert(const dbtr_footprint_d *in, dbtr_footprint_d *out) { *out = *in; }
static inline void dbtr__gpu_foot_convert(const dbtr_footprint_d *in, dbtr_footprint_dd *out) { dbtr_footprint_to_dd(in, out); }

/* One create function per row of recon/modes.def, each defined by that row's object of
 * kernels/backend_mode.cu. */
extern "C" {
#define DBTR_MODE(id, ...) int dbtr__gpu_create_##id(dbtr_backend **out, const dbtr_problem *prob);
#define DBTR_VARIANT(id, ...) int dbtr__gpu_create_##id(dbtr_backend **out, const dbtr_problem *prob);
#include "recon/modes.def"
}

#endif
