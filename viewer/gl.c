/* viewer/gl.c: draws one slice with OpenGL 3.3 core. The volume never goes to the GPU:
 * only the slice on screen does, as three GL_R32F textures (A, B and the diff levels), so a
 * 2304 x 1196 x 45 volume costs three 11 MB uploads, not 500 MB. Window/level and the
 * overlay are applied in the fragment shader on the float values. */
#include "viewer/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recon/error.h"

/* The quad comes from gl_VertexID, so no vertex buffer is needed. u_rect holds the slice
 * rectangle in normalised device coordinates (left, top, right, bottom); texture row 0,
 * the first row of the slice, is at the top. */
static const char *vertex_src =
    "#version 330 core\n"
    "uniform vec4 u_rect;\n"
    "out vec2 v_tex;\n"
    "void main() {\n"
    "  vec2 c = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1));\n"
    "  gl_Position = vec4(mix(u_rect.x, u_rect.z, c.x), mix(u_rect.y, u_rect.w, c.y), 0.0, 1.0);\n"
    "  v_tex = c;\n"
    "}\n";

/* The grey value is dbtr_view_wl_map in float. The mask holds each voxel's level
 * (dbtr_view_diff_level: 0, +-1 .. +-u_levels, u_levels + 1 for NaN), and its colour
 * comes from the table texture, so the shader computes no colour of its own. The mask is
 * sampled nearest when a screen pixel covers at most one voxel; when it covers several
 * (zoomed out), every voxel under the pixel is looked at (up to 16 per axis), so a single
 * differing voxel never vanishes from the overlay: NaN wins, then the largest magnitude
 * (A > B on a tie). The footprint's edges are pulled in by 0.01 voxel: where they fall on
 * a voxel boundary (zoom 1/2, 1/4), float rounding of the texture coordinate must not add
 * the neighbour's voxel; any voxel still overlaps some pixel's footprint by at least half
 * a voxel, so none is lost. */
static const char *fragment_src =
    "#version 330 core\n"
    "in vec2 v_tex;\n"
    "out vec4 frag;\n"
    "uniform sampler2D u_img;\n"
    "uniform sampler2D u_mask;\n"
    "uniform sampler2D u_cmap;\n"
    "uniform float u_lo;\n"
    "uniform float u_window;\n"
    "uniform float u_opacity;\n"
    "uniform vec2 u_foot;\n"
    "uniform int u_levels;\n"
    "float mask_level() {\n"
    "  if (u_foot.x <= 1.0 && u_foot.y <= 1.0) return texture(u_mask, v_tex).r;\n"
    "  ivec2 size = textureSize(u_mask, 0);\n"
    "  vec2 t = v_tex * vec2(size);\n"
    "  vec2 h = 0.5 * max(u_foot, vec2(1.0));\n"
    "  ivec2 a = clamp(ivec2(floor(t - h + 0.01)), ivec2(0), size - 1);\n"
    "  ivec2 b = min(clamp(ivec2(ceil(t + h - 0.01)) - 1, ivec2(0), size - 1), a + 15);\n"
    "  float best = 0.0;\n"
    "  for (int y = a.y; y <= b.y; y++)\n"
    "    for (int x = a.x; x <= b.x; x++) {\n"
    "      float m = texelFetch(u_mask, ivec2(x, y), 0).r;\n"
    "      if (m > float(u_levels)) return m;\n"
    "      if (abs(m) > abs(best) || (m == -best && m > 0.0)) best = m;\n"
    "    }\n"
    "  return best;\n"
    "}\n"
    "void main() {\n"
    "  float v = texture(u_img, v_tex).r;\n"
    "  float g = isnan(v) ? 0.0 : clamp((v - u_lo) / u_window, 0.0, 1.0);\n"
    "  vec3 c = vec3(g);\n"
    "  if (u_opacity > 0.0) {\n"
    "    float m = mask_level();\n"
    "    if (m != 0.0) {\n"
    "      vec3 o = texelFetch(u_cmap, ivec2(int(m) + u_levels, 0), 0).rgb;\n"
    "      c = mix(c, o, u_opacity);\n"
    "    }\n"
    "  }\n"
    "  frag = vec4(c, 1.0);\n"
    "}\n";

static int compile(GLenum type, const char *src, GLuint *out) {
  GLuint sh = glCreateShader(type);
  glShaderSource(sh, 1, &src, NULL);
  glCompileShader(sh);
  GLint ok = 0;
  glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[1024] = "";
    glGetShaderInfoLog(sh, (GLsizei)sizeof log, NULL, log);
    glDeleteShader(sh);
    return dbtr_err(DBTR_EINTERNAL, "viewer: the %s shader does not compile: %s",
                    type == GL_VERTEX_SHADER ? "vertex" : "fragment", log);
  }
  *out = sh;
  return 0;
}

static int link_program(dbtr__view_gl *g) {
  GLuint vs = 0, fs = 0;
  int rc = compile(GL_VERTEX_SHADER, vertex_src, &vs);
  if (!rc) rc = compile(GL_FRAGMENT_SHADER, fragment_src, &fs);
  if (rc) {
    if (vs) glDeleteShader(vs);
    return rc;
  }
  g->prog = glCreateProgram();
  glAttachShader(g->prog, vs);
  glAttachShader(g->prog, fs);
  glLinkProgram(g->prog);
  glDeleteShader(vs);
  glDeleteShader(fs);
  GLint ok = 0;
  glGetProgramiv(g->prog, GL_LINK_STATUS, &ok);
  if (!ok) {
    char log[1024] = "";
    glGetProgramInfoLog(g->prog, (GLsizei)sizeof log, NULL, log);
    return dbtr_err(DBTR_EINTERNAL, "viewer: the shaders do not link: %s", log);
  }
  g->u_rect = glGetUniformLocation(g->prog, "u_rect");
  g->u_lo = glGetUniformLocation(g->prog, "u_lo");
  g->u_window = glGetUniformLocation(g->prog, "u_window");
  g->u_opacity = glGetUniformLocation(g->prog, "u_opacity");
  g->u_foot = glGetUniformLocation(g->prog, "u_foot");
  g->u_img = glGetUniformLocation(g->prog, "u_img");
  g->u_mask = glGetUniformLocation(g->prog, "u_mask");
  g->u_cmap = glGetUniformLocation(g->prog, "u_cmap");
  g->u_levels = glGetUniformLocation(g->prog, "u_levels");
  return 0;
}

int dbtr__gl_init(dbtr__view_gl *g, size_t nx, size_t ny) {
  memset(g, 0, sizeof *g);
  g->nx = nx;
  g->ny = ny;
  GLint max_tex = 0;
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_tex);
  if (nx > (size_t)max_tex || ny > (size_t)max_tex)
    return dbtr_err(DBTR_EINVAL, "viewer: a slice of %zu x %zu voxels exceeds this OpenGL's texture size limit of %d",
                    nx, ny, (int)max_tex);
  int rc = link_program(g);
  if (rc) {
    dbtr__gl_free(g);
    return rc;
  }
  glGenVertexArrays(1, &g->vao);
  glGenTextures(DBTR__N_TEX, g->tex);
  for (int i = 0; i < DBTR__N_TEX; i++) {
    glActiveTexture((GLenum)(GL_TEXTURE0 + i));
    glBindTexture(GL_TEXTURE_2D, g->tex[i]);
    /* Nearest: every screen pixel shows one voxel's own value, never a blend of two. */
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, 0);
    if (i != DBTR__TEX_CMAP)
      glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, (GLsizei)nx, (GLsizei)ny, 0, GL_RED, GL_FLOAT, NULL);
  }
  /* Index level + LEVELS; the NaN level comes right after LEVELS, so it is the last. */
  unsigned char cmap[2 * DBTR_VIEW_LEVELS + 2][4];
  for (int i = 0; i < 2 * DBTR_VIEW_LEVELS + 2; i++) {
    dbtr_view_diff_rgb(i - DBTR_VIEW_LEVELS, cmap[i]);
    cmap[i][3] = 255;
  }
  glActiveTexture((GLenum)(GL_TEXTURE0 + DBTR__TEX_CMAP));
  glBindTexture(GL_TEXTURE_2D, g->tex[DBTR__TEX_CMAP]);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, 2 * DBTR_VIEW_LEVELS + 2, 1, 0, GL_RGBA, GL_UNSIGNED_BYTE, cmap);
  GLenum e = glGetError();
  if (e != GL_NO_ERROR) {
    dbtr__gl_free(g);
    return dbtr_err(DBTR_EIO, "viewer: cannot allocate %zu x %zu float textures (OpenGL error 0x%x)", nx, ny,
                    (unsigned)e);
  }
  return 0;
}

void dbtr__gl_upload(dbtr__view_gl *g, int which, const float *slice) {
  glActiveTexture((GLenum)(GL_TEXTURE0 + which));
  glBindTexture(GL_TEXTURE_2D, g->tex[which]);
  /* Rows of floats are 4-byte aligned whatever nx is. */
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, (GLsizei)g->nx, (GLsizei)g->ny, GL_RED, GL_FLOAT, slice);
}

void dbtr__gl_draw(const dbtr__view_gl *g, const dbtr_view_state *s, int fb_w, int fb_h) {
  glViewport(0, 0, fb_w, fb_h);
  const unsigned char *bg = dbtr_view_background;
  glClearColor(bg[0] / 255.0f, bg[1] / 255.0f, bg[2] / 255.0f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  if (fb_w <= 0 || fb_h <= 0) return;
  dbtr_view_rect r =
      dbtr_view_fit((double)s->nx * s->dx, (double)s->ny * s->dy, fb_w, fb_h, s->zoom, s->pan_x, s->pan_y);
  if (!(r.w > 0.0) || !(r.h > 0.0)) return;
  double w = fb_w, h = fb_h;
  glUseProgram(g->prog);
  glUniform4f(g->u_rect, (float)(2.0 * r.x / w - 1.0), (float)(1.0 - 2.0 * r.y / h),
              (float)(2.0 * (r.x + r.w) / w - 1.0), (float)(1.0 - 2.0 * (r.y + r.h) / h));
  glUniform1f(g->u_lo, (float)(s->level - 0.5 * s->window));
  glUniform1f(g->u_window, (float)s->window);
  glUniform1f(g->u_opacity, (float)(s->have_b && s->diff_on ? s->opacity : 0.0));
  glUniform2f(g->u_foot, (float)((double)s->nx / r.w), (float)((double)s->ny / r.h));
  glUniform1i(g->u_img, s->have_b && s->show_b ? DBTR__TEX_B : DBTR__TEX_A);
  glUniform1i(g->u_mask, DBTR__TEX_MASK);
  glUniform1i(g->u_cmap, DBTR__TEX_CMAP);
  glUniform1i(g->u_levels, DBTR_VIEW_LEVELS); /* levels above it are NaN */
  for (int i = 0; i < DBTR__N_TEX; i++) {
    glActiveTexture((GLenum)(GL_TEXTURE0 + i));
    glBindTexture(GL_TEXTURE_2D, g->tex[i]);
  }
  glBindVertexArray(g->vao);
  glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
  glBindVertexArray(0);
  glUseProgram(0);
}

int dbtr__gl_offscreen(dbtr__view_gl *g, int w, int h) {
  GLint max_rb = 0, max_vp[2] = {0, 0};
  glGetIntegerv(GL_MAX_RENDERBUFFER_SIZE, &max_rb);
  glGetIntegerv(GL_MAX_VIEWPORT_DIMS, max_vp);
  if (w > max_rb || h > max_rb || w > max_vp[0] || h > max_vp[1])
    return dbtr_err(DBTR_EINVAL, "--size %dx%d: larger than this OpenGL renders offscreen (%d x %d at most)", w, h,
                    (int)(max_rb < max_vp[0] ? max_rb : max_vp[0]), (int)(max_rb < max_vp[1] ? max_rb : max_vp[1]));
  glGenFramebuffers(1, &g->fbo);
  glGenRenderbuffers(1, &g->rbo);
  glBindRenderbuffer(GL_RENDERBUFFER, g->rbo);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, w, h);
  glBindFramebuffer(GL_FRAMEBUFFER, g->fbo);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, g->rbo);
  GLenum st = glCheckFramebufferStatus(GL_FRAMEBUFFER);
  if (st != GL_FRAMEBUFFER_COMPLETE)
    return dbtr_err(DBTR_EIO, "viewer: cannot make a %d x %d offscreen framebuffer (status 0x%x)", w, h, (unsigned)st);
  return 0;
}

int dbtr__gl_read_rgb(int w, int h, unsigned char *rgb) {
  size_t row = (size_t)w * 4;
  unsigned char *rgba;
  int rc = dbtr_alloc((void **)&rgba, row, (size_t)h, "screenshot pixels");
  if (rc) return rc;
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
  GLenum e = glGetError();
  if (e != GL_NO_ERROR) {
    free(rgba);
    return dbtr_err(DBTR_EIO, "viewer: cannot read the rendered pixels back (OpenGL error 0x%x)", (unsigned)e);
  }
  /* OpenGL's row 0 is the bottom one; PNG's is the top one. */
  for (size_t y = 0; y < (size_t)h; y++) {
    const unsigned char *src = rgba + ((size_t)h - 1 - y) * row;
    unsigned char *dst = rgb + y * (size_t)w * 3;
    for (size_t x = 0; x < (size_t)w; x++) memcpy(dst + 3 * x, src + 4 * x, 3);
  }
  free(rgba);
  return 0;
}

void dbtr__gl_free(dbtr__view_gl *g) {
  if (g->fbo) glDeleteFramebuffers(1, &g->fbo);
  if (g->rbo) glDeleteRenderbuffers(1, &g->rbo);
  if (g->tex[0]) glDeleteTextures(DBTR__N_TEX, g->tex);
  if (g->vao) glDeleteVertexArrays(1, &g->vao);
  if (g->prog) glDeleteProgram(g->prog);
  g->fbo = g->rbo = g->vao = g->prog = 0;
  memset(g->tex, 0, sizeof g->tex);
}
