/*
 * pg_schema.c - the PostgreSQL schema and its versioned migrations.
 *
 * Every migration is a list of SQL statements in PG_MIGRATIONS, tagged with
 * the schema version it brings the database to; mlc_schema_migrations holds
 * one row per version applied. db_init runs, in one transaction and under a
 * transaction-scoped advisory lock (so concurrent inits queue instead of
 * racing on CREATE TABLE), every statement whose version is above the
 * database's, then records those versions. Running it twice is a no-op. A
 * database whose version is above this build's is refused by db_open and by
 * db_init: an old binary must not write rows a newer schema does not expect.
 *
 * Choices in version 1 (docs/database.md, "PostgreSQL backend"):
 *   - workload keys are u64; stored as bigint through two's complement;
 *   - records.workload is not a foreign key: a record may arrive before (or
 *     without) its workload's TVMScript, as in the file backend;
 *   - device properties are stored with each record as committed (two hosts
 *     may share a device key with different details); `devices` lists each
 *     key once with its first non-empty properties;
 *   - ids and targets are COLLATE "C" so orders match the file backend's strcmp;
 *   - median is NULL for failures; records_best_idx is partial (measurements
 *     only) on (workload, target, median, id), the exact order top_k reads;
 *   - a record's trace and device properties are `json`, not `jsonb`: json
 *     is validated and queryable (->, ->>) but keeps the committed text byte
 *     for byte, as the file backend does, so export/import is lossless;
 *     jsonb would reorder keys and reprint numbers (1e+17 comes back as
 *     100000000000000000, a different JSON text and type); `devices` is
 *     jsonb (a registry, compared with '{}');
 *   - no index on created_at: every index slows the insert path, and the
 *     newest-first listing is an administrative query (a top-N sort).
 */
#include "database/pg/pg_internal.h"

#include <stdio.h>
#include <stdlib.h>

/*    version  statement */
#define PG_MIGRATIONS(X)                                                                        \
  X(1, "CREATE TABLE workloads ("                                                               \
       "key bigint PRIMARY KEY, name text NOT NULL, tvmscript text NOT NULL, "                  \
       "created_at timestamptz NOT NULL DEFAULT now())")                                        \
  X(1, "CREATE TABLE devices (key text COLLATE \"C\" PRIMARY KEY, "                             \
       "properties jsonb NOT NULL DEFAULT '{}')")                                               \
  X(1, "CREATE TABLE records ("                                                                 \
       "id text COLLATE \"C\" PRIMARY KEY, "                                                    \
       "workload bigint NOT NULL, target text COLLATE \"C\" NOT NULL, "                         \
       "device_key text COLLATE \"C\" NOT NULL REFERENCES devices (key), "                      \
       "device_properties json NOT NULL, trace json NOT NULL, trace_hash bigint NOT NULL, "     \
       "run_secs double precision[] NOT NULL, median double precision, "                        \
       "error_kind text NOT NULL DEFAULT '', error_msg text NOT NULL DEFAULT '', "              \
       "compiler_version text NOT NULL DEFAULT '', worker_id text NOT NULL DEFAULT '', "        \
       "created_at timestamptz NOT NULL)")                                                      \
  X(1, "CREATE INDEX records_best_idx ON records (workload, target, median, id) "               \
       "WHERE error_kind = ''")                                                                 \
  X(1, "CREATE INDEX records_trace_idx ON records (workload, target, trace_hash)")              \
  X(1, "CREATE TABLE leases (workload bigint NOT NULL, target text COLLATE \"C\" NOT NULL, "    \
       "owner text NOT NULL, expires_at timestamptz NOT NULL, PRIMARY KEY (workload, target))")

typedef struct {
  int version;
  const char *sql;
} migration_t;

static const migration_t migrations[] = {
#define PG_MIGRATION_ROW_(version, sql) {version, sql},
    PG_MIGRATIONS(PG_MIGRATION_ROW_)
#undef PG_MIGRATION_ROW_
};
enum { NMIGRATIONS = sizeof migrations / sizeof migrations[0] };

/* Serialises concurrent db_init calls (any constant unique to mlc-tune). */
#define PG_MIGRATION_LOCK "SELECT pg_advisory_xact_lock(7170322150571541069)"

int pg_schema_latest(void) { return migrations[NMIGRATIONS - 1].version; }

static int newer_schema(int version) {
  return mlc_error_set(MLC_EIO,
                       "database schema version %d is newer than this build understands (%d): "
                       "use a newer mlc-tune",
                       version, pg_schema_latest());
}

/* The database's schema version: 0 when it has no migrations table. */
static int schema_version(pg_db_t *db, int *version) {
  PGresult *res;
  *version = 0;
  int rc = pg_exec(db, &res, PG_STMT_SCHEMA_EXISTS, NULL, "reading the schema version");
  if (rc != MLC_OK) return rc;
  bool exists = PQgetvalue(res, 0, 0)[0] == 't';
  PQclear(res);
  if (!exists) return MLC_OK;
  rc = pg_exec(db, &res, PG_STMT_SCHEMA_VERSION, NULL, "reading the schema version");
  if (rc != MLC_OK) return rc;
  *version = atoi(PQgetvalue(res, 0, 0));
  PQclear(res);
  return MLC_OK;
}

static int check_unit(pg_db_t *db, void *payload) {
  int *version = payload;
  return schema_version(db, version);
}

int pg_schema_check(pg_db_t *db) {
  int version = 0;
  int rc = pg_retry(db, check_unit, &version);
  if (rc != MLC_OK) return rc;
  if (version > pg_schema_latest()) return newer_schema(version);
  if (version < pg_schema_latest())
    MLC_DEBUG("postgresql: %s has schema version %d; `mlc-db init` migrates it to %d",
              db->base.uri_redacted, version, pg_schema_latest());
  return MLC_OK;
}

int pg_schema_version(db_t *base, int *current, int *supported) {
  *supported = pg_schema_latest();
  return pg_retry(pg_db(base), check_unit, current);
}

/* The statements of versions above `from`, then their rows in the table. */
static int apply_migrations(pg_db_t *db, int from) {
  for (int i = 0; i < NMIGRATIONS; i++) {
    if (migrations[i].version <= from) continue;
    char what[64];
    snprintf(what, sizeof what, "migration to schema version %d", migrations[i].version);
    int rc = pg_exec_sql(db, migrations[i].sql, what);
    if (rc != MLC_OK) return rc;
  }
  for (int v = from + 1; v <= pg_schema_latest(); v++) {
    char sql[128];
    snprintf(sql, sizeof sql, "INSERT INTO mlc_schema_migrations (version) VALUES (%d)", v);
    int rc = pg_exec_sql(db, sql, "recording a migration");
    if (rc != MLC_OK) return rc;
  }
  return MLC_OK;
}

/* One transaction: a crash or a lost connection leaves the old schema. */
static int init_unit(pg_db_t *db, void *payload) {
  int *from = payload;
  int rc = pg_exec_sql(db, "BEGIN", "db_init");
  if (rc == MLC_OK) rc = pg_exec_sql(db, PG_MIGRATION_LOCK, "db_init: waiting for other inits");
  if (rc == MLC_OK)
    rc = pg_exec_sql(db,
                     "CREATE TABLE IF NOT EXISTS mlc_schema_migrations ("
                     "version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
                     "db_init: creating the migrations table");
  if (rc == MLC_OK) rc = schema_version(db, from);
  if (rc == MLC_OK && *from > pg_schema_latest()) rc = newer_schema(*from);
  if (rc == MLC_OK && *from < pg_schema_latest()) rc = apply_migrations(db, *from);
  if (rc == MLC_OK) rc = pg_exec_sql(db, "COMMIT", "db_init: commit");
  return rc;
}

int pg_init(db_t *base) {
  pg_db_t *db = pg_db(base);
  int from = 0;
  int rc = pg_retry(db, init_unit, &from);
  if (rc == MLC_OK && from < pg_schema_latest())
    MLC_INFO("postgresql: migrated %s from schema version %d to %d", db->base.uri_redacted, from,
             pg_schema_latest());
  return rc;
}
