/* tests/fuzz/fuzz_replay.c: runs a fuzz harness (fuzz_scan.c or fuzz_tiff.c) as a plain
 * program over files, without libFuzzer, so that CTest replays the seeds and every input
 * the fuzzers ever broke the readers with (tests/fuzz/regress_*), in the normal build.
 *
 *   fuzz_scan_replay [--expect-ok | --expect-error] FILE...
 *
 * The harness itself checks the readers' contract and aborts on a breach; on top of that,
 * --expect-ok wants every file accepted (the seeds are valid files) and --expect-error
 * every file refused (a regression input is damaged; the fix is a clean refusal). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recon/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern int dbtr__fuzz_last_rc; /* set by the harness: what the reader returned */

static int read_all(const char *path, uint8_t **out, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  for (size_t got = 1; buf && got > 0;) {
    if (n == cap) {
      uint8_t *bigger = realloc(buf, cap *= 2);
      if (!bigger) break;
      buf = bigger;
    }
    got = fread(buf + n, 1, cap - n, f);
    n += got;
  }
  int bad = ferror(f) || !buf;
  fclose(f);
  if (bad) {
    free(buf);
    return -1;
  }
  *out = buf;
  *size = n;
  return 0;
}

int main(int argc, char **argv) {
  int expect = 0; /* 0: either, 1: accepted, -1: refused */
  int failures = 0, files = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--expect-ok")) {
      expect = 1;
      continue;
    }
    if (!strcmp(argv[i], "--expect-error")) {
      expect = -1;
      continue;
    }
    uint8_t *data = NULL;
    size_t size = 0;
    if (read_all(argv[i], &data, &size)) {
      fprintf(stderr, "%s: cannot read\n", argv[i]);
      return 1;
    }
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    files++;
    int rc = dbtr__fuzz_last_rc;
    /* The harness read a temporary copy; its message names that copy, not argv[i]. */
    printf("%s (%zu bytes): %s%s\n", argv[i], size, rc ? "refused: " : "accepted", rc ? dbtr_errmsg() : "");
    if ((expect > 0 && rc != 0) || (expect < 0 && rc == 0)) {
      fprintf(stderr, "FAIL: %s was %s; expected %s\n", argv[i], rc ? "refused" : "accepted",
              expect > 0 ? "it accepted" : "a clean refusal");
      failures++;
    }
  }
  if (!files) {
    fprintf(stderr, "usage: %s [--expect-ok | --expect-error] FILE...\n", argv[0]);
    return 2;
  }
  return failures ? 1 : 0;
}
