/* io/checkpoint.h: the state of an ML-EM run between iterations, so a long run can stop
 * and go on with bitwise the same result (docs/errors.md, "Long runs").
 *
 * Between iterations ML-EM's whole state is the volume: the forward projections and the
 * pixel terms are recomputed from it. A checkpoint holds the volume in the backend's own
 * precision (raw, little-endian IEEE), how many iterations made it, and what it belongs to,
 * so that a resume against anything else is refused rather than giving a plausible wrong
 * result: the grid (dims, voxel size, origin), a fingerprint of the scan (CRC-32 of its
 * projections, i0 and geometry, which tells scans of another seed or patient apart), the
 * subsets, the algorithm and the arithmetic. A CRC-32 of the whole file (zlib) catches a
 * damaged or bit-flipped file, and the volume must be finite and non-negative, as ML-EM
 * keeps it. File: "DBTRCKPT" magic, version 2, a fixed header, the volume, the CRC. */
#ifndef DBTR_CHECKPOINT_H
#define DBTR_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "io/scan.h"
#include "recon/backend.h"

typedef struct {
  uint64_t nx, ny, nz;
  uint64_t n_views, n_subsets;
  uint64_t algo;       /* dbtr_algo */
  uint64_t precision;  /* dbtr_precision */
  uint64_t iterations; /* completed */
  uint64_t scan_crc;   /* dbtr_checkpoint_scan_crc of the scan */
  double voxel[3], origin[3];
  char arithmetic[64]; /* which results it can continue bitwise (dbtr_checkpoint_identify) */
  char backend[64];    /* the backend that wrote it, for the user */
} dbtr_checkpoint_info;

/* CRC-32 of what a reconstruction reads from a scan: its projections and i0 (as the double
 * values the reader gives, whatever their stored type), its quantity and its geometry. */
uint64_t dbtr_checkpoint_scan_crc(const dbtr_scan *scan);
/* Fills everything but iterations for a run of scan on grid by backend b. */
void dbtr_checkpoint_identify(dbtr_checkpoint_info *ci, const dbtr_scan *scan, const dbtr_grid *grid,
                              size_t n_subsets, dbtr_algo algo, const dbtr_backend *b);
/* DBTR_EINVAL with a message naming path and the first difference when the checkpoint have
 * does not belong to the run want (dbtr_checkpoint_identify); 0 when it does. */
int dbtr_checkpoint_match(const char *path, const dbtr_checkpoint_info *have, const dbtr_checkpoint_info *want);

/* Writes atomically (temporary file + rename). vol holds nx*ny*nz elements of 4 or 8 bytes. */
int dbtr_checkpoint_write(const char *path, const dbtr_checkpoint_info *info, const void *vol);
/* Reads the header and a malloc'd volume; refuses bad magic, version, sizes, truncation, a
 * checksum that does not match, and non-finite or negative voxels. */
int dbtr_checkpoint_read(const char *path, dbtr_checkpoint_info *info, void **vol);

#endif
