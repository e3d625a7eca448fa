/* quality/quality.c: the per-object measures (quality/quality.h, docs/quality.md).
 *
 * Each object gets two fixed sets of voxel columns, chosen once from the object's geometry
 * and used in every slice, so that the ASF compares like with like:
 *   - the object's region: the columns whose voxel in the centre slice lies whole inside the
 *     object (all 8 corners: the shapes are convex); failing that, whose square at the
 *     centre's height does (4 corners); failing that, the one column under the centre;
 *   - the background's region: a square frame around the object's bounding box (gap and
 *     width in quality.h), keeping only the columns whose voxel in the centre slice lies whole
 *     inside the object's surroundings (the shape it lies in) and clear of the bounding box
 *     of every other shape but those it lies in.
 * So on the ground truth every voxel of both regions holds one value, and the measured
 * contrast is the documented one (to the rounding of the stored volume). */
#include "quality/quality.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "recon/error.h"

typedef struct {
  const void *vol;
  dbtr_precision prec;
  const dbtr_grid *g;
} volume;

static double at(const volume *v, size_t i) {
  return v->prec == DBTR_PREC_DOUBLE ? ((const double *)v->vol)[i] : (double)((const float *)v->vol)[i];
}

static double coord(const dbtr_grid *g, int axis, size_t i) {
  double d = axis == 0 ? g->dx : axis == 1 ? g->dy : g->dz;
  return g->origin[axis] + (double)i * d;
}

/* Whether the box [c - h, c + h] (its 8 corners; 4 when h[2] is 0) lies inside s. */
static int box_inside(const dbtr_shape *s, const double c[3], const double h[3]) {
  for (int k = 0; k < 8; k++) {
    double x[3] = {c[0] + (k & 1 ? h[0] : -h[0]), c[1] + (k & 2 ? h[1] : -h[1]), c[2] + (k & 4 ? h[2] : -h[2])};
    if (!dbtr_shape_inside(s, x)) return 0;
  }
  return 1;
}

static int boxes_meet(const double alo[3], const double ahi[3], const double blo[3], const double bhi[3]) {
  for (int j = 0; j < 3; j++)
    if (ahi[j] < blo[j] || alo[j] > bhi[j]) return 0;
  return 1;
}

/* 1 if shape a is i itself or one of the shapes i lies in. */
static int is_ancestor(const dbtr_phantom *p, size_t i, size_t a) {
  for (long long k = (long long)i; k >= 0; k = p->info[k].surround)
    if ((size_t)k == a) return 1;
  return 0;
}

/* Column index range [*i0, *i1] of axis whose centres lie within [lo, hi]; 0 if none. */
static int col_range(const dbtr_grid *g, int axis, double lo, double hi, size_t *i0, size_t *i1) {
  size_t n = axis == 0 ? g->nx : g->ny;
  double d = axis == 0 ? g->dx : g->dy;
  double a = ceil((lo - g->origin[axis]) / d), b = floor((hi - g->origin[axis]) / d);
  if (a < 0.0) a = 0.0;
  if (b > (double)n - 1.0) b = (double)n - 1.0;
  if (b < a) return 0;
  *i0 = (size_t)a, *i1 = (size_t)b;
  return 1;
}

typedef struct {
  size_t *cols; /* y * nx + x */
  size_t n, cap;
} colset;

static int push(colset *c, size_t v) {
  if (c->n == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 256;
    size_t *grown = realloc(c->cols, cap * sizeof *grown);
    if (!grown) return dbtr_err(DBTR_ENOMEM, "quality: out of memory for a region");
    c->cols = grown, c->cap = cap;
  }
  c->cols[c->n++] = v;
  return 0;
}

/* The object's region (see the top of the file); *partial 1 when the first rule found none. */
static int object_region(const dbtr_grid *g, const dbtr_shape *s, size_t kc, colset *out, int *partial) {
  double lo[3], hi[3];
  dbtr_shape_bounds(s, lo, hi);
  size_t x0, x1, y0, y1;
  int rc = 0, any = col_range(g, 0, lo[0], hi[0], &x0, &x1) && col_range(g, 1, lo[1], hi[1], &y0, &y1);
  double h[3] = {0.5 * g->dx, 0.5 * g->dy, 0.5 * g->dz};
  *partial = 0;
  for (int rule = 0; rule < 2 && any && !out->n && !rc; rule++) {
    double c[3] = {0.0, 0.0, rule == 0 ? coord(g, 2, kc) : s->center[2]};
    if (rule == 1) h[2] = 0.0, *partial = 1;
    for (size_t y = y0; y <= y1 && !rc; y++)
      for (size_t x = x0; x <= x1 && !rc; x++) {
        c[0] = coord(g, 0, x), c[1] = coord(g, 1, y);
        if (box_inside(s, c, h)) rc = push(out, y * g->nx + x);
      }
  }
  if (!out->n && !rc) {
    *partial = 1;
    double fx = round((s->center[0] - g->origin[0]) / g->dx), fy = round((s->center[1] - g->origin[1]) / g->dy);
    rc = push(out, (size_t)fy * g->nx + (size_t)fx);
  }
  return rc;
}

/* The background's region (see the top of the file). */
static int background_region(const dbtr_grid *g, const dbtr_phantom *p, size_t i, const double *boxes, size_t kc,
                             colset *out) {
  const double *lo = boxes + 6 * i, *hi = lo + 3;
  double gap[2] = {DBTR_QUALITY_GAP * g->dx, DBTR_QUALITY_GAP * g->dy};
  double w = fmax(DBTR_QUALITY_MIN_WIDTH * fmax(g->dx, g->dy), 0.5 * fmax(hi[0] - lo[0], hi[1] - lo[1]));
  size_t x0, x1, y0, y1;
  if (!col_range(g, 0, lo[0] - gap[0] - w, hi[0] + gap[0] + w, &x0, &x1) ||
      !col_range(g, 1, lo[1] - gap[1] - w, hi[1] + gap[1] + w, &y0, &y1))
    return 0;
  long long sur = p->info[i].surround;
  double h[3] = {0.5 * g->dx, 0.5 * g->dy, 0.5 * g->dz}, zc = coord(g, 2, kc);
  for (size_t y = y0; y <= y1; y++)
    for (size_t x = x0; x <= x1; x++) {
      double c[3] = {coord(g, 0, x), coord(g, 1, y), zc};
      double vlo[3] = {c[0] - h[0], c[1] - h[1], c[2] - h[2]}, vhi[3] = {c[0] + h[0], c[1] + h[1], c[2] + h[2]};
      /* Outside the object's box grown by the gap, in x or in y. */
      if (vhi[0] >= lo[0] - gap[0] && vlo[0] <= hi[0] + gap[0] && vhi[1] >= lo[1] - gap[1] && vlo[1] <= hi[1] + gap[1])
        continue;
      if (sur >= 0 && !box_inside(p->shapes + sur, c, h)) continue;
      int clear = 1;
      for (size_t j = 0; j < p->n_shapes && clear; j++)
        if (!is_ancestor(p, i, j) && boxes_meet(vlo, vhi, boxes + 6 * j, boxes + 6 * j + 3)) clear = 0;
      if (clear) {
        int rc = push(out, y * g->nx + x);
        if (rc) return rc;
      }
    }
  return 0;
}

/* Mean (and with sd, the sample standard deviation) of the region's voxels in slice k, in
 * double, two passes. */
static double region_mean(const volume *v, const colset *c, size_t k, double *sd) {
  size_t base = k * v->g->nx * v->g->ny;
  double sum = 0.0;
  for (size_t i = 0; i < c->n; i++) sum += at(v, base + c->cols[i]);
  double mean = sum / (double)c->n;
  if (sd) {
    double ss = 0.0;
    for (size_t i = 0; i < c->n; i++) {
      double d = at(v, base + c->cols[i]) - mean;
      ss += d * d;
    }
    *sd = c->n > 1 ? sqrt(ss / (double)(c->n - 1)) : (double)NAN;
  }
  return mean;
}

double dbtr_quality_fwhm(const double *profile, size_t n, size_t peak, double dz) {
  double right = (double)NAN, left = (double)NAN;
  for (size_t k = peak + 1; k < n; k++)
    if (profile[k] < 0.5) {
      right = (double)(k - 1) + (profile[k - 1] - 0.5) / (profile[k - 1] - profile[k]);
      break;
    }
  for (size_t k = peak; k-- > 0;)
    if (profile[k] < 0.5) {
      left = (double)(k + 1) - (profile[k + 1] - 0.5) / (profile[k + 1] - profile[k]);
      break;
    }
  return (right - left) * dz;
}

/* One object: its regions, then the contrast in every slice, the focus, CNR, ASF, FWHM. */
static int measure_one(const volume *v, const dbtr_phantom *p, const double *boxes, size_t i,
                       dbtr_quality_object *o) {
  const dbtr_grid *g = v->g;
  const dbtr_shape *s = p->shapes + i;
  o->object = i;
  o->expected = p->info[i].contrast;
  double f[3];
  size_t n[3] = {g->nx, g->ny, g->nz};
  double d[3] = {g->dx, g->dy, g->dz};
  for (int j = 0; j < 3; j++) {
    f[j] = round((s->center[j] - g->origin[j]) / d[j]);
    if (!(f[j] >= 0.0 && f[j] <= (double)n[j] - 1.0)) return 0; /* outside: not measured */
  }
  o->measured = 1;
  o->center_slice = (size_t)f[2];
  colset obj = {0}, bg = {0};
  int rc = object_region(g, s, o->center_slice, &obj, &o->partial);
  if (!rc) rc = background_region(g, p, i, boxes, o->center_slice, &bg);
  if (!rc && (!(o->contrast_z = malloc(g->nz * sizeof(double))) || !(o->asf = malloc(g->nz * sizeof(double)))))
    rc = dbtr_err(DBTR_ENOMEM, "quality: out of memory for the depth profiles");
  if (rc) goto done;
  o->n_object = obj.n, o->n_background = bg.n;
  for (size_t k = 0; k < g->nz; k++)
    o->contrast_z[k] = bg.n ? region_mean(v, &obj, k, NULL) - region_mean(v, &bg, k, NULL) : (double)NAN;
  /* The focus: the largest contrast in the expected sign (the measured one's at the centre
   * slice where none is documented); ties go to the slice nearest the centre. */
  double sign = isfinite(o->expected) && o->expected != 0.0 ? copysign(1.0, o->expected)
                                                            : (o->contrast_z[o->center_slice] < 0.0 ? -1.0 : 1.0);
  size_t best = o->center_slice;
  for (size_t k = 0; k < g->nz; k++) {
    double a = sign * o->contrast_z[k], b = sign * o->contrast_z[best];
    size_t dk = k > o->center_slice ? k - o->center_slice : o->center_slice - k;
    size_t db = best > o->center_slice ? best - o->center_slice : o->center_slice - best;
    if (a > b || (a == b && dk < db)) best = k;
  }
  o->focus_slice = best;
  o->mean_object = region_mean(v, &obj, best, NULL);
  o->mean_background = bg.n ? region_mean(v, &bg, best, &o->sd_background) : (double)NAN;
  if (!bg.n) o->sd_background = (double)NAN;
  o->contrast = o->contrast_z[best];
  o->cnr = o->contrast / o->sd_background;
  for (size_t k = 0; k < g->nz; k++) o->asf[k] = o->contrast_z[k] / o->contrast;
  o->fwhm = o->contrast != 0.0 && isfinite(o->contrast) ? dbtr_quality_fwhm(o->asf, g->nz, best, g->dz) : (double)NAN;
done:
  free(obj.cols);
  free(bg.cols);
  return rc;
}

int dbtr_quality_measure(dbtr_quality *q, const void *vol, dbtr_precision prec, const dbtr_grid *grid,
                         const dbtr_phantom *p) {
  memset(q, 0, sizeof *q);
  size_t n_vox;
  if (!vol || !grid || !p) return dbtr_err(DBTR_EINVAL, "quality: NULL argument");
  if (prec != DBTR_PREC_FLOAT && prec != DBTR_PREC_DOUBLE)
    return dbtr_err(DBTR_EINVAL, "quality: the volume must be float or double");
  int rc = dbtr_grid_count(grid, &n_vox);
  if (rc) return rc;
  if (!(grid->dx > 0.0 && grid->dy > 0.0 && grid->dz > 0.0))
    return dbtr_err(DBTR_EINVAL, "quality: voxel size %g x %g x %g mm: must be positive", grid->dx, grid->dy, grid->dz);
  size_t n = 0;
  for (size_t i = 0; i < p->n_shapes; i++) n += p->info[i].target != 0;
  double *boxes = NULL;
  rc = dbtr_alloc((void **)&boxes, p->n_shapes ? p->n_shapes : 1, 6 * sizeof(double), "quality: bounding boxes");
  if (!rc) rc = dbtr_alloc((void **)&q->obj, n ? n : 1, sizeof *q->obj, "quality: objects");
  if (rc) {
    free(boxes);
    return rc;
  }
  memset(q->obj, 0, (n ? n : 1) * sizeof *q->obj);
  q->nz = grid->nz, q->dz = grid->dz;
  for (size_t j = 0; j < p->n_shapes; j++) dbtr_shape_bounds(p->shapes + j, boxes + 6 * j, boxes + 6 * j + 3);
  volume v = {vol, prec, grid};
  for (size_t i = 0; i < p->n_shapes && !rc; i++)
    if (p->info[i].target) rc = measure_one(&v, p, boxes, i, &q->obj[q->n++]);
  free(boxes);
  if (rc) dbtr_quality_free(q);
  return rc;
}

void dbtr_quality_free(dbtr_quality *q) {
  if (!q) return;
  for (size_t i = 0; q->obj && i < q->n; i++) {
    free(q->obj[i].contrast_z);
    free(q->obj[i].asf);
  }
  free(q->obj);
  memset(q, 0, sizeof *q);
}
