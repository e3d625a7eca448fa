/* app/validate.h: the words and files of `dbtr validate` around the engine's results
 * (engine/validate.h): the verdict lines, shared by the terminal and the JSON report, what is
 * printed on stdout (app/validate_table.c) and the report files (app/validate_report.c). */
#ifndef DBTR_APP_VALIDATE_H
#define DBTR_APP_VALIDATE_H

#include <stddef.h>
#include <stdio.h>

#include "engine/validate.h"
#include "io/atomic_file.h"

/* No line validate prints on stdout is wider. */
enum { APP_COLUMNS = 100 };

/* Writes DIR/validate.csv, DIR/validate.json, DIR/differing.svg and DIR/max_diff.svg for a
 * finished run on the scan file scan with subsets ordered subsets, with the referee
 * DIR/vs_referee.svg, and with objects (--quality) DIR/quality_changes.csv. */
int app_validate_report(const char *dir, const char *scan, size_t subsets, const dbtr_validate *v);
/* The verdict of a path as one line: "bitwise identical" or "differs: first at ...". */
void app_validate_verdict(const dbtr_vpath *p, char *buf, size_t len);
/* With --quality, the quality verdict of a path as one line (docs/validation.md, "Quality"):
 * the largest change of any object's CNR and ASF FWHM after the last iteration and over all,
 * and what could not be measured; or that its volumes are its reference's bits. */
void app_validate_quality_verdict(const dbtr_validate *v, const dbtr_vpath *p, char *buf, size_t len);
/* 1 when path p's volume is its reference's, bit for bit and in the same precision, after
 * every iteration: its quality changes are then exactly 0. */
int app_validate_same_volumes(const dbtr_validate *v, const dbtr_vpath *p);
/* 1 for a path ranked by the closest-to-exact verdict of precision p: of that precision, and
 * not an --explain variant (a diagnostic, not a mode to pick). */
int app_validate_ranked(const dbtr_vpath *p, dbtr_precision prec);
/* With the referee, the verdict of precision p (float or double): which path is closest to
 * the referee after the last iteration (relative L2 of the volume), by how much in best
 * units, and the others; 0 and nothing written when no path of p is ranked. */
int app_validate_closest_line(const dbtr_validate *v, dbtr_precision p, char *buf, size_t len);

/* A report file, DIR/name, opened through a temporary file (NULL and *rc set on failure), and
 * closed, checked and committed into place: the report files of validate and quality. */
FILE *app_report_open(const char *dir, const char *name, dbtr_atomic_file *af, int *rc);
int app_report_close(FILE *f, dbtr_atomic_file *af);

/* Prints text on stdout in lines of at most APP_COLUMNS, broken at spaces: the first line
 * indented by first spaces, the others by indent. */
void app_print_wrapped(const char *text, int first, int indent);
/* The table of each path against its CPU reference, iteration by iteration, with its head. */
void app_validate_print_table(const dbtr_validate *v);
/* With the referee, the table of each path against it, with the best answers; else nothing. */
void app_validate_print_referee(const dbtr_validate *v);
/* The verdict of each path, and with the referee the closest-to-exact lines. */
void app_validate_print_verdicts(const dbtr_validate *v);
/* With --quality, the quality verdict of each path; else nothing. */
void app_validate_print_quality(const dbtr_validate *v);
/* Where the run's time went (total: the command's, from reading the scan): each reference, the
 * referee, each path's set-up, iterations and comparisons, and the GPU paths' iterations' share. */
void app_validate_print_times(const dbtr_validate *v, double total);
/* The --explain summary. */
void app_validate_print_explain(const dbtr_validate *v);

#endif
