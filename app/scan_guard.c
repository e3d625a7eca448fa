/* app/scan_guard.c: the commands read scans through io/scan_guard.c (the header in a child
 * process with a time limit), and DICOM files likewise (io/dicom_import.c, each file's
 * structure), with the limit from DBTR_SCAN_HEADER_SECONDS. The header of
 * a valid file is a few kilobytes, read in milliseconds; the default leaves room for slow
 * network storage. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "app/cli.h"
#include "recon/error.h"

enum { HEADER_SECONDS_DEFAULT = 60, HEADER_SECONDS_MAX = 86400 };

/* DBTR_SCAN_HEADER_SECONDS, or the default (with a warning) when it is not a whole number of
 * seconds from 1 to HEADER_SECONDS_MAX. */
static unsigned header_seconds(const char *cmd) {
  const char *v = getenv("DBTR_SCAN_HEADER_SECONDS");
  if (!v || !*v) return HEADER_SECONDS_DEFAULT;
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (errno || *end || n < 1 || n > HEADER_SECONDS_MAX) {
    fprintf(stderr, "dbtr %s: DBTR_SCAN_HEADER_SECONDS='%s' is not a whole number of seconds from 1 to %d; using %d\n",
            cmd, v, HEADER_SECONDS_MAX, HEADER_SECONDS_DEFAULT);
    return HEADER_SECONDS_DEFAULT;
  }
  return (unsigned)n;
}

int cli_read_scan(const char *cmd, dbtr_scan *s, const char *path) {
  return dbtr_scan_read_guarded(s, path, header_seconds(cmd));
}

unsigned cli_guard_seconds(const char *cmd) { return header_seconds(cmd); }
