/* recon/dd.h: double-double ("dd") arithmetic, written once for the CPU reference (C11) and
 * for CUDA device code, so that the `dd` referee precision (issue 16) gives the same bits on
 * both sides. A dbtr_dd is the unevaluated sum hi + lo of two doubles, about 106 bits.
 *
 * Every result is normalized: hi = fl(hi + lo) (rounded to nearest, ties to even), hence
 * |lo| <= ulp(hi)/2; every function assumes normalized arguments. With u = 2^-53, the
 * relative error of each operation on normalized finite arguments whose results and
 * intermediates neither overflow nor underflow is at most (docs/crmath.md, "Double-double"):
 *
 *   add, sub  3u^2/(1 - 4u)   AccurateDWPlusDW, two TwoSums (Joldes, Muller and Popescu,
 *                             "Tight and rigorous error bounds for basic building blocks of
 *                             double-word arithmetic", ACM TOMS 44(2), 2017: JMP, Alg. 6)
 *   mul       5u^2            DWTimesDW3, TwoProd by FMA (JMP Alg. 12; Muller and Rideau,
 *                             ACM TOMS 48(1), 2022, checked the product proofs in Coq)
 *   div       15u^2 + 56u^3   DWDivDW2: quotient of the high parts, one correction from the
 *                             remainder (JMP Alg. 17, with DWTimesFP1, Alg. 7)
 *   sqrt      4.2u^2          s = sqrt(hi), one correction (a - s^2)/(2s) with a - s^2 exact
 *                             by FMA (as in QD, Hida, Li and Bailey 2001; bound derived in
 *                             docs/crmath.md)
 *   exp       7.3u^2          for results from 2^-969 (where lo is still normal) to DBL_MAX
 *   log       29u^2           relative, also near a = 1
 *   floor, comparisons, conversions: exact.
 *
 * The test (tests/test_dd.c) measures each against 256-bit MPFR; the measured maxima are in
 * docs/crmath.md.
 *
 * Bitwise equality of CPU and GPU: the functions use only correctly rounded operations
 * (+ - * / and sqrt rounded to nearest, fma rounded once), exact operations (floor,
 * conversions between int and double, scaling by powers of two, comparisons) and no libm
 * transcendental, in an order fixed by the source. Double operations go through
 * recon/crmath.h's dbtr__cr_add etc. (explicit __dadd_rn in device code, which nvcc never
 * contracts into an FMA; -ffp-contract=off in C); the FMA is __fma_rn on the device and C99
 * fma() on the host, both correctly rounded. The initial approximation of log is crmath's
 * dbtr_log_sh, itself bitwise identical on both sides.
 *
 * Special values are sane and deterministic but not a contract (dbtr passes finite values):
 * exp overflows to {+inf, 0} and underflows to {0, 0}; log(0) = {-inf, 0}, log(+inf) =
 * {+inf, 0}; sqrt(+-0) = {+-0, 0}; log or sqrt of a negative number is {NaN, NaN} with the
 * fixed bits 0x7ff8000000000000, as is exp or log of a NaN. A NaN or infinity inside add,
 * mul or div gives NaN whose sign and payload bits are IEEE's to choose and may differ
 * between CPU and GPU. */
#ifndef DBTR_DD_H
#define DBTR_DD_H

#include <math.h>
#include <stdint.h>

#include "recon/crmath.h"
#include "recon/hd.h"

typedef struct {
  double hi, lo; /* value hi + lo, normalized: hi = fl(hi + lo) */
} dbtr_dd;

/* ---- Building blocks ---- */

static inline DBTR_HD dbtr_dd dbtr__dd_make(double hi, double lo) {
  dbtr_dd r;
  r.hi = hi;
  r.lo = lo;
  return r;
}
/* a * b + c rounded once: correctly rounded on both sides, so identical. */
static inline DBTR_HD double dbtr__dd_fma(double a, double b, double c) {
#ifdef __CUDA_ARCH__
  return __fma_rn(a, b, c);
#else
  return fma(a, b, c);
#endif
}
static inline DBTR_HD double dbtr__dd_sqrt1(double a) {
#ifdef __CUDA_ARCH__
  return __dsqrt_rn(a);
#else
  return sqrt(a);
#endif
}
static inline DBTR_HD dbtr_dd dbtr__dd_nan(void) {
  double n = dbtr__cr_dfrom(0x7ff8000000000000u);
  return dbtr__dd_make(n, n);
}
/* TwoSum and FastTwoSum (exact: s + e == a + b; FastTwoSum needs |a| >= |b| or a == 0). */
static inline DBTR_HD dbtr_dd dbtr__dd_two_sum(double a, double b) {
  dbtr__cr_dd t = dbtr__cr_two_sum(a, b);
  return dbtr__dd_make(t.hi, t.lo);
}
static inline DBTR_HD dbtr_dd dbtr__dd_fast_two_sum(double a, double b) {
  dbtr__cr_dd t = dbtr__cr_fast_two_sum(a, b);
  return dbtr__dd_make(t.hi, t.lo);
}
/* TwoProd by FMA: p + e == a * b exactly while nothing underflows. */
static inline DBTR_HD dbtr_dd dbtr__dd_two_prod(double a, double b) {
  double p = dbtr__cr_mul(a, b);
  return dbtr__dd_make(p, dbtr__dd_fma(a, b, -p));
}
/* a + b for a double b (JMP Alg. 4, DWPlusFP: 2u^2). */
static inline DBTR_HD dbtr_dd dbtr__dd_add_d(dbtr_dd a, double b) {
  dbtr_dd s = dbtr__dd_two_sum(a.hi, b);
  return dbtr__dd_fast_two_sum(s.hi, dbtr__cr_add(a.lo, s.lo));
}
/* a * 2^k, exact where the result is normal. */
static inline DBTR_HD dbtr_dd dbtr__dd_ldexp(dbtr_dd a, int k) {
  double s = dbtr__cr_pow2(k);
  return dbtr__dd_make(dbtr__cr_mul(a.hi, s), dbtr__cr_mul(a.lo, s));
}

/* ---- Conversions and comparisons (exact) ---- */

static inline DBTR_HD dbtr_dd dbtr_dd_of(double x) { return dbtr__dd_make(x, 0.0); }
static inline DBTR_HD dbtr_dd dbtr_dd_of_int(int i) { return dbtr__dd_make((double)i, 0.0); }
/* The nearest double: hi, since hi = fl(hi + lo); a value halfway between two doubles
 * (|lo| = ulp(hi)/2) thus rounds to even, like IEEE. */
static inline DBTR_HD double dbtr_dd_to_double(dbtr_dd a) { return a.hi; }
static inline DBTR_HD dbtr_dd dbtr_dd_neg(dbtr_dd a) { return dbtr__dd_make(-a.hi, -a.lo); }

/* Rounding to nearest is monotonic, so for normalized values hi < b.hi implies a < b, and
 * equal high parts leave the order to the low parts. A NaN makes every comparison false. */
static inline DBTR_HD int dbtr_dd_lt(dbtr_dd a, dbtr_dd b) { return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo); }
static inline DBTR_HD int dbtr_dd_le(dbtr_dd a, dbtr_dd b) { return a.hi < b.hi || (a.hi == b.hi && a.lo <= b.lo); }
static inline DBTR_HD int dbtr_dd_gt(dbtr_dd a, dbtr_dd b) { return dbtr_dd_lt(b, a); }
static inline DBTR_HD int dbtr_dd_ge(dbtr_dd a, dbtr_dd b) { return dbtr_dd_le(b, a); }
static inline DBTR_HD int dbtr_dd_eq(dbtr_dd a, dbtr_dd b) { return a.hi == b.hi && a.lo == b.lo; }
/* Whether both parts have the same bits (so -0 differs from +0), as the separable tables'
 * checks compare values (recon/separable.h). */
static inline DBTR_HD int dbtr_dd_same_bits(dbtr_dd a, dbtr_dd b) {
  return dbtr__cr_dbits(a.hi) == dbtr__cr_dbits(b.hi) && dbtr__cr_dbits(a.lo) == dbtr__cr_dbits(b.lo);
}

/* floor(hi + lo), exact. If hi is not an integer, |hi| < 2^52 and hi lies at least ulp(hi)
 * from every integer while |lo| <= ulp(hi)/2, so floor(a) = floor(hi). If hi is an integer,
 * floor(a) = hi + floor(lo), a sum of two integers that FastTwoSum renormalizes exactly. */
static inline DBTR_HD dbtr_dd dbtr_dd_floor(dbtr_dd a) {
  double fh = floor(a.hi);
  if (fh != a.hi) return dbtr__dd_make(fh, 0.0);
  return dbtr__dd_fast_two_sum(fh, floor(a.lo));
}
/* An integer-valued normalized a within int range has lo = 0 (|lo| <= ulp(hi)/2 < 1 and
 * hi + lo an integer), so the integer is hi. */
static inline DBTR_HD int dbtr_dd_to_int(dbtr_dd a) { return (int)a.hi; }

/* ---- Arithmetic ---- */

/* JMP Alg. 6 (AccurateDWPlusDW), the "IEEE" addition of QD. */
static inline DBTR_HD dbtr_dd dbtr_dd_add(dbtr_dd a, dbtr_dd b) {
  dbtr_dd s = dbtr__dd_two_sum(a.hi, b.hi), t = dbtr__dd_two_sum(a.lo, b.lo);
  s = dbtr__dd_fast_two_sum(s.hi, dbtr__cr_add(s.lo, t.hi));
  return dbtr__dd_fast_two_sum(s.hi, dbtr__cr_add(s.lo, t.lo));
}
static inline DBTR_HD dbtr_dd dbtr_dd_sub(dbtr_dd a, dbtr_dd b) { return dbtr_dd_add(a, dbtr_dd_neg(b)); }

/* JMP Alg. 12 (DWTimesDW3). */
static inline DBTR_HD dbtr_dd dbtr_dd_mul(dbtr_dd a, dbtr_dd b) {
  dbtr_dd c = dbtr__dd_two_prod(a.hi, b.hi);
  double t = dbtr__dd_fma(a.hi, b.lo, dbtr__cr_mul(a.lo, b.lo));
  t = dbtr__dd_fma(a.lo, b.hi, t);
  return dbtr__dd_fast_two_sum(c.hi, dbtr__cr_add(c.lo, t));
}

/* JMP Alg. 17 (DWDivDW2): q = a.hi / b.hi, then the remainder a - q b, formed as a.hi -
 * r.hi (exact) plus a.lo - r.lo with r = q b by DWTimesFP1 (JMP Alg. 7), corrects q. */
static inline DBTR_HD dbtr_dd dbtr_dd_div(dbtr_dd a, dbtr_dd b) {
  double q = dbtr__cr_div(a.hi, b.hi);
  dbtr_dd c = dbtr__dd_two_prod(b.hi, q);
  dbtr_dd r = dbtr__dd_fast_two_sum(c.hi, dbtr__cr_mul(b.lo, q));
  r = dbtr__dd_fast_two_sum(r.hi, dbtr__cr_add(r.lo, c.lo));
  double d = dbtr__cr_add(dbtr__cr_sub(a.hi, r.hi), dbtr__cr_sub(a.lo, r.lo));
  return dbtr__dd_fast_two_sum(q, dbtr__cr_div(d, b.hi));
}

/* s = sqrt(hi) correctly rounded; hi - s^2 is a multiple of ulp(s)^2 below 2^53 ulp(s)^2 in
 * magnitude, so one FMA gives it exactly; then sqrt(a) = s + (a - s^2)/(2s) - O(u^2 s). */
static inline DBTR_HD dbtr_dd dbtr_dd_sqrt(dbtr_dd a) {
  if (!(a.hi > 0.0)) return a.hi == 0.0 ? dbtr__dd_make(a.hi, 0.0) : dbtr__dd_nan();
  if (a.hi > 0x1.fffffffffffffp1023) return a; /* +inf */
  double s = dbtr__dd_sqrt1(a.hi);
  double r = dbtr__cr_add(dbtr__dd_fma(-s, s, a.hi), a.lo);
  return dbtr__dd_fast_two_sum(s, dbtr__cr_div(r, dbtr__cr_mul(2.0, s)));
}

/* ---- exp and log ---- */

/* 1/n! rounded to a double-double (hi = 1/n! to nearest, lo = the rest to nearest), from
 * mpmath at 400 bits; tests/test_dd.c checks each against MPFR. */
static inline DBTR_HD dbtr_dd dbtr__dd_inv_fact(int n) {
  switch (n) {
  case 3: return dbtr__dd_make(0x1.5555555555555p-3, 0x1.5555555555555p-57);
  case 4: return dbtr__dd_make(0x1.5555555555555p-5, 0x1.5555555555555p-59);
  case 5: return dbtr__dd_make(0x1.1111111111111p-7, 0x1.1111111111111p-63);
  case 6: return dbtr__dd_make(0x1.6c16c16c16c17p-10, -0x1.f49f49f49f49fp-65);
  case 7: return dbtr__dd_make(0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-73);
  case 8: return dbtr__dd_make(0x1.a01a01a01a01ap-16, 0x1.a01a01a01a01ap-76);
  case 9: return dbtr__dd_make(0x1.71de3a556c734p-19, -0x1.c154f8ddc6c00p-73);
  case 10: return dbtr__dd_make(0x1.27e4fb7789f5cp-22, 0x1.cbbc05b4fa99ap-76);
  case 11: return dbtr__dd_make(0x1.ae64567f544e4p-26, -0x1.c062e06d1f209p-80);
  case 12: return dbtr__dd_make(0x1.1eed8eff8d898p-29, -0x1.2aec959e14c06p-83);
  case 13: return dbtr__dd_make(0x1.6124613a86d09p-33, 0x1.f28e0cc748ebep-87);
  case 14: return dbtr__dd_make(0x1.93974a8c07c9dp-37, 0x1.05d6f8a2efd1fp-92);
  case 15: return dbtr__dd_make(0x1.ae7f3e733b81fp-41, 0x1.1d8656b0ee8cbp-97);
  case 16: return dbtr__dd_make(0x1.ae7f3e733b81fp-45, 0x1.1d8656b0ee8cbp-101);
  case 17: return dbtr__dd_make(0x1.952c77030ad4ap-49, 0x1.ac981465ddc6cp-103);
  case 18: return dbtr__dd_make(0x1.6827863b97d97p-53, 0x1.eec01221a8b0bp-107);
  case 19: return dbtr__dd_make(0x1.2f49b46814157p-57, 0x1.2650f61dbdcb4p-112);
  case 20: return dbtr__dd_make(0x1.e542ba4020225p-62, 0x1.ea72b4afe3c2fp-120);
  case 21: return dbtr__dd_make(0x1.71b8ef6dcf572p-66, -0x1.d043ae40c4647p-120);
  case 22: return dbtr__dd_make(0x1.0ce396db7f853p-70, -0x1.aebcdbd20331cp-124);
  case 23: return dbtr__dd_make(0x1.761b41316381ap-75, -0x1.3423c7d91404fp-130);
  default: return dbtr__dd_make(n == 2 ? 0.5 : 1.0, 0.0); /* 1/2!, 1/1! */
  }
}

/* e^r - 1 for |r| <= 0.35, with an error relative to e^r - 1: Taylor's series to r^23/23!
 * (the first omitted term is below 2^-114 |r|). The terms from r^16/16! on (below 2^-67 |r|)
 * are summed in double, the rest in double-double by Horner's rule. Without a reduction
 * r/2^m and m squarings there is no error to amplify: e^r - 1 computed this way measured
 * at most 1.5u^2 in exp, against 2.3u^2 with m = 5 and 2.4u^2 with m = 10 (docs/crmath.md). */
#define DBTR__DD_EXP_DEGREE 23
#define DBTR__DD_EXP_DD_TERMS 15
static inline DBTR_HD dbtr_dd dbtr__dd_expm1_core(dbtr_dd r) {
  double t = dbtr__dd_inv_fact(DBTR__DD_EXP_DEGREE).hi;
  DBTR_UNROLL
  for (int n = DBTR__DD_EXP_DEGREE - 1; n > DBTR__DD_EXP_DD_TERMS; n--)
    t = dbtr__cr_mad(t, r.hi, dbtr__dd_inv_fact(n).hi);
  dbtr_dd p = dbtr_dd_of(t);
  DBTR_UNROLL
  for (int n = DBTR__DD_EXP_DD_TERMS; n >= 1; n--) p = dbtr_dd_add(dbtr_dd_mul(p, r), dbtr__dd_inv_fact(n));
  return dbtr_dd_mul(p, r);
}

/* e^a = 2^k e^r, k = round(a.hi/ln2), r = a - k ln2 with ln2 = C1 + C2 + C3 (crmath.h, to
 * 2^-143 relative): a.hi - k C1 and k C2 are exact (crmath.h's dbtr__cr_exp_reduce says
 * why), so r is within 3u^2 |r| + 2^-132 of the truth. */
static inline DBTR_HD dbtr_dd dbtr_dd_exp(dbtr_dd a) {
  if (a.hi != a.hi) return dbtr__dd_nan();
  if (a.hi > 710.0) return dbtr__dd_make(dbtr__cr_dfrom(0x7ff0000000000000u), 0.0); /* e^710 > DBL_MAX */
  if (a.hi < -746.0) return dbtr__dd_make(0.0, 0.0); /* e^-746 < 2^-1075, half the least subnormal */
  double kd = dbtr__cr_sub(dbtr__cr_mad(a.hi, DBTR__CR_INV_LN2, DBTR__CR_SHIFTER), DBTR__CR_SHIFTER);
  double t = dbtr__cr_sub(a.hi, dbtr__cr_mul(kd, DBTR__CR_LN2_C1));
  dbtr_dd r = dbtr_dd_add(dbtr__dd_two_sum(t, -dbtr__cr_mul(kd, DBTR__CR_LN2_C2)),
                          dbtr__dd_two_sum(a.lo, -dbtr__cr_mul(kd, DBTR__CR_LN2_C3)));
  dbtr_dd e = dbtr__dd_add_d(dbtr__dd_expm1_core(r), 1.0);
  /* 2^k in two steps, each in range for -1076 <= k <= 1024: the first is exact, so the
   * result is rounded at most once, by the second, where it overflows or underflows. */
  int k = (int)kd, k1 = k / 2;
  e = dbtr__dd_ldexp(dbtr__dd_ldexp(e, k1), k - k1);
  if (e.hi > 0x1.fffffffffffffp1023) return dbtr__dd_make(e.hi, 0.0);
  return dbtr__dd_fast_two_sum(e.hi, e.lo); /* renormalizes a subnormal result */
}

/* log a = e ln2 + log m, a = 2^e m with sqrt(2)/2 < m.hi <= sqrt(2). One Newton step for
 * log m, y' = y + m e^-y - 1, from y = dbtr_log_sh(m.hi) + m.lo/m.hi (within about 3u |log m|,
 * |y| < 0.35; the m.lo term keeps that relative when m is within an ulp of 1). The step's
 * own error is (y - log m)^2 / 2 < 4.5u^2 (log m)^2. The correction is formed as
 * (m - 1) + m (e^-y - 1), so that it keeps its relative accuracy where m is near 1. */
static inline DBTR_HD dbtr_dd dbtr_dd_log(dbtr_dd a) {
  if (a.hi != a.hi || a.hi < 0.0) return dbtr__dd_nan();
  if (a.hi == 0.0) return dbtr__dd_make(dbtr__cr_dfrom(0xfff0000000000000u), 0.0);
  if (a.hi > 0x1.fffffffffffffp1023) return a; /* +inf */
  int e;
  double mh = dbtr__cr_add(dbtr__cr_log_split(a.hi, &e), 1.0); /* exact */
  /* lo scaled like hi, in two steps that are each in range (|e| <= 1075): exact. */
  dbtr_dd m = dbtr__dd_make(mh, dbtr__cr_mul(dbtr__cr_mul(a.lo, dbtr__cr_pow2(-(e / 2))), dbtr__cr_pow2(e / 2 - e)));
  double y = dbtr__cr_add(dbtr_log_sh(mh), dbtr__cr_div(m.lo, mh));
  dbtr_dd s = dbtr__dd_expm1_core(dbtr_dd_of(-y));
  dbtr_dd c = dbtr_dd_add(dbtr__dd_add_d(m, -1.0), dbtr_dd_mul(m, s));
  dbtr_dd l = dbtr__dd_add_d(c, y);
  double ed = (double)e;
  dbtr_dd el = dbtr__dd_fast_two_sum(dbtr__cr_mul(ed, DBTR__CR_LN2_C1), dbtr__cr_mul(ed, DBTR__CR_LN2_C2));
  el = dbtr__dd_fast_two_sum(el.hi, dbtr__cr_add(el.lo, dbtr__cr_mul(ed, DBTR__CR_LN2_C3)));
  return dbtr_dd_add(el, l);
}

#endif
