/* engine/validate.h: the validation engine behind `dbtr validate` (docs/validation.md).
 *
 * A run takes one ML-EM problem and a list of paths (the CPU paths cpu-1-thread, cpu-float
 * and cpu-double, GPU modes, and with explain the single-change variants of the match
 * modes), and compares each path with the CPU reference of its precision after every
 * iteration, in the forward projections and in the volume. It streams: each reference's
 * trajectory is computed once and recorded (the volume after every iteration and the
 * projections made during it), then the paths run one after another against the recording,
 * so one backend is alive at a time, and GPU memory holds one. The recording stays in memory
 * when it fits and goes to an unnamed temporary file when it does not. The engine prints
 * nothing: a callback receives each row as it is measured, a second one the progress, and
 * the results stay in the run for the verdicts, the --explain summary, reports and tests.
 *
 * With the referee (opts.referee), the double-double trajectory (docs/modes.md, dd) is
 * recorded too, rounded to double (and to float, from the double-double, where a float path
 * needs it), and every path is also measured against it: how far it is from the algorithm's
 * exact answer, in units of the best answer its precision can give, the referee correctly
 * rounded to it.
 *
 * With objects (opts.objects: a phantom's test objects or regions by hand, quality/quality.h),
 * every reference's and every path's volume is measured after every iteration, at the moment
 * the run holds it (a reference's in its backend's memory, a path's in its state), and each
 * path gets the change of every object's CNR, ASF FWHM and contrast against its reference, and
 * the verdict that sums them up (docs/validation.md, "Quality").
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
#include "recon/modes.h"
#include "quality/quality.h"

/* What the recording may take in memory when the caller does not say (record_memory): 2 GiB,
 * which holds a small problem's in memory; a larger one goes to the page cache, which does the
 * same without holding memory another program may need. */
#define DBTR_VALIDATE_RECORD_MEMORY 2147483648.0

/* The CPU reference a path is compared with: the CPU in the path's own precision, or the
 * CPU in double for the CPU float path. */
typedef enum { DBTR_VREF_FLOAT = 0, DBTR_VREF_DOUBLE = 1, DBTR_VREF_COUNT } dbtr_vref;

/* Where the referee runs: not at all, on the CPU (cpu-dd) or on the GPU (gpu:dd). */
typedef enum { DBTR_REFEREE_NONE = 0, DBTR_REFEREE_CPU = 1, DBTR_REFEREE_GPU = 2 } dbtr_referee_at;

/* The best answer of each precision after one iteration: the referee correctly rounded to
 * float ([DBTR_PREC_FLOAT]) and to double ([DBTR_PREC_DOUBLE]), its relative L2 distance from
 * the referee (computed from the double-double values), in the projections and the volume. */
typedef struct {
  double proj[2], vol[2];
  double deviance; /* the referee's Poisson deviance of the iteration */
} dbtr_vbest;

/* One compared path, and what was measured after each iteration. */
typedef struct {
  char name[48];             /* "cpu-1-thread", "cpu-float", "fast", "cpu-match+fma", ... */
  dbtr_mode mode;            /* its row of the mode table */
  int is_gpu;                /* the row's: 1 for a GPU mode or variant */
  dbtr_precision prec;       /* the element type of its volume and projections */
  dbtr_vref ref;
  int explains;              /* -1, or the index of the path whose difference this variant explains */
  dbtr_diff_stats *proj, *vol; /* [iterations]: the path against its reference */
  dbtr_referee_stats *vs_proj, *vs_vol; /* [iterations]: the path against the referee; NULL without it */
  double *deviance;          /* [iterations]: the path's own Poisson deviance */
  size_t first_iter;         /* the first iteration that differs (1-based); 0: identical at every one */
  int first_in_proj;         /* 1: that first difference was in the forward projections */
  uint64_t first_max_ulp;    /* the max ULP distance of that first difference */
  dbtr_quality_change *quality; /* [iterations][n_objects]: each object's change against the reference; NULL
                                   without objects */
  dbtr_quality_verdict quality_verdict; /* their largest, once the path has run (with objects) */
  /* Where its time went, seconds: making its backend and loading the data; its iterations with
   * its state read back (its own compute; a replaying path's: reading the recording); comparing
   * (against its reference, the referee, and the quality measures). */
  double seconds_setup, seconds_iterations, seconds_compare;
  /* private */
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
  /* Bytes the recording may take in memory; 0: DBTR_VALIDATE_RECORD_MEMORY, or less where
   * less is available when the run opens (dbtr_mem_available: the machine's and the cgroup's,
   * or DBTR_MEMORY_LIMIT) beside the run's working set (its largest backend on the host and
   * a path's state), which must fit (DBTR_ENOMEM otherwise). A larger recording goes to an
   * unnamed file, which the kernel keeps in its page cache as far as memory is free, and
   * gives back to other programs when they need it. */
  size_t record_memory;
  const char *spill_dir;     /* the folder for the recording's temporary file; NULL: $TMPDIR, else /tmp */
  /* Also run the referee, after the references, and measure every path against it. Not with
   * lockstep: the referee runs free, and a path restarted from its reference at every
   * iteration has no trajectory to hold against the referee's. */
  dbtr_referee_at referee;
  /* Measure each test object (info[i].target) of these in every volume and give each path's
   * quality changes (quality/quality.h); NULL: not. Must outlive the run. */
  const dbtr_phantom *objects;
} dbtr_validate_opts;

/* A run; the caller owns the struct. The public fields are read-only. */
typedef struct {
  size_t iterations;
  int lockstep;
  size_t n_paths;
  dbtr_vpath *paths;
  int have_ref[DBTR_VREF_COUNT]; /* 1 for each reference some path is compared with */
  dbtr_referee_at referee;
  dbtr_vbest *best;          /* [iterations] with the referee; NULL without it */
  const dbtr_phantom *objects; /* opts.objects: what the quality changes are of; NULL without */
  size_t n_objects;          /* its test objects, each measured; 0 without */
  size_t done;               /* iterations run (by every path, once the run has run) */
  double record_bytes;       /* the recording: every reference's states, and the paths' final volumes */
  double memory_bytes;       /* the memory it was weighed against (negative: not known, kept in memory) */
  int spilled;               /* 1: the recording is in an unnamed temporary file in spill_dir */
  /* [precision]: how its GPU paths (the referee for dd) fit their memory (dbtr_backend.memory);
   * "" */
  char gpu_memory[DBTR_PREC_COUNT][DBTR_MEMORY_LINE];
  char spill_dir[1024];
  /* Seconds each reference took (backend, iterations, recording, measures), and the referee. */
  double ref_seconds[DBTR_VREF_COUNT], referee_seconds;
  /* private */
  const dbtr_mlem *m;
  dbtr_validate_opts o;
  struct dbtr__vstore *store;
  double *ref_dev[DBTR_VREF_COUNT]; /* [iterations]: each reference's deviance */
  double *ref_max[DBTR_VREF_COUNT]; /* [2 iterations + proj]: each recorded state's largest value (0 at least) */
  dbtr_quality_change *ref_quality[DBTR_VREF_COUNT]; /* [iterations][n_objects]: each reference's measures (the
                                                        reference's half of the changes), with objects */
  size_t state_size;         /* bytes of an element of the widest precision a path has */
  void *pv, *pp;             /* a path's state: n_vox and n_proj elements of state_size */
  size_t piece;              /* elements of a recorded state a comparison reads at a time */
  double *bd;                /* a piece in double */
  float *bf;                 /* and in float */
  int refs_recorded;         /* 1 once the references are recorded (dbtr_validate_ref_state) */
  int referee_float;         /* 1: the referee's float rounding is recorded at every iteration (a float path needs it) */
  dbtr_validate_progress at;
  int ran;
} dbtr_validate;

/* One measured row: a path after one iteration, against its reference. The arrays hold
 * n elements of path->prec (proj->n and vol->n) and are valid during the call only; the
 * reference's state, as it was compared, is dbtr_validate_ref_state's (path->ref, iteration,
 * path->prec). */
typedef struct {
  const dbtr_validate *run;  /* the run it is of */
  size_t iteration;          /* 1-based */
  const dbtr_vpath *path;
  const char *reference;     /* dbtr_validate_ref_name(path->ref) */
  const dbtr_diff_stats *proj, *vol;
  const dbtr_referee_stats *vs_proj, *vs_vol; /* against the referee; NULL without it */
  const dbtr_quality_change *quality; /* [run->n_objects]: the objects' changes; NULL without objects */
  double deviance;           /* the path's Poisson deviance of the iteration */
  const void *path_proj, *path_vol;
} dbtr_validate_row;

typedef void (*dbtr_validate_row_fn)(void *user, const dbtr_validate_row *row);

/* 1 for the name of a GPU path (a mode or a variant), 0 for a CPU path, DBTR_EINVAL with a
 * message naming it for anything else. Lets a caller check names before it has a problem. */
int dbtr_validate_path_is_gpu(const char *name);

/* Opens a run on m (which must outlive it, as must o's strings): the paths, the size of the
 * recording and where it goes (memory or an unnamed file, whose folder must have room).
 * Each GPU precision the paths use gets one backend made and freed here, so that a GPU
 * that cannot run fails now (as creating its backend does), not after the references.
 * DBTR_EINVAL for a bad name or an empty list. On failure v is left closed. */
int dbtr_validate_open(dbtr_validate *v, const dbtr_mlem *m, const dbtr_validate_opts *o);

/* Runs every iteration: the references first, recorded, then each path in turn, calling
 * on_row (may be NULL) after each of its iterations, so the rows come path by path (in path
 * order), each path's iteration by iteration. Runs once; DBTR_EINVAL after that. */
int dbtr_validate_run(dbtr_validate *v, dbtr_validate_row_fn on_row, void *user);

/* "cpu-float" or "cpu-double". */
const char *dbtr_validate_ref_name(dbtr_vref ref);
/* "cpu-dd" or "gpu:dd", the referee's backend; NULL for none. */
const char *dbtr_validate_referee_name(dbtr_referee_at at);

/* --explain: the share of its mode's final volume difference (relative L2) that a variant
 * path produces alone; 0 when the mode's is 0 or p explains nothing. */
double dbtr_validate_explained_share(const dbtr_validate *v, const dbtr_vpath *p);

/* After the run: the final volume of path p (n_vox floats), and if diff is not NULL its
 * difference from its reference, computed in double and rounded once to float: the volumes
 * for the viewer. DBTR_EINVAL before the run has run. */
int dbtr_validate_path_volume(dbtr_validate *v, const dbtr_vpath *p, float *vol, float *diff);
/* Once the references are recorded (from the first row on): reference ref's recorded state
 * after iteration `iteration` (1-based: its volume, or with proj the projections made during
 * it) in precision p, its own or float (rounded from double): n_vox or n_proj elements into
 * out. DBTR_EINVAL if the run has no such reference or state, or has not recorded it yet. */
int dbtr_validate_ref_state(const dbtr_validate *v, dbtr_vref ref, size_t iteration, int proj, dbtr_precision p,
                            void *out);

/* After the run: the referee's recorded state after iteration `iteration` (1-based: its volume,
 * or with proj the projections made during it), rounded to p: DBTR_PREC_DOUBLE (the high
 * parts) at every iteration, DBTR_PREC_FLOAT (correctly rounded from the double-double) at
 * every iteration where a float path is compared, and for the last iteration's volume always.
 * n_vox or n_proj elements of p into out. DBTR_EINVAL for what the run has not recorded. */
int dbtr_validate_referee_state(const dbtr_validate *v, size_t iteration, int proj, dbtr_precision p, void *out);

/* Frees the buffers and the recording (its file included); safe on a closed or zeroed run. */
void dbtr_validate_close(dbtr_validate *v);

#endif
