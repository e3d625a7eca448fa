/* tests/fuzz/fuzz_dicom.c: libFuzzer harness for the DICOM import, dbtr_dicom_import_guarded.
 *
 * Each input is written to a file and imported as the one DICOM file of a scan, as `dbtr
 * import FILE` does: GDCM first reads it in a guarded child (io/guard.h), where an abort or
 * a crash inside GDCM is a clean refusal, then dbtr's own code (io/dicom_import.c,
 * io/dicom_geom.c, the shim io/dicom.cc), instrumented, reads it in this process. The import
 * must either return a scan whose projections are exactly n_views x n_rows x n_cols finite
 * counts (every one is read, so that AddressSanitizer sees an undersized array) with a
 * geometry dbtr_geom_check accepts, or refuse with a DBTR_E* code and a one-line message
 * naming the file, the scan zeroed. Single-frame files take the pivot and detector motion
 * from the options, as `dbtr import --system ge` gives them. Built by tests/fuzz.cmake;
 * run by .ci/fuzz.sh. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "io/dicom.h"
#include "tests/fuzz/fuzz_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* What the import returned for the last input, for tests/fuzz/fuzz_replay.c. */
int dbtr__fuzz_last_rc;

static void check_scan(const dbtr_scan *s) {
  size_t n = s->geom.n_views * s->geom.n_rows * s->geom.n_cols;
  if (!s->proj || n == 0 || !s->i0 || dbtr_geom_check(&s->geom, "fuzz") != 0) {
    fprintf(stderr, "fuzz harness: accepted a scan of %zu values, or one whose geometry is refused: %s\n", n,
            dbtr_errmsg());
    abort();
  }
  for (size_t i = 0; i < n; i++)
    if (!(s->proj[i] >= 0.0) || !isfinite(s->proj[i])) {
      fprintf(stderr, "fuzz harness: accepted count %g at %zu\n", s->proj[i], i);
      abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_write_input(data, size);
  const dbtr_dicom_opts o = {40.0, "fuzz", DBTR_DETECTOR_STATIONARY, "fuzz", 1000.0, "fuzz"};
  const char *paths[1] = {path};
  dbtr_scan s;
  /* 5 s for GDCM's read of a file of at most -max_len bytes, under libFuzzer's -timeout=10. */
  int rc = dbtr_dicom_import_guarded(&s, paths, 1, &o, 5);
  dbtr__fuzz_last_rc = rc;
  if (rc == 0) {
    check_scan(&s);
  } else {
    fuzz_check_error(rc, path, dbtr_errmsg());
    static const dbtr_scan zero;
    if (memcmp(&s, &zero, sizeof s) != 0) {
      fprintf(stderr, "fuzz harness: scan not zeroed after an error\n");
      abort();
    }
  }
  dbtr_scan_free(&s);
  return 0;
}
