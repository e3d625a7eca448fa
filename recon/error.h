/* recon/error.h: recording the message that names the cause of an error. The one table of
 * error codes (DBTR_ERRORS), dbtr_strerror and dbtr_errmsg are public: include/dbtr.h.
 *
 * Library functions return 0 on success or a negative DBTR_E* code. Before returning an
 * error they record a one-line message (file, dataset, flag, sizes) with dbtr_err(); the
 * caller prints dbtr_errmsg(). Only app/ exits. The message is per thread. */
#ifndef DBTR_ERROR_H
#define DBTR_ERROR_H

#include <stddef.h>

#include "include/dbtr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The process exit code that belongs to an error code (0 for DBTR_OK). */
int dbtr_exit_code(int code);

/* Records a formatted message for this thread and returns code, so that error paths read
 *   return dbtr_err(DBTR_EFORMAT, "%s: /projections: expected rank 3, found %d", path, r); */
int dbtr_err(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Replaces in place what a terminal would act on instead of showing: control bytes (below
 * 0x20, and 0x7f) and bytes that are not valid UTF-8 become '?'. Every message recorded by
 * dbtr_err passes through it, since messages quote file content (attribute values, paths,
 * strings of checkpoints and TIFF descriptions); so does any file-derived string printed. */
void dbtr_sanitize(char *s);
void dbtr_err_clear(void);

/* Overflow-checked size arithmetic: return DBTR_EOVERFLOW (with a message naming what)
 * instead of wrapping. Use before every allocation whose size comes from input. */
int dbtr_size_mul(size_t a, size_t b, size_t *out, const char *what);
int dbtr_size_mul3(size_t a, size_t b, size_t c, size_t *out, const char *what);
/* malloc of n elements of size elem, overflow checked, with a message on failure. */
int dbtr_alloc(void **out, size_t n, size_t elem, const char *what);

#ifdef __cplusplus
}
#endif

#endif
