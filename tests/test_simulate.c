/* tests/test_simulate.c: phantoms/simulate.c, the simulated scan of `dbtr phantom` and
 * `dbtr demo` (docs/phantoms.md, "Simulating a scan").
 *
 * dbtr_simulate must be exactly its recipe: the preset's geometry and grid, the phantom's
 * exact line integrals, and Poisson counts of them with the same seed; so each case
 * rebuilds the recipe from the library calls and compares bits. The counts are also
 * checked against their Poisson mean, the progress callback against its stages, and the
 * errors against the promise that a failed call leaves nothing to free. Seeds are
 * arbitrary: every check must hold for any seed. */
#include <omp.h>
#include <stdint.h>

#include "phantoms/simulate.h"
#include "recon/error.h"
#include "tests/test.h"

/* The tiny preset: 9 views of 128 x 80 pixels, small enough to simulate many times. */
static dbtr_simulate_opts tiny_opts(uint64_t seed) {
  return (dbtr_simulate_opts){.system = dbtr_system_find("tiny"), .kind = DBTR_PHANTOM_BREAST, .seed = seed,
                              .supersample = 1};
}

/* The recipe's exact line integrals: malloc'd, (n_views, n_rows, n_cols); *n their count. */
static double *recipe_lines(const dbtr_simulate_opts *o, size_t *n) {
  dbtr_geom g;
  dbtr_phantom ph;
  double *line = NULL;
  if (dbtr_system_geometry(o->system, &g)) return NULL;
  *n = g.n_views * g.n_rows * g.n_cols;
  if (!dbtr_phantom_make(&ph, o->kind, &o->system->grid, o->seed)) {
    line = malloc(*n * sizeof(double));
    if (line && dbtr_phantom_project(&ph, &g, o->supersample, line)) {
      free(line);
      line = NULL;
    }
    dbtr_phantom_free(&ph);
  }
  dbtr_geom_free(&g);
  return line;
}

static int same_doubles(const double *a, const double *b, size_t n) { return memcmp(a, b, n * sizeof(double)) == 0; }

DBTR_TEST(line_integrals_are_the_exact_ones) {
  dbtr_simulate_opts o = tiny_opts(7);
  o.line_integrals = 1;
  o.supersample = 2;
  dbtr_scan s;
  REQUIRE_OK(dbtr_simulate(&o, &s, NULL));
  size_t n = 0;
  double *line = recipe_lines(&o, &n);
  REQUIRE(line);
  CHECK_EQ_INT(s.quantity, DBTR_QUANTITY_LINE_INTEGRAL);
  CHECK_EQ_INT(s.i0_shape, DBTR_I0_NONE);
  CHECK(s.i0 == NULL);
  CHECK(same_doubles(s.proj, line, n));
  /* The geometry and the grid are the preset's, bit for bit. */
  dbtr_geom g;
  REQUIRE_OK(dbtr_system_geometry(o.system, &g));
  CHECK_EQ_INT(s.geom.n_views, g.n_views);
  CHECK(same_doubles(s.geom.source, g.source, 3 * g.n_views));
  CHECK(same_doubles(s.geom.detector_center, g.detector_center, 3 * g.n_views));
  CHECK_EQ_INT(s.has_grid, 1);
  CHECK(memcmp(&s.grid, &o.system->grid, sizeof s.grid) == 0);
  dbtr_geom_free(&g);
  free(line);
  dbtr_scan_free(&s);
}

/* Counts are the Poisson counts of the exact line integrals with the same seed, at the
 * preset's i0 when no dose is given; the same call gives the same bits on 1 and 2 threads,
 * and another seed other counts. */
DBTR_TEST(counts_are_the_recipe_and_deterministic) {
  dbtr_simulate_opts o = tiny_opts(3);
  dbtr_scan a, b, c;
  int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  REQUIRE_OK(dbtr_simulate(&o, &a, NULL));
  omp_set_num_threads(2);
  REQUIRE_OK(dbtr_simulate(&o, &b, NULL));
  omp_set_num_threads(saved);
  o.seed = 4;
  REQUIRE_OK(dbtr_simulate(&o, &c, NULL));
  o.seed = 3;
  size_t n = 0;
  double *line = recipe_lines(&o, &n), *i0 = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
  REQUIRE(line && i0 && y);
  for (size_t i = 0; i < n; i++) i0[i] = o.system->i0;
  REQUIRE_OK(dbtr_poisson_counts(line, i0, n, 3, y));
  CHECK_EQ_INT(a.quantity, DBTR_QUANTITY_COUNTS);
  CHECK_EQ_INT(a.i0_shape, DBTR_I0_SCALAR);
  CHECK_NEAR(a.i0[0], o.system->i0, 0.0); /* no dose given: the preset's, exactly */
  CHECK(same_doubles(a.proj, y, n));
  CHECK(same_doubles(a.proj, b.proj, n));
  CHECK(!same_doubles(a.proj, c.proj, n));
  free(line), free(i0), free(y);
  dbtr_scan_free(&a), dbtr_scan_free(&b), dbtr_scan_free(&c);
}

/* Mean counts in two regions of the scan at dose 2000: the open field (exact line integral
 * 0, mean exactly 2000) and the pixels behind the phantom (mean sum 2000 exp(-l)). A sum of
 * independent Poisson counts has variance equal to its mean, so each region's sum must lie
 * within 5 standard deviations, sqrt(mean), of its mean: a false alarm once in 1.7 million
 * runs. With over 20000 open-field pixels (23324 on the tiny preset) a standard deviation
 * is under 1 / sqrt(2000 x 20000) = 0.016% of the mean, so a dose 0.2% off lies over 12
 * standard deviations out and always shows. */
DBTR_TEST(counts_have_the_poisson_mean) {
  dbtr_simulate_opts o = tiny_opts(11);
  o.dose = 2000.0;
  dbtr_scan s;
  REQUIRE_OK(dbtr_simulate(&o, &s, NULL));
  size_t n = 0, n_open = 0, n_behind = 0, not_whole = 0;
  double *line = recipe_lines(&o, &n);
  REQUIRE(line);
  CHECK_NEAR(s.i0[0], 2000.0, 0.0); /* the dose given, exactly */
  double open = 0.0, behind = 0.0, lam_behind = 0.0;
  for (size_t i = 0; i < n; i++) {
    double y = s.proj[i];
    not_whole += !(y >= 0.0 && floor(y) == y);
    if (line[i] == 0.0) {
      open += y;
      n_open++;
    } else {
      behind += y;
      lam_behind += 2000.0 * exp(-line[i]);
      n_behind++;
    }
  }
  CHECK_EQ_INT(not_whole, 0); /* counts are whole and non-negative */
  CHECK_GT(n_open, 20000);
  CHECK_GT(n_behind, 0);
  double lam_open = 2000.0 * (double)n_open;
  CHECK_NEAR(open, lam_open, 5.0 * sqrt(lam_open));
  CHECK_NEAR(behind, lam_behind, 5.0 * sqrt(lam_behind));
  free(line);
  dbtr_scan_free(&s);
}

typedef struct {
  int calls;
  dbtr_simulate_stage stages[4];
  const char *name;
  size_t advances[2];   /* advance calls in each stage */
  double last[2];       /* the last fraction of each */
  int out_of_order;     /* a fraction below the one before it, or a stage's after the next began */
} progress_log;

static void log_advance(void *user, dbtr_simulate_stage stage, double fraction) {
  progress_log *l = user;
  l->out_of_order |= fraction < l->last[stage] || l->calls != (int)stage;
  l->advances[stage]++;
  l->last[stage] = fraction;
}

static void log_progress(void *user, dbtr_simulate_stage stage, const dbtr_phantom *ph) {
  progress_log *l = user;
  if (l->calls < 4) l->stages[l->calls] = stage;
  l->calls++;
  l->name = ph->name;
}

/* The ground truth is the phantom voxelised with 3^3 points a voxel (slice by slice, for
 * the same bits as at once), and the progress callback hears of each stage once, in
 * order; without a truth only of the scan. Within the stages it hears after each view and
 * each slice, rising to exactly 1. */
DBTR_TEST(truth_and_progress) {
  dbtr_simulate_opts o = tiny_opts(5);
  o.kind = DBTR_PHANTOM_ACR;
  progress_log l = {0};
  o.progress = log_progress;
  o.advance = log_advance;
  o.user = &l;
  dbtr_scan s;
  float *truth = NULL;
  REQUIRE_OK(dbtr_simulate(&o, &s, &truth));
  REQUIRE(truth);
  CHECK_EQ_INT(l.calls, 2);
  CHECK_EQ_INT(l.stages[0], DBTR_SIMULATE_SCANNED);
  CHECK_EQ_INT(l.stages[1], DBTR_SIMULATE_VOXELISED);
  CHECK_STR_CONTAINS(l.name, "acr");
  const dbtr_grid *grid = &o.system->grid;
  CHECK_EQ_INT(l.advances[DBTR_SIMULATE_SCANNED], s.geom.n_views);
  CHECK_EQ_INT(l.advances[DBTR_SIMULATE_VOXELISED], grid->nz);
  CHECK(l.last[0] == 1.0 && l.last[1] == 1.0);
  CHECK_EQ_INT(l.out_of_order, 0);
  size_t nv = grid->nx * grid->ny * grid->nz;
  dbtr_phantom ph;
  float *want = malloc(nv * sizeof(float));
  REQUIRE(want);
  REQUIRE_OK(dbtr_phantom_make(&ph, o.kind, grid, o.seed));
  REQUIRE_OK(dbtr_phantom_voxelize(&ph, grid, 3, want));
  CHECK(memcmp(truth, want, nv * sizeof(float)) == 0);
  dbtr_phantom_free(&ph);
  free(want);
  free(truth);
  dbtr_scan_free(&s);
  l = (progress_log){0};
  REQUIRE_OK(dbtr_simulate(&o, &s, NULL));
  CHECK_EQ_INT(l.calls, 1);
  dbtr_scan_free(&s);
}

/* Line integrals are handed over, not copied: the scan takes the array and the caller's
 * pointer becomes NULL, so nothing is freed twice. */
DBTR_TEST(store_takes_line_integrals) {
  dbtr_scan s = {0};
  double *line = malloc(4 * sizeof(double)), *kept = line;
  REQUIRE(line);
  for (int i = 0; i < 4; i++) line[i] = 0.25 * i;
  REQUIRE_OK(dbtr_simulate_store(&s, &line, 4, 0.0, 1));
  CHECK(line == NULL);
  CHECK(s.proj == kept);
  CHECK_EQ_INT(s.quantity, DBTR_QUANTITY_LINE_INTEGRAL);
  dbtr_scan_free(&s);
}

/* A failed call returns the library's code and message and leaves nothing to free. */
DBTR_TEST(errors_leave_nothing) {
  dbtr_simulate_opts o = tiny_opts(1);
  o.system = NULL;
  dbtr_scan s;
  static float dummy;
  float *truth = &dummy; /* any non-NULL value: a failed call must set it to NULL */
  CHECK_EQ_INT(dbtr_simulate(&o, &s, &truth), DBTR_EINVAL);
  CHECK(truth == NULL);
  CHECK(s.proj == NULL);
  o = tiny_opts(1);
  o.supersample = 0; /* rays per pixel side start at 1 */
  truth = &dummy;
  CHECK_EQ_INT(dbtr_simulate(&o, &s, &truth), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "supersampling 0");
  CHECK(truth == NULL);
  CHECK(s.proj == NULL && s.geom.source == NULL);
}

DBTR_TEST_MAIN(line_integrals_are_the_exact_ones, counts_are_the_recipe_and_deterministic, counts_have_the_poisson_mean,
               truth_and_progress, store_takes_line_integrals, errors_leave_nothing)
