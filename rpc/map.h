/*
 * map.h - private to rpc/: a hash map from byte strings to pointers, for the
 * broker's peers (by routing identity), devices (by device key) and each
 * client's jobs (by job id). Open addressing with linear probing and
 * backward-shift deletion, so there are no tombstones to sweep.
 *
 * Keys are borrowed: each key must live in its value (peer->ident, job->id)
 * for as long as the entry exists.
 */
#ifndef MLC_RPC_MAP_H
#define MLC_RPC_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint64_t hash;
  const void *key; /* NULL: empty slot */
  size_t len;
  void *value;
} rpc_map_slot_t;

typedef struct {
  rpc_map_slot_t *slots;
  size_t cap, len; /* cap is 0 or a power of two */
} rpc_map_t;

#define RPC_MAP_INIT {NULL, 0, 0}

/* The value stored under key, or NULL. */
void *rpc_map_get(const rpc_map_t *m, const void *key, size_t len);
/* Inserts or replaces. MLC_OK or MLC_ENOMEM (map unchanged). */
int rpc_map_put(rpc_map_t *m, const void *key, size_t len, void *value);
/* Removes key; returns its value (NULL when absent). */
void *rpc_map_del(rpc_map_t *m, const void *key, size_t len);
void rpc_map_free(rpc_map_t *m); /* the slots, not the values */

/* Iterate: for (size_t i = 0; i < m.cap; i++) if (m.slots[i].key) ... Do not
 * insert or delete while iterating; collect first. */

#endif /* MLC_RPC_MAP_H */
