/* app/run.c: the reconstruction as the commands run it. */
#include "app/run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/progress.h"
#include "io/atomic_file.h"
#include "recon/doubt.h"
#include "recon/error.h"

/* 2^30 voxels along an axis is far beyond any detector; the bound keeps nx * ny * nz in
 * range of the overflow checks that follow (recon/geom.h). */
static const cli_opt grid_rows[] = {
    {"--dims", 0, CLI_TRIPLE, offsetof(app_grid_opts, dims), "NX,NY,NZ", .help = "voxels along x, y and z", .min = 1,
     .max = 1073741823.0, .flags = CLI_WHOLE, .given = CLI_GIVEN(app_grid_opts, has_dims)},
    {"--voxel", 0, CLI_TRIPLE, offsetof(app_grid_opts, voxel), "DX,DY,DZ", .help = "voxel size in mm", .min = 0.0,
     .max = HUGE_VAL, .flags = CLI_ABOVE_MIN, .given = CLI_GIVEN(app_grid_opts, has_voxel)},
    {"--origin", 0, CLI_TRIPLE, offsetof(app_grid_opts, origin), "X,Y,Z", .help = "centre of voxel 0,0,0 in mm",
     .min = -HUGE_VAL, .max = HUGE_VAL, .given = CLI_GIVEN(app_grid_opts, has_origin)},
};

cli_group app_grid_group(app_grid_opts *g, const char *title, int with_dims) {
  return with_dims ? (cli_group){title, CLI_ROWS(grid_rows), g} : (cli_group){title, grid_rows + 1, 2, g};
}

int app_grid_resolve(const char *cmd, const char *path, const dbtr_scan *scan, const app_grid_opts *o, dbtr_grid *out) {
  /* Checked where the session opens (engine/session.h), under the scan's name. */
  int rc = dbtr_session_grid(scan, path, o, out);
  return rc ? cli_fail(cmd, rc) : 0;
}

void app_warn_doubts(const char *cmd, const dbtr_scan *scan) {
  dbtr_doubt d[3];
  size_t n = dbtr_doubt_geometry(&scan->geom, d, 2);
  if (scan->quantity == DBTR_QUANTITY_COUNTS)
    n += dbtr_doubt_counts(scan->proj, scan->geom.n_views * scan->geom.n_rows * scan->geom.n_cols, d + n, 1);
  for (size_t i = 0; i < n; i++) fprintf(stderr, "dbtr %s: warning: %s\n", cmd, d[i].text);
}

/* --checkpoint: what the signal handler says if a signal ends the run now. saved names the
 * file holding the latest state (NULL: none yet). */
static void on_interrupt_say(const app_progress *pr, const app_recon_opts *o, const char *saved) {
  if (!saved)
    app_progress_on_interrupt(pr, "dbtr %s: interrupted before the first checkpoint: nothing to resume from\n", pr->cmd);
  else
    app_progress_on_interrupt(pr, "dbtr %s: interrupted; to go on, run the same command with --resume %s%s%s%s\n",
                              pr->cmd, saved, o->resume && strcmp(o->resume, saved) ? " (in place of --resume " : "",
                              o->resume && strcmp(o->resume, saved) ? o->resume : "",
                              o->resume && strcmp(o->resume, saved) ? ")" : "");
}

/* What a run's hooks need (engine/session.h, dbtr_session_run_opts). */
typedef struct {
  const app_recon_opts *o;
  app_progress pr;
  const dbtr_mlem *m;
  double *devs;   /* each iteration's deviance, from the first run, for the doubts about the fit */
  size_t first;
  unsigned said;
  double t;       /* when the iteration began */
} run_state;

static void on_begin(void *user, size_t it) {
  run_state *r = user;
  r->t = cli_now();
  app_progress_item(&r->pr, it);
}

static void on_saved(void *user, const char *path) {
  run_state *r = user;
  on_interrupt_say(&r->pr, r->o, path);
}

/* A line per iteration, the doubts about the fit, the caller's hook. */
static int on_end(void *user, size_t it, double dev, dbtr_backend *b) {
  run_state *r = user;
  const app_recon_opts *o = r->o;
  app_progress_clear(&r->pr);
  if (!o->quiet)
    fprintf(stderr, "  iteration %3zu/%zu  deviance %.6e  (%.1f per pixel)  %.2f s\n", it, o->iterations, dev,
            dev / (double)r->m->n_proj, cli_now() - r->t);
  r->devs[it - r->first] = dev;
  dbtr_doubt doubt;
  if (dbtr_doubt_fit(r->devs, it - r->first + 1, r->m->n_proj, o->subsets, &r->said, &doubt))
    fprintf(stderr, "dbtr %s: warning: %s\n", r->pr.cmd, doubt.text);
  return o->on_iteration ? o->on_iteration(o->user, it, b) : 0;
}

int app_recon_open(const char *cmd, const dbtr_scan *scan, const dbtr_grid *grid, const char *source,
                   const app_recon_opts *o, double caller_bytes, dbtr_session **out) {
  dbtr_session_opts so = {.recon = {.subsets = o->subsets, .algorithm = o->algorithm, .init = o->init,
                                    .backend = o->backend, .start = o->start, .fbp = o->fbp},
                          .source = source, .values_checked = 1, .caller_bytes = caller_bytes};
  int rc = dbtr_session_open(out, scan, grid, &so);
  if (rc) return cli_fail(cmd, rc);
  const char *fallback = dbtr_session_fallback(*out);
  if (fallback[0] && !o->quiet) fprintf(stderr, "dbtr %s: warning: %s; running on the CPU\n", cmd, fallback);
  return 0;
}

int app_recon_run(const char *cmd, dbtr_session *s, const app_recon_opts *o, void *vol, char *backend_name,
                  size_t name_len) {
  dbtr_backend *b = dbtr_session_backend(s);
  const dbtr_mlem *m = dbtr_session_mlem(s);
  snprintf(backend_name, name_len, "%s", b->name);
  size_t first = 1;
  int rc, ex = 0;
  if (o->resume) {
    size_t done;
    char writer[64];
    if ((rc = dbtr_session_resume(s, o->resume, &done, writer, sizeof writer))) return cli_fail(cmd, rc);
    if (done >= o->iterations)
      return cli_usage_error(cmd, "--resume %s: the checkpoint already holds %llu iterations; ask for more with "
                             "--iterations", o->resume, (unsigned long long)done);
    first = done + 1;
    if (!o->quiet)
      fprintf(stderr, "dbtr %s: resuming after iteration %llu (checkpoint written by %s)\n", cmd,
              (unsigned long long)done, writer);
  }
  const dbtr_session_setup *su = dbtr_session_setup_times(s);
  if (!o->quiet)
    fprintf(stderr,
            "dbtr %s: %s ML-EM, %zu iteration%s x %zu subset%s on %s, volume %zu x %zu x %zu (set-up %.2f s: checks %.2f, "
            "data %.2f, backend %.2f, start %.2f)\n",
            cmd, m->prob.algo == DBTR_ALGO_TRANSMISSION ? "transmission" : "emission", o->iterations,
            o->iterations == 1 ? "" : "s", o->subsets, o->subsets == 1 ? "" : "s", b->name, m->prob.grid->nx,
            m->prob.grid->ny, m->prob.grid->nz, su->checks + su->data + su->backend + su->start, su->checks, su->data,
            su->backend, su->start);
  if (!o->quiet && b->memory[0]) fprintf(stderr, "dbtr %s: %s\n", cmd, b->memory);
  /* Where the result's type is the backend's, the volume comes back into vol itself, with no
   * second buffer to fault in, fill and convert (on thesis that was most of 0.72 s of read-back);
   * the checkpoints use it too. */
  int direct = b->precision == (o->vol_double ? DBTR_PREC_DOUBLE : DBTR_PREC_FLOAT);
  void *tmp = direct ? vol : NULL;
  run_state r = {.o = o, .m = m, .first = first};
  if ((!direct && (rc = dbtr_alloc(&tmp, m->n_vox, dbtr_precision_size(b->precision), "volume"))) ||
      (rc = dbtr_alloc((void **)&r.devs, o->iterations, sizeof *r.devs, "deviances"))) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  app_progress_init(&r.pr, cmd, o->quiet);
  app_progress_run(&r.pr, NULL, first, o->iterations);
  const dbtr_mlem_progress hook = app_progress_hook(&r.pr);
  if (o->checkpoint) on_interrupt_say(&r.pr, o, o->resume);
  dbtr_session_run_opts ro = {.first = first, .last = o->iterations, .progress = o->quiet ? NULL : &hook,
                              .begin = on_begin, .end = on_end, .saved = on_saved, .user = &r,
                              .checkpoint = o->checkpoint, .checkpoint_every = o->checkpoint_every, .scratch = tmp};
  if (o->times) o->times->iter_start = cli_now();
  rc = dbtr_session_run(s, &ro);
  app_progress_clear(&r.pr);
  cli_on_interrupt(cmd); /* the resume hint held during the iterations only */
  /* A DBTR_E* code is the session's; a positive one, an exit code the caller's hook returned. */
  if (rc) {
    ex = rc < 0 ? cli_fail(cmd, rc) : rc;
    goto done;
  }
  if (o->times) o->times->iter_end = cli_now();
  /* The last checkpoint was written after the last iteration: named like every output. */
  if (o->checkpoint)
    cli_wrote(cmd, o->quiet, o->checkpoint, "checkpoint: the state after iteration %zu, for --resume", o->iterations);
  if ((rc = dbtr_session_get_volume(s, tmp))) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  if (!direct && o->vol_double)
    dbtr_convert_to_double(b->precision, tmp, m->n_vox, vol);
  else if (!direct)
    dbtr_convert_to_float(b->precision, tmp, m->n_vox, vol);
done:
  if (tmp != vol) free(tmp);
  free(r.devs);
  return ex;
}

typedef struct {
  const char *cmd;
  const dbtr_simulate_opts *o;
  const dbtr_scan *scan;
  double t0; /* start of the stage being timed */
  app_progress line;
} sim_progress;

static void print_sim_progress(void *user, dbtr_simulate_stage stage, const dbtr_phantom *ph) {
  sim_progress *p = user;
  const dbtr_geom *g = &p->scan->geom;
  app_progress_clear(&p->line);
  if (stage == DBTR_SIMULATE_SCANNED)
    fprintf(stderr, "dbtr %s: %s phantom on the %s system: %zu views of %zu x %zu pixels, %s (%.2f s)\n", p->cmd,
            ph->name, p->o->system->name, g->n_views, g->n_cols, g->n_rows,
            p->o->line_integrals ? "noiseless line integrals" : "Poisson counts", cli_now() - p->t0);
  else
    fprintf(stderr, "dbtr %s: ground truth voxelised (%.2f s)\n", p->cmd, cli_now() - p->t0);
  p->t0 = cli_now();
  app_progress_run(&p->line, "voxelising the ground truth", 0, 0);
}

static void advance_sim_progress(void *user, dbtr_simulate_stage stage, double fraction) {
  (void)stage;
  app_progress_update(&((sim_progress *)user)->line, fraction);
}

int app_simulate(const char *cmd, const dbtr_simulate_opts *o, int quiet, dbtr_scan *scan, float **truth) {
  dbtr_simulate_opts so = *o;
  sim_progress p = {.cmd = cmd, .o = o, .scan = scan, .t0 = cli_now()};
  app_progress_init(&p.line, cmd, quiet);
  app_progress_run(&p.line, "projecting the views", 0, 0);
  so.progress = quiet ? NULL : print_sim_progress;
  so.advance = quiet ? NULL : advance_sim_progress;
  so.user = &p;
  int rc = dbtr_simulate(&so, scan, truth);
  app_progress_clear(&p.line);
  return rc ? cli_fail(cmd, rc) : 0;
}
