/* engine/projector.c: the public projector of any path (include/dbtr.h): a backend made as a
 * projector (dbtr_problem.projector: tables and buffers, no data) by the factories every
 * client's session uses (engine/backends.h), so that a path's projections are the ones its
 * reconstruction runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backends.h"
#include "include/dbtr.h"
#include "io/memory.h"
#include "kernels/gpu.h"
#include "recon/cpu.h"
#include "recon/error.h"
#include "recon/geom.h"

struct dbtr_projector {
  dbtr_geom geom; /* copies: the backend points at them */
  dbtr_grid grid;
  size_t *views;  /* every view, in order: the one subset of the problem */
  size_t start[2];
  dbtr_problem prob;
  dbtr_backend *b;
  int device;     /* -1 on the CPU */
  char fallback[1024];
};

/* The host memory a projector holds: the CPU reference's tables where the CPU may run it, and
 * on either side a back projection's input (the CPU's) or a staging volume and projection
 * stack (the GPU's) at most. */
static int check_memory(const dbtr_geom *g, const dbtr_grid *grid, const dbtr_backend_opts *o) {
  dbtr_mode gpu_mode, cpu_mode;
  int gpu, rc = dbtr_backend_choose(o, &gpu_mode, &cpu_mode, &gpu);
  if (rc) return rc;
  int cpu = dbtr_backend_on_cpu(o, gpu);
  dbtr_precision p = dbtr_mode_precision(cpu ? cpu_mode : gpu_mode);
  double n_proj = (double)g->n_views * (double)g->n_rows * (double)g->n_cols;
  double need = (double)dbtr_precision_size(p) * n_proj + (cpu ? dbtr_cpu_projector_bytes(p, g, grid, 1) : 0.0);
  return dbtr_mem_check(need, cpu ? "the projector (CPU)" : "the projector (GPU, host side)");
}

int dbtr_projector_open(dbtr_projector **out, const dbtr_geom *geom, const dbtr_grid *grid,
                        const dbtr_projector_opts *opts) {
  static const dbtr_projector_opts defaults = {.device = 0};
  const dbtr_projector_opts *o = opts ? opts : &defaults;
  *out = NULL;
  if (!geom || !grid) return dbtr_err(DBTR_EINVAL, "projector: no geometry or no grid given");
  if (o->backend.gpus != 0 && o->backend.gpus != 1)
    return dbtr_err(DBTR_EINVAL, "gpus %d: a projector runs on one GPU (device picks which)", o->backend.gpus);
  int rc = dbtr_geom_check(geom, "geometry");
  if (!rc) rc = dbtr_grid_check(grid, geom, "volume grid");
  if (!rc && o->device != 0 && (o->device < 0 || o->device >= dbtr_gpu_count()) &&
      !(o->backend.backend && !strcmp(o->backend.backend, "cpu")))
    rc = dbtr_err(DBTR_EINVAL, "device %d: this machine has %d CUDA device(s)", o->device, dbtr_gpu_count());
  if (!rc) rc = check_memory(geom, grid, &o->backend);
  if (rc) return rc;
  dbtr_projector *p = calloc(1, sizeof *p);
  if (!p) return dbtr_err(DBTR_ENOMEM, "projector: out of memory");
  p->grid = *grid;
  rc = dbtr_geom_copy(&p->geom, geom);
  if (!rc) rc = dbtr_alloc((void **)&p->views, geom->n_views, sizeof *p->views, "view list");
  if (rc) {
    if (!p->views) dbtr_geom_free(&p->geom);
    free(p);
    return rc;
  }
  for (size_t k = 0; k < geom->n_views; k++) p->views[k] = k;
  p->start[1] = geom->n_views;
  p->prob = (dbtr_problem){.geom = &p->geom, .grid = &p->grid, .algo = DBTR_ALGO_EMISSION, .n_subsets = 1,
                           .subset_views = p->views, .subset_start = p->start, .threads = o->backend.threads,
                           .gpu_memory = o->backend.gpu_memory, .gpus = 1, .gpu_first = o->device, .projector = 1};
  rc = dbtr_backend_open(&o->backend, &p->prob, &p->b, p->fallback, sizeof p->fallback);
  if (rc) {
    dbtr_projector_close(&p);
    return rc;
  }
  p->device = dbtr_mode_info_of(p->b->mode)->gpu ? o->device : -1;
  *out = p;
  return 0;
}

const char *dbtr_projector_backend(const dbtr_projector *p) { return p->b->name; }
const char *dbtr_projector_fallback(const dbtr_projector *p) { return p->fallback; }
dbtr_precision dbtr_projector_precision(const dbtr_projector *p) { return p->b->precision; }
int dbtr_projector_device(const dbtr_projector *p) { return p->device; }

static int project(dbtr_projector *p, int back, const void *in, void *out, dbtr_memory where) {
  if (!p || !in || !out) return dbtr_err(DBTR_EINVAL, "projector: no projector or no array given");
  if (where != DBTR_MEMORY_HOST && where != DBTR_MEMORY_DEVICE)
    return dbtr_err(DBTR_EINVAL, "projector: unknown memory kind %d", (int)where);
  return p->b->project(p->b, back, in, out, where == DBTR_MEMORY_DEVICE);
}

int dbtr_projector_forward(dbtr_projector *p, const void *vol, void *proj, dbtr_memory where) {
  return project(p, 0, vol, proj, where);
}

int dbtr_projector_back(dbtr_projector *p, const void *proj, void *vol, dbtr_memory where) {
  return project(p, 1, proj, vol, where);
}

void dbtr_projector_close(dbtr_projector **p) {
  if (!p || !*p) return;
  dbtr_backend_destroy(&(*p)->b);
  dbtr_geom_free(&(*p)->geom);
  free((*p)->views);
  free(*p);
  *p = NULL;
}
