/* io/volume.h: writing a volume in the file type its name asks for: TIFF (.tif, .tiff;
 * io/tiff.h) for Fiji/ImageJ, tifffile and napari, or NIfTI-1 (.nii, .nii.gz; io/nifti.h)
 * for nibabel and the neuroimaging tools. The app writes every volume through
 * dbtr_volume_write, so a new type is a new case here. The sample format, dbtr_volume_type and
 * what the writers share are in io/volume_format.h, below them. docs/volume-format.md. */
#ifndef DBTR_VOLUME_H
#define DBTR_VOLUME_H

#include "io/volume_format.h"
#include "recon/geom.h"

/* The type named by the end of path, in any letter case: .tif or .tiff, .nii, .nii.gz.
 * Anything else is DBTR_EINVAL with a message naming path and the endings accepted, so a
 * caller can check an output name before the work that fills it. */
int dbtr_volume_type_of(const char *path, dbtr_volume_type *type);

/* Writes data ((nz, ny, nx) values in 1/mm, x fastest) on grid as the type of path. opts
 * (NULL: float32) is the sample format of every type, and says what data holds: floats
 * written as float32, or as uint16 stored as round_sat((value - offset) * scale) with the
 * scale written beside it (io/tiff.h); or, with DBTR_TIFF_FLOAT64, doubles written as
 * float64. */
int dbtr_volume_write(const char *path, const dbtr_grid *grid, const void *data, const dbtr_tiff_opts *opts);

/* Every voxel finite, or DBTR_EINVAL naming path and the first voxel that is not (x, y, z):
 * for volumes that go into a computation (dbtr project), where a NaN would come out as a
 * plausible scan that dbtr recon then refuses. */
int dbtr_volume_check_finite(const char *path, const dbtr_grid *grid, const float *data);

#endif
