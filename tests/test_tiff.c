/* tests/test_tiff.c: TIFF volumes (io/tiff.c, docs/volume-format.md).
 *
 * Round trips (float32 bit for bit, uint16 stored integers, a forced BigTIFF), the layout
 * that ImageJ relies on (pixel data of all pages in one contiguous block), the tags and the
 * ImageJ description read back with libtiff itself, files written by other tools (tiles,
 * big-endian, other sample types and resolution units), every refusal of the reader (each
 * message must name the file, and the page where there is one), failed writes that must
 * leave nothing behind. Other programs reading these files: tests/test_tiff_readers.c. */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <tiffio.h>
#include <unistd.h>

#include "io/tiff.h"
#include "io/tiff_internal.h"
#include "recon/error.h"
#include "tests/test.h"
#include "tests/tmpdir.h"


static long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* ---- volumes ---- */

/* A grid whose sizes have no short binary expansion (0.085 mm is the `siemens` pixel), so
 * an exact read back shows the numbers were not rounded on the way. */
static dbtr_grid make_grid(size_t nx, size_t ny, size_t nz) {
  dbtr_grid g = {nx, ny, nz, 0.085, 0.1, 1.25, {-10.5, 20.25, 3.0}};
  return g;
}

/* v = 100 z + 10 y + x: every voxel tells where it belongs, so a swapped axis shows. */
static float *coded_volume(const dbtr_grid *g) {
  float *v = malloc(g->nx * g->ny * g->nz * sizeof(float));
  for (size_t z = 0; z < g->nz; z++)
    for (size_t y = 0; y < g->ny; y++)
      for (size_t x = 0; x < g->nx; x++) v[(z * g->ny + y) * g->nx + x] = (float)(100 * z + 10 * y + x);
  return v;
}

/* ---- files written by "another tool": libtiff directly ---- */

typedef struct {
  const char *mode;           /* "w", "wb" (big-endian), "w8" */
  uint32_t w, h, pages;       /* every page w x h ... */
  uint32_t w_last;            /* ... except the last, w_last wide when not 0 */
  uint16_t bits, format, spp; /* SAMPLEFORMAT_* */
  uint32_t tile;              /* square tiles of this size; 0: strips of 2 rows */
  uint16_t resunit;           /* 0: no resolution tags */
  float xres, yres;
  const char *desc; /* ImageDescription of page 0, or NULL */
} foreign;

static void put_sample(unsigned char *dst, double v, const foreign *f) {
  if (f->format == SAMPLEFORMAT_IEEEFP && f->bits == 64)
    memcpy(dst, &v, 8);
  else if (f->format == SAMPLEFORMAT_IEEEFP) {
    float x = (float)v;
    memcpy(dst, &x, 4);
  } else if (f->bits == 8)
    dst[0] = (unsigned char)(int)v;
  else if (f->bits == 16) {
    int16_t x = (int16_t)v;
    memcpy(dst, &x, 2);
  } else {
    int32_t x = (int32_t)v;
    memcpy(dst, &x, 4);
  }
}

/* Page k holds vals[k * w * h ...] (NULL: zeros). Returns 0 on success. */
static int write_foreign(const char *path, const foreign *f, const double *vals) {
  TIFF *t = TIFFOpen(path, f->mode);
  if (!t) return -1;
  int ok = 1;
  for (uint32_t k = 0; k < f->pages && ok; k++) {
    uint32_t w = (k + 1 == f->pages && f->w_last) ? f->w_last : f->w;
    uint16_t spp = f->spp ? f->spp : 1;
    size_t sb = f->bits >= 8 ? f->bits / 8u : 1, row = f->bits >= 8 ? w * sb * spp : (w * f->bits + 7) / 8;
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, w);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, f->h);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, f->bits);
    TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, f->format);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, spp);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, spp == 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    if (f->resunit) {
      TIFFSetField(t, TIFFTAG_RESOLUTIONUNIT, f->resunit);
      TIFFSetField(t, TIFFTAG_XRESOLUTION, (double)f->xres);
      TIFFSetField(t, TIFFTAG_YRESOLUTION, (double)f->yres);
    }
    if (k == 0 && f->desc) TIFFSetField(t, TIFFTAG_IMAGEDESCRIPTION, f->desc);
    uint32_t bw = f->tile ? f->tile : w, bh = f->tile ? f->tile : 2;
    if (f->tile) {
      TIFFSetField(t, TIFFTAG_TILEWIDTH, bw);
      TIFFSetField(t, TIFFTAG_TILELENGTH, bh);
    } else {
      TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, bh);
    }
    size_t bsize = f->tile ? (size_t)bw * bh * sb * spp : row * bh;
    unsigned char *buf = calloc(bsize, 1);
    for (uint32_t y = 0; y < f->h && ok; y += bh)
      for (uint32_t x = 0; x < w && ok; x += bw) {
        memset(buf, 0, bsize);
        for (uint32_t r = 0; r < bh && y + r < f->h && vals && f->bits >= 8; r++)
          for (uint32_t c = 0; c < bw && x + c < w; c++)
            put_sample(buf + ((size_t)r * bw + c) * sb, vals[((size_t)k * f->h + y + r) * w + x + c], f);
        size_t n = f->tile ? bsize : row * (f->h - y < bh ? f->h - y : bh);
        ok = (f->tile ? TIFFWriteEncodedTile(t, TIFFComputeTile(t, x, y, 0, 0), buf, (tmsize_t)n)
                      : TIFFWriteEncodedStrip(t, TIFFComputeStrip(t, y, 0), buf, (tmsize_t)n)) >= 0;
      }
    free(buf);
    ok = ok && TIFFWriteDirectory(t);
  }
  TIFFClose(t);
  return ok ? 0 : -1;
}

/* ---- checks shared by several cases ---- */

/* The layout ImageJ needs: the strips of every page follow each other with no gap, page
 * after page, the block ends the file, and its bytes are the volume in (z, y, x) order. */
static void check_contiguous(const char *path, const float *vol, size_t n) {
  TIFF *t = TIFFOpen(path, "r");
  REQUIRE(t);
  uint64_t first = TIFFGetStrileOffset(t, 0), next = first;
  do {
    for (uint32_t s = 0; s < TIFFNumberOfStrips(t); s++) {
      CHECK_EQ_U64(TIFFGetStrileOffset(t, s), next);
      next += TIFFGetStrileByteCount(t, s);
    }
  } while (TIFFReadDirectory(t));
  TIFFClose(t);
  CHECK_EQ_U64(next - first, n * sizeof(float));
  CHECK_EQ_U64(next, (uint64_t)file_size(path));
  /* Read the block the way ImageJ does: one run of bytes from the first strip. The test
   * host is little-endian like the file libtiff wrote, so the bytes are the floats. */
  FILE *fp = fopen(path, "rb");
  REQUIRE(fp);
  float *raw = malloc(n * sizeof(float));
  int got = fseek(fp, (long)first, SEEK_SET) == 0 && fread(raw, sizeof(float), n, fp) == n;
  fclose(fp);
  CHECK(got && memcmp(raw, vol, n * sizeof(float)) == 0);
  free(raw);
}

/* rc is code, the message names path and contains what (NULL: nothing more). */
static void check_refusal(int rc, int code, const char *path, const char *what) {
  CHECK_EQ_INT(rc, code);
  CHECK_STR_CONTAINS(dbtr_errmsg(), path);
  if (what) CHECK_STR_CONTAINS(dbtr_errmsg(), what);
}

/* ---- cases ---- */

DBTR_TEST(u16_conversion) {
  CHECK_EQ_INT(dbtr_u16_from_double(-69.235), 0);                /* negative saturates at 0, never wraps */
  CHECK_EQ_INT(dbtr_u16_from_double(65535.4), 65535);            /* rounds down to the top value */
  CHECK_EQ_INT(dbtr_u16_from_double(1e300), 65535);              /* far over range saturates */
  CHECK_EQ_INT(dbtr_u16_from_double(2.5), 3);                    /* half away from zero, not to even */
  CHECK_EQ_INT(dbtr_u16_from_double(0.49999999999999994), 0);    /* largest double below 0.5: v+0.5 would give 1 */
  CHECK_EQ_INT(dbtr_u16_from_double((double)NAN), 0);            /* NaN becomes 0 (documented in io/tiff.h) */
  CHECK_EQ_INT(dbtr_u16_from_double(-0.0), 0);                   /* negative zero */
  CHECK_EQ_INT(dbtr_u16_from_double(0.5), 1);                    /* the smallest value that rounds to 1 */
  CHECK_EQ_INT(dbtr_u16_from_double(1.5), 2);                    /* half away from zero again */
  CHECK_EQ_INT(dbtr_u16_from_double(65534.5), 65535);            /* the smallest value that reaches the top */
  CHECK_EQ_INT(dbtr_u16_from_double(65534.499999999993), 65534); /* one ulp (2^-37 here) below it */
  CHECK_EQ_INT(dbtr_u16_from_double((double)INFINITY), 65535);   /* +inf saturates like any large value */
  CHECK_EQ_INT(dbtr_u16_from_double(-(double)INFINITY), 0);      /* -inf is negative */
}

DBTR_TEST(float32_round_trip) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.tif");
  dbtr_grid g = make_grid(4, 3, 2); /* 24 voxels, every dim different */
  g.origin[0] = 1.0 / 3.0;          /* no short decimal form: only %.17g brings it back exactly */
  /* Values a float32 file must keep bit for bit: signed zero, the smallest subnormal, the
   * largest float, infinities, a NaN, and values with long binary expansions. */
  float v[24] = {0.0f,     -0.0f,     1e-45f, -1e-45f, 3.4028235e38f, -3.4028235e38f,
                 INFINITY, -INFINITY, NAN,    0.1f,    -0.3f,         1.0f / 3.0f};
  for (int i = 12; i < 24; i++) v[i] = (float)i * 0.7f - 5.0f;
  REQUIRE_OK(dbtr_tiff_write(path, &g, v, NULL));
  CHECK_EQ_INT(tmp_count(dir), 1); /* the file and no temporary */
  dbtr_grid r;
  float *back = NULL;
  REQUIRE_OK(dbtr_tiff_read(path, &r, &back));
  CHECK_EQ_U64(r.nx, 4);
  CHECK_EQ_U64(r.ny, 3);
  CHECK_EQ_U64(r.nz, 2);
  CHECK(memcmp(back, v, sizeof v) == 0);
  /* Exact: the description carries every number with 17 significant digits. */
  CHECK(r.dx == g.dx && r.dy == g.dy && r.dz == g.dz);
  CHECK(r.origin[0] == g.origin[0] && r.origin[1] == g.origin[1] && r.origin[2] == g.origin[2]);
  free(back);
  tmp_remove(dir);
}

DBTR_TEST(uint16_round_trip) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.tif");
  dbtr_grid g = make_grid(4, 2, 2); /* 16 voxels for the 16 cases below */
  /* stored = round_sat((v - offset) * scale) with offset -1 and scale 100, worked out by
   * hand in double from each float: */
  const float v[16] = {-2.0f,    -1.0f,   0.0f,    0.125f, 0.25f,    0.5f,      1.0f, 654.34f,
                       654.345f, 654.35f, 1000.0f, NAN,    INFINITY, -INFINITY, 2.5f, -0.995f};
  const float want[16] = {
      0,     /* -2: -100, negative saturates */
      0,     /* -1: 0 */
      100,   /* 0: 100 */
      113,   /* 0.125: 112.5, half away from zero */
      125,   /* 0.25: 125 */
      150,   /* 0.5: 150 */
      200,   /* 1: 200 */
      65534, /* the float 654.34 is 654.3400268..., so 65534.0027 */
      65534, /* 654.344970703125: 65534.497, just below the half */
      65535, /* 654.3499755859375: 65534.998 */
      65535, /* 1000: 100100, saturates */
      0,     /* NaN */
      65535, /* +inf */
      0,     /* -inf */
      350,   /* 2.5: 350 */
      0,     /* the float -0.995 is -0.99500000477, so 0.49999952: rounds to 0 */
  };
  dbtr_tiff_opts o = {DBTR_TIFF_UINT16, 100.0, -1.0};
  REQUIRE_OK(dbtr_tiff_write(path, &g, v, &o));
  dbtr_grid r;
  float *back = NULL;
  REQUIRE_OK(dbtr_tiff_read(path, &r, &back));
  for (int i = 0; i < 16; i++) CHECK_EQ_INT(back[i], want[i]); /* raw stored integers, not rescaled */
  CHECK(r.dx == g.dx && r.dz == g.dz && r.origin[1] == g.origin[1]);
  TIFF *t = TIFFOpen(path, "r");
  REQUIRE(t);
  uint16_t bits = 0, fmt = 0;
  char *desc = NULL;
  TIFFGetField(t, TIFFTAG_BITSPERSAMPLE, &bits);
  TIFFGetField(t, TIFFTAG_SAMPLEFORMAT, &fmt);
  TIFFGetField(t, TIFFTAG_IMAGEDESCRIPTION, &desc);
  CHECK_EQ_INT(bits, 16);
  CHECK_EQ_INT(fmt, SAMPLEFORMAT_UINT);
  /* min/max: the range of the stored values above, for ImageJ's display. */
  CHECK_STR_CONTAINS(desc, "\nloop=false\nmin=0\nmax=65535\n");
  CHECK_STR_CONTAINS(desc, "\ndbtr_u16_scale=100\ndbtr_u16_offset=-1\n");
  TIFFClose(t);
  free(back);
  tmp_remove(dir);
}

DBTR_TEST(three_pages_nx_ne_ny) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.tif");
  dbtr_grid g = make_grid(7, 5, 3); /* 7 != 5: a transposed slice cannot match */
  float *v = coded_volume(&g);
  REQUIRE_OK(dbtr_tiff_write(path, &g, v, NULL));
  dbtr_grid r;
  float *back = NULL;
  REQUIRE_OK(dbtr_tiff_read(path, &r, &back));
  CHECK_EQ_U64(r.nx, 7);
  CHECK_EQ_U64(r.ny, 5);
  CHECK_EQ_U64(r.nz, 3);
  CHECK(memcmp(back, v, 7 * 5 * 3 * sizeof(float)) == 0);
  /* Independently of our reader: page 1 is 7 wide and 5 long, and its row 2, column 4 holds
   * 100*1 + 10*2 + 4 = 124. */
  TIFF *t = TIFFOpen(path, "r");
  REQUIRE(t);
  REQUIRE(TIFFSetDirectory(t, 1));
  uint32_t w = 0, h = 0;
  TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &w);
  TIFFGetField(t, TIFFTAG_IMAGELENGTH, &h);
  CHECK_EQ_INT(w, 7);
  CHECK_EQ_INT(h, 5);
  float row[7];
  REQUIRE(TIFFReadScanline(t, row, 2, 0) == 1);
  CHECK_EQ_INT(row[4], 124);
  CHECK_EQ_INT(TIFFNumberOfDirectories(t), 3);
  TIFFClose(t);
  free(back);
  free(v);
  tmp_remove(dir);
}

DBTR_TEST(imagej_description) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.tif");
  dbtr_grid g = make_grid(4, 3, 3); /* 3 slices: images=3, slices=3 below */
  float *v = coded_volume(&g);
  REQUIRE_OK(dbtr_tiff_write(path, &g, v, NULL));
  TIFF *t = TIFFOpen(path, "r");
  REQUIRE(t);
  char *desc = NULL;
  REQUIRE(TIFFGetField(t, TIFFTAG_IMAGEDESCRIPTION, &desc));
  /* The whole string: ImageJ's keys first, then ours; 0.085 and 0.1 printed with %.17g. */
  const char *want =
      "ImageJ=1.11a\nimages=3\nslices=3\nunit=mm\nspacing=1.25\nloop=false\n"
      "dbtr_voxel_size=0.085000000000000006,0.10000000000000001,1.25\n"
      "dbtr_origin=-10.5,20.25,3\n";
  CHECK(strcmp(desc, want) == 0);
  if (strcmp(desc, want) != 0) fprintf(stderr, "description was:\n%s", desc);
  /* ImageJ reads the first page's description only; the others carry none. */
  REQUIRE(TIFFReadDirectory(t));
  CHECK(!TIFFGetField(t, TIFFTAG_IMAGEDESCRIPTION, &desc));
  TIFFClose(t);
  free(v);
  tmp_remove(dir);
}

DBTR_TEST(page_tags) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.tif");
  /* 300 x 100 floats: 1200-byte rows, so 65536 / 1200 = 54 rows per strip (64800 bytes). */
  dbtr_grid g = make_grid(300, 100, 2);
  float *v = coded_volume(&g);
  REQUIRE_OK(dbtr_tiff_write(path, &g, v, NULL));
  TIFF *t = TIFFOpen(path, "r");
  REQUIRE(t);
  do {
    uint16_t bits = 0, fmt = 0, spp = 0, planar = 0, comp = 0, unit = 0;
    uint32_t rps = 0;
    float xr = 0.0f, yr = 0.0f;
    TIFFGetField(t, TIFFTAG_BITSPERSAMPLE, &bits);
    TIFFGetField(t, TIFFTAG_SAMPLEFORMAT, &fmt);
    TIFFGetField(t, TIFFTAG_SAMPLESPERPIXEL, &spp);
    TIFFGetField(t, TIFFTAG_PLANARCONFIG, &planar);
    TIFFGetField(t, TIFFTAG_COMPRESSION, &comp);
    TIFFGetField(t, TIFFTAG_ROWSPERSTRIP, &rps);
    TIFFGetField(t, TIFFTAG_RESOLUTIONUNIT, &unit);
    TIFFGetField(t, TIFFTAG_XRESOLUTION, &xr);
    TIFFGetField(t, TIFFTAG_YRESOLUTION, &yr);
    CHECK_EQ_INT(bits, 32);
    CHECK_EQ_INT(fmt, SAMPLEFORMAT_IEEEFP);
    CHECK_EQ_INT(spp, 1);
    CHECK_EQ_INT(planar, PLANARCONFIG_CONTIG);
    CHECK_EQ_INT(comp, COMPRESSION_NONE);
    CHECK_EQ_INT(rps, 54);
    CHECK_EQ_INT(TIFFNumberOfStrips(t), 2); /* 100 rows in strips of 54 */
    CHECK_EQ_INT(unit, RESUNIT_NONE);
    /* Pixels per mm. libtiff keeps resolutions as floats: one rounding to float on writing
     * and one on reading back (the rational between is far finer), 2^-24 relative each. */
    CHECK_NEAR(xr, 1.0 / 0.085, (1.0 / 0.085) * 0x1p-23);
    CHECK_NEAR(yr, 10.0, 10.0 * 0x1p-23);
  } while (TIFFReadDirectory(t));
  CHECK(!TIFFIsBigTIFF(t)); /* 240 KB is far below the BigTIFF threshold */
  TIFFClose(t);
  free(v);
  tmp_remove(dir);
}

DBTR_TEST(bigtiff_decision) {
  const size_t limit = ((size_t)4 << 30) - ((size_t)64 << 20); /* 4 GiB less 64 MiB of headroom */
  CHECK_EQ_INT(dbtr__tiff_needs_bigtiff(0), 0);
  CHECK_EQ_INT(dbtr__tiff_needs_bigtiff((size_t)1 << 30), 0); /* 1 GiB: classic */
  CHECK_EQ_INT(dbtr__tiff_needs_bigtiff(limit), 0);           /* the last size that stays classic */
  CHECK_EQ_INT(dbtr__tiff_needs_bigtiff(limit + 1), 1);       /* one byte more */
  CHECK_EQ_INT(dbtr__tiff_needs_bigtiff((size_t)4 << 30), 1); /* exactly 4 GiB */
  CHECK_EQ_INT(dbtr__tiff_needs_bigtiff(SIZE_MAX), 1);
}

DBTR_TEST(bigtiff_forced_round_trip) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.tif");
  dbtr_grid g = make_grid(6, 5, 3); /* small: BigTIFF is forced, not needed */
  float *v = coded_volume(&g);
  REQUIRE_OK(dbtr__tiff_write_ex(path, &g, v, NULL, 1));
  TIFF *t = TIFFOpen(path, "r");
  REQUIRE(t);
  CHECK(TIFFIsBigTIFF(t));
  TIFFClose(t);
  dbtr_grid r;
  float *back = NULL;
  REQUIRE_OK(dbtr_tiff_read(path, &r, &back));
  CHECK(r.nx == 6 && r.ny == 5 && r.nz == 3);
  CHECK(memcmp(back, v, 6 * 5 * 3 * sizeof(float)) == 0);
  CHECK(r.dy == g.dy && r.origin[2] == g.origin[2]);
  free(back);
  free(v);
  tmp_remove(dir);
}

DBTR_TEST(contiguous_pixel_data) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.tif");
  /* Two shapes: 300 x 100 (two strips a page), and 20000 x 2 whose 80000-byte rows are
   * strips past 65535 bytes, so the byte counts need 32 bits. Each in classic and BigTIFF. */
  const size_t shapes[2][3] = {{300, 100, 3}, {20000, 2, 3}};
  for (int s = 0; s < 2; s++)
    for (int big = 0; big < 2; big++) {
      dbtr_grid g = make_grid(shapes[s][0], shapes[s][1], shapes[s][2]);
      float *v = coded_volume(&g);
      CHECK_OK(dbtr__tiff_write_ex(path, &g, v, NULL, big));
      check_contiguous(path, v, g.nx * g.ny * g.nz);
      free(v);
    }
  tmp_remove(dir);
}

DBTR_TEST(refuse_not_tiff) {
  char dir[64], path[256], missing[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "text.tif");
  tmp_path(missing, dir, "missing.tif");
  FILE *fp = fopen(path, "w");
  REQUIRE(fp);
  fputs("this is a text file, not a TIFF\n", fp);
  fclose(fp);
  dbtr_grid r;
  float *back = (float *)&r; /* must come back NULL */
  check_refusal(dbtr_tiff_read(path, &r, &back), DBTR_EFORMAT, path, "not a readable TIFF");
  CHECK(back == NULL);
  check_refusal(dbtr_tiff_read(missing, &r, &back), DBTR_EIO, missing, "No such file");
  check_refusal(dbtr_tiff_read(dir, &r, &back), DBTR_EIO, dir, "not a regular file");
  tmp_remove(dir);
}

DBTR_TEST(refuse_truncated) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.tif");
  dbtr_grid g = make_grid(7, 5, 3); /* 3 pages: the last one, page 2, is cut */
  float *v = coded_volume(&g), *back = NULL;
  dbtr_grid r;
  REQUIRE_OK(dbtr_tiff_write(path, &g, v, NULL));
  long size = file_size(path);
  /* One byte short: the last strip of the last page (page 2) is cut. */
  REQUIRE(truncate(path, size - 1) == 0);
  check_refusal(dbtr_tiff_read(path, &r, &back), DBTR_EFORMAT, path, "page 2");
  CHECK(back == NULL);
  /* Cut inside page 1's IFD: page 0 opens, the chain then breaks at page 1. */
  REQUIRE_OK(dbtr_tiff_write(path, &g, v, NULL));
  TIFF *t = TIFFOpen(path, "r");
  REQUIRE(t);
  REQUIRE(TIFFReadDirectory(t));
  uint64_t ifd1 = TIFFCurrentDirOffset(t);
  TIFFClose(t);
  REQUIRE(truncate(path, (off_t)ifd1 + 6) == 0); /* the entry count and a third of an entry */
  check_refusal(dbtr_tiff_read(path, &r, &back), DBTR_EFORMAT, path, "page 1");
  /* Cut inside the header: nothing is readable. */
  REQUIRE(truncate(path, 6) == 0);
  check_refusal(dbtr_tiff_read(path, &r, &back), DBTR_EFORMAT, path, NULL);
  free(v);
  tmp_remove(dir);
}

DBTR_TEST(refuse_page_sizes) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "sizes.tif");
  /* Three 8-bit pages 6 x 4, the last 5 x 4. */
  foreign f = {"w", 6, 4, 3, 5, 8, SAMPLEFORMAT_UINT, 1, 0, 0, 0.0f, 0.0f, NULL};
  REQUIRE(write_foreign(path, &f, NULL) == 0);
  dbtr_grid r;
  float *back = NULL;
  check_refusal(dbtr_tiff_read(path, &r, &back), DBTR_EFORMAT, path, "page 2 is 5 x 4 pixels but page 0 is 6 x 4");
  CHECK(back == NULL);
  CHECK(r.nx == 0 && r.nz == 0 && r.dx == 0.0); /* the grid is zeroed, not half filled */
  tmp_remove(dir);
}

DBTR_TEST(refuse_samples_and_bits) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "bad.tif");
  dbtr_grid r;
  float *back = NULL;
  foreign rgb = {"w", 4, 4, 1, 0, 8, SAMPLEFORMAT_UINT, 3, 0, 0, 0.0f, 0.0f, NULL};
  REQUIRE(write_foreign(path, &rgb, NULL) == 0);
  check_refusal(dbtr_tiff_read(path, &r, &back), DBTR_EFORMAT, path, "page 0: 3 samples per pixel");
  foreign bitmap = {"w", 16, 4, 1, 0, 1, SAMPLEFORMAT_UINT, 1, 0, 0, 0.0f, 0.0f, NULL};
  REQUIRE(write_foreign(path, &bitmap, NULL) == 0);
  check_refusal(dbtr_tiff_read(path, &r, &back), DBTR_EFORMAT, path, "page 0: 1-bit samples");
  /* 64-bit integers: a depth libtiff reads but a float volume cannot hold. */
  foreign i64 = {"w", 4, 4, 2, 0, 64, SAMPLEFORMAT_INT, 1, 0, 0, 0.0f, 0.0f, NULL};
  REQUIRE(write_foreign(path, &i64, NULL) == 0);
  check_refusal(dbtr_tiff_read(path, &r, &back), DBTR_EFORMAT, path, "page 0: 64-bit samples of format 2");
  CHECK(back == NULL);
  tmp_remove(dir);
}

/* A little-endian classic TIFF of `pages` IFDs of w x h samples in one strip (RowsPerStrip
 * 2^32-1, "all rows"), written byte by byte because libtiff refuses to write such sizes;
 * the data is 16 bytes. */
static int write_huge_header(const char *path, uint32_t w, uint32_t h, uint16_t bits, uint16_t comp, int pages) {
  const uint16_t tags[10] = {256, 257, 258, 259, 262, 273, 277, 278, 279, 339};
  const uint16_t types[10] = {4, 4, 3, 3, 3, 4, 3, 4, 4, 3};
  const uint32_t ifd_size = 2 + 10 * 12 + 4, data = 8 + (uint32_t)pages * ifd_size;
  FILE *fp = fopen(path, "wb");
  if (!fp) return -1;
  unsigned char hdr[8] = {'I', 'I', 42, 0, 8, 0, 0, 0};
  fwrite(hdr, 1, 8, fp);
  for (int k = 0; k < pages; k++) {
    uint32_t values[10] = {w, h, bits, comp, 1, data, 1, 0xFFFFFFFFu, 16, bits == 8 ? 1u : 3u};
    uint16_t n = 10;
    fwrite(&n, 2, 1, fp);
    for (int i = 0; i < 10; i++) {
      uint32_t count = 1;
      fwrite(&tags[i], 2, 1, fp);
      fwrite(&types[i], 2, 1, fp);
      fwrite(&count, 4, 1, fp);
      fwrite(&values[i], 4, 1, fp); /* native order is the file's 'II' on x86-64 and ARM64; SHORTs sit low */
    }
    uint32_t next = k + 1 < pages ? 8 + (uint32_t)(k + 1) * ifd_size : 0;
    fwrite(&next, 4, 1, fp);
  }
  unsigned char zeros[16] = {0};
  fwrite(zeros, 1, 16, fp);
  return fclose(fp) == 0 ? 0 : -1;
}

DBTR_TEST(refuse_dims_overflow) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "huge.tif");
  dbtr_grid r;
  float *back = NULL;
  /* One page of 2^31 x 2^31 32-bit floats is 2^64 bytes: libtiff itself refuses the page
   * ("Integer overflow in TIFFVStripSize64"), and the message passes its reason on. */
  REQUIRE(write_huge_header(path, 0x80000000u, 0x80000000u, 32, COMPRESSION_ADOBE_DEFLATE, 1) == 0);
  check_refusal(dbtr_tiff_read(path, &r, &back), DBTR_EFORMAT, path, "overflow");
  /* Four deflate pages of 2^31 x 2^31 bytes: each page fits (2^62), the volume's 2^64
   * voxels do not. Compressed, so the file size says nothing; the product must be caught. */
  REQUIRE(write_huge_header(path, 0x80000000u, 0x80000000u, 8, COMPRESSION_ADOBE_DEFLATE, 4) == 0);
  check_refusal(dbtr_tiff_read(path, &r, &back), DBTR_EOVERFLOW, path, "overflow");
  /* Uncompressed 2^31 x 2^31 bytes in a 300-byte file: refused as truncated, unallocated. */
  REQUIRE(write_huge_header(path, 0x80000000u, 0x80000000u, 8, COMPRESSION_NONE, 1) == 0);
  check_refusal(dbtr_tiff_read(path, &r, &back), DBTR_EFORMAT, path, "truncated");
  CHECK(back == NULL);
  tmp_remove(dir);
}

DBTR_TEST(missing_folder) {
  char dir[64], path[256], sub[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(sub, dir, "no_such_folder");
  tmp_path(path, dir, "no_such_folder/vol.tif");
  dbtr_grid g = make_grid(4, 3, 2); /* any valid volume */
  float *v = coded_volume(&g);
  check_refusal(dbtr_tiff_write(path, &g, v, NULL), DBTR_EIO, path, NULL);
  CHECK_EQ_INT(tmp_count(dir), 0); /* no folder made, no file, no temporary */
  free(v);
  tmp_remove(dir);
}

/* A write that libtiff cannot finish (the file size limit is hit mid-data) must return
 * DBTR_EIO with libtiff's reason, remove its temporary, and leave the old file intact. */
static int write_big_volume(void *path) {
  /* 64 x 64 x 16 floats are 256 KiB; the limit of 64 KiB stops the data part way. */
  dbtr_grid g = make_grid(64, 64, 16);
  float *v = coded_volume(&g);
  int rc = dbtr_tiff_write(path, &g, v, NULL);
  int ok = rc == DBTR_EIO && strstr(dbtr_errmsg(), path) && strstr(dbtr_errmsg(), "page");
  if (!ok) fprintf(stderr, "child: rc %d: %s\n", rc, dbtr_errmsg());
  free(v);
  return ok;
}

DBTR_TEST(failed_write_leaves_nothing) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.tif");
  FILE *fp = fopen(path, "w");
  REQUIRE(fp);
  fputs("previous result\n", fp);
  fclose(fp);
  CHECK(run_with_file_limit(64 * 1024, write_big_volume, path));
  CHECK_EQ_INT(tmp_count(dir), 1);   /* the old file only: the temporary is gone */
  CHECK_EQ_INT(file_size(path), 16); /* "previous result\n", untouched */
  tmp_remove(dir);
}

DBTR_TEST(write_refusals) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.tif");
  float v[24] = {0}; /* 4 x 3 x 2 */
  dbtr_grid g = make_grid(4, 3, 2), bad;
  bad = g, bad.nx = 0;
  check_refusal(dbtr_tiff_write(path, &bad, v, NULL), DBTR_EINVAL, path, "no voxels");
  bad = g, bad.dz = 0.0;
  check_refusal(dbtr_tiff_write(path, &bad, v, NULL), DBTR_EINVAL, path, "positive");
  bad = g, bad.origin[1] = (double)NAN;
  check_refusal(dbtr_tiff_write(path, &bad, v, NULL), DBTR_EINVAL, path, "finite");
  bad = g, bad.nx = (size_t)UINT32_MAX + 1;
  check_refusal(dbtr_tiff_write(path, &bad, v, NULL), DBTR_EINVAL, path, "2^32-1");
  dbtr_tiff_opts o = {DBTR_TIFF_UINT16, 0.0, 0.0}; /* a zero scale would store all zeros */
  check_refusal(dbtr_tiff_write(path, &g, v, &o), DBTR_EINVAL, path, "scale");
  CHECK_EQ_INT(tmp_count(dir), 0);
  tmp_remove(dir);
}

DBTR_TEST(read_tiled_big_endian_int16) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "tiled.tif");
  /* 20 x 18 in 16 x 16 tiles: partial tiles on the right and at the bottom. Big-endian,
   * so every sample is byte-swapped on the way in. Values from -800 up cover negatives. */
  enum { W = 20, H = 18, P = 2 };
  double vals[P * H * W];
  for (int i = 0; i < P * H * W; i++) vals[i] = (double)i - 800.0;
  foreign f = {"wb", W, H, P, 0, 16, SAMPLEFORMAT_INT, 1, 16, 0, 0.0f, 0.0f, NULL};
  REQUIRE(write_foreign(path, &f, vals) == 0);
  dbtr_grid r;
  float *back = NULL;
  REQUIRE_OK(dbtr_tiff_read(path, &r, &back));
  CHECK(r.nx == W && r.ny == H && r.nz == P);
  int bad = 0;
  for (int i = 0; i < P * H * W; i++) bad += back[i] != (float)vals[i];
  CHECK_EQ_INT(bad, 0);
  /* No resolution and no description: 1 mm voxels at the origin. */
  CHECK(r.dx == 1.0 && r.dy == 1.0 && r.dz == 1.0 && r.origin[0] == 0.0);
  free(back);
  tmp_remove(dir);
}

DBTR_TEST(read_types_and_units) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "foreign.tif");
  double vals[2 * 3 * 4];
  for (int i = 0; i < 24; i++) vals[i] = (double)i * 10.0 + 0.25; /* .25 survives float32/64, not the integers */
  dbtr_grid r;
  float *back = NULL;
  /* uint8 in centimetres: 50 pixels per cm is 0.2 mm (10 / 50, exact in double). */
  foreign u8 = {"w", 4, 3, 2, 0, 8, SAMPLEFORMAT_UINT, 1, 0, RESUNIT_CENTIMETER, 50.0f, 25.0f, NULL};
  REQUIRE(write_foreign(path, &u8, vals) == 0);
  REQUIRE_OK(dbtr_tiff_read(path, &r, &back));
  CHECK_EQ_INT(back[23], 230); /* 230.25 stored as the byte 230 */
  CHECK(r.dx == 0.2 && r.dy == 0.4 && r.dz == 1.0);
  free(back);
  /* float64 with a 72 dpi inch resolution: a screen setting, not a voxel size: 1 mm. */
  foreign f64 = {"w", 4, 3, 2, 0, 64, SAMPLEFORMAT_IEEEFP, 1, 0, RESUNIT_INCH, 72.0f, 72.0f, NULL};
  REQUIRE(write_foreign(path, &f64, vals) == 0);
  REQUIRE_OK(dbtr_tiff_read(path, &r, &back));
  CHECK(back[23] == 230.25f); /* exact in float64 and float32 */
  CHECK(r.dx == 1.0 && r.dy == 1.0);
  free(back);
  /* An ImageJ file in microns (as Fiji writes it): 4 pixels per micron is 0.00025 mm
   * (1e-3 / 4: exact scaling of the double 1e-3); spacing 2.5 micron is 2.5 x 1e-3 mm. */
  foreign um = {"w",
                4,
                3,
                2,
                0,
                32,
                SAMPLEFORMAT_INT,
                1,
                0,
                RESUNIT_NONE,
                4.0f,
                2.0f,
                "ImageJ=1.53t\nimages=2\nslices=2\nunit=micron\nspacing=2.5\nloop=false\n"};
  REQUIRE(write_foreign(path, &um, vals) == 0);
  REQUIRE_OK(dbtr_tiff_read(path, &r, &back));
  CHECK_EQ_INT(back[5], 50); /* 50.25 as int32 */
  CHECK(r.dx == 1e-3 / 4.0 && r.dy == 1e-3 / 2.0);
  CHECK_NEAR(r.dz, 2.5e-3, 2.5e-3 * 0x1p-52); /* two roundings (1e-3, the product), half an ulp each */
  free(back);
  tmp_remove(dir);
}

DBTR_TEST_MAIN(u16_conversion, float32_round_trip, uint16_round_trip, three_pages_nx_ne_ny, imagej_description,
               page_tags, bigtiff_decision, bigtiff_forced_round_trip, contiguous_pixel_data, refuse_not_tiff,
               refuse_truncated, refuse_page_sizes, refuse_samples_and_bits, refuse_dims_overflow, missing_folder,
               failed_write_leaves_nothing, write_refusals, read_tiled_big_endian_int16, read_types_and_units)
