/* tests/test_scan_write.c: the HDF5 scan writer (io/scan_write.c, docs/scan-format.md
 * "What the writer produces").
 *
 * Round trips through the reader of every stored dtype (with the rounding and saturation
 * of the integer ones) and every i0 shape, the gzip layout, byte-for-byte reproducible
 * files, and the writer's failures: a missing folder, a failing write, a full disk, and
 * bad input, none of which may leave a partial file or a temporary behind. */
#include <hdf5.h>
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

DBTR_TEST_MAIN(roundtrip_float64, roundtrip_float32, roundtrip_uint16, roundtrip_uint32, roundtrip_i0_shapes,
               roundtrip_gzip_chunked, write_is_reproducible, write_missing_folder, write_failure_leaves_nothing,
               write_out_of_space_keeps_previous, write_refuses_bad_input)
