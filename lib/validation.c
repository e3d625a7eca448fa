/* lib/validation.c: the public face of the validation engine (recon/validate.h): a scan in,
 * the rows of `dbtr validate` out, through a callback, with the problem set up as the command
 * sets it up (lib/problem.h). */
#include <stdlib.h>

#include "include/dbtr.h"
#include "lib/problem.h"
#include "recon/error.h"
#include "recon/mlem.h"
#include "recon/validate.h"

typedef struct {
  const dbtr_validate *v;
  dbtr_validation_fn on_row;
  void *user;
} row_ctx;

/* The engine's row, as the public struct: the statistics copied, the names the run's own. */
static void forward_row(void *user, const dbtr_validate_row *row) {
  const row_ctx *c = user;
  const dbtr_vpath *p = row->path;
  dbtr_validation_row out = {.iteration = row->iteration,
                             .path = p->name,
                             .reference = row->reference,
                             .explains = p->explains >= 0 ? c->v->paths[p->explains].name : NULL,
                             .is_gpu = p->is_gpu,
                             .proj = *row->proj,
                             .vol = *row->vol,
                             .deviance = row->deviance,
                             .has_referee = row->vs_proj != NULL,
                             .referee = dbtr_validate_referee_name(c->v->referee)};
  if (row->vs_proj) {
    out.vs_proj = *row->vs_proj;
    out.vs_vol = *row->vs_vol;
  }
  c->on_row(c->user, &out);
}

int dbtr_validation_run(const dbtr_scan *scan, const dbtr_grid *grid, const dbtr_validation_opts *opts,
                        dbtr_validation_fn on_row, void *user) {
  if (!scan || !grid || !opts) return dbtr_err(DBTR_EINVAL, "dbtr_validation_run: no scan, grid or options given");
  if (opts->iterations < 1) return dbtr_err(DBTR_EINVAL, "validation: iterations must be >= 1");
  dbtr_algo algo = scan->quantity == DBTR_QUANTITY_COUNTS ? DBTR_ALGO_TRANSMISSION : DBTR_ALGO_EMISSION;
  double *y = NULL, *i0 = NULL;
  dbtr_mlem m = {0};
  dbtr_validate v = {0};
  int rc = dbtr__scan_check_values(scan);
  if (!rc) rc = dbtr__data_expand(scan, algo, &y, &i0);
  dbtr_data data = {.geom = &scan->geom, .grid = grid, .algo = algo, .y = y ? y : scan->proj, .i0 = i0};
  /* The referee goes where the command puts it: on the GPU when one can be used. */
  dbtr_referee_at referee = !opts->referee ? DBTR_REFEREE_NONE
                            : dbtr_gpu_available(NULL, 0) ? DBTR_REFEREE_GPU
                                                          : DBTR_REFEREE_CPU;
  dbtr_validate_opts vo = {.paths = opts->paths, .n_paths = opts->n_paths, .explain = opts->explain,
                           .iterations = opts->iterations, .lockstep = opts->lockstep, .referee = referee};
  if (!rc) rc = dbtr_mlem_init(&m, &data, opts->subsets ? opts->subsets : 1, opts->threads);
  m.prob.gpu_memory = opts->gpu_memory;
  m.prob.gpus = opts->gpus;
  if (!rc) rc = dbtr_validate_open(&v, &m, &vo);
  row_ctx c = {&v, on_row, user};
  if (!rc) rc = dbtr_validate_run(&v, on_row ? forward_row : NULL, &c);
  dbtr_validate_close(&v);
  dbtr_mlem_free(&m);
  free(y);
  free(i0);
  return rc;
}
