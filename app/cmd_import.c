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

static void help(void) {
  printf("usage: dbtr import FILES_OR_DIR... -o SCAN.h5 [options]\n\n"
         "Reads DBT projections from DICOM into a scan file (docs/dicom.md): one multi-frame Breast\n"
         "Projection X-Ray Image, or single-frame MG or DX For Processing images of one series, one\n"
         "per view, in Instance Number order (every file of a folder is read). What DICOM does not\n"
         "say comes from a preset or from flags; `dbtr info` shows where each value came from.\n\n"
         "  -o, --output FILE      scan file to write (required)\n"
         "  --system NAME          a preset (see dbtr phantom --help): pivot height, a stationary\n"
         "                         detector, i0 and the grid, each unless given below\n"
         "  --pivot-height MM      height of the source's rotation axis above the detector\n"
         "                         (single-frame images)\n"
         "  --detector MOTION      stationary, or rotating with the source about the pivot\n"
         "                         (single-frame images)\n"
         "  --i0 N                 unattenuated counts per pixel (required without --system)\n"
         "  --dims NX,NY,NZ --voxel DX,DY,DZ --origin X,Y,Z\n"
         "                         reconstruction grid (mm); default: from the breast thickness the\n"
         "                         files give, else the preset's, else none\n"
         "  --force                overwrite an existing output\n"
         "  --quiet                no summary line\n");
}

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
static int fill_opts(const char *cmd, const dbtr_system *sys, const char *sys_from, double pivot, const char *motion,
                     double i0, char *i0_from, dbtr_dicom_opts *o) {
  if (pivot >= 0.0) {
    o->pivot_mm = pivot;
    o->pivot_from = "--pivot-height";
  } else if (sys) {
    o->pivot_mm = sys->pivot_mm;
    o->pivot_from = sys_from;
  }
  if (motion) {
    int rot = strcmp(motion, "rotating") == 0;
    if (!rot && strcmp(motion, "stationary") != 0)
      return cli_usage_error(cmd, "--detector: '%s'; stationary or rotating is expected", motion);
    o->detector = rot ? DBTR_DETECTOR_ROTATING : DBTR_DETECTOR_STATIONARY;
    o->detector_from = "--detector";
  } else if (sys) {
    o->detector = DBTR_DETECTOR_STATIONARY; /* every preset's detector is */
    o->detector_from = sys_from;
  }
  if (i0 > 0.0) {
    o->i0 = i0;
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
  const char *cmd = "import", *out = NULL, *sys_name = NULL, *motion = NULL, *pos;
  const char **in = calloc((size_t)argc, sizeof *in);
  size_t n_in = 0;
  double pivot = -1.0, i0 = 0.0;
  app_grid_opts go = {0};
  int force = 0, quiet = 0, k, ex = 0;
  cli c;
  if (!in) return cli_fail(cmd, dbtr_err(DBTR_ENOMEM, "out of memory"));
  cli_init(&c, cmd, argc, argv);
  while (!ex && (k = cli_next(&c, &pos))) {
    if (k == 2) {
      in[n_in++] = pos;
    } else if (cli_is(&c, "--help") || cli_is(&c, "-h")) {
      help();
      free(in);
      return 0;
    } else if (cli_is(&c, "-o") || cli_is(&c, "--output")) {
      cli_string(&c, &out);
    } else if (cli_is(&c, "--system")) {
      cli_string(&c, &sys_name);
    } else if (cli_is(&c, "--pivot-height")) {
      cli_double(&c, &pivot, 0.0, 1e4);
    } else if (cli_is(&c, "--detector")) {
      cli_string(&c, &motion);
    } else if (cli_is(&c, "--i0")) {
      cli_double(&c, &i0, 1e-6, 1e12);
    } else if (cli_is(&c, "--force")) {
      force = 1;
    } else if (cli_is(&c, "--quiet")) {
      quiet = 1;
    } else if (!app_grid_option(&c, &go)) {
      ex = cli_unknown(&c);
    }
  }
  const dbtr_system *sys = sys_name ? dbtr_system_find(sys_name) : NULL;
  char sys_from[96], i0_from[160];
  snprintf(sys_from, sizeof sys_from, "--system %s", sys_name ? sys_name : "");
  dbtr_dicom_opts o = {0};
  dbtr_scan scan = {0};
  if (!ex) ex = c.error;
  if (!ex && !n_in) ex = cli_usage_error(cmd, "no DICOM files or folders given (dbtr import FILES_OR_DIR... -o SCAN.h5)");
  if (!ex && !out) ex = cli_usage_error(cmd, "no output given (-o SCAN.h5)");
  if (!ex && sys_name && !sys) ex = cli_usage_error(cmd, "--system: unknown preset '%s' (see dbtr phantom --help)", sys_name);
  if (!ex) ex = fill_opts(cmd, sys, sys_from, pivot, motion, i0, i0_from, &o);
  if (!ex) ex = cli_check_output(cmd, out, in, n_in, force);
  double t0 = cli_now();
  int rc = ex ? 0 : dbtr_dicom_import(&scan, in, n_in, &o);
  if (rc) ex = cli_fail(cmd, rc);
  if (!ex) ex = resolve_grid(cmd, &scan, sys, sys_from, &go);
  dbtr_scan_write_opts wo = {scan.stored_dtype, 0};
  if (!ex && (rc = dbtr_scan_write(&scan, out, &wo))) ex = cli_fail(cmd, rc);
  if (!ex && !quiet)
    fprintf(stderr, "dbtr import: %s%s -> %s: %zu views of %zu x %zu pixels, counts (%.2f s); see dbtr info %s\n", in[0],
            n_in > 1 ? " ..." : "", out, scan.geom.n_views, scan.geom.n_rows, scan.geom.n_cols, cli_now() - t0, out);
  dbtr_scan_free(&scan);
  free(in);
  return ex;
}
