/* io/dicom_geom.c: per-view geometry from DICOM attributes, in the presets' frame
 * (docs/dicom.md, "Geometry", gives the reading of every sign used here).
 *
 * Single-frame images state an angle and a distance per view; the pivot height and the
 * detector's motion come from the caller. A multi-frame Breast Projection X-Ray Image
 * states each frame's source and detector in the isocenter reference system (PS3.3
 * C.8.31.6); that frame is moved rigidly so that frame 1's detector lies as a preset's. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/dicom_internal.h"
#include "recon/error.h"

#define DBTR__PI 3.14159265358979323846

int dbtr__need(const dbtr__dcm *d, uint32_t tag, long frame, double *out, int count) {
  char where[1200];
  double v[16];
  int n = dbtr__dcm_numbers(d, tag, frame, v, 16);
  if (n < 0) return n;
  if (n == 0)
    return dbtr_err(DBTR_EFORMAT, "%s: " DBTR__TAG_FMT ": missing", dbtr__dcm_where(d, frame, where, sizeof where),
                    DBTR__TAG_ARGS(tag));
  if (n != count)
    return dbtr_err(DBTR_EFORMAT, "%s: " DBTR__TAG_FMT ": %d values; %d expected",
                    dbtr__dcm_where(d, frame, where, sizeof where), DBTR__TAG_ARGS(tag), n, count);
  memcpy(out, v, (size_t)count * sizeof *v);
  return 0;
}

static double dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* dbtr_geom_check of view k alone, its refusal naming where the view's values come from
 * (where: a single-frame view's file, or "bpxi.dcm: frame 4"), not the first file of a folder
 * and a view counted from 0. The check names a view by its index in the geometry it is given,
 * always "view 0" here: that part of its message gives way to the place. */
static int check_view(const dbtr_geom *g, size_t k, const char *where) {
  dbtr_geom one = {1, g->n_rows, g->n_cols, g->source + 3 * k, g->detector_center + 3 * k, g->detector_u + 3 * k,
                   g->detector_v + 3 * k};
  int rc = dbtr_geom_check(&one, "");
  if (!rc) return 0;
  const char *msg = dbtr_errmsg(), *prefix = ": view 0: ";
  char reason[1024];
  snprintf(reason, sizeof reason, "%s", strncmp(msg, prefix, strlen(prefix)) == 0 ? msg + strlen(prefix) : msg);
  return dbtr_err(rc, "%s: %s", where, reason);
}

int dbtr__geom_single(dbtr_geom *g, const dbtr__sf_view *views, size_t n, size_t rows, size_t cols,
                      const double spacing[2], const dbtr_dicom_opts *o) {
  int rc = dbtr_geom_init(g, n, rows, cols);
  double h = o->pivot_mm, pr = spacing[0], pc = spacing[1];
  for (size_t k = 0; k < n && !rc; k++) {
    double a = views[k].angle_deg * DBTR__PI / 180.0, sid = views[k].sid_mm;
    /* A rotating detector turns by the source's angle about the pivot's axis, the line
     * (t, 0, h) along y: (x, y, z) goes to (x cos t + (z - h) sin t, y, h - x sin t + (z - h) cos t). */
    double t = o->detector == DBTR_DETECTOR_ROTATING ? a : 0.0;
    double chest[3] = {0.0, 0.0, 0.0}; /* the detector centre on the chest-wall line */
    if (t != 0.0) {
      chest[0] = -h * sin(t);
      chest[2] = h - h * cos(t);
    }
    double *s = g->source + 3 * k, *c = g->detector_center + 3 * k;
    double *u = g->detector_u + 3 * k, *v = g->detector_v + 3 * k;
    c[0] = chest[0];
    c[1] = 0.5 * (double)rows * pr;
    c[2] = chest[2];
    u[0] = pc * cos(t);
    u[1] = 0.0;
    u[2] = -pc * sin(t);
    v[0] = v[2] = 0.0;
    v[1] = pr;
    /* The source is pivot + R d on its arc, d = (sin a, 0, cos a). Distance Source to
     * Detector is measured to the detector centre on the chest-wall line (PS3.3 C.8.11.7),
     * so R solves |pivot + R d - chest| = SID: R^2 + 2 b R + |pivot - chest|^2 - SID^2 = 0. */
    double d[3] = {sin(a), 0.0, cos(a)}, p[3] = {-chest[0], 0.0, h - chest[2]};
    double b = dot(d, p), disc = b * b - (dot(p, p) - sid * sid);
    if (!(sid > h) || !(disc > 0.0)) {
      rc = dbtr_err(DBTR_EFORMAT,
                    "%s: (0018,1110) DistanceSourceToDetector: %g mm; the source must be farther from the detector "
                    "than the pivot (%g mm, %s)",
                    views[k].path, sid, h, o->pivot_from);
      break;
    }
    double r = -b + sqrt(disc);
    if (!isfinite(r)) {
      rc = dbtr_err(DBTR_EFORMAT, "%s: (0018,1110) DistanceSourceToDetector: %g mm; the source's position is beyond "
                    "what a double holds", views[k].path, sid);
      break;
    }
    for (int i = 0; i < 3; i++) s[i] = p[i] + chest[i] + r * d[i];
  }
  for (size_t k = 0; k < n && !rc; k++) rc = check_view(g, k, views[k].path);
  return rc ? rc : dbtr_geom_check(g, views[0].path);
}

/* The rotation of the isocenter reference system's angles (docs/dicom.md): primary angle
 * a turns +Z toward +X about Y, secondary angle b turns +Z toward +Y, so that R (0, 0, 1)
 * = (sin a cos b, sin b, cos a cos b). R = Ry(a) Rx(-b), applied to w. */
static void turn(double a_deg, double b_deg, const double w[3], double out[3]) {
  double a = a_deg * DBTR__PI / 180.0, b = b_deg * DBTR__PI / 180.0;
  double x1 = w[1] * cos(b) + w[2] * sin(b), x2 = -w[1] * sin(b) + w[2] * cos(b);
  out[0] = w[0] * cos(a) + x2 * sin(a);
  out[1] = x1;
  out[2] = -w[0] * sin(a) + x2 * cos(a);
}

/* An optional angle: absent is 0 (not turned). */
static int angle_or_zero(const dbtr__dcm *d, uint32_t tag, long frame, double *out) {
  int n = dbtr__dcm_numbers(d, tag, frame, out, 1);
  if (n < 0) return n;
  if (n == 0) *out = 0.0;
  return n > 1 ? dbtr__need(d, tag, frame, out, 1) : 0;
}

/* Frame k in the isocenter system: source, the top-left pixel's centre, u, v. */
static int read_frame(const dbtr__dcm *d, long k, double src[3], double tlhc[3], double u[3], double v[3]) {
  double dsi, as[2], ad[2] = {0.0, 0.0}, pos[3], corner[3], orient[6], spacing[2];
  char where[1200];
  int rc = dbtr__need(d, DBTR__TAG(0x0018, 0x9402), k, &dsi, 1);
  if (!rc) rc = dbtr__need(d, DBTR__TAG(0x0018, 0x9543), k, &as[0], 1);
  if (!rc) rc = dbtr__need(d, DBTR__TAG(0x0018, 0x9544), k, &as[1], 1);
  if (!rc) rc = angle_or_zero(d, DBTR__TAG(0x0018, 0x9550), k, &ad[0]);
  if (!rc) rc = angle_or_zero(d, DBTR__TAG(0x0018, 0x9551), k, &ad[1]);
  for (int i = 0; i < 3 && !rc; i++) rc = dbtr__need(d, DBTR__TAG(0x0018, 0x9552 + i), k, &pos[i], 1);
  if (!rc) rc = dbtr__need(d, DBTR__TAG(0x0018, 0x9557), k, corner, 3);
  if (!rc) rc = dbtr__need(d, DBTR__TAG(0x0018, 0x9558), k, orient, 6);
  if (!rc) rc = dbtr__need(d, DBTR__TAG(0x0018, 0x1164), k, spacing, 2);
  if (rc) return rc;
  dbtr__dcm_where(d, k, where, sizeof where);
  if (!(dsi > 0.0))
    return dbtr_err(DBTR_EFORMAT, "%s: (0018,9402) DistanceSourceToIsocenter: %g; a positive distance is expected",
                    where, dsi);
  if (!(spacing[0] > 0.0 && spacing[1] > 0.0))
    return dbtr_err(DBTR_EFORMAT, "%s: (0018,1164) ImagerPixelSpacing: %g\\%g; positive spacings are expected", where,
                    spacing[0], spacing[1]);
  double row_len = sqrt(dot(orient, orient)), col_len = sqrt(dot(orient + 3, orient + 3));
  if (fabs(row_len - 1.0) > 1e-4 || fabs(col_len - 1.0) > 1e-4 || fabs(dot(orient, orient + 3)) > 1e-4)
    return dbtr_err(DBTR_EFORMAT,
                    "%s: (0018,9558) DetectorActiveAreaOrientation: %g\\%g\\%g\\%g\\%g\\%g; two orthogonal unit "
                    "vectors are expected",
                    where, orient[0], orient[1], orient[2], orient[3], orient[4], orient[5]);
  /* The source lies on the source system's +Z axis, DSI from the isocenter. */
  double z[3] = {0.0, 0.0, dsi}, turned[3];
  turn(as[0], as[1], z, src);
  /* The detector system sits at (DX, DY, DZ) from the isocenter, turned by its angles;
   * the row direction is the step from column c to c + 1, the column direction from row r
   * to r + 1, and Imager Pixel Spacing is (row spacing, column spacing). */
  turn(ad[0], ad[1], corner, turned);
  for (int i = 0; i < 3; i++) tlhc[i] = pos[i] + turned[i];
  turn(ad[0], ad[1], orient, u);
  turn(ad[0], ad[1], orient + 3, v);
  for (int i = 0; i < 3; i++) {
    u[i] *= spacing[1];
    v[i] *= spacing[0];
  }
  return 0;
}

/* Rows of the orthonormal m that takes frame 1's detector to a preset's: u to +x, v to +y,
 * the side facing the source to +z. That is a reflection when u x v points away from the
 * source; the projections stay exact, and the volume comes out mirrored in x. */
static int preset_axes(const double src[3], const double tlhc[3], const double u[3], const double v[3], double m[3][3]) {
  double lu = sqrt(dot(u, u)), lv = sqrt(dot(v, v)), n[3], to_src[3];
  for (int i = 0; i < 3; i++) {
    m[0][i] = u[i] / lu;
    m[1][i] = v[i] / lv;
    to_src[i] = src[i] - tlhc[i];
  }
  n[0] = m[0][1] * m[1][2] - m[0][2] * m[1][1];
  n[1] = m[0][2] * m[1][0] - m[0][0] * m[1][2];
  n[2] = m[0][0] * m[1][1] - m[0][1] * m[1][0];
  int mirrored = dot(n, to_src) < 0.0;
  for (int i = 0; i < 3; i++) m[2][i] = mirrored ? -n[i] : n[i];
  return mirrored;
}

static void apply(double m[3][3], const double shift[3], const double p[3], double out[3]) {
  double q[3] = {p[0] - shift[0], p[1] - shift[1], p[2] - shift[2]};
  for (int i = 0; i < 3; i++) out[i] = dot(m[i], q);
}

int dbtr__geom_isocenter(dbtr_geom *g, const dbtr__dcm *d, size_t frames, size_t rows, size_t cols,
                         int *mirrored) {
  double m[3][3], origin[3], none[3] = {0.0, 0.0, 0.0}, src[3], tlhc[3], u[3], v[3], centre[3];
  double half_c = 0.5 * ((double)cols - 1.0), half_r = 0.5 * ((double)rows - 1.0);
  int rc = dbtr_geom_init(g, frames, rows, cols);
  if (!rc) rc = read_frame(d, 0, src, tlhc, u, v);
  if (rc) return rc;
  /* Frame 1's detector centre on the chest-wall line (row -1/2) goes to the origin. */
  *mirrored = preset_axes(src, tlhc, u, v, m);
  for (int i = 0; i < 3; i++) origin[i] = tlhc[i] + half_c * u[i] - 0.5 * v[i];
  for (size_t k = 0; k < frames && !rc; k++) {
    if (k > 0 && (rc = read_frame(d, (long)k, src, tlhc, u, v))) break;
    for (int i = 0; i < 3; i++) centre[i] = tlhc[i] + half_c * u[i] + half_r * v[i];
    apply(m, origin, src, g->source + 3 * k);
    apply(m, origin, centre, g->detector_center + 3 * k);
    apply(m, none, u, g->detector_u + 3 * k);
    apply(m, none, v, g->detector_v + 3 * k);
  }
  char where[1200];
  for (size_t k = 0; k < frames && !rc; k++) rc = check_view(g, k, dbtr__dcm_where(d, (long)k, where, sizeof where));
  return rc ? rc : dbtr_geom_check(g, dbtr__dcm_path(d));
}
