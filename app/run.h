/* app/run.h: the reconstruction as the commands run it, on the engine's session
 * (engine/session.h): from a scan file's contents to a float volume, with progress lines
 * (app/progress.h). Shared by `recon` and `demo`; also the simulated scan of `phantom` and
 * `demo` with its progress lines. */
#ifndef DBTR_APP_RUN_H
#define DBTR_APP_RUN_H

#include "app/cli.h"
#include "engine/session.h"
#include "io/scan.h"
#include "phantoms/simulate.h"

typedef struct {
  size_t iterations;
  size_t subsets;
  const char *algorithm; /* "transmission", "emission" or NULL (from the data's quantity) */
  double init;           /* uniform start value, 1/mm; 0: estimated from the data */
  const char *start;     /* "fbp": ML-EM starts from the floored FBP volume; NULL: uniform */
  dbtr_fbp_opts fbp;     /* the FBP filter (docs/fbp.md) */
  cli_backend_opts backend;
  int quiet;
  const char *checkpoint;   /* save the state here every checkpoint_every iterations */
  size_t checkpoint_every;
  const char *resume;       /* go on from this checkpoint */
  int vol_double;           /* app_recon_run's vol is doubles (the result rounded to double), else floats */
  /* Called after each iteration with the backend holding the current volume; may be NULL.
   * A non-zero return stops the run with that exit code. */
  int (*on_iteration)(void *user, size_t iteration, dbtr_backend *b);
  void *user;
  /* Filled when not NULL, for the time split a command prints: when (cli_now) the iterations
   * began and ended. */
  struct app_recon_times {
    double iter_start, iter_end;
  } *times;
} app_recon_opts;

/* Grid overrides from the command line (engine/session.h). */
typedef dbtr_grid_given app_grid_opts;

/* --dims, --voxel, --origin (without --dims when the voxel counts come from elsewhere),
 * under the title given. */
cli_group app_grid_group(app_grid_opts *g, const char *title, int with_dims);
/* The reconstruction grid: the scan's /volume, with the overrides applied; an error that
 * says which flags to give when the scan has none. */
int app_grid_resolve(const char *cmd, const char *path, const dbtr_scan *scan, const app_grid_opts *o, dbtr_grid *out);

/* Warns on stderr, with the likely cause, when the scan's geometry or data look like a
 * mistake dbtr cannot refuse (recon/doubt.h): a geometry in cm, line integrals labelled
 * counts. Warnings show even with --quiet: they are about the result, not progress. */
void app_warn_doubts(const char *cmd, const dbtr_scan *scan);

/* Opens the session (engine/session.h) for scan, read from the file source, on grid: the
 * checks (the grid's messages name source; exit 4 with the sizes, before anything is
 * allocated, when the run and the caller's caller_bytes beside it exceed the host's memory),
 * the data, the backend (a line when "auto" fell back to the CPU) and the start volume.
 * Returns an exit code. */
int app_recon_open(const char *cmd, const dbtr_scan *scan, const dbtr_grid *grid, const char *source,
                   const app_recon_opts *o, double caller_bytes, dbtr_session **out);

/* Runs the session's iterations into vol: n_vox floats, or n_vox doubles with o->vol_double,
 * the backend's result rounded to nearest (dbtr_convert_to_float, dbtr_convert_to_double),
 * with the up-front line, progress, a line per iteration, the checkpoints and the resume.
 * backend_name receives the backend that ran ("cpu-float", "gpu:cpu-match"). With a
 * checkpoint, a signal that ends the run says how to resume it. Returns an exit code (0 ok). */
int app_recon_run(const char *cmd, dbtr_session *s, const app_recon_opts *o, void *vol, char *backend_name,
                  size_t name_len);

/* dbtr_simulate with a line per stage and the progress line within each (unless quiet).
 * Returns an exit code. */
int app_simulate(const char *cmd, const dbtr_simulate_opts *o, int quiet, dbtr_scan *scan, float **truth);

#endif
