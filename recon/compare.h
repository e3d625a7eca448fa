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

/* Statistics of a against the reference b. Both arrays have n elements. scale may be NULL
 * (then n_differ_u16 is 0). Multi-threaded; the result does not depend on the thread count. */
int dbtr_diff_stats_f(const float *a, const float *b, size_t n, const dbtr_display_scale *scale, dbtr_diff_stats *out);
int dbtr_diff_stats_d(const double *a, const double *b, size_t n, const dbtr_display_scale *scale, dbtr_diff_stats *out);

/* ||a - b|| / ||b||, a of precision pa (float or double, widened exactly) and b in double; 0
 * when both are 0. Summed in double in fixed chunks, so the same for any thread count. */
double dbtr_rel_l2_d(dbtr_precision pa, const void *a, const double *b, size_t n);

/* How far n double-double values x lie from their roundings, ||round(x) - x|| / ||x||: into
 * *rel_f for xf, x correctly rounded to float (dbtr_convert_to_float, from the double-double
 * itself: rounding hi again could go the wrong way at a tie), and into *rel_d for the
 * rounding to double, the high parts, whose error is lo. Summed in double in fixed chunks. */
void dbtr_rounding_rel_l2(const dbtr_dd *x, const float *xf, size_t n, double *rel_f, double *rel_d);

#endif
