/* recon/validate.h: the validation engine behind `dbtr validate` (docs/validation.md).
 *
 * A run takes one ML-EM problem and a list of paths (the CPU paths cpu-1-thread and
 * cpu-float, GPU modes, and with explain the single-change variants of the match modes),
 * runs the CPU references and every path side by side, and compares each path with its
 * reference after every iteration, in the forward projections and in the volume. It
 * prints nothing: a callback receives each row as it is measured, and the results stay in
 * the run for the verdicts, the --explain summary, reports and tests.
 *
 *   dbtr_validate v;
 *   dbtr_validate_opts o = {.paths = names, .n_paths = 2, .iterations = 6};
 *   int rc = dbtr_validate_open(&v, &m, &o);
 *   if (!rc) rc = dbtr_validate_run(&v, on_row, user);
 *   ... v.paths[i].first_iter, v.paths[i].vol[v.iterations - 1] ...
 *   dbtr_validate_close(&v);
 */
#ifndef DBTR_VALIDATE_H
#define DBTR_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "recon/backend.h"
#include "recon/compare.h"
#include "recon/mlem.h"

/* The CPU reference a path is compared with: the CPU in the path's own precision, or the
 * CPU in double for the CPU float path. */
typedef enum { DBTR_VREF_FLOAT = 0, DBTR_VREF_DOUBLE = 1, DBTR_VREF_COUNT } dbtr_vref;

/* One compared path, and what was measured after each iteration. */
typedef struct {
  char name[48];             /* "cpu-1-thread", "cpu-float", "fast", "cpu-match+fma", ... */
  int is_gpu;
  dbtr_gpu_mode mode;        /* GPU paths */
  dbtr_precision prec;       /* the element type of its volume and projections */
  dbtr_vref ref;
  int explains;              /* -1, or the index of the path whose difference this variant explains */
  dbtr_diff_stats *proj, *vol; /* [iterations]: the path against its reference */
  double *deviance;          /* [iterations]: the path's own Poisson deviance */
  size_t first_iter;         /* the first iteration that differs (1-based); 0: identical at every one */
  int first_in_proj;         /* 1: that first difference was in the forward projections */
  uint64_t first_max_ulp;    /* the max ULP distance of that first difference */
  /* private */
  int threads;               /* CPU paths: 1 for cpu-1-thread, 0 for the problem's threads */
  dbtr_backend *b;
} dbtr_vpath;

typedef struct {
  const char *const *paths;  /* path names, in the order to run; a repeated name runs once */
  size_t n_paths;
  int explain;               /* add each mode's single-change variants after it */
  size_t iterations;         /* >= 1 */
  int lockstep;              /* start every path from its reference's state at each iteration */
} dbtr_validate_opts;

/* A run; the caller owns the struct. The public fields are read-only. */
typedef struct {
  size_t iterations;
  int lockstep;
  size_t n_paths;
  dbtr_vpath *paths;
  int have_ref[DBTR_VREF_COUNT]; /* 1 for each reference some path is compared with */
  size_t done;               /* iterations run */
  /* private */
  const dbtr_mlem *m;
  dbtr_backend *ref_b[DBTR_VREF_COUNT];
  void *ref_vol[DBTR_VREF_COUNT], *ref_proj[DBTR_VREF_COUNT], *ref_prev[DBTR_VREF_COUNT];
  void *pv, *pp;             /* a path's state, n_vox and n_proj doubles */
  void *rv, *rp;             /* a reference converted to a path's precision */
} dbtr_validate;

/* One measured row: a path after one iteration, against its reference. The arrays hold
 * n elements of path->prec (proj->n and vol->n) and are valid during the call only; the
 * reference's are converted to the path's precision, as they were compared. */
typedef struct {
  size_t iteration;          /* 1-based */
  const dbtr_vpath *path;
  const char *reference;     /* dbtr_validate_ref_name(path->ref) */
  const dbtr_diff_stats *proj, *vol;
  double deviance;           /* the path's Poisson deviance of the iteration */
  const void *path_proj, *path_vol, *ref_proj, *ref_vol;
} dbtr_validate_row;

typedef void (*dbtr_validate_row_fn)(void *user, const dbtr_validate_row *row);

/* 1 for the name of a GPU path (a mode or a variant), 0 for a CPU path, DBTR_EINVAL with a
 * message naming it for anything else. Lets a caller check names before it has a problem. */
int dbtr_validate_path_is_gpu(const char *name);

/* Opens a run on m (which must outlive it): the paths, a backend per path and per
 * reference, each loaded with the start volume. DBTR_EINVAL for a bad name or an empty
 * list; a GPU path without a GPU fails as dbtr_gpu_backend_create does. On failure v is
 * left closed. */
int dbtr_validate_open(dbtr_validate *v, const dbtr_mlem *m, const dbtr_validate_opts *o);

/* Runs every iteration: the references first, then each path in turn, calling on_row (may
 * be NULL) after each path's iteration, so the rows come iteration by iteration, in path
 * order. Runs once; DBTR_EINVAL after that. */
int dbtr_validate_run(dbtr_validate *v, dbtr_validate_row_fn on_row, void *user);

/* "cpu-float" or "cpu-double". */
const char *dbtr_validate_ref_name(dbtr_vref ref);

/* --explain: the share of its mode's final volume difference (relative L2) that a variant
 * path produces alone; 0 when the mode's is 0 or p explains nothing. */
double dbtr_validate_explained_share(const dbtr_validate *v, const dbtr_vpath *p);

/* The current volume of path p (n_vox floats), and if diff is not NULL its difference from
 * its reference, computed in double and rounded once to float: the volumes for the viewer. */
int dbtr_validate_path_volume(dbtr_validate *v, const dbtr_vpath *p, float *vol, float *diff);
/* The current volume of reference ref (n_vox floats); DBTR_EINVAL if the run has none. */
int dbtr_validate_ref_volume(const dbtr_validate *v, dbtr_vref ref, float *vol);

/* Frees the backends and buffers; safe on a closed or zeroed run. */
void dbtr_validate_close(dbtr_validate *v);

#endif
