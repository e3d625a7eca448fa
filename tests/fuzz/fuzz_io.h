/* tests/fuzz/fuzz_io.h: what both libFuzzer harnesses share: the fuzz input written to a
 * temporary file, because the readers under test (dbtr_scan_read, dbtr_tiff_read) take a
 * path, as HDF5 and libtiff do, and never a buffer.
 *
 * One temporary file per process, made once and rewritten for every input: creating a new
 * name per input would spend most of the run in the file system, and under -jobs/-fork each
 * worker is its own process with its own file. The file is removed at exit. */
#ifndef DBTR_FUZZ_IO_H
#define DBTR_FUZZ_IO_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recon/error.h"

static char fuzz__path[4096];

static void fuzz__remove(void) {
  if (fuzz__path[0]) unlink(fuzz__path);
}

/* Writes data to this process's temporary file and returns its path. A file system that
 * refuses is the harness's problem, not the reader's: that aborts, loudly. */
static const char *fuzz_write_input(const uint8_t *data, size_t size) {
  if (!fuzz__path[0]) {
    const char *dir = getenv("TMPDIR");
    snprintf(fuzz__path, sizeof fuzz__path, "%s/dbtr-fuzz-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(fuzz__path);
    if (fd < 0) {
      perror("fuzz harness: mkstemp");
      abort();
    }
    close(fd);
    atexit(fuzz__remove);
  }
  FILE *f = fopen(fuzz__path, "wb");
  int ok = f && (size == 0 || fwrite(data, 1, size, f) == size);
  if (f && fclose(f) != 0) ok = 0;
  if (!ok) {
    perror("fuzz harness: writing the input file");
    abort();
  }
  return fuzz__path;
}

/* The error contract of every reader (recon/error.h): a code from the table, and one line
 * that names the file. A breach is reported as a crash so that libFuzzer keeps the input. */
static void fuzz_check_error(int rc, const char *path, const char *msg) {
  if (rc >= 0 || rc <= DBTR__EBASE || rc >= DBTR__ELAST) {
    fprintf(stderr, "fuzz harness: return code %d is not a DBTR_E* code\n", rc);
    abort();
  }
  if (!msg || !strstr(msg, path) || strchr(msg, '\n') || strchr(msg, '\r')) {
    fprintf(stderr, "fuzz harness: message \"%s\" is not one line naming %s\n", msg ? msg : "(null)", path);
    abort();
  }
}

#endif
