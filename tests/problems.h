/* tests/problems.h: small test problems shared by the projector, GPU and ML-EM tests. */
#ifndef DBTR_TEST_PROBLEMS_H
#define DBTR_TEST_PROBLEMS_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "phantoms/systems.h"
#include "recon/cpu.h"
#include "recon/error.h"

/* A reproducible uniform [0, 1) generator (splitmix64), so failures can be replayed. */
static uint64_t test_rng_state;
static inline double test_rnd(void) {
  uint64_t z = (test_rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-53;
}

/* Each preset's angular layout (views, arc, SID, pivot) on a small detector and grid, so
 * every geometry shape is tested at test size: 48 x 32 pixels of 1.5 mm, a 40 x 30 x 10
 * grid of 1.6 x 1.6 x 3 mm sitting on the detector, centred in x, from the chest wall. */
static inline int test_small_problem(const char *preset, dbtr_geom *g, dbtr_grid *grid) {
  const dbtr_system *sys = dbtr_system_find(preset);
  if (!sys) return dbtr_err(DBTR_EINVAL, "no preset %s", preset);
  dbtr_system s = *sys;
  s.n_cols = 48;
  s.n_rows = 32;
  s.pixel_mm = 1.5;
  *grid = (dbtr_grid){.nx = 40, .ny = 30, .nz = 10, .dx = 1.6, .dy = 1.6, .dz = 3.0};
  grid->origin[0] = -0.5 * (double)(grid->nx - 1) * grid->dx;
  grid->origin[1] = 0.5 * grid->dy;
  grid->origin[2] = 0.5 * grid->dz;
  return dbtr_system_geometry(&s, g);
}

/* Turns every view's detector by deg about the z axis (u and v stay in the detector
 * plane), so u is no longer along x as in every preset: geometry the presets leave
 * untested. */
static inline void test_rotate_detector(dbtr_geom *g, double deg) {
  double c = cos(deg * 3.14159265358979323846 / 180.0), s = sin(deg * 3.14159265358979323846 / 180.0);
  for (size_t k = 0; k < g->n_views; k++) {
    double *u = g->detector_u + 3 * k, *v = g->detector_v + 3 * k;
    double u0 = u[0], u1 = u[1], v0 = v[0], v1 = v[1];
    u[0] = c * u0 - s * u1;
    u[1] = s * u0 + c * u1;
    v[0] = c * v0 - s * v1;
    v[1] = s * v0 + c * v1;
  }
}

/* Data for ML-EM on that problem: the line integrals of a random smooth-ish positive
 * volume (mu 0.02..0.06 /mm, as breast tissue), then counts floor(i0 exp(-l)) with
 * i0 = 1000, or the line integrals themselves for emission. y and i0: malloc'd, n_proj. */
static inline int test_problem_data(const dbtr_geom *g, const dbtr_grid *grid, int emission, double **y, double **i0) {
  size_t nv = grid->nx * grid->ny * grid->nz, np = g->n_views * g->n_rows * g->n_cols;
  double *x = malloc(nv * sizeof(double));
  *y = malloc(np * sizeof(double));
  *i0 = malloc(np * sizeof(double));
  dbtr_cpu_projector *p = NULL;
  int rc = (x && *y && *i0) ? 0 : dbtr_err(DBTR_ENOMEM, "test data");
  if (!rc) rc = dbtr_cpu_projector_create(&p, g, grid, DBTR_PREC_DOUBLE, 0);
  if (!rc) {
    test_rng_state = 1234;
    for (size_t i = 0; i < nv; i++) x[i] = 0.02 + 0.04 * test_rnd();
    rc = dbtr_cpu_forward(p, x, *y);
  }
  for (size_t i = 0; !rc && i < np; i++) {
    (*i0)[i] = 1000.0;
    if (!emission) (*y)[i] = floor(1000.0 * exp(-(*y)[i]) + test_rnd());
  }
  dbtr_cpu_projector_destroy(&p);
  free(x);
  return rc;
}

#endif
