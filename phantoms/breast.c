/* phantoms/breast.c: a compressed-breast phantom fitted to a reconstruction grid.
 *
 * Layers are additive (phantoms/phantom.h): the outer half cylinder carries the skin's
 * mu, the inner one adds (adipose - skin), and every inclusion adds (its tissue - the
 * tissue around it). Inclusions never overlap one another (their bounding boxes are kept
 * apart), so every point of the phantom holds exactly one tissue's mu.
 *
 * The shape list, in order (docs/phantoms.md, "Breast"):
 *   [0] skin: half elliptic cylinder against the chest wall, axis along z
 *   [1] adipose interior: the same, smaller by the skin thickness
 *   [2] THE REFERENCE MASS: a sphere of carcinoma (radius 5 mm on every preset's grid)
 *       at the middle of the breast. Tests read shapes[2] for its centre (center[]) and
 *       radius (half[0]); it is the first mass of the list.
 *   then a second mass, two calcification clusters, fibres, glandular ellipsoids, and
 *   last a small mass inside the largest glandular ellipsoid.
 * The random placement is a pure function of the seed (phantoms/random.h). */
#include <math.h>
#include <string.h>

#include "phantoms/random.h"
#include "phantoms/builders.h"
#include "phantoms/shapes.h"
#include "recon/error.h"

#define DBTR__PI 3.14159265358979323846
/* The breast builder's random stream (the ACR phantom uses none). */
#define DBTR__STREAM_BREAST 1
/* The shape every inclusion but the last small mass lies in: the adipose interior. */
#define DBTR__INTERIOR 1

/* What each kind of shape is (phantoms/shapes.h, dbtr__what). */
static const dbtr__what skin_w = {"layer", "skin", DBTR__MU_SKIN, -1, 0};
static const dbtr__what adipose_w = {"layer", "adipose", DBTR__MU_ADIPOSE, 0, 0};
static const dbtr__what mass_w = {"mass", "carcinoma", DBTR__MU_CARCINOMA, DBTR__INTERIOR, 1};
static const dbtr__what calc_w = {"calcification", "hydroxyapatite", DBTR__MU_CALCIFICATION, DBTR__INTERIOR, 1};
static const dbtr__what fibre_w = {"fibre", "glandular", DBTR__MU_GLANDULAR, DBTR__INTERIOR, 1};
static const dbtr__what gland_w = {"gland", "glandular", DBTR__MU_GLANDULAR, DBTR__INTERIOR, 0};

typedef struct {
  dbtr__builder b;
  dbtr__rng rng;
  double xc, y0, zc;  /* chest wall centre of the breast, mm */
  double ax, ay, hz;  /* interior (inside the skin): semi-axes along x and y, half thickness */
  double scale;       /* 1 on grids of clinical size, smaller on small grids */
  double min_size;    /* smallest diameter an inclusion gets: half the larger in-plane voxel side */
} breast;

/* Whether the box [lo, hi] lies inside the interior half cylinder: the region is convex,
 * so it is enough that the box's four xy corners are inside the half ellipse. */
static int box_in_interior(const breast *br, const double lo[3], const double hi[3]) {
  if (lo[1] < br->y0 || lo[2] < br->zc - br->hz || hi[2] > br->zc + br->hz) return 0;
  for (int i = 0; i < 4; i++) {
    double x = (i & 1 ? hi[0] : lo[0]) - br->xc, y = (i & 2 ? hi[1] : lo[1]) - br->y0;
    if ((x / br->ax) * (x / br->ax) + (y / br->ay) * (y / br->ay) > 1.0) return 0;
  }
  return 1;
}

/* Whether a candidate inclusion fits: inside the interior and clear of every inclusion
 * placed so far (shapes from index 2 on). */
static int fits(const breast *br, const dbtr_shape *s) {
  double lo[3], hi[3];
  dbtr_shape_bounds(s, lo, hi);
  if (!box_in_interior(br, lo, hi)) return 0;
  const dbtr_phantom *p = br->b.p;
  for (size_t j = 2; j < p->n_shapes; j++) {
    double plo[3], phi[3];
    dbtr_shape_bounds(p->shapes + j, plo, phi);
    if (lo[0] < phi[0] && hi[0] > plo[0] && lo[1] < phi[1] && hi[1] > plo[1] && lo[2] < phi[2] && hi[2] > plo[2])
      return 0;
  }
  return 1;
}

/* Moves s to random centres in [lo, hi] until it fits, then appends it. Returns 1 if
 * placed, 0 if no centre fitted in `tries` draws (the inclusion is left out), or an error. */
static int place(breast *br, dbtr_shape *s, const dbtr__what *w, const double lo[3], const double hi[3], int tries) {
  for (int t = 0; t < tries; t++) {
    for (int j = 0; j < 3; j++) s->center[j] = dbtr__rng_range(&br->rng, lo[j], hi[j]);
    if (fits(br, s)) {
      int rc = dbtr__builder_push(&br->b, s, w);
      return rc ? rc : 1;
    }
  }
  return 0;
}

/* The interior's bounding box shrunk by `margin` on every side. */
static void interior_box(const breast *br, double margin, double lo[3], double hi[3]) {
  lo[0] = br->xc - br->ax + margin, hi[0] = br->xc + br->ax - margin;
  lo[1] = br->y0 + margin, hi[1] = br->y0 + br->ay - margin;
  lo[2] = br->zc - br->hz + margin, hi[2] = br->zc + br->hz - margin;
}

/* A second, ellipsoidal mass of 3-10 mm in the fat, in any orientation about z. */
static int add_second_mass(breast *br) {
  double s = br->scale, lo[3], hi[3];
  dbtr_shape m = dbtr__shape(DBTR_SHAPE_ELLIPSOID, 0, 0, 0, s * dbtr__rng_range(&br->rng, 2.0, 5.0),
                             s * dbtr__rng_range(&br->rng, 1.5, 4.0), s * dbtr__rng_range(&br->rng, 1.5, 3.0),
                             DBTR__MU_CARCINOMA - DBTR__MU_ADIPOSE);
  dbtr__shape_turn_z(&m, dbtr__rng_range(&br->rng, 0.0, DBTR__PI));
  interior_box(br, 0.0, lo, hi);
  int rc = place(br, &m, &mass_w, lo, hi, 1000);
  return rc < 0 ? rc : 0;
}

/* A cluster of 5 to 8 hydroxyapatite specks of 0.2-0.5 mm (never under half a voxel)
 * within a 6 mm cube (3 mm on grids of clinical size from its centre). */
static int add_calc_cluster(breast *br) {
  double ball_r = 3.0 * br->scale, lo[3], hi[3];
  dbtr_shape ball = dbtr__shape(DBTR_SHAPE_ELLIPSOID, 0, 0, 0, ball_r, ball_r, ball_r, 0.0);
  interior_box(br, ball_r, lo, hi);
  int found = 0;
  for (int t = 0; t < 1000 && !found; t++) {
    for (int j = 0; j < 3; j++) ball.center[j] = dbtr__rng_range(&br->rng, lo[j], hi[j]);
    found = fits(br, &ball);
  }
  if (!found) return 0;
  int n = 5 + (int)(4.0 * dbtr__rng_uniform(&br->rng));
  for (int i = 0; i < n; i++) {
    double r = 0.5 * fmax(dbtr__rng_range(&br->rng, 0.2, 0.5), br->min_size);
    dbtr_shape c = dbtr__shape(DBTR_SHAPE_ELLIPSOID, 0, 0, 0, r, r, r, DBTR__MU_CALCIFICATION - DBTR__MU_ADIPOSE);
    double clo[3], chi[3];
    for (int j = 0; j < 3; j++) clo[j] = ball.center[j] - (ball_r - r), chi[j] = ball.center[j] + (ball_r - r);
    int rc = place(br, &c, &calc_w, clo, chi, 200);
    if (rc < 0) return rc;
  }
  return 0;
}

/* A fibre (a strand of fibrous tissue): a thin cylinder lying in a random direction in
 * the xy plane, 11-25 mm long on clinical grids. */
static int add_fibre(breast *br) {
  double r = 0.5 * fmax(dbtr__rng_range(&br->rng, 0.2, 0.5), br->min_size);
  double half_len = br->scale * dbtr__rng_range(&br->rng, 5.5, 12.5), phi = dbtr__rng_range(&br->rng, 0.0, DBTR__PI);
  dbtr_shape f = dbtr__shape(DBTR_SHAPE_CYLINDER, 0, 0, 0, r, r, half_len, DBTR__MU_GLANDULAR - DBTR__MU_ADIPOSE);
  /* Local z (the axis) along (cos phi, sin phi, 0); local x and y complete a right-handed
   * frame: x = (-sin phi, cos phi, 0), y = (0, 0, 1). */
  double frame[3][3] = {{-sin(phi), cos(phi), 0.0}, {0.0, 0.0, 1.0}, {cos(phi), sin(phi), 0.0}};
  memcpy(f.axes, frame, sizeof frame);
  double lo[3], hi[3];
  interior_box(br, 0.0, lo, hi);
  int rc = place(br, &f, &fibre_w, lo, hi, 500);
  return rc < 0 ? rc : 0;
}

/* Glandular tissue: flattened ellipsoids turned about z, in the central region. Returns
 * the index of the one with the largest smallest semi-axis through *best (or leaves it). */
static int add_glandular(breast *br, size_t *best, double *best_r) {
  double m = fmin(br->ax, br->ay), lo[3], hi[3];
  dbtr_shape g = dbtr__shape(DBTR_SHAPE_ELLIPSOID, 0, 0, 0, m * dbtr__rng_range(&br->rng, 0.05, 0.12),
                             m * dbtr__rng_range(&br->rng, 0.05, 0.12), br->hz * dbtr__rng_range(&br->rng, 0.15, 0.3),
                             DBTR__MU_GLANDULAR - DBTR__MU_ADIPOSE);
  dbtr__shape_turn_z(&g, dbtr__rng_range(&br->rng, 0.0, DBTR__PI));
  lo[0] = br->xc - 0.6 * br->ax, hi[0] = br->xc + 0.6 * br->ax;
  lo[1] = br->y0 + 0.1 * br->ay, hi[1] = br->y0 + 0.75 * br->ay;
  lo[2] = br->zc - 0.6 * br->hz, hi[2] = br->zc + 0.6 * br->hz;
  int rc = place(br, &g, &gland_w, lo, hi, 200);
  if (rc < 0) return rc;
  double r = fmin(g.half[0], fmin(g.half[1], g.half[2]));
  if (rc == 1 && r > *best_r) *best = br->b.p->n_shapes - 1, *best_r = r;
  return 0;
}

/* The two breast layers and the reference mass, all placed by rule, not at random. */
static int add_fixed(breast *br, const double glo[3], const double ghi[3], double skin) {
  double outer_hz = br->hz + skin;
  dbtr_shape s = dbtr__shape(DBTR_SHAPE_CYLINDER, br->xc, br->y0, br->zc, br->ax + skin, br->ay + skin, outer_hz,
                             DBTR__MU_SKIN);
  /* The clip box keeps the half y >= chest wall; its other faces are the grid's. */
  double clo[3] = {glo[0], br->y0, glo[2]};
  dbtr__shape_clip(&s, clo, ghi);
  int rc = dbtr__builder_push(&br->b, &s, &skin_w);
  if (rc) return rc;
  s.half[0] = br->ax, s.half[1] = br->ay, s.half[2] = br->hz;
  s.mu = DBTR__MU_ADIPOSE - DBTR__MU_SKIN;
  rc = dbtr__builder_push(&br->b, &s, &adipose_w);
  if (rc) return rc;
  double r = 5.0 * br->scale;
  dbtr_shape m = dbtr__shape(DBTR_SHAPE_ELLIPSOID, br->xc, br->y0 + 0.4 * br->ay, br->zc, r, r, r,
                             DBTR__MU_CARCINOMA - DBTR__MU_ADIPOSE);
  return dbtr__builder_push(&br->b, &m, &mass_w);
}

int dbtr__make_breast(dbtr_phantom *p, const dbtr_grid *grid, uint64_t seed) {
  double glo[3], ghi[3];
  dbtr__grid_bounds(grid, glo, ghi);
  double width = ghi[0] - glo[0], depth = ghi[1] - glo[1], thick = ghi[2] - glo[2];
  /* Below these sizes the inclusions (3-10 mm) cannot be laid out meaningfully. */
  if (width < 20.0 || depth < 10.0 || thick < 10.0)
    return dbtr_err(DBTR_EINVAL,
                    "breast phantom: grid of %.1f x %.1f x %.1f mm: needs at least 20 x 10 x 10 mm (x, y, z)", width,
                    depth, thick);
  p->name = "breast";
  p->energy_kev = DBTR__ENERGY_KEV;
  breast br;
  memset(&br, 0, sizeof br);
  br.b.p = p;
  dbtr__rng_seed(&br.rng, seed, DBTR__STREAM_BREAST);
  /* The compressed breast fills the thickness but for a gap of up to 2 mm above and below,
   * spans 90% of the width (semi-axis 45%) and 90% of the depth from the chest wall. */
  double gap = fmin(2.0, 0.05 * thick), hz_out = 0.5 * thick - gap;
  double ax_out = 0.45 * width, ay_out = 0.9 * depth;
  double skin = fmin(1.5, 0.1 * fmin(hz_out, fmin(ax_out, ay_out)));
  br.xc = 0.5 * (glo[0] + ghi[0]), br.y0 = glo[1], br.zc = 0.5 * (glo[2] + ghi[2]);
  br.ax = ax_out - skin, br.ay = ay_out - skin, br.hz = hz_out - skin;
  /* Inclusion sizes are clinical (scale 1) unless the reference mass's 5 mm radius would
   * exceed 0.3 of the interior's smallest semi-size (below a 40 mm thick breast); 0.3
   * keeps the mass at 0.4 of the depth inside the half ellipse: 0.3^2 + 0.7^2 < 1. */
  br.scale = fmin(1.0, 0.3 * fmin(br.hz, fmin(br.ax, br.ay)) / 5.0);
  br.min_size = 0.5 * fmax(grid->dx, grid->dy);
  int rc = add_fixed(&br, glo, ghi, skin);
  if (!rc) rc = add_second_mass(&br);
  for (int i = 0; i < 2 && !rc; i++) rc = add_calc_cluster(&br);
  for (int i = 0; i < 4 && !rc; i++) rc = add_fibre(&br);
  size_t best = 0;
  double best_r = 0.0;
  for (int i = 0; i < 24 && !rc; i++) rc = add_glandular(&br, &best, &best_r);
  if (!rc && best > 0) {
    /* A small carcinoma inside glandular tissue: it adds (carcinoma - glandular), and half
     * the smallest semi-axis keeps the sphere inside the ellipsoid whatever its turn. */
    const dbtr_shape *g = p->shapes + best;
    double r = 0.5 * best_r;
    dbtr_shape m = dbtr__shape(DBTR_SHAPE_ELLIPSOID, g->center[0], g->center[1], g->center[2], r, r, r,
                               DBTR__MU_CARCINOMA - DBTR__MU_GLANDULAR);
    dbtr__what in_gland = mass_w;
    in_gland.surround = (long long)best;
    rc = dbtr__builder_push(&br.b, &m, &in_gland);
  }
  return rc;
}
