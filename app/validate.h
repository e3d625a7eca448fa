/* app/validate.h: the words and files of `dbtr validate` around the engine's results
 * (recon/validate.h): the verdict line, shared by the terminal and the JSON report, and
 * the report files (app/validate_report.c). */
#ifndef DBTR_APP_VALIDATE_H
#define DBTR_APP_VALIDATE_H

#include <stddef.h>

#include "recon/validate.h"

/* Writes DIR/validate.csv, DIR/validate.json, DIR/differing.svg and DIR/max_diff.svg for a
 * finished run on the scan file scan with subsets ordered subsets. */
int app_validate_report(const char *dir, const char *scan, size_t subsets, const dbtr_validate *v);
/* The verdict of a path as one line: "bitwise identical" or "differs: first at ...". */
void app_validate_verdict(const dbtr_vpath *p, char *buf, size_t len);

#endif
