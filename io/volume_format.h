/* io/volume_format.h: what every volume writer shares, below them all: the sample format
 * a writer is asked for, the explicit float-to-uint16 conversion, the checks of a writer's
 * arguments and the file type a name asks for. io/tiff.c and io/nifti.c include it, and
 * io/volume.c, which picks between them, includes both: so the writers need nothing from the
 * dispatcher above them (docs/volume-format.md). */
#ifndef DBTR_VOLUME_FORMAT_H
#define DBTR_VOLUME_FORMAT_H

#include <stdint.h>

#include "recon/geom.h"

/* The sample format of a volume file (TIFF and NIfTI alike; named for TIFF, its first
 * writer), and with it the type of the data the writers take: floats for FLOAT32 and UINT16,
 * doubles for FLOAT64. */
typedef enum { DBTR_TIFF_FLOAT32 = 0, DBTR_TIFF_UINT16 = 1, DBTR_TIFF_FLOAT64 = 2 } dbtr_tiff_format;

typedef struct {
  dbtr_tiff_format format;
  /* uint16 only: stored = round_sat((value - offset) * scale); NaN becomes 0. */
  double u16_scale;
  double u16_offset;
} dbtr_tiff_opts;

typedef enum { DBTR_VOLUME_TIFF, DBTR_VOLUME_NIFTI, DBTR_VOLUME_NIFTI_GZ } dbtr_volume_type;

/* The explicit float-to-uint16 conversion: rounded to nearest (halves away from zero),
 * saturating (negative and NaN to 0, over range to 65535). */
uint16_t dbtr_u16_from_double(double v);
/* The uint16 stored for value v: dbtr_u16_from_double((v - offset) * scale), in double.
 * Every uint16 writer (TIFF, NIfTI) stores through it, so their integers are the same. */
uint16_t dbtr_u16_store(float v, double scale, double offset);

/* For io/ writers: the checks every type shares (a path, a volume with voxels, positive
 * finite voxel sizes, a finite origin, a known format with a usable uint16 scale), each
 * refusal DBTR_EINVAL naming path. */
int dbtr__volume_check(const char *path, const dbtr_grid *grid, const void *data, const dbtr_tiff_opts *opts);

/* The type named by the end of path, in any letter case, as dbtr_volume_type_of (io/volume.h)
 * gives it, without asking whether this build writes NIfTI: the NIfTI writer, which exists
 * only where it does, reads its gzip choice from it. */
int dbtr__volume_type_by_name(const char *path, dbtr_volume_type *type);

#endif
