/* io/scan.c: reads the HDF5 scan file, format "dbtr-scan" version 1 (docs/scan-format.md,
 * ARCHITECTURE.md "The scan file"); io/scan_write.c writes it.
 *
 * The reader is the gate every scan passes before a projector sees it: it checks the
 * format attributes, every shape against /projections, sizes for overflow before any
 * allocation, and every value (finite geometry and projections, non-negative counts,
 * positive i0), and names the file and the dataset or attribute in each refusal. HDF5
 * converts any stored byte order and numeric type to native double for us; a dataset
 * stored plainly is read faster around it (io/scan_bulk.c). */
#include "io/scan.h"

#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/atomic_file.h"
#include "io/memory.h"
#include "io/scan_h5.h"
#include "recon/error.h"

const char *const dbtr__scan_geom_names[4] = {"/geometry/source", "/geometry/detector_center",
                                              "/geometry/detector_u", "/geometry/detector_v"};

/* ---- HDF5 helpers shared with the writer (io/scan_h5.h) ---- */

typedef struct {
  char *buf;
  size_t cap;
} reason_buf;

static herr_t reason_cb(unsigned n, const H5E_error2_t *e, void *data) {
  reason_buf *r = data;
  if (n == 0 && e->desc) {
    /* libhdf5's I/O failures carry the system's errno amid a time, a descriptor, a buffer
     * address and byte counts, cut at its buffer's end ("bytes actually wri"): only what
     * failed and the system's reason are kept ("file write failed: File too large"). */
    const char *en = strstr(e->desc, "errno = "), *colon = strchr(e->desc, ':');
    int code = 0;
    if (en && colon && colon < en && sscanf(en, "errno = %d", &code) == 1 && code > 0)
      snprintf(r->buf, r->cap, "%.*s: %s", (int)(colon - e->desc), e->desc, strerror(code));
    else
      snprintf(r->buf, r->cap, "%s", e->desc);
    for (char *p = r->buf; *p; p++)
      if (*p == '\n' || *p == '\r') *p = ' ';
  }
  return 0;
}

const char *dbtr__h5_reason(char *buf, size_t cap) {
  reason_buf r = {buf, cap};
  snprintf(buf, cap, "HDF5 gave no reason");
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, reason_cb, &r);
  return buf;
}

void dbtr__h5_close(hid_t *id, herr_t (*fn)(hid_t)) {
  if (*id >= 0) fn(*id);
  *id = H5I_INVALID_HID;
}

/* "(2, 4, 6)" or "scalar", for messages. */
static const char *shape_str(char *buf, size_t cap, int rank, const hsize_t *dims) {
  if (rank == 0) {
    snprintf(buf, cap, "scalar");
    return buf;
  }
  size_t used = (size_t)snprintf(buf, cap, "(");
  for (int i = 0; i < rank && used < cap; i++)
    used += (size_t)snprintf(buf + used, cap - used, "%s%llu", i ? ", " : "", (unsigned long long)dims[i]);
  if (used < cap) snprintf(buf + used, cap - used, ")");
  return buf;
}

int dbtr__scan_i0_rank(dbtr_i0_shape shape) {
  return shape == DBTR_I0_SCALAR ? 0 : shape == DBTR_I0_PER_VIEW ? 1 : shape == DBTR_I0_PER_PIXEL ? 2 : 3;
}

/* ---- reader ---- */

typedef struct {
  const char *path;
  hid_t file;
  hid_t proj; /* /projections */
  hid_t i0;   /* /i0, or invalid when absent */
  /* Link and dataset access lists that refuse to follow HDF5 external links (elink_refuse),
   * given to every call that follows a path, and where such a link pointed: "" if none. */
  hid_t lapl, dapl;
  char *elink;
  hsize_t dims[3];
  /* 1 once the header is read, for the bulk arrays: threads may read and check them. The
   * header may be read in a forked child (io/scan_guard.c), where OpenMP must start no
   * threads: libgomp's pool from before the fork does not survive it. */
  int threads;
} reader;

enum { ELINK_CAP = 600 };

/* libhdf5 calls this before it follows an external link, anywhere on a path (a soft link
 * may lead through one too), and a negative return stops it before the other file is even
 * opened. So an external link is refused as external storage is: the data would come from a
 * file the scan merely names (a FIFO there would block the read for ever, and io/scan_bulk.c
 * must read a dataset's bytes through the descriptor of the file that holds them). */
static herr_t elink_refuse(const char *parent_file, const char *parent_group, const char *child_file,
                           const char *child_object, unsigned *flags, hid_t fapl, void *op_data) {
  (void)parent_file;
  (void)parent_group;
  (void)flags;
  (void)fapl;
  snprintf(op_data, ELINK_CAP, "%s:%s", child_file, child_object);
  return -1;
}

/* The refusal of a path that led through an external link, or 0 when none was met. */
static int elink_refused(const reader *r, const char *name) {
  if (!r->elink[0]) return 0;
  dbtr_sanitize(r->elink); /* names from the file */
  return dbtr_err(DBTR_EFORMAT, "%s: %s: reached through an HDF5 external link to %s; dbtr reads only data stored in "
                  "the scan file itself (copy it in, e.g. h5copy -f ext)",
                  r->path, name, r->elink);
}

/* H5Lexists fails when a middle component is missing, so test each prefix in turn. 0 also
 * when a component is an external link (elink_refused then says so). */
static int link_exists(const reader *r, const char *name) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", name);
  for (char *p = buf + 1;; p++) {
    if (*p != '/' && *p != '\0') continue;
    char saved = *p;
    *p = '\0';
    htri_t e = H5Lexists(r->file, buf, r->lapl);
    *p = saved;
    if (e <= 0) return 0;
    if (saved == '\0') return 1;
  }
}

static int open_dataset(const reader *r, const char *name, int required, hid_t *out) {
  char why[256];
  *out = H5I_INVALID_HID;
  int rc;
  if (!link_exists(r, name)) {
    if ((rc = elink_refused(r, name))) return rc;
    return required ? dbtr_err(DBTR_EFORMAT, "%s: %s: missing dataset", r->path, name) : 0;
  }
  *out = H5Dopen2(r->file, name, r->dapl);
  if (*out < 0 && (rc = elink_refused(r, name))) return rc;
  if (*out < 0)
    return dbtr_err(DBTR_EFORMAT, "%s: %s: not a readable dataset (%s)", r->path, name,
                    dbtr__h5_reason(why, sizeof why));
  return 0;
}

/* Rank and dims of a dataset; refuses null dataspaces and ranks above 3. */
static int get_shape(const reader *r, hid_t d, const char *name, int *rank, hsize_t dims[3]) {
  hsize_t all[H5S_MAX_RANK];
  hid_t sp = H5Dget_space(d);
  H5S_class_t cls = sp >= 0 ? H5Sget_simple_extent_type(sp) : H5S_NO_CLASS;
  int nd = cls == H5S_SIMPLE ? H5Sget_simple_extent_dims(sp, all, NULL) : 0;
  if (sp >= 0) H5Sclose(sp);
  if (cls != H5S_SIMPLE && cls != H5S_SCALAR)
    return dbtr_err(DBTR_EFORMAT, "%s: %s: the dataset holds no data (empty dataspace)", r->path, name);
  if (nd < 0 || nd > 3)
    return dbtr_err(DBTR_EFORMAT, "%s: %s: rank %d; at most 3 is expected", r->path, name, nd);
  *rank = nd;
  for (int i = 0; i < nd; i++) dims[i] = all[i];
  return 0;
}

/* "uint16", "float32", "string": the stored type, for messages. */
static const char *type_str(char *buf, size_t cap, hid_t t) {
  H5T_class_t cls = H5Tget_class(t);
  size_t bits = 8 * H5Tget_size(t);
  if (cls == H5T_INTEGER)
    snprintf(buf, cap, "%sint%zu", H5Tget_sign(t) == H5T_SGN_NONE ? "u" : "", bits);
  else if (cls == H5T_FLOAT)
    snprintf(buf, cap, "float%zu", bits);
  else {
    static const char *const names[] = {"integer", "float", "time", "string", "bitfield", "opaque",
                                        "compound", "reference", "enum", "variable-length", "array"};
    snprintf(buf, cap, "%s", cls >= 0 && (int)cls < 11 ? names[cls] : "unknown");
  }
  return buf;
}

/* Integer or floating-point storage, which HDF5 converts to double. */
static int check_numeric(const reader *r, hid_t d, const char *name) {
  char tn[32];
  hid_t t = H5Dget_type(d);
  H5T_class_t cls = H5Tget_class(t);
  type_str(tn, sizeof tn, t);
  H5Tclose(t);
  if (cls != H5T_INTEGER && cls != H5T_FLOAT)
    return dbtr_err(DBTR_EFORMAT, "%s: %s: stored as %s; a numeric type is expected", r->path, name, tn);
  return 0;
}

/* Chunks a chunked dataset has on disk, against the number its shape needs. A chunk never
 * written reads as the fill value: for a scan, zeros where an interrupted acquisition
 * writer stopped, which would reconstruct without complaint. */
static int check_chunks(const reader *r, hid_t d, hid_t dcpl, const char *name) {
  hid_t sp = H5Dget_space(d);
  hsize_t dims[H5S_MAX_RANK], chunk[H5S_MAX_RANK], have = 0, need = 1;
  int rank = sp >= 0 ? H5Sget_simple_extent_dims(sp, dims, NULL) : -1;
  int crank = H5Pget_chunk(dcpl, H5S_MAX_RANK, chunk);
  herr_t st = rank >= 0 ? H5Dget_num_chunks(d, sp, &have) : -1;
  dbtr__h5_close(&sp, H5Sclose);
  if (rank < 0 || crank != rank || st < 0)
    return dbtr_err(DBTR_EFORMAT, "%s: %s: cannot read its chunk layout", r->path, name);
  for (int i = 0; i < rank; i++) {
    if (chunk[i] == 0) return dbtr_err(DBTR_EFORMAT, "%s: %s: a chunk dimension is 0", r->path, name);
    hsize_t per = dims[i] / chunk[i] + (dims[i] % chunk[i] != 0);
    /* Shapes are checked against overflow before any read; this bound keeps the count
     * itself from wrapping. */
    need = per != 0 && need > UINT64_MAX / per ? UINT64_MAX : need * per;
  }
  if (have < need)
    return dbtr_err(DBTR_EFORMAT, "%s: %s: %llu of its %llu chunks were never written (an interrupted acquisition?); "
                    "unwritten chunks would read as zeros",
                    r->path, name, (unsigned long long)(need - have), (unsigned long long)need);
  return 0;
}

/* A compression filter this libhdf5 lacks (h5py's LZF, blosc, bitshuffle: plugins) would
 * fail the read with a stack that does not name it; the message names it and the way out. */
static int check_filters(const reader *r, hid_t dcpl, const char *name) {
  int n = H5Pget_nfilters(dcpl);
  for (int i = 0; i < n; i++) {
    unsigned flags = 0, config = 0;
    size_t n_cd = 0;
    char fname[64] = "";
    H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &n_cd, NULL, sizeof fname, fname, &config);
    for (char *c = fname; *c; c++) /* the name comes from the file: printable only */
      if (*c < 0x20 || *c > 0x7e) *c = '?';
    if (id < 0 || H5Zfilter_avail(id) <= 0)
      return dbtr_err(DBTR_EFORMAT, "%s: %s: compressed with HDF5 filter %d (\"%s\"), which this dbtr's libhdf5 does "
                      "not have; rewrite it with gzip, e.g. h5repack -f GZIP=4",
                      r->path, name, (int)id, fname);
  }
  return 0;
}

/* Where a dataset's bytes are, judged before it is read:
 * - Only data stored in the scan file itself. External storage would make dbtr read
 *   whatever local file the scan names (/etc/passwd, /dev/urandom, a FIFO that blocks for
 *   ever), and a virtual dataset reads zeros for a missing source, or recurses without end
 *   in libhdf5 when its source is itself.
 * - Every filter available (check_filters) and every chunk written (check_chunks).
 * - HDF5 1.10 trusts a damaged layout message: a compact or contiguous dataset that stores
 *   fewer bytes than its shape needs makes H5Dread copy from a null buffer (a segfault the
 *   fuzzer found, tests/fuzz/regress_scan/compact_storage_too_small). */
static int check_storage(const reader *r, hid_t d, const char *name) {
  hid_t dcpl = H5Dget_create_plist(d), t = H5Dget_type(d), sp = H5Dget_space(d);
  H5D_layout_t layout = dcpl >= 0 ? H5Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
  int n_external = dcpl >= 0 ? H5Pget_external_count(dcpl) : -1;
  size_t elem = t >= 0 ? H5Tget_size(t) : 0;
  hssize_t n = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
  dbtr__h5_close(&t, H5Tclose);
  dbtr__h5_close(&sp, H5Sclose);
  int rc = 0;
  if (layout == H5D_VIRTUAL)
    rc = dbtr_err(DBTR_EFORMAT, "%s: %s: a virtual dataset (its data lives in other datasets or files); dbtr reads "
                  "only data stored in the scan file itself",
                  r->path, name);
  else if (n_external != 0)
    rc = dbtr_err(DBTR_EFORMAT, "%s: %s: stored in external files (HDF5 external storage); dbtr reads only data "
                  "stored in the scan file itself",
                  r->path, name);
  else if (layout == H5D_CHUNKED && !(rc = check_filters(r, dcpl, name)))
    rc = check_chunks(r, d, dcpl, name);
  dbtr__h5_close(&dcpl, H5Pclose);
  if (rc || (layout != H5D_COMPACT && layout != H5D_CONTIGUOUS)) return rc;
  hsize_t have = H5Dget_storage_size(d);
  if (elem == 0 || n < 0 || have / elem < (hsize_t)n)
    return dbtr_err(DBTR_EFORMAT, "%s: %s: the file stores %llu bytes of it; its shape needs %lld values of %zu bytes",
                    r->path, name, (unsigned long long)have, (long long)n, elem);
  return 0;
}

/* The n values of d into out, as doubles. */
static int read_doubles(const reader *r, hid_t d, const char *name, size_t n, double *out) {
  char why[256];
  int rc = check_storage(r, d, name);
  if (!rc && r->threads) rc = dbtr__h5_read_bulk(d, n, out, r->path, name);
  if (rc) return rc < 0 ? rc : 0;
  if (H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
    return dbtr_err(DBTR_EFORMAT, "%s: %s: cannot read (%s)", r->path, name, dbtr__h5_reason(why, sizeof why));
  return 0;
}

typedef enum { ANY_FINITE, NON_NEGATIVE, POSITIVE } value_rule;

/* What is wrong with x under rule, or NULL. */
static const char *value_fault(double x, value_rule rule) {
  return !isfinite(x)                   ? "is not finite"
         : rule == NON_NEGATIVE && x < 0 ? "is negative; counts must be >= 0"
         : rule == POSITIVE && !(x > 0)  ? "is not positive; i0 must be > 0"
                                         : NULL;
}

/* The index of v's first value with a fault, or n. Threads scan blocks side by side and
 * the first block in order with a fault decides, so the answer is the serial scan's. */
static size_t first_fault(const double *v, size_t n, value_rule rule, int threads) {
  enum { BLOCKS = 256 };
  const size_t per = n / BLOCKS + 1; /* BLOCKS * per stays within n + BLOCKS: no overflow */
  size_t first[BLOCKS];
  /* Below a few blocks' worth (a scalar i0) starting threads costs more. */
#pragma omp parallel for schedule(static) if (threads && n >= 64 * BLOCKS)
  for (int b = 0; b < BLOCKS; b++) {
    size_t i = (size_t)b * per, hi = i + per < n ? i + per : n;
    while (i < hi && !value_fault(v[i], rule)) i++;
    first[b] = i < hi ? i : n;
  }
  for (int b = 0; b < BLOCKS; b++)
    if (first[b] < n) return first[b];
  return n;
}

/* Every value finite, and non-negative or positive where the rule asks; the message
 * gives the element's index in the dataset's own shape. */
static int check_values(const reader *r, const char *name, const double *v, size_t n, int rank,
                        const hsize_t *dims, value_rule rule) {
  size_t i = first_fault(v, n, rule, r->threads);
  if (i == n) return 0;
  hsize_t idx[3] = {0, 0, 0};
  size_t rest = i;
  for (int k = rank - 1; k >= 0; k--) {
    idx[k] = (hsize_t)(rest % (size_t)dims[k]);
    rest /= (size_t)dims[k];
  }
  char at[96];
  return dbtr_err(DBTR_EFORMAT, "%s: %s: value %g at %s %s", r->path, name, v[i],
                  rank ? shape_str(at, sizeof at, rank, idx) : "(scalar)", value_fault(v[i], rule));
}

/* Opens attribute `attr` of obj holding exactly `count` elements of class cls (or of an
 * integer or float class when cls is H5T_NO_CLASS). `label` names it in messages. */
static int open_attr(const reader *r, hid_t obj, const char *attr, const char *label, H5T_class_t cls,
                     hssize_t count, hid_t *out) {
  *out = H5I_INVALID_HID;
  htri_t ex = H5Aexists(obj, attr);
  if (ex <= 0) return dbtr_err(DBTR_EFORMAT, "%s: %s: missing attribute", r->path, label);
  hid_t a = H5Aopen(obj, attr, H5P_DEFAULT);
  hid_t t = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID, sp = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
  H5T_class_t c = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
  hssize_t n = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
  char tn[32];
  if (t >= 0) type_str(tn, sizeof tn, t);
  dbtr__h5_close(&t, H5Tclose);
  dbtr__h5_close(&sp, H5Sclose);
  int ok_cls = cls == H5T_NO_CLASS ? (c == H5T_INTEGER || c == H5T_FLOAT) : c == cls;
  int rc = 0;
  if (a < 0 || c == H5T_NO_CLASS)
    rc = dbtr_err(DBTR_EFORMAT, "%s: %s: cannot open the attribute", r->path, label);
  else if (!ok_cls)
    rc = dbtr_err(DBTR_EFORMAT, "%s: %s: stored as %s; %s expected", r->path, label, tn,
                  cls == H5T_STRING ? "a string is" : cls == H5T_INTEGER ? "integers are" : "numbers are");
  else if (n != count)
    rc = dbtr_err(DBTR_EFORMAT, "%s: %s: %lld values; %lld expected", r->path, label, (long long)n, (long long)count);
  if (rc) {
    dbtr__h5_close(&a, H5Aclose);
    return rc;
  }
  *out = a;
  return 0;
}

/* A string attribute, fixed or variable length, any padding, into out (cap bytes). */
static int read_str_attr(const reader *r, hid_t obj, const char *attr, const char *label, char *out, size_t cap) {
  hid_t a, ft = H5I_INVALID_HID, mt = H5I_INVALID_HID;
  int rc = open_attr(r, obj, attr, label, H5T_STRING, 1, &a);
  if (rc) return rc;
  ft = H5Aget_type(a);
  mt = H5Tcopy(H5T_C_S1);
  herr_t st = H5Tset_cset(mt, H5Tget_cset(ft));
  out[0] = '\0';
  if (H5Tis_variable_str(ft) > 0) {
    char *p = NULL;
    if (st >= 0) st = H5Tset_size(mt, H5T_VARIABLE);
    if (st >= 0) st = H5Aread(a, mt, &p);
    if (st >= 0 && p) snprintf(out, cap, "%s", p);
    if (p) H5free_memory(p);
  } else {
    size_t size = H5Tget_size(ft);
    char *p = calloc(size + 1, 1);
    if (st >= 0) st = H5Tset_size(mt, size + 1);
    if (st >= 0) st = H5Tset_strpad(mt, H5T_STR_NULLTERM);
    if (st >= 0) st = p ? H5Aread(a, mt, p) : -1;
    if (st >= 0) snprintf(out, cap, "%s", p);
    free(p);
  }
  /* The value is quoted in messages, which stay one printable line whatever the file holds. */
  for (char *c = out; *c; c++) *c = (unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c;
  if (st < 0) rc = dbtr_err(DBTR_EFORMAT, "%s: %s: cannot read the string", r->path, label);
  dbtr__h5_close(&mt, H5Tclose);
  dbtr__h5_close(&ft, H5Tclose);
  dbtr__h5_close(&a, H5Aclose);
  return rc;
}

/* A numeric attribute of `count` values read as mem_type (integer only when integer). */
static int read_num_attr(const reader *r, hid_t obj, const char *attr, const char *label, int integer,
                         hid_t mem_type, hssize_t count, void *out) {
  hid_t a;
  int rc = open_attr(r, obj, attr, label, integer ? H5T_INTEGER : H5T_NO_CLASS, count, &a);
  if (rc) return rc;
  if (H5Aread(a, mem_type, out) < 0) rc = dbtr_err(DBTR_EFORMAT, "%s: %s: cannot read", r->path, label);
  H5Aclose(a);
  return rc;
}

static int check_format(const reader *r) {
  char fmt[64];
  long long version = 0;
  int rc = read_str_attr(r, r->file, "format", "root attribute 'format'", fmt, sizeof fmt);
  if (rc) return rc;
  if (strcmp(fmt, DBTR__SCAN_FORMAT) != 0)
    return dbtr_err(DBTR_EFORMAT, "%s: root attribute 'format': \"%s\"; this reader reads \"%s\"", r->path, fmt,
                    DBTR__SCAN_FORMAT);
  rc = read_num_attr(r, r->file, "format_version", "root attribute 'format_version'", 1, H5T_NATIVE_LLONG, 1,
                     &version);
  if (rc) return rc;
  if (version != DBTR__SCAN_VERSION)
    return dbtr_err(DBTR_EFORMAT, "%s: root attribute 'format_version': %lld; this reader reads version %d", r->path,
                    version, DBTR__SCAN_VERSION);
  return 0;
}

/* /projections: shape, overflow-free size, stored type and quantity; no data yet. */
static int inspect_projections(reader *r, dbtr_scan *s) {
  char sh[96], tn[32], q[32], what[1200];
  int rank, rc = open_dataset(r, "/projections", 1, &r->proj);
  if (!rc) rc = get_shape(r, r->proj, "/projections", &rank, r->dims);
  if (rc) return rc;
  if (rank != 3)
    return dbtr_err(DBTR_EFORMAT, "%s: /projections: shape %s; expected rank 3 (n_views, n_rows, n_cols)", r->path,
                    shape_str(sh, sizeof sh, rank, r->dims));
  for (int i = 0; i < 3; i++) {
    if (r->dims[i] == 0)
      return dbtr_err(DBTR_EFORMAT, "%s: /projections: shape %s is empty", r->path,
                      shape_str(sh, sizeof sh, 3, r->dims));
    if (r->dims[i] > SIZE_MAX)
      return dbtr_err(DBTR_EOVERFLOW, "%s: /projections: shape %s is too large for this machine", r->path,
                      shape_str(sh, sizeof sh, 3, r->dims));
  }
  size_t n, bytes;
  snprintf(what, sizeof what, "%s: /projections", r->path);
  rc = dbtr_size_mul3((size_t)r->dims[0], (size_t)r->dims[1], (size_t)r->dims[2], &n, what);
  if (!rc) rc = dbtr_size_mul(n, sizeof(double), &bytes, what);
  if (rc) return rc;
  hid_t t = H5Dget_type(r->proj);
  H5T_class_t cls = H5Tget_class(t);
  size_t size = H5Tget_size(t);
  int is_unsigned = cls == H5T_INTEGER && H5Tget_sign(t) == H5T_SGN_NONE;
  type_str(tn, sizeof tn, t);
  H5Tclose(t);
  if (is_unsigned && size == 2) s->stored_dtype = DBTR_DTYPE_UINT16;
  else if (is_unsigned && size == 4) s->stored_dtype = DBTR_DTYPE_UINT32;
  else if (cls == H5T_FLOAT && size == 4) s->stored_dtype = DBTR_DTYPE_FLOAT32;
  else if (cls == H5T_FLOAT && size == 8) s->stored_dtype = DBTR_DTYPE_FLOAT64;
  else
    return dbtr_err(DBTR_EFORMAT, "%s: /projections: stored as %s; uint16, uint32, float32 or float64 is expected",
                    r->path, tn);
  rc = read_str_attr(r, r->proj, "quantity", "/projections attribute 'quantity'", q, sizeof q);
  if (rc) return rc;
  if (strcmp(q, "counts") == 0) s->quantity = DBTR_QUANTITY_COUNTS;
  else if (strcmp(q, "line_integral") == 0) s->quantity = DBTR_QUANTITY_LINE_INTEGRAL;
  else
    return dbtr_err(DBTR_EFORMAT,
                    "%s: /projections attribute 'quantity': \"%s\"; \"counts\" or \"line_integral\" is expected",
                    r->path, q);
  return 0;
}

/* /i0: its shape is told by its rank, and must agree with /projections. */
static int inspect_i0(reader *r, dbtr_scan *s) {
  char sh[96], want[96];
  hsize_t dims[3];
  int rank, rc = open_dataset(r, "/i0", 0, &r->i0);
  if (rc) return rc;
  if (r->i0 < 0) {
    if (s->quantity == DBTR_QUANTITY_COUNTS)
      return dbtr_err(DBTR_EFORMAT, "%s: /i0: missing dataset; it is required when /projections holds counts", r->path);
    s->i0_shape = DBTR_I0_NONE;
    return 0;
  }
  rc = get_shape(r, r->i0, "/i0", &rank, dims);
  if (!rc) rc = check_numeric(r, r->i0, "/i0");
  if (rc) return rc;
  static const dbtr_i0_shape by_rank[4] = {DBTR_I0_SCALAR, DBTR_I0_PER_VIEW, DBTR_I0_PER_PIXEL, DBTR_I0_FULL};
  /* Rank 1 is (n_views), the leading dim of /projections; rank 2 is (n_rows, n_cols), its
   * trailing two; rank 3 is all of it. */
  const hsize_t *expect = rank == 1 ? r->dims : rank == 2 ? r->dims + 1 : r->dims;
  for (int i = 0; i < rank; i++)
    if (dims[i] != expect[i])
      return dbtr_err(DBTR_EFORMAT,
                      "%s: /i0: shape %s disagrees with /projections %s; expected %s, told apart by rank", r->path,
                      shape_str(sh, sizeof sh, rank, dims), shape_str(want, sizeof want, 3, r->dims),
                      rank == 1 ? "(n_views)" : rank == 2 ? "(n_rows, n_cols)" : "(n_views, n_rows, n_cols)");
  s->i0_shape = by_rank[rank];
  return 0;
}

/* The four (n_views, 3) vectors, read whole and checked finite. */
static int read_geometry(reader *r, dbtr_scan *s) {
  char sh[96], why[512];
  hid_t d[4] = {H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID};
  hsize_t dims[3] = {0, 0, 0};
  int rc = 0, rank;
  /* Every shape is checked before the arrays are allocated: /projections may claim more
   * views than memory holds, and the geometry then shows the damage (found by fuzzing,
   * tests/fuzz/regress_scan/views_beyond_memory). */
  for (int i = 0; i < 4 && !rc; i++) {
    rc = open_dataset(r, dbtr__scan_geom_names[i], 1, &d[i]);
    if (!rc) rc = get_shape(r, d[i], dbtr__scan_geom_names[i], &rank, dims);
    if (!rc) rc = check_numeric(r, d[i], dbtr__scan_geom_names[i]);
    if (!rc && (rank != 2 || dims[1] != 3))
      rc = dbtr_err(DBTR_EFORMAT, "%s: %s: shape %s; expected (n_views, 3)", r->path, dbtr__scan_geom_names[i],
                    shape_str(sh, sizeof sh, rank, dims));
    if (!rc && dims[0] != r->dims[0])
      rc = dbtr_err(DBTR_EFORMAT, "%s: %s: %llu views, but /projections has %llu", r->path, dbtr__scan_geom_names[i],
                    (unsigned long long)dims[0], (unsigned long long)r->dims[0]);
  }
  if (!rc && (rc = dbtr_geom_init(&s->geom, (size_t)r->dims[0], (size_t)r->dims[1], (size_t)r->dims[2]))) {
    snprintf(why, sizeof why, "%s", dbtr_errmsg()); /* dbtr_err overwrites the message it is given */
    rc = dbtr_err(rc, "%s: /geometry: %s", r->path, why);
  }
  double *dst[4] = {s->geom.source, s->geom.detector_center, s->geom.detector_u, s->geom.detector_v};
  for (int i = 0; i < 4 && !rc; i++) {
    rc = read_doubles(r, d[i], dbtr__scan_geom_names[i], 3 * s->geom.n_views, dst[i]);
    if (!rc) rc = check_values(r, dbtr__scan_geom_names[i], dst[i], 3 * s->geom.n_views, 2, dims, ANY_FINITE);
  }
  for (int i = 0; i < 4; i++) dbtr__h5_close(&d[i], H5Dclose);
  return rc;
}

/* The optional /volume group (or dataset) and its three attributes. */
static int read_volume(reader *r, dbtr_scan *s) {
  if (!link_exists(r, "/volume")) return elink_refused(r, "/volume");
  hid_t v = H5Oopen(r->file, "/volume", r->lapl);
  int refused = v < 0 ? elink_refused(r, "/volume") : 0;
  if (refused) return refused;
  if (v < 0) return dbtr_err(DBTR_EFORMAT, "%s: /volume: cannot open", r->path);
  long long dims[3];
  double size[3], origin[3];
  int rc = read_num_attr(r, v, "dims", "/volume attribute 'dims'", 1, H5T_NATIVE_LLONG, 3, dims);
  if (!rc) rc = read_num_attr(r, v, "voxel_size", "/volume attribute 'voxel_size'", 0, H5T_NATIVE_DOUBLE, 3, size);
  if (!rc) rc = read_num_attr(r, v, "origin", "/volume attribute 'origin'", 0, H5T_NATIVE_DOUBLE, 3, origin);
  H5Oclose(v);
  if (rc) return rc;
  for (int i = 0; i < 3; i++)
    if (dims[i] < 1)
      return dbtr_err(DBTR_EFORMAT, "%s: /volume attribute 'dims': [%lld, %lld, %lld]; each must be positive", r->path,
                      dims[0], dims[1], dims[2]);
  s->grid.nx = (size_t)dims[0];
  s->grid.ny = (size_t)dims[1];
  s->grid.nz = (size_t)dims[2];
  s->grid.dx = size[0];
  s->grid.dy = size[1];
  s->grid.dz = size[2];
  memcpy(s->grid.origin, origin, sizeof origin);
  s->has_grid = 1;
  return 0;
}

typedef struct {
  const reader *r;
  dbtr_scan *s;
  int rc;
} notes_ctx;

static herr_t read_note(hid_t grp, const char *name, const H5A_info_t *info, void *data) {
  (void)info;
  notes_ctx *n = data;
  char label[128];
  snprintf(label, sizeof label, "/provenance attribute '%s'", name);
  if (n->s->n_notes == DBTR_SCAN_MAX_NOTES || strlen(name) >= sizeof n->s->notes[0].key) {
    n->rc = dbtr_err(DBTR_EFORMAT, "%s: %s: at most %d attributes with names of up to %zu characters are read",
                     n->r->path, label, DBTR_SCAN_MAX_NOTES, sizeof n->s->notes[0].key - 1);
    return -1;
  }
  dbtr_scan_note *note = &n->s->notes[n->s->n_notes];
  n->rc = read_str_attr(n->r, grp, name, label, note->text, sizeof note->text);
  if (n->rc) return -1;
  snprintf(note->key, sizeof note->key, "%s", name);
  dbtr_sanitize(note->key); /* `dbtr info` prints both */
  dbtr_sanitize(note->text);
  n->s->n_notes++;
  return 0;
}

/* The optional /provenance group: string attributes saying where each quantity came from.
 * Files written before it existed have none, and read as before. */
static int read_provenance(reader *r, dbtr_scan *s) {
  if (!link_exists(r, "/provenance")) return elink_refused(r, "/provenance");
  hid_t g = H5Oopen(r->file, "/provenance", r->lapl);
  int refused = g < 0 ? elink_refused(r, "/provenance") : 0;
  if (refused) return refused;
  if (g < 0) return dbtr_err(DBTR_EFORMAT, "%s: /provenance: cannot open", r->path);
  notes_ctx n = {r, s, 0};
  hsize_t idx = 0;
  herr_t st = H5Aiterate2(g, H5_INDEX_NAME, H5_ITER_INC, &idx, read_note, &n);
  H5Oclose(g);
  if (n.rc) return n.rc;
  if (st < 0) return dbtr_err(DBTR_EFORMAT, "%s: /provenance: cannot list its attributes", r->path);
  return 0;
}

/* The bulk data, read once every shape has been checked. */
static int read_arrays(reader *r, dbtr_scan *s) {
  char what[1200];
  size_t n = (size_t)(r->dims[0] * r->dims[1] * r->dims[2]); /* checked in inspect_projections */
  size_t m = dbtr_scan_i0_count(s);
  /* Both arrays in double, checked together before the first: a small compressed file can
   * declare gigabytes of projections. */
  snprintf(what, sizeof what, "%s: /projections and /i0 (%zu and %zu values in double)", r->path, n, m);
  int rc = dbtr_mem_check(8.0 * ((double)n + (double)m), what);
  if (rc) return rc;
  snprintf(what, sizeof what, "%s: /projections", r->path);
  void *p;
  rc = dbtr_alloc(&p, n, sizeof(double), what);
  s->proj = p;
  if (!rc) rc = read_doubles(r, r->proj, "/projections", n, s->proj);
  if (!rc)
    rc = check_values(r, "/projections", s->proj, n, 3, r->dims,
                      s->quantity == DBTR_QUANTITY_COUNTS ? NON_NEGATIVE : ANY_FINITE);
  if (rc || s->i0_shape == DBTR_I0_NONE) return rc;
  snprintf(what, sizeof what, "%s: /i0", r->path);
  rc = dbtr_alloc(&p, m, sizeof(double), what);
  s->i0 = p;
  if (!rc) rc = read_doubles(r, r->i0, "/i0", m, s->i0);
  int rank = dbtr__scan_i0_rank(s->i0_shape);
  const hsize_t *dims = rank == 2 ? r->dims + 1 : r->dims;
  if (!rc) rc = check_values(r, "/i0", s->i0, m, rank, dims, POSITIVE);
  return rc;
}

static int read_file(reader *r, dbtr_scan *s, void (*header_done)(void *ctx), void *ctx) {
  char why[256];
  int rc = dbtr_input_check(r->path);
  if (rc) return rc;
  FILE *fp = fopen(r->path, "rb");
  if (!fp) return dbtr_err(DBTR_EIO, "%s: cannot open: %s", r->path, strerror(errno));
  fclose(fp);
  htri_t is = H5Fis_hdf5(r->path);
  if (is <= 0) return dbtr_err(DBTR_EFORMAT, "%s: not an HDF5 file", r->path);
  r->file = H5Fopen(r->path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (r->file < 0)
    return dbtr_err(DBTR_EFORMAT, "%s: cannot open as HDF5, truncated or damaged? (%s)", r->path,
                    dbtr__h5_reason(why, sizeof why));
  char geom_what[1200], grid_what[1200];
  snprintf(geom_what, sizeof geom_what, "%s: /geometry", r->path);
  snprintf(grid_what, sizeof grid_what, "%s: /volume", r->path);
  rc = check_format(r);
  if (!rc) rc = inspect_projections(r, s);
  if (!rc) rc = inspect_i0(r, s);
  if (!rc) rc = read_geometry(r, s);
  if (!rc) rc = read_volume(r, s);
  if (!rc) rc = read_provenance(r, s);
  /* The small parts are judged before the projections are read: a bad geometry should
   * not cost a read of gigabytes. */
  if (!rc) rc = dbtr_geom_check(&s->geom, geom_what);
  if (!rc && s->has_grid) rc = dbtr_grid_check(&s->grid, &s->geom, grid_what);
  if (rc) return rc;
  if (header_done) header_done(ctx);
  r->threads = 1;
  return read_arrays(r, s);
}

int dbtr_scan_read(dbtr_scan *s, const char *path) { return dbtr_scan_read_hooked(s, path, NULL, NULL); }

int dbtr_scan_read_hooked(dbtr_scan *s, const char *path, void (*header_done)(void *ctx), void *ctx) {
  if (!s) return dbtr_err(DBTR_EINVAL, "dbtr_scan_read: no scan struct given");
  memset(s, 0, sizeof *s);
  if (!path || !*path) return dbtr_err(DBTR_EINVAL, "scan path is empty");
  /* Our message names the cause; HDF5's printed stack would only bury it. */
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  char elink[ELINK_CAP] = "";
  reader r = {path, H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID, H5Pcreate(H5P_LINK_ACCESS),
              H5Pcreate(H5P_DATASET_ACCESS), elink, {0, 0, 0}, 0};
  int rc = 0;
  if (r.lapl < 0 || r.dapl < 0 || H5Pset_elink_cb(r.lapl, elink_refuse, elink) < 0 ||
      H5Pset_elink_cb(r.dapl, elink_refuse, elink) < 0)
    rc = dbtr_err(DBTR_EINTERNAL, "%s: libhdf5 cannot make a link access list", path);
  if (!rc) rc = read_file(&r, s, header_done, ctx);
  dbtr__h5_close(&r.dapl, H5Pclose);
  dbtr__h5_close(&r.lapl, H5Pclose);
  dbtr__h5_close(&r.i0, H5Dclose);
  dbtr__h5_close(&r.proj, H5Dclose);
  dbtr__h5_close(&r.file, H5Fclose);
  if (rc) dbtr_scan_free(s);
  return rc;
}

void dbtr_scan_free(dbtr_scan *s) {
  if (!s) return;
  dbtr_geom_free(&s->geom);
  free(s->proj);
  free(s->i0);
  memset(s, 0, sizeof *s);
}

/* Line integrals carry no i0; 1 keeps i0 * exp(-l) the plain transmission. */
double dbtr_scan_i0(const dbtr_scan *s, size_t k, size_t p) {
  switch (s->i0_shape) {
  case DBTR_I0_SCALAR: return s->i0[0];
  case DBTR_I0_PER_VIEW: return s->i0[k];
  case DBTR_I0_PER_PIXEL: return s->i0[p];
  case DBTR_I0_FULL: return s->i0[k * s->geom.n_rows * s->geom.n_cols + p];
  case DBTR_I0_NONE: break;
  }
  return 1.0;
}

size_t dbtr_scan_i0_count(const dbtr_scan *s) {
  switch (s->i0_shape) {
  case DBTR_I0_SCALAR: return 1;
  case DBTR_I0_PER_VIEW: return s->geom.n_views;
  case DBTR_I0_PER_PIXEL: return s->geom.n_rows * s->geom.n_cols;
  case DBTR_I0_FULL: return s->geom.n_views * s->geom.n_rows * s->geom.n_cols;
  case DBTR_I0_NONE: break;
  }
  return 0;
}
