/* tests/test_gpu_device_data.c: ML-EM of data that lie in a GPU's memory
 * (dbtr_recon_open_device, include/dbtr.h; label gpu; exit 77, SKIP, where no GPU is found;
 * built with CUDA only, since it hands the library device memory of its own).
 *
 * The promise: every iteration's deviance and the volume are those dbtr_recon_open gives of the
 * same values in host memory, bit for bit, in every GPU mode; for every i0 shape, float and
 * double arrays, and each way the data enter (transmission counts, emission line integrals,
 * emission from counts). Bad values get the host route's message, word for word. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/gpu.h"
#include "recon/mlem.h"
#include "tests/problems.h"
#include "tests/test.h"

enum { ITERATIONS = 2 };

/* A problem with its data in host memory, as doubles, and the same values on the device. */
typedef struct {
  dbtr_scan host;        /* the host route's scan */
  dbtr_scan dev;         /* the device route's: geometry, quantity and i0 shape alone */
  dbtr_device_data data; /* the device arrays */
  dbtr_grid grid;
  size_t np, ni;
} problem;

/* Counts (with i0 of shape, Poisson-like, a tenth of them at zero to reach the floor) or line
 * integrals, of type on the device; the host gets the values the device holds, widened. */
static void problem_make(problem *p, const char *preset, dbtr_quantity q, dbtr_i0_shape shape, dbtr_precision type) {
  memset(p, 0, sizeof *p);
  REQUIRE_OK(test_small_problem(preset, &p->host.geom, &p->grid));
  const dbtr_geom *g = &p->host.geom;
  p->np = g->n_views * g->n_rows * g->n_cols;
  p->host.quantity = q;
  p->host.i0_shape = q == DBTR_QUANTITY_COUNTS ? shape : DBTR_I0_NONE;
  p->ni = dbtr_scan_i0_count(&p->host);
  p->host.proj = malloc(p->np * sizeof(double));
  p->host.i0 = p->ni ? malloc(p->ni * sizeof(double)) : NULL;
  REQUIRE(p->host.proj && (!p->ni || p->host.i0));
  test_rng_state = 23;
  for (size_t i = 0; i < p->ni; i++) p->host.i0[i] = 800.0 + 400.0 * test_rnd();
  for (size_t i = 0; i < p->np; i++) {
    double u = test_rnd();
    p->host.proj[i] = q == DBTR_QUANTITY_COUNTS ? (u < 0.1 ? 0.0 : floor(900.0 * u)) : 2.0 * u;
  }
  size_t es = type == DBTR_PREC_FLOAT ? sizeof(float) : sizeof(double);
  /* Rounded to the device's type first, so that both routes see the same values. */
  void *tmp = malloc((p->np > p->ni ? p->np : p->ni) * es);
  REQUIRE(tmp);
  p->dev = p->host;
  p->dev.proj = NULL;
  p->dev.i0 = NULL;
  p->data = (dbtr_device_data){.proj_type = type, .i0_type = type, .device = 0};
  void *dproj = NULL, *di0 = NULL;
  REQUIRE(cudaSetDevice(0) == cudaSuccess && cudaMalloc(&dproj, p->np * es) == cudaSuccess);
  for (int a = 0; a < 2; a++) {
    double *v = a ? p->host.i0 : p->host.proj;
    size_t n = a ? p->ni : p->np;
    if (!n) continue;
    for (size_t i = 0; i < n; i++) {
      if (type == DBTR_PREC_FLOAT) {
        ((float *)tmp)[i] = (float)v[i];
        v[i] = (double)((float *)tmp)[i];
      } else {
        ((double *)tmp)[i] = v[i];
      }
    }
    void **dst = a ? &di0 : &dproj;
    if (a) REQUIRE(cudaMalloc(&di0, n * es) == cudaSuccess);
    REQUIRE(cudaMemcpy(*dst, tmp, n * es, cudaMemcpyHostToDevice) == cudaSuccess);
  }
  p->data.proj = dproj;
  p->data.i0 = di0;
  free(tmp);
}

static void problem_free(problem *p) {
  cudaFree((void *)p->data.proj);
  cudaFree((void *)p->data.i0);
  free(p->host.proj);
  free(p->host.i0);
  dbtr_geom_free(&p->host.geom);
}

/* Both routes, ITERATIONS iterations: each deviance and the volume, bit for bit. */
static void check_same(const char *what, problem *p, const dbtr_recon_opts *o) {
  dbtr_recon *h = NULL, *d = NULL;
  REQUIRE_OK(dbtr_recon_open(&h, &p->host, &p->grid, o));
  REQUIRE_OK(dbtr_recon_open_device(&d, &p->dev, &p->data, &p->grid, o));
  CHECK_STR_CONTAINS(dbtr_recon_backend(d), "gpu:");
  CHECK_EQ_INT(dbtr_recon_precision(d), dbtr_recon_precision(h));
  for (int it = 1; it <= ITERATIONS; it++) {
    double dh = 0.0, dd = 0.0;
    CHECK_OK(dbtr_recon_iterate(h, &dh));
    CHECK_OK(dbtr_recon_iterate(d, &dd));
    if (memcmp(&dh, &dd, sizeof dh)) TEST__FAIL("%s: iteration %d's deviance %.17g on the device, %.17g from the host", what, it, dd, dh);
  }
  size_t nv = p->grid.nx * p->grid.ny * p->grid.nz, bytes = nv * dbtr_precision_size(dbtr_recon_precision(h));
  void *vh = malloc(bytes), *vd = malloc(bytes), *dev = NULL;
  REQUIRE(vh && vd && cudaMalloc(&dev, bytes) == cudaSuccess);
  CHECK_OK(dbtr_recon_volume(h, vh));
  CHECK_OK(dbtr_recon_volume_device(d, dev));
  REQUIRE(cudaMemcpy(vd, dev, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
  if (memcmp(vh, vd, bytes)) TEST__FAIL("%s: the volume on the device differs from the host route's", what);
  /* A host route's handle has no volume on a device. */
  CHECK_EQ_INT(dbtr_recon_volume_device(h, dev), DBTR_EINVAL);
  printf("%s: %d iterations bitwise as from the host (%s)\n", what, ITERATIONS, dbtr_recon_backend(d));
  cudaFree(dev);
  free(vh);
  free(vd);
  dbtr_recon_close(&h);
  dbtr_recon_close(&d);
}

/* Every GPU mode, transmission counts with a full i0, in double. */
DBTR_TEST(every_mode) {
  TEST_NEED_GPU();
  problem p;
  problem_make(&p, "tiny", DBTR_QUANTITY_COUNTS, DBTR_I0_FULL, DBTR_PREC_DOUBLE);
  for (size_t i = 0; dbtr_mode_at(i); i++) {
    const dbtr_mode_info *info = dbtr_mode_at(i);
    if (!info->gpu || info->variant) continue;
    dbtr_recon_opts o = {.backend = {.backend = "gpu", .mode = info->name}};
    check_same(info->name, &p, &o);
  }
  problem_free(&p);
}

/* In cpu-match and double: each i0 shape, float arrays, and the three ways data enter, with
 * ordered subsets and a given start value too. */
DBTR_TEST(shapes_types_kinds) {
  TEST_NEED_GPU();
  static const char *modes[] = {"cpu-match", "double"};
  static const dbtr_i0_shape shapes[] = {DBTR_I0_SCALAR, DBTR_I0_PER_VIEW, DBTR_I0_PER_PIXEL, DBTR_I0_FULL};
  for (int m = 0; m < 2; m++) {
    for (int t = 0; t < 2; t++) {
      dbtr_precision type = t ? DBTR_PREC_DOUBLE : DBTR_PREC_FLOAT;
      for (int s = 0; s < 4; s++) {
        problem p;
        problem_make(&p, "hologic", DBTR_QUANTITY_COUNTS, shapes[s], type);
        char what[128];
        snprintf(what, sizeof what, "%s, %s counts, i0 shape %d", modes[m], t ? "double" : "float", (int)shapes[s]);
        dbtr_recon_opts o = {.backend = {.backend = "auto", .mode = modes[m]}, .subsets = 3};
        check_same(what, &p, &o);
        snprintf(what, sizeof what, "%s, %s counts as emission, i0 shape %d", modes[m], t ? "double" : "float",
                 (int)shapes[s]);
        o.algorithm = "emission";
        o.init = 0.01;
        check_same(what, &p, &o);
        problem_free(&p);
      }
      problem p;
      problem_make(&p, "hologic", DBTR_QUANTITY_LINE_INTEGRAL, DBTR_I0_NONE, type);
      dbtr_recon_opts o = {.backend = {.backend = "gpu", .mode = modes[m]}};
      char what[128];
      snprintf(what, sizeof what, "%s, %s line integrals", modes[m], t ? "double" : "float");
      check_same(what, &p, &o);
      problem_free(&p);
    }
  }
}

/* The host route's message for a bad value, word for word: a NaN and a negative count in the
 * projections, a zero and an infinite i0, one at a time. */
DBTR_TEST(bad_values_same_message) {
  TEST_NEED_GPU();
  problem p;
  problem_make(&p, "tiny", DBTR_QUANTITY_COUNTS, DBTR_I0_FULL, DBTR_PREC_DOUBLE);
  struct {
    int i0;
    size_t at;
    double value;
  } bad[] = {{0, 9000, NAN}, {0, 4097, -2.0}, {1, 77, 0.0}, {1, 13000, INFINITY}};
  for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
    double *h = bad[c].i0 ? p.host.i0 : p.host.proj;
    double keep = h[bad[c].at];
    h[bad[c].at] = bad[c].value;
    double *d = (double *)(bad[c].i0 ? p.data.i0 : p.data.proj) + bad[c].at;
    REQUIRE(cudaMemcpy(d, &bad[c].value, sizeof(double), cudaMemcpyHostToDevice) == cudaSuccess);
    dbtr_recon *r = NULL;
    dbtr_recon_opts o = {.backend = {.backend = "gpu"}};
    CHECK_EQ_INT(dbtr_recon_open(&r, &p.host, &p.grid, &o), DBTR_EINVAL);
    char want[1024];
    snprintf(want, sizeof want, "%s", dbtr_errmsg());
    CHECK_EQ_INT(dbtr_recon_open_device(&r, &p.dev, &p.data, &p.grid, &o), DBTR_EINVAL);
    if (strcmp(want, dbtr_errmsg())) TEST__FAIL("device: \"%s\", host: \"%s\"", dbtr_errmsg(), want);
    printf("refused alike: %s\n", want);
    h[bad[c].at] = keep;
    REQUIRE(cudaMemcpy(d, &keep, sizeof(double), cudaMemcpyHostToDevice) == cudaSuccess);
  }
  problem_free(&p);
}

/* What device data cannot do is refused with the reason before any work: host memory given as
 * device memory, the CPU backend, several GPUs, FBP, and the data given twice. */
DBTR_TEST(refusals) {
  TEST_NEED_GPU();
  problem p;
  problem_make(&p, "tiny", DBTR_QUANTITY_COUNTS, DBTR_I0_SCALAR, DBTR_PREC_DOUBLE);
  dbtr_recon *r = NULL;
  dbtr_recon_opts o = {.backend = {.backend = "gpu"}};
  dbtr_device_data host = p.data;
  host.proj = p.host.proj;
  CHECK_EQ_INT(dbtr_recon_open_device(&r, &p.dev, &host, &p.grid, &o), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "projections: not in the memory of a GPU");
  dbtr_recon_opts cpu = {.backend = {.backend = "cpu"}};
  CHECK_EQ_INT(dbtr_recon_open_device(&r, &p.dev, &p.data, &p.grid, &cpu), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "backend cpu");
  dbtr_recon_opts two = {.backend = {.backend = "gpu", .gpus = 2}};
  CHECK_EQ_INT(dbtr_recon_open_device(&r, &p.dev, &p.data, &p.grid, &two), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "gpus 2");
  dbtr_recon_opts fbp = {.backend = {.backend = "gpu"}, .algorithm = "fbp"};
  CHECK_EQ_INT(dbtr_recon_open_device(&r, &p.dev, &p.data, &p.grid, &fbp), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "algorithm fbp");
  dbtr_recon_opts start = {.backend = {.backend = "gpu"}, .start = "fbp"};
  CHECK_EQ_INT(dbtr_recon_open_device(&r, &p.dev, &p.data, &p.grid, &start), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "start fbp");
  CHECK_EQ_INT(dbtr_recon_open_device(&r, &p.host, &p.data, &p.grid, &o), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "given twice");
  CHECK(r == NULL);
  problem_free(&p);
}
DBTR_TEST_MAIN(every_mode, shapes_types_kinds, bad_values_same_message, refusals)
