/* io/dicom_none.c: dbtr built without GDCM (DBTR_WITH_DICOM=OFF, or AUTO without
 * libgdcm-dev): the import says how to get it, as kernels/gpu_none.c does for CUDA. */
#include "io/dicom.h"
#include "recon/error.h"

int dbtr_dicom_import(dbtr_scan *s, const char *const *paths, size_t n_paths, const dbtr_dicom_opts *o) {
  (void)s, (void)paths, (void)n_paths, (void)o;
  return dbtr_err(DBTR_EINVAL, "this dbtr was built without DICOM import (GDCM): install libgdcm-dev and rebuild");
}

int dbtr_dicom_import_guarded(dbtr_scan *s, const char *const *paths, size_t n_paths, const dbtr_dicom_opts *o,
                              unsigned seconds) {
  (void)seconds;
  return dbtr_dicom_import(s, paths, n_paths, o);
}
