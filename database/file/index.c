/*
 * index.c - the in-memory indexes of the file backend, built as lines are
 * loaded or committed:
 *   - by id (dedup on commit),
 *   - by (workload, target) -> group: every record in file order, and the
 *     measurements sorted by (median, id) for best / top_k,
 *   - by trace_hash -> a chain of the records of that trace ("was this
 *     candidate measured?"),
 *   - interned target and device strings (a few distinct values shared by
 *     millions of records).
 * A record in the index is ~100 bytes; its trace and the rest stay in the
 * file and are read back only for the records a query returns (DESIGN.md:
 * load lazily, do not replay every trace at start-up).
 *
 * Groups sort lazily: a commit appends its measurements unsorted and the
 * next query of that group sorts the new ones and merges them in, so a bulk
 * load is O(n log n) once instead of an insertion per record.
 */
#include "database/file/file_priv.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* uint64 -> int32 multimap                                                  */
/* ------------------------------------------------------------------------ */

/* splitmix64's finaliser: keys that differ in one bit land far apart. */
static uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static void map_insert(u64map_t *m, uint64_t key, int32_t val) {
  size_t mask = m->cap - 1, i = mix(key) & mask;
  while (m->vals[i] != -1) i = (i + 1) & mask;
  m->keys[i] = key;
  m->vals[i] = val;
  m->len++;
}

static int map_grow(u64map_t *m) {
  size_t cap = m->cap ? m->cap * 2 : 64;
  u64map_t bigger = {mlc_malloc(cap * sizeof(uint64_t)), mlc_malloc(cap * sizeof(int32_t)), cap, 0};
  if (!bigger.keys || !bigger.vals) {
    u64map_free(&bigger);
    return mlc_error_set(MLC_ENOMEM, "out of memory indexing records");
  }
  memset(bigger.vals, 0xff, cap * sizeof(int32_t)); /* every slot -1 */
  for (size_t i = 0; i < m->cap; i++)
    if (m->vals[i] != -1) map_insert(&bigger, m->keys[i], m->vals[i]);
  u64map_free(m);
  *m = bigger;
  return MLC_OK;
}

int u64map_put(u64map_t *m, uint64_t key, int32_t val) {
  if ((m->len + 1) * 4 > m->cap * 3) { /* keep a free slot so probes end */
    int rc = map_grow(m);
    if (rc != MLC_OK) return rc;
  }
  map_insert(m, key, val);
  return MLC_OK;
}

int32_t u64map_next(const u64map_t *m, uint64_t key, size_t *slot) {
  if (m->cap == 0) return -1;
  size_t mask = m->cap - 1;
  size_t i = *slot == SIZE_MAX ? mix(key) & mask : (*slot + 1) & mask;
  for (; m->vals[i] != -1; i = (i + 1) & mask) {
    if (m->keys[i] == key) {
      *slot = i;
      return m->vals[i];
    }
  }
  return -1;
}

void u64map_free(u64map_t *m) {
  mlc_free(m->keys);
  mlc_free(m->vals);
  memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------------------ */
/* Records                                                                   */
/* ------------------------------------------------------------------------ */

void frecords_free(frecords_t *ix) {
  for (size_t i = 0; i < ix->groups.len; i++) {
    mlc_vec_free(&ix->groups.data[i].all);
    mlc_vec_free(&ix->groups.data[i].ok);
  }
  mlc_vec_free(&ix->recs);
  mlc_vec_free(&ix->groups);
  mlc_vec_free(&ix->strs);
  u64map_free(&ix->by_id);
  u64map_free(&ix->by_group);
  u64map_free(&ix->by_trace);
  u64map_free(&ix->by_str);
  mlc_arena_free(ix->arena);
  memset(ix, 0, sizeof *ix);
}

int32_t frecords_find_id(const frecords_t *ix, uint64_t id) {
  size_t slot = SIZE_MAX;
  return u64map_next(&ix->by_id, id, &slot);
}

static int32_t find_str(const frecords_t *ix, const char *s, size_t len, uint64_t h) {
  size_t slot = SIZE_MAX;
  int32_t i;
  while ((i = u64map_next(&ix->by_str, h, &slot)) >= 0)
    if (strncmp(ix->strs.data[i], s, len) == 0 && ix->strs.data[i][len] == '\0') return i;
  return -1;
}

/* The one copy of s[0..len) in the index (NULL when out of memory). */
static const char *intern(frecords_t *ix, const char *s, size_t len) {
  uint64_t h = mlc_hash64(s, len, 0);
  int32_t i = find_str(ix, s, len, h);
  if (i >= 0) return ix->strs.data[i];
  if (!ix->arena && !(ix->arena = mlc_arena_new())) return NULL;
  const char *copy = mlc_arena_strndup(ix->arena, s, len);
  if (!copy || mlc_vec_push(&ix->strs, copy) != MLC_OK ||
      u64map_put(&ix->by_str, h, (int32_t)ix->strs.len - 1) != MLC_OK)
    return NULL;
  return copy;
}

static uint64_t group_hash(uint64_t workload, const char *target) {
  return mix(workload) ^ mlc_hash64(target, strlen(target), 0);
}

int32_t frecords_find_group(const frecords_t *ix, uint64_t workload, const char *target) {
  size_t slot = SIZE_MAX;
  int32_t g;
  while ((g = u64map_next(&ix->by_group, group_hash(workload, target), &slot)) >= 0) {
    const fgroup_t *grp = &ix->groups.data[g];
    if (grp->workload == workload && strcmp(grp->target, target) == 0) return g;
  }
  return -1;
}

static int32_t group_for(frecords_t *ix, uint64_t workload, const char *target) {
  int32_t g = frecords_find_group(ix, workload, target);
  if (g >= 0) return g;
  fgroup_t grp = {.workload = workload, .target = target};
  if (mlc_vec_push(&ix->groups, grp) != MLC_OK) return -1;
  g = (int32_t)ix->groups.len - 1;
  return u64map_put(&ix->by_group, group_hash(workload, target), g) == MLC_OK ? g : -1;
}

/* Links record i in front of the chain of its trace_hash. */
static int link_trace(frecords_t *ix, int32_t i) {
  frec_t *r = &ix->recs.data[i];
  size_t slot = SIZE_MAX;
  int32_t head = u64map_next(&ix->by_trace, r->trace_hash, &slot);
  r->next_same_trace = head;
  if (head < 0) return u64map_put(&ix->by_trace, r->trace_hash, i);
  ix->by_trace.vals[slot] = i;
  return MLC_OK;
}

int frecords_add(frecords_t *ix, const fcodec_meta_t *m, int64_t off, size_t len) {
  frec_t r = {.id = m->id, .workload = m->workload, .trace_hash = m->trace_hash,
              .median = m->median, .created_at_us = m->created_at_us, .off = off,
              .len = (uint32_t)len, .error_kind = (uint8_t)m->error_kind};
  if (!(r.target = intern(ix, m->target, m->target_len)) ||
      !(r.device_key = intern(ix, m->device_key, m->device_key_len)) ||
      (r.group = group_for(ix, m->workload, r.target)) < 0 || mlc_vec_push(&ix->recs, r) != MLC_OK)
    return mlc_error_set(MLC_ENOMEM, "out of memory indexing records");
  int32_t i = (int32_t)ix->recs.len - 1;
  fgroup_t *g = &ix->groups.data[r.group];
  if (mlc_vec_push(&g->all, i) != MLC_OK ||
      (m->error_kind == MLC_ERROR_KIND_NONE && mlc_vec_push(&g->ok, i) != MLC_OK) ||
      u64map_put(&ix->by_id, m->id, i) != MLC_OK || link_trace(ix, i) != MLC_OK)
    return mlc_error_set(MLC_ENOMEM, "out of memory indexing records");
  ix->nfailures_by_kind[m->error_kind]++;
  return MLC_OK;
}

static int cmp_time(const void *a, const void *b, void *payload) {
  const frec_t *recs = payload;
  const frec_t *x = &recs[*(const int32_t *)a], *y = &recs[*(const int32_t *)b];
  if (x->median != y->median) return x->median < y->median ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id); /* = strcmp of the hex ids */
}

int frecords_sort_group(frecords_t *ix, fgroup_t *g) {
  size_t n = g->ok.len, s = g->nsorted;
  if (s == n) return MLC_OK;
  int32_t *v = g->ok.data;
  qsort_r(v + s, n - s, sizeof *v, cmp_time, ix->recs.data);
  if (s > 0) { /* merge the sorted prefix and the newly sorted tail */
    int32_t *out = mlc_malloc(n * sizeof *out);
    if (!out) return mlc_error_set(MLC_ENOMEM, "out of memory sorting records");
    size_t i = 0, j = s, k = 0;
    while (i < s && j < n) out[k++] = cmp_time(&v[j], &v[i], ix->recs.data) < 0 ? v[j++] : v[i++];
    while (i < s) out[k++] = v[i++];
    while (j < n) out[k++] = v[j++];
    memcpy(v, out, n * sizeof *out);
    mlc_free(out);
  }
  g->nsorted = n;
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Workloads                                                                 */
/* ------------------------------------------------------------------------ */

void fworkloads_free(fworkloads_t *wl) {
  mlc_vec_free(&wl->list);
  u64map_free(&wl->by_key);
  mlc_arena_free(wl->arena);
  memset(wl, 0, sizeof *wl);
}

int32_t fworkloads_find(const fworkloads_t *wl, uint64_t key) {
  size_t slot = SIZE_MAX;
  return u64map_next(&wl->by_key, key, &slot);
}

int fworkloads_add(fworkloads_t *wl, uint64_t key, const char *name, const char *tvmscript) {
  if (!wl->arena && !(wl->arena = mlc_arena_new()))
    return mlc_error_set(MLC_ENOMEM, "out of memory loading workloads");
  fworkload_t w = {key, mlc_arena_strdup(wl->arena, name), mlc_arena_strdup(wl->arena, tvmscript)};
  if (!w.name || !w.tvmscript || mlc_vec_push(&wl->list, w) != MLC_OK ||
      u64map_put(&wl->by_key, key, (int32_t)wl->list.len - 1) != MLC_OK)
    return mlc_error_set(MLC_ENOMEM, "out of memory loading workloads");
  return MLC_OK;
}
