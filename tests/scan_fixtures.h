/* tests/scan_fixtures.h: the scan and the files test_scan.c and test_scan_write.c work on.
 *
 * A valid test scan, a temporary folder per case, and small functions that break one thing
 * in a written file with the HDF5 API (delete a link, replace an attribute or a dataset,
 * set one element), so that each refusal of the reader is tested on an otherwise valid
 * file. Included by tests/test_scan.c (the reader) and tests/test_scan_write.c (the
 * writer); the functions are static inline because each file uses only some of them. */
#ifndef DBTR_SCAN_FIXTURES_H
#define DBTR_SCAN_FIXTURES_H

#include <dirent.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/scan.h"
#include "recon/error.h"
#include "tests/tmpdir.h"

/* The test scan: 3 views of 4 rows x 5 columns, so that every dim differs and a swapped
 * or misread dim cannot pass for another. */
enum { NV = 3, NR = 4, NC = 5, NP = NV * NR * NC };

/* <math.h> gives NAN and INFINITY as floats; the tests want doubles. */
#define DNAN ((double)NAN)
#define DINF ((double)INFINITY)


/* ---- a valid scan ---- */

/* nv views of nr x nc pixels of 1 mm on a detector at z = 0, centred on the origin, with
 * sources 660 mm above it (the `ge` preset's SID), 20 mm apart in x. */
static inline int make_geometry(dbtr_geom *g, size_t nv, size_t nr, size_t nc) {
  int rc = dbtr_geom_init(g, nv, nr, nc);
  if (rc) return rc;
  for (size_t k = 0; k < nv; k++) {
    g->source[3 * k + 0] = 20.0 * ((double)k - 1.0);
    g->source[3 * k + 2] = 660.0;
    g->detector_u[3 * k + 0] = 1.0;
    g->detector_v[3 * k + 1] = 1.0;
  }
  return 0;
}

/* make_geometry's, with every ray within 3 deg of z; a grid of 5 x 4 x 3 voxels of
 * 1 x 1 x 2 mm over the detector, resting on it. */
static inline int make_scan(dbtr_scan *s, dbtr_quantity q, dbtr_i0_shape shape) {
  memset(s, 0, sizeof *s);
  int rc = make_geometry(&s->geom, NV, NR, NC);
  if (rc) return rc;
  s->quantity = q;
  s->proj = malloc(NP * sizeof(double));
  /* Values with no short binary expansion (a third, a sine), so float64 equality shows
   * that no conversion happened on the way. */
  for (size_t i = 0; i < NP; i++) s->proj[i] = 500.0 + 100.0 * sin((double)i) + 1.0 / 3.0;
  s->i0_shape = shape;
  size_t m = dbtr_scan_i0_count(s);
  s->i0 = m ? malloc(m * sizeof(double)) : NULL;
  for (size_t i = 0; i < m; i++) s->i0[i] = 1000.0 + (double)i + 0.25;
  s->has_grid = 1;
  s->grid = (dbtr_grid){5, 4, 3, 1.0, 1.0, 2.0, {-2.0, -1.5, 1.0}};
  return s->proj && (s->i0 || !m) ? 0 : DBTR_ENOMEM;
}

/* Writes the valid counts scan with scalar i0 (float64, no gzip) to path. */
static inline int write_valid(const char *path) {
  dbtr_scan s;
  int rc = make_scan(&s, DBTR_QUANTITY_COUNTS, DBTR_I0_SCALAR);
  if (!rc) rc = dbtr_scan_write(&s, path, NULL);
  dbtr_scan_free(&s);
  return rc;
}

static inline int is_zeroed(const dbtr_scan *s) {
  static const dbtr_scan zero;
  return memcmp(s, &zero, sizeof zero) == 0;
}

/* ---- breaking one thing in a file with the HDF5 API ---- */

static inline hid_t open_rw(const char *path) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  return H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
}

static inline int del_link(const char *path, const char *name) {
  hid_t f = open_rw(path);
  herr_t st = f >= 0 ? H5Ldelete(f, name, H5P_DEFAULT) : -1;
  if (f >= 0 && H5Fclose(f) < 0) st = -1;
  return st < 0 ? -1 : 0;
}

/* Replaces attribute attr of object obj with a value of type t (scalar). */
static inline int set_attr(const char *path, const char *obj, const char *attr, hid_t t, const void *value) {
  hid_t f = open_rw(path);
  hid_t o = f >= 0 ? H5Oopen(f, obj, H5P_DEFAULT) : -1, sp = H5Screate(H5S_SCALAR), a = -1;
  herr_t st = o >= 0 ? 0 : -1;
  if (st >= 0 && H5Aexists(o, attr) > 0) st = H5Adelete(o, attr);
  if (st >= 0) st = (a = H5Acreate2(o, attr, t, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0 ? 0 : -1;
  if (st >= 0) st = H5Awrite(a, t, value);
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  if (o >= 0) H5Oclose(o);
  if (f >= 0 && H5Fclose(f) < 0) st = -1;
  return st < 0 ? -1 : 0;
}

static inline int set_str_attr(const char *path, const char *obj, const char *attr, const char *value, int vlen) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_cset(t, H5T_CSET_UTF8);
  H5Tset_size(t, vlen ? H5T_VARIABLE : strlen(value));
  int rc = set_attr(path, obj, attr, t, vlen ? (const void *)&value : (const void *)value);
  H5Tclose(t);
  return rc;
}

static inline int set_i64_attr(const char *path, const char *obj, const char *attr, long long v) {
  return set_attr(path, obj, attr, H5T_NATIVE_LLONG, &v);
}

/* A 1-D attribute of n values of file type t. */
static inline int set_vec_attr(const char *path, const char *obj, const char *attr, hid_t t, hsize_t n, const double *v) {
  hid_t f = open_rw(path);
  hid_t o = f >= 0 ? H5Oopen(f, obj, H5P_DEFAULT) : -1, sp = H5Screate_simple(1, &n, NULL), a = -1;
  herr_t st = o >= 0 ? 0 : -1;
  if (st >= 0 && H5Aexists(o, attr) > 0) st = H5Adelete(o, attr);
  if (st >= 0) st = (a = H5Acreate2(o, attr, t, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0 ? 0 : -1;
  if (st >= 0) st = H5Awrite(a, H5T_NATIVE_DOUBLE, v);
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  if (o >= 0) H5Oclose(o);
  if (f >= 0 && H5Fclose(f) < 0) st = -1;
  return st < 0 ? -1 : 0;
}

/* Replaces dataset name by one of file type t and the given shape, holding data (as
 * doubles) or, with data NULL, nothing written. dcpl may be H5P_DEFAULT. */
static inline int put_dataset(const char *path, const char *name, hid_t t, int rank, const hsize_t *dims, hid_t dcpl,
                       const double *data) {
  hid_t f = open_rw(path);
  herr_t st = f >= 0 ? 0 : -1;
  if (st >= 0 && H5Lexists(f, name, H5P_DEFAULT) > 0) st = H5Ldelete(f, name, H5P_DEFAULT);
  hid_t sp = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR), d = -1;
  if (st >= 0) st = (d = H5Dcreate2(f, name, t, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0 ? 0 : -1;
  if (st >= 0 && data) st = H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
  if (d >= 0) H5Dclose(d);
  H5Sclose(sp);
  if (f >= 0 && H5Fclose(f) < 0) st = -1;
  return st < 0 ? -1 : 0;
}

/* Sets element i (C order) of dataset name to v, the rest kept. */
static inline int poke(const char *path, const char *name, size_t i, double v) {
  hid_t f = open_rw(path);
  hid_t d = f >= 0 ? H5Dopen2(f, name, H5P_DEFAULT) : -1, sp = d >= 0 ? H5Dget_space(d) : -1;
  hssize_t n = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : 0;
  double *buf = n > 0 && (size_t)n > i ? malloc((size_t)n * sizeof(double)) : NULL;
  herr_t st = buf ? H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) : -1;
  if (st >= 0) {
    buf[i] = v;
    st = H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
  }
  free(buf);
  if (sp >= 0) H5Sclose(sp);
  if (d >= 0) H5Dclose(d);
  if (f >= 0 && H5Fclose(f) < 0) st = -1;
  return st < 0 ? -1 : 0;
}

static inline int write_bytes(const char *path, const char *bytes, size_t n) {
  FILE *fp = fopen(path, "wb");
  if (!fp) return -1;
  size_t w = fwrite(bytes, 1, n, fp);
  return fclose(fp) == 0 && w == n ? 0 : -1;
}

#endif
