/*
 * pg_read.c - the PostgreSQL backend's queries: records (best, top_k, by
 * filter), workloads and statistics, each one prepared statement (PG_STMTS),
 * rows turned into the result types of db_priv.h.
 *
 * best/top_k read records_best_idx in order: WHERE workload, target and
 * error_kind = '' match the partial index's columns and predicate, ORDER BY
 * median, id is its order, so the plan is an index scan that stops after k
 * rows however many records the task has. The general filter uses "$n IS
 * NULL OR column = $n" parameters; PostgreSQL plans those per execution
 * (custom plans) while that is cheaper, so the indexes still serve them.
 * A filter with an id has its own statement whose id condition is
 * unconditional, so even a generic plan is a primary-key lookup.
 *
 * Traces and device properties are stored as `json`, which keeps the text,
 * so they come back byte for byte as committed.
 */
#include "database/pg/pg_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Column positions of PG_RECORD_COLUMNS. */
enum {
  COL_ID, COL_WORKLOAD, COL_TARGET, COL_DEVICE_KEY, COL_PROPERTIES, COL_TRACE, COL_TRACE_HASH,
  COL_RUN_SECS, COL_ERROR_KIND, COL_ERROR_MSG, COL_COMPILER_VERSION, COL_WORKER_ID, COL_CREATED_US
};

/* "{0.5,1e-05,2}" into an array in arena. */
static int parse_run_secs(mlc_arena_t *arena, const char *text, double **out, int *n) {
  *n = 0;
  *out = NULL;
  int count = text[1] == '}' ? 0 : 1;
  for (const char *p = text; *p; p++) count += *p == ',';
  if (count == 0) return MLC_OK;
  double *v = mlc_arena_alloc(arena, (size_t)count * sizeof *v);
  if (!v) return mlc_error_set(MLC_ENOMEM, "out of memory for a query result");
  const char *p = text + 1;
  for (int i = 0; i < count; i++) {
    char *end;
    v[i] = strtod(p, &end);
    if (end == p) return mlc_error_set(MLC_EIO, "bad run_secs array '%s' from the server", text);
    p = end + 1;
  }
  *out = v;
  *n = count;
  return MLC_OK;
}

/* Row `i` of res into r (strings borrowed from res or in scratch), then a
 * deep copy into the result. */
static int add_record_row(db_result_t *out, mlc_arena_t *scratch, const PGresult *res, int i) {
  db_record_t r = {0};
  snprintf(r.id, sizeof r.id, "%s", PQgetvalue(res, i, COL_ID));
  r.workload_key = pg_key_value(PQgetvalue(res, i, COL_WORKLOAD));
  r.target = PQgetvalue(res, i, COL_TARGET);
  r.device_key = PQgetvalue(res, i, COL_DEVICE_KEY);
  r.device_json = PQgetvalue(res, i, COL_PROPERTIES);
  r.trace_json = PQgetvalue(res, i, COL_TRACE);
  r.trace_hash = pg_key_value(PQgetvalue(res, i, COL_TRACE_HASH));
  double *run_secs;
  int rc = parse_run_secs(scratch, PQgetvalue(res, i, COL_RUN_SECS), &run_secs, &r.nrun_secs);
  if (rc != MLC_OK) return rc;
  r.run_secs = run_secs;
  const char *kind = PQgetvalue(res, i, COL_ERROR_KIND);
  if (mlc_error_kind_parse(&r.error_kind, kind) != MLC_OK)
    return mlc_error_set(MLC_EIO, "record %s has an error kind this build does not know: '%s'",
                         r.id, kind);
  r.error_msg = PQgetvalue(res, i, COL_ERROR_MSG);
  r.compiler_version = PQgetvalue(res, i, COL_COMPILER_VERSION);
  r.worker_id = PQgetvalue(res, i, COL_WORKER_ID);
  r.created_at_us = strtoll(PQgetvalue(res, i, COL_CREATED_US), NULL, 10);
  return db_result_add_record(out, &r);
}

static int add_record_rows(db_result_t *out, const PGresult *res) {
  mlc_arena_t *scratch = mlc_arena_new();
  if (!scratch) return mlc_error_set(MLC_ENOMEM, "out of memory for a query result");
  int rc = MLC_OK;
  for (int i = 0; i < PQntuples(res) && rc == MLC_OK; i++) rc = add_record_row(out, scratch, res, i);
  mlc_arena_free(scratch);
  return rc;
}

/* ---- records ------------------------------------------------------------- */

typedef struct {
  pg_stmt_t stmt;
  const char *params[7];
  db_result_t **out;
} query_t;

static int query_unit(pg_db_t *db, void *payload) {
  query_t *q = payload;
  PGresult *res;
  int rc = pg_exec(db, &res, q->stmt, q->params, "querying records");
  if (rc != MLC_OK) return rc;
  db_result_t *out;
  rc = db_result_new(&out);
  if (rc == MLC_OK) rc = add_record_rows(out, res);
  PQclear(res);
  if (rc != MLC_OK) {
    db_result_free(out);
    return rc;
  }
  db_result_free(*q->out); /* a retried unit replaces what an earlier try made */
  *q->out = out;
  return MLC_OK;
}

int pg_query(db_t *db, db_result_t **out, const db_filter_t *f, int top_k_by_time) {
  *out = NULL;
  char key[24], hash[24], only_ok[8], limit[16];
  pg_key_param(key, f->workload_key);
  pg_key_param(hash, f->trace_hash);
  snprintf(only_ok, sizeof only_ok, "%d", f->only_ok);
  snprintf(limit, sizeof limit, "%d", f->limit);
  query_t q = {.out = out};
  bool top_k = top_k_by_time && f->workload_key && f->target && f->only_ok == 1 && !f->device_key &&
               !f->trace_hash && !f->id && f->limit > 0;
  if (top_k) {
    q.stmt = PG_STMT_TOP_K;
    q.params[0] = key;
    q.params[1] = f->target;
    q.params[2] = limit;
  } else {
    q.stmt = top_k_by_time ? PG_STMT_RECORDS_BY_TIME : PG_STMT_RECORDS;
    if (f->id) q.stmt = PG_STMT_RECORD_BY_ID; /* one row at most: no order to keep */
    q.params[0] = f->workload_key ? key : NULL;
    q.params[1] = f->target;
    q.params[2] = f->device_key;
    q.params[3] = f->trace_hash ? hash : NULL;
    q.params[4] = only_ok;
    q.params[5] = f->limit > 0 ? limit : NULL; /* LIMIT NULL: all rows */
    q.params[6] = f->id;
  }
  return pg_retry(pg_db(db), query_unit, &q);
}

/* ---- workloads ----------------------------------------------------------- */

typedef struct {
  const char *params[1];
  db_result_t **out;
} workloads_t;

static int workloads_unit(pg_db_t *db, void *payload) {
  workloads_t *w = payload;
  PGresult *res;
  int rc = pg_exec(db, &res, w->params[0] ? PG_STMT_WORKLOAD : PG_STMT_WORKLOADS, w->params,
                   "querying workloads");
  if (rc != MLC_OK) return rc;
  db_result_t *out;
  rc = db_result_new(&out);
  for (int i = 0; rc == MLC_OK && i < PQntuples(res); i++)
    rc = db_result_add_workload(out, pg_key_value(PQgetvalue(res, i, 0)), PQgetvalue(res, i, 1),
                                PQgetvalue(res, i, 2));
  PQclear(res);
  if (rc != MLC_OK) {
    db_result_free(out);
    return rc;
  }
  db_result_free(*w->out);
  *w->out = out;
  return MLC_OK;
}

int pg_workloads(db_t *db, db_result_t **out, uint64_t key) {
  *out = NULL;
  char keytext[24];
  pg_key_param(keytext, key);
  workloads_t w = {{key ? keytext : NULL}, out};
  return pg_retry(pg_db(db), workloads_unit, &w);
}

/* ---- stats --------------------------------------------------------------- */

static int stats_totals(pg_db_t *db, db_stats_t *s) {
  PGresult *res;
  int rc = pg_exec(db, &res, PG_STMT_STATS_TOTALS, NULL, "counting records");
  if (rc != MLC_OK) return rc;
  s->nworkloads = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
  s->nrecords = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
  s->nfailures = strtoll(PQgetvalue(res, 0, 2), NULL, 10);
  PQclear(res);
  return MLC_OK;
}

static int stats_kinds(pg_db_t *db, db_stats_t *s) {
  PGresult *res;
  int rc = pg_exec(db, &res, PG_STMT_STATS_KINDS, NULL, "counting failures");
  if (rc != MLC_OK) return rc;
  for (int i = 0; i < PQntuples(res) && rc == MLC_OK; i++) {
    mlc_error_kind_t k;
    if (mlc_error_kind_parse(&k, PQgetvalue(res, i, 0)) != MLC_OK)
      rc = mlc_error_set(MLC_EIO, "records hold an error kind this build does not know: '%s'",
                         PQgetvalue(res, i, 0));
    else
      s->failures_by_kind[k] = strtoll(PQgetvalue(res, i, 1), NULL, 10);
  }
  PQclear(res);
  return rc;
}

static int stats_targets(pg_db_t *db, db_stats_t *s) {
  PGresult *res;
  int rc = pg_exec(db, &res, PG_STMT_STATS_TARGETS, NULL, "counting records per target");
  if (rc != MLC_OK) return rc;
  for (int i = 0; i < PQntuples(res) && rc == MLC_OK; i++)
    rc = db_stats_add_target(s, PQgetvalue(res, i, 0), strtoll(PQgetvalue(res, i, 1), NULL, 10));
  PQclear(res);
  return rc;
}

/* One snapshot, so the totals and the breakdowns agree. */
static int stats_unit(pg_db_t *db, void *payload) {
  db_stats_t *s = payload;
  db_stats_free(s);
  int rc = db_stats_begin(s);
  if (rc == MLC_OK) rc = pg_exec_sql(db, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "stats");
  if (rc == MLC_OK) rc = stats_totals(db, s);
  if (rc == MLC_OK) rc = stats_kinds(db, s);
  if (rc == MLC_OK) rc = stats_targets(db, s);
  if (rc == MLC_OK) rc = pg_exec_sql(db, "COMMIT", "stats");
  return rc;
}

int pg_stats(db_t *db, db_stats_t *out) { return pg_retry(pg_db(db), stats_unit, out); }
