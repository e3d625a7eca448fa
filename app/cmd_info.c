/* app/cmd_info.c: `dbtr info FILE`: what a scan file (.h5) or a volume (.tif) holds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "app/cli.h"
#include "app/commands.h"
#include "io/scan.h"
#include "io/tiff.h"
#include "io/volume_format.h"
#include "recon/error.h"

static const char *i0_shape_name(dbtr_i0_shape s) {
  switch (s) {
  case DBTR_I0_SCALAR: return "scalar";
  case DBTR_I0_PER_VIEW: return "one per view";
  case DBTR_I0_PER_PIXEL: return "one per pixel, the same for every view";
  case DBTR_I0_FULL: return "one per view and pixel";
  default: return "none";
  }
}

static const char *dtype_name(dbtr_dtype d) {
  switch (d) {
  case DBTR_DTYPE_FLOAT64: return "float64";
  case DBTR_DTYPE_UINT16: return "uint16";
  case DBTR_DTYPE_UINT32: return "uint32";
  default: return "float32";
  }
}

/* A volume, read as dbtr reads any TIFF volume (io/tiff.h): its grid, spacing, origin and
 * value range. NIfTI has no reader in dbtr (io/nifti.h): refused, naming what reads it. */
static int info_volume(const char *cmd, const char *in, dbtr_volume_type type) {
  if (type != DBTR_VOLUME_TIFF) {
    fprintf(stderr, "dbtr %s: %s: NIfTI volumes are written, not read, by dbtr; nibabel reads them "
                    "(docs/volume-format.md), and dbtr info reads the same volume written as .tif\n", cmd, in);
    return 2;
  }
  dbtr_grid g;
  float *v = NULL;
  int rc = dbtr_tiff_read(in, &g, &v);
  if (rc) return cli_fail(cmd, rc);
  size_t n = g.nx * g.ny * g.nz, zeros = 0, bad = 0;
  double lo = HUGE_VAL, hi = -HUGE_VAL, sum = 0.0;
  for (size_t i = 0; i < n; i++) {
    double x = v[i];
    if (!isfinite(x)) {
      bad++;
      continue;
    }
    lo = fmin(lo, x);
    hi = fmax(hi, x);
    sum += x;
    zeros += x == 0.0;
  }
  printf("%s: TIFF volume\n", in);
  printf("  grid         %zu x %zu x %zu voxels (x, y, z; slices are z)\n", g.nx, g.ny, g.nz);
  printf("  spacing      %.6g x %.6g x %.6g mm\n", g.dx, g.dy, g.dz);
  printf("  origin       (%.6g, %.6g, %.6g) mm, the centre of voxel (0, 0, 0)\n", g.origin[0], g.origin[1],
         g.origin[2]);
  printf("  extent       x %.6g .. %.6g, y %.6g .. %.6g, z %.6g .. %.6g mm (voxel centres)\n", g.origin[0],
         g.origin[0] + (double)(g.nx - 1) * g.dx, g.origin[1], g.origin[1] + (double)(g.ny - 1) * g.dy, g.origin[2],
         g.origin[2] + (double)(g.nz - 1) * g.dz);
  if (bad < n)
    printf("  values       min %.7g  mean %.7g  max %.7g; %zu voxels (%.2f%%) are 0\n", lo, sum / (double)(n - bad), hi,
           zeros, 100.0 * (double)zeros / (double)n);
  if (bad) printf("  not finite   %zu voxels\n", bad);
  free(v);
  return 0;
}

int dbtr_cmd_info(int argc, char **argv) {
  const char *cmd = "info", *in;
  const cli_command spec = {
      .name = cmd,
      .usage = "SCAN.h5 | VOLUME.tif",
      .about = "Prints the detector, views, geometry, data range and grid of a scan file; or the grid,\n"
               "spacing, origin and value range of a volume (.tif, .tiff).\n",
      .operand = "scan or volume file", .min_operands = 1, .max_operands = 1,
  };
  int ex;
  if (!cli_parse(&spec, argc, argv, &in, &ex)) return ex;
  dbtr_volume_type type;
  if (!dbtr__volume_type_by_name(in, &type)) return info_volume(cmd, in, type);
  dbtr_scan s;
  int rc = cli_read_scan(cmd, &s, in);
  if (rc) return cli_fail(cmd, rc);
  const dbtr_geom *g = &s.geom;
  size_t n = g->n_views * g->n_rows * g->n_cols;
  double lo = HUGE_VAL, hi = -HUGE_VAL, sum = 0.0;
  for (size_t i = 0; i < n; i++) {
    lo = fmin(lo, s.proj[i]);
    hi = fmax(hi, s.proj[i]);
    sum += s.proj[i];
  }
  printf("%s: dbtr-scan v1\n", in);
  printf("  projections  %zu views of %zu x %zu pixels (columns x rows), %s, stored as %s\n", g->n_views, g->n_cols, g->n_rows,
         s.quantity == DBTR_QUANTITY_COUNTS ? "counts" : "line integrals", dtype_name(s.stored_dtype));
  printf("  values       min %.6g  mean %.6g  max %.6g\n", lo, sum / (double)n, hi);
  if (s.i0_shape != DBTR_I0_NONE) {
    size_t ni = dbtr_scan_i0_count(&s);
    double ilo = HUGE_VAL, ihi = -HUGE_VAL;
    for (size_t i = 0; i < ni; i++) {
      ilo = fmin(ilo, s.i0[i]);
      ihi = fmax(ihi, s.i0[i]);
    }
    printf("  i0           %s, %.6g .. %.6g\n", i0_shape_name(s.i0_shape), ilo, ihi);
  }
  double pu = sqrt(g->detector_u[0] * g->detector_u[0] + g->detector_u[1] * g->detector_u[1] +
                   g->detector_u[2] * g->detector_u[2]);
  double pv = sqrt(g->detector_v[0] * g->detector_v[0] + g->detector_v[1] * g->detector_v[1] +
                   g->detector_v[2] * g->detector_v[2]);
  printf("  detector     %.4g x %.4g mm pixels (view 0)\n", pu, pv);
  printf("  views        %-5s %-28s %-28s %s\n", "view", "source (mm)", "detector centre (mm)", "angle (deg)");
  for (size_t v = 0; v < g->n_views; v++) {
    const double *sv = g->source + 3 * v, *d = g->detector_center + 3 * v;
    double ang = atan2(sv[0] - d[0], sv[2] - d[2]) * 180.0 / 3.14159265358979323846;
    printf("               %-5zu (%8.6g, %8.6g, %8.6g) (%8.6g, %8.6g, %8.6g) %7.4g\n", v, sv[0], sv[1], sv[2], d[0],
           d[1], d[2], ang);
  }
  if (s.has_grid)
    printf("  volume       %zu x %zu x %zu voxels of %.4g x %.4g x %.4g mm, voxel 0 at (%.6g, %.6g, %.6g) mm\n",
           s.grid.nx, s.grid.ny, s.grid.nz, s.grid.dx, s.grid.dy, s.grid.dz, s.grid.origin[0], s.grid.origin[1],
           s.grid.origin[2]);
  else
    printf("  volume       no grid in the file (give --dims, --voxel, --origin to dbtr recon)\n");
  /* Where each quantity came from, when the file says (dbtr import writes it). */
  for (size_t i = 0; i < s.n_notes; i++)
    printf("  %-12s %s: %s\n", i ? "" : "provenance", s.notes[i].key, s.notes[i].text);
  dbtr_scan_free(&s);
  return 0;
}
