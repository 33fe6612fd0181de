/*
 * test_db_real.c - the file backend's run-time text (database/file/real.c)
 * against the snprintf form it replaces: on a million doubles (run-time
 * like, typed like k * 1e-5, random bit patterns, powers of ten and their
 * neighbours, edge values) the text always reads back as the same double
 * and is "%.15g" when that reads back, else "%.17g".
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "database/file/file_priv.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t next_u64(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* The fast text must read back as v and be "%.15g" when that reads back,
 * else "%.17g": the reference's text (the snprintf form it replaced), or
 * shorter where the reference did not try 15 digits (it only tries when
 * the last two printed digits suggest they can work). Returns whether it
 * was shorter than the reference. */
static bool check(double v) {
  char fast[FCODEC_REAL_MAX], ref[FCODEC_REAL_MAX], d15[FCODEC_REAL_MAX];
  fcodec_real(fast, v);
  fcodec_real_reference(ref, v);
  if (isnan(v)) {
    assert_string_equal(fast, ref);
    return false;
  }
  double back = strtod(fast, NULL);
  if (back != v || signbit(back) != signbit(v)) fail_msg("%.17g written as %s reads back as %.17g", v, fast, back);
  if (strcmp(fast, ref) == 0) return false;
  snprintf(d15, sizeof d15, "%.15g", v);
  if (strtod(d15, NULL) == v && strcmp(fast, d15) == 0) return true;
  fail_msg("%.17g: fast %s, reference %s", v, fast, ref);
  return false;
}

static double from_bits(uint64_t b) {
  double v;
  memcpy(&v, &b, sizeof v);
  return v;
}

static void test_run_times(void **state) {
  (void)state;
  for (int i = 0; i < 300000; i++) { /* 1 ns .. 100 s, log-uniform */
    double e = -9.0 + 11.0 * (double)(next_u64() >> 11) / 9007199254740992.0;
    check(pow(10.0, e));
  }
  for (int i = 0; i < 100000; i++) check(1e-5 * (double)(1 + (int64_t)i * 7919 % 100003) * (1.0 + 0.01 * (i % 3)));
}

static void test_typed_values(void **state) {
  (void)state;
  static const double scales[] = {1e-9, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10, 1000, 1e6};
  for (size_t s = 0; s < sizeof scales / sizeof scales[0]; s++)
    for (int k = 1; k < 5000; k++) check(scales[s] * k);
  for (int k = 1; k < 100000; k++) check((double)k / 1024.0);
}

static void test_random_bits(void **state) {
  (void)state;
  for (int i = 0; i < 300000; i++) check(from_bits(next_u64()));
}

static void test_edges(void **state) {
  (void)state;
  static const double edges[] = {0.0, -0.0, 1.0, -1.0, 0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3, DBL_MIN, DBL_MAX,
                                 DBL_TRUE_MIN, DBL_EPSILON, 1e-300, 1e300, 9007199254740993.0,
                                 99999999999999995.0, 9.9999999999999995e-5, 0.00009999999999999999,
                                 1e15, 1e16, 1e17, 1e21, 1e22, 1e23, 123456789012345678.0};
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
    check(edges[i]);
    check(nextafter(edges[i], INFINITY));
    check(nextafter(edges[i], -INFINITY));
  }
  for (int p = -30; p <= 30; p++) { /* powers of ten and their neighbours */
    double v = pow(10.0, p);
    check(v);
    check(nextafter(v, 0));
    check(nextafter(v, INFINITY));
  }
  check(INFINITY);
  check(-INFINITY);
  check(NAN);
  char buf[FCODEC_REAL_MAX];
  fcodec_real(buf, 1e-5);
  assert_string_equal(buf, "1e-05");
  fcodec_real(buf, 0.001234);
  assert_string_equal(buf, "0.001234");
  fcodec_real(buf, 1234000.0);
  assert_string_equal(buf, "1234000");
  fcodec_real(buf, 0.1);
  assert_string_equal(buf, "0.1");
  fcodec_real(buf, 1.0 / 3);
  assert_string_equal(buf, "0.33333333333333331");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_run_times),
      cmocka_unit_test(test_typed_values),
      cmocka_unit_test(test_random_bits),
      cmocka_unit_test(test_edges),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
