/*
 * mutators.c - the mutator tables: the CPU and GPU defaults with
 * MetaSchedule's probabilities (DESIGN.md, Search; Mutator::DefaultLLVM and
 * DefaultCUDA) and lookup by name. Each mutator lives in its own file
 * (mutate_*.c).
 */
#include "search/evolve/evolve.h"

/*   mutator                       probability */
#define MS_CPU_MUTATORS(X)               \
  X(ms_mutate_tile_size,          0.90)  \
  X(ms_mutate_compute_location,   0.05)  \
  X(ms_mutate_unroll,             0.03)  \
  X(ms_mutate_parallel,           0.02)

static const ms_mutator_prob_t cpu_default[] = {
#define MS_ROW_(m, p) {&m, p},
    MS_CPU_MUTATORS(MS_ROW_)
#undef MS_ROW_
};

const ms_mutator_prob_t *ms_mutators_cpu_default(const ms_ctx_t *ctx, int *n) {
  if (n) *n = (int)(sizeof cpu_default / sizeof cpu_default[0]);
  return cpu_default;
}

#define MS_CUDA_MUTATORS(X)              \
  X(ms_mutate_tile_size,          0.90)  \
  X(ms_mutate_unroll,             0.08)  \
  X(ms_mutate_thread_binding,     0.02)

static const ms_mutator_prob_t cuda_default[] = {
#define MS_ROW_(m, p) {&m, p},
    MS_CUDA_MUTATORS(MS_ROW_)
#undef MS_ROW_
};

const ms_mutator_prob_t *ms_mutators_cuda_default(const ms_ctx_t *ctx, int *n) {
  (void)ctx;
  if (n) *n = (int)(sizeof cuda_default / sizeof cuda_default[0]);
  return cuda_default;
}

const ms_mutator_prob_t *ms_mutators_default(const ms_ctx_t *ctx, int *n) {
  if (ctx && ms_target_is_gpu(&ctx->target)) return ms_mutators_cuda_default(ctx, n);
  return ms_mutators_cpu_default(ctx, n);
}

const ms_mutator_t *ms_mutator_find(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < sizeof cpu_default / sizeof cpu_default[0]; i++)
    if (strcmp(cpu_default[i].mutator->name, name) == 0) return cpu_default[i].mutator;
  for (size_t i = 0; i < sizeof cuda_default / sizeof cuda_default[0]; i++)
    if (strcmp(cuda_default[i].mutator->name, name) == 0) return cuda_default[i].mutator;
  return NULL;
}
