/* engine/fbp.c: filtered back projection through the projector of a path (engine/fbp.h). */
#include "engine/fbp.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/session.h"
#include "io/memory.h"
#include "recon/error.h"
#include "recon/fbp.h"
#include "recon/mlem.h"

int dbtr_fbp_check_opts(const dbtr_fbp_opts *o) {
  if (!(o->cutoff >= 0.0 && o->cutoff <= 1.0))
    return dbtr_err(DBTR_EINVAL, "fbp cutoff %g: the Hann window's cut-off is a fraction of the Nyquist frequency, "
                    "in (0, 1] (0: 1)", o->cutoff);
  if (!(o->slice >= 0.0 && o->slice <= 1.0))
    return dbtr_err(DBTR_EINVAL, "fbp slice %g: the slice-thickness filter's cut-off is a fraction of the Nyquist "
                    "frequency, in (0, 1] (0: none)", o->slice);
  return 0;
}

/* The filtered stack in the path's type: each view's line integrals, filtered in double, rounded
 * once to the path's type (dbtr_convert_from_double). */
static int filter_stack(const dbtr_scan *scan, const dbtr_fbp_plan *plan, const dbtr_fbp_opts *fo,
                        dbtr_precision prec, int threads, void *stack) {
  const dbtr_geom *g = &scan->geom;
  size_t npix = g->n_rows * g->n_cols, len = plan->axis ? g->n_rows : g->n_cols;
  size_t gs_half = fo->slice > 0.0 ? dbtr_fbp_lowpass_half(fo->slice) : 0, es = dbtr_precision_size(prec);
  double *h = NULL, *gs = NULL, *work = NULL, *lines = NULL, *out = NULL;
  int rc = dbtr_alloc((void **)&h, len, sizeof *h, "fbp kernel");
  if (!rc) rc = dbtr_alloc((void **)&gs, gs_half + 1, sizeof *gs, "fbp kernel");
  if (!rc) rc = dbtr_alloc((void **)&work, 2 * npix, sizeof *work, "fbp work");
  if (!rc) rc = dbtr_alloc((void **)&lines, npix, sizeof *lines, "fbp line integrals");
  if (!rc) rc = dbtr_alloc((void **)&out, npix, sizeof *out, "fbp filtered view");
  if (!rc) {
    dbtr_fbp_ramp_kernel(plan->tau, fo->cutoff > 0.0 ? fo->cutoff : 1.0, len - 1, h);
    if (fo->slice > 0.0) dbtr_fbp_lowpass_kernel(fo->slice, gs_half, gs);
    int counts = scan->quantity == DBTR_QUANTITY_COUNTS;
    for (size_t k = 0; k < g->n_views; k++) {
      const double *p = scan->proj + k * npix;
      for (size_t i = 0; i < npix; i++) lines[i] = counts ? dbtr_count_to_line_integral(p[i], dbtr_scan_i0(scan, k, i)) : p[i];
      dbtr_fbp_filter_view(g, plan, fo, k, lines, h, gs, gs_half, work, out, threads);
      dbtr_convert_from_double(prec, out, npix, (char *)stack + k * npix * es);
    }
  }
  free(h);
  free(gs);
  free(work);
  free(lines);
  free(out);
  return rc;
}

int dbtr_fbp_volume(const dbtr_scan *scan, const dbtr_grid *grid, const dbtr_backend_opts *bo,
                    const dbtr_fbp_opts *fo, int device, double *vol, dbtr_fbp_report *rep) {
  static const dbtr_fbp_opts defaults = {0};
  dbtr_fbp_report own;
  if (!rep) rep = &own;
  memset(rep, 0, sizeof *rep);
  if (!fo) fo = &defaults;
  const dbtr_geom *g = &scan->geom;
  dbtr_fbp_plan plan;
  int rc = dbtr_fbp_check_opts(fo);
  if (!rc) rc = dbtr_fbp_plan_make(g, &plan);
  if (rc) return rc;
  size_t npix = g->n_rows * g->n_cols, n_proj = g->n_views * npix, n_vox = grid->nx * grid->ny * grid->nz;
  dbtr_projector_opts po = {.backend = *bo, .device = device};
  po.backend.gpus = 1;
  dbtr_projector *p = NULL;
  double t0 = omp_get_wtime();
  if ((rc = dbtr_projector_open(&p, g, grid, &po))) return rc;
  double t_open = omp_get_wtime() - t0;
  dbtr_precision prec = dbtr_projector_precision(p);
  size_t es = dbtr_precision_size(prec);
  snprintf(rep->backend, sizeof rep->backend, "%s", dbtr_projector_backend(p));
  snprintf(rep->fallback, sizeof rep->fallback, "%s", dbtr_projector_fallback(p));
  rep->precision = prec;
  /* Beside the projector (which counted its own): the stack in the path's type, the two back
   * projections in it and D in double, a view's four work lines in double. */
  void *stack = NULL, *nb = NULL, *db = NULL;
  double *d = NULL;
  rc = dbtr_mem_check((double)es * (double)n_proj + (2.0 * (double)es + 8.0) * (double)n_vox + 40.0 * (double)npix,
                      "filtered back projection");
  if (!rc) rc = dbtr_alloc(&stack, n_proj, es, "fbp filtered projections");
  if (!rc) rc = dbtr_alloc(&nb, n_vox, es, "fbp back projection");
  if (!rc) rc = dbtr_alloc(&db, n_vox, es, "fbp back projection");
  if (!rc) rc = dbtr_alloc((void **)&d, n_vox, sizeof *d, "fbp weights");
  double t1 = omp_get_wtime();
  if (!rc) rc = filter_stack(scan, &plan, fo, prec, bo->threads, stack);
  double t2 = omp_get_wtime();
  if (!rc) rc = dbtr_projector_back(p, stack, nb, DBTR_MEMORY_HOST);
  if (!rc) {
    /* The stack of lambda, whose back projection sums each voxel's interpolation weights. */
    double *lv = NULL;
    if (!(rc = dbtr_alloc((void **)&lv, npix, sizeof *lv, "fbp weights")))
      for (size_t k = 0; k < g->n_views; k++) {
        dbtr_fbp_lambda_view(g, k, lv);
        dbtr_convert_from_double(prec, lv, npix, (char *)stack + k * npix * es);
      }
    free(lv);
  }
  if (!rc) rc = dbtr_projector_back(p, stack, db, DBTR_MEMORY_HOST);
  if (!rc) {
    dbtr_convert_to_double(prec, nb, n_vox, vol);
    dbtr_convert_to_double(prec, db, n_vox, d);
    dbtr_fbp_normalise(g, grid, vol, d, vol);
    for (size_t i = 0; i < n_vox; i++) rep->n_unseen += d[i] == 0.0;
  }
  double t4 = omp_get_wtime();
  rep->filter = t2 - t1;
  rep->back = t_open + (t4 - t2);
  dbtr_projector_close(&p);
  free(stack);
  free(nb);
  free(db);
  free(d);
  return rc;
}

int dbtr_fbp_checked(const dbtr_scan *scan, const dbtr_grid *grid, const dbtr_recon_opts *ro, const char *source,
                     int values_checked, double *vol, dbtr_fbp_report *rep) {
  dbtr_session_opts so = {.recon = {.backend = ro->backend}, .source = source, .values_checked = values_checked,
                          .problem_only = 1};
  dbtr_session *s = NULL;
  int rc = dbtr_session_open(&s, scan, grid, &so);
  dbtr_session_close(&s);
  return rc ? rc : dbtr_fbp_volume(scan, grid, &ro->backend, &ro->fbp, 0, vol, rep);
}
