/* engine/api.c: the public ML-EM handle (include/dbtr.h): a session (engine/session.h), opened
 * as `dbtr recon` opens it, so that the same scan, options and iterations give the same bits;
 * and one scan file to one volume file, a many-scan run of one (engine/batch.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/batch.h"
#include "engine/fbp.h"
#include "engine/session.h"
#include "io/volume.h"
#include "include/dbtr.h"
#include "recon/error.h"
#include "recon/version.h"

struct dbtr_recon {
  dbtr_session *s;   /* ML-EM; NULL for algorithm fbp */
  double *fbp;       /* algorithm fbp: the volume, n_vox doubles */
  size_t n_vox;
  dbtr_fbp_report rep;
};

/* Algorithm "fbp": the checks of a problem-only session (the geometry, the grid, the values),
 * then the FBP volume (engine/fbp.h), kept in double for dbtr_recon_volume. */
static int open_fbp(dbtr_recon *r, const dbtr_scan *scan, const dbtr_grid *grid, const dbtr_recon_opts *o) {
  if (o->start || o->init != 0.0)
    return dbtr_err(DBTR_EINVAL, "algorithm fbp takes no start volume (start, init are ML-EM's)");
  int rc = dbtr_grid_count(grid, &r->n_vox);
  if (!rc) rc = dbtr_alloc((void **)&r->fbp, r->n_vox, sizeof *r->fbp, "FBP volume");
  return rc ? rc : dbtr_fbp_checked(scan, grid, o, NULL, 0, r->fbp, &r->rep);
}

const char *dbtr_version(void) { return DBTR_VERSION_STRING; }

/* dbtr_recon_open, of the scan's data (device NULL) or of data in a GPU's memory. */
static int recon_open(dbtr_recon **out, const dbtr_scan *scan, const dbtr_device_data *device, const dbtr_grid *grid,
                      const dbtr_recon_opts *opts) {
  *out = NULL;
  if (!scan || !grid) return dbtr_err(DBTR_EINVAL, "dbtr_recon_open: no scan or no grid given");
  dbtr_session_opts so = {.recon = opts ? *opts : (dbtr_recon_opts){0}, .device = device};
  if (device && so.recon.algorithm && !strcmp(so.recon.algorithm, "fbp"))
    return dbtr_err(DBTR_EINVAL, "algorithm fbp: FBP filters in host memory, and the data lie in cuda:%d",
                    device->device);
  dbtr_recon *r = calloc(1, sizeof *r);
  if (!r) return dbtr_err(DBTR_ENOMEM, "reconstruction: out of memory");
  const char *a = so.recon.algorithm;
  int rc = a && !strcmp(a, "fbp") ? open_fbp(r, scan, grid, &so.recon) : dbtr_session_open(&r->s, scan, grid, &so);
  if (rc) {
    dbtr_recon_close(&r);
    return rc;
  }
  *out = r;
  return 0;
}

int dbtr_recon_open(dbtr_recon **out, const dbtr_scan *scan, const dbtr_grid *grid, const dbtr_recon_opts *opts) {
  return recon_open(out, scan, NULL, grid, opts);
}

int dbtr_recon_open_device(dbtr_recon **out, const dbtr_scan *scan, const dbtr_device_data *data, const dbtr_grid *grid,
                           const dbtr_recon_opts *opts) {
  *out = NULL;
  if (!data) return dbtr_err(DBTR_EINVAL, "dbtr_recon_open_device: no device data given");
  return recon_open(out, scan, data, grid, opts);
}

const char *dbtr_recon_backend(const dbtr_recon *r) { return r->s ? dbtr_session_backend(r->s)->name : r->rep.backend; }

const char *dbtr_recon_fallback(const dbtr_recon *r) { return r->s ? dbtr_session_fallback(r->s) : r->rep.fallback; }

dbtr_precision dbtr_recon_precision(const dbtr_recon *r) {
  return r->s ? dbtr_session_backend(r->s)->precision : r->rep.precision;
}

int dbtr_recon_iterate(dbtr_recon *r, double *deviance) {
  if (!r->s) return dbtr_err(DBTR_EINVAL, "algorithm fbp has no iterations: its volume is ready when opened");
  double dev;
  int rc = dbtr_mlem_iterate(dbtr_session_mlem(r->s), dbtr_session_backend(r->s), &dev);
  if (!rc && deviance) *deviance = dev;
  return rc;
}

int dbtr_recon_volume(dbtr_recon *r, void *out) {
  if (!r->s) {
    dbtr_convert_from_double(r->rep.precision, r->fbp, r->n_vox, out);
    return 0;
  }
  return dbtr_session_get_volume(r->s, out);
}

int dbtr_recon_volume_device(dbtr_recon *r, void *out) {
  if (!r->s) return dbtr_err(DBTR_EINVAL, "algorithm fbp's volume is in host memory: dbtr_recon_volume");
  return dbtr_session_get_volume_device(r->s, out);
}

void dbtr_recon_close(dbtr_recon **r) {
  if (!*r) return;
  dbtr_session_close(&(*r)->s);
  free((*r)->fbp);
  free(*r);
  *r = NULL;
}

/* The item's fate, kept for the caller. */
typedef struct {
  int status, code;
  char message[1024];
} file_result;

static void on_file(void *user, const dbtr_batch_event *e) {
  file_result *r = user;
  r->status = (int)e->status;
  r->code = e->code;
  if (e->message) snprintf(r->message, sizeof r->message, "%s", e->message);
}

int dbtr_recon_file(const char *scan, const char *output, const dbtr_recon_file_opts *opts) {
  static const dbtr_recon_file_opts defaults = {0};
  const dbtr_recon_file_opts *o = opts ? opts : &defaults;
  if (!scan || !output) return dbtr_err(DBTR_EINVAL, "dbtr_recon_file: no scan or no output given");
  const char *f = o->format ? o->format : "float32";
  dbtr_tiff_format format = !strcmp(f, "float64") ? DBTR_TIFF_FLOAT64 : !strcmp(f, "uint16") ? DBTR_TIFF_UINT16
                                                                                              : DBTR_TIFF_FLOAT32;
  if (format == DBTR_TIFF_FLOAT32 && strcmp(f, "float32"))
    return dbtr_err(DBTR_EINVAL, "format '%s': expected float32, float64 or uint16", f);
  if ((format == DBTR_TIFF_UINT16) != (o->u16_scale != 0.0))
    return dbtr_err(DBTR_EINVAL, "u16_scale %g: uint16 needs a scale, and only uint16 takes one", o->u16_scale);
  dbtr_volume_type type;
  int rc = dbtr_volume_type_of(output, &type);
  if (rc) return rc;
  dbtr_batch_opts bo = {.recon = o->recon, .iterations = o->iterations ? o->iterations : 10,
                        .format = {.format = format, .u16_scale = o->u16_scale}, .force = o->force, .log = o->log,
                        .threads = o->threads};
  bo.grid = (dbtr_grid_given){.has_dims = o->has_dims, .has_voxel = o->has_voxel, .has_origin = o->has_origin};
  memcpy(bo.grid.dims, o->dims, sizeof o->dims);
  memcpy(bo.grid.voxel, o->voxel, sizeof o->voxel);
  memcpy(bo.grid.origin, o->origin, sizeof o->origin);
  file_result res = {.status = -1};
  bo.on_item = on_file;
  bo.user = &res;
  dbtr_batch_item item = {scan, output};
  dbtr_batch_summary sum;
  if ((rc = dbtr_batch_run(&item, 1, &bo, &sum))) return rc;
  if (res.status == DBTR_BATCH_FAILED) return dbtr_err(res.code ? res.code : DBTR_EIO, "%s", res.message);
  return res.status == DBTR_BATCH_SKIPPED ? 1 : 0;
}
