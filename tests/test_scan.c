/* tests/test_scan.c: the HDF5 scan reader (io/scan.c, docs/scan-format.md).
 *
 * Files written by other tools (big-endian, variable-length strings, the h5py example of
 * the docs), and every refusal of the reader: each must return an error whose message
 * names the file and the dataset or attribute at fault, and leave the struct zeroed. Bad
 * files are made by writing a valid scan and then breaking one thing in it with the HDF5
 * API. The writer's tests, round trips included, are in tests/test_scan_write.c. */
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

/* Issue 23, item 3. A /volume voxel size of 1e-300 mm (or 1e300) passes every test of
 * "positive and finite", but the geometry, 660 mm high, would then span 6.6e302 voxels and
 * the reconstruction was all NaN. Refused, naming the file, the axis and the sizes allowed;
 * 0.5 x 0.5 x 1 mm, an ordinary grid, is read. */
DBTR_TEST(refuse_voxel_beyond_index_range) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.h5");
  static const double tiny_z[3] = {1, 1, 1e-300}, huge_x[3] = {1e300, 1, 2}, fine[3] = {0.5, 0.5, 1};
  REQUIRE_OK(write_valid(path));
  REQUIRE(set_vec_attr(path, "/volume", "voxel_size", H5T_IEEE_F64LE, 3, tiny_z) == 0);
  EXPECT_REFUSED(path, "along z; dbtr computes positions in voxels up to 2^22");
  CHECK_EQ_INT(dbtr_exit_code(DBTR_EGEOM), 2);
  REQUIRE(set_vec_attr(path, "/volume", "voxel_size", H5T_IEEE_F64LE, 3, huge_x) == 0);
  EXPECT_REFUSED(path, "along x");
  REQUIRE(set_vec_attr(path, "/volume", "voxel_size", H5T_IEEE_F64LE, 3, fine) == 0);
  dbtr_scan s;
  CHECK_OK(dbtr_scan_read(&s, path));
  dbtr_scan_free(&s);
  tmp_remove(dir);
}

/* Issue 23, item 7, for every command that reads a scan (info, recon, project --geometry):
 * the projections and i0 in double are checked against the memory available before the
 * first is allocated. The test scan holds 60 projections and one i0, 488 bytes in double;
 * a limit of 400 bytes refuses it (exit 4), naming the file; 1000 bytes read it. */
DBTR_TEST(refuse_arrays_beyond_memory) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "scan.h5");
  REQUIRE_OK(write_valid(path));
  REQUIRE(setenv("DBTR_MEMORY_LIMIT", "400", 1) == 0);
  EXPECT_REFUSED(path, "/projections and /i0 (60 and 1 values in double) needs");
  CHECK_EQ_INT(dbtr_exit_code(DBTR_ENOMEM), 4);
  REQUIRE(setenv("DBTR_MEMORY_LIMIT", "1000", 1) == 0);
  dbtr_scan s;
  CHECK_OK(dbtr_scan_read(&s, path));
  dbtr_scan_free(&s);
  unsetenv("DBTR_MEMORY_LIMIT");
  tmp_remove(dir);
}

/* Issue 23, poor messages: the grid's heights were printed with %.2f, so 1e300 took 300
 * digits and a bottom 1 nm below the detector read "z = -0.00 mm lies below z = 0.00 mm". */
DBTR_TEST(grid_heights_printed_readably) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.h5");
  /* dz 2 mm, so the bottom is origin z - 1 mm: 1 nm below the detector at z = 0. */
  static const double nm_below[3] = {-2.0, -1.5, 1.0 - 1e-6}, far_below[3] = {-2.0, -1.5, -1e300};
  REQUIRE_OK(write_valid(path));
  REQUIRE(set_vec_attr(path, "/volume", "origin", H5T_IEEE_F64LE, 3, nm_below) == 0);
  EXPECT_REFUSED(path, "the volume bottom (z = -1e-06 mm) lies below the detector of view 0 (z = 0 mm)");
  REQUIRE(set_vec_attr(path, "/volume", "origin", H5T_IEEE_F64LE, 3, far_below) == 0);
  EXPECT_REFUSED(path, "the volume bottom (z = -1e+300 mm)");
  CHECK_LT(strlen(dbtr_errmsg()), 300); /* the whole line, path included */
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

/* Replaces link name in the scan at path with an HDF5 external link to obj in file. */
static int make_elink(const char *path, const char *name, const char *file, const char *obj) {
  hid_t f = open_rw(path);
  herr_t st = f >= 0 ? H5Ldelete(f, name, H5P_DEFAULT) : -1;
  if (st >= 0) st = H5Lcreate_external(file, obj, f, name, H5P_DEFAULT, H5P_DEFAULT);
  if (f >= 0 && H5Fclose(f) < 0) st = -1;
  return st < 0 ? -1 : 0;
}

/* Issue 23, item 1. /projections as an external link into another valid scan: the data is
 * not in the scan file, and reading it as if it were (pread at the other file's offset on
 * the scan's descriptor) gave values up to 4.8e30. It is refused as external storage is,
 * naming the link's target; so is a group (/geometry) reached through such a link. */
DBTR_TEST(refuse_external_link) {
  char dir[64], path[256], other[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "scan.h5");
  tmp_path(other, dir, "data.h5");
  REQUIRE_OK(write_valid(other));
  REQUIRE_OK(write_valid(path));
  REQUIRE(make_elink(path, "/projections", other, "/projections") == 0);
  EXPECT_REFUSED(path, "/projections: reached through an HDF5 external link to");
  CHECK_STR_CONTAINS(dbtr_errmsg(), "data.h5:/projections");
  REQUIRE_OK(write_valid(path));
  REQUIRE(make_elink(path, "/geometry", other, "/geometry") == 0);
  EXPECT_REFUSED(path, "/geometry/source: reached through an HDF5 external link to");
  tmp_remove(dir);
}

/* The same link to a FIFO: opening it would block until a writer comes, for ever. The link
 * is refused before libhdf5 opens its target. */
DBTR_TEST(refuse_external_link_to_fifo) {
  char dir[64], path[256], fifo[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "scan.h5");
  tmp_path(fifo, dir, "fifo");
  REQUIRE(mkfifo(fifo, 0600) == 0);
  REQUIRE_OK(write_valid(path));
  REQUIRE(make_elink(path, "/projections", fifo, "/projections") == 0);
  alarm(30); /* a read that blocks ends the case with SIGALRM instead of at CTest's limit */
  EXPECT_REFUSED(path, "external link");
  alarm(0);
  tmp_remove(dir);
}

DBTR_TEST_MAIN(read_big_endian_vlen_strings, read_volume_dataset, accept_counts_above_i0, refuse_missing_file,
               refuse_not_hdf5, refuse_truncated, refuse_format_attrs, refuse_missing_dataset, refuse_wrong_rank,
               refuse_shape_disagreement, refuse_overflow, refuse_nonfinite_geometry, refuse_nonfinite_projections,
               refuse_negative_counts, refuse_bad_i0, refuse_unsupported_dtype, refuse_quantity, refuse_volume_attrs,
               refuse_steep_geometry, docs_example, refuse_external_link, refuse_external_link_to_fifo,
               refuse_voxel_beyond_index_range, refuse_arrays_beyond_memory, grid_heights_printed_readably)
