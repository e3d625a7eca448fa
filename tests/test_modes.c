/* tests/test_modes.c: the mode table recon/modes.def and the functions recon/modes.c derives
 * from it (names, parsing, precision, the variants `dbtr validate --explain` runs, the CPU
 * paths and the bitwise classes, the public query dbtr_mode_at). */
#include <ctype.h>
#include <string.h>

#include "recon/error.h"
#include "recon/modes.h"
#include "tests/test.h"

/* Every name parses back to its mode, and nothing outside the table parses. */
DBTR_TEST(names_round_trip) {
  for (int m = 0; m < DBTR_MODE_ALL_COUNT; m++) {
    dbtr_mode back = DBTR_MODE_ALL_COUNT;
    CHECK_OK(dbtr_mode_parse(dbtr_mode_name_of((dbtr_mode)m), DBTR_ROWS_MODES | DBTR_ROWS_VARIANTS, &back));
    CHECK_EQ_INT(back, m);
  }
  CHECK(strcmp(dbtr_mode_name_of(DBTR_MODE_CPU_MATCH), "cpu-match") == 0);
  CHECK(strcmp(dbtr_mode_name_of(DBTR_VARIANT_CPU_MATCH_FMA), "cpu-match+fma") == 0);
  CHECK(strcmp(dbtr_mode_name_of(DBTR_MODE_TABLE_COUNT), "unknown") == 0);
  dbtr_mode out;
  CHECK_EQ_INT(dbtr_mode_parse("turbo", DBTR_ROWS_MODES | DBTR_ROWS_VARIANTS, &out), DBTR_EINVAL);
  CHECK_EQ_INT(dbtr_mode_parse("cpu-match+", DBTR_ROWS_MODES | DBTR_ROWS_VARIANTS, &out), DBTR_EINVAL); /* no prefix matches */
  CHECK_EQ_INT(dbtr_mode_parse(NULL, DBTR_ROWS_MODES | DBTR_ROWS_VARIANTS, &out), DBTR_EINVAL);
}

/* The error lists the modes users pick, as "a, b, ... or z", and no variant
 * (docs/errors.md). */
DBTR_TEST(parse_error_lists_user_modes) {
  dbtr_mode out;
  CHECK_EQ_INT(dbtr_mode_parse("turbo", DBTR_ROWS_MODES | DBTR_ROWS_VARIANTS, &out), DBTR_EINVAL);
  const char *msg = dbtr_errmsg();
  CHECK_STR_CONTAINS(msg, "unknown mode 'turbo' (expected fast, ");
  for (int m = 0; m < DBTR_MODE_COUNT; m++) CHECK_STR_CONTAINS(msg, dbtr_mode_name_of((dbtr_mode)m));
  char last[64];
  snprintf(last, sizeof last, " or %s)", dbtr_mode_name_of((dbtr_mode)(DBTR_MODE_COUNT - 1)));
  CHECK_STR_CONTAINS(msg, last);
  CHECK(strchr(msg, '+') == NULL);
}

DBTR_TEST(precision) {
  CHECK_EQ_INT(dbtr_mode_precision(DBTR_MODE_FAST), DBTR_PREC_FLOAT);
  CHECK_EQ_INT(dbtr_mode_precision(DBTR_MODE_IEEE), DBTR_PREC_FLOAT);
  CHECK_EQ_INT(dbtr_mode_precision(DBTR_MODE_CPU_MATCH), DBTR_PREC_FLOAT);
  CHECK_EQ_INT(dbtr_mode_precision(DBTR_MODE_DOUBLE), DBTR_PREC_DOUBLE);
  CHECK_EQ_INT(dbtr_mode_precision(DBTR_MODE_DOUBLE_MATCH), DBTR_PREC_DOUBLE);
  CHECK_EQ_INT(dbtr_mode_precision(DBTR_VARIANT_CPU_MATCH_FTZ), DBTR_PREC_FLOAT);
  CHECK_EQ_INT(dbtr_mode_precision(DBTR_VARIANT_DOUBLE_MATCH_LIBM_EXP), DBTR_PREC_DOUBLE);
}

/* The variants of mode m are exactly want[0..n), in order. */
static void check_variants(dbtr_mode m, const dbtr_mode *want, size_t n) {
  dbtr_mode got[DBTR_MODE_ALL_COUNT];
  CHECK_EQ_INT(dbtr_mode_variants(m, got, DBTR_MODE_ALL_COUNT), n);
  for (size_t i = 0; i < n; i++) CHECK_EQ_INT(got[i], want[i]);
}

/* The explain variants docs/validation.md describes: the single changes that separate each
 * mode from the match mode of its precision. */
DBTR_TEST(variants_of_the_modes) {
  const dbtr_mode fast[] = {DBTR_VARIANT_CPU_MATCH_FMA, DBTR_VARIANT_CPU_MATCH_APPROX_DIV,
                            DBTR_VARIANT_CPU_MATCH_FAST_EXP, DBTR_VARIANT_CPU_MATCH_FTZ,
                            DBTR_VARIANT_CPU_MATCH_FACTORED};
  const dbtr_mode ieee[] = {DBTR_VARIANT_CPU_MATCH_FMA, DBTR_VARIANT_CPU_MATCH_LIBM_EXP,
                            DBTR_VARIANT_CPU_MATCH_FACTORED};
  const dbtr_mode dbl[] = {DBTR_VARIANT_DOUBLE_MATCH_FMA, DBTR_VARIANT_DOUBLE_MATCH_LIBM_EXP};
  check_variants(DBTR_MODE_FAST, fast, 5);
  check_variants(DBTR_MODE_IEEE, ieee, 3);
  check_variants(DBTR_MODE_DOUBLE, dbl, 2);
  check_variants(DBTR_MODE_CPU_MATCH, NULL, 0);
  check_variants(DBTR_MODE_DOUBLE_MATCH, NULL, 0);
  check_variants(DBTR_VARIANT_CPU_MATCH_FMA, NULL, 0);
  check_variants(DBTR_MODE_TABLE_COUNT, NULL, 0);
  /* Fewer slots than variants: the first ones, and the full count. */
  dbtr_mode two[2];
  CHECK_EQ_INT(dbtr_mode_variants(DBTR_MODE_FAST, two, 2), 5);
  CHECK_EQ_INT(two[0], fast[0]);
  CHECK_EQ_INT(two[1], fast[1]);
  CHECK_EQ_INT(dbtr_mode_variants(DBTR_MODE_FAST, NULL, 0), 5);
}

/* Every explain variant is a variant row, of its mode's precision (the variant changes one
 * thing, never the element type). */
DBTR_TEST(variants_are_variants_of_the_parents_precision) {
  for (int m = 0; m < DBTR_MODE_ALL_COUNT; m++) {
    dbtr_mode v[DBTR_MODE_ALL_COUNT];
    size_t n = dbtr_mode_variants((dbtr_mode)m, v, DBTR_MODE_ALL_COUNT);
    if (m >= DBTR_MODE_COUNT) CHECK_EQ_INT(n, 0);
    for (size_t i = 0; i < n; i++) {
      CHECK(v[i] >= DBTR_MODE_COUNT && v[i] < DBTR_MODE_ALL_COUNT);
      CHECK_EQ_INT(dbtr_mode_precision(v[i]), dbtr_mode_precision((dbtr_mode)m));
    }
  }
}

/* The table's own consistency: id is the name with '-' and '+' written '_', ID is id in upper
 * case, and every name in a variants column is a row (dbtr_mode_variants skips any other,
 * so count the words). */
typedef struct {
  const char *id, *ID, *name, *ops, *flags, *variants;
  int user;
} row_text;
static const row_text table[] = {
#define DBTR_MODE(id, ID, name, prec, arith, div, sqrt, exp, gather, flags, variants) \
  {#id, #ID, name, #arith " " #div " " #sqrt " " #exp " " #gather, flags, variants, 1},
#define DBTR_VARIANT(id, ID, name, prec, arith, div, sqrt, exp, gather, flags, variants) \
  {#id, #ID, name, #arith " " #div " " #sqrt " " #exp " " #gather, flags, variants, 0},
#include "recon/modes.def"
};

static size_t count_words(const char *s) {
  size_t n = 0;
  for (s += strspn(s, " "); *s; s += strspn(s, " ")) {
    s += strcspn(s, " ");
    n++;
  }
  return n;
}

DBTR_TEST(table_spellings_agree) {
  REQUIRE(sizeof table / sizeof table[0] == DBTR_MODE_ALL_COUNT);
  for (int m = 0; m < DBTR_MODE_ALL_COUNT; m++) {
    const row_text *r = &table[m];
    char id[64], ID[64];
    size_t len = strlen(r->name);
    REQUIRE(len < sizeof id);
    for (size_t i = 0; i <= len; i++) {
      id[i] = r->name[i] == '-' || r->name[i] == '+' ? '_' : r->name[i];
      ID[i] = (char)toupper((unsigned char)id[i]);
    }
    CHECK(strcmp(r->id, id) == 0);
    CHECK(strcmp(r->ID, ID) == 0);
    CHECK(strcmp(dbtr_mode_name_of((dbtr_mode)m), r->name) == 0);
    CHECK_EQ_INT(r->user, m < DBTR_MODE_COUNT);
    CHECK_EQ_INT(dbtr_mode_variants((dbtr_mode)m, NULL, 0), count_words(r->variants));
  }
}

/* cpu-match and double-match promise the CPU reference's bits, so their rows must ask for
 * its arithmetic: explicitly rounded operations, the shared exp, the CPU's order of the
 * gather's terms, no flush to zero, and no contraction anywhere (-fmad=false also covers the
 * code outside the shared arithmetic). kernels/ptx_audit.sh checks that such rows compile to
 * such instructions. */
DBTR_TEST(match_rows_ask_for_the_cpu_arithmetic) {
  const dbtr_mode match[] = {DBTR_MODE_CPU_MATCH, DBTR_MODE_DOUBLE_MATCH};
  for (size_t i = 0; i < 2; i++) {
    const row_text *r = &table[match[i]];
    CHECK(strcmp(r->ops, "rn rn rn shared cpu") == 0);
    CHECK_STR_CONTAINS(r->flags, "-ftz=false");
    CHECK_STR_CONTAINS(r->flags, "-fmad=false");
  }
}

/* The CPU rows: their names parse only where CPU rows are asked for, their precision and
 * threads, and the backend names that stand for them. */
DBTR_TEST(cpu_rows) {
  dbtr_mode m;
  CHECK_EQ_INT(dbtr_mode_parse("cpu-float", DBTR_ROWS_MODES | DBTR_ROWS_VARIANTS, &m), DBTR_EINVAL);
  CHECK_OK(dbtr_mode_parse("cpu-1-thread", DBTR_ROWS_CPU, &m));
  CHECK_EQ_INT(m, DBTR_CPU_1_THREAD);
  CHECK_EQ_INT(dbtr_mode_info_of(DBTR_CPU_1_THREAD)->threads, 1);
  CHECK_EQ_INT(dbtr_mode_info_of(DBTR_CPU_FLOAT)->threads, 0);
  CHECK_EQ_INT(dbtr_mode_precision(DBTR_CPU_DOUBLE), DBTR_PREC_DOUBLE);
  CHECK_EQ_INT(dbtr_mode_precision(DBTR_CPU_DD), DBTR_PREC_DD);
  CHECK(!dbtr_mode_on_gpu(DBTR_CPU_FLOAT) && dbtr_mode_on_gpu(DBTR_MODE_FAST));
  CHECK_EQ_INT(dbtr_mode_cpu_of(DBTR_PREC_DOUBLE), DBTR_CPU_DOUBLE);
  CHECK_EQ_INT(dbtr_mode_of_backend_name("gpu:cpu-match"), DBTR_MODE_CPU_MATCH);
  CHECK_EQ_INT(dbtr_mode_of_backend_name("cpu-dd"), DBTR_CPU_DD);
  CHECK_EQ_INT(dbtr_mode_of_backend_name("gpu:cpu-float"), -1); /* a CPU row is no GPU backend */
  CHECK_EQ_INT(dbtr_mode_of_backend_name("cpu-match"), -1);     /* nor a GPU row a CPU one */
  char list[256];
  dbtr_mode_list(DBTR_ROWS_MODES | DBTR_ROWS_CPU, 1u << DBTR_PREC_DD, list, sizeof list);
  CHECK(strcmp(list, "fast, ieee, cpu-match, double, double-match, cpu-1-thread, cpu-float or cpu-double") == 0);
}

/* The bitwise classes docs/modes.md promises: the CPU reference with its match mode (and one
 * thread with many), double with double-match, the referee's CPU and GPU; nothing else. */
DBTR_TEST(bitwise_classes) {
  CHECK_EQ_INT(dbtr_mode_class(DBTR_CPU_FLOAT), DBTR_CPU_FLOAT);
  CHECK_EQ_INT(dbtr_mode_class(DBTR_CPU_1_THREAD), DBTR_CPU_FLOAT);
  CHECK_EQ_INT(dbtr_mode_class(DBTR_MODE_CPU_MATCH), DBTR_CPU_FLOAT);
  CHECK_EQ_INT(dbtr_mode_class(DBTR_MODE_DOUBLE_MATCH), DBTR_CPU_DOUBLE);
  CHECK_EQ_INT(dbtr_mode_class(DBTR_CPU_DOUBLE), DBTR_CPU_DOUBLE);
  CHECK_EQ_INT(dbtr_mode_class(DBTR_MODE_DD), DBTR_CPU_DD);
  CHECK_EQ_INT(dbtr_mode_class(DBTR_CPU_DD), DBTR_CPU_DD);
  const dbtr_mode none[] = {DBTR_MODE_FAST, DBTR_MODE_IEEE, DBTR_MODE_DOUBLE, DBTR_VARIANT_CPU_MATCH_FMA,
                            DBTR_VARIANT_DOUBLE_MATCH_LIBM_EXP};
  for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) CHECK_EQ_INT(dbtr_mode_class(none[i]), -1);
  /* A class's members share its precision: the same bits need the same element type. */
  for (int m = 0; m < DBTR_MODE_TABLE_COUNT; m++) {
    int c = dbtr_mode_class((dbtr_mode)m);
    if (c >= 0) CHECK_EQ_INT(dbtr_mode_precision((dbtr_mode)m), dbtr_mode_precision((dbtr_mode)c));
  }
}

/* The public query walks the whole table in its order and stops after it. */
DBTR_TEST(public_query) {
  size_t n = 0;
  while (dbtr_mode_at(n)) n++;
  CHECK_EQ_INT(n, DBTR_MODE_TABLE_COUNT);
  const dbtr_mode_info *cm = dbtr_mode_at(DBTR_MODE_CPU_MATCH);
  REQUIRE(cm != NULL);
  CHECK(strcmp(cm->name, "cpu-match") == 0);
  CHECK(cm->gpu && !cm->variant);
  CHECK(strcmp(cm->bitwise_class, "cpu-float") == 0);
  CHECK(dbtr_mode_at(DBTR_MODE_FAST)->bitwise_class == NULL);
  CHECK(dbtr_mode_at(DBTR_VARIANT_CPU_MATCH_FTZ)->variant);
  for (size_t i = 0; i < DBTR_MODE_COUNT; i++) CHECK(strcmp(dbtr_mode_at(i)->name, dbtr_mode_name(i)) == 0);
}

DBTR_TEST_MAIN(cpu_rows, bitwise_classes, public_query, names_round_trip, parse_error_lists_user_modes, precision, variants_of_the_modes,
               variants_are_variants_of_the_parents_precision, table_spellings_agree,
               match_rows_ask_for_the_cpu_arithmetic)
