/* tests/test_viewer_gl.c: the slice viewer's rendering (viewer/session.c, viewer/gl.c,
 * viewer/png.c; docs/viewer.md). Every case is named gl_*: tests/viewer.cmake runs each
 * under its own Xvfb server (tests/viewer_xvfb.sh) with Mesa's software OpenGL (label
 * viewer), and it skips (77) where no OpenGL 3.3 core context can be made. Screenshots are
 * read back with libpng and checked pixel by pixel; keys are scripted and, with xdotool,
 * typed into the window; `dbtr view` itself runs end to end. */
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
#include "tests/viewer_fixtures.h"
#include "viewer/viewer.h"

/* ---- Helpers ------------------------------------------------------------------------ */

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

/* ---- Rendering (need a display) ---------------------------------------------------- */

/* Renders one screenshot of the given options to `path` and reads it back; final, when
 * not NULL, receives the viewer's state (the colour scale's range among it). */
static unsigned char *shoot_state(const dbtr_view_input *in, dbtr_view_opts *o, const char *path, int *w, int *h,
                                  dbtr_view_state *final) {
  o->screenshot = path;
  int rc = dbtr_view_run(in, o, final);
  if (rc) {
    fprintf(stderr, "dbtr_view_run: %s\n", dbtr_errmsg());
    return NULL;
  }
  unsigned char *px = read_png(path, w, h);
  remove(path);
  return px;
}

/* The legend of a final state (whose per-slice counts the session has freed: they are
 * counted again here, under the state's threshold) for a slice area sw pixels wide. */
static void legend_of(dbtr_view_legend *L, const dbtr_view_state *st, const dbtr_view_input *in, int sw) {
  dbtr_view_state s = *st;
  size_t *counts = in->b ? malloc(in->grid.nz * sizeof *counts) : NULL;
  if (counts) {
    dbtr_view_count_diffs(in->a, in->b, in->grid.nx, in->grid.ny, in->grid.nz, &s.thr, counts, NULL);
    s.diff_counts = counts;
  }
  dbtr_view_legend_layout(L, &s, in->name_a, in->name_b, sw);
  free(counts);
}

/* The slice area (sw x sh, centred at the top) of a picture pw x ph that has the legend
 * of state st below it; checks the picture's size first. NULL (a failure recorded) when
 * it is not max(sw, the legend's minimum) x (sh + the legend's height). */
static unsigned char *slice_area(const unsigned char *px, int pw, int ph, int sw, int sh, const dbtr_view_input *in,
                                 const dbtr_view_state *st) {
  dbtr_view_legend L;
  legend_of(&L, st, in, sw);
  int ew = sw > DBTR_VIEW_LEGEND_MIN_W ? sw : DBTR_VIEW_LEGEND_MIN_W;
  if (pw != ew || ph != sh + L.height) {
    TEST__FAIL("the picture is %d x %d, expected %d x %d (slice %d x %d, legend %d high)", pw, ph, ew, sh + L.height,
               sw, sh, L.height);
    return NULL;
  }
  unsigned char *out = malloc((size_t)sw * (size_t)sh * 3);
  if (!out) return NULL;
  int x0 = (pw - sw) / 2;
  for (int y = 0; y < sh; y++)
    memcpy(out + 3 * (size_t)y * (size_t)sw, px + 3 * ((size_t)y * (size_t)pw + (size_t)x0), 3 * (size_t)sw);
  return out;
}

/* A screenshot's slice area, its size checked (see slice_area). */
static unsigned char *shoot_slice(const dbtr_view_input *in, dbtr_view_opts *o, const char *path, int sw, int sh,
                                  dbtr_view_state *st) {
  int w = 0, h = 0;
  unsigned char *px = shoot_state(in, o, path, &w, &h, st);
  if (!px) return NULL;
  unsigned char *area = slice_area(px, w, h, sw, sh, in, st);
  free(px);
  return area;
}

/* The allowance for 8-bit rounding: the shader computes the grey value in float and the
 * GL converts it to 8 bits with its own rounding, so a value within float rounding of a
 * half-integer step may land on either neighbour: +-1 grey level, never more. */
#define GREY_TOL 1

/* The options the ramp volume's pictures share: slice 1, window 0 .. 100, 128 x 96 pixels (8 a
 * voxel of the 16 x 12 slice). */
static void ramp_opts(dbtr_view_opts *o) {
  dbtr_view_opts_default(o);
  o->slice = 1;
  o->have_window = o->have_level = 1;
  o->window = 100.0;
  o->level = 50.0;
  o->width = 128;
  o->height = 96;
}

DBTR_TEST(gl_screenshot_grey) {
  need_display();
  enum { NX = 16, NY = 12, NZ = 3, PX = 8 }; /* 8 px per voxel: 128 x 96 */
  float *a = ramp_volume(NX, NY, NZ);
  REQUIRE(a != NULL);
  dbtr_view_input in = {"ramp.tif", NULL, grid_of(NX, NY, NZ, 1.0, 1.0), a, NULL};
  dbtr_view_opts o;
  ramp_opts(&o); /* 128 x 96: NX * PX by NY * PX */
  int w = NX * PX, h = NY * PX;
  dbtr_view_state st;
  unsigned char *px = shoot_slice(&in, &o, "test_viewer_grey.png", w, h, &st);
  REQUIRE(px != NULL);
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
  ramp_opts(&o);
  dbtr_view_state st;
  unsigned char *px = shoot_slice(&in, &o, "test_viewer_aspect.png", 128, 96, &st);
  REQUIRE(px != NULL);
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

/* The expected overlay colour of voxel (x, y) of slice 1 as 0xRRGGBB, or -1 for none:
 * the colour of its level on the scale to `range`, which the viewer reports. */
static int overlay_at(const float *a, const float *b, int x, int y, const dbtr_view_threshold *t, double range) {
  size_t i = 16 * 12 + (size_t)y * 16 + (size_t)x;
  int level = dbtr_view_diff_level(a[i], b[i], t, range);
  if (level == 0) return -1;
  unsigned char c[3];
  dbtr_view_diff_rgb(level, c);
  return c[0] << 16 | c[1] << 8 | c[2];
}

/* Checks every pixel of a 128 x 96 render of slice 1 at the given opacity. */
static void check_overlay(const unsigned char *px, const float *a, const float *b, double opacity,
                          const dbtr_view_threshold *t, double range) {
  int bad = 0;
  for (int y = 0; y < 96 && bad < 5; y++)
    for (int x = 0; x < 128 && bad < 5; x++) {
      const unsigned char *p = px + 3 * ((size_t)y * 128 + (size_t)x);
      int g = dbtr_view_grey8((double)ramp((size_t)(x / 8), (size_t)(y / 8), 1), 100.0, 50.0);
      int c = overlay_at(a, b, x / 8, y / 8, t, range), e[3];
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

/* The pixel of voxel (x, y) in a 128 x 96 render (8 x 8 pixels a voxel), at its centre. */
static const unsigned char *voxel_px(const unsigned char *px, int x, int y) {
  return px + 3 * ((size_t)(8 * y + 4) * 128 + (size_t)(8 * x + 4));
}

DBTR_TEST(gl_overlay_exact) {
  need_display();
  float *a = ramp_volume(16, 12, 3), *b = a ? overlay_b(a) : NULL;
  REQUIRE(a != NULL && b != NULL);
  dbtr_view_input in = {"a.tif", "b.tif", grid_of(16, 12, 3, 1.0, 1.0), a, b};
  dbtr_view_opts o;
  ramp_opts(&o); /* 8 px per voxel, nearest sampling: every voxel is an exact 8 x 8 block */
  o.diff = 1;
  dbtr_view_state st;
  unsigned char *px = shoot_slice(&in, &o, "test_viewer_overlay.png", 128, 96, &st);
  REQUIRE(px != NULL);
  /* The scale's top is the largest ULP distance of the volume rounded up to a power of
   * two (the rule is tested in test_viewer diff_scale; here, that the viewer applies it). */
  size_t counts[3];
  double max_mag = 0.0;
  dbtr_view_count_diffs(a, b, 16, 12, 3, &o.thr, counts, &max_mag);
  CHECK_NEAR(st.diff_range, dbtr_view_nice_range(max_mag, DBTR_VIEW_THR_ULP), 0.0);
  check_overlay(px, a, b, 1.0, &o.thr, st.diff_range);
  /* What the colours say, independently of the functions above: A > B red (red channel
   * full, the others equal), A < B blue, the 1-ULP voxel the palest blue (200, 200, 255),
   * NaN yellow. */
  const unsigned char *r = voxel_px(px, 3, 2), *bl = voxel_px(px, 10, 7), *u = voxel_px(px, 0, 0),
                      *ye = voxel_px(px, 15, 11);
  CHECK(r[0] == 255 && r[1] == r[2] && r[1] < 200);
  CHECK(bl[2] == 255 && bl[0] == bl[1] && bl[0] < 200);
  CHECK(u[0] == 200 && u[1] == 200 && u[2] == 255);
  CHECK(ye[0] == 255 && ye[1] == 255 && ye[2] == 0);
  free(px);
  /* Above 1 ULP the 1-ULP voxel is no longer coloured; the others still are. */
  o.thr.ulp = 1;
  px = shoot_slice(&in, &o, "test_viewer_overlay.png", 128, 96, &st);
  REQUIRE(px != NULL);
  check_overlay(px, a, b, 1.0, &o.thr, st.diff_range);
  free(px);
  /* Half opacity blends the colour with the grey value. */
  o.thr.ulp = 0;
  o.opacity = 0.5;
  px = shoot_slice(&in, &o, "test_viewer_overlay.png", 128, 96, &st);
  REQUIRE(px != NULL);
  check_overlay(px, a, b, 0.5, &o.thr, st.diff_range);
  free(px);
  free(a);
  free(b);
}

/* The magnitude scale and its key, in absolute mode with a given range of 6: the two
 * differences of 5 at (3, 2) and (10, 7) (5 up to float rounding of 63.2 + 5) sit at 5/6
 * of it, 13.3 of 16 levels, inside level 14 (A > B: +14, A < B: -14); the picture's key
 * shows those same colours in those levels' cells, and the legend band is exactly the
 * one the legend code draws for that state. */
DBTR_TEST(gl_legend_key) {
  need_display();
  float *a = ramp_volume(16, 12, 3), *b = a ? overlay_b(a) : NULL;
  REQUIRE(a != NULL && b != NULL);
  dbtr_view_input in = {"key_a.tif", "key_b.tif", grid_of(16, 12, 3, 1.0, 1.0), a, b};
  dbtr_view_opts o;
  ramp_opts(&o);
  o.diff = 1;
  o.thr.mode = DBTR_VIEW_THR_ABS;
  o.diff_range = 6.0;
  dbtr_view_state st;
  int pw = 0, ph = 0;
  unsigned char *px = shoot_state(&in, &o, "test_viewer_key.png", &pw, &ph, &st);
  REQUIRE(px != NULL);
  CHECK_NEAR(st.diff_range, 6.0, 0.0); /* given: kept */
  dbtr_view_legend L;
  legend_of(&L, &st, &in, 128);
  REQUIRE(pw == DBTR_VIEW_LEGEND_MIN_W && ph == 96 + L.height);
  unsigned char *area = slice_area(px, pw, ph, 128, 96, &in, &st);
  REQUIRE(area != NULL);
  unsigned char c14[3], cm14[3];
  dbtr_view_diff_rgb(14, c14);
  dbtr_view_diff_rgb(-14, cm14);
  CHECK_EQ_INT(memcmp(voxel_px(area, 3, 2), c14, 3), 0);
  CHECK_EQ_INT(memcmp(voxel_px(area, 10, 7), cm14, 3), 0);
  const unsigned char *band = px + 3 * (size_t)96 * (size_t)pw;
  int ky = L.key_y + L.key_h / 2;
  CHECK_EQ_INT(memcmp(band + 3 * ((size_t)ky * (size_t)pw + (size_t)(dbtr_view_legend_cell_x(&L, 14) + 1)), c14, 3), 0);
  CHECK_EQ_INT(memcmp(band + 3 * ((size_t)ky * (size_t)pw + (size_t)(dbtr_view_legend_cell_x(&L, -14) + 1)), cm14, 3),
               0);
  /* The words: which files, the slice, the grey mapping, the counts, the scale. */
  CHECK_STR_CONTAINS(L.lines[0], "A: key_a.tif (shown)");
  CHECK_STR_CONTAINS(L.lines[2], "slice 1 of 0-2, z 1 mm");
  CHECK_STR_CONTAINS(L.lines[3], "W 100 L 50: black 0, white 100");
  CHECK_STR_CONTAINS(L.lines[4], "differ: any bit, overlay on");
  CHECK_STR_CONTAINS(L.lines[5], "4 voxels here, 5 in 2 slices"); /* 4 on slice 1, 1 on slice 2 */
  CHECK_STR_CONTAINS(L.label_hi, "+6");
  CHECK_STR_CONTAINS(L.caption, "linear");
  unsigned char *ref = malloc((size_t)pw * (size_t)L.height * 3);
  REQUIRE(ref != NULL);
  dbtr_view_legend_draw(&L, ref, 0);
  CHECK_EQ_INT(memcmp(band, ref, (size_t)pw * (size_t)L.height * 3), 0);
  free(ref);
  free(area);
  free(px);
  free(a);
  free(b);
}

/* Without --size, a small volume is scaled up by a whole number: 32 x 20 voxels at 20
 * pixels each (the smallest factor reaching 640), or at the --scale given. */
DBTR_TEST(gl_screenshot_scale) {
  need_display();
  float *a = ramp_volume(32, 20, 3);
  REQUIRE(a != NULL);
  dbtr_view_input in = {"scale.tif", NULL, grid_of(32, 20, 3, 1.0, 1.0), a, NULL};
  dbtr_view_opts o;
  dbtr_view_opts_default(&o);
  o.slice = 1;
  o.have_window = o.have_level = 1;
  o.window = 1000.0;
  o.level = 500.0;
  dbtr_view_state st;
  unsigned char *px = shoot_slice(&in, &o, "test_viewer_scale.png", 640, 400, &st);
  REQUIRE(px != NULL);
  /* Voxel (x, y) fills pixels 20x .. 20x + 19: its two corners have its grey value. */
  for (int y = 0; y < 20; y += 7)
    for (int x = 0; x < 32; x += 5) {
      int g = dbtr_view_grey8((double)ramp((size_t)x, (size_t)y, 1), 1000.0, 500.0);
      CHECK_LE(abs(px[3 * ((size_t)(20 * y) * 640 + (size_t)(20 * x))] - g), GREY_TOL);
      CHECK_LE(abs(px[3 * ((size_t)(20 * y + 19) * 640 + (size_t)(20 * x + 19))] - g), GREY_TOL);
    }
  free(px);
  o.scale = 3;
  px = shoot_slice(&in, &o, "test_viewer_scale.png", 96, 60, &st);
  CHECK(px != NULL);
  free(px);
  free(a);
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
  unsigned char *px = shoot_slice(&in, &o, "test_viewer_script.png", 128, 96, &st);
  REQUIRE(px != NULL);
  const unsigned char *p44 = voxel_px(px, 4, 4), *p88 = voxel_px(px, 8, 8);
  unsigned char c[3];
  size_t i44 = (6 * 12 + 4) * 16 + 4;
  dbtr_view_diff_rgb(dbtr_view_diff_level(a[i44], b[i44], &o.thr, st.diff_range), c);
  CHECK_EQ_INT(memcmp(p44, c, 3), 0);
  CHECK(p44[0] == 255 && p44[1] == p44[2] && p44[1] < 200); /* red: A > B */
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
  REQUIRE(px != NULL);
  /* The same picture as gl_overlay_exact, through the files: the viewer's state for these
   * options is that one's (slice 1, W 100, L 50, the overlay on). */
  dbtr_view_input in = {"test_viewer_cmd_a.tif", "test_viewer_cmd_b.tif", g, a, b};
  dbtr_view_state st;
  dbtr_view_state_init(&st, &g, 1, 100.0, 50.0);
  size_t counts[3];
  double max_mag = 0.0;
  dbtr_view_count_diffs(a, b, 16, 12, 3, &st.thr, counts, &max_mag);
  st.slice = 1;
  st.diff_on = 1;
  st.diff_counts = counts;
  st.diff_range = dbtr_view_nice_range(max_mag, st.thr.mode);
  unsigned char *area = slice_area(px, w, h, 128, 96, &in, &st);
  REQUIRE(area != NULL);
  check_overlay(area, a, b, 1.0, &st.thr, st.diff_range);
  free(area);
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
  snprintf(cmd, sizeof cmd, "'%s' view test_viewer_cmd_a.tif --screenshot x.png --scale 2 --size 64x64 2>&1", exe);
  CHECK_EQ_INT(run_status(cmd, NULL, out, sizeof out), 2);
  CHECK_STR_CONTAINS(out, "--scale or --size");
  /* --scale 3: 48 x 36 pixels of slice in a picture as wide as the legend's minimum. */
  snprintf(cmd, sizeof cmd, "'%s' view test_viewer_cmd_a.tif --screenshot test_viewer_cmd.png --scale 3 --force 2>&1", exe);
  CHECK_EQ_INT(run_status(cmd, NULL, out, sizeof out), 0);
  px = read_png("test_viewer_cmd.png", &w, &h);
  REQUIRE(px != NULL);
  CHECK_EQ_INT(w, DBTR_VIEW_LEGEND_MIN_W);
  CHECK_GT(h, 36);
  free(px);
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
  int w = 1152, h = 598;
  dbtr_view_state st;
  unsigned char *px = shoot_slice(&in, &o, "test_viewer_large.png", w, h, &st);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("2304 x 1196 x 45 pair: percentiles, diff counts, one slice rendered and written in %.2f s\n",
         (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  REQUIRE(px != NULL);
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

DBTR_TEST_MAIN(gl_screenshot_grey, gl_screenshot_aspect, gl_overlay_exact, gl_legend_key, gl_screenshot_scale,
               gl_script_next_diff, gl_xdotool_keys, gl_cmd_view, gl_large_volume)
