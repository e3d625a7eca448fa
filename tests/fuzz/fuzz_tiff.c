/* tests/fuzz/fuzz_tiff.c: libFuzzer harness for the TIFF volume reader, dbtr_tiff_read.
 *
 * Each input is written to a file and read as a volume. The reader must either return a
 * grid with positive dims and finite positive voxel sizes and a float array of exactly
 * nx * ny * nz values (every one is read, so that AddressSanitizer sees an undersized
 * allocation), or refuse with a DBTR_E* code and a one-line message naming the file, the
 * grid zeroed and no array. Built by tests/fuzz.cmake; run by .ci/fuzz.sh. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "io/tiff.h"
#include "tests/fuzz/fuzz_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* What the reader returned for the last input, for tests/fuzz/fuzz_replay.c. */
int dbtr__fuzz_last_rc;

static void check_volume(const dbtr_grid *g, const float *v) {
  if (!v || g->nx == 0 || g->ny == 0 || g->nz == 0) {
    fprintf(stderr, "fuzz harness: accepted an empty volume %zu x %zu x %zu\n", g->nx, g->ny, g->nz);
    abort();
  }
  const double d[3] = {g->dx, g->dy, g->dz};
  for (int i = 0; i < 3; i++)
    if (!(d[i] > 0.0) || !isfinite(d[i]) || !isfinite(g->origin[i])) {
      fprintf(stderr, "fuzz harness: accepted voxel size %g x %g x %g, origin (%g, %g, %g)\n", d[0], d[1], d[2],
              g->origin[0], g->origin[1], g->origin[2]);
      abort();
    }
  volatile float sum = 0.0f;
  size_t n = g->nx * g->ny * g->nz;
  for (size_t i = 0; i < n; i++) sum += v[i];
  (void)sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_write_input(data, size);
  dbtr_grid g;
  float *v = NULL;
  int rc = dbtr_tiff_read(path, &g, &v);
  dbtr__fuzz_last_rc = rc;
  if (rc == 0) {
    check_volume(&g, v);
  } else {
    fuzz_check_error(rc, path, dbtr_errmsg());
    static const dbtr_grid zero;
    if (v || memcmp(&g, &zero, sizeof g) != 0) {
      fprintf(stderr, "fuzz harness: grid not zeroed or array left after an error\n");
      abort();
    }
  }
  free(v);
  return 0;
}
