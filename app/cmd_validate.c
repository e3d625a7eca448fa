/* app/cmd_validate.c: `dbtr validate SCAN.h5`: the CPU reference and GPU modes side by
 * side, iteration by iteration (docs/validation.md). The engine (recon/validate.h) runs and
 * measures; this file parses the options, prints the rows, verdicts and --explain summary,
 * writes the files and maps the outcome to an exit code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/cli.h"
#include "app/commands.h"
#include "app/run.h"
#include "app/validate.h"
#include "io/tiff.h"
#include "recon/error.h"
#include "recon/mlem.h"
#include "recon/validate.h"

static void help(void) {
  printf("usage: dbtr validate SCAN.h5 [options]\n\n"
         "Runs the CPU reference and GPU modes on the same scan and compares them after every\n"
         "iteration: the forward projections (A mu) and the volume. Without a GPU it compares\n"
         "what the CPU has: 1 thread against N (cpu-1-thread) and float against double (cpu-float).\n\n"
         "  --modes LIST           fast,ieee,cpu-match,double,double-match (default: all five with a\n"
         "                         GPU, cpu-1-thread,cpu-float without); the CPU paths may be listed too\n"
         "  --iterations N         iterations (default 6)\n"
         "  --subsets S            ordered subsets (default 1)\n"
         "  --lockstep             start every path from the CPU state at each iteration, so each\n"
         "                         iteration's difference is seen alone (default: free-running)\n"
         "  --explain              also run single-change variants of the match modes (FMA, approximate\n"
         "                         division, exp, FTZ) and say which change accounts for how much\n"
         "  --expect-identical L   fail (exit 6) if any of these paths differs from its reference\n"
         "  --report DIR           write validate.csv, validate.json and two SVG plots into DIR\n"
         "  --save-diffs DIR       write each path's final volume and its difference as TIFF\n"
         "  --threads N            CPU threads (default: all)\n"
         "  --dims, --voxel, --origin   reconstruction grid overrides (as dbtr recon)\n"
         "  --quiet                only the verdicts\n");
}

/* The command line, as given. */
typedef struct {
  const char *in, *modes, *expect, *report, *diffs;
  size_t iterations, subsets;
  int lockstep, explain, quiet, threads;
  int help; /* --help was given: print the usage and stop */
  app_grid_opts grid;
} vopts;

/* Parses argv into o; returns 0 to go on (or, with o->help, to print the usage), else the
 * exit code of a usage error. */
static int parse_args(const char *cmd, int argc, char **argv, vopts *o) {
  *o = (vopts){.iterations = 6, .subsets = 1};
  const char *pos;
  cli c;
  cli_init(&c, cmd, argc, argv);
  int k;
  while ((k = cli_next(&c, &pos))) {
    if (k == 2) {
      if (o->in) return cli_usage_error(cmd, "unexpected argument '%s'", pos);
      o->in = pos;
    } else if (cli_is(&c, "--help") || cli_is(&c, "-h")) {
      o->help = 1;
      return 0;
    } else if (cli_is(&c, "--modes")) {
      cli_string(&c, &o->modes);
    } else if (cli_is(&c, "--iterations")) {
      cli_size(&c, &o->iterations, 1, 10000);
    } else if (cli_is(&c, "--subsets")) {
      cli_size(&c, &o->subsets, 1, 100000);
    } else if (cli_is(&c, "--lockstep")) {
      o->lockstep = 1;
    } else if (cli_is(&c, "--explain")) {
      o->explain = 1;
    } else if (cli_is(&c, "--expect-identical")) {
      cli_string(&c, &o->expect);
    } else if (cli_is(&c, "--report")) {
      cli_string(&c, &o->report);
    } else if (cli_is(&c, "--save-diffs")) {
      cli_string(&c, &o->diffs);
    } else if (cli_is(&c, "--threads")) {
      cli_int(&c, &o->threads, 0, 4096);
    } else if (cli_is(&c, "--quiet")) {
      o->quiet = 1;
    } else if (!app_grid_option(&c, &o->grid)) {
      return cli_unknown(&c);
    }
  }
  if (c.error) return c.error;
  if (!o->in) return cli_usage_error(cmd, "no scan file given (dbtr validate SCAN.h5)");
  return 0;
}

/* A --modes list holds at most this many names: each takes a character and a comma. */
enum { MAX_NAMES = 256 };

/* The --modes names to run, checked before the scan is read; without a GPU the GPU modes
 * are dropped with a note. The names point into buf. */
static int select_paths(const char *cmd, const vopts *o, int gpu, char buf[2 * MAX_NAMES], const char **names,
                        size_t *n) {
  snprintf(buf, 2 * MAX_NAMES, "%s", o->modes);
  *n = 0;
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    int is_gpu = dbtr_validate_path_is_gpu(tok);
    if (is_gpu < 0) return cli_usage_error(cmd, "--modes: %s", dbtr_errmsg());
    if (is_gpu && !gpu) {
      if (!o->quiet) fprintf(stderr, "dbtr validate: no GPU: skipping %s\n", tok);
      continue;
    }
    names[(*n)++] = tok;
  }
  if (*n == 0) return cli_usage_error(cmd, "--modes: nothing to compare");
  return 0;
}

static void print_row(size_t it, const char *name, const char *what, const dbtr_diff_stats *s, double dev) {
  printf("%4zu  %-30s %-5s %10zu %8.4f%% %11.4g %11.4g %10llu %7llu %10.3g %8zu %14.8g\n", it, name, what, s->n_differ,
         s->n ? 100.0 * (double)s->n_differ / (double)s->n : 0.0, s->max_abs, s->mean_abs, (unsigned long long)s->max_ulp,
         (unsigned long long)s->median_ulp, s->rel_l2, s->n_differ_u16, dev);
}

/* The engine's row callback: a path's two lines of the table. */
static void on_row(void *user, const dbtr_validate_row *row) {
  (void)user;
  char label[64];
  snprintf(label, sizeof label, "%s (%s)", row->path->name, row->reference);
  print_row(row->iteration, label, "proj", row->proj, row->deviance);
  print_row(row->iteration, "", "vol", row->vol, row->deviance);
}

/* The problem in one line, then the table's column heads. */
static void print_header(const vopts *o, const dbtr_scan *scan, const dbtr_grid *grid, dbtr_algo algo,
                         const char *gpu_name) {
  printf("dbtr validate: %s, %zu views of %zu x %zu, volume %zu x %zu x %zu, %s ML-EM, %zu subset%s, %s%s%s\n", o->in,
         scan->geom.n_views, scan->geom.n_cols, scan->geom.n_rows, grid->nx, grid->ny, grid->nz,
         algo == DBTR_ALGO_TRANSMISSION ? "transmission" : "emission", o->subsets, o->subsets == 1 ? "" : "s",
         o->lockstep ? "lockstep" : "free-running", gpu_name ? ", GPU: " : ", no GPU", gpu_name ? gpu_name : "");
  printf("%4s  %-30s %-5s %10s %9s %11s %11s %10s %7s %10s %8s %14s\n", "iter", "path (vs reference)", "what", "differ",
         "%", "max|d|", "mean|d|", "max ulp", "med ulp", "rel L2", "u16", "deviance");
}

static int save_volume(const char *dir, const char *name, const char *suffix, const dbtr_grid *grid, const float *vol) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s%s.tif", dir, name, suffix);
  return dbtr_tiff_write(path, grid, vol, NULL);
}

/* --save-diffs: each path's final volume, its difference from its reference, and the
 * references' volumes. */
static int save_diffs(const char *dir, dbtr_validate *v, const dbtr_grid *grid, size_t n_vox) {
  float *vol = malloc(n_vox * sizeof(float)), *diff = malloc(n_vox * sizeof(float));
  int rc = vol && diff ? 0 : dbtr_err(DBTR_ENOMEM, "--save-diffs: out of memory");
  if (!rc) mkdir(dir, 0755);
  for (size_t i = 0; i < v->n_paths && !rc; i++) {
    const dbtr_vpath *p = &v->paths[i];
    rc = dbtr_validate_path_volume(v, p, vol, diff);
    if (!rc) rc = save_volume(dir, p->name, "", grid, vol);
    if (!rc) rc = save_volume(dir, p->name, "-diff", grid, diff);
  }
  for (int r = 0; r < DBTR_VREF_COUNT && !rc; r++)
    if (v->have_ref[r]) {
      rc = dbtr_validate_ref_volume(v, (dbtr_vref)r, vol);
      if (!rc) rc = save_volume(dir, dbtr_validate_ref_name((dbtr_vref)r), "", grid, vol);
    }
  free(vol);
  free(diff);
  return rc;
}

static void print_verdicts(const dbtr_validate *v) {
  printf("\nverdicts (%zu iterations, %s):\n", v->iterations, v->lockstep ? "lockstep" : "free-running");
  for (size_t i = 0; i < v->n_paths; i++) {
    char line[256];
    app_validate_verdict(&v->paths[i], line, sizeof line);
    printf("  %-24s %s\n", v->paths[i].name, line);
  }
}

/* The --explain summary: for each mode, how far each single-change variant alone moves
 * the final volume, against how far the mode moves it. */
static void print_explain(const dbtr_validate *v) {
  size_t last = v->iterations - 1;
  for (size_t i = 0; i < v->n_paths; i++) {
    const dbtr_vpath *m = &v->paths[i];
    int any = 0;
    for (size_t j = 0; j < v->n_paths; j++) any |= v->paths[j].explains == (int)i;
    if (!any) continue;
    printf("\n%s: final volume relative L2 %.3g, %.2f%% of voxels differ; single changes to the match mode:\n", m->name,
           m->vol[last].rel_l2, 100.0 * (double)m->vol[last].n_differ / (double)m->vol[last].n);
    for (size_t j = 0; j < v->n_paths; j++) {
      const dbtr_vpath *p = &v->paths[j];
      if (p->explains != (int)i) continue;
      printf("  %-24s relative L2 %.3g (%.0f%% of the mode's), %.2f%% of voxels differ, max %llu ulp\n", p->name,
             p->vol[last].rel_l2, 100.0 * dbtr_validate_explained_share(v, p),
             100.0 * (double)p->vol[last].n_differ / (double)p->vol[last].n, (unsigned long long)p->vol[last].max_ulp);
    }
  }
}

/* --expect-identical: exit 6 if a listed path differs, else 5 if one could not run. */
static int expect_check(const dbtr_validate *v, const char *list) {
  int ex = 0;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    const dbtr_vpath *found = NULL;
    for (size_t i = 0; i < v->n_paths; i++)
      if (!strcmp(v->paths[i].name, tok)) found = &v->paths[i];
    if (!found) {
      fprintf(stderr, "dbtr validate: --expect-identical: %s was not run (no GPU, or not in --modes)\n", tok);
      if (!ex) ex = dbtr_exit_code(DBTR_ENOGPU);
    } else if (found->first_iter) {
      fprintf(stderr, "dbtr validate: --expect-identical: %s differs from its reference\n", tok);
      ex = dbtr_exit_code(DBTR_EDIFFERS);
    }
  }
  return ex;
}

/* Runs the engine on the scan and prints, saves and reports what it found. Returns an
 * exit code. */
static int validate_scan(const char *cmd, const vopts *o, const char **names, size_t n_names, const char *gpu_name) {
  dbtr_scan scan;
  int rc = cli_read_scan(cmd, &scan, o->in), ex = 0;
  if (rc) return cli_fail(cmd, rc);
  dbtr_grid grid;
  double *i0 = NULL, *y = NULL;
  dbtr_mlem m = {0};
  dbtr_validate v = {0};
  if ((ex = app_grid_resolve(cmd, o->in, &scan, &o->grid, &grid))) goto done;
  dbtr_algo algo = scan.quantity == DBTR_QUANTITY_COUNTS ? DBTR_ALGO_TRANSMISSION : DBTR_ALGO_EMISSION;
  if ((rc = app_expand_data(&scan, algo, &y, &i0))) goto fail;
  dbtr_data data = {.geom = &scan.geom, .grid = &grid, .algo = algo, .y = y ? y : scan.proj, .i0 = i0};
  dbtr_validate_opts vo = {.paths = names, .n_paths = n_names, .explain = o->explain, .iterations = o->iterations,
                           .lockstep = o->lockstep};
  if ((rc = dbtr_mlem_init(&m, &data, o->subsets, o->threads)) || (rc = dbtr_validate_open(&v, &m, &vo))) goto fail;
  if (!o->quiet) print_header(o, &scan, &grid, algo, gpu_name);
  if ((rc = dbtr_validate_run(&v, o->quiet ? NULL : on_row, NULL))) goto fail;
  if (o->diffs && (rc = save_diffs(o->diffs, &v, &grid, m.n_vox))) goto fail;
  print_verdicts(&v);
  if (o->explain) print_explain(&v);
  if (o->report && (rc = app_validate_report(o->report, o->in, o->subsets, &v))) goto fail;
  if (o->expect) ex = expect_check(&v, o->expect);
  goto done;
fail:
  ex = cli_fail(cmd, rc);
done:
  dbtr_validate_close(&v);
  free(i0);
  free(y);
  dbtr_mlem_free(&m);
  dbtr_scan_free(&scan);
  return ex;
}

int dbtr_cmd_validate(int argc, char **argv) {
  const char *cmd = "validate";
  vopts o;
  int ex = parse_args(cmd, argc, argv, &o);
  if (ex) return ex;
  if (o.help) {
    help();
    return 0;
  }
  char gpu_name[256];
  int gpu = dbtr_gpu_available(gpu_name, sizeof gpu_name);
  if (!o.modes) o.modes = gpu ? "fast,ieee,cpu-match,double,double-match" : "cpu-1-thread,cpu-float";
  char buf[2 * MAX_NAMES];
  const char *names[MAX_NAMES];
  size_t n_names;
  if ((ex = select_paths(cmd, &o, gpu, buf, names, &n_names))) return ex;
  return validate_scan(cmd, &o, names, n_names, gpu ? gpu_name : NULL);
}
