/* viewer/png.c: screenshots as PNG, written beside the target and renamed into place. */
#include <png.h>
#include <stdio.h>
#include <string.h>

#include "io/atomic_file.h"
#include "recon/error.h"
#include "viewer/viewer.h"

int dbtr_view_write_png(const char *path, const unsigned char *rgb, int width, int height) {
  if (width <= 0 || height <= 0)
    return dbtr_err(DBTR_EINVAL, "%s: cannot write a %d x %d image", path ? path : "(null)", width, height);
  dbtr_atomic_file af;
  int rc = dbtr_atomic_begin(&af, path);
  if (rc) return rc;
  FILE *fp = fopen(af.tmp, "wb");
  if (!fp) {
    dbtr_atomic_abort(&af);
    return dbtr_err(DBTR_EIO, "%s: cannot open the temporary file for writing", path);
  }
  /* libpng's simplified API reports errors through image.message instead of longjmp, so
   * no setjmp is needed around it. */
  png_image img;
  memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  img.width = (png_uint_32)width;
  img.height = (png_uint_32)height;
  img.format = PNG_FORMAT_RGB;
  int ok = png_image_write_to_stdio(&img, fp, 0, rgb, (png_int_32)(3 * width), NULL);
  char msg[64];
  snprintf(msg, sizeof msg, "%s", img.message);
  png_image_free(&img);
  if (fclose(fp) != 0 && ok) {
    dbtr_atomic_abort(&af);
    return dbtr_err(DBTR_EIO, "%s: cannot finish writing the PNG", path);
  }
  if (!ok) {
    dbtr_atomic_abort(&af);
    return dbtr_err(DBTR_EIO, "%s: cannot write the PNG: %s", path, msg);
  }
  return dbtr_atomic_commit(&af);
}
