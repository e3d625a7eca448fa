/* tests/test_gpu_projector.c: the engine's projector (include/dbtr.h, dbtr_projector_*) in every
 * GPU mode (label gpu; exit 77, SKIP, where no GPU is found; built with CUDA only, since it
 * hands the projector device memory of its own).
 *
 * In every mode: the device path (the caller's device arrays, read and written in place) gives
 * the host path's bits; a budget of one view's ray records at a time gives the unbatched bits;
 * the pair is adjoint within the mode's rounding bound; and the match modes (and dd) give their
 * CPU class's bits, forward and back, and so FBP's (engine/fbp.h), which runs through them, and
 * back projecting infinite and NaN pixel values too. */
#include <cuda_runtime_api.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "engine/backends.h"
#include "engine/fbp.h"
#include "kernels/gpu.h"
#include "recon/cpu.h"
#include "recon/mlem.h"
#include "tests/problems.h"
#include "tests/test.h"

typedef struct {
  size_t nv, np, es;
  void *x, *y;  /* inputs, rounded to the mode's type */
  double *xd, *yd;
} inputs;

static void inputs_make(inputs *in, dbtr_precision prec, size_t nv, size_t np) {
  in->nv = nv;
  in->np = np;
  in->es = dbtr_precision_size(prec);
  in->x = malloc(nv * in->es);
  in->y = malloc(np * in->es);
  in->xd = malloc(nv * sizeof(double));
  in->yd = malloc(np * sizeof(double));
  REQUIRE(in->x && in->y && in->xd && in->yd);
  test_rng_state = 11;
  for (size_t j = 0; j < nv; j++) in->xd[j] = test_rnd();
  for (size_t j = 0; j < np; j++) in->yd[j] = test_rnd();
  dbtr_convert_from_double(prec, in->xd, nv, in->x);
  dbtr_convert_from_double(prec, in->yd, np, in->y);
  /* The inner products below use the rounded inputs. */
  dbtr_convert_to_double(prec, in->x, nv, in->xd);
  dbtr_convert_to_double(prec, in->y, np, in->yd);
}

static void inputs_free(inputs *in) {
  free(in->x);
  free(in->y);
  free(in->xd);
  free(in->yd);
}

/* A x and A^T y through the device path: the caller's own device arrays. */
static void on_device(dbtr_projector *p, const inputs *in, void *ax, void *aty) {
  void *dx, *dy, *dax, *daty;
  REQUIRE(cudaSetDevice(dbtr_projector_device(p)) == cudaSuccess);
  REQUIRE(cudaMalloc(&dx, in->nv * in->es) == cudaSuccess && cudaMalloc(&dy, in->np * in->es) == cudaSuccess &&
          cudaMalloc(&dax, in->np * in->es) == cudaSuccess && cudaMalloc(&daty, in->nv * in->es) == cudaSuccess);
  REQUIRE(cudaMemcpy(dx, in->x, in->nv * in->es, cudaMemcpyHostToDevice) == cudaSuccess);
  REQUIRE(cudaMemcpy(dy, in->y, in->np * in->es, cudaMemcpyHostToDevice) == cudaSuccess);
  CHECK_OK(dbtr_projector_forward(p, dx, dax, DBTR_MEMORY_DEVICE));
  CHECK_OK(dbtr_projector_back(p, dy, daty, DBTR_MEMORY_DEVICE));
  REQUIRE(cudaMemcpy(ax, dax, in->np * in->es, cudaMemcpyDeviceToHost) == cudaSuccess);
  REQUIRE(cudaMemcpy(aty, daty, in->nv * in->es, cudaMemcpyDeviceToHost) == cudaSuccess);
  cudaFree(dx);
  cudaFree(dy);
  cudaFree(dax);
  cudaFree(daty);
}

/* <A x, y> against <x, A^T y>: the bound of tests/test_projector.c's check_adjoint, with the
 * unit roundoff of the mode's type (double's for dd: the inner products here are summed in
 * double). */
static void check_adjoint(const char *what, const inputs *in, dbtr_precision prec, const void *ax, const void *aty,
                          const dbtr_geom *g, const dbtr_grid *grid) {
  double *axd = malloc(in->np * sizeof(double)), *atyd = malloc(in->nv * sizeof(double));
  REQUIRE(axd && atyd);
  dbtr_convert_to_double(prec, ax, in->np, axd);
  dbtr_convert_to_double(prec, aty, in->nv, atyd);
  double lhs = 0.0, rhs = 0.0;
  for (size_t i = 0; i < in->np; i++) lhs += axd[i] * in->yd[i];
  for (size_t j = 0; j < in->nv; j++) rhs += in->xd[j] * atyd[j];
  double u = prec == DBTR_PREC_FLOAT ? (double)FLT_EPSILON / 2 : DBL_EPSILON / 2;
  double m = (double)grid->nz * 5.0 + 1.0 + (double)g->n_views * 25.0 * 3.0;
  double bound = 2.0 * m * u / (1.0 - m * u), rel = fabs(lhs - rhs) / fabs(lhs);
  printf("%s: <Ax,y> = %.17g, <x,A^T y> = %.17g, relative difference %.3g (bound %.3g)\n", what, lhs, rhs, rel, bound);
  CHECK_GT(lhs, 0.0);
  CHECK_LE(rel, bound);
  free(axd);
  free(atyd);
}

static void check_modes(const char *preset) {
  TEST_NEED_GPU();
  dbtr_geom g;
  dbtr_grid grid;
  REQUIRE_OK(test_small_problem(preset, &g, &grid));
  size_t nv = grid.nx * grid.ny * grid.nz, np = g.n_views * g.n_rows * g.n_cols;
  for (size_t i = 0; dbtr_mode_at(i); i++) {
    const dbtr_mode_info *info = dbtr_mode_at(i);
    if (!info->gpu || info->variant) continue;
    char what[128];
    snprintf(what, sizeof what, "%s, %s", preset, info->name);
    dbtr_projector_opts o = {.backend = {.backend = "gpu", .mode = info->name}};
    dbtr_projector *p = NULL;
    REQUIRE_OK(dbtr_projector_open(&p, &g, &grid, &o));
    CHECK_EQ_INT(dbtr_projector_device(p), 0);
    dbtr_precision prec = dbtr_projector_precision(p);
    inputs in;
    inputs_make(&in, prec, nv, np);
    void *ax = malloc(np * in.es), *aty = malloc(nv * in.es), *dax = malloc(np * in.es), *daty = malloc(nv * in.es);
    REQUIRE(ax && aty && dax && daty);
    CHECK_OK(dbtr_projector_forward(p, in.x, ax, DBTR_MEMORY_HOST));
    CHECK_OK(dbtr_projector_back(p, in.y, aty, DBTR_MEMORY_HOST));
    on_device(p, &in, dax, daty);
    if (memcmp(ax, dax, np * in.es) || memcmp(aty, daty, nv * in.es))
      TEST__FAIL("%s: the device path differs from the host path", what);
    check_adjoint(what, &in, prec, ax, aty, &g, &grid);
    /* One view's ray records at a time: the same bits. */
    dbtr_gpu_memory mem;
    size_t views[64], start[2] = {0, g.n_views};
    for (size_t k = 0; k < g.n_views; k++) views[k] = k;
    dbtr_problem prob = {.geom = &g, .grid = &grid, .n_subsets = 1, .subset_views = views, .subset_start = start,
                         .projector = 1};
    dbtr_mode m;
    REQUIRE_OK(dbtr_mode_parse(info->name, DBTR_ROWS_MODES, &m));
    dbtr_backend *b = NULL;
    REQUIRE_OK(dbtr_backend_create(&b, m, &prob));
    REQUIRE_OK(dbtr_gpu_memory_of(b, &mem));
    dbtr_backend_destroy(&b);
    prob.gpu_memory = mem.need_min;
    REQUIRE_OK(dbtr_backend_create(&b, m, &prob));
    REQUIRE_OK(dbtr_gpu_memory_of(b, &mem));
    CHECK_EQ_U64(mem.batch, 1);
    CHECK_OK(b->project(b, 0, in.x, dax, 0));
    CHECK_OK(b->project(b, 1, in.y, daty, 0));
    if (memcmp(ax, dax, np * in.es) || memcmp(aty, daty, nv * in.es))
      TEST__FAIL("%s: one view at a time differs from every view at once", what);
    dbtr_backend_destroy(&b);
    /* A match mode (and dd) gives its CPU class's bits. */
    if (info->bitwise_class) {
      dbtr_cpu_projector *ref = NULL;
      REQUIRE_OK(dbtr_cpu_projector_create(&ref, &g, &grid, prec, 0));
      CHECK_OK(dbtr_cpu_forward(ref, in.x, dax));
      CHECK_OK(dbtr_cpu_back(ref, in.y, daty));
      if (memcmp(ax, dax, np * in.es)) TEST__FAIL("%s: the forward projection differs from %s", what, info->bitwise_class);
      if (memcmp(aty, daty, nv * in.es)) TEST__FAIL("%s: the back projection differs from %s", what, info->bitwise_class);
      dbtr_cpu_projector_destroy(&ref);
    }
    free(ax);
    free(aty);
    free(dax);
    free(daty);
    inputs_free(&in);
    dbtr_projector_close(&p);
  }
  dbtr_geom_free(&g);
}

DBTR_TEST(modes_tiny) { check_modes("tiny"); }
DBTR_TEST(modes_hologic) { check_modes("hologic"); }
DBTR_TEST(modes_thesis) { check_modes("thesis"); }

/* FBP on the GPU: the host's filter, then the projector's A^T in the mode, so the match modes (and
 * dd) give their CPU class's FBP volume bit for bit. The other modes' distance from the CPU in
 * their precision is printed (their back projections round differently; docs/fbp.md). */
DBTR_TEST(fbp_match) {
  TEST_NEED_GPU();
  dbtr_scan scan = {.quantity = DBTR_QUANTITY_LINE_INTEGRAL};
  dbtr_grid grid;
  REQUIRE_OK(test_small_problem("hologic", &scan.geom, &grid));
  size_t nv = grid.nx * grid.ny * grid.nz, np = scan.geom.n_views * scan.geom.n_rows * scan.geom.n_cols;
  double *y = malloc(np * sizeof *y), *gv = malloc(nv * sizeof *gv), *cv = malloc(nv * sizeof *cv);
  REQUIRE(y && gv && cv);
  test_rng_state = 5;
  for (size_t i = 0; i < np; i++) y[i] = 2.0 * test_rnd();
  scan.proj = y;
  dbtr_fbp_opts fo = {.cutoff = 0.8, .slice = 0.5};
  for (size_t i = 0; dbtr_mode_at(i); i++) {
    const dbtr_mode_info *info = dbtr_mode_at(i);
    if (!info->gpu || info->variant) continue;
    dbtr_backend_opts g = {.backend = "gpu", .mode = info->name};
    dbtr_backend_opts c = {.backend = "cpu", .precision = dbtr_precision_name(info->precision)};
    REQUIRE_OK(dbtr_fbp_volume(&scan, &grid, &g, &fo, 0, gv, NULL));
    REQUIRE_OK(dbtr_fbp_volume(&scan, &grid, &c, &fo, 0, cv, NULL));
    double d2 = 0.0, r2 = 0.0;
    for (size_t j = 0; j < nv; j++) {
      d2 += (gv[j] - cv[j]) * (gv[j] - cv[j]);
      r2 += cv[j] * cv[j];
    }
    printf("hologic FBP, %s against cpu-%s: relative L2 %.3g%s\n", info->name, c.precision, sqrt(d2 / r2),
           info->bitwise_class ? " (bitwise promised)" : "");
    CHECK_GT(r2, 0.0);
    if (info->bitwise_class && memcmp(gv, cv, nv * sizeof *gv))
      TEST__FAIL("hologic FBP, %s: differs from %s", info->name, info->bitwise_class);
  }
  free(y);
  free(gv);
  free(cv);
  dbtr_geom_free(&scan.geom);
}

/* Pixel values that are infinite or NaN, in view 0: the separable gather makes again, with the
 * test of each product's weight, the sums of its threads whose sums are not finite
 * (kernels/separable.h, sums_finite), and the match modes (and dd) still give their CPU class's
 * back projection: the same bits in every voxel that is not NaN, and NaN where the CPU's is (a
 * GPU's NaN has bits of its own). */
DBTR_TEST(back_not_finite) {
  TEST_NEED_GPU();
  dbtr_geom g;
  dbtr_grid grid;
  REQUIRE_OK(test_small_problem("hologic", &g, &grid));
  size_t nv = grid.nx * grid.ny * grid.nz, np = g.n_views * g.n_rows * g.n_cols, npix = g.n_rows * g.n_cols;
  double *yd = malloc(np * sizeof *yd), *gd = malloc(nv * sizeof *gd), *cd = malloc(nv * sizeof *cd);
  REQUIRE(yd && gd && cd);
  test_rng_state = 13;
  /* One pixel of 211 in view 0 infinite, another NaN (211 and 100: no pattern of the detector's
   * rows or columns): a few voxels take them with a nonzero weight, more read them at weight 0. */
  for (size_t i = 0; i < np; i++) {
    yd[i] = test_rnd() - 0.5;
    if (i < npix && i % 211 == 0) yd[i] = INFINITY;
    if (i < npix && i % 211 == 100) yd[i] = NAN;
  }
  for (size_t i = 0; dbtr_mode_at(i); i++) {
    const dbtr_mode_info *info = dbtr_mode_at(i);
    if (!info->gpu || info->variant || !info->bitwise_class) continue;
    dbtr_projector_opts o = {.backend = {.backend = "gpu", .mode = info->name}};
    dbtr_projector *p = NULL;
    REQUIRE_OK(dbtr_projector_open(&p, &g, &grid, &o));
    dbtr_precision prec = dbtr_projector_precision(p);
    size_t es = dbtr_precision_size(prec);
    unsigned char *y = malloc(np * es), *gv = malloc(nv * es), *cv = malloc(nv * es);
    REQUIRE(y && gv && cv);
    dbtr_convert_from_double(prec, yd, np, y);
    CHECK_OK(dbtr_projector_back(p, y, gv, DBTR_MEMORY_HOST));
    dbtr_cpu_projector *ref = NULL;
    REQUIRE_OK(dbtr_cpu_projector_create(&ref, &g, &grid, prec, 0));
    CHECK_OK(dbtr_cpu_back(ref, y, cv));
    dbtr_cpu_projector_destroy(&ref);
    dbtr_convert_to_double(prec, gv, nv, gd);
    dbtr_convert_to_double(prec, cv, nv, cd);
    size_t nan = 0, inf = 0, differ = 0;
    for (size_t j = 0; j < nv; j++) {
      if (isnan(cd[j]) || isnan(gd[j])) {
        nan++;
        differ += !(isnan(cd[j]) && isnan(gd[j]));
        continue;
      }
      inf += isinf(cd[j]) != 0;
      differ += memcmp(gv + j * es, cv + j * es, es) != 0;
    }
    printf("hologic, %s: back projection of infinite and NaN pixels: %zu voxels NaN, %zu infinite, %zu finite; "
           "%zu differ from %s\n",
           info->name, nan, inf, nv - nan - inf, differ, info->bitwise_class);
    CHECK_EQ_U64(differ, 0);
    /* The planted values reach some voxels, and most voxels stay finite, so that the bitwise
     * comparison above covers the threads that kept their first sums as well as those made
     * again (a half: the planted pixels are 1 in 211 of one view of 15). */
    CHECK_GT(nan + inf, 0);
    CHECK_GT(nv - nan - inf, nv / 2);
    free(y);
    free(gv);
    free(cv);
    dbtr_projector_close(&p);
  }
  free(yd);
  free(gd);
  free(cd);
  dbtr_geom_free(&g);
}

DBTR_TEST_MAIN(modes_tiny, modes_hologic, modes_thesis, fbp_match, back_not_finite)
