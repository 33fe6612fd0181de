/*
 * compute_location.h - what compute_at.c and compute_inline.c share (private
 * to schedule/primitive/): the stage-pipeline, output-block and leaf-removal
 * checks, the inverse of an affine iteration map (TVM's InverseAffineIterMap),
 * inlining without a trace entry (compute_at's "inline" location), and small
 * arithmetic helpers. The functions are defined in compute_inline.c.
 */
#ifndef MLC_SCHEDULE_COMPUTE_LOCATION_H
#define MLC_SCHEDULE_COMPUTE_LOCATION_H

#include "schedule/analysis/analysis.h"

int sch_check_stage_pipeline(sch_t *sch, const char *prim, const sch_path_t *path, int scope_depth);
int sch_check_not_output_block(sch_t *sch, const char *prim, const sch_path_t *path, int scope_depth);
int sch_plan_leaf_removal(sch_t *sch, const char *prim, const sch_path_t *path, int scope_depth, int *rm_depth);
int sch_inverse_iter_map(tir_analyzer_t *an, mlc_arena_t *a, const tir_iter_map_t *map, tir_expr_t **outputs,
                         tir_var_t **vars, int nvars, tir_expr_t **out);
int sch_inline_unrecorded(sch_t *sch, sch_rv_t block_rv, bool reverse);

/* y in dtype t (immediates rebuilt, anything else cast). */
static inline tir_expr_t *as_dtype(mlc_arena_t *a, tir_expr_t *y, tir_dtype_t t) {
  int64_t v;
  if (tir_dtype_eq(y->dtype, t)) return y;
  if (tir_as_int(y, &v)) return tir_int(a, t, v);
  return tir_cast(a, t, y);
}

/* x k y with y converted to x's dtype. */
static inline tir_expr_t *mk(mlc_arena_t *a, tir_expr_kind_t k, tir_expr_t *x, tir_expr_t *y) {
  return tir_binary(a, k, x, as_dtype(a, y, x->dtype));
}

static inline tir_expr_t *mk_int(mlc_arena_t *a, const tir_expr_t *like, int64_t v) {
  return tir_int(a, like->dtype, v);
}

#endif /* MLC_SCHEDULE_COMPUTE_LOCATION_H */
