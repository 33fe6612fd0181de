/*
 * pg_backend.c - the PostgreSQL database backend's vtable, open and close.
 *
 * db_open("postgresql://...", "postgres://..." or "host=... dbname=...")
 * lands here (db.c picks the backend by URI). Opening checks the string with
 * libpq, connects once (an unreachable server is an immediate MLC_EIO naming
 * the redacted URI, not 30 s of retries) and refuses a schema newer than this
 * build. It does not create the schema: db_init (mlc-db init) does.
 *
 * Environment, for operators and benchmarks:
 *   MLC_PG_RECONNECT_SECS  how long to keep reconnecting after a lost
 *                          connection before an operation fails (default 30)
 *   MLC_PG_INSERT          unnest | pipeline | copy: how batches are sent
 *                          (default unnest, the fastest measured)
 */
#include "database/pg/pg_internal.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_INSERT PG_INSERT_UNNEST
#define DEFAULT_RECONNECT_SECS 30.0

static void pg_close(db_t *base) {
  pg_db_t *db = pg_db(base);
  if (!db) return;
  if (db->conn) PQfinish(db->conn);
  for (size_t i = 0; i < db->devices.len; i++) mlc_free(db->devices.data[i]);
  mlc_vec_free(&db->devices);
  mlc_free(db->conninfo);
  mlc_free(db);
}

/* libpq's own parse: a bad string is MLC_EINVAL before any connection. */
static int check_conninfo(const char *uri, const char *shown) {
  char *err = NULL;
  PQconninfoOption *opts = PQconninfoParse(uri, &err);
  if (opts) {
    PQconninfoFree(opts);
    return MLC_OK;
  }
  int rc = mlc_error_set(MLC_EINVAL, "bad PostgreSQL connection string %s: %.*s", shown,
                         err ? (int)strcspn(err, "\n") : 13, err ? err : "out of memory");
  PQfreemem(err);
  return rc;
}

static int settings_from_env(pg_db_t *db) {
  db->insert_method = DEFAULT_INSERT;
  db->reconnect_secs = DEFAULT_RECONNECT_SECS;
  const char *secs = getenv("MLC_PG_RECONNECT_SECS");
  if (secs && *secs) {
    char *end;
    double v = strtod(secs, &end);
    if (*end || !(v >= 0 && v <= 86400))
      return mlc_error_set(MLC_EINVAL, "MLC_PG_RECONNECT_SECS=%s: want seconds (0-86400)", secs);
    db->reconnect_secs = v;
  }
  const char *method = getenv("MLC_PG_INSERT");
  return method && *method ? pg_insert_method_parse(&db->insert_method, method) : MLC_OK;
}

static int pg_open(db_t **out, const char *uri, bool create) {
  (void)create; /* connecting creates nothing */
  *out = NULL;
  pg_db_t *db = mlc_calloc(1, sizeof *db);
  if (!db || !(db->conninfo = mlc_strdup(uri))) {
    mlc_free(db);
    return mlc_error_set(MLC_ENOMEM, "out of memory opening a database");
  }
  db->base.backend = &db_backend_postgresql;
  db_uri_redact(db->base.uri_redacted, sizeof db->base.uri_redacted, uri);
  int rc = check_conninfo(uri, db->base.uri_redacted);
  if (rc == MLC_OK) rc = settings_from_env(db);
  if (rc == MLC_OK) rc = pg_connect(db); /* its message names the URI */
  if (rc == MLC_OK && (rc = pg_schema_check(db)) != MLC_OK)
    mlc_error_prefix("%s", db->base.uri_redacted);
  if (rc != MLC_OK) {
    pg_close(&db->base);
    return rc;
  }
  *out = &db->base;
  return MLC_OK;
}

const db_backend_t db_backend_postgresql = {
    .scheme = "postgresql",
    .open = pg_open,
    .close = pg_close,
    .init = pg_init,
    .commit_workload = pg_commit_workload,
    .commit_records = pg_commit_records,
    .query = pg_query,
    .workloads = pg_workloads,
    .stats = pg_stats,
    .lease = pg_lease,
    .lease_holder = pg_lease_holder,
    .prune = pg_prune,
    .schema_version = pg_schema_version,
};
