/* kernels/separable.h: the GPU's separable gather and the builder of its tables, written
 * once for the kernels (kernels/backend_mode.cu, kernels/sep_setup.cuh) and for the CPU test
 * that checks them against the reference (tests/test_separable.c).
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
 * those functions. Before the gather uses the tables, the set-up checks that a view is
 * separable in exactly this sense (ray_separable, slots_match; "The builder" below), on the
 * device (kernels/sep_setup.cuh) and, with the same code, in tests/test_separable.c, which
 * also checks the sums against gather_view on the CPU. The tables' shapes and the thread
 * layout they serve are in kernels/layout.h.
 *
 * A template, like recon/proj_impl.h: include it after an instance of that file, with
 *   DBTR_T, DBTR_FN(name)  that instance's type and names (its functions are called, and
 *                          this file's are named, by DBTR_FN)
 *   DBTR_FOOT              dbtr_footprint_f / _d (recon/rays.h)
 *   DBTR_CROSS, DBTR_SLOTW_T, DBTR_GROUPW  dbtr_cross_f / _d, dbtr_slotw_f / _d,
 *                          dbtr_groupw_f / _d (kernels/layout.h)
 *   DBTR_SEP_TABLES        the name this instance gives its tables type
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

/* The tables of every view and slice. The gather reads xs, xw, gs and gw; the rest serve the
 * set-up. */
typedef struct {
  int on;                   /* 1: the views are separable and the gather may use the tables */
  int n_groups;             /* groups of DBTR_GROUP voxel rows: DBTR_N_GROUPS(ny) */
  DBTR_CROSS *cx, *cy;      /* (n_views, nz, n_cols), (n_views, nz, n_rows) */
  dbtr_slots *xs, *ys, *gs; /* (n_views, nz, nx), (n_views, nz, ny), (n_views, nz, n_groups) */
  DBTR_SLOTW_T *xw, *yw;    /* (n_views, nz, nx), (n_views, nz, ny) */
  DBTR_GROUPW *gw;          /* (n_views, nz, n_groups) */
  int *flag;                /* set to 1 once anything is found not separable */
} DBTR_SEP_TABLES;

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

/* ---- The builder ----
 * Each step fills or checks one table for every view and slice, an element per pass of
 * DBTR_SETUP_FOR (kernels/layout.h): spread over the threads of one set-up kernel on the
 * device (kernels/sep_setup.cuh, which runs the steps in this order), in a plain loop in the
 * CPU test. A step reads only tables that earlier steps filled. Each check writes 1 to
 * *flag; no value but 1 is ever written there, so the threads that race to it agree. rays
 * holds the ray records of every view, (n_views, n_rows, n_cols, 4); foot the footprints,
 * (n_views, nz). */

/* Every pixel's ray record has its column's x part and its row's y part (ray_separable). */
static inline DBTR_HD void DBTR_FN(sep_rays)(const T *rays, size_t n_views, int n_rows, int n_cols, int *flag) {
  size_t npix = (size_t)n_rows * (size_t)n_cols;
  DBTR_SETUP_FOR(i, n_views * npix) {
    size_t k = i / npix, p = i % npix;
    if (!DBTR_FN(ray_separable)(rays + 4 * k * npix, (int)(p / (size_t)n_cols), (int)(p % (size_t)n_cols), n_cols))
      *flag = 1;
  }
}

/* The crossings of every column (from row 0's records) and every row (from column 0's). */
static inline DBTR_HD void DBTR_FN(sep_cross)(const T *rays, size_t n_views, int nz, int n_rows, int n_cols, int nx,
                                              int ny, DBTR_CROSS *cx, DBTR_CROSS *cy) {
  size_t per = (size_t)n_cols + (size_t)n_rows, npix = (size_t)n_rows * (size_t)n_cols;
  DBTR_SETUP_FOR(i, n_views * (size_t)nz * per) {
    size_t kz = i / per, q = i % per, k = kz / (size_t)nz;
    int z = (int)(kz % (size_t)nz);
    const T *rk = rays + 4 * k * npix;
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

/* The union and the row weights of every group of DBTR_GROUP voxel rows (group_slots); rows
 * past ny have no slots. */
static inline DBTR_HD void DBTR_FN(sep_groups)(size_t n_views, int nz, int ny, DBTR_SEP_TABLES sep) {
  size_t ng = (size_t)sep.n_groups;
  DBTR_SETUP_FOR(i, n_views * (size_t)nz * ng) {
    size_t kz = i / ng, gi = i % ng;
    dbtr_slots s[DBTR_GROUP];
    T w[DBTR_GROUP][DBTR_SLOTW];
    for (int b = 0; b < DBTR_GROUP; b++) {
      size_t y = gi * DBTR_GROUP + (size_t)b, j = kz * (size_t)ny + y;
      s[b] = y < (size_t)ny ? sep.ys[j] : DBTR_NO_SLOTS;
      for (int u = 0; u < DBTR_SLOTW; u++) w[b][u] = y < (size_t)ny ? sep.yw[j].w[u] : (T)0;
    }
    if (!DBTR_FN(group_slots)(s, (const T(*)[DBTR_SLOTW])w, &sep.gs[i], &sep.gw[i])) *sep.flag = 1;
  }
}

#undef T
#undef DBTR_T
#undef DBTR_FN
#undef DBTR_FOOT
#undef DBTR_CROSS
#undef DBTR_SLOTW_T
#undef DBTR_GROUPW
#undef DBTR_SEP_TABLES
#undef DBTR_LOAD_PAIR
#undef DBTR_LOAD_GROUP
