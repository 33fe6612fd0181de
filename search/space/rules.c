/*
 * rules.c - the rule sets (search.h): MetaSchedule's CPU defaults in their
 * order, and lookup by name for tests and `mlc-sched space --rules`.
 *
 * MultiLevelTilingWithIntrin (search/space/rule_mlt_intrin.c) joins the
 * defaults only when the target has AVX-512. GPU targets (cuda, rocm) get
 * ScheduleRule::DefaultCUDA's rules, in its order (docs/search/gpu.md);
 * cuda targets with tensor cores (sm_70 and newer) get DefaultCUDATensorCore's:
 * the same with MultiLevelTilingTensorCore in MultiLevelTiling's place (it
 * falls back to MultiLevelTiling for blocks the intrinsics do not take).
 */
#include "search/space/rules.h"

#include <stdlib.h>
#include <string.h>

/* AutoInline, AddRFactor, [MultiLevelTilingWithIntrin], MultiLevelTiling,
 * ParallelizeVectorizeUnroll, RandomComputeLocation. */
static const ms_rule_t *const cpu_rules[] = {
    &ms_rule_auto_inline, &ms_rule_add_rfactor, &ms_rule_mlt, &ms_rule_pvu, &ms_rule_random_compute_location,
};

static const ms_rule_t *const cpu_rules_avx512[] = {
    &ms_rule_auto_inline, &ms_rule_add_rfactor,     &ms_rule_mlt_intrin_avx512,
    &ms_rule_mlt,         &ms_rule_pvu,             &ms_rule_random_compute_location,
};

const ms_rule_t *const *ms_rules_cpu_default(const ms_ctx_t *ctx, int *n) {
  if (ctx && mlc_target_has_feature(&ctx->target, "avx512f")) {
    *n = (int)(sizeof cpu_rules_avx512 / sizeof cpu_rules_avx512[0]);
    return cpu_rules_avx512;
  }
  *n = (int)(sizeof cpu_rules / sizeof cpu_rules[0]);
  return cpu_rules;
}

/* MultiLevelTiling (SSSRRSRS, threads), AutoInline, CrossThreadReduction,
 * ParallelizeVectorizeUnroll, AutoBind: TVM's order, tiling first. */
static const ms_rule_t *const cuda_rules[] = {
    &ms_rule_mlt_cuda, &ms_rule_auto_inline_cuda, &ms_rule_cross_thread_reduction, &ms_rule_pvu_cuda,
    &ms_rule_auto_bind,
};

static const ms_rule_t *const cuda_tensor_core_rules[] = {
    &ms_rule_mlt_tensor_core, &ms_rule_auto_inline_cuda, &ms_rule_cross_thread_reduction, &ms_rule_pvu_cuda,
    &ms_rule_auto_bind,
};

bool ms_target_has_tensor_cores(const mlc_target_t *t) {
  return t && t->kind == MLC_TARGET_CUDA && strncmp(t->arch, "sm_", 3) == 0 && atoi(t->arch + 3) >= 70;
}

const ms_rule_t *const *ms_rules_cuda_default(const ms_ctx_t *ctx, int *n) {
  if (ctx && ms_target_has_tensor_cores(&ctx->target)) {
    *n = (int)(sizeof cuda_tensor_core_rules / sizeof cuda_tensor_core_rules[0]);
    return cuda_tensor_core_rules;
  }
  *n = (int)(sizeof cuda_rules / sizeof cuda_rules[0]);
  return cuda_rules;
}

bool ms_target_is_gpu(const mlc_target_t *t) {
  return t && (t->kind == MLC_TARGET_CUDA || t->kind == MLC_TARGET_ROCM);
}

const ms_rule_t *const *ms_rules_default(const ms_ctx_t *ctx, int *n) {
  if (ctx && ms_target_is_gpu(&ctx->target)) return ms_rules_cuda_default(ctx, n);
  return ms_rules_cpu_default(ctx, n);
}

/* CPU variants first: ms_rule_find gives those for shared names. */
static const ms_rule_t *const all_rules[] = {
    &ms_rule_auto_inline,      &ms_rule_add_rfactor,       &ms_rule_mlt,
    &ms_rule_pvu,              &ms_rule_random_compute_location, &ms_rule_mlt_intrin_avx512,
    &ms_rule_cross_thread_reduction, &ms_rule_auto_bind,       &ms_rule_mlt_tensor_core,
};

static const ms_rule_t *find_in(const ms_rule_t *const *rules, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(rules[i]->name, name) == 0) return rules[i];
  return NULL;
}

const ms_rule_t *ms_rule_find(const char *name) {
  if (!name) return NULL;
  return find_in(all_rules, sizeof all_rules / sizeof all_rules[0], name);
}

const ms_rule_t *ms_rule_find_for(const ms_ctx_t *ctx, const char *name) {
  if (!name) return NULL;
  int n = 0;
  const ms_rule_t *const *defaults = ms_rules_default(ctx, &n);
  const ms_rule_t *r = find_in(defaults, (size_t)n, name);
  /* a tensor-core target's defaults replace MultiLevelTiling: the GPU one
   * is still the one its name means there */
  if (!r && ctx && ms_target_is_gpu(&ctx->target)) r = find_in(cuda_rules, sizeof cuda_rules / sizeof cuda_rules[0], name);
  return r ? r : ms_rule_find(name);
}
