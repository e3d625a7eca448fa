/* tests/test_gpu.c: the CUDA backend against the CPU reference (label gpu; exit 77, SKIP,
 * where no GPU is found).
 *
 * The central promise: cpu-match is bitwise identical to the CPU float reference and
 * double-match to the CPU double reference, after every iteration, for the forward
 * projections and the volume, for every preset shape at test size, for 1 and 3 subsets,
 * transmission and emission. The other modes are run and their distance to the CPU double
 * reference is printed and bounded. */
#include <float.h>
#include <string.h>

#include "kernels/gpu.h"
#include "recon/compare.h"
#include "recon/mlem.h"
#include "tests/problems.h"
#include "tests/test.h"

static void need_gpu(void) {
  char name[256];
  if (!dbtr_gpu_available(name, sizeof name)) TEST_SKIP("no CUDA GPU (or a build without CUDA)");
}

enum { ITERS = 3 };

typedef struct {
  dbtr_mlem m;
  dbtr_backend *b;
  void *vol, *proj;
} run;

static int run_open(run *r, const dbtr_data *d, size_t subsets, int gpu, dbtr_gpu_mode mode, dbtr_precision prec) {
  memset(r, 0, sizeof *r);
  int rc = dbtr_mlem_init(&r->m, d, subsets, 0);
  if (!rc) rc = gpu ? dbtr_gpu_backend_create(&r->b, mode, &r->m.prob) : dbtr_cpu_backend_create(&r->b, prec, &r->m.prob);
  if (!rc) rc = dbtr_mlem_load(&r->m, r->b, NULL, 0.0);
  size_t es = r->b ? dbtr_precision_size(r->b->precision) : 8;
  if (!rc) rc = dbtr_alloc(&r->vol, r->m.n_vox, es, "volume");
  if (!rc) rc = dbtr_alloc(&r->proj, r->m.n_proj, es, "projections");
  return rc;
}

static int run_step(run *r, double *dev) {
  int rc = dbtr_mlem_iterate(&r->m, r->b, dev);
  if (!rc) rc = r->b->get_volume(r->b, r->vol);
  if (!rc) rc = r->b->get_projections(r->b, r->proj);
  return rc;
}

static void run_close(run *r) {
  dbtr_backend_destroy(&r->b);
  dbtr_mlem_free(&r->m);
  free(r->vol);
  free(r->proj);
}

/* Runs CPU (prec) and GPU (mode) side by side; match = 1 requires identical bits after
 * every iteration. Returns the relative L2 distance of the final volumes. */
static double compare_paths(const char *preset, double rotate_deg, int emission, size_t subsets, dbtr_gpu_mode mode,
                            dbtr_precision cpu_prec, int match) {
  dbtr_geom g;
  dbtr_grid grid;
  double *y = NULL, *i0 = NULL, rel = -1.0;
  int rc0 = test_small_problem(preset, &g, &grid);
  if (!rc0) test_rotate_detector(&g, rotate_deg);
  if (rc0 || test_problem_data(&g, &grid, emission, &y, &i0)) {
    TEST__FAIL("set-up: %s", dbtr_errmsg());
    return rel;
  }
  dbtr_data d = {.geom = &g, .grid = &grid, .algo = emission ? DBTR_ALGO_EMISSION : DBTR_ALGO_TRANSMISSION, .y = y,
                 .i0 = emission ? NULL : i0};
  run cpu, gpu;
  int rc = run_open(&cpu, &d, subsets, 0, mode, cpu_prec);
  if (!rc) rc = run_open(&gpu, &d, subsets, 1, mode, cpu_prec);
  if (rc) TEST__FAIL("%s", dbtr_errmsg());
  size_t es = dbtr_precision_size(cpu_prec);
  for (int it = 1; !rc && it <= ITERS; it++) {
    double dc, dg;
    if ((rc = run_step(&cpu, &dc)) || (rc = run_step(&gpu, &dg))) {
      TEST__FAIL("%s", dbtr_errmsg());
      break;
    }
    int same_p = memcmp(cpu.proj, gpu.proj, cpu.m.n_proj * es) == 0;
    int same_v = memcmp(cpu.vol, gpu.vol, cpu.m.n_vox * es) == 0;
    if (match && (!same_p || !same_v))
      TEST__FAIL("%s %s, %zu subsets, %s: iteration %d: %s differ from the CPU reference", preset,
                 emission ? "emission" : "transmission", subsets, dbtr_gpu_mode_name(mode), it,
                 !same_p ? "the forward projections" : "the volumes");
    if (it == ITERS) {
      dbtr_diff_stats st;
      if (cpu_prec == DBTR_PREC_FLOAT)
        dbtr_diff_stats_f(gpu.vol, cpu.vol, cpu.m.n_vox, NULL, &st);
      else
        dbtr_diff_stats_d(gpu.vol, cpu.vol, cpu.m.n_vox, NULL, &st);
      rel = st.rel_l2;
      printf("%-8s %-12s %zu subsets %-12s: %zu of %zu voxels differ, max %llu ulp, relative L2 %.3g\n", preset,
             emission ? "emission" : "transmission", subsets, dbtr_gpu_mode_name(mode), st.n_differ, st.n,
             (unsigned long long)st.max_ulp, st.rel_l2);
    }
  }
  run_close(&cpu);
  run_close(&gpu);
  free(y);
  free(i0);
  dbtr_geom_free(&g);
  return rel;
}

static void match_preset(const char *preset, double rotate_deg) {
  need_gpu();
  for (int emission = 0; emission < 2; emission++)
    for (size_t subsets = 1; subsets <= 3; subsets += 2) {
      compare_paths(preset, rotate_deg, emission, subsets, DBTR_MODE_CPU_MATCH, DBTR_PREC_FLOAT, 1);
      compare_paths(preset, rotate_deg, emission, subsets, DBTR_MODE_DOUBLE_MATCH, DBTR_PREC_DOUBLE, 1);
    }
}

/* The presets' detectors are axis-aligned. */
DBTR_TEST(match_tiny) { match_preset("tiny", 0.0); }
DBTR_TEST(match_hologic) { match_preset("hologic", 0.0); }
DBTR_TEST(match_siemens) { match_preset("siemens", 0.0); }
DBTR_TEST(match_ge) { match_preset("ge", 0.0); }
DBTR_TEST(match_thesis) { match_preset("thesis", 0.0); }
/* A detector turned by 7 deg about z, so that u is not along x: a ray record's x part
 * then depends on the row too, and the footprints are no longer axis-aligned boxes. */
DBTR_TEST(match_rotated_detector) { match_preset("hologic", 7.0); }

/* fast, ieee and double differ from the CPU by rounding only. After 3 iterations the
 * volumes are compared with the CPU double reference: float rounding (u = 6e-8) through the
 * few thousand operations that shape a voxel's value leaves relative differences near
 * 1e-5 at most; 1e-3 is two orders above that and still far below what a wrong formula
 * gives (a misplaced weight moves values by whole percent). */
DBTR_TEST(other_modes_close) {
  need_gpu();
  const dbtr_gpu_mode modes[3] = {DBTR_MODE_FAST, DBTR_MODE_IEEE, DBTR_MODE_DOUBLE};
  for (int i = 0; i < 3; i++)
    for (int emission = 0; emission < 2; emission++) {
      dbtr_precision p = dbtr_gpu_mode_precision(modes[i]);
      double rel = compare_paths("hologic", 0.0, emission, 3, modes[i], p, 0);
      CHECK(rel >= 0.0);
      CHECK_LT(rel, 1e-3);
    }
}

/* Which gather each problem gets: the separable one for every preset's (axis-aligned)
 * detector, in every mode, and the per-pixel one for a turned detector; so the match tests
 * above cover both. */
static int runs_separable(const char *preset, double rotate_deg, dbtr_gpu_mode mode) {
  dbtr_geom g;
  dbtr_grid grid;
  double *y = NULL, *i0 = NULL;
  int sep = -1;
  if (test_small_problem(preset, &g, &grid)) return -1;
  test_rotate_detector(&g, rotate_deg);
  if (!test_problem_data(&g, &grid, 0, &y, &i0)) {
    dbtr_data d = {.geom = &g, .grid = &grid, .algo = DBTR_ALGO_TRANSMISSION, .y = y, .i0 = i0};
    run r;
    dbtr_gpu_timing tm;
    if (!run_open(&r, &d, 1, 1, mode, dbtr_gpu_mode_precision(mode)) && !dbtr_gpu_benchmark(r.b, 1, &tm)) sep = tm.separable;
    run_close(&r);
  }
  free(y);
  free(i0);
  dbtr_geom_free(&g);
  return sep;
}

DBTR_TEST(projector_paths) {
  need_gpu();
  const char *presets[5] = {"tiny", "hologic", "siemens", "ge", "thesis"};
  for (int m = 0; m < DBTR_MODE_COUNT; m++) {
    for (int p = 0; p < 5; p++) CHECK_EQ_INT(runs_separable(presets[p], 0.0, (dbtr_gpu_mode)m), 1);
    CHECK_EQ_INT(runs_separable("hologic", 7.0, (dbtr_gpu_mode)m), 0);
  }
}

/* A problem too large for the GPU is refused before anything runs, with the sizes. */
DBTR_TEST(out_of_memory_message) {
  need_gpu();
  dbtr_geom g;
  dbtr_grid grid;
  REQUIRE_OK(test_small_problem("tiny", &g, &grid));
  grid.nx = grid.ny = 1u << 17; /* 2^34 voxels x 4 bytes = 64 GiB per volume copy, x nz */
  grid.dx = grid.dy = 1e-3;
  size_t views[64], start[2] = {0, g.n_views};
  for (size_t k = 0; k < g.n_views; k++) views[k] = k;
  dbtr_problem prob = {.geom = &g, .grid = &grid, .algo = DBTR_ALGO_TRANSMISSION, .n_subsets = 1,
                       .subset_views = views, .subset_start = start};
  dbtr_backend *b = NULL;
  int rc = dbtr_gpu_backend_create(&b, DBTR_MODE_FAST, &prob);
  CHECK_EQ_INT(rc, DBTR_EGPU);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "needs");
  CHECK_STR_CONTAINS(dbtr_errmsg(), "free");
  dbtr_backend_destroy(&b);
  dbtr_geom_free(&g);
}

DBTR_TEST_MAIN(match_tiny, match_hologic, match_siemens, match_ge, match_thesis, match_rotated_detector, other_modes_close,
               projector_paths, out_of_memory_message)
