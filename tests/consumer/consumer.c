/* tests/consumer/consumer.c: a program outside dbtr that uses the installed libdbtr through
 * <dbtr.h> alone (tests/install.sh builds it with find_package(dbtr) and with pkg-config).
 *
 *   consumer SCRATCH.h5
 *
 * It builds a small geometry by hand, projects a volume, writes the projections as a scan
 * and reads them back, reconstructs them for a few iterations, runs a validation, and checks
 * that an error names the file. Prints "consumer: ok" and exits 0, or says what failed. */
#include <dbtr.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NV = 3, NR = 16, NC = 16, NX = 8, NY = 8, NZ = 4 };

/* Prints "consumer: <message>" and returns 1, the exit code of a failure. */
static int say(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "consumer: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  return 1;
}

static int fail(const char *what, int rc) { return say("%s: %s (%s)", what, dbtr_errmsg(), dbtr_strerror(rc)); }

/* Three views from sources 600 mm above a 16 x 16 detector of 1 mm pixels, the middle one
 * straight above; the grid sits 10 mm above the detector, inside every view's cone. */
static int make_geometry(dbtr_geom *g, dbtr_grid *grid) {
  int rc = dbtr_geom_init(g, NV, NR, NC);
  if (rc) return rc;
  for (size_t k = 0; k < NV; k++) {
    g->source[3 * k] = 50.0 * ((double)k - 1.0);
    g->source[3 * k + 2] = 600.0;
    g->detector_u[3 * k] = 1.0;
    g->detector_v[3 * k + 1] = 1.0;
  }
  *grid = (dbtr_grid){NX, NY, NZ, 1.0, 1.0, 1.0, {-3.5, -3.5, 10.0}};
  rc = dbtr_geom_check(g, "consumer geometry");
  return rc ? rc : dbtr_grid_check(grid, g, "consumer grid");
}

/* A uniform volume of 0.01/mm, forward projected into line integrals. */
static int project(const dbtr_geom *g, const dbtr_grid *grid, double *proj) {
  double vol[NX * NY * NZ];
  for (size_t i = 0; i < NX * NY * NZ; i++) vol[i] = 0.01;
  dbtr_cpu_projector *p = NULL;
  int rc = dbtr_cpu_projector_create(&p, g, grid, DBTR_PREC_DOUBLE, 0);
  if (!rc) rc = dbtr_cpu_forward(p, vol, proj);
  dbtr_cpu_projector_destroy(&p);
  dbtr_cpu_projector_destroy(&p); /* twice is safe */
  return rc;
}

/* Three iterations of emission ML-EM on the CPU in float: the deviance must fall. */
static int reconstruct(const dbtr_scan *s, const dbtr_grid *grid) {
  dbtr_recon_opts o = {.backend = {.backend = "cpu", .precision = "float"}};
  dbtr_recon *r = NULL;
  int rc = dbtr_recon_open(&r, s, grid, &o);
  if (rc) return fail("dbtr_recon_open", rc);
  double dev[3];
  for (int it = 0; it < 3 && !rc; it++) rc = dbtr_recon_iterate(r, &dev[it]);
  float vol[NX * NY * NZ];
  if (!rc) rc = dbtr_recon_volume(r, vol);
  int bad = rc ? fail("dbtr_recon_iterate", rc) : 0;
  if (!bad && (strcmp(dbtr_recon_backend(r), "cpu-float") || dbtr_recon_precision(r) != DBTR_PREC_FLOAT))
    bad = say("backend %s, not cpu-float", dbtr_recon_backend(r));
  if (!bad && !(dev[2] < dev[0] && isfinite(vol[0])))
    bad = say("deviance %g then %g, volume[0] %g", dev[0], dev[2], (double)vol[0]);
  dbtr_recon_close(&r);
  dbtr_recon_close(&r);
  return bad;
}

static void count_rows(void *user, const dbtr_validation_row *row) {
  (void)row;
  ++*(int *)user;
}

static int validate(const dbtr_scan *s, const dbtr_grid *grid) {
  const char *paths[] = {"cpu-1-thread", "cpu-float"};
  dbtr_validation_opts o = {.paths = paths, .n_paths = 2, .iterations = 2};
  int rows = 0, rc = dbtr_validation_run(s, grid, &o, count_rows, &rows);
  if (rc) return fail("dbtr_validation_run", rc);
  if (rows != 4) return say("%d validation rows, not 2 paths x 2 iterations", rows);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) return say("usage: consumer SCRATCH.h5") + 1;
  dbtr_scan s = {.quantity = DBTR_QUANTITY_LINE_INTEGRAL}, back = {0};
  dbtr_grid grid;
  double proj[NV * NR * NC];
  int rc = make_geometry(&s.geom, &grid);
  if (rc) return fail("geometry", rc);
  if ((rc = project(&s.geom, &grid, proj))) return fail("forward projection", rc);
  s.proj = proj;
  if ((rc = dbtr_scan_write(&s, argv[1], NULL))) return fail("dbtr_scan_write", rc);
  if ((rc = dbtr_scan_read(&back, argv[1]))) return fail("dbtr_scan_read", rc);
  if (memcmp(back.proj, proj, sizeof proj) || back.geom.n_views != NV)
    return say("%s does not read back as written", argv[1]);
  int bad = reconstruct(&back, &grid) || validate(&back, &grid);
  dbtr_scan_free(&back);
  dbtr_geom_free(&s.geom);
  if (bad) return 1;
  rc = dbtr_scan_read(&back, "no-such-scan.h5");
  if (rc >= 0 || !strstr(dbtr_errmsg(), "no-such-scan.h5"))
    return say("reading a missing file gave %d: %s", rc, dbtr_errmsg());
  printf("consumer: ok (libdbtr %s)\n", dbtr_version());
  return 0;
}
