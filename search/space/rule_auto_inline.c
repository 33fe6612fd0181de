/*
 * rule_auto_inline.c - AutoInline (MetaSchedule's auto_inline.cc): inlines
 * a cheap block into its consumers (compute_inline) or, when allowed, into
 * its single producer (reverse_compute_inline), so the later rules see one
 * fused stage instead of a chain of elementwise ones.
 *
 * The decision is TVM's CheckInline, in its order:
 *   1. the block writes exactly one buffer;
 *   2. a block that reads nothing (a constant tensor) is inlined into its
 *      consumers whenever it can be (inline_const_tensor);
 *   3-5. unless every block of the function is spatial: no disallowed
 *      operator (exp on CPU), no branch (disallow_if_then_else), and every
 *      read maps to the write injectively and in order;
 *   6. the block is not annotated meta_schedule.inline_rule = "disable";
 *   7. into its consumers when it has some and compute_inline applies;
 *   8. else into its producer when there is exactly one, it is complete, it
 *      is not marked for auto-tensorization and reverse_compute_inline
 *      applies.
 * "Applies" is the primitive itself: it checks its preconditions (the block
 * is not an output, is complete, ...) and changes nothing when they fail,
 * so trying it is TVM's CanComputeInline without a second analysis.
 */
#include "search/space/rules.h"

#include <string.h>

static const tir_op_t cpu_disallowed_ops[] = {TIR_OP_EXP};

static const ms_auto_inline_params_t cpu_params = {
    .into_producer = false,
    .into_consumer = true,
    .inline_const_tensor = true,
    .disallow_if_then_else = true,
    .require_injective = true,
    .require_ordered = true,
    .ndisallow_ops = 1,
    .disallow_ops = cpu_disallowed_ops,
};

/* ScheduleRule::DefaultCUDA's: into producers too, no filters. */
static const ms_auto_inline_params_t cuda_params = {
    .into_producer = true,
    .into_consumer = true,
    .inline_const_tensor = true,
    .disallow_if_then_else = false,
    .require_injective = false,
    .require_ordered = false,
    .ndisallow_ops = 0,
    .disallow_ops = NULL,
};

/* Conditions 3-5: false when the block must stay. */
static bool passes_filters(const ms_auto_inline_params_t *p, const sch_path_t *path) {
  tir_stmt_t *realize = path->stmts[path->n - 1];
  const tir_block_t *b = ms_path_block(path);
  if (ms_stmt_has_op(realize, p->disallow_ops, p->ndisallow_ops)) return false;
  if (p->disallow_if_then_else && ms_stmt_has_if_then_else(realize)) return false;
  if (!p->require_injective && !p->require_ordered) return true;
  for (int i = 0; i < b->nreads; i++) {
    ms_rw_pattern_t rw = ms_analyze_rw_pattern(&b->reads[i], &b->writes[0]);
    if (p->require_injective && !rw.injective) return false;
    if (p->require_ordered && !rw.ordered) return false;
  }
  return true;
}

static bool inline_disabled(const tir_block_t *b) {
  tir_expr_t *e = tir_annot_get(b->annots, b->nannots, MS_ANN_INLINE_RULE);
  return e && e->kind == TIR_STRING_IMM && strcmp(e->u.str_value, "disable") == 0;
}

static int nconsumers(sch_t *sch, const sch_path_t *path) {
  tir_stmt_t **blocks;
  int n = 0;
  return sch_block_consumers(sch, path, &blocks, &n) == MLC_OK ? n : 0;
}

/* Tries compute_inline; true when it was done (and recorded). */
static bool try_inline(sch_t *sch, const char *name, bool reverse) {
  sch_rv_t rv;
  if (ms_block_rv(sch, name, &rv) != MLC_OK) return false;
  return (reverse ? sch_reverse_compute_inline(sch, rv) : sch_compute_inline(sch, rv)) == MLC_OK;
}

/* Condition 8's producer check: one producer, complete, not tensorized. */
static bool producer_allows(sch_t *sch, const sch_path_t *path) {
  tir_stmt_t **blocks;
  int n = 0;
  if (sch_block_producers(sch, path, &blocks, &n) != MLC_OK || n != 1) return false;
  const tir_block_t *producer = blocks[0]->u.realize.block;
  sch_path_t ppath;
  if (!sch_find_uid(sch, producer->uid, &ppath) || !sch_is_complete_block(&ppath)) return false;
  return tir_annot_get(producer->annots, producer->nannots, MS_ANN_AUTO_TENSORIZE) == NULL;
}

/* Inlines the block when the conditions allow; the schedule is unchanged
 * otherwise. */
static void auto_inline(const ms_auto_inline_params_t *p, sch_t *sch, const char *name) {
  sch_path_t path;
  if (!ms_find_block(sch, name, &path) || ms_is_root(&path)) return;
  const tir_block_t *b = ms_path_block(&path);
  if (b->nwrites != 1) return;
  if (p->inline_const_tensor && b->nreads == 0 && nconsumers(sch, &path) > 0 && try_inline(sch, name, false))
    return;
  if (!ms_func_is_spatial(sch_func(sch)) && !passes_filters(p, &path)) return;
  if (inline_disabled(b)) return;
  if (p->into_consumer && nconsumers(sch, &path) > 0 && try_inline(sch, name, false)) return;
  if (p->into_producer && producer_allows(sch, &path)) try_inline(sch, name, true);
}

static int auto_inline_apply(const ms_rule_t *self, const ms_ctx_t *ctx, sch_t *sch, const char *block,
                             sch_t ***out, int *nout, int *cap) {
  auto_inline(self->params, sch, block);
  return ms_out_push(out, nout, cap, sch);
}

const ms_rule_t ms_rule_auto_inline = {"AutoInline", auto_inline_apply, NULL, &cpu_params};
const ms_rule_t ms_rule_auto_inline_cuda = {"AutoInline", auto_inline_apply, NULL, &cuda_params};
