/*
 * transfer.c - db_transfer (database.h): copying one database into another,
 * behind `mlc-db export` and `mlc-db import` (docs/database.md "Backups,
 * export and migration").
 *
 * The copy goes through the public interface only, so it works between any
 * two backends (file to PostgreSQL, PostgreSQL to file, file to file) and
 * needs no knowledge of either storage layout. It is lossless because
 * records are committed as read: the same content id, created_at and every
 * other field. It is idempotent because ids are content-derived: the ids
 * dst already holds are read first and only the missing records are sent,
 * so a second run writes nothing (and `copied` says so), and a run
 * interrupted half-way can simply be run again.
 *
 * A record the destination refuses as invalid (damaged in the source) does
 * not stop the copy: its batch is resent record by record, the refused ones
 * are named in warnings, and the call fails at the end, after everything
 * else has arrived.
 *
 * Work goes workload by workload so memory stays bounded by the largest
 * workload's records rather than the whole database. Records whose workload
 * was never committed (the interface allows it) are found by comparing
 * the counts against stats() and picked up in one final full pass.
 */
#include "database/database.h"

#include <stdlib.h>
#include <string.h>

/* Records sent per db_commit_records call: large enough to amortise a
 * transaction or an fsync, small enough to keep one batch's memory trivial. */
#define TRANSFER_BATCH 256

typedef struct {
  db_t *dst, *src;
  int64_t copied;  /* records written to dst */
  int64_t seen;    /* src records visited */
  int64_t nrefused;        /* records dst refused as invalid */
  char refused[320];       /* the first one's id and reason */
} transfer_t;

static int cmp_id(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

/* The ids of dst's records of workload `key` (all of dst when all_keys),
 * sorted for bsearch. *ids is mlc_free'd by the caller. */
static int dst_ids(transfer_t *t, char (**ids)[17], int *nids, uint64_t key, bool all_keys) {
  db_result_t *res = NULL;
  db_filter_t f = {.workload_key = all_keys ? 0 : key};
  *ids = NULL;
  *nids = 0;
  int st = db_records(t->dst, &res, &f);
  if (st != MLC_OK) return st;
  if (res->nrecords > 0) {
    *ids = mlc_calloc((size_t)res->nrecords, sizeof **ids);
    if (!*ids) {
      db_result_free(res);
      return mlc_error_set(MLC_ENOMEM, "copying records: out of memory");
    }
  }
  for (int i = 0; i < res->nrecords; i++) {
    if (!all_keys && res->records[i].workload_key != key) continue;
    memcpy((*ids)[(*nids)++], res->records[i].id, 17);
  }
  if (*nids > 1) qsort(*ids, (size_t)*nids, sizeof **ids, cmp_id);
  db_result_free(res);
  return MLC_OK;
}

/* A batch the destination refused as invalid (a damaged record in the
 * source: a measurement without run times, a trace that is not JSON) is
 * sent again one record at a time, so every valid record still arrives and
 * each refused one is named; db_transfer fails at the end. */
static int commit_one_by_one(transfer_t *t, const db_record_t *batch, int n) {
  for (int i = 0; i < n; i++) {
    int st = db_commit_records(t->dst, &batch[i], 1);
    if (st == MLC_OK) {
      t->copied++;
    } else if (st == MLC_EINVAL) {
      MLC_WARN("not copying record %s: %s", batch[i].id, mlc_error_last());
      if (t->nrefused++ == 0) snprintf(t->refused, sizeof t->refused, "%s", mlc_error_last());
    } else {
      return st;
    }
  }
  return MLC_OK;
}

static int commit_batch(transfer_t *t, const db_record_t *batch, int n) {
  if (n == 0) return MLC_OK;
  int st = db_commit_records(t->dst, batch, n);
  if (st == MLC_OK) t->copied += n;
  return st == MLC_EINVAL ? commit_one_by_one(t, batch, n) : st;
}

/* Commits the records of `res` that pass `want` and dst lacks, in batches. */
static int copy_missing(transfer_t *t, const db_result_t *res, char (*ids)[17], int nids,
                        bool (*want)(const db_record_t *r, const void *arg), const void *arg) {
  db_record_t batch[TRANSFER_BATCH];
  int n = 0, st = MLC_OK;
  for (int i = 0; i < res->nrecords && st == MLC_OK; i++) {
    const db_record_t *r = &res->records[i];
    if (!want(r, arg)) continue;
    t->seen++;
    if (nids > 0 && bsearch(r->id, ids, (size_t)nids, sizeof *ids, cmp_id)) continue;
    batch[n++] = *r;
    if (n == TRANSFER_BATCH) {
      st = commit_batch(t, batch, n);
      n = 0;
    }
  }
  return st == MLC_OK ? commit_batch(t, batch, n) : st;
}

static bool of_key(const db_record_t *r, const void *arg) {
  return r->workload_key == *(const uint64_t *)arg;
}

/* One workload: its row, then its records dst lacks. */
static int copy_workload(transfer_t *t, const db_workload_t *w) {
  int st = db_commit_workload(t->dst, w->key, w->name ? w->name : "", w->tvmscript ? w->tvmscript : "");
  if (st != MLC_OK) return st;
  db_result_t *res = NULL;
  char (*ids)[17] = NULL;
  int nids = 0;
  db_filter_t f = {.workload_key = w->key};
  st = db_records(t->src, &res, &f);
  if (st == MLC_OK) st = dst_ids(t, &ids, &nids, w->key, false);
  if (st == MLC_OK) st = copy_missing(t, res, ids, nids, of_key, &w->key);
  mlc_free(ids);
  db_result_free(res);
  return st;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

typedef struct {
  uint64_t *keys; /* sorted */
  size_t n;
} key_set_t;

/* True for a record whose workload is not in the set (an orphan). */
static bool not_in_set(const db_record_t *r, const void *arg) {
  const key_set_t *set = arg;
  return !bsearch(&r->workload_key, set->keys, set->n, sizeof *set->keys, cmp_u64);
}

/* The final pass for records of workloads never committed: only when src
 * holds more records than the per-workload passes saw. */
static int copy_orphans(transfer_t *t, const db_result_t *workloads) {
  db_stats_t stats;
  memset(&stats, 0, sizeof stats);
  int st = db_stats(t->src, &stats);
  int64_t total = stats.nrecords;
  db_stats_free(&stats);
  if (st != MLC_OK || total <= t->seen) return st;
  db_result_t *res = NULL;
  char (*ids)[17] = NULL;
  int nids = 0;
  key_set_t set = {mlc_calloc((size_t)workloads->nworkloads + 1, sizeof *set.keys), (size_t)workloads->nworkloads};
  if (!set.keys) return mlc_error_set(MLC_ENOMEM, "copying records: out of memory");
  for (size_t i = 0; i < set.n; i++) set.keys[i] = workloads->workloads[i].key;
  qsort(set.keys, set.n, sizeof *set.keys, cmp_u64);
  db_filter_t all = {0};
  st = db_records(t->src, &res, &all);
  if (st == MLC_OK) st = dst_ids(t, &ids, &nids, 0, true);
  if (st == MLC_OK) st = copy_missing(t, res, ids, nids, not_in_set, &set);
  mlc_free(set.keys);
  mlc_free(ids);
  db_result_free(res);
  return st;
}

int db_transfer(db_t *dst, db_t *src, int64_t *copied) {
  transfer_t t = {.dst = dst, .src = src};
  db_result_t *ws = NULL;
  if (copied) *copied = 0;
  if (!dst || !src) return mlc_error_set(MLC_EINVAL, "copying records: no database");
  int st = db_workloads(src, &ws);
  for (int i = 0; st == MLC_OK && i < ws->nworkloads; i++) st = copy_workload(&t, &ws->workloads[i]);
  if (st == MLC_OK) st = copy_orphans(&t, ws);
  db_result_free(ws);
  if (copied) *copied = t.copied;
  if (st == MLC_OK && t.nrefused > 0)
    st = mlc_error_set(MLC_EINVAL, "%lld damaged record(s) not copied (the first: %s); every other record was",
                       (long long)t.nrefused, t.refused);
  if (st != MLC_OK) mlc_error_prefix("copying %s to %s", db_uri(src), db_uri(dst));
  return st;
}
