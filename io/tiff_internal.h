/* io/tiff_internal.h: pieces of io/tiff.c that tests reach without writing 4 GiB.
 * Not part of the public interface; only io/tiff.c and tests/test_tiff.c include it. */
#ifndef DBTR_TIFF_INTERNAL_H
#define DBTR_TIFF_INTERNAL_H

#include <stddef.h>

#include "io/tiff.h"

/* 1 when a file of about `bytes` (pixel data plus the IFDs and their arrays) must be
 * BigTIFF: classic TIFF offsets are 32-bit, and we keep 64 MiB of headroom below 4 GiB
 * so that an underestimated overhead can never push an offset past 2^32. */
int dbtr__tiff_needs_bigtiff(size_t bytes);

/* dbtr_tiff_write with force_bigtiff != 0 writing BigTIFF whatever the size, so that the
 * BigTIFF layout can be tested on a small volume. */
int dbtr__tiff_write_ex(const char *path, const dbtr_grid *grid, const void *data, const dbtr_tiff_opts *opts,
                        int force_bigtiff);

#endif
