/* recon/hd.h: lets one static inline function serve C11 (the CPU reference) and CUDA (every
 * kernel). Shared arithmetic is written once, in recon/ headers, marked DBTR_HD. */
#ifndef DBTR_HD_H
#define DBTR_HD_H

/* Write shared functions as `static inline DBTR_HD T name(...)`. A kernel file whose
 * mode operations exist only on the device (__fmul_rn, ...) defines DBTR_HD as __device__
 * before including the shared headers. */
#ifndef DBTR_HD
#ifdef __CUDACC__
#define DBTR_HD __host__ __device__
#else
#define DBTR_HD
#endif
#endif

/* Unrolls the loop that follows in CUDA (its trip count is a constant); nothing in C.
 * DBTR_NO_UNROLL keeps nvcc from unrolling it (a loop whose body is large enough). */
#ifdef __CUDACC__
#define DBTR_UNROLL _Pragma("unroll")
#define DBTR_NO_UNROLL _Pragma("unroll 1")
#else
#define DBTR_UNROLL
#define DBTR_NO_UNROLL
#endif

#endif
