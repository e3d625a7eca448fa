/* app/run.c: the reconstruction as the commands run it. */
#include "app/run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/progress.h"
#include "io/atomic_file.h"
#include "io/checkpoint.h"
#include "lib/problem.h"
#include "recon/cpu.h"
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
  if (!scan->has_grid && !(o->has_dims && o->has_voxel && o->has_origin))
    return cli_usage_error(cmd,
                           "%s has no /volume grid: give --dims NX,NY,NZ --voxel DX,DY,DZ --origin X,Y,Z "
                           "(mm, the centre of voxel 0,0,0)",
                           path);
  dbtr_grid g = scan->grid;
  if (o->has_dims) {
    g.nx = (size_t)o->dims[0];
    g.ny = (size_t)o->dims[1];
    g.nz = (size_t)o->dims[2];
  }
  if (o->has_voxel) {
    g.dx = o->voxel[0];
    g.dy = o->voxel[1];
    g.dz = o->voxel[2];
  }
  if (o->has_origin) memcpy(g.origin, o->origin, sizeof g.origin);
  int rc = dbtr_grid_check(&g, &scan->geom, path);
  if (rc) return cli_fail(cmd, rc);
  *out = g;
  return 0;
}

/* Loads a checkpoint into b after checking it belongs to this problem; *first is the
 * next iteration to run. */
static int resume_from(const char *cmd, const app_recon_opts *o, const dbtr_checkpoint_info *want, dbtr_backend *b,
                       size_t *first) {
  dbtr_checkpoint_info ci;
  void *vol = NULL;
  int rc = dbtr_checkpoint_read(o->resume, &ci, &vol), ex = 0;
  if (!rc) rc = dbtr_checkpoint_match(o->resume, &ci, want);
  if (rc)
    ex = cli_fail(cmd, rc);
  else if (ci.iterations >= o->iterations)
    ex = cli_usage_error(cmd, "--resume %s: the checkpoint already holds %llu iterations; ask for more with --iterations",
                         o->resume, (unsigned long long)ci.iterations);
  else if ((rc = b->set_volume(b, vol)))
    ex = cli_fail(cmd, rc);
  if (!ex) {
    *first = (size_t)ci.iterations + 1;
    if (!o->quiet)
      fprintf(stderr, "dbtr %s: resuming after iteration %llu (checkpoint written by %s)\n", cmd,
              (unsigned long long)ci.iterations, ci.backend);
  }
  free(vol);
  return ex;
}

void app_warn_doubts(const char *cmd, const dbtr_scan *scan) {
  dbtr_doubt d[3];
  size_t n = dbtr_doubt_geometry(&scan->geom, d, 2);
  if (scan->quantity == DBTR_QUANTITY_COUNTS)
    n += dbtr_doubt_counts(scan->proj, scan->geom.n_views * scan->geom.n_rows * scan->geom.n_cols, d + n, 1);
  for (size_t i = 0; i < n; i++) fprintf(stderr, "dbtr %s: warning: %s\n", cmd, d[i].text);
}

int app_check_memory(const char *cmd, const dbtr_scan *scan, const dbtr_grid *grid, const app_recon_opts *o) {
  double n_proj = (double)(scan->geom.n_views * scan->geom.n_rows * scan->geom.n_cols);
  double n_vox = (double)grid->nx * (double)grid->ny * (double)grid->nz;
  dbtr_precision p = dbtr__backend_precision(&o->backend);
  double es = (double)dbtr_precision_size(p);
  /* The volume written (float or double), the data in double (y and i0, dbtr__data_expand),
   * the driver's conversions when it loads a backend (volume, y, i0) and the volume read back. */
  double need = (o->vol_double ? 8.0 : 4.0) * n_vox + 16.0 * n_proj + es * (2.0 * n_vox + 2.0 * n_proj);
  const char *be = o->backend.backend ? o->backend.backend : "auto";
  char name[256];
  int cpu = !strcmp(be, "cpu") || (!strcmp(be, "auto") && !dbtr_gpu_available(name, sizeof name));
  if (cpu) need += dbtr_cpu_backend_bytes(p, &scan->geom, grid);
  char what[128];
  snprintf(what, sizeof what, "the reconstruction (%s, %s)", cpu ? "CPU" : "GPU, host side",
           dbtr_precision_name(p));
  int rc = dbtr_mem_check(need, what);
  return rc ? cli_fail(cmd, rc) : 0;
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

/* Iterations first..o->iterations on b, with the progress line, a line per iteration, the
 * doubts about the fit, the checkpoints and the caller's hook. tmp holds a volume of b's
 * precision. Returns an exit code. */
static int iterate(const char *cmd, const app_recon_opts *o, const dbtr_mlem *m, dbtr_backend *b, size_t first,
                   dbtr_checkpoint_info *ci, void *tmp) {
  double *devs; /* each iteration's deviance, for the doubts about the fit */
  unsigned said = 0;
  int rc = dbtr_alloc((void **)&devs, o->iterations, sizeof *devs, "deviances"), ex = 0;
  if (rc) return cli_fail(cmd, rc);
  app_progress pr;
  app_progress_init(&pr, cmd, o->quiet);
  app_progress_run(&pr, NULL, first, o->iterations);
  const dbtr_mlem_progress hook = app_progress_hook(&pr);
  if (o->checkpoint) on_interrupt_say(&pr, o, o->resume);
  for (size_t it = first; it <= o->iterations && !ex; it++) {
    double t = cli_now(), dev;
    app_progress_item(&pr, it);
    rc = dbtr_mlem_iterate_progress(m, b, &dev, o->quiet ? NULL : &hook);
    app_progress_clear(&pr);
    if (rc) {
      ex = cli_fail(cmd, rc);
      break;
    }
    if (!o->quiet)
      fprintf(stderr, "  iteration %3zu/%zu  deviance %.6e  (%.1f per pixel)  %.2f s\n", it, o->iterations, dev,
              dev / (double)m->n_proj, cli_now() - t);
    devs[it - first] = dev;
    dbtr_doubt doubt;
    if (dbtr_doubt_fit(devs, it - first + 1, m->n_proj, o->subsets, &said, &doubt))
      fprintf(stderr, "dbtr %s: warning: %s\n", cmd, doubt.text);
    if (o->checkpoint && (it % o->checkpoint_every == 0 || it == o->iterations)) {
      ci->iterations = it;
      if ((rc = b->get_volume(b, tmp)) || (rc = dbtr_checkpoint_write(o->checkpoint, ci, tmp))) {
        ex = cli_fail(cmd, rc);
        break;
      }
      on_interrupt_say(&pr, o, o->checkpoint);
    }
    if (o->on_iteration) ex = o->on_iteration(o->user, it, b);
  }
  dbtr_atomic_on_signal_message(NULL);
  free(devs);
  return ex;
}

int app_reconstruct(const char *cmd, const dbtr_scan *scan, const dbtr_grid *grid, const app_recon_opts *o,
                    void *vol, char *backend_name, size_t name_len) {
  dbtr_algo algo = scan->quantity == DBTR_QUANTITY_COUNTS ? DBTR_ALGO_TRANSMISSION : DBTR_ALGO_EMISSION;
  if (o->algorithm) algo = strcmp(o->algorithm, "emission") ? DBTR_ALGO_TRANSMISSION : DBTR_ALGO_EMISSION;
  if (algo == DBTR_ALGO_TRANSMISSION && scan->quantity != DBTR_QUANTITY_COUNTS)
    return cli_usage_error(cmd, "--algorithm transmission needs counts; this scan holds line integrals (use emission)");
  double *y = NULL, *i0 = NULL, t0 = cli_now();
  int rc = dbtr__data_expand(scan, algo, &y, &i0);
  if (rc) return cli_fail(cmd, rc);
  dbtr_data data = {.geom = &scan->geom, .grid = grid, .algo = algo, .y = y ? y : scan->proj, .i0 = i0};
  dbtr_mlem m;
  dbtr_backend *b = NULL;
  void *tmp = NULL;
  int ex = 0;
  if ((rc = dbtr_mlem_init(&m, &data, o->subsets, o->backend.threads))) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  m.prob.gpu_memory = o->backend.gpu_memory;
  m.prob.gpus = o->backend.gpus;
  /* The set-up's parts, for the up-front line: the data (expansion, constants), the backend
   * (on the GPU: context, memory, ray records, tables) and the start volume with the data
   * loaded into it. */
  double t_data = cli_now(), t_backend;
  if ((rc = cli_backend_create(cmd, &o->backend, &m.prob, &b, o->quiet))) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  t_backend = cli_now();
  if ((rc = dbtr_mlem_load(&m, b, o->init))) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  snprintf(backend_name, name_len, "%s", b->name);
  size_t first = 1;
  dbtr_checkpoint_info ci;
  if (o->resume || o->checkpoint) dbtr_checkpoint_identify(&ci, scan, grid, o->subsets, algo, b);
  if (o->resume && (ex = resume_from(cmd, o, &ci, b, &first))) goto done;
  if (!o->quiet)
    fprintf(stderr,
            "dbtr %s: %s ML-EM, %zu iteration%s x %zu subset%s on %s, volume %zu x %zu x %zu (set-up %.2f s: data %.2f, "
            "backend %.2f, start %.2f)\n",
            cmd, algo == DBTR_ALGO_TRANSMISSION ? "transmission" : "emission", o->iterations, o->iterations == 1 ? "" : "s",
            o->subsets, o->subsets == 1 ? "" : "s", b->name, grid->nx, grid->ny, grid->nz, cli_now() - t0, t_data - t0,
            t_backend - t_data, cli_now() - t_backend);
  if (!o->quiet && b->memory[0]) fprintf(stderr, "dbtr %s: %s\n", cmd, b->memory);
  /* Where the result's type is the backend's, the volume comes back into vol itself, with no
   * second buffer to fault in, fill and convert (on thesis that was most of 0.72 s of read-back). */
  int direct = b->precision == (o->vol_double ? DBTR_PREC_DOUBLE : DBTR_PREC_FLOAT);
  if (direct)
    tmp = vol;
  else if ((rc = dbtr_alloc(&tmp, m.n_vox, dbtr_precision_size(b->precision), "volume"))) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  if (o->times) o->times->iter_start = cli_now();
  if ((ex = iterate(cmd, o, &m, b, first, &ci, tmp))) goto done;
  if (o->times) o->times->iter_end = cli_now();
  if ((rc = b->get_volume(b, tmp))) {
    ex = cli_fail(cmd, rc);
    goto done;
  }
  if (!direct && o->vol_double)
    dbtr_convert_to_double(b->precision, tmp, m.n_vox, vol);
  else if (!direct)
    dbtr_convert_to_float(b->precision, tmp, m.n_vox, vol);
done:
  if (tmp != vol) free(tmp);
  dbtr_backend_destroy(&b);
  dbtr_mlem_free(&m);
  free(y);
  free(i0);
  if (o->times) o->times->done = cli_now();
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
