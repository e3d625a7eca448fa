/* recon/separable.h: the separable tables of the gather back projection and their builder,
 * written once for the CPU reference (recon/cpu_impl.h), the GPU's set-up kernels
 * (kernels/mode_kernels.cu, through kernels/separable.h) and the test that checks them against
 * the per-pixel gather (tests/test_separable.c).
 *
 * When a view's detector columns run along x and its rows along y (every preset), a ray
 * record's x part (ax, bx) is the same for every pixel of a column and its y part for every
 * pixel of a row, bit for bit, and each voxel's candidate box is a column range that depends
 * on x alone times a row range that depends on y alone. Then, per view and slice, each
 * column's and row's crossing is computed once (cross_store), and each voxel index's pixel
 * slots with their axis weights once (axis_slots); the gathers look them up (the CPU's in
 * recon/cpu_impl.h, the GPU's gather_sep in kernels/separable.h), and the CPU's forward
 * projection looks the crossings up. Every value looked up is one the functions of
 * recon/proj_impl.h compute, and every sum has the same terms in the same order, so the
 * results are forward_ray's and gather_view's, bit for bit: this file does no floating-point
 * arithmetic of its own, only look-ups and calls to those functions. Before the tables are
 * used, the builder checks that a view is separable in exactly this sense (ray_separable,
 * slots_match, or the footprints' condition that implies slots_match; "The builder" below).
 *
 * A template, like recon/proj_impl.h: include it after an instance of that file, with
 *   DBTR_T, DBTR_FN(name)  that instance's type and names (its functions are called, and
 *                          this file's are named, by DBTR_FN)
 *   DBTR_R                 optional: that instance's ray record type, where it is not T (float's
 *                          records are double: recon/proj_impl.h, DBTR_GEOM_FN)
 *   DBTR_FOOT              dbtr_footprint_f / _d (recon/rays.h)
 *   DBTR_CROSS, DBTR_SLOTW_T  dbtr_cross_f / _d, dbtr_slotw_f / _d (recon/separable_types.h)
 *   DBTR_SEP_TABLES        the includer's tables type: a struct with at least the members
 *                          DBTR_CROSS *cx, *cy;   (n_views, nz, n_cols), (n_views, nz, n_rows)
 *                          dbtr_slots *xs, *ys;   (n_views, nz, nx), (n_views, nz, ny)
 *                          DBTR_SLOTW_T *xw, *yw; (n_views, nz, nx), (n_views, nz, ny)
 *                          int *flag;             set to 1 once anything is found not separable
 *   DBTR_OF_INT(i), DBTR_EQ(a, b), DBTR_SAME_BITS(a, b)  optional, for a T that is a struct (the
 *                          double-double referee): an int as T, equality of values, equality
 *                          of bits; by default the cast, == and the bits of a float or double
 * The macros are undefined at the end. */
#include <stddef.h>

#include "recon/crmath.h"
#include "recon/hd.h"
#include "recon/separable_types.h"

#define T DBTR_T
#ifndef DBTR_R
#define DBTR_R DBTR_T
#endif
#define R DBTR_R
#ifndef DBTR_OF_INT
#define DBTR_OF_INT(i) ((T)(i))
#define DBTR_EQ(a, b) ((a) == (b))
#endif

/* Whether two ray record elements have the same bits (so -0 differs from +0). */
static inline DBTR_HD int DBTR_FN(same_bits)(R a, R b) {
#ifdef DBTR_SAME_BITS
  return DBTR_SAME_BITS(a, b);
#else
  return sizeof(R) == sizeof(float) ? dbtr__cr_fbits((float)a) == dbtr__cr_fbits((float)b)
                                    : dbtr__cr_dbits((double)a) == dbtr__cr_dbits((double)b);
#endif
}

/* Whether pixel (r, c)'s ray record has its column's x part (that of row 0) and its row's y
 * part (that of column 0); rays holds one view's records, 4 per pixel. */
static inline DBTR_HD int DBTR_FN(ray_separable)(const R *rays, int r, int c, int n_cols) {
  const R *p = rays + 4 * ((size_t)r * (size_t)n_cols + (size_t)c), *col = rays + 4 * (size_t)c,
          *row = rays + 4 * (size_t)r * (size_t)n_cols;
  return DBTR_FN(same_bits)(p[0], col[0]) && DBTR_FN(same_bits)(p[1], col[1]) && DBTR_FN(same_bits)(p[2], row[2]) &&
         DBTR_FN(same_bits)(p[3], row[3]);
}

/* One axis of the crossing of record part (a, b) with slice k, over n voxels. */
static inline DBTR_HD void DBTR_FN(cross_store)(R a, R b, int k, int n, DBTR_CROSS *out) {
  int i;
  T w;
  if (DBTR_FN(crossing_1d)(a, b, k, n, &i, &w)) {
    out->i = i;
    out->w = w;
  } else {
    out->i = DBTR_CROSS_NONE;
    out->w = DBTR_OF_INT(0);
  }
}

/* The slots of voxel index x along one axis of n pixels: its candidate pixels [p0, p1] along
 * that axis (from the span [lo, hi] of candidate_span), each with the weight its crossing
 * (cross[p]) gives x along the axis. Returns 0 when there are more than DBTR_SLOTS. */
static inline DBTR_HD int DBTR_FN(axis_slots)(const DBTR_CROSS *cross, T lo, T hi, int n, int x, dbtr_slots *s,
                                              T w[DBTR_SLOTW]) {
  s->p0 = 0;
  s->n = 0;
  for (int j = 0; j < DBTR_SLOTW; j++) w[j] = DBTR_OF_INT(0);
  if (!DBTR_FN(span_meets)(lo, hi, n)) return 1;
  int p0, p1;
  DBTR_FN(span_pixels)(lo, hi, n, &p0, &p1);
  if (p1 < p0) return 1;
  if (p1 - p0 >= DBTR_SLOTS) return 0;
  s->p0 = p0;
  s->n = p1 - p0 + 1;
  for (int j = 0; j < s->n; j++) {
    T aw;
    if (cross[p0 + j].i != DBTR_CROSS_NONE && DBTR_FN(axis_weight)(cross[p0 + j].i, cross[p0 + j].w, x, &aw)) w[j] = aw;
  }
  return 1;
}

/* Whether the slots xs (of x) and ys (of y) are exactly the candidate box gather_view visits
 * for voxel (x, y): both empty, or the same pixels. */
static inline DBTR_HD int DBTR_FN(slots_match)(const DBTR_FOOT *f, int x, int y, int n_rows, int n_cols,
                                               dbtr_slots xs, dbtr_slots ys) {
  T span[4];
  int c0 = 0, c1 = -1, r0 = 0, r1 = -1;
  if (DBTR_FN(candidate_span)(f, x, y, n_rows, n_cols, span)) DBTR_FN(span_box)(span, n_rows, n_cols, &c0, &c1, &r0, &r1);
  int empty = c1 < c0 || r1 < r0, slots_empty = xs.n == 0 || ys.n == 0;
  if (empty || slots_empty) return empty && slots_empty;
  return c0 == xs.p0 && c1 == xs.p0 + xs.n - 1 && r0 == ys.p0 && r1 == ys.p0 + ys.n - 1;
}

/* ---- The builder ----
 * Each step fills or checks one table for every view and slice, an element per pass of
 * DBTR_SETUP_FOR (recon/separable_types.h): spread over the threads of one set-up kernel on
 * the device (kernels/mode_kernels.cu, which runs the steps in this order), in a plain loop on
 * the host (the CPU reference runs each view's steps on one thread, recon/cpu_impl.h; the CPU
 * test all views at once). A step reads only tables that earlier steps filled. Each check writes 1 to
 * *flag; no value but 1 is ever written there, so the threads that race to it agree. rays
 * holds the ray records of every view, (n_views, n_rows, n_cols, 4); foot the footprints,
 * (n_views, nz). */

/* Every pixel's ray record has its column's x part and its row's y part (ray_separable). */
static inline DBTR_HD void DBTR_FN(sep_rays)(const R *rays, size_t n_views, int n_rows, int n_cols, int *flag) {
  size_t npix = (size_t)n_rows * (size_t)n_cols;
  DBTR_SETUP_FOR(i, n_views * npix) {
    size_t k = i / npix, p = i % npix;
    if (!DBTR_FN(ray_separable)(rays + 4 * k * npix, (int)(p / (size_t)n_cols), (int)(p % (size_t)n_cols), n_cols))
      *flag = 1;
  }
}

/* The crossings of every column (from row 0's records) and every row (from column 0's). */
static inline DBTR_HD void DBTR_FN(sep_cross)(const R *rays, size_t n_views, int nz, int n_rows, int n_cols, int nx,
                                              int ny, DBTR_CROSS *cx, DBTR_CROSS *cy) {
  size_t per = (size_t)n_cols + (size_t)n_rows, npix = (size_t)n_rows * (size_t)n_cols;
  DBTR_SETUP_FOR(i, n_views * (size_t)nz * per) {
    size_t kz = i / per, q = i % per, k = kz / (size_t)nz;
    int z = (int)(kz % (size_t)nz);
    const R *rk = rays + 4 * k * npix;
    if (q < (size_t)n_cols)
      DBTR_FN(cross_store)(rk[4 * q], rk[4 * q + 1], z, nx, &cx[kz * (size_t)n_cols + q]);
    else {
      size_t r = q - (size_t)n_cols, p = r * (size_t)n_cols;
      DBTR_FN(cross_store)(rk[4 * p + 2], rk[4 * p + 3], z, ny, &cy[kz * (size_t)n_rows + r]);
    }
  }
}

/* The column slots of every voxel index x (its span on row 0) and the row slots of every y
 * (its span on column 0); sep_check then compares them with every voxel's own box. */
static inline DBTR_HD void DBTR_FN(sep_slots)(const DBTR_FOOT *foot, size_t n_views, int nz, int n_rows, int n_cols,
                                              int nx, int ny, DBTR_SEP_TABLES sep) {
  size_t per = (size_t)nx + (size_t)ny;
  DBTR_SETUP_FOR(i, n_views * (size_t)nz * per) {
    size_t kz = i / per, q = i % per;
    T span[4];
    int ok;
    if (q < (size_t)nx) {
      DBTR_FN(candidate_span)(&foot[kz], (int)q, 0, n_rows, n_cols, span);
      size_t j = kz * (size_t)nx + q;
      ok = DBTR_FN(axis_slots)(sep.cx + kz * (size_t)n_cols, span[0], span[1], n_cols, (int)q, &sep.xs[j], sep.xw[j].w);
    } else {
      size_t y = q - (size_t)nx, j = kz * (size_t)ny + y;
      DBTR_FN(candidate_span)(&foot[kz], 0, (int)y, n_rows, n_cols, span);
      ok = DBTR_FN(axis_slots)(sep.cy + kz * (size_t)n_rows, span[2], span[3], n_rows, (int)y, &sep.ys[j], sep.yw[j].w);
    }
    if (!ok) *sep.flag = 1;
  }
}

/* Every voxel's slots are its own candidate box (slots_match). */
static inline DBTR_HD void DBTR_FN(sep_check)(const DBTR_FOOT *foot, size_t n_views, int nz, int n_rows, int n_cols,
                                              int nx, int ny, DBTR_SEP_TABLES sep) {
  size_t slice = (size_t)nx * (size_t)ny;
  DBTR_SETUP_FOR(i, n_views * (size_t)nz * slice) {
    size_t kz = i / slice, q = i % slice, x = q % (size_t)nx, y = q / (size_t)nx;
    if (!DBTR_FN(slots_match)(&foot[kz], (int)x, (int)y, n_rows, n_cols, sep.xs[kz * (size_t)nx + x],
                              sep.ys[kz * (size_t)ny + y]))
      *sep.flag = 1;
  }
}

/* The footprints' condition under which sep_check cannot fail, checked once per view and
 * slice instead of once per voxel: the CPU reference's step in sep_check's place (the GPU,
 * with threads to spare, checks every voxel). Where h[1], h[3], h[6] and h[7] are zeros (+0 or
 * -0), candidate_span's product of each with a voxel index (a finite value >= 0) is a zero
 * with the coefficient's sign, whatever the index; so its w is the same for every voxel, its
 * c a function of x alone and its r of y alone, bit for bit. The box gather_view visits is
 * then the column pixels of x's span times the row pixels of y's, empty when either is; and
 * sep_slots took x's column slots from that same span (found at y = 0) and y's row slots
 * likewise (at x = 0): slots_match holds for every voxel. tests/test_separable.c checks that
 * sep_check agrees wherever this holds. A detector parallel to the slices with u along x and
 * v along y gives these zeros exactly (recon/rays.c, dbtr_footprint_reduce: each is a sum of
 * products with a zero factor). */
static inline DBTR_HD void DBTR_FN(sep_feet)(const DBTR_FOOT *foot, size_t n_views, int nz, int *flag) {
  DBTR_SETUP_FOR(i, n_views * (size_t)nz) {
    const T *h = foot[i].h;
    T zero = DBTR_OF_INT(0);
    if (!DBTR_EQ(h[1], zero) || !DBTR_EQ(h[3], zero) || !DBTR_EQ(h[6], zero) || !DBTR_EQ(h[7], zero)) *flag = 1;
  }
}

#undef T
#undef R
#undef DBTR_T
#undef DBTR_R
#undef DBTR_OF_INT
#undef DBTR_EQ
#undef DBTR_SAME_BITS
#undef DBTR_FN
#undef DBTR_FOOT
#undef DBTR_CROSS
#undef DBTR_SLOTW_T
#undef DBTR_SEP_TABLES
