/* viewer/input.c: the input state machine. Keys, wheel and drags change a dbtr_view_state
 * and say what changed; the GLFW callbacks, the --script option and the tests all feed
 * events through these functions, so a scripted session behaves as a real one. */
#include "viewer/viewer.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

#include "recon/error.h"

/* One key press steps the window by this factor and the level by this share of the window. */
#define WINDOW_STEP 1.25
#define LEVEL_STEP 0.1
#define ZOOM_STEP 1.25
#define ZOOM_MIN (1.0 / 64.0)
#define ZOOM_MAX 256.0
/* A right drag of 200 px scales the window by e, and one of 500 px moves the level by one
 * window: fine enough to hit a value, fast enough to cross the range in one drag. */
#define DRAG_WINDOW_PX 200.0
#define DRAG_LEVEL_PX 500.0
/* The largest ULP threshold t reaches: 2^31 ULP already spans most of float's range. */
#define ULP_MAX ((uint64_t)1 << 31)

void dbtr_view_state_init(dbtr_view_state *s, const dbtr_grid *grid, int have_b, double window, double level) {
  memset(s, 0, sizeof *s);
  s->nx = grid->nx;
  s->ny = grid->ny;
  s->nz = grid->nz;
  s->dx = grid->dx;
  s->dy = grid->dy;
  s->dz = grid->dz;
  s->z0 = grid->origin[2];
  s->have_b = have_b;
  s->window = s->window0 = window > 0.0 && isfinite(window) ? window : 1.0;
  s->level = s->level0 = isfinite(level) ? level : 0.0;
  /* t starts the absolute threshold a million times below the window: about the size of
   * one float rounding step on values the window spans. */
  s->abs_step0 = pow(10.0, floor(log10(s->window)) - 6.0);
  s->slice = grid->nz / 2;
  s->zoom = 1.0;
  s->opacity = 1.0;
  s->thr.mode = DBTR_VIEW_THR_ULP;
}

static unsigned goto_slice(dbtr_view_state *s, long k) {
  if (s->nz == 0) return 0;
  if (k < 0) k = 0;
  if ((size_t)k >= s->nz) k = (long)(s->nz - 1);
  if ((size_t)k == s->slice) return 0;
  s->slice = (size_t)k;
  return DBTR_VIEW_CH_SLICE;
}

/* Zooms by f keeping the viewport point (cx, cy) fixed on the slice. */
static unsigned zoom_about(dbtr_view_state *s, double f, double cx, double cy) {
  double z = s->zoom * f;
  if (z < ZOOM_MIN) z = ZOOM_MIN;
  if (z > ZOOM_MAX) z = ZOOM_MAX;
  f = z / s->zoom;
  /* The slice's centre sits at viewport centre + pan; a point at offset d from it moves
   * to offset d * f, so the pan that keeps (cx, cy) still follows from that. */
  double mx = 0.5 * s->vw, my = 0.5 * s->vh;
  s->pan_x = cx - mx - (cx - mx - s->pan_x) * f;
  s->pan_y = cy - my - (cy - my - s->pan_y) * f;
  s->zoom = z;
  return DBTR_VIEW_CH_VIEW;
}

static unsigned set_window(dbtr_view_state *s, double w) {
  if (!(w > 0.0) || !isfinite(w)) return 0;
  s->window = w;
  return DBTR_VIEW_CH_WL;
}

static unsigned step_threshold(dbtr_view_state *s, int up) {
  dbtr_view_threshold *t = &s->thr;
  if (t->mode == DBTR_VIEW_THR_ULP) {
    if (up)
      t->ulp = t->ulp == 0 ? 1 : (t->ulp >= ULP_MAX ? t->ulp : t->ulp * 2);
    else
      t->ulp /= 2;
  } else if (up) {
    t->abs = t->abs == 0.0 ? s->abs_step0 : t->abs * 10.0;
  } else {
    /* Below the first step the next one down is "any bit". */
    t->abs = t->abs / 10.0 < s->abs_step0 * 0.5 ? 0.0 : t->abs / 10.0;
  }
  return DBTR_VIEW_CH_THRESHOLD;
}

static unsigned step_opacity(dbtr_view_state *s, double d) {
  /* Rounded to tenths so that repeated steps land on 0.3, not 0.30000000000000004. */
  double o = round((s->opacity + d) * 10.0) / 10.0;
  s->opacity = o < 0.0 ? 0.0 : (o > 1.0 ? 1.0 : o);
  return DBTR_VIEW_CH_VIEW;
}

static unsigned diff_key(dbtr_view_state *s, int key) {
  if (!s->have_b) return 0;
  switch (key) {
  case 'd': s->diff_on = !s->diff_on; return DBTR_VIEW_CH_VIEW;
  case DBTR_VIEW_KEY_TAB: s->show_b = !s->show_b; return DBTR_VIEW_CH_VIEW;
  case 'n':
  case 'p': {
    long k = dbtr_view_next_diff(s->diff_counts, s->nz, s->slice, key == 'n' ? 1 : -1);
    return k < 0 ? 0 : goto_slice(s, k);
  }
  case 'o': return step_opacity(s, -0.1);
  case 'O': return step_opacity(s, 0.1);
  case 't': return step_threshold(s, 1);
  case 'T': return step_threshold(s, 0);
  default: return 0;
  }
}

unsigned dbtr_view_key(dbtr_view_state *s, int key) {
  long k = (long)s->slice, page = s->nz >= 20 ? (long)(s->nz / 10) : 1;
  switch (key) {
  case DBTR_VIEW_KEY_UP: return goto_slice(s, k + 1);
  case DBTR_VIEW_KEY_DOWN: return goto_slice(s, k - 1);
  case DBTR_VIEW_KEY_PAGE_UP: return goto_slice(s, k + page);
  case DBTR_VIEW_KEY_PAGE_DOWN: return goto_slice(s, k - page);
  case DBTR_VIEW_KEY_HOME: return goto_slice(s, 0);
  case DBTR_VIEW_KEY_END: return goto_slice(s, (long)s->nz - 1);
  case 'w': return set_window(s, s->window / WINDOW_STEP);
  case 'W': return set_window(s, s->window * WINDOW_STEP);
  case 'l': s->level -= LEVEL_STEP * s->window; return DBTR_VIEW_CH_WL;
  case 'L': s->level += LEVEL_STEP * s->window; return DBTR_VIEW_CH_WL;
  case '+':
  case '=': return zoom_about(s, ZOOM_STEP, 0.5 * s->vw, 0.5 * s->vh);
  case '-': return zoom_about(s, 1.0 / ZOOM_STEP, 0.5 * s->vw, 0.5 * s->vh);
  case 'r':
    s->window = s->window0;
    s->level = s->level0;
    s->zoom = 1.0;
    s->pan_x = s->pan_y = 0.0;
    return DBTR_VIEW_CH_WL | DBTR_VIEW_CH_VIEW;
  case 'q':
  case DBTR_VIEW_KEY_ESCAPE: s->quit = 1; return DBTR_VIEW_CH_QUIT;
  default: return diff_key(s, key);
  }
}

unsigned dbtr_view_scroll(dbtr_view_state *s, double dy, int ctrl, double cx, double cy) {
  if (dy == 0.0 || !isfinite(dy)) return 0;
  if (ctrl) return zoom_about(s, pow(ZOOM_STEP, dy), cx, cy);
  /* One slice per event whatever its size: touchpads send many small ones, and a slice
   * per event is what a mouse wheel notch gives too. */
  return goto_slice(s, (long)s->slice + (dy > 0.0 ? 1 : -1));
}

unsigned dbtr_view_button(dbtr_view_state *s, int button, int press, double x, double y) {
  if (press) {
    s->drag_button = button;
    s->drag_x = x;
    s->drag_y = y;
  } else if (button == s->drag_button) {
    s->drag_button = DBTR_VIEW_BUTTON_NONE;
  }
  return 0;
}

unsigned dbtr_view_motion(dbtr_view_state *s, double x, double y) {
  double ddx = x - s->drag_x, ddy = y - s->drag_y;
  s->drag_x = x;
  s->drag_y = y;
  if (s->drag_button == DBTR_VIEW_BUTTON_LEFT) {
    s->pan_x += ddx;
    s->pan_y += ddy;
    return DBTR_VIEW_CH_VIEW;
  }
  if (s->drag_button == DBTR_VIEW_BUTTON_RIGHT) {
    /* Right: wider window; up: higher level (a darker image), as in most PACS viewers. */
    set_window(s, s->window * exp(ddx / DRAG_WINDOW_PX));
    s->level -= ddy / DRAG_LEVEL_PX * s->window;
    return DBTR_VIEW_CH_WL;
  }
  return 0;
}

static const struct {
  const char *name;
  int key;
} key_names[] = {
    {"up", DBTR_VIEW_KEY_UP},     {"down", DBTR_VIEW_KEY_DOWN}, {"pageup", DBTR_VIEW_KEY_PAGE_UP},
    {"pagedown", DBTR_VIEW_KEY_PAGE_DOWN}, {"home", DBTR_VIEW_KEY_HOME}, {"end", DBTR_VIEW_KEY_END},
    {"tab", DBTR_VIEW_KEY_TAB},   {"esc", DBTR_VIEW_KEY_ESCAPE},
};

int dbtr_view_script_next(const char **p, int *key) {
  const char *c = *p;
  while (*c == ',' || isspace((unsigned char)*c)) c++;
  if (!*c) {
    *p = c;
    return 0;
  }
  const char *end = c;
  while (*end && *end != ',') end++;
  const char *last = end;
  while (last > c && isspace((unsigned char)last[-1])) last--;
  size_t len = (size_t)(last - c);
  *p = end;
  if (len == 1 && isprint((unsigned char)*c)) {
    *key = (unsigned char)*c;
    return 1;
  }
  for (size_t i = 0; i < sizeof key_names / sizeof key_names[0]; i++) {
    if (strlen(key_names[i].name) == len && strncmp(c, key_names[i].name, len) == 0) {
      *key = key_names[i].key;
      return 1;
    }
  }
  return dbtr_err(DBTR_EINVAL,
                  "--script: unknown key '%.*s' (use one character or up, down, pageup, pagedown, home, end, tab, esc)",
                  (int)len, c);
}
