/* app/validate_report.c: the files `dbtr validate --report DIR` writes from the engine's
 * results (recon/validate.h): CSV and JSON of every measurement, and two SVG plots
 * (differing voxels and max |difference| per iteration, log scale, one line per path). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/validate.h"
#include "io/atomic_file.h"
#include "io/svg.h"
#include "recon/error.h"

void app_validate_verdict(const dbtr_vpath *p, char *buf, size_t len) {
  if (!p->first_iter)
    snprintf(buf, len, "bitwise identical to %s", dbtr_validate_ref_name(p->ref));
  else
    snprintf(buf, len, "differs: first at iteration %zu, in the %s, max %llu ulp", p->first_iter,
             p->first_in_proj ? "forward projection" : "volume", (unsigned long long)p->first_max_ulp);
}

/* A number for JSON: %.9g, or null for NaN and infinities, which JSON cannot hold. */
static void json_num(FILE *f, const char *key, double x) {
  if (isfinite(x))
    fprintf(f, "\"%s\": %.9g", key, x);
  else
    fprintf(f, "\"%s\": null", key);
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

/* Opens DIR/name through a temporary file; the caller closes and commits. */
static FILE *open_out(const char *dir, const char *name, dbtr_atomic_file *af, int *rc) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if ((*rc = dbtr_atomic_begin(af, path))) return NULL;
  FILE *f = fopen(af->tmp, "w");
  if (!f) {
    dbtr_atomic_abort(af);
    *rc = dbtr_err(DBTR_EIO, "%s: cannot write: %s", path, strerror(errno));
  }
  return f;
}

static int close_out(FILE *f, dbtr_atomic_file *af) {
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
  FILE *f = open_out(dir, "validate.csv", &af, &rc);
  if (!f) return rc;
  fprintf(f, "iteration,path,reference,quantity,n,differ,percent,max_abs,mean_abs,max_ulp,median_ulp,rel_l2,differ_u16,"
             "deviance,beyond_4ulp,scale_ulp\n");
  for (size_t it = 0; it < r->iterations; it++)
    for (size_t i = 0; i < r->n_paths; i++) {
      const dbtr_vpath *p = &r->paths[i];
      for (int q = 0; q < 2; q++) {
        const dbtr_diff_stats *s = q ? &p->vol[it] : &p->proj[it];
        fprintf(f, "%zu,%s,%s,%s,%zu,%zu,%.6g,%.9g,%.9g,%llu,%llu,%.9g,%zu,%.12g,%zu,%.9g\n", it + 1, p->name,
                dbtr_validate_ref_name(p->ref), q ? "volume" : "projections", s->n, s->n_differ,
                s->n ? 100.0 * (double)s->n_differ / (double)s->n : 0.0, s->max_abs, s->mean_abs,
                (unsigned long long)s->max_ulp, (unsigned long long)s->median_ulp, s->rel_l2, s->n_differ_u16,
                p->deviance[it], s->beyond_4ulp, s->scale_ulp);
      }
    }
  return close_out(f, &af);
}

static int write_json(const char *dir, const char *scan, size_t subsets, const dbtr_validate *r) {
  dbtr_atomic_file af;
  int rc;
  FILE *f = open_out(dir, "validate.json", &af, &rc);
  if (!f) return rc;
  fprintf(f, "{\n  \"scan\": \"");
  for (const char *c = scan; *c; c++) fprintf(f, (*c == '"' || *c == '\\') ? "\\%c" : "%c", *c);
  fprintf(f, "\",\n  \"iterations\": %zu,\n  \"subsets\": %zu,\n  \"lockstep\": %s,\n  \"paths\": [\n", r->iterations,
          subsets, r->lockstep ? "true" : "false");
  for (size_t i = 0; i < r->n_paths; i++) {
    const dbtr_vpath *p = &r->paths[i];
    char v[256];
    app_validate_verdict(p, v, sizeof v);
    fprintf(f, "    {\"name\": \"%s\", \"reference\": \"%s\", \"identical\": %s, \"verdict\": \"%s\", ", p->name,
            dbtr_validate_ref_name(p->ref), p->first_iter ? "false" : "true", v);
    if (p->explains >= 0) fprintf(f, "\"explains\": \"%s\", ", r->paths[p->explains].name);
    fprintf(f, "\"iterations\": [\n");
    for (size_t it = 0; it < r->iterations; it++) {
      fprintf(f, "      {\"iteration\": %zu, \"deviance\": %.12g, \"projections\": ", it + 1, p->deviance[it]);
      stats_json(f, &p->proj[it]);
      fprintf(f, ", \"volume\": ");
      stats_json(f, &p->vol[it]);
      fprintf(f, "}%s\n", it + 1 < r->iterations ? "," : "");
    }
    fprintf(f, "    ]}%s\n", i + 1 < r->n_paths ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  return close_out(f, &af);
}

static int write_plot(const char *dir, const dbtr_validate *r, int max_diff) {
  size_t n = r->n_paths, it = r->iterations;
  double *y = malloc(n * it * sizeof(double));
  dbtr_svg_series *s = malloc(n * sizeof *s);
  if (!y || !s) {
    free(y);
    free(s);
    return dbtr_err(DBTR_ENOMEM, "report: out of memory");
  }
  for (size_t i = 0; i < n; i++) {
    for (size_t k = 0; k < it; k++)
      y[i * it + k] = max_diff ? r->paths[i].vol[k].max_abs : (double)r->paths[i].vol[k].n_differ;
    s[i].name = r->paths[i].name;
    s[i].y = y + i * it;
  }
  dbtr_svg_plot p = {.title = max_diff ? "max |difference| of the volume against the CPU reference"
                                       : "voxels that differ from the CPU reference",
                     .x_label = "iteration",
                     .y_label = max_diff ? "max |difference| (1/mm)" : "differing voxels",
                     .log_y = 1,
                     .log_floor = 0.0,
                     .n_points = it};
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, max_diff ? "max_diff.svg" : "differing.svg");
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
  if (!rc) rc = write_plot(dir, r, 0);
  if (!rc) rc = write_plot(dir, r, 1);
  return rc;
}
