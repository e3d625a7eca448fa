/* io/guard.h: a library that may crash or loop on a damaged file, kept at arm's length
 * (io/scan_guard.c): fn runs in a forked child with a time limit. libhdf5 reads scan
 * headers this way (io/scan_h5.h, dbtr__guarded_call), GDCM DICOM files (io/dicom_import.c). */
#ifndef DBTR_IO_GUARD_H
#define DBTR_IO_GUARD_H

typedef struct {
  /* Parts of the file names of the library and of those it calls on the file's data (GDCM's
   * decoders: OpenJPEG, CharLS), NULL after the last: {"libhdf5"}, {"libgdcm", "libopenjp2"}. */
  const char *match[4];
  const char *name;    /* the library in messages: "libhdf5", "GDCM" */
  const char *reading; /* what the child does, in messages: "reading the file's header" */
  /* 1: the child's stderr goes to /dev/null, for a library that prints what it asserts
   * (GDCM's "Assertion ... failed" before abort()): the refusal is the one line. */
  int quiet;
} dbtr__guard_lib;

/* Runs fn(ctx) in a forked child with seconds to finish and returns its code and message
 * (fn may end the child early with success by calling dbtr__guard_succeed()). A crash whose
 * faulting instruction is in lib (or in the C library called from it: an abort() after a
 * failed assert) becomes DBTR_EFORMAT naming path and lib, a time-out too; a crash anywhere
 * else is dbtr's own bug and is raised again in the caller. */
void dbtr__guard_succeed(void);
int dbtr__guarded_call_in(const dbtr__guard_lib *lib, int (*fn)(void *ctx), void *ctx, unsigned seconds,
                          const char *path);

#endif
