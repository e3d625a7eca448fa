/* phantoms/objects_h5.h: a phantom's objects in the scan file, the optional /phantom group
 * (docs/scan-format.md, "/phantom: where the objects are"). */
#ifndef DBTR_OBJECTS_H5_H
#define DBTR_OBJECTS_H5_H

#include "io/scan.h"
#include "phantoms/phantom.h"

/* dbtr_scan_write, with p's shapes and object records as /phantom in the same file (written
 * before the file is renamed into place). p NULL or empty: a plain dbtr_scan_write. */
int dbtr_scan_write_phantom(const dbtr_scan *s, const char *path, const dbtr_scan_write_opts *opts,
                            const dbtr_phantom *p);
/* Reads the /phantom group of the scan file at path into p (zeroed first; its name "phantom"):
 * *found 1 when the file has one, 0 (and p empty, 0 returned) when it has none. A damaged or
 * inconsistent group is DBTR_EFORMAT naming the file and the dataset. Free p with
 * dbtr_phantom_free. */
int dbtr_phantom_read(dbtr_phantom *p, const char *path, int *found);

#endif
