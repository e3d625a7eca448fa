/* engine/batch.c: many scans on every GPU of the host (engine/batch.h). */
#include "engine/batch.h"

#include <jansson.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "engine/record.h"
#include "io/checkpoint.h"
#include "io/scan.h"
#include "io/volume.h"
#include "kernels/gpu.h"
#include "recon/error.h"
#include "recon/version.h"

/* What the workers share. */
typedef struct {
  const dbtr_batch_item *items;
  size_t n;
  const dbtr_batch_opts *o;
  char *options;              /* canonical JSON (dbtr_batch_options_json) */
  dbtr_record_log *log;
  int on_gpu, threads_each;
  pthread_mutex_t claim;      /* next */
  size_t next;
  pthread_mutex_t hdf5;       /* libhdf5 is not thread-safe: one reader at a time */
  pthread_mutex_t report;     /* the hooks and the summary, one item at a time */
  dbtr_batch_summary *sum;
} run;

/* A scan in flight: read by the reader, reconstructed by the worker, written by the writer. */
typedef struct {
  size_t item;                /* SIZE_MAX: none (the list is done) */
  dbtr_scan scan;
  int have_scan;
  uint64_t scan_bytes;
  uint32_t crc;
  double t0;                  /* when its reading began */
  char started[32];
  char backend[64];
  dbtr_grid grid;
} flight;

static double now(void) { return omp_get_wtime(); }

static void utc_now(char *out, size_t len) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Records and reports how item f ended; message (failures) is copied before anything else can
 * overwrite it. */
static void finish(run *r, const flight *f, int worker, dbtr_batch_status st, int code, const char *message) {
  char msg[1024] = "";
  if (message) snprintf(msg, sizeof msg, "%s", message);
  const dbtr_batch_item *it = &r->items[f->item];
  double seconds = now() - f->t0;
  if (r->log && st != DBTR_BATCH_SKIPPED) {
    dbtr_record rec = {.scan = it->scan, .output = it->output, .status = st == DBTR_BATCH_DONE ? "ok" : "failed",
                       .error = st == DBTR_BATCH_FAILED ? msg : NULL, .options = r->options,
                       .backend = f->backend[0] ? f->backend : NULL, .gpu = r->on_gpu ? worker : -1,
                       .scan_bytes = f->scan_bytes, .scan_crc32 = f->crc, .seconds = seconds, .started = f->started};
    struct stat sb;
    if (st == DBTR_BATCH_DONE && stat(it->output, &sb) == 0) {
      rec.output_bytes = (uint64_t)sb.st_size;
      rec.output_mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + (int64_t)sb.st_mtim.tv_nsec;
    }
    if (dbtr_record_write(r->log, &rec) && st == DBTR_BATCH_DONE) {
      /* A volume whose record could not be written is not known to be complete. */
      st = DBTR_BATCH_FAILED;
      code = DBTR_EIO;
      snprintf(msg, sizeof msg, "%s", dbtr_errmsg());
    }
  }
  pthread_mutex_lock(&r->report);
  if (st == DBTR_BATCH_DONE) r->sum->done++;
  if (st == DBTR_BATCH_SKIPPED) r->sum->skipped++;
  if (st == DBTR_BATCH_FAILED) r->sum->failed++;
  dbtr_batch_event e = {f->item,       it,     st, st == DBTR_BATCH_FAILED ? msg : NULL, st == DBTR_BATCH_FAILED ? code : 0,
                        f->backend[0] ? f->backend : NULL, worker, seconds};
  if (r->o->on_item) r->o->on_item(r->o->user, &e);
  pthread_mutex_unlock(&r->report);
}

/* The next item that needs work, read into f: complete ones are skipped, an output that is
 * there and not complete is refused without --force, an unreadable scan fails; f->item is
 * SIZE_MAX when the list is done. */
static void claim_and_read(run *r, int worker, flight *f) {
  for (;;) {
    pthread_mutex_lock(&r->claim);
    size_t i = r->next < r->n ? r->next++ : SIZE_MAX;
    pthread_mutex_unlock(&r->claim);
    memset(f, 0, sizeof *f);
    f->item = i;
    if (i == SIZE_MAX) return;
    f->t0 = now();
    utc_now(f->started, sizeof f->started);
    const dbtr_batch_item *it = &r->items[i];
    if (r->log && dbtr_record_complete(r->log, it->output, r->options)) {
      finish(r, f, worker, DBTR_BATCH_SKIPPED, 0, NULL);
      continue;
    }
    struct stat sb;
    if (!r->o->force && lstat(it->output, &sb) == 0) {
      char why[1200];
      snprintf(why, sizeof why, "%s exists and %s: not replaced (--force redoes it)", it->output,
               r->log ? "the log does not record it as complete with these options" : "no log says it is complete");
      finish(r, f, worker, DBTR_BATCH_FAILED, DBTR_EINVAL, why);
      continue;
    }
    if (stat(it->scan, &sb) == 0) f->scan_bytes = (uint64_t)sb.st_size;
    pthread_mutex_lock(&r->hdf5);
    int rc = dbtr_scan_read(&f->scan, it->scan);
    pthread_mutex_unlock(&r->hdf5);
    if (rc) {
      finish(r, f, worker, DBTR_BATCH_FAILED, rc, dbtr_errmsg());
      continue;
    }
    f->have_scan = 1;
    f->crc = (uint32_t)dbtr_checkpoint_scan_crc(&f->scan);
    return;
  }
}

/* A worker: one GPU's (or the CPU's) session, its reader and its writer. */
typedef struct {
  run *r;
  int id;
  dbtr_session *s;
  void *vol[2];       /* the volumes written, one being written while the next is made */
  size_t vol_bytes[2]; /* their sizes */
  void *tmp;          /* the backend's volume where its type is not the file's */
  size_t tmp_bytes;
  flight cur, next, out;
  pthread_t reader, writer;
  int writing;
  int write_slot;
} worker;

static void *reader_main(void *arg) {
  worker *w = arg;
  omp_set_num_threads(1);
  claim_and_read(w->r, w->id, &w->next);
  return NULL;
}

/* The writer: the volume in w->vol[w->write_slot] to w->out's output, then its record. */
static void *writer_main(void *arg) {
  worker *w = arg;
  run *r = w->r;
  omp_set_num_threads(1);
  const dbtr_batch_item *it = &r->items[w->out.item];
  int rc = dbtr_volume_write(it->output, &w->out.grid, w->vol[w->write_slot], &r->o->format);
  finish(r, &w->out, w->id, rc ? DBTR_BATCH_FAILED : DBTR_BATCH_DONE, rc, rc ? dbtr_errmsg() : NULL);
  return NULL;
}

static void join_writer(worker *w) {
  if (!w->writing) return;
  pthread_join(w->writer, NULL);
  w->writing = 0;
}

/* A buffer of at least bytes, pinned for the GPU's copies where the worker runs on one. */
static int ensure(void **buf, size_t *have, size_t bytes, int pin) {
  if (*have >= bytes) return 0;
  if (pin && *buf) dbtr_gpu_host_unpin(*buf);
  free(*buf);
  *buf = NULL;
  *have = 0;
  int rc = dbtr_alloc(buf, bytes, 1, "volume");
  if (!rc && pin) rc = dbtr_gpu_host_pin(*buf, bytes);
  if (!rc) *have = bytes;
  return rc;
}

typedef struct {
  run *r;
  size_t item;
  int worker;
} iter_watch;

static int on_end(void *user, size_t it, double deviance, dbtr_backend *b) {
  iter_watch *iw = user;
  (void)b;
  pthread_mutex_lock(&iw->r->report);
  iw->r->o->on_iteration(iw->r->o->user, iw->item, iw->worker, it, deviance);
  pthread_mutex_unlock(&iw->r->report);
  return 0;
}

/* Reconstructs w->cur into w->vol[slot]: the session kept where the problem is the last
 * scan's, re-armed with this one's data; else a new one. */
static int reconstruct(worker *w, int slot) {
  run *r = w->r;
  const dbtr_batch_opts *o = r->o;
  flight *f = &w->cur;
  const char *path = r->items[f->item].scan;
  int rc = dbtr_session_grid(&f->scan, path, &o->grid, &f->grid);
  size_t n_vox = 0;
  if (!rc) rc = dbtr_grid_count(&f->grid, &n_vox);
  int f64 = o->format.format == DBTR_TIFF_FLOAT64;
  size_t es_out = f64 ? sizeof(double) : sizeof(float);
  if (rc) return rc;
  if (w->s && dbtr_session_same_problem(w->s, &f->scan, &f->grid)) {
    rc = dbtr_session_rearm(w->s, &f->scan);
  } else {
    dbtr_session_close(&w->s);
    dbtr_session_opts so = {.recon = o->recon, .source = path, .values_checked = 1,
                            .caller_bytes = 2.0 * (double)n_vox * (double)es_out, .gpu_first = r->on_gpu ? w->id : 0};
    so.recon.backend.threads = r->threads_each;
    so.recon.backend.gpus = 1;
    so.recon.backend.backend = r->on_gpu ? "gpu" : "cpu";
    rc = dbtr_session_open(&w->s, &f->scan, &f->grid, &so);
  }
  if (rc) return rc;
  dbtr_backend *b = dbtr_session_backend(w->s);
  snprintf(f->backend, sizeof f->backend, "%s", b->name);
  iter_watch iw = {r, f->item, w->id};
  dbtr_session_run_opts ro = {.first = 1, .last = o->iterations, .end = o->on_iteration ? on_end : NULL, .user = &iw};
  if ((rc = dbtr_session_run(w->s, &ro))) return rc;
  if ((rc = ensure(&w->vol[slot], &w->vol_bytes[slot], n_vox * es_out, r->on_gpu))) return rc;
  /* Where the backend's type is the file's the volume comes straight into the written buffer,
   * as dbtr recon's does; else rounded to it as dbtr recon rounds it. */
  if (b->precision == (f64 ? DBTR_PREC_DOUBLE : DBTR_PREC_FLOAT)) return dbtr_session_get_volume(w->s, w->vol[slot]);
  size_t es = dbtr_precision_size(b->precision);
  if ((rc = ensure(&w->tmp, &w->tmp_bytes, n_vox * es, 0)) || (rc = dbtr_session_get_volume(w->s, w->tmp))) return rc;
  if (f64)
    dbtr_convert_to_double(b->precision, w->tmp, n_vox, w->vol[slot]);
  else
    dbtr_convert_to_float(b->precision, w->tmp, n_vox, w->vol[slot]);
  return 0;
}

static void *worker_main(void *arg) {
  worker *w = arg;
  run *r = w->r;
  omp_set_num_threads(r->threads_each);
  claim_and_read(r, w->id, &w->cur);
  int slot = 0;
  while (w->cur.item != SIZE_MAX) {
    int reading = pthread_create(&w->reader, NULL, reader_main, w) == 0;
    if (!reading) claim_and_read(r, w->id, &w->next);
    /* The other buffer is free once its writer is done; the writer of this one finished two
     * scans ago (joined below before a new writer starts). */
    int rc = reconstruct(w, slot);
    dbtr_scan_free(&w->cur.scan);
    join_writer(w);
    if (rc) {
      finish(r, &w->cur, w->id, DBTR_BATCH_FAILED, rc, dbtr_errmsg());
      /* Whatever failed (the data, the GPU), the next scan gets a session of its own. */
      dbtr_session_close(&w->s);
    } else {
      w->out = w->cur;
      w->write_slot = slot;
      w->writing = pthread_create(&w->writer, NULL, writer_main, w) == 0;
      if (!w->writing) writer_main(w);
      slot ^= 1;
    }
    if (reading) pthread_join(w->reader, NULL);
    w->cur = w->next;
  }
  join_writer(w);
  dbtr_session_close(&w->s);
  for (int i = 0; i < 2; i++) {
    if (r->on_gpu && w->vol[i]) dbtr_gpu_host_unpin(w->vol[i]);
    free(w->vol[i]);
  }
  free(w->tmp);
  return NULL;
}

int dbtr_batch_options_json(const dbtr_batch_opts *o, char **out) {
  const dbtr_recon_opts *ro = &o->recon;
  const dbtr_grid_given *g = &o->grid;
  static const char *const formats[] = {"float32", "uint16", "float64"};
  json_t *opt = json_pack(
      "{s:I, s:I, s:s?, s:f, s:s?, s:s?, s:s?, s:s, s:f, s:o, s:o, s:o, s:s}", "iterations", (json_int_t)o->iterations,
      "subsets", (json_int_t)(ro->subsets ? ro->subsets : 1), "algorithm", ro->algorithm, "init", ro->init, "backend",
      ro->backend.backend, "mode", ro->backend.mode, "precision", ro->backend.precision, "format",
      formats[o->format.format], "u16_scale", o->format.u16_scale, "dims",
      g->has_dims ? json_pack("[f,f,f]", g->dims[0], g->dims[1], g->dims[2]) : json_null(), "voxel",
      g->has_voxel ? json_pack("[f,f,f]", g->voxel[0], g->voxel[1], g->voxel[2]) : json_null(), "origin",
      g->has_origin ? json_pack("[f,f,f]", g->origin[0], g->origin[1], g->origin[2]) : json_null(), "dbtr_version",
      DBTR_VERSION_STRING);
  *out = opt ? json_dumps(opt, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
  json_decref(opt);
  return *out ? 0 : dbtr_err(DBTR_ENOMEM, "the options' record: out of memory");
}

int dbtr_batch_run(const dbtr_batch_item *items, size_t n, const dbtr_batch_opts *o, dbtr_batch_summary *sum) {
  memset(sum, 0, sizeof *sum);
  if (o->iterations < 1) return dbtr_err(DBTR_EINVAL, "iterations must be at least 1");
  const char *be = o->recon.backend.backend ? o->recon.backend.backend : "auto";
  int n_gpu = strcmp(be, "cpu") ? dbtr_gpu_count() : 0;
  if (!strcmp(be, "gpu") && n_gpu < 1) return dbtr_err(DBTR_ENOGPU, "--backend gpu: no CUDA GPU can be used");
  run r = {.items = items, .n = n, .o = o, .sum = sum, .on_gpu = n_gpu > 0};
  int want = o->recon.backend.gpus, workers = 1;
  if (r.on_gpu) workers = want > 0 && want < n_gpu ? want : n_gpu;
  if (workers > (int)n && n > 0) workers = (int)n;
  int threads = o->threads > 0 ? o->threads : omp_get_num_procs();
  r.threads_each = threads / workers > 0 ? threads / workers : 1;
  sum->workers = workers;
  sum->on_gpu = r.on_gpu;
  int rc = dbtr_batch_options_json(o, &r.options);
  if (!rc && o->log) rc = dbtr_record_log_open(&r.log, o->log);
  worker *w = rc ? NULL : calloc((size_t)workers, sizeof *w);
  if (!rc && !w) rc = dbtr_err(DBTR_ENOMEM, "workers: out of memory");
  if (!rc) {
    pthread_mutex_init(&r.claim, NULL);
    pthread_mutex_init(&r.hdf5, NULL);
    pthread_mutex_init(&r.report, NULL);
    pthread_t *t = calloc((size_t)workers, sizeof *t);
    int *started = calloc((size_t)workers, sizeof *started);
    for (int i = 0; i < workers && t && started; i++) {
      w[i] = (worker){.r = &r, .id = i};
      started[i] = pthread_create(&t[i], NULL, worker_main, &w[i]) == 0;
      if (!started[i]) worker_main(&w[i]); /* no thread to be had: this one works */
    }
    for (int i = 0; i < workers && t && started; i++)
      if (started[i]) pthread_join(t[i], NULL);
    if (!t || !started) rc = dbtr_err(DBTR_ENOMEM, "workers: out of memory");
    free(t);
    free(started);
    pthread_mutex_destroy(&r.claim);
    pthread_mutex_destroy(&r.hdf5);
    pthread_mutex_destroy(&r.report);
  }
  free(w);
  dbtr_record_log_close(&r.log);
  free(r.options);
  return rc;
}
