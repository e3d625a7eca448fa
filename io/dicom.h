/* io/dicom.h: a scanner's DBT projections, from DICOM into a dbtr scan (docs/dicom.md).
 *
 * Two kinds of input are read, through GDCM: one multi-frame Breast Projection X-Ray Image
 * (For Processing or For Presentation), whose functional groups give each frame's
 * geometry in the isocenter reference system; or single-frame MG or DX For Processing
 * images of one series, one per view, whose Positioner Primary Angle and distances give
 * the source, with the pivot height and the detector's motion from the caller. Either way
 * the geometry lands in the presets' frame (docs/ARCHITECTURE.md): the first view's
 * detector in the plane z = 0, its columns along +x centred on x = 0, its rows along +y
 * from the chest wall at y = 0, and the source above. */
#ifndef DBTR_IO_DICOM_H
#define DBTR_IO_DICOM_H

#include <stddef.h>

#include "io/scan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  DBTR_DETECTOR_UNKNOWN = 0,
  DBTR_DETECTOR_STATIONARY, /* stays in the plane z = 0 */
  DBTR_DETECTOR_ROTATING    /* turns about the pivot with the source, facing it */
} dbtr_detector_motion;

/* What DICOM does not say, each with where it came from ("--i0", "--system ge"), which
 * the import writes into the scan's provenance notes. A NULL `from` means not given. */
typedef struct {
  double pivot_mm;                 /* height of the source's rotation axis above the detector */
  const char *pivot_from;          /* single-frame images need it */
  dbtr_detector_motion detector;   /* single-frame images need it */
  const char *detector_from;
  double i0;                       /* unattenuated counts per pixel, every view; required */
  const char *i0_from;
} dbtr_dicom_opts;

/* Reads the projections in paths (DICOM files, or folders whose files are all read) into s
 * (zeroed first): counts in view order, a scalar i0, the geometry, the reconstruction grid
 * when the files give the breast thickness, and provenance notes for each. s->stored_dtype
 * is the smallest type that stores the counts exactly. On error s is left freed and the
 * message names the file and the attribute by tag and keyword, e.g.
 * "view3.dcm: (0018,1110) DistanceSourceToDetector: missing"; a value single-frame images
 * need and o lacks is named with the `dbtr import` flag that gives it. */
int dbtr_dicom_import(dbtr_scan *s, const char *const *paths, size_t n_paths, const dbtr_dicom_opts *o);
/* The same, each file first read in a forked child with seconds to finish (io/guard.h): its
 * header and structure, and its pixel data's length against its header, undecoded. A file
 * that crashes GDCM (an assert that aborts, a bad pointer) or makes it loop is refused by
 * name (DBTR_EFORMAT), before the import reads it in this process. */
int dbtr_dicom_import_guarded(dbtr_scan *s, const char *const *paths, size_t n_paths, const dbtr_dicom_opts *o,
                              unsigned seconds);

#ifdef __cplusplus
}
#endif

#endif
