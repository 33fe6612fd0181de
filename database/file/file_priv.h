/*
 * file_priv.h - private to the file backend (the .c files in database/file/), the
 * embedded default database: a directory of append-only JSON Lines files.
 *
 *   DIR/workloads.jsonl  {"mlc_db_schema": 1} then one workload per line
 *   DIR/records.jsonl    {"mlc_db_schema": 1} then one record per line
 *   DIR/leases.json      the current leases (rewritten whole, atomically)
 *   DIR/lock             flock(2) target: LOCK_EX to write, LOCK_SH to read
 *
 * Split by concern: jsonl.c (one JSON Lines file: schema line, incremental
 * tail reads, torn tails, appends), scan.c (a validating JSON scanner that
 * finds a record line's fields without building a tree), codec.c (record and
 * workload lines, timestamps), index.c (the in-memory indexes), file.c (the
 * vtable: open, commit, queries, stats) and admin.c (prune, leases, schema
 * version). docs/database.md
 * "File backend" states the guarantees; the comments say how they are kept.
 *
 * Locking protocol (all writers and every reader that reads new bytes):
 *   - every append, prune and lease update holds LOCK_EX on DIR/lock, so
 *     lines never interleave, whatever their length, and a commit can refresh
 *     and deduplicate against other processes' records before it writes;
 *   - readers take LOCK_SH only to read bytes they have not seen, so an
 *     unterminated last line they see is a crashed writer's torn tail, never
 *     a write in progress;
 *   - prune replaces records.jsonl by rename, so everyone checks the path's
 *     inode before trusting their descriptor and reloads when it changed.
 */
#ifndef MLC_DATABASE_FILE_PRIV_H
#define MLC_DATABASE_FILE_PRIV_H

#include "database/db_priv.h"

#include <sys/types.h>

#define FDB_SCHEMA 1 /* the newest schema this build reads and the one it writes */

/* ---- jsonl.c: one JSON Lines file ---------------------------------------- */

typedef struct {
  char *path;
  int fd;               /* O_RDWR | O_APPEND; -1 when closed */
  dev_t dev;            /* identity of what fd refers to: a prune renames */
  ino_t ino;            /*   a new file over the path */
  int64_t off;          /* bytes consumed: the end of the last complete line */
  int64_t line;         /* lines consumed, the schema line included */
  int64_t torn_warned;  /* start of the torn tail last warned about, or -1 */
  int schema;           /* the version its schema line names (checked <= FDB_SCHEMA) */
} jl_file_t;

/* Called for each complete line after the schema line: its bytes (no
 * newline, not NUL-terminated) and where it starts. Return MLC_OK, MLC_EPARSE
 * with a detail to have the line skipped with a warning naming file:line, or
 * another status to stop reading. */
typedef int (*jl_line_fn)(void *payload, const char *line, size_t len, int64_t off);

/* Opens (creating it when absent) path; call under LOCK_EX. An empty file
 * gets the schema line (fsync'd). Then reads the first line: MLC_EIO when
 * the schema is newer than FDB_SCHEMA or the file is no mlc-db file. Nothing
 * else is read (loading is lazy). */
int jl_open(jl_file_t *f, const char *path, const char *dir);
void jl_close(jl_file_t *f);

/* Reopens when the path now names another file (renamed over by a prune);
 * *replaced then says the caller must drop what it loaded from the old one
 * (off and line start again from 0). */
int jl_reopen_if_replaced(jl_file_t *f, const char *dir, bool *replaced);

/* Consumes the complete lines between f->off and the end of the file. An
 * unterminated last line is a torn write: a reader (writer false) skips it
 * with one warning; a writer (holding LOCK_EX, writer true) truncates it so
 * its own lines start on a fresh line. */
int jl_read_tail(jl_file_t *f, const char *dir, jl_line_fn fn, void *payload, bool writer);

/* Appends data (whole lines) with one write(2) and fsyncs; call under
 * LOCK_EX after jl_read_tail(writer true), so the data lands at f->off. On
 * failure the file is cut back to where it was. f->off and f->line advance. */
int jl_append(jl_file_t *f, const char *data, size_t len, int nlines);

/* The schema line every file starts with. */
#define JL_SCHEMA_LINE "{\"mlc_db_schema\": 1}\n"

/* fsync of a directory (after a rename or a file creation in it). */
int jl_fsync_dir(const char *dir);

/* ---- scan.c: validating JSON scanner ------------------------------------ */

/* The fields of a record line, in the order they are written (codec.c).
 *      enum              key                 kind: s string, j any JSON value, n array of numbers
 */
#define FREC_FIELDS(X)                              \
  X(ID,               "id",               's')      \
  X(WORKLOAD,         "workload",         's')      \
  X(TARGET,           "target",           's')      \
  X(DEVICE_KEY,       "device_key",       's')      \
  X(DEVICE,           "device",           'j')      \
  X(TRACE,            "trace",            'j')      \
  X(TRACE_HASH,       "trace_hash",       's')      \
  X(RUN_SECS,         "run_secs",         'n')      \
  X(ERROR_KIND,       "error_kind",       's')      \
  X(ERROR_MSG,        "error_msg",        's')      \
  X(COMPILER_VERSION, "compiler_version", 's')      \
  X(WORKER_ID,        "worker_id",        's')      \
  X(CREATED_AT,       "created_at",       's')

enum {
#define FREC_ENUM_(e, name, kind) FREC_##e,
  FREC_FIELDS(FREC_ENUM_)
#undef FREC_ENUM_
  FREC_COUNT
};

typedef struct {
  mlc_jspan_t f[FREC_COUNT];
} fscan_record_t;

/* Finds every field of a record line (unknown keys are skipped, for lines
 * from newer writers); MLC_EPARSE for bad JSON, a missing, repeated or
 * mistyped field. */
int fscan_record(fscan_record_t *out, const char *line, size_t len);
const char *fscan_field_name(int f);

/* ---- codec.c: lines and timestamps -------------------------------------- */

/* Appends r as one JSON line (with its newline) to sb. MLC_EINVAL when the
 * trace or device text is not JSON. */
int fcodec_record_line(mlc_strbuf_t *sb, const db_record_t *r);
/* Reads a record line into *r, every string and run_secs allocated in arena;
 * the trace and device are the bytes stored. MLC_EPARSE naming the problem. */
int fcodec_record_parse(db_record_t *r, const char *line, size_t len, mlc_arena_t *arena);
/* The fields the index needs, without copying the trace or device. target
 * and device_key point into the line (or, when escaped, into scratch). */
typedef struct {
  uint64_t id, workload, trace_hash;
  const char *target, *device_key;
  size_t target_len, device_key_len;
  double median;
  int64_t created_at_us;
  mlc_error_kind_t error_kind;
} fcodec_meta_t;
int fcodec_record_meta(fcodec_meta_t *m, const char *line, size_t len, mlc_arena_t *scratch);

int fcodec_workload_line(mlc_strbuf_t *sb, uint64_t key, const char *name, const char *tvmscript);
/* Strings borrowed from json. */
int fcodec_workload_parse(const json_t *json, uint64_t *key, const char **name,
                          const char **tvmscript);

/* "2024-05-01T12:34:56.123456Z" (ISO 8601, UTC, microseconds) into buf. */
enum { FCODEC_TIME_MAX = 80 }; /* room for any int64 (valid times take 27) */
void fcodec_time_str(int64_t us, char buf[FCODEC_TIME_MAX]);
int fcodec_time_parse(const char *s, size_t len, int64_t *us);
/* Exactly 16 lower-case hex digits into *v (MLC_EPARSE otherwise). */
int fcodec_hex_parse(const char *s, size_t len, uint64_t *v);
/* A double as the shortest of "%.15g" and "%.17g" that reads back as the
 * same value (real.c: exact digits without snprintf on the fast path).
 * fcodec_real_reference is the snprintf form, for tests. */
enum { FCODEC_REAL_MAX = 40 };
void fcodec_real(char buf[FCODEC_REAL_MAX], double v);
void fcodec_real_reference(char buf[FCODEC_REAL_MAX], double v);
/* Unix time now in microseconds. */
int64_t fcodec_now_us(void);

/* ---- index.c: what is loaded, and how it is found ------------------------ */

/* uint64 -> int32 multimap, open addressing (no deletes: a prune rebuilds). */
typedef struct {
  uint64_t *keys;
  int32_t *vals; /* -1 = empty slot */
  size_t cap, len;
} u64map_t;

int u64map_put(u64map_t *m, uint64_t key, int32_t val);
/* Values stored under key, one per call: start with *slot = SIZE_MAX;
 * returns -1 when there are no more. */
int32_t u64map_next(const u64map_t *m, uint64_t key, size_t *slot);
void u64map_free(u64map_t *m);

/* One record as the index knows it: enough to filter and order; the rest is
 * read back from its line in records.jsonl when a query returns it. */
typedef struct {
  uint64_t id, workload, trace_hash;
  const char *target, *device_key; /* interned */
  double median;                   /* +inf for failures */
  int64_t created_at_us;
  int64_t off;                     /* where its line starts in records.jsonl */
  uint32_t len;                    /* line length without the newline */
  int32_t group;                   /* its (workload, target) */
  int32_t next_same_trace;         /* older record with this trace_hash; -1 ends */
  uint8_t error_kind;
} frec_t;

/* The records of one (workload, target). */
typedef struct {
  uint64_t workload;
  const char *target;
  MLC_VEC(int32_t) all; /* every record, in file order */
  MLC_VEC(int32_t) ok;  /* measurements: [0, nsorted) by (median, id); the rest unsorted */
  size_t nsorted;
} fgroup_t;

typedef struct {
  uint64_t key;
  const char *name, *tvmscript;
} fworkload_t;

typedef struct {
  mlc_arena_t *arena;        /* interned target and device strings */
  MLC_VEC(frec_t) recs;      /* in file order */
  MLC_VEC(fgroup_t) groups;
  MLC_VEC(const char *) strs;
  u64map_t by_id, by_group, by_trace, by_str;
  int64_t nfailures_by_kind[MLC_ERROR_KIND_COUNT];
} frecords_t;

typedef struct {
  mlc_arena_t *arena;
  MLC_VEC(fworkload_t) list; /* in file order */
  u64map_t by_key;
} fworkloads_t;

void frecords_free(frecords_t *ix); /* leaves it empty and usable */
void fworkloads_free(fworkloads_t *wl);
/* Index of the record with this id, or -1. */
int32_t frecords_find_id(const frecords_t *ix, uint64_t id);
/* Adds a record (no duplicate check: the caller looked the id up). */
int frecords_add(frecords_t *ix, const fcodec_meta_t *m, int64_t off, size_t len);
/* The group of (workload, target), or -1. */
int32_t frecords_find_group(const frecords_t *ix, uint64_t workload, const char *target);
/* Sorts the group's measurements added since the last call (merging them
 * into the sorted prefix). MLC_ENOMEM. */
int frecords_sort_group(frecords_t *ix, fgroup_t *g);

int32_t fworkloads_find(const fworkloads_t *wl, uint64_t key);
int fworkloads_add(fworkloads_t *wl, uint64_t key, const char *name, const char *tvmscript);

/* ---- file.c: the backend ------------------------------------------------- */

typedef struct {
  db_t base;          /* first: a file_db_t is a db_t */
  char *dir;
  int lock_fd;        /* DIR/lock */
  jl_file_t wl_file, rec_file;
  fworkloads_t wl;
  frecords_t rec;
  MLC_VEC(char) line; /* scratch for reading one line back */
  mlc_arena_t *scratch; /* escaped strings while loading; freed after each refresh */
} file_db_t;

static inline file_db_t *fdb(db_t *db) { return (file_db_t *)db; }

/* flock(2) on DIR/lock: LOCK_EX, LOCK_SH or LOCK_UN. */
int fdb_lock(file_db_t *db, int op);
/* Which files a refresh looks at. */
enum { FDB_WORKLOADS = 1, FDB_RECORDS = 2 };
/* Brings the indexes of `what` up to date with the files (lazy first load,
 * then only the new tails; a full reload after a prune elsewhere). writer:
 * the caller holds LOCK_EX (torn tails are cut); otherwise LOCK_SH is taken
 * while there are new bytes to read. */
int fdb_refresh(file_db_t *db, unsigned what, bool writer);
/* Reads record i's line back into a full record (strings in arena). */
int fdb_read_record(file_db_t *db, db_record_t *out, int32_t i, mlc_arena_t *arena);

/* ---- admin.c: prune, leases, schema version ------------------------------ */

int fdb_prune(db_t *db, int64_t *removed, int keep);
int fdb_lease_holder(db_t *db, bool *held, char *owner, size_t len, double *secs_left, uint64_t key,
                     const char *target);
int fdb_lease(db_t *db, bool *got, uint64_t key, const char *target, const char *owner, int ttl_s,
              bool release);
/* The files' schema (the older of the two) and FDB_SCHEMA. */
int fdb_schema_version(db_t *db, int *current, int *supported);

#endif /* MLC_DATABASE_FILE_PRIV_H */
