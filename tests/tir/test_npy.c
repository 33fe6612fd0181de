/*
 * test_npy.c - the private .npy reader and writer of mlc-tir eval: round trips
 * of every dtype, the exact header NumPy writes, versions 1.0 and 2.0, and
 * malformed files (truncated, bad magic, Fortran order, overflowing shapes,
 * unknown dtypes) rejected with an error rather than misread.
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

#include "tir/npy.h"

/* A fresh temporary path (the file is created empty). */
static void temp_path(char *buf, size_t len) {
  snprintf(buf, len, "/tmp/mlc-test-npy-XXXXXX");
  int fd = mkstemp(buf);
  assert_true(fd >= 0);
  close(fd);
}

/* A .npy image with the given version and header text (padded as NumPy
 * does), followed by ndata bytes. Free with free(). */
static unsigned char *make_npy(int major, const char *dict, const void *data, size_t ndata, size_t *len) {
  size_t prefix = 6 + 2 + (major == 1 ? 2 : 4);
  size_t hlen = strlen(dict) + 1;
  hlen += (64 - (prefix + hlen) % 64) % 64;
  *len = prefix + hlen + ndata;
  unsigned char *b = malloc(*len);
  assert_non_null(b);
  memcpy(b, "\x93NUMPY", 6);
  b[6] = (unsigned char)major;
  b[7] = 0;
  for (size_t i = 0; i < prefix - 8; i++) b[8 + i] = (unsigned char)(hlen >> (8 * i));
  memset(b + prefix, ' ', hlen);
  memcpy(b + prefix, dict, strlen(dict));
  b[prefix + hlen - 1] = '\n';
  if (ndata) memcpy(b + prefix + hlen, data, ndata);
  return b;
}

static int parse_text(const char *dict, const void *data, size_t ndata, tir_npy_t *out) {
  size_t len;
  unsigned char *b = make_npy(1, dict, data, ndata, &len);
  int st = tir_npy_parse(out, b, len, "x.npy");
  free(b);
  return st;
}

/* ------------------------------------------------------------------------ */

static void test_every_dtype_round_trips_through_a_file(void **state) {
  (void)state;
  static const char *const names[] = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                      "uint32", "uint64", "float16", "bfloat16", "float32", "float64"};
  const int64_t shape[3] = {2, 3, 5};
  unsigned char data[30 * 8];
  for (size_t i = 0; i < sizeof(data); i++) data[i] = (unsigned char)(i * 37 + 11);
  for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
    tir_dtype_t t;
    assert_int_equal(tir_dtype_parse(&t, names[k], strlen(names[k])), MLC_OK);
    if (tir_dtype_is_bool(t))
      for (size_t i = 0; i < 30; i++) data[i] = (unsigned char)(i % 2);
    char path[64];
    temp_path(path, sizeof(path));
    assert_int_equal(tir_npy_write(path, t, 3, shape, data), MLC_OK);
    tir_npy_t arr;
    assert_int_equal(tir_npy_read(&arr, path), MLC_OK);
    /* bfloat16 travels as its raw bits, uint16. */
    tir_dtype_t want = t.code == TIR_CODE_BFLOAT ? tir_dt_UINT16() : t;
    assert_true(tir_dtype_eq(arr.dtype, want));
    assert_int_equal(arr.ndim, 3);
    assert_int_equal(arr.shape[0], 2);
    assert_int_equal(arr.shape[1], 3);
    assert_int_equal(arr.shape[2], 5);
    assert_int_equal(arr.nbytes, 30 * (size_t)tir_dtype_bytes(t));
    assert_memory_equal(arr.data, data, arr.nbytes);
    tir_npy_free(&arr);
    unlink(path);
  }
}

static void test_scalar_and_vector_shapes_round_trip(void **state) {
  (void)state;
  float one = 1.5f;
  float vec[4] = {1, 2, 3, 4};
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  assert_int_equal(tir_npy_header(&sb, tir_dt_FLOAT32(), 0, NULL), MLC_OK);
  mlc_sb_appendn(&sb, (const char *)&one, sizeof(one));
  tir_npy_t arr;
  assert_int_equal(tir_npy_parse(&arr, sb.data, sb.len, "scalar"), MLC_OK);
  assert_int_equal(arr.ndim, 0);
  assert_int_equal(arr.nbytes, 4);
  assert_memory_equal(arr.data, &one, 4);
  tir_npy_free(&arr);

  mlc_sb_reset(&sb);
  int64_t n = 4;
  assert_int_equal(tir_npy_header(&sb, tir_dt_FLOAT32(), 1, &n), MLC_OK);
  assert_non_null(strstr(sb.data + 10, "'shape': (4,), }"));
  mlc_sb_appendn(&sb, (const char *)vec, sizeof(vec));
  assert_int_equal(tir_npy_parse(&arr, sb.data, sb.len, "vector"), MLC_OK);
  assert_int_equal(arr.ndim, 1);
  assert_int_equal(arr.shape[0], 4);
  assert_memory_equal(arr.data, vec, sizeof(vec));
  tir_npy_free(&arr);
  mlc_sb_free(&sb);
}

static void test_header_is_what_numpy_writes(void **state) {
  (void)state;
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  const int64_t shape[2] = {2, 3};
  assert_int_equal(tir_npy_header(&sb, tir_dt_FLOAT32(), 2, shape), MLC_OK);
  assert_int_equal(sb.len % 64, 0);
  assert_memory_equal(sb.data, "\x93NUMPY\x01\x00", 8);
  size_t hlen = (unsigned char)sb.data[8] | (size_t)(unsigned char)sb.data[9] << 8;
  assert_int_equal(hlen + 10, sb.len);
  const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  assert_memory_equal(sb.data + 10, dict, strlen(dict));
  assert_int_equal(sb.data[sb.len - 1], '\n');
  for (size_t i = 10 + strlen(dict); i < sb.len - 1; i++) assert_int_equal(sb.data[i], ' ');

  /* One-byte types carry NumPy's '|' byte order. */
  mlc_sb_reset(&sb);
  assert_int_equal(tir_npy_header(&sb, tir_dt_INT8(), 2, shape), MLC_OK);
  assert_non_null(strstr(sb.data + 10, "'descr': '|i1'"));
  mlc_sb_free(&sb);
  assert_string_equal(tir_npy_descr(tir_dt_BOOL()), "|b1");
  assert_string_equal(tir_npy_descr(tir_dt_BFLOAT16()), "<u2");
  assert_null(tir_npy_descr(tir_dt_HANDLE()));
}

static void test_version_2_and_key_order_and_spellings_are_read(void **state) {
  (void)state;
  int32_t data[3] = {7, -8, 9};
  size_t len;
  unsigned char *b = make_npy(2, "{'shape': (3,), 'fortran_order': False, 'descr': '<i4'}", data, sizeof(data), &len);
  tir_npy_t arr;
  assert_int_equal(tir_npy_parse(&arr, b, len, "v2.npy"), MLC_OK);
  free(b);
  assert_true(tir_dtype_eq(arr.dtype, tir_dt_INT32()));
  assert_memory_equal(arr.data, data, sizeof(data));
  tir_npy_free(&arr);

  /* "<u1" is read like "|u1"; Python 2 long suffixes are tolerated. */
  unsigned char bytes[2] = {1, 2};
  assert_int_equal(parse_text("{\"descr\": \"<u1\", \"fortran_order\": False, \"shape\": (2L,)}", bytes, 2, &arr), MLC_OK);
  assert_true(tir_dtype_eq(arr.dtype, tir_dt_UINT8()));
  tir_npy_free(&arr);
}

static void expect_error(const char *dict, const void *data, size_t ndata, int code, const char *needle) {
  tir_npy_t arr;
  int st = parse_text(dict, data, ndata, &arr);
  if (st != code || !strstr(mlc_error_last(), needle))
    fail_msg("header %s: got %d '%s', wanted %d with '%s'", dict, st, mlc_error_last(), code, needle);
  assert_null(arr.data);
}

static void test_malformed_headers_are_rejected(void **state) {
  (void)state;
  float f[8] = {0};
  expect_error("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", f, 24, MLC_EUNSUPPORTED, "Fortran");
  expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999, 99999999999), }",
               f, 24, MLC_EPARSE, "overflow");
  expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", f, 24,
               MLC_EPARSE, "overflow");
  expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1), }", f, 4,
               MLC_EUNSUPPORTED, "dimensions");
  expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }", f, 24, MLC_EPARSE, "non-negative");
  expect_error("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", f, 24, MLC_EUNSUPPORTED, "big-endian");
  expect_error("{'descr': '<c8', 'fortran_order': False, 'shape': (2, 3), }", f, 24, MLC_EUNSUPPORTED, "'<c8'");
  expect_error("{'descr': '<f4', 'shape': (2, 3), }", f, 24, MLC_EPARSE, "fortran_order");
  expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'extra': 1}", f, 24, MLC_EPARSE, "extra");
  expect_error("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", f, 24, MLC_EPARSE, "twice");
  expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)", f, 24, MLC_EPARSE, "expected");
  expect_error("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 3)}", f, 24, MLC_EPARSE, "True or False");
  expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} x", f, 24, MLC_EPARSE, "end of the header");
  expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f, 20, MLC_EPARSE, "truncated");
  expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f, 25, MLC_EPARSE, "after");
}

static void test_bad_magic_version_and_truncated_preamble_are_rejected(void **state) {
  (void)state;
  size_t len;
  unsigned char *b = make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", "abcd", 4, &len);
  tir_npy_t arr;
  for (size_t cut = 0; cut < 64; cut++) /* every truncation of the preamble and header */
    assert_int_not_equal(tir_npy_parse(&arr, b, cut, "cut.npy"), MLC_OK);
  assert_int_equal(tir_npy_parse(&arr, b, len, "ok.npy"), MLC_OK);
  tir_npy_free(&arr);
  b[6] = 9;
  assert_int_equal(tir_npy_parse(&arr, b, len, "v9.npy"), MLC_EUNSUPPORTED);
  assert_non_null(strstr(mlc_error_last(), "version 9.0"));
  b[6] = 1;
  b[1] = 'X';
  assert_int_equal(tir_npy_parse(&arr, b, len, "magic.npy"), MLC_EPARSE);
  assert_non_null(strstr(mlc_error_last(), "magic"));
  free(b);
  /* A header length pointing past the end of the file. */
  unsigned char small[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0xff, 0x7f, '{', '}'};
  assert_int_equal(tir_npy_parse(&arr, small, sizeof(small), "long.npy"), MLC_EPARSE);
  assert_non_null(strstr(mlc_error_last(), "truncated"));
  /* A missing file is an I/O error naming the path. */
  assert_int_equal(tir_npy_read(&arr, "/nonexistent/dir/x.npy"), MLC_EIO);
  assert_non_null(strstr(mlc_error_last(), "/nonexistent/dir/x.npy"));
}

static void test_writing_to_a_bad_path_fails_with_the_path(void **state) {
  (void)state;
  float f = 1;
  assert_int_equal(tir_npy_write("/nonexistent/dir/y.npy", tir_dt_FLOAT32(), 0, NULL, &f), MLC_EIO);
  assert_non_null(strstr(mlc_error_last(), "/nonexistent/dir/y.npy"));
  assert_int_equal(tir_npy_write("/tmp/never.npy", tir_dt_HANDLE(), 0, NULL, &f), MLC_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_dtype_round_trips_through_a_file),
      cmocka_unit_test(test_scalar_and_vector_shapes_round_trip),
      cmocka_unit_test(test_header_is_what_numpy_writes),
      cmocka_unit_test(test_version_2_and_key_order_and_spellings_are_read),
      cmocka_unit_test(test_malformed_headers_are_rejected),
      cmocka_unit_test(test_bad_magic_version_and_truncated_preamble_are_rejected),
      cmocka_unit_test(test_writing_to_a_bad_path_fails_with_the_path),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
