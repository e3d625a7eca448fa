/* app/validate_table.c: what `dbtr validate` prints on stdout from the engine's results
 * (engine/validate.h): the table of each path against its CPU reference, with the referee
 * the table of each path against it, the verdicts and the --explain summary. Every line
 * fits in APP_COLUMNS (100) columns: the tables' columns are sized for it, and prose is
 * wrapped. docs/validation.md shows and explains the columns. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "app/validate.h"

/* The widest label a table's path column takes; a longer name (only --explain's variants
 * are longer) is split after its '+', the rest on the path's second line. */
enum { LABEL_MAX = 14 };

/* Prints text's words from column col on, breaking lines before APP_COLUMNS and starting
 * each new one at column indent; ends the line. */
static void wrap_from(int col, const char *text, int indent) {
  int fresh = 1;
  for (const char *w = text;;) {
    while (*w == ' ') w++;
    if (!*w) break;
    int len = (int)strcspn(w, " ");
    if (!fresh && col + 1 + len > APP_COLUMNS) {
      printf("\n%*s", indent, "");
      col = indent;
      fresh = 1;
    }
    if (!fresh) {
      putchar(' ');
      col++;
    }
    printf("%.*s", len, w);
    col += len;
    fresh = 0;
    w += len;
  }
  putchar('\n');
}

void app_print_wrapped(const char *text, int first, int indent) {
  printf("%*s", first, "");
  wrap_from(first, text, indent);
}

/* "  NAME  text": the name in a column w wide, the text after it wrapped under itself. */
static void print_named(int w, const char *name, const char *text) {
  int col = printf("  %-*s ", w, name);
  wrap_from(col, text, w + 3);
}

/* A path's label on its two lines: the name and nothing, or a long variant's name split. */
static void labels(const char *name, char first[48], char second[48]) {
  const char *plus = strchr(name, '+');
  if (strlen(name) <= LABEL_MAX || !plus) {
    snprintf(first, 48, "%s", name);
    second[0] = '\0';
  } else {
    snprintf(first, 48, "%.*s", (int)(plus - name + 1), name);
    snprintf(second, 48, "  %s", plus + 1);
  }
}

/* The path column's width: the widest label, and at least `least` (the header's). */
static int label_width(const dbtr_validate *v, int least) {
  int w = least;
  for (size_t i = 0; i < v->n_paths; i++) {
    char a[48], b[48];
    labels(v->paths[i].name, a, b);
    if ((int)strlen(a) > w) w = (int)strlen(a);
    if ((int)strlen(b) > w) w = (int)strlen(b);
  }
  return w;
}

/* An ulp count in at most `width` characters: exact up to width - 1 digits, else in e
 * notation (a NaN's UINT64_MAX: "NaN"). */
static const char *ulps(char buf[24], uint64_t u, int width) {
  uint64_t exact_below = 1;
  for (int i = 1; i < width; i++) exact_below *= 10;
  if (u == UINT64_MAX)
    snprintf(buf, 24, "NaN");
  else if (u < exact_below)
    snprintf(buf, 24, "%" PRIu64, u);
  else
    snprintf(buf, 24, "%.*e", width - 6, (double)u);
  return buf;
}

/* A share of n in percent, 7 characters at most: "0" only when none, so that one element
 * in a billion still shows. */
static const char *share(char buf[24], size_t k, size_t n) {
  double pct = n ? 100.0 * (double)k / (double)n : 0.0;
  if (k == 0)
    snprintf(buf, 24, "0");
  else if (pct < 0.01)
    snprintf(buf, 24, "<0.01%%");
  else
    snprintf(buf, 24, "%.2f%%", pct);
  return buf;
}

static void print_row(size_t it, int w, const char *label, const char *what, const dbtr_diff_stats *s, double dev) {
  char d[24], mx[24], md[24];
  printf("%4zu %-*s %-4s %7s %8.3g %8s %7s %9.3g %8.3g %8zu %13.8g\n", it, w, label, what, share(d, s->n_differ, s->n),
         s->max_abs, ulps(mx, s->max_ulp, 8), ulps(md, s->median_ulp, 7), s->scale_ulp, s->rel_l2, s->n_differ_u16, dev);
}

/* Which CPU reference each path is compared with, said once above the table. */
static void print_references(const dbtr_validate *v) {
  char text[2048] = "each path against its CPU reference:";
  for (int r = 0; r < DBTR_VREF_COUNT; r++) {
    if (!v->have_ref[r]) continue;
    size_t len = strlen(text);
    snprintf(text + len, sizeof text - len, "%s %s for", r && v->have_ref[0] ? ";" : "", dbtr_validate_ref_name((dbtr_vref)r));
    for (size_t i = 0, k = 0; i < v->n_paths; i++)
      if (v->paths[i].ref == (dbtr_vref)r) {
        len = strlen(text);
        snprintf(text + len, sizeof text - len, "%s %s", k++ ? "," : "", v->paths[i].name);
      }
  }
  app_print_wrapped(text, 0, 2);
}

void app_validate_print_table(const dbtr_validate *v) {
  int w = label_width(v, 4);
  print_references(v);
  /* Elementwise ulps explode where values touch zero; scale ulps do not (docs/validation.md). */
  printf("max ulp, med ulp: in each element's own ulps; scale ulp: max|d| in ulps of the largest value\n");
  printf("%4s %-*s %-4s %7s %8s %8s %7s %9s %8s %8s %13s\n", "iter", w, "path", "what", "differ", "max|d|", "max ulp",
         "med ulp", "scale ulp", "rel L2", "u16", "deviance");
  for (size_t it = 0; it < v->iterations; it++)
    for (size_t i = 0; i < v->n_paths; i++) {
      const dbtr_vpath *p = &v->paths[i];
      char a[48], b[48];
      labels(p->name, a, b);
      print_row(it + 1, w, a, "proj", &p->proj[it], p->deviance[it]);
      print_row(it + 1, w, b, "vol", &p->vol[it], p->deviance[it]);
    }
}

/* Best units in 7 characters: 3 digits, whole numbers to 999999, then e notation. */
static const char *units(char buf[24], double x) {
  snprintf(buf, 24, x < 1000.0 ? "%.3g" : x < 999999.5 ? "%.0f" : "%.1e", x);
  return buf;
}

static void print_vs_row(size_t it, int w, const char *label, const char *what, const dbtr_referee_stats *s) {
  char u[24], mx[24], md[24], b4[24];
  printf("%4zu %-*s %-4s %9.3g %7s %8s %7s %8s %9.3g\n", it, w, label, what, s->rel_l2, units(u, s->best_units),
         ulps(mx, s->max_ulp, 8), ulps(md, s->median_ulp, 7), share(b4, s->beyond_4ulp, s->n), s->scale_ulp);
}

/* 1 when some path (explain variants included) has precision p. */
static int has_precision(const dbtr_validate *v, dbtr_precision p) {
  for (size_t i = 0; i < v->n_paths; i++)
    if (v->paths[i].prec == p) return 1;
  return 0;
}

void app_validate_print_referee(const dbtr_validate *v) {
  if (!v->referee) return;
  int w = label_width(v, (int)strlen("best double"));
  printf("\nagainst the referee (%s, the algorithm in double-double); ulps in each path's precision;\n"
         "x best: rel L2 in units of the best answer, the referee correctly rounded to that precision\n",
         dbtr_validate_referee_name(v->referee));
  printf("%4s %-*s %-4s %9s %7s %8s %7s %8s %9s\n", "iter", w, "path", "what", "rel L2", "x best", "max ulp", "med ulp",
         ">4 ulp", "scale ulp");
  for (size_t it = 0; it < v->iterations; it++) {
    for (size_t i = 0; i < v->n_paths; i++) {
      const dbtr_vpath *p = &v->paths[i];
      char a[48], b[48];
      labels(p->name, a, b);
      print_vs_row(it + 1, w, a, "proj", &p->vs_proj[it]);
      print_vs_row(it + 1, w, b, "vol", &p->vs_vol[it]);
    }
    for (int q = 0; q < 2; q++) {
      dbtr_precision prec = (dbtr_precision)q;
      if (!has_precision(v, prec)) continue;
      printf("%4zu %-*s %-4s %9.3g %7s\n", it + 1, w, q ? "best double" : "best float", "proj", v->best[it].proj[q], "1");
      printf("%4zu %-*s %-4s %9.3g %7s\n", it + 1, w, "", "vol", v->best[it].vol[q], "1");
    }
  }
}

void app_validate_print_verdicts(const dbtr_validate *v) {
  int w = label_width(v, 4);
  printf("\nverdicts (%zu iteration%s, %s):\n", v->iterations, v->iterations == 1 ? "" : "s",
         v->lockstep ? "lockstep" : "free-running");
  for (size_t i = 0; i < v->n_paths; i++) {
    char line[256];
    app_validate_verdict(&v->paths[i], line, sizeof line);
    print_named(w, v->paths[i].name, line);
  }
  for (int q = 0; v->referee && q < 2; q++) {
    char line[2048];
    if (app_validate_closest_line(v, (dbtr_precision)q, line, sizeof line)) app_print_wrapped(line, 2, 4);
  }
}

void app_validate_print_quality(const dbtr_validate *v) {
  if (!v->n_objects) return;
  int w = label_width(v, 4);
  printf("\nquality against each path's CPU reference (%zu object%s of the %s; CNR and contrast relative, FWHM in mm):\n",
         v->n_objects, v->n_objects == 1 ? "" : "s", strcmp(v->objects->name, "regions") ? "scan's phantom" : "regions given");
  for (size_t i = 0; i < v->n_paths; i++) {
    char line[1024];
    app_validate_quality_verdict(v, &v->paths[i], line, sizeof line);
    print_named(w, v->paths[i].name, line);
  }
}

void app_validate_print_times(const dbtr_validate *v, double total) {
  int w = label_width(v, 4) > 20 ? label_width(v, 4) : 20;
  double gpu = 0.0, gpu_all = 0.0;
  printf("\ntime: %.2f s in all, reading the scan and the set-up included\n", total);
  for (int r = 0; r < DBTR_VREF_COUNT; r++)
    if (v->have_ref[r]) {
      char name[64];
      snprintf(name, sizeof name, "%s reference", dbtr_validate_ref_name((dbtr_vref)r));
      printf("  %-*s %8.2f s\n", w, name, v->ref_seconds[r]);
    }
  if (v->referee) printf("  %-*s %8.2f s\n", w, "referee", v->referee_seconds);
  for (size_t i = 0; i < v->n_paths; i++) {
    const dbtr_vpath *p = &v->paths[i];
    double all = p->seconds_setup + p->seconds_iterations + p->seconds_compare;
    printf("  %-*s %8.2f s: set-up %.2f, iterations %.3f, comparing %.2f\n", w, p->name, all, p->seconds_setup,
           p->seconds_iterations, p->seconds_compare);
    if (p->is_gpu) {
      gpu += p->seconds_iterations;
      gpu_all += all;
    }
  }
  if (gpu_all > 0.0)
    printf("  the GPU paths: %.2f s (%.1f%% of the run), of which their iterations %.3f s (%.2f%%)\n", gpu_all,
           100.0 * gpu_all / total, gpu, 100.0 * gpu / total);
}

void app_validate_print_explain(const dbtr_validate *v) {
  size_t last = v->iterations - 1;
  int w = label_width(v, 4);
  for (size_t i = 0; i < v->n_paths; i++) {
    const dbtr_vpath *m = &v->paths[i];
    int any = 0;
    for (size_t j = 0; j < v->n_paths; j++) any |= v->paths[j].explains == (int)i;
    if (!any) continue;
    char text[256];
    snprintf(text, sizeof text, "%s: final volume rel L2 %.3g, %.2f%% of voxels differ; single changes to the match mode:",
             m->name, m->vol[last].rel_l2, 100.0 * (double)m->vol[last].n_differ / (double)m->vol[last].n);
    putchar('\n');
    app_print_wrapped(text, 0, 2);
    for (size_t j = 0; j < v->n_paths; j++) {
      const dbtr_vpath *p = &v->paths[j];
      char mx[24], line[256];
      if (p->explains != (int)i) continue;
      snprintf(line, sizeof line, "rel L2 %.3g (%.0f%% of the mode's), %.2f%% differ, max %s ulp", p->vol[last].rel_l2,
               100.0 * dbtr_validate_explained_share(v, p),
               100.0 * (double)p->vol[last].n_differ / (double)p->vol[last].n, ulps(mx, p->vol[last].max_ulp, 8));
      print_named(w, p->name, line);
    }
  }
}
