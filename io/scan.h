/* io/scan.h: the HDF5 scan file, format "dbtr-scan" version 1 (docs/scan-format.md).
 *
 * A scan holds the projections (counts or line integrals), the unattenuated counts i0
 * in one of four shapes, the per-view geometry, and optionally the reconstruction grid.
 * The reader refuses wrong shapes, non-finite values, overflowing sizes and files of
 * another format with a message that names the file and the dataset. The scan type, the
 * reader, the writer and the i0 accessors are public (include/dbtr.h); this header adds the
 * guarded and hooked readers the command line uses. */
#ifndef DBTR_SCAN_H
#define DBTR_SCAN_H

#include <stddef.h>

#include "include/dbtr.h"
#include "recon/geom.h"

/* dbtr_scan_read, calling header_done(ctx) once the header (attributes, shapes, geometry,
 * grid: small reads, where a damaged file can make libhdf5 crash or loop) has been read and
 * checked, just before the bulk arrays are read. */
int dbtr_scan_read_hooked(dbtr_scan *s, const char *path, void (*header_done)(void *ctx), void *ctx);
/* dbtr_scan_read, with the header read first in a forked child that has header_seconds to
 * finish (io/scan_guard.c): a file that crashes libhdf5 or makes it loop is refused with
 * DBTR_EFORMAT and a message naming it, while a crash in dbtr's own code kills the caller
 * with its signal, as any bug should. Not for programs that must not fork. */
int dbtr_scan_read_guarded(dbtr_scan *s, const char *path, unsigned header_seconds);
/* For programs, before any other dbtr call: keeps libhdf5 from closing its files at exit.
 * After a failed write (a full disk, a file-size limit) libhdf5 1.10 keeps the file open in
 * a damaged state, and closing it again, as its exit handler does, crashes. The writer has
 * removed that file already, and every file read is closed by then: nothing is lost. */
void dbtr_scan_skip_exit_cleanup(void);

/* Sets the provenance note `key` (replacing one of the same key) to the formatted text. */
int dbtr_scan_note_set(dbtr_scan *s, const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
