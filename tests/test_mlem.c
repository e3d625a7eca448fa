/* tests/test_mlem.c: ML-EM on simulated scans, the projector against exact line
 * integrals, and the conversion of counts to line integrals with its floor (recon/mlem.c,
 * recon/cpu.c, phantoms/). */
#include <float.h>
#include <stdint.h>
#include <string.h>

#include "phantoms/phantom.h"
#include "phantoms/systems.h"
#include "recon/compare.h"
#include "recon/cpu.h"
#include "recon/error.h"
#include "recon/mlem.h"
#include "tests/mlem_problem.h"
#include "tests/test.h"

static uint64_t bits(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

/* The tiny breast scan: Poisson counts (seed 3) from exact line integrals (2 x 2 rays a
 * pixel) and the ground truth voxelised with 3^3 points a voxel. */
typedef struct {
  dbtr_geom g;
  dbtr_grid grid;
  dbtr_phantom ph;
  double *y, *i0;
  float *truth;
  size_t nv, np;
} tiny_scan;

static int tiny_scan_make(tiny_scan *t) {
  memset(t, 0, sizeof *t);
  const dbtr_system *sys = dbtr_system_find("tiny");
  t->grid = sys->grid;
  int rc = dbtr_system_geometry(sys, &t->g);
  if (!rc) rc = dbtr_phantom_make(&t->ph, DBTR_PHANTOM_BREAST, &t->grid, 3);
  t->nv = t->grid.nx * t->grid.ny * t->grid.nz;
  t->np = t->g.n_views * t->g.n_rows * t->g.n_cols;
  double *line = malloc(t->np * sizeof(double));
  t->y = malloc(t->np * sizeof(double));
  t->i0 = malloc(t->np * sizeof(double));
  t->truth = malloc(t->nv * sizeof(float));
  if (!rc && (!line || !t->y || !t->i0 || !t->truth)) rc = dbtr_err(DBTR_ENOMEM, "tiny scan");
  if (!rc) rc = dbtr_phantom_project(&t->ph, &t->g, 2, line);
  for (size_t i = 0; !rc && i < t->np; i++) t->i0[i] = sys->i0;
  if (!rc) rc = dbtr_poisson_counts(line, t->i0, t->np, 3, t->y);
  if (!rc) rc = dbtr_phantom_voxelize(&t->ph, &t->grid, 3, t->truth);
  free(line);
  return rc;
}

static void tiny_scan_free(tiny_scan *t) {
  dbtr_geom_free(&t->g);
  dbtr_phantom_free(&t->ph);
  free(t->y);
  free(t->i0);
  free(t->truth);
}

/* Mean and standard deviation of vol over voxels whose centres lie between r0 and r1 mm
 * from the axis through c, in the slices within half_z mm of c's plane. */
static double ring_stats(const float *vol, const dbtr_grid *g, const double c[3], double r0, double r1, double half_z,
                         double *sd) {
  double sum = 0.0, sum2 = 0.0;
  size_t n = 0;
  for (size_t z = 0; z < g->nz; z++)
    for (size_t y = 0; y < g->ny; y++)
      for (size_t x = 0; x < g->nx; x++) {
        double p[3] = {g->origin[0] + (double)x * g->dx, g->origin[1] + (double)y * g->dy, g->origin[2] + (double)z * g->dz};
        double dxy = sqrt((p[0] - c[0]) * (p[0] - c[0]) + (p[1] - c[1]) * (p[1] - c[1]));
        if (fabs(p[2] - c[2]) <= half_z && dxy >= r0 && dxy < r1) {
          double v = (double)vol[(z * g->ny + y) * g->nx + x];
          sum += v;
          sum2 += v * v;
          n++;
        }
      }
  if (n < 2) return (double)NAN;
  double mean = sum / (double)n;
  *sd = sqrt(fmax(0.0, (sum2 - (double)n * mean * mean) / (double)(n - 1)));
  return mean;
}

/* Transmission ML-EM of the tiny breast phantom, 3 subsets, CPU float. */
DBTR_TEST(tiny_breast_error_falls_and_mass_visible) {
  tiny_scan t;
  REQUIRE_OK(tiny_scan_make(&t));
  dbtr_data d = {.geom = &t.g, .grid = &t.grid, .algo = DBTR_ALGO_TRANSMISSION, .y = t.y, .i0 = t.i0};
  dbtr_mlem m;
  dbtr_backend *b = NULL;
  float *vol = malloc(t.nv * sizeof(float));
  REQUIRE(vol);
  REQUIRE_OK(dbtr_mlem_init(&m, &d, 3, 0));
  REQUIRE_OK(dbtr_cpu_backend_create(&b, DBTR_PREC_FLOAT, &m.prob));
  REQUIRE_OK(dbtr_mlem_load(&m, b, 0.0));
  enum { ITERS = 10 };
  double err[ITERS + 1], dev[ITERS + 1];
  dbtr_diff_stats st;
  CHECK_OK(b->get_volume(b, vol));
  CHECK_OK(dbtr_diff_stats_f(vol, t.truth, t.nv, NULL, &st));
  err[0] = st.rel_l2;
  for (int it = 1; it <= ITERS; it++) {
    CHECK_OK(dbtr_mlem_iterate(&m, b, &dev[it]));
    CHECK_OK(b->get_volume(b, vol));
    CHECK_OK(dbtr_diff_stats_f(vol, t.truth, t.nv, NULL, &st));
    err[it] = st.rel_l2;
    printf("iteration %d: relative L2 error against the truth %.4f, deviance per pixel %.2f\n", it, err[it],
           dev[it] / (double)t.np);
  }
  /* The first iterations fit the data: error and deviance fall at each one. (Later, ML-EM
   * starts fitting the noise and the error rises slowly: no test pins that.) */
  for (int it = 1; it <= 4; it++) CHECK_LT(err[it], err[it - 1]);
  for (int it = 2; it <= 4; it++) CHECK_LT(dev[it], dev[it - 1]);
  /* The reference mass (shapes[2], a 5 mm sphere of carcinoma, 0.0844/mm in fat of
   * 0.0456/mm) after 10 iterations, as the demo runs. Inside: voxels within 3 mm of its axis
   * in the slices within 2 mm of its centre; background: a ring 7 to 10 mm out in the same
   * slices. "Visible" is the Rose criterion (Rose 1948; Burgess 1999): a disc of A pixels and
   * contrast dmu against pixel noise sigma is seen reliably when k = dmu sqrt(A) / sigma >= 5.
   * A is the disc's voxels in one slice (pi 3^2 / (dx dy), about 28); sigma is the ring's
   * standard deviation, which holds the fibroglandular texture around the mass as well as
   * the noise, so the criterion is, if anything, strict. */
  const dbtr_shape *mass = &t.ph.shapes[2];
  double sd_in = 0.0, sd_bg = 0.0;
  double in = ring_stats(vol, &t.grid, mass->center, 0.0, 3.0, 2.0, &sd_in);
  double bg = ring_stats(vol, &t.grid, mass->center, 7.0, 10.0, 2.0, &sd_bg);
  double area = 3.14159265358979 * 3.0 * 3.0 / (t.grid.dx * t.grid.dy);
  double rose = (in - bg) * sqrt(area) / sd_bg;
  printf("mass: inside %.4f /mm, ring %.4f +- %.4f /mm, contrast %.3f (truth 0.85), Rose k = %.1f\n", in, bg, sd_bg,
         (in - bg) / bg, rose);
  CHECK_GT(rose, 5.0);
  dbtr_backend_destroy(&b);
  dbtr_mlem_free(&m);
  free(vol);
  tiny_scan_free(&t);
}

/* Lower bound of (x-c)^2/a^2 + ... over the box [lo, hi]: per axis, the distance from the
 * centre to the interval. */
static double ellipsoid_min(const dbtr_shape *e, const double lo[3], const double hi[3]) {
  double f = 0.0;
  for (int i = 0; i < 3; i++) {
    double d = e->center[i] < lo[i] ? lo[i] - e->center[i] : (e->center[i] > hi[i] ? e->center[i] - hi[i] : 0.0);
    f += (d / e->half[i]) * (d / e->half[i]);
  }
  return f;
}

static double ellipsoid_max(const dbtr_shape *e, const double lo[3], const double hi[3]) {
  double f = 0.0;
  for (int i = 0; i < 3; i++) {
    double d = fmax(fabs(lo[i] - e->center[i]), fabs(hi[i] - e->center[i]));
    f += (d / e->half[i]) * (d / e->half[i]);
  }
  return f;
}

/* The Joseph projector of a voxelised ellipsoid against its exact line integrals, on the
 * tiny system. The projector sums, per slice, len x (bilinear interpolation of the voxels
 * around the crossing); the exact integral sums, per slab z_k +- dz/2, mu x (the chord
 * inside it). Both terms lie in [0, mu len] for every slice, and they are equal where the
 * region the slice's term depends on (the 2 x 2 voxels around the crossing, grown by half
 * a voxel, and the ray's sideways travel across the slab) lies wholly inside or wholly
 * outside the ellipsoid: there the voxels hold exactly mu or 0 and so does the chord. So
 * |A x - line| <= mu len x (number of slices whose region meets the surface), ray by ray,
 * plus rounding (double: far below 1e-9 of a term). */
DBTR_TEST(voxelised_ellipsoid_vs_exact_line_integrals) {
  const dbtr_system *sys = dbtr_system_find("tiny");
  dbtr_grid grid = sys->grid;
  dbtr_geom g;
  REQUIRE_OK(dbtr_system_geometry(sys, &g));
  dbtr_shape e = {.kind = DBTR_SHAPE_ELLIPSOID, .mu = 0.05, .half = {20.0, 15.0, 12.0}};
  e.center[0] = grid.origin[0] + 0.5 * (double)(grid.nx - 1) * grid.dx + 0.3; /* off the lattice on purpose */
  e.center[1] = grid.origin[1] + 0.5 * (double)(grid.ny - 1) * grid.dy + 0.7;
  e.center[2] = grid.origin[2] + 0.5 * (double)(grid.nz - 1) * grid.dz + 0.4;
  for (int i = 0; i < 3; i++) e.axes[i][i] = 1.0;
  dbtr_phantom ph = {.name = "ellipsoid", .energy_kev = 20.0, .n_shapes = 1, .shapes = &e};
  size_t nv = grid.nx * grid.ny * grid.nz, np = g.n_views * g.n_rows * g.n_cols;
  float *vf = malloc(nv * sizeof(float));
  double *vd = malloc(nv * sizeof(double)), *exact = malloc(np * sizeof(double)), *ax = malloc(np * sizeof(double));
  REQUIRE(vf && vd && exact && ax);
  REQUIRE_OK(dbtr_phantom_voxelize(&ph, &grid, 4, vf));
  for (size_t i = 0; i < nv; i++) vd[i] = (double)vf[i];
  REQUIRE_OK(dbtr_phantom_project(&ph, &g, 1, exact));
  dbtr_cpu_projector *p = NULL;
  REQUIRE_OK(dbtr_cpu_projector_create(&p, &g, &grid, DBTR_PREC_DOUBLE, 0));
  REQUIRE_OK(dbtr_cpu_forward(p, vd, ax));
  double worst = 0.0, sum_err = 0.0, sum_line = 0.0;
  size_t hit = 0;
  for (size_t k = 0; k < g.n_views; k++)
    for (size_t r = 0; r < g.n_rows; r++)
      for (size_t c = 0; c < g.n_cols; c++) {
        size_t i = (k * g.n_rows + r) * g.n_cols + c;
        double s[3], q[3];
        memcpy(s, g.source + 3 * k, sizeof s);
        dbtr_geom_pixel_center(&g, k, (double)r, (double)c, q);
        double d[3] = {q[0] - s[0], q[1] - s[1], q[2] - s[2]};
        double len = grid.dz * sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) / fabs(d[2]);
        size_t boundary = 0;
        for (size_t z = 0; z < grid.nz; z++) {
          double zk = grid.origin[2] + (double)z * grid.dz, lo[3], hi[3];
          for (int a = 0; a < 2; a++) {
            double t0 = (zk - 0.5 * grid.dz - s[2]) / d[2], t1 = (zk + 0.5 * grid.dz - s[2]) / d[2];
            double voxel = a ? grid.dy : grid.dx;
            lo[a] = fmin(s[a] + t0 * d[a], s[a] + t1 * d[a]) - 1.5 * voxel;
            hi[a] = fmax(s[a] + t0 * d[a], s[a] + t1 * d[a]) + 1.5 * voxel;
          }
          lo[2] = zk - grid.dz;
          hi[2] = zk + grid.dz;
          if (ellipsoid_min(&e, lo, hi) <= 1.0 && ellipsoid_max(&e, lo, hi) >= 1.0) boundary++;
        }
        double bound = e.mu * len * (double)boundary + 1e-9;
        double err = fabs(ax[i] - exact[i]);
        if (exact[i] > 0.0) {
          hit++;
          sum_err += err;
          sum_line += exact[i];
        }
        worst = fmax(worst, err / bound);
        if (!(err <= bound)) {
          TEST__FAIL("view %zu pixel (%zu, %zu): |Ax - line| = %.3g > bound %.3g", k, r, c, err, bound);
          k = g.n_views;
          r = g.n_rows;
          break;
        }
      }
  printf("%zu rays cross the ellipsoid; mean |Ax - line| / mean line = %.4f; worst error / bound = %.3f\n", hit,
         sum_err / sum_line, worst);
  CHECK_GT(hit, 1000); /* the ellipsoid is seen by most of the detector */
  dbtr_cpu_projector_destroy(&p);
  dbtr_geom_free(&g);
  free(vf);
  free(vd);
  free(exact);
  free(ax);
}

/* Counts to line integrals (dbtr_count_to_line_integral): every count at or below the floor
 * of half a count, zero and negative ones included, gives the line integral of half a
 * count, log(1000 / 0.5) = log 2000 (the division is exact); a count of 1 and a count
 * equal to i0 are left as they are. The floor's values are compared bit for bit with one
 * another; against the C library's log with a tolerance of 4 ulps of log 2000 (7.6, ulp
 * 2^-50), as the compiler may fold log(2000.0) with another log than the library's. A
 * floor of 1 instead of 0.5 would be off by log 2. */
DBTR_TEST(count_floor) {
  double i0 = 1000.0, tol = 4.0 * 0x1.0p-50;
  double at_floor = dbtr_count_to_line_integral(DBTR_COUNT_FLOOR, i0);
  CHECK_NEAR(at_floor, log(2000.0), tol);
  double below[3] = {0.0, -3.0, 0.25};
  for (int i = 0; i < 3; i++) CHECK_EQ_U64(bits(dbtr_count_to_line_integral(below[i], i0)), bits(at_floor));
  CHECK_NEAR(dbtr_count_to_line_integral(1.0, i0), log(1000.0), tol);
  CHECK_EQ_U64(bits(dbtr_count_to_line_integral(i0, i0)), bits(0.0));
}

/* The driver's start value on a scan of nothing but zero counts is the floor's line
 * integral over the slab thickness, finite: the driver uses the same conversion. The mean
 * of n equal terms is that term to within n ulps of the sum (n = the tiny scan's pixels). */
DBTR_TEST(start_value_of_zero_counts) {
  const dbtr_system *sys = dbtr_system_find("tiny");
  dbtr_geom g;
  REQUIRE_OK(dbtr_system_geometry(sys, &g));
  size_t n = g.n_views * g.n_rows * g.n_cols;
  double *y = calloc(n, sizeof(double)), *i0 = malloc(n * sizeof(double));
  REQUIRE(y && i0);
  for (size_t i = 0; i < n; i++) i0[i] = 1000.0;
  dbtr_data d = {.geom = &g, .grid = &sys->grid, .algo = DBTR_ALGO_TRANSMISSION, .y = y, .i0 = i0};
  dbtr_mlem m;
  REQUIRE_OK(dbtr_mlem_init(&m, &d, 1, 1));
  double l = dbtr_count_to_line_integral(0.0, 1000.0), thickness = (double)sys->grid.nz * sys->grid.dz;
  CHECK_NEAR(m.init_value, l / thickness, l / thickness * (double)n * 0x1.0p-52);
  dbtr_mlem_free(&m);
  dbtr_geom_free(&g);
  free(y);
  free(i0);
}

/* The start value and the deviance's constant are summed in blocks (recon/data_terms.h), a
 * block a thread: 1, 2 and 7 threads give the same bits, which a GPU's threads give too
 * (tests/test_gpu_device_data.c). The hologic layout at test size has 6 blocks, the last one
 * partial, so threads share blocks unevenly. */
DBTR_TEST(data_sums_any_thread_count) {
  dbtr_geom g;
  dbtr_grid grid;
  REQUIRE_OK(test_small_problem("hologic", &g, &grid));
  double *y = NULL, *i0 = NULL;
  REQUIRE_OK(test_problem_data(&g, &grid, 0, &y, &i0));
  dbtr_data d = {.geom = &g, .grid = &grid, .algo = DBTR_ALGO_TRANSMISSION, .y = y, .i0 = i0};
  double init[3], fit[3];
  const int threads[3] = {1, 2, 7};
  for (int t = 0; t < 3; t++) {
    dbtr_mlem m;
    REQUIRE_OK(dbtr_mlem_init(&m, &d, 1, threads[t]));
    init[t] = m.init_value;
    fit[t] = m.fit_const;
    dbtr_mlem_free(&m);
  }
  CHECK_GT(init[0], 0.0);
  CHECK(fit[0] != 0.0);
  for (int t = 1; t < 3; t++) CHECK(memcmp(&init[t], &init[0], sizeof init[0]) == 0 && memcmp(&fit[t], &fit[0], sizeof fit[0]) == 0);
  free(y);
  free(i0);
  dbtr_geom_free(&g);
}

/* What the progress hook saw. */
enum { MAX_CALLS = 4096 };
typedef struct {
  size_t n;
  double fraction[MAX_CALLS];
} calls;

static void on_progress(void *user, double fraction) {
  calls *c = user;
  if (c->n < MAX_CALLS) c->fraction[c->n++] = fraction;
}

/* Progress through an iteration rises from 0 to exactly 1, is reported from inside the CPU
 * reference's subsets (more calls than subsets), and changes no bit: the volume, the
 * projections and the deviance equal those of an unwatched run. 3 subsets and 4 threads,
 * so the subsets' places and thread 0's share both count. */
DBTR_TEST(progress_rises_to_one_and_changes_nothing) {
  test_mlem_problem p;
  REQUIRE_OK(test_mlem_problem_open(&p, "tiny", 0.0, 0, 3, 4));
  const dbtr_mlem *m = &p.m;
  calls *c = calloc(1, sizeof *c);
  float *vol[2] = {malloc(m->n_vox * sizeof(float)), malloc(m->n_vox * sizeof(float))};
  float *proj[2] = {malloc(m->n_proj * sizeof(float)), malloc(m->n_proj * sizeof(float))};
  REQUIRE(c && vol[0] && vol[1] && proj[0] && proj[1]);
  const dbtr_mlem_progress pr = {on_progress, c, 0.0};
  double dev[2][2];
  for (int watched = 0; watched < 2; watched++) {
    dbtr_backend *b = NULL;
    REQUIRE_OK(dbtr_cpu_backend_create(&b, DBTR_PREC_FLOAT, &m->prob));
    CHECK_OK(dbtr_mlem_load(m, b, 0.0));
    for (int it = 0; it < 2; it++) {
      size_t from = c->n;
      CHECK_OK(dbtr_mlem_iterate_progress(m, b, &dev[watched][it], watched ? &pr : NULL));
      if (!watched) continue;
      CHECK_GT(c->n - from, 3);
      for (size_t i = from; i < c->n; i++) CHECK(c->fraction[i] >= (i > from ? c->fraction[i - 1] : 0.0));
      CHECK(c->fraction[c->n - 1] == 1.0);
    }
    CHECK_OK(b->get_volume(b, vol[watched]));
    CHECK_OK(b->get_projections(b, proj[watched]));
    dbtr_backend_destroy(&b);
  }
  CHECK(!memcmp(vol[0], vol[1], m->n_vox * sizeof(float)));
  CHECK(!memcmp(proj[0], proj[1], m->n_proj * sizeof(float)));
  CHECK_EQ_U64(bits(dev[0][1]), bits(dev[1][1]));
  for (int k = 0; k < 2; k++) {
    free(vol[k]);
    free(proj[k]);
  }
  free(c);
  test_mlem_problem_close(&p);
}

/* The volume after `iterations` iterations of m on the CPU in precision prec, into out (n_vox
 * elements of prec), from the estimated start value. */
static int cpu_volume(const dbtr_mlem *m, dbtr_precision prec, int iterations, void *out) {
  dbtr_backend *b = NULL;
  double dev;
  int rc = dbtr_cpu_backend_create(&b, prec, &m->prob);
  if (!rc) rc = dbtr_mlem_load(m, b, 0.0);
  for (int it = 0; it < iterations && !rc; it++) rc = dbtr_mlem_iterate(m, b, &dev);
  if (!rc) rc = b->get_volume(b, out);
  dbtr_backend_destroy(&b);
  return rc;
}

/* The referee (double-double) beside the CPU in double, 3 iterations on tiny, transmission and
 * emission with 3 subsets: the dd volume rounded to double is within 1e-10 relative L2 of the
 * double one. Double rounding (u = 1.1e-16) through the thousands of operations that shape a
 * voxel, amplified by ML-EM's updates, leaves differences of 1e-15 to 1e-13 (1.3e-15 measured);
 * 1e-10 is a thousand times that, and a wrong formula in the dd instance moves values by
 * percents. The low parts are not all zero: the dd path carries more than a double. */
DBTR_TEST(dd_close_to_double) {
  for (int emission = 0; emission < 2; emission++) {
    test_mlem_problem p;
    REQUIRE_OK(test_mlem_problem_open(&p, "tiny", 0.0, emission, 3, 0));
    const dbtr_mlem *m = &p.m;
    double *vd = malloc(m->n_vox * sizeof(double)), *vq = malloc(m->n_vox * 2 * sizeof(double));
    double *vq_d = malloc(m->n_vox * sizeof(double));
    REQUIRE(vd && vq && vq_d);
    REQUIRE_OK(cpu_volume(m, DBTR_PREC_DOUBLE, 3, vd));
    REQUIRE_OK(cpu_volume(m, DBTR_PREC_DD, 3, vq));
    dbtr_convert_to_double(DBTR_PREC_DD, vq, m->n_vox, vq_d);
    double num = 0.0, den = 0.0;
    size_t lo_nonzero = 0;
    for (size_t i = 0; i < m->n_vox; i++) {
      num += (vd[i] - vq_d[i]) * (vd[i] - vq_d[i]);
      den += vq_d[i] * vq_d[i];
      lo_nonzero += vq[2 * i + 1] != 0.0;
    }
    double rel = sqrt(num / den);
    printf("tiny %s: dd vs double, relative L2 %.3g; %zu of %zu low parts non-zero\n",
           emission ? "emission" : "transmission", rel, lo_nonzero, m->n_vox);
    CHECK_LT(rel, 1e-10);
    CHECK_GT(lo_nonzero, m->n_vox / 2);
    free(vd);
    free(vq);
    free(vq_d);
    test_mlem_problem_close(&p);
  }
}

/* Float as close to the exact result as float allows (issue 16's target): after one
 * transmission iteration, the CPU's float volume is at most 4 times as far from the referee's
 * (dd) as the referee rounded to float, the best any float answer can be (relative L2), on
 * tiny, hologic and thesis at test size. Float keeps its geometry and its forward sums in
 * double for this (docs/accuracy.md): 1.16, 1.23 and 1.21 times measured here, where with them
 * in float it was 4.96, 2.68 and 4.05 times (and 21.6 on tiny at full size, now 1.8). */
DBTR_TEST(float_near_best_float) {
  const char *presets[3] = {"tiny", "hologic", "thesis"};
  for (int k = 0; k < 3; k++) {
    test_mlem_problem p;
    REQUIRE_OK(test_mlem_problem_open(&p, presets[k], 0.0, 0, 1, 0));
    const dbtr_mlem *m = &p.m;
    float *vf = malloc(m->n_vox * sizeof(float)), *best = malloc(m->n_vox * sizeof(float));
    double *vq = malloc(m->n_vox * 2 * sizeof(double));
    REQUIRE(vf && best && vq);
    REQUIRE_OK(cpu_volume(m, DBTR_PREC_FLOAT, 1, vf));
    REQUIRE_OK(cpu_volume(m, DBTR_PREC_DD, 1, vq));
    dbtr_convert_to_float(DBTR_PREC_DD, vq, m->n_vox, best);
    double ef = 0.0, eb = 0.0, n2 = 0.0;
    for (size_t i = 0; i < m->n_vox; i++) {
      double r = vq[2 * i] + vq[2 * i + 1], df = (double)vf[i] - r, db = (double)best[i] - r;
      ef += df * df;
      eb += db * db;
      n2 += r * r;
    }
    double rf = sqrt(ef / n2), rb = sqrt(eb / n2);
    printf("%s: float %.3g, best float %.3g from the referee (relative L2): %.2f times\n", presets[k], rf, rb, rf / rb);
    CHECK_GT(rb, 0.0);
    CHECK_LT(rf, 4.0 * rb);
    free(vf);
    free(best);
    free(vq);
    test_mlem_problem_close(&p);
  }
}

DBTR_TEST_MAIN(tiny_breast_error_falls_and_mass_visible, voxelised_ellipsoid_vs_exact_line_integrals, count_floor,
               start_value_of_zero_counts, progress_rises_to_one_and_changes_nothing, dd_close_to_double,
               float_near_best_float, data_sums_any_thread_count)
