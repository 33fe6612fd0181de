/*
 * plan_allocations.c - the "plan-allocations" pass (TVM's
 * PlanAndUpdateBufferAllocationLocation with DetectBufferAccessLCA).
 *
 * Scheduling leaves intermediate buffers allocated where they were born,
 * usually the root block, even after compute_at moved their producer and
 * consumer under a tile loop. This pass moves each `T.alloc_buffer` to the
 * lowest common ancestor, in the tree of loops and blocks, of the places
 * that use it (loads, stores, a match_buffer source at its block, the data
 * variable itself), so that remove-blocks can place the allocation there
 * and compact-buffers can shrink it to one tile. When the ancestor is a
 * block, the buffer joins its alloc_buffers (and leaves its T.reads /
 * T.writes); when it is a loop, the loop's body is wrapped in a new opaque
 * block `with T.block(""):` that allocates it, with derived regions.
 *
 * As in TVM: the ancestor of a global-scope buffer is also an ancestor of
 * (or is) every blockIdx loop; a region indexed by a scan or opaque iter
 * var counts as a use above the loops that iter var's binding uses (values
 * may flow across their iterations). A buffer nothing uses stays where it
 * is.
 */
#include "compiler/lower/plan_allocations.h"

#include <string.h>

#include "compiler/lower/lower_util.h"

typedef struct scope scope_t;
struct scope {
  scope_t *parent;
  int depth;
  const tir_stmt_t *stmt; /* the original FOR or BLOCK_REALIZE */
};

typedef struct {
  tir_buffer_t *buf;
  scope_t *owner; /* the block that allocates it now */
  scope_t *lca;   /* of its uses; NULL when unused */
} alloc_t;

typedef struct {
  tir_visitor_t base; /* expressions: loads and data variables */
  mlc_arena_t *a;
  scope_t *cur;
  int nallocs, cap;
  alloc_t *allocs;
  int nblockidx, capbi;
  scope_t **blockidx;
  int nloops, caploops; /* the loops around the walk, for opaque iter vars */
  tir_var_t **loop_vars;
  scope_t **loop_scopes;
} plan_t;

static scope_t *lca(scope_t *x, scope_t *y) {
  if (!x) return y;
  while (x->depth > y->depth) x = x->parent;
  while (y->depth > x->depth) y = y->parent;
  while (x != y) {
    x = x->parent;
    y = y->parent;
  }
  return x;
}

static scope_t *new_scope(plan_t *p, const tir_stmt_t *s) {
  scope_t *sc = mlc_arena_alloc(p->a, sizeof(*sc));
  sc->parent = p->cur;
  sc->depth = p->cur ? p->cur->depth + 1 : 0;
  sc->stmt = s;
  return sc;
}

static void add_alloc(plan_t *p, tir_buffer_t *b, scope_t *owner) {
  if (p->nallocs == p->cap) {
    int cap = p->cap ? p->cap * 2 : 8;
    p->allocs = mlc_arena_grow(p->a, p->allocs, (size_t)p->nallocs, (size_t)cap, sizeof(*p->allocs));
    p->cap = cap;
  }
  p->allocs[p->nallocs++] = (alloc_t){b, owner, NULL};
}

/* A use of buffer b, or of variable v when it is an allocation's data, at
 * scope `at`. */
static void use_at(plan_t *p, const tir_buffer_t *b, const tir_var_t *v, scope_t *at) {
  for (int i = 0; i < p->nallocs; i++) {
    alloc_t *al = &p->allocs[i];
    if ((b && al->buf == b) || (v && al->buf->data == v)) al->lca = lca(al->lca, at);
  }
}

static void use(plan_t *p, const tir_buffer_t *b, const tir_var_t *v) { use_at(p, b, v, p->cur); }

/* The scope just above the outermost enclosing loop that e uses, or NULL. */
static scope_t *above_loops_of(plan_t *p, tir_expr_t *e) {
  for (int i = 0; i < p->nloops; i++)
    if (tir_expr_uses_var(e, p->loop_vars[i])) return p->loop_scopes[i]->parent;
  return NULL;
}

/* TVM's UpdateDominateScopeOfOpaqueIter: a region indexed by a scan or
 * opaque iter var may carry values across the loops its binding uses, so
 * the buffer must live above those loops. */
static void opaque_iter_uses(plan_t *p, tir_stmt_t *s) {
  tir_block_t *b = s->u.realize.block;
  for (int k = 0; k < b->niter_vars && k < s->u.realize.n; k++) {
    tir_iter_type_t t = b->iter_vars[k].type;
    if (t != TIR_ITER_SCAN && t != TIR_ITER_OPAQUE) continue;
    scope_t *dom = above_loops_of(p, s->u.realize.iter_values[k]);
    if (!dom) continue;
    tir_var_t *iv = b->iter_vars[k].var;
    for (int w = 0; w < 2; w++) {
      tir_region_t *rs = w ? b->writes : b->reads;
      for (int i = 0; i < (w ? b->nwrites : b->nreads); i++)
        for (int d = 0; d < rs[i].ndim; d++)
          if (tir_expr_uses_var(rs[i].ranges[d].min, iv) || tir_expr_uses_var(rs[i].ranges[d].extent, iv))
            use_at(p, rs[i].buffer, NULL, dom);
    }
  }
}

static bool plan_expr(tir_visitor_t *v, tir_expr_t *e) {
  plan_t *p = (plan_t *)v;
  if (e->kind == TIR_BUFFER_LOAD) use(p, e->u.load.buffer, NULL);
  else if (e->kind == TIR_VAR) use(p, NULL, e);
  return true;
}

static void walk_stmt(plan_t *p, tir_stmt_t *s);

static void walk_block(plan_t *p, tir_stmt_t *s) {
  tir_block_t *b = s->u.realize.block;
  for (int i = 0; i < s->u.realize.n; i++) tir_visit_expr(&p->base, s->u.realize.iter_values[i]);
  tir_visit_expr(&p->base, s->u.realize.predicate);
  scope_t *saved = p->cur;
  p->cur = new_scope(p, s);
  for (int i = 0; i < b->nalloc_buffers; i++) add_alloc(p, b->alloc_buffers[i], p->cur);
  opaque_iter_uses(p, s);
  for (int i = 0; i < b->nmatch_buffers; i++) {
    tir_region_t *src = &b->match_buffers[i].source;
    use(p, src->buffer, NULL);
    for (int d = 0; d < src->ndim; d++) {
      tir_visit_expr(&p->base, src->ranges[d].min);
      tir_visit_expr(&p->base, src->ranges[d].extent);
    }
  }
  walk_stmt(p, b->init);
  walk_stmt(p, b->body);
  p->cur = saved;
}

static void walk_loop(plan_t *p, tir_stmt_t *s) {
  tir_visit_expr(&p->base, s->u.loop.min);
  tir_visit_expr(&p->base, s->u.loop.extent);
  scope_t *saved = p->cur;
  p->cur = new_scope(p, s);
  const char *tag = s->u.loop.thread_tag;
  if (s->u.loop.kind == TIR_FOR_THREAD_BINDING && tag && strncmp(tag, "blockIdx", 8) == 0) {
    if (p->nblockidx == p->capbi) {
      int cap = p->capbi ? p->capbi * 2 : 4;
      p->blockidx = mlc_arena_grow(p->a, p->blockidx, (size_t)p->nblockidx, (size_t)cap, sizeof(*p->blockidx));
      p->capbi = cap;
    }
    p->blockidx[p->nblockidx++] = p->cur;
  }
  if (p->nloops == p->caploops) {
    int cap = p->caploops ? p->caploops * 2 : 8;
    p->loop_vars = mlc_arena_grow(p->a, p->loop_vars, (size_t)p->nloops, (size_t)cap, sizeof(*p->loop_vars));
    p->loop_scopes = mlc_arena_grow(p->a, p->loop_scopes, (size_t)p->nloops, (size_t)cap, sizeof(*p->loop_scopes));
    p->caploops = cap;
  }
  p->loop_vars[p->nloops] = s->u.loop.var;
  p->loop_scopes[p->nloops++] = p->cur;
  walk_stmt(p, s->u.loop.body);
  p->nloops--;
  p->cur = saved;
}

static void walk_stmt(plan_t *p, tir_stmt_t *s) {
  if (!s) return;
  switch (s->kind) {
  case TIR_FOR: walk_loop(p, s); return;
  case TIR_BLOCK_REALIZE: walk_block(p, s); return;
  case TIR_BUFFER_STORE:
    use(p, s->u.store.buffer, NULL);
    tir_visit_expr(&p->base, s->u.store.value);
    for (int i = 0; i < s->u.store.nindices; i++) tir_visit_expr(&p->base, s->u.store.indices[i]);
    return;
  case TIR_ATTR:
    if (s->u.attr.node) use(p, NULL, s->u.attr.node);
    tir_visit_expr(&p->base, s->u.attr.value);
    walk_stmt(p, s->u.attr.body);
    return;
  case TIR_LET:
    tir_visit_expr(&p->base, s->u.let.value);
    walk_stmt(p, s->u.let.body);
    return;
  case TIR_ASSERT:
    tir_visit_expr(&p->base, s->u.assert_.cond);
    walk_stmt(p, s->u.assert_.body);
    return;
  case TIR_IF:
    tir_visit_expr(&p->base, s->u.if_.cond);
    walk_stmt(p, s->u.if_.then_case);
    walk_stmt(p, s->u.if_.else_case);
    return;
  case TIR_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) walk_stmt(p, s->u.seq.stmts[i]);
    return;
  case TIR_EVALUATE: tir_visit_expr(&p->base, s->u.evaluate.value); return;
  case TIR_ALLOCATE: walk_stmt(p, s->u.allocate.body); return;
  case TIR_STMT_KIND_COUNT: return;
  }
}

/* Where each buffer goes: the LCA of its uses, above every blockIdx loop for
 * global memory, or its current block when unused. */
static void finish_plan(plan_t *p) {
  for (int i = 0; i < p->nallocs; i++) {
    alloc_t *al = &p->allocs[i];
    if (!al->lca) {
      al->lca = al->owner;
      continue;
    }
    if (strcmp(al->buf->scope, "global") == 0)
      for (int k = 0; k < p->nblockidx; k++) al->lca = lca(al->lca, p->blockidx[k]);
  }
}

/* ------------------------------------------------------------------------ */
/* Rewrite                                                                   */
/* ------------------------------------------------------------------------ */

/* The buffers planned at statement s, in the order they were met. */
static tir_buffer_t **planned_at(plan_t *p, const tir_stmt_t *s, int *n) {
  tir_buffer_t **out = NULL;
  *n = 0;
  for (int i = 0; i < p->nallocs; i++) {
    if (p->allocs[i].lca->stmt != s) continue;
    out = mlc_arena_grow(p->a, out, (size_t)*n, (size_t)*n + 1, sizeof(*out));
    out[(*n)++] = p->allocs[i].buf;
  }
  return out;
}

static bool in_list(tir_buffer_t *const *bs, int n, const tir_buffer_t *b) {
  for (int i = 0; i < n; i++)
    if (bs[i] == b) return true;
  return false;
}

/* Regions minus those of buffers the block now allocates. */
static tir_region_t *drop_regions(mlc_arena_t *a, const tir_region_t *rs, int *n, tir_buffer_t *const *bs,
                                  int nb) {
  tir_region_t *out = mlc_arena_alloc(a, sizeof(*out) * (size_t)(*n > 0 ? *n : 1));
  int k = 0;
  for (int i = 0; i < *n; i++)
    if (!in_list(bs, nb, rs[i].buffer)) out[k++] = rs[i];
  *n = k;
  return out;
}

static bool same_list(tir_buffer_t *const *x, int nx, tir_buffer_t *const *y, int ny) {
  if (nx != ny) return false;
  for (int i = 0; i < nx; i++)
    if (x[i] != y[i]) return false;
  return true;
}

static tir_stmt_t *update_block(mlc_arena_t *a, tir_stmt_t *r, tir_buffer_t **bs, int n) {
  tir_block_t *old = r->u.realize.block;
  if (same_list(old->alloc_buffers, old->nalloc_buffers, bs, n)) return r;
  tir_block_t *b = tir_block_copy(a, old);
  b->alloc_buffers = bs;
  b->nalloc_buffers = n;
  b->reads = drop_regions(a, old->reads, &b->nreads, bs, n);
  b->writes = drop_regions(a, old->writes, &b->nwrites, bs, n);
  r = tir_stmt_copy(a, r);
  r->u.realize.block = b;
  return r;
}

/* `with T.block(""):` allocating bs around body, regions derived. */
static tir_stmt_t *opaque_block(mlc_arena_t *a, tir_buffer_t **bs, int n, tir_stmt_t *body) {
  tir_block_t *b = tir_block_new(a, "");
  b->alloc_buffers = bs;
  b->nalloc_buffers = n;
  b->body = body;
  tir_block_derive_regions(a, b, &b->reads, &b->nreads, &b->writes, &b->nwrites);
  return tir_block_realize(a, NULL, 0, tir_bool(a, true), b);
}

static tir_stmt_t *plan_stmt(tir_mutator_t *m, tir_stmt_t *s) {
  plan_t *p = m->payload;
  if (s->kind != TIR_FOR && s->kind != TIR_BLOCK_REALIZE) return tir_mutate_stmt_children(m, s);
  int n;
  tir_buffer_t **bs = planned_at(p, s, &n);
  tir_stmt_t *r = tir_mutate_stmt_children(m, s);
  if (s->kind == TIR_BLOCK_REALIZE) return update_block(m->arena, r, bs, n);
  if (n == 0) return r;
  r = tir_stmt_copy(m->arena, r);
  r->u.loop.body = opaque_block(m->arena, bs, n, r->u.loop.body);
  return r;
}

static int run(tir_func_t *f) {
  plan_t p;
  memset(&p, 0, sizeof p);
  p.base.expr = plan_expr;
  p.a = f->arena;
  walk_stmt(&p, f->body);
  if (p.nallocs == 0) return MLC_OK;
  finish_plan(&p);
  tir_mutator_t m = {.arena = f->arena, .stmt = plan_stmt, .payload = &p};
  f->body = tir_mutate_stmt(&m, f->body);
  return MLC_OK;
}

int mlc_pass_plan_allocations(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes) {
  int rc;
  LOWER_GUARDED(rc, f->arena, run(f));
  return rc;
}
