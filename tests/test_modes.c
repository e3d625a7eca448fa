/* tests/test_modes.c: the mode table recon/modes.def and the functions recon/backend.c
 * derives from it (names, parsing, precision, the variants `dbtr validate --explain` runs). */
#include <ctype.h>
#include <string.h>

#include "recon/backend.h"
#include "recon/error.h"
#include "tests/test.h"

/* Every name parses back to its mode, and nothing outside the table parses. */
DBTR_TEST(names_round_trip) {
  for (int m = 0; m < DBTR_MODE_ALL_COUNT; m++) {
    dbtr_gpu_mode back = DBTR_MODE_ALL_COUNT;
    CHECK_OK(dbtr_gpu_mode_parse(dbtr_gpu_mode_name((dbtr_gpu_mode)m), &back));
    CHECK_EQ_INT(back, m);
  }
  CHECK(strcmp(dbtr_gpu_mode_name(DBTR_MODE_CPU_MATCH), "cpu-match") == 0);
  CHECK(strcmp(dbtr_gpu_mode_name(DBTR_VARIANT_CPU_MATCH_FMA), "cpu-match+fma") == 0);
  CHECK(strcmp(dbtr_gpu_mode_name(DBTR_MODE_ALL_COUNT), "unknown") == 0);
  dbtr_gpu_mode out;
  CHECK_EQ_INT(dbtr_gpu_mode_parse("turbo", &out), DBTR_EINVAL);
  CHECK_EQ_INT(dbtr_gpu_mode_parse("cpu-match+", &out), DBTR_EINVAL); /* no prefix matches */
  CHECK_EQ_INT(dbtr_gpu_mode_parse(NULL, &out), DBTR_EINVAL);
}

/* The error lists the modes users pick, as "a, b, ... or z", and no variant
 * (docs/errors.md). */
DBTR_TEST(parse_error_lists_user_modes) {
  dbtr_gpu_mode out;
  CHECK_EQ_INT(dbtr_gpu_mode_parse("turbo", &out), DBTR_EINVAL);
  const char *msg = dbtr_errmsg();
  CHECK_STR_CONTAINS(msg, "unknown mode 'turbo' (expected fast, ");
  for (int m = 0; m < DBTR_MODE_COUNT; m++) CHECK_STR_CONTAINS(msg, dbtr_gpu_mode_name((dbtr_gpu_mode)m));
  char last[64];
  snprintf(last, sizeof last, " or %s)", dbtr_gpu_mode_name((dbtr_gpu_mode)(DBTR_MODE_COUNT - 1)));
  CHECK_STR_CONTAINS(msg, last);
  CHECK(strchr(msg, '+') == NULL);
}

DBTR_TEST(precision) {
  CHECK_EQ_INT(dbtr_gpu_mode_precision(DBTR_MODE_FAST), DBTR_PREC_FLOAT);
  CHECK_EQ_INT(dbtr_gpu_mode_precision(DBTR_MODE_IEEE), DBTR_PREC_FLOAT);
  CHECK_EQ_INT(dbtr_gpu_mode_precision(DBTR_MODE_CPU_MATCH), DBTR_PREC_FLOAT);
  CHECK_EQ_INT(dbtr_gpu_mode_precision(DBTR_MODE_DOUBLE), DBTR_PREC_DOUBLE);
  CHECK_EQ_INT(dbtr_gpu_mode_precision(DBTR_MODE_DOUBLE_MATCH), DBTR_PREC_DOUBLE);
  CHECK_EQ_INT(dbtr_gpu_mode_precision(DBTR_VARIANT_CPU_MATCH_FTZ), DBTR_PREC_FLOAT);
  CHECK_EQ_INT(dbtr_gpu_mode_precision(DBTR_VARIANT_DOUBLE_MATCH_LIBM_EXP), DBTR_PREC_DOUBLE);
}

/* The variants of mode m are exactly want[0..n), in order. */
static void check_variants(dbtr_gpu_mode m, const dbtr_gpu_mode *want, size_t n) {
  dbtr_gpu_mode got[DBTR_MODE_ALL_COUNT];
  CHECK_EQ_INT(dbtr_gpu_mode_variants(m, got, DBTR_MODE_ALL_COUNT), n);
  for (size_t i = 0; i < n; i++) CHECK_EQ_INT(got[i], want[i]);
}

/* The explain variants docs/validation.md describes: the single changes that separate each
 * mode from the match mode of its precision. */
DBTR_TEST(variants_of_the_modes) {
  const dbtr_gpu_mode fast[] = {DBTR_VARIANT_CPU_MATCH_FMA, DBTR_VARIANT_CPU_MATCH_APPROX_DIV,
                                DBTR_VARIANT_CPU_MATCH_FAST_EXP, DBTR_VARIANT_CPU_MATCH_FTZ};
  const dbtr_gpu_mode ieee[] = {DBTR_VARIANT_CPU_MATCH_FMA, DBTR_VARIANT_CPU_MATCH_LIBM_EXP};
  const dbtr_gpu_mode dbl[] = {DBTR_VARIANT_DOUBLE_MATCH_FMA, DBTR_VARIANT_DOUBLE_MATCH_LIBM_EXP};
  check_variants(DBTR_MODE_FAST, fast, 4);
  check_variants(DBTR_MODE_IEEE, ieee, 2);
  check_variants(DBTR_MODE_DOUBLE, dbl, 2);
  check_variants(DBTR_MODE_CPU_MATCH, NULL, 0);
  check_variants(DBTR_MODE_DOUBLE_MATCH, NULL, 0);
  check_variants(DBTR_VARIANT_CPU_MATCH_FMA, NULL, 0);
  check_variants(DBTR_MODE_ALL_COUNT, NULL, 0);
  /* Fewer slots than variants: the first ones, and the full count. */
  dbtr_gpu_mode two[2];
  CHECK_EQ_INT(dbtr_gpu_mode_variants(DBTR_MODE_FAST, two, 2), 4);
  CHECK_EQ_INT(two[0], fast[0]);
  CHECK_EQ_INT(two[1], fast[1]);
  CHECK_EQ_INT(dbtr_gpu_mode_variants(DBTR_MODE_FAST, NULL, 0), 4);
}

/* Every explain variant is a variant row, of its mode's precision (the variant changes one
 * thing, never the element type). */
DBTR_TEST(variants_are_variants_of_the_parents_precision) {
  for (int m = 0; m < DBTR_MODE_ALL_COUNT; m++) {
    dbtr_gpu_mode v[DBTR_MODE_ALL_COUNT];
    size_t n = dbtr_gpu_mode_variants((dbtr_gpu_mode)m, v, DBTR_MODE_ALL_COUNT);
    if (m >= DBTR_MODE_COUNT) CHECK_EQ_INT(n, 0);
    for (size_t i = 0; i < n; i++) {
      CHECK(v[i] >= DBTR_MODE_COUNT && v[i] < DBTR_MODE_ALL_COUNT);
      CHECK_EQ_INT(dbtr_gpu_mode_precision(v[i]), dbtr_gpu_mode_precision((dbtr_gpu_mode)m));
    }
  }
}

/* The table's own consistency: id is the name with '-' and '+' written '_', ID is id in upper
 * case, and every name in a variants column is a row (dbtr_gpu_mode_variants skips any other,
 * so count the words). */
typedef struct {
  const char *id, *ID, *name, *ops, *flags, *variants;
  int user;
} row_text;
static const row_text table[] = {
#define DBTR_MODE(id, ID, name, prec, arith, div, sqrt, exp, flags, variants) \
  {#id, #ID, name, #arith " " #div " " #sqrt " " #exp, flags, variants, 1},
#define DBTR_VARIANT(id, ID, name, prec, arith, div, sqrt, exp, flags, variants) \
  {#id, #ID, name, #arith " " #div " " #sqrt " " #exp, flags, variants, 0},
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
    CHECK(strcmp(dbtr_gpu_mode_name((dbtr_gpu_mode)m), r->name) == 0);
    CHECK_EQ_INT(r->user, m < DBTR_MODE_COUNT);
    CHECK_EQ_INT(dbtr_gpu_mode_variants((dbtr_gpu_mode)m, NULL, 0), count_words(r->variants));
  }
}

/* cpu-match and double-match promise the CPU reference's bits, so their rows must ask for
 * its arithmetic: explicitly rounded operations, the shared exp, no flush to zero, and no
 * contraction anywhere (-fmad=false also covers the code outside the shared arithmetic).
 * kernels/ptx_audit.sh checks that such rows compile to such instructions. */
DBTR_TEST(match_rows_ask_for_the_cpu_arithmetic) {
  const dbtr_gpu_mode match[] = {DBTR_MODE_CPU_MATCH, DBTR_MODE_DOUBLE_MATCH};
  for (size_t i = 0; i < 2; i++) {
    const row_text *r = &table[match[i]];
    CHECK(strcmp(r->ops, "rn rn rn shared") == 0);
    CHECK_STR_CONTAINS(r->flags, "-ftz=false");
    CHECK_STR_CONTAINS(r->flags, "-fmad=false");
  }
}

DBTR_TEST_MAIN(names_round_trip, parse_error_lists_user_modes, precision, variants_of_the_modes,
               variants_are_variants_of_the_parents_precision, table_spellings_agree,
               match_rows_ask_for_the_cpu_arithmetic)
