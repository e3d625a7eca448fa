/* recon/validate.h: the validation engine behind `dbtr validate` (docs/validation.md).
 *
 * A run takes one ML-EM problem and a list of paths (the CPU paths cpu-1-thread and
 * cpu-float, GPU modes, and with explain the single-change variants of the match modes),
 * and compares each path with the CPU reference of its precision after every iteration, in
 * the forward projections and in the volume. It streams: each reference's trajectory is
 * computed once and recorded (the volume after every iteration and the projections made
 * during it), then the paths run one after another against the recording, so one backend
 * is alive at a time, and GPU memory holds one. The recording stays in memory when it fits
 * and goes to an unnamed temporary file when it does not. The engine prints nothing: a
 * callback receives each row as it is measured, a second one the progress, and the
 * results stay in the run for the verdicts, the --explain summary, reports and tests.
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
  int replays;               /* 1: the path computes exactly its precision's recorded reference (cpu-float,
                                free-running, beside the float reference), so the recording is its trajectory */
  size_t final_slot;         /* where its final volume is recorded */
} dbtr_vpath;

/* Where the engine stands, for a progress line: stage `stage` of `n_stages` (the references
 * first, then the paths), iteration `iteration` of it, `fraction` done. */
typedef struct {
  size_t stage, n_stages;    /* 1-based */
  const char *name;          /* "cpu-double reference", or the path's name */
  size_t iteration, iterations; /* 1-based */
  double fraction;           /* of the iteration, 0 to 1 */
} dbtr_validate_progress;

typedef struct {
  const char *const *paths;  /* path names, in the order to run; a repeated name runs once */
  size_t n_paths;
  int explain;               /* add each mode's single-change variants after it */
  size_t iterations;         /* >= 1 */
  int lockstep;              /* start every path from its reference's state at each iteration */
  /* Called with fraction 0 as each iteration of each stage begins, then as the ML-EM driver
   * reports (recon/mlem.h) at most every progress_every seconds; may be NULL. */
  void (*progress)(void *user, const dbtr_validate_progress *at);
  void *progress_user;
  double progress_every;
  /* Bytes the recording may take in memory; 0: what is available when the run opens
   * (dbtr_mem_available: the machine's and the cgroup's, or DBTR_MEMORY_LIMIT) less the run's
   * working buffers and largest CPU backend, which must fit (DBTR_ENOMEM otherwise). */
  size_t record_memory;
  const char *spill_dir;     /* the folder for the recording's temporary file; NULL: $TMPDIR, else /tmp */
} dbtr_validate_opts;

/* A run; the caller owns the struct. The public fields are read-only. */
typedef struct {
  size_t iterations;
  int lockstep;
  size_t n_paths;
  dbtr_vpath *paths;
  int have_ref[DBTR_VREF_COUNT]; /* 1 for each reference some path is compared with */
  size_t done;               /* iterations run (by every path, once the run has run) */
  double record_bytes;       /* the recording: every reference's states, and the paths' final volumes */
  double memory_bytes;       /* the memory it was weighed against (negative: not known, kept in memory) */
  int spilled;               /* 1: the recording is in an unnamed temporary file in spill_dir */
  char gpu_memory[2][224];   /* [precision]: how its GPU paths fit their memory (dbtr_backend.memory); "" */
  char spill_dir[1024];
  /* private */
  const dbtr_mlem *m;
  dbtr_validate_opts o;
  struct dbtr__vstore *store;
  double *ref_dev[DBTR_VREF_COUNT]; /* [iterations]: each reference's deviance */
  void *pv, *pp;             /* a path's state: n_vox and n_proj doubles */
  void *rv, *rp;             /* a reference's recorded state: n_vox and n_proj doubles */
  float *cv, *cp;            /* the double reference rounded to float, for a float path */
  dbtr_validate_progress at;
  int ran;
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

/* Opens a run on m (which must outlive it, as must o's strings): the paths, the size of the
 * recording and where it goes (memory or an unnamed file, whose folder must have room).
 * Each GPU precision the paths use gets one backend made and freed here, so that a GPU
 * that cannot run fails now (as dbtr_gpu_backend_create does), not after the references.
 * DBTR_EINVAL for a bad name or an empty list. On failure v is left closed. */
int dbtr_validate_open(dbtr_validate *v, const dbtr_mlem *m, const dbtr_validate_opts *o);

/* Runs every iteration: the references first, recorded, then each path in turn, calling
 * on_row (may be NULL) after each of its iterations, so the rows come path by path (in path
 * order), each path's iteration by iteration. Runs once; DBTR_EINVAL after that. */
int dbtr_validate_run(dbtr_validate *v, dbtr_validate_row_fn on_row, void *user);

/* "cpu-float" or "cpu-double". */
const char *dbtr_validate_ref_name(dbtr_vref ref);

/* --explain: the share of its mode's final volume difference (relative L2) that a variant
 * path produces alone; 0 when the mode's is 0 or p explains nothing. */
double dbtr_validate_explained_share(const dbtr_validate *v, const dbtr_vpath *p);

/* After the run: the final volume of path p (n_vox floats), and if diff is not NULL its
 * difference from its reference, computed in double and rounded once to float: the volumes
 * for the viewer. DBTR_EINVAL before the run has run. */
int dbtr_validate_path_volume(dbtr_validate *v, const dbtr_vpath *p, float *vol, float *diff);
/* After the run: the final volume of reference ref (n_vox floats); DBTR_EINVAL if the run
 * has none or has not run. */
int dbtr_validate_ref_volume(const dbtr_validate *v, dbtr_vref ref, float *vol);

/* Frees the buffers and the recording (its file included); safe on a closed or zeroed run. */
void dbtr_validate_close(dbtr_validate *v);

#endif
