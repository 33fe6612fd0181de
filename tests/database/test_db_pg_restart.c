/*
 * test_db_pg_restart.c - a PostgreSQL restart in the middle of a run: a
 * writer process commits batches in a loop and reports each acknowledged
 * batch over a pipe; the test restarts the server (pg_ctl restart -m fast,
 * which terminates every connection) after some batches and lets the writer
 * go on after it. The writer must reconnect by itself, every commit must
 * succeed, and afterwards the records must be exactly the acknowledged ones:
 * nothing lost, nothing doubled.
 *
 * Uses a throwaway cluster (tests/database/pg_cluster.h); skips when the
 * PostgreSQL server binaries are not installed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "database/database.h"
#include "pg_cluster.h"

#include <poll.h>

enum { BATCH = 16, BEFORE = 8, AFTER = 8, MAX_BATCHES = 2000 };
static const uint64_t KEY = 0x5eed5eed00000001ull;
static const char *const TARGET = "llvm -mcpu=znver4";

static pg_cluster_t cluster;
static bool have_cluster;

static int setup(void **state) {
  (void)state;
  int started = pg_cluster_start(&cluster);
  if (started < 0) return -1;
  have_cluster = started == 1;
  if (!have_cluster) return 0;
  db_t *db;
  if (db_open(&db, cluster.conninfo) != MLC_OK || db_init(db) != MLC_OK ||
      db_commit_workload(db, KEY, "restart", "# a workload") != MLC_OK) {
    fprintf(stderr, "setup: %s\n", mlc_error_last());
    db_close(db);
    return -1;
  }
  db_close(db);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  pg_cluster_stop(&cluster);
  return 0;
}

/* Record i of batch b: one deterministic content per (b, i). */
static void make_record(db_record_t *r, double *secs, int b, int i) {
  memset(r, 0, sizeof *r);
  secs[0] = 1e-3 * (1 + b) + 1e-6 * i;
  secs[1] = secs[0] * 1.01;
  r->workload_key = KEY;
  r->target = TARGET;
  r->device_key = "cpu-test";
  r->device_json = "{\"cores\":2}";
  r->trace_json = "[[],[]]";
  r->run_secs = secs;
  r->nrun_secs = 2;
  r->error_msg = "";
  r->compiler_version = MLC_VERSION;
  r->worker_id = "restart-writer";
  r->created_at_us = 1700000000000000LL + b * 1000 + i;
  db_record_finish(r);
}

static int reconnect_warnings;
static void count_reconnects(mlc_log_level_t level, const char *line, void *payload) {
  (void)payload;
  if (level == MLC_LOG_WARN && strstr(line, "reconnecting")) reconnect_warnings++;
}

/* The writer: commits batch after batch, writing one byte per acknowledged
 * batch to ack_fd, until stop_fd becomes readable. Exit status 0 when every
 * commit succeeded and at least one reconnect happened, 1 on a failed
 * commit, 2 when the restart never reached it. */
static void writer_main(int ack_fd, int stop_fd) {
  mlc_log_set_level(MLC_LOG_WARN); /* the reconnect warning is what we count */
  mlc_log_set_sink(count_reconnects, NULL);
  db_t *db;
  if (db_open(&db, cluster.conninfo) != MLC_OK) _exit(1);
  db_record_t recs[BATCH];
  double secs[BATCH][2];
  for (int b = 0; b < MAX_BATCHES; b++) {
    for (int i = 0; i < BATCH; i++) make_record(&recs[i], secs[i], b, i);
    if (db_commit_records(db, recs, BATCH) != MLC_OK) {
      fprintf(stderr, "writer: batch %d: %s\n", b, mlc_error_last());
      _exit(1);
    }
    if (write(ack_fd, "b", 1) != 1) _exit(1);
    struct pollfd p = {stop_fd, POLLIN, 0};
    if (poll(&p, 1, 0) == 1) break;
  }
  db_close(db);
  _exit(reconnect_warnings > 0 ? 0 : 2);
}

/* Waits for n more acknowledgements; returns how many arrived (fewer when
 * the writer died). */
static int read_acks(int fd, int n) {
  char buf[64];
  int got = 0;
  while (got < n) {
    ssize_t k = read(fd, buf, (size_t)(n - got) < sizeof buf ? (size_t)(n - got) : sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    got += (int)k;
  }
  return got;
}

static void test_restart_mid_run_loses_and_doubles_nothing(void **state) {
  (void)state;
  if (!have_cluster) skip();
  int ack[2], stop[2];
  assert_int_equal(pipe(ack), 0);
  assert_int_equal(pipe(stop), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(ack[0]);
    close(stop[1]);
    writer_main(ack[1], stop[0]);
  }
  close(ack[1]);
  close(stop[0]);

  int acked = read_acks(ack[0], BEFORE);
  assert_int_equal(acked, BEFORE);
  assert_int_equal(pg_cluster_restart(&cluster), 0);
  acked += read_acks(ack[0], AFTER); /* the writer got through the restart */
  assert_int_equal(acked, BEFORE + AFTER);
  assert_int_equal(write(stop[1], "s", 1), 1);
  acked += read_acks(ack[0], MAX_BATCHES); /* the batch in flight, then EOF */
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  close(ack[0]);
  close(stop[1]);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0); /* every commit succeeded, after a reconnect */

  /* Exactly the acknowledged batches: count and every id. */
  db_t *db;
  assert_int_equal(db_open(&db, cluster.conninfo), MLC_OK);
  db_stats_t st;
  assert_int_equal(db_stats(db, &st), MLC_OK);
  assert_int_equal(st.nrecords, (int64_t)acked * BATCH);
  db_stats_free(&st);
  db_result_t *res;
  db_filter_t f = {.workload_key = KEY, .target = TARGET, .trace_hash = 0};
  assert_int_equal(db_records(db, &res, &f), MLC_OK);
  assert_int_equal(res->nrecords, acked * BATCH);
  for (int b = 0; b < acked; b++)
    for (int i = 0; i < BATCH; i++) {
      db_record_t want;
      double secs[2];
      make_record(&want, secs, b, i);
      /* newest first: batch b, record i sits at (acked - 1 - b) * BATCH + BATCH - 1 - i */
      const db_record_t *got = &res->records[(acked - 1 - b) * BATCH + (BATCH - 1 - i)];
      assert_string_equal(got->id, want.id);
      assert_int_equal(got->created_at_us, want.created_at_us);
    }
  db_result_free(res);
  db_close(db);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_restart_mid_run_loses_and_doubles_nothing),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
