/* engine/record.c: the JSON Lines record of a many-scan run (engine/record.h), through jansson. */
#include "engine/record.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recon/error.h"
#include "recon/version.h"

/* A complete output as a record said: the output's path, the options and the file's size and
 * time. */
typedef struct {
  char *output, *options;
  uint64_t bytes;
  int64_t mtime_ns;
  size_t line; /* its place in the log: of two records of one output, the later one holds */
} done_entry;

struct dbtr_record_log {
  char *path;
  int fd;                /* O_APPEND */
  pthread_mutex_t lock;  /* one line at a time, whole */
  done_entry *done;      /* sorted by output */
  size_t n_done, bad;
};

static int by_output(const void *a, const void *b) {
  return strcmp(((const done_entry *)a)->output, ((const done_entry *)b)->output);
}

static int by_output_then_line(const void *a, const void *b) {
  const done_entry *x = a, *y = b;
  int c = strcmp(x->output, y->output);
  return c ? c : (x->line > y->line) - (x->line < y->line);
}

static void free_entry(done_entry *e) {
  free(e->output);
  free(e->options);
}

/* Keeps what an "ok" record says; anything else in the line is the auditor's, not ours. */
static int keep(dbtr_record_log *log, json_t *rec, size_t line, size_t *cap) {
  const char *status = json_string_value(json_object_get(rec, "status"));
  const char *output = json_string_value(json_object_get(rec, "output"));
  json_t *options = json_object_get(rec, "options");
  json_t *bytes = json_object_get(rec, "output_bytes"), *mtime = json_object_get(rec, "output_mtime_ns");
  if (!status || strcmp(status, "ok") || !output || !json_is_object(options) || !json_is_integer(bytes) ||
      !json_is_integer(mtime))
    return 0;
  if (log->n_done == *cap) {
    size_t c = *cap ? 2 * *cap : 64;
    done_entry *d = realloc(log->done, c * sizeof *d);
    if (!d) return dbtr_err(DBTR_ENOMEM, "%s: out of memory", log->path);
    log->done = d;
    *cap = c;
  }
  done_entry e = {strdup(output), json_dumps(options, JSON_COMPACT | JSON_SORT_KEYS),
                  (uint64_t)json_integer_value(bytes), (int64_t)json_integer_value(mtime), line};
  if (!e.output || !e.options) {
    free_entry(&e);
    return dbtr_err(DBTR_ENOMEM, "%s: out of memory", log->path);
  }
  log->done[log->n_done++] = e;
  return 0;
}

/* The records already in the log, the last of an output winning: sorted by output and by
 * place in the log, then each run of one output reduced to its last entry. */
static int read_done(dbtr_record_log *log) {
  FILE *f = fopen(log->path, "r");
  if (!f) return errno == ENOENT ? 0 : dbtr_err(DBTR_EIO, "%s: cannot read: %s", log->path, strerror(errno));
  char *line = NULL;
  size_t len = 0, cap = 0, at = 0;
  int rc = 0;
  while (!rc && getline(&line, &len, f) >= 0) {
    json_error_t err;
    json_t *rec = json_loads(line, 0, &err);
    if (json_is_object(rec))
      rc = keep(log, rec, at, &cap);
    else if (line[strspn(line, " \t\r\n")])
      log->bad++;
    json_decref(rec);
    at++;
  }
  free(line);
  fclose(f);
  if (rc) return rc;
  if (log->n_done) qsort(log->done, log->n_done, sizeof *log->done, by_output_then_line);
  size_t n = 0;
  for (size_t i = 0; i < log->n_done; i++) {
    if (n && !strcmp(log->done[n - 1].output, log->done[i].output)) free_entry(&log->done[--n]);
    log->done[n++] = log->done[i];
  }
  log->n_done = n;
  return 0;
}

int dbtr_record_log_open(dbtr_record_log **out, const char *path) {
  *out = NULL;
  dbtr_record_log *log = calloc(1, sizeof *log);
  if (!log || !(log->path = strdup(path))) {
    free(log);
    return dbtr_err(DBTR_ENOMEM, "%s: out of memory", path);
  }
  log->fd = -1;
  pthread_mutex_init(&log->lock, NULL);
  int rc = read_done(log);
  if (!rc && (log->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) < 0)
    rc = dbtr_err(DBTR_EIO, "%s: cannot write the record: %s", path, strerror(errno));
  if (rc) {
    dbtr_record_log_close(&log);
    return rc;
  }
  *out = log;
  return 0;
}

void dbtr_record_log_close(dbtr_record_log **log) {
  if (!log || !*log) return;
  dbtr_record_log *l = *log;
  if (l->fd >= 0) close(l->fd);
  for (size_t i = 0; i < l->n_done; i++) free_entry(&l->done[i]);
  free(l->done);
  pthread_mutex_destroy(&l->lock);
  free(l->path);
  free(l);
  *log = NULL;
}

size_t dbtr_record_log_bad_lines(const dbtr_record_log *log) { return log->bad; }

int dbtr_record_complete(const dbtr_record_log *log, const char *output, const char *options) {
  if (!log->n_done) return 0; /* bsearch of no array: its pointer is NULL */
  done_entry key = {(char *)(uintptr_t)output, NULL, 0, 0, 0};
  const done_entry *e = bsearch(&key, log->done, log->n_done, sizeof *log->done, by_output);
  struct stat st;
  if (!e || strcmp(e->options, options) || stat(output, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + (int64_t)st.st_mtim.tv_nsec;
  return (uint64_t)st.st_size == e->bytes && mtime == e->mtime_ns;
}

int dbtr_record_write(dbtr_record_log *log, const dbtr_record *r) {
  json_error_t err;
  json_t *options = json_loads(r->options, 0, &err);
  char crc[16];
  snprintf(crc, sizeof crc, "%08x", (unsigned)r->scan_crc32);
  json_t *rec = json_pack("{s:s, s:s, s:s, s:s?, s:o?, s:s?, s:i, s:I, s:s, s:f, s:s, s:s}", "scan", r->scan,
                          "output", r->output, "status", r->status, "error", r->error, "options", options, "backend",
                          r->backend, "gpu", r->gpu, "scan_bytes", (json_int_t)r->scan_bytes, "scan_crc32", crc,
                          "seconds", r->seconds, "started", r->started, "dbtr_version", DBTR_VERSION_STRING);
  if (rec && !strcmp(r->status, "ok")) {
    json_object_set_new(rec, "output_bytes", json_integer((json_int_t)r->output_bytes));
    json_object_set_new(rec, "output_mtime_ns", json_integer((json_int_t)r->output_mtime_ns));
  }
  char *line = rec ? json_dumps(rec, JSON_COMPACT) : NULL;
  json_decref(rec);
  if (!line) return dbtr_err(DBTR_ENOMEM, "%s: cannot make the record of %s", log->path, r->scan);
  size_t n = strlen(line);
  line[n] = '\n'; /* json_dumps's terminator becomes the line's end */
  pthread_mutex_lock(&log->lock);
  ssize_t w = write(log->fd, line, n + 1);
  int rc = w == (ssize_t)(n + 1) && fsync(log->fd) == 0
               ? 0
               : dbtr_err(DBTR_EIO, "%s: cannot write the record of %s: %s", log->path, r->scan,
                          w < 0 ? strerror(errno) : "short write");
  pthread_mutex_unlock(&log->lock);
  free(line);
  return rc;
}
