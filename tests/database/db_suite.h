/*
 * db_suite.h - the database test suite every backend must pass, written
 * against database.h only. A backend's test supplies a way to make a fresh,
 * empty database and runs the suite on it:
 *
 *   static int fresh(char *uri, size_t cap, void *payload) { ... a new URI ... }
 *   int main(void) { return db_suite_run("file", fresh, NULL); }
 *
 * Every test gets its own fresh database (opened and db_init'ed by the
 * fixture), so tests do not see each other's records. The contract checked
 * here is database.h plus the orders in database/db_priv.h: top_k by median
 * then id, records newest first then id, stats targets sorted, workloads in
 * no particular order; a full id finds one record; prune keeps every failure.
 *
 * db_suite_concurrent_commits (several processes committing into one
 * database at once) is here too so each backend's concurrency test is the
 * same test.
 */
#ifndef MLC_TESTS_DB_SUITE_H
#define MLC_TESTS_DB_SUITE_H

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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "database/database.h"

/* Writes the URI of a new, empty database into uri; MLC_OK or a status. */
typedef int (*db_suite_fresh_fn)(char *uri, size_t cap, void *payload);

static db_suite_fresh_fn db_suite_fresh_;
static void *db_suite_payload_;

typedef struct {
  db_t *db;
  char uri[1024];
} db_suite_fixture_t;

#define SUITE_CPU "llvm -mcpu=znver4 -num-cores=2"
#define SUITE_GPU "cuda -arch=sm_90"
#define SUITE_W1 UINT64_C(0x8badf00d12345678)
#define SUITE_W2 UINT64_C(0x0123456789abcdef)
#define SUITE_T0 INT64_C(1714566896123456) /* 2024-05-01T12:34:56.123456Z */

/* ---- fixture ------------------------------------------------------------ */

static int db_suite_setup(void **state) {
  db_suite_fixture_t *fx = calloc(1, sizeof *fx);
  if (!fx || db_suite_fresh_(fx->uri, sizeof fx->uri, db_suite_payload_) != MLC_OK) {
    fprintf(stderr, "db_suite: no fresh database: %s\n", mlc_error_last());
    free(fx);
    return -1;
  }
  if (db_open(&fx->db, fx->uri) != MLC_OK || db_init(fx->db) != MLC_OK) {
    fprintf(stderr, "db_suite: cannot open %s: %s\n", fx->uri, mlc_error_last());
    db_close(fx->db);
    free(fx);
    return -1;
  }
  *state = fx;
  return 0;
}

static int db_suite_teardown(void **state) {
  db_suite_fixture_t *fx = *state;
  db_close(fx->db);
  free(fx);
  return 0;
}

static db_t *suite_db(void **state) { return ((db_suite_fixture_t *)*state)->db; }

/* ---- records ------------------------------------------------------------ */

/* A record and the storage it points into (keep it in place once made). */
typedef struct {
  db_record_t r;
  double runs[8];
  char trace[96];
} suite_rec_t;

/* A record of `workload` on `target`/`device`; `variant` picks the trace.
 * A failure when kind != NONE. */
static void suite_rec(suite_rec_t *s, uint64_t workload, const char *target, const char *device,
                      int variant, const double *runs, int nruns, mlc_error_kind_t kind,
                      int64_t created) {
  memset(s, 0, sizeof *s);
  snprintf(s->trace, sizeof s->trace, "[[\"split\",[%d,%d]],[\"vectorize\",[1]]]", variant,
           variant * 2 + 1);
  if (nruns) memcpy(s->runs, runs, (size_t)nruns * sizeof *runs);
  s->r = (db_record_t){.workload_key = workload, .target = target, .device_key = device,
                       .device_json = "{\"cores\":2,\"model\":\"EPYC 9654\"}",
                       .trace_json = s->trace, .nrun_secs = nruns, .run_secs = s->runs,
                       .error_kind = kind, .error_msg = kind ? "it failed" : "",
                       .compiler_version = "0.1.0", .worker_id = "worker-7",
                       .created_at_us = created};
  db_record_finish(&s->r);
}

/* A measurement whose runs all take `secs`. */
static void suite_ok(suite_rec_t *s, uint64_t workload, const char *target, int variant,
                     double secs, int64_t created) {
  double runs[3] = {secs, secs, secs};
  suite_rec(s, workload, target, "cpu-znver4", variant, runs, 3, MLC_ERROR_KIND_NONE, created);
}

static void suite_fail(suite_rec_t *s, uint64_t workload, const char *target, int variant,
                       mlc_error_kind_t kind, int64_t created) {
  suite_rec(s, workload, target, "cpu-znver4", variant, NULL, 0, kind, created);
}

static void suite_commit(db_t *db, suite_rec_t *s, int n) {
  db_record_t *batch = calloc((size_t)n, sizeof *batch);
  assert_non_null(batch);
  for (int i = 0; i < n; i++) batch[i] = s[i].r;
  int rc = db_commit_records(db, batch, n);
  if (rc != MLC_OK) fprintf(stderr, "commit: %s\n", mlc_error_last());
  assert_int_equal(rc, MLC_OK);
  free(batch);
}

static db_result_t *suite_records(db_t *db, const db_filter_t *f) {
  db_result_t *res = NULL;
  int rc = db_records(db, &res, f);
  if (rc != MLC_OK) fprintf(stderr, "records: %s\n", mlc_error_last());
  assert_int_equal(rc, MLC_OK);
  assert_non_null(res);
  return res;
}

static db_result_t *suite_top(db_t *db, uint64_t key, const char *target, int k) {
  db_result_t *res = NULL;
  assert_int_equal(db_top_k(db, &res, key, target, k), MLC_OK);
  assert_non_null(res);
  return res;
}

static const db_record_t *suite_find(const db_result_t *res, const char *id) {
  for (int i = 0; i < res->nrecords; i++)
    if (strcmp(res->records[i].id, id) == 0) return &res->records[i];
  return NULL;
}

static void suite_assert_same(const db_record_t *got, const db_record_t *want) {
  assert_string_equal(got->id, want->id);
  assert_true(got->workload_key == want->workload_key);
  assert_string_equal(got->target, want->target);
  assert_string_equal(got->device_key, want->device_key);
  assert_string_equal(got->device_json, want->device_json);
  assert_string_equal(got->trace_json, want->trace_json);
  assert_true(got->trace_hash == want->trace_hash);
  assert_int_equal(got->nrun_secs, want->nrun_secs);
  for (int i = 0; i < want->nrun_secs; i++) assert_true(got->run_secs[i] == want->run_secs[i]);
  assert_int_equal(got->error_kind, want->error_kind);
  assert_string_equal(got->error_msg, want->error_msg);
  assert_string_equal(got->compiler_version, want->compiler_version);
  assert_string_equal(got->worker_id, want->worker_id);
  assert_int_equal(got->created_at_us, want->created_at_us);
}

static void suite_sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* ---- the tests ---------------------------------------------------------- */

static void test_every_field_round_trips_and_survives_reopening(void **state) {
  db_suite_fixture_t *fx = *state;
  /* Run times that need all 17 digits; a message with quotes, control
   * characters and non-ASCII text. */
  double runs[3] = {0.1 + 0.2, 1.0 / 3.0, 2.5e-7};
  suite_rec_t s[2];
  suite_rec(&s[0], SUITE_W1, SUITE_GPU, "cuda-sm90", 1, runs, 3, MLC_ERROR_KIND_NONE, SUITE_T0);
  s[0].r.device_json = "{\"arch\":\"sm_90\",\"name\":\"NVIDIA H100 80GB HBM3\",\"sms\":132}";
  db_record_finish(&s[0].r);
  suite_rec(&s[1], SUITE_W1, SUITE_GPU, "cuda-sm90", 2, NULL, 0, MLC_ERROR_KIND_BUILD,
            SUITE_T0 + 1);
  s[1].r.error_msg = "ptxas: \"x\" \\ line 1\n\tline 2 \xc3\xbc \xe2\x80\x93 \x01 end";
  db_record_finish(&s[1].r);
  suite_commit(fx->db, s, 2);

  for (int pass = 0; pass < 2; pass++) {
    db_result_t *res = suite_records(fx->db, NULL);
    assert_int_equal(res->nrecords, 2);
    for (int i = 0; i < 2; i++) {
      const db_record_t *got = suite_find(res, s[i].r.id);
      assert_non_null(got);
      suite_assert_same(got, &s[i].r);
    }
    db_result_free(res);
    /* Again from a new connection: what was acknowledged is stored. */
    db_close(fx->db);
    fx->db = NULL;
    assert_int_equal(db_open(&fx->db, fx->uri), MLC_OK);
  }
}

static void test_content_id_ignores_created_at_but_not_content(void **state) {
  (void)state;
  suite_rec_t a, b, c;
  suite_ok(&a, SUITE_W1, SUITE_CPU, 1, 1e-3, SUITE_T0);
  suite_ok(&b, SUITE_W1, SUITE_CPU, 1, 1e-3, SUITE_T0 + 999);
  suite_ok(&c, SUITE_W1, SUITE_CPU, 1, 1.5e-3, SUITE_T0);
  assert_string_equal(a.r.id, b.r.id);
  assert_string_not_equal(a.r.id, c.r.id);
  assert_true(a.r.trace_hash == c.r.trace_hash); /* same trace, different times */
  assert_int_equal(strlen(a.r.id), 16);
}

static void test_median_is_the_statistic_and_failures_sort_last(void **state) {
  (void)state;
  suite_rec_t s;
  double odd[3] = {5, 1, 100}, even[4] = {4, 1, 3, 100};
  suite_rec(&s, SUITE_W1, SUITE_CPU, "d", 1, odd, 3, MLC_ERROR_KIND_NONE, 0);
  assert_true(db_record_median(&s.r) == 5);
  suite_rec(&s, SUITE_W1, SUITE_CPU, "d", 1, even, 4, MLC_ERROR_KIND_NONE, 0);
  assert_true(db_record_median(&s.r) == 3.5);
  suite_rec(&s, SUITE_W1, SUITE_CPU, "d", 1, even, 4, MLC_ERROR_KIND_RUN, 0);
  assert_true(isinf(db_record_median(&s.r)));
}

static void test_top_k_orders_by_median_fastest_first(void **state) {
  db_t *db = suite_db(state);
  /* Medians 5, 3, 4, 1, 2 (ms); the means would order them differently. */
  double runs[5][3] = {{5, 5, 5}, {3, 90, 1}, {4, 4, 4}, {1, 1, 50}, {2, 2, 2}};
  suite_rec_t s[5];
  for (int i = 0; i < 5; i++) {
    for (int k = 0; k < 3; k++) runs[i][k] *= 1e-3;
    suite_rec(&s[i], SUITE_W1, SUITE_CPU, "cpu-znver4", i, runs[i], 3, MLC_ERROR_KIND_NONE,
              SUITE_T0 + i);
  }
  suite_commit(db, s, 5);
  db_result_t *top = suite_top(db, SUITE_W1, SUITE_CPU, 3);
  assert_int_equal(top->nrecords, 3);
  assert_string_equal(top->records[0].id, s[3].r.id);
  assert_string_equal(top->records[1].id, s[4].r.id);
  assert_string_equal(top->records[2].id, s[1].r.id);
  db_result_free(top);
  top = suite_top(db, SUITE_W1, SUITE_CPU, 10);
  assert_int_equal(top->nrecords, 5);
  for (int i = 1; i < 5; i++)
    assert_true(db_record_median(&top->records[i - 1]) <= db_record_median(&top->records[i]));
  db_result_free(top);

  db_result_t *best = NULL;
  bool found = false;
  assert_int_equal(db_best(db, &best, &found, SUITE_W1, SUITE_CPU), MLC_OK);
  assert_true(found);
  assert_string_equal(best->records[0].id, s[3].r.id);
  assert_string_equal(best->records[0].trace_json, s[3].r.trace_json);
  db_result_free(best);
}

static void test_equal_medians_order_by_id(void **state) {
  db_t *db = suite_db(state);
  suite_rec_t s[4];
  for (int i = 0; i < 4; i++) suite_ok(&s[i], SUITE_W1, SUITE_CPU, 10 + i, 2e-3, SUITE_T0);
  suite_commit(db, s, 4);
  db_result_t *top = suite_top(db, SUITE_W1, SUITE_CPU, 4);
  assert_int_equal(top->nrecords, 4);
  for (int i = 1; i < 4; i++) assert_true(strcmp(top->records[i - 1].id, top->records[i].id) < 0);
  db_result_free(top);
}

static void test_queries_never_return_another_targets_or_devices_records(void **state) {
  db_t *db = suite_db(state);
  suite_rec_t s[5];
  suite_ok(&s[0], SUITE_W1, SUITE_CPU, 1, 9e-3, SUITE_T0);
  suite_ok(&s[1], SUITE_W1, SUITE_GPU, 2, 1e-6, SUITE_T0); /* far faster, other target */
  suite_ok(&s[2], SUITE_W2, SUITE_CPU, 3, 1e-6, SUITE_T0); /* other workload */
  suite_ok(&s[3], SUITE_W1, "llvm -mcpu=znver3 -num-cores=2", 4, 1e-6, SUITE_T0);
  double runs[1] = {5e-3};
  suite_rec(&s[4], SUITE_W1, SUITE_CPU, "cpu-znver4-other-host", 5, runs, 1, MLC_ERROR_KIND_NONE,
            SUITE_T0);
  suite_commit(db, s, 5);

  db_result_t *top = suite_top(db, SUITE_W1, SUITE_CPU, 10);
  assert_int_equal(top->nrecords, 2);
  for (int i = 0; i < top->nrecords; i++) {
    assert_string_equal(top->records[i].target, SUITE_CPU);
    assert_true(top->records[i].workload_key == SUITE_W1);
  }
  db_result_free(top);

  db_result_t *best = NULL;
  bool found = true;
  assert_int_equal(db_best(db, &best, &found, SUITE_W2, SUITE_GPU), MLC_OK);
  assert_false(found);
  db_result_free(best);

  db_filter_t f = {.workload_key = SUITE_W1, .target = SUITE_CPU, .device_key = "cpu-znver4"};
  db_result_t *res = suite_records(db, &f);
  assert_int_equal(res->nrecords, 1);
  assert_string_equal(res->records[0].id, s[0].r.id);
  db_result_free(res);
}

static void test_failures_are_stored_but_never_best(void **state) {
  db_t *db = suite_db(state);
  suite_rec_t s[4];
  suite_ok(&s[0], SUITE_W1, SUITE_CPU, 1, 4e-3, SUITE_T0);
  suite_fail(&s[1], SUITE_W1, SUITE_CPU, 2, MLC_ERROR_KIND_BUILD, SUITE_T0 + 1);
  suite_fail(&s[2], SUITE_W1, SUITE_CPU, 3, MLC_ERROR_KIND_TIMEOUT, SUITE_T0 + 2);
  /* A wrong result that ran faster than anything: still not best. */
  double fast[2] = {1e-9, 1e-9};
  suite_rec(&s[3], SUITE_W1, SUITE_CPU, "cpu-znver4", 4, fast, 2, MLC_ERROR_KIND_WRONG_RESULT,
            SUITE_T0 + 3);
  suite_commit(db, s, 4);

  db_result_t *best = NULL;
  bool found = false;
  assert_int_equal(db_best(db, &best, &found, SUITE_W1, SUITE_CPU), MLC_OK);
  assert_true(found);
  assert_string_equal(best->records[0].id, s[0].r.id);
  db_result_free(best);
  db_result_t *top = suite_top(db, SUITE_W1, SUITE_CPU, 10);
  assert_int_equal(top->nrecords, 1);
  db_result_free(top);

  db_filter_t f = {.only_ok = -1};
  db_result_t *fails = suite_records(db, &f);
  assert_int_equal(fails->nrecords, 3);
  const db_record_t *wrong = suite_find(fails, s[3].r.id);
  assert_non_null(wrong);
  suite_assert_same(wrong, &s[3].r);
  db_result_free(fails);

  /* Only failures for a task: no best at all. */
  suite_fail(&s[0], SUITE_W2, SUITE_CPU, 5, MLC_ERROR_KIND_CRASH, SUITE_T0);
  suite_commit(db, s, 1);
  assert_int_equal(db_best(db, &best, &found, SUITE_W2, SUITE_CPU), MLC_OK);
  assert_false(found);
  db_result_free(best);
}

static void test_retried_commits_make_no_duplicates(void **state) {
  db_t *db = suite_db(state);
  suite_rec_t s[3];
  for (int i = 0; i < 3; i++) suite_ok(&s[i], SUITE_W1, SUITE_CPU, i, (i + 1) * 1e-3, SUITE_T0 + i);
  suite_commit(db, s, 3);
  suite_commit(db, s, 3); /* the whole batch again */
  suite_rec_t again[3];
  suite_ok(&again[0], SUITE_W1, SUITE_CPU, 1, 2e-3, SUITE_T0 + 100); /* retried later */
  suite_ok(&again[1], SUITE_W1, SUITE_CPU, 7, 8e-3, SUITE_T0 + 7);    /* new */
  again[2] = again[1];                                                /* twice in a batch */
  again[2].r.run_secs = again[1].runs;
  suite_commit(db, again, 3);
  db_result_t *res = suite_records(db, NULL);
  assert_int_equal(res->nrecords, 4);
  const db_record_t *kept = suite_find(res, s[1].r.id);
  assert_non_null(kept);
  assert_int_equal(kept->created_at_us, SUITE_T0 + 1); /* the first commit stays */
  db_result_free(res);
  db_stats_t st;
  assert_int_equal(db_stats(db, &st), MLC_OK);
  assert_int_equal(st.nrecords, 4);
  db_stats_free(&st);
}

static void test_workloads_are_stored_once_and_listed(void **state) {
  db_t *db = suite_db(state);
  const char *script1 = "# from tvm.script import tir as T\n@T.prim_func\ndef mm(): pass\n";
  assert_int_equal(db_commit_workload(db, SUITE_W1, "mm", script1), MLC_OK);
  assert_int_equal(db_commit_workload(db, SUITE_W2, "conv", "def conv(): pass\n"), MLC_OK);
  assert_int_equal(db_commit_workload(db, SUITE_W1, "renamed", "other text"), MLC_OK);
  db_result_t *res = NULL;
  assert_int_equal(db_workloads(db, &res), MLC_OK);
  assert_int_equal(res->nworkloads, 2);
  bool seen1 = false, seen2 = false;
  for (int i = 0; i < res->nworkloads; i++) {
    seen1 |= res->workloads[i].key == SUITE_W1;
    seen2 |= res->workloads[i].key == SUITE_W2;
  }
  assert_true(seen1 && seen2);
  db_result_free(res);
  assert_int_equal(db_workload(db, &res, SUITE_W1), MLC_OK);
  assert_int_equal(res->nworkloads, 1);
  assert_string_equal(res->workloads[0].name, "mm");
  assert_string_equal(res->workloads[0].tvmscript, script1);
  db_result_free(res);
  assert_int_equal(db_workload(db, &res, UINT64_C(42)), MLC_OK);
  assert_int_equal(res->nworkloads, 0);
  db_result_free(res);
}

static void test_stats_count_records_failures_by_kind_and_target(void **state) {
  db_t *db = suite_db(state);
  assert_int_equal(db_commit_workload(db, SUITE_W1, "mm", "def mm(): pass\n"), MLC_OK);
  suite_rec_t s[6];
  suite_ok(&s[0], SUITE_W1, SUITE_CPU, 1, 1e-3, SUITE_T0);
  suite_ok(&s[1], SUITE_W1, SUITE_CPU, 2, 2e-3, SUITE_T0);
  suite_fail(&s[2], SUITE_W1, SUITE_CPU, 3, MLC_ERROR_KIND_BUILD, SUITE_T0);
  suite_fail(&s[3], SUITE_W1, SUITE_GPU, 4, MLC_ERROR_KIND_BUILD, SUITE_T0);
  suite_fail(&s[4], SUITE_W1, SUITE_GPU, 5, MLC_ERROR_KIND_TIMEOUT, SUITE_T0);
  suite_ok(&s[5], SUITE_W2, SUITE_GPU, 6, 3e-3, SUITE_T0);
  suite_commit(db, s, 6);
  db_stats_t st;
  assert_int_equal(db_stats(db, &st), MLC_OK);
  assert_int_equal(st.nworkloads, 1);
  assert_int_equal(st.nrecords, 6);
  assert_int_equal(st.nfailures, 3);
  assert_int_equal(st.failures_by_kind[MLC_ERROR_KIND_NONE], 0);
  assert_int_equal(st.failures_by_kind[MLC_ERROR_KIND_BUILD], 2);
  assert_int_equal(st.failures_by_kind[MLC_ERROR_KIND_TIMEOUT], 1);
  assert_int_equal(st.failures_by_kind[MLC_ERROR_KIND_CRASH], 0);
  assert_int_equal(st.ntargets, 2);
  assert_string_equal(st.targets[0], SUITE_GPU); /* "cuda ..." < "llvm ..." */
  assert_int_equal(st.records_per_target[0], 3);
  assert_string_equal(st.targets[1], SUITE_CPU);
  assert_int_equal(st.records_per_target[1], 3);
  db_stats_free(&st);

  db_stats_t empty;
  db_suite_fixture_t *fx = *state;
  db_close(fx->db);
  assert_int_equal(db_suite_fresh_(fx->uri, sizeof fx->uri, db_suite_payload_), MLC_OK);
  assert_int_equal(db_open(&fx->db, fx->uri), MLC_OK);
  assert_int_equal(db_init(fx->db), MLC_OK);
  assert_int_equal(db_stats(fx->db, &empty), MLC_OK);
  assert_int_equal(empty.nrecords, 0);
  assert_int_equal(empty.ntargets, 0);
  db_stats_free(&empty);
}

static void test_record_filters_select_and_order_newest_first(void **state) {
  db_t *db = suite_db(state);
  suite_rec_t s[6];
  suite_ok(&s[0], SUITE_W1, SUITE_CPU, 1, 1e-3, SUITE_T0 + 10);
  suite_ok(&s[1], SUITE_W1, SUITE_CPU, 2, 1e-3, SUITE_T0 + 30);
  suite_fail(&s[2], SUITE_W1, SUITE_CPU, 3, MLC_ERROR_KIND_RUN, SUITE_T0 + 20);
  suite_ok(&s[3], SUITE_W1, SUITE_GPU, 1, 1e-3, SUITE_T0 + 40); /* same trace as s[0] */
  suite_ok(&s[4], SUITE_W2, SUITE_CPU, 4, 1e-3, SUITE_T0 + 50);
  suite_ok(&s[5], SUITE_W2, SUITE_CPU, 5, 2e-3, SUITE_T0 + 50); /* same time as s[4] */
  suite_commit(db, s, 6);

  db_result_t *res = suite_records(db, NULL);
  assert_int_equal(res->nrecords, 6);
  for (int i = 1; i < res->nrecords; i++) {
    const db_record_t *a = &res->records[i - 1], *b = &res->records[i];
    assert_true(a->created_at_us > b->created_at_us ||
                (a->created_at_us == b->created_at_us && strcmp(a->id, b->id) < 0));
  }
  db_result_free(res);

  struct {
    db_filter_t f;
    int want[6];
    int nwant;
  } cases[] = {
      {{.workload_key = SUITE_W1}, {3, 1, 2, 0}, 4},
      {{.workload_key = SUITE_W1, .target = SUITE_CPU}, {1, 2, 0}, 3},
      {{.target = SUITE_GPU}, {3}, 1},
      {{.trace_hash = s[0].r.trace_hash}, {3, 0}, 2},
      {{.workload_key = SUITE_W1, .only_ok = 1}, {3, 1, 0}, 3},
      {{.only_ok = -1}, {2}, 1},
      {{.workload_key = SUITE_W1, .limit = 2}, {3, 1}, 2},
      {{.device_key = "no-such-device"}, {0}, 0},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    res = suite_records(db, &cases[c].f);
    if (res->nrecords != cases[c].nwant) fprintf(stderr, "filter case %zu\n", c);
    assert_int_equal(res->nrecords, cases[c].nwant);
    for (int i = 0; i < cases[c].nwant; i++) {
      /* The cases list ids in newest-first order. */
      if (strcmp(res->records[i].id, s[cases[c].want[i]].r.id) != 0)
        fprintf(stderr, "filter case %zu, row %d\n", c, i);
      assert_string_equal(res->records[i].id, s[cases[c].want[i]].r.id);
    }
    db_result_free(res);
  }
}

static void test_a_record_is_found_by_its_full_id_and_by_nothing_else(void **state) {
  db_t *db = suite_db(state);
  suite_rec_t s[3];
  suite_ok(&s[0], SUITE_W1, SUITE_CPU, 1, 1e-3, SUITE_T0);
  suite_fail(&s[1], SUITE_W1, SUITE_CPU, 2, MLC_ERROR_KIND_TIMEOUT, SUITE_T0 + 1);
  suite_ok(&s[2], SUITE_W2, SUITE_GPU, 3, 2e-3, SUITE_T0 + 2);
  suite_commit(db, s, 3);
  for (int i = 0; i < 3; i++) {
    db_filter_t f = {.id = s[i].r.id};
    db_result_t *res = suite_records(db, &f);
    assert_int_equal(res->nrecords, 1);
    suite_assert_same(&res->records[0], &s[i].r);
    db_result_free(res);
  }
  /* The other fields still filter: the one record, or nothing. */
  struct {
    db_filter_t f;
    int nwant;
  } cases[] = {
      {{.id = s[1].r.id, .workload_key = SUITE_W1, .target = SUITE_CPU, .only_ok = -1}, 1},
      {{.id = s[1].r.id, .trace_hash = s[1].r.trace_hash, .limit = 1}, 1},
      {{.id = s[1].r.id, .only_ok = 1}, 0},
      {{.id = s[1].r.id, .workload_key = SUITE_W2}, 0},
      {{.id = s[2].r.id, .target = SUITE_CPU}, 0},
      {{.id = s[2].r.id, .device_key = "no-such-device"}, 0},
      {{.id = "0123456789abcdef"}, 0}, /* well formed, not stored */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    db_result_t *res = suite_records(db, &cases[c].f);
    if (res->nrecords != cases[c].nwant) fprintf(stderr, "id case %zu\n", c);
    assert_int_equal(res->nrecords, cases[c].nwant);
    db_result_free(res);
  }
  /* A prefix, another case or length is not an id: refused, not "no match". */
  char upper[17];
  for (int i = 0; i < 17; i++)
    upper[i] = (char)(s[0].r.id[i] >= 'a' ? s[0].r.id[i] - 'a' + 'A' : s[0].r.id[i]);
  const char *bad[] = {"", "8bad", upper, "0123456789abcdef0", "0123456789abcdeg"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    if (strcmp(bad[i], s[0].r.id) == 0) continue; /* an id of digits only has no upper case */
    db_filter_t f = {.id = bad[i]};
    db_result_t *res = (db_result_t *)1;
    assert_int_equal(db_records(db, &res, &f), MLC_EINVAL);
    assert_null(res);
    assert_non_null(strstr(mlc_error_last(), "is not a record id"));
  }
}

static void test_schema_version_is_the_supported_one_after_init(void **state) {
  db_t *db = suite_db(state); /* the fixture ran db_init */
  int current = -1, supported = -1;
  assert_int_equal(db_schema_version(db, &current, &supported), MLC_OK);
  assert_true(supported >= 1);
  assert_int_equal(current, supported);
  assert_int_equal(db_schema_version(db, NULL, NULL), MLC_OK);
  assert_int_equal(db_schema_version(NULL, &current, &supported), MLC_EINVAL);
  assert_int_equal(current, 0);
  assert_int_equal(supported, 0);
}

static void test_leases_exclude_other_owners_until_expiry_or_release(void **state) {
  db_t *db = suite_db(state);
  bool got = false;
  assert_int_equal(db_lease_acquire(db, &got, SUITE_W1, SUITE_CPU, "job-a", 1), MLC_OK);
  assert_true(got);
  assert_int_equal(db_lease_acquire(db, &got, SUITE_W1, SUITE_CPU, "job-b", 60), MLC_OK);
  assert_false(got);
  /* Other tasks are independent. */
  assert_int_equal(db_lease_acquire(db, &got, SUITE_W1, SUITE_GPU, "job-b", 60), MLC_OK);
  assert_true(got);
  assert_int_equal(db_lease_acquire(db, &got, SUITE_W1, SUITE_CPU, "job-a", 1), MLC_OK);
  assert_true(got); /* renewed */
  /* Who holds it, and for how long: job-a, at most its 1 s ttl. */
  bool held = false;
  char owner[8];
  double left = -1;
  assert_int_equal(db_lease_holder(db, &held, owner, sizeof owner, &left, SUITE_W1, SUITE_CPU), MLC_OK);
  assert_true(held);
  assert_string_equal(owner, "job-a");
  assert_true(left > 0 && left <= 1.01);
  assert_int_equal(db_lease_holder(db, &held, owner, 4, &left, SUITE_W1, SUITE_CPU), MLC_OK);
  assert_string_equal(owner, "job"); /* cut to fit */
  assert_int_equal(db_lease_holder(db, &held, owner, sizeof owner, &left, SUITE_W2, SUITE_CPU), MLC_OK);
  assert_false(held);
  assert_string_equal(owner, "");
  assert_int_equal(db_lease_holder(db, NULL, owner, sizeof owner, &left, SUITE_W1, SUITE_CPU), MLC_EINVAL);
  suite_sleep_ms(1300);
  assert_int_equal(db_lease_holder(db, &held, owner, sizeof owner, &left, SUITE_W1, SUITE_CPU), MLC_OK);
  assert_false(held); /* expired: nobody's */
  /* job-a crashed without releasing: the lease expired. */
  assert_int_equal(db_lease_acquire(db, &got, SUITE_W1, SUITE_CPU, "job-b", 60), MLC_OK);
  assert_true(got);
  assert_int_equal(db_lease_acquire(db, &got, SUITE_W1, SUITE_CPU, "job-a", 60), MLC_OK);
  assert_false(got);
  /* Releasing someone else's lease does nothing. */
  assert_int_equal(db_lease_release(db, SUITE_W1, SUITE_CPU, "job-a"), MLC_OK);
  assert_int_equal(db_lease_acquire(db, &got, SUITE_W1, SUITE_CPU, "job-a", 60), MLC_OK);
  assert_false(got);
  assert_int_equal(db_lease_release(db, SUITE_W1, SUITE_CPU, "job-b"), MLC_OK);
  assert_int_equal(db_lease_acquire(db, &got, SUITE_W1, SUITE_CPU, "job-a", 60), MLC_OK);
  assert_true(got);
  assert_int_equal(db_lease_acquire(db, &got, SUITE_W1, SUITE_CPU, "job-a", 0), MLC_EINVAL);
}

static void test_prune_keeps_the_best_measurements_and_every_failure(void **state) {
  db_t *db = suite_db(state);
  suite_rec_t s[9];
  for (int i = 0; i < 5; i++) suite_ok(&s[i], SUITE_W1, SUITE_CPU, i, (5 - i) * 1e-3, SUITE_T0 + i);
  suite_fail(&s[5], SUITE_W1, SUITE_CPU, 5, MLC_ERROR_KIND_BUILD, SUITE_T0);
  suite_fail(&s[6], SUITE_W1, SUITE_CPU, 6, MLC_ERROR_KIND_TIMEOUT, SUITE_T0);
  suite_ok(&s[7], SUITE_W1, SUITE_GPU, 7, 1e-3, SUITE_T0);
  suite_ok(&s[8], SUITE_W1, SUITE_GPU, 8, 2e-3, SUITE_T0);
  suite_commit(db, s, 9);

  int64_t removed = -1;
  assert_int_equal(db_prune(db, &removed, 2), MLC_OK);
  assert_int_equal(removed, 3); /* the three slowest on the CPU */
  db_result_t *res = suite_records(db, NULL);
  assert_int_equal(res->nrecords, 6);
  const int kept[] = {3, 4, 5, 6, 7, 8};
  for (int i = 0; i < 6; i++) {
    const db_record_t *r = suite_find(res, s[kept[i]].r.id);
    assert_non_null(r);
    suite_assert_same(r, &s[kept[i]].r);
  }
  db_result_free(res);
  db_result_t *best = NULL;
  bool found = false;
  assert_int_equal(db_best(db, &best, &found, SUITE_W1, SUITE_CPU), MLC_OK);
  assert_true(found);
  assert_string_equal(best->records[0].id, s[4].r.id);
  db_result_free(best);
  db_stats_t st;
  assert_int_equal(db_stats(db, &st), MLC_OK);
  assert_int_equal(st.failures_by_kind[MLC_ERROR_KIND_BUILD], 1);
  assert_int_equal(st.failures_by_kind[MLC_ERROR_KIND_TIMEOUT], 1);
  db_stats_free(&st);

  assert_int_equal(db_prune(db, &removed, 2), MLC_OK);
  assert_int_equal(removed, 0); /* nothing more to do */
  suite_rec_t more;
  suite_ok(&more, SUITE_W1, SUITE_CPU, 20, 0.5e-3, SUITE_T0 + 99); /* commits still work */
  suite_commit(db, &more, 1);
  assert_int_equal(db_best(db, &best, &found, SUITE_W1, SUITE_CPU), MLC_OK);
  assert_true(found);
  assert_string_equal(best->records[0].id, more.r.id);
  db_result_free(best);
}

static void test_bad_arguments_are_refused_with_einval(void **state) {
  db_t *db = suite_db(state);
  suite_rec_t s;
  suite_ok(&s, SUITE_W1, SUITE_CPU, 1, 1e-3, SUITE_T0);
  s.r.id[0] = '\0'; /* not finished */
  assert_int_equal(db_commit_records(db, &s.r, 1), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "db_record_finish"));
  suite_ok(&s, SUITE_W1, SUITE_CPU, 1, 1e-3, SUITE_T0);
  s.runs[1] = NAN;
  assert_int_equal(db_commit_records(db, &s.r, 1), MLC_EINVAL);
  suite_rec(&s, SUITE_W1, SUITE_CPU, "d", 1, NULL, 0, MLC_ERROR_KIND_NONE, SUITE_T0);
  assert_int_equal(db_commit_records(db, &s.r, 1), MLC_EINVAL); /* a measurement needs times */
  suite_ok(&s, SUITE_W1, SUITE_CPU, 1, 1e-3, SUITE_T0);
  s.r.trace_json = "[\"split\", oops]";
  db_record_finish(&s.r);
  assert_int_equal(db_commit_records(db, &s.r, 1), MLC_EINVAL);
  db_result_t *res = NULL;
  assert_int_equal(db_top_k(db, &res, SUITE_W1, SUITE_CPU, -1), MLC_EINVAL);
  assert_null(res);
  assert_int_equal(db_prune(db, NULL, -1), MLC_EINVAL);
  res = suite_records(db, NULL);
  assert_int_equal(res->nrecords, 0); /* nothing refused was stored */
  db_result_free(res);
}

/* ---- runner ------------------------------------------------------------- */

#define DB_SUITE_TEST(fn) cmocka_unit_test_setup_teardown(fn, db_suite_setup, db_suite_teardown)

/* Runs the suite on databases made by fresh; returns the number of failures. */
static MLC_UNUSED int db_suite_run(const char *name, db_suite_fresh_fn fresh, void *payload) {
  db_suite_fresh_ = fresh;
  db_suite_payload_ = payload;
  const struct CMUnitTest tests[] = {
      DB_SUITE_TEST(test_every_field_round_trips_and_survives_reopening),
      DB_SUITE_TEST(test_content_id_ignores_created_at_but_not_content),
      DB_SUITE_TEST(test_median_is_the_statistic_and_failures_sort_last),
      DB_SUITE_TEST(test_top_k_orders_by_median_fastest_first),
      DB_SUITE_TEST(test_equal_medians_order_by_id),
      DB_SUITE_TEST(test_queries_never_return_another_targets_or_devices_records),
      DB_SUITE_TEST(test_failures_are_stored_but_never_best),
      DB_SUITE_TEST(test_retried_commits_make_no_duplicates),
      DB_SUITE_TEST(test_workloads_are_stored_once_and_listed),
      DB_SUITE_TEST(test_stats_count_records_failures_by_kind_and_target),
      DB_SUITE_TEST(test_record_filters_select_and_order_newest_first),
      DB_SUITE_TEST(test_a_record_is_found_by_its_full_id_and_by_nothing_else),
      DB_SUITE_TEST(test_schema_version_is_the_supported_one_after_init),
      DB_SUITE_TEST(test_leases_exclude_other_owners_until_expiry_or_release),
      DB_SUITE_TEST(test_prune_keeps_the_best_measurements_and_every_failure),
      DB_SUITE_TEST(test_bad_arguments_are_refused_with_einval),
  };
  return _cmocka_run_group_tests(name, tests, sizeof tests / sizeof tests[0], NULL, NULL);
}

/* ---- temporary directories ---------------------------------------------- */

static int suite_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

/* A new empty directory under $TMPDIR (or /tmp) into out. */
static MLC_UNUSED void db_suite_tmpdir(char *out, size_t cap, const char *tag) {
  const char *tmp = getenv("TMPDIR");
  snprintf(out, cap, "%s/mlc-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
  assert_non_null(mkdtemp(out));
}

/* rm -rf path. */
static MLC_UNUSED void db_suite_rmtree(const char *path) {
  nftw(path, suite_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- several processes at once ------------------------------------------ */

/* The work of one committing process: per_proc records in batches. */
static int suite_commit_worker(const char *uri, int proc, int per_proc, int batch) {
  db_t *db = NULL;
  if (db_open(&db, uri) != MLC_OK) return 1;
  suite_rec_t *s = calloc((size_t)batch, sizeof *s);
  db_record_t *recs = calloc((size_t)batch, sizeof *recs);
  int rc = s && recs ? 0 : 1;
  for (int done = 0; done < per_proc && rc == 0; done += batch) {
    for (int i = 0; i < batch; i++) {
      int n = done + i;
      /* Distinct content per record: the trace variant encodes (proc, n). */
      suite_ok(&s[i], SUITE_W1, SUITE_CPU, proc * 100000 + n, (1 + n % 97) * 1e-4, SUITE_T0 + n);
      recs[i] = s[i].r;
    }
    if (db_commit_records(db, recs, batch) != MLC_OK) {
      fprintf(stderr, "process %d: %s\n", proc, mlc_error_last());
      rc = 1;
    }
  }
  free(s);
  free(recs);
  db_close(db);
  return rc;
}

/* nprocs processes each commit per_proc records (batches of `batch`) into
 * uri at once: afterwards exactly nprocs * per_proc records, all readable,
 * none torn, none doubled. */
static MLC_UNUSED void db_suite_concurrent_commits(const char *uri, int nprocs, int per_proc,
                                                   int batch) {
  pid_t pids[64];
  assert_true(nprocs <= 64);
  fflush(NULL);
  for (int p = 0; p < nprocs; p++) {
    pids[p] = fork();
    assert_true(pids[p] >= 0);
    if (pids[p] == 0) _exit(suite_commit_worker(uri, p, per_proc, batch));
  }
  for (int p = 0; p < nprocs; p++) {
    int status = 0;
    assert_int_equal(waitpid(pids[p], &status, 0), pids[p]);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
  }
  db_t *db = NULL;
  assert_int_equal(db_open(&db, uri), MLC_OK);
  db_stats_t st;
  assert_int_equal(db_stats(db, &st), MLC_OK);
  assert_int_equal(st.nrecords, (int64_t)nprocs * per_proc);
  db_stats_free(&st);
  db_result_t *res = suite_records(db, NULL);
  assert_int_equal(res->nrecords, nprocs * per_proc);
  for (int i = 0; i < res->nrecords; i++) { /* every record intact */
    assert_int_equal(res->records[i].nrun_secs, 3);
    assert_string_equal(res->records[i].target, SUITE_CPU);
    assert_non_null(strstr(res->records[i].trace_json, "split"));
  }
  db_result_free(res);
  db_close(db);
}

#endif /* MLC_TESTS_DB_SUITE_H */
