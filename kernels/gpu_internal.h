/* kernels/gpu_internal.h: what the GPU backend's parts share. The device memory arena (the one
 * owner of all device memory, sized up front) and uploads (kernels/gpu_backend.cu); the state
 * of one GPU's part of a backend, whose buffers are untyped (dbtr__gpu_part); the launch table
 * each mode's object gives the host backend (dbtr__gpu_kernels, kernels/mode_kernels.cu); and
 * the host backend built over it (kernels/gpu_host.cu). C++ (CUDA) only. */
#ifndef DBTR_GPU_INTERNAL_H
#define DBTR_GPU_INTERNAL_H

#include <cuda_runtime.h>
#include <stddef.h>

#include "kernels/gpu.h"
#include "recon/backend.h"
#include "recon/rays.h"
#include "recon/separable_types.h"
#include "recon/update.h"

/* Every GPU backend's impl starts with this. */
typedef struct {
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

/* The separable tables (kernels/separable.h) as the host plans them: the same members in the
 * same order as a mode's sep_tables, with the pointers to the mode's elements untyped. */
typedef struct {
  int on;                   /* 1: the views are separable and the gather may use the tables */
  int n_groups;             /* groups of DBTR_GROUP voxel rows: DBTR_N_GROUPS(ny) */
  void *cx, *cy;            /* crossings: (n_views, nz, n_cols), (n_views, nz, n_rows) */
  dbtr_slots *xs, *ys, *gs; /* (n_views, nz, nx), (n_views, nz, ny), (n_views, nz, n_groups) */
  void *xw, *yw;            /* slot weights: (n_views, nz, nx), (n_views, nz, ny) */
  void *gw;                 /* group weights: (n_views, nz, n_groups) */
  int *flag;                /* set to 1 once anything is found not separable */
} dbtr__gpu_sep;

/* One GPU's share of a backend: on one GPU the whole backend; on several, each GPU's part
 * projects its band of detector rows of each subset's views forward and updates its band of
 * voxel rows, and holds the rows of each buffer that this work reads (kernels/gpu_host.cu,
 * "bands"); the first part leads (parts, below). The host only plans and moves the buffers, so
 * they are untyped: T is the mode's element type and R its geometry's (double for float), of
 * k->t_size and k->r_size bytes; only the mode's launchers (k) see their types. */
typedef struct dbtr__gpu_kernels dbtr__gpu_kernels;
typedef struct dbtr__gpu_part dbtr__gpu_part;
struct dbtr__gpu_part {
  dbtr__gpu_common common;
  const dbtr__gpu_kernels *k; /* the mode's kernels and element sizes */
  int dev;          /* the CUDA device it runs on */
  int r0, r1;       /* the detector rows it projects forward: all, or its band */
  int y0, y1;       /* the voxel rows its gathers update: all, or its band */
  int plo, phi;     /* the detector rows of every view y, i0, proj and (unbatched) rays and lens hold */
  int elo, ehi;     /* the detector rows of every view the pixel terms e hold */
  int vlo, vhi;     /* the voxel rows of every slice vol holds */
  int n_parts;      /* the first part: the GPUs the backend spreads over; 1: one */
  int split;        /* 1: on several GPUs, holding the rows of its bands only (else every row) */
  dbtr__gpu_part *parts[DBTR_GPUS_MAX];
  int *sched_host;  /* the first part, on several GPUs: the schedule, as sched */
  size_t max_pitch; /* the first part, on several GPUs: the largest pitch of a 2-D copy */
  /* On several GPUs: a stream for its sends to each other part (non-blocking: they run beside
   * the kernels of the device's default stream, and beside each other, on the device's several
   * copy engines), an event after its compute (on the default stream; a stream's wait takes the
   * event as it stands, so one serves every phase), and one after its sends to each part in a
   * phase (on that part's stream). NULL where not made. */
  cudaStream_t send[DBTR_GPUS_MAX];
  cudaEvent_t done, sent[DBTR_GPUS_MAX];
  int nx, ny, nz, n_rows, n_cols;
  int col_tiles; /* k_forward's blocks per detector row */
  size_t n_views, npix, nproj, nvox, n_partial;
  size_t batch;      /* views whose ray records rays and lens hold: n_views (every view, in order) or a batch */
  int sep_possible;  /* the geometry can be separable (gpu_host.cu, sep_possible) */
  int projector;     /* a projector's part (dbtr_problem.projector): no data, y, i0, partial sums or fit */
  int transmission;
  dbtr_update update; /* what the gathers do with each voxel's sums */
  size_t n_subsets;
  size_t *subset_start; /* host copy, n_subsets + 1 */
  dbtr__gpu_arena arena;
  char *rays;                          /* R: ray records (4 each) */
  char *lens, *y, *i0, *vol, *proj, *e; /* T; vol: (nz, vhi - vlo, nx); y, i0, proj: (n_views, phi - plo,
                                         * n_cols); e: (n_views, ehi - elo, n_cols, 2) pixel terms (e1, e2) */
  char *carry;                         /* T: the per-pixel gather's sums between batches (k_gather) */
  char *views;                         /* the mode's view: (n_views) */
  char *foot;                          /* the mode's footprint: (n_views, nz) */
  dbtr__gpu_sep sep;
  int *sched, *all_views;
  double *partial, *fit;
};

/* What a mode's object (kernels/mode_kernels.cu, compiled once per row of recon/modes.def)
 * gives the host backend: its element sizes, the reduction of the host's double geometry to
 * its types, and one launcher per step. Each launcher makes the launches the step takes on the
 * current device's default stream, each followed by a check of cudaGetLastError, and returns
 * 0 or a DBTR_EGPU code; the host orders the steps, batches them and spreads them over GPUs. */
struct dbtr__gpu_kernels {
  dbtr_precision precision;
  size_t t_size;      /* the element type T */
  size_t r_size;      /* the geometry's type R (ray records) */
  size_t view_size;   /* a view, as the kernels read it */
  size_t foot_size;   /* a footprint */
  size_t cross_size;  /* the separable tables' elements: a crossing, slot weights, group weights */
  size_t slotw_size;
  size_t groupw_size;
  /* View k, and a footprint, in the mode's types: the CPU reference's (recon/cpu.c), so that
   * both start from the same bits. */
  void (*view_of)(const dbtr_geom *g, const dbtr_grid *grid, size_t k, void *out);
  void (*foot_of)(const dbtr_footprint_d *in, void *out);
  /* Every element of v (n of T) becomes value, rounded to T. */
  int (*fill)(void *v, size_t n, double value);
  /* The ray records of detector rows [r0, r1) of views list[0 .. n) (a device list) into
   * slots 0 .. n of rays and lens, a slot holding those rows of one view. */
  int (*make_rays)(const dbtr__gpu_part *s, const int *list, size_t n, int r0, int r1);
  /* The separable set-up's steps that read ray records, for views k0 .. k0 + n (whose records
   * are in slots 0 .. n): the records' check and the crossings' tables. */
  int (*sep_views)(const dbtr__gpu_part *s, size_t k0, size_t n);
  /* The set-up's remaining steps, over every view: the slots, their check, the row groups. */
  int (*sep_rest)(const dbtr__gpu_part *s);
  /* On several GPUs, after the set-up: sets the tables' flag to 2 where a row that the part's
   * forward projection or gather reads is not one it holds (k_sep_bands). */
  int (*sep_bands)(const dbtr__gpu_part *s);
  /* The forward projection of detector rows [r0, r1) (held by y, i0, proj, e and, unbatched,
   * rays and lens) of a device list of n views into proj; with terms, the pixel terms too, and
   * its blocks' partial sums of the data fit where one launch over every row would write them
   * (without, a plain projection: y, i0, e and partial are not touched); with setup, each ray's
   * record made where it is used (batched), else read from rays and lens. */
  int (*forward)(const dbtr__gpu_part *s, const int *views, int n, int r0, int r1, int setup, int terms);
  /* The back projector's input of views k0 .. k0 + n of the plain projections proj (n_proj of
   * T, on the device) into e, with the path lengths of slots 0 .. n (local: made for these views
   * alone) or of the views themselves. */
  int (*back_terms)(const dbtr__gpu_part *s, const void *proj, size_t k0, size_t n, int local);
  /* The data fit of a forward projection of n views: the partial sums in one fixed order. */
  int (*reduce_fit)(const dbtr__gpu_part *s, int n);
  /* The separable gather with the update over views[0 .. n), voxel rows y0 .. y1 of every slice. */
  int (*gather_sep)(const dbtr__gpu_part *s, const int *views, int n);
  /* The per-pixel gather over views[0 .. n), voxel rows y0 .. y1 of every slice (every buffer
   * whole): the records of view views[i] (local 0) or of slot i (local 1); with carry, the sums
   * start from it unless first and go back to it unless last, and only the last batch updates
   * the voxels. */
  int (*gather_pixels)(const dbtr__gpu_part *s, const int *views, int n, int local, void *carry, int first, int last);
};

/* Data in a GPU's memory (kernels/device_data.cu): n elements converted on the current device
 * (which must reach d's memory) into y and i0 (NULL: not wanted) of precision, as the host's
 * dbtr_convert_from_double converts them, element i being d's (i / band) npix + first + i % band
 * (a band of rows of each view; first 0 and band npix: all of d); and the voxels of v (n of
 * t_size bytes, on the current device) that fov (host memory) marks 0 set to 0, the mask sent
 * up through a staging buffer of at most DBTR__FOV_STAGE bytes beside the arena (within
 * DBTR__GPU_MARGIN). */
int dbtr__gpu_data_convert(const dbtr_device_data *d, dbtr_i0_shape shape, dbtr_data_kind kind, size_t n, size_t npix,
                           size_t first, size_t band, dbtr_precision precision, void *y, void *i0);
#define DBTR__FOV_STAGE ((size_t)16 << 20)
int dbtr__gpu_fov_zero(void *v, size_t n, size_t t_size, const unsigned char *fov);

/* A backend of one part per GPU (prob->gpus; all on device 0 with prob->gpu_share), the first
 * leading, running the kernels of k. */
int dbtr__gpu_host_create(dbtr_backend **out, const dbtr_problem *prob, const dbtr__gpu_kernels *k);

/* One create function per row of recon/modes.def, each defined by that row's object of
 * kernels/mode_kernels.cu: dbtr__gpu_host_create with the row's launch table. */
extern "C" {
#define DBTR_MODE(id, ...) int dbtr__gpu_create_##id(dbtr_backend **out, const dbtr_problem *prob);
#define DBTR_VARIANT(id, ...) int dbtr__gpu_create_##id(dbtr_backend **out, const dbtr_problem *prob);
#include "recon/modes.def"
}

#endif
