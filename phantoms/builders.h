/* phantoms/builders.h: the phantom builders (phantoms/breast.c, phantoms/acr.c), for the
 * dispatcher phantoms/phantom.c that picks one by kind. Internal, like phantoms/shapes.h, the
 * helpers the builders make their shapes with; kept apart from it so that the shape code
 * below the builders knows nothing of them. */
#ifndef DBTR_PHANTOMS_BUILDERS_H
#define DBTR_PHANTOMS_BUILDERS_H

#include <stdint.h>

#include "phantoms/phantom.h"

/* Each fills the empty phantom p to fit grid, already checked by the caller; on failure
 * p may hold a partial shape list, which the caller frees. */
int dbtr__make_breast(dbtr_phantom *p, const dbtr_grid *grid, uint64_t seed);
int dbtr__make_acr(dbtr_phantom *p, const dbtr_grid *grid);

#endif
