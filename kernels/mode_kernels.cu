/* kernels/mode_kernels.cu: the kernels of one floating-point mode, compiled once per row of
 * recon/modes.def (kernels/CMakeLists.txt passes the row's columns and nvcc flags), and the
 * launch table through which the one host backend (kernels/gpu_host.cu) runs them. The
 * arithmetic is recon/proj_impl.h, shared with the CPU reference: the kernels below only map
 * threads to rays and voxels, and move data; the host plans memory, batches and spreads over
 * GPUs, the same for every mode.
 *
 * Kernels (no atomics; each output element is written by one thread, in a fixed order):
 *   k_rays       one thread per pixel of a list of views: the ray record and path length
 *   k_forward    one thread per pixel of a subset's views: A mu, then the pixel terms and the
 *                data-fit term (block partial sums in a fixed tree)
 *   k_forward_sep the same for separable views, from the tables' crossings: one thread per
 *                detector column and a few rows (kernels/modes.h, MODE_FWD_ROWS)
 *   k_reduce     one block: the partial sums in a fixed order
 *   k_gather_sep one thread per MODE_GATHER_COLS voxel columns and group of DBTR_GROUP voxel
 *                rows of a slice: the subset's back projection and the voxel update, for
 *                separable views (kernels/separable.h)
 *   k_gather     one thread per 2 x 2 voxels of a slice: the same for any other geometry
 *   k_sep_*      once at set-up, the separable tables: the steps of kernels/separable.h's
 *                builder, each a grid-stride loop over the step's elements
 *   k_fill       the uniform start volume
 * The thread layout, the block shapes and the order of the blocks are kernels/layout.h's. */
#define DBTR_HD __device__
#include <cuda_runtime.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "kernels/cuda_util.h"
#include "kernels/gpu_internal.h"
#include "kernels/layout.h"
#include "recon/crmath.h"
#include "recon/fit.h"
#include "recon/rays.h"

#include "kernels/modes.h"
typedef DBTR_P_T T;
typedef DBTR_P_R R; /* the geometry's type: ray records, crossings, forward sums (double for float) */
typedef DBTR_P_VIEW VIEW;
typedef DBTR_P_FOOT FOOT;
typedef DBTR_P_CROSS CROSS;
typedef DBTR_P_SLOTW SLOTW;
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
#define DBTR_T DBTR_P_T
#define DBTR_FN(name) g_##name
#define DBTR_VIEW DBTR_P_VIEW
#define DBTR_FOOT DBTR_P_FOOT
#define DBTR_LOAD_RAY MODE_LOAD_RAY
#if DBTR_P_ID == DBTR_P_ID_DD
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
#define DBTR_T DBTR_P_T
#define DBTR_R DBTR_P_R
#define DBTR_FN(name) g_##name
#define DBTR_FOOT DBTR_P_FOOT
#define DBTR_CROSS DBTR_P_CROSS
#define DBTR_SLOTW_T DBTR_P_SLOTW
#define DBTR_GROUPW MODE_GROUPW
#define DBTR_GATHER_COLS MODE_GATHER_COLS
#define DBTR_SEP_TABLES sep_tables
#define DBTR_LOAD_PAIR MODE_LOAD_PAIR
#define DBTR_LOAD_GROUP MODE_LOAD4
#if MODE_GATHER_ADDS_ZEROS
#define DBTR_FINITE(a) isfinite(a)
#endif
#ifdef DBTR_P_SAME_BITS
#define DBTR_OF_INT(i) DBTR_P_OF_INT(i)
#define DBTR_EQ(a, b) DBTR_P_EQ(a, b)
#define DBTR_SAME_BITS(a, b) DBTR_P_SAME_BITS(a, b)
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

/* The records of detector rows [r0, r1) of views list[0 .. n) go to slots 0 .. n of rays and
 * lens, a slot being those rows of one view. */
__global__ void k_rays(const VIEW *views, const int *list, size_t n, int r0, int r1, int n_cols, R *rays, T *lens) {
  size_t band = (size_t)(r1 - r0) * (size_t)n_cols;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n * band) return;
  size_t k = i / band, p = i % band;
  lens[i] = ray_of(&views[list[k]], r0 + (int)(p / (size_t)n_cols), (int)(p % (size_t)n_cols), rays + 4 * i);
}

/* Every element of v (n of them) becomes value. */
__global__ void k_fill(T *v, size_t n, T value) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) v[i] = value;
}

/* Fixed-shape trees over one block's values, M of them a thread (value m of every thread, a
 * tree each): the same order on every run. The first m_out sums go to out[m step], m < m_out. */
template <int M>
__device__ void block_sums_store(const double v[M], double *out, size_t step, int m_out) {
  __shared__ double s[M][DBTR_BLOCK];
#pragma unroll
  for (int m = 0; m < M; m++) s[m][threadIdx.x] = v[m];
  __syncthreads();
  for (unsigned w = DBTR_BLOCK / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w)
#pragma unroll
      for (int m = 0; m < M; m++) s[m][threadIdx.x] += s[m][threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    for (int m = 0; m < m_out; m++) out[(size_t)m * step] = s[m][0];
}

__device__ void block_sum_store(double v, double *out) { block_sums_store<1>(&v, out, 0, 1); }

/* A pixel's projection l (from its forward sum) written, with TERMS its pixel terms (e, pairs)
 * and its term of the data fit returned: the end of both forward projections. */
template <int TERMS>
__device__ double pixel_end(T l, size_t p, size_t pe, T len, const T *y, const T *i0, int transmission, T *proj, T *e) {
  proj[p] = l;
  if constexpr (!TERMS) return 0.0; /* a plain projection: no pixel terms, no data fit */
  if (transmission) {
    T yhat = g_transmission_pixel(l, y[p], i0[p], len, &e[2 * pe], &e[2 * pe + 1]);
    return dbtr_fit_transmission(DBTR_P_TO_D(y[p]), DBTR_P_TO_D(l), DBTR_P_TO_D(yhat));
  }
  g_emission_pixel(l, y[p], len, &e[2 * pe], &e[2 * pe + 1]);
  return dbtr_fit_emission(DBTR_P_TO_D(y[p]), DBTR_P_TO_D(l));
}

/* One block per DBTR_BLOCK pixels of a detector row of one view; the n views of the same
 * stretch are consecutive blocks. e holds the pixel terms as pairs (e1, e2). The ray records
 * and lengths are read from rays and lens, or with SETUP (batched: they are not all there)
 * made here from the views' geometry, geom. The launch covers the detector rows from the one
 * of block row t0 / col_tiles on (all of them on one GPU, a band of them on each of several),
 * and each block's partial sum goes where a launch over every row would put it. The buffers
 * hold rows of every view (one GPU: all of them; several: kernels/gpu_host.cu, "bands"): rays,
 * lens, y, i0 and proj the p_rows from plo, e the e_rows from elo; vol holds the rows of each
 * slice that the band's rays reach, `slice` elements a slice, and points where row 0 of slice
 * 0 would lie. Separable views take k_forward_sep instead (below) where its shared memory fits
 * (forward_sep_shared); this one serves the rest.
 * Bound to 6 blocks a multiprocessor (40 registers): the sample loads wait on memory, and the
 * warps that hide them matter more than the few values spilled (outside the slice loop, but for
 * one in double's). On the H100 it took the thesis forward projection from 5.35 to 5.27 ms in
 * fast and from 7.69 to 5.80 in double, whose loop had grown to 54 registers (4 blocks); at 5
 * blocks every mode was slower. */
template <int SETUP, int TERMS>
__global__ void __launch_bounds__(DBTR_BLOCK, 6)
    k_forward(const int *views, int n, int n_cols, int col_tiles, int plo, int p_rows, int elo, int e_rows,
              const R *rays, const T *lens, const T *vol, size_t slice, int nx, int ny, int nz, const T *y,
              const T *i0, int transmission, T *proj, T *e, double *partial, unsigned t0, const VIEW *geom) {
  int vi = (int)(blockIdx.x % (unsigned)n);
  unsigned t = t0 + blockIdx.x / (unsigned)n;
  int c = (int)(t % (unsigned)col_tiles) * DBTR_BLOCK + (int)threadIdx.x, r = (int)(t / (unsigned)col_tiles);
  double fit = 0.0;
  if (c < n_cols) {
    size_t k = (size_t)views[vi];
    size_t p = (k * (size_t)p_rows + (size_t)(r - plo)) * (size_t)n_cols + (size_t)c;
    size_t pe = (k * (size_t)e_rows + (size_t)(r - elo)) * (size_t)n_cols + (size_t)c;
    R ray[4];
    T len;
    if constexpr (SETUP) {
      len = ray_of(&geom[views[vi]], r, c, ray);
    } else {
      MODE_LOAD_RAY(ray, rays + 4 * p);
      len = lens[p];
    }
    fit = pixel_end<TERMS>(g_forward_ray(ray, len, vol, nx, ny, nz, slice), p, pe, len, y, i0, transmission, proj, e);
  }
  if constexpr (TERMS) block_sum_store(fit, &partial[t * (unsigned)n + (unsigned)vi]);
}

/* A crossing of the tables, in one vector load where it is 8 or 16 bytes (float, double): it
 * moves bits and computes nothing. */
__device__ __forceinline__ CROSS load_cross(const CROSS *p) {
  CROSS c;
  if constexpr (sizeof(CROSS) == 8) {
    uint2 v = __ldg((const uint2 *)p);
    memcpy(&c, &v, sizeof c);
  } else if constexpr (sizeof(CROSS) == 16) {
    uint4 v = __ldg((const uint4 *)p);
    memcpy(&c, &v, sizeof c);
  } else {
    c = *p;
  }
  return c;
}

/* One detector row's crossing of one slice, as k_forward_sep keeps it in shared memory: the
 * offset iy nx of its lower voxel row, its axis weights (lower u, upper w), and flags f: 0
 * where the crossing lies outside the grid's band (the slice gives the row no sample), else
 * 1 | y_lo << 1 | y_hi << 2 (recon/proj_impl.h, corners), | ROW_RUN where the block's rows
 * all cross the slice and their lower voxel rows are consecutive, iy, iy + 1, ... (a run:
 * the upper corners of one row are the lower corners of the next). */
struct row_cross {
  int o, f;
  T u, w;
};
enum { ROW_INSIDE = 7, ROW_RUN = 8 };

/* A ray's forward sum so far plus its sample of slice s: the ray of row q and of the column
 * whose crossing is a (lower weight ux), with the corners' flags as given (all 1 where every
 * corner is inside: the tests are then left out). q.o + a.i, the lower corner, lies within the
 * slice's rows. */
__device__ __forceinline__ R row_sample_add(R sum, const T *s, CROSS a, T ux, row_cross q, int nx, int x_lo, int x_hi,
                                            int y_lo, int y_hi) {
  T v[4];
  g_corners(s + (q.o + a.i), nx, x_lo, x_hi, y_lo, y_hi, v);
  return g_sample_add(sum, g_bilinear_mix(ux, q.u, a.w, q.w, v));
}

/* A run's forward sums so far plus their samples of slice s (every corner inside the grid):
 * the rays of rows q (a run, ROW_RUN) and of the column whose crossing is a (lower weight
 * ux). The MODE_FWD_ROWS + 1 voxel rows are read once, each shared by two rows' samples, and
 * each sample is row_sample_add's, from the same values. */
__device__ __forceinline__ void run_add(R sum[MODE_FWD_ROWS], const T *s, CROSS a, T ux,
                                        const row_cross q[MODE_FWD_ROWS], int nx) {
  const T *p = s + (q[0].o + a.i);
  T lo[MODE_FWD_ROWS + 1], hi[MODE_FWD_ROWS + 1];
#pragma unroll
  for (int r = 0; r <= MODE_FWD_ROWS; r++) {
    lo[r] = p[(ptrdiff_t)r * nx];
    hi[r] = p[(ptrdiff_t)r * nx + 1];
  }
#pragma unroll
  for (int j = 0; j < MODE_FWD_ROWS; j++) {
    T v[4] = {lo[j], hi[j], lo[j + 1], hi[j + 1]};
    sum[j] = g_sample_add(sum[j], g_bilinear_mix(ux, q[j].u, a.w, q[j].w, v));
  }
}

/* The forward projection of separable views (the tables' sep.on), from the crossings in the
 * tables (recon/separable.h): the crossing of the ray of pixel (r, c) with slice z is column
 * c's along x and row r's along y, the ones forward_ray computes from the pixel's record, bit
 * for bit (the set-up checked it). A thread takes column c of MODE_FWD_ROWS rows from rb
 * (kernels/modes.h), a block DBTR_BLOCK columns; the n views of the same stretch are
 * consecutive blocks. The block first puts its rows' crossings of every slice in shared memory
 * (row_cross, with their lower weights and flags); then for each slice a thread looks its
 * column's crossing up once and samples the slice for each of its rows; where the rows are a
 * run (ROW_RUN), it reads their MODE_FWD_ROWS + 1 voxel rows once (run_add): 10 loads for 4
 * samples instead of 16. Each ray gets forward_ray's terms in its order (slices upward, those
 * outside the band left out, as the CPU's forward_sep does), each term from the same functions
 * and voxel values, so its bits are forward_ray's; where all four corners lie inside the grid
 * (nearly every sample) the corner tests are left out, which changes no value read. The launch
 * covers detector rows [r0, r1); the buffers are k_forward's, and each row's partial sum of the
 * data fit goes where k_forward puts it (a tree over the same DBTR_BLOCK pixels). */
template <int SETUP, int TERMS>
__global__ void __launch_bounds__(DBTR_BLOCK, MODE_FWD_BLOCKS)
    k_forward_sep(const int *views, int n, int n_cols, int n_rows, int col_tiles, int r0, int r1, int plo,
                  int p_rows, int elo, int e_rows, const CROSS *cx, const CROSS *cy, const T *lens, const T *vol,
                  size_t slice, int nx, int ny, int nz, const T *y, const T *i0, int transmission, T *proj, T *e,
                  double *partial, const VIEW *geom) {
  extern __shared__ __align__(16) unsigned char fwd_shared[];
  row_cross *rows = (row_cross *)fwd_shared; /* (nz, MODE_FWD_ROWS) */
  int vi = (int)(blockIdx.x % (unsigned)n);
  unsigned t = blockIdx.x / (unsigned)n;
  int ct = (int)(t % (unsigned)col_tiles), rb = r0 + (int)(t / (unsigned)col_tiles) * MODE_FWD_ROWS;
  int c = ct * DBTR_BLOCK + (int)threadIdx.x, m = r1 - rb < MODE_FWD_ROWS ? r1 - rb : MODE_FWD_ROWS;
  size_t k = (size_t)views[vi];
  const CROSS *cyk = cy + k * (size_t)nz * (size_t)n_rows, *cxk = cx + k * (size_t)nz * (size_t)n_cols;
  for (int i = (int)threadIdx.x; i < MODE_FWD_ROWS * nz; i += DBTR_BLOCK) {
    int z = i / MODE_FWD_ROWS, j = i % MODE_FWD_ROWS, run = m == MODE_FWD_ROWS;
    const CROSS *cz = cyk + (size_t)z * (size_t)n_rows + (size_t)rb;
    for (int b = 0; b < m && run; b++) run = cz[b].i != DBTR_CROSS_NONE && cz[b].i == cz[0].i + b;
    row_cross q;
    q.o = q.f = 0;
    q.u = q.w = DBTR_P_ZERO;
    if (j < m) {
      CROSS a = cz[j];
      if (a.i != DBTR_CROSS_NONE) {
        q.o = a.i * nx;
        q.f = 1 | (a.i >= 0) << 1 | (a.i < ny - 1) << 2 | (run ? ROW_RUN : 0);
        q.u = g_lower_weight(a.w);
        q.w = a.w;
      }
    }
    rows[i] = q;
  }
  __syncthreads();
  R sum[MODE_FWD_ROWS];
#pragma unroll
  for (int j = 0; j < MODE_FWD_ROWS; j++) sum[j] = g_sum_zero();
  if (c < n_cols) {
    const T *s = vol; /* advanced a slice a step */
    const CROSS *ca = cxk + c;
    CROSS a = load_cross(ca), next = a;
    for (int z = 0; z < nz; z++, s += slice, a = next) {
      if (z + 1 < nz) next = load_cross(ca += n_cols); /* the next slice's, while this one's samples load */
      if (a.i == DBTR_CROSS_NONE) continue;
      row_cross q[MODE_FWD_ROWS];
      int f = ROW_INSIDE | ROW_RUN;
#pragma unroll
      for (int j = 0; j < MODE_FWD_ROWS; j++) {
        q[j] = rows[z * MODE_FWD_ROWS + j];
        f &= q[j].f;
      }
      T ux = g_lower_weight(a.w);
      int x_lo = a.i >= 0, x_hi = a.i < nx - 1;
      if (x_lo && x_hi && f == (ROW_INSIDE | ROW_RUN)) { /* a run, every corner inside */
        run_add(sum, s, a, ux, q, nx);
      } else if (x_lo && x_hi && (f & ROW_INSIDE) == ROW_INSIDE) { /* every corner of every row inside */
#pragma unroll
        for (int j = 0; j < MODE_FWD_ROWS; j++) sum[j] = row_sample_add(sum[j], s, a, ux, q[j], nx, 1, 1, 1, 1);
      } else {
#pragma unroll
        for (int j = 0; j < MODE_FWD_ROWS; j++)
          if (q[j].f)
            sum[j] = row_sample_add(sum[j], s, a, ux, q[j], nx, x_lo, x_hi, (q[j].f >> 1) & 1, (q[j].f >> 2) & 1);
      }
    }
  }
  double fit[MODE_FWD_ROWS];
#pragma unroll
  for (int j = 0; j < MODE_FWD_ROWS; j++) {
    fit[j] = 0.0;
    if (c >= n_cols || j >= m) continue;
    int r = rb + j;
    size_t p = (k * (size_t)p_rows + (size_t)(r - plo)) * (size_t)n_cols + (size_t)c;
    size_t pe = (k * (size_t)e_rows + (size_t)(r - elo)) * (size_t)n_cols + (size_t)c;
    T len;
    if constexpr (SETUP) {
      R ray[4];
      len = ray_of(&geom[k], r, c, ray);
    } else {
      len = lens[p];
    }
    fit[j] = pixel_end<TERMS>(g_forward_end(sum[j], len), p, pe, len, y, i0, transmission, proj, e);
  }
  size_t tn = (size_t)col_tiles * (size_t)n; /* the partial sums of a detector row */
  if constexpr (TERMS)
    block_sums_store<MODE_FWD_ROWS>(fit, &partial[(size_t)rb * tn + (size_t)ct * (size_t)n + (size_t)vi], tn, m);
}

/* The back projector's input (g_back_pixel) of views k0 .. k0 + n of the plain projections
 * proj, as the gathers' pairs in e (the second term 0, which the update DBTR_UPDATE_BACK
 * ignores); the path lengths are slot i's (local: records made for these views alone) or
 * view k0 + i's. */
__global__ void k_back_terms(const T *proj, const T *lens, int local, size_t k0, size_t n, size_t npix, T *e) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n * npix; i += (size_t)gridDim.x * blockDim.x) {
    size_t p = k0 * npix + i;
    e[2 * p] = g_back_pixel(proj[p], lens[local ? i : p]);
    e[2 * p + 1] = DBTR_P_ZERO;
  }
}

__global__ void k_reduce(const double *partial, size_t n, double *out) {
  double acc = 0.0;
  for (size_t i = threadIdx.x; i < n; i += DBTR_BLOCK) acc += partial[i];
  block_sum_store(acc, out);
}

/* The update of voxel j from its two sums; update is a dbtr_update (the kernels take it as an
 * int): the plain back projection's a1, or ML-EM's update. */
__device__ void update_voxel(T *vol, size_t j, T a1, T a2, int update) {
  vol[j] = update == DBTR_UPDATE_BACK           ? a1
           : update == DBTR_UPDATE_TRANSMISSION ? g_transmission_voxel(vol[j], a1, a2)
                                                : g_emission_voxel(vol[j], a1, a2);
}

/* The voxel columns of one block of the separable gather (kernels/layout.h). */
enum { GATHER_TILE_X = DBTR_GS_X * MODE_GATHER_COLS };

/* The separable gather in the mode's order (recon/modes.def's gather column). */
#if MODE_GATHER_FACTORED
#define MODE_GATHER_SEP g_gather_sep_factored
#else
#define MODE_GATHER_SEP g_gather_sep
#endif

/* The sums a1, a2 of k_gather_sep's thread (below) over views views[0 .. n), from 0, through
 * the mode's gather (MODE_GATHER_SEP) with or without skip_zero (a constant at each call). */
__device__ __forceinline__ void gather_sep_views(const int *views, int n, const sep_tables &sep, const T *e, int elo,
                                                 int e_rows, int nx, int x0, int gi, int z, int nz, int n_cols,
                                                 int skip_zero, T a1[MODE_GATHER_COLS][DBTR_GROUP],
                                                 T a2[MODE_GATHER_COLS][DBTR_GROUP]) {
#pragma unroll
  for (int a = 0; a < MODE_GATHER_COLS; a++)
#pragma unroll
    for (int b = 0; b < DBTR_GROUP; b++) a1[a][b] = a2[a][b] = DBTR_P_ZERO;
  for (int i = 0; i < n; i++) {
    size_t k = (size_t)views[i], kz = k * (size_t)nz + (size_t)z;
    dbtr_slots gs = load_slots(&sep.gs[kz * (size_t)sep.n_groups + (size_t)gi]), xs[MODE_GATHER_COLS];
    T xw[MODE_GATHER_COLS][DBTR_SLOTS];
    int any = 0;
#pragma unroll
    for (int a = 0; a < MODE_GATHER_COLS; a++) {
      int x = x0 + a * DBTR_GS_X;
      T w4[DBTR_SLOTW];
      xs[a] = DBTR_NO_SLOTS;
      for (int j = 0; j < DBTR_SLOTW; j++) w4[j] = DBTR_P_ZERO;
      if (x < nx) {
        xs[a] = load_slots(&sep.xs[kz * (size_t)nx + (size_t)x]);
        MODE_LOAD4(w4, sep.xw[kz * (size_t)nx + (size_t)x].w);
      }
#pragma unroll
      for (int j = 0; j < DBTR_SLOTS; j++) xw[a][j] = w4[j];
      any |= xs[a].n;
    }
    if (!any || gs.n == 0) continue;
    gs.p0 -= elo; /* the rows of e held, from elo */
    MODE_GATHER_SEP(xs, xw, gs, &sep.gw[kz * (size_t)sep.n_groups + (size_t)gi],
                    e + 2 * k * (size_t)e_rows * (size_t)n_cols, n_cols, skip_zero, a1, a2);
  }
}

/* The gather back projection with the update, for separable views: one thread per
 * MODE_GATHER_COLS voxel columns (x, x + DBTR_GS_X, ...) and group of DBTR_GROUP voxel rows of
 * one slice; a block GATHER_TILE_X columns, DBTR_SEP_GROUPS groups and DBTR_GS_Z
 * consecutive slices, warp w the group w / DBTR_GS_Z of slice w % DBTR_GS_Z (kernels/layout.h);
 * consecutive blocks are the slices of one such tile. Each view's slots and weights come from
 * the tables, and each voxel's sums are gather_view's, bit for bit (gather_sep), or in the
 * modes whose gather is factored (recon/modes.def) that order's (gather_sep_factored). The
 * voxels are rows [y0, y1) (y0 a multiple of DBTR_GROUP) of every slice: all of them on one
 * GPU, on each of several its band of rows. vol holds the v_rows rows of each slice from vlo, e the e_rows
 * detector rows of each view from elo. */
__global__ void __launch_bounds__(DBTR_GS_X * DBTR_GS_Y, MODE_GATHER_BLOCKS)
    k_gather_sep(const int *views, int n, sep_tables sep, const T *e, int elo, int e_rows, T *vol, int vlo, int v_rows,
                 int nx, int y0, int y1, int nz, int n_cols, int tiles_x, int update) {
  unsigned zt = (unsigned)DBTR_TILES(nz, DBTR_GS_Z), t = blockIdx.x / zt;
  int z = (int)(blockIdx.x % zt) * DBTR_GS_Z + (int)threadIdx.y % DBTR_GS_Z;
  int x0 = (int)(t % (unsigned)tiles_x) * GATHER_TILE_X + (int)threadIdx.x;
  int gi = y0 / DBTR_GROUP + (int)(t / (unsigned)tiles_x) * DBTR_SEP_GROUPS + (int)threadIdx.y / DBTR_GS_Z;
  if (x0 >= nx || gi >= DBTR_N_GROUPS(y1) || z >= nz) return;
  T a1[MODE_GATHER_COLS][DBTR_GROUP], a2[MODE_GATHER_COLS][DBTR_GROUP];
  int tested = 1; /* whether the sums must be made with the test of each zero weight */
#if MODE_GATHER_ADDS_ZEROS
  /* Without the test, then with it where a sum shows that a value read was not finite
   * (gather_sep, sums_finite): the same sums. */
  gather_sep_views(views, n, sep, e, elo, e_rows, nx, x0, gi, z, nz, n_cols, 0, a1, a2);
  tested = !g_sums_finite(a1, a2);
#endif
  if (tested) gather_sep_views(views, n, sep, e, elo, e_rows, nx, x0, gi, z, nz, n_cols, 1, a1, a2);
#pragma unroll
  for (int a = 0; a < MODE_GATHER_COLS; a++)
#pragma unroll
    for (int b = 0; b < DBTR_GROUP; b++) {
      int x = x0 + a * DBTR_GS_X, y = gi * DBTR_GROUP + b;
      if (x < nx && y < y1)
        update_voxel(vol, ((size_t)z * (size_t)v_rows + (size_t)(y - vlo)) * (size_t)nx + (size_t)x, a1[a][b],
                     a2[a][b], update);
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
        if (!DBTR_P_IS0(wt)) g_accumulate(wt, v1, v2, 1, &a1[v], &a2[v]);
      }
    }
}

/* Blocks of DBTR_GX x DBTR_GY threads; consecutive blocks are the slices of one tile, over voxel
 * rows [band_y0, band_y1) (band_y0 a multiple of DBTR_MICRO), as k_gather_sep; but every buffer
 * is whole (on several GPUs each holds the whole problem for this gather). The ray records are
 * view views[i]'s (local 0) or slot i's (local 1). With carry (2 n_vox: the sums a1, then a2),
 * the views are one batch of a longer list: the sums start from carry unless first, and go back
 * to it unless last; only the last batch updates the voxel. */
__global__ void k_gather(const int *views, int n, const FOOT *foot, const R *rays, int local, const T *e, T *vol, int nx,
                         int ny, int band_y0, int band_y1, int nz, int n_rows, int n_cols, int tiles_x, int update,
                         T *carry, int first, int last) {
  int z = (int)(blockIdx.x % (unsigned)nz);
  unsigned t = blockIdx.x / (unsigned)nz;
  int x0 = DBTR_MICRO * ((int)(t % (unsigned)tiles_x) * DBTR_GX + (int)threadIdx.x);
  int y0 = band_y0 + DBTR_MICRO * ((int)(t / (unsigned)tiles_x) * DBTR_GY + (int)threadIdx.y);
  if (x0 >= nx || y0 >= band_y1) return;
  size_t npix = (size_t)n_rows * (size_t)n_cols, nvox = (size_t)nx * (size_t)ny * (size_t)nz;
  T a1[DBTR_MICRO * DBTR_MICRO], a2[DBTR_MICRO * DBTR_MICRO];
#pragma unroll
  for (int v = 0; v < DBTR_MICRO * DBTR_MICRO; v++) {
    int x = x0 + v % DBTR_MICRO, y = y0 + v / DBTR_MICRO;
    size_t j = ((size_t)z * (size_t)ny + (size_t)y) * (size_t)nx + (size_t)x;
    int from_carry = carry && !first && x < nx && y < ny;
    a1[v] = from_carry ? carry[j] : DBTR_P_ZERO;
    a2[v] = from_carry ? carry[nvox + j] : DBTR_P_ZERO;
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

/* One kernel per step of the separable tables' builder (kernels/separable.h), each a
 * grid-stride loop over the step's elements (DBTR_SETUP_FOR), launched in the builder's order
 * by sep_views and sep_rest. The builder fills the tables with the shared functions and checks,
 * for every pixel and every voxel of every view and slice, that they reproduce what the
 * per-pixel gather computes: the ray records' x and y parts (ray_separable), and each voxel's
 * candidate box (slots_match); every box and group union must also fit its slots. */
__global__ void k_sep_rays(const R *rays, size_t n_views, int n_rows, int n_cols, int *flag) {
  g_sep_rays(rays, n_views, n_rows, n_cols, flag);
}

__global__ void k_sep_cross(const R *rays, size_t n_views, int nz, int n_rows, int n_cols, int nx, int ny, CROSS *cx,
                            CROSS *cy) {
  g_sep_cross(rays, n_views, nz, n_rows, n_cols, nx, ny, cx, cy);
}

__global__ void k_sep_slots(const FOOT *foot, size_t n_views, int nz, int n_rows, int n_cols, int nx, int ny,
                            sep_tables sep) {
  g_sep_slots(foot, n_views, nz, n_rows, n_cols, nx, ny, sep);
}

__global__ void k_sep_check(const FOOT *foot, size_t n_views, int nz, int n_rows, int n_cols, int nx, int ny,
                            sep_tables sep) {
  g_sep_check(foot, n_views, nz, n_rows, n_cols, nx, ny, sep);
}

__global__ void k_sep_groups(size_t n_views, int nz, int ny, sep_tables sep) { g_sep_groups(n_views, nz, ny, sep); }

/* On several GPUs, whether the rows a part holds (kernels/gpu_host.cu, "bands") are every row
 * its work reads: for each crossing of a detector row in [r0, r1) that the forward projection
 * may sample (the row's crossing inside the grid's band), the voxel rows of its two corners
 * that lie in the grid are in [vlo, vhi); and each row slot of the groups of voxel rows
 * [y0, y1) is in [elo, ehi). Where one is not, flag is set to 2. The held rows come from the
 * geometry, with a margin; this checks them against the tables the kernels will read. */
__global__ void k_sep_bands(size_t n_views, int nz, int n_rows, int ny, sep_tables sep, int r0, int r1, int vlo,
                            int vhi, int y0, int y1, int elo, int ehi) {
  size_t rows = (size_t)(r1 - r0), g0 = (size_t)(y0 / DBTR_GROUP), groups = (size_t)DBTR_N_GROUPS(y1) - g0;
  size_t per = rows + groups;
  DBTR_SETUP_FOR(i, n_views * (size_t)nz * per) {
    size_t kz = i / per, q = i % per;
    if (q < rows) {
      int iy = sep.cy[kz * (size_t)n_rows + (size_t)r0 + q].i;
      if (iy != DBTR_CROSS_NONE && ((iy >= 0 && iy < vlo) || (iy + 1 < ny && iy + 1 >= vhi))) *sep.flag = 2;
    } else {
      dbtr_slots g = sep.gs[kz * (size_t)sep.n_groups + g0 + (q - rows)];
      if (g.n > 0 && (g.p0 < elo || g.p0 + g.n > ehi)) *sep.flag = 2;
    }
  }
}

/* ---- the launch table (kernels/gpu_internal.h): the host's untyped buffers as this mode's
 * types, and each step's launches with their grids ---- */

typedef dbtr__gpu_part part;

/* The host's tables, member by member, as this mode's. */
sep_tables sep_of(const dbtr__gpu_sep *t) {
  sep_tables s;
  s.on = t->on;
  s.n_groups = t->n_groups;
  s.cx = (CROSS *)t->cx;
  s.cy = (CROSS *)t->cy;
  s.xs = t->xs;
  s.ys = t->ys;
  s.gs = t->gs;
  s.xw = (SLOTW *)t->xw;
  s.yw = (SLOTW *)t->yw;
  s.gw = (GROUPW *)t->gw;
  s.flag = t->flag;
  return s;
}

/* View k and a footprint in this mode's types: the CPU reference's conversions (recon/cpu.c),
 * so both start from the same bits. */
void view_of(const dbtr_geom *g, const dbtr_grid *grid, size_t k, void *out) { DBTR_P_VIEW_OF(g, grid, k, (VIEW *)out); }
void foot_of(const dbtr_footprint_d *in, void *out) { DBTR_P_FOOT_OF(in, (FOOT *)out); }

int fill(void *v, size_t n, double value) {
  k_fill<<<DBTR_SETUP_BLOCKS, DBTR_BLOCK>>>((T *)v, n, DBTR_P_FROM_D(value));
  DBTR_CUDA_LAUNCHED();
  return 0;
}

int make_rays(const part *s, const int *list, size_t n, int r0, int r1) {
  unsigned blocks = (unsigned)DBTR_TILES(n * (size_t)(r1 - r0) * (size_t)s->n_cols, (size_t)DBTR_BLOCK);
  if (blocks == 0) return 0; /* a part without detector rows */
  k_rays<<<blocks, DBTR_BLOCK>>>((const VIEW *)s->views, list, n, r0, r1, s->n_cols, (R *)s->rays, (T *)s->lens);
  DBTR_CUDA_LAUNCHED();
  return 0;
}

int sep_views(const part *s, size_t k0, size_t nb) {
  const unsigned grid = DBTR_SETUP_BLOCKS;
  size_t kz = k0 * (size_t)s->nz;
  k_sep_rays<<<grid, DBTR_BLOCK>>>((const R *)s->rays, nb, s->n_rows, s->n_cols, s->sep.flag);
  DBTR_CUDA_LAUNCHED();
  k_sep_cross<<<grid, DBTR_BLOCK>>>((const R *)s->rays, nb, s->nz, s->n_rows, s->n_cols, s->nx, s->ny,
                                    (CROSS *)s->sep.cx + kz * (size_t)s->n_cols,
                                    (CROSS *)s->sep.cy + kz * (size_t)s->n_rows);
  DBTR_CUDA_LAUNCHED();
  return 0;
}

int sep_rest(const part *s) {
  const unsigned grid = DBTR_SETUP_BLOCKS;
  const FOOT *foot = (const FOOT *)s->foot;
  sep_tables t = sep_of(&s->sep);
  k_sep_slots<<<grid, DBTR_BLOCK>>>(foot, s->n_views, s->nz, s->n_rows, s->n_cols, s->nx, s->ny, t);
  DBTR_CUDA_LAUNCHED();
  k_sep_check<<<grid, DBTR_BLOCK>>>(foot, s->n_views, s->nz, s->n_rows, s->n_cols, s->nx, s->ny, t);
  DBTR_CUDA_LAUNCHED();
  k_sep_groups<<<grid, DBTR_BLOCK>>>(s->n_views, s->nz, s->ny, t);
  DBTR_CUDA_LAUNCHED();
  return 0;
}

int sep_bands(const part *s) {
  k_sep_bands<<<DBTR_SETUP_BLOCKS, DBTR_BLOCK>>>(s->n_views, s->nz, s->n_rows, s->ny, sep_of(&s->sep), s->r0, s->r1,
                                                 s->vlo, s->vhi, s->y0, s->y1, s->elo, s->ehi);
  DBTR_CUDA_LAUNCHED();
  return 0;
}

/* The shared memory k_forward_sep takes for part s, or 0 where it does not serve: where its
 * rows' crossings of every slice are more than a block may take beside its static part without
 * asking (48 KiB), or where a slice's offsets do not fit an int. Then k_forward runs. */
size_t forward_sep_shared(const part *s) {
  size_t bytes = (size_t)MODE_FWD_ROWS * (size_t)s->nz * sizeof(row_cross);
  if (!s->sep.on || (size_t)s->nx * ((size_t)s->ny + 1) > (size_t)INT_MAX) return 0;
  return bytes + (size_t)MODE_FWD_ROWS * DBTR_BLOCK * sizeof(double) <= 48 * 1024 ? bytes : 0;
}

/* One launch of the forward projection's instance <SETUP, TERMS> over detector rows [r0, r1) of
 * a list of n views: k_forward_sep where the tables serve, else k_forward. */
template <int SETUP, int TERMS>
void launch_forward(const part *s, const int *views, int n, int r0, int r1) {
  /* Where row 0 of slice 0 would lie: the kernels read only rows from vlo (k_sep_bands). */
  const T *vol = (const T *)s->vol - (ptrdiff_t)s->vlo * (ptrdiff_t)s->nx;
  size_t slice = (size_t)(s->vhi - s->vlo) * (size_t)s->nx, shared = forward_sep_shared(s);
  const T *lens = SETUP ? NULL : (const T *)s->lens;
  if (shared) {
    unsigned blocks = (unsigned)n * (unsigned)DBTR_TILES(r1 - r0, MODE_FWD_ROWS) * (unsigned)s->col_tiles;
    k_forward_sep<SETUP, TERMS><<<blocks, DBTR_BLOCK, shared>>>(
        views, n, s->n_cols, s->n_rows, s->col_tiles, r0, r1, s->plo, s->phi - s->plo, s->elo, s->ehi - s->elo,
        (const CROSS *)s->sep.cx, (const CROSS *)s->sep.cy, lens, vol, slice, s->nx, s->ny, s->nz, (const T *)s->y,
        (const T *)s->i0, s->transmission, (T *)s->proj, (T *)s->e, s->partial, (const VIEW *)s->views);
    return;
  }
  unsigned blocks = (unsigned)n * (unsigned)(r1 - r0) * (unsigned)s->col_tiles;
  k_forward<SETUP, TERMS><<<blocks, DBTR_BLOCK>>>(
      views, n, s->n_cols, s->col_tiles, s->plo, s->phi - s->plo, s->elo, s->ehi - s->elo,
      SETUP ? NULL : (const R *)s->rays, lens, vol, slice, s->nx, s->ny, s->nz, (const T *)s->y, (const T *)s->i0,
      s->transmission, (T *)s->proj, (T *)s->e, s->partial, (unsigned)r0 * (unsigned)s->col_tiles,
      (const VIEW *)s->views);
}

int forward(const part *s, const int *views, int n, int r0, int r1, int setup, int terms) {
  if (setup && terms)
    launch_forward<1, 1>(s, views, n, r0, r1);
  else if (setup)
    launch_forward<1, 0>(s, views, n, r0, r1);
  else if (terms)
    launch_forward<0, 1>(s, views, n, r0, r1);
  else
    launch_forward<0, 0>(s, views, n, r0, r1);
  DBTR_CUDA_LAUNCHED();
  return 0;
}

int back_terms(const part *s, const void *proj, size_t k0, size_t n, int local) {
  k_back_terms<<<DBTR_SETUP_BLOCKS, DBTR_BLOCK>>>((const T *)proj, (const T *)s->lens, local, k0, n, s->npix, (T *)s->e);
  DBTR_CUDA_LAUNCHED();
  return 0;
}

int reduce_fit(const part *s, int n) {
  k_reduce<<<1, DBTR_BLOCK>>>(s->partial, (size_t)n * (size_t)s->n_rows * (size_t)s->col_tiles, s->fit);
  DBTR_CUDA_LAUNCHED();
  return 0;
}

int gather_sep(const part *s, const int *views, int n) {
  int tiles_x = DBTR_TILES(s->nx, GATHER_TILE_X);
  int tiles_y = DBTR_TILES(DBTR_N_GROUPS(s->y1) - s->y0 / DBTR_GROUP, DBTR_SEP_GROUPS);
  unsigned blocks = (unsigned)DBTR_TILES(s->nz, DBTR_GS_Z) * (unsigned)tiles_x * (unsigned)tiles_y;
  k_gather_sep<<<blocks, dim3(DBTR_GS_X, DBTR_GS_Y, 1)>>>(
      views, n, sep_of(&s->sep), (const T *)s->e, s->elo, s->ehi - s->elo, (T *)s->vol, s->vlo, s->vhi - s->vlo, s->nx,
      s->y0, s->y1, s->nz, s->n_cols, tiles_x, s->update);
  DBTR_CUDA_LAUNCHED();
  return 0;
}

int gather_pixels(const part *s, const int *views, int n, int local, void *carry, int first, int last) {
  int tiles_x = DBTR_TILES(s->nx, DBTR_TILE_X), tiles_y = DBTR_TILES(s->y1 - s->y0, DBTR_TILE_Y);
  unsigned blocks = (unsigned)s->nz * (unsigned)tiles_x * (unsigned)tiles_y;
  k_gather<<<blocks, dim3(DBTR_GX, DBTR_GY, 1)>>>(views, n, (const FOOT *)s->foot, (const R *)s->rays, local,
                                                 (const T *)s->e, (T *)s->vol, s->nx, s->ny, s->y0, s->y1, s->nz,
                                                 s->n_rows, s->n_cols, tiles_x, s->update, (T *)carry, first, last);
  DBTR_CUDA_LAUNCHED();
  return 0;
}

const dbtr__gpu_kernels kernels = {
    DBTR_P_PREC,     sizeof(T),     sizeof(R),  sizeof(VIEW), sizeof(FOOT), sizeof(CROSS), sizeof(SLOTW),
    sizeof(GROUPW), view_of,      foot_of,    fill,         make_rays,    sep_views,     sep_rest,
    sep_bands,     forward,       back_terms, reduce_fit,   gather_sep,   gather_pixels};

}  // namespace

/* This row's backend: the one host backend over this mode's kernels. */
extern "C" int CREATE_FN(dbtr_backend **out, const dbtr_problem *prob) { return dbtr__gpu_host_create(out, prob, &kernels); }
