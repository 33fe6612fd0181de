/*
 * test_rng.c - the portable RNG: golden sequences, bounds, rough uniformity.
 *
 * The golden values were computed with an independent Python implementation
 * of the reference algorithms (not with this C code), so a change to seeding,
 * the generator, the bounded draw or the double conversion fails here:
 *
 *   M = 2**64 - 1
 *   def splitmix64(x):                  # returns (new state, output)
 *       x = (x + 0x9E3779B97F4A7C15) & M; z = x
 *       z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
 *       z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
 *       return x, z ^ (z >> 31)
 *   rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & M
 *   seed: s[0..3] = four successive splitmix64 outputs from x = seed
 *   next: r = rotl(s1 * 5 & M, 7) * 9 & M; t = s1 << 17 & M
 *         s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t; s3 = rotl(s3, 45)
 *   below(n): 0 if n == 1, else b = (n - 1).bit_length(); repeat
 *             x = next() >> (64 - b) until x < n
 *   uniform: (next() >> 11) * 2**-53
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/support.h"

static void test_seed_42_gives_the_reference_sequence(void **state) {
  (void)state;
  static const uint64_t want[8] = {
      0x15780b2e0c2ec716u, 0x6104d9866d113a7eu, 0xae17533239e499a1u, 0xecb8ad4703b360a1u,
      0xfde6dc7fe2ec5e64u, 0xc50da53101795238u, 0xb82154855a65ddb2u, 0xd99a2743ebe60087u,
  };
  mlc_rng_t rng;
  mlc_rng_seed(&rng, 42);
  for (int i = 0; i < 8; i++) assert_int_equal(mlc_rng_next(&rng), want[i]);
}

static void test_seed_0_gives_the_reference_sequence(void **state) {
  (void)state;
  static const uint64_t want[8] = {
      0x99ec5f36cb75f2b4u, 0xbf6e1f784956452au, 0x1a5f849d4933e6e0u, 0x6aa594f1262d2d2cu,
      0xbba5ad4a1f842e59u, 0xffef8375d9ebcacau, 0x6c160deed2f54c98u, 0x8920ad648fc30a3fu,
  };
  mlc_rng_t rng;
  mlc_rng_seed(&rng, 0);
  for (int i = 0; i < 8; i++) assert_int_equal(mlc_rng_next(&rng), want[i]);
}

static void test_below_gives_the_reference_draws(void **state) {
  (void)state;
  static const uint64_t want10[16] = {4, 0, 1, 6, 2, 8, 7, 8, 4, 7, 2, 2, 2, 4, 2, 0};
  static const uint64_t want_big[8] = {734607, 292291, 880413, 915169,
                                       63703,  109508, 423316, 159190};
  mlc_rng_t rng;
  mlc_rng_seed(&rng, 7);
  for (int i = 0; i < 16; i++) assert_int_equal(mlc_rng_below(&rng, 10), want10[i]);
  mlc_rng_seed(&rng, 7);
  for (int i = 0; i < 8; i++) assert_int_equal(mlc_rng_below(&rng, 1000003), want_big[i]);
}

static void test_uniform_gives_the_reference_doubles(void **state) {
  (void)state;
  static const double want[4] = {0x1.92d47d0e8d034p-3, 0x1.f06bc78ecada9p-1,
                                 0x1.dea8ad1b0fca8p-2, 0x1.041014cd567c0p-3};
  mlc_rng_t rng;
  mlc_rng_seed(&rng, 123);
  for (int i = 0; i < 4; i++) assert_true(mlc_rng_uniform(&rng) == want[i]);
}

/* The bulk form gives what the calls one at a time give, and leaves the
 * generator where they would. */
static void test_uniform_fill_equals_uniform_one_at_a_time(void **state) {
  (void)state;
  mlc_rng_t a, b;
  mlc_rng_seed(&a, 123);
  mlc_rng_seed(&b, 123);
  double bulk[1000];
  mlc_rng_uniform_fill(&a, bulk, 1000);
  assert_true(bulk[0] == 0x1.92d47d0e8d034p-3);
  for (int i = 0; i < 1000; i++) assert_true(bulk[i] == mlc_rng_uniform(&b));
  assert_int_equal(mlc_rng_next(&a), mlc_rng_next(&b));
  mlc_rng_uniform_fill(&a, bulk, 0); /* nothing drawn */
  assert_int_equal(mlc_rng_next(&a), mlc_rng_next(&b));
}

static void test_same_seed_same_sequence_different_seed_different(void **state) {
  (void)state;
  mlc_rng_t a, b, c;
  mlc_rng_seed(&a, 99);
  mlc_rng_seed(&b, 99);
  mlc_rng_seed(&c, 100);
  int n_same_c = 0;
  for (int i = 0; i < 100; i++) {
    uint64_t x = mlc_rng_next(&a);
    assert_int_equal(x, mlc_rng_next(&b));
    n_same_c += x == mlc_rng_next(&c);
  }
  assert_int_equal(n_same_c, 0);
}

static void test_below_one_is_zero_and_draws_nothing(void **state) {
  (void)state;
  mlc_rng_t a, b;
  mlc_rng_seed(&a, 5);
  mlc_rng_seed(&b, 5);
  assert_int_equal(mlc_rng_below(&a, 1), 0);
  assert_int_equal(mlc_rng_next(&a), mlc_rng_next(&b));
}

static void test_below_stays_in_bounds_for_awkward_n(void **state) {
  (void)state;
  static const uint64_t ns[] = {2, 3, 5, 7, 100, 1u << 20, (1u << 20) + 1, UINT64_MAX,
                                (UINT64_MAX >> 1) + 2};
  mlc_rng_t rng;
  mlc_rng_seed(&rng, 11);
  for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
    for (int i = 0; i < 2000; i++) assert_true(mlc_rng_below(&rng, ns[k]) < ns[k]);
}

static void test_range_is_inclusive_and_covers_every_value(void **state) {
  (void)state;
  mlc_rng_t rng;
  mlc_rng_seed(&rng, 3);
  int seen[7] = {0};
  for (int i = 0; i < 2000; i++) {
    int64_t v = mlc_rng_range(&rng, -3, 3);
    assert_in_range(v + 3, 0, 6);
    seen[v + 3]++;
  }
  for (int i = 0; i < 7; i++) assert_true(seen[i] > 0);
  assert_int_equal(mlc_rng_range(&rng, 5, 5), 5);
  assert_int_equal(mlc_rng_range(&rng, INT64_MIN, INT64_MIN), INT64_MIN);
  bool neg = false, pos = false;
  for (int i = 0; i < 64; i++) {
    int64_t v = mlc_rng_range(&rng, INT64_MIN, INT64_MAX); /* the full span */
    neg |= v < 0;
    pos |= v > 0;
  }
  assert_true(neg && pos);
  for (int i = 0; i < 1000; i++) {
    int64_t v = mlc_rng_range(&rng, INT64_MAX - 2, INT64_MAX);
    assert_true(v >= INT64_MAX - 2);
  }
}

static void test_uniform_is_in_unit_interval_with_mean_near_half(void **state) {
  (void)state;
  mlc_rng_t rng;
  mlc_rng_seed(&rng, 2024);
  double sum = 0;
  for (int i = 0; i < 100000; i++) {
    double u = mlc_rng_uniform(&rng);
    assert_true(u >= 0.0 && u < 1.0);
    sum += u;
  }
  double mean = sum / 100000;
  assert_true(mean > 0.49 && mean < 0.51);
}

/* Chi-square over 10 buckets: 9 degrees of freedom, 99.9th percentile 27.9.
 * The seed is fixed, so this is deterministic; it guards against gross bias. */
static void test_below_is_roughly_uniform(void **state) {
  (void)state;
  mlc_rng_t rng;
  mlc_rng_seed(&rng, 77);
  long counts[10] = {0};
  const int n = 100000;
  for (int i = 0; i < n; i++) counts[mlc_rng_below(&rng, 10)]++;
  double chi2 = 0, expected = n / 10.0;
  for (int i = 0; i < 10; i++) chi2 += (counts[i] - expected) * (counts[i] - expected) / expected;
  assert_true(chi2 < 27.9);
}

static void test_fork_seed_gives_reproducible_independent_streams(void **state) {
  (void)state;
  mlc_rng_t parent1, parent2, child1, child2;
  mlc_rng_seed(&parent1, 1);
  mlc_rng_seed(&parent2, 1);
  mlc_rng_seed(&child1, mlc_rng_fork_seed(&parent1));
  mlc_rng_seed(&child2, mlc_rng_fork_seed(&parent2));
  for (int i = 0; i < 10; i++) {
    uint64_t c = mlc_rng_next(&child1);
    assert_int_equal(c, mlc_rng_next(&child2));
    assert_true(c != mlc_rng_next(&parent1));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_seed_42_gives_the_reference_sequence),
      cmocka_unit_test(test_seed_0_gives_the_reference_sequence),
      cmocka_unit_test(test_below_gives_the_reference_draws),
      cmocka_unit_test(test_uniform_fill_equals_uniform_one_at_a_time),
      cmocka_unit_test(test_uniform_gives_the_reference_doubles),
      cmocka_unit_test(test_same_seed_same_sequence_different_seed_different),
      cmocka_unit_test(test_below_one_is_zero_and_draws_nothing),
      cmocka_unit_test(test_below_stays_in_bounds_for_awkward_n),
      cmocka_unit_test(test_range_is_inclusive_and_covers_every_value),
      cmocka_unit_test(test_uniform_is_in_unit_interval_with_mean_near_half),
      cmocka_unit_test(test_below_is_roughly_uniform),
      cmocka_unit_test(test_fork_seed_gives_reproducible_independent_streams),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
