/* tests/test_validate.c: the validation engine (engine/validate.c) called directly, on the
 * CPU paths that every build has: the tiny preset's 9 views at test size
 * (tests/problems.h: 48 x 32 pixels, a 40 x 30 x 10 grid), transmission. */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "recon/dd.h"
#include "recon/error.h"
#include "engine/validate.h"
#include "phantoms/phantom.h"
#include "quality/quality.h"
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
  int has_vs[MAX_ROWS];    /* 1: the row has the path against the referee */
  dbtr_referee_stats vs_proj[MAX_ROWS], vs_vol[MAX_ROWS];
  uint64_t hash[MAX_ROWS]; /* of the four arrays' bytes: equal rows hash equal */
} rows;

/* FNV-1a, continued from h over n bytes. */
static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
  return h;
}

/* The row's reference state (with proj its projections), as its path was compared with it
 * (dbtr_validate_ref_state); malloc'ed. */
static void *ref_of(const dbtr_validate_row *r, int proj) {
  size_t n = proj ? r->proj->n : r->vol->n;
  void *a = malloc(n * dbtr_precision_size(r->path->prec));
  if (!a || dbtr_validate_ref_state(r->run, r->path->ref, r->iteration, proj, r->path->prec, a)) {
    free(a);
    TEST__FAIL("%s, iteration %zu: the reference's state could not be read", r->path->name, r->iteration);
    exit(1);
  }
  return a;
}

static void record(void *user, const dbtr_validate_row *r) {
  rows *s = user;
  if (s->n == MAX_ROWS) return;
  size_t es = dbtr_precision_size(r->path->prec), np = r->proj->n * es, nv = r->vol->n * es;
  s->iteration[s->n] = r->iteration;
  s->path[s->n] = r->path;
  s->reference[s->n] = r->reference;
  s->proj[s->n] = *r->proj;
  s->vol[s->n] = *r->vol;
  s->deviance[s->n] = r->deviance;
  s->has_vs[s->n] = r->vs_proj != NULL;
  if (r->vs_proj) {
    s->vs_proj[s->n] = *r->vs_proj;
    s->vs_vol[s->n] = *r->vs_vol;
  }
  void *ref_proj = ref_of(r, 1), *ref_vol = ref_of(r, 0);
  s->same_bits[s->n] = !memcmp(r->path_proj, ref_proj, np) && !memcmp(r->path_vol, ref_vol, nv);
  uint64_t h = fnv(14695981039346656037ull, r->path_proj, np);
  h = fnv(h, r->path_vol, nv);
  h = fnv(h, ref_proj, np);
  s->hash[s->n] = fnv(h, ref_vol, nv);
  free(ref_proj);
  free(ref_vol);
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
  for (size_t i = 0; i < 4; i += 2) { /* rows 0 and 2: iteration 1 of each path */
    CHECK_EQ_INT(s[1].iteration[i], 1);
    CHECK(same_stats(&s[0].proj[i], &s[1].proj[i]));
    CHECK(same_stats(&s[0].vol[i], &s[1].vol[i]));
    CHECK(s[0].deviance[i] == s[1].deviance[i]);
  }
  test_mlem_problem_close(&p);
}

/* One row per path and iteration, path by path in the order given (the engine runs one
 * path at a time), each path's iteration by iteration, with its reference; a repeated name
 * runs once. */
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
    CHECK_EQ_INT(s.iteration[i], i % 3 + 1);
    CHECK(s.path[i] == &v.paths[i / 3]);
    CHECK_STR_CONTAINS(s.reference[i], i / 3 ? "cpu-float" : "cpu-double");
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
  CHECK_OK(dbtr_validate_ref_state(&v, DBTR_VREF_FLOAT, v.iterations, 0, DBTR_PREC_FLOAT, ref));
  CHECK(!memcmp(vol, ref, n * sizeof *vol));
  size_t nonzero = 0;
  for (size_t i = 0; i < n; i++) nonzero += diff[i] != 0.0f;
  CHECK_EQ_INT(nonzero, 0);
  CHECK_OK(dbtr_validate_path_volume(&v, &v.paths[1], vol, diff));
  CHECK_OK(dbtr_validate_ref_state(&v, DBTR_VREF_DOUBLE, v.iterations, 0, DBTR_PREC_FLOAT, ref));
  size_t wrong = 0;
  for (size_t i = 0; i < n; i++) wrong += diff[i] != (float)((double)vol[i] - (double)ref[i]);
  CHECK_EQ_INT(wrong, 0);
  dbtr_validate_close(&v);
  o = opts(paths, 1, 1, 0); /* cpu-1-thread alone needs no double reference */
  REQUIRE_OK(dbtr_validate_open(&v, &p.m, &o));
  CHECK_EQ_INT(dbtr_validate_ref_state(&v, DBTR_VREF_DOUBLE, v.iterations, 0, DBTR_PREC_FLOAT, ref), DBTR_EINVAL);
  dbtr_validate_close(&v);
  free(vol);
  free(diff);
  free(ref);
  test_mlem_problem_close(&p);
}

/* Under lockstep a path's iteration starts from its reference's recorded state before it.
 * By hand: the double reference's first iteration, its volume rounded to float, and one
 * float iteration from there; the engine's second cpu-float row holds exactly that, and
 * the double reference's second iteration rounded to float as its reference. */
DBTR_TEST(lockstep_row_is_one_iteration_from_the_recorded_state) {
  test_mlem_problem p;
  REQUIRE_OK(problem_open(&p, 0));
  const dbtr_mlem *m = &p.m;
  const char *paths[] = {"cpu-float"};
  dbtr_validate_opts o = opts(paths, 1, 2, 1); /* 2 iterations: lockstep acts from the second */
  dbtr_validate v;
  rows s = {0};
  REQUIRE_OK(dbtr_validate_open(&v, m, &o));
  CHECK_OK(dbtr_validate_run(&v, record, &s));
  dbtr_validate_close(&v);
  REQUIRE(s.n == 2);
  double *vd = malloc(m->n_vox * sizeof *vd), *pd = malloc(m->n_proj * sizeof *pd), dev_d, dev_f;
  float *vf = malloc(m->n_vox * sizeof *vf), *pf = malloc(m->n_proj * sizeof *pf);
  float *rvf = malloc(m->n_vox * sizeof *rvf), *rpf = malloc(m->n_proj * sizeof *rpf);
  REQUIRE(vd && pd && vf && pf && rvf && rpf);
  dbtr_backend *bd = NULL, *bf = NULL;
  REQUIRE_OK(dbtr_cpu_backend_create(&bd, DBTR_PREC_DOUBLE, &m->prob));
  REQUIRE_OK(dbtr_cpu_backend_create(&bf, DBTR_PREC_FLOAT, &m->prob));
  CHECK_OK(dbtr_mlem_load(m, bd, 0.0));
  CHECK_OK(dbtr_mlem_load(m, bf, 0.0));
  CHECK_OK(dbtr_mlem_iterate(m, bd, &dev_d));
  CHECK_OK(bd->get_volume(bd, vd));
  dbtr_convert_to_float(DBTR_PREC_DOUBLE, vd, m->n_vox, vf);
  CHECK_OK(bf->set_volume(bf, vf));
  CHECK_OK(dbtr_mlem_iterate(m, bf, &dev_f));
  CHECK_OK(bf->get_volume(bf, vf));
  CHECK_OK(bf->get_projections(bf, pf));
  CHECK_OK(dbtr_mlem_iterate(m, bd, &dev_d));
  CHECK_OK(bd->get_volume(bd, vd));
  CHECK_OK(bd->get_projections(bd, pd));
  dbtr_convert_to_float(DBTR_PREC_DOUBLE, vd, m->n_vox, rvf);
  dbtr_convert_to_float(DBTR_PREC_DOUBLE, pd, m->n_proj, rpf);
  uint64_t h = fnv(14695981039346656037ull, pf, m->n_proj * sizeof *pf);
  h = fnv(h, vf, m->n_vox * sizeof *vf);
  h = fnv(h, rpf, m->n_proj * sizeof *rpf);
  CHECK_EQ_U64(fnv(h, rvf, m->n_vox * sizeof *rvf), s.hash[1]);
  CHECK(s.deviance[1] == dev_f);
  dbtr_backend_destroy(&bd);
  dbtr_backend_destroy(&bf);
  free(vd);
  free(pd);
  free(vf);
  free(pf);
  free(rvf);
  free(rpf);
  test_mlem_problem_close(&p);
}

/* Entries in a folder, . and .. aside. */
static size_t files_in(const char *dir) {
  DIR *d = opendir(dir);
  size_t n = 0;
  if (!d) return (size_t)-1;
  for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  closedir(d);
  return n;
}

/* The rows of a run, and the spill folder's file count as each row came. */
typedef struct {
  rows s;
  const char *dir;
  size_t most_files;
} watched_rows;

static void record_watching(void *user, const dbtr_validate_row *r) {
  watched_rows *w = user;
  record(&w->s, r);
  size_t n = files_in(w->dir);
  if (n > w->most_files) w->most_files = n;
}

/* One run of cpu-1-thread and cpu-float with the memory given (1 byte: the recording is
 * spilled), its rows and final volumes (path, difference, path, difference). */
static void run_with_memory(test_mlem_problem *p, const char *dir, size_t memory, int lockstep, watched_rows *w,
                            float *vols, int *spilled) {
  const char *paths[] = {"cpu-1-thread", "cpu-float"};
  dbtr_validate_opts o = opts(paths, 2, 3, lockstep);
  o.record_memory = memory;
  o.spill_dir = dir;
  dbtr_validate v;
  size_t n = p->m.n_vox;
  w->dir = dir;
  REQUIRE_OK(dbtr_validate_open(&v, &p->m, &o));
  CHECK_OK(dbtr_validate_run(&v, record_watching, w));
  for (size_t i = 0; i < 2; i++) CHECK_OK(dbtr_validate_path_volume(&v, &v.paths[i], vols + 2 * i * n, vols + (2 * i + 1) * n));
  /* The estimate: 3 iterations of both references' volumes and projections, and the final
   * volume of each path that runs (cpu-float free-running replays the float reference). */
  double ref = 3.0 * (double)(n + p->m.n_proj) * (4.0 + 8.0);
  CHECK(v.record_bytes == ref + (double)n * 4.0 * (lockstep ? 2.0 : 1.0));
  *spilled = v.spilled;
  dbtr_validate_close(&v);
}

/* A recording that does not fit the memory allowed goes to an unnamed file in the spill
 * folder: the rows and final volumes are those of a run that kept it in memory, bit for
 * bit, free-running and lockstep, and no file is ever seen in the folder, during the run
 * or after. */
DBTR_TEST(spilled_recording_gives_the_same_rows) {
  test_mlem_problem p;
  REQUIRE_OK(problem_open(&p, 0));
  char dir[] = "spill-XXXXXX";
  REQUIRE(mkdtemp(dir));
  size_t n = p.m.n_vox;
  float *vols = malloc(8 * n * sizeof *vols);
  REQUIRE(vols);
  for (int lockstep = 0; lockstep < 2; lockstep++) {
    watched_rows w[2];
    memset(w, 0, sizeof w);
    int spilled[2];
    run_with_memory(&p, dir, (size_t)-1, lockstep, &w[0], vols, &spilled[0]);
    run_with_memory(&p, dir, 1, lockstep, &w[1], vols + 4 * n, &spilled[1]);
    CHECK_EQ_INT(spilled[0], 0);
    CHECK_EQ_INT(spilled[1], 1);
    REQUIRE(w[0].s.n == 6 && w[1].s.n == 6);
    for (size_t i = 0; i < 6; i++) {
      CHECK_EQ_U64(w[0].s.hash[i], w[1].s.hash[i]);
      CHECK(same_stats(&w[0].s.proj[i], &w[1].s.proj[i]) && same_stats(&w[0].s.vol[i], &w[1].s.vol[i]));
      CHECK(w[0].s.deviance[i] == w[1].s.deviance[i]);
    }
    CHECK(!memcmp(vols, vols + 4 * n, 4 * n * sizeof *vols));
    CHECK_EQ_INT(w[1].most_files, 0);
  }
  CHECK_EQ_INT(files_in(dir), 0);
  CHECK_OK(rmdir(dir));
  /* A spill folder that is not there fails when the run opens, naming it. */
  const char *paths[] = {"cpu-float"};
  dbtr_validate_opts o = opts(paths, 1, 1, 0);
  o.record_memory = 1;
  o.spill_dir = dir;
  dbtr_validate v;
  CHECK_EQ_INT(dbtr_validate_open(&v, &p.m, &o), DBTR_EIO);
  CHECK_STR_CONTAINS(dbtr_errmsg(), dir);
  free(vols);
  test_mlem_problem_close(&p);
}

/* What the progress hook saw: each call's stage, iteration and fraction. */
enum { MAX_CALLS = 4096 };
typedef struct {
  size_t n, stage[MAX_CALLS], iteration[MAX_CALLS];
  double fraction[MAX_CALLS];
  char name[8][48];   /* copied: a path's name lives as long as its run */
  size_t n_stages;
} calls;

static void on_progress(void *user, const dbtr_validate_progress *at) {
  calls *c = user;
  if (c->n == MAX_CALLS) return;
  c->stage[c->n] = at->stage;
  c->iteration[c->n] = at->iteration;
  c->fraction[c->n++] = at->fraction;
  if (at->stage <= 8) snprintf(c->name[at->stage - 1], sizeof c->name[0], "%s", at->name);
  c->n_stages = at->n_stages;
}

/* Progress comes stage by stage (the references, then the paths), each iteration opening
 * at 0 and rising to at most 1, from inside the CPU's iterations too; and it changes no bit
 * of any row. */
DBTR_TEST(progress_stage_by_stage_and_harmless) {
  test_mlem_problem p;
  REQUIRE_OK(problem_open(&p, 0));
  const char *paths[] = {"cpu-1-thread", "cpu-float"};
  rows s[2] = {{0}, {0}};
  calls *c = calloc(1, sizeof *c);
  REQUIRE(c);
  for (int watched = 0; watched < 2; watched++) {
    dbtr_validate_opts o = opts(paths, 2, 2, 0);
    if (watched) o = (dbtr_validate_opts){.paths = paths, .n_paths = 2, .iterations = 2, .progress = on_progress,
                                          .progress_user = c, .progress_every = 0.0};
    dbtr_validate v;
    REQUIRE_OK(dbtr_validate_open(&v, &p.m, &o));
    CHECK_OK(dbtr_validate_run(&v, record, &s[watched]));
    dbtr_validate_close(&v);
  }
  REQUIRE(s[0].n == 4 && s[1].n == 4);
  for (size_t i = 0; i < 4; i++) CHECK_EQ_U64(s[0].hash[i], s[1].hash[i]);
  CHECK_EQ_INT(c->n_stages, 4);
  const char *names[] = {"cpu-float reference", "cpu-double reference", "cpu-1-thread", "cpu-float"};
  for (size_t k = 0; k < 4; k++) CHECK_STR_CONTAINS(c->name[k], names[k]);
  /* 4 stages x 2 iterations open at 0; the 3 stages that compute (cpu-float replays the
   * float reference) report from within their subsets as well. */
  CHECK_GT(c->n, 8 + 3);
  for (size_t i = 0; i < c->n; i++) {
    int opens = i == 0 || c->stage[i] != c->stage[i - 1] || c->iteration[i] != c->iteration[i - 1];
    CHECK(c->fraction[i] >= 0.0 && c->fraction[i] <= 1.0);
    if (opens) CHECK(c->fraction[i] == 0.0);
    if (opens && i) CHECK(c->stage[i] > c->stage[i - 1] || c->iteration[i] == c->iteration[i - 1] + 1);
    if (!opens) CHECK(c->fraction[i] >= c->fraction[i - 1]);
  }
  free(c);
  test_mlem_problem_close(&p);
}

/* ---- The referee ----------------------------------------------------------------------- */

/* The rows of a run with the referee, and each path's last state (volume, then projections)
 * widened to double, for comparing with the referee's double-double state by hand. */
typedef struct {
  rows s;
  size_t iterations, n_vox, n_proj;
  double *last[2][2]; /* [path 0 or 1][0 volume, 1 projections] */
} referee_rows;

static void widen(const dbtr_vpath *p, const void *a, size_t n, double *out) {
  for (size_t i = 0; i < n; i++)
    out[i] = p->prec == DBTR_PREC_FLOAT ? (double)((const float *)a)[i] : ((const double *)a)[i];
}

static void record_referee_rows(void *user, const dbtr_validate_row *r) {
  referee_rows *w = user;
  record(&w->s, r);
  int k = !strcmp(r->path->name, "cpu-double");
  if (r->iteration != w->iterations) return;
  widen(r->path, r->path_vol, w->n_vox, w->last[k][0]);
  widen(r->path, r->path_proj, w->n_proj, w->last[k][1]);
}

/* ||y - x|| / ||x|| against the double-double x itself: (y - hi) - lo is y's error rounded
 * once or twice (fl(a - b) has relative error at most u = 2^-53). */
static double exact_rel_l2(const double *y, const dbtr_dd *x, size_t n) {
  double d2 = 0.0, x2 = 0.0;
  for (size_t i = 0; i < n; i++) {
    double d = (y[i] - x[i].hi) - x[i].lo;
    d2 += d * d;
    x2 += x[i].hi * x[i].hi;
  }
  return sqrt(d2 / x2);
}

/* Relative slack for comparing two relative L2 norms computed in double in different orders:
 * each sum of squares has at most n = 12000 (volume) or 13824 (projections) terms, so its
 * relative error is at most n u = 1.6e-12, and each square and difference adds a few u.
 * 1e-9 is far above that, and far below every difference a test below looks at. */
static const double SUM_SLACK = 1e-9;
#define CHECK_GE(a, b) CHECK_LE(b, a)
/* a is at least b, up to the sums' rounding. */
#define CHECK_GE_REL(a, b) CHECK_GE(a, (b) * (1.0 - SUM_SLACK))

/* With the referee on the CPU, cpu-float and cpu-double against it, after 2 iterations:
 * - the referee's recorded doubles are a direct CPU dd run's high parts, bit for bit, at every
 *   iteration, volume and projections;
 * - the best float answer's relative L2 lies in [1e-9, 1e-7];
 * - cpu-double is within 1e-13 of the referee;
 * - what distance from the referee guarantees against the best answers (below). */
DBTR_TEST(referee_measures_cpu_float_and_cpu_double) {
  test_mlem_problem p;
  REQUIRE_OK(problem_open(&p, 0));
  const dbtr_mlem *m = &p.m;
  enum { ITERS = 2 };
  const char *paths[] = {"cpu-float", "cpu-double"};
  dbtr_validate_opts o = opts(paths, 2, ITERS, 0);
  o.referee = DBTR_REFEREE_CPU;
  calls *c = calloc(1, sizeof *c);
  REQUIRE(c);
  o.progress = on_progress;
  o.progress_user = c;
  referee_rows w = {.iterations = ITERS, .n_vox = m->n_vox, .n_proj = m->n_proj};
  for (int k = 0; k < 4; k++) w.last[k / 2][k % 2] = malloc((k % 2 ? m->n_proj : m->n_vox) * sizeof(double));
  dbtr_dd *xv = malloc(m->n_vox * sizeof *xv), *xp = malloc(m->n_proj * sizeof *xp);
  double *hv = malloc(m->n_vox * sizeof *hv), *hp = malloc(m->n_proj * sizeof *hp), *rec = malloc(m->n_proj * sizeof *rec);
  REQUIRE(w.last[0][0] && w.last[0][1] && w.last[1][0] && w.last[1][1] && xv && xp && hv && hp && rec);
  dbtr_validate v;
  REQUIRE_OK(dbtr_validate_open(&v, m, &o));
  CHECK_OK(dbtr_validate_run(&v, record_referee_rows, &w));
  REQUIRE(w.s.n == 2 * ITERS);
  /* The referee is a stage after the references, before the paths. */
  CHECK_EQ_INT(c->n_stages, 4);
  const char *names[] = {"cpu-double reference", "referee (cpu-dd)", "cpu-float", "cpu-double"};
  for (size_t k = 0; k < 4; k++) CHECK_STR_CONTAINS(c->name[k], names[k]);
  free(c);

  /* The referee's recording is a dd run's high parts (dbtr_convert_to_double of dd). */
  dbtr_backend *b = NULL;
  REQUIRE_OK(dbtr_cpu_backend_create(&b, DBTR_PREC_DD, &m->prob));
  CHECK_OK(dbtr_mlem_load(m, b, 0.0));
  for (size_t it = 1; it <= ITERS; it++) {
    double dev;
    CHECK_OK(dbtr_mlem_iterate(m, b, &dev));
    CHECK(dev == v.best[it - 1].deviance);
    CHECK_OK(b->get_volume(b, xv));
    CHECK_OK(b->get_projections(b, xp));
    for (size_t i = 0; i < m->n_vox; i++) hv[i] = xv[i].hi;
    for (size_t i = 0; i < m->n_proj; i++) hp[i] = xp[i].hi;
    CHECK_OK(dbtr_validate_referee_state(&v, it, 0, DBTR_PREC_DOUBLE, rec));
    CHECK(!memcmp(rec, hv, m->n_vox * sizeof *hv));
    CHECK_OK(dbtr_validate_referee_state(&v, it, 1, DBTR_PREC_DOUBLE, rec));
    CHECK(!memcmp(rec, hp, m->n_proj * sizeof *hp));
  }
  dbtr_backend_destroy(&b);

  const dbtr_vbest *best = &v.best[ITERS - 1];
  for (int q = 0; q < 2; q++) {
    const double *bq = q ? best->proj : best->vol;
    /* Each element's correct rounding to float is within u = 2^-24 = 6e-8 of it, relatively
     * (subnormal floats aside, whose absolute error below 2^-150 weighs nothing in the norm),
     * so the best float answer is at most 6e-8 from the referee: below 1e-7. It could be 0
     * only if every value were a float; results of long double-double sums are not, and their
     * roundings spread over the ulp, about u / sqrt(3) = 3.4e-8 in the mean of squares: 1e-9
     * is far below that. */
    CHECK(bq[DBTR_PREC_FLOAT] >= 1e-9 && bq[DBTR_PREC_FLOAT] <= 1e-7);
    /* The same for double, with u = 2^-53 = 1.1e-16. */
    CHECK(bq[DBTR_PREC_DOUBLE] > 0.0 && bq[DBTR_PREC_DOUBLE] <= 1.2e-16);
  }
  for (size_t i = 0; i < w.s.n; i++) {
    REQUIRE(w.s.has_vs[i]);
    const dbtr_referee_stats *q[2] = {&w.s.vs_proj[i], &w.s.vs_vol[i]};
    int is_double = w.s.path[i]->prec == DBTR_PREC_DOUBLE;
    for (int k = 0; k < 2; k++) {
      CHECK_EQ_INT(q[k]->n, k ? m->n_vox : m->n_proj);
      CHECK(q[k]->best_units == q[k]->rel_l2 / q[k]->best);
      /* An element passes through about 200 roundings an iteration (float_differs_from_double),
       * so the CPU in double is at most ~200 u = 2.2e-14 from the exact answer an iteration,
       * 4.4e-14 after 2: below 1e-13. */
      if (is_double) CHECK_LT(q[k]->rel_l2, 1e-13);
    }
  }

  /* Against the double-double state of the last iteration (xv, xp):
   * - The best answer is the closest one there is: rounding to nearest is, element by
   *   element, the nearest value of the precision, so no path's true distance from the
   *   referee, ||y - x|| / ||x||, is below the best answer's (up to the sums' rounding).
   * - The engine measures rel_l2 against the referee rounded to double, hi, not x; by the
   *   triangle inequality it differs from the true distance by at most ||hi - x|| / ||x||,
   *   the best double answer. In best units: by best_double / best_float (~1e-9) for a float
   *   path, but by a whole unit for a double path.
   * So a float path's best_units is at least 1 less 1e-9; a double path's is not bounded
   * below by 1: one equal to the referee rounded to double would measure 0, while being one
   * best answer away from the exact one. What is guaranteed for it is the true distance. */
  for (int k = 0; k < 2; k++) {
    dbtr_precision prec = k ? DBTR_PREC_DOUBLE : DBTR_PREC_FLOAT;
    const dbtr_referee_stats *last = &w.s.vs_vol[k * ITERS + ITERS - 1], *lastp = &w.s.vs_proj[k * ITERS + ITERS - 1];
    double tv = exact_rel_l2(w.last[k][0], xv, m->n_vox), tp = exact_rel_l2(w.last[k][1], xp, m->n_proj);
    CHECK_GE_REL(tv, best->vol[prec]);
    CHECK_GE_REL(tp, best->proj[prec]);
    CHECK_LE(fabs(last->rel_l2 - tv), best->vol[DBTR_PREC_DOUBLE] * (1.0 + SUM_SLACK) + tv * SUM_SLACK);
    CHECK_LE(fabs(lastp->rel_l2 - tp), best->proj[DBTR_PREC_DOUBLE] * (1.0 + SUM_SLACK) + tp * SUM_SLACK);
    if (!k) {
      CHECK_GE(last->best_units, 1.0 - best->vol[DBTR_PREC_DOUBLE] / best->vol[DBTR_PREC_FLOAT] - 2.0 * SUM_SLACK);
      CHECK_GE(lastp->best_units, 1.0 - best->proj[DBTR_PREC_DOUBLE] / best->proj[DBTR_PREC_FLOAT] - 2.0 * SUM_SLACK);
    }
  }
  /* The referee's float rounding of the last volume is kept (for --save-diffs), and is its
   * correct rounding. */
  float *fv = malloc(m->n_vox * sizeof *fv), *fx = malloc(m->n_vox * sizeof *fx);
  REQUIRE(fv && fx);
  CHECK_OK(dbtr_validate_referee_state(&v, ITERS, 0, DBTR_PREC_FLOAT, fv));
  dbtr_convert_to_float(DBTR_PREC_DD, xv, m->n_vox, fx);
  CHECK(!memcmp(fv, fx, m->n_vox * sizeof *fv));
  dbtr_validate_close(&v);
  for (int k = 0; k < 4; k++) free(w.last[k / 2][k % 2]);
  free(xv);
  free(xp);
  free(hv);
  free(hp);
  free(rec);
  free(fv);
  free(fx);
  test_mlem_problem_close(&p);
}

/* The referee is not a path, and runs free: dd and cpu-dd are refused as paths with a message
 * that points to the referee option, and the referee with lockstep is refused; without the
 * referee, the rows carry nothing against it and there is no state of it to read. */
DBTR_TEST(referee_is_not_a_path) {
  CHECK_EQ_INT(dbtr_validate_path_is_gpu("dd"), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "--referee");
  CHECK_EQ_INT(dbtr_validate_path_is_gpu("cpu-dd"), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "--referee");
  CHECK_EQ_INT(dbtr_validate_path_is_gpu("cpu-double"), 0);
  test_mlem_problem p;
  REQUIRE_OK(problem_open(&p, 0));
  const char *paths[] = {"cpu-double"};
  dbtr_validate_opts o = opts(paths, 1, 1, 1);
  o.referee = DBTR_REFEREE_CPU;
  dbtr_validate v;
  CHECK_EQ_INT(dbtr_validate_open(&v, &p.m, &o), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "lockstep");
  o = opts(paths, 1, 1, 0);
  rows s = {0};
  double *out = malloc(p.m.n_vox * sizeof *out);
  REQUIRE(out);
  REQUIRE_OK(dbtr_validate_open(&v, &p.m, &o));
  CHECK_OK(dbtr_validate_run(&v, record, &s));
  REQUIRE(s.n == 1);
  CHECK_EQ_INT(s.has_vs[0], 0);
  CHECK(v.best == NULL && v.paths[0].vs_vol == NULL);
  CHECK_EQ_INT(dbtr_validate_referee_state(&v, 1, 0, DBTR_PREC_DOUBLE, out), DBTR_EINVAL);
  /* cpu-double is the double reference's own computation: it replays the recording. */
  CHECK_EQ_INT(s.same_bits[0], 1);
  CHECK_EQ_INT(v.paths[0].first_iter, 0);
  dbtr_validate_close(&v);
  free(out);
  test_mlem_problem_close(&p);
}

/* What the referee adds to the recording: its state rounded to double at every iteration,
 * rounded to float too where a float path is compared with it, else only the last volume in
 * float (for --save-diffs). And a spilled recording gives the rows of one kept in memory. */
DBTR_TEST(referee_recording_size_and_spill) {
  test_mlem_problem p;
  REQUIRE_OK(problem_open(&p, 0));
  char dir[] = "spill-XXXXXX";
  REQUIRE(mkdtemp(dir));
  double n = (double)p.m.n_vox, np = (double)p.m.n_proj;
  const char *paths[] = {"cpu-float", "cpu-double"};
  rows s[2] = {{0}, {0}};
  for (int spill = 0; spill < 2; spill++) {
    dbtr_validate_opts o = opts(paths, 2, 2, 0);
    o.referee = DBTR_REFEREE_CPU;
    o.record_memory = spill ? 1 : (size_t)-1;
    o.spill_dir = dir;
    dbtr_validate v;
    REQUIRE_OK(dbtr_validate_open(&v, &p.m, &o));
    CHECK_EQ_INT(v.spilled, spill);
    /* 2 iterations of the double reference (8 bytes an element) and of the referee (8 + 4),
     * and cpu-float's final volume: it does not replay, as no float reference is recorded;
     * cpu-double replays the double reference. */
    CHECK(v.record_bytes == 2.0 * (n + np) * (8.0 + 12.0) + 4.0 * n);
    CHECK_OK(dbtr_validate_run(&v, record, &s[spill]));
    dbtr_validate_close(&v);
  }
  REQUIRE(s[0].n == 4 && s[1].n == 4);
  for (size_t i = 0; i < 4; i++) {
    CHECK_EQ_U64(s[0].hash[i], s[1].hash[i]);
    CHECK(!memcmp(&s[0].vs_proj[i], &s[1].vs_proj[i], sizeof s[0].vs_proj[i]));
    CHECK(!memcmp(&s[0].vs_vol[i], &s[1].vs_vol[i], sizeof s[0].vs_vol[i]));
  }
  /* cpu-double alone: the referee's float rounding is recorded for the last volume only. */
  dbtr_validate_opts o = opts(paths + 1, 1, 2, 0);
  o.referee = DBTR_REFEREE_CPU;
  dbtr_validate v;
  REQUIRE_OK(dbtr_validate_open(&v, &p.m, &o));
  CHECK(v.record_bytes == 2.0 * (n + np) * (8.0 + 8.0) + 4.0 * n);
  dbtr_validate_close(&v);
  CHECK_OK(rmdir(dir));
  test_mlem_problem_close(&p);
}

/* --quality (opts.objects): every row's changes are the measures dbtr_quality_measure takes of
 * the row's two volumes, the path's and its reference's as recorded (in the reference's own
 * precision), each change computed here from those two values; cpu-1-thread, bitwise its
 * reference, changes every measurable value by exactly 0; and each path's verdict holds the
 * largest changes of those rows. The objects are the tiny breast's, laid out on the test grid. */
typedef struct {
  const dbtr_phantom *objects;
  size_t rows, checked; /* rows seen; object changes compared */
  int bad;              /* 1: a row's change was not the measures' */
} quality_rows;

/* (a - b) / |b| x 100 for CNR and contrast, a - b for the FWHM; NaN where not measurable. */
static double expected_change(int k, double a, double b) {
  if (!isfinite(a) || !isfinite(b)) return (double)NAN;
  if (k == DBTR_QFWHM) return a - b;
  return b != 0.0 ? 100.0 * (a - b) / fabs(b) : (double)NAN;
}

/* Both NaN, or the same double. */
static int same_value(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

static void check_quality_row(void *user, const dbtr_validate_row *r) {
  quality_rows *s = user;
  s->rows++;
  dbtr_precision rp = r->path->ref == DBTR_VREF_DOUBLE ? DBTR_PREC_DOUBLE : DBTR_PREC_FLOAT;
  void *ref = malloc(r->vol->n * dbtr_precision_size(rp));
  dbtr_quality qp, qr;
  if (!ref || dbtr_validate_ref_state(r->run, r->path->ref, r->iteration, 0, rp, ref) ||
      dbtr_quality_measure(&qp, r->path_vol, r->path->prec, r->run->m->prob.grid, s->objects) ||
      dbtr_quality_measure(&qr, ref, rp, r->run->m->prob.grid, s->objects) || !r->quality || qp.n != r->run->n_objects) {
    free(ref);
    TEST__FAIL("%s, iteration %zu: the volumes could not be measured", r->path->name, r->iteration);
    exit(1);
  }
  for (size_t j = 0; j < qp.n; j++) {
    const dbtr_quality_object *a = &qp.obj[j], *b = &qr.obj[j];
    const dbtr_quality_change *c = &r->quality[j];
    double va[3] = {a->cnr, a->fwhm, a->contrast}, vb[3] = {b->cnr, b->fwhm, b->contrast};
    int ok = c->object == a->object && c->focus == a->focus_slice && c->focus_ref == b->focus_slice;
    for (int k = 0; k < DBTR_QMEASURES; k++) {
      ok &= same_value(c->m[k].value, va[k]) && same_value(c->m[k].ref, vb[k]) &&
            same_value(c->m[k].change, expected_change(k, va[k], vb[k]));
      /* cpu-1-thread's volume is its reference's bits, so the measures are too. */
      if (!strcmp(r->path->name, "cpu-1-thread")) ok &= isnan(c->m[k].change) || c->m[k].change == 0.0;
    }
    if (!ok) {
      s->bad = 1;
      TEST__FAIL("%s, iteration %zu, object %zu: the changes are not the measures'", r->path->name, r->iteration,
                 a->object);
    }
    s->checked++;
  }
  dbtr_quality_free(&qp);
  dbtr_quality_free(&qr);
  free(ref);
}

/* The largest |change| of measure k over p's rows of iterations [it0, it1) and the count not
 * measurable, found here by a plain scan. */
static void largest(const dbtr_validate *v, const dbtr_vpath *p, int k, size_t it0, size_t it1, double *best,
                    size_t *object, size_t *nan_count) {
  *best = 0.0, *object = 0, *nan_count = 0;
  int found = 0;
  for (size_t it = it0; it < it1; it++)
    for (size_t j = 0; j < v->n_objects; j++) {
      const dbtr_quality_change *c = &p->quality[it * v->n_objects + j];
      if (isnan(c->m[k].change)) {
        ++*nan_count;
      } else if (!found || fabs(c->m[k].change) > fabs(*best)) {
        *best = c->m[k].change, *object = c->object;
        found = 1;
      }
    }
}

DBTR_TEST(quality_changes_are_the_volumes_measures) {
  test_mlem_problem p;
  REQUIRE_OK(problem_open(&p, 0));
  dbtr_phantom objects;
  REQUIRE_OK(dbtr_phantom_make(&objects, DBTR_PHANTOM_BREAST, &p.grid, 1));
  size_t targets = 0;
  for (size_t i = 0; i < objects.n_shapes; i++) targets += objects.info[i].target != 0;
  const char *paths[] = {"cpu-1-thread", "cpu-float"};
  for (int lockstep = 0; lockstep < 2; lockstep++) { /* free-running (cpu-float replays) and lockstep (it runs) */
    dbtr_validate_opts o = opts(paths, 2, 2, lockstep);
    o.objects = &objects;
    dbtr_validate v;
    quality_rows s = {.objects = &objects};
    REQUIRE_OK(dbtr_validate_open(&v, &p.m, &o));
    CHECK_OK(dbtr_validate_run(&v, check_quality_row, &s));
    CHECK_EQ_INT(v.n_objects, targets);
    CHECK_EQ_INT(s.rows, 4);                 /* 2 paths x 2 iterations */
    CHECK_EQ_INT(s.checked, 4 * targets);
    CHECK_EQ_INT(s.bad, 0);
    for (size_t i = 0; i < v.n_paths; i++) {
      const dbtr_vpath *pa = &v.paths[i];
      for (int k = 0; k < DBTR_QMEASURES; k++)
        for (int all = 0; all < 2; all++) {
          const dbtr_quality_extreme *e = all ? &pa->quality_verdict.all[k] : &pa->quality_verdict.last[k];
          double best;
          size_t object, nan_count;
          largest(&v, pa, k, all ? 0 : 1, 2, &best, &object, &nan_count);
          CHECK_EQ_INT(e->not_measurable, nan_count);
          if (e->found) {
            CHECK(e->change == best && e->object == object);
          }
        }
      /* cpu-float's measures move by float rounding: some change is measured and is not 0. */
      if (!strcmp(pa->name, "cpu-float")) {
        CHECK(pa->quality_verdict.last[DBTR_QCONTRAST].found && pa->quality_verdict.last[DBTR_QCONTRAST].change != 0.0);
      } else {
        for (int k = 0; k < DBTR_QMEASURES; k++)
          CHECK(!pa->quality_verdict.all[k].found || pa->quality_verdict.all[k].change == 0.0);
      }
    }
    dbtr_validate_close(&v);
  }
  dbtr_phantom_free(&objects);
  test_mlem_problem_close(&p);
}

/* Objects with no test object among them are refused when the run opens; without objects no
 * row carries quality. */
static void no_quality(void *user, const dbtr_validate_row *r) { *(int *)user |= r->quality != NULL; }

DBTR_TEST(quality_needs_test_objects) {
  test_mlem_problem p;
  REQUIRE_OK(problem_open(&p, 0));
  dbtr_phantom objects;
  REQUIRE_OK(dbtr_phantom_make(&objects, DBTR_PHANTOM_BREAST, &p.grid, 1));
  for (size_t i = 0; i < objects.n_shapes; i++) objects.info[i].target = 0;
  const char *paths[] = {"cpu-float"};
  dbtr_validate_opts o = opts(paths, 1, 1, 0);
  o.objects = &objects;
  dbtr_validate v;
  CHECK_EQ_INT(dbtr_validate_open(&v, &p.m, &o), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "no test object");
  o.objects = NULL;
  int any = 0;
  REQUIRE_OK(dbtr_validate_open(&v, &p.m, &o));
  CHECK_OK(dbtr_validate_run(&v, no_quality, &any));
  CHECK_EQ_INT(any, 0);
  CHECK(v.n_objects == 0 && v.paths[0].quality == NULL);
  dbtr_validate_close(&v);
  dbtr_phantom_free(&objects);
  test_mlem_problem_close(&p);
}

DBTR_TEST_MAIN(one_thread_matches_all_threads, float_differs_from_double, lockstep_first_iteration_is_free_running,
               rows_in_order, bad_path_name, volumes_for_save_diffs, lockstep_row_is_one_iteration_from_the_recorded_state,
               spilled_recording_gives_the_same_rows, progress_stage_by_stage_and_harmless,
               referee_measures_cpu_float_and_cpu_double, referee_is_not_a_path, referee_recording_size_and_spill,
               quality_changes_are_the_volumes_measures, quality_needs_test_objects)
