/* bench/bench_modes.c: ML-EM on a preset's full problem (default `thesis`: 15 views, a
 * 2304 x 1196 detector, a 2304 x 1196 x 45 volume) in every GPU mode, against the
 * multi-threaded CPU reference on the same machine.
 *
 *   bench_modes [--system NAME] [--iterations N] [--repeats R] [--cpu-threads T] [--no-cpu]
 *
 * Prints, per mode: the median time of one forward projection, one back projection (with
 * the update) and one iteration (CUDA events, after a warm-up), voxel-views per second,
 * the counted floor (bytes and operations, docs/performance.md), the ratio to `fast`, the
 * speed-up over the CPU, and whether cpu-match / double-match are bitwise identical to the
 * CPU after one iteration of the full problem. The data: a compressed-breast-shaped
 * volume (mu 0.05 /mm in a half ellipse, 0.08 in a central block) projected by the CPU
 * reference, as counts floor(i0 exp(-l)) with i0 = 5000. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/gpu.h"
#include "phantoms/systems.h"
#include "recon/cpu.h"
#include "recon/error.h"
#include "recon/mlem.h"
#include "recon/rays.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what) {
  fprintf(stderr, "bench_modes: %s: %s\n", what, dbtr_errmsg());
  exit(1);
}

/* Mean number of candidate pixels the gather tests per voxel and view: the footprint box
 * is about 2 rc x 2 rr pixels (rays.h). */
static double mean_candidates(const dbtr_geom *g, const dbtr_grid *grid) {
  double sum = 0.0;
  for (size_t k = 0; k < g->n_views; k++)
    for (size_t z = 0; z < grid->nz; z++) {
      dbtr_footprint_d f;
      dbtr_footprint_reduce(g, grid, k, z, &f);
      sum += 2.0 * f.rc * 2.0 * f.rr;
    }
  return sum / (double)(g->n_views * grid->nz);
}

static int run_iteration(dbtr_mlem *m, dbtr_backend *b, void *vol) {
  double dev;
  int rc = dbtr_mlem_iterate(m, b, &dev);
  if (!rc) rc = b->get_volume(b, vol);
  return rc;
}

int main(int argc, char **argv) {
  const char *sys_name = "thesis";
  int iterations = 6, repeats = 5, cpu_threads = 0, do_cpu = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--system") && i + 1 < argc) sys_name = argv[++i];
    else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--repeats") && i + 1 < argc) repeats = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--cpu-threads") && i + 1 < argc) cpu_threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--no-cpu")) do_cpu = 0;
    else {
      fprintf(stderr, "usage: bench_modes [--system NAME] [--iterations N] [--repeats R] [--cpu-threads T] [--no-cpu]\n");
      return 2;
    }
  }
  const dbtr_system *sys = dbtr_system_find(sys_name);
  if (!sys) {
    fprintf(stderr, "bench_modes: unknown system %s\n", sys_name);
    return 2;
  }
  char gpu_name[256];
  if (!dbtr_gpu_available(gpu_name, sizeof gpu_name)) snprintf(gpu_name, sizeof gpu_name, "none");
  dbtr_geom g;
  dbtr_grid grid = sys->grid;
  if (dbtr_system_geometry(sys, &g)) die("geometry");
  size_t nv = grid.nx * grid.ny * grid.nz, np = g.n_views * g.n_rows * g.n_cols;
  float *vol = malloc(nv * sizeof(float)), *l = malloc(np * sizeof(float)), *back = malloc(nv * sizeof(float));
  double *y = malloc(np * sizeof(double)), *i0 = malloc(np * sizeof(double));
  if (!vol || !l || !back || !y || !i0) die("memory");
  for (size_t z = 0; z < grid.nz; z++)
    for (size_t j = 0; j < grid.ny; j++)
      for (size_t i = 0; i < grid.nx; i++) {
        double x = grid.origin[0] + (double)i * grid.dx, yy = grid.origin[1] + (double)j * grid.dy;
        double ax = 0.45 * (double)grid.nx * grid.dx, ay = 0.9 * (double)grid.ny * grid.dy;
        double r = (x / ax) * (x / ax) + (yy / ay) * (yy / ay);
        float v = r < 1.0 ? 0.05f : 0.0f;
        if (fabs(x) < 0.1 * ax && fabs(yy - 0.5 * ay) < 0.1 * ay && z > grid.nz / 4 && z < 3 * grid.nz / 4) v = 0.08f;
        vol[(z * grid.ny + j) * grid.nx + i] = v;
      }
  printf("bench_modes: %s system, %zu views of %zu x %zu, volume %zu x %zu x %zu, GPU: %s\n", sys->name, g.n_views,
         g.n_cols, g.n_rows, grid.nx, grid.ny, grid.nz, gpu_name);
  dbtr_cpu_projector *cp = NULL;
  if (dbtr_cpu_projector_create(&cp, &g, &grid, DBTR_PREC_FLOAT, cpu_threads)) die("CPU projector");
  double t = now();
  if (dbtr_cpu_forward(cp, vol, l)) die("CPU forward");
  double cpu_fwd = now() - t;
  double cpu_back = NAN;
  if (do_cpu) {
    t = now();
    if (dbtr_cpu_back(cp, l, back)) die("CPU back");
    cpu_back = now() - t;
  }
  dbtr_cpu_projector_destroy(&cp);
  double voxel_views = (double)nv * (double)g.n_views;
  printf("CPU reference (float, %d threads): forward %.3f s (%.3g voxel-views/s), back %.3f s (%.3g voxel-views/s)\n",
         dbtr_cpu_threads(cpu_threads), cpu_fwd, voxel_views / cpu_fwd, cpu_back, voxel_views / cpu_back);
  for (size_t i = 0; i < np; i++) {
    i0[i] = 5000.0;
    y[i] = floor(5000.0 * exp(-(double)l[i]));
  }

  /* The floor, counted (docs/performance.md): bytes each pass must move at least once, and
   * the operations of the shared arithmetic. */
  double cand = mean_candidates(&g, &grid);
  size_t es[2] = {4, 8};
  double bytes[2], flops;
  for (int p = 0; p < 2; p++) {
    double e = (double)es[p];
    double fwd = (double)np * (4 + 1 + 2 + 3) * e + (double)nv * e; /* ray record, len, y, i0; proj, e1, e2; volume */
    double bck = (double)np * (4 + 2) * e + (double)nv * 2 * e;      /* ray record, e1, e2; volume in and out */
    bytes[p] = fwd + bck;
  }
  /* forward: per slice crossing (2 mul, 2 add, 4 compares, 2 floor, 2 sub), weights (2 sub,
   * 4 mul) and the 4-term sum (4 mul, 4 add): about 28; back: per candidate the crossing and
   * its tests (about 14) plus, for the ~4 accepted, the weight and two accumulations (5). */
  flops = (double)np * (double)grid.nz * 28.0 + voxel_views * (cand * 14.0 + 4.0 * 5.0);
  const double hbm = 3.35e12, fp32 = 67e12, fp64 = 34e12; /* H100 SXM datasheet rates (H200: 4.8e12 HBM) */
  int is_h200 = strstr(gpu_name, "H200") != NULL;
  double bw = is_h200 ? 4.8e12 : hbm;
  printf("floor per iteration: %.2f GB (float) / %.2f GB (double) at %.2f TB/s, %.0f GFLOP at %.0f / %.0f TFLOP/s; "
         "%.1f candidate pixels per voxel-view\n",
         bytes[0] / 1e9, bytes[1] / 1e9, bw / 1e12, flops / 1e9, fp32 / 1e12, fp64 / 1e12, cand);

  dbtr_data data = {.geom = &g, .grid = &grid, .algo = DBTR_ALGO_TRANSMISSION, .y = y, .i0 = i0};
  dbtr_mlem m;
  if (dbtr_mlem_init(&m, &data, 1, cpu_threads)) die("ML-EM set-up");
  /* The CPU reference after one iteration, float and double, for the bitwise check. */
  void *cpu_vol[2] = {NULL, NULL}, *gpu_vol = malloc(nv * sizeof(double));
  double cpu_iter = NAN;
  if (do_cpu)
    for (int p = 0; p < 2; p++) {
      dbtr_backend *b = NULL;
      cpu_vol[p] = malloc(nv * es[p]);
      if (dbtr_cpu_backend_create(&b, p ? DBTR_PREC_DOUBLE : DBTR_PREC_FLOAT, &m.prob) || dbtr_mlem_load(&m, b, NULL, 0.0))
        die("CPU backend");
      t = now();
      if (run_iteration(&m, b, cpu_vol[p])) die("CPU iteration");
      if (p == 0) cpu_iter = now() - t;
      dbtr_backend_destroy(&b);
    }
  printf("CPU reference iteration (float): %.3f s\n\n", cpu_iter);
  printf("%-13s %9s %9s %9s %10s %11s %11s %9s %8s %9s %s\n", "mode", "fwd ms", "back ms", "iter ms", "N iter s",
         "fwd vv/s", "back vv/s", "floor ms", "x floor", "x fast", "vs CPU, bitwise");
  double fast_iter = NAN;
  for (int mode = 0; mode < DBTR_MODE_COUNT; mode++) {
    dbtr_backend *b = NULL;
    dbtr_gpu_timing tm;
    if (dbtr_gpu_backend_create(&b, (dbtr_gpu_mode)mode, &m.prob) || dbtr_mlem_load(&m, b, NULL, 0.0)) die("GPU backend");
    const char *same = "-";
    int dp = dbtr_gpu_mode_precision((dbtr_gpu_mode)mode) == DBTR_PREC_DOUBLE;
    if (do_cpu && (mode == DBTR_MODE_CPU_MATCH || mode == DBTR_MODE_DOUBLE_MATCH)) {
      if (run_iteration(&m, b, gpu_vol)) die("GPU iteration");
      same = memcmp(gpu_vol, cpu_vol[dp], nv * es[dp]) == 0 ? "identical" : "DIFFERS";
    }
    if (dbtr_gpu_benchmark(b, repeats, &tm)) die("GPU benchmark");
    if (mode == DBTR_MODE_FAST) fast_iter = tm.iteration_ms;
    double floor_ms = 1e3 * fmax(bytes[dp] / bw, flops / (dp ? fp64 : fp32));
    printf("%-13s %9.2f %9.2f %9.2f %10.3f %11.3g %11.3g %9.2f %8.1f %9.2f %.0fx, %s\n",
           dbtr_gpu_mode_name((dbtr_gpu_mode)mode), tm.forward_ms, tm.back_ms, tm.iteration_ms,
           iterations * tm.iteration_ms / 1e3, voxel_views / (tm.forward_ms / 1e3), voxel_views / (tm.back_ms / 1e3),
           floor_ms, tm.iteration_ms / floor_ms, tm.iteration_ms / fast_iter, cpu_iter * 1e3 / tm.iteration_ms, same);
    dbtr_backend_destroy(&b);
  }
  dbtr_mlem_free(&m);
  free(cpu_vol[0]);
  free(cpu_vol[1]);
  free(gpu_vol);
  free(vol);
  free(l);
  free(back);
  free(y);
  free(i0);
  dbtr_geom_free(&g);
  return 0;
}
