/* quality/quality.h: what a physicist measures on a reconstruction, per object
 * (docs/quality.md): the in-focus slice, the contrast against the object's background, the
 * contrast-to-noise ratio (CNR, also called SDNR), and the artifact spread function (ASF:
 * the object's contrast in each slice relative to its in-focus slice) with its full width at
 * half maximum in mm, the depth resolution.
 *
 * The objects are a phantom's (phantoms/phantom.h): read from the scan file's /phantom
 * (phantoms/objects_h5.h), or regions given by hand (dbtr_quality_regions_read). This is the
 * one home of the measures: `dbtr quality`, `dbtr validate --quality` and the Python package
 * (through dbtr_quality_json, include/dbtr.h) all call it. */
#ifndef DBTR_QUALITY_H
#define DBTR_QUALITY_H

#include <stddef.h>

#include "include/dbtr.h"
#include "phantoms/phantom.h"

/* The background region (docs/quality.md, "Regions"): a square frame of voxel columns around
 * the object's bounding box, DBTR_QUALITY_GAP voxels away from it and at least
 * DBTR_QUALITY_MIN_WIDTH voxels wide (wider for larger objects: as wide as the larger half
 * side of the box). */
#define DBTR_QUALITY_GAP 2
#define DBTR_QUALITY_MIN_WIDTH 4

/* One object's measures. Slices are 0-based; lengths in mm, values in the volume's unit. */
typedef struct {
  size_t object;        /* its index in the phantom's list */
  int measured;         /* 0: its centre lies outside the volume: nothing below is set */
  int partial;          /* 1: no voxel of its centre slice lies whole inside it (smaller than a voxel, or
                           thinner than a slice), so its region is the fallback and even the truth
                           shows less than the expected contrast (partial volume) */
  size_t n_object, n_background; /* voxel columns in the object's and the background's region */
  size_t center_slice;  /* the slice nearest its centre */
  size_t focus_slice;   /* the in-focus slice: where the contrast is largest (in the expected sign) */
  double mean_object, mean_background, sd_background; /* in the in-focus slice; sd with n - 1 */
  double contrast;      /* mean_object - mean_background in the in-focus slice */
  double expected;      /* the object's documented contrast (NaN: not known) */
  double cnr;           /* contrast / sd_background; NaN when the background has fewer than 2 voxels,
                           +-inf when it has no noise (the truth) */
  double fwhm;          /* the ASF's full width at half maximum, mm; NaN where it does not fall below
                           half on both sides within the volume */
  double *contrast_z;   /* [nz]: the contrast in every slice */
  double *asf;          /* [nz]: contrast_z / contrast */
} dbtr_quality_object;

typedef struct {
  size_t n;             /* the phantom's test objects (info[i].target), in list order */
  dbtr_quality_object *obj;
  size_t nz;
  double dz;
} dbtr_quality;

/* Measures every test object of p in vol ((nz, ny, nx) elements of prec, float or double) on
 * grid. q is zeroed first; free it with dbtr_quality_free. */
int dbtr_quality_measure(dbtr_quality *q, const void *vol, dbtr_precision prec, const dbtr_grid *grid,
                         const dbtr_phantom *p);
void dbtr_quality_free(dbtr_quality *q);

/* The full width at half maximum of profile[0..n-1] (1 at peak, the in-focus slice), slices
 * dz apart: from the peak outwards, the first slice below 0.5 on each side, the crossing
 * placed by linear interpolation between it and the slice before it. NaN when a side never
 * falls below 0.5. */
double dbtr_quality_fwhm(const double *profile, size_t n, size_t peak, double dz);

/* Regions given by hand (docs/quality.md, "Regions by hand"): a JSON file
 *   {"regions": [{"name": "lesion", "shape": "ellipsoid", "center": [x, y, z], "half": [a, b, c],
 *                 "contrast": 0.04}, ...]}
 * (shape: ellipsoid (default), cylinder (axis along z) or box; center and half in mm; contrast,
 * the expected one, optional) read into p as a phantom named "regions" whose every shape is
 * a test object lying in nothing. Errors name the file and the region. */
int dbtr_quality_regions_read(dbtr_phantom *p, const char *path);

/* The objects to measure: the scan file's /phantom (DBTR_EINVAL naming the file when it has
 * none) or the regions file, exactly one of the two given. Free p with dbtr_phantom_free. */
int dbtr_quality_objects(dbtr_phantom *p, const char *scan, const char *regions);

/* How much a volume changes an object's measures against a reference volume of the same
 * problem (`dbtr validate --quality`, docs/validation.md "Quality"): each measure in both and
 * the change, in dbtr_quality_change (include/dbtr.h, with the verdict of a path's changes,
 * dbtr_quality_verdict_of). A change is NaN, "not measurable", where either value is not
 * finite (no FWHM: the ASF does not fall to half; no CNR: too small a background, or none of
 * the object in the volume) or, for a relative change, where the reference's value is 0: never
 * a silent 0.
 *
 * The reference's half of c, from its measures o (the path's half NaN). */
void dbtr_quality_change_ref(dbtr_quality_change *c, const dbtr_quality_object *o);
/* The path's half of c, from its measures o of the same object, and the changes. */
void dbtr_quality_change_path(dbtr_quality_change *c, const dbtr_quality_object *o);

/* The measures as JSON text (docs/quality.md, "Report"), malloc'd into *out: the report's
 * quality.json and what Python's dbtr.quality returns. */
int dbtr_quality_to_json(const dbtr_quality *q, const dbtr_phantom *p, const dbtr_grid *grid, char **out);

#endif
