/*
 * rewrite_unbound_block.c - the RewriteUnboundBlock postprocessor
 * (MetaSchedule's rewrite_unbound_block.cc). GPU code runs only inside
 * thread-bound loops: every block of the root's scope not yet under both a
 * blockIdx and a threadIdx loop (one the rules did not bind: a block that
 * AutoInline could not inline, a cache, an rfactor block) gets its leading
 * spatial loops fused and bound as AutoBind would (search/space/
 * thread_bind.c), with the thread count fixed to the target's
 * max_threads_per_block (or the loop's extent, when smaller) instead of
 * sampled: a postprocessor decides nothing the search could tune.
 */
#include "search/postproc/postproc.h"

#include "search/space/rules.h"

#define RUB "RewriteUnboundBlock"
#define MAX_THREADBLOCKS 256

/* Under both a blockIdx and a threadIdx loop. */
static bool fully_bound(const pp_block_t *pb) {
  bool bx = false, tx = false;
  for (int l = 0; l < pb->nloops; l++) {
    bx |= ms_loop_bound_to(pb->loops[l], "blockIdx");
    tx |= ms_loop_bound_to(pb->loops[l], "threadIdx");
  }
  return bx && tx;
}

/* Names of the root scope's blocks not fully bound, in program order (in
 * a). */
static int unbound_blocks(const tir_func_t *f, mlc_arena_t *a, const char ***names, int *n) {
  pp_block_t *blocks;
  int nb, rc = pp_collect_blocks(a, f, &blocks, &nb);
  *n = 0;
  if (rc != MLC_OK) return rc;
  *names = mlc_arena_alloc(a, sizeof(**names) * (size_t)(nb + 1));
  if (!*names) return mlc_error_set(MLC_ENOMEM, RUB ": out of memory");
  const tir_block_t *root = nb > 0 ? blocks[0].block : NULL;
  for (int i = 1; i < nb; i++)
    if (blocks[i].parent == root && !blocks[i].in_init && !fully_bound(&blocks[i])) (*names)[(*n)++] = blocks[i].block->name;
  return MLC_OK;
}

static int rewrite_unbound_block(const ms_postproc_t *self, const ms_ctx_t *ctx, sch_t *sch) {
  (void)self;
  if (ctx->target.max_threads_per_block <= 0)
    return pp_fail(RUB, "target has no max_threads_per_block (not a GPU target)");
  mlc_arena_t *a = mlc_arena_new();
  if (!a) return mlc_error_set(MLC_ENOMEM, RUB ": out of memory");
  const char **names;
  int n, rc = unbound_blocks(sch_func(sch), a, &names, &n);
  ms_thread_bind_t tb = {MAX_THREADBLOCKS, ctx->target.max_threads_per_block, 0, NULL};
  for (int i = 0; i < n && rc == MLC_OK; i++) {
    rc = ms_bind_block_thread_idx(sch, names[i], &tb);
    if (rc == MLC_ESCHEDULE) rc = pp_fail(RUB, "block %s: %s", names[i], mlc_error_last());
  }
  mlc_arena_free(a);
  return rc;
}

const ms_postproc_t ms_postproc_rewrite_unbound_block = {"RewriteUnboundBlock", rewrite_unbound_block};
