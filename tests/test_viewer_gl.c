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

DBTR_TEST_MAIN(gl_screenshot_grey, gl_screenshot_aspect, gl_overlay_exact, gl_script_next_diff, gl_xdotool_keys,
               gl_cmd_view, gl_large_volume)
