/* io/svg.c: line plots as SVG 1.1 text. */
#include "io/svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/atomic_file.h"
#include "recon/error.h"

enum { W = 720, H = 420, L = 90, R = 200, T = 50, B = 60 };

static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                      "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

static void escape(FILE *f, const char *s) {
  for (; s && *s; s++) {
    if (*s == '<') fputs("&lt;", f);
    else if (*s == '>') fputs("&gt;", f);
    else if (*s == '&') fputs("&amp;", f);
    else fputc(*s, f);
  }
}

/* On a log axis, values <= the floor (zeros) sit on the bottom line, labelled "0", one
 * decade below the smallest positive value. */
static double yval(const dbtr_svg_plot *p, double v, double lo) {
  if (!p->log_y) return v;
  return v > p->log_floor ? log10(v) : lo;
}

int dbtr_svg_write(const char *path, const dbtr_svg_plot *p, const dbtr_svg_series *s, size_t ns) {
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  for (size_t i = 0; i < ns; i++)
    for (size_t k = 0; k < p->n_points; k++) {
      double v = s[i].y[k];
      if (p->log_y && !(v > p->log_floor)) continue;
      v = p->log_y ? log10(v) : v;
      if (isfinite(v)) {
        lo = fmin(lo, v);
        hi = fmax(hi, v);
      }
    }
  if (!isfinite(lo)) lo = hi = 0.0;
  if (p->log_y) {
    lo = floor(lo) - 1.0; /* the "0" row */
    hi = ceil(hi);
  }
  if (hi <= lo) hi = lo + 1.0;
  dbtr_atomic_file af;
  int rc = dbtr_atomic_begin(&af, path);
  if (rc) return rc;
  FILE *f = fopen(af.tmp, "w");
  if (!f) {
    dbtr_atomic_abort(&af);
    return dbtr_err(DBTR_EIO, "%s: cannot write", path);
  }
  double pw = W - L - R, ph = H - T - B;
  fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H);
  fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n<text x=\"%d\" y=\"24\" font-size=\"15\">", W, H, L);
  escape(f, p->title);
  fprintf(f, "</text>\n<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#444\"/>\n", L, T, pw, ph);
  /* y ticks: every decade on a log axis, 5 steps on a linear one. */
  int nt = p->log_y ? (int)(hi - lo) : 5;
  for (int t = 0; t <= nt; t++) {
    double v = lo + (hi - lo) * t / nt, y = T + ph - (v - lo) / (hi - lo) * ph;
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, y, L + pw, y);
    if (p->log_y && t == 0)
      fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">0</text>\n", L - 6, y + 4);
    else if (p->log_y)
      fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">1e%d</text>\n", L - 6, y + 4, (int)lround(v));
    else
      fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.3g</text>\n", L - 6, y + 4, v);
  }
  for (size_t k = 0; k < p->n_points; k++) {
    double x = L + (p->n_points > 1 ? pw * (double)k / (double)(p->n_points - 1) : pw / 2);
    fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%zu</text>\n", x, T + ph + 18, k + 1);
  }
  fprintf(f, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">", L + pw / 2, H - 14);
  escape(f, p->x_label);
  fprintf(f, "</text>\n<text transform=\"translate(18,%.0f) rotate(-90)\" text-anchor=\"middle\">", T + ph / 2);
  escape(f, p->y_label);
  fprintf(f, "</text>\n");
  for (size_t i = 0; i < ns; i++) {
    const char *col = colours[i % (sizeof colours / sizeof colours[0])];
    /* Every other line dashed, so lines that coincide (two modes at 0) both show. */
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", col,
            i % 2 ? " stroke-dasharray=\"6,4\"" : "");
    for (size_t k = 0; k < p->n_points; k++) {
      double x = L + (p->n_points > 1 ? pw * (double)k / (double)(p->n_points - 1) : pw / 2);
      double v = yval(p, s[i].y[k], lo);
      double y = T + ph - ((isfinite(v) ? v : hi) - lo) / (hi - lo) * ph;
      fprintf(f, "%.1f,%.1f ", x, y);
    }
    fprintf(f, "\"/>\n<line x1=\"%.0f\" y1=\"%zu\" x2=\"%.0f\" y2=\"%zu\" stroke=\"%s\" stroke-width=\"3\"/>\n<text x=\"%.0f\" y=\"%zu\">",
            L + pw + 12, (size_t)T + 12 + 18 * i, L + pw + 32, (size_t)T + 12 + 18 * i, col, L + pw + 38, (size_t)T + 16 + 18 * i);
    escape(f, s[i].name);
    fprintf(f, "</text>\n");
  }
  fprintf(f, "</svg>\n");
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) {
    dbtr_atomic_abort(&af);
    return dbtr_err(DBTR_EIO, "%s: write failed", path);
  }
  return dbtr_atomic_commit(&af);
}
