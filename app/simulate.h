/* app/simulate.h: a simulated scan of an analytic phantom on a preset system, as `phantom`
 * and `demo` make it. */
#ifndef DBTR_APP_SIMULATE_H
#define DBTR_APP_SIMULATE_H

#include <stdint.h>

#include "io/scan.h"
#include "phantoms/phantom.h"
#include "phantoms/systems.h"

typedef struct {
  const dbtr_system *system;
  dbtr_phantom_kind kind;
  double dose;       /* unattenuated counts per pixel; 0 = the preset's */
  uint64_t seed;
  int line_integrals; /* 1: store noiseless line integrals instead of Poisson counts */
  int supersample;   /* rays per pixel side for the line integrals (1 = central ray) */
  int quiet;
} app_sim_opts;

/* Fills scan (geometry, data, scalar i0, the preset grid). If truth is not NULL, also
 * voxelises the phantom on the grid into a malloc'd float volume. Returns an exit code. */
int app_simulate(const char *cmd, const app_sim_opts *o, dbtr_scan *scan, float **truth);

/* The scan's projections from its n line integrals *line: Poisson counts of the scalar i0
 * (seeded by seed) when i0 > 0, else the line integrals themselves, taken from *line (which
 * becomes NULL). Used by `phantom`, `demo` and `project`. Returns a DBTR_E* code. */
int app_store_projections(dbtr_scan *scan, double **line, size_t n, double i0, uint64_t seed);

#endif
