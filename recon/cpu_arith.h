/* recon/cpu_arith.h: recon/proj_impl.h instantiated with the CPU reference's operators:
 * plain C operators (one IEEE operation each: the CPU code is compiled with
 * -ffp-contract=off), floor by additions (floor_int, proj_impl.h's default), and the
 * correctly rounded exp of recon/crmath.h; for the double-double referee, recon/dd.h's
 * operations. Include it with DBTR_FN defined and DBTR_TRAITS_PREC set to float, double or dd:
 * the precision's types are its traits (recon/prec_traits.h, which stay in force after it).
 * recon/cpu.c includes it once for each, and tests/test_projector.c does too, to test the
 * helpers directly. Float's geometry is double's (recon/proj_impl.h, DBTR_GEOM_FN): include
 * the double instance first, and for float define DBTR_GEOM_FN as its names. No include guard:
 * each inclusion is one instance. */
#include <math.h>

#include "recon/crmath.h"
#include "recon/dd.h"
#include "recon/prec_traits.h"

#define DBTR_T DBTR_P_T
#define DBTR_VIEW DBTR_P_VIEW
#define DBTR_FOOT DBTR_P_FOOT
#if DBTR_P_ID == DBTR_P_ID_DD
#include "recon/dd_ops.h"
#else
#if DBTR_P_ID == DBTR_P_ID_DOUBLE
#define DBTR_SQRT(a) sqrt(a)
#define DBTR_EXP(a) dbtr_exp_sh(a)
#else
#ifndef DBTR_GEOM_FN
#error "float's ray records are double's: define DBTR_GEOM_FN as the double instance's names"
#endif
#define DBTR_R DBTR_P_R
#define DBTR_R_TO_T(a) ((float)(a))
#define DBTR_SQRT(a) sqrtf(a)
#define DBTR_EXP(a) dbtr_expf_cr(a)
#endif
#define DBTR_MUL(a, b) ((a) * (b))
#define DBTR_ADD(a, b) ((a) + (b))
#define DBTR_SUB(a, b) ((a) - (b))
#define DBTR_DIV(a, b) ((a) / (b))
#endif
#include "recon/proj_impl.h"
