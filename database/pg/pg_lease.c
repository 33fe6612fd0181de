/*
 * pg_lease.c - leases on tuning tasks and pruning, for the PostgreSQL backend.
 *
 * A lease is a row of `leases` per (workload, target) with its owner and
 * expiry. Acquiring is one statement (PG_STMTS LEASE_ACQUIRE): take
 * pg_try_advisory_xact_lock on a 64-bit hash of (workload, target), and only
 * if that succeeded, INSERT the row or, ON CONFLICT, take it over WHERE the
 * old lease has expired or is already ours (a renewal); RETURNING says
 * whether we hold it. Why both:
 *   - the row, not the advisory lock, is the lease: it outlives the
 *     statement, survives a reconnect (session advisory locks would vanish
 *     with the connection, and reappear nowhere) and expires on its own when
 *     a holder crashes;
 *   - the advisory try-lock makes a contender give up at once (got = false)
 *     instead of queueing on the winner's row lock until it commits; the row
 *     conditions alone would also be correct, only slower under contention.
 * Time is the server's now(), so clients' clocks do not matter. Release
 * deletes the row if we still own it. Both are idempotent, so pg_retry may
 * run them again after a lost connection.
 *
 * Prune keeps the `keep` fastest measurements per (workload, target) (by
 * median, ties by id: the order top_k reads) and every failure, as the file
 * backend does: one DELETE, so one transaction; a retry after an unknown
 * outcome finds nothing more to remove.
 */
#include "database/pg/pg_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *params[5];
  bool release;
  bool *got;
  const char *owner;
} lease_t;

static int lease_unit(pg_db_t *db, void *payload) {
  lease_t *l = payload;
  PGresult *res;
  if (l->release) {
    int rc = pg_exec(db, &res, PG_STMT_LEASE_RELEASE, l->params + 1, "releasing a lease");
    PQclear(res);
    return rc;
  }
  int rc = pg_exec(db, &res, PG_STMT_LEASE_ACQUIRE, l->params, "acquiring a lease");
  if (rc != MLC_OK) return rc;
  *l->got = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), l->owner) == 0;
  PQclear(res);
  return MLC_OK;
}

int pg_lease(db_t *db, bool *got, uint64_t key, const char *target, const char *owner, int ttl_s,
             bool release) {
  char lock[24], keytext[24], ttl[16];
  /* The advisory lock's key: (workload, target) hashed into one bigint. */
  pg_key_param(lock, mlc_hash64(target, strlen(target), key));
  pg_key_param(keytext, key);
  snprintf(ttl, sizeof ttl, "%d", ttl_s);
  lease_t l = {{lock, keytext, target, owner, ttl}, release, got, owner};
  *got = false;
  return pg_retry(pg_db(db), lease_unit, &l);
}

typedef struct {
  const char *params[2];
  bool *held;
  char *owner;
  size_t len;
  double *secs_left;
} holder_t;

static int holder_unit(pg_db_t *db, void *payload) {
  holder_t *h = payload;
  PGresult *res;
  int rc = pg_exec(db, &res, PG_STMT_LEASE_HOLDER, h->params, "reading a lease");
  if (rc != MLC_OK) return rc;
  if (PQntuples(res) == 1) {
    snprintf(h->owner, h->len, "%s", PQgetvalue(res, 0, 0));
    *h->secs_left = strtod(PQgetvalue(res, 0, 1), NULL);
    *h->held = true;
  }
  PQclear(res);
  return MLC_OK;
}

int pg_lease_holder(db_t *db, bool *held, char *owner, size_t len, double *secs_left, uint64_t key,
                    const char *target) {
  char keytext[24];
  pg_key_param(keytext, key);
  holder_t h = {{keytext, target}, held, owner, len, secs_left};
  return pg_retry(pg_db(db), holder_unit, &h);
}

/* ---- prune --------------------------------------------------------------- */

typedef struct {
  const char *params[1];
  int64_t *removed;
} prune_t;

static int prune_unit(pg_db_t *db, void *payload) {
  prune_t *p = payload;
  PGresult *res;
  int rc = pg_exec(db, &res, PG_STMT_PRUNE, p->params, "pruning");
  if (rc != MLC_OK) return rc;
  *p->removed = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
  PQclear(res);
  return MLC_OK;
}

int pg_prune(db_t *db, int64_t *removed, int keep) {
  char keeptext[16];
  snprintf(keeptext, sizeof keeptext, "%d", keep);
  prune_t p = {{keeptext}, removed};
  return pg_retry(pg_db(db), prune_unit, &p);
}
