/*
 * ctx.c - the task context every rule, postprocessor and mutator reads
 * (search.h: ms_ctx_t, MetaSchedule's TuneContext).
 */
#include "search/search.h"

#include <string.h>

/* The cores a parallel loop may use: the target's -num-cores, else those
 * this process may run on (its affinity mask, as the runtime's pool counts
 * them; at least 1). */
static int target_cores(const mlc_target_t *t) { return t->num_cores > 0 ? t->num_cores : mlc_cpu_host_cores(); }

void ms_ctx_init(ms_ctx_t *ctx, const tir_func_t *workload, const char *task_name, const mlc_target_t *target,
                 uint64_t seed) {
  memset(ctx, 0, sizeof *ctx);
  ctx->workload = workload;
  ctx->task_name = task_name ? task_name : (workload && workload->name ? workload->name : "main");
  if (target) ctx->target = *target;
  else mlc_target_host(&ctx->target);
  ctx->num_cores = target_cores(&ctx->target);
  ctx->seed = seed;
}
