/*
 * tune_tasks.c - the tasks of a tuning run (tune_internal.h): functions
 * folded by workload key, their workloads in the database, what the
 * database already knows about them (trials, best time, the default
 * schedule's time), their search state, and the records of what was measured.
 *
 * The default schedule is mlc_default_schedule's (compiler.h): what
 * mlc-compile builds for a function the database has no record of (outer
 * loops parallel, inner vectorized, matmul-like blocks tiled). Its time is
 * the baseline of "speedup" in the summary, so the speedup is what tuning
 * adds over compiling without it. It is measured once per (workload,
 * target) and stored like any record, so a resumed run reuses it and
 * mlc-compile finds it when no trial beat it; it is not a trial (the budget
 * and the trial counts leave it out). For a target without a default
 * schedule it is the empty trace (the program as written). Records of the
 * empty trace that earlier versions stored as the baseline are not counted
 * as trials either.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/compiler.h"
#include "search/tune/tune_internal.h"

#ifndef MLC_VERSION
#define MLC_VERSION "0.0.0"
#endif

double tune_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int64_t unix_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The empty trace's hash (a fresh schedule's trace, well formed). */
static int make_empty_hash(tune_run_t *run, const tir_func_t *f) {
  sch_t *sch = NULL;
  int st = sch_create(&sch, f, 0, SCH_ERRORS_FAST);
  if (st != MLC_OK) return st;
  char *text = NULL;
  st = ms_trace_text(&text, &run->empty_hash, sch_get_trace(sch));
  sch_free(sch);
  mlc_free(text);
  return st;
}

int ms_default_trace(sch_trace_t **trace, char **json, const tir_func_t *f, const mlc_target_t *target) {
  *trace = NULL;
  if (json) *json = NULL;
  tir_func_t *main_fn = tir_func_clone(f);
  if (!main_fn) return mlc_error_set(MLC_ENOMEM, "out of memory");
  main_fn->name = "main";
  sch_t *sch = NULL;
  int st = sch_create(&sch, main_fn, 0, SCH_ERRORS_FAST);
  if (st == MLC_OK) st = mlc_default_schedule(sch, target);
  if (st == MLC_EUNSUPPORTED) {
    sch_free(sch);
    sch = NULL;
    st = sch_create(&sch, main_fn, 0, SCH_ERRORS_FAST);
  }
  tir_func_free(main_fn);
  if (st == MLC_OK && !(*trace = sch_trace_copy(sch_get_trace(sch)))) st = mlc_error_set(MLC_ENOMEM, "out of memory");
  sch_free(sch);
  if (st == MLC_OK && json) st = ms_trace_text(json, NULL, *trace);
  if (st != MLC_OK) {
    sch_trace_free(*trace);
    *trace = NULL;
  }
  return st;
}

/* t's default schedule (ms_default_trace). */
static int make_default_trace(tune_run_t *run, tune_task_t *t) {
  int st = ms_default_trace(&t->default_trace, &t->default_json, t->func, run->target);
  if (st != MLC_OK) {
    mlc_error_prefix("the default schedule of %s", t->name);
    return st;
  }
  t->default_hash = mlc_hash64(t->default_json, strlen(t->default_json), 0);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Creation                                                                  */
/* ------------------------------------------------------------------------ */

/* The task f folds into, or NULL. Equal keys are confirmed structurally. */
static tune_task_t *find_task(tune_run_t *run, const tir_func_t *f, uint64_t key, const char *name) {
  for (int i = 0; i < run->ntasks; i++) {
    tune_task_t *t = &run->tasks[i];
    if (t->key != key) continue;
    char why[160];
    if (tir_func_equal(t->func, f, why, sizeof why)) return t;
    MLC_WARN("%s and %s share the workload key %016llx but differ (%s): tuned as separate tasks", t->name, name,
             (unsigned long long)key, why);
  }
  return NULL;
}

/* Records already in the database for the task (the default's excluded), and
 * the best of them. */
static int count_db(tune_run_t *run, tune_task_t *t) {
  db_result_t *res = NULL;
  db_filter_t filter = {.workload_key = t->key, .target = run->target_str};
  int st = db_records(run->db, &res, &filter);
  if (st != MLC_OK) return st;
  for (int i = 0; i < res->nrecords; i++) {
    const db_record_t *r = &res->records[i];
    if (r->trace_hash == t->default_hash || r->trace_hash == run->empty_hash) continue;
    t->trials_before++;
    double secs = r->error_kind == MLC_ERROR_KIND_NONE ? db_record_median(r) : 0;
    if (secs > 0 && (t->best_secs == 0 || secs < t->best_secs)) t->best_secs = secs;
  }
  db_result_free(res);
  return MLC_OK;
}

int tune_task_recount(tune_run_t *run, tune_task_t *t) {
  t->trials_before = 0;
  t->best_secs = 0;
  return count_db(run, t);
}

static int add_task(tune_run_t *run, tir_func_t *f, const char *name, uint64_t key) {
  tune_task_t *t = &run->tasks[run->ntasks++];
  memset(t, 0, sizeof *t);
  t->func = f;
  t->name = name;
  t->key = key;
  t->group = mlc_hash64(run->target_str, strlen(run->target_str), key);
  t->weight = 1;
  t->flop = ms_func_flop(f);
  char *script = tir_print_func(f);
  if (!script) return mlc_error_set(MLC_ENOMEM, "out of memory printing %s", name);
  int st = db_commit_workload(run->db, key, name, script);
  mlc_free(script);
  if (st != MLC_OK) mlc_error_prefix("committing the workload of %s", name);
  return st;
}

int tune_tasks_create(tune_run_t *run, tir_func_t *const *funcs, const char *const *names, int n) {
  run->tasks = mlc_calloc((size_t)(n > 0 ? n : 1), sizeof *run->tasks);
  if (!run->tasks) return mlc_error_set(MLC_ENOMEM, "out of memory");
  run->ntasks = 0;
  int st = n > 0 ? make_empty_hash(run, funcs[0]) : MLC_OK;
  for (int i = 0; i < n && st == MLC_OK; i++) {
    const char *name = names && names[i] ? names[i] : funcs[i]->name;
    uint64_t key = tir_func_key(funcs[i]);
    tune_task_t *t = find_task(run, funcs[i], key, name);
    if (t) {
      t->weight++;
      continue;
    }
    st = add_task(run, funcs[i], name, key);
    if (st == MLC_OK) st = make_default_trace(run, &run->tasks[run->ntasks - 1]);
    if (st == MLC_OK) st = count_db(run, &run->tasks[run->ntasks - 1]);
  }
  return st;
}

void tune_task_start(tune_run_t *run, tune_task_t *t, uint64_t seed) {
  const ms_tune_options_t *o = run->opts;
  ms_ctx_init(&t->ctx, t->func, t->name, run->target, seed);
  int nrules = 0, npp = 0, nmut = 0;
  const ms_rule_t *const *rules = ms_rules_default(&t->ctx, &nrules);
  const ms_postproc_t *const *pp = ms_postprocs_default(&t->ctx, &npp);
  const ms_mutator_prob_t *muts = ms_mutators_default(&t->ctx, &nmut);
  int st = ms_space_generate(&t->space, &t->ctx, rules, nrules);
  if (st == MLC_OK) {
    t->has_space = true;
    st = ms_search_create(&t->search, &t->ctx, &t->space, pp, npp, muts, nmut, &o->search, run->db);
  }
  if (st == MLC_OK) return;
  snprintf(t->status, sizeof t->status, "could not start: %s", mlc_error_or(mlc_status_str(st)));
  MLC_WARN("%s: %s", t->name, t->status);
  t->search = NULL;
  t->done = true;
}

/* ------------------------------------------------------------------------ */
/* The default schedule                                                      */
/* ------------------------------------------------------------------------ */

/* The default's time from the database: *found when it has a record. */
static int default_from_db(tune_run_t *run, tune_task_t *t, uint64_t hash, bool *found) {
  db_result_t *res = NULL;
  db_filter_t filter = {.workload_key = t->key, .target = run->target_str, .trace_hash = hash};
  int st = db_records(run->db, &res, &filter);
  if (st != MLC_OK) return st;
  *found = res->nrecords > 0;
  for (int i = 0; i < res->nrecords; i++) {
    const db_record_t *r = &res->records[i];
    double secs = r->error_kind == MLC_ERROR_KIND_NONE ? db_record_median(r) : 0;
    if (secs > 0 && (t->default_secs == 0 || secs < t->default_secs)) t->default_secs = secs;
  }
  db_result_free(res);
  return MLC_OK;
}

int tune_task_default(tune_run_t *run, tune_task_t *t) {
  bool found = false;
  int st = default_from_db(run, t, t->default_hash, &found);
  if (st != MLC_OK || found) return st;
  /* The default schedule is measured as candidates are. Where it is the
   * empty trace, the untuned program can take seconds a call (GMM-1024:
   * 5.6 s): it is the baseline of the speedup column, not a candidate, so
   * one timed call after the warm-up is enough and the check is skipped. */
  bool slow = t->default_hash == run->empty_hash;
  ms_job_t job = {.workload = t->func, .trace = t->default_trace, .target = run->target, .baseline = slow};
  mlc_measure_result_t res;
  double t0 = tune_now();
  st = run->runner->run(run->runner, &job, 1, &res);
  run->measure_secs += tune_now() - t0;
  if (st != MLC_OK) return st;
  if (tune_result_interrupted(&res)) return MLC_OK; /* Ctrl-C: measured next time */
  const char *texts[1] = {t->default_json};
  st = tune_commit_results(run, t, texts, &res, 1);
  if (st != MLC_OK) return st;
  if (res.error == MLC_ERROR_KIND_NONE) t->default_secs = mlc_measure_median(&res);
  else MLC_WARN("%s: the default schedule failed (%s: %s)", t->name, mlc_error_kind_name(res.error), res.message);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Records                                                                   */
/* ------------------------------------------------------------------------ */

int tune_commit_results(tune_run_t *run, const tune_task_t *t, const char *const *trace_json,
                        const mlc_measure_result_t *results, int n) {
  if (n <= 0) return MLC_OK;
  db_record_t *recs = mlc_calloc((size_t)n, sizeof *recs);
  if (!recs) return mlc_error_set(MLC_ENOMEM, "out of memory");
  int64_t now = unix_us();
  for (int i = 0; i < n; i++) {
    const mlc_measure_result_t *m = &results[i];
    db_record_t *r = &recs[i];
    r->workload_key = t->key;
    r->target = run->target_str;
    r->device_key = run->runner->device_key;
    r->device_json = run->runner->device_json[0] ? run->runner->device_json : "{}";
    r->trace_json = trace_json[i];
    r->error_kind = m->error;
    r->nrun_secs = m->error == MLC_ERROR_KIND_NONE ? m->nrun_secs : 0;
    r->run_secs = m->run_secs;
    r->error_msg = m->error == MLC_ERROR_KIND_NONE ? "" : m->message;
    r->compiler_version = MLC_VERSION;
    r->worker_id = run->runner->worker_id;
    r->created_at_us = now;
    db_record_finish(r);
  }
  int st = db_commit_records(run->db, recs, n);
  mlc_free(recs);
  if (st != MLC_OK) mlc_error_prefix("committing %d records of %s", n, t->name);
  return st;
}

void tune_task_add_point(tune_task_t *t) {
  tune_point_t p = {t->trials_before + t->trials, t->best_secs};
  if (mlc_vec_push(&t->curve, p) != MLC_OK) MLC_WARN("%s: out of memory for the tuning curve", t->name);
}

void tune_tasks_free(tune_run_t *run) {
  for (int i = 0; i < run->ntasks; i++) {
    tune_task_t *t = &run->tasks[i];
    if (t->search) ms_search_free(t->search);
    if (t->has_space) ms_space_free(&t->space);
    mlc_vec_free(&t->history);
    mlc_vec_free(&t->curve);
    sch_trace_free(t->default_trace);
    mlc_free(t->default_json);
  }
  mlc_free(run->tasks);
  run->tasks = NULL;
  run->ntasks = 0;
}
