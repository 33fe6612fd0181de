/*
 * population.c - the populations of the evolutionary search (search.c runs
 * the rounds): making members from design traces, the initial population
 * (the elite of measured traces, then random samples of the design space),
 * scoring with the cost model, and one generation of mutation and
 * selection, as MetaSchedule's SampleInitPopulation and EvolveWithCostModel.
 *
 * A member is kept as its design trace and the hash of the candidate it
 * makes; its schedule is dropped once its features are extracted (a
 * population of 512 schedules would hold every program at once). Features
 * are cached per candidate hash, so a candidate that comes back (elite,
 * unmutated parents, mutations that land on a known trace) is lowered and
 * extracted once. Every random draw comes from the search's RNG in a fixed
 * order, so the same seed and the same reports give the same populations.
 */
#include "search/evolve/search_priv.h"

#include <math.h>
#include <stdio.h>

#include "compiler/compiler.h"

void ms_item_free(ms_item_t *it) {
  sch_trace_free(it->design);
  memset(it, 0, sizeof(*it));
}

void ms_items_clear(ms_items_t *v) {
  for (size_t i = 0; i < v->len; i++) ms_item_free(&v->data[i]);
  v->len = 0;
}

void ms_items_free(ms_items_t *v) {
  ms_items_clear(v);
  mlc_vec_free(v);
}

/* ------------------------------------------------------------------------ */
/* Feature cache                                                             */
/* ------------------------------------------------------------------------ */

void ms_feat_cache_clear(ms_feat_cache_t *c) {
  for (size_t i = 0; i < c->cap; i++)
    if (c->slots[i].used) cm_features_free(&c->slots[i].feat);
  mlc_free(c->slots);
  memset(c, 0, sizeof(*c));
}

static size_t cache_slot(const ms_feat_cache_t *c, uint64_t key) {
  size_t mask = c->cap - 1, i = (size_t)key & mask;
  while (c->slots[i].used && c->slots[i].key != key) i = (i + 1) & mask;
  return i;
}

static int cache_grow(ms_feat_cache_t *c) {
  size_t cap = c->cap ? c->cap * 2 : 1024;
  ms_feat_entry_t *slots = mlc_calloc(cap, sizeof(*slots));
  if (!slots) return mlc_error_set(MLC_ENOMEM, "search: out of memory growing the feature cache");
  ms_feat_cache_t bigger = {slots, cap, c->len};
  for (size_t i = 0; i < c->cap; i++)
    if (c->slots[i].used) bigger.slots[cache_slot(&bigger, c->slots[i].key)] = c->slots[i];
  mlc_free(c->slots);
  *c = bigger;
  return MLC_OK;
}

const cm_features_t *ms_search_features(const ms_search_t *s, uint64_t trace_hash) {
  const ms_feat_cache_t *cache = s ? &s->cache : NULL;
  if (!cache || cache->cap == 0) return NULL;
  const ms_feat_entry_t *e = &cache->slots[cache_slot(cache, trace_hash)];
  return e->used && e->ok ? &e->feat : NULL;
}

/* Lowers the candidate for the task's target and extracts its features. */
static int extract(const ms_search_t *s, const ms_candidate_t *c, cm_features_t *out) {
  tir_func_t *lowered = NULL;
  int rc = mlc_lower(&lowered, sch_func(c->sch), &s->ctx->target, NULL);
  if (rc == MLC_OK) rc = cm_extract(out, lowered, &s->ctx->target);
  tir_func_free(lowered);
  return rc;
}

/* The cache entry of c, made on a miss. MLC_OK also when c did not lower
 * (entry->ok false); only running out of memory fails. */
static int features_of(ms_search_t *s, const ms_candidate_t *c, const ms_feat_entry_t **out) {
  ms_feat_cache_t *cache = &s->cache;
  if ((cache->len + 1) * 2 > cache->cap && cache_grow(cache) != MLC_OK) return MLC_ENOMEM;
  ms_feat_entry_t *e = &cache->slots[cache_slot(cache, c->trace_hash)];
  if (!e->used) {
    cm_features_t f = {0};
    int rc = extract(s, c, &f);
    if (rc == MLC_ENOMEM) return rc;
    if (rc != MLC_OK) snprintf(s->last_reject, sizeof s->last_reject, "lower: %s", mlc_error_last());
    s->stats.lowered++;
    e->key = c->trace_hash;
    e->used = true;
    e->ok = rc == MLC_OK;
    e->feat = f;
    cache->len++;
  }
  *out = e;
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Members                                                                   */
/* ------------------------------------------------------------------------ */

int ms_item_make(ms_search_t *s, ms_items_t *out, const sch_trace_t *design, bool use_decisions, uint64_t seed,
                 bool *valid) {
  *valid = false;
  ms_candidate_t c;
  int rc = ms_candidate_make(&c, s->ctx, design, use_decisions, seed, s->pp, s->npp);
  if (rc == MLC_ESCHEDULE) {
    snprintf(s->last_reject, sizeof s->last_reject, "%s", mlc_error_last());
    return MLC_OK;
  }
  if (rc != MLC_OK) return rc;
  const ms_feat_entry_t *e = NULL;
  ms_item_t it = {0};
  if ((rc = features_of(s, &c, &e)) != MLC_OK || !e->ok) goto done;
  it.hash = c.trace_hash;
  it.feat = e->feat;
  if ((rc = ms_trace_design_part(&it.design, c.trace)) != MLC_OK) goto done;
  if ((rc = mlc_vec_push(out, it)) != MLC_OK) {
    ms_item_free(&it);
    rc = mlc_error_set(MLC_ENOMEM, "search: out of memory growing a population");
    goto done;
  }
  *valid = true;
done:
  ms_candidate_free(&c);
  return rc;
}

/* A copy of it appended to out. */
static int item_push_copy(ms_items_t *out, const ms_item_t *it) {
  ms_item_t copy = *it;
  copy.design = sch_trace_copy(it->design);
  if (!copy.design || mlc_vec_push(out, copy) != MLC_OK) {
    sch_trace_free(copy.design);
    return mlc_error_set(MLC_ENOMEM, "search: out of memory growing a population");
  }
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Initial population                                                        */
/* ------------------------------------------------------------------------ */

/* One sampling round: `tries` random samples of the space into randoms;
 * *got is how many were valid. */
static int sample_round(ms_search_t *s, ms_items_t *randoms, int tries, int *got) {
  *got = 0;
  for (int i = 0; i < tries; i++) {
    const sch_trace_t *t = s->space->traces[mlc_rng_below(&s->rng, (uint64_t)s->space->n)];
    bool valid;
    int rc = ms_item_make(s, randoms, t, false, mlc_rng_fork_seed(&s->rng), &valid);
    if (rc != MLC_OK) return rc;
    *got += valid;
    s->stats.samples++;
    s->stats.valid += valid;
  }
  return MLC_OK;
}

/* Random samples until `want` are valid (in rounds of the places left),
 * or until max_fail_rounds rounds in a row gave nothing. */
static int sample_space(ms_search_t *s, ms_items_t *randoms, int places) {
  int want = s->opts.init_min_valid < places ? s->opts.init_min_valid : places;
  int empty = 0, rounds = 0;
  while ((int)randoms->len < want && empty < s->opts.max_fail_rounds) {
    int got, rc = sample_round(s, randoms, places - (int)randoms->len, &got);
    if (rc != MLC_OK) return rc;
    empty = got ? 0 : empty + 1;
    rounds++;
  }
  if (randoms->len == 0) {
    snprintf(s->status, sizeof s->status,
             "gave up: %d sampling rounds of %d in a row gave no valid candidate (last rejection: %s)", empty,
             places, s->last_reject[0] ? s->last_reject : "none");
    s->done = true;
  } else if ((int)randoms->len < want) {
    MLC_DEBUG("search %s: %zu valid samples of the %d wanted after %d rounds", s->ctx->task_name ? s->ctx->task_name : "",
              randoms->len, want, rounds);
  }
  return MLC_OK;
}

int ms_population_init(ms_search_t *s, ms_items_t *pop, ms_items_t *randoms) {
  ms_items_clear(pop);
  ms_items_clear(randoms);
  if (s->space->n == 0) {
    snprintf(s->status, sizeof s->status, "gave up: the design space is empty");
    s->done = true;
    return MLC_OK;
  }
  for (size_t i = 0; i < s->elite.len; i++) {
    bool valid;
    int rc = ms_item_make(s, pop, s->elite.data[i].design, true, mlc_rng_fork_seed(&s->rng), &valid);
    if (rc != MLC_OK) return rc;
    if (!valid) MLC_DEBUG("search: a measured trace no longer applies: %s", s->last_reject);
    /* Measured, even when today's postprocessors record it differently
     * from the record (another version): never measured again. */
    else if ((rc = ms_hset_add(&s->measured, pop->data[pop->len - 1].hash)) != MLC_OK) return rc;
  }
  int places = s->opts.population - (int)pop->len;
  int rc = sample_space(s, randoms, places > 0 ? places : 1);
  for (size_t i = 0; i < randoms->len && rc == MLC_OK; i++) rc = item_push_copy(pop, &randoms->data[i]);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Scoring                                                                   */
/* ------------------------------------------------------------------------ */

int ms_population_score(ms_search_t *s, cm_model_t *model, ms_items_t *pop) {
  size_t n = pop->len;
  if (n == 0) return MLC_OK;
  cm_features_t *feats = mlc_malloc(sizeof(*feats) * n);
  double *scores = mlc_malloc(sizeof(double) * n);
  int rc = MLC_OK;
  if (!feats || !scores) {
    rc = mlc_error_set(MLC_ENOMEM, "search: out of memory scoring a population");
    goto done;
  }
  for (size_t i = 0; i < n; i++) feats[i] = pop->data[i].feat;
  if ((rc = cm_model_predict(model, feats, (int)n, scores)) != MLC_OK) {
    mlc_error_prefix("search: cost model");
    goto done;
  }
  /* As MetaSchedule: scores are throughputs, a negative one means none. */
  for (size_t i = 0; i < n; i++) pop->data[i].score = isfinite(scores[i]) && scores[i] > 0 ? scores[i] : 0;
done:
  mlc_free(feats);
  mlc_free(scores);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Evolution                                                                 */
/* ------------------------------------------------------------------------ */

/* Masses of "keep as is" (index 0) and of each mutator (index 1 + j):
 * MetaSchedule's mutator sampler. */
static void mutator_masses(const ms_search_t *s, double *masses) {
  double p = s->opts.mutation_prob, total = 0;
  for (int j = 0; j < s->nmut; j++) total += s->mutators[j].prob > 0 ? s->mutators[j].prob : 0;
  masses[0] = total > 0 ? 1.0 - p : 1.0;
  for (int j = 0; j < s->nmut; j++)
    masses[1 + j] = total > 0 && s->mutators[j].prob > 0 ? p * s->mutators[j].prob / total : 0;
}

/* One mutation of parent into next; *placed when it gave a valid member.
 * A mutator that finds nothing to change, or whose trace does not apply,
 * is a failed attempt, not an error. */
static int mutate_into(ms_search_t *s, const ms_mutator_t *m, const ms_item_t *parent, ms_items_t *next,
                       bool *placed) {
  sch_trace_t *mutated = NULL;
  *placed = false;
  int rc = m->apply(m, s->ctx, parent->design, &s->rng, &mutated);
  if (rc == MLC_ENOMEM) return rc;
  s->stats.mutations++;
  if (rc != MLC_OK) return MLC_OK;
  rc = ms_item_make(s, next, mutated, true, mlc_rng_fork_seed(&s->rng), placed);
  s->stats.mutated += *placed;
  sch_trace_free(mutated);
  return rc;
}

/* Fills one slot of the next generation (MetaSchedule's f_find_candidate):
 * a parent drawn by score, mutated or (once per parent) kept as is; after
 * MS_MAX_MUTATE_FAILS failed attempts the last parent drawn is kept. */
static int fill_slot(ms_search_t *s, const ms_items_t *pop, const double *scores, const double *masses,
                     bool *taken, ms_items_t *next) {
  int parent = 0;
  for (int fail = 0; fail <= MS_MAX_MUTATE_FAILS; fail++) {
    parent = ms_sample_weighted(&s->rng, scores, (int)pop->len);
    int m = ms_sample_weighted(&s->rng, masses, s->nmut + 1);
    bool placed = false;
    if (m == 0) {
      if (taken[parent]) continue;
      taken[parent] = true;
      return item_push_copy(next, &pop->data[parent]);
    }
    int rc = mutate_into(s, s->mutators[m - 1].mutator, &pop->data[parent], next, &placed);
    if (rc != MLC_OK || placed) return rc;
  }
  return item_push_copy(next, &pop->data[parent]);
}

int ms_population_evolve(ms_search_t *s, const ms_items_t *pop, ms_items_t *next) {
  ms_items_clear(next);
  if (pop->len == 0) return MLC_OK;
  double *scores = mlc_malloc(sizeof(double) * pop->len);
  double *masses = mlc_malloc(sizeof(double) * (size_t)(s->nmut + 1));
  bool *taken = mlc_calloc(pop->len, sizeof(bool));
  int rc = MLC_OK;
  if (!scores || !masses || !taken) {
    rc = mlc_error_set(MLC_ENOMEM, "search: out of memory evolving a population");
    goto done;
  }
  for (size_t i = 0; i < pop->len; i++) scores[i] = pop->data[i].score;
  mutator_masses(s, masses);
  for (int slot = 0; slot < s->opts.population && rc == MLC_OK; slot++)
    rc = fill_slot(s, pop, scores, masses, taken, next);
done:
  mlc_free(scores);
  mlc_free(masses);
  mlc_free(taken);
  return rc;
}
