/*
 * rules.c - the rule sets (search.h): MetaSchedule's CPU defaults in their
 * order, and lookup by name for tests and `mlc-sched space --rules`.
 *
 * MultiLevelTilingWithIntrin (search/space/rule_mlt_intrin.c) joins the
 * defaults only when the target has AVX-512.
 */
#include "search/space/rules.h"

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

static const ms_rule_t *const all_rules[] = {
    &ms_rule_auto_inline, &ms_rule_add_rfactor, &ms_rule_mlt, &ms_rule_pvu, &ms_rule_random_compute_location,
    &ms_rule_mlt_intrin_avx512,
};

const ms_rule_t *ms_rule_find(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < sizeof all_rules / sizeof all_rules[0]; i++)
    if (strcmp(all_rules[i]->name, name) == 0) return all_rules[i];
  return NULL;
}
