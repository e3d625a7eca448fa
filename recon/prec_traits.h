/* recon/prec_traits.h: what a precision (float, double or dd, the double-double referee) is,
 * spelled once for the CPU reference (recon/cpu.c, recon/cpu_impl.h, recon/cpu_arith.h) and
 * for the GPU's modes (kernels/modes.h): the element type, its zero, its test for zero, its
 * conversions from and to double, the geometry's type, the view and the footprint with the
 * functions that make them from the host's double geometry, and the separable tables'
 * elements. Valid C11 and CUDA.
 *
 * Define DBTR_TRAITS_PREC as float, double or dd, then include this file; it defines
 *   DBTR_P_ID               DBTR_P_ID_FLOAT, _DOUBLE or _DD, for #if (the values of dbtr_precision)
 *   DBTR_P_PREC             the dbtr_precision
 *   DBTR_P_T                the element type: volume, data, pixel terms, updates
 *   DBTR_P_R                the geometry's type (ray records, crossings, forward sums): double
 *                           for float (recon/proj_impl.h, DBTR_GEOM_FN), else T
 *   DBTR_P_ZERO, DBTR_P_IS0(a), DBTR_P_FROM_D(x), DBTR_P_TO_D(a)
 *                           zero, the test for it, a double rounded to T, T rounded to double
 *   DBTR_P_VIEW, DBTR_P_VIEW_OF(g, grid, k, out)
 *                           the reduced view and the function that reduces view k to it:
 *                           double's for float and double, double-double's for dd (recon/rays.h)
 *   DBTR_P_FOOT, DBTR_P_FOOT_OF(in, out)
 *                           the footprint and its conversion from double's
 *   DBTR_P_CROSS, DBTR_P_SLOTW   the separable tables' elements (recon/separable_types.h)
 *   DBTR_P_OF_INT(i), DBTR_P_EQ(a, b), DBTR_P_SAME_BITS(a, b)
 *                           for dd only, whose T is a struct: what recon/separable.h then takes
 * They stay in force until the file is included again, with another DBTR_TRAITS_PREC, which
 * replaces them: no include guard. The
 * operations of a precision are not traits: they are the CPU's (recon/cpu_arith.h) or a GPU
 * mode's (kernels/modes.h). */
#include "recon/dd.h"
#include "recon/rays.h"
#include "recon/separable_types.h"

#ifndef DBTR_TRAITS_PREC
#error "define DBTR_TRAITS_PREC as float, double or dd before including recon/prec_traits.h"
#endif

#undef DBTR_P_ID
#undef DBTR_P_PREC
#undef DBTR_P_T
#undef DBTR_P_R
#undef DBTR_P_ZERO
#undef DBTR_P_IS0
#undef DBTR_P_FROM_D
#undef DBTR_P_TO_D
#undef DBTR_P_VIEW
#undef DBTR_P_VIEW_OF
#undef DBTR_P_FOOT
#undef DBTR_P_FOOT_OF
#undef DBTR_P_CROSS
#undef DBTR_P_SLOTW
#undef DBTR_P_OF_INT
#undef DBTR_P_EQ
#undef DBTR_P_SAME_BITS

#define DBTR_P_ID_FLOAT 0
#define DBTR_P_ID_DOUBLE 1
#define DBTR_P_ID_DD 2
/* DBTR_TRAITS_PREC's token names its id: DBTR_P__ID(dd) is DBTR_P__ID_dd, 2. */
#define DBTR_P__ID_float 0
#define DBTR_P__ID_double 1
#define DBTR_P__ID_dd 2
#define DBTR_P__ID2(p) DBTR_P__ID_##p
#define DBTR_P__ID(p) DBTR_P__ID2(p)

#if DBTR_P__ID(DBTR_TRAITS_PREC) == DBTR_P_ID_FLOAT
#define DBTR_P_ID 0
#define DBTR_P_PREC DBTR_PREC_FLOAT
#define DBTR_P_T float
#define DBTR_P_R double
#define DBTR_P_VIEW dbtr_view_d
#define DBTR_P_VIEW_OF dbtr_view_reduce
#define DBTR_P_FOOT dbtr_footprint_f
#define DBTR_P_FOOT_OF dbtr_footprint_to_f
#define DBTR_P_CROSS dbtr_cross_f
#define DBTR_P_SLOTW dbtr_slotw_f
#elif DBTR_P__ID(DBTR_TRAITS_PREC) == DBTR_P_ID_DOUBLE
#define DBTR_P_ID 1
#define DBTR_P_PREC DBTR_PREC_DOUBLE
#define DBTR_P_T double
#define DBTR_P_R double
#define DBTR_P_VIEW dbtr_view_d
#define DBTR_P_VIEW_OF dbtr_view_reduce
#define DBTR_P_FOOT dbtr_footprint_d
#define DBTR_P_FOOT_OF dbtr_footprint_to_d
#define DBTR_P_CROSS dbtr_cross_d
#define DBTR_P_SLOTW dbtr_slotw_d
#elif DBTR_P__ID(DBTR_TRAITS_PREC) == DBTR_P_ID_DD
#define DBTR_P_ID 2
#define DBTR_P_PREC DBTR_PREC_DD
#define DBTR_P_T dbtr_dd
#define DBTR_P_R dbtr_dd
#define DBTR_P_VIEW dbtr_view_dd
#define DBTR_P_VIEW_OF dbtr_view_reduce_dd
#define DBTR_P_FOOT dbtr_footprint_dd
#define DBTR_P_FOOT_OF dbtr_footprint_to_dd
#define DBTR_P_CROSS dbtr_cross_dd
#define DBTR_P_SLOTW dbtr_slotw_dd
#else
#error "recon/prec_traits.h: DBTR_TRAITS_PREC is not float, double or dd"
#endif

#if DBTR_P_ID == DBTR_P_ID_DD
/* recon/dd.h's values and tests. C++ has no compound literals and a kernel file's dd.h is
 * device-only (recon/hd.h), while the host rounds the start value (DBTR_P_FROM_D): there the
 * values are written as braces, dbtr_dd_of's {x, 0} to the bit. */
#ifdef __cplusplus
#define DBTR_P_ZERO (dbtr_dd{0.0, 0.0})
#define DBTR_P_FROM_D(x) (dbtr_dd{(x), 0.0})
#else
#define DBTR_P_ZERO dbtr_dd_of(0.0)
#define DBTR_P_FROM_D(x) dbtr_dd_of(x)
#endif
#define DBTR_P_IS0(a) dbtr_dd_eq((a), DBTR_P_ZERO)
#define DBTR_P_TO_D(a) dbtr_dd_to_double(a)
#define DBTR_P_OF_INT(i) dbtr_dd_of_int(i)
#define DBTR_P_EQ(a, b) dbtr_dd_eq((a), (b))
#define DBTR_P_SAME_BITS(a, b) dbtr_dd_same_bits((a), (b))
#else
#define DBTR_P_ZERO ((DBTR_P_T)0)
#define DBTR_P_IS0(a) ((a) == (DBTR_P_T)0)
#define DBTR_P_FROM_D(x) ((DBTR_P_T)(x))
#define DBTR_P_TO_D(a) ((double)(a))
#endif

/* The input is consumed, as recon/proj_impl.h consumes its macros: the next instance defines
 * it again. */
#undef DBTR_TRAITS_PREC
