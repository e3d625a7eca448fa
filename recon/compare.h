/* recon/compare.h: how two results differ, element by element (docs/validation.md).
 *
 * ULP distance counts the representable values between a and b: 0 means bitwise equal
 * (+0 and -0 count as equal), 1 means neighbours. NaN against anything, NaN included, is
 * UINT64_MAX: a NaN is never a result two paths agree on, so two NaN-producing paths must
 * not be called identical. The statistics, dbtr_diff_stats, are public (include/dbtr.h). */
#ifndef DBTR_COMPARE_H
#define DBTR_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "include/dbtr.h"
#include "recon/dd.h"

uint64_t dbtr_ulp_distance_f(float a, float b);
uint64_t dbtr_ulp_distance_d(double a, double b);

/* Display scale for the 16-bit comparison: value v shows as round_sat((v - lo) / (hi - lo)
 * * 20000), the 0..20000 range radiologists' viewers use. */
typedef struct {
  double lo, hi;
} dbtr_display_scale;

/* Two arrays compared, read a piece at a time, so that neither needs to be in memory whole
 * (dbtr validate reads its recorded references from a file): read fills *a and *b with
 * pointers to elements [lo, hi) of each, valid until the next read. A read asks for whole
 * chunks of the fixed cut the sums follow (recon/compare.c), as many as `piece` elements hold
 * and at least one, so at most dbtr_diff_read_max(n, piece) elements; the results are the
 * same for any piece size. A statistic may read the arrays twice. */
typedef struct {
  int (*read)(void *user, size_t lo, size_t hi, const void **a, const void **b);
  void *user;
  size_t piece;
} dbtr_diff_source;

/* The most elements one read of a source over n elements asks for. */
size_t dbtr_diff_read_max(size_t n, size_t piece);

/* Statistics of a against the reference b, both of p (float or double), n elements each.
 * scale may be NULL (then n_differ_u16 is 0). Multi-threaded; the result does not depend on
 * the thread count or the pieces. The _f and _d forms take two arrays in memory. */
int dbtr_diff_stats_read(dbtr_precision p, size_t n, const dbtr_diff_source *src, const dbtr_display_scale *scale,
                         dbtr_diff_stats *out);
int dbtr_diff_stats_f(const float *a, const float *b, size_t n, const dbtr_display_scale *scale, dbtr_diff_stats *out);
int dbtr_diff_stats_d(const double *a, const double *b, size_t n, const dbtr_display_scale *scale, dbtr_diff_stats *out);

/* ||a - b|| / ||b||, a (the source's) of precision pa (float or double, widened exactly) and
 * b in double; 0 when both are 0. Summed in double in fixed chunks, so the same for any
 * thread count and pieces. */
int dbtr_rel_l2_read(dbtr_precision pa, size_t n, const dbtr_diff_source *src, double *out);

/* How far n double-double values x (the source's a) lie from their roundings,
 * ||round(x) - x|| / ||x||: into *rel_f for xf (its b), x correctly rounded to float
 * (dbtr_convert_to_float, from the double-double itself: rounding hi again could go the
 * wrong way at a tie), and into *rel_d for the rounding to double, the high parts, whose
 * error is lo. Summed in double in fixed chunks. */
int dbtr_rounding_rel_l2_read(size_t n, const dbtr_diff_source *src, double *rel_f, double *rel_d);

#endif
