/*
 * mutate_thread_binding.c - MutateThreadBinding (MetaSchedule's
 * mutate_thread_binding.cc): the thread count AutoBind and
 * CrossThreadReduction sample is a SampleCategorical whose variable is the
 * factor of a Split whose loop is then bound to threadIdx.x. This mutator
 * redraws one such decision among the other candidates, weighted by their
 * probabilities. Only samplers with another candidate of positive
 * probability count, so a pick never fails for lack of choice.
 */
#include "search/evolve/evolve.h"

/* Whether loop variable `loop` is bound to threadIdx.x by an instruction
 * after `from` (and before len). */
static bool bound_to_thread_x(const sch_trace_t *t, int from, int len, sch_rv_t loop) {
  for (int i = from + 1; i < len; i++) {
    const sch_inst_t *b = &t->insts[i];
    if (ms_inst_is(b, "Bind") && b->ninputs >= 1 && b->inputs[0].kind == SCH_ARG_RV && b->inputs[0].u.rv == loop &&
        b->nattrs >= 1 && b->attrs[0].kind == SCH_ARG_STR && strcmp(b->attrs[0].u.s, "threadIdx.x") == 0)
      return true;
  }
  return false;
}

/* Whether the sampler's variable is the factor of a Split whose loop is
 * bound to threadIdx.x. */
static bool feeds_thread_split(const sch_trace_t *t, int s, int len) {
  if (t->insts[s].noutputs != 1) return false;
  sch_rv_t v = t->insts[s].outputs[0];
  for (int i = s + 1; i < len; i++) {
    const sch_inst_t *split = &t->insts[i];
    if (!ms_inst_is(split, "Split")) continue;
    for (int k = 1; k < split->ninputs && k - 1 < split->noutputs; k++)
      if (split->inputs[k].kind == SCH_ARG_RV && split->inputs[k].u.rv == v &&
          bound_to_thread_x(t, i, len, split->outputs[k - 1]))
        return true;
  }
  return false;
}

/* Sampler s can change: another candidate has positive probability. */
static bool changeable(const sch_trace_t *t, int s) {
  const sch_inst_t *inst = &t->insts[s];
  if (!ms_inst_is(inst, "SampleCategorical") || t->decisions[s].kind != SCH_ARG_INT || inst->nattrs < 2 ||
      inst->attrs[1].kind != SCH_ARG_LIST)
    return false;
  const sch_arg_t *probs = &inst->attrs[1];
  for (int k = 0; k < probs->u.list.n; k++)
    if (k != t->decisions[s].u.i && probs->u.list.items[k].kind == SCH_ARG_FLOAT && probs->u.list.items[k].u.f > 0)
      return true;
  return false;
}

static int apply(const ms_mutator_t *self, const ms_ctx_t *ctx, const sch_trace_t *t, mlc_rng_t *rng,
                 sch_trace_t **out) {
  (void)self;
  (void)ctx;
  *out = NULL;
  int len = ms_trace_design_len(t);
  int *samplers = mlc_malloc(sizeof(int) * (size_t)(len > 0 ? len : 1));
  if (!samplers) return mlc_error_set(MLC_ENOMEM, "MutateThreadBinding: out of memory");
  int n = 0;
  for (int i = 0; i < len; i++)
    if (changeable(t, i) && feeds_thread_split(t, i, len)) samplers[n++] = i;
  int rc = ms_mutate_categorical(out, t, len, samplers, n, rng, "MutateThreadBinding", "no thread count to change");
  mlc_free(samplers);
  return rc;
}

const ms_mutator_t ms_mutate_thread_binding = {"MutateThreadBinding", apply};
