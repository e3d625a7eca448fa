/* recon/mlem.h: the ML-EM driver (docs/ARCHITECTURE.md, ML-EM). It owns the schedule
 * (iterations of ordered subsets), the conversion of the data to the backend's precision,
 * the start volume, the data fit and the per-iteration callback; backends (recon/backend.h)
 * do the arithmetic. The same driver runs the CPU reference and every GPU mode. */
#ifndef DBTR_MLEM_H
#define DBTR_MLEM_H

#include <stddef.h>

#include "recon/backend.h"
#include "recon/data_terms.h"
#include "recon/geom.h"

/* The measured data of one scan, in double: y full size, i0 as the scan holds it, so that a
 * scalar or per-view i0 is never expanded to a full-size array of doubles (at thesis size 330
 * MB written and faulted in a scan) before the backend's precision is made of it. */
typedef struct {
  const dbtr_geom *geom;
  const dbtr_grid *grid;
  dbtr_algo algo;
  /* (n_views, n_rows, n_cols): counts (transmission) or line integrals (emission); NULL where the
   * data lie in a GPU's memory (engine/session.c), whose sums the caller gives (dbtr_mlem_set_sums) */
  const double *y;
  const double *i0; /* unattenuated counts, laid out as i0_shape says; NULL for emission */
  /* include/dbtr.h's shapes; DBTR_I0_NONE, the zero a caller that sets only i0 leaves, means
   * full size, as DBTR_I0_FULL. */
  dbtr_i0_shape i0_shape;
} dbtr_data;

/* i0 of the element of flat index i (view i / npix, pixel i % npix). */
static inline double dbtr_data_i0(const dbtr_data *d, size_t i, size_t npix) {
  return d->i0[dbtr_i0_index(d->i0_shape, i, npix)];
}

/* A prepared reconstruction: the subset schedule and the constant part of the fit. */
typedef struct {
  dbtr_problem prob;
  const dbtr_data *data;
  size_t *subset_views, *subset_start;
  size_t n_proj, n_vox;
  double fit_const; /* sum of y log(y/i0) for transmission, 0 for emission */
  double init_value; /* the uniform start value used when none is given */
} dbtr_mlem;

/* Builds the schedule: subset s holds views s, s + S, s + 2S, ... (each subset spans the
 * whole arc), subsets 1..n_views; then dbtr_mlem_set_data where data->y is in host memory. The geometry and the grid must have
 * passed their checks (dbtr_geom_check, dbtr_grid_check): the engine's session checks them once,
 * where it opens (engine/session.h), and is the one caller outside the tests. */
int dbtr_mlem_init(dbtr_mlem *m, const dbtr_data *data, size_t subsets, int threads);
/* Takes data (of m's geometry, grid and algorithm) and computes its constant part of the fit
 * and the start value: what a new scan of the same problem changes (dbtr_session_rearm). */
int dbtr_mlem_set_data(dbtr_mlem *m, const dbtr_data *data);
/* The same from the data's block sums (recon/data_terms.h: n_blocks pairs, line integrals and
 * y log(y / i0)), made wherever the data lie: dbtr_mlem_set_data's own, or a GPU's. */
void dbtr_mlem_set_sums(dbtr_mlem *m, const double *blocks, size_t n_blocks);
void dbtr_mlem_free(dbtr_mlem *m);

/* Gives a backend the data and a uniform start volume: init (> 0), else m->init_value,
 * estimated from the data as the mean line integral over the mean path through the volume.
 * (Another start goes in with the backend's set_volume, as a resumed run's does.) */
int dbtr_mlem_load(const dbtr_mlem *m, dbtr_backend *b, double init);

/* Host buffers for the data in a backend's precision, kept from one load to the next where a
 * caller loads again (a session re-armed scan after scan): made on the first load, grown where
 * too small, already faulted in after. Zero-initialised; dbtr_mlem_buffers_free frees them. */
typedef struct {
  void *y, *i0;
  size_t bytes; /* each buffer's size */
} dbtr_mlem_buffers;
/* dbtr_mlem_load through buf (NULL: buffers made and freed in the call). */
int dbtr_mlem_load_with(const dbtr_mlem *m, dbtr_backend *b, double init, dbtr_mlem_buffers *buf);
void dbtr_mlem_buffers_free(dbtr_mlem_buffers *buf);

/* One full iteration (every subset once); *deviance receives the Poisson deviance
 * (recon/fit.h) of the forward projections made during it. */
int dbtr_mlem_iterate(const dbtr_mlem *m, dbtr_backend *b, double *deviance);

/* Progress through an iteration, for a person waiting on a long one (the library prints
 * nothing: fn does). fn receives the fraction of the iteration done, 0 to 1, counted in
 * views: subset s, a fraction f through its own work, stands at (views of the subsets before
 * it + f x its views) / all views. Within a subset only backends that can tell report
 * (recon/backend.h, dbtr_subset_watch; the CPU reference does); every backend reports the
 * end of each subset. fn runs on the calling thread, at most once every `every` seconds,
 * and changes nothing the iteration computes. */
typedef struct {
  void (*fn)(void *user, double fraction);
  void *user;
  double every; /* seconds; a few milliseconds or more keeps the cost unmeasurable */
} dbtr_mlem_progress;

/* dbtr_mlem_iterate, reporting through p (NULL: as dbtr_mlem_iterate). */
int dbtr_mlem_iterate_progress(const dbtr_mlem *m, dbtr_backend *b, double *deviance, const dbtr_mlem_progress *p);

/* The most threads the driver's loops over the data take (the conversions to a backend's
 * precision, the constants of the fit): they stream memory, which 16 threads of a host already
 * fill, and the fit's sums are one thread's; more threads only add fork-join and spinning
 * beside it. On the 4-GPU H200 host (64 threads) the data set-up of a thesis scan took 0.58 s
 * on 64 threads against 0.14 s on 16 (bench_many). */
#define DBTR_STREAM_THREADS 16
/* omp_get_max_threads(), at most DBTR_STREAM_THREADS. */
int dbtr_stream_threads(void);

/* Converts between double and a backend's element type. */
void dbtr_convert_from_double(dbtr_precision p, const double *src, size_t n, void *dst);
void dbtr_convert_to_float(dbtr_precision p, const void *src, size_t n, float *dst);
void dbtr_convert_to_double(dbtr_precision p, const void *src, size_t n, double *dst);

#endif
