/* phantoms/systems.c: vendor-like DBT geometries and their default reconstruction grids.
 *
 * The numbers are the public, approximate ones of each class of system (docs/phantoms.md,
 * "System presets"); they are for realistic test problems, not vendor calibrations. Every
 * preset has a stationary detector in the plane z = 0 whose columns run along x centred
 * on x = 0 and whose rows start at the chest wall (y = 0), and a source that rotates in
 * the x-z plane about the pivot (0, 0, pivot_mm). Each default grid starts at the
 * detector surface and the chest wall: voxel (0,0,0) is centred at
 * (-(nx-1)/2 dx, dy/2, dz/2). */
#include "phantoms/systems.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "recon/error.h"

#define DBTR__PI 3.14159265358979323846

/* A grid centred on x = 0 whose first voxel sits on the detector against the chest wall. */
#define DBTR__GRID(nx, ny, nz, dx, dy, dz) \
  { (nx), (ny), (nz), (dx), (dy), (dz), { -0.5 * ((nx) - 1.0) * (dx), 0.5 * (dy), 0.5 * (dz) } }

/* i0 is the unattenuated detected counts per pixel per view. The clinical presets all
 * receive about 1e6 detected quanta per mm^2 per view (docs/phantoms.md derives it from a
 * typical DBT dose), so i0 = 1e6 * pixel^2. `tiny` keeps the per-pixel counts of a 0.1 mm
 * pixel instead (1e4), so its images are as noisy pixel for pixel as a clinical scan. */
static const dbtr_system dbtr__hologic = {
    "hologic", "Hologic-like: 15 views over 15 deg, SID 700 mm, pivot at the detector, 0.14 mm pixels, 1664 x 2048",
    15, 15.0, 700.0, 0.0, 0.14, 1664, 2048, DBTR__GRID(1664, 2048, 50, 0.14, 0.14, 1.0), 19600.0};

static const dbtr_system dbtr__siemens = {
    "siemens", "Siemens-like: 25 views over 50 deg, SID 650 mm, pivot 50 mm up, 0.085 mm pixels, 2816 x 3584",
    25, 50.0, 650.0, 50.0, 0.085, 2816, 3584, DBTR__GRID(2816, 3584, 50, 0.085, 0.085, 1.0), 7225.0};

static const dbtr_system dbtr__ge = {
    "ge", "GE-like: 9 views over 25 deg, SID 660 mm, pivot 40 mm up, 0.1 mm pixels, 2394 x 3062",
    9, 25.0, 660.0, 40.0, 0.1, 2394, 3062, DBTR__GRID(2394, 3062, 50, 0.1, 0.1, 1.0), 10000.0};

static const dbtr_system dbtr__thesis = {
    "thesis", "benchmark problem: 15 views over 30 deg, SID 660 mm, 0.1 mm pixels, 2304 x 1196, volume 2304 x 1196 x 45",
    15, 30.0, 660.0, 0.0, 0.1, 2304, 1196, DBTR__GRID(2304, 1196, 45, 0.1, 0.1, 1.0), 10000.0};

static const dbtr_system dbtr__tiny = {
    "tiny", "tests and demos: 9 views over 40 deg, SID 660 mm, 1 mm pixels, 128 x 80, volume 128 x 80 x 24 of 1 x 1 x 2 mm",
    9, 40.0, 660.0, 0.0, 1.0, 128, 80, DBTR__GRID(128, 80, 24, 1.0, 1.0, 2.0), 10000.0};

static const dbtr_system *const dbtr__systems[] = {&dbtr__hologic, &dbtr__siemens, &dbtr__ge, &dbtr__thesis,
                                                   &dbtr__tiny, NULL};

const dbtr_system *const *dbtr_system_list(void) { return dbtr__systems; }

const dbtr_system *dbtr_system_find(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; dbtr__systems[i]; i++)
    if (strcmp(dbtr__systems[i]->name, name) == 0) return dbtr__systems[i];
  return NULL;
}

int dbtr_system_geometry(const dbtr_system *sys, dbtr_geom *g) {
  if (!sys) return dbtr_err(DBTR_EINVAL, "system geometry: no system given");
  if (sys->n_views < 1 || sys->n_cols < 1 || sys->n_rows < 1 || !(sys->pixel_mm > 0.0) ||
      !(sys->sid_mm > sys->pivot_mm) || !(sys->pivot_mm >= 0.0) || !(sys->arc_deg >= 0.0))
    return dbtr_err(DBTR_EINVAL,
                    "system %s: %d views, %d x %d pixels of %g mm, SID %g mm, pivot %g mm, arc %g deg: "
                    "sizes must be positive and the pivot below the source",
                    sys->name, sys->n_views, sys->n_cols, sys->n_rows, sys->pixel_mm, sys->sid_mm, sys->pivot_mm,
                    sys->arc_deg);
  int rc = dbtr_geom_init(g, (size_t)sys->n_views, (size_t)sys->n_rows, (size_t)sys->n_cols);
  if (rc) return rc;
  double radius = sys->sid_mm - sys->pivot_mm;
  for (int k = 0; k < sys->n_views; k++) {
    /* Evenly spaced over [-arc/2, +arc/2]; a single view sits at 0 deg. A positive
     * angle moves the source toward +x. */
    double deg = sys->n_views == 1 ? 0.0 : -0.5 * sys->arc_deg + sys->arc_deg * (double)k / (double)(sys->n_views - 1);
    double a = deg * DBTR__PI / 180.0;
    double *s = g->source + 3 * k, *d = g->detector_center + 3 * k;
    double *u = g->detector_u + 3 * k, *v = g->detector_v + 3 * k;
    s[0] = radius * sin(a);
    s[1] = 0.0;
    s[2] = sys->pivot_mm + radius * cos(a);
    d[0] = 0.0;
    d[1] = 0.5 * (double)sys->n_rows * sys->pixel_mm;
    d[2] = 0.0;
    u[0] = sys->pixel_mm;
    u[1] = u[2] = 0.0;
    v[1] = sys->pixel_mm;
    v[0] = v[2] = 0.0;
  }
  return 0;
}

void dbtr_system_place_grid(const dbtr_geom *g, const dbtr_grid *grid, double origin[3]) {
  double edge[3];
  dbtr_geom_pixel_center(g, 0, -0.5, 0.5 * ((double)g->n_cols - 1.0), edge);
  origin[0] = edge[0] - 0.5 * ((double)grid->nx - 1.0) * grid->dx;
  origin[1] = edge[1] + 0.5 * grid->dy;
  origin[2] = edge[2] + 0.5 * grid->dz;
}
