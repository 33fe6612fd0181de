/*
 * cmd_tir_internal.h - private to the mlc-tir program (tir/cmd_tir*.c): the
 * exit statuses, error printing and argument cursor shared by the dispatcher
 * and subcommands (cmd_tir.c) and `eval` (cmd_tir_eval.c).
 */
#ifndef MLC_TIR_CMD_TIR_INTERNAL_H
#define MLC_TIR_CMD_TIR_INTERNAL_H

#include "tir/tir.h"

#include <stdio.h>

#define PROG "mlc-tir"

/* DESIGN.md's conventions for every program. */
enum { EXIT_OK = 0, EXIT_WORK = 1, EXIT_USAGE = 2 };

/* Prints "mlc-tir: error: <message>" to stderr and returns code. */
int tir_cmd_fail(int code, const char *fmt, ...) MLC_PRINTF(2, 3);
/* Exit status for a library status: user input problems are 2, the rest 1. */
int tir_cmd_exit_for(int st);
/* Flushes stdout; a failed write (full disk, closed pipe) fails the command. */
int tir_cmd_finish_output(int code);

/* A cursor over a subcommand's arguments (argv[0] is the subcommand). */
typedef struct {
  int argc, i;
  char **argv;
  const char *cmd;
  bool only_positional; /* after "--" */
} tir_cmd_args_t;

/* "--name value" or "--name=value": true and *value when the current
 * argument is the option; *err set (and reported) when the value is missing. */
bool tir_cmd_opt_value(tir_cmd_args_t *a, const char *name, const char **value, bool *err);
bool tir_cmd_opt_flag(tir_cmd_args_t *a, const char *name);
/* True for a positional argument ("-" is standard input); "--" switches to
 * positional-only and is itself not positional. */
bool tir_cmd_is_positional(tir_cmd_args_t *a);
int tir_cmd_bad_option(tir_cmd_args_t *a);
bool tir_cmd_parse_i64(const char *s, int64_t *out);

/* Parses and verifies FILE ("-" for standard input), printing any error.
 * EXIT_OK and *out (free with tir_module_free), or the exit status. */
int tir_cmd_load_verified(const char *path, tir_module_t **out);

/* `mlc-tir eval` (cmd_tir_eval.c). */
int tir_cmd_eval(tir_cmd_args_t *a);

#endif /* MLC_TIR_CMD_TIR_INTERNAL_H */
