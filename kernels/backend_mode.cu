/* kernels/backend_mode.cu: the CUDA backend of one floating-point mode, compiled once per
 * row of recon/modes.def (kernels/CMakeLists.txt passes the row's columns and nvcc flags).
 * The arithmetic is recon/proj_impl.h, shared with the CPU reference: the kernels below
 * only map threads to rays and voxels, and move data.
 *
 * Kernels (no atomics; each output element is written by one thread, in a fixed order):
 *   k_rays       one thread per pixel of a list of views: the ray record and path length
 *   k_forward    one thread per pixel of a subset's views: A mu, then the pixel terms and the
 *                data-fit term (block partial sums in a fixed tree)
 *   k_reduce     one block: the partial sums in a fixed order
 *   k_gather_sep one thread per DBTR_XPAIR voxel columns and group of DBTR_GROUP voxel rows
 *                of a slice: the subset's back projection and the voxel update, for
 *                separable views (kernels/separable.h)
 *   k_gather     one thread per 2 x 2 voxels of a slice: the same for any other geometry
 * and, once at set-up, the separable tables (kernels/sep_setup.cuh). The volume, data and
 * intermediates stay on the GPU across iterations; the host sees them only at load, at the
 * end and when asked (get_volume, get_projections). The thread layout, the block shapes and
 * the order of the blocks are kernels/layout.h's.
 *
 * Memory (kernels/gpu.h, dbtr_gpu_memory): one arena, planned within the budget. When the
 * ray records of every view do not fit, the forward projection makes each ray's record where
 * it uses it, in one launch over the views as unbatched, and k_rays makes them again for
 * `batch` views at a time as the separable set-up and the per-pixel gather reach them: a
 * record is computed by one compiled function (ray_of) wherever it is made, so it has the
 * same bits; and the per-pixel gather carries each voxel's two sums from one batch to the
 * next in the mode's type, the order of their terms unchanged. Results are the unbatched
 * run's, bit for bit (test_gpu). */
#define DBTR_HD __device__
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda_util.h"
#include "kernels/gpu.h"
#include "kernels/gpu_internal.h"
#include "kernels/layout.h"
#include "recon/crmath.h"
#include "recon/fit.h"
#include "recon/rays.h"

#include "kernels/modes.h"
typedef MODE_T T;
typedef MODE_R R; /* the geometry's type: ray records, crossings, forward sums (double for float) */
typedef MODE_VIEW VIEW;
typedef MODE_FOOT FOOT;
typedef MODE_CROSS CROSS;
typedef MODE_SLOTW SLOTW;
typedef MODE_GROUPW GROUPW;
#ifdef MODE_GEOM_DOUBLE
/* A float mode's geometry: the shared arithmetic in double, with the row's operations in
 * double (kernels/modes.h), whose ray_setup, cross_at, sum_add and forward_end the float
 * instance calls (its floor, the CPU's by additions, goes unused). */
#define DBTR_T double
#define DBTR_FN(name) gd_##name
#define DBTR_VIEW dbtr_view_d
#define DBTR_FOOT dbtr_footprint_d
#define DBTR_MUL MODE_GEOM_MUL
#define DBTR_ADD MODE_GEOM_ADD
#define DBTR_SUB MODE_GEOM_SUB
#define DBTR_DIV MODE_GEOM_DIV
#define DBTR_SQRT MODE_GEOM_SQRT
#define DBTR_EXP(a) exp(a)
#define DBTR_FLOOR_BY_SHIFT 1
#include "recon/proj_impl.h"
#define DBTR_R double
#define DBTR_GEOM_FN(name) gd_##name
#define DBTR_R_TO_T MODE_GEOM_TO_T
#endif
#define DBTR_T MODE_T
#define DBTR_FN(name) g_##name
#define DBTR_VIEW MODE_VIEW
#define DBTR_FOOT MODE_FOOT
#define DBTR_LOAD_RAY MODE_LOAD_RAY
#ifdef MODE_IS_DD
#include "recon/dd_ops.h"
#else
#define DBTR_MUL MODE_MUL
#define DBTR_ADD MODE_ADD
#define DBTR_SUB MODE_SUB
#define DBTR_DIV MODE_DIV
#define DBTR_SQRT MODE_SQRT
#define DBTR_EXP MODE_EXP
#define DBTR_FLOOR MODE_FLOOR
#define DBTR_FLOOR_BY_SHIFT MODE_FLOOR_BY_SHIFT
#endif
#include "recon/proj_impl.h"

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define CREATE_FN CAT(dbtr__gpu_create_, DBTR_ROW_ID)

/* Everything below but the create function is private to this mode's object: all
 * objects define the same kernel names. */
namespace {

/* The separable gather, its tables (sep_tables; k_gather_sep runs while sep.on) and their
 * builder, over the shared arithmetic above, in this mode. Inside the namespace, as everything
 * of the mode is; the headers it includes were all included above, so they add nothing here. */
#define DBTR_T MODE_T
#define DBTR_R MODE_R
#define DBTR_FN(name) g_##name
#define DBTR_FOOT MODE_FOOT
#define DBTR_CROSS MODE_CROSS
#define DBTR_SLOTW_T MODE_SLOTW
#define DBTR_GROUPW MODE_GROUPW
#define DBTR_SEP_TABLES sep_tables
#define DBTR_LOAD_PAIR MODE_LOAD_PAIR
#define DBTR_LOAD_GROUP MODE_LOAD4
#ifdef MODE_SAME_BITS
#define DBTR_OF_INT(i) MODE_OF_INT(i)
#define DBTR_EQ(a, b) MODE_EQ(a, b)
#define DBTR_SAME_BITS(a, b) MODE_SAME_BITS(a, b)
#endif
#include "kernels/separable.h"

__device__ dbtr_slots load_slots(const dbtr_slots *p) {
  int2 v = __ldg((const int2 *)p);
  return dbtr_slots{v.x, v.y};
}

/* Pixel (r, c)'s ray record and path length (ray_setup), compiled once for k_rays and the
 * batched forward projection: where the row lets nvcc contract a product and a sum, the same
 * lines inlined into two kernels could be contracted differently, and one function has one
 * set of bits. */
__device__ __noinline__ T ray_of(const VIEW *v, int r, int c, R *ray) { return g_ray_setup(v, r, c, ray); }

/* The records of views list[0 .. n) go to slots 0 .. n of rays and lens. */
__global__ void k_rays(const VIEW *views, const int *list, size_t n, int n_rows, int n_cols, R *rays, T *lens) {
  size_t npix = (size_t)n_rows * (size_t)n_cols;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n * npix) return;
  size_t k = i / npix, p = i % npix;
  lens[i] = ray_of(&views[list[k]], (int)(p / (size_t)n_cols), (int)(p % (size_t)n_cols), rays + 4 * i);
}

/* Every element of v (n of them) becomes value. */
__global__ void k_fill(T *v, size_t n, T value) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) v[i] = value;
}

/* Fixed-shape tree over one block's values: the same order on every run. */
__device__ void block_sum_store(double v, double *out) {
  __shared__ double s[DBTR_BLOCK];
  s[threadIdx.x] = v;
  __syncthreads();
  for (unsigned w = DBTR_BLOCK / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = s[0];
}

/* One block per DBTR_BLOCK pixels of a detector row of one view; the n views of the same
 * stretch are consecutive blocks. e holds the pixel terms as pairs (e1, e2). The ray records
 * and lengths are read from rays and lens, or with SETUP (batched: they are not all there)
 * made here from the views' geometry, geom. The views are views part_off .. part_off + n of a
 * launch over part_n views, whose block partial sums this launch writes where that launch
 * would. (Separable views could take their crossings from the tables too; measured, that was
 * slower, even with the float modes' crossings in double, whether both axes or only the
 * row's were looked up: the loads wait where the arithmetic does not. docs/performance.md)
 * Bound to 6 blocks a multiprocessor (40 registers): the sample loads wait on memory, and the
 * warps that hide them matter more than the few values spilled (outside the slice loop, but for
 * one in double's). On the H100 it took the thesis forward projection from 5.35 to 5.27 ms in
 * fast and from 7.69 to 5.80 in double, whose loop had grown to 54 registers (4 blocks); at 5
 * blocks every mode was slower. */
template <int SETUP>
__global__ void __launch_bounds__(DBTR_BLOCK, 6)
    k_forward(const int *views, int n, int n_rows, int n_cols, int col_tiles, const R *rays, const T *lens,
              const T *vol, int nx, int ny, int nz, const T *y, const T *i0, int transmission, T *proj, T *e,
              double *partial, unsigned part_n, unsigned part_off, const VIEW *geom) {
  int vi = (int)(blockIdx.x % (unsigned)n);
  unsigned t = blockIdx.x / (unsigned)n;
  int c = (int)(t % (unsigned)col_tiles) * DBTR_BLOCK + (int)threadIdx.x, r = (int)(t / (unsigned)col_tiles);
  double fit = 0.0;
  if (c < n_cols) {
    size_t npix = (size_t)n_rows * (size_t)n_cols, q = (size_t)r * (size_t)n_cols + (size_t)c;
    size_t p = (size_t)views[vi] * npix + q;
    R ray[4];
    T len;
    if constexpr (SETUP) {
      len = ray_of(&geom[views[vi]], r, c, ray);
    } else {
      MODE_LOAD_RAY(ray, rays + 4 * p);
      len = lens[p];
    }
    T l = g_forward_ray(ray, len, vol, nx, ny, nz);
    proj[p] = l;
    if (transmission) {
      T yhat = g_transmission_pixel(l, y[p], i0[p], len, &e[2 * p], &e[2 * p + 1]);
      fit = dbtr_fit_transmission(MODE_TO_D(y[p]), MODE_TO_D(l), MODE_TO_D(yhat));
    } else {
      g_emission_pixel(l, y[p], len, &e[2 * p], &e[2 * p + 1]);
      fit = dbtr_fit_emission(MODE_TO_D(y[p]), MODE_TO_D(l));
    }
  }
  block_sum_store(fit, &partial[t * part_n + part_off + (unsigned)vi]);
}

__global__ void k_reduce(const double *partial, size_t n, double *out) {
  double acc = 0.0;
  for (size_t i = threadIdx.x; i < n; i += DBTR_BLOCK) acc += partial[i];
  block_sum_store(acc, out);
}

/* The update of voxel j from its two sums; update is a dbtr_update, DBTR_UPDATE_TRANSMISSION or
 * DBTR_UPDATE_EMISSION (the kernels take it as an int). */
__device__ void update_voxel(T *vol, size_t j, T a1, T a2, int update) {
  vol[j] = update == DBTR_UPDATE_TRANSMISSION ? g_transmission_voxel(vol[j], a1, a2) : g_emission_voxel(vol[j], a1, a2);
}

/* The gather back projection with the update, for separable views: one thread per
 * DBTR_XPAIR voxel columns (x and x + DBTR_GS_X) and group of DBTR_GROUP voxel rows of one
 * slice, a block DBTR_SEP_TILE_X columns by DBTR_GS_Y groups (kernels/layout.h); consecutive
 * blocks are the slices of one such tile. Each view's slots and weights come from the tables,
 * and each voxel's sums are gather_view's, bit for bit (gather_sep). The slices are the nzs
 * from z0 (of nz): all of them on one GPU, a slab of them on each of several. */
__global__ void k_gather_sep(const int *views, int n, sep_tables sep, const T *e, T *vol, int nx, int ny, int nz,
                             int z0, int nzs, int n_cols, size_t npix, int tiles_x, int update) {
  int z = z0 + (int)(blockIdx.x % (unsigned)nzs);
  unsigned t = blockIdx.x / (unsigned)nzs;
  int x0 = (int)(t % (unsigned)tiles_x) * DBTR_SEP_TILE_X + (int)threadIdx.x;
  int gi = (int)(t / (unsigned)tiles_x) * DBTR_GS_Y + (int)threadIdx.y;
  if (x0 >= nx || gi >= sep.n_groups) return;
  T a1[DBTR_XPAIR][DBTR_GROUP], a2[DBTR_XPAIR][DBTR_GROUP];
#pragma unroll
  for (int a = 0; a < DBTR_XPAIR; a++)
#pragma unroll
    for (int b = 0; b < DBTR_GROUP; b++) a1[a][b] = a2[a][b] = MODE_ZERO;
  for (int i = 0; i < n; i++) {
    size_t k = (size_t)views[i], kz = k * (size_t)nz + (size_t)z;
    dbtr_slots gs = load_slots(&sep.gs[kz * (size_t)sep.n_groups + (size_t)gi]), xs[DBTR_XPAIR];
    T xw[DBTR_XPAIR][DBTR_SLOTS];
    int any = 0;
#pragma unroll
    for (int a = 0; a < DBTR_XPAIR; a++) {
      int x = x0 + a * DBTR_GS_X;
      T w4[DBTR_SLOTW];
      xs[a] = DBTR_NO_SLOTS;
      for (int j = 0; j < DBTR_SLOTW; j++) w4[j] = MODE_ZERO;
      if (x < nx) {
        xs[a] = load_slots(&sep.xs[kz * (size_t)nx + (size_t)x]);
        MODE_LOAD4(w4, sep.xw[kz * (size_t)nx + (size_t)x].w);
      }
#pragma unroll
      for (int j = 0; j < DBTR_SLOTS; j++) xw[a][j] = w4[j];
      any |= xs[a].n;
    }
    if (!any || gs.n == 0) continue;
    g_gather_sep(xs, xw, gs, &sep.gw[kz * (size_t)sep.n_groups + (size_t)gi], e + 2 * k * npix, n_cols, a1, a2);
  }
#pragma unroll
  for (int a = 0; a < DBTR_XPAIR; a++)
#pragma unroll
    for (int b = 0; b < DBTR_GROUP; b++) {
      int x = x0 + a * DBTR_GS_X, y = gi * DBTR_GROUP + b;
      if (x < nx && y < ny)
        update_voxel(vol, ((size_t)z * (size_t)ny + (size_t)y) * (size_t)nx + (size_t)x, a1[a][b], a2[a][b], update);
    }
}

/* The gather back projection with the update, for any geometry.
 *
 * One thread per 2 x 2 voxels of a slice. For each view of the subset it walks the union of
 * the four voxels' candidate boxes in raster order, computes each pixel's crossing once
 * with the shared crossing(), and weighs it for each voxel with the shared weight_at().
 * A pixel outside a voxel's own box has weight 0 for it (the box holds every pixel whose
 * ray touches the voxel's support), and raster order over the union visits the voxel's
 * own pixels in the order gather_view() does, so every voxel's sums are the CPU's, bit for
 * bit, with about half the crossings and loads of one thread per voxel.
 */
/* The per-pixel walk of the union box [bc0, bc1] x [br0, br1]; ek holds the view's pairs. */
__device__ void gather_pixels(const R *rk, const T *ek, int x0, int y0, int z, int nx, int ny, int n_cols, int bc0,
                              int bc1, int br0, int br1, T *a1, T *a2) {
  for (int r = br0; r <= br1; r++)
    for (int c = bc0; c <= bc1; c++) {
      size_t p = (size_t)r * (size_t)n_cols + (size_t)c;
      R ray[4];
      MODE_LOAD_RAY(ray, rk + 4 * p);
      int ix, iy;
      T wx, wy;
      if (!g_crossing(ray, z, nx, ny, &ix, &iy, &wx, &wy)) continue;
      /* The crossing's 2 x 2 corners must meet the micro-tile's 3 x 3 support lattice. */
      if (ix < x0 - 1 || ix > x0 + DBTR_MICRO - 1 || iy < y0 - 1 || iy > y0 + DBTR_MICRO - 1) continue;
      T v1, v2;
      MODE_LOAD_PAIR(v1, v2, ek + 2 * p);
#pragma unroll
      for (int v = 0; v < DBTR_MICRO * DBTR_MICRO; v++) {
        T wt = g_weight_at(ix, iy, wx, wy, x0 + v % DBTR_MICRO, y0 + v / DBTR_MICRO);
        if (!MODE_IS0(wt)) g_accumulate(wt, v1, v2, 1, &a1[v], &a2[v]);
      }
    }
}

/* Blocks of DBTR_GX x DBTR_GY threads; consecutive blocks are the slices of one tile, the nzs
 * from z0 (as k_gather_sep). The ray records are view views[i]'s (local 0) or slot i's (local
 * 1). With carry (2 n_vox: the sums a1, then a2), the views are one batch of a longer list:
 * the sums start from carry unless first, and go back to it unless last; only the last batch
 * updates the voxel. */
__global__ void k_gather(const int *views, int n, const FOOT *foot, const R *rays, int local, const T *e, T *vol, int nx,
                         int ny, int nz, int z0, int nzs, int n_rows, int n_cols, int tiles_x, int update, T *carry,
                         int first, int last) {
  int z = z0 + (int)(blockIdx.x % (unsigned)nzs);
  unsigned t = blockIdx.x / (unsigned)nzs;
  int x0 = DBTR_MICRO * ((int)(t % (unsigned)tiles_x) * DBTR_GX + (int)threadIdx.x);
  int y0 = DBTR_MICRO * ((int)(t / (unsigned)tiles_x) * DBTR_GY + (int)threadIdx.y);
  if (x0 >= nx || y0 >= ny) return;
  size_t npix = (size_t)n_rows * (size_t)n_cols, nvox = (size_t)nx * (size_t)ny * (size_t)nz;
  T a1[DBTR_MICRO * DBTR_MICRO], a2[DBTR_MICRO * DBTR_MICRO];
#pragma unroll
  for (int v = 0; v < DBTR_MICRO * DBTR_MICRO; v++) {
    int x = x0 + v % DBTR_MICRO, y = y0 + v / DBTR_MICRO;
    size_t j = ((size_t)z * (size_t)ny + (size_t)y) * (size_t)nx + (size_t)x;
    int from_carry = carry && !first && x < nx && y < ny;
    a1[v] = from_carry ? carry[j] : MODE_ZERO;
    a2[v] = from_carry ? carry[nvox + j] : MODE_ZERO;
  }
  for (int i = 0; i < n; i++) {
    size_t k = (size_t)views[i];
    const FOOT *f = &foot[k * (size_t)nz + (size_t)z];
    /* The union of the voxels' candidate boxes, the pixels the CPU visits for each. (A
     * union of the float spans with one span_box, the same box since span_box is
     * monotonic, measured 7% slower in fast and 17% in double on the H100.) */
    int bc0 = n_cols, bc1 = -1, br0 = n_rows, br1 = -1;
#pragma unroll
    for (int v = 0; v < DBTR_MICRO * DBTR_MICRO; v++) {
      int x = x0 + v % DBTR_MICRO, y = y0 + v / DBTR_MICRO;
      T sp[4];
      if (x >= nx || y >= ny || !g_candidate_span(f, x, y, n_rows, n_cols, sp)) continue;
      int c0, c1, r0, r1;
      g_span_box(sp, n_rows, n_cols, &c0, &c1, &r0, &r1);
      bc0 = c0 < bc0 ? c0 : bc0;
      bc1 = c1 > bc1 ? c1 : bc1;
      br0 = r0 < br0 ? r0 : br0;
      br1 = r1 > br1 ? r1 : br1;
    }
    if (bc0 > bc1 || br0 > br1) continue;
    gather_pixels(rays + 4 * (local ? (size_t)i : k) * npix, e + 2 * k * npix, x0, y0, z, nx, ny, n_cols, bc0, bc1, br0,
                  br1, a1, a2);
  }
#pragma unroll
  for (int v = 0; v < DBTR_MICRO * DBTR_MICRO; v++) {
    int x = x0 + v % DBTR_MICRO, y = y0 + v / DBTR_MICRO;
    if (x >= nx || y >= ny) continue;
    size_t j = ((size_t)z * (size_t)ny + (size_t)y) * (size_t)nx + (size_t)x;
    if (carry && !last) {
      carry[j] = a1[v];
      carry[nvox + j] = a2[v];
    } else {
      update_voxel(vol, j, a1[v], a2[v], update);
    }
  }
}

/* One GPU's share of a backend: on one GPU the whole backend; on several, each GPU's part
 * holds the whole problem (data, volume, tables), projects its share of each subset's views
 * forward and updates its slab of slices, and the first part leads (parts, below). */
typedef struct state state;
struct state {
  dbtr__gpu_common common;
  int dev;          /* the CUDA device it runs on */
  int z0, z1;       /* the slices its gathers update: all, or its slab */
  int n_parts;      /* the first part: the GPUs the backend spreads over; 1: one */
  state *parts[DBTR_GPUS_MAX];
  int *sched_host;  /* the first part, on several GPUs: the schedule, as sched */
  int *owner;       /* the first part, on several GPUs: the part that projects each view */
  double *partial_host; /* the first part, on several GPUs: each part's partial sums, then the merged ones */
  int nx, ny, nz, n_rows, n_cols;
  int col_tiles; /* k_forward's blocks per detector row */
  size_t n_views, npix, nproj, nvox, n_partial;
  size_t batch;      /* views whose ray records rays and lens hold: n_views (every view, in order) or a batch */
  int sep_possible;  /* the geometry can be separable (sep_possible) */
  int transmission;
  dbtr_update update; /* what the gathers do with each voxel's sums */
  size_t n_subsets;
  size_t *subset_start; /* host copy, n_subsets + 1 */
  dbtr__gpu_arena arena;
  R *rays;                                   /* ray records (4 each, in double for float) */
  T *lens, *y, *i0, *vol, *proj, *e;         /* e: (n_views, n_rows, n_cols, 2) pixel terms (e1, e2) */
  T *carry;                                  /* the per-pixel gather's sums between batches (k_gather) */
  VIEW *views;
  FOOT *foot;
  sep_tables sep;
  int *sched, *all_views;
  double *partial, *fit;
};

/* Whether the ray records are made batch by batch (the budget did not hold every view's). */
static int batched(const state *s) { return s->batch < s->n_views; }

/* The ray records of views list[0 .. n) into slots 0 .. n of rays and lens. */
static int make_rays(state *s, const int *list, size_t n) {
  unsigned blocks = (unsigned)DBTR_TILES(n * s->npix, (size_t)DBTR_BLOCK);
  k_rays<<<blocks, DBTR_BLOCK>>>(s->views, list, n, s->n_rows, s->n_cols, s->rays, s->lens);
  DBTR_CUDA_LAUNCHED();
  return 0;
}

#include "kernels/sep_setup.cuh"

static void part_free(state *s) {
  if (!s) return;
  cudaSetDevice(s->dev);
  dbtr__gpu_arena_free(&s->arena);
  free(s->subset_start);
  free(s->sched_host);
  free(s->owner);
  free(s->partial_host);
  free(s);
}

static void destroy(dbtr_backend *b) {
  state *s = (state *)b->impl;
  if (s)
    for (int d = s->n_parts - 1; d >= 0; d--) part_free(s->parts[d]);
  free(b);
}

/* Makes part s's device the current one: every entry point starts here, so that backends on
 * different devices can live side by side in one process. */
static int use(const state *s) {
  DBTR_CUDA_TRY(cudaSetDevice(s->dev));
  return 0;
}

/* The forward projection of views[p0 .. p1) of a list of n (views points at the list), with
 * the pixel terms, in one launch, writing its blocks' data-fit partial sums where one launch
 * over the whole list would. Batched, each ray's record is made where it is used rather than
 * a batch's records before a launch of their own: one launch keeps the blocks of a detector
 * stretch, whose views read the same slices, side by side in L2 (kernels/layout.h). */
static int forward_part(state *s, const int *views, int n, int p0, int p1) {
  unsigned blocks = (unsigned)(p1 - p0) * (unsigned)s->n_rows * (unsigned)s->col_tiles;
  if (batched(s))
    k_forward<1><<<blocks, DBTR_BLOCK>>>(views + p0, p1 - p0, s->n_rows, s->n_cols, s->col_tiles, NULL, NULL, s->vol,
                                         s->nx, s->ny, s->nz, s->y, s->i0, s->transmission, s->proj, s->e, s->partial,
                                         (unsigned)n, (unsigned)p0, s->views);
  else
    k_forward<0><<<blocks, DBTR_BLOCK>>>(views + p0, p1 - p0, s->n_rows, s->n_cols, s->col_tiles, s->rays, s->lens,
                                         s->vol, s->nx, s->ny, s->nz, s->y, s->i0, s->transmission, s->proj, s->e,
                                         s->partial, (unsigned)n, (unsigned)p0, NULL);
  DBTR_CUDA_LAUNCHED();
  return 0;
}

/* The data fit of a forward projection of n views: its partial sums in one fixed order. */
static int reduce_fit(state *s, int n) {
  k_reduce<<<1, DBTR_BLOCK>>>(s->partial, (size_t)n * (size_t)s->n_rows * (size_t)s->col_tiles, s->fit);
  DBTR_CUDA_LAUNCHED();
  return 0;
}

/* The gather back projection of views[0 .. n) with the update. The separable gather reads
 * no ray records; the per-pixel one, batched, runs a batch at a time after its records,
 * carrying the sums (k_gather). */
static int launch_gather(state *s, const int *views, int n) {
  int nzs = s->z1 - s->z0;
  if (s->sep.on) {
    int tiles_x = DBTR_TILES(s->nx, DBTR_SEP_TILE_X), tiles_y = DBTR_TILES(s->sep.n_groups, DBTR_GS_Y);
    unsigned blocks = (unsigned)nzs * (unsigned)tiles_x * (unsigned)tiles_y;
    k_gather_sep<<<blocks, dim3(DBTR_GS_X, DBTR_GS_Y, 1)>>>(views, n, s->sep, s->e, s->vol, s->nx, s->ny, s->nz, s->z0,
                                                           nzs, s->n_cols, s->npix, tiles_x, s->update);
    DBTR_CUDA_LAUNCHED();
    return 0;
  }
  int tiles_x = DBTR_TILES(s->nx, DBTR_TILE_X), tiles_y = DBTR_TILES(s->ny, DBTR_TILE_Y);
  unsigned blocks = (unsigned)nzs * (unsigned)tiles_x * (unsigned)tiles_y;
  int step = batched(s) ? (int)s->batch : n, rc;
  for (int b0 = 0; b0 < n; b0 += step) {
    int nb = n - b0 < step ? n - b0 : step;
    if (batched(s) && (rc = make_rays(s, views + b0, (size_t)nb))) return rc;
    k_gather<<<blocks, dim3(DBTR_GX, DBTR_GY, 1)>>>(views + b0, nb, s->foot, s->rays, batched(s), s->e, s->vol, s->nx,
                                                   s->ny, s->nz, s->z0, nzs, s->n_rows, s->n_cols, tiles_x, s->update,
                                                   batched(s) ? s->carry : NULL, b0 == 0, b0 + nb >= n);
    DBTR_CUDA_LAUNCHED();
  }
  return 0;
}

/* A list of views: the subset schedule from offset off (all 0), or every view (all 1); each
 * part has it on its own device, and the first part on the host. */
static const int *list_of(const state *p, int all, size_t off) { return all ? p->all_views : p->sched + off; }
static int host_view(const state *s, int all, size_t off, int i) { return all ? i : s->sched_host[off + (size_t)i]; }

/* The share [*p0, *p1) of n items that part d of parts takes: contiguous, in order. */
static void share(int n, int d, int parts, int *p0, int *p1) {
  *p0 = (int)((long long)n * d / parts);
  *p1 = (int)((long long)n * (d + 1) / parts);
}

static int sync_parts(const state *s) {
  for (int d = 0; d < s->n_parts; d++) {
    int rc = use(s->parts[d]);
    if (rc) return rc;
    DBTR_CUDA_TRY(cudaDeviceSynchronize());
  }
  return 0;
}

/* The forward projection of a list of n views with the data fit, into the first part's fit.
 * On several GPUs each part projects its share; then each part's pixel terms go to every other
 * part (the gathers need all of them), and each part's partial sums to the host, where they
 * take the places one launch over the list would have given them, for the first part to
 * reduce: the same sums in the same order as on one GPU. */
static int forward(state *s, int all, size_t off, int n) {
  int rc = 0;
  if (s->n_parts == 1) {
    rc = forward_part(s, list_of(s, all, off), n, 0, n);
    return rc ? rc : reduce_fit(s, n);
  }
  int np = s->n_parts, p0, p1;
  for (int d = 0; d < np && !rc; d++) {
    state *p = s->parts[d];
    share(n, d, np, &p0, &p1);
    if (!(rc = use(p)) && p1 > p0) rc = forward_part(p, list_of(p, all, off), n, p0, p1);
  }
  if (rc || (rc = sync_parts(s))) return rc;
  size_t terms = 2 * s->npix * sizeof(T), n_t = (size_t)s->n_rows * (size_t)s->col_tiles, np_n = (size_t)n * n_t;
  double *merged = s->partial_host + (size_t)np * np_n;
  for (int d = 0; d < np; d++) {
    state *p = s->parts[d];
    share(n, d, np, &p0, &p1);
    for (int i = p0; i < p1; i++) {
      size_t k = (size_t)host_view(s, all, off, i);
      for (int d2 = 0; d2 < np; d2++)
        if (d2 != d)
          DBTR_CUDA_TRY(cudaMemcpyPeer(s->parts[d2]->e + 2 * k * s->npix, s->parts[d2]->dev, p->e + 2 * k * s->npix,
                                       p->dev, terms));
    }
    double *h = s->partial_host + (size_t)d * np_n;
    if ((rc = use(p))) return rc;
    DBTR_CUDA_TRY(cudaMemcpy(h, p->partial, np_n * sizeof(double), cudaMemcpyDeviceToHost));
    for (size_t t = 0; t < n_t; t++) memcpy(merged + t * (size_t)n + p0, h + t * (size_t)n + p0, (size_t)(p1 - p0) * sizeof(double));
  }
  if ((rc = use(s))) return rc;
  DBTR_CUDA_TRY(cudaMemcpy(s->partial, merged, np_n * sizeof(double), cudaMemcpyHostToDevice));
  if ((rc = reduce_fit(s, n)) || (rc = sync_parts(s))) return rc;
  return use(s);
}

/* The gather with the update over a list of n views. On several GPUs each part updates its
 * slab of slices, then sends it to every other part, so each holds the whole volume again. */
static int gather(state *s, int all, size_t off, int n) {
  int rc = 0;
  if (s->n_parts == 1) return launch_gather(s, list_of(s, all, off), n);
  for (int d = 0; d < s->n_parts && !rc; d++) {
    state *p = s->parts[d];
    if (!(rc = use(p))) rc = launch_gather(p, list_of(p, all, off), n);
  }
  if (rc || (rc = sync_parts(s))) return rc;
  size_t slice = (size_t)s->nx * (size_t)s->ny;
  for (int d = 0; d < s->n_parts; d++) {
    state *p = s->parts[d];
    size_t at = (size_t)p->z0 * slice, bytes = (size_t)(p->z1 - p->z0) * slice * sizeof(T);
    for (int d2 = 0; d2 < s->n_parts; d2++)
      if (d2 != d && bytes)
        DBTR_CUDA_TRY(cudaMemcpyPeer(s->parts[d2]->vol + at, s->parts[d2]->dev, p->vol + at, p->dev, bytes));
  }
  if ((rc = sync_parts(s))) return rc;
  return use(s);
}

static int subset(dbtr_backend *b, size_t sub, double *fit) {
  state *s = (state *)b->impl;
  int n = (int)(s->subset_start[sub + 1] - s->subset_start[sub]), rc = use(s);
  if (!rc) rc = forward(s, 0, s->subset_start[sub], n);
  if (!rc) rc = gather(s, 0, s->subset_start[sub], n);
  if (rc) return rc;
  double f;
  DBTR_CUDA_TRY(cudaMemcpy(&f, s->fit, sizeof f, cudaMemcpyDeviceToHost));
  *fit += f;
  return 0;
}

/* Every part gets the data and the uniform start volume, filled on the GPU. */
static int load(dbtr_backend *b, const void *y, const void *i0, double fill) {
  state *s = (state *)b->impl;
  for (int d = 0; d < s->n_parts; d++) {
    state *p = s->parts[d];
    int rc = use(p);
    if (rc) return rc;
    DBTR_CUDA_TRY(cudaMemcpy(p->y, y, p->nproj * sizeof(T), cudaMemcpyHostToDevice));
    if (p->transmission) DBTR_CUDA_TRY(cudaMemcpy(p->i0, i0, p->nproj * sizeof(T), cudaMemcpyHostToDevice));
    k_fill<<<DBTR_SETUP_BLOCKS, DBTR_BLOCK>>>(p->vol, p->nvox, MODE_FROM_D(fill));
    DBTR_CUDA_LAUNCHED();
  }
  DBTR_CUDA_TRY(cudaDeviceSynchronize());
  return use(s);
}

/* Every part holds the whole volume after each subset; the first part's serves. */
static int get_volume(dbtr_backend *b, void *out) {
  state *s = (state *)b->impl;
  int rc = use(s);
  if (rc) return rc;
  DBTR_CUDA_TRY(cudaMemcpy(out, s->vol, s->nvox * sizeof(T), cudaMemcpyDeviceToHost));
  return 0;
}

static int set_volume(dbtr_backend *b, const void *in) {
  state *s = (state *)b->impl;
  for (int d = 0; d < s->n_parts; d++) {
    int rc = use(s->parts[d]);
    if (rc) return rc;
    DBTR_CUDA_TRY(cudaMemcpy(s->parts[d]->vol, in, s->nvox * sizeof(T), cudaMemcpyHostToDevice));
  }
  return use(s);
}

/* On several GPUs, each view's projection from the part that projects it. */
static int get_projections(dbtr_backend *b, void *out) {
  state *s = (state *)b->impl;
  int rc = use(s);
  if (rc) return rc;
  if (s->n_parts == 1) {
    DBTR_CUDA_TRY(cudaMemcpy(out, s->proj, s->nproj * sizeof(T), cudaMemcpyDeviceToHost));
    return 0;
  }
  for (size_t k = 0; k < s->n_views; k++) {
    const state *p = s->parts[s->owner[k]];
    if ((rc = use(p))) return rc;
    DBTR_CUDA_TRY(cudaMemcpy((T *)out + k * s->npix, p->proj + k * s->npix, s->npix * sizeof(T), cudaMemcpyDeviceToHost));
  }
  return use(s);
}

static int median_ms(state *s, int repeats, int what, double *out) {
  cudaEvent_t a, z;
  DBTR_CUDA_TRY(cudaEventCreate(&a));
  DBTR_CUDA_TRY(cudaEventCreate(&z));
  double *t = (double *)malloc((size_t)repeats * sizeof(double));
  int rc = t ? 0 : dbtr_err(DBTR_ENOMEM, "benchmark: out of memory");
  for (int r = 0; r < repeats && !rc; r++) {
    cudaEventRecord(a);
    if (what == 0) rc = forward(s, 1, 0, (int)s->n_views);
    else if (what == 1) rc = gather(s, 1, 0, (int)s->n_views);
    else {
      double f = 0.0;
      dbtr_backend tmp;
      tmp.impl = s;
      for (size_t sub = 0; sub < s->n_subsets && !rc; sub++) rc = subset(&tmp, sub, &f);
    }
    cudaEventRecord(z);
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
  if (!rc) DBTR_CUDA_TRY(cudaGetLastError());
  return rc;
}

static int bench(dbtr_backend *b, int repeats, dbtr_gpu_timing *out) {
  state *s = (state *)b->impl;
  int rc = use(s);
  double ignored;
  if (rc) return rc;
  /* Warm-up: module load and first-touch costs stay out of the numbers. */
  if ((rc = median_ms(s, 1, 2, &ignored))) return rc;
  if ((rc = median_ms(s, repeats, 0, &out->forward_ms))) return rc;
  if ((rc = median_ms(s, repeats, 1, &out->back_ms))) return rc;
  if ((rc = median_ms(s, repeats, 2, &out->iteration_ms))) return rc;
  out->bytes = (double)s->arena.size;
  out->separable = s->sep.on;
  return 0;
}

/* Every buffer, into arena a, with the ray records of `batch` views (n_views: all of them);
 * batched, the per-pixel gather's carried sums where the gather may be per-pixel. */
static void plan_into(state *s, dbtr__gpu_arena *a, size_t batch) {
  memset(a, 0, sizeof *a);
  size_t nrec = batch * s->npix; /* at most nproj, which is counted without overflow */
  dbtr__gpu_arena_plan(a, (void **)&s->rays, 4 * nrec, sizeof(R));
  dbtr__gpu_arena_plan(a, (void **)&s->lens, nrec, sizeof(T));
  dbtr__gpu_arena_plan(a, (void **)&s->y, s->nproj, sizeof(T));
  if (s->transmission) dbtr__gpu_arena_plan(a, (void **)&s->i0, s->nproj, sizeof(T));
  dbtr__gpu_arena_plan(a, (void **)&s->proj, s->nproj, sizeof(T));
  dbtr__gpu_arena_plan(a, (void **)&s->e, 2 * s->nproj, sizeof(T));
  dbtr__gpu_arena_plan(a, (void **)&s->vol, s->nvox, sizeof(T));
  if (batch < s->n_views && !s->sep_possible) dbtr__gpu_arena_plan(a, (void **)&s->carry, 2 * s->nvox, sizeof(T));
  dbtr__gpu_arena_plan(a, (void **)&s->views, s->n_views, sizeof(VIEW));
  dbtr__gpu_arena_plan(a, (void **)&s->foot, s->n_views * (size_t)s->nz, sizeof(FOOT));
  dbtr__gpu_arena_plan(a, (void **)&s->sched, s->n_views, sizeof(int));
  dbtr__gpu_arena_plan(a, (void **)&s->all_views, s->n_views, sizeof(int));
  dbtr__gpu_arena_plan(a, (void **)&s->partial, s->n_partial, sizeof(double));
  dbtr__gpu_arena_plan(a, (void **)&s->fit, 1, sizeof(double));
  if (s->sep_possible) sep_plan(s, a);
}

static size_t plan_bytes(state *s, size_t batch) {
  dbtr__gpu_arena a;
  plan_into(s, &a, batch);
  return dbtr__gpu_arena_bytes(&a);
}

/* Sizes every buffer within the budget (kernels/gpu.h): every view's ray records when they
 * fit, else the largest batch of views that fits (at most a subset's views: a subset runs
 * one batch at a time); one allocation, one clear message when not even one view fits. */
static int plan(state *s, const dbtr_problem *prob) {
  dbtr_gpu_memory *m = &s->common.memory;
  int rc = dbtr__gpu_budget(prob->gpu_memory, m);
  if (rc) return rc;
  m->n_views = s->n_views;
  m->need = plan_bytes(s, s->n_views);
  m->need_min = plan_bytes(s, 1);
  size_t batch = s->n_views;
  if (m->need > m->allowed) {
    if (m->need_min > m->allowed) return dbtr__gpu_no_room(m);
    size_t lo = 1, hi = 1; /* plan_bytes grows with the batch: the largest that fits */
    for (size_t i = 0; i < prob->n_subsets; i++) {
      size_t n = prob->subset_start[i + 1] - prob->subset_start[i];
      hi = n > hi ? n : hi;
    }
    hi = hi < s->n_views - 1 ? hi : s->n_views - 1;
    while (lo < hi) {
      size_t mid = lo + (hi - lo + 1) / 2;
      if (plan_bytes(s, mid) <= m->allowed)
        lo = mid;
      else
        hi = mid - 1;
    }
    batch = lo;
  }
  s->batch = m->batch = batch;
  plan_into(s, &s->arena, batch);
  m->used = dbtr__gpu_arena_bytes(&s->arena);
  return dbtr__gpu_arena_alloc(&s->arena);
}

/* Geometry reduced on the host, in double, rounded once by the shared conversion; then the
 * ray records (unless batched) and the separable tables, on the device. Batched, the
 * per-pixel gather needs its carried sums, planned only where the geometry cannot be
 * separable: where it could be but the set-up finds it is not, the budget must hold every
 * view's records. */
static int upload_geometry(state *s, const dbtr_problem *prob) {
  const dbtr_geom *g = prob->geom;
  const dbtr_grid *grid = prob->grid;
  int rc = 0;
  VIEW *hv = (VIEW *)malloc(s->n_views * sizeof(VIEW));
  FOOT *hf = (FOOT *)malloc(s->n_views * grid->nz * sizeof(FOOT));
  int *hs = (int *)malloc(2 * s->n_views * sizeof(int));
  if (!hv || !hf || !hs) rc = dbtr_err(DBTR_ENOMEM, "GPU backend: out of memory");
  for (size_t k = 0; k < s->n_views && !rc; k++) {
    dbtr__gpu_view_of(g, grid, k, &hv[k]);
    for (size_t z = 0; z < grid->nz; z++) {
      dbtr_footprint_d fd;
      dbtr_footprint_reduce(g, grid, k, z, &fd);
      dbtr__gpu_foot_convert(&fd, &hf[k * grid->nz + z]);
    }
    hs[k] = (int)prob->subset_views[k];
    hs[s->n_views + k] = (int)k;
  }
  if (!rc) rc = dbtr__gpu_upload(s->views, hv, s->n_views * sizeof(VIEW));
  if (!rc) rc = dbtr__gpu_upload(s->foot, hf, s->n_views * grid->nz * sizeof(FOOT));
  if (!rc) rc = dbtr__gpu_upload(s->sched, hs, s->n_views * sizeof(int));
  if (!rc) rc = dbtr__gpu_upload(s->all_views, hs + s->n_views, s->n_views * sizeof(int));
  free(hv);
  free(hf);
  free(hs);
  if (rc) return rc;
  /* Batched, the records are made as they are used. */
  if (!batched(s) && (rc = make_rays(s, s->all_views, s->n_views))) return rc;
  cudaError_t e = cudaMemset(s->proj, 0, s->nproj * sizeof(T));
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) return dbtr_err(DBTR_EGPU, "GPU ray set-up: %s", cudaGetErrorString(e));
  if ((rc = sep_build(s))) return rc;
  if (batched(s) && !s->sep.on && !s->carry)
    return dbtr_err(DBTR_EGPU, "GPU memory: these views are not separable after all (docs/performance.md), and the "
                    "per-pixel gather in batches needs %.3f GiB more than the %.3f GiB allowed; allow %.3f GiB with "
                    "--gpu-memory", (double)(2 * s->nvox * sizeof(T)) / 1073741824.0,
                    (double)s->common.memory.allowed / 1073741824.0, (double)s->common.memory.need / 1073741824.0);
  return 0;
}

/* The launches' grids are one-dimensional: their block counts must fit gridDim.x. */
static int check_launch_sizes(const state *s) {
  size_t max = 2147483647u, fwd = s->n_views * (size_t)s->n_rows * (size_t)s->col_tiles;
  size_t tx = DBTR_TILES((size_t)s->nx, DBTR_TILE_X), ty = DBTR_TILES((size_t)s->ny, DBTR_TILE_Y);
  size_t sx = DBTR_TILES((size_t)s->nx, DBTR_SEP_TILE_X), sy = DBTR_TILES((size_t)s->ny, DBTR_SEP_TILE_Y);
  if (fwd > max || tx * ty > max / (size_t)s->nz || sx * sy > max / (size_t)s->nz)
    return dbtr_err(DBTR_EINVAL, "GPU backend: %zu views of %d x %d pixels, %d x %d x %d voxels need more thread blocks "
                    "than one launch takes (2^31 - 1)", s->n_views, s->n_cols, s->n_rows, s->nx, s->ny, s->nz);
  return 0;
}

/* One part on device dev, with every buffer of the problem, set up (kernels/gpu.h). */
static int part_new(state **out, const dbtr_problem *prob, int dev) {
  const dbtr_geom *g = prob->geom;
  const dbtr_grid *grid = prob->grid;
  state *s = (state *)calloc(1, sizeof *s);
  *out = s;
  if (!s) return dbtr_err(DBTR_ENOMEM, "GPU backend: out of memory");
  s->common.bench = bench;
  s->dev = dev;
  s->n_parts = 1;
  s->parts[0] = s;
  s->nx = (int)grid->nx;
  s->ny = (int)grid->ny;
  s->nz = (int)grid->nz;
  s->z1 = s->nz;
  s->n_rows = (int)g->n_rows;
  s->n_cols = (int)g->n_cols;
  s->col_tiles = DBTR_TILES(s->n_cols, DBTR_BLOCK);
  s->n_views = g->n_views;
  s->npix = g->n_rows * g->n_cols;
  s->transmission = prob->algo == DBTR_ALGO_TRANSMISSION;
  s->update = s->transmission ? DBTR_UPDATE_TRANSMISSION : DBTR_UPDATE_EMISSION;
  s->n_subsets = prob->n_subsets;
  s->n_partial = s->n_views * (size_t)s->n_rows * (size_t)s->col_tiles;
  s->subset_start = (size_t *)malloc((prob->n_subsets + 1) * sizeof(size_t));
  int rc = s->subset_start ? use(s) : dbtr_err(DBTR_ENOMEM, "GPU backend: out of memory");
  if (!rc) rc = dbtr_geom_proj_count(g, &s->nproj);
  if (!rc) rc = dbtr_grid_count(grid, &s->nvox);
  if (!rc) rc = check_launch_sizes(s);
  if (!rc) {
    memcpy(s->subset_start, prob->subset_start, (prob->n_subsets + 1) * sizeof(size_t));
    s->sep_possible = sep_possible(g, grid);
    rc = plan(s, prob);
  }
  if (!rc) rc = upload_geometry(s, prob);
  return rc;
}

/* On several GPUs: the parts' slabs, and what the first part keeps on the host to lead them
 * (the schedule, which part projects each view, room for the partial sums). */
static int link_parts(state *s, const dbtr_problem *prob) {
  int np = s->n_parts, p0, p1;
  for (int d = 0; d < np; d++) share(s->nz, d, np, &s->parts[d]->z0, &s->parts[d]->z1);
  size_t n_t = (size_t)s->n_rows * (size_t)s->col_tiles, room;
  int rc = dbtr_size_mul(s->n_views * n_t, (size_t)np + 1, &room, "GPU partial sums");
  if (!rc) rc = dbtr_alloc((void **)&s->partial_host, room, sizeof(double), "GPU partial sums");
  if (!rc) rc = dbtr_alloc((void **)&s->sched_host, s->n_views, sizeof(int), "GPU schedule");
  if (!rc) rc = dbtr_alloc((void **)&s->owner, s->n_views, sizeof(int), "GPU schedule");
  for (size_t sub = 0; sub < prob->n_subsets && !rc; sub++) {
    size_t off = prob->subset_start[sub];
    int n = (int)(prob->subset_start[sub + 1] - off);
    for (int d = 0; d < np; d++) {
      share(n, d, np, &p0, &p1);
      for (int i = p0; i < p1; i++) {
        s->sched_host[off + (size_t)i] = (int)prob->subset_views[off + (size_t)i];
        s->owner[prob->subset_views[off + (size_t)i]] = d;
      }
    }
  }
  return rc;
}

}  // namespace

/* One part per GPU (prob->gpus; all on device 0 with prob->gpu_share), the first leading. */
extern "C" int CREATE_FN(dbtr_backend **out, const dbtr_problem *prob) {
  *out = NULL;
  int rc = dbtr_geom_check(prob->geom, "geometry");
  if (!rc) rc = dbtr_grid_check(prob->grid, prob->geom, "volume grid");
  if (rc) return rc;
  int np = prob->gpus > 1 ? prob->gpus : 1;
  if (np > DBTR_GPUS_MAX) return dbtr_err(DBTR_EINVAL, "GPU backend: %d GPUs asked for, at most %d", np, DBTR_GPUS_MAX);
  dbtr_backend *b = (dbtr_backend *)calloc(1, sizeof *b);
  state *parts[DBTR_GPUS_MAX] = {NULL};
  if (!b) return dbtr_err(DBTR_ENOMEM, "GPU backend: out of memory");
  for (int d = 0; d < np && !rc; d++) rc = part_new(&parts[d], prob, prob->gpu_share ? 0 : d);
  state *s = parts[0];
  if (s) {
    s->n_parts = 0;
    for (int d = 0; d < np && parts[d]; d++) s->parts[s->n_parts++] = parts[d];
  }
  b->impl = s;
  b->destroy = destroy;
  if (!rc && np > 1) rc = link_parts(s, prob);
  if (!rc) rc = use(s);
  if (rc) {
    destroy(b);
    return rc;
  }
  b->precision = MODE_PREC;
  b->load = load;
  b->subset = subset;
  b->get_volume = get_volume;
  b->set_volume = set_volume;
  b->get_projections = get_projections;
  s->common.memory.gpus = np;
  dbtr__gpu_memory_describe(&s->common.memory, b->memory, sizeof b->memory);
  *out = b;
  return 0;
}
