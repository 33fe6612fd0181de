/*
 * ctx.c - the task context every rule, postprocessor and mutator reads
 * (search.h: ms_ctx_t, MetaSchedule's TuneContext).
 */
#include "search/search.h"

#include <string.h>

void ms_ctx_init(ms_ctx_t *ctx, const tir_func_t *workload, const char *task_name, const mlc_target_t *target,
                 uint64_t seed) {
  memset(ctx, 0, sizeof *ctx);
  ctx->workload = workload;
  ctx->task_name = task_name ? task_name : (workload && workload->name ? workload->name : "main");
  if (target) ctx->target = *target;
  else mlc_target_host(&ctx->target);
  ctx->num_cores = mlc_target_cores(&ctx->target);
  ctx->seed = seed;
}
