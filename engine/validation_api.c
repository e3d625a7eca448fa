/* engine/validation_api.c: the public face of the validation engine (engine/validate.h): a
 * scan in, the rows of `dbtr validate` out, through a callback, on the problem of a session
 * opened as the command opens it (engine/session.h). */
#include <stdlib.h>

#include "engine/session.h"
#include "engine/validate.h"
#include "include/dbtr.h"
#include "quality/quality.h"
#include "recon/error.h"

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
  if (row->quality) {
    out.n_quality = c->v->n_objects;
    out.quality = row->quality;
  }
  c->on_row(c->user, &out);
}

int dbtr_validation_run(const dbtr_scan *scan, const dbtr_grid *grid, const dbtr_validation_opts *opts,
                        dbtr_validation_fn on_row, void *user) {
  if (!scan || !grid || !opts) return dbtr_err(DBTR_EINVAL, "dbtr_validation_run: no scan, grid or options given");
  if (opts->iterations < 1) return dbtr_err(DBTR_EINVAL, "validation: iterations must be >= 1");
  dbtr_session_opts so = {.recon = {.subsets = opts->subsets,
                                    .backend = {.threads = opts->threads, .gpu_memory = opts->gpu_memory,
                                                .gpus = opts->gpus}},
                          .problem_only = 1};
  dbtr_session *s = NULL;
  dbtr_validate v = {0};
  /* The referee goes where the command puts it: on the GPU when one can be used. */
  dbtr_referee_at referee = !opts->referee ? DBTR_REFEREE_NONE
                            : dbtr_gpu_available(NULL, 0) ? DBTR_REFEREE_GPU
                                                          : DBTR_REFEREE_CPU;
  /* The objects first: a file without them is refused before any work, as the command does. */
  dbtr_phantom objects = {0};
  int quality = opts->quality_scan || opts->quality_regions, rc = 0;
  if (quality) rc = dbtr_quality_objects(&objects, opts->quality_scan, opts->quality_regions);
  dbtr_validate_opts vo = {.paths = opts->paths, .n_paths = opts->n_paths, .explain = opts->explain,
                           .iterations = opts->iterations, .lockstep = opts->lockstep, .referee = referee,
                           .objects = quality ? &objects : NULL};
  if (!rc) rc = dbtr_session_open(&s, scan, grid, &so);
  if (!rc) rc = dbtr_validate_open(&v, dbtr_session_mlem(s), &vo);
  row_ctx c = {&v, on_row, user};
  if (!rc) rc = dbtr_validate_run(&v, on_row ? forward_row : NULL, &c);
  dbtr_validate_close(&v);
  dbtr_session_close(&s);
  dbtr_phantom_free(&objects);
  return rc;
}
