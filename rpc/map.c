/*
 * map.c - the byte-keyed hash map of map.h. Capacity doubles at 3/4 load;
 * deletion shifts the following cluster back so lookups never need
 * tombstones.
 */
#include "rpc/map.h"

#include <string.h>

#include "support/support.h"

static size_t find(const rpc_map_t *m, uint64_t h, const void *key, size_t len, bool *found) {
  size_t mask = m->cap - 1, i = (size_t)h & mask;
  while (m->slots[i].key) {
    const rpc_map_slot_t *s = &m->slots[i];
    if (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0) {
      *found = true;
      return i;
    }
    i = (i + 1) & mask;
  }
  *found = false;
  return i;
}

void *rpc_map_get(const rpc_map_t *m, const void *key, size_t len) {
  if (!m->len) return NULL;
  bool found;
  size_t i = find(m, mlc_hash64(key, len, 0), key, len, &found);
  return found ? m->slots[i].value : NULL;
}

static int grow(rpc_map_t *m) {
  size_t cap = m->cap ? m->cap * 2 : 16;
  rpc_map_slot_t *slots = mlc_calloc(cap, sizeof *slots);
  if (!slots) return mlc_error_set(MLC_ENOMEM, "out of memory growing a map");
  rpc_map_t bigger = {slots, cap, 0};
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->slots[i].key) continue;
    bool found;
    size_t j = find(&bigger, m->slots[i].hash, m->slots[i].key, m->slots[i].len, &found);
    bigger.slots[j] = m->slots[i];
    bigger.len++;
  }
  mlc_free(m->slots);
  *m = bigger;
  return MLC_OK;
}

int rpc_map_put(rpc_map_t *m, const void *key, size_t len, void *value) {
  if ((m->len + 1) * 4 > m->cap * 3 && grow(m) != MLC_OK) return MLC_ENOMEM;
  uint64_t h = mlc_hash64(key, len, 0);
  bool found;
  size_t i = find(m, h, key, len, &found);
  m->slots[i] = (rpc_map_slot_t){h, key, len, value};
  if (!found) m->len++;
  return MLC_OK;
}

void *rpc_map_del(rpc_map_t *m, const void *key, size_t len) {
  if (!m->len) return NULL;
  bool found;
  size_t mask = m->cap - 1, i = find(m, mlc_hash64(key, len, 0), key, len, &found);
  if (!found) return NULL;
  void *value = m->slots[i].value;
  /* Backward shift: move later members of the cluster into the hole when
   * their home slot is not after the hole (cyclically). */
  size_t hole = i, j = i;
  for (;;) {
    j = (j + 1) & mask;
    if (!m->slots[j].key) break;
    size_t home = (size_t)m->slots[j].hash & mask;
    bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
    if (movable) {
      m->slots[hole] = m->slots[j];
      hole = j;
    }
  }
  m->slots[hole] = (rpc_map_slot_t){0, NULL, 0, NULL};
  m->len--;
  return value;
}

void rpc_map_free(rpc_map_t *m) {
  mlc_free(m->slots);
  *m = (rpc_map_t)RPC_MAP_INIT;
}
