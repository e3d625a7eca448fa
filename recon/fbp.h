/* recon/fbp.h: the filter of filtered back projection (FBP) for tomosynthesis (docs/fbp.md),
 * in one home: the kernels (ramp x Hann along the tube's motion, an optional Hann low-pass
 * across it, the slice-thickness filter), the weights of each pixel and view, and the
 * normalisation of the back projection. The back projection itself is the projector's A^T of
 * the path chosen (engine/fbp.c), so this file holds no projector.
 *
 * Every sum here is in double, in an order fixed by the source, with only +, -, *, / and sqrt
 * (sines from a series written here, not libm's): the filtered projections are the same bits
 * on every machine and for every thread count (each line is filtered by one thread). */
#ifndef DBTR_FBP_H
#define DBTR_FBP_H

#include <stddef.h>

#include "include/dbtr.h"
#include "recon/geom.h"

/* sin(x) for |x| < 2^20, from a Cody-Waite reduction by pi/2 and Taylor series to degree 23 and
 * 22 (below 1e-16 absolute on the reduced argument |r| <= pi/4): the same bits on every IEEE-754
 * machine, which libm does not promise. */
double dbtr_fbp_sin(double x);
/* asin(s) for 0 <= s <= 0.75, by its Taylor series summed until a term adds nothing. */
double dbtr_fbp_asin(double s);

/* The ramp x Hann kernel's taps h[0..half] (h[-n] = h[n]) in 1/mm^2, for pixels tau mm apart and
 * the Hann window's cut-off at `cutoff` (0 < cutoff <= 1) times the Nyquist frequency 1/(2 tau):
 *   h(x) = integral over |f| <= fc of |f| (1 + cos(pi f / fc)) / 2 exp(2 pi i f x) df,
 * sampled at x = n tau, fc = cutoff / (2 tau). In closed form, with K(t) = sin t / t - 2 sin^2(t/2)
 * / t^2 (K(0) = 1/2):
 *   h[n] = fc^2 (K(pi c n) + K(pi (c n + 1)) / 2 + K(pi (c n - 1)) / 2). */
void dbtr_fbp_ramp_kernel(double tau, double cutoff, size_t half, double *h);

/* The slice-thickness filter's taps g[0..half], dimensionless: the Hann low-pass
 * (1 + cos(pi f / fc)) / 2 for |f| <= fc = cutoff / (2 tau), sampled as above,
 *   g[n] = (c / 2) (S(pi c n) + S(pi (c n + 1)) / 2 + S(pi (c n - 1)) / 2), S(t) = sin t / t,
 * truncated at half = dbtr_fbp_lowpass_half(cutoff) and scaled so that the taps sum to 1 (a
 * uniform line keeps its value). */
size_t dbtr_fbp_lowpass_half(double cutoff);
void dbtr_fbp_lowpass_kernel(double cutoff, size_t half, double *g);

/* What the filter found in the geometry. */
typedef struct {
  int axis;         /* the detector axis filtered along: 0 u (along a row, across columns), 1 v (down a column) */
  double tau;       /* the pixel pitch along it, mm */
  double arc;       /* the sum of the views' angular weights, radians */
} dbtr_fbp_plan;

/* The filter axis: the detector axis closer to the tube's motion (the last source minus the
 * first); DBTR_EINVAL for fewer than 2 views or sources that do not move. */
int dbtr_fbp_plan_make(const dbtr_geom *g, dbtr_fbp_plan *plan);

/* The filtered, weighted projections of view k, for the back projection: out (n_rows, n_cols,
 * double) = dtheta_k * lambda / cos(theta_m) * (g x (h x (cos(phi) * lines_k))), where lines_k is
 * the view's line integrals, h the ramp kernel along the plan's axis (linear convolution: the
 * detector's line continued by zeros), g the slice-thickness kernel across it (o->slice > 0), and,
 * for the ray from the source through each pixel: lambda its cosine to the slice normal z (the
 * back projection's path length per slice dz / lambda is so undone), theta_m its angle to the
 * detector normal in the plane of the motion, phi its angle out of that plane; dtheta_k the
 * view's share of the arc (half the angles to its neighbours, a neighbour's whole angle at the
 * ends). work: 2 n_rows n_cols doubles. Lines are shared out between threads (0: all), each
 * filtered by one, so the bits do not depend on their number. */
void dbtr_fbp_filter_view(const dbtr_geom *g, const dbtr_fbp_plan *plan, const dbtr_fbp_opts *o, size_t k,
                          const double *lines_k, const double *h, const double *gs, size_t gs_half, double *work,
                          double *out, int threads);

/* lambda of every pixel of view k (n_rows, n_cols): the stack whose back projection D gives each
 * voxel's sum of its views' interpolation weights. */
void dbtr_fbp_lambda_view(const dbtr_geom *g, size_t k, double *out);

/* The FBP volume from the two back projections: vol = n_views / rho(z) * N / D, per voxel (0 where
 * D = 0, a voxel no ray reaches), where rho(z) is the views' mean of (s_z - z) / (s_z - c_z), the
 * cone's shrinking of the detector's pitch at the slice's height (the ramp filter of a projection
 * magnified by 1 / rho is rho times the ramp filter of the object). */
void dbtr_fbp_normalise(const dbtr_geom *g, const dbtr_grid *grid, const double *n, const double *d, double *vol);

#endif
