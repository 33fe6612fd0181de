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
 *
 * Structural hashes feed the hasher a few bytes at a time (an integer, a
 * short name), and XXH64_update is a call into the shared library that
 * copies small inputs into the state's own 32-byte buffer: a lowered
 * program's key spent most of its time there. So the hasher gathers input
 * in a buffer of its own and passes it on in large pieces; XXH64 of a
 * stream does not depend on how it is cut, so every key is what it was.
 */
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "support/support.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define HASHER_BUF 512

struct mlc_hasher {
  XXH64_state_t state;
  size_t n; /* bytes waiting in buf */
  unsigned char buf[HASHER_BUF];
};

uint64_t mlc_hash64(const void *data, size_t len, uint64_t seed) {
  return XXH64(len ? data : "", len, seed);
}

mlc_hasher_t *mlc_hasher_new(uint64_t seed) {
  mlc_hasher_t *h = mlc_malloc(sizeof *h);
  if (h) {
    XXH64_reset(&h->state, seed);
    h->n = 0;
  }
  return h;
}

void mlc_hasher_free(mlc_hasher_t *h) { mlc_free(h); }

static void hasher_flush(mlc_hasher_t *h) {
  if (h->n) XXH64_update(&h->state, h->buf, h->n);
  h->n = 0;
}

void mlc_hasher_update(mlc_hasher_t *h, const void *data, size_t len) {
  if (!len) return;
  if (h->n + len > HASHER_BUF) hasher_flush(h);
  if (len >= HASHER_BUF) {
    XXH64_update(&h->state, data, len);
    return;
  }
  memcpy(h->buf + h->n, data, len);
  h->n += len;
}

void mlc_hasher_u64(mlc_hasher_t *h, uint64_t v) {
  if (h->n + 8 > HASHER_BUF) hasher_flush(h);
  unsigned char *bytes = h->buf + h->n;
  for (int i = 0; i < 8; i++) bytes[i] = (unsigned char)(v >> (8 * i));
  h->n += 8;
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

/* The digest of everything fed so far; h itself is left as it was, so
 * feeding may go on. */
uint64_t mlc_hasher_digest(const mlc_hasher_t *h) {
  XXH64_state_t copy;
  XXH64_copyState(&copy, &h->state);
  if (h->n) XXH64_update(&copy, h->buf, h->n);
  return XXH64_digest(&copy);
}

void mlc_hash_hex(uint64_t h, char buf[17]) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 15; i >= 0; i--, h >>= 4) buf[i] = digits[h & 15];
  buf[16] = '\0';
}
