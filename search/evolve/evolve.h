/*
 * evolve.h - private to search/evolve/: what the candidate code, the four
 * CPU mutators and the evolutionary search share. Trace helpers (the design
 * part as a view, which instruction defines a variable, replaying a prefix),
 * a set of 64-bit hashes, weighted sampling, and the mutator objects.
 *
 * Nothing here is part of search.h's contract; search/evolve/ files only.
 */
#ifndef MLC_SEARCH_EVOLVE_EVOLVE_H
#define MLC_SEARCH_EVOLVE_EVOLVE_H

#include "search/search.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* Traces                                                                    */
/* ------------------------------------------------------------------------ */

/* Whether inst is of the kind TVM names `name` ("SamplePerfectTile"). */
static inline bool ms_inst_is(const sch_inst_t *inst, const char *name) {
  return inst->kind && strcmp(inst->kind->name, name) == 0;
}

/* The number of design instructions of t: the index of its EnterPostproc,
 * or t->n when it has none. */
int ms_trace_design_len(const sch_trace_t *t);

/* A read-only view of t's first n instructions (shares t's arrays; valid
 * while t is). Replaying or copying the view replays or copies the prefix. */
static inline sch_trace_t ms_trace_prefix_view(const sch_trace_t *t, int n) {
  sch_trace_t v = *t;
  v.n = n < t->n ? n : t->n;
  v.cap = v.n;
  return v;
}

/* An owned copy of t's first n instructions with their decisions (nrvs
 * recounted). MLC_ENOMEM on failure. */
int ms_trace_copy_prefix(sch_trace_t **out, const sch_trace_t *t, int n);

/* The index (< limit) of the instruction that defines trace variable rv, or
 * -1 when none does. */
int ms_trace_def_inst(const sch_trace_t *t, int limit, sch_rv_t rv);

/* A fresh schedule of ctx->workload (FAST errors) with t's first n
 * instructions replayed with their decisions. *out owned (sch_free); on a
 * failed replay, the replay's status with its reason in mlc_error_last(). */
int ms_replay_prefix(sch_t **out, const ms_ctx_t *ctx, const sch_trace_t *t, int n);

/* The string an Annotate instruction sets (its key), or NULL when inst is
 * not an Annotate. */
const char *ms_annotate_key(const sch_inst_t *inst);

/* ------------------------------------------------------------------------ */
/* Sampling                                                                  */
/* ------------------------------------------------------------------------ */

/* Index i with probability w[i] / sum(w) (negative weights count as 0);
 * uniform when the sum is not positive. n > 0. */
int ms_sample_weighted(mlc_rng_t *rng, const double *w, int n);

/* A uniformly random permutation of 0..n-1 into perm. */
void ms_shuffle(mlc_rng_t *rng, int *perm, int n);

/* The mutation of MutateUnroll and MutateThreadBinding: one of the n
 * SampleCategorical instructions samplers[] of t (picked uniformly) gets a
 * new decision among its other candidates, drawn by their probabilities;
 * *out is t's first len instructions with it (owned). MLC_ENOTFOUND with
 * "<name>: <none_why>" when n is 0; MLC_ENOMEM. */
int ms_mutate_categorical(sch_trace_t **out, const sch_trace_t *t, int len, const int *samplers, int n,
                          mlc_rng_t *rng, const char *name, const char *none_why);

/* ------------------------------------------------------------------------ */
/* A set of 64-bit hashes (open addressing; the value 0 is kept aside)      */
/* ------------------------------------------------------------------------ */

typedef struct {
  uint64_t *slots;
  size_t cap, len;
  bool has_zero;
} ms_hset_t;

bool ms_hset_has(const ms_hset_t *s, uint64_t h);
/* MLC_OK (also when h was there) or MLC_ENOMEM. */
int ms_hset_add(ms_hset_t *s, uint64_t h);
size_t ms_hset_len(const ms_hset_t *s);
void ms_hset_free(ms_hset_t *s);

/* ------------------------------------------------------------------------ */
/* Mutators (one file each)                                                  */
/* ------------------------------------------------------------------------ */

extern const ms_mutator_t ms_mutate_tile_size;
extern const ms_mutator_t ms_mutate_compute_location;
extern const ms_mutator_t ms_mutate_unroll;
extern const ms_mutator_t ms_mutate_parallel;
extern const ms_mutator_t ms_mutate_thread_binding; /* GPU */

/* MetaSchedule's MutateParallel bound: jobs per core. */
#define MS_MAX_JOBS_PER_CORE 16

#endif /* MLC_SEARCH_EVOLVE_EVOLVE_H */
