/* recon/cpu.c: the CPU reference: the clean, minimal implementation of dbtr's projectors
 * and ML-EM updates that every GPU mode is measured against. It is compiled with
 * -ffp-contract=off and no fast-math, so each operation of recon/proj_impl.h is one IEEE
 * operation; exp is the project's correctly rounded one (recon/crmath.h), shared with the
 * GPU match modes. Parallel loops give each output element to one thread. */
#include "recon/cpu.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recon/crmath.h"
#include "recon/error.h"
#include "recon/fit.h"
#include "recon/rays.h"
#include "recon/separable_types.h"

/* The separable tables (recon/separable.h) of one precision, as the CPU holds them, in the
 * types of the precision traits in force (recon/prec_traits.h). */
#define CPU_SEP_TABLES(name) \
  typedef struct {           \
    DBTR_P_CROSS *cx, *cy;   \
    dbtr_slots *xs, *ys;     \
    DBTR_P_SLOTW *xw, *yw;   \
    int *flag;               \
  } name

/* The shared arithmetic and the separable tables' builder, in double, float (whose ray records
 * are double's) and double-double, with the CPU's operators; each precision's types are its
 * traits, which recon/cpu_arith.h includes. */
#define DBTR_FN(name) dbtr__cpu_##name##_d
#define DBTR_TRAITS_PREC double
#include "recon/cpu_arith.h"
CPU_SEP_TABLES(cpu_sep_d);
#define DBTR_T DBTR_P_T
#define DBTR_FN(name) dbtr__cpu_##name##_d
#define DBTR_FOOT DBTR_P_FOOT
#define DBTR_CROSS DBTR_P_CROSS
#define DBTR_SLOTW_T DBTR_P_SLOTW
#define DBTR_SEP_TABLES cpu_sep_d
#include "recon/separable.h"
#define DBTR_FN(name) dbtr__cpu_##name##_f
#define DBTR_TRAITS_PREC float
#define DBTR_GEOM_FN(name) dbtr__cpu_##name##_d
#include "recon/cpu_arith.h"
CPU_SEP_TABLES(cpu_sep_f);
#define DBTR_T DBTR_P_T
#define DBTR_R DBTR_P_R
#define DBTR_FN(name) dbtr__cpu_##name##_f
#define DBTR_FOOT DBTR_P_FOOT
#define DBTR_CROSS DBTR_P_CROSS
#define DBTR_SLOTW_T DBTR_P_SLOTW
#define DBTR_SEP_TABLES cpu_sep_f
#include "recon/separable.h"
#define DBTR_FN(name) dbtr__cpu_##name##_dd
#define DBTR_TRAITS_PREC dd
#include "recon/cpu_arith.h"
CPU_SEP_TABLES(cpu_sep_dd);
#define DBTR_T DBTR_P_T
#define DBTR_FN(name) dbtr__cpu_##name##_dd
#define DBTR_FOOT DBTR_P_FOOT
#define DBTR_CROSS DBTR_P_CROSS
#define DBTR_SLOTW_T DBTR_P_SLOTW
#define DBTR_SEP_TABLES cpu_sep_dd
#define DBTR_OF_INT(i) DBTR_P_OF_INT(i)
#define DBTR_EQ(a, b) DBTR_P_EQ(a, b)
#define DBTR_SAME_BITS(a, b) DBTR_P_SAME_BITS(a, b)
#include "recon/separable.h"

int dbtr_cpu_threads(int requested) {
  if (requested > 0) return requested;
  int n = omp_get_max_threads();
  return n > 0 ? n : 1;
}

/* Progress inside a subset (recon/backend.h): the subset's loops call CPU_WATCH for each
 * row they start, phase 0 in the forward projection (with the pixel terms) and 1 in the
 * gather (with the update). Only the calling thread (OpenMP's thread 0) reports: with
 * schedule(static) it takes the first 1/threads of the rows, so its place in its own share
 * stands for the loop's. It reports about 64 times a loop, each report a clock read in the
 * driver, far below the work of a row. forward is the forward phase's share of the subset's
 * time. */
static void cpu_watch(const dbtr_subset_watch *w, double forward, int phase, long long row, long long rows) {
  if (omp_get_thread_num() != 0) return;
  long long threads = omp_get_num_threads(), mine = (rows + threads - 1) / threads;
  if (row % (mine / 64 + 1)) return;
  double f = (double)row / (double)mine;
  w->fn(w->user, phase == 0 ? forward * f : forward + (1.0 - forward) * f);
}

/* A voxel and view of the gather costs about 1.5 times a ray and slice of the forward
 * projection: on the hologic preset (1664 x 2048 pixels and voxels a slice, 2 threads,
 * bench_cpu) the forward projection took 4.66 s and the back projection 7.07 s, both through
 * the separable tables. So the forward phase's share is pixels / (pixels + 1.5 x voxels a
 * slice). */
#define CPU_GATHER_COST 1.5
#define CPU_WATCH(t, phase, row, rows)                                                                   \
  cpu_watch((t)->watch,                                                                                  \
            (double)(t)->n_pix / ((double)(t)->n_pix + CPU_GATHER_COST * (double)(t)->nx * (double)(t)->ny), \
            phase, row, rows)

/* The voxels (or pixels) of a row the projectors take at a time: their sums stay in two arrays
 * on the stack, 4 KB in double, in the L1 cache. */
#define CPU_CHUNK 256

/* The CPU reference in each precision (recon/cpu_impl.h), over that precision's traits: CF
 * names the instance's functions, PF the shared arithmetic's, CSEP is its tables' type. */
#define DBTR_TRAITS_PREC float
#include "recon/prec_traits.h"
#define CF(name) cpu_f_##name
#define PF(name) dbtr__cpu_##name##_f
#define CSEP cpu_sep_f
#include "recon/cpu_impl.h"

#define DBTR_TRAITS_PREC double
#include "recon/prec_traits.h"
#define CF(name) cpu_d_##name
#define PF(name) dbtr__cpu_##name##_d
#define CSEP cpu_sep_d
#include "recon/cpu_impl.h"

#define DBTR_TRAITS_PREC dd
#include "recon/prec_traits.h"
#define CF(name) cpu_dd_##name
#define PF(name) dbtr__cpu_##name##_dd
#define CSEP cpu_sep_dd
#include "recon/cpu_impl.h"

int dbtr_cpu_backend_create(dbtr_backend **out, dbtr_precision precision, const dbtr_problem *prob) {
  int rc = precision == DBTR_PREC_FLOAT    ? cpu_f_backend_create(out, prob)
           : precision == DBTR_PREC_DOUBLE ? cpu_d_backend_create(out, prob)
                                           : cpu_dd_backend_create(out, prob);
  if (!rc) {
    (*out)->precision = precision;
    snprintf((*out)->name, sizeof (*out)->name, "cpu-%s", dbtr_precision_name(precision));
    (*out)->mode = dbtr_mode_cpu_of(precision);
  }
  return rc;
}

struct dbtr_cpu_projector {
  dbtr_precision precision;
  cpu_f_tables f;
  cpu_d_tables d;
  cpu_dd_tables dd;
};

int dbtr_cpu_projector_create(dbtr_cpu_projector **out, const dbtr_geom *geom, const dbtr_grid *grid,
                              dbtr_precision precision, int threads) {
  *out = NULL;
  /* The public projector is an entry of its own: what a caller gives is checked here. */
  int rc = dbtr_geom_check(geom, "geometry");
  if (!rc) rc = dbtr_grid_check(grid, geom, "volume grid");
  if (rc) return rc;
  *out = calloc(1, sizeof **out);
  if (!*out) return dbtr_err(DBTR_ENOMEM, "CPU projector: out of memory");
  (*out)->precision = precision;
  rc = precision == DBTR_PREC_FLOAT    ? cpu_f_tables_init(&(*out)->f, geom, grid, threads)
           : precision == DBTR_PREC_DOUBLE ? cpu_d_tables_init(&(*out)->d, geom, grid, threads)
                                           : cpu_dd_tables_init(&(*out)->dd, geom, grid, threads);
  if (rc) dbtr_cpu_projector_destroy(out);
  return rc;
}

void dbtr_cpu_projector_destroy(dbtr_cpu_projector **p) {
  if (!*p) return;
  cpu_f_tables_free(&(*p)->f);
  cpu_d_tables_free(&(*p)->d);
  cpu_dd_tables_free(&(*p)->dd);
  free(*p);
  *p = NULL;
}

int dbtr_cpu_forward(dbtr_cpu_projector *p, const void *vol, void *proj) {
  return p->precision == DBTR_PREC_FLOAT    ? cpu_f_forward_all(&p->f, vol, proj)
         : p->precision == DBTR_PREC_DOUBLE ? cpu_d_forward_all(&p->d, vol, proj)
                                            : cpu_dd_forward_all(&p->dd, vol, proj);
}

int dbtr_cpu_back(dbtr_cpu_projector *p, const void *proj, void *vol) {
  return p->precision == DBTR_PREC_FLOAT    ? cpu_f_back_all(&p->f, proj, vol)
         : p->precision == DBTR_PREC_DOUBLE ? cpu_d_back_all(&p->d, proj, vol)
                                            : cpu_dd_back_all(&p->dd, proj, vol);
}

int dbtr_cpu_projector_reached(const dbtr_cpu_projector *p, unsigned char *mask) {
  if (p->precision == DBTR_PREC_FLOAT) return p->f.sep ? cpu_f_reached_sep(&p->f, mask) : 1;
  if (p->precision == DBTR_PREC_DOUBLE) return p->d.sep ? cpu_d_reached_sep(&p->d, mask) : 1;
  return p->dd.sep ? cpu_dd_reached_sep(&p->dd, mask) : 1;
}

/* 1 where every view's footprints pass sep_feet (in double): the CPU backend then makes its
 * ray records one view at a time (recon/cpu_impl.h, sep_init). */
static int feet_separable(const dbtr_geom *g, const dbtr_grid *grid) {
  int flag = 0;
  for (size_t k = 0; k < g->n_views && !flag; k++)
    for (size_t z = 0; z < grid->nz && !flag; z++) {
      dbtr_footprint_d fd;
      dbtr_footprint_reduce(g, grid, k, z, &fd);
      dbtr__cpu_sep_feet_d(&fd, 1, 1, &flag);
    }
  return !flag;
}

double dbtr_cpu_backend_bytes(dbtr_precision p, const dbtr_geom *g, const dbtr_grid *grid) {
  double n_proj = (double)g->n_views * (double)g->n_rows * (double)g->n_cols;
  double n_vox = (double)grid->nx * (double)grid->ny * (double)grid->nz;
  /* Beside the projector's tables: y, i0, the projection and the two pixel terms per pixel,
   * and the volume. */
  return (double)dbtr_precision_size(p) * (5.0 * n_proj + n_vox) + dbtr_cpu_projector_bytes(p, g, grid, 1);
}

double dbtr_cpu_projector_bytes(dbtr_precision p, const dbtr_geom *g, const dbtr_grid *grid, int grid_known) {
  double n_proj = (double)g->n_views * (double)g->n_rows * (double)g->n_cols;
  double vz = (double)g->n_views * (double)grid->nz;
  int f = p == DBTR_PREC_FLOAT, d = p == DBTR_PREC_DOUBLE;
  double cross = (double)(f ? sizeof(dbtr_cross_f) : d ? sizeof(dbtr_cross_d) : sizeof(dbtr_cross_dd));
  double slots =
      (double)(sizeof(dbtr_slots) + (f ? sizeof(dbtr_slotw_f) : d ? sizeof(dbtr_slotw_d) : sizeof(dbtr_slotw_dd)));
  double sep = vz * (((double)g->n_rows + (double)g->n_cols) * cross + ((double)grid->nx + (double)grid->ny) * slots);
  /* Per pixel: the path length; and a ray record of 4 (in double for float), of every pixel
   * where the views are not separable, else of one view's at a time through the set-up. */
  double record = 4.0 * (double)dbtr_precision_size(f ? DBTR_PREC_DOUBLE : p);
  double records = grid_known && feet_separable(g, grid) ? (double)g->n_rows * (double)g->n_cols : n_proj;
  return (double)dbtr_precision_size(p) * n_proj + record * records + sep;
}
