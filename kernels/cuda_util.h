/* kernels/cuda_util.h: the one CUDA error macro of dbtr. DBTR_CUDA_TRY records
 * "file:line: call: cudaGetErrorString" through dbtr_err and returns DBTR_EGPU from the
 * enclosing function; DBTR_CUDA_LAUNCHED checks a launch the same way. */
#ifndef DBTR_CUDA_UTIL_H
#define DBTR_CUDA_UTIL_H

#include <cuda_runtime.h>

#include "recon/error.h"

#define DBTR_CUDA_TRY(call)                                                                              \
  do {                                                                                                   \
    cudaError_t e_ = (call);                                                                             \
    if (e_ != cudaSuccess)                                                                               \
      return dbtr_err(DBTR_EGPU, "%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_));   \
  } while (0)

#define DBTR_CUDA_LAUNCHED() DBTR_CUDA_TRY(cudaGetLastError())

#endif
