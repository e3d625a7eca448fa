/* app/cmd_quality.c: `dbtr quality VOLUME --scan SCAN`: per object, what a physicist measures
 * on the volume (quality/quality.h, docs/quality.md): a table on stdout, and with --report DIR
 * quality.csv, quality.json and asf.svg. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/cli.h"
#include "app/commands.h"
#include "app/validate.h"
#include "io/svg.h"
#include "io/tiff.h"
#include "quality/quality.h"
#include "recon/error.h"

typedef struct {
  const char *scan, *regions, *report;
  int force, quiet;
} quality_args;

static const cli_opt quality_rows[] = {
    {"--scan", 0, CLI_STRING, offsetof(quality_args, scan), "SCAN.h5",
     .help = "the phantom scan whose objects (/phantom) to measure"},
    {"--regions", 0, CLI_STRING, offsetof(quality_args, regions), "FILE.json",
     .help = "regions given by hand instead (docs/quality.md)"},
    {"--report", 0, CLI_STRING, offsetof(quality_args, report), "DIR",
     .help = "also write DIR/quality.csv, quality.json and asf.svg"},
};

static const char *const report_files[] = {"quality.csv", "quality.json", "asf.svg"};

/* A number for the table and the CSV: "inf", "-", or %.*g. */
static const char *fmt(char *buf, size_t len, double x, int digits) {
  if (isnan(x))
    snprintf(buf, len, "-");
  else
    snprintf(buf, len, "%.*g", digits, x);
  return buf;
}

static void print_table(const char *in, const dbtr_quality *q, const dbtr_phantom *p) {
  char a[32], b[32], c[32], d[32];
  printf("%s: %zu objects (%s); contrast and background in 1/mm, slices 0-based\n", in, q->n, p->name);
  printf("%5s %-14s %-14s %6s %6s %12s %12s %10s %9s %s\n", "index", "kind", "material", "centre", "focus", "contrast",
         "expected", "CNR", "FWHM mm", "");
  for (size_t i = 0; i < q->n; i++) {
    const dbtr_quality_object *o = q->obj + i;
    const dbtr_object_info *in_ = p->info + o->object;
    if (!o->measured) {
      printf("%5zu %-14s %-14s  (its centre lies outside the volume)\n", o->object, in_->kind, in_->material);
      continue;
    }
    printf("%5zu %-14s %-14s %6zu %6zu %12s %12s %10s %9s%s\n", o->object, in_->kind, in_->material, o->center_slice,
           o->focus_slice, fmt(a, sizeof a, o->contrast, 6), fmt(b, sizeof b, o->expected, 6),
           fmt(c, sizeof c, o->cnr, 5), fmt(d, sizeof d, o->fwhm, 4), o->partial ? "  partial volume" : "");
  }
}

static int write_csv(const char *dir, const dbtr_quality *q, const dbtr_phantom *p) {
  dbtr_atomic_file af;
  int rc;
  FILE *f = app_report_open(dir, report_files[0], &af, &rc);
  if (!f) return rc;
  fprintf(f, "index,kind,material,center_x,center_y,center_z,center_slice,focus_slice,partial,object_voxels,"
             "background_voxels,mean_object,mean_background,sd_background,contrast,expected_contrast,cnr,asf_fwhm_mm\n");
  char v[7][32];
  for (size_t i = 0; i < q->n; i++) {
    const dbtr_quality_object *o = q->obj + i;
    const dbtr_shape *s = p->shapes + o->object;
    if (!o->measured) continue;
    fprintf(f, "%zu,%s,%s,%.9g,%.9g,%.9g,%zu,%zu,%d,%zu,%zu,%s,%s,%s,%s,%s,%s,%s\n", o->object, p->info[o->object].kind,
            p->info[o->object].material, s->center[0], s->center[1], s->center[2], o->center_slice, o->focus_slice,
            o->partial, o->n_object, o->n_background, fmt(v[0], 32, o->mean_object, 9),
            fmt(v[1], 32, o->mean_background, 9), fmt(v[2], 32, o->sd_background, 9), fmt(v[3], 32, o->contrast, 9),
            fmt(v[4], 32, o->expected, 9), fmt(v[5], 32, o->cnr, 9), fmt(v[6], 32, o->fwhm, 9));
  }
  return app_report_close(f, &af);
}

static int write_json(const char *dir, const dbtr_quality *q, const dbtr_phantom *p, const dbtr_grid *g) {
  char *text = NULL;
  int rc = dbtr_quality_to_json(q, p, g, &text);
  dbtr_atomic_file af;
  FILE *f = rc ? NULL : app_report_open(dir, report_files[1], &af, &rc);
  if (f) {
    fprintf(f, "%s\n", text);
    rc = app_report_close(f, &af);
  }
  free(text);
  return rc;
}

/* One line per measured object: its ASF over the slices. */
static int write_plot(const char *dir, const dbtr_quality *q, const dbtr_phantom *p) {
  dbtr_svg_series *s = calloc(q->n ? q->n : 1, sizeof *s);
  char(*names)[48] = calloc(q->n ? q->n : 1, sizeof *names);
  if (!s || !names) {
    free(s);
    free(names);
    return dbtr_err(DBTR_ENOMEM, "report: out of memory");
  }
  size_t n = 0;
  for (size_t i = 0; i < q->n; i++) {
    const dbtr_quality_object *o = q->obj + i;
    if (!o->measured) continue;
    snprintf(names[n], sizeof names[n], "%zu %s", o->object, p->info[o->object].kind);
    s[n].name = names[n];
    s[n].y = o->asf;
    n++;
  }
  dbtr_svg_plot plot = {.title = "artifact spread function: contrast in each slice / in-focus contrast",
                        .x_label = "slice (1-based)",
                        .y_label = "ASF",
                        .n_points = q->nz};
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, report_files[2]);
  int rc = dbtr_svg_write(path, &plot, s, n);
  free(s);
  free(names);
  return rc;
}

int dbtr_cmd_quality(int argc, char **argv) {
  const char *cmd = "quality", *in;
  quality_args a = {0};
  const cli_group groups[] = {{NULL, CLI_ROWS(quality_rows), &a}, cli_force_group(&a.force),
                              cli_quiet_group(&a.quiet)};
  const cli_command spec = {
      .name = cmd,
      .usage = "VOLUME.tif (--scan SCAN.h5 | --regions FILE.json) [--report DIR]",
      .about = "Measures each object of a phantom scan (or each region given by hand) in a reconstructed\n"
               "volume: its in-focus slice, contrast, CNR (SDNR) against the background region, and the\n"
               "artifact spread function with its FWHM in mm (docs/quality.md).\n",
      .operand = "volume", .min_operands = 1, .max_operands = 1,
      CLI_GROUPS(groups),
  };
  int ex;
  if (!cli_parse(&spec, argc, argv, &in, &ex)) return ex;
  if (!a.scan == !a.regions) return cli_usage_error(cmd, "give exactly one of --scan SCAN.h5 and --regions FILE.json");
  char path[1100];
  /* The folder first, so that the check of its files can look in it; an existing one is fine. */
  if (a.report && mkdir(a.report, 0755) != 0 && errno != EEXIST)
    return cli_fail(cmd, dbtr_err(DBTR_EIO, "--report %s: cannot create the folder: %s", a.report, strerror(errno)));
  for (size_t i = 0; a.report && i < sizeof report_files / sizeof report_files[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", a.report, report_files[i]);
    if ((ex = cli_check_output(cmd, path, &in, 1, a.force))) return ex;
  }
  dbtr_phantom p;
  dbtr_quality q = {0};
  dbtr_grid grid;
  float *vol = NULL;
  int rc = dbtr_quality_objects(&p, a.scan, a.regions);
  if (rc) return cli_fail(cmd, rc);
  rc = dbtr_tiff_read(in, &grid, &vol);
  if (!rc) rc = dbtr_quality_measure(&q, vol, DBTR_PREC_FLOAT, &grid, &p);
  if (!rc) print_table(in, &q, &p);
  if (!rc && a.report) rc = write_csv(a.report, &q, &p);
  if (!rc && a.report) rc = write_json(a.report, &q, &p, &grid);
  if (!rc && a.report) rc = write_plot(a.report, &q, &p);
  for (size_t i = 0; !rc && a.report && i < sizeof report_files / sizeof report_files[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", a.report, report_files[i]);
    cli_wrote(cmd, a.quiet, path, "the quality report");
  }
  if (rc) ex = cli_fail(cmd, rc);
  dbtr_quality_free(&q);
  dbtr_phantom_free(&p);
  free(vol);
  return ex;
}
