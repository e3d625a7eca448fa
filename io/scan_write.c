/* io/scan_write.c: writes the HDF5 scan file, format "dbtr-scan" version 1
 * (docs/scan-format.md "What the writer produces"). The reader, io/scan.c, is the judge of
 * the values; the writer checks only what it needs to produce a file the reader can take
 * apart, and writes under a temporary name that is renamed into place. */
#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/atomic_file.h"
#include "io/scan.h"
#include "io/scan_h5.h"
#include "recon/error.h"

/* Objects are created without HDF5's modification times (H5Pset_obj_track_times), so that
 * the same scan written twice gives the same bytes: a file's checksum then identifies its
 * contents. */
typedef struct {
  const char *path; /* the final name, for messages */
  hid_t file;
  hid_t dcpl, gcpl; /* dataset and group creation lists without times */
} writer;

static int write_fail(const writer *w, const char *name) {
  char why[256];
  return dbtr_err(DBTR_EIO, "%s: %s: cannot write (%s)", w->path, name, dbtr__h5_reason(why, sizeof why));
}

static int write_str_attr(const writer *w, hid_t obj, const char *attr, const char *value, const char *label) {
  hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR), a = H5I_INVALID_HID;
  /* HDF5 has no zero-length fixed strings: "" is stored as one padding byte. */
  herr_t st = t >= 0 && sp >= 0 ? H5Tset_size(t, strlen(value) ? strlen(value) : 1) : -1;
  if (st >= 0) st = H5Tset_strpad(t, H5T_STR_NULLPAD);
  if (st >= 0) st = (a = H5Acreate2(obj, attr, t, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0 ? 0 : -1;
  if (st >= 0) st = H5Awrite(a, t, value);
  int rc = st < 0 ? write_fail(w, label) : 0;
  dbtr__h5_close(&a, H5Aclose);
  dbtr__h5_close(&sp, H5Sclose);
  dbtr__h5_close(&t, H5Tclose);
  return rc;
}

/* A numeric attribute of n values (n = 0: scalar), stored as file_type. */
static int write_num_attr(const writer *w, hid_t obj, const char *attr, hid_t file_type, hid_t mem_type,
                          hsize_t n, const void *value, const char *label) {
  hid_t sp = n ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_SCALAR), a = H5I_INVALID_HID;
  herr_t st = sp >= 0 && (a = H5Acreate2(obj, attr, file_type, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0 ? 0 : -1;
  if (st >= 0) st = H5Awrite(a, mem_type, value);
  int rc = st < 0 ? write_fail(w, label) : 0;
  dbtr__h5_close(&a, H5Aclose);
  dbtr__h5_close(&sp, H5Sclose);
  return rc;
}

/* A float64 dataset of the given shape (rank 0: scalar). */
static int write_doubles(const writer *w, const char *name, int rank, const hsize_t *dims, const double *v) {
  hid_t sp = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR), d = H5I_INVALID_HID;
  herr_t st = sp >= 0 ? 0 : -1;
  if (st >= 0)
    st = (d = H5Dcreate2(w->file, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, w->dcpl, H5P_DEFAULT)) >= 0 ? 0 : -1;
  if (st >= 0) st = H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
  int rc = st < 0 ? write_fail(w, name) : 0;
  dbtr__h5_close(&d, H5Dclose);
  dbtr__h5_close(&sp, H5Sclose);
  return rc;
}

/* Rounded half away from zero and saturated: NaN and negatives to 0, above max to max. */
static double round_saturate(double x, double max) {
  if (!(x > 0.0)) return 0.0;
  double y = round(x);
  return y > max ? max : y;
}

/* Converts view k into buf as the stored dtype wants it. */
static void convert_view(const double *src, size_t n, dbtr_dtype dtype, void *buf) {
  for (size_t i = 0; i < n; i++) {
    switch (dtype) {
    case DBTR_DTYPE_FLOAT32: ((float *)buf)[i] = (float)src[i]; break;
    case DBTR_DTYPE_UINT16: ((uint16_t *)buf)[i] = (uint16_t)round_saturate(src[i], 65535.0); break;
    case DBTR_DTYPE_UINT32: ((uint32_t *)buf)[i] = (uint32_t)round_saturate(src[i], 4294967295.0); break;
    case DBTR_DTYPE_FLOAT64: ((double *)buf)[i] = src[i]; break;
    }
  }
}

/* /projections one view at a time, so conversion needs one view of memory; with gzip,
 * a chunk is one view, the unit a reader of one view wants. */
static int write_projections(const writer *w, const dbtr_scan *s, const dbtr_scan_write_opts *o) {
  static const size_t elem[4] = {4, 8, 2, 4};
  hid_t file_t[4] = {H5T_IEEE_F32LE, H5T_IEEE_F64LE, H5T_STD_U16LE, H5T_STD_U32LE};
  hid_t mem_t[4] = {H5T_NATIVE_FLOAT, H5T_NATIVE_DOUBLE, H5T_NATIVE_UINT16, H5T_NATIVE_UINT32};
  const dbtr_geom *g = &s->geom;
  size_t per_view = g->n_rows * g->n_cols; /* checked by the caller */
  hsize_t dims[3] = {g->n_views, g->n_rows, g->n_cols}, one[3] = {1, g->n_rows, g->n_cols};
  void *buf = NULL;
  hid_t fsp = H5Screate_simple(3, dims, NULL), msp = H5Screate_simple(3, one, NULL);
  hid_t dcpl = H5Pcopy(w->dcpl), d = H5I_INVALID_HID;
  herr_t st = fsp >= 0 && msp >= 0 && dcpl >= 0 ? 0 : -1;
  if (st >= 0 && o->gzip_level > 0) st = H5Pset_chunk(dcpl, 3, one);
  if (st >= 0 && o->gzip_level > 0) st = H5Pset_deflate(dcpl, (unsigned)o->gzip_level);
  if (st >= 0)
    st = (d = H5Dcreate2(w->file, "/projections", file_t[o->dtype], fsp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0 ? 0 : -1;
  int rc = st < 0 ? write_fail(w, "/projections") : dbtr_alloc(&buf, per_view, elem[o->dtype], "/projections");
  for (size_t k = 0; k < g->n_views && !rc; k++) {
    hsize_t start[3] = {k, 0, 0};
    convert_view(s->proj + k * per_view, per_view, o->dtype, buf);
    st = H5Sselect_hyperslab(fsp, H5S_SELECT_SET, start, NULL, one, NULL);
    if (st >= 0) st = H5Dwrite(d, mem_t[o->dtype], msp, fsp, H5P_DEFAULT, buf);
    if (st < 0) rc = write_fail(w, "/projections");
  }
  if (!rc)
    rc = write_str_attr(w, d, "quantity", s->quantity == DBTR_QUANTITY_COUNTS ? "counts" : "line_integral",
                        "/projections attribute 'quantity'");
  free(buf);
  dbtr__h5_close(&d, H5Dclose);
  dbtr__h5_close(&dcpl, H5Pclose);
  dbtr__h5_close(&msp, H5Sclose);
  dbtr__h5_close(&fsp, H5Sclose);
  return rc;
}

/* The optional /provenance group: one string attribute per note. */
static int write_notes(const writer *w, const dbtr_scan *s) {
  char label[96];
  hid_t grp = H5Gcreate2(w->file, "/provenance", H5P_DEFAULT, w->gcpl, H5P_DEFAULT);
  if (grp < 0) return write_fail(w, "/provenance");
  int rc = 0;
  for (size_t i = 0; i < s->n_notes && !rc; i++) {
    snprintf(label, sizeof label, "/provenance attribute '%s'", s->notes[i].key);
    rc = write_str_attr(w, grp, s->notes[i].key, s->notes[i].text, label);
  }
  H5Gclose(grp);
  return rc;
}

static int write_contents(const writer *w, const dbtr_scan *s, const dbtr_scan_write_opts *o) {
  const dbtr_geom *g = &s->geom;
  int version = DBTR__SCAN_VERSION;
  int rc = write_str_attr(w, w->file, "format", DBTR__SCAN_FORMAT, "root attribute 'format'");
  if (!rc)
    rc = write_num_attr(w, w->file, "format_version", H5T_STD_I32LE, H5T_NATIVE_INT, 0, &version,
                        "root attribute 'format_version'");
  if (!rc) rc = write_projections(w, s, o);
  if (!rc && s->i0_shape != DBTR_I0_NONE) {
    hsize_t full[3] = {g->n_views, g->n_rows, g->n_cols};
    int rank = dbtr__scan_i0_rank(s->i0_shape);
    rc = write_doubles(w, "/i0", rank, rank == 2 ? full + 1 : full, s->i0);
  }
  hid_t grp = rc ? H5I_INVALID_HID : H5Gcreate2(w->file, "/geometry", H5P_DEFAULT, w->gcpl, H5P_DEFAULT);
  if (!rc && grp < 0) rc = write_fail(w, "/geometry");
  dbtr__h5_close(&grp, H5Gclose);
  const double *src[4] = {g->source, g->detector_center, g->detector_u, g->detector_v};
  hsize_t gdims[2] = {g->n_views, 3};
  for (int i = 0; i < 4 && !rc; i++) rc = write_doubles(w, dbtr__scan_geom_names[i], 2, gdims, src[i]);
  if (!rc && s->n_notes) rc = write_notes(w, s);
  if (rc || !s->has_grid) return rc;
  long long dims[3] = {(long long)s->grid.nx, (long long)s->grid.ny, (long long)s->grid.nz};
  double size[3] = {s->grid.dx, s->grid.dy, s->grid.dz};
  grp = H5Gcreate2(w->file, "/volume", H5P_DEFAULT, w->gcpl, H5P_DEFAULT);
  if (grp < 0) return write_fail(w, "/volume");
  rc = write_num_attr(w, grp, "dims", H5T_STD_I64LE, H5T_NATIVE_LLONG, 3, dims, "/volume attribute 'dims'");
  if (!rc)
    rc = write_num_attr(w, grp, "voxel_size", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 3, size,
                        "/volume attribute 'voxel_size'");
  if (!rc)
    rc = write_num_attr(w, grp, "origin", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 3, s->grid.origin,
                        "/volume attribute 'origin'");
  H5Gclose(grp);
  return rc;
}

/* What the writer needs to produce a file the reader can take apart; the values
 * themselves are the reader's to judge. */
static int check_writable(const dbtr_scan *s, const char *path, const dbtr_scan_write_opts *o) {
  const dbtr_geom *g = &s->geom;
  size_t n;
  if (!path || !*path) return dbtr_err(DBTR_EINVAL, "scan output path is empty");
  if (o->dtype < DBTR_DTYPE_FLOAT32 || o->dtype > DBTR_DTYPE_UINT32)
    return dbtr_err(DBTR_EINVAL, "%s: /projections: unknown dtype %d", path, (int)o->dtype);
  if (o->gzip_level < 0 || o->gzip_level > 9)
    return dbtr_err(DBTR_EINVAL, "%s: /projections: gzip level %d; 0 (none) to 9 is expected", path, o->gzip_level);
  if (!s->proj || !g->source || !g->detector_center || !g->detector_u || !g->detector_v)
    return dbtr_err(DBTR_EINVAL, "%s: the scan to write has no projections or no geometry", path);
  if (g->n_views == 0 || g->n_rows == 0 || g->n_cols == 0)
    return dbtr_err(DBTR_EINVAL, "%s: /projections: %zu views of %zu x %zu pixels is empty", path, g->n_views,
                    g->n_cols, g->n_rows);
  int rc = dbtr_geom_proj_count(g, &n);
  if (rc) return rc;
  if (s->i0_shape < DBTR_I0_NONE || s->i0_shape > DBTR_I0_FULL)
    return dbtr_err(DBTR_EINVAL, "%s: /i0: unknown shape %d", path, (int)s->i0_shape);
  if (s->i0_shape != DBTR_I0_NONE && !s->i0)
    return dbtr_err(DBTR_EINVAL, "%s: /i0: the shape is set but no values", path);
  if (s->quantity == DBTR_QUANTITY_COUNTS && s->i0_shape == DBTR_I0_NONE)
    return dbtr_err(DBTR_EINVAL, "%s: /i0: counts need i0, and the scan has none", path);
  if (s->n_notes > DBTR_SCAN_MAX_NOTES)
    return dbtr_err(DBTR_EINVAL, "%s: /provenance: %zu notes; at most %d", path, s->n_notes, DBTR_SCAN_MAX_NOTES);
  if (s->quantity != DBTR_QUANTITY_COUNTS && s->quantity != DBTR_QUANTITY_LINE_INTEGRAL)
    return dbtr_err(DBTR_EINVAL, "%s: /projections: unknown quantity %d", path, (int)s->quantity);
  return 0;
}

void dbtr_scan_skip_exit_cleanup(void) { H5dont_atexit(); }

int dbtr_scan_note_set(dbtr_scan *s, const char *key, const char *fmt, ...) {
  size_t i = 0;
  while (i < s->n_notes && strcmp(s->notes[i].key, key) != 0) i++;
  if (i == DBTR_SCAN_MAX_NOTES)
    return dbtr_err(DBTR_EINVAL, "provenance note '%s': the scan holds %d notes already", key, DBTR_SCAN_MAX_NOTES);
  if (!*key || strlen(key) >= sizeof s->notes[i].key)
    return dbtr_err(DBTR_EINVAL, "provenance note '%s': a key has 1 to %zu characters", key,
                    sizeof s->notes[i].key - 1);
  snprintf(s->notes[i].key, sizeof s->notes[i].key, "%s", key);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->notes[i].text, sizeof s->notes[i].text, fmt, ap);
  va_end(ap);
  if (i == s->n_notes) s->n_notes++;
  return 0;
}

int dbtr_scan_write(const dbtr_scan *s, const char *path, const dbtr_scan_write_opts *opts) {
  return dbtr__scan_write_with(s, path, opts, NULL, NULL);
}

int dbtr__scan_write_with(const dbtr_scan *s, const char *path, const dbtr_scan_write_opts *opts,
                          int (*extra)(void *ctx, hid_t file, const char *path), void *ctx) {
  /* Without options, store exactly what is in memory. */
  static const dbtr_scan_write_opts lossless = {DBTR_DTYPE_FLOAT64, 0};
  const dbtr_scan_write_opts *o = opts ? opts : &lossless;
  if (!s) return dbtr_err(DBTR_EINVAL, "dbtr_scan_write: no scan given");
  int rc = check_writable(s, path, o);
  if (rc) return rc;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  dbtr_atomic_file af;
  rc = dbtr_atomic_begin(&af, path);
  if (rc) return rc;
  /* The root group's times are set through the file creation list. */
  writer w = {path, H5I_INVALID_HID, H5Pcreate(H5P_DATASET_CREATE), H5Pcreate(H5P_GROUP_CREATE)};
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (w.dcpl < 0 || w.gcpl < 0 || fcpl < 0 || fapl < 0 || H5Pset_obj_track_times(w.dcpl, 0) < 0 ||
      H5Pset_obj_track_times(w.gcpl, 0) < 0 || H5Pset_obj_track_times(fcpl, 0) < 0)
    rc = write_fail(&w, "creation properties");
#if H5_VERSION_GE(1, 10, 7)
  /* The temporary is this process's alone, and locked by io/atomic_file.c for its life;
   * libhdf5's own flock would add nothing, and on NFS, where flock is a byte-range lock,
   * it would collide with that lock. */
  if (!rc && H5Pset_file_locking(fapl, 0, 1) < 0) rc = write_fail(&w, "creation properties");
#endif
  if (!rc && (w.file = H5Fcreate(af.tmp, H5F_ACC_TRUNC, fcpl, fapl)) < 0) rc = write_fail(&w, "file");
  if (!rc) rc = write_contents(&w, s, o);
  if (!rc && extra) rc = extra(ctx, w.file, path);
  if (w.file >= 0 && H5Fclose(w.file) < 0 && !rc) rc = write_fail(&w, "file");
  dbtr__h5_close(&fapl, H5Pclose);
  dbtr__h5_close(&fcpl, H5Pclose);
  dbtr__h5_close(&w.gcpl, H5Pclose);
  dbtr__h5_close(&w.dcpl, H5Pclose);
  if (rc) {
    dbtr_atomic_abort(&af);
    return rc;
  }
  return dbtr_atomic_commit(&af);
}
