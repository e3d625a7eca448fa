/* tests/tiff_fixtures.h: what tests/test_tiff.c (the writer) and tests/test_tiff_read.c
 * (the reader) share: a grid and a volume that show rounding and swapped axes, and the
 * check of a refusal. Static inline because each file uses only some of it. */
#ifndef DBTR_TIFF_FIXTURES_H
#define DBTR_TIFF_FIXTURES_H

#include <stdlib.h>
#include <sys/stat.h>

#include "recon/error.h"
#include "recon/geom.h"
#include "tests/test.h"

/* The size of the file at path in bytes, or -1. */
static inline long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* A grid whose sizes have no short binary expansion (0.085 mm is the `siemens` pixel), so
 * an exact read back shows the numbers were not rounded on the way. */
static inline dbtr_grid make_grid(size_t nx, size_t ny, size_t nz) {
  dbtr_grid g = {nx, ny, nz, 0.085, 0.1, 1.25, {-10.5, 20.25, 3.0}};
  return g;
}

/* v = 100 z + 10 y + x: every voxel tells where it belongs, so a swapped axis shows. */
static inline float *coded_volume(const dbtr_grid *g) {
  float *v = malloc(g->nx * g->ny * g->nz * sizeof(float));
  for (size_t z = 0; z < g->nz; z++)
    for (size_t y = 0; y < g->ny; y++)
      for (size_t x = 0; x < g->nx; x++) v[(z * g->ny + y) * g->nx + x] = (float)(100 * z + 10 * y + x);
  return v;
}

/* rc is code, the message names path and contains what (NULL: nothing more). */
static inline void check_refusal(int rc, int code, const char *path, const char *what) {
  CHECK_EQ_INT(rc, code);
  CHECK_STR_CONTAINS(dbtr_errmsg(), path);
  if (what) CHECK_STR_CONTAINS(dbtr_errmsg(), what);
}

#endif
