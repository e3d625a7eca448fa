/* phantoms/objects_h5.c: a phantom's objects in the scan file, the optional /phantom group
 * (docs/scan-format.md, "/phantom: where the objects are"). `dbtr phantom` writes it through
 * the scan writer's hook, so that it is in the file exactly when the file is; the quality
 * measures read it back. One row per shape, in the phantom's list order, as parallel datasets:
 * the shape (where it is) and its dbtr_object_info (what it is). A scan without the group is a
 * scan of something that is not a dbtr phantom: it reads as no objects. */
#include "phantoms/objects_h5.h"

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/atomic_file.h"
#include "io/scan_h5.h"
#include "recon/error.h"

#define NAME_LEN 16 /* the fixed string length of kind, material and shape */
/* More shapes than any phantom dbtr builds by far; a larger count is a damaged file. */
#define MAX_OBJECTS 1000000

static const char *const shape_names[3] = {"ellipsoid", "cylinder", "box"};

typedef struct {
  const dbtr_phantom *p;
  const char *path;
  hid_t grp;
} wctx;

static int wfail(const wctx *w, const char *name) {
  char why[256];
  return dbtr_err(DBTR_EIO, "%s: /phantom/%s: cannot write (%s)", w->path, name, dbtr__h5_reason(why, sizeof why));
}

/* A dataset of n rows of `per` values each, shaped (n, dims...), from mem of mem_type. */
static int write_rows(const wctx *w, const char *name, hid_t file_type, hid_t mem_type, int rank, const hsize_t *dims,
                      const void *mem) {
  hid_t sp = H5Screate_simple(rank, dims, NULL), d = H5I_INVALID_HID;
  herr_t st = sp >= 0 ? 0 : -1;
  if (st >= 0) st = (d = H5Dcreate2(w->grp, name, file_type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0 ? 0 : -1;
  if (st >= 0) st = H5Dwrite(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, mem);
  dbtr__h5_close(&d, H5Dclose);
  dbtr__h5_close(&sp, H5Sclose);
  return st < 0 ? wfail(w, name) : 0;
}

static hid_t string_type(void) {
  hid_t t = H5Tcopy(H5T_C_S1);
  if (t >= 0 && (H5Tset_size(t, NAME_LEN) < 0 || H5Tset_strpad(t, H5T_STR_NULLTERM) < 0)) H5Tclose(t), t = -1;
  return t;
}

/* Gathers one column of the rows into buf (n x size bytes) and writes it. */
static int write_column(const wctx *w, const char *name, int col, void *buf) {
  const dbtr_phantom *p = w->p;
  size_t n = p->n_shapes;
  hsize_t dims[3] = {n, 3, 3};
  double *d = buf;
  long long *ll = buf;
  unsigned char *u8 = buf;
  char *str = buf;
  for (size_t i = 0; i < n; i++) {
    const dbtr_shape *s = p->shapes + i;
    const dbtr_object_info *o = p->info + i;
    switch (col) {
    case 0: snprintf(str + i * NAME_LEN, NAME_LEN, "%s", o->kind); break;
    case 1: snprintf(str + i * NAME_LEN, NAME_LEN, "%s", o->material); break;
    case 2: snprintf(str + i * NAME_LEN, NAME_LEN, "%s", shape_names[s->kind]); break;
    case 3: memcpy(d + 3 * i, s->center, sizeof s->center); break;
    case 4: memcpy(d + 3 * i, s->half, sizeof s->half); break;
    case 5: memcpy(d + 9 * i, s->axes, sizeof s->axes); break;
    case 6: memcpy(d + 6 * i, s->clip_lo, sizeof s->clip_lo), memcpy(d + 6 * i + 3, s->clip_hi, sizeof s->clip_hi); break;
    case 7: u8[i] = (unsigned char)(s->clipped != 0); break;
    case 8: d[i] = s->mu; break;
    case 9: d[i] = o->mu; break;
    case 10: d[i] = o->contrast; break;
    case 11: ll[i] = o->surround; break;
    case 12: u8[i] = (unsigned char)(o->target != 0); break;
    default: break;
    }
  }
  if (col <= 2) {
    hid_t t = string_type();
    int rc = t < 0 ? wfail(w, name) : write_rows(w, name, t, t, 1, dims, buf);
    if (t >= 0) H5Tclose(t);
    return rc;
  }
  if (col == 3 || col == 4) return write_rows(w, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, dims, buf);
  if (col == 5) return write_rows(w, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 3, dims, buf);
  if (col == 6) {
    hsize_t cd[3] = {n, 2, 3};
    return write_rows(w, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 3, cd, buf);
  }
  if (col == 7 || col == 12) return write_rows(w, name, H5T_STD_U8LE, H5T_NATIVE_UCHAR, 1, dims, buf);
  if (col == 11) return write_rows(w, name, H5T_STD_I64LE, H5T_NATIVE_LLONG, 1, dims, buf);
  return write_rows(w, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, dims, buf);
}

/* The columns, in the order write_column numbers them (docs/scan-format.md lists them). */
static const char *const columns[13] = {"kind",     "material",    "shape",    "center",   "half",
                                        "axes",     "clip",        "clipped",  "added_mu", "attenuation",
                                        "contrast", "surround",    "target"};

static int write_phantom(void *ctx, hid_t file, const char *path) {
  wctx *w = ctx;
  w->path = path;
  const dbtr_phantom *p = w->p;
  void *buf = NULL;
  /* The widest column is the axes, 9 doubles a row. */
  int rc = dbtr_alloc(&buf, p->n_shapes, 9 * sizeof(double), "/phantom");
  if (rc) return rc;
  w->grp = H5Gcreate2(file, "/phantom", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (w->grp < 0) rc = wfail(w, "");
  hid_t t = rc ? H5I_INVALID_HID : H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR), a = H5I_INVALID_HID;
  if (!rc) {
    herr_t st = t >= 0 && sp >= 0 ? H5Tset_size(t, strlen(p->name)) : -1;
    if (st >= 0) st = (a = H5Acreate2(w->grp, "name", t, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0 ? 0 : -1;
    if (st >= 0) st = H5Awrite(a, t, p->name);
    dbtr__h5_close(&a, H5Aclose);
    if (st >= 0) st = (a = H5Acreate2(w->grp, "energy_kev", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0 ? 0 : -1;
    if (st >= 0) st = H5Awrite(a, H5T_NATIVE_DOUBLE, &p->energy_kev);
    if (st < 0) rc = wfail(w, "attributes");
  }
  dbtr__h5_close(&a, H5Aclose);
  dbtr__h5_close(&sp, H5Sclose);
  dbtr__h5_close(&t, H5Tclose);
  for (int c = 0; c < 13 && !rc; c++) rc = write_column(w, columns[c], c, buf);
  dbtr__h5_close(&w->grp, H5Gclose);
  free(buf);
  return rc;
}

int dbtr_scan_write_phantom(const dbtr_scan *s, const char *path, const dbtr_scan_write_opts *opts,
                            const dbtr_phantom *p) {
  if (!p || !p->n_shapes) return dbtr_scan_write(s, path, opts);
  if (!p->info) return dbtr_err(DBTR_EINVAL, "%s: /phantom: the phantom has shapes but no object records", path);
  wctx w = {p, path, H5I_INVALID_HID};
  return dbtr__scan_write_with(s, path, opts, write_phantom, &w);
}

/* ---- reading ---- */

typedef struct {
  const char *path;
  hid_t grp;
  size_t n;
} rctx;

/* Dataset `name` of the group, which must have shape (n, tail...) exactly, into out. */
static int read_column(rctx *r, const char *name, hid_t mem_type, int rank, const hsize_t *tail, void *out) {
  char why[256];
  hid_t d = H5Dopen2(r->grp, name, H5P_DEFAULT), sp = H5I_INVALID_HID;
  if (d < 0) return dbtr_err(DBTR_EFORMAT, "%s: /phantom/%s: missing (%s)", r->path, name, dbtr__h5_reason(why, sizeof why));
  hsize_t dims[3] = {0, 0, 0};
  int rc = 0;
  sp = H5Dget_space(d);
  int got = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
  if (got != rank || H5Sget_simple_extent_dims(sp, dims, NULL) < 0) {
    rc = dbtr_err(DBTR_EFORMAT, "%s: /phantom/%s: rank %d, expected %d", r->path, name, got, rank);
  } else {
    if (!r->n && !strcmp(name, "kind")) r->n = (size_t)dims[0];
    int ok = dims[0] == r->n;
    for (int j = 1; j < rank; j++) ok = ok && dims[j] == tail[j - 1];
    if (!ok) rc = dbtr_err(DBTR_EFORMAT, "%s: /phantom/%s: its shape does not match %zu objects", r->path, name, r->n);
    else if (r->n > MAX_OBJECTS)
      rc = dbtr_err(DBTR_EFORMAT, "%s: /phantom: %zu objects; at most %d are read", r->path, r->n, MAX_OBJECTS);
    else if (out && r->n && H5Dread(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
      rc = dbtr_err(DBTR_EFORMAT, "%s: /phantom/%s: cannot read (%s)", r->path, name, dbtr__h5_reason(why, sizeof why));
  }
  dbtr__h5_close(&sp, H5Sclose);
  dbtr__h5_close(&d, H5Dclose);
  return rc;
}

static int finite_all(const double *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(v[i])) return 0;
  return 1;
}

/* Every row's values, judged: what the quality measures would otherwise trip over. */
static int check_row(const char *path, const dbtr_phantom *p, size_t i) {
  const dbtr_shape *s = p->shapes + i;
  const dbtr_object_info *o = p->info + i;
  if (!finite_all(s->center, 3) || !finite_all(&s->axes[0][0], 9) || !finite_all(s->half, 3) || !isfinite(s->mu))
    return dbtr_err(DBTR_EFORMAT, "%s: /phantom: object %zu has a non-finite centre, size, axes or mu", path, i);
  for (int j = 0; j < 3; j++)
    if (!(s->half[j] > 0.0)) return dbtr_err(DBTR_EFORMAT, "%s: /phantom/half: object %zu has a size <= 0", path, i);
  if (s->clipped && (!finite_all(s->clip_lo, 3) || !finite_all(s->clip_hi, 3)))
    return dbtr_err(DBTR_EFORMAT, "%s: /phantom/clip: object %zu has a non-finite clip box", path, i);
  /* A surround listed before the object keeps the chain of surroundings free of loops. */
  if (o->surround < -1 || o->surround >= (long long)i)
    return dbtr_err(DBTR_EFORMAT, "%s: /phantom/surround: object %zu lies in %lld; -1 or an earlier object is expected",
                    path, i, o->surround);
  return 0;
}

static int read_rows(rctx *r, dbtr_phantom *p) {
  size_t n = r->n;
  int rc = dbtr_alloc((void **)&p->shapes, n ? n : 1, sizeof *p->shapes, "/phantom");
  if (!rc) rc = dbtr_alloc((void **)&p->info, n ? n : 1, sizeof *p->info, "/phantom");
  double *buf = NULL;
  char *str = NULL;
  if (!rc) rc = dbtr_alloc((void **)&buf, n ? n : 1, 9 * sizeof(double), "/phantom");
  if (!rc) rc = dbtr_alloc((void **)&str, n ? n : 1, 3 * NAME_LEN, "/phantom");
  if (rc) goto done;
  memset(p->shapes, 0, n * sizeof *p->shapes);
  memset(p->info, 0, n * sizeof *p->info);
  p->n_shapes = n;
  hid_t t = string_type();
  const hsize_t three[2] = {3, 3}, clip[2] = {2, 3};
  for (int c = 0; c < 3 && !rc; c++) rc = t < 0 ? DBTR_EINTERNAL : read_column(r, columns[c], t, 1, NULL, str + (size_t)c * n * NAME_LEN);
  if (t >= 0) H5Tclose(t);
  for (size_t i = 0; i < n && !rc; i++) {
    dbtr_object_info *o = p->info + i;
    memcpy(o->kind, str + i * NAME_LEN, NAME_LEN);
    memcpy(o->material, str + (n + i) * NAME_LEN, NAME_LEN);
    o->kind[NAME_LEN - 1] = o->material[NAME_LEN - 1] = '\0';
    dbtr_sanitize(o->kind);
    dbtr_sanitize(o->material);
    const char *sh = str + (2 * n + i) * NAME_LEN;
    int k = -1;
    for (int j = 0; j < 3; j++)
      if (!strncmp(sh, shape_names[j], NAME_LEN)) k = j;
    if (k < 0) rc = dbtr_err(DBTR_EFORMAT, "%s: /phantom/shape: object %zu: not ellipsoid, cylinder or box", r->path, i);
    else p->shapes[i].kind = (dbtr_shape_kind)k;
  }
  /* The numeric columns, each through buf into its place. */
  if (!rc && !(rc = read_column(r, "center", H5T_NATIVE_DOUBLE, 2, three, buf)))
    for (size_t i = 0; i < n; i++) memcpy(p->shapes[i].center, buf + 3 * i, 3 * sizeof(double));
  if (!rc && !(rc = read_column(r, "half", H5T_NATIVE_DOUBLE, 2, three, buf)))
    for (size_t i = 0; i < n; i++) memcpy(p->shapes[i].half, buf + 3 * i, 3 * sizeof(double));
  if (!rc && !(rc = read_column(r, "axes", H5T_NATIVE_DOUBLE, 3, three, buf)))
    for (size_t i = 0; i < n; i++) memcpy(p->shapes[i].axes, buf + 9 * i, 9 * sizeof(double));
  if (!rc && !(rc = read_column(r, "clip", H5T_NATIVE_DOUBLE, 3, clip, buf)))
    for (size_t i = 0; i < n; i++)
      memcpy(p->shapes[i].clip_lo, buf + 6 * i, 3 * sizeof(double)), memcpy(p->shapes[i].clip_hi, buf + 6 * i + 3, 3 * sizeof(double));
  unsigned char *u8 = (unsigned char *)str;
  long long *ll = (long long *)buf;
  if (!rc && !(rc = read_column(r, "clipped", H5T_NATIVE_UCHAR, 1, NULL, u8)))
    for (size_t i = 0; i < n; i++) p->shapes[i].clipped = u8[i] != 0;
  if (!rc && !(rc = read_column(r, "target", H5T_NATIVE_UCHAR, 1, NULL, u8)))
    for (size_t i = 0; i < n; i++) p->info[i].target = u8[i] != 0;
  if (!rc && !(rc = read_column(r, "surround", H5T_NATIVE_LLONG, 1, NULL, ll)))
    for (size_t i = 0; i < n; i++) p->info[i].surround = ll[i];
  if (!rc && !(rc = read_column(r, "added_mu", H5T_NATIVE_DOUBLE, 1, NULL, buf)))
    for (size_t i = 0; i < n; i++) p->shapes[i].mu = buf[i];
  if (!rc && !(rc = read_column(r, "attenuation", H5T_NATIVE_DOUBLE, 1, NULL, buf)))
    for (size_t i = 0; i < n; i++) p->info[i].mu = buf[i];
  if (!rc && !(rc = read_column(r, "contrast", H5T_NATIVE_DOUBLE, 1, NULL, buf)))
    for (size_t i = 0; i < n; i++) p->info[i].contrast = buf[i];
  for (size_t i = 0; i < n && !rc; i++) rc = check_row(r->path, p, i);
done:
  free(buf);
  free(str);
  return rc;
}

int dbtr_phantom_read(dbtr_phantom *p, const char *path, int *found) {
  memset(p, 0, sizeof *p);
  *found = 0;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  char why[256];
  int rc = dbtr_input_check(path);
  if (rc) return rc;
  if (H5Fis_hdf5(path) <= 0) return dbtr_err(DBTR_EFORMAT, "%s: not an HDF5 file", path);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0)
    return dbtr_err(DBTR_EFORMAT, "%s: cannot open as HDF5, truncated or damaged? (%s)", path, dbtr__h5_reason(why, sizeof why));
  rctx r = {path, H5I_INVALID_HID, 0};
  htri_t has = H5Lexists(f, "/phantom", H5P_DEFAULT);
  if (has > 0) {
    r.grp = H5Gopen2(f, "/phantom", H5P_DEFAULT);
    if (r.grp < 0)
      rc = dbtr_err(DBTR_EFORMAT, "%s: /phantom: not a group (%s)", path, dbtr__h5_reason(why, sizeof why));
    if (!rc) rc = read_column(&r, "kind", 0, 1, NULL, NULL);
    if (!rc) rc = read_rows(&r, p);
    if (!rc) {
      double e = (double)NAN;
      hid_t a = H5Aexists(r.grp, "energy_kev") > 0 ? H5Aopen(r.grp, "energy_kev", H5P_DEFAULT) : H5I_INVALID_HID;
      if (a >= 0 && H5Aread(a, H5T_NATIVE_DOUBLE, &e) < 0) e = (double)NAN;
      dbtr__h5_close(&a, H5Aclose);
      p->energy_kev = e;
      p->name = "phantom";
      *found = 1;
    }
  }
  dbtr__h5_close(&r.grp, H5Gclose);
  H5Fclose(f);
  if (rc) dbtr_phantom_free(p);
  return rc;
}
