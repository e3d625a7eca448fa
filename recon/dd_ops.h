/* recon/dd_ops.h: the operations of recon/proj_impl.h in double-double (recon/dd.h), for the
 * referee's instances of it: the CPU's (recon/cpu_arith.h) and the GPU's `dd` mode
 * (kernels/modes.h). Every operation is a function of recon/dd.h, which uses only correctly
 * rounded double operations in a fixed order, so both sides give the same bits whatever the
 * compiler's contraction settings. Its T is a struct, so it also defines the optional
 * conversions and comparisons proj_impl.h otherwise writes as casts and operators. No include
 * guard: proj_impl.h undefines these at its end, and each instance includes this again. */
#define DBTR_MUL(a, b) dbtr_dd_mul((a), (b))
#define DBTR_ADD(a, b) dbtr_dd_add((a), (b))
#define DBTR_SUB(a, b) dbtr_dd_sub((a), (b))
#define DBTR_DIV(a, b) dbtr_dd_div((a), (b))
#define DBTR_SQRT(a) dbtr_dd_sqrt(a)
#define DBTR_EXP(a) dbtr_dd_exp(a)
#define DBTR_FLOOR(a) dbtr_dd_floor(a)
#define DBTR_FLOOR_BY_SHIFT 0
/* Not proven monotone in k, a + k b in double-double: forward_ray tests every slice. */
#define DBTR_MONOTONE_CROSS 0
#define DBTR_OF_INT(i) dbtr_dd_of_int(i)
#define DBTR_TO_INT(a) dbtr_dd_to_int(a)
#define DBTR_NEG(a) dbtr_dd_neg(a)
#define DBTR_LT(a, b) dbtr_dd_lt((a), (b))
#define DBTR_LE(a, b) dbtr_dd_le((a), (b))
#define DBTR_GT(a, b) dbtr_dd_gt((a), (b))
#define DBTR_GE(a, b) dbtr_dd_ge((a), (b))
#define DBTR_EQ(a, b) dbtr_dd_eq((a), (b))
