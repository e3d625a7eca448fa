/* tests/test_phantoms.c: phantoms/ (docs/phantoms.md).
 *
 * Exact chords against closed forms derived here, the breast phantom's line integral
 * against quadrature of its point values, voxelization against the sphere volume, the
 * Poisson sampler's moments and its independence of the thread count, and the phantoms
 * on every preset's grid (the presets themselves: tests/test_systems.c). Seeds are
 * arbitrary: every check must hold for any seed. */
#include <omp.h>
#include <stdint.h>

#include "phantoms/phantom.h"
#include "phantoms/systems.h"
#include "recon/error.h"
#include "tests/test.h"

#define PI 3.14159265358979323846
/* The unit roundoff of double, 2^-53. */
#define EPS 0x1.0p-53

/* ---- helpers ---- */

static dbtr_shape shape(dbtr_shape_kind kind, double cx, double cy, double cz, double hx, double hy, double hz,
                        double mu) {
  dbtr_shape s;
  memset(&s, 0, sizeof s);
  s.kind = kind;
  s.center[0] = cx, s.center[1] = cy, s.center[2] = cz;
  s.half[0] = hx, s.half[1] = hy, s.half[2] = hz;
  for (int i = 0; i < 3; i++) s.axes[i][i] = 1.0;
  s.mu = mu;
  return s;
}

/* An oblique frame: rows of Rz(30 deg) Rx(20 deg), so no local axis is near a world axis. */
static void turn(dbtr_shape *s) {
  double cz = cos(PI / 6), sz = sin(PI / 6), cx = cos(PI / 9), sx = sin(PI / 9);
  double r[3][3] = {{cz, -sz * cx, sz * sx}, {sz, cz * cx, -cz * sx}, {0.0, sx, cx}};
  memcpy(s->axes, r, sizeof r);
}

/* World point of local coordinates q in shape s's frame. */
static void world(const dbtr_shape *s, const double q[3], double out[3]) {
  for (int j = 0; j < 3; j++)
    out[j] = s->center[j] + q[0] * s->axes[0][j] + q[1] * s->axes[1][j] + q[2] * s->axes[2][j];
}

/* Line integral of a one-shape phantom with mu = 1 (the chord) between local points qa, qb. */
static double local_chord(const dbtr_shape *s, const double qa[3], const double qb[3]) {
  dbtr_shape one = *s;
  one.mu = 1.0;
  dbtr_phantom p = {"test", 20.0, 1, &one, NULL};
  double a[3], b[3];
  world(s, qa, a);
  world(s, qb, b);
  return dbtr_phantom_line_integral(&p, a, b);
}

static void grid_bounds(const dbtr_grid *g, double lo[3], double hi[3]) {
  size_t n[3] = {g->nx, g->ny, g->nz};
  double d[3] = {g->dx, g->dy, g->dz};
  for (int j = 0; j < 3; j++) lo[j] = g->origin[j] - 0.5 * d[j], hi[j] = g->origin[j] + ((double)n[j] - 0.5) * d[j];
}

/* Axis-aligned bounds of a shape, written out here from the shape definitions rather
 * than taken from the library: the extent along world axis j of an ellipsoid is
 * sqrt(sum_i (h_i R_ij)^2), of a cylinder sqrt((h_x R_xj)^2 + (h_y R_yj)^2) + |h_z R_zj|,
 * of a box sum_i |h_i R_ij|. */
static void shape_bounds(const dbtr_shape *s, double lo[3], double hi[3]) {
  for (int j = 0; j < 3; j++) {
    double e[3];
    for (int i = 0; i < 3; i++) e[i] = s->half[i] * s->axes[i][j];
    double ext = s->kind == DBTR_SHAPE_ELLIPSOID  ? sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
                 : s->kind == DBTR_SHAPE_CYLINDER ? sqrt(e[0] * e[0] + e[1] * e[1]) + fabs(e[2])
                                                  : fabs(e[0]) + fabs(e[1]) + fabs(e[2]);
    lo[j] = s->center[j] - ext, hi[j] = s->center[j] + ext;
    if (s->clipped) lo[j] = fmax(lo[j], s->clip_lo[j]), hi[j] = fmin(hi[j], s->clip_hi[j]);
  }
}

/* ---- exact chords ---- */

DBTR_TEST(chord_sphere_diameter) {
  dbtr_shape s = shape(DBTR_SHAPE_ELLIPSOID, 0, 0, 0, 1, 1, 1, 1.0);
  dbtr_phantom p = {"test", 20.0, 1, &s, NULL};
  double a[3] = {-2, 0, 0}, b[3] = {2, 0, 0};
  /* Along a world axis every step is exact in binary: 2 to the last bit. */
  CHECK_NEAR(dbtr_phantom_line_integral(&p, a, b), 2.0, 0.0);
  /* An oblique diameter of a turned, displaced sphere, endpoints c -+ (1, 2, 2) (length 3
   * each side): about 30 roundings of numbers <= 10 leave ~1e-14; 1e-12 relative is the
   * bound asked of the chord code. */
  s.center[0] = 12.5, s.center[1] = -3.25, s.center[2] = 40.0;
  turn(&s);
  double a2[3] = {11.5, -5.25, 38.0}, b2[3] = {13.5, -1.25, 42.0};
  CHECK_NEAR(dbtr_phantom_line_integral(&p, a2, b2), 2.0, 2.0 * 1e-12);
}

DBTR_TEST(chord_ellipsoid_oblique) {
  /* Ellipsoid of semi-axes (2, 1, 1) = S(unit ball), S = diag(2, 1, 1) in its frame. The
   * line w(t) = (0, 0.6, 0) + t (1, 0, 1)/sqrt(2) passes the unit ball's centre at distance
   * 0.6 (the offset is orthogonal to the direction), so its chord there is
   * 2 sqrt(1 - 0.36) = 1.6. S maps it to q(t) = (0, 0.6, 0) + t (2, 0, 1)/sqrt(2) and
   * stretches lengths along it by |(2, 0, 1)| / |(1, 0, 1)| = sqrt(5/2), so the chord
   * through the ellipsoid is 1.6 sqrt(2.5). The frame is turned and moved off the origin. */
  dbtr_shape s = shape(DBTR_SHAPE_ELLIPSOID, 5.0, -3.0, 7.0, 2.0, 1.0, 1.0, 1.0);
  turn(&s);
  double k = 5.0 / sqrt(2.0); /* t = -+5: both ends well outside */
  double qa[3] = {-2.0 * k, 0.6, -k}, qb[3] = {2.0 * k, 0.6, k};
  double expect = 1.6 * sqrt(2.5);
  /* ~40 roundings of numbers <= 20: below 1e-13; 1e-12 relative as for the sphere. */
  CHECK_NEAR(local_chord(&s, qa, qb), expect, expect * 1e-12);
  /* The same line shifted past the surface: distance 1 in the unit ball, a tangent, 0. */
  double qc[3] = {-2.0 * k, 1.0 + 1e-9, -k}, qd[3] = {2.0 * k, 1.0 + 1e-9, k};
  CHECK_NEAR(local_chord(&s, qc, qd), 0.0, 0.0);
}

DBTR_TEST(chord_cylinder_along_and_across) {
  /* Elliptic cylinder: radii 2 (local x) and 1 (local y), half length 5 (local z). */
  dbtr_shape s = shape(DBTR_SHAPE_CYLINDER, -4.0, 8.0, 30.0, 2.0, 1.0, 5.0, 1.0);
  turn(&s);
  /* Bound for all cases: ~40 roundings of numbers <= 40 (the centre's size): 1e-12 abs. */
  double tol = 1e-12;
  /* Along the axis inside the ellipse ((1/2)^2 + 0.5^2 = 0.5 <= 1): the full length 10. */
  double a1[3] = {1.0, 0.5, -8.0}, b1[3] = {1.0, 0.5, 8.0};
  CHECK_NEAR(local_chord(&s, a1, b1), 10.0, tol);
  /* Along the axis outside ((1.9/2)^2 + 0.5^2 = 1.15 > 1): nothing. */
  double a2[3] = {1.9, 0.5, -8.0}, b2[3] = {1.9, 0.5, 8.0};
  CHECK_NEAR(local_chord(&s, a2, b2), 0.0, tol);
  /* Across along local x at y = 0.6: x spans -+2 sqrt(1 - 0.36), chord 3.2. */
  double a3[3] = {-3.0, 0.6, 1.0}, b3[3] = {3.0, 0.6, 1.0};
  CHECK_NEAR(local_chord(&s, a3, b3), 3.2, tol);
  /* Across along local y at x = 1.2: y spans -+sqrt(1 - 0.36), chord 1.6. */
  double a4[3] = {1.2, -3.0, -4.0}, b4[3] = {1.2, 3.0, -4.0};
  CHECK_NEAR(local_chord(&s, a4, b4), 1.6, tol);
  /* Across beyond the end cap (z = 5.5 > 5): nothing. */
  double a5[3] = {-3.0, 0.0, 5.5}, b5[3] = {3.0, 0.0, 5.5};
  CHECK_NEAR(local_chord(&s, a5, b5), 0.0, tol);
  /* Through the centre along (1, 0, 5): it leaves through the caps at x = -+1, inside the
   * ellipse, so the chord is the stretch between z = -5 and 5: 2 |(1, 0, 5)| = 2 sqrt(26). */
  double a6[3] = {-2.0, 0.0, -10.0}, b6[3] = {2.0, 0.0, 10.0};
  CHECK_NEAR(local_chord(&s, a6, b6), 2.0 * sqrt(26.0), tol);
}

DBTR_TEST(chord_box_diagonal) {
  dbtr_shape s = shape(DBTR_SHAPE_BOX, 3.0, 2.0, 1.0, 1.0, 2.0, 3.0, 1.0);
  turn(&s);
  /* Corner to corner through the centre, extended to twice the half sides: the chord is the
   * space diagonal 2 |(1, 2, 3)| = 2 sqrt(14). ~40 roundings of numbers <= 10: 1e-12. */
  double a[3] = {-2.0, -4.0, -6.0}, b[3] = {2.0, 4.0, 6.0};
  CHECK_NEAR(local_chord(&s, a, b), 2.0 * sqrt(14.0), 1e-12);
  /* Parallel to the local y edges, inside: the side length 4. */
  double a2[3] = {0.5, -9.0, -2.5}, b2[3] = {0.5, 9.0, -2.5};
  CHECK_NEAR(local_chord(&s, a2, b2), 4.0, 1e-12);
  /* Parallel, just outside the x face: nothing. */
  double a3[3] = {1.001, -9.0, 0.0}, b3[3] = {1.001, 9.0, 0.0};
  CHECK_NEAR(local_chord(&s, a3, b3), 0.0, 0.0);
}

DBTR_TEST(clip_box_halves_ellipsoid) {
  dbtr_shape s = shape(DBTR_SHAPE_ELLIPSOID, 1.0, 2.0, 3.0, 1.0, 1.0, 1.0, 1.0);
  dbtr_phantom p = {"test", 20.0, 1, &s, NULL};
  double a[3] = {-1.0, 2.0, 3.0}, b[3] = {3.0, 2.0, 3.0};
  /* Unclipped diameter along x: exact in binary (see chord_sphere_diameter). */
  CHECK_NEAR(dbtr_phantom_line_integral(&p, a, b), 2.0, 0.0);
  /* Keep x >= the centre, with infinite bounds elsewhere: half the diameter. */
  s.clipped = 1;
  double lo[3] = {1.0, -HUGE_VAL, -HUGE_VAL}, hi[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL};
  memcpy(s.clip_lo, lo, sizeof lo);
  memcpy(s.clip_hi, hi, sizeof hi);
  CHECK_NEAR(dbtr_phantom_line_integral(&p, a, b), 1.0, 0.0);
  /* An oblique diameter (1, 1, 1) is cut in half too; a few roundings: 1e-14. */
  double a2[3] = {-1.0, 0.0, 1.0}, b2[3] = {3.0, 4.0, 5.0};
  CHECK_NEAR(dbtr_phantom_line_integral(&p, a2, b2), 1.0, 1e-14);
  /* The point value follows the clip. */
  double in[3] = {1.5, 2.0, 3.0}, out[3] = {0.5, 2.0, 3.0};
  CHECK_NEAR(dbtr_phantom_mu_at(&p, in), 1.0, 0.0);
  CHECK_NEAR(dbtr_phantom_mu_at(&p, out), 0.0, 0.0);
}

DBTR_TEST(segment_ending_inside) {
  dbtr_shape s = shape(DBTR_SHAPE_ELLIPSOID, 0.0, 0.0, 10.0, 1.0, 1.0, 1.0, 0.7);
  dbtr_phantom p = {"test", 20.0, 1, &s, NULL};
  /* A few roundings of numbers <= 3 times mu: |error| < 10 x 2^-53 x 3 ~ 3e-15. */
  double tol = 1e-14;
  /* From outside to 0.5 past the centre: the inside part is 1.5 long. */
  double a[3] = {-2.0, 0.0, 10.0}, b[3] = {0.5, 0.0, 10.0};
  CHECK_NEAR(dbtr_phantom_line_integral(&p, a, b), 0.7 * 1.5, tol);
  CHECK_NEAR(dbtr_phantom_line_integral(&p, b, a), 0.7 * 1.5, tol);
  /* Both ends inside: the whole segment, 0.5 long. */
  double c[3] = {-0.3, 0.0, 10.0}, d[3] = {0.2, 0.0, 10.0};
  CHECK_NEAR(dbtr_phantom_line_integral(&p, c, d), 0.7 * 0.5, tol);
  /* Ending before the surface: nothing. */
  double e[3] = {-3.0, 0.0, 10.0}, f[3] = {-1.01, 0.0, 10.0};
  CHECK_NEAR(dbtr_phantom_line_integral(&p, e, f), 0.0, 0.0);
}

DBTR_TEST(mu_at_layers) {
  /* Two overlapping spheres add: 0.25 + 0.5 where both hold, each alone elsewhere. The
   * values are sums of two dyadic numbers, so exact. */
  dbtr_shape s[2] = {shape(DBTR_SHAPE_ELLIPSOID, 0, 0, 0, 2, 2, 2, 0.25),
                     shape(DBTR_SHAPE_BOX, 2, 0, 0, 1, 1, 1, 0.5)};
  dbtr_phantom p = {"test", 20.0, 2, s, NULL};
  double both[3] = {1.5, 0, 0}, first[3] = {-1.5, 0, 0}, second[3] = {2.9, 0.9, 0.9}, none[3] = {0, 0, 3};
  CHECK_NEAR(dbtr_phantom_mu_at(&p, both), 0.75, 0.0);
  CHECK_NEAR(dbtr_phantom_mu_at(&p, first), 0.25, 0.0);
  CHECK_NEAR(dbtr_phantom_mu_at(&p, second), 0.5, 0.0);
  CHECK_NEAR(dbtr_phantom_mu_at(&p, none), 0.0, 0.0);
}

/* ---- the breast phantom along rays ---- */

/* The shapes whose bounding sphere the line through s and e meets, copied into sub (room
 * for all of p's shapes). The others hold no point of the line, so mu_at along it is the
 * same with sub as with p; quadrature over sub is just faster. */
static size_t touched(const dbtr_phantom *p, const double s[3], const double e[3], dbtr_shape *sub) {
  double d[3] = {e[0] - s[0], e[1] - s[1], e[2] - s[2]}, dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
  size_t n = 0;
  for (size_t k = 0; k < p->n_shapes; k++) {
    const dbtr_shape *sh = p->shapes + k;
    const double *hh = sh->half;
    double r = sh->kind == DBTR_SHAPE_ELLIPSOID  ? fmax(hh[0], fmax(hh[1], hh[2]))
               : sh->kind == DBTR_SHAPE_CYLINDER ? sqrt(fmax(hh[0], hh[1]) * fmax(hh[0], hh[1]) + hh[2] * hh[2])
                                                 : sqrt(hh[0] * hh[0] + hh[1] * hh[1] + hh[2] * hh[2]);
    double w[3] = {sh->center[0] - s[0], sh->center[1] - s[1], sh->center[2] - s[2]};
    double tc = (w[0] * d[0] + w[1] * d[1] + w[2] * d[2]) / dd, q = 0.0;
    for (int j = 0; j < 3; j++) q += (w[j] - tc * d[j]) * (w[j] - tc * d[j]);
    /* 1e-9 relative: the rounding of the distance, many times over. */
    if (sqrt(q) <= r * (1.0 + 1e-9)) sub[n++] = *sh;
  }
  return n;
}

/* Midpoint quadrature of mu_at along s + t (e - s) over t in [t0, t1], with n cells.
 * *bound gets its error bound: on a piecewise-constant function the midpoint rule errs
 * only in cells that hold a jump, by at most half a cell times the jump; each (convex)
 * shape is entered and left at most once, so the error is at most h x sum |mu| over the
 * shapes the line can touch. The naive sum of n terms adds at most n x 2^-53 x
 * sum |terms| of rounding. */
static double quadrature(const dbtr_phantom *p, const double s[3], const double e[3], double t0, double t1, size_t n,
                         double *bound) {
  dbtr_shape *sub = malloc((p->n_shapes + 1) * sizeof(dbtr_shape));
  *bound = 0.0;
  if (!sub) return (double)NAN;
  dbtr_phantom near = {"touched", p->energy_kev, touched(p, s, e, sub), sub, NULL};
  double d[3] = {e[0] - s[0], e[1] - s[1], e[2] - s[2]};
  double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), h = (t1 - t0) * len / (double)n;
  double sum = 0.0, abs_sum = 0.0, mu_touch = 0.0;
  for (size_t i = 0; i < n; i++) {
    double t = t0 + (t1 - t0) * ((double)i + 0.5) / (double)n, x[3];
    for (int j = 0; j < 3; j++) x[j] = s[j] + t * d[j];
    double v = dbtr_phantom_mu_at(&near, x) * h;
    sum += v;
    abs_sum += fabs(v);
  }
  for (size_t k = 0; k < near.n_shapes; k++) mu_touch += fabs(sub[k].mu);
  *bound = h * mu_touch + (double)n * EPS * abs_sum;
  free(sub);
  return sum;
}

/* Checks the exact line integral from source s through point x down to the detector
 * plane z = 0 against quadrature over the grid's slab of z (where every shape lies:
 * phantoms_fit_every_grid checks it). */
static void check_ray(const dbtr_phantom *p, const dbtr_grid *grid, const double s[3], const double x[3]) {
  double t_det = s[2] / (s[2] - x[2]), e[3];
  for (int j = 0; j < 3; j++) e[j] = s[j] + t_det * (x[j] - s[j]);
  double lo[3], hi[3];
  grid_bounds(grid, lo, hi);
  double t0 = (s[2] - hi[2]) / s[2], t1 = (s[2] - lo[2]) / s[2]; /* e[2] = 0 */
  /* Cells of about 1e-5 mm over the ~50 mm the ray spends in the grid: an error bound near
   * 1e-4 against integrals near 2.5. */
  double len = sqrt((e[0] - s[0]) * (e[0] - s[0]) + (e[1] - s[1]) * (e[1] - s[1]) + s[2] * s[2]);
  size_t n = (size_t)((t1 - t0) * len / 1e-5) + 1;
  double bound, q = quadrature(p, s, e, t0, t1, n, &bound);
  double exact = dbtr_phantom_line_integral(p, s, e);
  CHECK_GT(exact, 0.0);
  CHECK_NEAR(exact, q, bound);
}

DBTR_TEST(breast_line_integral_vs_quadrature) {
  const dbtr_system *sys = dbtr_system_find("tiny");
  REQUIRE(sys);
  dbtr_geom g;
  REQUIRE_OK(dbtr_system_geometry(sys, &g));
  dbtr_phantom p;
  REQUIRE_OK(dbtr_phantom_make(&p, DBTR_PHANTOM_BREAST, &sys->grid, 7));
  /* Three rays that cross the structures with the sharpest edges: from view 0 through the
   * reference mass's centre, from the middle view through the first calcification (the
   * first shape with mu > 1/mm), from the last view through the first fibre (a cylinder
   * after the two breast layers). */
  check_ray(&p, &sys->grid, g.source, p.shapes[2].center);
  size_t calc = 0, fibre = 0;
  for (size_t i = 3; i < p.n_shapes; i++) {
    if (!calc && p.shapes[i].mu > 1.0) calc = i;
    if (!fibre && p.shapes[i].kind == DBTR_SHAPE_CYLINDER) fibre = i;
  }
  CHECK(calc > 0 && fibre > 0);
  if (calc) check_ray(&p, &sys->grid, g.source + 3 * 4, p.shapes[calc].center);
  if (fibre) check_ray(&p, &sys->grid, g.source + 3 * 8, p.shapes[fibre].center);
  dbtr_phantom_free(&p);
  dbtr_geom_free(&g);
}

DBTR_TEST(project_matches_line_integral) {
  const dbtr_system *sys = dbtr_system_find("tiny");
  REQUIRE(sys);
  dbtr_geom g;
  REQUIRE_OK(dbtr_system_geometry(sys, &g));
  dbtr_phantom p;
  REQUIRE_OK(dbtr_phantom_make(&p, DBTR_PHANTOM_BREAST, &sys->grid, 3));
  size_t n = g.n_views * g.n_rows * g.n_cols;
  double *one = malloc(n * sizeof(double)), *two = malloc(n * sizeof(double));
  REQUIRE(one && two);
  CHECK_OK(dbtr_phantom_project(&p, &g, 1, one));
  CHECK_OK(dbtr_phantom_project(&p, &g, 2, two));
  double maxv = 0.0;
  /* A spread sample: views 0, 4, 8, every 3rd row, every 5th column. */
  for (size_t k = 0; k < g.n_views; k += 4)
    for (size_t r = 0; r < g.n_rows; r += 3)
      for (size_t c = 0; c < g.n_cols; c += 5) {
        size_t i = (k * g.n_rows + r) * g.n_cols + c;
        double x[3];
        dbtr_geom_pixel_center(&g, k, (double)r, (double)c, x);
        /* ss = 1 is the central ray: the same sum in the same order, to the bit. */
        CHECK_NEAR(one[i], dbtr_phantom_line_integral(&p, g.source + 3 * k, x), 0.0);
        /* ss = 2 is the mean of the rays to the pixel's quarter centres (-+1/4 pixel);
         * four terms of size <= max: 4 roundings of the sum. */
        double sum = 0.0, asum = 0.0;
        for (int a = 0; a < 2; a++)
          for (int b = 0; b < 2; b++) {
            dbtr_geom_pixel_center(&g, k, (double)r - 0.25 + 0.5 * a, (double)c - 0.25 + 0.5 * b, x);
            double v = dbtr_phantom_line_integral(&p, g.source + 3 * k, x);
            sum += v, asum += fabs(v);
          }
        CHECK_NEAR(two[i], 0.25 * sum, 4.0 * EPS * asum);
        maxv = fmax(maxv, one[i]);
      }
  /* A 44 mm breast of mu ~0.05/mm: central line integrals of 2 and more. */
  CHECK_GT(maxv, 2.0);
  free(one);
  free(two);
  dbtr_phantom_free(&p);
  dbtr_geom_free(&g);
}

DBTR_TEST(project_and_voxelize_thread_independent) {
  const dbtr_system *sys = dbtr_system_find("tiny");
  REQUIRE(sys);
  dbtr_geom g;
  REQUIRE_OK(dbtr_system_geometry(sys, &g));
  dbtr_phantom p;
  REQUIRE_OK(dbtr_phantom_make(&p, DBTR_PHANTOM_BREAST, &sys->grid, 11));
  size_t np = g.n_views * g.n_rows * g.n_cols, nv = sys->grid.nx * sys->grid.ny * sys->grid.nz;
  double *p1 = malloc(np * sizeof(double)), *p2 = malloc(np * sizeof(double));
  float *v1 = malloc(nv * sizeof(float)), *v2 = malloc(nv * sizeof(float));
  REQUIRE(p1 && p2 && v1 && v2);
  int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  CHECK_OK(dbtr_phantom_project(&p, &g, 2, p1));
  CHECK_OK(dbtr_phantom_voxelize(&p, &sys->grid, 2, v1));
  omp_set_num_threads(2);
  CHECK_OK(dbtr_phantom_project(&p, &g, 2, p2));
  CHECK_OK(dbtr_phantom_voxelize(&p, &sys->grid, 2, v2));
  omp_set_num_threads(saved);
  CHECK(memcmp(p1, p2, np * sizeof(double)) == 0);
  CHECK(memcmp(v1, v2, nv * sizeof(float)) == 0);
  free(p1), free(p2), free(v1), free(v2);
  dbtr_phantom_free(&p);
  dbtr_geom_free(&g);
}

/* ---- voxelization ---- */

DBTR_TEST(voxelize_sphere_volume) {
  /* 48^3 voxels of 0.5 mm centred on the origin, a sphere of radius 10 slightly off the
   * lattice, mu 0.5, 8^3 points per voxel. */
  dbtr_grid grid = {48, 48, 48, 0.5, 0.5, 0.5, {-11.75, -11.75, -11.75}};
  double r = 10.0, mu = 0.5;
  dbtr_shape s = shape(DBTR_SHAPE_ELLIPSOID, 0.13, -0.21, 0.07, r, r, r, mu);
  dbtr_phantom p = {"test", 20.0, 1, &s, NULL};
  size_t n = 48 * 48 * 48;
  float *v = malloc(n * sizeof(float));
  REQUIRE(v);
  int ss = 8;
  REQUIRE_OK(dbtr_phantom_voxelize(&p, &grid, ss, v));
  double sum = 0.0;
  for (size_t i = 0; i < n; i++) sum += (double)v[i];
  double integral = sum * 0.5 * 0.5 * 0.5;
  /* A voxel's value is mu x (its sub-cells whose centre is inside) / ss^3, so the integral
   * is mu x the volume of the union U of sub-cells (0.5/8 mm cubes) with centre inside.
   * Every point of a sub-cell lies within delta = half its diagonal of the centre, so
   * U lies inside the ball of radius r + delta, and every point within r - delta of the
   * centre has its sub-cell's centre inside, so U contains that ball:
   *   V(r - delta) <= |U| <= V(r + delta),  delta = sqrt(3)/2 x 0.0625 = 0.054 mm (+-1.6%).
   * The float rounding of each voxel (6e-8 relative) is far below that. */
  double delta = 0.5 * sqrt(3.0) * 0.5 / ss, k = 4.0 / 3.0 * PI * mu;
  CHECK_LE(k * pow(r - delta, 3.0), integral);
  CHECK_LE(integral, k * pow(r + delta, 3.0));
  free(v);
}

DBTR_TEST(voxelize_box_exact) {
  /* A box whose faces lie on voxel faces of the tiny grid (voxel faces are at every
   * integer x and y and every even z): no sample point lies on a face, so each voxel is
   * exactly 0.25 (a dyadic mu, exact in float) or 0. */
  const dbtr_system *sys = dbtr_system_find("tiny");
  REQUIRE(sys);
  const dbtr_grid *grid = &sys->grid;
  dbtr_shape s = shape(DBTR_SHAPE_BOX, 0.0, 30.0, 20.0, 10.0, 10.0, 10.0, 0.25);
  dbtr_phantom p = {"test", 20.0, 1, &s, NULL};
  size_t n = grid->nx * grid->ny * grid->nz, inside = 0, wrong = 0;
  float *v = malloc(n * sizeof(float));
  REQUIRE(v);
  REQUIRE_OK(dbtr_phantom_voxelize(&p, grid, 3, v));
  for (size_t z = 0; z < grid->nz; z++)
    for (size_t y = 0; y < grid->ny; y++)
      for (size_t x = 0; x < grid->nx; x++) {
        double cx = grid->origin[0] + (double)x * grid->dx, cy = grid->origin[1] + (double)y * grid->dy;
        double cz = grid->origin[2] + (double)z * grid->dz;
        int in = fabs(cx) < 10.0 && fabs(cy - 30.0) < 10.0 && fabs(cz - 20.0) < 10.0;
        inside += (size_t)in;
        if (v[(z * grid->ny + y) * grid->nx + x] != (in ? 0.25f : 0.0f)) wrong++;
      }
  /* 20 x 20 x 10 voxels of 1 x 1 x 2 mm fill the 20 x 20 x 20 mm box. */
  CHECK_EQ_INT(inside, 4000);
  CHECK_EQ_INT(wrong, 0);
  free(v);
}

/* ---- Poisson counts ---- */

/* Mean and variance of n samples of Poisson(i0 exp(-line)) against the true lam, within 5
 * standard errors: the sample mean's is sqrt(lam / n); the sample variance's is
 * sqrt((mu4 - sigma^4) / n) with the Poisson central moments mu4 = lam (1 + 3 lam) and
 * sigma^4 = lam^2, i.e. sqrt((lam + 2 lam^2) / n). Also checks P(X = k) for one k within 5
 * binomial standard errors sqrt(p (1 - p) / n). Five sigma: a false alarm once in 1.7
 * million runs per check. */
static void check_moments(double i0, double line, double lam, size_t n, uint64_t seed, double k) {
  double *li = malloc(n * sizeof(double)), *ii = malloc(n * sizeof(double)), *out = malloc(n * sizeof(double));
  REQUIRE(li && ii && out);
  for (size_t i = 0; i < n; i++) li[i] = line, ii[i] = i0;
  REQUIRE_OK(dbtr_poisson_counts(li, ii, n, seed, out));
  double mean = 0.0, var = 0.0, hits = 0.0;
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    mean += out[i];
    hits += out[i] == k;
    bad += !(out[i] >= 0.0 && floor(out[i]) == out[i]);
  }
  mean /= (double)n;
  for (size_t i = 0; i < n; i++) var += (out[i] - mean) * (out[i] - mean);
  var /= (double)(n - 1);
  CHECK_EQ_INT(bad, 0); /* counts are whole and non-negative */
  double dn = (double)n;
  CHECK_NEAR(mean, lam, 5.0 * sqrt(lam / dn));
  CHECK_NEAR(var, lam, 5.0 * sqrt((lam + 2.0 * lam * lam) / dn));
  double pk = exp(-lam + k * log(lam) - lgamma(k + 1.0));
  CHECK_NEAR(hits / dn, pk, 5.0 * sqrt(pk * (1.0 - pk) / dn));
  free(li), free(ii), free(out);
}

DBTR_TEST(poisson_moments) {
  /* Means 0.5 (the multiplication method), 30 and 5000 (PTRS), a million samples each;
   * 5000 comes through the attenuation: 1e4 x exp(-ln 2). P(X = k) at the mode. */
  check_moments(0.5, 0.0, 0.5, 1000000, 1, 0.0);
  check_moments(30.0, 0.0, 30.0, 1000000, 2, 30.0);
  check_moments(1e4, log(2.0), 5000.0, 1000000, 3, 5000.0);
  /* Just below and at the switch between the two methods. */
  check_moments(9.999, 0.0, 9.999, 1000000, 4, 9.0);
  check_moments(10.0, 0.0, 10.0, 1000000, 5, 10.0);
}

DBTR_TEST(poisson_threads_and_seeds) {
  size_t n = 100000;
  double *li = malloc(n * sizeof(double)), *ii = malloc(n * sizeof(double));
  double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double)), *c = malloc(n * sizeof(double));
  REQUIRE(li && ii && a && b && c);
  for (size_t i = 0; i < n; i++) li[i] = 0.0, ii[i] = 30.0;
  int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  CHECK_OK(dbtr_poisson_counts(li, ii, n, 42, a));
  omp_set_num_threads(2);
  CHECK_OK(dbtr_poisson_counts(li, ii, n, 42, b));
  CHECK_OK(dbtr_poisson_counts(li, ii, n, 43, c));
  omp_set_num_threads(saved);
  CHECK(memcmp(a, b, n * sizeof(double)) == 0);
  /* Two independent Poisson(30) draws agree with probability P = sum_k p_k^2 (about
   * 0.0515); with another seed the number of equal elements must not exceed n P by more
   * than 5 binomial standard deviations. */
  double pe = 0.0;
  for (int k = 0; k < 200; k++) { /* terms past k = 200 are below 1e-80 */
    double pk = exp(-30.0 + k * log(30.0) - lgamma(k + 1.0));
    pe += pk * pk;
  }
  size_t same = 0;
  for (size_t i = 0; i < n; i++) same += a[i] == c[i];
  CHECK_LE((double)same, (double)n * pe + 5.0 * sqrt((double)n * pe * (1.0 - pe)));
  free(li), free(ii), free(a), free(b), free(c);
}

DBTR_TEST(poisson_refuses_bad_means) {
  double line[3] = {0.0, (double)NAN, 1.0}, i0[3] = {10.0, 10.0, -1.0}, out[3];
  CHECK_EQ_INT(dbtr_poisson_counts(line, i0, 3, 1, out), DBTR_EINVAL);
  /* The smallest bad index is named: element 1 (NaN line integral). */
  CHECK_STR_CONTAINS(dbtr_errmsg(), "element 1");
  /* Zero i0 and an infinite line integral are a mean of 0: zero counts, no error. */
  double line2[2] = {(double)INFINITY, 0.0}, i02[2] = {10.0, 0.0};
  CHECK_OK(dbtr_poisson_counts(line2, i02, 2, 1, out));
  CHECK_NEAR(out[0], 0.0, 0.0);
  CHECK_NEAR(out[1], 0.0, 0.0);
}

/* ---- the phantoms on every preset grid ---- */

DBTR_TEST(phantoms_fit_every_grid) {
  for (const dbtr_system *const *it = dbtr_system_list(); *it; it++) {
    const dbtr_grid *grid = &(*it)->grid;
    double glo[3], ghi[3];
    grid_bounds(grid, glo, ghi);
    for (int kind = 0; kind < 2; kind++) {
      dbtr_phantom p;
      int rc = dbtr_phantom_make(&p, (dbtr_phantom_kind)kind, grid, 1);
      CHECK_OK(rc);
      if (rc) continue;
      CHECK_NEAR(p.energy_kev, 20.0, 0.0);
      /* More than the layers, the reference mass and one speck group alone. */
      CHECK(p.n_shapes > 10);
      size_t outside = 0;
      for (size_t i = 0; i < p.n_shapes; i++) {
        double lo[3], hi[3];
        shape_bounds(p.shapes + i, lo, hi);
        /* 1e-9 mm: the rounding of a bound computed from numbers of a few hundred mm. */
        for (int j = 0; j < 3; j++) outside += lo[j] < glo[j] - 1e-9 || hi[j] > ghi[j] + 1e-9;
      }
      CHECK_EQ_INT(outside, 0);
      if (kind == DBTR_PHANTOM_BREAST) {
        /* The reference mass is shapes[2]: a sphere of radius >= 4 mm, at the grid's mid x
         * and mid z, 40% of the interior depth from the chest wall, of carcinoma (0.0844/mm,
         * Johns & Yaffe 1987) at its centre: three additions of numbers < 0.1, 1e-15. */
        const dbtr_shape *m = p.shapes + 2;
        CHECK_EQ_INT(m->kind, DBTR_SHAPE_ELLIPSOID);
        CHECK(m->half[0] == m->half[1] && m->half[1] == m->half[2]);
        CHECK_LE(4.0, m->half[0]);
        CHECK_NEAR(m->center[0], 0.5 * (glo[0] + ghi[0]), 1e-9);
        CHECK_NEAR(m->center[2], 0.5 * (glo[2] + ghi[2]), 1e-9);
        CHECK(m->center[1] > glo[1] + 0.3 * (ghi[1] - glo[1]) && m->center[1] < glo[1] + 0.5 * (ghi[1] - glo[1]));
        CHECK_NEAR(dbtr_phantom_mu_at(&p, m->center), 0.0844, 1e-15);
      } else {
        /* The ACR insert: block, wax, 6 fibres, 5 x 6 specks, 5 masses. A speck centre holds
         * Al2O3 (0.885/mm): PMMA + (wax - PMMA) + (Al2O3 - wax), a few roundings. */
        CHECK_EQ_INT(p.n_shapes, 2 + 6 + 30 + 5);
        CHECK_NEAR(dbtr_phantom_mu_at(&p, p.shapes[8].center), 0.885, 1e-15);
      }
      dbtr_phantom_free(&p);
      dbtr_phantom_free(&p); /* safe twice */
    }
  }
}

DBTR_TEST(breast_seed_and_errors) {
  const dbtr_grid *grid = &dbtr_system_find("tiny")->grid;
  dbtr_phantom a, b, c;
  REQUIRE_OK(dbtr_phantom_make(&a, DBTR_PHANTOM_BREAST, grid, 5));
  REQUIRE_OK(dbtr_phantom_make(&b, DBTR_PHANTOM_BREAST, grid, 5));
  REQUIRE_OK(dbtr_phantom_make(&c, DBTR_PHANTOM_BREAST, grid, 6));
  /* The same seed builds the same phantom; another seed moves the random inclusions but
   * not the layers or the reference mass (shapes 0-2). */
  CHECK_EQ_INT(a.n_shapes, b.n_shapes);
  CHECK(a.n_shapes == b.n_shapes && memcmp(a.shapes, b.shapes, a.n_shapes * sizeof(dbtr_shape)) == 0);
  CHECK(memcmp(a.shapes, c.shapes, 3 * sizeof(dbtr_shape)) == 0);
  CHECK(memcmp(a.shapes[3].center, c.shapes[3].center, sizeof a.shapes[3].center) != 0);
  dbtr_phantom_free(&a), dbtr_phantom_free(&b), dbtr_phantom_free(&c);
  CHECK_EQ_INT(dbtr_phantom_kind_from_name("breast"), DBTR_PHANTOM_BREAST);
  CHECK_EQ_INT(dbtr_phantom_kind_from_name("acr"), DBTR_PHANTOM_ACR);
  CHECK_EQ_INT(dbtr_phantom_kind_from_name("cow"), -1);
  /* A 4 mm grid is below the breast's 20 x 10 x 10 mm minimum: refused by name, and the
   * phantom is left empty. */
  dbtr_grid small = {4, 4, 4, 1.0, 1.0, 1.0, {0.5, 0.5, 0.5}};
  CHECK_EQ_INT(dbtr_phantom_make(&a, DBTR_PHANTOM_BREAST, &small, 1), DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "breast phantom");
  CHECK(a.shapes == NULL && a.n_shapes == 0);
  CHECK_EQ_INT(dbtr_phantom_make(&a, (dbtr_phantom_kind)7, grid, 1), DBTR_EINVAL); /* no kind 7 */
  dbtr_geom g;
  REQUIRE_OK(dbtr_system_geometry(dbtr_system_find("tiny"), &g));
  double out[1];
  CHECK_EQ_INT(dbtr_phantom_project(&a, &g, 0, out), DBTR_EINVAL); /* ss must be >= 1 */
  dbtr_geom_free(&g);
}

DBTR_TEST_MAIN(chord_sphere_diameter, chord_ellipsoid_oblique, chord_cylinder_along_and_across, chord_box_diagonal,
               clip_box_halves_ellipsoid, segment_ending_inside, mu_at_layers, breast_line_integral_vs_quadrature,
               project_matches_line_integral, project_and_voxelize_thread_independent, voxelize_sphere_volume,
               voxelize_box_exact, poisson_moments, poisson_threads_and_seeds, poisson_refuses_bad_means,
               phantoms_fit_every_grid, breast_seed_and_errors)
