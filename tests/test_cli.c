/* tests/test_cli.c: the option-table parser and --help printer (app/cli.c) on a small table
 * that has a row of every type. The commands' own tables are exercised through the dbtr
 * binary by tests/cli_conventions.sh. Refusals print their one line on stderr, as dbtr
 * does; the cases check the exit code and what was stored. */
#include <stddef.h>
#include <stdint.h>

#include "app/cli.h"
#include "test.h"

typedef struct {
  const char *out, *colour, *name;
  int flag, count, count_given;
  size_t size;
  uint64_t seed;
  double x, xyz[3], size_mm[3];
  long custom;
} args;

/* A CLI_CUSTOM row: "N!" stores N; anything else is refused. */
static int convert_bang(const char *text, void *target, char *why, size_t why_len) {
  char *end;
  long v = strtol(text, &end, 10);
  if (end == text || strcmp(end, "!") != 0) {
    snprintf(why, why_len, "'%s' is not N!", text);
    return 1;
  }
  *(long *)target = v;
  return 0;
}

static const cli_opt rows[] = {
    {"--output", 'o', CLI_STRING, offsetof(args, out), "FILE", .help = "output", .flags = CLI_REQUIRED},
    {"--flag", 0, CLI_FLAG, offsetof(args, flag), .help = "a flag"},
    {"--count", 'c', CLI_INT, offsetof(args, count), "N", .help = "a count", .def = "7", .min = 1, .max = 10,
     .given = CLI_GIVEN(args, count_given)},
    {"--size", 0, CLI_SIZE, offsetof(args, size), "N", .help = "a size", .min = 0, .max = 1e6},
    {"--seed", 0, CLI_U64, offsetof(args, seed), "N", .help = "a seed", .def = "1"},
    {"--x", 0, CLI_DOUBLE, offsetof(args, x), "X", .help = "a positive number", .min = 0.0, .max = 1.0,
     .flags = CLI_ABOVE_MIN},
    {"--colour", 0, CLI_CHOICE, offsetof(args, colour), "C", .help = "red or blue", .def = "red",
     .choices = CLI_CHOICES("red", "blue")},
    {"--xyz", 0, CLI_TRIPLE, offsetof(args, xyz), "X,Y,Z", .help = "three numbers", .min = -HUGE_VAL, .max = HUGE_VAL},
    {"--dims", 0, CLI_TRIPLE, offsetof(args, size_mm), "A,B,C", .help = "three counts", .min = 1, .max = 100,
     .flags = CLI_WHOLE},
    {"--bang", 0, CLI_CUSTOM, offsetof(args, custom), "N!", .help = "a custom value\non two lines",
     .convert = convert_bang},
    {"--a-very-long-option-name", 0, CLI_STRING, offsetof(args, name), "VALUE", .help = "too wide for the column"},
};

/* Parses the words (a NULL-terminated list after the command name) into *a; returns
 * cli_parse's result, with the exit code in *ex and the operands in ops[2]. */
static int parse(args *a, int *ex, const char **ops, const char *const *words) {
  static char *argv[32];
  static char storage[32][64];
  int argc = 0;
  argv[argc++] = strcpy(storage[0], "test");
  for (; *words && argc < 31; words++, argc++) argv[argc] = strcpy(storage[argc], *words);
  argv[argc] = NULL;
  memset(a, 0, sizeof *a);
  const cli_group groups[] = {{NULL, CLI_ROWS(rows), a}};
  const cli_command spec = {.name = "test", .usage = "IN [IN2] -o FILE", .about = "A test.\n", .operand = "input",
                            .min_operands = 1, .max_operands = 2, .groups = groups, .n_groups = 1};
  return cli_parse(&spec, argc, argv, ops, ex);
}

#define WORDS(...) ((const char *const[]){__VA_ARGS__, NULL})

DBTR_TEST(equals_and_space) {
  args a, b;
  int ex = -1;
  const char *ops[2];
  REQUIRE(parse(&a, &ex, ops, WORDS("in", "-o", "f", "--count=3", "--x=0.5", "--colour=blue")));
  REQUIRE(parse(&b, &ex, ops, WORDS("in", "--output", "f", "--count", "3", "--x", "0.5", "--colour", "blue")));
  CHECK_EQ_INT(a.count, 3);
  CHECK_EQ_INT(b.count, 3);
  CHECK(a.x == 0.5 && b.x == 0.5);
  CHECK(!strcmp(a.colour, "blue") && !strcmp(b.colour, "blue"));
  CHECK(!strcmp(a.out, "f") && !strcmp(b.out, "f"));
}

DBTR_TEST(defaults_and_given) {
  args a;
  int ex = -1;
  const char *ops[2];
  REQUIRE(parse(&a, &ex, ops, WORDS("in", "-o", "f")));
  CHECK_EQ_INT(ex, 0);
  CHECK_EQ_INT(a.count, 7);      /* the row's default */
  CHECK_EQ_INT(a.count_given, 0); /* a default is not given */
  CHECK_EQ_U64(a.seed, 1);
  CHECK(!strcmp(a.colour, "red"));
  CHECK_EQ_INT(a.flag, 0);
  REQUIRE(parse(&a, &ex, ops, WORDS("in", "-o", "f", "-c", "7", "--flag")));
  CHECK_EQ_INT(a.count_given, 1); /* given, even with the default's value */
  CHECK_EQ_INT(a.flag, 1);
}

DBTR_TEST(every_type) {
  args a;
  int ex = -1;
  const char *ops[2];
  REQUIRE(parse(&a, &ex, ops,
                WORDS("in", "in2", "-o", "f", "--size", "1000000", "--seed", "18446744073709551615", "--xyz",
                      "-1.5,0,2e3", "--dims", "1,2,100", "--bang", "42!")));
  CHECK_EQ_U64(a.size, 1000000);
  CHECK_EQ_U64(a.seed, UINT64_MAX);
  CHECK(a.xyz[0] == -1.5 && a.xyz[1] == 0.0 && a.xyz[2] == 2000.0);
  CHECK(a.size_mm[0] == 1.0 && a.size_mm[1] == 2.0 && a.size_mm[2] == 100.0);
  CHECK_EQ_INT(a.custom, 42);
  CHECK(!strcmp(ops[0], "in") && !strcmp(ops[1], "in2"));
}

DBTR_TEST(dashdash_ends_options) {
  args a;
  int ex = -1;
  const char *ops[2];
  REQUIRE(parse(&a, &ex, ops, WORDS("-o", "f", "--", "-weird", "--flag")));
  CHECK(!strcmp(ops[0], "-weird"));
  CHECK(!strcmp(ops[1], "--flag"));
  CHECK_EQ_INT(a.flag, 0);
  /* A lone "-" is an operand too (a conventional name for stdin). */
  REQUIRE(parse(&a, &ex, ops, WORDS("-", "-o", "f")));
  CHECK(!strcmp(ops[0], "-") && ops[1] == NULL);
}

/* Each refusal: cli_parse returns 0 with exit code 2. */
DBTR_TEST(refusals) {
  const char *const *cases[] = {
      WORDS("in", "-o", "f", "--nosuch"),        /* unknown option */
      WORDS("in", "-o", "f", "--count"),         /* missing value */
      WORDS("in", "-o", "f", "--count", "11"),   /* above max */
      WORDS("in", "-o", "f", "--count", "2.5"),  /* not whole */
      WORDS("in", "-o", "f", "--x", "0"),        /* min is outside (0, 1] */
      WORDS("in", "-o", "f", "--x", "nan"),      /* not finite */
      WORDS("in", "-o", "f", "--seed", "-1"),    /* negative seed */
      WORDS("in", "-o", "f", "--colour", "red,blue"),
      WORDS("in", "-o", "f", "--xyz", "1,2"),    /* two numbers */
      WORDS("in", "-o", "f", "--dims", "1,2.5,3"),
      WORDS("in", "-o", "f", "--dims", "0,2,3"),
      WORDS("in", "-o", "f", "--bang", "42"),    /* the custom converter refuses */
      WORDS("in", "-o", "f", "--flag=1"),        /* a flag takes no value */
      WORDS("in", "in2", "in3", "-o", "f"),      /* too many operands */
      WORDS("-o", "f"),                          /* no operand */
      WORDS("in"),                               /* no required -o */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    args a;
    int ex = -1;
    const char *ops[2];
    CHECK_EQ_INT(parse(&a, &ex, ops, cases[i]), 0);
    CHECK_EQ_INT(ex, 2);
  }
}

DBTR_TEST(help_and_version_end_the_run) {
  args a;
  int ex = -1;
  const char *ops[2];
  /* Before the checks that argv completes: help needs no operand and no -o. */
  CHECK_EQ_INT(parse(&a, &ex, ops, WORDS("--help")), 0);
  CHECK_EQ_INT(ex, 0);
  CHECK_EQ_INT(parse(&a, &ex, ops, WORDS("-h")), 0);
  CHECK_EQ_INT(ex, 0);
  CHECK_EQ_INT(parse(&a, &ex, ops, WORDS("--version")), 0);
  CHECK_EQ_INT(ex, 0);
}

DBTR_TEST(help_text) {
  args a = {0};
  cli_backend_opts bo = {0};
  const cli_group groups[] = {{NULL, CLI_ROWS(rows), &a}, cli_backend_group(&bo), cli_force_group(&a.flag)};
  const cli_command spec = {.name = "test", .usage = "IN -o FILE", .about = "A test.\n", .groups = groups,
                            .n_groups = 3};
  FILE *f = tmpfile();
  REQUIRE(f != NULL);
  cli_help(f, &spec);
  char buf[8192];
  rewind(f);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  CHECK_STR_CONTAINS(buf, "usage: dbtr test IN -o FILE\n\nA test.\n\noptions:\n");
  CHECK_STR_CONTAINS(buf, "\n  -o, --output FILE      output (required)\n");
  CHECK_STR_CONTAINS(buf, "\n  -c, --count N          a count (default 7)\n");
  /* A later line of the text starts under the first; the default follows the last. */
  CHECK_STR_CONTAINS(buf, "\n  --bang N!              a custom value\n                         on two lines\n");
  CHECK_STR_CONTAINS(buf, "\n  --a-very-long-option-name VALUE\n                         too wide for the column\n");
  /* Untitled groups (--force) join the command's own options, before --help; titled ones
   * follow under their heading. */
  const char *force = strstr(buf, "  --force "), *help = strstr(buf, "  -h, --help ");
  const char *backend = strstr(buf, "\nbackend:\n");
  REQUIRE(force && help && backend);
  CHECK(force < help && help < backend);
  CHECK_STR_CONTAINS(backend, "\n  --backend B            cpu, gpu, or auto");
}

DBTR_TEST_MAIN(equals_and_space, defaults_and_given, every_type, dashdash_ends_options, refusals,
               help_and_version_end_the_run, help_text)
