/* engine/fbp.h: filtered back projection on any path (docs/fbp.md): the filter of recon/fbp.h on
 * the host, in double, then the back projection A^T of the projector of the path the options
 * choose (engine/projector.c), so that a path in the CPU's bitwise class (cpu-match,
 * double-match, dd) gives the CPU reference's FBP bits. The volume of `dbtr recon --algorithm
 * fbp`, of dbtr_recon_open with algorithm "fbp", and the start volume of `--init fbp`. */
#ifndef DBTR_ENGINE_FBP_H
#define DBTR_ENGINE_FBP_H

#include "include/dbtr.h"

/* Where the time went and what ran. */
typedef struct {
  double filter;         /* seconds: the filter on the host, with the conversion to the path's type */
  double back;           /* seconds: the projector's set-up and the two back projections */
  char backend[64];      /* the path that ran: "cpu-float", "gpu:cpu-match", ... */
  char fallback[1024];   /* why backend "auto" ran on the CPU; "" */
  dbtr_precision precision; /* the path's element type */
  size_t n_unseen;       /* voxels no ray reaches (their weights' back projection is 0), written as 0 */
} dbtr_fbp_report;

/* Checks the filter's options: DBTR_EINVAL naming the option outside (0, 1]. */
int dbtr_fbp_check_opts(const dbtr_fbp_opts *o);

/* The FBP volume of scan on grid into vol (n_vox doubles, 1/mm; negative values kept): the line
 * integrals (counts through dbtr_count_to_line_integral), filtered, back-projected by the path of
 * bo on GPU `device` (0: the first), normalised (recon/fbp.h); rep (may be NULL) receives the
 * times and the path. The geometry and the grid must have passed their checks. */
int dbtr_fbp_volume(const dbtr_scan *scan, const dbtr_grid *grid, const dbtr_backend_opts *bo,
                    const dbtr_fbp_opts *fo, int device, double *vol, dbtr_fbp_report *rep);

/* FBP as a client runs it (`dbtr recon --algorithm fbp`, dbtr_recon_open's "fbp"): first the
 * checks a session makes where it opens (a problem-only session: the geometry, the grid named
 * after source, which may be NULL, and the values unless values_checked), then dbtr_fbp_volume
 * with ro's backend and filter options on the first GPU. */
int dbtr_fbp_checked(const dbtr_scan *scan, const dbtr_grid *grid, const dbtr_recon_opts *ro, const char *source,
                     int values_checked, double *vol, dbtr_fbp_report *rep);

#endif
