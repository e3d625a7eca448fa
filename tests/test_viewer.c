/* tests/test_viewer.c: the slice viewer (viewer/, docs/viewer.md).
 *
 * Cases without a prefix test the pure logic and need no display (label cpu). Cases named
 * gl_* render with OpenGL: tests/viewer.cmake runs them under `xvfb-run -a` with Mesa's
 * software OpenGL (label viewer); they skip (77) where no OpenGL 3.3 context can be made.
 * Screenshots are read back with libpng and checked pixel by pixel. The file is longer
 * than most because the house keeps one test source per module. */
#include <errno.h>
#include <math.h>
#include <png.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "io/tiff.h"
#include "recon/compare.h"
#include "recon/error.h"
#include "tests/test.h"
#include "viewer/viewer.h"

/* ---- Helpers ------------------------------------------------------------------------ */

static dbtr_grid grid_of(size_t nx, size_t ny, size_t nz, double dx, double dy) {
  dbtr_grid g;
  memset(&g, 0, sizeof g);
  g.nx = nx;
  g.ny = ny;
  g.nz = nz;
  g.dx = dx;
  g.dy = dy;
  g.dz = 1.0;
  return g;
}

/* The test ramp: voxel (x, y) of slice k is 0.6 (x + 16 y) - 10 + 50 (k - 1), so slice 1
 * of a 16 x 12 slice spans -10 .. 104.6: past both ends of a 0 .. 100 window, and slices
 * 0 and 2 sit 50 below and above it (127 grey levels away, never confused with slice 1). */
static float ramp(size_t x, size_t y, size_t k) {
  return (float)(0.6 * (double)(x + 16 * y) - 10.0 + 50.0 * ((double)k - 1.0));
}

static float *ramp_volume(size_t nx, size_t ny, size_t nz) {
  float *v = malloc(nx * ny * nz * sizeof *v);
  if (!v) return NULL;
  for (size_t k = 0; k < nz; k++)
    for (size_t y = 0; y < ny; y++)
      for (size_t x = 0; x < nx; x++) v[(k * ny + y) * nx + x] = ramp(x, y, k);
  return v;
}

static float *copy_volume(const float *a, size_t n) {
  float *b = malloc(n * sizeof *b);
  if (b) memcpy(b, a, n * sizeof *b);
  return b;
}

/* Reads a PNG as 8-bit RGB, top row first; NULL if it cannot. */
static unsigned char *read_png(const char *path, int *w, int *h) {
  png_image img;
  memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&img, path)) return NULL;
  img.format = PNG_FORMAT_RGB;
  unsigned char *buf = malloc(PNG_IMAGE_SIZE(img));
  if (!buf || !png_image_finish_read(&img, NULL, buf, 0, NULL)) {
    free(buf);
    png_image_free(&img);
    return NULL;
  }
  *w = (int)img.width;
  *h = (int)img.height;
  return buf;
}

static void need_display(void) {
  if (!dbtr_view_display_available()) TEST_SKIP("no display with OpenGL 3.3 core here (run under xvfb-run)");
}

/* ---- Window/level and percentiles -------------------------------------------------- */

DBTR_TEST(wl_map) {
  /* Window 100 at level 50 spans 0 .. 100. */
  CHECK_NEAR(dbtr_view_wl_map(25.0, 100.0, 50.0), 0.25, 1e-15); /* 25/100 in double: within 1 ULP of 0.25 */
  CHECK_EQ_INT(dbtr_view_wl_map(-10.0, 100.0, 50.0) == 0.0, 1);  /* below the window: black */
  CHECK_EQ_INT(dbtr_view_wl_map(150.0, 100.0, 50.0) == 1.0, 1);  /* above: white */
  CHECK_EQ_INT(dbtr_view_wl_map(NAN, 100.0, 50.0) == 0.0, 1);    /* NaN: black, by definition */
  CHECK_EQ_INT(dbtr_view_wl_map(INFINITY, 100.0, 50.0) == 1.0, 1);
  CHECK_EQ_INT(dbtr_view_grey8(25.0, 100.0, 50.0), 64);  /* round(255 * 0.25) = round(63.75) */
  CHECK_EQ_INT(dbtr_view_grey8(0.0, 100.0, 50.0), 0);    /* the window's lower edge */
  CHECK_EQ_INT(dbtr_view_grey8(100.0, 100.0, 50.0), 255); /* the upper edge */
  CHECK_EQ_INT(dbtr_view_grey8(1.0, 2.0, 0.0), 255);       /* window 2 at level 0 spans -1 .. 1 */
  CHECK_EQ_INT(dbtr_view_grey8(-0.5, 2.0, 0.0), 64);       /* 0.25 of the way: round(63.75) */
}

DBTR_TEST(percentiles_exact) {
  /* 0 .. 999 in a shuffled order (7919 is prime to 1000, so i -> 7919 i mod 1000 is a
   * permutation), plus a NaN and an infinity that must be left out. */
  float v[1002];
  for (size_t i = 0; i < 1000; i++) v[i] = (float)((i * 7919) % 1000);
  v[1000] = NAN;
  v[1001] = INFINITY;
  double lo, hi;
  REQUIRE_OK(dbtr_view_percentiles(v, 1002, 4096, 0.01, 0.99, &lo, &hi));
  /* numpy.percentile(arange(1000), [1, 99]) = 9.99, 989.01: positions 0.01 * 999 and
   * 0.99 * 999 between order statistics 1 apart. The position is computed in double: the
   * error is a few ULPs of 1000, well under 1e-12. */
  CHECK_NEAR(lo, 9.99, 1e-12);
  CHECK_NEAR(hi, 989.01, 1e-12);
  float nan_only[3] = {NAN, NAN, NAN};
  CHECK_EQ_INT(dbtr_view_percentiles(nan_only, 3, 16, 0.01, 0.99, &lo, &hi), DBTR_EINVAL);
}

DBTR_TEST(percentiles_subsample) {
  /* A ramp v[i] = i / n over 4 M voxels, sampled at 2^16 points: the sampled quantiles
   * are those of j / m (j = 0 .. m-1) to within 1/n, so they miss the full volume's by at
   * most one sample spacing 1/m, plus float rounding of the values (2^-24). */
  size_t n = (size_t)1 << 22, m = (size_t)1 << 16;
  float *v = malloc(n * sizeof *v);
  REQUIRE(v != NULL);
  for (size_t i = 0; i < n; i++) v[i] = (float)((double)i / (double)n);
  double lo, hi, tol = 1.0 / (double)m + 1e-7;
  REQUIRE_OK(dbtr_view_percentiles(v, n, m, 0.01, 0.99, &lo, &hi));
  CHECK_NEAR(lo, 0.01, tol);
  CHECK_NEAR(hi, 0.99, tol);
  /* The samples reach the end of the volume (its last slices): the largest is within one
   * spacing of the largest value. */
  REQUIRE_OK(dbtr_view_percentiles(v, n, m, 0.0, 1.0, &lo, &hi));
  CHECK_EQ_INT(lo == 0.0, 1);
  CHECK_NEAR(hi, 1.0, tol);
  free(v);
}

DBTR_TEST(auto_window) {
  double w, l;
  dbtr_view_auto_window(10.0, 30.0, &w, &l);
  CHECK_NEAR(w, 20.0, 0.0); /* hi - lo, exact in double */
  CHECK_NEAR(l, 20.0, 0.0); /* (lo + hi) / 2, exact */
  dbtr_view_auto_window(5.0, 5.0, &w, &l);
  CHECK_NEAR(w, 5.0, 0.0); /* a constant volume: window |lo|, centred on it */
  CHECK_NEAR(l, 5.0, 0.0);
  dbtr_view_auto_window(0.0, 0.0, &w, &l);
  CHECK_NEAR(w, 1.0, 0.0); /* all zero: window 1 */
  CHECK_NEAR(l, 0.0, 0.0);
}

/* ---- Differences ------------------------------------------------------------------- */

DBTR_TEST(classify_ulp) {
  dbtr_view_threshold any = {DBTR_VIEW_THR_ULP, 0.0, 0}, one = {DBTR_VIEW_THR_ULP, 0.0, 1},
                      three = {DBTR_VIEW_THR_ULP, 0.0, 3}, four = {DBTR_VIEW_THR_ULP, 0.0, 4};
  float a = 1.0f, b1 = nextafterf(1.0f, 2.0f), b4 = b1;
  for (int i = 0; i < 3; i++) b4 = nextafterf(b4, 2.0f); /* 4 ULP above 1 */
  CHECK_EQ_INT(dbtr_view_classify(a, a, &any), DBTR_VIEW_SAME);
  CHECK_EQ_INT(dbtr_view_classify(a, b1, &any), DBTR_VIEW_A_LESS);    /* 1 ULP > 0 */
  CHECK_EQ_INT(dbtr_view_classify(b1, a, &any), DBTR_VIEW_A_GREATER); /* the sign follows A - B */
  CHECK_EQ_INT(dbtr_view_classify(a, b1, &one), DBTR_VIEW_SAME);      /* 1 ULP is not > 1 */
  CHECK_EQ_INT(dbtr_view_classify(a, b4, &three), DBTR_VIEW_A_LESS);  /* 4 > 3 */
  CHECK_EQ_INT(dbtr_view_classify(a, b4, &four), DBTR_VIEW_SAME);     /* 4 is not > 4 */
  CHECK_EQ_INT(dbtr_view_classify(0.0f, -0.0f, &any), DBTR_VIEW_SAME); /* +0 and -0 are equal, as in compare.h */
  CHECK_EQ_INT(dbtr_view_classify(NAN, 1.0f, &any), DBTR_VIEW_NAN);
  CHECK_EQ_INT(dbtr_view_classify(1.0f, NAN, &four), DBTR_VIEW_NAN);  /* NaN differs at any threshold */
  CHECK_EQ_INT(dbtr_view_classify(NAN, NAN, &any), DBTR_VIEW_SAME);
}

DBTR_TEST(classify_abs) {
  dbtr_view_threshold half = {DBTR_VIEW_THR_ABS, 0.5, 0}, zero = {DBTR_VIEW_THR_ABS, 0.0, 0};
  CHECK_EQ_INT(dbtr_view_classify(1.0f, 1.25f, &half), DBTR_VIEW_SAME);      /* |d| 0.25 <= 0.5 */
  CHECK_EQ_INT(dbtr_view_classify(1.0f, 1.5f, &half), DBTR_VIEW_SAME);       /* 0.5 is not > 0.5 */
  CHECK_EQ_INT(dbtr_view_classify(1.0f, 1.75f, &half), DBTR_VIEW_A_LESS);    /* 0.75 > 0.5, A < B */
  CHECK_EQ_INT(dbtr_view_classify(2.0f, 1.0f, &half), DBTR_VIEW_A_GREATER);  /* 1 > 0.5, A > B */
  CHECK_EQ_INT(dbtr_view_classify(1.0f, nextafterf(1.0f, 2.0f), &zero), DBTR_VIEW_A_LESS); /* 0: any bit */
  CHECK_EQ_INT(dbtr_view_classify(INFINITY, INFINITY, &half), DBTR_VIEW_SAME);
  CHECK_EQ_INT(dbtr_view_classify(INFINITY, -INFINITY, &half), DBTR_VIEW_A_GREATER);
  char s[64];
  dbtr_view_threshold_str(&half, s, sizeof s);
  CHECK_STR_CONTAINS(s, "|A-B| > 0.5");
  dbtr_view_threshold_str(&zero, s, sizeof s);
  CHECK_STR_CONTAINS(s, "any bit");
  dbtr_view_threshold u = {DBTR_VIEW_THR_ULP, 0.0, 4};
  dbtr_view_threshold_str(&u, s, sizeof s);
  CHECK_STR_CONTAINS(s, "> 4 ULP");
}

DBTR_TEST(count_and_next) {
  /* 4 x 3 voxels x 6 slices; B differs from A at 2 voxels of slice 1 (one 1 ULP, one by
   * 5) and 1 voxel of slice 4 (by 1000 ULP). */
  enum { NX = 4, NY = 3, NZ = 6, PER = NX * NY };
  float a[NX * NY * NZ], b[NX * NY * NZ];
  for (size_t i = 0; i < (size_t)(NX * NY * NZ); i++) a[i] = b[i] = (float)i * 0.5f;
  b[1 * PER + 5] = nextafterf(a[1 * PER + 5], 1e9f);
  b[1 * PER + 7] = a[1 * PER + 7] - 5.0f;
  float x = a[4 * PER + 0];
  for (int i = 0; i < 1000; i++) x = nextafterf(x, 1e9f);
  b[4 * PER + 0] = x;
  size_t counts[NZ];
  dbtr_view_threshold any = {DBTR_VIEW_THR_ULP, 0.0, 0}, ulp1 = {DBTR_VIEW_THR_ULP, 0.0, 1},
                      big = {DBTR_VIEW_THR_ULP, 0.0, 1000}, abs4 = {DBTR_VIEW_THR_ABS, 4.0, 0};
  dbtr_view_count_diffs(a, b, NX, NY, NZ, &any, counts);
  size_t expect_any[NZ] = {0, 2, 0, 0, 1, 0};
  for (int k = 0; k < NZ; k++) CHECK_EQ_U64(counts[k], expect_any[k]);
  dbtr_view_count_diffs(a, b, NX, NY, NZ, &ulp1, counts);
  CHECK_EQ_U64(counts[1], 1); /* the 1-ULP voxel drops out above 1 ULP */
  CHECK_EQ_U64(counts[4], 1);
  dbtr_view_count_diffs(a, b, NX, NY, NZ, &big, counts);
  CHECK_EQ_U64(counts[4], 0); /* 1000 ULP is not > 1000 */
  dbtr_view_count_diffs(a, b, NX, NY, NZ, &abs4, counts);
  CHECK_EQ_U64(counts[1], 1); /* only the difference of 5 exceeds 4 */
  CHECK_EQ_U64(counts[4], 0); /* 1000 ULP at 0 is far below 4 */
  /* The mask of slice 1 carries the signs. */
  float mask[PER];
  dbtr_view_diff_mask(a + PER, b + PER, PER, &any, mask);
  for (int i = 0; i < PER; i++) {
    int expect = i == 5 ? DBTR_VIEW_A_LESS : (i == 7 ? DBTR_VIEW_A_GREATER : DBTR_VIEW_SAME);
    CHECK_EQ_INT((int)mask[i], expect);
  }
  /* Slices with differences under "any bit": 1 and 4. */
  dbtr_view_count_diffs(a, b, NX, NY, NZ, &any, counts);
  CHECK_EQ_INT(dbtr_view_next_diff(counts, NZ, 0, 1), 1);
  CHECK_EQ_INT(dbtr_view_next_diff(counts, NZ, 1, 1), 4);
  CHECK_EQ_INT(dbtr_view_next_diff(counts, NZ, 4, 1), -1); /* none after the last: no wrap */
  CHECK_EQ_INT(dbtr_view_next_diff(counts, NZ, 5, -1), 4);
  CHECK_EQ_INT(dbtr_view_next_diff(counts, NZ, 4, -1), 1);
  CHECK_EQ_INT(dbtr_view_next_diff(counts, NZ, 1, -1), -1);
  CHECK_EQ_INT(dbtr_view_next_diff(NULL, NZ, 1, 1), -1); /* no second volume */
}

DBTR_TEST(check_pair) {
  dbtr_grid a = grid_of(16, 12, 3, 1.0, 1.0), b = grid_of(16, 12, 4, 1.0, 1.0);
  CHECK_OK(dbtr_view_check_pair("a.tif", &a, "a2.tif", &a));
  CHECK_EQ_INT(dbtr_view_check_pair("a.tif", &a, "b.tif", &b), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "a.tif is 16 x 12 x 3");
  CHECK_STR_CONTAINS(dbtr_errmsg(), "b.tif is 16 x 12 x 4");
}

/* ---- Geometry on screen ------------------------------------------------------------ */

DBTR_TEST(fit_aspect) {
  /* 16 x 12 voxels of 1 mm in 128 x 96 px: 8 px per mm fills it exactly. */
  dbtr_view_rect r = dbtr_view_fit(16.0, 12.0, 128, 96, 1.0, 0.0, 0.0);
  CHECK_NEAR(r.x, 0.0, 0.0);
  CHECK_NEAR(r.y, 0.0, 0.0);
  CHECK_NEAR(r.w, 128.0, 0.0);
  CHECK_NEAR(r.h, 96.0, 0.0);
  /* dy = 2 mm makes it 16 x 24 mm: height limits the scale to 96 / 24 = 4 px per mm, so it
   * is 64 px wide, centred at x = (128 - 64) / 2 = 32. All values are exact in binary. */
  r = dbtr_view_fit(16.0, 24.0, 128, 96, 1.0, 0.0, 0.0);
  CHECK_NEAR(r.x, 32.0, 0.0);
  CHECK_NEAR(r.w, 64.0, 0.0);
  CHECK_NEAR(r.h, 96.0, 0.0);
  /* Zoom 2 about the centre and a pan of (10, -5): 256 x 192 at (-64 + 10, -48 - 5). */
  r = dbtr_view_fit(16.0, 12.0, 128, 96, 2.0, 10.0, -5.0);
  CHECK_NEAR(r.x, -54.0, 0.0);
  CHECK_NEAR(r.y, -53.0, 0.0);
  CHECK_NEAR(r.w, 256.0, 0.0);
  size_t ix = 99, iy = 99;
  dbtr_view_rect full = {0.0, 0.0, 128.0, 96.0};
  CHECK_EQ_INT(dbtr_view_pick(&full, 16, 12, 8.5, 8.5, &ix, &iy), 1); /* 8 px per voxel: voxel (1, 1) */
  CHECK_EQ_INT(ix, 1);
  CHECK_EQ_INT(iy, 1);
  CHECK_EQ_INT(dbtr_view_pick(&full, 16, 12, 127.9, 95.9, &ix, &iy), 1); /* the last voxel */
  CHECK_EQ_INT(ix, 15);
  CHECK_EQ_INT(iy, 11);
  CHECK_EQ_INT(dbtr_view_pick(&full, 16, 12, -0.1, 5.0, &ix, &iy), 0);  /* left of the slice */
  CHECK_EQ_INT(dbtr_view_pick(&full, 16, 12, 5.0, 96.0, &ix, &iy), 0);  /* below it */
}

/* ---- Input state machine ----------------------------------------------------------- */

/* Differences in slices 2, 6 and 7 of 10. */
static const size_t nav_counts[10] = {0, 0, 3, 0, 0, 0, 1, 2, 0, 0};

static void nav_state(dbtr_view_state *s) {
  dbtr_grid g = grid_of(16, 12, 10, 1.0, 1.0);
  dbtr_view_state_init(s, &g, 1, 100.0, 50.0);
  s->diff_counts = nav_counts;
  s->vw = 128;
  s->vh = 96;
}

DBTR_TEST(keys_slices) {
  dbtr_view_state s;
  nav_state(&s);
  CHECK_EQ_INT(s.slice, 5); /* the middle slice, nz / 2 */
  CHECK_EQ_INT(dbtr_view_key(&s, DBTR_VIEW_KEY_UP), DBTR_VIEW_CH_SLICE);
  CHECK_EQ_INT(s.slice, 6);
  dbtr_view_key(&s, DBTR_VIEW_KEY_DOWN);
  dbtr_view_key(&s, DBTR_VIEW_KEY_DOWN);
  CHECK_EQ_INT(s.slice, 4);
  dbtr_view_key(&s, DBTR_VIEW_KEY_PAGE_UP); /* nz < 20: a page is 1 slice */
  CHECK_EQ_INT(s.slice, 5);
  dbtr_view_key(&s, DBTR_VIEW_KEY_END);
  CHECK_EQ_INT(s.slice, 9);
  CHECK_EQ_INT(dbtr_view_key(&s, DBTR_VIEW_KEY_UP), 0); /* already at the last slice */
  dbtr_view_key(&s, DBTR_VIEW_KEY_HOME);
  CHECK_EQ_INT(s.slice, 0);
  dbtr_view_key(&s, 'n');
  CHECK_EQ_INT(s.slice, 2);
  dbtr_view_key(&s, 'n');
  dbtr_view_key(&s, 'n');
  CHECK_EQ_INT(s.slice, 7);
  CHECK_EQ_INT(dbtr_view_key(&s, 'n'), 0); /* nothing after 7: stays */
  CHECK_EQ_INT(s.slice, 7);
  dbtr_view_key(&s, 'p');
  CHECK_EQ_INT(s.slice, 6);
  CHECK_EQ_INT(dbtr_view_key(&s, 'q'), DBTR_VIEW_CH_QUIT);
  CHECK_EQ_INT(s.quit, 1);
  /* Without B the diff keys do nothing. */
  dbtr_grid g = grid_of(16, 12, 10, 1.0, 1.0);
  dbtr_view_state_init(&s, &g, 0, 100.0, 50.0);
  CHECK_EQ_INT(dbtr_view_key(&s, 'd'), 0);
  CHECK_EQ_INT(dbtr_view_key(&s, 'n'), 0);
  CHECK_EQ_INT(s.diff_on, 0);
}

DBTR_TEST(keys_display) {
  dbtr_view_state s;
  nav_state(&s);
  s.slice = 6;
  /* Window and level steps: x1.25, /1.25, and a tenth of the window. */
  CHECK_EQ_INT(dbtr_view_key(&s, 'W'), DBTR_VIEW_CH_WL);
  CHECK_NEAR(s.window, 125.0, 0.0);
  dbtr_view_key(&s, 'w');
  CHECK_NEAR(s.window, 100.0, 0.0); /* 125 / 1.25 is exact */
  dbtr_view_key(&s, 'L');
  CHECK_NEAR(s.level, 60.0, 0.0);
  dbtr_view_key(&s, '+');
  CHECK_NEAR(s.zoom, 1.25, 0.0);
  dbtr_view_key(&s, 'r');
  CHECK_NEAR(s.window, 100.0, 0.0);
  CHECK_NEAR(s.level, 50.0, 0.0);
  CHECK_NEAR(s.zoom, 1.0, 0.0);
  CHECK_EQ_INT(s.slice, 6); /* r resets the view, not the position */
  /* Overlay, A/B, opacity. */
  dbtr_view_key(&s, 'd');
  CHECK_EQ_INT(s.diff_on, 1);
  dbtr_view_key(&s, DBTR_VIEW_KEY_TAB);
  CHECK_EQ_INT(s.show_b, 1);
  dbtr_view_key(&s, 'O');
  CHECK_NEAR(s.opacity, 0.6, 0.0); /* rounded to tenths: exactly the double nearest 0.6 */
  for (int i = 0; i < 8; i++) dbtr_view_key(&s, 'O');
  CHECK_NEAR(s.opacity, 1.0, 0.0); /* clamped */
  /* Threshold steps in ULP mode: 0, 1, 2, then back. */
  CHECK_EQ_INT(dbtr_view_key(&s, 't'), DBTR_VIEW_CH_THRESHOLD);
  dbtr_view_key(&s, 't');
  CHECK_EQ_U64(s.thr.ulp, 2);
  dbtr_view_key(&s, 'T');
  dbtr_view_key(&s, 'T');
  CHECK_EQ_U64(s.thr.ulp, 0);
  /* ABS mode starts a million times below the window's decade (100 -> 1e-4) and goes by 10. */
  s.thr.mode = DBTR_VIEW_THR_ABS;
  dbtr_view_key(&s, 't');
  CHECK_NEAR(s.thr.abs, 1e-4, 1e-4 * 1e-15);
  dbtr_view_key(&s, 't');
  CHECK_NEAR(s.thr.abs, 1e-3, 1e-3 * 1e-15);
  dbtr_view_key(&s, 'T');
  dbtr_view_key(&s, 'T');
  CHECK_NEAR(s.thr.abs, 0.0, 0.0);
}

DBTR_TEST(mouse_state_machine) {
  dbtr_grid g = grid_of(16, 12, 10, 1.0, 1.0);
  dbtr_view_state s;
  dbtr_view_state_init(&s, &g, 0, 100.0, 50.0);
  s.vw = 128;
  s.vh = 96;
  dbtr_view_scroll(&s, 1.0, 0, 0.0, 0.0);
  CHECK_EQ_INT(s.slice, 6); /* wheel up: next slice */
  dbtr_view_scroll(&s, -3.0, 0, 0.0, 0.0);
  CHECK_EQ_INT(s.slice, 5); /* one slice per event whatever its size */
  /* ctrl+wheel zooms about the cursor: the slice point under it stays under it. */
  double cx = 40.0, cy = 30.0;
  dbtr_view_rect r0 = dbtr_view_fit(16.0, 12.0, 128, 96, s.zoom, s.pan_x, s.pan_y);
  double u0 = (cx - r0.x) / r0.w, v0 = (cy - r0.y) / r0.h;
  dbtr_view_scroll(&s, 2.0, 1, cx, cy);
  CHECK_NEAR(s.zoom, 1.5625, 0.0); /* 1.25^2, exact */
  dbtr_view_rect r1 = dbtr_view_fit(16.0, 12.0, 128, 96, s.zoom, s.pan_x, s.pan_y);
  /* A few roundings of numbers near 100 in double: 1e-12 is generous and still tight. */
  CHECK_NEAR((cx - r1.x) / r1.w, u0, 1e-12);
  CHECK_NEAR((cy - r1.y) / r1.h, v0, 1e-12);
  /* Left drag pans by the motion. */
  double px = s.pan_x, py = s.pan_y;
  dbtr_view_button(&s, DBTR_VIEW_BUTTON_LEFT, 1, 10.0, 10.0);
  CHECK_EQ_INT(dbtr_view_motion(&s, 25.0, 3.0), DBTR_VIEW_CH_VIEW);
  CHECK_NEAR(s.pan_x - px, 15.0, 1e-12);
  CHECK_NEAR(s.pan_y - py, -7.0, 1e-12);
  dbtr_view_button(&s, DBTR_VIEW_BUTTON_LEFT, 0, 25.0, 3.0);
  CHECK_EQ_INT(dbtr_view_motion(&s, 50.0, 50.0), 0); /* no button held: nothing */
  /* Right drag: 200 px right scales the window by e; 50 px up raises the level by a
   * tenth of the (new) window. */
  dbtr_view_button(&s, DBTR_VIEW_BUTTON_RIGHT, 1, 0.0, 100.0);
  CHECK_EQ_INT(dbtr_view_motion(&s, 200.0, 50.0), DBTR_VIEW_CH_WL);
  CHECK_NEAR(s.window, 100.0 * exp(1.0), 1e-12);
  CHECK_NEAR(s.level, 50.0 + 0.1 * 100.0 * exp(1.0), 1e-12);
}

DBTR_TEST(script_parse) {
  const char *p = "n, n,p ,up,tab,esc,+,pagedown";
  int expect[] = {'n', 'n', 'p', DBTR_VIEW_KEY_UP, DBTR_VIEW_KEY_TAB, DBTR_VIEW_KEY_ESCAPE, '+', DBTR_VIEW_KEY_PAGE_DOWN};
  int key = 0;
  for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
    REQUIRE(dbtr_view_script_next(&p, &key) == 1);
    CHECK_EQ_INT(key, expect[i]);
  }
  CHECK_EQ_INT(dbtr_view_script_next(&p, &key), 0);
  p = "n,bogus";
  CHECK_EQ_INT(dbtr_view_script_next(&p, &key), 1);
  CHECK_EQ_INT(dbtr_view_script_next(&p, &key), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "'bogus'");
}

DBTR_TEST(title_text) {
  dbtr_grid g = grid_of(16, 12, 10, 1.0, 1.0);
  g.origin[2] = 2.0;
  size_t counts[10] = {0, 0, 3, 0, 0, 0, 1, 2, 0, 0};
  dbtr_view_state s;
  dbtr_view_state_init(&s, &g, 1, 100.0, 50.0);
  s.diff_counts = counts;
  s.slice = 2;
  dbtr_view_probe probe = {1, 3, 4, 1.5f, 1.25f};
  char t[512];
  dbtr_view_title(&s, "a.tif", "b.tif", &probe, t, sizeof t);
  CHECK_STR_CONTAINS(t, "A a.tif");
  CHECK_STR_CONTAINS(t, "slice 2/9 z 4 mm"); /* origin 2 + 2 slices of 1 mm */
  CHECK_STR_CONTAINS(t, "diff 3 here, 6 in 3 slices (any bit)"); /* 3 + 1 + 2 in slices 2, 6, 7 */
  CHECK_STR_CONTAINS(t, "x 3 y 4: A 1.5 B 1.25 A-B 0.25");
  /* 1.25 and 1.5 share an exponent, where floats are 2^-23 apart: 0.25 * 2^23 ULP. */
  CHECK_STR_CONTAINS(t, "(2097152 ULP)");
  /* A short buffer is cut, never overrun. */
  char small[16];
  dbtr_view_title(&s, "a.tif", "b.tif", &probe, small, sizeof small);
  CHECK_EQ_INT(strlen(small), 15);
}

/* ---- Rendering (need a display) ---------------------------------------------------- */

/* Renders one screenshot of the given options to `path` and reads it back. */
static unsigned char *shoot(const dbtr_view_input *in, dbtr_view_opts *o, const char *path, int *w, int *h) {
  o->screenshot = path;
  int rc = dbtr_view_run(in, o, NULL);
  if (rc) {
    fprintf(stderr, "dbtr_view_run: %s\n", dbtr_errmsg());
    return NULL;
  }
  unsigned char *px = read_png(path, w, h);
  remove(path);
  return px;
}

/* The allowance for 8-bit rounding: the shader computes the grey value in float and the
 * GL converts it to 8 bits with its own rounding, so a value within float rounding of a
 * half-integer step may land on either neighbour: +-1 grey level, never more. */
#define GREY_TOL 1

DBTR_TEST(gl_screenshot_grey) {
  need_display();
  enum { NX = 16, NY = 12, NZ = 3, PX = 8 }; /* 8 px per voxel: 128 x 96 */
  float *a = ramp_volume(NX, NY, NZ);
  REQUIRE(a != NULL);
  dbtr_view_input in = {"ramp.tif", NULL, grid_of(NX, NY, NZ, 1.0, 1.0), a, NULL};
  dbtr_view_opts o;
  dbtr_view_opts_default(&o);
  o.slice = 1;
  o.have_window = o.have_level = 1;
  o.window = 100.0; /* 0 .. 100 */
  o.level = 50.0;
  o.width = NX * PX;
  o.height = NY * PX;
  int w = 0, h = 0;
  unsigned char *px = shoot(&in, &o, "test_viewer_grey.png", &w, &h);
  REQUIRE(px != NULL);
  CHECK_EQ_INT(w, NX * PX);
  CHECK_EQ_INT(h, NY * PX);
  int bad = 0;
  for (int y = 0; y < h && bad < 5; y++)
    for (int x = 0; x < w && bad < 5; x++) {
      const unsigned char *p = px + 3 * ((size_t)y * (size_t)w + (size_t)x);
      int expect = dbtr_view_grey8((double)ramp((size_t)(x / PX), (size_t)(y / PX), 1), 100.0, 50.0);
      if (abs(p[0] - expect) > GREY_TOL || p[1] != p[0] || p[2] != p[0]) {
        TEST__FAIL("pixel (%d, %d) = (%d, %d, %d), expected grey %d +-%d", x, y, p[0], p[1], p[2], expect, GREY_TOL);
        bad++;
      }
    }
  free(px);
  free(a);
}

DBTR_TEST(gl_screenshot_aspect) {
  need_display();
  /* dy = 2 dx: 16 x 12 voxels are 16 x 24 mm; in 128 x 96 px that is 4 px per mm, a
   * 64 x 96 image at x = 32 .. 95 (voxels 4 px wide and 8 px high), background beside. */
  float *a = ramp_volume(16, 12, 3);
  REQUIRE(a != NULL);
  dbtr_view_input in = {"ramp.tif", NULL, grid_of(16, 12, 3, 1.0, 2.0), a, NULL};
  dbtr_view_opts o;
  dbtr_view_opts_default(&o);
  o.slice = 1;
  o.have_window = o.have_level = 1;
  o.window = 100.0;
  o.level = 50.0;
  o.width = 128;
  o.height = 96;
  int w = 0, h = 0;
  unsigned char *px = shoot(&in, &o, "test_viewer_aspect.png", &w, &h);
  REQUIRE(px != NULL);
  REQUIRE(w == 128 && h == 96);
  for (int y = 0; y < 96; y += 5) {
    const unsigned char *l = px + 3 * ((size_t)y * 128 + 31), *r = px + 3 * ((size_t)y * 128 + 96);
    /* The background is blue-grey (B > R); the slice is grey (B == R). */
    CHECK_GT(l[2], l[0]);
    CHECK_GT(r[2], r[0]);
    for (int ix = 0; ix < 16; ix++) {
      const unsigned char *p = px + 3 * ((size_t)y * 128 + 32 + 4 * (size_t)ix + 2);
      int expect = dbtr_view_grey8((double)ramp((size_t)ix, (size_t)(y / 8), 1), 100.0, 50.0);
      CHECK_LE(abs(p[0] - expect), GREY_TOL);
      CHECK_EQ_INT(p[2], p[0]);
    }
  }
  free(px);
  free(a);
}

/* B = A except: (3, 2) lower by 5 (A > B: red), (10, 7) higher by 5 (A < B: blue), (0, 0)
 * one ULP higher (blue at "any bit", nothing above 1 ULP), (15, 11) NaN (yellow); and
 * (5, 5) of slice 2, which must not show on slice 1. */
static float *overlay_b(const float *a) {
  float *b = copy_volume(a, 16 * 12 * 3);
  if (!b) return NULL;
  size_t s1 = 16 * 12;
  b[s1 + 2 * 16 + 3] -= 5.0f;
  b[s1 + 7 * 16 + 10] += 5.0f;
  b[s1 + 0] = nextafterf(b[s1], INFINITY);
  b[s1 + 11 * 16 + 15] = NAN;
  b[2 * s1 + 5 * 16 + 5] += 1.0f;
  return b;
}

/* The expected overlay colour of voxel (x, y) of slice 1, or -1 for none. */
static int overlay_at(int x, int y, int ulp_thr) {
  if (x == 3 && y == 2) return 0xff0000;
  if (x == 10 && y == 7) return 0x0000ff;
  if (x == 0 && y == 0 && ulp_thr < 1) return 0x0000ff;
  if (x == 15 && y == 11) return 0xffff00;
  return -1;
}

/* Checks every pixel of a 128 x 96 render of slice 1 at the given opacity. */
static void check_overlay(const unsigned char *px, double opacity, int ulp_thr) {
  int bad = 0;
  for (int y = 0; y < 96 && bad < 5; y++)
    for (int x = 0; x < 128 && bad < 5; x++) {
      const unsigned char *p = px + 3 * ((size_t)y * 128 + (size_t)x);
      int g = dbtr_view_grey8((double)ramp((size_t)(x / 8), (size_t)(y / 8), 1), 100.0, 50.0);
      int c = overlay_at(x / 8, y / 8, ulp_thr), e[3];
      for (int i = 0; i < 3; i++) {
        /* mix(grey, colour, opacity); at opacity 1 mix returns the colour exactly. */
        double col = c < 0 ? g : (double)((c >> (16 - 8 * i)) & 0xff);
        e[i] = c < 0 ? g : (int)lround((1.0 - opacity) * g + opacity * col);
      }
      int tol = (c < 0 || opacity < 1.0) ? GREY_TOL : 0;
      if (abs(p[0] - e[0]) > tol || abs(p[1] - e[1]) > tol || abs(p[2] - e[2]) > tol) {
        TEST__FAIL("pixel (%d, %d) = (%d, %d, %d), expected (%d, %d, %d) +-%d", x, y, p[0], p[1], p[2], e[0], e[1],
                   e[2], tol);
        bad++;
      }
    }
}

DBTR_TEST(gl_overlay_exact) {
  need_display();
  float *a = ramp_volume(16, 12, 3), *b = a ? overlay_b(a) : NULL;
  REQUIRE(a != NULL && b != NULL);
  dbtr_view_input in = {"a.tif", "b.tif", grid_of(16, 12, 3, 1.0, 1.0), a, b};
  dbtr_view_opts o;
  dbtr_view_opts_default(&o);
  o.slice = 1;
  o.have_window = o.have_level = 1;
  o.window = 100.0;
  o.level = 50.0;
  o.width = 128; /* 8 px per voxel, nearest sampling: every voxel is an exact 8 x 8 block */
  o.height = 96;
  o.diff = 1;
  o.opacity = 1.0;
  int w, h;
  unsigned char *px = shoot(&in, &o, "test_viewer_overlay.png", &w, &h);
  REQUIRE(px != NULL && w == 128 && h == 96);
  check_overlay(px, 1.0, 0);
  free(px);
  /* Above 1 ULP the 1-ULP voxel is no longer coloured; the others still are. */
  o.thr.ulp = 1;
  px = shoot(&in, &o, "test_viewer_overlay.png", &w, &h);
  REQUIRE(px != NULL && w == 128 && h == 96);
  check_overlay(px, 1.0, 1);
  free(px);
  /* Half opacity blends the colour with the grey value. */
  o.thr.ulp = 0;
  o.opacity = 0.5;
  px = shoot(&in, &o, "test_viewer_overlay.png", &w, &h);
  REQUIRE(px != NULL && w == 128 && h == 96);
  check_overlay(px, 0.5, 0);
  free(px);
  free(a);
  free(b);
}

/* 16 x 12 x 10 volumes differing in slices 2 (voxel (1, 1)), 6 ((4, 4)) and 7 ((8, 8)). */
static void nav_volumes(float **a, float **b) {
  size_t per = 16 * 12, n = per * 10;
  *a = malloc(n * sizeof **a);
  *b = malloc(n * sizeof **b);
  if (!*a || !*b) return;
  for (size_t i = 0; i < n; i++) (*a)[i] = (*b)[i] = (float)(i % 97);
  (*b)[2 * per + 1 * 16 + 1] += 10.0f;
  (*b)[6 * per + 4 * 16 + 4] -= 10.0f;
  (*b)[7 * per + 8 * 16 + 8] -= 10.0f;
}

DBTR_TEST(gl_script_next_diff) {
  need_display();
  float *a = NULL, *b = NULL;
  nav_volumes(&a, &b);
  REQUIRE(a != NULL && b != NULL);
  dbtr_view_input in = {"a.tif", "b.tif", grid_of(16, 12, 10, 1.0, 1.0), a, b};
  dbtr_view_opts o;
  dbtr_view_opts_default(&o);
  o.slice = 0;
  o.width = 128;
  o.height = 96;
  /* n, n, n, p from slice 0: 2, 6, 7, back to 6. In a visible window, through the same
   * handler as typed keys. */
  o.script = "n,n,n,p";
  o.quit_after_script = 1;
  dbtr_view_state st;
  REQUIRE_OK(dbtr_view_run(&in, &o, &st));
  CHECK_EQ_INT(st.slice, 6);
  /* The same keys then `d`, as a screenshot at opacity 1: slice 6's voxel (4, 4) (A > B)
   * is red, slice 7's voxel (8, 8) is not shown. */
  o.script = "n,n,n,p,d";
  o.opacity = 1.0;
  int w, h;
  unsigned char *px = shoot(&in, &o, "test_viewer_script.png", &w, &h);
  REQUIRE(px != NULL && w == 128 && h == 96);
  const unsigned char *p44 = px + 3 * ((size_t)(4 * 8 + 4) * 128 + 4 * 8 + 4);
  const unsigned char *p88 = px + 3 * ((size_t)(8 * 8 + 4) * 128 + 8 * 8 + 4);
  CHECK_EQ_INT(p44[0], 255);
  CHECK_EQ_INT(p44[1], 0);
  CHECK_EQ_INT(p44[2], 0);
  CHECK_EQ_INT(p88[0], p88[2]); /* grey, not an overlay colour */
  free(px);
  free(a);
  free(b);
}

/* Runs a shell command and returns its first output line (without newline) in out. */
static int run_line(const char *cmd, char *out, size_t n) {
  out[0] = '\0';
  FILE *f = popen(cmd, "r");
  if (!f) return -1;
  if (fgets(out, (int)n, f)) out[strcspn(out, "\n")] = '\0';
  return pclose(f);
}

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* Types keys into window id and waits (up to 10 s) until its title contains want; the
 * title ends in line. Returns 1 when it did (or want is NULL). */
static int xdo_keys(const char *id, const char *keys, const char *want, char *line, size_t n) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "xdotool windowfocus --sync %s && xdotool key --delay 50 %s", id, keys);
  run_line(cmd, line, n);
  if (!want) return 1;
  snprintf(cmd, sizeof cmd, "xdotool getwindowname %s", id);
  for (int i = 0; i < 100; i++) {
    run_line(cmd, line, n);
    if (strstr(line, want)) return 1;
    sleep_ms(100);
  }
  TEST__FAIL("after typing \"%s\" the title is \"%s\", without \"%s\"", keys, line, want);
  return 0;
}

DBTR_TEST(gl_xdotool_keys) {
  need_display();
  char line[512];
  if (run_line("command -v xdotool", line, sizeof line) != 0) TEST_SKIP("xdotool is not installed");
  float *a = NULL, *b = NULL;
  nav_volumes(&a, &b);
  REQUIRE(a != NULL && b != NULL);
  dbtr_view_input in = {"xdo_a.tif", "xdo_b.tif", grid_of(16, 12, 10, 1.0, 1.0), a, b};
  fflush(NULL);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    /* The viewer, driven by real X key events; its exit status is the slice it ended on. */
    dbtr_view_opts o;
    dbtr_view_opts_default(&o);
    o.slice = 0;
    o.width = 256;
    o.height = 192;
    dbtr_view_state st;
    int rc = dbtr_view_run(&in, &o, &st);
    if (rc) fprintf(stderr, "viewer: %s\n", dbtr_errmsg());
    _exit(rc ? 100 : (int)st.slice);
  }
  char id[64] = "";
  run_line("timeout 20 xdotool search --sync --onlyvisible --name '^dbtr view: A xdo_a.tif'", id, sizeof id);
  if (id[0]) {
    /* No window manager runs under Xvfb: give the window the focus, then type as a user.
     * Letters go through GLFW's char callback, Up, Tab and Escape through its key one. */
    CHECK(xdo_keys(id, "n n n p", "slice 6/9", line, sizeof line)); /* 0 -> n 2 -> n 6 -> n 7 -> p 6 */
    CHECK_STR_CONTAINS(line, "diff 1 here, 3 in 3 slices");
    CHECK(xdo_keys(id, "Up Tab", "slice 7/9", line, sizeof line));
    CHECK_STR_CONTAINS(line, "dbtr view: B xdo_b.tif"); /* Tab shows B */
    xdo_keys(id, "Escape", NULL, line, sizeof line);
  } else {
    TEST__FAIL("the viewer window did not appear within 20 s");
  }
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 100 && done == 0; i++) { /* up to 10 s to close */
    done = waitpid(pid, &status, WNOHANG);
    if (done == 0) sleep_ms(100);
  }
  if (done == 0) {
    TEST__FAIL("the viewer did not quit on q; killing it");
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  } else {
    CHECK(WIFEXITED(status));
    CHECK_EQ_INT(WEXITSTATUS(status), 7); /* the slice it ended on */
  }
  free(a);
  free(b);
}

/* Runs a shell command, keeps the last output line that contains `want` (or the last line)
 * in out, and returns the exit status. */
static int run_status(const char *cmd, const char *want, char *out, size_t n) {
  char line[1024];
  out[0] = '\0';
  FILE *f = popen(cmd, "r");
  if (!f) return -1;
  while (fgets(line, (int)sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    if (!want || strstr(line, want) || !out[0]) snprintf(out, n, "%s", line);
  }
  int st = pclose(f);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

DBTR_TEST(gl_cmd_view) {
  /* `dbtr view` end to end: TIFFs in, PNG out; the dbtr binary comes from DBTR_EXE
   * (tests/viewer.cmake sets it when the dbtr target is built). */
  const char *exe = getenv("DBTR_EXE");
  if (!exe || access(exe, X_OK) != 0) TEST_SKIP("DBTR_EXE does not name a built dbtr");
  need_display();
  float *a = ramp_volume(16, 12, 3), *b = a ? overlay_b(a) : NULL, *c = ramp_volume(16, 12, 4);
  REQUIRE(a != NULL && b != NULL && c != NULL);
  dbtr_grid g = grid_of(16, 12, 3, 1.0, 1.0), g4 = grid_of(16, 12, 4, 1.0, 1.0);
  REQUIRE_OK(dbtr_tiff_write("test_viewer_cmd_a.tif", &g, a, NULL));
  REQUIRE_OK(dbtr_tiff_write("test_viewer_cmd_b.tif", &g, b, NULL));
  REQUIRE_OK(dbtr_tiff_write("test_viewer_cmd_c.tif", &g4, c, NULL));
  remove("test_viewer_cmd.png");
  char cmd[1024], out[1024];
  snprintf(cmd, sizeof cmd,
           "'%s' view test_viewer_cmd_a.tif test_viewer_cmd_b.tif --screenshot test_viewer_cmd.png --slice 1 --diff "
           "--opacity 1 --window 100 --level 50 --size 128x96 2>&1",
           exe);
  CHECK_EQ_INT(run_status(cmd, NULL, out, sizeof out), 0);
  int w = 0, h = 0;
  unsigned char *px = read_png("test_viewer_cmd.png", &w, &h);
  REQUIRE(px != NULL && w == 128 && h == 96);
  check_overlay(px, 1.0, 0); /* the same picture as gl_overlay_exact, through the files */
  free(px);
  /* An existing screenshot is kept without --force (exit 2, bad arguments). */
  CHECK_EQ_INT(run_status(cmd, NULL, out, sizeof out), 2);
  CHECK_STR_CONTAINS(out, "--force");
  /* Different grids: a clear message naming both files and their dims, exit 2. */
  snprintf(cmd, sizeof cmd, "'%s' view test_viewer_cmd_a.tif test_viewer_cmd_c.tif 2>&1", exe);
  CHECK_EQ_INT(run_status(cmd, NULL, out, sizeof out), 2);
  CHECK_STR_CONTAINS(out, "dbtr view: test_viewer_cmd_a.tif is 16 x 12 x 3");
  CHECK_STR_CONTAINS(out, "test_viewer_cmd_c.tif is 16 x 12 x 4");
  /* A bad flag value names the flag. */
  snprintf(cmd, sizeof cmd, "'%s' view test_viewer_cmd_a.tif --opacity 2 2>&1", exe);
  CHECK_EQ_INT(run_status(cmd, NULL, out, sizeof out), 2);
  CHECK_STR_CONTAINS(out, "--opacity");
  snprintf(cmd, sizeof cmd, "'%s' view test_viewer_cmd_a.tif --diff 2>&1", exe);
  CHECK_EQ_INT(run_status(cmd, NULL, out, sizeof out), 2);
  CHECK_STR_CONTAINS(out, "--diff needs a second volume");
  remove("test_viewer_cmd.png");
  remove("test_viewer_cmd_a.tif");
  remove("test_viewer_cmd_b.tif");
  remove("test_viewer_cmd_c.tif");
  free(a);
  free(b);
  free(c);
}

DBTR_TEST(gl_large_volume) {
  need_display();
  /* The size of the 2011 study's volume, 2304 x 1196 x 45 (ARCHITECTURE.md, `thesis`),
   * with one differing voxel on slice 22 at (1001, 501). Shown at half size, each pixel
   * covers 2 x 2 voxels; the overlay must still show that voxel, as exactly one pixel. */
  size_t nx = 2304, ny = 1196, nz = 45, n = nx * ny * nz;
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  REQUIRE(a != NULL && b != NULL);
  for (size_t i = 0; i < n; i++) a[i] = b[i] = (float)(i % 1000) * 0.001f;
  size_t hit = (22 * ny + 501) * nx + 1001;
  b[hit] = a[hit] - 1.0f;
  dbtr_view_input in = {"big_a.tif", "big_b.tif", grid_of(nx, ny, nz, 0.1, 0.1), a, b};
  dbtr_view_opts o;
  dbtr_view_opts_default(&o);
  o.slice = 22;
  o.diff = 1;
  o.opacity = 1.0;
  o.width = (int)nx / 2;
  o.height = (int)ny / 2;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int w, h;
  unsigned char *px = shoot(&in, &o, "test_viewer_large.png", &w, &h);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("2304 x 1196 x 45 pair: percentiles, diff counts, one slice rendered and written in %.2f s\n",
         (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  REQUIRE(px != NULL && w == 1152 && h == 598);
  size_t red = 0;
  for (size_t i = 0; i < (size_t)w * (size_t)h; i++) {
    const unsigned char *p = px + 3 * i;
    red += p[0] == 255 && p[1] == 0 && p[2] == 0;
  }
  CHECK_EQ_U64(red, 1);
  const unsigned char *p = px + 3 * ((size_t)250 * 1152 + 500); /* voxel (1001, 501) / 2 */
  CHECK_EQ_INT(p[0], 255);
  CHECK_EQ_INT(p[1], 0);
  free(px);
  free(a);
  free(b);
}

DBTR_TEST_MAIN(wl_map, percentiles_exact, percentiles_subsample, auto_window, classify_ulp, classify_abs,
               count_and_next, check_pair, fit_aspect, keys_slices, keys_display, mouse_state_machine, script_parse,
               title_text, gl_screenshot_grey, gl_screenshot_aspect, gl_overlay_exact, gl_script_next_diff,
               gl_xdotool_keys, gl_cmd_view, gl_large_volume)
