/* tests/test_validate.c: the validation engine (recon/validate.c) called directly, on the
 * CPU paths that every build has: the tiny preset's 9 views at test size
 * (tests/problems.h: 48 x 32 pixels, a 40 x 30 x 10 grid), transmission. */
#include <string.h>

#include "recon/error.h"
#include "recon/validate.h"
#include "tests/mlem_problem.h"
#include "tests/test.h"

/* The tiny preset at test size, transmission, one subset. */
static int problem_open(test_mlem_problem *p, int threads) {
  return test_mlem_problem_open(p, "tiny", 0.0, 0, 1, threads);
}

static dbtr_validate_opts opts(const char *const *paths, size_t n, size_t iterations, int lockstep) {
  return (dbtr_validate_opts){.paths = paths, .n_paths = n, .iterations = iterations, .lockstep = lockstep};
}

/* Every row the callback saw, in order. */
enum { MAX_ROWS = 16 };
typedef struct {
  size_t n;
  size_t iteration[MAX_ROWS];
  const dbtr_vpath *path[MAX_ROWS];
  const char *reference[MAX_ROWS];
  dbtr_diff_stats proj[MAX_ROWS], vol[MAX_ROWS];
  double deviance[MAX_ROWS];
  int same_bits[MAX_ROWS]; /* 1: the path's arrays equal the reference's bit for bit, sign of zero included */
} rows;

static void record(void *user, const dbtr_validate_row *r) {
  rows *s = user;
  if (s->n == MAX_ROWS) return;
  size_t es = dbtr_precision_size(r->path->prec);
  s->iteration[s->n] = r->iteration;
  s->path[s->n] = r->path;
  s->reference[s->n] = r->reference;
  s->proj[s->n] = *r->proj;
  s->vol[s->n] = *r->vol;
  s->deviance[s->n] = r->deviance;
  s->same_bits[s->n] = !memcmp(r->path_proj, r->ref_proj, r->proj->n * es) &&
                       !memcmp(r->path_vol, r->ref_vol, r->vol->n * es);
  s->n++;
}

/* The CPU reference is deterministic for any thread count: each output element is summed
 * by one thread in a fixed order. So one thread matches the reference on 4 threads (4, not
 * the machine's count, so the work is split even on a machine with one core) bit for bit,
 * in the projections and the volume, at every iteration. */
DBTR_TEST(one_thread_matches_all_threads) {
  test_mlem_problem p;
  REQUIRE_OK(problem_open(&p, 4));
  const char *paths[] = {"cpu-1-thread"};
  dbtr_validate_opts o = opts(paths, 1, 3, 0); /* 3 iterations: differences would compound by then */
  dbtr_validate v;
  rows s = {0};
  CHECK_OK(dbtr_validate_open(&v, &p.m, &o));
  CHECK_OK(dbtr_validate_run(&v, record, &s));
  CHECK_EQ_INT(s.n, 3);
  for (size_t i = 0; i < s.n; i++) {
    CHECK_EQ_INT(s.proj[i].n_differ, 0);
    CHECK_EQ_INT(s.vol[i].n_differ, 0);
    CHECK_EQ_INT(s.same_bits[i], 1);
    CHECK_STR_CONTAINS(s.reference[i], "cpu-float");
  }
  CHECK_EQ_INT(v.n_paths, 1);
  CHECK_EQ_INT(v.paths[0].first_iter, 0);
  dbtr_validate_close(&v);
  test_mlem_problem_close(&p);
}

/* cpu-float against the CPU in double differs by float rounding, from the first forward
 * projection on: its sums of hundreds of terms round differently in float. */
DBTR_TEST(float_differs_from_double) {
  test_mlem_problem p;
  REQUIRE_OK(problem_open(&p, 0));
  const char *paths[] = {"cpu-float"};
  dbtr_validate_opts o = opts(paths, 1, 2, 0);
  dbtr_validate v;
  rows s = {0};
  CHECK_OK(dbtr_validate_open(&v, &p.m, &o));
  CHECK_OK(dbtr_validate_run(&v, record, &s));
  REQUIRE(s.n == 2);
  for (size_t i = 0; i < s.n; i++) {
    CHECK_STR_CONTAINS(s.reference[i], "cpu-double");
    CHECK_EQ_INT(s.proj[i].n, p.m.n_proj);
    CHECK_EQ_INT(s.vol[i].n, p.m.n_vox);
    const dbtr_diff_stats *q[2] = {&s.proj[i], &s.vol[i]};
    for (int k = 0; k < 2; k++) {
      CHECK_GT(q[k]->n_differ, 0);
      CHECK_LE(q[k]->n_differ, q[k]->n);
      CHECK_GT(q[k]->max_ulp, 0);
      CHECK_LE(q[k]->mean_abs, q[k]->max_abs);
      CHECK_GT(q[k]->rel_l2, 0.0);
      /* An element passes through about 200 float roundings an iteration (a ray sums 10
       * slices x 4 bilinear weights, a voxel gathers 9 views x ~4 pixels, twice, then an exp
       * and a division), so its relative error is at most ~200 u = 1.2e-5 an iteration
       * (u = 2^-24), 2.4e-5 after 2. 1e-4 is above that, and far below the percent-level
       * change a wrong formula makes. */
      CHECK_LT(q[k]->rel_l2, 1e-4);
    }
  }
  CHECK_EQ_INT(v.paths[0].first_iter, 1);
  CHECK_EQ_INT(v.paths[0].first_in_proj, 1);
  CHECK_EQ_U64(v.paths[0].first_max_ulp, s.proj[0].max_ulp);
  dbtr_validate_close(&v);
  test_mlem_problem_close(&p);
}

static int same_stats(const dbtr_diff_stats *a, const dbtr_diff_stats *b) {
  return a->n == b->n && a->n_differ == b->n_differ && a->max_abs == b->max_abs && a->mean_abs == b->mean_abs &&
         a->max_ulp == b->max_ulp && a->median_ulp == b->median_ulp && a->rel_l2 == b->rel_l2 &&
         a->n_differ_u16 == b->n_differ_u16;
}

/* Lockstep hands every path its reference's state before each iteration. Before the first
 * there is only the common start volume, so iteration 1 is the same row either way. */
DBTR_TEST(lockstep_first_iteration_is_free_running) {
  test_mlem_problem p;
  REQUIRE_OK(problem_open(&p, 0));
  const char *paths[] = {"cpu-1-thread", "cpu-float"};
  rows s[2] = {{0}, {0}};
  for (int lockstep = 0; lockstep < 2; lockstep++) {
    dbtr_validate_opts o = opts(paths, 2, 2, lockstep); /* 2 iterations: lockstep acts from the second */
    dbtr_validate v;
    CHECK_OK(dbtr_validate_open(&v, &p.m, &o));
    CHECK_OK(dbtr_validate_run(&v, record, &s[lockstep]));
    CHECK_EQ_INT(v.lockstep, lockstep);
    dbtr_validate_close(&v);
  }
  REQUIRE(s[0].n == 4 && s[1].n == 4);
  for (size_t i = 0; i < 2; i++) { /* rows 0 and 1: iteration 1 of both paths */
    CHECK_EQ_INT(s[1].iteration[i], 1);
    CHECK(same_stats(&s[0].proj[i], &s[1].proj[i]));
    CHECK(same_stats(&s[0].vol[i], &s[1].vol[i]));
    CHECK(s[0].deviance[i] == s[1].deviance[i]);
  }
  test_mlem_problem_close(&p);
}

/* One row per path and iteration, iteration by iteration, each path in the order given,
 * with its reference; a repeated name runs once. */
DBTR_TEST(rows_in_order) {
  test_mlem_problem p;
  REQUIRE_OK(problem_open(&p, 0));
  const char *paths[] = {"cpu-float", "cpu-1-thread", "cpu-float"};
  dbtr_validate_opts o = opts(paths, 3, 3, 0); /* 3 iterations x 2 distinct paths = 6 rows */
  dbtr_validate v;
  rows s = {0};
  REQUIRE_OK(dbtr_validate_open(&v, &p.m, &o));
  CHECK_OK(dbtr_validate_run(&v, record, &s));
  CHECK_EQ_INT(v.n_paths, 2);
  CHECK_EQ_INT(s.n, 6);
  for (size_t i = 0; i < s.n && i < 6; i++) {
    CHECK_EQ_INT(s.iteration[i], i / 2 + 1);
    CHECK(s.path[i] == &v.paths[i % 2]);
    CHECK_STR_CONTAINS(s.reference[i], i % 2 ? "cpu-float" : "cpu-double");
  }
  CHECK_STR_CONTAINS(v.paths[0].name, "cpu-float");
  CHECK_STR_CONTAINS(v.paths[1].name, "cpu-1-thread");
  CHECK_EQ_INT(v.have_ref[DBTR_VREF_FLOAT], 1);
  CHECK_EQ_INT(v.have_ref[DBTR_VREF_DOUBLE], 1);
  CHECK_EQ_INT(dbtr_validate_run(&v, record, &s), DBTR_EINVAL); /* a run runs once */
  dbtr_validate_close(&v);
  dbtr_validate_close(&v); /* closing twice is safe */
  test_mlem_problem_close(&p);
}

/* A name that is no path is refused with a message that names it, before anything runs,
 * and leaves the run closed. */
DBTR_TEST(bad_path_name) {
  test_mlem_problem p;
  REQUIRE_OK(problem_open(&p, 0));
  const char *paths[] = {"cpu-float", "cpu-fast"};
  dbtr_validate_opts o = opts(paths, 2, 1, 0);
  dbtr_validate v;
  CHECK_EQ_INT(dbtr_validate_open(&v, &p.m, &o), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "'cpu-fast'");
  CHECK_EQ_INT(v.n_paths, 0);
  CHECK(v.paths == NULL);
  CHECK_EQ_INT(dbtr_validate_path_is_gpu("cpu-fast"), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "'cpu-fast'");
  CHECK_EQ_INT(dbtr_validate_path_is_gpu("cpu-float"), 0);
  CHECK_EQ_INT(dbtr_validate_path_is_gpu("cpu-1-thread"), 0);
  CHECK_EQ_INT(dbtr_validate_path_is_gpu("ieee"), 1);
  CHECK_EQ_INT(dbtr_validate_path_is_gpu("cpu-match+fma"), 1); /* an explain variant may be named too */
  o = opts(paths, 0, 1, 0);
  CHECK_EQ_INT(dbtr_validate_open(&v, &p.m, &o), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "nothing to compare");
  o = opts(paths, 1, 0, 0);
  CHECK_EQ_INT(dbtr_validate_open(&v, &p.m, &o), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "iterations");
  test_mlem_problem_close(&p);
}

/* The volumes --save-diffs writes: cpu-1-thread's volume is the float reference's and its
 * difference all zero; cpu-float's difference is its volume minus the double reference
 * rounded to float, taken in double and rounded once. */
DBTR_TEST(volumes_for_save_diffs) {
  test_mlem_problem p;
  REQUIRE_OK(problem_open(&p, 0));
  const char *paths[] = {"cpu-1-thread", "cpu-float"};
  dbtr_validate_opts o = opts(paths, 2, 1, 0);
  dbtr_validate v;
  size_t n = p.m.n_vox;
  float *vol = malloc(n * sizeof *vol), *diff = malloc(n * sizeof *diff), *ref = malloc(n * sizeof *ref);
  REQUIRE(vol && diff && ref);
  REQUIRE_OK(dbtr_validate_open(&v, &p.m, &o));
  CHECK_OK(dbtr_validate_run(&v, NULL, NULL));
  CHECK_OK(dbtr_validate_path_volume(&v, &v.paths[0], vol, diff));
  CHECK_OK(dbtr_validate_ref_volume(&v, DBTR_VREF_FLOAT, ref));
  CHECK(!memcmp(vol, ref, n * sizeof *vol));
  size_t nonzero = 0;
  for (size_t i = 0; i < n; i++) nonzero += diff[i] != 0.0f;
  CHECK_EQ_INT(nonzero, 0);
  CHECK_OK(dbtr_validate_path_volume(&v, &v.paths[1], vol, diff));
  CHECK_OK(dbtr_validate_ref_volume(&v, DBTR_VREF_DOUBLE, ref));
  size_t wrong = 0;
  for (size_t i = 0; i < n; i++) wrong += diff[i] != (float)((double)vol[i] - (double)ref[i]);
  CHECK_EQ_INT(wrong, 0);
  dbtr_validate_close(&v);
  o = opts(paths, 1, 1, 0); /* cpu-1-thread alone needs no double reference */
  REQUIRE_OK(dbtr_validate_open(&v, &p.m, &o));
  CHECK_EQ_INT(dbtr_validate_ref_volume(&v, DBTR_VREF_DOUBLE, ref), DBTR_EINVAL);
  dbtr_validate_close(&v);
  free(vol);
  free(diff);
  free(ref);
  test_mlem_problem_close(&p);
}

DBTR_TEST_MAIN(one_thread_matches_all_threads, float_differs_from_double, lockstep_first_iteration_is_free_running,
               rows_in_order, bad_path_name, volumes_for_save_diffs)
