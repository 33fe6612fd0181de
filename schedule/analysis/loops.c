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

/* TVM's EstimateRegionUpperBound for one dimension under the block's
 * predicate: when the predicate bounds a fused iterator (a split by a factor
 * that does not divide the extent, `i_0 * 3 + i_1 < 16`), the iteration map
 * of the index knows that iterator's true extent, where interval relaxation
 * sees the product of the loops (18). false when no map applies (the caller
 * relaxes plainly, which is exact without a predicate). */
static bool relax_under_predicate(tir_analyzer_t *an, mlc_arena_t *a, const tir_range_t *r, tir_expr_t *pred,
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
    if (pred && !tir_is_const_int(pred, 1) && relax_under_predicate(an, a, &r, pred, vars, doms, nrelax, &out[d]))
      continue;
    int rc = tir_relax_range(&out[d], an, &r, vars, doms, nrelax);
    if (rc != MLC_OK) return rc;
  }
  return MLC_OK;
}
