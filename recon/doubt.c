/* recon/doubt.c: the plausibility checks of recon/doubt.h. */
#include "recon/doubt.h"

#include <math.h>
#include <stdio.h>

/* Source to detector centre, mm. Clinical DBT systems have 600 to 700 mm (the presets: 650
 * to 700); the bounds leave room for any real system, and catch cm (65) and m (0.65). */
enum { SID_MIN_MM = 300, SID_MAX_MM = 1200 };
/* Detector pixel pitch, mm: DBT detectors have 0.05 to 0.2 mm, binned up to about 0.3;
 * dbtr's test preset uses 1 mm, and 2 mm allows coarse binning. cm would be 0.005 to 0.02;
 * micrometres, 50 and up. */
#define PITCH_MIN_MM 0.02
#define PITCH_MAX_MM 2.0

static double norm3(const double *v) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

size_t dbtr_doubt_geometry(const dbtr_geom *g, dbtr_doubt *out, size_t max) {
  size_t n = 0;
  for (size_t k = 0; k < g->n_views && n < max; k++) {
    const double *s = g->source + 3 * k, *c = g->detector_center + 3 * k;
    double d[3] = {s[0] - c[0], s[1] - c[1], s[2] - c[2]}, sid = norm3(d);
    if (sid < SID_MIN_MM || sid > SID_MAX_MM) {
      snprintf(out[n++].text, sizeof out->text,
               "view %zu: the source is %g mm from the detector centre, where DBT systems have about 650 mm: "
               "is the geometry in mm (not cm or m)?",
               k, sid);
      break; /* one view says it for all */
    }
  }
  double pu = norm3(g->detector_u), pv = norm3(g->detector_v);
  if (n < max && (pu < PITCH_MIN_MM || pu > PITCH_MAX_MM || pv < PITCH_MIN_MM || pv > PITCH_MAX_MM))
    snprintf(out[n++].text, sizeof out->text,
             "detector pixels of %g x %g mm, where DBT detectors have 0.05 to 0.2 mm: are detector_u and "
             "detector_v the pixel steps in mm?",
             pu, pv);
  return n;
}

/* Counts are photon numbers: whole (as detected) or, after a gain correction, large.
 * Line integrals through a breast are below about 10 (50 mm of tissue at 0.08/mm is 4).
 * Values that are all below 20 and not all whole look like line integrals. */
#define LINE_INTEGRAL_MAX 20.0

size_t dbtr_doubt_counts(const double *y, size_t n, dbtr_doubt *out, size_t max) {
  double hi = 0.0;
  int whole = 1;
  for (size_t i = 0; i < n; i++) {
    if (y[i] > hi) hi = y[i];
    if (y[i] != floor(y[i])) whole = 0;
  }
  if (max == 0 || n == 0 || hi >= LINE_INTEGRAL_MAX || whole) return 0;
  snprintf(out[0].text, sizeof out->text,
           "the counts are all below %g and not whole numbers: they look like line integrals; if they are, "
           "store them with quantity = \"line_integral\"",
           LINE_INTEGRAL_MAX);
  return 1;
}

enum { SAID_RISING = 1u, SAID_STALLED = 2u };
/* Stalled: after 5 iterations (a right model is then within a few tens per pixel on every
 * preset: 16 on tiny), still above 100 per pixel (a Poisson fit is about 1) and down by less
 * than 10% over the last two iterations. A scan stored transposed stays near 1800 on tiny. */
enum { STALL_AFTER = 5, STALL_PER_PIXEL = 100 };
#define STALL_GAIN 0.10

int dbtr_doubt_fit(const double *dev, size_t it, size_t n_pix, size_t subsets, unsigned *said, dbtr_doubt *out) {
  /* Plain ML-EM (one subset) lowers the deviance every iteration; ordered subsets need not. */
  if (!(*said & SAID_RISING) && subsets == 1 && it >= 2 && dev[it - 1] > dev[it - 2] * (1.0 + 1e-9)) {
    *said |= SAID_RISING;
    snprintf(out->text, sizeof out->text,
             "the data fit got worse in iteration %zu (deviance %.6g after %.6g), which plain ML-EM does not do when "
             "the model is right: are the projections stored (views, rows, cols), is i0 right?",
             it, dev[it - 1], dev[it - 2]);
    return 1;
  }
  double per = dev[it - 1] / (double)n_pix;
  if (!(*said & SAID_STALLED) && it >= STALL_AFTER && per > STALL_PER_PIXEL &&
      dev[it - 1] > (1.0 - STALL_GAIN) * dev[it - 3]) {
    *said |= SAID_STALLED;
    snprintf(out->text, sizeof out->text,
             "after %zu iterations the data fit is %.4g per pixel and hardly falling, where a right model with Poisson "
             "noise reaches about 1: projections stored transposed, line integrals labelled counts, or a wrong i0 "
             "or geometry?",
             it, per);
    return 1;
  }
  return 0;
}
