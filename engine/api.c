/* engine/api.c: the public ML-EM handle (include/dbtr.h): a session (engine/session.h), opened
 * as `dbtr recon` opens it, so that the same scan, options and iterations give the same bits. */
#include <stdlib.h>

#include "engine/session.h"
#include "include/dbtr.h"
#include "recon/error.h"
#include "recon/version.h"

struct dbtr_recon {
  dbtr_session *s;
};

const char *dbtr_version(void) { return DBTR_VERSION_STRING; }

int dbtr_recon_open(dbtr_recon **out, const dbtr_scan *scan, const dbtr_grid *grid, const dbtr_recon_opts *opts) {
  *out = NULL;
  if (!scan || !grid) return dbtr_err(DBTR_EINVAL, "dbtr_recon_open: no scan or no grid given");
  dbtr_session_opts so = {.recon = opts ? *opts : (dbtr_recon_opts){0}};
  dbtr_recon *r = calloc(1, sizeof *r);
  if (!r) return dbtr_err(DBTR_ENOMEM, "reconstruction: out of memory");
  int rc = dbtr_session_open(&r->s, scan, grid, &so);
  if (rc) {
    free(r);
    return rc;
  }
  *out = r;
  return 0;
}

const char *dbtr_recon_backend(const dbtr_recon *r) { return dbtr_session_backend(r->s)->name; }

const char *dbtr_recon_fallback(const dbtr_recon *r) { return dbtr_session_fallback(r->s); }

dbtr_precision dbtr_recon_precision(const dbtr_recon *r) { return dbtr_session_backend(r->s)->precision; }

int dbtr_recon_iterate(dbtr_recon *r, double *deviance) {
  double dev;
  int rc = dbtr_mlem_iterate(dbtr_session_mlem(r->s), dbtr_session_backend(r->s), &dev);
  if (!rc && deviance) *deviance = dev;
  return rc;
}

int dbtr_recon_volume(dbtr_recon *r, void *out) {
  dbtr_backend *b = dbtr_session_backend(r->s);
  return b->get_volume(b, out);
}

void dbtr_recon_close(dbtr_recon **r) {
  if (!*r) return;
  dbtr_session_close(&(*r)->s);
  free(*r);
  *r = NULL;
}
