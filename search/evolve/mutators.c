/*
 * mutators.c - the mutator table: the CPU defaults with MetaSchedule's
 * probabilities (DESIGN.md, Search) and lookup by name. Each mutator lives
 * in its own file (mutate_*.c).
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

const ms_mutator_t *ms_mutator_find(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < sizeof cpu_default / sizeof cpu_default[0]; i++)
    if (strcmp(cpu_default[i].mutator->name, name) == 0) return cpu_default[i].mutator;
  return NULL;
}
