/* io/volume.c: the volume file type from the output name, and the writer of that type
 * (io/volume.h). It sits above the TIFF and NIfTI writers; what they share with it is in
 * io/volume_format.c, below them. */
#include "io/volume.h"

#include <math.h>

#include "io/nifti.h"
#include "io/tiff.h"
#include "recon/error.h"

int dbtr_volume_type_of(const char *path, dbtr_volume_type *type) {
  int rc = dbtr__volume_type_by_name(path, type);
  if (rc) return rc;
  if (*type != DBTR_VOLUME_TIFF && !dbtr_nifti_available())
    return dbtr_err(DBTR_EINVAL, "%s: this dbtr was built without NIfTI output (libnifti2-dev); write .tif", path);
  return 0;
}

int dbtr_volume_check_finite(const char *path, const dbtr_grid *grid, const float *data) {
  size_t n = grid->nx * grid->ny * grid->nz;
  for (size_t i = 0; i < n; i++)
    if (!isfinite(data[i]))
      return dbtr_err(DBTR_EINVAL, "%s: voxel (%zu, %zu, %zu) is %g; a volume to project must be finite", path,
                      i % grid->nx, i / grid->nx % grid->ny, i / (grid->nx * grid->ny), (double)data[i]);
  return 0;
}

int dbtr_volume_write(const char *path, const dbtr_grid *grid, const void *data, const dbtr_tiff_opts *opts) {
  dbtr_volume_type type = DBTR_VOLUME_TIFF;
  int rc = dbtr_volume_type_of(path, &type);
  if (rc) return rc;
  return type == DBTR_VOLUME_TIFF ? dbtr_tiff_write(path, grid, data, opts) : dbtr_nifti_write(path, grid, data, opts);
}
