/*
 * reduction.c - the reduction primitives: decompose_reduction (split a
 * reduction block's init into a block of its own) and rfactor (factor a
 * reduction loop out into an intermediate buffer), with TVM's semantics
 * (src/tir/schedule/primitive/reduction.cc).
 *
 * decompose_reduction places `<name>_init` before the given loop, under
 * copies (`<var>_init`) of the loops between it and the block that the init's
 * spatial bindings use; the block loses its init and becomes `<name>_update`.
 *
 * rfactor recognises the reducer from the init and update stores (sum,
 * product, min, max: `C = C + x`, `C = C * x`, `T.min(C, x)`, `T.max(C, x)`,
 * either operand order, with the reducer's identity as init), then builds the
 * rfactor block `<name>_rf` (the factored loop becomes a spatial iter var and
 * a new dimension of `<buf>_rf` at factor_axis) under fresh copies of the
 * block's loops, and the write-back block (keeping the block's name and uid)
 * that reduces `<buf>_rf` over the factored loop. Both check everything
 * before they touch the program.
 */
#include "schedule/analysis/analysis.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static bool uses_loop(tir_expr_t *e, const tir_stmt_t *loop) {
  return e && tir_expr_uses_var(e, loop->u.loop.var);
}

static tir_region_t *subst_regions(mlc_arena_t *a, const tir_region_t *rs, int n, const tir_var_map_t *map) {
  if (n <= 0) return NULL;
  tir_region_t *out = mlc_arena_alloc(a, sizeof(*out) * (size_t)n);
  for (int i = 0; i < n; i++) {
    out[i] = rs[i];
    out[i].ranges = mlc_arena_alloc(a, sizeof(tir_range_t) * (size_t)(rs[i].ndim ? rs[i].ndim : 1));
    for (int d = 0; d < rs[i].ndim; d++) {
      out[i].ranges[d].min = tir_substitute_expr(a, rs[i].ranges[d].min, map);
      out[i].ranges[d].extent = tir_substitute_expr(a, rs[i].ranges[d].extent, map);
    }
  }
  return out;
}

/* The FOR statements between the block's scope and the block, outermost
 * first; returns their count. */
static int block_loops(const sch_path_t *bp, tir_stmt_t **loops) {
  int scope = sch_path_scope_depth(bp, bp->n - 1);
  return sch_path_loops(bp, scope, bp->n - 1, loops, SCH_MAX_DEPTH);
}

/* A new loop like `old` (kind, thread tag, annotations) with a fresh uid. */
static tir_stmt_t *copy_loop(sch_t *sch, const tir_stmt_t *old, tir_var_t *var, tir_expr_t *min,
                             tir_expr_t *extent, tir_stmt_t *body) {
  tir_stmt_t *s = sch_new_loop(sch, var, min, extent, old->u.loop.kind, body);
  s->u.loop.thread_tag = old->u.loop.thread_tag;
  return s;
}

/* Conjuncts of pred that do not mention any of the discarded loops (TVM's
 * RemakePredicate); true when none is left. */
static tir_expr_t *keep_conjuncts_rec(mlc_arena_t *a, tir_expr_t *pred, tir_stmt_t **discarded, int nd) {
  if (pred->kind == TIR_AND) {
    tir_expr_t *l = keep_conjuncts_rec(a, pred->u.bin.a, discarded, nd);
    tir_expr_t *r = keep_conjuncts_rec(a, pred->u.bin.b, discarded, nd);
    if (tir_is_const_int(l, 1)) return r;
    if (tir_is_const_int(r, 1)) return l;
    return tir_binary(a, TIR_AND, l, r);
  }
  for (int i = 0; i < nd; i++)
    if (uses_loop(pred, discarded[i])) return tir_bool(a, true);
  return pred;
}

/* The same, after giving the discarded loops of extent 1 their only value:
 * a unit loop (a split with preserve_unit_iters off leaves them) takes
 * part in the predicate of the split it came from, `i_0 * 8 + i_1 * 4 + i_2
 * < 16` with i_0 in range(1), and dropping that conjunct would let the new
 * block run past the tail the predicate guards. */
static tir_expr_t *keep_conjuncts(mlc_arena_t *a, tir_expr_t *pred, tir_stmt_t **discarded, int nd) {
  tir_var_map_t unit = {0};
  tir_stmt_t *rest[SCH_MAX_DEPTH];
  int nr = 0;
  for (int i = 0; i < nd; i++) {
    if (tir_is_const_int(discarded[i]->u.loop.extent, 1) && uses_loop(pred, discarded[i]))
      tir_var_map_set(a, &unit, discarded[i]->u.loop.var, discarded[i]->u.loop.min);
    else
      rest[nr++] = discarded[i];
  }
  if (unit.n > 0) {
    tir_analyzer_t *an = tir_analyzer_new(a);
    pred = tir_substitute_expr(a, pred, &unit);
    if (an) pred = tir_simplify(an, pred);
  }
  return keep_conjuncts_rec(a, pred, rest, nr);
}

/* ------------------------------------------------------------------------ */
/* decompose_reduction                                                       */
/* ------------------------------------------------------------------------ */

#define DR "decompose_reduction"

/* The cheap proof of one-to-one, for bindings linear in the loops (what
 * tiling makes): each loop of extent > 1 is a term of one binding only, and
 * in each binding its loops' terms are digits that cannot overlap (ordered
 * by coefficient, each coefficient exceeds the largest sum of the terms
 * below it). false when it does not apply; the iteration map decides. */
static bool dr_digits_one_to_one(const tir_stmt_t *realize, tir_var_t **vars, tir_stmt_t **loops, int n) {
  int64_t coef[SCH_MAX_DEPTH], ext[SCH_MAX_DEPTH], owner[SCH_MAX_DEPTH];
  for (int i = 0; i < n; i++) {
    if (!tir_as_int(loops[i]->u.loop.extent, &ext[i])) return false;
    owner[i] = ext[i] == 1 ? -2 : -1;
  }
  for (int v = 0; v < realize->u.realize.n; v++) {
    if (!sch_linear_coefs(realize->u.realize.iter_values[v], vars, n, coef)) return false;
    int64_t c[SCH_MAX_DEPTH], e[SCH_MAX_DEPTH];
    int m = 0;
    for (int i = 0; i < n; i++) {
      if (coef[i] == 0 || owner[i] == -2) continue;
      if (owner[i] != -1) return false; /* a loop in two bindings */
      owner[i] = v;
      int64_t a = coef[i] < 0 ? -coef[i] : coef[i];
      int k = m++;
      for (; k > 0 && c[k - 1] > a; k--) c[k] = c[k - 1], e[k] = e[k - 1];
      c[k] = a, e[k] = ext[i];
    }
    int64_t reach = 0; /* the largest sum of the digits so far */
    for (int k = 0; k < m; k++) {
      if (c[k] <= reach || e[k] > (INT64_C(1) << 31) || c[k] > (INT64_C(1) << 31)) return false;
      reach += c[k] * (e[k] - 1);
    }
  }
  for (int i = 0; i < n; i++)
    if (owner[i] == -1) return false; /* a loop that feeds nothing repeats the block */
  return true;
}

/* Whether the block's bindings map the n loops (outer loops stay symbols)
 * one to one onto its iterations: a bijective iteration map. */
static bool dr_loops_map_one_to_one(sch_t *sch, const tir_stmt_t *realize, tir_stmt_t **loops, int n) {
  tir_var_t *vars[SCH_MAX_DEPTH];
  tir_range_t doms[SCH_MAX_DEPTH];
  for (int i = 0; i < n; i++) {
    vars[i] = loops[i]->u.loop.var;
    doms[i] = (tir_range_t){loops[i]->u.loop.min, loops[i]->u.loop.extent};
  }
  if (dr_digits_one_to_one(realize, vars, loops, n)) return true;
  mlc_arena_t *scratch = mlc_arena_new();
  tir_analyzer_t *an = scratch ? tir_analyzer_new(scratch) : NULL;
  tir_iter_map_t map;
  /* One to one without the predicate is one to one with it; with it, a
   * fused iterator split by a non-dividing factor has its true extent. */
  bool ok = false;
  for (int pass = 0; an && pass < 2 && !ok; pass++)
    ok = tir_detect_iter_map(&map, an, realize->u.realize.iter_values, realize->u.realize.n, vars, doms, n,
                             pass ? NULL : realize->u.realize.predicate, TIR_ITER_BIJECTIVE) == MLC_OK;
  if (!ok) mlc_error_clear();
  mlc_arena_free(scratch);
  return ok;
}

/* The checks: loop is one of the block's loops (index *li), the block is a
 * reduction block, and no loop above `loop` feeds a reduction binding. */
static int dr_check(sch_t *sch, const sch_path_t *bp, tir_stmt_t *loop, tir_stmt_t **loops, int nl, int *li) {
  tir_stmt_t *realize = bp->stmts[bp->n - 1];
  tir_block_t *b = realize->u.realize.block;
  *li = -1;
  for (int i = 0; i < nl; i++)
    if (loops[i] == loop) *li = i;
  if (*li < 0)
    return sch_fail_at(sch, DR, loop, "loop %s is not an ancestor of block %s", sch_loop_name(loop), b->name);
  if (!sch_is_reduction_block(sch, bp))
    return sch_fail_at(sch, DR, realize, "block %s is not a reduction block", b->name);
  for (int v = 0; v < b->niter_vars; v++) {
    if (b->iter_vars[v].type != TIR_ITER_REDUCE) continue;
    for (int i = 0; i < *li; i++)
      if (uses_loop(realize->u.realize.iter_values[v], loops[i]))
        return sch_fail_at(sch, DR, loop,
                           "loop %s is below loop %s, which the reduction iter var %s of block %s uses",
                           sch_loop_name(loop), sch_loop_name(loops[i]), b->iter_vars[v].var->u.var.name,
                           b->name);
  }
  /* Each iteration of the loops from `loop` down must be a distinct
   * iteration of the block: compute_at can leave a block recomputing its
   * reduction, init included, under a consumer's loop that feeds no binding
   * or only part of one (`v = f // 16`). The init nest before `loop` would
   * run once for all those repeats. TVM does not check this. */
  if (!dr_loops_map_one_to_one(sch, realize, loops + *li, nl - *li))
    return sch_fail_at(sch, DR, loop,
                       "the loops from %s down repeat iterations of block %s (it recomputes its reduction, init "
                       "included, under them); an init before loop %s would run once",
                       sch_loop_name(loop), b->name, sch_loop_name(loop));
  return MLC_OK;
}

/* The init block `<name>_init` under copies of the loops (from `loop` down)
 * its spatial bindings use. */
static tir_stmt_t *dr_make_init(sch_t *sch, tir_stmt_t *realize, tir_stmt_t **loops, int nl, int li,
                                tir_block_t **init_out) {
  mlc_arena_t *a = sch_arena(sch);
  tir_block_t *b = realize->u.realize.block;
  int nv = 0;
  tir_iter_var_t *ivs = mlc_arena_alloc(a, sizeof(*ivs) * (size_t)(b->niter_vars + 1));
  tir_expr_t **vals = mlc_arena_alloc(a, sizeof(*vals) * (size_t)(b->niter_vars + 1));
  tir_var_map_t vmap = {0};
  for (int v = 0; v < b->niter_vars; v++) {
    const tir_iter_var_t *iv = &b->iter_vars[v];
    if (iv->type != TIR_ITER_SPATIAL) continue;
    ivs[nv] = *iv;
    ivs[nv].var = tir_var(a, iv->var->u.var.name, iv->var->dtype);
    vals[nv] = realize->u.realize.iter_values[v];
    tir_var_map_set(a, &vmap, iv->var, ivs[nv].var);
    nv++;
  }
  /* Loops from the innermost up to `loop`: chosen when a binding uses them. */
  tir_stmt_t *chosen[SCH_MAX_DEPTH], *discarded[SCH_MAX_DEPTH];
  int nc = 0, nd = 0;
  tir_var_map_t lmap = {0};
  for (int i = nl - 1; i >= li; i--) {
    bool used = false;
    for (int k = 0; k < nv && !used; k++) used = uses_loop(vals[k], loops[i]);
    if (!used) {
      discarded[nd++] = loops[i];
      continue;
    }
    chosen[nc++] = loops[i];
    const tir_var_t *lv = loops[i]->u.loop.var;
    tir_var_map_set(a, &lmap, loops[i]->u.loop.var,
                    tir_var(a, mlc_arena_printf(a, "%s_init", lv->u.var.name), lv->dtype));
  }
  tir_block_t *ib = sch_new_block(sch, sch_unique_block_name(sch, mlc_arena_printf(a, "%s_init", b->name)));
  ib->niter_vars = nv;
  ib->iter_vars = ivs;
  ib->body = tir_substitute_stmt(a, b->init, &vmap);
  ib->nwrites = b->nwrites;
  ib->writes = subst_regions(a, b->writes, b->nwrites, &vmap);
  ib->nannots = b->nannots;
  ib->annots = b->annots;
  for (int k = 0; k < nv; k++) vals[k] = tir_substitute_expr(a, vals[k], &lmap);
  tir_expr_t *pred = keep_conjuncts(a, realize->u.realize.predicate, discarded, nd);
  pred = tir_substitute_expr(a, pred, &lmap);
  tir_stmt_t *body = tir_block_realize(a, vals, nv, pred, ib);
  for (int i = 0; i < nc; i++) {
    const tir_stmt_t *l = chosen[i];
    body = copy_loop(sch, l, tir_var_map_get(&lmap, l->u.loop.var), tir_substitute_expr(a, l->u.loop.min, &lmap),
                     tir_substitute_expr(a, l->u.loop.extent, &lmap), body);
  }
  *init_out = ib;
  return body;
}

/* The update block: no init, named `<name>_update`, and its written regions
 * listed as read too (first, as TVM does). */
static tir_stmt_t *dr_make_update(sch_t *sch, tir_stmt_t *realize) {
  mlc_arena_t *a = sch_arena(sch);
  tir_block_t *b = realize->u.realize.block;
  tir_block_t *ub = tir_block_copy(a, b);
  ub->name = sch_unique_block_name(sch, mlc_arena_printf(a, "%s_update", b->name));
  ub->init = NULL;
  tir_region_t *reads = mlc_arena_alloc(a, sizeof(*reads) * (size_t)(b->nreads + b->nwrites + 1));
  int n = 0;
  for (int w = 0; w < b->nwrites; w++) {
    bool read = false;
    for (int r = 0; r < b->nreads && !read; r++) read = b->reads[r].buffer == b->writes[w].buffer;
    if (!read) reads[n++] = b->writes[w];
  }
  for (int r = 0; r < b->nreads; r++) reads[n++] = b->reads[r];
  ub->reads = reads;
  ub->nreads = n;
  tir_stmt_t *out = tir_stmt_copy(a, realize);
  out->u.realize.block = ub;
  return out;
}

int sch_decompose_reduction(sch_t *sch, sch_rv_t *out, sch_rv_t block_rv, sch_rv_t loop_rv) {
  sch_path_t bp, lp;
  *out = SCH_RV_NONE;
  int rc = sch_find_block(sch, DR, block_rv, &bp);
  if (rc == MLC_OK) rc = sch_find_loop(sch, DR, loop_rv, &lp);
  if (rc != MLC_OK) return rc;
  tir_stmt_t *realize = bp.stmts[bp.n - 1], *loop = lp.stmts[lp.n - 1];
  tir_stmt_t *loops[SCH_MAX_DEPTH];
  int nl = block_loops(&bp, loops), li;
  rc = dr_check(sch, &bp, loop, loops, nl, &li);
  if (rc != MLC_OK) return rc;

  mlc_arena_t *a = sch_arena(sch);
  tir_block_t *init_block;
  tir_stmt_t *init_nest = dr_make_init(sch, realize, loops, nl, li, &init_block);
  tir_stmt_t *update = dr_make_update(sch, realize);
  uint32_t loop_uid = loop->u.loop.uid;
  sch_replace(sch, &bp, bp.n - 1, update);
  bool found = sch_find_uid(sch, loop_uid, &lp);
  MLC_ASSERT(found);
  tir_stmt_t *pair[2] = {init_nest, lp.stmts[lp.n - 1]};
  sch_replace(sch, &lp, lp.n - 1, tir_seq(a, pair, 2));

  *out = sch_new_rv(sch, SCH_RV_BLOCK, init_block->uid, 0);
  sch_arg_t inputs[2] = {sch_arg_rv(block_rv), sch_arg_rv(loop_rv)};
  sch_record(sch, SCH_INST_DECOMPOSE_REDUCTION, inputs, 2, NULL, 0, out, 1, NULL);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Reducers                                                                  */
/* ------------------------------------------------------------------------ */

/* True when e loads exactly the element `store` writes. */
static bool loads_stored(const tir_expr_t *e, const tir_stmt_t *store) {
  if (e->kind != TIR_BUFFER_LOAD || e->u.load.buffer != store->u.store.buffer) return false;
  if (e->u.load.nindices != store->u.store.nindices) return false;
  for (int i = 0; i < e->u.load.nindices; i++)
    if (!tir_expr_equal(e->u.load.indices[i], store->u.store.indices[i])) return false;
  return true;
}

static bool float_is(const tir_expr_t *e, double v) {
  return e->kind == TIR_FLOAT_IMM && e->u.float_value == v;
}

/* Whether `init` is the identity of the reducer for its dtype: 0, 1, the
 * largest value (or +inf) for min, the lowest (or -inf) for max. */
static bool is_identity(sch_reducer_kind_t kind, const tir_expr_t *init) {
  tir_dtype_t t = init->dtype;
  int64_t iv;
  if (kind == SCH_REDUCER_SUM) return tir_is_const_int(init, 0) || float_is(init, 0.0);
  if (kind == SCH_REDUCER_PRODUCT) return tir_is_const_int(init, 1) || float_is(init, 1.0);
  if (tir_dtype_is_float(t)) {
    double big = t.bits == 16 && t.code == TIR_CODE_FLOAT ? 65504.0
                 : t.bits == 64                           ? 1.7976931348623157e308
                                                          : 3.4028234663852886e38;
    if (t.code == TIR_CODE_BFLOAT) big = 3.3895313892515355e38;
    double want = kind == SCH_REDUCER_MIN ? big : -big;
    return float_is(init, want) || float_is(init, kind == SCH_REDUCER_MIN ? INFINITY : -INFINITY);
  }
  if (!tir_as_int(init, &iv)) return false;
  int bits = t.bits;
  if (tir_dtype_is_uint(t)) {
    uint64_t max = bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
    return kind == SCH_REDUCER_MIN ? (uint64_t)iv == max : iv == 0;
  }
  int64_t max = bits >= 64 ? INT64_MAX : (int64_t)((1ull << (bits - 1)) - 1);
  return kind == SCH_REDUCER_MIN ? iv == max : iv == -max - 1;
}

/* Matches the block's init and update against the known reducers. */
bool sch_match_reducer(const tir_block_t *b, sch_reducer_t *r) {
  static const struct { tir_expr_kind_t op; sch_reducer_kind_t kind; } table[] = {
      {TIR_ADD, SCH_REDUCER_SUM}, {TIR_MUL, SCH_REDUCER_PRODUCT},
      {TIR_MIN, SCH_REDUCER_MIN}, {TIR_MAX, SCH_REDUCER_MAX}};
  tir_stmt_t *init = b->init, *upd = b->body;
  if (!init || init->kind != TIR_BUFFER_STORE || upd->kind != TIR_BUFFER_STORE) return false;
  if (init->u.store.buffer != upd->u.store.buffer || init->u.store.nindices != upd->u.store.nindices) return false;
  for (int i = 0; i < init->u.store.nindices; i++)
    if (!tir_expr_equal(init->u.store.indices[i], upd->u.store.indices[i])) return false;
  tir_expr_t *v = upd->u.store.value;
  for (size_t k = 0; k < sizeof(table) / sizeof(table[0]); k++) {
    if (v->kind != table[k].op) continue;
    r->kind = table[k].kind;
    r->op = table[k].op;
    r->init = init;
    r->update = upd;
    if (loads_stored(v->u.bin.a, upd)) {
      r->lhs = v->u.bin.a;
      r->rhs = v->u.bin.b;
    } else if (loads_stored(v->u.bin.b, upd)) {
      r->lhs = v->u.bin.b;
      r->rhs = v->u.bin.a;
    } else {
      return false;
    }
    return is_identity(r->kind, init->u.store.value);
  }
  return false;
}

static tir_expr_t *combine(mlc_arena_t *a, sch_reducer_kind_t kind, tir_expr_t *x, tir_expr_t *y) {
  static const tir_expr_kind_t ops[] = {TIR_ADD, TIR_MUL, TIR_MIN, TIR_MAX};
  return tir_binary(a, ops[kind], x, y);
}

/* ------------------------------------------------------------------------ */
/* rfactor: checks                                                           */
/* ------------------------------------------------------------------------ */

#define RF "rfactor"

typedef struct {
  tir_stmt_t *rf_loop;
  sch_path_t bp;                 /* the block */
  tir_stmt_t *realize;
  tir_block_t *block;
  tir_stmt_t *loops[SCH_MAX_DEPTH];
  int nloops;
  bool data_par[SCH_MAX_DEPTH];  /* loop feeds a spatial binding */
  bool reduce[SCH_MAX_DEPTH];    /* loop feeds a reduction binding */
  sch_reducer_t red;
  int factor_axis;
} rfactor_t;

static void rf_classify_loops(rfactor_t *rf) {
  tir_stmt_t *realize = rf->realize;
  for (int i = 0; i < rf->nloops; i++) {
    rf->data_par[i] = rf->reduce[i] = false;
    for (int v = 0; v < rf->block->niter_vars; v++) {
      if (!uses_loop(realize->u.realize.iter_values[v], rf->loops[i])) continue;
      if (rf->block->iter_vars[v].type == TIR_ITER_REDUCE) rf->reduce[i] = true;
      else rf->data_par[i] = true;
    }
  }
}

/* TVM's loop properties: the block is the first block under the outermost
 * loop; no loop feeds both kinds of bindings; the rfactor loop feeds no
 * spatial binding; the outermost reduction loop has the block as its only
 * block; no unbound non-unit loop sits under a reduction loop. */
static int rf_check_loops(sch_t *sch, rfactor_t *rf) {
  tir_stmt_t *kids[2];
  const char *name = rf->block->name;
  if (sch_child_blocks(rf->loops[0], kids, 2) < 1 || kids[0] != rf->realize)
    return sch_fail_at(sch, RF, rf->loops[0], "block %s is not the first block under its outermost loop %s", name,
                       sch_loop_name(rf->loops[0]));
  bool met_reduce = false;
  for (int i = 0; i < rf->nloops; i++) {
    tir_stmt_t *l = rf->loops[i];
    if (rf->data_par[i] && rf->reduce[i])
      return sch_fail_at(sch, RF, l, "loop %s feeds both spatial and reduction iter vars of block %s",
                         sch_loop_name(l), name);
    if (rf->data_par[i]) {
      if (l == rf->rf_loop)
        return sch_fail_at(sch, RF, l, "loop %s feeds a spatial iter var of block %s", sch_loop_name(l), name);
    } else if (rf->reduce[i]) {
      if (!met_reduce && sch_child_blocks(l, kids, 2) != 1)
        return sch_fail_at(sch, RF, l, "the reduction loop %s has more than one block under it", sch_loop_name(l));
      met_reduce = true;
    } else if (met_reduce && !tir_is_const_int(l->u.loop.extent, 1)) {
      return sch_fail_at(sch, RF, l, "loop %s is not bound to any iter var of block %s but sits under a reduction loop",
                         sch_loop_name(l), name);
    }
  }
  return MLC_OK;
}

static int rf_check(sch_t *sch, rfactor_t *rf, sch_rv_t loop_rv, int factor_axis) {
  sch_path_t lp;
  int rc = sch_find_loop(sch, RF, loop_rv, &lp);
  if (rc != MLC_OK) return rc;
  rf->rf_loop = lp.stmts[lp.n - 1];
  tir_stmt_t *kids[2];
  if (sch_child_blocks(rf->rf_loop, kids, 2) != 1)
    return sch_fail_at(sch, RF, rf->rf_loop, "loop %s does not have exactly one block under it",
                       sch_loop_name(rf->rf_loop));
  bool found = sch_find_uid(sch, kids[0]->u.realize.block->uid, &rf->bp);
  MLC_ASSERT(found);
  rf->realize = kids[0];
  rf->block = kids[0]->u.realize.block;
  if (!sch_is_reduction_block(sch, &rf->bp))
    return sch_fail_at(sch, RF, rf->realize, "block %s is not a reduction block", rf->block->name);
  if (rf->rf_loop->u.loop.kind != TIR_FOR_SERIAL)
    return sch_fail_at(sch, RF, rf->rf_loop, "loop %s is %s, not serial", sch_loop_name(rf->rf_loop),
                       tir_for_kind_name(rf->rf_loop->u.loop.kind));
  rf->nloops = block_loops(&rf->bp, rf->loops);
  rf_classify_loops(rf);
  rc = rf_check_loops(sch, rf);
  if (rc != MLC_OK) return rc;
  if (!sch_match_reducer(rf->block, &rf->red))
    return sch_fail_at(sch, RF, rf->realize,
                       "block %s is not a reduction rfactor knows (sum, product, min or max of the stored "
                       "element, with the reducer's identity as init)",
                       rf->block->name);
  int ndim = rf->red.update->u.store.buffer->ndim;
  if (factor_axis < -(ndim + 1) || factor_axis > ndim)
    return sch_fail(sch, RF, "factor_axis %d is out of range [%d, %d] for buffer %s", factor_axis, -(ndim + 1),
                    ndim, rf->red.update->u.store.buffer->name);
  rf->factor_axis = factor_axis < 0 ? factor_axis + ndim + 1 : factor_axis;
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* rfactor: building                                                         */
/* ------------------------------------------------------------------------ */

static tir_buffer_t *rf_make_buffer(mlc_arena_t *a, const rfactor_t *rf) {
  tir_buffer_t *old = rf->red.update->u.store.buffer;
  tir_expr_t *shape[TIR_MAX_DIMS + 1];
  int n = 0;
  for (int d = 0; d <= old->ndim; d++) {
    if (d == rf->factor_axis) shape[n++] = rf->rf_loop->u.loop.extent;
    if (d < old->ndim) shape[n++] = old->shape[d];
  }
  return tir_buffer_new(a, mlc_arena_printf(a, "%s_rf", old->name), old->dtype, shape, n, old->scope);
}

static tir_expr_t **insert_index(mlc_arena_t *a, tir_expr_t **idx, int n, int at, tir_expr_t *x) {
  tir_expr_t **out = mlc_arena_alloc(a, sizeof(*out) * (size_t)(n + 1));
  for (int i = 0, k = 0; i <= n; i++) {
    if (i == at) out[k++] = x;
    if (i < n) out[k++] = idx[i];
  }
  return out;
}

static tir_iter_var_t iter_from_loop(mlc_arena_t *a, const tir_stmt_t *loop, tir_iter_type_t type) {
  tir_iter_var_t iv;
  const tir_var_t *lv = loop->u.loop.var;
  iv.var = tir_var(a, mlc_arena_printf(a, "v%s", lv->u.var.name), lv->dtype);
  iv.dom.min = loop->u.loop.min;
  iv.dom.extent = loop->u.loop.extent;
  iv.type = type;
  return iv;
}

static int loop_index(const rfactor_t *rf, const tir_var_t *v) {
  for (int i = 0; i < rf->nloops; i++)
    if (rf->loops[i]->u.loop.var == v) return i;
  return -1;
}

/* Loop variables of e in order of first appearance (left to right). */
typedef struct { tir_var_t *vars[SCH_MAX_DEPTH]; int n; } var_list_t;
static bool collect_var(tir_visitor_t *v, tir_expr_t *e) {
  var_list_t *l = v->payload;
  if (e->kind != TIR_VAR) return true;
  for (int i = 0; i < l->n; i++)
    if (l->vars[i] == e) return false;
  if (l->n < SCH_MAX_DEPTH) l->vars[l->n++] = e;
  return false;
}

typedef struct {
  tir_iter_var_t *ivs;
  tir_expr_t **vals;
  int n;
  tir_var_map_t old2new;       /* old iter var -> expression over the new iter vars */
  tir_var_t *rf_iter;          /* the rfactor block's iter var for the factored loop */
} rf_iters_t;

/* TVM's RFactorBlockCreator iters: one spatial iter for the factored loop,
 * the old iters that do not touch it, and one reduction iter per loop of
 * the old reduction iters that do. */
static void rf_block_iters(mlc_arena_t *a, const rfactor_t *rf, rf_iters_t *it) {
  const tir_block_t *b = rf->block;
  int cap = b->niter_vars + rf->nloops + 1;
  it->ivs = mlc_arena_alloc(a, sizeof(*it->ivs) * (size_t)cap);
  it->vals = mlc_arena_alloc(a, sizeof(*it->vals) * (size_t)cap);
  tir_var_map_t loop2iter = {0};
  it->ivs[0] = iter_from_loop(a, rf->rf_loop, TIR_ITER_SPATIAL);
  it->vals[0] = rf->rf_loop->u.loop.var;
  it->rf_iter = it->ivs[0].var;
  it->n = 1;
  tir_var_map_set(a, &loop2iter, rf->rf_loop->u.loop.var, it->rf_iter);
  for (int v = 0; v < b->niter_vars; v++) {
    tir_expr_t *binding = rf->realize->u.realize.iter_values[v];
    if (b->iter_vars[v].type != TIR_ITER_REDUCE || !uses_loop(binding, rf->rf_loop)) {
      it->ivs[it->n] = b->iter_vars[v];
      it->vals[it->n++] = binding;
      continue;
    }
    var_list_t vars = {.n = 0};
    tir_visitor_t vis = {.expr = collect_var, .payload = &vars};
    tir_visit_expr(&vis, binding);
    for (int k = 0; k < vars.n; k++) {
      int li = loop_index(rf, vars.vars[k]);
      if (li < 0 || tir_var_map_get(&loop2iter, vars.vars[k])) continue;
      it->ivs[it->n] = iter_from_loop(a, rf->loops[li], TIR_ITER_REDUCE);
      it->vals[it->n] = vars.vars[k];
      tir_var_map_set(a, &loop2iter, vars.vars[k], it->ivs[it->n].var);
      it->n++;
    }
    tir_var_map_set(a, &it->old2new, b->iter_vars[v].var, tir_substitute_expr(a, binding, &loop2iter));
  }
}

static tir_region_t *rf_regions(mlc_arena_t *a, const rfactor_t *rf, const rf_iters_t *it, tir_buffer_t *rfbuf,
                                const tir_region_t *rs, int n) {
  tir_region_t *out = subst_regions(a, rs, n, &it->old2new);
  tir_buffer_t *old = rf->red.update->u.store.buffer;
  for (int i = 0; i < n; i++) {
    if (out[i].buffer != old) continue;
    tir_range_t *ranges = mlc_arena_alloc(a, sizeof(*ranges) * (size_t)(out[i].ndim + 1));
    for (int d = 0, k = 0; d <= out[i].ndim; d++) {
      if (d == rf->factor_axis) {
        ranges[k].min = it->rf_iter;
        ranges[k++].extent = tir_int(a, it->rf_iter->dtype, 1);
      }
      if (d < out[i].ndim) ranges[k++] = out[i].ranges[d];
    }
    out[i].buffer = rfbuf;
    out[i].ranges = ranges;
    out[i].ndim++;
  }
  return out;
}

/* The rfactor block `<name>_rf` under fresh copies of all the block's loops. */
static tir_stmt_t *rf_make_rf_nest(sch_t *sch, const rfactor_t *rf, tir_buffer_t *rfbuf, tir_block_t **out_block,
                                   tir_expr_t ***rf_indices) {
  mlc_arena_t *a = sch_arena(sch);
  rf_iters_t it = {0};
  rf_block_iters(a, rf, &it);
  const tir_stmt_t *upd = rf->red.update;
  int n = upd->u.store.nindices;
  tir_expr_t **idx = insert_index(a, upd->u.store.indices, n, rf->factor_axis, it.rf_iter);
  *rf_indices = idx;
  tir_expr_t *acc = tir_load(a, rfbuf, idx, n + 1);
  tir_stmt_t *update = tir_store(a, rfbuf, combine(a, rf->red.kind, acc, rf->red.rhs), idx, n + 1);
  tir_stmt_t *init = tir_store(a, rfbuf, rf->red.init->u.store.value, idx, n + 1);

  tir_block_t *b = sch_new_block(sch, sch_unique_block_name(sch, mlc_arena_printf(a, "%s_rf", rf->block->name)));
  b->niter_vars = it.n;
  b->iter_vars = it.ivs;
  b->body = tir_substitute_stmt(a, update, &it.old2new);
  b->init = tir_substitute_stmt(a, init, &it.old2new);
  b->nreads = rf->block->nreads;
  b->reads = rf_regions(a, rf, &it, rfbuf, rf->block->reads, rf->block->nreads);
  b->nwrites = rf->block->nwrites;
  b->writes = rf_regions(a, rf, &it, rfbuf, rf->block->writes, rf->block->nwrites);
  b->nannots = rf->block->nannots;
  b->annots = rf->block->annots;
  *out_block = b;

  tir_var_map_t lmap = {0};
  for (int i = 0; i < rf->nloops; i++) {
    const tir_var_t *lv = rf->loops[i]->u.loop.var;
    tir_var_map_set(a, &lmap, rf->loops[i]->u.loop.var, tir_var(a, lv->u.var.name, lv->dtype));
  }
  for (int k = 0; k < it.n; k++) it.vals[k] = tir_substitute_expr(a, it.vals[k], &lmap);
  tir_expr_t *pred = tir_substitute_expr(a, rf->realize->u.realize.predicate, &lmap);
  tir_stmt_t *body = tir_block_realize(a, it.vals, it.n, pred, b);
  for (int i = rf->nloops - 1; i >= 0; i--) {
    const tir_stmt_t *l = rf->loops[i];
    body = copy_loop(sch, l, tir_var_map_get(&lmap, l->u.loop.var), tir_substitute_expr(a, l->u.loop.min, &lmap),
                     tir_substitute_expr(a, l->u.loop.extent, &lmap), body);
    body->u.loop.nannots = l->u.loop.nannots;
    body->u.loop.annots = l->u.loop.annots;
  }
  return body;
}

static tir_region_t point_region(mlc_arena_t *a, tir_buffer_t *buf, tir_expr_t **idx, int n) {
  tir_region_t r = {buf, n, mlc_arena_alloc(a, sizeof(tir_range_t) * (size_t)(n ? n : 1))};
  for (int d = 0; d < n; d++) {
    r.ranges[d].min = idx[d];
    r.ranges[d].extent = tir_int(a, idx[d]->dtype, 1);
  }
  return r;
}

/* The write-back block runs under the block's loops minus the reduction
 * loops it drops, and may read only the `<buf>_rf` entries the rfactor
 * block wrote: those whose first iteration of the dropped loops passes the
 * predicate (a split predicate `k_0 * 4 + k_1 < 16` only grows with each
 * loop, so the first iteration decides). The dropped loops take their
 * minimum, and conjuncts that then always hold go: a split of a spatial
 * loop keeps its guard (TVM's RemakePredicate keeps it too), and a split
 * whose last tile of the factored loop is wholly past the end (k in 5
 * tiles of 4 over 16) skips that tile's entry, which no init ever wrote. */
static tir_expr_t *rf_writeback_predicate(mlc_arena_t *a, const rfactor_t *rf) {
  tir_expr_t *pred = rf->realize->u.realize.predicate;
  if (!pred || tir_is_const_int(pred, 1)) return tir_bool(a, true);
  tir_analyzer_t *an = tir_analyzer_new(a);
  tir_var_map_t first = {0};
  for (int i = 0; an && i < rf->nloops; i++) {
    const tir_stmt_t *l = rf->loops[i];
    if (rf->reduce[i] && l != rf->rf_loop) tir_var_map_set(a, &first, l->u.loop.var, l->u.loop.min);
    else tir_analyzer_bind(an, l->u.loop.var, l->u.loop.min, l->u.loop.extent);
  }
  if (!an) return pred;
  return tir_simplify(an, tir_substitute_expr(a, pred, &first));
}

/* The write-back block: the old block's name and uid, reducing `<buf>_rf`
 * over a reduction iter var of the factored loop. */
static tir_stmt_t *rf_make_writeback(sch_t *sch, const rfactor_t *rf, tir_buffer_t *rfbuf, tir_expr_t **rf_idx) {
  mlc_arena_t *a = sch_arena(sch);
  const tir_block_t *old = rf->block;
  tir_iter_var_t *ivs = mlc_arena_alloc(a, sizeof(*ivs) * (size_t)(old->niter_vars + 1));
  tir_expr_t **vals = mlc_arena_alloc(a, sizeof(*vals) * (size_t)(old->niter_vars + 1));
  tir_var_map_t map = {0};
  int n = 1;
  ivs[0] = iter_from_loop(a, rf->rf_loop, TIR_ITER_REDUCE);
  vals[0] = rf->rf_loop->u.loop.var;
  /* rf_idx holds the rfactor block's iter var at factor_axis */
  tir_var_map_set(a, &map, rf_idx[rf->factor_axis], ivs[0].var);
  for (int v = 0; v < old->niter_vars; v++) {
    if (old->iter_vars[v].type != TIR_ITER_SPATIAL) continue;
    ivs[n] = old->iter_vars[v];
    ivs[n].var = tir_var(a, old->iter_vars[v].var->u.var.name, old->iter_vars[v].var->dtype);
    vals[n++] = rf->realize->u.realize.iter_values[v];
    tir_var_map_set(a, &map, old->iter_vars[v].var, ivs[n - 1].var);
  }
  const tir_stmt_t *upd = rf->red.update;
  int ni = upd->u.store.nindices;
  tir_expr_t *lhs = tir_substitute_expr(a, rf->red.lhs, &map);
  tir_expr_t *rhs = tir_substitute_expr(a, tir_load(a, rfbuf, rf_idx, ni + 1), &map);
  tir_expr_t **idx = lhs->u.load.indices;
  tir_block_t *b = tir_block_copy(a, old);
  b->niter_vars = n;
  b->iter_vars = ivs;
  b->body = tir_store(a, upd->u.store.buffer, combine(a, rf->red.kind, lhs, rhs), idx, ni);
  b->init = tir_store(a, upd->u.store.buffer, rf->red.init->u.store.value, idx, ni);
  b->nreads = b->nwrites = 1;
  b->reads = mlc_arena_alloc(a, sizeof(tir_region_t));
  b->writes = mlc_arena_alloc(a, sizeof(tir_region_t));
  b->reads[0] = point_region(a, rfbuf, rhs->u.load.indices, ni + 1);
  b->writes[0] = point_region(a, upd->u.store.buffer, idx, ni);
  return tir_block_realize(a, vals, n, rf_writeback_predicate(a, rf), b);
}

/* The old loop nest with the write-back block in place of the block, minus
 * the loops that fed reduction bindings (except the factored loop). */
static tir_stmt_t *rf_rewrite_nest(sch_t *sch, const rfactor_t *rf, tir_stmt_t *s, tir_stmt_t *wb) {
  mlc_arena_t *a = sch_arena(sch);
  if (s->kind == TIR_BLOCK_REALIZE) return s == rf->realize ? wb : s;
  if (s->kind == TIR_SEQ) {
    tir_stmt_t **stmts = mlc_arena_alloc(a, sizeof(*stmts) * (size_t)s->u.seq.n);
    for (int i = 0; i < s->u.seq.n; i++) stmts[i] = rf_rewrite_nest(sch, rf, s->u.seq.stmts[i], wb);
    return tir_seq(a, stmts, s->u.seq.n);
  }
  if (s->kind != TIR_FOR) return s;
  int li = loop_index(rf, s->u.loop.var);
  if (li < 0) return s;
  tir_stmt_t *body = rf_rewrite_nest(sch, rf, s->u.loop.body, wb);
  if (s != rf->rf_loop && rf->reduce[li]) return body;
  tir_stmt_t *out = tir_stmt_copy(a, s);
  out->u.loop.body = body;
  return out;
}

int sch_rfactor(sch_t *sch, sch_rv_t *out, sch_rv_t loop_rv, int factor_axis) {
  rfactor_t rf;
  *out = SCH_RV_NONE;
  int rc = rf_check(sch, &rf, loop_rv, factor_axis);
  if (rc != MLC_OK) return rc;

  mlc_arena_t *a = sch_arena(sch);
  tir_buffer_t *rfbuf = rf_make_buffer(a, &rf);
  tir_block_t *rf_block;
  tir_expr_t **rf_idx;
  tir_stmt_t *rf_nest = rf_make_rf_nest(sch, &rf, rfbuf, &rf_block, &rf_idx);
  tir_stmt_t *wb = rf_make_writeback(sch, &rf, rfbuf, rf_idx);
  tir_stmt_t *wb_nest = rf_rewrite_nest(sch, &rf, rf.loops[0], wb);

  /* The scope block gets the new buffer; then the outermost loop becomes
   * the rfactor nest followed by the write-back nest. */
  int scope = sch_path_scope_depth(&rf.bp, rf.bp.n - 1);
  tir_stmt_t *scope_realize = rf.bp.stmts[scope];
  uint32_t outer_uid = rf.loops[0]->u.loop.uid;
  tir_block_t *sb = tir_block_copy(a, scope_realize->u.realize.block);
  tir_buffer_t **allocs = mlc_arena_alloc(a, sizeof(*allocs) * (size_t)(sb->nalloc_buffers + 1));
  if (sb->nalloc_buffers) memcpy(allocs, sb->alloc_buffers, sizeof(*allocs) * (size_t)sb->nalloc_buffers);
  allocs[sb->nalloc_buffers] = rfbuf;
  sb->alloc_buffers = allocs;
  sb->nalloc_buffers++;
  tir_stmt_t *new_scope = tir_stmt_copy(a, scope_realize);
  new_scope->u.realize.block = sb;
  sch_replace(sch, &rf.bp, scope, new_scope);
  sch_path_t lp;
  bool found = sch_find_uid(sch, outer_uid, &lp);
  MLC_ASSERT(found);
  tir_stmt_t *pair[2] = {rf_nest, wb_nest};
  sch_replace(sch, &lp, lp.n - 1, tir_seq(a, pair, 2));

  *out = sch_new_rv(sch, SCH_RV_BLOCK, rf_block->uid, 0);
  sch_arg_t input = sch_arg_rv(loop_rv), attr = sch_arg_int(factor_axis);
  sch_record(sch, SCH_INST_RFACTOR, &input, 1, &attr, 1, out, 1, NULL);
  return MLC_OK;
}
