/* io/dicom_import.c: DBT projections from DICOM files into a dbtr scan (io/dicom.h,
 * docs/dicom.md).
 *
 * This file decides which files are read and in which order, checks that their stored
 * pixel values can be taken as counts, reads the pixels, derives a reconstruction grid
 * from the breast thickness where the files give it, and writes a provenance note for
 * each quantity. The geometry is io/dicom_geom.c's; GDCM is reached through io/dicom.cc. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "io/dicom.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "io/atomic_file.h"
#include "io/dicom_internal.h"
#include "io/guard.h"
#include "io/memory.h"
#include "recon/error.h"

enum { KIND_SINGLE, KIND_MULTI };

/* The SOP classes read (PS3.4 B.5). For Presentation mammograms are processed for the
 * eye, not counts, and are refused; a For Presentation projection object is read only when
 * its Pixel Intensity Relationship says the values are linear (check_linear). */
static const struct {
  const char *uid, *name;
  int kind;
} sop_classes[] = {
    {"1.2.840.10008.5.1.4.1.1.13.1.5", "Breast Projection X-Ray Image For Processing", KIND_MULTI},
    {"1.2.840.10008.5.1.4.1.1.13.1.4", "Breast Projection X-Ray Image For Presentation", KIND_MULTI},
    {"1.2.840.10008.5.1.4.1.1.1.2.1", "MG For Processing", KIND_SINGLE},
    {"1.2.840.10008.5.1.4.1.1.1.1.1", "DX For Processing", KIND_SINGLE},
};

/* The input files (folders expanded) and their headers. */
typedef struct {
  char **paths;
  dbtr__dcm **dcm;
  size_t n, cap;
} input;

static int add_path(input *in, const char *dir, const char *name) {
  if (in->n == in->cap) {
    size_t cap = in->cap ? 2 * in->cap : 16;
    char **p = realloc(in->paths, cap * sizeof *p);
    if (!p) return dbtr_err(DBTR_ENOMEM, "out of memory listing the DICOM files");
    in->paths = p;
    in->cap = cap;
  }
  size_t n = (dir ? strlen(dir) + 1 : 0) + strlen(name) + 1;
  char *p = malloc(n);
  if (!p) return dbtr_err(DBTR_ENOMEM, "out of memory listing the DICOM files");
  int slash = dir && *dir && dir[strlen(dir) - 1] != '/';
  snprintf(p, n, "%s%s%s", dir ? dir : "", slash ? "/" : "", name);
  in->paths[in->n++] = p;
  return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* A folder's regular files in name order. Hidden files and DICOMDIR (an index without an
 * image) are left out, and subfolders are not searched. */
static int add_folder(input *in, const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return dbtr_err(DBTR_EIO, "%s: cannot open the folder: %s", dir, strerror(errno));
  size_t first = in->n;
  int rc = 0;
  struct dirent *e;
  while (!rc && (e = readdir(d))) {
    if (e->d_name[0] == '.' || strcmp(e->d_name, "DICOMDIR") == 0) continue;
    rc = add_path(in, dir, e->d_name);
    struct stat st;
    if (!rc && (stat(in->paths[in->n - 1], &st) != 0 || !S_ISREG(st.st_mode))) free(in->paths[--in->n]);
  }
  closedir(d);
  if (!rc && in->n == first) rc = dbtr_err(DBTR_EFORMAT, "%s: the folder holds no files", dir);
  if (!rc) qsort(in->paths + first, in->n - first, sizeof *in->paths, by_name);
  return rc;
}

/* The files the paths name, folders expanded; a path that is neither a folder nor a regular
 * file (a FIFO would block the read for ever) is refused by name. */
static int list_inputs(input *in, const char *const *paths, size_t n) {
  int rc = n ? 0 : dbtr_err(DBTR_EINVAL, "no DICOM files or folders given");
  for (size_t i = 0; i < n && !rc; i++) {
    struct stat st;
    if (stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode))
      rc = add_folder(in, paths[i]);
    else if (!(rc = dbtr_input_check(paths[i])))
      rc = add_path(in, NULL, paths[i]);
  }
  return rc;
}

static int gather(input *in, const char *const *paths, size_t n) {
  int rc = list_inputs(in, paths, n);
  if (!rc && !(in->dcm = calloc(in->n, sizeof *in->dcm))) rc = dbtr_err(DBTR_ENOMEM, "out of memory");
  for (size_t i = 0; i < in->n && !rc; i++) rc = dbtr__dcm_open(&in->dcm[i], in->paths[i]);
  return rc;
}

static void input_free(input *in) {
  for (size_t i = 0; i < in->n; i++) {
    if (in->dcm) dbtr__dcm_close(&in->dcm[i]);
    free(in->paths[i]);
  }
  free(in->dcm);
  free(in->paths);
}

static int sop_kind(const dbtr__dcm *d, int *kind, const char **name) {
  char uid[80];
  dbtr__dcm_string(d, DBTR__TAG(0x0008, 0x0016), uid, sizeof uid);
  /* A DICOMDIR is the index of a DICOM folder (PS3.10 7.2): its Directory Record Sequence
   * lists the files, and it has no SOP class of its own to name. */
  if (!*uid && dbtr__dcm_has(d, DBTR__TAG(0x0004, 0x1220)))
    return dbtr_err(DBTR_EFORMAT, "%s: a DICOMDIR (the index of a DICOM folder), not an image: give the folder that "
                    "holds the images, or the image files", dbtr__dcm_path(d));
  if (!*uid) return dbtr_err(DBTR_EFORMAT, "%s: (0008,0016) SOPClassUID: missing", dbtr__dcm_path(d));
  for (size_t i = 0; i < sizeof sop_classes / sizeof *sop_classes; i++)
    if (strcmp(uid, sop_classes[i].uid) == 0) {
      *kind = sop_classes[i].kind;
      *name = sop_classes[i].name;
      return 0;
    }
  return dbtr_err(DBTR_EFORMAT,
                  "%s: (0008,0016) SOPClassUID: %s; a Breast Projection X-Ray Image, or MG or DX For Processing "
                  "images, are read",
                  dbtr__dcm_path(d), uid);
}

/* Counts are what the detector counted: the stored values must be linear in the quanta,
 * rising with them, and not rescaled (docs/dicom.md, "Counts"). */
static int check_linear(const dbtr__dcm *d, long frame) {
  static const struct {
    uint32_t tag;
    double want;
    const char *why;
  } rules[] = {{DBTR__TAG(0x0028, 0x1041), 1.0, "+1 (more quanta, higher values) is expected"},
               {DBTR__TAG(0x0028, 0x1053), 1.0, "the stored values are read as counts, without a rescale"},
               {DBTR__TAG(0x0028, 0x1052), 0.0, "the stored values are read as counts, without a rescale"}};
  char rel[32], where[1200];
  dbtr__dcm_string(d, DBTR__TAG(0x0028, 0x1040), rel, sizeof rel);
  dbtr__dcm_where(d, frame, where, sizeof where);
  if (*rel && strcmp(rel, "LIN") != 0)
    return dbtr_err(DBTR_EFORMAT, "%s: (0028,1040) PixelIntensityRelationship: %s; counts need linear values (LIN)",
                    where, rel);
  for (size_t i = 0; i < sizeof rules / sizeof *rules; i++) {
    double v;
    int n = dbtr__dcm_numbers(d, rules[i].tag, frame, &v, 1);
    if (n < 0) return n;
    if (n > 0 && v != rules[i].want)
      return dbtr_err(DBTR_EFORMAT, "%s: " DBTR__TAG_FMT ": %g; %s", where, DBTR__TAG_ARGS(rules[i].tag), v,
                      rules[i].why);
  }
  return 0;
}

static int image_size(const dbtr__dcm *d, size_t *frames, size_t *rows, size_t *cols) {
  double r, c, f = 1.0;
  int rc = dbtr__need(d, DBTR__TAG(0x0028, 0x0010), -1, &r, 1);
  if (!rc) rc = dbtr__need(d, DBTR__TAG(0x0028, 0x0011), -1, &c, 1);
  int nf = rc ? 0 : dbtr__dcm_numbers(d, DBTR__TAG(0x0028, 0x0008), -1, &f, 1); /* absent: one frame */
  if (rc || nf < 0) return rc ? rc : nf;
  if (!(r >= 1 && c >= 1 && f >= 1 && f <= 1e9 && f == floor(f)))
    return dbtr_err(DBTR_EFORMAT, "%s: (0028,0010) Rows, (0028,0011) Columns, (0028,0008) NumberOfFrames: %g, %g, %g",
                    dbtr__dcm_path(d), r, c, f);
  *rows = (size_t)r;
  *cols = (size_t)c;
  *frames = (size_t)f;
  return 0;
}

/* How a file's pixels are decoded: in this process (seconds 0), or in a guarded child with
 * seconds to finish, which writes the samples, and their type, into raw: memory it shares
 * with this process. */
typedef struct {
  unsigned seconds;
  dbtr__dcm_samples *raw; /* the mapping's start; its samples follow it */
  size_t bytes;           /* the mapping's length */
} pixel_reader;

/* GDCM decodes compressed pixel data through OpenJPEG (JPEG 2000) and CharLS (JPEG-LS); a
 * crash in any of them is the file's. */
static const dbtr__guard_lib gdcm_decoders = {{"libgdcm", "libopenjp2", "libcharls"}, "GDCM", "decoding the pixel data", 1};

/* 8 bytes a pixel of one file, room for any sample type read: what alloc_proj counts beside
 * the projections (so per_file x 8 does not overflow). */
static int reader_open(pixel_reader *r, size_t per_file, unsigned seconds) {
  r->seconds = seconds;
  r->bytes = sizeof *r->raw + 8 * per_file;
  void *p = mmap(NULL, r->bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    r->raw = NULL;
    return dbtr_err(DBTR_ENOMEM, "cannot map %zu bytes for one file's decoded pixels: %s", r->bytes, strerror(errno));
  }
  r->raw = p;
  r->raw->cap = 8 * per_file;
  r->raw->data = (unsigned char *)(r->raw + 1); /* aligned: the struct's size is a multiple of its pointer's */
  return 0;
}

static void reader_close(pixel_reader *r) {
  if (r->raw) munmap(r->raw, r->bytes);
  r->raw = NULL;
}

typedef struct {
  const dbtr__dcm *d;
  size_t n;
  dbtr__dcm_samples *raw;
} decode_job;

static int decode(void *ctx) {
  decode_job *j = ctx;
  return dbtr__dcm_decode(j->d, j->n, j->raw);
}

/* Reads the pixels of d into out (n values) and checks they are counts. */
static int read_counts(pixel_reader *r, const dbtr__dcm *d, double *out, size_t n, size_t cols, size_t per_view) {
  decode_job job = {d, n, r->raw};
  r->raw->type = -1; /* not a sample type: set by a decode that succeeds */
  int rc = r->seconds ? dbtr__guarded_call_in(&gdcm_decoders, decode, &job, r->seconds, dbtr__dcm_path(d))
                      : decode(&job);
  if (!rc) rc = dbtr__dcm_convert(r->raw, out, n);
  for (size_t i = 0; i < n && !rc; i++) {
    if (out[i] >= 0.0 && isfinite(out[i])) continue;
    char where[1200];
    size_t p = i % per_view;
    rc = dbtr_err(DBTR_EFORMAT, "%s: (7FE0,0010) PixelData: value %g at (row %zu, column %zu) is not a count (>= 0)",
                  dbtr__dcm_where(d, n > per_view ? (long)(i / per_view) : -1, where, sizeof where), out[i],
                  p / cols, p % cols);
  }
  return rc;
}

/* The smallest stored type that keeps every count exactly. */
static dbtr_dtype smallest_dtype(const double *p, size_t n) {
  double max = 0.0;
  for (size_t i = 0; i < n; i++) {
    if (p[i] != floor(p[i])) return DBTR_DTYPE_FLOAT64;
    max = fmax(max, p[i]);
  }
  return max <= 65535.0 ? DBTR_DTYPE_UINT16 : max <= 4294967295.0 ? DBTR_DTYPE_UINT32 : DBTR_DTYPE_FLOAT64;
}

/* The projections in double, checked with what reading a file's pixels holds beside them
 * (its decoded samples, 8 bytes a pixel of per_file pixels: pixel_reader) against the memory
 * available before the first allocation: a small compressed file can declare gigabytes. */
static int alloc_proj(dbtr_scan *s, size_t per_file) {
  size_t n;
  int rc = dbtr_geom_proj_count(&s->geom, &n);
  if (!rc) rc = dbtr_mem_check(8.0 * ((double)n + (double)per_file), "the DICOM import (the projections in double and "
                               "one file's decoded pixels)");
  void *p = NULL;
  if (!rc) rc = dbtr_alloc(&p, n, sizeof(double), "the projections");
  s->proj = p;
  return rc;
}

/* The grid a breast thickness gives: the first detector's area, in 1 mm slices from the
 * breast support up through the compressed breast. The support's height is read at view
 * c, the one whose source is nearest the vertical through the chest-wall centre, taking its
 * beam as vertical: the source's height less Distance Source to Patient. Without both
 * attributes the scan has no grid. */
static int thickness_grid(dbtr_scan *s, const dbtr__dcm *d, long frame, size_t c) {
  double t, sod;
  int nt = dbtr__dcm_numbers(d, DBTR__TAG(0x0018, 0x11A0), frame, &t, 1);
  int ns = nt < 0 ? 0 : dbtr__dcm_numbers(d, DBTR__TAG(0x0018, 0x1111), frame, &sod, 1);
  if (nt <= 0 || ns <= 0) return nt < 0 ? nt : ns;
  char what[1400], where[1200];
  snprintf(what, sizeof what, "%s: (0018,11A0) BodyPartThickness %g mm on the breast support at "
                              "(0018,1111) DistanceSourceToPatient %g mm",
           dbtr__dcm_where(d, frame, where, sizeof where), t, sod);
  if (!(t > 0.0 && t < 1000.0)) return dbtr_err(DBTR_EFORMAT, "%s: a thickness from 0 to 1000 mm is expected", what);
  /* Enough 1 mm slices to hold the thickness; the 1e-9 mm keeps a decimal string's last
   * digit of noise (40.000000000001) from adding a slice. */
  const double *u = s->geom.detector_u, *v = s->geom.detector_v;
  dbtr_grid g = {s->geom.n_cols, s->geom.n_rows, (size_t)ceil(t - 1e-9), sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]),
                 sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]), 1.0, {0.0, 0.0, 0.0}};
  double support = s->geom.source[3 * c + 2] - sod;
  g.origin[0] = -0.5 * ((double)g.nx - 1.0) * g.dx;
  g.origin[1] = 0.5 * g.dy;
  g.origin[2] = support + 0.5 * g.dz;
  int rc = dbtr_grid_check(&g, &s->geom, what);
  if (rc) return rc;
  s->grid = g;
  s->has_grid = 1;
  return dbtr_scan_note_set(s, "volume",
                            "%zu x %zu x %zu voxels of %g x %g x 1 mm: the detector's area, in 1 mm slices through "
                            "(0018,11A0) BodyPartThickness %g mm, from the breast support %g mm up "
                            "(the source's height less (0018,1111) DistanceSourceToPatient, view %zu)",
                            g.nx, g.ny, g.nz, g.dx, g.dy, t, support, c); /* views count from 0, as dbtr info's table */
}

/* The view whose source is nearest the vertical through the chest-wall centre. */
static size_t central_view(const dbtr_geom *g) {
  size_t c = 0;
  for (size_t k = 1; k < g->n_views; k++)
    if (fabs(g->source[3 * k]) < fabs(g->source[3 * c])) c = k;
  return c;
}

/* ---- one multi-frame Breast Projection X-Ray Image ---- */

static int import_multi(dbtr_scan *s, const dbtr__dcm *d, const char *sop_name, unsigned seconds) {
  size_t frames, rows, cols;
  pixel_reader r = {0};
  int mirrored = 0, rc = image_size(d, &frames, &rows, &cols);
  for (size_t k = 0; k < frames && !rc; k++) rc = check_linear(d, (long)k);
  if (!rc) rc = dbtr__geom_isocenter(&s->geom, d, frames, rows, cols, &mirrored);
  if (!rc) rc = alloc_proj(s, frames * rows * cols);
  if (!rc) rc = reader_open(&r, frames * rows * cols, seconds);
  if (!rc) rc = read_counts(&r, d, s->proj, frames * rows * cols, cols, rows * cols);
  reader_close(&r);
  if (rc) return rc;
  size_t c = central_view(&s->geom);
  rc = dbtr_scan_note_set(s, "projections", "counts: the stored pixel values of the %zu frames of %s, a %s", frames,
                          dbtr__dcm_path(d), sop_name);
  if (!rc)
    rc = dbtr_scan_note_set(s, "source",
                            "(0018,9402) DistanceSourceToIsocenter and (0018,9543/9544) X-Ray Source Isocenter "
                            "angles of each frame");
  if (!rc)
    rc = dbtr_scan_note_set(s, "detector",
                            "(0018,9550-9554) angles and position to the isocenter, (0018,9557/9558) active area "
                            "corner and orientation, (0018,1164) ImagerPixelSpacing of each frame; moved rigidly%s so "
                            "that frame 1's detector lies as a preset's",
                            mirrored ? " and mirrored in x" : "");
  return rc ? rc : thickness_grid(s, d, (long)c, c);
}

/* ---- single-frame images, one per view ---- */

typedef struct {
  dbtr__sf_view view; /* path, angle, distance */
  const dbtr__dcm *d;
  double instance, spacing[2];
  size_t rows, cols;
  char series[72];
} sf_file;

static int read_single(sf_file *f) {
  const dbtr__dcm *d = f->d;
  const char *path = dbtr__dcm_path(d);
  size_t frames;
  int rc = image_size(d, &frames, &f->rows, &f->cols);
  if (!rc && frames != 1)
    rc = dbtr_err(DBTR_EFORMAT, "%s: (0028,0008) NumberOfFrames: %zu; MG and DX images are read one view per file",
                  path, frames);
  if (!rc) rc = dbtr__need(d, DBTR__TAG(0x0020, 0x0013), -1, &f->instance, 1);
  if (!rc) rc = dbtr__need(d, DBTR__TAG(0x0018, 0x1510), -1, &f->view.angle_deg, 1);
  if (!rc) rc = dbtr__need(d, DBTR__TAG(0x0018, 0x1110), -1, &f->view.sid_mm, 1);
  if (!rc) rc = dbtr__need(d, DBTR__TAG(0x0018, 0x1164), -1, f->spacing, 2);
  if (!rc) rc = check_linear(d, -1);
  if (rc) return rc;
  f->view.path = path;
  dbtr__dcm_string(d, DBTR__TAG(0x0020, 0x000E), f->series, sizeof f->series);
  if (!*f->series) return dbtr_err(DBTR_EFORMAT, "%s: (0020,000E) SeriesInstanceUID: missing", path);
  if (!(f->spacing[0] > 0.0 && f->spacing[1] > 0.0))
    return dbtr_err(DBTR_EFORMAT, "%s: (0018,1164) ImagerPixelSpacing: %g\\%g; positive spacings are expected", path,
                    f->spacing[0], f->spacing[1]);
  return 0;
}

/* Every file is of the first one's series, size and pixel spacing. */
static int check_same(const sf_file *f, const sf_file *first) {
  const char *p = f->view.path, *q = first->view.path;
  if (strcmp(f->series, first->series) != 0)
    return dbtr_err(DBTR_EFORMAT, "%s: (0020,000E) SeriesInstanceUID: %s, but %s is of series %s: one series is read",
                    p, f->series, q, first->series);
  if (f->rows != first->rows || f->cols != first->cols)
    return dbtr_err(DBTR_EFORMAT, "%s: (0028,0010) Rows x (0028,0011) Columns: %zu x %zu, but %s has %zu x %zu", p,
                    f->rows, f->cols, q, first->rows, first->cols);
  if (f->spacing[0] != first->spacing[0] || f->spacing[1] != first->spacing[1])
    return dbtr_err(DBTR_EFORMAT, "%s: (0018,1164) ImagerPixelSpacing: %g\\%g, but %s has %g\\%g", p, f->spacing[0],
                    f->spacing[1], q, first->spacing[0], first->spacing[1]);
  return 0;
}

static int by_instance(const void *a, const void *b) {
  double x = ((const sf_file *)a)->instance, y = ((const sf_file *)b)->instance;
  return (x > y) - (x < y);
}

/* The views in Instance Number order, whatever the files are called. */
static int sort_views(sf_file *f, size_t n) {
  qsort(f, n, sizeof *f, by_instance);
  for (size_t k = 1; k < n; k++)
    if (f[k].instance == f[k - 1].instance)
      return dbtr_err(DBTR_EFORMAT, "%s: (0020,0013) InstanceNumber: %g, as in %s; one image per view is expected",
                      f[k].view.path, f[k].instance, f[k - 1].view.path);
  return 0;
}

static int single_notes(dbtr_scan *s, const sf_file *f, size_t n, const char *sop_name, const dbtr_dicom_opts *o) {
  int rc = dbtr_scan_note_set(s, "projections",
                              "counts: the stored pixel values of %zu single-frame %s images of series %s (%s first) "
                              "in (0020,0013) InstanceNumber order",
                              n, sop_name, f[0].series, f[0].view.path);
  if (!rc)
    rc = dbtr_scan_note_set(s, "source",
                            "(0018,1510) PositionerPrimaryAngle (%g to %g deg) and (0018,1110) "
                            "DistanceSourceToDetector of each image, on an arc about a pivot %g mm above the "
                            "detector (%s)",
                            f[0].view.angle_deg, f[n - 1].view.angle_deg, o->pivot_mm, o->pivot_from);
  if (!rc)
    rc = dbtr_scan_note_set(s, "detector", "%s (%s), (0018,1164) ImagerPixelSpacing %g mm (rows) x %g mm (columns)",
                            o->detector == DBTR_DETECTOR_ROTATING ? "turning with the source about the pivot"
                                                                  : "stationary",
                            o->detector_from, f[0].spacing[0], f[0].spacing[1]);
  return rc;
}

static int import_single(dbtr_scan *s, const input *in, const char *sop_name, const dbtr_dicom_opts *o,
                         unsigned seconds) {
  sf_file *f = calloc(in->n, sizeof *f);
  dbtr__sf_view *views = calloc(in->n, sizeof *views);
  int rc = f && views ? 0 : dbtr_err(DBTR_ENOMEM, "out of memory reading %zu DICOM headers", in->n);
  for (size_t i = 0; i < in->n && !rc; i++) {
    f[i].d = in->dcm[i];
    rc = read_single(&f[i]);
    if (!rc) rc = check_same(&f[i], &f[0]);
  }
  if (!rc && (!o->pivot_from || o->detector == DBTR_DETECTOR_UNKNOWN))
    rc = dbtr_err(DBTR_EINVAL, "%s: single-frame images do not say %s: give %s (or --system NAME)", in->paths[0],
                  o->pivot_from ? "whether the detector moves" : "the pivot height",
                  o->pivot_from ? "--detector stationary|rotating" : "--pivot-height MM");
  if (!rc) rc = sort_views(f, in->n);
  for (size_t k = 0; k < in->n && !rc; k++) views[k] = f[k].view;
  if (!rc) rc = dbtr__geom_single(&s->geom, views, in->n, f[0].rows, f[0].cols, f[0].spacing, o);
  if (!rc) rc = alloc_proj(s, f[0].rows * f[0].cols);
  size_t per_view = f[0].rows * f[0].cols; /* checked by alloc_proj */
  pixel_reader r = {0};
  if (!rc) rc = reader_open(&r, per_view, seconds);
  for (size_t k = 0; k < in->n && !rc; k++)
    rc = read_counts(&r, f[k].d, s->proj + k * per_view, per_view, f[0].cols, per_view);
  reader_close(&r);
  if (!rc) rc = single_notes(s, f, in->n, sop_name, o);
  size_t c = rc ? 0 : central_view(&s->geom);
  if (!rc) rc = thickness_grid(s, f[c].d, -1, c);
  free(views);
  free(f);
  return rc;
}

/* The import, each file's pixels decoded in a guarded child with seconds to finish, or in
 * this process (seconds 0). */
static int import_with(dbtr_scan *s, const char *const *paths, size_t n_paths, const dbtr_dicom_opts *o,
                       unsigned seconds) {
  memset(s, 0, sizeof *s);
  if (!(o->i0 > 0.0 && isfinite(o->i0)))
    return dbtr_err(DBTR_EINVAL, "i0 %g: the unattenuated counts must be a positive number", o->i0);
  input in = {NULL, NULL, 0, 0};
  int rc = gather(&in, paths, n_paths), kind = KIND_SINGLE;
  const char *sop_name = NULL;
  for (size_t i = 0; i < in.n && !rc; i++) {
    rc = sop_kind(in.dcm[i], &kind, &sop_name);
    if (!rc && kind == KIND_MULTI && in.n > 1)
      rc = dbtr_err(DBTR_EFORMAT, "%s: a %s holds every view and is imported alone, but %zu files are given",
                    in.paths[i], sop_name, in.n);
  }
  if (!rc)
    rc = kind == KIND_MULTI ? import_multi(s, in.dcm[0], sop_name, seconds) : import_single(s, &in, sop_name, o, seconds);
  void *i0 = NULL;
  if (!rc) rc = dbtr_alloc(&i0, 1, sizeof(double), "i0");
  s->i0 = i0;
  if (!rc) {
    s->quantity = DBTR_QUANTITY_COUNTS;
    s->i0_shape = DBTR_I0_SCALAR;
    s->i0[0] = o->i0;
    s->stored_dtype = smallest_dtype(s->proj, s->geom.n_views * s->geom.n_rows * s->geom.n_cols);
    rc = dbtr_scan_note_set(s, "i0", "%g, every view and pixel (%s)", o->i0, o->i0_from ? o->i0_from : "given");
  }
  input_free(&in);
  if (rc) dbtr_scan_free(s);
  return rc;
}

int dbtr_dicom_import(dbtr_scan *s, const char *const *paths, size_t n_paths, const dbtr_dicom_opts *o) {
  if (!s || !o) return dbtr_err(DBTR_EINVAL, "dbtr_dicom_import: no scan or options given");
  return import_with(s, paths, n_paths, o, 0);
}

/* ---- the guarded read ---- */

static const dbtr__guard_lib gdcm_lib = {{"libgdcm"}, "GDCM", "reading the DICOM file", 1};

/* In the child: the file's header and whole structure, its pixel data undecoded. */
static int check_file(void *path) {
  dbtr__dcm *d = NULL;
  int rc = dbtr__dcm_open(&d, path);
  dbtr__dcm_close(&d);
  return rc ? rc : dbtr__dcm_check(path);
}

int dbtr_dicom_import_guarded(dbtr_scan *s, const char *const *paths, size_t n_paths, const dbtr_dicom_opts *o,
                              unsigned seconds) {
  if (!s || !o) return dbtr_err(DBTR_EINVAL, "dbtr_dicom_import: no scan or options given");
  memset(s, 0, sizeof *s);
  input in = {NULL, NULL, 0, 0};
  int rc = list_inputs(&in, paths, n_paths);
  /* One child a file, so that a refusal names the file that crashed GDCM or made it loop. */
  for (size_t i = 0; i < in.n && !rc; i++)
    rc = dbtr__guarded_call_in(&gdcm_lib, check_file, in.paths[i], seconds, in.paths[i]);
  input_free(&in);
  return rc ? rc : import_with(s, paths, n_paths, o, seconds);
}
