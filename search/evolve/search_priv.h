/*
 * search_priv.h - private to search/evolve/: the state of one task's
 * evolutionary search (ms_search_t) and the population machinery that
 * search.c (the rounds, picking, reports) and population.c (sampling,
 * scoring, mutation) share.
 */
#ifndef MLC_SEARCH_EVOLVE_SEARCH_PRIV_H
#define MLC_SEARCH_EVOLVE_SEARCH_PRIV_H

#include "search/evolve/evolve.h"

/* Attempts per population slot before a parent is kept as it is
 * (MetaSchedule's genetic_max_fail_count). */
#define MS_MAX_MUTATE_FAILS 10
/* Feature-cache entries kept between rounds; beyond this the cache is
 * emptied at the start of a round (it only saves work, never changes
 * results). */
#define MS_FEATURE_CACHE_MAX 8192

/* One member of a population: its design trace (with decisions), the hash
 * of the candidate it makes, its features (the rows are borrowed from the
 * cache, valid for the round) and its score. */
typedef struct {
  sch_trace_t *design; /* owned */
  uint64_t hash;
  cm_features_t feat;  /* data borrowed */
  double score;
} ms_item_t;

typedef MLC_VEC(ms_item_t) ms_items_t;

void ms_item_free(ms_item_t *it);
void ms_items_clear(ms_items_t *v); /* frees every item; keeps the vector */
void ms_items_free(ms_items_t *v);

/* Lowered features per candidate hash (open addressing). */
typedef struct {
  uint64_t key;
  bool used;
  bool ok;             /* false: the candidate did not lower */
  cm_features_t feat;  /* owned; its rows never move */
} ms_feat_entry_t;

typedef struct {
  ms_feat_entry_t *slots;
  size_t cap, len;
} ms_feat_cache_t;

void ms_feat_cache_clear(ms_feat_cache_t *c); /* frees everything */

/* A measured trace kept to seed later populations. */
typedef struct {
  sch_trace_t *design; /* owned */
  uint64_t hash;
  double secs;
} ms_elite_t;

struct ms_search {
  const ms_ctx_t *ctx;
  const ms_space_t *space;
  const ms_postproc_t *const *pp;
  int npp;
  const ms_mutator_prob_t *mutators;
  int nmut;
  ms_search_options_t opts;
  uint64_t workload_key;
  char target[512];
  mlc_rng_t rng;
  ms_hset_t measured;         /* from the database, handed out, reported */
  MLC_VEC(ms_elite_t) elite;  /* fastest first, at most elite_cap */
  int elite_cap;
  ms_feat_cache_t cache;
  int stale_rounds;
  bool done;
  char status[320];
  char last_reject[192];      /* why the last sample was rejected */
  struct {                    /* this round's work, for the debug log */
    int samples, valid, mutations, mutated, lowered;
  } stats;
};

/* Keeps design (taking it; freed when not kept) among the elite when it is
 * fast enough: fastest first, ties by hash, at most elite_cap, each hash
 * once. MLC_ENOMEM only. */
int ms_elite_add(ms_search_t *s, sch_trace_t *design, uint64_t hash, double secs);

/* Makes the candidate of `design` (with its decisions, or sampling afresh
 * from `seed`), lowers it once per hash for its features, and appends an
 * item. *valid false (MLC_OK) when the replay, a postprocessor or lowering
 * rejected it (the reason in s->last_reject). */
int ms_item_make(ms_search_t *s, ms_items_t *out, const sch_trace_t *design, bool use_decisions, uint64_t seed,
                 bool *valid);

/* The initial population: the elite replayed with their decisions, then
 * random samples of the space into `randoms` (copied into `pop` too).
 * Sets s->done with a status when sampling gives up. */
int ms_population_init(ms_search_t *s, ms_items_t *pop, ms_items_t *randoms);

/* Scores every item of pop with the model (negative scores count as 0). */
int ms_population_score(ms_search_t *s, cm_model_t *model, ms_items_t *pop);

/* The next generation from a scored population (mutation and selection). */
int ms_population_evolve(ms_search_t *s, const ms_items_t *pop, ms_items_t *next);

#endif /* MLC_SEARCH_EVOLVE_SEARCH_PRIV_H */
