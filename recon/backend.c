/* recon/backend.c: the floating-point modes of the GPU backend, as recon/modes.def lists
 * them (names, precision, explain variants), and backend helpers. */
#include "recon/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recon/error.h"

/* What the host needs of a row of recon/modes.def; the arithmetic columns are the kernels'. */
typedef struct {
  const char *name;
  dbtr_precision precision;
  const char *variants; /* names of the explain variants, separated by spaces */
} mode_row;

#define MODE_PREC_float DBTR_PREC_FLOAT
#define MODE_PREC_double DBTR_PREC_DOUBLE
#define MODE_PREC_dd DBTR_PREC_DD
static const mode_row rows[DBTR_MODE_ALL_COUNT] = {
#define DBTR_MODE(id, ID, name, prec, arith, div, sqrt, exp, flags, variants) {name, MODE_PREC_##prec, variants},
#define DBTR_VARIANT(id, ID, name, prec, arith, div, sqrt, exp, flags, variants) {name, MODE_PREC_##prec, variants},
#include "recon/modes.def"
};

/* DBTR_MODE_COUNT, and every loop over the modes users pick (0 .. DBTR_MODE_COUNT - 1), count
 * on them coming first. */
#define DBTR_MODE(id, ID, ...) _Static_assert(DBTR_MODE_##ID < DBTR_MODE_COUNT, "recon/modes.def: mode " #id " after a variant");
#define DBTR_VARIANT(...)
#include "recon/modes.def"

const char *dbtr_gpu_mode_name(dbtr_gpu_mode m) {
  return (unsigned)m < DBTR_MODE_ALL_COUNT ? rows[m].name : "unknown";
}

/* The row whose name is the first len characters of s, or -1. */
static int find_mode(const char *s, size_t len) {
  for (int m = 0; m < DBTR_MODE_ALL_COUNT; m++)
    if (strlen(rows[m].name) == len && strncmp(s, rows[m].name, len) == 0) return m;
  return -1;
}

int dbtr_gpu_mode_parse(const char *s, dbtr_gpu_mode *out) {
  int m = s ? find_mode(s, strlen(s)) : -1;
  if (m >= 0) {
    *out = (dbtr_gpu_mode)m;
    return 0;
  }
  /* "fast, ieee, cpu-match, double or double-match": the user modes, not the variants. */
  char expected[256] = "";
  size_t len = 0;
  for (int u = 0; u < DBTR_MODE_COUNT; u++) {
    const char *sep = u == 0 ? "" : u + 1 < DBTR_MODE_COUNT ? ", " : " or ";
    int n = snprintf(expected + len, sizeof expected - len, "%s%s", sep, rows[u].name);
    if (n < 0 || (size_t)n >= sizeof expected - len) break;
    len += (size_t)n;
  }
  return dbtr_err(DBTR_EINVAL, "unknown mode '%s' (expected %s)", s ? s : "", expected);
}

dbtr_precision dbtr_gpu_mode_precision(dbtr_gpu_mode m) {
  return (unsigned)m < DBTR_MODE_ALL_COUNT ? rows[m].precision : DBTR_PREC_FLOAT;
}

size_t dbtr_gpu_mode_variants(dbtr_gpu_mode m, dbtr_gpu_mode *out, size_t max) {
  if ((unsigned)m >= DBTR_MODE_ALL_COUNT) return 0;
  size_t n = 0;
  for (const char *s = rows[m].variants; *s;) {
    size_t len = strcspn(s, " ");
    int v = find_mode(s, len);
    /* A name the table does not have is a fault of the table, which test_modes catches. */
    if (v >= 0) {
      if (n < max) out[n] = (dbtr_gpu_mode)v;
      n++;
    }
    s += len;
    s += strspn(s, " ");
  }
  return n;
}

size_t dbtr_precision_size(dbtr_precision p) {
  return p == DBTR_PREC_DD ? 2 * sizeof(double) : p == DBTR_PREC_DOUBLE ? sizeof(double) : sizeof(float);
}

const char *dbtr_precision_name(dbtr_precision p) {
  return p == DBTR_PREC_DD ? "dd" : p == DBTR_PREC_DOUBLE ? "double" : "float";
}

int dbtr_precision_of(const char *s, dbtr_precision *out) {
  const dbtr_precision all[3] = {DBTR_PREC_FLOAT, DBTR_PREC_DOUBLE, DBTR_PREC_DD};
  for (int i = 0; i < 3; i++)
    if (s && !strcmp(s, dbtr_precision_name(all[i]))) {
      *out = all[i];
      return 1;
    }
  return 0;
}

void dbtr_backend_destroy(dbtr_backend **b) {
  if (*b && (*b)->destroy) (*b)->destroy(*b);
  *b = NULL;
}
