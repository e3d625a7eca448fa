/* io/nifti_none.c: dbtr built without libnifti (DBTR_WITH_NIFTI=OFF, or AUTO without
 * libnifti2-dev): .nii names are refused when the output is checked, before any work. */
#include "io/nifti.h"
#include "recon/error.h"

int dbtr_nifti_available(void) { return 0; }

int dbtr_nifti_write(const char *path, const dbtr_grid *grid, const void *data, const dbtr_tiff_opts *opts) {
  (void)grid, (void)data, (void)opts;
  return dbtr_err(DBTR_EINVAL, "%s: this dbtr was built without NIfTI output (libnifti2-dev); write .tif", path);
}
