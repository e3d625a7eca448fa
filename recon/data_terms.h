/* recon/data_terms.h: what ML-EM takes from the data before its first iteration (recon/mlem.h),
 * written once for data in host memory (recon/mlem.c, engine/session.c) and for data in a GPU's
 * memory (kernels/device_data.cu), so that both give the same bits wherever the caller's arrays
 * lie: the rule a value must pass, counts turned into line integrals, and two sums, the line
 * integrals' (for the start value) and the deviance's constant, sum of y log(y / i0) (recon/fit.h).
 *
 * The sums run in one fixed order: blocks of DBTR_DATA_BLOCK elements, each summed in element
 * order from +0, then the blocks' sums in block order from +0 (dbtr_data_sums_finish). Each
 * element's terms use the project's own log (recon/crmath.h) and operations rounded once, never
 * fused, so a GPU thread summing a block gives the bits a CPU thread gives. */
#ifndef DBTR_DATA_TERMS_H
#define DBTR_DATA_TERMS_H

#include <math.h>
#include <stddef.h>

#include "include/dbtr.h"
#include "recon/crmath.h"
#include "recon/hd.h"

/* Counts below this are taken as this when counts become line integrals log(i0/y): a zero
 * count, which Poisson noise gives behind dense objects, would give an infinite line
 * integral. Half a count keeps it finite and lies below the smallest non-zero whole count,
 * so no measured count is changed. */
#define DBTR_COUNT_FLOOR 0.5

/* Elements a block of the sums holds: thesis's 4.1e7 pixels make 10,000 blocks, enough threads
 * for a GPU and a short last chain of block sums. */
#define DBTR_DATA_BLOCK 4096

/* The line integral log(i0/y) of a count y (y below DBTR_COUNT_FLOOR taken as the floor). The
 * start value, the emission data made from counts and FBP of counts all use it. */
static inline DBTR_HD double dbtr_count_to_line_integral(double y, double i0) {
  return dbtr_log_sh(dbtr__cr_div(i0, y > DBTR_COUNT_FLOOR ? y : DBTR_COUNT_FLOOR));
}

/* The flat index into i0 of the element of flat index i (view i / npix, pixel i % npix), for
 * each of include/dbtr.h's shapes; DBTR_I0_NONE, the zero a caller that sets only i0 leaves,
 * means full size. */
static inline DBTR_HD size_t dbtr_i0_index(dbtr_i0_shape shape, size_t i, size_t npix) {
  switch (shape) {
  case DBTR_I0_SCALAR: return 0;
  case DBTR_I0_PER_VIEW: return i / npix;
  case DBTR_I0_PER_PIXEL: return i % npix;
  case DBTR_I0_NONE:
  case DBTR_I0_FULL: break;
  }
  return i;
}

/* Why value x breaks the rule of its array: 0 for none, 1 not finite, 2 a negative count
 * (counts), 3 not positive (positive: i0). dbtr_value_rule names it. */
static inline DBTR_HD int dbtr_value_bad(double x, int counts, int positive) {
  if (!isfinite(x)) return 1;
  if (counts && x < 0.0) return 2;
  if (positive && !(x > 0.0)) return 3;
  return 0;
}

static inline const char *dbtr_value_rule(int bad) {
  return bad == 1 ? "is not finite" : bad == 2 ? "is negative; counts must be >= 0" : "is not positive; i0 must be > 0";
}

/* How the data enter the sums: line integrals as they are (emission), counts with their i0
 * (transmission), or counts made line integrals for emission. */
typedef enum { DBTR_DATA_LINES = 0, DBTR_DATA_COUNTS = 1, DBTR_DATA_COUNTS_AS_LINES = 2 } dbtr_data_kind;

/* Element y (with its i0 where counts) added to a block's sums: l, the line integral where it is
 * positive, else 0; c, y log(y / i0) for a positive count of transmission, else 0. A term of +0
 * changes no sum that starts at +0, so every element adds both. */
static inline DBTR_HD void dbtr_data_add(dbtr_data_kind kind, double y, double i0, double *l, double *c) {
  double line = kind == DBTR_DATA_LINES ? y : dbtr_count_to_line_integral(y, i0);
  *l = dbtr__cr_add(*l, line > 0.0 ? line : 0.0);
  if (kind == DBTR_DATA_COUNTS)
    *c = dbtr__cr_add(*c, y > 0.0 ? dbtr__cr_mul(y, dbtr_log_sh(dbtr__cr_div(y, i0))) : 0.0);
}

/* The two sums from the blocks' (blocks: n_blocks pairs l, c), in block order. */
static inline void dbtr_data_sums_finish(const double *blocks, size_t n_blocks, double *sum_l, double *sum_c) {
  double l = 0.0, c = 0.0;
  for (size_t b = 0; b < n_blocks; b++) {
    l += blocks[2 * b];
    c += blocks[2 * b + 1];
  }
  *sum_l = l;
  *sum_c = c;
}

#endif
