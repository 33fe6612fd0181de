/*
 * hash.c - XXH64 (libxxhash): the stable 64-bit hash behind workload keys.
 *
 * XXH64 is specified bit for bit and independent of endianness, so keys are
 * the same on every machine. The streaming hasher feeds integers as explicit
 * little-endian bytes and strings with a length prefix, so ("ab", "c") and
 * ("a", "bc") hash differently.
 *
 * The state is embedded (XXH_STATIC_LINKING_ONLY exposes its layout) so that
 * it is allocated through mlc_malloc like everything else; the layout comes
 * from the header of the libxxhash we link, which is what makes this safe.
 */
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "support/support.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct mlc_hasher {
  XXH64_state_t state;
};

uint64_t mlc_hash64(const void *data, size_t len, uint64_t seed) {
  return XXH64(len ? data : "", len, seed);
}

mlc_hasher_t *mlc_hasher_new(uint64_t seed) {
  mlc_hasher_t *h = mlc_malloc(sizeof *h);
  if (h) XXH64_reset(&h->state, seed);
  return h;
}

void mlc_hasher_free(mlc_hasher_t *h) { mlc_free(h); }

void mlc_hasher_update(mlc_hasher_t *h, const void *data, size_t len) {
  if (len) XXH64_update(&h->state, data, len);
}

void mlc_hasher_u64(mlc_hasher_t *h, uint64_t v) {
  unsigned char bytes[8];
  for (int i = 0; i < 8; i++) bytes[i] = (unsigned char)(v >> (8 * i));
  XXH64_update(&h->state, bytes, sizeof bytes);
}

/* NULL is hashed as a length no string can have, so it differs from "". */
void mlc_hasher_str(mlc_hasher_t *h, const char *s) {
  if (!s) {
    mlc_hasher_u64(h, UINT64_MAX);
    return;
  }
  size_t len = strlen(s);
  mlc_hasher_u64(h, (uint64_t)len);
  mlc_hasher_update(h, s, len);
}

uint64_t mlc_hasher_digest(const mlc_hasher_t *h) { return XXH64_digest(&h->state); }

void mlc_hash_hex(uint64_t h, char buf[17]) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 15; i >= 0; i--, h >>= 4) buf[i] = digits[h & 15];
  buf[16] = '\0';
}
