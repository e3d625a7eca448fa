/* kernels/gpu_none.c: the GPU backend of a build without CUDA: it says so. */
#include "kernels/gpu.h"
#include "recon/backend.h"
#include "recon/error.h"

int dbtr_gpu_backend_create(dbtr_backend **out, dbtr_mode mode, const dbtr_problem *prob) {
  (void)mode;
  (void)prob;
  *out = NULL;
  return dbtr_err(DBTR_ENOGPU, "this dbtr was built without CUDA; use --backend cpu");
}

int dbtr_gpu_available(char *name, unsigned long name_len) {
  if (name && name_len) name[0] = '\0';
  return 0;
}

int dbtr_gpu_separable(const dbtr_backend *b) {
  (void)b;
  return dbtr_err(DBTR_ENOGPU, "this dbtr was built without CUDA");
}

int dbtr_gpu_run_phase(dbtr_backend *b, dbtr_gpu_phase phase) {
  (void)b;
  (void)phase;
  return dbtr_err(DBTR_ENOGPU, "this dbtr was built without CUDA");
}

int dbtr_gpu_memory_of(const dbtr_backend *b, dbtr_gpu_memory *out) {
  (void)b;
  (void)out;
  return dbtr_err(DBTR_ENOGPU, "this dbtr was built without CUDA");
}

int dbtr_gpu_host_pin(void *p, size_t bytes) {
  (void)p;
  (void)bytes;
  return 0;
}

void dbtr_gpu_host_unpin(void *p) { (void)p; }

int dbtr_gpu_count(void) { return 0; }

int dbtr_gpu_first_bad(int device, const char *name, const void *v, dbtr_precision type, size_t n, int counts,
                       int positive, size_t *at, double *x) {
  (void)device, (void)name, (void)v, (void)type, (void)counts, (void)positive;
  *at = n;
  *x = 0.0;
  return dbtr_err(DBTR_ENOGPU, "this dbtr was built without CUDA: data in a GPU's memory cannot be read");
}

int dbtr_gpu_data_sums(const dbtr_device_data *d, dbtr_i0_shape shape, dbtr_data_kind kind, size_t n, size_t npix,
                       double *blocks) {
  (void)d, (void)shape, (void)kind, (void)n, (void)npix, (void)blocks;
  return dbtr_err(DBTR_ENOGPU, "this dbtr was built without CUDA");
}

int dbtr_gpu_load_device(dbtr_backend *b, const dbtr_device_data *d, dbtr_i0_shape shape, dbtr_data_kind kind,
                         double fill) {
  (void)b, (void)d, (void)shape, (void)kind, (void)fill;
  return dbtr_err(DBTR_ENOGPU, "this dbtr was built without CUDA");
}

int dbtr_gpu_volume_device(dbtr_backend *b, void *out, const unsigned char *fov) {
  (void)b, (void)out, (void)fov;
  return dbtr_err(DBTR_ENOGPU, "this dbtr was built without CUDA");
}
