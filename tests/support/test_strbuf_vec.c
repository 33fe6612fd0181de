/*
 * test_strbuf_vec.c - the string builder (appends, formatting, sticky
 * failure, take) and MLC_VEC growth (doubling, overflow, failure leaves the
 * vector unchanged).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "support/support.h"

static int reset_injection(void **state) {
  (void)state;
  mlc_alloc_fail_after(-1);
  mlc_error_clear();
  return 0;
}

/* ---- string builder ------------------------------------------------------ */

static void test_sb_builds_text_from_appends_and_printf(void **state) {
  (void)state;
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  assert_string_equal(mlc_sb_str(&sb), "");
  mlc_sb_append(&sb, "for i in range(");
  mlc_sb_printf(&sb, "%d", 16);
  mlc_sb_putc(&sb, ')');
  mlc_sb_putc(&sb, '\n');
  mlc_sb_indent(&sb, 4);
  mlc_sb_appendn(&sb, "A[i] = 0.0 ignored", 10);
  assert_string_equal(mlc_sb_str(&sb), "for i in range(16)\n    A[i] = 0.0");
  assert_int_equal(sb.len, strlen(mlc_sb_str(&sb)));
  assert_false(sb.failed);
  mlc_sb_free(&sb);
  assert_null(sb.data);
}

static void test_sb_printf_longer_than_capacity_is_complete(void **state) {
  (void)state;
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  mlc_sb_append(&sb, "x");
  mlc_sb_printf(&sb, "%05000d|%s", 7, "end");
  assert_int_equal(sb.len, 1 + 5000 + 4);
  assert_string_equal(mlc_sb_str(&sb) + 1 + 5000, "|end");
  assert_int_equal(mlc_sb_str(&sb)[4999 + 1], '7');
  mlc_sb_free(&sb);
}

static void test_sb_many_small_appends_grow_correctly(void **state) {
  (void)state;
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  for (int i = 0; i < 10000; i++) mlc_sb_putc(&sb, (char)('a' + i % 26));
  assert_int_equal(sb.len, 10000);
  assert_true(sb.cap > sb.len);
  for (int i = 0; i < 10000; i++) assert_int_equal(sb.data[i], 'a' + i % 26);
  assert_int_equal(sb.data[10000], '\0');
  mlc_sb_free(&sb);
}

static void test_sb_reset_keeps_memory_and_empties(void **state) {
  (void)state;
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  mlc_sb_append(&sb, "some text");
  char *data = sb.data;
  mlc_sb_reset(&sb);
  assert_string_equal(mlc_sb_str(&sb), "");
  assert_int_equal(sb.len, 0);
  mlc_sb_append(&sb, "new");
  assert_ptr_equal(sb.data, data);
  assert_string_equal(mlc_sb_str(&sb), "new");
  mlc_sb_free(&sb);
}

static void test_sb_take_hands_over_and_resets(void **state) {
  (void)state;
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  mlc_sb_printf(&sb, "%s=%d", "n", 3);
  char *s = mlc_sb_take(&sb);
  assert_string_equal(s, "n=3");
  assert_null(sb.data);
  assert_int_equal(sb.len, 0);
  mlc_free(s);
  char *empty = mlc_sb_take(&sb); /* never appended: still a string */
  assert_non_null(empty);
  assert_string_equal(empty, "");
  mlc_free(empty);
}

static void test_sb_failure_is_sticky_and_take_returns_null(void **state) {
  (void)state;
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  mlc_sb_append(&sb, "abc");
  mlc_alloc_fail_after(0);
  mlc_sb_printf(&sb, "%0200d", 1); /* needs to grow: fails */
  mlc_alloc_fail_after(-1);
  assert_true(sb.failed);
  assert_string_equal(mlc_sb_str(&sb), "abc"); /* no half-written text */
  mlc_sb_append(&sb, "def");                   /* ignored after failure */
  mlc_sb_putc(&sb, 'g');
  assert_string_equal(mlc_sb_str(&sb), "abc");
  assert_null(mlc_sb_take(&sb));
  assert_false(sb.failed); /* take resets */
  assert_null(sb.data);
}

static void test_sb_first_allocation_failure_is_reported(void **state) {
  (void)state;
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  mlc_alloc_fail_after(0);
  mlc_sb_append(&sb, "x");
  mlc_alloc_fail_after(-1);
  assert_true(sb.failed);
  assert_string_equal(mlc_sb_str(&sb), "");
  mlc_sb_reset(&sb); /* discards the failure with the contents */
  mlc_sb_append(&sb, "ok");
  assert_string_equal(mlc_sb_str(&sb), "ok");
  mlc_sb_free(&sb);
}

/* ---- vectors ------------------------------------------------------------- */

typedef MLC_VEC(int) int_vec_t;

static void test_vec_push_keeps_values_and_doubles_capacity(void **state) {
  (void)state;
  int_vec_t v = {0};
  size_t last_cap = 0;
  int n_growths = 0;
  for (int i = 0; i < 1000; i++) {
    assert_int_equal(mlc_vec_push(&v, i * 3), MLC_OK);
    if (v.cap != last_cap) {
      if (last_cap) assert_int_equal(v.cap, last_cap * 2);
      last_cap = v.cap;
      n_growths++;
    }
  }
  assert_int_equal(v.len, 1000);
  for (int i = 0; i < 1000; i++) assert_int_equal(v.data[i], i * 3);
  assert_true(n_growths <= 8); /* 8, 16, ..., 1024 */
  mlc_vec_free(&v);
  assert_null(v.data);
  assert_int_equal(v.len + v.cap, 0);
}

static void test_vec_reserve_gives_at_least_the_need(void **state) {
  (void)state;
  int_vec_t v = {0};
  assert_int_equal(mlc_vec_reserve(&v, 1000), MLC_OK);
  assert_true(v.cap >= 1000);
  int *data = v.data;
  assert_int_equal(mlc_vec_reserve(&v, 10), MLC_OK); /* never shrinks */
  assert_ptr_equal(v.data, data);
  mlc_vec_free(&v);
}

static void test_vec_failed_growth_leaves_vector_unchanged(void **state) {
  (void)state;
  int_vec_t v = {0};
  for (int i = 0; i < 8; i++) assert_int_equal(mlc_vec_push(&v, i), MLC_OK);
  assert_int_equal(v.cap, 8);
  mlc_alloc_fail_after(0);
  assert_int_equal(mlc_vec_push(&v, 99), MLC_ENOMEM);
  mlc_alloc_fail_after(-1);
  assert_int_equal(mlc_error_last_code(), MLC_ENOMEM);
  assert_int_equal(v.len, 8);
  assert_int_equal(v.cap, 8);
  for (int i = 0; i < 8; i++) assert_int_equal(v.data[i], i);
  mlc_vec_free(&v);
}

static void test_vec_reserve_rejects_sizes_that_overflow(void **state) {
  (void)state;
  int_vec_t v = {0};
  long before = mlc_alloc_count();
  assert_int_equal(mlc_vec_reserve(&v, SIZE_MAX / 2), MLC_ENOMEM);
  assert_int_equal(mlc_alloc_count(), before);
  assert_null(v.data);
  assert_int_equal(v.cap, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_sb_builds_text_from_appends_and_printf, reset_injection),
      cmocka_unit_test_teardown(test_sb_printf_longer_than_capacity_is_complete, reset_injection),
      cmocka_unit_test_teardown(test_sb_many_small_appends_grow_correctly, reset_injection),
      cmocka_unit_test_teardown(test_sb_reset_keeps_memory_and_empties, reset_injection),
      cmocka_unit_test_teardown(test_sb_take_hands_over_and_resets, reset_injection),
      cmocka_unit_test_teardown(test_sb_failure_is_sticky_and_take_returns_null, reset_injection),
      cmocka_unit_test_teardown(test_sb_first_allocation_failure_is_reported, reset_injection),
      cmocka_unit_test_teardown(test_vec_push_keeps_values_and_doubles_capacity, reset_injection),
      cmocka_unit_test_teardown(test_vec_reserve_gives_at_least_the_need, reset_injection),
      cmocka_unit_test_teardown(test_vec_failed_growth_leaves_vector_unchanged, reset_injection),
      cmocka_unit_test_teardown(test_vec_reserve_rejects_sizes_that_overflow, reset_injection),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
