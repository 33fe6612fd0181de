/*
 * arena.c - bump allocation for objects that share one lifetime.
 *
 * IR nodes, parser results and candidate schedules are allocated here and freed
 * together with mlc_arena_free; nothing is freed one by one. Memory comes in
 * chunks of MLC_ARENA_CHUNK bytes taken through mlc_malloc (so failure
 * injection reaches arenas too); a request larger than a quarter chunk gets a
 * chunk of its own, so one big array does not waste the rest of a chunk.
 *
 * Failure is either sticky (the arena remembers it: callers may allocate a
 * whole tree and check mlc_arena_failed once) or, when an out-of-memory handler
 * is set, a longjmp to it (the parser and IR clones use that and skip checks).
 *
 * An arena is not thread-safe: one owner at a time.
 */
#include "support/support.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum {
  MLC_ARENA_ALIGN = 16,
  MLC_ARENA_CHUNK = 64 * 1024,
  MLC_ARENA_BIG = MLC_ARENA_CHUNK / 4,
};

typedef struct arena_chunk {
  struct arena_chunk *next;
  size_t size; /* usable bytes after the header */
  size_t used;
} arena_chunk_t;

struct mlc_arena {
  arena_chunk_t *head; /* the chunk small requests are carved from */
  size_t bytes;        /* bytes handed out (requested sizes) */
  bool failed;
  jmp_buf *oom;
};

/* The header is padded so that chunk data starts 16-byte aligned, given that
 * malloc returns blocks aligned for max_align_t (16 on every target we run). */
#define CHUNK_HEADER \
  ((sizeof(arena_chunk_t) + MLC_ARENA_ALIGN - 1) & ~(size_t)(MLC_ARENA_ALIGN - 1))

static unsigned char *chunk_data(arena_chunk_t *c) { return (unsigned char *)c + CHUNK_HEADER; }

mlc_arena_t *mlc_arena_new(void) {
  mlc_arena_t *arena = mlc_calloc(1, sizeof *arena);
  return arena; /* the first chunk is taken on first use */
}

void mlc_arena_free(mlc_arena_t *arena) {
  if (!arena) return;
  arena_chunk_t *c = arena->head;
  while (c) {
    arena_chunk_t *next = c->next;
    mlc_free(c);
    c = next;
  }
  mlc_free(arena);
}

static arena_chunk_t *chunk_new(size_t size) {
  if (size > SIZE_MAX - CHUNK_HEADER) return NULL;
  arena_chunk_t *c = mlc_malloc(CHUNK_HEADER + size);
  if (!c) return NULL;
  c->next = NULL;
  c->size = size;
  c->used = 0;
  return c;
}

static void *arena_fail(mlc_arena_t *arena, size_t size) {
  arena->failed = true;
  mlc_error_set(MLC_ENOMEM, "out of memory (arena request of %zu bytes)", size);
  if (arena->oom) longjmp(*arena->oom, 1);
  return NULL;
}

/* A big request gets its own chunk, linked behind the head so the head keeps
 * serving small requests. */
static void *alloc_big(mlc_arena_t *arena, size_t rounded) {
  arena_chunk_t *c = chunk_new(rounded);
  if (!c) return NULL;
  c->used = rounded;
  if (arena->head) {
    c->next = arena->head->next;
    arena->head->next = c;
  } else {
    arena->head = c;
  }
  return chunk_data(c);
}

static void *alloc_small(mlc_arena_t *arena, size_t rounded) {
  arena_chunk_t *c = arena->head;
  if (!c || c->size - c->used < rounded) {
    c = chunk_new(MLC_ARENA_CHUNK);
    if (!c) return NULL;
    c->next = arena->head;
    arena->head = c;
  }
  void *p = chunk_data(c) + c->used;
  c->used += rounded;
  return p;
}

void *mlc_arena_alloc(mlc_arena_t *arena, size_t size) {
  if (size > SIZE_MAX - MLC_ARENA_ALIGN - CHUNK_HEADER) return arena_fail(arena, size);
  /* Zero-byte requests still get a distinct block. */
  size_t rounded = (size + MLC_ARENA_ALIGN - 1) & ~(size_t)(MLC_ARENA_ALIGN - 1);
  if (rounded == 0) rounded = MLC_ARENA_ALIGN;
  void *p = rounded > MLC_ARENA_BIG ? alloc_big(arena, rounded) : alloc_small(arena, rounded);
  if (!p) return arena_fail(arena, size);
  memset(p, 0, rounded);
  arena->bytes += size;
  return p;
}

void *mlc_arena_memdup(mlc_arena_t *arena, const void *p, size_t size) {
  void *copy = mlc_arena_alloc(arena, size);
  if (copy && size) memcpy(copy, p, size);
  return copy;
}

char *mlc_arena_strndup(mlc_arena_t *arena, const char *s, size_t len) {
  if (!s) return NULL;
  size_t n = strnlen(s, len);
  char *copy = mlc_arena_alloc(arena, n + 1); /* zeroed: the NUL is there */
  if (copy) memcpy(copy, s, n);
  return copy;
}

char *mlc_arena_strdup(mlc_arena_t *arena, const char *s) {
  if (!s) return NULL;
  return mlc_arena_memdup(arena, s, strlen(s) + 1);
}

/* The handler is held back while formatting so a longjmp cannot skip va_end;
 * it is taken after the va_lists are closed. */
char *mlc_arena_printf(mlc_arena_t *arena, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = NULL;
  jmp_buf *oom = arena->oom;
  arena->oom = NULL;
  if (n >= 0) {
    s = mlc_arena_alloc(arena, (size_t)n + 1);
    if (s) vsnprintf(s, (size_t)n + 1, fmt, ap2);
  } else {
    mlc_error_set(MLC_EINVAL, "bad format string '%s'", fmt);
  }
  va_end(ap2);
  arena->oom = oom;
  if (!s && n >= 0 && oom) longjmp(*oom, 1);
  return s;
}

void *mlc_arena_grow(mlc_arena_t *arena, void *old, size_t n_old, size_t n_new, size_t elem) {
  if (elem != 0 && n_new > SIZE_MAX / elem) return arena_fail(arena, SIZE_MAX);
  void *p = mlc_arena_alloc(arena, n_new * elem);
  if (p && old) {
    size_t keep = n_old < n_new ? n_old : n_new;
    memcpy(p, old, keep * elem);
  }
  return p;
}

bool mlc_arena_failed(const mlc_arena_t *arena) { return arena->failed; }

size_t mlc_arena_bytes(const mlc_arena_t *arena) { return arena->bytes; }

jmp_buf *mlc_arena_set_oom_handler(mlc_arena_t *arena, jmp_buf *handler) {
  jmp_buf *previous = arena->oom;
  arena->oom = handler;
  return previous;
}
