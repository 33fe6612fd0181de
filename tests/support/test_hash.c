/*
 * test_hash.c - XXH64 golden vectors and the streaming hasher's framing.
 *
 * Golden values: XXH64("", 0) = 0xEF46DB3751D8E999 and XXH64("abc", 0) =
 * 0x44BC2CF5AD770999 are the published reference values. The others were
 * computed with an independent pure-Python XXH64 (written from the spec; it
 * reproduces both published values), not with libxxhash, so they pin the
 * algorithm rather than whatever the installed library does.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "support/support.h"

static void test_xxh64_matches_reference_vectors(void **state) {
  (void)state;
  assert_int_equal(mlc_hash64("", 0, 0), 0xEF46DB3751D8E999u);
  assert_int_equal(mlc_hash64(NULL, 0, 0), 0xEF46DB3751D8E999u);
  assert_int_equal(mlc_hash64("a", 1, 0), 0xd24ec4f1a98c6e5bu);
  assert_int_equal(mlc_hash64("abc", 3, 0), 0x44BC2CF5AD770999u);
  assert_int_equal(mlc_hash64("abc", 3, 1), 0xbea9ca8199328908u);
  const char *fox = "The quick brown fox jumps over the lazy dog";
  assert_int_equal(mlc_hash64(fox, strlen(fox), 0), 0x0b242d361fda71bcu);
}

static void test_xxh64_long_input_with_seed_matches_reference(void **state) {
  (void)state;
  unsigned char bytes[100];
  for (int i = 0; i < 100; i++) bytes[i] = (unsigned char)i;
  /* 100 bytes: three 32-byte stripes, then 8-, 4- and 1-byte tails. */
  assert_int_equal(mlc_hash64(bytes, sizeof bytes, 0x9E3779B97F4A7C15u), 0x3b97d91eba03e785u);
}

static void test_streaming_equals_one_shot_at_every_split(void **state) {
  (void)state;
  unsigned char bytes[100];
  for (int i = 0; i < 100; i++) bytes[i] = (unsigned char)(i * 7 + 1);
  uint64_t want = mlc_hash64(bytes, sizeof bytes, 5);
  for (size_t split = 0; split <= sizeof bytes; split++) {
    mlc_hasher_t *h = mlc_hasher_new(5);
    assert_non_null(h);
    mlc_hasher_update(h, bytes, split);
    mlc_hasher_update(h, bytes + split, sizeof bytes - split);
    assert_int_equal(mlc_hasher_digest(h), want);
    mlc_hasher_free(h);
  }
}

/* The hasher gathers small pieces in a buffer of its own (512 bytes) and
 * passes large ones straight on: a 6000-byte stream fed as u64s and
 * pieces of 1 to 1200 bytes, crossing the buffer's edge every way, still
 * hashes as the same bytes in one shot; so does a digest taken midway. */
static void test_streaming_in_mixed_pieces_equals_one_shot(void **state) {
  (void)state;
  static unsigned char bytes[6000];
  for (size_t i = 0; i < sizeof bytes; i++) bytes[i] = (unsigned char)(i * 131 + 7);
  mlc_hasher_t *h = mlc_hasher_new(11);
  assert_non_null(h);
  size_t at = 0, piece = 1;
  while (at < sizeof bytes) {
    if (piece % 3 == 0 && at + 8 <= sizeof bytes) {
      uint64_t v = 0;
      for (int i = 0; i < 8; i++) v |= (uint64_t)bytes[at + i] << (8 * i);
      mlc_hasher_u64(h, v);
      at += 8;
    } else {
      size_t len = piece * 37 % 1201;
      if (len > sizeof bytes - at) len = sizeof bytes - at;
      mlc_hasher_update(h, bytes + at, len);
      at += len;
    }
    if (piece == 20) assert_int_equal(mlc_hasher_digest(h), mlc_hash64(bytes, at, 11));
    piece++;
  }
  assert_int_equal(mlc_hasher_digest(h), mlc_hash64(bytes, sizeof bytes, 11));
  mlc_hasher_free(h);
}

static void test_hasher_u64_and_str_have_the_documented_framing(void **state) {
  (void)state;
  /* u64 12345 as 8 little-endian bytes, then "abc" as u64 length 3 + bytes;
   * value from the Python reference over those 19 bytes. */
  mlc_hasher_t *h = mlc_hasher_new(0);
  mlc_hasher_u64(h, 12345);
  mlc_hasher_str(h, "abc");
  assert_int_equal(mlc_hasher_digest(h), 0xfc4228b35a786a53u);
  mlc_hasher_free(h);
  static const unsigned char framed[19] = {0x39, 0x30, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0,
                                           'a', 'b', 'c'};
  assert_int_equal(mlc_hash64(framed, sizeof framed, 0), 0xfc4228b35a786a53u);
}

static uint64_t hash_two_strings(const char *a, const char *b) {
  mlc_hasher_t *h = mlc_hasher_new(0);
  mlc_hasher_str(h, a);
  mlc_hasher_str(h, b);
  uint64_t d = mlc_hasher_digest(h);
  mlc_hasher_free(h);
  return d;
}

static void test_hasher_str_separates_fields(void **state) {
  (void)state;
  assert_true(hash_two_strings("ab", "c") != hash_two_strings("a", "bc"));
  assert_true(hash_two_strings("", "x") != hash_two_strings("x", ""));
  assert_true(hash_two_strings(NULL, "x") != hash_two_strings("", "x"));
  assert_int_equal(hash_two_strings("k", "v"), hash_two_strings("k", "v"));
}

static void test_digest_does_not_consume_the_state(void **state) {
  (void)state;
  mlc_hasher_t *h = mlc_hasher_new(0);
  mlc_hasher_update(h, "ab", 2);
  assert_int_equal(mlc_hasher_digest(h), mlc_hasher_digest(h));
  mlc_hasher_update(h, "c", 1);
  assert_int_equal(mlc_hasher_digest(h), 0x44BC2CF5AD770999u);
  mlc_hasher_free(h);
}

static void test_hash_hex_prints_16_lowercase_digits(void **state) {
  (void)state;
  char buf[17];
  mlc_hash_hex(0xEF46DB3751D8E999u, buf);
  assert_string_equal(buf, "ef46db3751d8e999");
  mlc_hash_hex(0x1Au, buf);
  assert_string_equal(buf, "000000000000001a");
}

static void test_hasher_new_reports_out_of_memory(void **state) {
  (void)state;
  mlc_alloc_fail_after(0);
  mlc_hasher_t *h = mlc_hasher_new(0);
  mlc_alloc_fail_after(-1);
  assert_null(h);
  mlc_hasher_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_xxh64_matches_reference_vectors),
      cmocka_unit_test(test_xxh64_long_input_with_seed_matches_reference),
      cmocka_unit_test(test_streaming_equals_one_shot_at_every_split),
      cmocka_unit_test(test_streaming_in_mixed_pieces_equals_one_shot),
      cmocka_unit_test(test_hasher_u64_and_str_have_the_documented_framing),
      cmocka_unit_test(test_hasher_str_separates_fields),
      cmocka_unit_test(test_digest_does_not_consume_the_state),
      cmocka_unit_test(test_hash_hex_prints_16_lowercase_digits),
      cmocka_unit_test(test_hasher_new_reports_out_of_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
