/* app/progress.c: the progress line of long work (app/progress.h). */
#include "app/progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/cli.h"
#include "io/atomic_file.h"

/* On a terminal the line appears after 2 s of work, so short iterations stay quiet, and is
 * redrawn twice a second; in a log a line every 10 s is enough to see a run is alive. */
#define TTY_DELAY 2.0
#define TTY_EVERY 0.5
#define LOG_EVERY 10.0
/* The driver calls back at most this often: far more often than the line changes, and
 * rarely enough that its clock reads cost nothing. */
#define HOOK_EVERY 0.05

void app_progress_init(app_progress *p, const char *cmd, int quiet) {
  memset(p, 0, sizeof *p);
  p->cmd = cmd;
  p->on = !quiet;
  p->tty = isatty(STDERR_FILENO);
  p->delay = p->tty ? TTY_DELAY : LOG_EVERY;
  p->every = p->tty ? TTY_EVERY : LOG_EVERY;
  const char *env = getenv("DBTR_PROGRESS_SECONDS");
  char *end;
  double s = env ? strtod(env, &end) : -1.0;
  if (env && end != env && !*end && s >= 0.0) p->delay = p->every = s;
}

void app_progress_run(app_progress *p, const char *label, size_t first, size_t n) {
  snprintf(p->label, sizeof p->label, "%s", label ? label : "");
  p->first = p->item = first;
  p->n = n;
  p->t_run = p->t_item = cli_now();
}

void app_progress_item(app_progress *p, size_t item) {
  p->item = item;
  p->t_item = cli_now();
}

/* "41 s", "2m 53s", "3h 05m". */
static void fmt_time(double s, char *buf, size_t len) {
  long t = (long)(s + 0.5);
  if (t < 60)
    snprintf(buf, len, "%ld s", t);
  else if (t < 3600)
    snprintf(buf, len, "%ldm %02lds", t / 60, t % 60);
  else
    snprintf(buf, len, "%ldh %02ldm", t / 3600, t % 3600 / 60);
}

/* "45%, 41 s, about 50 s left" for work `fraction` done after `elapsed` seconds; the time
 * left is what the same rate needs for the rest, once there is a rate to go by. */
static int fmt_part(char *buf, size_t len, double fraction, double elapsed) {
  char el[32], left[32];
  fmt_time(elapsed, el, sizeof el);
  if (fraction < 0.005) return snprintf(buf, len, "%.0f%%, %s", 100.0 * fraction, el);
  fmt_time(elapsed * (1.0 - fraction) / fraction, left, sizeof left);
  return snprintf(buf, len, "%.0f%%, %s, about %s left", 100.0 * fraction, el, left);
}

static void draw(app_progress *p, double fraction, double now) {
  char line[512];
  int n = snprintf(line, sizeof line, "dbtr %s: %s%s", p->cmd, p->label, *p->label && p->n ? ": " : "");
  if (p->n) n += snprintf(line + n, sizeof line - (size_t)n, "iteration %zu/%zu", p->item, p->n);
  n += snprintf(line + n, sizeof line - (size_t)n, ": ");
  n += fmt_part(line + n, sizeof line - (size_t)n, fraction, now - p->t_item);
  if (p->n > p->first) {
    double run = ((double)(p->item - p->first) + fraction) / (double)(p->n - p->first + 1);
    n += snprintf(line + n, sizeof line - (size_t)n, "; all %zu: ", p->n);
    n += fmt_part(line + n, sizeof line - (size_t)n, run, now - p->t_run);
  }
  if (n >= (int)sizeof line) n = (int)sizeof line - 1;
  if (p->tty) {
    /* Spaces cover what is left of a longer line drawn before. */
    fprintf(stderr, "\r%s%*s", line, p->width > n ? p->width - n : 0, "");
    p->width = n;
  } else {
    fprintf(stderr, "%s\n", line);
  }
  fflush(stderr);
  p->t_last = now;
}

void app_progress_update(void *user, double fraction) {
  app_progress *p = user;
  if (!p->on) return;
  double now = cli_now();
  if (now - p->t_item < p->delay || (p->t_last > 0.0 && now - p->t_last < p->every)) return;
  draw(p, fraction < 0.0 ? 0.0 : fraction > 1.0 ? 1.0 : fraction, now);
}

void app_progress_clear(app_progress *p) {
  if (!p->width) return;
  fprintf(stderr, "\r%*s\r", p->width, "");
  fflush(stderr);
  p->width = 0;
}

dbtr_mlem_progress app_progress_hook(app_progress *p) {
  return (dbtr_mlem_progress){app_progress_update, p, p->every < HOOK_EVERY ? p->every : HOOK_EVERY};
}

void app_progress_on_interrupt(const app_progress *p, const char *fmt, ...) {
  char line[1024];
  int n = snprintf(line, sizeof line, "%s", p->tty ? "\n" : "");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
  va_end(ap);
  dbtr_atomic_on_signal_message(line);
}
