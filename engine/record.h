/* engine/record.h: the record of a many-scan run (docs/scale-out.md, "The record"): one JSON
 * object a line (JSON Lines) a scan, appended to one log as each scan ends, so that a trial can
 * be audited and repeated; and, read back, what tells a later run of the same command which
 * outputs are complete. JSON is written and read through jansson.
 *
 * An output is complete when the log holds an "ok" record of it, made with the same options
 * (the record's "options", compared as canonical JSON), and the file is there with the size
 * and the modification time the record gives. The file appears only whole (io/atomic_file.h:
 * written to a temporary, renamed into place) and the record is written after the rename, so
 * a killed run leaves either no file, or a file without a record, which is not taken for done. */
#ifndef DBTR_ENGINE_RECORD_H
#define DBTR_ENGINE_RECORD_H

#include <stddef.h>
#include <stdint.h>

/* What a record says of one scan. Strings are the caller's. */
typedef struct {
  const char *scan, *output;
  const char *status;      /* "ok" or "failed" */
  const char *error;       /* the failure's message; NULL for ok */
  const char *options;     /* the options that make the output, as canonical JSON (jansson's
                              JSON_COMPACT | JSON_SORT_KEYS): compared as strings */
  const char *backend;     /* "gpu:fast", "cpu-float"; NULL when none ran */
  int gpu;                 /* the worker's GPU, or -1 */
  uint64_t scan_bytes;     /* the scan file's size */
  uint32_t scan_crc32;     /* of the scan's data, geometry and i0 (io/checkpoint.h's fingerprint) */
  uint64_t output_bytes;   /* the output's size and modification time (ns), when ok */
  int64_t output_mtime_ns;
  double seconds;          /* from the scan's reading to its record */
  const char *started;     /* UTC, ISO 8601 */
} dbtr_record;

/* The log, opened for appending, with what it said of complete outputs when it was opened. */
typedef struct dbtr_record_log dbtr_record_log;

/* Opens (creates) the log at path. Its lines are read first: each "ok" record's output, options,
 * size and time are kept, a later one of the same output replacing an earlier one; a line that
 * is not a JSON object (one a killed run cut short) is passed over, and counted. DBTR_EIO
 * naming path when it cannot be read or written. */
int dbtr_record_log_open(dbtr_record_log **out, const char *path);
void dbtr_record_log_close(dbtr_record_log **log);
/* Lines of the log that were not records. */
size_t dbtr_record_log_bad_lines(const dbtr_record_log *log);

/* 1 when output is complete by the rule above, with options; 0 otherwise. */
int dbtr_record_complete(const dbtr_record_log *log, const char *output, const char *options);

/* Appends r as one line and flushes it to the disk; safe from any thread. */
int dbtr_record_write(dbtr_record_log *log, const dbtr_record *r);

#endif
