/* app/cmd_validate.c: `dbtr validate SCAN.h5`: the CPU reference and GPU modes side by
 * side, iteration by iteration (docs/validation.md). The engine (engine/validate.h) runs and
 * measures; this file parses the options, prints the rows, verdicts and --explain summary,
 * writes the files and maps the outcome to an exit code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/cli.h"
#include "app/commands.h"
#include "app/progress.h"
#include "app/run.h"
#include "app/validate.h"
#include "engine/session.h"
#include "engine/validate.h"
#include "io/atomic_file.h"
#include "io/tiff.h"
#include "quality/quality.h"
#include "recon/error.h"

/* The command line, as given. */
typedef struct {
  const char *in, *modes, *expect, *report, *diffs, *regions;
  size_t iterations, subsets;
  int lockstep, explain, referee, quality, quiet, force;
  cli_backend_opts cpu; /* only threads (the CPU paths'), gpu_memory and gpus (each GPU path's) */
  app_grid_opts grid;
} vopts;

static const cli_opt validate_rows[] = {
    {"--modes", 0, CLI_STRING, offsetof(vopts, modes), "LIST",
     .help = "GPU modes and CPU paths, comma separated (default: every mode dbtr --mode\n"
             "takes but dd with a GPU, cpu-1-thread,cpu-float without); CPU paths:\n"
             "cpu-1-thread, cpu-float, cpu-double"},
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
    {"--referee", 0, CLI_FLAG, offsetof(vopts, referee), NULL,
     .help = "also run the referee, the same algorithm in double-double (on the GPU when\n"
             "there is one, else the CPU), and measure every path's distance from it\n"
             "in units of the best answer of its precision (not with --lockstep)"},
    {"--quality", 0, CLI_FLAG, offsetof(vopts, quality), NULL,
     .help = "also measure each test object of the scan's phantom (/phantom) in every\n"
             "path's and reference's volume: how much each path changes its CNR, ASF\n"
             "FWHM and contrast (docs/quality.md)"},
    {"--quality-regions", 0, CLI_STRING, offsetof(vopts, regions), "FILE",
     .help = "--quality on regions given by hand (JSON, docs/quality.md) instead"},
    {"--expect-identical", 0, CLI_STRING, offsetof(vopts, expect), "L",
     .help = "fail (exit 6) if any of these paths differs from its reference"},
    {"--report", 0, CLI_STRING, offsetof(vopts, report), "DIR",
     .help = "write validate.csv, validate.json and SVG plots into DIR"},
    {"--save-diffs", 0, CLI_STRING, offsetof(vopts, diffs), "DIR",
     .help = "write each path's final volume and its difference as TIFF (and the\n"
             "references' and the referee's volumes)"},
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
               "what the CPU has: 1 thread against N (cpu-1-thread) and float against double (cpu-float).\n"
               "--referee measures every path against the double-double referee: which is closest to exact.\n",
      .operand = "scan file", .min_operands = 1, .max_operands = 1,
      CLI_GROUPS(groups),
  };
  return cli_parse(&spec, argc, argv, &o->in, ex);
}

/* The report's files, and the volumes --save-diffs writes, are outputs like any other: an
 * existing one is replaced only with --force. Checked before the first iteration. The last
 * two are written with the referee and with --quality only. */
static const char *const report_files[] = {"validate.csv",   "validate.json", "differing.svg", "max_diff.svg",
                                           "vs_referee.svg", "quality_changes.csv"};
enum { N_REPORT_FILES = sizeof report_files / sizeof report_files[0] };

/* 1 when the run writes report_files[i]. */
static int writes_report_file(const dbtr_validate *v, size_t i) {
  return i < 4 || (i == 4 && v->referee) || (i == 5 && v->n_objects);
}

/* DIR/NAME (the report's files) or DIR/NAMESUFFIX.tif (--save-diffs' volumes). */
static const char *out_path(char path[1024], const char *dir, const char *name, const char *suffix) {
  snprintf(path, 1024, suffix ? "%.*s/%s%s.tif" : "%.*s/%s", cli_folder_len(dir), dir, name, suffix ? suffix : "");
  return path;
}

/* The suffix of reference r's volume file for --save-diffs: "" (NAME.tif), or where a path has
 * its name ("cpu-float", "cpu-double"), nothing when that path replays it (the path's file is
 * the reference's volume) and "-reference" when the path computes its own (--lockstep). */
static const char *ref_suffix(const dbtr_validate *v, dbtr_vref r) {
  for (size_t i = 0; i < v->n_paths; i++)
    if (!strcmp(v->paths[i].name, dbtr_validate_ref_name(r))) return v->paths[i].replays ? NULL : "-reference";
  return "";
}

static int check_outputs(const char *cmd, const vopts *o, const dbtr_validate *v) {
  char path[1024];
  int ex = 0;
  for (size_t i = 0; o->report && !ex && i < N_REPORT_FILES; i++)
    if (writes_report_file(v, i)) ex = cli_check_output(cmd, out_path(path, o->report, report_files[i], NULL), NULL, 0, o->force);
  for (size_t i = 0; o->diffs && !ex && i < 2 * v->n_paths; i++)
    ex = cli_check_output(cmd, out_path(path, o->diffs, v->paths[i / 2].name, i % 2 ? "-diff" : ""), NULL, 0, o->force);
  for (int r = 0; o->diffs && !ex && r < DBTR_VREF_COUNT; r++)
    if (v->have_ref[r] && ref_suffix(v, (dbtr_vref)r))
      ex = cli_check_output(cmd, out_path(path, o->diffs, dbtr_validate_ref_name((dbtr_vref)r), ref_suffix(v, (dbtr_vref)r)),
                            NULL, 0, o->force);
  if (o->diffs && !ex && v->referee) ex = cli_check_output(cmd, out_path(path, o->diffs, "referee", ""), NULL, 0, o->force);
  return ex;
}

/* A --modes list holds at most this many names: each takes a character and a comma. */
enum { MAX_NAMES = 256 };

/* The --modes names to run, and the --expect-identical names, checked before the scan is read:
 * what cannot run is refused before any work, not after the CPU references (minutes at full
 * size). A GPU mode without a GPU is exit 7, as the library's DBTR_ENOGPU (Python's
 * NoGpuError for the same list); an --expect-identical path that is not among the paths, exit
 * 2. The names point into buf. */
static int select_paths(const char *cmd, const vopts *o, int gpu, char buf[2 * MAX_NAMES], const char **names,
                        size_t *n) {
  snprintf(buf, 2 * MAX_NAMES, "%s", o->modes);
  *n = 0;
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    int is_gpu = dbtr_validate_path_is_gpu(tok);
    if (is_gpu < 0) return cli_usage_error(cmd, "--modes: %s", dbtr_errmsg());
    if (is_gpu && !gpu) {
      fprintf(stderr, "dbtr %s: --modes: %s is a GPU mode and no GPU can be used; without one, compare the CPU "
                      "paths (cpu-1-thread, cpu-float, cpu-double)\n", cmd, tok);
      return dbtr_exit_code(DBTR_ENOGPU);
    }
    names[(*n)++] = tok;
  }
  if (*n == 0) return cli_usage_error(cmd, "--modes: nothing to compare");
  char list[512];
  snprintf(list, sizeof list, "%s", o->expect ? o->expect : "");
  for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
    int is_gpu = dbtr_validate_path_is_gpu(tok), listed = 0;
    if (is_gpu < 0) return cli_usage_error(cmd, "--expect-identical: %s", dbtr_errmsg());
    for (size_t i = 0; i < *n; i++) listed |= !strcmp(names[i], tok);
    if (listed) continue;
    if (is_gpu && !gpu) {
      fprintf(stderr, "dbtr %s: --expect-identical: %s is a GPU mode and no GPU can be used; without one, expect "
                      "cpu-1-thread (1 thread against all, bitwise)\n", cmd, tok);
      return dbtr_exit_code(DBTR_ENOGPU);
    }
    return cli_usage_error(cmd, "--expect-identical: %s is not among the paths to run (--modes %s)", tok, o->modes);
  }
  return 0;
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

/* The problem, wrapped to the terminal's columns. */
static void print_header(const vopts *o, const dbtr_scan *scan, const dbtr_grid *grid, dbtr_algo algo,
                         const char *gpu_name) {
  char text[2048];
  snprintf(text, sizeof text,
           "dbtr validate: %s, %zu views of %zu x %zu, volume %zu x %zu x %zu, %s ML-EM, %zu subset%s, %s%s%s", o->in,
           scan->geom.n_views, scan->geom.n_cols, scan->geom.n_rows, grid->nx, grid->ny, grid->nz,
           algo == DBTR_ALGO_TRANSMISSION ? "transmission" : "emission", o->subsets, o->subsets == 1 ? "" : "s",
           o->lockstep ? "lockstep" : "free-running", gpu_name ? ", GPU: " : ", no GPU", gpu_name ? gpu_name : "");
  app_print_wrapped(text, 0, 2);
}

/* vol: floats, or doubles with float64. */
static int save_volume(const vopts *o, const char *name, const char *suffix, const dbtr_grid *grid, const void *vol,
                       const char *what, int float64) {
  char path[1024];
  dbtr_tiff_opts to = {.format = float64 ? DBTR_TIFF_FLOAT64 : DBTR_TIFF_FLOAT32};
  int rc = dbtr_tiff_write(out_path(path, o->diffs, name, suffix), grid, vol, &to);
  if (!rc) cli_wrote("validate", o->quiet, path, "%s volume, %s", what, float64 ? "float64" : "float32");
  return rc;
}

/* --save-diffs: each path's final volume, its difference from its reference, and the
 * references' and the referee's volumes. */
static int save_diffs(const vopts *o, dbtr_validate *v, const dbtr_grid *grid, size_t n_vox) {
  float *vol = malloc(n_vox * sizeof(float)), *diff = malloc(n_vox * sizeof(float));
  int rc = vol && diff ? 0 : dbtr_err(DBTR_ENOMEM, "--save-diffs: out of memory");
  for (size_t i = 0; i < v->n_paths && !rc; i++) {
    const dbtr_vpath *p = &v->paths[i];
    rc = dbtr_validate_path_volume(v, p, vol, diff);
    if (!rc) rc = save_volume(o, p->name, "", grid, vol, "final", 0);
    if (!rc) rc = save_volume(o, p->name, "-diff", grid, diff, "difference", 0);
  }
  for (int r = 0; r < DBTR_VREF_COUNT && !rc; r++)
    if (v->have_ref[r] && ref_suffix(v, (dbtr_vref)r)) {
      rc = dbtr_validate_ref_state(v, (dbtr_vref)r, v->iterations, 0, DBTR_PREC_FLOAT, vol);
      if (!rc) rc = save_volume(o, dbtr_validate_ref_name((dbtr_vref)r), ref_suffix(v, (dbtr_vref)r), grid, vol, "reference", 0);
    }
  /* The referee rounded to double, as the run holds it (dbtr_validate_referee_state). */
  double *ref = v->referee && !rc ? malloc(n_vox * sizeof(double)) : NULL;
  if (v->referee && !rc && !ref) rc = dbtr_err(DBTR_ENOMEM, "--save-diffs: out of memory");
  if (!rc && v->referee) rc = dbtr_validate_referee_state(v, v->iterations, 0, DBTR_PREC_DOUBLE, ref);
  if (!rc && v->referee) rc = save_volume(o, "referee", "", grid, ref, "the referee's final", 1);
  free(ref);
  free(vol);
  free(diff);
  return rc;
}

/* --expect-identical: exit 6 if a listed path differs. Every listed path ran: select_paths
 * refused the others before the run. */
static int expect_check(const dbtr_validate *v, const char *list) {
  int ex = 0;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
    for (size_t i = 0; i < v->n_paths; i++)
      if (!strcmp(v->paths[i].name, tok) && v->paths[i].first_iter) {
        fprintf(stderr, "dbtr validate: --expect-identical: %s differs from its reference\n", tok);
        ex = dbtr_exit_code(DBTR_EDIFFERS);
      }
  return ex;
}

/* Runs the engine on the scan and prints, saves and reports what it found. Returns an
 * exit code. */
static int validate_scan(const char *cmd, const vopts *o, const char **names, size_t n_names, const char *gpu_name) {
  double t0 = cli_now();
  dbtr_scan scan;
  int rc = cli_read_scan(cmd, &scan, o->in), ex = 0, made_diffs = 0, made_report = 0;
  if (rc) return cli_fail(cmd, rc);
  dbtr_grid grid;
  dbtr_session *s = NULL;
  dbtr_validate v = {0};
  dbtr_phantom objects = {0};
  if ((ex = app_grid_resolve(cmd, o->in, &scan, &o->grid, &grid))) goto done;
  /* --quality's objects before any work: a scan without them is refused now, naming the file. */
  if ((o->quality || o->regions) && (rc = dbtr_quality_objects(&objects, o->regions ? NULL : o->in, o->regions)))
    goto fail;
  /* The problem alone: the engine makes each path's backend in turn. */
  dbtr_session_opts so = {.recon = {.subsets = o->subsets, .backend = o->cpu}, .source = o->in, .values_checked = 1,
                          .problem_only = 1};
  if ((rc = dbtr_session_open(&s, &scan, &grid, &so))) goto fail;
  const dbtr_mlem *m = dbtr_session_mlem(s);
  stage_progress sp = {0};
  app_progress_init(&sp.line, cmd, o->quiet);
  /* The referee on the GPU when there is one: 6.5x double's time there, against hours on the CPU at full size. */
  dbtr_referee_at referee = !o->referee ? DBTR_REFEREE_NONE : gpu_name ? DBTR_REFEREE_GPU : DBTR_REFEREE_CPU;
  dbtr_validate_opts vo = {.paths = names, .n_paths = n_names, .explain = o->explain, .iterations = o->iterations,
                           .lockstep = o->lockstep, .referee = referee, .progress = o->quiet ? NULL : on_progress, .progress_user = &sp,
                           .progress_every = app_progress_hook(&sp.line).every,
                           /* $TMPDIR is the user's choice; without one, beside the report rather than in a /tmp that
                            * may be memory itself. */
                           .spill_dir = getenv("TMPDIR") ? NULL : o->report,
                           .objects = o->quality || o->regions ? &objects : NULL};
  /* The folders first, so the check can see whether a file could be created there and the
   * recording can spill beside the report; an existing folder is fine, and one that cannot
   * be made shows in the check. A run that fails removes the ones it made (below). */
  made_diffs = o->diffs && !mkdir(o->diffs, 0755);
  made_report = o->report && !mkdir(o->report, 0755);
  if (made_diffs) dbtr_atomic_rmdir_on_signal(o->diffs);
  if (made_report) dbtr_atomic_rmdir_on_signal(o->report);
  if ((rc = dbtr_validate_open(&v, m, &vo))) goto fail;
  for (int p = 0; p < DBTR_PREC_COUNT && !o->quiet; p++)
    if (v.gpu_memory[p][0])
      fprintf(stderr, "dbtr validate: %s%s: %s\n", p == DBTR_PREC_DD ? "the referee" : dbtr_precision_name((dbtr_precision)p),
              p == DBTR_PREC_DD ? "" : " paths", v.gpu_memory[p]);
  if (v.spilled && !o->quiet)
    fprintf(stderr,
            "dbtr validate: the recorded states (%.3g GiB) are more than the memory they may take (%.3g GiB): "
            "they go to an unnamed temporary file in %s, which the system caches in free memory\n",
            v.record_bytes / 1073741824.0, v.memory_bytes / 1073741824.0, v.spill_dir);
  if ((ex = check_outputs(cmd, o, &v))) goto done;
  if (!o->quiet) print_header(o, &scan, &grid, m->prob.algo, gpu_name);
  rc = dbtr_validate_run(&v, NULL, NULL);
  app_progress_clear(&sp.line);
  if (rc) goto fail;
  if (!o->quiet) app_validate_print_table(&v);
  if (!o->quiet) app_validate_print_referee(&v);
  if (o->diffs && (rc = save_diffs(o, &v, &grid, m->n_vox))) goto fail;
  app_validate_print_verdicts(&v);
  app_validate_print_quality(&v);
  if (o->explain) app_validate_print_explain(&v);
  if (!o->quiet) app_validate_print_times(&v, cli_now() - t0);
  if (o->report && (rc = app_validate_report(o->report, o->in, o->subsets, &v))) goto fail;
  for (size_t i = 0; o->report && i < N_REPORT_FILES; i++) {
    char path[1024];
    if (writes_report_file(&v, i)) cli_wrote(cmd, o->quiet, out_path(path, o->report, report_files[i], NULL), "the report");
  }
  if (o->expect) ex = expect_check(&v, o->expect);
  goto done;
fail:
  ex = cli_fail(cmd, rc);
done:
  /* No empty folder left behind by a run that failed; rmdir takes only an empty one, so the
   * files a run wrote before it failed stay, each named as it was written. */
  if (ex && made_diffs) rmdir(o->diffs);
  if (ex && made_report) rmdir(o->report);
  dbtr_validate_close(&v);
  dbtr_session_close(&s);
  dbtr_phantom_free(&objects);
  dbtr_scan_free(&scan);
  return ex;
}

int dbtr_cmd_validate(int argc, char **argv) {
  const char *cmd = "validate";
  vopts o;
  int ex;
  if (!parse_args(cmd, argc, argv, &o, &ex)) return ex;
  if (o.referee && o.lockstep)
    return cli_usage_error(cmd, "--referee and --lockstep: the referee runs free, and lockstep paths restart from "
                           "their references at every iteration; run them apart");
  char gpu_name[256];
  int gpu = dbtr_gpu_available(gpu_name, sizeof gpu_name);
  char all[256] = "";
  for (int m = 0; m < DBTR_MODE_COUNT; m++) /* every mode users pick (recon/modes.def) but the referee */
    if (dbtr_mode_precision((dbtr_mode)m) != DBTR_PREC_DD)
      snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", all[0] ? "," : "", dbtr_mode_name_of((dbtr_mode)m));
  if (!o.modes) o.modes = gpu ? all : "cpu-1-thread,cpu-float";
  char buf[2 * MAX_NAMES];
  const char *names[MAX_NAMES];
  size_t n_names;
  if ((ex = select_paths(cmd, &o, gpu, buf, names, &n_names))) return ex;
  return validate_scan(cmd, &o, names, n_names, gpu ? gpu_name : NULL);
}
