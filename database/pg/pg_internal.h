/*
 * pg_internal.h - private to the PostgreSQL backend (the .c files of database/pg/).
 *
 * The backend is split by concern: pg_conn.c (connecting, prepared
 * statements, error classification, reconnect-and-retry),
 * pg_schema.c (versioned migrations), pg_write.c (workloads, devices, batched
 * record inserts), pg_read.c (queries and stats), pg_lease.c (leases and
 * prune) and pg_backend.c (open/close and the vtable).
 *
 * Every operation is a unit of work run through pg_retry: when the
 * connection is lost (PQstatus bad, SQLSTATE class 08, 57P01-57P03) it
 * reconnects with backoff and runs the whole unit again. Units are written
 * to be idempotent (inserts are ON CONFLICT DO NOTHING on content ids), so a
 * retry after an unknown outcome neither loses nor doubles anything.
 */
#ifndef MLC_DATABASE_PG_INTERNAL_H
#define MLC_DATABASE_PG_INTERNAL_H

#include "database/db_priv.h"

#include <libpq-fe.h>

/* The columns a record query returns, in order (pg_read.c parses them). */
#define PG_RECORD_COLUMNS                                                          \
  "r.id, r.workload, r.target, r.device_key, r.device_properties, r.trace, r.trace_hash, " \
  "r.run_secs, r.error_kind, r.error_msg, r.compiler_version, r.worker_id, "       \
  "(extract(epoch FROM r.created_at) * 1000000)::int8"
#define PG_RECORD_FROM " FROM records r "

/* The record columns as inserted, and how one staged row becomes a records
 * row (created_at travels as Unix microseconds: exact, unlike a float). */
#define PG_INSERT_INTO                                                             \
  "INSERT INTO records (id, workload, target, device_key, device_properties, trace, " \
  "trace_hash, "                                                                   \
  "run_secs, median, error_kind, error_msg, compiler_version, worker_id, created_at) "
#define PG_INSERT_SELECT                                                           \
  "SELECT u.id, u.workload, u.target, u.device_key, u.device_json::json, "        \
  "u.trace::json, u.trace_hash, "                                                  \
  "u.run_secs::float8[], u.median, u.error_kind, u.error_msg, u.compiler_version, " \
  "u.worker_id, timestamptz 'epoch' + u.created_us * interval '1 microsecond' "
#define PG_STAGE_COLUMNS                                                           \
  "id, workload, target, device_key, device_json, trace, trace_hash, run_secs, "   \
  "median, "                                                                       \
  "error_kind, error_msg, compiler_version, worker_id, created_us"
#define PG_ON_CONFLICT " ON CONFLICT (id) DO NOTHING"

/* db_filter_t as SQL: $1 workload, $2 target, $3 device key, $4 trace hash,
 * $5 only_ok; a NULL parameter matches anything. */
#define PG_RECORD_FILTER                                                           \
  "($1::int8 IS NULL OR r.workload = $1) "                                         \
  "AND ($2::text IS NULL OR r.target = $2) "                                       \
  "AND ($3::text IS NULL OR r.device_key = $3) "                                   \
  "AND ($4::int8 IS NULL OR r.trace_hash = $4) "                                   \
  "AND ($5::int = 0 OR ($5 = 1 AND r.error_kind = '') OR ($5 = -1 AND r.error_kind <> '')) "

/* Every statement the backend runs, prepared once per connection on first
 * use (statement names are "mlc_<name>").
 *   name              nparams  SQL */
#define PG_STMTS(X)                                                                     \
  X(SCHEMA_EXISTS,     0, "SELECT to_regclass('mlc_schema_migrations') IS NOT NULL")    \
  X(SCHEMA_VERSION,    0, "SELECT coalesce(max(version), 0) FROM mlc_schema_migrations") \
  X(WORKLOAD_INSERT,   3, "INSERT INTO workloads (key, name, tvmscript) VALUES ($1, $2, $3) " \
                          "ON CONFLICT (key) DO NOTHING")                               \
  /* A device's first non-empty properties win (pg_write.c). */                        \
  X(DEVICE_INSERT,     2, "INSERT INTO devices AS d (key, properties) VALUES ($1, $2::jsonb) " \
                          "ON CONFLICT (key) DO UPDATE SET properties = EXCLUDED.properties " \
                          "WHERE d.properties = '{}' AND EXCLUDED.properties <> '{}'")   \
  /* One statement for a whole batch: parallel arrays unnested into rows. */           \
  X(RECORDS_UNNEST,   14, PG_INSERT_INTO PG_INSERT_SELECT                               \
                          "FROM unnest($1::text[], $2::int8[], $3::text[], $4::text[], " \
                          "$5::text[], $6::text[], $7::int8[], $8::text[], $9::float8[], " \
                          "$10::text[], $11::text[], $12::text[], $13::text[], $14::int8[]) " \
                          "AS u(" PG_STAGE_COLUMNS ")" PG_ON_CONFLICT)                   \
  /* One row per statement, sent back to back in pipeline mode. */                      \
  X(RECORD_INSERT,    14, PG_INSERT_INTO PG_INSERT_SELECT                               \
                          "FROM (VALUES ($1::text, $2::int8, $3::text, $4::text, $5::text, " \
                          "$6::text, $7::int8, $8::text, $9::float8, $10::text, $11::text, " \
                          "$12::text, $13::text, $14::int8)) "                          \
                          "AS u(" PG_STAGE_COLUMNS ")" PG_ON_CONFLICT)                   \
  /* From the COPY staging table (a temp table per connection). */                      \
  X(RECORDS_FROM_STAGE, 0, PG_INSERT_INTO PG_INSERT_SELECT "FROM mlc_stage u" PG_ON_CONFLICT) \
  /* best / top_k: served by records_best_idx (partial, measurements only). */         \
  X(TOP_K,             3, "SELECT " PG_RECORD_COLUMNS PG_RECORD_FROM                    \
                          "WHERE r.workload = $1 AND r.target = $2 AND r.error_kind = '' " \
                          "ORDER BY r.median, r.id LIMIT $3")                           \
  /* records(filter): newest first; $6 the limit (NULL: all rows). */                 \
  X(RECORDS,           6, "SELECT " PG_RECORD_COLUMNS PG_RECORD_FROM                    \
                          "WHERE " PG_RECORD_FILTER                                     \
                          "ORDER BY r.created_at DESC, r.id LIMIT $6")                  \
  /* The same filter, fastest first (failures, median NULL, last). */                   \
  X(RECORDS_BY_TIME,   6, "SELECT " PG_RECORD_COLUMNS PG_RECORD_FROM                    \
                          "WHERE " PG_RECORD_FILTER                                     \
                          "ORDER BY r.median NULLS LAST, r.id LIMIT $6")                \
  /* The filter with an id: the unconditional r.id = $7 makes every plan,   \
   * generic ones included, a primary-key lookup; the rest filters that row. */         \
  X(RECORD_BY_ID,      7, "SELECT " PG_RECORD_COLUMNS PG_RECORD_FROM                    \
                          "WHERE r.id = $7 AND " PG_RECORD_FILTER "LIMIT $6")           \
  X(WORKLOADS,         0, "SELECT key, name, tvmscript FROM workloads ORDER BY key < 0, key") \
  X(WORKLOAD,          1, "SELECT key, name, tvmscript FROM workloads WHERE key = $1")   \
  X(STATS_TOTALS,      0, "SELECT (SELECT count(*) FROM workloads), count(*), "          \
                          "count(*) FILTER (WHERE error_kind <> '') FROM records")      \
  X(STATS_KINDS,       0, "SELECT error_kind, count(*) FROM records "                   \
                          "WHERE error_kind <> '' GROUP BY error_kind")                 \
  X(STATS_TARGETS,     0, "SELECT target, count(*) FROM records GROUP BY target ORDER BY target") \
  /* pg_lease.c says why an advisory try-lock and a row with an expiry. */              \
  X(LEASE_ACQUIRE,     5, "WITH lock AS (SELECT pg_try_advisory_xact_lock($1::int8) AS held) " \
                          "INSERT INTO leases (workload, target, owner, expires_at) "   \
                          "SELECT $2, $3, $4, now() + $5::int * interval '1 second' "   \
                          "FROM lock WHERE lock.held "                                  \
                          "ON CONFLICT (workload, target) DO UPDATE "                   \
                          "SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at " \
                          "WHERE leases.expires_at < now() OR leases.owner = EXCLUDED.owner " \
                          "RETURNING owner")                                            \
  X(LEASE_RELEASE,     3, "DELETE FROM leases WHERE workload = $1 AND target = $2 AND owner = $3") \
  X(LEASE_HOLDER,      2, "SELECT owner, extract(epoch FROM expires_at - now()) FROM leases "    \
                          "WHERE workload = $1 AND target = $2 AND expires_at > now()")  \
  X(PRUNE,             1, "WITH gone AS (DELETE FROM records r USING ("                \
                          "SELECT id, row_number() OVER (PARTITION BY workload, target " \
                          "ORDER BY median, id) AS rank FROM records WHERE error_kind = '') k " \
                          "WHERE r.id = k.id AND k.rank > $1 RETURNING 1) "             \
                          "SELECT count(*) FROM gone")

typedef enum {
#define PG_STMT_ENUM_(name, nparams, sql) PG_STMT_##name,
  PG_STMTS(PG_STMT_ENUM_)
#undef PG_STMT_ENUM_
  PG_STMT_COUNT
} pg_stmt_t;

/* How a batch of records reaches the server; measured in docs/database.md.
 *      name        enum */
#define PG_INSERT_METHODS(X) \
  X("unnest",   UNNEST)      \
  X("pipeline", PIPELINE)    \
  X("copy",     COPY)

typedef enum {
#define PG_IM_ENUM_(name, e) PG_INSERT_##e,
  PG_INSERT_METHODS(PG_IM_ENUM_)
#undef PG_IM_ENUM_
  PG_INSERT_COUNT
} pg_insert_method_t;

typedef struct {
  db_t base;                  /* first: a pg_db_t is a db_t */
  PGconn *conn;
  char *conninfo;             /* as given (with any password), for reconnecting */
  uint64_t prepared;          /* bit per pg_stmt_t prepared on this connection */
  bool stage_ready;           /* the COPY staging table exists on this connection */
  bool lost;                  /* the last failure was a lost connection */
  bool retryable;             /* the last failure was a deadlock/serialization failure */
  pg_insert_method_t insert_method;
  double reconnect_secs;      /* give up reconnecting after this long */
  MLC_VEC(char *) devices;    /* device keys known to be in `devices` */
} pg_db_t;

extern const db_backend_t db_backend_postgresql;

static inline pg_db_t *pg_db(db_t *db) { return (pg_db_t *)db; }

/* ---- pg_conn.c ---------------------------------------------------------- */

/* Connects db->conn to db->conninfo (one attempt; a new connection has
 * nothing prepared). MLC_EIO naming the redacted URI when the server cannot
 * be reached. */
int pg_connect(pg_db_t *db);
/* Runs a prepared statement (preparing it first on this connection). On
 * success *res is the result (PQclear it); on failure *res is NULL, the last
 * error says what failed, and db->lost / db->retryable say whether a retry
 * can help. `what` names the operation in messages. */
int pg_exec(pg_db_t *db, PGresult **res, pg_stmt_t stmt, const char *const *params, const char *what);
/* Runs SQL text with no parameters (BEGIN, COMMIT, DDL). */
int pg_exec_sql(pg_db_t *db, const char *sql, const char *what);
/* Prepares the statement on this connection unless it already is (the
 * pipeline path must prepare before entering pipeline mode). */
int pg_prepare(pg_db_t *db, pg_stmt_t stmt, const char *what);
const char *pg_stmt_name(pg_stmt_t stmt);
/* Classifies a failed result (or NULL for a connection-level failure): sets
 * db->lost / db->retryable and the last error; returns the status to report. */
int pg_fail(pg_db_t *db, const PGresult *res, const char *what);

/* A unit of work: runs again from the start after a reconnect. */
typedef int (*pg_unit_fn)(pg_db_t *db, void *payload);
/* Runs unit; when it fails because the connection was lost, reconnects with
 * backoff (up to db->reconnect_secs) and runs it again; a deadlock or
 * serialization failure is retried too. Other failures return at once. */
int pg_retry(pg_db_t *db, pg_unit_fn unit, void *payload);

/* Text of a bigint parameter: the u64 key as its two's complement. */
void pg_key_param(char buf[24], uint64_t key);
uint64_t pg_key_value(const char *text);

/* ---- pg_schema.c -------------------------------------------------------- */

/* Version of the schema this build writes (the last migration). */
int pg_schema_latest(void);
/* At open: refuses a database whose schema is newer than this build. */
int pg_schema_check(pg_db_t *db);
int pg_init(db_t *db);
/* The database's version (0 before db_init) and pg_schema_latest(). */
int pg_schema_version(db_t *db, int *current, int *supported);

/* ---- pg_write.c --------------------------------------------------------- */

int pg_commit_workload(db_t *db, uint64_t key, const char *name, const char *tvmscript);
int pg_commit_records(db_t *db, const db_record_t *records, int n);
/* MLC_PG_INSERT=unnest|pipeline|copy, or the default. */
int pg_insert_method_parse(pg_insert_method_t *out, const char *name);

/* ---- pg_read.c ---------------------------------------------------------- */

int pg_query(db_t *db, db_result_t **out, const db_filter_t *filter, int top_k_by_time);
int pg_workloads(db_t *db, db_result_t **out, uint64_t key);
int pg_stats(db_t *db, db_stats_t *out);

/* ---- pg_lease.c --------------------------------------------------------- */

int pg_lease_holder(db_t *db, bool *held, char *owner, size_t len, double *secs_left, uint64_t key,
                    const char *target);
int pg_lease(db_t *db, bool *got, uint64_t key, const char *target, const char *owner, int ttl_s,
             bool release);
int pg_prune(db_t *db, int64_t *removed, int keep);

#endif /* MLC_DATABASE_PG_INTERNAL_H */
