/*
 * mutate_unroll.c - MutateUnroll (MetaSchedule's mutate_unroll.cc): the
 * unroll step ParallelizeVectorizeUnroll leaves is an Annotate of
 * `meta_schedule.unroll_explicit` (or `_implicit`) whose value is the
 * variable of a SampleCategorical; this mutator redraws that decision among
 * the other candidates, with their probabilities.
 *
 * Only annotations whose sampling has another candidate of positive
 * probability are considered, so a pick never fails for lack of choice.
 */
#include "search/evolve/evolve.h"


/* The SampleCategorical feeding Annotate instruction i when it sets an
 * unroll step and can change; -1 otherwise. */
static int unroll_sampler(const sch_trace_t *t, int i) {
  const char *key = ms_annotate_key(&t->insts[i]);
  if (!key || (strcmp(key, MS_ANN_UNROLL_EXPLICIT) != 0 && strcmp(key, MS_ANN_UNROLL_IMPLICIT) != 0)) return -1;
  const sch_inst_t *ann = &t->insts[i];
  if (ann->ninputs < 2 || ann->inputs[1].kind != SCH_ARG_RV) return -1;
  int s = ms_trace_def_inst(t, i, ann->inputs[1].u.rv);
  if (s < 0 || !ms_inst_is(&t->insts[s], "SampleCategorical") || t->decisions[s].kind != SCH_ARG_INT) return -1;
  const sch_inst_t *inst = &t->insts[s];
  if (inst->nattrs < 2 || inst->attrs[1].kind != SCH_ARG_LIST) return -1;
  const sch_arg_t *probs = &inst->attrs[1];
  int64_t old = t->decisions[s].u.i;
  for (int k = 0; k < probs->u.list.n; k++)
    if (k != old && probs->u.list.items[k].kind == SCH_ARG_FLOAT && probs->u.list.items[k].u.f > 0) return s;
  return -1;
}

static int apply(const ms_mutator_t *self, const ms_ctx_t *ctx, const sch_trace_t *t, mlc_rng_t *rng,
                 sch_trace_t **out) {
  *out = NULL;
  int len = ms_trace_design_len(t);
  int *samplers = mlc_malloc(sizeof(int) * (size_t)(len > 0 ? len : 1));
  if (!samplers) return mlc_error_set(MLC_ENOMEM, "MutateUnroll: out of memory");
  int n = 0;
  for (int i = 0; i < len; i++) {
    int s = unroll_sampler(t, i);
    if (s >= 0) samplers[n++] = s;
  }
  int rc = ms_mutate_categorical(out, t, len, samplers, n, rng, "MutateUnroll", "no unroll choice to change");
  mlc_free(samplers);
  return rc;
}

const ms_mutator_t ms_mutate_unroll = {"MutateUnroll", apply};
