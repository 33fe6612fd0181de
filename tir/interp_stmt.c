/*
 * interp_stmt.c - statements and allocations in the reference interpreter.
 *
 * Statements that bind something (let, for, T.decl_buffer, block realize)
 * run inside a scope mark: whatever they bind or allocate is taken back when
 * they end, and a loop takes back what each iteration bound. The others only
 * give back the scratch lanes of the vector values they computed. Loops of
 * every kind run sequentially, thread-bound ones included: TIR written with
 * blocks is correct under that order (a nested loop bound to the same thread
 * tag runs its whole range inside each outer iteration, so a cooperative
 * fetch into shared memory is complete before it is read).
 *
 * Fresh allocations are poisoned, not zeroed (interp_poison), so a read
 * before a write shows up in the results.
 */
#include "tir/interp_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Refuse allocations past this many bytes instead of asking malloc. */
#define INTERP_MAX_ALLOC_BYTES (INT64_C(1) << 36)

/* ------------------------------------------------------------------------ */
/* Buffer views                                                              */
/* ------------------------------------------------------------------------ */

static int eval_dims(interp_t *it, const tir_buffer_t *b, tir_expr_t *const *exprs,
                     int64_t *out, const char *what) {
  for (int k = 0; k < b->ndim; k++) {
    int rc = interp_eval_int(it, exprs[k], &out[k]);
    if (rc != MLC_OK) return rc;
    if (out[k] < 0)
      return interp_fail(it, "buffer %s: negative %s %" PRId64 " in dimension %d", b->name, what,
                         out[k], k);
  }
  return MLC_OK;
}

int interp_view_from_decl(interp_t *it, const tir_buffer_t *b, interp_view_t *view) {
  memset(view, 0, sizeof(*view));
  char buf[24];
  if (!interp_dtype_supported(tir_dtype_scalar(b->dtype)))
    return interp_fail(it, "buffer %s: unsupported dtype %s", b->name, tir_dtype_str(b->dtype, buf));
  if (b->ndim < 0 || b->ndim > TIR_MAX_DIMS)
    return interp_fail(it, "buffer %s: %d dimensions", b->name, b->ndim);
  view->dtype = b->dtype;
  view->ndim = b->ndim;
  int rc = eval_dims(it, b, b->shape, view->shape, "extent");
  if (rc == MLC_OK && b->strides) rc = eval_dims(it, b, b->strides, view->strides, "stride");
  if (rc == MLC_OK && b->elem_offset) rc = interp_eval_int(it, b->elem_offset, &view->elem_offset);
  if (rc != MLC_OK || b->strides) return rc;
  int64_t stride = 1; /* compact row-major; extents checked by the allocation */
  for (int k = b->ndim - 1; k >= 0; k--) {
    view->strides[k] = stride;
    stride = (int64_t)((uint64_t)stride * (uint64_t)(view->shape[k] ? view->shape[k] : 1));
  }
  return MLC_OK;
}

/* Elements a view spans from the start of its storage (strides are not
 * negative: eval_dims checked). */
static int view_span(interp_t *it, const tir_buffer_t *b, const interp_view_t *view,
                     int64_t *out) {
  double span = (double)view->elem_offset + 1.0;
  for (int k = 0; k < view->ndim; k++) {
    if (view->shape[k] == 0) {
      span = 0.0; /* no elements at all */
      break;
    }
    span += (double)(view->shape[k] - 1) * (double)view->strides[k];
  }
  double bytes = span * (double)interp_elem_bytes(view->dtype);
  if (view->elem_offset < 0 || bytes > (double)INTERP_MAX_ALLOC_BYTES)
    return interp_fail(it, "buffer %s: cannot allocate %.0f elements", b->name, span);
  *out = (int64_t)span;
  return MLC_OK;
}

static int bind_handle(interp_t *it, const tir_var_t *data, int64_t storage) {
  if (!data) return MLC_OK;
  interp_value_t h = {tir_dt_HANDLE(), {.i = storage}, NULL};
  return interp_bind_var(it, data, &h, NULL);
}

int interp_alloc_buffer(interp_t *it, const tir_buffer_t *b) {
  interp_view_t view;
  int64_t n = 0, id = 0;
  int rc = interp_view_from_decl(it, b, &view);
  if (rc == MLC_OK) rc = view_span(it, b, &view, &n);
  if (rc == MLC_OK)
    rc = interp_storage_add(it, &id, b->name, NULL, n * interp_elem_bytes(view.dtype), view.dtype);
  if (rc != MLC_OK) return rc;
  view.base = it->storages.data[id].data;
  view.limit = n;
  view.storage = id;
  rc = bind_handle(it, b->data, id);
  return rc == MLC_OK ? interp_bind_buffer(it, b, &view) : rc;
}

/* ------------------------------------------------------------------------ */
/* Statements                                                                */
/* ------------------------------------------------------------------------ */

static int store_mismatch(interp_t *it, const tir_buffer_t *b, tir_dtype_t value, int n) {
  char v[24], d[24];
  return interp_fail(it, "buffer %s: cannot store a %s value into %d element(s) of %s", b->name,
                     tir_dtype_str(value, v), n, tir_dtype_str(b->dtype, d));
}

static int exec_vector_store(interp_t *it, const tir_stmt_t *s, const interp_value_t *val) {
  const tir_buffer_t *b = s->u.store.buffer;
  interp_value_t idx[TIR_MAX_DIMS];
  const interp_view_t *view;
  int lanes;
  int rc = interp_eval_indices(it, b, s->u.store.indices, s->u.store.nindices, idx, &lanes);
  if (rc == MLC_OK) rc = interp_buffer_view_checked(it, b, s->u.store.nindices, &view);
  if (rc != MLC_OK) return rc;
  tir_dtype_t lane_t = tir_dtype_scalar(view->dtype);
  int per = view->dtype.lanes, size = interp_lane_bytes(lane_t);
  if (!tir_dtype_eq(tir_dtype_scalar(val->t), lane_t) || val->t.lanes != lanes * per)
    return store_mismatch(it, b, val->t, lanes);
  for (int l = 0; l < lanes; l++) {
    unsigned char *p;
    if ((rc = interp_access_lane(it, b, view, idx, l, &p)) != MLC_OK) return rc;
    for (int j = 0; j < per; j++) interp_write(lane_t, p + j * size, interp_lane(val, l * per + j));
  }
  return MLC_OK;
}

/* The value is stored as it is: a store of another dtype is an error, not a
 * conversion (the IR must say T.Cast). */
static int exec_store(interp_t *it, const tir_stmt_t *s) {
  const tir_buffer_t *b = s->u.store.buffer;
  interp_value_t val;
  unsigned char *p;
  int rc = interp_eval(it, s->u.store.value, &val);
  if (rc != MLC_OK) return rc;
  if (b->dtype.lanes != 1 || !interp_indices_scalar(s->u.store.indices, s->u.store.nindices))
    return exec_vector_store(it, s, &val);
  if (!tir_dtype_eq(val.t, b->dtype)) return store_mismatch(it, b, val.t, 1);
  rc = interp_access_scalar(it, b, s->u.store.indices, s->u.store.nindices, &p);
  if (rc == MLC_OK) interp_write(b->dtype, p, val.s);
  return rc;
}

/* A loop bound to threadIdx.x: the lanes of a warp, as the mma.sync calls
 * inside it see them (interp_mma.c). */
static bool is_lane_loop(const tir_stmt_t *s) {
  int dim;
  return s->u.loop.kind == TIR_FOR_THREAD_BINDING &&
         tir_thread_tag(s->u.loop.thread_tag, &dim) == TIR_THREAD_THREAD && dim == 0;
}

static int exec_for(interp_t *it, const tir_stmt_t *s) {
  int64_t min, extent;
  const tir_var_t *v = s->u.loop.var;
  int rc = interp_eval_int(it, s->u.loop.min, &min);
  if (rc == MLC_OK) rc = interp_eval_int(it, s->u.loop.extent, &extent);
  if (rc == MLC_OK) rc = interp_bind_int(it, v, min);
  if (rc != MLC_OK) return rc;
  interp_var_slot_t *slot = interp_var_slot(it, v);
  interp_mark_t m = interp_mark(it);
  interp_lane_loop_t outer = it->lane_loop;
  if (is_lane_loop(s)) it->lane_loop = (interp_lane_loop_t){v, min, extent, m.var_undo};
  for (int64_t i = 0; i < extent && rc == MLC_OK; i++) {
    slot->val.s = interp_wrap(v->dtype, (uint64_t)min + (uint64_t)i);
    rc = interp_exec(it, s->u.loop.body);
    /* What an iteration bound (a buffer view that depends on the loop
     * variable, say) must not leak into the next one. */
    interp_release(it, m);
  }
  it->lane_loop = outer;
  return rc;
}

static int exec_let(interp_t *it, const tir_stmt_t *s) {
  interp_value_t val;
  const tir_var_t *v = s->u.let.var;
  int rc = interp_eval(it, s->u.let.value, &val);
  if (rc != MLC_OK) return rc;
  if (!tir_dtype_eq(val.t, v->dtype)) {
    char a[24], b[24];
    return interp_fail(it, "let %s: a %s value for a %s variable", v->u.var.name,
                       tir_dtype_str(val.t, a), tir_dtype_str(v->dtype, b));
  }
  rc = interp_bind_var(it, v, &val, NULL);
  return rc == MLC_OK ? interp_exec(it, s->u.let.body) : rc;
}

static int exec_assert(interp_t *it, const tir_stmt_t *s) {
  bool ok;
  int rc = interp_eval_bool(it, s->u.assert_.cond, &ok);
  if (rc != MLC_OK) return rc;
  if (!ok) {
    const tir_expr_t *m = s->u.assert_.message;
    if (m && m->kind == TIR_STRING_IMM) return interp_fail(it, "assertion failed: %s", m->u.str_value);
    return interp_fail(it, "assertion failed");
  }
  return interp_exec(it, s->u.assert_.body);
}

static int exec_if(interp_t *it, const tir_stmt_t *s) {
  bool cond;
  int rc = interp_eval_bool(it, s->u.if_.cond, &cond);
  if (rc != MLC_OK) return rc;
  return interp_exec(it, cond ? s->u.if_.then_case : s->u.if_.else_case);
}

static int exec_seq(interp_t *it, const tir_stmt_t *s) {
  int rc = MLC_OK;
  for (int i = 0; i < s->u.seq.n && rc == MLC_OK; i++) rc = interp_exec(it, s->u.seq.stmts[i]);
  return rc;
}

/* Statements that bind variables or buffers or allocate: they run inside a
 * scope mark, and everything they made is taken back when they end. */
static int exec_scoped(interp_t *it, const tir_stmt_t *s) {
  interp_mark_t m = interp_mark(it);
  int rc;
  switch (s->kind) {
  case TIR_LET: rc = exec_let(it, s); break;
  case TIR_FOR: rc = exec_for(it, s); break;
  case TIR_ALLOCATE:
    rc = interp_alloc_buffer(it, s->u.allocate.buffer);
    if (rc == MLC_OK) rc = interp_exec(it, s->u.allocate.body);
    break;
  default: rc = interp_exec_realize(it, s); break;
  }
  interp_release(it, m);
  return rc;
}

/* The other statements bind nothing (but a buffer alias resolved on first
 * use, released by the enclosing scope); they only give back the scratch
 * lanes of the vector values they computed. */
int interp_exec(interp_t *it, const tir_stmt_t *s) {
  if (!s) return MLC_OK;
  size_t chunk = it->chunk, used = it->used;
  interp_value_t ignored;
  int rc;
  switch (s->kind) {
  case TIR_BUFFER_STORE: rc = exec_store(it, s); break;
  case TIR_SEQ: rc = exec_seq(it, s); break;
  case TIR_IF: rc = exec_if(it, s); break;
  case TIR_ATTR: rc = interp_exec(it, s->u.attr.body); break;
  case TIR_ASSERT: rc = exec_assert(it, s); break;
  case TIR_EVALUATE: rc = interp_eval(it, s->u.evaluate.value, &ignored); break;
  case TIR_LET:
  case TIR_FOR:
  case TIR_ALLOCATE:
  case TIR_BLOCK_REALIZE: rc = exec_scoped(it, s); break;
  default: MLC_PANIC("interp_exec: unknown statement kind %d", (int)s->kind);
  }
  it->chunk = chunk;
  it->used = used;
  return rc;
}
