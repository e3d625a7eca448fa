/* phantoms/phantom.h: analytic phantoms with exact line integrals.
 *
 * A phantom is a list of convex shapes (ellipsoids, finite elliptic cylinders, boxes),
 * each optionally clipped by an axis-aligned box, each adding its attenuation
 * coefficient (1/mm, at the phantom's stated energy) to whatever it overlaps. Nested
 * tissues are built by adding the difference (e.g. glandular - adipose). Line integrals
 * are the exact sum of mu x chord length through each shape, computed analytically for
 * every detector pixel's central ray (not with the projector, so reconstruction tests
 * commit no inverse crime). */
#ifndef DBTR_PHANTOM_H
#define DBTR_PHANTOM_H

#include <stddef.h>
#include <stdint.h>

#include "recon/geom.h"

typedef enum { DBTR_SHAPE_ELLIPSOID = 0, DBTR_SHAPE_CYLINDER, DBTR_SHAPE_BOX } dbtr_shape_kind;

typedef struct {
  dbtr_shape_kind kind;
  double center[3];     /* mm */
  double half[3];       /* semi-axes (ellipsoid), radii x, y and half length (cylinder), half sides (box), mm */
  double axes[3][3];    /* rows: the shape's local x, y, z unit vectors in world coordinates (a rotation);
                           a cylinder's axis is its local z */
  int clipped;          /* 1: intersect with the axis-aligned box [clip_lo, clip_hi] */
  double clip_lo[3], clip_hi[3];
  double mu;            /* added attenuation, 1/mm */
} dbtr_shape;

/* What a shape is, beside where it is: the phantom's object record, which `dbtr phantom` writes
 * into the scan file (/phantom, docs/scan-format.md) and the quality measures read
 * (quality/quality.h). Shapes add their mu to what they overlap, so a shape's expected contrast
 * against its surroundings is its own mu: (material's attenuation) - (surround's). */
typedef struct {
  char kind[16];        /* "layer" (skin, adipose, block, insert), "mass", "calcification", "fibre", "gland", "speck" */
  char material[16];    /* "skin", "adipose", "carcinoma", "glandular", "hydroxyapatite", "pmma", "wax", "nylon", "al2o3" */
  double mu;            /* the material's attenuation, 1/mm */
  double contrast;      /* expected contrast against the surroundings, 1/mm (the shape's mu); NaN: not known */
  long long surround;   /* index of the object it lies in (each voxel of it is also in that one); -1: none */
  int target;           /* 1: a test object the quality measures report; 0: a layer or glandular tissue */
} dbtr_object_info;

typedef struct {
  const char *name;     /* "breast", "acr"; a phantom read from a file: "phantom" or "regions" */
  double energy_kev;    /* energy at which the mu values hold */
  size_t n_shapes;
  dbtr_shape *shapes;
  dbtr_object_info *info; /* n_shapes entries: what each shape is */
} dbtr_phantom;

typedef enum { DBTR_PHANTOM_BREAST = 0, DBTR_PHANTOM_ACR = 1 } dbtr_phantom_kind;

/* Builds a phantom that fills the given grid's extent sensibly (a compressed breast
 * against the chest wall at y = 0, or the ACR-like insert). seed fixes the random
 * placement of glandular tissue, masses, calcifications and fibres. */
int dbtr_phantom_make(dbtr_phantom *p, dbtr_phantom_kind kind, const dbtr_grid *grid, uint64_t seed);
void dbtr_phantom_free(dbtr_phantom *p);
/* "breast" / "acr" to the kind; -1 if unknown. */
int dbtr_phantom_kind_from_name(const char *name);

/* Exact line integral of the phantom along the segment from a to b (mm in, unitless out). */
double dbtr_phantom_line_integral(const dbtr_phantom *p, const double a[3], const double b[3]);
/* Line integrals for every pixel of every view, out: (n_views, n_rows, n_cols). Each
 * pixel's value is the mean over an ss x ss grid of rays across the pixel (ss = 1 is
 * the central ray). Multi-threaded. */
int dbtr_phantom_project(const dbtr_phantom *p, const dbtr_geom *g, int ss, double *out);
/* 1 if the point x (mm) lies in shape s (its clip box included), else 0. */
int dbtr_shape_inside(const dbtr_shape *s, const double x[3]);
/* Axis-aligned bounding box of the shape, clip box included. */
void dbtr_shape_bounds(const dbtr_shape *s, double lo[3], double hi[3]);
/* Attenuation at a point, 1/mm. */
double dbtr_phantom_mu_at(const dbtr_phantom *p, const double x[3]);
/* Ground-truth volume: each voxel is the mean of mu over ss^3 points spread evenly in
 * the voxel. out: (nz, ny, nx) floats. Multi-threaded. */
int dbtr_phantom_voxelize(const dbtr_phantom *p, const dbtr_grid *grid, int ss, float *out);
/* The same for the slices z0..z1-1 of the grid only, into out (z1 - z0, ny, nx): each voxel
 * as dbtr_phantom_voxelize makes it, so a caller can voxelise slab by slab (and report
 * progress between slabs) for the same bits. */
int dbtr_phantom_voxelize_slices(const dbtr_phantom *p, const dbtr_grid *grid, int ss, size_t z0, size_t z1,
                                 float *out);

/* Poisson counts: out[i] = Poisson(i0[i] * exp(-line[i])) with a counter-based random
 * generator keyed by (seed, i), so the result does not depend on the thread count. */
int dbtr_poisson_counts(const double *line, const double *i0, size_t n, uint64_t seed, double *out);

#endif
