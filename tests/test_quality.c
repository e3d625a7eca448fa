/* tests/test_quality.c: the per-object quality measures (quality/quality.h) on volumes whose
 * answers are known: the ground truth gives each object's documented contrast; a synthetic
 * volume of known contrast and noise gives the known CNR; a Gaussian depth profile gives its
 * known FWHM. And the phantom's objects survive the scan file (/phantom). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "phantoms/objects_h5.h"
#include "phantoms/simulate.h"
#include "quality/quality.h"
#include "test.h"
#include "tests/rng.h"
#include "tests/tmpdir.h"

/* Half an ulp of x's float: the rounding of one stored voxel. */
static double half_ulp_f(double x) {
  float f = (float)fabs(x);
  return 0.5 * (double)(nextafterf(f, FLT_MAX) - f);
}

/* Every test object of p whose regions lie whole in one set of shapes measures its documented
 * contrast on the truth volume of grid; 1 when at least one does. */
static int truth_exact(const dbtr_phantom *p, const float *truth, const dbtr_grid *grid) {
  dbtr_quality q;
  CHECK_OK(dbtr_quality_measure(&q, truth, DBTR_PREC_FLOAT, grid, p));
  size_t exact = 0;
  for (size_t i = 0; i < q.n; i++) {
    const dbtr_quality_object *ob = q.obj + i;
    if (!ob->measured || ob->partial || ob->n_background < 2) continue;
    /* Every voxel of both regions lies whole in one set of shapes, so each region holds one
     * float value, its mean is that value exactly (n equal floats sum exactly in double), and the
     * background has no spread. The truth's voxel is the shapes' mu sum rounded once to float:
     * the contrast is the documented one to half an ulp of each of the two floats. */
    double tol = half_ulp_f(ob->mean_object) + half_ulp_f(ob->mean_background);
    CHECK_NEAR(ob->contrast, ob->expected, tol);
    CHECK(ob->sd_background == 0.0);
    CHECK(isinf(ob->cnr));
    exact++;
  }
  dbtr_quality_free(&q);
  return exact > 0;
}

/* The tiny preset's breast scan and truth, written with its objects and read back: the file
 * gives back every shape and record as made, and the truth its documented contrasts. */
DBTR_TEST(truth_gives_documented_contrast_breast) {
  dbtr_simulate_opts o = {.system = dbtr_system_find("tiny"), .kind = DBTR_PHANTOM_BREAST, .seed = 1,
                          .supersample = 1, .line_integrals = 1};
  dbtr_phantom made = {0}, read = {0};
  o.phantom = &made;
  dbtr_scan scan;
  float *truth = NULL;
  REQUIRE_OK(dbtr_simulate(&o, &scan, &truth));
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "scan.h5");
  REQUIRE_OK(dbtr_scan_write_phantom(&scan, path, NULL, &made));
  int found = 0;
  REQUIRE_OK(dbtr_phantom_read(&read, path, &found));
  CHECK_EQ_INT(found, 1);
  REQUIRE(read.n_shapes == made.n_shapes);
  for (size_t i = 0; i < made.n_shapes; i++) {
    const dbtr_shape *a = read.shapes + i, *b = made.shapes + i;
    CHECK(a->kind == b->kind && a->mu == b->mu && a->clipped == b->clipped);
    CHECK(!memcmp(a->center, b->center, sizeof a->center) && !memcmp(a->half, b->half, sizeof a->half));
    CHECK(!memcmp(a->axes, b->axes, sizeof a->axes));
    CHECK(!a->clipped || (!memcmp(a->clip_lo, b->clip_lo, sizeof a->clip_lo) &&
                          !memcmp(a->clip_hi, b->clip_hi, sizeof a->clip_hi)));
    CHECK(!strcmp(read.info[i].kind, made.info[i].kind));
    CHECK(!strcmp(read.info[i].material, made.info[i].material));
    CHECK(read.info[i].contrast == made.info[i].contrast && read.info[i].surround == made.info[i].surround &&
          read.info[i].target == made.info[i].target && read.info[i].mu == made.info[i].mu);
  }
  CHECK(truth_exact(&read, truth, &scan.grid)); /* the reference mass at least */
  dbtr_phantom_free(&made);
  dbtr_phantom_free(&read);
  dbtr_scan_free(&scan);
  free(truth);
  tmp_remove(dir);
}

/* The ACR-like phantom's test objects are thinner than the tiny preset's 2 mm slices: its
 * truth on a grid of 0.25 x 0.25 x 0.5 mm voxels, as dbtr_simulate voxelises (3^3 points). */
DBTR_TEST(truth_gives_documented_contrast_acr) {
  dbtr_grid g = {96, 96, 24, 0.25, 0.25, 0.5, {0.125, 0.125, 0.25}};
  dbtr_phantom p;
  REQUIRE_OK(dbtr_phantom_make(&p, DBTR_PHANTOM_ACR, &g, 1));
  float *truth = malloc(96 * 96 * 24 * sizeof(float));
  REQUIRE(truth);
  REQUIRE_OK(dbtr_phantom_voxelize(&p, &g, 3, truth));
  CHECK(truth_exact(&p, truth, &g)); /* the fibres and masses */
  dbtr_phantom_free(&p);
  free(truth);
}


/* One box region of half sides h about c, a test object lying in nothing, contrast expected. */
static void one_box(dbtr_phantom *p, dbtr_shape *s, dbtr_object_info *in, const double c[3], const double h[3],
                    double expected) {
  memset(s, 0, sizeof *s);
  memset(in, 0, sizeof *in);
  s->kind = DBTR_SHAPE_BOX;
  for (int j = 0; j < 3; j++) s->center[j] = c[j], s->half[j] = h[j], s->axes[j][j] = 1.0;
  snprintf(in->kind, sizeof in->kind, "box");
  in->contrast = expected;
  in->surround = -1;
  in->target = 1;
  *p = (dbtr_phantom){"synthetic", 20.0, 1, s, in};
}

DBTR_TEST(known_cnr) {
  /* 128 x 128 x 5 voxels of 1 mm; a box of half side 20.5 mm about (64, 64, 2) in slice 2
   * only, contrast c = 5 sigma over a background b with Gaussian noise sigma everywhere. */
  dbtr_grid g = {128, 128, 5, 1.0, 1.0, 1.0, {0.0, 0.0, 0.0}};
  const double b = 0.05, sigma = 0.002, c = 5.0 * sigma, ctr[3] = {64, 64, 2}, h[3] = {20.5, 20.5, 0.6};
  float *vol = malloc(128 * 128 * 5 * sizeof(float));
  REQUIRE(vol);
  uint64_t st = 29;
  for (size_t i = 0; i < 128 * 128 * 5; i++) { /* Box-Muller */
    double u1 = uniform(&st, 0x1p-53, 1.0), u2 = uniform(&st, 0.0, 1.0);
    size_t x = i % 128, y = (i / 128) % 128, z = i / (128 * 128);
    int in = z == 2 && x >= 44 && x <= 84 && y >= 44 && y <= 84;
    vol[i] = (float)(b + (in ? c : 0.0) + sigma * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
  }
  dbtr_phantom p;
  dbtr_shape s;
  dbtr_object_info in;
  one_box(&p, &s, &in, ctr, h, c);
  dbtr_quality q;
  REQUIRE_OK(dbtr_quality_measure(&q, vol, DBTR_PREC_FLOAT, &g, &p));
  REQUIRE(q.n == 1);
  const dbtr_quality_object *o = q.obj;
  /* Regions by hand: voxels whole in [43.5, 84.5] are columns 44..84, 41^2 = 1681; the frame is
   * 2 voxels from the box ([41.5, 86.5]: a voxel touching it, columns 41..87, 47 of them, is left
   * out) and 20.5 wide (the larger half side: centres in [21, 107], 87 columns): 87^2 - 47^2. */
  CHECK(o->n_object == 1681);
  CHECK(o->n_background == 87 * 87 - 47 * 47);
  CHECK(o->focus_slice == 2);
  /* CNR = c / sigma = 5. Its estimate errs by the noise of the two means (sigma sqrt(1/1681 +
   * 1/5360) = 0.028 sigma, relative 0.0056 of c) and of the sample sd (relative standard error
   * 1 / sqrt(2 (n - 1)) = 0.0097): together 0.011 of the CNR; 4 standard errors = 0.044. */
  CHECK_NEAR(o->cnr, 5.0, 5.0 * 0.044);
  CHECK_NEAR(o->contrast, c, 4.0 * 0.028 * sigma);
  dbtr_quality_free(&q);
  free(vol);
}

DBTR_TEST(gaussian_fwhm_on_samples) {
  /* sigma chosen so that the half maximum falls exactly on slices 7 and 13 around the peak at
   * 10: FWHM = 2 sqrt(2 ln 2) sigma = 6 dz. The profile's rounding (a few ulps of 0.5) moves a
   * crossing by that over the slope (about 0.2 a slice): far below 1e-12 mm. */
  const double dz = 1.5, sigma = 3.0 * dz / sqrt(2.0 * log(2.0));
  double prof[21];
  for (int k = 0; k < 21; k++) prof[k] = exp(-((k - 10) * dz) * ((k - 10) * dz) / (2.0 * sigma * sigma));
  CHECK_NEAR(dbtr_quality_fwhm(prof, 21, 10, dz), 2.0 * sqrt(2.0 * log(2.0)) * sigma, 1e-12);
  /* A profile that never falls to half on one side has no FWHM. */
  CHECK(isnan(dbtr_quality_fwhm(prof, 12, 10, dz)));
}

DBTR_TEST(gaussian_fwhm_from_volume) {
  /* A box object whose contrast in slice k is c exp(-(z_k - z0)^2 / (2 sigma^2)), sigma 2.5 mm,
   * dz 1 mm, z0 on slice 10: the ASF is the Gaussian, its FWHM 2 sqrt(2 ln 2) sigma = 5.887 mm.
   * The crossings (2.94 slices out) lie between samples 2 and 3, where linear interpolation errs
   * by at most (h^2 / 8) max|f''| = 0.042 / 8 in value (|f''| <= 0.042 on [2, 3] mm), which over
   * the slope (|f'| >= 0.23 there) is 0.023 mm a side: 0.046 mm in the width. The float volume's
   * rounding adds about 1e-7 relative: nothing at this scale. */
  dbtr_grid g = {32, 32, 21, 1.0, 1.0, 1.0, {0.0, 0.0, 0.0}};
  const double b = 0.05, c = 0.01, sigma = 2.5, ctr[3] = {16, 16, 10}, h[3] = {4.5, 4.5, 0.6};
  float *vol = malloc(32 * 32 * 21 * sizeof(float));
  REQUIRE(vol);
  for (size_t i = 0; i < 32 * 32 * 21; i++) {
    size_t x = i % 32, y = (i / 32) % 32, z = i / (32 * 32);
    int in = x >= 12 && x <= 20 && y >= 12 && y <= 20;
    double dz = (double)z - 10.0;
    vol[i] = (float)(b + (in ? c * exp(-dz * dz / (2.0 * sigma * sigma)) : 0.0));
  }
  dbtr_phantom p;
  dbtr_shape s;
  dbtr_object_info in;
  one_box(&p, &s, &in, ctr, h, c);
  dbtr_quality q;
  REQUIRE_OK(dbtr_quality_measure(&q, vol, DBTR_PREC_FLOAT, &g, &p));
  REQUIRE(q.n == 1 && q.obj[0].n_object == 81);
  CHECK(q.obj[0].focus_slice == 10);
  CHECK_NEAR(q.obj[0].fwhm, 2.0 * sqrt(2.0 * log(2.0)) * sigma, 0.046);
  dbtr_quality_free(&q);
  free(vol);
}

DBTR_TEST(scan_without_objects) {
  /* A scan written without a phantom reads as no objects, and quality names the file. */
  dbtr_simulate_opts o = {.system = dbtr_system_find("tiny"), .kind = DBTR_PHANTOM_BREAST, .seed = 1,
                          .supersample = 1, .line_integrals = 1};
  dbtr_scan scan;
  REQUIRE_OK(dbtr_simulate(&o, &scan, NULL));
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "plain.h5");
  REQUIRE_OK(dbtr_scan_write(&scan, path, NULL));
  dbtr_scan back;
  CHECK_OK(dbtr_scan_read(&back, path)); /* the scan itself reads as ever */
  dbtr_scan_free(&back);
  dbtr_phantom p;
  int found = 1;
  CHECK_OK(dbtr_phantom_read(&p, path, &found));
  CHECK_EQ_INT(found, 0);
  CHECK_EQ_INT(dbtr_quality_objects(&p, path, NULL), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "no /phantom objects");
  dbtr_scan_free(&scan);
  tmp_remove(dir);
}

DBTR_TEST(regions_by_hand) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "r.json");
  REQUIRE(write_text(path, "{\"regions\": [{\"name\": \"lesion\", \"center\": [1, 2, 3], \"half\": [4, 5, 6], "
                           "\"contrast\": 0.04}, {\"shape\": \"box\", \"center\": [0, 0, 0], \"half\": [1, 1, 1]}]}") == 0);
  dbtr_phantom p;
  REQUIRE_OK(dbtr_quality_regions_read(&p, path));
  CHECK(p.n_shapes == 2);
  CHECK(!strcmp(p.info[0].kind, "lesion") && p.info[0].contrast == 0.04 && p.shapes[0].kind == DBTR_SHAPE_ELLIPSOID);
  CHECK(p.shapes[1].kind == DBTR_SHAPE_BOX && isnan(p.info[1].contrast) && p.info[1].target == 1);
  dbtr_phantom_free(&p);
  REQUIRE(write_text(path, "{\"regions\": [{\"center\": [1, 2], \"half\": [4, 5, 6]}]}") == 0);
  CHECK_EQ_INT(dbtr_quality_regions_read(&p, path), DBTR_EFORMAT);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "region 0: \"center\"");
  tmp_remove(dir);
}

DBTR_TEST_MAIN(truth_gives_documented_contrast_breast, truth_gives_documented_contrast_acr, known_cnr,
               gaussian_fwhm_on_samples, gaussian_fwhm_from_volume, scan_without_objects, regions_by_hand)
