/* tests/test_crmath.c: recon/crmath.h against a reference far more precise than the result.
 *
 * The float functions must be correctly rounded: every result is compared bit for bit with
 * the correctly rounded value, and one mismatch fails. The reference is expl/logl (x87,
 * 64-bit significand; glibc's manual lists their known errors on x86-64 at a few ulp); where
 * their result lies within LD_BAND of a float rounding boundary, MPFR decides (libmpfr-dev).
 * The double functions must be faithful: the result is one of the two doubles around the
 * exact value, decided the same way; the largest error in ulps is printed.
 *
 * Cases: *_sampled run in the default suite (a stride through all 2^32 floats plus windows
 * at every boundary, or a few million doubles); *_exhaustive (label slow) run all 2^32
 * floats on every core, several minutes each. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "recon/crmath.h"
#include "tests/rng.h"
#include "tests/test.h"
#include "tests/mpfr.h"


enum { FN_EXP, FN_LOG };

/* Half-width of the band, relative, around the long double result inside which it cannot
 * decide a rounding: 2^-58 is at least 32 ulp of the 64-bit significand (an ulp is 2^-63
 * relative or less), several times the few ulp that glibc lists for expl/logl, and far above
 * the 2^-64 rounding of v * (1 +- LD_BAND) itself. */
#define LD_BAND 0x1p-58L

/* Prints at most this many mismatches per case; the count is always complete. */
enum { MAX_PRINT = 20 };

static uint32_t fbits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}
static float ffrom(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}
static uint64_t dbits(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}
static double dfrom(uint64_t u) {
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* ---- MPFR: the exact decision, for the few inputs long double cannot decide ---- */

#ifdef DBTR_HAVE_MPFR
/* f(x) at precision prec with the exponent range of the target format, so that rounding to
 * subnormals and overflow are MPFR's own (emin counts the subnormals: MPFR's significands
 * lie in [1/2, 1)). The range settings are per thread in Debian's (TLS) build. */
static void mpfr_eval(mpfr_t y, mpfr_t x, int fn, mpfr_rnd_t rnd) {
  int t = fn == FN_EXP ? mpfr_exp(y, x, rnd) : mpfr_log(y, x, rnd);
  mpfr_subnormalize(y, t, rnd);
}
static float mpfr_float(float x, int fn) {
  mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_set_emin(-148); /* 2^-149, the smallest subnormal float, is 0.5 * 2^-148 */
  mpfr_set_emax(128);  /* FLT_MAX < 2^128 = 0.5 * 2^129 */
  mpfr_t mx, my;
  mpfr_init2(mx, 24);
  mpfr_init2(my, 24);
  mpfr_set_flt(mx, x, MPFR_RNDN);
  mpfr_eval(my, mx, fn, MPFR_RNDN);
  float r = mpfr_get_flt(my, MPFR_RNDN);
  mpfr_clear(mx);
  mpfr_clear(my);
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
  return r;
}
/* The doubles just below and just above f(x) (equal when f(x) is a double). */
static void mpfr_bracket(double x, int fn, double *rd, double *ru) {
  mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_set_emin(-1073); /* 2^-1074 = 0.5 * 2^-1073 */
  mpfr_set_emax(1024);
  mpfr_t mx, my;
  mpfr_init2(mx, 53);
  mpfr_init2(my, 53);
  mpfr_set_d(mx, x, MPFR_RNDN);
  mpfr_eval(my, mx, fn, MPFR_RNDD);
  *rd = mpfr_get_d(my, MPFR_RNDD);
  mpfr_eval(my, mx, fn, MPFR_RNDU);
  *ru = mpfr_get_d(my, MPFR_RNDU);
  mpfr_clear(mx);
  mpfr_clear(my);
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
}
/* log2 of the relative error of hi + lo against f(x) computed with 256 bits (where hi + lo
 * is exact). */
static double mpfr_dd_err(float x, int fn, double hi, double lo) {
  mpfr_t mx, ref, got;
  mpfr_inits2(256, mx, ref, got, (mpfr_ptr)0);
  mpfr_set_flt(mx, x, MPFR_RNDN);
  if (fn == FN_EXP)
    mpfr_exp(ref, mx, MPFR_RNDN);
  else
    mpfr_log(ref, mx, MPFR_RNDN);
  mpfr_set_d(got, hi, MPFR_RNDN);
  mpfr_add_d(got, got, lo, MPFR_RNDN);
  mpfr_sub(got, got, ref, MPFR_RNDN);
  mpfr_div(got, got, ref, MPFR_RNDN);
  double e = fabs(mpfr_get_d(got, MPFR_RNDN));
  mpfr_clears(mx, ref, got, (mpfr_ptr)0);
  return e > 0.0 ? log2(e) : -1000.0;
}
#else
static float mpfr_float(float x, int fn) {
  (void)fn;
  return x;
}
static double mpfr_dd_err(float x, int fn, double hi, double lo) {
  (void)x, (void)fn, (void)hi, (void)lo;
  return 0.0;
}
static void mpfr_bracket(double x, int fn, double *rd, double *ru) {
  (void)fn;
  *rd = *ru = x;
}
#endif

/* ---- float reference ---- */

/* The correctly rounded float of exp or log at x, with the header's NaN convention: a NaN
 * argument comes back quieted, log of a negative number is +qNaN 0x7fc00000. *hard counts
 * the inputs that needed MPFR. */
static float ref_float(float x, int fn, long *hard) {
  if (x != x) return ffrom(fbits(x) | 0x00400000u);
  long double v;
  if (fn == FN_EXP) {
    v = expl((long double)x);
  } else {
    if (x < 0.0f) return ffrom(0x7fc00000u);
    v = logl((long double)x); /* -inf at 0, +inf at +inf */
  }
  if (isinf(v)) return (float)v;
  long double d = fabsl(v) * LD_BAND;
  float a = (float)(v - d), b = (float)(v + d);
  if (a == b) return a;
  (*hard)++;
  return mpfr_float(x, fn);
}

/* Compares count inputs first, first + step, ... (mod 2^32) with the reference; returns
 * the number of mismatches and prints the first few with their bits. */
static long check_floats(int fn, uint32_t first, uint32_t count, uint32_t step, long *hard, long *printed) {
  long bad = 0;
  for (uint32_t i = 0; i < count; i++) {
    uint32_t u = first + i * step;
    float x = ffrom(u);
    float got = fn == FN_EXP ? dbtr_expf_cr(x) : dbtr_logf_cr(x);
    float want = ref_float(x, fn, hard);
    if (fbits(got) == fbits(want)) continue;
    bad++;
#pragma omp critical(crmath_print)
    if ((*printed)++ < MAX_PRINT)
      fprintf(stderr, "%s(0x%08x = %a): got 0x%08x (%a), want 0x%08x (%a)\n", fn == FN_EXP ? "expf" : "logf", u,
              (double)x, fbits(got), (double)got, fbits(want), (double)want);
  }
  return bad;
}

/* Windows of 2^16 consecutive bit patterns (count), centred on each boundary. */
static long check_windows(int fn, const uint32_t *centres, size_t n, long *hard, long *printed) {
  long bad = 0;
  for (size_t i = 0; i < n; i++) bad += check_floats(fn, centres[i] - 32768u, 65536u, 1u, hard, printed);
  return bad;
}

/* Single inputs. */
static long check_list(int fn, const uint32_t *inputs, size_t n, long *hard, long *printed) {
  long bad = 0;
  for (size_t i = 0; i < n; i++) bad += check_floats(fn, inputs[i], 1u, 1u, hard, printed);
  return bad;
}

/* Every input that takes the double-double branch, i.e. whose exact value may lie within
 * 2^-51 (relative) of a float midpoint, found by a scan of all 2^32 floats (docs/crmath.md).
 * The default suite thus runs that branch, not only the exhaustive cases. For expf, none of
 * the three would round wrongly from the double result alone. */
static const uint32_t expf_branch_inputs[] = {0xc16912cdu, 0xbbf0edf1u, 0xbae0e25cu};
/* For logf, the first, second, fourth, seventh and eighth would (within 2^-34 to 2^-30 ulp of
 * a midpoint, closer than the double result's error). */
static const uint32_t logf_branch_inputs[] = {
    0x65d890d3u, 0x4c5d65a5u, 0x4d604ebeu, 0x41178febu, 0x1f116ab8u, 0x66a8c860u, 0x3c413d3au,
    0x6f31a8ecu, 0x38dcbe38u, 0x4665a9a6u, 0x5ee8984eu, 0x3bf86ef0u, 0x79e7ec37u, 0x0dc8bba4u,
    0x2c4c24b7u, 0x111c87f8u, 0x1a8446cbu, 0x464d5b2bu, 0x66abbd63u, 0x2e492984u, 0x4e85f412u,
    0x29fd22f8u, 0x28e3fa26u, 0x29e6126bu, 0x54af989du, 0x6d1f23ebu, 0x145cb6d4u, 0x39c31348u};

/* 2^22 inputs spaced by an odd step, so all distinct and spread over every sign, exponent
 * and NaN payload; the golden-ratio step keeps consecutive inputs far apart. */
enum { STRIDE_COUNT = 1 << 22 };
#define STRIDE_STEP 0x9e3779b9u

/* ---- double reference ---- */

static double next_up(double x) {
  if (x == 0.0) return dfrom(1u); /* the smallest subnormal */
  return x > 0.0 ? dfrom(dbits(x) + 1u) : dfrom(dbits(x) - 1u);
}
static double next_down(double x) { return -next_up(-x); }
/* The largest double <= v. */
static double round_down(long double v) {
  double d = (double)v;
  return (long double)d > v ? next_down(d) : d;
}
/* One ulp of a double near v: the spacing of doubles in v's binade. */
static long double ulp_at(long double v) {
  int e;
  frexpl(fabsl(v), &e);
  return ldexpl(1.0L, e - 53 < -1074 ? -1074 : e - 53);
}

typedef struct {
  long n, bad, hard;
  double max_ulp; /* largest |result - exact| seen, in ulps */
  double max_at;
} dstats;

/* Checks that y is exp(x) or log(x) rounded up or down (faithful), and tracks the error. */
static void check_double(int fn, double x, dstats *s) {
  double y = fn == FN_EXP ? dbtr_exp_sh(x) : dbtr_log_sh(x);
  long double v = fn == FN_EXP ? expl((long double)x) : logl((long double)x);
  long double d = fabsl(v) * LD_BAND;
  double rd = round_down(v - d), ru;
  if (rd == round_down(v + d) && (long double)rd != v - d) {
    ru = next_up(rd); /* no double within the band: v's neighbours are the exact value's */
  } else {
    mpfr_bracket(x, fn, &rd, &ru);
    s->hard++;
  }
  s->n++;
  if (!(y == rd || y == ru)) {
    if (s->bad++ < MAX_PRINT)
      fprintf(stderr, "%s(%a): got %a, exact lies in [%a, %a]\n", fn == FN_EXP ? "exp_sh" : "log_sh", x, y, rd, ru);
  }
  if (isfinite(y) && isfinite(v)) {
    double err = (double)(fabsl((long double)y - v) / ulp_at(v));
    if (err > s->max_ulp) {
      s->max_ulp = err;
      s->max_at = x;
    }
  }
}


/* 2^21 doubles per distribution, two distributions per function: a few million in all. */
enum { DOUBLE_COUNT = 1 << 21 };

/* ---- the cases ---- */

DBTR_TEST(expf_sampled) {
  NEED_MPFR();
  long hard = 0, printed = 0, bad = 0;
  /* Boundaries: e^x overflows from 0x42b17218 (88.7228) on; becomes subnormal below
   * ln(FLT_MIN) = -87.3365 (0xc2aeac50); rounds to 0 below -150 ln 2 = -103.9721
   * (0xc2cff1b5); and leaves 1 where |x| crosses 2^-25 and 2^-24 (0x33000000,
   * 0x33800000, both signs). Around +-0 are the tiny and subnormal arguments. */
  static const uint32_t centres[] = {0x42b17218u, 0xc2aeac50u, 0xc2cff1b5u, 0x33000000u, 0x33800000u,
                                     0xb3000000u, 0xb3800000u, 0x00008000u, 0x80008000u};
  bad += check_windows(FN_EXP, centres, sizeof centres / sizeof centres[0], &hard, &printed);
  bad += check_floats(FN_EXP, 0u, STRIDE_COUNT, STRIDE_STEP, &hard, &printed);
  bad += check_list(FN_EXP, expf_branch_inputs, sizeof expf_branch_inputs / sizeof expf_branch_inputs[0], &hard, &printed);
  /* Special values, bit for bit. */
  CHECK_EQ_INT(fbits(dbtr_expf_cr(0.0f)), 0x3f800000u);  /* e^0 = 1 */
  CHECK_EQ_INT(fbits(dbtr_expf_cr(-0.0f)), 0x3f800000u); /* e^-0 = 1 */
  CHECK_EQ_INT(fbits(dbtr_expf_cr(INFINITY)), 0x7f800000u);
  CHECK_EQ_INT(fbits(dbtr_expf_cr(-INFINITY)), 0x00000000u);
  CHECK_EQ_INT(fbits(dbtr_expf_cr(ffrom(0x7f800001u))), 0x7fc00001u); /* signalling NaN comes back quiet */
  CHECK_EQ_INT(fbits(dbtr_expf_cr(ffrom(0xffc12345u))), 0xffc12345u); /* quiet NaN keeps sign and payload */
  CHECK_EQ_INT(fbits(dbtr_expf_cr(ffrom(0x42b17217u))), 0x7f7fff84u); /* largest finite result */
  CHECK_EQ_INT(fbits(dbtr_expf_cr(ffrom(0xc2cff1b4u))), 0x00000001u); /* smallest: 2^-149 */
  printf("expf_sampled: %u inputs, %ld mismatches, %ld decided by MPFR\n",
         (unsigned)(STRIDE_COUNT + 65536 * (sizeof centres / sizeof centres[0]) + sizeof expf_branch_inputs / 4), bad,
         hard);
  CHECK_EQ_INT(bad, 0);
}

DBTR_TEST(logf_sampled) {
  NEED_MPFR();
  long hard = 0, printed = 0, bad = 0;
  /* Boundaries: the subnormals (from +0) and FLT_MIN (0x00800000); 1 (0x3f800000), where
   * log is smallest and changes sign; sqrt(2) (0x3fb504f3), where the reduction switches
   * exponent; FLT_MAX and +inf (0x7f800000 - 32768 .. +32768 also covers the NaNs above). */
  static const uint32_t centres[] = {0x00008000u, 0x00800000u, 0x3f800000u, 0x3fb504f3u, 0x7f800000u, 0x80008000u};
  bad += check_windows(FN_LOG, centres, sizeof centres / sizeof centres[0], &hard, &printed);
  bad += check_floats(FN_LOG, 0u, STRIDE_COUNT, STRIDE_STEP, &hard, &printed);
  bad += check_list(FN_LOG, logf_branch_inputs, sizeof logf_branch_inputs / sizeof logf_branch_inputs[0], &hard, &printed);
  CHECK_EQ_INT(fbits(dbtr_logf_cr(1.0f)), 0x00000000u); /* log 1 = +0 */
  CHECK_EQ_INT(fbits(dbtr_logf_cr(0.0f)), 0xff800000u); /* log 0 = -inf */
  CHECK_EQ_INT(fbits(dbtr_logf_cr(-0.0f)), 0xff800000u);
  CHECK_EQ_INT(fbits(dbtr_logf_cr(INFINITY)), 0x7f800000u);
  CHECK_EQ_INT(fbits(dbtr_logf_cr(-INFINITY)), 0x7fc00000u);
  CHECK_EQ_INT(fbits(dbtr_logf_cr(-1.0f)), 0x7fc00000u);
  CHECK_EQ_INT(fbits(dbtr_logf_cr(ffrom(0x80000001u))), 0x7fc00000u); /* negative subnormal */
  CHECK_EQ_INT(fbits(dbtr_logf_cr(ffrom(0x7f800001u))), 0x7fc00001u);
  CHECK_EQ_INT(fbits(dbtr_logf_cr(ffrom(0x00000001u))), 0xc2ce8ed0u); /* log 2^-149 = -103.2789 */
  printf("logf_sampled: %u inputs, %ld mismatches, %ld decided by MPFR\n",
         (unsigned)(STRIDE_COUNT + 65536 * (sizeof centres / sizeof centres[0]) + sizeof logf_branch_inputs / 4), bad,
         hard);
  CHECK_EQ_INT(bad, 0);
}

/* All 2^32 inputs, in 65536 blocks of 65536 shared among the threads. */
static void exhaustive(int fn) {
  NEED_MPFR();
#ifdef DBTR_HAVE_MPFR
  REQUIRE(mpfr_buildopt_tls_p()); /* the exponent range set per call must be per thread */
#endif
  long hard = 0, printed = 0, bad = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : bad, hard)
  for (int blk = 0; blk < 65536; blk++) bad += check_floats(fn, (uint32_t)blk << 16, 65536u, 1u, &hard, &printed);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  printf("%s_exhaustive: 4294967296 inputs in %.0f s, %ld mismatches, %ld decided by MPFR\n",
         fn == FN_EXP ? "expf" : "logf", secs, bad, hard);
  CHECK_EQ_INT(bad, 0);
}

DBTR_TEST(expf_exhaustive) { exhaustive(FN_EXP); }

DBTR_TEST(logf_exhaustive) { exhaustive(FN_LOG); }

static void report(const char *name, const dstats *s) {
  printf("%s: %ld inputs, %ld not faithful, %ld decided by MPFR, max error %.4f ulp at %a\n", name, s->n, s->bad,
         s->hard, s->max_ulp, s->max_at);
}

DBTR_TEST(exp_sh_sampled) {
  NEED_MPFR();
  dstats s = {0, 0, 0, 0.0, 0.0};
  uint64_t state = 1;
  /* Uniform over the whole finite-result range [-745.2, 709.8] and a little beyond (the
   * subnormal results and the overflow), then uniform in exponent for |x| in
   * [2^-60, 2^9], where e^x - 1 spans every magnitude. */
  for (int i = 0; i < DOUBLE_COUNT; i++) check_double(FN_EXP, uniform(&state, -746.0, 710.0), &s);
  for (int i = 0; i < DOUBLE_COUNT; i++) check_double(FN_EXP, log_uniform(&state, -60, 9), &s);
  static const double edges[] = {0.0, 0x1p-1074, 1.0, -1.0, 709.782712893384, 709.7827128933841, -708.3964185322641,
                                 -745.1332191019411, -745.1332191019412, 0x1p-54, -0x1p-54, 0x1p-53, -0x1p-53};
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) check_double(FN_EXP, edges[i], &s);
  report("exp_sh_sampled", &s);
  CHECK_EQ_INT(s.bad, 0);
  CHECK_LT(s.max_ulp, 1.0); /* faithful means below one ulp */
  CHECK_EQ_U64(dbits(dbtr_exp_sh(-0.0)), dbits(1.0));
  CHECK_EQ_U64(dbits(dbtr_exp_sh((double)INFINITY)), dbits((double)INFINITY));
  CHECK_EQ_U64(dbits(dbtr_exp_sh(-(double)INFINITY)), dbits(0.0));
  CHECK_EQ_U64(dbits(dbtr_exp_sh(710.0)), dbits((double)INFINITY));
  CHECK_EQ_U64(dbits(dbtr_exp_sh(-746.0)), dbits(0.0));
  CHECK_EQ_U64(dbits(dbtr_exp_sh(dfrom(0x7ff0000000000001u))), 0x7ff8000000000001u); /* quieted */
}

DBTR_TEST(log_sh_sampled) {
  NEED_MPFR();
  dstats s = {0, 0, 0, 0.0, 0.0};
  uint64_t state = 2;
  /* Every positive finite double with equal weight per exponent (subnormals included), then
   * uniform in [0.5, 2], where log is small and the reduction's two branches meet. */
  for (int i = 0; i < DOUBLE_COUNT; i++) {
    double x = dfrom(mix(&state) % 0x7ff0000000000000u);
    check_double(FN_LOG, x == 0.0 ? 1.0 : x, &s);
  }
  for (int i = 0; i < DOUBLE_COUNT; i++) check_double(FN_LOG, uniform(&state, 0.5, 2.0), &s);
  static const double edges[] = {1.0, 0x1p-1074, 0x1p-1022, DBL_MAX, 2.0, 0.5, 1.4142135623730951, 1.4142135623730954,
                                 0x1.fffffffffffffp-1, 0x1.0000000000001p+0};
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) check_double(FN_LOG, edges[i], &s);
  report("log_sh_sampled", &s);
  CHECK_EQ_INT(s.bad, 0);
  CHECK_LT(s.max_ulp, 1.0);
  CHECK_EQ_U64(dbits(dbtr_log_sh(1.0)), 0u); /* +0 */
  CHECK_EQ_U64(dbits(dbtr_log_sh(0.0)), dbits(-(double)INFINITY));
  CHECK_EQ_U64(dbits(dbtr_log_sh(-0.0)), dbits(-(double)INFINITY));
  CHECK_EQ_U64(dbits(dbtr_log_sh((double)INFINITY)), dbits((double)INFINITY));
  CHECK_EQ_U64(dbits(dbtr_log_sh(-2.0)), 0x7ff8000000000000u);
  CHECK_EQ_U64(dbits(dbtr_log_sh(-(double)INFINITY)), 0x7ff8000000000000u);
}

/* The double-double branch decides the near-midpoint inputs, so its own accuracy is checked
 * directly, on inputs spread over its whole domain and where its series converge slowest:
 * exp at x near (k + 1/2) ln2 (|r| largest), log at x near sqrt(2) 2^e (|s| largest). The
 * bound: the series truncations (below 2^-101) plus about 20 double-double operations of
 * relative error a few 2^-104 each (Joldes, Muller and Popescu, ACM TOMS 2017) stay below
 * 2^-97, and the cancellation in log (e = +-1 against log m, at most a factor 2) makes 2^-96.
 * The closest float case lies 2^-34 ulp (2^-58 relative) from a midpoint (docs/crmath.md),
 * so this bound decides every input with room to spare; a wrong or missing series term
 * (2^-52 or worse) fails it. */
#define DD_BOUND_LOG2 (-96.0)

DBTR_TEST(dd_branch_accuracy) {
  NEED_MPFR();
  double worst[2] = {-1000.0, -1000.0};
  float worst_at[2] = {0.0f, 0.0f};
  for (int i = 0; i <= 4096; i++) {
    /* 4097 points evenly over [-104, 89], the branch's whole domain for expf */
    float xs[4];
    xs[0] = (float)(-104.0 + 193.0 * (double)i / 4096.0);
    /* exp: next to (k + 1/2) ln2 for k = -150 .. 127 (i < 278) */
    xs[1] = (float)((double)(i % 278 - 150) * 0.6931471805599453 + 0.34657359027997264);
    /* log: a stride of 2^20 through the positive finite floats, and sqrt(2) 2^e, e = -126 .. 127 */
    xs[2] = ffrom((uint32_t)i * 0x7f7ffu);
    xs[3] = (float)ldexp(1.4142135623730951, i % 254 - 126);
    for (int j = 0; j < 4; j++) {
      int fn = j < 2 ? FN_EXP : FN_LOG;
      float x = xs[j];
      if (fn == FN_LOG && !(x > 0.0f)) continue;
      dbtr__cr_dd v = fn == FN_EXP ? dbtr__cr_exp_dd((double)x) : dbtr__cr_log_dd((double)x);
      double e = mpfr_dd_err(x, fn, v.hi, v.lo);
      if (e > worst[fn]) {
        worst[fn] = e;
        worst_at[fn] = x;
      }
    }
  }
  printf("dd_branch_accuracy: exp within 2^%.1f (at %a), log within 2^%.1f (at %a), relative\n", worst[FN_EXP],
         (double)worst_at[FN_EXP], worst[FN_LOG], (double)worst_at[FN_LOG]);
  CHECK_LT(worst[FN_EXP], DD_BOUND_LOG2);
  CHECK_LT(worst[FN_LOG], DD_BOUND_LOG2);
}

DBTR_TEST_MAIN(expf_sampled, logf_sampled, expf_exhaustive, logf_exhaustive, exp_sh_sampled, log_sh_sampled,
               dd_branch_accuracy)
