/*
 * workspace.c - the heap buffers of generated CPU code (runtime.h,
 * mlc_rt_workspace_alloc / mlc_rt_workspace_free): an Allocate too large for
 * the stack (a packed copy of an operand, a write cache of a whole tile)
 * gets one of these for the duration of its body, which is often one call
 * of the kernel or one iteration of a parallel loop.
 *
 * Straight malloc would make the kernel's speed depend on the process it
 * runs in: glibc serves blocks above its mmap threshold (128 KiB until it
 * adapts, per arena) with mmap and returns them with munmap, so a kernel
 * would page-fault its whole buffer in again on every call, and with the
 * pool's threads running each munmap also costs a TLB shootdown on the
 * other CPUs. Measured on GMM-1024 candidates: hundreds of page faults per
 * call inside the timed calls. So freed blocks are kept here, as TVM's
 * workspace pool keeps them, and handed out again.
 *
 * The cache: up to CACHE_SLOTS blocks, process-wide, under one mutex (an
 * allocation happens per kernel call or per parallel iteration, never in an
 * inner loop, so the lock is uncontended in practice). A request takes the
 * smallest cached block that holds it with the alignment asked for, if that
 * block is at most twice the request (a small buffer does not pin a large
 * one); else a new block, its size rounded up to whole pages so that blocks
 * of near sizes are interchangeable. A freed block goes into a free slot,
 * else replaces the smallest cached block when it is larger (which is
 * freed), else is freed. At most CACHE_MAX_BYTES stay cached. A destructor
 * frees the cache when the program exits or the shared library holding this
 * runtime is unloaded; fork handlers keep the mutex usable in a child.
 *
 * libc and pthreads only (it ships inside emitted shared libraries).
 */
#include "runtime_priv.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define CACHE_SLOTS 16
#define CACHE_MAX_BYTES ((uint64_t)1 << 30)
#define PAGE 4096u

typedef struct {
  void *p;
  uint64_t bytes; /* usable size: the request rounded up to pages */
  uint64_t align;
} block_t;

/* Block headers live apart from the blocks, so a cached block keeps the
 * alignment aligned_alloc gave it; a live block's size is found by address. */
static struct {
  pthread_mutex_t lock;
  block_t cached[CACHE_SLOTS];
  int ncached;
  uint64_t cached_bytes;
  /* live blocks: address -> size, so a free knows what it returns */
  block_t *live;
  int nlive, live_cap;
} ws = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t ws_once = PTHREAD_ONCE_INIT;

static void ws_fork_prepare(void) { pthread_mutex_lock(&ws.lock); }
static void ws_fork_parent(void) { pthread_mutex_unlock(&ws.lock); }
static void ws_fork_child(void) { pthread_mutex_init(&ws.lock, NULL); }
static void ws_init(void) { pthread_atfork(ws_fork_prepare, ws_fork_parent, ws_fork_child); }

/* Records p as live (under the lock); false when out of memory. */
static bool live_add(block_t b) {
  if (ws.nlive == ws.live_cap) {
    int cap = ws.live_cap ? 2 * ws.live_cap : 16;
    block_t *grown = realloc(ws.live, (size_t)cap * sizeof *grown);
    if (!grown) return false;
    ws.live = grown;
    ws.live_cap = cap;
  }
  ws.live[ws.nlive++] = b;
  return true;
}

/* Removes p from the live set (under the lock) into *out; false when p is
 * not a live block of this cache. */
static bool live_take(void *p, block_t *out) {
  for (int i = ws.nlive - 1; i >= 0; i--) {
    if (ws.live[i].p != p) continue;
    *out = ws.live[i];
    ws.live[i] = ws.live[--ws.nlive];
    return true;
  }
  return false;
}

void *mlc_rt_workspace_alloc(uint64_t bytes, uint64_t align) {
  pthread_once(&ws_once, ws_init);
  if (align < sizeof(void *)) align = sizeof(void *);
  if (bytes == 0) bytes = 1;
  if (bytes > UINT64_MAX - PAGE) return NULL;
  uint64_t size = (bytes + PAGE - 1) / PAGE * PAGE;
  if (align > PAGE && size % align) {
    if (size > UINT64_MAX - align) return NULL;
    size = (size + align - 1) / align * align; /* aligned_alloc wants a multiple */
  }
  pthread_mutex_lock(&ws.lock);
  int best = -1;
  for (int i = 0; i < ws.ncached; i++) {
    const block_t *c = &ws.cached[i];
    if (c->bytes < size || c->bytes / 2 > size || c->align < align) continue;
    if (best < 0 || c->bytes < ws.cached[best].bytes) best = i;
  }
  block_t b = {0};
  if (best >= 0) {
    b = ws.cached[best];
    ws.cached[best] = ws.cached[--ws.ncached];
    ws.cached_bytes -= b.bytes;
  }
  pthread_mutex_unlock(&ws.lock);
  if (!b.p) {
    b.p = aligned_alloc((size_t)align, (size_t)size);
    if (!b.p) return NULL;
    b.bytes = size;
    b.align = align;
  }
  pthread_mutex_lock(&ws.lock);
  bool ok = live_add(b);
  pthread_mutex_unlock(&ws.lock);
  if (!ok) {
    free(b.p);
    return NULL;
  }
  return b.p;
}

void mlc_rt_workspace_free(void *p) {
  if (!p) return;
  pthread_once(&ws_once, ws_init);
  pthread_mutex_lock(&ws.lock);
  block_t b;
  if (!live_take(p, &b)) {
    /* Not a block of this cache: a caller's bug, which free() would only
     * make worse; leave it. */
    pthread_mutex_unlock(&ws.lock);
    return;
  }
  void *drop[CACHE_SLOTS + 1];
  int ndrop = 0;
  if (ws.ncached < CACHE_SLOTS) {
    ws.cached[ws.ncached++] = b;
    ws.cached_bytes += b.bytes;
  } else {
    int smallest = 0;
    for (int i = 1; i < ws.ncached; i++)
      if (ws.cached[i].bytes < ws.cached[smallest].bytes) smallest = i;
    if (ws.cached[smallest].bytes < b.bytes) {
      drop[ndrop++] = ws.cached[smallest].p;
      ws.cached_bytes += b.bytes - ws.cached[smallest].bytes;
      ws.cached[smallest] = b;
    } else {
      drop[ndrop++] = b.p;
    }
  }
  /* Over the byte limit: give back the largest blocks until under it. */
  while (ws.cached_bytes > CACHE_MAX_BYTES && ws.ncached > 0) {
    int largest = 0;
    for (int i = 1; i < ws.ncached; i++)
      if (ws.cached[i].bytes > ws.cached[largest].bytes) largest = i;
    drop[ndrop++] = ws.cached[largest].p;
    ws.cached_bytes -= ws.cached[largest].bytes;
    ws.cached[largest] = ws.cached[--ws.ncached];
  }
  pthread_mutex_unlock(&ws.lock);
  for (int i = 0; i < ndrop; i++) free(drop[i]);
}

/* Process exit or dlclose: nothing runs kernels any more. */
__attribute__((destructor)) static void ws_shutdown(void) {
  for (int i = 0; i < ws.ncached; i++) free(ws.cached[i].p);
  ws.ncached = 0;
  ws.cached_bytes = 0;
  free(ws.live);
  ws.live = NULL;
  ws.nlive = ws.live_cap = 0;
}
