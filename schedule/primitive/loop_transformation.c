/*
 * loop_transformation.c - split and fuse, with TVM's semantics
 * (src/tir/schedule/primitive/loop_transformation.cc). reorder and
 * add_unit_loop live in loop_reorder.c.
 *
 * Both replace a loop nest by a new one and rewrite every use of the old loop
 * variables below it. TVM substitutes and then normalises only the block
 * bindings through the iteration-map analysis; we simplify every integer
 * index expression that mentions a replaced variable (bindings, predicates,
 * buffer indices, regions, inner loop extents) with an analyzer that knows
 * the loop ranges, so what prints is the tight form TVM prints for bindings
 * (`i_0 * 16 + i_1`, `i_j_fused % 16384 // 128`) everywhere. Expressions that
 * load from buffers or call functions are only rewritten in their index
 * operands, so arithmetic on values keeps its order.
 *
 * Every precondition is checked before anything is built: a failed call
 * leaves the program and the trace as they were.
 */
#include "schedule/state.h"

#include <string.h>

/* Factors a split takes and loops a fuse takes; more is an error, so the
 * error path needs no allocation. */
#define LOOP_MAX_PARTS 16

/* ------------------------------------------------------------------------ */
/* Preconditions shared by split and fuse                                    */
/* ------------------------------------------------------------------------ */

/* TVM's HasAnnotationOrThreadBindingError and LoopNotStartWithZeroError. The
 * loop kind (parallel, vectorized, unroll) is no obstacle: the new loops are
 * serial, as in TVM. */
static int check_plain_loop(sch_t *sch, const char *prim, tir_stmt_t *loop) {
  const char *name = sch_loop_name(loop);
  if (loop->u.loop.kind == TIR_FOR_THREAD_BINDING)
    return sch_fail_at(sch, prim, loop, "loop %s is bound to %s", name,
                       loop->u.loop.thread_tag ? loop->u.loop.thread_tag : "a thread");
  if (loop->u.loop.nannots > 0) return sch_fail_at(sch, prim, loop, "loop %s has annotations", name);
  if (!tir_is_const_int(loop->u.loop.min, 0))
    return sch_fail_at(sch, prim, loop, "loop %s does not start at 0", name);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Rewriting the uses of replaced loop variables                             */
/* ------------------------------------------------------------------------ */

/* An analyzer that knows the ranges of the loops above path->stmts[depth],
 * bound outermost first so simplified sums print outer loops first. */
static tir_analyzer_t *analyzer_above(sch_t *sch, const sch_path_t *path, int depth) {
  tir_analyzer_t *an = tir_analyzer_new(sch_arena(sch));
  for (int d = 0; an && d < depth; d++) {
    tir_stmt_t *s = path->stmts[d];
    if (s->kind == TIR_FOR) tir_analyzer_bind(an, s->u.loop.var, s->u.loop.min, s->u.loop.extent);
  }
  return an;
}

static bool find_load_or_call(tir_visitor_t *v, tir_expr_t *e) {
  bool *found = v->payload;
  if (e->kind == TIR_BUFFER_LOAD || e->kind == TIR_CALL) *found = true;
  return !*found;
}

/* Integer arithmetic only (no loads, no calls): safe to rewrite as a whole. */
static bool is_index_expr(tir_expr_t *e) {
  if (!tir_dtype_is_integer(e->dtype)) return false;
  bool found = false;
  tir_visitor_t v = {.expr = find_load_or_call, .payload = &found};
  tir_visit_expr(&v, e);
  return !found;
}

typedef struct {
  const tir_var_map_t *map;
  tir_analyzer_t *an;
} subst_ctx_t;

static tir_expr_t *subst_simplify_expr(tir_mutator_t *m, tir_expr_t *e) {
  subst_ctx_t *c = m->payload;
  if (!tir_expr_uses_any_var(e, c->map->from, c->map->n)) return e;
  if (is_index_expr(e)) return tir_simplify(c->an, tir_substitute_expr(m->arena, e, c->map));
  return tir_mutate_expr_children(m, e);
}

/* s with the variables of map replaced and the touched index expressions
 * simplified. */
static tir_stmt_t *subst_simplify(sch_t *sch, tir_stmt_t *s, const tir_var_map_t *map, tir_analyzer_t *an) {
  subst_ctx_t c = {map, an};
  tir_mutator_t m = {.arena = sch_arena(sch), .expr = subst_simplify_expr, .payload = &c};
  return tir_mutate_stmt(&m, s);
}

/* ---- T.where for a split whose factors overshoot the extent ------------ */

typedef struct {
  tir_expr_t *pred;
  tir_analyzer_t *an;
} pred_ctx_t;

/* Every block directly under the new loops (not blocks nested in blocks:
 * TVM's BlockPredicateAppender) gets `old and pred`. */
static tir_stmt_t *append_pred_stmt(tir_mutator_t *m, tir_stmt_t *s) {
  if (s->kind != TIR_BLOCK_REALIZE) return tir_mutate_stmt_children(m, s);
  pred_ctx_t *c = m->payload;
  tir_stmt_t *r = tir_stmt_copy(m->arena, s);
  if (!r) return s;
  tir_expr_t *both = tir_binary(m->arena, TIR_AND, s->u.realize.predicate, c->pred);
  r->u.realize.predicate = tir_simplify(c->an, both);
  return r;
}

static tir_stmt_t *append_predicate(sch_t *sch, tir_stmt_t *s, tir_expr_t *pred, tir_analyzer_t *an) {
  pred_ctx_t c = {pred, an};
  tir_mutator_t m = {.arena = sch_arena(sch), .stmt = append_pred_stmt, .payload = &c};
  return tir_mutate_stmt(&m, s);
}

/* ---- preserve_unit_iters=False --------------------------------------------- */

/* TVM simplifies the bindings of the blocks under the new loops with
 * simplify_trivial_iterators: a loop of extent 1 (above or below) is its min
 * there. Only bindings change; predicates and bodies keep the variable. */
typedef struct {
  tir_var_map_t units;
  tir_analyzer_t *an;
} unit_ctx_t;

static tir_stmt_t *drop_units_in_bindings(tir_mutator_t *m, tir_stmt_t *s) {
  unit_ctx_t *c = m->payload;
  int n = s->u.realize.n;
  tir_expr_t **vals = NULL;
  for (int i = 0; i < n; i++) {
    tir_expr_t *v = s->u.realize.iter_values[i];
    if (!tir_expr_uses_any_var(v, c->units.from, c->units.n)) continue;
    if (!vals) vals = mlc_arena_memdup(m->arena, s->u.realize.iter_values, sizeof(*vals) * (size_t)n);
    if (!vals) return s;
    vals[i] = tir_simplify(c->an, tir_substitute_expr(m->arena, v, &c->units));
  }
  if (!vals) return s;
  tir_stmt_t *r = tir_stmt_copy(m->arena, s);
  if (r) r->u.realize.iter_values = vals;
  return r ? r : s;
}

static tir_stmt_t *drop_units_stmt(tir_mutator_t *m, tir_stmt_t *s) {
  unit_ctx_t *c = m->payload;
  if (s->kind == TIR_FOR) {
    int saved = c->units.n;
    if (tir_is_const_int(s->u.loop.extent, 1)) tir_var_map_set(m->arena, &c->units, s->u.loop.var, s->u.loop.min);
    tir_stmt_t *r = tir_mutate_stmt_children(m, s);
    c->units.n = saved;
    return r;
  }
  /* Like TVM, look inside opaque blocks only. */
  if (s->kind == TIR_BLOCK_REALIZE && s->u.realize.n > 0) return drop_units_in_bindings(m, s);
  return tir_mutate_stmt_children(m, s);
}

/* `nest` replaces path->stmts[depth]; the unit loops above it (up to the
 * enclosing block) count too. */
static tir_stmt_t *drop_unit_iters(sch_t *sch, const sch_path_t *path, int depth, tir_stmt_t *nest,
                                   tir_analyzer_t *an) {
  unit_ctx_t c = {{0}, an};
  mlc_arena_t *a = sch_arena(sch);
  for (int d = depth - 1; d >= 0 && path->stmts[d]->kind != TIR_BLOCK_REALIZE; d--) {
    tir_stmt_t *s = path->stmts[d];
    if (s->kind == TIR_FOR && tir_is_const_int(s->u.loop.extent, 1))
      tir_var_map_set(a, &c.units, s->u.loop.var, s->u.loop.min);
  }
  tir_mutator_t m = {.arena = a, .stmt = drop_units_stmt, .payload = &c};
  return tir_mutate_stmt(&m, nest);
}

/* ------------------------------------------------------------------------ */
/* split                                                                     */
/* ------------------------------------------------------------------------ */

static const char *const SPLIT = "split";

static int split_check_loop(sch_t *sch, tir_stmt_t *loop, int64_t *extent) {
  int rc = check_plain_loop(sch, SPLIT, loop);
  if (rc != MLC_OK) return rc;
  tir_expr_t *e = loop->u.loop.extent;
  if (tir_as_int(e, extent)) return MLC_OK;
  if (e->kind == TIR_VAR)
    return sch_fail_at(sch, SPLIT, loop, "loop %s has non-constant extent %s", sch_loop_name(loop), e->u.var.name);
  return sch_fail_at(sch, SPLIT, loop, "loop %s has a non-constant extent", sch_loop_name(loop));
}

/* The value of a given factor: an integer or an expression variable. */
static int split_factor_value(sch_t *sch, const sch_arg_t *arg, int pos, int64_t *out) {
  if (arg->kind == SCH_ARG_INT) {
    *out = arg->u.i;
  } else if (arg->kind == SCH_ARG_RV && sch_rv_valid(sch, arg->u.rv) &&
             sch_rv_kind(sch, arg->u.rv) == SCH_RV_EXPR) {
    sch_rv_value(sch, arg->u.rv, out);
  } else {
    return sch_fail(sch, SPLIT, "factor at position %d is not an integer, an expression variable or None", pos);
  }
  if (*out <= 0) return sch_fail(sch, SPLIT, "factor %lld at position %d is not positive", (long long)*out, pos);
  return MLC_OK;
}

/* Resolves the factors to constants (TVM's ConcreteScheduleNode::Split): at
 * most one None, inferred as ceil(extent / product of the others); without
 * one, the product must reach the extent. */
static int split_factors(sch_t *sch, tir_stmt_t *loop, int64_t extent, const sch_arg_t *factors, int n,
                         int64_t *out) {
  if (n < 1) return sch_fail(sch, SPLIT, "no factors given");
  if (n > LOOP_MAX_PARTS) return sch_fail(sch, SPLIT, "too many factors (%d, at most %d)", n, LOOP_MAX_PARTS);
  int infer = -1;
  int64_t prod = 1;
  for (int k = 0; k < n; k++) {
    if (factors[k].kind == SCH_ARG_NONE) {
      if (infer >= 0) return sch_fail(sch, SPLIT, "more than one factor is None");
      infer = k;
      continue;
    }
    int rc = split_factor_value(sch, &factors[k], k, &out[k]);
    if (rc != MLC_OK) return rc;
    if (__builtin_mul_overflow(prod, out[k], &prod))
      return sch_fail(sch, SPLIT, "the product of the factors overflows");
  }
  if (infer >= 0) {
    out[infer] = extent / prod + (extent % prod != 0);
  } else if (prod < extent) {
    return sch_fail_at(sch, SPLIT, loop, "the product of the factors (%lld) is less than the extent of loop %s (%lld)",
                       (long long)prod, sch_loop_name(loop), (long long)extent);
  }
  return MLC_OK;
}

/* The nest replacing the loop at the end of path: loops `<name>_0` ...
 * (outer first) of extents f, the old variable replaced by
 * `v_0 * (f_1 * ... ) + ... + v_{n-1}`, and the blocks guarded when the
 * factors overshoot. */
static tir_stmt_t *split_build(sch_t *sch, const sch_path_t *path, const int64_t *f, int n,
                               bool preserve_unit_iters) {
  mlc_arena_t *a = sch_arena(sch);
  int depth = path->n - 1;
  tir_stmt_t *loop = path->stmts[depth];
  tir_var_t *old = loop->u.loop.var;
  tir_dtype_t t = old->dtype;
  tir_analyzer_t *an = analyzer_above(sch, path, depth);
  if (!an) return NULL;
  tir_var_t *vars[LOOP_MAX_PARTS];
  tir_expr_t *sub = tir_int(a, t, 0);
  for (int k = 0; k < n; k++) {
    vars[k] = tir_var(a, mlc_arena_printf(a, "%s_%d", old->u.var.name, k), t);
    tir_analyzer_bind_const(an, vars[k], 0, f[k]);
    sub = tir_binary(a, TIR_ADD, tir_binary(a, TIR_MUL, sub, tir_int(a, t, f[k])), vars[k]);
  }
  sub = tir_simplify(an, sub);
  tir_var_map_t map = {0};
  tir_var_map_set(a, &map, old, sub);
  tir_stmt_t *body = subst_simplify(sch, loop->u.loop.body, &map, an);
  /* Factors whose product is the extent need no guard (the common case;
   * proving it costs more than the rest of the split). */
  int64_t prod = 1, extent = -1;
  for (int k = 0; k < n && prod > 0; k++) prod = __builtin_mul_overflow(prod, f[k], &prod) ? -1 : prod;
  tir_expr_t *guard = tir_binary(a, TIR_LT, sub, loop->u.loop.extent);
  if (!(tir_as_int(loop->u.loop.extent, &extent) && prod == extent) && !tir_prove(an, guard))
    body = append_predicate(sch, body, guard, an);
  for (int k = n - 1; k >= 0; k--)
    body = sch_new_loop(sch, vars[k], tir_int(a, t, 0), tir_int(a, t, f[k]), TIR_FOR_SERIAL, body);
  if (!preserve_unit_iters) body = drop_unit_iters(sch, path, depth, body, an);
  return body;
}

static void split_record(sch_t *sch, sch_rv_t loop_rv, const sch_arg_t *factors, int n,
                         bool preserve_unit_iters, const sch_rv_t *outs) {
  sch_arg_t inputs[LOOP_MAX_PARTS + 1];
  inputs[0] = sch_arg_rv(loop_rv);
  memcpy(inputs + 1, factors, sizeof(*factors) * (size_t)n);
  sch_arg_t attrs[2] = {sch_arg_int(preserve_unit_iters), sch_arg_int(0)};
  sch_record(sch, SCH_INST_SPLIT, inputs, n + 1, attrs, 2, outs, n, NULL);
}

int sch_split(sch_t *sch, const sch_rv_t **out, sch_rv_t loop_rv, const sch_arg_t *factors, int nfactors,
              bool preserve_unit_iters) {
  sch_path_t path;
  int64_t extent, f[LOOP_MAX_PARTS];
  *out = NULL;
  if (sch_find_loop(sch, SPLIT, loop_rv, &path) != MLC_OK) return MLC_ESCHEDULE;
  tir_stmt_t *loop = path.stmts[path.n - 1];
  int rc = split_check_loop(sch, loop, &extent);
  if (rc == MLC_OK) rc = split_factors(sch, loop, extent, factors, nfactors, f);
  if (rc != MLC_OK) return rc;

  tir_stmt_t *nest = split_build(sch, &path, f, nfactors, preserve_unit_iters);
  sch_rv_t *rvs = mlc_arena_alloc(sch_arena(sch), sizeof(*rvs) * (size_t)nfactors);
  if (!nest || !rvs || mlc_arena_failed(sch_arena(sch))) return mlc_error_set(MLC_ENOMEM, "split: out of memory");
  sch_replace(sch, &path, path.n - 1, nest);
  tir_stmt_t *s = nest;
  for (int k = 0; k < nfactors; k++, s = s->u.loop.body) rvs[k] = sch_rv_for_loop(sch, s);
  split_record(sch, loop_rv, factors, nfactors, preserve_unit_iters, rvs);
  *out = rvs;
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* fuse                                                                      */
/* ------------------------------------------------------------------------ */

static const char *const FUSE = "fuse";

/* The nearest loop or block above path->stmts[path->n - 1], or NULL. */
static tir_stmt_t *parent_loop_or_block(const sch_path_t *path) {
  for (int d = path->n - 2; d >= 0; d--) {
    tir_stmt_t *s = path->stmts[d];
    if (s->kind == TIR_FOR || s->kind == TIR_BLOCK_REALIZE) return s;
  }
  return NULL;
}

/* loop (at the end of path) directly continues the chain of loops[0..k-1]:
 * its parent is loops[k-1] and it is that loop's whole body, and its extent
 * does not use the variables of the loops it is fused with. */
static int fuse_check_link(sch_t *sch, tir_stmt_t **loops, int k, const sch_path_t *path) {
  tir_stmt_t *outer = loops[k - 1], *loop = loops[k];
  const char *on = sch_loop_name(outer), *ln = sch_loop_name(loop);
  if (parent_loop_or_block(path) != outer)
    return sch_fail_at(sch, FUSE, outer, "loops %s and %s are not adjacent (%s is not the parent of %s)", on, ln,
                       on, ln);
  if (outer->u.loop.body != loop)
    return sch_fail_at(sch, FUSE, outer, "loops %s and %s are not adjacent (%s is not the only child of %s)", on,
                       ln, ln, on);
  for (int j = 0; j < k; j++)
    if (tir_expr_uses_var(loop->u.loop.extent, loops[j]->u.loop.var))
      return sch_fail_at(sch, FUSE, loop, "the extent of loop %s depends on loop %s", ln,
                         sch_loop_name(loops[j]));
  return MLC_OK;
}

/* Finds and checks the loops; path0 gets the outermost one's path. */
static int fuse_check(sch_t *sch, const sch_rv_t *rvs, int n, tir_stmt_t **loops, sch_path_t *path0) {
  sch_path_t path;
  if (n < 1) return sch_fail(sch, FUSE, "no loops given");
  if (n > LOOP_MAX_PARTS) return sch_fail(sch, FUSE, "too many loops (%d, at most %d)", n, LOOP_MAX_PARTS);
  for (int k = 0; k < n; k++) {
    sch_path_t *p = k == 0 ? path0 : &path;
    if (sch_find_loop(sch, FUSE, rvs[k], p) != MLC_OK) return MLC_ESCHEDULE;
    loops[k] = p->stmts[p->n - 1];
    int rc = check_plain_loop(sch, FUSE, loops[k]);
    if (rc == MLC_OK && k > 0) rc = fuse_check_link(sch, loops, k, p);
    if (rc != MLC_OK) return rc;
  }
  return MLC_OK;
}

/* `i_j_k_fused`, of the widest dtype of the loops (TVM's naming). */
static tir_var_t *fuse_new_var(sch_t *sch, tir_stmt_t **loops, int n) {
  mlc_arena_t *a = sch_arena(sch);
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  int bits = 0;
  for (int k = 0; k < n; k++) {
    mlc_sb_append(&sb, sch_loop_name(loops[k]));
    mlc_sb_append(&sb, "_");
    if (loops[k]->u.loop.var->dtype.bits > bits) bits = loops[k]->u.loop.var->dtype.bits;
  }
  mlc_sb_append(&sb, "fused");
  tir_var_t *v = tir_var(a, mlc_arena_strdup(a, mlc_sb_str(&sb)), tir_dtype(TIR_CODE_INT, bits, 1));
  mlc_sb_free(&sb);
  return v;
}

/* The value of each fused loop's variable in terms of the fused one (TVM):
 * innermost `f % e_n`, middle `f % (lower * e_k) // lower`, outermost
 * `f // lower`; a loop of extent 1 is 0. Also the fused extent. */
static tir_expr_t *fuse_values(sch_t *sch, tir_var_t *fv, tir_stmt_t **loops, int n, tir_analyzer_t *an,
                               tir_var_map_t *map) {
  mlc_arena_t *a = sch_arena(sch);
  tir_expr_t *extent = tir_int(a, fv->dtype, 1);
  for (int k = 0; k < n; k++) extent = tir_binary(a, TIR_MUL, extent, loops[k]->u.loop.extent);
  extent = tir_simplify(an, extent);
  tir_analyzer_bind(an, fv, tir_int(a, fv->dtype, 0), extent);
  tir_expr_t *lower = tir_int(a, fv->dtype, 1);
  for (int k = n - 1; k >= 0; k--) {
    tir_stmt_t *l = loops[k];
    tir_var_t *v = l->u.loop.var;
    tir_expr_t *val;
    if (tir_is_const_int(l->u.loop.extent, 1)) {
      val = tir_int(a, v->dtype, 0);
    } else {
      tir_expr_t *x = k == 0 ? fv : tir_binary(a, TIR_FLOOR_MOD, fv, tir_binary(a, TIR_MUL, lower, l->u.loop.extent));
      val = tir_simplify(an, tir_binary(a, TIR_FLOOR_DIV, x, lower));
      if (!tir_dtype_eq(val->dtype, v->dtype)) val = tir_cast(a, v->dtype, val);
    }
    tir_var_map_set(a, map, v, val);
    lower = tir_binary(a, TIR_MUL, lower, l->u.loop.extent);
  }
  return extent;
}

static tir_stmt_t *fuse_build(sch_t *sch, const sch_path_t *path0, tir_stmt_t **loops, int n,
                              bool preserve_unit_iters) {
  mlc_arena_t *a = sch_arena(sch);
  int depth = path0->n - 1;
  tir_analyzer_t *an = analyzer_above(sch, path0, depth);
  tir_var_t *fv = fuse_new_var(sch, loops, n);
  if (!an || !fv) return NULL;
  tir_var_map_t map = {0};
  tir_expr_t *extent = fuse_values(sch, fv, loops, n, an, &map);
  tir_stmt_t *body = subst_simplify(sch, loops[n - 1]->u.loop.body, &map, an);
  tir_stmt_t *nest = sch_new_loop(sch, fv, tir_int(a, fv->dtype, 0), extent, TIR_FOR_SERIAL, body);
  if (nest && !preserve_unit_iters) nest = drop_unit_iters(sch, path0, depth, nest, an);
  return nest;
}

int sch_fuse(sch_t *sch, sch_rv_t *out, const sch_rv_t *loop_rvs, int nloops, bool preserve_unit_iters) {
  sch_path_t path0;
  tir_stmt_t *loops[LOOP_MAX_PARTS];
  *out = SCH_RV_NONE;
  int rc = fuse_check(sch, loop_rvs, nloops, loops, &path0);
  if (rc != MLC_OK) return rc;

  tir_stmt_t *nest = fuse_build(sch, &path0, loops, nloops, preserve_unit_iters);
  if (!nest || mlc_arena_failed(sch_arena(sch))) return mlc_error_set(MLC_ENOMEM, "fuse: out of memory");
  sch_replace(sch, &path0, path0.n - 1, nest);
  *out = sch_rv_for_loop(sch, nest);

  sch_arg_t inputs[LOOP_MAX_PARTS];
  for (int k = 0; k < nloops; k++) inputs[k] = sch_arg_rv(loop_rvs[k]);
  sch_arg_t attr = sch_arg_int(preserve_unit_iters);
  sch_record(sch, SCH_INST_FUSE, inputs, nloops, &attr, 1, out, 1, NULL);
  return MLC_OK;
}
