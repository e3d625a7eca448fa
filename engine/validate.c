/* engine/validate.c: the validation engine (engine/validate.h): the CPU references (and the
 * referee) run once and recorded, then each compared path in turn against the recording, on
 * one ML-EM problem. Every backend comes from the engine's factories (engine/backends.h), for
 * the paths the mode table lists (recon/modes.def). */
#include "engine/validate.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backends.h"
#include "engine/validate_store.h"
#include "io/memory.h"
#include "recon/cpu.h"
#include "recon/error.h"

static dbtr_precision ref_prec(dbtr_vref r) { return r == DBTR_VREF_DOUBLE ? DBTR_PREC_DOUBLE : DBTR_PREC_FLOAT; }
static dbtr_vref own_ref(dbtr_precision p) { return p == DBTR_PREC_DOUBLE ? DBTR_VREF_DOUBLE : DBTR_VREF_FLOAT; }

/* What a path name means: a row of the mode table, GPU or CPU, but not the referee's. A path
 * is compared with the CPU reference of its precision, except the CPU path that is its
 * precision's reference itself (cpu-float, cpu-double): it is compared with the reference in
 * double. cpu-double is then the double reference's own computation, identical by construction;
 * it is there to be measured against the referee beside cpu-float. */
static int parse_path(const char *name, dbtr_vpath *p) {
  memset(p, 0, sizeof *p);
  p->explains = -1;
  int m = dbtr_mode_find(name);
  if (m >= 0 && dbtr_mode_precision((dbtr_mode)m) == DBTR_PREC_DD)
    return dbtr_err(DBTR_EINVAL, "'%s' is the referee (double-double), not a path: --referee measures every path "
                    "against it", name);
  if (m < 0) {
    char all[256];
    dbtr_mode_list(DBTR_ROWS_MODES | DBTR_ROWS_CPU, 1u << DBTR_PREC_DD, all, sizeof all);
    return dbtr_err(DBTR_EINVAL, "'%s' is not a mode (%s)", name, all);
  }
  p->mode = (dbtr_mode)m;
  p->is_gpu = dbtr_mode_on_gpu(p->mode);
  p->prec = dbtr_mode_precision(p->mode);
  p->ref = !p->is_gpu && dbtr_mode_class(p->mode) == m ? DBTR_VREF_DOUBLE : own_ref(p->prec);
  snprintf(p->name, sizeof p->name, "%s", name);
  return 0;
}

int dbtr_validate_path_is_gpu(const char *name) {
  dbtr_vpath p;
  int rc = parse_path(name, &p);
  return rc ? rc : p.is_gpu;
}

/* Adds the path unless one of that name is there; *idx receives its index either way. */
static int add_path(dbtr_validate *v, const char *name, int explains, size_t *idx) {
  for (size_t i = 0; i < v->n_paths; i++)
    if (!strcmp(v->paths[i].name, name)) {
      *idx = i;
      return 0;
    }
  dbtr_vpath p;
  int rc = parse_path(name, &p);
  if (rc) return rc;
  dbtr_vpath *grown = realloc(v->paths, (v->n_paths + 1) * sizeof *grown);
  if (!grown) return dbtr_err(DBTR_ENOMEM, "validate: out of memory");
  v->paths = grown;
  p.explains = explains;
  p.proj = calloc(v->iterations, sizeof *p.proj);
  p.vol = calloc(v->iterations, sizeof *p.vol);
  p.deviance = calloc(v->iterations, sizeof *p.deviance);
  int vs_ok = 1, q_ok = 1;
  if (v->n_objects) q_ok = !!(p.quality = calloc(v->iterations * v->n_objects, sizeof *p.quality));
  if (v->referee) {
    p.vs_proj = calloc(v->iterations, sizeof *p.vs_proj);
    p.vs_vol = calloc(v->iterations, sizeof *p.vs_vol);
    vs_ok = p.vs_proj && p.vs_vol;
  }
  v->paths[v->n_paths++] = p;
  if (!p.proj || !p.vol || !p.deviance || !vs_ok || !q_ok) return dbtr_err(DBTR_ENOMEM, "validate: out of memory");
  *idx = v->n_paths - 1;
  return 0;
}

/* The paths in the order given, each mode's explain variants right after it. */
static int add_paths(dbtr_validate *v, const dbtr_validate_opts *o) {
  for (size_t i = 0; i < o->n_paths; i++) {
    size_t idx;
    int rc = add_path(v, o->paths[i], -1, &idx);
    if (rc) return rc;
    /* The single changes that separate a mode from its match mode (recon/modes.def), which
     * --explain runs right after the mode. */
    dbtr_mode var[DBTR_MODE_TABLE_COUNT];
    size_t nv = o->explain ? dbtr_mode_variants(v->paths[idx].mode, var, DBTR_MODE_TABLE_COUNT) : 0;
    for (size_t k = 0; k < nv; k++) {
      size_t vi;
      if ((rc = add_path(v, dbtr_mode_name_of(var[k]), (int)idx, &vi))) return rc;
    }
  }
  if (v->n_paths == 0) return dbtr_err(DBTR_EINVAL, "validate: nothing to compare");
  return 0;
}


/* The recording's slots: the volume of reference r after iteration it and the projections
 * made during it; then the referee's, four an iteration (its volume and projections rounded
 * to double, then to float), all of size 0 without the referee; then each path's final
 * volume. */
static size_t vol_slot(const dbtr_validate *v, dbtr_vref r, size_t it) { return 2 * ((size_t)r * v->iterations + it); }
static size_t proj_slot(const dbtr_validate *v, dbtr_vref r, size_t it) { return vol_slot(v, r, it) + 1; }
static size_t referee_slot(const dbtr_validate *v, size_t it, int proj, dbtr_precision p) {
  return vol_slot(v, DBTR_VREF_COUNT, 0) + 4 * it + (p == DBTR_PREC_FLOAT ? 2 : 0) + (proj ? 1 : 0);
}
static size_t final_slots(const dbtr_validate *v) { return vol_slot(v, DBTR_VREF_COUNT, 0) + 4 * v->iterations; }

/* What the run holds besides the recording, at its largest stage: first each CPU reference's
 * backend, whose state is recorded from its own memory (host_state), and the referee's (on the
 * CPU its backend; on the GPU a copy of its state in double-double, read back); then the paths,
 * each one's state (pv, pp) and its backend when it runs on the CPU. The comparisons read
 * the recording a piece at a time (bd, bf) throughout. */
static double working_bytes(const dbtr_validate *v) {
  const dbtr_mlem *m = v->m;
  const dbtr_geom *g = m->prob.geom;
  const dbtr_grid *grid = m->prob.grid;
  double nv = (double)m->n_vox, np = (double)m->n_proj, stage = 0.0, paths = 0.0;
  for (int r = 0; r < DBTR_VREF_COUNT; r++)
    if (v->have_ref[r]) stage = fmax(stage, dbtr_cpu_backend_bytes(ref_prec((dbtr_vref)r), g, grid));
  if (v->referee == DBTR_REFEREE_CPU) stage = fmax(stage, dbtr_cpu_backend_bytes(DBTR_PREC_DD, g, grid));
  if (v->referee == DBTR_REFEREE_GPU) stage = fmax(stage, fmax(nv, np) * (double)sizeof(dbtr_dd));
  for (size_t i = 0; i < v->n_paths; i++) {
    const dbtr_vpath *p = &v->paths[i];
    if (!p->is_gpu && !p->replays) paths = fmax(paths, dbtr_cpu_backend_bytes(p->prec, g, grid));
  }
  paths += (nv + np) * (double)v->state_size;
  return fmax(stage, paths) + (double)v->piece * (double)(sizeof(double) + sizeof(float));
}

/* The memory the recording may take: what opts gives, or what is available less the
 * working set, which must fit itself, up to DBTR_VALIDATE_RECORD_MEMORY. */
static int record_memory(dbtr_validate *v) {
  double work = working_bytes(v), avail = dbtr_mem_available();
  int rc = dbtr_mem_check(work, "the comparison (its buffers and the CPU reference)");
  if (v->o.record_memory) {
    v->memory_bytes = (double)v->o.record_memory;
    return rc;
  }
  v->memory_bytes = avail < 0.0 ? DBTR_VALIDATE_RECORD_MEMORY : fmin(avail - work, DBTR_VALIDATE_RECORD_MEMORY);
  return rc;
}

/* Sizes the recording and opens it in memory, or, when it would not fit in the memory left
 * beside the working set, in an unnamed file in the spill folder. */
static int open_store(dbtr_validate *v) {
  const dbtr_mlem *m = v->m;
  size_t n_ref = final_slots(v), n = n_ref + v->n_paths, *sizes;
  int rc = dbtr_alloc((void **)&sizes, n, sizeof *sizes, "validate: recording");
  if (rc) return rc;
  memset(sizes, 0, n * sizeof *sizes);
  for (int r = 0; r < DBTR_VREF_COUNT && !rc; r++) {
    size_t es = dbtr_precision_size(ref_prec((dbtr_vref)r));
    for (size_t it = 0; v->have_ref[r] && it < v->iterations && !rc; it++)
      if (!(rc = dbtr_size_mul(m->n_vox, es, &sizes[vol_slot(v, (dbtr_vref)r, it)], "validate: recorded volume")))
        rc = dbtr_size_mul(m->n_proj, es, &sizes[proj_slot(v, (dbtr_vref)r, it)], "validate: recorded projections");
  }
  /* The referee's float rounding of the last volume is kept for --save-diffs in any case. */
  for (size_t it = 0; v->referee && it < v->iterations && !rc; it++)
    for (int q = 0; q < 4 && !rc; q++) {
      int proj = q % 2, f = q >= 2;
      if (f && !v->referee_float && (proj || it + 1 < v->iterations)) continue;
      rc = dbtr_size_mul(proj ? m->n_proj : m->n_vox, f ? sizeof(float) : sizeof(double),
                         &sizes[referee_slot(v, it, proj, f ? DBTR_PREC_FLOAT : DBTR_PREC_DOUBLE)],
                         "validate: the referee's recorded state");
    }
  for (size_t i = 0; i < v->n_paths && !rc; i++) {
    dbtr_vpath *p = &v->paths[i];
    p->final_slot = p->replays ? vol_slot(v, own_ref(p->prec), v->iterations - 1) : n_ref + i;
    if (!p->replays) rc = dbtr_size_mul(m->n_vox, dbtr_precision_size(p->prec), &sizes[n_ref + i], "validate: final volume");
  }
  for (size_t i = 0; i < n; i++) v->record_bytes += (double)sizes[i];
  if (!rc) rc = record_memory(v);
  v->spilled = v->record_bytes > v->memory_bytes;
  const char *dir = v->o.spill_dir, *tmp = getenv("TMPDIR");
  if (!dir) dir = tmp && *tmp ? tmp : "/tmp";
  snprintf(v->spill_dir, sizeof v->spill_dir, "%s", dir);
  if (!rc && !(v->store = calloc(1, sizeof *v->store))) rc = dbtr_err(DBTR_ENOMEM, "validate: out of memory");
  if (!rc) rc = dbtr__vstore_open(v->store, sizes, n, v->spilled, v->spill_dir);
  free(sizes);
  return rc;
}

/* Makes and frees one backend for each GPU precision the paths use, and for the referee on
 * the GPU, so that a GPU that cannot run the problem fails before the references have taken
 * their time; keeps what each said of its memory. */
static int probe_gpu(dbtr_validate *v) {
  int seen[DBTR_PREC_COUNT] = {0};
  for (size_t i = 0; i <= v->n_paths; i++) {
    dbtr_mode mode;
    if (i < v->n_paths && v->paths[i].is_gpu)
      mode = v->paths[i].mode;
    else if (i == v->n_paths && v->referee == DBTR_REFEREE_GPU)
      mode = DBTR_MODE_DD;
    else
      continue;
    dbtr_precision prec = dbtr_mode_precision(mode);
    if (seen[prec]) continue;
    seen[prec] = 1;
    dbtr_backend *b = NULL;
    int rc = dbtr_backend_create(&b, mode, &v->m->prob);
    if (!rc) snprintf(v->gpu_memory[prec], sizeof v->gpu_memory[prec], "%s", b->memory);
    dbtr_backend_destroy(&b);
    if (rc) return rc;
  }
  return 0;
}

/* The references, which path replays one, the recording, the buffers. */
static int prepare(dbtr_validate *v) {
  const dbtr_mlem *m = v->m;
  int rc;
  for (size_t i = 0; i < v->n_paths; i++) v->have_ref[v->paths[i].ref] = 1;
  for (size_t i = 0; i < v->n_paths; i++) {
    dbtr_vpath *p = &v->paths[i];
    /* A CPU path on the problem's threads computes its precision's reference bit for bit; free-running, it would
     * only repeat it. cpu-1-thread runs: its point is that another thread count gives the same bits. */
    p->replays = !p->is_gpu && !dbtr_mode_info_of(p->mode)->threads && !v->lockstep && v->have_ref[own_ref(p->prec)];
    v->referee_float |= v->referee && p->prec == DBTR_PREC_FLOAT;
  }
  size_t nmax = m->n_vox > m->n_proj ? m->n_vox : m->n_proj;
  v->piece = dbtr_diff_read_max(nmax, nmax / 8);
  for (size_t i = 0; i < v->n_paths; i++) {
    size_t es = dbtr_precision_size(v->paths[i].prec);
    if (es > v->state_size) v->state_size = es;
  }
  for (int r = 0; r < DBTR_VREF_COUNT; r++)
    if (v->have_ref[r] && ((rc = dbtr_alloc((void **)&v->ref_dev[r], v->iterations, sizeof(double), "validate")) ||
                           (rc = dbtr_alloc((void **)&v->ref_max[r], 2 * v->iterations, sizeof(double), "validate")) ||
                           (v->n_objects && (rc = dbtr_alloc((void **)&v->ref_quality[r], v->iterations * v->n_objects,
                                                             sizeof *v->ref_quality[r], "validate: quality")))))
      return rc;
  /* The paths' states are touched only once the references are recorded, so their pages
   * take no memory while a reference's backend does. */
  if ((rc = probe_gpu(v)) || (rc = open_store(v)) || (rc = dbtr_alloc(&v->pv, m->n_vox, v->state_size, "volume")) ||
      (rc = dbtr_alloc(&v->pp, m->n_proj, v->state_size, "projections")) ||
      (rc = dbtr_alloc((void **)&v->bd, v->piece, sizeof(double), "comparison")) ||
      (rc = dbtr_alloc((void **)&v->bf, v->piece, sizeof(float), "comparison")))
    return rc;
  if (v->referee && (rc = dbtr_alloc((void **)&v->best, v->iterations, sizeof *v->best, "validate"))) return rc;
  return 0;
}

int dbtr_validate_open(dbtr_validate *v, const dbtr_mlem *m, const dbtr_validate_opts *o) {
  memset(v, 0, sizeof *v);
  if (o->iterations < 1) return dbtr_err(DBTR_EINVAL, "validate: iterations must be at least 1");
  if ((unsigned)o->referee > DBTR_REFEREE_GPU) return dbtr_err(DBTR_EINVAL, "validate: no such place for the referee");
  if (o->referee && o->lockstep)
    return dbtr_err(DBTR_EINVAL, "validate: the referee runs free, so it cannot be held against lockstep rows, whose "
                    "paths restart from their references at every iteration: run --referee and --lockstep apart");
  v->iterations = o->iterations;
  v->lockstep = o->lockstep;
  v->referee = o->referee;
  v->m = m;
  v->o = *o;
  v->objects = o->objects;
  int rc = 0;
  for (size_t i = 0; o->objects && i < o->objects->n_shapes; i++) v->n_objects += o->objects->info[i].target != 0;
  if (o->objects && !v->n_objects) rc = dbtr_err(DBTR_EINVAL, "validate: the objects hold no test object to measure");
  if (!rc && v->n_objects > (size_t)-1 / sizeof(dbtr_quality_change) / o->iterations)
    rc = dbtr_err(DBTR_EOVERFLOW, "validate: too many objects and iterations to keep their quality");
  if (!rc) rc = add_paths(v, o);
  if (!rc) rc = prepare(v);
  if (rc) dbtr_validate_close(v);
  return rc;
}

const char *dbtr_validate_ref_name(dbtr_vref ref) { return ref == DBTR_VREF_DOUBLE ? "cpu-double" : "cpu-float"; }

const char *dbtr_validate_referee_name(dbtr_referee_at at) {
  return at == DBTR_REFEREE_GPU ? "gpu:dd" : at == DBTR_REFEREE_CPU ? "cpu-dd" : NULL;
}

/* Elements [lo, hi) of a recorded slot of precision `from` (float or double), in precision
 * `to` (the same, or float from double, rounded), into *out: a pointer into the recording
 * where it is in memory and nothing is to be rounded, else into the piece buffers. */
static int slot_piece(const dbtr_validate *v, size_t slot, dbtr_precision from, dbtr_precision to, size_t lo,
                      size_t hi, const void **out) {
  size_t es = dbtr_precision_size(from);
  void *buf = from == DBTR_PREC_FLOAT ? (void *)v->bf : (void *)v->bd;
  int rc = dbtr__vstore_read(v->store, slot, lo * es, (hi - lo) * es, buf, out);
  if (rc || from == to) return rc;
  dbtr_convert_to_float(from, *out, hi - lo, v->bf);
  *out = v->bf;
  return 0;
}

/* A whole recorded slot of precision from, in precision to, into out (n elements), a piece at
 * a time. */
static int slot_whole(const dbtr_validate *v, size_t slot, dbtr_precision from, dbtr_precision to, size_t n,
                      void *out) {
  size_t es = dbtr_precision_size(to);
  for (size_t lo = 0; lo < n; lo += v->piece) {
    size_t hi = n - lo > v->piece ? lo + v->piece : n;
    const void *at;
    int rc = slot_piece(v, slot, from, to, lo, hi, &at);
    if (rc) return rc;
    memcpy((char *)out + lo * es, at, (hi - lo) * es);
  }
  return 0;
}

/* The recorded state of reference r at iteration it (the volume after it, or with proj the
 * projections made during it), in precision p, into out. */
static int ref_state(const dbtr_validate *v, dbtr_vref r, size_t it, int proj, dbtr_precision p, void *out) {
  return slot_whole(v, proj ? proj_slot(v, r, it) : vol_slot(v, r, it), ref_prec(r), p,
                    proj ? v->m->n_proj : v->m->n_vox, out);
}

/* The largest of 0 and a's values (NaN skipped), on every thread: a maximum is one value
 * whatever the order. */
static double max_of(dbtr_precision p, const void *a, size_t n) {
  double m = 0.0;
  long long nn = (long long)n;
#pragma omp parallel for schedule(static) reduction(max : m)
  for (long long i = 0; i < nn; i++) {
    double x = p == DBTR_PREC_FLOAT ? (double)((const float *)a)[i] : ((const double *)a)[i];
    if (x > m) m = x;
  }
  return m;
}

/* A path's array in memory against a recorded slot, read a piece at a time: a dbtr_diff_source. */
typedef struct {
  const dbtr_validate *v;
  const char *a;
  size_t es;                 /* a's element size */
  size_t slot;
  dbtr_precision from, to;   /* the slot's precision and the one compared in (a's) */
} slot_pair;

static int read_slot_pair(void *user, size_t lo, size_t hi, const void **a, const void **b) {
  const slot_pair *s = user;
  *a = s->a + lo * s->es;
  return slot_piece(s->v, s->slot, s->from, s->to, lo, hi, b);
}

/* a (of precision pa) against slot (of precision from), read in precision to. */
static dbtr_diff_source slot_source(const dbtr_validate *v, slot_pair *s, const void *a, dbtr_precision pa, size_t slot,
                                    dbtr_precision from, dbtr_precision to) {
  *s = (slot_pair){v, a, dbtr_precision_size(pa), slot, from, to};
  return (dbtr_diff_source){read_slot_pair, s, v->piece};
}

static void on_mlem_progress(void *user, double fraction) {
  dbtr_validate *v = user;
  v->at.fraction = fraction;
  v->o.progress(v->o.progress_user, &v->at);
}

/* Iteration it of the stage in v->at begins: tells the progress hook, and returns the
 * driver's hook for the iteration (NULL without one). */
static const dbtr_mlem_progress *begin_iteration(dbtr_validate *v, size_t it, dbtr_mlem_progress *hook) {
  if (!v->o.progress) return NULL;
  v->at.iteration = it + 1;
  on_mlem_progress(v, 0.0);
  *hook = (dbtr_mlem_progress){on_mlem_progress, v, v->o.progress_every};
  return hook;
}

static void begin_stage(dbtr_validate *v, const char *name) {
  v->at.stage++;
  v->at.name = name;
  v->at.iterations = v->iterations;
}

/* With objects: measures the volume x (n_vox elements of prec) and fills the n_objects changes
 * c, the reference's half (ref) or, on c holding the reference's half, the path's half and the
 * changes. The measures take the volume as it is, and a few depth profiles beside it. */
static int measure_quality(const dbtr_validate *v, const void *x, dbtr_precision prec, int ref,
                           dbtr_quality_change *c) {
  dbtr_quality q;
  int rc = dbtr_quality_measure(&q, x, prec, v->m->prob.grid, v->o.objects);
  if (!rc && q.n != v->n_objects) rc = dbtr_err(DBTR_EINTERNAL, "validate: %zu objects measured of %zu", q.n, v->n_objects);
  for (size_t j = 0; j < q.n && !rc; j++) {
    if (ref)
      dbtr_quality_change_ref(&c[j], &q.obj[j]);
    else
      dbtr_quality_change_path(&c[j], &q.obj[j]);
  }
  dbtr_quality_free(&q);
  return rc;
}

/* Runs reference r from the start volume, recording its state after every iteration. */
static int record_reference(dbtr_validate *v, dbtr_vref r) {
  const dbtr_mlem *m = v->m;
  dbtr_backend *b = NULL;
  begin_stage(v, r == DBTR_VREF_DOUBLE ? "cpu-double reference" : "cpu-float reference");
  int rc = dbtr_backend_create(&b, dbtr_mode_cpu_of(ref_prec(r)), &m->prob);
  if (!rc) rc = dbtr_mlem_load(m, b, 0.0);
  for (size_t it = 0; it < v->iterations && !rc; it++) {
    dbtr_mlem_progress hook;
    rc = dbtr_mlem_iterate_progress(m, b, &v->ref_dev[r][it], begin_iteration(v, it, &hook));
    /* Recorded from the backend's own memory, with its largest value: the top of the display
     * scale its paths are compared on. */
    for (int proj = 0; proj < 2 && !rc; proj++) {
      const void *x = b->host_state(b, proj);
      v->ref_max[r][2 * it + (size_t)proj] = max_of(ref_prec(r), x, proj ? m->n_proj : m->n_vox);
      rc = dbtr__vstore_put(v->store, proj ? proj_slot(v, r, it) : vol_slot(v, r, it), x);
    }
    if (!rc && v->n_objects)
      rc = measure_quality(v, b->host_state(b, 0), ref_prec(r), 1, v->ref_quality[r] + it * v->n_objects);
  }
  dbtr_backend_destroy(&b);
  return rc;
}

/* The referee's state of iteration it, x (its volume, or with proj its projections, in
 * double-double), recorded a piece at a time, rounded to double and, where kept, to float; the
 * best answer of each precision is measured from x itself as the pieces pass (a
 * dbtr_diff_source of x and its float rounding). */
typedef struct {
  dbtr_validate *v;
  const dbtr_dd *x;
  size_t it;
  int proj;
} referee_pieces;

static int record_referee_piece(void *user, size_t lo, size_t hi, const void **a, const void **b) {
  const referee_pieces *r = user;
  dbtr_validate *v = r->v;
  size_t n = hi - lo, fs = referee_slot(v, r->it, r->proj, DBTR_PREC_FLOAT);
  dbtr_convert_to_double(DBTR_PREC_DD, r->x + lo, n, v->bd);
  dbtr_convert_to_float(DBTR_PREC_DD, r->x + lo, n, v->bf);
  int rc = dbtr__vstore_write(v->store, referee_slot(v, r->it, r->proj, DBTR_PREC_DOUBLE), lo * sizeof(double),
                              n * sizeof(double), v->bd);
  if (!rc && v->store->size[fs]) rc = dbtr__vstore_write(v->store, fs, lo * sizeof(float), n * sizeof(float), v->bf);
  *a = r->x + lo;
  *b = v->bf;
  return rc;
}

static int record_referee_state(dbtr_validate *v, size_t it, int proj, const dbtr_dd *x) {
  referee_pieces r = {v, x, it, proj};
  dbtr_diff_source src = {record_referee_piece, &r, v->piece};
  double *best = proj ? v->best[it].proj : v->best[it].vol;
  return dbtr_rounding_rel_l2_read(proj ? v->m->n_proj : v->m->n_vox, &src, &best[DBTR_PREC_FLOAT],
                                   &best[DBTR_PREC_DOUBLE]);
}

/* Runs the referee (double-double, on the CPU or the GPU) from the start volume, recording
 * its state after every iteration: from the backend's memory on the CPU, from a copy read
 * back on the GPU, held only here. */
static int record_referee(dbtr_validate *v) {
  const dbtr_mlem *m = v->m;
  dbtr_backend *b = NULL;
  dbtr_dd *copy = NULL;
  begin_stage(v, v->referee == DBTR_REFEREE_GPU ? "referee (gpu:dd)" : "referee (cpu-dd)");
  int rc = dbtr_backend_create(&b, v->referee == DBTR_REFEREE_GPU ? DBTR_MODE_DD : DBTR_CPU_DD, &m->prob);
  if (!rc && !b->host_state)
    rc = dbtr_alloc((void **)&copy, m->n_vox > m->n_proj ? m->n_vox : m->n_proj, sizeof *copy, "the referee's state");
  if (!rc) rc = dbtr_mlem_load(m, b, 0.0);
  for (size_t it = 0; it < v->iterations && !rc; it++) {
    dbtr_mlem_progress hook;
    rc = dbtr_mlem_iterate_progress(m, b, &v->best[it].deviance, begin_iteration(v, it, &hook));
    for (int proj = 0; proj < 2 && !rc; proj++) {
      const dbtr_dd *x = copy;
      if (b->host_state)
        x = b->host_state(b, proj);
      else
        rc = proj ? b->get_projections(b, copy) : b->get_volume(b, copy);
      if (!rc) rc = record_referee_state(v, it, proj, x);
    }
  }
  free(copy);
  dbtr_backend_destroy(&b);
  return rc;
}

/* Iteration it of path p into pv and pp, with its deviance: on b, started under lockstep
 * from its reference's state before the iteration; read from the recording when p replays
 * its own reference. */
static int path_state(dbtr_validate *v, dbtr_vpath *p, dbtr_backend *b, size_t it) {
  dbtr_mlem_progress hook;
  const dbtr_mlem_progress *pr = begin_iteration(v, it, &hook);
  int rc;
  if (p->replays) {
    dbtr_vref own = own_ref(p->prec);
    p->deviance[it] = v->ref_dev[own][it];
    if ((rc = dbtr__vstore_get(v->store, vol_slot(v, own, it), v->pv))) return rc;
    return dbtr__vstore_get(v->store, proj_slot(v, own, it), v->pp);
  }
  if (v->lockstep && it > 0 &&
      ((rc = ref_state(v, p->ref, it - 1, 0, p->prec, v->pv)) || (rc = b->set_volume(b, v->pv))))
    return rc;
  if ((rc = dbtr_mlem_iterate_progress(v->m, b, &p->deviance[it], pr)) || (rc = b->get_volume(b, v->pv))) return rc;
  return b->get_projections(b, v->pp);
}

/* Path p's state of iteration it (with proj its projections, pp, else its volume, pv) against
 * its reference's, on the display scale from 0 to the reference's largest value (rounded to
 * p's precision, as the reference is compared in it). */
static int compare(const dbtr_validate *v, const dbtr_vpath *p, size_t it, int proj, dbtr_diff_stats *out) {
  slot_pair s;
  dbtr_diff_source src = slot_source(v, &s, proj ? v->pp : v->pv, p->prec,
                                     proj ? proj_slot(v, p->ref, it) : vol_slot(v, p->ref, it), ref_prec(p->ref), p->prec);
  double top = v->ref_max[p->ref][2 * it + (size_t)proj];
  dbtr_display_scale sc = {0.0, p->prec == DBTR_PREC_FLOAT ? (double)(float)top : top};
  return dbtr_diff_stats_read(p->prec, proj ? v->m->n_proj : v->m->n_vox, &src, sc.hi > 0.0 ? &sc : NULL, out);
}

/* Compares path p's state of iteration it (pv, pp) with its reference's; row receives it. */
static int compare_path(dbtr_validate *v, dbtr_vpath *p, size_t it, dbtr_validate_row *row) {
  int rc;
  if ((rc = compare(v, p, it, 0, &p->vol[it])) || (rc = compare(v, p, it, 1, &p->proj[it]))) return rc;
  if (!p->first_iter && (p->proj[it].n_differ || p->vol[it].n_differ)) {
    p->first_iter = it + 1;
    p->first_in_proj = p->proj[it].n_differ > 0;
    p->first_max_ulp = p->first_in_proj ? p->proj[it].max_ulp : p->vol[it].max_ulp;
  }
  *row = (dbtr_validate_row){.run = v, .iteration = it + 1, .path = p, .reference = dbtr_validate_ref_name(p->ref),
                             .proj = &p->proj[it], .vol = &p->vol[it], .deviance = p->deviance[it],
                             .path_proj = v->pp, .path_vol = v->pv};
  return 0;
}

/* rel / best, where best is the best answer's relative L2: 1 where both are 0 (the path is
 * the best answer), infinite where only best is. */
static double best_units(double rel, double best) {
  if (best > 0.0) return rel / best;
  return rel > 0.0 ? (double)INFINITY : 1.0;
}

/* Path p's state of iteration it (with proj its projections, else its volume) against the
 * referee's: relative L2 against the referee in double, the ulps against it rounded to p's
 * precision. For a double path the two are one array, and the statistics' relative L2 is
 * dbtr_rel_l2_read's (the same squares summed in the same chunks), so it is read once. */
static int vs_referee(const dbtr_validate *v, const dbtr_vpath *p, size_t it, int proj, dbtr_referee_stats *out) {
  size_t n = proj ? v->m->n_proj : v->m->n_vox;
  const void *a = proj ? v->pp : v->pv;
  slot_pair s, sd;
  dbtr_diff_source src = slot_source(v, &s, a, p->prec, referee_slot(v, it, proj, p->prec), p->prec, p->prec),
                   src_d = slot_source(v, &sd, a, p->prec, referee_slot(v, it, proj, DBTR_PREC_DOUBLE), DBTR_PREC_DOUBLE,
                                       DBTR_PREC_DOUBLE);
  dbtr_diff_stats st;
  int rc = dbtr_diff_stats_read(p->prec, n, &src, NULL, &st);
  double rel = st.rel_l2;
  if (!rc && p->prec == DBTR_PREC_FLOAT) rc = dbtr_rel_l2_read(p->prec, n, &src_d, &rel);
  if (rc) return rc;
  double best = proj ? v->best[it].proj[p->prec] : v->best[it].vol[p->prec];
  *out = (dbtr_referee_stats){.n = n, .rel_l2 = rel, .max_ulp = st.max_ulp, .median_ulp = st.median_ulp,
                              .beyond_4ulp = st.beyond_4ulp, .scale_ulp = st.scale_ulp, .best = best};
  out->best_units = best_units(out->rel_l2, best);
  return 0;
}

/* Every iteration of path p on a backend of its own (none when it replays), freed before
 * the next path's is made; its final volume goes into the recording. */
static int run_path(dbtr_validate *v, dbtr_vpath *p, dbtr_validate_row_fn on_row, void *user) {
  const dbtr_mlem *m = v->m;
  dbtr_backend *b = NULL;
  int rc = 0;
  begin_stage(v, p->name);
  double t = omp_get_wtime();
  if (!p->replays) {
    rc = dbtr_backend_create(&b, p->mode, &m->prob);
    if (!rc) rc = dbtr_mlem_load(m, b, 0.0);
  }
  p->seconds_setup = omp_get_wtime() - t;
  for (size_t it = 0; it < v->iterations && !rc; it++) {
    dbtr_validate_row row;
    t = omp_get_wtime();
    rc = path_state(v, p, b, it);
    p->seconds_iterations += omp_get_wtime() - t;
    t = omp_get_wtime();
    if (rc || (rc = compare_path(v, p, it, &row))) break;
    if (v->referee) {
      if ((rc = vs_referee(v, p, it, 1, &p->vs_proj[it])) || (rc = vs_referee(v, p, it, 0, &p->vs_vol[it])))
        break;
      row.vs_proj = &p->vs_proj[it];
      row.vs_vol = &p->vs_vol[it];
    }
    if (v->n_objects) {
      dbtr_quality_change *c = p->quality + it * v->n_objects;
      memcpy(c, v->ref_quality[p->ref] + it * v->n_objects, v->n_objects * sizeof *c);
      if ((rc = measure_quality(v, v->pv, p->prec, 0, c))) break;
      row.quality = c;
    }
    p->seconds_compare += omp_get_wtime() - t;
    if (on_row) on_row(user, &row);
  }
  if (!rc && v->n_objects) dbtr_quality_verdict_of(p->quality, v->n_objects, v->iterations, &p->quality_verdict);
  if (!rc && !p->replays) rc = dbtr__vstore_put(v->store, p->final_slot, v->pv);
  dbtr_backend_destroy(&b);
  return rc;
}

int dbtr_validate_run(dbtr_validate *v, dbtr_validate_row_fn on_row, void *user) {
  if (v->ran) return dbtr_err(DBTR_EINVAL, "validate: the run has already run");
  v->ran = 1;
  v->at = (dbtr_validate_progress){.n_stages = v->n_paths};
  for (int r = 0; r < DBTR_VREF_COUNT; r++) v->at.n_stages += (size_t)v->have_ref[r];
  v->at.n_stages += v->referee != DBTR_REFEREE_NONE;
  int rc = 0;
  for (int r = 0; r < DBTR_VREF_COUNT && !rc; r++)
    if (v->have_ref[r]) {
      double t = omp_get_wtime();
      rc = record_reference(v, (dbtr_vref)r);
      v->ref_seconds[r] = omp_get_wtime() - t;
    }
  v->refs_recorded = !rc;
  double t = omp_get_wtime();
  if (!rc && v->referee) rc = record_referee(v);
  v->referee_seconds = omp_get_wtime() - t;
  for (size_t i = 0; i < v->n_paths && !rc; i++) rc = run_path(v, &v->paths[i], on_row, user);
  if (!rc) v->done = v->iterations;
  return rc;
}

double dbtr_validate_explained_share(const dbtr_validate *v, const dbtr_vpath *p) {
  if (p->explains < 0) return 0.0;
  size_t last = v->iterations - 1;
  double mode = v->paths[p->explains].vol[last].rel_l2;
  return mode > 0.0 ? p->vol[last].rel_l2 / mode : 0.0;
}

/* a - ref (a alone when ref is NULL) in double, rounded once to float. */
static void to_float(dbtr_precision p, const void *a, const void *ref, size_t n, float *out) {
  for (size_t i = 0; i < n; i++) {
    double x = p == DBTR_PREC_FLOAT ? (double)((const float *)a)[i] : ((const double *)a)[i];
    if (ref) x -= p == DBTR_PREC_FLOAT ? (double)((const float *)ref)[i] : ((const double *)ref)[i];
    out[i] = (float)x;
  }
}

int dbtr_validate_path_volume(dbtr_validate *v, const dbtr_vpath *p, float *vol, float *diff) {
  if (!v->done) return dbtr_err(DBTR_EINVAL, "validate: the run has not run: no final volumes yet");
  size_t n = v->m->n_vox, es = dbtr_precision_size(p->prec), slot = vol_slot(v, p->ref, v->iterations - 1);
  int rc = dbtr__vstore_get(v->store, p->final_slot, v->pv);
  if (rc) return rc;
  to_float(p->prec, v->pv, NULL, n, vol);
  for (size_t lo = 0; diff && lo < n; lo += v->piece) {
    size_t hi = n - lo > v->piece ? lo + v->piece : n;
    const void *ref;
    if ((rc = slot_piece(v, slot, ref_prec(p->ref), p->prec, lo, hi, &ref))) return rc;
    to_float(p->prec, (const char *)v->pv + lo * es, ref, hi - lo, diff + lo);
  }
  return 0;
}

int dbtr_validate_ref_state(const dbtr_validate *v, dbtr_vref ref, size_t iteration, int proj, dbtr_precision p,
                            void *out) {
  if ((unsigned)ref >= DBTR_VREF_COUNT || !v->have_ref[ref])
    return dbtr_err(DBTR_EINVAL, "validate: the run has no %s reference", dbtr_validate_ref_name(ref));
  if (!v->refs_recorded) return dbtr_err(DBTR_EINVAL, "validate: the references are not recorded yet");
  if (iteration < 1 || iteration > v->iterations || (p != DBTR_PREC_FLOAT && p != ref_prec(ref)))
    return dbtr_err(DBTR_EINVAL, "validate: no iteration %zu of the %s reference in %s", iteration,
                    dbtr_validate_ref_name(ref), dbtr_precision_name(p));
  return ref_state(v, ref, iteration - 1, proj, p, out);
}

int dbtr_validate_referee_state(const dbtr_validate *v, size_t iteration, int proj, dbtr_precision p, void *out) {
  if (!v->referee) return dbtr_err(DBTR_EINVAL, "validate: the run has no referee");
  if (!v->done) return dbtr_err(DBTR_EINVAL, "validate: the run has not run: the referee is not recorded yet");
  if (iteration < 1 || iteration > v->iterations || (p != DBTR_PREC_FLOAT && p != DBTR_PREC_DOUBLE))
    return dbtr_err(DBTR_EINVAL, "validate: no iteration %zu of the referee in %s", iteration, dbtr_precision_name(p));
  size_t slot = referee_slot(v, iteration - 1, proj, p);
  if (!v->store->size[slot])
    return dbtr_err(DBTR_EINVAL, "validate: the referee's %s of iteration %zu is not recorded in float (no float path "
                    "needed it)", proj ? "projections" : "volume", iteration);
  return dbtr__vstore_get(v->store, slot, out);
}

void dbtr_validate_close(dbtr_validate *v) {
  for (size_t i = 0; i < v->n_paths; i++) {
    free(v->paths[i].proj);
    free(v->paths[i].vol);
    free(v->paths[i].vs_proj);
    free(v->paths[i].vs_vol);
    free(v->paths[i].deviance);
    free(v->paths[i].quality);
  }
  free(v->paths);
  for (int r = 0; r < DBTR_VREF_COUNT; r++) {
    free(v->ref_dev[r]);
    free(v->ref_max[r]);
    free(v->ref_quality[r]);
  }
  if (v->store) dbtr__vstore_close(v->store);
  free(v->store);
  free(v->pv);
  free(v->pp);
  free(v->bd);
  free(v->bf);
  free(v->best);
  memset(v, 0, sizeof *v);
}
