/* tests/test_viewer.c: the slice viewer's logic (viewer/logic.c, viewer/input.c;
 * docs/viewer.md), without a display (label cpu): window/level, percentiles, difference
 * thresholds and counts, slice search, aspect fitting, the key and mouse state machine,
 * the script parser and the title. The rendering is tested in tests/test_viewer_gl.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recon/compare.h"
#include "recon/error.h"
#include "tests/test.h"
#include "tests/viewer_fixtures.h"
#include "viewer/viewer.h"

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
  double max_mag = -1.0;
  dbtr_view_count_diffs(a, b, NX, NY, NZ, &any, counts, &max_mag);
  size_t expect_any[NZ] = {0, 2, 0, 0, 1, 0};
  for (int k = 0; k < NZ; k++) CHECK_EQ_U64(counts[k], expect_any[k]);
  /* The largest magnitude is voxel 7's: 9.5 against 4.5, 3.5 / 2^-21 floats up to 8 and
   * 1.5 / 2^-20 from there, 7340032 + 1572864 ULP. */
  CHECK_NEAR(max_mag, 8912896.0, 0.0);
  dbtr_view_count_diffs(a, b, NX, NY, NZ, &ulp1, counts, NULL);
  CHECK_EQ_U64(counts[1], 1); /* the 1-ULP voxel drops out above 1 ULP */
  CHECK_EQ_U64(counts[4], 1);
  dbtr_view_count_diffs(a, b, NX, NY, NZ, &big, counts, NULL);
  CHECK_EQ_U64(counts[4], 0); /* 1000 ULP is not > 1000 */
  dbtr_view_count_diffs(a, b, NX, NY, NZ, &abs4, counts, &max_mag);
  CHECK_EQ_U64(counts[1], 1); /* only the difference of 5 exceeds 4 */
  CHECK_EQ_U64(counts[4], 0); /* 1000 ULP at 0 is far below 4 */
  CHECK_NEAR(max_mag, 5.0, 0.0); /* |A - B| of that voxel, exact in double */
  /* The mask of slice 1 carries signed levels on the scale up to 2^24 ULP (the power of
   * two above 8912896): the 1-ULP voxel is at the scale's bottom, level -1; voxel 7 at
   * log2(8912896) / 24 = 0.962 of it, in the top level's share [15/16, 1). */
  float mask[PER];
  dbtr_view_diff_mask(a + PER, b + PER, PER, &any, 16777216.0, mask);
  for (int i = 0; i < PER; i++) {
    int expect = i == 5 ? -1 : (i == 7 ? DBTR_VIEW_LEVELS : 0);
    CHECK_EQ_INT((int)mask[i], expect);
  }
  /* Slices with differences under "any bit": 1 and 4. */
  dbtr_view_count_diffs(a, b, NX, NY, NZ, &any, counts, NULL);
  CHECK_EQ_INT(dbtr_view_next_diff(counts, NZ, 0, 1), 1);
  CHECK_EQ_INT(dbtr_view_next_diff(counts, NZ, 1, 1), 4);
  CHECK_EQ_INT(dbtr_view_next_diff(counts, NZ, 4, 1), -1); /* none after the last: no wrap */
  CHECK_EQ_INT(dbtr_view_next_diff(counts, NZ, 5, -1), 4);
  CHECK_EQ_INT(dbtr_view_next_diff(counts, NZ, 4, -1), 1);
  CHECK_EQ_INT(dbtr_view_next_diff(counts, NZ, 1, -1), -1);
  CHECK_EQ_INT(dbtr_view_next_diff(NULL, NZ, 1, 1), -1); /* no second volume */
}

DBTR_TEST(diff_scale) {
  dbtr_view_threshold any = {DBTR_VIEW_THR_ULP, 0.0, 0}, abs0 = {DBTR_VIEW_THR_ABS, 0.0, 0};
  /* 1000 ULP on a scale to 2^24: log2(1000) / 24 = 0.415 of it, 6.64 of 16 levels: level 7. */
  float x = 1.0f, y = 1.0f;
  for (int i = 0; i < 1000; i++) y = nextafterf(y, 2.0f);
  CHECK_NEAR(dbtr_view_diff_magnitude(x, y, DBTR_VIEW_THR_ULP), 1000.0, 0.0);
  CHECK_EQ_INT(dbtr_view_diff_level(x, y, &any, 16777216.0), -7); /* A < B: negative */
  CHECK_EQ_INT(dbtr_view_diff_level(y, x, &any, 16777216.0), 7);
  CHECK_EQ_INT(dbtr_view_diff_level(x, x, &any, 16777216.0), 0);
  CHECK_EQ_INT(dbtr_view_diff_level(x, NAN, &any, 2.0), DBTR_VIEW_LEVEL_NAN);
  /* Absolute: 5 on a linear scale to 8 is at 10/16, the start of level 11; to 10, at 8/16:
   * level 9; to 5, the top. Beyond the range, still the top. All exact in binary. */
  CHECK_EQ_INT(dbtr_view_diff_level(10.0f, 5.0f, &abs0, 8.0), 11);
  CHECK_EQ_INT(dbtr_view_diff_level(5.0f, 10.0f, &abs0, 10.0), -9);
  CHECK_EQ_INT(dbtr_view_diff_level(10.0f, 5.0f, &abs0, 5.0), DBTR_VIEW_LEVELS);
  CHECK_EQ_INT(dbtr_view_diff_level(100.0f, 5.0f, &abs0, 5.0), DBTR_VIEW_LEVELS);
  /* Round ranges. */
  CHECK_NEAR(dbtr_view_nice_range(0.0, DBTR_VIEW_THR_ULP), 2.0, 0.0); /* at least 2: log2 of it divides */
  CHECK_NEAR(dbtr_view_nice_range(3.0, DBTR_VIEW_THR_ULP), 4.0, 0.0);
  CHECK_NEAR(dbtr_view_nice_range(1000.0, DBTR_VIEW_THR_ULP), 1024.0, 0.0);
  CHECK_NEAR(dbtr_view_nice_range(0.0, DBTR_VIEW_THR_ABS), 1.0, 0.0);
  CHECK_NEAR(dbtr_view_nice_range(5.0, DBTR_VIEW_THR_ABS), 5.0, 0.0);
  CHECK_NEAR(dbtr_view_nice_range(5.5, DBTR_VIEW_THR_ABS), 10.0, 0.0);
  CHECK_NEAR(dbtr_view_nice_range(130.0, DBTR_VIEW_THR_ABS), 200.0, 0.0);
  CHECK_NEAR(dbtr_view_nice_range(3e-7, DBTR_VIEW_THR_ABS), 5e-7, 1e-22); /* 5 x pow(10, -7): a few ULPs of 5e-7 */
  /* The colours: pale (the other channels at 200) to pure, yellow NaN. */
  unsigned char c[3];
  dbtr_view_diff_rgb(DBTR_VIEW_LEVELS, c);
  CHECK(c[0] == 255 && c[1] == 0 && c[2] == 0);
  dbtr_view_diff_rgb(-DBTR_VIEW_LEVELS, c);
  CHECK(c[0] == 0 && c[1] == 0 && c[2] == 255);
  dbtr_view_diff_rgb(1, c);
  CHECK(c[0] == 255 && c[1] == 200 && c[2] == 200);
  dbtr_view_diff_rgb(-8, c);
  CHECK(c[0] == 107 && c[1] == 107 && c[2] == 255); /* 200 * 8 / 15 = 106.7 */
  dbtr_view_diff_rgb(DBTR_VIEW_LEVEL_NAN, c);
  CHECK(c[0] == 255 && c[1] == 255 && c[2] == 0);
}

DBTR_TEST(shot_size) {
  /* tiny's 128 x 80 slice: 5 pixels a voxel, the smallest that reaches 640. */
  dbtr_grid g = grid_of(128, 80, 24, 1.0, 1.0);
  int w = 0, h = 0;
  REQUIRE_OK(dbtr_view_shot_size(&g, 0, &w, &h));
  CHECK_EQ_INT(w, 640);
  CHECK_EQ_INT(h, 400);
  REQUIRE_OK(dbtr_view_shot_size(&g, 2, &w, &h));
  CHECK_EQ_INT(w, 256);
  CHECK_EQ_INT(h, 160);
  /* dy = 2 dx: twice as high; a slice wider than 640 keeps one pixel a voxel. */
  g = grid_of(700, 100, 1, 0.1, 0.2);
  REQUIRE_OK(dbtr_view_shot_size(&g, 0, &w, &h));
  CHECK_EQ_INT(w, 700);
  CHECK_EQ_INT(h, 200);
  CHECK_EQ_INT(dbtr_view_shot_size(&g, 100, &w, &h), DBTR_EINVAL); /* 70000 pixels wide */
  CHECK_STR_CONTAINS(dbtr_errmsg(), "--scale 100");
}

/* The legend's state: 16 x 12 x 10 voxels from z = 2 mm, differences in slices 2, 6, 7. */
static void legend_state(dbtr_view_state *s, const size_t *counts) {
  dbtr_grid g = grid_of(16, 12, 10, 1.0, 1.0);
  g.origin[2] = 2.0;
  dbtr_view_state_init(s, &g, 1, 100.0, 50.0);
  s->diff_counts = counts;
  s->slice = 2;
  s->diff_on = 1;
  s->thr.ulp = 8;
  s->diff_range = 1024.0;
}

DBTR_TEST(legend_text) {
  size_t counts[10] = {0, 0, 3, 0, 0, 0, 1, 2, 0, 0};
  dbtr_view_state s;
  legend_state(&s, counts);
  dbtr_view_legend L;
  dbtr_view_legend_layout(&L, &s, "run/fast.tif", "run/cpu-float.tif", 640);
  CHECK_EQ_INT(L.scale, 2); /* 640 / 320 */
  CHECK_EQ_INT(L.width, 640);
  REQUIRE(L.n_lines == 6);
  CHECK_STR_CONTAINS(L.lines[0], "A: run/fast.tif (shown)");
  CHECK_STR_CONTAINS(L.lines[1], "B: run/cpu-float.tif");
  CHECK_STR_CONTAINS(L.lines[2], "slice 2 of 0-9, z 4 mm"); /* origin 2 + 2 slices of 1 mm */
  CHECK_STR_CONTAINS(L.lines[3], "W 100 L 50: black 0, white 100");
  CHECK_STR_CONTAINS(L.lines[4], "differ: > 8 ULP, overlay on");
  CHECK_STR_CONTAINS(L.lines[5], "3 voxels here, 6 in 3 slices"); /* 3 + 1 + 2 in slices 2, 6, 7 */
  CHECK(L.key);
  CHECK_STR_CONTAINS(L.label_lo, "-1024");
  CHECK_STR_CONTAINS(L.label_hi, "+1024");
  CHECK_STR_CONTAINS(L.caption, "ULP, log scale");
  /* Tab shows B; the overlay off drops the key and says so. */
  s.show_b = 1;
  s.diff_on = 0;
  dbtr_view_legend_layout(&L, &s, "a.tif", "b.tif", 640);
  CHECK(strstr(L.lines[0], "(shown)") == NULL);
  CHECK_STR_CONTAINS(L.lines[1], "B: b.tif (shown)");
  CHECK_STR_CONTAINS(L.lines[4], "overlay off");
  CHECK_EQ_INT(L.key, 0);
  /* A narrow picture gets the minimum width, text scale 1; a long path keeps its end. */
  char longname[300];
  memset(longname, 'x', sizeof longname);
  snprintf(longname + 250, 50, "/the-file.tif");
  dbtr_view_legend_layout(&L, &s, longname, "b.tif", 128);
  CHECK_EQ_INT(L.scale, 1);
  CHECK_EQ_INT(L.width, DBTR_VIEW_LEGEND_MIN_W);
  CHECK_STR_CONTAINS(L.lines[0], "A: ...");
  CHECK_STR_CONTAINS(L.lines[0], "x/the-file.tif");
  /* (320 - 2 margins of 4) / 6 pixels a character: 52 characters fit. */
  CHECK_EQ_INT(strlen(L.lines[0]), 52);
  /* Absolute mode: a linear scale from 0. */
  s.diff_on = 1;
  s.thr.mode = DBTR_VIEW_THR_ABS;
  s.thr.abs = 0.0;
  s.diff_range = 0.002;
  dbtr_view_legend_layout(&L, &s, "a.tif", "b.tif", 640);
  CHECK_STR_CONTAINS(L.label_lo, "-0.002");
  CHECK_STR_CONTAINS(L.label_in, "0");
  CHECK_STR_CONTAINS(L.caption, "linear");
}

/* The pixel at (x, y) of an RGB image w wide. */
static const unsigned char *px_at(const unsigned char *rgb, int w, int x, int y) {
  return rgb + 3 * ((size_t)y * (size_t)w + (size_t)x);
}

DBTR_TEST(legend_pixels) {
  size_t counts[10] = {0, 0, 3, 0, 0, 0, 1, 2, 0, 0};
  dbtr_view_state s;
  legend_state(&s, counts);
  dbtr_view_legend L;
  dbtr_view_legend_layout(&L, &s, "a.tif", "b.tif", 640);
  int w = L.width, h = L.height;
  unsigned char *rgb = malloc((size_t)w * (size_t)h * 3), *ref = malloc((size_t)w * (size_t)h * 3);
  REQUIRE(rgb != NULL && ref != NULL);
  dbtr_view_legend_draw(&L, rgb, 0);
  /* Each key cell, at its centre, has its level's colour; the pixel left of the key is
   * the background. */
  unsigned char c[3];
  for (int level = -DBTR_VIEW_LEVELS; level <= DBTR_VIEW_LEVEL_NAN; level++) {
    if (level == 0) continue;
    dbtr_view_diff_rgb(level, c);
    const unsigned char *p = px_at(rgb, w, dbtr_view_legend_cell_x(&L, level) + L.cell_w / 2, L.key_y + L.key_h / 2);
    if (memcmp(p, c, 3) != 0)
      TEST__FAIL("key cell of level %d is (%d, %d, %d), expected (%d, %d, %d)", level, p[0], p[1], p[2], c[0], c[1],
                 c[2]);
  }
  CHECK_EQ_INT(memcmp(px_at(rgb, w, L.key_x - 1, L.key_y), dbtr_view_background, 3), 0);
  /* The blue cells run from the largest magnitude at the left to the smallest, then red
   * from the smallest: the cells are in level order, one cell apart. */
  CHECK_EQ_INT(dbtr_view_legend_cell_x(&L, -DBTR_VIEW_LEVELS), L.key_x);
  CHECK_EQ_INT(dbtr_view_legend_cell_x(&L, 2) - dbtr_view_legend_cell_x(&L, 1), L.cell_w);
  CHECK_GT(dbtr_view_legend_cell_x(&L, 1), dbtr_view_legend_cell_x(&L, -1));
  /* The third line says the slice: the band's rows of that line are exactly the text
   * drawn alone on the background; text is drawn at all (some pixel is not background). */
  int y3 = 4 * L.scale + 2 * DBTR_VIEW_CHAR_H * L.scale, lh = DBTR_VIEW_CHAR_H * L.scale;
  for (size_t i = 0; i < (size_t)w * (size_t)h; i++) memcpy(ref + 3 * i, dbtr_view_background, 3);
  dbtr_view_text(ref, w, h, 4 * L.scale, y3, L.scale, "slice 2 of 0-9, z 4 mm", (const unsigned char[3]){235, 235, 235});
  CHECK_EQ_INT(memcmp(rgb + 3 * (size_t)y3 * (size_t)w, ref + 3 * (size_t)y3 * (size_t)w, 3 * (size_t)lh * (size_t)w), 0);
  size_t lit = 0;
  for (size_t i = (size_t)y3 * (size_t)w; i < (size_t)(y3 + lh) * (size_t)w; i++) lit += rgb[3 * i] == 235;
  /* The comparison above would also hold for two empty lines: 16 characters of "slice 2
   * of 0-9, z 4 mm" are not spaces, each lights at least one font pixel, 4 image pixels
   * at scale 2. */
  CHECK_LE((size_t)16 * 4, lit);
  free(rgb);
  free(ref);
}

DBTR_TEST(font_glyphs) {
  /* A few glyphs drawn at scale 1 and read back: 'I' is a bar with serifs, '-' one row,
   * ' ' nothing, and a byte outside ASCII shows as '?'. */
  unsigned char img[9 * 6 * 3], q[9 * 6 * 3];
  const unsigned char white[3] = {255, 255, 255};
  memset(img, 0, sizeof img);
  dbtr_view_text(img, 6, 9, 0, 0, 1, "I", white);
  static const char *I_rows[7] = {".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."};
  for (int y = 0; y < 7; y++)
    for (int x = 0; x < 5; x++) CHECK_EQ_INT(img[3 * (y * 6 + x)] == 255, I_rows[y][x] == '#');
  for (int y = 0; y < 9; y++) CHECK_EQ_INT(img[3 * (y * 6 + 5)], 0); /* the spacing column */
  memset(img, 0, sizeof img);
  dbtr_view_text(img, 6, 9, 0, 0, 1, "-", white);
  size_t lit = 0;
  for (int i = 0; i < 9 * 6; i++) lit += img[3 * i] == 255;
  CHECK_EQ_U64(lit, 5);
  memset(img, 0, sizeof img);
  dbtr_view_text(img, 6, 9, 0, 0, 1, " ", white);
  for (size_t i = 0; i < sizeof img; i++) CHECK_EQ_INT(img[i], 0);
  memset(img, 0, sizeof img);
  memset(q, 0, sizeof q);
  dbtr_view_text(img, 6, 9, 0, 0, 1, "\xe9", white);
  dbtr_view_text(q, 6, 9, 0, 0, 1, "?", white);
  CHECK_EQ_INT(memcmp(img, q, sizeof img), 0);
  /* Clipped at the image's edges, never written past them (ASan watches). */
  dbtr_view_text(img, 6, 9, -3, 5, 2, "WW", white);
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
  CHECK_NEAR(s.opacity, 1.0, 0.0); /* the default: the colour carries the magnitude, unblended */
  for (int i = 0; i < 4; i++) dbtr_view_key(&s, 'o');
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

DBTR_TEST_MAIN(wl_map, percentiles_exact, percentiles_subsample, auto_window, classify_ulp, classify_abs,
               count_and_next, diff_scale, shot_size, legend_text, legend_pixels, font_glyphs, check_pair, fit_aspect,
               keys_slices, keys_display, mouse_state_machine, script_parse, title_text)
