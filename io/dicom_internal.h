/* io/dicom_internal.h: what the DICOM import's parts share inside io/.
 *
 * io/dicom.cc is the one C++ file of dbtr: a shim over GDCM that opens a DICOM file, hands
 * out attribute values as numbers or strings and decodes the pixel data, behind the C
 * interface below. No C++ exception leaves it. io/dicom_import.c gathers the files and
 * checks them; io/dicom_geom.c turns their attributes into per-view geometry. */
#ifndef DBTR_IO_DICOM_INTERNAL_H
#define DBTR_IO_DICOM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "io/dicom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the GDCM shim (io/dicom.cc) ---- */

/* A DICOM tag as (group << 16) | element, e.g. 0x00181110 for (0018,1110). */
#define DBTR__TAG(group, element) ((uint32_t)(group) << 16 | (uint32_t)(element))
/* "(0018,1110) DistanceSourceToDetector" in messages: the format and its arguments. */
#define DBTR__TAG_FMT "(%04X,%04X) %s"
#define DBTR__TAG_ARGS(tag) (unsigned)((tag) >> 16), (unsigned)((tag)&0xFFFFu), dbtr__dcm_keyword(tag)

typedef struct dbtr__dcm dbtr__dcm;

/* Reads the header of path: every attribute before the pixel data. DBTR_EIO when the file
 * cannot be opened, DBTR_EFORMAT when it is not DICOM, each with a message naming path. */
int dbtr__dcm_open(dbtr__dcm **out, const char *path);
/* Closes and nulls; safe on NULL. */
void dbtr__dcm_close(dbtr__dcm **d);
const char *dbtr__dcm_path(const dbtr__dcm *d);
/* The keyword of a tag from GDCM's dictionary ("DistanceSourceToDetector"), for messages. */
const char *dbtr__dcm_keyword(uint32_t tag);

/* The values of attribute `tag` as numbers, from any numeric VR (DS, IS, FD, FL, US, SS,
 * UL, SL). frame < 0 looks at the top level of the data set only. frame >= 0 looks first
 * in the functional group macros of item `frame` of the Per-Frame Functional Groups
 * Sequence, then in those of the Shared Functional Groups Sequence, then at the top level:
 * a macro is a sequence of one item in a frame's item (PS3.3 C.7.6.16), so that is where a
 * multi-frame object keeps what a single-frame image has at its top level. Stores up to max
 * values and returns how many the attribute has: 0 when it is absent or empty. A value
 * that is not a finite number is DBTR_EFORMAT, with a message naming file, frame and tag. */
int dbtr__dcm_numbers(const dbtr__dcm *d, uint32_t tag, long frame, double *out, int max);
/* A string attribute at the top level, without padding, in out (cap bytes; longer values
 * are cut); "" when absent. Control characters become '?', so messages stay one line. */
void dbtr__dcm_string(const dbtr__dcm *d, uint32_t tag, char *out, size_t cap);
/* 1 when attribute tag is at the top level of the data set (a sequence included). */
int dbtr__dcm_has(const dbtr__dcm *d, uint32_t tag);
/* "view3.dcm", or "bpxi.dcm: frame 4" for frame 3 of a multi-frame object (frames are
 * counted from 1 in messages, as DICOM counts them), for messages. */
const char *dbtr__dcm_where(const dbtr__dcm *d, long frame, char *buf, size_t cap);
/* One file's decoded pixel data, the samples as GDCM gives them, before they become doubles:
 * the decode may run in a guarded child (io/dicom_import.c), which writes them into memory
 * it shares with the import. */
typedef struct {
  int type;            /* the sample type, set by dbtr__dcm_decode (io/dicom.cc's own code) */
  size_t cap;          /* bytes at data: 8 a pixel, room for any sample type read */
  unsigned char *data;
} dbtr__dcm_samples;
/* Decodes the pixel data of every frame, in any transfer syntax GDCM reads, into raw
 * (n = frames x rows x cols samples): the stored values, with no rescale. Reads the file
 * again, pixels and all: only the header was read before. A JPEG 2000 frame's header is
 * checked against Rows x Columns before any frame is decoded, and a frame that fails is
 * named. */
int dbtr__dcm_decode(const dbtr__dcm *d, size_t n, dbtr__dcm_samples *raw);
/* The n samples of raw, decoded, as doubles in out. */
int dbtr__dcm_convert(const dbtr__dcm_samples *raw, double *out, size_t n);
/* Reads the whole file (its pixel data undecoded) and checks that it holds what its header
 * declares: not truncated, native pixel data of Rows x Columns x NumberOfFrames x
 * SamplesPerPixel x BitsAllocated / 8 bytes, and none of those 0. dbtr__dcm_decode checks
 * the same before it decodes; this is the check a guarded child runs (io/dicom_import.c). */
int dbtr__dcm_check(const char *path);

/* ---- geometry (io/dicom_geom.c) ---- */

/* One single-frame view as its file states it. */
typedef struct {
  const char *path;
  double angle_deg; /* (0018,1510) Positioner Primary Angle */
  double sid_mm;    /* (0018,1110) Distance Source to Detector */
} dbtr__sf_view;

/* Places single-frame views (in their final order) in the presets' frame: a detector of
 * rows x cols pixels of (row, column) spacing, stationary or turning about the pivot with
 * the source, and the source on its arc about the pivot at the distance from the detector
 * centre on the chest-wall line that the file states. g is initialised here. */
int dbtr__geom_single(dbtr_geom *g, const dbtr__sf_view *views, size_t n, size_t rows, size_t cols,
                      const double spacing[2], const dbtr_dicom_opts *o);
/* Reads each frame's isocenter reference system (PS3.3 C.8.31.6) from a multi-frame Breast
 * Projection X-Ray Image and moves it rigidly, mirrored where needed, so that frame 1's
 * detector lies as a preset's does. *mirrored is set when that took a reflection. */
int dbtr__geom_isocenter(dbtr_geom *g, const dbtr__dcm *d, size_t frames, size_t rows, size_t cols,
                         int *mirrored);
/* The attribute's values into out, exactly `count` of them: a message naming the file,
 * frame, tag and keyword when it is absent ("missing") or has another number of values. */
int dbtr__need(const dbtr__dcm *d, uint32_t tag, long frame, double *out, int count);

#ifdef __cplusplus
}
#endif

#endif
