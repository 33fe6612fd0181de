/*
 * visit.c - the one visitor and the one mutator, generated from the node
 * lists: expressions are walked by their shape (TIR_EXPR_KINDS' shape column),
 * so a new kind of an existing shape needs no change here. Also variable
 * substitution, which is a small mutator.
 *
 * The mutator is copy-on-write: a node is copied only when one of its
 * children changed, so unchanged subtrees stay shared (Halide's IRMutator).
 */
#include "tir/tir.h"

/* ------------------------------------------------------------------------ */
/* Visitor                                                                   */
/* ------------------------------------------------------------------------ */

void tir_visit_expr(tir_visitor_t *v, tir_expr_t *e) {
  if (!e) return;
  if (v->expr && !v->expr(v, e)) return;
  switch (tir_expr_kind_shape(e->kind)) {
  case TIR_SHAPE_IMM:
  case TIR_SHAPE_LEAF: break;
  case TIR_SHAPE_BINARY:
    tir_visit_expr(v, e->u.bin.a);
    tir_visit_expr(v, e->u.bin.b);
    break;
  case TIR_SHAPE_UNARY: tir_visit_expr(v, e->u.un.a); break;
  case TIR_SHAPE_SELECT:
    tir_visit_expr(v, e->u.select.cond);
    tir_visit_expr(v, e->u.select.t);
    tir_visit_expr(v, e->u.select.f);
    break;
  case TIR_SHAPE_LOAD:
    for (int i = 0; i < e->u.load.nindices; i++) tir_visit_expr(v, e->u.load.indices[i]);
    break;
  case TIR_SHAPE_RAMP:
    tir_visit_expr(v, e->u.ramp.base);
    tir_visit_expr(v, e->u.ramp.stride);
    break;
  case TIR_SHAPE_BROADCAST: tir_visit_expr(v, e->u.broadcast.value); break;
  case TIR_SHAPE_CALL:
    for (int i = 0; i < e->u.call.nargs; i++) tir_visit_expr(v, e->u.call.args[i]);
    break;
  }
}

static void visit_region(tir_visitor_t *v, const tir_region_t *r) {
  for (int i = 0; i < r->ndim; i++) {
    tir_visit_expr(v, r->ranges[i].min);
    tir_visit_expr(v, r->ranges[i].extent);
  }
}

static void visit_block(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  if (v->block && !v->block(v, b, realize)) return;
  for (int i = 0; i < b->niter_vars; i++) {
    tir_visit_expr(v, b->iter_vars[i].dom.min);
    tir_visit_expr(v, b->iter_vars[i].dom.extent);
  }
  for (int i = 0; i < b->nreads; i++) visit_region(v, &b->reads[i]);
  for (int i = 0; i < b->nwrites; i++) visit_region(v, &b->writes[i]);
  for (int i = 0; i < b->nmatch_buffers; i++) visit_region(v, &b->match_buffers[i].source);
  tir_visit_stmt(v, b->init);
  tir_visit_stmt(v, b->body);
}

void tir_visit_stmt(tir_visitor_t *v, tir_stmt_t *s) {
  if (!s) return;
  if (v->stmt && !v->stmt(v, s)) return;
  switch (s->kind) {
  case TIR_BUFFER_STORE:
    tir_visit_expr(v, s->u.store.value);
    for (int i = 0; i < s->u.store.nindices; i++) tir_visit_expr(v, s->u.store.indices[i]);
    break;
  case TIR_LET:
    tir_visit_expr(v, s->u.let.value);
    tir_visit_stmt(v, s->u.let.body);
    break;
  case TIR_ATTR:
    tir_visit_expr(v, s->u.attr.value);
    tir_visit_stmt(v, s->u.attr.body);
    break;
  case TIR_ASSERT:
    tir_visit_expr(v, s->u.assert_.cond);
    tir_visit_expr(v, s->u.assert_.message);
    tir_visit_stmt(v, s->u.assert_.body);
    break;
  case TIR_FOR:
    tir_visit_expr(v, s->u.loop.min);
    tir_visit_expr(v, s->u.loop.extent);
    tir_visit_stmt(v, s->u.loop.body);
    break;
  case TIR_IF:
    tir_visit_expr(v, s->u.if_.cond);
    tir_visit_stmt(v, s->u.if_.then_case);
    tir_visit_stmt(v, s->u.if_.else_case);
    break;
  case TIR_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) tir_visit_stmt(v, s->u.seq.stmts[i]);
    break;
  case TIR_EVALUATE: tir_visit_expr(v, s->u.evaluate.value); break;
  case TIR_ALLOCATE: tir_visit_stmt(v, s->u.allocate.body); break;
  case TIR_BLOCK_REALIZE:
    for (int i = 0; i < s->u.realize.n; i++) tir_visit_expr(v, s->u.realize.iter_values[i]);
    tir_visit_expr(v, s->u.realize.predicate);
    visit_block(v, s->u.realize.block, s);
    break;
  case TIR_STMT_KIND_COUNT: break;
  }
  if (v->stmt_post) v->stmt_post(v, s);
}

/* ------------------------------------------------------------------------ */
/* Mutator                                                                   */
/* ------------------------------------------------------------------------ */

tir_expr_t *tir_mutate_expr(tir_mutator_t *m, tir_expr_t *e) {
  if (!e) return NULL;
  return m->expr ? m->expr(m, e) : tir_mutate_expr_children(m, e);
}

tir_stmt_t *tir_mutate_stmt(tir_mutator_t *m, tir_stmt_t *s) {
  if (!s) return NULL;
  return m->stmt ? m->stmt(m, s) : tir_mutate_stmt_children(m, s);
}

static tir_buffer_t *mutate_buffer(tir_mutator_t *m, tir_buffer_t *b) {
  return b && m->buffer ? m->buffer(m, b) : b;
}

/* Mutates n expressions; returns the original array when none changed, else
 * a new array in the arena. */
static tir_expr_t **mutate_exprs(tir_mutator_t *m, tir_expr_t **xs, int n) {
  tir_expr_t **out = xs;
  for (int i = 0; i < n; i++) {
    tir_expr_t *x = tir_mutate_expr(m, xs[i]);
    if (x != xs[i] && out == xs) {
      out = mlc_arena_memdup(m->arena, xs, sizeof(*xs) * (size_t)n);
      if (!out) return xs;
    }
    out[i] = x;
  }
  return out;
}

tir_expr_t *tir_mutate_expr_children(tir_mutator_t *m, tir_expr_t *e) {
  tir_expr_t tmp = *e;
  bool changed = false;
#define MUT_(field)                                   \
  do {                                                \
    tmp.field = tir_mutate_expr(m, e->field);         \
    changed |= tmp.field != e->field;                 \
  } while (0)
  switch (tir_expr_kind_shape(e->kind)) {
  case TIR_SHAPE_IMM:
  case TIR_SHAPE_LEAF: return e;
  case TIR_SHAPE_BINARY: MUT_(u.bin.a); MUT_(u.bin.b); break;
  case TIR_SHAPE_UNARY: MUT_(u.un.a); break;
  case TIR_SHAPE_SELECT: MUT_(u.select.cond); MUT_(u.select.t); MUT_(u.select.f); break;
  case TIR_SHAPE_LOAD:
    tmp.u.load.buffer = mutate_buffer(m, e->u.load.buffer);
    tmp.u.load.indices = mutate_exprs(m, e->u.load.indices, e->u.load.nindices);
    changed = tmp.u.load.buffer != e->u.load.buffer || tmp.u.load.indices != e->u.load.indices;
    break;
  case TIR_SHAPE_RAMP: MUT_(u.ramp.base); MUT_(u.ramp.stride); break;
  case TIR_SHAPE_BROADCAST: MUT_(u.broadcast.value); break;
  case TIR_SHAPE_CALL:
    tmp.u.call.args = mutate_exprs(m, e->u.call.args, e->u.call.nargs);
    changed = tmp.u.call.args != e->u.call.args;
    break;
  }
#undef MUT_
  if (!changed) return e;
  tir_expr_t *out = tir_expr_copy(m->arena, &tmp);
  return out ? out : e;
}

static tir_range_t *mutate_ranges(tir_mutator_t *m, tir_range_t *rs, int n) {
  tir_range_t *out = rs;
  for (int i = 0; i < n; i++) {
    tir_expr_t *min = tir_mutate_expr(m, rs[i].min);
    tir_expr_t *ext = tir_mutate_expr(m, rs[i].extent);
    if ((min != rs[i].min || ext != rs[i].extent) && out == rs) {
      out = mlc_arena_memdup(m->arena, rs, sizeof(*rs) * (size_t)n);
      if (!out) return rs;
    }
    out[i].min = min;
    out[i].extent = ext;
  }
  return out;
}

/* Mutates regions in place in `out` (a fresh copy) when anything changed. */
static tir_region_t *mutate_regions(tir_mutator_t *m, tir_region_t *rs, int n) {
  tir_region_t *out = rs;
  for (int i = 0; i < n; i++) {
    tir_buffer_t *b = mutate_buffer(m, rs[i].buffer);
    tir_range_t *ranges = mutate_ranges(m, rs[i].ranges, rs[i].ndim);
    if ((b != rs[i].buffer || ranges != rs[i].ranges) && out == rs) {
      out = mlc_arena_memdup(m->arena, rs, sizeof(*rs) * (size_t)n);
      if (!out) return rs;
    }
    out[i].buffer = b;
    out[i].ranges = ranges;
  }
  return out;
}

tir_block_t *tir_mutate_block(tir_mutator_t *m, tir_block_t *b) {
  tir_block_t tmp = *b;
  bool changed = false;
  for (int i = 0; i < b->niter_vars; i++) {
    tir_expr_t *min = tir_mutate_expr(m, b->iter_vars[i].dom.min);
    tir_expr_t *ext = tir_mutate_expr(m, b->iter_vars[i].dom.extent);
    if (min == b->iter_vars[i].dom.min && ext == b->iter_vars[i].dom.extent) continue;
    if (tmp.iter_vars == b->iter_vars) {
      tmp.iter_vars = mlc_arena_memdup(m->arena, b->iter_vars, sizeof(*b->iter_vars) * (size_t)b->niter_vars);
      if (!tmp.iter_vars) return b;
    }
    tmp.iter_vars[i].dom.min = min;
    tmp.iter_vars[i].dom.extent = ext;
    changed = true;
  }
  tmp.reads = mutate_regions(m, b->reads, b->nreads);
  tmp.writes = mutate_regions(m, b->writes, b->nwrites);
  changed |= tmp.reads != b->reads || tmp.writes != b->writes;
  for (int i = 0; i < b->nalloc_buffers; i++) {
    tir_buffer_t *nb = mutate_buffer(m, b->alloc_buffers[i]);
    if (nb == b->alloc_buffers[i]) continue;
    if (tmp.alloc_buffers == b->alloc_buffers) {
      tmp.alloc_buffers = mlc_arena_memdup(m->arena, b->alloc_buffers,
                                           sizeof(*b->alloc_buffers) * (size_t)b->nalloc_buffers);
      if (!tmp.alloc_buffers) return b;
    }
    tmp.alloc_buffers[i] = nb;
    changed = true;
  }
  for (int i = 0; i < b->nmatch_buffers; i++) {
    tir_match_buffer_t mb = b->match_buffers[i];
    tir_buffer_t *nb = mutate_buffer(m, mb.buffer);
    tir_region_t *src = mutate_regions(m, &b->match_buffers[i].source, 1);
    if (nb == mb.buffer && src == &b->match_buffers[i].source) continue;
    if (tmp.match_buffers == b->match_buffers) {
      tmp.match_buffers = mlc_arena_memdup(m->arena, b->match_buffers,
                                           sizeof(*b->match_buffers) * (size_t)b->nmatch_buffers);
      if (!tmp.match_buffers) return b;
    }
    tmp.match_buffers[i].buffer = nb;
    tmp.match_buffers[i].source = *src;
    changed = true;
  }
  tmp.init = tir_mutate_stmt(m, b->init);
  tmp.body = tir_mutate_stmt(m, b->body);
  changed |= tmp.init != b->init || tmp.body != b->body;
  if (!changed) return b;
  tir_block_t *out = mlc_arena_memdup(m->arena, &tmp, sizeof(tmp));
  return out ? out : b;
}

tir_stmt_t *tir_mutate_stmt_children(tir_mutator_t *m, tir_stmt_t *s) {
  tir_stmt_t tmp = *s;
  bool changed = false;
#define MUT_E(field)                                  \
  do {                                                \
    tmp.field = tir_mutate_expr(m, s->field);         \
    changed |= tmp.field != s->field;                 \
  } while (0)
#define MUT_S(field)                                  \
  do {                                                \
    tmp.field = tir_mutate_stmt(m, s->field);         \
    changed |= tmp.field != s->field;                 \
  } while (0)
  switch (s->kind) {
  case TIR_BUFFER_STORE:
    tmp.u.store.buffer = mutate_buffer(m, s->u.store.buffer);
    MUT_E(u.store.value);
    tmp.u.store.indices = mutate_exprs(m, s->u.store.indices, s->u.store.nindices);
    changed |= tmp.u.store.buffer != s->u.store.buffer || tmp.u.store.indices != s->u.store.indices;
    break;
  case TIR_LET: MUT_E(u.let.value); MUT_S(u.let.body); break;
  case TIR_ATTR: MUT_E(u.attr.value); MUT_S(u.attr.body); break;
  case TIR_ASSERT: MUT_E(u.assert_.cond); MUT_E(u.assert_.message); MUT_S(u.assert_.body); break;
  case TIR_FOR: MUT_E(u.loop.min); MUT_E(u.loop.extent); MUT_S(u.loop.body); break;
  case TIR_IF: MUT_E(u.if_.cond); MUT_S(u.if_.then_case); MUT_S(u.if_.else_case); break;
  case TIR_SEQ: {
    tir_stmt_t **out = s->u.seq.stmts;
    for (int i = 0; i < s->u.seq.n; i++) {
      tir_stmt_t *x = tir_mutate_stmt(m, s->u.seq.stmts[i]);
      if (x != s->u.seq.stmts[i] && out == s->u.seq.stmts) {
        out = mlc_arena_memdup(m->arena, s->u.seq.stmts, sizeof(*out) * (size_t)s->u.seq.n);
        if (!out) return s;
      }
      out[i] = x;
    }
    if (out == s->u.seq.stmts) return s;
    /* A child may have become a SEQ (or NULL, meaning removed): re-flatten. */
    int n = 0;
    for (int i = 0; i < s->u.seq.n; i++)
      if (out[i]) out[n++] = out[i];
    if (n == 0) return tir_evaluate(m->arena, tir_i32(m->arena, 0));
    return tir_seq(m->arena, out, n);
  }
  case TIR_EVALUATE: MUT_E(u.evaluate.value); break;
  case TIR_ALLOCATE:
    tmp.u.allocate.buffer = mutate_buffer(m, s->u.allocate.buffer);
    changed |= tmp.u.allocate.buffer != s->u.allocate.buffer;
    MUT_S(u.allocate.body);
    break;
  case TIR_BLOCK_REALIZE:
    tmp.u.realize.iter_values = mutate_exprs(m, s->u.realize.iter_values, s->u.realize.n);
    changed |= tmp.u.realize.iter_values != s->u.realize.iter_values;
    MUT_E(u.realize.predicate);
    tmp.u.realize.block = tir_mutate_block(m, s->u.realize.block);
    changed |= tmp.u.realize.block != s->u.realize.block;
    break;
  case TIR_STMT_KIND_COUNT: break;
  }
#undef MUT_E
#undef MUT_S
  if (!changed) return s;
  tir_stmt_t *out = tir_stmt_copy(m->arena, &tmp);
  return out ? out : s;
}

/* ------------------------------------------------------------------------ */
/* Substitution                                                              */
/* ------------------------------------------------------------------------ */

void tir_var_map_set(mlc_arena_t *a, tir_var_map_t *map, tir_var_t *from, tir_expr_t *to) {
  for (int i = 0; i < map->n; i++) {
    if (map->from[i] == from) {
      map->to[i] = to;
      return;
    }
  }
  if (map->n == map->cap) {
    int cap = map->cap ? map->cap * 2 : 8;
    tir_var_t **f = mlc_arena_grow(a, map->from, (size_t)map->n, (size_t)cap, sizeof(*f));
    tir_expr_t **t = mlc_arena_grow(a, map->to, (size_t)map->n, (size_t)cap, sizeof(*t));
    if (!f || !t) return;
    map->from = f;
    map->to = t;
    map->cap = cap;
  }
  map->from[map->n] = from;
  map->to[map->n] = to;
  map->n++;
}

tir_expr_t *tir_var_map_get(const tir_var_map_t *map, const tir_var_t *v) {
  for (int i = 0; i < map->n; i++)
    if (map->from[i] == v) return map->to[i];
  return NULL;
}

static tir_expr_t *subst_expr(tir_mutator_t *m, tir_expr_t *e) {
  if (e->kind == TIR_VAR) {
    tir_expr_t *to = tir_var_map_get(m->payload, e);
    return to ? to : e;
  }
  return tir_mutate_expr_children(m, e);
}

tir_expr_t *tir_substitute_expr(mlc_arena_t *a, tir_expr_t *e, const tir_var_map_t *map) {
  if (!map || map->n == 0) return e;
  tir_mutator_t m = {.arena = a, .expr = subst_expr, .payload = (void *)map};
  return tir_mutate_expr(&m, e);
}

tir_stmt_t *tir_substitute_stmt(mlc_arena_t *a, tir_stmt_t *s, const tir_var_map_t *map) {
  if (!map || map->n == 0) return s;
  tir_mutator_t m = {.arena = a, .expr = subst_expr, .payload = (void *)map};
  return tir_mutate_stmt(&m, s);
}

typedef struct {
  tir_visitor_t base;
  tir_var_t *const *vars;
  int n;
  bool found;
} uses_var_t;

static bool uses_var_expr(tir_visitor_t *v, tir_expr_t *e) {
  uses_var_t *u = (uses_var_t *)v;
  if (e->kind == TIR_VAR)
    for (int i = 0; i < u->n && !u->found; i++) u->found = e == u->vars[i];
  return !u->found;
}

bool tir_expr_uses_any_var(tir_expr_t *e, tir_var_t *const *vars, int n) {
  uses_var_t u = {{.expr = uses_var_expr}, vars, n, false};
  tir_visit_expr(&u.base, e);
  return u.found;
}

bool tir_expr_uses_var(tir_expr_t *e, const tir_var_t *v) {
  tir_var_t *one = (tir_var_t *)v;
  return tir_expr_uses_any_var(e, &one, 1);
}
