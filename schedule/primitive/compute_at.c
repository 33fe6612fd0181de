/*
 * compute_at.c - compute_at and reverse_compute_at (TVM's
 * src/tir/schedule/primitive/compute_at.cc): move a block under a loop of its
 * consumers (compute_at) or of its producers (reverse_compute_at), and give
 * it a new loop nest that computes exactly the region those blocks need in
 * one iteration of that loop.
 *
 * Both primitives run the same steps. The "required" blocks are the
 * consumers for compute_at and the producers for reverse_compute_at; the
 * "provided" regions are what the moved block writes (compute_at) or reads
 * (reverse_compute_at).
 *  1. Checks, in TVM's order: the scope is a stage pipeline; the block is
 *     complete or a reduction; block and loop share the scope and the loop
 *     is not an ancestor of the block; (compute_at) the block is not an
 *     output block; the block is not the only leaf of its scope.
 *  2. The insertion point among the statements of the loop's body: after
 *     every producer, before every consumer; all required blocks must be
 *     under the loop, and the others outside it on their side of it (the
 *     consumers after it for reverse_compute_at, the producers before it
 *     for compute_at). index -1 is the last valid position, -2 the first.
 *  3. The required region: the required blocks' accesses to the provided
 *     buffers, bindings substituted, relaxed over the loops between them and
 *     the target loop (for compute_at into `shared`/`warp` memory, also over
 *     the thread loops that share the buffer).
 *  4. The block var domains that cover it: the provided indices inverted as
 *     an affine map when they are one, else dimension by dimension (TVM's
 *     patterns `v`, `v * c`, `v // c`, `v % c`), intersected with the
 *     buffer's shape (a T.where predicate when that bound is not implied).
 *  5. The new loops `ax0, ax1, ...` (unit loops dropped unless
 *     preserve_unit_loops) and one rewrite of the scope that removes the
 *     block and inserts its new nest.
 *
 * The stage-pipeline, output-block and leaf-removal checks (step 1) and the
 * inverse of an affine iteration map (step 4) are shared with
 * compute_inline.c, which defines them (compute_location.h).
 */
#include <stddef.h>
#include <string.h>

#include "schedule/primitive/compute_location.h"


/* ------------------------------------------------------------------------ */
/* Small arithmetic helpers                                                  */
/* ------------------------------------------------------------------------ */

/* An integer interval [lo, hi], inclusive; lo NULL is the empty set. */
typedef struct {
  tir_expr_t *lo, *hi;
} ivl_t;

static const ivl_t NOTHING = {NULL, NULL};

static bool prove(tir_analyzer_t *an, mlc_arena_t *a, tir_expr_kind_t k, tir_expr_t *x, tir_expr_t *y) {
  int64_t u, v;
  if (x == y && (k == TIR_EQ || k == TIR_LE || k == TIR_GE)) return true;
  if (tir_as_int(x, &u) && tir_as_int(y, &v)) {
    switch (k) {
    case TIR_EQ: return u == v;
    case TIR_LE: return u <= v;
    case TIR_GE: return u >= v;
    case TIR_LT: return u < v;
    case TIR_GT: return u > v;
    default: break;
    }
  }
  return tir_prove(an, mk(a, k, x, y));
}

static bool is_const(const tir_expr_t *e) { return e->kind == TIR_INT_IMM; }

/* Simplified x OP y, folding the common cases (equal operands, constants)
 * without the simplifier, which is the costly part of this primitive. */
static tir_expr_t *fold(tir_analyzer_t *an, mlc_arena_t *a, tir_expr_kind_t k, tir_expr_t *x, tir_expr_t *y) {
  int64_t u, v;
  if (x == y && (k == TIR_MIN || k == TIR_MAX)) return x;
  if (tir_as_int(x, &u) && tir_as_int(y, &v)) {
    switch (k) {
    case TIR_MIN: return u <= v ? x : y;
    case TIR_MAX: return u >= v ? x : y;
    case TIR_ADD: return mk_int(a, x, (int64_t)((uint64_t)u + (uint64_t)v));
    case TIR_SUB: return mk_int(a, x, (int64_t)((uint64_t)u - (uint64_t)v));
    default: break;
    }
  }
  return tir_simplify(an, mk(a, k, x, y));
}

static ivl_t ivl_union(tir_analyzer_t *an, mlc_arena_t *a, ivl_t x, ivl_t y) {
  if (!x.lo) return y;
  if (!y.lo) return x;
  return (ivl_t){fold(an, a, TIR_MIN, x.lo, y.lo), fold(an, a, TIR_MAX, x.hi, y.hi)};
}

static ivl_t ivl_intersect(tir_analyzer_t *an, mlc_arena_t *a, ivl_t x, ivl_t y) {
  if (!x.lo || !y.lo) return NOTHING;
  return (ivl_t){fold(an, a, TIR_MAX, x.lo, y.lo), fold(an, a, TIR_MIN, x.hi, y.hi)};
}

/* [min(x, y), max(x, y)]. */
static ivl_t ivl_of_points(tir_analyzer_t *an, mlc_arena_t *a, tir_expr_t *x, tir_expr_t *y) {
  return (ivl_t){fold(an, a, TIR_MIN, x, y), fold(an, a, TIR_MAX, x, y)};
}

/* The last element of [min, min + extent). */
static tir_expr_t *range_last(tir_analyzer_t *an, mlc_arena_t *a, tir_expr_t *min, tir_expr_t *extent) {
  int64_t m, e;
  if (tir_is_const_int(extent, 1)) return min;
  if (tir_as_int(min, &m) && tir_as_int(extent, &e)) return mk_int(a, min, m + e - 1);
  return tir_simplify(an, mk(a, TIR_SUB, mk(a, TIR_ADD, min, extent), mk_int(a, min, 1)));
}

/* ------------------------------------------------------------------------ */
/* The primitive's state                                                     */
/* ------------------------------------------------------------------------ */

/* What a block var must cover: dom (NOTHING when unconstrained) and the
 * bound the buffer shape and its own domain allow. */
typedef struct {
  ivl_t dom, bound;
} var_info_t;

/* A required block found under the target loop, with the loops between. */
typedef struct {
  tir_stmt_t *realize;
  int nloops;
  tir_stmt_t **loops;
} found_t;

typedef struct {
  sch_t *sch;
  const char *prim;
  bool forward; /* compute_at; false: reverse_compute_at */
  mlc_arena_t *a;
  tir_analyzer_t *an;
  int scope_depth, rm_depth;
  tir_stmt_t *realize, *loop;
  tir_block_t *block;
  tir_stmt_t **producers, **consumers;
  int nproducers, nconsumers;
  found_t *required;
  int nrequired, cap_required;
  int insert_pos;
  var_info_t *info; /* one per block iter var */
  sch_path_t bpath, lpath; /* last: everything before them is zeroed on entry */
} cat_t;

static bool listed(tir_stmt_t **list, int n, const tir_block_t *b) {
  for (int i = 0; i < n; i++)
    if (list[i]->u.realize.block == b) return true;
  return false;
}

/* ------------------------------------------------------------------------ */
/* Step 1: checks                                                            */
/* ------------------------------------------------------------------------ */

/* Block and loop under the same scope block, and the loop not an ancestor
 * of the block. Binds the loops above the target loop in the analyzer. */
static int check_same_scope(cat_t *c) {
  const char *ln = sch_loop_name(c->loop);
  int ld = c->lpath.n - 1;
  if (c->lpath.n <= c->scope_depth || c->lpath.stmts[c->scope_depth] != c->bpath.stmts[c->scope_depth] ||
      sch_path_scope_depth(&c->lpath, ld) != c->scope_depth)
    return sch_fail_at(c->sch, c->prim, c->loop, "block %s and loop %s are not under the same block scope",
                       c->block->name, ln);
  for (int d = c->scope_depth + 1; d < c->bpath.n; d++)
    if (c->bpath.stmts[d] == c->loop)
      return sch_fail_at(c->sch, c->prim, c->loop, "loop %s is an ancestor of block %s", ln, c->block->name);
  for (int d = 0; d <= ld; d++) {
    tir_stmt_t *s = c->lpath.stmts[d];
    if (s->kind == TIR_FOR) tir_analyzer_bind(c->an, s->u.loop.var, s->u.loop.min, s->u.loop.extent);
  }
  return MLC_OK;
}

static int run_checks(cat_t *c) {
  int rc = sch_check_stage_pipeline(c->sch, c->prim, &c->bpath, c->scope_depth);
  if (rc == MLC_OK) rc = sch_check_complete_or_reduction(c->sch, c->prim, &c->bpath);
  if (rc == MLC_OK) rc = check_same_scope(c);
  if (rc == MLC_OK && c->forward) rc = sch_check_not_output_block(c->sch, c->prim, &c->bpath, c->scope_depth);
  if (rc == MLC_OK) rc = sch_plan_leaf_removal(c->sch, c->prim, &c->bpath, c->scope_depth, &c->rm_depth);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Step 2: the insertion point                                               */
/* ------------------------------------------------------------------------ */

typedef struct {
  cat_t *c;
  int subtree;
  int last_producer, first_consumer, nproducers_seen, nconsumers_seen;
  int nstack;
  tir_stmt_t *stack[SCH_MAX_DEPTH];
} walk_t;

static void record_required(walk_t *w, tir_stmt_t *realize) {
  cat_t *c = w->c;
  if (c->nrequired == c->cap_required) {
    int cap = c->cap_required ? c->cap_required * 2 : 4;
    c->required = mlc_arena_grow(c->a, c->required, (size_t)c->nrequired, (size_t)cap, sizeof(*c->required));
    c->cap_required = cap;
  }
  found_t *f = &c->required[c->nrequired++];
  f->realize = realize;
  f->nloops = w->nstack;
  f->loops = mlc_arena_memdup(c->a, w->stack, sizeof(*w->stack) * (size_t)(w->nstack ? w->nstack : 1));
}

static void walk_block(walk_t *w, tir_stmt_t *realize) {
  cat_t *c = w->c;
  const tir_block_t *b = realize->u.realize.block;
  bool is_producer = listed(c->producers, c->nproducers, b);
  bool is_consumer = listed(c->consumers, c->nconsumers, b);
  if (is_producer) {
    w->last_producer = w->subtree;
    w->nproducers_seen++;
  }
  if (is_consumer) {
    if (w->subtree < w->first_consumer) w->first_consumer = w->subtree;
    w->nconsumers_seen++;
  }
  if (c->forward ? is_consumer : is_producer) record_required(w, realize);
}

static void walk(walk_t *w, tir_stmt_t *s) {
  if (!s) return;
  switch (s->kind) {
  case TIR_BLOCK_REALIZE: walk_block(w, s); return;
  case TIR_FOR:
    if (w->nstack == SCH_MAX_DEPTH) return;
    w->stack[w->nstack++] = s;
    walk(w, s->u.loop.body);
    w->nstack--;
    return;
  case TIR_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) walk(w, s->u.seq.stmts[i]);
    return;
  case TIR_IF:
    walk(w, s->u.if_.then_case);
    walk(w, s->u.if_.else_case);
    return;
  case TIR_LET: walk(w, s->u.let.body); return;
  case TIR_ATTR: walk(w, s->u.attr.body); return;
  case TIR_ASSERT: walk(w, s->u.assert_.body); return;
  case TIR_ALLOCATE: walk(w, s->u.allocate.body); return;
  default: return;
  }
}

/* The loop body as a list of statements. */
static tir_stmt_t **loop_subtrees(tir_stmt_t *loop, int *n) {
  tir_stmt_t *body = loop->u.loop.body;
  if (body->kind == TIR_SEQ) {
    *n = body->u.seq.n;
    return body->u.seq.stmts;
  }
  *n = 1;
  return &loop->u.loop.body;
}

/* TVM's FindInsertionPoint. */
static int find_insertion_point(cat_t *c, int index) {
  int n;
  tir_stmt_t **subtrees = loop_subtrees(c->loop, &n);
  walk_t w; /* not zeroed as a whole: the loop stack is written before it is read */
  w.c = c;
  w.last_producer = -1;
  w.first_consumer = n;
  w.nproducers_seen = w.nconsumers_seen = w.nstack = 0;
  for (w.subtree = 0; w.subtree < n; w.subtree++) walk(&w, subtrees[w.subtree]);
  bool all_seen = c->forward ? w.nconsumers_seen >= c->nconsumers : w.nproducers_seen >= c->nproducers;
  int lo = w.last_producer + 1, hi = w.first_consumer;
  const char *ln = sch_loop_name(c->loop);
  if (!all_seen)
    return sch_fail_at(c->sch, c->prim, c->loop, "not all %s of block %s are under loop %s",
                       c->forward ? "consumers" : "producers", c->block->name, ln);
  if (lo > hi)
    return sch_fail_at(c->sch, c->prim, c->loop,
                       "no position under loop %s comes after the producers and before the consumers of block %s",
                       ln, c->block->name);
  if (index == -1) c->insert_pos = hi;
  else if (index == -2) c->insert_pos = lo;
  else if (index >= lo && index <= hi) c->insert_pos = index;
  else
    return sch_fail_at(c->sch, c->prim, c->loop, "index %d is not a valid position under loop %s (-1, -2, or %d to %d)",
                       index, ln, lo, hi);
  return MLC_OK;
}

/* Whether the block at `path` runs after loop c->loop (-1 when it is under
 * the loop): the first statement where the two paths part is a SEQ, or an
 * IF's two branches (then first). */
static int runs_after_loop(const cat_t *c, const sch_path_t *path) {
  int ld = c->lpath.n - 1, d = 0;
  while (d < path->n && d <= ld && path->stmts[d] == c->lpath.stmts[d]) d++;
  if (d > ld) return -1;
  MLC_ASSERT(d > 0 && d < path->n);
  const tir_stmt_t *parent = path->stmts[d - 1];
  if (parent->kind == TIR_IF) return path->stmts[d] != parent->u.if_.then_case;
  if (parent->kind != TIR_SEQ) return 0;
  for (int i = 0; i < parent->u.seq.n; i++) {
    if (parent->u.seq.stmts[i] == path->stmts[d]) return 0;
    if (parent->u.seq.stmts[i] == c->lpath.stmts[d]) return 1;
  }
  return 0;
}

/* The blocks on the other side of the move that are not under the loop
 * must stay on their side of it: (reverse_compute_at) every consumer after
 * the loop, (compute_at) every producer before it. TVM checks only the
 * required blocks, which lets a block with none (softmax's maxelem has no
 * producer) move past the consumers that read it. */
static int check_outside_order(cat_t *c) {
  tir_stmt_t **others = c->forward ? c->producers : c->consumers;
  int n = c->forward ? c->nproducers : c->nconsumers;
  sch_path_t *path = NULL;
  for (int i = 0; i < n; i++) {
    if (!path && !(path = mlc_arena_alloc(c->a, sizeof(*path)))) return sch_fail(c->sch, c->prim, "out of memory");
    bool found = sch_find_uid(c->sch, others[i]->u.realize.block->uid, path);
    MLC_ASSERT(found);
    int after = runs_after_loop(c, path);
    if (after < 0 || after == !c->forward) continue;
    return sch_fail_at(c->sch, c->prim, c->loop, "%s block %s of block %s is not under loop %s and runs %s it",
                       c->forward ? "producer" : "consumer", others[i]->u.realize.block->name, c->block->name,
                       sch_loop_name(c->loop), c->forward ? "after" : "before");
  }
  return MLC_OK;
}

static tir_expr_t *pinned_predicate(cat_t *c, const tir_stmt_t *realize); /* step 3 */

/* A comparison as `s < 0` (s simplified), or NULL when cond is not one. */
static tir_expr_t *as_negative(cat_t *c, tir_expr_t *cond) {
  tir_expr_t *x = cond->u.bin.a, *y = cond->u.bin.b;
  switch (cond->kind) {
  case TIR_LT: return tir_simplify(c->an, mk(c->a, TIR_SUB, x, y));
  case TIR_LE: return tir_simplify(c->an, mk(c->a, TIR_SUB, mk(c->a, TIR_SUB, x, y), mk_int(c->a, x, 1)));
  case TIR_GT: return tir_simplify(c->an, mk(c->a, TIR_SUB, y, x));
  case TIR_GE: return tir_simplify(c->an, mk(c->a, TIR_SUB, mk(c->a, TIR_SUB, y, x), mk_int(c->a, x, 1)));
  default: return NULL;
  }
}

/* Whether `s < 0` follows from `b < 0` because s - b is a constant <= 0. */
static bool implied_by(cat_t *c, tir_expr_t *s, tir_expr_t *b) {
  int64_t d;
  return tir_dtype_eq(s->dtype, b->dtype) && tir_as_int(tir_simplify(c->an, mk(c->a, TIR_SUB, s, b)), &d) && d <= 0;
}

/* Whether a conjunct of a producer's predicate only keeps its writes inside
 * the buffers it writes (`0 <= index < shape` for some dimension implies
 * it): the tail of a split by a non-dividing factor, padding bounds. */
static bool only_bounds(cat_t *c, const tir_stmt_t *realize, const tir_var_map_t *bind, tir_expr_t *conj) {
  tir_expr_t *s = as_negative(c, conj);
  const tir_block_t *b = realize->u.realize.block;
  for (int w = 0; s && w < b->nwrites; w++) {
    const tir_region_t *r = &b->writes[w];
    for (int d = 0; d < r->ndim; d++) {
      tir_expr_t *e = tir_substitute_expr(c->a, r->ranges[d].min, bind);
      tir_expr_t *lo = tir_simplify(c->an, mk(c->a, TIR_SUB, mk_int(c->a, e, -1), e));
      tir_expr_t *hi = tir_simplify(c->an, mk(c->a, TIR_SUB, e, r->buffer->shape[d]));
      if (implied_by(c, s, lo) || implied_by(c, s, hi)) return true;
    }
  }
  return false;
}

/* reverse_compute_at: the new nest covers what the producers under the
 * loop write in one iteration, their loops relaxed. The relaxation uses a
 * producer's predicate where the iteration map can (all the loops it
 * bounds are relaxed); otherwise a predicate that drops in-bounds points of
 * that region (a split by a non-dividing factor inside the tile, under a
 * loop of that split: `ax_1_0 * 5 + ax_1_1 < 2` under ax_1_0) would have
 * the block read points not written yet. Predicates that only keep writes
 * inside the buffer are fine: the block's own bounds cut the same points.
 * TVM does not check this. */
static int check_producer_predicates(cat_t *c, const found_t *f) {
  const tir_stmt_t *r = f->realize;
  tir_expr_t *pred = pinned_predicate(c, r);
  if (!pred || tir_is_const_int(pred, 1)) return MLC_OK;
  tir_var_t *vars[SCH_MAX_DEPTH];
  tir_range_t doms[SCH_MAX_DEPTH];
  for (int i = 0; i < f->nloops && i < SCH_MAX_DEPTH; i++) {
    vars[i] = f->loops[i]->u.loop.var;
    doms[i] = (tir_range_t){f->loops[i]->u.loop.min, f->loops[i]->u.loop.extent};
  }
  const tir_block_t *b = r->u.realize.block;
  tir_var_map_t bind = {0, 0, NULL, NULL};
  for (int i = 0; i < b->niter_vars && i < r->u.realize.n; i++)
    tir_var_map_set(c->a, &bind, b->iter_vars[i].var, r->u.realize.iter_values[i]);
  /* Exact when the iteration map under the predicate gives every written
   * dimension that the relaxed loops move (relax_dim uses the same). */
  bool exact = true;
  for (int w = 0; exact && w < b->nwrites; w++) {
    for (int d = 0; exact && d < b->writes[w].ndim; d++) {
      tir_range_t sub = {tir_substitute_expr(c->a, b->writes[w].ranges[d].min, &bind),
                         tir_substitute_expr(c->a, b->writes[w].ranges[d].extent, &bind)}, out;
      exact = !tir_expr_uses_any_var(sub.min, vars, f->nloops) ||
              sch_relax_range_with_predicate(c->an, c->a, &sub, pred, vars, doms, f->nloops, &out);
    }
  }
  if (exact) return MLC_OK;
  tir_expr_t *stack[64];
  int n = 0;
  stack[n++] = pred;
  while (n > 0) {
    tir_expr_t *e = stack[--n];
    if (e->kind == TIR_AND && n < 62) {
      stack[n++] = e->u.bin.a;
      stack[n++] = e->u.bin.b;
      continue;
    }
    if (!tir_expr_uses_any_var(e, vars, f->nloops) || only_bounds(c, r, &bind, e)) continue;
    return sch_fail_at(c->sch, c->prim, c->loop,
                       "the predicate of producer block %s leaves part of what it writes under loop %s unwritten "
                       "in each iteration",
                       b->name, sch_loop_name(c->loop));
  }
  return MLC_OK;
}

/* reverse_compute_at: what a producer under the loop writes in one
 * iteration is final only when its reduction does not run across
 * iterations of the loop (or of a loop above it): softmax's expsum moved
 * under exp's column loop sums one column per iteration, and a consumer
 * placed after it in that iteration would read a partial sum. TVM does not
 * check this. */
static int check_producers_complete(cat_t *c) {
  if (c->forward) return MLC_OK;
  for (int k = 0; k < c->nrequired; k++) {
    const tir_stmt_t *r = c->required[k].realize;
    const tir_block_t *b = r->u.realize.block;
    int rc = check_producer_predicates(c, &c->required[k]);
    if (rc != MLC_OK) return rc;
    for (int v = 0; v < b->niter_vars && v < r->u.realize.n; v++) {
      if (b->iter_vars[v].type != TIR_ITER_REDUCE) continue;
      for (int d = 0; d < c->lpath.n; d++) {
        const tir_stmt_t *l = c->lpath.stmts[d];
        if (l->kind != TIR_FOR || !tir_expr_uses_var(r->u.realize.iter_values[v], l->u.loop.var)) continue;
        return sch_fail_at(c->sch, c->prim, c->loop,
                           "producer block %s of block %s reduces over loop %s, so its result is not complete "
                           "within one iteration of loop %s",
                           b->name, c->block->name, sch_loop_name(l), sch_loop_name(c->loop));
      }
    }
  }
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Step 3: provided and required regions                                     */
/* ------------------------------------------------------------------------ */

/* Whether a buffer in `scope` is shared by the threads of a loop bound to
 * `tag` (TVM's CanRelaxStorageUnderThread): shared memory by threadIdx and
 * vthread loops, warp memory by threadIdx.x. */
static bool thread_shares(const char *scope, const char *tag) {
  if (!tag) return false;
  if (strcmp(scope, "warp") == 0) return strcmp(tag, "threadIdx.x") == 0;
  if (strcmp(scope, "shared") == 0 || strcmp(scope, "shared.dyn") == 0)
    return strncmp(tag, "threadIdx.", 10) == 0 || strncmp(tag, "vthread", 7) == 0;
  return false;
}

/* The variables relaxed for an access of buf by required block f: the loops
 * between f and the target loop, plus (compute_at) the thread loops at or
 * above the target loop that share buf. Returns the count. */
static int relaxed_vars(cat_t *c, const found_t *f, const tir_buffer_t *buf, tir_var_t **vars, tir_range_t *doms) {
  int n = 0; /* room: f->nloops + c->lpath.n */
  for (int i = 0; i < f->nloops; i++) {
    vars[n] = f->loops[i]->u.loop.var;
    doms[n++] = (tir_range_t){f->loops[i]->u.loop.min, f->loops[i]->u.loop.extent};
  }
  if (!c->forward) return n;
  for (int d = c->lpath.n - 1; d >= 0; d--) {
    tir_stmt_t *s = c->lpath.stmts[d];
    if (s->kind == TIR_FOR && s->u.loop.kind == TIR_FOR_THREAD_BINDING &&
        thread_shares(buf->scope, s->u.loop.thread_tag)) {
      vars[n] = s->u.loop.var;
      doms[n++] = (tir_range_t){s->u.loop.min, s->u.loop.extent};
    }
  }
  return n;
}

/* A required block's predicate with the unit loops at and above the target
 * loop at their only value: `ax_1_0 * 5 + ax_1_1 < 2` under a loop ax_1_0
 * of extent 1 bounds ax_1_1 alone, which the iteration map can use. */
static tir_expr_t *pinned_predicate(cat_t *c, const tir_stmt_t *realize) {
  tir_expr_t *pred = realize->u.realize.predicate;
  if (!pred || tir_is_const_int(pred, 1)) return NULL;
  tir_var_map_t unit = {0, 0, NULL, NULL};
  for (int d = 0; d < c->lpath.n; d++) {
    const tir_stmt_t *l = c->lpath.stmts[d];
    if (l->kind == TIR_FOR && tir_is_const_int(l->u.loop.extent, 1) && tir_expr_uses_var(pred, l->u.loop.var))
      tir_var_map_set(c->a, &unit, l->u.loop.var, l->u.loop.min);
  }
  return unit.n ? tir_simplify(c->an, tir_substitute_expr(c->a, pred, &unit)) : pred;
}

/* e simplified, and a constant when its bounds pin it (TVM's analyzer binds
 * a loop var of extent 1 to its min, so `n` under `for n in range(1)` is 0;
 * mlc-tune's keeps the range, so the bound is asked for). */
static tir_expr_t *simplify_pinned(cat_t *c, tir_expr_t *e) {
  tir_expr_t *s = tir_simplify(c->an, e);
  if (is_const(s) || !tir_dtype_is_integer(s->dtype)) return s;
  tir_bound_t b = tir_const_bound(c->an, s);
  return b.min == b.max ? mk_int(c->a, s, b.min) : s;
}

/* One dimension of an access, relaxed: [lo, hi] over the relaxed vars (the
 * whole dimension when a side cannot be bounded). Relaxing is the costly
 * part of compute_at, so it runs once per dimension, and not at all when
 * the dimension does not depend on a relaxed var. */
static ivl_t relax_dim(cat_t *c, const tir_range_t *r, const tir_var_map_t *bind, tir_var_t **vars,
                       const tir_range_t *doms, int n, tir_expr_t *shape, tir_expr_t *pred) {
  mlc_arena_t *a = c->a;
  tir_expr_t *min = tir_substitute_expr(a, r->min, bind), *ext = tir_substitute_expr(a, r->extent, bind);
  bool unit = tir_is_const_int(ext, 1);
  tir_interval_t lo, hi;
  tir_range_t exact, sub = {min, ext};
  if (pred && !tir_is_const_int(pred, 1) && sch_relax_range_with_predicate(c->an, a, &sub, pred, vars, doms, n, &exact))
    return (ivl_t){simplify_pinned(c, exact.min), range_last(c->an, a, exact.min, exact.extent)};
  if (tir_expr_uses_any_var(min, vars, n) && sch_relax_linear(c->an, a, &sub, vars, doms, n, &exact))
    return (ivl_t){exact.min, range_last(c->an, a, exact.min, exact.extent)};
  if (!tir_expr_uses_any_var(min, vars, n) && !tir_expr_uses_any_var(ext, vars, n)) {
    lo.min = simplify_pinned(c, min);
    hi.max = unit ? lo.min : range_last(c->an, a, lo.min, ext);
  } else if (!tir_expr_uses_any_var(ext, vars, n)) {
    if (tir_relax_expr(&lo, c->an, min, vars, doms, n) != MLC_OK || !lo.min || !lo.max) goto whole;
    hi.max = range_last(c->an, a, lo.max, ext);
  } else {
    tir_expr_t *last = mk(a, TIR_SUB, mk(a, TIR_ADD, min, ext), mk_int(a, min, 1));
    if (tir_relax_expr(&lo, c->an, min, vars, doms, n) != MLC_OK || !lo.min ||
        tir_relax_expr(&hi, c->an, last, vars, doms, n) != MLC_OK || !hi.max)
      goto whole;
  }
  return (ivl_t){lo.min, hi.max};
whole:
  mlc_error_clear();
  return (ivl_t){mk_int(a, shape, 0), fold(c->an, a, TIR_SUB, shape, mk_int(a, shape, 1))};
}

/* The region of buf all required blocks access (reads for compute_at,
 * writes for reverse_compute_at), one interval per dimension; false when
 * none accesses it. */
static bool required_region(cat_t *c, tir_buffer_t *buf, ivl_t *req) {
  bool any = false;
  for (int i = 0; i < buf->ndim; i++) req[i] = NOTHING;
  for (int k = 0; k < c->nrequired; k++) {
    const found_t *f = &c->required[k];
    size_t room = (size_t)(f->nloops + c->lpath.n + 1);
    tir_var_t **vars = mlc_arena_alloc(c->a, sizeof(*vars) * room);
    tir_range_t *doms = mlc_arena_alloc(c->a, sizeof(*doms) * room);
    const tir_block_t *b = f->realize->u.realize.block;
    const tir_region_t *regions = c->forward ? b->reads : b->writes;
    int nregions = c->forward ? b->nreads : b->nwrites;
    tir_var_map_t bind = {0, 0, NULL, NULL};
    for (int i = 0; i < b->niter_vars && i < f->realize->u.realize.n; i++)
      tir_var_map_set(c->a, &bind, b->iter_vars[i].var, f->realize->u.realize.iter_values[i]);
    int n = relaxed_vars(c, f, buf, vars, doms);
    tir_expr_t *pred = pinned_predicate(c, f->realize);
    for (int r = 0; r < nregions; r++) {
      if (regions[r].buffer != buf || regions[r].ndim != buf->ndim) continue;
      any = true;
      for (int d = 0; d < buf->ndim; d++)
        req[d] = ivl_union(c->an, c->a, req[d],
                           relax_dim(c, &regions[r].ranges[d], &bind, vars, doms, n, buf->shape[d], pred));
    }
  }
  return any;
}

/* The region of buf the moved block itself accesses, in its iter vars. */
static void provided_region(cat_t *c, tir_buffer_t *buf, ivl_t *prov) {
  const tir_region_t *regions = c->forward ? c->block->writes : c->block->reads;
  int nregions = c->forward ? c->block->nwrites : c->block->nreads;
  for (int i = 0; i < buf->ndim; i++) prov[i] = NOTHING;
  for (int r = 0; r < nregions; r++) {
    if (regions[r].buffer != buf || regions[r].ndim != buf->ndim) continue;
    for (int d = 0; d < buf->ndim; d++) {
      const tir_range_t *rg = &regions[r].ranges[d];
      bool atom = rg->min->kind == TIR_VAR || rg->min->kind == TIR_INT_IMM;
      tir_expr_t *lo = atom ? rg->min : tir_simplify(c->an, rg->min);
      prov[d] = ivl_union(c->an, c->a, prov[d], (ivl_t){lo, range_last(c->an, c->a, lo, rg->extent)});
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Step 4: block var domains                                                 */
/* ------------------------------------------------------------------------ */

static int iter_index(const tir_block_t *b, const tir_expr_t *v) {
  for (int i = 0; i < b->niter_vars; i++)
    if (b->iter_vars[i].var == v) return i;
  return -1;
}

/* The largest index of a dimension: max(shape - 1, 0). */
static tir_expr_t *dim_max(cat_t *c, tir_expr_t *shape) {
  return fold(c->an, c->a, TIR_MAX, fold(c->an, c->a, TIR_SUB, shape, mk_int(c->a, shape, 1)), mk_int(c->a, shape, 0));
}

static void add_info(cat_t *c, int var, ivl_t dom, ivl_t bound) {
  var_info_t *vi = &c->info[var];
  vi->dom = ivl_union(c->an, c->a, vi->dom, dom);
  vi->bound = ivl_union(c->an, c->a, vi->bound, bound);
}

/* TVM's SolveBlockVarDomain for one dimension: the provided index is `v`,
 * `v * e`, `x // f` or `x % f` of a block var; dmax is the dimension's
 * largest index. false when the pattern is not understood. */
static bool solve_dim(cat_t *c, ivl_t prov, ivl_t req, tir_expr_t *dmax) {
  mlc_arena_t *a = c->a;
  tir_expr_t *p = prov.lo;
  if (p->kind == TIR_MUL && (p->u.bin.a->kind == TIR_VAR || p->u.bin.b->kind == TIR_VAR)) {
    tir_expr_t *v = p->u.bin.a->kind == TIR_VAR ? p->u.bin.a : p->u.bin.b;
    tir_expr_t *e = v == p->u.bin.a ? p->u.bin.b : p->u.bin.a;
    int i = iter_index(c->block, v);
    if (i >= 0)
      add_info(c, i, (ivl_t){fold(c->an, a, TIR_FLOOR_DIV, req.lo, e), fold(c->an, a, TIR_FLOOR_DIV, req.hi, e)},
               (ivl_t){mk_int(a, dmax, 0), fold(c->an, a, TIR_FLOOR_DIV, dmax, e)});
    return true;
  }
  if (!prove(c->an, a, TIR_EQ, prov.lo, prov.hi)) return false;
  if (p->kind == TIR_VAR) {
    int i = iter_index(c->block, p);
    if (i >= 0) add_info(c, i, req, (ivl_t){mk_int(a, dmax, 0), dmax});
    return true;
  }
  if (p->kind == TIR_FLOOR_DIV && prove(c->an, a, TIR_GE, p->u.bin.b, mk_int(a, p->u.bin.b, 1))) {
    /* a <= x // f <= b  <=>  a * f <= x <= b * f + f - 1 */
    tir_expr_t *f = p->u.bin.b;
    tir_expr_t *f1 = mk(a, TIR_SUB, f, mk_int(a, f, 1));
    ivl_t need = {tir_simplify(c->an, mk(a, TIR_MUL, req.lo, f)),
                  tir_simplify(c->an, mk(a, TIR_ADD, mk(a, TIR_MUL, req.hi, f), f1))};
    tir_expr_t *max = tir_simplify(c->an, mk(a, TIR_ADD, mk(a, TIR_MUL, dmax, f), f1));
    ivl_t inner = {p->u.bin.a, p->u.bin.a};
    if (p->u.bin.a->kind != TIR_VAR) return solve_dim(c, inner, need, dmax);
    int i = iter_index(c->block, p->u.bin.a);
    if (i >= 0) add_info(c, i, need, (ivl_t){mk_int(a, max, 0), max});
    return true;
  }
  if (p->kind == TIR_FLOOR_MOD && p->u.bin.a->kind == TIR_VAR) return true; /* no constraint on x */
  return false;
}

/* True when every output of the map is a lone split of an iterator with
 * scale 1: each iterator's inverse is then a sum of outputs times positive
 * factors, so the inverse of a box's low corner is the low end of every
 * range (no min/max needed, which the simplifier may not fold). */
static bool map_is_monotone(const tir_iter_map_t *map) {
  for (int i = 0; i < map->n; i++) {
    const tir_iter_sum_t *sum = &map->sums[i];
    int64_t f;
    if (sum->nargs == 0) continue;
    if (sum->nargs > 1 || !tir_is_const_int(sum->args[0].scale, 1) || sum->args[0].source->sum ||
        !tir_as_int(sum->args[0].lower_factor, &f) || f < 1)
      return false;
  }
  return true;
}

/* TVM's UpdateBlockVarDomainAffine: when every provided index is a point and
 * together they are a bijective affine map of the block vars, the inverse
 * map sends the required box's corners to the block var ranges. */
static bool solve_affine(cat_t *c, tir_buffer_t *buf, const ivl_t *prov, const ivl_t *req) {
  mlc_arena_t *a = c->a;
  int nd = buf->ndim, nv = c->block->niter_vars;
  tir_expr_t **idx = mlc_arena_alloc(a, sizeof(*idx) * (size_t)(5 * nd + 1));
  tir_expr_t **rmin = idx + nd, **rmax = idx + 2 * nd, **zero = idx + 3 * nd, **last = idx + 4 * nd;
  for (int d = 0; d < nd; d++) {
    if (!prov[d].lo || !req[d].lo || !prove(c->an, a, TIR_EQ, prov[d].lo, prov[d].hi)) return false;
    idx[d] = prov[d].lo;
    rmin[d] = req[d].lo;
    rmax[d] = req[d].hi;
    zero[d] = mk_int(a, buf->shape[d], 0);
    last[d] = dim_max(c, buf->shape[d]);
  }
  tir_var_t **vars = mlc_arena_alloc(a, sizeof(*vars) * (size_t)(nv + 1));
  tir_range_t *doms = mlc_arena_alloc(a, sizeof(*doms) * (size_t)(nv + 1));
  tir_expr_t **res = mlc_arena_alloc(a, sizeof(*res) * (size_t)(4 * nv + 1));
  for (int i = 0; i < nv; i++) {
    vars[i] = c->block->iter_vars[i].var;
    doms[i] = c->block->iter_vars[i].dom;
  }
  tir_iter_map_t map;
  if (tir_detect_iter_map(&map, c->an, idx, nd, vars, doms, nv, NULL, TIR_ITER_BIJECTIVE) != MLC_OK) {
    mlc_error_clear();
    return false;
  }
  if (sch_inverse_iter_map(c->an, a, &map, rmin, vars, nv, res) != MLC_OK ||
      sch_inverse_iter_map(c->an, a, &map, rmax, vars, nv, res + nv) != MLC_OK ||
      sch_inverse_iter_map(c->an, a, &map, zero, vars, nv, res + 2 * nv) != MLC_OK ||
      sch_inverse_iter_map(c->an, a, &map, last, vars, nv, res + 3 * nv) != MLC_OK)
    return false;
  bool monotone = map_is_monotone(&map);
  for (int i = 0; i < nv; i++) {
    if (!res[i] || !res[nv + i] || !res[2 * nv + i] || !res[3 * nv + i]) continue;
    if (monotone)
      add_info(c, i, (ivl_t){res[i], res[nv + i]}, (ivl_t){res[2 * nv + i], res[3 * nv + i]});
    else
      add_info(c, i, ivl_of_points(c->an, a, res[i], res[nv + i]),
               ivl_of_points(c->an, a, res[2 * nv + i], res[3 * nv + i]));
  }
  return true;
}

/* True when every provided index is a block var or a constant: the affine
 * inverse then says what the per-dimension rule says (v in the required
 * range, bounded by the shape), and is skipped because it costs more. */
static bool plain_indices(cat_t *c, const tir_buffer_t *buf, const ivl_t *prov) {
  for (int d = 0; d < buf->ndim; d++) {
    const tir_expr_t *p = prov[d].lo;
    if (!p || p != prov[d].hi || (p->kind != TIR_INT_IMM && (p->kind != TIR_VAR || iter_index(c->block, p) < 0)))
      return false;
  }
  return true;
}

/* TVM's UpdateBlockVarDomainDimwise. */
static int solve_dimwise(cat_t *c, tir_buffer_t *buf, const ivl_t *prov, const ivl_t *req) {
  for (int d = 0; d < buf->ndim; d++) {
    if (!prov[d].lo || !req[d].lo) continue;
    if (is_const(prov[d].lo) && prove(c->an, c->a, TIR_EQ, prov[d].lo, prov[d].hi)) continue;
    if (!solve_dim(c, prov[d], req[d], dim_max(c, buf->shape[d])))
      return sch_fail_at(c->sch, c->prim, c->realize,
                         "cannot derive the domain of block %s from its access to dimension %d of buffer %s",
                         c->block->name, d, buf->name);
  }
  return MLC_OK;
}

/* The buffers the block provides, once each. */
static int provided_buffers(cat_t *c, tir_buffer_t **out) {
  const tir_region_t *regions = c->forward ? c->block->writes : c->block->reads;
  int nregions = c->forward ? c->block->nwrites : c->block->nreads, n = 0;
  for (int r = 0; r < nregions; r++) {
    bool seen = false;
    for (int i = 0; i < n; i++) seen |= out[i] == regions[r].buffer;
    if (!seen) out[n++] = regions[r].buffer;
  }
  return n;
}

/* TVM's BlockVarDomainInfo::Simplify after intersecting the bound with the
 * var's own domain: keep only the bound that is not implied. (TVM proves
 * dom == dom ^ bound; proving dom inside bound is the same question.) */
static void finish_info(cat_t *c, var_info_t *vi, const tir_iter_var_t *iv) {
  mlc_arena_t *a = c->a;
  tir_analyzer_t *an = c->an;
  ivl_t own = {iv->dom.min, range_last(an, a, iv->dom.min, iv->dom.extent)};
  vi->bound = vi->bound.lo ? ivl_intersect(an, a, vi->bound, own) : own;
  if (!vi->dom.lo) {
    vi->dom = vi->bound;
    vi->bound = NOTHING;
    return;
  }
  ivl_t d = vi->dom, b = vi->bound;
  if (prove(an, a, TIR_GE, d.lo, b.lo) && prove(an, a, TIR_LE, d.hi, b.hi)) {
    vi->bound = NOTHING;
    return;
  }
  if (prove(an, a, TIR_GE, b.lo, d.lo) && prove(an, a, TIR_LE, b.hi, d.hi)) {
    vi->dom = b;
    vi->bound = NOTHING;
    return;
  }
  ivl_t x = ivl_intersect(an, a, d, b);
  if (is_const(x.lo) && is_const(x.hi)) {
    vi->dom = x;
    vi->bound = NOTHING;
  }
}

/* reverse_compute_at: the bound a block var gets from the shapes of the
 * buffers the block reads must cover the var's whole domain. Where it does
 * not, some iterations read outside a buffer and so read nothing from the
 * producers (padding, `T.if_then_else(1 <= v, X[v - 1], 0)`): the new nest,
 * which follows what the producers write, would never run them. TVM does
 * not check this. */
static int check_domain_covered(cat_t *c, int i) {
  const var_info_t *vi = &c->info[i];
  const tir_iter_var_t *iv = &c->block->iter_vars[i];
  if (c->forward || !vi->bound.lo) return MLC_OK;
  tir_expr_t *last = range_last(c->an, c->a, iv->dom.min, iv->dom.extent);
  if (prove(c->an, c->a, TIR_LE, vi->bound.lo, iv->dom.min) && prove(c->an, c->a, TIR_GE, vi->bound.hi, last))
    return MLC_OK;
  return sch_fail_at(c->sch, c->prim, c->realize,
                     "block %s reads outside its producers' buffers for some values of %s (its reads cover only "
                     "part of its domain); those iterations would not run under loop %s",
                     c->block->name, iv->var->u.var.name, sch_loop_name(c->loop));
}

/* TVM's CalculateBlockVarDomain. */
static int solve_domains(cat_t *c) {
  int nv = c->block->niter_vars;
  c->info = mlc_arena_alloc(c->a, sizeof(*c->info) * (size_t)(nv + 1));
  tir_buffer_t **bufs = mlc_arena_alloc(c->a, sizeof(*bufs) * (size_t)(c->block->nreads + c->block->nwrites + 1));
  if (!c->info || !bufs) return sch_fail(c->sch, c->prim, "out of memory");
  for (int i = 0; i < nv; i++) c->info[i] = (var_info_t){NOTHING, NOTHING};
  int nbufs = provided_buffers(c, bufs);
  for (int k = 0; k < nbufs; k++) {
    tir_buffer_t *buf = bufs[k];
    ivl_t *prov = mlc_arena_alloc(c->a, sizeof(*prov) * 2 * (size_t)(buf->ndim + 1));
    ivl_t *req = prov + buf->ndim + 1;
    if (!required_region(c, buf, req)) continue;
    provided_region(c, buf, prov);
    if (!plain_indices(c, buf, prov) && solve_affine(c, buf, prov, req)) continue;
    int rc = solve_dimwise(c, buf, prov, req);
    if (rc != MLC_OK) return rc;
  }
  for (int i = 0; i < nv; i++) {
    int rc = check_domain_covered(c, i);
    if (rc != MLC_OK) return rc;
    finish_info(c, &c->info[i], &c->block->iter_vars[i]);
  }
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Step 5: the new loop nest and the rewrite                                 */
/* ------------------------------------------------------------------------ */

/* `value >= lo` and `value < hi + 1` where not provable, and-ed onto pred. */
static tir_expr_t *bound_predicate(cat_t *c, tir_expr_t *pred, tir_expr_t *value, ivl_t bound) {
  mlc_arena_t *a = c->a;
  if (!bound.lo) return pred;
  tir_expr_t *ge = mk(a, TIR_GE, value, bound.lo);
  tir_expr_t *lt = mk(a, TIR_LT, value, mk(a, TIR_ADD, bound.hi, mk_int(a, bound.hi, 1)));
  if (!tir_prove(c->an, ge)) pred = pred ? tir_binary(a, TIR_AND, pred, ge) : ge;
  if (!tir_prove(c->an, lt)) pred = pred ? tir_binary(a, TIR_AND, pred, lt) : lt;
  return pred;
}

/* TVM's MakeNewLoop: the block under loops ax0, ax1, ... over its domains. */
static tir_stmt_t *make_nest(cat_t *c, bool preserve_unit_loops) {
  mlc_arena_t *a = c->a;
  int nv = c->block->niter_vars, nloops = 0;
  tir_expr_t **values = mlc_arena_alloc(a, sizeof(*values) * (size_t)(nv + 1));
  tir_var_t **lvars = mlc_arena_alloc(a, sizeof(*lvars) * (size_t)(nv + 1));
  tir_expr_t **lext = mlc_arena_alloc(a, sizeof(*lext) * (size_t)(nv + 1));
  tir_expr_t *pred = NULL;
  bool bounded = false; /* the new loop vars need binding only to prove bounds */
  for (int i = 0; i < nv; i++) bounded |= c->info[i].bound.lo != NULL;
  for (int i = 0; i < nv; i++) {
    ivl_t d = c->info[i].dom;
    int64_t l, h;
    tir_expr_t *ext = tir_as_int(d.lo, &l) && tir_as_int(d.hi, &h)
                          ? mk_int(a, d.lo, h - l + 1)
                          : tir_simplify(c->an, mk(a, TIR_ADD, mk(a, TIR_SUB, d.hi, d.lo), mk_int(a, d.lo, 1)));
    if (preserve_unit_loops || !tir_is_const_int(ext, 1)) {
      int bits = d.lo->dtype.bits > ext->dtype.bits ? d.lo->dtype.bits : ext->dtype.bits;
      static const char *const names[] = {"ax0", "ax1", "ax2", "ax3", "ax4", "ax5", "ax6", "ax7"};
      const char *name = nloops < 8 ? names[nloops] : mlc_arena_printf(a, "ax%d", nloops);
      tir_var_t *v = tir_var(a, name, tir_dtype(TIR_CODE_INT, bits, 1));
      lvars[nloops] = v;
      lext[nloops++] = as_dtype(a, ext, v->dtype);
      /* TVM writes `min + ax` unsimplified (0 + ax folds to ax). */
      values[i] = tir_is_const_int(d.lo, 0) ? as_dtype(a, v, d.lo->dtype) : mk(a, TIR_ADD, d.lo, v);
      if (bounded) tir_analyzer_bind(c->an, v, mk_int(a, v, 0), lext[nloops - 1]);
    } else {
      values[i] = d.lo;
    }
    values[i] = as_dtype(a, values[i], c->block->iter_vars[i].var->dtype);
    pred = bound_predicate(c, pred, values[i], c->info[i].bound);
  }
  pred = pred ? tir_simplify(c->an, pred) : tir_bool(a, true);
  tir_stmt_t *s = tir_block_realize(a, values, nv, pred, c->block);
  for (int i = nloops - 1; i >= 0; i--)
    s = sch_new_loop(c->sch, lvars[i], mk_int(a, lext[i], 0), lext[i], TIR_FOR_SERIAL, s);
  return s;
}

/* The target loop with the nest inserted at the insertion point. */
static tir_stmt_t *loop_with_nest(cat_t *c, tir_stmt_t *nest) {
  int n;
  tir_stmt_t **subtrees = loop_subtrees(c->loop, &n);
  tir_stmt_t **stmts = mlc_arena_alloc(c->a, sizeof(*stmts) * (size_t)(n + 1));
  for (int i = 0, k = 0; i <= n; i++) {
    if (i == c->insert_pos) stmts[k++] = nest;
    if (i < n) stmts[k++] = subtrees[i];
  }
  tir_stmt_t *loop = tir_stmt_copy(c->a, c->loop);
  loop->u.loop.body = tir_seq(c->a, stmts, n + 1);
  return loop;
}

/* One rewrite of the scope: `rm` leaves its SEQ, `old` becomes `new_`. Only
 * the ancestors of the two (in the two paths) are copied. */
typedef struct {
  cat_t *c;
  tir_stmt_t *rm, *old, *new_;
} edit_t;

static bool on_paths(const edit_t *e, const tir_stmt_t *s) {
  const cat_t *c = e->c;
  for (int d = c->scope_depth; d < c->rm_depth; d++)
    if (c->bpath.stmts[d] == s) return true;
  for (int d = c->scope_depth; d < c->lpath.n - 1; d++)
    if (c->lpath.stmts[d] == s) return true;
  return false;
}

static tir_stmt_t *edit(const edit_t *e, tir_stmt_t *s) {
  if (s == e->old) return e->new_;
  if (!s || !on_paths(e, s)) return s;
  mlc_arena_t *a = e->c->a;
  if (s->kind == TIR_SEQ) {
    tir_stmt_t **stmts = mlc_arena_alloc(a, sizeof(*stmts) * (size_t)s->u.seq.n);
    int k = 0;
    for (int i = 0; i < s->u.seq.n; i++)
      if (s->u.seq.stmts[i] != e->rm) stmts[k++] = edit(e, s->u.seq.stmts[i]);
    return tir_seq(a, stmts, k);
  }
  tir_stmt_t *kids[2] = {NULL, NULL};
  switch (s->kind) {
  case TIR_FOR: kids[0] = s->u.loop.body; break;
  case TIR_LET: kids[0] = s->u.let.body; break;
  case TIR_ATTR: kids[0] = s->u.attr.body; break;
  case TIR_ASSERT: kids[0] = s->u.assert_.body; break;
  case TIR_ALLOCATE: kids[0] = s->u.allocate.body; break;
  case TIR_IF: kids[0] = s->u.if_.then_case, kids[1] = s->u.if_.else_case; break;
  case TIR_BLOCK_REALIZE: kids[0] = s->u.realize.block->body, kids[1] = s->u.realize.block->init; break;
  default: return s;
  }
  tir_stmt_t *out = s;
  for (int i = 0; i < 2; i++) {
    if (!kids[i]) continue;
    tir_stmt_t *k = edit(e, kids[i]);
    if (k != kids[i]) out = sch_replace_child(e->c->sch, out, kids[i], k);
  }
  return out;
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                              */
/* ------------------------------------------------------------------------ */

static int locate(cat_t *c, sch_rv_t block_rv, sch_rv_t loop_rv) {
  int rc = sch_find_block(c->sch, c->prim, block_rv, &c->bpath);
  if (rc == MLC_OK) rc = sch_find_loop(c->sch, c->prim, loop_rv, &c->lpath);
  if (rc != MLC_OK) return rc;
  c->realize = c->bpath.stmts[c->bpath.n - 1];
  c->block = c->realize->u.realize.block;
  c->loop = c->lpath.stmts[c->lpath.n - 1];
  c->scope_depth = sch_path_scope_depth(&c->bpath, c->bpath.n - 1);
  if (c->scope_depth < 0) return sch_fail(c->sch, c->prim, "block %s is the root block", c->block->name);
  return MLC_OK;
}

static void record(sch_t *sch, bool forward, sch_rv_t block_rv, sch_rv_t loop_rv, bool preserve_unit_loops,
                   int index) {
  sch_arg_t inputs[2] = {sch_arg_rv(block_rv), sch_arg_rv(loop_rv)};
  sch_arg_t attrs[2] = {sch_arg_int(preserve_unit_loops), sch_arg_int(index)};
  sch_record(sch, forward ? SCH_INST_COMPUTE_AT : SCH_INST_REVERSE_COMPUTE_AT, inputs, 2, attrs, 2, NULL, 0, NULL);
}

/* The special locations sample_compute_location gives, as TVM's
 * ConcreteSchedule treats them: "root" leaves the block where it is,
 * "inline" inlines it (compute_inline, or reverse_compute_inline for
 * reverse_compute_at). Either way the call is recorded as itself. Returns
 * 1 when loop_rv is not a special location. */
static int special_location(sch_t *sch, bool forward, sch_rv_t block_rv, sch_rv_t loop_rv,
                            bool preserve_unit_loops, int index) {
  const char *prim = forward ? "compute_at" : "reverse_compute_at";
  if (!sch_rv_valid(sch, loop_rv) || sch->rvs[loop_rv].kind != SCH_RV_LOOP) return 1;
  uint32_t uid = sch->rvs[loop_rv].uid;
  if (uid != SCH_UID_ROOT && uid != SCH_UID_INLINE) return 1;
  if (!sch_rv_valid(sch, block_rv) || sch->rvs[block_rv].kind != SCH_RV_BLOCK)
    return sch_fail(sch, prim, "random variable %d is not a block variable", (int)block_rv);
  if (uid == SCH_UID_INLINE) {
    int rc = sch_inline_unrecorded(sch, block_rv, !forward);
    if (rc != MLC_OK) return rc;
  }
  record(sch, forward, block_rv, loop_rv, preserve_unit_loops, index);
  return MLC_OK;
}

static int compute_at_impl(sch_t *sch, bool forward, sch_rv_t block_rv, sch_rv_t loop_rv,
                           bool preserve_unit_loops, int index) {
  int special = special_location(sch, forward, block_rv, loop_rv, preserve_unit_loops, index);
  if (special != 1) return special;
  cat_t cat; /* not zeroed as a whole: the paths are big and filled by locate() */
  memset(&cat, 0, offsetof(cat_t, bpath));
  cat_t *c = &cat;
  c->sch = sch;
  c->prim = forward ? "compute_at" : "reverse_compute_at";
  c->forward = forward;
  c->a = sch_arena(sch);
  c->an = tir_analyzer_new(c->a);
  int rc = c->an ? locate(c, block_rv, loop_rv) : sch_fail(sch, c->prim, "out of memory");
  if (rc == MLC_OK) rc = run_checks(c);
  if (rc == MLC_OK) rc = sch_block_producers(sch, &c->bpath, &c->producers, &c->nproducers);
  if (rc == MLC_OK) rc = sch_block_consumers(sch, &c->bpath, &c->consumers, &c->nconsumers);
  if (rc == MLC_OK) rc = find_insertion_point(c, index);
  if (rc == MLC_OK) rc = check_outside_order(c);
  if (rc == MLC_OK) rc = check_producers_complete(c);
  if (rc == MLC_OK) rc = solve_domains(c);
  if (rc != MLC_OK) return rc; /* nothing changed yet: new nodes are garbage in the arena */
  edit_t e = {c, c->bpath.stmts[c->rm_depth], c->loop, loop_with_nest(c, make_nest(c, preserve_unit_loops))};
  tir_stmt_t *scope = edit(&e, c->bpath.stmts[c->scope_depth]);
  sch_replace(sch, &c->bpath, c->scope_depth, scope);
  record(sch, forward, block_rv, loop_rv, preserve_unit_loops, index);
  return MLC_OK;
}

int sch_compute_at(sch_t *sch, sch_rv_t block, sch_rv_t loop, bool preserve_unit_loops, int index) {
  return compute_at_impl(sch, true, block, loop, preserve_unit_loops, index);
}

int sch_reverse_compute_at(sch_t *sch, sch_rv_t block, sch_rv_t loop, bool preserve_unit_loops, int index) {
  return compute_at_impl(sch, false, block, loop, preserve_unit_loops, index);
}
