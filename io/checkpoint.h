/* io/checkpoint.h: the state of an ML-EM run between iterations, so a long run can stop
 * and go on with bitwise the same result (docs/errors.md, "Long runs").
 *
 * Between iterations ML-EM's whole state is the volume: the forward projections and the
 * pixel terms are recomputed from it. A checkpoint holds the volume in the backend's own
 * precision (raw, little-endian IEEE), how many iterations made it, and what it belongs to
 * (grid, views, subsets, algorithm, precision), so a resume against another problem is
 * refused. File: "DBTRCKPT" magic, a fixed header of 64-bit fields, then the volume. */
#ifndef DBTR_CHECKPOINT_H
#define DBTR_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint64_t nx, ny, nz;
  uint64_t n_views, n_subsets;
  uint64_t algo;       /* dbtr_algo */
  uint64_t precision;  /* dbtr_precision */
  uint64_t iterations; /* completed */
  char backend[64];    /* the backend that wrote it, for the user */
} dbtr_checkpoint_info;

/* Writes atomically (temporary file + rename). vol holds nx*ny*nz elements of 4 or 8 bytes. */
int dbtr_checkpoint_write(const char *path, const dbtr_checkpoint_info *info, const void *vol);
/* Reads the header and a malloc'd volume; refuses bad magic, version, sizes or truncation. */
int dbtr_checkpoint_read(const char *path, dbtr_checkpoint_info *info, void **vol);

#endif
