/* app/recon_many.c: `dbtr recon` of many scans (app/recon_many.h). */
#include "app/recon_many.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/cli.h"
#include "io/atomic_file.h"
#include "io/volume.h"
#include "kernels/gpu.h"
#include "recon/error.h"

/* The exit code of a run in which some scans failed and the others were done (docs/errors.md). */
enum { EXIT_SOME_FAILED = 8 };

static int is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int app_recon_is_many(const char *const *operands, size_t n, const char *out) {
  if (n > 1 || (out && is_dir(out))) return 1;
  size_t len = out ? strlen(out) : 0;
  if (len && out[len - 1] == '/') return 1;
  return n == 1 && is_dir(operands[0]);
}

/* A growing list of owned strings. */
typedef struct {
  char **s;
  size_t n, cap;
} names;

static int push(names *l, const char *a) {
  if (l->n == l->cap) {
    size_t c = l->cap ? 2 * l->cap : 64;
    char **g = realloc(l->s, c * sizeof *g);
    if (!g) return dbtr_err(DBTR_ENOMEM, "the scans' list: out of memory");
    l->s = g;
    l->cap = c;
  }
  char *p = strdup(a);
  if (!p) return dbtr_err(DBTR_ENOMEM, "the scans' list: out of memory");
  l->s[l->n++] = p;
  return 0;
}

static void free_names(names *l) {
  for (size_t i = 0; i < l->n; i++) free(l->s[i]);
  free(l->s);
  memset(l, 0, sizeof *l);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), t = strlen(tail);
  return n > t && !strcmp(s + n - t, tail);
}

/* The scans the operands name: files as given, and each folder's *.h5 files (not its
 * sub-folders), sorted by name, each once. */
static int list_scans(const char *cmd, const char *const *ops, size_t n, names *out) {
  for (size_t i = 0; i < n; i++) {
    if (!is_dir(ops[i])) {
      if (push(out, ops[i])) return cli_fail(cmd, DBTR_ENOMEM);
      continue;
    }
    DIR *d = opendir(ops[i]);
    if (!d) return cli_usage_error(cmd, "%s: cannot read the folder: %s", ops[i], strerror(errno));
    size_t before = out->n;
    int fl = cli_folder_len(ops[i]);
    for (struct dirent *e; (e = readdir(d));) {
      if (e->d_name[0] == '.' || !ends_with(e->d_name, ".h5")) continue;
      char path[4096];
      snprintf(path, sizeof path, "%.*s/%s", fl, ops[i], e->d_name);
      if (is_dir(path)) continue;
      if (push(out, path)) {
        closedir(d);
        return cli_fail(cmd, DBTR_ENOMEM);
      }
    }
    closedir(d);
    if (out->n == before) return cli_usage_error(cmd, "%s: a folder with no .h5 scan in it", ops[i]);
  }
  if (out->n) qsort(out->s, out->n, sizeof *out->s, by_name);
  size_t k = 0;
  for (size_t i = 0; i < out->n; i++) {
    if (k && !strcmp(out->s[k - 1], out->s[i])) {
      free(out->s[i]);
      continue;
    }
    out->s[k++] = out->s[i];
  }
  out->n = k;
  return 0;
}

/* K/N: 1 <= K <= N. */
static int parse_shard(const char *cmd, const char *s, size_t *k, size_t *n) {
  char *end;
  unsigned long a = strtoul(s, &end, 10), b = *end == '/' ? strtoul(end + 1, &end, 10) : 0;
  if (*end || a < 1 || b < 1 || a > b || !strchr(s, '/'))
    return cli_usage_error(cmd, "--shard %s: give K/N, the K-th of N shares, 1 <= K <= N (e.g. 3/8)", s);
  *k = a;
  *n = b;
  return 0;
}

/* DIR/<stem><ext>, the stem the scan's name without its ending (".h5", else the last). */
static int output_of(const char *dir, const char *scan, const char *ext, names *out) {
  const char *base = strrchr(scan, '/');
  base = base ? base + 1 : scan;
  const char *dot = strrchr(base, '.');
  size_t stem = dot && dot != base ? (size_t)(dot - base) : strlen(base);
  char path[4096];
  int w = snprintf(path, sizeof path, "%.*s/%.*s%s", cli_folder_len(dir), dir, (int)stem, base, ext);
  if (w < 0 || (size_t)w >= sizeof path) return dbtr_err(DBTR_EINVAL, "%s: the output's name is too long", scan);
  return push(out, path);
}

/* What the hooks print and count. */
typedef struct {
  const char *cmd;
  const app_many_opts *o;
  size_t total, ended, failed, skipped;
  double t0, last_line;
  int tty, width;
  const char *log;
  const dbtr_batch_item *items;
  char failures[4096]; /* the first failures' scans, for the summary */
} many_state;

static void clear_line(many_state *m) {
  if (m->tty && m->width) fprintf(stderr, "\r%*s\r", m->width, "");
  m->width = 0;
}

static void format_hms(double s, char *out, size_t len) {
  long t = (long)(s + 0.5);
  snprintf(out, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

/* "dbtr recon: 5/16 scans (1 failed, 2 complete already), 7.1 k scans/h, about 0:00:12 left" */
static void progress_line(many_state *m) {
  if (m->o->quiet) return;
  double t = cli_now(), el = t - m->t0;
  if (!m->tty && t - m->last_line < 10.0 && m->ended < m->total) return;
  m->last_line = t;
  size_t worked = m->ended - m->skipped;
  double rate = worked > 0 && el > 0.0 ? (double)worked / el : 0.0;
  char eta[32] = "";
  if (rate > 0.0) format_hms((double)(m->total - m->ended) / rate, eta, sizeof eta);
  char line[256];
  int n = snprintf(line, sizeof line, "dbtr %s: %zu/%zu scans", m->cmd, m->ended, m->total);
  if (m->failed || m->skipped)
    n += snprintf(line + n, sizeof line - (size_t)n, " (%zu failed, %zu complete already)", m->failed, m->skipped);
  if (rate > 0.0)
    snprintf(line + n, sizeof line - (size_t)n, ", %.0f scans/h, about %s left", rate * 3600.0, eta);
  clear_line(m);
  if (m->tty) {
    m->width = fprintf(stderr, "%s", line);
    fflush(stderr);
  } else {
    fprintf(stderr, "%s\n", line);
  }
}

static void on_item(void *user, const dbtr_batch_event *e) {
  many_state *m = user;
  m->ended++;
  if (e->status == DBTR_BATCH_SKIPPED) m->skipped++;
  if (e->status == DBTR_BATCH_FAILED) {
    m->failed++;
    clear_line(m);
    fprintf(stderr, "dbtr %s: %s: %s\n", m->cmd, e->it->scan, e->message);
    size_t used = strlen(m->failures);
    if (used + strlen(e->it->scan) + 3 < sizeof m->failures)
      snprintf(m->failures + used, sizeof m->failures - used, "%s%s", used ? ", " : "", e->it->scan);
  } else if (e->status == DBTR_BATCH_DONE && m->o->verbose) {
    clear_line(m);
    fprintf(stderr, "dbtr %s: wrote %s (%s, %.2f s)\n", m->cmd, e->it->output, e->backend, e->seconds);
  }
  /* What a signal that ends the run now says: what is done stays done, and recorded. */
  char say[512];
  snprintf(say, sizeof say, "\ndbtr %s: interrupted: %zu of %zu scans done, recorded in %s; the same command again "
           "does the rest\n", m->cmd, m->ended - m->failed, m->total, m->log);
  dbtr_atomic_on_signal_message(say);
  progress_line(m);
}

static void on_iteration(void *user, size_t item, int worker, size_t it, double deviance) {
  many_state *m = user;
  clear_line(m);
  fprintf(stderr, "  %s: iteration %3zu/%zu  deviance %.6e  (worker %d)\n", m->items[item].scan, it,
          m->o->batch.iterations, deviance, worker);
}

int app_recon_many(const char *cmd, const char *const *operands, size_t n, app_many_opts *o) {
  names scans = {0}, outs = {0};
  size_t k = 1, shards = 1;
  int ex = o->shard ? parse_shard(cmd, o->shard, &k, &shards) : 0;
  if (!ex) ex = list_scans(cmd, operands, n, &scans);
  if (ex) {
    free_names(&scans);
    return ex;
  }
  if (mkdir(o->out_dir, 0755) != 0 && (errno != EEXIST || !is_dir(o->out_dir))) {
    int e = errno;
    free_names(&scans);
    return cli_usage_error(cmd, "-o %s: many scans go to a folder, and this %s", o->out_dir,
                           e == EEXIST ? "is not one" : strerror(e));
  }
  /* The shard: every N-th scan of the sorted list from the K-th, so shares are disjoint, cover
   * the list, and mix the scans' sizes as the names do. */
  size_t m = 0;
  for (size_t i = 0; i < scans.n; i++) {
    if (i % shards != k - 1) {
      free(scans.s[i]);
      continue;
    }
    scans.s[m++] = scans.s[i];
  }
  scans.n = m;
  int rc = 0;
  for (size_t i = 0; i < scans.n && !rc; i++) rc = output_of(o->out_dir, scans.s[i], o->ext, &outs);
  /* As for one output (cli_check_output): killed runs' temporaries go, and the commits replace
   * only what --force names, whatever appears in the folder while the run writes. */
  if (!rc && outs.n) cli_remove_stale(cmd, outs.s[0]);
  dbtr_atomic_replace_only_allowed();
  for (size_t i = 0; i < outs.n && !rc && o->batch.force; i++) rc = dbtr_atomic_allow_replace(outs.s[i]);
  dbtr_batch_item *items = rc ? NULL : calloc(scans.n ? scans.n : 1, sizeof *items);
  if (!rc && !items) rc = dbtr_err(DBTR_ENOMEM, "the scans' list: out of memory");
  for (size_t i = 0; !rc && i < scans.n; i++) {
    items[i] = (dbtr_batch_item){scans.s[i], outs.s[i]};
    /* Two scans of one stem from two folders would write one file. */
    for (size_t j = 0; j < i && !rc; j++)
      if (!strcmp(outs.s[i], outs.s[j]))
        rc = dbtr_err(DBTR_EINVAL, "%s and %s would both be written to %s: give them in separate runs", scans.s[j],
                      scans.s[i], outs.s[i]);
  }
  char log[4096];
  if (o->log)
    snprintf(log, sizeof log, "%s", o->log);
  else
    snprintf(log, sizeof log, "%.*s/dbtr-recon.jsonl", cli_folder_len(o->out_dir), o->out_dir);
  many_state st = {.cmd = cmd, .o = o, .total = scans.n, .t0 = cli_now(), .tty = isatty(STDERR_FILENO), .log = log,
                   .items = items};
  o->batch.log = log;
  o->batch.on_item = on_item;
  o->batch.on_iteration = o->verbose && !o->quiet ? on_iteration : NULL;
  o->batch.user = &st;
  dbtr_batch_summary sum;
  /* As one scan's run says it (app_recon_open): --backend auto found no GPU. */
  const char *be = o->batch.recon.backend.backend;
  if (!rc && !o->quiet && (!be || !strcmp(be, "auto")) && dbtr_gpu_count() < 1)
    fprintf(stderr, "dbtr %s: warning: no GPU can be used; running on the CPU\n", cmd);
  if (!rc && !o->quiet)
    fprintf(stderr, "dbtr %s: %zu scan%s%s to %s, recorded in %s\n", cmd, scans.n, scans.n == 1 ? "" : "s",
            shards > 1 ? " (this shard's)" : "", o->out_dir, log);
  if (!rc) rc = dbtr_batch_run(items, scans.n, &o->batch, &sum);
  cli_on_interrupt(cmd);
  clear_line(&st);
  if (rc) {
    ex = cli_fail(cmd, rc);
  } else {
    if (!o->quiet) {
      fprintf(stderr, "dbtr %s: %zu scan%s: %zu written, %zu complete already, %zu failed; %.1f s on %d %s worker%s\n",
              cmd, scans.n, scans.n == 1 ? "" : "s", sum.done, sum.skipped, sum.failed, cli_now() - st.t0, sum.workers,
              sum.on_gpu ? "GPU" : "CPU", sum.workers == 1 ? "" : "s");
    }
    if (sum.failed) fprintf(stderr, "dbtr %s: failed: %s\n", cmd, st.failures);
    ex = sum.failed ? EXIT_SOME_FAILED : 0;
  }
  free(items);
  free_names(&scans);
  free_names(&outs);
  return ex;
}
