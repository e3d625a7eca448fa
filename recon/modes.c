/* recon/modes.c: the mode table, recon/modes.def, as the host reads it (recon/modes.h): the
 * names, precisions, explain variants and bitwise classes of every path, GPU and CPU. */
#include "recon/modes.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "recon/error.h"

/* A row: what the public query gives (dbtr_mode_info; its bitwise_class filled in once, from
 * the `same` columns, by classes()), and the columns only the host's own functions read. */
typedef struct {
  dbtr_mode_info info;
  unsigned kind;        /* DBTR_ROWS_MODES, DBTR_ROWS_VARIANTS or DBTR_ROWS_CPU */
  const char *variants; /* GPU modes: the explain variants' names, separated by spaces */
  const char *same;     /* CPU rows: the other rows that give its bits, separated by spaces */
} mode_row;

#define MODE_PREC_float DBTR_PREC_FLOAT
#define MODE_PREC_double DBTR_PREC_DOUBLE
#define MODE_PREC_dd DBTR_PREC_DD
static mode_row rows[DBTR_MODE_TABLE_COUNT] = {
#define DBTR_MODE(id, ID, name, prec, arith, div, sqrt, exp, gather, flags, variants) \
  {{name, MODE_PREC_##prec, 1, 0, 0, NULL}, DBTR_ROWS_MODES, variants, ""},
#define DBTR_VARIANT(id, ID, name, prec, arith, div, sqrt, exp, gather, flags, variants) \
  {{name, MODE_PREC_##prec, 1, 1, 0, NULL}, DBTR_ROWS_VARIANTS, variants, ""},
#define DBTR_CPU(id, ID, name, prec, threads, same) {{name, MODE_PREC_##prec, 0, 0, threads, NULL}, DBTR_ROWS_CPU, "", same},
#include "recon/modes.def"
};

/* DBTR_MODE_COUNT, and every loop over the modes users pick (0 .. DBTR_MODE_COUNT - 1), count
 * on them coming first, and the GPU's create table on the GPU rows coming before the CPU's. */
#define DBTR_MODE(id, ID, ...) _Static_assert(DBTR_MODE_##ID < DBTR_MODE_COUNT, "recon/modes.def: mode " #id " after a variant");
#define DBTR_VARIANT(id, ID, ...) _Static_assert(DBTR_VARIANT_##ID < DBTR_MODE_ALL_COUNT, "recon/modes.def: variant " #id " after a CPU row");
#include "recon/modes.def"

/* The row whose name is the first len characters of s, or -1. */
static int find(const char *s, size_t len) {
  for (int m = 0; m < DBTR_MODE_TABLE_COUNT; m++)
    if (strlen(rows[m].info.name) == len && strncmp(s, rows[m].info.name, len) == 0) return m;
  return -1;
}

/* Calls fn for each row named in the space-separated list; a name the table does not have is
 * a fault of the table, which test_modes catches. */
static void each_named(const char *list, void (*fn)(int row, void *user), void *user) {
  for (const char *s = list; *s;) {
    size_t len = strcspn(s, " ");
    int m = find(s, len);
    if (m >= 0) fn(m, user);
    s += len;
    s += strspn(s, " ");
  }
}

static void set_class(int row, void *cls_row) { rows[row].info.bitwise_class = rows[*(const int *)cls_row].info.name; }

/* The bitwise classes, from the CPU rows' `same` columns. */
static void fill_classes(void) {
  for (int m = 0; m < DBTR_MODE_TABLE_COUNT; m++)
    if (rows[m].same[0]) {
      rows[m].info.bitwise_class = rows[m].info.name;
      each_named(rows[m].same, set_class, &m);
    }
}

/* Once in the life of the program, before the first query reads them, whichever thread asks. */
static void classes(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, fill_classes);
}

const dbtr_mode_info *dbtr_mode_info_of(dbtr_mode m) {
  classes();
  return (unsigned)m < DBTR_MODE_TABLE_COUNT ? &rows[m].info : NULL;
}

const dbtr_mode_info *dbtr_mode_at(size_t i) { return i < DBTR_MODE_TABLE_COUNT ? dbtr_mode_info_of((dbtr_mode)i) : NULL; }

const char *dbtr_mode_name(size_t i) { return i < DBTR_MODE_COUNT ? rows[i].info.name : NULL; }

const char *dbtr_mode_name_of(dbtr_mode m) { return (unsigned)m < DBTR_MODE_TABLE_COUNT ? rows[m].info.name : "unknown"; }

dbtr_precision dbtr_mode_precision(dbtr_mode m) {
  return (unsigned)m < DBTR_MODE_TABLE_COUNT ? rows[m].info.precision : DBTR_PREC_FLOAT;
}

int dbtr_mode_on_gpu(dbtr_mode m) { return (unsigned)m < DBTR_MODE_TABLE_COUNT && rows[m].info.gpu; }

int dbtr_mode_find(const char *s) { return s ? find(s, strlen(s)) : -1; }

void dbtr_mode_list(unsigned kinds, unsigned skip_prec, char *out, size_t cap) {
  int pick[DBTR_MODE_TABLE_COUNT], n = 0;
  for (int m = 0; m < DBTR_MODE_TABLE_COUNT; m++)
    if ((rows[m].kind & kinds) && !(skip_prec >> rows[m].info.precision & 1u)) pick[n++] = m;
  size_t len = 0;
  if (cap) out[0] = '\0';
  for (int i = 0; i < n; i++) {
    const char *sep = i == 0 ? "" : i + 1 < n ? ", " : " or ";
    int w = snprintf(out + len, cap - len, "%s%s", sep, rows[pick[i]].info.name);
    if (w < 0 || (size_t)w >= cap - len) break;
    len += (size_t)w;
  }
}

int dbtr_mode_parse(const char *s, unsigned kinds, dbtr_mode *out) {
  int m = dbtr_mode_find(s);
  if (m >= 0 && (rows[m].kind & kinds)) {
    *out = (dbtr_mode)m;
    return 0;
  }
  /* "fast, ieee, cpu-match, double or double-match": the modes users pick, not the variants. */
  char expected[256];
  dbtr_mode_list(kinds & ~(unsigned)DBTR_ROWS_VARIANTS, 0, expected, sizeof expected);
  return dbtr_err(DBTR_EINVAL, "unknown mode '%s' (expected %s)", s ? s : "", expected);
}

int dbtr_mode_of_backend_name(const char *backend) {
  if (!strncmp(backend, "gpu:", 4)) {
    int m = dbtr_mode_find(backend + 4);
    return m >= 0 && rows[m].info.gpu ? m : -1;
  }
  /* A CPU backend is named for its precision ("cpu-float"): its precision's CPU row. */
  int m = dbtr_mode_find(backend);
  return m >= 0 && !rows[m].info.gpu ? m : -1;
}

typedef struct {
  dbtr_mode *out;
  size_t max, n;
} variant_list;

static void add_variant(int row, void *user) {
  variant_list *l = user;
  if (l->n < l->max) l->out[l->n] = (dbtr_mode)row;
  l->n++;
}

size_t dbtr_mode_variants(dbtr_mode m, dbtr_mode *out, size_t max) {
  if ((unsigned)m >= DBTR_MODE_TABLE_COUNT) return 0;
  variant_list l = {out, max, 0};
  each_named(rows[m].variants, add_variant, &l);
  return l.n;
}

int dbtr_mode_class(dbtr_mode m) {
  const dbtr_mode_info *info = dbtr_mode_info_of(m);
  return info && info->bitwise_class ? dbtr_mode_find(info->bitwise_class) : -1;
}

dbtr_mode dbtr_mode_cpu_of(dbtr_precision p) {
  return p == DBTR_PREC_DD ? DBTR_CPU_DD : p == DBTR_PREC_DOUBLE ? DBTR_CPU_DOUBLE : DBTR_CPU_FLOAT;
}

size_t dbtr_precision_size(dbtr_precision p) {
  return p == DBTR_PREC_DD ? 2 * sizeof(double) : p == DBTR_PREC_DOUBLE ? sizeof(double) : sizeof(float);
}

const char *dbtr_precision_name(dbtr_precision p) {
  return p == DBTR_PREC_DD ? "dd" : p == DBTR_PREC_DOUBLE ? "double" : "float";
}

int dbtr_precision_of(const char *s, dbtr_precision *out) {
  for (int i = 0; i < DBTR_PREC_COUNT; i++)
    if (s && !strcmp(s, dbtr_precision_name((dbtr_precision)i))) {
      *out = (dbtr_precision)i;
      return 1;
    }
  return 0;
}
