/*
 * database.h - the tuning-record database: every measurement of every tuning
 * run, and the winners the compiler asks for. One interface, two backends
 * chosen by URI: an embedded file database (append-only JSON Lines, the
 * default `file:./mlc-db`) and PostgreSQL (`postgresql://...` or any libpq
 * connection string) for farms.
 *
 * Guarantees (docs/database.md): a record acknowledged by db_commit_records
 * is never lost; a retried commit never makes a duplicate (ids are derived
 * from content); records are target-aware (a query for one target never
 * returns another's); failed trials are stored but never returned as best.
 */
#ifndef MLC_DATABASE_H
#define MLC_DATABASE_H

#include "support/support.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct db db_t;

/* One measured candidate. Strings are borrowed on commit (copied by the
 * backend) and owned by the result arena on query. */
typedef struct {
  char id[17];                /* content id (16 hex digits); filled by db_record_finish */
  uint64_t workload_key;      /* tir_func_key of the workload */
  const char *target;         /* canonical target string (mlc_target_str) */
  const char *device_key;     /* "llvm-sapphirerapids", "cuda-sm90" */
  const char *device_json;    /* device properties as a JSON object text (may be "{}") */
  const char *trace_json;     /* the trace in TVM's JSON layout, canonical text */
  uint64_t trace_hash;        /* XXH64 of trace_json: "was this candidate measured?" */
  int nrun_secs;
  const double *run_secs;     /* seconds per run (all repeats) */
  mlc_error_kind_t error_kind;/* MLC_ERROR_KIND_NONE for a measurement */
  const char *error_msg;      /* "" when measured */
  const char *compiler_version; /* MLC_VERSION of the worker that measured */
  const char *worker_id;
  int64_t created_at_us;      /* Unix time in microseconds */
} db_record_t;

/* Fills trace_hash and id from the content (workload key, target, device key,
 * trace, run_secs, error kind and message, worker id; not created_at: a retry
 * of the same result is the same record). Call before committing. */
void db_record_finish(db_record_t *r);
/* Median of run_secs; +inf for failures (so they sort last). */
double db_record_median(const db_record_t *r);

typedef struct {
  uint64_t key;
  const char *name;           /* the function's name when committed */
  const char *tvmscript;      /* canonical TVMScript of the workload */
} db_workload_t;

/* Query results own their memory: free with db_result_free. */
typedef struct {
  mlc_arena_t *arena;
  int nrecords;
  db_record_t *records;
  int nworkloads;
  db_workload_t *workloads;
} db_result_t;
void db_result_free(db_result_t *r); /* NULL is fine */

/* What db_records returns: the records matching every field set (fields
 * left zero / NULL match anything), newest first. */
typedef struct {
  uint64_t workload_key;      /* 0 = any */
  const char *target;         /* NULL = any (canonical string) */
  const char *device_key;     /* NULL = any */
  uint64_t trace_hash;        /* 0 = any */
  int only_ok;                /* 1: measurements only; -1: failures only; 0: both */
  int limit;                  /* 0 = no limit; newest first */
  /* NULL = any; else one record's full content id (16 lower-case hex
   * digits, MLC_EINVAL otherwise): an indexed lookup on every backend, so
   * at most one record comes back. A prefix is not an id: resolving one is
   * the caller's business (mlc-db show does it, docs/mlc-db.md). */
  const char *id;
} db_filter_t;

typedef struct {
  int64_t nworkloads, nrecords, nfailures;
  int64_t failures_by_kind[MLC_ERROR_KIND_COUNT];
  /* Per target: parallel arrays in the result arena. */
  int ntargets;
  const char **targets;
  int64_t *records_per_target;
  mlc_arena_t *arena;
} db_stats_t;
void db_stats_free(db_stats_t *s);

/* Opens (and for file: creates) a database. NULL uri = the default
 * `file:./mlc-db`. MLC_EINVAL for a bad URI, MLC_EIO when unreachable or on a
 * schema newer than this build understands (the message says which). Messages
 * never contain passwords. */
int db_open(db_t **out, const char *uri);
/* As db_open, but for readers that must not create a database: a file
 * database whose directory holds none of its files is MLC_ENOTFOUND with
 * the detail "no database at DIR" (nothing is created). A PostgreSQL
 * database opens as with db_open (connecting creates nothing). */
int db_open_existing(db_t **out, const char *uri);
void db_close(db_t *db); /* NULL is fine */
/* The URI with any password replaced by "***" (borrowed). */
const char *db_uri(const db_t *db);
/* Creates or migrates the schema (PostgreSQL; a no-op check for file). */
int db_init(db_t *db);
/* The schema version the database has (*current; 0 when it has none yet: a
 * PostgreSQL database before db_init) and the newest this build reads and
 * writes (*supported; db_init brings current up to it). Either pointer may
 * be NULL. db_open already refused a database newer than this build. */
int db_schema_version(db_t *db, int *current, int *supported);

/* Stores a workload (its key, name and canonical TVMScript) once. */
int db_commit_workload(db_t *db, uint64_t key, const char *name, const char *tvmscript);
/* Stores a batch atomically and durably (fsync / transaction). Records
 * already present (same id) are skipped. */
int db_commit_records(db_t *db, const db_record_t *records, int n);

/* The best measured record for (workload, target): *found false when none. */
int db_best(db_t *db, db_result_t **out, bool *found, uint64_t key, const char *target);
/* The k best measured records by median run time, fastest first. */
int db_top_k(db_t *db, db_result_t **out, uint64_t key, const char *target, int k);
int db_records(db_t *db, db_result_t **out, const db_filter_t *filter);
int db_workloads(db_t *db, db_result_t **out);
/* The workload with this key (nworkloads 0 when absent). */
int db_workload(db_t *db, db_result_t **out, uint64_t key);
int db_stats(db_t *db, db_stats_t *out);

/* A lease on tuning (workload, target) so two jobs on one farm do not tune
 * the same task at once. Expires after ttl_s (a crashed holder does not block
 * forever); renew by acquiring again as the same owner. *got says whether
 * this owner holds it now. */
int db_lease_acquire(db_t *db, bool *got, uint64_t key, const char *target, const char *owner, int ttl_s);
int db_lease_release(db_t *db, uint64_t key, const char *target, const char *owner);
/* Who holds the lease on (key, target) now: *held false when nobody does
 * (an expired lease is nobody's); else its owner in owner[len] (cut to fit,
 * NUL-terminated) and the seconds it has left in *secs_left, by the
 * database's clock. For progress lines ("waiting for the task X holds"). */
int db_lease_holder(db_t *db, bool *held, char *owner, size_t len, double *secs_left, uint64_t key,
                    const char *target);

/* Removes every measurement that is not among the `keep` fastest (median,
 * then id) of its (workload, target), atomically. Failed trials are all
 * kept, not reduced to counts: the cost model learns from them, and their
 * counts per (workload, target) and per kind stay exact. *removed (may be
 * NULL) is how many records went. keep >= 0 (0 keeps failures only); a
 * second prune with the same keep removes nothing. */
int db_prune(db_t *db, int64_t *removed, int keep);

/* Copies every workload and record of src that dst lacks into dst; both stay
 * the caller's (open, and dst db_init'ed), nothing is handed out. *copied
 * (may be NULL) is the number of records written, also when the call fails.
 *   - lossless: ids, created_at and every field arrive as stored;
 *   - idempotent: ids are content-derived and dst's ids are read first, so a
 *     second run copies nothing and a run cut off half-way is finished by
 *     running it again; records dst already holds stay (a union);
 *   - bounded: works between any two backends, workload by workload, so
 *     memory holds one workload's records, not the database.
 * Errors: MLC_EINVAL for a NULL database, or when src holds damaged records
 * dst refuses (a measurement without run times, say): each is skipped with a
 * warning naming it, every other record is still copied, and the status
 * says how many were skipped. Any other status is the failing database's
 * (MLC_EIO: unreachable, out of space); what was copied before it stays. */
int db_transfer(db_t *dst, db_t *src, int64_t *copied);

/* The backend vtable (QBE's Target, Redis's dictType): db.c dispatches on
 * the URI's scheme; callers never switch on the backend. */
typedef struct {
  const char *scheme;  /* "file", "postgresql" */
  int (*open)(db_t **out, const char *uri, bool create); /* create: db_open; else db_open_existing */
  void (*close)(db_t *db);
  int (*init)(db_t *db);
  int (*commit_workload)(db_t *db, uint64_t key, const char *name, const char *tvmscript);
  int (*commit_records)(db_t *db, const db_record_t *records, int n);
  int (*query)(db_t *db, db_result_t **out, const db_filter_t *filter, int top_k_by_time);
  int (*workloads)(db_t *db, db_result_t **out, uint64_t key /* 0 = all */);
  int (*stats)(db_t *db, db_stats_t *out);
  int (*lease)(db_t *db, bool *got, uint64_t key, const char *target, const char *owner, int ttl_s,
               bool release);
  int (*lease_holder)(db_t *db, bool *held, char *owner, size_t len, double *secs_left, uint64_t key,
                      const char *target);
  int (*prune)(db_t *db, int64_t *removed, int keep);
  int (*schema_version)(db_t *db, int *current, int *supported); /* both non-NULL */
} db_backend_t;

/* Every backend's db_t starts with this header. */
struct db {
  const db_backend_t *backend;
  char uri_redacted[512];
};

#ifdef __cplusplus
}
#endif
#endif /* MLC_DATABASE_H */
