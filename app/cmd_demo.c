/* app/cmd_demo.c: `dbtr demo`: the whole pipeline on a small phantom, in seconds. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/cli.h"
#include "app/commands.h"
#include "app/run.h"
#include "io/tiff.h"
#include "recon/compare.h"
#include "recon/error.h"

typedef struct {
  const float *truth;
  size_t n_vox;
  float *vol;
  void *tmp;
  double first, last;
  int quiet;
} demo_state;

/* After each iteration: the relative L2 error of the current volume against the truth. */
static int demo_iteration(void *user, size_t it, dbtr_backend *b) {
  demo_state *d = user;
  dbtr_diff_stats st;
  int rc = b->get_volume(b, d->tmp);
  if (!rc) {
    dbtr_convert_to_float(b->precision, d->tmp, d->n_vox, d->vol);
    rc = dbtr_diff_stats_f(d->vol, d->truth, d->n_vox, NULL, &st);
  }
  if (rc) return cli_fail("demo", rc);
  if (it == 1) d->first = st.rel_l2;
  d->last = st.rel_l2;
  if (!d->quiet) fprintf(stderr, "                 error against the truth: relative L2 %.4f\n", st.rel_l2);
  return 0;
}

int dbtr_cmd_demo(int argc, char **argv) {
  const char *cmd = "demo", *dir = "dbtr-demo", *pos;
  app_recon_opts ro = {.iterations = 10, .subsets = 3};
  dbtr_simulate_opts so = {.system = dbtr_system_find("tiny"), .kind = DBTR_PHANTOM_BREAST, .seed = 1, .supersample = 2};
  cli c;
  cli_init(&c, cmd, argc, argv);
  int k;
  while ((k = cli_next(&c, &pos))) {
    if (k == 2) return cli_usage_error(cmd, "unexpected argument '%s'", pos);
    if (cli_is(&c, "--help") || cli_is(&c, "-h")) {
      printf("usage: dbtr demo [--out DIR] [--iterations N] [--subsets S] [--backend B] [--mode M] [--threads N]\n\n"
             "Simulates a scan of the breast phantom on the `tiny` system (Poisson counts), reconstructs\n"
             "it with transmission ML-EM (the GPU when there is one), writes DIR/scan.h5, DIR/truth.tif and\n"
             "DIR/recon.tif (default DIR: ./dbtr-demo, replaced files are the demo's own), and prints\n"
             "the error against the ground truth after every iteration.\n");
      return 0;
    } else if (cli_is(&c, "--out")) {
      cli_string(&c, &dir);
    } else if (cli_is(&c, "--iterations")) {
      cli_size(&c, &ro.iterations, 1, 100000);
    } else if (cli_is(&c, "--subsets")) {
      cli_size(&c, &ro.subsets, 1, 100000);
    } else if (cli_is(&c, "--quiet")) {
      ro.quiet = 1;
    } else if (!cli_backend_option(&c, &ro.backend)) {
      return cli_unknown(&c);
    }
  }
  if (c.error) return c.error;
  if (mkdir(dir, 0755) != 0 && errno != EEXIST)
    return cli_usage_error(cmd, "--out %s: cannot create the folder: %s", dir, strerror(errno));
  size_t len = strlen(dir) + 16;
  char *scan_path = malloc(len), *truth_path = malloc(len), *recon_path = malloc(len);
  dbtr_scan scan;
  float *truth = NULL;
  demo_state st = {.quiet = ro.quiet};
  int ex = 0, rc;
  double t0 = cli_now();
  if (!scan_path || !truth_path || !recon_path) {
    free(scan_path);
    free(truth_path);
    free(recon_path);
    return cli_usage_error(cmd, "out of memory");
  }
  snprintf(scan_path, len, "%s/scan.h5", dir);
  snprintf(truth_path, len, "%s/truth.tif", dir);
  snprintf(recon_path, len, "%s/recon.tif", dir);
  if ((ex = app_simulate(cmd, &so, ro.quiet, &scan, &truth))) goto out;
  dbtr_scan_write_opts wo = {.dtype = DBTR_DTYPE_FLOAT32};
  if ((rc = dbtr_scan_write(&scan, scan_path, &wo)) || (rc = dbtr_tiff_write(truth_path, &scan.grid, truth, NULL))) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  st.truth = truth;
  if ((rc = dbtr_grid_count(&scan.grid, &st.n_vox)) ||
      (rc = dbtr_alloc((void **)&st.vol, st.n_vox, sizeof(float), "volume")) ||
      (rc = dbtr_alloc(&st.tmp, st.n_vox, sizeof(double), "volume"))) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  ro.on_iteration = demo_iteration;
  ro.user = &st;
  char backend[64];
  if ((ex = app_reconstruct(cmd, &scan, &scan.grid, &ro, st.vol, backend, sizeof backend))) goto done;
  if ((rc = dbtr_tiff_write(recon_path, &scan.grid, st.vol, NULL))) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  printf("dbtr demo: %s phantom, %s system, %zu iterations x %zu subsets on %s\n", "breast", so.system->name,
         ro.iterations, ro.subsets, backend);
  printf("dbtr demo: error against the truth (relative L2): %.4f after iteration 1, %.4f after iteration %zu\n",
         st.first, st.last, ro.iterations);
  printf("dbtr demo: wrote %s, %s, %s (%.1f s)\n", scan_path, truth_path, recon_path, cli_now() - t0);
done:
  dbtr_scan_free(&scan);
out:
  free(truth);
  free(st.vol);
  free(st.tmp);
  free(scan_path);
  free(truth_path);
  free(recon_path);
  return ex;
}
