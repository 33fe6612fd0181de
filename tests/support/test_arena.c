/*
 * test_arena.c - allocation entry point and arenas: alignment, zeroing, big
 * requests, the helpers, and failure (injected) as NULL + sticky flag or as a
 * longjmp to the out-of-memory handler. Leaks are caught by the sanitizer
 * build (LeakSanitizer runs at exit).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "support/support.h"

static int reset_injection(void **state) {
  (void)state;
  mlc_alloc_fail_after(-1);
  mlc_error_clear();
  return 0;
}

static bool all_zero(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return false;
  return true;
}

/* ---- the allocation entry point ---------------------------------------- */

static void test_alloc_count_counts_every_allocation(void **state) {
  (void)state;
  long before = mlc_alloc_count();
  void *a = mlc_malloc(10);
  void *b = mlc_calloc(3, 4);
  a = mlc_realloc(a, 100);
  long after = mlc_alloc_count();
  assert_non_null(a);
  assert_non_null(b);
  assert_int_equal(after - before, 3);
  mlc_free(a);
  mlc_free(b);
  assert_int_equal(mlc_alloc_count(), after); /* frees are not allocations */
}

static void test_fail_after_lets_n_succeed_then_fails_until_disabled(void **state) {
  (void)state;
  mlc_alloc_fail_after(2);
  void *a = mlc_malloc(8), *b = mlc_malloc(8), *c = mlc_malloc(8), *d = mlc_strdup("x");
  assert_non_null(a);
  assert_non_null(b);
  assert_null(c);
  assert_null(d);
  mlc_alloc_fail_after(-1);
  c = mlc_malloc(8);
  assert_non_null(c);
  mlc_free(a);
  mlc_free(b);
  mlc_free(c);
}

static void test_failed_realloc_keeps_the_old_block(void **state) {
  (void)state;
  char *p = mlc_strdup("keep me");
  assert_non_null(p);
  mlc_alloc_fail_after(0);
  assert_null(mlc_realloc(p, 1 << 20));
  mlc_alloc_fail_after(-1);
  assert_string_equal(p, "keep me");
  mlc_free(p);
}

static void test_calloc_zeroes_and_rejects_overflow(void **state) {
  (void)state;
  unsigned char *p = mlc_calloc(100, 3);
  assert_non_null(p);
  assert_true(all_zero(p, 300));
  mlc_free(p);
  long before = mlc_alloc_count();
  assert_null(mlc_calloc(SIZE_MAX / 2, 3));
  assert_int_equal(mlc_alloc_count(), before); /* refused before allocating */
}

static void test_zero_sizes_follow_the_documented_contract(void **state) {
  (void)state;
  void *p = mlc_malloc(0);
  assert_non_null(p); /* NULL from mlc_malloc means failure only */
  assert_null(mlc_realloc(p, 0)); /* frees */
  assert_null(mlc_strdup(NULL));
}

/* ---- arenas -------------------------------------------------------------- */

static void test_arena_memory_is_16_byte_aligned_and_zeroed(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  assert_non_null(a);
  for (size_t size = 0; size < 300; size++) {
    unsigned char *p = mlc_arena_alloc(a, size);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 16, 0);
    assert_true(all_zero(p, size));
    memset(p, 0xAB, size); /* dirty it: the next block must still be zero */
  }
  assert_false(mlc_arena_failed(a));
  mlc_arena_free(a);
}

static void test_arena_counts_bytes_handed_out(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  assert_int_equal(mlc_arena_bytes(a), 0);
  mlc_arena_alloc(a, 10);
  mlc_arena_alloc(a, 7);
  assert_int_equal(mlc_arena_bytes(a), 17);
  mlc_arena_free(a);
}

static void test_arena_big_requests_work_between_small_ones(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  char *small1 = mlc_arena_strdup(a, "before");
  size_t big_size = 3u << 20; /* far beyond one chunk */
  unsigned char *big = mlc_arena_alloc(a, big_size);
  char *small2 = mlc_arena_strdup(a, "after");
  assert_non_null(big);
  assert_int_equal((uintptr_t)big % 16, 0);
  assert_true(all_zero(big, big_size));
  memset(big, 0x5A, big_size);
  assert_string_equal(small1, "before");
  assert_string_equal(small2, "after");
  /* The small requests still share a chunk: the big one did not end it. */
  assert_true(small2 > small1 && small2 - small1 < 64);
  mlc_arena_free(a);
}

static void test_arena_many_chunks_keep_earlier_data(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  char *strs[2000];
  for (int i = 0; i < 2000; i++) strs[i] = mlc_arena_printf(a, "string number %d with padding", i);
  for (int i = 0; i < 2000; i++) {
    char want[64];
    snprintf(want, sizeof want, "string number %d with padding", i);
    assert_string_equal(strs[i], want);
  }
  mlc_arena_free(a);
}

static void test_arena_string_helpers_copy(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  char src[] = "hello world";
  char *d = mlc_arena_strdup(a, src);
  char *n = mlc_arena_strndup(a, src, 5);
  char *longer = mlc_arena_strndup(a, "ab", 10);
  char *m = mlc_arena_memdup(a, src, 4);
  src[0] = 'J';
  assert_string_equal(d, "hello world");
  assert_string_equal(n, "hello");
  assert_string_equal(longer, "ab");
  assert_memory_equal(m, "hell", 4);
  assert_null(mlc_arena_strdup(a, NULL));
  assert_string_equal(mlc_arena_printf(a, "%s-%d", "x", 42), "x-42");
  assert_false(mlc_arena_failed(a));
  mlc_arena_free(a);
}

static void test_arena_grow_copies_and_zeroes_the_rest(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  int *v = mlc_arena_alloc(a, 4 * sizeof(int));
  for (int i = 0; i < 4; i++) v[i] = i + 1;
  int *w = mlc_arena_grow(a, v, 4, 100, sizeof(int));
  assert_non_null(w);
  for (int i = 0; i < 4; i++) assert_int_equal(w[i], i + 1);
  for (int i = 4; i < 100; i++) assert_int_equal(w[i], 0);
  assert_int_equal(v[3], 4); /* the old block is left alone */
  assert_non_null(mlc_arena_grow(a, NULL, 0, 8, sizeof(int)));
  mlc_arena_free(a);
}

static void test_arena_failure_returns_null_and_is_sticky(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  assert_non_null(mlc_arena_alloc(a, 16));
  mlc_alloc_fail_after(0);
  assert_null(mlc_arena_alloc(a, 1 << 20)); /* needs a new chunk */
  assert_null(mlc_arena_printf(a, "%0100000d", 1));
  mlc_alloc_fail_after(-1);
  assert_true(mlc_arena_failed(a));
  assert_int_equal(mlc_error_last_code(), MLC_ENOMEM);
  assert_non_null(mlc_arena_alloc(a, 16)); /* usable again, still marked */
  assert_true(mlc_arena_failed(a));
  mlc_arena_free(a);
}

static void test_arena_overflowing_request_fails_cleanly(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  assert_null(mlc_arena_alloc(a, SIZE_MAX - 3));
  assert_null(mlc_arena_grow(a, NULL, 0, SIZE_MAX / 2, 4));
  assert_true(mlc_arena_failed(a));
  mlc_arena_free(a);
}

static void test_arena_failure_longjmps_to_the_oom_handler(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  jmp_buf jb;
  volatile int reached = 0;
  assert_null(mlc_arena_set_oom_handler(a, &jb));
  if (setjmp(jb) == 0) {
    mlc_alloc_fail_after(0);
    mlc_arena_alloc(a, 1 << 20);
    reached = 1; /* must not get here */
  } else {
    reached = 2;
  }
  mlc_alloc_fail_after(-1);
  assert_int_equal(reached, 2);
  assert_true(mlc_arena_failed(a));
  assert_ptr_equal(mlc_arena_set_oom_handler(a, NULL), &jb);
  mlc_arena_free(a);
}

static void test_arena_printf_failure_longjmps_too(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  jmp_buf jb;
  volatile int jumped = 0;
  mlc_arena_set_oom_handler(a, &jb);
  if (setjmp(jb) == 0) {
    mlc_alloc_fail_after(0);
    mlc_arena_printf(a, "%0100000d", 7);
  } else {
    jumped = 1;
  }
  mlc_alloc_fail_after(-1);
  mlc_arena_set_oom_handler(a, NULL);
  assert_int_equal(jumped, 1);
  mlc_arena_free(a);
}

/* Builds a list of 50 strings, failing at allocation k; with the handler the
 * builder needs no checks. Returns whether it completed. */
static bool build_with_failure_at(long k) {
  mlc_arena_t *a = mlc_arena_new();
  if (!a) return false;
  jmp_buf jb;
  volatile bool done = false;
  mlc_arena_set_oom_handler(a, &jb);
  if (setjmp(jb) == 0) {
    for (int i = 0; i < 50; i++) mlc_arena_alloc(a, 5000 + (size_t)i * 1000);
    done = true;
  }
  mlc_arena_free(a);
  return done;
}

static void test_arena_every_failure_point_unwinds_without_leaks(void **state) {
  (void)state;
  long before = mlc_alloc_count();
  assert_true(build_with_failure_at(-1));
  long n = mlc_alloc_count() - before;
  assert_true(n >= 2); /* the arena and at least one chunk */
  for (long k = 0; k < n; k++) {
    mlc_alloc_fail_after(k);
    assert_false(build_with_failure_at(k));
    mlc_alloc_fail_after(-1);
  }
  mlc_alloc_fail_after(n);
  assert_true(build_with_failure_at(n));
}

static void test_arena_free_accepts_null(void **state) {
  (void)state;
  mlc_arena_free(NULL);
  mlc_alloc_fail_after(0);
  assert_null(mlc_arena_new());
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_alloc_count_counts_every_allocation, reset_injection),
      cmocka_unit_test_teardown(test_fail_after_lets_n_succeed_then_fails_until_disabled,
                                reset_injection),
      cmocka_unit_test_teardown(test_failed_realloc_keeps_the_old_block, reset_injection),
      cmocka_unit_test_teardown(test_calloc_zeroes_and_rejects_overflow, reset_injection),
      cmocka_unit_test_teardown(test_zero_sizes_follow_the_documented_contract, reset_injection),
      cmocka_unit_test_teardown(test_arena_memory_is_16_byte_aligned_and_zeroed, reset_injection),
      cmocka_unit_test_teardown(test_arena_counts_bytes_handed_out, reset_injection),
      cmocka_unit_test_teardown(test_arena_big_requests_work_between_small_ones, reset_injection),
      cmocka_unit_test_teardown(test_arena_many_chunks_keep_earlier_data, reset_injection),
      cmocka_unit_test_teardown(test_arena_string_helpers_copy, reset_injection),
      cmocka_unit_test_teardown(test_arena_grow_copies_and_zeroes_the_rest, reset_injection),
      cmocka_unit_test_teardown(test_arena_failure_returns_null_and_is_sticky, reset_injection),
      cmocka_unit_test_teardown(test_arena_overflowing_request_fails_cleanly, reset_injection),
      cmocka_unit_test_teardown(test_arena_failure_longjmps_to_the_oom_handler, reset_injection),
      cmocka_unit_test_teardown(test_arena_printf_failure_longjmps_too, reset_injection),
      cmocka_unit_test_teardown(test_arena_every_failure_point_unwinds_without_leaks,
                                reset_injection),
      cmocka_unit_test_teardown(test_arena_free_accepts_null, reset_injection),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
