/*
 * search.c - the evolutionary search of one task (search.h; MetaSchedule's
 * EvolutionarySearch). A round: an initial population (the elite of
 * measured traces, then random samples of the design space), `generations`
 * rounds of scoring with the cost model and mutation, the best-scored
 * candidates never measured kept in a bounded heap, and the batch: mostly
 * those, with an eps-greedy share of random samples. population.c holds the
 * population machinery; docs/search/evolutionary.md the whole story.
 *
 * The measured set holds every trace hash the database has for the task
 * (read once at creation), every candidate handed out by ms_search_next,
 * and every one reported; nothing in it is handed out again. The elite
 * (fastest measured traces: the database's top-k at creation, then what is
 * reported) seeds each round's population, as MetaSchedule seeds from the
 * database.
 */
#include "search/evolve/search_priv.h"

void ms_search_options_default(ms_search_options_t *o) {
  o->population = 512;
  o->init_db_fraction = 0.2;
  o->init_min_valid = 50;
  o->max_fail_rounds = 5;
  o->generations = 4;
  o->mutation_prob = 0.85;
  o->eps_greedy = 0.05;
  o->max_stale_rounds = 5;
  o->threads = 0;
}

static bool in_unit(double x) { return x >= 0 && x <= 1; }

static int check_options(const ms_search_options_t *o) {
  if (o->population < 1) return mlc_error_set(MLC_EINVAL, "search: population %d must be at least 1", o->population);
  if (!in_unit(o->init_db_fraction) || !in_unit(o->mutation_prob) || !in_unit(o->eps_greedy))
    return mlc_error_set(MLC_EINVAL,
                         "search: init_db_fraction (%g), mutation_prob (%g) and eps_greedy (%g) must be in [0, 1]",
                         o->init_db_fraction, o->mutation_prob, o->eps_greedy);
  if (o->init_min_valid < 1 || o->max_fail_rounds < 1 || o->max_stale_rounds < 1 || o->generations < 0)
    return mlc_error_set(MLC_EINVAL,
                         "search: init_min_valid (%d), max_fail_rounds (%d) and max_stale_rounds (%d) must be at "
                         "least 1, generations (%d) at least 0",
                         o->init_min_valid, o->max_fail_rounds, o->max_stale_rounds, o->generations);
  if (o->threads < 0 || o->threads > MS_MAX_THREADS)
    return mlc_error_set(MLC_EINVAL, "search: threads (%d) must be 0 (one per CPU) to %d", o->threads,
                         MS_MAX_THREADS);
  return MLC_OK;
}

static int check_inputs(const ms_ctx_t *ctx, const ms_space_t *space, const ms_postproc_t *const *pp, int npp,
                        const ms_mutator_prob_t *mutators, int nmut) {
  if (!ctx || !ctx->workload) return mlc_error_set(MLC_EINVAL, "search: no task context or workload");
  if (!space || (space->n > 0 && !space->traces)) return mlc_error_set(MLC_EINVAL, "search: no design space");
  for (int i = 0; i < space->n; i++)
    if (!space->traces[i]) return mlc_error_set(MLC_EINVAL, "search: design space trace %d is missing", i);
  if (npp < 0 || (npp > 0 && !pp)) return mlc_error_set(MLC_EINVAL, "search: %d postprocessors without an array", npp);
  if (nmut < 0 || (nmut > 0 && !mutators))
    return mlc_error_set(MLC_EINVAL, "search: %d mutators without an array", nmut);
  for (int i = 0; i < nmut; i++)
    if (!mutators[i].mutator || !mutators[i].mutator->apply || !(mutators[i].prob >= 0))
      return mlc_error_set(MLC_EINVAL, "search: mutator %d is missing or has probability %g", i, mutators[i].prob);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* The elite                                                                 */
/* ------------------------------------------------------------------------ */

static void elite_free(ms_search_t *s) {
  for (size_t i = 0; i < s->elite.len; i++) sch_trace_free(s->elite.data[i].design);
  mlc_vec_free(&s->elite);
}

int ms_elite_add(ms_search_t *s, sch_trace_t *design, uint64_t hash, double secs) {
  size_t at = 0;
  for (size_t i = 0; i < s->elite.len; i++) {
    if (s->elite.data[i].hash == hash) goto drop;
    const ms_elite_t *e = &s->elite.data[i];
    if (e->secs < secs || (e->secs == secs && e->hash < hash)) at = i + 1;
  }
  if ((int)at >= s->elite_cap) goto drop;
  ms_elite_t e = {design, hash, secs};
  if (mlc_vec_push(&s->elite, e) != MLC_OK) {
    sch_trace_free(design);
    return mlc_error_set(MLC_ENOMEM, "search: out of memory keeping the elite");
  }
  memmove(&s->elite.data[at + 1], &s->elite.data[at], sizeof(ms_elite_t) * (s->elite.len - 1 - at));
  s->elite.data[at] = e;
  if ((int)s->elite.len > s->elite_cap) sch_trace_free(s->elite.data[--s->elite.len].design);
  return MLC_OK;
drop:
  sch_trace_free(design);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Creation: what the database already holds                                 */
/* ------------------------------------------------------------------------ */

/* The traces the database holds for this task are not measured again,
 * except those whose worker died on every attempt (`worker-lost`): that says
 * something about the machines, nothing about the candidate. */
static int load_measured(ms_search_t *s, db_t *db) {
  db_result_t *res = NULL;
  db_filter_t f = {0};
  f.workload_key = s->workload_key;
  f.target = s->target;
  int rc = db_records(db, &res, &f);
  for (int i = 0; rc == MLC_OK && i < res->nrecords; i++)
    if (res->records[i].error_kind != MLC_ERROR_KIND_WORKER_LOST)
      rc = ms_hset_add(&s->measured, res->records[i].trace_hash);
  db_result_free(res);
  return rc;
}

/* The design part of a record's trace, or NULL (with a warning) when the
 * record's trace does not read. */
static sch_trace_t *record_design(const db_record_t *r) {
  sch_trace_t *t = NULL, *design = NULL;
  if (sch_trace_from_json_text(&t, r->trace_json ? r->trace_json : "", "record trace") == MLC_OK)
    ms_trace_design_part(&design, t);
  if (!design) MLC_WARN("search: record %s: trace skipped: %s", r->id, mlc_error_last());
  sch_trace_free(t);
  return design;
}

static int load_elite(ms_search_t *s, db_t *db) {
  if (s->elite_cap <= 0) return MLC_OK;
  db_result_t *res = NULL;
  int rc = db_top_k(db, &res, s->workload_key, s->target, s->elite_cap);
  for (int i = 0; rc == MLC_OK && i < res->nrecords; i++) {
    const db_record_t *r = &res->records[i];
    sch_trace_t *design = record_design(r);
    if (design) rc = ms_elite_add(s, design, r->trace_hash, db_record_median(r));
  }
  db_result_free(res);
  return rc;
}

int ms_search_create(ms_search_t **out, const ms_ctx_t *ctx, const ms_space_t *space,
                     const ms_postproc_t *const *pp, int npp, const ms_mutator_prob_t *mutators, int nmut,
                     const ms_search_options_t *opts, db_t *db) {
  if (!out) return mlc_error_set(MLC_EINVAL, "search: no output");
  *out = NULL;
  ms_search_options_t o;
  if (opts) o = *opts;
  else ms_search_options_default(&o);
  int rc = check_inputs(ctx, space, pp, npp, mutators, nmut);
  if (rc == MLC_OK) rc = check_options(&o);
  if (rc != MLC_OK) return rc;
  ms_search_t *s = mlc_calloc(1, sizeof(*s));
  if (!s) return mlc_error_set(MLC_ENOMEM, "search: out of memory");
  *s = (ms_search_t){.ctx = ctx, .space = space, .pp = pp, .npp = npp, .mutators = mutators, .nmut = nmut, .opts = o};
  s->workload_key = tir_func_key(ctx->workload);
  mlc_target_str(&ctx->target, s->target, sizeof s->target);
  mlc_rng_seed(&s->rng, ctx->seed);
  s->elite_cap = (int)(o.population * o.init_db_fraction);
  int cores = mlc_cpu_host_cores();
  if (!s->opts.threads) s->opts.threads = cores < 16 ? cores : 16;
  if (db && (rc = load_measured(s, db)) == MLC_OK) rc = load_elite(s, db);
  if (rc != MLC_OK) {
    mlc_error_prefix("search: reading the database");
    ms_search_free(s);
    return rc;
  }
  *out = s;
  return MLC_OK;
}

void ms_search_free(ms_search_t *s) {
  if (!s) return;
  ms_hset_free(&s->measured);
  ms_hset_free(&s->measured_code);
  elite_free(s);
  ms_make_clear(s);
  mlc_vec_free(&s->jobs);
  ms_feat_cache_clear(&s->cache);
  mlc_free(s);
}

const char *ms_search_status(const ms_search_t *s) { return s ? s->status : ""; }
