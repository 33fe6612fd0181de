/*
 * test_json.c - canonical dumping (sorted keys, compact, exact reals), parse
 * errors with line:column, typed getters and loading from a file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/support.h"

static int clear_error(void **state) {
  (void)state;
  mlc_error_clear();
  return 0;
}

static void test_dumps_is_compact_with_sorted_keys_at_every_level(void **state) {
  (void)state;
  json_t *j = json_pack("{s:i, s:[i, f, s], s:{s:n, s:b}}", "b", 1, "a", 1, 2.5, "x", "c", "z",
                        "y", 1);
  char *s = mlc_json_dumps(j);
  assert_string_equal(s, "{\"a\":[1,2.5,\"x\"],\"b\":1,\"c\":{\"y\":true,\"z\":null}}");
  free(s);
  json_decref(j);
}

static void test_dumps_is_independent_of_insertion_order(void **state) {
  (void)state;
  json_t *a = json_object(), *b = json_object();
  const char *keys[] = {"sm", "trace", "arch", "run_secs", "b0"};
  for (int i = 0; i < 5; i++) json_object_set_new(a, keys[i], json_integer(i));
  for (int i = 4; i >= 0; i--) json_object_set_new(b, keys[i], json_integer(i));
  char *sa = mlc_json_dumps(a), *sb = mlc_json_dumps(b);
  assert_string_equal(sa, sb);
  free(sa);
  free(sb);
  json_decref(a);
  json_decref(b);
}

static void test_reals_round_trip_exactly(void **state) {
  (void)state;
  const double values[] = {0.1, 1.0 / 3.0, 2.5e-310, 1e100, -0.0, 123456789.123456789};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    json_t *j = json_real(values[i]);
    char *s = mlc_json_dumps(j);
    json_t *back = mlc_json_loads(s, "real");
    assert_non_null(back);
    assert_true(json_real_value(back) == values[i]);
    free(s);
    json_decref(j);
    json_decref(back);
  }
}

static void test_loads_accepts_any_value_and_dumps_it_back(void **state) {
  (void)state;
  const char *texts[] = {"[[[\"split\",[\"l1\"],[],[\"l2\",\"l3\"]]],[[0,[4,8]]]]", "3.5", "\"s\"",
                         "null"};
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
    json_t *j = mlc_json_loads(texts[i], "x");
    assert_non_null(j);
    char *s = mlc_json_dumps(j);
    assert_string_equal(s, texts[i]);
    free(s);
    json_decref(j);
  }
}

static void test_parse_error_names_source_line_and_column(void **state) {
  (void)state;
  json_t *j = mlc_json_loads("{\n  \"a\": 1,\n  \"b\": }", "trace.json");
  assert_null(j);
  assert_int_equal(mlc_error_last_code(), MLC_EPARSE);
  const char *msg = mlc_error_last();
  assert_int_equal(strncmp(msg, "trace.json:3:8: ", 16), 0);
  assert_non_null(strstr(msg, "'}'"));
  assert_null(mlc_json_loads("[1, 2", NULL));
  assert_int_equal(strncmp(mlc_error_last(), "<string>:1:", 11), 0);
}

static void test_duplicate_keys_are_rejected(void **state) {
  (void)state;
  assert_null(mlc_json_loads("{\"a\":1,\"a\":2}", "msg"));
  assert_non_null(strstr(mlc_error_last(), "duplicate"));
}

static void test_getters_return_typed_values(void **state) {
  (void)state;
  json_t *j = mlc_json_loads("{\"n\": -7, \"x\": 2.5, \"i\": 3, \"s\": \"sm_90\"}", "obj");
  int64_t n;
  double x, i;
  const char *s;
  assert_int_equal(mlc_json_get_int(j, "n", &n), MLC_OK);
  assert_int_equal(n, -7);
  assert_int_equal(mlc_json_get_real(j, "x", &x), MLC_OK);
  assert_true(x == 2.5);
  assert_int_equal(mlc_json_get_real(j, "i", &i), MLC_OK); /* ints accepted */
  assert_true(i == 3.0);
  assert_int_equal(mlc_json_get_str(j, "s", &s), MLC_OK);
  assert_string_equal(s, "sm_90");
  json_decref(j);
}

static void test_getter_errors_name_the_key(void **state) {
  (void)state;
  json_t *j = mlc_json_loads("{\"x\": 2.5, \"s\": \"str\"}", "obj");
  int64_t n;
  double d;
  const char *s;
  assert_int_equal(mlc_json_get_int(j, "missing", &n), MLC_EPARSE);
  assert_string_equal(mlc_error_last(), "missing field 'missing'");
  assert_int_equal(mlc_json_get_int(j, "x", &n), MLC_EPARSE);
  assert_string_equal(mlc_error_last(), "field 'x' must be an integer");
  assert_int_equal(mlc_json_get_real(j, "s", &d), MLC_EPARSE);
  assert_string_equal(mlc_error_last(), "field 's' must be a number");
  assert_int_equal(mlc_json_get_str(j, "x", &s), MLC_EPARSE);
  assert_string_equal(mlc_error_last(), "field 'x' must be a string");
  json_t *arr = json_array();
  assert_int_equal(mlc_json_get_int(arr, "k", &n), MLC_EPARSE);
  assert_non_null(strstr(mlc_error_last(), "'k'"));
  json_decref(arr);
  json_decref(j);
}

static void test_load_file_reads_and_reports_the_path(void **state) {
  (void)state;
  char dir[] = "/tmp/mlc-test-json-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char good[128], bad[128], missing[128];
  snprintf(good, sizeof good, "%s/good.json", dir);
  snprintf(bad, sizeof bad, "%s/bad.json", dir);
  snprintf(missing, sizeof missing, "%s/missing.json", dir);
  assert_int_equal(mlc_write_file(good, "{\"k\": [1]}", 10), MLC_OK);
  assert_int_equal(mlc_write_file(bad, "\n\n  [1,,]", 9), MLC_OK);
  json_t *j = mlc_json_load_file(good);
  assert_non_null(j);
  assert_int_equal(json_integer_value(json_array_get(json_object_get(j, "k"), 0)), 1);
  json_decref(j);
  assert_null(mlc_json_load_file(bad));
  char want[160];
  snprintf(want, sizeof want, "%s:3:", bad);
  assert_int_equal(strncmp(mlc_error_last(), want, strlen(want)), 0);
  assert_null(mlc_json_load_file(missing));
  assert_int_equal(mlc_error_last_code(), MLC_EIO);
  assert_non_null(strstr(mlc_error_last(), missing));
  unlink(good);
  unlink(bad);
  rmdir(dir);
}

/* The scanner (json_scan.c) accepts what jansson accepts and says where
 * and why it stops otherwise; string spans decode to jansson's values. */
static void test_scanner_agrees_with_jansson(void **state) {
  (void)state;
  static const char *const texts[] = {
      "[]", " {\"a\":[1,-2.5e-3,true,false,null,{}]} ", "\"\\u00e9\\ud83d\\ude00\\n\"", "0", "-0.0E+1",
      "[1,]", "{\"a\" 1}", "01", "[\"\\x\"]", "\"\xc3\x28\"", "[", "{\"a\":1}}", "nul", "\"a\tb\"", "",
  };
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
    json_t *j = json_loadb(texts[i], strlen(texts[i]), JSON_DECODE_ANY, NULL);
    int st = mlc_json_check(texts[i], strlen(texts[i]), "the text");
    if ((st == MLC_OK) != (j != NULL)) {
      print_error("'%s': scanner %d, jansson %s\n", texts[i], st, j ? "accepts" : "refuses");
      fail();
    }
    if (st != MLC_OK) assert_non_null(strstr(mlc_error_last(), "the text is not JSON: "));
    json_decref(j);
  }
  assert_int_equal(mlc_json_check("[1,]", 4, "x"), MLC_EPARSE);
  assert_string_equal(mlc_error_last(), "x is not JSON: a bad number at byte 4");
  char deep[5000];
  memset(deep, '[', 2500);
  memset(deep + 2500, ']', 2500);
  assert_int_equal(mlc_json_check(deep, sizeof deep, "deep"), MLC_EPARSE);
  assert_non_null(strstr(mlc_error_last(), "deeper than 2048"));
  /* a string span decodes to what jansson makes of it */
  const char *text = "\"a\\\"b\\\\c\\/d\\u00e9\\ud83d\\ude00\\ud800x\\u0000y\"";
  mlc_jscan_t s;
  mlc_jscan_init(&s, text, strlen(text));
  mlc_jspan_t sp;
  assert_true(mlc_jscan_string(&s, &sp));
  assert_true(sp.escaped);
  char out[64];
  bool nul;
  size_t n = mlc_jspan_decode(out, &sp, &nul);
  assert_true(nul); /* \u0000 dropped, and said */
  assert_string_equal(out, "a\"b\\c/d\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdxy");
  assert_int_equal(n, strlen(out));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_dumps_is_compact_with_sorted_keys_at_every_level, clear_error),
      cmocka_unit_test_teardown(test_dumps_is_independent_of_insertion_order, clear_error),
      cmocka_unit_test_teardown(test_reals_round_trip_exactly, clear_error),
      cmocka_unit_test_teardown(test_loads_accepts_any_value_and_dumps_it_back, clear_error),
      cmocka_unit_test_teardown(test_parse_error_names_source_line_and_column, clear_error),
      cmocka_unit_test_teardown(test_duplicate_keys_are_rejected, clear_error),
      cmocka_unit_test_teardown(test_getters_return_typed_values, clear_error),
      cmocka_unit_test_teardown(test_getter_errors_name_the_key, clear_error),
      cmocka_unit_test_teardown(test_load_file_reads_and_reports_the_path, clear_error),
      cmocka_unit_test_teardown(test_scanner_agrees_with_jansson, clear_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
