/* tests/test_tiff_read.c: the TIFF volume reader (io/tiff.c, docs/volume-format.md).
 *
 * Files written by other tools (libtiff used directly: tiles, big-endian, other sample
 * types and resolution units), and every refusal of the reader: each message must name
 * the file, and the page where there is one. */
#include <stdint.h>
#include <tiffio.h>
#include <unistd.h>

#include "io/tiff.h"
#include "io/tiff_internal.h"
#include "recon/error.h"
#include "tests/test.h"
#include "tests/tiff_fixtures.h"
#include "tests/tmpdir.h"

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

/* Files of dbtr before one strip per page: pages in strips of a few rows, and the
 * description without vunit or calibration keys. They still read whole, with the exact
 * voxel size and origin of the dbtr keys, and uint16 as the stored integers. */
DBTR_TEST(read_dbtr_many_strips) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "old.tif");
  enum { W = 6, H = 7, P = 3 }; /* 7 rows in strips of 2: four strips a page, the last short */
  double vals[P * H * W];
  for (int i = 0; i < P * H * W; i++) vals[i] = (double)i * 0.25 - 3.0; /* quarters: exact in float */
  const char *desc =
      "ImageJ=1.11a\nimages=3\nslices=3\nunit=mm\nspacing=1.25\nloop=false\n"
      "dbtr_voxel_size=0.085000000000000006,0.10000000000000001,1.25\n"
      "dbtr_origin=-10.5,20.25,3\n";
  /* Resolutions 1/0.085 and 1/0.1 pixels per mm, as the old writer stored them; the
   * dbtr_voxel_size key takes precedence, so the read voxel size is exact. */
  foreign f32 = {"w", W, H, P, 0, 32, SAMPLEFORMAT_IEEEFP, 1, 0, RESUNIT_NONE, 11.764706f, 10.0f, desc};
  REQUIRE(write_foreign(path, &f32, vals) == 0);
  dbtr_grid r, want = make_grid(W, H, P);
  float *back = NULL;
  REQUIRE_OK(dbtr_tiff_read(path, &r, &back));
  CHECK(r.nx == W && r.ny == H && r.nz == P);
  int bad = 0;
  for (int i = 0; i < P * H * W; i++) bad += back[i] != (float)vals[i];
  CHECK_EQ_INT(bad, 0);
  CHECK(r.dx == want.dx && r.dy == want.dy && r.dz == want.dz);
  CHECK(r.origin[0] == want.origin[0] && r.origin[1] == want.origin[1] && r.origin[2] == want.origin[2]);
  free(back);
  foreign u16 = f32;
  u16.bits = 16, u16.format = SAMPLEFORMAT_UINT;
  for (int i = 0; i < P * H * W; i++) vals[i] = (double)(i * 100); /* up to 12500: fits uint16 */
  REQUIRE(write_foreign(path, &u16, vals) == 0);
  REQUIRE_OK(dbtr_tiff_read(path, &r, &back));
  bad = 0;
  for (int i = 0; i < P * H * W; i++) bad += back[i] != (float)vals[i];
  CHECK_EQ_INT(bad, 0);
  free(back);
  tmp_remove(dir);
}

/* A voxel size the file states that is no size is refused, not taken as 1 mm: ImageJ
 * spacing 0, negative, NaN, text; a resolution of 0 pixels per unit. The message names the
 * file and quotes the value, with control bytes from the file made harmless. */
DBTR_TEST(refuse_bad_voxel_size) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "bad.tif");
  const char *spacings[] = {"0", "-1", "nan", "1mm", "\x1b[2J"};
  for (size_t i = 0; i < sizeof spacings / sizeof spacings[0]; i++) {
    char desc[256];
    snprintf(desc, sizeof desc, "ImageJ=1.53t\nimages=2\nslices=2\nunit=mm\nspacing=%s\nloop=false\n", spacings[i]);
    foreign f = {"w", 4, 3, 2, 0, 32, SAMPLEFORMAT_IEEEFP, 1, 0, RESUNIT_NONE, 4.0f, 2.0f, desc};
    REQUIRE(write_foreign(path, &f, NULL) == 0);
    dbtr_grid g;
    float *v = NULL;
    check_refusal(dbtr_tiff_read(path, &g, &v), DBTR_EFORMAT, path, "spacing=");
    CHECK(v == NULL);
    CHECK(strchr(dbtr_errmsg(), 0x1b) == NULL); /* the escape byte never reaches the terminal */
  }
  foreign zero = {"w", 4, 3, 2, 0, 32, SAMPLEFORMAT_IEEEFP, 1, 0, RESUNIT_NONE, 0.0f, 2.0f, NULL};
  REQUIRE(write_foreign(path, &zero, NULL) == 0);
  dbtr_grid g;
  float *v = NULL;
  check_refusal(dbtr_tiff_read(path, &g, &v), DBTR_EFORMAT, path, "XResolution 0");
  tmp_remove(dir);
}

DBTR_TEST_MAIN(refuse_bad_voxel_size, refuse_not_tiff, refuse_truncated, refuse_page_sizes, refuse_samples_and_bits, refuse_dims_overflow,
               read_tiled_big_endian_int16, read_types_and_units, read_dbtr_many_strips)
