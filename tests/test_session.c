/* tests/test_session.c: the engine's session (engine/session.c), the one set-up every client
 * opens: its checks, its hooks, and re-arming it with another scan of the same geometry. On
 * the CPU reference, whose bits are those of the match modes (docs/modes.md). */
#include <stdlib.h>
#include <string.h>

#include "engine/session.h"
#include "recon/error.h"
#include "tests/problems.h"
#include "tests/test.h"

/* A scan of the hologic layout at test size (tests/problems.h) with counts from the test
 * phantom, its i0 a full-size array; seed changes the counts' rounding noise only, not the
 * geometry. The arrays are the caller's to free (test_scan_free). */
static int test_scan(dbtr_scan *s, dbtr_grid *grid, uint64_t seed) {
  memset(s, 0, sizeof *s);
  int rc = test_small_problem("hologic", &s->geom, grid);
  double *y = NULL, *i0 = NULL;
  if (!rc) rc = test_problem_data(&s->geom, grid, 0, &y, &i0);
  if (rc) return rc;
  size_t n = s->geom.n_views * s->geom.n_rows * s->geom.n_cols;
  test_rng_state = seed;
  for (size_t i = 0; i < n; i++) y[i] = floor(y[i] + 2.0 * test_rnd());
  s->quantity = DBTR_QUANTITY_COUNTS;
  s->proj = y;
  s->i0_shape = DBTR_I0_FULL;
  s->i0 = i0;
  return 0;
}

static void test_scan_free(dbtr_scan *s) {
  free(s->proj);
  free(s->i0);
  dbtr_geom_free(&s->geom);
}

/* n iterations of the session into vol (n_vox floats). */
static int run(dbtr_session *s, size_t n, float *vol) {
  dbtr_session_run_opts r = {.first = 1, .last = n};
  int rc = dbtr_session_run(s, &r);
  dbtr_backend *b = dbtr_session_backend(s);
  return rc ? rc : b->get_volume(b, vol);
}

static const dbtr_session_opts cpu_float = {.recon = {.subsets = 3, .backend = {.backend = "cpu"}}};

/* A re-armed session gives, bit for bit, what a new session on the second scan gives: the
 * schedule, the backend and its tables kept, the data, the constants of the fit and the
 * start volume made again. */
DBTR_TEST(rearm_gives_a_new_sessions_bits) {
  dbtr_scan a, b;
  dbtr_grid grid;
  REQUIRE_OK(test_scan(&a, &grid, 1));
  REQUIRE_OK(test_scan(&b, &grid, 2));
  size_t n = grid.nx * grid.ny * grid.nz;
  float *first = malloc(n * sizeof *first), *again = malloc(n * sizeof *again), *fresh = malloc(n * sizeof *fresh);
  REQUIRE(first && again && fresh);
  dbtr_session *s = NULL, *t = NULL;
  REQUIRE_OK(dbtr_session_open(&s, &a, &grid, &cpu_float));
  REQUIRE_OK(run(s, 2, first));
  REQUIRE_OK(dbtr_session_rearm(s, &b));
  REQUIRE_OK(run(s, 2, again));
  REQUIRE_OK(dbtr_session_open(&t, &b, &grid, &cpu_float));
  REQUIRE_OK(run(t, 2, fresh));
  CHECK(memcmp(again, fresh, n * sizeof *fresh) == 0);
  CHECK(memcmp(first, fresh, n * sizeof *fresh) != 0); /* the two scans' counts differ, so must their volumes */
  /* Back to the first scan: its own bits again. */
  REQUIRE_OK(dbtr_session_rearm(s, &a));
  REQUIRE_OK(run(s, 2, again));
  CHECK(memcmp(again, first, n * sizeof *first) == 0);
  dbtr_session_close(&s);
  dbtr_session_close(&t);
  dbtr_session_close(&t); /* closing twice is safe */
  free(first);
  free(again);
  free(fresh);
  test_scan_free(&a);
  test_scan_free(&b);
}

/* Another geometry, or another quantity, is refused with a message saying which. */
DBTR_TEST(rearm_refuses_another_problem) {
  dbtr_scan a, b;
  dbtr_grid grid;
  REQUIRE_OK(test_scan(&a, &grid, 1));
  REQUIRE_OK(test_scan(&b, &grid, 1));
  dbtr_session *s = NULL;
  REQUIRE_OK(dbtr_session_open(&s, &a, &grid, &cpu_float));
  b.geom.source[2] += 1e-9; /* one source 1 nm higher is another geometry */
  CHECK_EQ_INT(dbtr_session_rearm(s, &b), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "another geometry");
  b.geom.source[2] -= 1e-9;
  b.quantity = DBTR_QUANTITY_LINE_INTEGRAL;
  CHECK_EQ_INT(dbtr_session_rearm(s, &b), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "line integrals where the session's scan held counts");
  dbtr_session_close(&s);
  test_scan_free(&a);
  test_scan_free(&b);
}

/* The grid is checked where the session opens, under the scan's name; the values of a scan
 * built by hand are checked too, before anything is expanded. */
DBTR_TEST(open_checks_grid_and_values) {
  dbtr_scan a;
  dbtr_grid grid;
  REQUIRE_OK(test_scan(&a, &grid, 1));
  dbtr_session *s = NULL;
  dbtr_session_opts o = cpu_float;
  o.source = "scan.h5";
  dbtr_grid below = grid;
  below.origin[2] = -10.0; /* voxel centres from z = -10 mm: the bottom, half a 3 mm voxel lower, below z = 0 */
  CHECK_EQ_INT(dbtr_session_open(&s, &a, &below, &o), DBTR_EGEOM);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "scan.h5: the volume bottom (z = -11.5 mm) lies below the detector");
  CHECK(s == NULL);
  a.proj[5] = -1.0;
  CHECK_EQ_INT(dbtr_session_open(&s, &a, &grid, &o), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "projections: value -1 at flat index 5");
  o.values_checked = 1; /* the reader checked them: not checked again */
  a.proj[5] = 3.0;
  REQUIRE_OK(dbtr_session_open(&s, &a, &grid, &o));
  dbtr_session_close(&s);
  test_scan_free(&a);
}

/* A run that cannot fit the host's memory is refused before the data are expanded, with the
 * sizes; DBTR_MEMORY_LIMIT stands for a small machine (io/memory.h). */
DBTR_TEST(open_refuses_what_memory_cannot_hold) {
  dbtr_scan a;
  dbtr_grid grid;
  REQUIRE_OK(test_scan(&a, &grid, 1));
  dbtr_session *s = NULL;
  dbtr_session_opts o = cpu_float;
  o.caller_bytes = 2e9; /* the caller's volume alone is over the limit below */
  setenv("DBTR_MEMORY_LIMIT", "1000000000", 1);
  CHECK_EQ_INT(dbtr_session_open(&s, &a, &grid, &o), DBTR_ENOMEM);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "the reconstruction (CPU, float) needs");
  unsetenv("DBTR_MEMORY_LIMIT");
  CHECK(s == NULL);
  test_scan_free(&a);
}

/* A problem-only session (dbtr validate's) holds the schedule and the data and no backend. */
DBTR_TEST(problem_only_has_no_backend) {
  dbtr_scan a;
  dbtr_grid grid;
  REQUIRE_OK(test_scan(&a, &grid, 1));
  dbtr_session *s = NULL;
  dbtr_session_opts o = cpu_float;
  o.problem_only = 1;
  REQUIRE_OK(dbtr_session_open(&s, &a, &grid, &o));
  CHECK(dbtr_session_backend(s) == NULL);
  CHECK_EQ_INT(dbtr_session_mlem(s)->prob.n_subsets, 3);
  dbtr_session_run_opts r = {.first = 1, .last = 1};
  CHECK_EQ_INT(dbtr_session_run(s, &r), DBTR_EINVAL);
  dbtr_session_close(&s);
  test_scan_free(&a);
}

/* The hooks, in order, and a cancellation: end's non-zero return stops the run after that
 * iteration and comes back from it. */
typedef struct {
  char log[64];
  size_t len;
} hook_log;

static void on_begin(void *user, size_t it) {
  hook_log *h = user;
  h->log[h->len++] = (char)('0' + it);
}

static int on_end(void *user, size_t it, double deviance, dbtr_backend *b) {
  hook_log *h = user;
  (void)b;
  h->log[h->len++] = deviance > 0.0 ? 'e' : '?';
  return it == 2 ? 42 : 0;
}

DBTR_TEST(hooks_and_cancel) {
  dbtr_scan a;
  dbtr_grid grid;
  REQUIRE_OK(test_scan(&a, &grid, 1));
  dbtr_session *s = NULL;
  REQUIRE_OK(dbtr_session_open(&s, &a, &grid, &cpu_float));
  hook_log h = {"", 0};
  dbtr_session_run_opts r = {.first = 1, .last = 4, .begin = on_begin, .end = on_end, .user = &h};
  CHECK_EQ_INT(dbtr_session_run(s, &r), 42);
  h.log[h.len] = '\0';
  CHECK(strcmp(h.log, "1e2e") == 0);
  dbtr_session_close(&s);
  test_scan_free(&a);
}

/* i0 reaches the backend from the scan's own shape, never expanded in double first: a scalar, a
 * per-view and a per-pixel i0 give the bits of the same values as a full-size array. */
DBTR_TEST(i0_shapes_give_the_full_arrays_bits) {
  dbtr_scan a;
  dbtr_grid grid;
  REQUIRE_OK(test_scan(&a, &grid, 1)); /* i0 = 1000 everywhere, full size */
  size_t n = grid.nx * grid.ny * grid.nz;
  float *full = malloc(n * sizeof *full), *shaped = malloc(n * sizeof *shaped);
  REQUIRE(full && shaped);
  dbtr_session *s = NULL;
  REQUIRE_OK(dbtr_session_open(&s, &a, &grid, &cpu_float));
  REQUIRE_OK(run(s, 2, full));
  dbtr_session_close(&s);
  double *i0_full = a.i0, thousands[64];
  for (size_t i = 0; i < sizeof thousands / sizeof thousands[0]; i++) thousands[i] = 1000.0;
  REQUIRE(a.geom.n_views <= 64);
  const dbtr_i0_shape shapes[3] = {DBTR_I0_SCALAR, DBTR_I0_PER_VIEW, DBTR_I0_PER_PIXEL};
  for (int k = 0; k < 3; k++) {
    a.i0_shape = shapes[k];
    a.i0 = shapes[k] == DBTR_I0_PER_PIXEL ? i0_full : thousands; /* the first view's pixels are 1000 too */
    REQUIRE_OK(dbtr_session_open(&s, &a, &grid, &cpu_float));
    REQUIRE_OK(run(s, 2, shaped));
    CHECK(memcmp(full, shaped, n * sizeof *full) == 0);
    dbtr_session_close(&s);
  }
  a.i0 = i0_full;
  free(full);
  free(shaped);
  test_scan_free(&a);
}

/* Data in a GPU's memory (dbtr_recon_open_device) where no GPU can be used is refused before
 * any work, saying so; where one can, host memory passed as device memory is refused naming the
 * array (tests/test_gpu_device_data.c runs the route itself). */
DBTR_TEST(device_data_refused_clearly) {
  dbtr_scan a;
  dbtr_grid grid;
  REQUIRE_OK(test_scan(&a, &grid, 1));
  dbtr_device_data d = {.proj = a.proj, .proj_type = DBTR_PREC_DOUBLE, .i0 = a.i0, .i0_type = DBTR_PREC_DOUBLE};
  dbtr_scan shape = a;
  shape.proj = NULL;
  shape.i0 = NULL;
  dbtr_recon *r = NULL;
  char name[256];
  int gpu = dbtr_gpu_available(name, sizeof name);
  CHECK_EQ_INT(dbtr_recon_open_device(&r, &shape, &d, &grid, NULL), gpu ? DBTR_EINVAL : DBTR_ENOGPU);
  CHECK_STR_CONTAINS(dbtr_errmsg(), gpu ? "projections: not in the memory of a GPU" : "device data: no GPU");
  CHECK(r == NULL);
  test_scan_free(&a);
}

DBTR_TEST_MAIN(device_data_refused_clearly, i0_shapes_give_the_full_arrays_bits, rearm_gives_a_new_sessions_bits, rearm_refuses_another_problem, open_checks_grid_and_values,
               open_refuses_what_memory_cannot_hold, problem_only_has_no_backend, hooks_and_cancel)
