/*
 * rule_parallel_vectorize_unroll.c - ParallelizeVectorizeUnroll
 * (MetaSchedule's parallel_vectorize_unroll.cc): leaves on the root block
 * the limits the postprocessor RewriteParallelVectorizeUnroll turns into
 * parallel, vectorized and unrolled loops:
 *   meta_schedule.parallel          = max_jobs_per_core x cores (16 x cores)
 *   meta_schedule.vectorize         = max_vectorize_extent (64)
 *   meta_schedule.unroll_explicit   = v, with v = sample_categorical over the
 *                                     unroll steps {0, 16, 64, 512}, equal
 *                                     probabilities
 * The unroll annotation's value is the sampled variable itself (TVM's
 * form), so replaying the trace without decisions draws a new step and the
 * mutator MutateUnroll can change it. Functions whose blocks are all
 * spatial get no unroll annotation, as in TVM. Only the root block is
 * touched; the rule passes every other block through.
 */
#include "search/space/rules.h"

static const ms_pvu_params_t cpu_params = {
    .max_jobs_per_core = 16,
    .max_vectorize_extent = 64,
    .nunroll_steps = 4,
    .unroll_max_steps = {0, 16, 64, 512},
    .unroll_explicit = true,
};

/* ScheduleRule::DefaultCUDA's: no parallel or vector annotation (threads
 * and vector loads come from the other rules), unroll up to 1024. */
static const ms_pvu_params_t cuda_params = {
    .max_jobs_per_core = -1,
    .max_vectorize_extent = -1,
    .nunroll_steps = 5,
    .unroll_max_steps = {0, 16, 64, 512, 1024},
    .unroll_explicit = true,
};

static int annotate_root(const ms_pvu_params_t *p, const ms_ctx_t *ctx, sch_t *sch, sch_rv_t root) {
  int rc = MLC_OK;
  if (p->max_jobs_per_core != -1)
    rc = sch_annotate(sch, root, MS_ANN_PARALLEL, sch_arg_int((int64_t)p->max_jobs_per_core * ctx->num_cores));
  if (rc == MLC_OK && p->max_vectorize_extent != -1)
    rc = sch_annotate(sch, root, MS_ANN_VECTORIZE, sch_arg_int(p->max_vectorize_extent));
  if (rc != MLC_OK || p->nunroll_steps <= 0 || ms_func_is_spatial(sch_func(sch))) return rc;
  double probs[MS_PVU_MAX_STEPS];
  int n = p->nunroll_steps < MS_PVU_MAX_STEPS ? p->nunroll_steps : MS_PVU_MAX_STEPS;
  for (int i = 0; i < n; i++) probs[i] = 1.0 / n;
  sch_rv_t step;
  rc = sch_sample_categorical(sch, &step, p->unroll_max_steps, probs, n, NULL);
  if (rc != MLC_OK) return rc;
  const char *key = p->unroll_explicit ? MS_ANN_UNROLL_EXPLICIT : MS_ANN_UNROLL_IMPLICIT;
  return sch_annotate(sch, root, key, sch_arg_rv(step));
}

static int pvu_apply(const ms_rule_t *self, const ms_ctx_t *ctx, sch_t *sch, const char *name, sch_t ***out,
                     int *nout, int *cap) {
  sch_path_t path;
  if (!ms_find_block(sch, name, &path) || !ms_is_root(&path)) return ms_out_push(out, nout, cap, sch);
  sch_rv_t root;
  int rc = ms_block_rv(sch, name, &root);
  if (rc == MLC_OK) rc = annotate_root(self->params, ctx, sch, root);
  if (rc == MLC_ENOMEM) {
    sch_free(sch);
    return rc;
  }
  if (rc != MLC_OK) {
    ms_drop_fork(sch, "ParallelizeVectorizeUnroll");
    return MLC_OK;
  }
  return ms_out_push(out, nout, cap, sch);
}

const ms_rule_t ms_rule_pvu = {"ParallelizeVectorizeUnroll", pvu_apply, NULL, &cpu_params};
const ms_rule_t ms_rule_pvu_cuda = {"ParallelizeVectorizeUnroll", pvu_apply, NULL, &cuda_params};
