/* io/checkpoint.c: ML-EM checkpoints: the volume, what it belongs to, and a checksum. */
#include "io/checkpoint.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "io/atomic_file.h"
#include "recon/error.h"

static const char magic[8] = {'D', 'B', 'T', 'R', 'C', 'K', 'P', 'T'};
/* Version 1 had no checksum and no identity beyond the sizes; it is refused by name. */
enum { VERSION = 2, N_FIELDS = 9, N_DOUBLES = 6, ARITH_LEN = 64, BACKEND_LEN = 64 };
enum { HEAD_BYTES = 8 + 8 + 8 * N_FIELDS + 8 * N_DOUBLES + ARITH_LEN + BACKEND_LEN };

static void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint64_t get64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}
static uint64_t bits_of(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}
static double double_of(uint64_t u) {
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

/* crc32_z takes size_t lengths, so arrays past 4 GiB need no splitting. */
static uLong crc_of(uLong crc, const void *p, size_t bytes) { return crc32_z(crc, p, bytes); }

uint64_t dbtr_checkpoint_scan_crc(const dbtr_scan *s) {
  const dbtr_geom *g = &s->geom;
  size_t n_views = g->n_views, n_proj = n_views * g->n_rows * g->n_cols;
  uint32_t q = (uint32_t)s->quantity, shape = (uint32_t)s->i0_shape;
  uLong c = crc32_z(0L, Z_NULL, 0);
  c = crc_of(c, &q, sizeof q);
  c = crc_of(c, &shape, sizeof shape);
  c = crc_of(c, s->proj, n_proj * sizeof *s->proj);
  if (s->i0) c = crc_of(c, s->i0, dbtr_scan_i0_count(s) * sizeof *s->i0);
  const double *vec[4] = {g->source, g->detector_center, g->detector_u, g->detector_v};
  for (int i = 0; i < 4; i++) c = crc_of(c, vec[i], 3 * n_views * sizeof(double));
  return (uint64_t)c;
}

/* The paths of one bitwise class (recon/modes.def: the CPU reference, the match modes, the
 * referee's CPU and GPU) give the same bits, so a checkpoint of one goes on bitwise on the
 * other: the arithmetic is the class's, "reference float" for the class of cpu-float. Every
 * other GPU mode goes on bitwise only on itself. */
static void arithmetic_of(const dbtr_backend *b, char *out, size_t cap) {
  int cls = dbtr_mode_class(b->mode);
  if (cls >= 0)
    snprintf(out, cap, "reference %s", dbtr_precision_name(dbtr_mode_precision((dbtr_mode)cls)));
  else
    snprintf(out, cap, "%s", b->name);
}

void dbtr_checkpoint_identify(dbtr_checkpoint_info *ci, const dbtr_scan *scan, const dbtr_grid *grid,
                              size_t n_subsets, dbtr_algo algo, const dbtr_backend *b) {
  memset(ci, 0, sizeof *ci);
  ci->nx = grid->nx, ci->ny = grid->ny, ci->nz = grid->nz;
  ci->n_views = scan->geom.n_views;
  ci->n_subsets = n_subsets;
  ci->algo = (uint64_t)algo;
  ci->precision = (uint64_t)b->precision;
  ci->scan_crc = dbtr_checkpoint_scan_crc(scan);
  const double v[3] = {grid->dx, grid->dy, grid->dz};
  memcpy(ci->voxel, v, sizeof v);
  memcpy(ci->origin, grid->origin, sizeof ci->origin);
  arithmetic_of(b, ci->arithmetic, sizeof ci->arithmetic);
  snprintf(ci->backend, sizeof ci->backend, "%s", b->name);
}

int dbtr_checkpoint_match(const char *path, const dbtr_checkpoint_info *h, const dbtr_checkpoint_info *w) {
  if (h->nx != w->nx || h->ny != w->ny || h->nz != w->nz || h->n_views != w->n_views)
    return dbtr_err(DBTR_EINVAL, "%s: the checkpoint is of a %llu x %llu x %llu volume and %llu views, not this run's",
                    path, (unsigned long long)h->nx, (unsigned long long)h->ny, (unsigned long long)h->nz,
                    (unsigned long long)h->n_views);
  if (memcmp(h->voxel, w->voxel, sizeof h->voxel) || memcmp(h->origin, w->origin, sizeof h->origin))
    return dbtr_err(DBTR_EINVAL, "%s: the checkpoint's grid has voxel size %g,%g,%g mm and origin %g,%g,%g mm; this "
                    "run's has %g,%g,%g and %g,%g,%g (give the same --voxel and --origin)",
                    path, h->voxel[0], h->voxel[1], h->voxel[2], h->origin[0], h->origin[1], h->origin[2], w->voxel[0],
                    w->voxel[1], w->voxel[2], w->origin[0], w->origin[1], w->origin[2]);
  if (h->scan_crc != w->scan_crc)
    return dbtr_err(DBTR_EINVAL, "%s: the checkpoint was written for another scan (its projections, i0 or geometry "
                    "differ from this one's)", path);
  if (h->n_subsets != w->n_subsets || h->algo != w->algo)
    return dbtr_err(DBTR_EINVAL, "%s: written with %llu subsets and the %s algorithm; give the same", path,
                    (unsigned long long)h->n_subsets, h->algo ? "emission" : "transmission");
  if (h->precision != w->precision || strcmp(h->arithmetic, w->arithmetic))
    return dbtr_err(DBTR_EINVAL, "%s: written by %s (arithmetic: %s); this run computes on %s (%s), which would not "
                    "continue it bitwise (give the same --mode/--precision)",
                    path, h->backend, h->arithmetic, w->backend, w->arithmetic);
  return 0;
}

static int volume_bytes(const dbtr_checkpoint_info *in, size_t *bytes, const char *path) {
  if (in->precision > DBTR_PREC_DD) return dbtr_err(DBTR_EFORMAT, "%s: unknown precision %llu", path, (unsigned long long)in->precision);
  if (in->nx == 0 || in->ny == 0 || in->nz == 0 || in->nx > (1u << 30) || in->ny > (1u << 30) || in->nz > (1u << 30))
    return dbtr_err(DBTR_EFORMAT, "%s: volume dims %llu x %llu x %llu out of range", path, (unsigned long long)in->nx,
                    (unsigned long long)in->ny, (unsigned long long)in->nz);
  return dbtr_size_mul3((size_t)in->nx * (size_t)in->ny, (size_t)in->nz, dbtr_precision_size((dbtr_precision)in->precision),
                        bytes, path);
}

static void encode(unsigned char *head, const dbtr_checkpoint_info *in) {
  memcpy(head, magic, 8);
  put64(head + 8, VERSION);
  const uint64_t f[N_FIELDS] = {in->nx,   in->ny,        in->nz,         in->n_views, in->n_subsets,
                                in->algo, in->precision, in->iterations, in->scan_crc};
  unsigned char *p = head + 16;
  for (int i = 0; i < N_FIELDS; i++, p += 8) put64(p, f[i]);
  const double d[N_DOUBLES] = {in->voxel[0], in->voxel[1], in->voxel[2], in->origin[0], in->origin[1], in->origin[2]};
  for (int i = 0; i < N_DOUBLES; i++, p += 8) put64(p, bits_of(d[i]));
  memset(p, 0, ARITH_LEN + BACKEND_LEN);
  memcpy(p, in->arithmetic, strnlen(in->arithmetic, ARITH_LEN - 1));
  memcpy(p + ARITH_LEN, in->backend, strnlen(in->backend, BACKEND_LEN - 1));
}

/* Strings from the file are shown to the user: sanitised, so a damaged or hostile file
 * cannot send control sequences to the terminal. */
static void copy_printable(char *dst, const unsigned char *src, size_t cap) {
  memcpy(dst, src, cap - 1);
  dst[cap - 1] = 0;
  dbtr_sanitize(dst);
}

static void decode(const unsigned char *head, dbtr_checkpoint_info *out) {
  uint64_t *f[N_FIELDS] = {&out->nx,   &out->ny,        &out->nz,         &out->n_views, &out->n_subsets,
                           &out->algo, &out->precision, &out->iterations, &out->scan_crc};
  const unsigned char *p = head + 16;
  for (int i = 0; i < N_FIELDS; i++, p += 8) *f[i] = get64(p);
  double *d[N_DOUBLES] = {&out->voxel[0], &out->voxel[1], &out->voxel[2], &out->origin[0], &out->origin[1], &out->origin[2]};
  for (int i = 0; i < N_DOUBLES; i++, p += 8) *d[i] = double_of(get64(p));
  copy_printable(out->arithmetic, p, ARITH_LEN);
  copy_printable(out->backend, p + ARITH_LEN, BACKEND_LEN);
}

int dbtr_checkpoint_write(const char *path, const dbtr_checkpoint_info *in, const void *vol) {
  size_t bytes;
  int rc = volume_bytes(in, &bytes, path);
  if (rc) return rc;
  unsigned char head[HEAD_BYTES], tail[8];
  encode(head, in);
  put64(tail, (uint64_t)crc_of(crc_of(crc32_z(0L, Z_NULL, 0), head, sizeof head), vol, bytes));
  dbtr_atomic_file af;
  if ((rc = dbtr_atomic_begin(&af, path))) return rc;
  FILE *fp = fopen(af.tmp, "wb");
  if (!fp) {
    dbtr_atomic_abort(&af);
    return dbtr_err(DBTR_EIO, "%s: cannot write: %s", path, strerror(errno));
  }
  /* The volume is stored in the host's byte order; dbtr runs on little-endian hosts only
   * (x86-64, aarch64), which the header's own encoding states. */
  int ok = fwrite(head, 1, sizeof head, fp) == sizeof head && fwrite(vol, 1, bytes, fp) == bytes &&
           fwrite(tail, 1, sizeof tail, fp) == sizeof tail;
  if (fclose(fp) != 0) ok = 0;
  if (!ok) {
    dbtr_atomic_abort(&af);
    return dbtr_err(DBTR_EIO, "%s: write failed (disk full?)", path);
  }
  return dbtr_atomic_commit(&af);
}

/* ML-EM keeps every voxel finite and non-negative (the transmission update clips at 0, the
 * emission update multiplies by non-negative ratios): anything else is damage. */
static int check_volume(const char *path, const void *vol, const dbtr_checkpoint_info *in) {
  size_t n = (size_t)(in->nx * in->ny * in->nz);
  for (size_t i = 0; i < n; i++) {
    /* A double-double's value has hi's sign, and is finite where both parts are. */
    double v = in->precision == DBTR_PREC_DD       ? ((const double *)vol)[2 * i]
               : in->precision == DBTR_PREC_DOUBLE ? ((const double *)vol)[i]
                                                   : (double)((const float *)vol)[i];
    double lo = in->precision == DBTR_PREC_DD ? ((const double *)vol)[2 * i + 1] : 0.0;
    if (!(v >= 0.0) || isinf(v) || !isfinite(lo))
      return in->precision == DBTR_PREC_DD
                 ? dbtr_err(DBTR_EFORMAT, "%s: voxel %zu holds %g + %g; a checkpoint volume is finite and non-negative",
                            path, i, v, lo)
                 : dbtr_err(DBTR_EFORMAT, "%s: voxel %zu holds %g; a checkpoint volume is finite and non-negative", path,
                            i, v);
  }
  return 0;
}

static int read_body(FILE *fp, const char *path, dbtr_checkpoint_info *out, void **vol) {
  unsigned char head[HEAD_BYTES], tail[8];
  size_t bytes = 0;
  size_t got = fread(head, 1, sizeof head, fp);
  if (got < 8 || memcmp(head, magic, 8) != 0) return dbtr_err(DBTR_EFORMAT, "%s: not a dbtr checkpoint", path);
  /* Its magic says what it is: a file cut inside the header is a truncated checkpoint. */
  if (got != sizeof head)
    return dbtr_err(DBTR_EFORMAT, "%s: truncated checkpoint: %zu bytes, where its header alone has %d", path, got,
                    (int)HEAD_BYTES);
  if (get64(head + 8) != VERSION)
    return dbtr_err(DBTR_EFORMAT, "%s: checkpoint version %llu (this dbtr reads version %d)", path,
                    (unsigned long long)get64(head + 8), VERSION);
  decode(head, out);
  int rc = volume_bytes(out, &bytes, path);
  /* The size the header claims is checked against the file before it is allocated, so a
   * damaged header cannot ask for terabytes. */
  struct stat st;
  if (!rc && (fstat(fileno(fp), &st) != 0 || (uint64_t)st.st_size != (uint64_t)HEAD_BYTES + bytes + sizeof tail))
    rc = dbtr_err(DBTR_EFORMAT, "%s: %lld bytes; its header describes a file of %llu bytes (truncated or damaged)",
                  path, (long long)st.st_size, (unsigned long long)HEAD_BYTES + (unsigned long long)bytes + 8ULL);
  if (!rc) rc = dbtr_alloc(vol, bytes, 1, path);
  if (rc) return rc;
  if (fread(*vol, 1, bytes, fp) != bytes || fread(tail, 1, sizeof tail, fp) != sizeof tail)
    return dbtr_err(DBTR_EFORMAT, "%s: truncated checkpoint", path);
  if (fgetc(fp) != EOF) return dbtr_err(DBTR_EFORMAT, "%s: trailing bytes after the checksum", path);
  if (get64(tail) != (uint64_t)crc_of(crc_of(crc32_z(0L, Z_NULL, 0), head, sizeof head), *vol, bytes))
    return dbtr_err(DBTR_EFORMAT, "%s: damaged: its CRC-32 does not match its contents", path);
  return check_volume(path, *vol, out);
}

int dbtr_checkpoint_read(const char *path, dbtr_checkpoint_info *out, void **vol) {
  memset(out, 0, sizeof *out);
  *vol = NULL;
  int rc = dbtr_input_check(path);
  if (rc) return rc;
  FILE *fp = fopen(path, "rb");
  if (!fp) return dbtr_err(DBTR_EIO, "%s: cannot open: %s", path, strerror(errno));
  rc = read_body(fp, path, out, vol);
  fclose(fp);
  if (rc) {
    free(*vol);
    *vol = NULL;
  }
  return rc;
}
