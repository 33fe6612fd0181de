/*
 * round.c - one round of the evolutionary search and its batch
 * (ms_search_next), and what measurements teach it (ms_search_report).
 *
 * A round (MetaSchedule's GenerateMeasureCandidates): the initial
 * population, then generations + 1 scorings; after each scoring the members
 * never measured (and not seen earlier in the round) enter a heap that
 * keeps the n best-scored; between scorings the population evolves. The
 * batch takes the heap's best, fastest first, and an eps-greedy share of
 * the round's random samples in random order, skipping anything measured or
 * already in the batch; what it hands out joins the measured set at once.
 * "Measured" is by trace hash (the database's records, what was handed
 * out) and by the program a member lowers to (tir_func_key of the lowered
 * function, known for what this search made: what it handed out and the
 * elite it replayed): traces that differ only where lowering erases the
 * difference make one program, measured once.
 * A round that finds nothing new is stale; max_stale_rounds stale rounds in
 * a row end the task.
 */
#include "search/evolve/search_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------------------ */
/* The best-scored unmeasured members (MetaSchedule's SizedHeap)            */
/* ------------------------------------------------------------------------ */

typedef struct {
  int cap;
  ms_items_t items; /* unordered; at most cap */
} best_t;

/* Whether a ranks before b: higher score, then lower hash (a total order,
 * so the batch never depends on the order members were met in). */
static bool ranks_before(const ms_item_t *a, const ms_item_t *b) {
  return a->score > b->score || (a->score == b->score && a->hash < b->hash);
}

static int best_push(best_t *b, const ms_item_t *it) {
  size_t worst = 0;
  if ((int)b->items.len >= b->cap) {
    for (size_t i = 1; i < b->items.len; i++)
      if (ranks_before(&b->items.data[worst], &b->items.data[i])) worst = i;
    if (!ranks_before(it, &b->items.data[worst])) return MLC_OK;
  }
  ms_item_t copy = *it;
  copy.design = sch_trace_copy(it->design);
  if (!copy.design) return mlc_error_set(MLC_ENOMEM, "search: out of memory");
  if ((int)b->items.len < b->cap) {
    if (mlc_vec_push(&b->items, copy) == MLC_OK) return MLC_OK;
    sch_trace_free(copy.design);
    return mlc_error_set(MLC_ENOMEM, "search: out of memory");
  }
  ms_item_free(&b->items.data[worst]);
  b->items.data[worst] = copy;
  return MLC_OK;
}

static int cmp_rank(const void *x, const void *y) {
  const ms_item_t *a = x, *b = y;
  return ranks_before(a, b) ? -1 : ranks_before(b, a) ? 1 : 0;
}

/* Whether it was measured: its trace, or another one that lowers to the
 * same program (MetaSchedule measures those again; their times differ only
 * by noise, so the trial is wasted). */
static bool was_measured(const ms_search_t *s, const ms_item_t *it) {
  return ms_hset_has(&s->measured, it->hash) || ms_hset_has(&s->measured_code, it->code);
}

/* Offers every member of pop never measured nor seen this round (by the
 * program it lowers to: a trace makes one program). */
static int offer(ms_search_t *s, const ms_items_t *pop, ms_hset_t *seen, best_t *best) {
  int rc = MLC_OK;
  for (size_t i = 0; i < pop->len && rc == MLC_OK; i++) {
    const ms_item_t *it = &pop->data[i];
    if (ms_hset_has(&s->measured, it->hash) || ms_hset_has(seen, it->code)) continue;
    if ((rc = ms_hset_add(seen, it->code)) != MLC_OK) break;
    if (ms_hset_has(&s->measured_code, it->code)) s->stats.same_code++;
    else rc = best_push(best, it);
  }
  return rc;
}

/* ------------------------------------------------------------------------ */
/* A round                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct {
  ms_items_t pop, next, randoms;
  best_t best;
  ms_hset_t seen;
} round_t;

static void round_free(round_t *r) {
  ms_items_free(&r->pop);
  ms_items_free(&r->next);
  ms_items_free(&r->randoms);
  ms_items_free(&r->best.items);
  ms_hset_free(&r->seen);
}

/* The random samples' scores from the first scoring (they sit after the
 * elite in the initial population). */
static void copy_random_scores(round_t *r) {
  size_t first = r->pop.len - r->randoms.len;
  for (size_t i = 0; i < r->randoms.len; i++) r->randoms.data[i].score = r->pop.data[first + i].score;
}

static int evolve(ms_search_t *s, cm_model_t *model, round_t *r) {
  int rc = MLC_OK;
  for (int gen = 0; rc == MLC_OK && r->pop.len > 0; gen++) {
    if ((rc = ms_population_score(s, model, &r->pop)) != MLC_OK) break;
    if (gen == 0) copy_random_scores(r);
    if ((rc = offer(s, &r->pop, &r->seen, &r->best)) != MLC_OK || gen == s->opts.generations) break;
    if ((rc = ms_population_evolve(s, &r->pop, &r->next)) != MLC_OK) break;
    ms_items_t tmp = r->pop;
    r->pop = r->next;
    r->next = tmp;
  }
  if (r->best.items.len > 1) qsort(r->best.items.data, r->best.items.len, sizeof(ms_item_t), cmp_rank);
  return rc;
}

/* Appends the candidate of item to the batch when it is new. */
static int take(ms_search_t *s, const ms_item_t *it, ms_candidate_t *batch, int *nb) {
  if (was_measured(s, it)) return MLC_OK;
  ms_candidate_t c;
  int rc = ms_candidate_make(&c, s->ctx, it->design, true, mlc_rng_fork_seed(&s->rng), s->pp, s->npp);
  if (rc == MLC_ESCHEDULE) return MLC_OK; /* made before: cannot happen, but never hand out a broken one */
  if (rc != MLC_OK) return rc;
  if (ms_hset_has(&s->measured, c.trace_hash) || (rc = ms_hset_add(&s->measured, c.trace_hash)) != MLC_OK ||
      (rc = ms_hset_add(&s->measured_code, it->code)) != MLC_OK) {
    ms_candidate_free(&c);
    return rc;
  }
  c.score = it->score;
  batch[(*nb)++] = c;
  return MLC_OK;
}

/* The batch (MetaSchedule's PickWithEpsGreedy): the first n - eps * n from
 * the heap's best (random samples when it runs out), the rest from the
 * random samples in random order (the best when those run out). */
static int pick(ms_search_t *s, round_t *r, int n, ms_candidate_t *batch, int *nb) {
  int nrand = (int)(n * s->opts.eps_greedy), nbest = n - nrand, ib = 0, ir = 0, rc = MLC_OK;
  int nr = (int)r->randoms.len, nbst = (int)r->best.items.len;
  int *perm = mlc_malloc(sizeof(int) * (size_t)(nr > 0 ? nr : 1));
  if (!perm) return mlc_error_set(MLC_ENOMEM, "search: out of memory");
  ms_shuffle(&s->rng, perm, nr);
  *nb = 0;
  while (*nb < n && rc == MLC_OK && (ib < nbst || ir < nr)) {
    bool want_best = *nb < nbest;
    const ms_item_t *it = (want_best && ib < nbst) || ir >= nr ? &r->best.items.data[ib++]
                                                              : &r->randoms.data[perm[ir++]];
    rc = take(s, it, batch, nb);
  }
  mlc_free(perm);
  return rc;
}

/* One round; *nb = 0 when it found nothing new (or sampling gave up). */
static int run_round(ms_search_t *s, cm_model_t *model, int n, ms_candidate_t *batch, int *nb) {
  round_t r = {0};
  r.best.cap = n;
  *nb = 0;
  memset(&s->stats, 0, sizeof s->stats);
  ms_make_clear(s); /* none, unless an error left some */
  if (s->cache.len > MS_FEATURE_CACHE_MAX) ms_feat_cache_clear(&s->cache);
  int rc = ms_population_init(s, &r.pop, &r.randoms);
  size_t nelite = r.pop.len - r.randoms.len;
  if (rc == MLC_OK && !s->done) rc = evolve(s, model, &r);
  if (rc == MLC_OK && !s->done) rc = pick(s, &r, n, batch, nb);
  MLC_DEBUG("search %s: round: %zu elite, %d/%d valid samples, %d/%d mutations valid, %d lowered, %d the same "
            "program as a measured one, %zu in the heap, %d new",
            s->ctx->task_name ? s->ctx->task_name : "", nelite, s->stats.valid, s->stats.samples, s->stats.mutated,
            s->stats.mutations, s->stats.lowered, s->stats.same_code, r.best.items.len, *nb);
  round_free(&r);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* The public calls                                                          */
/* ------------------------------------------------------------------------ */

static void free_batch(ms_candidate_t *batch, int n) {
  for (int i = 0; i < n; i++) ms_candidate_free(&batch[i]);
  mlc_free(batch);
}

int ms_search_next(ms_search_t *s, cm_model_t *model, uint64_t group, int n, ms_candidate_t **out, int *nout,
                   bool *done) {
  if (!out || !nout || !done) return mlc_error_set(MLC_EINVAL, "ms_search_next: no output");
  *out = NULL;
  *nout = 0;
  *done = false;
  if (!s || !model) return mlc_error_set(MLC_EINVAL, "ms_search_next: no search or no cost model");
  if (n < 1) return mlc_error_set(MLC_EINVAL, "ms_search_next: batch size %d must be at least 1", n);
  ms_candidate_t *batch = mlc_calloc((size_t)n, sizeof(*batch));
  if (!batch) return mlc_error_set(MLC_ENOMEM, "search: out of memory");
  int nb = 0, rc = MLC_OK;
  while (!s->done) {
    if ((rc = run_round(s, model, n, batch, &nb)) != MLC_OK || nb > 0 || s->done) break;
    if (++s->stale_rounds >= s->opts.max_stale_rounds) {
      snprintf(s->status, sizeof s->status,
               "done: %d rounds in a row found nothing new to measure (the space looks exhausted; %zu known "
               "candidates)",
               s->stale_rounds, ms_hset_len(&s->measured));
      s->done = true;
    }
  }
  if (rc != MLC_OK || nb == 0) {
    free_batch(batch, nb);
    *done = rc == MLC_OK && s->done;
    return rc;
  }
  s->stale_rounds = 0;
  *out = batch;
  *nout = nb;
  return MLC_OK;
}

int ms_search_report(ms_search_t *s, const ms_candidate_t *c, const double *secs, int n) {
  if (!s || n < 0 || (n > 0 && (!c || !secs))) return mlc_error_set(MLC_EINVAL, "ms_search_report: bad arguments");
  for (int i = 0; i < n; i++)
    if (!c[i].trace) return mlc_error_set(MLC_EINVAL, "ms_search_report: candidate %d has no trace", i);
  int rc = MLC_OK;
  for (int i = 0; i < n && rc == MLC_OK; i++) {
    if ((rc = ms_hset_add(&s->measured, c[i].trace_hash)) != MLC_OK) break;
    if (!(secs[i] > 0) || !isfinite(secs[i])) continue; /* failures teach the model, not the elite */
    sch_trace_t *design = NULL;
    if ((rc = ms_trace_design_part(&design, c[i].trace)) == MLC_OK)
      rc = ms_elite_add(s, design, c[i].trace_hash, secs[i]);
  }
  return rc;
}
