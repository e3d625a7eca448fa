/* io/nifti.h: volumes as single-file NIfTI-1 (.nii, or .nii.gz compressed with gzip)
 * through libnifti, for nibabel, ITK-SNAP, 3D Slicer, FSL and Fiji's NIfTI reader: voxel
 * (i, j, k) at origin + (i dx, j dy, k dz) mm in the sform and the qform, units mm, data
 * (nx, ny, nz) with x fastest, float32, float64, or uint16 with scl_slope/scl_inter back to
 * 1/mm.
 * Written to a temporary name in the target folder and renamed into place. No reader:
 * dbtr reads volumes from TIFF (docs/volume-format.md). */
#ifndef DBTR_NIFTI_H
#define DBTR_NIFTI_H

#include "io/volume_format.h"
#include "recon/geom.h"

/* 1 when this build writes NIfTI (libnifti was found), else 0 (io/nifti_none.c). */
int dbtr_nifti_available(void);
/* Writes data ((nz, ny, nx) values in 1/mm, x fastest) on grid to path, which must end in
 * .nii or .nii.gz (gzip). opts NULL means float32: the floats bit for bit; DBTR_TIFF_FLOAT64
 * takes doubles and writes them bit for bit (DT_FLOAT64). uint16 stores what the TIFF writer
 * stores, with scl_slope = 1 / u16_scale and scl_inter = u16_offset. NIfTI-1 counts voxels
 * in 16-bit fields, so a side over 32767 is refused (DBTR_EINVAL). */
int dbtr_nifti_write(const char *path, const dbtr_grid *grid, const void *data, const dbtr_tiff_opts *opts);

#endif
