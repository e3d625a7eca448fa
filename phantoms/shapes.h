/* phantoms/shapes.h: internal helpers shared by the shape code and the phantom builders.
 * Not part of the public API (phantoms/phantom.h is). */
#ifndef DBTR_PHANTOMS_SHAPES_H
#define DBTR_PHANTOMS_SHAPES_H

#include <stddef.h>

#include "phantoms/phantom.h"

/* Attenuation coefficients at DBTR__ENERGY_KEV, 1/mm (docs/phantoms.md, "Tissues and
 * materials", gives the sources). */
#define DBTR__ENERGY_KEV 20.0
#define DBTR__MU_ADIPOSE 0.0456        /* Johns & Yaffe 1987, fat */
#define DBTR__MU_GLANDULAR 0.0802      /* Johns & Yaffe 1987, fibrous (fibroglandular) tissue */
#define DBTR__MU_CARCINOMA 0.0844      /* Johns & Yaffe 1987, infiltrating ductal carcinoma */
#define DBTR__MU_SKIN 0.0822           /* ICRP skin, 1.10 g/cm^3, XCOM cross sections */
#define DBTR__MU_CALCIFICATION 2.073   /* hydroxyapatite Ca10(PO4)6(OH)2, 3.16 g/cm^3, XCOM */
#define DBTR__MU_PMMA 0.0680           /* acrylic, 1.19 g/cm^3, XCOM */
#define DBTR__MU_WAX 0.0401            /* paraffin wax, 0.93 g/cm^3, XCOM */
#define DBTR__MU_NYLON 0.0589          /* nylon 6, 1.14 g/cm^3, XCOM */
#define DBTR__MU_AL2O3 0.885           /* aluminium oxide, 3.97 g/cm^3, XCOM */

/* A phantom under construction: appends grow p->shapes. */
typedef struct {
  dbtr_phantom *p;
  size_t cap;
} dbtr__builder;

/* What a builder says of each shape it appends: kind and material (dbtr_object_info), the
 * material's own attenuation, the index of the shape it lies in (-1: none) and whether it is
 * a test object. */
typedef struct {
  const char *kind, *material;
  double mu;
  long long surround;
  int target;
} dbtr__what;

/* Appends a copy of s, described by w (its expected contrast is s->mu); DBTR_ENOMEM on
 * failure (the phantom stays valid). */
int dbtr__builder_push(dbtr__builder *b, const dbtr_shape *s, const dbtr__what *w);

/* An unclipped shape with local axes equal to the world axes. */
dbtr_shape dbtr__shape(dbtr_shape_kind kind, double cx, double cy, double cz, double hx, double hy, double hz,
                       double mu);
/* Turns the shape's local frame by `angle` radians about the world z axis. */
void dbtr__shape_turn_z(dbtr_shape *s, double angle);
/* Clips the shape to the axis-aligned box [lo, hi]. */
void dbtr__shape_clip(dbtr_shape *s, const double lo[3], const double hi[3]);
/* The grid's outer faces: voxel edges, not centres. */
void dbtr__grid_bounds(const dbtr_grid *grid, double lo[3], double hi[3]);

#endif
