/* engine/batch.h: many scans, each to its own volume, every GPU of the host busy
 * (docs/scale-out.md). One worker per GPU (on a machine without one, one worker on the CPU
 * reference), each a thread with a session of its own (engine/session.h) that it keeps from
 * scan to scan while the geometry and the grid stay the same, re-armed with each new scan's
 * data, and opened anew where they change. While a worker's GPU iterates, the worker's reader
 * reads its next scan and its writer writes its last volume. The host's threads are shared
 * out between the workers, never more in all than the machine has.
 *
 * Each output is bitwise the volume a single `dbtr recon` of its scan writes, whatever the
 * order, the workers or the GPUs: the session is the same, and every worker's sums are
 * those of one GPU. A scan that fails (unreadable, another grid, a GPU error) is reported
 * and recorded, and stops only itself. With a log, each scan's record is appended to it as
 * it ends (engine/record.h), and a run of the same command skips the outputs the log says
 * are complete. */
#ifndef DBTR_ENGINE_BATCH_H
#define DBTR_ENGINE_BATCH_H

#include <stddef.h>

#include "engine/session.h"
#include "io/volume_format.h"

/* One scan and the volume made of it. */
typedef struct {
  const char *scan, *output;
} dbtr_batch_item;

/* What happened to an item, as the hooks and the summary say. */
typedef enum {
  DBTR_BATCH_DONE = 0,     /* reconstructed, written and recorded */
  DBTR_BATCH_SKIPPED = 1,  /* complete already, by the log */
  DBTR_BATCH_FAILED = 2,   /* its message says why */
} dbtr_batch_status;

typedef struct {
  size_t item;               /* its index in the list */
  const dbtr_batch_item *it;
  dbtr_batch_status status;
  const char *message;       /* why it failed; NULL otherwise */
  int code;                  /* and its DBTR_E* code; 0 otherwise */
  const char *backend;       /* what ran it ("gpu:fast"); NULL when nothing did */
  int worker;                /* which worker (its GPU on a GPU machine) */
  double seconds;            /* from its reading to its record */
} dbtr_batch_event;

typedef struct {
  dbtr_recon_opts recon;     /* algorithm, subsets, start value, backend (its gpus: the workers' GPUs) */
  size_t iterations;         /* >= 1 */
  dbtr_grid_given grid;      /* in place of each scan's /volume, in part or whole */
  dbtr_tiff_opts format;     /* the volume files' sample format (io/volume_format.h) */
  int force;                 /* replace outputs the log does not say are complete */
  const char *log;           /* the record (engine/record.h); NULL: none, and nothing is skipped */
  int threads;               /* host threads in all; 0: the machine's */
  /* Called on the worker's thread, one call at a time, as each item ends; may be NULL. */
  void (*on_item)(void *user, const dbtr_batch_event *e);
  /* With a watcher: after each iteration of each scan, one call at a time. */
  void (*on_iteration)(void *user, size_t item, int worker, size_t iteration, double deviance);
  void *user;
} dbtr_batch_opts;

typedef struct {
  size_t done, skipped, failed;
  int workers;               /* the workers that ran */
  int on_gpu;                /* 1: they ran on GPUs */
} dbtr_batch_summary;

/* Runs every item. Returns 0 when the run itself could run (each item's fate is in the
 * summary and the hooks), or an error that stopped all of it before the first item (the log
 * cannot be opened, no worker can start, bad options). */
int dbtr_batch_run(const dbtr_batch_item *items, size_t n, const dbtr_batch_opts *o, dbtr_batch_summary *sum);

/* The canonical JSON of the options that make an output (engine/record.h), into *out
 * (malloc'd): what a record holds and a later run compares. */
int dbtr_batch_options_json(const dbtr_batch_opts *o, char **out);

#endif
