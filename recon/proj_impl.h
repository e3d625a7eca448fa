/* recon/proj_impl.h: the per-sample arithmetic of dbtr, written once.
 *
 * This is the clean reference of every formula the projectors and ML-EM updates compute:
 * ray crossings, bilinear weights, path length, the forward sum of one ray, the gather of
 * one voxel, and the per-pixel and per-voxel updates. The CPU reference (recon/cpu.c) and
 * every CUDA kernel (kernels/) include it; nothing is copied, so the paths cannot drift.
 *
 * It is a template: the includer defines the type and the operations of one
 * floating-point mode, includes this file, and the macros are undefined at the end.
 *   DBTR_T                 float or double
 *   DBTR_FN(name)          the name of a function for this instance
 *   DBTR_VIEW, DBTR_FOOT   dbtr_view_f / dbtr_view_d, dbtr_footprint_f / _d (recon/rays.h)
 *   DBTR_MUL DBTR_ADD DBTR_SUB DBTR_DIV (a, b), DBTR_SQRT DBTR_FLOOR DBTR_EXP (a)
 *   DBTR_FLOOR_BY_SHIFT    optional, 0 or 1: how floor_int computes floor (DBTR_FLOOR unused
 *                          with 1); by default 1, the reference's
 *   DBTR_LOAD_RAY(dst, src)  optional: copies a 4-element ray record (kernels use one
 *                          16-byte vector load); moves bits, computes nothing
 *   DBTR_R, DBTR_GEOM_FN(name), DBTR_R_TO_T(a)
 *                          optional: the type of the geometry (the ray records, the crossings)
 *                          and of the forward projection's sums, and the instance of this file
 *                          in that type; ray_setup, the crossing (cross_at) and the forward sums
 *                          then call that instance's and round what it gives (the path length, a
 *                          projection) to T once, by DBTR_R_TO_T, and crossing_1d splits the
 *                          crossing into index and weight in fixed point. Float keeps its
 *                          geometry and its forward sums in double this way (docs/accuracy.md):
 *                          DBTR_VIEW is then that instance's view. By default R is T, computed
 *                          here.
 *   DBTR_OF_INT(i) DBTR_TO_INT(a) DBTR_NEG(a) DBTR_LT DBTR_LE DBTR_GT DBTR_GE DBTR_EQ (a, b)
 *                          optional: an int as T (exact), an integer-valued T as int, the
 *                          negation, the comparisons; by default the cast, the unary minus
 *                          and the operators. The double-double referee (recon/dd.h), whose T
 *                          is a struct, defines them all.
 *   DBTR_MONOTONE_CROSS    optional, 0 or 1: whether a crossing a + k b is monotone in k, so that
 *                          forward_ray may find the slices a ray crosses once (slices_crossed)
 *                          rather than test every slice; by default 1, the reference's for
 *                          numbers (recon/dd_ops.h sets 0)
 * Two hooks let a compiler's tuning reach the shared loops without changing what they compute.
 * Unlike the macros above they stay defined from one instance to the next: define them before
 * the first, or take the reference's defaults.
 *   DBTR_WIDEN_F(v)        a float sample widened exactly to the geometry's double, in
 *                          forward_add; by default ((double)(v)). The kernels use an instruction
 *                          that gives the same bits for the values that reach it (kernels/modes.h).
 *   DBTR_SLICE_LOOP_UNROLL what precedes forward_ray's loop over the slices; by default nothing.
 *                          The kernels unroll it (kernels/modes.h; docs/performance.md).
 * The CPU defines them as plain operators (compiled with -ffp-contract=off, so each is one
 * IEEE operation); cpu-match and double-match define them as __fmul_rn, __fadd_rn, ...;
 * fast and ieee as plain operators under nvcc's contraction and division settings
 * (docs/modes.md). The order of every operation below is part of the contract: change it
 * and both sides change together.
 *
 * Projector (docs/ARCHITECTURE.md, Projectors): ray-driven Joseph along z. In voxel index
 * coordinates the ray of pixel (r, c) crosses slice k at
 *   fx(k) = ax + k bx,  fy(k) = ay + k by,
 * where (ax, bx, ay, by) is the pixel's ray record; the slice is bilinearly interpolated
 * there (beyond the grid counts as zero) and the sum over slices is multiplied by the
 * path length per slice, len = dz |ray| / |ray_z|. The back projector is its exact
 * transpose, gathered per voxel: it re-tests each candidate ray with the same crossing
 * and the same weights. */
#include <stddef.h>
#include <stdint.h>

#include "recon/crmath.h"
#include "recon/hd.h"
#include "recon/update.h"


#ifndef DBTR_LOAD_RAY
#define DBTR_LOAD_RAY(dst, src) \
  ((dst)[0] = (src)[0], (dst)[1] = (src)[1], (dst)[2] = (src)[2], (dst)[3] = (src)[3])
#endif

/* A crossing a + k b of numbers, each operation rounded once (or the two contracted into one
 * FMA, rounded once), is monotone in k: forward_ray finds its slices once a ray
 * (slices_crossed). The double-double referee's product and sum are not proven monotone, so
 * its operations (recon/dd_ops.h) set this to 0 and its forward_ray tests every slice. */
#ifndef DBTR_MONOTONE_CROSS
#define DBTR_MONOTONE_CROSS 1
#endif
#ifndef DBTR_OF_INT
#define DBTR_OF_INT(i) ((DBTR_T)(i))
#define DBTR_TO_INT(a) ((int)(a))
#define DBTR_NEG(a) (-(a))
#define DBTR_LT(a, b) ((a) < (b))
#define DBTR_LE(a, b) ((a) <= (b))
#define DBTR_GT(a, b) ((a) > (b))
#define DBTR_GE(a, b) ((a) >= (b))
#define DBTR_EQ(a, b) ((a) == (b))
#endif
#ifndef DBTR_FLOOR_BY_SHIFT
#define DBTR_FLOOR_BY_SHIFT 1
#endif
/* The hooks' defaults, the reference's (above). */
#ifndef DBTR_WIDEN_F
#define DBTR_WIDEN_F(v) ((double)(v))
#endif
#ifndef DBTR_SLICE_LOOP_UNROLL
#define DBTR_SLICE_LOOP_UNROLL
#endif

#ifndef DBTR_R
#define DBTR_R DBTR_T
#endif
/* R's zero: an int as R (exact), whatever R is. */
#ifdef DBTR_GEOM_FN
#define DBTR_R_ZERO ((R)0)
#else
#define DBTR_R_ZERO I2T(0)
#endif

#define T DBTR_T
#define R DBTR_R
#define MUL DBTR_MUL
#define ADD DBTR_ADD
#define SUB DBTR_SUB
#define DIV DBTR_DIV
#define I2T DBTR_OF_INT
#define NEG DBTR_NEG
#define LT DBTR_LT
#define LE DBTR_LE
#define GT DBTR_GT
#define GE DBTR_GE
#define EQ DBTR_EQ

/* Ray record of pixel (r, c): ray[0..3] = (ax, bx, ay, by); returns the path length per
 * slice in mm. The record is the line through the pixel's centre q and the source, written
 * from q: ax = qx - qz tx, where qz (the detector's height in slices) is small. Written from
 * the source instead, sx - sz tx, it would cancel two numbers near the source's height (some
 * 700 slices up) and lose that many times the rounding of the coordinates (docs/accuracy.md). */
static inline DBTR_HD T DBTR_FN(ray_setup)(const DBTR_VIEW *v, int r, int c, R ray[4]) {
#ifdef DBTR_GEOM_FN
  return DBTR_R_TO_T(DBTR_GEOM_FN(ray_setup)(v, r, c, ray));
#else
  T fc = I2T(c), fr = I2T(r);
  T q0 = ADD(ADD(v->p0[0], MUL(fc, v->du[0])), MUL(fr, v->dv[0]));
  T q1 = ADD(ADD(v->p0[1], MUL(fc, v->du[1])), MUL(fr, v->dv[1]));
  T q2 = ADD(ADD(v->p0[2], MUL(fc, v->du[2])), MUL(fr, v->dv[2]));
  T d0 = SUB(q0, v->src[0]), d1 = SUB(q1, v->src[1]), d2 = SUB(q2, v->src[2]);
  T tx = DIV(d0, d2), ty = DIV(d1, d2);
  ray[0] = SUB(q0, MUL(q2, tx));
  ray[1] = tx;
  ray[2] = SUB(q1, MUL(q2, ty));
  ray[3] = ty;
  T px = MUL(d0, v->scale[0]), py = MUL(d1, v->scale[1]), pz = MUL(d2, v->scale[2]);
  T norm = DBTR_SQRT(ADD(ADD(MUL(px, px), MUL(py, py)), MUL(pz, pz)));
  /* One slice is one index unit of z, so the ray parameter advances by 1/|d2| per slice
   * and the length by norm/|d2| (dz for a vertical ray). */
  T adz = LT(d2, I2T(0)) ? NEG(d2) : d2;
  return DIV(norm, adz);
#endif
}

/* floor(f) for |f| < 2^22, returned in T and stored as an int in *i. Two implementations
 * of the same function; the includer picks one with DBTR_FLOOR_BY_SHIFT:
 * - 0: DBTR_FLOOR and a conversion to int (on the GPU, F2I.FLOOR and FRND: conversions
 *   run at 16 per clock per multiprocessor on sm_90);
 * - 1: additions only. Adding 1.5 x 2^p (p = 23 in float, 52 in double) rounds f to an
 *   integer n, exactly (the sum lies in [2^p, 2^(p+1)), where the spacing is 1); removing it
 *   again gives n in T, and the sum's bits minus the constant's bits give n as an integer.
 *   floor(f) is n, or n - 1 where n > f; +-0 is returned as it is, as floor() does. On the
 *   CPU this avoids a libm call per crossing (docs/performance.md).
 * Both give floor()'s bits for every f in range (test_projector.floor_int; every float in
 * test_projector.floor_int_all_floats), so the CPU and the GPU agree whichever each uses.
 * The detector and the grid's x and y are at most 2^22 (recon/geom.c), so every f that
 * reaches it is in range. */
static inline DBTR_HD T DBTR_FN(floor_int)(T f, int *i) {
#if DBTR_FLOOR_BY_SHIFT
  if (f == (T)0) {
    *i = 0;
    return f;
  }
  const T shift = sizeof(T) == sizeof(float) ? (T)0x1.8p23 : (T)0x1.8p52;
  T s = ADD(f, shift);
  T r = SUB(s, shift);
  int n = sizeof(T) == sizeof(float)
              ? (int)((int32_t)dbtr__cr_fbits((float)s) - (int32_t)dbtr__cr_fbits(0x1.8p23f))
              : (int)((int64_t)dbtr__cr_dbits((double)s) - (int64_t)dbtr__cr_dbits(0x1.8p52));
  int above = r > f;
  *i = n - above;
  return above ? SUB(r, (T)1) : r;
#else
  T fl = DBTR_FLOOR(f);
  *i = DBTR_TO_INT(fl);
  return fl;
#endif
}

static inline DBTR_HD int DBTR_FN(floor_to_int)(T f) {
  int i;
  DBTR_FN(floor_int)(f, &i);
  return i;
}

#ifndef DBTR_GEOM_FN
/* Where record part (a, b) crosses slice k along its axis: a + k b. */
static inline DBTR_HD T DBTR_FN(cross_at)(T a, T b, int k) { return ADD(a, MUL(I2T(k), b)); }
#endif

/* The crossing of record part (a, b) with slice k, in R: a + k b, computed in the geometry's
 * instance for float. */
#ifdef DBTR_GEOM_FN
#define DBTR_CROSS_AT DBTR_GEOM_FN(cross_at)
#else
#define DBTR_CROSS_AT DBTR_FN(cross_at)
#endif

/* The two halves of crossing_1d's test of a crossing f of an axis of n voxels: f above the
 * band's lower edge -1, and f below its upper edge n. Float's upper test is on the fixed-point
 * sum split_1d rounds f to (below), so that a crossing that rounds up to n counts as outside. */
static inline DBTR_HD int DBTR_FN(above_band)(R f) {
#ifdef DBTR_GEOM_FN
  return f > (R)-1;
#else
  return GT(f, I2T(-1));
#endif
}
static inline DBTR_HD int DBTR_FN(below_band)(R f, int n) {
#ifdef DBTR_GEOM_FN
  return DBTR_GEOM_FN(sum_add)(f, 0x1.8p28) < 0x1.8p28 + (R)n;
#else
  return LT(f, I2T(n));
#endif
}

/* A crossing f in (-1, n), n <= 2^22, split into the lower voxel index and the weight of the
 * upper neighbour.
 * Float splits its geometry's double f in fixed point, with additions and integer operations
 * only: s = f + 1.5 x 2^28, for f in (-1, n), lies in [2^28, 2^29), where the spacing of doubles
 * is 2^-24, so its significand holds f to the nearest 2^-24: its bits above the lowest 24 are
 * the index (floor of f so rounded), the lowest 24, q, the weight q 2^-24. The weight is f's
 * fraction to within 2^-25, as a float near 1 is. Rounding up to n leaves the grid: no voxel gets
 * a weight then, which is why below_band tests s, s < 1.5 x 2^28 + n (exact); that also means
 * f < n, as rounding keeps order. The index is counted from the bits of 1.5 x 2^28 - 1, where it
 * is 0 for f just above -1, so that the difference is in [0, n] and fits 32 bits; q < 2^24 is
 * exact as a float, and so is its product with 2^-24, in any mode. On sm_90 this is about 22
 * instructions a slice fewer than the split before it (docs/performance.md), and three
 * conversions (16 a clock) fewer than a hardware floor and a rounding of the fraction to float. */
static inline DBTR_HD void DBTR_FN(split_1d)(R f, int *i, T *w) {
#ifdef DBTR_GEOM_FN
  uint64_t m = dbtr__cr_dbits(DBTR_GEOM_FN(sum_add)(f, 0x1.8p28));
  *i = (int)((uint32_t)(m >> 24) - (uint32_t)(dbtr__cr_dbits(0x1.8p28 - 1.0) >> 24)) - 1;
  *w = MUL(I2T((int)(m & 0xFFFFFFu)), (T)0x1p-24f);
#else
  *w = SUB(f, DBTR_FN(floor_int)(f, i));
#endif
}

/* One axis of a ray's crossing with slice k: f = a + k b, split into the lower voxel index and
 * the weight of the upper neighbour. Returns 0 when f lies outside (-1, n), where no voxel gets
 * a non-zero weight. */
static inline DBTR_HD int DBTR_FN(crossing_1d)(R a, R b, int k, int n, int *i, T *w) {
  R f = DBTR_CROSS_AT(a, b, k);
  if (!(DBTR_FN(above_band)(f) && DBTR_FN(below_band)(f, n))) return 0;
  DBTR_FN(split_1d)(f, i, w);
  return 1;
}

/* Crossing of a ray with slice k in x and y. Returns 0 when it lies outside the grid's
 * (-1, n) band in either. */
static inline DBTR_HD int DBTR_FN(crossing)(const R ray[4], int k, int nx, int ny, int *ix, int *iy, T *wx,
                                            T *wy) {
  return DBTR_FN(crossing_1d)(ray[0], ray[1], k, nx, ix, wx) && DBTR_FN(crossing_1d)(ray[2], ray[3], k, ny, iy, wy);
}

/* 1 - w: the weight of a crossing's lower neighbour along an axis, from the upper one's w. */
static inline DBTR_HD T DBTR_FN(lower_weight)(T w) { return SUB(I2T(1), w); }

/* The four voxels around a crossing in its slice, p pointing at the lower corner (ix, iy) of a
 * slice nx wide: v = (ix, iy), (ix + 1, iy), (ix, iy + 1), (ix + 1, iy + 1). A corner beyond
 * the grid counts as zero and is not read: x_lo says ix >= 0, x_hi ix + 1 < nx, and y_lo, y_hi
 * the same of iy. */
static inline DBTR_HD void DBTR_FN(corners)(const T *p, int nx, int x_lo, int x_hi, int y_lo, int y_hi, T v[4]) {
  v[0] = (x_lo && y_lo) ? p[0] : I2T(0);
  v[1] = (x_hi && y_lo) ? p[1] : I2T(0);
  v[2] = (x_lo && y_hi) ? p[nx] : I2T(0);
  v[3] = (x_hi && y_hi) ? p[nx + 1] : I2T(0);
}

/* The bilinear sample from the four corners (corners' order) and the axis weights: the lower
 * neighbours' ux, uy (lower_weight) and the upper ones' wx, wy. */
static inline DBTR_HD T DBTR_FN(bilinear_mix)(T ux, T uy, T wx, T wy, const T v[4]) {
  return ADD(ADD(ADD(MUL(MUL(ux, uy), v[0]), MUL(MUL(wx, uy), v[1])), MUL(MUL(ux, wy), v[2])), MUL(MUL(wx, wy), v[3]));
}

/* The bilinear interpolation of slice s (ny, nx) at the crossing (ix + wx, iy + wy); values
 * beyond the grid count as zero. The crossing's index is below n - 1 where its upper corner is
 * inside (nvcc keeps n - 1 out of the loop), and nx, positive, is widened as unsigned: the
 * product then needs no sign correction for it. The GPU's separable forward projection
 * (kernels/mode_kernels.cu) calls its three parts with the axes' parts looked up. */
static inline DBTR_HD T DBTR_FN(bilinear)(const T *s, int ix, int iy, T wx, T wy, int nx, int ny) {
  T v[4];
  DBTR_FN(corners)(s + ((ptrdiff_t)iy * (ptrdiff_t)(unsigned)nx + (ptrdiff_t)ix), nx, ix >= 0, ix < nx - 1, iy >= 0,
                   iy < ny - 1, v);
  return DBTR_FN(bilinear_mix)(DBTR_FN(lower_weight)(wx), DBTR_FN(lower_weight)(wy), wx, wy, v);
}

/* a + b: the forward projection's sums, which the float instance adds in its geometry's
 * double (sample_add). */
static inline DBTR_HD T DBTR_FN(sum_add)(T a, T b) { return ADD(a, b); }

/* A ray's forward sum before its first slice: zero in R. */
static inline DBTR_HD R DBTR_FN(sum_zero)(void) { return DBTR_R_ZERO; }

/* The forward sum so far plus one slice's sample v. The sum is R: float adds its samples in
 * double (each sample widened exactly), as its geometry's instance adds, and rounds the
 * projection once in forward_end. Summed in float, a ray's nz samples lose a few ulps that the
 * data term then amplifies (docs/accuracy.md). */
static inline DBTR_HD R DBTR_FN(sample_add)(R sum, T v) {
#ifdef DBTR_GEOM_FN
  return DBTR_GEOM_FN(sum_add)(sum, DBTR_WIDEN_F(v));
#else
  return ADD(sum, v);
#endif
}

/* One slice's term of a ray's forward sum: the sum so far plus the bilinear sample of slice s
 * at the crossing (ix + wx, iy + wy). forward_ray adds its slices with it, and so does the
 * CPU's separable forward projection (recon/cpu_impl.h), which looks the crossings up. */
static inline DBTR_HD R DBTR_FN(forward_add)(R sum, const T *s, int ix, int iy, T wx, T wy, int nx, int ny) {
  return DBTR_FN(sample_add)(sum, DBTR_FN(bilinear)(s, ix, iy, wx, wy, nx, ny));
}

/* A ray's forward projection from its sum over the slices: times the path length per slice
 * (in R, then rounded to T). */
static inline DBTR_HD T DBTR_FN(forward_end)(R sum, T len) {
#ifdef DBTR_GEOM_FN
  return DBTR_R_TO_T(DBTR_GEOM_FN(forward_end)(sum, (R)len));
#else
  return MUL(sum, len);
#endif
}

#if DBTR_MONOTONE_CROSS
/* Whether slice k's crossing of one axis (record part (a, b), n voxels) has entered the band
 * (-1, n): is above its lower edge where the crossing rises with k (b >= 0, -0 included), below
 * its upper edge where it falls; and whether it has left it, the other edge. crossing_1d accepts
 * k exactly where it has entered and not left: the conjunction of the same two tests. */
static inline DBTR_HD int DBTR_FN(band_entered)(R a, R b, int k, int n) {
  R f = DBTR_CROSS_AT(a, b, k);
  return b >= (R)0 ? DBTR_FN(above_band)(f) : DBTR_FN(below_band)(f, n);
}
static inline DBTR_HD int DBTR_FN(band_left)(R a, R b, int k, int n) {
  R f = DBTR_CROSS_AT(a, b, k);
  return b >= (R)0 ? !DBTR_FN(below_band)(f, n) : !DBTR_FN(above_band)(f);
}

/* The slices [*k0, *k1) whose crossing crossing() accepts in both axes, exactly: the same set, bit
 * for bit, found once a ray instead of tested every slice.
 * For b >= 0 each rounding of a + k b (by k, then a sum; or one FMA) is monotone, so the
 * crossing never decreases with k, and never increases for b < 0; the tests of above_band and
 * below_band are monotone in f (below_band's sum is another rounding). So entered (both axes
 * entered) is false, then true, as k grows, and left (either axis left) too, and the accepted set
 * {entered and not left} is [first entered, first left). The firsts are found by stepping in from
 * the ends with the very tests crossing() makes on the very crossings it computes: 2 evaluations
 * for a ray through every slice, and one more a slice outside, about what testing that slice
 * cost. (Estimates from the real-valued edges, (-1 - a) / b and (n - a) / b in float, to step from
 * instead, cost more on thesis than the steps they save: docs/performance.md.) Finite records
 * (ray_setup's) give finite crossings: no NaN breaks the order. */
static inline DBTR_HD int DBTR_FN(slice_entered)(const R ray[4], int k, int nx, int ny) {
  return DBTR_FN(band_entered)(ray[0], ray[1], k, nx) && DBTR_FN(band_entered)(ray[2], ray[3], k, ny);
}
static inline DBTR_HD int DBTR_FN(slice_left)(const R ray[4], int k, int nx, int ny) {
  return DBTR_FN(band_left)(ray[0], ray[1], k, nx) || DBTR_FN(band_left)(ray[2], ray[3], k, ny);
}
static inline DBTR_HD void DBTR_FN(slices_crossed)(const R ray[4], int nx, int ny, int nz, int *k0, int *k1) {
  int lo = 0, hi = nz;
  while (lo < nz && !DBTR_FN(slice_entered)(ray, lo, nx, ny)) lo++;
  /* Down to the first left, or to lo where that is below: the interval is empty either way. */
  while (hi > lo && DBTR_FN(slice_left)(ray, hi - 1, nx, ny)) hi--;
  *k0 = lo;
  *k1 = hi;
}
#endif

/* Forward projection of one ray through a volume (nz, ny, nx) whose slices lie `slice` elements
 * apart: nx ny for a whole volume; on several GPUs, where a GPU holds a band of the rows of every
 * slice, the band's size, vol then being where row 0 of slice 0 would lie. */
static inline DBTR_HD T DBTR_FN(forward_ray)(const R ray[4], T len, const T *vol, int nx, int ny, int nz,
                                             size_t slice) {
  R sum = DBTR_FN(sum_zero)();
#if DBTR_MONOTONE_CROSS
  /* The slices crossing() accepts, found once (slices_crossed), and in them the split without the
   * tests: the same terms in the same order. */
  int k0, k1;
  DBTR_FN(slices_crossed)(ray, nx, ny, nz, &k0, &k1);
  const T *s = vol + (size_t)k0 * slice; /* advanced a slice a step: k x slice would be a 64-bit product a step */
  DBTR_SLICE_LOOP_UNROLL
  for (int k = k0; k < k1; k++, s += slice) {
    int ix, iy;
    T wx, wy;
    DBTR_FN(split_1d)(DBTR_CROSS_AT(ray[0], ray[1], k), &ix, &wx);
    DBTR_FN(split_1d)(DBTR_CROSS_AT(ray[2], ray[3], k), &iy, &wy);
    sum = DBTR_FN(forward_add)(sum, s, ix, iy, wx, wy, nx, ny);
  }
#else
  const T *s = vol;
  DBTR_SLICE_LOOP_UNROLL
  for (int k = 0; k < nz; k++, s += slice) {
    int ix, iy;
    T wx, wy;
    if (!DBTR_FN(crossing)(ray, k, nx, ny, &ix, &iy, &wx, &wy)) continue;
    sum = DBTR_FN(forward_add)(sum, s, ix, iy, wx, wy, nx, ny);
  }
#endif
  return DBTR_FN(forward_end)(sum, len);
}

/* The weight one axis of a crossing (lower index i, upper weight w) gives voxel index x
 * along that axis: 1 - w when i = x, w when i = x - 1. Returns 0 when neither neighbour of
 * the crossing is x. */
static inline DBTR_HD int DBTR_FN(axis_weight)(int i, T w, int x, T *out) {
  if (i == x) {
    *out = SUB(I2T(1), w);
    return 1;
  }
  if (i == x - 1) {
    *out = w;
    return 1;
  }
  return 0;
}

/* A voxel's weight from its axis weights along x and y: the product weight_at forms, for the
 * GPU's separable gather, which looks the axis weights up (kernels/separable.h) and has no
 * multiplication of its own. weight_at keeps its product inline: calling this instead, the
 * same operation, changed the code nvcc generates for the per-pixel gather. */
static inline DBTR_HD T DBTR_FN(weight_xy)(T wx, T wy) { return MUL(wx, wy); }

/* The weight a crossing (ix, iy, wx, wy) gives voxel (x, y): the same product the
 * forward projector formed for that corner, or 0 when the crossing does not touch the
 * voxel's support (a zero weight, at an exact lattice crossing, also returns 0 so that
 * it is skipped). */
static inline DBTR_HD T DBTR_FN(weight_at)(int ix, int iy, T wx, T wy, int x, int y) {
  T fx_w, fy_w;
  if (!DBTR_FN(axis_weight)(ix, wx, x, &fx_w) || !DBTR_FN(axis_weight)(iy, wy, y, &fy_w)) return I2T(0);
  return MUL(fx_w, fy_w);
}

/* The weight a ray gives voxel (x, y) of slice k. */
static inline DBTR_HD T DBTR_FN(voxel_weight)(const R ray[4], int k, int x, int y, int nx, int ny) {
  int ix, iy;
  T wx, wy;
  if (!DBTR_FN(crossing)(ray, k, nx, ny, &ix, &iy, &wx, &wy)) return I2T(0);
  return DBTR_FN(weight_at)(ix, iy, wx, wy, x, y);
}

/* One term of a voxel's gather: acc1 += w v1 and, when there is a second input, acc2 += w v2. */
static inline DBTR_HD void DBTR_FN(accumulate)(T w, T v1, T v2, int two, T *acc1, T *acc2) {
  *acc1 = ADD(*acc1, MUL(w, v1));
  if (two) *acc2 = ADD(*acc2, MUL(w, v2));
}

/* Whether the span [lo, hi] of one axis meets the detector's n pixels along it. */
static inline DBTR_HD int DBTR_FN(span_meets)(T lo, T hi, int n) { return GE(hi, I2T(0)) && LE(lo, I2T(n - 1)); }

/* Candidate pixel span of voxel (x, y) on the slice whose footprint is f: the columns
 * [span[0], span[1]] and rows [span[2], span[3]] in pixel units, not yet clipped or rounded.
 * Returns 0 when it misses the detector. */
static inline DBTR_HD int DBTR_FN(candidate_span)(const DBTR_FOOT *f, int x, int y, int n_rows, int n_cols,
                                                  T span[4]) {
  T fx = I2T(x), fy = I2T(y);
  T w = ADD(ADD(MUL(f->h[6], fx), MUL(f->h[7], fy)), f->h[8]);
  T c = DIV(ADD(ADD(MUL(f->h[0], fx), MUL(f->h[1], fy)), f->h[2]), w);
  T r = DIV(ADD(ADD(MUL(f->h[3], fx), MUL(f->h[4], fy)), f->h[5]), w);
  span[0] = SUB(c, f->rc);
  span[1] = ADD(c, f->rc);
  span[2] = SUB(r, f->rr);
  span[3] = ADD(r, f->rr);
  return DBTR_FN(span_meets)(span[0], span[1], n_cols) && DBTR_FN(span_meets)(span[2], span[3], n_rows);
}

/* The pixels [*p0, *p1] of one axis of a span that meets the detector: [ceil(lo), floor(hi)],
 * clipped to the n pixels; every pixel within the radius, and on average 2 x radius
 * candidates per side rather than one more. The clip compares before converting, so no
 * out-of-range value reaches floor_int. */
static inline DBTR_HD void DBTR_FN(span_pixels)(T lo, T hi, int n, int *p0, int *p1) {
  *p0 = LE(lo, I2T(0)) ? 0 : -DBTR_FN(floor_to_int)(NEG(lo));
  *p1 = GE(hi, I2T(n - 1)) ? n - 1 : DBTR_FN(floor_to_int)(hi);
}

/* The pixel box of a span that meets the detector: columns [c0, c1], rows [r0, r1]. */
static inline DBTR_HD void DBTR_FN(span_box)(const T span[4], int n_rows, int n_cols, int *c0, int *c1, int *r0,
                                             int *r1) {
  DBTR_FN(span_pixels)(span[0], span[1], n_cols, c0, c1);
  DBTR_FN(span_pixels)(span[2], span[3], n_rows, r0, r1);
}

/* Gather of voxel (x, y, k) over one view: acc1 += sum w e1[p], acc2 += sum w e2[p] over
 * the candidate pixels p in raster order (row, then column), where rays holds the view's
 * ray records (4 per pixel) and e1, e2 the view's pixel values. e2 may be NULL. */
static inline DBTR_HD void DBTR_FN(gather_view)(const DBTR_FOOT *f, const R *rays, const T *e1, const T *e2, int x,
                                                int y, int k, int nx, int ny, int n_rows, int n_cols, T *acc1, T *acc2) {
  T span[4];
  if (!DBTR_FN(candidate_span)(f, x, y, n_rows, n_cols, span)) return;
  int c0, c1, r0, r1;
  DBTR_FN(span_box)(span, n_rows, n_cols, &c0, &c1, &r0, &r1);
  for (int r = r0; r <= r1; r++)
    for (int c = c0; c <= c1; c++) {
      size_t p = (size_t)r * (size_t)n_cols + (size_t)c;
      R ray[4];
      DBTR_LOAD_RAY(ray, rays + 4 * p);
      T w = DBTR_FN(voxel_weight)(ray, k, x, y, nx, ny);
      if (EQ(w, I2T(0))) continue;
      DBTR_FN(accumulate)(w, e1[p], e2 ? e2[p] : I2T(0), e2 != NULL, acc1, acc2);
    }
}

/* The back projector's input for one pixel's value v: A's entries are len x bilinear weight,
 * and the gather weighs by the bilinear weight alone, so len is folded in here, as the ML-EM
 * pixel terms below fold it. */
static inline DBTR_HD T DBTR_FN(back_pixel)(T v, T len) { return MUL(v, len); }

/* Transmission ML-convex, per pixel (Lange and Fessler 1995; for DBT, Wu et al. 2003):
 * from l = (A mu)_i, the measured counts y and i0, the two back projection inputs
 *   e1 = (yhat - y) len,  e2 = l yhat len,  yhat = i0 exp(-l).
 * len is folded in here because A's entries are len x bilinear weight. Returns yhat, for
 * the data fit. */
static inline DBTR_HD T DBTR_FN(transmission_pixel)(T l, T y, T i0, T len, T *e1, T *e2) {
  T yhat = MUL(i0, DBTR_EXP(NEG(l)));
  *e1 = MUL(SUB(yhat, y), len);
  *e2 = MUL(MUL(l, yhat), len);
  return yhat;
}

/* Transmission update of one voxel: mu + mu N / D, clipped at 0. A voxel with D = 0 (no
 * ray of the subset crosses it, or every such ray saw zero attenuation) keeps its value. */
static inline DBTR_HD T DBTR_FN(transmission_voxel)(T mu, T num, T den) {
  if (!GT(den, I2T(0))) return mu;
  T next = ADD(mu, DIV(MUL(mu, num), den));
  return GT(next, I2T(0)) ? next : I2T(0);
}

/* Emission ML-EM, per pixel: e1 = g / (A f) len, e2 = len (its back projection is the
 * sensitivity A^T 1). Where A f = 0 the ratio is taken as 0; negative data (noise in line
 * integrals) counts as 0, since the Poisson model has no negative data. */
static inline DBTR_HD void DBTR_FN(emission_pixel)(T af, T g, T len, T *e1, T *e2) {
  T q = (GT(af, I2T(0)) && GT(g, I2T(0))) ? DIV(g, af) : I2T(0);
  *e1 = MUL(q, len);
  *e2 = len;
}

/* Emission update of one voxel: f N / S. A voxel no ray of the subset crosses (S = 0)
 * keeps its value. */
static inline DBTR_HD T DBTR_FN(emission_voxel)(T f, T num, T sens) {
  if (!GT(sens, I2T(0))) return f;
  return DIV(MUL(f, num), sens);
}

#undef T
#undef R
#undef DBTR_CROSS_AT
#undef DBTR_MONOTONE_CROSS
#undef DBTR_R_ZERO
#undef MUL
#undef ADD
#undef SUB
#undef DIV
#undef I2T
#undef NEG
#undef LT
#undef LE
#undef GT
#undef GE
#undef EQ
#undef DBTR_OF_INT
#undef DBTR_TO_INT
#undef DBTR_NEG
#undef DBTR_LT
#undef DBTR_LE
#undef DBTR_GT
#undef DBTR_GE
#undef DBTR_EQ
#undef DBTR_T
#undef DBTR_R
#undef DBTR_GEOM_FN
#undef DBTR_R_TO_T
#undef DBTR_FN
#undef DBTR_VIEW
#undef DBTR_FOOT
#undef DBTR_MUL
#undef DBTR_ADD
#undef DBTR_SUB
#undef DBTR_DIV
#undef DBTR_SQRT
#undef DBTR_FLOOR
#undef DBTR_FLOOR_BY_SHIFT
#undef DBTR_EXP
#undef DBTR_LOAD_RAY
