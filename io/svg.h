/* io/svg.h: a small SVG line-plot writer for reports (dbtr validate): one line per series,
 * linear or logarithmic y, readable in any browser. Written atomically. */
#ifndef DBTR_SVG_H
#define DBTR_SVG_H

#include <stddef.h>

typedef struct {
  const char *name;   /* legend text */
  const double *y;    /* n_points values; on a log axis, values <= 0 are drawn at the floor */
} dbtr_svg_series;

typedef struct {
  const char *title, *x_label, *y_label;
  int log_y;          /* 1: log10 y axis */
  double log_floor;   /* log axis: values <= this (usually 0) sit on the bottom row, labelled "0" */
  size_t n_points;    /* x = 1 .. n_points (iterations) */
} dbtr_svg_plot;

int dbtr_svg_write(const char *path, const dbtr_svg_plot *plot, const dbtr_svg_series *series, size_t n_series);

#endif
