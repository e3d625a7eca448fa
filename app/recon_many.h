/* app/recon_many.h: `dbtr recon` of many scans (docs/scale-out.md): the scans and the outputs
 * named from the operands, the shard, and what the engine's many-scan runner (engine/batch.h)
 * does told on one progress line, a line per failure and a summary. */
#ifndef DBTR_APP_RECON_MANY_H
#define DBTR_APP_RECON_MANY_H

#include <stddef.h>

#include "engine/batch.h"

typedef struct {
  const char *out_dir;    /* -o DIR/ */
  const char *ext;        /* the outputs' ending: ".tif" (default), ".tiff", ".nii", ".nii.gz" */
  const char *log;        /* the record; NULL: DIR/dbtr-recon.jsonl */
  const char *shard;      /* "K/N", or NULL */
  int quiet, verbose;
  dbtr_batch_opts batch;  /* what each scan gets */
} app_many_opts;

/* 1 when the command line asks for many scans: more than one operand, a folder among them, or
 * -o naming a folder (an existing one, or a name ending in '/'). */
int app_recon_is_many(const char *const *operands, size_t n, const char *out);

/* Runs the many-scan reconstruction of the operands (scan files and folders of them) and
 * returns the exit code: 0 when every scan is written or was complete, 8 when some failed
 * (each said on its line and in the summary), or the code of what stopped the whole run. */
int app_recon_many(const char *cmd, const char *const *operands, size_t n, app_many_opts *o);

#endif
