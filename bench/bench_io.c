/* bench/bench_io.c: reading a scan and writing a volume, beside the disk's own speed.
 *
 *   bench_io SCAN.h5 [--dir DIR] [--system NAME] [--repeats R]
 *
 * Times R times each (default 3) and prints the best, in MB/s (10^6 bytes, as the issue's
 * numbers), each beside its floor: what plain system calls do with the same bytes on the
 * same disk.
 * - read scan: dbtr_scan_read_guarded, what dbtr recon calls, over the file's size. Floor:
 *   read(2) of the whole file into one buffer. The file is read once before timing, so
 *   both come from the page cache, as they do for a scan that was just written or read.
 * - write TIFF (float32) and write NIfTI (.nii): dbtr_volume_write of the preset's grid
 *   (default thesis, 2304 x 1196 x 45 floats, 496 MB) into DIR (default /tmp). Floor:
 *   write(2) of the same bytes into a new file, then fsync(2) of it, the least that a
 *   durable write can do that way; its two parts are printed apart, since on a slow disk
 *   the fsync is nearly all of it. The writers start the disk on each slice as they go
 *   (dbtr_atomic_written), which can beat that; so the floor of that way is printed too:
 *   the same bytes with write(2), a slice at a time, through io/atomic_file.h's begin,
 *   written and commit. Each file is removed after it is timed.
 * Build the scan with `dbtr phantom --system thesis --phantom breast -o SCAN.h5`. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/atomic_file.h"
#include "io/scan.h"
#include "io/volume.h"
#include "phantoms/systems.h"
#include "recon/error.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double mb_per_s(size_t bytes, double seconds) { return (double)bytes / 1e6 / seconds; }

/* The whole of fd into buf (n bytes) with read(2); 0 on success. */
static int read_all(int fd, char *buf, size_t n) {
  while (n > 0) {
    ssize_t got = read(fd, buf, n);
    if (got <= 0) return -1;
    buf += got;
    n -= (size_t)got;
  }
  return 0;
}

static int write_all(int fd, const char *buf, size_t n) {
  while (n > 0) {
    ssize_t put = write(fd, buf, n);
    if (put <= 0) return -1;
    buf += put;
    n -= (size_t)put;
  }
  return 0;
}

/* The floor of a read: the file into memory with read(2). Seconds, or -1. */
static double floor_read(const char *path, size_t bytes) {
  char *buf = malloc(bytes);
  int fd = open(path, O_RDONLY);
  double t = now();
  int bad = !buf || fd < 0 || read_all(fd, buf, bytes);
  t = now() - t;
  if (fd >= 0) close(fd);
  free(buf);
  return bad ? -1.0 : t;
}

/* The floor of a durable write: write(2) into a new file, then fsync(2); the two parts in
 * t[0] and t[1]. 0, or -1 with errno. */
static int floor_write(const char *path, const void *data, size_t bytes, double t[2]) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return -1;
  double t0 = now();
  int bad = write_all(fd, data, bytes);
  double t1 = now();
  bad = bad || fsync(fd) != 0;
  t[0] = t1 - t0;
  t[1] = now() - t1;
  bad = close(fd) != 0 || bad;
  unlink(path);
  return bad ? -1 : 0;
}

/* The floor of dbtr's own durable write: the bytes with write(2) into an atomic file, the
 * disk started after each slice, then the commit (fsync and rename). Seconds, or -1. */
static double floor_atomic(const char *path, const char *data, size_t bytes, size_t slice) {
  dbtr_atomic_file f;
  double t = now();
  if (dbtr_atomic_begin(&f, path)) return -1.0;
  int bad = 0;
  for (size_t at = 0; at < bytes && !bad; at += slice) {
    bad = write_all(f.fd, data + at, bytes - at < slice ? bytes - at : slice);
    dbtr_atomic_written(&f);
  }
  if (bad) dbtr_atomic_abort(&f);
  bad = bad || dbtr_atomic_commit(&f);
  t = now() - t;
  unlink(path);
  return bad ? -1.0 : t;
}

typedef struct {
  const char *scan, *dir, *system;
  int repeats;
} options;

static int parse(int argc, char **argv, options *o) {
  *o = (options){NULL, "/tmp", "thesis", 3};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--dir") && i + 1 < argc) o->dir = argv[++i];
    else if (!strcmp(argv[i], "--system") && i + 1 < argc) o->system = argv[++i];
    else if (!strcmp(argv[i], "--repeats") && i + 1 < argc) o->repeats = atoi(argv[++i]);
    else if (argv[i][0] != '-' && !o->scan) o->scan = argv[i];
    else o->scan = NULL, i = argc;
  }
  if (o->scan && o->repeats >= 1) return 0;
  fprintf(stderr, "usage: bench_io SCAN.h5 [--dir DIR] [--system NAME] [--repeats R]\n");
  return 2;
}

static int bench_read(const options *o) {
  struct stat st;
  if (stat(o->scan, &st) != 0) {
    fprintf(stderr, "bench_io: %s: %s\n", o->scan, strerror(errno));
    return 1;
  }
  size_t bytes = (size_t)st.st_size;
  double best = 1e30, best_floor = 1e30;
  floor_read(o->scan, bytes); /* into the page cache, for both */
  for (int r = 0; r < o->repeats; r++) {
    double f = floor_read(o->scan, bytes);
    dbtr_scan s;
    double t = now();
    int rc = dbtr_scan_read_guarded(&s, o->scan, 60);
    t = now() - t;
    dbtr_scan_free(&s);
    if (rc || f < 0) {
      fprintf(stderr, "bench_io: %s: %s\n", o->scan, rc ? dbtr_errmsg() : strerror(errno));
      return 1;
    }
    best = t < best ? t : best;
    best_floor = f < best_floor ? f : best_floor;
  }
  printf("%-12s %7.1f MB  %6.3f s  %7.0f MB/s   floor read(2) %6.3f s  %7.0f MB/s\n", "read scan", (double)bytes / 1e6,
         best, mb_per_s(bytes, best), best_floor, mb_per_s(bytes, best_floor));
  return 0;
}

/* Best of R: dbtr_volume_write of vol into DIR/bench_io.EXT, and the floor beside it. */
static int bench_write(const options *o, const char *ext, const dbtr_grid *g, const float *vol) {
  char path[4096], floor_path[4096];
  snprintf(path, sizeof path, "%s/bench_io.%s", o->dir, ext);
  snprintf(floor_path, sizeof floor_path, "%s/bench_io.floor", o->dir);
  size_t slice = g->nx * g->ny * sizeof(float), bytes = slice * g->nz;
  double best = 1e30, fl[2] = {1e30, 1e30}, fa = 1e30;
  for (int r = 0; r < o->repeats; r++) {
    double f[2], a = floor_atomic(floor_path, (const char *)vol, bytes, slice);
    if (a < 0 || floor_write(floor_path, vol, bytes, f) != 0) {
      fprintf(stderr, "bench_io: %s: %s\n", floor_path, a < 0 ? dbtr_errmsg() : strerror(errno));
      return 1;
    }
    if (f[0] + f[1] < fl[0] + fl[1]) fl[0] = f[0], fl[1] = f[1];
    fa = a < fa ? a : fa;
    double t = now();
    int rc = dbtr_volume_write(path, g, vol, NULL);
    t = now() - t;
    unlink(path);
    if (rc) {
      fprintf(stderr, "bench_io: %s\n", dbtr_errmsg());
      return 1;
    }
    best = t < best ? t : best;
  }
  printf("write %-6s %7.1f MB  %6.3f s  %7.0f MB/s   floor write(2)+fsync %5.3f+%5.3f s  %7.0f MB/s   "
         "with writeback %5.3f s  %7.0f MB/s\n",
         ext, (double)bytes / 1e6, best, mb_per_s(bytes, best), fl[0], fl[1], mb_per_s(bytes, fl[0] + fl[1]), fa,
         mb_per_s(bytes, fa));
  return 0;
}

int main(int argc, char **argv) {
  options o;
  if (parse(argc, argv, &o)) return 2;
  const dbtr_system *sys = dbtr_system_find(o.system);
  if (!sys) {
    fprintf(stderr, "bench_io: unknown system %s\n", o.system);
    return 2;
  }
  dbtr_scan_skip_exit_cleanup();
  if (bench_read(&o)) return 1;
  const dbtr_grid *g = &sys->grid;
  size_t n = g->nx * g->ny * g->nz;
  float *vol = malloc(n * sizeof(float));
  if (!vol) return 1;
  /* Attenuation-like values that differ from voxel to voxel, so no layer can take a
   * shortcut over zeros; any values time the same. */
  for (size_t i = 0; i < n; i++) vol[i] = 0.02f + 1e-6f * (float)(i % 4096);
  dbtr_volume_type nii;
  int rc = bench_write(&o, "tif", g, vol);
  if (!rc && dbtr_volume_type_of("x.nii", &nii) == 0) rc = bench_write(&o, "nii", g, vol);
  free(vol);
  return rc;
}
