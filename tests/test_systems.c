/* tests/test_systems.c: the system presets (phantoms/systems.c, docs/phantoms.md "System
 * presets"): each passes the geometry and grid checks and has the numbers of the docs'
 * table, and the tiny preset's sources lie where its arc and pivot put them. */
#include <math.h>
#include <stddef.h>

#include "phantoms/systems.h"
#include "recon/error.h"
#include "tests/test.h"

#define PI 3.14159265358979323846

typedef struct {
  const char *name;
  int n_views;
  double arc, sid, pivot, pixel;
  int cols, rows;
  size_t nx, ny, nz;
  double dx, dz;
} preset_row;

/* The presets table of docs/phantoms.md. */
static const preset_row presets[] = {
    {"hologic", 15, 15.0, 700.0, 0.0, 0.14, 1664, 2048, 1664, 2048, 50, 0.14, 1.0},
    {"siemens", 25, 50.0, 650.0, 50.0, 0.085, 2816, 3584, 2816, 3584, 50, 0.085, 1.0},
    {"ge", 9, 25.0, 660.0, 40.0, 0.1, 2394, 3062, 2394, 3062, 50, 0.1, 1.0},
    {"thesis", 15, 30.0, 660.0, 0.0, 0.1, 2304, 1196, 2304, 1196, 45, 0.1, 1.0},
    {"tiny", 9, 40.0, 660.0, 0.0, 1.0, 128, 80, 128, 80, 24, 1.0, 2.0},
};

DBTR_TEST(presets_pass_checks) {
  const dbtr_system *const *list = dbtr_system_list();
  size_t count = 0;
  while (list[count]) count++;
  CHECK_EQ_INT(count, 5);
  for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
    const preset_row *e = presets + i;
    const dbtr_system *sys = dbtr_system_find(e->name);
    REQUIRE(sys);
    CHECK(strcmp(sys->name, e->name) == 0);
    CHECK(sys->description && sys->description[0] && !strchr(sys->description, '\n'));
    CHECK_EQ_INT(sys->n_views, e->n_views);
    CHECK_EQ_INT(sys->n_cols, e->cols);
    CHECK_EQ_INT(sys->n_rows, e->rows);
    /* Preset numbers are stored as written: exact comparisons. */
    CHECK_NEAR(sys->arc_deg, e->arc, 0.0);
    CHECK_NEAR(sys->sid_mm, e->sid, 0.0);
    CHECK_NEAR(sys->pivot_mm, e->pivot, 0.0);
    CHECK_NEAR(sys->pixel_mm, e->pixel, 0.0);
    CHECK_EQ_INT(sys->grid.nx, e->nx);
    CHECK_EQ_INT(sys->grid.ny, e->ny);
    CHECK_EQ_INT(sys->grid.nz, e->nz);
    CHECK_NEAR(sys->grid.dx, e->dx, 0.0);
    CHECK_NEAR(sys->grid.dy, e->dx, 0.0);
    CHECK_NEAR(sys->grid.dz, e->dz, 0.0);
    /* The first voxel sits on the detector against the chest wall, centred in x; the
     * preset computes these with the same operations, so they match exactly. */
    CHECK_NEAR(sys->grid.origin[0], -0.5 * ((double)e->nx - 1.0) * e->dx, 0.0);
    CHECK_NEAR(sys->grid.origin[1], 0.5 * e->dx, 0.0);
    CHECK_NEAR(sys->grid.origin[2], 0.5 * e->dz, 0.0);
    CHECK_GT(sys->i0, 0.0);
    dbtr_geom g;
    REQUIRE_OK(dbtr_system_geometry(sys, &g));
    CHECK_EQ_INT(g.n_views, e->n_views);
    CHECK_OK(dbtr_geom_check(&g, e->name));
    CHECK_OK(dbtr_grid_check(&sys->grid, &g, e->name));
    dbtr_geom_free(&g);
  }
  CHECK(dbtr_system_find("nope") == NULL);
  CHECK(dbtr_system_find(NULL) == NULL);
}

DBTR_TEST(tiny_source_positions) {
  const dbtr_system *sys = dbtr_system_find("tiny");
  REQUIRE(sys);
  dbtr_geom g;
  REQUIRE_OK(dbtr_system_geometry(sys, &g));
  REQUIRE(g.n_views == 9);
  /* View 0 at -20 deg (pivot at the detector, radius 660): (660 sin(-20), 0, 660 cos 20);
   * sin and cos are within 1 ulp, times 660: 1e-12 mm is ample. */
  double a = -20.0 * PI / 180.0;
  CHECK_NEAR(g.source[0], 660.0 * sin(a), 1e-12);
  CHECK_NEAR(g.source[1], 0.0, 0.0);
  CHECK_NEAR(g.source[2], 660.0 * cos(a), 1e-12);
  /* The middle view (4 of 0..8) is at 0 deg: straight above, at the SID. */
  CHECK_NEAR(g.source[12], 0.0, 1e-12);
  CHECK_NEAR(g.source[13], 0.0, 0.0);
  CHECK_NEAR(g.source[14], 660.0, 1e-12);
  /* The last view is at +20 deg: toward +x. */
  CHECK_GT(g.source[24], 0.0);
  for (size_t k = 0; k < 9; k++) {
    /* Stationary detector: centre (0, 80/2, 0), u = (1, 0, 0), v = (0, 1, 0) mm. */
    CHECK_NEAR(g.detector_center[3 * k + 1], 40.0, 0.0);
    CHECK_NEAR(g.detector_u[3 * k], 1.0, 0.0);
    CHECK_NEAR(g.detector_v[3 * k + 1], 1.0, 0.0);
  }
  /* Pixel (0, 0) is the corner pixel at the chest wall: (-63.5, 0.5, 0). */
  double x[3];
  dbtr_geom_pixel_center(&g, 0, 0.0, 0.0, x);
  CHECK_NEAR(x[0], -63.5, 0.0);
  CHECK_NEAR(x[1], 0.5, 0.0);
  dbtr_geom_free(&g);
  /* A pivot above the detector (siemens, 50 mm; radius 600): view 0 at -25 deg. */
  const dbtr_system *si = dbtr_system_find("siemens");
  REQUIRE(si);
  REQUIRE_OK(dbtr_system_geometry(si, &g));
  a = -25.0 * PI / 180.0;
  CHECK_NEAR(g.source[0], 600.0 * sin(a), 1e-12);
  CHECK_NEAR(g.source[2], 50.0 + 600.0 * cos(a), 1e-12);
  dbtr_geom_free(&g);
}

/* dbtr_system_place_grid (the origin `dbtr project` suggests) gives each preset's own grid
 * its origin: the same placement, derived from the geometry. Within 1e-9 mm: the detector
 * edge is reached through half-integer multiples of the pitch, exact or within an ulp of
 * lengths below 400 mm (ulp 6e-14). */
DBTR_TEST(place_grid_is_the_presets) {
  for (const dbtr_system *const *p = dbtr_system_list(); *p; p++) {
    dbtr_geom g;
    REQUIRE_OK(dbtr_system_geometry(*p, &g));
    double o[3];
    dbtr_system_place_grid(&g, &(*p)->grid, o);
    for (int i = 0; i < 3; i++) CHECK_NEAR(o[i], (*p)->grid.origin[i], 1e-9);
    dbtr_geom_free(&g);
  }
}

DBTR_TEST_MAIN(presets_pass_checks, tiny_source_positions, place_grid_is_the_presets)
