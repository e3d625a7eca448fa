/* viewer/viewer.h: the slice viewer behind `dbtr view` (docs/viewer.md).
 *
 * Two halves. The pure logic (window/level mapping, percentiles, diff classification and
 * per-slice counts, slice navigation, fitting the slice into the viewport, the input state
 * machine, the title text) is plain C that tests call without a display. The GLFW/OpenGL
 * half (dbtr_view_run) draws the current slice from one GL_R32F texture per volume plus a
 * diff mask texture, uploads only the slice on screen, and writes headless screenshots.
 *
 * Slices are z planes of a (nz, ny, nx) float array; the slice is drawn with row y = 0 at
 * the top and x = 0 at the left, as Fiji shows the TIFF page. Slice indices are 0-based. */
#ifndef DBTR_VIEWER_H
#define DBTR_VIEWER_H

#include <stddef.h>
#include <stdint.h>

#include "recon/geom.h"

/* ---- Window/level ------------------------------------------------------------------ */

/* The grey value in [0, 1] of v under a window of width `window` centred at `level`:
 * (v - (level - window/2)) / window, clamped. NaN shows as 0 (black). window > 0. */
double dbtr_view_wl_map(double v, double window, double level);
/* The same as an 8-bit grey level, round(255 * map). */
int dbtr_view_grey8(double v, double window, double level);

/* The p_lo and p_hi quantiles (0..1) of the finite values among at most max_samples
 * elements taken at an even stride through data, interpolated linearly between order
 * statistics (numpy's default). Returns DBTR_EINVAL when no sampled value is finite. */
int dbtr_view_percentiles(const float *data, size_t n, size_t max_samples, double p_lo, double p_hi,
                          double *lo, double *hi);
/* The window and level that show [lo, hi] from black to white; a degenerate range (lo ==
 * hi, a constant volume) gets a window of |lo| (1 when lo is 0) centred on lo. */
void dbtr_view_auto_window(double lo, double hi, double *window, double *level);

/* ---- Differences ------------------------------------------------------------------- */

/* A voxel differs when |A - B| > abs (ABS mode) or when A and B are more than ulp
 * representable floats apart (ULP mode). Zero in either mode means any difference in the
 * bits, counting +0 and -0 as equal as recon/compare does. */
typedef enum { DBTR_VIEW_THR_ULP = 0, DBTR_VIEW_THR_ABS = 1 } dbtr_view_thr_mode;
typedef struct {
  dbtr_view_thr_mode mode;
  double abs;   /* ABS mode: |A - B| must exceed this */
  uint64_t ulp; /* ULP mode: the ULP distance must exceed this */
} dbtr_view_threshold;

/* Classes of a voxel pair; they are also the diff mask values the shader colours. */
enum { DBTR_VIEW_SAME = 0, DBTR_VIEW_A_GREATER = 1, DBTR_VIEW_A_LESS = -1, DBTR_VIEW_NAN = 2 };
/* One of the classes above. A NaN against a number is DBTR_VIEW_NAN; two NaNs are SAME. */
int dbtr_view_classify(float a, float b, const dbtr_view_threshold *t);
/* "any bit", "|A-B| > 0.001" or "> 4 ULP". */
void dbtr_view_threshold_str(const dbtr_view_threshold *t, char *buf, size_t n);
/* counts[k] = differing voxels of slice k, for the nz slices of nx*ny voxels; *max_mag,
 * when not NULL, the largest magnitude (dbtr_view_diff_magnitude) of a differing voxel
 * of the volume, NaN pairs left out (0 when none differs). */
void dbtr_view_count_diffs(const float *a, const float *b, size_t nx, size_t ny, size_t nz,
                           const dbtr_view_threshold *t, size_t *counts, double *max_mag);

/* The overlay's colour scale. A differing voxel's magnitude is measured in the
 * threshold's unit: its ULP distance in ULP mode, |A - B| in ABS mode. The scale runs
 * from the smallest magnitude to `range`, in DBTR_VIEW_LEVELS equal steps: in ULP mode on
 * a log scale from 1 ULP to range ULPs (ULP distances span orders of magnitude, and
 * explode near zero), in ABS mode linearly from 0 to range. Level k in 1..LEVELS is
 * signed like A - B; 0 is "same"; NaN against a number is DBTR_VIEW_LEVEL_NAN. A
 * magnitude at or beyond range gets the last level. */
enum { DBTR_VIEW_LEVELS = 16, DBTR_VIEW_LEVEL_NAN = DBTR_VIEW_LEVELS + 1 };
/* The ULP distance of a and b (ULP mode) or |a - b| in double (ABS mode). */
double dbtr_view_diff_magnitude(float a, float b, dbtr_view_thr_mode mode);
/* Where magnitude m sits on the scale, 0 .. 1 (unclamped). */
double dbtr_view_scale_pos(double m, dbtr_view_thr_mode mode, double range);
/* The level of (a, b): 0, +-1 .. +-LEVELS or DBTR_VIEW_LEVEL_NAN. */
int dbtr_view_diff_level(float a, float b, const dbtr_view_threshold *t, double range);
/* The colour of a level (the key and the shader's colour table both come from here):
 * red for A > B and blue for A < B, from pale at level 1 to pure (255, 0, 0) and
 * (0, 0, 255) at LEVELS; yellow for NaN; level 0 has none and gives the background. */
void dbtr_view_diff_rgb(int level, unsigned char rgb[3]);
/* The scale's top for a largest magnitude max_mag: in ULP mode the smallest power of two
 * >= max_mag, at least 2; in ABS mode the smallest 1, 2 or 5 x 10^k >= max_mag, or 1 when
 * max_mag is 0. Round numbers, so that the key reads plainly. */
double dbtr_view_nice_range(double max_mag, dbtr_view_thr_mode mode);
/* mask[i] = the level of (a[i], b[i]) as a float, for one slice of n voxels. */
void dbtr_view_diff_mask(const float *a, const float *b, size_t n, const dbtr_view_threshold *t, double range,
                         float *mask);
/* The nearest slice after (dir > 0) or before (dir < 0) `from` with counts > 0, or -1. */
long dbtr_view_next_diff(const size_t *counts, size_t nz, size_t from, int dir);
/* Returns DBTR_EINVAL, naming both files and their dims, unless the grids' dims match. */
int dbtr_view_check_pair(const char *name_a, const dbtr_grid *a, const char *name_b, const dbtr_grid *b);

/* ---- Geometry on screen ------------------------------------------------------------ */

/* A rectangle in framebuffer pixels, x to the right and y down from the top left. */
typedef struct {
  double x, y, w, h;
} dbtr_view_rect;

/* Where a slice w_mm wide and h_mm high lands in a vw x vh viewport: the largest rectangle
 * of that aspect that fits, centred, then scaled by zoom about the centre and moved by
 * (pan_x, pan_y) pixels. */
dbtr_view_rect dbtr_view_fit(double w_mm, double h_mm, int vw, int vh, double zoom, double pan_x, double pan_y);
/* The voxel (ix, iy) under pixel position (px, py) of a slice of nx x ny voxels drawn in
 * r; returns 0 when the position is outside the slice. */
int dbtr_view_pick(const dbtr_view_rect *r, size_t nx, size_t ny, double px, double py, size_t *ix, size_t *iy);

/* ---- Input state machine ----------------------------------------------------------- */

/* Keys: printable characters are their ASCII code ('n', 'W', '+'); the rest are these. */
enum {
  DBTR_VIEW_KEY_UP = 0x100,
  DBTR_VIEW_KEY_DOWN,
  DBTR_VIEW_KEY_PAGE_UP,
  DBTR_VIEW_KEY_PAGE_DOWN,
  DBTR_VIEW_KEY_HOME,
  DBTR_VIEW_KEY_END,
  DBTR_VIEW_KEY_TAB,
  DBTR_VIEW_KEY_ESCAPE
};
/* Mouse buttons for dbtr_view_button. */
enum { DBTR_VIEW_BUTTON_NONE = 0, DBTR_VIEW_BUTTON_LEFT = 1, DBTR_VIEW_BUTTON_RIGHT = 2 };

/* What an event changed, so that the session redoes only that work. */
enum {
  DBTR_VIEW_CH_SLICE = 1,     /* another slice: upload its textures */
  DBTR_VIEW_CH_WL = 2,        /* window or level */
  DBTR_VIEW_CH_VIEW = 4,      /* zoom, pan, A/B, overlay on/off or opacity */
  DBTR_VIEW_CH_THRESHOLD = 8, /* recount the differences and redo the mask */
  DBTR_VIEW_CH_QUIT = 16
};

typedef struct {
  /* The volume, fixed by dbtr_view_state_init. */
  size_t nx, ny, nz;
  double dx, dy, dz, z0; /* voxel size and the z of slice 0, mm */
  int have_b;
  const size_t *diff_counts; /* (nz) differing voxels per slice; owned by the session, NULL without B */
  double window0, level0;    /* what `r` goes back to */
  double abs_step0;          /* the smallest non-zero ABS threshold that t/T step through */
  /* What is shown. */
  size_t slice;
  double window, level;
  double zoom, pan_x, pan_y; /* pan in framebuffer pixels */
  int show_b;                /* tab: show B instead of A */
  int diff_on;               /* d: overlay on */
  double opacity;            /* o/O: overlay opacity in [0, 1] */
  dbtr_view_threshold thr;
  double diff_range;    /* the top of the overlay's colour scale, in the threshold's unit */
  int diff_range_fixed; /* given by the user: kept when t/T change the threshold */
  int vw, vh; /* viewport, framebuffer pixels */
  /* A drag in progress. */
  int drag_button;
  double drag_x, drag_y;
  int quit;
} dbtr_view_state;

/* Sets up the state for a grid: middle slice, the given window/level (also the reset
 * values), zoom 1, overlay off, opacity 1, threshold "any bit". */
void dbtr_view_state_init(dbtr_view_state *s, const dbtr_grid *grid, int have_b, double window, double level);
/* The differing voxels of the whole volume and the slices that have any, from s->diff_counts
 * (both 0 without it): what the title and the legend say. */
void dbtr_view_diff_totals(const dbtr_view_state *s, size_t *total, size_t *slices);
/* Feeds one key (see the enum above and docs/viewer.md); returns DBTR_VIEW_CH_* flags. */
unsigned dbtr_view_key(dbtr_view_state *s, int key);
/* Wheel: without ctrl, +1 slice per notch up; with ctrl, zoom about the cursor (cx, cy). */
unsigned dbtr_view_scroll(dbtr_view_state *s, double dy, int ctrl, double cx, double cy);
/* Button press (press = 1) or release at (x, y): a left drag pans, a right drag sets
 * window (horizontal) and level (vertical). */
unsigned dbtr_view_button(dbtr_view_state *s, int button, int press, double x, double y);
unsigned dbtr_view_motion(dbtr_view_state *s, double x, double y);

/* Reads the next key of a script such as "n,n,p,up,tab,esc" from *p and advances *p.
 * Returns 1 with *key set, 0 at the end, DBTR_EINVAL (naming the token) for an unknown
 * name. Names: up, down, pageup, pagedown, home, end, tab, esc; or one printable char. */
int dbtr_view_script_next(const char **p, int *key);

/* ---- Title ------------------------------------------------------------------------- */

/* The voxel under the cursor, when there is one. */
typedef struct {
  int valid;
  size_t ix, iy;
  float a, b; /* b only with a second volume */
} dbtr_view_probe;

/* The window title: file, slice, window/level, the diff count of this slice and of the
 * volume, and the values under the cursor (A, B, A-B, ULP distance). */
void dbtr_view_title(const dbtr_view_state *s, const char *name_a, const char *name_b, const dbtr_view_probe *probe,
                     char *buf, size_t n);

/* ---- The legend under a screenshot -------------------------------------------------- */

/* The colour around the slice and under the legend, RGB: blue-grey, which no grey value
 * of the slice can be mistaken for. */
extern const unsigned char dbtr_view_background[3];

/* A character cell of the legend's font: 5 x 7 pixels of glyph, one column of space to
 * its right and two rows below. */
enum { DBTR_VIEW_CHAR_W = 6, DBTR_VIEW_CHAR_H = 9 };
/* Draws text into an RGB image w x h pixels (3 * w bytes a row) with the top left of its
 * first cell at (x, y), each font pixel as scale x scale image pixels; whatever falls
 * outside the image is clipped. Characters outside printable ASCII show as '?'. */
void dbtr_view_text(unsigned char *rgb, int w, int h, int x, int y, int scale, const char *text,
                    const unsigned char colour[3]);

/* The legend is a band under the slice: the file names (which one is shown), the slice
 * index and z, window and level with the values shown black and white, the threshold and
 * the diff counts, and, with the overlay on, its colour key with the scale's numbers. */
enum { DBTR_VIEW_LEGEND_LINES = 6, DBTR_VIEW_LEGEND_COLS = 200, DBTR_VIEW_LEGEND_MIN_W = 320 };
typedef struct {
  int scale;         /* image pixels per font pixel */
  int width, height; /* the band's size in pixels */
  int n_lines;
  char lines[DBTR_VIEW_LEGEND_LINES][DBTR_VIEW_LEGEND_COLS]; /* text, top first, cut to the width */
  int key;                  /* the colour key is drawn (B given, overlay on) */
  int key_x, key_y, key_h;  /* the key's left edge and its bar's rows, in the band */
  int cell_w;               /* one level's cell */
  char label_lo[32], label_in[32], label_hi[32]; /* at the key's ends and its middle: -range, -1 / 0, range */
  char caption[96];         /* what the colours measure */
} dbtr_view_legend;

/* The integer text scale for a slice area slice_w pixels wide: one per
 * DBTR_VIEW_LEGEND_MIN_W pixels, 1 to 4; the band is max(slice_w, LEGEND_MIN_W) wide. */
int dbtr_view_legend_scale(int slice_w);
/* Lays out the legend of state s under a slice area slice_w pixels wide. */
void dbtr_view_legend_layout(dbtr_view_legend *L, const dbtr_view_state *s, const char *name_a, const char *name_b,
                             int slice_w);
/* The left edge, in the band, of the key's cell for a level (-LEVELS..LEVELS but 0, or
 * DBTR_VIEW_LEVEL_NAN); the cell is L->cell_w wide (the NaN one twice that). */
int dbtr_view_legend_cell_x(const dbtr_view_legend *L, int level);
/* Draws the band into rows y0 .. y0 + L->height - 1 of an RGB image L->width wide. */
void dbtr_view_legend_draw(const dbtr_view_legend *L, unsigned char *rgb, int y0);

/* ---- The GLFW/OpenGL session ------------------------------------------------------- */

typedef struct {
  const char *name_a, *name_b; /* file names, for the title and messages */
  dbtr_grid grid;
  const float *a; /* (nz, ny, nx) */
  const float *b; /* (nz, ny, nx) or NULL */
} dbtr_view_input;

typedef struct {
  long slice;            /* first slice shown; -1 for the middle one */
  int have_window, have_level;
  double window, level;  /* used when have_window / have_level; else from the 1st and 99th percentiles */
  int diff;              /* start with the overlay on (needs b) */
  double opacity;        /* overlay opacity, 0..1 (default 1: the colour is a magnitude, shown unblended) */
  dbtr_view_threshold thr;
  int width, height;     /* window size, or a screenshot's slice area, in pixels; 0 for automatic */
  int scale;             /* a screenshot's pixels per voxel along x; 0 for automatic (see dbtr_view_shot_size) */
  double diff_range;     /* the top of the overlay's colour scale; 0: from the volumes (dbtr_view_nice_range) */
  const char *script;    /* keys fed through the input handler before the user's, or NULL */
  int quit_after_script; /* close once the script has run */
  const char *screenshot; /* PNG path: render one frame offscreen, write it, return */
} dbtr_view_opts;

void dbtr_view_opts_default(dbtr_view_opts *o);
/* Opens the viewer (or, with opts->screenshot, renders one frame offscreen in a hidden
 * window and writes the PNG atomically). final, when not NULL, receives the state at the
 * end (its diff_counts is NULL then). DBTR_EIO when no display or no OpenGL 3.3 context. */
int dbtr_view_run(const dbtr_view_input *in, const dbtr_view_opts *opts, dbtr_view_state *final);
/* 1 when a hidden window with an OpenGL 3.3 core context can be made here, else 0. */
int dbtr_view_display_available(void);

/* A screenshot's slice area without --size: `scale` pixels per voxel along x (automatic
 * when 0: the smallest that makes it at least DBTR_VIEW_SHOT_MIN_W wide, so that a small
 * volume is still readable), its height from the voxels' aspect. DBTR_EINVAL, naming
 * --scale, beyond DBTR_VIEW_SHOT_MAX pixels a side. */
enum { DBTR_VIEW_SHOT_MIN_W = 640, DBTR_VIEW_SHOT_MAX = 32768 };
int dbtr_view_shot_size(const dbtr_grid *g, int scale, int *w, int *h);

/* Writes 8-bit RGB rows (top row first, 3 * width bytes each) as a PNG, atomically. */
int dbtr_view_write_png(const char *path, const unsigned char *rgb, int width, int height);

#endif
