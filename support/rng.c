/*
 * rng.c - the portable random number generator behind sampling and mutation.
 *
 * xoshiro256** (Blackman and Vigna), its state filled by four outputs of
 * splitmix64 from the seed, as the authors recommend. Everything is 64-bit
 * integer arithmetic, so one seed gives one sequence on every machine and
 * compiler; the search relies on that to replay candidates.
 *
 * Bounded draws use bitmask rejection on the top bits: draw, keep the top
 * ceil(log2 n) bits, retry if the value is >= n. There is no modulo bias, on
 * average fewer than two draws are needed, and the method is short enough to
 * re-implement exactly in another language (the golden tests do, in Python).
 */
#include "support/support.h"

static uint64_t rotl64(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t splitmix64_next(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}

/* splitmix64 is a bijection of a counter, so four consecutive outputs are
 * never all zero: the one state xoshiro must avoid cannot occur. */
void mlc_rng_seed(mlc_rng_t *rng, uint64_t seed) {
  uint64_t state = seed;
  for (int i = 0; i < 4; i++) rng->s[i] = splitmix64_next(&state);
}

uint64_t mlc_rng_next(mlc_rng_t *rng) {
  uint64_t *s = rng->s;
  uint64_t result = rotl64(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl64(s[3], 45);
  return result;
}

/* Number of significant bits of x (0 for 0). */
static int bit_length(uint64_t x) {
#if defined(__GNUC__)
  return x ? 64 - __builtin_clzll(x) : 0;
#else
  int n = 0;
  while (x) {
    x >>= 1;
    n++;
  }
  return n;
#endif
}

uint64_t mlc_rng_below(mlc_rng_t *rng, uint64_t n) {
  MLC_ASSERT(n > 0);
  if (n == 1) return 0; /* no draw: nothing to choose */
  int shift = 64 - bit_length(n - 1);
  for (;;) {
    uint64_t x = mlc_rng_next(rng) >> shift;
    if (x < n) return x;
  }
}

int64_t mlc_rng_range(mlc_rng_t *rng, int64_t lo, int64_t hi) {
  MLC_ASSERT(lo <= hi);
  uint64_t span = (uint64_t)hi - (uint64_t)lo; /* wraps correctly in unsigned */
  uint64_t r = span == UINT64_MAX ? mlc_rng_next(rng) : mlc_rng_below(rng, span + 1);
  uint64_t u = (uint64_t)lo + r;
  /* Back to signed without implementation-defined conversion. */
  if (u <= (uint64_t)INT64_MAX) return (int64_t)u;
  return -(int64_t)(UINT64_MAX - u) - 1;
}

double mlc_rng_uniform(mlc_rng_t *rng) {
  return (double)(mlc_rng_next(rng) >> 11) * 0x1.0p-53;
}

/* mlc_rng_uniform is in this file, so the loop inlines it: no call each. */
void mlc_rng_uniform_fill(mlc_rng_t *rng, double *out, size_t n) {
  for (size_t i = 0; i < n; i++) out[i] = mlc_rng_uniform(rng);
}

/* The child is seeded through splitmix64 from this output, so its stream is
 * unrelated to the parent's state. */
uint64_t mlc_rng_fork_seed(mlc_rng_t *rng) { return mlc_rng_next(rng); }
