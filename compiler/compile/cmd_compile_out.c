/*
 * cmd_compile_out.c - what mlc-compile prints (docs/mlc-compile.md,
 * "Report"): the list of functions compiled with the default schedule (a
 * warning, or the error of --require-tuned), the --report table (aligned
 * with a header on a terminal, one plain line per function otherwise) and
 * the --json document.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/compile/cmd_compile_internal.h"

int compile_count_default(const mlc_compile_result_t *res) {
  int n = 0;
  for (int i = 0; i < res->nfuncs; i++) n += res->funcs[i].how == MLC_COMPILE_DEFAULT;
  return n;
}

void compile_print_untuned(FILE *f, const char *head, const mlc_compile_result_t *res) {
  fputs(head, f);
  for (int i = 0; i < res->nfuncs; i++) {
    const mlc_compile_func_t *fn = &res->funcs[i];
    if (fn->how == MLC_COMPILE_DEFAULT) fprintf(f, "  %s (%s): %s\n", fn->name, fn->key, fn->why_default);
  }
}

/* ------------------------------------------------------------------------ */
/* Values                                                                    */
/* ------------------------------------------------------------------------ */

/* "12.3 us", "4.56 ms", "1.2 s". */
static const char *duration(char buf[32], double secs) {
  if (!isfinite(secs)) snprintf(buf, 32, "-");
  else if (secs >= 1) snprintf(buf, 32, "%.4g s", secs);
  else if (secs >= 1e-3) snprintf(buf, 32, "%.4g ms", secs * 1e3);
  else snprintf(buf, 32, "%.4g us", secs * 1e6);
  return buf;
}

/* ISO 8601 UTC: "2024-05-01T12:34:56Z", with ".123456" when `micro`. */
static const char *iso_time(char buf[40], int64_t us, bool micro) {
  time_t s = (time_t)(us / 1000000);
  struct tm tm;
  char base[32];
  if (us < 0 || !gmtime_r(&s, &tm) || !strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm)) {
    snprintf(buf, 40, "-");
    return buf;
  }
  if (micro) snprintf(buf, 40, "%s.%06dZ", base, (int)(us % 1000000));
  else snprintf(buf, 40, "%sZ", base);
  return buf;
}

/* ------------------------------------------------------------------------ */
/* --report                                                                  */
/* ------------------------------------------------------------------------ */

enum { COL_NAME, COL_KEY, COL_RECORD, COL_MEDIAN, COL_TRACE, COL_WHEN, COL_DEVICE, COL_WORKER, NCOLS };
static const char *const headers[NCOLS] = {"FUNCTION", "KEY",  "RECORD",         "MEDIAN",
                                           "TRACE",    "MEASURED (UTC)", "DEVICE", "WORKER"};

/* The cells of a tuned function's row (buffers owned by the caller). */
typedef struct {
  char median[32], trace[16], when[40];
  const char *cells[NCOLS];
} row_t;

static void row_of(row_t *r, const mlc_compile_func_t *fn) {
  snprintf(r->trace, sizeof r->trace, "%d", fn->trace_len);
  const char *cells[NCOLS] = {fn->name,           fn->key, fn->record_id, duration(r->median, fn->median_secs),
                              r->trace,           iso_time(r->when, fn->created_at_us, false),
                              fn->device_key ? fn->device_key : "", fn->worker_id ? fn->worker_id : ""};
  memcpy(r->cells, cells, sizeof cells);
}

/* A row padded to the widths; MEDIAN and TRACE right-aligned. */
static void print_cells(const char *const *cells, int n, const size_t *width) {
  for (int c = 0; c < n; c++) {
    bool right = c == COL_MEDIAN || c == COL_TRACE, last = c == n - 1;
    int pad = (int)(width[c] - strlen(cells[c]));
    if (right) printf("%*s", pad, "");
    fputs(cells[c], stdout);
    if (!last) printf("%*s  ", right ? 0 : pad, "");
  }
  putchar('\n');
}

/* On a terminal: FUNCTION KEY RECORD MEDIAN TRACE MEASURED DEVICE WORKER,
 * aligned; a default-scheduled function says so after its key. */
static void print_table(const mlc_compile_result_t *res) {
  size_t width[NCOLS];
  for (int c = 0; c < NCOLS; c++) width[c] = strlen(headers[c]);
  for (int i = 0; i < res->nfuncs; i++) {
    row_t r;
    row_of(&r, &res->funcs[i]);
    int ncells = res->funcs[i].how == MLC_COMPILE_TUNED ? NCOLS : COL_RECORD;
    for (int c = 0; c < ncells; c++)
      if (strlen(r.cells[c]) > width[c]) width[c] = strlen(r.cells[c]);
  }
  print_cells(headers, NCOLS, width);
  for (int i = 0; i < res->nfuncs; i++) {
    const mlc_compile_func_t *fn = &res->funcs[i];
    row_t r;
    row_of(&r, fn);
    if (fn->how == MLC_COMPILE_TUNED) {
      print_cells(r.cells, NCOLS, width);
      continue;
    }
    printf("%-*s  %-*s  default schedule (%s)\n", (int)width[COL_NAME], fn->name, (int)width[COL_KEY], fn->key,
           fn->why_default);
  }
}

/* Otherwise one line per function:
 *   NAME KEY: record ID, median T, N instructions, measured WHEN on DEVICE (worker W)
 *   NAME KEY: default schedule (WHY) */
static void print_lines(const mlc_compile_result_t *res) {
  for (int i = 0; i < res->nfuncs; i++) {
    const mlc_compile_func_t *fn = &res->funcs[i];
    if (fn->how != MLC_COMPILE_TUNED) {
      printf("%s %s: default schedule (%s)\n", fn->name, fn->key, fn->why_default);
      continue;
    }
    char median[32], when[40];
    printf("%s %s: record %s, median %s, %d instruction%s, measured %s on %s (worker %s)\n", fn->name, fn->key,
           fn->record_id, duration(median, fn->median_secs), fn->trace_len, fn->trace_len == 1 ? "" : "s",
           iso_time(when, fn->created_at_us, false), fn->device_key, fn->worker_id);
  }
}

void compile_print_report(const compile_summary_t *s, bool table) {
  if (table) print_table(s->res);
  else print_lines(s->res);
}

/* ------------------------------------------------------------------------ */
/* --json                                                                    */
/* ------------------------------------------------------------------------ */

static json_t *str_or_null(const char *s) { return s ? json_string(s) : json_null(); }

static json_t *record_json(const mlc_compile_func_t *fn) {
  char when[40];
  json_t *r = json_object();
  if (!r) return NULL;
  json_object_set_new(r, "id", json_string(fn->record_id));
  json_object_set_new(r, "median_secs", isfinite(fn->median_secs) ? json_real(fn->median_secs) : json_null());
  json_object_set_new(r, "trace_len", json_integer(fn->trace_len));
  json_object_set_new(r, "measured_at", json_string(iso_time(when, fn->created_at_us, true)));
  json_object_set_new(r, "device_key", json_string(fn->device_key ? fn->device_key : ""));
  json_object_set_new(r, "worker_id", json_string(fn->worker_id ? fn->worker_id : ""));
  return r;
}

static json_t *func_json(const mlc_compile_func_t *fn) {
  json_t *o = json_object();
  if (!o) return NULL;
  bool tuned = fn->how == MLC_COMPILE_TUNED;
  json_object_set_new(o, "name", json_string(fn->name));
  json_object_set_new(o, "key", json_string(fn->key));
  json_object_set_new(o, "schedule", json_string(tuned ? "tuned" : "default"));
  json_object_set_new(o, "record", tuned ? record_json(fn) : json_null());
  json_object_set_new(o, "why_default", tuned ? json_null() : str_or_null(fn->why_default));
  return o;
}

/* {"target", "db", "output", "header", "error", "functions": [...]} */
int compile_print_json(const compile_summary_t *s) {
  json_t *doc = json_object(), *funcs = json_array();
  if (!doc || !funcs) {
    json_decref(doc);
    json_decref(funcs);
    return MLC_ENOMEM;
  }
  for (int i = 0; i < s->res->nfuncs; i++) json_array_append_new(funcs, func_json(&s->res->funcs[i]));
  json_object_set_new(doc, "target", json_string(s->target));
  json_object_set_new(doc, "db", str_or_null(s->db));
  json_object_set_new(doc, "output", str_or_null(s->output));
  json_object_set_new(doc, "header", str_or_null(s->header));
  json_object_set_new(doc, "error", str_or_null(s->error));
  json_object_set_new(doc, "functions", funcs);
  char *text = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
  json_decref(doc);
  if (!text) return MLC_ENOMEM;
  puts(text);
  free(text);
  return MLC_OK;
}
