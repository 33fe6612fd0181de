/*
 * pg_write.c - the PostgreSQL backend's writes: workloads, devices and
 * batches of records.
 *
 * A batch is one transaction, and every row is INSERT ... ON CONFLICT (id)
 * DO NOTHING, so a batch retried after a lost connection (when nobody knows
 * whether the COMMIT landed) adds exactly the rows that are missing. Rows are
 * sent sorted by id so two writers whose batches overlap take row locks in
 * the same order and cannot deadlock each other.
 *
 * Three ways to send a batch (PG_INSERT_METHODS; MLC_PG_INSERT picks one,
 * for measuring): `unnest`, one prepared statement whose 14 parameters are
 * arrays, one element per record, unnested into rows (one round trip, any
 * batch size, one plan); `pipeline`, one prepared single-row INSERT per record
 * sent back to back in libpq pipeline mode between BEGIN and COMMIT; `copy`,
 * COPY into a per-connection temp table, then one INSERT ... SELECT. The
 * default is the fastest measured on the development machine (numbers in
 * docs/database.md).
 *
 * Each record keeps the device properties it was committed with; `devices`
 * (which records.device_key references) lists each device key once, with its
 * first non-empty properties, written the first time this connection sees
 * the key. That upsert runs on its own before the batch (a device row with
 * no records is harmless), so the batch itself stays one statement.
 */
#include "database/pg/pg_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NCOLS = 14 };

/* Batches larger than this are sent as several statements inside one
 * explicit transaction, so no single parameter grows without bound. */
enum { CHUNK = 4096 };

/* The text of one record's columns in PG_STAGE_COLUMNS order (NULL = SQL
 * NULL); numbers printed with 17 significant digits read back exactly. */
typedef struct {
  const char *v[NCOLS];
  char key[24], hash[24], median[32], created[24];
  mlc_strbuf_t run_secs;
} row_t;

static void row_fill(row_t *t, const db_record_t *r) {
  pg_key_param(t->key, r->workload_key);
  pg_key_param(t->hash, r->trace_hash);
  snprintf(t->created, sizeof t->created, "%lld", (long long)r->created_at_us);
  mlc_sb_reset(&t->run_secs);
  mlc_sb_putc(&t->run_secs, '{');
  for (int i = 0; i < r->nrun_secs; i++)
    mlc_sb_printf(&t->run_secs, "%s%.17g", i ? "," : "", r->run_secs[i]);
  mlc_sb_putc(&t->run_secs, '}');
  bool ok = r->error_kind == MLC_ERROR_KIND_NONE;
  if (ok) snprintf(t->median, sizeof t->median, "%.17g", db_record_median(r));
  const char *v[NCOLS] = {r->id,
                          t->key,
                          r->target,
                          r->device_key,
                          r->device_json && *r->device_json ? r->device_json : "{}",
                          r->trace_json,
                          t->hash,
                          mlc_sb_str(&t->run_secs),
                          ok ? t->median : NULL,
                          mlc_error_kind_name(r->error_kind),
                          r->error_msg ? r->error_msg : "",
                          r->compiler_version ? r->compiler_version : "",
                          r->worker_id ? r->worker_id : "",
                          t->created};
  memcpy(t->v, v, sizeof v);
}

/* ---- batches ------------------------------------------------------------- */

typedef struct {
  const db_record_t *records;
  int *order;  /* indices sorted by id */
  int n;
} batch_t;

static const db_record_t *batch_at(const batch_t *b, int i) { return &b->records[b->order[i]]; }

/* ---- unnest: parallel arrays --------------------------------------------- */

/* An array element: "text" with \ and " escaped, or NULL. */
static void array_elem(mlc_strbuf_t *sb, const char *s) {
  mlc_sb_putc(sb, sb->len ? ',' : '{');
  if (!s) {
    mlc_sb_append(sb, "NULL");
    return;
  }
  mlc_sb_putc(sb, '"');
  for (const char *p = s; *p;) {
    size_t run = strcspn(p, "\\\"");
    mlc_sb_appendn(sb, p, run);
    p += run;
    if (*p) {
      mlc_sb_putc(sb, '\\');
      mlc_sb_putc(sb, *p++);
    }
  }
  mlc_sb_putc(sb, '"');
}

static int insert_unnest_chunk(pg_db_t *db, const batch_t *b, int from, int to, row_t *row) {
  mlc_strbuf_t cols[NCOLS];
  for (int c = 0; c < NCOLS; c++) mlc_sb_init(&cols[c]);
  for (int i = from; i < to; i++) {
    row_fill(row, batch_at(b, i));
    for (int c = 0; c < NCOLS; c++) array_elem(&cols[c], row->v[c]);
  }
  int rc = MLC_OK;
  const char *params[NCOLS];
  for (int c = 0; c < NCOLS; c++) {
    mlc_sb_putc(&cols[c], '}');
    if (cols[c].failed || row->run_secs.failed)
      rc = mlc_error_set(MLC_ENOMEM, "out of memory for a batch");
    params[c] = mlc_sb_str(&cols[c]);
  }
  PGresult *res = NULL;
  if (rc == MLC_OK) rc = pg_exec(db, &res, PG_STMT_RECORDS_UNNEST, params, "inserting records");
  PQclear(res);
  for (int c = 0; c < NCOLS; c++) mlc_sb_free(&cols[c]);
  return rc;
}

static int insert_unnest(pg_db_t *db, const batch_t *b, row_t *row) {
  if (b->n <= CHUNK) return insert_unnest_chunk(db, b, 0, b->n, row); /* autocommit: one transaction */
  int rc = pg_exec_sql(db, "BEGIN", "inserting records");
  for (int from = 0; rc == MLC_OK && from < b->n; from += CHUNK)
    rc = insert_unnest_chunk(db, b, from, from + CHUNK < b->n ? from + CHUNK : b->n, row);
  if (rc == MLC_OK) rc = pg_exec_sql(db, "COMMIT", "committing records");
  return rc;
}

/* ---- pipeline: one INSERT per record, no waiting in between --------------- */

/* Reads the results of everything sent up to and including the sync. The
 * first failure is reported; later queries come back PIPELINE_ABORTED. */
static int pipeline_drain(pg_db_t *db, const char *what) {
  int rc = MLC_OK;
  for (;;) {
    PGresult *res = PQgetResult(db->conn);
    if (!res) {
      if (PQstatus(db->conn) == CONNECTION_BAD) return rc != MLC_OK ? rc : pg_fail(db, NULL, what);
      continue; /* end of one query's results */
    }
    ExecStatusType st = PQresultStatus(res);
    if (st == PGRES_PIPELINE_SYNC) {
      PQclear(res);
      return rc;
    }
    if (st == PGRES_FATAL_ERROR && rc == MLC_OK) rc = pg_fail(db, res, what);
    PQclear(res);
  }
}

static int pipeline_chunk(pg_db_t *db, const batch_t *b, int from, int to, row_t *row) {
  const char *name = pg_stmt_name(PG_STMT_RECORD_INSERT);
  for (int i = from; i < to; i++) {
    row_fill(row, batch_at(b, i));
    if (row->run_secs.failed) return mlc_error_set(MLC_ENOMEM, "out of memory for a batch");
    if (!PQsendQueryPrepared(db->conn, name, NCOLS, row->v, NULL, NULL, 0))
      return pg_fail(db, NULL, "sending records");
  }
  return MLC_OK;
}

static bool send_sql(pg_db_t *db, const char *sql) {
  return PQsendQueryParams(db->conn, sql, 0, NULL, NULL, NULL, NULL, 0) == 1;
}

/* Syncs every CHUNK rows: results must be read before the server's output
 * buffer fills, or both sides would block writing. BEGIN ... COMMIT spans
 * the syncs, so the batch is still one transaction. */
static int insert_pipeline(pg_db_t *db, const batch_t *b, row_t *row) {
  int rc = pg_prepare(db, PG_STMT_RECORD_INSERT, "preparing the record insert");
  if (rc != MLC_OK) return rc;
  if (!PQenterPipelineMode(db->conn)) return pg_fail(db, NULL, "entering pipeline mode");
  rc = send_sql(db, "BEGIN") ? MLC_OK : pg_fail(db, NULL, "sending records");
  for (int from = 0; rc == MLC_OK && from < b->n; from += CHUNK) {
    int to = from + CHUNK < b->n ? from + CHUNK : b->n;
    rc = pipeline_chunk(db, b, from, to, row);
    if (rc == MLC_OK && to == b->n && !send_sql(db, "COMMIT"))
      rc = pg_fail(db, NULL, "sending records");
    if (!PQpipelineSync(db->conn)) {
      if (rc == MLC_OK) rc = pg_fail(db, NULL, "sending records");
      break;
    }
    int drained = pipeline_drain(db, "inserting records");
    if (rc == MLC_OK) rc = drained;
  }
  if (PQstatus(db->conn) == CONNECTION_OK && !PQexitPipelineMode(db->conn) && rc == MLC_OK)
    rc = pg_fail(db, NULL, "leaving pipeline mode");
  return rc;
}

/* ---- copy: stage, then one INSERT ... SELECT ----------------------------- */

/* COPY text format: backslash escapes, \N for NULL, tab between columns. */
static void copy_field(mlc_strbuf_t *sb, const char *s, bool last) {
  if (!s) {
    mlc_sb_append(sb, "\\N");
  } else {
    for (const char *p = s; *p;) {
      size_t run = strcspn(p, "\\\n\r\t");
      mlc_sb_appendn(sb, p, run);
      p += run;
      if (!*p) break;
      mlc_sb_append(sb, *p == '\\' ? "\\\\" : *p == '\n' ? "\\n" : *p == '\r' ? "\\r" : "\\t");
      p++;
    }
  }
  mlc_sb_putc(sb, last ? '\n' : '\t');
}

static int stage_ready(pg_db_t *db) {
  if (db->stage_ready) return MLC_OK;
  int rc = pg_exec_sql(db,
                       "CREATE TEMP TABLE IF NOT EXISTS mlc_stage (id text, workload int8, "
                       "target text, device_key text, device_json text, trace text, "
                       "trace_hash int8, run_secs text, "
                       "median float8, error_kind text, error_msg text, compiler_version text, "
                       "worker_id text, created_us int8) ON COMMIT DELETE ROWS",
                       "creating the staging table");
  db->stage_ready = rc == MLC_OK;
  return rc;
}

static int copy_rows(pg_db_t *db, const batch_t *b, row_t *row) {
  PGresult *res = PQexec(db->conn, "COPY mlc_stage (" PG_STAGE_COLUMNS ") FROM STDIN");
  int rc = PQresultStatus(res) == PGRES_COPY_IN ? MLC_OK : pg_fail(db, res, "copying records");
  PQclear(res);
  if (rc != MLC_OK) return rc;
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  for (int i = 0; i < b->n && rc == MLC_OK; i++) {
    row_fill(row, batch_at(b, i));
    for (int c = 0; c < NCOLS; c++) copy_field(&sb, row->v[c], c == NCOLS - 1);
    if (sb.failed || row->run_secs.failed) rc = mlc_error_set(MLC_ENOMEM, "out of memory for a batch");
    else if (sb.len >= 1 << 16 || i == b->n - 1) {
      if (PQputCopyData(db->conn, sb.data, (int)sb.len) != 1) rc = pg_fail(db, NULL, "copying records");
      mlc_sb_reset(&sb);
    }
  }
  mlc_sb_free(&sb);
  if (PQputCopyEnd(db->conn, rc == MLC_OK ? NULL : "aborted by the client") != 1 && rc == MLC_OK)
    rc = pg_fail(db, NULL, "copying records");
  while ((res = PQgetResult(db->conn)) != NULL) {
    if (PQresultStatus(res) != PGRES_COMMAND_OK && rc == MLC_OK)
      rc = pg_fail(db, res, "copying records");
    PQclear(res);
  }
  return rc;
}

static int insert_copy(pg_db_t *db, const batch_t *b, row_t *row) {
  int rc = stage_ready(db);
  if (rc == MLC_OK) rc = pg_exec_sql(db, "BEGIN", "inserting records");
  if (rc == MLC_OK) rc = copy_rows(db, b, row);
  PGresult *res = NULL;
  if (rc == MLC_OK) rc = pg_exec(db, &res, PG_STMT_RECORDS_FROM_STAGE, NULL, "inserting records");
  PQclear(res);
  if (rc == MLC_OK) rc = pg_exec_sql(db, "COMMIT", "committing records");
  return rc;
}

/* ---- devices ------------------------------------------------------------- */

static bool device_known(const pg_db_t *db, const char *key) {
  for (size_t i = 0; i < db->devices.len; i++)
    if (strcmp(db->devices.data[i], key) == 0) return true;
  return false;
}

/* Remembers a key once its row is committed (bounded: forgetting only costs
 * one more idempotent insert). */
static void device_remember(pg_db_t *db, const char *key) {
  if (db->devices.len >= 256) {
    for (size_t i = 0; i < db->devices.len; i++) mlc_free(db->devices.data[i]);
    db->devices.len = 0;
  }
  char *copy = mlc_strdup(key);
  if (copy && mlc_vec_push(&db->devices, copy) != MLC_OK) mlc_free(copy);
}

/* Each device key of the batch not yet seen: its row, committed on its own
 * (a device row without records is harmless). */
static int ensure_devices(pg_db_t *db, const batch_t *b) {
  for (int i = 0; i < b->n; i++) {
    const db_record_t *r = batch_at(b, i);
    if (device_known(db, r->device_key)) continue;
    const char *json = r->device_json && *r->device_json ? r->device_json : "{}";
    const char *params[] = {r->device_key, json};
    PGresult *res;
    int rc = pg_exec(db, &res, PG_STMT_DEVICE_INSERT, params, "storing a device");
    if (rc != MLC_OK) return rc;
    PQclear(res);
    if (strcmp(json, "{}") != 0) device_remember(db, r->device_key); /* "{}" may be filled in later */
  }
  return MLC_OK;
}

/* ---- the units ----------------------------------------------------------- */

typedef struct {
  batch_t batch;
  row_t row;
} commit_t;

static int commit_unit(pg_db_t *db, void *payload) {
  commit_t *c = payload;
  int rc = ensure_devices(db, &c->batch);
  if (rc != MLC_OK) return rc;
  switch (db->insert_method) {
  case PG_INSERT_UNNEST: return insert_unnest(db, &c->batch, &c->row);
  case PG_INSERT_PIPELINE: return insert_pipeline(db, &c->batch, &c->row);
  case PG_INSERT_COPY: return insert_copy(db, &c->batch, &c->row);
  case PG_INSERT_COUNT: break;
  }
  MLC_PANIC("bad insert method %d", (int)db->insert_method);
}

static int cmp_by_id(const void *a, const void *b, void *records) {
  const db_record_t *r = records;
  return strcmp(r[*(const int *)a].id, r[*(const int *)b].id);
}

int pg_commit_records(db_t *base, const db_record_t *records, int n) {
  pg_db_t *db = pg_db(base);
  commit_t c = {.batch = {records, mlc_malloc((size_t)n * sizeof(int)), n}};
  if (!c.batch.order) return mlc_error_set(MLC_ENOMEM, "out of memory for a batch");
  for (int i = 0; i < n; i++) c.batch.order[i] = i;
  qsort_r(c.batch.order, (size_t)n, sizeof(int), cmp_by_id, (void *)records);
  mlc_sb_init(&c.row.run_secs);
  int rc = pg_retry(db, commit_unit, &c);
  mlc_sb_free(&c.row.run_secs);
  mlc_free(c.batch.order);
  return rc;
}

typedef struct {
  const char *params[3];
} workload_t;

static int workload_unit(pg_db_t *db, void *payload) {
  workload_t *w = payload;
  PGresult *res;
  int rc = pg_exec(db, &res, PG_STMT_WORKLOAD_INSERT, w->params, "storing a workload");
  PQclear(res);
  return rc;
}

int pg_commit_workload(db_t *base, uint64_t key, const char *name, const char *tvmscript) {
  char keytext[24];
  pg_key_param(keytext, key);
  workload_t w = {{keytext, name, tvmscript}};
  return pg_retry(pg_db(base), workload_unit, &w);
}

int pg_insert_method_parse(pg_insert_method_t *out, const char *name) {
  static const char *const names[] = {
#define PG_IM_NAME_(name, e) name,
      PG_INSERT_METHODS(PG_IM_NAME_)
#undef PG_IM_NAME_
  };
  for (int i = 0; i < PG_INSERT_COUNT; i++)
    if (strcmp(names[i], name) == 0) {
      *out = (pg_insert_method_t)i;
      return MLC_OK;
    }
  return mlc_error_set(MLC_EINVAL, "MLC_PG_INSERT=%s: want unnest, pipeline or copy", name);
}
