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
/* Most threads ms_search_options_t.threads may ask for. */
#define MS_MAX_THREADS 64

/* One member of a population: its design trace (with decisions), the hash
 * of the candidate it makes, the key of the program that candidate lowers
 * to, its features (the rows are borrowed from the cache, valid for the
 * round) and its score. */
typedef struct {
  sch_trace_t *design; /* owned */
  uint64_t hash;
  uint64_t code;       /* tir_func_key of the lowered candidate */
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
  uint64_t code;       /* tir_func_key of the lowered candidate (when ok) */
  cm_features_t feat;  /* owned; its rows never move */
} ms_feat_entry_t;

typedef struct {
  ms_feat_entry_t *slots;
  size_t cap, len;
} ms_feat_cache_t;

void ms_feat_cache_clear(ms_feat_cache_t *c); /* frees everything */

/* A member to make (ms_make_add, ms_make_run): the candidate of a design
 * trace, and its features when the cache lacks them. */
typedef struct {
  const sch_trace_t *design; /* owned when own_design */
  bool own_design, use_decisions;
  uint64_t seed;
  /* What running it gave: */
  int rc;                    /* MLC_ESCHEDULE: rejected, the reason in why */
  uint64_t hash;             /* the candidate's trace hash */
  sch_trace_t *made;         /* the design part of its trace (owned) */
  bool lowered;              /* the cache lacked it: lower_rc and feat are set */
  int lower_rc;
  uint64_t code;             /* the lowered program's tir_func_key */
  cm_features_t feat;        /* owned until it moves into the cache */
  char why[192];             /* the error of rc or lower_rc */
} ms_make_t;

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
  ms_hset_t measured_code;    /* lowered programs handed out or replayed from the elite */
  MLC_VEC(ms_elite_t) elite;  /* fastest first, at most elite_cap */
  int elite_cap;
  ms_feat_cache_t cache;
  MLC_VEC(ms_make_t) jobs;     /* members to make, in the order asked for */
  int stale_rounds;
  bool done;
  char status[320];
  char last_reject[192];      /* why the last sample was rejected */
  struct {                    /* this round's work, for the debug log */
    int samples, valid, mutations, mutated, lowered, same_code;
  } stats;
};

/* Keeps design (taking it; freed when not kept) among the elite when it is
 * fast enough: fastest first, ties by hash, at most elite_cap, each hash
 * once. MLC_ENOMEM only. */
int ms_elite_add(ms_search_t *s, sch_trace_t *design, uint64_t hash, double secs);

/* Queues the member `design` makes (with its decisions, or sampling afresh
 * from `seed`); `design` is taken when own_design (freed on failure too).
 * MLC_ENOMEM only. */
int ms_make_add(ms_search_t *s, const sch_trace_t *design, bool own_design, bool use_decisions, uint64_t seed);
/* Runs the queued jobs on s->opts.threads threads (this one among them): each
 * makes its candidate (replay, postprocessors) and lowers it for its
 * features unless the cache has them. Then, in the order they were queued,
 * so that nothing depends on the threads: the features join the cache, and
 * each valid member is appended to out (valid[i], when valid is not NULL,
 * says whether job i was). A rejected or unlowerable candidate is not an
 * error (the reason goes to s->last_reject). Clears the queue. */
int ms_make_run(ms_search_t *s, ms_items_t *out, bool *valid);
/* Frees the queued jobs without running them. */
void ms_make_clear(ms_search_t *s);

/* The initial population: the elite replayed with their decisions, then
 * random samples of the space into `randoms` (copied into `pop` too).
 * Sets s->done with a status when sampling gives up. */
int ms_population_init(ms_search_t *s, ms_items_t *pop, ms_items_t *randoms);

/* Scores every item of pop with the model (negative scores count as 0). */
int ms_population_score(ms_search_t *s, cm_model_t *model, ms_items_t *pop);

/* The next generation from a scored population (mutation and selection). */
int ms_population_evolve(ms_search_t *s, const ms_items_t *pop, ms_items_t *next);

#endif /* MLC_SEARCH_EVOLVE_SEARCH_PRIV_H */
