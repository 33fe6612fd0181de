/*
 * flatten_buffers.c - the "flatten-buffers" pass (TVM's FlattenBuffer).
 *
 * Code generation wants one address per access: after this pass every load
 * and store has a single index, `elem_offset + sum(index_d * stride_d)` with
 * the buffer's strides (compact row-major ones when it has none). Parameters
 * keep their buffers in buffer_map (the ABI checks shapes against them) but
 * are accessed through a 1-D buffer of the same name, dtype and data
 * variable, whose one extent is the number of elements the parameter spans;
 * an ALLOCATE gets such a 1-D buffer in place of its own. Buffers that are
 * already flat (1-D, no strides, no elem_offset) stay as they are.
 *
 * Vector accesses keep their form: a ramp in one dimension gives a ramp over
 * the flat index (base: the flat index of lane 0, stride: the ramp's stride
 * times the dimension's stride), a broadcast a broadcast; anything else is
 * computed with vector arithmetic.
 */
#include "compiler/lower/flatten_buffers.h"

#include "compiler/lower/lower_util.h"

typedef struct {
  int n, cap;
  const tir_buffer_t **from;
  tir_buffer_t **to;
  int status;
} flat_t;

static bool is_flat(const tir_buffer_t *b) { return b->ndim == 1 && !b->strides && !b->elem_offset; }

/* The 1-D twin of b (made on first use). */
static tir_buffer_t *flat_of(mlc_arena_t *a, flat_t *fl, tir_buffer_t *b) {
  if (is_flat(b)) return b;
  for (int i = 0; i < fl->n; i++)
    if (fl->from[i] == b) return fl->to[i];
  if (fl->n == fl->cap) {
    int cap = fl->cap ? fl->cap * 2 : 8;
    fl->from = mlc_arena_grow(a, fl->from, (size_t)fl->n, (size_t)cap, sizeof(*fl->from));
    fl->to = mlc_arena_grow(a, fl->to, (size_t)fl->n, (size_t)cap, sizeof(*fl->to));
    fl->cap = cap;
  }
  fl->from[fl->n] = b;
  fl->to[fl->n] = lower_flat_buffer(a, b, lower_buffer_span(a, b));
  return fl->to[fl->n++];
}

/* The scalar part of an index: a ramp's base, a broadcast's value. */
static tir_expr_t *lane0(tir_expr_t *e) {
  if (e->kind == TIR_RAMP) return e->u.ramp.base;
  if (e->kind == TIR_BROADCAST) return e->u.broadcast.value;
  return e;
}

/* Vector arithmetic fallback: sum(index_d * broadcast(stride_d)) + offset. */
static tir_expr_t *vector_index(mlc_arena_t *a, const tir_buffer_t *b, tir_expr_t **idx, tir_expr_t **strides,
                                int lanes) {
  tir_expr_t *sum = NULL;
  for (int d = 0; d < b->ndim; d++) {
    tir_expr_t *x = idx[d]->dtype.lanes > 1 ? idx[d] : tir_broadcast(a, idx[d], lanes);
    tir_expr_t *st = tir_broadcast(a, lower_cast_int(a, tir_dtype_scalar(x->dtype), strides[d]), lanes);
    tir_expr_t *term = tir_is_const_int(strides[d], 1) ? x : tir_binary(a, TIR_MUL, x, st);
    sum = sum ? tir_binary(a, TIR_ADD, sum, term) : term;
  }
  if (b->elem_offset)
    sum = tir_binary(a, TIR_ADD, sum,
                     tir_broadcast(a, lower_cast_int(a, tir_dtype_scalar(sum->dtype), b->elem_offset), lanes));
  return sum;
}

/* The flat index of b[idx]. */
static tir_expr_t *flat_index(mlc_arena_t *a, const tir_buffer_t *b, tir_expr_t **idx, int n) {
  tir_expr_t *strides[TIR_MAX_DIMS];
  lower_buffer_strides(a, b, strides);
  int lanes = 1, ramp = -1, nvec = 0;
  bool other = false;
  for (int d = 0; d < n; d++) {
    if (idx[d]->dtype.lanes == 1) continue;
    lanes = idx[d]->dtype.lanes;
    nvec++;
    if (idx[d]->kind == TIR_RAMP) ramp = d;
    else if (idx[d]->kind != TIR_BROADCAST) other = true;
  }
  if (other || (ramp >= 0 && nvec > 1)) return vector_index(a, b, idx, strides, lanes);
  tir_expr_t *sum = NULL;
  for (int d = 0; d < n; d++) {
    tir_expr_t *term = lower_mul(a, lane0(idx[d]), strides[d]);
    sum = sum ? lower_add(a, sum, term) : term;
  }
  if (b->elem_offset) sum = sum ? lower_add(a, sum, b->elem_offset) : b->elem_offset;
  if (!sum) sum = tir_i32(a, 0);
  if (ramp >= 0) {
    tir_expr_t *st = lower_mul(a, idx[ramp]->u.ramp.stride, strides[ramp]);
    return tir_ramp(a, sum, lower_cast_int(a, sum->dtype, st), lanes);
  }
  return nvec ? tir_broadcast(a, sum, lanes) : sum;
}

static tir_expr_t *flat_expr(tir_mutator_t *m, tir_expr_t *e) {
  flat_t *fl = m->payload;
  tir_expr_t *r = tir_mutate_expr_children(m, e);
  if (r->kind != TIR_BUFFER_LOAD || is_flat(r->u.load.buffer)) return r;
  tir_buffer_t *b = r->u.load.buffer;
  tir_expr_t *idx = flat_index(m->arena, b, r->u.load.indices, r->u.load.nindices);
  return tir_load(m->arena, flat_of(m->arena, fl, b), &idx, 1);
}

static tir_stmt_t *flat_stmt(tir_mutator_t *m, tir_stmt_t *s) {
  flat_t *fl = m->payload;
  if (s->kind == TIR_BLOCK_REALIZE) {
    if (fl->status == MLC_OK)
      fl->status = mlc_error_set(MLC_EINVAL, "block %s is still there: run remove-blocks first",
                                 s->u.realize.block->name);
    return s;
  }
  tir_stmt_t *r = tir_mutate_stmt_children(m, s);
  if (r->kind == TIR_ALLOCATE && !is_flat(r->u.allocate.buffer))
    return tir_allocate(m->arena, flat_of(m->arena, fl, r->u.allocate.buffer), r->u.allocate.body);
  if (r->kind != TIR_BUFFER_STORE || is_flat(r->u.store.buffer)) return r;
  tir_buffer_t *b = r->u.store.buffer;
  tir_expr_t *idx = flat_index(m->arena, b, r->u.store.indices, r->u.store.nindices);
  return tir_store(m->arena, flat_of(m->arena, fl, b), r->u.store.value, &idx, 1);
}

static int run(tir_func_t *f) {
  flat_t fl = {0, 0, NULL, NULL, MLC_OK};
  tir_mutator_t m = {.arena = f->arena, .expr = flat_expr, .stmt = flat_stmt, .payload = &fl};
  tir_stmt_t *body = tir_mutate_stmt(&m, f->body);
  if (fl.status != MLC_OK) return fl.status;
  f->body = body;
  return MLC_OK;
}

int mlc_pass_flatten_buffers(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes) {
  int rc;
  LOWER_GUARDED(rc, f->arena, run(f));
  return rc;
}
