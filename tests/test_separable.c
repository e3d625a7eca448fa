/* tests/test_separable.c: the separable tables (recon/separable.h), which the CPU reference and
 * the GPU use for every preset, against the per-pixel forms, on the CPU: the same bits for
 * every voxel's gather through the GPU's gather (kernels/separable.h), and for every forward
 * ray and every voxel's gather of the CPU reference's projector, in float and in double, for
 * every preset shape at test size; and a turned detector is recognised as not separable, and
 * projected per pixel. The GPU's gather without the test of each product's weight gives the
 * same bits wherever its sums are finite, and finds them not finite where it read an infinite
 * or NaN pixel term (a fault planted there, sums_finite always true, fails every preset's case
 * with planted terms). The tables come from the shared builder, so a fault planted there
 * (tried: the crossings of the wrong slice in sep_cross, a group's last row left out in
 * sep_groups) fails every preset's case, as does one in the CPU's gather (tried: a voxel's
 * rows in reverse order); the turned detector's case fails only when both of
 * the builder's checks (sep_rays and sep_check) are disabled, as either one catches it. The
 * CPU's footprint check (sep_feet) holds for every preset and implies sep_check's verdict.
 * The same gather in the factored order (recon/modes.def's gather column) gives the bits of
 * that order's sum over each voxel's own slots, on the CPU and, in cpu-match+factored, on the
 * GPU (factored_on_gpu, label gpu). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/backends.h"
#include "kernels/gpu.h"
#include "kernels/layout.h"
#include "recon/cpu.h"
#include "recon/rays.h"
#include "tests/problems.h"
#include "tests/test.h"

/* The shared arithmetic with the CPU reference's operators (recon/cpu_arith.h), and the
 * GPU's separable gather over it. */
#define DBTR_FN(name) t_##name##_d
#define DBTR_TRAITS_PREC double
#include "recon/cpu_arith.h"
#define DBTR_T double
#define DBTR_FN(name) t_##name##_d
#define DBTR_FOOT dbtr_footprint_d
#define DBTR_CROSS dbtr_cross_d
#define DBTR_SLOTW_T dbtr_slotw_d
#define DBTR_GROUPW dbtr_groupw_d
#define DBTR_GATHER_COLS DBTR_GATHER_COLS_D
#define DBTR_SEP_TABLES gpu_tables_d
#define DBTR_FINITE(a) isfinite(a)
#include "kernels/separable.h"
#define DBTR_FN(name) t_##name##_f
#define DBTR_TRAITS_PREC float
#define DBTR_GEOM_FN(name) t_##name##_d
#include "recon/cpu_arith.h"
#define DBTR_T float
#define DBTR_R double
#define DBTR_FN(name) t_##name##_f
#define DBTR_FOOT dbtr_footprint_f
#define DBTR_CROSS dbtr_cross_f
#define DBTR_SLOTW_T dbtr_slotw_f
#define DBTR_GROUPW dbtr_groupw_f
#define DBTR_GATHER_COLS DBTR_GATHER_COLS_F
#define DBTR_SEP_TABLES gpu_tables_f
#define DBTR_FINITE(a) isfinite(a)
#include "kernels/separable.h"

static void copy_foot_d(const dbtr_footprint_d *in, dbtr_footprint_d *out) { *out = *in; }

#define ST float
#define SR double
#define SF(name) t_##name##_f
#define SN(name) sep_f_##name
#define STABLES gpu_tables_f
#define SVIEW dbtr_view_d
#define SFOOT dbtr_footprint_f
#define SVIEW_OF dbtr_view_reduce
#define SFOOT_CONVERT dbtr_footprint_to_f
#define SPREC DBTR_PREC_FLOAT
#include "tests/separable_check.h"

#define ST double
#define SF(name) t_##name##_d
#define SN(name) sep_d_##name
#define STABLES gpu_tables_d
#define SVIEW dbtr_view_d
#define SFOOT dbtr_footprint_d
#define SVIEW_OF dbtr_view_reduce
#define SFOOT_CONVERT copy_foot_d
#define SPREC DBTR_PREC_DOUBLE
#include "tests/separable_check.h"

/* The GPU's gather of one precision (compare, its tables t) against the reference of each
 * order (the CPU's, factored): on finite pixel terms, and on terms of which some are infinite
 * or NaN, where some of its threads must find their sums not finite and make them again. */
#define check_gathers(compare, t)                                 \
  do {                                                            \
    for (int factored = 0; factored < 2; factored++) {            \
      size_t redone;                                              \
      CHECK_EQ_U64(compare((t), 0, factored, &redone), 0);        \
      CHECK_EQ_U64(compare((t), 1, factored, &redone), 0);        \
      CHECK_EQ_INT(redone > 0, 1);                                \
    }                                                             \
  } while (0)

/* Builds both precisions' tables for a preset at test size, turned by rotate_deg about z
 * and with the grid cropped to crop_x x crop_y voxels (0: as it is); expects them separable
 * or not, and where they are, identical results. */
static void check_problem(const char *preset, double rotate_deg, size_t crop_x, size_t crop_y, int expect_separable) {
  dbtr_geom g;
  dbtr_grid grid;
  REQUIRE_OK(test_small_problem(preset, &g, &grid));
  test_rotate_detector(&g, rotate_deg);
  if (crop_x) grid.nx = crop_x;
  if (crop_y) grid.ny = crop_y;
  sep_f_tables tf;
  sep_d_tables td;
  int sf = sep_f_tables_build(&tf, &g, &grid), sd = sep_d_tables_build(&td, &g, &grid);
  CHECK_EQ_INT(sf, expect_separable);
  CHECK_EQ_INT(sd, expect_separable);
  if (sf && expect_separable) check_gathers(sep_f_compare, &tf);
  if (sd && expect_separable) check_gathers(sep_d_compare, &td);
  /* The CPU's footprint check holds on every preset, and where it holds, so does sep_check. */
  if (expect_separable) CHECK_EQ_INT(tf.feet_ok && td.feet_ok, 1);
  if (tf.feet_ok) CHECK_EQ_INT(tf.check_ok, 1);
  if (td.feet_ok) CHECK_EQ_INT(td.check_ok, 1);
  CHECK_EQ_U64(sep_f_compare_cpu(&tf, &g, &grid), 0);
  CHECK_EQ_U64(sep_d_compare_cpu(&td, &g, &grid), 0);
  sep_f_tables_free(&tf);
  sep_d_tables_free(&td);
  dbtr_geom_free(&g);
}

/* The GPU's gather in the factored order, in cpu-match+factored (the CPU's arithmetic, the
 * factored order), back projecting random values (both signs) and then the same with one pixel
 * in 211 of view 0 infinite and another NaN: every voxel has the bits of factored_voxel's sum
 * on the host (NaN where it is NaN), from pixel terms made as the GPU makes them (back_pixel
 * of the value and the path length, which cpu-match shares with the CPU); and cpu-match's
 * gather, in the CPU's order, differs from it in some voxels, so that the comparison tells the
 * two orders apart. */
static void factored_on_gpu(const char *preset) {
  TEST_NEED_GPU();
  dbtr_geom g;
  dbtr_grid grid;
  REQUIRE_OK(test_small_problem(preset, &g, &grid));
  sep_f_tables t;
  REQUIRE(sep_f_tables_build(&t, &g, &grid));
  size_t nv = t.nx * t.ny * t.nz, np = t.nv * t.npix, views[64], start[2] = {0, t.nv};
  REQUIRE(t.nv <= 64);
  for (size_t k = 0; k < t.nv; k++) views[k] = k;
  dbtr_problem prob = {.geom = &g, .grid = &grid, .n_subsets = 1, .subset_views = views, .subset_start = start,
                       .projector = 1};
  float *y = malloc(np * sizeof *y), *e1 = malloc(np * sizeof *e1), *e2 = calloc(np, sizeof *e2);
  float *gv = malloc(nv * sizeof *gv), *cv = malloc(nv * sizeof *cv);
  REQUIRE(y && e1 && e2 && gv && cv);
  for (int plant = 0; plant < 2; plant++) {
    test_rng_state = 13;
    for (size_t i = 0; i < np; i++) {
      y[i] = (float)(test_rnd() - 0.5);
      if (plant && i < t.npix && i % 211 == 0) y[i] = INFINITY;
      if (plant && i < t.npix && i % 211 == 100) y[i] = NAN;
      e1[i] = t_back_pixel_f(y[i], t.lens[i]);
    }
    dbtr_backend *b = NULL;
    REQUIRE_OK(dbtr_backend_create(&b, DBTR_VARIANT_CPU_MATCH_FACTORED, &prob));
    CHECK_OK(b->project(b, 1, y, gv, 0));
    dbtr_backend_destroy(&b);
    REQUIRE_OK(dbtr_backend_create(&b, DBTR_MODE_CPU_MATCH, &prob));
    CHECK_OK(b->project(b, 1, y, cv, 0));
    dbtr_backend_destroy(&b);
    size_t differ = 0, nan = 0, cpu_order = 0;
    for (size_t z = 0; z < t.nz; z++)
      for (size_t yy = 0; yy < t.ny; yy++)
        for (size_t x = 0; x < t.nx; x++) {
          size_t j = (z * t.ny + yy) * t.nx + x;
          float r1 = 0, r2 = 0;
          sep_f_factored_voxel(&t, e1, e2, x, yy, z, &r1, &r2);
          if (isnan(r1) || isnan(gv[j])) {
            nan++;
            differ += !(isnan(r1) && isnan(gv[j]));
            continue;
          }
          differ += !sep_f_same(r1, gv[j]);
          cpu_order += !sep_f_same(cv[j], gv[j]);
        }
    printf("%s%s: cpu-match+factored on the GPU: %zu voxels of %zu differ from the host's factored sums (%zu NaN); "
           "%zu differ from cpu-match\n",
           preset, plant ? ", infinite and NaN pixels" : "", differ, nv, nan, cpu_order);
    CHECK_EQ_U64(differ, 0);
    CHECK_GT(cpu_order, 0);
    CHECK_EQ_INT(nan > 0, plant);
  }
  free(y);
  free(e1);
  free(e2);
  free(gv);
  free(cv);
  sep_f_tables_free(&t);
  dbtr_geom_free(&g);
}

DBTR_TEST(tiny) { check_problem("tiny", 0.0, 0, 0, 1); }
DBTR_TEST(hologic) { check_problem("hologic", 0.0, 0, 0, 1); }
DBTR_TEST(siemens) { check_problem("siemens", 0.0, 0, 0, 1); }
DBTR_TEST(ge) { check_problem("ge", 0.0, 0, 0, 1); }
DBTR_TEST(thesis) { check_problem("thesis", 0.0, 0, 0, 1); }
/* The test grids cover the detector's rows (30 x 1.6 mm against 32 x 1.5 mm), so every row's
 * crossing lies inside the grid; 17 rows (and 23 columns, an odd count for the groups of 4)
 * leave rows and columns whose rays miss it. */
DBTR_TEST(cropped_grid) { check_problem("ge", 0.0, 23, 17, 1); }
/* u is no longer along x: the x part of a ray record depends on the row. */
DBTR_TEST(rotated_detector_is_not_separable) { check_problem("hologic", 7.0, 0, 0, 0); }

DBTR_TEST(factored_on_gpu_tiny) { factored_on_gpu("tiny"); }
DBTR_TEST(factored_on_gpu_hologic) { factored_on_gpu("hologic"); }

DBTR_TEST_MAIN(tiny, hologic, siemens, ge, thesis, cropped_grid, rotated_detector_is_not_separable,
               factored_on_gpu_tiny, factored_on_gpu_hologic)
