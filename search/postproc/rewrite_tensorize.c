/*
 * rewrite_tensorize.c - the RewriteTensorize postprocessor (MetaSchedule's
 * rewrite_tensorize.cc, with vectorize_init_loop as on CPU).
 *
 * A rule that blockized a tile for a tensor intrinsic annotated the outer
 * block meta_schedule.auto_tensorize = "intrinsic name"; once the other
 * postprocessors have settled the loops, the reduction's init and the
 * layouts, the annotation is removed and the block tensorized. An init
 * block annotated with "" (RewriteReductionBlock leaves that) gets its one
 * inner loop vectorized instead, when it has exactly one child block under
 * exactly one loop. Blocks are handled in post-order (inner first), as TVM
 * collects them.
 *
 * Departure from TVM, which logs a failed tensorize and keeps the
 * untensorized candidate: a block that does not tensorize rejects the
 * candidate (MLC_ESCHEDULE with the primitive's reason), since the design
 * said it must, and the search should not measure what it did not mean.
 */
#include "search/postproc/postproc.h"

#define RT "RewriteTensorize"

/* The last annotated block in post-order among the collected ones: a
 * block's nested blocks come after it in pre-order, so walking backwards
 * meets inner ones first. */
static const pp_block_t *next_block(const pp_block_t *blocks, int n, const char **intrin) {
  for (int i = n - 1; i >= 0; i--)
    if (pp_block_ann_str(blocks[i].block, MS_ANN_AUTO_TENSORIZE, intrin)) return &blocks[i];
  return NULL;
}

static int vectorize_init(sch_t *sch, sch_rv_t block, const char *name) {
  const sch_rv_t *kids, *loops;
  int nkids, nloops;
  if (sch_get_child_blocks(sch, &kids, &nkids, block) != MLC_OK) return pp_fail_sch(RT, sch, "block %s", name);
  if (nkids != 1) return MLC_OK;
  if (sch_get_loops(sch, &loops, &nloops, kids[0]) != MLC_OK) return pp_fail_sch(RT, sch, "block %s", name);
  if (nloops != 1) return MLC_OK;
  tir_stmt_t *loop;
  if (sch_get_loop_node(sch, loops[0], &loop) != MLC_OK) return pp_fail_sch(RT, sch, "block %s", name);
  if (loop->u.loop.kind == TIR_FOR_VECTORIZED) return MLC_OK;
  if (sch_vectorize(sch, loops[0]) != MLC_OK) return pp_fail_sch(RT, sch, "block %s: vectorizing its init", name);
  return MLC_OK;
}

static int rewrite_one(sch_t *sch, const pp_block_t *pb, const char *intrin) {
  const char *name = pb->block->name; /* program arena: stays valid */
  sch_rv_t block;
  if (sch_get_block(sch, &block, name) != MLC_OK || sch_unannotate(sch, block, MS_ANN_AUTO_TENSORIZE) != MLC_OK)
    return pp_fail_sch(RT, sch, "block %s", name);
  if (!intrin[0]) return vectorize_init(sch, block, name);
  if (!sch_intrin_get(intrin))
    return pp_fail(RT, "block %s: no tensor intrinsic is registered as \"%s\"", name, intrin);
  if (sch_tensorize(sch, block, intrin, true) != MLC_OK)
    return pp_fail_sch(RT, sch, "block %s with %s", name, intrin);
  return MLC_OK;
}

static int rewrite_tensorize(const ms_postproc_t *self, const ms_ctx_t *ctx, sch_t *sch) {
  int rc = MLC_OK;
  /* One block per round: each loses its annotation, so the loop ends. */
  while (rc == MLC_OK) {
    mlc_arena_t *a = mlc_arena_new();
    if (!a) return mlc_error_set(MLC_ENOMEM, RT ": out of memory");
    pp_block_t *blocks;
    int n;
    const char *intrin = NULL;
    rc = pp_collect_blocks(a, sch_func(sch), &blocks, &n);
    const pp_block_t *pb = rc == MLC_OK ? next_block(blocks, n, &intrin) : NULL;
    if (pb) rc = rewrite_one(sch, pb, intrin);
    mlc_arena_free(a);
    if (!pb) break;
  }
  return rc;
}

const ms_postproc_t ms_postproc_rewrite_tensorize = {"RewriteTensorize", rewrite_tensorize};
