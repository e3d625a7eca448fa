/* recon/separable_types.h: the elements of the separable tables (recon/separable.h), shared
 * by the CPU reference (recon/cpu_impl.h) and the GPU (kernels/separable.h, which adds the
 * elements of its own thread layout in kernels/layout.h). Plain C, valid in CUDA too. */
#ifndef DBTR_SEPARABLE_TYPES_H
#define DBTR_SEPARABLE_TYPES_H

#include <stddef.h>

#include "recon/dd.h"

/* One axis of the crossing of a column's (or row's) rays with one slice, as crossing_1d
 * computes it: lower voxel index i and upper weight w, or i = DBTR_CROSS_NONE where the
 * crossing lies outside the grid's (-1, n) band. */
#define DBTR_CROSS_NONE (-2147483647 - 1)
typedef struct {
  int i;
  float w;
} dbtr_cross_f;
typedef struct {
  int i;
  double w;
} dbtr_cross_d;
typedef struct {
  int i;
  dbtr_dd w;
} dbtr_cross_dd;

/* The pixel slots of one voxel index along one axis: the pixels [p0, p0 + n) of its
 * candidate box along that axis (n = 0: none). A box of more than DBTR_SLOTS pixels along
 * an axis makes the view non-separable for the gather. A box holds at most 3 pixels while its
 * radius (the magnified voxel plus the margin) is under 1.5 pixels: voxels up to about 1.3
 * pixels wide at the top slice's magnification (1.07 for the presets' 45 to 50 mm stacks),
 * which covers reconstructing at the detector's resolution. */
enum { DBTR_SLOTS = 3 };
typedef struct {
  int p0, n;
} dbtr_slots;
/* No slots, as a value in C and in C++ (which has no compound literals). */
#ifdef __cplusplus
#define DBTR_NO_SLOTS (dbtr_slots{0, 0})
#else
#define DBTR_NO_SLOTS ((dbtr_slots){0, 0})
#endif
/* The axis weight of each slot for its voxel; 0 past n or where the pixel's crossing does
 * not touch the voxel. Stored DBTR_SLOTW wide (the rest 0), so that they are one 16-byte
 * load in float on the GPU. */
enum { DBTR_SLOTW = 4 };
typedef struct {
  float w[DBTR_SLOTW];
} dbtr_slotw_f;
typedef struct {
  double w[DBTR_SLOTW];
} dbtr_slotw_d;
typedef struct {
  dbtr_dd w[DBTR_SLOTW];
} dbtr_slotw_dd;

/* The builder of the tables (recon/separable.h) visits each element of a table once, in
 * DBTR_SETUP_FOR(i, n) { ... } over [0, n): on the device a grid-stride loop (the GPU's
 * set-up kernels, kernels/mode_kernels.cu), on the host a plain loop. No element's work
 * depends on another's in the same loop, so both do the same work. */
#ifdef __CUDA_ARCH__
#define DBTR_SETUP_FOR(i, n) \
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (size_t)gridDim.x * blockDim.x)
#else
#define DBTR_SETUP_FOR(i, n) for (size_t i = 0; i < (n); i++)
#endif

#endif
