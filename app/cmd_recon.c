/* app/cmd_recon.c: `dbtr recon SCAN.h5 -o VOLUME.tif`. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli.h"
#include "app/commands.h"
#include "app/recon_many.h"
#include "app/run.h"
#include "engine/fbp.h"
#include "io/volume.h"
#include "recon/error.h"

typedef struct {
  const char *out, *format, *fov_mask;
  app_recon_opts ro;
  app_grid_opts grid;
  double u16_scale;
  int force, every_given, iter_given, subsets_given, cutoff_given, slice_given;
  const char *init;      /* --init: a start value, or fbp */
  const char *ext, *log, *shard; /* many scans */
  int verbose;
} recon_args;

static const cli_opt recon_rows[] = {
    {"--output", 'o', CLI_STRING, offsetof(recon_args, out), "FILE", .help = "output volume: .tif or .tiff, or NIfTI .nii or .nii.gz;\n"
     "for many scans, a folder (DIR/ or an existing one): DIR/<scan's name><--ext>", .flags = CLI_REQUIRED},
    {"--iterations", 0, CLI_SIZE, offsetof(recon_args, ro.iterations), "N", .help = "full iterations", .def = "10",
     .min = 1, .max = 100000, .given = CLI_GIVEN(recon_args, iter_given)},
    {"--subsets", 0, CLI_SIZE, offsetof(recon_args, ro.subsets), "S",
     .help = "ordered subsets of views, 1 = plain ML-EM",
     .def = "1", .min = 1, .max = 100000, .given = CLI_GIVEN(recon_args, subsets_given)},
    {"--algorithm", 0, CLI_CHOICE, offsetof(recon_args, ro.algorithm), "A",
     .help = "transmission (default for counts), emission (line integrals), or fbp:\n"
             "filtered back projection, no iterations (docs/fbp.md)",
     .choices = CLI_CHOICES("transmission", "emission", "fbp")},
    {"--init", 0, CLI_STRING, offsetof(recon_args, init), "MU|fbp",
     .help = "uniform start value in 1/mm (default: estimated from the data), or fbp:\n"
             "the FBP volume, values below 5e-8 /mm raised to it"},
    {"--format", 0, CLI_CHOICE, offsetof(recon_args, format), "F",
     .help = "float32, uint16 (needs --u16-scale), or float64: a double or dd result\n"
             "rounded to double (dd: its high parts), not to float",
     .def = "float32", .choices = CLI_CHOICES("float32", "uint16", "float64")},
    {"--u16-scale", 0, CLI_DOUBLE, offsetof(recon_args, u16_scale), "S",
     .help = "uint16: stored = round(value x S), saturating (required for uint16, and only for it)",
     .min = 1e-300, .max = 1e300},
    {"--checkpoint", 0, CLI_STRING, offsetof(recon_args, ro.checkpoint), "FILE",
     .help = "save the state to FILE (every --checkpoint-every iterations, and at the end);\n"
             "an existing FILE is replaced only with --force"},
    {"--checkpoint-every", 0, CLI_SIZE, offsetof(recon_args, ro.checkpoint_every), "K",
     .help = "iterations between checkpoints", .def = "1", .min = 1, .max = 100000,
     .given = CLI_GIVEN(recon_args, every_given)},
    {"--fov-mask", 0, CLI_STRING, offsetof(recon_args, fov_mask), "FILE",
     .help = "also write the field of view: 1 where a ray reaches the voxel, 0 where none\n"
             "does (those are 0 in the volume); .tif or .nii, float32"},
    {"--resume", 0, CLI_STRING, offsetof(recon_args, ro.resume), "FILE",
     .help = "go on from a checkpoint up to --iterations; the result is bitwise the\n"
     "same as an uninterrupted run (same scan, subsets, mode and precision)"},
};

/* The FBP filter (docs/fbp.md). */
static const cli_opt fbp_rows[] = {
    {"--fbp-cutoff", 0, CLI_DOUBLE, offsetof(recon_args, ro.fbp.cutoff), "C",
     .help = "the Hann window's cut-off, a fraction of the detector's Nyquist frequency", .def = "1",
     .min = 0.0, .max = 1.0, .flags = CLI_ABOVE_MIN, .given = CLI_GIVEN(recon_args, cutoff_given)},
    {"--fbp-slice", 0, CLI_DOUBLE, offsetof(recon_args, ro.fbp.slice), "C",
     .help = "a slice-thickness filter: a Hann low-pass across the tube's motion with its\n"
             "cut-off at C times Nyquist (default: none)",
     .min = 0.0, .max = 1.0, .flags = CLI_ABOVE_MIN, .given = CLI_GIVEN(recon_args, slice_given)},
};

/* Options of a run of many scans (docs/scale-out.md). */
static const cli_opt many_rows[] = {
    {"--ext", 0, CLI_CHOICE, offsetof(recon_args, ext), "EXT", .help = "the outputs' ending: the file type",
     .def = ".tif", .choices = CLI_CHOICES(".tif", ".tiff", ".nii", ".nii.gz")},
    {"--log", 0, CLI_STRING, offsetof(recon_args, log), "FILE",
     .help = "the record, a JSON line a scan (default: DIR/dbtr-recon.jsonl); a run of the\n"
             "same command skips the outputs it records as complete"},
    {"--shard", 0, CLI_STRING, offsetof(recon_args, shard), "K/N",
     .help = "take the K-th of N disjoint shares of the scans (sorted by name): one job of an array"},
    {"--verbose", 0, CLI_FLAG, offsetof(recon_args, verbose), NULL,
     .help = "a line per iteration of each scan, and per volume written"},
};

/* --checkpoint is an output like -o, checked before the first iteration: never an input,
 * however spelled, never the volume, replaced only with --force. The one exception is the
 * checkpoint the run resumes from: saving into it again continues the run's own state, and
 * the atomic write keeps the old state until the new one is whole. */
static int check_checkpoint(const char *cmd, const app_recon_opts *o, const char *in, const char *out, int force) {
  if (cli_same_file(o->checkpoint, out))
    return cli_usage_error(cmd, "--checkpoint %s is also the output volume (-o %s)", o->checkpoint, out);
  if (o->resume && cli_same_file(o->checkpoint, o->resume)) {
    const char *scan[1] = {in};
    return cli_check_output(cmd, o->checkpoint, scan, 1, 1);
  }
  const char *inputs[2] = {in, o->resume};
  return cli_check_output(cmd, o->checkpoint, inputs, 2, force);
}

/* --format and --u16-scale as the volume writers take them. */
static int format_of(const char *cmd, const recon_args *a, dbtr_tiff_opts *out) {
  const int u16 = !strcmp(a->format, "uint16");
  if (u16 && a->u16_scale == 0.0)
    return cli_usage_error(cmd, "--format uint16 needs --u16-scale S (stored = round(value x S))");
  if (!u16 && a->u16_scale != 0.0) /* a scale that would be ignored: the user meant uint16, or no scale */
    return cli_usage_error(cmd, "--u16-scale is for --format uint16; --format %s stores the values as they are",
                           a->format);
  *out = (dbtr_tiff_opts){.format = u16                             ? DBTR_TIFF_UINT16
                                    : !strcmp(a->format, "float64") ? DBTR_TIFF_FLOAT64
                                                                    : DBTR_TIFF_FLOAT32,
                          .u16_scale = a->u16_scale};
  return 0;
}

/* --fov-mask: the session's field of view (engine/fov.h) as a float32 volume of 0 and 1. */
static int write_fov(const char *cmd, const char *path, const dbtr_grid *grid, const unsigned char *fov, size_t n_vox,
                     int quiet) {
  float *m = NULL;
  int rc = dbtr_alloc((void **)&m, n_vox, sizeof *m, "--fov-mask volume");
  for (size_t i = 0; !rc && i < n_vox; i++) m[i] = fov[i] ? 1.0f : 0.0f;
  if (!rc) rc = dbtr_volume_write(path, grid, m, NULL);
  free(m);
  if (rc) return cli_fail(cmd, rc);
  cli_wrote(cmd, quiet, path, "field of view, float32: 1 where a ray reaches the voxel, 0 where none does");
  return 0;
}

/* The options checked for what each scan of many gets, then the run (app/recon_many.h). */
static int recon_many(const char *cmd, recon_args *a, const char **ops, size_t n) {
  const app_recon_opts *o = &a->ro;
  if ((o->algorithm && !strcmp(o->algorithm, "fbp")) || o->start)
    return cli_usage_error(cmd, "--%s fbp is for one scan (SCAN.h5 -o VOLUME) for now", o->start ? "init" : "algorithm");
  if (o->checkpoint || o->resume)
    return cli_usage_error(cmd, "--%s is for one scan; many scans resume from their log (docs/scale-out.md)",
                           o->checkpoint ? "checkpoint" : "resume");
  if (a->fov_mask) return cli_usage_error(cmd, "--fov-mask is for one scan");
  dbtr_tiff_opts topts;
  int ex = format_of(cmd, a, &topts);
  if (ex) return ex;
  app_many_opts m = {.out_dir = a->out, .ext = a->ext ? a->ext : ".tif", .log = a->log, .shard = a->shard,
                     .quiet = o->quiet, .verbose = a->verbose,
                     .batch = {.recon = {.subsets = o->subsets, .algorithm = o->algorithm, .init = o->init,
                                         .backend = o->backend},
                               .iterations = o->iterations, .grid = a->grid, .format = topts, .force = a->force,
                               .threads = o->backend.threads}};
  return app_recon_many(cmd, ops, n, &m);
}

/* --init (a start value or fbp), and what FBP's options exclude; an exit code. */
static int check_fbp_args(const char *cmd, recon_args *a) {
  app_recon_opts *o = &a->ro;
  if (a->init && !strcmp(a->init, "fbp")) {
    o->start = "fbp";
  } else if (a->init) {
    char *end;
    o->init = strtod(a->init, &end);
    if (end == a->init || *end || !(o->init >= 1e-12 && o->init <= 1e6))
      return cli_usage_error(cmd, "--init %s: expected a start value in 1/mm (1e-12 to 1e6) or fbp", a->init);
  }
  int fbp = o->algorithm && !strcmp(o->algorithm, "fbp");
  if (fbp && (a->iter_given || a->subsets_given || a->init || o->checkpoint || o->resume))
    return cli_usage_error(cmd, "--algorithm fbp has no iterations: --%s is ML-EM's (for an ML-EM run from FBP, "
                           "give --init fbp)", a->iter_given ? "iterations" : a->subsets_given ? "subsets"
                           : a->init ? "init" : o->checkpoint ? "checkpoint" : "resume");
  if (fbp && a->fov_mask)
    return cli_usage_error(cmd, "--fov-mask is ML-EM's: --algorithm fbp writes the voxels no ray reaches as 0, and "
                           "counts them");
  if (o->start && o->resume)
    return cli_usage_error(cmd, "--init fbp with --resume: a resumed run starts from its checkpoint's volume");
  if ((a->cutoff_given || a->slice_given) && !fbp && !o->start)
    return cli_usage_error(cmd, "--fbp-%s is for --algorithm fbp or --init fbp", a->cutoff_given ? "cutoff" : "slice");
  return 0;
}

/* --algorithm fbp: the FBP volume with the session's checks first (engine/fbp.h), in double,
 * rounded to float unless --format float64; an exit code. */
static int run_fbp(const char *cmd, const app_recon_opts *o, const dbtr_scan *scan, const dbtr_grid *grid,
                   const char *in, void *vol, size_t n_vox, char *backend, size_t name_len, size_t *n_unseen) {
  double *v = NULL;
  int rc = o->vol_double ? 0 : dbtr_alloc((void **)&v, n_vox, sizeof *v, "FBP volume");
  dbtr_fbp_report rep;
  dbtr_recon_opts ro = {.backend = o->backend, .fbp = o->fbp};
  if (!rc) rc = dbtr_fbp_checked(scan, grid, &ro, in, 1, o->vol_double ? vol : v, &rep);
  if (!rc && !o->vol_double) dbtr_convert_to_float(DBTR_PREC_DOUBLE, v, n_vox, vol);
  free(v);
  if (rc) return cli_fail(cmd, rc);
  if (rep.fallback[0] && !o->quiet) fprintf(stderr, "dbtr %s: warning: %s; running on the CPU\n", cmd, rep.fallback);
  if (!o->quiet)
    fprintf(stderr, "dbtr %s: FBP (ramp x Hann, cut-off %g of Nyquist%s) on %s: filter %.2f s, back projection %.2f s\n",
            cmd, o->fbp.cutoff, o->fbp.slice > 0.0 ? ", slice-thickness filter" : "", rep.backend, rep.filter, rep.back);
  snprintf(backend, name_len, "%s", rep.backend);
  *n_unseen = rep.n_unseen;
  return 0;
}

int dbtr_cmd_recon(int argc, char **argv) {
  const char *cmd = "recon", *in;
  recon_args a = {0};
  app_recon_opts *o = &a.ro;
  const cli_group groups[] = {
      {NULL, CLI_ROWS(recon_rows), &a},
      {"many scans (SCAN.h5 ... or a folder, -o DIR/)", CLI_ROWS(many_rows), &a},
      cli_force_group(&a.force),
      cli_quiet_group(&o->quiet),
      {"filtered back projection (--algorithm fbp, --init fbp; docs/fbp.md)", CLI_ROWS(fbp_rows), &a},
      cli_backend_group(&o->backend),
      app_grid_group(&a.grid, "reconstruction grid (default: the scan's /volume)", 1),
  };
  size_t max_ops = argc > 1 ? (size_t)argc : 1;
  const char **ops = calloc(max_ops, sizeof *ops);
  if (!ops) return cli_fail(cmd, dbtr_err(DBTR_ENOMEM, "out of memory"));
  const cli_command spec = {
      .name = cmd,
      .usage = "SCAN.h5 -o VOLUME.tif [options]  |  SCAN.h5... or FOLDER -o DIR/ [options]",
      .about = "Reconstructs a dbtr-scan file (docs/scan-format.md) with ML-EM and writes a TIFF or NIfTI\n"
               "volume (docs/volume-format.md) in 1/mm. Given several scans or a folder of them, and a folder\n"
               "for -o, it reconstructs each on every GPU of the machine, one worker per GPU, and records\n"
               "each in a log that a second run uses to skip what is complete (docs/scale-out.md).\n",
      .operand = "scan file", .min_operands = 1, .max_operands = max_ops,
      CLI_GROUPS(groups),
  };
  int ex;
  if (!cli_parse(&spec, argc, argv, ops, &ex)) {
    free(ops);
    return ex;
  }
  size_t n_ops = 0;
  while (n_ops < max_ops && ops[n_ops]) n_ops++;
  if ((ex = check_fbp_args(cmd, &a))) {
    free(ops);
    return ex;
  }
  in = ops[0];
  if (app_recon_is_many(ops, n_ops, a.out)) {
    ex = recon_many(cmd, &a, ops, n_ops);
    free(ops);
    return ex;
  }
  free(ops);
  if (a.ext != NULL && strcmp(a.ext, ".tif") != 0)
    return cli_usage_error(cmd, "--ext is for many scans; one scan's output is named by -o");
  if (a.log || a.shard) return cli_usage_error(cmd, "--%s is for many scans (several scans or a folder, -o DIR/)",
                                               a.log ? "log" : "shard");
  dbtr_tiff_opts topts;
  if ((ex = format_of(cmd, &a, &topts))) return ex;
  o->vol_double = topts.format == DBTR_TIFF_FLOAT64;
  if (a.every_given && !o->checkpoint) return cli_usage_error(cmd, "--checkpoint-every needs --checkpoint FILE");
  const char *inputs[2] = {in, o->resume};
  ex = cli_check_output(cmd, a.out, inputs, 2, a.force);
  dbtr_volume_type type; /* the name says the file type: checked before the work */
  int rc = ex ? 0 : dbtr_volume_type_of(a.out, &type);
  if (rc) return cli_fail(cmd, rc);
  if (!ex && o->checkpoint) ex = check_checkpoint(cmd, o, in, a.out, a.force);
  if (!ex && a.fov_mask && cli_same_file(a.fov_mask, a.out))
    ex = cli_usage_error(cmd, "--fov-mask %s is also the output volume (-o %s)", a.fov_mask, a.out);
  if (!ex && a.fov_mask) ex = cli_check_output(cmd, a.fov_mask, inputs, 2, a.force);
  if (!ex && a.fov_mask && (rc = dbtr_volume_type_of(a.fov_mask, &type))) return cli_fail(cmd, rc);
  if (ex) return ex;

  /* Where the time goes, said in the last line: reading, set-up (the checks, the GPU's start,
   * the data, the backend, the start volume), iterations, reading the volume back and freeing
   * the backend, writing. */
  struct app_recon_times times = {0, 0};
  o->times = &times;
  double t0 = cli_now();
  dbtr_scan scan;
  rc = cli_read_scan(cmd, &scan, in);
  if (rc) return cli_fail(cmd, rc);
  double t_read = cli_now() - t0, t_done = 0.0;
  dbtr_grid grid;
  dbtr_session *s = NULL;
  void *vol = NULL; /* floats, or doubles with --format float64 */
  size_t n_vox = 0, es = o->vol_double ? sizeof(double) : sizeof(float);
  if ((ex = app_grid_resolve(cmd, in, &scan, &a.grid, &grid))) goto done;
  app_warn_doubts(cmd, &scan);
  if ((rc = dbtr_grid_count(&grid, &n_vox))) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  if (!(o->algorithm && !strcmp(o->algorithm, "fbp")) &&
      (ex = app_recon_open(cmd, &scan, &grid, in, o, (double)es * (double)n_vox, &s)))
    goto done;
  if ((rc = dbtr_alloc(&vol, n_vox, es, "volume"))) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  char backend[64];
  size_t n_unseen = 0;
  if (o->algorithm && !strcmp(o->algorithm, "fbp")) {
    if ((ex = run_fbp(cmd, o, &scan, &grid, in, vol, n_vox, backend, sizeof backend, &n_unseen))) goto done;
    times.iter_start = times.iter_end = cli_now();
  } else {
    if ((ex = app_recon_run(cmd, s, o, vol, backend, sizeof backend))) goto done;
    const unsigned char *fov = dbtr_session_fov(s, &n_unseen);
    if (a.fov_mask && (ex = write_fov(cmd, a.fov_mask, &grid, fov, n_vox, o->quiet))) goto done;
  }
  dbtr_session_close(&s);
  t_done = cli_now();
  double t_write = cli_now();
  if ((rc = dbtr_volume_write(a.out, &grid, vol, &topts))) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  t_write = cli_now() - t_write;
  cli_wrote(cmd, o->quiet, a.out,
            "%s volume %zu x %zu x %zu; %s; %zu voxels (%.2f%%) no ray reaches, written as 0; %.2f s: reading %.2f, "
            "set-up %.2f, iterations %.2f, read-back %.2f, writing %.2f",
            a.format, grid.nx, grid.ny, grid.nz, backend, n_unseen, 100.0 * (double)n_unseen / (double)n_vox, cli_now() - t0, t_read, times.iter_start - t0 - t_read,
            times.iter_end - times.iter_start, t_done - times.iter_end, t_write);
done:
  dbtr_session_close(&s);
  free(vol);
  dbtr_scan_free(&scan);
  return ex;
}
