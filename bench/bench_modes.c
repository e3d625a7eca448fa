/* bench/bench_modes.c: ML-EM on a preset's full problem (default `thesis`: 15 views, a
 * 2304 x 1196 detector, a 2304 x 1196 x 45 volume) in every GPU mode, against the
 * multi-threaded CPU reference on the same machine.
 *
 *   bench_modes [--system NAME] [--iterations N] [--repeats R] [--cpu-threads T] [--no-cpu]
 *               [--rotate DEG] [--batched [--gpu-memory GIB]] [--gpus N]
 *
 * --rotate turns every view's detector by DEG about z, which makes the views non-separable
 * (kernels/separable.h), so the GPU runs its per-pixel gather: its speed on the same
 * problem size.
 *
 * --batched runs each mode a second time within the smallest GPU memory budget it can take,
 * which makes its ray records again one view at a time (kernels/gpu.h), or within GIB GiB
 * with --gpu-memory, and prints that run's iteration time, its ratio to the unbatched one,
 * the memory both took, and whether the volume after one iteration has the unbatched run's
 * bits. --gpus N runs each mode again
 * spread over N GPUs and prints the same, with the speed-up over one GPU.
 *
 * Prints, per mode: the median time of one forward projection, one back projection (with
 * the update) and one iteration (CUDA events, after a warm-up: bench/gpu_timing.c),
 * voxel-views per second, the counted floor (bytes and operations, docs/performance.md), the ratio to `fast`, the
 * speed-up over the CPU, and whether cpu-match / double-match are bitwise identical to the
 * CPU after one iteration of the full problem. The data: a compressed-breast-shaped
 * volume (mu 0.05 /mm in a half ellipse, 0.08 in a central block) projected by the CPU
 * reference, as counts floor(i0 exp(-l)) with i0 = 5000. Last, FBP (engine/fbp.h) of that scan
 * in every mode: the host filter's time and the back projections' (docs/fbp.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/gpu_timing.h"
#include "engine/backends.h"
#include "engine/fbp.h"
#include "engine/session.h"
#include "kernels/gpu.h"
#include "kernels/layout.h"
#include "phantoms/systems.h"
#include "recon/cpu.h"
#include "recon/error.h"
#include "recon/mlem.h"
#include "recon/rays.h"
#include "tests/problems.h" /* test_rotate_detector */

/* The shared arithmetic in double with the CPU reference's operators, for the floor's
 * count of crossings inside the grid. */
#define DBTR_FN(name) b_##name
#define DBTR_TRAITS_PREC double
#include "recon/cpu_arith.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what) {
  fprintf(stderr, "bench_modes: %s: %s\n", what, dbtr_errmsg());
  exit(1);
}

/* Geometry means for the floor: candidate pixels per voxel and view (the footprint box, about
 * 2 rc x 2 rr pixels, rays.h), pixels in the union box of a 2 x 2 voxel tile ((2 rc + dc) x
 * (2 rr + dr), dc and dr the pixel distance between neighbouring voxel columns and rows at the
 * grid's centre), and the fraction of ray-slice crossings inside the grid (crossing(), on
 * every 8th row and column of the detector, in double). */
typedef struct {
  double cand, tile, inside;
} geometry_means;

static geometry_means means(const dbtr_geom *g, const dbtr_grid *grid) {
  geometry_means m = {0.0, 0.0, 0.0};
  double xc = 0.5 * (double)grid->nx, yc = 0.5 * (double)grid->ny, n_in = 0.0, n_all = 0.0;
  int nx = (int)grid->nx, ny = (int)grid->ny;
  for (size_t k = 0; k < g->n_views; k++) {
    dbtr_view_d v;
    dbtr_view_reduce(g, grid, k, &v);
    for (size_t z = 0; z < grid->nz; z++) {
      dbtr_footprint_d f;
      dbtr_footprint_reduce(g, grid, k, z, &f);
      double c0, r0, c1, r1, c2, r2;
      dbtr_footprint_map(f.h, xc, yc, &c0, &r0);
      dbtr_footprint_map(f.h, xc + 1.0, yc, &c1, &r1);
      dbtr_footprint_map(f.h, xc, yc + 1.0, &c2, &r2);
      m.cand += 2.0 * f.rc * 2.0 * f.rr;
      m.tile += (2.0 * f.rc + fabs(c1 - c0)) * (2.0 * f.rr + fabs(r2 - r0));
    }
    for (size_t r = 0; r < g->n_rows; r += 8)
      for (size_t c = 0; c < g->n_cols; c += 8) {
        double ray[4];
        b_ray_setup(&v, (int)r, (int)c, ray);
        for (size_t z = 0; z < grid->nz; z++) {
          int ix, iy;
          double wx, wy;
          n_in += b_crossing(ray, (int)z, nx, ny, &ix, &iy, &wx, &wy);
          n_all += 1.0;
        }
      }
  }
  m.cand /= (double)(g->n_views * grid->nz);
  m.tile /= (double)(g->n_views * grid->nz);
  m.inside = n_in / n_all;
  return m;
}

/* The floor of one iteration (docs/performance.md, "The floor"): the operations of fast's
 * arithmetic counted per unit (an FMA is one operation; conversions apart, as they run on
 * their own unit), and the bytes each pass must move once, for the gather that runs
 * (separable or per-pixel) in element size e. */
typedef struct {
  double ops, cvt, bytes;
} floor_count;

typedef struct {
  double np, nz, nvox, voxel_views; /* pixels of all views, slices, voxels, voxels x views */
  double slot_tables, group_tables; /* separable table entries: (views, nz, nx) and (views, nz, groups) */
} problem_size;

static floor_count count_floor(const geometry_means *m, const problem_size *ps, int separable, double e) {
  double samples = ps->np * ps->nz, inside = m->inside * samples;
  floor_count f;
  /* Forward, per ray and slice. Per ray: the crossing (2 FMA, 4 compares, 2 subtractions; 2
   * floors and 2 conversions to int) and, inside the grid, the bilinear sample (2
   * subtractions, 4 weight products, 1 product and 3 FMA for the sum, 1 addition). Separable:
   * the crossing looked up, its lower weights made once a column (1 subtraction, shared by a
   * thread's 4 rows) and once a row; inside the grid, the sample without them, and float's
   * widening of it to its sum's double (a conversion). */
  if (separable) {
    f.ops = samples / 4.0 + inside * 9.0;
    f.cvt = inside;
  } else {
    f.ops = samples * 8.0 + inside * 11.0;
    f.cvt = samples * 4.0;
  }
  /* Back, per voxel and view: a product and a zero test per candidate pixel, and 2 FMA per
   * nonzero weight (4 per crossing inside the grid). The per-pixel gather also computes, once
   * per 2 x 2 voxel tile, the crossing of each pixel of the tile's union box. */
  f.ops += ps->voxel_views * m->cand * 2.0 + 4.0 * inside * 2.0;
  if (!separable) {
    f.ops += ps->voxel_views * m->tile / 4.0 * 8.0;
    f.cvt += ps->voxel_views * m->tile / 4.0 * 4.0;
  }
  /* Forward: ray record (4), length, y and i0 read, A mu and the pair (e1, e2) written; the
   * volume read. Back: the pairs read (and, per-pixel, the ray records; separable, the slot
   * and group tables), the volume read and written. */
  f.bytes = ps->np * 10.0 * e + ps->nvox * e;
  if (separable)
    f.bytes += ps->np * 2.0 * e + ps->slot_tables * (8.0 + 4.0 * e) + ps->group_tables * (8.0 + 32.0 * e);
  else
    f.bytes += ps->np * 6.0 * e;
  f.bytes += ps->nvox * 2.0 * e;
  return f;
}

/* H100 SXM (and H200: the same 132 multiprocessors at 1.98 GHz): per multiprocessor and
 * clock, 128 FP32 operations (4 warp instructions issued), 64 FP64 and 16 conversions (the
 * CUDA programming guide's throughput table); device memory 3.35 TB/s (H200 4.8 TB/s). */
static const double clock_sms = 132.0 * 1.98e9;

static double floor_ms(const floor_count *f, int dp, double bw) {
  double issue = (f->ops + f->cvt) / (128.0 * clock_sms), cvt = f->cvt / (16.0 * clock_sms);
  double arith = dp ? fmax(f->ops / (64.0 * clock_sms), issue) : issue;
  return 1e3 * fmax(fmax(arith, cvt), f->bytes / bw);
}

static int run_iteration(const dbtr_mlem *m, dbtr_backend *b, void *vol) {
  double dev;
  int rc = dbtr_mlem_iterate(m, b, &dev);
  if (!rc) rc = b->get_volume(b, vol);
  return rc;
}

/* Mode again on problem `prob` (m's, changed), against its first backend (timing tm, volume
 * after one iteration vol); the line says what changed (label) and how the memory fits. */
static void second_run(const dbtr_mlem *m, dbtr_mode mode, const dbtr_problem *prob, const char *label,
                       const dbtr_gpu_timing *tm, int repeats, const void *vol, void *vol2, size_t vol_bytes) {
  dbtr_gpu_memory mem;
  dbtr_backend *b = NULL;
  dbtr_gpu_timing t2;
  if (dbtr_backend_create(&b, mode, prob) || dbtr_mlem_load(m, b, 0.0) || run_iteration(m, b, vol2) ||
      dbtr_gpu_benchmark(b, prob, repeats, &t2) || dbtr_gpu_memory_of(b, &mem))
    die(label);
  char split[96] = "";
  if (mem.one_gpu)
    snprintf(split, sizeof split, " (%.3fx the %.3f GiB one GPU needs)", (double)mem.need / (double)mem.one_gpu,
             (double)mem.one_gpu / 1073741824.0);
  printf("  %s: %zu of %zu views' ray records at a time: iter %.2f ms (%.3fx the first, %.2fx as fast; fwd %.3fx, "
         "back %.3fx), %.3f of %.3f GiB a GPU at most%s; one iteration %s\n",
         label, mem.batch, mem.n_views, t2.iteration_ms, t2.iteration_ms / tm->iteration_ms,
         tm->iteration_ms / t2.iteration_ms, t2.forward_ms / tm->forward_ms, t2.back_ms / tm->back_ms,
         (double)mem.used / 1073741824.0, (double)mem.need / 1073741824.0, split,
         memcmp(vol, vol2, vol_bytes) ? "DIFFERS from the first" : "bitwise as the first");
  if (mem.gpus > 1) {
    /* What the iteration takes beyond a perfect split of one GPU's time, against what the
     * exchange takes alone. At most that excess is the exchange's, so at least the rest of the
     * exchange was hidden behind compute; an excess larger than the whole exchange is not the
     * exchange's (uneven shares, smaller launches). */
    double exposed = t2.iteration_ms - tm->iteration_ms / mem.gpus;
    printf("    exchange alone %.2f ms an iteration; the iteration %.2f ms beyond 1/%d of one GPU's: ", t2.exchange_ms,
           exposed, mem.gpus);
    if (exposed < t2.exchange_ms)
      printf("at least %.0f%% of the exchange hidden behind compute\n",
             100.0 * (1.0 - (exposed > 0.0 ? exposed : 0.0) / t2.exchange_ms));
    else
      printf("more than the whole exchange, so not the exchange's\n");
  }
  dbtr_backend_destroy(&b);
}

/* Whether mode name is in the comma-separated list (NULL: every mode). */
static int wanted(const char *list, const char *name) {
  if (!list) return 1;
  size_t n = strlen(name);
  for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
    if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\0')) return 1;
  return 0;
}

int main(int argc, char **argv) {
  const char *sys_name = "thesis", *modes = NULL;
  int iterations = 6, repeats = 5, cpu_threads = 0, do_cpu = 1, batched = 0, gpus = 1;
  double rotate_deg = 0.0, budget_gib = 0.0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--system") && i + 1 < argc) sys_name = argv[++i];
    else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--repeats") && i + 1 < argc) repeats = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--cpu-threads") && i + 1 < argc) cpu_threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--no-cpu")) do_cpu = 0;
    else if (!strcmp(argv[i], "--rotate") && i + 1 < argc) rotate_deg = atof(argv[++i]);
    else if (!strcmp(argv[i], "--batched")) batched = 1;
    else if (!strcmp(argv[i], "--gpus") && i + 1 < argc) gpus = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--gpu-memory") && i + 1 < argc) budget_gib = atof(argv[++i]);
    else if (!strcmp(argv[i], "--modes") && i + 1 < argc) modes = argv[++i];
    else {
      fprintf(stderr, "usage: bench_modes [--system NAME] [--iterations N] [--repeats R] [--cpu-threads T] [--no-cpu] "
                      "[--rotate DEG] [--batched [--gpu-memory GIB]] [--gpus N] [--modes fast,cpu-match,...]\n");
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
  test_rotate_detector(&g, rotate_deg);
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

  /* The floor, counted (docs/performance.md). */
  geometry_means gm = means(&g, &grid);
  double ngroups = (double)DBTR_N_GROUPS(grid.ny), vz = (double)(g.n_views * grid.nz);
  problem_size ps = {(double)np, (double)grid.nz, (double)nv, (double)nv * (double)g.n_views, vz * (double)grid.nx,
                     vz * ngroups};
  size_t es[2] = {4, 8};
  floor_count fc[2][2]; /* [double][separable] */
  for (int dp = 0; dp < 2; dp++)
    for (int sep = 0; sep < 2; sep++) fc[dp][sep] = count_floor(&gm, &ps, sep, (double)es[dp]);
  double bw = strstr(gpu_name, "H200") ? 4.8e12 : 3.35e12;
  printf("floor per iteration (float, separable / per-pixel): %.2f / %.2f GB at %.2f TB/s; %.0f / %.0f G operations "
         "and %.1f / %.1f G conversions\n"
         "  (%.2f candidate pixels per voxel-view, %.1f per 2 x 2 tile, %.1f%% of crossings inside the grid)\n",
         fc[0][1].bytes / 1e9, fc[0][0].bytes / 1e9, bw / 1e12, fc[0][1].ops / 1e9, fc[0][0].ops / 1e9,
         fc[0][1].cvt / 1e9, fc[0][0].cvt / 1e9, gm.cand, gm.tile, 100.0 * gm.inside);

  /* The problem as every client has it, from the engine's session; the backends made here, one
   * mode at a time. */
  dbtr_scan scan = {.geom = g, .quantity = DBTR_QUANTITY_COUNTS, .proj = y, .i0_shape = DBTR_I0_FULL, .i0 = i0};
  dbtr_session_opts so = {.recon = {.subsets = 1, .backend = {.threads = cpu_threads}}, .values_checked = 1,
                          .problem_only = 1};
  dbtr_session *session;
  if (dbtr_session_open(&session, &scan, &grid, &so)) die("ML-EM set-up");
  const dbtr_mlem *m = dbtr_session_mlem(session);
  /* The CPU reference after one iteration, float and double, for the bitwise check. */
  /* A GPU volume of any mode: the widest element is the referee's (double-double). */
  size_t es_max = dbtr_precision_size(DBTR_PREC_DD);
  void *cpu_vol[2] = {NULL, NULL}, *gpu_vol = malloc(nv * es_max), *batch_vol = malloc(nv * es_max);
  double cpu_iter = NAN;
  if (do_cpu)
    for (int p = 0; p < 2; p++) {
      dbtr_backend *b = NULL;
      cpu_vol[p] = malloc(nv * es[p]);
      if (dbtr_backend_create(&b, p ? DBTR_CPU_DOUBLE : DBTR_CPU_FLOAT, &m->prob) || dbtr_mlem_load(m, b, 0.0))
        die("CPU backend");
      t = now();
      if (run_iteration(m, b, cpu_vol[p])) die("CPU iteration");
      if (p == 0) cpu_iter = now() - t;
      dbtr_backend_destroy(&b);
    }
  printf("CPU reference iteration (float): %.3f s\n\n", cpu_iter);
  printf("%-13s %9s %9s %9s %10s %11s %11s %9s %8s %9s %-10s %s\n", "mode", "fwd ms", "back ms", "iter ms", "N iter s",
         "fwd vv/s", "back vv/s", "floor ms", "x floor", "x fast", "projectors", "vs CPU, bitwise");
  double fast_iter = NAN;
  for (int mode = 0; mode < DBTR_MODE_COUNT; mode++) {
    if (!wanted(modes, dbtr_mode_name_of((dbtr_mode)mode))) continue;
    dbtr_backend *b = NULL;
    dbtr_gpu_timing tm;
    if (dbtr_backend_create(&b, (dbtr_mode)mode, &m->prob) || dbtr_mlem_load(m, b, 0.0)) die("GPU backend");
    const char *same = "-";
    dbtr_precision prec = dbtr_mode_precision((dbtr_mode)mode);
    int dp = prec == DBTR_PREC_DOUBLE, dd = prec == DBTR_PREC_DD;
    size_t es_mode = dbtr_precision_size(prec);
    if (do_cpu && (mode == DBTR_MODE_CPU_MATCH || mode == DBTR_MODE_DOUBLE_MATCH)) {
      if (run_iteration(m, b, gpu_vol)) die("GPU iteration");
      same = memcmp(gpu_vol, cpu_vol[dp], nv * es[dp]) == 0 ? "identical" : "DIFFERS";
    }
    if ((batched || gpus > 1) && (dbtr_mlem_load(m, b, 0.0) || run_iteration(m, b, gpu_vol)))
      die("GPU iteration");
    if (dbtr_gpu_benchmark(b, &m->prob, repeats, &tm)) die("GPU benchmark");
    if (mode == DBTR_MODE_FAST) fast_iter = tm.iteration_ms;
    /* The referee's floor is not counted (each of its operations is a sequence of double
     * ones): NaN, printed as such. */
    double fl = dd ? (double)NAN : floor_ms(&fc[dp][tm.separable], dp, bw);
    printf("%-13s %9.2f %9.2f %9.2f %10.3f %11.3g %11.3g %9.2f %8.1f %9.2f %-10s %.0fx, %s\n",
           dbtr_mode_name_of((dbtr_mode)mode), tm.forward_ms, tm.back_ms, tm.iteration_ms,
           iterations * tm.iteration_ms / 1e3, voxel_views / (tm.forward_ms / 1e3), voxel_views / (tm.back_ms / 1e3),
           fl, tm.iteration_ms / fl, tm.iteration_ms / fast_iter, tm.separable ? "separable" : "per-pixel",
           cpu_iter * 1e3 / tm.iteration_ms, same);
    dbtr_problem p2 = m->prob;
    dbtr_gpu_memory mem;
    if (batched) {
      if (dbtr_gpu_memory_of(b, &mem)) die("GPU memory");
      /* The smallest budget, one view's ray records at a time, unless one is given. */
      p2.gpu_memory = budget_gib > 0.0 ? (size_t)(budget_gib * 1073741824.0) : mem.need_min;
      second_run(m, (dbtr_mode)mode, &p2, "batched", &tm, repeats, gpu_vol, batch_vol, nv * es_mode);
    }
    if (gpus > 1) {
      char label[32];
      snprintf(label, sizeof label, "%d GPUs", gpus);
      p2 = m->prob;
      p2.gpus = gpus;
      second_run(m, (dbtr_mode)mode, &p2, label, &tm, repeats, gpu_vol, batch_vol, nv * es_mode);
    }
    dbtr_backend_destroy(&b);
  }
  /* FBP (engine/fbp.h) of the same scan in every mode: the filter on the host, then the mode's
   * back projections (the filtered stack's and the weights'), with the projector's set-up. */
  double *fbp = malloc(nv * sizeof *fbp);
  if (!fbp) die("FBP volume");
  printf("\nFBP, ramp x Hann (docs/fbp.md), %d host threads for the filter:\n%-13s %10s %12s %10s\n",
         dbtr_cpu_threads(cpu_threads), "mode", "filter s", "back s", "total s");
  for (int mode = 0; mode < DBTR_MODE_COUNT; mode++) {
    const dbtr_mode_info *info = dbtr_mode_info_of((dbtr_mode)mode);
    if (info->variant || !wanted(modes, info->name)) continue;
    dbtr_backend_opts bo = {.backend = "gpu", .mode = dbtr_mode_name_of((dbtr_mode)mode), .threads = cpu_threads};
    dbtr_fbp_report rep;
    if (dbtr_fbp_volume(&scan, &grid, &bo, NULL, 0, fbp, &rep)) die("FBP");
    printf("%-13s %10.3f %12.3f %10.3f\n", info->name, rep.filter, rep.back, rep.filter + rep.back);
  }
  free(fbp);
  dbtr_session_close(&session);
  free(cpu_vol[0]);
  free(cpu_vol[1]);
  free(gpu_vol);
  free(batch_vol);
  free(vol);
  free(l);
  free(back);
  free(y);
  free(i0);
  dbtr_geom_free(&g);
  return 0;
}
