/* quality/quality_api.c: where the objects come from, and the public call (include/dbtr.h,
 * dbtr_quality_json) that Python's dbtr.quality wraps. */
#include <stdlib.h>
#include <string.h>

#include "phantoms/objects_h5.h"
#include "quality/quality.h"
#include "recon/error.h"

int dbtr_quality_objects(dbtr_phantom *p, const char *scan, const char *regions) {
  memset(p, 0, sizeof *p);
  if (!scan == !regions) return dbtr_err(DBTR_EINVAL, "quality: give the objects' scan file or a regions file, not both");
  if (regions) return dbtr_quality_regions_read(p, regions);
  int found;
  int rc = dbtr_phantom_read(p, scan, &found);
  if (!rc && !found)
    rc = dbtr_err(DBTR_EINVAL, "%s: no /phantom objects (scans made by dbtr phantom have them); give regions by hand",
                  scan);
  size_t targets = 0;
  for (size_t i = 0; !rc && i < p->n_shapes; i++) targets += p->info[i].target != 0;
  if (!rc && !targets) rc = dbtr_err(DBTR_EINVAL, "%s: /phantom has no test object (target 1) to measure", scan);
  if (rc) dbtr_phantom_free(p);
  return rc;
}

int dbtr_quality_json(const void *vol, dbtr_precision precision, const dbtr_grid *grid, const char *scan,
                      const char *regions, char **json) {
  if (!json) return dbtr_err(DBTR_EINVAL, "dbtr_quality_json: no place for the text");
  *json = NULL;
  dbtr_phantom p;
  dbtr_quality q;
  int rc = dbtr_quality_objects(&p, scan, regions);
  if (!rc) rc = dbtr_quality_measure(&q, vol, precision, grid, &p);
  if (!rc) {
    rc = dbtr_quality_to_json(&q, &p, grid, json);
    dbtr_quality_free(&q);
  }
  dbtr_phantom_free(&p);
  return rc;
}

void dbtr_quality_json_free(char **json) {
  if (!json) return;
  free(*json);
  *json = NULL;
}
