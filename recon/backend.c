/* recon/backend.c: what every backend shares (recon/backend.h). */
#include "recon/backend.h"

void dbtr_backend_destroy(dbtr_backend **b) {
  if (*b && (*b)->destroy) (*b)->destroy(*b);
  *b = NULL;
}
