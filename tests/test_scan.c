/* tests/test_scan.c: the HDF5 scan file (io/scan.c reads, io/scan_write.c writes; docs/scan-format.md).
 *
 * Round trips of every stored dtype and every i0 shape, files written by other tools
 * (big-endian, variable-length strings, gzip chunks, the h5py example of the docs), and
 * every refusal of the reader: each must return an error whose message names the file
 * and the dataset or attribute at fault, and leave the struct zeroed. Bad files are made
 * by writing a valid scan and then breaking one thing in it with the HDF5 API. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/scan.h"
#include "phantoms/systems.h"
#include "recon/error.h"
#include "tests/scan_fixtures.h"
#include "tests/test.h"

/* Reading path must fail, naming the file and `what`, and leave the struct zeroed. */
#define EXPECT_REFUSED(path, what)                   \
  do {                                               \
    dbtr_scan s_;                                    \
    dbtr_err_clear();                                \
    int rc_ = dbtr_scan_read(&s_, (path));           \
    CHECK(rc_ < 0);                                  \
    CHECK_STR_CONTAINS(dbtr_errmsg(), (path));       \
    CHECK_STR_CONTAINS(dbtr_errmsg(), (what));       \
    CHECK(is_zeroed(&s_));                           \
  } while (0)

/* ---- round trips ---- */

/* Writes s with opts, reads it back, and checks everything but the projection values. */
static void roundtrip(const dbtr_scan *s, const dbtr_scan_write_opts *o, dbtr_scan *back, const char *dir) {
  char path[256];
  tmp_path(path, dir, "rt.h5");
  memset(back, 0, sizeof *back);
  REQUIRE_OK(dbtr_scan_write(s, path, o));
  CHECK_EQ_INT(tmp_count(dir), 1); /* the file, no temporary left behind */
  REQUIRE_OK(dbtr_scan_read(back, path));
  CHECK_EQ_INT(back->stored_dtype, o ? o->dtype : DBTR_DTYPE_FLOAT64);
  CHECK_EQ_INT(back->quantity, s->quantity);
  CHECK_EQ_INT(back->i0_shape, s->i0_shape);
  CHECK_EQ_U64(back->geom.n_views, NV);
  CHECK_EQ_U64(back->geom.n_rows, NR);
  CHECK_EQ_U64(back->geom.n_cols, NC);
  CHECK(memcmp(back->geom.source, s->geom.source, 3 * NV * sizeof(double)) == 0);
  CHECK(memcmp(back->geom.detector_center, s->geom.detector_center, 3 * NV * sizeof(double)) == 0);
  CHECK(memcmp(back->geom.detector_u, s->geom.detector_u, 3 * NV * sizeof(double)) == 0);
  CHECK(memcmp(back->geom.detector_v, s->geom.detector_v, 3 * NV * sizeof(double)) == 0);
  CHECK_EQ_INT(back->has_grid, 1);
  CHECK(memcmp(&back->grid, &s->grid, sizeof s->grid) == 0);
  size_t m = dbtr_scan_i0_count(s);
  CHECK_EQ_U64(dbtr_scan_i0_count(back), m);
  for (size_t i = 0; i < m && back->i0; i++) CHECK(back->i0[i] == s->i0[i]); /* i0 is stored as float64 */
}

DBTR_TEST(roundtrip_float64) {
  char dir[64];
  dbtr_scan s, back;
  REQUIRE(tmp_make(dir) == 0);
  REQUIRE_OK(make_scan(&s, DBTR_QUANTITY_COUNTS, DBTR_I0_SCALAR));
  dbtr_scan_write_opts o = {DBTR_DTYPE_FLOAT64, 0};
  roundtrip(&s, &o, &back, dir);
  for (size_t i = 0; i < NP && back.proj; i++) CHECK(back.proj[i] == s.proj[i]); /* float64 stores doubles exactly */
  dbtr_scan_free(&s);
  dbtr_scan_free(&back);
  dbtr_scan_free(&back); /* freeing twice is allowed */
  CHECK(is_zeroed(&back));
  tmp_remove(dir);
}

DBTR_TEST(roundtrip_float32) {
  char dir[64];
  dbtr_scan s, back;
  REQUIRE(tmp_make(dir) == 0);
  REQUIRE_OK(make_scan(&s, DBTR_QUANTITY_LINE_INTEGRAL, DBTR_I0_NONE));
  for (size_t i = 0; i < NP; i++) s.proj[i] = 0.01 * (double)i - 0.2; /* line integrals may be negative */
  dbtr_scan_write_opts o = {DBTR_DTYPE_FLOAT32, 0};
  roundtrip(&s, &o, &back, dir);
  /* One rounding to float on the way out; float to double on the way in is exact. */
  for (size_t i = 0; i < NP && back.proj; i++) CHECK(back.proj[i] == (double)(float)s.proj[i]);
  CHECK(back.i0 == NULL);
  dbtr_scan_free(&s);
  dbtr_scan_free(&back);
  tmp_remove(dir);
}

/* Input and the stored integer it must become: rounded half away from zero, saturated. */
typedef struct {
  double in, out;
} conv_case;

static void roundtrip_integer(dbtr_dtype dtype, const conv_case *cases, size_t n) {
  char dir[64];
  dbtr_scan s, back;
  REQUIRE(tmp_make(dir) == 0);
  REQUIRE(n <= NP);
  REQUIRE_OK(make_scan(&s, DBTR_QUANTITY_COUNTS, DBTR_I0_PER_VIEW));
  for (size_t i = 0; i < NP; i++) s.proj[i] = i < n ? cases[i].in : (double)(7 * i); /* the rest: exact integers */
  dbtr_scan_write_opts o = {dtype, 0};
  roundtrip(&s, &o, &back, dir);
  for (size_t i = 0; i < NP && back.proj; i++) {
    double want = i < n ? cases[i].out : (double)(7 * i);
    if (back.proj[i] != want)
      TEST__FAIL("element %zu: %.17g stored as %.17g, expected %.17g", i, s.proj[i], back.proj[i], want);
  }
  dbtr_scan_free(&s);
  dbtr_scan_free(&back);
  tmp_remove(dir);
}

DBTR_TEST(roundtrip_uint16) {
  static const conv_case cases[] = {
      {-3.7, 0},           /* negative saturates to 0, never wraps to 65533 */
      {-0.5, 0},           /* rounds to -1, then saturates */
      {DNAN, 0},           /* NaN has no count; 0 by definition */
      {0.49, 0},           /* below the half */
      {0.5, 1},            /* the half goes away from zero */
      {2.5, 3},            /* away from zero, not to even (which would give 2) */
      {2.4999, 2},         /* just below the half */
      {1234.0, 1234},      /* an integer is kept */
      {65534.5, 65535},    /* rounds up to the maximum */
      {65535.49, 65535},   /* rounds down to the maximum */
      {65535.5, 65535},    /* would round to 65536: saturates */
      {1e9, 65535},        /* far above: saturates */
      {DINF, 65535},       /* infinity saturates too */
  };
  roundtrip_integer(DBTR_DTYPE_UINT16, cases, sizeof cases / sizeof cases[0]);
}

DBTR_TEST(roundtrip_uint32) {
  static const conv_case cases[] = {
      {-3.7, 0},                      /* negative saturates to 0 */
      {DNAN, 0},                      /* NaN becomes 0 */
      {0.5, 1},                       /* the half goes away from zero */
      {2.5, 3},                       /* not to even */
      {65535.5, 65536},               /* above uint16's range, well inside uint32's */
      {4294967294.5, 4294967295.0},   /* rounds up to the maximum, 2^32 - 1 */
      {4294967295.25, 4294967295.0},  /* rounds down to the maximum (2^-21 spacing here) */
      {4294967295.5, 4294967295.0},   /* would round to 2^32: saturates */
      {1e12, 4294967295.0},           /* far above: saturates */
      {DINF, 4294967295.0},           /* infinity saturates */
  };
  roundtrip_integer(DBTR_DTYPE_UINT32, cases, sizeof cases / sizeof cases[0]);
}

DBTR_TEST(roundtrip_i0_shapes) {
  static const dbtr_i0_shape shapes[] = {DBTR_I0_NONE, DBTR_I0_SCALAR, DBTR_I0_PER_VIEW, DBTR_I0_PER_PIXEL,
                                         DBTR_I0_FULL};
  static const size_t counts[] = {0, 1, NV, NR * NC, NP}; /* values each shape holds */
  for (size_t j = 0; j < 5; j++) {
    char dir[64];
    dbtr_scan s, back;
    REQUIRE(tmp_make(dir) == 0);
    /* Line integrals are the quantity that may go without i0. */
    REQUIRE_OK(make_scan(&s, j == 0 ? DBTR_QUANTITY_LINE_INTEGRAL : DBTR_QUANTITY_COUNTS, shapes[j]));
    CHECK_EQ_U64(dbtr_scan_i0_count(&s), counts[j]);
    roundtrip(&s, NULL, &back, dir);
    for (size_t k = 0; k < NV; k++)
      for (size_t p = 0; p < NR * NC; p++) {
        /* make_scan gives element i of the i0 array the value 1000.25 + i. */
        size_t i = shapes[j] == DBTR_I0_SCALAR ? 0 : shapes[j] == DBTR_I0_PER_VIEW ? k
                  : shapes[j] == DBTR_I0_PER_PIXEL ? p : k * NR * NC + p;
        double want = shapes[j] == DBTR_I0_NONE ? 1.0 : 1000.25 + (double)i; /* none: 1, documented */
        if (dbtr_scan_i0(&back, k, p) != want)
          TEST__FAIL("shape %d, view %zu, pixel %zu: i0 %.17g, expected %.17g", (int)shapes[j], k, p,
                     dbtr_scan_i0(&back, k, p), want);
      }
    dbtr_scan_free(&s);
    dbtr_scan_free(&back);
    tmp_remove(dir);
  }
}

DBTR_TEST(roundtrip_gzip_chunked) {
  char dir[64], path[256];
  dbtr_scan s, back;
  REQUIRE(tmp_make(dir) == 0);
  REQUIRE_OK(make_scan(&s, DBTR_QUANTITY_COUNTS, DBTR_I0_FULL));
  for (size_t i = 0; i < NP; i++) s.proj[i] = (double)(i % 17) * 300.0; /* integers: uint16 holds them exactly */
  dbtr_scan_write_opts o = {DBTR_DTYPE_UINT16, 6};
  roundtrip(&s, &o, &back, dir);
  for (size_t i = 0; i < NP && back.proj; i++) CHECK(back.proj[i] == s.proj[i]);
  /* The layout the docs promise: chunks of one view, deflate. */
  tmp_path(path, dir, "rt.h5");
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, "/projections", H5P_DEFAULT);
  hid_t dcpl = H5Dget_create_plist(d);
  hsize_t chunk[3] = {0, 0, 0};
  CHECK_EQ_INT(H5Pget_layout(dcpl), H5D_CHUNKED);
  CHECK_EQ_INT(H5Pget_chunk(dcpl, 3, chunk), 3);
  CHECK_EQ_U64(chunk[0], 1);
  CHECK_EQ_U64(chunk[1], NR);
  CHECK_EQ_U64(chunk[2], NC);
  CHECK_EQ_INT(H5Pget_nfilters(dcpl), 1);
  unsigned flags = 0, level = 0;
  size_t nvals = 1;
  CHECK_EQ_INT(H5Pget_filter2(dcpl, 0, &flags, &nvals, &level, 0, NULL, NULL), H5Z_FILTER_DEFLATE);
  CHECK_EQ_INT(level, 6);
  H5Pclose(dcpl);
  H5Dclose(d);
  H5Fclose(f);
  dbtr_scan_free(&s);
  dbtr_scan_free(&back);
  tmp_remove(dir);
}

/* The whole file, or NULL; *n its size. */
static unsigned char *file_bytes(const char *path, size_t *n) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  unsigned char *buf = NULL;
  long len = fseek(fp, 0, SEEK_END) == 0 ? ftell(fp) : -1;
  if (len > 0 && fseek(fp, 0, SEEK_SET) == 0 && (buf = malloc((size_t)len)) &&
      fread(buf, 1, (size_t)len, fp) != (size_t)len) {
    free(buf);
    buf = NULL;
  }
  fclose(fp);
  *n = len > 0 ? (size_t)len : 0;
  return buf;
}

/* The same scan written twice gives the same bytes: HDF5 would store each object's
 * modification time, in seconds, so the second write waits 1.1 s to land in another one. */
DBTR_TEST(write_is_reproducible) {
  char dir[64], a[256], b[256];
  dbtr_scan s;
  REQUIRE(tmp_make(dir) == 0);
  REQUIRE_OK(make_scan(&s, DBTR_QUANTITY_COUNTS, DBTR_I0_PER_VIEW));
  tmp_path(a, dir, "a.h5");
  tmp_path(b, dir, "b.h5");
  dbtr_scan_write_opts o = {DBTR_DTYPE_FLOAT32, 4};
  REQUIRE_OK(dbtr_scan_write(&s, a, &o));
  struct timespec pause = {1, 100000000};
  nanosleep(&pause, NULL);
  REQUIRE_OK(dbtr_scan_write(&s, b, &o));
  size_t na = 0, nb = 0;
  unsigned char *ba = file_bytes(a, &na), *bb = file_bytes(b, &nb);
  REQUIRE(ba && bb);
  CHECK_EQ_U64(na, nb);
  CHECK(na == nb && memcmp(ba, bb, na) == 0);
  free(ba);
  free(bb);
  dbtr_scan_free(&s);
  tmp_remove(dir);
}

/* Other tools write big-endian data and variable-length strings; HDF5 converts both. */
DBTR_TEST(read_big_endian_vlen_strings) {
  char dir[64], path[256];
  dbtr_scan s;
  double v[NP];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "be.h5");
  REQUIRE_OK(write_valid(path));
  for (size_t i = 0; i < NP; i++) v[i] = 100.0 + 0.1 * (double)i; /* not floats: rounded on the way in */
  hsize_t dims[3] = {NV, NR, NC};
  REQUIRE(put_dataset(path, "/projections", H5T_IEEE_F32BE, 3, dims, H5P_DEFAULT, v) == 0);
  REQUIRE(set_str_attr(path, "/projections", "quantity", "counts", 1) == 0);
  REQUIRE(set_str_attr(path, "/", "format", "dbtr-scan", 1) == 0);
  REQUIRE_OK(dbtr_scan_read(&s, path));
  CHECK_EQ_INT(s.stored_dtype, DBTR_DTYPE_FLOAT32);
  for (size_t i = 0; i < NP; i++) CHECK(s.proj[i] == (double)(float)v[i]); /* one rounding, then exact */
  dbtr_scan_free(&s);
  tmp_remove(dir);
}

/* The grid may hang on a dataset as well as on a group. */
DBTR_TEST(read_volume_dataset) {
  char dir[64], path[256];
  dbtr_scan s;
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.h5");
  REQUIRE_OK(write_valid(path));
  double dims[3] = {5, 4, 3}, size[3] = {1, 1, 2}, origin[3] = {-2, -1.5, 1}; /* make_scan's grid */
  REQUIRE(put_dataset(path, "/volume", H5T_STD_U8LE, 0, NULL, H5P_DEFAULT, NULL) == 0);
  REQUIRE(set_vec_attr(path, "/volume", "dims", H5T_STD_I32BE, 3, dims) == 0);
  REQUIRE(set_vec_attr(path, "/volume", "voxel_size", H5T_IEEE_F32LE, 3, size) == 0);
  REQUIRE(set_vec_attr(path, "/volume", "origin", H5T_IEEE_F64LE, 3, origin) == 0);
  REQUIRE_OK(dbtr_scan_read(&s, path));
  CHECK_EQ_INT(s.has_grid, 1);
  CHECK_EQ_U64(s.grid.nx, 5);
  CHECK_EQ_U64(s.grid.nz, 3);
  CHECK(s.grid.dz == 2.0 && s.grid.origin[1] == -1.5); /* exact in every type used */
  dbtr_scan_free(&s);
  tmp_remove(dir);
}

/* Counts above i0 happen (noise, scatter) and are data, not an error. */
DBTR_TEST(accept_counts_above_i0) {
  char dir[64], path[256];
  dbtr_scan s;
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "above.h5");
  REQUIRE_OK(write_valid(path));
  REQUIRE(poke(path, "/projections", 7, 5000.0) == 0); /* five times i0 = 1000.25 */
  REQUIRE_OK(dbtr_scan_read(&s, path));
  CHECK(s.proj[7] == 5000.0);
  dbtr_scan_free(&s);
  tmp_remove(dir);
}

/* ---- refusals ---- */

DBTR_TEST(refuse_missing_file) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "absent.h5");
  EXPECT_REFUSED(path, "cannot open");
  tmp_remove(dir);
}

DBTR_TEST(refuse_not_hdf5) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "text.h5");
  static const char text[] = "this is a text file, not HDF5\n";
  REQUIRE(write_bytes(path, text, sizeof text - 1) == 0);
  EXPECT_REFUSED(path, "not an HDF5 file");
  tmp_remove(dir);
}

DBTR_TEST(refuse_truncated) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "cut.h5");
  REQUIRE_OK(write_valid(path));
  FILE *fp = fopen(path, "rb");
  REQUIRE(fp);
  fseek(fp, 0, SEEK_END);
  long size = ftell(fp);
  fclose(fp);
  REQUIRE(truncate(path, size / 2) == 0); /* half: the superblock survives, the data does not */
  EXPECT_REFUSED(path, "truncated");
  tmp_remove(dir);
}

DBTR_TEST(refuse_format_attrs) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "fmt.h5");
  REQUIRE_OK(write_valid(path));
  REQUIRE(set_str_attr(path, "/", "format", "dbtr-volume", 0) == 0);
  EXPECT_REFUSED(path, "'format'");
  REQUIRE(set_i64_attr(path, "/", "format", 1) == 0); /* not a string */
  EXPECT_REFUSED(path, "'format'");
  REQUIRE(write_valid(path) == 0);
  REQUIRE(set_i64_attr(path, "/", "format_version", 2) == 0);
  EXPECT_REFUSED(path, "'format_version'");
  REQUIRE(set_str_attr(path, "/", "format_version", "1", 0) == 0); /* a string, not an integer */
  EXPECT_REFUSED(path, "'format_version'");
  REQUIRE(write_valid(path) == 0);
  hid_t f = open_rw(path);
  REQUIRE(f >= 0);
  H5Adelete(f, "format");
  H5Fclose(f);
  EXPECT_REFUSED(path, "'format'");
  tmp_remove(dir);
}

DBTR_TEST(refuse_missing_dataset) {
  static const char *const names[] = {"/projections", "/i0", "/geometry/source", "/geometry/detector_center",
                                      "/geometry/detector_u", "/geometry/detector_v"};
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "miss.h5");
  for (size_t i = 0; i < 6; i++) {
    REQUIRE_OK(write_valid(path)); /* counts: /i0 is required */
    REQUIRE(del_link(path, names[i]) == 0);
    EXPECT_REFUSED(path, names[i]);
  }
  REQUIRE_OK(write_valid(path));
  REQUIRE(del_link(path, "/geometry") == 0); /* the whole group: its first dataset is named */
  EXPECT_REFUSED(path, "/geometry/source");
  tmp_remove(dir);
}

DBTR_TEST(refuse_wrong_rank) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "rank.h5");
  hsize_t d2[2] = {NR, NC}, d4[4] = {1, NV, NR, NC}, g1[1] = {NV * 3}, g2[2] = {NV, 2};
  static const double fill[NP] = {0}; /* any values: the shape is refused first */
  const struct {
    const char *name;
    int rank;
    const hsize_t *dims;
  } cases[] = {{"/projections", 2, d2}, {"/projections", 4, d4}, {"/i0", 4, d4},
               {"/geometry/detector_u", 1, g1}, {"/geometry/source", 2, g2}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    REQUIRE_OK(write_valid(path));
    REQUIRE(put_dataset(path, cases[i].name, H5T_IEEE_F64LE, cases[i].rank, cases[i].dims, H5P_DEFAULT, fill) == 0);
    if (strcmp(cases[i].name, "/projections") == 0)
      REQUIRE(set_str_attr(path, "/projections", "quantity", "counts", 0) == 0);
    EXPECT_REFUSED(path, cases[i].name);
  }
  tmp_remove(dir);
}

DBTR_TEST(refuse_shape_disagreement) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "shape.h5");
  /* Each is one off from what NV = 3, NR = 4, NC = 5 asks. */
  hsize_t src[2] = {NV + 1, 3}, pv[1] = {NV + 1}, pp[2] = {NC, NR}, full[3] = {NV, NR, NC + 1};
  static const double fill[(NV + 1) * 3 * NR * NC] = {0}; /* any values: the shape is refused first */
  const struct {
    const char *name;
    int rank;
    const hsize_t *dims;
  } cases[] = {{"/geometry/source", 2, src}, {"/i0", 1, pv}, {"/i0", 2, pp}, {"/i0", 3, full}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    REQUIRE_OK(write_valid(path));
    REQUIRE(put_dataset(path, cases[i].name, H5T_IEEE_F64LE, cases[i].rank, cases[i].dims, H5P_DEFAULT, fill) == 0);
    EXPECT_REFUSED(path, cases[i].name);
  }
  tmp_remove(dir);
}

/* A dataspace whose element count overflows 64 bits must be refused before any buffer is
 * sized from it. Chunked with nothing written, the file itself stays a few KiB. */
DBTR_TEST(refuse_overflow) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "huge.h5");
  /* 2^31 * 2^31 * 4 = 2^64 elements: the count itself wraps. 2^31 * 2^31 * 1 = 2^62
   * elements fits size_t but its 2^65 bytes of doubles do not. */
  hsize_t dims[2][3] = {{(hsize_t)1 << 31, (hsize_t)1 << 31, 4}, {(hsize_t)1 << 31, (hsize_t)1 << 31, 1}};
  for (int i = 0; i < 2; i++) {
    hsize_t chunk[3] = {1, 1, dims[i][2]};
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 3, chunk);
    REQUIRE_OK(write_valid(path));
    REQUIRE(put_dataset(path, "/projections", H5T_STD_U16LE, 3, dims[i], dcpl, NULL) == 0);
    H5Pclose(dcpl);
    REQUIRE(set_str_attr(path, "/projections", "quantity", "counts", 0) == 0);
    EXPECT_REFUSED(path, "/projections");
    dbtr_scan s;
    CHECK_EQ_INT(dbtr_scan_read(&s, path), DBTR_EOVERFLOW); /* not ENOMEM: no allocation was tried */
  }
  tmp_remove(dir);
}

DBTR_TEST(refuse_nonfinite_geometry) {
  static const char *const names[] = {"/geometry/source", "/geometry/detector_center", "/geometry/detector_u",
                                      "/geometry/detector_v"};
  static const double bad[] = {DNAN, DINF, -DINF};
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "geom.h5");
  for (size_t i = 0; i < 4; i++)
    for (size_t j = 0; j < 3; j++) {
      REQUIRE_OK(write_valid(path));
      REQUIRE(poke(path, names[i], 3 * (NV - 1) + j, bad[j]) == 0); /* the last view, component j */
      EXPECT_REFUSED(path, names[i]);
      EXPECT_REFUSED(path, "not finite");
    }
  tmp_remove(dir);
}

DBTR_TEST(refuse_nonfinite_projections) {
  static const double bad[] = {DNAN, DINF, -DINF};
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "proj.h5");
  for (size_t j = 0; j < 3; j++) {
    REQUIRE_OK(write_valid(path));
    REQUIRE(poke(path, "/projections", NP - 1 - j, bad[j]) == 0); /* near the end: the whole array is scanned */
    EXPECT_REFUSED(path, "/projections");
    EXPECT_REFUSED(path, "not finite");
    REQUIRE(set_str_attr(path, "/projections", "quantity", "line_integral", 0) == 0); /* refused for both quantities */
    EXPECT_REFUSED(path, "/projections");
  }
  tmp_remove(dir);
}

DBTR_TEST(refuse_negative_counts) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "neg.h5");
  REQUIRE_OK(write_valid(path));
  REQUIRE(poke(path, "/projections", 11, -1.0) == 0); /* element 11 = view 0, row 2, col 1 */
  EXPECT_REFUSED(path, "/projections");
  EXPECT_REFUSED(path, "(0, 2, 1)");
  /* A negative line integral is data (noise above i0), and is read. */
  REQUIRE(set_str_attr(path, "/projections", "quantity", "line_integral", 0) == 0);
  dbtr_scan s;
  REQUIRE_OK(dbtr_scan_read(&s, path));
  CHECK(s.proj[11] == -1.0);
  dbtr_scan_free(&s);
  tmp_remove(dir);
}

DBTR_TEST(refuse_bad_i0) {
  static const double bad[] = {0.0, -5.0, DNAN, DINF};
  char dir[64], path[256];
  hsize_t pp[2] = {NR, NC};
  double plane[NR * NC];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "i0.h5");
  for (size_t i = 0; i < NR * NC; i++) plane[i] = 1000.0; /* a valid per-pixel i0 */
  for (size_t j = 0; j < 4; j++) {
    REQUIRE_OK(write_valid(path));
    REQUIRE(poke(path, "/i0", 0, bad[j]) == 0); /* the scalar */
    EXPECT_REFUSED(path, "/i0");
    REQUIRE(put_dataset(path, "/i0", H5T_IEEE_F64LE, 2, pp, H5P_DEFAULT, plane) == 0);
    REQUIRE(poke(path, "/i0", NR * NC - 1, bad[j]) == 0); /* the last pixel of the plane */
    EXPECT_REFUSED(path, "/i0");
  }
  tmp_remove(dir);
}

DBTR_TEST(refuse_unsupported_dtype) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "dtype.h5");
  hsize_t dims[3] = {NV, NR, NC}, g[2] = {NV, 3};
  static const double zeros[NP] = {0};
  /* The format's four types only: signed, 8-bit and 64-bit integers are refused. */
  hid_t types[] = {H5T_STD_I8LE, H5T_STD_U8LE, H5T_STD_I16LE, H5T_STD_I32LE, H5T_STD_U64LE};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    REQUIRE_OK(write_valid(path));
    REQUIRE(put_dataset(path, "/projections", types[i], 3, dims, H5P_DEFAULT, zeros) == 0);
    REQUIRE(set_str_attr(path, "/projections", "quantity", "counts", 0) == 0);
    EXPECT_REFUSED(path, "/projections");
    EXPECT_REFUSED(path, "uint16, uint32, float32 or float64");
  }
  hid_t str = H5Tcopy(H5T_C_S1);
  H5Tset_size(str, 8);
  REQUIRE_OK(write_valid(path));
  REQUIRE(put_dataset(path, "/projections", str, 3, dims, H5P_DEFAULT, NULL) == 0);
  REQUIRE(set_str_attr(path, "/projections", "quantity", "counts", 0) == 0);
  EXPECT_REFUSED(path, "stored as string");
  REQUIRE_OK(write_valid(path));
  REQUIRE(put_dataset(path, "/geometry/detector_v", str, 2, g, H5P_DEFAULT, NULL) == 0);
  EXPECT_REFUSED(path, "/geometry/detector_v");
  H5Tclose(str);
  tmp_remove(dir);
}

DBTR_TEST(refuse_quantity) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "q.h5");
  REQUIRE_OK(write_valid(path));
  REQUIRE(set_str_attr(path, "/projections", "quantity", "photons", 0) == 0);
  EXPECT_REFUSED(path, "'quantity'");
  hid_t f = open_rw(path);
  hid_t d = H5Dopen2(f, "/projections", H5P_DEFAULT);
  H5Adelete(d, "quantity");
  H5Dclose(d);
  H5Fclose(f);
  EXPECT_REFUSED(path, "/projections attribute 'quantity'");
  tmp_remove(dir);
}

DBTR_TEST(refuse_volume_attrs) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.h5");
  static const double neg[3] = {5, -4, 3}, two[2] = {5, 4}, frac[3] = {5, 4, 3};
  static const double zero_dz[3] = {1, 1, 0}, far[3] = {1000, 0, 1}; /* a grid 1 m away is seen by no view */
  REQUIRE_OK(write_valid(path));
  REQUIRE(set_vec_attr(path, "/volume", "dims", H5T_NATIVE_LLONG, 3, neg) == 0);
  EXPECT_REFUSED(path, "/volume attribute 'dims'");
  REQUIRE(set_vec_attr(path, "/volume", "dims", H5T_NATIVE_LLONG, 2, two) == 0);
  EXPECT_REFUSED(path, "/volume attribute 'dims'");
  REQUIRE(set_vec_attr(path, "/volume", "dims", H5T_IEEE_F64LE, 3, frac) == 0); /* floats, even whole ones */
  EXPECT_REFUSED(path, "/volume attribute 'dims'");
  REQUIRE_OK(write_valid(path));
  REQUIRE(set_vec_attr(path, "/volume", "voxel_size", H5T_IEEE_F64LE, 3, zero_dz) == 0);
  EXPECT_REFUSED(path, "/volume"); /* dbtr_grid_check's refusal, named */
  REQUIRE_OK(write_valid(path));
  REQUIRE(set_vec_attr(path, "/volume", "origin", H5T_IEEE_F64LE, 3, far) == 0);
  EXPECT_REFUSED(path, "/volume");
  REQUIRE_OK(write_valid(path));
  hid_t f = open_rw(path);
  hid_t g = H5Gopen2(f, "/volume", H5P_DEFAULT);
  H5Adelete(g, "origin");
  H5Gclose(g);
  H5Fclose(f);
  EXPECT_REFUSED(path, "/volume attribute 'origin'");
  tmp_remove(dir);
}

/* dbtr_geom_check's 45 deg limit, reached through the reader and named by it. */
DBTR_TEST(refuse_steep_geometry) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "steep.h5");
  REQUIRE_OK(write_valid(path));
  REQUIRE(poke(path, "/geometry/source", 0, 1000.0) == 0); /* x = 1000 mm at z = 660: atan(1000/660) = 57 deg */
  EXPECT_REFUSED(path, "/geometry");
  EXPECT_REFUSED(path, "45 deg");
  tmp_remove(dir);
}

/* ---- writer failures ---- */

DBTR_TEST(write_missing_folder) {
  char dir[64], path[256];
  dbtr_scan s;
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "no/such/folder/scan.h5");
  REQUIRE_OK(make_scan(&s, DBTR_QUANTITY_COUNTS, DBTR_I0_SCALAR));
  dbtr_err_clear();
  CHECK(dbtr_scan_write(&s, path, NULL) < 0);
  CHECK_STR_CONTAINS(dbtr_errmsg(), path);
  CHECK_EQ_INT(tmp_count(dir), 0); /* nothing, not even a temporary, anywhere in the tree */
  dbtr_scan_free(&s);
  tmp_remove(dir);
}

/* A write that fails after the temporary exists (renaming onto a folder) leaves the
 * folder as it was. */
DBTR_TEST(write_failure_leaves_nothing) {
  char dir[64], path[256];
  dbtr_scan s;
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "taken");
  REQUIRE(mkdir(path, 0755) == 0);
  REQUIRE_OK(make_scan(&s, DBTR_QUANTITY_COUNTS, DBTR_I0_SCALAR));
  dbtr_err_clear();
  CHECK(dbtr_scan_write(&s, path, NULL) < 0);
  CHECK_STR_CONTAINS(dbtr_errmsg(), path);
  CHECK_EQ_INT(tmp_count(dir), 1); /* the folder "taken", no temporary beside it */
  CHECK_EQ_INT(tmp_count(path), 0);
  dbtr_scan_free(&s);
  tmp_remove(path);
  tmp_remove(dir);
}

/* Fault injection: a write that runs out of room part way (the file size limit stands in
 * for a full disk) fails with a message naming the file, removes its temporary, and leaves
 * the previous file untouched. */
static int write_big_scan(void *path) {
  /* The tiny system's 9 x 80 x 128 projections in float64 are 737 KiB; 64 KiB stops the
   * write part way through the data. */
  dbtr_scan sc = {0};
  int ok = dbtr_system_geometry(dbtr_system_find("tiny"), &sc.geom) == 0;
  size_t n = 9 * 80 * 128;
  sc.quantity = DBTR_QUANTITY_COUNTS;
  sc.proj = malloc(n * sizeof(double));
  sc.i0 = malloc(sizeof(double));
  sc.i0_shape = DBTR_I0_SCALAR;
  ok = ok && sc.proj && sc.i0;
  for (size_t i = 0; ok && i < n; i++) sc.proj[i] = (double)(i % 1000);
  if (ok) sc.i0[0] = 1000.0;
  dbtr_scan_write_opts o = {DBTR_DTYPE_FLOAT64, 0};
  int rc = ok ? dbtr_scan_write(&sc, path, &o) : 0;
  ok = ok && rc < 0 && strstr(dbtr_errmsg(), path) != NULL;
  if (!ok) fprintf(stderr, "child: rc %d: %s\n", rc, dbtr_errmsg());
  dbtr_scan_free(&sc);
  return ok;
}

DBTR_TEST(write_out_of_space_keeps_previous) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "scan.h5");
  FILE *fp = fopen(path, "w");
  REQUIRE(fp);
  fputs("previous result\n", fp);
  fclose(fp);
  CHECK(run_with_file_limit(64 * 1024, write_big_scan, path));
  CHECK_EQ_INT(tmp_count(dir), 1); /* the old file only: the temporary is gone */
  struct stat st;
  CHECK(stat(path, &st) == 0 && st.st_size == 16); /* "previous result\n", untouched */
  tmp_remove(dir);
}

DBTR_TEST(write_refuses_bad_input) {
  char dir[64], path[256];
  dbtr_scan s;
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "bad.h5");
  REQUIRE_OK(make_scan(&s, DBTR_QUANTITY_COUNTS, DBTR_I0_SCALAR));
  dbtr_scan_write_opts o = {DBTR_DTYPE_UINT16, 10}; /* gzip levels are 0 to 9 */
  CHECK(dbtr_scan_write(&s, path, &o) < 0);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "gzip");
  s.i0_shape = DBTR_I0_NONE; /* counts without i0 would make a file the reader refuses */
  CHECK(dbtr_scan_write(&s, path, NULL) < 0);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "/i0");
  CHECK_EQ_INT(tmp_count(dir), 0);
  s.i0_shape = DBTR_I0_SCALAR;
  dbtr_scan_free(&s);
  tmp_remove(dir);
}

/* ---- the h5py example of docs/scan-format.md ---- */

/* A python3 that imports h5py and numpy: $DBTR_PYTHON, python3 on PATH, or the system's. */
static const char *find_python(void) {
  static char cmd[512];
  const char *candidates[] = {getenv("DBTR_PYTHON"), "python3", "/usr/bin/python3"};
  for (size_t i = 0; i < 3; i++) {
    if (!candidates[i] || !*candidates[i]) continue;
    snprintf(cmd, sizeof cmd, "%s -c 'import h5py, numpy' >/dev/null 2>&1", candidates[i]);
    if (system(cmd) == 0) return candidates[i];
  }
  return NULL;
}

/* The ```python block of the docs, NUL-terminated; NULL if absent. */
static char *docs_example(void) {
  FILE *fp = fopen(DBTR_SOURCE_DIR "/docs/scan-format.md", "rb");
  if (!fp) return NULL;
  static char text[1 << 16];
  size_t n = fread(text, 1, sizeof text - 1, fp);
  fclose(fp);
  text[n] = '\0';
  char *start = strstr(text, "```python\n"), *end = start ? strstr(start + 10, "\n```") : NULL;
  if (!end) return NULL;
  end[1] = '\0';
  return start + 10;
}

DBTR_TEST(docs_example) {
  const char *py = find_python();
  if (!py) TEST_SKIP("no python3 with h5py and numpy");
  char dir[64], script[256], path[256], cmd[1024];
  const char *code = docs_example();
  REQUIRE(code);
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(script, dir, "example.py");
  tmp_path(path, dir, "scan.h5");
  REQUIRE(write_bytes(script, code, strlen(code)) == 0);
  snprintf(cmd, sizeof cmd, "cd '%s' && %s example.py", dir, py);
  CHECK_EQ_INT(system(cmd), 0);
  dbtr_scan s;
  REQUIRE_OK(dbtr_scan_read(&s, path));
  /* What the example says it writes: 2 views of 4 x 6 float32 counts of 900, scalar i0 of
   * 1000, sources at z = 660 mm, a 6 x 4 x 3 grid. */
  CHECK_EQ_U64(s.geom.n_views, 2);
  CHECK_EQ_U64(s.geom.n_rows, 4);
  CHECK_EQ_U64(s.geom.n_cols, 6);
  CHECK_EQ_INT(s.quantity, DBTR_QUANTITY_COUNTS);
  CHECK_EQ_INT(s.stored_dtype, DBTR_DTYPE_FLOAT32);
  CHECK_EQ_INT(s.i0_shape, DBTR_I0_SCALAR);
  CHECK(dbtr_scan_i0(&s, 1, 23) == 1000.0);
  for (size_t i = 0; i < 2 * 4 * 6; i++) CHECK(s.proj[i] == 900.0);
  CHECK(s.geom.source[2] == 660.0 && s.geom.source[5] == 660.0);
  CHECK_EQ_INT(s.has_grid, 1);
  CHECK_EQ_U64(s.grid.nx, 6);
  CHECK_EQ_U64(s.grid.ny, 4);
  CHECK_EQ_U64(s.grid.nz, 3);
  dbtr_scan_free(&s);
  tmp_remove(dir);
}

DBTR_TEST_MAIN(write_out_of_space_keeps_previous, roundtrip_float64, roundtrip_float32, roundtrip_uint16,
               roundtrip_uint32, roundtrip_i0_shapes, roundtrip_gzip_chunked, write_is_reproducible,
               read_big_endian_vlen_strings, read_volume_dataset, accept_counts_above_i0, refuse_missing_file,
               refuse_not_hdf5, refuse_truncated, refuse_format_attrs, refuse_missing_dataset, refuse_wrong_rank,
               refuse_shape_disagreement, refuse_overflow, refuse_nonfinite_geometry, refuse_nonfinite_projections,
               refuse_negative_counts, refuse_bad_i0, refuse_unsupported_dtype, refuse_quantity, refuse_volume_attrs,
               refuse_steep_geometry, write_missing_folder, write_failure_leaves_nothing, write_refuses_bad_input,
               docs_example)
