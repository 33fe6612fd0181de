/*
 * admin.c - the file backend's maintenance: prune (rewrite records.jsonl
 * keeping the best measurements), leases (who is tuning which task) and the
 * schema version.
 *
 * Prune never edits the live file in place: it writes the kept lines to a
 * temporary file in the same directory, fsyncs it, renames it over
 * records.jsonl and fsyncs the directory, all under the exclusive lock. A
 * crash leaves the old file or the new one, never a mix; other processes see
 * the inode change on their next call and reload (file_priv.h).
 *
 * Leases live in DIR/leases.json, read, changed and rewritten atomically
 * under the exclusive lock:
 *   {"leases":[{"workload":"<16 hex>","target":"...","owner":"...",
 *               "expires_at":"2024-05-01T12:34:56.123456Z"}]}
 * Expired entries are dropped whenever the file is rewritten.
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

enum { PRUNE_FLUSH = 1 << 20 }; /* bytes buffered between write(2)s */

/* ------------------------------------------------------------------------ */
/* Prune                                                                     */
/* ------------------------------------------------------------------------ */

/* keep[i] for every record: failures always, measurements when among the
 * `keep` fastest of their (workload, target). Returns how many go. */
static int mark_kept(frecords_t *ix, bool *kept, int keep, int64_t *removed) {
  for (size_t i = 0; i < ix->recs.len; i++) kept[i] = true;
  *removed = 0;
  for (size_t g = 0; g < ix->groups.len; g++) {
    fgroup_t *grp = &ix->groups.data[g];
    int rc = frecords_sort_group(ix, grp);
    if (rc != MLC_OK) return rc;
    for (size_t k = (size_t)keep; k < grp->ok.len; k++) {
      kept[grp->ok.data[k]] = false;
      (*removed)++;
    }
  }
  return MLC_OK;
}

/* Copies the schema line and the kept lines (in file order) to fd. */
static int copy_kept(file_db_t *db, int fd, const bool *kept, const char *tmp) {
  const frecords_t *ix = &db->rec;
  mlc_strbuf_t out;
  mlc_sb_init(&out);
  mlc_sb_append(&out, JL_SCHEMA_LINE);
  int rc = MLC_OK;
  for (size_t i = 0; i <= ix->recs.len && rc == MLC_OK; i++) {
    if (i < ix->recs.len && kept[i]) {
      const frec_t *r = &ix->recs.data[i];
      if (mlc_vec_reserve(&db->line, (size_t)r->len + 1) != MLC_OK) {
        rc = mlc_error_set(MLC_ENOMEM, "out of memory pruning");
        break;
      }
      if (pread(db->rec_file.fd, db->line.data, (size_t)r->len + 1, r->off) !=
          (ssize_t)r->len + 1) {
        rc = mlc_error_set(MLC_EIO, "%s: cannot read a record back: %s", db->rec_file.path,
                           strerror(errno));
        break;
      }
      mlc_sb_appendn(&out, db->line.data, (size_t)r->len + 1);
    }
    if (out.failed) {
      rc = mlc_error_set(MLC_ENOMEM, "out of memory pruning");
    } else if (out.len >= PRUNE_FLUSH || i == ix->recs.len) {
      if (!mlc_write_full(fd, out.data, out.len))
        rc = mlc_error_set(MLC_EIO, "%s: %s", tmp, strerror(errno));
      mlc_sb_reset(&out);
    }
  }
  mlc_sb_free(&out);
  return rc;
}

/* Writes the new file beside the old one and renames it into place. */
static int rewrite_records(file_db_t *db, const bool *kept) {
  size_t cap = strlen(db->rec_file.path) + 32;
  char *tmp = mlc_malloc(cap);
  if (!tmp) return mlc_error_set(MLC_ENOMEM, "out of memory pruning");
  snprintf(tmp, cap, "%s.prune.%ld", db->rec_file.path, (long)getpid());
  int rc = MLC_OK;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    rc = mlc_error_set(MLC_EIO, "%s: cannot create: %s", tmp, strerror(errno));
    goto done;
  }
  rc = copy_kept(db, fd, kept, tmp);
  if (rc == MLC_OK && fsync(fd) != 0)
    rc = mlc_error_set(MLC_EIO, "%s: fsync: %s", tmp, strerror(errno));
  if (close(fd) != 0 && rc == MLC_OK) rc = mlc_error_set(MLC_EIO, "%s: %s", tmp, strerror(errno));
  if (rc == MLC_OK && rename(tmp, db->rec_file.path) != 0)
    rc = mlc_error_set(MLC_EIO, "cannot rename %s over %s: %s", tmp, db->rec_file.path,
                       strerror(errno));
  if (rc == MLC_OK) rc = jl_fsync_dir(db->dir);
done:
  if (rc != MLC_OK) unlink(tmp);
  mlc_free(tmp);
  return rc;
}

int fdb_prune(db_t *base, int64_t *removed, int keep) {
  file_db_t *db = fdb(base);
  bool *kept = NULL;
  int rc = fdb_lock(db, LOCK_EX);
  if (rc != MLC_OK) return rc;
  if ((rc = fdb_refresh(db, FDB_RECORDS, true)) != MLC_OK) goto done;
  kept = mlc_malloc(db->rec.recs.len + 1);
  if (!kept) {
    rc = mlc_error_set(MLC_ENOMEM, "out of memory pruning");
    goto done;
  }
  if ((rc = mark_kept(&db->rec, kept, keep, removed)) != MLC_OK || *removed == 0) goto done;
  if ((rc = rewrite_records(db, kept)) != MLC_OK) {
    *removed = 0;
    goto done;
  }
  /* Our descriptor still reads the old file: switch to the new one and
   * index it (the offsets of every kept record changed). */
  rc = fdb_refresh(db, FDB_RECORDS, true);
done:
  fdb_lock(db, LOCK_UN);
  mlc_free(kept);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Leases                                                                    */
/* ------------------------------------------------------------------------ */

/* The current leases (an empty list when there is no file yet). A file that
 * does not parse is replaced, with a warning: leases are advisory and must
 * not stop tuning. */
static json_t *leases_load(const char *path) {
  json_t *doc = NULL;
  if (access(path, F_OK) == 0) {
    doc = mlc_json_load_file(path);
    if (!doc || !json_is_array(json_object_get(doc, "leases"))) {
      MLC_WARN("%s: unreadable (%s); starting with no leases", path,
               doc ? "no \"leases\" list" : mlc_error_last());
      json_decref(doc);
      doc = NULL;
    }
  }
  if (!doc) doc = json_pack("{s:[]}", "leases");
  return doc;
}

/* Drops expired entries; returns the index of (workload, target), or -1. */
static long leases_sweep(json_t *list, const char *workload, const char *target, int64_t now,
                         bool *changed) {
  long found = -1;
  for (size_t i = 0; i < json_array_size(list);) {
    json_t *e = json_array_get(list, i);
    const char *w = json_string_value(json_object_get(e, "workload"));
    const char *t = json_string_value(json_object_get(e, "target"));
    const char *exp = json_string_value(json_object_get(e, "expires_at"));
    int64_t until;
    if (!w || !t || !exp || fcodec_time_parse(exp, strlen(exp), &until) != MLC_OK || until <= now) {
      json_array_remove(list, i);
      *changed = true;
      continue;
    }
    if (strcmp(w, workload) == 0 && strcmp(t, target) == 0) found = (long)i;
    i++;
  }
  return found;
}

static int leases_save(const char *path, const json_t *doc) {
  char *text = mlc_json_dumps(doc);
  if (!text) return mlc_error_set(MLC_ENOMEM, "out of memory writing leases");
  int rc = mlc_write_file(path, text, strlen(text));
  free(text);
  return rc;
}

/* Takes, renews or releases (workload, target) in doc. */
static void lease_apply(json_t *list, long at, bool *got, bool *changed, const char *workload,
                        const char *target, const char *owner, int64_t until, bool release) {
  json_t *e = at >= 0 ? json_array_get(list, (size_t)at) : NULL;
  const char *holder = e ? json_string_value(json_object_get(e, "owner")) : NULL;
  bool mine = holder && strcmp(holder, owner) == 0;
  if (release) {
    if (mine) json_array_remove(list, (size_t)at);
    *changed |= mine;
    return;
  }
  if (e && !mine) return; /* someone else holds it and it has not expired */
  char when[FCODEC_TIME_MAX];
  fcodec_time_str(until, when);
  json_t *entry = json_pack("{s:s, s:s, s:s, s:s}", "workload", workload, "target", target, "owner",
                            owner, "expires_at", when);
  if (e) json_array_set_new(list, (size_t)at, entry);
  else json_array_append_new(list, entry);
  *got = entry != NULL;
  *changed = true;
}

/* Takes the lock (op: LOCK_EX to change the leases, LOCK_SH to read them)
 * and loads DIR/leases.json: on MLC_OK the lock is held and *doc (with its
 * "leases" list) and *path (mlc_free) are the caller's; on an error nothing
 * is held. */
static int leases_open(file_db_t *db, int op, json_t **doc, char **path) {
  *doc = NULL;
  *path = mlc_malloc(strlen(db->dir) + sizeof "/leases.json");
  if (!*path) return mlc_error_set(MLC_ENOMEM, "out of memory");
  sprintf(*path, "%s/leases.json", db->dir);
  int rc = fdb_lock(db, op);
  if (rc == MLC_OK && !json_object_get(*doc = leases_load(*path), "leases")) {
    fdb_lock(db, LOCK_UN);
    rc = mlc_error_set(MLC_ENOMEM, "out of memory reading leases");
  }
  if (rc != MLC_OK) {
    json_decref(*doc);
    mlc_free(*path);
    *doc = NULL, *path = NULL;
  }
  return rc;
}

int fdb_lease(db_t *base, bool *got, uint64_t key, const char *target, const char *owner, int ttl_s,
              bool release) {
  file_db_t *db = fdb(base);
  char workload[17];
  mlc_hash_hex(key, workload);
  *got = false;
  json_t *doc;
  char *path;
  int rc = leases_open(db, LOCK_EX, &doc, &path);
  if (rc != MLC_OK) return rc;
  json_t *list = json_object_get(doc, "leases");
  int64_t now = fcodec_now_us();
  bool changed = false;
  long at = leases_sweep(list, workload, target, now, &changed);
  lease_apply(list, at, got, &changed, workload, target, owner, now + (int64_t)ttl_s * 1000000,
              release);
  if (changed) rc = leases_save(path, doc);
  if (rc != MLC_OK) *got = false;
  json_decref(doc);
  fdb_lock(db, LOCK_UN);
  mlc_free(path);
  return rc;
}

int fdb_lease_holder(db_t *base, bool *held, char *owner, size_t len, double *secs_left, uint64_t key,
                     const char *target) {
  file_db_t *db = fdb(base);
  char workload[17];
  mlc_hash_hex(key, workload);
  json_t *doc;
  char *path;
  int rc = leases_open(db, LOCK_SH, &doc, &path);
  if (rc != MLC_OK) return rc;
  fdb_lock(db, LOCK_UN);
  json_t *list = json_object_get(doc, "leases");
  int64_t now = fcodec_now_us();
  bool changed = false; /* expired entries are dropped from this copy only */
  long at = leases_sweep(list, workload, target, now, &changed);
  json_t *e = at >= 0 ? json_array_get(list, (size_t)at) : NULL;
  const char *who = json_string_value(json_object_get(e, "owner"));
  const char *exp = json_string_value(json_object_get(e, "expires_at"));
  int64_t until;
  if (who && exp && fcodec_time_parse(exp, strlen(exp), &until) == MLC_OK) {
    snprintf(owner, len, "%s", who);
    *secs_left = (double)(until - now) / 1e6;
    *held = true;
  }
  json_decref(doc);
  mlc_free(path);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Schema version                                                            */
/* ------------------------------------------------------------------------ */

/* Both files' schema lines were checked when they were opened (and again
 * when a prune elsewhere replaced one); schema 1 has no migrations, so the
 * version read then is the version now. The older file is the database's. */
int fdb_schema_version(db_t *base, int *current, int *supported) {
  file_db_t *db = fdb(base);
  int wl = db->wl_file.schema, rec = db->rec_file.schema;
  *current = wl < rec ? wl : rec;
  *supported = FDB_SCHEMA;
  return MLC_OK;
}
