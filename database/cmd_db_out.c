/*
 * cmd_db_out.c - how mlc-db prints (docs/mlc-db.md "Output"): aligned
 * tables with a header on a terminal, tab-separated lines without a header
 * when standard output is a pipe or file (so `cut -f` and `sort` work), and
 * JSON with --json. Also the JSON form of a record, shared by `top` and
 * `show`.
 *
 * Stored records come from disk or another machine, so nothing here trusts
 * them: NULL strings print as "", a trace or device text that is not JSON is
 * kept as a string, a NaN or infinite time becomes null.
 */
#include "database/cmd_db_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------ */
/* Tables                                                                    */
/* ------------------------------------------------------------------------ */

int db_table_init(db_table_t *t, int ncols, const char *const *headers) {
  memset(t, 0, sizeof *t);
  t->arena = mlc_arena_new();
  if (!t->arena) return mlc_error_set(MLC_ENOMEM, "out of memory");
  t->ncols = ncols;
  t->headers = headers;
  return MLC_OK;
}

void db_table_free(db_table_t *t) {
  mlc_arena_free(t->arena);
  memset(t, 0, sizeof *t);
}

int db_table_row(db_table_t *t, const char *const *cells) {
  if (t->nrows == t->caprows) {
    int cap = t->caprows ? 2 * t->caprows : 16;
    t->cells = mlc_arena_grow(t->arena, t->cells, (size_t)t->nrows * (size_t)t->ncols,
                              (size_t)cap * (size_t)t->ncols, sizeof *t->cells);
    if (!t->cells) return mlc_error_set(MLC_ENOMEM, "out of memory");
    t->caprows = cap;
  }
  for (int c = 0; c < t->ncols; c++) {
    const char *s = mlc_arena_strdup(t->arena, cells[c] ? cells[c] : "-");
    if (!s) return mlc_error_set(MLC_ENOMEM, "out of memory");
    t->cells[t->nrows * t->ncols + c] = s;
  }
  t->nrows++;
  return MLC_OK;
}

/* A cell on a tab-separated line: tabs and newlines would split it, so they
 * become spaces. */
static void put_tsv_cell(const char *s) {
  for (; *s; s++) putchar(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s);
}

static const char *header_text(const char *h) { return h[0] == '>' ? h + 1 : h; }

static void print_aligned_row(const db_table_t *t, const char *const *cells, const size_t *width) {
  for (int c = 0; c < t->ncols; c++) {
    bool right = t->headers && t->headers[c][0] == '>', last = c == t->ncols - 1;
    int pad = (int)(width[c] - strlen(cells[c]));
    if (right) printf("%*s", pad, "");
    fputs(cells[c], stdout);
    if (!last) printf("%*s  ", right ? 0 : pad, "");
  }
  putchar('\n');
}

void db_table_print(const db_table_t *t, db_cmd_format_t format) {
  if (format != DB_OUT_TABLE) {
    for (int r = 0; r < t->nrows; r++)
      for (int c = 0; c < t->ncols; c++) {
        put_tsv_cell(t->cells[r * t->ncols + c]);
        putchar(c == t->ncols - 1 ? '\n' : '\t');
      }
    return;
  }
  size_t width[32] = {0};
  const char *heads[32];
  MLC_ASSERT(t->ncols <= 32);
  for (int c = 0; c < t->ncols; c++) {
    heads[c] = t->headers ? header_text(t->headers[c]) : "";
    width[c] = strlen(heads[c]);
    for (int r = 0; r < t->nrows; r++) {
      size_t n = strlen(t->cells[r * t->ncols + c]);
      if (n > width[c]) width[c] = n;
    }
  }
  if (t->headers) print_aligned_row(t, heads, width);
  for (int r = 0; r < t->nrows; r++) print_aligned_row(t, &t->cells[r * t->ncols], width);
}

/* ------------------------------------------------------------------------ */
/* Values                                                                    */
/* ------------------------------------------------------------------------ */

int db_cmd_print_json(json_t *json) {
  if (!json) return db_cmd_fail(EXIT_WORK, "out of memory building JSON");
  char *text = json_dumps(json, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
  json_decref(json);
  if (!text) return db_cmd_fail(EXIT_WORK, "out of memory printing JSON");
  puts(text);
  free(text);
  return EXIT_OK;
}

const char *db_cmd_ms(char buf[32], double secs) {
  if (!isfinite(secs)) return "-";
  snprintf(buf, 32, "%.4g", secs * 1e3);
  return buf;
}

const char *db_cmd_time(char buf[40], int64_t us) {
  time_t s = (time_t)(us / 1000000);
  struct tm tm;
  if (us < 0 || !gmtime_r(&s, &tm) || !strftime(buf, 40, "%Y-%m-%d %H:%M:%S", &tm)) snprintf(buf, 40, "%lld us", (long long)us);
  return buf;
}

const char *db_cmd_outcome(const db_record_t *r) {
  if (r->error_kind == MLC_ERROR_KIND_NONE) return "measured";
  if ((int)r->error_kind < 0 || r->error_kind >= MLC_ERROR_KIND_COUNT) return "unknown-error";
  return mlc_error_kind_name(r->error_kind);
}

static int cmp_workload_key(const void *a, const void *b) {
  uint64_t x = ((const db_workload_t *)a)->key, y = ((const db_workload_t *)b)->key;
  return x < y ? -1 : x > y;
}

void db_cmd_sort_workloads(db_result_t *ws) {
  if (ws && ws->nworkloads > 1) qsort(ws->workloads, (size_t)ws->nworkloads, sizeof *ws->workloads, cmp_workload_key);
}

const char *db_cmd_workload_name(const db_result_t *ws, uint64_t key) {
  for (int i = 0; ws && i < ws->nworkloads; i++)
    if (ws->workloads[i].key == key) return ws->workloads[i].name;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* A record as JSON                                                          */
/* ------------------------------------------------------------------------ */

static json_t *str_or_empty(const char *s) { return json_string(s ? s : ""); }

/* Stored JSON text parsed, or kept as a string when it does not parse (a
 * damaged record is still shown, not refused). */
static json_t *json_or_text(const char *text) {
  if (!text) return json_null();
  json_t *j = json_loads(text, JSON_DECODE_ANY, NULL);
  return j ? j : json_string(text);
}

static json_t *real_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *run_secs_json(const db_record_t *r) {
  json_t *a = json_array();
  for (int i = 0; a && r->run_secs && i < r->nrun_secs; i++) json_array_append_new(a, real_or_null(r->run_secs[i]));
  return a;
}

/* ISO 8601 with microseconds, the form every JSON consumer parses. */
static json_t *iso_time_json(int64_t us) {
  char buf[40], out[64];
  time_t s = (time_t)(us / 1000000);
  struct tm tm;
  if (us < 0 || !gmtime_r(&s, &tm) || !strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm)) return json_null();
  snprintf(out, sizeof out, "%s.%06lldZ", buf, (long long)(us % 1000000));
  return json_string(out);
}

json_t *db_cmd_record_json(const db_record_t *r, const char *workload_name) {
  char key[17], th[17];
  mlc_hash_hex(r->workload_key, key);
  mlc_hash_hex(r->trace_hash, th);
  json_t *o = json_object();
  if (!o) return NULL;
  json_object_set_new(o, "id", json_string(r->id));
  json_object_set_new(o, "workload_key", json_string(key));
  json_object_set_new(o, "workload", workload_name ? json_string(workload_name) : json_null());
  json_object_set_new(o, "target", str_or_empty(r->target));
  json_object_set_new(o, "device_key", str_or_empty(r->device_key));
  json_object_set_new(o, "device", json_or_text(r->device_json));
  json_object_set_new(o, "outcome", json_string(db_cmd_outcome(r)));
  json_object_set_new(o, "median_secs", real_or_null(db_record_median(r)));
  json_object_set_new(o, "run_secs", run_secs_json(r));
  json_object_set_new(o, "error_kind", json_string(r->error_kind == MLC_ERROR_KIND_NONE ? "" : db_cmd_outcome(r)));
  json_object_set_new(o, "error_msg", str_or_empty(r->error_msg));
  json_object_set_new(o, "compiler_version", str_or_empty(r->compiler_version));
  json_object_set_new(o, "worker_id", str_or_empty(r->worker_id));
  json_object_set_new(o, "created_at_us", json_integer(r->created_at_us));
  json_object_set_new(o, "created_at", iso_time_json(r->created_at_us));
  json_object_set_new(o, "trace_hash", json_string(th));
  json_object_set_new(o, "trace", json_or_text(r->trace_json));
  if (json_object_size(o) != 17) { /* a json_*_new above ran out of memory */
    json_decref(o);
    return NULL;
  }
  return o;
}
