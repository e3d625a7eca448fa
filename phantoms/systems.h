/* phantoms/systems.h: vendor-like DBT geometries (presets) with their default volume grid.
 *
 * Each preset is a stationary detector in the plane z = 0 with the chest wall along the
 * detector edge y = 0, and a source that rotates in the x-z plane about a pivot at a
 * stated height above the detector. "A x B pixels" is n_cols (along x, the chest wall)
 * x n_rows (along y). */
#ifndef DBTR_SYSTEMS_H
#define DBTR_SYSTEMS_H

#include "recon/geom.h"

typedef struct {
  const char *name;        /* "hologic", "siemens", "ge", "thesis", "tiny" */
  const char *description; /* one line for --help and `dbtr info` */
  int n_views;
  double arc_deg;          /* total angular range, centred on 0 */
  double sid_mm;           /* source to detector distance at 0 deg */
  double pivot_mm;         /* height of the rotation centre above the detector */
  double pixel_mm;         /* detector pixel pitch (square pixels) */
  int n_cols, n_rows;      /* detector size */
  dbtr_grid grid;          /* default reconstruction grid */
  double i0;               /* default unattenuated counts per pixel for simulated scans */
} dbtr_system;

/* The preset of that name, or NULL. */
const dbtr_system *dbtr_system_find(const char *name);
/* All presets, NULL terminated, in the order --help lists them. */
const dbtr_system *const *dbtr_system_list(void);
/* Builds the per-view geometry of a preset into an uninitialised g. */
int dbtr_system_geometry(const dbtr_system *sys, dbtr_geom *g);
/* The origin that places grid as the presets place theirs, for the geometry g: centred
 * along the chest wall on view 0's detector centre, its first row of voxels against the
 * chest-wall edge (view 0's pixel row -1/2), its first slice on the detector. For a
 * preset's own geometry that is the preset grid's origin. */
void dbtr_system_place_grid(const dbtr_geom *g, const dbtr_grid *grid, double origin[3]);

#endif
