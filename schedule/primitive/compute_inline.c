/*
 * compute_inline.c - compute_inline and reverse_compute_inline (TVM's
 * src/tir/schedule/primitive/compute_inline.cc).
 *
 * compute_inline removes a producer `B[v0, v1, ...] = f(v0, v1, ...)` and
 * replaces every load `B[e0, e1, ...]` in its scope by f(e0, e1, ...).
 * reverse_compute_inline removes a consumer `D[g(v)] = h(C[m(v)], ...)`
 * whose index map m is bijective, and makes its single producer
 * `C[p(u)] = r(u)` store `D[g(m^-1(p(u)))] = h(r(u), ...)` directly. Either
 * way the inlined buffer's allocation leaves the scope block, and the blocks
 * that accessed it get their read/write regions derived again from their
 * bodies (as TVM's GetBlockReadWriteRegion does).
 *
 * Both rewrite the whole scope in one copy-on-write pass (a tir_mutator):
 * removing the inlined block from its SEQ, substituting, and fixing block
 * signatures on the way back up.
 *
 * Shared with compute_at.c and defined here: the stage-pipeline,
 * output-block and leaf-removal checks, the inline primitives without their
 * trace entry (compute_at's "inline" location), and the inverse of an affine
 * iteration map (TVM's InverseAffineIterMap: reverse_compute_inline inverts
 * the consumer's load indices with it, compute_at the provided indices of
 * the block it moves). They are declared in compute_location.h.
 */
#include <string.h>

#include "schedule/primitive/compute_location.h"


typedef struct {
  sch_t *sch;
  const char *prim;
  bool reverse;
  bool unrecorded;          /* compute_at's "inline" location records itself */
  mlc_arena_t *a;
  sch_path_t path;          /* to the inlined block */
  int scope_depth, rm_depth;
  tir_block_t *block;       /* the inlined block */
  tir_buffer_t *buffer;     /* the inlined buffer */
  tir_stmt_t *store;        /* the inlined block's body */
  tir_var_map_t sub;        /* compute_inline: producer iter vars -> load indices (per load);
                               reverse: consumer iter vars -> producer expressions */
  tir_stmt_t *producer;     /* reverse: the producer's BLOCK_REALIZE */
  tir_expr_t *producer_pred;/* reverse: its new predicate */
  tir_expr_t *rhs;          /* reverse: the producer's stored value (after mutation) */
  const char *opaque;       /* name of a block that accesses the buffer opaquely */
} inl_t;

static bool is_true(const tir_expr_t *e) { return !e || tir_is_const_int(e, 1); }

/* ------------------------------------------------------------------------ */
/* Checks shared with compute_at.c                                           */
/* ------------------------------------------------------------------------ */

static const char *block_name(const tir_stmt_t *realize) { return realize->u.realize.block->name; }

/* The BLOCK_REALIZEs under s that are not inside another block. */
static void child_blocks(tir_stmt_t *s, tir_stmt_t ***out, int *n, int *cap, mlc_arena_t *a) {
  if (!s) return;
  switch (s->kind) {
  case TIR_BLOCK_REALIZE:
    if (*n == *cap) {
      int c = *cap ? *cap * 2 : 8;
      *out = mlc_arena_grow(a, *out, (size_t)*n, (size_t)c, sizeof(**out));
      *cap = c;
    }
    (*out)[(*n)++] = s;
    return;
  case TIR_FOR: child_blocks(s->u.loop.body, out, n, cap, a); return;
  case TIR_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) child_blocks(s->u.seq.stmts[i], out, n, cap, a);
    return;
  case TIR_IF:
    child_blocks(s->u.if_.then_case, out, n, cap, a);
    child_blocks(s->u.if_.else_case, out, n, cap, a);
    return;
  case TIR_LET: child_blocks(s->u.let.body, out, n, cap, a); return;
  case TIR_ATTR: child_blocks(s->u.attr.body, out, n, cap, a); return;
  case TIR_ASSERT: child_blocks(s->u.assert_.body, out, n, cap, a); return;
  case TIR_ALLOCATE: child_blocks(s->u.allocate.body, out, n, cap, a); return;
  default: return;
  }
}

static bool block_reads(const tir_block_t *b, const tir_buffer_t *buf) {
  for (int i = 0; i < b->nreads; i++)
    if (b->reads[i].buffer == buf) return true;
  return false;
}

/* TVM's stage pipeline: no child block of the scope overwrites a buffer that
 * an earlier child block read (a write-after-read dependence). The block at
 * the end of `path` names the failure. */
int sch_check_stage_pipeline(sch_t *sch, const char *prim, const sch_path_t *path, int scope_depth) {
  tir_block_t *scope = path->stmts[scope_depth]->u.realize.block;
  tir_stmt_t **kids = NULL;
  int n = 0, cap = 0;
  child_blocks(scope->body, &kids, &n, &cap, sch_arena(sch));
  for (int j = 1; j < n; j++) {
    const tir_block_t *w = kids[j]->u.realize.block;
    for (int k = 0; k < w->nwrites; k++)
      for (int i = 0; i < j; i++) {
        const tir_block_t *r = kids[i]->u.realize.block;
        if (r != w && block_reads(r, w->writes[k].buffer))
          return sch_fail_at(sch, prim, kids[j],
                             "the scope of block %s is not a stage pipeline: block %s writes buffer %s "
                             "after block %s reads it",
                             block_name(path->stmts[path->n - 1]), w->name, w->writes[k].buffer->name, r->name);
      }
  }
  return MLC_OK;
}

static bool scope_allocates(const tir_block_t *scope, const tir_buffer_t *buf) {
  for (int i = 0; i < scope->nalloc_buffers; i++)
    if (scope->alloc_buffers[i] == buf) return true;
  return false;
}

/* TVM's CheckNotOutputBlock: the block at the end of `path` writes only
 * buffers allocated by its scope block. */
int sch_check_not_output_block(sch_t *sch, const char *prim, const sch_path_t *path, int scope_depth) {
  const tir_block_t *scope = path->stmts[scope_depth]->u.realize.block;
  const tir_block_t *b = path->stmts[path->n - 1]->u.realize.block;
  for (int i = 0; i < b->nwrites; i++)
    if (!scope_allocates(scope, b->writes[i].buffer))
      return sch_fail_at(sch, prim, path->stmts[path->n - 1],
                         "block %s is an output block: it writes buffer %s, which its scope does not allocate",
                         b->name, b->writes[i].buffer->name);
  return MLC_OK;
}

/* TVM's LeafBlockRemovalPlan: the block at the end of `path` goes with the
 * loops that hold only it; the statement removed (path->stmts[*rm_depth])
 * must sit in a SEQ with others. */
int sch_plan_leaf_removal(sch_t *sch, const char *prim, const sch_path_t *path, int scope_depth, int *rm_depth) {
  int d = path->n - 1;
  while (d - 1 > scope_depth && path->stmts[d - 1]->kind == TIR_FOR) d--;
  if (path->stmts[d - 1]->kind != TIR_SEQ)
    return sch_fail_at(sch, prim, path->stmts[scope_depth],
                       "block %s is the only leaf of the scope of block %s and cannot be removed",
                       block_name(path->stmts[path->n - 1]), block_name(path->stmts[scope_depth]));
  *rm_depth = d;
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Small arithmetic helpers                                                  */
/* ------------------------------------------------------------------------ */

static bool prove(tir_analyzer_t *an, mlc_arena_t *a, tir_expr_kind_t k, tir_expr_t *x, tir_expr_t *y) {
  return tir_prove(an, mk(a, k, x, y));
}

/* ------------------------------------------------------------------------ */
/* Inverse of an affine iteration map (TVM's InverseAffineIterMap)          */
/* ------------------------------------------------------------------------ */

/* The value being pushed back into each mark. */
typedef struct {
  const tir_iter_mark_t *mark;
  tir_expr_t *value;
  bool expanded; /* fused marks: already split into their sources */
} mark_value_t;

typedef struct {
  tir_analyzer_t *an;
  mlc_arena_t *a;
  mark_value_t *items;
  int n, cap;
} inverse_t;

static void inv_add(inverse_t *inv, const tir_iter_mark_t *m, tir_expr_t *v) {
  for (int i = 0; i < inv->n; i++) {
    if (inv->items[i].mark != m) continue;
    inv->items[i].value = mk(inv->a, TIR_ADD, inv->items[i].value, v);
    return;
  }
  if (inv->n == inv->cap) {
    int cap = inv->cap ? inv->cap * 2 : 8;
    inv->items = mlc_arena_grow(inv->a, inv->items, (size_t)inv->n, (size_t)cap, sizeof(*inv->items));
    inv->cap = cap;
  }
  inv->items[inv->n++] = (mark_value_t){m, v, false};
}

/* Pushes `value` (the sum's value) back into the marks of its splits. A sum
 * of several splits must be a dense fusion (scales 1, e_n, e_n * e_n-1, ...)
 * for the digits to be recovered with floormod/floordiv. */
static bool inv_sum(inverse_t *inv, const tir_iter_sum_t *sum, tir_expr_t *value) {
  tir_expr_t *v = value;
  if (sum->base && !tir_is_const_int(sum->base, 0)) v = mk(inv->a, TIR_SUB, v, sum->base);
  if (sum->nargs == 0) return true;
  if (sum->nargs == 1) { /* a lone split of scale 1 or -1 (`9 - v`) */
    const tir_iter_split_t *s = &sum->args[0];
    if (tir_is_const_int(s->scale, -1)) v = mk(inv->a, TIR_SUB, mk_int(inv->a, v, 0), v);
    else if (!tir_is_const_int(s->scale, 1)) return false;
    inv_add(inv, s->source, mk(inv->a, TIR_MUL, v, s->lower_factor));
    return true;
  }
  tir_expr_t *expect = mk_int(inv->a, v, 1);
  for (int i = sum->nargs - 1; i >= 0; i--) {
    if (!prove(inv->an, inv->a, TIR_EQ, sum->args[i].scale, expect)) return false;
    expect = tir_simplify(inv->an, mk(inv->a, TIR_MUL, expect, sum->args[i].extent));
  }
  for (int i = sum->nargs - 1; i >= 0; i--) {
    const tir_iter_split_t *s = &sum->args[i];
    tir_expr_t *digit = mk(inv->a, TIR_FLOOR_MOD, v, s->extent);
    inv_add(inv, s->source, mk(inv->a, TIR_MUL, digit, s->lower_factor));
    v = mk(inv->a, TIR_FLOOR_DIV, v, s->extent);
  }
  return true;
}

/* True when fused mark m still receives values from a fused mark that has
 * not been expanded (so its value is not complete yet). */
static bool inv_pending(const inverse_t *inv, const tir_iter_mark_t *m) {
  for (int i = 0; i < inv->n; i++) {
    const mark_value_t *o = &inv->items[i];
    if (o->expanded || !o->mark->sum || o->mark == m) continue;
    for (int k = 0; k < o->mark->sum->nargs; k++)
      if (o->mark->sum->args[k].source == m) return true;
  }
  return false;
}

/* Expands fused marks, outermost first, until only iterator marks remain. */
static bool inv_expand(inverse_t *inv) {
  for (;;) {
    int pick = -1;
    for (int i = 0; i < inv->n && pick < 0; i++)
      if (!inv->items[i].expanded && inv->items[i].mark->sum && !inv_pending(inv, inv->items[i].mark)) pick = i;
    if (pick < 0) break;
    inv->items[pick].expanded = true;
    if (!inv_sum(inv, inv->items[pick].mark->sum, inv->items[pick].value)) return false;
  }
  for (int i = 0; i < inv->n; i++)
    if (inv->items[i].mark->sum && !inv->items[i].expanded) return false; /* a cycle: not a tree */
  return true;
}

/* The values of the iterators of a bijective map at the point where its
 * outputs equal `outputs` (one per map sum): out[i] for vars[i], NULL when
 * the map does not use vars[i] (e.g. an iterator of extent 1). Results are
 * simplified with `an` (built in arena a, the analyzer's). MLC_EUNSUPPORTED when a sum is not a dense fusion. */
int sch_inverse_iter_map(tir_analyzer_t *an, mlc_arena_t *a, const tir_iter_map_t *map, tir_expr_t **outputs,
                         tir_var_t **vars, int nvars, tir_expr_t **out) {
  inverse_t inv = {an, a, NULL, 0, 0};
  for (int i = 0; i < map->n; i++)
    if (!inv_sum(&inv, &map->sums[i], outputs[i])) return MLC_EUNSUPPORTED;
  if (!inv_expand(&inv)) return MLC_EUNSUPPORTED;
  for (int v = 0; v < nvars; v++) {
    out[v] = NULL;
    for (int i = 0; i < inv.n; i++) {
      const tir_iter_mark_t *m = inv.items[i].mark;
      if (m->sum || m->var != vars[v]) continue;
      tir_expr_t *e = inv.items[i].value;
      if (m->var_min) e = mk(a, TIR_ADD, e, m->var_min);
      out[v] = tir_simplify(an, as_dtype(a, e, vars[v]->dtype));
    }
  }
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Variables of an expression                                                */
/* ------------------------------------------------------------------------ */

typedef struct {
  tir_var_t **allowed;
  int n;
  bool ok;
} vars_in_t;

static bool vars_in_expr(tir_visitor_t *v, tir_expr_t *e) {
  vars_in_t *p = v->payload;
  if (e->kind != TIR_VAR || tir_dtype_is_handle(e->dtype)) return true;
  bool found = false;
  for (int i = 0; i < p->n; i++) found |= p->allowed[i] == e;
  p->ok &= found;
  return true;
}

/* True when the store mentions no variable but allowed[0..n) (buffer data
 * handles aside, as TVM's count of non-pointer undefined variables). */
static bool store_uses_only(tir_stmt_t *store, tir_var_t **allowed, int n) {
  vars_in_t p = {allowed, n, true};
  tir_visitor_t v = {.expr = vars_in_expr, .payload = &p};
  tir_visit_stmt(&v, store);
  return p.ok;
}

/* ------------------------------------------------------------------------ */
/* The scope rewrite                                                         */
/* ------------------------------------------------------------------------ */

static bool accesses(const tir_block_t *b, const tir_buffer_t *buf) {
  for (int i = 0; i < b->nreads; i++)
    if (b->reads[i].buffer == buf) return true;
  for (int i = 0; i < b->nwrites; i++)
    if (b->writes[i].buffer == buf) return true;
  return false;
}

/* A copy of the realize's block for changing its signature. */
static tir_block_t *own_block(mlc_arena_t *a, tir_stmt_t **realize, const tir_stmt_t *orig) {
  if (*realize == orig) *realize = tir_stmt_copy(a, orig);
  (*realize)->u.realize.block = tir_block_copy(a, (*realize)->u.realize.block);
  return (*realize)->u.realize.block;
}

/* TVM's UpdateBuffersInBlockSignature: the scope block stops allocating the
 * buffer; a block that accessed it gets regions derived from its new body. */
static tir_stmt_t *fix_signature(inl_t *c, tir_stmt_t *orig, tir_stmt_t *out) {
  const tir_block_t *ob = orig->u.realize.block;
  if (orig == c->path.stmts[c->scope_depth]) {
    tir_block_t *b = own_block(c->a, &out, orig);
    int k = 0;
    for (int i = 0; i < b->nalloc_buffers; i++)
      if (b->alloc_buffers[i] != c->buffer) b->alloc_buffers[k++] = b->alloc_buffers[i];
    b->nalloc_buffers = k;
  } else if (accesses(ob, c->buffer)) {
    tir_block_t *b = own_block(c->a, &out, orig);
    tir_block_derive_regions(c->a, b, &b->reads, &b->nreads, &b->writes, &b->nwrites);
  }
  return out;
}

/* reverse: the consumer's store rewritten for the producer: its iter vars
 * as producer expressions, its loads of the buffer as the producer's value. */
static tir_expr_t *reverse_subst_expr(tir_mutator_t *m, tir_expr_t *e) {
  inl_t *c = m->payload;
  if (e->kind == TIR_VAR) {
    tir_expr_t *to = tir_var_map_get(&c->sub, e);
    return to ? to : e;
  }
  tir_expr_t *out = tir_mutate_expr_children(m, e);
  if (out->kind == TIR_BUFFER_LOAD && out->u.load.buffer == c->buffer) return c->rhs;
  return out;
}

static tir_stmt_t *reverse_store(inl_t *c, tir_stmt_t *producer_store) {
  c->rhs = producer_store->u.store.value;
  tir_mutator_t m = {.arena = c->a, .expr = reverse_subst_expr, .payload = c};
  return tir_mutate_stmt(&m, c->store);
}

/* compute_inline: a load of the buffer becomes the producer's value with
 * its iter vars replaced by the load's indices. */
static tir_expr_t *inline_expr(tir_mutator_t *m, tir_expr_t *e) {
  inl_t *c = m->payload;
  if (e->kind == TIR_VAR && e == c->buffer->data) c->opaque = "";
  tir_expr_t *out = tir_mutate_expr_children(m, e);
  if (c->reverse || out->kind != TIR_BUFFER_LOAD || out->u.load.buffer != c->buffer) return out;
  tir_var_map_t map = {0, 0, NULL, NULL};
  for (int i = 0; i < out->u.load.nindices; i++)
    tir_var_map_set(c->a, &map, c->store->u.store.indices[i], out->u.load.indices[i]);
  return tir_substitute_expr(c->a, c->store->u.store.value, &map);
}

static tir_stmt_t *inline_realize(tir_mutator_t *m, tir_stmt_t *s) {
  inl_t *c = m->payload;
  const tir_block_t *b = s->u.realize.block;
  for (int i = 0; i < b->nmatch_buffers; i++)
    if (b->match_buffers[i].source.buffer == c->buffer) c->opaque = b->name;
  tir_stmt_t *out = tir_mutate_stmt_children(m, s);
  if (c->reverse && s == c->producer) {
    if (out == s) out = tir_stmt_copy(c->a, s);
    out->u.realize.predicate = c->producer_pred;
  }
  return fix_signature(c, s, out);
}

static tir_stmt_t *inline_stmt(tir_mutator_t *m, tir_stmt_t *s) {
  inl_t *c = m->payload;
  if (s == c->path.stmts[c->rm_depth - 1]) { /* the SEQ holding the inlined block */
    tir_stmt_t **stmts = mlc_arena_alloc(c->a, sizeof(*stmts) * (size_t)s->u.seq.n);
    int k = 0;
    for (int i = 0; i < s->u.seq.n; i++)
      if (s->u.seq.stmts[i] != c->path.stmts[c->rm_depth]) stmts[k++] = tir_mutate_stmt(m, s->u.seq.stmts[i]);
    return tir_seq(c->a, stmts, k);
  }
  if (s->kind == TIR_BLOCK_REALIZE) return inline_realize(m, s);
  if (c->reverse && s->kind == TIR_BUFFER_STORE && s->u.store.buffer == c->buffer)
    return reverse_store(c, tir_mutate_stmt_children(m, s));
  return tir_mutate_stmt_children(m, s);
}

/* Rewrites the scope, then replaces it and records the primitive. */
static int rewrite_scope(inl_t *c, sch_rv_t block_rv) {
  tir_mutator_t m = {.arena = c->a, .expr = inline_expr, .stmt = inline_stmt, .payload = c};
  tir_stmt_t *scope = tir_mutate_stmt(&m, c->path.stmts[c->scope_depth]);
  if (c->opaque)
    return sch_fail(c->sch, c->prim, "buffer %s is accessed opaquely or matched by T.match_buffer%s%s",
                    c->buffer->name, *c->opaque ? " in block " : "", c->opaque);
  sch_replace(c->sch, &c->path, c->scope_depth, scope);
  if (c->unrecorded) return MLC_OK;
  sch_arg_t input = sch_arg_rv(block_rv);
  sch_record(c->sch, c->reverse ? SCH_INST_REVERSE_COMPUTE_INLINE : SCH_INST_COMPUTE_INLINE, &input, 1, NULL, 0,
             NULL, 0, NULL);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* compute_inline                                                            */
/* ------------------------------------------------------------------------ */

static int locate(inl_t *c, sch_rv_t block_rv) {
  int rc = sch_find_block(c->sch, c->prim, block_rv, &c->path);
  if (rc != MLC_OK) return rc;
  c->block = c->path.stmts[c->path.n - 1]->u.realize.block;
  c->scope_depth = sch_path_scope_depth(&c->path, c->path.n - 1);
  if (c->scope_depth < 0) return sch_fail(c->sch, c->prim, "block %s is the root block", c->block->name);
  if (c->block->init)
    return sch_fail_at(c->sch, c->prim, c->path.stmts[c->path.n - 1], "block %s has an init statement",
                       c->block->name);
  return MLC_OK;
}

/* TVM's ComputeInliner::BodyPatternAllowInline: `B[v0, v1, ...] = f(v0, v1,
 * ...)` with distinct iteration variables as indices and no other variable. */
static int check_inline_body(inl_t *c) {
  tir_stmt_t *s = c->block->body;
  bool ok = s->kind == TIR_BUFFER_STORE && s->u.store.buffer == c->buffer;
  for (int i = 0; ok && i < s->u.store.nindices; i++) {
    ok = s->u.store.indices[i]->kind == TIR_VAR;
    for (int j = 0; ok && j < i; j++) ok = s->u.store.indices[j] != s->u.store.indices[i];
  }
  if (ok) ok = store_uses_only(s, s->u.store.indices, s->u.store.nindices);
  if (!ok)
    return sch_fail_at(c->sch, c->prim, c->path.stmts[c->path.n - 1],
                       "the body of block %s is not a single store `%s[v0, v1, ...] = f(v0, v1, ...)` indexed by "
                       "distinct variables",
                       c->block->name, c->buffer->name);
  c->store = s;
  return MLC_OK;
}

static int compute_inline_impl(sch_t *sch, sch_rv_t block_rv, bool unrecorded) {
  inl_t c = {.sch = sch, .prim = "compute_inline", .unrecorded = unrecorded, .a = sch_arena(sch)};
  int rc = locate(&c, block_rv);
  if (rc != MLC_OK) return rc;
  if (c.block->nwrites != 1)
    return sch_fail_at(sch, c.prim, c.path.stmts[c.path.n - 1],
                       "block %s writes %d buffer regions, expected exactly one", c.block->name, c.block->nwrites);
  c.buffer = c.block->writes[0].buffer;
  rc = sch_check_stage_pipeline(sch, c.prim, &c.path, c.scope_depth);
  if (rc == MLC_OK) rc = sch_check_not_output_block(sch, c.prim, &c.path, c.scope_depth);
  if (rc == MLC_OK && !sch_is_complete_block(&c.path))
    rc = sch_fail_at(sch, c.prim, c.path.stmts[c.path.n - 1], "block %s is not a complete block",
                     c.block->name);
  if (rc == MLC_OK) rc = check_inline_body(&c);
  if (rc == MLC_OK) rc = sch_plan_leaf_removal(sch, c.prim, &c.path, c.scope_depth, &c.rm_depth);
  if (rc == MLC_OK) rc = rewrite_scope(&c, block_rv);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* reverse_compute_inline                                                    */
/* ------------------------------------------------------------------------ */

static bool writes_buffer(const tir_block_t *b, const tir_buffer_t *buf) {
  for (int i = 0; i < b->nwrites; i++)
    if (b->writes[i].buffer == buf) return true;
  return false;
}

/* TVM's GetSingleRead: of the buffers the consumer reads, exactly one is
 * produced in the scope; and TVM's NonSingleProducerError check: that
 * buffer's producer is the consumer's only producer, a complete block (not
 * an output block) whose only consumer is this block. */
static int find_producer(inl_t *c) {
  tir_stmt_t **prods, **cons;
  int nprods, ncons, nbufs = 0;
  int rc = sch_block_producers(c->sch, &c->path, &prods, &nprods);
  if (rc != MLC_OK) return rc;
  for (int i = 0; i < c->block->nreads; i++) {
    tir_buffer_t *buf = c->block->reads[i].buffer;
    bool produced = false, seen = false;
    for (int k = 0; k < i; k++) seen |= c->block->reads[k].buffer == buf;
    for (int k = 0; k < nprods && !seen; k++) produced |= writes_buffer(prods[k]->u.realize.block, buf);
    if (!produced) continue;
    c->buffer = buf;
    nbufs++;
  }
  if (nbufs != 1)
    return sch_fail_at(c->sch, c->prim, c->path.stmts[c->path.n - 1],
                       "block %s reads %d buffers produced in its scope, expected exactly one", c->block->name, nbufs);
  if (!sch_is_complete_block(&c->path))
    return sch_fail_at(c->sch, c->prim, c->path.stmts[c->path.n - 1], "block %s is not a complete block",
                       c->block->name);
  sch_path_t *pp = mlc_malloc(sizeof(*pp));
  if (!pp) return sch_fail(c->sch, c->prim, "out of memory");
  rc = MLC_OK;
  bool ok = nprods == 1 && sch_find_uid(c->sch, prods[0]->u.realize.block->uid, pp) && sch_is_complete_block(pp);
  if (ok) rc = sch_block_consumers(c->sch, pp, &cons, &ncons);
  if (rc == MLC_OK && !(ok && ncons == 1))
    rc = sch_fail_at(c->sch, c->prim, c->path.stmts[c->path.n - 1],
                     "block %s must have a single producer, a complete block whose only consumer it is",
                     c->block->name);
  if (rc == MLC_OK) rc = sch_check_not_output_block(c->sch, c->prim, pp, sch_path_scope_depth(pp, pp->n - 1));
  if (rc == MLC_OK) c->producer = prods[0];
  mlc_free(pp);
  return rc;
}

typedef struct {
  const tir_buffer_t *buffer;
  tir_expr_t *first;
  bool consistent;
  int n;
} loads_t;

static bool collect_load(tir_visitor_t *v, tir_expr_t *e) {
  loads_t *l = v->payload;
  if (e->kind != TIR_BUFFER_LOAD || e->u.load.buffer != l->buffer) return true;
  if (l->n++ == 0) {
    l->first = e;
  } else {
    for (int i = 0; i < e->u.load.nindices; i++)
      l->consistent &= tir_expr_equal(e->u.load.indices[i], l->first->u.load.indices[i]);
  }
  return true;
}

static int body_error(inl_t *c) {
  return sch_fail_at(c->sch, c->prim, c->path.stmts[c->path.n - 1],
                     "the body of block %s is not a store `D[...] = g(%s[f(v)], ...)` reading %s at one bijective "
                     "affine index f of its iteration variables, covered by the producer, without a predicate",
                     c->block->name, c->buffer->name, c->buffer->name);
}

/* The consumer's iter vars as expressions of the producer's (c->sub): the
 * inverse of the consumer's load index map at the producer's store indices.
 * False when the load indices are not a bijective affine map. */
static bool map_consumer_iters(inl_t *c, tir_analyzer_t *an, tir_expr_t *load, tir_stmt_t *pstore) {
  const tir_block_t *b = c->block;
  int nv = b->niter_vars;
  tir_var_t **vars = mlc_arena_alloc(c->a, sizeof(*vars) * (size_t)(nv + 1));
  tir_range_t *doms = mlc_arena_alloc(c->a, sizeof(*doms) * (size_t)(nv + 1));
  tir_expr_t **vals = mlc_arena_alloc(c->a, sizeof(*vals) * (size_t)(nv + 1));
  for (int i = 0; i < nv; i++) {
    vars[i] = b->iter_vars[i].var;
    doms[i] = b->iter_vars[i].dom;
    if (tir_is_const_int(doms[i].extent, 1) && doms[i].min->kind == TIR_INT_IMM)
      tir_var_map_set(c->a, &c->sub, vars[i], doms[i].min);
  }
  tir_iter_map_t map;
  if (tir_detect_iter_map(&map, an, load->u.load.indices, load->u.load.nindices, vars, doms, nv, NULL,
                          TIR_ITER_BIJECTIVE) != MLC_OK) {
    mlc_error_clear();
    return false;
  }
  if (map.n != pstore->u.store.nindices ||
      sch_inverse_iter_map(an, c->a, &map, pstore->u.store.indices, vars, nv, vals) != MLC_OK)
    return false;
  for (int i = 0; i < nv; i++)
    if (vals[i]) tir_var_map_set(c->a, &c->sub, vars[i], vals[i]);
  return true;
}

/* TVM's CheckConsumerCovered: each consumer iter var, as a producer
 * expression, reaches both ends of its domain. */
static bool consumer_covered(inl_t *c, tir_analyzer_t *an) {
  const tir_block_t *pb = c->producer->u.realize.block;
  int np = pb->niter_vars;
  tir_var_t **pvars = mlc_arena_alloc(c->a, sizeof(*pvars) * (size_t)(np + 1));
  tir_range_t *pdoms = mlc_arena_alloc(c->a, sizeof(*pdoms) * (size_t)(np + 1));
  for (int i = 0; i < np; i++) {
    pvars[i] = pb->iter_vars[i].var;
    pdoms[i] = pb->iter_vars[i].dom;
  }
  for (int i = 0; i < c->block->niter_vars; i++) {
    const tir_iter_var_t *iv = &c->block->iter_vars[i];
    tir_expr_t *e = tir_var_map_get(&c->sub, iv->var);
    tir_interval_t r;
    if (!e || tir_relax_expr(&r, an, e, pvars, pdoms, np) != MLC_OK || !r.min || !r.max) {
      mlc_error_clear();
      return false;
    }
    tir_expr_t *last = tir_binary(c->a, TIR_SUB, tir_binary(c->a, TIR_ADD, iv->dom.min, iv->dom.extent),
                                  tir_int(c->a, iv->dom.min->dtype, 1));
    if (tir_prove(an, tir_binary(c->a, TIR_GT, r.min, iv->dom.min)) ||
        tir_prove(an, tir_binary(c->a, TIR_LT, r.max, last)))
      return false;
  }
  return true;
}

/* TVM's BuildInlinedConsumerPredicate: the consumer's iter vars stay in
 * their domains, in terms of the producer's loops; the producer's own
 * predicate must follow from it. */
static int producer_predicate(inl_t *c) {
  mlc_arena_t *a = c->a;
  const tir_stmt_t *pr = c->producer;
  const tir_block_t *pb = pr->u.realize.block;
  tir_analyzer_t *an = tir_analyzer_new(a);
  if (!an) return sch_fail(c->sch, c->prim, "out of memory");
  tir_var_map_t bind = {0, 0, NULL, NULL};
  for (int i = 0; i < pb->niter_vars; i++) {
    tir_analyzer_bind(an, pb->iter_vars[i].var, pb->iter_vars[i].dom.min, pb->iter_vars[i].dom.extent);
    tir_var_map_set(a, &bind, pb->iter_vars[i].var, pr->u.realize.iter_values[i]);
  }
  tir_expr_t *in = NULL;
  for (int i = 0; i < c->block->niter_vars; i++) {
    const tir_iter_var_t *iv = &c->block->iter_vars[i];
    tir_expr_t *ge = tir_binary(a, TIR_GE, iv->var, iv->dom.min);
    tir_expr_t *lt = tir_binary(a, TIR_LT, iv->var, tir_binary(a, TIR_ADD, iv->dom.min, iv->dom.extent));
    tir_expr_t *both = tir_binary(a, TIR_AND, ge, lt);
    in = in ? tir_binary(a, TIR_AND, in, both) : both;
  }
  tir_expr_t *pred = in ? tir_simplify(an, tir_substitute_expr(a, in, &c->sub)) : tir_bool(a, true);
  pred = tir_substitute_expr(a, pred, &bind);
  if (!is_true(pr->u.realize.predicate)) {
    tir_analyzer_t *an2 = tir_analyzer_new(a);
    sch_path_t *pp = mlc_malloc(sizeof(*pp));
    bool ok = an2 && pp && sch_find_uid(c->sch, pb->uid, pp);
    for (int d = 0; ok && d < pp->n; d++)
      if (pp->stmts[d]->kind == TIR_FOR)
        tir_analyzer_bind(an2, pp->stmts[d]->u.loop.var, pp->stmts[d]->u.loop.min, pp->stmts[d]->u.loop.extent);
    mlc_free(pp);
    if (ok) {
      tir_analyzer_push_constraint(an2, pred);
      ok = tir_prove(an2, pr->u.realize.predicate);
    }
    if (!ok)
      return sch_fail_at(c->sch, c->prim, c->producer,
                         "the predicate of producer block %s does not follow from the inlined block's", pb->name);
  }
  c->producer_pred = pred;
  return MLC_OK;
}

/* TVM's ReverseComputeInliner::BodyPatternAllowInline. */
static int check_reverse_body(inl_t *c) {
  tir_stmt_t *realize = c->path.stmts[c->path.n - 1];
  tir_stmt_t *s = c->block->body;
  tir_stmt_t *pstore = c->producer->u.realize.block->body;
  if (!is_true(realize->u.realize.predicate) || s->kind != TIR_BUFFER_STORE || pstore->kind != TIR_BUFFER_STORE ||
      pstore->u.store.buffer != c->buffer)
    return body_error(c);
  /* An accumulating producer (an init, or a value that reads what it
   * stores: a reduction whose reduce loops were all factored out) cannot
   * store its result elsewhere: its reads of the inlined buffer would stay.
   * TVM does not check this. */
  loads_t self = {c->buffer, NULL, true, 0};
  tir_visitor_t sv = {.expr = collect_load, .payload = &self};
  tir_visit_expr(&sv, pstore->u.store.value);
  if (c->producer->u.realize.block->init || self.n > 0)
    return sch_fail_at(c->sch, c->prim, c->producer,
                       "producer block %s accumulates into buffer %s (it has an init or reads what it stores)",
                       c->producer->u.realize.block->name, c->buffer->name);
  loads_t l = {c->buffer, NULL, true, 0};
  tir_visitor_t v = {.expr = collect_load, .payload = &l};
  tir_visit_stmt(&v, s);
  if (l.n == 0 || !l.consistent) return body_error(c);
  tir_analyzer_t *an = tir_analyzer_new(c->a);
  if (!an) return sch_fail(c->sch, c->prim, "out of memory");
  int nv = c->block->niter_vars;
  tir_var_t **vars = mlc_arena_alloc(c->a, sizeof(*vars) * (size_t)(nv + 1));
  for (int i = 0; i < nv; i++) vars[i] = c->block->iter_vars[i].var;
  if (!map_consumer_iters(c, an, l.first, pstore) || !consumer_covered(c, an) || !store_uses_only(s, vars, nv))
    return body_error(c);
  c->store = s;
  return producer_predicate(c);
}

static int reverse_compute_inline_impl(sch_t *sch, sch_rv_t block_rv, bool unrecorded) {
  inl_t c = {.sch = sch, .prim = "reverse_compute_inline", .reverse = true, .unrecorded = unrecorded,
             .a = sch_arena(sch)};
  int rc = locate(&c, block_rv);
  if (rc == MLC_OK) rc = sch_check_stage_pipeline(sch, c.prim, &c.path, c.scope_depth);
  if (rc == MLC_OK) rc = find_producer(&c);
  if (rc == MLC_OK) rc = check_reverse_body(&c);
  if (rc == MLC_OK) rc = sch_plan_leaf_removal(sch, c.prim, &c.path, c.scope_depth, &c.rm_depth);
  if (rc == MLC_OK) rc = rewrite_scope(&c, block_rv);
  return rc;
}

int sch_reverse_compute_inline(sch_t *sch, sch_rv_t block_rv) {
  return reverse_compute_inline_impl(sch, block_rv, false);
}

int sch_compute_inline(sch_t *sch, sch_rv_t block_rv) { return compute_inline_impl(sch, block_rv, false); }

/* compute_at / reverse_compute_at at sample_compute_location's "inline"
 * location: the inline primitive, which the caller records as itself. */
int sch_inline_unrecorded(sch_t *sch, sch_rv_t block_rv, bool reverse) {
  return reverse ? reverse_compute_inline_impl(sch, block_rv, true) : compute_inline_impl(sch, block_rv, true);
}
