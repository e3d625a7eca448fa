/* phantoms/simulate.h: a simulated scan of an analytic phantom on a preset system, the
 * pipeline of `dbtr phantom` and `dbtr demo` (docs/phantoms.md): exact line integrals ->
 * Poisson counts -> a dbtr_scan, and the phantom's ground-truth volume on the preset grid. */
#ifndef DBTR_SIMULATE_H
#define DBTR_SIMULATE_H

#include <stddef.h>
#include <stdint.h>

#include "io/scan.h"
#include "phantoms/phantom.h"
#include "phantoms/systems.h"

/* The stages after which dbtr_simulate reports progress. */
typedef enum { DBTR_SIMULATE_SCANNED = 0, DBTR_SIMULATE_VOXELISED } dbtr_simulate_stage;

typedef struct {
  const dbtr_system *system;
  dbtr_phantom_kind kind;
  double dose;         /* unattenuated counts per pixel; 0 = the preset's */
  uint64_t seed;       /* fixes the phantom's random layout and the noise */
  int line_integrals;  /* 1: store noiseless line integrals instead of Poisson counts */
  int supersample;     /* rays per pixel side for the line integrals (1 = central ray) */
  /* Called after each stage with the phantom (for its name); may be NULL. The library
   * prints nothing: progress lines are the caller's. */
  void (*progress)(void *user, dbtr_simulate_stage stage, const dbtr_phantom *ph);
  /* Called during the work of a stage with how far it has come (0 to 1): after each view
   * of the projection and each slice of the voxelisation; may be NULL. */
  void (*advance)(void *user, dbtr_simulate_stage stage, double fraction);
  void *user;
  /* If not NULL, receives the phantom (its shapes and what each is) on success, for the scan
   * file's /phantom objects; the caller frees it with dbtr_phantom_free. */
  dbtr_phantom *phantom;
} dbtr_simulate_opts;

/* Fills an uninitialised scan (geometry, projections, scalar i0, the preset grid). If truth
 * is not NULL, also voxelises the phantom on the grid (3^3 points a voxel) into a malloc'd
 * float volume, (nz, ny, nx), that the caller frees. On an error scan and *truth are freed.
 * Returns 0 or a DBTR_E* code. */
int dbtr_simulate(const dbtr_simulate_opts *o, dbtr_scan *scan, float **truth);

/* The scan's projections from its n line integrals *line: Poisson counts of the scalar i0
 * (seeded by seed) when i0 > 0, else the line integrals themselves, taken from *line
 * (which becomes NULL). Sets scan->quantity and, for counts, scan->i0. Used by
 * dbtr_simulate and by `dbtr project`. Returns 0 or a DBTR_E* code. */
int dbtr_simulate_store(dbtr_scan *scan, double **line, size_t n, double i0, uint64_t seed);
/* Before a scan is stored from the line integrals of a user's volume (`dbtr project`): each
 * stored value, the line integral or (i0 > 0) its count i0 exp(-l), must be at most limit,
 * the largest value of the stored type named type ("float32"). Otherwise DBTR_EFORMAT
 * naming what (the volume), the first such line integral (view, row, column) and the
 * volume's largest value with its voxel (x, y, z), instead of a scan of infinities. */
int dbtr_simulate_check_range(const char *what, const dbtr_grid *grid, const float *vol, const dbtr_geom *g,
                              const double *line, double i0, double limit, const char *type);

#endif
