/* tests/test_tiff.c: the TIFF volume writer (io/tiff.c, docs/volume-format.md).
 *
 * Round trips (float32 and float64 bit for bit, uint16 stored integers, a forced BigTIFF), the layout
 * that ImageJ relies on (pixel data of all pages in one contiguous block), the tags and the
 * ImageJ description read back with libtiff itself, and failed writes that must leave
 * nothing behind. The reader's refusals and files of other tools: tests/test_tiff_read.c;
 * other programs reading these files: tests/test_tiff_readers.c. */
#include <float.h>
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
#include "tests/tiff_fixtures.h"
#include "tests/tmpdir.h"

/* The layout ImageJ needs: the strips of every page follow each other with no gap, page
 * after page, the block ends the file, and its bytes are the volume's (bytes of them) in
 * (z, y, x) order. */
static void check_contiguous(const char *path, const void *vol, size_t bytes) {
  /* "c": the strips as stored; libtiff would otherwise present a large uncompressed strip
   * as many small ones ("strip chopping"). */
  TIFF *t = TIFFOpen(path, "rc");
  REQUIRE(t);
  uint64_t first = TIFFGetStrileOffset(t, 0), next = first;
  do {
    for (uint32_t s = 0; s < TIFFNumberOfStrips(t); s++) {
      CHECK_EQ_U64(TIFFGetStrileOffset(t, s), next);
      next += TIFFGetStrileByteCount(t, s);
    }
  } while (TIFFReadDirectory(t));
  TIFFClose(t);
  CHECK_EQ_U64(next - first, bytes);
  CHECK_EQ_U64(next, (uint64_t)file_size(path));
  /* Read the block the way ImageJ does: one run of bytes from the first strip. The test
   * host is little-endian like the file libtiff wrote, so the bytes are the samples. */
  FILE *fp = fopen(path, "rb");
  REQUIRE(fp);
  unsigned char *raw = malloc(bytes);
  int got = fseek(fp, (long)first, SEEK_SET) == 0 && fread(raw, 1, bytes, fp) == bytes;
  fclose(fp);
  CHECK(got && memcmp(raw, vol, bytes) == 0);
  free(raw);
}

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
  /* ImageJ's straight-line calibration value = c0 + c1 * stored, the inverse of the
   * scaling: c0 the offset, c1 = 1 / 100, printed with %.17g; min/max: the range of the
   * stored values above, for ImageJ's display. */
  CHECK_STR_CONTAINS(desc, "\nunit=mm\ncf=0\nc0=-1\nc1=0.01\nvunit=1/mm\n");
  CHECK_STR_CONTAINS(desc, "\nloop=false\nmin=0\nmax=65535\n");
  CHECK_STR_CONTAINS(desc, "\ndbtr_u16_scale=100\ndbtr_u16_offset=-1\n");
  TIFFClose(t);
  free(back);
  tmp_remove(dir);
}

/* float64 pages hold the doubles bit for bit, in the layout and with the description of
 * float32, classic and BigTIFF; dbtr's reader gives each value rounded to float. */
DBTR_TEST(float64_round_trip) {
  char dir[64], path[256], f32[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.tif");
  tmp_path(f32, dir, "f32.tif");
  dbtr_grid g = make_grid(4, 3, 2); /* 24 voxels, every dim different */
  g.origin[0] = 1.0 / 3.0;          /* only %.17g brings it back exactly */
  /* Values a float64 file must keep bit for bit: signed zero, the smallest subnormal double,
   * the largest double, infinities, a NaN, and values a float cannot hold: 1 + 2^-52 (the
   * double after 1), 0.1 and 1/3 in double, 1e-300 (below float's range). */
  double v[24] = {0.0, -0.0, 0x1p-1074, -0x1p-1074, DBL_MAX, -DBL_MAX, (double)INFINITY, -(double)INFINITY,
                  (double)NAN, 1.0 + 0x1p-52, 0.1, 1.0 / 3.0, 1e-300};
  for (int i = 13; i < 24; i++) v[i] = (double)i * 0.7 - 5.0;
  dbtr_tiff_opts o = {DBTR_TIFF_FLOAT64, 0.0, 0.0};
  for (int big = 0; big < 2; big++) {
    REQUIRE_OK(dbtr__tiff_write_ex(path, &g, v, &o, big));
    CHECK_EQ_INT(tmp_count(dir), 1); /* the file and no temporary */
    check_contiguous(path, v, sizeof v);
    TIFF *t = TIFFOpen(path, "r");
    REQUIRE(t);
    CHECK_EQ_INT(TIFFIsBigTIFF(t), big);
    uint16_t bits = 0, fmt = 0;
    char *desc = NULL;
    TIFFGetField(t, TIFFTAG_BITSPERSAMPLE, &bits);
    TIFFGetField(t, TIFFTAG_SAMPLEFORMAT, &fmt);
    REQUIRE(TIFFGetField(t, TIFFTAG_IMAGEDESCRIPTION, &desc));
    CHECK_EQ_INT(bits, 64);
    CHECK_EQ_INT(fmt, SAMPLEFORMAT_IEEEFP);
    /* libtiff's own reading of page 1, row 2: voxels 20..23. */
    REQUIRE(TIFFSetDirectory(t, 1));
    double row[4];
    REQUIRE(TIFFReadScanline(t, row, 2, 0) == 1);
    CHECK(memcmp(row, v + 20, sizeof row) == 0);
    /* The float32 file of the same grid has the same description, byte for byte. */
    REQUIRE(TIFFSetDirectory(t, 0));
    REQUIRE(TIFFGetField(t, TIFFTAG_IMAGEDESCRIPTION, &desc));
    float zeros[24] = {0};
    REQUIRE_OK(dbtr_tiff_write(f32, &g, zeros, NULL));
    TIFF *t32 = TIFFOpen(f32, "r");
    REQUIRE(t32);
    char *desc32 = NULL;
    REQUIRE(TIFFGetField(t32, TIFFTAG_IMAGEDESCRIPTION, &desc32));
    CHECK(strcmp(desc, desc32) == 0);
    TIFFClose(t32);
    TIFFClose(t);
    remove(f32);
    /* dbtr_tiff_read takes float64 files too, each value rounded to float; the grid exact. */
    dbtr_grid r;
    float *back = NULL;
    REQUIRE_OK(dbtr_tiff_read(path, &r, &back));
    CHECK(r.nx == 4 && r.ny == 3 && r.nz == 2);
    CHECK(r.dx == g.dx && r.dy == g.dy && r.dz == g.dz);
    CHECK(r.origin[0] == g.origin[0] && r.origin[1] == g.origin[1] && r.origin[2] == g.origin[2]);
    for (int i = 0; i < 24; i++) {
      float want = (float)v[i];
      CHECK(memcmp(&back[i], &want, sizeof want) == 0 || (isnan(v[i]) && isnan(back[i])));
    }
    free(back);
  }
  tmp_remove(dir);
}

/* Voxel sizes whose resolution (1/d pixels per mm) a TIFF RATIONAL (32-bit numerator and
 * denominator) cannot hold: 1e12 mm gave XResolution 0, which readers took as a size of
 * nothing (dbtr's own reader refused its own file). Such a file carries no resolution tags,
 * and the exact size stays in the description; a size within the range keeps its tags. */
DBTR_TEST(extreme_voxel_sizes_no_zero_resolution) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.tif");
  /* 1e12 mm: 1e-12 pixels per mm, below 2^-32; 1e-12 mm: 1e12, above 2^32; 0.1: inside. */
  const double sizes[3] = {1e12, 1e-12, 0.1};
  for (int i = 0; i < 3; i++) {
    dbtr_grid g = make_grid(4, 3, 2);
    g.dx = g.dy = sizes[i];
    float *v = coded_volume(&g);
    REQUIRE_OK(dbtr_tiff_write(path, &g, v, NULL));
    TIFF *t = TIFFOpen(path, "r");
    REQUIRE(t);
    float xr = -1.0f;
    int has = TIFFGetField(t, TIFFTAG_XRESOLUTION, &xr);
    TIFFClose(t);
    CHECK(i == 2 ? has && xr == (float)(1.0 / sizes[i]) : !has);
    dbtr_grid r;
    float *back = NULL;
    REQUIRE_OK(dbtr_tiff_read(path, &r, &back));
    CHECK(r.dx == sizes[i] && r.dy == sizes[i]);
    free(back);
    free(v);
    remove(path);
  }
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
      "ImageJ=1.11a\nimages=3\nslices=3\nunit=mm\nvunit=1/mm\nspacing=1.25\nloop=false\n"
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
  /* 300 x 100 floats: 120000 bytes a page, written as one strip. The writer once cut pages
   * into strips of about 64 KiB, two here, and ImageJ misreads a page of two strips. */
  dbtr_grid g = make_grid(300, 100, 2);
  float *v = coded_volume(&g);
  REQUIRE_OK(dbtr_tiff_write(path, &g, v, NULL));
  TIFF *t = TIFFOpen(path, "rc"); /* no strip chopping: the strips as stored */
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
    CHECK_EQ_INT(rps, 100);
    CHECK_EQ_INT(TIFFNumberOfStrips(t), 1);
    CHECK_EQ_U64(TIFFGetStrileByteCount(t, 0), 300 * 100 * sizeof(float));
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
  /* Two shapes: 300 x 100, and 20000 x 2 whose 80000-byte rows make strips past 65535
   * bytes, so the byte counts need 32 bits. Each in classic and BigTIFF. */
  const size_t shapes[2][3] = {{300, 100, 3}, {20000, 2, 3}};
  for (int s = 0; s < 2; s++)
    for (int big = 0; big < 2; big++) {
      dbtr_grid g = make_grid(shapes[s][0], shapes[s][1], shapes[s][2]);
      float *v = coded_volume(&g);
      CHECK_OK(dbtr__tiff_write_ex(path, &g, v, NULL, big));
      check_contiguous(path, v, g.nx * g.ny * g.nz * sizeof(float));
      free(v);
    }
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

DBTR_TEST_MAIN(u16_conversion, float32_round_trip, float64_round_trip, uint16_round_trip, three_pages_nx_ne_ny, extreme_voxel_sizes_no_zero_resolution, imagej_description,
               page_tags, bigtiff_decision, bigtiff_forced_round_trip, contiguous_pixel_data, missing_folder,
               failed_write_leaves_nothing, write_refusals)
