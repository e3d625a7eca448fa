/* viewer/legend.c: the legend under a screenshot, drawn on the CPU into the picture read
 * back from OpenGL. A screenshot goes into reports, where the window's title is lost: the
 * band says which files, which slice, which grey mapping and what the overlay's colours
 * measure. It is plain C (no display needed), so tests check its text and its key. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "viewer/font.h"
#include "viewer/viewer.h"

static const unsigned char text_colour[3] = {235, 235, 235};

void dbtr_view_text(unsigned char *rgb, int w, int h, int x, int y, int scale, const char *text,
                    const unsigned char colour[3]) {
  for (; *text; text++, x += DBTR_VIEW_CHAR_W * scale) {
    const unsigned char *g = dbtr__view_glyph((unsigned char)*text);
    for (int r = 0; r < DBTR__GLYPH_ROWS; r++)
      for (int c = 0; c < DBTR__GLYPH_COLS; c++) {
        if (!(g[r] >> (DBTR__GLYPH_COLS - 1 - c) & 1)) continue;
        for (int py = y + r * scale; py < y + (r + 1) * scale; py++)
          for (int px = x + c * scale; px < x + (c + 1) * scale; px++)
            if (px >= 0 && px < w && py >= 0 && py < h) memcpy(rgb + 3 * ((size_t)py * (size_t)w + (size_t)px), colour, 3);
      }
  }
}

int dbtr_view_legend_scale(int slice_w) {
  int s = slice_w / DBTR_VIEW_LEGEND_MIN_W;
  return s < 1 ? 1 : (s > 4 ? 4 : s);
}

/* A magnitude on the key: ULPs as a whole number (2^k beyond ten million, where digits
 * stop being readable), |A - B| with 3 significant digits. */
static void fmt_mag(char *buf, size_t n, const char *sign, double m, dbtr_view_thr_mode mode) {
  if (mode == DBTR_VIEW_THR_ABS)
    snprintf(buf, n, "%s%.3g", sign, m);
  else if (m < 1e7)
    snprintf(buf, n, "%s%.0f", sign, m);
  else
    snprintf(buf, n, "%s2^%d", sign, (int)lround(log2(m)));
}

/* "A: name (shown)", the name cut from the left ("...tail") to fit cols characters: the
 * end of a path (the file) says more than its start. */
static void name_line(char *out, const char *prefix, const char *name, const char *suffix, int cols) {
  size_t fixed = strlen(prefix) + strlen(suffix), len = strlen(name);
  size_t room = cols > (int)fixed + 3 ? (size_t)cols - fixed : 3;
  if (room >= DBTR_VIEW_LEGEND_COLS - fixed) room = DBTR_VIEW_LEGEND_COLS - 1 - fixed;
  if (len <= room)
    snprintf(out, DBTR_VIEW_LEGEND_COLS, "%s%s%s", prefix, name, suffix);
  else
    snprintf(out, DBTR_VIEW_LEGEND_COLS, "%s...%s%s", prefix, name + len - (room - 3), suffix);
}

static void text_lines(dbtr_view_legend *L, const dbtr_view_state *s, const char *name_a, const char *name_b,
                       int cols) {
  int b_shown = s->have_b && s->show_b;
  name_line(L->lines[L->n_lines++], "A: ", name_a, s->have_b && !b_shown ? " (shown)" : "", cols);
  if (s->have_b) name_line(L->lines[L->n_lines++], "B: ", name_b, b_shown ? " (shown)" : "", cols);
  snprintf(L->lines[L->n_lines++], DBTR_VIEW_LEGEND_COLS, "slice %zu of 0-%zu, z %.4g mm", s->slice,
           s->nz ? s->nz - 1 : 0, s->z0 + (double)s->slice * s->dz);
  snprintf(L->lines[L->n_lines++], DBTR_VIEW_LEGEND_COLS, "W %.4g L %.4g: black %.4g, white %.4g", s->window,
           s->level, s->level - 0.5 * s->window, s->level + 0.5 * s->window);
  if (s->have_b && s->diff_counts) {
    size_t total, slices;
    dbtr_view_diff_totals(s, &total, &slices);
    char thr[64];
    dbtr_view_threshold_str(&s->thr, thr, sizeof thr);
    snprintf(L->lines[L->n_lines++], DBTR_VIEW_LEGEND_COLS, "differ: %s, overlay %s", thr, s->diff_on ? "on" : "off");
    snprintf(L->lines[L->n_lines++], DBTR_VIEW_LEGEND_COLS, "%zu voxels here, %zu in %zu slices", s->diff_counts[s->slice],
             total, slices);
  }
  /* Lines other than the names are a few dozen characters; a very narrow band cuts them. */
  for (int i = 0; i < L->n_lines; i++)
    if (cols >= 0 && cols < DBTR_VIEW_LEGEND_COLS) L->lines[i][cols] = '\0';
}

void dbtr_view_legend_layout(dbtr_view_legend *L, const dbtr_view_state *s, const char *name_a, const char *name_b,
                             int slice_w) {
  memset(L, 0, sizeof *L);
  int ts = dbtr_view_legend_scale(slice_w), margin = 4 * ts, line_h = DBTR_VIEW_CHAR_H * ts;
  L->scale = ts;
  L->width = slice_w > DBTR_VIEW_LEGEND_MIN_W ? slice_w : DBTR_VIEW_LEGEND_MIN_W;
  text_lines(L, s, name_a ? name_a : "", name_b ? name_b : "", (L->width - 2 * margin) / (DBTR_VIEW_CHAR_W * ts));
  int y = margin + L->n_lines * line_h;
  L->key = s->have_b && s->diff_on;
  if (L->key) {
    L->key_x = margin;
    L->key_y = y + ts;
    L->key_h = 8 * ts;
    L->cell_w = 4 * ts;
    dbtr_view_thr_mode mode = s->thr.mode;
    fmt_mag(L->label_lo, sizeof L->label_lo, "-", s->diff_range, mode);
    fmt_mag(L->label_hi, sizeof L->label_hi, "+", s->diff_range, mode);
    snprintf(L->label_in, sizeof L->label_in, "%s", mode == DBTR_VIEW_THR_ULP ? "1" : "0");
    snprintf(L->caption, sizeof L->caption, "A - B%s; red A > B, blue A < B",
             mode == DBTR_VIEW_THR_ULP ? " in ULP, log scale" : ", linear");
    y = L->key_y + L->key_h + 2 * ts + 2 * line_h;
  }
  L->height = y + margin;
}

/* The key: the LEVELS blue cells (A < B, the largest magnitude at the left), a gap two
 * cells wide at A = B, the LEVELS red cells, then the NaN cell three cells further. */
int dbtr_view_legend_cell_x(const dbtr_view_legend *L, int level) {
  int c = L->cell_w, n = DBTR_VIEW_LEVELS;
  if (level == DBTR_VIEW_LEVEL_NAN) return L->key_x + (2 * n + 5) * c;
  if (level < 0) return L->key_x + (level + n) * c;
  return L->key_x + (n + 2 + level - 1) * c;
}

static void fill(unsigned char *rgb, int w, int x0, int y0, int x1, int y1, const unsigned char c[3]) {
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1 && x < w; x++) memcpy(rgb + 3 * ((size_t)y * (size_t)w + (size_t)x), c, 3);
}

void dbtr_view_legend_draw(const dbtr_view_legend *L, unsigned char *rgb, int y0) {
  int ts = L->scale, w = L->width, h = y0 + L->height, margin = 4 * ts, line_h = DBTR_VIEW_CHAR_H * ts;
  fill(rgb, w, 0, y0, w, h, dbtr_view_background);
  for (int i = 0; i < L->n_lines; i++) dbtr_view_text(rgb, w, h, margin, y0 + margin + i * line_h, ts, L->lines[i], text_colour);
  if (!L->key) return;
  int ky = y0 + L->key_y;
  unsigned char c[3];
  for (int level = -DBTR_VIEW_LEVELS; level <= DBTR_VIEW_LEVEL_NAN; level++) {
    if (level == 0) continue;
    int x = dbtr_view_legend_cell_x(L, level), cw = level == DBTR_VIEW_LEVEL_NAN ? 2 * L->cell_w : L->cell_w;
    dbtr_view_diff_rgb(level, c);
    fill(rgb, w, x, ky, x + cw, ky + L->key_h, c);
  }
  int cw = DBTR_VIEW_CHAR_W * ts, ly = ky + L->key_h + 2 * ts;
  int blue_l = dbtr_view_legend_cell_x(L, -DBTR_VIEW_LEVELS), red_r = dbtr_view_legend_cell_x(L, DBTR_VIEW_LEVELS) + L->cell_w;
  int mid = dbtr_view_legend_cell_x(L, -1) + 2 * L->cell_w; /* the centre of the gap */
  dbtr_view_text(rgb, w, h, blue_l, ly, ts, L->label_lo, text_colour);
  dbtr_view_text(rgb, w, h, mid - (int)strlen(L->label_in) * cw / 2, ly, ts, L->label_in, text_colour);
  dbtr_view_text(rgb, w, h, red_r - (int)strlen(L->label_hi) * cw, ly, ts, L->label_hi, text_colour);
  dbtr_view_text(rgb, w, h, dbtr_view_legend_cell_x(L, DBTR_VIEW_LEVEL_NAN), ly, ts, "NaN", text_colour);
  dbtr_view_text(rgb, w, h, blue_l, ly + line_h, ts, L->caption, text_colour);
}
