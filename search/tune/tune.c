/*
 * tune.c - ms_tune, the tuning driver behind mlc-tune (search.h; DESIGN.md,
 * Search). One run:
 *
 *   1. tasks: the functions folded by workload key (weights), their workloads
 *      committed, what the database already holds counted (tune_tasks.c);
 *   2. per task, the default schedule's time (measured once, or reused), the
 *      design space and the evolutionary search;
 *   3. rounds until the budget is spent, every task is done or *stop is set:
 *      the task scheduler picks a task, its search proposes up to per_round
 *      new candidates, the runner measures them, every result becomes a
 *      record (one db_commit_records per round, so an interrupted run loses
 *      nothing it measured), the search and the shared cost model learn from
 *      them, and progress is shown;
 *   4. the curves are plotted, the model saved, and the result filled.
 *
 * With leases (lease.c, on unless tune_run is told otherwise), a task is
 * claimed before its default is measured and its search made, and a task
 * another job holds waits (its search is made when it is claimed, so it
 * reads what the other job measured); the run waits when every task left is
 * held elsewhere.
 *
 * Resuming is free: the search reads the database's measured traces (never
 * measured again) and best records (seeds) for its workload and target, and
 * the budget counts only what this run measures.
 *
 * The cost model learns from the features of each measured candidate
 * (ms_candidate_features): the search's own, kept from when it scored the
 * candidate (ms_search_features), else computed here for a pick it never
 * scored; lowering is cheap next to a measurement.
 */
#include <signal.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>
#include <unistd.h>

#include "search/tune/tune_internal.h"

void ms_tune_options_default(ms_tune_options_t *o) {
  memset(o, 0, sizeof *o);
  o->trials = 1000;
  o->per_round = 64;
  o->seed = 1;
  o->model = CM_MODEL_XGB;
  o->scheduler = MS_SCHED_GRADIENT;
  o->confirm = 2;
  ms_search_options_default(&o->search);
}

void ms_tune_result_free(ms_tune_result_t *r) {
  if (!r) return;
  mlc_free(r->tasks);
  memset(r, 0, sizeof *r);
}

static bool stop_requested(const tune_run_t *run) { return run->opts->stop && *run->opts->stop; }

bool tune_result_interrupted(const mlc_measure_result_t *r) {
  char prefix[48];
  snprintf(prefix, sizeof prefix, "killed by signal %d ", SIGINT);
  if (r->error != MLC_ERROR_KIND_CRASH) return false;
  return strncmp(r->message, prefix, strlen(prefix)) == 0 || strcmp(r->message, TUNE_NOT_MEASURED_MSG) == 0;
}

/* ------------------------------------------------------------------------ */
/* One round                                                                 */
/* ------------------------------------------------------------------------ */

/* A batch of candidates and what they measured. */
typedef struct {
  ms_candidate_t *cands;    /* owned (ms_search_next's array) */
  int n;
  mlc_measure_result_t *results;
  double *secs;             /* median, or 0 for a failure */
} batch_t;

static void batch_free(batch_t *b) {
  for (int i = 0; i < b->n; i++) ms_candidate_free(&b->cands[i]);
  mlc_free(b->cands);
  mlc_free(b->results);
  mlc_free(b->secs);
  memset(b, 0, sizeof *b);
}

double tune_slow_secs(double best_secs, double default_secs) {
  double known = best_secs > 0 && !(default_secs > 0 && default_secs < best_secs) ? best_secs : default_secs;
  if (!(known > 0)) return 0;
  double slow = known * TUNE_SLOW_FACTOR;
  return slow > TUNE_SLOW_FLOOR_SECS ? slow : TUNE_SLOW_FLOOR_SECS;
}

/* The candidates of b that would be t's new best, fastest first, at most
 * TUNE_CONFIRM_MAX: each is measured opts->confirm times more (a job per
 * time, built afresh) and what succeeds joins its run_secs, so its median
 * is that of every run. A confirmation that fails or was interrupted is
 * left out (the first measurement stands). */
static int batch_confirm(tune_run_t *run, tune_task_t *t, batch_t *b, double slow) {
  int times = run->opts->confirm, picked[TUNE_CONFIRM_MAX], np = 0;
  double picked_secs[TUNE_CONFIRM_MAX];
  if (times <= 0) return MLC_OK;
  for (int i = 0; i < b->n; i++) { /* the fastest few, kept in order (ties: batch order) */
    const mlc_measure_result_t *r = &b->results[i];
    if (r->error != MLC_ERROR_KIND_NONE || r->nrun_secs + times > MLC_MEASURE_MAX_REPEAT) continue;
    double secs = mlc_measure_median(r);
    if (!(secs > 0) || (t->best_secs > 0 && secs >= t->best_secs)) continue;
    int k = np < TUNE_CONFIRM_MAX ? np++ : TUNE_CONFIRM_MAX;
    for (; k > 0 && secs < picked_secs[k - 1]; k--)
      if (k < TUNE_CONFIRM_MAX) picked[k] = picked[k - 1], picked_secs[k] = picked_secs[k - 1];
    if (k < TUNE_CONFIRM_MAX) picked[k] = i, picked_secs[k] = secs;
  }
  if (np == 0) return MLC_OK;
  int n = np * times;
  ms_job_t *jobs = mlc_calloc((size_t)n, sizeof *jobs);
  mlc_measure_result_t *more = mlc_calloc((size_t)n, sizeof *more);
  if (!jobs || !more) {
    mlc_free(jobs);
    mlc_free(more);
    return mlc_error_set(MLC_ENOMEM, "out of memory");
  }
  for (int j = 0; j < n; j++)
    jobs[j] = (ms_job_t){.workload = t->func, .trace = b->cands[picked[j / times]].trace, .target = run->target,
                         .slow_secs = slow};
  double t0 = tune_now();
  int st = run->runner->run(run->runner, jobs, n, more);
  run->measure_secs += tune_now() - t0;
  for (int j = 0; st == MLC_OK && j < n; j++) {
    mlc_measure_result_t *r = &b->results[picked[j / times]];
    if (more[j].error != MLC_ERROR_KIND_NONE) {
      if (!tune_result_interrupted(&more[j]))
        MLC_WARN("%s: confirming a new best: %s: %s (its first measurement stands)", t->name,
                 mlc_error_kind_name(more[j].error), more[j].message);
      continue;
    }
    for (int q = 0; q < more[j].nrun_secs && r->nrun_secs < MLC_MEASURE_MAX_REPEAT; q++)
      r->run_secs[r->nrun_secs++] = more[j].run_secs[q];
  }
  mlc_free(jobs);
  mlc_free(more);
  if (st != MLC_OK) mlc_error_prefix("confirming %s's best", t->name);
  return st;
}

static int batch_measure(tune_run_t *run, tune_task_t *t, batch_t *b) {
  b->results = mlc_calloc((size_t)b->n, sizeof *b->results);
  b->secs = mlc_calloc((size_t)b->n, sizeof *b->secs);
  ms_job_t *jobs = mlc_calloc((size_t)b->n, sizeof *jobs);
  if (!b->results || !b->secs || !jobs) {
    mlc_free(jobs);
    return mlc_error_set(MLC_ENOMEM, "out of memory");
  }
  double slow = tune_slow_secs(t->best_secs, t->default_secs);
  for (int i = 0; i < b->n; i++)
    jobs[i] = (ms_job_t){.workload = t->func, .trace = b->cands[i].trace, .target = run->target, .slow_secs = slow};
  double t0 = tune_now();
  int st = run->runner->run(run->runner, jobs, b->n, b->results);
  run->measure_secs += tune_now() - t0;
  mlc_free(jobs);
  if (st != MLC_OK) mlc_error_prefix("measuring %s", t->name);
  if (st == MLC_OK && !stop_requested(run)) st = batch_confirm(run, t, b, slow);
  return st;
}

/* Drops the candidates whose measurement a SIGINT killed (measuring children
 * ignore the terminal's Ctrl-C, but a signal sent to the child itself, or a
 * transport whose workers do not, can still kill one): they were not
 * measured, so they are neither recorded nor reported, and a later run
 * measures them. */
static void batch_drop_interrupted(batch_t *b) {
  int k = 0;
  for (int i = 0; i < b->n; i++) {
    if (tune_result_interrupted(&b->results[i])) {
      ms_candidate_free(&b->cands[i]);
      continue;
    }
    b->cands[k] = b->cands[i];
    b->results[k] = b->results[i];
    k++;
  }
  b->n = k;
}

/* Records the batch, then counts its trials and their times. */
static int batch_commit(tune_run_t *run, tune_task_t *t, batch_t *b) {
  const char **texts = mlc_calloc((size_t)(b->n > 0 ? b->n : 1), sizeof *texts);
  if (!texts) return mlc_error_set(MLC_ENOMEM, "out of memory");
  for (int i = 0; i < b->n; i++) texts[i] = b->cands[i].trace_json;
  int st = tune_commit_results(run, t, texts, b->results, b->n);
  mlc_free(texts);
  if (st != MLC_OK) return st;
  /* The curve gets a point per trial, in the order they were measured. */
  for (int i = 0; i < b->n; i++) {
    const mlc_measure_result_t *r = &b->results[i];
    b->secs[i] = r->error == MLC_ERROR_KIND_NONE ? mlc_measure_median(r) : 0;
    if (b->secs[i] > 0 && (t->best_secs == 0 || b->secs[i] < t->best_secs)) t->best_secs = b->secs[i];
    t->trials++;
    tune_task_add_point(t);
  }
  run->used += b->n;
  return MLC_OK;
}

/* Features of the measured candidates and the model update: the search's own
 * (it lowered each candidate to score it), else lowered here (a random pick it
 * never scored). A candidate that does not lower (a build failure) teaches
 * nothing here. */
static int batch_learn(tune_run_t *run, tune_task_t *t, cm_model_t *model, const batch_t *b) {
  size_t cap = (size_t)(b->n > 0 ? b->n : 1);
  cm_features_t *feats = mlc_calloc(cap, sizeof *feats);
  bool *owned = mlc_calloc(cap, sizeof *owned);
  double *secs = mlc_calloc(cap, sizeof *secs);
  int m = 0, st = MLC_OK;
  if (!feats || !owned || !secs) st = mlc_error_set(MLC_ENOMEM, "out of memory");
  for (int i = 0; st == MLC_OK && i < b->n; i++) {
    const cm_features_t *cached = ms_search_features(t->search, b->cands[i].trace_hash);
    if (cached) {
      feats[m] = *cached; /* borrowed: the model copies what it keeps */
      secs[m++] = b->secs[i];
      continue;
    }
    if (!b->cands[i].sch) continue;
    if (ms_candidate_features(&feats[m], NULL, sch_func(b->cands[i].sch), run->target) == MLC_OK) {
      owned[m] = true;
      secs[m++] = b->secs[i];
    }
  }
  if (st == MLC_OK && m > 0) st = cm_model_update(model, t->group, feats, secs, m);
  for (int i = 0; i < m; i++)
    if (owned[i]) cm_features_free(&feats[i]);
  mlc_free(feats);
  mlc_free(owned);
  mlc_free(secs);
  if (st != MLC_OK) mlc_error_prefix("updating the cost model with %s", t->name);
  return st;
}

/* Marks t done with why. */
static void task_finish(tune_run_t *run, tune_task_t *t, const char *why) {
  tune_progress_end(run); /* the log line goes below the status line */
  t->done = true;
  tune_lease_release(run, t); /* another job may take it up */
  if (!t->status[0]) snprintf(t->status, sizeof t->status, "%s", why && *why ? why : "the search ended");
  MLC_INFO("%s: done after %d trials: %s", t->name, t->trials, t->status);
}

/* One round of task t. MLC_OK unless the transport, the database or the
 * model failed (the run stops); a task whose search fails is marked done. */
static int run_round(tune_run_t *run, tune_task_t *t, cm_model_t *model) {
  int want = run->opts->per_round < run->budget - run->used ? run->opts->per_round : run->budget - run->used;
  batch_t b;
  memset(&b, 0, sizeof b);
  bool done = false;
  double t0 = tune_now();
  int st = ms_search_next(t->search, model, t->group, want, &b.cands, &b.n, &done);
  run->search_secs += tune_now() - t0;
  if (st != MLC_OK) {
    char why[160];
    snprintf(why, sizeof why, "search failed: %s", mlc_error_or(mlc_status_str(st)));
    MLC_WARN("%s: %s", t->name, why);
    task_finish(run, t, why);
    batch_free(&b);
    return MLC_OK;
  }
  if (b.n == 0) {
    task_finish(run, t, done ? ms_search_status(t->search) : "the search proposed nothing new");
    batch_free(&b);
    return MLC_OK;
  }
  st = batch_measure(run, t, &b);
  if (st == MLC_OK) batch_drop_interrupted(&b);
  if (st == MLC_OK && b.n == 0) { /* Ctrl-C before anything of it was measured */
    batch_free(&b);
    return MLC_OK;
  }
  if (st == MLC_OK) st = batch_commit(run, t, &b);
  if (st == MLC_OK) {
    t->rounds++;
    t0 = tune_now();
    st = ms_search_report(t->search, b.cands, b.secs, b.n);
    if (st == MLC_OK) st = batch_learn(run, t, model, &b);
    run->search_secs += tune_now() - t0;
  }
  if (st == MLC_OK) {
    if (mlc_vec_push(&t->history, t->best_secs) != MLC_OK) st = mlc_error_set(MLC_ENOMEM, "out of memory");
    tune_progress_round(run, t, b.n);
    if (done) task_finish(run, t, ms_search_status(t->search));
  }
  batch_free(&b);
  return st;
}

/* ------------------------------------------------------------------------ */
/* The run                                                                   */
/* ------------------------------------------------------------------------ */

static int validate(const ms_tune_options_t *o, tir_func_t *const *funcs, int n, const mlc_target_t *target, db_t *db,
                    ms_runner_t *runner) {
  if (n <= 0) return mlc_error_set(MLC_EINVAL, "tune: no functions to tune");
  for (int i = 0; i < n; i++)
    if (!funcs[i]) return mlc_error_set(MLC_EINVAL, "tune: function %d is NULL", i);
  if (!target || !db || !runner || !runner->run) return mlc_error_set(MLC_EINVAL, "tune: NULL target, database or runner");
  if (o->trials < 0) return mlc_error_set(MLC_EINVAL, "tune: trials is %d, must be >= 0", o->trials);
  if (o->per_round < 1) return mlc_error_set(MLC_EINVAL, "tune: per_round is %d, must be >= 1", o->per_round);
  return MLC_OK; /* every target kind: the rules, postprocessors and mutators follow it (ms_*_default) */
}

/* Task t's default time and search, once this run holds it (a task that
 * another job held first is counted again: it may have tuned it since). */
static int activate(tune_run_t *run, tune_task_t *t) {
  t->active = true;
  int st = t->lease.skips > 0 ? tune_task_recount(run, t) : MLC_OK;
  if (st == MLC_OK && !stop_requested(run)) st = tune_task_default(run, t);
  if (st != MLC_OK) return st;
  double t0 = tune_now();
  tune_task_start(run, t, t->seed);
  run->search_secs += tune_now() - t0; /* the design space counts as search */
  if (t->best_secs > 0) tune_task_add_point(t); /* where a resumed curve starts */
  MLC_INFO("task %s: weight %d, %d trials in the database, default schedule %.4g ms", t->name, t->weight,
           t->trials_before, t->default_secs * 1e3);
  if (t->done) tune_lease_release(run, t); /* its search could not start */
  return MLC_OK;
}

/* Takes t's lease and activates it: *ready when a round of t may run now. */
static int claim(tune_run_t *run, tune_task_t *t, bool *ready) {
  *ready = false;
  bool got = true;
  int st = tune_lease_take(run, t, &got);
  if (st != MLC_OK || !got) return st;
  if (!t->active) st = activate(run, t);
  *ready = st == MLC_OK && !t->done;
  return st;
}

/* Seeds in task order (the same whichever tasks another job holds), then
 * every task this run can claim now is activated. */
static int start_tasks(tune_run_t *run) {
  mlc_rng_t rng;
  mlc_rng_seed(&rng, run->opts->seed);
  for (int i = 0; i < run->ntasks; i++) run->tasks[i].seed = mlc_rng_fork_seed(&rng);
  int st = MLC_OK;
  for (int i = 0; st == MLC_OK && i < run->ntasks; i++) {
    bool ready;
    st = claim(run, &run->tasks[i], &ready);
  }
  return st;
}

static int run_rounds(tune_run_t *run, cm_model_t *model) {
  tune_sched_t sched;
  tune_sched_init(&sched, run->opts->scheduler, run->opts->seed);
  run->rounds_start = tune_now();
  int st = MLC_OK;
  while (st == MLC_OK && run->used < run->budget && !stop_requested(run)) {
    tune_lease_renew(run);
    int nblocked = tune_lease_unblock_due(run);
    int i = tune_sched_next(&sched, run->tasks, run->ntasks);
    if (i < 0 && nblocked == 0) break; /* every task is done */
    if (i < 0) {
      tune_lease_wait(run); /* every task left is another job's for now */
      continue;
    }
    bool ready;
    st = claim(run, &run->tasks[i], &ready);
    if (st == MLC_OK && ready) st = run_round(run, &run->tasks[i], model);
  }
  tune_progress_end(run);
  return st;
}

static int fill_result(ms_tune_result_t *out, const tune_run_t *run) {
  out->tasks = mlc_calloc((size_t)run->ntasks, sizeof *out->tasks);
  if (!out->tasks) return mlc_error_set(MLC_ENOMEM, "out of memory");
  out->ntasks = run->ntasks;
  for (int i = 0; i < run->ntasks; i++) {
    const tune_task_t *t = &run->tasks[i];
    ms_task_report_t *r = &out->tasks[i];
    snprintf(r->name, sizeof r->name, "%s", t->name);
    r->key = t->key;
    r->weight = t->weight;
    r->trials = t->trials;
    r->trials_before = t->trials_before;
    r->best_secs = t->best_secs;
    r->default_secs = t->default_secs;
    r->flop = t->flop;
    snprintf(r->status, sizeof r->status, "%s", t->status);
  }
  out->wall_secs = tune_now() - run->start;
  out->search_secs = run->search_secs;
  out->measure_secs = run->measure_secs;
  return MLC_OK;
}

/* The cost model: the one saved in opts->model_dir when it holds one of the
 * kind asked for (a later run starts from what earlier runs learned, and
 * keeps learning), else a new one. A saved model that does not load is
 * reported and replaced at the end. */
static int open_model(cm_model_t **out, const ms_tune_options_t *o) {
  char meta[4200];
  if (o->model_dir && snprintf(meta, sizeof meta, "%s/meta.json", o->model_dir) < (int)sizeof meta &&
      access(meta, F_OK) == 0) {
    cm_model_t *m = NULL;
    int st = cm_model_load(&m, o->model_dir);
    if (st == MLC_OK && cm_model_kind(m) == o->model) {
      MLC_INFO("cost model: continuing the one in %s (%lld samples)", o->model_dir,
               (long long)cm_model_nsamples(m));
      *out = m;
      return MLC_OK;
    }
    if (st == MLC_OK)
      MLC_WARN("cost model: %s holds a model of another kind; starting a new one (saved there at the end)",
               o->model_dir);
    else if (st != MLC_ENOMEM)
      MLC_WARN("cost model: cannot load %s (%s); starting a new one (saved there at the end)", o->model_dir,
               mlc_error_or(mlc_status_str(st)));
    cm_model_free(m);
    if (st == MLC_ENOMEM) return st;
  }
  return cm_model_create(out, o->model, o->seed);
}

/* The plot and the model, once the rounds are over. */
static int finish_outputs(tune_run_t *run, cm_model_t *model) {
  int st = MLC_OK;
  if (run->opts->plot_path) st = tune_plot_write(run, run->opts->plot_path);
  if (st == MLC_OK && run->opts->model_dir) {
    st = cm_model_save(model, run->opts->model_dir);
    if (st != MLC_OK) mlc_error_prefix("saving the cost model to %s", run->opts->model_dir);
  }
  return st;
}

/* The notes of the tasks for the caller (NULL when there are none). */
static tune_lease_note_t *copy_notes(const tune_run_t *run) {
  if (run->ntasks == 0) return NULL;
  tune_lease_note_t *notes = mlc_calloc((size_t)run->ntasks, sizeof *notes);
  for (int i = 0; notes && i < run->ntasks; i++) notes[i] = run->tasks[i].lease;
  return notes;
}

int tune_run(ms_tune_result_t *out, tir_func_t *const *funcs, const char *const *names, int n,
             const mlc_target_t *target, db_t *db, ms_runner_t *runner, const ms_tune_options_t *opts,
             const tune_lease_options_t *lease, tune_lease_note_t **notes) {
  if (notes) *notes = NULL;
  if (!out || !funcs) return mlc_error_set(MLC_EINVAL, "tune: NULL argument");
  memset(out, 0, sizeof *out);
  ms_tune_options_t defaults;
  if (!opts) {
    ms_tune_options_default(&defaults);
    opts = &defaults;
  }
  int st = validate(opts, funcs, n, target, db, runner);
  if (st != MLC_OK) return st;
  tune_run_t run = {.target = target, .db = db, .runner = runner, .opts = opts, .budget = opts->trials};
  run.start = tune_now();
  mlc_target_str(target, run.target_str, sizeof run.target_str);
  tune_lease_setup(&run, lease);
  cm_model_t *model = NULL;
  st = open_model(&model, opts);
  if (st == MLC_OK) st = tune_tasks_create(&run, funcs, names, n);
  if (st == MLC_OK) {
    MLC_INFO("tuning %d task%s (%d function%s) for %s: %d trials, %d per round", run.ntasks,
             run.ntasks == 1 ? "" : "s", n, n == 1 ? "" : "s", run.target_str, run.budget, opts->per_round);
    st = start_tasks(&run);
  }
  if (st == MLC_OK) st = run_rounds(&run, model);
  tune_lease_finish(&run); /* on errors and Ctrl-C too */
  if (st == MLC_OK) st = finish_outputs(&run, model);
  /* Filled on failure too: the caller can still show what was done. */
  if (run.ntasks > 0 && fill_result(out, &run) != MLC_OK && st == MLC_OK) st = MLC_ENOMEM;
  if (notes) *notes = copy_notes(&run);
  tune_tasks_free(&run);
  cm_model_free(model);
  return st;
}

void ms_tune_keep_freed_memory(void) {
#ifdef __GLIBC__
  /* The largest mmap threshold glibc takes on 64-bit (32 MiB): blocks below
   * it come from the heap; and the heap is trimmed only past 512 MiB free. */
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

int ms_tune(ms_tune_result_t *out, tir_func_t *const *funcs, const char *const *names, int n,
            const mlc_target_t *target, db_t *db, ms_runner_t *runner, const ms_tune_options_t *opts) {
  return tune_run(out, funcs, names, n, target, db, runner, opts, NULL, NULL);
}
