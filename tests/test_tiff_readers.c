/* tests/test_tiff_readers.c: other programs open dbtr's TIFF volumes (io/tiff.c,
 * docs/volume-format.md) with the right shape, type, voxel size, unit and values:
 * python's tifffile (what napari reads with), the Python example of the docs, and ImageJ
 * 1.x itself (Fiji's core). Each case is skipped (77) where its program is not installed:
 * python3 with tifffile; java, xvfb-run and ImageJ's ij.jar (Debian: imagej). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/tiff.h"
#include "recon/error.h"
#include "tests/test.h"
#include "tests/tmpdir.h"

/* The first interpreter that imports tifffile: $DBTR_PYTHON, python3 on PATH, then Debian's
 * /usr/bin/python3 (where python3-tifffile installs when PATH holds another python). */
static const char *find_python(void) {
  const char *cands[3] = {getenv("DBTR_PYTHON"), "python3", "/usr/bin/python3"};
  char cmd[512];
  for (int i = 0; i < 3; i++) {
    if (!cands[i] || !*cands[i]) continue;
    snprintf(cmd, sizeof cmd, "%s -c 'import tifffile' >/dev/null 2>&1", cands[i]);
    if (system(cmd) == 0) return cands[i];
  }
  return NULL;
}

/* The volume every case writes: nx x ny x 4 of 0.05 x 0.1 x 1.25 mm (resolutions of 20 and
 * 10 pixels per mm, exact as rationals 20/1 and 10/1), origin (-10.5, 20.25, 3), and
 * v[i] = (i mod 4096) / 2: halves, exact in float, and stored exactly as uint16 with scale 2.
 * o: NULL for float32. float64 stores v[i] + 2^-30, which a float cannot hold beside 19
 * (its spacing there is 2^-19), so that a reader that went through float would show. */
static void write_known(const char *path, size_t nx, size_t ny, const dbtr_tiff_opts *o) {
  dbtr_grid g = {nx, ny, 4, 0.05, 0.1, 1.25, {-10.5, 20.25, 3.0}};
  size_t n = nx * ny * 4;
  if (o && o->format == DBTR_TIFF_FLOAT64) {
    double *d = malloc(n * sizeof(double));
    REQUIRE(d);
    for (size_t i = 0; i < n; i++) d[i] = (double)(i % 4096) * 0.5 + 0x1p-30;
    CHECK_OK(dbtr_tiff_write(path, &g, d, o));
    free(d);
    return;
  }
  float *v = malloc(n * sizeof(float));
  REQUIRE(v);
  for (size_t i = 0; i < n; i++) v[i] = (float)(i % 4096) * 0.5f;
  CHECK_OK(dbtr_tiff_write(path, &g, v, o));
  free(v);
}

/* The index of voxel (x 3, y 1, z 2) of write_known's volume: v there is known_index / 2.
 * For 5 x 3: (2*3 + 1)*5 + 3 = 38, so v = 19. */
static size_t known_index(size_t nx, size_t ny) { return ((2 * ny + 1) * nx + 3) % 4096; }

/* tifffile's view of path: shape, dtype, axes, spacing, unit, origin, resolutions, voxel
 * (x 3, y 1, z 2) and whether it is an ImageJ file, in one line. */
static void tifffile_probe(const char *py, const char *path, const char *want) {
  char cmd[1024], line[512] = {0};
  snprintf(cmd, sizeof cmd,
           "%s -c \"import sys, tifffile; t = tifffile.TiffFile(sys.argv[1]); s = t.series[0]; "
           "m = t.imagej_metadata; p = t.pages[0]; a = s.asarray(); "
           "print(','.join(map(str, s.shape)), s.dtype, s.axes, m['spacing'], m['unit'], m['dbtr_origin'], "
           "'%%d/%%d' %% p.tags['XResolution'].value, '%%d/%%d' %% p.tags['YResolution'].value, "
           "repr(float(a[2, 1, 3])), t.is_imagej)\" %s 2>&1",
           py, path);
  FILE *pp = popen(cmd, "r");
  REQUIRE(pp);
  if (!fgets(line, sizeof line, pp)) line[0] = '\0';
  int status = pclose(pp);
  CHECK_EQ_INT(status, 0);
  CHECK_STR_CONTAINS(line, want);
}

DBTR_TEST(tifffile_cross_check) {
  const char *py = find_python();
  if (!py) TEST_SKIP("no python3 with tifffile");
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.tif");
  write_known(path, 5, 3, NULL);
  tifffile_probe(py, path, "4,3,5 float32 ZYX 1.25 mm -10.5,20.25,3 20/1 10/1 19.0 True\n");
  /* float64: the same stack, and 19 + 2^-30 exactly (repr gives the shortest decimal that
   * reads back to that double). */
  dbtr_tiff_opts o = {DBTR_TIFF_FLOAT64, 0.0, 0.0};
  write_known(path, 5, 3, &o);
  tifffile_probe(py, path, "4,3,5 float64 ZYX 1.25 mm -10.5,20.25,3 20/1 10/1 19.000000000931323 True\n");
  tmp_remove(dir);
}

/* The Python example of docs/volume-format.md, run as written in a folder holding vol.tif,
 * prints shape, dtype, (dz, dy, dx) and the origin. */
static void run_docs_example(const char *py, const char *dir, const char *want) {
  char doc[512], script[256], cmd[1024], line[512] = {0};
  snprintf(doc, sizeof doc, "%s/docs/volume-format.md", DBTR_SOURCE_DIR);
  FILE *fp = fopen(doc, "rb");
  REQUIRE(fp);
  static char text[1 << 16];
  size_t n = fread(text, 1, sizeof text - 1, fp);
  fclose(fp);
  text[n] = '\0';
  char *sec = strstr(text, "## Opening a volume in Python");
  char *start = sec ? strstr(sec, "```python\n") : NULL;
  char *end = start ? strstr(start + 10, "\n```") : NULL;
  REQUIRE(end);
  tmp_path(script, dir, "example.py");
  fp = fopen(script, "wb");
  REQUIRE(fp);
  fwrite(start + 10, 1, (size_t)(end + 1 - (start + 10)), fp);
  fclose(fp);
  snprintf(cmd, sizeof cmd, "cd %s && %s example.py 2>&1", dir, py);
  FILE *pp = popen(cmd, "r");
  REQUIRE(pp);
  if (!fgets(line, sizeof line, pp)) line[0] = '\0';
  CHECK_EQ_INT(pclose(pp), 0);
  CHECK_STR_CONTAINS(line, want);
}

DBTR_TEST(docs_python_example) {
  const char *py = find_python();
  if (!py) TEST_SKIP("no python3 with tifffile");
  char dir[64], path[256];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.tif");
  write_known(path, 5, 3, NULL);
  run_docs_example(py, dir, "(4, 3, 5) float32 (1.25, 0.1, 0.05) [-10.5, 20.25, 3.0]\n");
  /* uint16 with scale 2: the example rescales, so the values come back as float64. */
  dbtr_tiff_opts o = {DBTR_TIFF_UINT16, 2.0, 0.0};
  write_known(path, 5, 3, &o);
  run_docs_example(py, dir, "(4, 3, 5) float64 (1.25, 0.1, 0.05) [-10.5, 20.25, 3.0]\n");
  /* float64 as it is stored. */
  o.format = DBTR_TIFF_FLOAT64;
  write_known(path, 5, 3, &o);
  run_docs_example(py, dir, "(4, 3, 5) float64 (1.25, 0.1, 0.05) [-10.5, 20.25, 3.0]\n");
  tmp_remove(dir);
}

/* ImageJ's jar: $DBTR_IMAGEJ_JAR, else Debian's (package imagej). NULL when it, java or
 * xvfb-run (ImageJ initialises its menus even in batch mode, so it needs a display) is
 * missing. */
static const char *find_imagej(void) {
  const char *jar = getenv("DBTR_IMAGEJ_JAR");
  if (!jar || !*jar) jar = "/usr/share/java/ij.jar";
  if (access(jar, R_OK) != 0) return NULL;
  if (system("command -v java >/dev/null 2>&1 && command -v xvfb-run >/dev/null 2>&1") != 0) return NULL;
  return jar;
}

/* Opens each file of the space-separated list in ImageJ (batch mode, under Xvfb, one JVM for
 * all) with a macro that prints one line a file: its name, width, height, slices, bit depth,
 * voxel size and unit, the stored value at (x 3, y 1) of slice 3, the calibrated value there
 * (both with 4 decimals) and the value unit. Everything ImageJ prints lands in out. */
static void imagej_probe(const char *jar, const char *dir, const char *paths, char *out, size_t out_size) {
  char macro[256], cmd[4096];
  tmp_path(macro, dir, "probe.ijm");
  FILE *fp = fopen(macro, "wb");
  REQUIRE(fp);
  fputs(
      "files = split(getArgument(), \" \");\n"
      "for (i = 0; i < files.length; i++) {\n"
      "  open(files[i]);\n"
      "  getVoxelSize(w, h, d, unit);\n"
      "  Stack.getUnits(xu, yu, zu, tu, vu);\n"
      "  setSlice(3);\n"
      "  print(getTitle() + \" \" + getWidth() + \" \" + getHeight() + \" \" + nSlices + \" \" + bitDepth() + \" \" +"
      " w + \" \" + h + \" \" + d + \" \" + unit + \" \" + d2s(getPixel(3, 1), 4) + \" \" + d2s(getValue(3, 1), 4) +"
      " \" \" + vu);\n"
      "  close();\n"
      "}\n",
      fp);
  fclose(fp);
  /* A file ImageJ cannot open leaves it waiting on an error window: timeout turns that into
   * a failure with ImageJ's message, well inside CTest's limit. */
  snprintf(cmd, sizeof cmd, "timeout 120 xvfb-run -a java -jar %s -batch %s '%s' 2>&1", jar, macro, paths);
  FILE *pp = popen(cmd, "r");
  REQUIRE(pp);
  size_t n = fread(out, 1, out_size - 1, pp);
  out[n] = '\0';
  CHECK_EQ_INT(pclose(pp), 0);
}

/* ImageJ opens float32 and uint16 only: its TIFF reader refuses 64-bit samples with an error
 * window ("Unsupported BitsPerSample: 64"; docs/volume-format.md), so float64 is not tried.
 *
 * Slice sizes that the writer once cut into strips of about 64 KiB, with the strips a page
 * had then as float32 / uint16: 5 x 3 one / one, 200 x 120 two / one (the slices of
 * `dbtr recon --dims 200,120,25`, which ImageJ failed to open), 400 x 120 three / two and
 * 300 x 300 six / three. ImageJ misread every page of exactly two strips. */
static const size_t imagej_sizes[4][2] = {{5, 3}, {200, 120}, {400, 120}, {300, 300}};

DBTR_TEST(imagej_cross_check) {
  const char *jar = find_imagej();
  if (!jar) TEST_SKIP("no ImageJ (java, xvfb-run and ij.jar)");
  char dir[64], path[256], paths[2048] = "", want[8][256];
  static char out[1 << 16];
  REQUIRE(tmp_make(dir) == 0);
  /* uint16 with scale 2 and offset -10: stored = 2 (v + 10) = k + 20 where v = k / 2, and
   * ImageJ's calibration c0 + c1 * stored = -10 + stored / 2 gives back v in 1/mm. */
  dbtr_tiff_opts u16 = {DBTR_TIFF_UINT16, 2.0, -10.0};
  for (int i = 0; i < 8; i++) {
    size_t nx = imagej_sizes[i / 2][0], ny = imagej_sizes[i / 2][1], k = known_index(nx, ny);
    int is16 = i % 2;
    char name[64];
    snprintf(name, sizeof name, "%s_%zux%zu.tif", is16 ? "u16" : "f32", nx, ny);
    tmp_path(path, dir, name);
    write_known(path, nx, ny, is16 ? &u16 : NULL);
    snprintf(paths + strlen(paths), sizeof paths - strlen(paths), "%s%s", i ? " " : "", path);
    /* The voxel (x 3, y 1) of slice 3 (ImageJ counts slices from 1: z = 2). */
    snprintf(want[i], sizeof want[i], "%s %zu %zu 4 %d 0.05 0.1 1.25 mm %.4f %.4f 1/mm\n", name, nx, ny, is16 ? 16 : 32,
             is16 ? (double)(k + 20) : (double)k / 2.0, (double)k / 2.0);
  }
  imagej_probe(jar, dir, paths, out, sizeof out);
  for (int i = 0; i < 8; i++) CHECK_STR_CONTAINS(out, want[i]);
  tmp_remove(dir);
}

DBTR_TEST_MAIN(tifffile_cross_check, docs_python_example, imagej_cross_check)
