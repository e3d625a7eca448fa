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

#endif
