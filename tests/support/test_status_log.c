/*
 * test_status_log.c - status messages, the per-thread last error (set, prefix,
 * clear, truncation, isolation between threads) and levelled logging through
 * a sink.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/support.h"

static int clear_error(void **state) {
  (void)state;
  mlc_error_clear();
  return 0;
}

/* ---- status codes and the last error -------------------------------------- */

static void test_status_str_names_every_code_from_the_map(void **state) {
  (void)state;
#define CHECK_(name, value, msg) assert_string_equal(mlc_status_str(MLC_##name), msg);
  MLC_STATUS_MAP(CHECK_)
#undef CHECK_
  assert_string_equal(mlc_status_str(MLC_ENOMEM), "out of memory");
  assert_string_equal(mlc_status_str(-1000), "unknown status");
  assert_string_equal(mlc_status_str(5), "unknown status");
}

static void test_error_set_returns_code_and_keeps_detail(void **state) {
  (void)state;
  assert_string_equal(mlc_error_last(), "");
  assert_int_equal(mlc_error_last_code(), MLC_OK);
  int rc = mlc_error_set(MLC_EINVAL, "bad %s %d", "thing", 7);
  assert_int_equal(rc, MLC_EINVAL);
  assert_int_equal(mlc_error_last_code(), MLC_EINVAL);
  assert_string_equal(mlc_error_last(), "bad thing 7");
  mlc_error_clear();
  assert_string_equal(mlc_error_last(), "");
  assert_int_equal(mlc_error_last_code(), MLC_OK);
}

static void test_error_set_may_quote_the_previous_detail(void **state) {
  (void)state;
  mlc_error_set(MLC_EPARSE, "line 3: unexpected ')'");
  mlc_error_set(MLC_EIO, "while loading f.py: %s", mlc_error_last());
  assert_string_equal(mlc_error_last(), "while loading f.py: line 3: unexpected ')'");
  assert_int_equal(mlc_error_last_code(), MLC_EIO);
}

static void test_error_prefix_adds_context_and_keeps_code(void **state) {
  (void)state;
  mlc_error_set(MLC_ESCHEDULE, "loop i is not a single child");
  mlc_error_prefix("split(%s)", "i");
  mlc_error_prefix("trace step %d", 4);
  assert_string_equal(mlc_error_last(), "trace step 4: split(i): loop i is not a single child");
  assert_int_equal(mlc_error_last_code(), MLC_ESCHEDULE);
  mlc_error_clear();
  mlc_error_prefix("only context");
  assert_string_equal(mlc_error_last(), "only context");
}

static void test_long_details_are_truncated_not_overflowed(void **state) {
  (void)state;
  char big[5000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  mlc_error_set(MLC_EINVAL, "%s", big);
  size_t len = strlen(mlc_error_last());
  assert_true(len > 500 && len < sizeof big - 1);
  mlc_error_prefix("%s", big);
  assert_int_equal(strlen(mlc_error_last()), len);
}

typedef struct {
  char seen_at_start[64];
  char seen_at_end[64];
  int code_at_end;
  pthread_barrier_t *barrier;
} thread_probe_t;

static void *thread_sets_its_own_error(void *arg) {
  thread_probe_t *p = arg;
  snprintf(p->seen_at_start, sizeof p->seen_at_start, "%s", mlc_error_last());
  mlc_error_set(MLC_ETIMEOUT, "worker timed out");
  pthread_barrier_wait(p->barrier); /* main sets its error meanwhile */
  pthread_barrier_wait(p->barrier);
  snprintf(p->seen_at_end, sizeof p->seen_at_end, "%s", mlc_error_last());
  p->code_at_end = mlc_error_last_code();
  return NULL;
}

static void test_last_error_is_per_thread(void **state) {
  (void)state;
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, 2);
  thread_probe_t probe = {.barrier = &barrier};
  mlc_error_set(MLC_EIO, "main thread error");
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, thread_sets_its_own_error, &probe), 0);
  pthread_barrier_wait(&barrier);
  mlc_error_set(MLC_EPARSE, "main changed its error");
  pthread_barrier_wait(&barrier);
  pthread_join(th, NULL);
  pthread_barrier_destroy(&barrier);
  assert_string_equal(probe.seen_at_start, "");
  assert_string_equal(probe.seen_at_end, "worker timed out");
  assert_int_equal(probe.code_at_end, MLC_ETIMEOUT);
  assert_string_equal(mlc_error_last(), "main changed its error");
  assert_int_equal(mlc_error_last_code(), MLC_EPARSE);
}

static void test_panic_prints_location_and_aborts(void **state) {
  (void)state;
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    mlc_log_set_program("mlc-panic");
    MLC_ASSERT(1 + 1 == 3);
    _exit(0); /* not reached */
  }
  close(fds[1]);
  char text[512] = {0};
  size_t used = 0;
  for (ssize_t n; (n = read(fds[0], text + used, sizeof text - 1 - used)) > 0;) used += (size_t)n;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  assert_true(WIFSIGNALED(status));
  assert_int_equal(WTERMSIG(status), SIGABRT);
  assert_int_equal(strncmp(text, "mlc-panic: internal error: ", 27), 0);
  assert_non_null(strstr(text, "test_status_log.c:"));
  assert_non_null(strstr(text, "assertion failed: 1 + 1 == 3\n"));
}

/* ---- logging --------------------------------------------------------------- */

typedef struct {
  int n;
  char lines[8][256];
  mlc_log_level_t levels[8];
} captured_t;

static void capture_sink(mlc_log_level_t level, const char *line, void *payload) {
  captured_t *c = payload;
  if (c->n < 8) {
    snprintf(c->lines[c->n], sizeof c->lines[0], "%s", line);
    c->levels[c->n] = level;
  }
  c->n++;
}

static int restore_log(void **state) {
  (void)state;
  mlc_log_set_sink(NULL, NULL);
  mlc_log_set_level(MLC_LOG_WARN);
  mlc_log_set_program(NULL);
  return 0;
}

static void test_log_lines_name_program_and_level(void **state) {
  (void)state;
  captured_t cap = {0};
  mlc_log_set_program("mlc-test");
  mlc_log_set_level(MLC_LOG_DEBUG);
  mlc_log_set_sink(capture_sink, &cap);
  MLC_DEBUG("d %d", 1);
  MLC_INFO("i");
  MLC_WARN("w %s", "x");
  MLC_ERROR("e");
  assert_int_equal(cap.n, 4);
  assert_string_equal(cap.lines[0], "mlc-test: debug: d 1");
  assert_string_equal(cap.lines[1], "mlc-test: info: i");
  assert_string_equal(cap.lines[2], "mlc-test: warning: w x");
  assert_string_equal(cap.lines[3], "mlc-test: error: e");
  assert_int_equal(cap.levels[2], MLC_LOG_WARN);
  assert_string_equal(mlc_log_program(), "mlc-test");
}

static void test_log_level_filters_lower_levels(void **state) {
  (void)state;
  captured_t cap = {0};
  mlc_log_set_sink(capture_sink, &cap);
  mlc_log_set_level(MLC_LOG_WARN);
  assert_int_equal(mlc_log_level(), MLC_LOG_WARN);
  MLC_DEBUG("no");
  MLC_INFO("no");
  MLC_WARN("yes");
  MLC_ERROR("yes");
  assert_int_equal(cap.n, 2);
  mlc_log_set_level(MLC_LOG_OFF);
  MLC_ERROR("no");
  mlc_log(MLC_LOG_OFF, "never a line");
  assert_int_equal(cap.n, 2);
}

typedef struct {
  size_t len;
  char head[16], tail[4];
} long_line_t;

static void long_line_sink(mlc_log_level_t level, const char *line, void *payload) {
  long_line_t *l = payload;
  l->len = strlen(line);
  snprintf(l->head, sizeof l->head, "%s", line);
  snprintf(l->tail, sizeof l->tail, "%s", line + (l->len >= 3 ? l->len - 3 : 0));
}

static void test_log_long_messages_are_cut_with_an_ellipsis(void **state) {
  (void)state;
  long_line_t got = {0};
  mlc_log_set_level(MLC_LOG_INFO);
  mlc_log_set_sink(long_line_sink, &got);
  char big[6000];
  memset(big, 'y', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  MLC_INFO("%s", big);
  assert_string_equal(got.head, "mlc: info: yyyy");
  assert_true(got.len > 1000 && got.len < sizeof big);
  assert_string_equal(got.tail, "...");
  MLC_INFO("short");
  assert_string_equal(got.tail, "ort");
}

static void test_log_without_sink_writes_one_line_to_stderr(void **state) {
  (void)state;
  char path[] = "/tmp/mlc-test-log-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  dup2(fd, STDERR_FILENO);
  mlc_log_set_sink(NULL, NULL);
  mlc_log_set_level(MLC_LOG_ERROR);
  mlc_log_set_program("mlc-x");
  MLC_WARN("filtered");
  MLC_ERROR("to stderr %d", 5);
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  char text[256] = {0};
  ssize_t n = pread(fd, text, sizeof text - 1, 0);
  close(fd);
  unlink(path);
  assert_true(n > 0);
  assert_string_equal(text, "mlc-x: error: to stderr 5\n");
}

/* Runs first: nothing has set the level yet, so it comes from MLC_LOG. */
static void test_log_level_starts_from_the_environment(void **state) {
  (void)state;
  const char *env = getenv("MLC_LOG");
  mlc_log_level_t want = MLC_LOG_INFO;
  if (env && strcmp(env, "debug") == 0) want = MLC_LOG_DEBUG;
  if (env && strcmp(env, "warn") == 0) want = MLC_LOG_WARN;
  if (env && strcmp(env, "error") == 0) want = MLC_LOG_ERROR;
  if (env && strcmp(env, "off") == 0) want = MLC_LOG_OFF;
  assert_int_equal(mlc_log_level(), want);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_log_level_starts_from_the_environment),
      cmocka_unit_test_teardown(test_status_str_names_every_code_from_the_map, clear_error),
      cmocka_unit_test_teardown(test_error_set_returns_code_and_keeps_detail, clear_error),
      cmocka_unit_test_teardown(test_error_set_may_quote_the_previous_detail, clear_error),
      cmocka_unit_test_teardown(test_error_prefix_adds_context_and_keeps_code, clear_error),
      cmocka_unit_test_teardown(test_long_details_are_truncated_not_overflowed, clear_error),
      cmocka_unit_test_teardown(test_last_error_is_per_thread, clear_error),
      cmocka_unit_test(test_panic_prints_location_and_aborts),
      cmocka_unit_test_teardown(test_log_lines_name_program_and_level, restore_log),
      cmocka_unit_test_teardown(test_log_level_filters_lower_levels, restore_log),
      cmocka_unit_test_teardown(test_log_long_messages_are_cut_with_an_ellipsis, restore_log),
      cmocka_unit_test_teardown(test_log_without_sink_writes_one_line_to_stderr, restore_log),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
