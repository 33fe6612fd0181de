/*
 * postprocs.c - the postprocessor registry (defaults per target, lookup by
 * name) and ms_postprocs_apply, which marks where postprocessing starts in
 * the trace (EnterPostproc) and runs a list of postprocessors in order.
 *
 * Why the order matters (MetaSchedule's): loops are parallelized and
 * vectorized while the blocks still look as the rules left them
 * (RewriteParallelVectorizeUnroll); then inits are split off the reductions
 * (RewriteReductionBlock), operands packed (RewriteLayout), and only then,
 * with loops, inits and layouts final, tiles tensorized (RewriteTensorize).
 * On GPUs (Postproc::DefaultCUDA): the cooperative fetches are split over
 * the threads and the blocks left unbound get threads before the unroll
 * pragmas and the inits, and VerifyGPUCode comes last, on the final
 * program; with tensor cores, RewriteTensorize just before it.
 */
#include "search/postproc/postproc.h"

#include <string.h>

static const ms_postproc_t *const cpu_defaults[] = {
    &ms_postproc_disallow_dynamic_loop, &ms_postproc_rewrite_parallel_vectorize_unroll,
    &ms_postproc_rewrite_reduction_block, &ms_postproc_rewrite_layout, &ms_postproc_rewrite_tensorize,
};

const ms_postproc_t *const *ms_postprocs_cpu_default(const ms_ctx_t *ctx, int *n) {
  *n = (int)(sizeof(cpu_defaults) / sizeof(cpu_defaults[0]));
  return cpu_defaults;
}

static const ms_postproc_t *const cuda_defaults[] = {
    &ms_postproc_disallow_dynamic_loop,
    &ms_postproc_rewrite_cooperative_fetch,
    &ms_postproc_rewrite_unbound_block,
    &ms_postproc_rewrite_parallel_vectorize_unroll,
    &ms_postproc_rewrite_reduction_block,
    &ms_postproc_verify_gpu_code,
};

/* Postproc::DefaultCUDATensorCore, with RewriteTensorize before
 * VerifyGPUCode (TVM runs it after, to save time on invalid samples) so
 * that what is verified is the program that will be built. */
static const ms_postproc_t *const cuda_tensor_core_defaults[] = {
    &ms_postproc_disallow_dynamic_loop,
    &ms_postproc_rewrite_cooperative_fetch,
    &ms_postproc_rewrite_unbound_block,
    &ms_postproc_rewrite_parallel_vectorize_unroll,
    &ms_postproc_rewrite_reduction_block,
    &ms_postproc_rewrite_tensorize,
    &ms_postproc_verify_gpu_code,
};

const ms_postproc_t *const *ms_postprocs_cuda_default(const ms_ctx_t *ctx, int *n) {
  if (ctx && ms_target_has_tensor_cores(&ctx->target)) {
    *n = (int)(sizeof(cuda_tensor_core_defaults) / sizeof(cuda_tensor_core_defaults[0]));
    return cuda_tensor_core_defaults;
  }
  *n = (int)(sizeof(cuda_defaults) / sizeof(cuda_defaults[0]));
  return cuda_defaults;
}

const ms_postproc_t *const *ms_postprocs_default(const ms_ctx_t *ctx, int *n) {
  if (ctx && ms_target_is_gpu(&ctx->target)) return ms_postprocs_cuda_default(ctx, n);
  return ms_postprocs_cpu_default(ctx, n);
}

static const ms_postproc_t *const all_postprocs[] = {
    &ms_postproc_disallow_dynamic_loop,  &ms_postproc_rewrite_parallel_vectorize_unroll,
    &ms_postproc_rewrite_reduction_block, &ms_postproc_rewrite_layout,
    &ms_postproc_rewrite_tensorize,       &ms_postproc_rewrite_cooperative_fetch,
    &ms_postproc_rewrite_unbound_block,   &ms_postproc_verify_gpu_code,
};

const ms_postproc_t *ms_postproc_find(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < sizeof(all_postprocs) / sizeof(all_postprocs[0]); i++)
    if (strcmp(all_postprocs[i]->name, name) == 0) return all_postprocs[i];
  return NULL;
}

int ms_postprocs_apply(const ms_ctx_t *ctx, const ms_postproc_t *const *pp, int n, sch_t *sch) {
  if (!sch || (n > 0 && !pp) || n < 0) return mlc_error_set(MLC_EINVAL, "ms_postprocs_apply: bad arguments");
  int rc = sch_enter_postproc(sch);
  for (int i = 0; i < n && rc == MLC_OK; i++) {
    if (!pp[i] || !pp[i]->apply) return mlc_error_set(MLC_EINVAL, "ms_postprocs_apply: postprocessor %d is empty", i);
    rc = pp[i]->apply(pp[i], ctx, sch);
  }
  return rc;
}
