/* app/cli.c: option parsing, backend choice, messages. */
#include "app/cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/atomic_file.h"
#include "recon/error.h"

void cli_init(cli *c, const char *cmd, int argc, char **argv) {
  memset(c, 0, sizeof *c);
  c->cmd = cmd;
  c->argc = argc;
  c->argv = argv;
  c->i = 1;
}

int cli_next(cli *c, const char **positional) {
  static _Thread_local char name[128];
  if (c->error || c->i >= c->argc) return 0;
  const char *a = c->argv[c->i++];
  c->inline_value = NULL;
  if (a[0] == '-' && a[1] != '\0' && strcmp(a, "-") != 0) {
    const char *eq = strchr(a, '=');
    if (eq && a[1] == '-') {
      size_t n = (size_t)(eq - a);
      if (n >= sizeof name) n = sizeof name - 1;
      memcpy(name, a, n);
      name[n] = '\0';
      c->opt = name;
      c->inline_value = eq + 1;
    } else {
      c->opt = a;
    }
    return 1;
  }
  *positional = a;
  return 2;
}

int cli_is(const cli *c, const char *name) { return strcmp(c->opt, name) == 0; }

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "dbtr %s: ", cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n");
  return 2;
}

int cli_string(cli *c, const char **out) {
  if (c->inline_value) {
    *out = c->inline_value;
    return 0;
  }
  if (c->i >= c->argc) {
    c->error = cli_usage_error(c->cmd, "%s needs a value", c->opt);
    return c->error;
  }
  *out = c->argv[c->i++];
  return 0;
}

int cli_double(cli *c, double *out, double min, double max) {
  const char *s = NULL;
  if (cli_string(c, &s)) return c->error;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v)) {
    c->error = cli_usage_error(c->cmd, "%s: '%s' is not a number", c->opt, s);
    return c->error;
  }
  if (v < min || v > max) {
    c->error = cli_usage_error(c->cmd, "%s: %s is out of range [%g, %g]", c->opt, s, min, max);
    return c->error;
  }
  *out = v;
  return 0;
}

int cli_u64(cli *c, unsigned long long *out) {
  const char *s = NULL;
  if (cli_string(c, &s)) return c->error;
  char *end;
  errno = 0;
  if (s[0] == '-') {
    c->error = cli_usage_error(c->cmd, "%s: '%s' must not be negative", c->opt, s);
    return c->error;
  }
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s || *end != '\0' || errno == ERANGE) {
    c->error = cli_usage_error(c->cmd, "%s: '%s' is not a whole number", c->opt, s);
    return c->error;
  }
  *out = v;
  return 0;
}

int cli_size(cli *c, size_t *out, size_t min, size_t max) {
  const char *s = NULL;
  if (cli_string(c, &s)) return c->error;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (end == s || *end != '\0' || errno == ERANGE) {
    c->error = cli_usage_error(c->cmd, "%s: '%s' is not a whole number", c->opt, s);
    return c->error;
  }
  if (v < 0 || (unsigned long long)v < min || (unsigned long long)v > max) {
    c->error = cli_usage_error(c->cmd, "%s: %s is out of range [%zu, %zu]", c->opt, s, min, max);
    return c->error;
  }
  *out = (size_t)v;
  return 0;
}

int cli_int(cli *c, int *out, int min, int max) {
  size_t v = 0;
  if (min < 0) {
    double d;
    if (cli_double(c, &d, min, max)) return c->error;
    if (d != floor(d)) {
      c->error = cli_usage_error(c->cmd, "%s: %g is not a whole number", c->opt, d);
      return c->error;
    }
    *out = (int)d;
    return 0;
  }
  if (cli_size(c, &v, (size_t)min, (size_t)max)) return c->error;
  *out = (int)v;
  return 0;
}

int cli_triple(cli *c, double out[3]) {
  const char *s = NULL;
  if (cli_string(c, &s)) return c->error;
  const char *p = s;
  for (int i = 0; i < 3; i++) {
    char *end;
    errno = 0;
    out[i] = strtod(p, &end);
    if (end == p || errno == ERANGE || !isfinite(out[i]) || (i < 2 && *end != ',') || (i == 2 && *end != '\0')) {
      c->error = cli_usage_error(c->cmd, "%s: '%s' is not three comma separated numbers", c->opt, s);
      return c->error;
    }
    p = end + 1;
  }
  return 0;
}

int cli_unknown(cli *c) {
  c->error = cli_usage_error(c->cmd, "unknown option %s (see dbtr %s --help)", c->opt, c->cmd);
  return c->error;
}

int cli_fail(const char *cmd, int rc) {
  fprintf(stderr, "dbtr %s: %s\n", cmd, dbtr_errmsg());
  return dbtr_exit_code(rc);
}

int cli_backend_option(cli *c, cli_backend_opts *o) {
  if (cli_is(c, "--backend")) {
    if (cli_string(c, &o->backend)) return 1;
    if (strcmp(o->backend, "cpu") && strcmp(o->backend, "gpu") && strcmp(o->backend, "auto"))
      c->error = cli_usage_error(c->cmd, "--backend: '%s' is not cpu, gpu or auto", o->backend);
    return 1;
  }
  if (cli_is(c, "--mode")) {
    dbtr_gpu_mode m;
    if (cli_string(c, &o->mode)) return 1;
    if (dbtr_gpu_mode_parse(o->mode, &m)) c->error = cli_usage_error(c->cmd, "--mode: %s", dbtr_errmsg());
    return 1;
  }
  if (cli_is(c, "--precision")) {
    if (cli_string(c, &o->precision)) return 1;
    if (strcmp(o->precision, "float") && strcmp(o->precision, "double"))
      c->error = cli_usage_error(c->cmd, "--precision: '%s' is not float or double", o->precision);
    return 1;
  }
  if (cli_is(c, "--threads")) {
    cli_int(c, &o->threads, 0, 4096);
    return 1;
  }
  return 0;
}

int cli_backend_create(const char *cmd, const cli_backend_opts *o, const dbtr_problem *prob, dbtr_backend **out,
                       int quiet) {
  dbtr_gpu_mode mode = DBTR_MODE_CPU_MATCH;
  if (o->mode) dbtr_gpu_mode_parse(o->mode, &mode);
  const char *be = o->backend ? o->backend : "auto";
  int rc = 0;
  if (strcmp(be, "cpu") != 0) {
    rc = dbtr_gpu_backend_create(out, mode, prob);
    if (!rc) return 0;
    if (!strcmp(be, "gpu")) return rc;
    if (!quiet)
      fprintf(stderr, "dbtr %s: warning: %s; running on the CPU\n", cmd,
              rc == DBTR_ENOGPU ? "no GPU can be used" : dbtr_errmsg());
  }
  /* The CPU precision follows the GPU mode unless --precision says otherwise, so
   * `--mode double` on a machine without a GPU still computes in double. */
  dbtr_precision p = dbtr_gpu_mode_precision(mode);
  if (o->precision) p = strcmp(o->precision, "double") ? DBTR_PREC_FLOAT : DBTR_PREC_DOUBLE;
  dbtr_err_clear();
  return dbtr_cpu_backend_create(out, p, prob);
}

double cli_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int cli_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* Fails now, not after a long run, when the output's folder cannot take a file. */
static int writable_folder(const char *cmd, const char *out) {
  dbtr_atomic_file af;
  int rc = dbtr_atomic_begin(&af, out);
  if (rc) return cli_fail(cmd, rc);
  dbtr_atomic_abort(&af);
  return 0;
}

int cli_check_output(const char *cmd, const char *out, const char *const *inputs, size_t n_inputs, int force) {
  struct stat so;
  /* A device, FIFO, socket, folder or symbolic link is refused whatever --force says. */
  int rc = dbtr_atomic_check_target(out);
  if (rc) return cli_fail(cmd, rc);
  if (stat(out, &so) != 0) return writable_folder(cmd, out);
  for (size_t i = 0; i < n_inputs; i++) {
    struct stat si;
    if (inputs[i] && stat(inputs[i], &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
      return cli_usage_error(cmd, "%s: the output would overwrite the input %s", out, inputs[i]);
  }
  if (!force) return cli_usage_error(cmd, "%s exists; use --force to overwrite it", out);
  return writable_folder(cmd, out);
}
