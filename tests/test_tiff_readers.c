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

/* The volume every case writes: 5 x 3 x 4 of 0.05 x 0.1 x 1.25 mm (resolutions of 20 and 10
 * pixels per mm, exact as rationals 20/1 and 10/1), origin (-10.5, 20.25, 3), and
 * v[i] = i / 2, so v at (z 2, y 1, x 3) = (2*15 + 1*5 + 3) / 2 = 19. o: NULL for float32. */
static void write_known(const char *path, const dbtr_tiff_opts *o) {
  dbtr_grid g = {5, 3, 4, 0.05, 0.1, 1.25, {-10.5, 20.25, 3.0}};
  float v[60];
  for (int i = 0; i < 60; i++) v[i] = (float)i * 0.5f;
  REQUIRE_OK(dbtr_tiff_write(path, &g, v, o));
}

DBTR_TEST(tifffile_cross_check) {
  const char *py = find_python();
  if (!py) TEST_SKIP("no python3 with tifffile");
  char dir[64], path[256], cmd[1024], line[512] = {0};
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.tif");
  write_known(path, NULL);
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
  CHECK_STR_CONTAINS(line, "4,3,5 float32 ZYX 1.25 mm -10.5,20.25,3 20/1 10/1 19.0 True\n");
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
  write_known(path, NULL);
  run_docs_example(py, dir, "(4, 3, 5) float32 (1.25, 0.1, 0.05) [-10.5, 20.25, 3.0]\n");
  /* uint16 with scale 2: the example rescales, so the values come back as float64. */
  dbtr_tiff_opts o = {DBTR_TIFF_UINT16, 2.0, 0.0};
  write_known(path, &o);
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

/* Opens path in ImageJ (batch mode, under Xvfb) with a macro that prints one line: width,
 * height, slices, bit depth, voxel size and unit, the raw value at (x 3, y 1) of slice 3,
 * and the calibrated value there. */
static void imagej_probe(const char *jar, const char *dir, const char *path, char line[512]) {
  char macro[256], cmd[1024];
  tmp_path(macro, dir, "probe.ijm");
  FILE *fp = fopen(macro, "wb");
  REQUIRE(fp);
  fputs("open(getArgument());\n"
        "getVoxelSize(w, h, d, unit);\n"
        "setSlice(3);\n"
        "print(getWidth() + \" \" + getHeight() + \" \" + nSlices + \" \" + bitDepth() + \" \" + w + \" \" + h +"
        " \" \" + d + \" \" + unit + \" \" + getPixel(3, 1) + \" \" + getValue(3, 1));\n",
        fp);
  fclose(fp);
  snprintf(cmd, sizeof cmd, "xvfb-run -a java -jar %s -batch %s %s 2>&1", jar, macro, path);
  FILE *pp = popen(cmd, "r");
  REQUIRE(pp);
  line[0] = '\0';
  char buf[512];
  /* The last line: ImageJ may print warnings first. */
  while (fgets(buf, sizeof buf, pp)) snprintf(line, 512, "%s", buf);
  CHECK_EQ_INT(pclose(pp), 0);
}

DBTR_TEST(imagej_cross_check) {
  const char *jar = find_imagej();
  if (!jar) TEST_SKIP("no ImageJ (java, xvfb-run and ij.jar)");
  char dir[64], path[256], line[512];
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "vol.tif");
  /* The voxel (x 3, y 1) of slice 3 (ImageJ counts slices from 1: z = 2) holds 19. */
  write_known(path, NULL);
  imagej_probe(jar, dir, path, line);
  CHECK_STR_CONTAINS(line, "5 3 4 32 0.05 0.1 1.25 mm 19 19\n");
  /* uint16 with scale 2: ImageJ shows the stored integers, 2 v = 38 (docs/volume-format.md:
   * the scale is dbtr's own key, not an ImageJ calibration). */
  dbtr_tiff_opts o = {DBTR_TIFF_UINT16, 2.0, 0.0};
  write_known(path, &o);
  imagej_probe(jar, dir, path, line);
  CHECK_STR_CONTAINS(line, "5 3 4 16 0.05 0.1 1.25 mm 38 38\n");
  tmp_remove(dir);
}

DBTR_TEST_MAIN(tifffile_cross_check, docs_python_example, imagej_cross_check)
