/* app/cmd_recon.c: `dbtr recon SCAN.h5 -o VOLUME.tif`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli.h"
#include "app/commands.h"
#include "app/run.h"
#include "io/volume.h"
#include "recon/error.h"

static void help(void) {
  printf("usage: dbtr recon SCAN.h5 -o VOLUME.tif [options]\n\n"
         "Reconstructs a dbtr-scan file (docs/scan-format.md) with ML-EM and writes a TIFF or NIfTI\n"
         "volume (docs/volume-format.md) in 1/mm.\n\n"
         "  -o, --output FILE      output volume, .tif or .tiff, or NIfTI .nii or .nii.gz (required)\n"
         "  --iterations N         full iterations (default 10)\n"
         "  --subsets S            ordered subsets of views, 1 = plain ML-EM (default 1)\n"
         "  --algorithm A          transmission (default for counts) or emission (line integrals)\n"
         "  --init MU              uniform start value in 1/mm (default: estimated from the data)\n"
         "  --backend B            cpu, gpu or auto (default auto: the GPU when there is one)\n"
         "  --mode M               GPU mode: fast, ieee, cpu-match (default), double, double-match\n"
         "                         (docs/modes.md); on the CPU, double modes compute in double\n"
         "  --precision P          CPU precision, float or double (default: as the mode)\n"
         "  --threads N            CPU threads (default: all)\n"
         "  --dims NX,NY,NZ --voxel DX,DY,DZ --origin X,Y,Z\n"
         "                         reconstruction grid (mm); default: the scan's /volume\n"
         "  --format F             float32 (default) or uint16\n"
         "  --u16-scale S          uint16: stored = round(value x S), saturating (required for uint16)\n"
         "  --checkpoint FILE      save the state to FILE (every --checkpoint-every iterations, and at the end)\n"
         "  --checkpoint-every K   default 1\n"
         "  --resume FILE          go on from a checkpoint up to --iterations; the result is bitwise the\n"
         "                         same as an uninterrupted run (same scan, subsets, mode and precision)\n"
         "  --force                overwrite an existing output\n"
         "  --quiet                no progress lines\n");
}

int dbtr_cmd_recon(int argc, char **argv) {
  const char *cmd = "recon", *in = NULL, *out = NULL, *format = "float32", *pos;
  app_recon_opts o = {.iterations = 10, .subsets = 1};
  app_grid_opts go = {0};
  double u16_scale = 0.0;
  int force = 0;
  cli c;
  cli_init(&c, cmd, argc, argv);
  int k;
  while ((k = cli_next(&c, &pos))) {
    if (k == 2) {
      if (in) return cli_usage_error(cmd, "unexpected argument '%s' (one scan file only)", pos);
      in = pos;
      continue;
    }
    if (cli_is(&c, "--help") || cli_is(&c, "-h")) {
      help();
      return 0;
    } else if (cli_is(&c, "-o") || cli_is(&c, "--output")) {
      cli_string(&c, &out);
    } else if (cli_is(&c, "--iterations")) {
      cli_size(&c, &o.iterations, 1, 100000);
    } else if (cli_is(&c, "--subsets")) {
      cli_size(&c, &o.subsets, 1, 100000);
    } else if (cli_is(&c, "--algorithm")) {
      if (!cli_string(&c, &o.algorithm) && strcmp(o.algorithm, "transmission") && strcmp(o.algorithm, "emission"))
        c.error = cli_usage_error(cmd, "--algorithm: '%s' is not transmission or emission", o.algorithm);
    } else if (cli_is(&c, "--init")) {
      cli_double(&c, &o.init, 1e-12, 1e6);
    } else if (cli_is(&c, "--format")) {
      if (!cli_string(&c, &format) && strcmp(format, "float32") && strcmp(format, "uint16"))
        c.error = cli_usage_error(cmd, "--format: '%s' is not float32 or uint16", format);
    } else if (cli_is(&c, "--u16-scale")) {
      cli_double(&c, &u16_scale, 1e-300, 1e300);
    } else if (cli_is(&c, "--checkpoint")) {
      cli_string(&c, &o.checkpoint);
    } else if (cli_is(&c, "--checkpoint-every")) {
      cli_size(&c, &o.checkpoint_every, 1, 100000);
    } else if (cli_is(&c, "--resume")) {
      cli_string(&c, &o.resume);
    } else if (cli_is(&c, "--force")) {
      force = 1;
    } else if (cli_is(&c, "--quiet")) {
      o.quiet = 1;
    } else if (!cli_backend_option(&c, &o.backend) && !app_grid_option(&c, &go)) {
      return cli_unknown(&c);
    }
  }
  if (c.error) return c.error;
  if (!in) return cli_usage_error(cmd, "no scan file given (dbtr recon SCAN.h5 -o VOLUME.tif)");
  if (!out) return cli_usage_error(cmd, "no output given (-o VOLUME.tif)");
  if (!strcmp(format, "uint16") && u16_scale == 0.0)
    return cli_usage_error(cmd, "--format uint16 needs --u16-scale S (stored = round(value x S))");
  if (o.checkpoint_every && !o.checkpoint) return cli_usage_error(cmd, "--checkpoint-every needs --checkpoint FILE");
  if (!o.checkpoint_every) o.checkpoint_every = 1;
  const char *inputs[2] = {in, o.resume};
  int ex = cli_check_output(cmd, out, inputs, 2, force);
  if (!ex && o.checkpoint && (!strcmp(o.checkpoint, in) || !strcmp(o.checkpoint, out)))
    ex = cli_usage_error(cmd, "--checkpoint %s would overwrite an input or the output", o.checkpoint);
  if (ex) return ex;

  double t0 = cli_now();
  dbtr_scan scan;
  int rc = cli_read_scan(cmd, &scan, in);
  if (rc) return cli_fail(cmd, rc);
  dbtr_grid grid;
  float *vol = NULL;
  size_t n_vox = 0;
  if ((ex = app_grid_resolve(cmd, in, &scan, &go, &grid))) goto done;
  if ((rc = dbtr_grid_count(&grid, &n_vox)) || (rc = dbtr_alloc((void **)&vol, n_vox, sizeof(float), "volume"))) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  char backend[64];
  if ((ex = app_reconstruct(cmd, &scan, &grid, &o, vol, backend, sizeof backend))) goto done;
  dbtr_tiff_opts topts = {.format = strcmp(format, "uint16") ? DBTR_TIFF_FLOAT32 : DBTR_TIFF_UINT16,
                          .u16_scale = u16_scale};
  if ((rc = dbtr_volume_write(out, &grid, vol, &topts))) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  if (!o.quiet) fprintf(stderr, "dbtr recon: wrote %s (%s, %.2f s from reading the scan to writing the volume)\n", out, backend, cli_now() - t0);
done:
  free(vol);
  dbtr_scan_free(&scan);
  return ex;
}
