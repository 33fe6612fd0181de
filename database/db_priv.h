/*
 * db_priv.h - what database/db.c shares with the backends (file, postgresql)
 * and with mlc-db: the backend table, URI helpers, record checks and the
 * constructors for the result types that db_result_free / db_stats_free
 * release. Private to database/ (callers outside use database.h).
 *
 * Result ownership (db_result_free relies on it): a db_result_t lives inside
 * its own arena (db_result_new allocates the struct there), and everything a
 * result points to is allocated in r->arena; freeing the arena frees it all.
 * db_stats_t is caller-owned; db_stats_begin gives it an arena that
 * db_stats_free releases.
 *
 * Orders every backend produces (the shared suite, tests/database/db_suite.h,
 * checks them):
 *   - top_k / best: measurements only, by median run time ascending, ties by
 *     id ascending (db_record_cmp_time);
 *   - records(filter): newest first (created_at descending), ties by id
 *     ascending (db_record_cmp_newest); limit applies after ordering; with
 *     an id (db.c checked its form), that record or none, by an index;
 *   - stats targets: ascending by strcmp.
 */
#ifndef MLC_DATABASE_DB_PRIV_H
#define MLC_DATABASE_DB_PRIV_H

#include "database/database.h"

/* ---- backends ---- */

/* NULL-terminated table of the backends linked in (database/backends.c). */
extern const db_backend_t *const db_backends[];
extern const db_backend_t db_backend_file;

/* The backend serving `uri` (NULL = the default file:./mlc-db), or NULL with
 * an MLC_EINVAL detail (the URI in it redacted). Rules: "file:DIR" or a path
 * without a scheme -> file; "postgresql://", "postgres://" or a libpq
 * key=value string (has '=' and no scheme) -> postgresql. */
const db_backend_t *db_backend_for_uri(const char *uri);

/* The default database when no URI is given. */
#define DB_DEFAULT_URI "file:./mlc-db"

/* Copies uri into out (always NUL-terminated) with every password value
 * replaced by "***": the user-info password of a URL (user:pw@host), URL query
 * parameters and libpq key=value pairs whose key ends in "password". */
void db_uri_redact(char *out, size_t cap, const char *uri);

/* If the calling thread's last error detail mentions a password of `uri`
 * (as written or percent-decoded), rewrites the detail with "***" in its
 * place. db_open calls it on every failure; backends may call it too. */
void db_error_scrub(const char *uri);

/* ---- records ---- */

/* MLC_OK, or MLC_EINVAL naming what is wrong: id not 16 hex digits (call
 * db_record_finish), NULL target/device_key/trace_json, a measurement without
 * run times, a negative or non-finite run time, an unknown error kind, a
 * created_at outside 1970..9999. */
int db_record_check(const db_record_t *r);

/* qsort-style comparators over db_record_t (see the orders above). The
 * median is recomputed per call; backends sort their own index instead. */
int db_record_cmp_time(const db_record_t *a, const db_record_t *b);
int db_record_cmp_newest(const db_record_t *a, const db_record_t *b);

/* ---- results ---- */

/* A new empty result (its struct inside its own arena). MLC_ENOMEM. */
int db_result_new(db_result_t **out);
/* Appends a deep copy of src (strings and run_secs into r->arena); records
 * grow geometrically. MLC_ENOMEM. */
int db_result_add_record(db_result_t *r, const db_record_t *src);
/* A zeroed slot at the end of r->records for the caller to fill with memory
 * from r->arena (counted in nrecords at once); NULL when out of memory. */
db_record_t *db_result_push(db_result_t *r);
int db_result_add_workload(db_result_t *r, uint64_t key, const char *name, const char *tvmscript);

/* Zeroes *s and gives it an arena. MLC_ENOMEM. */
int db_stats_begin(db_stats_t *s);
/* Adds `n` records to target's row (created on first use; rows are kept
 * sorted by target). MLC_ENOMEM. */
int db_stats_add_target(db_stats_t *s, const char *target, int64_t n);

#endif /* MLC_DATABASE_DB_PRIV_H */
