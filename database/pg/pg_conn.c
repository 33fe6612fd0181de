/*
 * pg_conn.c - the PostgreSQL backend's connection: connecting (one attempt,
 * a redacted URI in every message), prepared statements made lazily per
 * connection, classification of failures, and the reconnect-and-retry loop
 * every operation runs through.
 *
 * A lost connection shows up as PQstatus == CONNECTION_BAD, as an error with
 * no SQLSTATE ("server closed the connection unexpectedly"), or as SQLSTATE
 * class 08 (connection exception) or 57P01-57P03 (the server is shutting
 * down, crashed, or is starting up). pg_retry then reconnects with
 * exponential backoff, for up to ~30 s (MLC_PG_RECONNECT_SECS), and runs the
 * whole unit of work again: the outcome of a COMMIT in flight is unknown, so
 * the unit must be idempotent, which ON CONFLICT on content ids makes it.
 */
#include "database/pg/pg_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const stmt_names[] = {
#define PG_STMT_NAME_(name, nparams, sql) "mlc_" #name,
    PG_STMTS(PG_STMT_NAME_)
#undef PG_STMT_NAME_
};
static const char *const stmt_sql[] = {
#define PG_STMT_SQL_(name, nparams, sql) sql,
    PG_STMTS(PG_STMT_SQL_)
#undef PG_STMT_SQL_
};
static const int stmt_nparams[] = {
#define PG_STMT_NP_(name, nparams, sql) nparams,
    PG_STMTS(PG_STMT_NP_)
#undef PG_STMT_NP_
};
_Static_assert(PG_STMT_COUNT <= 64, "prepared-statement bits fit db->prepared");

const char *pg_stmt_name(pg_stmt_t stmt) { return stmt_names[stmt]; }

/* ---- connecting ---------------------------------------------------------- */

/* libpq prints NOTICEs ("relation already exists, skipping") to stderr by
 * default; they belong in the debug log. */
static void notice_to_log(void *payload, const char *message) {
  (void)payload;
  MLC_DEBUG("postgresql: %.*s", (int)strcspn(message, "\n"), message);
}

/* libpq's multi-line message as one line, without the trailing newline. */
static void one_line(char *out, size_t len, const char *msg) {
  size_t at = 0;
  bool space = false;
  for (const char *p = msg; *p && at + 1 < len; p++) {
    if (*p == '\n' || *p == '\t' || *p == '\r') {
      space = true;
      continue;
    }
    if (space && at > 0) out[at++] = ' ';
    space = false;
    if (at + 1 < len) out[at++] = *p;
  }
  out[at] = '\0';
}

int pg_connect(pg_db_t *db) {
  if (db->conn) PQfinish(db->conn);
  db->prepared = 0;
  db->stage_ready = false;
  /* Defaults first: the connection string's own values come later and win. */
  const char *keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
  const char *values[] = {"10", "mlc-tune", db->conninfo, NULL};
  db->conn = PQconnectdbParams(keys, values, 1);
  if (!db->conn) return mlc_error_set(MLC_ENOMEM, "postgresql: out of memory connecting");
  if (PQstatus(db->conn) != CONNECTION_OK) {
    char msg[1024];
    one_line(msg, sizeof msg, PQerrorMessage(db->conn));
    return mlc_error_set(MLC_EIO, "could not connect to %s: %s", db->base.uri_redacted, msg);
  }
  PQsetNoticeProcessor(db->conn, notice_to_log, NULL);
  return MLC_OK;
}

/* ---- failures ------------------------------------------------------------ */

static bool is_connection_sqlstate(const char *state) {
  return state && (strncmp(state, "08", 2) == 0 || strcmp(state, "57P01") == 0 ||
                   strcmp(state, "57P02") == 0 || strcmp(state, "57P03") == 0);
}

int pg_fail(pg_db_t *db, const PGresult *res, const char *what) {
  const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
  const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
  const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
  char msg[1024];
  one_line(msg, sizeof msg, primary ? primary : PQerrorMessage(db->conn));
  db->lost = PQstatus(db->conn) == CONNECTION_BAD || is_connection_sqlstate(state);
  db->retryable = state && (strcmp(state, "40P01") == 0 || strcmp(state, "40001") == 0);
  /* db.c prefixes the URI; the message says what failed and how to fix it. */
  if (state && strcmp(state, "42P01") == 0)
    return mlc_error_set(MLC_EIO, "%s: %s (no mlc schema here: run `mlc-db init` on this database)",
                         what, msg);
  if (state && strncmp(state, "22", 2) == 0) /* data exception: bad input, e.g. a trace not JSON */
    return mlc_error_set(MLC_EINVAL, "%s: %s%s%s", what, msg, detail ? ": " : "", detail ? detail : "");
  return mlc_error_set(MLC_EIO, "%s: %s%s%s%s", what, msg, state ? " (SQLSTATE " : "",
                       state ? state : "", state ? ")" : "");
}

/* ---- statements ---------------------------------------------------------- */

int pg_prepare(pg_db_t *db, pg_stmt_t stmt, const char *what) {
  if (db->prepared & (UINT64_C(1) << stmt)) return MLC_OK;
  if (!db->conn || PQstatus(db->conn) != CONNECTION_OK) return pg_fail(db, NULL, what);
  PGresult *res = PQprepare(db->conn, stmt_names[stmt], stmt_sql[stmt], stmt_nparams[stmt], NULL);
  int rc = MLC_OK;
  if (PQresultStatus(res) != PGRES_COMMAND_OK)
    rc = pg_fail(db, res, what);
  else
    db->prepared |= UINT64_C(1) << stmt;
  PQclear(res);
  return rc;
}

int pg_exec(pg_db_t *db, PGresult **res, pg_stmt_t stmt, const char *const *params, const char *what) {
  *res = NULL;
  int rc = pg_prepare(db, stmt, what);
  if (rc != MLC_OK) return rc;
  PGresult *r = PQexecPrepared(db->conn, stmt_names[stmt], stmt_nparams[stmt], params, NULL, NULL, 0);
  ExecStatusType st = PQresultStatus(r);
  if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
    rc = pg_fail(db, r, what);
    PQclear(r);
    return rc;
  }
  *res = r;
  return MLC_OK;
}

int pg_exec_sql(pg_db_t *db, const char *sql, const char *what) {
  if (!db->conn || PQstatus(db->conn) != CONNECTION_OK) return pg_fail(db, NULL, what);
  PGresult *r = PQexec(db->conn, sql);
  ExecStatusType st = PQresultStatus(r);
  int rc = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK ? MLC_OK : pg_fail(db, r, what);
  PQclear(r);
  return rc;
}

/* ---- retry --------------------------------------------------------------- */

static double now_secs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_secs(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static bool connected(const pg_db_t *db) {
  return db->conn && PQstatus(db->conn) == CONNECTION_OK;
}

/* Reconnects with exponential backoff until `deadline`; MLC_OK or the last
 * connection error. */
static int reconnect(pg_db_t *db, double *delay, double deadline) {
  for (;;) {
    if (now_secs() + *delay > deadline) return MLC_EIO;
    sleep_secs(*delay);
    *delay = *delay * 2 > 1.0 ? 1.0 : *delay * 2;
    if (pg_connect(db) == MLC_OK) return MLC_OK;
  }
}

int pg_retry(pg_db_t *db, pg_unit_fn unit, void *payload) {
  double deadline = now_secs() + db->reconnect_secs, delay = 0.05;
  bool warned = false;
  for (;;) {
    db->lost = false;
    db->retryable = false;
    int rc = connected(db) ? unit(db, payload) : pg_fail(db, NULL, "connection");
    if (rc == MLC_OK) {
      if (warned) MLC_INFO("postgresql: reconnected to %s", db->base.uri_redacted);
      return MLC_OK;
    }
    /* A failure inside BEGIN ... leaves an aborted transaction behind. */
    if (!db->lost && PQtransactionStatus(db->conn) != PQTRANS_IDLE)
      pg_exec_sql(db, "ROLLBACK", "rollback");
    if (!db->lost && !db->retryable) return rc;
    if (!db->lost) { /* deadlock or serialization failure: run it again */
      if (now_secs() > deadline) return rc;
      continue;
    }
    if (!warned) MLC_WARN("postgresql: %s; reconnecting", mlc_error_last());
    warned = true;
    if (reconnect(db, &delay, deadline) != MLC_OK) {
      mlc_error_prefix("postgresql: gave up reconnecting after %.0f s", db->reconnect_secs);
      return MLC_EIO;
    }
  }
}

/* ---- keys ---------------------------------------------------------------- */

void pg_key_param(char buf[24], uint64_t key) {
  snprintf(buf, 24, "%lld", (long long)(int64_t)key);
}

uint64_t pg_key_value(const char *text) { return (uint64_t)strtoll(text, NULL, 10); }
