/* app/main.c: `dbtr COMMAND [options]`: dispatches to app/cmd_*.c. */
#include <stdio.h>
#include <string.h>

#include "app/cli.h"
#include "app/commands.h"
#include "io/atomic_file.h"
#include "io/scan.h"
#include "recon/version.h"

typedef struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} command;

static const command commands[] = {
    {"demo", dbtr_cmd_demo, "simulate a small phantom scan, reconstruct it, report the error against the truth"},
    {"phantom", dbtr_cmd_phantom, "simulate a scan of an analytic phantom (and write its ground truth)"},
    {"import", dbtr_cmd_import, "read DBT projections from DICOM into a scan file"},
    {"project", dbtr_cmd_project, "forward-project a TIFF volume into a scan file, optionally with Poisson noise"},
    {"recon", dbtr_cmd_recon, "reconstruct a scan file with ML-EM on the CPU or the GPU"},
    {"validate", dbtr_cmd_validate, "compare GPU modes with the CPU reference, iteration by iteration"},
    {"quality", dbtr_cmd_quality, "measure each object's contrast, CNR and depth spread (ASF) in a volume"},
    {"info", dbtr_cmd_info, "describe what a scan file holds"},
    {"view", dbtr_cmd_view, "look through volume slices, with a diff overlay of two volumes"},
};

static void usage(FILE *f) {
  fprintf(f,
          "dbtr %s: ML-EM reconstruction of digital breast tomosynthesis on the CPU and NVIDIA GPUs\n\n"
          "usage: dbtr COMMAND [options]      (dbtr help COMMAND, or dbtr COMMAND --help, for each)\n\ncommands:\n",
          DBTR_VERSION_STRING);
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\nexit codes: 0 ok, 2 bad input or arguments, 3 I/O error, 4 out of memory, 5 the GPU failed,\n"
             "6 results differ where identity was required (validate), 7 no usable GPU,\n"
             "70 internal error (docs/errors.md)\n");
}

static const command *find(const char *name) {
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(name, commands[i].name)) return &commands[i];
  fprintf(stderr, "dbtr: unknown command '%s' (see dbtr --help)\n", name);
  return NULL;
}

int main(int argc, char **argv) {
  /* An interrupted write removes its temporary and exits 128 + signal; a file-size limit
   * becomes an error naming the file (io/atomic_file.h). */
  dbtr_atomic_cleanup_on_signals();
  dbtr_scan_skip_exit_cleanup();
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || (!strcmp(argv[1], "help") && argc == 2)) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("dbtr %s\n", DBTR_VERSION_STRING);
    return 0;
  }
  if (!strcmp(argv[1], "help")) {
    /* `dbtr help CMD` is `dbtr CMD --help`: the command prints its own table. */
    if (argc > 3) {
      fprintf(stderr, "dbtr help: one command at a time (dbtr help COMMAND)\n");
      return 2;
    }
    const command *c = find(argv[2]);
    char help_flag[] = "--help";
    char *args[] = {argv[2], help_flag, NULL};
    return c ? c->run(2, args) : 2;
  }
  const command *c = find(argv[1]);
  if (c) cli_on_interrupt(c->name); /* a signal says what it interrupted, never nothing at all */
  return c ? c->run(argc - 1, argv + 1) : 2;
}
