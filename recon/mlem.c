/* recon/mlem.c: the ML-EM driver shared by every backend. */
#include "recon/mlem.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "recon/cpu.h"
#include "recon/dd.h"
#include "recon/error.h"

int dbtr_stream_threads(void) {
  int n = omp_get_max_threads();
  return n < 1 ? 1 : n < DBTR_STREAM_THREADS ? n : DBTR_STREAM_THREADS;
}

int dbtr_mlem_init(dbtr_mlem *m, const dbtr_data *data, size_t subsets, int threads) {
  memset(m, 0, sizeof *m);
  const dbtr_geom *g = data->geom;
  int rc = dbtr_geom_proj_count(g, &m->n_proj);
  if (!rc) rc = dbtr_grid_count(data->grid, &m->n_vox);
  if (rc) return rc;
  if (subsets < 1 || subsets > g->n_views)
    return dbtr_err(DBTR_EINVAL, "--subsets %zu: must be between 1 and the number of views (%zu)", subsets,
                    g->n_views);
  m->subset_views = malloc(g->n_views * sizeof(size_t));
  m->subset_start = malloc((subsets + 1) * sizeof(size_t));
  if (!m->subset_views || !m->subset_start) {
    dbtr_mlem_free(m);
    return dbtr_err(DBTR_ENOMEM, "subset schedule: out of memory");
  }
  size_t j = 0;
  for (size_t s = 0; s < subsets; s++) {
    m->subset_start[s] = j;
    for (size_t k = s; k < g->n_views; k += subsets) m->subset_views[j++] = k;
  }
  m->subset_start[subsets] = j;
  m->prob = (dbtr_problem){.geom = g,
                           .grid = data->grid,
                           .algo = data->algo,
                           .n_subsets = subsets,
                           .subset_views = m->subset_views,
                           .subset_start = m->subset_start,
                           .threads = threads};
  m->data = data;
  if (data->y && (rc = dbtr_mlem_set_data(m, data))) dbtr_mlem_free(m);
  return rc;
}

int dbtr_mlem_set_data(dbtr_mlem *m, const dbtr_data *data) {
  if (data->algo == DBTR_ALGO_TRANSMISSION && !data->i0)
    return dbtr_err(DBTR_EINVAL, "transmission reconstruction needs i0 (counts data)");
  m->data = data;
  /* The blocks' sums (recon/data_terms.h), a block a thread on up to DBTR_STREAM_THREADS
   * threads, then summed in block order by one: the same sums for any thread count, and the
   * same a GPU makes of data in its memory. */
  size_t n_blocks = (m->n_proj + DBTR_DATA_BLOCK - 1) / DBTR_DATA_BLOCK;
  double *blocks = malloc(2 * (n_blocks ? n_blocks : 1) * sizeof(double));
  if (!blocks) return dbtr_err(DBTR_ENOMEM, "ML-EM set-up: out of memory");
  dbtr_data_kind kind = data->algo == DBTR_ALGO_TRANSMISSION ? DBTR_DATA_COUNTS : DBTR_DATA_LINES;
  size_t npix = data->geom->n_rows * data->geom->n_cols;
  int nt = dbtr_cpu_threads(m->prob.threads);
  if (nt > DBTR_STREAM_THREADS) nt = DBTR_STREAM_THREADS;
  long long nb = (long long)n_blocks;
#pragma omp parallel for schedule(static) num_threads(nt)
  for (long long b = 0; b < nb; b++) {
    size_t first = (size_t)b * DBTR_DATA_BLOCK;
    size_t end = first + DBTR_DATA_BLOCK < m->n_proj ? first + DBTR_DATA_BLOCK : m->n_proj;
    double l = 0.0, c = 0.0;
    for (size_t i = first; i < end; i++) dbtr_data_add(kind, data->y[i], kind ? dbtr_data_i0(data, i, npix) : 1.0, &l, &c);
    blocks[2 * b] = l;
    blocks[2 * b + 1] = c;
  }
  dbtr_mlem_set_sums(m, blocks, n_blocks);
  free(blocks);
  return 0;
}

void dbtr_mlem_set_sums(dbtr_mlem *m, const double *blocks, size_t n_blocks) {
  double sum_l, sum_c;
  dbtr_data_sums_finish(blocks, n_blocks, &sum_l, &sum_c);
  m->fit_const = sum_c;
  double thickness = (double)m->prob.grid->nz * m->prob.grid->dz;
  double mean_l = sum_l / (double)m->n_proj;
  m->init_value = mean_l > 0.0 ? mean_l / thickness : 1e-3;
}

void dbtr_mlem_free(dbtr_mlem *m) {
  free(m->subset_views);
  free(m->subset_start);
  memset(m, 0, sizeof *m);
}

void dbtr_convert_from_double(dbtr_precision p, const double *src, size_t n, void *dst) {
  if (p == DBTR_PREC_DOUBLE) {
    memcpy(dst, src, n * sizeof(double));
  } else if (p == DBTR_PREC_DD) {
    dbtr_dd *d = dst;
    long long nn = (long long)n;
#pragma omp parallel for schedule(static) num_threads(dbtr_stream_threads())
    for (long long i = 0; i < nn; i++) d[i] = dbtr_dd_of(src[i]);
  } else {
    float *d = dst;
    long long nn = (long long)n;
#pragma omp parallel for schedule(static) num_threads(dbtr_stream_threads())
    for (long long i = 0; i < nn; i++) d[i] = (float)src[i];
  }
}

/* A double-double rounded to the nearest float, ties to even. (float)hi is that, except where
 * hi lies exactly halfway between two floats and lo is not zero: then the value is beyond the
 * tie, on lo's side. (Elsewhere hi is at least a double ulp from any tie and |lo| at most half
 * of one, so the value rounds as hi does.) */
static float dd_to_float(dbtr_dd a) {
  float f = (float)a.hi;
  double d = a.hi - (double)f; /* exact: f is hi's neighbour among the floats */
  if (a.lo == 0.0 || d == 0.0 || !isfinite(d)) return f;
  float g = nextafterf(f, d > 0.0 ? INFINITY : -INFINITY);
  return ((double)g - a.hi == -d && (a.lo > 0.0) == (g > f)) ? g : f;
}

void dbtr_convert_to_float(dbtr_precision p, const void *src, size_t n, float *dst) {
  if (p == DBTR_PREC_FLOAT) {
    memcpy(dst, src, n * sizeof(float));
  } else if (p == DBTR_PREC_DD) {
    const dbtr_dd *s = src;
    long long nn = (long long)n;
#pragma omp parallel for schedule(static) num_threads(dbtr_stream_threads())
    for (long long i = 0; i < nn; i++) dst[i] = dd_to_float(s[i]);
  } else {
    const double *s = src;
    long long nn = (long long)n;
#pragma omp parallel for schedule(static) num_threads(dbtr_stream_threads())
    for (long long i = 0; i < nn; i++) dst[i] = (float)s[i];
  }
}

void dbtr_convert_to_double(dbtr_precision p, const void *src, size_t n, double *dst) {
  if (p == DBTR_PREC_DOUBLE) {
    memcpy(dst, src, n * sizeof(double));
  } else if (p == DBTR_PREC_DD) {
    const dbtr_dd *s = src;
    long long nn = (long long)n;
#pragma omp parallel for schedule(static) num_threads(dbtr_stream_threads())
    for (long long i = 0; i < nn; i++) dst[i] = dbtr_dd_to_double(s[i]);
  } else {
    const float *s = src;
    long long nn = (long long)n;
#pragma omp parallel for schedule(static) num_threads(dbtr_stream_threads())
    for (long long i = 0; i < nn; i++) dst[i] = (double)s[i];
  }
}

/* i0 of every element in precision p: the same values dbtr_convert_from_double gives of the
 * full-size array, made from the scan's own shape. */
static void convert_i0(dbtr_precision p, const dbtr_data *d, size_t n, void *dst) {
  size_t npix = d->geom->n_rows * d->geom->n_cols;
  long long nn = (long long)n;
  if (p == DBTR_PREC_DOUBLE) {
    double *o = dst;
#pragma omp parallel for schedule(static) num_threads(dbtr_stream_threads())
    for (long long i = 0; i < nn; i++) o[i] = dbtr_data_i0(d, (size_t)i, npix);
  } else if (p == DBTR_PREC_DD) {
    dbtr_dd *o = dst;
#pragma omp parallel for schedule(static) num_threads(dbtr_stream_threads())
    for (long long i = 0; i < nn; i++) o[i] = dbtr_dd_of(dbtr_data_i0(d, (size_t)i, npix));
  } else {
    float *o = dst;
#pragma omp parallel for schedule(static) num_threads(dbtr_stream_threads())
    for (long long i = 0; i < nn; i++) o[i] = (float)dbtr_data_i0(d, (size_t)i, npix);
  }
}

int dbtr_mlem_load_with(const dbtr_mlem *m, dbtr_backend *b, double init, dbtr_mlem_buffers *buf) {
  size_t es = dbtr_precision_size(b->precision);
  dbtr_mlem_buffers own = {0}, *use = buf ? buf : &own;
  int rc = 0;
  int transmission = m->prob.algo == DBTR_ALGO_TRANSMISSION;
  if (use->bytes < m->n_proj * es) {
    dbtr_mlem_buffers_free(use);
    if (!(rc = dbtr_alloc(&use->y, m->n_proj, es, "projections"))) use->bytes = m->n_proj * es;
  }
  if (!rc && transmission && !use->i0) rc = dbtr_alloc(&use->i0, use->bytes, 1, "i0");
  if (!rc) {
    dbtr_convert_from_double(b->precision, m->data->y, m->n_proj, use->y);
    if (transmission) convert_i0(b->precision, m->data, m->n_proj, use->i0);
    rc = b->load(b, use->y, transmission ? use->i0 : NULL, init > 0.0 ? init : m->init_value);
  }
  if (!buf) dbtr_mlem_buffers_free(&own);
  return rc;
}

int dbtr_mlem_load(const dbtr_mlem *m, dbtr_backend *b, double init) { return dbtr_mlem_load_with(m, b, init, NULL); }

void dbtr_mlem_buffers_free(dbtr_mlem_buffers *buf) {
  free(buf->y);
  free(buf->i0);
  memset(buf, 0, sizeof *buf);
}

/* A subset's progress, turned into the iteration's and passed on at most every p->every s. */
typedef struct {
  const dbtr_mlem_progress *p;
  double before, views, n_views; /* the views of the subsets before this one, its own, all */
  double last;                   /* when fn was last called (or the iteration began), omp_get_wtime */
} watch_state;

static void on_subset_progress(void *user, double fraction) {
  watch_state *w = user;
  double now = omp_get_wtime();
  if (now - w->last < w->p->every) return;
  w->last = now;
  /* At the end of the last subset this is n_views / n_views: exactly 1. */
  w->p->fn(w->p->user, (w->before + w->views * fraction) / w->n_views);
}

int dbtr_mlem_iterate_progress(const dbtr_mlem *m, dbtr_backend *b, double *deviance, const dbtr_mlem_progress *p) {
  double fit = 0.0;
  watch_state w = {.p = p, .n_views = (double)m->prob.geom->n_views, .last = omp_get_wtime()};
  const dbtr_subset_watch sw = {on_subset_progress, &w};
  for (size_t s = 0; s < m->prob.n_subsets; s++) {
    const size_t *start = m->prob.subset_start;
    w.before = (double)start[s];
    w.views = (double)(start[s + 1] - start[s]);
    b->watch = p ? &sw : NULL;
    int rc = b->subset(b, s, &fit);
    b->watch = NULL;
    if (rc) return rc;
    if (p) on_subset_progress(&w, 1.0);
  }
  *deviance = 2.0 * (fit + m->fit_const);
  return 0;
}

int dbtr_mlem_iterate(const dbtr_mlem *m, dbtr_backend *b, double *deviance) {
  return dbtr_mlem_iterate_progress(m, b, deviance, NULL);
}
