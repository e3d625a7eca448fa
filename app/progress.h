/* app/progress.h: the progress line of long work, on stderr, for `recon`, `demo`,
 * `validate` and `phantom`. Once one piece of work (an iteration, a stage) has run about
 * 2 s it shows how far it is, how long it has run and about how long it has left, and the
 * same for the run of iterations it belongs to:
 *
 *   dbtr recon: iteration 3/6: 45%, 41 s, about 50 s left; all 6: 24%, 2m 53s, about 9m 10s left
 *
 * On a terminal the line is redrawn in place (\r); otherwise (a log file) a line comes every
 * ~10 s. --quiet turns it off. DBTR_PROGRESS_SECONDS=S replaces the 2 s and the 10 s by S
 * (the tests use 0). The library reports through callbacks and never prints (recon/mlem.h,
 * dbtr_mlem_progress); this file only formats. */
#ifndef DBTR_APP_PROGRESS_H
#define DBTR_APP_PROGRESS_H

#include <stddef.h>

#include "recon/mlem.h"

typedef struct {
  const char *cmd;
  int on;                 /* 0 with --quiet */
  int tty;                /* stderr is a terminal: redraw one line */
  double delay, every;    /* seconds of work before the first line, and between lines */
  char label[128];        /* what runs, before "iteration" ("cpu-double reference (1 of 4)"); may be empty */
  size_t item, first, n;  /* the iteration running, the first this process runs, the last; n = 0: no iterations */
  double t_run, t_item, t_last; /* when the run and the iteration began, and the last line was drawn */
  int width;              /* characters of the line drawn on the terminal; 0: none */
} app_progress;

void app_progress_init(app_progress *p, const char *cmd, int quiet);
/* A run of the iterations first..n under label (may be NULL); n = 0 for one piece of work
 * without iterations, which label names ("voxelising the ground truth"). Starts its clock
 * and that of its first piece. */
void app_progress_run(app_progress *p, const char *label, size_t first, size_t n);
/* Iteration item (first..n) begins. */
void app_progress_item(app_progress *p, size_t item);
/* The running piece is `fraction` done (0 to 1): draws the line when it is time. user is the
 * app_progress; the signature is that of dbtr_mlem_progress's fn. */
void app_progress_update(void *user, double fraction);
/* Erases the line drawn on the terminal, before other output goes to stderr or stdout. */
void app_progress_clear(app_progress *p);
/* The driver's hook (recon/mlem.h) that calls app_progress_update, often enough for the line
 * and rarely enough to cost nothing. */
dbtr_mlem_progress app_progress_hook(app_progress *p);
/* Registers the line the signal handler prints when a signal ends the run
 * (io/atomic_file.h), formatted; on a terminal it starts on a line of its own. */
void app_progress_on_interrupt(const app_progress *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
