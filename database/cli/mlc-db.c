/*
 * mlc-db.c - the mlc-db program: queries and maintenance of the tuning-record
 * database (see docs/mlc-db.md). Everything it does is in database/cmd_db*.c;
 * this main adds what the database library may not depend on: printing a
 * record's trace as a Python script, which needs the schedule library.
 */
#include "database/cmd_db.h"
#include "schedule/schedule.h"

/* Stored trace JSON -> TVM's Python form. */
static int trace_to_python(char **out, const char *trace_json) {
  *out = NULL;
  json_t *json = mlc_json_loads(trace_json, "trace");
  if (!json) return mlc_error_last_code() ? mlc_error_last_code() : MLC_EPARSE;
  sch_trace_t *trace = NULL;
  int st = sch_trace_from_json(&trace, json);
  json_decref(json);
  if (st != MLC_OK) return st;
  *out = sch_trace_to_python(trace);
  sch_trace_free(trace);
  return *out ? MLC_OK : mlc_error_set(MLC_ENOMEM, "out of memory printing the trace");
}

int main(int argc, char **argv) {
  mlc_db_set_trace_printer(trace_to_python);
  return mlc_db_main(argc, argv);
}
