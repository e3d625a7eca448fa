/* app/cmd_demo.c: `dbtr demo`: the whole pipeline on a small phantom, in seconds. */
#include <errno.h>
#include <stddef.h>
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
  dbtr_session *s; /* the volume as it is written: unseen voxels 0 (engine/fov.h) */
  double first, last;
  int quiet;
} demo_state;

/* After each iteration: the relative L2 error of the current volume against the truth. */
static int demo_iteration(void *user, size_t it, dbtr_backend *b) {
  demo_state *d = user;
  dbtr_diff_stats st;
  int rc = dbtr_session_get_volume(d->s, d->tmp);
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

/* The demo's own settings; the rest of the pipeline is fixed (the breast phantom on the
 * tiny system). Iterations and subsets have the demo's defaults, not recon's. */
typedef struct {
  const char *dir;
  app_recon_opts ro;
} demo_args;

static const cli_opt demo_rows[] = {
    {"--output", 'o', CLI_STRING, offsetof(demo_args, dir), "DIR",
     .help = "folder for scan.h5, truth.tif and recon.tif, made if missing", .def = "dbtr-demo"},
    {"--iterations", 0, CLI_SIZE, offsetof(demo_args, ro.iterations), "N", .help = "full iterations", .def = "10",
     .min = 1, .max = 100000},
    {"--subsets", 0, CLI_SIZE, offsetof(demo_args, ro.subsets), "S", .help = "ordered subsets of views",
     .def = "3", .min = 1, .max = 100000},
};

/* DIR/NAME, or NULL (then the caller reports out of memory). */
static char *path_in(const char *dir, const char *name) {
  size_t len = strlen(dir) + strlen(name) + 2;
  char *p = malloc(len);
  if (p) snprintf(p, len, "%.*s/%s", cli_folder_len(dir), dir, name);
  return p;
}

int dbtr_cmd_demo(int argc, char **argv) {
  const char *cmd = "demo";
  demo_args a = {0};
  app_recon_opts *ro = &a.ro;
  const cli_group groups[] = {{NULL, CLI_ROWS(demo_rows), &a}, cli_quiet_group(&ro->quiet),
                              cli_backend_group(&ro->backend)};
  const cli_command spec = {
      .name = cmd,
      .usage = "[-o DIR] [options]",
      .about = "Simulates a scan of the breast phantom on the `tiny` system (Poisson counts), reconstructs\n"
               "it with transmission ML-EM (the GPU when there is one), writes DIR/scan.h5, DIR/truth.tif and\n"
               "DIR/recon.tif (replacing the demo's own earlier files), and prints\n"
               "the error against the ground truth after every iteration.\n",
      CLI_GROUPS(groups),
  };
  int ex, rc;
  if (!cli_parse(&spec, argc, argv, NULL, &ex)) return ex;
  dbtr_simulate_opts so = {.system = dbtr_system_find("tiny"), .kind = DBTR_PHANTOM_BREAST, .seed = 1,
                           .supersample = 2};
  const char *dir = a.dir;
  if (mkdir(dir, 0755) != 0 && errno != EEXIST)
    return cli_usage_error(cmd, "-o %s: cannot create the folder: %s", dir, strerror(errno));
  char *scan_path = path_in(dir, "scan.h5"), *truth_path = path_in(dir, "truth.tif");
  char *recon_path = path_in(dir, "recon.tif");
  dbtr_scan scan;
  float *truth = NULL;
  demo_state st = {.quiet = ro->quiet};
  dbtr_session *session = NULL;
  double t0 = cli_now();
  if (!scan_path || !truth_path || !recon_path) {
    ex = cli_usage_error(cmd, "out of memory");
    goto out;
  }
  if ((ex = app_simulate(cmd, &so, ro->quiet, &scan, &truth))) goto out;
  dbtr_scan_write_opts wo = {.dtype = DBTR_DTYPE_FLOAT32};
  if ((rc = dbtr_scan_write(&scan, scan_path, &wo)) || (rc = dbtr_tiff_write(truth_path, &scan.grid, truth, NULL))) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  cli_wrote(cmd, ro->quiet, scan_path, "%zu views of %zu x %zu pixels, counts", scan.geom.n_views, scan.geom.n_cols,
            scan.geom.n_rows);
  cli_wrote(cmd, ro->quiet, truth_path, "ground truth, %zu x %zu x %zu voxels", scan.grid.nx, scan.grid.ny,
            scan.grid.nz);
  st.truth = truth;
  if ((rc = dbtr_grid_count(&scan.grid, &st.n_vox)) ||
      (rc = dbtr_alloc((void **)&st.vol, st.n_vox, sizeof(float), "volume")) ||
      (rc = dbtr_alloc(&st.tmp, st.n_vox, sizeof(double), "volume"))) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  ro->on_iteration = demo_iteration;
  ro->user = &st;
  char backend[64];
  if ((ex = app_recon_open(cmd, &scan, &scan.grid, NULL, ro, 0.0, &session))) goto done;
  st.s = session;
  if ((ex = app_recon_run(cmd, session, ro, st.vol, backend, sizeof backend))) goto done;
  size_t n_unseen;
  dbtr_session_fov(session, &n_unseen);
  dbtr_session_close(&session);
  if ((rc = dbtr_tiff_write(recon_path, &scan.grid, st.vol, NULL))) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  cli_wrote(cmd, ro->quiet, recon_path, "the reconstruction, float32");
  printf("dbtr demo: %s phantom, %s system, %zu iterations x %zu subsets on %s (%.1f s); %zu voxels no ray reaches, "
         "written as 0\n", "breast", so.system->name, ro->iterations, ro->subsets, backend, cli_now() - t0, n_unseen);
  printf("dbtr demo: error against the truth (relative L2): %.4f after iteration 1, %.4f after iteration %zu\n",
         st.first, st.last, ro->iterations);
done:
  dbtr_session_close(&session);
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
