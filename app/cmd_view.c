/* app/cmd_view.c: `dbtr view VOLUME.tif [OTHER.tif]`: the slice viewer (docs/viewer.md).
 * Parses the options, reads the volumes and hands them to viewer/; with --screenshot it
 * renders one frame offscreen into a PNG instead of opening a window. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli.h"
#include "app/commands.h"

#ifdef DBTR_HAVE_VIEWER
#include "io/tiff.h"
#include "recon/error.h"
#include "viewer/viewer.h"

/* --size WxH, into the options' width and height. */
static int convert_size(const char *text, void *target, char *why, size_t why_len) {
  dbtr_view_opts *o = target;
  char *end;
  long a = strtol(text, &end, 10), b = 0;
  int ok = end != text && *end == 'x';
  if (ok) {
    const char *p = end + 1;
    b = strtol(p, &end, 10);
    ok = end != p && *end == '\0';
  }
  if (!ok || a < 1 || b < 1 || a > 32768 || b > 32768) {
    snprintf(why, why_len, "'%s' is not WIDTHxHEIGHT in pixels (1 to 32768 each)", text);
    return 1;
  }
  o->width = (int)a;
  o->height = (int)b;
  return 0;
}

typedef struct {
  const char *files[2];
  size_t slice;
  int slice_given, force, quiet, have_abs, have_ulp, have_scale, have_size, have_range;
  dbtr_view_opts o;
} view_args;

/* The defaults not given here (opacity, threshold mode) are the viewer's
 * (dbtr_view_opts_default); the help repeats them. */
static const cli_opt view_rows[] = {
    {"--slice", 0, CLI_SIZE, offsetof(view_args, slice), "K",
     .help = "first slice shown, 0-based (default: the middle one)",
     .min = 0, .max = 1099511627776.0, .given = CLI_GIVEN(view_args, slice_given)},
    {"--window", 0, CLI_DOUBLE, offsetof(view_args, o.window), "W",
     .help = "grey mapping: L - W/2 is black, L + W/2 white\n(default: the 1st and 99th percentiles of VOLUME)",
     .min = 0.0, .max = 1e300, .flags = CLI_ABOVE_MIN, .given = CLI_GIVEN(view_args, o.have_window)},
    {"--level", 0, CLI_DOUBLE, offsetof(view_args, o.level), "L",
     .help = "grey level at the window's centre (see --window)",
     .min = -1e300, .max = 1e300, .given = CLI_GIVEN(view_args, o.have_level)},
    {"--diff", 0, CLI_FLAG, offsetof(view_args, o.diff), .help = "start with the diff overlay on (needs OTHER.tif)"},
    {"--threshold-abs", 0, CLI_DOUBLE, offsetof(view_args, o.thr.abs), "X", .help = "voxels differ where |A - B| > X",
     .min = 0.0, .max = 1e300, .given = CLI_GIVEN(view_args, have_abs)},
    {"--threshold-ulp", 0, CLI_U64, offsetof(view_args, o.thr.ulp), "N",
     .help = "voxels differ where A and B are more than N floats apart\n(default: any bit differs)",
     .given = CLI_GIVEN(view_args, have_ulp)},
    {"--diff-range", 0, CLI_DOUBLE, offsetof(view_args, o.diff_range), "R",
     .help = "the overlay's colour scale ends at R (ULP or |A - B|, as the threshold)\n"
             "(default: the largest difference, rounded up)",
     .min = 0.0, .max = 1e300, .flags = CLI_ABOVE_MIN, .given = CLI_GIVEN(view_args, have_range)},
    {"--opacity", 0, CLI_DOUBLE, offsetof(view_args, o.opacity), "A", .help = "overlay opacity, 0..1 (default 1)",
     .min = 0.0, .max = 1.0},
    {"--size", 0, CLI_CUSTOM, offsetof(view_args, o), "WxH",
     .help = "window size, or the screenshot's slice area, in pixels", .convert = convert_size,
     .given = CLI_GIVEN(view_args, have_size)},
    {"--scale", 0, CLI_INT, offsetof(view_args, o.scale), "N",
     .help = "screenshot: N pixels per voxel (default: enough for 640 pixels)", .min = 1, .max = 32768,
     .given = CLI_GIVEN(view_args, have_scale)},
    {"--screenshot", 0, CLI_STRING, offsetof(view_args, o.screenshot), "FILE.png",
     .help = "render one frame offscreen into FILE.png and exit"},
    {"--script", 0, CLI_STRING, offsetof(view_args, o.script), "KEYS",
     .help = "keys to press first, e.g. \"n,n,d\" (names: up, down, pageup,\npagedown, home, end, tab, esc)"},
};

/* Checks what the options need of each other; returns 0 or an exit code. */
static int check_args(const char *cmd, view_args *a) {
  int two = a->files[1] != NULL;
  if (a->have_abs && a->have_ulp) return cli_usage_error(cmd, "give --threshold-abs or --threshold-ulp, not both");
  if (!two && (a->o.diff || a->have_abs || a->have_ulp || a->have_range))
    return cli_usage_error(cmd, "%s needs a second volume to compare with",
                           a->o.diff ? "--diff"
                           : a->have_abs ? "--threshold-abs"
                           : a->have_ulp ? "--threshold-ulp"
                                         : "--diff-range");
  if (a->have_scale && a->have_size) return cli_usage_error(cmd, "give --scale or --size, not both");
  if (a->have_scale && !a->o.screenshot) return cli_usage_error(cmd, "--scale sets a screenshot's size: add --screenshot");
  if (a->o.script) {
    const char *p = a->o.script;
    int key, rc;
    while ((rc = dbtr_view_script_next(&p, &key)) == 1) {
    }
    if (rc < 0) return cli_fail(cmd, rc);
  }
  if (a->o.screenshot) return cli_check_output(cmd, a->o.screenshot, a->files, two ? 2 : 1, a->force);
  return 0;
}

static int load(const char *cmd, view_args *a, dbtr_view_input *in, float **va, float **vb) {
  dbtr_grid gb;
  int rc = dbtr_tiff_read(a->files[0], &in->grid, va);
  if (rc) return cli_fail(cmd, rc);
  in->name_a = a->files[0];
  in->a = *va;
  if (!a->files[1]) return 0;
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
  const char *cmd = "view";
  view_args a;
  memset(&a, 0, sizeof a);
  dbtr_view_opts_default(&a.o);
  const cli_group groups[] = {{NULL, CLI_ROWS(view_rows), &a}, cli_force_group(&a.force), cli_quiet_group(&a.quiet)};
  const cli_command spec = {
      .name = cmd,
      .usage = "VOLUME.tif [OTHER.tif] [options]",
      .about = "Shows one z slice at a time; with OTHER.tif, `d` overlays where the two differ\n"
               "(red: VOLUME > OTHER, blue: VOLUME < OTHER, pale to pure with the size of the\n"
               "difference; yellow: NaN in one of them). A screenshot carries a legend: the files,\n"
               "slice and z, window and level, the counts and the colour key with its scale.\n",
      .operand = "volume", .min_operands = 1, .max_operands = 2,
      CLI_GROUPS(groups),
      .epilog = "keys: wheel, Up/Down, PageUp/PageDown, Home/End: slices; n/p: next/previous slice\n"
                "with differences; w/W, l/L or right-drag: window and level; +/- or ctrl+wheel: zoom;\n"
                "left-drag: pan; r: reset; d: overlay; tab: show A or B; t/T: threshold up/down;\n"
                "o/O: overlay opacity; q or Esc: quit.\n",
  };
  int ex;
  if (!cli_parse(&spec, argc, argv, a.files, &ex)) return ex;
  if (a.slice_given) a.o.slice = (long)a.slice;
  if (a.have_abs) a.o.thr.mode = DBTR_VIEW_THR_ABS;
  if (a.have_ulp) a.o.thr.mode = DBTR_VIEW_THR_ULP;
  if ((ex = check_args(cmd, &a))) return ex;
  dbtr_view_input in;
  memset(&in, 0, sizeof in);
  float *va = NULL, *vb = NULL;
  ex = load(cmd, &a, &in, &va, &vb);
  if (!ex) {
    int rc = dbtr_view_run(&in, &a.o, NULL);
    if (rc) ex = cli_fail(cmd, rc);
    else if (a.o.screenshot) cli_wrote(cmd, a.quiet, a.o.screenshot, "slice view, PNG");
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
