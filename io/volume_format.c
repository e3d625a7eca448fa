/* io/volume_format.c: what every volume writer shares (io/volume_format.h): the uint16
 * conversion, the checks of a writer's arguments, the file type from a name. */
#include "io/volume_format.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#include "recon/error.h"

uint16_t dbtr_u16_from_double(double v) {
  if (!(v > 0.0)) return 0; /* negative, zero and NaN: never wrap to 65467 */
  double r = round(v);      /* halves away from zero, exactly: v + 0.5 would round 0.49999999999999994 up */
  if (r >= 65535.0) return 65535;
  return (uint16_t)r;
}

uint16_t dbtr_u16_store(float v, double scale, double offset) {
  return dbtr_u16_from_double(((double)v - offset) * scale);
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

/* 1 if s ends in suffix, ignoring letter case: VOL.TIF is a TIFF like vol.tif. */
static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n > m && strcasecmp(s + n - m, suffix) == 0;
}

int dbtr__volume_type_by_name(const char *path, dbtr_volume_type *type) {
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
  return 0;
}
