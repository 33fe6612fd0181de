/*
 * cmd_db_internal.h - private to the mlc-db program (database/cmd_db*.c):
 * exit statuses, error printing, the argument cursor with the options every
 * subcommand takes (--db, --json, --table), output as a table / tab-separated
 * lines / JSON, and record rendering shared by the dispatcher and the
 * maintenance commands (cmd_db.c) and the query commands (cmd_db_query.c).
 */
#ifndef MLC_DATABASE_CMD_DB_INTERNAL_H
#define MLC_DATABASE_CMD_DB_INTERNAL_H

#include "database/cmd_db.h"

#include <stdio.h>

#define PROG "mlc-db"

/* DESIGN.md's conventions for every program. */
enum { EXIT_OK = 0, EXIT_WORK = 1, EXIT_USAGE = 2 };

/* How results are printed: aligned columns with a header for a person at a
 * terminal, one tab-separated line per row (no header) for scripts, or JSON. */
typedef enum { DB_OUT_TSV, DB_OUT_TABLE, DB_OUT_JSON } db_cmd_format_t;

/* A cursor over a subcommand's arguments (argv[0] is the subcommand), with
 * the options every subcommand accepts. */
typedef struct {
  int argc, i;
  char **argv;
  const char *cmd;         /* the subcommand; NULL for the options before it */
  bool only_positional;    /* after "--" */
  const char *uri;         /* --db, else $MLC_DB, else NULL (the default) */
  db_cmd_format_t format;
  bool error;              /* an option's value was missing (reported) */
} db_cmd_args_t;

/* Prints "mlc-db: error: <message>" to stderr and returns code. */
int db_cmd_fail(int code, const char *fmt, ...) MLC_PRINTF(2, 3);
/* Exit status for a failed database call: bad URIs, unreachable servers and
 * unreadable or newer-schema databases are bad input (2); the rest 1. */
int db_cmd_exit_for(int st);
/* Prints the last library error with a context prefix; returns the exit status. */
int db_cmd_fail_status(int st, const char *context);
/* Flushes stdout; a failed write (full disk, closed pipe) fails the command. */
int db_cmd_finish_output(int code);

/* "--name value" or "--name=value": true and *value when the current
 * argument is the option; a->error set (and reported) when the value is
 * missing. */
bool db_cmd_opt_value(db_cmd_args_t *a, const char *name, const char **value);
bool db_cmd_opt_flag(db_cmd_args_t *a, const char *name);
bool db_cmd_is_positional(db_cmd_args_t *a);
/* --db, --json, --table, --help (prints help, *helped); true when consumed. */
bool db_cmd_common_opt(db_cmd_args_t *a, const char *help, bool *helped);
int db_cmd_bad_option(db_cmd_args_t *a);
bool db_cmd_parse_i64(const char *s, int64_t *out);
/* A workload key: 16 hex digits (shorter is fine, no 0x). */
bool db_cmd_parse_key(const char *s, uint64_t *out);

/* Opens --db (printing the error itself); EXIT_OK or the exit status. */
int db_cmd_open(db_cmd_args_t *a, db_t **out);
int db_cmd_open_uri(const char *uri, db_t **out);

/* ------------------------------------------------------------------------ */
/* Output                                                                    */
/* ------------------------------------------------------------------------ */

/* Rows of strings printed as a table or tab-separated lines. A header
 * starting with '>' is a right-aligned (numeric) column; the '>' is not
 * printed. NULL headers: no header line, all columns left-aligned. Cells
 * are copied into the table's arena. */
typedef struct {
  mlc_arena_t *arena;
  int ncols, nrows, caprows;
  const char *const *headers;
  const char **cells; /* nrows * ncols */
} db_table_t;

int db_table_init(db_table_t *t, int ncols, const char *const *headers);
void db_table_free(db_table_t *t);
/* Appends a row of ncols strings (NULL prints as "-"). */
int db_table_row(db_table_t *t, const char *const *cells);
void db_table_print(const db_table_t *t, db_cmd_format_t format);

/* Prints json (compact, keys in insertion order) and a newline, and takes
 * the reference. EXIT_OK, or EXIT_WORK when it cannot be printed. */
int db_cmd_print_json(json_t *json);

/* Seconds as milliseconds with 4 significant digits ("-" for +inf). */
const char *db_cmd_ms(char buf[32], double secs);
/* Microseconds since the epoch as "2024-05-01 12:34:56" (UTC). */
const char *db_cmd_time(char buf[40], int64_t us);
/* "measured", or the failure kind's name ("build", "timeout", ...). */
const char *db_cmd_outcome(const db_record_t *r);

/* A record as a JSON object with every field (traces and device properties
 * parsed, or kept as strings when they do not parse); NULL when out of
 * memory. `workload_name` may be NULL. */
json_t *db_cmd_record_json(const db_record_t *r, const char *workload_name);

/* Sorts workloads by key, so output is in the same order whatever the
 * backend (each returns its own order). */
void db_cmd_sort_workloads(db_result_t *ws);
/* The workload name for `key` in `ws` (NULL when absent). */
const char *db_cmd_workload_name(const db_result_t *ws, uint64_t key);

/* ------------------------------------------------------------------------ */
/* Subcommands                                                               */
/* ------------------------------------------------------------------------ */

int db_cmd_top(db_cmd_args_t *a);
int db_cmd_list(db_cmd_args_t *a);
int db_cmd_failures(db_cmd_args_t *a);
int db_cmd_show(db_cmd_args_t *a);

/* The printer installed by mlc_db_set_trace_printer (NULL when none). */
mlc_db_trace_printer_fn db_cmd_trace_printer(void);

#endif /* MLC_DATABASE_CMD_DB_INTERNAL_H */
