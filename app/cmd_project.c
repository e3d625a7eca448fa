/* app/cmd_project.c: `dbtr project VOLUME.tif -o SCAN.h5`: a scan of the user's own phantom. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli.h"
#include "app/commands.h"
#include "app/run.h"
#include "io/scan.h"
#include "io/tiff.h"
#include "phantoms/phantom.h"
#include "phantoms/simulate.h"
#include "phantoms/systems.h"
#include "recon/cpu.h"
#include "recon/error.h"

static void help(void) {
  printf("usage: dbtr project VOLUME.tif (--system NAME | --geometry SCAN.h5) -o SCAN.h5 [options]\n\n"
         "Forward-projects a TIFF volume of attenuation coefficients (1/mm) with dbtr's projector (CPU,\n"
         "double precision) and writes a scan file: line integrals, or Poisson counts with --i0.\n"
         "The volume's voxel size and origin come from the TIFF (docs/volume-format.md) unless given.\n\n"
         "  -o, --output FILE      scan file to write (required)\n"
         "  --system NAME          geometry of a preset (see dbtr phantom --help)\n"
         "  --geometry SCAN.h5     geometry of an existing scan file\n"
         "  --voxel DX,DY,DZ       voxel size in mm (overrides the TIFF's)\n"
         "  --origin X,Y,Z         centre of voxel 0,0,0 in mm (overrides the TIFF's)\n"
         "  --i0 N                 write Poisson counts with N unattenuated counts per pixel\n"
         "  --seed N               noise seed (default 1)\n"
         "  --threads N            CPU threads (default: all)\n"
         "  --force                overwrite an existing output\n"
         "  --quiet                no progress lines\n");
}

/* The scan's geometry: a preset's, or a scan file's. Returns the exit code (0: done). */
static int load_geometry(const char *cmd, const char *sys_name, const char *geom_path, dbtr_geom *g) {
  int rc;
  if (sys_name) {
    const dbtr_system *sys = dbtr_system_find(sys_name);
    if (!sys) return cli_usage_error(cmd, "--system: unknown preset '%s' (see dbtr phantom --help)", sys_name);
    rc = dbtr_system_geometry(sys, g);
  } else {
    dbtr_scan src;
    rc = cli_read_scan(cmd, &src, geom_path);
    if (!rc) {
      rc = dbtr_geom_copy(g, &src.geom);
      dbtr_scan_free(&src);
    }
  }
  return rc ? cli_fail(cmd, rc) : 0;
}

int dbtr_cmd_project(int argc, char **argv) {
  const char *cmd = "project", *in = NULL, *out = NULL, *sys_name = NULL, *geom_path = NULL, *pos;
  app_grid_opts go = {0};
  double i0 = 0.0;
  unsigned long long seed = 1;
  int force = 0, quiet = 0, threads = 0;
  cli c;
  cli_init(&c, cmd, argc, argv);
  int k;
  while ((k = cli_next(&c, &pos))) {
    if (k == 2) {
      if (in) return cli_usage_error(cmd, "unexpected argument '%s' (one volume only)", pos);
      in = pos;
    } else if (cli_is(&c, "--help") || cli_is(&c, "-h")) {
      help();
      return 0;
    } else if (cli_is(&c, "-o") || cli_is(&c, "--output")) {
      cli_string(&c, &out);
    } else if (cli_is(&c, "--system")) {
      cli_string(&c, &sys_name);
    } else if (cli_is(&c, "--geometry")) {
      cli_string(&c, &geom_path);
    } else if (cli_is(&c, "--i0")) {
      cli_double(&c, &i0, 1e-6, 1e12);
    } else if (cli_is(&c, "--seed")) {
      cli_u64(&c, &seed);
    } else if (cli_is(&c, "--threads")) {
      cli_int(&c, &threads, 0, 4096);
    } else if (cli_is(&c, "--force")) {
      force = 1;
    } else if (cli_is(&c, "--quiet")) {
      quiet = 1;
    } else if (cli_is(&c, "--dims")) {
      return cli_usage_error(cmd, "--dims: the volume's dims come from the TIFF");
    } else if (!app_grid_option(&c, &go)) {
      return cli_unknown(&c);
    }
  }
  if (c.error) return c.error;
  if (!in) return cli_usage_error(cmd, "no volume given (dbtr project VOLUME.tif ...)");
  if (!out) return cli_usage_error(cmd, "no output given (-o SCAN.h5)");
  if (!sys_name == !geom_path) return cli_usage_error(cmd, "give exactly one of --system NAME and --geometry SCAN.h5");
  const char *inputs[2] = {in, geom_path};
  int ex = cli_check_output(cmd, out, inputs, 2, force);
  if (ex) return ex;

  dbtr_scan scan = {0};
  dbtr_grid grid;
  float *vol = NULL;
  double *volume_d = NULL, *line = NULL;
  dbtr_cpu_projector *p = NULL;
  size_t n_vox = 0, n = 0;
  double t0 = cli_now();
  int rc = dbtr_tiff_read(in, &grid, &vol);
  if (rc) return cli_fail(cmd, rc);
  if (go.has_voxel) {
    grid.dx = go.voxel[0];
    grid.dy = go.voxel[1];
    grid.dz = go.voxel[2];
  }
  if (go.has_origin) memcpy(grid.origin, go.origin, sizeof grid.origin);
  if ((ex = load_geometry(cmd, sys_name, geom_path, &scan.geom))) goto done;
  rc = dbtr_grid_check(&grid, &scan.geom, in);
  if (!rc) rc = dbtr_grid_count(&grid, &n_vox);
  if (!rc) rc = dbtr_geom_proj_count(&scan.geom, &n);
  if (!rc) rc = dbtr_alloc((void **)&volume_d, n_vox, sizeof(double), "volume");
  if (!rc) rc = dbtr_alloc((void **)&line, n, sizeof(double), "line integrals");
  if (!rc) rc = dbtr_cpu_projector_create(&p, &scan.geom, &grid, DBTR_PREC_DOUBLE, threads);
  if (!rc) {
    for (size_t i = 0; i < n_vox; i++) volume_d[i] = (double)vol[i];
    rc = dbtr_cpu_forward(p, volume_d, line);
  }
  scan.has_grid = 1;
  scan.grid = grid;
  if (!rc) rc = dbtr_simulate_store(&scan, &line, n, i0, seed);
  dbtr_scan_write_opts wo = {.dtype = DBTR_DTYPE_FLOAT32};
  if (!rc) rc = dbtr_scan_write(&scan, out, &wo);
  if (rc) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  if (!quiet)
    fprintf(stderr, "dbtr project: %s (%zu x %zu x %zu) -> %s: %zu views, %s (%.2f s)\n", in, grid.nx, grid.ny, grid.nz,
            out, scan.geom.n_views, i0 > 0.0 ? "Poisson counts" : "line integrals", cli_now() - t0);
done:
  dbtr_cpu_projector_destroy(&p);
  free(vol);
  free(volume_d);
  free(line);
  dbtr_scan_free(&scan);
  return ex;
}
