/* app/cmd_view.c: `dbtr view VOLUME.tif [OTHER.tif]`: the slice viewer (docs/viewer.md).
 * Parses the options, reads the volumes and hands them to viewer/; with --screenshot it
 * renders one frame offscreen into a PNG instead of opening a window. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli.h"
#include "app/commands.h"

#ifdef DBTR_HAVE_VIEWER
#include "io/tiff.h"
#include "recon/error.h"
#include "viewer/viewer.h"

static void usage(void) {
  printf("usage: dbtr view VOLUME.tif [OTHER.tif] [options]\n\n"
         "Shows one z slice at a time; with OTHER.tif, `d` overlays where the two differ\n"
         "(red: VOLUME > OTHER, blue: VOLUME < OTHER, yellow: NaN in one of them).\n\n"
         "options:\n"
         "  --slice K              first slice shown, 0-based (default: the middle one)\n"
         "  --window W --level L   grey mapping: L - W/2 is black, L + W/2 white\n"
         "                         (default: the 1st and 99th percentiles of VOLUME)\n"
         "  --diff                 start with the diff overlay on (needs OTHER.tif)\n"
         "  --threshold-abs X      voxels differ where |A - B| > X\n"
         "  --threshold-ulp N      voxels differ where A and B are more than N floats apart\n"
         "                         (default: any bit differs)\n"
         "  --opacity A            overlay opacity, 0..1 (default 0.5)\n"
         "  --size WxH             window or screenshot size in pixels\n"
         "  --screenshot FILE.png  render one frame offscreen into FILE.png and exit\n"
         "  --force                overwrite an existing screenshot\n"
         "  --script KEYS          keys to press first, e.g. \"n,n,d\" (names: up, down, pageup,\n"
         "                         pagedown, home, end, tab, esc)\n\n"
         "keys: wheel, Up/Down, PageUp/PageDown, Home/End: slices; n/p: next/previous slice\n"
         "with differences; w/W, l/L or right-drag: window and level; +/- or ctrl+wheel: zoom;\n"
         "left-drag: pan; r: reset; d: overlay; tab: show A or B; t/T: threshold up/down;\n"
         "o/O: overlay opacity; q or Esc: quit.\n");
}

static int parse_size(cli *c, int *w, int *h) {
  const char *s;
  if (cli_string(c, &s)) return c->error;
  char *end;
  long a = strtol(s, &end, 10), b = 0;
  int ok = end != s && *end == 'x';
  if (ok) {
    const char *p = end + 1;
    b = strtol(p, &end, 10);
    ok = end != p && *end == '\0';
  }
  if (!ok || a < 1 || b < 1 || a > 32768 || b > 32768) {
    c->error = cli_usage_error(c->cmd, "--size: '%s' is not WIDTHxHEIGHT in pixels (1 to 32768 each)", s);
    return c->error;
  }
  *w = (int)a;
  *h = (int)b;
  return 0;
}

typedef struct {
  const char *files[2];
  int n_files, force, have_abs, have_ulp;
  dbtr_view_opts o;
} view_args;

/* One option; returns 1 if it was a known one (c->error set on a bad value), else 0. */
static int parse_option(cli *c, view_args *a) {
  dbtr_view_opts *o = &a->o;
  size_t slice;
  unsigned long long ulp;
  if (cli_is(c, "--slice")) {
    if (!cli_size(c, &slice, 0, (size_t)1 << 40)) o->slice = (long)slice;
  } else if (cli_is(c, "--window")) {
    o->have_window = !cli_double(c, &o->window, 0.0, 1e300);
    if (o->have_window && !(o->window > 0.0)) c->error = cli_usage_error(c->cmd, "--window: must be positive");
  } else if (cli_is(c, "--level")) {
    o->have_level = !cli_double(c, &o->level, -1e300, 1e300);
  } else if (cli_is(c, "--diff")) {
    o->diff = 1;
  } else if (cli_is(c, "--threshold-abs")) {
    a->have_abs = !cli_double(c, &o->thr.abs, 0.0, 1e300);
    o->thr.mode = DBTR_VIEW_THR_ABS;
  } else if (cli_is(c, "--threshold-ulp")) {
    a->have_ulp = !cli_u64(c, &ulp);
    o->thr.ulp = (uint64_t)ulp;
    o->thr.mode = DBTR_VIEW_THR_ULP;
  } else if (cli_is(c, "--opacity")) {
    cli_double(c, &o->opacity, 0.0, 1.0);
  } else if (cli_is(c, "--size")) {
    parse_size(c, &o->width, &o->height);
  } else if (cli_is(c, "--screenshot")) {
    cli_string(c, &o->screenshot);
  } else if (cli_is(c, "--script")) {
    cli_string(c, &o->script);
  } else if (cli_is(c, "--force")) {
    a->force = 1;
  } else {
    return 0;
  }
  return 1;
}

/* Checks what the options need of each other; returns 0 or an exit code. */
static int check_args(const char *cmd, view_args *a) {
  if (a->n_files == 0) return cli_usage_error(cmd, "no volume given (dbtr view VOLUME.tif [OTHER.tif])");
  int two = a->n_files == 2;
  if (a->have_abs && a->have_ulp) return cli_usage_error(cmd, "give --threshold-abs or --threshold-ulp, not both");
  if (!two && (a->o.diff || a->have_abs || a->have_ulp))
    return cli_usage_error(cmd, "%s needs a second volume to compare with",
                           a->o.diff ? "--diff" : (a->have_abs ? "--threshold-abs" : "--threshold-ulp"));
  if (a->o.script) {
    const char *p = a->o.script;
    int key, rc;
    while ((rc = dbtr_view_script_next(&p, &key)) == 1) {
    }
    if (rc < 0) return cli_fail(cmd, rc);
  }
  if (a->o.screenshot) return cli_check_output(cmd, a->o.screenshot, a->files, (size_t)a->n_files, a->force);
  return 0;
}

static int load(const char *cmd, view_args *a, dbtr_view_input *in, float **va, float **vb) {
  dbtr_grid gb;
  int rc = dbtr_tiff_read(a->files[0], &in->grid, va);
  if (rc) return cli_fail(cmd, rc);
  in->name_a = a->files[0];
  in->a = *va;
  if (a->n_files < 2) return 0;
  rc = dbtr_tiff_read(a->files[1], &gb, vb);
  if (!rc) rc = dbtr_view_check_pair(a->files[0], &in->grid, a->files[1], &gb);
  if (rc) return cli_fail(cmd, rc);
  if (gb.dx != in->grid.dx || gb.dy != in->grid.dy || gb.dz != in->grid.dz)
    fprintf(stderr, "dbtr %s: warning: %s has voxels of %g x %g x %g mm, %s of %g x %g x %g mm; showing %s's\n", cmd,
            a->files[0], in->grid.dx, in->grid.dy, in->grid.dz, a->files[1], gb.dx, gb.dy, gb.dz, a->files[0]);
  in->name_b = a->files[1];
  in->b = *vb;
  return 0;
}

int dbtr_cmd_view(int argc, char **argv) {
  const char *cmd = "view", *pos;
  view_args a;
  memset(&a, 0, sizeof a);
  dbtr_view_opts_default(&a.o);
  cli c;
  cli_init(&c, cmd, argc, argv);
  int k;
  while ((k = cli_next(&c, &pos))) {
    if (k == 2) {
      if (a.n_files == 2) return cli_usage_error(cmd, "unexpected argument '%s': at most two volumes", pos);
      a.files[a.n_files++] = pos;
    } else if (cli_is(&c, "--help") || cli_is(&c, "-h")) {
      usage();
      return 0;
    } else if (!parse_option(&c, &a)) {
      return cli_unknown(&c);
    }
  }
  if (c.error) return c.error;
  int ex = check_args(cmd, &a);
  if (ex) return ex;
  dbtr_view_input in;
  memset(&in, 0, sizeof in);
  float *va = NULL, *vb = NULL;
  ex = load(cmd, &a, &in, &va, &vb);
  if (!ex) {
    int rc = dbtr_view_run(&in, &a.o, NULL);
    if (rc) ex = cli_fail(cmd, rc);
  }
  free(va);
  free(vb);
  return ex;
}

#else

int dbtr_cmd_view(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "dbtr view: this dbtr was built without the viewer (configure with -DDBTR_WITH_VIEWER=ON and "
                  "GLFW 3, OpenGL and libpng installed)\n");
  return 2;
}

#endif
