/* recon/cpu_arith.h: recon/proj_impl.h instantiated with the CPU reference's operators:
 * plain C operators (one IEEE operation each: the CPU code is compiled with
 * -ffp-contract=off), floor by additions (floor_int, proj_impl.h's default), and the correctly rounded exp of
 * recon/crmath.h; for the double-double referee, recon/dd.h's operations. Include it with
 * DBTR_FN defined and DBTR_CPU_PREC set to 0 (float), 1 (double) or 2 (double-double), the
 * values of dbtr_precision; recon/cpu.c includes it once for each, and tests/test_projector.c
 * does too, to test the helpers directly. Float's geometry is double's (recon/proj_impl.h,
 * DBTR_GEOM_FN): include the double instance first, and for float define DBTR_GEOM_FN as its
 * names. No include guard: each inclusion is one instance. */
#include <math.h>

#include "recon/crmath.h"
#include "recon/dd.h"
#include "recon/rays.h"

#if DBTR_CPU_PREC == 2
#define DBTR_T dbtr_dd
#define DBTR_VIEW dbtr_view_dd
#define DBTR_FOOT dbtr_footprint_dd
#include "recon/dd_ops.h"
#else
#if DBTR_CPU_PREC == 1
#define DBTR_T double
#define DBTR_VIEW dbtr_view_d
#define DBTR_FOOT dbtr_footprint_d
#define DBTR_SQRT(a) sqrt(a)
#define DBTR_EXP(a) dbtr_exp_sh(a)
#else
#ifndef DBTR_GEOM_FN
#error "float's ray records are double's: define DBTR_GEOM_FN as the double instance's names"
#endif
#define DBTR_T float
#define DBTR_R double
#define DBTR_R_TO_T(a) ((float)(a))
#define DBTR_VIEW dbtr_view_d
#define DBTR_FOOT dbtr_footprint_f
#define DBTR_SQRT(a) sqrtf(a)
#define DBTR_EXP(a) dbtr_expf_cr(a)
#endif
#define DBTR_MUL(a, b) ((a) * (b))
#define DBTR_ADD(a, b) ((a) + (b))
#define DBTR_SUB(a, b) ((a) - (b))
#define DBTR_DIV(a, b) ((a) / (b))
#endif
#include "recon/proj_impl.h"
#undef DBTR_CPU_PREC
