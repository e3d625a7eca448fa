/* recon/modes.h: the mode table (recon/modes.def) as the host reads it: one dbtr_mode value
 * per row, every path dbtr computes on (GPU modes, their explain variants, the CPU reference's
 * paths and the referee), with its name, precision, explain variants and bitwise class. Which
 * backend computes a row is the engine's business (engine/backends.h); recon/ names no GPU. */
#ifndef DBTR_MODES_H
#define DBTR_MODES_H

#include <stddef.h>

#include "include/dbtr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One value per row of recon/modes.def, in its order: first the modes users pick
 * (DBTR_MODE_FAST, ...), then the single-change variants of the match modes that `dbtr
 * validate --explain` runs (DBTR_VARIANT_CPU_MATCH_FMA, ...), then the CPU paths
 * (DBTR_CPU_1_THREAD, DBTR_CPU_FLOAT, ...). */
typedef enum {
#define DBTR_MODE(id, ID, ...) DBTR_MODE_##ID,
#define DBTR_VARIANT(id, ID, ...) DBTR_VARIANT_##ID,
#define DBTR_CPU(id, ID, ...) DBTR_##ID,
#include "recon/modes.def"
  DBTR_MODE_TABLE_COUNT,
  /* The GPU rows, which come first: the modes and the variants (kernels/ builds one object
   * per GPU row, and the GPU's create table is indexed by the value). */
  DBTR_MODE_ALL_COUNT = 0
#define DBTR_MODE(...) +1
#define DBTR_VARIANT(...) +1
#include "recon/modes.def"
  ,
  /* The modes users pick, one for each DBTR_MODE row (recon/modes.c checks that they come
   * first). */
  DBTR_MODE_COUNT = 0
#define DBTR_MODE(...) +1
#define DBTR_VARIANT(...)
#include "recon/modes.def"
} dbtr_mode;

/* The precisions, DBTR_PREC_FLOAT .. DBTR_PREC_DD (include/dbtr.h), counted. */
enum { DBTR_PREC_COUNT = DBTR_PREC_DD + 1 };

/* Which rows dbtr_mode_parse accepts: the modes users pick, the variants, the CPU paths. */
enum { DBTR_ROWS_MODES = 1, DBTR_ROWS_VARIANTS = 2, DBTR_ROWS_CPU = 4 };

/* The row of m (include/dbtr.h's dbtr_mode_info); NULL outside the table. */
const dbtr_mode_info *dbtr_mode_info_of(dbtr_mode m);
/* The name users write ("cpu-match", "cpu-match+fma", "cpu-float"); "unknown" outside the
 * table. */
const char *dbtr_mode_name_of(dbtr_mode m);
dbtr_precision dbtr_mode_precision(dbtr_mode m);
/* 1 for a GPU row (a mode or a variant). */
int dbtr_mode_on_gpu(dbtr_mode m);
/* The row of that name among the kinds of rows `rows` (DBTR_ROWS_*) accepts; DBTR_EINVAL
 * listing the modes users pick among them ("unknown mode 'x' (expected fast, ieee, ...)"),
 * for anything else. */
int dbtr_mode_parse(const char *s, unsigned rows, dbtr_mode *out);
/* The row of that name, or -1; no message. */
int dbtr_mode_find(const char *s);
/* The row computing what a backend of that name computes ("gpu:cpu-match", "cpu-float"; the
 * CPU backend's names are its precision's CPU row), or -1. */
int dbtr_mode_of_backend_name(const char *backend);
/* The variants `dbtr validate --explain` runs beside mode m, each one change away from the
 * match mode of m's precision: writes the first max of them to out (out may be NULL when max
 * is 0) and returns how many there are; 0 for rows without any. */
size_t dbtr_mode_variants(dbtr_mode m, dbtr_mode *out, size_t max);
/* m's bitwise class: the CPU row whose bits m gives in every iteration (DBTR_CPU_FLOAT for
 * cpu-match, cpu-1-thread and cpu-float itself), or -1 where m promises no CPU's bits. */
int dbtr_mode_class(dbtr_mode m);
/* Writes into out the names of the rows among `rows` (DBTR_ROWS_*) whose precision is not in
 * the mask `skip_prec` (bit p for precision p), in table order: "a, b or c". */
void dbtr_mode_list(unsigned rows, unsigned skip_prec, char *out, size_t cap);

size_t dbtr_precision_size(dbtr_precision p);
/* The name users write after --precision: "float", "double" or "dd". */
const char *dbtr_precision_name(dbtr_precision p);
/* 1, with the precision of that name in *out; 0 when s names none. */
int dbtr_precision_of(const char *s, dbtr_precision *out);
/* The CPU row that is the reference of precision p (cpu-float, cpu-double, cpu-dd). */
dbtr_mode dbtr_mode_cpu_of(dbtr_precision p);

#ifdef __cplusplus
}
#endif

#endif
