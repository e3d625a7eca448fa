/* tests/test_nifti.c: the NIfTI volume writer (io/nifti.c) and the writer that picks the
 * file type from the name (io/volume.c); docs/volume-format.md.
 *
 * The header fields read back raw, as the nifti_1_header the file begins with; the data
 * bit for bit against the volume and against the TIFF of the same volume; .nii.gz read
 * back by libnifti itself; refusals and failed writes that must leave nothing behind.
 * nibabel reading files of the dbtr command: tests/nifti_nibabel.sh. */
#include <nifti2_io.h>
#include <stdint.h>

#include "io/nifti.h"
#include "io/tiff.h"
#include "io/volume.h"
#include "recon/error.h"
#include "tests/test.h"
#include "tests/tiff_fixtures.h"
#include "tests/tmpdir.h"

/* The start of the file as NIfTI-1 lays it out: the header, the extension block, then
 * the data at byte 352. The test host is little-endian like the file. */
typedef struct {
  nifti_1_header hdr;
  nifti1_extender ext;
} nifti1_start;
_Static_assert(sizeof(nifti1_start) == 352, "the data of a NIfTI-1 file starts at byte 352");

/* The first n bytes after the 352 of header and extension block, and the file's size. */
static int read_nii(const char *path, nifti1_start *start, void *data, size_t n) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return -1;
  int ok = fread(start, sizeof *start, 1, fp) == 1 && fread(data, 1, n, fp) == n && fgetc(fp) == EOF;
  fclose(fp);
  return ok ? 0 : -1;
}

/* The fields every file of make_grid's grid carries: 352-byte offset, units mm, pixdim
 * the voxel size, sform and qform both "scanner" and mapping voxel (0,0,0) to the origin.
 * NIfTI-1 keeps these in float32: each is the grid's double rounded to float, once. */
static void check_header(const nifti1_start *s, const dbtr_grid *g, int datatype) {
  const nifti_1_header *h = &s->hdr;
  CHECK_EQ_INT(h->sizeof_hdr, 348);
  CHECK(memcmp(h->magic, "n+1\0", 4) == 0); /* one file: header and data */
  CHECK_EQ_INT(h->dim[0], 3);
  CHECK_EQ_INT(h->dim[1], g->nx);
  CHECK_EQ_INT(h->dim[2], g->ny);
  CHECK_EQ_INT(h->dim[3], g->nz);
  CHECK_EQ_INT(h->datatype, datatype);
  CHECK_EQ_INT(h->bitpix, datatype == DT_FLOAT64 ? 64 : datatype == DT_FLOAT32 ? 32 : 16);
  CHECK(h->vox_offset == 352.0f);
  CHECK(memcmp(s->ext.extension, "\0\0\0\0", 4) == 0); /* no extensions follow */
  CHECK_EQ_INT(XYZT_TO_SPACE(h->xyzt_units), NIFTI_UNITS_MM);
  CHECK(h->pixdim[1] == (float)g->dx && h->pixdim[2] == (float)g->dy && h->pixdim[3] == (float)g->dz);
  CHECK_EQ_INT(h->sform_code, NIFTI_XFORM_SCANNER_ANAT);
  CHECK_EQ_INT(h->qform_code, NIFTI_XFORM_SCANNER_ANAT);
  const float want[3][4] = {{(float)g->dx, 0.0f, 0.0f, (float)g->origin[0]},
                            {0.0f, (float)g->dy, 0.0f, (float)g->origin[1]},
                            {0.0f, 0.0f, (float)g->dz, (float)g->origin[2]}};
  CHECK(memcmp(h->srow_x, want[0], sizeof want[0]) == 0);
  CHECK(memcmp(h->srow_y, want[1], sizeof want[1]) == 0);
  CHECK(memcmp(h->srow_z, want[2], sizeof want[2]) == 0);
  /* The qform of the same matrix: no rotation (b = c = d = 0, qfac pixdim[0] = 1), the
   * origin as offset, the voxel size from pixdim. */
  CHECK(h->quatern_b == 0.0f && h->quatern_c == 0.0f && h->quatern_d == 0.0f && h->pixdim[0] == 1.0f);
  CHECK(h->qoffset_x == want[0][3] && h->qoffset_y == want[1][3] && h->qoffset_z == want[2][3]);
}

DBTR_TEST(float32_header_and_data) {
  char dir[64], nii[256], tif[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(nii, dir, "vol.nii");
  tmp_path(tif, dir, "vol.tif");
  dbtr_grid g = make_grid(7, 5, 3); /* 7 != 5 != 3: a swapped axis cannot match */
  float *v = coded_volume(&g);
  /* Values a float32 file must keep bit for bit: signed zero, a subnormal, infinities, NaN. */
  v[1] = -0.0f, v[2] = 1e-45f, v[3] = INFINITY, v[4] = -INFINITY, v[5] = NAN;
  const size_t n = 7 * 5 * 3;
  REQUIRE_OK(dbtr_nifti_write(nii, &g, v, NULL));
  CHECK_EQ_INT(tmp_count(dir), 1); /* the file and no temporary */
  nifti1_start s;
  float back[7 * 5 * 3];
  REQUIRE(read_nii(nii, &s, back, sizeof back) == 0); /* also: nothing after the data */
  check_header(&s, &g, DT_FLOAT32);
  CHECK(s.hdr.scl_slope == 0.0f); /* 0: the values are stored as they are */
  /* x fastest, then y, then z: NIfTI's (nx, ny, nz) array is our (nz, ny, nx) C array. */
  CHECK(memcmp(back, v, sizeof back) == 0);
  /* The same bits as the float32 TIFF of the same volume. */
  REQUIRE_OK(dbtr_tiff_write(tif, &g, v, NULL));
  dbtr_grid r;
  float *from_tiff = NULL;
  REQUIRE_OK(dbtr_tiff_read(tif, &r, &from_tiff));
  CHECK(memcmp(back, from_tiff, n * sizeof(float)) == 0);
  free(from_tiff);
  free(v);
  tmp_remove(dir);
}

/* float64 (DT_FLOAT64) holds the doubles bit for bit, .nii and .nii.gz (read back by
 * libnifti), with float32's header but for the type. */
DBTR_TEST(float64_header_and_data) {
  char dir[64], nii[256], gz[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(nii, dir, "vol.nii");
  tmp_path(gz, dir, "vol.nii.gz");
  dbtr_grid g = make_grid(7, 5, 3); /* 7 != 5 != 3: a swapped axis cannot match */
  double v[7 * 5 * 3];
  for (size_t i = 0; i < 7 * 5 * 3; i++) v[i] = (double)i + 0x1p-40; /* digits no float holds */
  /* And values a float64 file must keep bit for bit: signed zero, the smallest subnormal
   * double, infinities, NaN, the double after 1. */
  v[1] = -0.0, v[2] = 0x1p-1074, v[3] = (double)INFINITY, v[4] = -(double)INFINITY, v[5] = (double)NAN;
  v[6] = 1.0 + 0x1p-52;
  dbtr_tiff_opts o = {DBTR_TIFF_FLOAT64, 0.0, 0.0};
  REQUIRE_OK(dbtr_nifti_write(nii, &g, v, &o));
  REQUIRE_OK(dbtr_volume_write(gz, &g, v, &o));
  CHECK_EQ_INT(tmp_count(dir), 2); /* the files and no temporary */
  nifti1_start s;
  double back[7 * 5 * 3];
  REQUIRE(read_nii(nii, &s, back, sizeof back) == 0); /* also: nothing after the data */
  check_header(&s, &g, DT_FLOAT64);
  CHECK(s.hdr.scl_slope == 0.0f); /* 0: the values are stored as they are */
  CHECK(memcmp(back, v, sizeof back) == 0);
  nifti_image *nim = nifti_image_read(gz, 1);
  REQUIRE(nim);
  CHECK(nim->nx == 7 && nim->ny == 5 && nim->nz == 3 && nim->datatype == DT_FLOAT64 && nim->nbyper == 8);
  REQUIRE(nim->data);
  /* libnifti's reader sets non-finite floats to 0 (nifti_read_buffer); every other value is
   * the double written, bit for bit. */
  const double *got = nim->data;
  for (size_t i = 0; i < 7 * 5 * 3; i++) {
    const double want = isfinite(v[i]) ? v[i] : 0.0;
    CHECK(memcmp(&got[i], &want, sizeof want) == 0);
  }
  nifti_image_free(nim);
  tmp_remove(dir);
}

/* libnifti's own reader opens the gzip file and finds the grid, the matrix and the data. */
DBTR_TEST(gzip_read_by_libnifti) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.NII.GZ"); /* the type of a name does not depend on letter case */
  dbtr_grid g = make_grid(6, 4, 5);
  float *v = coded_volume(&g);
  REQUIRE_OK(dbtr_volume_write(path, &g, v, NULL));
  FILE *fp = fopen(path, "rb");
  REQUIRE(fp);
  unsigned char magic[2] = {0, 0};
  CHECK(fread(magic, 1, 2, fp) == 2 && magic[0] == 0x1f && magic[1] == 0x8b); /* gzip (RFC 1952) */
  fclose(fp);
  nifti_image *nim = nifti_image_read(path, 1);
  REQUIRE(nim);
  CHECK_EQ_INT(nim->nifti_type, NIFTI_FTYPE_NIFTI1_1);
  CHECK(nim->nx == 6 && nim->ny == 4 && nim->nz == 5 && nim->datatype == DT_FLOAT32);
  CHECK(nim->dx == (double)(float)g.dx && nim->dz == (double)(float)g.dz);
  CHECK(nim->sto_xyz.m[0][3] == (double)(float)g.origin[0] && nim->sto_xyz.m[2][3] == (double)(float)g.origin[2]);
  CHECK(nim->data && memcmp(nim->data, v, 6 * 4 * 5 * sizeof(float)) == 0);
  nifti_image_free(nim);
  free(v);
  tmp_remove(dir);
}

/* uint16 stores the integers the uint16 TIFF stores, and the scaling back to 1/mm. */
DBTR_TEST(uint16_matches_tiff) {
  char dir[64], nii[256], tif[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(nii, dir, "vol.nii");
  tmp_path(tif, dir, "vol.tif");
  dbtr_grid g = make_grid(4, 2, 2);
  /* Rounding, saturation both ways, NaN and infinities: test_tiff.c's uint16 cases. */
  float v[16] = {-2.0f,    -1.0f,   0.0f,    0.125f, 0.25f,    0.5f,      1.0f, 654.34f,
                 654.345f, 654.35f, 1000.0f, NAN,    INFINITY, -INFINITY, 2.5f, -0.995f};
  dbtr_tiff_opts o = {DBTR_TIFF_UINT16, 100.0, -1.0};
  REQUIRE_OK(dbtr_volume_write(nii, &g, v, &o));
  REQUIRE_OK(dbtr_volume_write(tif, &g, v, &o));
  nifti1_start s;
  uint16_t back[16];
  REQUIRE(read_nii(nii, &s, back, sizeof back) == 0);
  check_header(&s, &g, DT_UINT16);
  /* value = scl_slope * stored + scl_inter undoes stored = (value - offset) * scale. */
  CHECK(s.hdr.scl_slope == (float)(1.0 / 100.0));
  CHECK(s.hdr.scl_inter == -1.0f);
  dbtr_grid r;
  float *stored = NULL; /* the TIFF reader returns uint16 files' stored integers */
  REQUIRE_OK(dbtr_tiff_read(tif, &r, &stored));
  for (int i = 0; i < 16; i++) CHECK_EQ_INT(back[i], stored[i]);
  CHECK_EQ_INT(back[2], 100); /* (0 - -1) * 100 */
  free(stored);
  tmp_remove(dir);
}

DBTR_TEST(type_from_name) {
  dbtr_volume_type t = DBTR_VOLUME_NIFTI;
  CHECK_OK(dbtr_volume_type_of("a.tif", &t));
  CHECK_EQ_INT(t, DBTR_VOLUME_TIFF);
  CHECK_OK(dbtr_volume_type_of("dir.nii/a.TIFF", &t)); /* the file's ending, not a folder's */
  CHECK_EQ_INT(t, DBTR_VOLUME_TIFF);
  CHECK_OK(dbtr_volume_type_of("a.nii", &t));
  CHECK_EQ_INT(t, DBTR_VOLUME_NIFTI);
  CHECK_OK(dbtr_volume_type_of("out/a.Nii.Gz", &t));
  CHECK_EQ_INT(t, DBTR_VOLUME_NIFTI_GZ);
  const char *bad[] = {"a.nrrd", "a.nii.gz.bak", "a.gz", "tif", "a.tif/", ".nii"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    check_refusal(dbtr_volume_type_of(bad[i], &t), DBTR_EINVAL, bad[i], ".tif, .tiff, .nii or .nii.gz");
  CHECK_EQ_INT(dbtr_volume_type_of("", &t), DBTR_EINVAL);
}

/* dbtr_volume_write writes what the name says, and nothing for a name it does not know. */
DBTR_TEST(volume_write_dispatch) {
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  dbtr_grid g = make_grid(4, 3, 2);
  float *v = coded_volume(&g);
  const char *names[3] = {"a.tiff", "b.nii", "c.nrrd"};
  const char *magic[3] = {"II*\0", "n+1\0", NULL}; /* little-endian TIFF; NIfTI-1 at byte 344 */
  for (int i = 0; i < 3; i++) {
    tmp_path(path, dir, names[i]);
    int rc = dbtr_volume_write(path, &g, v, NULL);
    if (!magic[i]) {
      check_refusal(rc, DBTR_EINVAL, path, ".nii.gz");
      continue;
    }
    CHECK_OK(rc);
    FILE *fp = fopen(path, "rb");
    REQUIRE(fp);
    char got[4] = {0};
    CHECK(fseek(fp, i == 1 ? 344 : 0, SEEK_SET) == 0 && fread(got, 1, 4, fp) == 4 && memcmp(got, magic[i], 4) == 0);
    fclose(fp);
  }
  CHECK_EQ_INT(tmp_count(dir), 2); /* a.tiff and b.nii; no c.nrrd, no temporaries */
  free(v);
  tmp_remove(dir);
}

DBTR_TEST(write_refusals) {
  char dir[64], path[256], tif[256], missing[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.nii");
  tmp_path(tif, dir, "vol.tif");
  tmp_path(missing, dir, "no_such_folder/vol.nii");
  static float v[32768 * 3 * 2]; /* zeros, as many as the largest grid below names */
  dbtr_grid g = make_grid(4, 3, 2), bad;
  bad = g, bad.nx = 32768; /* one past NIfTI-1's int16 dimensions */
  check_refusal(dbtr_nifti_write(path, &bad, v, NULL), DBTR_EINVAL, path, "32767");
  bad = g, bad.nz = 0;
  check_refusal(dbtr_nifti_write(path, &bad, v, NULL), DBTR_EINVAL, path, "no voxels");
  bad = g, bad.dx = -0.1;
  check_refusal(dbtr_nifti_write(path, &bad, v, NULL), DBTR_EINVAL, path, "positive");
  bad = g, bad.origin[2] = (double)INFINITY;
  check_refusal(dbtr_nifti_write(path, &bad, v, NULL), DBTR_EINVAL, path, "finite");
  dbtr_tiff_opts o = {DBTR_TIFF_UINT16, (double)NAN, 0.0};
  check_refusal(dbtr_nifti_write(path, &g, v, &o), DBTR_EINVAL, path, "scale");
  check_refusal(dbtr_nifti_write(tif, &g, v, NULL), DBTR_EINVAL, tif, ".nii or .nii.gz");
  check_refusal(dbtr_nifti_write(missing, &g, v, NULL), DBTR_EIO, missing, NULL);
  CHECK_EQ_INT(tmp_count(dir), 0); /* no file, no folder, no temporary */
  tmp_remove(dir);
}

/* A write stopped part way (the file size limit stands in for a full disk) returns
 * DBTR_EIO naming the file, removes its temporary and leaves the old file as it was. The
 * values come from a linear congruential generator so that gzip cannot shrink 256 KiB
 * below the 64 KiB limit. */
static int write_big_volume(void *path) {
  dbtr_grid g = make_grid(64, 64, 16);
  float *v = malloc(64 * 64 * 16 * sizeof(float));
  uint32_t x = 1;
  for (size_t i = 0; i < 64 * 64 * 16; i++) {
    x = x * 1664525u + 1013904223u; /* Numerical Recipes' constants */
    v[i] = (float)(x >> 8);
  }
  int rc = dbtr_volume_write(path, &g, v, NULL);
  int ok = rc == DBTR_EIO && strstr(dbtr_errmsg(), path) && strstr(dbtr_errmsg(), "cannot write");
  if (!ok) fprintf(stderr, "child: rc %d: %s\n", rc, dbtr_errmsg());
  free(v);
  return ok;
}

DBTR_TEST(failed_write_leaves_nothing) {
  const char *names[2] = {"vol.nii", "vol.nii.gz"};
  for (int i = 0; i < 2; i++) {
    char dir[64], path[256];
    REQUIRE(tmp_make(dir) == 0);
    tmp_path(path, dir, names[i]);
    FILE *fp = fopen(path, "w");
    REQUIRE(fp);
    fputs("previous result\n", fp);
    fclose(fp);
    CHECK(run_with_file_limit(64 * 1024, write_big_volume, path));
    CHECK_EQ_INT(tmp_count(dir), 1);   /* the old file only: the temporary is gone */
    CHECK_EQ_INT(file_size(path), 16); /* "previous result\n", untouched */
    tmp_remove(dir);
  }
}

DBTR_TEST_MAIN(float32_header_and_data, float64_header_and_data, gzip_read_by_libnifti, uint16_matches_tiff, type_from_name,
               volume_write_dispatch, write_refusals, failed_write_leaves_nothing)
