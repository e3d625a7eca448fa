/* lib/problem.c: from a scan to the ML-EM driver's data, and the backend a user asked for
 * (lib/problem.h). */
#include "lib/problem.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/scan.h"
#include "recon/error.h"
#include "recon/mlem.h"

/* The first value that breaks the rule, with its flat index in the message: a caller's
 * array has no file or dataset to name. */
static int check_array(const char *name, const double *v, size_t n, int counts, int positive) {
  for (size_t i = 0; i < n; i++) {
    double x = v[i];
    const char *what = !isfinite(x)             ? "is not finite"
                       : counts && x < 0        ? "is negative; counts must be >= 0"
                       : positive && !(x > 0.0) ? "is not positive; i0 must be > 0"
                                                : NULL;
    if (what) return dbtr_err(DBTR_EINVAL, "%s: value %g at flat index %zu %s", name, x, i, what);
  }
  return 0;
}

int dbtr__scan_check_values(const dbtr_scan *scan) {
  size_t n;
  int rc = dbtr_geom_proj_count(&scan->geom, &n);
  if (rc) return rc;
  if (!scan->proj) return dbtr_err(DBTR_EINVAL, "projections: none given");
  int counts = scan->quantity == DBTR_QUANTITY_COUNTS;
  if (!counts && scan->quantity != DBTR_QUANTITY_LINE_INTEGRAL)
    return dbtr_err(DBTR_EINVAL, "projections: unknown quantity %d", (int)scan->quantity);
  if (scan->i0_shape < DBTR_I0_NONE || scan->i0_shape > DBTR_I0_FULL)
    return dbtr_err(DBTR_EINVAL, "i0: unknown shape %d", (int)scan->i0_shape);
  if (counts && (scan->i0_shape == DBTR_I0_NONE || !scan->i0))
    return dbtr_err(DBTR_EINVAL, "i0: counts need the unattenuated counts i0, and none were given");
  if ((rc = check_array("projections", scan->proj, n, counts, 0))) return rc;
  if (scan->i0_shape == DBTR_I0_NONE) return 0;
  return check_array("i0", scan->i0, dbtr_scan_i0_count(scan), 0, 1);
}

int dbtr__data_expand(const dbtr_scan *scan, dbtr_algo algo, double **y, double **i0) {
  size_t n;
  int rc = dbtr_geom_proj_count(&scan->geom, &n);
  *y = *i0 = NULL;
  if (rc) return rc;
  /* Each element on its own, on every thread: the same values for any thread count. */
  size_t npix = scan->geom.n_rows * scan->geom.n_cols;
  long long nn = (long long)n;
  if (algo == DBTR_ALGO_TRANSMISSION) {
    if ((rc = dbtr_alloc((void **)i0, n, sizeof(double), "i0"))) return rc;
    double *out = *i0;
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < nn; i++) out[i] = dbtr_scan_i0(scan, (size_t)i / npix, (size_t)i % npix);
    return 0;
  }
  if (scan->quantity == DBTR_QUANTITY_LINE_INTEGRAL) return 0;
  if ((rc = dbtr_alloc((void **)y, n, sizeof(double), "line integrals"))) return rc;
  double *out = *y;
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < nn; i++)
    out[i] = dbtr_count_to_line_integral(scan->proj[i], dbtr_scan_i0(scan, (size_t)i / npix, (size_t)i % npix));
  return 0;
}

dbtr_precision dbtr__backend_precision(const dbtr_backend_opts *o) {
  dbtr_gpu_mode mode = DBTR_MODE_CPU_MATCH;
  if (o->mode && dbtr_gpu_mode_parse(o->mode, &mode)) mode = DBTR_MODE_CPU_MATCH;
  dbtr_precision p;
  if (o->precision && dbtr_precision_of(o->precision, &p)) return p;
  return dbtr_gpu_mode_precision(mode);
}

int dbtr__backend_create(const dbtr_backend_opts *o, const dbtr_problem *prob, dbtr_backend **out, char *fallback,
                         size_t fallback_len) {
  *out = NULL;
  if (fallback_len) fallback[0] = '\0';
  const char *be = o->backend ? o->backend : "auto";
  if (strcmp(be, "cpu") && strcmp(be, "gpu") && strcmp(be, "auto"))
    return dbtr_err(DBTR_EINVAL, "unknown backend '%s' (expected cpu, gpu or auto)", be);
  dbtr_precision prec;
  if (o->precision && !dbtr_precision_of(o->precision, &prec))
    return dbtr_err(DBTR_EINVAL, "unknown precision '%s' (expected float, double or dd)", o->precision);
  dbtr_gpu_mode mode = DBTR_MODE_CPU_MATCH;
  int rc = o->mode ? dbtr_gpu_mode_parse(o->mode, &mode) : 0;
  if (rc) return rc;
  if (strcmp(be, "cpu") != 0) {
    rc = dbtr_gpu_backend_create(out, mode, prob);
    if (!rc || !strcmp(be, "gpu")) return rc;
    snprintf(fallback, fallback_len, "%s", rc == DBTR_ENOGPU ? "no GPU can be used" : dbtr_errmsg());
  }
  dbtr_err_clear();
  return dbtr_cpu_backend_create(out, dbtr__backend_precision(o), prob);
}
