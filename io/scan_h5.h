/* io/scan_h5.h: what the scan reader (io/scan.c) and writer (io/scan_write.c) share: the
 * format's name and version, the geometry datasets, and two HDF5 helpers. */
#ifndef DBTR_IO_SCAN_H5_H
#define DBTR_IO_SCAN_H5_H

#include <hdf5.h>
#include <stddef.h>

#include "io/scan.h"

#define DBTR__SCAN_FORMAT "dbtr-scan"
#define DBTR__SCAN_VERSION 1

/* /geometry/source, detector_center, detector_u, detector_v: (n_views, 3) each. */
extern const char *const dbtr__scan_geom_names[4];

/* The innermost HDF5 error ("truncated file: eof = ..."), so that our one-line message
 * carries the cause without HDF5 printing its whole stack. Call right after the failure:
 * the next HDF5 call clears the stack. */
const char *dbtr__h5_reason(char *buf, size_t cap);

/* Closes *id with fn when it is valid, and marks it invalid. */
void dbtr__h5_close(hid_t *id, herr_t (*fn)(hid_t));

/* io/scan_bulk.c: dataset d, n values, into out as doubles with pread(2) in parallel on
 * the descriptor of the file that holds d, when it is stored contiguously as float32,
 * float64, uint16 or uint32 in this machine's byte order: 1 when read, 0 when not such a dataset (nothing read: H5Dread it),
 * or a negative DBTR_E* code with a message naming path and name. The caller has checked
 * that the file stores all n values (io/scan.c, check_storage), and is no forked child of a
 * process that used OpenMP. */
int dbtr__h5_read_bulk(hid_t d, size_t n, double *out, const char *path, const char *name);

/* io/scan_guard.c's mechanism, for its tests: runs fn(ctx) in a forked child with seconds to
 * finish and returns its code and message; fn may end the child early with success by
 * calling dbtr__guard_succeed(). A crash in libhdf5 (or in the C library called from it)
 * becomes DBTR_EFORMAT naming path, a time-out too; a crash anywhere else is raised again
 * in the caller. */
int dbtr__guarded_call(int (*fn)(void *ctx), void *ctx, unsigned seconds, const char *path);
void dbtr__guard_succeed(void);

/* dbtr_scan_write, calling extra(ctx, file, path) after the scan's own contents and before the
 * file is closed and renamed into place, so that what it adds (phantoms/objects_h5.c: the
 * /phantom objects) is in the file when, and only when, the whole file is. NULL: nothing. */
int dbtr__scan_write_with(const dbtr_scan *s, const char *path, const dbtr_scan_write_opts *opts,
                          int (*extra)(void *ctx, hid_t file, const char *path), void *ctx);

/* The rank /i0 has in the file for each shape: scalar, (n_views), (n_rows, n_cols), full. */
int dbtr__scan_i0_rank(dbtr_i0_shape shape);

#endif
