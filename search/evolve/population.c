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
 *
 * Members are made in batches (ms_make_add, ms_make_run): the draws are
 * taken first, on the calling thread; the replays, postprocessors, hashes
 * and lowerings run on s->opts.threads threads; the results are taken in the
 * order asked for. A generation therefore goes in rounds of one attempt per
 * empty slot instead of retrying a slot at once as MetaSchedule does.
 */
#include "search/evolve/search_priv.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

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

/* Whether key has an entry, lowered or not. */
static bool cache_has(const ms_feat_cache_t *c, uint64_t key) {
  return c->cap > 0 && c->slots[cache_slot(c, key)].used;
}

const cm_features_t *ms_search_features(const ms_search_t *s, uint64_t trace_hash) {
  const ms_feat_cache_t *cache = s ? &s->cache : NULL;
  if (!cache || cache->cap == 0) return NULL;
  const ms_feat_entry_t *e = &cache->slots[cache_slot(cache, trace_hash)];
  return e->used && e->ok ? &e->feat : NULL;
}

/* ------------------------------------------------------------------------ */
/* Making members, in batches on several threads                             */
/* ------------------------------------------------------------------------ */

static void job_free(ms_make_t *job) {
  if (job->own_design) sch_trace_free((sch_trace_t *)job->design);
  sch_trace_free(job->made);
  cm_features_free(&job->feat);
  memset(job, 0, sizeof(*job));
}

void ms_make_clear(ms_search_t *s) {
  for (size_t i = 0; i < s->jobs.len; i++) job_free(&s->jobs.data[i]);
  s->jobs.len = 0;
}

int ms_make_add(ms_search_t *s, const sch_trace_t *design, bool own_design, bool use_decisions, uint64_t seed) {
  ms_make_t job = {.design = design, .own_design = own_design, .use_decisions = use_decisions, .seed = seed};
  if (mlc_vec_push(&s->jobs, job) == MLC_OK) return MLC_OK;
  if (own_design) sch_trace_free((sch_trace_t *)design);
  return mlc_error_set(MLC_ENOMEM, "search: out of memory");
}

/* Makes one job's candidate, then lowers it for its features unless the
 * cache has them. Runs on any thread: it writes nothing but the job (the
 * context, the cache and the design are only read while jobs run; errors
 * are per thread). */
static void run_job(const ms_search_t *s, ms_make_t *job) {
  ms_candidate_t c;
  int rc = ms_candidate_make(&c, s->ctx, job->design, job->use_decisions, job->seed, s->pp, s->npp);
  if (rc == MLC_OK) {
    job->hash = c.trace_hash;
    rc = ms_trace_design_part(&job->made, c.trace);
  }
  if (rc == MLC_OK && !cache_has(&s->cache, c.trace_hash)) {
    job->lowered = true;
    job->lower_rc = ms_candidate_features(&job->feat, &job->code, sch_func(c.sch), &s->ctx->target);
    if (job->lower_rc != MLC_OK) snprintf(job->why, sizeof job->why, "%s", mlc_error_last());
  }
  if (rc != MLC_OK) snprintf(job->why, sizeof job->why, "%s", mlc_error_last());
  job->rc = rc;
  ms_candidate_free(&c);
}

typedef struct {
  const ms_search_t *s;
  atomic_size_t next;
} job_pool_t;

static void *pool_worker(void *arg) {
  job_pool_t *p = arg;
  for (size_t i; (i = atomic_fetch_add(&p->next, 1)) < p->s->jobs.len;) run_job(p->s, &p->s->jobs.data[i]);
  return NULL;
}

/* Runs every job, this thread among the workers; a thread that cannot be
 * started leaves its share to the others. */
static void run_jobs(const ms_search_t *s) {
  job_pool_t pool = {.s = s};
  atomic_init(&pool.next, 0);
  pthread_t tids[MS_MAX_THREADS];
  int nt = 0, want = s->opts.threads < (int)s->jobs.len ? s->opts.threads : (int)s->jobs.len;
  while (nt < want - 1 && pthread_create(&tids[nt], NULL, pool_worker, &pool) == 0) nt++;
  pool_worker(&pool);
  for (int i = 0; i < nt; i++) pthread_join(tids[i], NULL);
}

/* The cache entry of a made job's candidate: the cache's, or a new one with
 * the job's features (the first job of a hash wins; a later one lowered it
 * again for nothing). MLC_ENOMEM only. */
static int job_entry(ms_search_t *s, ms_make_t *job, const ms_feat_entry_t **out) {
  ms_feat_cache_t *cache = &s->cache;
  if ((cache->len + 1) * 2 > cache->cap && cache_grow(cache) != MLC_OK) return MLC_ENOMEM;
  ms_feat_entry_t *e = &cache->slots[cache_slot(cache, job->hash)];
  if (!e->used && job->lowered) {
    *e = (ms_feat_entry_t){
        .key = job->hash, .used = true, .ok = job->lower_rc == MLC_OK, .code = job->code, .feat = job->feat};
    job->feat = (cm_features_t){0};
    cache->len++;
    s->stats.lowered++;
    if (!e->ok) snprintf(s->last_reject, sizeof s->last_reject, "lower: %.180s", job->why);
  }
  *out = e;
  return MLC_OK;
}

/* One job's result, in order: an item appended to out when it is valid. */
static int job_collect(ms_search_t *s, ms_make_t *job, ms_items_t *out, bool *valid) {
  *valid = false;
  if (job->rc == MLC_ESCHEDULE) {
    snprintf(s->last_reject, sizeof s->last_reject, "%s", job->why);
    return MLC_OK;
  }
  if (job->rc != MLC_OK) return mlc_error_set(job->rc, "%s", job->why);
  const ms_feat_entry_t *e = NULL;
  int rc = job_entry(s, job, &e);
  if (rc != MLC_OK || !e->used || !e->ok) return rc;
  ms_item_t it = {.design = job->made, .hash = job->hash, .code = e->code, .feat = e->feat};
  if (mlc_vec_push(out, it) != MLC_OK) return mlc_error_set(MLC_ENOMEM, "search: out of memory growing a population");
  job->made = NULL;
  *valid = true;
  return MLC_OK;
}

int ms_make_run(ms_search_t *s, ms_items_t *out, bool *valid) {
  if (s->jobs.len == 0) return MLC_OK;
  run_jobs(s);
  int rc = MLC_OK;
  for (size_t i = 0; i < s->jobs.len; i++) {
    bool ok = false;
    if (rc == MLC_OK) rc = job_collect(s, &s->jobs.data[i], out, &ok);
    if (valid) valid[i] = ok;
  }
  ms_make_clear(s);
  return rc;
}

/* A copy of it (its own design trace; the features stay borrowed). */
static int item_copy(ms_item_t *out, const ms_item_t *it) {
  *out = *it;
  out->design = sch_trace_copy(it->design);
  return out->design ? MLC_OK : mlc_error_set(MLC_ENOMEM, "search: out of memory copying a member");
}

/* A copy of it appended to out. */
static int item_push_copy(ms_items_t *out, const ms_item_t *it) {
  ms_item_t copy;
  int rc = item_copy(&copy, it);
  if (rc == MLC_OK && mlc_vec_push(out, copy) != MLC_OK) {
    ms_item_free(&copy);
    rc = mlc_error_set(MLC_ENOMEM, "search: out of memory growing a population");
  }
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Initial population                                                        */
/* ------------------------------------------------------------------------ */

/* One sampling round: `tries` random samples of the space into randoms;
 * *got is how many were valid. */
static int sample_round(ms_search_t *s, ms_items_t *randoms, int tries, int *got) {
  size_t before = randoms->len;
  int rc = MLC_OK;
  for (int i = 0; i < tries && rc == MLC_OK; i++) {
    const sch_trace_t *t = s->space->traces[mlc_rng_below(&s->rng, (uint64_t)s->space->n)];
    rc = ms_make_add(s, t, false, false, mlc_rng_fork_seed(&s->rng));
  }
  if (rc == MLC_OK) rc = ms_make_run(s, randoms, NULL);
  *got = (int)(randoms->len - before);
  s->stats.samples += tries;
  s->stats.valid += *got;
  return rc;
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

/* The elite replayed with their decisions into pop. Each is measured, even
 * when today's postprocessors record it differently from the record
 * (another version): never measured again, nor is any other trace that
 * lowers to the same program. */
static int replay_elite(ms_search_t *s, ms_items_t *pop) {
  int rc = MLC_OK;
  for (size_t i = 0; i < s->elite.len && rc == MLC_OK; i++)
    rc = ms_make_add(s, s->elite.data[i].design, false, true, mlc_rng_fork_seed(&s->rng));
  if (rc == MLC_OK) rc = ms_make_run(s, pop, NULL);
  for (size_t i = 0; i < pop->len && rc == MLC_OK; i++) {
    rc = ms_hset_add(&s->measured, pop->data[i].hash);
    if (rc == MLC_OK) rc = ms_hset_add(&s->measured_code, pop->data[i].code);
  }
  if (rc == MLC_OK && pop->len < s->elite.len)
    MLC_DEBUG("search: %zu measured traces no longer apply (the last: %s)", s->elite.len - pop->len, s->last_reject);
  return rc;
}

int ms_population_init(ms_search_t *s, ms_items_t *pop, ms_items_t *randoms) {
  ms_items_clear(pop);
  ms_items_clear(randoms);
  if (s->space->n == 0) {
    snprintf(s->status, sizeof s->status, "gave up: the design space is empty");
    s->done = true;
    return MLC_OK;
  }
  int rc = replay_elite(s, pop);
  int places = s->opts.population - (int)pop->len;
  if (rc == MLC_OK) rc = sample_space(s, randoms, places > 0 ? places : 1);
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

/* A slot of the next generation: its member once found, and the parent
 * drawn last (kept as it is when every attempt failed). */
typedef struct {
  ms_item_t item;
  bool filled;
  int parent;
} slot_t;

/* One attempt for each empty slot (MetaSchedule's f_find_candidate, one
 * try): a parent drawn by score and a mutator by mass; "keep as is"
 * fills the slot at once (once per parent), a mutation becomes a job.
 * A mutator that finds nothing to change fails the attempt. jobs_slot[j]
 * is the slot of job j; *filled counts the filled slots. */
static int draw_attempts(ms_search_t *s, const ms_items_t *pop, const double *scores, const double *masses,
                         bool *taken, slot_t *slots, int *jobs_slot, int *filled) {
  int rc = MLC_OK;
  for (int k = 0; k < s->opts.population && rc == MLC_OK; k++) {
    if (slots[k].filled) continue;
    int parent = slots[k].parent = ms_sample_weighted(&s->rng, scores, (int)pop->len);
    int m = ms_sample_weighted(&s->rng, masses, s->nmut + 1);
    if (m == 0) {
      if (taken[parent]) continue;
      taken[parent] = true;
      if ((rc = item_copy(&slots[k].item, &pop->data[parent])) == MLC_OK) slots[k].filled = true, ++*filled;
      continue;
    }
    const ms_mutator_t *mut = s->mutators[m - 1].mutator;
    sch_trace_t *mutated = NULL;
    s->stats.mutations++;
    rc = mut->apply(mut, s->ctx, pop->data[parent].design, &s->rng, &mutated);
    if (rc != MLC_OK) {
      rc = rc == MLC_ENOMEM ? rc : MLC_OK;
      continue;
    }
    jobs_slot[s->jobs.len] = k;
    rc = ms_make_add(s, mutated, true, true, mlc_rng_fork_seed(&s->rng));
  }
  return rc;
}

/* The jobs of one round of attempts made; their members fill their slots. */
static int collect_attempts(ms_search_t *s, slot_t *slots, const int *jobs_slot, bool *valid, ms_items_t *made,
                            int *filled) {
  size_t njobs = s->jobs.len;
  int rc = ms_make_run(s, made, valid);
  for (size_t j = 0, m = 0; j < njobs && rc == MLC_OK; j++) {
    if (!valid[j]) continue;
    slots[jobs_slot[j]].item = made->data[m++];
    slots[jobs_slot[j]].filled = true;
    ++*filled;
    s->stats.mutated++;
  }
  if (rc == MLC_OK) made->len = 0; /* the slots own them now */
  return rc;
}

int ms_population_evolve(ms_search_t *s, const ms_items_t *pop, ms_items_t *next) {
  ms_items_clear(next);
  if (pop->len == 0) return MLC_OK;
  int n = s->opts.population, rc = MLC_OK;
  double *scores = mlc_malloc(sizeof(double) * pop->len);
  double *masses = mlc_malloc(sizeof(double) * (size_t)(s->nmut + 1));
  bool *taken = mlc_calloc(pop->len, sizeof(bool)), *valid = mlc_calloc((size_t)n, sizeof(bool));
  slot_t *slots = mlc_calloc((size_t)n, sizeof(slot_t));
  int *jobs_slot = mlc_calloc((size_t)n, sizeof(int));
  ms_items_t made = {0};
  if (!scores || !masses || !taken || !valid || !slots || !jobs_slot) {
    rc = mlc_error_set(MLC_ENOMEM, "search: out of memory evolving a population");
    goto done;
  }
  for (size_t i = 0; i < pop->len; i++) scores[i] = pop->data[i].score;
  mutator_masses(s, masses);
  /* MS_MAX_MUTATE_FAILS + 1 attempts per slot, each round of attempts
   * made at once; then the last parent drawn is kept. */
  ms_make_clear(s);
  int filled = 0;
  for (int attempt = 0; attempt <= MS_MAX_MUTATE_FAILS && filled < n && rc == MLC_OK; attempt++) {
    if ((rc = draw_attempts(s, pop, scores, masses, taken, slots, jobs_slot, &filled)) == MLC_OK)
      rc = collect_attempts(s, slots, jobs_slot, valid, &made, &filled);
  }
  for (int k = 0; k < n && rc == MLC_OK; k++) {
    if (!slots[k].filled && (rc = item_copy(&slots[k].item, &pop->data[slots[k].parent])) != MLC_OK) break;
    if (mlc_vec_push(next, slots[k].item) != MLC_OK)
      rc = mlc_error_set(MLC_ENOMEM, "search: out of memory growing a population");
    else slots[k].item = (ms_item_t){0};
  }
done:
  ms_make_clear(s);
  if (slots)
    for (int k = 0; k < n; k++) ms_item_free(&slots[k].item);
  ms_items_free(&made);
  mlc_free(scores);
  mlc_free(masses);
  mlc_free(taken);
  mlc_free(valid);
  mlc_free(slots);
  mlc_free(jobs_slot);
  return rc;
}
