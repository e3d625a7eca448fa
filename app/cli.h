/* app/cli.h: what every command shares: option parsing with messages that name the flag,
 * backend selection, progress lines and exit codes. No numerics here. */
#ifndef DBTR_CLI_H
#define DBTR_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "include/dbtr.h"
#include "io/scan.h"
#include "recon/geom.h"

/* ---- Option tables ----------------------------------------------------------------
 * Each command describes its options once, as rows of a table; cli_parse() reads argv with
 * it and cli_help() prints --help from it, so the two cannot disagree. Options are
 * `--name value`, `--name=value` or `-o value`; flags are `--name`; `--` ends the options
 * (a file named `-x` can follow it). Every message names the command and the flag:
 * "dbtr recon: --iterations: -3 is out of range [1, 100000]". */

/* What a row's value is, and so the C type of its target. */
typedef enum {
  CLI_FLAG,   /* int, set to 1; the option takes no value */
  CLI_INT,    /* int: a whole number in [min, max] */
  CLI_SIZE,   /* size_t: a whole number in [min, max] */
  CLI_U64,    /* uint64_t: any whole number >= 0 (seeds) */
  CLI_DOUBLE, /* double: a finite number in [min, max] */
  CLI_STRING, /* const char *: the argument itself (a path, a list) */
  CLI_CHOICE, /* const char *: one of `choices`, stored as that choice */
  CLI_TRIPLE, /* double[3]: "a,b,c", each in [min, max] */
  CLI_CUSTOM, /* whatever `convert` stores (a preset, a size WxH) */
} cli_type;

enum {
  CLI_REQUIRED = 1u,  /* CLI_STRING: the command refuses to run while the target is NULL */
  CLI_ABOVE_MIN = 2u, /* the range is (min, max]: min itself is refused (a positive size) */
  CLI_WHOLE = 4u,     /* CLI_TRIPLE: whole numbers (voxel counts) */
};

/* Converts text into *target for a CLI_CUSTOM row; returns 0, or non-zero with why (the
 * message after "--flag: ") filled. */
typedef int (*cli_convert)(const char *text, void *target, char *why, size_t why_len);

typedef struct {
  const char *name;    /* long form, "--iterations" */
  char short_name;     /* 'o' for -o; 0 for none */
  cli_type type;
  size_t offset;       /* of the target in the group's struct (offsetof) */
  const char *metavar; /* the value's name in --help: "N", "FILE"; NULL for CLI_FLAG */
  const char *help;    /* what it does; '\n' starts a line indented under the first */
  const char *def;     /* the default as a user would type it: stored before argv is read,
                          shown as "(default DEF)". NULL: the target keeps what the command
                          put there, and help says what that means */
  double min, max;     /* CLI_INT, CLI_SIZE, CLI_DOUBLE, CLI_TRIPLE */
  unsigned flags;      /* CLI_REQUIRED, CLI_ABOVE_MIN, CLI_WHOLE */
  size_t given;        /* CLI_GIVEN(type, member): an int set to 1 when argv has the option; 0: none */
  const char *const *choices; /* CLI_CHOICE: CLI_CHOICES("a", "b") */
  cli_convert convert;        /* CLI_CUSTOM */
  void (*more_help)(FILE *f, int indent); /* more lines under the row in --help (the presets) */
} cli_opt;

/* `given` is stored plus one, so that 0 (the value of a row that leaves it out) means none. */
#define CLI_GIVEN(type, member) (offsetof(type, member) + 1)
#define CLI_CHOICES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Rows whose offsets point into one struct: a command's own, or a fragment that several
 * commands share (cli_backend_group, app_grid_group, ...). */
typedef struct {
  const char *title; /* heading in --help; NULL: listed under "options:" with the command's own */
  const cli_opt *opts;
  size_t n_opts;
  void *base;
} cli_group;
#define CLI_ROWS(rows) (rows), (sizeof(rows) / sizeof((rows)[0]))

typedef struct {
  const char *name;     /* "recon" */
  const char *usage;    /* what follows "usage: dbtr recon " */
  const char *about;    /* what the command does: lines ending in '\n' */
  const char *operand;  /* what an operand is, for messages ("scan file"); NULL: none taken */
  size_t min_operands, max_operands;
  const cli_group *groups;
  size_t n_groups;
  const char *epilog;   /* printed after the options (the viewer's keys); NULL for none */
} cli_command;
/* In a cli_command initializer: .groups and .n_groups from an array of groups. */
#define CLI_GROUPS(groups) .groups = (groups), .n_groups = sizeof(groups) / sizeof((groups)[0])

/* Reads argv (argv[0] is the command's name): stores the defaults, then every option, and
 * the operands into operands[0 .. max_operands) (NULL where not given). Returns 1 when the
 * command should run; 0 when it should end with *exit_code: 0 after --help (-h) or
 * --version, 2 after a message naming the flag (unknown, malformed, missing). */
int cli_parse(const cli_command *cmd, int argc, char **argv, const char **operands, int *exit_code);
/* --help: the usage line, the description, the options by group, the epilog. */
void cli_help(FILE *f, const cli_command *cmd);

/* Shared fragments. --force and --quiet: each sets an int. */
cli_group cli_force_group(int *force);
cli_group cli_quiet_group(int *quiet);

/* --system NAME: stores the preset (const dbtr_system *), or lists the presets in why. */
int cli_convert_system(const char *text, void *target, char *why, size_t why_len);
/* The presets, one a line, for the --system row's help. */
void cli_list_systems(FILE *f, int indent);

/* Says where an output went, one line per file on stderr, unless quiet:
 * "dbtr CMD: wrote PATH (what)"; what may be NULL. It also sets what a signal says from now on
 * (cli_on_interrupt), with this file as the last written. */
void cli_wrote(const char *cmd, int quiet, const char *path, const char *what_fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* What a signal that ends command cmd says (io/atomic_file.h), unless a command registers a
 * line of its own (a resume hint): what was interrupted, and that nothing was written, or which
 * file was written last (each was named as it was finished; a file being written is removed).
 * Set by main for every command, and again by a command whose own line no longer holds. */
void cli_on_interrupt(const char *cmd);

/* The length of folder dir without its trailing '/' ("/" keeps it), to join a name to with
 * "%.*s/%s", so "diffs/" gives "diffs/x.tif", not "diffs//x.tif". */
int cli_folder_len(const char *dir);

/* Whether two paths name one file, however spelled: the same device and inode when both
 * exist, else the same folder and the same name in it. */
int cli_same_file(const char *a, const char *b);
/* Prints "dbtr CMD: message" for a library error and returns its exit code. */
int cli_fail(const char *cmd, int rc);
/* Prints "dbtr CMD: <formatted>" and returns 2 (bad arguments). */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Backend choice as the user gave it: the library's own (include/dbtr.h). */
typedef dbtr_backend_opts cli_backend_opts;

/* --backend, --mode, --precision, --threads, --gpu-memory, --gpus, titled "backend"; --threads
 * alone, for commands that run on the CPU only; and --gpu-memory with --gpus. */
cli_group cli_backend_group(cli_backend_opts *o);
cli_group cli_threads_group(cli_backend_opts *o);
cli_group cli_gpu_group(cli_backend_opts *o);
/* dbtr_scan_read with a guard (app/scan_guard.c): a crash inside libhdf5 on a damaged file,
 * or a header that is not read within DBTR_SCAN_HEADER_SECONDS (default 60), ends the
 * process with exit code 2 and one line naming the file ("... reading the file crashed
 * (SIGSEGV) ..." or "... did not finish in 60 s ..."), not a core dump or a hang. Returns
 * dbtr_scan_read's code otherwise. */
int cli_read_scan(const char *cmd, dbtr_scan *s, const char *path);
/* The time limit of a guarded read (DBTR_SCAN_HEADER_SECONDS, default 60 s), for the DICOM
 * import's (dbtr_dicom_import_guarded). */
unsigned cli_guard_seconds(const char *cmd);

/* Removes the temporaries that killed dbtr runs left in out's folder (io/atomic_file.h), a line
 * each; cli_check_output does it for the outputs it checks. */
void cli_remove_stale(const char *cmd, const char *out);

/* Wall clock in seconds. */
double cli_now(void);
/* 1 if path names an existing file. */
int cli_exists(const char *path);
/* Refuses to overwrite an existing output unless force, and an output that is also an
 * input (same file); returns 0 or an exit code. It also sets the writes' policy: from the
 * first call on, the process's commits replace only the outputs given here with force, or
 * files the process wrote itself, so a file that appears during the run is kept. */
int cli_check_output(const char *cmd, const char *out, const char *const *inputs, size_t n_inputs, int force);

#endif
