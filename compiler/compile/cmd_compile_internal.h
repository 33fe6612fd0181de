/*
 * cmd_compile_internal.h - what the two halves of mlc-compile share:
 * cmd_compile.c (options, database, compiling, writing) and
 * cmd_compile_out.c (the untuned list, --report, --json). Private to
 * compiler/compile/.
 */
#ifndef MLC_COMPILER_COMPILE_CMD_COMPILE_INTERNAL_H
#define MLC_COMPILER_COMPILE_CMD_COMPILE_INTERNAL_H

#include <stdio.h>

#include "compiler/compile/cmd_compile.h"
#include "compiler/compiler.h"

#define MLC_COMPILE_PROG "mlc-compile"

/* What was compiled, for the report and the JSON document. */
typedef struct {
  const mlc_compile_result_t *res;
  const char *target;   /* canonical target string */
  const char *db;       /* the database's URI (redacted), or NULL: none */
  const char *output;   /* the paths written; NULL when nothing was */
  const char *header;
  const char *error;    /* the failure, or NULL */
} compile_summary_t;

/* How many functions use the default schedule. */
int compile_count_default(const mlc_compile_result_t *res);
/* Writes "<head>" then one indented line "name (key): why" per function
 * compiled with the default schedule to f. */
void compile_print_untuned(FILE *f, const char *head, const mlc_compile_result_t *res);
/* --report: an aligned table when `table`, plain lines otherwise. */
void compile_print_report(const compile_summary_t *s, bool table);
/* --json: one JSON document on stdout. MLC_OK or MLC_ENOMEM. */
int compile_print_json(const compile_summary_t *s);

#endif /* MLC_COMPILER_COMPILE_CMD_COMPILE_INTERNAL_H */
