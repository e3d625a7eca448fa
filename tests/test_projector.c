/* tests/test_projector.c: the CPU reference projectors (recon/cpu.c, recon/proj_impl.h). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "phantoms/systems.h"
#include "recon/cpu.h"
#include "recon/error.h"
#include "recon/mlem.h"
#include "tests/problems.h"
#include "tests/rng.h"
#include "tests/test.h"

/* The shared arithmetic instantiated here with the CPU reference's operators, to test its
 * helpers directly. */
#define DBTR_FN(name) t_##name##_d
#define DBTR_TRAITS_PREC double
#include "recon/cpu_arith.h"
#define DBTR_FN(name) t_##name##_f
#define DBTR_TRAITS_PREC float
#define DBTR_GEOM_FN(name) t_##name##_d
#include "recon/cpu_arith.h"

/* <Ax, y> against <x, A^T y> for random non-negative x and y. Both sides sum the same
 * products a_ij x_j y_i, each formed with a few roundings, in different orders. With
 * recursive summation each side is within gamma_m = m u / (1 - m u) of the exact value,
 * relative to sum |a_ij x_j y_i| (= the exact value here, all terms being >= 0), where m
 * bounds the operations along any one term's path: a ray sum has nz slices of 4 corner
 * products (5 operations each) and one multiply by the length; a voxel gather has at
 * most 25 candidate pixels per view (the 2 x 2 voxel support magnified by at most 1.2,
 * over pixels 1.5 mm / 1.6 mm = 0.94 voxel wide, spans under 3 pixels each way plus the
 * margin: 5 x 5) with 3 operations each. The two sides differ by at most twice that. */
static void check_adjoint(const char *preset, dbtr_precision prec, double rotate_deg) {
  dbtr_geom g;
  dbtr_grid grid;
  REQUIRE_OK(test_small_problem(preset, &g, &grid));
  test_rotate_detector(&g, rotate_deg);
  dbtr_cpu_projector *p = NULL;
  REQUIRE_OK(dbtr_cpu_projector_create(&p, &g, &grid, prec, 2));
  size_t nv = grid.nx * grid.ny * grid.nz, np = g.n_views * g.n_rows * g.n_cols;
  size_t es = dbtr_precision_size(prec);
  void *x = malloc(nv * es), *atx = malloc(nv * es), *y = malloc(np * es), *ax = malloc(np * es);
  double *xd = malloc(nv * sizeof(double)), *yd = malloc(np * sizeof(double));
  double *axd = malloc(np * sizeof(double)), *atyd = malloc(nv * sizeof(double));
  REQUIRE(x && atx && y && ax && xd && yd && axd && atyd);
  test_rng_state = 42;
  for (size_t i = 0; i < nv; i++) xd[i] = test_rnd();
  for (size_t i = 0; i < np; i++) yd[i] = test_rnd();
  dbtr_convert_from_double(prec, xd, nv, x);
  dbtr_convert_from_double(prec, yd, np, y);
  /* The inner products use the rounded inputs, so both sides see the same x and y. */
  dbtr_convert_to_double(prec, x, nv, xd);
  dbtr_convert_to_double(prec, y, np, yd);
  CHECK_OK(dbtr_cpu_forward(p, x, ax));
  CHECK_OK(dbtr_cpu_back(p, y, atx));
  dbtr_convert_to_double(prec, ax, np, axd);
  dbtr_convert_to_double(prec, atx, nv, atyd);
  double lhs = 0.0, rhs = 0.0;
  for (size_t i = 0; i < np; i++) lhs += axd[i] * yd[i];
  for (size_t j = 0; j < nv; j++) rhs += xd[j] * atyd[j];
  double u = prec == DBTR_PREC_FLOAT ? (double)FLT_EPSILON / 2 : DBL_EPSILON / 2;
  double m = (double)grid.nz * 5.0 + 1.0 + (double)g.n_views * 25.0 * 3.0;
  double bound = 2.0 * m * u / (1.0 - m * u);
  double rel = fabs(lhs - rhs) / fabs(lhs);
  printf("%s %s: <Ax,y> = %.17g, <x,A^T y> = %.17g, relative difference %.3g (bound %.3g)\n", preset,
         prec == DBTR_PREC_FLOAT ? "float" : "double", lhs, rhs, rel, bound);
  CHECK_GT(lhs, 0.0); /* the rays do cross the grid */
  CHECK_LE(rel, bound);
  free(x);
  free(atx);
  free(y);
  free(ax);
  free(xd);
  free(yd);
  free(axd);
  free(atyd);
  dbtr_cpu_projector_destroy(&p);
  dbtr_geom_free(&g);
}

DBTR_TEST(adjoint_tiny) {
  check_adjoint("tiny", DBTR_PREC_FLOAT, 0.0);
  check_adjoint("tiny", DBTR_PREC_DOUBLE, 0.0);
}
DBTR_TEST(adjoint_hologic) {
  check_adjoint("hologic", DBTR_PREC_FLOAT, 0.0);
  check_adjoint("hologic", DBTR_PREC_DOUBLE, 0.0);
}
DBTR_TEST(adjoint_siemens) {
  check_adjoint("siemens", DBTR_PREC_FLOAT, 0.0);
  check_adjoint("siemens", DBTR_PREC_DOUBLE, 0.0);
}
DBTR_TEST(adjoint_ge) {
  check_adjoint("ge", DBTR_PREC_FLOAT, 0.0);
  check_adjoint("ge", DBTR_PREC_DOUBLE, 0.0);
}
DBTR_TEST(adjoint_thesis) {
  check_adjoint("thesis", DBTR_PREC_FLOAT, 0.0);
  check_adjoint("thesis", DBTR_PREC_DOUBLE, 0.0);
}

/* A detector turned by 7 deg about z (u no longer along x). */
DBTR_TEST(adjoint_rotated_detector) {
  check_adjoint("hologic", DBTR_PREC_FLOAT, 7.0);
  check_adjoint("hologic", DBTR_PREC_DOUBLE, 7.0);
}

/* A uniform slab: a ray that enters through the top slice and leaves through the bottom
 * one, with every crossing inside the grid, sees value x len per slice exactly in its
 * bilinear weights (they sum to 1), so its sum is nz len value up to rounding: the weights
 * of each crossing add to 1 within 4 u, and the nz-term sum adds nz u. */
DBTR_TEST(forward_uniform_slab) {
  dbtr_geom g;
  dbtr_grid grid;
  REQUIRE_OK(test_small_problem("tiny", &g, &grid));
  dbtr_cpu_projector *p = NULL;
  REQUIRE_OK(dbtr_cpu_projector_create(&p, &g, &grid, DBTR_PREC_DOUBLE, 1));
  size_t nv = grid.nx * grid.ny * grid.nz, np = g.n_views * g.n_rows * g.n_cols;
  double *x = malloc(nv * sizeof(double)), *ax = malloc(np * sizeof(double));
  REQUIRE(x && ax);
  for (size_t i = 0; i < nv; i++) x[i] = 0.02;
  CHECK_OK(dbtr_cpu_forward(p, x, ax));
  /* The central pixel of the middle view looks straight down through the grid's centre. */
  size_t k = g.n_views / 2, r = g.n_rows / 2, c = g.n_cols / 2;
  double pc[3];
  dbtr_geom_pixel_center(&g, k, (double)r, (double)c, pc);
  const double *s = g.source + 3 * k;
  double dx = pc[0] - s[0], dy = pc[1] - s[1], dz = pc[2] - s[2];
  double len = grid.dz * sqrt(dx * dx + dy * dy + dz * dz) / fabs(dz);
  double want = (double)grid.nz * len * 0.02;
  double got = ax[k * g.n_rows * g.n_cols + r * g.n_cols + c];
  CHECK_NEAR(got, want, want * (4.0 + (double)grid.nz) * DBL_EPSILON);
  free(x);
  free(ax);
  dbtr_cpu_projector_destroy(&p);
  dbtr_geom_free(&g);
}

/* Each output element is computed by one thread in a fixed order, so 1 and 2 threads
 * give the same bits: two ML-EM iterations with 2 subsets, transmission, in float. */
DBTR_TEST(threads_bitwise) {
  dbtr_geom g;
  dbtr_grid grid;
  REQUIRE_OK(test_small_problem("hologic", &g, &grid));
  size_t nv = grid.nx * grid.ny * grid.nz, np = g.n_views * g.n_rows * g.n_cols;
  double *y = malloc(np * sizeof(double)), *i0 = malloc(np * sizeof(double));
  float *out[2] = {malloc(nv * sizeof(float)), malloc(nv * sizeof(float))};
  float *proj[2] = {malloc(np * sizeof(float)), malloc(np * sizeof(float))};
  REQUIRE(y && i0 && out[0] && out[1] && proj[0] && proj[1]);
  test_rng_state = 7;
  for (size_t i = 0; i < np; i++) {
    i0[i] = 1000.0;
    y[i] = floor(1000.0 * exp(-0.5 * test_rnd()));
  }
  dbtr_data data = {.geom = &g, .grid = &grid, .algo = DBTR_ALGO_TRANSMISSION, .y = y, .i0 = i0};
  double dev[2];
  for (int t = 0; t < 2; t++) {
    dbtr_mlem m;
    dbtr_backend *b = NULL;
    REQUIRE_OK(dbtr_mlem_init(&m, &data, 2, t + 1));
    REQUIRE_OK(dbtr_cpu_backend_create(&b, DBTR_PREC_FLOAT, &m.prob));
    REQUIRE_OK(dbtr_mlem_load(&m, b, 0.0));
    for (int it = 0; it < 2; it++) CHECK_OK(dbtr_mlem_iterate(&m, b, &dev[t]));
    CHECK_OK(b->get_volume(b, out[t]));
    CHECK_OK(b->get_projections(b, proj[t]));
    dbtr_backend_destroy(&b);
    dbtr_mlem_free(&m);
  }
  CHECK(memcmp(out[0], out[1], nv * sizeof(float)) == 0);
  CHECK(memcmp(proj[0], proj[1], np * sizeof(float)) == 0);
  CHECK(dev[0] == dev[1]);
  /* The reconstruction moved away from its uniform start: the check compares real work. */
  float lo = out[0][0], hi = out[0][0];
  for (size_t i = 0; i < nv; i++) {
    lo = fminf(lo, out[0][i]);
    hi = fmaxf(hi, out[0][i]);
  }
  CHECK_LT(lo, hi);
  free(y);
  free(i0);
  for (int t = 0; t < 2; t++) {
    free(out[t]);
    free(proj[t]);
  }
  dbtr_geom_free(&g);
}

/* floor_int's additions-only version (the CPU's; the GPU may use floorf) against floor()
 * for one value: the same bits in T (-0 included) and the same integer. floor_ok_f is the
 * silent form the exhaustive case counts with; the check_ forms print both operands. */
static int floor_ok_f(float f) {
  int i;
  float fl = t_floor_int_f(f, &i), want = floorf(f);
  return dbtr__cr_fbits(fl) == dbtr__cr_fbits(want) && i == (int)want;
}
static void check_floor_f(float f) {
  int i;
  float fl = t_floor_int_f(f, &i), want = floorf(f);
  CHECK_EQ_U64(dbtr__cr_fbits(fl), dbtr__cr_fbits(want));
  CHECK_EQ_INT(i, (int)want);
}
static void check_floor_d(double f) {
  int i;
  double fl = t_floor_int_d(f, &i), want = floor(f);
  CHECK_EQ_U64(dbtr__cr_dbits(fl), dbtr__cr_dbits(want));
  CHECK_EQ_INT(i, (int)want);
}

/* Over its whole domain, |f| < 2^22 (DBTR_MAX_SIDE): each integer n, the values next to it
 * and the half-integers (the ties of the rounding inside), for every n near 0 and in steps
 * of 4093 beyond; every float of magnitude in [0.5, 2), both signs (every mantissa, around
 * the integers 0, +-1 and +-2); and 2^20 random floats and doubles. */
DBTR_TEST(floor_int) {
  const float lim = (float)DBTR_MAX_SIDE;
  check_floor_f(-0.0f);
  check_floor_d(-0.0);
  check_floor_f(0.0f);
  check_floor_d(0.0);
  for (float n = -lim + 1.0f; n < lim; n += n > -64.0f && n < 64.0f ? 1.0f : 4093.0f) {
    float v[5] = {n, nextafterf(n, -INFINITY), nextafterf(n, INFINITY), n + 0.5f, n - 0.5f};
    for (int j = 0; j < 5; j++)
      if (fabsf(v[j]) < lim) {
        check_floor_f(v[j]);
        check_floor_d((double)v[j]);
        check_floor_d(nextafter((double)v[j], INFINITY));
        check_floor_d(nextafter((double)v[j], -INFINITY));
      }
  }
  for (float f = 0.5f; f < 2.0f; f = nextafterf(f, INFINITY)) {
    check_floor_f(f);
    check_floor_f(-f);
  }
  uint64_t st = 12345;
  for (int k = 0; k < (1 << 20); k++) {
    st = st * 6364136223846793005u + 1442695040888963407u;
    double u = (double)(st >> 11) * 0x1p-53; /* [0, 1) */
    double f = (2.0 * u - 1.0) * (double)lim;
    check_floor_d(f);
    if (fabsf((float)f) < lim) check_floor_f((float)f);
  }
}

/* Every float f with |f| < 2^22, both signs: about 2.5e9 values (label slow: seconds in a
 * release build, minutes under the sanitizers). */
DBTR_TEST(floor_int_all_floats) {
  uint32_t lim = dbtr__cr_fbits((float)DBTR_MAX_SIDE), bad = 0;
  for (uint32_t b = 0; b < lim; b++) {
    float f = dbtr__cr_ffrom(b);
    bad += (uint32_t)!floor_ok_f(f) + (uint32_t)!floor_ok_f(-f);
  }
  CHECK_EQ_U64(bad, 0);
}

/* slices_crossed against crossing(), slice by slice, for one record and grid in both CPU
 * precisions with a per-slice test (float, whose crossings are double's split in fixed point, and
 * double): the interval must be exactly the slices crossing() accepts, and forward_ray must give
 * the bits of the per-slice loop it replaced (every accepted slice's term, in order). Returns the
 * number of mismatches; the volume vol (nz, ny, nx) holds values for the sums. */
#define CHECK_CROSSED(sfx, T)                                                                        \
  static int crossed_ok_##sfx(const double ray[4], int nx, int ny, int nz, const T *vol) {           \
    int k0, k1, bad = 0;                                                                             \
    t_slices_crossed_##sfx(ray, nx, ny, nz, &k0, &k1);                                               \
    double sum = 0.0;                                                                                \
    for (int k = 0; k < nz; k++) {                                                                   \
      int ix, iy;                                                                                    \
      T wx, wy;                                                                                      \
      int in = t_crossing_##sfx(ray, k, nx, ny, &ix, &iy, &wx, &wy);                                 \
      bad += in != (k >= k0 && k < k1);                                                              \
      if (in) sum = t_forward_add_##sfx(sum, vol + (size_t)k * (size_t)nx * (size_t)ny, ix, iy, wx, wy, nx, ny); \
    }                                                                                                \
    T want = t_forward_end_##sfx(sum, (T)1.5);                                                       \
    T got = t_forward_ray_##sfx(ray, (T)1.5, vol, nx, ny, nz, (size_t)nx * (size_t)ny);             \
    bad += memcmp(&want, &got, sizeof want) != 0;                                                    \
    return bad;                                                                                      \
  }
CHECK_CROSSED(f, float)
CHECK_CROSSED(d, double)

/* Rays of every kind against the per-slice test (crossed_ok): random records through and past
 * small grids, slopes of either sign down to 1e-300, both zeros (rays parallel to an axis, all or
 * nothing), and grazing ones, whose crossing lies exactly on an edge of the band (-1, n) at some
 * slice or within a few 2^-26 of it, where float's split rounds the crossing up to n. The slope
 * b = j 2^-10 makes a + k b exact for the grazing ones. */
DBTR_TEST(slices_crossed_exact) {
  uint64_t st = 2026;
  const double near[] = {0.0, 0x1p-26, 0x1p-25, 0x1.8p-25, 0x1p-24, 0x1p-52};
  float vol_f[64 * 40 * 48];
  double vol_d[64 * 40 * 48];
  for (size_t i = 0; i < sizeof vol_d / sizeof vol_d[0]; i++) {
    vol_d[i] = uniform(&st, 0.5, 2.0);
    vol_f[i] = (float)vol_d[i];
  }
  long bad_f = 0, bad_d = 0, rays = 0, partial = 0;
  for (int t = 0; t < 400000; t++) {
    int nx = 1 + (int)(mix(&st) % 64), ny = 1 + (int)(mix(&st) % 40), nz = (int)(mix(&st) % 49);
    double ray[4];
    for (int ax = 0; ax < 2; ax++) {
      int n = ax ? ny : nx;
      double a = uniform(&st, -0.5 * n - 20.0, 1.5 * n + 20.0), b;
      switch (mix(&st) % 8) {
      case 0: /* parallel to the slices' normal in this axis */
        b = (mix(&st) & 1) ? -0.0 : 0.0;
        break;
      case 1: /* tiny slopes */
        b = log_uniform(&st, -1000, -20);
        break;
      case 2:
      case 3: { /* grazing: a + k b at an edge, or just inside or outside it */
        b = (double)((int)(mix(&st) % 129) - 64) * 0x1p-10;
        int k = (int)(mix(&st) % 49);
        double edge = (mix(&st) & 1) ? -1.0 : (double)n, d = near[mix(&st) % 6];
        a = edge - (double)k * b + ((mix(&st) & 1) ? d : -d);
        break;
      }
      default:
        b = uniform(&st, -3.0, 3.0) * ((mix(&st) & 1) ? 1.0 : 0.01);
      }
      ray[2 * ax] = a;
      ray[2 * ax + 1] = b;
    }
    bad_f += crossed_ok_f(ray, nx, ny, nz, vol_f);
    bad_d += crossed_ok_d(ray, nx, ny, nz, vol_d);
    int k0, k1;
    t_slices_crossed_d(ray, nx, ny, nz, &k0, &k1);
    partial += k0 < k1 && (k0 > 0 || k1 < nz);
    rays++;
  }
  printf("%ld rays, %ld crossing part of the slices in double: mismatches float %ld, double %ld\n", rays, partial,
         bad_f, bad_d);
  CHECK_GT(partial, rays / 10); /* the grazing and partial cases do occur */
  CHECK_EQ_INT(bad_f, 0);
  CHECK_EQ_INT(bad_d, 0);
}

/* A detector or grid side beyond DBTR_MAX_SIDE (the range of floor_int) is refused, by name,
 * before any table is sized. */
DBTR_TEST(refuses_sides_beyond_floor_range) {
  dbtr_geom g;
  REQUIRE_OK(dbtr_geom_init(&g, 1, 8, (size_t)DBTR_MAX_SIDE + 1));
  CHECK_EQ_INT(dbtr_geom_check(&g, "wide.h5"), DBTR_EOVERFLOW);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "wide.h5");
  CHECK_STR_CONTAINS(dbtr_errmsg(), "4194304");
  dbtr_geom_free(&g);
  REQUIRE_OK(dbtr_geom_init(&g, 1, 8, 8));
  dbtr_grid grid = {.nx = (size_t)DBTR_MAX_SIDE + 1, .ny = 4, .nz = 1, .dx = 1, .dy = 1, .dz = 1};
  CHECK_EQ_INT(dbtr_grid_check(&grid, &g, "grid.h5"), DBTR_EOVERFLOW);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "grid.h5");
  dbtr_geom_free(&g);
}

/* A geometry with rays over 45 deg from the slice normal is refused, by name. */
DBTR_TEST(refuses_steep_rays) {
  dbtr_geom g;
  REQUIRE_OK(dbtr_geom_init(&g, 1, 10, 10));
  double s[3] = {0, 0, 100}, d[3] = {150, 0, 0}, u[3] = {1, 0, 0}, v[3] = {0, 1, 0};
  memcpy(g.source, s, sizeof s);
  memcpy(g.detector_center, d, sizeof d);
  memcpy(g.detector_u, u, sizeof u);
  memcpy(g.detector_v, v, sizeof v);
  int rc = dbtr_geom_check(&g, "steep.h5");
  CHECK_EQ_INT(rc, DBTR_EGEOM);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "steep.h5");
  CHECK_STR_CONTAINS(dbtr_errmsg(), "45 deg");
  dbtr_geom_free(&g);
}

/* The engine's projector on the CPU (include/dbtr.h, dbtr_projector_*) is the CPU reference
 * pair, bit for bit, in each precision; and it refuses what it cannot do, naming it. */
DBTR_TEST(engine_projector_cpu) {
  dbtr_geom g;
  dbtr_grid grid;
  REQUIRE_OK(test_small_problem("hologic", &g, &grid));
  size_t nv = grid.nx * grid.ny * grid.nz, np = g.n_views * g.n_rows * g.n_cols;
  static const char *const precs[3] = {"float", "double", "dd"};
  for (int i = 0; i < 3; i++) {
    dbtr_precision prec = (dbtr_precision)i;
    size_t es = dbtr_precision_size(prec);
    dbtr_projector_opts o = {.backend = {.backend = "cpu", .precision = precs[i], .threads = 2}};
    dbtr_projector *p = NULL;
    dbtr_cpu_projector *ref = NULL;
    REQUIRE_OK(dbtr_projector_open(&p, &g, &grid, &o));
    REQUIRE_OK(dbtr_cpu_projector_create(&ref, &g, &grid, prec, 3));
    CHECK_EQ_INT((int)dbtr_projector_precision(p), (int)prec);
    CHECK_EQ_INT(dbtr_projector_device(p), -1);
    double *xd = malloc(nv * sizeof(double)), *yd = malloc(np * sizeof(double));
    void *x = malloc(nv * es), *y = malloc(np * es), *a = malloc(np * es), *b = malloc(np * es);
    void *va = malloc(nv * es), *vb = malloc(nv * es);
    REQUIRE(xd && yd && x && y && a && b && va && vb);
    test_rng_state = 7;
    for (size_t j = 0; j < nv; j++) xd[j] = test_rnd();
    for (size_t j = 0; j < np; j++) yd[j] = test_rnd();
    dbtr_convert_from_double(prec, xd, nv, x);
    dbtr_convert_from_double(prec, yd, np, y);
    CHECK_OK(dbtr_projector_forward(p, x, a, DBTR_MEMORY_HOST));
    CHECK_OK(dbtr_cpu_forward(ref, x, b));
    CHECK(memcmp(a, b, np * es) == 0);
    CHECK_OK(dbtr_projector_back(p, y, va, DBTR_MEMORY_HOST));
    CHECK_OK(dbtr_cpu_back(ref, y, vb));
    CHECK(memcmp(va, vb, nv * es) == 0);
    /* The CPU reference takes host memory only. */
    CHECK_EQ_INT(dbtr_projector_forward(p, x, a, DBTR_MEMORY_DEVICE), DBTR_EINVAL);
    CHECK_STR_CONTAINS(dbtr_errmsg(), "host memory");
    free(xd);
    free(yd);
    free(x);
    free(y);
    free(a);
    free(b);
    free(va);
    free(vb);
    dbtr_projector_close(&p);
    dbtr_cpu_projector_destroy(&ref);
  }
  dbtr_projector *p = NULL;
  dbtr_projector_opts two = {.backend = {.backend = "cpu", .gpus = 2}};
  CHECK_EQ_INT(dbtr_projector_open(&p, &g, &grid, &two), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "one GPU");
  dbtr_projector_opts bad = {.backend = {.mode = "fastest"}};
  CHECK_EQ_INT(dbtr_projector_open(&p, &g, &grid, &bad), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "fastest");
  dbtr_projector_opts far = {.backend = {.backend = "gpu"}, .device = 1000};
  CHECK_EQ_INT(dbtr_projector_open(&p, &g, &grid, &far), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "device 1000");
  CHECK(p == NULL);
  dbtr_geom_free(&g);
}

DBTR_TEST_MAIN(adjoint_tiny, adjoint_hologic, adjoint_siemens, adjoint_ge, adjoint_thesis, adjoint_rotated_detector,
               forward_uniform_slab,
               threads_bitwise, slices_crossed_exact, refuses_steep_rays, floor_int,
               refuses_sides_beyond_floor_range, floor_int_all_floats, engine_projector_cpu)
