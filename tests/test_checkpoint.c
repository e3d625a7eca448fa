/* tests/test_checkpoint.c: checkpoints (io/checkpoint.c) refuse what would resume into a
 * plausible wrong result: damaged bytes, non-finite voxels, and another scan, grid,
 * schedule or arithmetic. Strings from the file reach the terminal sanitised. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "io/checkpoint.h"
#include "recon/error.h"
#include "tests/problems.h"
#include "tests/test.h"
#include "tests/tmpdir.h"

enum { NX = 4, NY = 3, NZ = 2, NV = NX * NY * NZ };

static dbtr_checkpoint_info small_info(void) {
  dbtr_checkpoint_info ci = {.nx = NX, .ny = NY, .nz = NZ, .n_views = 9, .n_subsets = 3, .precision = DBTR_PREC_FLOAT,
                             .iterations = 2, .scan_crc = 12345u, .voxel = {1, 1, 2}, .origin = {-1.5, 0.5, 1}};
  snprintf(ci.arithmetic, sizeof ci.arithmetic, "reference float");
  snprintf(ci.backend, sizeof ci.backend, "cpu-float");
  return ci;
}

static void small_volume(float v[NV]) {
  for (int i = 0; i < NV; i++) v[i] = 0.01f * (float)(i + 1);
}

/* A fresh folder (dir) and the checkpoint of in and v written there (path); 0 on success. */
static int write_small(char dir[64], char path[256], const dbtr_checkpoint_info *in, const float v[NV]) {
  if (tmp_make(dir) != 0) return -1;
  tmp_path(path, dir, "c.ckpt");
  return dbtr_checkpoint_write(path, in, v);
}

DBTR_TEST(round_trip) {
  char dir[64], p[256];
  dbtr_checkpoint_info in = small_info(), out;
  float v[NV];
  small_volume(v);
  REQUIRE_OK(write_small(dir, p, &in, v));
  void *back = NULL;
  REQUIRE_OK(dbtr_checkpoint_read(p, &out, &back));
  CHECK(memcmp(back, v, sizeof v) == 0);
  CHECK_OK(dbtr_checkpoint_match(p, &out, &in));
  CHECK_EQ_U64(out.iterations, 2);
  free(back);
  tmp_remove(dir);
}

/* Flips one bit of the file at byte offset at, and expects the read to fail naming why. */
static void flipped(long at, int bit, const char *why) {
  char dir[64], p[256];
  dbtr_checkpoint_info in = small_info(), out;
  float v[NV];
  small_volume(v);
  REQUIRE_OK(write_small(dir, p, &in, v));
  FILE *f = fopen(p, "r+b");
  REQUIRE(f);
  REQUIRE(fseek(f, at, SEEK_END) == 0);
  int c = fgetc(f);
  REQUIRE(c != EOF && fseek(f, at, SEEK_END) == 0);
  fputc(c ^ (1 << bit), f);
  fclose(f);
  void *back = NULL;
  int rc = dbtr_checkpoint_read(p, &out, &back);
  CHECK_EQ_INT(rc, DBTR_EFORMAT);
  CHECK_STR_CONTAINS(dbtr_errmsg(), p);
  CHECK_STR_CONTAINS(dbtr_errmsg(), why);
  CHECK(back == NULL);
  tmp_remove(dir);
}

/* The last voxel's bytes sit just before the 8-byte CRC: offsets from the end -9 (its
 * high byte: sign bit 7, exponent bits 0-6) and -10. */
DBTR_TEST(sign_flip_refused) { flipped(-9, 7, "CRC-32"); }
DBTR_TEST(exponent_flip_refused) { flipped(-9, 6, "CRC-32"); }
DBTR_TEST(mantissa_flip_refused) { flipped(-10, 0, "CRC-32"); }
DBTR_TEST(checksum_flip_refused) { flipped(-1, 3, "CRC-32"); }

/* A volume ML-EM cannot produce, written with a valid checksum (the writer does not judge
 * values): NaN, infinity, a negative voxel. */
static void bad_value(float bad) {
  char dir[64], p[256];
  dbtr_checkpoint_info in = small_info(), out;
  float v[NV];
  small_volume(v);
  v[5] = bad;
  REQUIRE_OK(write_small(dir, p, &in, v));
  void *back = NULL;
  CHECK_EQ_INT(dbtr_checkpoint_read(p, &out, &back), DBTR_EFORMAT);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "voxel 5");
  CHECK_STR_CONTAINS(dbtr_errmsg(), "finite and non-negative");
  tmp_remove(dir);
}

/* A double-double checkpoint (two doubles a voxel) comes back as written; a voxel whose high
 * part is negative, or whose low part is not finite, is refused. */
static int dd_round_trip(double hi5, double lo5) {
  char dir[64], p[256];
  dbtr_checkpoint_info in = small_info(), out;
  in.precision = DBTR_PREC_DD;
  double v[2 * NV];
  for (int i = 0; i < NV; i++) v[2 * i] = 0.01 * (double)(i + 1), v[2 * i + 1] = 0x1p-60 * (double)(i % 3 - 1);
  v[10] = hi5, v[11] = lo5;
  if (tmp_make(dir) != 0) return -1;
  tmp_path(p, dir, "c.ckpt");
  int rc = dbtr_checkpoint_write(p, &in, v);
  void *back = NULL;
  if (!rc) rc = dbtr_checkpoint_read(p, &out, &back);
  if (!rc) {
    CHECK(memcmp(back, v, sizeof v) == 0);
    CHECK_EQ_U64(out.precision, DBTR_PREC_DD);
  }
  free(back);
  tmp_remove(dir);
  return rc;
}

DBTR_TEST(dd_round_trip_and_bad_values) {
  CHECK_OK(dd_round_trip(0.25, 0x1p-58));
  CHECK_EQ_INT(dd_round_trip(-0.25, 0.0), DBTR_EFORMAT);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "voxel 5");
  CHECK_EQ_INT(dd_round_trip(0.25, NAN), DBTR_EFORMAT);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "voxel 5 holds 0.25 + nan");
  CHECK_EQ_INT(dd_round_trip(0.25, INFINITY), DBTR_EFORMAT);
}

DBTR_TEST(nan_voxel_refused) { bad_value(NAN); }
DBTR_TEST(inf_voxel_refused) { bad_value(INFINITY); }
DBTR_TEST(negative_voxel_refused) { bad_value(-0.25f); }

/* A header that claims a huge volume is refused by the file's size, before any allocation. */
DBTR_TEST(truncated_and_oversized_refused) {
  char dir[64], p[256];
  dbtr_checkpoint_info in = small_info(), out;
  float v[NV];
  small_volume(v);
  REQUIRE_OK(write_small(dir, p, &in, v));
  /* nx (bytes 16..23, little-endian) rewritten to 4 + 2^20: the header now describes a
   * volume of 12 MiB where 96 bytes follow. */
  FILE *f = fopen(p, "r+b");
  REQUIRE(f && fseek(f, 16 + 2, SEEK_SET) == 0);
  fputc(0x10, f); /* byte 2 of nx: 0x10 << 16 = 2^20 */
  fclose(f);
  void *back = NULL;
  CHECK_EQ_INT(dbtr_checkpoint_read(p, &out, &back), DBTR_EFORMAT);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "truncated or damaged");
  tmp_remove(dir);
}

/* Issue 23, poor messages: a checkpoint cut inside its header (here after 40 bytes: its
 * magic, version and a few fields) was "not a dbtr checkpoint"; its magic says it is one,
 * truncated. */
DBTR_TEST(truncated_header_named_truncated) {
  char dir[64], p[256];
  dbtr_checkpoint_info in = small_info(), out;
  float v[NV];
  small_volume(v);
  REQUIRE_OK(write_small(dir, p, &in, v));
  REQUIRE(truncate(p, 40) == 0);
  void *back = NULL;
  CHECK_EQ_INT(dbtr_checkpoint_read(p, &out, &back), DBTR_EFORMAT);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "truncated checkpoint: 40 bytes");
  CHECK(back == NULL);
  tmp_remove(dir);
}

/* Control bytes in the file's strings (a terminal escape, a newline) come back as '?'. */
DBTR_TEST(control_bytes_sanitised) {
  char dir[64], p[256];
  dbtr_checkpoint_info in = small_info(), out;
  snprintf(in.backend, sizeof in.backend, "cpu\x1b[2J\nfloat");
  float v[NV];
  small_volume(v);
  REQUIRE_OK(write_small(dir, p, &in, v));
  void *back = NULL;
  REQUIRE_OK(dbtr_checkpoint_read(p, &out, &back));
  CHECK(strcmp(out.backend, "cpu?[2J?float") == 0);
  free(back);
  tmp_remove(dir);
}

/* Each identity field alone makes the match fail with a message naming it. */
DBTR_TEST(identity_mismatches_named) {
  dbtr_checkpoint_info h = small_info(), w;
  w = h, w.voxel[2] = 2.5;
  CHECK_EQ_INT(dbtr_checkpoint_match("c", &h, &w), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "--voxel");
  w = h, w.origin[0] = -1.0;
  CHECK_EQ_INT(dbtr_checkpoint_match("c", &h, &w), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "--origin");
  w = h, w.scan_crc ^= 1;
  CHECK_EQ_INT(dbtr_checkpoint_match("c", &h, &w), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "another scan");
  w = h, w.n_subsets = 2;
  CHECK_EQ_INT(dbtr_checkpoint_match("c", &h, &w), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "subsets");
  w = h, snprintf(w.arithmetic, sizeof w.arithmetic, "gpu:fast");
  CHECK_EQ_INT(dbtr_checkpoint_match("c", &h, &w), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "bitwise");
  w = h, w.nz = 3;
  CHECK_EQ_INT(dbtr_checkpoint_match("c", &h, &w), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "4 x 3 x 2");
}

/* The scan's fingerprint changes with one projection value, the i0 or one geometry
 * coordinate, and not with anything else. */
DBTR_TEST(scan_fingerprint) {
  dbtr_scan s;
  memset(&s, 0, sizeof s);
  dbtr_grid grid;
  REQUIRE_OK(test_small_problem("tiny", &s.geom, &grid));
  size_t n = s.geom.n_views * s.geom.n_rows * s.geom.n_cols;
  double i0 = 1000.0;
  s.proj = calloc(n, sizeof *s.proj);
  REQUIRE(s.proj);
  s.quantity = DBTR_QUANTITY_COUNTS, s.i0_shape = DBTR_I0_SCALAR, s.i0 = &i0;
  uint64_t base = dbtr_checkpoint_scan_crc(&s);
  CHECK_EQ_U64(dbtr_checkpoint_scan_crc(&s), base); /* a function of the data alone */
  s.proj[n / 2] = 1.0;
  CHECK(dbtr_checkpoint_scan_crc(&s) != base);
  s.proj[n / 2] = 0.0;
  i0 = 1001.0;
  CHECK(dbtr_checkpoint_scan_crc(&s) != base);
  i0 = 1000.0;
  s.geom.source[3 * 4 + 2] += 1e-9; /* view 4's source, z: a different geometry */
  CHECK(dbtr_checkpoint_scan_crc(&s) != base);
  free(s.proj);
  dbtr_geom_free(&s.geom);
}

/* The CPU reference and the match modes continue each other bitwise; other modes do not. */
DBTR_TEST(arithmetic_identity) {
  dbtr_scan s;
  memset(&s, 0, sizeof s);
  dbtr_grid grid;
  REQUIRE_OK(test_small_problem("tiny", &s.geom, &grid));
  double i0 = 1000.0;
  size_t n = s.geom.n_views * s.geom.n_rows * s.geom.n_cols;
  s.proj = calloc(n, sizeof *s.proj);
  REQUIRE(s.proj);
  s.quantity = DBTR_QUANTITY_COUNTS, s.i0_shape = DBTR_I0_SCALAR, s.i0 = &i0;
  /* Each backend carries its row of the mode table, whose bitwise class decides. */
  dbtr_backend cpu = {.name = "cpu-float", .mode = DBTR_CPU_FLOAT, .precision = DBTR_PREC_FLOAT};
  dbtr_backend match = {.name = "gpu:cpu-match", .mode = DBTR_MODE_CPU_MATCH, .precision = DBTR_PREC_FLOAT};
  dbtr_backend fast = {.name = "gpu:fast", .mode = DBTR_MODE_FAST, .precision = DBTR_PREC_FLOAT};
  dbtr_backend cpu_dd = {.name = "cpu-dd", .mode = DBTR_CPU_DD, .precision = DBTR_PREC_DD};
  dbtr_backend gpu_dd = {.name = "gpu:dd", .mode = DBTR_MODE_DD, .precision = DBTR_PREC_DD};
  dbtr_backend dbl = {.name = "gpu:double", .mode = DBTR_MODE_DOUBLE, .precision = DBTR_PREC_DOUBLE};
  dbtr_backend one = {.name = "cpu-float", .mode = DBTR_CPU_1_THREAD, .precision = DBTR_PREC_FLOAT};
  dbtr_checkpoint_info a, b, c, d, e, f, g;
  dbtr_checkpoint_identify(&a, &s, &grid, 1, DBTR_ALGO_TRANSMISSION, &cpu);
  dbtr_checkpoint_identify(&b, &s, &grid, 1, DBTR_ALGO_TRANSMISSION, &match);
  dbtr_checkpoint_identify(&c, &s, &grid, 1, DBTR_ALGO_TRANSMISSION, &fast);
  dbtr_checkpoint_identify(&d, &s, &grid, 1, DBTR_ALGO_TRANSMISSION, &cpu_dd);
  dbtr_checkpoint_identify(&e, &s, &grid, 1, DBTR_ALGO_TRANSMISSION, &gpu_dd);
  dbtr_checkpoint_identify(&f, &s, &grid, 1, DBTR_ALGO_TRANSMISSION, &dbl);
  dbtr_checkpoint_identify(&g, &s, &grid, 1, DBTR_ALGO_TRANSMISSION, &one);
  CHECK_OK(dbtr_checkpoint_match("c", &a, &b));
  CHECK_OK(dbtr_checkpoint_match("c", &g, &b)); /* one thread's bits are many threads' */
  CHECK(strcmp(a.arithmetic, "reference float") == 0); /* as checkpoints have always recorded it */
  CHECK_EQ_INT(dbtr_checkpoint_match("c", &a, &c), DBTR_EINVAL);
  /* The referee: its CPU and GPU continue each other (test_gpu.dd_match), double does not. */
  CHECK_OK(dbtr_checkpoint_match("c", &d, &e));
  CHECK_EQ_INT(dbtr_checkpoint_match("c", &d, &f), DBTR_EINVAL);
  free(s.proj);
  dbtr_geom_free(&s.geom);
}

DBTR_TEST_MAIN(round_trip, sign_flip_refused, exponent_flip_refused, mantissa_flip_refused, checksum_flip_refused,
               nan_voxel_refused, inf_voxel_refused, negative_voxel_refused, truncated_and_oversized_refused,
               control_bytes_sanitised, identity_mismatches_named, scan_fingerprint, arithmetic_identity,
               dd_round_trip_and_bad_values, truncated_header_named_truncated)
