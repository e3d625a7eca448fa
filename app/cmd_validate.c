/* app/cmd_validate.c: `dbtr validate SCAN.h5`: the CPU reference and GPU modes side by
 * side, iteration by iteration (docs/validation.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/cli.h"
#include "app/commands.h"
#include "app/run.h"
#include "app/validate.h"
#include "io/tiff.h"
#include "recon/error.h"
#include "recon/mlem.h"

static void help(void) {
  printf("usage: dbtr validate SCAN.h5 [options]\n\n"
         "Runs the CPU reference and GPU modes on the same scan and compares them after every\n"
         "iteration: the forward projections (A mu) and the volume. Without a GPU it compares\n"
         "what the CPU has: 1 thread against N (cpu-1-thread) and float against double (cpu-float).\n\n"
         "  --modes LIST           fast,ieee,cpu-match,double,double-match (default: all five with a\n"
         "                         GPU, cpu-1-thread,cpu-float without); the CPU paths may be listed too\n"
         "  --iterations N         iterations (default 6)\n"
         "  --subsets S            ordered subsets (default 1)\n"
         "  --lockstep             start every path from the CPU state at each iteration, so each\n"
         "                         iteration's difference is seen alone (default: free-running)\n"
         "  --explain              also run single-change variants of the match modes (FMA, approximate\n"
         "                         division, exp, FTZ) and say which change accounts for how much\n"
         "  --expect-identical L   fail (exit 6) if any of these paths differs from its reference\n"
         "  --report DIR           write validate.csv, validate.json and two SVG plots into DIR\n"
         "  --save-diffs DIR       write each path's final volume and its difference as TIFF\n"
         "  --threads N            CPU threads (default: all)\n"
         "  --dims, --voxel, --origin   reconstruction grid overrides (as dbtr recon)\n"
         "  --quiet                only the verdicts\n");
}

static int add_path(vrun *r, const char *name, int is_gpu, dbtr_gpu_mode mode, dbtr_precision prec, int threads,
                    int ref, int explains) {
  for (size_t i = 0; i < r->n_paths; i++)
    if (!strcmp(r->paths[i].name, name)) return (int)i;
  vpath *p = realloc(r->paths, (r->n_paths + 1) * sizeof *p);
  if (!p) return -1;
  r->paths = p;
  p = &r->paths[r->n_paths];
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "%s", name);
  p->is_gpu = is_gpu;
  p->mode = mode;
  p->prec = prec;
  p->threads = threads;
  p->ref = ref;
  p->explains = explains;
  p->proj = calloc(r->iterations, sizeof *p->proj);
  p->vol = calloc(r->iterations, sizeof *p->vol);
  p->deviance = calloc(r->iterations, sizeof *p->deviance);
  if (!p->proj || !p->vol || !p->deviance) return -1;
  return (int)r->n_paths++;
}

/* Parses --modes into paths; with no GPU the GPU modes are dropped with a note. */
static int parse_modes(const char *cmd, vrun *r, const char *list, int gpu, int threads, int explain, int quiet) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    if (!strcmp(tok, "cpu-1-thread")) {
      if (add_path(r, tok, 0, DBTR_MODE_CPU_MATCH, DBTR_PREC_FLOAT, 1, 0, -1) < 0) return 4;
      continue;
    }
    if (!strcmp(tok, "cpu-float")) {
      if (add_path(r, tok, 0, DBTR_MODE_CPU_MATCH, DBTR_PREC_FLOAT, threads, 1, -1) < 0) return 4;
      continue;
    }
    dbtr_gpu_mode m;
    if (dbtr_gpu_mode_parse(tok, &m))
      return cli_usage_error(cmd, "--modes: '%s' is not a mode (fast, ieee, cpu-match, double, double-match, "
                                  "cpu-1-thread, cpu-float)", tok);
    if (!gpu) {
      if (!quiet) fprintf(stderr, "dbtr validate: no GPU: skipping %s\n", tok);
      continue;
    }
    dbtr_precision p = dbtr_gpu_mode_precision(m);
    int idx = add_path(r, tok, 1, m, p, 0, p == DBTR_PREC_DOUBLE, -1);
    if (idx < 0) return 4;
    if (!explain) continue;
    /* The single changes that separate each mode from its match mode (docs/validation.md). */
    static const dbtr_gpu_mode fast_v[] = {DBTR_VARIANT_CPU_MATCH_FMA, DBTR_VARIANT_CPU_MATCH_APPROX_DIV,
                                           DBTR_VARIANT_CPU_MATCH_FAST_EXP, DBTR_VARIANT_CPU_MATCH_FTZ};
    static const dbtr_gpu_mode ieee_v[] = {DBTR_VARIANT_CPU_MATCH_FMA, DBTR_VARIANT_CPU_MATCH_LIBM_EXP};
    static const dbtr_gpu_mode double_v[] = {DBTR_VARIANT_DOUBLE_MATCH_FMA, DBTR_VARIANT_DOUBLE_MATCH_LIBM_EXP};
    const dbtr_gpu_mode *v = NULL;
    size_t nv = 0;
    if (m == DBTR_MODE_FAST) v = fast_v, nv = 4;
    else if (m == DBTR_MODE_IEEE) v = ieee_v, nv = 2;
    else if (m == DBTR_MODE_DOUBLE) v = double_v, nv = 2;
    for (size_t i = 0; i < nv; i++) {
      dbtr_precision vp = dbtr_gpu_mode_precision(v[i]);
      if (add_path(r, dbtr_gpu_mode_name(v[i]), 1, v[i], vp, 0, vp == DBTR_PREC_DOUBLE, idx) < 0) return 4;
    }
  }
  if (r->n_paths == 0) return cli_usage_error(cmd, "--modes: nothing to compare");
  return 0;
}

typedef struct {
  dbtr_backend *b[2];   /* the references: CPU float, CPU double */
  void *vol[2], *proj[2], *prev[2]; /* their state after this iteration, and before it */
  void *pv, *pp;        /* a path's state */
  void *rv, *rp;        /* the reference converted to a path's precision */
} refs;

/* The reference's values in precision p (a float path against the double reference). */
static const void *ref_in(const refs *f, int ref, dbtr_precision p, int proj, size_t n, void *scratch) {
  const void *src = proj ? f->proj[ref] : f->vol[ref];
  dbtr_precision rp = ref ? DBTR_PREC_DOUBLE : DBTR_PREC_FLOAT;
  if (rp == p) return src;
  dbtr_convert_to_float(rp, src, n, scratch);
  return scratch;
}

static double max_of(dbtr_precision p, const void *a, size_t n) {
  double m = 0.0;
  for (size_t i = 0; i < n; i++) {
    double v = p == DBTR_PREC_FLOAT ? (double)((const float *)a)[i] : ((const double *)a)[i];
    if (v > m) m = v;
  }
  return m;
}

static int stats(dbtr_precision p, const void *a, const void *b, size_t n, dbtr_diff_stats *out) {
  dbtr_display_scale sc = {0.0, max_of(p, b, n)};
  const dbtr_display_scale *s = sc.hi > 0.0 ? &sc : NULL;
  return p == DBTR_PREC_FLOAT ? dbtr_diff_stats_f(a, b, n, s, out) : dbtr_diff_stats_d(a, b, n, s, out);
}

/* One iteration of one path, compared with its reference. */
static int step_path(vrun *r, vpath *p, refs *f, const dbtr_mlem *m, size_t it) {
  int rc = 0;
  if (r->lockstep && it > 0) {
    /* Start from the reference's state before this iteration, in the path's precision. */
    const void *start = f->prev[p->ref];
    if (p->prec == DBTR_PREC_FLOAT && p->ref == 1) {
      dbtr_convert_to_float(DBTR_PREC_DOUBLE, f->prev[1], m->n_vox, f->rv);
      start = f->rv;
    }
    if ((rc = p->b->set_volume(p->b, start))) return rc;
  }
  if ((rc = dbtr_mlem_iterate(m, p->b, &p->deviance[it])) || (rc = p->b->get_volume(p->b, f->pv)) ||
      (rc = p->b->get_projections(p->b, f->pp)))
    return rc;
  const void *rv = ref_in(f, p->ref, p->prec, 0, m->n_vox, f->rv);
  if ((rc = stats(p->prec, f->pv, rv, m->n_vox, &p->vol[it]))) return rc;
  const void *rp = ref_in(f, p->ref, p->prec, 1, m->n_proj, f->rp);
  if ((rc = stats(p->prec, f->pp, rp, m->n_proj, &p->proj[it]))) return rc;
  if (!p->first_iter && (p->proj[it].n_differ || p->vol[it].n_differ)) {
    p->first_iter = it + 1;
    p->first_in_proj = p->proj[it].n_differ > 0;
    p->first_max_ulp = p->first_in_proj ? p->proj[it].max_ulp : p->vol[it].max_ulp;
  }
  return 0;
}

static void print_row(size_t it, const char *name, const char *what, const dbtr_diff_stats *s, double dev) {
  printf("%4zu  %-30s %-5s %10zu %8.4f%% %11.4g %11.4g %10llu %7llu %10.3g %8zu %14.8g\n", it, name, what, s->n_differ,
         s->n ? 100.0 * (double)s->n_differ / (double)s->n : 0.0, s->max_abs, s->mean_abs, (unsigned long long)s->max_ulp,
         (unsigned long long)s->median_ulp, s->rel_l2, s->n_differ_u16, dev);
}

static int save_volume(const char *dir, const char *name, const char *suffix, const dbtr_grid *grid, dbtr_precision p,
                       const void *a, const void *ref, size_t n) {
  float *out = malloc(n * sizeof(float));
  if (!out) return dbtr_err(DBTR_ENOMEM, "--save-diffs: out of memory");
  for (size_t i = 0; i < n; i++) {
    double v = p == DBTR_PREC_FLOAT ? (double)((const float *)a)[i] : ((const double *)a)[i];
    if (ref) v -= p == DBTR_PREC_FLOAT ? (double)((const float *)ref)[i] : ((const double *)ref)[i];
    out[i] = (float)v;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/%s%s.tif", dir, name, suffix);
  int rc = dbtr_tiff_write(path, grid, out, NULL);
  free(out);
  return rc;
}

static int expect_check(const vrun *r, const char *list, int *ex) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    const vpath *found = NULL;
    for (size_t i = 0; i < r->n_paths; i++)
      if (!strcmp(r->paths[i].name, tok)) found = &r->paths[i];
    if (!found) {
      fprintf(stderr, "dbtr validate: --expect-identical: %s was not run (no GPU, or not in --modes)\n", tok);
      if (!*ex) *ex = dbtr_exit_code(DBTR_ENOGPU);
    } else if (found->first_iter) {
      fprintf(stderr, "dbtr validate: --expect-identical: %s differs from its reference\n", tok);
      *ex = dbtr_exit_code(DBTR_EDIFFERS);
    }
  }
  return *ex;
}

/* The --explain summary: for each mode, how far each single-change variant alone moves
 * the final volume, against how far the mode moves it. */
static void print_explain(const vrun *r) {
  size_t last = r->iterations - 1;
  for (size_t i = 0; i < r->n_paths; i++) {
    const vpath *m = &r->paths[i];
    int any = 0;
    for (size_t j = 0; j < r->n_paths; j++) any |= r->paths[j].explains == (int)i;
    if (!any) continue;
    printf("\n%s: final volume relative L2 %.3g, %.2f%% of voxels differ; single changes to the match mode:\n", m->name,
           m->vol[last].rel_l2, 100.0 * (double)m->vol[last].n_differ / (double)m->vol[last].n);
    for (size_t j = 0; j < r->n_paths; j++) {
      const vpath *v = &r->paths[j];
      if (v->explains != (int)i) continue;
      double share = m->vol[last].rel_l2 > 0.0 ? v->vol[last].rel_l2 / m->vol[last].rel_l2 : 0.0;
      printf("  %-24s relative L2 %.3g (%.0f%% of the mode's), %.2f%% of voxels differ, max %llu ulp\n", v->name,
             v->vol[last].rel_l2, 100.0 * share, 100.0 * (double)v->vol[last].n_differ / (double)v->vol[last].n,
             (unsigned long long)v->vol[last].max_ulp);
    }
  }
}

/* The references (a CPU backend per precision some path compares with) and a backend per
 * path, each loaded with the start volume, and the comparison buffers. A path's CPU
 * threads override the problem's. */
static int open_paths(vrun *r, refs *f, dbtr_mlem *m) {
  int rc;
  for (size_t i = 0; i < r->n_paths; i++) r->have_ref[r->paths[i].ref] = 1;
  for (int p = 0; p < 2; p++) {
    if (!r->have_ref[p]) continue;
    size_t es = p ? sizeof(double) : sizeof(float);
    if ((rc = dbtr_cpu_backend_create(&f->b[p], p ? DBTR_PREC_DOUBLE : DBTR_PREC_FLOAT, &m->prob)) ||
        (rc = dbtr_mlem_load(m, f->b[p], NULL, 0.0)) || (rc = dbtr_alloc(&f->vol[p], m->n_vox, es, "reference")) ||
        (rc = dbtr_alloc(&f->prev[p], m->n_vox, es, "reference")) ||
        (rc = dbtr_alloc(&f->proj[p], m->n_proj, es, "reference")) ||
        (rc = dbtr_alloc((void **)&r->ref_dev[p], r->iterations, sizeof(double), "reference")) ||
        (rc = f->b[p]->get_volume(f->b[p], f->vol[p])))
      return rc;
  }
  for (size_t i = 0; i < r->n_paths; i++) {
    vpath *p = &r->paths[i];
    dbtr_problem prob = m->prob;
    if (!p->is_gpu) prob.threads = p->threads;
    rc = p->is_gpu ? dbtr_gpu_backend_create(&p->b, p->mode, &prob) : dbtr_cpu_backend_create(&p->b, p->prec, &prob);
    if (!rc) rc = dbtr_mlem_load(m, p->b, NULL, 0.0);
    if (rc) return rc;
  }
  if ((rc = dbtr_alloc(&f->pv, m->n_vox, sizeof(double), "volume")) ||
      (rc = dbtr_alloc(&f->pp, m->n_proj, sizeof(double), "projections")) ||
      (rc = dbtr_alloc(&f->rv, m->n_vox, sizeof(double), "volume")))
    return rc;
  return dbtr_alloc(&f->rp, m->n_proj, sizeof(double), "projections");
}

/* --save-diffs: each path's final volume, its difference from its reference, and the
 * references' volumes. */
static int save_diffs(const char *dir, const vrun *r, refs *f, const dbtr_mlem *m, const dbtr_grid *grid) {
  int rc = 0;
  mkdir(dir, 0755);
  for (size_t i = 0; i < r->n_paths && !rc; i++) {
    const vpath *p = &r->paths[i];
    if ((rc = p->b->get_volume(p->b, f->pv))) break;
    const void *rv = ref_in(f, p->ref, p->prec, 0, m->n_vox, f->rv);
    rc = save_volume(dir, p->name, "", grid, p->prec, f->pv, NULL, m->n_vox);
    if (!rc) rc = save_volume(dir, p->name, "-diff", grid, p->prec, f->pv, rv, m->n_vox);
  }
  for (int p = 0; p < 2 && !rc; p++)
    if (r->have_ref[p])
      rc = save_volume(dir, p ? "cpu-double" : "cpu-float", "", grid, p ? DBTR_PREC_DOUBLE : DBTR_PREC_FLOAT,
                       f->vol[p], NULL, m->n_vox);
  return rc;
}

/* One iteration: the references first, then every path against them, with its rows. */
static int iterate(vrun *r, refs *f, dbtr_mlem *m, size_t it, int quiet) {
  int rc;
  for (int p = 0; p < 2; p++) {
    if (!r->have_ref[p]) continue;
    size_t es = p ? sizeof(double) : sizeof(float);
    memcpy(f->prev[p], f->vol[p], m->n_vox * es);
    if ((rc = dbtr_mlem_iterate(m, f->b[p], &r->ref_dev[p][it])) || (rc = f->b[p]->get_volume(f->b[p], f->vol[p])) ||
        (rc = f->b[p]->get_projections(f->b[p], f->proj[p])))
      return rc;
  }
  for (size_t i = 0; i < r->n_paths; i++) {
    vpath *p = &r->paths[i];
    if ((rc = step_path(r, p, f, m, it))) return rc;
    if (!quiet) {
      char label[64];
      snprintf(label, sizeof label, "%s (%s)", p->name, p->ref ? "cpu-double" : "cpu-float");
      print_row(it + 1, label, "proj", &p->proj[it], p->deviance[it]);
      print_row(it + 1, "", "vol", &p->vol[it], p->deviance[it]);
    }
  }
  return 0;
}

/* The problem in one line, then the table's column heads. */
static void print_header(const vrun *r, const dbtr_scan *scan, const dbtr_grid *grid, dbtr_algo algo,
                         const char *gpu_name) {
  printf("dbtr validate: %s, %zu views of %zu x %zu, volume %zu x %zu x %zu, %s ML-EM, %zu subset%s, %s%s%s\n",
         r->scan, scan->geom.n_views, scan->geom.n_cols, scan->geom.n_rows, grid->nx, grid->ny, grid->nz,
         algo == DBTR_ALGO_TRANSMISSION ? "transmission" : "emission", r->subsets, r->subsets == 1 ? "" : "s",
         r->lockstep ? "lockstep" : "free-running", gpu_name ? ", GPU: " : ", no GPU", gpu_name ? gpu_name : "");
  printf("%4s  %-30s %-5s %10s %9s %11s %11s %10s %7s %10s %8s %14s\n", "iter", "path (vs reference)", "what", "differ",
         "%", "max|d|", "mean|d|", "max ulp", "med ulp", "rel L2", "u16", "deviance");
}

static void release(vrun *r, refs *f) {
  for (size_t i = 0; i < r->n_paths; i++) {
    dbtr_backend_destroy(&r->paths[i].b);
    free(r->paths[i].proj);
    free(r->paths[i].vol);
    free(r->paths[i].deviance);
  }
  free(r->paths);
  for (int p = 0; p < 2; p++) {
    dbtr_backend_destroy(&f->b[p]);
    free(f->vol[p]);
    free(f->prev[p]);
    free(f->proj[p]);
    free(r->ref_dev[p]);
  }
  free(f->pv);
  free(f->pp);
  free(f->rv);
  free(f->rp);
}

int dbtr_cmd_validate(int argc, char **argv) {
  const char *cmd = "validate", *in = NULL, *modes = NULL, *expect = NULL, *report = NULL, *diffs = NULL, *pos;
  vrun r = {0};
  app_grid_opts go = {0};
  int threads = 0, explain = 0, quiet = 0;
  r.iterations = 6;
  r.subsets = 1;
  cli c;
  cli_init(&c, cmd, argc, argv);
  int k;
  while ((k = cli_next(&c, &pos))) {
    if (k == 2) {
      if (in) return cli_usage_error(cmd, "unexpected argument '%s'", pos);
      in = pos;
    } else if (cli_is(&c, "--help") || cli_is(&c, "-h")) {
      help();
      return 0;
    } else if (cli_is(&c, "--modes")) {
      cli_string(&c, &modes);
    } else if (cli_is(&c, "--iterations")) {
      cli_size(&c, &r.iterations, 1, 10000);
    } else if (cli_is(&c, "--subsets")) {
      cli_size(&c, &r.subsets, 1, 100000);
    } else if (cli_is(&c, "--lockstep")) {
      r.lockstep = 1;
    } else if (cli_is(&c, "--explain")) {
      explain = 1;
    } else if (cli_is(&c, "--expect-identical")) {
      cli_string(&c, &expect);
    } else if (cli_is(&c, "--report")) {
      cli_string(&c, &report);
    } else if (cli_is(&c, "--save-diffs")) {
      cli_string(&c, &diffs);
    } else if (cli_is(&c, "--threads")) {
      cli_int(&c, &threads, 0, 4096);
    } else if (cli_is(&c, "--quiet")) {
      quiet = 1;
    } else if (!app_grid_option(&c, &go)) {
      return cli_unknown(&c);
    }
  }
  if (c.error) return c.error;
  if (!in) return cli_usage_error(cmd, "no scan file given (dbtr validate SCAN.h5)");
  char gpu_name[256];
  int gpu = dbtr_gpu_available(gpu_name, sizeof gpu_name);
  if (!modes) modes = gpu ? "fast,ieee,cpu-match,double,double-match" : "cpu-1-thread,cpu-float";
  r.scan = in;
  int ex = parse_modes(cmd, &r, modes, gpu, threads, explain, quiet);
  if (ex) return ex;

  dbtr_scan scan;
  int rc = cli_read_scan(cmd, &scan, in);
  if (rc) return cli_fail(cmd, rc);
  dbtr_grid grid;
  double *i0 = NULL, *y = NULL;
  dbtr_mlem m = {0};
  refs f = {0};
  if ((ex = app_grid_resolve(cmd, in, &scan, &go, &grid))) goto done;
  dbtr_algo algo = scan.quantity == DBTR_QUANTITY_COUNTS ? DBTR_ALGO_TRANSMISSION : DBTR_ALGO_EMISSION;
  if ((rc = app_expand_data(&scan, algo, &y, &i0))) goto fail;
  dbtr_data data = {.geom = &scan.geom, .grid = &grid, .algo = algo, .y = y ? y : scan.proj, .i0 = i0};
  if ((rc = dbtr_mlem_init(&m, &data, r.subsets, threads))) goto fail;
  if ((rc = open_paths(&r, &f, &m))) goto fail;
  if (!quiet) print_header(&r, &scan, &grid, algo, gpu ? gpu_name : NULL);
  for (size_t it = 0; it < r.iterations; it++)
    if ((rc = iterate(&r, &f, &m, it, quiet))) goto fail;
  if (diffs && (rc = save_diffs(diffs, &r, &f, &m, &grid))) goto fail;
  printf("\nverdicts (%zu iterations, %s):\n", r.iterations, r.lockstep ? "lockstep" : "free-running");
  for (size_t i = 0; i < r.n_paths; i++) {
    char v[256];
    app_validate_verdict(&r.paths[i], v, sizeof v);
    printf("  %-24s %s\n", r.paths[i].name, v);
  }
  if (explain) print_explain(&r);
  if (report && (rc = app_validate_report(report, &r))) goto fail;
  if (expect) expect_check(&r, expect, &ex);
  goto done;
fail:
  ex = cli_fail(cmd, rc);
done:
  release(&r, &f);
  free(i0);
  free(y);
  dbtr_mlem_free(&m);
  dbtr_scan_free(&scan);
  return ex;
}
