/* io/volume.c: the volume file type from the output name, and the checks every volume
 * writer shares (io/volume.h). */
#include "io/volume.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#include "io/nifti.h"
#include "recon/error.h"

/* 1 if s ends in suffix, ignoring letter case: VOL.TIF is a TIFF like vol.tif. */
static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n > m && strcasecmp(s + n - m, suffix) == 0;
}

int dbtr_volume_type_of(const char *path, dbtr_volume_type *type) {
  if (!path || !*path) return dbtr_err(DBTR_EINVAL, "volume output: path is empty");
  if (ends_with(path, ".tif") || ends_with(path, ".tiff"))
    *type = DBTR_VOLUME_TIFF;
  else if (ends_with(path, ".nii"))
    *type = DBTR_VOLUME_NIFTI;
  else if (ends_with(path, ".nii.gz"))
    *type = DBTR_VOLUME_NIFTI_GZ;
  else
    return dbtr_err(DBTR_EINVAL, "%s: unknown volume file type; the name must end in .tif, .tiff, .nii or .nii.gz",
                    path);
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

int dbtr__volume_check(const char *path, const dbtr_grid *g, const void *data, const dbtr_tiff_opts *opts) {
  if (!path || !*path) return dbtr_err(DBTR_EINVAL, "volume output: path is empty");
  if (!g || !data) return dbtr_err(DBTR_EINVAL, "%s: no volume to write", path);
  if (g->nx == 0 || g->ny == 0 || g->nz == 0)
    return dbtr_err(DBTR_EINVAL, "%s: volume %zu x %zu x %zu has no voxels", path, g->nx, g->ny, g->nz);
  const double d[6] = {g->dx, g->dy, g->dz, g->origin[0], g->origin[1], g->origin[2]};
  for (int i = 0; i < 6; i++)
    if (!isfinite(d[i]) || (i < 3 && !(d[i] > 0.0)))
      return dbtr_err(DBTR_EINVAL,
                      "%s: voxel size %g x %g x %g mm, origin (%g, %g, %g): sizes must be positive, all finite", path,
                      d[0], d[1], d[2], d[3], d[4], d[5]);
  if (!opts || opts->format == DBTR_TIFF_FLOAT32 || opts->format == DBTR_TIFF_FLOAT64) return 0;
  if (opts->format != DBTR_TIFF_UINT16)
    return dbtr_err(DBTR_EINVAL, "%s: unknown sample format %d", path, (int)opts->format);
  if (!(isfinite(opts->u16_scale) && opts->u16_scale > 0.0) || !isfinite(opts->u16_offset))
    return dbtr_err(DBTR_EINVAL, "%s: uint16 scale %g and offset %g: the scale must be positive, both finite", path,
                    opts->u16_scale, opts->u16_offset);
  return 0;
}
