/*
 * remove_blocks.c - the "remove-blocks" pass (TVM's ConvertBlocksToOpaque,
 * LowerMatchBuffer and LowerOpaqueBlock in one walk).
 *
 * After it the function is plain loops: every block iter var is replaced by
 * its binding value; a T.where predicate becomes an `if` around the body; each
 * T.alloc_buffer becomes an ALLOCATE (`T.decl_buffer`) around the block's body,
 * where plan-allocations put it; block annotations are dropped except
 * `pragma_*` ones, which become `T.attr(0, "pragma_...", v)` (the unroll pass
 * reads them), and MetaSchedule's `meta_schedule.unroll_explicit` /
 * `unroll_implicit` = S, which become the two unroll pragmas; the root block
 * disappears. Loops of extent 1 without
 * annotations (other than thread bindings) disappear too, their variable
 * replaced by the loop's min, as TVM's LowerOpaqueBlock does.
 *
 * A match_buffer is a view of a region of its source: an access M[i, j]
 * becomes S[min0 + i, min1 + j] (M's dimensions are the region's trailing
 * ones; dropped leading dimensions use the region's min), and M's symbolic
 * shape, strides and elem_offset variables are bound to the region's extents,
 * the source's strides and the offset of the region's first element. Using
 * M's data pointer directly is not supported (MLC_EUNSUPPORTED).
 *
 * storage_align leaves `buffer_dim_align` on the block that writes a buffer;
 * since blocks vanish here, the entries [axis, factor, offset] for each
 * buffer travel to compact-buffers as `T.attr(X.data, "buffer_dim_align",
 * [[axis, factor, offset], ...])` just inside X's ALLOCATE.
 */
#include "compiler/lower/remove_blocks.h"

#include <string.h>

#include "compiler/lower/lower_util.h"

typedef struct {
  tir_buffer_t *buf;  /* the match buffer */
  tir_buffer_t *src;  /* its source, never itself a match buffer */
  tir_expr_t **mins;  /* src->ndim minimums of the region */
} match_t;

typedef struct {
  tir_buffer_t *buf;
  int n;
  tir_expr_t **entries; /* [axis, factor, offset] lists */
} align_t;

typedef struct {
  mlc_arena_t *a;
  tir_var_map_t vars;
  int nmatches, capm;
  match_t *matches;
  int naligns, capa;
  align_t *aligns;
  int status;
} rb_t;

static const char dim_align_key[] = "buffer_dim_align";

static bool is_list(const tir_expr_t *e) { return e && e->kind == TIR_CALL && e->u.call.op == TIR_OP_LIST; }

static tir_expr_t *list_expr(mlc_arena_t *a, tir_expr_t **items, int n) {
  return tir_call(a, tir_dt_HANDLE(), TIR_OP_LIST, items, n);
}

/* ------------------------------------------------------------------------ */
/* storage_align entries, collected before the walk                          */
/* ------------------------------------------------------------------------ */

static align_t *find_align(rb_t *r, const tir_buffer_t *b) {
  for (int i = 0; i < r->naligns; i++)
    if (r->aligns[i].buf == b) return &r->aligns[i];
  return NULL;
}

static void add_align(rb_t *r, tir_buffer_t *b, tir_expr_t *entry) {
  align_t *al = find_align(r, b);
  if (!al) {
    if (r->naligns == r->capa) {
      int cap = r->capa ? r->capa * 2 : 4;
      r->aligns = mlc_arena_grow(r->a, r->aligns, (size_t)r->naligns, (size_t)cap, sizeof(*r->aligns));
      r->capa = cap;
    }
    al = &r->aligns[r->naligns++];
    *al = (align_t){b, 0, NULL};
  }
  al->entries = mlc_arena_grow(r->a, al->entries, (size_t)al->n, (size_t)al->n + 1, sizeof(*al->entries));
  al->entries[al->n++] = entry;
}

/* [[buffer_index, axis, factor, offset], ...] on a block: buffer_index
 * counts the block's writes. Malformed entries are ignored (the schedule
 * validates them when it writes them). */
static bool collect_aligns(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  rb_t *r = v->payload;
  tir_expr_t *value = tir_annot_get(b->annots, b->nannots, dim_align_key);
  if (!is_list(value)) return true;
  for (int i = 0; i < value->u.call.nargs; i++) {
    tir_expr_t *t = value->u.call.args[i];
    int64_t bi;
    if (!is_list(t) || t->u.call.nargs != 4 || !tir_as_int(t->u.call.args[0], &bi) || bi < 0 ||
        bi >= b->nwrites)
      continue;
    add_align(r, b->writes[bi].buffer, list_expr(r->a, t->u.call.args + 1, 3));
  }
  return true;
}

/* ------------------------------------------------------------------------ */
/* Match buffers                                                             */
/* ------------------------------------------------------------------------ */

static match_t *find_match(rb_t *r, const tir_buffer_t *b) {
  for (int i = 0; i < r->nmatches; i++)
    if (r->matches[i].buf == b) return &r->matches[i];
  return NULL;
}

/* min + idx where idx may be a vector (ramp, broadcast or other). */
static tir_expr_t *offset_index(mlc_arena_t *a, tir_expr_t *min, tir_expr_t *idx) {
  if (idx->dtype.lanes == 1) return lower_add(a, min, idx);
  if (idx->kind == TIR_RAMP)
    return tir_ramp(a, lower_add(a, min, idx->u.ramp.base), idx->u.ramp.stride, idx->u.ramp.lanes);
  if (idx->kind == TIR_BROADCAST) return tir_broadcast(a, lower_add(a, min, idx->u.broadcast.value), idx->u.broadcast.lanes);
  if (lower_const_or_neg(min) == 0) return idx;
  return tir_binary(a, TIR_ADD, tir_broadcast(a, min, idx->dtype.lanes), idx);
}

/* The source indices of M[idx] (n = M's dimensions). */
static tir_expr_t **translate(mlc_arena_t *a, const match_t *mt, tir_expr_t **idx, int n) {
  int ns = mt->src->ndim, lead = ns - n;
  tir_expr_t **out = mlc_arena_alloc(a, sizeof(*out) * (size_t)(ns > 0 ? ns : 1));
  for (int d = 0; d < ns; d++) out[d] = d < lead ? mt->mins[d] : offset_index(a, mt->mins[d], idx[d - lead]);
  return out;
}

static void bind_if_var(rb_t *r, tir_expr_t *declared, tir_expr_t *value) {
  if (declared && declared->kind == TIR_VAR && !tir_var_map_get(&r->vars, declared))
    tir_var_map_set(r->a, &r->vars, declared, value);
}

/* M's symbolic shape, strides and elem_offset take the region's values. */
static void bind_match_vars(rb_t *r, const match_t *mt, const tir_region_t *region) {
  tir_buffer_t *m = mt->buf, *s = mt->src;
  int ns = s->ndim, lead = ns - m->ndim, rlead = region->ndim - m->ndim;
  tir_expr_t *strides[TIR_MAX_DIMS];
  lower_buffer_strides(r->a, s, strides);
  for (int j = 0; j < m->ndim; j++) {
    if (rlead + j >= 0) bind_if_var(r, m->shape[j], region->ranges[rlead + j].extent);
    if (m->strides && lead + j >= 0) bind_if_var(r, m->strides[j], strides[lead + j]);
  }
  if (!m->elem_offset || m->elem_offset->kind != TIR_VAR) return;
  tir_expr_t *off = s->elem_offset ? s->elem_offset : tir_int(r->a, strides[0] ? strides[0]->dtype : tir_dt_INT32(), 0);
  for (int d = 0; d < ns; d++) off = lower_add(r->a, off, lower_mul(r->a, mt->mins[d], strides[d]));
  bind_if_var(r, m->elem_offset, off);
}

static void add_match(tir_mutator_t *mu, rb_t *r, const tir_match_buffer_t *mb) {
  const tir_region_t *src = &mb->source;
  tir_region_t region = *src;
  region.ranges = mlc_arena_alloc(r->a, sizeof(*region.ranges) * (size_t)(src->ndim > 0 ? src->ndim : 1));
  tir_expr_t **mins = mlc_arena_alloc(r->a, sizeof(*mins) * (size_t)(src->ndim > 0 ? src->ndim : 1));
  for (int d = 0; d < src->ndim; d++) {
    region.ranges[d].min = mins[d] = tir_mutate_expr(mu, src->ranges[d].min);
    region.ranges[d].extent = tir_mutate_expr(mu, src->ranges[d].extent);
  }
  match_t mt = {mb->buffer, src->buffer, mins};
  const match_t *outer = find_match(r, src->buffer);
  if (outer) { /* a view of a view: express the region on the outer source */
    mt.src = outer->src;
    mt.mins = translate(r->a, outer, mins, src->ndim);
  }
  if (r->nmatches == r->capm) {
    int cap = r->capm ? r->capm * 2 : 4;
    r->matches = mlc_arena_grow(r->a, r->matches, (size_t)r->nmatches, (size_t)cap, sizeof(*r->matches));
    r->capm = cap;
  }
  r->matches[r->nmatches++] = mt;
  bind_match_vars(r, &mt, &region);
}

/* ------------------------------------------------------------------------ */
/* The walk                                                                  */
/* ------------------------------------------------------------------------ */

static tir_expr_t *rb_expr(tir_mutator_t *m, tir_expr_t *e) {
  rb_t *r = m->payload;
  if (e->kind == TIR_VAR) {
    tir_expr_t *to = tir_var_map_get(&r->vars, e);
    if (to) return to;
    for (int i = 0; i < r->nmatches; i++)
      if (r->matches[i].buf->data == e && r->status == MLC_OK)
        r->status = mlc_error_set(MLC_EUNSUPPORTED, "match buffer %s is used through its data pointer",
                                  r->matches[i].buf->name);
    return e;
  }
  if (e->kind == TIR_BUFFER_LOAD) {
    const match_t *mt = find_match(r, e->u.load.buffer);
    if (mt) {
      tir_expr_t *ld = tir_mutate_expr_children(m, e);
      tir_expr_t **idx = translate(m->arena, mt, ld->u.load.indices, ld->u.load.nindices);
      return tir_load(m->arena, mt->src, idx, mt->src->ndim);
    }
  }
  return tir_mutate_expr_children(m, e);
}

static tir_stmt_t *lower_loop(tir_mutator_t *m, tir_stmt_t *s) {
  rb_t *r = m->payload;
  if (s->u.loop.kind == TIR_FOR_THREAD_BINDING || s->u.loop.nannots > 0) return tir_mutate_stmt_children(m, s);
  tir_expr_t *extent = tir_mutate_expr(m, s->u.loop.extent);
  if (!tir_is_const_int(extent, 1)) return tir_mutate_stmt_children(m, s);
  tir_var_map_set(m->arena, &r->vars, s->u.loop.var, tir_mutate_expr(m, s->u.loop.min));
  return tir_mutate_stmt(m, s->u.loop.body);
}

/* MetaSchedule's unroll decision on a block, `meta_schedule.unroll_explicit`
 * (or `_implicit`) = S, which TVM's RewriteUnrollLoop postprocessor turns
 * into pragma_auto_unroll_max_step = S and pragma_unroll_explicit = 1 (0)
 * on the loops below: the same two pragmas around the block's body. */
static tir_stmt_t *wrap_unroll_decision(tir_mutator_t *m, const tir_annot_t *an, tir_stmt_t *body) {
  bool explicit_ = strcmp(an->key, "meta_schedule.unroll_explicit") == 0;
  if (!explicit_ && strcmp(an->key, "meta_schedule.unroll_implicit") != 0) return body;
  int64_t step;
  if (!tir_as_int(an->value, &step) || step <= 0) return body;
  body = tir_attr_stmt(m->arena, NULL, "pragma_unroll_explicit", tir_i32(m->arena, explicit_), body);
  return tir_attr_stmt(m->arena, NULL, "pragma_auto_unroll_max_step", tir_i32(m->arena, step), body);
}

/* `pragma_*` block annotations as attributes around body (first outermost),
 * and the unroll decision. */
static tir_stmt_t *wrap_pragmas(tir_mutator_t *m, const tir_block_t *b, tir_stmt_t *body) {
  for (int i = b->nannots - 1; i >= 0; i--) {
    if (strncmp(b->annots[i].key, "pragma_", 7) == 0)
      body = tir_attr_stmt(m->arena, NULL, b->annots[i].key, tir_mutate_expr(m, b->annots[i].value), body);
    else
      body = wrap_unroll_decision(m, &b->annots[i], body);
  }
  return body;
}

/* Allocations (first outermost), each with its storage_align entries. */
static tir_stmt_t *wrap_allocs(rb_t *r, const tir_block_t *b, tir_stmt_t *body) {
  for (int i = b->nalloc_buffers - 1; i >= 0; i--) {
    tir_buffer_t *buf = b->alloc_buffers[i];
    align_t *al = find_align(r, buf);
    if (al) body = tir_attr_stmt(r->a, buf->data, dim_align_key, list_expr(r->a, al->entries, al->n), body);
    body = tir_allocate(r->a, buf, body);
  }
  return body;
}

static tir_stmt_t *lower_block(tir_mutator_t *m, tir_stmt_t *s) {
  rb_t *r = m->payload;
  tir_block_t *b = s->u.realize.block;
  tir_expr_t *pred = tir_mutate_expr(m, s->u.realize.predicate);
  for (int i = 0; i < b->niter_vars && i < s->u.realize.n; i++)
    tir_var_map_set(m->arena, &r->vars, b->iter_vars[i].var, tir_mutate_expr(m, s->u.realize.iter_values[i]));
  for (int i = 0; i < b->nmatch_buffers; i++) add_match(m, r, &b->match_buffers[i]);
  tir_stmt_t *body = b->body;
  if (b->init) {
    tir_stmt_t *parts[2] = {lower_guarded_init(m->arena, b), b->body};
    body = tir_seq(m->arena, parts, 2);
  }
  body = wrap_pragmas(m, b, tir_mutate_stmt(m, body));
  if (pred && !(pred->kind == TIR_INT_IMM && pred->u.int_value != 0)) body = tir_if(m->arena, pred, body, NULL);
  return wrap_allocs(r, b, body);
}

static tir_stmt_t *rb_stmt(tir_mutator_t *m, tir_stmt_t *s) {
  rb_t *r = m->payload;
  switch (s->kind) {
  case TIR_FOR: return lower_loop(m, s);
  case TIR_BLOCK_REALIZE: return lower_block(m, s);
  case TIR_BUFFER_STORE: {
    const match_t *mt = find_match(r, s->u.store.buffer);
    tir_stmt_t *st = tir_mutate_stmt_children(m, s);
    if (!mt) return st;
    tir_expr_t **idx = translate(m->arena, mt, st->u.store.indices, st->u.store.nindices);
    return tir_store(m->arena, mt->src, st->u.store.value, idx, mt->src->ndim);
  }
  default: return tir_mutate_stmt_children(m, s);
  }
}

static int run(tir_func_t *f) {
  rb_t r;
  memset(&r, 0, sizeof r);
  r.a = f->arena;
  tir_visitor_t v = {.block = collect_aligns, .payload = &r};
  tir_visit_stmt(&v, f->body);
  tir_mutator_t m = {.arena = f->arena, .expr = rb_expr, .stmt = rb_stmt, .payload = &r};
  tir_stmt_t *body = tir_mutate_stmt(&m, f->body);
  if (r.status != MLC_OK) return r.status;
  f->body = body;
  return MLC_OK;
}

int mlc_pass_remove_blocks(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes) {
  int rc;
  LOWER_GUARDED(rc, f->arena, run(f));
  return rc;
}
