/* io/tiff.c: multi-page TIFF volumes (one page per z slice) through libtiff, written so that
 * Fiji/ImageJ, tifffile and napari see the voxel size (docs/volume-format.md).
 *
 * Layout of a written file: the header, then every page's IFD, then the strip offset and
 * byte count arrays, then the pixel data of all pages as ONE contiguous block, page after
 * page. The contiguous block matters: when the ImageJ description says images=N, ImageJ
 * reads only the first IFD and takes the N slices as consecutive bytes from its first strip.
 * libtiff on its own interleaves data and IFDs, so we write the IFDs first with deferred
 * strile arrays (the sequence libtiff documents for TIFFDeferStrileArrayWriting, also used by
 * GDAL for cloud-optimised GeoTIFF) and then append the data, which libtiff places at the end
 * of the file in the order we write it.
 *
 * Each page is ONE strip, as tifffile writes them. ImageJ 1.x (TiffDecoder.decodeIFD, 1.53t)
 * reads a StripByteCounts of count 2 and type SHORT as an offset to an array, although its
 * two values sit inside the IFD entry, and fails with NegativeArraySizeException; libtiff
 * picks SHORT whenever the counts fit. A count of 1 is read as the value itself, whatever
 * the type, so one strip per page opens at every slice size. */
#include "io/tiff.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <tiffio.h>

#include "io/atomic_file.h"
#include "io/memory.h"
#include "io/tiff_internal.h"
#include "io/volume_format.h"
#include "recon/error.h"

/* ---------------------------------------------------------------------------------------
 * libtiff messages: captured per open file instead of printed, so that the error we return
 * carries libtiff's own explanation. libtiff 4.5 takes per-open handlers; older versions
 * only have process-wide ones, which we point at a per-thread buffer. */

typedef struct {
  const char *file; /* the name libtiff was given: no need to repeat it as the "module" */
  char msg[512];    /* first error libtiff reported; empty if none */
} tiff_log;

static void log_append(tiff_log *log, const char *module, const char *fmt, va_list ap) {
  if (log->msg[0]) return; /* The first error is the cause; later ones are consequences. */
  int named = module && !(log->file && strcmp(module, log->file) == 0);
  int n = named ? snprintf(log->msg, sizeof log->msg, "%s: ", module) : 0;
  if (n < 0 || (size_t)n >= sizeof log->msg) n = 0;
  vsnprintf(log->msg + n, sizeof log->msg - (size_t)n, fmt, ap);
  /* Our messages are one line; libtiff's may hold newlines ("Tag NumberOfInks:\n  Value..."). */
  for (char *p = log->msg; *p; p++) *p = (*p == '\n' || *p == '\r') ? ' ' : *p;
}

#if defined(TIFFLIB_VERSION) && TIFFLIB_VERSION >= 20221213 && !defined(DBTR_TIFF_GLOBAL_HANDLERS)
static int on_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap) {
  (void)tif;
  log_append(user, module, fmt, ap);
  return 1; /* handled: libtiff must not print it too */
}
static int on_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap) {
  (void)tif, (void)user, (void)module, (void)fmt, (void)ap;
  return 1; /* Warnings (unknown tags, odd but readable files) are not errors: drop them. */
}
static TIFF *tiff_open(const char *file, const char *mode, tiff_log *log) {
  log->file = file;
  log->msg[0] = '\0';
  TIFFOpenOptions *o = TIFFOpenOptionsAlloc();
  if (!o) return NULL;
  TIFFOpenOptionsSetErrorHandlerExtR(o, on_error, log);
  TIFFOpenOptionsSetWarningHandlerExtR(o, on_warning, NULL);
  TIFF *t = TIFFOpenExt(file, mode, o); /* copies the handlers; the options can go */
  TIFFOpenOptionsFree(o);
  return t;
}
static void tiff_close(TIFF *t) { TIFFClose(t); }
#else
static _Thread_local tiff_log *current_log;
static void on_error(thandle_t h, const char *module, const char *fmt, va_list ap) {
  (void)h;
  if (current_log) log_append(current_log, module, fmt, ap);
}
static void on_warning(thandle_t h, const char *module, const char *fmt, va_list ap) {
  (void)h, (void)module, (void)fmt, (void)ap;
}
static TIFF *tiff_open(const char *file, const char *mode, tiff_log *log) {
  log->file = file;
  log->msg[0] = '\0';
  current_log = log; /* set while this thread uses the file, cleared by tiff_close */
  TIFFSetErrorHandler(NULL);
  TIFFSetWarningHandler(NULL);
  TIFFSetErrorHandlerExt(on_error);
  TIFFSetWarningHandlerExt(on_warning);
  TIFF *t = TIFFOpen(file, mode);
  if (!t) current_log = NULL;
  return t;
}
static void tiff_close(TIFF *t) {
  TIFFClose(t);
  current_log = NULL; /* the log lives on the caller's stack */
}
#endif

static const char *log_msg(const tiff_log *log, const char *fallback) { return log->msg[0] ? log->msg : fallback; }

/* ---------------------------------------------------------------------------------------
 * Decisions. */

int dbtr__tiff_needs_bigtiff(size_t bytes) {
  const uint64_t limit = (UINT64_C(4) << 30) - (UINT64_C(64) << 20);
  return (uint64_t)bytes > limit;
}

/* ---------------------------------------------------------------------------------------
 * Writing. */

typedef struct {
  const char *path; /* the target, named in every message */
  const dbtr_grid *grid;
  const void *data; /* (nz, ny, nx): floats, or doubles when f64 */
  int u16;          /* 1: uint16 samples with scale/offset, from floats */
  int f64;          /* 1: float64 samples, the doubles as they are; neither: float32 */
  double scale, offset;
  uint32_t nx, ny;
  size_t sample_bytes, page_bytes; /* one page is one strip */
  char desc[1024];                 /* ImageJ description of page 0 */
  tiff_log log;
} tiff_writer;

static uint16_t u16_stored(const tiff_writer *w, float v) { return dbtr_u16_store(v, w->scale, w->offset); }

static int check_write_args(tiff_writer *w, const char *path, const dbtr_grid *g, const void *data,
                            const dbtr_tiff_opts *opts) {
  int rc = dbtr__volume_check(path, g, data, opts);
  if (rc) return rc;
  if (g->nx > UINT32_MAX || g->ny > UINT32_MAX)
    return dbtr_err(DBTR_EINVAL, "%s: slice %zu x %zu exceeds the TIFF limit of 2^32-1 pixels a side", path, g->nx,
                    g->ny);
  if (g->nz > (tdir_t) ~(tdir_t)0)
    return dbtr_err(DBTR_EINVAL, "%s: %zu slices exceed this libtiff's page limit", path, g->nz);
  memset(w, 0, sizeof *w);
  w->path = path;
  w->grid = g;
  w->data = data;
  w->u16 = opts && opts->format == DBTR_TIFF_UINT16;
  w->f64 = opts && opts->format == DBTR_TIFF_FLOAT64;
  if (w->u16) {
    w->scale = opts->u16_scale;
    w->offset = opts->u16_offset;
  }
  w->nx = (uint32_t)g->nx;
  w->ny = (uint32_t)g->ny;
  w->sample_bytes = w->u16 ? 2 : w->f64 ? 8 : 4;
  return dbtr_size_mul3(g->nx, g->ny, w->sample_bytes, &w->page_bytes, path);
}

/* Pixel data plus a generous bound on what surrounds it: per page an IFD of at most
 * 20 entries of 20 bytes (the BigTIFF size) and its one strip offset and byte count. */
static int estimate_file_bytes(const tiff_writer *w, size_t *out) {
  size_t data = 0, overhead = 0; /* read below even when rc is set */
  int rc = dbtr_size_mul(w->page_bytes, w->grid->nz, &data, w->path);
  if (!rc) rc = dbtr_size_mul(w->grid->nz, 512, &overhead, w->path);
  if (rc) return rc;
  if (data > SIZE_MAX - sizeof w->desc || overhead > SIZE_MAX - sizeof w->desc - data)
    return dbtr_err(DBTR_EOVERFLOW, "%s: file size overflows the address space", w->path);
  *out = data + overhead + sizeof w->desc;
  return 0;
}

/* Appends to w->desc; 0, or -1 when it would not fit. */
static int desc_append(tiff_writer *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int desc_append(tiff_writer *w, const char *fmt, ...) {
  size_t used = strlen(w->desc);
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(w->desc + used, sizeof w->desc - used, fmt, ap);
  va_end(ap);
  return n < 0 || (size_t)n >= sizeof w->desc - used ? -1 : 0;
}

/* The ImageJ description: ImageJ's own keys first (ImageJ requires "ImageJ=" to open the
 * string), then ours. Numbers use %.17g so that they read back to the same double.
 *
 * vunit names the unit of the values, the attenuation coefficients of every dbtr volume.
 * ImageJ keeps it as it is for 32-bit images; for 16-bit ones it applies it only with a
 * calibration function (FileOpener.setCalibration): cf=0 is Calibration.STRAIGHT_LINE,
 * value = c0 + c1 * stored, which undoes stored = (value - offset) * scale.
 *
 * float64 pages take float32's description. ImageJ 1.x's own TIFF reader opens no 64-bit
 * samples at all (TiffDecoder: "Unsupported BitsPerSample: 64", 1.52i to 1.54u), but
 * tifffile (hence napari) reads the stack's shape, spacing and unit from it, and dbtr's
 * reader its dbtr_ keys, as for float32. */
static int build_description(tiff_writer *w) {
  const dbtr_grid *g = w->grid;
  w->desc[0] = '\0';
  int bad = desc_append(w, "ImageJ=1.11a\nimages=%zu\nslices=%zu\nunit=mm\n", g->nz, g->nz);
  if (w->u16) bad |= desc_append(w, "cf=0\nc0=%.17g\nc1=%.17g\n", w->offset, 1.0 / w->scale);
  bad |= desc_append(w, "vunit=1/mm\nspacing=%.17g\nloop=false\n", g->dz);
  if (w->u16) {
    /* min/max set ImageJ's display range to the values actually stored, not 0..65535. */
    size_t count = g->nx * g->ny * g->nz; /* checked by estimate_file_bytes */
    const float *data = w->data;
    uint16_t lo = 65535, hi = 0;
    for (size_t i = 0; i < count; i++) {
      uint16_t v = u16_stored(w, data[i]);
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
    bad |= desc_append(w, "min=%u\nmax=%u\n", (unsigned)lo, (unsigned)hi);
  }
  bad |= desc_append(w, "dbtr_voxel_size=%.17g,%.17g,%.17g\ndbtr_origin=%.17g,%.17g,%.17g\n", g->dx, g->dy, g->dz,
                     g->origin[0], g->origin[1], g->origin[2]);
  if (w->u16) bad |= desc_append(w, "dbtr_u16_scale=%.17g\ndbtr_u16_offset=%.17g\n", w->scale, w->offset);
  if (bad) return dbtr_err(DBTR_EINTERNAL, "%s: ImageJ description too long", w->path);
  return 0;
}

/* Whether a TIFF RATIONAL (32-bit numerator and denominator) holds r pixels per mm: from
 * 2^-32 to 2^32, with a factor 2 of margin. Outside, libtiff wrote 0 (a voxel of 1e12 mm),
 * which readers take as no size, or the largest rational; such a page has no resolution
 * tags, and the description keeps the exact size. */
static int rational_holds(double r) { return r >= 0x1p-31 && r <= 0x1p31; }

static int set_page_tags(TIFF *t, const tiff_writer *w, size_t k) {
  double xr = 1.0 / w->grid->dx, yr = 1.0 / w->grid->dy;
  int ok =
      TIFFSetField(t, TIFFTAG_IMAGEWIDTH, w->nx) && TIFFSetField(t, TIFFTAG_IMAGELENGTH, w->ny) &&
      TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, (int)(8 * w->sample_bytes)) &&
      TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, w->u16 ? SAMPLEFORMAT_UINT : SAMPLEFORMAT_IEEEFP) &&
      TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 1) && TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK) &&
      TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG) &&
      TIFFSetField(t, TIFFTAG_COMPRESSION, COMPRESSION_NONE) && TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, w->ny);
  /* Pixels per mm; ImageJ takes the unit from the description, so the TIFF unit is NONE. */
  if (ok && rational_holds(xr) && rational_holds(yr))
    ok = TIFFSetField(t, TIFFTAG_XRESOLUTION, xr) && TIFFSetField(t, TIFFTAG_YRESOLUTION, yr) &&
         TIFFSetField(t, TIFFTAG_RESOLUTIONUNIT, RESUNIT_NONE);
  /* ImageJ reads the description of the first page only. */
  if (ok && k == 0) ok = TIFFSetField(t, TIFFTAG_IMAGEDESCRIPTION, w->desc);
  return ok;
}

/* A write that failed: libtiff's text ("Write error at scanline 0") loses the system's
 * reason, so errno, cleared before the call, leads when the system gave one ("No space left
 * on device", "File too large"). */
static int write_failed(const tiff_writer *w, size_t k, int e, const char *fallback) {
  if (!e) return dbtr_err(DBTR_EIO, "%s: page %zu: %s", w->path, k, log_msg(&w->log, fallback));
  return dbtr_err(DBTR_EIO, "%s: page %zu: %s (libtiff: %s)", w->path, k, strerror(e), log_msg(&w->log, fallback));
}

/* Moves to page k: page 0 by number, later pages by following the IFD chain, which is
 * linear where TIFFSetDirectory(k) would walk from the start each time. */
static int goto_page(TIFF *t, size_t k) { return k == 0 ? TIFFSetDirectory(t, 0) : TIFFReadDirectory(t); }

/* Each page's samples go to the file as they are in memory: the file is in the machine's
 * byte order (mode "w" without 'b' or 'l'), and an uncompressed strip is its raw bytes, so
 * TIFFWriteRawStrip writes what TIFFWriteEncodedStrip would, without its in-place byte
 * swap, which would force a copy of the caller's floats or doubles. uint16 pages are
 * converted from the floats into page first. After each page the disk is set to work on it
 * (dbtr_atomic_written). */
static int write_pixels(TIFF *t, tiff_writer *w, const dbtr_atomic_file *f, uint16_t *page) {
  const size_t n = (size_t)w->nx * w->ny; /* samples a page; page_bytes did not overflow */
  for (size_t k = 0; k < w->grid->nz; k++) {
    if (!goto_page(t, k))
      return dbtr_err(DBTR_EIO, "%s: page %zu: %s", w->path, k, log_msg(&w->log, "cannot reopen the IFD"));
    if (w->u16) {
      const float *src = (const float *)w->data + k * n;
      for (size_t i = 0; i < n; i++) page[i] = u16_stored(w, src[i]);
    }
    /* libtiff only reads the strip it is given; its parameter is not const. */
    void *strip = w->u16 ? (void *)page : (void *)((const unsigned char *)w->data + k * w->page_bytes);
    errno = 0;
    if (TIFFWriteRawStrip(t, 0, strip, (tmsize_t)w->page_bytes) < 0)
      return write_failed(w, k, errno, "cannot write the pixels");
    /* Only the strile arrays changed, so libtiff rewrites them in place, not at the end. */
    errno = 0;
    if (!TIFFFlush(t)) return write_failed(w, k, errno, "cannot flush");
    dbtr_atomic_written(f);
  }
  return 0;
}

static int write_tiff(TIFF *t, tiff_writer *w, const dbtr_atomic_file *f) {
  const size_t nz = w->grid->nz;
  /* 1: every IFD, its strile arrays left for later, so the IFDs come first in the file. */
  for (size_t k = 0; k < nz; k++) {
    errno = 0;
    if (!set_page_tags(t, w, k) || !TIFFDeferStrileArrayWriting(t) || !TIFFWriteCheck(t, 0, "dbtr_tiff_write") ||
        !TIFFWriteDirectory(t))
      return write_failed(w, k, errno, "cannot write the IFD");
  }
  /* 2: the strile arrays (still zeros) of every page, after the IFDs. */
  for (size_t k = 0; k < nz; k++) {
    errno = 0;
    if (!goto_page(t, k) || !TIFFForceStrileArrayWriting(t)) return write_failed(w, k, errno, "cannot write the strip arrays");
  }
  /* 3: the pixel data, appended page after page into one contiguous block. */
  uint16_t *page = NULL;
  int rc = w->u16 ? dbtr_alloc((void **)&page, w->page_bytes, 1, w->path) : 0;
  if (!rc) rc = write_pixels(t, w, f, page);
  free(page);
  return rc;
}

int dbtr__tiff_write_ex(const char *path, const dbtr_grid *grid, const void *data, const dbtr_tiff_opts *opts,
                        int force_bigtiff) {
  tiff_writer *w = malloc(sizeof *w);
  if (!w) return dbtr_err(DBTR_ENOMEM, "%s: out of memory", path ? path : "TIFF output");
  size_t bytes = 0;
  int rc = check_write_args(w, path, grid, data, opts);
  if (!rc) rc = estimate_file_bytes(w, &bytes);
  if (!rc) rc = build_description(w);
  dbtr_atomic_file f = {0};
  if (!rc) rc = dbtr_atomic_begin(&f, path);
  if (rc) {
    free(w);
    return rc;
  }
  const char *mode = force_bigtiff || dbtr__tiff_needs_bigtiff(bytes) ? "w8" : "w";
  TIFF *t = tiff_open(f.tmp, mode, &w->log);
  if (!t) rc = dbtr_err(DBTR_EIO, "%s: %s", path, log_msg(&w->log, "libtiff cannot create the file"));
  if (t) {
    rc = write_tiff(t, w, &f);
    tiff_close(t); /* TIFFClose has no result; a failure there shows up in the log */
    if (!rc && w->log.msg[0]) rc = dbtr_err(DBTR_EIO, "%s: %s", path, w->log.msg);
  }
  free(w);
  if (rc) {
    dbtr_atomic_abort(&f);
    return rc;
  }
  return dbtr_atomic_commit(&f);
}

int dbtr_tiff_write(const char *path, const dbtr_grid *grid, const void *data, const dbtr_tiff_opts *opts) {
  return dbtr__tiff_write_ex(path, grid, data, opts, 0);
}

/* ---------------------------------------------------------------------------------------
 * Reading. */

typedef struct {
  uint32_t w, h;
  uint16_t bits, format; /* bits per sample, SAMPLEFORMAT_* */
} page_info;

static int get_page_info(TIFF *t, const char *path, size_t k, page_info *p) {
  uint16_t spp = 1;
  uint32_t depth = 1;
  if (!TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &p->w) || !TIFFGetField(t, TIFFTAG_IMAGELENGTH, &p->h))
    return dbtr_err(DBTR_EFORMAT, "%s: page %zu: no image width or length", path, k);
  TIFFGetFieldDefaulted(t, TIFFTAG_IMAGEDEPTH, &depth);
  if (depth != 1) /* the SGI extension that puts a whole volume in one page */
    return dbtr_err(DBTR_EFORMAT, "%s: page %zu: ImageDepth %u; one page must be one slice", path, k, depth);
  TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLESPERPIXEL, &spp);
  TIFFGetFieldDefaulted(t, TIFFTAG_BITSPERSAMPLE, &p->bits);
  TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLEFORMAT, &p->format);
  if (spp != 1)
    return dbtr_err(DBTR_EFORMAT, "%s: page %zu: %u samples per pixel; a volume needs exactly one (grey values)", path,
                    k, (unsigned)spp);
  if (p->format == SAMPLEFORMAT_VOID) p->format = SAMPLEFORMAT_UINT; /* "untyped" data is unsigned by convention */
  int ok = (p->format == SAMPLEFORMAT_UINT && (p->bits == 8 || p->bits == 16 || p->bits == 32)) ||
           (p->format == SAMPLEFORMAT_INT && (p->bits == 8 || p->bits == 16 || p->bits == 32)) ||
           (p->format == SAMPLEFORMAT_IEEEFP && (p->bits == 32 || p->bits == 64));
  if (!ok)
    return dbtr_err(DBTR_EFORMAT,
                    "%s: page %zu: %u-bit samples of format %u; supported are 8/16/32-bit unsigned or signed "
                    "integers and 32/64-bit floats",
                    path, k, (unsigned)p->bits, (unsigned)p->format);
  return 0;
}

/* n samples of the page's type at src (any alignment) to floats. The switch sits outside
 * the loops so that each loop is a plain conversion the compiler can vectorise. */
#define DBTR__TO_FLOAT(type)                        \
  for (size_t i = 0; i < n; i++) {                  \
    type v_;                                        \
    memcpy(&v_, src + i * sizeof(type), sizeof v_); \
    dst[i] = (float)v_;                             \
  }
static void to_float(const unsigned char *src, float *dst, size_t n, const page_info *p) {
  int sig = p->format == SAMPLEFORMAT_INT;
  if (p->format == SAMPLEFORMAT_IEEEFP && p->bits == 32)
    memcpy(dst, src, n * sizeof(float));
  else if (p->format == SAMPLEFORMAT_IEEEFP)
    DBTR__TO_FLOAT(double)
  else if (p->bits == 8 && sig)
    DBTR__TO_FLOAT(int8_t)
  else if (p->bits == 8)
    DBTR__TO_FLOAT(uint8_t)
  else if (p->bits == 16 && sig)
    DBTR__TO_FLOAT(int16_t)
  else if (p->bits == 16)
    DBTR__TO_FLOAT(uint16_t)
  else if (sig)
    DBTR__TO_FLOAT(int32_t)
  else
    DBTR__TO_FLOAT(uint32_t)
}
#undef DBTR__TO_FLOAT

static int read_strips(TIFF *t, const char *path, size_t k, const page_info *p, unsigned char *buf, float *dst) {
  uint32_t rps = 0;
  TIFFGetFieldDefaulted(t, TIFFTAG_ROWSPERSTRIP, &rps);
  if (rps == 0 || rps > p->h) rps = p->h;
  size_t row = (size_t)p->w * (p->bits / 8u);
  for (uint32_t y = 0; y < p->h; y += rps) {
    uint32_t rows = p->h - y < rps ? p->h - y : rps;
    tmsize_t got = TIFFReadEncodedStrip(t, TIFFComputeStrip(t, y, 0), buf, (tmsize_t)-1);
    if (got < 0 || (size_t)got < rows * row)
      return dbtr_err(DBTR_EFORMAT, "%s: page %zu: rows %u..%u cannot be read (truncated or corrupt file)", path, k, y,
                      y + rows - 1);
    to_float(buf, dst + (size_t)y * p->w, (size_t)rows * p->w, p);
  }
  return 0;
}

static int read_tiles(TIFF *t, const char *path, size_t k, const page_info *p, unsigned char *buf, float *dst) {
  uint32_t tw = 0, th = 0;
  TIFFGetField(t, TIFFTAG_TILEWIDTH, &tw);
  TIFFGetField(t, TIFFTAG_TILELENGTH, &th);
  if (tw == 0 || th == 0) return dbtr_err(DBTR_EFORMAT, "%s: page %zu: tile size %u x %u", path, k, tw, th);
  size_t sample = p->bits / 8u;
  for (uint32_t y = 0; y < p->h; y += th)
    for (uint32_t x = 0; x < p->w; x += tw) {
      tmsize_t got = TIFFReadEncodedTile(t, TIFFComputeTile(t, x, y, 0, 0), buf, (tmsize_t)-1);
      if (got < 0 || (size_t)got < (size_t)tw * th * sample)
        return dbtr_err(DBTR_EFORMAT, "%s: page %zu: tile at (%u, %u) cannot be read (truncated or corrupt file)", path,
                        k, x, y);
      uint32_t cols = p->w - x < tw ? p->w - x : tw, rows = p->h - y < th ? p->h - y : th;
      for (uint32_t r = 0; r < rows; r++)
        to_float(buf + (size_t)r * tw * sample, dst + (size_t)(y + r) * p->w + x, cols, p);
    }
  return 0;
}

static int read_page(TIFF *t, const char *path, size_t k, const page_info *p, float *dst, tiff_log *log) {
  int tiled = TIFFIsTiled(t);
  tmsize_t size = tiled ? TIFFTileSize(t) : TIFFStripSize(t);
  if (size <= 0) return dbtr_err(DBTR_EFORMAT, "%s: page %zu: %s", path, k, log_msg(log, "bad strip or tile size"));
  unsigned char *buf = NULL;
  int rc = dbtr_alloc((void **)&buf, (size_t)size, 1, path);
  if (!rc) rc = tiled ? read_tiles(t, path, k, p, buf, dst) : read_strips(t, path, k, p, buf, dst);
  free(buf);
  if (rc && log->msg[0]) { /* add libtiff's reason to ours */
    char ours[512];
    snprintf(ours, sizeof ours, "%s", dbtr_errmsg());
    rc = dbtr_err(rc, "%s: %s", ours, log->msg);
  }
  return rc;
}

/* The value of "key=" at the start of a line of desc, copied into out; 0 if absent. */
static int desc_value(const char *desc, const char *key, char *out, size_t n) {
  size_t kl = strlen(key);
  for (const char *line = desc; line && *line;) {
    if (strncmp(line, key, kl) == 0 && line[kl] == '=') {
      const char *v = line + kl + 1;
      size_t len = strcspn(v, "\r\n");
      if (len >= n) len = n - 1;
      memcpy(out, v, len);
      out[len] = '\0';
      return 1;
    }
    line = strchr(line, '\n');
    if (line) line++;
  }
  return 0;
}

/* Exactly n finite comma-separated numbers. strtod follows the C locale, which a C
 * program keeps unless it calls setlocale; dbtr never does. */
static int parse_doubles(const char *s, double *v, int n) {
  for (int i = 0; i < n; i++) {
    char *end;
    v[i] = strtod(s, &end);
    if (end == s || !isfinite(v[i]) || *end != (i + 1 < n ? ',' : '\0')) return 0;
    s = end + 1;
  }
  return 1;
}

/* Millimetres per unit of an ImageJ "unit=" value; 0 when unknown. */
static double unit_mm(const char *u) {
  static const struct {
    const char *name;
    double mm;
  } units[] = {{"mm", 1.0},        {"millimeter", 1.0}, {"cm", 10.0},     {"centimeter", 10.0},
               {"m", 1000.0},      {"meter", 1000.0},   {"micron", 1e-3}, {"um", 1e-3},
               {"\\u00B5m", 1e-3}, {"\xC2\xB5m", 1e-3}, {"nm", 1e-6},     {"inch", 25.4}};
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (strcmp(u, units[i].name) == 0) return units[i].mm;
  return 0.0;
}

/* Voxel size and origin from page 0 (docs/volume-format.md, "What dbtr reads"). */
static int read_metadata(TIFF *t, const char *path, dbtr_grid *g) {
  g->dx = g->dy = g->dz = 1.0;
  g->origin[0] = g->origin[1] = g->origin[2] = 0.0;
  char *tag = NULL, v[256];
  const char *desc = TIFFGetField(t, TIFFTAG_IMAGEDESCRIPTION, &tag) && tag ? tag : "";
  int imagej = strncmp(desc, "ImageJ=", 7) == 0;
  double unit = imagej && desc_value(desc, "unit", v, sizeof v) ? unit_mm(v) : 0.0;
  uint16_t resunit = RESUNIT_INCH;
  TIFFGetFieldDefaulted(t, TIFFTAG_RESOLUTIONUNIT, &resunit);
  /* mm per resolution unit. Inches almost always carry a screen "72 dpi", not a voxel size. */
  double per = unit > 0.0 ? unit : resunit == RESUNIT_NONE ? 1.0 : resunit == RESUNIT_CENTIMETER ? 10.0 : 0.0;
  /* A voxel size the file states but that is no size (0, negative, NaN) is refused: taking
   * 1 mm instead would give a plausible volume of the wrong size. */
  float xr = 0.0f, yr = 0.0f;
  int has_x = per > 0.0 && TIFFGetField(t, TIFFTAG_XRESOLUTION, &xr);
  int has_y = per > 0.0 && TIFFGetField(t, TIFFTAG_YRESOLUTION, &yr);
  if ((has_x && !(isfinite(xr) && xr > 0.0f)) || (has_y && !(isfinite(yr) && yr > 0.0f)))
    return dbtr_err(DBTR_EFORMAT, "%s: XResolution %g, YResolution %g: a resolution must be a positive number of "
                    "pixels per unit", path, (double)xr, (double)yr);
  if (has_x) g->dx = per / (double)xr;
  if (has_y) g->dy = per / (double)yr;
  double s;
  if (imagej && desc_value(desc, "spacing", v, sizeof v)) {
    if (!parse_doubles(v, &s, 1) || !(s > 0.0))
      return dbtr_err(DBTR_EFORMAT, "%s: ImageDescription: spacing=%s is not a positive number (ImageJ's slice "
                      "thickness)", path, v);
    g->dz = s * (unit > 0.0 ? unit : 1.0);
  }
  double d[3];
  if (desc_value(desc, "dbtr_voxel_size", v, sizeof v)) {
    if (!parse_doubles(v, d, 3) || !(d[0] > 0.0 && d[1] > 0.0 && d[2] > 0.0))
      return dbtr_err(DBTR_EFORMAT, "%s: ImageDescription: dbtr_voxel_size=%s is not three positive numbers", path, v);
    g->dx = d[0], g->dy = d[1], g->dz = d[2];
  }
  if (desc_value(desc, "dbtr_origin", v, sizeof v)) {
    if (!parse_doubles(v, g->origin, 3))
      return dbtr_err(DBTR_EFORMAT, "%s: ImageDescription: dbtr_origin=%s is not three numbers", path, v);
  }
  return 0;
}

/* Walks every page once, checking each before anything is allocated. */
static int scan_pages(TIFF *t, const char *path, uint64_t file_size, page_info *first, size_t *nz, tiff_log *log) {
  size_t k = 0;
  for (;;) {
    page_info p;
    int rc = get_page_info(t, path, k, &p);
    if (rc) return rc;
    if (k == 0) *first = p;
    if (p.w != first->w || p.h != first->h)
      return dbtr_err(DBTR_EFORMAT, "%s: page %zu is %u x %u pixels but page 0 is %u x %u: a volume's pages must match",
                      path, k, p.w, p.h, first->w, first->h);
    size_t bytes;
    char what[64];
    snprintf(what, sizeof what, "page %zu", k);
    if ((rc = dbtr_size_mul3(p.w, p.h, p.bits / 8u, &bytes, what)))
      return dbtr_err(rc, "%s: page %zu: %u x %u pixels of %u bits overflow the address space", path, k, p.w, p.h,
                      (unsigned)p.bits);
    uint16_t comp = COMPRESSION_NONE;
    TIFFGetFieldDefaulted(t, TIFFTAG_COMPRESSION, &comp);
    /* Uncompressed pixels cannot outsize the file: refuse before allocating for them. */
    if (comp == COMPRESSION_NONE && (uint64_t)bytes > file_size)
      return dbtr_err(DBTR_EFORMAT, "%s: page %zu needs %zu bytes of pixels but the file has %llu (truncated?)", path,
                      k, bytes, (unsigned long long)file_size);
    k++;
    log->msg[0] = '\0';
    if (!TIFFReadDirectory(t)) break;
  }
  if (log->msg[0])
    return dbtr_err(DBTR_EFORMAT, "%s: page %zu: cannot read its IFD (truncated or corrupt file): %s", path, k,
                    log->msg);
  *nz = k;
  return 0;
}

static int read_volume(TIFF *t, const char *path, uint64_t file_size, dbtr_grid *grid, float **data, tiff_log *log) {
  page_info first = {0, 0, 0, 0};
  size_t nz = 0, count;
  int rc = read_metadata(t, path, grid);
  if (!rc) rc = scan_pages(t, path, file_size, &first, &nz, log);
  if (!rc && (rc = dbtr_size_mul3(first.w, first.h, nz, &count, path)))
    rc = dbtr_err(rc, "%s: %u x %u x %zu voxels overflow the address space", path, first.w, first.h, nz);
  char what[1100];
  snprintf(what, sizeof what, "%s: %u x %u x %zu voxels", path, first.w, first.h, nz);
  /* A compressed TIFF declares sizes far beyond its own: checked before it expands. */
  if (!rc) rc = dbtr_mem_check(4.0 * (double)count, what);
  if (!rc) rc = dbtr_alloc((void **)data, count, sizeof(float), path);
  if (rc) return rc;
  grid->nx = first.w;
  grid->ny = first.h;
  grid->nz = nz;
  size_t plane = (size_t)first.w * first.h;
  for (size_t k = 0; k < nz && !rc; k++) {
    page_info p;
    log->msg[0] = '\0';
    if (!goto_page(t, k))
      rc = dbtr_err(DBTR_EFORMAT, "%s: page %zu: %s", path, k, log_msg(log, "cannot reread the IFD"));
    if (!rc) rc = get_page_info(t, path, k, &p);
    if (!rc) rc = read_page(t, path, k, &p, *data + k * plane, log);
  }
  return rc;
}

int dbtr_tiff_read(const char *path, dbtr_grid *grid, float **data) {
  if (!path || !grid || !data) return dbtr_err(DBTR_EINVAL, "TIFF input: missing path or output");
  *data = NULL;
  memset(grid, 0, sizeof *grid); /* zeroed on every failure, filled on success */
  struct stat st;
  /* libtiff would report a missing file as an unreadable TIFF; an I/O problem is an I/O error. */
  if (stat(path, &st) != 0) return dbtr_err(DBTR_EIO, "%s: cannot open: %s", path, strerror(errno));
  if (!S_ISREG(st.st_mode)) return dbtr_err(DBTR_EIO, "%s: not a regular file", path);
  tiff_log log;
  TIFF *t = tiff_open(path, "r", &log);
  if (!t)
    return dbtr_err(DBTR_EFORMAT, "%s: not a readable TIFF file: %s", path, log_msg(&log, "libtiff cannot open it"));
  int rc = read_volume(t, path, (uint64_t)st.st_size, grid, data, &log);
  tiff_close(t);
  if (rc) {
    free(*data);
    *data = NULL;
    memset(grid, 0, sizeof *grid);
  }
  return rc;
}
