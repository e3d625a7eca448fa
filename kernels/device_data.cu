/* kernels/device_data.cu: data that lie in a GPU's memory (dbtr_recon_open_device), handled
 * where they lie: their values checked, their sums made, their conversion to a mode's type,
 * and the field of view applied to a volume on the device (kernels/gpu.h). Every formula is
 * the host's own (recon/data_terms.h), with operations rounded once, so the results are the
 * host's bit for bit. Mode-agnostic: compiled once, with the host backend. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>

#include "kernels/cuda_util.h"
#include "kernels/gpu.h"
#include "kernels/gpu_internal.h"
#include "kernels/layout.h"
#include "recon/data_terms.h"
#include "recon/dd.h"

/* Element i of an array of float or double, as a double (a float widens exactly). */
static __device__ double at(const void *p, dbtr_precision t, size_t i) {
  return t == DBTR_PREC_FLOAT ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

/* Each CUDA block's smallest index of a refused element (n: none), over a grid-stride loop,
 * reduced in shared memory: the first refused element is the smallest of the blocks'. */
__global__ void k_first_bad(const void *v, dbtr_precision t, size_t n, int counts, int positive, size_t *first) {
  __shared__ size_t m[DBTR_BLOCK];
  size_t mine = n;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n && mine == n; i += (size_t)gridDim.x * blockDim.x)
    if (dbtr_value_bad(at(v, t, i), counts, positive)) mine = i;
  m[threadIdx.x] = mine;
  __syncthreads();
  for (int w = DBTR_BLOCK / 2; w > 0; w /= 2) {
    if (threadIdx.x < w && m[threadIdx.x + w] < m[threadIdx.x]) m[threadIdx.x] = m[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) first[blockIdx.x] = m[0];
}

/* One thread a block of DBTR_DATA_BLOCK elements, summed in element order as the host's thread
 * sums it (recon/mlem.c, dbtr_mlem_set_data). */
__global__ void k_block_sums(dbtr_device_data d, dbtr_i0_shape shape, dbtr_data_kind kind, size_t n, size_t npix,
                             size_t n_blocks, double *blocks) {
  size_t b = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (b >= n_blocks) return;
  size_t first = b * DBTR_DATA_BLOCK, end = first + DBTR_DATA_BLOCK < n ? first + DBTR_DATA_BLOCK : n;
  double l = 0.0, c = 0.0;
  for (size_t i = first; i < end; i++)
    dbtr_data_add(kind, at(d.proj, d.proj_type, i),
                  kind == DBTR_DATA_LINES ? 1.0 : at(d.i0, d.i0_type, dbtr_i0_index(shape, i, npix)), &l, &c);
  blocks[2 * b] = l;
  blocks[2 * b + 1] = c;
}

/* x in precision p at element i of out: rounded to nearest as the host's (float) cast, or a
 * double-double of x alone (dbtr_dd_of). */
static __device__ void put(void *out, dbtr_precision p, size_t i, double x) {
  if (p == DBTR_PREC_FLOAT)
    ((float *)out)[i] = __double2float_rn(x);
  else if (p == DBTR_PREC_DOUBLE)
    ((double *)out)[i] = x;
  else
    ((dbtr_dd *)out)[i] = dbtr_dd_of(x);
}

__global__ void k_convert(dbtr_device_data d, dbtr_i0_shape shape, dbtr_data_kind kind, size_t n, size_t npix,
                          size_t first, size_t band, dbtr_precision p, void *y, void *i0) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    size_t j = i / band * npix + first + i % band;
    double yi = at(d.proj, d.proj_type, j);
    double i0i = kind == DBTR_DATA_LINES ? 1.0 : at(d.i0, d.i0_type, dbtr_i0_index(shape, j, npix));
    put(y, p, i, kind == DBTR_DATA_COUNTS_AS_LINES ? dbtr_count_to_line_integral(yi, i0i) : yi);
    if (i0) put(i0, p, i, i0i);
  }
}

/* v[i] = 0 where mask[i] is 0, elements of t_size bytes (4, 8 or 16: float, double, dd). */
__global__ void k_fov_zero(char *v, size_t n, size_t t_size, const unsigned char *mask) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    if (mask[i]) continue;
    if (t_size == 4)
      ((float *)v)[i] = 0.0f;
    else
      for (size_t w = 0; w < t_size / 8; w++) ((double *)v)[i * (t_size / 8) + w] = 0.0;
  }
}

/* A CUDA device pointer of the current process, or DBTR_EINVAL naming the array. */
static int on_device(const void *p, int device, const char *name) {
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess || (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged)) {
    cudaGetLastError();
    return dbtr_err(DBTR_EINVAL, "%s: not in the memory of a GPU (device data need CUDA device or managed memory)", name);
  }
  if (a.type == cudaMemoryTypeDevice && a.device != device)
    return dbtr_err(DBTR_EINVAL, "%s: in the memory of cuda:%d, not of cuda:%d as the device data say", name, a.device,
                    device);
  return 0;
}

extern "C" int dbtr_gpu_first_bad(int device, const char *name, const void *v, dbtr_precision type, size_t n,
                                  int counts, int positive, size_t *at_out, double *x) {
  *at_out = n;
  *x = 0.0;
  if (n == 0) return 0;
  DBTR_CUDA_TRY(cudaSetDevice(device));
  int rc = on_device(v, device, name);
  if (rc) return rc;
  size_t *first = NULL, host[DBTR_SETUP_BLOCKS];
  DBTR_CUDA_TRY(cudaMalloc(&first, sizeof host));
  k_first_bad<<<DBTR_SETUP_BLOCKS, DBTR_BLOCK>>>(v, type, n, counts, positive, first);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaMemcpy(host, first, sizeof host, cudaMemcpyDeviceToHost);
  cudaFree(first);
  if (e != cudaSuccess) return dbtr_err(DBTR_EGPU, "checking the values on cuda:%d: %s", device, cudaGetErrorString(e));
  for (int b = 0; b < DBTR_SETUP_BLOCKS; b++)
    if (host[b] < *at_out) *at_out = host[b];
  if (*at_out == n) return 0;
  size_t es = type == DBTR_PREC_FLOAT ? sizeof(float) : sizeof(double);
  union {
    float f;
    double d;
  } one;
  DBTR_CUDA_TRY(cudaMemcpy(&one, (const char *)v + *at_out * es, es, cudaMemcpyDeviceToHost));
  *x = type == DBTR_PREC_FLOAT ? (double)one.f : one.d;
  return 0;
}

extern "C" int dbtr_gpu_data_sums(const dbtr_device_data *d, dbtr_i0_shape shape, dbtr_data_kind kind, size_t n,
                                  size_t npix, double *blocks) {
  size_t n_blocks = (n + DBTR_DATA_BLOCK - 1) / DBTR_DATA_BLOCK;
  if (n_blocks == 0) return 0;
  DBTR_CUDA_TRY(cudaSetDevice(d->device));
  double *dev = NULL;
  DBTR_CUDA_TRY(cudaMalloc(&dev, 2 * n_blocks * sizeof(double)));
  k_block_sums<<<(unsigned)DBTR_TILES(n_blocks, DBTR_BLOCK), DBTR_BLOCK>>>(*d, shape, kind, n, npix, n_blocks, dev);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaMemcpy(blocks, dev, 2 * n_blocks * sizeof(double), cudaMemcpyDeviceToHost);
  cudaFree(dev);
  if (e != cudaSuccess) return dbtr_err(DBTR_EGPU, "the data's sums on cuda:%d: %s", d->device, cudaGetErrorString(e));
  return 0;
}

int dbtr__gpu_data_convert(const dbtr_device_data *d, dbtr_i0_shape shape, dbtr_data_kind kind, size_t n, size_t npix,
                           size_t first, size_t band, dbtr_precision precision, void *y, void *i0) {
  k_convert<<<DBTR_SETUP_BLOCKS, DBTR_BLOCK>>>(*d, shape, kind, n, npix, first, band, precision, y, i0);
  DBTR_CUDA_LAUNCHED();
  DBTR_CUDA_TRY(cudaDeviceSynchronize());
  return 0;
}

int dbtr__gpu_fov_zero(void *v, size_t n, size_t t_size, const unsigned char *fov) {
  if (!fov) return 0;
  size_t chunk = n < DBTR__FOV_STAGE ? n : DBTR__FOV_STAGE;
  if (chunk == 0) return 0;
  unsigned char *stage = NULL;
  DBTR_CUDA_TRY(cudaMalloc(&stage, chunk));
  cudaError_t e = cudaSuccess;
  for (size_t i = 0; i < n && e == cudaSuccess; i += chunk) {
    size_t m = n - i < chunk ? n - i : chunk;
    e = cudaMemcpy(stage, fov + i, m, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) k_fov_zero<<<DBTR_SETUP_BLOCKS, DBTR_BLOCK>>>((char *)v + i * t_size, m, t_size, stage);
    if (e == cudaSuccess) e = cudaGetLastError();
  }
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  cudaFree(stage);
  if (e != cudaSuccess) return dbtr_err(DBTR_EGPU, "the field of view on the device: %s", cudaGetErrorString(e));
  return 0;
}
