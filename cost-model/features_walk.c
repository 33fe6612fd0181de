/*
 * features_walk.c - the first step of feature extraction: walk a lowered
 * program and record every buffer store with its context (enclosing loops,
 * let bindings, `if v == c` guards, the allocation of its buffer, the
 * auto-unroll pragma), then group the stores that are copies of one unrolled
 * body.
 *
 * Why groups: MetaSchedule extracts features before loops are unrolled, so an
 * unrolled loop is one store under a loop of kind `unroll`. Our lowered code
 * has the copies instead (explicit unrolling replicates the body, and the
 * vectorized loop is gone into vector lanes). Copies have the same buffer and
 * the same structure -- loop extents and kinds, expression tree, float
 * constants -- and differ in integer constants and in the identity of the
 * loops inside them; grouping them by a hash of that structure gives back one
 * store under a virtual unrolled loop (features.c), at the depth where the
 * copies' loop stacks part.
 */
#include <string.h>

#include "cost-model/features.h"

typedef struct {
  fx_walk_t *w;
  fx_frame_t *frame;
  fx_bind_t *binds;
  fx_pin_t *pins;
  fx_alloc_t *allocs;
  int64_t auto_unroll;
} walk_ctx_t;

static const char *const AUTO_UNROLL_KEY = "pragma_auto_unroll_max_step";

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

static uint64_t dtype_bits(tir_dtype_t t) {
  return (uint64_t)t.code | (uint64_t)t.bits << 8 | (uint64_t)t.lanes << 16;
}

bool fx_pinned(const fx_pin_t *pins, const tir_var_t *v) {
  for (; pins; pins = pins->up)
    if (pins->var == v) return true;
  return false;
}

static const fx_frame_t *frame_of_var(const fx_walk_t *w, const fx_frame_t *fr, const tir_var_t *v) {
  for (; fr; fr = fr->up)
    if (w->loops[fr->loop].var == v) return fr;
  return NULL;
}

int *fx_frame_loops(fx_walk_t *w, const fx_frame_t *fr, int *n) {
  *n = fr ? fr->depth : 0;
  int *out = mlc_arena_alloc(w->arena, sizeof(int) * (size_t)(*n + 1));
  for (; fr; fr = fr->up) out[fr->depth - 1] = fr->loop;
  return out;
}

/* ------------------------------------------------------------------------ */
/* Structure hash                                                            */
/* ------------------------------------------------------------------------ */

/* Hashes e so that unrolled copies agree: loop variables by their depth,
 * integer constants by dtype only (and an added one not at all), everything
 * else by kind and value. */
static uint64_t hash_expr(const walk_ctx_t *cx, uint64_t h, const tir_expr_t *e) {
  if (!e) return mix(h, 0x51);
  /* The first copy's `i * 8192 + k` is the second's `i * 8192 + k + 1024`. */
  if ((e->kind == TIR_ADD || e->kind == TIR_SUB) && tir_dtype_is_integer(e->dtype)) {
    if (e->u.bin.b->kind == TIR_INT_IMM) return hash_expr(cx, h, e->u.bin.a);
    if (e->u.bin.a->kind == TIR_INT_IMM && e->kind == TIR_ADD) return hash_expr(cx, h, e->u.bin.b);
  }
  h = mix(mix(h, (uint64_t)e->kind + 1), dtype_bits(e->dtype));
  switch (tir_expr_kind_shape(e->kind)) {
  case TIR_SHAPE_IMM:
    if (e->kind == TIR_FLOAT_IMM) {
      uint64_t bits;
      memcpy(&bits, &e->u.float_value, sizeof bits);
      h = mix(h, bits);
    } else if (e->kind == TIR_STRING_IMM && e->u.str_value) {
      h = mix(h, mlc_hash64(e->u.str_value, strlen(e->u.str_value), 0));
    }
    return h;
  case TIR_SHAPE_LEAF: {
    const fx_frame_t *fr = frame_of_var(cx->w, cx->frame, e);
    return mix(h, fr ? (uint64_t)fr->depth : (uint64_t)(uintptr_t)e);
  }
  case TIR_SHAPE_BINARY: return hash_expr(cx, hash_expr(cx, h, e->u.bin.a), e->u.bin.b);
  case TIR_SHAPE_UNARY: return hash_expr(cx, h, e->u.un.a);
  case TIR_SHAPE_SELECT:
    h = hash_expr(cx, h, e->u.select.cond);
    return hash_expr(cx, hash_expr(cx, h, e->u.select.t), e->u.select.f);
  case TIR_SHAPE_LOAD:
    h = mix(h, (uint64_t)(uintptr_t)e->u.load.buffer->data);
    for (int i = 0; i < e->u.load.nindices; i++) h = hash_expr(cx, h, e->u.load.indices[i]);
    return h;
  case TIR_SHAPE_RAMP:
    h = mix(h, (uint64_t)e->u.ramp.lanes);
    return hash_expr(cx, hash_expr(cx, h, e->u.ramp.base), e->u.ramp.stride);
  case TIR_SHAPE_BROADCAST: return hash_expr(cx, mix(h, (uint64_t)e->u.broadcast.lanes), e->u.broadcast.value);
  case TIR_SHAPE_CALL:
    h = mix(h, (uint64_t)e->u.call.op);
    for (int i = 0; i < e->u.call.nargs; i++) h = hash_expr(cx, h, e->u.call.args[i]);
    return h;
  }
  return h;
}

static uint64_t hash_store(const walk_ctx_t *cx, const tir_stmt_t *s) {
  const fx_walk_t *w = cx->w;
  uint64_t h = mix(0x5707e, (uint64_t)(uintptr_t)s->u.store.buffer->data);
  for (const fx_frame_t *fr = cx->frame; fr; fr = fr->up) {
    const fx_loop_t *l = &w->loops[fr->loop];
    h = mix(mix(h, (uint64_t)l->extent), (uint64_t)l->kind);
    if (l->thread_tag) h = mix(h, mlc_hash64(l->thread_tag, strlen(l->thread_tag), 0));
    h = mix(h, fx_pinned(cx->pins, l->var) ? 1 : 2);
  }
  for (int i = 0; i < s->u.store.nindices; i++) h = hash_expr(cx, h, s->u.store.indices[i]);
  return hash_expr(cx, h, s->u.store.value);
}

/* ------------------------------------------------------------------------ */
/* The walk                                                                  */
/* ------------------------------------------------------------------------ */

static void walk_stmt(walk_ctx_t cx, tir_stmt_t *s);

static void record_store(walk_ctx_t *cx, tir_stmt_t *s) {
  fx_walk_t *w = cx->w;
  if (w->nstores == w->capstores) {
    int cap = w->capstores ? w->capstores * 2 : 16;
    w->stores = mlc_arena_grow(w->arena, w->stores, (size_t)w->nstores, (size_t)cap, sizeof(fx_store_t));
    w->capstores = cap;
  }
  fx_store_t *st = &w->stores[w->nstores++];
  memset(st, 0, sizeof *st);
  st->store = s;
  st->frame = cx->frame;
  st->binds = cx->binds;
  st->pins = cx->pins;
  st->auto_unroll = cx->auto_unroll;
  for (fx_alloc_t *a = cx->allocs; a; a = a->up)
    if (a->data == s->u.store.buffer->data) {
      st->alloc = a;
      break;
    }
  st->sig = hash_store(cx, s);
}

static int64_t const_or(const tir_expr_t *e, int64_t dflt) {
  int64_t v;
  return e && tir_as_int(e, &v) ? v : dflt;
}

static void walk_loop(walk_ctx_t cx, tir_stmt_t *s) {
  fx_walk_t *w = cx.w;
  if (w->nloops == w->caploops) {
    int cap = w->caploops ? w->caploops * 2 : 16;
    w->loops = mlc_arena_grow(w->arena, w->loops, (size_t)w->nloops, (size_t)cap, sizeof(fx_loop_t));
    w->caploops = cap;
  }
  fx_loop_t *l = &w->loops[w->nloops];
  l->var = s->u.loop.var;
  l->extent = const_or(s->u.loop.extent, 1);
  if (l->extent < 1) l->extent = 1;
  l->kind = s->u.loop.kind;
  l->thread_tag = s->u.loop.kind == TIR_FOR_THREAD_BINDING ? s->u.loop.thread_tag : NULL;
  fx_frame_t *fr = mlc_arena_alloc(w->arena, sizeof *fr);
  fr->loop = w->nloops++;
  fr->depth = cx.frame ? cx.frame->depth + 1 : 1;
  fr->up = cx.frame;
  cx.frame = fr;
  int64_t step = const_or(tir_annot_get(s->u.loop.annots, s->u.loop.nannots, AUTO_UNROLL_KEY), 0);
  if (step > 0) cx.auto_unroll = step;
  walk_stmt(cx, s->u.loop.body);
}

/* `if k == 0 and rh == 0:` around an init store fixes k and rh: the store
 * runs once per value of the other loops. */
static void pin_conjuncts(walk_ctx_t *cx, tir_expr_t *cond) {
  if (cond->kind == TIR_AND) {
    pin_conjuncts(cx, cond->u.bin.a);
    pin_conjuncts(cx, cond->u.bin.b);
    return;
  }
  if (cond->kind != TIR_EQ) return;
  tir_expr_t *a = cond->u.bin.a, *b = cond->u.bin.b;
  if (a->kind != TIR_VAR) {
    tir_expr_t *t = a;
    a = b;
    b = t;
  }
  int64_t v;
  if (a->kind != TIR_VAR || !tir_as_int(b, &v) || !frame_of_var(cx->w, cx->frame, a)) return;
  fx_pin_t *p = mlc_arena_alloc(cx->w->arena, sizeof *p);
  p->var = a;
  p->up = cx->pins;
  cx->pins = p;
}

static void push_bind(walk_ctx_t *cx, tir_var_t *v, tir_expr_t *value) {
  fx_bind_t *b = mlc_arena_alloc(cx->w->arena, sizeof *b);
  b->var = v;
  b->value = value;
  b->up = cx->binds;
  cx->binds = b;
}

static void push_alloc(walk_ctx_t *cx, const tir_buffer_t *b) {
  double n = 1;
  for (int d = 0; d < b->ndim; d++) n *= (double)const_or(b->shape[d], 1);
  fx_alloc_t *a = mlc_arena_alloc(cx->w->arena, sizeof *a);
  a->data = b->data;
  a->bytes = n * tir_dtype_bytes(b->dtype);
  a->depth = cx->frame ? cx->frame->depth : 0;
  a->up = cx->allocs;
  cx->allocs = a;
}

/* Scheduled TIR (blocks) is accepted too: iter vars are bound to their
 * values, allocations are the block's. */
static void walk_block(walk_ctx_t cx, tir_stmt_t *s) {
  tir_block_t *b = s->u.realize.block;
  for (int i = 0; i < b->niter_vars && i < s->u.realize.n; i++)
    push_bind(&cx, b->iter_vars[i].var, s->u.realize.iter_values[i]);
  for (int i = 0; i < b->nalloc_buffers; i++) push_alloc(&cx, b->alloc_buffers[i]);
  if (b->init) walk_stmt(cx, b->init);
  walk_stmt(cx, b->body);
}

static void walk_stmt(walk_ctx_t cx, tir_stmt_t *s) {
  if (!s) return;
  switch (s->kind) {
  case TIR_BUFFER_STORE:
    if (s->u.store.buffer && s->u.store.value) record_store(&cx, s);
    return;
  case TIR_LET:
    push_bind(&cx, s->u.let.var, s->u.let.value);
    walk_stmt(cx, s->u.let.body);
    return;
  case TIR_ATTR:
    if (s->u.attr.key && strcmp(s->u.attr.key, AUTO_UNROLL_KEY) == 0 && const_or(s->u.attr.value, 0) > 0)
      cx.auto_unroll = const_or(s->u.attr.value, 0);
    walk_stmt(cx, s->u.attr.body);
    return;
  case TIR_ASSERT: walk_stmt(cx, s->u.assert_.body); return;
  case TIR_FOR: walk_loop(cx, s); return;
  case TIR_IF: {
    walk_ctx_t then_cx = cx;
    pin_conjuncts(&then_cx, s->u.if_.cond);
    walk_stmt(then_cx, s->u.if_.then_case);
    walk_stmt(cx, s->u.if_.else_case);
    return;
  }
  case TIR_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) walk_stmt(cx, s->u.seq.stmts[i]);
    return;
  case TIR_EVALUATE: return;
  case TIR_ALLOCATE:
    push_alloc(&cx, s->u.allocate.buffer);
    walk_stmt(cx, s->u.allocate.body);
    return;
  case TIR_BLOCK_REALIZE: walk_block(cx, s); return;
  case TIR_STMT_KIND_COUNT: return;
  }
}

/* ------------------------------------------------------------------------ */
/* Grouping                                                                  */
/* ------------------------------------------------------------------------ */

static int common_prefix(const int *a, int na, const int *b, int nb) {
  int i = 0;
  while (i < na && i < nb && a[i] == b[i]) i++;
  return i;
}

static void group_stores(fx_walk_t *w) {
  size_t cap = 16;
  while (cap < (size_t)w->nstores * 2) cap *= 2;
  int *table = mlc_arena_alloc(w->arena, cap * sizeof(int)); /* group + 1; 0 empty */
  w->groups = mlc_arena_alloc(w->arena, sizeof(fx_group_t) * (size_t)(w->nstores + 1));
  for (int i = 0; i < w->nstores; i++) {
    size_t slot = (size_t)w->stores[i].sig & (cap - 1);
    while (table[slot] && w->stores[w->groups[table[slot] - 1].rep].sig != w->stores[i].sig)
      slot = (slot + 1) & (cap - 1);
    if (!table[slot]) {
      fx_group_t *g = &w->groups[w->ngroups++];
      memset(g, 0, sizeof *g);
      g->rep = i;
      table[slot] = w->ngroups;
    }
    w->stores[i].group = table[slot] - 1;
    w->groups[table[slot] - 1].ncopies++;
  }
  for (int g = 0; g < w->ngroups; g++) {
    w->groups[g].members = mlc_arena_alloc(w->arena, sizeof(int) * (size_t)w->groups[g].ncopies);
    w->groups[g].ncopies = 0;
  }
  for (int i = 0; i < w->nstores; i++) {
    fx_group_t *g = &w->groups[w->stores[i].group];
    g->members[g->ncopies++] = i;
  }
  for (int g = 0; g < w->ngroups; g++) {
    fx_group_t *gr = &w->groups[g];
    int nrep, nm;
    int *rep = fx_frame_loops(w, w->stores[gr->rep].frame, &nrep);
    gr->lca = nrep;
    for (int m = 1; m < gr->ncopies; m++) {
      int *mem = fx_frame_loops(w, w->stores[gr->members[m]].frame, &nm);
      int p = common_prefix(rep, nrep, mem, nm);
      if (p < gr->lca) gr->lca = p;
    }
  }
}

void fx_walk(fx_walk_t *w, const tir_func_t *f) {
  walk_ctx_t cx;
  memset(&cx, 0, sizeof cx);
  cx.w = w;
  walk_stmt(cx, f->body);
  group_stores(w);
}
