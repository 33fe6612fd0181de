/*
 * rewrite_reduction_block.c - the RewriteReductionBlock postprocessor
 * (MetaSchedule's rewrite_reduction_block.cc): a reduction block whose
 * T.init() still sits inside it runs the init under the reduction loops (a
 * test per iteration in the lowered code). It is split off with
 * decompose_reduction at the block's first loop that is not data parallel
 * (the outermost reduction loop), so it runs once per output before them.
 * Blocks whose loops are all data parallel (the reduction loops are inside
 * the block, e.g. a blockized tile) keep their init, as do reductions bound
 * to GPU threads (cross-thread reductions keep theirs).
 *
 * For a block annotated meta_schedule.auto_tensorize (a tile blockized for
 * a tensor intrinsic) the init block does not inherit the intrinsic: it is
 * annotated with meta_schedule.auto_tensorize_init's value, or "", which
 * tells RewriteTensorize to vectorize it instead.
 */
#include "search/postproc/postproc.h"

#include <string.h>

#define RRB "RewriteReductionBlock"

/* No reduction binding uses a loop bound to threadIdx / blockIdx. */
static bool reduction_unbound(const pp_block_t *pb) {
  const tir_block_t *b = pb->block;
  for (int l = 0; l < pb->nloops; l++) {
    const tir_stmt_t *loop = pb->loops[l];
    const char *tag = loop->u.loop.thread_tag;
    if (loop->u.loop.kind != TIR_FOR_THREAD_BINDING || !tag) continue;
    if (strncmp(tag, "threadIdx", 9) != 0 && strncmp(tag, "blockIdx", 8) != 0) continue;
    for (int i = 0; i < b->niter_vars && i < pb->realize->u.realize.n; i++)
      if (b->iter_vars[i].type == TIR_ITER_REDUCE &&
          tir_expr_uses_var(pb->realize->u.realize.iter_values[i], loop->u.loop.var))
        return false;
  }
  return true;
}

/* TVM's FindDecomposePoint: the first loop that is not data parallel, or -1. */
static int decompose_point(const pp_block_t *pb) {
  for (int i = 0; i < pb->nloops; i++)
    if (pp_loop_iter_type(pb->loops[i]) != TIR_ITER_SPATIAL) return i;
  return -1;
}

/* The first block (program order) still to decompose; *point its loop. */
static const pp_block_t *next_block(const pp_block_t *blocks, int n, int *point) {
  for (int i = 0; i < n; i++) {
    if (!blocks[i].block->init || !reduction_unbound(&blocks[i])) continue;
    *point = decompose_point(&blocks[i]);
    if (*point >= 0) return &blocks[i];
  }
  return NULL;
}

/* The init block takes the tensorization of the init, or "" (vectorize). */
static int move_tensorize_annotation(sch_t *sch, sch_rv_t block, sch_rv_t init, const tir_block_t *before) {
  const char *init_intrin = "";
  bool has_init_intrin = pp_block_ann_str(before, MS_ANN_AUTO_TENSORIZE_INIT, &init_intrin);
  tir_block_t *ib;
  if (sch_get_block_node(sch, init, &ib) != MLC_OK) return MLC_ESCHEDULE;
  bool init_has = tir_annot_get(ib->annots, ib->nannots, MS_ANN_AUTO_TENSORIZE) != NULL;
  bool init_has_init = tir_annot_get(ib->annots, ib->nannots, MS_ANN_AUTO_TENSORIZE_INIT) != NULL;
  if (init_has && sch_unannotate(sch, init, MS_ANN_AUTO_TENSORIZE) != MLC_OK) return MLC_ESCHEDULE;
  if (sch_annotate(sch, init, MS_ANN_AUTO_TENSORIZE, sch_arg_str(init_intrin)) != MLC_OK) return MLC_ESCHEDULE;
  if (!has_init_intrin) return MLC_OK;
  if (sch_unannotate(sch, block, MS_ANN_AUTO_TENSORIZE_INIT) != MLC_OK) return MLC_ESCHEDULE;
  if (init_has_init && sch_unannotate(sch, init, MS_ANN_AUTO_TENSORIZE_INIT) != MLC_OK) return MLC_ESCHEDULE;
  return MLC_OK;
}

static int decompose(sch_t *sch, const pp_block_t *pb, int point) {
  const tir_block_t *before = pb->block; /* the node stays valid (arena) */
  const char *name = before->name;
  sch_rv_t block, init;
  const sch_rv_t *loops;
  int n;
  if (sch_get_block(sch, &block, name) != MLC_OK || sch_get_loops(sch, &loops, &n, block) != MLC_OK)
    return pp_fail_sch(RRB, sch, "block %s", name);
  if (point >= n) return pp_fail(RRB, "block %s: loop %d of %d to decompose at", name, point, n);
  if (sch_decompose_reduction(sch, &init, block, loops[point]) != MLC_OK)
    return pp_fail_sch(RRB, sch, "block %s", name);
  if (tir_annot_get(before->annots, before->nannots, MS_ANN_AUTO_TENSORIZE) &&
      move_tensorize_annotation(sch, block, init, before) != MLC_OK)
    return pp_fail_sch(RRB, sch, "block %s: moving %s to its init block", name, MS_ANN_AUTO_TENSORIZE);
  return MLC_OK;
}

static int rewrite_reduction_block(const ms_postproc_t *self, const ms_ctx_t *ctx, sch_t *sch) {
  int rc = MLC_OK;
  /* One block per round, re-reading the program: each round removes one
   * init, so the loop ends. */
  while (rc == MLC_OK) {
    mlc_arena_t *a = mlc_arena_new();
    if (!a) return mlc_error_set(MLC_ENOMEM, RRB ": out of memory");
    pp_block_t *blocks;
    int n, point = -1;
    rc = pp_collect_blocks(a, sch_func(sch), &blocks, &n);
    const pp_block_t *pb = rc == MLC_OK ? next_block(blocks, n, &point) : NULL;
    if (pb) rc = decompose(sch, pb, point);
    mlc_arena_free(a);
    if (!pb) break;
  }
  return rc;
}

const ms_postproc_t ms_postproc_rewrite_reduction_block = {"RewriteReductionBlock", rewrite_reduction_block};
