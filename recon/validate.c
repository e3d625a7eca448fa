/* recon/validate.c: the validation engine (recon/validate.h): the CPU references and the
 * compared paths, iteration by iteration, on one ML-EM problem. */
#include "recon/validate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recon/error.h"

/* What a path name means: one of the two CPU paths, or a GPU mode or variant. */
static int parse_path(const char *name, dbtr_vpath *p) {
  memset(p, 0, sizeof *p);
  p->explains = -1;
  p->prec = DBTR_PREC_FLOAT;
  if (!strcmp(name, "cpu-1-thread")) {
    p->threads = 1;
    p->ref = DBTR_VREF_FLOAT;
  } else if (!strcmp(name, "cpu-float")) {
    p->ref = DBTR_VREF_DOUBLE;
  } else if (!dbtr_gpu_mode_parse(name, &p->mode)) {
    p->is_gpu = 1;
    p->prec = dbtr_gpu_mode_precision(p->mode);
    p->ref = p->prec == DBTR_PREC_DOUBLE ? DBTR_VREF_DOUBLE : DBTR_VREF_FLOAT;
  } else {
    return dbtr_err(DBTR_EINVAL,
                    "'%s' is not a mode (fast, ieee, cpu-match, double, double-match, cpu-1-thread, cpu-float)", name);
  }
  snprintf(p->name, sizeof p->name, "%s", name);
  return 0;
}

int dbtr_validate_path_is_gpu(const char *name) {
  dbtr_vpath p;
  int rc = parse_path(name, &p);
  return rc ? rc : p.is_gpu;
}

/* Adds the path unless one of that name is there; *idx receives its index either way. */
static int add_path(dbtr_validate *v, const char *name, int explains, size_t *idx) {
  for (size_t i = 0; i < v->n_paths; i++)
    if (!strcmp(v->paths[i].name, name)) {
      *idx = i;
      return 0;
    }
  dbtr_vpath p;
  int rc = parse_path(name, &p);
  if (rc) return rc;
  dbtr_vpath *grown = realloc(v->paths, (v->n_paths + 1) * sizeof *grown);
  if (!grown) return dbtr_err(DBTR_ENOMEM, "validate: out of memory");
  v->paths = grown;
  p.explains = explains;
  p.proj = calloc(v->iterations, sizeof *p.proj);
  p.vol = calloc(v->iterations, sizeof *p.vol);
  p.deviance = calloc(v->iterations, sizeof *p.deviance);
  v->paths[v->n_paths++] = p;
  if (!p.proj || !p.vol || !p.deviance) return dbtr_err(DBTR_ENOMEM, "validate: out of memory");
  *idx = v->n_paths - 1;
  return 0;
}

/* The paths in the order given, each mode's explain variants right after it. */
static int add_paths(dbtr_validate *v, const dbtr_validate_opts *o) {
  for (size_t i = 0; i < o->n_paths; i++) {
    size_t idx;
    int rc = add_path(v, o->paths[i], -1, &idx);
    if (rc) return rc;
    /* The single changes that separate a mode from its match mode (recon/modes.def), which
     * --explain runs right after the mode. */
    dbtr_gpu_mode var[DBTR_MODE_ALL_COUNT];
    size_t nv = 0;
    if (o->explain && v->paths[idx].is_gpu) nv = dbtr_gpu_mode_variants(v->paths[idx].mode, var, DBTR_MODE_ALL_COUNT);
    for (size_t k = 0; k < nv; k++) {
      size_t vi;
      if ((rc = add_path(v, dbtr_gpu_mode_name(var[k]), (int)idx, &vi))) return rc;
    }
  }
  if (v->n_paths == 0) return dbtr_err(DBTR_EINVAL, "validate: nothing to compare");
  return 0;
}

/* The references (a CPU backend per precision some path compares with) and a backend per
 * path, each loaded with the start volume, and the comparison buffers. A CPU path's own
 * thread count overrides the problem's. */
static int open_backends(dbtr_validate *v) {
  const dbtr_mlem *m = v->m;
  int rc;
  for (size_t i = 0; i < v->n_paths; i++) v->have_ref[v->paths[i].ref] = 1;
  for (int r = 0; r < DBTR_VREF_COUNT; r++) {
    if (!v->have_ref[r]) continue;
    dbtr_precision p = r == DBTR_VREF_DOUBLE ? DBTR_PREC_DOUBLE : DBTR_PREC_FLOAT;
    size_t es = dbtr_precision_size(p);
    if ((rc = dbtr_cpu_backend_create(&v->ref_b[r], p, &m->prob)) || (rc = dbtr_mlem_load(m, v->ref_b[r], NULL, 0.0)) ||
        (rc = dbtr_alloc(&v->ref_vol[r], m->n_vox, es, "reference")) ||
        (rc = dbtr_alloc(&v->ref_prev[r], m->n_vox, es, "reference")) ||
        (rc = dbtr_alloc(&v->ref_proj[r], m->n_proj, es, "reference")) ||
        (rc = v->ref_b[r]->get_volume(v->ref_b[r], v->ref_vol[r])))
      return rc;
  }
  for (size_t i = 0; i < v->n_paths; i++) {
    dbtr_vpath *p = &v->paths[i];
    dbtr_problem prob = m->prob;
    if (p->threads) prob.threads = p->threads;
    rc = p->is_gpu ? dbtr_gpu_backend_create(&p->b, p->mode, &prob) : dbtr_cpu_backend_create(&p->b, p->prec, &prob);
    if (!rc) rc = dbtr_mlem_load(m, p->b, NULL, 0.0);
    if (rc) return rc;
  }
  if ((rc = dbtr_alloc(&v->pv, m->n_vox, sizeof(double), "volume")) ||
      (rc = dbtr_alloc(&v->pp, m->n_proj, sizeof(double), "projections")) ||
      (rc = dbtr_alloc(&v->rv, m->n_vox, sizeof(double), "volume")))
    return rc;
  return dbtr_alloc(&v->rp, m->n_proj, sizeof(double), "projections");
}

int dbtr_validate_open(dbtr_validate *v, const dbtr_mlem *m, const dbtr_validate_opts *o) {
  memset(v, 0, sizeof *v);
  if (o->iterations < 1) return dbtr_err(DBTR_EINVAL, "validate: iterations must be at least 1");
  v->iterations = o->iterations;
  v->lockstep = o->lockstep;
  v->m = m;
  int rc = add_paths(v, o);
  if (!rc) rc = open_backends(v);
  if (rc) dbtr_validate_close(v);
  return rc;
}

const char *dbtr_validate_ref_name(dbtr_vref ref) { return ref == DBTR_VREF_DOUBLE ? "cpu-double" : "cpu-float"; }

/* The reference's values in precision p (a float path against the double reference). */
static const void *ref_in(const dbtr_validate *v, dbtr_vref ref, dbtr_precision p, int proj, void *scratch) {
  const void *src = proj ? v->ref_proj[ref] : v->ref_vol[ref];
  dbtr_precision rp = ref == DBTR_VREF_DOUBLE ? DBTR_PREC_DOUBLE : DBTR_PREC_FLOAT;
  if (rp == p) return src;
  dbtr_convert_to_float(rp, src, proj ? v->m->n_proj : v->m->n_vox, scratch);
  return scratch;
}

static double max_of(dbtr_precision p, const void *a, size_t n) {
  double m = 0.0;
  for (size_t i = 0; i < n; i++) {
    double x = p == DBTR_PREC_FLOAT ? (double)((const float *)a)[i] : ((const double *)a)[i];
    if (x > m) m = x;
  }
  return m;
}

/* a against the reference b, with the 16-bit display scale running from 0 to b's maximum. */
static int stats(dbtr_precision p, const void *a, const void *b, size_t n, dbtr_diff_stats *out) {
  dbtr_display_scale sc = {0.0, max_of(p, b, n)};
  const dbtr_display_scale *s = sc.hi > 0.0 ? &sc : NULL;
  return p == DBTR_PREC_FLOAT ? dbtr_diff_stats_f(a, b, n, s, out) : dbtr_diff_stats_d(a, b, n, s, out);
}

/* One iteration of one path, compared with its reference; row receives the result. */
static int step_path(dbtr_validate *v, dbtr_vpath *p, size_t it, dbtr_validate_row *row) {
  const dbtr_mlem *m = v->m;
  int rc;
  if (v->lockstep && it > 0) {
    /* Start from the reference's state before this iteration, in the path's precision. */
    const void *start = v->ref_prev[p->ref];
    if (p->prec == DBTR_PREC_FLOAT && p->ref == DBTR_VREF_DOUBLE) {
      dbtr_convert_to_float(DBTR_PREC_DOUBLE, v->ref_prev[p->ref], m->n_vox, v->rv);
      start = v->rv;
    }
    if ((rc = p->b->set_volume(p->b, start))) return rc;
  }
  if ((rc = dbtr_mlem_iterate(m, p->b, &p->deviance[it])) || (rc = p->b->get_volume(p->b, v->pv)) ||
      (rc = p->b->get_projections(p->b, v->pp)))
    return rc;
  const void *rv = ref_in(v, p->ref, p->prec, 0, v->rv);
  if ((rc = stats(p->prec, v->pv, rv, m->n_vox, &p->vol[it]))) return rc;
  const void *rp = ref_in(v, p->ref, p->prec, 1, v->rp);
  if ((rc = stats(p->prec, v->pp, rp, m->n_proj, &p->proj[it]))) return rc;
  if (!p->first_iter && (p->proj[it].n_differ || p->vol[it].n_differ)) {
    p->first_iter = it + 1;
    p->first_in_proj = p->proj[it].n_differ > 0;
    p->first_max_ulp = p->first_in_proj ? p->proj[it].max_ulp : p->vol[it].max_ulp;
  }
  *row = (dbtr_validate_row){.iteration = it + 1, .path = p, .reference = dbtr_validate_ref_name(p->ref),
                             .proj = &p->proj[it], .vol = &p->vol[it], .deviance = p->deviance[it],
                             .path_proj = v->pp, .path_vol = v->pv, .ref_proj = rp, .ref_vol = rv};
  return 0;
}

/* One iteration: the references first (keeping their state before it for lockstep), then
 * every path against them. */
static int iterate(dbtr_validate *v, size_t it, dbtr_validate_row_fn on_row, void *user) {
  const dbtr_mlem *m = v->m;
  int rc;
  for (int r = 0; r < DBTR_VREF_COUNT; r++) {
    if (!v->have_ref[r]) continue;
    dbtr_backend *b = v->ref_b[r];
    double deviance;
    memcpy(v->ref_prev[r], v->ref_vol[r], m->n_vox * dbtr_precision_size(b->precision));
    if ((rc = dbtr_mlem_iterate(m, b, &deviance)) || (rc = b->get_volume(b, v->ref_vol[r])) ||
        (rc = b->get_projections(b, v->ref_proj[r])))
      return rc;
  }
  for (size_t i = 0; i < v->n_paths; i++) {
    dbtr_validate_row row;
    if ((rc = step_path(v, &v->paths[i], it, &row))) return rc;
    if (on_row) on_row(user, &row);
  }
  return 0;
}

int dbtr_validate_run(dbtr_validate *v, dbtr_validate_row_fn on_row, void *user) {
  if (v->done) return dbtr_err(DBTR_EINVAL, "validate: the run has already run");
  for (size_t it = 0; it < v->iterations; it++) {
    int rc = iterate(v, it, on_row, user);
    if (rc) return rc;
    v->done = it + 1;
  }
  return 0;
}

double dbtr_validate_explained_share(const dbtr_validate *v, const dbtr_vpath *p) {
  if (p->explains < 0) return 0.0;
  size_t last = v->iterations - 1;
  double mode = v->paths[p->explains].vol[last].rel_l2;
  return mode > 0.0 ? p->vol[last].rel_l2 / mode : 0.0;
}

/* a - ref (a alone when ref is NULL) in double, rounded once to float. */
static void to_float(dbtr_precision p, const void *a, const void *ref, size_t n, float *out) {
  for (size_t i = 0; i < n; i++) {
    double x = p == DBTR_PREC_FLOAT ? (double)((const float *)a)[i] : ((const double *)a)[i];
    if (ref) x -= p == DBTR_PREC_FLOAT ? (double)((const float *)ref)[i] : ((const double *)ref)[i];
    out[i] = (float)x;
  }
}

int dbtr_validate_path_volume(dbtr_validate *v, const dbtr_vpath *p, float *vol, float *diff) {
  int rc = p->b->get_volume(p->b, v->pv);
  if (rc) return rc;
  to_float(p->prec, v->pv, NULL, v->m->n_vox, vol);
  if (diff) to_float(p->prec, v->pv, ref_in(v, p->ref, p->prec, 0, v->rv), v->m->n_vox, diff);
  return 0;
}

int dbtr_validate_ref_volume(const dbtr_validate *v, dbtr_vref ref, float *vol) {
  if ((unsigned)ref >= DBTR_VREF_COUNT || !v->have_ref[ref])
    return dbtr_err(DBTR_EINVAL, "validate: the run has no %s reference", dbtr_validate_ref_name(ref));
  to_float(ref == DBTR_VREF_DOUBLE ? DBTR_PREC_DOUBLE : DBTR_PREC_FLOAT, v->ref_vol[ref], NULL, v->m->n_vox, vol);
  return 0;
}

void dbtr_validate_close(dbtr_validate *v) {
  for (size_t i = 0; i < v->n_paths; i++) {
    dbtr_backend_destroy(&v->paths[i].b);
    free(v->paths[i].proj);
    free(v->paths[i].vol);
    free(v->paths[i].deviance);
  }
  free(v->paths);
  for (int r = 0; r < DBTR_VREF_COUNT; r++) {
    dbtr_backend_destroy(&v->ref_b[r]);
    free(v->ref_vol[r]);
    free(v->ref_prev[r]);
    free(v->ref_proj[r]);
  }
  free(v->pv);
  free(v->pp);
  free(v->rv);
  free(v->rp);
  memset(v, 0, sizeof *v);
}
