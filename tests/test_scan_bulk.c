/* tests/test_scan_bulk.c: the scan's large datasets read with pread(2) in parallel blocks
 * (io/scan_bulk.c), against H5Dread, which reads every other layout.
 *
 * The scan here has 3 views of 250 x 700 pixels: 525000 values, four blocks of 2^17 and a
 * short fifth, so that blocks meet inside a view and the last one is partial. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "io/scan.h"
#include "recon/error.h"
#include "tests/scan_fixtures.h"
#include "tests/test.h"

enum { BV = 3, BR = 250, BC = 700, BN = BV * BR * BC };

/* A counts scan of BV x BR x BC with scalar i0 and no grid: values from 1000 up, in
 * thirds, so that no two neighbours are equal and float32 must round them. The rays to
 * the far corners are 31 deg from z (390 mm across, 660 mm down), inside the 45 allowed. */
static int make_big(dbtr_scan *s) {
  memset(s, 0, sizeof *s);
  int rc = make_geometry(&s->geom, BV, BR, BC);
  if (rc) return rc;
  s->quantity = DBTR_QUANTITY_COUNTS;
  s->proj = malloc(BN * sizeof(double));
  s->i0 = malloc(sizeof(double));
  if (!s->proj || !s->i0) return DBTR_ENOMEM;
  /* Below 65535 after rounding, so every integer type holds them. */
  for (size_t i = 0; i < BN; i++) s->proj[i] = 1000.0 + (double)(i % 150000) / 3.0;
  s->i0_shape = DBTR_I0_SCALAR;
  s->i0[0] = 60000.0;
  return 0;
}

/* What the writer stores for v in dtype, read back as a double. */
static double stored(double v, dbtr_dtype dtype) {
  switch (dtype) {
  case DBTR_DTYPE_FLOAT32: return (double)(float)v;
  case DBTR_DTYPE_UINT16:
  case DBTR_DTYPE_UINT32: return round(v); /* positive: the writer's half away from zero */
  case DBTR_DTYPE_FLOAT64: break;
  }
  return v;
}

static int write_big(const char *path, dbtr_dtype dtype) {
  dbtr_scan s;
  dbtr_scan_write_opts o = {dtype, 0}; /* no gzip: contiguous, the bulk reader's case */
  int rc = make_big(&s);
  if (!rc) rc = dbtr_scan_write(&s, path, &o);
  dbtr_scan_free(&s);
  return rc;
}

/* Each stored type, read in blocks, gives every value the writer stored. */
DBTR_TEST(read_every_dtype) {
  char dir[64], path[256];
  const dbtr_dtype types[4] = {DBTR_DTYPE_FLOAT32, DBTR_DTYPE_FLOAT64, DBTR_DTYPE_UINT16, DBTR_DTYPE_UINT32};
  dbtr_scan want;
  REQUIRE(tmp_make(dir) == 0);
  REQUIRE_OK(make_big(&want));
  for (int t = 0; t < 4; t++) {
    dbtr_scan s;
    tmp_path(path, dir, "big.h5");
    REQUIRE_OK(write_big(path, types[t]));
    REQUIRE_OK(dbtr_scan_read(&s, path));
    CHECK_EQ_INT(s.stored_dtype, types[t]);
    size_t bad = 0;
    for (size_t i = 0; i < BN; i++) bad += s.proj[i] != stored(want.proj[i], types[t]);
    CHECK_EQ_U64(bad, 0);
    CHECK(s.i0[0] == 60000.0);
    CHECK(s.geom.source[2] == 660.0 && s.geom.detector_u[6] == 1.0);
    dbtr_scan_free(&s);
    remove(path);
  }
  dbtr_scan_free(&want);
  tmp_remove(dir);
}

/* The same values stored big-endian (read by H5Dread) and little-endian (read in blocks)
 * read the same. */
DBTR_TEST(same_as_h5dread) {
  char dir[64], le[256], be[256];
  dbtr_scan a, b, want;
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(le, dir, "le.h5");
  tmp_path(be, dir, "be.h5");
  REQUIRE_OK(make_big(&want));
  REQUIRE_OK(write_big(le, DBTR_DTYPE_FLOAT32));
  REQUIRE_OK(write_big(be, DBTR_DTYPE_FLOAT32));
  hsize_t dims[3] = {BV, BR, BC};
  REQUIRE(put_dataset(be, "/projections", H5T_IEEE_F32BE, 3, dims, H5P_DEFAULT, want.proj) == 0);
  REQUIRE(set_str_attr(be, "/projections", "quantity", "counts", 0) == 0);
  REQUIRE_OK(dbtr_scan_read(&a, le));
  REQUIRE_OK(dbtr_scan_read(&b, be));
  CHECK(memcmp(a.proj, b.proj, BN * sizeof(double)) == 0);
  dbtr_scan_free(&a);
  dbtr_scan_free(&b);
  dbtr_scan_free(&want);
  tmp_remove(dir);
}

/* Of several bad values in different blocks, the message names the first in C order, as a
 * serial scan would, whichever thread finds which first. */
DBTR_TEST(first_bad_value_named) {
  char dir[64], path[256];
  dbtr_scan s;
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "bad.h5");
  REQUIRE_OK(write_big(path, DBTR_DTYPE_FLOAT32));
  /* Index 200000 is view 1 (175000 values a view), row 35 (700 a row), column 500; the
   * others lie in later blocks, one of them in the last, short block. */
  REQUIRE(poke(path, "/projections", 450000, DNAN) == 0);
  REQUIRE(poke(path, "/projections", 524999, -1.0) == 0);
  REQUIRE(poke(path, "/projections", 200000, -2.0) == 0);
  dbtr_err_clear();
  CHECK(dbtr_scan_read(&s, path) == DBTR_EFORMAT);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "/projections: value -2 at (1, 35, 500) is negative");
  CHECK(is_zeroed(&s));
  tmp_remove(dir);
}

/* A file that starts with a user block (h5jam, or tools that put a header first): its data
 * offsets count from the start of the file, user block included. */
DBTR_TEST(read_after_user_block) {
  char dir[64], src[256], dst[256];
  dbtr_scan s, want;
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(src, dir, "plain.h5");
  tmp_path(dst, dir, "ub.h5");
  REQUIRE_OK(write_big(src, DBTR_DTYPE_FLOAT32));
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  herr_t st = H5Pset_userblock(fcpl, 4096); /* a power of two of at least 512, as HDF5 asks */
  hid_t in = H5Fopen(src, H5F_ACC_RDONLY, H5P_DEFAULT), out = H5Fcreate(dst, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
  const char *objs[3] = {"/projections", "/i0", "/geometry"};
  for (int i = 0; i < 3 && st >= 0; i++) st = H5Ocopy(in, objs[i], out, objs[i], H5P_DEFAULT, H5P_DEFAULT);
  H5Fclose(in);
  H5Fclose(out);
  H5Pclose(fcpl);
  REQUIRE(st >= 0);
  REQUIRE(set_str_attr(dst, "/", "format", "dbtr-scan", 0) == 0);
  REQUIRE(set_i64_attr(dst, "/", "format_version", 1) == 0);
  REQUIRE_OK(make_big(&want));
  REQUIRE_OK(dbtr_scan_read(&s, dst));
  size_t bad = 0;
  for (size_t i = 0; i < BN; i++) bad += s.proj[i] != stored(want.proj[i], DBTR_DTYPE_FLOAT32);
  CHECK_EQ_U64(bad, 0);
  dbtr_scan_free(&s);
  dbtr_scan_free(&want);
  tmp_remove(dir);
}

DBTR_TEST_MAIN(read_every_dtype, same_as_h5dread, first_bad_value_named, read_after_user_block)
