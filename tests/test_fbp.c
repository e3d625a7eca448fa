/* tests/test_fbp.c: filtered back projection (recon/fbp.h, engine/fbp.h, docs/fbp.md) on the CPU:
 * the kernel against its hand-derived taps, a full-thickness bar's attenuation, bits for any
 * thread count, ML-EM's FBP start, and the refusals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/fbp.h"
#include "engine/session.h"
#include "phantoms/systems.h"
#include "recon/cpu.h"
#include "recon/error.h"
#include "recon/fbp.h"
#include "recon/mlem.h"
#include "tests/test.h"

static const double PI = 3.14159265358979323846;

/* Ramp x Hann at cut-off 1 (Nyquist, fc = 1/(2 tau)) is the Ram-Lak kernel (Kak and Slaney, eq.
 * 3.61: r[0] = 1/(4 tau^2), r[odd n] = -1/(pi^2 n^2 tau^2), r[even n] = 0) convolved with the Hann
 * window's taps (1/4, 1/2, 1/4), since (1 + cos(2 pi f tau)) / 2 is their transform:
 *   h[0] = r[0]/2 + r[1]/2          = 1/(8 tau^2) - 1/(2 pi^2 tau^2)
 *   h[1] = r[1]/2 + (r[0] + r[2])/4 = 1/(16 tau^2) - 1/(2 pi^2 tau^2)
 *   h[2] = (r[1] + r[3])/4          = -(1 + 1/9) / (4 pi^2 tau^2) = -5/(18 pi^2 tau^2)
 *   h[3] = (r[2] + r[4])/4 + r[3]/2 = -1/(18 pi^2 tau^2).
 * At cut-off 1/2 (fc = 1/(4 tau)), from recon/fbp.h's closed form with K(pi/2) = 2/pi - 4/pi^2,
 * K(3 pi/2) = -2/(3 pi) - 4/(9 pi^2), K(pi) = -2/pi^2:
 *   h[0] = fc^2 (1/2 - 2/pi^2),  h[1] = fc^2 (8/(3 pi) - 56/(9 pi^2)).
 * Each tap is a few sines (within 1e-16 of the reduced argument's) and about ten roundings of
 * terms no larger than fc^2: 1e-14 fc^2 bounds the difference with room. */
DBTR_TEST(ramp_kernel_taps) {
  double tau = 0.14, h[4], t2 = tau * tau;
  dbtr_fbp_ramp_kernel(tau, 1.0, 3, h);
  double fc2 = 1.0 / (4.0 * t2), tol = 1e-14 * fc2;
  CHECK_NEAR(h[0], 1.0 / (8.0 * t2) - 1.0 / (2.0 * PI * PI * t2), tol);
  CHECK_NEAR(h[1], 1.0 / (16.0 * t2) - 1.0 / (2.0 * PI * PI * t2), tol);
  CHECK_NEAR(h[2], -5.0 / (18.0 * PI * PI * t2), tol);
  CHECK_NEAR(h[3], -1.0 / (18.0 * PI * PI * t2), tol);
  dbtr_fbp_ramp_kernel(tau, 0.5, 1, h);
  fc2 = 1.0 / (16.0 * t2);
  CHECK_NEAR(h[0], fc2 * (0.5 - 2.0 / (PI * PI)), 1e-14 * fc2);
  CHECK_NEAR(h[1], fc2 * (8.0 / (3.0 * PI) - 56.0 / (9.0 * PI * PI)), 1e-14 * fc2);
}

/* The Hann low-pass at cut-off 1 is the taps (1/4, 1/2, 1/4) (its transform (1 + cos(2 pi f
 * tau)) / 2), and the rest zero but for sin(n pi) of a rounded pi, below 1e-15. */
DBTR_TEST(lowpass_kernel_taps) {
  size_t half = dbtr_fbp_lowpass_half(1.0);
  double g[16];
  REQUIRE(half < 16);
  dbtr_fbp_lowpass_kernel(1.0, half, g);
  CHECK_NEAR(g[0], 0.5, 1e-15);
  CHECK_NEAR(g[1], 0.25, 1e-15);
  for (size_t n = 2; n <= half; n++) CHECK_NEAR(g[n], 0.0, 1e-15);
}

/* The series sine against libm's over the kernels' arguments (pi c n for n to 4096): both are
 * within an ulp or two of sin, whose size here is at most 1, after a reduction exact to 1e-19 a
 * unit of k: 1e-15 bounds their difference. */
DBTR_TEST(series_sine) {
  for (int i = -4096 * 8; i <= 4096 * 8; i++) {
    double x = PI * (double)i / 8.0 + 1e-3 * (double)(i % 7);
    CHECK_NEAR(dbtr_fbp_sin(x), sin(x), 1e-15);
  }
  /* asin's series: at most 80 partial sums, each below 0.8 and rounded once (2^-53 relative). */
  CHECK_NEAR(dbtr_fbp_asin(0.5), PI / 6.0, 80 * 0.8 * 0x1p-53);
  CHECK_NEAR(dbtr_fbp_asin(0.7), asin(0.7), 80 * 0.8 * 0x1p-53);
}

/* The tiny preset's geometry and grid, and the line integrals A x of x (double, CPU). */
typedef struct {
  dbtr_scan scan;
  dbtr_grid grid;
  double *x, *y;
  size_t nv, np;
} problem;

static void problem_make(problem *p, void (*fill)(const dbtr_grid *, double *)) {
  memset(p, 0, sizeof *p);
  const dbtr_system *sys = dbtr_system_find("tiny");
  REQUIRE(sys);
  REQUIRE_OK(dbtr_system_geometry(sys, &p->scan.geom));
  p->grid = sys->grid;
  p->nv = p->grid.nx * p->grid.ny * p->grid.nz;
  p->np = p->scan.geom.n_views * p->scan.geom.n_rows * p->scan.geom.n_cols;
  p->x = calloc(p->nv, sizeof *p->x);
  p->y = calloc(p->np, sizeof *p->y);
  REQUIRE(p->x && p->y);
  fill(&p->grid, p->x);
  dbtr_cpu_projector *cp = NULL;
  REQUIRE_OK(dbtr_cpu_projector_create(&cp, &p->scan.geom, &p->grid, DBTR_PREC_DOUBLE, 2));
  REQUIRE_OK(dbtr_cpu_forward(cp, p->x, p->y));
  dbtr_cpu_projector_destroy(&cp);
  p->scan.proj = p->y;
  p->scan.quantity = DBTR_QUANTITY_LINE_INTEGRAL;
}

static void problem_free(problem *p) {
  dbtr_geom_free(&p->scan.geom);
  free(p->x);
  free(p->y);
}

static const double MU = 0.05; /* breast tissue, 1/mm */

/* A bar through the whole grid's depth (48 mm), 8 mm wide along x (the tube's motion) and 40 mm
 * along y, centred: an object whose spectrum lies along the fz = 0 plane that every view sees. */
static void fill_bar(const dbtr_grid *g, double *x) {
  for (size_t z = 0; z < g->nz; z++)
    for (size_t j = 0; j < g->ny; j++)
      for (size_t i = 0; i < g->nx; i++) {
        double xx = g->origin[0] + (double)i * g->dx, yy = g->origin[1] + (double)j * g->dy;
        if (fabs(xx) < 4.0 && yy > 20.0 && yy < 60.0) x[(z * g->ny + j) * g->nx + i] = MU;
      }
}

static void fill_blob(const dbtr_grid *g, double *x) {
  for (size_t z = 0; z < g->nz; z++)
    for (size_t j = 0; j < g->ny; j++)
      for (size_t i = 0; i < g->nx; i++) {
        double xx = g->origin[0] + (double)i * g->dx, yy = g->origin[1] + (double)j * g->dy;
        double zz = g->origin[2] + (double)z * g->dz;
        double r2 = xx * xx / 400.0 + (yy - 40.0) * (yy - 40.0) / 400.0 + (zz - 20.0) * (zz - 20.0) / 100.0;
        if (r2 < 1.0) x[(z * g->ny + j) * g->nx + i] = MU * (1.0 + (double)((i + j) % 3));
      }
}

/* The FBP volume on the CPU path of the precision given (malloc'd, n_vox doubles). */
static double *fbp_of(const problem *p, const char *precision, int threads, const dbtr_fbp_opts *fo) {
  double *v = malloc(p->nv * sizeof *v);
  dbtr_backend_opts bo = {.backend = "cpu", .precision = precision, .threads = threads};
  if (v && dbtr_fbp_volume(&p->scan, &p->grid, &bo, fo, 0, v, NULL)) {
    fprintf(stderr, "fbp: %s\n", dbtr_errmsg());
    free(v);
    v = NULL;
  }
  return v;
}

/* Ramp filtering removes what no view measures, the spectrum's low lateral frequencies at depth
 * (the missing wedge), so FBP gives attenuation differences, not absolute values: around the bar
 * the volume dips below 0 (measured -0.2 mu). That removed part is a blur of the bar at the scale
 * of its depth over the arc's half-angle (48 mm / 2 / tan 20 deg = 66 mm), so between the bar's
 * core (|x| < 2 mm) and a band beside it (6 to 10 mm out) it changes by about its size times
 * 8 mm / 66 mm = 0.03 mu; the Hann window (taps within 2 pixels) leaves the core, 2 mm from the
 * edges, alone. In the in-focus slices (the middle third of the depth) the contrast core - band
 * must then be mu within 0.1 mu, which also leaves room for the 9 discrete views and the
 * bilinear interpolation of the projector pair (measured: 0.99 to 1.00 mu). */
DBTR_TEST(bar_contrast) {
  problem p;
  problem_make(&p, fill_bar);
  double *v = fbp_of(&p, "double", 2, NULL);
  REQUIRE(v);
  const dbtr_grid *g = &p.grid;
  for (size_t z = g->nz / 3; z < 2 * g->nz / 3; z++) {
    double core = 0.0, band = 0.0;
    size_t nc = 0, nb = 0;
    for (size_t j = 30; j < 50; j++) /* y 30.5 to 49.5 mm: inside the bar's 20 to 60 */
      for (size_t i = 0; i < g->nx; i++) {
        double ax = fabs(g->origin[0] + (double)i * g->dx), val = v[(z * g->ny + j) * g->nx + i];
        if (ax < 2.0) core += val, nc++;
        else if (ax > 6.0 && ax < 10.0) band += val, nb++;
      }
    CHECK_NEAR((core / (double)nc - band / (double)nb) / MU, 1.0, 0.1);
  }
  free(v);
  problem_free(&p);
}

/* ML-EM from FBP: before the first iteration the backend holds the FBP volume of the same path,
 * each value below DBTR_FBP_FLOOR raised to it, rounded to the backend's type. */
DBTR_TEST(init_fbp_start_volume) {
  problem p;
  problem_make(&p, fill_blob);
  double *v = fbp_of(&p, "float", 2, NULL);
  REQUIRE(v);
  size_t floored = 0;
  for (size_t i = 0; i < p.nv; i++)
    if (!(v[i] >= DBTR_FBP_FLOOR)) v[i] = DBTR_FBP_FLOOR, floored++;
  CHECK_GT(floored, (size_t)0); /* the dips beside the object are floored */
  float *want = malloc(p.nv * sizeof *want), *have = malloc(p.nv * sizeof *have);
  REQUIRE(want && have);
  dbtr_convert_to_float(DBTR_PREC_DOUBLE, v, p.nv, want);
  dbtr_session_opts so = {.recon = {.backend = {.backend = "cpu", .precision = "float", .threads = 2}, .start = "fbp"}};
  dbtr_session *s = NULL;
  REQUIRE_OK(dbtr_session_open(&s, &p.scan, &p.grid, &so));
  dbtr_backend *b = dbtr_session_backend(s);
  CHECK_OK(b->get_volume(b, have));
  CHECK(!memcmp(want, have, p.nv * sizeof *want));
  dbtr_session_close(&s);
  free(want);
  free(have);
  free(v);
  problem_free(&p);
}

/* Each refusal names its option. */
DBTR_TEST(refusals) {
  problem p;
  problem_make(&p, fill_blob);
  dbtr_session *s = NULL;
  dbtr_session_opts so = {.recon = {.backend = {.backend = "cpu"}, .start = "fbp", .init = 0.02}};
  CHECK(dbtr_session_open(&s, &p.scan, &p.grid, &so) == DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "start fbp and a uniform start value");
  so.recon.init = 0.0;
  so.recon.start = "ramp";
  CHECK(dbtr_session_open(&s, &p.scan, &p.grid, &so) == DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "start 'ramp'");
  so.recon.start = "fbp";
  so.recon.fbp.cutoff = 1.5;
  CHECK(dbtr_session_open(&s, &p.scan, &p.grid, &so) == DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "fbp cutoff 1.5");
  dbtr_recon *r = NULL;
  dbtr_recon_opts ro = {.algorithm = "fbp", .start = "fbp", .backend = {.backend = "cpu"}};
  CHECK(dbtr_recon_open(&r, &p.scan, &p.grid, &ro) == DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "algorithm fbp takes no start volume");
  ro.start = NULL;
  REQUIRE_OK(dbtr_recon_open(&r, &p.scan, &p.grid, &ro));
  CHECK(dbtr_recon_iterate(r, NULL) == DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "algorithm fbp has no iterations");
  dbtr_recon_close(&r);
  dbtr_geom one = p.scan.geom;
  one.n_views = 1;
  dbtr_fbp_plan plan;
  CHECK(dbtr_fbp_plan_make(&one, &plan) == DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "needs 2 or more");
  problem_free(&p);
}

DBTR_TEST(threads_same_bits) {
  problem p;
  problem_make(&p, fill_blob);
  dbtr_fbp_opts fo = {.cutoff = 0.8, .slice = 0.5};
  for (int prec = 0; prec < 2; prec++) {
    const char *name = prec ? "double" : "float";
    double *a = fbp_of(&p, name, 1, &fo), *b = fbp_of(&p, name, 2, &fo), *c = fbp_of(&p, name, 3, &fo);
    REQUIRE(a && b && c);
    CHECK(!memcmp(a, b, p.nv * sizeof *a));
    CHECK(!memcmp(a, c, p.nv * sizeof *a));
    free(a);
    free(b);
    free(c);
  }
  problem_free(&p);
}

DBTR_TEST_MAIN(ramp_kernel_taps, lowpass_kernel_taps, series_sine, bar_contrast, init_fbp_start_volume, refusals,
               threads_same_bits)
