/* kernels/separable.h: the GPU's separable gather, written once for the kernels
 * (kernels/backend_mode.cu) and for the CPU test that checks it against the reference
 * (tests/test_separable.c).
 *
 * When a view's detector columns run along x and its rows along y (every preset), a ray
 * record's x part (ax, bx) is the same for every pixel of a column and its y part for every
 * pixel of a row, bit for bit, and each voxel's candidate box is a column range that depends
 * on x alone times a row range that depends on y alone. Then, per view and slice, each
 * column's and row's crossing is computed once (cross_store), each voxel index's pixel slots
 * with their axis weights once (axis_slots, group_slots), and the gather looks them up
 * (gather_sep). Every value looked up is one the functions of recon/proj_impl.h compute, and
 * every sum has the same terms in the same order, so the results are gather_view's, bit for
 * bit: this file does no floating-point arithmetic of its own, only look-ups and calls to
 * those functions. The GPU backend checks on the device that a view is separable in exactly
 * this sense (ray_separable, slots_match) before it uses the tables (kernels/sep_setup.cuh);
 * tests/test_separable.c checks the sums against gather_view on the CPU. The tables' shapes
 * and the thread layout they serve are in kernels/layout.h.
 *
 * A template, like recon/proj_impl.h: include it after an instance of that file, with
 *   DBTR_T, DBTR_FN(name)  that instance's type and names (its functions are called, and
 *                          this file's are named, by DBTR_FN)
 *   DBTR_FOOT              dbtr_footprint_f / _d (recon/rays.h)
 *   DBTR_CROSS, DBTR_GROUPW  dbtr_cross_f / _d, dbtr_groupw_f / _d (kernels/layout.h)
 *   DBTR_LOAD_PAIR(a, b, src), DBTR_LOAD_GROUP(dst, src)  optional: copy a pixel's pair
 *                          (e1, e2), and the DBTR_GROUP row weights of one union row (kernels
 *                          use one vector load each); they move bits, compute nothing
 * The macros are undefined at the end. */
#include <stddef.h>

#include "kernels/layout.h"
#include "recon/crmath.h"
#include "recon/hd.h"

#ifndef DBTR_LOAD_PAIR
#define DBTR_LOAD_PAIR(a, b, src) ((a) = (src)[0], (b) = (src)[1])
#endif
#ifndef DBTR_LOAD_GROUP
#define DBTR_LOAD_GROUP(dst, src) \
  ((dst)[0] = (src)[0], (dst)[1] = (src)[1], (dst)[2] = (src)[2], (dst)[3] = (src)[3])
#endif

#define T DBTR_T

/* Whether two values have the same bits (so -0 differs from +0). */
static inline DBTR_HD int DBTR_FN(same_bits)(T a, T b) {
  return sizeof(T) == sizeof(float) ? dbtr__cr_fbits((float)a) == dbtr__cr_fbits((float)b)
                                    : dbtr__cr_dbits((double)a) == dbtr__cr_dbits((double)b);
}

/* Whether pixel (r, c)'s ray record has its column's x part (that of row 0) and its row's y
 * part (that of column 0); rays holds one view's records, 4 per pixel. */
static inline DBTR_HD int DBTR_FN(ray_separable)(const T *rays, int r, int c, int n_cols) {
  const T *p = rays + 4 * ((size_t)r * (size_t)n_cols + (size_t)c), *col = rays + 4 * (size_t)c,
          *row = rays + 4 * (size_t)r * (size_t)n_cols;
  return DBTR_FN(same_bits)(p[0], col[0]) && DBTR_FN(same_bits)(p[1], col[1]) && DBTR_FN(same_bits)(p[2], row[2]) &&
         DBTR_FN(same_bits)(p[3], row[3]);
}

/* One axis of the crossing of record part (a, b) with slice k, over n voxels. */
static inline DBTR_HD void DBTR_FN(cross_store)(T a, T b, int k, int n, DBTR_CROSS *out) {
  int i;
  T w;
  if (DBTR_FN(crossing_1d)(a, b, k, n, &i, &w)) {
    out->i = i;
    out->w = w;
  } else {
    out->i = DBTR_CROSS_NONE;
    out->w = (T)0;
  }
}

/* The slots of voxel index x along one axis of n pixels: its candidate pixels [p0, p1] along
 * that axis (from the span [lo, hi] of candidate_span), each with the weight its crossing
 * (cross[p]) gives x along the axis. Returns 0 when there are more than DBTR_SLOTS. */
static inline DBTR_HD int DBTR_FN(axis_slots)(const DBTR_CROSS *cross, T lo, T hi, int n, int x, dbtr_slots *s,
                                              T w[DBTR_SLOTW]) {
  s->p0 = 0;
  s->n = 0;
  for (int j = 0; j < DBTR_SLOTW; j++) w[j] = (T)0;
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

/* The union of the row slots s[b] (weights w[b]) of the DBTR_GROUP voxel rows of a group:
 * rows [g->p0, g->p0 + g->n) and each voxel row's weight of each (0 outside its own slots).
 * Returns 0 when the union has more than DBTR_GROUP_ROWS rows. */
static inline DBTR_HD int DBTR_FN(group_slots)(const dbtr_slots s[DBTR_GROUP], const T w[DBTR_GROUP][DBTR_SLOTW],
                                               dbtr_slots *g, DBTR_GROUPW *gw) {
  int lo = 0, hi = -1;
  for (int b = 0; b < DBTR_GROUP; b++) {
    if (s[b].n == 0) continue;
    if (hi < lo || s[b].p0 < lo) lo = s[b].p0;
    if (s[b].p0 + s[b].n - 1 > hi) hi = s[b].p0 + s[b].n - 1;
  }
  for (int u = 0; u < DBTR_GROUP_ROWS; u++)
    for (int b = 0; b < DBTR_GROUP; b++) gw->w[u][b] = (T)0;
  g->p0 = hi < lo ? 0 : lo;
  g->n = hi < lo ? 0 : hi - lo + 1;
  if (g->n > DBTR_GROUP_ROWS) return 0;
  for (int b = 0; b < DBTR_GROUP; b++)
    for (int j = 0; j < s[b].n; j++) gw->w[s[b].p0 + j - g->p0][b] = w[b][j];
  return 1;
}

/* Gather, over one separable view, of the DBTR_XPAIR x DBTR_GROUP voxels (x_a, y0 + b) of one
 * slice: xs[a] and xw[a] are voxel column x_a's slots (n = 0 and weights 0 for a column that
 * does not exist), g and gw the row group's union; e holds the view's pixel terms as pairs
 * (e1, e2), (n_rows, n_cols, 2). Rows in order, then columns: a voxel's weight is 0 in the
 * union's rows outside its own slots and in its column slots whose ray misses it, so each
 * voxel adds the nonzero terms of its own box in the raster order of gather_view. A zero
 * row weight skips that voxel row for the row, and a zero column weight the pixel: both only
 * leave out zero terms. */
static inline DBTR_HD void DBTR_FN(gather_sep)(const dbtr_slots xs[DBTR_XPAIR], const T xw[DBTR_XPAIR][DBTR_SLOTS],
                                               dbtr_slots g, const DBTR_GROUPW *gw, const T *e, int n_cols,
                                               T acc1[DBTR_XPAIR][DBTR_GROUP], T acc2[DBTR_XPAIR][DBTR_GROUP]) {
  size_t o[DBTR_XPAIR], step = 2 * (size_t)n_cols;
  DBTR_UNROLL
  for (int a = 0; a < DBTR_XPAIR; a++) o[a] = 2 * ((size_t)g.p0 * (size_t)n_cols + (size_t)xs[a].p0);
  for (int u = 0; u < g.n; u++) {
    T yw[DBTR_GROUP], v1[DBTR_XPAIR][DBTR_SLOTS], v2[DBTR_XPAIR][DBTR_SLOTS];
    DBTR_LOAD_GROUP(yw, gw->w[u]);
    DBTR_UNROLL
    for (int a = 0; a < DBTR_XPAIR; a++) {
      DBTR_UNROLL
      for (int i = 0; i < DBTR_SLOTS; i++) {
        v1[a][i] = v2[a][i] = (T)0;
        if (xw[a][i] != (T)0) DBTR_LOAD_PAIR(v1[a][i], v2[a][i], e + o[a] + 2 * (size_t)i);
      }
      o[a] += step;
    }
    DBTR_UNROLL
    for (int b = 0; b < DBTR_GROUP; b++) {
      if (yw[b] == (T)0) continue;
      DBTR_UNROLL
      for (int a = 0; a < DBTR_XPAIR; a++) {
        DBTR_UNROLL
        for (int i = 0; i < DBTR_SLOTS; i++) {
          T w = DBTR_FN(weight_xy)(xw[a][i], yw[b]);
          if (w == (T)0) continue;
          DBTR_FN(accumulate)(w, v1[a][i], v2[a][i], 1, &acc1[a][b], &acc2[a][b]);
        }
      }
    }
  }
}

#undef T
#undef DBTR_T
#undef DBTR_FN
#undef DBTR_FOOT
#undef DBTR_CROSS
#undef DBTR_GROUPW
#undef DBTR_LOAD_PAIR
#undef DBTR_LOAD_GROUP
