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
#include "app/progress.h"
#include "app/run.h"
#include "app/validate.h"
#include "io/tiff.h"
#include "lib/problem.h"
#include "recon/error.h"
#include "recon/mlem.h"
#include "recon/validate.h"

/* The command line, as given. */
typedef struct {
  const char *in, *modes, *expect, *report, *diffs;
  size_t iterations, subsets;
  int lockstep, explain, quiet, force;
  cli_backend_opts cpu; /* only threads (the CPU paths'), gpu_memory and gpus (each GPU path's) */
  app_grid_opts grid;
} vopts;

static const cli_opt validate_rows[] = {
    {"--modes", 0, CLI_STRING, offsetof(vopts, modes), "LIST",
     .help = "GPU modes and CPU paths, comma separated (default: every mode dbtr --mode\n"
             "takes with a GPU, cpu-1-thread,cpu-float without); CPU paths: cpu-1-thread, cpu-float"},
    {"--iterations", 0, CLI_SIZE, offsetof(vopts, iterations), "N", .help = "iterations", .def = "6", .min = 1,
     .max = 10000},
    {"--subsets", 0, CLI_SIZE, offsetof(vopts, subsets), "S", .help = "ordered subsets", .def = "1", .min = 1,
     .max = 100000},
    {"--lockstep", 0, CLI_FLAG, offsetof(vopts, lockstep), NULL,
     .help = "start every path from the CPU state at each iteration, so each\n"
             "iteration's difference is seen alone (default: free-running)"},
    {"--explain", 0, CLI_FLAG, offsetof(vopts, explain), NULL,
     .help = "also run single-change variants of the match modes (FMA, approximate\n"
             "division, exp, FTZ) and say which change accounts for how much"},
    {"--expect-identical", 0, CLI_STRING, offsetof(vopts, expect), "L",
     .help = "fail (exit 6) if any of these paths differs from its reference"},
    {"--report", 0, CLI_STRING, offsetof(vopts, report), "DIR",
     .help = "write validate.csv, validate.json and two SVG plots into DIR"},
    {"--save-diffs", 0, CLI_STRING, offsetof(vopts, diffs), "DIR",
     .help = "write each path's final volume and its difference as TIFF"},
};

/* Parses argv into o; returns 1 to go on, else 0 with *ex the exit code (0 after --help). */
static int parse_args(const char *cmd, int argc, char **argv, vopts *o, int *ex) {
  *o = (vopts){0};
  const cli_group groups[] = {
      {NULL, CLI_ROWS(validate_rows), o},
      cli_force_group(&o->force),
      cli_quiet_group(&o->quiet),
      cli_threads_group(&o->cpu),
      cli_gpu_group(&o->cpu),
      app_grid_group(&o->grid, "reconstruction grid (as dbtr recon)", 1),
  };
  const cli_command spec = {
      .name = cmd,
      .usage = "SCAN.h5 [options]",
      .about = "Runs the CPU reference and GPU modes on the same scan and compares them after every\n"
               "iteration: the forward projections (A mu) and the volume. Without a GPU it compares\n"
               "what the CPU has: 1 thread against N (cpu-1-thread) and float against double (cpu-float).\n",
      .operand = "scan file", .min_operands = 1, .max_operands = 1,
      CLI_GROUPS(groups),
  };
  return cli_parse(&spec, argc, argv, &o->in, ex);
}

/* The report's files, and the volumes --save-diffs writes, are outputs like any other: an
 * existing one is replaced only with --force. Checked before the first iteration. */
static const char *const report_files[] = {"validate.csv", "validate.json", "differing.svg", "max_diff.svg"};

enum { N_REPORT_FILES = sizeof report_files / sizeof report_files[0] };

/* DIR/NAME (the report's files) or DIR/NAMESUFFIX.tif (--save-diffs' volumes). */
static const char *out_path(char path[1024], const char *dir, const char *name, const char *suffix) {
  snprintf(path, 1024, suffix ? "%s/%s%s.tif" : "%s/%s", dir, name, suffix ? suffix : "");
  return path;
}

static int check_outputs(const char *cmd, const vopts *o, const dbtr_validate *v) {
  char path[1024];
  int ex = 0;
  for (size_t i = 0; o->report && !ex && i < N_REPORT_FILES; i++)
    ex = cli_check_output(cmd, out_path(path, o->report, report_files[i], NULL), NULL, 0, o->force);
  for (size_t i = 0; o->diffs && !ex && i < 2 * v->n_paths; i++)
    ex = cli_check_output(cmd, out_path(path, o->diffs, v->paths[i / 2].name, i % 2 ? "-diff" : ""), NULL, 0, o->force);
  for (int r = 0; o->diffs && !ex && r < DBTR_VREF_COUNT; r++)
    if (v->have_ref[r])
      ex = cli_check_output(cmd, out_path(path, o->diffs, dbtr_validate_ref_name((dbtr_vref)r), ""), NULL, 0, o->force);
  return ex;
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

/* The table, iteration by iteration, each path's two lines. The engine measures path by
 * path (one backend at a time), so the table is printed from its results once all are in. */
static void print_table(const dbtr_validate *v) {
  for (size_t it = 0; it < v->iterations; it++)
    for (size_t i = 0; i < v->n_paths; i++) {
      const dbtr_vpath *p = &v->paths[i];
      char label[64];
      snprintf(label, sizeof label, "%s (%s)", p->name, dbtr_validate_ref_name(p->ref));
      print_row(it + 1, label, "proj", &p->proj[it], p->deviance[it]);
      print_row(it + 1, "", "vol", &p->vol[it], p->deviance[it]);
    }
}

/* The progress line through the stages: each reference, then each path. */
typedef struct {
  app_progress line;
  size_t stage, iteration; /* where the engine last stood */
} stage_progress;

static void on_progress(void *user, const dbtr_validate_progress *at) {
  stage_progress *s = user;
  if (at->stage != s->stage) {
    char label[128];
    snprintf(label, sizeof label, "%s (%zu of %zu)", at->name, at->stage, at->n_stages);
    app_progress_run(&s->line, label, 1, at->iterations);
  } else if (at->iteration != s->iteration) {
    app_progress_item(&s->line, at->iteration);
  }
  s->stage = at->stage;
  s->iteration = at->iteration;
  app_progress_update(&s->line, at->fraction);
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

static int save_volume(const vopts *o, const char *name, const char *suffix, const dbtr_grid *grid, const float *vol) {
  char path[1024];
  int rc = dbtr_tiff_write(out_path(path, o->diffs, name, suffix), grid, vol, NULL);
  if (!rc) cli_wrote("validate", o->quiet, path, "%s volume, float32", *suffix ? "difference" : "final");
  return rc;
}

/* --save-diffs: each path's final volume, its difference from its reference, and the
 * references' volumes. */
static int save_diffs(const vopts *o, dbtr_validate *v, const dbtr_grid *grid, size_t n_vox) {
  float *vol = malloc(n_vox * sizeof(float)), *diff = malloc(n_vox * sizeof(float));
  int rc = vol && diff ? 0 : dbtr_err(DBTR_ENOMEM, "--save-diffs: out of memory");
  for (size_t i = 0; i < v->n_paths && !rc; i++) {
    const dbtr_vpath *p = &v->paths[i];
    rc = dbtr_validate_path_volume(v, p, vol, diff);
    if (!rc) rc = save_volume(o, p->name, "", grid, vol);
    if (!rc) rc = save_volume(o, p->name, "-diff", grid, diff);
  }
  for (int r = 0; r < DBTR_VREF_COUNT && !rc; r++)
    if (v->have_ref[r]) {
      rc = dbtr_validate_ref_volume(v, (dbtr_vref)r, vol);
      if (!rc) rc = save_volume(o, dbtr_validate_ref_name((dbtr_vref)r), "", grid, vol);
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
  if ((rc = dbtr__data_expand(&scan, algo, &y, &i0))) goto fail;
  dbtr_data data = {.geom = &scan.geom, .grid = &grid, .algo = algo, .y = y ? y : scan.proj, .i0 = i0};
  stage_progress sp = {0};
  app_progress_init(&sp.line, cmd, o->quiet);
  dbtr_validate_opts vo = {.paths = names, .n_paths = n_names, .explain = o->explain, .iterations = o->iterations,
                           .lockstep = o->lockstep, .progress = o->quiet ? NULL : on_progress, .progress_user = &sp,
                           .progress_every = app_progress_hook(&sp.line).every,
                           /* $TMPDIR is the user's choice; without one, beside the report rather than in a /tmp that
                            * may be memory itself. */
                           .spill_dir = getenv("TMPDIR") ? NULL : o->report};
  /* The folders first, so the check can see whether a file could be created there and the
   * recording can spill beside the report; an existing folder is fine, and one that cannot
   * be made shows in the check. */
  if (o->diffs) mkdir(o->diffs, 0755);
  if (o->report) mkdir(o->report, 0755);
  if ((rc = dbtr_mlem_init(&m, &data, o->subsets, o->cpu.threads))) goto fail;
  m.prob.gpu_memory = o->cpu.gpu_memory;
  m.prob.gpus = o->cpu.gpus;
  if ((rc = dbtr_validate_open(&v, &m, &vo))) goto fail;
  for (int p = 0; p < 2 && !o->quiet; p++)
    if (v.gpu_memory[p][0])
      fprintf(stderr, "dbtr validate: %s paths: %s\n", dbtr_precision_name((dbtr_precision)p), v.gpu_memory[p]);
  if (v.spilled && !o->quiet)
    fprintf(stderr,
            "dbtr validate: the references' recorded states (%.3g GiB) do not fit in the memory left beside the "
            "run (%.3g GiB): they go to an unnamed temporary file in %s\n",
            v.record_bytes / 1073741824.0, v.memory_bytes / 1073741824.0, v.spill_dir);
  if ((ex = check_outputs(cmd, o, &v))) goto done;
  if (!o->quiet) print_header(o, &scan, &grid, algo, gpu_name);
  rc = dbtr_validate_run(&v, NULL, NULL);
  app_progress_clear(&sp.line);
  if (rc) goto fail;
  if (!o->quiet) print_table(&v);
  if (o->diffs && (rc = save_diffs(o, &v, &grid, m.n_vox))) goto fail;
  print_verdicts(&v);
  if (o->explain) print_explain(&v);
  if (o->report && (rc = app_validate_report(o->report, o->in, o->subsets, &v))) goto fail;
  for (size_t i = 0; o->report && i < N_REPORT_FILES; i++) {
    char path[1024];
    cli_wrote(cmd, o->quiet, out_path(path, o->report, report_files[i], NULL), "the report");
  }
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
  int ex;
  if (!parse_args(cmd, argc, argv, &o, &ex)) return ex;
  char gpu_name[256];
  int gpu = dbtr_gpu_available(gpu_name, sizeof gpu_name);
  char all[256] = "";
  for (int m = 0; m < DBTR_MODE_COUNT; m++) /* every mode users pick (recon/modes.def) but the referee */
    if (dbtr_gpu_mode_precision((dbtr_gpu_mode)m) != DBTR_PREC_DD)
      snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", all[0] ? "," : "", dbtr_gpu_mode_name((dbtr_gpu_mode)m));
  if (!o.modes) o.modes = gpu ? all : "cpu-1-thread,cpu-float";
  char buf[2 * MAX_NAMES];
  const char *names[MAX_NAMES];
  size_t n_names;
  if ((ex = select_paths(cmd, &o, gpu, buf, names, &n_names))) return ex;
  return validate_scan(cmd, &o, names, n_names, gpu ? gpu_name : NULL);
}
