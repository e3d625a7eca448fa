/* app/validate_report.c: the files `dbtr validate --report DIR` writes from the engine's
 * results (engine/validate.h): CSV and JSON of every measurement, and SVG plots (differing
 * voxels and max |difference| per iteration, and with the referee the distance from it; log
 * scale, one line per path); and the verdict lines the terminal and the JSON share. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/cli.h"
#include "app/validate.h"
#include "io/atomic_file.h"
#include "io/svg.h"
#include "recon/error.h"

void app_validate_verdict(const dbtr_vpath *p, char *buf, size_t len) {
  const char *ref = dbtr_validate_ref_name(p->ref);
  if (!p->first_iter)
    snprintf(buf, len, "bitwise identical to %s%s", ref, strcmp(p->name, ref) ? "" : " (it is that reference's computation)");
  else
    snprintf(buf, len, "differs: first at iteration %zu, in the %s, max %llu ulp", p->first_iter,
             p->first_in_proj ? "forward projection" : "volume", (unsigned long long)p->first_max_ulp);
}

int app_validate_same_volumes(const dbtr_validate *v, const dbtr_vpath *p) {
  if (p->prec != (p->ref == DBTR_VREF_DOUBLE ? DBTR_PREC_DOUBLE : DBTR_PREC_FLOAT)) return 0;
  for (size_t it = 0; it < v->iterations; it++)
    if (p->vol[it].n_differ) return 0;
  return 1;
}

/* "object 3, mass". */
static const char *object_name(const dbtr_validate *v, size_t object, char buf[48]) {
  snprintf(buf, 48, "object %zu, %s", object, v->objects->info[object].kind);
  return buf;
}

/* What cannot be measured of a measure after the last iteration (e), appended at buf + *at. */
static void unmeasured(const dbtr_quality_verdict *q, const dbtr_quality_extreme *e, const char *what, char *buf,
                       size_t len, size_t *at, int *first) {
  if (!e->not_measurable || *at >= len) return;
  if (*first) *at += (size_t)snprintf(buf + *at, len - *at, "; not measurable after iteration %zu:", q->iterations);
  if (*at < len)
    *at += (size_t)snprintf(buf + *at, len - *at, "%s %s of %zu of %zu object%s", *first ? "" : ",", what,
                            e->not_measurable, q->n_objects, q->n_objects == 1 ? "" : "s");
  if (e->one_sided && *at < len)
    *at += (size_t)snprintf(buf + *at, len - *at, " (%zu measurable in one volume only)", e->one_sided);
  *first = 0;
}

void app_validate_quality_verdict(const dbtr_validate *v, const dbtr_vpath *p, char *buf, size_t len) {
  const dbtr_quality_verdict *q = &p->quality_verdict;
  const dbtr_quality_extreme *lc = &q->last[DBTR_QCNR], *lf = &q->last[DBTR_QFWHM], *lk = &q->last[DBTR_QCONTRAST];
  const dbtr_quality_extreme *ac = &q->all[DBTR_QCNR], *af = &q->all[DBTR_QFWHM];
  int zero = 1;
  for (int k = 0; k < DBTR_QMEASURES; k++) zero &= !q->all[k].found || q->all[k].change == 0.0;
  size_t at = 0;
  char a[48], b[48];
  if (zero && app_validate_same_volumes(v, p)) {
    at += (size_t)snprintf(buf, len, "bitwise identical volumes at every iteration: every object's CNR, ASF FWHM and "
                           "contrast change exactly 0");
  } else {
    if (lc->found)
      at += (size_t)snprintf(buf, len, "changes no object's CNR by more than %.3g%% (%s)", fabs(lc->change),
                             object_name(v, lc->object, a));
    else
      at += (size_t)snprintf(buf, len, "changes no object's CNR measurably (none measurable)");
    if (at < len && lf->found)
      at += (size_t)snprintf(buf + at, len - at, " and no ASF FWHM by more than %.3g mm (%s)", fabs(lf->change),
                             object_name(v, lf->object, b));
    else if (at < len)
      at += (size_t)snprintf(buf + at, len - at, " and no ASF FWHM measurably (none measurable)");
    if (at < len)
      at += (size_t)snprintf(buf + at, len - at, " after %zu iteration%s", q->iterations, q->iterations == 1 ? "" : "s");
    if (at < len && lk->found) at += (size_t)snprintf(buf + at, len - at, "; contrast by at most %.3g%%", fabs(lk->change));
    if (at < len && q->iterations > 1 && ac->found && af->found)
      at += (size_t)snprintf(buf + at, len - at, "; over all iterations at most %.3g%% (iteration %zu, %s) and %.3g mm "
                             "(iteration %zu, %s)", fabs(ac->change), ac->iteration, object_name(v, ac->object, a),
                             fabs(af->change), af->iteration, object_name(v, af->object, b));
  }
  int first = 1;
  unmeasured(q, lc, "the CNR", buf, len, &at, &first);
  unmeasured(q, lf, "the FWHM", buf, len, &at, &first);
}

/* A number for JSON: %.9g, or null for NaN and infinities, which JSON cannot hold. */
static void json_num(FILE *f, const char *key, double x) {
  if (isfinite(x))
    fprintf(f, "\"%s\": %.9g", key, x);
  else
    fprintf(f, "\"%s\": null", key);
}

int app_validate_ranked(const dbtr_vpath *p, dbtr_precision prec) { return p->prec == prec && p->explains < 0; }

/* The smallest relative L2 of the volume against the referee after the last iteration among
 * the ranked paths of precision p (a NaN ranks last); 0 when there are none. */
static int closest_of(const dbtr_validate *v, dbtr_precision p, double *rel) {
  int any = 0;
  for (size_t i = 0; v->referee && i < v->n_paths; i++) {
    const dbtr_vpath *q = &v->paths[i];
    if (!app_validate_ranked(q, p)) continue;
    double r = q->vs_vol[v->iterations - 1].rel_l2;
    if (!any || r < *rel || isnan(*rel)) *rel = r;
    any = 1;
  }
  return any;
}

/* a and b are the same distance: equal, or both NaN. */
static int same_distance(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

int app_validate_closest_line(const dbtr_validate *v, dbtr_precision p, char *buf, size_t len) {
  double min = 0.0;
  if (!closest_of(v, p, &min)) return 0;
  size_t last = v->iterations - 1, at = 0;
  const char *pn = dbtr_precision_name(p);
  const dbtr_referee_stats *won = NULL;
  at += (size_t)snprintf(buf, len, "closest to exact (%s):", pn);
  for (size_t i = 0; i < v->n_paths && at < len; i++) { /* the closest, with any at the same distance */
    const dbtr_vpath *q = &v->paths[i];
    if (!app_validate_ranked(q, p) || !same_distance(q->vs_vol[last].rel_l2, min)) continue;
    at += (size_t)snprintf(buf + at, len - at, "%s %s", won ? " =" : "", q->name);
    won = &q->vs_vol[last];
  }
  if (at < len && won)
    at += (size_t)snprintf(buf + at, len - at, ", %.3gx the best %s answer (rel L2 %.3g)", won->best_units, pn, min);
  for (size_t i = 0, k = 0; i < v->n_paths && at < len; i++) { /* the others */
    const dbtr_vpath *q = &v->paths[i];
    if (!app_validate_ranked(q, p) || same_distance(q->vs_vol[last].rel_l2, min)) continue;
    at += (size_t)snprintf(buf + at, len - at, "%s %s %.3gx", k++ ? "," : ";", q->name, q->vs_vol[last].best_units);
  }
  return 1;
}

static void stats_json(FILE *f, const dbtr_diff_stats *s) {
  fprintf(f, "{\"n\": %zu, \"differ\": %zu, ", s->n, s->n_differ);
  json_num(f, "max_abs", s->max_abs);
  fprintf(f, ", ");
  json_num(f, "mean_abs", s->mean_abs);
  fprintf(f, ", \"max_ulp\": %llu, \"median_ulp\": %llu, ", (unsigned long long)s->max_ulp,
          (unsigned long long)s->median_ulp);
  json_num(f, "rel_l2", s->rel_l2);
  fprintf(f, ", \"differ_u16\": %zu, \"beyond_4ulp\": %zu, ", s->n_differ_u16, s->beyond_4ulp);
  json_num(f, "scale_ulp", s->scale_ulp);
  fprintf(f, "}");
}

FILE *app_report_open(const char *dir, const char *name, dbtr_atomic_file *af, int *rc) {
  char path[1024];
  snprintf(path, sizeof path, "%.*s/%s", cli_folder_len(dir), dir, name);
  if ((*rc = dbtr_atomic_begin(af, path))) return NULL;
  FILE *f = fopen(af->tmp, "w");
  if (!f) {
    dbtr_atomic_abort(af);
    *rc = dbtr_err(DBTR_EIO, "%s: cannot write: %s", path, strerror(errno));
  }
  return f;
}

int app_report_close(FILE *f, dbtr_atomic_file *af) {
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) {
    int rc = dbtr_err(DBTR_EIO, "%s: write failed", af->target);
    dbtr_atomic_abort(af);
    return rc;
  }
  return dbtr_atomic_commit(af);
}

static int write_csv(const char *dir, const dbtr_validate *r) {
  dbtr_atomic_file af;
  int rc;
  FILE *f = app_report_open(dir, "validate.csv", &af, &rc);
  if (!f) return rc;
  fprintf(f, "iteration,path,reference,quantity,n,differ,percent,max_abs,mean_abs,max_ulp,median_ulp,rel_l2,differ_u16,"
             "deviance,beyond_4ulp,scale_ulp,referee_rel_l2,referee_best_units,referee_max_ulp,referee_median_ulp,"
             "referee_beyond_4ulp,referee_scale_ulp,referee_best\n");
  for (size_t it = 0; it < r->iterations; it++)
    for (size_t i = 0; i < r->n_paths; i++) {
      const dbtr_vpath *p = &r->paths[i];
      for (int q = 0; q < 2; q++) {
        const dbtr_diff_stats *s = q ? &p->vol[it] : &p->proj[it];
        fprintf(f, "%zu,%s,%s,%s,%zu,%zu,%.6g,%.9g,%.9g,%llu,%llu,%.9g,%zu,%.12g,%zu,%.9g", it + 1, p->name,
                dbtr_validate_ref_name(p->ref), q ? "volume" : "projections", s->n, s->n_differ,
                s->n ? 100.0 * (double)s->n_differ / (double)s->n : 0.0, s->max_abs, s->mean_abs,
                (unsigned long long)s->max_ulp, (unsigned long long)s->median_ulp, s->rel_l2, s->n_differ_u16,
                p->deviance[it], s->beyond_4ulp, s->scale_ulp);
        const dbtr_referee_stats *x = !r->referee ? NULL : q ? &p->vs_vol[it] : &p->vs_proj[it];
        if (x)
          fprintf(f, ",%.9g,%.9g,%llu,%llu,%zu,%.9g,%.9g\n", x->rel_l2, x->best_units, (unsigned long long)x->max_ulp,
                  (unsigned long long)x->median_ulp, x->beyond_4ulp, x->scale_ulp, x->best);
        else
          fprintf(f, ",,,,,,,\n");
      }
    }
  return app_report_close(f, &af);
}

/* A number for the quality CSV: %.17g, which reads back to the same double, or empty for NaN
 * (not measurable) and "inf"/"-inf". */
static void csv_num(FILE *f, double x) {
  if (isnan(x))
    fprintf(f, ",");
  else if (isinf(x))
    fprintf(f, ",%s", x > 0 ? "inf" : "-inf");
  else
    fprintf(f, ",%.17g", x);
}

/* quality_changes.csv: a row per path, iteration and object (docs/validation.md, "Quality"). */
static int write_quality_csv(const char *dir, const dbtr_validate *r) {
  dbtr_atomic_file af;
  int rc;
  FILE *f = app_report_open(dir, "quality_changes.csv", &af, &rc);
  if (!f) return rc;
  fprintf(f, "path,reference,iteration,object,kind,focus,focus_ref,cnr,cnr_ref,dcnr_percent,fwhm,fwhm_ref,dfwhm_mm,"
             "contrast,contrast_ref,dcontrast_percent\n");
  for (size_t i = 0; i < r->n_paths; i++)
    for (size_t it = 0; it < r->iterations; it++)
      for (size_t j = 0; j < r->n_objects; j++) {
        const dbtr_vpath *p = &r->paths[i];
        const dbtr_quality_change *c = &p->quality[it * r->n_objects + j];
        fprintf(f, "%s,%s,%zu,%zu,%s,%zu,%zu", p->name, dbtr_validate_ref_name(p->ref), it + 1, c->object,
                r->objects->info[c->object].kind, c->focus, c->focus_ref);
        for (int k = 0; k < DBTR_QMEASURES; k++) {
          csv_num(f, c->m[k].value);
          csv_num(f, c->m[k].ref);
          csv_num(f, c->m[k].change);
        }
        fprintf(f, "\n");
      }
  return app_report_close(f, &af);
}

static void referee_stats_json(FILE *f, const dbtr_referee_stats *s) {
  fprintf(f, "{\"n\": %zu, ", s->n);
  json_num(f, "rel_l2", s->rel_l2);
  fprintf(f, ", \"max_ulp\": %llu, \"median_ulp\": %llu, \"beyond_4ulp\": %zu, ", (unsigned long long)s->max_ulp,
          (unsigned long long)s->median_ulp, s->beyond_4ulp);
  json_num(f, "scale_ulp", s->scale_ulp);
  fprintf(f, ", ");
  json_num(f, "best", s->best);
  fprintf(f, ", ");
  json_num(f, "best_units", s->best_units);
  fprintf(f, "}");
}

/* "referee": its backend, the best answers per iteration and the closest-to-exact verdicts;
 * null without it. */
static void referee_json(FILE *f, const dbtr_validate *r) {
  if (!r->referee) {
    fprintf(f, "  \"referee\": null,\n");
    return;
  }
  fprintf(f, "  \"referee\": {\"backend\": \"%s\", \"best\": [\n", dbtr_validate_referee_name(r->referee));
  for (size_t it = 0; it < r->iterations; it++) {
    const dbtr_vbest *b = &r->best[it];
    fprintf(f, "    {\"iteration\": %zu, \"deviance\": %.12g", it + 1, b->deviance);
    for (int q = 0; q < 2; q++) {
      fprintf(f, ", \"%s\": {", dbtr_precision_name((dbtr_precision)q));
      json_num(f, "projections", b->proj[q]);
      fprintf(f, ", ");
      json_num(f, "volume", b->vol[q]);
      fprintf(f, "}");
    }
    fprintf(f, "}%s\n", it + 1 < r->iterations ? "," : "");
  }
  fprintf(f, "  ], \"closest\": {");
  for (int q = 0, k = 0; q < 2; q++) {
    char line[2048];
    dbtr_precision p = (dbtr_precision)q;
    if (!app_validate_closest_line(r, p, line, sizeof line)) continue;
    fprintf(f, "%s\n    \"%s\": {\"verdict\": \"%s\", \"ranked\": [", k++ ? "," : "", dbtr_precision_name(p), line);
    for (size_t i = 0, n = 0; i < r->n_paths; i++) {
      const dbtr_vpath *pa = &r->paths[i];
      if (!app_validate_ranked(pa, p)) continue;
      fprintf(f, "%s{\"path\": \"%s\", ", n++ ? ", " : "", pa->name);
      json_num(f, "rel_l2", pa->vs_vol[r->iterations - 1].rel_l2);
      fprintf(f, ", ");
      json_num(f, "best_units", pa->vs_vol[r->iterations - 1].best_units);
      fprintf(f, "}");
    }
    fprintf(f, "]}");
  }
  fprintf(f, "\n  }},\n");
}

/* The largest change of one measure (dbtr_quality_extreme) as JSON. */
static void extreme_json(FILE *f, const dbtr_validate *r, const char *key, const dbtr_quality_extreme *e) {
  fprintf(f, "\"%s\": {", key);
  if (e->found) {
    /* %.17g reads back as the same double: the same number as quality_changes.csv's row. */
    fprintf(f, "\"change\": %.17g, \"object\": %zu, \"kind\": \"%s\", \"iteration\": %zu, ", e->change, e->object,
            r->objects->info[e->object].kind, e->iteration);
  } else {
    fprintf(f, "\"change\": null, \"object\": null, \"kind\": null, \"iteration\": null, ");
  }
  fprintf(f, "\"not_measurable\": %zu, \"one_sided\": %zu}", e->not_measurable, e->one_sided);
}

/* A path's "quality": null without --quality, else its verdict and largest changes. */
static void quality_json(FILE *f, const dbtr_validate *r, const dbtr_vpath *p) {
  if (!r->n_objects) {
    fprintf(f, "null");
    return;
  }
  static const char *const keys[DBTR_QMEASURES] = {"cnr_percent", "fwhm_mm", "contrast_percent"};
  char line[1024];
  app_validate_quality_verdict(r, p, line, sizeof line);
  fprintf(f, "{\"verdict\": \"%s\", \"same_volumes\": %s, ", line, app_validate_same_volumes(r, p) ? "true" : "false");
  for (int w = 0; w < 2; w++) {
    fprintf(f, "\"%s\": {", w ? "all" : "last");
    for (int k = 0; k < DBTR_QMEASURES; k++) {
      if (k) fprintf(f, ", ");
      extreme_json(f, r, keys[k], w ? &p->quality_verdict.all[k] : &p->quality_verdict.last[k]);
    }
    fprintf(f, "}%s", w ? "}" : ", ");
  }
}

static int write_json(const char *dir, const char *scan, size_t subsets, const dbtr_validate *r) {
  dbtr_atomic_file af;
  int rc;
  FILE *f = app_report_open(dir, "validate.json", &af, &rc);
  if (!f) return rc;
  fprintf(f, "{\n  \"scan\": \"");
  for (const char *c = scan; *c; c++) fprintf(f, (*c == '"' || *c == '\\') ? "\\%c" : "%c", *c);
  fprintf(f, "\",\n  \"iterations\": %zu,\n  \"subsets\": %zu,\n  \"lockstep\": %s,\n", r->iterations, subsets,
          r->lockstep ? "true" : "false");
  if (r->n_objects)
    fprintf(f, "  \"quality\": {\"objects_from\": \"%s\", \"objects\": %zu, \"changes\": \"quality_changes.csv\"},\n",
            r->objects->name, r->n_objects);
  else
    fprintf(f, "  \"quality\": null,\n");
  referee_json(f, r);
  fprintf(f, "  \"paths\": [\n");
  for (size_t i = 0; i < r->n_paths; i++) {
    const dbtr_vpath *p = &r->paths[i];
    char v[256];
    app_validate_verdict(p, v, sizeof v);
    fprintf(f, "    {\"name\": \"%s\", \"reference\": \"%s\", \"identical\": %s, \"verdict\": \"%s\", ", p->name,
            dbtr_validate_ref_name(p->ref), p->first_iter ? "false" : "true", v);
    if (p->explains >= 0) fprintf(f, "\"explains\": \"%s\", ", r->paths[p->explains].name);
    fprintf(f, "\"quality\": ");
    quality_json(f, r, p);
    fprintf(f, ",\n     \"iterations\": [\n");
    for (size_t it = 0; it < r->iterations; it++) {
      fprintf(f, "      {\"iteration\": %zu, \"deviance\": %.12g, \"projections\": ", it + 1, p->deviance[it]);
      stats_json(f, &p->proj[it]);
      fprintf(f, ", \"volume\": ");
      stats_json(f, &p->vol[it]);
      fprintf(f, ", \"vs_referee\": ");
      if (r->referee) {
        fprintf(f, "{\"projections\": ");
        referee_stats_json(f, &p->vs_proj[it]);
        fprintf(f, ", \"volume\": ");
        referee_stats_json(f, &p->vs_vol[it]);
        fprintf(f, "}");
      } else {
        fprintf(f, "null");
      }
      fprintf(f, "}%s\n", it + 1 < r->iterations ? "," : "");
    }
    fprintf(f, "    ]}%s\n", i + 1 < r->n_paths ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  return app_report_close(f, &af);
}

/* The plots: what each shows of the volume per iteration. */
typedef enum { PLOT_DIFFERING, PLOT_MAX_DIFF, PLOT_VS_REFEREE } plot_kind;

static int write_plot(const char *dir, const dbtr_validate *r, plot_kind kind) {
  /* With the referee, the best float and double answers are lines of their own. */
  size_t n = r->n_paths + (kind == PLOT_VS_REFEREE ? 2 : 0), it = r->iterations;
  double *y = malloc(n * it * sizeof(double));
  dbtr_svg_series *s = malloc(n * sizeof *s);
  if (!y || !s) {
    free(y);
    free(s);
    return dbtr_err(DBTR_ENOMEM, "report: out of memory");
  }
  for (size_t i = 0; i < n; i++) {
    for (size_t k = 0; k < it; k++)
      y[i * it + k] = i >= r->n_paths ? r->best[k].vol[i - r->n_paths]
                      : kind == PLOT_MAX_DIFF ? r->paths[i].vol[k].max_abs
                      : kind == PLOT_VS_REFEREE ? r->paths[i].vs_vol[k].rel_l2
                                                : (double)r->paths[i].vol[k].n_differ;
    s[i].name = i < r->n_paths ? r->paths[i].name : i == r->n_paths ? "best float" : "best double";
    s[i].y = y + i * it;
  }
  static const char *const titles[] = {"voxels that differ from the CPU reference",
                                       "max |difference| of the volume against the CPU reference",
                                       "relative L2 of the volume against the referee (double-double)"};
  static const char *const y_labels[] = {"differing voxels", "max |difference| (1/mm)", "relative L2"};
  static const char *const files[] = {"differing.svg", "max_diff.svg", "vs_referee.svg"};
  dbtr_svg_plot p = {.title = titles[kind],
                     .x_label = "iteration",
                     .y_label = y_labels[kind],
                     .log_y = 1,
                     .log_floor = 0.0,
                     .n_points = it};
  char path[1024];
  snprintf(path, sizeof path, "%.*s/%s", cli_folder_len(dir), dir, files[kind]);
  int rc = dbtr_svg_write(path, &p, s, n);
  free(y);
  free(s);
  return rc;
}

int app_validate_report(const char *dir, const char *scan, size_t subsets, const dbtr_validate *r) {
  if (mkdir(dir, 0755) != 0 && errno != EEXIST)
    return dbtr_err(DBTR_EIO, "--report %s: cannot create the folder: %s", dir, strerror(errno));
  int rc = write_csv(dir, r);
  if (!rc) rc = write_json(dir, scan, subsets, r);
  if (!rc) rc = write_plot(dir, r, PLOT_DIFFERING);
  if (!rc) rc = write_plot(dir, r, PLOT_MAX_DIFF);
  if (!rc && r->referee) rc = write_plot(dir, r, PLOT_VS_REFEREE);
  if (!rc && r->n_objects) rc = write_quality_csv(dir, r);
  return rc;
}
