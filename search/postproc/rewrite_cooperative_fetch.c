/*
 * rewrite_cooperative_fetch.c - the RewriteCooperativeFetch postprocessor
 * (MetaSchedule's rewrite_cooperative_fetch.cc). MultiLevelTiling leaves
 * each shared-memory read cache with its loops over the buffer fused into
 * one and the annotation meta_schedule.cooperative_fetch = V (a sampled
 * vector length). Here every thread of the block takes part in the copy:
 * the fused loop is split into [rest, threadIdx.x (, V)] by the block's
 * thread count, the middle part bound to threadIdx.x and, with V > 1, the
 * inner part vectorized; with threadIdx.y too, [rest, threadIdx.y,
 * threadIdx.x (, V)]. The annotation is removed.
 *
 * The thread counts are the extents of the loops bound to threadIdx.x / .y
 * above the cache block in the current program (TVM reads them from the
 * trace's bindings; the program says the same once the factors are
 * decided). A cache with no thread loop above it is left serial. In a
 * kernel with a tensor-core tile (a block annotated warp_execution, run by
 * a whole warp), threadIdx.x is the warp's lanes though no loop binds it:
 * the copy is split over [threadIdx.y,] threadIdx.x = the warp size, as
 * TVM does.
 */
#include "search/postproc/postproc.h"

#include <string.h>

#define RCF "RewriteCooperativeFetch"

typedef struct {
  const char *name;
  int64_t vector, tx, ty; /* ty -1 when there is no threadIdx.y */
} fetch_t;

/* The innermost extent bound to `tag` above the block, or -1. */
static int64_t thread_extent(const pp_block_t *pb, const char *tag) {
  int64_t ext = -1;
  for (int l = 0; l < pb->nloops; l++) {
    const tir_stmt_t *loop = pb->loops[l];
    if (loop->u.loop.kind == TIR_FOR_THREAD_BINDING && loop->u.loop.thread_tag &&
        strcmp(loop->u.loop.thread_tag, tag) == 0 && !tir_as_int(loop->u.loop.extent, &ext))
      ext = -1;
  }
  return ext;
}

/* A block annotated warp_execution in pb's kernel (under the same
 * outermost loop). */
static bool warp_in_kernel(const pp_block_t *blocks, int n, const pp_block_t *pb) {
  int64_t v;
  for (int i = 0; i < n && pb->nloops > 0; i++)
    if (blocks[i].nloops > 0 && blocks[i].loops[0] == pb->loops[0] &&
        pp_block_ann_int(blocks[i].block, MS_ANN_WARP_EXECUTION, &v) && v != 0)
      return true;
  return false;
}

/* The first block still annotated for a cooperative fetch. */
static bool next_fetch(const ms_ctx_t *ctx, const tir_func_t *f, mlc_arena_t *a, fetch_t *out, int *rc) {
  pp_block_t *blocks;
  int n;
  if ((*rc = pp_collect_blocks(a, f, &blocks, &n)) != MLC_OK) return false;
  for (int i = 0; i < n; i++) {
    if (!pp_block_ann_int(blocks[i].block, MS_ANN_COOPERATIVE_FETCH, &out->vector)) continue;
    out->name = blocks[i].block->name;
    out->tx = thread_extent(&blocks[i], "threadIdx.x");
    out->ty = thread_extent(&blocks[i], "threadIdx.y");
    if (out->tx <= 0 && ctx && ctx->target.thread_warp_size > 0 && warp_in_kernel(blocks, n, &blocks[i]))
      out->tx = ctx->target.thread_warp_size;
    return true;
  }
  return false;
}

/* Split factors: [None, (ty,) tx (, vector)]; the count. */
static int fetch_factors(const fetch_t *ft, sch_arg_t *f) {
  int n = 0;
  f[n++] = sch_arg_none();
  if (ft->ty > 0) f[n++] = sch_arg_int(ft->ty);
  f[n++] = sch_arg_int(ft->tx);
  if (ft->vector > 1) f[n++] = sch_arg_int(ft->vector);
  return n;
}

static int rewrite_one(sch_t *sch, const fetch_t *ft) {
  sch_rv_t block;
  const sch_rv_t *loops, *split;
  int n;
  if (sch_get_block(sch, &block, ft->name) != MLC_OK || sch_unannotate(sch, block, MS_ANN_COOPERATIVE_FETCH) != MLC_OK)
    return pp_fail_sch(RCF, sch, "block %s", ft->name);
  if (ft->tx <= 0) return MLC_OK; /* no threads to share the copy */
  if (sch_get_loops(sch, &loops, &n, block) != MLC_OK || n == 0)
    return pp_fail(RCF, "block %s: no loop to split", ft->name);
  sch_arg_t f[4];
  int nf = fetch_factors(ft, f);
  if (sch_split(sch, &split, loops[n - 1], f, nf, true) != MLC_OK)
    return pp_fail_sch(RCF, sch, "block %s: splitting the fetch", ft->name);
  sch_rv_t parts[4];
  memcpy(parts, split, sizeof(*parts) * (size_t)nf);
  int k = 1;
  if (ft->ty > 0 && sch_bind(sch, parts[k++], "threadIdx.y") != MLC_OK)
    return pp_fail_sch(RCF, sch, "block %s", ft->name);
  sch_rv_t tx = parts[k++];
  if (ft->vector > 1 && sch_vectorize(sch, parts[k]) != MLC_OK)
    return pp_fail_sch(RCF, sch, "block %s: vectorizing by %lld", ft->name, (long long)ft->vector);
  if (sch_bind(sch, tx, "threadIdx.x") != MLC_OK) return pp_fail_sch(RCF, sch, "block %s", ft->name);
  return MLC_OK;
}

static int rewrite_cooperative_fetch(const ms_postproc_t *self, const ms_ctx_t *ctx, sch_t *sch) {
  (void)self;
  int rc = MLC_OK;
  for (;;) { /* one block per round: each removes one annotation */
    mlc_arena_t *a = mlc_arena_new();
    if (!a) return mlc_error_set(MLC_ENOMEM, RCF ": out of memory");
    fetch_t ft;
    bool found = next_fetch(ctx, sch_func(sch), a, &ft, &rc);
    if (found) rc = rewrite_one(sch, &ft);
    mlc_arena_free(a);
    if (!found || rc != MLC_OK) return rc;
  }
}

const ms_postproc_t ms_postproc_rewrite_cooperative_fetch = {"RewriteCooperativeFetch", rewrite_cooperative_fetch};
