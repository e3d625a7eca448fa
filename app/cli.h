/* app/cli.h: what every command shares: option parsing with messages that name the flag,
 * backend selection, progress lines and exit codes. No numerics here. */
#ifndef DBTR_CLI_H
#define DBTR_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "io/scan.h"
#include "recon/backend.h"
#include "recon/geom.h"

/* Options are `--name value` or `--name=value`; flags are `--name`. A command walks argv
 * with cli_next() and asks for values with the cli_*_value() functions, which print
 * "dbtr CMD: --flag: ..." and return non-zero on a bad value. */
typedef struct {
  const char *cmd; /* for messages */
  int argc, i;
  char **argv;
  const char *opt;     /* current option name, e.g. "--iterations" */
  const char *inline_value; /* value after '=' if given that way */
  int error;
} cli;

void cli_init(cli *c, const char *cmd, int argc, char **argv);
/* Next argument: returns 1 with c->opt set for an option, 2 with *positional set for a
 * positional argument, 0 at the end. */
int cli_next(cli *c, const char **positional);
int cli_is(const cli *c, const char *name);
int cli_string(cli *c, const char **out);
int cli_size(cli *c, size_t *out, size_t min, size_t max);
int cli_int(cli *c, int *out, int min, int max);
int cli_double(cli *c, double *out, double min, double max);
int cli_u64(cli *c, unsigned long long *out);
/* Three comma separated numbers ("nx,ny,nz" or "x,y,z"). */
int cli_triple(cli *c, double out[3]);
/* Reports an unknown option or extra argument; returns 2. */
int cli_unknown(cli *c);
/* Prints "dbtr CMD: message" for a library error and returns its exit code. */
int cli_fail(const char *cmd, int rc);
/* Prints "dbtr CMD: <formatted>" and returns 2 (bad arguments). */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Backend choice as the user gave it. */
typedef struct {
  const char *backend; /* "cpu", "gpu" or "auto" */
  const char *mode;    /* GPU mode name */
  const char *precision; /* CPU: "float" or "double"; NULL means: follow the GPU mode */
  int threads;
} cli_backend_opts;

/* Parses --backend, --mode, --precision, --threads; returns 1 if the option was one of
 * them (c->error set on a bad value), else 0. */
int cli_backend_option(cli *c, cli_backend_opts *o);
/* Creates the backend: gpu fails without a GPU; auto uses the GPU when there is one and
 * falls back to the CPU with a warning when the GPU cannot be used. */
int cli_backend_create(const char *cmd, const cli_backend_opts *o, const dbtr_problem *prob, dbtr_backend **out,
                       int quiet);

/* dbtr_scan_read with a guard (app/scan_guard.c): a crash inside libhdf5 on a damaged file,
 * or a header that is not read within DBTR_SCAN_HEADER_SECONDS (default 60), ends the
 * process with exit code 2 and one line naming the file ("... reading the file crashed
 * (SIGSEGV) ..." or "... did not finish in 60 s ..."), not a core dump or a hang. Returns
 * dbtr_scan_read's code otherwise. */
int cli_read_scan(const char *cmd, dbtr_scan *s, const char *path);

/* Wall clock in seconds. */
double cli_now(void);
/* 1 if path names an existing file. */
int cli_exists(const char *path);
/* Refuses to overwrite an existing output unless force, and an output that is also an
 * input (same file); returns 0 or an exit code. */
int cli_check_output(const char *cmd, const char *out, const char *const *inputs, size_t n_inputs, int force);

#endif
