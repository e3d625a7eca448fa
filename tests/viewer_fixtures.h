/* tests/viewer_fixtures.h: what tests/test_viewer.c and tests/test_viewer_gl.c share. */
#ifndef DBTR_VIEWER_FIXTURES_H
#define DBTR_VIEWER_FIXTURES_H

#include <string.h>

#include "recon/geom.h"

/* An nx x ny x nz grid of dx x dy x 1 mm voxels at the origin. */
static inline dbtr_grid grid_of(size_t nx, size_t ny, size_t nz, double dx, double dy) {
  dbtr_grid g;
  memset(&g, 0, sizeof g);
  g.nx = nx;
  g.ny = ny;
  g.nz = nz;
  g.dx = dx;
  g.dy = dy;
  g.dz = 1.0;
  return g;
}

#endif
