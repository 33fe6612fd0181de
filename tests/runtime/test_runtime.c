/*
 * test_runtime.c - the runtime generated code calls: the thread-local last
 * error, and the thread pool (chunking for many extents and thread counts,
 * work stealing from a late thread and the static split without it,
 * error propagation, nested calls, concurrent callers, reuse across
 * thousands of calls, the pool after fork, sizing, and the cost of an empty
 * parallel_for).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/runtime.h"

enum { MAX_CHUNKS = 512, MAX_EXTENT = 4096 };

/* What one parallel_for saw: the chunks (in completion order), the thread of
 * each, and how often each iteration ran. */
typedef struct {
  atomic_int nchunks;
  int64_t begin[MAX_CHUNKS], end[MAX_CHUNKS];
  pthread_t thread[MAX_CHUNKS];
  atomic_int visits[MAX_EXTENT];
} record_t;

static int32_t record_task(int64_t begin, int64_t end, void *closure) {
  record_t *r = closure;
  int k = atomic_fetch_add(&r->nchunks, 1);
  if (k < MAX_CHUNKS) {
    r->begin[k] = begin;
    r->end[k] = end;
    r->thread[k] = pthread_self();
  }
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&r->visits[i], 1);
  return 0;
}

static int cmp_begin(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  return (*x > *y) - (*x < *y);
}

/* Checks a run with work stealing: every iteration once, at most `want`
 * threads, and every call inside one of `want` contiguous chunks whose sizes
 * differ by at most one (the larger first): a thread runs blocks of its own
 * chunk and the far ends of others'. */
static void check_record_stealing(record_t *r, int64_t extent, int want) {
  int calls = atomic_load(&r->nchunks);
  assert_true(calls >= want && calls <= MAX_CHUNKS);
  for (int64_t i = 0; i < extent; i++) assert_int_equal(atomic_load(&r->visits[i]), 1);
  int64_t base = extent / want, rem = extent % want;
  pthread_t seen[MAX_CHUNKS];
  int nseen = 0;
  for (int k = 0; k < calls; k++) {
    assert_true(r->begin[k] < r->end[k]);
    int64_t b = r->begin[k];
    int c = (int)(b < rem * (base + 1) ? b / (base + 1) : rem + (b - rem * (base + 1)) / base);
    int64_t cend = (c + 1) * base + (c + 1 < rem ? c + 1 : rem);
    assert_true(r->end[k] <= cend); /* does not cross into the next chunk */
    int j = 0;
    while (j < nseen && !pthread_equal(seen[j], r->thread[k])) j++;
    if (j == nseen) seen[nseen++] = r->thread[k];
  }
  assert_true(nseen <= want);
}

/* Checks a run without stealing: every iteration once, `want` contiguous
 * chunks whose sizes differ by at most one, each whole on a different
 * thread. */
static void check_record(record_t *r, int64_t extent, int want) {
  assert_int_equal(atomic_load(&r->nchunks), want);
  for (int64_t i = 0; i < extent; i++) assert_int_equal(atomic_load(&r->visits[i]), 1);
  int64_t pairs[MAX_CHUNKS][2];
  for (int k = 0; k < want; k++) {
    pairs[k][0] = r->begin[k];
    pairs[k][1] = r->end[k];
    for (int j = 0; j < k; j++) assert_false(pthread_equal(r->thread[j], r->thread[k]));
  }
  qsort(pairs, (size_t)want, sizeof pairs[0], cmp_begin);
  int64_t lo = extent, hi = 0;
  for (int k = 0; k < want; k++) {
    assert_int_equal(pairs[k][0], k == 0 ? 0 : pairs[k - 1][1]);
    int64_t len = pairs[k][1] - pairs[k][0];
    lo = len < lo ? len : lo;
    hi = len > hi ? len : hi;
  }
  assert_int_equal(pairs[want - 1][1], extent);
  assert_true(hi - lo <= 1);
  assert_true(lo >= 1);
}

static int min3(int a, int b, int64_t c) {
  int m = a < b ? a : b;
  return c < m ? (int)c : m;
}

static void test_parallel_for_splits_into_contiguous_balanced_chunks(void **state) {
  static const int64_t extents[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 100, 1000, 4096};
  static const int threads[] = {0, 1, 2, 3, 4, 5, 8, 16};
  mlc_rt_set_num_threads(5);
  for (size_t e = 0; e < sizeof extents / sizeof extents[0]; e++) {
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
      record_t *r = calloc(1, sizeof *r);
      int64_t extent = extents[e];
      assert_int_equal(mlc_rt_parallel_for(record_task, r, extent, threads[t]), 0);
      check_record_stealing(r, extent, min3(threads[t] <= 0 ? 5 : threads[t], 5, extent));
      memset(r, 0, sizeof *r);
      mlc_rt_set_work_stealing(0);
      assert_int_equal(mlc_rt_parallel_for(record_task, r, extent, threads[t]), 0);
      mlc_rt_set_work_stealing(1);
      check_record(r, extent, min3(threads[t] <= 0 ? 5 : threads[t], 5, extent));
      free(r);
    }
  }
  mlc_rt_set_num_threads(0);
}

/* Iterations of the second half take 2 ms each (a slowed core), those of the
 * first none. */
static int32_t slow_second_half(int64_t begin, int64_t end, void *closure) {
  record_task(begin, end, closure);
  for (int64_t i = begin; i < end; i++)
    if (i >= 32) nanosleep(&(struct timespec){0, 2000000}, NULL);
  return 0;
}

/* Which thread ran iteration i of the last slow_second_half run: the caller? */
static bool ran_on_caller(const record_t *r, int64_t i, pthread_t caller) {
  for (int k = 0; k < atomic_load(&r->nchunks); k++)
    if (r->begin[k] <= i && i < r->end[k]) return pthread_equal(r->thread[k], caller);
  fail_msg("iteration %lld was not recorded", (long long)i);
  return false;
}

static void test_a_thread_done_early_takes_over_part_of_a_late_chunk(void **state) {
  (void)state;
  mlc_rt_set_num_threads(2);
  record_t *r = calloc(1, sizeof *r);
  assert_int_equal(mlc_rt_parallel_for(slow_second_half, r, 64, 2), 0);
  check_record_stealing(r, 64, 2);
  /* The caller owns [0, 32), which costs nothing: it must have run some of
   * the worker's [32, 64) instead of waiting for 64 ms, and the worker the
   * front of its own chunk. */
  int on_caller = 0;
  for (int64_t i = 32; i < 64; i++) on_caller += ran_on_caller(r, i, pthread_self());
  assert_true(on_caller > 0 && on_caller < 32);
  assert_false(ran_on_caller(r, 32, pthread_self()));
  for (int64_t i = 0; i < 32; i++) assert_true(ran_on_caller(r, i, pthread_self()));
  /* Without stealing the worker runs its chunk alone, in one call. */
  memset(r, 0, sizeof *r);
  mlc_rt_set_work_stealing(0);
  assert_int_equal(mlc_rt_parallel_for(slow_second_half, r, 64, 2), 0);
  mlc_rt_set_work_stealing(1);
  check_record(r, 64, 2);
  for (int64_t i = 32; i < 64; i++) assert_false(ran_on_caller(r, i, pthread_self()));
  free(r);
  mlc_rt_set_num_threads(0);
}

static int32_t count_calls(int64_t begin, int64_t end, void *closure) {
  atomic_fetch_add((atomic_int *)closure, 1);
  return 0;
}

static void test_empty_or_negative_extent_runs_nothing(void **state) {
  atomic_int calls = 0;
  assert_int_equal(mlc_rt_parallel_for(count_calls, &calls, 0, 2), 0);
  assert_int_equal(mlc_rt_parallel_for(count_calls, &calls, -5, 2), 0);
  assert_int_equal(atomic_load(&calls), 0);
}

/* Fails in the chunk that holds iteration `bad` (code bad + 7). */
static int32_t fail_at(int64_t begin, int64_t end, void *closure) {
  int64_t bad = *(int64_t *)closure;
  if (bad >= begin && bad < end) {
    mlc_rt_error("iteration %lld failed", (long long)bad);
    return (int32_t)bad + 7;
  }
  return 0;
}

static void test_error_in_any_chunk_reaches_the_caller_with_its_message(void **state) {
  mlc_rt_set_num_threads(4);
  for (int64_t bad = 0; bad < 40; bad += 3) {
    mlc_rt_error("stale");
    int32_t rc = mlc_rt_parallel_for(fail_at, &bad, 40, 4);
    assert_int_equal(rc, bad + 7);
    char want[64];
    snprintf(want, sizeof want, "iteration %lld failed", (long long)bad);
    assert_string_equal(mlc_last_error(), want);
  }
  mlc_rt_set_num_threads(0);
}

/* Every chunk fails with its own code: the result is one of them, and the
 * message is the one that went with it. */
static int32_t fail_all(int64_t begin, int64_t end, void *closure) {
  return mlc_rt_error("chunk at %lld", (long long)begin) * (int32_t)(begin + 1);
}

static void test_first_failure_wins_and_keeps_its_message(void **state) {
  mlc_rt_set_num_threads(4);
  for (int i = 0; i < 200; i++) {
    int32_t rc = mlc_rt_parallel_for(fail_all, NULL, 8, 4);
    assert_true(rc == -1 || rc == -3 || rc == -5 || rc == -7);
    char want[64];
    snprintf(want, sizeof want, "chunk at %d", -rc - 1);
    assert_string_equal(mlc_last_error(), want);
  }
  mlc_rt_set_num_threads(0);
}

static void *set_error_thread(void *arg) {
  mlc_rt_error("from another thread");
  return (void *)(intptr_t)(strcmp(mlc_last_error(), "from another thread") == 0);
}

static void test_last_error_is_per_thread_and_formats(void **state) {
  mlc_rt_error("mine");
  pthread_t t;
  void *ok = NULL;
  assert_int_equal(pthread_create(&t, NULL, set_error_thread, NULL), 0);
  pthread_join(t, &ok);
  assert_true(ok != NULL);
  assert_string_equal(mlc_last_error(), "mine");
  assert_int_equal(mlc_rt_error("shape[%d] is %d, expected %d", 0, 512, 1024), -1);
  assert_string_equal(mlc_last_error(), "shape[0] is 512, expected 1024");
  char big[3000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  mlc_rt_error("%s", big);
  assert_true(strlen(mlc_last_error()) > 500 && strlen(mlc_last_error()) < sizeof big - 1);
}

typedef struct {
  atomic_int inner_calls;
  atomic_int inner_wrong; /* inner call not serial, or on another thread */
} nest_t;

typedef struct {
  nest_t *n;
  pthread_t outer;
} inner_arg_t;

static int32_t inner_task(int64_t begin, int64_t end, void *closure) {
  inner_arg_t *a = closure;
  atomic_fetch_add(&a->n->inner_calls, 1);
  if (begin != 0 || end != 10 || !pthread_equal(a->outer, pthread_self()))
    atomic_fetch_add(&a->n->inner_wrong, 1);
  return 0;
}

static int32_t outer_task(int64_t begin, int64_t end, void *closure) {
  inner_arg_t a = {closure, pthread_self()};
  for (int64_t i = begin; i < end; i++)
    if (mlc_rt_parallel_for(inner_task, &a, 10, 0) != 0) return 1;
  return 0;
}

static void test_nested_parallel_for_runs_serially_in_the_calling_thread(void **state) {
  mlc_rt_set_num_threads(3);
  nest_t n = {0};
  assert_int_equal(mlc_rt_parallel_for(outer_task, &n, 6, 3), 0);
  assert_int_equal(atomic_load(&n.inner_calls), 6);
  assert_int_equal(atomic_load(&n.inner_wrong), 0);
  mlc_rt_set_num_threads(0);
}

static int32_t sum_task(int64_t begin, int64_t end, void *closure) {
  int64_t s = 0;
  for (int64_t i = begin; i < end; i++) s += i;
  atomic_fetch_add((_Atomic int64_t *)closure, s);
  return 0;
}

static void test_pool_is_reused_across_thousands_of_calls(void **state) {
  mlc_rt_set_num_threads(2);
  for (int call = 0; call < 5000; call++) {
    _Atomic int64_t sum = 0;
    int64_t extent = 1 + call % 97;
    assert_int_equal(mlc_rt_parallel_for(sum_task, &sum, extent, 2), 0);
    assert_int_equal(atomic_load(&sum), extent * (extent - 1) / 2);
  }
  mlc_rt_set_num_threads(0);
}

static void *caller_thread(void *arg) {
  atomic_int *bad = arg;
  for (int call = 0; call < 500; call++) {
    _Atomic int64_t sum = 0;
    if (mlc_rt_parallel_for(sum_task, &sum, 1000, 2) != 0 || atomic_load(&sum) != 499500)
      atomic_fetch_add(bad, 1);
  }
  return NULL;
}

static void test_concurrent_top_level_callers_each_get_their_result(void **state) {
  mlc_rt_set_num_threads(2);
  atomic_int bad = 0;
  pthread_t t[3];
  for (int i = 0; i < 3; i++) assert_int_equal(pthread_create(&t[i], NULL, caller_thread, &bad), 0);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  assert_int_equal(atomic_load(&bad), 0);
  mlc_rt_set_num_threads(0);
}

/* In a forked child: the pool works and uses more than one thread. */
static int child_uses_pool(void) {
  record_t *r = calloc(1, sizeof *r);
  if (!r) return 2;
  int rc = mlc_rt_parallel_for(record_task, r, 100, 2);
  /* Each thread runs at least the front of its own chunk: stealing takes
   * from the back and never empties a chunk. */
  int n = atomic_load(&r->nchunks), other = 0;
  for (int k = 1; k < n && k < MAX_CHUNKS; k++) other += !pthread_equal(r->thread[0], r->thread[k]);
  int ok = rc == 0 && other > 0;
  for (int i = 0; i < 100; i++) ok = ok && atomic_load(&r->visits[i]) == 1;
  free(r);
  return ok ? 0 : 1;
}

static void test_forked_child_can_use_the_pool(void **state) {
  mlc_rt_set_num_threads(2);
  _Atomic int64_t sum = 0;
  assert_int_equal(mlc_rt_parallel_for(sum_task, &sum, 100, 2), 0); /* workers exist */
  for (int round = 0; round < 3; round++) {
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(child_uses_pool());
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
  }
  sum = 0;
  assert_int_equal(mlc_rt_parallel_for(sum_task, &sum, 100, 2), 0); /* parent still fine */
  assert_int_equal(atomic_load(&sum), 4950);
  mlc_rt_set_num_threads(0);
}

static void exit_42(int sig) { _exit(42); }

static int32_t fault_in_worker(int64_t begin, int64_t end, void *closure) {
  if (begin == 1) raise(SIGSEGV); /* chunk 1 runs on a worker */
  return 0;
}

/* A fault in a worker reaches the program's handler: workers block only
 * asynchronous signals. (Were SIGSEGV blocked there, the raise would stay
 * pending and the child would die of the alarm instead.) */
static void test_fault_in_a_worker_reaches_the_signal_handler(void **state) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    signal(SIGSEGV, exit_42);
    alarm(10);
    mlc_rt_set_num_threads(2);
    mlc_rt_parallel_for(fault_in_worker, NULL, 2, 2);
    _exit(sleep(20) == 0 ? 1 : 2);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 42);
}

static void test_size_comes_from_env_or_setter(void **state) {
  setenv("MLC_NUM_THREADS", "3", 1);
  mlc_rt_set_num_threads(0); /* back to the default, which reads the environment */
  assert_int_equal(mlc_rt_num_threads(), 3);
  unsetenv("MLC_NUM_THREADS");
  mlc_rt_set_num_threads(7);
  assert_int_equal(mlc_rt_num_threads(), 7);
  mlc_rt_set_num_threads(100000);
  assert_true(mlc_rt_num_threads() >= 7 && mlc_rt_num_threads() < 100000);
  mlc_rt_set_num_threads(0);
  assert_true(mlc_rt_num_threads() >= 1);
}

/* The float16 helpers (runtime/half.c) against the compiler's _Float16. */
float __gnu_h2f_ieee(uint16_t h);
uint16_t __gnu_f2h_ieee(float f);

static void test_half_conversions_are_exact_and_round_to_nearest_even(void **state) {
#ifdef __FLT16_MANT_DIG__
  for (uint32_t h = 0; h < 0x10000; h++) {
    _Float16 x;
    uint16_t bits = (uint16_t)h;
    memcpy(&x, &bits, sizeof x);
    float want = (float)x, got = __gnu_h2f_ieee(bits);
    if (want != want) { /* NaN stays NaN and comes back a NaN */
      assert_true(got != got);
      assert_int_equal(__gnu_f2h_ieee(got) & 0x7c00, 0x7c00);
      continue;
    }
    assert_memory_equal(&got, &want, sizeof got);
    assert_int_equal(__gnu_f2h_ieee(got), bits);
  }
  uint32_t seed = 12345;
  for (int i = 0; i < 200000; i++) {
    seed = seed * 1664525u + 1013904223u;
    /* exponents 2^-31 .. 2^18: zero, subnormal, normal and overflowing halves */
    uint32_t fbits = ((seed >> 9) & 0x7fffffu) | ((96u + (seed >> 1) % 50u) << 23) | ((seed & 1) << 31);
    float f;
    memcpy(&f, &fbits, sizeof f);
    _Float16 want = (_Float16)f;
    uint16_t want_bits;
    memcpy(&want_bits, &want, sizeof want_bits);
    assert_int_equal(__gnu_f2h_ieee(f), want_bits);
  }
#else
  assert_true(__gnu_h2f_ieee(0x3c00) == 1.0f);
  assert_int_equal(__gnu_f2h_ieee(65520.0f), 0x7c00);
#endif
}

static int32_t empty_task(int64_t begin, int64_t end, void *closure) { return 0; }

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The hand-off must cost microseconds: a GMM-512 call is about 1 ms. The
 * bound is loose (the test machine is shared); the figure is printed. */
static void test_empty_parallel_for_costs_microseconds(void **state) {
  mlc_rt_set_num_threads(2);
  enum { N = 2000 };
  static double t[N];
  for (int i = 0; i < 50; i++) mlc_rt_parallel_for(empty_task, NULL, 2, 2);
  for (int i = 0; i < N; i++) {
    double t0 = now_s();
    mlc_rt_parallel_for(empty_task, NULL, 2, 2);
    t[i] = now_s() - t0;
  }
  qsort(t, N, sizeof t[0], cmp_double);
  printf("empty parallel_for, 2 threads: median %.2f us, p90 %.2f us\n", t[N / 2] * 1e6,
         t[N * 9 / 10] * 1e6);
  assert_true(t[N / 2] < 200e-6);
  mlc_rt_set_num_threads(0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parallel_for_splits_into_contiguous_balanced_chunks),
      cmocka_unit_test(test_a_thread_done_early_takes_over_part_of_a_late_chunk),
      cmocka_unit_test(test_empty_or_negative_extent_runs_nothing),
      cmocka_unit_test(test_error_in_any_chunk_reaches_the_caller_with_its_message),
      cmocka_unit_test(test_first_failure_wins_and_keeps_its_message),
      cmocka_unit_test(test_last_error_is_per_thread_and_formats),
      cmocka_unit_test(test_nested_parallel_for_runs_serially_in_the_calling_thread),
      cmocka_unit_test(test_pool_is_reused_across_thousands_of_calls),
      cmocka_unit_test(test_concurrent_top_level_callers_each_get_their_result),
      cmocka_unit_test(test_forked_child_can_use_the_pool),
      cmocka_unit_test(test_fault_in_a_worker_reaches_the_signal_handler),
      cmocka_unit_test(test_size_comes_from_env_or_setter),
      cmocka_unit_test(test_half_conversions_are_exact_and_round_to_nearest_even),
      cmocka_unit_test(test_empty_parallel_for_costs_microseconds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
