/*
 * mutate_compute_location.c - MutateComputeLocation (MetaSchedule's
 * mutate_compute_location.cc): re-samples a SampleComputeLocation decision
 * among the block's other valid locations.
 *
 * Which locations are valid depends on the program at that point of the
 * trace, so the prefix up to the sampling instruction is replayed (with its
 * decisions) on a fresh schedule; there each candidate location (inline -2,
 * root -1, and the positions among the consumers' loops) is offered to
 * sample_compute_location as a decision, which accepts exactly the valid
 * ones. A new location changes the program below it, and a later
 * instruction of the trace may no longer apply (a split of a loop that is
 * now elsewhere), so the mutated trace is replayed whole before it is
 * returned and another location is tried when it fails. The mutator is the
 * rarest of the four (5%), which pays for the replays.
 */
#include "search/evolve/evolve.h"

/* Locations one instruction may have: inline, root and loop positions. */
#define MAX_LOCATIONS 66

typedef struct {
  int n;
  int64_t loc[MAX_LOCATIONS];
} locations_t;

/* The number of loops above the deepest-nested consumer of block: an upper
 * bound of the positions a location may name. */
static int max_position(sch_t *sch, sch_rv_t block) {
  const sch_rv_t *consumers, *loops;
  int nconsumers, nloops, most = 0;
  if (sch_get_consumers(sch, &consumers, &nconsumers, block) != MLC_OK) return 0;
  sch_rv_t copy[64];
  int nc = nconsumers < 64 ? nconsumers : 64;
  memcpy(copy, consumers, sizeof(sch_rv_t) * (size_t)nc);
  for (int i = 0; i < nc; i++)
    if (sch_get_loops(sch, &loops, &nloops, copy[i]) == MLC_OK && nloops > most) most = nloops;
  return most < MAX_LOCATIONS - 2 ? most : MAX_LOCATIONS - 2;
}

/* The valid locations of the block sampled by instruction i, other than
 * its current decision. */
static int other_locations(const ms_ctx_t *ctx, const sch_trace_t *t, int i, locations_t *out) {
  out->n = 0;
  sch_t *sch = NULL;
  int rc = ms_replay_prefix(&sch, ctx, t, i + 1);
  if (rc != MLC_OK) return rc == MLC_ESCHEDULE ? MLC_OK : rc; /* an invalid trace offers nothing */
  /* The sampling instruction, just recorded again, names the block in the
   * schedule's own variables. */
  const sch_inst_t *last = &sch_get_trace(sch)->insts[sch_get_trace(sch)->n - 1];
  if (!ms_inst_is(last, "SampleComputeLocation") || last->ninputs != 1 || last->inputs[0].kind != SCH_ARG_RV) {
    sch_free(sch);
    return MLC_OK;
  }
  sch_rv_t block = last->inputs[0].u.rv;
  int64_t old = t->decisions[i].u.i;
  int npos = max_position(sch, block);
  for (int64_t d = -2; d < npos; d++) {
    sch_rv_t loc;
    if (d != old && sch_sample_compute_location(sch, &loc, block, &d) == MLC_OK) out->loc[out->n++] = d;
  }
  sch_free(sch);
  return MLC_OK;
}

/* Whether t replays whole on a fresh schedule (with its decisions). */
static bool replays(const ms_ctx_t *ctx, const sch_trace_t *t) {
  sch_t *sch = NULL;
  int rc = ms_replay_prefix(&sch, ctx, t, t->n);
  sch_free(sch);
  return rc == MLC_OK;
}

/* Tries the other locations of instruction i in random order; MLC_OK with
 * *out, MLC_ENOTFOUND when none gives a trace that replays. */
static int mutate_at(const ms_ctx_t *ctx, const sch_trace_t *design, int i, mlc_rng_t *rng, sch_trace_t **out) {
  locations_t locs;
  int rc = other_locations(ctx, design, i, &locs);
  if (rc != MLC_OK) return rc;
  for (int left = locs.n; left > 0; left--) {
    int pick = (int)mlc_rng_below(rng, (uint64_t)left);
    sch_arg_t d = sch_arg_int(locs.loc[pick]);
    locs.loc[pick] = locs.loc[left - 1];
    if ((rc = sch_trace_with_decision(out, design, i, &d)) != MLC_OK) return rc;
    if (replays(ctx, *out)) return MLC_OK;
    sch_trace_free(*out);
    *out = NULL;
  }
  return MLC_ENOTFOUND;
}

static int apply(const ms_mutator_t *self, const ms_ctx_t *ctx, const sch_trace_t *t, mlc_rng_t *rng,
                 sch_trace_t **out) {
  *out = NULL;
  if (!ctx || !ctx->workload) return mlc_error_set(MLC_EINVAL, "MutateComputeLocation: no workload");
  sch_trace_t design = ms_trace_prefix_view(t, ms_trace_design_len(t));
  int *cands = mlc_malloc(sizeof(int) * (size_t)(design.n > 0 ? design.n : 1));
  if (!cands) return mlc_error_set(MLC_ENOMEM, "MutateComputeLocation: out of memory");
  int ncands = 0, rc = MLC_ENOTFOUND;
  for (int i = 0; i < design.n; i++)
    if (ms_inst_is(&design.insts[i], "SampleComputeLocation") && design.decisions[i].kind == SCH_ARG_INT &&
        design.insts[i].ninputs == 1)
      cands[ncands++] = i;
  /* Uniform among the instructions that have another location. */
  for (int left = ncands; left > 0 && rc == MLC_ENOTFOUND; left--) {
    int pick = (int)mlc_rng_below(rng, (uint64_t)left);
    int inst = cands[pick];
    cands[pick] = cands[left - 1];
    rc = mutate_at(ctx, &design, inst, rng, out);
  }
  mlc_free(cands);
  if (rc == MLC_ENOTFOUND) return mlc_error_set(MLC_ENOTFOUND, "MutateComputeLocation: no compute location can change");
  return rc;
}

const ms_mutator_t ms_mutate_compute_location = {"MutateComputeLocation", apply};
