/* kernels/separable.h: the GPU's separable gather, in the shape of its thread layout
 * (kernels/layout.h), over the shared tables and builder of recon/separable.h, written once for
 * the kernels (kernels/mode_kernels.cu, with its set-up kernels) and for the CPU test that
 * checks them against the reference (tests/test_separable.c). It has the gather in each of the
 * two orders of recon/modes.def's gather column.
 *
 * The GPU's gather takes DBTR_GATHER_COLS voxel columns and a group of DBTR_GROUP voxel rows
 * at once; the rows share the union of their row slots (group_slots, built by sep_groups after
 * recon/separable.h's steps), and gather_sep looks the weights up. Like recon/separable.h, it
 * does no floating-point arithmetic of its own: each voxel's sum has gather_view's terms in
 * gather_view's order.
 *
 * A template, like recon/proj_impl.h: include it after an instance of that file, with the
 * macros recon/separable.h takes (which it includes at the end, for the shared builder) and
 *   DBTR_GROUPW            dbtr_groupw_f / _d (kernels/layout.h)
 *   DBTR_GATHER_COLS       the voxel columns gather_sep takes: the precision's
 *                          DBTR_GATHER_COLS_F, _D or _DD (kernels/layout.h); the instance
 *                          names it gather_cols, for its callers
 *   DBTR_SEP_TABLES        the name this instance gives its tables type (defined here)
 *   DBTR_LOAD_PAIR(a, b, src), DBTR_LOAD_GROUP(dst, src)  optional: copy a pixel's pair
 *                          (e1, e2), and the DBTR_GROUP row weights of one union row (kernels
 *                          use one vector load each); they move bits, compute nothing
 *   DBTR_FINITE(a)         optional: whether a (a T) is finite; where defined, sums_finite is
 *                          too, and gather_sep may be called without skip_zero
 * The macros are undefined at the end. */
#include <stddef.h>

#include "kernels/layout.h"
#include "recon/hd.h"

#ifndef DBTR_LOAD_PAIR
#define DBTR_LOAD_PAIR(a, b, src) ((a) = (src)[0], (b) = (src)[1])
#endif
/* An int as T and equality, as recon/separable.h takes them (which undefines them at the end). */
#ifndef DBTR_OF_INT
#define DBTR_OF_INT(i) ((DBTR_T)(i))
#define DBTR_EQ(a, b) ((a) == (b))
#endif
#ifndef DBTR_LOAD_GROUP
#define DBTR_LOAD_GROUP(dst, src) \
  ((dst)[0] = (src)[0], (dst)[1] = (src)[1], (dst)[2] = (src)[2], (dst)[3] = (src)[3])
#endif

#define T DBTR_T

/* The voxel columns this instance's gather_sep takes. */
enum { DBTR_FN(gather_cols) = DBTR_GATHER_COLS };

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
    for (int b = 0; b < DBTR_GROUP; b++) gw->w[u][b] = DBTR_OF_INT(0);
  g->p0 = hi < lo ? 0 : lo;
  g->n = hi < lo ? 0 : hi - lo + 1;
  if (g->n > DBTR_GROUP_ROWS) return 0;
  for (int b = 0; b < DBTR_GROUP; b++)
    for (int j = 0; j < s[b].n; j++) gw->w[s[b].p0 + j - g->p0][b] = w[b][j];
  return 1;
}

/* Each column's first slot in row 0 of union g, in elements from the view's pairs (n_cols
 * pixels a row, 2 elements a pixel); the gathers advance them, or pointers made from them, a
 * detector row a step. */
static inline DBTR_HD void DBTR_FN(gather_offsets)(const dbtr_slots xs[DBTR_GATHER_COLS], dbtr_slots g, int n_cols,
                                                   int o[DBTR_GATHER_COLS]) {
  DBTR_UNROLL
  for (int a = 0; a < DBTR_GATHER_COLS; a++) o[a] = 2 * (g.p0 * n_cols + xs[a].p0);
}

/* Row u of union gw: each voxel row's weight yw[b], and each column's DBTR_SLOTS pixel pairs
 * from p[a], that column's first slot in the row. */
static inline DBTR_HD void DBTR_FN(gather_row)(const DBTR_GROUPW *gw, int u, const T *const p[DBTR_GATHER_COLS],
                                               T yw[DBTR_GROUP], T v1[DBTR_GATHER_COLS][DBTR_SLOTS],
                                               T v2[DBTR_GATHER_COLS][DBTR_SLOTS]) {
  DBTR_LOAD_GROUP(yw, gw->w[u]);
  DBTR_UNROLL
  for (int a = 0; a < DBTR_GATHER_COLS; a++) {
    DBTR_UNROLL
    for (int i = 0; i < DBTR_SLOTS; i++) DBTR_LOAD_PAIR(v1[a][i], v2[a][i], p[a] + 2 * i);
  }
}

/* Gather, over one separable view, of the DBTR_GATHER_COLS x DBTR_GROUP voxels (x_a, y0 + b)
 * of one slice: xs[a] and xw[a] are voxel column x_a's slots (n = 0 and weights 0 for a column that
 * does not exist), g and gw the row group's union; e holds the view's pixel terms as pairs
 * (e1, e2), (n_rows, n_cols, 2). Rows in order, then columns: a voxel's weight is 0 in the
 * union's rows outside its own slots and in its column slots whose ray misses it, so each
 * voxel adds the nonzero terms of its own box in the raster order of gather_view, each the
 * product of the column's and the row's weight times the pixel: the CPU's order
 * (recon/modes.def's gather column: cpu). A zero row weight skips that voxel row for the row.
 * With skip_zero, a zero weight skips the pixel, as gather_view does; without it (a constant
 * at the call, so that the test is compiled out) the term w v is added all the same, which
 * changes no sum while the values read are finite: see sums_finite. Every slot is read, also
 * those of weight 0 (past a column's n, or where its ray misses the voxel): e holds 2
 * DBTR_SLOTS elements past its last pixel. */
static inline DBTR_HD void DBTR_FN(gather_sep)(const dbtr_slots xs[DBTR_GATHER_COLS],
                                               const T xw[DBTR_GATHER_COLS][DBTR_SLOTS], dbtr_slots g,
                                               const DBTR_GROUPW *gw, const T *e, int n_cols, int skip_zero,
                                               T acc1[DBTR_GATHER_COLS][DBTR_GROUP],
                                               T acc2[DBTR_GATHER_COLS][DBTR_GROUP]) {
  int o[DBTR_GATHER_COLS], step = 2 * n_cols;
  DBTR_FN(gather_offsets)(xs, g, n_cols, o);
  /* The pixel pointers are advanced a detector row a step, not made from offsets each row: in
   * cpu-match 149 instructions a union row instead of 158, and the back projection 3% faster
   * (docs/performance.md). Not unrolled: nvcc then unrolled double's loop by 2. The factored
   * gather keeps its offsets: with pointers, nvcc kept one in local memory, reloaded at the
   * head of each union row, and fast's back projection took 5% longer. */
  const T *p[DBTR_GATHER_COLS];
  DBTR_UNROLL
  for (int a = 0; a < DBTR_GATHER_COLS; a++) p[a] = e + o[a];
  DBTR_NO_UNROLL
  for (int u = 0; u < g.n; u++) {
    T yw[DBTR_GROUP], v1[DBTR_GATHER_COLS][DBTR_SLOTS], v2[DBTR_GATHER_COLS][DBTR_SLOTS];
    DBTR_FN(gather_row)(gw, u, p, yw, v1, v2);
    DBTR_UNROLL
    for (int a = 0; a < DBTR_GATHER_COLS; a++) p[a] += step;
    DBTR_UNROLL
    for (int b = 0; b < DBTR_GROUP; b++) {
      if (DBTR_EQ(yw[b], DBTR_OF_INT(0))) continue;
      DBTR_UNROLL
      for (int a = 0; a < DBTR_GATHER_COLS; a++) {
        DBTR_UNROLL
        for (int i = 0; i < DBTR_SLOTS; i++) {
          T w = DBTR_FN(weight_xy)(xw[a][i], yw[b]);
          if (skip_zero && DBTR_EQ(w, DBTR_OF_INT(0))) continue;
          DBTR_FN(accumulate)(w, v1[a][i], v2[a][i], 1, &acc1[a][b], &acc2[a][b]);
        }
      }
    }
  }
}

/* The same gather in the factored order (recon/modes.def's gather column: factored): in each
 * row, the column terms xw v are summed first (from 0, in slot order), and that sum times the
 * row's weight is added to the voxel's sum. The column sums are shared by the group's voxel
 * rows: 2 operations a voxel row and column for each row of the union instead of 3 products
 * and 6 sums, and fewer roundings. Not the CPU's bits. A zero column weight is skipped
 * (skip_zero) or adds +-0 to a column sum that starts at +0, sums_finite's argument. */
static inline DBTR_HD void DBTR_FN(gather_sep_factored)(const dbtr_slots xs[DBTR_GATHER_COLS],
                                                        const T xw[DBTR_GATHER_COLS][DBTR_SLOTS], dbtr_slots g,
                                                        const DBTR_GROUPW *gw, const T *e, int n_cols, int skip_zero,
                                                        T acc1[DBTR_GATHER_COLS][DBTR_GROUP],
                                                        T acc2[DBTR_GATHER_COLS][DBTR_GROUP]) {
  int o[DBTR_GATHER_COLS], step = 2 * n_cols;
  DBTR_FN(gather_offsets)(xs, g, n_cols, o);
  /* Not unrolled: unrolled by 2, nvcc made double's conditional FMA of each row an FMA and two
   * selects (docs/performance.md). */
  DBTR_NO_UNROLL
  for (int u = 0; u < g.n; u++) {
    T yw[DBTR_GROUP], v1[DBTR_GATHER_COLS][DBTR_SLOTS], v2[DBTR_GATHER_COLS][DBTR_SLOTS];
    T t1[DBTR_GATHER_COLS], t2[DBTR_GATHER_COLS];
    const T *p[DBTR_GATHER_COLS];
    DBTR_UNROLL
    for (int a = 0; a < DBTR_GATHER_COLS; a++) p[a] = e + o[a], o[a] += step;
    DBTR_FN(gather_row)(gw, u, p, yw, v1, v2);
    DBTR_UNROLL
    for (int a = 0; a < DBTR_GATHER_COLS; a++) {
      t1[a] = t2[a] = DBTR_OF_INT(0);
      DBTR_UNROLL
      for (int i = 0; i < DBTR_SLOTS; i++) {
        if (skip_zero && DBTR_EQ(xw[a][i], DBTR_OF_INT(0))) continue;
        DBTR_FN(accumulate)(xw[a][i], v1[a][i], v2[a][i], 1, &t1[a], &t2[a]);
      }
    }
    DBTR_UNROLL
    for (int b = 0; b < DBTR_GROUP; b++) {
      if (DBTR_EQ(yw[b], DBTR_OF_INT(0))) continue;
      DBTR_UNROLL
      for (int a = 0; a < DBTR_GATHER_COLS; a++)
        DBTR_FN(accumulate)(yw[b], t1[a], t2[a], 1, &acc1[a][b], &acc2[a][b]);
    }
  }
}

#ifdef DBTR_FINITE
/* Whether every sum a gather_sep (or gather_sep_factored) without skip_zero made, from 0, is
 * finite: then they are skip_zero's sums bit for bit, else the caller makes them again with
 * skip_zero. (In the factored order the argument holds for each column sum, and a column sum
 * that is not finite makes its voxel rows' sums so.) A term of zero weight adds w v = +-0
 * where v is finite, which leaves a sum as it is unless the sum is -0; a sum starts at +0 and
 * in round to nearest becomes -0 only as -0 + -0, so it never is one. (Where results are
 * flushed to zero, in `fast`, a sum whose exact value is a negative subnormal becomes -0, and
 * a later zero term then makes it +0: the same value, another sign of zero.) Where a value
 * read is infinite or NaN, 0 v is NaN, and a sum that takes a NaN or an infinite term stays
 * NaN or infinite: some sum is not finite. */
static inline DBTR_HD int DBTR_FN(sums_finite)(const T acc1[DBTR_GATHER_COLS][DBTR_GROUP],
                                               const T acc2[DBTR_GATHER_COLS][DBTR_GROUP]) {
  int ok = 1;
  DBTR_UNROLL
  for (int a = 0; a < DBTR_GATHER_COLS; a++) {
    DBTR_UNROLL
    for (int b = 0; b < DBTR_GROUP; b++) ok &= DBTR_FINITE(acc1[a][b]) && DBTR_FINITE(acc2[a][b]);
  }
  return ok;
}
#endif

/* The GPU's last step of the builder (recon/separable.h, "The builder"), after sep_check. */
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
      for (int u = 0; u < DBTR_SLOTW; u++) w[b][u] = y < (size_t)ny ? sep.yw[j].w[u] : DBTR_OF_INT(0);
    }
    if (!DBTR_FN(group_slots)(s, (const T(*)[DBTR_SLOTW])w, &sep.gs[i], &sep.gw[i])) *sep.flag = 1;
  }
}

#undef T
#undef DBTR_GROUPW
#undef DBTR_GATHER_COLS
#undef DBTR_LOAD_PAIR
#undef DBTR_LOAD_GROUP
#undef DBTR_FINITE

/* The shared tables' builder, in this instance; it undefines the shared macros. */
#include "recon/separable.h"
