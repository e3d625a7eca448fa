/* engine/session.c: the reconstruction session (engine/session.h): the one set-up of a
 * reconstruction, whoever asks for it. */
#include "engine/session.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backends.h"
#include "engine/fbp.h"
#include "engine/fov.h"
#include "io/checkpoint.h"
#include "io/memory.h"
#include "io/scan.h"
#include "kernels/gpu.h"
#include "recon/cpu.h"
#include "recon/error.h"
#include "recon/geom.h"

struct dbtr_session {
  const dbtr_scan *scan; /* the data's scan: its arrays serve where expand made none, and identify checkpoints */
  dbtr_geom geom;        /* a copy of the first scan's: the driver and the backend point at it */
  dbtr_grid grid;        /* a copy too */
  dbtr_data data;        /* the driver points at it too */
  dbtr_mlem m;
  double *y;             /* emission from counts: the line integrals (expand); else NULL, the scan's own serve */
  dbtr_mlem_buffers load; /* the data in the backend's precision, kept from scan to scan */
  dbtr_backend *b;       /* NULL for a problem-only session */
  dbtr_session_opts o;
  void *scratch;         /* a volume of the backend's precision, for checkpoints; made when first needed */
  dbtr_session_setup setup;
  char fallback[1024];   /* why "auto" ran on the CPU, or "" */
  unsigned char *fov;    /* 1 where a ray reaches the voxel (engine/fov.h); NULL for a problem-only session */
  size_t n_unseen;       /* the 0s of fov */
};

/* The first value of array name (n elements of v: doubles in host memory, or with dev of type
 * in dev's GPU) that breaks the rule, with its flat index in the message: a caller's array has
 * no file or dataset to name. */
static int check_array(const char *name, const void *v, dbtr_precision type, size_t n, int counts, int positive,
                       const dbtr_device_data *dev) {
  size_t at = n;
  double x = 0.0;
  if (dev) {
    int rc = dbtr_gpu_first_bad(dev->device, name, v, type, n, counts, positive, &at, &x);
    if (rc) return rc;
  } else {
    const double *h = v;
    for (size_t i = 0; i < n && at == n; i++)
      if (dbtr_value_bad(h[i], counts, positive)) at = i, x = h[i];
  }
  if (at == n) return 0;
  return dbtr_err(DBTR_EINVAL, "%s: value %g at flat index %zu %s", name, x, at,
                  dbtr_value_rule(dbtr_value_bad(x, counts, positive)));
}

/* What a caller built by hand is checked as the reader checks files: the arrays are there (in
 * host memory, or dev's GPU), i0 has a known shape (counts need one), every value is finite,
 * counts are >= 0 and i0 > 0. */
static int check_values(const dbtr_scan *scan, const dbtr_device_data *dev) {
  size_t n;
  int rc = dbtr_geom_proj_count(&scan->geom, &n);
  if (rc) return rc;
  if (dev && (scan->proj || scan->i0))
    return dbtr_err(DBTR_EINVAL, "projections: given twice, in the scan and as device data (the scan's proj and i0 "
                                 "must be NULL)");
  if (dev && ((dev->proj_type != DBTR_PREC_FLOAT && dev->proj_type != DBTR_PREC_DOUBLE) ||
              (dev->i0 && dev->i0_type != DBTR_PREC_FLOAT && dev->i0_type != DBTR_PREC_DOUBLE)))
    return dbtr_err(DBTR_EINVAL, "device data: the arrays must be float or double");
  const void *proj = dev ? dev->proj : scan->proj, *i0 = dev ? dev->i0 : scan->i0;
  if (!proj) return dbtr_err(DBTR_EINVAL, "projections: none given");
  int counts = scan->quantity == DBTR_QUANTITY_COUNTS;
  if (!counts && scan->quantity != DBTR_QUANTITY_LINE_INTEGRAL)
    return dbtr_err(DBTR_EINVAL, "projections: unknown quantity %d", (int)scan->quantity);
  if (scan->i0_shape < DBTR_I0_NONE || scan->i0_shape > DBTR_I0_FULL)
    return dbtr_err(DBTR_EINVAL, "i0: unknown shape %d", (int)scan->i0_shape);
  if (counts && (scan->i0_shape == DBTR_I0_NONE || !i0))
    return dbtr_err(DBTR_EINVAL, "i0: counts need the unattenuated counts i0, and none were given");
  if ((rc = check_array("projections", proj, dev ? dev->proj_type : DBTR_PREC_DOUBLE, n, counts, 0, dev))) return rc;
  if (scan->i0_shape == DBTR_I0_NONE) return 0;
  return check_array("i0", i0, dev ? dev->i0_type : DBTR_PREC_DOUBLE, dbtr_scan_i0_count(scan), 0, 1, dev);
}

/* 1 for start "fbp" (include/dbtr.h, dbtr_recon_opts.start). */
static int start_fbp(const dbtr_recon_opts *ro) { return ro->start && !strcmp(ro->start, "fbp"); }

/* The algorithm: the one asked for, or the one the scan's quantity calls for. */
static int choose_algo(const dbtr_scan *scan, const char *name, dbtr_algo *out) {
  int counts = scan->quantity == DBTR_QUANTITY_COUNTS;
  *out = counts ? DBTR_ALGO_TRANSMISSION : DBTR_ALGO_EMISSION;
  if (!name) return 0;
  if (!strcmp(name, "emission")) {
    *out = DBTR_ALGO_EMISSION;
    return 0;
  }
  if (strcmp(name, "transmission"))
    return dbtr_err(DBTR_EINVAL, "unknown algorithm '%s' (expected transmission or emission)", name);
  if (!counts)
    return dbtr_err(DBTR_EINVAL, "algorithm transmission needs counts; these projections are line integrals "
                                 "(use emission)");
  *out = DBTR_ALGO_TRANSMISSION;
  return 0;
}

/* The data as the driver takes it (recon/mlem.h): the scan's own arrays, i0 in the scan's
 * shape, except for emission from counts, whose line integrals are made here in full
 * (dbtr_count_to_line_integral), each element on its own, on every thread: the same values for
 * any thread count. */
static int expand(dbtr_session *s, const dbtr_scan *scan, dbtr_algo algo) {
  free(s->y);
  s->y = NULL;
  size_t n;
  int rc = dbtr_geom_proj_count(&scan->geom, &n);
  if (rc) return rc;
  if (algo == DBTR_ALGO_EMISSION && scan->quantity == DBTR_QUANTITY_COUNTS && !s->o.device) {
    size_t npix = scan->geom.n_rows * scan->geom.n_cols;
    long long nn = (long long)n;
    if ((rc = dbtr_alloc((void **)&s->y, n, sizeof(double), "line integrals"))) return rc;
    double *out = s->y;
#pragma omp parallel for schedule(static) num_threads(dbtr_stream_threads())
    for (long long i = 0; i < nn; i++)
      out[i] = dbtr_count_to_line_integral(scan->proj[i], dbtr_scan_i0(scan, (size_t)i / npix, (size_t)i % npix));
  }
  int transmission = algo == DBTR_ALGO_TRANSMISSION;
  s->scan = scan;
  s->data = (dbtr_data){.geom = &s->geom, .grid = &s->grid, .algo = algo, .y = s->y ? s->y : scan->proj,
                        .i0 = transmission ? scan->i0 : NULL, .i0_shape = transmission ? scan->i0_shape : DBTR_I0_NONE};
  return 0;
}

/* How data in a GPU's memory enter the sums and the backend (recon/data_terms.h). */
static dbtr_data_kind device_kind(const dbtr_session *s) {
  return s->m.prob.algo == DBTR_ALGO_TRANSMISSION  ? DBTR_DATA_COUNTS
         : s->scan->quantity == DBTR_QUANTITY_COUNTS ? DBTR_DATA_COUNTS_AS_LINES
                                                      : DBTR_DATA_LINES;
}

/* The start value and the deviance's constant of data in a GPU's memory: the blocks' sums made
 * there, finished here as the host's are (dbtr_mlem_set_sums). */
static int device_sums(dbtr_session *s) {
  size_t n_blocks = (s->m.n_proj + DBTR_DATA_BLOCK - 1) / DBTR_DATA_BLOCK;
  double *blocks = NULL;
  int rc = dbtr_alloc((void **)&blocks, 2 * (n_blocks ? n_blocks : 1), sizeof *blocks, "the data's sums");
  if (!rc)
    rc = dbtr_gpu_data_sums(s->o.device, s->scan->i0_shape, device_kind(s), s->m.n_proj,
                            s->geom.n_rows * s->geom.n_cols, blocks);
  if (!rc) dbtr_mlem_set_sums(&s->m, blocks, n_blocks);
  free(blocks);
  return rc;
}

/* What data in a GPU's memory allow: a GPU backend on that GPU alone, ML-EM from a uniform start. */
static int check_device(const dbtr_session_opts *o) {
  const dbtr_backend_opts *b = &o->recon.backend;
  char name[256];
  if (!dbtr_gpu_available(name, sizeof name))
    return dbtr_err(DBTR_ENOGPU, "device data: no GPU can be used here, so none can hold the data");
  if (b->backend && !strcmp(b->backend, "cpu"))
    return dbtr_err(DBTR_EINVAL, "backend cpu: the CPU reference reads host memory, and the data lie in cuda:%d",
                    o->device->device);
  if (b->gpus != 0 && b->gpus != 1)
    return dbtr_err(DBTR_EINVAL, "gpus %d: data in a GPU's memory are reconstructed on that GPU alone", b->gpus);
  if (start_fbp(&o->recon))
    return dbtr_err(DBTR_EINVAL, "start fbp: FBP filters in host memory, and the data lie in cuda:%d",
                    o->device->device);
  return 0;
}

/* Refuses with the sizes, before anything is allocated, a run whose host memory at its peak
 * (the caller's volume, the data in double, the driver's conversions when it loads a backend
 * and the volume read back, the CPU backend's buffers) exceeds what the machine or its cgroup
 * has available (io/memory.h). */
static int check_memory(const dbtr_scan *scan, const dbtr_grid *grid, dbtr_algo algo, const dbtr_session_opts *o) {
  double n_proj = (double)(scan->geom.n_views * scan->geom.n_rows * scan->geom.n_cols);
  double n_vox = (double)grid->nx * (double)grid->ny * (double)grid->nz;
  dbtr_mode gpu_mode, cpu_mode;
  int gpu, rc = dbtr_backend_choose(&o->recon.backend, &gpu_mode, &cpu_mode, &gpu);
  if (rc) return rc;
  (void)gpu_mode;
  /* Where a GPU can be used the backend's buffers are on it; otherwise the CPU backend's are
   * counted too. */
  int cpu = !o->device && dbtr_backend_on_cpu(&o->recon.backend, gpu);
  dbtr_precision p = dbtr_mode_precision(cpu_mode);
  double es = (double)dbtr_precision_size(p);
  /* Emission from counts makes its line integrals in double (expand). Data in a GPU's memory
   * take none of the host's buffers: their conversions and the volume stay on the GPU. */
  int lines = scan->quantity == DBTR_QUANTITY_COUNTS && algo == DBTR_ALGO_EMISSION && !o->device;
  double need = o->caller_bytes + (lines ? 8.0 : 0.0) * n_proj + (o->device ? 0.0 : es * (2.0 * n_vox + 2.0 * n_proj));
  if (cpu) need += dbtr_cpu_backend_bytes(p, &scan->geom, grid);
  /* The field of view's mask; its work (dbtr_fov_bytes) is done and freed before the backend is
   * made, within the CPU backend's bytes, or on the GPU the host-side buffers above and a CPU
   * projector's tables. */
  need += n_vox;
  if (!cpu) need += dbtr_cpu_projector_bytes(p, &scan->geom, grid, 1);
  char what[128];
  snprintf(what, sizeof what, "the reconstruction (%s, %s)", cpu ? "CPU" : "GPU, host side", dbtr_precision_name(p));
  return dbtr_mem_check(need, what);
}

int dbtr_session_grid(const dbtr_scan *scan, const char *path, const dbtr_grid_given *o, dbtr_grid *out) {
  if (!scan->has_grid && !(o->has_dims && o->has_voxel && o->has_origin))
    return dbtr_err(DBTR_EINVAL,
                    "%s has no /volume grid: give --dims NX,NY,NZ --voxel DX,DY,DZ --origin X,Y,Z (mm, the centre "
                    "of voxel 0,0,0)",
                    path);
  dbtr_grid g = scan->grid;
  if (o->has_dims) {
    g.nx = (size_t)o->dims[0];
    g.ny = (size_t)o->dims[1];
    g.nz = (size_t)o->dims[2];
  }
  if (o->has_voxel) {
    g.dx = o->voxel[0];
    g.dy = o->voxel[1];
    g.dz = o->voxel[2];
  }
  if (o->has_origin) memcpy(g.origin, o->origin, sizeof g.origin);
  *out = g;
  return 0;
}

/* The field of view (engine/fov.h), in the precision the backend will have, before the backend
 * holds its memory. */
static int open_fov(dbtr_session *s, const dbtr_grid *grid, const dbtr_backend_opts *bo) {
  dbtr_mode gpu_mode, cpu_mode;
  int gpu, rc = dbtr_backend_choose(bo, &gpu_mode, &cpu_mode, &gpu);
  if (!rc) rc = dbtr_alloc((void **)&s->fov, s->m.n_vox, 1, "field of view");
  if (!rc) rc = dbtr_fov_mask(&s->geom, grid, dbtr_mode_precision(cpu_mode), bo->threads, s->fov, &s->n_unseen);
  return rc;
}

static int check_start(const dbtr_recon_opts *ro) {
  if (ro->algorithm && !strcmp(ro->algorithm, "fbp"))
    return dbtr_err(DBTR_EINVAL, "algorithm fbp is not ML-EM: it has no session (dbtr_recon_open runs it)");
  if (ro->start && strcmp(ro->start, "uniform") && strcmp(ro->start, "fbp"))
    return dbtr_err(DBTR_EINVAL, "start '%s': expected uniform or fbp", ro->start);
  if (start_fbp(ro) && ro->init != 0.0)
    return dbtr_err(DBTR_EINVAL, "start fbp and a uniform start value %g: give one of them", ro->init);
  return start_fbp(ro) ? dbtr_fbp_check_opts(&ro->fbp) : 0;
}

/* Start "fbp": the FBP volume of scan on the session's path (engine/fbp.h), in double, with every
 * value below DBTR_FBP_FLOOR (negative ones, and zeros, which ML-EM's multiplicative updates
 * would never move) raised to it. */
static int fbp_volume(const dbtr_session *s, const dbtr_scan *scan, double **out) {
  *out = NULL;
  int rc = dbtr_alloc((void **)out, s->m.n_vox, sizeof **out, "FBP start volume");
  if (!rc) rc = dbtr_fbp_volume(scan, &s->grid, &s->o.recon.backend, &s->o.recon.fbp, s->o.gpu_first, *out, NULL);
  if (rc) {
    free(*out);
    *out = NULL;
    return rc;
  }
  for (size_t i = 0; i < s->m.n_vox; i++)
    if (!((*out)[i] >= DBTR_FBP_FLOOR)) (*out)[i] = DBTR_FBP_FLOOR;
  return 0;
}

/* The backend's volume set to the FBP start (freed here), rounded to the backend's type. */
static int set_fbp_start(dbtr_session *s, double *fbp) {
  void *v = NULL;
  int rc = dbtr_alloc(&v, s->m.n_vox, dbtr_precision_size(s->b->precision), "FBP start volume");
  if (!rc) {
    dbtr_convert_from_double(s->b->precision, fbp, s->m.n_vox, v);
    rc = s->b->set_volume(s->b, v);
  }
  free(v);
  free(fbp);
  return rc;
}

int dbtr_session_open(dbtr_session **out, const dbtr_scan *scan, const dbtr_grid *grid, const dbtr_session_opts *opts) {
  static const dbtr_session_opts defaults = {0};
  const dbtr_session_opts *o = opts ? opts : &defaults;
  *out = NULL;
  if (!scan || !grid) return dbtr_err(DBTR_EINVAL, "no scan or no grid given");
  const dbtr_recon_opts *ro = &o->recon;
  if (!(ro->init >= 0.0 && isfinite(ro->init)))
    return dbtr_err(DBTR_EINVAL, "init %g: the start value must be finite and >= 0 (0: estimated)", ro->init);
  double t0 = omp_get_wtime();
  dbtr_algo algo;
  int rc = check_start(ro);
  if (!rc) rc = choose_algo(scan, ro->algorithm, &algo);
  /* The geometry and the grid, once, for every layer below. */
  if (!rc) rc = dbtr_geom_check(&scan->geom, "geometry");
  if (!rc) rc = dbtr_grid_check(grid, &scan->geom, o->source ? o->source : "volume grid");
  if (!rc && o->device) rc = check_device(o);
  if (!rc && !o->values_checked) rc = check_values(scan, o->device);
  if (!rc && !o->problem_only) rc = check_memory(scan, grid, algo, o);
  if (rc) return rc;
  double t_checks = omp_get_wtime();
  dbtr_session *s = calloc(1, sizeof *s);
  if (!s) return dbtr_err(DBTR_ENOMEM, "reconstruction: out of memory");
  s->grid = *grid;
  s->o = *o;
  rc = dbtr_geom_copy(&s->geom, &scan->geom);
  if (!rc) rc = expand(s, scan, algo);
  if (!rc) rc = dbtr_mlem_init(&s->m, &s->data, ro->subsets ? ro->subsets : 1, ro->backend.threads);
  s->m.prob.gpu_memory = ro->backend.gpu_memory;
  s->m.prob.gpus = ro->backend.gpus;
  s->m.prob.gpu_first = o->device ? o->device->device : o->gpu_first;
  if (!rc && o->device) rc = device_sums(s);
  if (!rc && !o->problem_only) rc = open_fov(s, grid, &ro->backend);
  double t_data = omp_get_wtime();
  /* The FBP start is made before the backend, so that its projector and the backend are not
   * held together. */
  double *fbp = NULL;
  if (!rc && !o->problem_only && start_fbp(ro)) rc = fbp_volume(s, scan, &fbp);
  double t_fbp = omp_get_wtime() - t_data; /* counted in the start's time */
  /* Data in a GPU's memory run on that GPU: "auto" does not fall back to the CPU. */
  dbtr_backend_opts bo = ro->backend;
  if (o->device) bo.backend = "gpu";
  if (!rc && !o->problem_only) rc = dbtr_backend_open(&bo, &s->m.prob, &s->b, s->fallback, sizeof s->fallback);
  double t_backend = omp_get_wtime();
  if (!rc && s->b && o->device)
    rc = dbtr_gpu_load_device(s->b, o->device, s->scan->i0_shape, device_kind(s),
                              ro->init > 0.0 ? ro->init : s->m.init_value);
  else if (!rc && s->b)
    rc = dbtr_mlem_load_with(&s->m, s->b, ro->init, &s->load);
  if (fbp) {
    if (!rc) rc = set_fbp_start(s, fbp);
    else free(fbp);
  }
  s->setup = (dbtr_session_setup){t_checks - t0, t_data - t_checks, t_backend - t_data - t_fbp,
                                  omp_get_wtime() - t_backend + t_fbp};
  if (rc) {
    dbtr_session_close(&s);
    return rc;
  }
  *out = s;
  return 0;
}

void dbtr_session_close(dbtr_session **s) {
  if (!s || !*s) return;
  dbtr_backend_destroy(&(*s)->b);
  dbtr_mlem_free(&(*s)->m);
  dbtr_geom_free(&(*s)->geom);
  free((*s)->y);
  dbtr_mlem_buffers_free(&(*s)->load);
  free((*s)->scratch);
  free((*s)->fov);
  free(*s);
  *s = NULL;
}

const dbtr_mlem *dbtr_session_mlem(const dbtr_session *s) { return &s->m; }
dbtr_backend *dbtr_session_backend(const dbtr_session *s) { return s->b; }
const char *dbtr_session_fallback(const dbtr_session *s) { return s->fallback; }
const dbtr_session_setup *dbtr_session_setup_times(const dbtr_session *s) { return &s->setup; }

const unsigned char *dbtr_session_fov(const dbtr_session *s, size_t *n_unseen) {
  if (n_unseen) *n_unseen = s->n_unseen;
  return s->fov;
}

int dbtr_session_get_volume(dbtr_session *s, void *out) {
  if (!s->b) return dbtr_err(DBTR_EINVAL, "a problem-only session has no volume");
  int rc = s->b->get_volume(s->b, out);
  if (!rc) dbtr_fov_apply(s->fov, s->m.n_vox, dbtr_precision_size(s->b->precision), out);
  return rc;
}

int dbtr_session_get_volume_device(dbtr_session *s, void *out) {
  if (!s->b || !s->o.device)
    return dbtr_err(DBTR_EINVAL, "the volume on the device: only a session of data in a GPU's memory has it there");
  return dbtr_gpu_volume_device(s->b, out, s->fov);
}

/* What a checkpoint of this session holds and must match (io/checkpoint.h). */
static void identify(const dbtr_session *s, dbtr_checkpoint_info *ci) {
  dbtr_checkpoint_identify(ci, s->scan, &s->grid, s->m.prob.n_subsets, s->m.prob.algo, s->b);
}

static int scratch(dbtr_session *s, void *given, void **out) {
  *out = given ? given : s->scratch;
  if (*out) return 0;
  int rc = dbtr_alloc(&s->scratch, s->m.n_vox, dbtr_precision_size(s->b->precision), "volume");
  *out = s->scratch;
  return rc;
}

int dbtr_session_run(dbtr_session *s, const dbtr_session_run_opts *r) {
  if (!s->b) return dbtr_err(DBTR_EINVAL, "a problem-only session runs no iterations");
  /* A checkpoint identifies its scan by the data in host memory (io/checkpoint.h). */
  if (r->checkpoint && s->o.device) return dbtr_err(DBTR_EINVAL, "checkpoints take data in host memory");
  dbtr_checkpoint_info ci;
  if (r->checkpoint) identify(s, &ci);
  int rc = 0;
  for (size_t it = r->first; it <= r->last && !rc; it++) {
    double dev;
    if (r->begin) r->begin(r->user, it);
    if ((rc = dbtr_mlem_iterate_progress(&s->m, s->b, &dev, r->progress))) break;
    if (r->checkpoint && (it % r->checkpoint_every == 0 || it == r->last)) {
      void *vol;
      ci.iterations = it;
      if ((rc = scratch(s, r->scratch, &vol)) || (rc = s->b->get_volume(s->b, vol)) ||
          (rc = dbtr_checkpoint_write(r->checkpoint, &ci, vol)))
        break;
      if (r->saved) r->saved(r->user, r->checkpoint);
    }
    if (r->end) rc = r->end(r->user, it, dev, s->b);
  }
  return rc;
}

int dbtr_session_resume(dbtr_session *s, const char *path, size_t *done, char *writer, size_t writer_len) {
  if (!s->b) return dbtr_err(DBTR_EINVAL, "a problem-only session resumes nothing");
  dbtr_checkpoint_info have, want;
  void *vol = NULL;
  identify(s, &want);
  int rc = dbtr_checkpoint_read(path, &have, &vol);
  if (!rc) rc = dbtr_checkpoint_match(path, &have, &want);
  if (!rc) rc = s->b->set_volume(s->b, vol);
  if (!rc) {
    *done = (size_t)have.iterations;
    if (writer_len) snprintf(writer, writer_len, "%s", have.backend);
  }
  free(vol);
  return rc;
}

/* 1 when a and b are the same geometry, value for value. */
static int same_geometry(const dbtr_geom *a, const dbtr_geom *b) {
  if (a->n_views != b->n_views || a->n_rows != b->n_rows || a->n_cols != b->n_cols) return 0;
  size_t bytes = 3 * a->n_views * sizeof(double);
  return !memcmp(a->source, b->source, bytes) && !memcmp(a->detector_center, b->detector_center, bytes) &&
         !memcmp(a->detector_u, b->detector_u, bytes) && !memcmp(a->detector_v, b->detector_v, bytes);
}

int dbtr_session_same_problem(const dbtr_session *s, const dbtr_scan *scan, const dbtr_grid *grid) {
  return same_geometry(&s->geom, &scan->geom) && scan->quantity == s->scan->quantity &&
         !memcmp(&s->grid, grid, sizeof *grid);
}

int dbtr_session_rearm(dbtr_session *s, const dbtr_scan *scan) {
  if (s->o.device) return dbtr_err(DBTR_EINVAL, "a session of data in a GPU's memory is not re-armed");
  if (!same_geometry(&s->geom, &scan->geom))
    return dbtr_err(DBTR_EINVAL, "%s: another geometry than the session's; a session is re-armed only with a scan of "
                    "the same views and detector", s->o.source ? s->o.source : "scan");
  if (scan->quantity != s->scan->quantity)
    return dbtr_err(DBTR_EINVAL, "%s: %s where the session's scan held %s", s->o.source ? s->o.source : "scan",
                    scan->quantity == DBTR_QUANTITY_COUNTS ? "counts" : "line integrals",
                    s->scan->quantity == DBTR_QUANTITY_COUNTS ? "counts" : "line integrals");
  int rc = s->o.values_checked ? 0 : check_values(scan, NULL);
  if (!rc) rc = expand(s, scan, s->m.prob.algo);
  /* The schedule and the backend keep the geometry they were made with, the session's copy,
   * equal value for value to this scan's. */
  if (!rc) rc = dbtr_mlem_set_data(&s->m, &s->data);
  if (!rc && s->b) rc = dbtr_mlem_load_with(&s->m, s->b, s->o.recon.init, &s->load);
  double *fbp = NULL;
  if (!rc && s->b && start_fbp(&s->o.recon) && !(rc = fbp_volume(s, scan, &fbp))) rc = set_fbp_start(s, fbp);
  return rc;
}
