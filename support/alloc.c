/*
 * alloc.c - the one allocation entry point of mlc-tune.
 *
 * Everything the project allocates goes through mlc_realloc, so tests can make
 * the n-th allocation fail (mlc_alloc_fail_after) and walk every failure path
 * of a function: count its allocations with mlc_alloc_count, then fail each in
 * turn. The counters are process-wide and atomic because workers and the
 * broker allocate from several threads.
 *
 * Memory from here is plain libc memory: mlc_free is free, so a block may be
 * handed to code that frees it with free() (jansson, for example).
 */
#include "support/support.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static atomic_long n_allocs;
/* Allocation index from which injected failures start; negative: never. */
static atomic_long fail_from = -1;

void mlc_alloc_fail_after(long n) {
  if (n < 0)
    atomic_store(&fail_from, -1);
  else
    atomic_store(&fail_from, atomic_load(&n_allocs) + n);
}

long mlc_alloc_count(void) { return atomic_load(&n_allocs); }

/* Counts the attempt and says whether injection makes it fail. */
static bool alloc_should_fail(void) {
  long index = atomic_fetch_add(&n_allocs, 1);
  long from = atomic_load(&fail_from);
  return from >= 0 && index >= from;
}

void *mlc_realloc(void *ptr, size_t size) {
  if (size == 0) {
    free(ptr);
    return NULL;
  }
  if (alloc_should_fail()) return NULL;
  return realloc(ptr, size);
}

/* A zero-byte request still gets a unique block: NULL means failure only. */
void *mlc_malloc(size_t size) { return mlc_realloc(NULL, size ? size : 1); }

void *mlc_calloc(size_t n, size_t size) {
  if (size != 0 && n > SIZE_MAX / size) return NULL;
  size_t total = n * size;
  void *p = mlc_malloc(total);
  if (p) memset(p, 0, total);
  return p;
}

void mlc_free(void *ptr) { free(ptr); }

char *mlc_strdup(const char *s) {
  if (!s) return NULL;
  size_t len = strlen(s);
  char *copy = mlc_malloc(len + 1);
  if (copy) memcpy(copy, s, len + 1);
  return copy;
}
