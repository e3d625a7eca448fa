/* io/tiff_probe.c: a TIFF volume's declared size, without its pixels (io/tiff_probe.h). */
#include "io/tiff_probe.h"

#include <stdarg.h>
#include <stdint.h>
#include <tiffio.h>

#include "io/atomic_file.h"
#include "recon/error.h"

#if defined(TIFFLIB_VERSION) && TIFFLIB_VERSION >= 20221213
/* Quiet: what is wrong with the file is dbtr_tiff_read's to say, in its one line. */
static int quiet(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap) {
  (void)tif, (void)user, (void)module, (void)fmt, (void)ap;
  return 1;
}

int dbtr_tiff_probe(const char *path, size_t dims[3]) {
  dims[0] = dims[1] = dims[2] = 0;
  /* A FIFO or device would block or never end; the reader refuses them by name. */
  if (dbtr_input_check(path)) {
    dbtr_err_clear();
    return 0;
  }
  TIFFOpenOptions *o = TIFFOpenOptionsAlloc();
  if (!o) return 0;
  TIFFOpenOptionsSetErrorHandlerExtR(o, quiet, NULL);
  TIFFOpenOptionsSetWarningHandlerExtR(o, quiet, NULL);
  /* 'm': no memory mapping, so that a file truncated under us is a read error, not SIGBUS. */
  TIFF *t = TIFFOpenExt(path, "rm", o);
  TIFFOpenOptionsFree(o);
  if (!t) return 0;
  uint32_t w = 0, h = 0;
  int ok = TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &w) && TIFFGetField(t, TIFFTAG_IMAGELENGTH, &h);
  /* libtiff stops at an IFD loop and counts each page once. */
  tdir_t pages = ok ? TIFFNumberOfDirectories(t) : 0;
  TIFFClose(t);
  if (!ok || pages == 0) return 0;
  dims[0] = w;
  dims[1] = h;
  dims[2] = (size_t)pages;
  return 1;
}
#else
int dbtr_tiff_probe(const char *path, size_t dims[3]) {
  (void)path;
  dims[0] = dims[1] = dims[2] = 0;
  return 0;
}
#endif
