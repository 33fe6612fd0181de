/*
 * cmd_db.h - the mlc-db program as a library call, so tests can run it
 * in-process (database/cli/mlc-db.c is a thin main over it). The copy behind
 * `mlc-db export` and `mlc-db import` is db_transfer in database.h. User
 * guide: docs/mlc-db.md.
 *
 * The database library may use only support and tir (DESIGN.md), but
 * `mlc-db show` prints a record's trace as the Python script TVM prints,
 * which needs the schedule library. The program supplies that through a hook:
 * database/cli/mlc-db.c links schedule and installs a printer; without one,
 * `show` prints the trace JSON and says why.
 */
#ifndef MLC_DATABASE_CMD_DB_H
#define MLC_DATABASE_CMD_DB_H

#include "database/database.h"

/* Runs `mlc-db ARGS...` (argv[0] is the program name). Writes to stdout and
 * stderr; returns the exit status: 0 ok, 1 the work failed (an unknown record
 * id, a database error), 2 bad usage or bad input (unknown options, a bad
 * URI, an unreachable database). */
int mlc_db_main(int argc, char **argv);

/* Renders a trace (TVM's JSON layout, as stored) as a Python script into
 * *out (mlc_free). MLC_OK, or a status with mlc_error_set detail. */
typedef int (*mlc_db_trace_printer_fn)(char **out, const char *trace_json);
/* Installs the printer `show` uses (NULL removes it). Process-wide. */
void mlc_db_set_trace_printer(mlc_db_trace_printer_fn fn);

#endif /* MLC_DATABASE_CMD_DB_H */
