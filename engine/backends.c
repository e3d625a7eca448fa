/* engine/backends.c: the backend factories and the choice of a backend (engine/backends.h). */
#include "engine/backends.h"

#include <stdio.h>
#include <string.h>

#include "kernels/gpu.h"
#include "recon/cpu.h"
#include "recon/error.h"

static int cpu_create(dbtr_backend **out, dbtr_mode m, const dbtr_problem *prob) {
  dbtr_problem p = *prob;
  int threads = dbtr_mode_info_of(m)->threads;
  if (threads && (p.threads == 0 || p.threads > threads)) p.threads = threads;
  return dbtr_cpu_backend_create(out, dbtr_mode_precision(m), &p);
}

/* One factory for each side of the table's rows: [0] the CPU reference's, [1] the GPU's. */
typedef int (*factory)(dbtr_backend **out, dbtr_mode m, const dbtr_problem *prob);
static const factory factories[2] = {cpu_create, dbtr_gpu_backend_create};

int dbtr_backend_create(dbtr_backend **out, dbtr_mode m, const dbtr_problem *prob) {
  *out = NULL;
  const dbtr_mode_info *info = dbtr_mode_info_of(m);
  if (!info) return dbtr_err(DBTR_EINVAL, "no mode %d in the mode table", (int)m);
  int rc = factories[info->gpu](out, m, prob);
  if (!rc) (*out)->mode = m;
  return rc;
}

int dbtr_backend_choose(const dbtr_backend_opts *o, dbtr_mode *gpu_mode, dbtr_mode *cpu_mode, int *gpu) {
  const char *be = o->backend ? o->backend : "auto";
  if (strcmp(be, "cpu") && strcmp(be, "gpu") && strcmp(be, "auto"))
    return dbtr_err(DBTR_EINVAL, "unknown backend '%s' (expected cpu, gpu or auto)", be);
  dbtr_precision prec;
  if (o->precision && !dbtr_precision_of(o->precision, &prec))
    return dbtr_err(DBTR_EINVAL, "unknown precision '%s' (expected float, double or dd)", o->precision);
  dbtr_mode mode = DBTR_MODE_CPU_MATCH;
  int rc = o->mode ? dbtr_mode_parse(o->mode, DBTR_ROWS_MODES | DBTR_ROWS_VARIANTS, &mode) : 0;
  if (rc) return rc;
  *gpu_mode = mode;
  *cpu_mode = dbtr_mode_cpu_of(o->precision ? prec : dbtr_mode_precision(mode));
  *gpu = strcmp(be, "cpu") != 0;
  return 0;
}

int dbtr_backend_on_cpu(const dbtr_backend_opts *o, int gpu) {
  char name[256];
  return !gpu || (strcmp(o->backend ? o->backend : "auto", "gpu") && !dbtr_gpu_available(name, sizeof name));
}

int dbtr_backend_open(const dbtr_backend_opts *o, const dbtr_problem *prob, dbtr_backend **out, char *fallback,
                      size_t fallback_len) {
  *out = NULL;
  if (fallback_len) fallback[0] = '\0';
  dbtr_mode gpu_mode, cpu_mode;
  int gpu, rc = dbtr_backend_choose(o, &gpu_mode, &cpu_mode, &gpu);
  if (rc) return rc;
  if (gpu) {
    rc = dbtr_backend_create(out, gpu_mode, prob);
    if (!rc || (o->backend && !strcmp(o->backend, "gpu"))) return rc;
    snprintf(fallback, fallback_len, "%s", rc == DBTR_ENOGPU ? "no GPU can be used" : dbtr_errmsg());
  }
  dbtr_err_clear();
  return dbtr_backend_create(out, cpu_mode, prob);
}
