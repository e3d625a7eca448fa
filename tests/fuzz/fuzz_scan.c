/* tests/fuzz/fuzz_scan.c: libFuzzer harness for the HDF5 scan reader, dbtr_scan_read.
 *
 * Each input is written to a file and read as a scan. The reader must either accept it,
 * returning arrays of exactly the sizes it claims (every element is touched, so that
 * AddressSanitizer sees an undersized allocation), or refuse it with a DBTR_E* code and a
 * one-line message naming the file, leaving the struct zeroed. Anything else (a crash, a
 * sanitizer report, a broken contract) stops the run with the input saved. The reader
 * must also close every HDF5 object it opened, whatever the input: a file left open stays
 * locked and its memory is never returned.
 * Built by tests/fuzz.cmake (-DDBTR_FUZZ=ON, clang); run by .ci/fuzz.sh. */
#include <hdf5.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "io/scan.h"
#include "tests/fuzz/fuzz_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* What the reader returned for the last input, for tests/fuzz/fuzz_replay.c. */
int dbtr__fuzz_last_rc;

/* Reads every value the reader says it holds; the sum keeps the reads from being dropped. */
static void touch_scan(const dbtr_scan *s) {
  const dbtr_geom *g = &s->geom;
  size_t npix = g->n_rows * g->n_cols, n = g->n_views * npix;
  volatile double sum = 0.0;
  for (size_t i = 0; i < n; i++) sum += s->proj[i];
  for (size_t k = 0; k < g->n_views; k++) {
    for (size_t j = 0; j < 3; j++)
      sum += g->source[3 * k + j] + g->detector_center[3 * k + j] + g->detector_u[3 * k + j] + g->detector_v[3 * k + j];
    for (size_t p = 0; p < npix; p++) sum += dbtr_scan_i0(s, k, p);
  }
  /* What the reader promises of the values (docs/scan-format.md): all finite, counts
   * non-negative, i0 positive. */
  for (size_t i = 0; i < n; i++)
    if (!isfinite(s->proj[i]) || (s->quantity == DBTR_QUANTITY_COUNTS && s->proj[i] < 0)) {
      fprintf(stderr, "fuzz harness: accepted projection value %g at %zu\n", s->proj[i], i);
      abort();
    }
  for (size_t i = 0; i < dbtr_scan_i0_count(s); i++)
    if (!(s->i0[i] > 0) || !isfinite(s->i0[i])) {
      fprintf(stderr, "fuzz harness: accepted i0 value %g at %zu\n", s->i0[i], i);
      abort();
    }
  (void)sum;
}

/* HDF5 objects open in any file: files, groups, datasets, named types and attributes.
 * (HDF5 1.10 has no public count of dataspace or property-list identifiers.) */
static long long open_objects(void) { return (long long)H5Fget_obj_count((hid_t)H5F_OBJ_ALL, H5F_OBJ_ALL); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_write_input(data, size);
  dbtr_scan s;
  int rc = dbtr_scan_read(&s, path);
  long long left_open = open_objects();
  if (left_open != 0) {
    fprintf(stderr, "fuzz harness: %lld HDF5 objects left open by the read (rc %d: %s)\n", left_open, rc,
            rc ? dbtr_errmsg() : "accepted");
    abort();
  }
  dbtr__fuzz_last_rc = rc;
  if (rc == 0) {
    touch_scan(&s);
  } else {
    fuzz_check_error(rc, path, dbtr_errmsg());
    static const dbtr_scan zero;
    if (memcmp(&s, &zero, sizeof s) != 0) {
      fprintf(stderr, "fuzz harness: the scan struct is not zeroed after an error\n");
      abort();
    }
  }
  dbtr_scan_free(&s);
  dbtr_scan_free(&s); /* io/scan.h: safe to call twice */
  return 0;
}
