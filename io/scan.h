/* io/scan.h: the HDF5 scan file, format "dbtr-scan" version 1 (docs/scan-format.md).
 *
 * A scan holds the projections (counts or line integrals), the unattenuated counts i0
 * in one of four shapes, the per-view geometry, and optionally the reconstruction grid.
 * The reader refuses wrong shapes, non-finite values, overflowing sizes and files of
 * another format with a message that names the file and the dataset. */
#ifndef DBTR_SCAN_H
#define DBTR_SCAN_H

#include <stddef.h>

#include "recon/geom.h"

typedef enum { DBTR_QUANTITY_COUNTS = 0, DBTR_QUANTITY_LINE_INTEGRAL = 1 } dbtr_quantity;

/* The shape /i0 had in the file; values keep that shape in memory. */
typedef enum {
  DBTR_I0_NONE = 0,     /* line integrals: no /i0 */
  DBTR_I0_SCALAR,       /* one value */
  DBTR_I0_PER_VIEW,     /* (n_views) */
  DBTR_I0_PER_PIXEL,    /* (n_rows, n_cols), the same for every view */
  DBTR_I0_FULL          /* (n_views, n_rows, n_cols) */
} dbtr_i0_shape;

/* How /projections is stored when written. */
typedef enum { DBTR_DTYPE_FLOAT32 = 0, DBTR_DTYPE_FLOAT64, DBTR_DTYPE_UINT16, DBTR_DTYPE_UINT32 } dbtr_dtype;

/* Where one quantity of the scan came from, e.g. key "i0", text "10000 from --i0": the
 * optional /provenance attributes (docs/scan-format.md). Longer texts are cut. */
#define DBTR_SCAN_MAX_NOTES 8
typedef struct {
  char key[32];
  char text[512];
} dbtr_scan_note;

typedef struct {
  dbtr_geom geom;           /* per-view vectors and detector size */
  dbtr_quantity quantity;
  double *proj;             /* (n_views, n_rows, n_cols): counts or line integrals (unitless) */
  dbtr_i0_shape i0_shape;
  double *i0;               /* as i0_shape says; NULL for DBTR_I0_NONE */
  int has_grid;             /* 1 if /volume attributes were present */
  dbtr_grid grid;           /* valid when has_grid */
  dbtr_dtype stored_dtype;  /* dtype /projections had in the file (reader) */
  size_t n_notes;           /* provenance notes, in key order when read from a file */
  dbtr_scan_note notes[DBTR_SCAN_MAX_NOTES];
} dbtr_scan;

typedef struct {
  dbtr_dtype dtype;  /* how to store /projections; integer types are rounded and saturated */
  int gzip_level;    /* 0 = no compression, 1..9 gzip with chunks of one view */
} dbtr_scan_write_opts;

/* Reads and checks a scan file into s (zeroed first). On error s is left freed. */
int dbtr_scan_read(dbtr_scan *s, const char *path);
/* The same, calling header_done(ctx) once the header (attributes, shapes, geometry, grid:
 * small reads, where a damaged file can make libhdf5 crash or loop) has been read and
 * checked, just before the bulk arrays are read. */
int dbtr_scan_read_hooked(dbtr_scan *s, const char *path, void (*header_done)(void *ctx), void *ctx);
/* dbtr_scan_read, with the header read first in a forked child that has header_seconds to
 * finish (io/scan_guard.c): a file that crashes libhdf5 or makes it loop is refused with
 * DBTR_EFORMAT and a message naming it, while a crash in dbtr's own code kills the caller
 * with its signal, as any bug should. Not for programs that must not fork. */
int dbtr_scan_read_guarded(dbtr_scan *s, const char *path, unsigned header_seconds);
/* Writes s to path through a temporary file in the same folder, renamed into place. */
int dbtr_scan_write(const dbtr_scan *s, const char *path, const dbtr_scan_write_opts *opts);
/* Frees and zeroes; safe to call twice. */
void dbtr_scan_free(dbtr_scan *s);
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

/* i0 for view k, pixel index p (p = r * n_cols + c), whatever its stored shape. */
double dbtr_scan_i0(const dbtr_scan *s, size_t k, size_t p);
/* Number of doubles the i0 array holds for its shape (0 for none). */
size_t dbtr_scan_i0_count(const dbtr_scan *s);

#endif
