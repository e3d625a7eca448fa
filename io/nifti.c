/* io/nifti.c: single-file NIfTI-1 volumes (.nii, .nii.gz) through libnifti's nifti2_io,
 * which reads and writes NIfTI-1 and NIfTI-2 (docs/volume-format.md).
 *
 * libnifti fills the header from a nifti_image (nifti_convert_nim2n1hdr) and derives the
 * qform from the same matrix as the sform (nifti_dmat44_to_quatern); znzlib, libnifti's
 * plain-or-gzip file layer, writes the bytes: the header, the empty extension block, the
 * data. We do not call nifti_image_write: it returns nothing and reports a failed write
 * only on stderr, and it picks gzip from the file name, which the temporary name of
 * io/atomic_file.h does not end with. Writing the three parts here keeps every failure a
 * DBTR_EIO with its cause, and the file whole or absent.
 *
 * NIfTI-1 rather than NIfTI-2: every NIfTI reader opens it, and its 16-bit dimensions hold
 * any DBT grid (a detector is a few thousand pixels a side). Its pixdim, affine and scaling
 * fields are float32, so the voxel size and origin it carries are rounded to float. */
#include "io/nifti.h"

#include <errno.h>
#include <nifti2_io.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/atomic_file.h"
#include "io/volume_format.h"
#include "recon/error.h"

/* The largest dimension a NIfTI-1 header holds (dim[] is int16). */
enum { NIFTI1_MAX_DIM = 32767 };

/* The header of a NIfTI-1 file of grid g, made by libnifti. */
static int make_header(const char *path, const dbtr_grid *g, const dbtr_tiff_opts *opts, nifti_1_header *hdr) {
  const dbtr_tiff_format format = opts ? opts->format : DBTR_TIFF_FLOAT32;
  const int u16 = format == DBTR_TIFF_UINT16;
  const int64_t dims[8] = {3, (int64_t)g->nx, (int64_t)g->ny, (int64_t)g->nz, 1, 1, 1, 1};
  const int type = u16 ? DT_UINT16 : format == DBTR_TIFF_FLOAT64 ? DT_FLOAT64 : DT_FLOAT32;
  nifti_image *nim = nifti_make_new_nim(dims, type, 0);
  if (!nim) return dbtr_err(DBTR_ENOMEM, "%s: libnifti cannot make a header", path);
  nim->nifti_type = NIFTI_FTYPE_NIFTI1_1; /* one file: header, extension block, data */
  nim->dx = nim->pixdim[1] = g->dx;
  nim->dy = nim->pixdim[2] = g->dy;
  nim->dz = nim->pixdim[3] = g->dz;
  nim->xyz_units = NIFTI_UNITS_MM;
  /* Voxel (i, j, k) is at origin + (i dx, j dy, k dz) in dbtr's world axes, those of the
   * scanner: x along the chest wall, y toward the nipple, z up toward the source. */
  const nifti_dmat44 m = {{{g->dx, 0.0, 0.0, g->origin[0]},
                           {0.0, g->dy, 0.0, g->origin[1]},
                           {0.0, 0.0, g->dz, g->origin[2]},
                           {0.0, 0.0, 0.0, 1.0}}};
  nim->sform_code = nim->qform_code = NIFTI_XFORM_SCANNER_ANAT;
  nim->sto_xyz = m;
  double sx, sy, sz; /* the column lengths, dx, dy and dz again */
  nifti_dmat44_to_quatern(m, &nim->quatern_b, &nim->quatern_c, &nim->quatern_d, &nim->qoffset_x, &nim->qoffset_y,
                          &nim->qoffset_z, &sx, &sy, &sz, &nim->qfac);
  if (u16) { /* readers apply value = scl_slope * stored + scl_inter */
    nim->scl_slope = 1.0 / opts->u16_scale;
    nim->scl_inter = opts->u16_offset;
  }
  snprintf(nim->descrip, sizeof nim->descrip, "dbtr: linear attenuation coefficients, 1/mm");
  nifti_set_iname_offset(nim, 1);
  int bad = nifti_convert_nim2n1hdr(nim, hdr);
  int64_t offset = nim->iname_offset;
  nifti_image_free(nim);
  /* The data must start right after the header and the 4-byte extension block we write. */
  if (bad || offset != (int64_t)(sizeof *hdr + sizeof(nifti1_extender)))
    return dbtr_err(DBTR_EINTERNAL, "%s: libnifti made no usable NIfTI-1 header", path);
  return 0;
}

/* Writes the volume slice after slice: floats or doubles as they are, or floats converted
 * to uint16 in slice (NULL for float32 and float64), setting the disk to work on each
 * (dbtr_atomic_written). Returns 1 when znzlib took every byte. */
static int write_data(znzFile fp, const dbtr_atomic_file *f, const dbtr_grid *g, const void *data,
                      const dbtr_tiff_opts *opts, uint16_t *slice) {
  const size_t plane = g->nx * g->ny; /* no overflow: the caller allocated (nz, ny, nx) */
  const size_t size = opts && opts->format == DBTR_TIFF_FLOAT64 ? sizeof(double) : sizeof(float);
  for (size_t k = 0; k < g->nz; k++) {
    const void *src = (const unsigned char *)data + k * plane * size;
    if (slice)
      for (size_t i = 0; i < plane; i++)
        slice[i] = dbtr_u16_store(((const float *)src)[i], opts->u16_scale, opts->u16_offset);
    size_t got = slice ? znzwrite(slice, sizeof *slice, plane, fp) : znzwrite(src, size, plane, fp);
    if (got != plane) return 0;
    dbtr_atomic_written(f);
  }
  return 1;
}

/* The header, an empty extension block and the data, into the temporary file f->tmp. */
static int write_file(const dbtr_atomic_file *f, int gzip, const nifti_1_header *hdr, const dbtr_grid *g,
                      const void *data, const dbtr_tiff_opts *opts) {
  uint16_t *slice = NULL;
  if (opts && opts->format == DBTR_TIFF_UINT16) {
    int rc = dbtr_alloc((void **)&slice, g->nx * g->ny, sizeof *slice, f->target);
    if (rc) return rc;
  }
  errno = 0;
  znzFile fp = znzopen(f->tmp, "wb", gzip);
  if (znz_isnull(fp)) {
    free(slice);
    return dbtr_err(DBTR_EIO, "%s: cannot create the file: %s", f->target, errno ? strerror(errno) : "znzopen failed");
  }
  const nifti1_extender none = {{0, 0, 0, 0}}; /* extension[0] = 0: no extensions follow */
  int ok = znzwrite(hdr, 1, sizeof *hdr, fp) == sizeof *hdr && znzwrite(&none, 1, sizeof none, fp) == sizeof none &&
           write_data(fp, f, g, data, opts, slice);
  int err = errno;
  /* gzclose and fclose write what they still hold: a full disk may show only here. */
  if (znzclose(fp) != 0 && ok) {
    ok = 0;
    err = errno;
  }
  free(slice);
  if (!ok) return dbtr_err(DBTR_EIO, "%s: cannot write: %s", f->target, err ? strerror(err) : "write failed");
  return 0;
}

int dbtr_nifti_write(const char *path, const dbtr_grid *grid, const void *data, const dbtr_tiff_opts *opts) {
  dbtr_volume_type type = DBTR_VOLUME_TIFF;
  int rc = dbtr__volume_check(path, grid, data, opts);
  if (!rc) rc = dbtr__volume_type_by_name(path, &type);
  if (!rc && type == DBTR_VOLUME_TIFF)
    rc = dbtr_err(DBTR_EINVAL, "%s: a NIfTI file's name must end in .nii or .nii.gz", path);
  if (!rc && (grid->nx > NIFTI1_MAX_DIM || grid->ny > NIFTI1_MAX_DIM || grid->nz > NIFTI1_MAX_DIM))
    rc = dbtr_err(DBTR_EINVAL, "%s: volume %zu x %zu x %zu: NIfTI-1 holds at most %d voxels a side; write a .tif", path,
                  grid->nx, grid->ny, grid->nz, NIFTI1_MAX_DIM);
  nifti_1_header hdr;
  if (!rc) rc = make_header(path, grid, opts, &hdr);
  dbtr_atomic_file f = {0};
  if (!rc) rc = dbtr_atomic_begin(&f, path);
  if (!rc) rc = write_file(&f, type == DBTR_VOLUME_NIFTI_GZ, &hdr, grid, data, opts);
  if (rc) {
    dbtr_atomic_abort(&f);
    return rc;
  }
  return dbtr_atomic_commit(&f);
}

int dbtr_nifti_available(void) { return 1; }
