/* kernels/layout.h: how the GPU backend spreads its work over threads and blocks, and the
 * layout of the separable tables that follows from it (kernels/separable.h). These are the
 * GPU's choices, made for its memory system and measured there (docs/performance.md); the
 * reference (recon/) computes each ray and each voxel on its own and knows none of them.
 * Plain C, so that the host code that launches the kernels, the CPU test of the separable
 * tables (tests/test_separable.c) and the benchmarks read the numbers the kernels use.
 *
 * Block order: consecutive blocks of k_forward are the subset's views of one stretch of a
 * detector row, and of the gathers the slices of one tile of voxel columns, so that the
 * blocks in flight read overlapping data (the volume rows the views' rays cross; the pixels
 * the slices' footprints cover) and find it in L2 rather than device memory (measured on the
 * per-pixel path: back 27.86 -> 26.93 ms, forward 5.06 -> 4.94 ms). */
#ifndef DBTR_KERNELS_LAYOUT_H
#define DBTR_KERNELS_LAYOUT_H

#include <stddef.h>

#include "recon/separable_types.h"

/* DBTR_BLOCK: threads per block of the one-dimensional kernels (the ray set-up, the forward
 * projection, whose block is DBTR_BLOCK pixels of one detector row, the partial sums' reduction
 * and the separable set-up); a power of two, as the fixed-shape tree of the block sums needs.
 *
 * The per-pixel gather (k_gather): a thread takes DBTR_MICRO x DBTR_MICRO voxels of one slice
 * and computes each candidate pixel's crossing once for all of them (44 -> 27 ms against one
 * voxel per thread); a block is DBTR_GX x DBTR_GY threads.
 *
 * The separable gather (k_gather_sep): a thread takes a few voxel columns (DBTR_GATHER_COLS_F,
 * _D, _DD, by precision), x, x + DBTR_GS_X, ..., so that a warp's loads of consecutive columns
 * stay coalesced, with one group of DBTR_GROUP consecutive voxel rows y0 .. y0 + 3 (y0 a
 * multiple of DBTR_GROUP) of one slice: the group's rows share the union of their row slots (a
 * dbtr_slots of at most DBTR_GROUP_ROWS rows) and, for each row of the union, each voxel row's
 * weight (0 outside its own slots). With slots of at most 3 rows, consecutive voxel rows are
 * less than 1.5 pixels apart, so the last of four starts at most 5 rows after the first: at
 * most 8 rows. In float the second column, with 3 slots instead of 4 (DBTR_SLOTS), took the
 * back projection from 6.84 to 5.74 ms; double's 2 columns held 112 registers (2 blocks a
 * multiprocessor) and its one column 58 (4 blocks): thesis, one H100, 11.3 -> 10.1 ms. A
 * block is DBTR_GS_X x DBTR_GS_Y threads, one warp along x: DBTR_SEP_GROUPS groups of rows,
 * each in DBTR_GS_Z consecutive slices (warp w takes group w / DBTR_GS_Z, slice
 * w % DBTR_GS_Z), so that the warps of a block read nearly the same pixels of each view. One
 * slice: 8 consecutive groups. (2 slices of 4 groups took thesis's back projection from 5.31 to
 * 5.22 ms in fast when each product's weight was tested; since zero terms are added and fast's
 * gather is factored, one slice is faster in every mode: fast 4.60 -> 4.50, cpu-match 5.33 ->
 * 5.22, double 9.79 -> 9.40 ms, one H100; 4 and 8 slices were slower, 5.68 and 5.70, before.)
 *
 * The separable forward projection (k_forward_sep): a thread takes one detector column and
 * a few consecutive rows of one view (per precision: kernels/modes.h, MODE_FWD_ROWS), a block
 * DBTR_BLOCK columns. */
enum {
  DBTR_BLOCK = 256,
  DBTR_MICRO = 2,
  DBTR_GX = 16,
  DBTR_GY = 8,
  DBTR_GATHER_COLS_F = 2,
  DBTR_GATHER_COLS_D = 1,
  DBTR_GATHER_COLS_DD = 2,
  DBTR_GROUP = 4,
  DBTR_GROUP_ROWS = 8,
  DBTR_GS_X = 32,
  DBTR_GS_Y = 8,
  DBTR_GS_Z = 1
};

/* The voxel rows (and, in the per-pixel gather, columns) one block of each gather covers: the
 * tile whose slices are consecutive blocks (above); a separable block covers DBTR_GS_X times
 * its precision's columns a thread, and DBTR_GS_Z slices. */
enum {
  DBTR_TILE_X = DBTR_GX * DBTR_MICRO,
  DBTR_TILE_Y = DBTR_GY * DBTR_MICRO,
  DBTR_SEP_GROUPS = DBTR_GS_Y / DBTR_GS_Z,
  DBTR_SEP_TILE_Y = DBTR_SEP_GROUPS * DBTR_GROUP
};

/* The number of tiles (blocks, groups) of `tile` that cover n, in n's type. */
#define DBTR_TILES(n, tile) (((n) + (tile) - 1) / (tile))
/* The number of groups of DBTR_GROUP voxel rows in ny rows. */
#define DBTR_N_GROUPS(ny) DBTR_TILES(ny, DBTR_GROUP)

/* The separable set-up kernels (kernels/mode_kernels.cu) run each step of the builder
 * (DBTR_SETUP_FOR, recon/separable_types.h) in a grid of DBTR_SETUP_BLOCKS blocks of
 * DBTR_BLOCK threads. */
enum { DBTR_SETUP_BLOCKS = 1024 };

/* ---- The separable tables' elements of the GPU's thread layout (kernels/separable.h); the
 * rest are the reference's (recon/separable_types.h) ---- */

/* Each voxel row's weight in each row of its group's union (above). */
typedef struct {
  float w[DBTR_GROUP_ROWS][DBTR_GROUP];
} dbtr_groupw_f;
typedef struct {
  double w[DBTR_GROUP_ROWS][DBTR_GROUP];
} dbtr_groupw_d;
typedef struct {
  dbtr_dd w[DBTR_GROUP_ROWS][DBTR_GROUP];
} dbtr_groupw_dd;

#endif
