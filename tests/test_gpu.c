/* tests/test_gpu.c: the CUDA backend against the CPU reference, through the validation
 * engine (engine/validate.h) as `dbtr validate` runs it (label gpu; exit 77, SKIP, where
 * no GPU is found).
 *
 * The central promise: cpu-match is bitwise identical to the CPU float reference and
 * double-match to the CPU double reference, after every iteration, for the forward
 * projections and the volume, for every preset shape at test size, for 1 and 3 subsets,
 * transmission and emission. The other modes are run and their distance to the CPU
 * reference in their own precision is printed and bounded: fast and ieee against the CPU
 * in float, double against the CPU in double.
 *
 * Under a GPU memory budget too small for every view's ray records (kernels/gpu.h), the
 * backend makes them again in batches of views; the match modes stay bitwise equal to the
 * CPU with batches of one view, and every mode gives the unbatched run's bits. Spread over
 * several GPUs (2, 3 and 4 real ones where the machine has them, and several parts on one), every
 * mode gives the bits of one GPU. The referee's dd mode equals the CPU's dd precision bit for
 * bit (dd_match), and so does validate's referee on the GPU and on the CPU (referee_gpu_equals_cpu). */
#include <string.h>

#include "engine/validate.h"
#include "kernels/gpu.h"
#include "tests/mlem_problem.h"
#include "tests/test.h"

enum { ITERS = 3 };

/* A match mode's row: its arrays must equal the reference's bit for bit, sign of zero
 * included (the engine's differ count takes +0 and -0 as equal). */
static void require_same_bits(void *user, const dbtr_validate_row *r) {
  const char *what = user;
  size_t es = dbtr_precision_size(r->path->prec);
  void *ref_proj = malloc(r->proj->n * es), *ref_vol = malloc(r->vol->n * es);
  if (!ref_proj || !ref_vol ||
      dbtr_validate_ref_state(r->run, r->path->ref, r->iteration, 1, r->path->prec, ref_proj) ||
      dbtr_validate_ref_state(r->run, r->path->ref, r->iteration, 0, r->path->prec, ref_vol)) {
    TEST__FAIL("%s, %s: iteration %zu: the reference's state could not be read", what, r->path->name, r->iteration);
    exit(1);
  }
  int same_p = memcmp(r->path_proj, ref_proj, r->proj->n * es) == 0;
  int same_v = memcmp(r->path_vol, ref_vol, r->vol->n * es) == 0;
  free(ref_proj);
  free(ref_vol);
  if (!same_p || !same_v)
    TEST__FAIL("%s, %s: iteration %zu: %s differ from the CPU reference", what, r->path->name, r->iteration,
               !same_p ? "the forward projections" : "the volumes");
}

/* The budgets a test asks for: none, or room for one view's ray records at a time, or half
 * way between that and every view's. */
typedef enum { BUDGET_NONE, BUDGET_ONE_VIEW, BUDGET_HALF } budget;

/* Sets p's GPU memory budget for mode to b, and checks that the backend then makes the ray
 * records of one view at a time (BUDGET_ONE_VIEW) or of fewer than all (BUDGET_HALF). */
static int set_budget(test_mlem_problem *p, dbtr_mode mode, budget b) {
  p->m.prob.gpu_memory = 0;
  if (b == BUDGET_NONE) return 0;
  dbtr_backend *be = NULL;
  dbtr_gpu_memory mem;
  int rc = dbtr_gpu_backend_create(&be, mode, &p->m.prob);
  if (!rc) rc = dbtr_gpu_memory_of(be, &mem);
  dbtr_backend_destroy(&be);
  if (rc) return rc;
  CHECK_EQ_U64(mem.batch, mem.n_views);
  p->m.prob.gpu_memory = b == BUDGET_ONE_VIEW ? mem.need_min : mem.need_min + (mem.need - mem.need_min) / 2;
  if ((rc = dbtr_gpu_backend_create(&be, mode, &p->m.prob)) || (rc = dbtr_gpu_memory_of(be, &mem))) return rc;
  if (b == BUDGET_ONE_VIEW) CHECK_EQ_U64(mem.batch, 1);
  CHECK(mem.batch < mem.n_views);
  CHECK(mem.used <= p->m.prob.gpu_memory);
  dbtr_backend_destroy(&be);
  return 0;
}

/* Runs the GPU mode beside its CPU reference (the engine picks it: the CPU in the mode's
 * precision) within budget b; match = 1 requires identical bits after every iteration.
 * Returns the relative L2 distance of the final volumes, or -1 if the run failed. */
static double compare_paths(const char *preset, double rotate_deg, int emission, size_t subsets, dbtr_mode mode,
                            int match, budget b) {
  test_mlem_problem p;
  double rel = -1.0;
  char what[128];
  snprintf(what, sizeof what, "%s %s, %zu subsets%s", preset, emission ? "emission" : "transmission", subsets,
           b == BUDGET_ONE_VIEW ? ", ray records one view at a time" : "");
  const char *paths[1] = {dbtr_mode_name_of(mode)};
  dbtr_validate_opts o = {.paths = paths, .n_paths = 1, .iterations = ITERS};
  dbtr_validate v = {0};
  int rc = test_mlem_problem_open(&p, preset, rotate_deg, emission, subsets, 0);
  if (!rc) rc = set_budget(&p, mode, b);
  if (!rc) rc = dbtr_validate_open(&v, &p.m, &o);
  if (!rc) rc = dbtr_validate_run(&v, match ? require_same_bits : NULL, what);
  if (rc) {
    TEST__FAIL("%s, %s: %s", what, paths[0], dbtr_errmsg());
  } else {
    const dbtr_diff_stats *st = &v.paths[0].vol[ITERS - 1];
    rel = st->rel_l2;
    printf("%-8s %-12s %zu subsets %-12s (vs %s)%s: %zu of %zu voxels differ, max %llu ulp, relative L2 %.3g\n",
           preset, emission ? "emission" : "transmission", subsets, paths[0], dbtr_validate_ref_name(v.paths[0].ref),
           b == BUDGET_ONE_VIEW ? ", one view's rays at a time" : "",
           st->n_differ, st->n, (unsigned long long)st->max_ulp, st->rel_l2);
  }
  dbtr_validate_close(&v);
  test_mlem_problem_close(&p);
  return rel;
}

static void match_preset(const char *preset, double rotate_deg) {
  TEST_NEED_GPU();
  for (int emission = 0; emission < 2; emission++)
    for (size_t subsets = 1; subsets <= 3; subsets += 2)
      for (budget b = BUDGET_NONE; b <= BUDGET_ONE_VIEW; b++) {
        compare_paths(preset, rotate_deg, emission, subsets, DBTR_MODE_CPU_MATCH, 1, b);
        compare_paths(preset, rotate_deg, emission, subsets, DBTR_MODE_DOUBLE_MATCH, 1, b);
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

/* fast, ieee and double differ from the CPU by rounding only. After 3 iterations each
 * volume is compared with the CPU reference in its own precision, fast and ieee with the
 * CPU in float, double with the CPU in double: float rounding (u = 6e-8) through the few
 * thousand operations that shape a voxel's value leaves relative differences near 1e-5 at
 * most (in double, 2^29 times less); 1e-3 is two orders above that and still far below what
 * a wrong formula gives (a misplaced weight moves values by whole percent). */
DBTR_TEST(other_modes_close) {
  TEST_NEED_GPU();
  const dbtr_mode modes[3] = {DBTR_MODE_FAST, DBTR_MODE_IEEE, DBTR_MODE_DOUBLE};
  for (int i = 0; i < 3; i++)
    for (int emission = 0; emission < 2; emission++) {
      double rel = compare_paths("hologic", 0.0, emission, 3, modes[i], 0, BUDGET_NONE);
      CHECK(rel >= 0.0);
      CHECK_LT(rel, 1e-3);
    }
}

/* ITERS iterations of mode within budget b: the volume, the projections made during the last
 * iteration (n_vox and n_proj elements, allocated here) and each iteration's deviance. */
static int run_mode(test_mlem_problem *p, dbtr_mode mode, budget b, void **vol, void **proj, double dev[ITERS]) {
  dbtr_backend *be = NULL;
  size_t es = dbtr_precision_size(dbtr_mode_precision(mode));
  p->m.prob.gpu_memory = 0;
  int rc = b == BUDGET_NONE ? 0 : set_budget(p, mode, b);
  if (!rc) rc = dbtr_gpu_backend_create(&be, mode, &p->m.prob);
  if (!rc) rc = dbtr_mlem_load(&p->m, be, 0.0);
  for (int it = 0; it < ITERS && !rc; it++) rc = dbtr_mlem_iterate(&p->m, be, &dev[it]);
  if (!rc) rc = dbtr_alloc(vol, p->m.n_vox, es, "volume");
  if (!rc) rc = dbtr_alloc(proj, p->m.n_proj, es, "projections");
  if (!rc) rc = be->get_volume(be, *vol);
  if (!rc) rc = be->get_projections(be, *proj);
  dbtr_backend_destroy(&be);
  return rc;
}

/* The results of two runs, the same bits? what names the second. */
static void require_same_run(const char *what, dbtr_mode m, const test_mlem_problem *p, void *vol[2],
                             void *proj[2], double dev[2][ITERS]) {
  size_t es = dbtr_precision_size(dbtr_mode_precision(m));
  int sv = !memcmp(vol[0], vol[1], p->m.n_vox * es), sp = !memcmp(proj[0], proj[1], p->m.n_proj * es);
  int sd = !memcmp(dev[0], dev[1], sizeof dev[0]);
  printf("%-34s %-12s volume %s, projections %s, deviance %s\n", what, dbtr_mode_name_of(m),
         sv ? "same bits" : "DIFFER", sp ? "same bits" : "DIFFER", sd ? "same bits" : "DIFFERS");
  CHECK(sv);
  CHECK(sp);
  CHECK(sd);
}

/* Every mode, batched, gives the bits of its unbatched run: the volume, the projections and
 * the deviance (whose partial sums keep their order), for the separable gather (hologic) and
 * the per-pixel one with its carried sums (the turned detector), with 3 subsets. */
DBTR_TEST(batched_same_bits) {
  TEST_NEED_GPU();
  const double rotate[2] = {0.0, 7.0};
  for (int r = 0; r < 2; r++)
    for (int m = 0; m < DBTR_MODE_COUNT; m++) {
      test_mlem_problem p;
      void *vol[2] = {NULL, NULL}, *proj[2] = {NULL, NULL};
      double dev[2][ITERS];
      REQUIRE_OK(test_mlem_problem_open(&p, "hologic", rotate[r], 0, 3, 0));
      REQUIRE_OK(run_mode(&p, (dbtr_mode)m, BUDGET_NONE, &vol[0], &proj[0], dev[0]));
      REQUIRE_OK(run_mode(&p, (dbtr_mode)m, BUDGET_HALF, &vol[1], &proj[1], dev[1]));
      require_same_run(r ? "hologic turned 7 deg, batched" : "hologic, batched", (dbtr_mode)m, &p, vol, proj, dev);
      for (int i = 0; i < 2; i++) {
        free(vol[i]);
        free(proj[i]);
      }
      test_mlem_problem_close(&p);
    }
}

/* Mode m of problem p on `gpus` parts (share: on the one GPU) within budget b, against the
 * one-GPU run in vol[0], proj[0] and dev[0]: the same bits? what names the run. */
static void require_same_on_parts(test_mlem_problem *p, dbtr_mode m, int gpus, int share, budget b, const char *what,
                                  void *vol[2], void *proj[2], double dev[2][ITERS]) {
  p->m.prob.gpus = gpus;
  p->m.prob.gpu_share = share;
  REQUIRE_OK(run_mode(p, m, b, &vol[1], &proj[1], dev[1]));
  require_same_run(what, m, p, vol, proj, dev);
  free(vol[1]);
  free(proj[1]);
  vol[1] = proj[1] = NULL;
}

/* Every mode on several GPUs against one: hologic (the separable gather) and turned (the
 * per-pixel one), 3 subsets, with 2 and 3 parts on the one GPU (3 does not divide the 5 views
 * of a subset or the slices evenly), then on 2 real GPUs where the machine has them; and with
 * 2 parts and ray records made one view at a time. */
DBTR_TEST(gpus_same_bits) {
  TEST_NEED_GPU();
  int n_dev = dbtr_gpu_count();
  const double rotate[2] = {0.0, 7.0};
  for (int r = 0; r < 2; r++)
    for (int m = 0; m < DBTR_MODE_COUNT; m++) {
      test_mlem_problem p;
      void *vol[2] = {NULL, NULL}, *proj[2] = {NULL, NULL};
      double dev[2][ITERS];
      REQUIRE_OK(test_mlem_problem_open(&p, "hologic", rotate[r], 0, 3, 0));
      REQUIRE_OK(run_mode(&p, (dbtr_mode)m, BUDGET_NONE, &vol[0], &proj[0], dev[0]));
      const struct {
        int gpus, share;
        budget b;
        const char *what;
      } runs[7] = {{2, 1, BUDGET_NONE, "2 parts on one GPU"},
                   {3, 1, BUDGET_NONE, "3 parts on one GPU"},
                   {2, 1, BUDGET_ONE_VIEW, "2 parts, one view's rays at a time"},
                   {2, 0, BUDGET_NONE, "2 GPUs"},
                   {3, 0, BUDGET_NONE, "3 GPUs"},
                   {4, 0, BUDGET_NONE, "4 GPUs"},
                   {2, 0, BUDGET_ONE_VIEW, "2 GPUs, one view's rays at a time"}};
      for (int i = 0; i < 7; i++) {
        if (!runs[i].share && n_dev < runs[i].gpus) continue;
        char what[96];
        snprintf(what, sizeof what, "hologic%s, %s", r ? " turned" : "", runs[i].what);
        require_same_on_parts(&p, (dbtr_mode)m, runs[i].gpus, runs[i].share, runs[i].b, what, vol, proj, dev);
      }
      free(vol[0]);
      free(proj[0]);
      test_mlem_problem_close(&p);
    }
}

/* A schedule whose subsets list their views in descending order: the pixel terms of a part's
 * rows go a view at a time rather than in one 2-D copy of evenly spaced views
 * (kernels/gpu_host.cu, send_forward), with the bits of one GPU running the same schedule. */
DBTR_TEST(gpus_any_schedule) {
  TEST_NEED_GPU();
  int n_dev = dbtr_gpu_count();
  for (int m = 0; m < DBTR_MODE_COUNT; m++) {
    test_mlem_problem p;
    void *vol[2] = {NULL, NULL}, *proj[2] = {NULL, NULL};
    double dev[2][ITERS];
    REQUIRE_OK(test_mlem_problem_open(&p, "hologic", 0.0, 0, 3, 0));
    for (size_t sub = 0; sub < p.m.prob.n_subsets; sub++)
      for (size_t i = p.m.subset_start[sub], j = p.m.subset_start[sub + 1] - 1; i < j; i++, j--) {
        size_t k = p.m.subset_views[i];
        p.m.subset_views[i] = p.m.subset_views[j];
        p.m.subset_views[j] = k;
      }
    REQUIRE_OK(run_mode(&p, (dbtr_mode)m, BUDGET_NONE, &vol[0], &proj[0], dev[0]));
    for (int gpus = 2; gpus <= 3; gpus++)
      for (int share = 1; share >= 0; share--) {
        if (!share && n_dev < gpus) continue;
        char what[96];
        snprintf(what, sizeof what, "hologic descending, %d %s", gpus, share ? "parts on one GPU" : "GPUs");
        require_same_on_parts(&p, (dbtr_mode)m, gpus, share, BUDGET_NONE, what, vol, proj, dev);
      }
    free(vol[0]);
    free(proj[0]);
    test_mlem_problem_close(&p);
  }
}

/* How several GPUs share the memory (kernels/gpu_host.cu, "bands"), hologic on 4 parts of the
 * one GPU: with separable views each part holds its bands' rows, less than one GPU holding the
 * whole problem needs, and the memory line names that need as one GPU's own plan gives it; with
 * a turned detector (the per-pixel gather) each part holds the whole problem, as the line says. */
DBTR_TEST(gpus_split_memory) {
  TEST_NEED_GPU();
  for (int r = 0; r < 2; r++) {
    test_mlem_problem p;
    dbtr_backend *one = NULL, *four = NULL;
    dbtr_gpu_memory m1, m4;
    REQUIRE_OK(test_mlem_problem_open(&p, "hologic", r ? 7.0 : 0.0, 0, 3, 0));
    REQUIRE_OK(dbtr_gpu_backend_create(&one, DBTR_MODE_FAST, &p.m.prob));
    p.m.prob.gpus = 4;
    p.m.prob.gpu_share = 1;
    REQUIRE_OK(dbtr_gpu_backend_create(&four, DBTR_MODE_FAST, &p.m.prob));
    REQUIRE_OK(dbtr_gpu_memory_of(one, &m1));
    REQUIRE_OK(dbtr_gpu_memory_of(four, &m4));
    printf("hologic%s on 4 parts: %s\n", r ? " turned" : "", four->memory);
    if (!r) {
      CHECK_EQ_U64(m4.one_gpu, m1.need);
      CHECK(m4.need < m1.need);
      CHECK_STR_CONTAINS(four->memory, "bands of detector and voxel rows");
    } else {
      CHECK_EQ_U64(m4.one_gpu, 0);
      CHECK_EQ_U64(m4.need, m1.need);
      CHECK_STR_CONTAINS(four->memory, "whole problem");
    }
    dbtr_backend_destroy(&one);
    dbtr_backend_destroy(&four);
    test_mlem_problem_close(&p);
  }
}

/* Which gather each problem gets: the separable one for every preset's (axis-aligned)
 * detector, in every mode, and the per-pixel one for a turned detector; so the match tests
 * above cover both. */
static int runs_separable(const char *preset, double rotate_deg, dbtr_mode mode) {
  test_mlem_problem p;
  dbtr_backend *b = NULL;
  int sep = -1;
  if (!test_mlem_problem_open(&p, preset, rotate_deg, 0, 1, 0) && !dbtr_gpu_backend_create(&b, mode, &p.m.prob))
    sep = dbtr_gpu_separable(b);
  dbtr_backend_destroy(&b);
  test_mlem_problem_close(&p);
  return sep;
}

DBTR_TEST(projector_paths) {
  TEST_NEED_GPU();
  const char *presets[5] = {"tiny", "hologic", "siemens", "ge", "thesis"};
  for (int m = 0; m < DBTR_MODE_COUNT; m++) {
    for (int p = 0; p < 5; p++) CHECK_EQ_INT(runs_separable(presets[p], 0.0, (dbtr_mode)m), 1);
    CHECK_EQ_INT(runs_separable("hologic", 7.0, (dbtr_mode)m), 0);
  }
}

/* A problem too large for the GPU is refused before anything runs, with the sizes. */
DBTR_TEST(out_of_memory_message) {
  TEST_NEED_GPU();
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
  /* A budget below one view's ray records beside the rest says so, naming the flag. */
  dbtr_geom_free(&g);
  REQUIRE_OK(test_small_problem("tiny", &g, &grid));
  start[1] = g.n_views;
  prob.gpu_memory = 4096;
  CHECK_EQ_INT(dbtr_gpu_backend_create(&b, DBTR_MODE_FAST, &prob), DBTR_EGPU);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "with one view's ray records at a time");
  CHECK_STR_CONTAINS(dbtr_errmsg(), "allowed (--gpu-memory)");
  dbtr_backend_destroy(&b);
  dbtr_geom_free(&g);
}

/* The referee: the GPU's dd mode and the CPU's dd precision give the same bits after every
 * iteration (the volume and the forward projections), on every preset at test size and the
 * turned detector, transmission and emission, 1 and 3 subsets, and with ray records one view
 * at a time. The deviance is not compared, as in the match modes: the GPU sums the data fit in
 * block trees and the CPU by rows, so they agree to rounding only. */
static void dd_same_bits(const char *preset, double rotate_deg, int emission, size_t subsets, budget bg) {
  test_mlem_problem p;
  dbtr_backend *b[2] = {NULL, NULL};
  size_t es = dbtr_precision_size(DBTR_PREC_DD);
  void *vol[2] = {NULL, NULL}, *proj[2] = {NULL, NULL};
  char what[128];
  snprintf(what, sizeof what, "%s%s %s, %zu subsets%s", preset, rotate_deg != 0.0 ? " turned" : "",
           emission ? "emission" : "transmission", subsets, bg == BUDGET_ONE_VIEW ? ", one view's rays at a time" : "");
  REQUIRE_OK(test_mlem_problem_open(&p, preset, rotate_deg, emission, subsets, 0));
  REQUIRE_OK(set_budget(&p, DBTR_MODE_DD, bg));
  REQUIRE_OK(dbtr_cpu_backend_create(&b[0], DBTR_PREC_DD, &p.m.prob));
  REQUIRE_OK(dbtr_gpu_backend_create(&b[1], DBTR_MODE_DD, &p.m.prob));
  for (int i = 0; i < 2; i++) {
    REQUIRE_OK(dbtr_mlem_load(&p.m, b[i], 0.0));
    REQUIRE_OK(dbtr_alloc(&vol[i], p.m.n_vox, es, "volume"));
    REQUIRE_OK(dbtr_alloc(&proj[i], p.m.n_proj, es, "projections"));
  }
  for (int it = 0; it < ITERS; it++) {
    double dev;
    for (int i = 0; i < 2; i++) {
      REQUIRE_OK(dbtr_mlem_iterate(&p.m, b[i], &dev));
      REQUIRE_OK(b[i]->get_volume(b[i], vol[i]));
      REQUIRE_OK(b[i]->get_projections(b[i], proj[i]));
    }
    int sv = !memcmp(vol[0], vol[1], p.m.n_vox * es), sp = !memcmp(proj[0], proj[1], p.m.n_proj * es);
    if (!sv || !sp)
      TEST__FAIL("%s: dd: iteration %d: the %s differ between the CPU and the GPU", what, it + 1,
                 !sv ? "volumes" : "forward projections");
  }
  printf("%-50s dd: CPU and GPU the same bits at each of %d iterations\n", what, ITERS);
  for (int i = 0; i < 2; i++) {
    free(vol[i]);
    free(proj[i]);
    dbtr_backend_destroy(&b[i]);
  }
  test_mlem_problem_close(&p);
}

DBTR_TEST(dd_match) {
  TEST_NEED_GPU();
  const char *presets[5] = {"tiny", "hologic", "siemens", "ge", "thesis"};
  for (int i = 0; i < 6; i++)
    for (int emission = 0; emission < 2; emission++)
      for (size_t subsets = 1; subsets <= 3; subsets += 2)
        dd_same_bits(i < 5 ? presets[i] : "hologic", i < 5 ? 0.0 : 7.0, emission, subsets, BUDGET_NONE);
  dd_same_bits("hologic", 0.0, 0, 3, BUDGET_ONE_VIEW);
  dd_same_bits("hologic", 7.0, 0, 3, BUDGET_ONE_VIEW);
}

/* The referee of `validate --referee`, on the GPU and on the CPU: the same recording (both
 * roundings, every iteration), the same best answers and the same rows against it, bit for
 * bit, since gpu:dd and cpu-dd give the same bits (dd_match). cpu-match is cpu-float's bits,
 * so it stands at the same distance from the referee; and a float path's best units are at
 * least 1 less best_double / best_float (recon/compare.h: rounding to nearest is the closest
 * float there is, and the measure is against the referee rounded to double, which is best
 * double away from it; tests/test_validate.c derives it). */
typedef struct {
  size_t n;
  char path[8][48];
  dbtr_referee_stats vs[8][2];
} vs_rows;

static void keep_vs(void *user, const dbtr_validate_row *r) {
  vs_rows *w = user;
  if (w->n == 8 || !r->vs_proj) return;
  snprintf(w->path[w->n], sizeof w->path[0], "%s", r->path->name);
  w->vs[w->n][0] = *r->vs_proj;
  w->vs[w->n][1] = *r->vs_vol;
  w->n++;
}

DBTR_TEST(referee_gpu_equals_cpu) {
  TEST_NEED_GPU();
  enum { IT = 2 };
  test_mlem_problem p;
  REQUIRE_OK(test_mlem_problem_open(&p, "hologic", 0.0, 0, 3, 0));
  const char *paths[3] = {"cpu-match", "double-match", "cpu-float"};
  vs_rows w[2];
  memset(w, 0, sizeof w);
  dbtr_validate v[2];
  memset(v, 0, sizeof v);
  for (int g = 0; g < 2; g++) {
    dbtr_validate_opts o = {.paths = paths, .n_paths = 3, .iterations = IT,
                            .referee = g ? DBTR_REFEREE_GPU : DBTR_REFEREE_CPU};
    REQUIRE_OK(dbtr_validate_open(&v[g], &p.m, &o));
    REQUIRE_OK(dbtr_validate_run(&v[g], keep_vs, &w[g]));
  }
  REQUIRE(w[0].n == 3 * IT && w[1].n == 3 * IT);
  /* The best answers, from the same bits; the deviance not: the GPU sums the data fit in block
   * trees and the CPU by rows (dd_match). */
  for (size_t it = 0; it < IT; it++)
    CHECK(!memcmp(v[0].best[it].proj, v[1].best[it].proj, sizeof v[0].best[it].proj) &&
          !memcmp(v[0].best[it].vol, v[1].best[it].vol, sizeof v[0].best[it].vol));
  CHECK(!memcmp(w[0].vs, w[1].vs, sizeof w[0].vs));
  size_t n = p.m.n_vox > p.m.n_proj ? p.m.n_vox : p.m.n_proj;
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  REQUIRE(a && b);
  for (size_t it = 1; it <= IT; it++)
    for (int proj = 0; proj < 2; proj++)
      for (int f = 0; f < 2; f++) {
        dbtr_precision prec = f ? DBTR_PREC_FLOAT : DBTR_PREC_DOUBLE;
        CHECK_OK(dbtr_validate_referee_state(&v[0], it, proj, prec, a));
        CHECK_OK(dbtr_validate_referee_state(&v[1], it, proj, prec, b));
        CHECK(!memcmp(a, b, (proj ? p.m.n_proj : p.m.n_vox) * dbtr_precision_size(prec)));
      }
  for (size_t it = 0; it < IT; it++) {
    CHECK(!memcmp(w[1].vs[it], w[1].vs[2 * IT + it], sizeof w[1].vs[it])); /* cpu-match against cpu-float */
    for (int q = 0; q < 2; q++) {
      const dbtr_referee_stats *s = &w[1].vs[it][q];
      double bd = q ? v[1].best[it].vol[DBTR_PREC_DOUBLE] : v[1].best[it].proj[DBTR_PREC_DOUBLE];
      CHECK_LE(1.0 - bd / s->best - 1e-9, s->best_units); /* 1e-9: the sums' rounding (test_validate) */
    }
  }
  printf("referee: gpu:dd and cpu-dd the same bits; cpu-match %.3gx, double-match %.3gx the best answer (volume)\n",
         w[1].vs[IT - 1][1].best_units, w[1].vs[2 * IT - 1][1].best_units);
  free(a);
  free(b);
  for (int g = 0; g < 2; g++) dbtr_validate_close(&v[g]);
  test_mlem_problem_close(&p);
}

DBTR_TEST_MAIN(match_tiny, match_hologic, match_siemens, match_ge, match_thesis, match_rotated_detector, other_modes_close,
               batched_same_bits, gpus_same_bits, gpus_any_schedule, gpus_split_memory, projector_paths,
               out_of_memory_message, dd_match, referee_gpu_equals_cpu)
