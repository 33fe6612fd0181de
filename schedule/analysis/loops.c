/*
 * loops.c - loop-structure analyses: single-child loop chains (fuse, reorder,
 * blockize need them) and the region a block touches in one iteration of an
 * enclosing loop (compute_at, cache_read, blockize derive regions from it).
 */
#include "schedule/analysis/analysis.h"

/* The first FOR at or below depth d on the path, or NULL. */
static tir_stmt_t *next_loop(const sch_path_t *path, int d) {
  for (; d < path->n; d++)
    if (path->stmts[d]->kind == TIR_FOR) return path->stmts[d];
  return NULL;
}

int sch_check_single_child_chain(sch_t *sch, const char *prim, const sch_path_t *path, int from, int to) {
  MLC_ASSERT(from >= 0 && to < path->n && from <= to);
  for (int d = from; d < to; d++) {
    tir_stmt_t *parent = path->stmts[d];
    tir_stmt_t *child = path->stmts[d + 1];
    if (parent->kind != TIR_FOR) continue; /* only reached when from is not a loop */
    if (child->kind == TIR_FOR) continue;  /* the body is the loop itself */
    tir_stmt_t *below = next_loop(path, d + 1);
    if (below && child->kind == TIR_SEQ)
      return sch_fail_at(sch, prim, parent, "loop %s is not the only child of its parent loop %s",
                         sch_loop_name(below), sch_loop_name(parent));
    if (child->kind == TIR_BLOCK_REALIZE)
      return sch_fail_at(sch, prim, parent, "block %s lies between loop %s and the loops below it",
                         child->u.realize.block->name, sch_loop_name(parent));
    return sch_fail_at(sch, prim, parent, "loop %s is not directly nested in loop %s (a %s lies between)",
                       below ? sch_loop_name(below) : "?", sch_loop_name(parent), tir_stmt_kind_name(child->kind));
  }
  return MLC_OK;
}

/* Adds scale * (the coefficient of each relaxed var in e) to coef; false
 * when e is not a sum of constant multiples of relaxed vars and terms free
 * of them (then tir_relax_range does the work). */
static bool linear_coefs(tir_expr_t *e, int64_t scale, tir_var_t **vars, int n, int64_t *coef) {
  int64_t c;
  if (scale > (INT64_C(1) << 31) || scale < -(INT64_C(1) << 31)) return false;
  switch (e->kind) {
  case TIR_ADD:
    return linear_coefs(e->u.bin.a, scale, vars, n, coef) && linear_coefs(e->u.bin.b, scale, vars, n, coef);
  case TIR_SUB:
    return linear_coefs(e->u.bin.a, scale, vars, n, coef) && linear_coefs(e->u.bin.b, -scale, vars, n, coef);
  case TIR_MUL:
    if (tir_as_int(e->u.bin.b, &c)) return linear_coefs(e->u.bin.a, scale * c, vars, n, coef);
    if (tir_as_int(e->u.bin.a, &c)) return linear_coefs(e->u.bin.b, scale * c, vars, n, coef);
    break;
  case TIR_VAR:
    for (int i = 0; i < n; i++)
      if (vars[i] == e) {
        coef[i] += scale;
        return true;
      }
    return true;
  default: break;
  }
  return !tir_expr_uses_any_var(e, vars, n);
}

bool sch_linear_coefs(tir_expr_t *e, tir_var_t **vars, int n, int64_t *coef) {
  for (int i = 0; i < n; i++) coef[i] = 0;
  return linear_coefs(e, 1, vars, n, coef);
}

bool sch_relax_linear(tir_analyzer_t *an, mlc_arena_t *a, const tir_range_t *r, tir_var_t **vars,
                      const tir_range_t *doms, int n, tir_range_t *out) {
  int64_t coef[SCH_MAX_DEPTH] = {0}, ext, span = 0;
  if (n > SCH_MAX_DEPTH || !tir_as_int(r->extent, &ext) || !tir_dtype_is_integer(r->min->dtype) ||
      !linear_coefs(r->min, 1, vars, n, coef))
    return false;
  tir_var_map_t low = {0, 0, NULL, NULL};
  for (int i = 0; i < n; i++) {
    int64_t m, e;
    if (coef[i] == 0) continue;
    if (!tir_as_int(doms[i].min, &m) || !tir_as_int(doms[i].extent, &e) || e < 1) return false;
    tir_var_map_set(a, &low, vars[i], tir_int(a, vars[i]->dtype, coef[i] > 0 ? m : m + e - 1));
    span += (coef[i] > 0 ? coef[i] : -coef[i]) * (e - 1);
  }
  out->min = low.n ? tir_simplify(an, tir_substitute_expr(a, r->min, &low)) : tir_simplify(an, r->min);
  out->extent = tir_int(a, r->extent->dtype, ext + span);
  return true;
}

bool sch_relax_range_with_predicate(tir_analyzer_t *an, mlc_arena_t *a, const tir_range_t *r, tir_expr_t *pred,
                                    tir_var_t **vars, const tir_range_t *doms, int n, tir_range_t *out) {
  int64_t ext;
  if (!tir_as_int(r->extent, &ext) || !tir_expr_uses_any_var(pred, vars, n) ||
      !tir_expr_uses_any_var(r->min, vars, n))
    return false;
  tir_expr_t *idx = r->min;
  tir_iter_map_t map;
  if (tir_detect_iter_map(&map, an, &idx, 1, vars, doms, n, pred, TIR_ITER_SURJECTIVE) != MLC_OK) {
    mlc_error_clear();
    return false;
  }
  const tir_iter_sum_t *sum = &map.sums[0];
  int64_t span = 0;
  for (int i = 0; i < sum->nargs; i++) {
    int64_t scale, extent;
    if (!tir_as_int(sum->args[i].scale, &scale) || !tir_as_int(sum->args[i].extent, &extent) || scale < 0 ||
        extent < 1)
      return false;
    span += scale * (extent - 1);
  }
  out->min = tir_simplify(an, sum->base);
  out->extent = tir_int(a, r->extent->dtype, span + ext);
  return true;
}

int sch_relax_region(sch_t *sch, const sch_path_t *block_path, int above, const tir_region_t *region,
                     tir_range_t *out) {
  mlc_arena_t *a = sch_arena(sch);
  tir_stmt_t *realize = block_path->stmts[block_path->n - 1];
  const tir_block_t *b = realize->u.realize.block;
  tir_expr_t *pred = realize->u.realize.predicate;
  tir_analyzer_t *an = tir_analyzer_new(a);
  if (!an) return mlc_error_set(MLC_ENOMEM, "sch_relax_region: out of memory");
  /* Every loop on the path is known to the analyzer (outer ones stay
   * symbolic but bounded); those below `above` are relaxed. */
  tir_var_t *vars[SCH_MAX_DEPTH];
  tir_range_t doms[SCH_MAX_DEPTH];
  int nrelax = 0;
  for (int d = 0; d < block_path->n - 1; d++) {
    tir_stmt_t *s = block_path->stmts[d];
    if (s->kind != TIR_FOR) continue;
    tir_analyzer_bind(an, s->u.loop.var, s->u.loop.min, s->u.loop.extent);
    if (d <= above) continue;
    vars[nrelax] = s->u.loop.var;
    doms[nrelax].min = s->u.loop.min;
    doms[nrelax].extent = s->u.loop.extent;
    nrelax++;
  }
  tir_var_map_t bind = {0};
  for (int i = 0; i < b->niter_vars && i < realize->u.realize.n; i++)
    tir_var_map_set(a, &bind, b->iter_vars[i].var, realize->u.realize.iter_values[i]);
  for (int d = 0; d < region->ndim; d++) {
    tir_range_t r;
    r.min = tir_substitute_expr(a, region->ranges[d].min, &bind);
    r.extent = tir_substitute_expr(a, region->ranges[d].extent, &bind);
    if (pred && !tir_is_const_int(pred, 1) &&
        sch_relax_range_with_predicate(an, a, &r, pred, vars, doms, nrelax, &out[d]))
      continue;
    if (sch_relax_linear(an, a, &r, vars, doms, nrelax, &out[d])) continue;
    int rc = tir_relax_range(&out[d], an, &r, vars, doms, nrelax);
    if (rc != MLC_OK) return rc;
  }
  return MLC_OK;
}

typedef struct {
  const tir_var_t *var;
  int n_spatial, n_reduce, n_other;
} iter_count_t;

static bool count_bindings(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  iter_count_t *c = v->payload;
  for (int i = 0; i < b->niter_vars && i < realize->u.realize.n; i++) {
    if (!tir_expr_uses_var(realize->u.realize.iter_values[i], c->var)) continue;
    if (b->iter_vars[i].type == TIR_ITER_SPATIAL) c->n_spatial++;
    else if (b->iter_vars[i].type == TIR_ITER_REDUCE) c->n_reduce++;
    else c->n_other++;
  }
  return false; /* blocks nested deeper belong to that block's scope */
}

sch_loop_type_t sch_loop_binding_type(tir_stmt_t *loop) {
  iter_count_t c = {loop->u.loop.var, 0, 0, 0};
  tir_visitor_t v = {0};
  v.block = count_bindings;
  v.payload = &c;
  tir_visit_stmt(&v, loop->u.loop.body);
  if (c.n_other || (c.n_spatial && c.n_reduce)) return SCH_LOOP_OTHER;
  return c.n_reduce ? SCH_LOOP_REDUCE : SCH_LOOP_DATA_PAR;
}
