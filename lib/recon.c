/* lib/recon.c: the public ML-EM handle (include/dbtr.h): a scan, the driver of recon/mlem.h
 * and one backend, set up as `dbtr recon` sets them up (lib/problem.h), so that the same
 * scan, options and iterations give the same bits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/dbtr.h"
#include "lib/problem.h"
#include "recon/backend.h"
#include "recon/error.h"
#include "recon/mlem.h"
#include "recon/version.h"

struct dbtr_recon {
  dbtr_grid grid;      /* a copy: the driver points at it */
  dbtr_data data;      /* the driver points at it too */
  dbtr_mlem m;
  dbtr_backend *b;
  double *y, *i0;      /* expanded data (lib/problem.h), or NULL */
  char fallback[1024]; /* why "auto" ran on the CPU, or "" */
};

const char *dbtr_version(void) { return DBTR_VERSION_STRING; }

const char *dbtr_mode_name(size_t i) { return i < DBTR_MODE_COUNT ? dbtr_gpu_mode_name((dbtr_gpu_mode)i) : NULL; }

/* The algorithm for the scan: the one asked for, or the one its quantity calls for. */
static int choose_algo(const dbtr_scan *scan, const char *name, dbtr_algo *out) {
  int counts = scan->quantity == DBTR_QUANTITY_COUNTS;
  if (!name) {
    *out = counts ? DBTR_ALGO_TRANSMISSION : DBTR_ALGO_EMISSION;
    return 0;
  }
  if (!strcmp(name, "emission")) {
    *out = DBTR_ALGO_EMISSION;
    return 0;
  }
  if (strcmp(name, "transmission"))
    return dbtr_err(DBTR_EINVAL, "unknown algorithm '%s' (expected transmission or emission)", name);
  if (!counts)
    return dbtr_err(DBTR_EINVAL, "algorithm transmission needs counts; these projections are line integrals "
                                 "(use emission)");
  *out = DBTR_ALGO_TRANSMISSION;
  return 0;
}

int dbtr_recon_open(dbtr_recon **out, const dbtr_scan *scan, const dbtr_grid *grid, const dbtr_recon_opts *opts) {
  static const dbtr_recon_opts defaults = {0};
  const dbtr_recon_opts *o = opts ? opts : &defaults;
  *out = NULL;
  if (!scan || !grid) return dbtr_err(DBTR_EINVAL, "dbtr_recon_open: no scan or no grid given");
  if (!(o->init >= 0.0 && isfinite(o->init)))
    return dbtr_err(DBTR_EINVAL, "init %g: the start value must be finite and >= 0 (0: estimated)", o->init);
  dbtr_algo algo = DBTR_ALGO_TRANSMISSION;
  int rc = choose_algo(scan, o->algorithm, &algo);
  if (!rc) rc = dbtr__scan_check_values(scan);
  if (rc) return rc;
  dbtr_recon *r = calloc(1, sizeof *r);
  if (!r) return dbtr_err(DBTR_ENOMEM, "reconstruction: out of memory");
  r->grid = *grid;
  rc = dbtr__data_expand(scan, algo, &r->y, &r->i0);
  r->data = (dbtr_data){.geom = &scan->geom, .grid = &r->grid, .algo = algo, .y = r->y ? r->y : scan->proj,
                        .i0 = r->i0};
  if (!rc) rc = dbtr_mlem_init(&r->m, &r->data, o->subsets ? o->subsets : 1, o->backend.threads);
  r->m.prob.gpu_memory = o->backend.gpu_memory;
  r->m.prob.gpus = o->backend.gpus;
  if (!rc) rc = dbtr__backend_create(&o->backend, &r->m.prob, &r->b, r->fallback, sizeof r->fallback);
  if (!rc) rc = dbtr_mlem_load(&r->m, r->b, o->init);
  if (rc) {
    dbtr_recon_close(&r);
    return rc;
  }
  *out = r;
  return 0;
}

const char *dbtr_recon_backend(const dbtr_recon *r) { return r->b->name; }

const char *dbtr_recon_fallback(const dbtr_recon *r) { return r->fallback; }

dbtr_precision dbtr_recon_precision(const dbtr_recon *r) { return r->b->precision; }

int dbtr_recon_iterate(dbtr_recon *r, double *deviance) {
  double dev;
  int rc = dbtr_mlem_iterate(&r->m, r->b, &dev);
  if (!rc && deviance) *deviance = dev;
  return rc;
}

int dbtr_recon_volume(dbtr_recon *r, void *out) { return r->b->get_volume(r->b, out); }

void dbtr_recon_close(dbtr_recon **r) {
  if (!*r) return;
  dbtr_backend_destroy(&(*r)->b);
  dbtr_mlem_free(&(*r)->m);
  free((*r)->y);
  free((*r)->i0);
  free(*r);
  *r = NULL;
}
