/* viewer/internal.h: what viewer/session.c (GLFW) and viewer/gl.c (OpenGL drawing) share.
 *
 * OpenGL 3.3 core functions are called through libGL's prototypes (GL_GLEXT_PROTOTYPES):
 * on Linux libGL (glvnd) exports every core entry point and dispatches it to the current
 * context, so no loader is needed. */
#ifndef DBTR_VIEWER_INTERNAL_H
#define DBTR_VIEWER_INTERNAL_H

#define GL_GLEXT_PROTOTYPES 1
#include <GL/gl.h>
#include <GL/glext.h>

#include "viewer/viewer.h"

/* Texture units: the slice of A, of B, the diff levels of this slice (the first three
 * (ny, nx) GL_R32F), and the overlay's colour table (2 LEVELS + 2 RGBA8 texels: levels
 * -LEVELS..LEVELS, then NaN), filled once from dbtr_view_diff_rgb. */
enum { DBTR__TEX_A = 0, DBTR__TEX_B = 1, DBTR__TEX_MASK = 2, DBTR__TEX_CMAP = 3, DBTR__N_TEX = 4 };

typedef struct {
  GLuint prog, vao;
  GLuint tex[DBTR__N_TEX];
  GLint u_rect, u_lo, u_window, u_opacity, u_foot, u_img, u_mask, u_cmap, u_levels;
  GLuint fbo, rbo; /* the offscreen target of a screenshot, 0 otherwise */
  size_t nx, ny;
} dbtr__view_gl;

/* Compiles the shaders and allocates the three slice textures; needs a current context. */
int dbtr__gl_init(dbtr__view_gl *g, size_t nx, size_t ny);
/* Uploads one slice (ny * nx floats) into texture `which`. */
void dbtr__gl_upload(dbtr__view_gl *g, int which, const float *slice);
/* Draws the state into the bound framebuffer of fb_w x fb_h pixels. */
void dbtr__gl_draw(const dbtr__view_gl *g, const dbtr_view_state *s, int fb_w, int fb_h);
/* Creates and binds an RGBA8 framebuffer object of w x h pixels. */
int dbtr__gl_offscreen(dbtr__view_gl *g, int w, int h);
/* Reads the bound framebuffer into rgb (3 * w * h bytes), top row first. */
int dbtr__gl_read_rgb(int w, int h, unsigned char *rgb);
/* Deletes every GL object; safe to call twice. Needs the context still current. */
void dbtr__gl_free(dbtr__view_gl *g);

#endif
