/* recon/backend.c: names of the floating-point modes and backend helpers. */
#include "recon/backend.h"

#include <stdlib.h>
#include <string.h>

#include "recon/error.h"

static const char *const mode_names[DBTR_MODE_ALL_COUNT] = {
    "fast", "ieee", "cpu-match", "double", "double-match", "cpu-match+fma", "cpu-match+approx-div",
    "cpu-match+libm-exp", "cpu-match+fast-exp", "cpu-match+ftz", "double-match+fma", "double-match+libm-exp"};

const char *dbtr_gpu_mode_name(dbtr_gpu_mode m) {
  return (unsigned)m < DBTR_MODE_ALL_COUNT ? mode_names[m] : "unknown";
}

int dbtr_gpu_mode_parse(const char *s, dbtr_gpu_mode *out) {
  for (int m = 0; m < DBTR_MODE_ALL_COUNT; m++)
    if (s && strcmp(s, mode_names[m]) == 0) {
      *out = (dbtr_gpu_mode)m;
      return 0;
    }
  return dbtr_err(DBTR_EINVAL, "unknown mode '%s' (expected fast, ieee, cpu-match, double or double-match)",
                  s ? s : "");
}

dbtr_precision dbtr_gpu_mode_precision(dbtr_gpu_mode m) {
  return (m == DBTR_MODE_DOUBLE || m == DBTR_MODE_DOUBLE_MATCH || m == DBTR_VARIANT_DOUBLE_MATCH_FMA ||
          m == DBTR_VARIANT_DOUBLE_MATCH_LIBM_EXP)
             ? DBTR_PREC_DOUBLE
             : DBTR_PREC_FLOAT;
}

size_t dbtr_precision_size(dbtr_precision p) { return p == DBTR_PREC_DOUBLE ? sizeof(double) : sizeof(float); }

void dbtr_backend_destroy(dbtr_backend **b) {
  if (*b && (*b)->destroy) (*b)->destroy(*b);
  *b = NULL;
}
