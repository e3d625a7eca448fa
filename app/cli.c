/* app/cli.c: the option-table parser and --help printer, backend choice, messages. */
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
#include "phantoms/systems.h"
#include "recon/backend.h"
#include "recon/error.h"
#include "recon/modes.h"
#include "recon/version.h"

/* The tokenizer under cli_parse: one argv entry at a time. */
typedef struct {
  const char *cmd; /* for messages */
  int argc, i;
  char **argv;
  const char *opt;          /* current option name, e.g. "--iterations" */
  const char *inline_value; /* value after '=' if given that way */
  int operands_only;        /* after `--` */
  int error;
} cli;

static void cli_init(cli *c, const char *cmd, int argc, char **argv) {
  memset(c, 0, sizeof *c);
  c->cmd = cmd;
  c->argc = argc;
  c->argv = argv;
  c->i = 1;
}

static int cli_next(cli *c, const char **positional) {
  static _Thread_local char name[128];
  if (c->error || c->i >= c->argc) return 0;
  const char *a = c->argv[c->i++];
  c->inline_value = NULL;
  if (!c->operands_only && !strcmp(a, "--")) {
    c->operands_only = 1;
    return cli_next(c, positional);
  }
  if (c->operands_only || a[0] != '-' || a[1] == '\0') {
    *positional = a;
    return 2;
  }
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

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "dbtr %s: ", cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n");
  return 2;
}

static int cli_string(cli *c, const char **out) {
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

/* ---- Converting one value ----------------------------------------------------------- */

/* "is out of range [1, 100000]", "(0, 1)", or "must be > 0" where there is no upper end. */
static void range_text(const cli_opt *o, char *buf, size_t n) {
  int open = (o->flags & CLI_ABOVE_MIN) != 0;
  if (isinf(o->max)) snprintf(buf, n, "must be %s %.15g", open ? ">" : ">=", o->min);
  else snprintf(buf, n, "is out of range %c%.15g, %.15g]", open ? '(' : '[', o->min, o->max);
}

static int in_range(const cli_opt *o, double v) {
  return (o->flags & CLI_ABOVE_MIN ? v > o->min : v >= o->min) && v <= o->max;
}

/* A whole number in the row's range; 0 or a message (returns 2). */
static int whole(const char *cmd, const cli_opt *o, const char *s, long long *out) {
  char *end, range[96];
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (end == s || *end != '\0' || errno == ERANGE)
    return cli_usage_error(cmd, "%s: '%s' is not a whole number", o->name, s);
  if (!in_range(o, (double)v)) {
    range_text(o, range, sizeof range);
    return cli_usage_error(cmd, "%s: %s %s", o->name, s, range);
  }
  *out = v;
  return 0;
}

static int number(const char *cmd, const cli_opt *o, const char *s, double *out) {
  char *end, range[96];
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v))
    return cli_usage_error(cmd, "%s: '%s' is not a number", o->name, s);
  if (!in_range(o, v)) {
    range_text(o, range, sizeof range);
    return cli_usage_error(cmd, "%s: %s %s", o->name, s, range);
  }
  *out = v;
  return 0;
}

static int u64(const char *cmd, const cli_opt *o, const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  if (s[0] == '-') return cli_usage_error(cmd, "%s: '%s' must not be negative", o->name, s);
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s || *end != '\0' || errno == ERANGE || v > UINT64_MAX)
    return cli_usage_error(cmd, "%s: '%s' is not a whole number", o->name, s);
  *out = (uint64_t)v;
  return 0;
}

static int triple(const char *cmd, const cli_opt *o, const char *s, double out[3]) {
  const char *p = s;
  char range[96];
  for (int i = 0; i < 3; i++) {
    char *end;
    errno = 0;
    out[i] = strtod(p, &end);
    if (end == p || errno == ERANGE || !isfinite(out[i]) || (i < 2 && *end != ',') || (i == 2 && *end != '\0'))
      return cli_usage_error(cmd, "%s: '%s' is not three comma separated numbers", o->name, s);
    if ((o->flags & CLI_WHOLE) && out[i] != floor(out[i]))
      return cli_usage_error(cmd, "%s: %.15g (in '%s') is not a whole number", o->name, out[i], s);
    if (!in_range(o, out[i])) {
      range_text(o, range, sizeof range);
      return cli_usage_error(cmd, "%s: %.15g (in '%s') %s", o->name, out[i], s, range);
    }
    p = end + 1;
  }
  return 0;
}

/* Appends names[i] of n to the list in buf, as "a, b or c". */
static void append_listed(char *buf, size_t len, size_t i, size_t n, const char *name) {
  size_t used = strlen(buf);
  snprintf(buf + used, len - used, "%s%s", i == 0 ? "" : (i + 1 == n ? " or " : ", "), name);
}

static int choice(const char *cmd, const cli_opt *o, const char *s, const char **out) {
  size_t n = 0;
  for (; o->choices[n]; n++)
    if (!strcmp(s, o->choices[n])) {
      *out = o->choices[n];
      return 0;
    }
  char list[256] = "";
  for (size_t i = 0; i < n; i++) append_listed(list, sizeof list, i, n, o->choices[i]);
  return cli_usage_error(cmd, "%s: '%s' is not %s", o->name, s, list);
}

/* Stores text, the value of row o, into its target in base; 0 or 2 after a message. */
static int convert(const char *cmd, const cli_opt *o, void *base, const char *text) {
  void *t = (char *)base + o->offset;
  long long w = 0;
  int ex = 0;
  char why[256];
  switch (o->type) {
  case CLI_FLAG: *(int *)t = 1; break;
  case CLI_INT:
    if (!(ex = whole(cmd, o, text, &w))) *(int *)t = (int)w;
    break;
  case CLI_SIZE:
    if (!(ex = whole(cmd, o, text, &w))) *(size_t *)t = (size_t)w;
    break;
  case CLI_U64: ex = u64(cmd, o, text, t); break;
  case CLI_DOUBLE: ex = number(cmd, o, text, t); break;
  case CLI_STRING: *(const char **)t = text; break;
  case CLI_CHOICE: ex = choice(cmd, o, text, t); break;
  case CLI_TRIPLE: ex = triple(cmd, o, text, t); break;
  case CLI_CUSTOM:
    if (o->convert(text, t, why, sizeof why)) ex = cli_usage_error(cmd, "%s: %s", o->name, why);
    break;
  }
  if (!ex && o->given) *(int *)((char *)base + o->given - 1) = 1;
  return ex;
}

/* Reads the value of row o (none for a flag) from c into its target. */
static int take_row(cli *c, const cli_opt *o, void *base) {
  const char *text = NULL;
  if (o->type == CLI_FLAG && c->inline_value) c->error = cli_usage_error(c->cmd, "%s takes no value", o->name);
  else if (o->type == CLI_FLAG || !cli_string(c, &text)) c->error = convert(c->cmd, o, base, text);
  return c->error;
}

/* ---- The table parser ---------------------------------------------------------------- */

/* Every command takes these; cli_parse answers them before it looks at the tables. */
static const cli_opt builtin_rows[] = {
    {"--help", 'h', CLI_FLAG, 0, .help = "print this help and exit"},
    {"--version", 0, CLI_FLAG, 0, .help = "print the version of dbtr and exit"},
};


static int row_is(const cli_opt *o, const char *opt) {
  return !strcmp(opt, o->name) || (o->short_name && opt[0] == '-' && opt[1] == o->short_name && opt[2] == '\0');
}

static int cli_take(cli *c, const cli_group *g) {
  for (size_t j = 0; j < g->n_opts; j++)
    if (row_is(&g->opts[j], c->opt)) {
      take_row(c, &g->opts[j], g->base);
      return 1;
    }
  return 0;
}

static void cli_unknown(cli *c) {
  c->error = cli_usage_error(c->cmd, "unknown option %s (see dbtr %s --help)", c->opt, c->cmd);
}

static int defaults(const cli_command *cmd) {
  for (size_t g = 0; g < cmd->n_groups; g++)
    for (size_t j = 0; j < cmd->groups[g].n_opts; j++) {
      cli_opt o = cmd->groups[g].opts[j];
      o.given = 0; /* a default is not the user's choice */
      if (o.def && convert(cmd->name, &o, cmd->groups[g].base, o.def)) return 2;
    }
  return 0;
}

/* After argv: the operands and required options are there. */
static int complete(const cli_command *cmd, size_t n_operands) {
  if (n_operands < cmd->min_operands)
    return cli_usage_error(cmd->name, "no %s given (usage: dbtr %s %s)", cmd->operand, cmd->name, cmd->usage);
  for (size_t g = 0; g < cmd->n_groups; g++)
    for (size_t j = 0; j < cmd->groups[g].n_opts; j++) {
      const cli_opt *o = &cmd->groups[g].opts[j];
      if ((o->flags & CLI_REQUIRED) && !*(const char **)((char *)cmd->groups[g].base + o->offset))
        return cli_usage_error(cmd->name, "no %s given (usage: dbtr %s %s)", o->name + 2, cmd->name, cmd->usage);
    }
  return 0;
}

int cli_parse(const cli_command *cmd, int argc, char **argv, const char **operands, int *exit_code) {
  cli c;
  const char *pos;
  size_t n_operands = 0;
  int k;
  for (size_t i = 0; i < cmd->max_operands; i++) operands[i] = NULL;
  if ((*exit_code = defaults(cmd))) return 0;
  cli_init(&c, cmd->name, argc, argv);
  while ((k = cli_next(&c, &pos))) {
    if (k == 2) {
      if (n_operands == cmd->max_operands)
        c.error =
            cli_usage_error(cmd->name, "unexpected argument '%s' (usage: dbtr %s %s)", pos, cmd->name, cmd->usage);
      else operands[n_operands++] = pos;
    } else if (row_is(&builtin_rows[0], c.opt)) {
      cli_help(stdout, cmd);
      *exit_code = 0;
      return 0;
    } else if (row_is(&builtin_rows[1], c.opt)) {
      printf("dbtr %s\n", DBTR_VERSION_STRING);
      *exit_code = 0;
      return 0;
    } else {
      size_t g = 0;
      while (g < cmd->n_groups && !cli_take(&c, &cmd->groups[g])) g++;
      if (g == cmd->n_groups) cli_unknown(&c);
    }
  }
  *exit_code = c.error ? c.error : complete(cmd, n_operands);
  return *exit_code == 0;
}

/* ---- The --help printer ----------------------------------------------------------- */

enum { HELP_COLUMN = 25 }; /* where the descriptions start: "  --iterations N         full..." */

/* "  -o, --output FILE      text (default ...)", the text's later lines under its first. */
static void print_row(FILE *f, const cli_opt *o) {
  char left[96];
  int k = o->short_name ? snprintf(left, sizeof left, "-%c, ", o->short_name) : 0;
  snprintf(left + k, sizeof left - (size_t)k, "%s%s%s", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
  int w = fprintf(f, "  %s", left);
  if (w >= HELP_COLUMN) { /* too wide to share the line with the text */
    fprintf(f, "\n");
    w = 0;
  }
  for (const char *p = o->help;;) {
    size_t n = strcspn(p, "\n");
    fprintf(f, "%*s%.*s", HELP_COLUMN - w, "", (int)n, p);
    if (p[n] == '\0') break;
    fprintf(f, "\n");
    w = 0;
    p += n + 1;
  }
  if (o->def) fprintf(f, " (default %s)", o->def);
  if (o->flags & CLI_REQUIRED) fprintf(f, " (required)");
  fprintf(f, "\n");
  if (o->more_help) o->more_help(f, HELP_COLUMN + 2);
}

static void print_rows(FILE *f, const cli_opt *rows, size_t n) {
  for (size_t j = 0; j < n; j++) print_row(f, &rows[j]);
}

void cli_help(FILE *f, const cli_command *cmd) {
  fprintf(f, "usage: dbtr %s %s\n\n%s\noptions:\n", cmd->name, cmd->usage, cmd->about);
  for (size_t g = 0; g < cmd->n_groups; g++)
    if (!cmd->groups[g].title) print_rows(f, cmd->groups[g].opts, cmd->groups[g].n_opts);
  print_rows(f, CLI_ROWS(builtin_rows));
  for (size_t g = 0; g < cmd->n_groups; g++)
    if (cmd->groups[g].title) {
      fprintf(f, "\n%s:\n", cmd->groups[g].title);
      print_rows(f, cmd->groups[g].opts, cmd->groups[g].n_opts);
    }
  if (cmd->epilog) fprintf(f, "\n%s", cmd->epilog);
}

/* ---- Shared fragments ------------------------------------------------------------- */

static const cli_opt force_row = {"--force", 0, CLI_FLAG, 0, .help = "overwrite existing outputs"};
static const cli_opt quiet_row = {"--quiet", 0, CLI_FLAG, 0, .help = "no progress or \"wrote\" lines"};

cli_group cli_force_group(int *force) { return (cli_group){NULL, &force_row, 1, force}; }
cli_group cli_quiet_group(int *quiet) { return (cli_group){NULL, &quiet_row, 1, quiet}; }

int cli_convert_system(const char *text, void *target, char *why, size_t why_len) {
  const dbtr_system *sys = dbtr_system_find(text);
  if (sys) {
    *(const dbtr_system **)target = sys;
    return 0;
  }
  const dbtr_system *const *list = dbtr_system_list();
  size_t n = 0;
  while (list[n]) n++;
  snprintf(why, why_len, "unknown preset '%s' (", text);
  for (size_t i = 0; i < n; i++) append_listed(why, why_len, i, n, list[i]->name);
  append_listed(why, why_len, 0, 1, ")");
  return 1;
}

/* The modes users pick, from recon/modes.def, on one line. */
static void list_modes(FILE *f, int indent) {
  fprintf(f, "%*sone of:", indent, "");
  for (int m = 0; m < DBTR_MODE_COUNT; m++) fprintf(f, " %s", dbtr_mode_name_of((dbtr_mode)m));
  fprintf(f, "\n");
}

void cli_list_systems(FILE *f, int indent) {
  for (const dbtr_system *const *s = dbtr_system_list(); *s; s++)
    fprintf(f, "%*s%-8s %s\n", indent, "", (*s)->name, (*s)->description);
}

/* What cli_on_interrupt says: the command, the files cli_wrote named and the last of them. */
static struct {
  char cmd[32];
  size_t n_wrote;
  char last[900];
} interrupt_state;

void cli_on_interrupt(const char *cmd) {
  snprintf(interrupt_state.cmd, sizeof interrupt_state.cmd, "%s", cmd);
  /* On a terminal the progress line may hold the cursor: the message starts a line of its own. */
  const char *nl = isatty(STDERR_FILENO) ? "\n" : "";
  char line[1024];
  size_t n = interrupt_state.n_wrote;
  if (!n)
    snprintf(line, sizeof line, "%sdbtr %s: interrupted; nothing was written\n", nl, cmd);
  else
    snprintf(line, sizeof line, "%sdbtr %s: interrupted after writing %zu file%s (the last: %s); nothing else was written\n",
             nl, cmd, n, n == 1 ? "" : "s", interrupt_state.last);
  dbtr_atomic_on_signal_message(line);
}

int cli_folder_len(const char *dir) {
  size_t n = strlen(dir);
  return (int)(n > 1 && dir[n - 1] == '/' ? n - 1 : n);
}

void cli_wrote(const char *cmd, int quiet, const char *path, const char *what_fmt, ...) {
  interrupt_state.n_wrote++;
  snprintf(interrupt_state.last, sizeof interrupt_state.last, "%s", path);
  cli_on_interrupt(cmd);
  if (quiet) return;
  fprintf(stderr, "dbtr %s: wrote %s", cmd, path);
  if (what_fmt) {
    va_list ap;
    fprintf(stderr, " (");
    va_start(ap, what_fmt);
    vfprintf(stderr, what_fmt, ap);
    va_end(ap);
    fprintf(stderr, ")");
  }
  fprintf(stderr, "\n");
}

int cli_fail(const char *cmd, int rc) {
  fprintf(stderr, "dbtr %s: %s\n", cmd, dbtr_errmsg());
  return dbtr_exit_code(rc);
}

/* --mode names a GPU row of the mode table (recon/modes.h), which says what it accepts. */
static int convert_mode(const char *text, void *target, char *why, size_t why_len) {
  dbtr_mode m;
  if (dbtr_mode_parse(text, DBTR_ROWS_MODES | DBTR_ROWS_VARIANTS, &m)) {
    snprintf(why, why_len, "%s", dbtr_errmsg());
    dbtr_err_clear();
    return 1;
  }
  *(const char **)target = text;
  return 0;
}

/* --gpu-memory SIZE: bytes, or a number with a unit: KiB, MiB, GiB, TiB (or K, M, G, T:
 * powers of 1024) or kB, MB, GB, TB (powers of 1000), as in "16GiB" or "1.5G". */
static int convert_bytes(const char *text, void *target, char *why, size_t why_len) {
  static const struct {
    const char *unit;
    double scale;
  } units[] = {{"", 1.0},          {"B", 1.0},           {"K", 0x1p10},  {"KiB", 0x1p10}, {"kB", 1e3},
               {"KB", 1e3},        {"M", 0x1p20},        {"MiB", 0x1p20}, {"MB", 1e6},    {"G", 0x1p30},
               {"GiB", 0x1p30},    {"GB", 1e9},          {"T", 0x1p40},  {"TiB", 0x1p40}, {"TB", 1e12}};
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  for (size_t i = 0; end != text && !errno && i < sizeof units / sizeof units[0]; i++) {
    double b = v * units[i].scale;
    if (strcmp(end, units[i].unit) != 0) continue;
    /* 2^60 bytes is far beyond any GPU; the bound keeps the value exact in size_t. */
    if (!(b >= 1.0 && b <= 0x1p60)) break;
    *(size_t *)target = (size_t)b;
    return 0;
  }
  snprintf(why, why_len, "'%s' is not a size from 1 byte to 1 EiB (examples: 16GiB, 1.5G, 500MB, 8000000000)", text);
  return 1;
}

/* --gpus N or all (-1). */
static int convert_gpus(const char *text, void *target, char *why, size_t why_len) {
  char *end;
  long v = strcmp(text, "all") ? strtol(text, &end, 10) : -1;
  if (v == -1 || (end != text && !*end && v >= 1 && v <= DBTR_GPUS_MAX)) {
    *(int *)target = (int)v;
    return 0;
  }
  snprintf(why, why_len, "'%s' is neither a number of GPUs from 1 to %d nor all", text, DBTR_GPUS_MAX);
  return 1;
}

/* --threads, --gpu-memory and --gpus are last, so that cli_threads_group and
 * cli_gpu_group can take them. */
static const cli_opt backend_rows[] = {
    {"--backend", 0, CLI_CHOICE, offsetof(cli_backend_opts, backend), "B",
     .help = "cpu, gpu, or auto: the GPU when there is one, else the CPU", .def = "auto",
     .choices = CLI_CHOICES("cpu", "gpu", "auto")},
    {"--mode", 0, CLI_CUSTOM, offsetof(cli_backend_opts, mode), "M",
     .help = "GPU mode (docs/modes.md); on the CPU, double modes compute in double",
     .def = "cpu-match", .convert = convert_mode, .more_help = list_modes},
    {"--precision", 0, CLI_CHOICE, offsetof(cli_backend_opts, precision), "P",
     .help = "CPU precision, float, double or dd (double-double, the referee; default: as the mode)",
     .choices = CLI_CHOICES("float", "double", "dd")},
    {"--threads", 0, CLI_INT, offsetof(cli_backend_opts, threads), "N", .help = "CPU threads (default: all)", .min = 0,
     .max = 4096},
    {"--gpu-memory", 0, CLI_CUSTOM, offsetof(cli_backend_opts, gpu_memory), "SIZE",
     .help = "GPU memory the reconstruction may take, as 16GiB or 1.5G (default: what the\n"
             "GPU has free, less 0.25 GiB); less than it needs: the same bits, in batches",
     .convert = convert_bytes},
    {"--gpus", 0, CLI_CUSTOM, offsetof(cli_backend_opts, gpus), "N",
     .help = "GPUs to spread over, a number or all, with the bits of one GPU; each holds its\n"
             "share of the problem (default 1)",
     .convert = convert_gpus},
};

cli_group cli_backend_group(cli_backend_opts *o) { return (cli_group){"backend", CLI_ROWS(backend_rows), o}; }
cli_group cli_threads_group(cli_backend_opts *o) { return (cli_group){NULL, &backend_rows[3], 1, o}; }
cli_group cli_gpu_group(cli_backend_opts *o) { return (cli_group){NULL, &backend_rows[4], 2, o}; }

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

/* The folder part of path (stat'ed into st) and its last component. */
static int split_path(const char *path, struct stat *st, const char **base) {
  char dir[4096];
  return dbtr_path_folder(path, dir, sizeof dir, base) ? -1 : stat(dir, st);
}

int cli_same_file(const char *a, const char *b) {
  struct stat sa, sb;
  if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  const char *ba, *bb;
  if (split_path(a, &sa, &ba) != 0 || split_path(b, &sb, &bb) != 0) return !strcmp(a, b);
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && !strcmp(ba, bb);
}

/* One line per stale temporary removed (io/atomic_file.h), so that a file that disappears
 * from a folder is accounted for. */
static void said_removed(const char *path, void *cmd) {
  fprintf(stderr, "dbtr %s: removed %s, a temporary left by a dbtr run that was killed before it finished\n",
          (const char *)cmd, path);
}

void cli_remove_stale(const char *cmd, const char *out) { dbtr_atomic_remove_stale(out, said_removed, (void *)cmd); }

int cli_check_output(const char *cmd, const char *out, const char *const *inputs, size_t n_inputs, int force) {
  struct stat so;
  cli_remove_stale(cmd, out);
  /* The look below is only the early, friendly refusal: the file may appear during the run
   * (another run writing the same -o). So the commands' writes replace only what --force
   * named here, whatever exists when they finish (io/atomic_file.h). */
  dbtr_atomic_replace_only_allowed();
  /* A device, FIFO, socket, folder or symbolic link is refused whatever --force says. */
  int rc = dbtr_atomic_check_target(out);
  if (rc) return cli_fail(cmd, rc);
  if (stat(out, &so) != 0) {
    if (force && (rc = dbtr_atomic_allow_replace(out))) return cli_fail(cmd, rc);
    return writable_folder(cmd, out);
  }
  for (size_t i = 0; i < n_inputs; i++)
    if (inputs[i] && cli_same_file(inputs[i], out))
      return cli_usage_error(cmd, "%s: the output would overwrite the input %s", out, inputs[i]);
  if (!force) return cli_usage_error(cmd, "%s exists; use --force to overwrite it", out);
  if ((rc = dbtr_atomic_allow_replace(out))) return cli_fail(cmd, rc);
  return writable_folder(cmd, out);
}
