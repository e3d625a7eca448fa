/* kernels/modes.h: the arithmetic of one floating-point mode (docs/modes.md), the one
 * kernels/mode_kernels.cu is being compiled for. Each mode is a row of recon/modes.def;
 * kernels/CMakeLists.txt (and kernels/ptx_audit.sh, which compiles what the build compiles)
 * pass the row's columns as DBTR_ROW_ID, DBTR_ROW_PREC, DBTR_ROW_ARITH, DBTR_ROW_DIV,
 * DBTR_ROW_SQRT, DBTR_ROW_EXP and DBTR_ROW_GATHER, with the row's nvcc flags (contraction, FTZ,
 * division and sqrt precision). This header turns the columns into the element type and the
 * operations recon/proj_impl.h is written in, and the separable gather's order: one definition
 * for each value a column takes, so that a mode is a row, and a new kind of operation is a new
 * value here. */
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
 * two in double. The gathers read the pairs with plain loads (LDG.E.64, .128), not through
 * __ldg's read-only path (LDG.E.64.CONSTANT): the same bits, and on one H100 the thesis
 * separable back projection went from 5.23 to 5.05 ms in fast and 5.61 to 5.41 in cpu-match
 * (double 10.14, unchanged), and the per-pixel one (turned detectors) from 74.3 to 59.8 ms in
 * double (fast 43.2, unchanged). The tables' and the ray records' loads stay read-only: plain,
 * double's separable gather was slower (10.36 ms), and the per-pixel one 43.2 -> 47.4 ms in
 * fast and 59.8 -> 78.2 in double. */
#define DBTR_LOAD_PAIR_F(a, b, s)                       \
  do {                                                  \
    float2 t_ = *(const float2 *)(s);                   \
    (a) = t_.x, (b) = t_.y;                             \
  } while (0)
#define DBTR_LOAD_PAIR_D(a, b, s)                       \
  do {                                                  \
    double2 t_ = *(const double2 *)(s);                 \
    (a) = t_.x, (b) = t_.y;                             \
  } while (0)
#define DBTR_LOAD4_F(d, s) DBTR_LOAD_RAY_F(d, s)
#define DBTR_LOAD4_D(d, s) DBTR_LOAD_RAY_D(d, s)
/* Double-double (recon/dd.h): each element is one 16-byte load (hi, lo). */
#define DBTR_LOAD_DD(d, s)                                 \
  do {                                                     \
    double2 t_ = __ldg((const double2 *)(s));              \
    (d).hi = t_.x, (d).lo = t_.y;                          \
  } while (0)
#define DBTR_LOAD_RAY_DD(d, s) \
  do {                         \
    DBTR_LOAD_DD((d)[0], (s)); \
    DBTR_LOAD_DD((d)[1], (s) + 1); \
    DBTR_LOAD_DD((d)[2], (s) + 2); \
    DBTR_LOAD_DD((d)[3], (s) + 3); \
  } while (0)
#define DBTR_LOAD_PAIR_DD(a, b, s) \
  do {                             \
    DBTR_LOAD_DD((a), (s));        \
    DBTR_LOAD_DD((b), (s) + 1);    \
  } while (0)
#define DBTR_LOAD4_DD(d, s) DBTR_LOAD_RAY_DD(d, s)

#if !defined(DBTR_ROW_ID) || !defined(DBTR_ROW_PREC) || !defined(DBTR_ROW_ARITH) || !defined(DBTR_ROW_DIV) || \
    !defined(DBTR_ROW_SQRT) || !defined(DBTR_ROW_EXP) || !defined(DBTR_ROW_GATHER)
#error "compile kernels/mode_kernels.cu with the columns of a row of recon/modes.def (kernels/CMakeLists.txt)"
#endif

/* A column's value names the definition to use: MODE__COL(MODE__DIV_, DBTR_ROW_DIV) is
 * MODE__DIV_rn in a row whose div is rn. */
#define MODE__COL2(a, b) a##b
#define MODE__COL(a, b) MODE__COL2(a, b)

/* prec: the element type and what the CPU reference shares about it (recon/prec_traits.h:
 * DBTR_P_T, DBTR_P_R, DBTR_P_VIEW, DBTR_P_FOOT, zero, conversions, ...), and what is the GPU's:
 * the loads of its records, the group weights and the separable gather's columns a thread of
 * its thread layout (kernels/layout.h), and the prefix of its explicitly rounded operations. */
#define DBTR_TRAITS_PREC DBTR_ROW_PREC
#include "recon/prec_traits.h"
#if DBTR_P_ID == DBTR_P_ID_FLOAT
/* The float modes' geometry is double's (recon/proj_impl.h, DBTR_GEOM_FN), as the CPU's float
 * is (recon/cpu_arith.h): ray records and views in double, computed with the row's operations
 * in double (MODE_GEOM_*, below), and their results rounded to float once. */
#define MODE_GEOM_DOUBLE 1
#define MODE_GROUPW dbtr_groupw_f
#define MODE_GATHER_COLS DBTR_GATHER_COLS_F
#define MODE_LOAD_RAY DBTR_LOAD_RAY_D
#define MODE_LOAD_PAIR DBTR_LOAD_PAIR_F
#define MODE_LOAD4 DBTR_LOAD4_F
#define MODE_RN(op) __f##op##_rn
#define MODE_FLOOR(a) floorf(a)
/* approx and fast exist in float only: a row asking for them in another precision does not
 * compile. */
#define MODE__DIV_approx(a, b) __fdividef((a), (b))
#define MODE__EXP_fast(a) __expf(a)
#define MODE__EXP_libm(a) expf(a)
#define MODE__EXP_shared(a) dbtr_expf_cr(a)
#elif DBTR_P_ID == DBTR_P_ID_DOUBLE
#define MODE_GROUPW dbtr_groupw_d
#define MODE_GATHER_COLS DBTR_GATHER_COLS_D
#define MODE_LOAD_RAY DBTR_LOAD_RAY_D
#define MODE_LOAD_PAIR DBTR_LOAD_PAIR_D
#define MODE_LOAD4 DBTR_LOAD4_D
#define MODE_RN(op) __d##op##_rn
#define MODE_FLOOR(a) floor(a)
#define MODE__EXP_libm(a) exp(a)
#define MODE__EXP_shared(a) dbtr_exp_sh(a)
#else
/* The referee: every operation is recon/dd.h's (recon/dd_ops.h, which kernels/mode_kernels.cu
 * includes for it), in the row's columns as dd. Its T is a struct: dd_ops.h also gives
 * proj_impl.h its conversions and comparisons, and the traits give recon/separable.h its own
 * (DBTR_P_OF_INT, DBTR_P_EQ, DBTR_P_SAME_BITS). */
#define MODE_GROUPW dbtr_groupw_dd
#define MODE_GATHER_COLS DBTR_GATHER_COLS_DD
#define MODE_LOAD_RAY DBTR_LOAD_RAY_DD
#define MODE_LOAD_PAIR DBTR_LOAD_PAIR_DD
#define MODE_LOAD4 DBTR_LOAD4_DD
#endif

#if DBTR_P_ID != DBTR_P_ID_DD
/* The operations of recon/proj_impl.h for the mode's element type, as MODE_MUL ... (which
 * kernels/mode_kernels.cu passes on as DBTR_MUL ...).
 * arith, for products, sums and differences: op, the operators, which nvcc contracts into FMA
 * under -fmad=true; rn, explicitly rounded, which neither nvcc nor ptxas contracts. */
#define MODE__MUL_op(a, b) ((a) * (b))
#define MODE__ADD_op(a, b) ((a) + (b))
#define MODE__SUB_op(a, b) ((a) - (b))
#define MODE__MUL_rn(a, b) MODE_RN(mul)((a), (b))
#define MODE__ADD_rn(a, b) MODE_RN(add)((a), (b))
#define MODE__SUB_rn(a, b) MODE_RN(sub)((a), (b))
#define MODE_MUL(a, b) MODE__COL(MODE__MUL_, DBTR_ROW_ARITH)(a, b)
#define MODE_ADD(a, b) MODE__COL(MODE__ADD_, DBTR_ROW_ARITH)(a, b)
#define MODE_SUB(a, b) MODE__COL(MODE__SUB_, DBTR_ROW_ARITH)(a, b)

/* div: approximate (__fdividef, above), the operator (correctly rounded under
 * -prec-div=true, and always in double), or explicitly rounded (__fdiv_rn). */
#define MODE__DIV_op(a, b) ((a) / (b))
#define MODE__DIV_rn(a, b) MODE_RN(div)((a), (b))
#define MODE_DIV(a, b) MODE__COL(MODE__DIV_, DBTR_ROW_DIV)(a, b)

/* sqrt: the function (correctly rounded under -prec-sqrt=true, and always in double), or
 * explicitly rounded (__fsqrt_rn). */
#define MODE__SQRT_op(a) sqrt(a)
#define MODE__SQRT_rn(a) MODE_RN(sqrt)(a)
#define MODE_SQRT(a) MODE__COL(MODE__SQRT_, DBTR_ROW_SQRT)(a)

/* exp: __expf, CUDA's libm, or the CPU reference's own (recon/crmath.h); defined above, per
 * precision. */
#define MODE_EXP(a) MODE__COL(MODE__EXP_, DBTR_ROW_EXP)(a)

/* floor_int (recon/proj_impl.h): the hardware floor and conversion. The additions-only
 * version, the CPU's, measured 14% slower in fast on the H100 (docs/performance.md). */
#define MODE_FLOOR_BY_SHIFT 0
#endif

/* The GPU's tuning of recon/proj_impl.h's loops, through its hooks (the same arithmetic; the
 * measurements are in docs/performance.md). forward_ray's slice loop is unrolled by 2: two
 * slices a step, each added in order (nvcc does not unroll it unasked; by 4 was slower). */
#define DBTR_SLICE_LOOP_UNROLL _Pragma("unroll 2")

/* The separable gather (k_gather_sep) adds a term of zero weight rather than test each
 * product's weight (kernels/separable.h, gather_sep and sums_finite: the same sums, bit for bit),
 * and tests them only in the threads whose sums show a value read that is not finite. In float
 * and double, that is; dd keeps the test: its sums are pairs, and the lower part's sign of
 * zero is not held to the argument that a sum is never -0. */
#define MODE_GATHER_ADDS_ZEROS (DBTR_P_ID != DBTR_P_ID_DD)
/* gather: the order of its terms: the CPU's (kernels/separable.h, gather_sep), or factored, each
 * row's column sums first (gather_sep_factored). The referee's is the CPU's: its rows are the
 * CPU's bits. */
#define MODE__GATHER_cpu 0
#define MODE__GATHER_factored 1
#define MODE_GATHER_FACTORED MODE__COL(MODE__GATHER_, DBTR_ROW_GATHER)
#if MODE_GATHER_FACTORED && DBTR_P_ID == DBTR_P_ID_DD
#error "recon/modes.def: dd's gather is the CPU's"
#endif
/* ... and its blocks a multiprocessor, whose registers its launch bounds hold: 4 in float and
 * double, where the two passes over the views above (inlined twice) would take double's gather
 * from 58 registers to 68 (3 blocks), and bound to 4 it spills 8 bytes outside its loops; 5
 * where float's is factored (48 registers; of the values spilled, one is read again in the
 * union-row loop, the rest once a view), which took the factored back projection 4% below 4
 * blocks' (thesis, one H100; docs/performance.md); dd's gather takes 214 registers and is not
 * bound (bound to 4, thesis back projection took 169 ms against 68, one H200). */
#if DBTR_P_ID == DBTR_P_ID_DD
#define MODE_GATHER_BLOCKS 1
#elif MODE_GATHER_FACTORED && DBTR_P_ID == DBTR_P_ID_FLOAT
#define MODE_GATHER_BLOCKS 5
#else
#define MODE_GATHER_BLOCKS 4
#endif

/* The separable forward projection (kernels/mode_kernels.cu, k_forward_sep) and its thread
 * layout: MODE_FWD_ROWS detector rows a thread, which share their column's crossing of each
 * slice (and, in a run, their voxel rows), and MODE_FWD_BLOCKS blocks a multiprocessor its
 * registers are bound to hold; chosen by measuring layouts on the thesis problem
 * (docs/performance.md). */
#if DBTR_P_ID == DBTR_P_ID_FLOAT
#define MODE_FWD_ROWS 4
#define MODE_FWD_BLOCKS 5
#elif DBTR_P_ID == DBTR_P_ID_DOUBLE
#define MODE_FWD_ROWS 4
#define MODE_FWD_BLOCKS 4
#else
#define MODE_FWD_ROWS 2
#define MODE_FWD_BLOCKS 1
#endif

#ifdef MODE_GEOM_DOUBLE
/* A float sample widened to double by a cvt without .ftz (DBTR_WIDEN_F): under -ftz (fast) a
 * cast's cvt.ftz costs an FMUL by 1 before the F2F, to flush a subnormal float, and the sample
 * is never one there: it is the result of a flushing FADD or FFMA. Without -ftz the two are
 * the same instruction. The same bits, one instruction a slice fewer. */
static __device__ __forceinline__ double mode_widen_f(float v) {
  double w;
  asm("cvt.f64.f32 %0, %1;" : "=d"(w) : "f"(v));
  return w;
}
#define DBTR_WIDEN_F(v) mode_widen_f(v)

/* The float modes' geometry in double: the row's arith (op or rn) and sqrt in double; its
 * division in double is the operator (correctly rounded: double has no approximate one) or
 * __ddiv_rn. Float splits a double crossing itself, in fixed point (recon/proj_impl.h,
 * crossing_1d), so the double instance's floor is not called for it. */
#define MODE__GMUL_op(a, b) ((a) * (b))
#define MODE__GADD_op(a, b) ((a) + (b))
#define MODE__GSUB_op(a, b) ((a) - (b))
#define MODE__GMUL_rn(a, b) __dmul_rn((a), (b))
#define MODE__GADD_rn(a, b) __dadd_rn((a), (b))
#define MODE__GSUB_rn(a, b) __dsub_rn((a), (b))
#define MODE__GDIV_approx(a, b) ((a) / (b))
#define MODE__GDIV_op(a, b) ((a) / (b))
#define MODE__GDIV_rn(a, b) __ddiv_rn((a), (b))
#define MODE__GSQRT_op(a) sqrt(a)
#define MODE__GSQRT_rn(a) __dsqrt_rn(a)
#define MODE_GEOM_MUL(a, b) MODE__COL(MODE__GMUL_, DBTR_ROW_ARITH)(a, b)
#define MODE_GEOM_ADD(a, b) MODE__COL(MODE__GADD_, DBTR_ROW_ARITH)(a, b)
#define MODE_GEOM_SUB(a, b) MODE__COL(MODE__GSUB_, DBTR_ROW_ARITH)(a, b)
#define MODE_GEOM_DIV(a, b) MODE__COL(MODE__GDIV_, DBTR_ROW_DIV)(a, b)
#define MODE_GEOM_SQRT(a) MODE__COL(MODE__GSQRT_, DBTR_ROW_SQRT)(a)
#define MODE_GEOM_TO_T(a) __double2float_rn(a)
#endif

#endif
