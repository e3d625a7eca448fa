/* app/cmd_phantom.c: `dbtr phantom`: a simulated scan of an analytic phantom. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli.h"
#include "app/commands.h"
#include "app/simulate.h"
#include "io/volume.h"
#include "recon/error.h"

static void help(void) {
  printf("usage: dbtr phantom -o SCAN.h5 [options]\n\n"
         "Simulates a DBT scan of an analytic phantom: exact line integrals through its shapes for\n"
         "every detector pixel, then Poisson counts (docs/phantoms.md).\n\n"
         "  -o, --output FILE      scan file to write (required)\n"
         "  --system NAME          geometry preset (default tiny):\n");
  for (const dbtr_system *const *s = dbtr_system_list(); *s; s++) printf("                           %-8s %s\n", (*s)->name, (*s)->description);
  printf("  --phantom KIND         breast (default) or acr\n"
         "  --dose I0              unattenuated counts per pixel (default: the preset's)\n"
         "  --seed N               seed for the phantom's layout and the noise (default 1)\n"
         "  --line-integrals       store noiseless line integrals instead of counts\n"
         "  --supersample N        N x N rays per pixel for the line integrals (default 1)\n"
         "  --truth FILE           also write the ground-truth volume (1/mm) on the preset grid,\n"
         "                         .tif or .tiff, or NIfTI .nii or .nii.gz\n"
         "  --dtype T              float32 (default), float64, uint16 or uint32 for the projections\n"
         "  --gzip L               gzip level 0-9 for the projections (default 0)\n"
         "  --force                overwrite existing outputs\n"
         "  --quiet                no progress lines\n");
}

int dbtr_cmd_phantom(int argc, char **argv) {
  const char *cmd = "phantom", *out = NULL, *truth_path = NULL, *sys_name = "tiny", *kind_name = "breast", *pos;
  const char *dtype = "float32";
  app_sim_opts o = {.seed = 1, .supersample = 1};
  unsigned long long seed = 1;
  int force = 0, gzip = 0;
  cli c;
  cli_init(&c, cmd, argc, argv);
  int k;
  while ((k = cli_next(&c, &pos))) {
    if (k == 2) return cli_usage_error(cmd, "unexpected argument '%s'", pos);
    if (cli_is(&c, "--help") || cli_is(&c, "-h")) {
      help();
      return 0;
    } else if (cli_is(&c, "-o") || cli_is(&c, "--output")) {
      cli_string(&c, &out);
    } else if (cli_is(&c, "--system")) {
      cli_string(&c, &sys_name);
    } else if (cli_is(&c, "--phantom")) {
      cli_string(&c, &kind_name);
    } else if (cli_is(&c, "--dose")) {
      cli_double(&c, &o.dose, 1e-6, 1e12);
    } else if (cli_is(&c, "--seed")) {
      cli_u64(&c, &seed);
    } else if (cli_is(&c, "--line-integrals")) {
      o.line_integrals = 1;
    } else if (cli_is(&c, "--supersample")) {
      cli_int(&c, &o.supersample, 1, 16);
    } else if (cli_is(&c, "--truth")) {
      cli_string(&c, &truth_path);
    } else if (cli_is(&c, "--dtype")) {
      cli_string(&c, &dtype);
    } else if (cli_is(&c, "--gzip")) {
      cli_int(&c, &gzip, 0, 9);
    } else if (cli_is(&c, "--force")) {
      force = 1;
    } else if (cli_is(&c, "--quiet")) {
      o.quiet = 1;
    } else {
      return cli_unknown(&c);
    }
  }
  if (c.error) return c.error;
  if (!out) return cli_usage_error(cmd, "no output given (-o SCAN.h5)");
  o.seed = seed;
  o.system = dbtr_system_find(sys_name);
  if (!o.system) return cli_usage_error(cmd, "--system: unknown preset '%s' (see dbtr phantom --help)", sys_name);
  int kind = dbtr_phantom_kind_from_name(kind_name);
  if (kind < 0) return cli_usage_error(cmd, "--phantom: '%s' is not breast or acr", kind_name);
  o.kind = (dbtr_phantom_kind)kind;
  dbtr_scan_write_opts wo = {.gzip_level = gzip};
  if (!strcmp(dtype, "float32")) wo.dtype = DBTR_DTYPE_FLOAT32;
  else if (!strcmp(dtype, "float64")) wo.dtype = DBTR_DTYPE_FLOAT64;
  else if (!strcmp(dtype, "uint16")) wo.dtype = DBTR_DTYPE_UINT16;
  else if (!strcmp(dtype, "uint32")) wo.dtype = DBTR_DTYPE_UINT32;
  else return cli_usage_error(cmd, "--dtype: '%s' is not float32, float64, uint16 or uint32", dtype);
  if (o.line_integrals && (wo.dtype == DBTR_DTYPE_UINT16 || wo.dtype == DBTR_DTYPE_UINT32))
    return cli_usage_error(cmd, "--dtype %s cannot hold line integrals; use float32 or float64", dtype);
  int ex = cli_check_output(cmd, out, NULL, 0, force);
  if (!ex && truth_path) ex = cli_check_output(cmd, truth_path, NULL, 0, force);
  if (!ex && truth_path && !strcmp(truth_path, out)) ex = cli_usage_error(cmd, "--truth and -o name the same file");
  if (ex) return ex;

  dbtr_scan scan;
  float *truth = NULL;
  if ((ex = app_simulate(cmd, &o, &scan, truth_path ? &truth : NULL))) return ex;
  int rc = dbtr_scan_write(&scan, out, &wo);
  if (!rc && truth_path) rc = dbtr_volume_write(truth_path, &scan.grid, truth, NULL);
  if (rc) ex = cli_fail(cmd, rc);
  else if (!o.quiet) fprintf(stderr, "dbtr phantom: wrote %s%s%s\n", out, truth_path ? " and " : "", truth_path ? truth_path : "");
  free(truth);
  dbtr_scan_free(&scan);
  return ex;
}
