/* io/checkpoint.c: ML-EM checkpoints. */
#include "io/checkpoint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/atomic_file.h"
#include "recon/error.h"

static const char magic[8] = {'D', 'B', 'T', 'R', 'C', 'K', 'P', 'T'};
enum { VERSION = 1, N_FIELDS = 8 };

static void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint64_t get64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static int volume_bytes(const dbtr_checkpoint_info *in, size_t *bytes, const char *path) {
  if (in->precision > 1) return dbtr_err(DBTR_EFORMAT, "%s: unknown precision %llu", path, (unsigned long long)in->precision);
  if (in->nx == 0 || in->ny == 0 || in->nz == 0 || in->nx > (1u << 30) || in->ny > (1u << 30) || in->nz > (1u << 30))
    return dbtr_err(DBTR_EFORMAT, "%s: volume dims %llu x %llu x %llu out of range", path, (unsigned long long)in->nx,
                    (unsigned long long)in->ny, (unsigned long long)in->nz);
  return dbtr_size_mul3((size_t)in->nx * (size_t)in->ny, (size_t)in->nz, in->precision ? 8 : 4, bytes, path);
}

int dbtr_checkpoint_write(const char *path, const dbtr_checkpoint_info *in, const void *vol) {
  size_t bytes;
  int rc = volume_bytes(in, &bytes, path);
  if (rc) return rc;
  unsigned char head[8 + 8 + 8 * N_FIELDS + 64];
  memcpy(head, magic, 8);
  put64(head + 8, VERSION);
  const uint64_t f[N_FIELDS] = {in->nx, in->ny, in->nz, in->n_views, in->n_subsets, in->algo, in->precision, in->iterations};
  for (int i = 0; i < N_FIELDS; i++) put64(head + 16 + 8 * i, f[i]);
  memset(head + 16 + 8 * N_FIELDS, 0, 64);
  memcpy(head + 16 + 8 * N_FIELDS, in->backend, strnlen(in->backend, 63));
  dbtr_atomic_file af;
  if ((rc = dbtr_atomic_begin(&af, path))) return rc;
  FILE *fp = fopen(af.tmp, "wb");
  if (!fp) {
    dbtr_atomic_abort(&af);
    return dbtr_err(DBTR_EIO, "%s: cannot write: %s", path, strerror(errno));
  }
  /* The volume is stored in the host's byte order; dbtr runs on little-endian hosts only
   * (x86-64, aarch64), which the header's own encoding states. */
  int ok = fwrite(head, 1, sizeof head, fp) == sizeof head && fwrite(vol, 1, bytes, fp) == bytes;
  if (fclose(fp) != 0) ok = 0;
  if (!ok) {
    dbtr_atomic_abort(&af);
    return dbtr_err(DBTR_EIO, "%s: write failed (disk full?)", path);
  }
  return dbtr_atomic_commit(&af);
}

int dbtr_checkpoint_read(const char *path, dbtr_checkpoint_info *out, void **vol) {
  memset(out, 0, sizeof *out);
  *vol = NULL;
  FILE *fp = fopen(path, "rb");
  if (!fp) return dbtr_err(DBTR_EIO, "%s: cannot open: %s", path, strerror(errno));
  unsigned char head[8 + 8 + 8 * N_FIELDS + 64];
  int rc = 0;
  size_t bytes = 0;
  if (fread(head, 1, sizeof head, fp) != sizeof head || memcmp(head, magic, 8) != 0) {
    rc = dbtr_err(DBTR_EFORMAT, "%s: not a dbtr checkpoint", path);
  } else if (get64(head + 8) != VERSION) {
    rc = dbtr_err(DBTR_EFORMAT, "%s: checkpoint version %llu (this dbtr reads version %d)", path,
                  (unsigned long long)get64(head + 8), VERSION);
  } else {
    uint64_t *f[N_FIELDS] = {&out->nx, &out->ny, &out->nz, &out->n_views, &out->n_subsets, &out->algo, &out->precision, &out->iterations};
    for (int i = 0; i < N_FIELDS; i++) *f[i] = get64(head + 16 + 8 * i);
    memcpy(out->backend, head + 16 + 8 * N_FIELDS, 63);
    rc = volume_bytes(out, &bytes, path);
  }
  if (!rc) rc = dbtr_alloc(vol, bytes, 1, path);
  if (!rc && fread(*vol, 1, bytes, fp) != bytes) rc = dbtr_err(DBTR_EFORMAT, "%s: truncated checkpoint", path);
  if (!rc && fgetc(fp) != EOF) rc = dbtr_err(DBTR_EFORMAT, "%s: trailing bytes after the volume", path);
  fclose(fp);
  if (rc) {
    free(*vol);
    *vol = NULL;
  }
  return rc;
}
