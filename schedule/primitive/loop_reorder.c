/*
 * loop_reorder.c - reorder and add_unit_loop, with TVM's semantics
 * (src/tir/schedule/primitive/loop_transformation.cc); split and fuse are in
 * loop_transformation.c.
 *
 * reorder permutes loops of one chain. The given loops must lie on one path
 * from the outermost given loop (top) to the innermost (bottom), inside one
 * block scope, where every loop's body is exactly the next loop; loops of the
 * chain that are not given keep their places, and the given loops fill the
 * given places in the order given. The loops move as they are (variables,
 * kinds, annotations, uids), so nothing below them is rewritten. The blocks
 * under the bottom loop must have only spatial and reduce iter vars and
 * bindings that are affine in the loops from the top one down (TVM's
 * CheckPartialAffineBinding); no loop may end up inside a loop whose
 * range uses its variable; and (beyond TVM) two loops that both feed
 * spatial and reduction iter vars of a block with an init keep their order.
 */
#include "schedule/analysis/analysis.h"

#define REORDER_MAX_LOOPS 32

static const char *const REORDER = "reorder";

/* ------------------------------------------------------------------------ */
/* The blocks under a statement                                              */
/* ------------------------------------------------------------------------ */

typedef int (*block_fn)(sch_t *sch, const sch_path_t *path, void *ctx);

/* Calls fn for every BLOCK_REALIZE under s without entering blocks, with the
 * path extended down to it (path->stmts[path->n - 1] is s's parent). */
static int walk_child_blocks(sch_t *sch, sch_path_t *path, tir_stmt_t *s, block_fn fn, void *ctx) {
  if (!s || path->n >= SCH_MAX_DEPTH) return MLC_OK;
  int rc = MLC_OK;
  path->stmts[path->n++] = s;
  switch (s->kind) {
  case TIR_BLOCK_REALIZE: rc = fn(sch, path, ctx); break;
  case TIR_SEQ:
    for (int i = 0; i < s->u.seq.n && rc == MLC_OK; i++) rc = walk_child_blocks(sch, path, s->u.seq.stmts[i], fn, ctx);
    break;
  case TIR_IF:
    rc = walk_child_blocks(sch, path, s->u.if_.then_case, fn, ctx);
    if (rc == MLC_OK) rc = walk_child_blocks(sch, path, s->u.if_.else_case, fn, ctx);
    break;
  case TIR_FOR: rc = walk_child_blocks(sch, path, s->u.loop.body, fn, ctx); break;
  case TIR_LET: rc = walk_child_blocks(sch, path, s->u.let.body, fn, ctx); break;
  case TIR_ATTR: rc = walk_child_blocks(sch, path, s->u.attr.body, fn, ctx); break;
  case TIR_ASSERT: rc = walk_child_blocks(sch, path, s->u.assert_.body, fn, ctx); break;
  case TIR_ALLOCATE: rc = walk_child_blocks(sch, path, s->u.allocate.body, fn, ctx); break;
  default: break;
  }
  path->n--;
  return rc;
}

/* ------------------------------------------------------------------------ */
/* reorder: the blocks below                                                 */
/* ------------------------------------------------------------------------ */

/* TVM's IsAffineBinding over the loops between the block and depth `top`
 * (inclusive; stopping at an enclosing block): the bindings are a surjective
 * iteration map of those loops, each binding one fused iterator (scale 1);
 * loops above top are free symbols. */
static bool affine_under(sch_t *sch, const sch_path_t *path, int top) {
  tir_stmt_t *realize = path->stmts[path->n - 1];
  tir_var_t *vars[SCH_MAX_DEPTH];
  tir_range_t doms[SCH_MAX_DEPTH];
  int nv = 0;
  for (int d = path->n - 2; d >= top && path->stmts[d]->kind != TIR_BLOCK_REALIZE; d--) {
    tir_stmt_t *s = path->stmts[d];
    if (s->kind != TIR_FOR) continue;
    vars[nv] = s->u.loop.var;
    doms[nv].min = s->u.loop.min;
    doms[nv++].extent = s->u.loop.extent;
  }
  if (nv == 0) return true;
  for (int i = 0; i < nv / 2; i++) { /* outermost first */
    tir_var_t *tv = vars[i];
    tir_range_t td = doms[i];
    vars[i] = vars[nv - 1 - i];
    doms[i] = doms[nv - 1 - i];
    vars[nv - 1 - i] = tv;
    doms[nv - 1 - i] = td;
  }
  tir_analyzer_t *an = tir_analyzer_new(sch_arena(sch));
  tir_iter_map_t map;
  if (!an || tir_detect_iter_map(&map, an, realize->u.realize.iter_values, realize->u.realize.n, vars, doms, nv,
                                 realize->u.realize.predicate, TIR_ITER_SURJECTIVE) != MLC_OK)
    return false;
  for (int i = 0; i < map.n; i++)
    if (map.sums[i].nargs > 0 && !tir_is_const_int(map.sums[i].args[0].scale, 1)) return false;
  return true;
}

typedef struct {
  int top;             /* depth of the outermost given loop */
  tir_stmt_t *top_loop;
  int len;             /* the chain: old[i] (outer first) moves to new position pos[i] */
  tir_stmt_t *const *old;
  const int *pos;
} block_check_t;

/* Whether loop feeds an iter var of `type` of the block at realize. */
static bool feeds(const tir_stmt_t *realize, const tir_stmt_t *loop, tir_iter_type_t type) {
  const tir_block_t *b = realize->u.realize.block;
  for (int i = 0; i < b->niter_vars && i < realize->u.realize.n; i++)
    if (b->iter_vars[i].type == type && tir_expr_uses_var(realize->u.realize.iter_values[i], loop->u.loop.var))
      return true;
  return false;
}

/* A reduction block's init runs at the first iteration of each output
 * element only while the loops visit its reduction indices from the
 * bottom. Loops that feed both spatial and reduction iter vars (a fused
 * `j, k` loop, or the parts of its split) are digits of one index: swapping
 * two of them visits an element's later reduction steps before its init,
 * which then discards them. TVM's reorder does not check this. */
static int check_mixed_loops_keep_order(sch_t *sch, const block_check_t *c, tir_stmt_t *realize) {
  const tir_block_t *b = realize->u.realize.block;
  if (!b->init) return MLC_OK;
  for (int i = 0; i < c->len; i++) {
    if (!feeds(realize, c->old[i], TIR_ITER_SPATIAL) || !feeds(realize, c->old[i], TIR_ITER_REDUCE)) continue;
    for (int j = i + 1; j < c->len; j++) {
      if (c->pos[j] > c->pos[i] || !feeds(realize, c->old[j], TIR_ITER_SPATIAL) ||
          !feeds(realize, c->old[j], TIR_ITER_REDUCE))
        continue;
      return sch_fail_at(sch, REORDER, realize,
                         "loops %s and %s both feed spatial and reduction iter vars of block %s; swapping them "
                         "would run its init after some of its updates",
                         sch_loop_name(c->old[i]), sch_loop_name(c->old[j]), b->name);
    }
  }
  return MLC_OK;
}

static int reorder_check_block(sch_t *sch, const sch_path_t *path, void *ctx) {
  block_check_t *c = ctx;
  tir_stmt_t *realize = path->stmts[path->n - 1];
  tir_block_t *b = realize->u.realize.block;
  for (int i = 0; i < b->niter_vars; i++) {
    tir_iter_type_t t = b->iter_vars[i].type;
    if (t != TIR_ITER_SPATIAL && t != TIR_ITER_REDUCE)
      return sch_fail_at(sch, REORDER, realize, "block %s has iter var %s of type %s, not spatial or reduce",
                         b->name, b->iter_vars[i].var->u.var.name, tir_iter_type_name(t));
  }
  if (b->niter_vars == 0) return MLC_OK;
  if (!sch_has_affine_binding(sch, path) && !affine_under(sch, path, c->top))
    return sch_fail_at(sch, REORDER, realize, "block %s does not have an affine binding under loop %s", b->name,
                       sch_loop_name(c->top_loop));
  return check_mixed_loops_keep_order(sch, c, realize);
}

/* ------------------------------------------------------------------------ */
/* reorder: the chain                                                        */
/* ------------------------------------------------------------------------ */

typedef struct {
  int n;
  tir_stmt_t *given[REORDER_MAX_LOOPS];
  int depth[REORDER_MAX_LOOPS];
  sch_path_t path; /* to the innermost given loop */
  int top, bottom; /* depths in path */
} chain_t;

/* Finds the loops: no loop twice; path is the deepest one's. */
static int reorder_find(sch_t *sch, const sch_rv_t *rvs, int n, chain_t *c) {
  sch_path_t p;
  if (n > REORDER_MAX_LOOPS) return sch_fail(sch, REORDER, "too many loops (%d, at most %d)", n, REORDER_MAX_LOOPS);
  c->n = n;
  c->top = SCH_MAX_DEPTH;
  c->bottom = -1;
  for (int k = 0; k < n; k++) {
    if (sch_find_loop(sch, REORDER, rvs[k], &p) != MLC_OK) return MLC_ESCHEDULE;
    c->given[k] = p.stmts[p.n - 1];
    c->depth[k] = p.n - 1;
    for (int j = 0; j < k; j++)
      if (c->given[j] == c->given[k]) return sch_fail(sch, REORDER, "loop %s given twice", sch_loop_name(c->given[k]));
    if (c->depth[k] > c->bottom) {
      c->bottom = c->depth[k];
      c->path = p;
    }
    if (c->depth[k] < c->top) c->top = c->depth[k];
  }
  return MLC_OK;
}

/* All given loops on the bottom one's path, no block between them, and each
 * loop from top to bottom exactly the body of the one above. */
static int reorder_check_chain(sch_t *sch, const chain_t *c) {
  tir_stmt_t *const *s = c->path.stmts;
  const char *bn = sch_loop_name(s[c->bottom]);
  for (int k = 0; k < c->n; k++)
    if (s[c->depth[k]] != c->given[k])
      return sch_fail(sch, REORDER, "loops %s and %s are not in one chain", sch_loop_name(c->given[k]), bn);
  for (int d = c->top + 1; d <= c->bottom; d++)
    if (s[d]->kind == TIR_BLOCK_REALIZE)
      return sch_fail(sch, REORDER, "loops %s and %s are not in the same block scope (block %s is between them)",
                      sch_loop_name(s[c->top]), bn, s[d]->u.realize.block->name);
  for (int d = c->top + 1; d <= c->bottom; d++)
    if (s[d]->kind != TIR_FOR || s[d - 1]->u.loop.body != s[d])
      return sch_fail_at(sch, REORDER, s[d - 1], "loops %s and %s are not in one chain (the body of loop %s is not a single loop)",
                         sch_loop_name(s[c->top]), bn, sch_loop_name(s[d - 1]));
  return MLC_OK;
}

static bool is_given(const chain_t *c, const tir_stmt_t *loop) {
  for (int k = 0; k < c->n; k++)
    if (c->given[k] == loop) return true;
  return false;
}

/* The loops of the chain in their new order (outer first): the given places
 * take the given loops in order; pos[p] is where the loop at place p goes. */
static void reorder_new_order(const chain_t *c, tir_stmt_t **order, int *pos) {
  int len = c->bottom - c->top + 1, next = 0;
  for (int p = 0; p < len; p++) {
    tir_stmt_t *old = c->path.stmts[c->top + p];
    order[p] = is_given(c, old) ? c->given[next++] : old;
  }
  for (int p = 0; p < len; p++)
    for (int q = 0; q < len; q++)
      if (order[q] == c->path.stmts[c->top + p]) pos[p] = q;
}

/* No loop's range may use the variable of a loop that ends up inside it. */
static int reorder_check_ranges(sch_t *sch, const chain_t *c, tir_stmt_t **order) {
  int len = c->bottom - c->top + 1;
  for (int p = 0; p < len; p++) {
    tir_stmt_t *l = order[p];
    for (int q = p + 1; q < len; q++) {
      tir_var_t *v = order[q]->u.loop.var;
      const char *what = tir_expr_uses_var(l->u.loop.extent, v) ? "extent"
                         : tir_expr_uses_var(l->u.loop.min, v)  ? "start"
                                                                : NULL;
      if (what)
        return sch_fail_at(sch, REORDER, l, "the %s of loop %s depends on loop %s, which would be inside it", what,
                           sch_loop_name(l), sch_loop_name(order[q]));
    }
  }
  return MLC_OK;
}

int sch_reorder(sch_t *sch, const sch_rv_t *loop_rvs, int nloops) {
  chain_t c;
  tir_stmt_t *order[SCH_MAX_DEPTH];
  int rc = reorder_find(sch, loop_rvs, nloops, &c);
  if (rc == MLC_OK && nloops > 1) { /* one loop (or none) is already in order: TVM's no-op */
    rc = reorder_check_chain(sch, &c);
    int pos[SCH_MAX_DEPTH];
    if (rc == MLC_OK) reorder_new_order(&c, order, pos);
    block_check_t bc = {c.top, c.path.stmts[c.top], c.bottom - c.top + 1, c.path.stmts + c.top, pos};
    sch_path_t walk = c.path;
    walk.n = c.bottom + 1;
    if (rc == MLC_OK) rc = walk_child_blocks(sch, &walk, c.path.stmts[c.bottom]->u.loop.body, reorder_check_block, &bc);
    if (rc == MLC_OK) rc = reorder_check_ranges(sch, &c, order);
    if (rc != MLC_OK) return rc;

    /* Rebuild the chain bottom-up from copies (uids kept: the loop RVs follow). */
    tir_stmt_t *cur = c.path.stmts[c.bottom]->u.loop.body;
    for (int p = c.bottom - c.top; p >= 0; p--) {
      tir_stmt_t *l = tir_stmt_copy(sch_arena(sch), order[p]);
      if (!l) return mlc_error_set(MLC_ENOMEM, "reorder: out of memory");
      l->u.loop.body = cur;
      cur = l;
    }
    sch_replace(sch, &c.path, c.top, cur);
  }
  if (rc != MLC_OK) return rc;
  sch_arg_t inputs[REORDER_MAX_LOOPS];
  for (int k = 0; k < nloops; k++) inputs[k] = sch_arg_rv(loop_rvs[k]);
  sch_record(sch, SCH_INST_REORDER, inputs, nloops, NULL, 0, NULL, 0, NULL);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* add_unit_loop                                                             */
/* ------------------------------------------------------------------------ */

static const char *const ADD_UNIT_LOOP = "add_unit_loop";

/* A serial loop `u` of extent 1 directly above the block or loop (TVM names
 * the variable "u"; the printer renames it on a clash). */
int sch_add_unit_loop(sch_t *sch, sch_rv_t *out, sch_rv_t block_or_loop) {
  sch_path_t path;
  bool is_loop;
  *out = SCH_RV_NONE;
  if (sch_find_block_or_loop(sch, ADD_UNIT_LOOP, block_or_loop, &path, &is_loop) != MLC_OK) return MLC_ESCHEDULE;
  tir_stmt_t *target = path.stmts[path.n - 1];
  if (!is_loop && path.n == 1)
    return sch_fail(sch, ADD_UNIT_LOOP, "cannot add a loop above the root block %s", target->u.realize.block->name);
  mlc_arena_t *a = sch_arena(sch);
  tir_var_t *u = tir_var(a, "u", tir_dt_INT32());
  tir_stmt_t *loop = u ? sch_new_loop(sch, u, tir_i32(a, 0), tir_i32(a, 1), TIR_FOR_SERIAL, target) : NULL;
  if (!loop || mlc_arena_failed(a)) return mlc_error_set(MLC_ENOMEM, "add_unit_loop: out of memory");
  sch_replace(sch, &path, path.n - 1, loop);
  *out = sch_rv_for_loop(sch, loop);
  sch_arg_t input = sch_arg_rv(block_or_loop);
  sch_record(sch, SCH_INST_ADD_UNIT_LOOP, &input, 1, NULL, 0, out, 1, NULL);
  return MLC_OK;
}
