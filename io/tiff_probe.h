/* io/tiff_probe.h: a TIFF volume's size, read from its page headers only, so that a command
 * can count what it will hold at its peak before it reads (and decompresses) the pixels. */
#ifndef DBTR_TIFF_PROBE_H
#define DBTR_TIFF_PROBE_H

#include <stddef.h>

/* dims = (nx, ny, nz): page 0's width and height and the number of pages, as the file
 * declares them (a small compressed file can declare gigabytes). 1 when read; 0 when the
 * file cannot be probed (missing, not a regular file, not a TIFF, or a libtiff older than
 * 4.5 whose messages could not be kept quiet): dbtr_tiff_read then says why, or checks the
 * size itself. Prints nothing. */
int dbtr_tiff_probe(const char *path, size_t dims[3]);

#endif
