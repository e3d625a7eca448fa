/* app/cmd_project.c: `dbtr project VOLUME.tif -o SCAN.h5`: a scan of the user's own phantom. */
#include <float.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli.h"
#include "app/commands.h"
#include "app/run.h"
#include "engine/backends.h"
#include "io/memory.h"
#include "io/scan.h"
#include "io/tiff.h"
#include "io/tiff_probe.h"
#include "io/volume.h"
#include "phantoms/phantom.h"
#include "phantoms/simulate.h"
#include "phantoms/systems.h"
#include "recon/cpu.h"
#include "recon/error.h"
#include "recon/mlem.h"
#include "recon/modes.h"

typedef struct {
  const char *out, *geometry;
  const dbtr_system *system;
  double i0;
  uint64_t seed;
  app_grid_opts grid;
  cli_backend_opts be; /* the path that projects: the CPU reference in double unless a flag says */
  int force, quiet;
} project_args;

static const cli_opt project_rows[] = {
    {"--output", 'o', CLI_STRING, offsetof(project_args, out), "FILE", .help = "scan file to write",
     .flags = CLI_REQUIRED},
    {"--system", 0, CLI_CUSTOM, offsetof(project_args, system), "NAME", .help = "geometry of a preset:",
     .convert = cli_convert_system, .more_help = cli_list_systems},
    {"--geometry", 0, CLI_STRING, offsetof(project_args, geometry), "SCAN.h5",
     .help = "geometry of an existing scan file"},
    {"--i0", 0, CLI_DOUBLE, offsetof(project_args, i0), "N",
     .help = "write Poisson counts with N unattenuated counts per pixel", .min = 1e-6, .max = 1e12},
    {"--seed", 0, CLI_U64, offsetof(project_args, seed), "N", .help = "noise seed", .def = "1"},
};

/* The scan's geometry: a preset's, or a scan file's. Returns the exit code (0: done). */
static int load_geometry(const char *cmd, const dbtr_system *sys, const char *geom_path, dbtr_geom *g) {
  int rc;
  if (sys) {
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

/* What `dbtr project` holds at its peak, all at once until it ends: the volume in float (as
 * read) and in the path's precision (as projected), the projector's tables (on the CPU) and
 * the projections in that precision, the line integrals in double, and with counts (i0 > 0)
 * the counts and their per-pixel i0 beside them (dbtr_simulate_store); the writer's buffer is
 * one view. Counted from the TIFF's declared sizes before its pixels are read, in the larger
 * precision of the paths the options may run; a file that cannot be probed is checked by the
 * reader. */
static int check_memory(const char *in, const dbtr_geom *g, double i0, const cli_backend_opts *be) {
  size_t dims[3];
  if (!dbtr_tiff_probe(in, dims)) return 0;
  dbtr_mode gpu_mode, cpu_mode;
  int gpu, rc = dbtr_backend_choose(be, &gpu_mode, &cpu_mode, &gpu);
  if (rc) return rc;
  dbtr_precision p = dbtr_mode_precision(cpu_mode), pg = dbtr_mode_precision(gpu_mode);
  double es = (double)dbtr_precision_size(gpu && dbtr_precision_size(pg) > dbtr_precision_size(p) ? pg : p);
  dbtr_grid est = {.nx = dims[0], .ny = dims[1], .nz = dims[2], .dx = 1.0, .dy = 1.0, .dz = 1.0};
  double n_vox = (double)dims[0] * (double)dims[1] * (double)dims[2];
  double n = (double)g->n_views * (double)g->n_rows * (double)g->n_cols;
  double need = (4.0 + es) * n_vox + dbtr_cpu_projector_bytes(p, g, &est, 0) + (es + 8.0) * n +
                (i0 > 0.0 ? 16.0 * n : 0.0) + 8.0 * (double)g->n_rows * (double)g->n_cols;
  char what[1200];
  snprintf(what, sizeof what, "%s: projecting its %zu x %zu x %zu voxels (float and double) into %zu views of %zu x %zu",
           in, dims[0], dims[1], dims[2], g->n_views, g->n_cols, g->n_rows);
  return dbtr_mem_check(need, what);
}

/* A volume placed where no view sees it whole, with no --origin: a TIFF from another tool
 * has no dbtr_origin, so its origin reads as 0 and the volume hangs half below the
 * detector. The refusal then says which --origin places it as the presets place theirs,
 * when that placement passes. */
static int suggest_origin(const dbtr_grid *grid, const dbtr_geom *g, const char *in) {
  char why[1024];
  snprintf(why, sizeof why, "%s", dbtr_errmsg());
  dbtr_grid placed = *grid;
  dbtr_system_place_grid(g, grid, placed.origin);
  if (dbtr_grid_check(&placed, g, in) != 0) return dbtr_err(DBTR_EGEOM, "%s", why);
  return dbtr_err(DBTR_EGEOM, "%s; --origin %g,%g,%g places the volume as the presets do (on the detector, centred "
                  "along the chest wall)", why, placed.origin[0], placed.origin[1], placed.origin[2]);
}

/* The TIFF's float voxels in the path's precision, a slice at a time through double: exact in
 * each (a float is a double, and a double-double whose second part is 0). */
static int volume_to(dbtr_precision p, const float *vol, const dbtr_grid *grid, void *out) {
  size_t slice = grid->nx * grid->ny, es = dbtr_precision_size(p);
  double *d;
  int rc = dbtr_alloc((void **)&d, slice, sizeof *d, "volume slice");
  if (rc) return rc;
  for (size_t z = 0; z < grid->nz; z++) {
    for (size_t i = 0; i < slice; i++) d[i] = (double)vol[z * slice + i];
    dbtr_convert_from_double(p, d, slice, (char *)out + z * slice * es);
  }
  free(d);
  return 0;
}

/* Whether argv names the path: --backend, --mode or --precision, alone or with '='. */
static int path_named(int argc, char **argv) {
  static const char *const flags[] = {"--backend", "--mode", "--precision"};
  for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
    for (size_t f = 0; f < sizeof flags / sizeof *flags; f++) {
      size_t len = strlen(flags[f]);
      if (!strncmp(argv[i], flags[f], len) && (argv[i][len] == '\0' || argv[i][len] == '=')) return 1;
    }
  return 0;
}

int dbtr_cmd_project(int argc, char **argv) {
  const char *cmd = "project", *in;
  project_args a = {0};
  const cli_group groups[] = {
      {NULL, CLI_ROWS(project_rows), &a},
      cli_backend_group(&a.be),
      cli_force_group(&a.force),
      cli_quiet_group(&a.quiet),
      app_grid_group(&a.grid, "volume placement (default: the TIFF's)", 0),
  };
  const cli_command spec = {
      .name = cmd,
      .usage = "VOLUME.tif (--system NAME | --geometry SCAN.h5) -o SCAN.h5 [options]",
      .about = "Forward-projects a TIFF volume of attenuation coefficients (1/mm) with dbtr's projector (the CPU\n"
               "reference in double precision, or the path --backend, --mode and --precision name, as\n"
               "dbtr recon runs it) and writes a scan file: line integrals, or Poisson counts with --i0.\n"
               "The volume's voxel size and origin come from the TIFF (docs/volume-format.md) unless given.\n",
      .operand = "volume", .min_operands = 1, .max_operands = 1,
      CLI_GROUPS(groups),
  };
  int ex;
  if (!cli_parse(&spec, argc, argv, &in, &ex)) return ex;
  const char *out = a.out;
  if (!a.system == !a.geometry) return cli_usage_error(cmd, "give exactly one of --system NAME and --geometry SCAN.h5");
  if (a.be.gpus != 0 && a.be.gpus != 1) return cli_usage_error(cmd, "--gpus %d: dbtr project runs on one GPU", a.be.gpus);
  /* No path named: the CPU reference in double, the projector of dbtr's simulations (the
   * group's defaults, auto and cpu-match, are recon's). */
  if (!path_named(argc, argv)) {
    a.be.backend = "cpu";
    a.be.precision = "double";
  }
  const char *inputs[2] = {in, a.geometry};
  if ((ex = cli_check_output(cmd, out, inputs, 2, a.force))) return ex;

  dbtr_scan scan = {0};
  dbtr_grid grid;
  float *vol = NULL;
  void *volume_t = NULL, *proj_t = NULL;
  double *line = NULL;
  dbtr_projector *p = NULL;
  size_t n_vox = 0, n = 0;
  double t0 = cli_now();
  int rc;
  /* The geometry first (small), then the whole command's peak from the sizes the TIFF
   * declares, before its pixels are read: a 32 KB file can declare 8 GiB of voxels. */
  if ((ex = load_geometry(cmd, a.system, a.geometry, &scan.geom))) goto done;
  if ((rc = check_memory(in, &scan.geom, a.i0, &a.be))) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  rc = dbtr_tiff_read(in, &grid, &vol);
  if (!rc) rc = dbtr_volume_check_finite(in, &grid, vol);
  if (rc) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  if (a.grid.has_voxel) {
    grid.dx = a.grid.voxel[0];
    grid.dy = a.grid.voxel[1];
    grid.dz = a.grid.voxel[2];
  }
  if (a.grid.has_origin) memcpy(grid.origin, a.grid.origin, sizeof grid.origin);
  rc = dbtr_grid_check(&grid, &scan.geom, in);
  if (rc == DBTR_EGEOM && !a.grid.has_origin) rc = suggest_origin(&grid, &scan.geom, in);
  if (!rc) rc = dbtr_grid_count(&grid, &n_vox);
  if (!rc) rc = dbtr_geom_proj_count(&scan.geom, &n);
  dbtr_projector_opts po = {.backend = a.be};
  if (!rc) rc = dbtr_projector_open(&p, &scan.geom, &grid, &po);
  size_t es = p ? dbtr_precision_size(dbtr_projector_precision(p)) : 0;
  if (!rc) rc = dbtr_alloc(&volume_t, n_vox, es, "volume");
  if (!rc) rc = dbtr_alloc(&proj_t, n, es, "projections");
  if (!rc) rc = dbtr_alloc((void **)&line, n, sizeof(double), "line integrals");
  if (!rc) rc = volume_to(dbtr_projector_precision(p), vol, &grid, volume_t);
  if (!rc) rc = dbtr_projector_forward(p, volume_t, proj_t, DBTR_MEMORY_HOST);
  if (!rc) dbtr_convert_to_double(dbtr_projector_precision(p), proj_t, n, line);
  free(proj_t);
  proj_t = NULL;
  /* The scan stores float32: a line integral or count beyond it would be written as inf. */
  if (!rc) rc = dbtr_simulate_check_range(in, &grid, vol, &scan.geom, line, a.i0, FLT_MAX, "float32");
  scan.has_grid = 1;
  scan.grid = grid;
  if (!rc) rc = dbtr_simulate_store(&scan, &line, n, a.i0, a.seed);
  dbtr_scan_write_opts wo = {.dtype = DBTR_DTYPE_FLOAT32};
  if (!rc) rc = dbtr_scan_write(&scan, out, &wo);
  if (rc) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  cli_wrote(cmd, a.quiet, out, "%zu views of %zu x %zu pixels, %s through %s's %zu x %zu x %zu voxels (%s); %.2f s",
            scan.geom.n_views, scan.geom.n_cols, scan.geom.n_rows, a.i0 > 0.0 ? "Poisson counts" : "line integrals", in,
            grid.nx, grid.ny, grid.nz, dbtr_projector_backend(p), cli_now() - t0);
done:
  dbtr_projector_close(&p);
  free(vol);
  free(volume_t);
  free(proj_t);
  free(line);
  dbtr_scan_free(&scan);
  return ex;
}
