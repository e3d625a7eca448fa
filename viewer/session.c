/* viewer/session.c: the GLFW side of `dbtr view`: a window (or a hidden one for a
 * screenshot), its callbacks, and the loop that redraws when something changed. Every
 * event goes through the state machine of viewer/input.c; this file only translates GLFW
 * events into it and does the work its change flags ask for. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recon/error.h"
#include "viewer/internal.h"
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

/* The initial window comes from these percentiles of A, measured on at most this many
 * voxels: 2^20 samples put the 1st percentile within about 0.01 percentile points of
 * the full volume's and sort in well under 0.1 s. */
#define PCT_LO 0.01
#define PCT_HI 0.99
#define PCT_SAMPLES ((size_t)1 << 20)
/* An interactive window opens at most this large. */
#define WIN_MAX_W 1280.0
#define WIN_MAX_H 900.0

typedef struct {
  const dbtr_view_input *in;
  dbtr_view_state st;
  size_t *counts;       /* (nz) differing voxels per slice, NULL without B */
  float *mask;          /* (ny, nx) classes of the current slice, NULL without B */
  GLFWwindow *win;
  dbtr__view_gl gl;
  int stale;            /* textures hold another slice or threshold */
  int redraw;
  double cur_x, cur_y;  /* cursor in framebuffer pixels */
  int cursor_in;
} session;

/* GLFW reports errors through a callback; the last message goes into dbtr_err texts. */
static char glfw_msg[256];

static void on_glfw_error(int code, const char *msg) {
  snprintf(glfw_msg, sizeof glfw_msg, "%s (GLFW error 0x%x)", msg ? msg : "?", (unsigned)code);
}

/* Counts the differences under the current threshold; the colour scale follows the
 * largest of them unless the user fixed it. */
static void count(session *S) {
  const dbtr_view_input *in = S->in;
  double max_mag = 0.0;
  dbtr_view_count_diffs(in->a, in->b, in->grid.nx, in->grid.ny, in->grid.nz, &S->st.thr, S->counts, &max_mag);
  if (!S->st.diff_range_fixed) S->st.diff_range = dbtr_view_nice_range(max_mag, S->st.thr.mode);
}

static void apply(session *S, unsigned ch) {
  if ((ch & DBTR_VIEW_CH_THRESHOLD) && S->counts) {
    count(S);
    S->stale = 1;
  }
  if (ch & DBTR_VIEW_CH_SLICE) S->stale = 1;
  if ((ch & DBTR_VIEW_CH_QUIT) && S->win) glfwSetWindowShouldClose(S->win, GLFW_TRUE);
  if (ch) S->redraw = 1;
}

/* Puts the current slice of A, B and its diff mask into the textures. */
static void upload(session *S) {
  const dbtr_view_input *in = S->in;
  size_t per = in->grid.nx * in->grid.ny, off = S->st.slice * per;
  dbtr__gl_upload(&S->gl, DBTR__TEX_A, in->a + off);
  if (in->b) {
    dbtr__gl_upload(&S->gl, DBTR__TEX_B, in->b + off);
    dbtr_view_diff_mask(in->a + off, in->b + off, per, &S->st.thr, S->st.diff_range, S->mask);
    dbtr__gl_upload(&S->gl, DBTR__TEX_MASK, S->mask);
  }
  S->stale = 0;
}

static void update_title(session *S) {
  dbtr_view_probe probe = {0, 0, 0, 0.0f, 0.0f};
  const dbtr_view_state *s = &S->st;
  if (S->cursor_in) {
    dbtr_view_rect r = dbtr_view_fit((double)s->nx * s->dx, (double)s->ny * s->dy, s->vw, s->vh, s->zoom, s->pan_x,
                                     s->pan_y);
    probe.valid = dbtr_view_pick(&r, s->nx, s->ny, S->cur_x, S->cur_y, &probe.ix, &probe.iy);
    if (probe.valid) {
      size_t i = (s->slice * s->ny + probe.iy) * s->nx + probe.ix;
      probe.a = S->in->a[i];
      if (S->in->b) probe.b = S->in->b[i];
    }
  }
  char title[768];
  dbtr_view_title(s, S->in->name_a, S->in->name_b ? S->in->name_b : "", &probe, title, sizeof title);
  glfwSetWindowTitle(S->win, title);
}

/* ---- GLFW callbacks: translate, then hand to the state machine --------------------- */

static session *of(GLFWwindow *w) { return (session *)glfwGetWindowUserPointer(w); }

static void on_key(GLFWwindow *w, int key, int scancode, int action, int mods) {
  (void)scancode;
  (void)mods;
  if (action != GLFW_PRESS && action != GLFW_REPEAT) return;
  int k;
  switch (key) {
  case GLFW_KEY_UP: k = DBTR_VIEW_KEY_UP; break;
  case GLFW_KEY_DOWN: k = DBTR_VIEW_KEY_DOWN; break;
  case GLFW_KEY_PAGE_UP: k = DBTR_VIEW_KEY_PAGE_UP; break;
  case GLFW_KEY_PAGE_DOWN: k = DBTR_VIEW_KEY_PAGE_DOWN; break;
  case GLFW_KEY_HOME: k = DBTR_VIEW_KEY_HOME; break;
  case GLFW_KEY_END: k = DBTR_VIEW_KEY_END; break;
  case GLFW_KEY_TAB: k = DBTR_VIEW_KEY_TAB; break;
  case GLFW_KEY_ESCAPE: k = DBTR_VIEW_KEY_ESCAPE; break;
  default: return; /* printable keys arrive through on_char, with shift and layout applied */
  }
  session *S = of(w);
  apply(S, dbtr_view_key(&S->st, k));
}

static void on_char(GLFWwindow *w, unsigned int cp) {
  if (cp >= 128 || !isprint((int)cp)) return;
  session *S = of(w);
  apply(S, dbtr_view_key(&S->st, (int)cp));
}

/* Cursor positions come in window coordinates; the viewport is in framebuffer pixels,
 * which differ on high-DPI screens. */
static void to_framebuffer(GLFWwindow *w, double *x, double *y) {
  int ww, wh, fw, fh;
  glfwGetWindowSize(w, &ww, &wh);
  glfwGetFramebufferSize(w, &fw, &fh);
  if (ww > 0 && wh > 0) {
    *x *= (double)fw / ww;
    *y *= (double)fh / wh;
  }
}

static void on_cursor(GLFWwindow *w, double x, double y) {
  session *S = of(w);
  to_framebuffer(w, &x, &y);
  S->cur_x = x;
  S->cur_y = y;
  S->cursor_in = 1;
  apply(S, dbtr_view_motion(&S->st, x, y));
  S->redraw = 1; /* the title shows the value under the cursor */
}

static void on_enter(GLFWwindow *w, int entered) {
  session *S = of(w);
  S->cursor_in = entered;
  S->redraw = 1;
}

static void on_button(GLFWwindow *w, int button, int action, int mods) {
  (void)mods;
  int b = button == GLFW_MOUSE_BUTTON_LEFT ? DBTR_VIEW_BUTTON_LEFT
          : button == GLFW_MOUSE_BUTTON_RIGHT ? DBTR_VIEW_BUTTON_RIGHT
                                              : DBTR_VIEW_BUTTON_NONE;
  if (b == DBTR_VIEW_BUTTON_NONE) return;
  double x, y;
  glfwGetCursorPos(w, &x, &y);
  to_framebuffer(w, &x, &y);
  session *S = of(w);
  apply(S, dbtr_view_button(&S->st, b, action == GLFW_PRESS, x, y));
}

static void on_scroll(GLFWwindow *w, double dx, double dy) {
  (void)dx;
  session *S = of(w);
  int ctrl = glfwGetKey(w, GLFW_KEY_LEFT_CONTROL) == GLFW_PRESS || glfwGetKey(w, GLFW_KEY_RIGHT_CONTROL) == GLFW_PRESS;
  apply(S, dbtr_view_scroll(&S->st, dy, ctrl, S->cur_x, S->cur_y));
}

static void on_resize(GLFWwindow *w, int fw, int fh) {
  session *S = of(w);
  S->st.vw = fw;
  S->st.vh = fh;
  S->redraw = 1;
}

/* ---- Setting up ------------------------------------------------------------------- */

static int check_input(const dbtr_view_input *in, const dbtr_view_opts *o) {
  const dbtr_grid *g = &in->grid;
  if (!in->a || g->nx == 0 || g->ny == 0 || g->nz == 0)
    return dbtr_err(DBTR_EINVAL, "%s: an empty volume cannot be viewed", in->name_a ? in->name_a : "volume");
  if (!(g->dx > 0.0) || !(g->dy > 0.0) || !isfinite(g->dx) || !isfinite(g->dy))
    return dbtr_err(DBTR_EINVAL, "%s: voxel size %g x %g mm: must be positive", in->name_a, g->dx, g->dy);
  if (o->diff && !in->b) return dbtr_err(DBTR_EINVAL, "--diff needs a second volume to compare with");
  if (o->slice >= 0 && (size_t)o->slice >= g->nz)
    return dbtr_err(DBTR_EINVAL, "--slice %ld: %s has slices 0 to %zu", o->slice, in->name_a, g->nz - 1);
  if (o->have_window && !(o->window > 0.0 && isfinite(o->window)))
    return dbtr_err(DBTR_EINVAL, "--window %g: must be positive", o->window);
  if (!(o->opacity >= 0.0 && o->opacity <= 1.0))
    return dbtr_err(DBTR_EINVAL, "--opacity %g: must be between 0 and 1", o->opacity);
  if (o->width < 0 || o->height < 0) return dbtr_err(DBTR_EINVAL, "--size %dx%d: must be positive", o->width, o->height);
  if (o->scale < 0) return dbtr_err(DBTR_EINVAL, "--scale %d: must be positive", o->scale);
  if (o->scale > 0 && (o->width > 0 || o->height > 0))
    return dbtr_err(DBTR_EINVAL, "--scale %d and --size %dx%d: give one of them", o->scale, o->width, o->height);
  if (!(o->diff_range >= 0.0) || !isfinite(o->diff_range))
    return dbtr_err(DBTR_EINVAL, "--diff-range %g: must be positive", o->diff_range);
  return 0;
}

/* Window/level from the options, the rest from A's percentiles; counts; the first slice. */
static int prepare(session *S, const dbtr_view_opts *o) {
  const dbtr_view_input *in = S->in;
  const dbtr_grid *g = &in->grid;
  double window = o->window, level = o->level;
  if (!o->have_window || !o->have_level) {
    double lo, hi, w, l;
    size_t n = g->nx * g->ny * g->nz;
    int rc = dbtr_view_percentiles(in->a, n, PCT_SAMPLES, PCT_LO, PCT_HI, &lo, &hi);
    if (rc) { /* no finite value: any window shows it, as NaN draws black */
      lo = hi = 0.0;
      dbtr_err_clear();
    }
    dbtr_view_auto_window(lo, hi, &w, &l);
    if (!o->have_window) window = w;
    if (!o->have_level) level = l;
  }
  dbtr_view_state_init(&S->st, g, in->b != NULL, window, level);
  if (o->slice >= 0) S->st.slice = (size_t)o->slice;
  S->st.diff_on = o->diff;
  S->st.opacity = o->opacity;
  S->st.thr = o->thr;
  S->st.diff_range = o->diff_range;
  S->st.diff_range_fixed = o->diff_range > 0.0;
  if (in->b) {
    int rc = dbtr_alloc((void **)&S->counts, g->nz, sizeof *S->counts, "viewer diff counts");
    if (!rc) rc = dbtr_alloc((void **)&S->mask, g->nx * g->ny, sizeof *S->mask, "viewer diff mask");
    if (rc) return rc;
    count(S);
    S->st.diff_counts = S->counts;
  }
  S->stale = 1;
  S->redraw = 1;
  return 0;
}

/* An interactive window: the slice at its natural aspect, scaled to fit WIN_MAX_W x
 * WIN_MAX_H; a screenshot's slice area: dbtr_view_shot_size. An explicit --size wins. */
static int pick_size(const dbtr_view_input *in, const dbtr_view_opts *o, int *w, int *h) {
  if (o->width > 0 && o->height > 0) {
    *w = o->width;
    *h = o->height;
    return 0;
  }
  if (o->screenshot) {
    int rc = dbtr_view_shot_size(&in->grid, o->scale, w, h);
    if (rc) return rc;
  } else {
    double nw = (double)in->grid.nx, nh = (double)in->grid.ny * in->grid.dy / in->grid.dx;
    double s = fmin(WIN_MAX_W / nw, WIN_MAX_H / nh);
    *w = (int)fmax(1.0, round(nw * s));
    *h = (int)fmax(1.0, round(nh * s));
  }
  if (o->width > 0) *w = o->width;
  if (o->height > 0) *h = o->height;
  return 0;
}

/* OpenGL 3.3 core, which the shaders need; forward compatible, which macOS requires of core contexts. */
static void context_hints(int visible) {
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_VISIBLE, visible ? GLFW_TRUE : GLFW_FALSE);
}

static int open_window(session *S, const dbtr_view_opts *o, int w, int h) {
  glfw_msg[0] = '\0';
  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit())
    return dbtr_err(DBTR_EIO,
                    "cannot open a display for the viewer (is DISPLAY set? where there is none, run it under "
                    "`xvfb-run -a`, also for --screenshot): %s",
                    glfw_msg);
  context_hints(o->screenshot == NULL);
  /* A screenshot draws into its own framebuffer object; the hidden window only carries the
   * context, so it stays small whatever --size asks for. */
  char title[768];
  dbtr_view_title(&S->st, S->in->name_a, S->in->name_b ? S->in->name_b : "", NULL, title, sizeof title);
  S->win = o->screenshot ? glfwCreateWindow(16, 16, title, NULL, NULL) : glfwCreateWindow(w, h, title, NULL, NULL);
  if (!S->win) return dbtr_err(DBTR_EIO, "cannot create an OpenGL 3.3 core window for the viewer: %s", glfw_msg);
  glfwMakeContextCurrent(S->win);
  glfwSetWindowUserPointer(S->win, S);
  return 0;
}

static void install_callbacks(session *S) {
  glfwSetKeyCallback(S->win, on_key);
  glfwSetCharCallback(S->win, on_char);
  glfwSetCursorPosCallback(S->win, on_cursor);
  glfwSetCursorEnterCallback(S->win, on_enter);
  glfwSetMouseButtonCallback(S->win, on_button);
  glfwSetScrollCallback(S->win, on_scroll);
  glfwSetFramebufferSizeCallback(S->win, on_resize);
  glfwGetFramebufferSize(S->win, &S->st.vw, &S->st.vh);
  glfwSwapInterval(1);
}

/* Feeds the script's keys through the same state machine as typed ones; stops at a quit. */
static int run_script(session *S, const char *script) {
  const char *p = script;
  int key, rc;
  while (!S->st.quit && (rc = dbtr_view_script_next(&p, &key)) == 1) apply(S, dbtr_view_key(&S->st, key));
  return rc < 0 ? rc : 0;
}

/* The slice area (w x h, rendered offscreen) on top, centred when the legend is wider;
 * the legend below it. */
static int screenshot(session *S, const dbtr_view_opts *o, int w, int h) {
  int rc = dbtr__gl_offscreen(&S->gl, w, h);
  if (rc) return rc;
  upload(S);
  dbtr__gl_draw(&S->gl, &S->st, w, h);
  dbtr_view_legend L;
  dbtr_view_legend_layout(&L, &S->st, S->in->name_a, S->in->name_b, w);
  int pw = L.width, ph = h + L.height, x0 = (pw - w) / 2;
  if (ph > DBTR_VIEW_SHOT_MAX)
    return dbtr_err(DBTR_EINVAL, "--size %dx%d: with its legend the picture would be %d pixels high (%d at most)", w,
                    h, ph, DBTR_VIEW_SHOT_MAX);
  unsigned char *slice = NULL, *rgb = NULL;
  rc = dbtr_alloc((void **)&slice, (size_t)w * 3, (size_t)h, "screenshot");
  if (!rc) rc = dbtr_alloc((void **)&rgb, (size_t)pw * 3, (size_t)ph, "screenshot with legend");
  if (!rc) rc = dbtr__gl_read_rgb(w, h, slice);
  if (!rc) {
    for (size_t i = 0; i < (size_t)pw * (size_t)h; i++) memcpy(rgb + 3 * i, dbtr_view_background, 3);
    for (size_t y = 0; y < (size_t)h; y++)
      memcpy(rgb + 3 * (y * (size_t)pw + (size_t)x0), slice + 3 * y * (size_t)w, 3 * (size_t)w);
    dbtr_view_legend_draw(&L, rgb, h);
    rc = dbtr_view_write_png(o->screenshot, rgb, pw, ph);
  }
  free(slice);
  free(rgb);
  return rc;
}

static void loop(session *S, int quit_now) {
  if (quit_now) glfwSetWindowShouldClose(S->win, GLFW_TRUE);
  do {
    if (S->redraw) {
      if (S->stale) upload(S);
      dbtr__gl_draw(&S->gl, &S->st, S->st.vw, S->st.vh);
      glfwSwapBuffers(S->win);
      update_title(S);
      S->redraw = 0;
    }
    if (glfwWindowShouldClose(S->win)) break;
    glfwWaitEvents();
  } while (1);
}

void dbtr_view_opts_default(dbtr_view_opts *o) {
  memset(o, 0, sizeof *o);
  o->slice = -1;
  o->opacity = 1.0;
  o->thr.mode = DBTR_VIEW_THR_ULP;
}

int dbtr_view_run(const dbtr_view_input *in, const dbtr_view_opts *opts, dbtr_view_state *final) {
  session S;
  memset(&S, 0, sizeof S);
  S.in = in;
  int rc = check_input(in, opts);
  if (!rc) rc = prepare(&S, opts);
  int w = 0, h = 0, gl_ready = 0;
  if (!rc) rc = pick_size(in, opts, &w, &h);
  if (!rc) rc = open_window(&S, opts, w, h);
  if (!rc) rc = dbtr__gl_init(&S.gl, in->grid.nx, in->grid.ny);
  if (!rc) gl_ready = 1;
  if (!rc && opts->screenshot) {
    S.st.vw = w;
    S.st.vh = h;
  } else if (!rc) {
    install_callbacks(&S);
  }
  if (!rc && opts->script) rc = run_script(&S, opts->script);
  if (!rc && opts->screenshot)
    rc = screenshot(&S, opts, w, h);
  else if (!rc)
    loop(&S, S.st.quit || opts->quit_after_script);
  if (gl_ready) dbtr__gl_free(&S.gl);
  if (S.win) glfwDestroyWindow(S.win);
  glfwTerminate(); /* GLFW allows this before or without a successful glfwInit */
  if (final) {
    *final = S.st;
    final->diff_counts = NULL;
  }
  free(S.counts);
  free(S.mask);
  return rc;
}

int dbtr_view_display_available(void) {
  glfw_msg[0] = '\0';
  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) return 0;
  context_hints(0);
  GLFWwindow *w = glfwCreateWindow(16, 16, "dbtr view probe", NULL, NULL);
  int ok = w != NULL;
  if (w) glfwDestroyWindow(w);
  glfwTerminate();
  return ok;
}
