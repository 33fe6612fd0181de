/*
 * ptrmap.h - a small open-addressing map from pointers to pointers, kept in an
 * arena. Private to tir/: used where IR nodes (variables, buffers) are looked up
 * by identity (cloning, substitution, equality). Keys are never removed.
 */
#ifndef MLC_TIR_PTRMAP_H
#define MLC_TIR_PTRMAP_H

#include "support/support.h"

#include <string.h>

typedef struct {
  mlc_arena_t *arena;
  size_t cap, len; /* cap is a power of two or 0 */
  const void **keys;
  void **vals;
} tir_ptrmap_t;

static inline void tir_ptrmap_init(tir_ptrmap_t *m, mlc_arena_t *arena) {
  memset(m, 0, sizeof(*m));
  m->arena = arena;
}

static inline size_t tir_ptrmap_slot_(const void *key, size_t cap) {
  uintptr_t h = (uintptr_t)key;
  h ^= h >> 17;
  h *= (uintptr_t)0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 7) & (cap - 1);
}

static inline void *tir_ptrmap_get(const tir_ptrmap_t *m, const void *key) {
  if (!m->cap) return NULL;
  for (size_t i = tir_ptrmap_slot_(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (m->keys[i] == key) return m->vals[i];
    if (!m->keys[i]) return NULL;
  }
}

/* Returns false when the arena cannot grow the table. */
static inline bool tir_ptrmap_put(tir_ptrmap_t *m, const void *key, void *val) {
  if ((m->len + 1) * 2 > m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 32;
    const void **keys = mlc_arena_alloc(m->arena, cap * sizeof(*keys));
    void **vals = mlc_arena_alloc(m->arena, cap * sizeof(*vals));
    if (!keys || !vals) return false;
    for (size_t i = 0; i < m->cap; i++) {
      if (!m->keys[i]) continue;
      size_t j = tir_ptrmap_slot_(m->keys[i], cap);
      while (keys[j]) j = (j + 1) & (cap - 1);
      keys[j] = m->keys[i];
      vals[j] = m->vals[i];
    }
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
  }
  size_t i = tir_ptrmap_slot_(key, m->cap);
  while (m->keys[i] && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
  if (!m->keys[i]) m->len++;
  m->keys[i] = key;
  m->vals[i] = val;
  return true;
}

#endif /* MLC_TIR_PTRMAP_H */
