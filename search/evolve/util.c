/*
 * util.c - helpers the candidate code, the mutators and the evolutionary
 * search share (evolve.h): trace prefixes and definitions, replaying a
 * prefix, weighted sampling from the search's seeded RNG, and a set of
 * 64-bit trace hashes ("was this candidate measured?").
 */
#include "search/evolve/evolve.h"

/* ------------------------------------------------------------------------ */
/* Traces                                                                    */
/* ------------------------------------------------------------------------ */

int ms_trace_design_len(const sch_trace_t *t) {
  for (int i = 0; i < t->n; i++)
    if (ms_inst_is(&t->insts[i], "EnterPostproc")) return i;
  return t->n;
}

int ms_trace_copy_prefix(sch_trace_t **out, const sch_trace_t *t, int n) {
  sch_trace_t view = ms_trace_prefix_view(t, n);
  view.nrvs = 0;
  for (int i = 0; i < view.n; i++)
    for (int k = 0; k < view.insts[i].noutputs; k++)
      if (view.insts[i].outputs[k] >= view.nrvs) view.nrvs = view.insts[i].outputs[k] + 1;
  *out = sch_trace_copy(&view);
  return *out ? MLC_OK : mlc_error_set(MLC_ENOMEM, "search: out of memory copying a trace");
}

int ms_trace_def_inst(const sch_trace_t *t, int limit, sch_rv_t rv) {
  for (int i = 0; i < limit && i < t->n; i++)
    for (int k = 0; k < t->insts[i].noutputs; k++)
      if (t->insts[i].outputs[k] == rv) return i;
  return -1;
}

int ms_replay_prefix(sch_t **out, const ms_ctx_t *ctx, const sch_trace_t *t, int n) {
  *out = NULL;
  sch_t *sch = NULL;
  int rc = sch_create(&sch, ctx->workload, ctx->seed, SCH_ERRORS_FAST);
  if (rc != MLC_OK) return rc;
  sch_trace_t view = ms_trace_prefix_view(t, n);
  rc = sch_trace_apply(sch, &view, true);
  if (rc != MLC_OK) {
    sch_free(sch);
    return rc;
  }
  *out = sch;
  return MLC_OK;
}

const char *ms_annotate_key(const sch_inst_t *inst) {
  if (!ms_inst_is(inst, "Annotate") || inst->nattrs < 1 || inst->attrs[0].kind != SCH_ARG_STR) return NULL;
  return inst->attrs[0].u.s;
}

/* ------------------------------------------------------------------------ */
/* Sampling                                                                  */
/* ------------------------------------------------------------------------ */

int ms_sample_weighted(mlc_rng_t *rng, const double *w, int n) {
  double total = 0;
  for (int i = 0; i < n; i++)
    if (w[i] > 0) total += w[i];
  if (!(total > 0)) return (int)mlc_rng_below(rng, (uint64_t)n);
  double u = mlc_rng_uniform(rng) * total, cum = 0;
  int last = 0;
  for (int i = 0; i < n; i++) {
    if (!(w[i] > 0)) continue;
    cum += w[i];
    last = i;
    if (u < cum) return i;
  }
  return last; /* rounding at the very top */
}

/* A new decision for SampleCategorical s among the others, by probability;
 * -1 when out of memory. */
static int64_t redraw_categorical(const sch_trace_t *t, int s, mlc_rng_t *rng) {
  const sch_arg_t *probs = &t->insts[s].attrs[1];
  int n = probs->u.list.n;
  double stack[64]; /* mutation is on the search's hot path: no malloc for the usual few candidates */
  double *w = n <= 64 ? stack : mlc_malloc(sizeof(double) * (size_t)n);
  if (!w) return -1;
  for (int k = 0; k < n; k++) {
    const sch_arg_t *p = &probs->u.list.items[k];
    w[k] = (k == t->decisions[s].u.i || p->kind != SCH_ARG_FLOAT) ? 0 : p->u.f;
  }
  int64_t pick = ms_sample_weighted(rng, w, n);
  if (w != stack) mlc_free(w);
  return pick;
}

int ms_mutate_categorical(sch_trace_t **out, const sch_trace_t *t, int len, const int *samplers, int n,
                          mlc_rng_t *rng, const char *name, const char *none_why) {
  if (n == 0) return mlc_error_set(MLC_ENOTFOUND, "%s: %s", name, none_why);
  int s = samplers[mlc_rng_below(rng, (uint64_t)n)];
  int64_t d = redraw_categorical(t, s, rng);
  if (d < 0) return mlc_error_set(MLC_ENOMEM, "%s: out of memory", name);
  sch_arg_t decision = sch_arg_int(d);
  sch_trace_t design = ms_trace_prefix_view(t, len);
  return sch_trace_with_decision(out, &design, s, &decision);
}

/* Fisher-Yates from the back. */
void ms_shuffle(mlc_rng_t *rng, int *perm, int n) {
  for (int i = 0; i < n; i++) perm[i] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = (int)mlc_rng_below(rng, (uint64_t)i + 1);
    int tmp = perm[i];
    perm[i] = perm[j];
    perm[j] = tmp;
  }
}

/* ------------------------------------------------------------------------ */
/* Hash set                                                                  */
/* ------------------------------------------------------------------------ */

/* Trace hashes are XXH64 values, already uniform: the low bits index. */
static size_t slot_of(const ms_hset_t *s, uint64_t h) {
  size_t mask = s->cap - 1, i = (size_t)h & mask;
  while (s->slots[i] && s->slots[i] != h) i = (i + 1) & mask;
  return i;
}

bool ms_hset_has(const ms_hset_t *s, uint64_t h) {
  if (h == 0) return s->has_zero;
  return s->cap && s->slots[slot_of(s, h)] == h;
}

static int grow(ms_hset_t *s) {
  size_t cap = s->cap ? s->cap * 2 : 256;
  uint64_t *slots = mlc_calloc(cap, sizeof(uint64_t));
  if (!slots) return mlc_error_set(MLC_ENOMEM, "search: out of memory growing a hash set");
  ms_hset_t bigger = {slots, cap, 0, s->has_zero};
  for (size_t i = 0; i < s->cap; i++)
    if (s->slots[i]) {
      bigger.slots[slot_of(&bigger, s->slots[i])] = s->slots[i];
      bigger.len++;
    }
  mlc_free(s->slots);
  *s = bigger;
  return MLC_OK;
}

int ms_hset_add(ms_hset_t *s, uint64_t h) {
  if (h == 0) {
    s->has_zero = true;
    return MLC_OK;
  }
  if ((s->len + 1) * 2 > s->cap && grow(s) != MLC_OK) return MLC_ENOMEM;
  size_t i = slot_of(s, h);
  if (!s->slots[i]) {
    s->slots[i] = h;
    s->len++;
  }
  return MLC_OK;
}

size_t ms_hset_len(const ms_hset_t *s) { return s->len + (s->has_zero ? 1 : 0); }

void ms_hset_free(ms_hset_t *s) {
  mlc_free(s->slots);
  memset(s, 0, sizeof(*s));
}
