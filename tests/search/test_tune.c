/*
 * test_tune.c - the tuning driver (search.h, "Tuning" and "Transport to
 * measurement") end to end on GMM-32 with real measurements: every trial
 * lands in a throwaway file database, a second run on the same database
 * resumes (counts what the first measured, measures only new traces), the
 * stop flag ends a run after at most one round, identical functions fold
 * into one weighted task, the task scheduler picks as MetaSchedule's does, the local runner builds in parallel and runs in
 * order and describes the host, and ms_func_flop counts what the workloads compute.
 *
 * The search is kept small (population 32, 2 generations) and measurement
 * short (min_repeat_ms 1) so the whole file runs in seconds; every candidate
 * is checked against the reference interpreter.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "search/search.h"
#include "search/tune/tune_internal.h"
#include "tests/lib/check_ok.h"

static tir_func_t *workload(const char *name, int64_t a, int64_t b, int64_t c, tir_dtype_t dt) {
  tir_func_t *f = NULL;
  int64_t shape[3] = {a, b, c};
  tir_dtype_t acc = {0, 0, 0};
  OK(tir_workload_build(&f, name, shape, 3, dt, acc));
  return f;
}

static tir_func_t *gmm(int64_t n) { return workload("GMM", n, n, n, tir_dt_FLOAT32()); }

/* ------------------------------------------------------------------------ */
/* Fixtures: a temporary file database, a quick runner                       */
/* ------------------------------------------------------------------------ */

typedef struct {
  char dir[64];
  char uri[80];
  db_t *db;
  ms_runner_t *runner;
  mlc_target_t target;
  char target_str[512];
} fixture_t;

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

static int setup(void **state) {
  fixture_t *fx = calloc(1, sizeof *fx);
  snprintf(fx->dir, sizeof fx->dir, "/tmp/mlc-test-tune-XXXXXX");
  if (!mkdtemp(fx->dir)) return -1;
  snprintf(fx->uri, sizeof fx->uri, "file:%s", fx->dir);
  if (db_open(&fx->db, fx->uri) != MLC_OK) return -1;
  mlc_measure_options_t mo;
  mlc_measure_options_default(&mo);
  mo.number = 1;
  mo.min_repeat_ms = 1;
  mo.check_correctness = true;
  if (ms_runner_local(&fx->runner, 1, &mo) != MLC_OK) return -1;
  mlc_target_host(&fx->target);
  mlc_target_str(&fx->target, fx->target_str, sizeof fx->target_str);
  *state = fx;
  return 0;
}

static int teardown(void **state) {
  fixture_t *fx = *state;
  ms_runner_free(fx->runner);
  db_close(fx->db);
  nftw(fx->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
  free(fx);
  return 0;
}

/* Small and quick: what a test can afford on two shared cores. */
static ms_tune_options_t quick_options(int trials, cm_model_kind_t model) {
  ms_tune_options_t o;
  ms_tune_options_default(&o);
  o.trials = trials;
  o.per_round = 8;
  o.seed = 7;
  o.model = model;
  o.search.population = 32;
  o.search.generations = 2;
  o.search.init_min_valid = 8;
  o.confirm = 0; /* test_tune_records_every_trial_and_resumes turns it on */
  return o;
}

static db_result_t *records_of(fixture_t *fx, uint64_t key) {
  db_result_t *res = NULL;
  db_filter_t filter = {.workload_key = key, .target = fx->target_str};
  OK(db_records(fx->db, &res, &filter));
  return res;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* No trace measured twice: the trace hashes of res are distinct. */
static void assert_distinct_traces(const db_result_t *res) {
  uint64_t *h = calloc((size_t)res->nrecords + 1, sizeof *h);
  for (int i = 0; i < res->nrecords; i++) h[i] = res->records[i].trace_hash;
  qsort(h, (size_t)res->nrecords, sizeof *h, cmp_u64);
  for (int i = 1; i < res->nrecords; i++) assert_true(h[i] != h[i - 1]);
  free(h);
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                     */
/* ------------------------------------------------------------------------ */

/* Random model, then XGBoost resuming from the same database. */
static void test_tune_records_every_trial_and_resumes(void **state) {
  fixture_t *fx = *state;
  tir_func_t *f = gmm(32);
  const char *names[] = {"gmm32"};
  char plot[128];
  snprintf(plot, sizeof plot, "%s/curve.svg", fx->dir);
  ms_tune_options_t o = quick_options(16, CM_MODEL_RANDOM);
  o.plot_path = plot;
  o.confirm = 2; /* as ms_tune_options_default */
  ms_tune_result_t r1;
  OK(ms_tune(&r1, &f, names, 1, &fx->target, fx->db, fx->runner, &o));
  assert_int_equal(r1.ntasks, 1);
  const ms_task_report_t *t = &r1.tasks[0];
  assert_string_equal(t->name, "gmm32");
  assert_int_equal(t->key, tir_func_key(f));
  assert_int_equal(t->weight, 1);
  assert_int_equal(t->trials_before, 0);
  assert_true(t->trials > 0 && t->trials <= 16);
  assert_true(t->default_secs > 0);
  assert_true(t->best_secs > 0);
  assert_true(t->flop == 2.0 * 32 * 32 * 32);
  assert_true(r1.wall_secs >= r1.measure_secs && r1.measure_secs > 0);

  /* Every trial, and the default schedule (mlc-compile's, not the empty
   * trace), is a record of this device. */
  sch_trace_t *default_trace = NULL;
  char *default_json = NULL;
  OK(ms_default_trace(&default_trace, &default_json, f, &fx->target));
  assert_non_null(strstr(default_json, "\"Vectorize\""));
  assert_non_null(strstr(default_json, "\"main\""));
  db_result_t *res = records_of(fx, t->key);
  assert_int_equal(res->nrecords, t->trials + 1);
  int defaults = 0, confirmed = 0;
  for (int i = 0; i < res->nrecords; i++) {
    const db_record_t *rec = &res->records[i];
    assert_string_equal(rec->device_key, fx->runner->device_key);
    assert_string_equal(rec->worker_id, fx->runner->worker_id);
    assert_string_equal(rec->compiler_version, MLC_VERSION);
    assert_true(rec->created_at_us > 0);
    if (strcmp(rec->trace_json, default_json) == 0) defaults++;
    if (rec->error_kind != MLC_ERROR_KIND_NONE) continue;
    /* One repeat, or one and the o.confirm more of a would-be new best. */
    assert_true(rec->nrun_secs == 1 || rec->nrun_secs == 1 + o.confirm);
    confirmed += rec->nrun_secs == 1 + o.confirm;
  }
  assert_int_equal(defaults, 1);
  assert_true(confirmed >= 1 && confirmed <= TUNE_CONFIRM_MAX * (t->trials + o.per_round - 1) / o.per_round);
  db_result_free(res);
  mlc_free(default_json);
  sch_trace_free(default_trace);

  char *svg = NULL;
  size_t len = 0;
  OK(mlc_read_file(&svg, &len, plot));
  assert_non_null(strstr(svg, "<svg"));
  assert_non_null(strstr(svg, "<polyline"));
  assert_non_null(strstr(svg, "gmm32"));
  mlc_free(svg);

  /* Resume with XGBoost: only new traces, the default reused; no
   * confirmation asked, so every new record has one repeat. */
  int first = t->trials;
  o = quick_options(8, CM_MODEL_XGB);
  o.confirm = 0;
  ms_tune_result_t r2;
  OK(ms_tune(&r2, &f, names, 1, &fx->target, fx->db, fx->runner, &o));
  assert_int_equal(r2.tasks[0].trials_before, first);
  assert_true(r2.tasks[0].trials <= 8);
  assert_true(r2.tasks[0].default_secs == r1.tasks[0].default_secs);
  assert_true(r2.tasks[0].best_secs <= r1.tasks[0].best_secs);
  res = records_of(fx, t->key);
  assert_int_equal(res->nrecords, first + r2.tasks[0].trials + 1);
  assert_distinct_traces(res);
  int single = 0;
  for (int i = 0; i < res->nrecords; i++) single += res->records[i].nrun_secs == 1;
  assert_true(single >= r2.tasks[0].trials); /* the new ones, and the first run's others */
  db_result_free(res);
  ms_tune_result_free(&r1);
  ms_tune_result_free(&r2);
  tir_func_free(f);
}

static void capture(mlc_log_level_t level, const char *line, void *payload) {
  (void)level;
  mlc_strbuf_t *sb = payload;
  mlc_sb_append(sb, line);
}

/* --model-dir: the model saved by one run is continued by the next (its
 * samples carried over); a damaged one is reported and replaced. */
static void test_tune_model_dir_continues_the_saved_model(void **state) {
  fixture_t *fx = *state;
  tir_func_t *f = gmm(32);
  char dir[128];
  snprintf(dir, sizeof dir, "%s/model", fx->dir);
  ms_tune_options_t o = quick_options(16, CM_MODEL_XGB);
  o.model_dir = dir;
  ms_tune_result_t r;
  OK(ms_tune(&r, &f, NULL, 1, &fx->target, fx->db, fx->runner, &o));
  ms_tune_result_free(&r);
  cm_model_t *saved = NULL;
  OK(cm_model_load(&saved, dir));
  int64_t first = cm_model_nsamples(saved);
  assert_true(first > 0);
  cm_model_free(saved);

  mlc_strbuf_t log;
  mlc_sb_init(&log);
  mlc_log_level_t level = mlc_log_level(); /* ctest runs with MLC_LOG=warn */
  mlc_log_set_level(MLC_LOG_INFO);
  mlc_log_set_sink(capture, &log);
  o.trials = 8;
  OK(ms_tune(&r, &f, NULL, 1, &fx->target, fx->db, fx->runner, &o));
  ms_tune_result_free(&r);
  assert_non_null(strstr(mlc_sb_str(&log), "cost model: continuing the one in"));
  OK(cm_model_load(&saved, dir));
  assert_true(cm_model_nsamples(saved) > first); /* the old samples and the new */
  cm_model_free(saved);

  char meta[160];
  snprintf(meta, sizeof meta, "%s/meta.json", dir);
  OK(mlc_write_file(meta, "{not json", 9));
  mlc_sb_free(&log);
  mlc_sb_init(&log);
  OK(ms_tune(&r, &f, NULL, 1, &fx->target, fx->db, fx->runner, &o));
  ms_tune_result_free(&r);
  mlc_log_set_sink(NULL, NULL);
  mlc_log_set_level(level);
  assert_non_null(strstr(mlc_sb_str(&log), "cost model: cannot load"));
  OK(cm_model_load(&saved, dir)); /* replaced by a good one */
  cm_model_free(saved);
  mlc_sb_free(&log);
  tir_func_free(f);
}

static void test_tune_stop_flag_set_before_the_call_allows_one_round_at_most(void **state) {
  fixture_t *fx = *state;
  tir_func_t *f = gmm(32);
  volatile int stop = 1;
  ms_tune_options_t o = quick_options(64, CM_MODEL_RANDOM);
  o.stop = &stop;
  ms_tune_result_t r;
  OK(ms_tune(&r, &f, NULL, 1, &fx->target, fx->db, fx->runner, &o));
  assert_int_equal(r.ntasks, 1);
  assert_string_equal(r.tasks[0].name, f->name); /* names NULL: the functions' own */
  assert_true(r.tasks[0].trials <= o.per_round);
  db_result_t *res = records_of(fx, r.tasks[0].key);
  assert_true(res->nrecords <= o.per_round + 1);
  db_result_free(res);
  ms_tune_result_free(&r);
  tir_func_free(f);
}

/* Two identical functions are one task of weight 2; another shape is another
 * task. Trials 0: only the default schedules are measured. */
static void test_tune_identical_functions_fold_into_one_weighted_task(void **state) {
  fixture_t *fx = *state;
  tir_func_t *funcs[3] = {gmm(32), gmm(32), gmm(16)};
  const char *names[3] = {"a", "b", "c"};
  ms_tune_options_t o = quick_options(0, CM_MODEL_RANDOM);
  ms_tune_result_t r;
  OK(ms_tune(&r, funcs, names, 3, &fx->target, fx->db, fx->runner, &o));
  assert_int_equal(r.ntasks, 2);
  assert_string_equal(r.tasks[0].name, "a");
  assert_int_equal(r.tasks[0].weight, 2);
  assert_string_equal(r.tasks[1].name, "c");
  assert_int_equal(r.tasks[1].weight, 1);
  assert_int_equal(r.tasks[0].trials + r.tasks[1].trials, 0);
  assert_true(r.tasks[0].default_secs > 0 && r.tasks[1].default_secs > 0);
  db_result_t *ws = NULL;
  OK(db_workloads(fx->db, &ws));
  assert_int_equal(ws->nworkloads, 2);
  db_result_free(ws);
  ms_tune_result_free(&r);
  for (int i = 0; i < 3; i++) tir_func_free(funcs[i]);
}

static void test_tune_refuses_bad_arguments(void **state) {
  fixture_t *fx = *state;
  tir_func_t *f = gmm(16);
  ms_tune_options_t o = quick_options(8, CM_MODEL_RANDOM);
  ms_tune_result_t r;
  assert_int_equal(ms_tune(&r, &f, NULL, 0, &fx->target, fx->db, fx->runner, &o), MLC_EINVAL);
  o.per_round = 0;
  assert_int_equal(ms_tune(&r, &f, NULL, 1, &fx->target, fx->db, fx->runner, &o), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "per_round"));
  o = quick_options(-1, CM_MODEL_RANDOM); /* GPU targets are tuned too (test_gpu_space.c) */
  assert_int_equal(ms_tune(&r, &f, NULL, 1, &fx->target, fx->db, fx->runner, &o), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "trials"));
  tir_func_free(f);
}

/* Four jobs on two builder processes, run one at a time: results in batch
 * order (a trace that does not replay is that job's build error), the
 * private directory of objects removed; the device described from the host. */
static void test_runner_local_measures_in_worker_processes_and_describes_the_host(void **state) {
  fixture_t *fx = *state;
  mlc_measure_options_t mo;
  mlc_measure_options_default(&mo);
  mo.number = 1;
  mo.min_repeat_ms = 1;
  ms_runner_t *r = NULL;
  assert_int_equal(ms_runner_local(&r, 0, &mo), MLC_EINVAL);
  OK(ms_runner_local(&r, 2, &mo));
  assert_string_equal(r->name, "local");
  assert_int_equal(strncmp(r->device_key, "llvm-", 5), 0);
  assert_int_equal(strncmp(r->worker_id, "local-", 6), 0);
  json_t *dev = mlc_json_loads(r->device_json, "device");
  assert_non_null(dev);
  assert_true(json_is_string(json_object_get(dev, "cpu")));
  assert_true(json_integer_value(json_object_get(dev, "cores")) >= 1);
  json_decref(dev);

  tir_func_t *f = gmm(16);
  sch_t *sch = NULL;
  OK(sch_create(&sch, f, 0, SCH_ERRORS_FAST));
  static const char *bad_src = "b0 = sch.get_block(name=\"D\", func_name=\"main\")\n";
  sch_trace_t *bad = NULL;
  OK(sch_trace_from_python(&bad, bad_src, strlen(bad_src), "bad.py"));
  ms_job_t jobs[4];
  for (int i = 0; i < 4; i++) jobs[i] = (ms_job_t){.workload = f, .trace = i == 1 ? bad : sch_get_trace(sch), .target = &fx->target};
  char tmp[96];
  snprintf(tmp, sizeof tmp, "%s/tmp", fx->dir);
  assert_int_equal(mkdir(tmp, 0700), 0);
  char *old_tmp = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
  setenv("TMPDIR", tmp, 1);
  mlc_measure_result_t res[4];
  OK(r->run(r, jobs, 4, res));
  if (old_tmp) setenv("TMPDIR", old_tmp, 1);
  else unsetenv("TMPDIR");
  free(old_tmp);
  assert_int_equal(rmdir(tmp), 0); /* empty: the objects' directory is gone */
  for (int i = 0; i < 4; i++) {
    if (i == 1) {
      assert_int_equal(res[i].error, MLC_ERROR_KIND_BUILD);
      assert_non_null(strstr(res[i].message, "trace: "));
      assert_int_equal(res[i].nrun_secs, 0);
      continue;
    }
    assert_int_equal(res[i].error, MLC_ERROR_KIND_NONE);
    assert_true(mlc_measure_median(&res[i]) > 0);
    assert_true(res[i].build_secs > 0);
  }
  sch_trace_free(bad);
  sch_free(sch);
  tir_func_free(f);
  ms_runner_free(r);
}

/* A baseline job (the untuned default) is timed with one call and no check;
 * every other option, the deadlines above all, stays the runner's. A job's
 * slow_secs (ms_tune's, from the task's best time) replaces the runner's. */
static void test_baseline_jobs_time_one_call_and_keep_the_deadlines(void **state) {
  (void)state;
  mlc_measure_options_t o;
  mlc_measure_options_default(&o);
  o.number = 5;
  o.repeat = 3;
  o.min_repeat_ms = 250;
  o.check_correctness = true;
  o.build_timeout_s = 120;
  o.run_timeout_s = 90;
  ms_job_t plain = {.baseline = false}, base = {.baseline = true}, slow = {.slow_secs = 0.25};
  mlc_measure_options_t p = ms_job_options(&plain, &o), b = ms_job_options(&base, &o);
  assert_true(p.number == 5 && p.repeat == 3 && p.min_repeat_ms == 250 && p.check_correctness);
  assert_true(p.build_timeout_s == 120 && p.run_timeout_s == 90 && p.seed == o.seed);
  assert_int_equal(b.number, 1);
  assert_int_equal(b.repeat, 1);
  assert_int_equal(b.min_repeat_ms, 0);
  assert_false(b.check_correctness);
  assert_true(b.build_timeout_s == 120 && b.run_timeout_s == 90);
  assert_true(p.slow_secs == 0); /* the runner's, off by default */
  mlc_measure_options_t s = ms_job_options(&slow, &o);
  assert_true(s.slow_secs == 0.25 && s.number == 5 && s.repeat == 3 && s.check_correctness);
  /* ms_tune's: 50 times the fastest known (the best, or the default schedule
   * before anything was measured), at least 0.1 s, off while none is known. */
  assert_true(tune_slow_secs(0, 0) == 0);
  assert_true(tune_slow_secs(0.0001, 0) == TUNE_SLOW_FLOOR_SECS);
  assert_true(fabs(tune_slow_secs(0.004, 0) - 0.004 * TUNE_SLOW_FACTOR) < 1e-12);
  assert_true(fabs(tune_slow_secs(0, 0.006) - 0.006 * TUNE_SLOW_FACTOR) < 1e-12);
  assert_true(fabs(tune_slow_secs(0.004, 0.006) - 0.004 * TUNE_SLOW_FACTOR) < 1e-12);
  assert_true(fabs(tune_slow_secs(0.008, 0.006) - 0.006 * TUNE_SLOW_FACTOR) < 1e-12);
}

static void test_func_flop_counts_data_arithmetic(void **state) {
  (void)state;
  tir_func_t *f = gmm(32);
  assert_true(ms_func_flop(f) == 2.0 * 32 * 32 * 32); /* a multiply-add is two */
  tir_func_free(f);
  f = workload("D+B+R", 4, 8, 16, tir_dt_FLOAT32()); /* dense + bias add + relu max */
  assert_true(ms_func_flop(f) == 2.0 * 4 * 8 * 16 + 4 * 8 + 4 * 8);
  tir_func_free(f);
  f = workload("GMM", 8, 4, 2, tir_dt_INT8()); /* no floats: integer data operations */
  assert_true(ms_func_flop(f) == 2.0 * 8 * 4 * 2);
  tir_func_free(f);
  assert_true(ms_func_flop(NULL) == 0);
}

/* Private: the task scheduler on hand-made histories (best seconds after
 * each of a task's rounds). */
static void push_history(tune_task_t *t, const double *best, int n) {
  for (int i = 0; i < n; i++) assert_int_equal(mlc_vec_push(&t->history, best[i]), MLC_OK);
}

static void test_task_scheduler_gradient_and_round_robin(void **state) {
  (void)state;
  tune_task_t tasks[3];
  memset(tasks, 0, sizeof tasks);
  for (int i = 0; i < 3; i++) tasks[i].weight = 1;
  /* g1 = (10 - 5) / 3, g2 = 5 / 4, g = weight * (0.2 g1 + 0.8 g2). */
  push_history(&tasks[0], (const double[]){10, 8, 6, 5}, 4);
  tasks[0].weight = 2;
  assert_true(fabs(tune_sched_gradient(&tasks[0]) - 2 * (0.2 * 5.0 / 3 + 0.8 * 5.0 / 4)) < 1e-12);
  push_history(&tasks[1], (const double[]){1, 1}, 2); /* flat and fast: g = 0.8 * 1 / 2 */
  assert_true(fabs(tune_sched_gradient(&tasks[1]) - 0.4) < 1e-12);
  push_history(&tasks[2], (const double[]){0}, 1); /* nothing measured well yet: first */
  assert_true(tune_sched_gradient(&tasks[2]) >= 1e9);

  tune_sched_t s;
  tune_sched_init(&s, MS_SCHED_GRADIENT, 1);
  tasks[1].done = true;
  /* The first pass visits every live task once, in order. */
  assert_int_equal(tune_sched_next(&s, tasks, 3), 0);
  assert_int_equal(tune_sched_next(&s, tasks, 3), 2);
  /* Then the largest gradient: task 2 (no time), then task 0. */
  assert_int_equal(tune_sched_next(&s, tasks, 3), 2);
  tasks[2].done = true;
  assert_int_equal(tune_sched_next(&s, tasks, 3), 0);
  tasks[0].done = true;
  assert_int_equal(tune_sched_next(&s, tasks, 3), -1);

  tune_sched_init(&s, MS_SCHED_ROUND_ROBIN, 1);
  tasks[0].done = tasks[2].done = false;
  int want[] = {0, 2, 0, 2};
  for (int i = 0; i < 4; i++) assert_int_equal(tune_sched_next(&s, tasks, 3), want[i]);
  for (int i = 0; i < 3; i++) mlc_vec_free(&tasks[i].history);
}

/* GMM-16, its task held in fx's database by "other-job" for ttl_s seconds;
 * the target text into target (512 bytes). */
static tir_func_t *gmm_held_by_another_job(fixture_t *fx, char *target, int ttl_s) {
  tir_func_t *f = gmm(16);
  mlc_target_str(&fx->target, target, 512);
  bool got = false;
  OK(db_lease_acquire(fx->db, &got, tir_func_key(f), target, "other-job", ttl_s));
  assert_true(got);
  return f;
}

/* Another job holds the only task for a second: the run is blocked at the
 * start, waits, takes the task once that lease expires, spends its budget,
 * says so in its notes and leaves no lease behind. */
static void test_tune_waits_for_a_task_another_job_holds(void **state) {
  fixture_t *fx = *state;
  char target[512];
  tir_func_t *f = gmm_held_by_another_job(fx, target, 1);
  bool got = false;
  ms_tune_options_t o = quick_options(4, CM_MODEL_RANDOM);
  tune_lease_options_t lo = {.retry_s = 0.2, .owner = "this-job"};
  tune_lease_note_t *notes = NULL;
  ms_tune_result_t r;
  OK(tune_run(&r, &f, NULL, 1, &fx->target, fx->db, fx->runner, &o, &lo, &notes));
  assert_non_null(notes);
  assert_true(notes[0].skips >= 1);
  assert_true(notes[0].waited_secs >= 0.5);
  assert_false(notes[0].never);
  assert_int_equal(r.tasks[0].trials, 4);
  assert_true(r.tasks[0].default_secs > 0); /* measured once this run held the task */
  OK(db_lease_acquire(fx->db, &got, tir_func_key(f), target, "other-job", 60)); /* released */
  assert_true(got);
  OK(db_lease_release(fx->db, tir_func_key(f), target, "other-job"));
  mlc_free(notes);
  ms_tune_result_free(&r);
  tir_func_free(f);
}

/* A held task and a stop flag: the wait ends at once, the task is reported
 * as not tuned here; with leases off the same task is tuned. */
static void test_tune_held_task_with_stop_and_without_leases(void **state) {
  fixture_t *fx = *state;
  char target[512];
  tir_func_t *f = gmm_held_by_another_job(fx, target, 60);
  volatile int stop = 0;
  ms_tune_options_t o = quick_options(4, CM_MODEL_RANDOM);
  ms_tune_result_t r;
  tune_lease_note_t *notes = NULL;
  stop = 1;
  o.stop = &stop;
  OK(tune_run(&r, &f, NULL, 1, &fx->target, fx->db, fx->runner, &o, NULL, &notes));
  assert_int_equal(r.tasks[0].trials, 0);
  assert_true(notes[0].never && notes[0].skips == 1);
  assert_non_null(strstr(r.tasks[0].status, "not tuned here: another job"));
  mlc_free(notes);
  ms_tune_result_free(&r);
  o.stop = NULL;
  tune_lease_options_t off = {.off = true};
  OK(tune_run(&r, &f, NULL, 1, &fx->target, fx->db, fx->runner, &o, &off, &notes));
  assert_int_equal(r.tasks[0].trials, 4);
  assert_int_equal(notes[0].skips, 0);
  OK(db_lease_release(fx->db, tir_func_key(f), target, "other-job"));
  mlc_free(notes);
  ms_tune_result_free(&r);
  tir_func_free(f);
}

/* Both schedulers pass over a task another job holds. */
static void test_task_scheduler_skips_blocked_tasks(void **state) {
  (void)state;
  tune_task_t tasks[2];
  memset(tasks, 0, sizeof tasks);
  tasks[0].weight = tasks[1].weight = 1;
  tasks[0].blocked = true;
  tune_sched_t s;
  tune_sched_init(&s, MS_SCHED_GRADIENT, 1);
  assert_int_equal(tune_sched_next(&s, tasks, 2), 1);
  assert_int_equal(tune_sched_next(&s, tasks, 2), 1);
  tasks[1].blocked = true;
  assert_int_equal(tune_sched_next(&s, tasks, 2), -1);
  tasks[0].blocked = false; /* free again: it never ran, so it goes first */
  assert_int_equal(tune_sched_next(&s, tasks, 2), 0);
  tune_sched_init(&s, MS_SCHED_ROUND_ROBIN, 1);
  assert_int_equal(tune_sched_next(&s, tasks, 2), 0);
  assert_int_equal(tune_sched_next(&s, tasks, 2), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_tune_records_every_trial_and_resumes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tune_model_dir_continues_the_saved_model, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tune_stop_flag_set_before_the_call_allows_one_round_at_most, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_tune_identical_functions_fold_into_one_weighted_task, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tune_refuses_bad_arguments, setup, teardown),
      cmocka_unit_test_setup_teardown(test_runner_local_measures_in_worker_processes_and_describes_the_host, setup, teardown),
      cmocka_unit_test(test_baseline_jobs_time_one_call_and_keep_the_deadlines),
      cmocka_unit_test(test_func_flop_counts_data_arithmetic),
      cmocka_unit_test(test_task_scheduler_gradient_and_round_robin),
      cmocka_unit_test_setup_teardown(test_tune_waits_for_a_task_another_job_holds, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tune_held_task_with_stop_and_without_leases, setup, teardown),
      cmocka_unit_test(test_task_scheduler_skips_blocked_tasks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
