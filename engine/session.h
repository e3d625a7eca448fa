/* engine/session.h: the reconstruction session every client opens (docs/ARCHITECTURE.md,
 * The engine): `dbtr recon` and `dbtr demo` (app/run.c), `dbtr validate` (app/cmd_validate.c),
 * the C API (engine/api.c) and through it Python. A session is opened from a scan, a grid and
 * options, once: it checks the geometry and the grid (here and nowhere above), checks the
 * host memory the run will hold at its peak, expands the data to the driver's full-size
 * arrays, builds the subset schedule (recon/mlem.h), creates the backend the options ask for
 * (engine/backends.h) and loads the start volume. It then runs iterations with progress,
 * checkpoint and cancellation hooks, and can be re-armed with the data of another scan of the
 * same geometry without rebuilding its backend's tables, ray records or GPU arena.
 *
 *   dbtr_session *s;
 *   dbtr_session_opts o = {.recon = {.subsets = 3}};
 *   int rc = dbtr_session_open(&s, &scan, &grid, &o);
 *   dbtr_session_run_opts r = {.first = 1, .last = 6};
 *   if (!rc) rc = dbtr_session_run(s, &r);
 *   if (!rc) rc = dbtr_session_get_volume(s, vol);
 *   dbtr_session_close(&s);
 */
#ifndef DBTR_ENGINE_SESSION_H
#define DBTR_ENGINE_SESSION_H

#include <stddef.h>

#include "include/dbtr.h"
#include "recon/backend.h"
#include "recon/mlem.h"

typedef struct dbtr_session dbtr_session;

/* The reconstruction grid a user gives in place of the scan's /volume, in part or whole
 * (dbtr recon's --dims, --voxel and --origin); zero fields mean "not given". */
typedef struct {
  double dims[3], voxel[3], origin[3];
  int has_dims, has_voxel, has_origin;
} dbtr_grid_given;

/* The grid for the scan read from path: its /volume with what is given applied, or what is
 * given whole; DBTR_EINVAL naming path and the flags to give when the scan has none. The
 * session checks it where it opens. */
int dbtr_session_grid(const dbtr_scan *scan, const char *path, const dbtr_grid_given *given, dbtr_grid *out);

typedef struct {
  dbtr_recon_opts recon;   /* the public options: algorithm, subsets, start value, backend */
  const char *source;      /* the scan's file, named in the grid's messages; NULL: "volume grid" */
  int values_checked;      /* 1: the scan's reader checked its values (io/scan.h); else they are checked here */
  /* 1: the problem alone, no backend: dbtr validate makes one backend per path, in turn, on
   * the session's problem (dbtr_session_mlem), and weighs its own memory (engine/validate.h). */
  int problem_only;
  /* Host memory the caller holds beside the session at its peak (the volume it writes),
   * counted in the memory check. */
  double caller_bytes;
  int gpu_first;           /* the first GPU of the backend's (a many-scan worker's own); 0 */
  /* The data in a GPU's memory (dbtr_recon_open_device), the scan's proj and i0 NULL: checked,
   * summed and loaded there, the backend on that GPU; NULL: the scan's, in host memory. */
  const dbtr_device_data *device;
} dbtr_session_opts;

/* Where the set-up's time went, in seconds: the checks (the geometry, the grid, the values, the
 * memory: whose look for a GPU is the process's first CUDA call, which starts the driver), the
 * data (expansion, the ML-EM constants, the field of view: engine/fov.h), the backend (on the GPU: context, memory, ray records,
 * tables), and the start volume with the data loaded into it. */
typedef struct {
  double checks, data, backend, start;
} dbtr_session_setup;

/* Opens a session on scan (which, its arrays included, must outlive the session, or be
 * replaced by dbtr_session_rearm) and grid (copied). DBTR_EINVAL with the option's name for a
 * bad option, the geometry's or the grid's message, DBTR_ENOMEM (before any large allocation)
 * when the run would not fit the host's memory, or the backend's error. */
int dbtr_session_open(dbtr_session **out, const dbtr_scan *scan, const dbtr_grid *grid, const dbtr_session_opts *o);
/* Frees everything the session holds; safe with NULL and twice. */
void dbtr_session_close(dbtr_session **s);

const dbtr_mlem *dbtr_session_mlem(const dbtr_session *s);
/* The backend; NULL for a problem-only session. */
dbtr_backend *dbtr_session_backend(const dbtr_session *s);
/* Why backend "auto" fell back to the CPU ("no GPU can be used", or the GPU's error); "". */
const char *dbtr_session_fallback(const dbtr_session *s);
const dbtr_session_setup *dbtr_session_setup_times(const dbtr_session *s);

/* The field of view (engine/fov.h): n_vox bytes, 1 where some ray reaches the voxel, 0 where
 * none does, computed once where the session opens; *n_unseen (may be NULL) the 0s. NULL for a
 * problem-only session. */
const unsigned char *dbtr_session_fov(const dbtr_session *s, size_t *n_unseen);
/* The backend's volume (n_vox of its type) with the voxels no ray reaches set to 0: the volume
 * every output writes (dbtr recon, demo, many scans, the C API and Python). */
int dbtr_session_get_volume(dbtr_session *s, void *out);
/* The same into out in the memory of the session's GPU, for a session of device data. */
int dbtr_session_get_volume_device(dbtr_session *s, void *out);

/* Hooks a run calls on the calling thread, each optional. */
typedef struct {
  size_t first, last;                 /* the iterations to run, 1-based, first..last */
  const dbtr_mlem_progress *progress; /* within each iteration (recon/mlem.h) */
  void (*begin)(void *user, size_t iteration);
  /* After each iteration (and its checkpoint): 0 goes on; anything else stops the run, which
   * returns it (a cancellation, or the caller's own error). */
  int (*end)(void *user, size_t iteration, double deviance, dbtr_backend *b);
  /* After each checkpoint is written, with its path. */
  void (*saved)(void *user, const char *path);
  void *user;
  const char *checkpoint;   /* save the state here every checkpoint_every iterations and after the last */
  size_t checkpoint_every;  /* >= 1 */
  void *scratch;            /* a volume of the backend's precision for the checkpoints; NULL: the session's own */
} dbtr_session_run_opts;

/* Runs iterations r->first..r->last. Returns 0, a DBTR_E* code, or what r->end returned. */
int dbtr_session_run(dbtr_session *s, const dbtr_session_run_opts *r);

/* Continues from the checkpoint at path (io/checkpoint.h) after checking it belongs to this
 * session's problem and arithmetic (the scan, the grid, the subsets, the algorithm, the
 * backend's bitwise class): the volume is set, *done receives the iterations it holds and
 * writer (writer_len bytes, may be 0) the backend that wrote it. */
int dbtr_session_resume(dbtr_session *s, const char *path, size_t *done, char *writer, size_t writer_len);

/* Gives the session the data of another scan of the same geometry and quantity (DBTR_EINVAL
 * naming what differs, otherwise): the data expanded again, the ML-EM constants computed again,
 * the backend loaded with the new data and a new start volume. The schedule, the backend and
 * its tables stay; the next run gives the bits a new session on that scan would. scan must
 * outlive the session as the first one had to. */
int dbtr_session_rearm(dbtr_session *s, const dbtr_scan *scan);
/* 1 when a scan on grid is the session's problem but for its data: the same geometry, grid
 * and quantity, so that dbtr_session_rearm takes it. */
int dbtr_session_same_problem(const dbtr_session *s, const dbtr_scan *scan, const dbtr_grid *grid);

#endif
