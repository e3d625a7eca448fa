/* recon/doubt.h: signs that a run, though it works, reconstructs the wrong thing: a
 * geometry in cm instead of mm, line integrals labelled counts, projections stored
 * transposed. dbtr cannot refuse these (each is a valid file), but it sees the signs, and
 * says so on stderr with the likely cause (docs/errors.md, "Doubts"). Each threshold below
 * has its reason beside it; the checks only read, and change no result. */
#ifndef DBTR_DOUBT_H
#define DBTR_DOUBT_H

#include <stddef.h>

#include "recon/geom.h"

typedef struct {
  char text[320];
} dbtr_doubt;

/* Doubts about the geometry, at most max written to out; returns how many. */
size_t dbtr_doubt_geometry(const dbtr_geom *g, dbtr_doubt *out, size_t max);
/* Doubts about n values stored as counts. */
size_t dbtr_doubt_counts(const double *y, size_t n, dbtr_doubt *out, size_t max);
/* After iteration it (1-based), given the Poisson deviance of every iteration so far
 * (dev[0 .. it-1]) over n_pix pixels: 1 with out filled when the fit says the model is
 * wrong, else 0. A caller warns once per kind (rising, stalled), so it passes the kinds
 * already reported in *said and gets them updated. */
int dbtr_doubt_fit(const double *dev, size_t it, size_t n_pix, size_t subsets, unsigned *said, dbtr_doubt *out);

#endif
