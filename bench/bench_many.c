/* bench/bench_many.c: many scans (engine/batch.h, docs/scale-out.md) on 1 and N GPUs, beside the
 * floors it measures itself on the same machine.
 *
 *   bench_many SCAN.h5 [--scans N] [--iterations I] [--mode M] [--dir DIR] [--gpus 1,4]
 *                      [--threads 16,64]
 *
 * From SCAN.h5 (counts; `dbtr phantom --system thesis --phantom breast -o SCAN.h5`) it writes N
 * scans (default 16) into DIR/in (default /tmp/bench_many), each with the counts shifted by its
 * index, so that every scan's data differ; then prints, per scan:
 * - the floors: reading a scan (dbtr_scan_read of each, from the page cache, as a trial's
 *   freshly simulated scans are), writing a volume (dbtr_volume_write of the grid's float32
 *   volume, whose commit fsyncs it: the disk's part), and the GPU's iterations of one scan (I
 *   iterations of mode M on a session already open, no transfers);
 * - the data set-up of one scan (a session's open, its data part, and a re-arm with another
 *   scan's data) at each thread count of --threads (default 16 and the machine's);
 * - for each GPU count of --gpus (default 1 and all): the many-scan run's wall time, seconds a
 *   scan, scans per hour, and the ratio to the larger of the read and write floors, and
 *   whether every volume is byte for byte the first run's.
 * Each run's outputs go to DIR/out<G>, removed before the run. */
#include <dirent.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/batch.h"
#include "engine/session.h"
#include "io/scan.h"
#include "io/volume.h"
#include "kernels/gpu.h"
#include "recon/error.h"

typedef struct {
  const char *scan, *dir, *mode, *gpus, *threads;
  int n, iterations;
} options;

static double now(void) { return omp_get_wtime(); }

static void die(const char *what) {
  fprintf(stderr, "bench_many: %s: %s\n", what, dbtr_errmsg());
  exit(1);
}

static void path_of(char *out, size_t len, const char *dir, const char *sub, int i, const char *ext) {
  snprintf(out, len, "%s/%s%d%s", dir, sub, i, ext);
}

/* The comma-separated whole numbers of s into v (at most max); how many. */
static int list_of(const char *s, int *v, int max) {
  int n = 0;
  for (char *end; *s && n < max; s = *end ? end + 1 : end) v[n++] = (int)strtol(s, &end, 10);
  return n;
}

static void rm_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2]))) continue;
    char p[4096 + 512];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    unlink(p);
  }
  closedir(d);
  rmdir(dir);
}

/* Whole files equal, byte for byte. */
static int same_file(const char *a, const char *b) {
  FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
  int same = fa && fb;
  char x[1 << 16], y[1 << 16];
  while (same) {
    size_t na = fread(x, 1, sizeof x, fa), nb = fread(y, 1, sizeof y, fb);
    same = na == nb && !memcmp(x, y, na);
    if (na == 0) break;
  }
  if (fa) fclose(fa);
  if (fb) fclose(fb);
  return same;
}

static int parse(int argc, char **argv, options *o) {
  *o = (options){.dir = "/tmp/bench_many", .mode = "fast", .n = 16, .iterations = 6};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--scans") && i + 1 < argc) o->n = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) o->iterations = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--mode") && i + 1 < argc) o->mode = argv[++i];
    else if (!strcmp(argv[i], "--dir") && i + 1 < argc) o->dir = argv[++i];
    else if (!strcmp(argv[i], "--gpus") && i + 1 < argc) o->gpus = argv[++i];
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) o->threads = argv[++i];
    else if (argv[i][0] != '-' && !o->scan) o->scan = argv[i];
    else return fprintf(stderr, "bench_many: unknown argument %s\n", argv[i]), 1;
  }
  if (!o->scan || o->n < 2 || o->iterations < 1) {
    fprintf(stderr, "usage: bench_many SCAN.h5 [--scans N>=2] [--iterations I] [--mode M] [--dir DIR] "
                    "[--gpus 1,4] [--threads 16,64]\n");
    return 1;
  }
  return 0;
}

/* The data set-up at `threads` host threads: a session opened on scan a, its data part, and
 * its re-arm with scan b. */
static void setup_at(int threads, const dbtr_scan *a, const dbtr_scan *b, const dbtr_grid *g, const options *o,
                     int gpu) {
  omp_set_num_threads(threads);
  dbtr_session_opts so = {.recon = {.backend = {.backend = gpu ? "gpu" : "cpu", .mode = o->mode, .threads = threads}},
                          .values_checked = 1};
  dbtr_session *s;
  double t = now();
  if (dbtr_session_open(&s, a, g, &so)) die("session");
  double open_s = now() - t;
  const dbtr_session_setup su = *dbtr_session_setup_times(s);
  t = now();
  if (dbtr_session_rearm(s, b)) die("re-arm");
  double rearm = now() - t;
  dbtr_session_close(&s);
  printf("data set-up at %3d threads: open %.3f s (checks %.3f, data %.3f, backend %.3f, start %.3f); re-arm with "
         "the next scan %.3f s\n",
         threads, open_s, su.checks, su.data, su.backend, su.start, rearm);
}

int main(int argc, char **argv) {
  options o;
  if (parse(argc, argv, &o)) return 2;
  int n_gpu = dbtr_gpu_count();
  char name[256];
  if (!dbtr_gpu_available(name, sizeof name)) snprintf(name, sizeof name, "none");
  printf("bench_many: %d scans from %s, %d iterations of %s; %d GPU%s (%s), %d host threads\n", o.n, o.scan,
         o.iterations, o.mode, n_gpu, n_gpu == 1 ? "" : "s", name, omp_get_num_procs());
  dbtr_scan base;
  if (dbtr_scan_read(&base, o.scan)) die(o.scan);
  if (base.quantity != DBTR_QUANTITY_COUNTS || !base.has_grid) {
    fprintf(stderr, "bench_many: %s: counts with a /volume grid, please (dbtr phantom makes one)\n", o.scan);
    return 2;
  }
  size_t n_proj = base.geom.n_views * base.geom.n_rows * base.geom.n_cols, n_vox;
  if (dbtr_grid_count(&base.grid, &n_vox)) die("grid");
  char in_dir[4096], path[4200];
  snprintf(in_dir, sizeof in_dir, "%s/in", o.dir);
  mkdir(o.dir, 0755);
  mkdir(in_dir, 0755);
  double *proj0 = base.proj, *shifted = malloc(n_proj * sizeof *shifted);
  if (!shifted) die("memory");
  dbtr_scan_write_opts wo = {.dtype = DBTR_DTYPE_FLOAT32};
  dbtr_batch_item *items = calloc((size_t)o.n, sizeof *items);
  char (*scans)[4200] = calloc((size_t)o.n, sizeof *scans), (*outs)[4200] = calloc((size_t)o.n, sizeof *outs);
  if (!items || !scans || !outs) die("memory");
  for (int i = 0; i < o.n; i++) {
    path_of(scans[i], sizeof scans[i], in_dir, "scan", i, ".h5");
    struct stat st;
    if (stat(scans[i], &st) != 0) {
      for (size_t p = 0; p < n_proj; p++) shifted[p] = proj0[p] + (double)i;
      base.proj = shifted;
      if (dbtr_scan_write(&base, scans[i], &wo)) die(scans[i]);
      base.proj = proj0;
    }
  }
  free(shifted);

  /* The floors. Reading: every scan once untimed (into the page cache), then timed. */
  dbtr_scan s1, s2;
  for (int i = 0; i < o.n; i++) {
    if (dbtr_scan_read(&s1, scans[i])) die(scans[i]);
    dbtr_scan_free(&s1);
  }
  double t = now();
  for (int i = 0; i < o.n; i++) {
    if (dbtr_scan_read(&s1, scans[i])) die(scans[i]);
    dbtr_scan_free(&s1);
  }
  double read_floor = (now() - t) / o.n;
  float *vol = calloc(n_vox, sizeof *vol);
  if (!vol) die("memory");
  for (size_t i = 0; i < n_vox; i++) vol[i] = 0.01f * (float)(i % 97);
  path_of(path, sizeof path, o.dir, "floor", 0, ".tif");
  double write_floor = 1e30;
  for (int r = 0; r < 3; r++) {
    unlink(path);
    t = now();
    if (dbtr_volume_write(path, &base.grid, vol, NULL)) die(path);
    double w = now() - t;
    write_floor = w < write_floor ? w : write_floor;
  }
  unlink(path);
  free(vol);
  double gpu_iters = 0.0;
  if (dbtr_scan_read(&s1, scans[0]) || dbtr_scan_read(&s2, scans[1])) die("scans");
  if (n_gpu > 0) {
    dbtr_session_opts so = {.recon = {.backend = {.backend = "gpu", .mode = o.mode}}, .values_checked = 1};
    dbtr_session *s;
    if (dbtr_session_open(&s, &s1, &base.grid, &so)) die("session");
    dbtr_session_run_opts ro = {.first = 1, .last = (size_t)o.iterations};
    if (dbtr_session_run(s, &ro)) die("iterations"); /* warm-up */
    t = now();
    if (dbtr_session_run(s, &ro)) die("iterations");
    gpu_iters = now() - t;
    dbtr_session_close(&s);
  }
  double io_floor = read_floor > write_floor ? read_floor : write_floor;
  printf("floors a scan: read %.3f s (%.0f MB/s), write with fsync %.3f s (%.0f MB/s), the GPU's %d iterations "
         "%.3f s\n",
         read_floor, 4.0 * (double)n_proj / read_floor / 1e6, write_floor, 4.0 * (double)n_vox / write_floor / 1e6,
         o.iterations, gpu_iters);
  int th[4], nt = o.threads ? list_of(o.threads, th, 4) : 0;
  if (!nt) {
    th[0] = 16;
    th[1] = omp_get_num_procs();
    nt = th[1] > 16 ? 2 : 1;
  }
  for (int i = 0; i < nt; i++) setup_at(th[i], &s1, &s2, &base.grid, &o, n_gpu > 0);
  omp_set_num_threads(omp_get_num_procs());
  dbtr_scan_free(&s1);
  dbtr_scan_free(&s2);

  int g[8], ng = o.gpus ? list_of(o.gpus, g, 8) : 0;
  if (!ng) {
    g[0] = 1;
    g[1] = n_gpu;
    ng = n_gpu > 1 ? 2 : 1;
  }
  char first_out[4096] = "";
  for (int k = 0; k < ng; k++) {
    char out_dir[4096];
    snprintf(out_dir, sizeof out_dir, "%s/out%d", o.dir, g[k]);
    rm_dir(out_dir);
    mkdir(out_dir, 0755);
    for (int i = 0; i < o.n; i++) {
      path_of(outs[i], sizeof outs[i], out_dir, "scan", i, ".tif");
      items[i] = (dbtr_batch_item){scans[i], outs[i]};
    }
    dbtr_batch_opts bo = {.recon = {.backend = {.backend = n_gpu ? "gpu" : "cpu", .mode = o.mode, .gpus = g[k]}},
                          .iterations = (size_t)o.iterations, .format = {.format = DBTR_TIFF_FLOAT32}};
    dbtr_batch_summary sum;
    t = now();
    if (dbtr_batch_run(items, (size_t)o.n, &bo, &sum)) die("the run");
    double wall = now() - t, per = wall / o.n;
    int same = 1;
    for (int i = 0; i < o.n && first_out[0]; i++) {
      char a[4300];
      snprintf(a, sizeof a, "%s/scan%d.tif", first_out, i);
      same &= same_file(a, outs[i]);
    }
    printf("%d %s worker%s: %d scans in %.2f s: %.3f s a scan, %.0f scans/h, %.2fx the I/O floor (%.3f s)%s; "
           "%zu failed%s\n",
           sum.workers, sum.on_gpu ? "GPU" : "CPU", sum.workers == 1 ? "" : "s", o.n, wall, per, 3600.0 / per,
           per / io_floor, io_floor, sum.on_gpu ? "" : " (CPU)", sum.failed,
           first_out[0] ? (same ? "; every volume bitwise the first run's" : "; volumes DIFFER from the first run's")
                        : "");
    if (!first_out[0]) snprintf(first_out, sizeof first_out, "%s", out_dir);
  }
  free(items);
  free(scans);
  free(outs);
  dbtr_scan_free(&base);
  return 0;
}
