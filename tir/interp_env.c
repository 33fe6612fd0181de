/*
 * interp_env.c - the reference interpreter's state: variable and buffer
 * bindings with an undo log, the scratch area for vector lanes, storages, and
 * error reporting.
 *
 * Scopes are marks: a statement records the lengths of the undo logs, the
 * storage list and the scratch top when it starts, and interp_release puts
 * them back when it ends. Binding is therefore O(1) and leaving a scope costs
 * only what was bound inside it, which keeps a block instance in a hot loop
 * free of allocation.
 */
#include "tir/interp_internal.h"

#include <stdio.h>
#include <string.h>

/* Scratch chunk size in lanes: a 64-lane value takes 512 bytes, so a chunk
 * holds a deep vector expression. Larger requests get a chunk of their own. */
#define INTERP_CHUNK_LANES 4096

int interp_init(interp_t *it, const tir_func_t *f) {
  memset(it, 0, sizeof(*it));
  it->func = f;
  it->arena = mlc_arena_new();
  if (!it->arena) return mlc_error_set(MLC_ENOMEM, "interpreter: out of memory");
  tir_ptrmap_init(&it->vars, it->arena);
  tir_ptrmap_init(&it->bufs, it->arena);
  return MLC_OK;
}

void interp_free(interp_t *it) {
  interp_mark_t all = {0, 0, 0, 0, 0};
  interp_release(it, all);
  for (size_t i = 0; i < it->chunks.len; i++) mlc_free(it->chunks.data[i].data);
  mlc_vec_free(&it->chunks);
  mlc_vec_free(&it->var_undo);
  mlc_vec_free(&it->buf_undo);
  mlc_vec_free(&it->storages);
  mlc_arena_free(it->arena);
  it->arena = NULL;
}

void interp_release_slow(interp_t *it, interp_mark_t m) {
  while (it->var_undo.len > m.var_undo) {
    interp_var_undo_t *u = &it->var_undo.data[--it->var_undo.len];
    *u->slot = u->old;
  }
  while (it->buf_undo.len > m.buf_undo) {
    interp_buf_undo_t *u = &it->buf_undo.data[--it->buf_undo.len];
    *u->slot = u->old;
  }
  while (it->storages.len > m.storages) {
    interp_storage_t *s = &it->storages.data[--it->storages.len];
    if (s->owned) mlc_free(s->data);
  }
  it->chunk = m.chunk;
  it->used = m.used;
}

int interp_oom(interp_t *it) {
  (void)it;
  return mlc_error_set(MLC_ENOMEM, "interpreter: out of memory");
}

/* ------------------------------------------------------------------------ */
/* Bindings                                                                  */
/* ------------------------------------------------------------------------ */

static interp_var_slot_t *var_slot_create(interp_t *it, const tir_var_t *v) {
  interp_var_slot_t *slot = interp_var_slot(it, v);
  if (slot) return slot;
  slot = mlc_arena_alloc(it->arena, sizeof(*slot));
  if (!slot || !tir_ptrmap_put(&it->vars, v, slot)) return NULL;
  return slot;
}

int interp_bind_var(interp_t *it, const tir_var_t *v, const interp_value_t *val,
                    interp_var_slot_t **slot_out) {
  interp_var_slot_t *slot = var_slot_create(it, v);
  if (!slot) return interp_oom(it);
  /* Checked by hand: this runs for every iter var of every block instance. */
  if (it->var_undo.len == it->var_undo.cap &&
      mlc_vec_reserve(&it->var_undo, it->var_undo.len + 1) != MLC_OK)
    return interp_oom(it);
  it->var_undo.data[it->var_undo.len++] = (interp_var_undo_t){slot, *slot};
  slot->val = *val;
  slot->bound = true;
  if (slot_out) *slot_out = slot;
  return MLC_OK;
}

int interp_bind_int(interp_t *it, const tir_var_t *v, int64_t value) {
  interp_value_t val = {tir_dtype_scalar(v->dtype), interp_wrap(v->dtype, (uint64_t)value), NULL};
  if (interp_class(v->dtype) == INTERP_FLOAT)
    return interp_fail(it, "variable %s of a float dtype used as an integer", v->u.var.name);
  return interp_bind_var(it, v, &val, NULL);
}

int interp_bind_buffer(interp_t *it, const tir_buffer_t *b, const interp_view_t *view) {
  interp_buf_slot_t *slot = interp_buf_slot(it, b);
  if (!slot) {
    slot = mlc_arena_alloc(it->arena, sizeof(*slot));
    if (!slot || !tir_ptrmap_put(&it->bufs, b, slot)) return interp_oom(it);
  }
  interp_buf_undo_t u = {slot, *slot};
  if (mlc_vec_push(&it->buf_undo, u) != MLC_OK) return interp_oom(it);
  slot->view = *view;
  slot->bound = true;
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Scratch: lanes of vector values, stack-like                               */
/* ------------------------------------------------------------------------ */

static interp_scalar_t *scratch_alloc(interp_t *it, size_t n) {
  while (it->chunk < it->chunks.len) {
    interp_chunk_t *c = &it->chunks.data[it->chunk];
    if (it->used + n <= c->cap) {
      interp_scalar_t *p = c->data + it->used;
      it->used += n;
      return p;
    }
    it->chunk++;
    it->used = 0;
  }
  /* Past the last chunk: add one (at least n lanes). */
  size_t cap = n > INTERP_CHUNK_LANES ? n : INTERP_CHUNK_LANES;
  interp_chunk_t c = {mlc_malloc(cap * sizeof(interp_scalar_t)), cap};
  if (!c.data) return NULL;
  if (mlc_vec_push(&it->chunks, c) != MLC_OK) {
    mlc_free(c.data);
    return NULL;
  }
  it->chunk = it->chunks.len - 1;
  it->used = n;
  return c.data;
}

int interp_value_alloc_lanes(interp_t *it, interp_value_t *out, tir_dtype_t t) {
  out->t = t;
  out->v = scratch_alloc(it, t.lanes);
  return out->v ? MLC_OK : interp_oom(it);
}

/* ------------------------------------------------------------------------ */
/* Storages                                                                  */
/* ------------------------------------------------------------------------ */

int interp_storage_add(interp_t *it, int64_t *id_out, const char *name, void *data,
                       int64_t nbytes, tir_dtype_t dtype) {
  interp_storage_t s = {data, nbytes, data == NULL, name};
  if (!data) {
    /* malloc(0) may return NULL: always ask for at least one byte. */
    s.data = mlc_malloc(nbytes > 0 ? (size_t)nbytes : 1);
    if (!s.data) return interp_oom(it);
    interp_poison(dtype, s.data, nbytes / interp_lane_bytes(dtype));
  }
  if (mlc_vec_push(&it->storages, s) != MLC_OK) {
    if (s.owned) mlc_free(s.data);
    return interp_oom(it);
  }
  *id_out = (int64_t)it->storages.len - 1;
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

/* Where the run is, as error details begin: `block "B": ` or
 * `function "F": `. */
static void location(const interp_t *it, char *buf, size_t len) {
  if (it->block) {
    snprintf(buf, len, "block \"%s\": ", it->block);
    return;
  }
  snprintf(buf, len, "function \"%s\": ", it->func && it->func->name ? it->func->name : "main");
}

int interp_fail(interp_t *it, const char *fmt, ...) {
  char msg[1024], loc[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  location(it, loc, sizeof loc);
  return mlc_error_set(MLC_ERUNTIME, "%s%s", loc, msg);
}

int interp_fail_within(interp_t *it, int rc, const char *fmt, ...) {
  char ctx[256], msg[1024], loc[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ctx, sizeof(ctx), fmt, ap);
  va_end(ap);
  snprintf(msg, sizeof msg, "%s", mlc_error_last()); /* borrowed: copy before setting */
  location(it, loc, sizeof loc);
  size_t n = strlen(loc);
  const char *rest = strncmp(msg, loc, n) == 0 ? msg + n : msg;
  return mlc_error_set(rc, "%s%s: %s", loc, ctx, rest);
}
