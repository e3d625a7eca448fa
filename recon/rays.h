/* recon/rays.h: each view's geometry reduced once, on the host, in double, to the few
 * numbers the projectors need (TIGRE's habit: no trigonometry or geometry in kernels).
 *
 * Coordinates are voxel indices: a point (x, y, z) mm is ((x - ox)/dx, (y - oy)/dy,
 * (z - oz)/dz), so voxel centres sit on integers and slice k is the plane z = k. The
 * reduced view is double's for float and double (float computes its ray records in double:
 * recon/proj_impl.h) and double-double's for the referee, by one function each, so the CPU
 * reference and every GPU mode start from the same bits. The footprints, which only bound
 * the candidates of the gather, are rounded to each precision. */
#ifndef DBTR_RAYS_H
#define DBTR_RAYS_H

#include <stddef.h>

#include "recon/dd.h"
#include "recon/geom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One view in index coordinates, in double: the view of float (whose ray records are
 * computed in double: recon/proj_impl.h) and of double. */
typedef struct {
  double src[3];   /* source */
  double p0[3];    /* centre of pixel (row 0, column 0) */
  double du[3];    /* step from column c to c+1 */
  double dv[3];    /* step from row r to r+1 */
  double scale[3]; /* dx, dy, dz in mm, to turn index-space directions into lengths */
} dbtr_view_d;
/* The double-double referee's (recon/dd.h), reduced in double-double from the inputs. */
typedef struct {
  dbtr_dd src[3], p0[3], du[3], dv[3], scale[3];
} dbtr_view_dd;

/* For the gather back projector: where voxel column (x, y) of one slice lands on the
 * detector, and how far around it a ray can still touch the voxel's bilinear support
 * (x-1, x+1) x (y-1, y+1). Pixel coordinates (c, r) of the point (x, y) of the slice:
 *   c = (h[0] x + h[1] y + h[2]) / (h[6] x + h[7] y + h[8])
 *   r = (h[3] x + h[4] y + h[5]) / (h[6] x + h[7] y + h[8])
 * and every pixel whose ray crosses the support lies within |c - c(x,y)| <= rc and
 * |r - r(x,y)| <= rr (radii with a margin for rounding; docs/ARCHITECTURE.md). */
typedef struct {
  float h[9];
  float rc, rr;
} dbtr_footprint_f;
typedef struct {
  double h[9];
  double rc, rr;
} dbtr_footprint_d;
typedef struct {
  dbtr_dd h[9];
  dbtr_dd rc, rr;
} dbtr_footprint_dd;

/* The double reduction of view k: the view of float and double, the CPU's and the GPU's alike. */
void dbtr_view_reduce(const dbtr_geom *g, const dbtr_grid *grid, size_t k, dbtr_view_d *out);
/* View k reduced in double-double: the same formulas as dbtr_view_reduce (and
 * dbtr_geom_pixel_center's), each operation in double-double, so that nothing of the ray's
 * set-up is rounded to double. */
void dbtr_view_reduce_dd(const dbtr_geom *g, const dbtr_grid *grid, size_t k, dbtr_view_dd *out);

/* The footprint of view k on slice z (index), in double, and its rounding to float; to_d is
 * the copy, so that every precision has its conversion (recon/prec_traits.h), inline as the
 * CPU's own copy was. */
void dbtr_footprint_reduce(const dbtr_geom *g, const dbtr_grid *grid, size_t k, size_t z, dbtr_footprint_d *out);
void dbtr_footprint_to_f(const dbtr_footprint_d *in, dbtr_footprint_f *out);
static inline void dbtr_footprint_to_d(const dbtr_footprint_d *in, dbtr_footprint_d *out) { *out = *in; }
/* The footprint as double-double values (exactly): it only bounds which pixels a voxel's gather
 * tests, each with the exact shared test, so the referee needs no more than double's. */
void dbtr_footprint_to_dd(const dbtr_footprint_d *in, dbtr_footprint_dd *out);
/* Pixel coordinates (c, r) of the point (x, y) of the footprint's slice, in index units, by
 * its homography h (the formula above), in double. */
void dbtr_footprint_map(const double h[9], double x, double y, double *c, double *r);

/* The margin, in pixels, added to the footprint radii. Rays are tested exactly by the
 * shared function, so the margin only has to cover the rounding of the box itself and of
 * the per-ray crossing: a few ulps of coordinates below 2^12 voxels or pixels in float,
 * under 0.002 pixel. 0.05 pixel is 25 times that; every extra 0.1 costs about 8% more
 * candidates in the gather. */
#define DBTR_FOOTPRINT_MARGIN 0.05

#ifdef __cplusplus
}
#endif

#endif
