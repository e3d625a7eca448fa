/* bench/bench_cpu.c: throughput of the CPU reference projectors on a preset's full grid.
 *
 *   bench_cpu [--system NAME] [--bin N] [--threads T[,T...]] [--views K] [--precision float|double]
 *
 * Projects the first K views (default 3: throughput per voxel-view does not depend on how
 * many views, and a full thesis back projection takes minutes on two cores) of the preset
 * (default `thesis`) forward and back once each, and prints the time and voxel-views per
 * second, in all and per thread, and the set-up's time (ray records and tables). The volume
 * is a uniform 0.05/mm slab, so every ray does full work.
 *
 * --bin N bins the detector N x N (pixels N times as wide, n_cols / N by n_rows / N) and
 * coarsens the grid's x and y to match, its z kept: `--system hologic --bin 4 --views 15` is
 * the binned hologic problem of issue 12 (416 x 512 pixels, 416 x 512 x 50 voxels of 0.56 x
 * 0.56 x 1 mm), on which RTK was compared. --threads takes a list and runs the projectors
 * once per entry (0: OpenMP's default); each line after the first also gives the speed-up
 * over the first, so `--threads 1,2` shows the scaling from one thread to two. */
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

/* The preset with its detector binned n x n and its grid coarsened to match (the preset
 * grids start at the detector's chest-wall edge, centred on x = 0: phantoms/systems.c). */
static dbtr_system binned(const dbtr_system *sys, int n) {
  dbtr_system b = *sys;
  b.pixel_mm *= n;
  b.n_cols /= n;
  b.n_rows /= n;
  b.grid.nx /= (size_t)n;
  b.grid.ny /= (size_t)n;
  b.grid.dx *= n;
  b.grid.dy *= n;
  b.grid.origin[0] = -0.5 * ((double)b.grid.nx - 1.0) * b.grid.dx;
  b.grid.origin[1] = 0.5 * b.grid.dy;
  return b;
}

/* Times the projector's set-up, one forward and one back projection with `threads` threads, in s. */
static int run(const dbtr_geom *g, const dbtr_grid *grid, dbtr_precision p, int threads, void *vol, void *proj,
               double *setup, double *fwd, double *back) {
  dbtr_cpu_projector *cp = NULL;
  double t = now();
  if (dbtr_cpu_projector_create(&cp, g, grid, p, threads)) return 1;
  *setup = now() - t;
  t = now();
  int rc = dbtr_cpu_forward(cp, vol, proj);
  *fwd = now() - t;
  t = now();
  if (!rc) rc = dbtr_cpu_back(cp, proj, vol);
  *back = now() - t;
  dbtr_cpu_projector_destroy(&cp);
  return rc;
}

int main(int argc, char **argv) {
  const char *sys_name = "thesis", *prec_name = "float", *thread_list = "0";
  int bin = 1;
  size_t views = 3;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--system") && i + 1 < argc) sys_name = argv[++i];
    else if (!strcmp(argv[i], "--bin") && i + 1 < argc) bin = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) thread_list = argv[++i];
    else if (!strcmp(argv[i], "--views") && i + 1 < argc) views = (size_t)atol(argv[++i]);
    else if (!strcmp(argv[i], "--precision") && i + 1 < argc) prec_name = argv[++i];
    else {
      fprintf(stderr, "usage: bench_cpu [--system NAME] [--bin N] [--threads T[,T...]] [--views K] "
                      "[--precision float|double]\n");
      return 2;
    }
  }
  const dbtr_system *preset = dbtr_system_find(sys_name);
  if (!preset || bin < 1 || preset->n_cols / bin < 1 || preset->n_rows / bin < 1) {
    fprintf(stderr, "bench_cpu: unknown system %s, or --bin %d larger than its detector\n", sys_name, bin);
    return 2;
  }
  dbtr_system sys = binned(preset, bin);
  dbtr_geom full, g;
  if (dbtr_system_geometry(&sys, &full)) {
    fprintf(stderr, "bench_cpu: %s\n", dbtr_errmsg());
    return 2;
  }
  if (views < 1 || views > full.n_views) views = full.n_views;
  size_t idx[256];
  for (size_t k = 0; k < views; k++) idx[k] = k * full.n_views / views;
  if (dbtr_geom_select(&g, &full, idx, views)) return 1;
  dbtr_precision p = strcmp(prec_name, "double") ? DBTR_PREC_FLOAT : DBTR_PREC_DOUBLE;
  size_t nv = sys.grid.nx * sys.grid.ny * sys.grid.nz, np = views * g.n_rows * g.n_cols;
  double *one = malloc(nv * sizeof(double));
  void *vol = malloc(nv * dbtr_precision_size(p)), *proj = malloc(np * dbtr_precision_size(p));
  if (!one || !vol || !proj) return 1;
  for (size_t i = 0; i < nv; i++) one[i] = 0.05;
  double vv = (double)nv * (double)views, fwd1 = 0.0, back1 = 0.0;
  printf("bench_cpu: %s binned %d x %d, %zu of %zu views, detector %zu x %zu, volume %zu x %zu x %zu, %s\n", sys.name,
         bin, bin, views, full.n_views, g.n_cols, g.n_rows, sys.grid.nx, sys.grid.ny, sys.grid.nz, prec_name);
  printf("%7s %9s %9s %9s %13s %13s %13s %13s %9s\n", "threads", "set-up s", "fwd s", "back s", "fwd vv/s", "back vv/s",
         "fwd vv/s/thr", "back vv/s/thr", "speed-up");
  int rc = 0;
  for (const char *s = thread_list; *s && !rc;) {
    char *end;
    int threads = (int)strtol(s, &end, 10), n = dbtr_cpu_threads(threads);
    s = *end == ',' ? end + 1 : end;
    double setup, fwd, back;
    /* Each run starts from the same slab, since the back projection overwrites the volume. */
    dbtr_convert_from_double(p, one, nv, vol);
    if ((rc = run(&g, &sys.grid, p, threads, vol, proj, &setup, &fwd, &back))) {
      fprintf(stderr, "bench_cpu: %s\n", dbtr_errmsg());
      break;
    }
    if (fwd1 == 0.0) fwd1 = fwd, back1 = back;
    printf("%7d %9.3f %9.3f %9.3f %13.3g %13.3g %13.3g %13.3g %8.2fx\n", n, setup, fwd, back, vv / fwd, vv / back, vv / fwd / n,
           vv / back / n, (fwd1 + back1) / (fwd + back));
  }
  dbtr_geom_free(&g);
  dbtr_geom_free(&full);
  free(one);
  free(vol);
  free(proj);
  return rc;
}
