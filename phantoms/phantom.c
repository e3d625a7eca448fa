/* phantoms/phantom.c: making and freeing a phantom of a given kind (phantoms/phantom.h).
 * It sits above the builders it picks between (phantoms/breast.c, phantoms/acr.c), which sit
 * above the shape code they build with (phantoms/shapes.c): each file calls only downwards. */
#include "phantoms/phantom.h"

#include <stdlib.h>
#include <string.h>

#include "phantoms/builders.h"
#include "recon/error.h"

int dbtr_phantom_kind_from_name(const char *name) {
  if (name && strcmp(name, "breast") == 0) return DBTR_PHANTOM_BREAST;
  if (name && strcmp(name, "acr") == 0) return DBTR_PHANTOM_ACR;
  return -1;
}

int dbtr_phantom_make(dbtr_phantom *p, dbtr_phantom_kind kind, const dbtr_grid *grid, uint64_t seed) {
  memset(p, 0, sizeof *p);
  if (!grid) return dbtr_err(DBTR_EINVAL, "phantom: no grid given");
  int rc = dbtr_grid_check(grid, NULL, "phantom grid");
  if (rc) return rc;
  if (kind == DBTR_PHANTOM_BREAST)
    rc = dbtr__make_breast(p, grid, seed);
  else if (kind == DBTR_PHANTOM_ACR)
    rc = dbtr__make_acr(p, grid);
  else
    return dbtr_err(DBTR_EINVAL, "phantom: unknown kind %d (expected breast or acr)", (int)kind);
  if (rc) dbtr_phantom_free(p);
  return rc;
}

void dbtr_phantom_free(dbtr_phantom *p) {
  if (!p) return;
  free(p->shapes);
  free(p->info);
  memset(p, 0, sizeof *p);
}
