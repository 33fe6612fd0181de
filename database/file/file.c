/*
 * file.c - the file backend's vtable: opening a database directory,
 * refreshing the indexes from the files, committing workloads and records,
 * and answering queries and stats (prune and leases are in admin.c).
 *
 * Opening reads only the schema lines; the first query loads the index and
 * later ones read only what other processes appended since (a stat and an
 * fstat per call when nothing changed). A commit takes the exclusive lock,
 * reads what others appended (so a record another process stored meanwhile
 * is not stored twice), writes the new lines in one write(2) and fsyncs
 * before it returns: an acknowledged record is on disk.
 */
#include "database/file/file_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Open and close                                                            */
/* ------------------------------------------------------------------------ */

/* "file:DIR", "file://DIR" (DIR absolute), or a bare path. */
static int uri_dir(char **out, const char *uri) {
  const char *dir = uri;
  if (strncmp(uri, "file://", 7) == 0) dir = uri + 7;
  else if (strncmp(uri, "file:", 5) == 0) dir = uri + 5;
  if (!*dir) return mlc_error_set(MLC_EINVAL, "'%s': no directory after file:", uri);
  *out = mlc_strdup(dir);
  return *out ? MLC_OK : mlc_error_set(MLC_ENOMEM, "out of memory");
}

/* mkdir -p: every missing component, 0777 narrowed by the umask. */
static int make_dirs(const char *dir) {
  char *path = mlc_strdup(dir);
  if (!path) return mlc_error_set(MLC_ENOMEM, "out of memory");
  int rc = MLC_OK;
  for (char *p = path + 1;; p++) {
    if (*p != '/' && *p) continue;
    char c = *p;
    *p = '\0';
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
      rc = mlc_error_set(MLC_EIO, "cannot create the database directory %s: %s", path,
                         strerror(errno));
      break;
    }
    *p = c;
    if (!c) break;
  }
  mlc_free(path);
  struct stat st;
  if (rc == MLC_OK && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)))
    rc = mlc_error_set(MLC_EIO, "%s is not a directory (a file database is a directory)", dir);
  return rc;
}

int fdb_lock(file_db_t *db, int op) {
  while (flock(db->lock_fd, op) != 0) {
    if (errno != EINTR)
      return mlc_error_set(MLC_EIO, "%s/lock: flock: %s", db->dir, strerror(errno));
  }
  return MLC_OK;
}

static char *join(const char *dir, const char *name) {
  size_t len = strlen(dir) + strlen(name) + 2;
  char *p = mlc_malloc(len);
  if (p) snprintf(p, len, "%s/%s", dir, name);
  return p;
}

static void fdb_close(db_t *base) {
  file_db_t *db = fdb(base);
  jl_close(&db->wl_file);
  jl_close(&db->rec_file);
  if (db->lock_fd >= 0) close(db->lock_fd);
  fworkloads_free(&db->wl);
  frecords_free(&db->rec);
  mlc_vec_free(&db->line);
  mlc_free(db->dir);
  mlc_free(db);
}

/* Creates what is missing under the exclusive lock, so two processes
 * opening a new database at once write one schema line each file. */
static int open_files(file_db_t *db) {
  char *lock = join(db->dir, "lock"), *wl = join(db->dir, "workloads.jsonl"),
       *rec = join(db->dir, "records.jsonl");
  int rc = MLC_OK;
  if (!lock || !wl || !rec) {
    rc = mlc_error_set(MLC_ENOMEM, "out of memory");
    goto done;
  }
  db->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (db->lock_fd < 0) {
    rc = mlc_error_set(MLC_EIO, "%s: cannot open: %s", lock, strerror(errno));
    goto done;
  }
  if ((rc = fdb_lock(db, LOCK_EX)) != MLC_OK) goto done;
  rc = jl_open(&db->wl_file, wl, db->dir);
  if (rc == MLC_OK) rc = jl_open(&db->rec_file, rec, db->dir);
  fdb_lock(db, LOCK_UN);
done:
  mlc_free(lock);
  mlc_free(wl);
  mlc_free(rec);
  return rc;
}

/* Whether dir holds a database: one of its files (a directory alone, or
 * one with only the lock file, holds nothing to read). */
static int check_exists(const char *dir) {
  static const char *const files[] = {"records.jsonl", "workloads.jsonl"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    char *path = join(dir, files[i]);
    if (!path) return mlc_error_set(MLC_ENOMEM, "out of memory");
    struct stat st;
    bool found = stat(path, &st) == 0;
    mlc_free(path);
    if (found) return MLC_OK;
  }
  return mlc_error_set(MLC_ENOTFOUND, "no database at %s", dir);
}

static int fdb_open(db_t **out, const char *uri, bool create) {
  file_db_t *db = mlc_calloc(1, sizeof *db);
  if (!db) return mlc_error_set(MLC_ENOMEM, "out of memory");
  db->lock_fd = db->wl_file.fd = db->rec_file.fd = -1;
  db->base.backend = &db_backend_file;
  int rc = uri_dir(&db->dir, uri);
  if (rc == MLC_OK) rc = create ? make_dirs(db->dir) : check_exists(db->dir);
  if (rc == MLC_OK) rc = open_files(db);
  if (rc != MLC_OK) {
    fdb_close(&db->base);
    return rc;
  }
  *out = &db->base;
  return MLC_OK;
}

/* The schema was checked when the files were opened; nothing to migrate. */
static int fdb_init(db_t *db) {
  (void)db;
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Refresh: the indexes follow the files                                     */
/* ------------------------------------------------------------------------ */

/* Workload lines are few and small: jansson reads them. */
static int workload_line(void *payload, const char *line, size_t len, int64_t off) {
  file_db_t *db = payload;
  json_error_t err;
  json_t *j = json_loadb(line, len, JSON_REJECT_DUPLICATES, &err);
  if (!j) return mlc_error_set(MLC_EPARSE, "%s", err.text);
  uint64_t key;
  const char *name, *script;
  int rc = fcodec_workload_parse(j, &key, &name, &script);
  if (rc == MLC_OK && fworkloads_find(&db->wl, key) < 0)
    rc = fworkloads_add(&db->wl, key, name, script);
  json_decref(j);
  return rc;
}

static int record_line(void *payload, const char *line, size_t len, int64_t off) {
  file_db_t *db = payload;
  fcodec_meta_t m;
  if (!db->scratch && !(db->scratch = mlc_arena_new()))
    return mlc_error_set(MLC_ENOMEM, "out of memory loading records");
  int rc = fcodec_record_meta(&m, line, len, db->scratch);
  if (rc != MLC_OK || frecords_find_id(&db->rec, m.id) >= 0) return rc;
  return frecords_add(&db->rec, &m, off, len);
}

/* Forgets what was loaded from f; the next refresh reads it from the top. */
static void forget(file_db_t *db, jl_file_t *f) {
  if (f == &db->wl_file) fworkloads_free(&db->wl);
  else frecords_free(&db->rec);
  f->off = 0;
  f->line = 0;
}

static int refresh_file(file_db_t *db, jl_file_t *f, bool writer) {
  bool replaced;
  int rc = jl_reopen_if_replaced(f, db->dir, &replaced);
  if (replaced) forget(db, f);
  if (rc != MLC_OK) return rc;
  rc = jl_read_tail(f, db->dir, f == &db->wl_file ? workload_line : record_line, db, writer);
  mlc_arena_free(db->scratch);
  db->scratch = NULL;
  if (rc != MLC_OK) forget(db, f); /* half-built indexes are rebuilt next time */
  return rc;
}

/* True when f may have lines we have not read (or was replaced). */
static bool stale(const jl_file_t *f) {
  struct stat path_st, fd_st;
  if (stat(f->path, &path_st) != 0 || fstat(f->fd, &fd_st) != 0) return true;
  return path_st.st_ino != f->ino || path_st.st_dev != f->dev || fd_st.st_size != f->off;
}

int fdb_refresh(file_db_t *db, unsigned what, bool writer) {
  jl_file_t *files[2] = {what & FDB_WORKLOADS ? &db->wl_file : NULL,
                         what & FDB_RECORDS ? &db->rec_file : NULL};
  bool any = false;
  for (int i = 0; i < 2; i++) any |= files[i] && stale(files[i]);
  if (!any) return MLC_OK;
  int rc = writer ? MLC_OK : fdb_lock(db, LOCK_SH);
  for (int i = 0; i < 2 && rc == MLC_OK; i++)
    if (files[i]) rc = refresh_file(db, files[i], writer);
  if (!writer) fdb_lock(db, LOCK_UN);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Commits                                                                   */
/* ------------------------------------------------------------------------ */

static int fdb_commit_workload(db_t *base, uint64_t key, const char *name, const char *tvmscript) {
  file_db_t *db = fdb(base);
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  int rc = fdb_lock(db, LOCK_EX);
  if (rc != MLC_OK) return rc;
  rc = fdb_refresh(db, FDB_WORKLOADS, true);
  if (rc != MLC_OK || fworkloads_find(&db->wl, key) >= 0) goto done;
  if ((rc = fcodec_workload_line(&sb, key, name, tvmscript)) != MLC_OK) goto done;
  if ((rc = jl_append(&db->wl_file, sb.data, sb.len, 1)) != MLC_OK) goto done;
  rc = fworkloads_add(&db->wl, key, name, tvmscript);
done:
  fdb_lock(db, LOCK_UN);
  mlc_sb_free(&sb);
  return rc;
}

/* The lines of a batch being committed: where each starts in the buffer. */
typedef struct {
  mlc_strbuf_t text;
  MLC_VEC(size_t) starts;
  MLC_VEC(fcodec_meta_t) metas;
  u64map_t ids; /* ids in this batch (a batch may repeat a record) */
} batch_t;

static void batch_free(batch_t *b) {
  mlc_sb_free(&b->text);
  mlc_vec_free(&b->starts);
  mlc_vec_free(&b->metas);
  u64map_free(&b->ids);
}

/* Encodes r unless the database or the batch already has its id. */
static int batch_add(batch_t *b, const frecords_t *ix, const db_record_t *r) {
  fcodec_meta_t m = {.workload = r->workload_key, .trace_hash = r->trace_hash,
                     .target = r->target, .target_len = strlen(r->target),
                     .device_key = r->device_key, .device_key_len = strlen(r->device_key),
                     .median = db_record_median(r), .created_at_us = r->created_at_us,
                     .error_kind = r->error_kind};
  fcodec_hex_parse(r->id, 16, &m.id); /* checked by db_record_check */
  size_t slot = SIZE_MAX;
  if (frecords_find_id(ix, m.id) >= 0 || u64map_next(&b->ids, m.id, &slot) >= 0) return MLC_OK;
  size_t start = b->text.len;
  int rc = fcodec_record_line(&b->text, r);
  if (rc != MLC_OK) return rc;
  if (mlc_vec_push(&b->starts, start) != MLC_OK || mlc_vec_push(&b->metas, m) != MLC_OK ||
      u64map_put(&b->ids, m.id, 0) != MLC_OK)
    return mlc_error_set(MLC_ENOMEM, "out of memory encoding records");
  return MLC_OK;
}

/* After the batch is on disk: its lines join the index. */
static int batch_index(file_db_t *db, const batch_t *b, int64_t base) {
  for (size_t i = 0; i < b->metas.len; i++) {
    size_t end = i + 1 < b->starts.len ? b->starts.data[i + 1] : b->text.len;
    size_t len = end - b->starts.data[i] - 1; /* without the newline */
    int rc = frecords_add(&db->rec, &b->metas.data[i], base + (int64_t)b->starts.data[i], len);
    if (rc != MLC_OK) {
      forget(db, &db->rec_file); /* stored, but the index is rebuilt next time */
      return rc;
    }
  }
  return MLC_OK;
}

static int fdb_commit_records(db_t *base, const db_record_t *records, int n) {
  file_db_t *db = fdb(base);
  batch_t b;
  memset(&b, 0, sizeof b);
  mlc_sb_init(&b.text);
  int rc = fdb_lock(db, LOCK_EX);
  if (rc != MLC_OK) return rc;
  if ((rc = fdb_refresh(db, FDB_RECORDS, true)) != MLC_OK) goto done;
  for (int i = 0; i < n && rc == MLC_OK; i++) rc = batch_add(&b, &db->rec, &records[i]);
  if (rc != MLC_OK || b.metas.len == 0) goto done;
  int64_t at = db->rec_file.off; /* the refresh read to the end: O_APPEND lands here */
  if ((rc = jl_append(&db->rec_file, b.text.data, b.text.len, (int)b.metas.len)) != MLC_OK)
    goto done;
  rc = batch_index(db, &b, at);
done:
  fdb_lock(db, LOCK_UN);
  batch_free(&b);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Queries                                                                   */
/* ------------------------------------------------------------------------ */

int fdb_read_record(file_db_t *db, db_record_t *out, int32_t i, mlc_arena_t *arena) {
  const frec_t *r = &db->rec.recs.data[i];
  if (mlc_vec_reserve(&db->line, (size_t)r->len + 1) != MLC_OK)
    return mlc_error_set(MLC_ENOMEM, "out of memory reading a record");
  ssize_t got;
  do got = pread(db->rec_file.fd, db->line.data, r->len, r->off);
  while (got < 0 && errno == EINTR);
  if (got != (ssize_t)r->len)
    return mlc_error_set(MLC_EIO, "%s: cannot read back the record at byte %lld", db->rec_file.path,
                         (long long)r->off);
  int rc = fcodec_record_parse(out, db->line.data, r->len, arena);
  if (rc == MLC_EPARSE)
    rc = mlc_error_set(MLC_EIO, "%s: the record at byte %lld changed on disk (%s)",
                       db->rec_file.path, (long long)r->off, mlc_error_last());
  return rc;
}

static bool rec_matches(const frec_t *r, const db_filter_t *f) {
  if (f->workload_key && r->workload != f->workload_key) return false;
  if (f->target && strcmp(r->target, f->target) != 0) return false;
  if (f->device_key && strcmp(r->device_key, f->device_key) != 0) return false;
  if (f->trace_hash && r->trace_hash != f->trace_hash) return false;
  if (f->only_ok == 1 && r->error_kind != MLC_ERROR_KIND_NONE) return false;
  if (f->only_ok == -1 && r->error_kind == MLC_ERROR_KIND_NONE) return false;
  return true;
}

typedef MLC_VEC(int32_t) ivec_t;

/* The matching records, found through the narrowest index the filter allows. */
static int collect(file_db_t *db, ivec_t *hits, const db_filter_t *f) {
  const frecords_t *ix = &db->rec;
  int rc = MLC_OK;
  uint64_t id;
  if (f->id) { /* db.c checked it is 16 hex digits */
    int32_t i = fcodec_hex_parse(f->id, 16, &id) == MLC_OK ? frecords_find_id(ix, id) : -1;
    if (i >= 0 && rec_matches(&ix->recs.data[i], f)) rc = mlc_vec_push(hits, i);
  } else if (f->trace_hash) {
    size_t slot = SIZE_MAX;
    for (int32_t i = u64map_next(&ix->by_trace, f->trace_hash, &slot); i >= 0 && rc == MLC_OK;
         i = ix->recs.data[i].next_same_trace)
      if (rec_matches(&ix->recs.data[i], f)) rc = mlc_vec_push(hits, i);
  } else if (f->workload_key && f->target) {
    int32_t g = frecords_find_group(ix, f->workload_key, f->target);
    for (size_t k = 0; g >= 0 && k < ix->groups.data[g].all.len && rc == MLC_OK; k++) {
      int32_t i = ix->groups.data[g].all.data[k];
      if (rec_matches(&ix->recs.data[i], f)) rc = mlc_vec_push(hits, i);
    }
  } else {
    for (size_t i = 0; i < ix->recs.len && rc == MLC_OK; i++)
      if (rec_matches(&ix->recs.data[i], f)) rc = mlc_vec_push(hits, (int32_t)i);
  }
  return rc == MLC_OK ? MLC_OK : mlc_error_set(MLC_ENOMEM, "out of memory answering a query");
}

static int cmp_newest(const void *a, const void *b, void *payload) {
  const frec_t *recs = payload;
  const frec_t *x = &recs[*(const int32_t *)a], *y = &recs[*(const int32_t *)b];
  if (x->created_at_us != y->created_at_us) return x->created_at_us > y->created_at_us ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

static int cmp_fastest(const void *a, const void *b, void *payload) {
  const frec_t *recs = payload;
  const frec_t *x = &recs[*(const int32_t *)a], *y = &recs[*(const int32_t *)b];
  if (x->median != y->median) return x->median < y->median ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* top_k of one (workload, target): walk its sorted measurements. */
static int collect_fastest(file_db_t *db, ivec_t *hits, const db_filter_t *f) {
  int32_t g = frecords_find_group(&db->rec, f->workload_key, f->target);
  if (g < 0) return MLC_OK;
  fgroup_t *grp = &db->rec.groups.data[g];
  int rc = frecords_sort_group(&db->rec, grp);
  for (size_t k = 0; k < grp->ok.len && rc == MLC_OK; k++) {
    if (f->limit && hits->len >= (size_t)f->limit) break;
    int32_t i = grp->ok.data[k];
    if (rec_matches(&db->rec.recs.data[i], f)) rc = mlc_vec_push(hits, i);
  }
  return rc;
}

static int materialize(file_db_t *db, db_result_t *res, const ivec_t *hits, int limit) {
  size_t n = limit && (size_t)limit < hits->len ? (size_t)limit : hits->len;
  for (size_t k = 0; k < n; k++) {
    db_record_t *slot = db_result_push(res);
    if (!slot) return mlc_error_set(MLC_ENOMEM, "out of memory answering a query");
    int rc = fdb_read_record(db, slot, hits->data[k], res->arena);
    if (rc != MLC_OK) return rc;
  }
  return MLC_OK;
}

static int fdb_query(db_t *base, db_result_t **out, const db_filter_t *f, int top_k_by_time) {
  file_db_t *db = fdb(base);
  ivec_t hits = {0};
  db_filter_t filter = *f;
  if (top_k_by_time) filter.only_ok = 1; /* failures are never "best" */
  int rc = fdb_refresh(db, FDB_RECORDS, false);
  if (rc == MLC_OK) rc = db_result_new(out);
  if (rc != MLC_OK) goto done;
  if (top_k_by_time && filter.workload_key && filter.target && !filter.id) {
    rc = collect_fastest(db, &hits, &filter);
  } else {
    rc = collect(db, &hits, &filter);
    if (rc == MLC_OK && hits.len > 1)
      qsort_r(hits.data, hits.len, sizeof *hits.data, top_k_by_time ? cmp_fastest : cmp_newest,
              db->rec.recs.data);
  }
  if (rc == MLC_OK) rc = materialize(db, *out, &hits, filter.limit);
done:
  if (rc != MLC_OK) {
    db_result_free(*out);
    *out = NULL;
  }
  mlc_vec_free(&hits);
  return rc;
}

static int fdb_workloads(db_t *base, db_result_t **out, uint64_t key) {
  file_db_t *db = fdb(base);
  int rc = fdb_refresh(db, FDB_WORKLOADS, false);
  if (rc == MLC_OK) rc = db_result_new(out);
  for (size_t i = 0; i < db->wl.list.len && rc == MLC_OK; i++) {
    const fworkload_t *w = &db->wl.list.data[i];
    if (!key || w->key == key) rc = db_result_add_workload(*out, w->key, w->name, w->tvmscript);
  }
  if (rc != MLC_OK) {
    db_result_free(*out);
    *out = NULL;
  }
  return rc;
}

static int fdb_stats(db_t *base, db_stats_t *s) {
  file_db_t *db = fdb(base);
  int rc = fdb_refresh(db, FDB_WORKLOADS | FDB_RECORDS, false);
  if (rc == MLC_OK) rc = db_stats_begin(s);
  if (rc != MLC_OK) return rc;
  const frecords_t *ix = &db->rec;
  s->nworkloads = (int64_t)db->wl.list.len;
  s->nrecords = (int64_t)ix->recs.len;
  for (int k = 1; k < MLC_ERROR_KIND_COUNT; k++) {
    s->failures_by_kind[k] = ix->nfailures_by_kind[k];
    s->nfailures += ix->nfailures_by_kind[k];
  }
  for (size_t g = 0; g < ix->groups.len && rc == MLC_OK; g++)
    rc = db_stats_add_target(s, ix->groups.data[g].target, (int64_t)ix->groups.data[g].all.len);
  return rc;
}

const db_backend_t db_backend_file = {
    .scheme = "file",
    .open = fdb_open,
    .close = fdb_close,
    .init = fdb_init,
    .commit_workload = fdb_commit_workload,
    .commit_records = fdb_commit_records,
    .query = fdb_query,
    .workloads = fdb_workloads,
    .stats = fdb_stats,
    .lease = fdb_lease,
    .lease_holder = fdb_lease_holder,
    .prune = fdb_prune,
    .schema_version = fdb_schema_version,
};
