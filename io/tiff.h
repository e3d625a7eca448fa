/* io/tiff.h: multi-page TIFF volumes, one page per z slice and one strip per page, that
 * Fiji/ImageJ, tifffile and napari open with the right voxel size (ImageJ description:
 * ImageJ=, images=, slices=, unit=mm, spacing=; X/Y resolution in pixels per mm) and value
 * unit (vunit=1/mm; uint16 with a straight-line calibration back to 1/mm). Samples are
 * float32, uint16 or float64 (for tifffile and napari: ImageJ 1.x refuses 64-bit samples;
 * docs/volume-format.md). BigTIFF when the file would pass 4 GiB. Written to a temporary
 * name in the target folder and renamed into place. */
#ifndef DBTR_TIFF_H
#define DBTR_TIFF_H

#include "io/volume_format.h"
#include "recon/geom.h"

/* The sample format (dbtr_tiff_opts) and the uint16 conversion (dbtr_u16_from_double) are
 * io/volume_format.h's, shared with the NIfTI writer. */

/* Writes data ((nz, ny, nx) values in 1/mm, x fastest: floats, or doubles for FLOAT64) with
 * the grid's voxel size. opts NULL means float32. The grid origin is written into the
 * ImageJ description as well. */
int dbtr_tiff_write(const char *path, const dbtr_grid *grid, const void *data, const dbtr_tiff_opts *opts);

/* Reads a volume written by dbtr or any single-channel multi-page TIFF of uint8, uint16,
 * uint32, int16, int32, float32 or float64 samples, all pages the same size. Returns the
 * grid (voxel size from the ImageJ spacing and resolution when present, else 1 mm; origin
 * from the description when present, else 0) and a malloc'd float array the caller frees. */
int dbtr_tiff_read(const char *path, dbtr_grid *grid, float **data);

#endif
