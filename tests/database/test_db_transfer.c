/*
 * test_db_transfer.c - db_transfer (database.h; database/transfer.c), the
 * copy behind `mlc-db export` and `mlc-db import`: lossless (every field of
 * every record and workload equal after the copy, run times bit for bit,
 * awkward text intact), idempotent (a second copy writes nothing), resumable
 * (a partial destination gets only what it lacks), and the same between
 * backends: file to file always, file to PostgreSQL to file when a throwaway
 * cluster can be started (tests/database/pg_cluster.h; skipped with the
 * reason otherwise).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "database/database.h"
#include "tests/database/pg_cluster.h"

#define OK(x) assert_int_equal((x), MLC_OK)

/* A real trace in TVM's JSON layout (as the schedule tests print it). */
static const char *TRACE_JSON =
    "[[[\"GetBlock\",[],[\"C\",\"main\"],[\"b0\"]],[\"GetLoops\",[\"b0\"],[],[\"l1\",\"l2\",\"l3\"]],"
    "[\"Parallel\",[\"l1\"],[],[]],[\"Vectorize\",[\"l3\"],[],[]]],[]]";

static const char *const TARGETS[] = {"llvm -mcpu=znver4 -num-cores=4", "cuda -arch=sm_90"};

/* ------------------------------------------------------------------------ */
/* Fixtures                                                                  */
/* ------------------------------------------------------------------------ */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

/* A fresh file database in a new temp dir (uri "file:DIR"). */
static db_t *open_temp_file_db(char dir[64]) {
  snprintf(dir, 64, "/tmp/mlc-transfer-XXXXXX");
  assert_non_null(mkdtemp(dir));
  char uri[96];
  snprintf(uri, sizeof uri, "file:%s/db", dir);
  db_t *db = NULL;
  OK(db_open(&db, uri));
  OK(db_init(db));
  return db;
}

static void close_and_remove(db_t *db, const char *dir) {
  db_close(db);
  nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Record i of the test set: two workloads, two targets, measurements with
 * run times that need all 17 digits, failures of every kind, text with
 * quotes, newlines, tabs and non-ASCII. Strings live in `arena`. */
static db_record_t make_record(mlc_arena_t *arena, int i) {
  int nruns = 1 + i % 4;
  double *runs = mlc_arena_alloc(arena, sizeof *runs * (size_t)nruns);
  for (int j = 0; j < nruns; j++) runs[j] = 1e-4 * (1.0 + i) + 1.2345678901234567e-9 * (j + 1) / 3.0;
  mlc_error_kind_t kind = i % 5 == 4 ? (mlc_error_kind_t)(1 + (i / 5) % (MLC_ERROR_KIND_COUNT - 1)) : MLC_ERROR_KIND_NONE;
  db_record_t r = {
      .workload_key = i % 2 ? 0x0123456789abcdefULL : 0xfedcba9876543210ULL,
      .target = TARGETS[(i / 2) % 2],
      .device_key = (i / 2) % 2 ? "cuda-sm90" : "llvm-znver4",
      /* Every third record's device text is not canonical (spaces, keys
       * unsorted): a copy keeps the text, not just the value. */
      .device_json = i % 3 ? "{\"cores\":4,\"model\":\"AMD EPYC \\\"Genoa\\\"\"}"
                           : "{ \"model\": \"AMD EPYC \\\"Genoa\\\"\", \"cores\": 4 }",
      .trace_json = mlc_arena_printf(arena, "%.*s[[0,%d]]]", (int)strlen(TRACE_JSON) - 3, TRACE_JSON, i),
      .nrun_secs = kind == MLC_ERROR_KIND_NONE ? nruns : 0,
      .run_secs = kind == MLC_ERROR_KIND_NONE ? runs : NULL,
      .error_kind = kind,
      .error_msg = kind == MLC_ERROR_KIND_NONE ? "" : mlc_arena_printf(arena, "line 1\n\tline 2 \"q\" \xc3\xbc #%d", i),
      .compiler_version = "0.1.0",
      .worker_id = mlc_arena_printf(arena, "host-%d/gpu%d", i % 3, i % 2),
      .created_at_us = 1700000000000000LL + 1000003LL * i,
  };
  db_record_finish(&r);
  return r;
}

/* Commits the workloads and records [from, to) of the test set. */
static void populate(db_t *db, int from, int to) {
  mlc_arena_t *arena = mlc_arena_new();
  OK(db_commit_workload(db, 0x0123456789abcdefULL, "matmul", "# from tvm.script import tir as T\n# matmul\n"));
  OK(db_commit_workload(db, 0xfedcba9876543210ULL, "softmax", "# softmax \"quoted\"\n"));
  db_record_t rs[64];
  for (int i = from; i < to;) {
    int n = 0;
    while (i < to && n < 64) rs[n++] = make_record(arena, i++);
    OK(db_commit_records(db, rs, n));
  }
  mlc_arena_free(arena);
}

/* ------------------------------------------------------------------------ */
/* Comparing databases                                                       */
/* ------------------------------------------------------------------------ */

static void assert_same_str(const char *a, const char *b) {
  assert_string_equal(a ? a : "", b ? b : "");
}

static void assert_same_record(const db_record_t *a, const db_record_t *b) {
  assert_string_equal(a->id, b->id);
  assert_true(a->workload_key == b->workload_key);
  assert_same_str(a->target, b->target);
  assert_same_str(a->device_key, b->device_key);
  assert_same_str(a->device_json, b->device_json); /* byte for byte, not just the same JSON value */
  assert_same_str(a->trace_json, b->trace_json);
  assert_true(a->trace_hash == b->trace_hash);
  assert_int_equal(a->nrun_secs, b->nrun_secs);
  for (int i = 0; i < a->nrun_secs; i++) assert_memory_equal(&a->run_secs[i], &b->run_secs[i], sizeof(double));
  assert_int_equal(a->error_kind, b->error_kind);
  assert_same_str(a->error_msg, b->error_msg);
  assert_same_str(a->compiler_version, b->compiler_version);
  assert_same_str(a->worker_id, b->worker_id);
  assert_int_equal(a->created_at_us, b->created_at_us);
}

static const db_record_t *find_id(const db_result_t *res, const char *id) {
  for (int i = 0; i < res->nrecords; i++)
    if (strcmp(res->records[i].id, id) == 0) return &res->records[i];
  return NULL;
}

/* Every record and workload of `a` is in `b` with every field equal, and b
 * has nothing else. */
static void assert_same_contents(db_t *a, db_t *b) {
  db_result_t *ra, *rb;
  db_filter_t all = {0};
  OK(db_records(a, &ra, &all));
  OK(db_records(b, &rb, &all));
  assert_int_equal(ra->nrecords, rb->nrecords);
  for (int i = 0; i < ra->nrecords; i++) {
    const db_record_t *other = find_id(rb, ra->records[i].id);
    assert_non_null(other);
    assert_same_record(&ra->records[i], other);
  }
  db_result_free(ra);
  db_result_free(rb);
  OK(db_workloads(a, &ra));
  OK(db_workloads(b, &rb));
  assert_int_equal(ra->nworkloads, rb->nworkloads);
  for (int i = 0; i < ra->nworkloads; i++) {
    const db_workload_t *w = &ra->workloads[i], *o = NULL;
    for (int j = 0; j < rb->nworkloads; j++)
      if (rb->workloads[j].key == w->key) o = &rb->workloads[j];
    assert_non_null(o);
    assert_same_str(w->name, o->name);
    assert_same_str(w->tvmscript, o->tvmscript);
  }
  db_result_free(ra);
  db_result_free(rb);
}

static int64_t count_records(db_t *db) {
  db_stats_t s;
  OK(db_stats(db, &s));
  int64_t n = s.nrecords;
  db_stats_free(&s);
  return n;
}

/* ------------------------------------------------------------------------ */
/* File to file                                                              */
/* ------------------------------------------------------------------------ */

#define NRECORDS 300 /* more than one commit batch of transfer.c */

static void file_to_file_copy_keeps_every_field(void **state) {
  char sdir[64], ddir[64];
  db_t *src = open_temp_file_db(sdir), *dst = open_temp_file_db(ddir);
  populate(src, 0, NRECORDS);
  int64_t copied = -1;
  OK(db_transfer(dst, src, &copied));
  assert_int_equal(copied, NRECORDS);
  assert_same_contents(src, dst);
  /* Queries agree too: the best record per (workload, target) is the same. */
  for (int t = 0; t < 2; t++) {
    db_result_t *a, *b;
    bool fa, fb;
    OK(db_best(src, &a, &fa, 0x0123456789abcdefULL, TARGETS[t]));
    OK(db_best(dst, &b, &fb, 0x0123456789abcdefULL, TARGETS[t]));
    assert_true(fa && fb);
    assert_string_equal(a->records[0].id, b->records[0].id);
    db_result_free(a);
    db_result_free(b);
  }
  close_and_remove(src, sdir);
  close_and_remove(dst, ddir);
}

static void second_transfer_copies_nothing(void **state) {
  char sdir[64], ddir[64];
  db_t *src = open_temp_file_db(sdir), *dst = open_temp_file_db(ddir);
  populate(src, 0, 50);
  int64_t copied = -1;
  OK(db_transfer(dst, src, &copied));
  assert_int_equal(copied, 50);
  OK(db_transfer(dst, src, &copied));
  assert_int_equal(copied, 0);
  assert_int_equal(count_records(dst), 50);
  assert_same_contents(src, dst);
  close_and_remove(src, sdir);
  close_and_remove(dst, ddir);
}

/* An interrupted copy is finished by running it again: only the rest goes. */
static void partial_destination_gets_only_what_it_lacks(void **state) {
  char sdir[64], ddir[64];
  db_t *src = open_temp_file_db(sdir), *dst = open_temp_file_db(ddir);
  populate(src, 0, 80);
  populate(dst, 0, 30);
  int64_t copied = -1;
  OK(db_transfer(dst, src, &copied));
  assert_int_equal(copied, 50);
  assert_same_contents(src, dst);
  close_and_remove(src, sdir);
  close_and_remove(dst, ddir);
}

/* Copying into a database with records of its own keeps them: a union. */
static void destination_records_are_kept(void **state) {
  char sdir[64], ddir[64];
  db_t *src = open_temp_file_db(sdir), *dst = open_temp_file_db(ddir);
  populate(src, 0, 40);
  populate(dst, 40, 60);
  int64_t copied = -1;
  OK(db_transfer(dst, src, &copied));
  assert_int_equal(copied, 40);
  assert_int_equal(count_records(dst), 60);
  OK(db_transfer(src, dst, &copied)); /* and back: now both hold the union */
  assert_int_equal(copied, 20);
  assert_same_contents(src, dst);
  close_and_remove(src, sdir);
  close_and_remove(dst, ddir);
}

/* A record whose workload row was never committed still travels. */
static void records_without_a_workload_row_are_copied(void **state) {
  char sdir[64], ddir[64];
  db_t *src = open_temp_file_db(sdir), *dst = open_temp_file_db(ddir);
  populate(src, 0, 10);
  mlc_arena_t *arena = mlc_arena_new();
  db_record_t r = make_record(arena, 11);
  r.workload_key = 0x5555aaaa5555aaaaULL;
  db_record_finish(&r);
  int st = db_commit_records(src, &r, 1);
  if (st != MLC_OK) { /* a backend may insist on the workload row: nothing to test */
    mlc_arena_free(arena);
    close_and_remove(src, sdir);
    close_and_remove(dst, ddir);
    skip();
  }
  int64_t copied = -1;
  OK(db_transfer(dst, src, &copied));
  assert_int_equal(copied, 11);
  assert_same_contents(src, dst);
  OK(db_transfer(dst, src, &copied));
  assert_int_equal(copied, 0);
  mlc_arena_free(arena);
  close_and_remove(src, sdir);
  close_and_remove(dst, ddir);
}

/* A line written by hand into the file database: a measurement without
 * run times, which loads (the file backend reads what it can) but which no
 * database accepts in a commit. */
static const char *DAMAGED_LINE =
    "{\"id\":\"d00dfeed00000006\",\"workload\":\"0123456789abcdef\",\"target\":\"cuda -arch=sm_90\","
    "\"device_key\":\"cuda-sm90\",\"device\":{},\"trace\":[[],[]],\"trace_hash\":\"0000000000000001\","
    "\"run_secs\":[],\"error_kind\":\"\",\"error_msg\":\"\",\"compiler_version\":\"0.1.0\","
    "\"worker_id\":\"w\",\"created_at\":\"2024-05-01T12:34:56.000000Z\"}\n";

/* A damaged source record is named, and does not stop the others. */
static void damaged_record_is_named_and_the_rest_copied(void **state) {
  char sdir[64], ddir[64], path[96];
  db_t *src = open_temp_file_db(sdir), *dst = open_temp_file_db(ddir);
  populate(src, 0, 20);
  snprintf(path, sizeof path, "%s/db/records.jsonl", sdir);
  FILE *f = fopen(path, "a");
  assert_non_null(f);
  fputs(DAMAGED_LINE, f);
  assert_int_equal(fclose(f), 0);
  mlc_log_set_level(MLC_LOG_ERROR); /* the skip warnings are expected */
  int64_t copied = -1;
  assert_int_equal(db_transfer(dst, src, &copied), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "1 damaged record(s) not copied"));
  assert_non_null(strstr(mlc_error_last(), "d00dfeed00000006"));
  assert_int_equal(copied, 20);
  assert_int_equal(count_records(dst), 20);
  assert_int_equal(db_transfer(dst, src, &copied), MLC_EINVAL); /* still named, nothing doubled */
  assert_int_equal(copied, 0);
  assert_int_equal(count_records(dst), 20);
  mlc_log_set_level(MLC_LOG_WARN);
  close_and_remove(src, sdir);
  close_and_remove(dst, ddir);
}

static void empty_source_copies_nothing(void **state) {
  char sdir[64], ddir[64];
  db_t *src = open_temp_file_db(sdir), *dst = open_temp_file_db(ddir);
  int64_t copied = -1;
  OK(db_transfer(dst, src, &copied));
  assert_int_equal(copied, 0);
  assert_int_equal(count_records(dst), 0);
  assert_int_equal(db_transfer(NULL, src, &copied), MLC_EINVAL);
  close_and_remove(src, sdir);
  close_and_remove(dst, ddir);
}

/* ------------------------------------------------------------------------ */
/* File to PostgreSQL to file                                                */
/* ------------------------------------------------------------------------ */

static pg_cluster_t cluster;
static int cluster_state; /* 1 running, 0 skipped, -1 failed */

static int start_cluster(void **state) {
  cluster_state = pg_cluster_start(&cluster);
  return cluster_state < 0 ? -1 : 0;
}

static int stop_cluster(void **state) {
  if (cluster_state > 0) pg_cluster_stop(&cluster);
  return 0;
}

static void file_to_postgresql_to_file_is_lossless(void **state) {
  if (cluster_state <= 0) skip();
  char sdir[64], ddir[64];
  db_t *src = open_temp_file_db(sdir), *back = open_temp_file_db(ddir), *pg = NULL;
  populate(src, 0, NRECORDS);
  OK(db_open(&pg, cluster.conninfo));
  OK(db_init(pg));
  int64_t copied = -1;
  OK(db_transfer(pg, src, &copied));
  assert_int_equal(copied, NRECORDS);
  assert_same_contents(src, pg);
  OK(db_transfer(pg, src, &copied));
  assert_int_equal(copied, 0);
  OK(db_transfer(back, pg, &copied));
  assert_int_equal(copied, NRECORDS);
  assert_same_contents(src, back);
  OK(db_transfer(back, pg, &copied));
  assert_int_equal(copied, 0);
  db_close(pg);
  close_and_remove(src, sdir);
  close_and_remove(back, ddir);
}

int main(void) {
  const struct CMUnitTest file_tests[] = {
      cmocka_unit_test(file_to_file_copy_keeps_every_field),
      cmocka_unit_test(second_transfer_copies_nothing),
      cmocka_unit_test(partial_destination_gets_only_what_it_lacks),
      cmocka_unit_test(destination_records_are_kept),
      cmocka_unit_test(records_without_a_workload_row_are_copied),
      cmocka_unit_test(damaged_record_is_named_and_the_rest_copied),
      cmocka_unit_test(empty_source_copies_nothing),
  };
  const struct CMUnitTest pg_tests[] = {
      cmocka_unit_test(file_to_postgresql_to_file_is_lossless),
  };
  int failed = cmocka_run_group_tests_name("file", file_tests, NULL, NULL);
  failed += cmocka_run_group_tests_name("postgresql", pg_tests, start_cluster, stop_cluster);
  return failed;
}
