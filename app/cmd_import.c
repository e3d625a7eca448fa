/* app/cmd_import.c: `dbtr import FILES_OR_DIR... -o SCAN.h5`: a scanner's DBT projections
 * from DICOM (io/dicom.h, docs/dicom.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli.h"
#include "app/commands.h"
#include "app/run.h"
#include "io/dicom.h"
#include "io/scan.h"
#include "phantoms/systems.h"
#include "recon/error.h"

/* The command line, as given. */
typedef struct {
  const char *out, *motion;
  const dbtr_system *sys;
  double pivot, i0;
  int has_pivot, force, quiet;
  app_grid_opts grid;
} import_args;

static const cli_opt import_rows[] = {
    {"--output", 'o', CLI_STRING, offsetof(import_args, out), "FILE", .help = "scan file to write",
     .flags = CLI_REQUIRED},
    {"--system", 0, CLI_CUSTOM, offsetof(import_args, sys), "NAME",
     .help = "a preset: pivot height, a stationary detector, i0 and the grid, each\n"
             "unless given below",
     .convert = cli_convert_system, .more_help = cli_list_systems},
    {"--pivot-height", 0, CLI_DOUBLE, offsetof(import_args, pivot), "MM",
     .help = "height of the source's rotation axis above the detector\n(single-frame images)", .min = 0.0,
     .max = 1e4, .given = CLI_GIVEN(import_args, has_pivot)},
    {"--detector", 0, CLI_CHOICE, offsetof(import_args, motion), "MOTION",
     .help = "stationary, or rotating with the source about the pivot\n(single-frame images)",
     .choices = CLI_CHOICES("stationary", "rotating")},
    {"--i0", 0, CLI_DOUBLE, offsetof(import_args, i0), "N",
     .help = "unattenuated counts per pixel (required without --system)", .min = 1e-6, .max = 1e12},
};

/* The grid: the one the breast thickness gave, else the preset's, with the flags over it;
 * none when there is neither and no flag. Returns an exit code. */
static int resolve_grid(const char *cmd, dbtr_scan *s, const dbtr_system *sys, const char *sys_from,
                        const app_grid_opts *go) {
  int from_files = s->has_grid, flags = go->has_dims || go->has_voxel || go->has_origin;
  if (!s->has_grid && sys) {
    s->grid = sys->grid;
    s->has_grid = 1;
  }
  if (!s->has_grid && flags && !(go->has_dims && go->has_voxel && go->has_origin))
    return cli_usage_error(cmd, "the files give no breast thickness and no --system is given: give all of --dims, "
                                "--voxel and --origin, or none");
  if (!s->has_grid && !flags) return 0;
  dbtr_grid g;
  int ex = app_grid_resolve(cmd, "the DICOM files", s, go, &g);
  if (ex) return ex;
  s->grid = g;
  s->has_grid = 1;
  if (from_files && !flags) return 0; /* the import's own note says where it came from */
  int rc = dbtr_scan_note_set(s, "volume", "%zu x %zu x %zu voxels of %g x %g x %g mm, voxel 0 at (%g, %g, %g) mm: %s%s%s%s%s",
                              g.nx, g.ny, g.nz, g.dx, g.dy, g.dz, g.origin[0], g.origin[1], g.origin[2],
                              go->has_dims ? "--dims " : "", go->has_voxel ? "--voxel " : "",
                              go->has_origin ? "--origin " : "", flags ? "over " : "",
                              from_files ? "the grid from the breast thickness" : sys_from);
  return rc ? cli_fail(cmd, rc) : 0;
}

/* What DICOM does not say, from the flags, else from the preset; i0_from (160 bytes) holds
 * the preset's label for i0. Returns an exit code. */
static int fill_opts(const char *cmd, const import_args *a, const char *sys_from, char *i0_from, dbtr_dicom_opts *o) {
  const dbtr_system *sys = a->sys;
  if (a->has_pivot) {
    o->pivot_mm = a->pivot;
    o->pivot_from = "--pivot-height";
  } else if (sys) {
    o->pivot_mm = sys->pivot_mm;
    o->pivot_from = sys_from;
  }
  if (a->motion) {
    o->detector = strcmp(a->motion, "rotating") ? DBTR_DETECTOR_STATIONARY : DBTR_DETECTOR_ROTATING;
    o->detector_from = "--detector";
  } else if (sys) {
    o->detector = DBTR_DETECTOR_STATIONARY; /* every preset's detector is */
    o->detector_from = sys_from;
  }
  if (a->i0 > 0.0) {
    o->i0 = a->i0;
    o->i0_from = "--i0";
  } else if (sys) {
    snprintf(i0_from, 160, "%s, the preset's i0 for simulated scans", sys_from);
    o->i0 = sys->i0;
    o->i0_from = i0_from;
  } else {
    return cli_usage_error(cmd, "i0 is not in DICOM: give --i0 N (unattenuated counts per pixel) or --system NAME");
  }
  return 0;
}

int dbtr_cmd_import(int argc, char **argv) {
  const char *cmd = "import";
  import_args a = {0};
  const char **in = calloc((size_t)argc, sizeof *in); /* the operands: at most every argument */
  if (!in) return cli_fail(cmd, dbtr_err(DBTR_ENOMEM, "out of memory"));
  const cli_group groups[] = {
      {NULL, CLI_ROWS(import_rows), &a},
      cli_force_group(&a.force),
      cli_quiet_group(&a.quiet),
      app_grid_group(&a.grid, "reconstruction grid (mm); default: from the breast thickness the files give,\n"
                              "else the preset's, else none", 1),
  };
  const cli_command spec = {
      .name = cmd,
      .usage = "FILES_OR_DIR... -o SCAN.h5 [options]",
      .about = "Reads DBT projections from DICOM into a scan file (docs/dicom.md): one multi-frame Breast\n"
               "Projection X-Ray Image, or single-frame MG or DX For Processing images of one series, one\n"
               "per view, in Instance Number order (every file of a folder is read). What DICOM does not\n"
               "say comes from a preset or from flags; `dbtr info` shows where each value came from.\n",
      .operand = "DICOM file or folder", .min_operands = 1, .max_operands = (size_t)argc,
      CLI_GROUPS(groups),
  };
  int ex;
  if (!cli_parse(&spec, argc, argv, in, &ex)) {
    free(in);
    return ex;
  }
  size_t n_in = 0;
  while (n_in < (size_t)argc && in[n_in]) n_in++;
  char sys_from[96], i0_from[160];
  snprintf(sys_from, sizeof sys_from, "--system %s", a.sys ? a.sys->name : "");
  dbtr_dicom_opts o = {0};
  dbtr_scan scan = {0};
  ex = fill_opts(cmd, &a, sys_from, i0_from, &o);
  if (!ex) ex = cli_check_output(cmd, a.out, in, n_in, a.force);
  double t0 = cli_now();
  int rc = ex ? 0 : dbtr_dicom_import_guarded(&scan, in, n_in, &o, cli_guard_seconds(cmd));
  if (rc) ex = cli_fail(cmd, rc);
  if (!ex) ex = resolve_grid(cmd, &scan, a.sys, sys_from, &a.grid);
  dbtr_scan_write_opts wo = {scan.stored_dtype, 0};
  if (!ex && (rc = dbtr_scan_write(&scan, a.out, &wo))) ex = cli_fail(cmd, rc);
  if (!ex)
    cli_wrote(cmd, a.quiet, a.out, "%zu views of %zu x %zu pixels, counts, from %s%s; %.2f s; see dbtr info %s",
              scan.geom.n_views, scan.geom.n_cols, scan.geom.n_rows, in[0], n_in > 1 ? " ..." : "", cli_now() - t0,
              a.out);
  dbtr_scan_free(&scan);
  free(in);
  return ex;
}
