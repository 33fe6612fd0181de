/*
 * rule_auto_bind.c - AutoBind (MetaSchedule's auto_bind.cc): on GPUs every
 * block the other rules left without threads gets its leading spatial
 * loops fused and split over blockIdx.x / threadIdx.x
 * (ms_bind_block_thread_idx, thread_bind.c), the thread count sampled among
 * {32, 64, 128, 256, 512, 1024} (those within the target's
 * max_threads_per_block and the loop's extent), at most 256 thread blocks
 * before a serial loop takes the rest. Multi-level tiled blocks (bound by
 * MultiLevelTiling) and blocks already bound are left alone.
 */
#include "search/space/rules.h"

static const ms_auto_bind_params_t cuda_params = {
    .max_threadblocks = 256,
    .nthread_extents = 6,
    .thread_extents = {32, 64, 128, 256, 512, 1024},
};

static int auto_bind_apply(const ms_rule_t *self, const ms_ctx_t *ctx, sch_t *sch, const char *name, sch_t ***out,
                           int *nout, int *cap) {
  const ms_auto_bind_params_t *p = self->params;
  if (!ms_target_is_gpu(&ctx->target) || ctx->target.max_threads_per_block <= 0)
    return ms_out_push(out, nout, cap, sch);
  ms_thread_bind_t tb = {p->max_threadblocks, ctx->target.max_threads_per_block, p->nthread_extents,
                         p->thread_extents};
  int rc = ms_bind_block_thread_idx(sch, name, &tb);
  if (rc == MLC_ENOMEM) {
    sch_free(sch);
    return rc;
  }
  if (rc != MLC_OK) {
    ms_drop_fork(sch, "AutoBind");
    return MLC_OK;
  }
  return ms_out_push(out, nout, cap, sch);
}

const ms_rule_t ms_rule_auto_bind = {"AutoBind", auto_bind_apply, NULL, &cuda_params};
