/* recon/crmath.h: the project's own exp and log, written once for the CPU reference (C11)
 * and for the CUDA `cpu-match` and `double-match` kernels, so that both give the same bits.
 *
 *   dbtr_expf_cr, dbtr_logf_cr: correctly rounded (to nearest, ties to even) for every one of
 *                               the 2^32 floats; checked exhaustively (tests/test_crmath.c).
 *   dbtr_exp_sh,  dbtr_log_sh:  double, faithful (below 1 ulp; at most 0.52 ulp measured for
 *                               exp with a normal result, 0.75 subnormal, 0.66 for log).
 *
 * Every libm (glibc, CUDA's, MSVC's) rounds exp and log differently, so neither side may call
 * one. These functions use only IEEE-754 +, -, *, /, comparisons, conversions and bit
 * manipulation, in an order fixed by the source: no libm, no FMA, no table. In device code each
 * double operation is an explicit round-to-nearest intrinsic (__dadd_rn, __dmul_rn, ...) that
 * nvcc never contracts into an FMA, and no arithmetic or comparison is done in float (which
 * -ftz=true would flush), so a .cu file compiled with --fmad=true or --use_fast_math still gets
 * the same bits (checked on an H100 for all 2^32 floats). The C side relies on
 * -ffp-contract=off and FLT_EVAL_METHOD == 0 (SSE2). The method, the constants' origin and the
 * measured results are in docs/crmath.md.
 *
 * NaN handling is fixed bit for bit, because a GPU does not propagate NaN payloads as x86
 * does: a NaN argument comes back with its quiet bit set, and log of a negative number is the
 * positive quiet NaN 0x7fc00000 (float) or 0x7ff8000000000000 (double). */
#ifndef DBTR_CRMATH_H
#define DBTR_CRMATH_H

#include <stdint.h>
#include <string.h>

#include "recon/hd.h"

/* ---- Basic operations, each rounded once to nearest, never fused. ---- */

static inline DBTR_HD double dbtr__cr_add(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
static inline DBTR_HD double dbtr__cr_sub(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
static inline DBTR_HD double dbtr__cr_mul(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
static inline DBTR_HD double dbtr__cr_div(double a, double b) {
#ifdef __CUDA_ARCH__
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
/* a * b + c with two roundings: one Horner step. */
static inline DBTR_HD double dbtr__cr_mad(double a, double b, double c) { return dbtr__cr_add(dbtr__cr_mul(a, b), c); }

static inline DBTR_HD uint64_t dbtr__cr_dbits(double x) {
#ifdef __CUDA_ARCH__
  return (uint64_t)__double_as_longlong(x);
#else
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
#endif
}
static inline DBTR_HD double dbtr__cr_dfrom(uint64_t u) {
#ifdef __CUDA_ARCH__
  return __longlong_as_double((long long)u);
#else
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
#endif
}
static inline DBTR_HD uint32_t dbtr__cr_fbits(float x) {
#ifdef __CUDA_ARCH__
  return (uint32_t)__float_as_uint(x);
#else
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
#endif
}
static inline DBTR_HD float dbtr__cr_ffrom(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
#endif
}
/* 2^k for -1022 <= k <= 1023, built from its bits. */
static inline DBTR_HD double dbtr__cr_pow2(int k) { return dbtr__cr_dfrom((uint64_t)(k + 1023) << 52); }

/* Conversions between float and double that give the same bits under any nvcc flags. CUDA's
 * own conversions flush subnormal floats to zero under -ftz=true (--use_fast_math), so the
 * subnormal floats go through integers and double arithmetic, which never flushes. */
static inline DBTR_HD double dbtr__cr_f2d(float x) {
  uint32_t u = dbtr__cr_fbits(x);
  if ((u & 0x7f800000u) == 0) { /* zero or subnormal: (significand) 2^-149, exactly */
    double m = dbtr__cr_mul((double)(u & 0x007fffffu), 0x1p-149);
    return (u >> 31) ? -m : m;
  }
  return (double)x; /* exact */
}
/* To nearest, ties to even, for a non-NaN x. */
static inline DBTR_HD float dbtr__cr_d2f(double x) {
  uint32_t sign = (uint32_t)(dbtr__cr_dbits(x) >> 63) << 31;
  double ax = sign ? -x : x;
  if (ax < 0x1p-126) {
    /* A subnormal float is (integer) 2^-149; ax 2^149 < 2^23 is exact, and adding and removing
     * 1.5 2^52 rounds it to an integer, ties to even. 2^23 itself is the bits of FLT_MIN. */
    double m = dbtr__cr_sub(dbtr__cr_add(dbtr__cr_mul(ax, 0x1p149), 0x1.8p52), 0x1.8p52);
    return dbtr__cr_ffrom(sign | (uint32_t)m);
  }
#ifdef __CUDA_ARCH__
  return __double2float_rn(x);
#else
  return (float)x;
#endif
}

/* ---- Double-double arithmetic (hi + lo, |lo| <= ulp(hi)/2), error-free transforms. ---- */

typedef struct {
  double hi, lo;
} dbtr__cr_dd;

/* Knuth's TwoSum: s + e == a + b exactly, for any a, b. */
static inline DBTR_HD dbtr__cr_dd dbtr__cr_two_sum(double a, double b) {
  dbtr__cr_dd r;
  r.hi = dbtr__cr_add(a, b);
  double bb = dbtr__cr_sub(r.hi, a);
  r.lo = dbtr__cr_add(dbtr__cr_sub(a, dbtr__cr_sub(r.hi, bb)), dbtr__cr_sub(b, bb));
  return r;
}
/* Dekker's FastTwoSum: exact when |a| >= |b| (or a == 0). */
static inline DBTR_HD dbtr__cr_dd dbtr__cr_fast_two_sum(double a, double b) {
  dbtr__cr_dd r;
  r.hi = dbtr__cr_add(a, b);
  r.lo = dbtr__cr_sub(b, dbtr__cr_sub(r.hi, a));
  return r;
}
/* Dekker's TwoProduct with Veltkamp's split (2^27 + 1): p + e == a * b exactly while nothing
 * underflows, without an FMA. */
static inline DBTR_HD dbtr__cr_dd dbtr__cr_two_prod(double a, double b) {
  double ca = dbtr__cr_mul(134217729.0, a), cb = dbtr__cr_mul(134217729.0, b);
  double ah = dbtr__cr_sub(ca, dbtr__cr_sub(ca, a)), bh = dbtr__cr_sub(cb, dbtr__cr_sub(cb, b));
  double al = dbtr__cr_sub(a, ah), bl = dbtr__cr_sub(b, bh);
  dbtr__cr_dd r;
  r.hi = dbtr__cr_mul(a, b);
  double e = dbtr__cr_sub(dbtr__cr_mul(ah, bh), r.hi);
  e = dbtr__cr_add(e, dbtr__cr_mul(ah, bl));
  e = dbtr__cr_add(e, dbtr__cr_mul(al, bh));
  r.lo = dbtr__cr_add(e, dbtr__cr_mul(al, bl));
  return r;
}
static inline DBTR_HD dbtr__cr_dd dbtr__cr_dd_add(dbtr__cr_dd a, dbtr__cr_dd b) {
  dbtr__cr_dd s = dbtr__cr_two_sum(a.hi, b.hi), t = dbtr__cr_two_sum(a.lo, b.lo);
  s = dbtr__cr_fast_two_sum(s.hi, dbtr__cr_add(s.lo, t.hi));
  return dbtr__cr_fast_two_sum(s.hi, dbtr__cr_add(s.lo, t.lo));
}
static inline DBTR_HD dbtr__cr_dd dbtr__cr_dd_mul(dbtr__cr_dd a, dbtr__cr_dd b) {
  dbtr__cr_dd p = dbtr__cr_two_prod(a.hi, b.hi);
  double e = dbtr__cr_add(p.lo, dbtr__cr_add(dbtr__cr_mul(a.hi, b.lo), dbtr__cr_mul(a.lo, b.hi)));
  return dbtr__cr_fast_two_sum(p.hi, e);
}
/* One double-double Horner step: p * x + (c_hi + c_lo). */
static inline DBTR_HD dbtr__cr_dd dbtr__cr_dd_step(dbtr__cr_dd p, dbtr__cr_dd x, double c_hi, double c_lo) {
  dbtr__cr_dd c;
  c.hi = c_hi;
  c.lo = c_lo;
  return dbtr__cr_dd_add(dbtr__cr_dd_mul(p, x), c);
}

/* Rounds hi + lo (normalised, hi a nonzero normal double) to the nearest float, ties to even,
 * including the subnormal floats and the overflow to infinity. hi is first rounded to odd
 * toward lo: a double whose last bit is 1 is never halfway between two floats (those
 * midpoints have at most 25 significant bits), and no midpoint lies between it and hi + lo,
 * so converting it rounds as hi + lo itself would (53 >= 24 + 2 bits, Boldo-Melquiond). */
static inline DBTR_HD float dbtr__cr_dd_to_float(dbtr__cr_dd v) {
  uint64_t b = dbtr__cr_dbits(v.hi);
  if (v.lo != 0.0 && (b & 1u) == 0) {
    int away = (v.lo > 0.0) == (v.hi > 0.0); /* lo increases |hi + lo| */
    b = away ? b + 1u : b - 1u;
  }
  return dbtr__cr_d2f(dbtr__cr_dfrom(b));
}

/* ---- Constants (docs/crmath.md says where they come from). ---- */

/* ln 2 = C1 + C2 + C3 to 2^-130 relative. C1 and C2 have 42 significant bits, so k * C1 and
 * k * C2 are exact for |k| < 2^11, which covers every exponent of a double. */
#define DBTR__CR_LN2_C1 0x1.62e42fefa3800p-1
#define DBTR__CR_LN2_C2 0x1.ef35793c76800p-45
#define DBTR__CR_LN2_C3 (-0x1.9ff0342542fc3p-90)
#define DBTR__CR_LN2_C23 0x1.ef35793c7673p-45 /* C2 + C3 rounded to double */
#define DBTR__CR_INV_LN2 0x1.71547652b82fep+0
#define DBTR__CR_SHIFTER 0x1.8p52 /* adding and removing it rounds to an integer */

/* ---- exp ---- */

/* x = k ln2 + r, |r| <= ln2/2 (plus a few ulps where x/ln2 lies near a half-integer), for
 * |x| <= 746. Returns k; r = r->hi + r->lo within 2^-106 of x - k ln2. x - k*C1 is exact:
 * k*C1 is a multiple of 2^-42 and so of ulp(x) (|x| < 2^11), and the difference, a multiple
 * of ulp(x) no larger than about |x|, fits in 53 bits. k*C2 and TwoSum are exact; only k*C3
 * (below 2^-78) and its subtraction from t.lo (error below 2^-107) are rounded. */
static inline DBTR_HD int dbtr__cr_exp_reduce(double x, dbtr__cr_dd *r) {
  double kd = dbtr__cr_sub(dbtr__cr_mad(x, DBTR__CR_INV_LN2, DBTR__CR_SHIFTER), DBTR__CR_SHIFTER);
  double t1 = dbtr__cr_sub(x, dbtr__cr_mul(kd, DBTR__CR_LN2_C1));
  dbtr__cr_dd t = dbtr__cr_two_sum(t1, -dbtr__cr_mul(kd, DBTR__CR_LN2_C2));
  *r = dbtr__cr_fast_two_sum(t.hi, dbtr__cr_sub(t.lo, dbtr__cr_mul(kd, DBTR__CR_LN2_C3)));
  return (int)kd;
}

/* exp(r) for |r| < 0.3466, as 1 + r + r^2/2 + r^3 q(r) with q the Taylor series from 1/3!
 * to 1/14! (truncation below 2^-62 relative). The three leading terms are added exactly
 * and the rest (below 0.008) in double, so the result is within 0.52 ulp before scaling. */
static inline DBTR_HD double dbtr__cr_exp_core(dbtr__cr_dd r) {
  double x = r.hi;
  double q = 0x1.93974a8c07c9dp-37; /* 1/14! */
  q = dbtr__cr_mad(q, x, 0x1.6124613a86d09p-33);
  q = dbtr__cr_mad(q, x, 0x1.1eed8eff8d898p-29);
  q = dbtr__cr_mad(q, x, 0x1.ae64567f544e4p-26);
  q = dbtr__cr_mad(q, x, 0x1.27e4fb7789f5cp-22);
  q = dbtr__cr_mad(q, x, 0x1.71de3a556c734p-19);
  q = dbtr__cr_mad(q, x, 0x1.a01a01a01a01ap-16);
  q = dbtr__cr_mad(q, x, 0x1.a01a01a01a01ap-13);
  q = dbtr__cr_mad(q, x, 0x1.6c16c16c16c17p-10);
  q = dbtr__cr_mad(q, x, 0x1.1111111111111p-7);
  q = dbtr__cr_mad(q, x, 0x1.5555555555555p-5);
  q = dbtr__cr_mad(q, x, 0x1.5555555555555p-3); /* 1/3! */
  dbtr__cr_dd x2 = dbtr__cr_two_prod(x, x);
  double half_x2 = dbtr__cr_mul(0.5, x2.hi);
  /* r.lo enters through exp(hi + lo) = exp(hi) (1 + lo), with exp(hi) ~ 1 + hi + hi^2/2. */
  double lo_term = dbtr__cr_mul(r.lo, dbtr__cr_add(dbtr__cr_add(1.0, x), half_x2));
  double small = dbtr__cr_add(dbtr__cr_mul(dbtr__cr_mul(x2.hi, x), q), dbtr__cr_add(dbtr__cr_mul(0.5, x2.lo), lo_term));
  dbtr__cr_dd a = dbtr__cr_fast_two_sum(1.0, x);
  dbtr__cr_dd b = dbtr__cr_two_sum(a.hi, half_x2);
  return dbtr__cr_add(b.hi, dbtr__cr_add(dbtr__cr_add(a.lo, b.lo), small));
}

/* e^x in double, faithful. */
static inline DBTR_HD double dbtr_exp_sh(double x) {
  if (x != x) return dbtr__cr_dfrom(dbtr__cr_dbits(x) | 0x0008000000000000u);
  if (x > 710.0) return dbtr__cr_dfrom(0x7ff0000000000000u); /* e^710 > DBL_MAX; also +inf */
  if (x < -746.0) return 0.0; /* e^-746 < 2^-1075, half the smallest subnormal; also -inf */
  dbtr__cr_dd r;
  int k = dbtr__cr_exp_reduce(x, &r);
  double p = dbtr__cr_exp_core(r);
  /* Scale in two steps where 2^k is out of range: the first is exact, so a result that
   * overflows or becomes subnormal is rounded once, by the second. */
  if (k > 1023) return dbtr__cr_mul(dbtr__cr_mul(p, dbtr__cr_pow2(k - 1)), 2.0);
  if (k < -1000) return dbtr__cr_mul(dbtr__cr_mul(p, dbtr__cr_pow2(k + 200)), 0x1p-200);
  return dbtr__cr_mul(p, dbtr__cr_pow2(k));
}

/* exp(x) as a double-double within about 2^-100 relative, for a float x whose result is a
 * normal double (-104 <= x <= 89): the rare near-midpoint branch of dbtr_expf_cr. Taylor
 * series to 1/21! (truncation below 2^-103 for |r| <= 0.347); terms from 1/14! on are below
 * 2^-57 and are summed in double, the rest in double-double. */
static inline DBTR_HD dbtr__cr_dd dbtr__cr_exp_dd(double x) {
  dbtr__cr_dd r;
  int k = dbtr__cr_exp_reduce(x, &r);
  double t = 0x1.71b8ef6dcf572p-66; /* 1/21! */
  t = dbtr__cr_mad(t, r.hi, 0x1.e542ba4020225p-62);
  t = dbtr__cr_mad(t, r.hi, 0x1.2f49b46814157p-57);
  t = dbtr__cr_mad(t, r.hi, 0x1.6827863b97d97p-53);
  t = dbtr__cr_mad(t, r.hi, 0x1.952c77030ad4ap-49);
  t = dbtr__cr_mad(t, r.hi, 0x1.ae7f3e733b81fp-45);
  t = dbtr__cr_mad(t, r.hi, 0x1.ae7f3e733b81fp-41);
  t = dbtr__cr_mad(t, r.hi, 0x1.93974a8c07c9dp-37); /* 1/14! */
  dbtr__cr_dd p;
  p.hi = t;
  p.lo = 0.0;
  p = dbtr__cr_dd_step(p, r, 0x1.6124613a86d09p-33, 0x1.f28e0cc748ebep-87); /* 1/13! */
  p = dbtr__cr_dd_step(p, r, 0x1.1eed8eff8d898p-29, -0x1.2aec959e14c06p-83);
  p = dbtr__cr_dd_step(p, r, 0x1.ae64567f544e4p-26, -0x1.c062e06d1f209p-80);
  p = dbtr__cr_dd_step(p, r, 0x1.27e4fb7789f5cp-22, 0x1.cbbc05b4fa99ap-76);
  p = dbtr__cr_dd_step(p, r, 0x1.71de3a556c734p-19, -0x1.c154f8ddc6c00p-73);
  p = dbtr__cr_dd_step(p, r, 0x1.a01a01a01a01ap-16, 0x1.a01a01a01a01ap-76);
  p = dbtr__cr_dd_step(p, r, 0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-73);
  p = dbtr__cr_dd_step(p, r, 0x1.6c16c16c16c17p-10, -0x1.f49f49f49f49fp-65);
  p = dbtr__cr_dd_step(p, r, 0x1.1111111111111p-7, 0x1.1111111111111p-63);
  p = dbtr__cr_dd_step(p, r, 0x1.5555555555555p-5, 0x1.5555555555555p-59);
  p = dbtr__cr_dd_step(p, r, 0x1.5555555555555p-3, 0x1.5555555555555p-57); /* 1/3! */
  p = dbtr__cr_dd_step(p, r, 0.5, 0.0);
  p = dbtr__cr_dd_step(p, r, 1.0, 0.0);
  p = dbtr__cr_dd_step(p, r, 1.0, 0.0);
  double s = dbtr__cr_pow2(k); /* -151 <= k <= 129: exact scaling */
  p.hi = dbtr__cr_mul(p.hi, s);
  p.lo = dbtr__cr_mul(p.lo, s);
  return p;
}

/* The double result y of the fast path (dbtr_exp_sh or dbtr_log_sh) is within 0.66 ulp
 * (2^-52.4 relative) of the true value; the test allows 2^-51, 2.6 times that, which also
 * covers the roundings of y +- e. If y - e and y + e round to the same float, so does the
 * true value, which lies between them; otherwise the true value may be within 2^-51 of a
 * float midpoint and the double-double branch decides. */
#define DBTR__CR_FAST_EPS 0x1p-51

/* e^x in float, correctly rounded to nearest for every float x. */
static inline DBTR_HD float dbtr_expf_cr(float x) {
  /* Tests on the bits and in double: float comparisons would flush subnormals under -ftz. */
  uint32_t u = dbtr__cr_fbits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return dbtr__cr_ffrom(u | 0x00400000u); /* NaN */
  double xd = dbtr__cr_f2d(x);
  if (xd > 89.0) return dbtr__cr_ffrom(0x7f800000u); /* e^89 > FLT_MAX; also +inf */
  if (xd < -104.0) return dbtr__cr_ffrom(0u);       /* e^-104 < 2^-150, half the smallest subnormal */
  double y = dbtr_exp_sh(xd);
  double e = dbtr__cr_mul(y, DBTR__CR_FAST_EPS);
  float a = dbtr__cr_d2f(dbtr__cr_sub(y, e)), b = dbtr__cr_d2f(dbtr__cr_add(y, e));
  if (dbtr__cr_fbits(a) == dbtr__cr_fbits(b)) return a;
  return dbtr__cr_dd_to_float(dbtr__cr_exp_dd(xd));
}

/* ---- log ---- */

/* Splits a positive finite double x = 2^e m with sqrt(2)/2 < m <= sqrt(2); returns m - 1,
 * which is exact (Sterbenz). Subnormals are first scaled by 2^54, exactly. */
static inline DBTR_HD double dbtr__cr_log_split(double x, int *e) {
  int adj = 0;
  if (x < 0x1p-1022) {
    x = dbtr__cr_mul(x, 0x1p54);
    adj = -54;
  }
  uint64_t b = dbtr__cr_dbits(x);
  uint64_t frac = b & 0x000fffffffffffffu;
  *e = (int)(b >> 52) - 1023 + adj;
  if (frac > 0x6a09e667f3bcdu) { /* the fraction bits of sqrt(2) */
    *e += 1;
    return dbtr__cr_sub(dbtr__cr_dfrom(frac | 0x3fe0000000000000u), 1.0);
  }
  return dbtr__cr_sub(dbtr__cr_dfrom(frac | 0x3ff0000000000000u), 1.0);
}

/* log x in double, faithful. With f = m - 1, s = f/(2+f): log(1+f) = 2 atanh(s)
 *   = f - f^2/2 + s (f^2/2 + R),  R = sum_{k=1..11} 2 s^(2k)/(2k+1)
 * (fdlibm's arrangement; |s| <= 0.1716, truncation below 2^-65 relative). f, f^2/2 and
 * e ln2 are summed exactly in double-double; only the small term s (f^2/2 + R) is rounded. */
static inline DBTR_HD double dbtr_log_sh(double x) {
  if (x != x) return dbtr__cr_dfrom(dbtr__cr_dbits(x) | 0x0008000000000000u);
  if (x < 0.0) return dbtr__cr_dfrom(0x7ff8000000000000u);
  if (x == 0.0) return dbtr__cr_dfrom(0xfff0000000000000u);
  if (x > 0x1.fffffffffffffp1023) return x; /* +inf */
  int e;
  double f = dbtr__cr_log_split(x, &e);
  dbtr__cr_dd hf = dbtr__cr_two_prod(f, f);
  hf.hi = dbtr__cr_mul(hf.hi, 0.5);
  hf.lo = dbtr__cr_mul(hf.lo, 0.5);
  double s = dbtr__cr_div(f, dbtr__cr_add(2.0, f));
  double z = dbtr__cr_mul(s, s);
  double R = 0x1.642c8590b2164p-4; /* 2/23 */
  R = dbtr__cr_mad(R, z, 0x1.8618618618618p-4);
  R = dbtr__cr_mad(R, z, 0x1.af286bca1af28p-4);
  R = dbtr__cr_mad(R, z, 0x1.e1e1e1e1e1e1ep-4);
  R = dbtr__cr_mad(R, z, 0x1.1111111111111p-3);
  R = dbtr__cr_mad(R, z, 0x1.3b13b13b13b14p-3);
  R = dbtr__cr_mad(R, z, 0x1.745d1745d1746p-3);
  R = dbtr__cr_mad(R, z, 0x1.c71c71c71c71cp-3);
  R = dbtr__cr_mad(R, z, 0x1.2492492492492p-2);
  R = dbtr__cr_mad(R, z, 0x1.999999999999ap-2);
  R = dbtr__cr_mad(R, z, 0x1.5555555555555p-1); /* 2/3 */
  R = dbtr__cr_mul(R, z);
  double t = dbtr__cr_mul(s, dbtr__cr_add(hf.hi, R));
  double ed = (double)e;
  dbtr__cr_dd a = dbtr__cr_two_sum(dbtr__cr_mul(ed, DBTR__CR_LN2_C1), f);
  dbtr__cr_dd b = dbtr__cr_two_sum(a.hi, -hf.hi);
  double small = dbtr__cr_add(dbtr__cr_sub(t, hf.lo), dbtr__cr_mul(ed, DBTR__CR_LN2_C23));
  return dbtr__cr_add(b.hi, dbtr__cr_add(dbtr__cr_add(a.lo, b.lo), small));
}

/* log x as a double-double within about 2^-100 relative, for a positive finite float x: the
 * rare near-midpoint branch of dbtr_logf_cr. 2 + f is exact for a float's f, so s = f/(2+f)
 * is formed as a double-double by one correction step; then log(1+f) = s P(s^2) with
 * P(z) = sum_{k=0..18} 2 z^k/(2k+1) (truncation below 2^-101), the terms from k = 9 on
 * (below 2^-50 relative) in double, the rest in double-double. */
static inline DBTR_HD dbtr__cr_dd dbtr__cr_log_dd(double x) {
  int e;
  double f = dbtr__cr_log_split(x, &e);
  double d = dbtr__cr_add(2.0, f);
  dbtr__cr_dd s;
  s.hi = dbtr__cr_div(f, d);
  dbtr__cr_dd q = dbtr__cr_two_prod(s.hi, d); /* s.hi d + the residual, exactly */
  s.lo = dbtr__cr_div(dbtr__cr_sub(dbtr__cr_sub(f, q.hi), q.lo), d);
  s = dbtr__cr_fast_two_sum(s.hi, s.lo);
  dbtr__cr_dd z = dbtr__cr_dd_mul(s, s);
  double t = 0x1.bacf914c1bad0p-5; /* 2/37 */
  t = dbtr__cr_mad(t, z.hi, 0x1.d41d41d41d41dp-5);
  t = dbtr__cr_mad(t, z.hi, 0x1.f07c1f07c1f08p-5);
  t = dbtr__cr_mad(t, z.hi, 0x1.0842108421084p-4);
  t = dbtr__cr_mad(t, z.hi, 0x1.1a7b9611a7b96p-4);
  t = dbtr__cr_mad(t, z.hi, 0x1.2f684bda12f68p-4);
  t = dbtr__cr_mad(t, z.hi, 0x1.47ae147ae147bp-4);
  t = dbtr__cr_mad(t, z.hi, 0x1.642c8590b2164p-4);
  t = dbtr__cr_mad(t, z.hi, 0x1.8618618618618p-4);
  t = dbtr__cr_mad(t, z.hi, 0x1.af286bca1af28p-4); /* 2/19 */
  dbtr__cr_dd p;
  p.hi = t;
  p.lo = 0.0;
  p = dbtr__cr_dd_step(p, z, 0x1.e1e1e1e1e1e1ep-4, 0x1.e1e1e1e1e1e1ep-60); /* 2/17 */
  p = dbtr__cr_dd_step(p, z, 0x1.1111111111111p-3, 0x1.1111111111111p-59);
  p = dbtr__cr_dd_step(p, z, 0x1.3b13b13b13b14p-3, -0x1.3b13b13b13b14p-57);
  p = dbtr__cr_dd_step(p, z, 0x1.745d1745d1746p-3, -0x1.745d1745d1746p-58);
  p = dbtr__cr_dd_step(p, z, 0x1.c71c71c71c71cp-3, 0x1.c71c71c71c71cp-57);
  p = dbtr__cr_dd_step(p, z, 0x1.2492492492492p-2, 0x1.2492492492492p-56);
  p = dbtr__cr_dd_step(p, z, 0x1.999999999999ap-2, -0x1.999999999999ap-56);
  p = dbtr__cr_dd_step(p, z, 0x1.5555555555555p-1, 0x1.5555555555555p-55); /* 2/3 */
  p = dbtr__cr_dd_step(p, z, 2.0, 0.0);
  p = dbtr__cr_dd_mul(p, s);
  double ed = (double)e;
  dbtr__cr_dd l = dbtr__cr_fast_two_sum(dbtr__cr_mul(ed, DBTR__CR_LN2_C1), dbtr__cr_mul(ed, DBTR__CR_LN2_C2));
  l.lo = dbtr__cr_add(l.lo, dbtr__cr_mul(ed, DBTR__CR_LN2_C3));
  return dbtr__cr_dd_add(l, p);
}

/* log x in float, correctly rounded to nearest for every float x. */
static inline DBTR_HD float dbtr_logf_cr(float x) {
  uint32_t u = dbtr__cr_fbits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return dbtr__cr_ffrom(u | 0x00400000u); /* NaN */
  if ((u & 0x7fffffffu) == 0) return dbtr__cr_ffrom(0xff800000u);             /* log +-0 = -inf */
  if (u >> 31) return dbtr__cr_ffrom(0x7fc00000u);                            /* negative */
  if (u == 0x7f800000u) return x;                                             /* log +inf = +inf */
  double xd = dbtr__cr_f2d(x);
  double y = dbtr_log_sh(xd);
  double e = dbtr__cr_mul(y < 0.0 ? -y : y, DBTR__CR_FAST_EPS);
  float a = dbtr__cr_d2f(dbtr__cr_sub(y, e)), b = dbtr__cr_d2f(dbtr__cr_add(y, e));
  if (dbtr__cr_fbits(a) == dbtr__cr_fbits(b)) return a;
  return dbtr__cr_dd_to_float(dbtr__cr_log_dd(xd));
}

#endif
