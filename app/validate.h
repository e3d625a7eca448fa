/* app/validate.h: the state of one `dbtr validate` run, shared by the command
 * (app/cmd_validate.c) and its report writers (app/validate_report.c). */
#ifndef DBTR_APP_VALIDATE_H
#define DBTR_APP_VALIDATE_H

#include <stdint.h>

#include "recon/backend.h"
#include "recon/compare.h"

/* One compared path: a backend, its reference (the CPU in the same precision, or the CPU
 * double for the CPU float path), and what was measured after each iteration. */
typedef struct {
  char name[48];
  int is_gpu;
  dbtr_gpu_mode mode;     /* GPU paths */
  dbtr_precision prec;
  int threads;            /* CPU paths */
  int ref;                /* 0: cpu-float reference, 1: cpu-double reference */
  int explains;           /* -1, or the index of the path whose difference this variant explains */
  dbtr_backend *b;
  dbtr_diff_stats *proj, *vol; /* [iterations] */
  double *deviance;       /* [iterations] */
  size_t first_iter;      /* 0 = identical at every iteration */
  int first_in_proj;      /* 1: the first difference was in the forward projections */
  uint64_t first_max_ulp;
} vpath;

typedef struct {
  const char *scan;
  size_t iterations, subsets;
  int lockstep;
  size_t n_paths;
  vpath *paths;
  double *ref_dev[2];     /* [iterations] deviance of the references */
  int have_ref[2];
} vrun;

/* Writes DIR/validate.csv, DIR/validate.json, DIR/differing.svg and DIR/max_diff.svg. */
int app_validate_report(const char *dir, const vrun *r);
/* The verdict of a path as one line: "bitwise identical" or "differs: first at ...". */
void app_validate_verdict(const vpath *p, char *buf, size_t len);

#endif
