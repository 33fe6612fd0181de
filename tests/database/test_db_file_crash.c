/*
 * test_db_file_crash.c - crash safety of the file backend: a writer dies in
 * the middle of committing batches, and a new process then loads the
 * database. Every batch the writer saw acknowledged (it reports each batch's
 * ids over a pipe only after db_commit_records returned) must be there; a
 * torn last line is skipped, then cut by the next writer; the file is whole
 * after that.
 *
 * Two ways to die: SIGKILL at an arbitrary moment (where it lands in a batch
 * is luck), and a file size limit (RLIMIT_FSIZE) that cuts a batch's
 * write(2) short at a chosen byte and kills the writer with SIGXFSZ when it
 * writes on, which makes the torn tail certain.
 */
#include "db_suite.h"

#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

enum { BATCH = 40, ROUNDS = 4, SPLITS = 150 };

/* Records of a few KB (a real trace's size). */
static void crash_record(suite_rec_t *s, char *trace, size_t cap, int round, int n) {
  suite_ok(s, SUITE_W1, SUITE_CPU, round * 1000000 + n, (1 + n % 50) * 1e-4, SUITE_T0 + n);
  size_t len = 0;
  len += (size_t)snprintf(trace, cap, "[[\"round\",[%d,%d]]", round, n);
  for (int i = 0; i < SPLITS && len + 40 < cap; i++)
    len += (size_t)snprintf(trace + len, cap - len, ",[\"split\",[%d,%d]]", i, n);
  snprintf(trace + len, cap - len, "]");
  s->r.trace_json = trace;
  db_record_finish(&s->r);
}

/* The child: commits batches forever, writing each acknowledged batch's ids
 * ("id\n" x BATCH, under PIPE_BUF so one atomic write) to fd. With a size
 * limit, writing records.jsonl past it kills the child mid-batch. */
static MLC_NORETURN void writer(const char *uri, int fd, int round, off_t size_limit) {
  db_t *db = NULL;
  if (db_open(&db, uri) != MLC_OK) _exit(2);
  if (size_limit > 0) {
    struct rlimit no_core = {0, 0}, fsize = {(rlim_t)size_limit, (rlim_t)size_limit};
    if (setrlimit(RLIMIT_CORE, &no_core) != 0 || setrlimit(RLIMIT_FSIZE, &fsize) != 0) _exit(5);
  }
  static suite_rec_t s[BATCH];
  static char traces[BATCH][SPLITS * 24];
  db_record_t recs[BATCH];
  for (int b = 0;; b++) {
    char ids[BATCH * 17 + 1];
    for (int i = 0; i < BATCH; i++) {
      crash_record(&s[i], traces[i], sizeof traces[i], round, b * BATCH + i);
      recs[i] = s[i].r;
      memcpy(ids + i * 17, s[i].r.id, 16);
      ids[i * 17 + 16] = '\n';
    }
    if (db_commit_records(db, recs, BATCH) != MLC_OK) _exit(3);
    if (write(fd, ids, BATCH * 17) != BATCH * 17) _exit(4);
  }
}

typedef struct {
  char (*ids)[17];
  int n, cap;
} acked_t;

/* Reads whole id lines from fd into acked until `want` ids (or EOF when
 * want < 0). */
static void read_acks(int fd, acked_t *acked, int want, char *partial, size_t *npartial) {
  while (want < 0 || acked->n < want) {
    char buf[4096];
    ssize_t got = read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return;
    for (ssize_t i = 0; i < got; i++) {
      if (buf[i] != '\n') {
        partial[(*npartial)++ % 17] = buf[i];
        continue;
      }
      if (*npartial == 16) {
        if (acked->n == acked->cap) {
          acked->cap = acked->cap ? acked->cap * 2 : 1024;
          acked->ids = realloc(acked->ids, (size_t)acked->cap * sizeof *acked->ids);
          assert_non_null(acked->ids);
        }
        memcpy(acked->ids[acked->n], partial, 16);
        acked->ids[acked->n++][16] = '\0';
      }
      *npartial = 0;
    }
  }
}

/* One round: start a writer and collect every acknowledgement it sends
 * until it dies. Odd rounds die by SIGKILL a moment after `batches` acks;
 * even rounds by the size limit, a few batches past the current size. */
static void kill_a_writer(const char *uri, const char *file, int round, int batches,
                          acked_t *acked) {
  struct stat st;
  assert_int_equal(stat(file, &st) == 0 || round == 0, 1);
  bool by_limit = round % 2 == 0;
  off_t limit = by_limit ? (round ? st.st_size : 0) + (off_t)batches * BATCH * 3000 + 1234 : 0;
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    writer(uri, fds[1], round, limit);
  }
  close(fds[1]);
  char partial[17];
  size_t npartial = 0;
  if (!by_limit) {
    read_acks(fds[0], acked, acked->n + batches * BATCH, partial, &npartial);
    struct timespec ts = {0, (300 + 900L * round) * 1000L}; /* somewhere in a batch */
    nanosleep(&ts, NULL);
    assert_int_equal(kill(pid, SIGKILL), 0);
  }
  read_acks(fds[0], acked, -1, partial, &npartial); /* all it sent before dying */
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFSIGNALED(status));
  assert_int_equal(WTERMSIG(status), by_limit ? SIGXFSZ : SIGKILL);
  close(fds[0]);
}

static int cmp_str(const void *a, const void *b) { return strcmp(a, b); }

static void test_every_acknowledged_record_survives_kill_9(void **state) {
  (void)state;
  char dir[512], uri[600], file[600];
  db_suite_tmpdir(dir, sizeof dir, "dbcrash");
  snprintf(uri, sizeof uri, "file:%s/db", dir);
  snprintf(file, sizeof file, "%s/db/records.jsonl", dir);
  acked_t acked = {0};
  int torn = 0;
  for (int round = 0; round < ROUNDS; round++) {
    kill_a_writer(uri, file, round, 3 + 2 * round, &acked);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(mlc_read_file(&text, &len, file), MLC_OK);
    torn += len > 0 && text[len - 1] != '\n';
    mlc_free(text);

    db_t *db = NULL;
    assert_int_equal(db_open(&db, uri), MLC_OK);
    db_result_t *res = suite_records(db, NULL);
    assert_true(res->nrecords >= acked.n);
    char(*have)[17] = malloc((size_t)res->nrecords * sizeof *have);
    assert_non_null(have);
    for (int i = 0; i < res->nrecords; i++) memcpy(have[i], res->records[i].id, 17);
    qsort(have, (size_t)res->nrecords, sizeof *have, cmp_str);
    for (int i = 0; i < acked.n; i++) {
      if (!bsearch(acked.ids[i], have, (size_t)res->nrecords, sizeof *have, cmp_str))
        fail_msg("acknowledged record %s (round %d) is missing", acked.ids[i], round);
    }
    free(have);
    db_result_free(res);
    db_close(db);
  }
  printf("# %d acknowledged records over %d deaths; %d left a torn tail\n", acked.n, ROUNDS, torn);
  assert_true(torn >= ROUNDS / 2); /* every size-limit death tears its batch */

  /* A writer after the crashes leaves a whole file: every line parses. */
  db_t *db = NULL;
  assert_int_equal(db_open(&db, uri), MLC_OK);
  suite_rec_t last;
  suite_ok(&last, SUITE_W2, SUITE_GPU, 1, 1e-3, SUITE_T0);
  suite_commit(db, &last, 1);
  db_close(db);
  char *text = NULL;
  assert_int_equal(mlc_read_file(&text, NULL, file), MLC_OK);
  for (char *line = text, *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
    *nl = '\0';
    json_t *j = mlc_json_loads(line, "records.jsonl");
    assert_non_null(j);
    json_decref(j);
  }
  mlc_free(text);
  free(acked.ids);
  db_suite_rmtree(dir);
}

int main(void) {
  mlc_log_set_level(MLC_LOG_ERROR); /* the torn-tail warnings are expected here */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_acknowledged_record_survives_kill_9),
  };
  return cmocka_run_group_tests_name("file database crash safety", tests, NULL, NULL);
}
