/* phantoms/acr.c: an ACR-like accreditation phantom (after the Gammex/RMI 156 and CIRS 015
 * designs) fitted to a reconstruction grid.
 *
 * An acrylic block (4.2 cm thick where the grid allows) with a wax insert under a 3 mm
 * acrylic cover. The insert holds 16 test objects on a 4 x 4 grid of cells, in reading
 * order (row by row from the chest wall, columns along +x): 6 nylon fibres, 5 groups of 6
 * Al2O3 specks, 5 lens-shaped masses, each smaller than the one before. The test objects
 * keep their true sizes on every grid; only the cell pitch shrinks when the grid's xy
 * extent is small. The layout is fixed: the seed plays no part. */
#include <math.h>
#include <string.h>

#include "phantoms/builders.h"
#include "phantoms/shapes.h"
#include "recon/error.h"

#define DBTR__PI 3.14159265358979323846

/* What each kind of shape is (phantoms/shapes.h, dbtr__what): the block (shape 0), the wax
 * insert in it (shape 1), and the test objects in the insert. */
static const dbtr__what block_w = {"layer", "pmma", DBTR__MU_PMMA, -1, 0};
static const dbtr__what insert_w = {"layer", "wax", DBTR__MU_WAX, 0, 0};
static const dbtr__what fibre_w = {"fibre", "nylon", DBTR__MU_NYLON, 1, 1};
static const dbtr__what speck_w = {"speck", "al2o3", DBTR__MU_AL2O3, 1, 1};
static const dbtr__what mass_w = {"mass", "nylon", DBTR__MU_NYLON, 1, 1};

static const double fibre_d[6] = {1.56, 1.12, 0.89, 0.75, 0.54, 0.40};     /* mm, diameters */
static const double speck_d[5] = {0.54, 0.40, 0.32, 0.24, 0.16};           /* mm, diameters */
static const double mass_t[5] = {2.00, 1.00, 0.75, 0.50, 0.25};            /* mm, thicknesses */

/* A nylon fibre across its cell at +-45 deg in the xy plane. */
static int add_fibre(dbtr__builder *b, const double c[3], double pitch, double d, int k) {
  double phi = (k % 2 ? -0.25 : 0.25) * DBTR__PI;
  dbtr_shape f = dbtr__shape(DBTR_SHAPE_CYLINDER, c[0], c[1], c[2], 0.5 * d, 0.5 * d, 0.4 * pitch,
                             DBTR__MU_NYLON - DBTR__MU_WAX);
  /* Axis (local z) along (cos phi, sin phi, 0); x = (-sin phi, cos phi, 0), y = z-up. */
  double frame[3][3] = {{-sin(phi), cos(phi), 0.0}, {0.0, 0.0, 1.0}, {cos(phi), sin(phi), 0.0}};
  memcpy(f.axes, frame, sizeof frame);
  return dbtr__builder_push(b, &f, &fibre_w);
}

/* Six specks: one at the cell centre and five on a circle of 0.15 pitch around it. */
static int add_specks(dbtr__builder *b, const double c[3], double pitch, double d) {
  for (int i = 0; i < 6; i++) {
    double a = 2.0 * DBTR__PI * (double)(i - 1) / 5.0, r = i == 0 ? 0.0 : 0.15 * pitch;
    dbtr_shape s = dbtr__shape(DBTR_SHAPE_ELLIPSOID, c[0] + r * cos(a), c[1] + r * sin(a), c[2], 0.5 * d, 0.5 * d,
                               0.5 * d, DBTR__MU_AL2O3 - DBTR__MU_WAX);
    int rc = dbtr__builder_push(b, &s, &speck_w);
    if (rc) return rc;
  }
  return 0;
}

int dbtr__make_acr(dbtr_phantom *p, const dbtr_grid *grid) {
  double glo[3], ghi[3];
  dbtr__grid_bounds(grid, glo, ghi);
  double width = ghi[0] - glo[0], depth = ghi[1] - glo[1], thick = ghi[2] - glo[2];
  if (width < 20.0 || depth < 20.0 || thick < 10.0)
    return dbtr_err(DBTR_EINVAL, "acr phantom: grid of %.1f x %.1f x %.1f mm: needs at least 20 x 20 x 10 mm (x, y, z)",
                    width, depth, thick);
  p->name = "acr";
  p->energy_kev = DBTR__ENERGY_KEV;
  dbtr__builder b = {p, 0};
  /* The block: 108 x 102 mm and 42 mm thick at full size, on the breast support (a gap of
   * up to 2 mm above the grid's floor), against the chest wall. */
  double gap = fmin(2.0, 0.05 * thick), tb = fmin(42.0, thick - 2.0 * gap);
  double hx = fmin(54.0, 0.45 * width), db = fmin(102.0, 0.9 * depth);
  double xc = 0.5 * (glo[0] + ghi[0]), yc = glo[1] + 0.5 * db, zb = glo[2] + gap + 0.5 * tb;
  dbtr_shape block = dbtr__shape(DBTR_SHAPE_BOX, xc, yc, zb, hx, 0.5 * db, 0.5 * tb, DBTR__MU_PMMA);
  int rc = dbtr__builder_push(&b, &block, &block_w);
  if (rc) return rc;
  /* The wax insert: 7 mm thick right under the 3 mm cover, 4.4 pitches square. */
  double pitch = fmin(15.0, fmin(2.0 * hx, db) / 4.5);
  double cover = fmin(3.0, 0.1 * tb), ti = fmin(7.0, 0.3 * tb);
  double zi = zb + 0.5 * tb - cover - 0.5 * ti;
  dbtr_shape insert = dbtr__shape(DBTR_SHAPE_BOX, xc, yc, zi, 2.2 * pitch, 2.2 * pitch, 0.5 * ti,
                                  DBTR__MU_WAX - DBTR__MU_PMMA);
  rc = dbtr__builder_push(&b, &insert, &insert_w);
  for (int cell = 0; cell < 16 && !rc; cell++) {
    double c[3] = {xc + ((double)(cell % 4) - 1.5) * pitch, yc + ((double)(cell / 4) - 1.5) * pitch, zi};
    if (cell < 6) {
      rc = add_fibre(&b, c, pitch, fibre_d[cell], cell);
    } else if (cell < 11) {
      rc = add_specks(&b, c, pitch, speck_d[cell - 6]);
    } else {
      /* Lens-shaped masses as flat ellipsoids, 0.6 pitch (9 mm) across; the product
       * sheets give only the thicknesses. */
      double r = 0.3 * pitch;
      dbtr_shape m = dbtr__shape(DBTR_SHAPE_ELLIPSOID, c[0], c[1], c[2], r, r, 0.5 * mass_t[cell - 11],
                                 DBTR__MU_NYLON - DBTR__MU_WAX);
      rc = dbtr__builder_push(&b, &m, &mass_w);
    }
  }
  return rc;
}
