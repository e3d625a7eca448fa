/* tests/test_dd.c: recon/dd.h (double-double arithmetic) against 256-bit MPFR.
 *
 * Each arithmetic case draws a few hundred thousand normalized double-doubles (random
 * significands, exponents over [-60, 60], low parts of every size, and pairs that cancel),
 * prints the largest relative error in units of u^2 = 2^-106 and checks it against the
 * header's bound. Every result must also be normalized (hi == fl(hi + lo)). The exact cases
 * (floor, to_int, comparisons) need no MPFR; the others skip (exit 77) without it. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "recon/dd.h"
#include "tests/rng.h"
#include "tests/test.h"
#include "tests/mpfr.h"

#define U2 0x1p-106 /* u^2, u = 2^-53 */

/* Random pairs per arithmetic case: a few hundred thousand, under a second each. */
enum { N_ARITH = 1 << 18, N_FUNC = 1 << 17 };

static uint64_t dbits(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}
static int normalized(dbtr_dd a) { return a.hi + a.lo == a.hi; }

/* hi plus a random low part: below u|hi| (the usual case), 2^-40 smaller still, or zero. */
static dbtr_dd with_lo(uint64_t *state, double hi) {
  double lo = hi * 0x1p-53 * uniform(state, -1.0, 1.0);
  uint64_t c = mix(state) & 7u;
  if (c == 0) lo = 0.0;
  if (c == 1) lo *= 0x1p-40;
  return dbtr__dd_fast_two_sum(hi, lo);
}
static dbtr_dd rand_dd(uint64_t *state, int e0, int e1) { return with_lo(state, log_uniform(state, e0, e1)); }
/* A value within a few ulps of -a (or of a when negate is 0), with its own low part. */
static dbtr_dd near(uint64_t *state, dbtr_dd a, int negate) {
  double hi = a.hi + (double)((int)(mix(state) % 9u) - 4) * (a.hi * 0x1p-52);
  dbtr_dd b = with_lo(state, hi);
  if (mix(state) & 1u) b = dbtr__dd_fast_two_sum(a.hi, a.lo + b.lo * 0x1p-20); /* same hi, lo differs */
  return negate ? dbtr_dd_neg(b) : b;
}

#ifdef DBTR_HAVE_MPFR
/* hi + lo at 256 bits: exact for the inputs drawn here (spans below 256 bits). */
static void set_dd(mpfr_t r, dbtr_dd a) {
  mpfr_set_d(r, a.hi, MPFR_RNDN);
  mpfr_add_d(r, r, a.lo, MPFR_RNDN);
}
/* |got - ref| / |ref| in units of u^2; infinite if ref is 0 and got is not. */
static double err_u2(dbtr_dd got, mpfr_t ref) {
  mpfr_t g;
  mpfr_init2(g, 256);
  set_dd(g, got);
  mpfr_sub(g, g, ref, MPFR_RNDN);
  double e;
  if (mpfr_zero_p(ref))
    e = mpfr_zero_p(g) ? 0.0 : (double)INFINITY;
  else {
    mpfr_div(g, g, ref, MPFR_RNDN);
    e = fabs(mpfr_get_d(g, MPFR_RNDN)) / U2;
  }
  mpfr_clear(g);
  return e;
}

typedef struct {
  long n, unnormalized;
  double max_u2;
  dbtr_dd at_a, at_b;
} stats;

static void track(stats *s, double e, dbtr_dd got, dbtr_dd a, dbtr_dd b) {
  s->n++;
  if (!normalized(got)) s->unnormalized++;
  if (e > s->max_u2) {
    s->max_u2 = e;
    s->at_a = a;
    s->at_b = b;
  }
}
static void report(const char *name, const stats *s, double bound_u2) {
  printf("%s: %ld inputs, max error %.3f u^2 = %.3g (bound %.3f u^2) at (%a + %a, %a + %a), %ld not normalized\n",
         name, s->n, s->max_u2, s->max_u2 * U2, bound_u2, s->at_a.hi, s->at_a.lo, s->at_b.hi, s->at_b.lo,
         s->unnormalized);
  CHECK_LE(s->max_u2, bound_u2);
  CHECK_EQ_INT(s->unnormalized, 0);
}
#endif

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV };

/* N_ARITH random pairs, then as many where b nearly cancels a (a + b or a - b near 0). */
static void check_op(int op, const char *name, double bound_u2) {
  NEED_MPFR();
#ifdef DBTR_HAVE_MPFR
  stats s = {0, 0, 0.0, {0.0, 0.0}, {0.0, 0.0}};
  uint64_t state = (uint64_t)op + 1u;
  mpfr_t ma, mb, mr;
  mpfr_inits2(256, ma, mb, mr, (mpfr_ptr)0);
  for (long i = 0; i < 2 * N_ARITH; i++) {
    dbtr_dd a = rand_dd(&state, -60, 60);
    dbtr_dd b = i < N_ARITH || op >= OP_MUL ? rand_dd(&state, -60, 60) : near(&state, a, op == OP_ADD);
    dbtr_dd got;
    set_dd(ma, a);
    set_dd(mb, b);
    switch (op) {
    case OP_ADD: got = dbtr_dd_add(a, b), mpfr_add(mr, ma, mb, MPFR_RNDN); break;
    case OP_SUB: got = dbtr_dd_sub(a, b), mpfr_sub(mr, ma, mb, MPFR_RNDN); break;
    case OP_MUL: got = dbtr_dd_mul(a, b), mpfr_mul(mr, ma, mb, MPFR_RNDN); break;
    default: got = dbtr_dd_div(a, b), mpfr_div(mr, ma, mb, MPFR_RNDN); break;
    }
    track(&s, err_u2(got, mr), got, a, b);
  }
  mpfr_clears(ma, mb, mr, (mpfr_ptr)0);
  report(name, &s, bound_u2);
#else
  (void)op, (void)name, (void)bound_u2;
#endif
}

/* The bounds of JMP 2017 (recon/dd.h), with u^3 terms written out. */
DBTR_TEST(add_mpfr) { check_op(OP_ADD, "add", 3.0 / (1.0 - 4.0 * 0x1p-53)); }
DBTR_TEST(sub_mpfr) { check_op(OP_SUB, "sub", 3.0 / (1.0 - 4.0 * 0x1p-53)); }
DBTR_TEST(mul_mpfr) { check_op(OP_MUL, "mul", 5.0); }
DBTR_TEST(div_mpfr) { check_op(OP_DIV, "div", 15.0 + 56.0 * 0x1p-53); }

DBTR_TEST(sqrt_mpfr) {
  NEED_MPFR();
#ifdef DBTR_HAVE_MPFR
  stats s = {0, 0, 0.0, {0.0, 0.0}, {0.0, 0.0}};
  uint64_t state = 11;
  mpfr_t ma, mr;
  mpfr_inits2(256, ma, mr, (mpfr_ptr)0);
  for (long i = 0; i < N_ARITH; i++) {
    dbtr_dd a = rand_dd(&state, -60, 60);
    a = a.hi < 0.0 ? dbtr_dd_neg(a) : a;
    dbtr_dd got = dbtr_dd_sqrt(a);
    set_dd(ma, a);
    mpfr_sqrt(mr, ma, MPFR_RNDN);
    track(&s, err_u2(got, mr), got, a, dbtr_dd_of(0.0));
  }
  mpfr_clears(ma, mr, (mpfr_ptr)0);
  /* 4.2u^2: two roundings of a correction below 1.5u s (3u^2) and the omitted second-order
   * term (a - s^2)^2 / (8 s^3) <= 9/8 u^2 (docs/crmath.md). */
  report("sqrt", &s, 4.2);
#endif
  CHECK_EQ_U64(dbits(dbtr_dd_sqrt(dbtr_dd_of(0.0)).hi), 0u);
  CHECK_EQ_U64(dbits(dbtr_dd_sqrt(dbtr_dd_of(-0.0)).hi), dbits(-0.0));
  CHECK_EQ_U64(dbits(dbtr_dd_sqrt(dbtr_dd_of(-1.0)).hi), 0x7ff8000000000000u);
  CHECK(dbtr_dd_eq(dbtr_dd_sqrt(dbtr_dd_of(4.0)), dbtr_dd_of(2.0)));
}

enum { FN_EXP, FN_LOG };

/* The bounds of exp and log, from the operations' bounds (docs/crmath.md derives them):
 * exp 7.3u^2 (e^r - 1 within 10.2u^2, weighted by at most 0.414 in 1 + (e^r - 1), the 2u^2
 * of that sum and the 3u^2 |r| of the reduction), log 29.2u^2 (the correction's two terms
 * within 17.2u^2 of 1.2 |log m| each, the Newton step's 1.6u^2, 2u^2 + 3u^2 to add y and
 * e ln2, 2u^2 for e ln2 itself). */
#define EXP_BOUND_U2 7.3
#define LOG_BOUND_U2 29.2

#ifdef DBTR_HAVE_MPFR
/* Relative error of exp or log at a, in u^2; for exp results below 2^-969 (a low part
 * below 2^-1022, so subnormal) the error allowed there, half the smallest subnormal, is
 * taken off first. */
static double fn_err(int fn, dbtr_dd a, dbtr_dd *got) {
  mpfr_t ma, mr;
  mpfr_inits2(256, ma, mr, (mpfr_ptr)0);
  set_dd(ma, a);
  if (fn == FN_EXP) {
    *got = dbtr_dd_exp(a);
    mpfr_exp(mr, ma, MPFR_RNDN);
  } else {
    *got = dbtr_dd_log(a);
    mpfr_log(mr, ma, MPFR_RNDN);
  }
  double e = err_u2(*got, mr);
  if (fn == FN_EXP && got->hi < 0x1p-969) e = fmax(0.0, e - 0.5 * (0x1p-1074 / fabs(got->hi)) / U2);
  mpfr_clears(ma, mr, (mpfr_ptr)0);
  return e;
}
#endif

/* Draws of the exp and log cases, one stats per range. */
static void check_fn(int fn, const char *name, dbtr_dd (*draw)(uint64_t *, int), int ranges, double bound_u2) {
  NEED_MPFR();
#ifdef DBTR_HAVE_MPFR
  uint64_t state = 21u + (uint64_t)fn;
  for (int r = 0; r < ranges; r++) {
    stats s = {0, 0, 0.0, {0.0, 0.0}, {0.0, 0.0}};
    for (long i = 0; i < N_FUNC; i++) {
      dbtr_dd a = draw(&state, r), got;
      double e = fn_err(fn, a, &got);
      track(&s, e, got, a, dbtr_dd_of(0.0));
    }
    char label[64];
    snprintf(label, sizeof label, "%s, range %d", name, r);
    report(label, &s, bound_u2);
  }
#else
  (void)fn, (void)name, (void)draw, (void)ranges, (void)bound_u2;
#endif
}

/* exp: 0 uniform on [-700, 700]; 1 uniform on [-50, 50], where dbtr's arguments lie;
 * 2 |x| from 2^-60 to 2^5 in exponent; 3 next to (k + 1/2) ln2, where |r| is largest. */
static dbtr_dd draw_exp(uint64_t *state, int range) {
  switch (range) {
  case 0: return with_lo(state, uniform(state, -700.0, 700.0));
  case 1: return with_lo(state, uniform(state, -50.0, 50.0));
  case 2: return rand_dd(state, -60, 5);
  default: {
    double k = floor(uniform(state, -1000.0, 1000.0));
    return with_lo(state, (k + 0.5) * 0.6931471805599453 + uniform(state, -1e-12, 1e-12));
  }
  }
}
/* log: 0 from 1e-300 to 1e300, uniform in exponent; 1 near 1 (1 + d, |d| from 2^-52 to
 * 1/2 in exponent, and 1 + lo); 2 next to sqrt(2) 2^e, where the reduction switches. */
static dbtr_dd draw_log(uint64_t *state, int range) {
  switch (range) {
  case 0: return with_lo(state, fabs(log_uniform(state, -996, 996)));
  case 1: return with_lo(state, (mix(state) & 1u) ? 1.0 : 1.0 + log_uniform(state, -52, -1));
  default: {
    int e = (int)(mix(state) % 2000u) - 1000;
    return with_lo(state, ldexp(1.4142135623730951 + uniform(state, -0x1p-40, 0x1p-40), e));
  }
  }
}

DBTR_TEST(exp_mpfr) {
  check_fn(FN_EXP, "exp", draw_exp, 4, EXP_BOUND_U2);
  CHECK(dbtr_dd_eq(dbtr_dd_exp(dbtr_dd_of(0.0)), dbtr_dd_of(1.0)));
  CHECK(dbtr_dd_eq(dbtr_dd_exp(dbtr_dd_of(-0.0)), dbtr_dd_of(1.0)));
  CHECK(dbtr_dd_eq(dbtr_dd_exp(dbtr_dd_of(1e-300)), dbtr__dd_make(1.0, 1e-300)));
  CHECK(dbtr_dd_eq(dbtr_dd_exp(dbtr_dd_of(710.5)), dbtr_dd_of(INFINITY)));
  CHECK(dbtr_dd_eq(dbtr_dd_exp(dbtr_dd_of(INFINITY)), dbtr_dd_of(INFINITY)));
  CHECK(dbtr_dd_eq(dbtr_dd_exp(dbtr_dd_of(-746.5)), dbtr_dd_of(0.0)));
  CHECK(dbtr_dd_eq(dbtr_dd_exp(dbtr_dd_of(-INFINITY)), dbtr_dd_of(0.0)));
  CHECK_EQ_U64(dbits(dbtr_dd_exp(dbtr_dd_of(NAN)).hi), 0x7ff8000000000000u);
  /* The subnormal results stay normalized and close: e^-740 = 4.2e-322, 85 subnormal ulps. */
  dbtr_dd t = dbtr_dd_exp(dbtr_dd_of(-740.0));
  CHECK(normalized(t));
  CHECK_NEAR(t.hi + t.lo, 4.2e-322, 0x1p-1073);
}

DBTR_TEST(log_mpfr) {
  check_fn(FN_LOG, "log", draw_log, 3, LOG_BOUND_U2);
  CHECK(dbtr_dd_eq(dbtr_dd_log(dbtr_dd_of(1.0)), dbtr_dd_of(0.0)));
  CHECK(dbtr_dd_eq(dbtr_dd_log(dbtr_dd_of(0.0)), dbtr_dd_of(-INFINITY)));
  CHECK(dbtr_dd_eq(dbtr_dd_log(dbtr_dd_of(INFINITY)), dbtr_dd_of(INFINITY)));
  CHECK_EQ_U64(dbits(dbtr_dd_log(dbtr_dd_of(-1.0)).hi), 0x7ff8000000000000u);
  CHECK_EQ_U64(dbits(dbtr_dd_log(dbtr_dd_of(NAN)).hi), 0x7ff8000000000000u);
  /* log 2^-1074, a subnormal argument: -744.44 */
  CHECK_NEAR(dbtr_dd_log(dbtr_dd_of(0x1p-1074)).hi, -1074.0 * 0.6931471805599453, 1e-12);
}

/* The constants of recon/dd.h against MPFR: 1/n! as the nearest double and the nearest
 * double to the rest; ln2 = C1 + C2 + C3 within 2^-140 relative (2^-143.9 by mpmath), with
 * C1 and C2 of at most 42 significant bits, so that k C1 and k C2 are exact for |k| < 2^11. */
DBTR_TEST(constants_mpfr) {
  NEED_MPFR();
#ifdef DBTR_HAVE_MPFR
  mpfr_t f, r;
  mpfr_inits2(256, f, r, (mpfr_ptr)0);
  for (int n = 1; n <= DBTR__DD_EXP_DEGREE; n++) {
    dbtr_dd c = dbtr__dd_inv_fact(n);
    mpfr_fac_ui(f, (unsigned long)n, MPFR_RNDN); /* exact: n! < 2^256 */
    mpfr_ui_div(f, 1, f, MPFR_RNDN);
    double hi = mpfr_get_d(f, MPFR_RNDN);
    mpfr_sub_d(r, f, hi, MPFR_RNDN);
    double lo = mpfr_get_d(r, MPFR_RNDN);
    if (dbits(c.hi) != dbits(hi) || dbits(c.lo) != dbits(lo))
      TEST__FAIL("1/%d!: header %a + %a, MPFR %a + %a", n, c.hi, c.lo, hi, lo);
  }
  mpfr_const_log2(f, MPFR_RNDN);
  mpfr_set_d(r, DBTR__CR_LN2_C1, MPFR_RNDN);
  mpfr_add_d(r, r, DBTR__CR_LN2_C2, MPFR_RNDN);
  mpfr_add_d(r, r, DBTR__CR_LN2_C3, MPFR_RNDN);
  mpfr_sub(r, r, f, MPFR_RNDN);
  mpfr_div(r, r, f, MPFR_RNDN);
  CHECK_LE(fabs(mpfr_get_d(r, MPFR_RNDN)), 0x1p-140);
  mpfr_clears(f, r, (mpfr_ptr)0);
  double c1 = DBTR__CR_LN2_C1 * 0x1p42, c2 = DBTR__CR_LN2_C2 * 0x1p86;
  CHECK(c1 == floor(c1) && c1 < 0x1p42);
  CHECK(c2 == floor(c2) && c2 < 0x1p42);
#endif
}

/* Floor of values around integers, of both signs, with low parts of either sign, and of
 * values whose integer part needs more than 53 bits. */
DBTR_TEST(floor_exact) {
  static const struct {
    double hi, lo, want_hi, want_lo;
  } cases[] = {
      {5.0, 0.0, 5.0, 0.0},         {5.0, 1e-20, 5.0, 0.0},          {5.0, -1e-20, 4.0, 0.0},
      {-5.0, 1e-20, -5.0, 0.0},     {-5.0, -1e-20, -6.0, 0.0},       {5.5, 1e-20, 5.0, 0.0},
      {-5.5, -1e-20, -6.0, 0.0},    {0.0, 0.0, 0.0, 0.0},            {0.0, 0.0, 0.0, 0.0},
      {0.25, 0.0, 0.0, 0.0},        {-0.25, 0.0, -1.0, 0.0},         {0x1p60, 0.5, 0x1p60, 0.0},
      {0x1p60, -0.5, 0x1p60, -1.0}, {0x1p60, 3.25, 0x1p60, 3.0},     {-0x1p60, 3.25, -0x1p60, 3.0},
      {-0x1p60, -3.25, -0x1p60, -4.0}, {0x1p52 + 1.0, -0.25, 0x1p52, 0.0}, {0x1p53, -0.5, 0x1p53 - 1.0, 0.0},
      {0x1.8p0, -0x1p-53, 1.0, 0.0}, {1.0, -0x1p-54, 0.0, 0.0},     {-1.0, 0x1p-54, -1.0, 0.0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dbtr_dd f = dbtr_dd_floor(dbtr__dd_make(cases[i].hi, cases[i].lo));
    if (f.hi != cases[i].want_hi || f.lo != cases[i].want_lo)
      TEST__FAIL("floor(%a + %a) = %a + %a, want %a + %a", cases[i].hi, cases[i].lo, f.hi, f.lo, cases[i].want_hi,
                 cases[i].want_lo);
    CHECK(normalized(f));
  }
  /* Random values: floor(a) <= a < floor(a) + 1, and floor(a) an integer. */
  uint64_t state = 41;
  for (int i = 0; i < 100000; i++) {
    dbtr_dd a = rand_dd(&state, -4, 70), f = dbtr_dd_floor(a);
    dbtr_dd f1 = dbtr_dd_add(f, dbtr_dd_of(1.0));
    CHECK(dbtr_dd_le(f, a) && dbtr_dd_lt(a, f1) && normalized(f));
    CHECK(floor(f.hi) == f.hi && floor(f.lo) == f.lo);
  }
}

DBTR_TEST(to_int_exact) {
  static const int ints[] = {0, 1, -1, 7, -7, 65536, -65536, 2147483647, -2147483647 - 1};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
    CHECK_EQ_INT(dbtr_dd_to_int(dbtr_dd_of_int(ints[i])), ints[i]);
    CHECK_EQ_INT(dbtr_dd_to_int(dbtr_dd_floor(dbtr_dd_add(dbtr_dd_of_int(ints[i]), dbtr_dd_of(0.25)))), ints[i]);
    CHECK(dbtr_dd_of_int(ints[i]).hi == (double)ints[i] && dbtr_dd_of_int(ints[i]).lo == 0.0);
  }
  /* floor of -0.5 + a tiny part, of 3 - a tiny part */
  CHECK_EQ_INT(dbtr_dd_to_int(dbtr_dd_floor(dbtr__dd_make(-0.5, 1e-30))), -1);
  CHECK_EQ_INT(dbtr_dd_to_int(dbtr_dd_floor(dbtr__dd_make(3.0, -1e-30))), 2);
  CHECK_EQ_INT(dbtr_dd_to_double(dbtr__dd_make(3.0, -1e-30)), 3);
}

/* Comparisons decide on lo when the his are equal, and are false with a NaN. */
DBTR_TEST(compare_exact) {
  dbtr_dd a = dbtr__dd_make(1.0, -1e-20), b = dbtr__dd_make(1.0, 1e-20), c = dbtr__dd_make(1.0, 0.0);
  dbtr_dd n = dbtr_dd_neg(b), z = dbtr_dd_of(0.0), mz = dbtr_dd_of(-0.0), nan = dbtr_dd_of(NAN);
  CHECK(dbtr_dd_lt(a, c) && dbtr_dd_lt(c, b) && dbtr_dd_lt(a, b) && !dbtr_dd_lt(b, a) && !dbtr_dd_lt(c, c));
  CHECK(dbtr_dd_le(a, c) && dbtr_dd_le(c, c) && !dbtr_dd_le(b, c));
  CHECK(dbtr_dd_gt(b, a) && dbtr_dd_gt(c, a) && !dbtr_dd_gt(c, c));
  CHECK(dbtr_dd_ge(b, c) && dbtr_dd_ge(c, c) && !dbtr_dd_ge(a, c));
  CHECK(dbtr_dd_eq(c, c) && !dbtr_dd_eq(a, c) && dbtr_dd_eq(z, mz));
  CHECK(dbtr_dd_lt(n, a) && dbtr_dd_lt(n, z) && dbtr_dd_lt(n, dbtr_dd_neg(c)));
  CHECK(dbtr_dd_lt(dbtr__dd_make(-2.0, 1e-20), dbtr__dd_make(-2.0, 2e-20)));
  CHECK(!dbtr_dd_lt(nan, c) && !dbtr_dd_le(nan, c) && !dbtr_dd_gt(nan, c) && !dbtr_dd_ge(nan, c));
  CHECK(!dbtr_dd_eq(nan, nan) && !dbtr_dd_lt(c, nan) && !dbtr_dd_ge(c, nan));
  /* Random pairs agree with MPFR-free exact reasoning: a - b computed exactly by TwoSums
   * for equal-exponent values, so sign(a - b) decides. */
  uint64_t state = 51;
  for (int i = 0; i < 100000; i++) {
    dbtr_dd x = rand_dd(&state, 0, 0), y = near(&state, x, 0);
    dbtr_dd d = dbtr_dd_sub(x, y);
    CHECK_EQ_INT(dbtr_dd_lt(x, y), d.hi < 0.0);
    CHECK_EQ_INT(dbtr_dd_eq(x, y), d.hi == 0.0);
  }
}

DBTR_TEST_MAIN(add_mpfr, sub_mpfr, mul_mpfr, div_mpfr, sqrt_mpfr, exp_mpfr, log_mpfr, constants_mpfr, floor_exact,
               to_int_exact, compare_exact)
