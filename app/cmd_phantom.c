/* app/cmd_phantom.c: `dbtr phantom`: a simulated scan of an analytic phantom. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli.h"
#include "app/commands.h"
#include "app/run.h"
#include "io/memory.h"
#include "io/volume.h"
#include "phantoms/objects_h5.h"
#include "recon/error.h"

typedef struct {
  const char *out, *truth;
  dbtr_simulate_opts sim;
  int quiet;
  dbtr_scan_write_opts write;
  int force;
} phantom_args;

static int convert_kind(const char *text, void *target, char *why, size_t why_len) {
  int kind = dbtr_phantom_kind_from_name(text);
  if (kind < 0) {
    snprintf(why, why_len, "'%s' is not breast or acr", text);
    return 1;
  }
  *(dbtr_phantom_kind *)target = (dbtr_phantom_kind)kind;
  return 0;
}

static int convert_dtype(const char *text, void *target, char *why, size_t why_len) {
  static const struct {
    const char *name;
    dbtr_dtype dtype;
  } types[] = {{"float32", DBTR_DTYPE_FLOAT32}, {"float64", DBTR_DTYPE_FLOAT64}, {"uint16", DBTR_DTYPE_UINT16},
               {"uint32", DBTR_DTYPE_UINT32}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (!strcmp(text, types[i].name)) {
      *(dbtr_dtype *)target = types[i].dtype;
      return 0;
    }
  snprintf(why, why_len, "'%s' is not float32, float64, uint16 or uint32", text);
  return 1;
}

static const cli_opt phantom_rows[] = {
    {"--output", 'o', CLI_STRING, offsetof(phantom_args, out), "FILE", .help = "scan file to write",
     .flags = CLI_REQUIRED},
    {"--system", 0, CLI_CUSTOM, offsetof(phantom_args, sim.system), "NAME", .help = "geometry preset", .def = "tiny",
     .convert = cli_convert_system, .more_help = cli_list_systems},
    {"--phantom", 0, CLI_CUSTOM, offsetof(phantom_args, sim.kind), "KIND", .help = "breast or acr", .def = "breast",
     .convert = convert_kind},
    {"--i0", 0, CLI_DOUBLE, offsetof(phantom_args, sim.dose), "N",
     .help = "unattenuated counts per pixel (default: the preset's)", .min = 1e-6, .max = 1e12},
    {"--seed", 0, CLI_U64, offsetof(phantom_args, sim.seed), "N",
     .help = "seed for the phantom's layout and the noise", .def = "1"},
    {"--line-integrals", 0, CLI_FLAG, offsetof(phantom_args, sim.line_integrals),
     .help = "store noiseless line integrals instead of counts"},
    {"--supersample", 0, CLI_INT, offsetof(phantom_args, sim.supersample), "N",
     .help = "N x N rays per pixel for the line integrals", .def = "1", .min = 1, .max = 16},
    {"--truth", 0, CLI_STRING, offsetof(phantom_args, truth), "FILE",
     .help = "also write the ground-truth volume (1/mm) on the preset grid:\n"
             ".tif or .tiff, or NIfTI .nii or .nii.gz"},
    {"--dtype", 0, CLI_CUSTOM, offsetof(phantom_args, write.dtype), "T",
     .help = "float32, float64, uint16 or uint32 for the projections", .def = "float32", .convert = convert_dtype},
    {"--gzip", 0, CLI_INT, offsetof(phantom_args, write.gzip_level), "L", .help = "gzip level for the projections",
     .def = "0", .min = 0, .max = 9},
};

int dbtr_cmd_phantom(int argc, char **argv) {
  const char *cmd = "phantom";
  phantom_args a = {0};
  const cli_group groups[] = {{NULL, CLI_ROWS(phantom_rows), &a}, cli_force_group(&a.force),
                              cli_quiet_group(&a.quiet)};
  const cli_command spec = {
      .name = cmd,
      .usage = "-o SCAN.h5 [options]",
      .about = "Simulates a DBT scan of an analytic phantom: exact line integrals through its shapes for\n"
               "every detector pixel, then Poisson counts (docs/phantoms.md). The scan file records\n"
               "where each object is and what it is made of (/phantom), for dbtr quality.\n",
      CLI_GROUPS(groups),
  };
  int ex;
  if (!cli_parse(&spec, argc, argv, NULL, &ex)) return ex;
  const dbtr_simulate_opts *o = &a.sim;
  const char *out = a.out, *truth_path = a.truth;
  if (o->line_integrals && (a.write.dtype == DBTR_DTYPE_UINT16 || a.write.dtype == DBTR_DTYPE_UINT32))
    return cli_usage_error(cmd, "--dtype %s cannot hold line integrals; use float32 or float64",
                           a.write.dtype == DBTR_DTYPE_UINT16 ? "uint16" : "uint32");
  ex = cli_check_output(cmd, out, NULL, 0, a.force);
  if (!ex && truth_path) ex = cli_check_output(cmd, truth_path, NULL, 0, a.force);
  if (!ex && truth_path && cli_same_file(truth_path, out)) ex = cli_usage_error(cmd, "--truth and -o name the same file");
  dbtr_volume_type type; /* the name says the file type: checked before the work */
  if (!ex && truth_path && dbtr_volume_type_of(truth_path, &type)) ex = cli_fail(cmd, DBTR_EINVAL);
  if (ex) return ex;
  /* What the simulation holds at once (phantoms/simulate.c): the exact line integrals in
   * double, which become the stored projections, or for counts the line integrals, the
   * per-pixel i0 and the counts in double (dbtr_simulate_store); the float ground truth when
   * asked for; and the scan writer's buffer of one view. */
  const dbtr_system *sys = o->system;
  double n_proj = (double)sys->n_views * (double)sys->n_rows * (double)sys->n_cols;
  double n_vox = (double)sys->grid.nx * (double)sys->grid.ny * (double)sys->grid.nz;
  double need = (o->line_integrals ? 8.0 : 24.0) * n_proj + (truth_path ? 4.0 * n_vox : 0.0) +
                8.0 * (double)sys->n_rows * (double)sys->n_cols;
  int rc = dbtr_mem_check(need, "the simulated scan");
  if (rc) return cli_fail(cmd, rc);

  dbtr_scan scan;
  float *truth = NULL;
  /* The phantom comes back so that its objects go into the scan file (/phantom), where the
   * quality measures find them (docs/quality.md). */
  dbtr_phantom ph = {0};
  dbtr_simulate_opts so = *o;
  so.phantom = &ph;
  if ((ex = app_simulate(cmd, &so, a.quiet, &scan, truth_path ? &truth : NULL))) return ex;
  rc = dbtr_scan_write_phantom(&scan, out, &a.write, &ph);
  dbtr_phantom_free(&ph);
  if (!rc) cli_wrote(cmd, a.quiet, out, "%zu views of %zu x %zu pixels, %s", scan.geom.n_views, scan.geom.n_cols,
                     scan.geom.n_rows, o->line_integrals ? "line integrals" : "counts");
  if (!rc && truth_path) rc = dbtr_volume_write(truth_path, &scan.grid, truth, NULL);
  if (!rc && truth_path)
    cli_wrote(cmd, a.quiet, truth_path, "ground truth, %zu x %zu x %zu voxels", scan.grid.nx, scan.grid.ny,
              scan.grid.nz);
  if (rc) ex = cli_fail(cmd, rc);
  free(truth);
  dbtr_scan_free(&scan);
  return ex;
}
