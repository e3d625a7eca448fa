/* kernels/modes.h: the arithmetic of each floating-point mode (docs/modes.md), selected by
 * DBTR_MODE_ID when kernels/backend_mode.cu is compiled. Each mode defines the element
 * type and the operations recon/proj_impl.h is written in; the nvcc flags that go with each
 * (contraction, FTZ, division and sqrt precision) are set in kernels/CMakeLists.txt. */
#ifndef DBTR_KERNELS_MODES_H
#define DBTR_KERNELS_MODES_H

/* Ray records are 4 elements, 16-byte aligned (rays + 4 p from one cudaMalloc): one
 * vector load per record in float, two in double. */
#define DBTR_LOAD_RAY_F(d, s)                          \
  do {                                                 \
    float4 t_ = __ldg((const float4 *)(s));            \
    (d)[0] = t_.x, (d)[1] = t_.y, (d)[2] = t_.z, (d)[3] = t_.w; \
  } while (0)
#define DBTR_LOAD_RAY_D(d, s)                                                \
  do {                                                                       \
    double2 a_ = __ldg((const double2 *)(s)), b_ = __ldg((const double2 *)(s) + 1); \
    (d)[0] = a_.x, (d)[1] = a_.y, (d)[2] = b_.x, (d)[3] = b_.y;             \
  } while (0)

/* A pixel's pair (e1, e2) is 2 elements, and a row of group weights or a voxel column's slot
 * weights 4 (recon/rays.h), each aligned to its size: one vector load each in float, one or
 * two in double. */
#define DBTR_LOAD_PAIR_F(a, b, s)                       \
  do {                                                  \
    float2 t_ = __ldg((const float2 *)(s));             \
    (a) = t_.x, (b) = t_.y;                             \
  } while (0)
#define DBTR_LOAD_PAIR_D(a, b, s)                       \
  do {                                                  \
    double2 t_ = __ldg((const double2 *)(s));           \
    (a) = t_.x, (b) = t_.y;                             \
  } while (0)
#define DBTR_LOAD4_F(d, s) DBTR_LOAD_RAY_F(d, s)
#define DBTR_LOAD4_D(d, s) DBTR_LOAD_RAY_D(d, s)

/* Each mode (and each single-change variant that `dbtr validate --explain` uses to
 * attribute a difference to one cause) is a choice of five things: the type, whether
 * products and sums are plain operators (which nvcc may contract into FMA under -fmad=true)
 * or explicitly rounded (__fmul_rn, ...), the division, the exp, and the sqrt. The flags in
 * kernels/CMakeLists.txt add FTZ and the compiler's own division/sqrt precision. */
#if DBTR_MODE_ID == 0 /* fast */
#define MODE_NAME fast
#define MODE_FLOAT 1
#define MODE_PLAIN_OPS 1
#define MODE_DIV_APPROX 1
#define MODE_EXP_FAST 1
#elif DBTR_MODE_ID == 1 /* ieee */
#define MODE_NAME ieee
#define MODE_FLOAT 1
#define MODE_PLAIN_OPS 1
#define MODE_EXP_LIBM 1
#elif DBTR_MODE_ID == 2 /* cpu-match */
#define MODE_NAME cpu_match
#define MODE_FLOAT 1
#elif DBTR_MODE_ID == 3 /* double */
#define MODE_NAME double
#define MODE_PLAIN_OPS 1
#define MODE_EXP_LIBM 1
#elif DBTR_MODE_ID == 4 /* double-match */
#define MODE_NAME double_match
#elif DBTR_MODE_ID == 5 /* cpu-match with FMA contraction */
#define MODE_NAME cpu_match_fma
#define MODE_FLOAT 1
#define MODE_PLAIN_OPS 1
#define MODE_DIV_RN 1
#define MODE_SQRT_RN 1
#elif DBTR_MODE_ID == 6 /* cpu-match with approximate division */
#define MODE_NAME cpu_match_approx_div
#define MODE_FLOAT 1
#define MODE_DIV_APPROX 1
#elif DBTR_MODE_ID == 7 /* cpu-match with CUDA's expf */
#define MODE_NAME cpu_match_libm_exp
#define MODE_FLOAT 1
#define MODE_EXP_LIBM 1
#elif DBTR_MODE_ID == 8 /* cpu-match with __expf */
#define MODE_NAME cpu_match_fast_exp
#define MODE_FLOAT 1
#define MODE_EXP_FAST 1
#elif DBTR_MODE_ID == 9 /* cpu-match with denormals flushed to zero (nvcc -ftz=true) */
#define MODE_NAME cpu_match_ftz
#define MODE_FLOAT 1
#elif DBTR_MODE_ID == 10 /* double-match with FMA contraction */
#define MODE_NAME double_match_fma
#define MODE_PLAIN_OPS 1
#define MODE_DIV_RN 1
#define MODE_SQRT_RN 1
#elif DBTR_MODE_ID == 11 /* double-match with CUDA's exp */
#define MODE_NAME double_match_libm_exp
#define MODE_EXP_LIBM 1
#else
#error "DBTR_MODE_ID must be 0..11"
#endif

#ifdef MODE_FLOAT
#define MODE_T float
#define MODE_VIEW dbtr_view_f
#define MODE_FOOT dbtr_footprint_f
#define MODE_CROSS dbtr_cross_f
#define MODE_SLOTW dbtr_slotw_f
#define MODE_GROUPW dbtr_groupw_f
#define MODE_LOAD_RAY DBTR_LOAD_RAY_F
#define MODE_LOAD_PAIR DBTR_LOAD_PAIR_F
#define MODE_LOAD4 DBTR_LOAD4_F
#define MODE_RN(op) __f##op##_rn
#else
#define MODE_T double
#define MODE_VIEW dbtr_view_d
#define MODE_FOOT dbtr_footprint_d
#define MODE_CROSS dbtr_cross_d
#define MODE_SLOTW dbtr_slotw_d
#define MODE_GROUPW dbtr_groupw_d
#define MODE_LOAD_RAY DBTR_LOAD_RAY_D
#define MODE_LOAD_PAIR DBTR_LOAD_PAIR_D
#define MODE_LOAD4 DBTR_LOAD4_D
#define MODE_RN(op) __d##op##_rn
#endif

#ifdef MODE_PLAIN_OPS
#define DBTR_MUL(a, b) ((a) * (b))
#define DBTR_ADD(a, b) ((a) + (b))
#define DBTR_SUB(a, b) ((a) - (b))
#else
#define DBTR_MUL(a, b) MODE_RN(mul)((a), (b))
#define DBTR_ADD(a, b) MODE_RN(add)((a), (b))
#define DBTR_SUB(a, b) MODE_RN(sub)((a), (b))
#endif

/* Division: approximate (__fdividef), or correctly rounded, either explicitly (__fdiv_rn)
 * or as the operator under -prec-div=true (ieee, double). */
#if defined(MODE_DIV_APPROX)
#define DBTR_DIV(a, b) __fdividef((a), (b))
#elif defined(MODE_PLAIN_OPS) && !defined(MODE_DIV_RN)
#define DBTR_DIV(a, b) ((a) / (b))
#else
#define DBTR_DIV(a, b) MODE_RN(div)((a), (b))
#endif

#if defined(MODE_PLAIN_OPS) && !defined(MODE_SQRT_RN)
#define DBTR_SQRT(a) sqrt(a)
#else
#define DBTR_SQRT(a) MODE_RN(sqrt)(a)
#endif

/* floor_int (recon/proj_impl.h): the hardware floor and conversion. The additions-only
 * version, the CPU's, measured 14% slower in fast on the H100 (docs/performance.md). */
#define DBTR_FLOOR_BY_SHIFT 0

#ifdef MODE_FLOAT
#define DBTR_FLOOR(a) floorf(a)
#if defined(MODE_EXP_FAST)
#define DBTR_EXP(a) __expf(a)
#elif defined(MODE_EXP_LIBM)
#define DBTR_EXP(a) expf(a)
#else
#define DBTR_EXP(a) dbtr_expf_cr(a)
#endif
#else
#define DBTR_FLOOR(a) floor(a)
#if defined(MODE_EXP_LIBM)
#define DBTR_EXP(a) exp(a)
#else
#define DBTR_EXP(a) dbtr_exp_sh(a)
#endif
#endif

#endif
