/*
 * compact_buffers.c - the "compact-buffers" pass (TVM's
 * CompactBufferAllocation, run after the blocks are gone).
 *
 * An intermediate buffer is declared with the workload's full shape, but once
 * compute_at has moved its producer under a tile loop and plan-allocations
 * has put its ALLOCATE there, one allocation only ever holds one tile. For
 * each ALLOCATE this pass collects the indices of every access in its body,
 * relaxes them over the loops inside the allocation (tir_relax_expr; loop
 * variables outside stay symbolic, so the region's minimum may depend on
 * them), takes the hull per dimension, and re-declares the buffer with the
 * hull's extents; accesses subtract the hull's minimum. Conditions of
 * enclosing ifs that bound a loop variable (`if i < 5`) narrow its range.
 *
 * Extents must be constants: a symbolic extent is replaced by its constant
 * upper bound, and a dimension whose extent cannot be bounded, or would not
 * shrink, keeps its full range. The hull covers every access, so shifted
 * indices stay in range; it is not clipped to the original shape (clipping
 * would only save memory for accesses a predicate guards). A buffer is left
 * as it is when its data pointer is used other than by loads and stores, or
 * when a vector access (a tensor intrinsic's ramp) may run past the end of a
 * dimension: such accesses rely on the original layout.
 *
 * A "warp" buffer (..., 32, W) keeps its last two dimensions: element
 * [..., lane, j] is register j of lane `lane` (compiler/codegen/gpu_warp.c),
 * and shifting lanes or registers would move elements to other lanes.
 *
 * WMMA calls (lower-tensor-core): a tile operand counts as its whole 16x16
 * tile; a memory operand's stride argument, which must be the buffer's row
 * stride (else the buffer keeps its layout), becomes the compacted one's.
 *
 * storage_align: `T.attr(X.data, "buffer_dim_align", [[axis, factor,
 * offset], ...])` inside the ALLOCATE (left by remove-blocks) pads the
 * strides as TVM does: from the innermost dimension out, the stride of an
 * aligned dimension is rounded up to the next value equal to offset modulo
 * factor. The attribute is consumed; the buffer gets explicit strides, which
 * flatten-buffers folds into indices.
 */
#include "compiler/lower/compact_buffers.h"

#include <string.h>

#include "compiler/lower/lower_util.h"
#include "compiler/lower/tensor_core.h"

typedef struct {
  mlc_arena_t *a;
  tir_analyzer_t *an;
} cb_t;

/* What the accesses to one buffer inside its ALLOCATE cover. */
typedef struct {
  tir_visitor_t base; /* expressions: loads and the data variable */
  cb_t *cb;
  const tir_buffer_t *buf;
  int nvars, capvars;
  tir_var_t **vars;    /* loops inside the allocation, outermost first */
  tir_range_t *doms;
  tir_var_map_t lets;  /* let variables inside the allocation */
  tir_interval_t hull[TIR_MAX_DIMS];
  bool full[TIR_MAX_DIMS]; /* a dimension that could not be bounded */
  bool any;            /* at least one access */
  bool keep;           /* give up: opaque use or a vector access past an end */
} coll_t;

static const char dim_align_key[] = "buffer_dim_align";

/* ------------------------------------------------------------------------ */
/* Collecting regions                                                        */
/* ------------------------------------------------------------------------ */

static tir_expr_t *hull_end(cb_t *cb, tir_expr_t *x, tir_expr_t *y, bool lower) {
  if (tir_prove(cb->an, tir_binary(cb->a, TIR_LE, x, y))) return lower ? x : y;
  if (tir_prove(cb->an, tir_binary(cb->a, TIR_LE, y, x))) return lower ? y : x;
  return tir_simplify(cb->an, tir_binary(cb->a, lower ? TIR_MIN : TIR_MAX, x, y));
}

/* The range of loop variable k, narrowed by the conditions in force (the
 * analyzer's bounds) when the loop's range is constant. */
static tir_range_t narrowed_dom(coll_t *c, int k) {
  tir_range_t r = c->doms[k];
  int64_t lo, ext;
  if (!tir_as_int(r.min, &lo) || !tir_as_int(r.extent, &ext)) return r;
  tir_bound_t b = tir_const_bound(c->cb->an, c->vars[k]);
  int64_t hi = lo + ext - 1;
  if (b.min > lo) lo = b.min;
  if (b.max < hi) hi = b.max;
  if (hi < lo || (lo == lower_const_or_neg(r.min) && hi - lo + 1 == ext)) return r;
  tir_dtype_t t = c->vars[k]->dtype;
  r.min = tir_int(c->cb->a, t, lo);
  r.extent = tir_int(c->cb->a, t, hi - lo + 1);
  return r;
}

/* [min, max] of an index over the loops inside the allocation; false when
 * it cannot be bounded. */
static bool relax(coll_t *c, tir_expr_t *e, tir_interval_t *out) {
  tir_range_t *doms = mlc_arena_alloc(c->cb->a, sizeof(*doms) * (size_t)(c->nvars + 1));
  for (int k = 0; k < c->nvars; k++) doms[k] = narrowed_dom(c, k);
  return tir_relax_expr(out, c->cb->an, e, c->vars, doms, c->nvars) == MLC_OK;
}

/* Bounds of a scalar or ramp index; *vector says whether it was a ramp. */
static bool index_bounds(coll_t *c, tir_expr_t *e, tir_interval_t *out, bool *vector) {
  *vector = e->dtype.lanes > 1;
  if (!*vector) return relax(c, e, out);
  if (e->kind != TIR_RAMP) return false;
  tir_expr_t *base = e->u.ramp.base;
  tir_expr_t *last = lower_add(c->cb->a, base,
                               lower_mul(c->cb->a, e->u.ramp.stride, tir_int(c->cb->a, base->dtype, e->u.ramp.lanes - 1)));
  tir_interval_t x, y;
  if (!relax(c, base, &x) || !relax(c, last, &y)) return false;
  out->min = hull_end(c->cb, x.min, y.min, true);
  out->max = hull_end(c->cb, x.max, y.max, false);
  return true;
}

/* A vector access must provably stay inside dimension d. */
static bool inside_dim(coll_t *c, const tir_interval_t *iv, int d) {
  mlc_arena_t *a = c->cb->a;
  tir_expr_t *zero = tir_int(a, iv->min->dtype, 0);
  tir_expr_t *shape = lower_cast_int(a, iv->max->dtype, c->buf->shape[d]);
  return tir_prove(c->cb->an, tir_binary(a, TIR_LE, zero, iv->min)) &&
         tir_prove(c->cb->an, tir_binary(a, TIR_LT, iv->max, shape));
}

static void access(coll_t *c, tir_expr_t **indices, int n) {
  if (n != c->buf->ndim) {
    c->keep = true;
    return;
  }
  for (int d = 0; d < n; d++) {
    tir_expr_t *e = tir_substitute_expr(c->cb->a, indices[d], &c->lets);
    tir_interval_t iv;
    bool vector;
    if (!index_bounds(c, e, &iv, &vector)) {
      if (vector) c->keep = true;
      c->full[d] = true;
      continue;
    }
    if (vector && !inside_dim(c, &iv, d)) c->keep = true;
    if (!c->any || !c->hull[d].min) {
      c->hull[d] = iv;
      continue;
    }
    c->hull[d].min = hull_end(c->cb, c->hull[d].min, iv.min, true);
    c->hull[d].max = hull_end(c->cb, c->hull[d].max, iv.max, false);
  }
  c->any = true;
}

/* The row stride of b before compaction (compact: no strides). */
static int64_t row_stride(const tir_buffer_t *b) {
  return b->ndim >= 2 ? lower_const_or_neg(b->shape[b->ndim - 1]) : -1;
}

/* A WMMA call's tile operand on the buffer covers 16x16 elements from the
 * one it names (its last two indices). A memory operand's stride argument
 * must be the buffer's row stride, which compaction then updates; any
 * other stride (or a 1-D buffer) keeps the buffer's layout. */
static void tile_access(coll_t *c, const tir_expr_t *call) {
  tir_wmma_op_t op = tir_wmma_op(call);
  for (int pos = 1; op != TIR_WMMA_NONE && pos < call->u.call.nargs; pos++) {
    const tir_expr_t *x = call->u.call.args[pos];
    if (!lower_tc_is_tile_arg(op, pos) || x->kind != TIR_BUFFER_LOAD || x->u.load.buffer != c->buf) continue;
    int n = x->u.load.nindices;
    bool mem = pos == LOWER_TC_MEM_ARG;
    if (n < 2 || n != c->buf->ndim ||
        (mem && lower_const_or_neg(call->u.call.args[LOWER_TC_STRIDE_ARG]) != row_stride(c->buf))) {
      c->keep = true;
      continue;
    }
    tir_expr_t *last[TIR_MAX_DIMS];
    memcpy(last, x->u.load.indices, sizeof(*last) * (size_t)n);
    for (int d = n - 2; d < n; d++)
      last[d] = lower_add(c->cb->a, last[d], tir_int(c->cb->a, tir_dtype_scalar(last[d]->dtype), LOWER_TC_DIM - 1));
    access(c, last, n);
  }
}

static bool coll_expr(tir_visitor_t *v, tir_expr_t *e) {
  coll_t *c = (coll_t *)v;
  if (e->kind == TIR_CALL) tile_access(c, e);
  if (e->kind == TIR_BUFFER_LOAD && e->u.load.buffer == c->buf) access(c, e->u.load.indices, e->u.load.nindices);
  else if (e->kind == TIR_VAR && e == c->buf->data) c->keep = true;
  return true;
}

static void push_loop(coll_t *c, tir_stmt_t *s) {
  if (c->nvars == c->capvars) {
    int cap = c->capvars ? c->capvars * 2 : 8;
    c->vars = mlc_arena_grow(c->cb->a, c->vars, (size_t)c->nvars, (size_t)cap, sizeof(*c->vars));
    c->doms = mlc_arena_grow(c->cb->a, c->doms, (size_t)c->nvars, (size_t)cap, sizeof(*c->doms));
    c->capvars = cap;
  }
  c->vars[c->nvars] = s->u.loop.var;
  c->doms[c->nvars++] = (tir_range_t){s->u.loop.min, s->u.loop.extent};
  tir_analyzer_bind(c->cb->an, s->u.loop.var, s->u.loop.min, s->u.loop.extent);
}

static void collect(coll_t *c, tir_stmt_t *s);

static void collect_if(coll_t *c, tir_stmt_t *s) {
  tir_visit_expr(&c->base, s->u.if_.cond);
  int mark = tir_analyzer_push_constraint(c->cb->an, s->u.if_.cond);
  collect(c, s->u.if_.then_case);
  tir_analyzer_pop_constraint(c->cb->an, mark);
  if (!s->u.if_.else_case) return;
  mark = tir_analyzer_push_constraint(c->cb->an, tir_not(c->cb->a, s->u.if_.cond));
  collect(c, s->u.if_.else_case);
  tir_analyzer_pop_constraint(c->cb->an, mark);
}

static void collect(coll_t *c, tir_stmt_t *s) {
  if (!s) return;
  switch (s->kind) {
  case TIR_FOR:
    tir_visit_expr(&c->base, s->u.loop.min);
    tir_visit_expr(&c->base, s->u.loop.extent);
    push_loop(c, s);
    collect(c, s->u.loop.body);
    c->nvars--;
    return;
  case TIR_LET:
    tir_visit_expr(&c->base, s->u.let.value);
    tir_var_map_set(c->cb->a, &c->lets, s->u.let.var, tir_substitute_expr(c->cb->a, s->u.let.value, &c->lets));
    collect(c, s->u.let.body);
    return;
  case TIR_IF: collect_if(c, s); return;
  case TIR_BUFFER_STORE:
    if (s->u.store.buffer == c->buf) access(c, s->u.store.indices, s->u.store.nindices);
    tir_visit_expr(&c->base, s->u.store.value);
    for (int i = 0; i < s->u.store.nindices; i++) tir_visit_expr(&c->base, s->u.store.indices[i]);
    return;
  case TIR_ATTR:
    if (s->u.attr.node == c->buf->data && strcmp(s->u.attr.key, dim_align_key) != 0) c->keep = true;
    tir_visit_expr(&c->base, s->u.attr.value);
    collect(c, s->u.attr.body);
    return;
  case TIR_ASSERT:
    tir_visit_expr(&c->base, s->u.assert_.cond);
    collect(c, s->u.assert_.body);
    return;
  case TIR_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) collect(c, s->u.seq.stmts[i]);
    return;
  case TIR_EVALUATE: tir_visit_expr(&c->base, s->u.evaluate.value); return;
  case TIR_ALLOCATE: collect(c, s->u.allocate.body); return;
  case TIR_BLOCK_REALIZE: /* not lowered yet: leave the buffer alone */
  case TIR_STMT_KIND_COUNT: c->keep = true; return;
  }
}

/* ------------------------------------------------------------------------ */
/* The compacted buffer                                                      */
/* ------------------------------------------------------------------------ */

/* Region [mins[d], mins[d] + shape[d]) per dimension, or NULL when the
 * buffer stays as it is. */
static tir_expr_t **compact_region(coll_t *c, tir_expr_t **shape) {
  const tir_buffer_t *b = c->buf;
  mlc_arena_t *a = c->cb->a;
  if (c->keep || !c->any) return NULL;
  tir_expr_t **mins = mlc_arena_alloc(a, sizeof(*mins) * (size_t)b->ndim);
  bool changed = false;
  for (int d = 0; d < b->ndim; d++) {
    tir_dtype_t t = b->shape[d]->dtype;
    mins[d] = tir_int(a, t, 0);
    shape[d] = b->shape[d];
    if (c->full[d] || (tir_is_warp_buffer(b) && d >= b->ndim - 2)) continue; /* a warp buffer's lanes and registers */
    tir_expr_t *lo = lower_cast_int(a, t, c->hull[d].min), *hi = lower_cast_int(a, t, c->hull[d].max);
    tir_expr_t *ext = tir_simplify(c->cb->an, lower_add(a, lower_sub(a, hi, lo), tir_int(a, t, 1)));
    int64_t e = lower_const_or_neg(ext), full = lower_const_or_neg(b->shape[d]);
    if (e < 0) { /* symbolic: its constant upper bound */
      tir_bound_t bd = tir_const_bound(c->cb->an, ext);
      e = bd.max == INT64_MAX ? -1 : bd.max;
    }
    if (e <= 0 || (full >= 0 && e >= full)) continue;
    mins[d] = lo;
    shape[d] = tir_int(a, t, e);
    changed = true;
  }
  return changed ? mins : NULL;
}

/* TVM's strides for buffer_dim_align: innermost first, an aligned stride is
 * rounded up to offset modulo factor. NULL when no entry applies. */
static tir_expr_t **aligned_strides(mlc_arena_t *a, tir_expr_t **shape, int ndim, const tir_expr_t *entries) {
  int64_t factor[TIR_MAX_DIMS] = {0}, offset[TIR_MAX_DIMS] = {0};
  bool any = false;
  for (int i = 0; entries && i < entries->u.call.nargs; i++) {
    const tir_expr_t *t = entries->u.call.args[i];
    int64_t ax, f, o;
    if (t->u.call.nargs != 3 || !tir_as_int(t->u.call.args[0], &ax) || !tir_as_int(t->u.call.args[1], &f) ||
        !tir_as_int(t->u.call.args[2], &o) || ax < 0 || ax >= ndim || f <= 0)
      continue;
    factor[ax] = f;
    offset[ax] = o;
    any = true;
  }
  if (!any) return NULL;
  tir_expr_t **strides = mlc_arena_alloc(a, sizeof(*strides) * (size_t)ndim);
  tir_dtype_t t = shape[ndim - 1]->dtype;
  tir_expr_t *stride = tir_int(a, t, 1);
  for (int d = ndim - 1; d >= 0; d--) {
    if (factor[d]) {
      int64_t s;
      tir_expr_t *f = tir_int(a, t, factor[d]);
      if (tir_as_int(stride, &s))
        stride = tir_int(a, t, s + ((factor[d] + offset[d] - s % factor[d]) % factor[d] + factor[d]) % factor[d]);
      else
        stride = tir_binary(a, TIR_ADD, stride,
                            tir_binary(a, TIR_FLOOR_MOD,
                                       tir_binary(a, TIR_SUB, tir_int(a, t, factor[d] + offset[d]),
                                                  tir_binary(a, TIR_FLOOR_MOD, stride, f)),
                                       f));
    }
    strides[d] = stride;
    stride = lower_mul(a, stride, shape[d]);
  }
  return strides;
}

/* ------------------------------------------------------------------------ */
/* Rewriting accesses                                                        */
/* ------------------------------------------------------------------------ */

typedef struct {
  cb_t *cb;
  const tir_buffer_t *from;
  tir_buffer_t *to;
  tir_expr_t **mins;
} shift_t;

static tir_expr_t *shift_index(shift_t *sh, tir_expr_t *idx, int d) {
  mlc_arena_t *a = sh->cb->a;
  tir_expr_t *min = lower_cast_int(a, tir_dtype_scalar(idx->dtype), sh->mins[d]);
  if (tir_is_const_int(min, 0)) return idx;
  if (idx->kind == TIR_RAMP)
    return tir_ramp(a, tir_simplify(sh->cb->an, lower_sub(a, idx->u.ramp.base, min)), idx->u.ramp.stride,
                    idx->u.ramp.lanes);
  return tir_simplify(sh->cb->an, lower_sub(a, idx, min));
}

static tir_expr_t **shift_indices(shift_t *sh, tir_expr_t **idx, int n) {
  tir_expr_t **out = mlc_arena_alloc(sh->cb->a, sizeof(*out) * (size_t)n);
  for (int d = 0; d < n; d++) out[d] = shift_index(sh, idx[d], d);
  return out;
}

/* A WMMA call whose memory operand is the compacted buffer gets its row
 * stride (tile_access made sure the old argument was the old one). */
static tir_expr_t *shift_stride(shift_t *sh, tir_expr_t *call) {
  tir_wmma_op_t op = tir_wmma_op(call);
  if ((op != TIR_WMMA_LOAD && op != TIR_WMMA_STORE) || call->u.call.nargs <= LOWER_TC_LAYOUT_ARG) return call;
  const tir_expr_t *x = call->u.call.args[LOWER_TC_MEM_ARG];
  if (x->kind != TIR_BUFFER_LOAD || x->u.load.buffer != sh->to) return call;
  mlc_arena_t *a = sh->cb->a;
  tir_expr_t **args = mlc_arena_alloc(a, sizeof(*args) * (size_t)call->u.call.nargs);
  memcpy(args, call->u.call.args, sizeof(*args) * (size_t)call->u.call.nargs);
  int n = sh->to->ndim;
  tir_expr_t *stride = sh->to->strides ? sh->to->strides[n - 2] : sh->to->shape[n - 1];
  args[LOWER_TC_STRIDE_ARG] = lower_cast_int(a, tir_dtype_scalar(args[LOWER_TC_STRIDE_ARG]->dtype), stride);
  return tir_call(a, call->dtype, call->u.call.op, args, call->u.call.nargs);
}

static tir_expr_t *shift_expr(tir_mutator_t *m, tir_expr_t *e) {
  shift_t *sh = m->payload;
  tir_expr_t *r = tir_mutate_expr_children(m, e);
  if (r->kind == TIR_CALL) return shift_stride(sh, r);
  if (e->kind != TIR_BUFFER_LOAD || e->u.load.buffer != sh->from) return r;
  return tir_load(m->arena, sh->to, shift_indices(sh, r->u.load.indices, r->u.load.nindices), r->u.load.nindices);
}

static tir_stmt_t *shift_stmt(tir_mutator_t *m, tir_stmt_t *s) {
  shift_t *sh = m->payload;
  if (s->kind == TIR_FOR) tir_analyzer_bind(sh->cb->an, s->u.loop.var, s->u.loop.min, s->u.loop.extent);
  tir_stmt_t *r = tir_mutate_stmt_children(m, s);
  if (s->kind != TIR_BUFFER_STORE || s->u.store.buffer != sh->from) return r;
  return tir_store(m->arena, sh->to, r->u.store.value, shift_indices(sh, r->u.store.indices, r->u.store.nindices),
                   r->u.store.nindices);
}

/* ------------------------------------------------------------------------ */
/* The pass                                                                  */
/* ------------------------------------------------------------------------ */

static tir_stmt_t *compact_alloc(cb_t *cb, tir_stmt_t *s) {
  tir_buffer_t *b = s->u.allocate.buffer;
  tir_stmt_t *body = s->u.allocate.body;
  const tir_expr_t *aligns = NULL;
  if (body->kind == TIR_ATTR && body->u.attr.node == b->data && strcmp(body->u.attr.key, dim_align_key) == 0) {
    aligns = body->u.attr.value;
    body = body->u.attr.body;
  }
  if (b->ndim < 1 || b->ndim > TIR_MAX_DIMS || b->strides || b->elem_offset)
    return body == s->u.allocate.body ? s : tir_allocate(cb->a, b, body);
  coll_t c;
  memset(&c, 0, sizeof c);
  c.base.expr = coll_expr;
  c.cb = cb;
  c.buf = b;
  collect(&c, body);
  tir_expr_t *shape[TIR_MAX_DIMS];
  tir_expr_t **mins = compact_region(&c, shape);
  tir_expr_t **strides = aligned_strides(cb->a, mins ? shape : b->shape, b->ndim, aligns);
  if (!mins && !strides) return body == s->u.allocate.body ? s : tir_allocate(cb->a, b, body);
  tir_buffer_t *nb = tir_buffer_copy(cb->a, b);
  if (mins) memcpy(nb->shape, shape, sizeof(*shape) * (size_t)b->ndim);
  nb->strides = strides;
  if (!mins) {
    mins = mlc_arena_alloc(cb->a, sizeof(*mins) * (size_t)b->ndim);
    for (int d = 0; d < b->ndim; d++) mins[d] = tir_int(cb->a, b->shape[d]->dtype, 0);
  }
  shift_t sh = {cb, b, nb, mins};
  tir_mutator_t m = {.arena = cb->a, .expr = shift_expr, .stmt = shift_stmt, .payload = &sh};
  return tir_allocate(cb->a, nb, tir_mutate_stmt(&m, body));
}

static tir_stmt_t *cb_stmt(tir_mutator_t *m, tir_stmt_t *s) {
  cb_t *cb = m->payload;
  if (s->kind == TIR_FOR) tir_analyzer_bind(cb->an, s->u.loop.var, s->u.loop.min, s->u.loop.extent);
  tir_stmt_t *r = tir_mutate_stmt_children(m, s);
  return r->kind == TIR_ALLOCATE ? compact_alloc(cb, r) : r;
}

static int run(tir_func_t *f) {
  cb_t cb = {f->arena, tir_analyzer_new(f->arena)};
  tir_mutator_t m = {.arena = f->arena, .stmt = cb_stmt, .payload = &cb};
  f->body = tir_mutate_stmt(&m, f->body);
  return MLC_OK;
}

int mlc_pass_compact_buffers(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes) {
  int rc;
  LOWER_GUARDED(rc, f->arena, run(f));
  return rc;
}
