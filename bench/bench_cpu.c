/* bench/bench_cpu.c: throughput of the CPU reference projectors on a preset's full grid.
 *
 *   bench_cpu [--system NAME] [--threads T] [--views K] [--precision float|double]
 *
 * Projects the first K views (default 3: throughput per voxel-view does not depend on how
 * many views, and a full thesis back projection takes minutes on two cores) of the preset
 * (default `thesis`) forward and back once each, and prints the time and voxel-views per
 * second. The volume is a uniform 0.05/mm slab, so every ray does full work. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "phantoms/systems.h"
#include "recon/cpu.h"
#include "recon/error.h"
#include "recon/mlem.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  const char *sys_name = "thesis", *prec_name = "float";
  int threads = 0;
  size_t views = 3;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--system") && i + 1 < argc) sys_name = argv[++i];
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--views") && i + 1 < argc) views = (size_t)atol(argv[++i]);
    else if (!strcmp(argv[i], "--precision") && i + 1 < argc) prec_name = argv[++i];
    else {
      fprintf(stderr, "usage: bench_cpu [--system NAME] [--threads T] [--views K] [--precision float|double]\n");
      return 2;
    }
  }
  const dbtr_system *sys = dbtr_system_find(sys_name);
  dbtr_geom full, g;
  if (!sys || dbtr_system_geometry(sys, &full)) {
    fprintf(stderr, "bench_cpu: unknown system %s\n", sys_name);
    return 2;
  }
  if (views < 1 || views > full.n_views) views = full.n_views;
  size_t idx[256];
  for (size_t k = 0; k < views; k++) idx[k] = k * full.n_views / views;
  if (dbtr_geom_select(&g, &full, idx, views)) return 1;
  dbtr_precision p = strcmp(prec_name, "double") ? DBTR_PREC_FLOAT : DBTR_PREC_DOUBLE;
  size_t nv = sys->grid.nx * sys->grid.ny * sys->grid.nz, np = views * g.n_rows * g.n_cols;
  double *one = malloc(nv * sizeof(double));
  void *vol = malloc(nv * dbtr_precision_size(p)), *proj = malloc(np * dbtr_precision_size(p));
  if (!one || !vol || !proj) return 1;
  for (size_t i = 0; i < nv; i++) one[i] = 0.05;
  dbtr_convert_from_double(p, one, nv, vol);
  dbtr_cpu_projector *cp = NULL;
  double t = now();
  if (dbtr_cpu_projector_create(&cp, &g, &sys->grid, p, threads)) {
    fprintf(stderr, "bench_cpu: %s\n", dbtr_errmsg());
    return 1;
  }
  double setup = now() - t;
  t = now();
  dbtr_cpu_forward(cp, vol, proj);
  double fwd = now() - t;
  t = now();
  dbtr_cpu_back(cp, proj, vol);
  double back = now() - t;
  double vv = (double)nv * (double)views;
  printf("bench_cpu: %s, %zu of %zu views, volume %zu x %zu x %zu, %s, %d threads: set-up %.2f s, "
         "forward %.2f s (%.3g voxel-views/s), back %.2f s (%.3g voxel-views/s)\n",
         sys->name, views, full.n_views, sys->grid.nx, sys->grid.ny, sys->grid.nz, prec_name, dbtr_cpu_threads(threads),
         setup, fwd, vv / fwd, back, vv / back);
  dbtr_cpu_projector_destroy(&cp);
  dbtr_geom_free(&g);
  dbtr_geom_free(&full);
  free(one);
  free(vol);
  free(proj);
  return 0;
}
