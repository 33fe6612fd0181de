/*
 * blockize_tensorize.c - blockize (turn the loop nest under a loop into a
 * block of its own) and tensorize (replace such a block by a tensor
 * intrinsic's implementation), with TVM's semantics
 * (src/tir/schedule/primitive/blockize_tensorize.cc).
 *
 * blockize divides each binding of the block under the loop into an outer
 * part (loops above the loop) and an inner part (the loop and those below):
 * binding = outer * E + inner with inner in [0, E). TVM does this with
 * SubspaceDivide on iteration maps; here the inner part is the binding with
 * the outer loops at their minimum, the outer part the simplified remainder,
 * which must be free of inner loops and divisible by E (the inner part's
 * extent). That covers what tiling produces (split, reorder, fuse within one
 * side). The outer block `<name>_o` gets an iter var `<v>_o` per iter var
 * (extent of the outer part), the inner block keeps its name and uid with
 * iter vars `<v>_i` for inner parts of extent > 1; the outer block's regions
 * are the inner block's relaxed over the inner iter vars. A reduction's init
 * moves to the outer block as a block `<name>_init` under copies of the inner
 * loops its bindings use.
 *
 * tensorize blockizes a loop first (or takes a block), matches the block
 * against the intrinsic's description (schedule/intrin/match.c) and puts the
 * implementation in its body, with T.match_buffer binding each impl buffer to
 * its tile.
 */
#include "schedule/analysis/analysis.h"
#include "schedule/intrin/intrin.h"

#include <string.h>

#define BZ "blockize"
#define TZ "tensorize"

/* ------------------------------------------------------------------------ */
/* Target: the loop, the block under it, the loops on either side            */
/* ------------------------------------------------------------------------ */

typedef struct {
  sch_path_t bp;                         /* to the block */
  int loop_depth;                        /* the loop's index in bp */
  tir_stmt_t *loop, *realize;
  tir_block_t *block;
  tir_stmt_t *inner[SCH_MAX_DEPTH];      /* the loop and those below it, outermost first */
  int ninner;
  tir_stmt_t *outer[SCH_MAX_DEPTH];      /* loops between the scope and the loop */
  int nouter;
} bz_target_t;

static int bz_locate(sch_t *sch, const char *prim, const sch_path_t *lp, bz_target_t *t) {
  t->loop = lp->stmts[lp->n - 1];
  tir_stmt_t *kids[2];
  if (sch_child_blocks(t->loop, kids, 2) != 1)
    return sch_fail_at(sch, prim, t->loop, "loop %s does not have exactly one block under it", sch_loop_name(t->loop));
  bool found = sch_find_uid(sch, kids[0]->u.realize.block->uid, &t->bp);
  MLC_ASSERT(found);
  t->realize = kids[0];
  t->block = kids[0]->u.realize.block;
  t->loop_depth = -1;
  for (int d = 0; d < t->bp.n; d++)
    if (t->bp.stmts[d] == t->loop) t->loop_depth = d;
  MLC_ASSERT(t->loop_depth >= 0);
  t->ninner = 0;
  for (int d = t->loop_depth; d < t->bp.n - 1; d++) {
    tir_stmt_t *s = t->bp.stmts[d];
    if (s->kind != TIR_FOR || s->u.loop.body != t->bp.stmts[d + 1])
      return sch_fail_at(sch, prim, t->loop, "the statements under loop %s are not a loop nest over block %s alone",
                         sch_loop_name(t->loop), t->block->name);
    t->inner[t->ninner++] = s;
  }
  int scope = sch_path_scope_depth(&t->bp, t->bp.n - 1);
  t->nouter = sch_path_loops(&t->bp, scope, t->loop_depth, t->outer, SCH_MAX_DEPTH);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Subspace division                                                         */
/* ------------------------------------------------------------------------ */

typedef struct {
  mlc_arena_t *a;
  tir_analyzer_t *an;      /* every loop bound */
  tir_analyzer_t *an_keep; /* loops of extent 1 left unbound (preserve_unit_iters) */
  tir_var_map_t unit_all;  /* unit loops -> their min */
  tir_var_map_t unit_inner;
  tir_var_map_t outer_min; /* outer loops -> their min */
  bool preserve;
} divider_t;

typedef struct {
  tir_expr_t *outer, *inner;  /* inner NULL when the inner part is trivial (extent 1) */
  int64_t outer_ext, inner_ext;
} part_t;

static bool is_unit(const tir_stmt_t *l) { return tir_is_const_int(l->u.loop.extent, 1); }

static bool uses_loops(tir_expr_t *e, tir_stmt_t *const *loops, int n) {
  for (int i = 0; i < n; i++)
    if (tir_expr_uses_var(e, loops[i]->u.loop.var)) return true;
  return false;
}

static void divider_init(divider_t *dv, mlc_arena_t *a, const bz_target_t *t, bool preserve) {
  dv->a = a;
  dv->an = tir_analyzer_new(a);
  dv->an_keep = tir_analyzer_new(a);
  dv->preserve = preserve;
  for (int side = 0; side < 2; side++) {
    tir_stmt_t *const *loops = side == 0 ? t->outer : t->inner;
    int n = side == 0 ? t->nouter : t->ninner;
    for (int i = 0; i < n; i++) {
      const tir_stmt_t *l = loops[i];
      tir_analyzer_bind(dv->an, l->u.loop.var, l->u.loop.min, l->u.loop.extent);
      if (!is_unit(l)) tir_analyzer_bind(dv->an_keep, l->u.loop.var, l->u.loop.min, l->u.loop.extent);
      if (is_unit(l)) tir_var_map_set(a, &dv->unit_all, l->u.loop.var, l->u.loop.min);
      if (is_unit(l) && side == 1) tir_var_map_set(a, &dv->unit_inner, l->u.loop.var, l->u.loop.min);
      if (side == 0) tir_var_map_set(a, &dv->outer_min, l->u.loop.var, l->u.loop.min);
    }
  }
}

/* outer = o // e, checking that e divides o exactly. */
static tir_expr_t *divide_exact(tir_analyzer_t *an, mlc_arena_t *a, tir_expr_t *o, int64_t e) {
  if (e == 1) return o;
  tir_expr_t *ee = tir_int(a, o->dtype, e);
  if (!tir_is_const_int(tir_simplify(an, tir_binary(a, TIR_FLOOR_MOD, o, ee)), 0)) return NULL;
  return tir_simplify(an, tir_binary(a, TIR_FLOOR_DIV, o, ee));
}

/* binding = part.outer * inner_ext + part.inner; false when it cannot be
 * divided that way. */
static bool divide_binding(divider_t *dv, const bz_target_t *t, tir_expr_t *b, part_t *p) {
  mlc_arena_t *a = dv->a;
  tir_expr_t *full = tir_substitute_expr(a, b, &dv->unit_all);
  tir_expr_t *in = tir_simplify(dv->an, tir_substitute_expr(a, full, &dv->outer_min));
  tir_expr_t *out;
  p->inner = NULL;
  p->inner_ext = 1;
  if (!uses_loops(in, t->inner, t->ninner)) {
    out = tir_simplify(dv->an, full);
  } else {
    out = tir_simplify(dv->an, tir_binary(a, TIR_SUB, full, in));
    tir_bound_t ib = tir_const_bound(dv->an, in);
    if (uses_loops(out, t->inner, t->ninner) || ib.min < 0 || ib.max == INT64_MAX) return false;
    p->inner = in;
    p->inner_ext = ib.max + 1;
  }
  tir_expr_t *q = divide_exact(dv->an, a, out, p->inner_ext);
  if (!q || uses_loops(q, t->inner, t->ninner)) return false;
  tir_bound_t qb = tir_const_bound(dv->an, q);
  if (qb.min < 0 || qb.max == INT64_MAX) return false;
  p->outer_ext = qb.max + 1;
  p->outer = q;
  if (dv->preserve) { /* the same outer part, with unit loops kept as variables */
    tir_expr_t *keep = tir_substitute_expr(a, b, &dv->unit_inner);
    keep = p->inner ? tir_binary(a, TIR_SUB, keep, p->inner) : keep;
    tir_expr_t *qk = divide_exact(dv->an_keep, a, tir_simplify(dv->an_keep, keep), p->inner_ext);
    if (qk && !uses_loops(qk, t->inner, t->ninner)) p->outer = qk;
  }
  return true;
}

typedef struct {
  tir_iter_var_t *outer_ivs, *inner_ivs;
  tir_expr_t **outer_vals, **inner_vals;
  int ninner_ivs;
  tir_var_map_t sub;          /* old iter var -> expression of the new ones */
  tir_expr_t *outer_pred, *inner_pred;
} division_t;

static tir_iter_var_t make_iv(mlc_arena_t *a, const tir_iter_var_t *old, const char *suffix, int64_t ext) {
  tir_iter_var_t iv = *old;
  tir_dtype_t t = old->var->dtype;
  iv.var = tir_var(a, mlc_arena_printf(a, "%s%s", old->var->u.var.name, suffix), t);
  iv.dom.min = tir_int(a, t, 0);
  iv.dom.extent = tir_int(a, t, ext);
  return iv;
}

/* Divides the predicate: all of it goes to the side whose loops it uses. */
static bool divide_predicate(divider_t *dv, const bz_target_t *t, division_t *d) {
  tir_expr_t *pred = t->realize->u.realize.predicate;
  d->outer_pred = d->inner_pred = tir_bool(dv->a, true);
  if (tir_is_const_int(pred, 1)) return true;
  tir_expr_t *full = tir_substitute_expr(dv->a, pred, &dv->unit_all);
  if (!uses_loops(full, t->inner, t->ninner)) d->outer_pred = full;
  else if (!uses_loops(full, t->outer, t->nouter)) d->inner_pred = full;
  else return false;
  return true;
}

static int bz_divide(sch_t *sch, const char *prim, const bz_target_t *t, bool preserve, division_t *d) {
  mlc_arena_t *a = sch_arena(sch);
  const tir_block_t *b = t->block;
  divider_t dv = {0};
  divider_init(&dv, a, t, preserve);
  int n = b->niter_vars;
  memset(d, 0, sizeof(*d));
  d->outer_ivs = mlc_arena_alloc(a, sizeof(tir_iter_var_t) * (size_t)(n + 1));
  d->inner_ivs = mlc_arena_alloc(a, sizeof(tir_iter_var_t) * (size_t)(n + 1));
  d->outer_vals = mlc_arena_alloc(a, sizeof(tir_expr_t *) * (size_t)(n + 1));
  d->inner_vals = mlc_arena_alloc(a, sizeof(tir_expr_t *) * (size_t)(n + 1));
  for (int i = 0; i < n; i++) {
    part_t p;
    if (!divide_binding(&dv, t, t->realize->u.realize.iter_values[i], &p))
      return sch_fail_at(sch, prim, t->realize, "the binding of %s in block %s cannot be divided at loop %s",
                         b->iter_vars[i].var->u.var.name, b->name, sch_loop_name(t->loop));
    const tir_iter_var_t *old = &b->iter_vars[i];
    d->outer_ivs[i] = make_iv(a, old, "_o", p.outer_ext);
    d->outer_vals[i] = p.outer;
    tir_var_t *vo = d->outer_ivs[i].var;
    tir_expr_t *sub;
    if (p.inner) {
      tir_iter_var_t *vi = &d->inner_ivs[d->ninner_ivs];
      *vi = make_iv(a, old, "_i", p.inner_ext);
      d->inner_vals[d->ninner_ivs++] = p.inner;
      sub = p.outer_ext == 1
                ? vi->var
                : tir_binary(a, TIR_ADD, tir_binary(a, TIR_MUL, vo, tir_int(a, vo->dtype, p.inner_ext)), vi->var);
    } else {
      sub = p.outer_ext == 1 && !preserve ? tir_int(a, vo->dtype, 0) : vo;
    }
    tir_var_map_set(a, &d->sub, old->var, sub);
  }
  if (!divide_predicate(&dv, t, d))
    return sch_fail_at(sch, prim, t->realize, "the predicate of block %s uses loops both above and below loop %s",
                       b->name, sch_loop_name(t->loop));
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Building the blocks                                                       */
/* ------------------------------------------------------------------------ */

/* Substitution that simplifies what it changes: index arithmetic only
 * (integer expressions over variables and constants), so values keep the
 * shape the tensor intrinsics' descriptions expect. */
typedef struct {
  const tir_var_map_t *map;
  tir_analyzer_t *an;
} subst_t;

static bool reads_memory(tir_visitor_t *v, tir_expr_t *e) {
  if (e->kind == TIR_BUFFER_LOAD || e->kind == TIR_CALL) *(bool *)v->payload = true;
  return !*(bool *)v->payload;
}

static bool is_index_expr(tir_expr_t *e) {
  if (!tir_dtype_is_integer(e->dtype) || e->dtype.lanes != 1) return false;
  bool found = false;
  tir_visitor_t v = {.expr = reads_memory, .payload = &found};
  tir_visit_expr(&v, e);
  return !found;
}

static tir_expr_t *subst_expr_hook(tir_mutator_t *m, tir_expr_t *e) {
  subst_t *s = m->payload;
  if (e->kind == TIR_VAR) {
    tir_expr_t *to = tir_var_map_get(s->map, e);
    return to ? to : e;
  }
  tir_expr_t *out = tir_mutate_expr_children(m, e);
  if (out != e && is_index_expr(out)) out = tir_simplify(s->an, out);
  return out;
}

static tir_block_t *subst_block(mlc_arena_t *a, tir_block_t *b, const tir_var_map_t *map, tir_analyzer_t *an) {
  subst_t s = {map, an};
  tir_mutator_t m = {.arena = a, .expr = subst_expr_hook, .payload = &s};
  tir_block_t *out = tir_mutate_block(&m, b);
  return out == b ? tir_block_copy(a, b) : out;
}

/* The block's regions relaxed over the inner iter vars (the whole dimension
 * when a side cannot be bounded, as TVM's CoverRange). */
static tir_region_t *relax_regions(mlc_arena_t *a, tir_analyzer_t *an, const tir_region_t *rs, int n,
                                   const division_t *d) {
  tir_var_t *vars[SCH_MAX_DEPTH];
  tir_range_t doms[SCH_MAX_DEPTH];
  for (int i = 0; i < d->ninner_ivs; i++) {
    vars[i] = d->inner_ivs[i].var;
    doms[i] = d->inner_ivs[i].dom;
  }
  tir_region_t *out = mlc_arena_alloc(a, sizeof(*out) * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) {
    out[i] = rs[i];
    out[i].ranges = mlc_arena_alloc(a, sizeof(tir_range_t) * (size_t)(rs[i].ndim ? rs[i].ndim : 1));
    for (int k = 0; k < rs[i].ndim; k++) {
      tir_range_t r;
      if (tir_relax_range(&r, an, &rs[i].ranges[k], vars, doms, d->ninner_ivs) != MLC_OK) {
        tir_expr_t *ext = rs[i].buffer->shape[k];
        r.min = tir_int(a, ext->dtype, 0);
        r.extent = ext;
      }
      out[i].ranges[k].min = tir_simplify(an, r.min);
      out[i].ranges[k].extent = tir_simplify(an, r.extent);
    }
  }
  return out;
}

/* TVM's GenerateOuterInit: the init as a block `<name>_init` over the inner
 * spatial iter vars it uses, under copies of the inner loops they need. */
static tir_stmt_t *make_outer_init(sch_t *sch, const bz_target_t *t, const division_t *d, tir_block_t *inner) {
  mlc_arena_t *a = sch_arena(sch);
  tir_var_map_t map = {0};
  int n = 0;
  tir_iter_var_t *ivs = mlc_arena_alloc(a, sizeof(*ivs) * (size_t)(d->ninner_ivs + 1));
  tir_expr_t **vals = mlc_arena_alloc(a, sizeof(*vals) * (size_t)(d->ninner_ivs + 1));
  for (int i = 0; i < d->ninner_ivs; i++) {
    const tir_iter_var_t *iv = &d->inner_ivs[i];
    if (iv->type != TIR_ITER_SPATIAL) continue;
    tir_var_map_t probe = {0};
    tir_var_map_set(a, &probe, iv->var, tir_int(a, iv->var->dtype, 0));
    if (tir_substitute_stmt(a, inner->init, &probe) == inner->init) continue; /* unused */
    ivs[n] = *iv;
    ivs[n].var = tir_var(a, mlc_arena_printf(a, "%s_init", iv->var->u.var.name), iv->var->dtype);
    vals[n] = d->inner_vals[i];
    tir_var_map_set(a, &map, iv->var, ivs[n].var);
    n++;
  }
  tir_block_t *ib = sch_new_block(sch, sch_unique_block_name(sch, mlc_arena_printf(a, "%s_init", t->block->name)));
  ib->niter_vars = n;
  ib->iter_vars = ivs;
  ib->body = tir_substitute_stmt(a, inner->init, &map);
  ib->nwrites = inner->nwrites;
  ib->writes = mlc_arena_alloc(a, sizeof(tir_region_t) * (size_t)(inner->nwrites + 1));
  for (int i = 0; i < inner->nwrites; i++) {
    tir_region_t *r = &ib->writes[i];
    *r = inner->writes[i];
    r->ranges = mlc_arena_alloc(a, sizeof(tir_range_t) * (size_t)(r->ndim + 1));
    for (int k = 0; k < r->ndim; k++) {
      r->ranges[k].min = tir_substitute_expr(a, inner->writes[i].ranges[k].min, &map);
      r->ranges[k].extent = tir_substitute_expr(a, inner->writes[i].ranges[k].extent, &map);
    }
  }
  /* Loops from the innermost out, copied when an init binding uses them. */
  tir_var_map_t lmap = {0};
  tir_stmt_t *used[SCH_MAX_DEPTH];
  int nused = 0;
  for (int k = t->ninner - 1; k >= 0; k--) {
    bool use = false;
    for (int i = 0; i < n && !use; i++) use = tir_expr_uses_var(vals[i], t->inner[k]->u.loop.var);
    if (!use) continue;
    const tir_var_t *lv = t->inner[k]->u.loop.var;
    tir_var_map_set(a, &lmap, t->inner[k]->u.loop.var, tir_var(a, lv->u.var.name, lv->dtype));
    used[nused++] = t->inner[k];
  }
  for (int i = 0; i < n; i++) vals[i] = tir_substitute_expr(a, vals[i], &lmap);
  tir_stmt_t *body = tir_block_realize(a, vals, n, tir_substitute_expr(a, d->inner_pred, &lmap), ib);
  for (int k = 0; k < nused; k++) {
    const tir_stmt_t *l = used[k];
    body = sch_new_loop(sch, tir_var_map_get(&lmap, l->u.loop.var), l->u.loop.min, l->u.loop.extent,
                        l->u.loop.kind, body);
    body->u.loop.thread_tag = l->u.loop.thread_tag;
    body->u.loop.nannots = l->u.loop.nannots;
    body->u.loop.annots = l->u.loop.annots;
  }
  return body;
}

/* The outer block realize that replaces the loop (the program is not
 * changed yet). */
static tir_stmt_t *bz_build(sch_t *sch, const bz_target_t *t, const division_t *d) {
  mlc_arena_t *a = sch_arena(sch);
  const tir_block_t *b = t->block;
  tir_analyzer_t *an = tir_analyzer_new(a);
  for (int i = 0; i < b->niter_vars; i++)
    tir_analyzer_bind(an, d->outer_ivs[i].var, d->outer_ivs[i].dom.min, d->outer_ivs[i].dom.extent);
  for (int i = 0; i < d->ninner_ivs; i++)
    tir_analyzer_bind(an, d->inner_ivs[i].var, d->inner_ivs[i].dom.min, d->inner_ivs[i].dom.extent);
  tir_block_t *sb = subst_block(a, t->block, &d->sub, an);

  /* Inner block: same name and uid, inner iter vars, no init. */
  tir_block_t *inner = tir_block_copy(a, sb);
  inner->niter_vars = d->ninner_ivs;
  inner->iter_vars = d->inner_ivs;
  inner->init = NULL;
  bool outer_reduce = false;
  for (int i = 0; i < b->niter_vars; i++) outer_reduce |= d->outer_ivs[i].type == TIR_ITER_REDUCE;
  if (sb->init && outer_reduce) {
    tir_region_t *reads = mlc_arena_alloc(a, sizeof(*reads) * (size_t)(sb->nreads + sb->nwrites + 1));
    memcpy(reads, sb->writes, sizeof(*reads) * (size_t)sb->nwrites);
    if (sb->nreads) memcpy(reads + sb->nwrites, sb->reads, sizeof(*reads) * (size_t)sb->nreads);
    inner->reads = reads;
    inner->nreads = sb->nreads + sb->nwrites;
  }
  tir_stmt_t *body = tir_block_realize(a, d->inner_vals, d->ninner_ivs, d->inner_pred, inner);
  for (int k = t->ninner - 1; k >= 0; k--) {
    tir_stmt_t *l = tir_stmt_copy(a, t->inner[k]); /* keeps the uid */
    l->u.loop.body = body;
    body = l;
  }

  tir_block_t *ob = sch_new_block(sch, sch_unique_block_name(sch, mlc_arena_printf(a, "%s_o", b->name)));
  ob->niter_vars = b->niter_vars;
  ob->iter_vars = d->outer_ivs;
  ob->nreads = sb->nreads;
  ob->reads = relax_regions(a, an, sb->reads, sb->nreads, d);
  ob->nwrites = sb->nwrites;
  ob->writes = relax_regions(a, an, sb->writes, sb->nwrites, d);
  ob->body = body;
  if (sb->init) {
    tir_block_t with_init = *inner;
    with_init.init = sb->init;
    ob->init = make_outer_init(sch, t, d, &with_init);
  }
  return tir_block_realize(a, d->outer_vals, b->niter_vars, d->outer_pred, ob);
}

/* Locates, divides and builds: the outer block realize for `loop`. */
static int bz_prepare(sch_t *sch, const char *prim, const sch_path_t *lp, bool preserve, bz_target_t *t,
                      tir_stmt_t **outer) {
  int rc = bz_locate(sch, prim, lp, t);
  if (rc != MLC_OK) return rc;
  division_t d;
  rc = bz_divide(sch, prim, t, preserve, &d);
  if (rc != MLC_OK) return rc;
  *outer = bz_build(sch, t, &d);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Primitives                                                                */
/* ------------------------------------------------------------------------ */

int sch_blockize(sch_t *sch, sch_rv_t *out, sch_rv_t loop_rv, bool preserve_unit_iters) {
  sch_path_t lp;
  bz_target_t t;
  tir_stmt_t *outer;
  *out = SCH_RV_NONE;
  int rc = sch_find_loop(sch, BZ, loop_rv, &lp);
  if (rc == MLC_OK) rc = bz_prepare(sch, BZ, &lp, preserve_unit_iters, &t, &outer);
  if (rc != MLC_OK) return rc;
  sch_replace(sch, &t.bp, t.loop_depth, outer);
  *out = sch_new_rv(sch, SCH_RV_BLOCK, outer->u.realize.block->uid, 0);
  sch_arg_t input = sch_arg_rv(loop_rv), attr = sch_arg_int(preserve_unit_iters);
  sch_record(sch, SCH_INST_BLOCKIZE, &input, 1, &attr, 1, out, 1, NULL);
  return MLC_OK;
}

int sch_tensorize(sch_t *sch, sch_rv_t block_or_loop, const char *intrin_name, bool preserve_unit_iters) {
  const sch_intrin_t *intrin = intrin_name ? sch_intrin_get(intrin_name) : NULL;
  if (!intrin) return sch_fail(sch, TZ, "no tensor intrinsic is registered as \"%s\"", intrin_name ? intrin_name : "");
  sch_path_t p;
  bool is_loop;
  int rc = sch_find_block_or_loop(sch, TZ, block_or_loop, &p, &is_loop);
  if (rc != MLC_OK) return rc;
  const sch_path_t *path = &p;
  int depth = p.n - 1;
  tir_stmt_t *target = p.stmts[depth], *block = target;
  bz_target_t t;
  if (is_loop) {
    rc = bz_prepare(sch, TZ, &p, preserve_unit_iters, &t, &block);
    if (rc != MLC_OK) return rc;
    path = &t.bp;
    depth = t.loop_depth;
  }
  sch_intrin_match_t m;
  char why[160];
  if (!sch_intrin_match(&m, sch_arena(sch), block, intrin, why, sizeof why))
    return sch_fail_at(sch, TZ, target, "block %s does not match intrinsic %s: %s", block->u.realize.block->name,
                       intrin->name, why);
  sch_replace(sch, path, depth, sch_intrin_instantiate(sch, block, intrin, &m));
  sch_arg_t input = sch_arg_rv(block_or_loop);
  sch_arg_t attrs[2] = {sch_arg_str(intrin->name), sch_arg_int(preserve_unit_iters)};
  sch_record(sch, SCH_INST_TENSORIZE, &input, 1, attrs, 2, NULL, 0, NULL);
  return MLC_OK;
}
