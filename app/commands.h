/* app/commands.h: one function per `dbtr` command, each in its own app/cmd_*.c file.
 * Each takes the arguments after the command name (argv[0] is the command) and returns
 * the process exit code (docs/errors.md). */
#ifndef DBTR_COMMANDS_H
#define DBTR_COMMANDS_H

int dbtr_cmd_phantom(int argc, char **argv);
int dbtr_cmd_recon(int argc, char **argv);
int dbtr_cmd_info(int argc, char **argv);
int dbtr_cmd_demo(int argc, char **argv);
int dbtr_cmd_project(int argc, char **argv);
int dbtr_cmd_validate(int argc, char **argv);
int dbtr_cmd_view(int argc, char **argv);
int dbtr_cmd_import(int argc, char **argv);
int dbtr_cmd_quality(int argc, char **argv);

#endif
