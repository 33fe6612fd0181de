/*
 * test_evolve.c - candidates and the evolutionary search
 * (search/evolve/): a candidate's trace hash is the one db_record_finish
 * computes for its trace_json, its design part replays to the same
 * candidate, rejected traces say why, and with the CPU postprocessors the
 * full trace (what a worker replays) makes the candidate's program, which
 * computes what the workload computes; the search never hands out a trace
 * the database holds (unless its worker was lost), one it handed out
 * before or one reported; the same
 * seed and reports give the same batches; a space that never yields a valid
 * candidate gives up quickly with a reason; a tiny space is exhausted and
 * reported done; bad arguments are errors.
 *
 * MLC_SEARCH_TIMING=1 also times ms_search_next for GMM-512 with the CPU
 * default rules, postprocessors and mutators, the default options
 * (population 512, batches of 64) and XGBoost (run it on a Release build:
 * it prints the seconds and is skipped otherwise).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "compiler/compiler.h"
#include "tests/schedule/sched_testing.h"
#include "tests/search/evolve_testing.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

/* Small options: every part of the algorithm runs, in a fraction of a
 * second under the sanitizers. */
static ms_search_options_t small_options(int population) {
  ms_search_options_t o;
  ms_search_options_default(&o);
  o.population = population;
  o.init_min_valid = population / 4 > 0 ? population / 4 : 1;
  o.generations = 2;
  o.max_stale_rounds = 2;
  o.max_fail_rounds = 2;
  return o;
}

static cm_model_t *random_model(uint64_t seed) {
  cm_model_t *m = NULL;
  ET_OK(cm_model_create(&m, CM_MODEL_RANDOM, seed));
  return m;
}

static void free_batch(ms_candidate_t *c, int n) {
  for (int i = 0; i < n; i++) ms_candidate_free(&c[i]);
  mlc_free(c);
}

/* A made-up measurement: a function of the hash, so two searches that hand
 * out the same candidates get the same reports. */
static double fake_secs(uint64_t hash) { return 1e-3 * (1.0 + (double)(hash % 1000) / 1000.0); }

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) { return remove(path); }

/* ------------------------------------------------------------------------ */
/* Candidates                                                                */
/* ------------------------------------------------------------------------ */

static void test_options_default(void **state) {
  ms_search_options_t o;
  ms_search_options_default(&o);
  assert_int_equal(o.population, 512);
  assert_true(o.init_db_fraction == 0.2);
  assert_int_equal(o.init_min_valid, 50);
  assert_int_equal(o.max_fail_rounds, 5);
  assert_int_equal(o.generations, 4);
  assert_true(o.mutation_prob == 0.85);
  assert_true(o.eps_greedy == 0.05);
  assert_int_equal(o.max_stale_rounds, 5);
  assert_int_equal(o.threads, 0); /* one per CPU */
}

static void test_candidate_hash_is_the_records(void **state) {
  tir_func_t *f = et_gmm(32, 32, 32);
  ms_ctx_t ctx;
  et_ctx(&ctx, f, 2, 1);
  sch_trace_t *sketch = et_gmm_sketch(f, 16, 32, 4);
  ms_candidate_t c, again;
  ET_OK(ms_candidate_make(&c, &ctx, sketch, true, 1, NULL, 0));
  /* The full trace: the design part, then EnterPostproc. */
  assert_string_equal(c.trace->insts[c.trace->n - 1].kind->name, "EnterPostproc");
  char *json = et_json(c.trace);
  assert_string_equal(json, c.trace_json);
  db_record_t r = {.workload_key = tir_func_key(f), .target = "llvm", .device_key = "llvm-x", .device_json = "{}",
                   .trace_json = c.trace_json, .error_msg = "", .worker_id = "w"};
  db_record_finish(&r);
  assert_true(r.trace_hash == c.trace_hash);
  /* Its design part is the sketch, and makes the same candidate again
   * (whatever the seed: decisions are taken). */
  sch_trace_t *design = NULL;
  ET_OK(ms_trace_design_part(&design, c.trace));
  char *a = et_json(design), *b = et_json(sketch);
  assert_string_equal(a, b);
  ET_OK(ms_candidate_make(&again, &ctx, c.trace, true, 99, NULL, 0));
  assert_true(again.trace_hash == c.trace_hash);
  assert_true(tir_func_key(sch_func(again.sch)) == tir_func_key(sch_func(c.sch)));
  ms_candidate_free(&again);
  /* Without decisions, seeds sample different candidates. */
  ET_OK(ms_candidate_make(&again, &ctx, sketch, false, 12345, NULL, 0));
  assert_true(again.trace_hash != c.trace_hash);
  ms_candidate_free(&again);
  mlc_free(a);
  mlc_free(b);
  mlc_free(json);
  sch_trace_free(design);
  sch_trace_free(sketch);
  ms_candidate_free(&c);
  ms_candidate_free(NULL);
  tir_func_free(f);
}

/* A trace that names a block the workload lacks: replay always fails. */
static sch_trace_t *broken_trace(const tir_func_t *f) {
  json_t *j = mlc_json_loads("[[[\"GetBlock\", [], [\"nope\", \"main\"], [\"b0\"]],"
                             " [\"GetLoops\", [\"b0\"], [], [\"l1\"]]], []]",
                             "broken");
  assert_non_null(j);
  sch_trace_t *t = NULL;
  ET_OK(sch_trace_from_json(&t, j));
  json_decref(j);
  return t;
}

static void test_candidate_rejection_says_why(void **state) {
  tir_func_t *f = et_gmm(16, 16, 16);
  ms_ctx_t ctx;
  et_ctx(&ctx, f, 2, 1);
  sch_trace_t *t = broken_trace(f);
  ms_candidate_t c;
  memset(&c, 0x5a, sizeof c);
  assert_int_equal(ms_candidate_make(&c, &ctx, t, true, 1, NULL, 0), MLC_ESCHEDULE);
  assert_non_null(strstr(mlc_error_last(), "replay"));
  assert_non_null(strstr(mlc_error_last(), "nope"));
  assert_null(c.trace);
  assert_null(c.sch);
  assert_int_equal(ms_candidate_make(&c, NULL, t, true, 1, NULL, 0), MLC_EINVAL);
  assert_int_equal(ms_candidate_make(&c, &ctx, NULL, true, 1, NULL, 0), MLC_EINVAL);
  assert_int_equal(ms_candidate_make(&c, &ctx, t, true, 1, NULL, 2), MLC_EINVAL);
  sch_trace_t *d = NULL;
  assert_int_equal(ms_trace_design_part(&d, NULL), MLC_EINVAL);
  sch_trace_free(t);
  tir_func_free(f);
}

/* What a worker does with a candidate: replay its full trace (design,
 * EnterPostproc, the postprocessors' primitives) on the workload. That must
 * be the candidate's own program, and compute the workload's result. */
static void test_full_trace_replays_to_the_candidate(void **state) {
  tir_func_t *f = et_gmm(16, 16, 16);
  ms_ctx_t ctx;
  et_ctx(&ctx, f, 2, 1);
  int npp = 0;
  const ms_postproc_t *const *pp = ms_postprocs_cpu_default(&ctx, &npp);
  for (uint64_t seed = 1; seed <= 4; seed++) {
    sch_trace_t *sketch = et_gmm_sketch(f, 16, 32, seed);
    ms_candidate_t c;
    ET_OK(ms_candidate_make(&c, &ctx, sketch, true, seed, pp, npp));
    sch_t *worker = et_replay(f, c.trace);
    assert_true(tir_func_key(sch_func(worker)) == tir_func_key(sch_func(c.sch)));
    char *a = et_json(sch_get_trace(worker));
    assert_string_equal(a, c.trace_json); /* and it records the same trace again */
    if (seed == 1) st_assert_same_outputs(f, sch_func(worker), 3, 1e-5);
    mlc_free(a);
    sch_free(worker);
    ms_candidate_free(&c);
    sch_trace_free(sketch);
  }
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* The search                                                                */
/* ------------------------------------------------------------------------ */

typedef struct {
  int n;
  uint64_t h[512];
} hashes_t;

static bool has(const hashes_t *s, uint64_t h) {
  for (int i = 0; i < s->n; i++)
    if (s->h[i] == h) return true;
  return false;
}

/* Commits the candidates sampled from `space` with seeds 1..n as measured
 * records; their hashes go to out. */
static void commit_measured(db_t *db, const ms_ctx_t *ctx, const sch_trace_t *space, int n, hashes_t *out) {
  char target[256];
  mlc_target_str(&ctx->target, target, sizeof target);
  for (int i = 0; i < n; i++) {
    ms_candidate_t c;
    ET_OK(ms_candidate_make(&c, ctx, space, false, (uint64_t)i + 1, NULL, 0));
    double run = 1e-3 * (i + 1);
    db_record_t r = {.workload_key = tir_func_key(ctx->workload), .target = target, .device_key = "llvm-test",
                     .device_json = "{}", .trace_json = c.trace_json, .nrun_secs = 1, .run_secs = &run,
                     .error_msg = "", .compiler_version = "0.1.0", .worker_id = "w", .created_at_us = i};
    db_record_finish(&r);
    ET_OK(db_commit_records(db, &r, 1));
    if (!has(out, c.trace_hash)) out->h[out->n++] = c.trace_hash;
    ms_candidate_free(&c);
  }
}

static void test_next_never_returns_a_measured_trace(void **state) {
  char dir[] = "/tmp/mlc-evolve-XXXXXX", uri[64];
  assert_non_null(mkdtemp(dir));
  snprintf(uri, sizeof uri, "file:%s", dir);
  tir_func_t *f = et_gmm(32, 32, 32);
  ms_ctx_t ctx;
  et_ctx(&ctx, f, 2, 3);
  sch_trace_t *sketch = et_gmm_sketch(f, 16, 32, 1);
  ms_space_t space = {1, &sketch};
  db_t *db = NULL;
  ET_OK(db_open(&db, uri));
  hashes_t seen = {0};
  commit_measured(db, &ctx, sketch, 12, &seen);
  int from_db = seen.n;
  ms_search_options_t o = small_options(48);
  int nm = 0;
  const ms_mutator_prob_t *muts = ms_mutators_cpu_default(&ctx, &nm);
  ms_search_t *s = NULL;
  ET_OK(ms_search_create(&s, &ctx, &space, NULL, 0, muts, nm, &o, db));
  cm_model_t *model = random_model(5);
  for (int round = 0; round < 3; round++) {
    ms_candidate_t *c = NULL;
    int n = 0;
    bool done = true;
    ET_OK(ms_search_next(s, model, 1, 12, &c, &n, &done));
    assert_false(done);
    assert_true(n > 0 && n <= 12);
    assert_string_equal(ms_search_status(s), "");
    double secs[12];
    for (int i = 0; i < n; i++) {
      assert_false(has(&seen, c[i].trace_hash)); /* not in the db, not handed out or reported before */
      assert_true(c[i].trace_hash == mlc_hash64(c[i].trace_json, strlen(c[i].trace_json), 0));
      seen.h[seen.n++] = c[i].trace_hash;
      secs[i] = i % 5 == 4 ? -1 : fake_secs(c[i].trace_hash); /* some failures too */
    }
    ET_OK(ms_search_report(s, c, secs, n));
    free_batch(c, n);
  }
  assert_true(seen.n > from_db);
  ms_search_free(s);
  cm_model_free(model);
  db_close(db);
  sch_trace_free(sketch);
  tir_func_free(f);
  nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* Runs `rounds` rounds of a search over the GMM sketch space with seed
 * `seed` on `threads` threads, reporting fake times; the hashes handed out
 * go to out. */
static void run_search(uint64_t seed, int rounds, int threads, hashes_t *out) {
  tir_func_t *f = et_gmm(32, 32, 32);
  ms_ctx_t ctx;
  et_ctx(&ctx, f, 2, seed);
  sch_trace_t *sketches[2] = {et_gmm_sketch(f, 16, 32, 1), et_gmm_sketch(f, 8, 16, 2)};
  ms_space_t space = {2, sketches};
  ms_search_options_t o = small_options(32);
  o.threads = threads;
  int nm = 0;
  const ms_mutator_prob_t *muts = ms_mutators_cpu_default(&ctx, &nm);
  ms_search_t *s = NULL;
  ET_OK(ms_search_create(&s, &ctx, &space, NULL, 0, muts, nm, &o, NULL));
  cm_model_t *model = random_model(seed);
  out->n = 0;
  for (int round = 0; round < rounds; round++) {
    ms_candidate_t *c = NULL;
    int n = 0;
    bool done;
    ET_OK(ms_search_next(s, model, 1, 8, &c, &n, &done));
    double secs[8];
    for (int i = 0; i < n; i++) {
      out->h[out->n++] = c[i].trace_hash;
      secs[i] = fake_secs(c[i].trace_hash);
    }
    ET_OK(ms_search_report(s, c, secs, n));
    free_batch(c, n);
  }
  ms_search_free(s);
  cm_model_free(model);
  sch_trace_free(sketches[0]);
  sch_trace_free(sketches[1]);
  tir_func_free(f);
}

static void test_same_seed_same_batches(void **state) {
  hashes_t a, b, c, other;
  run_search(7, 3, 1, &a);
  run_search(7, 3, 1, &b);
  run_search(7, 3, 3, &c); /* members made on three threads: the same search */
  run_search(8, 1, 1, &other);
  assert_true(a.n >= 3 * 6);
  assert_int_equal(a.n, b.n);
  assert_int_equal(a.n, c.n);
  for (int i = 0; i < a.n; i++) assert_true(a.h[i] == b.h[i] && a.h[i] == c.h[i]);
  int common = 0;
  for (int i = 0; i < other.n; i++) common += has(&a, other.h[i]);
  assert_true(common < other.n); /* another seed, another search */
}

static void test_gives_up_on_a_space_without_valid_candidates(void **state) {
  tir_func_t *f = et_gmm(16, 16, 16);
  ms_ctx_t ctx;
  et_ctx(&ctx, f, 2, 1);
  sch_trace_t *t = broken_trace(f);
  ms_space_t space = {1, &t};
  ms_search_options_t o;
  ms_search_options_default(&o); /* 512 samples a round, 5 rounds */
  ms_search_t *s = NULL;
  ET_OK(ms_search_create(&s, &ctx, &space, NULL, 0, NULL, 0, &o, NULL));
  cm_model_t *model = random_model(1);
  ms_candidate_t *c = (ms_candidate_t *)1;
  int n = -1;
  bool done = false;
  time_t t0 = time(NULL);
  ET_OK(ms_search_next(s, model, 1, 64, &c, &n, &done));
  assert_true(time(NULL) - t0 < 30);
  assert_true(done);
  assert_int_equal(n, 0);
  assert_null(c);
  const char *why = ms_search_status(s);
  assert_non_null(strstr(why, "gave up"));
  assert_non_null(strstr(why, "nope")); /* the last rejection */
  /* Done stays done. */
  ET_OK(ms_search_next(s, model, 1, 64, &c, &n, &done));
  assert_true(done);
  ms_search_free(s);
  /* An empty space gives up at once. */
  ms_space_t empty = {0, NULL};
  ET_OK(ms_search_create(&s, &ctx, &empty, NULL, 0, NULL, 0, &o, NULL));
  ET_OK(ms_search_next(s, model, 1, 64, &c, &n, &done));
  assert_true(done);
  assert_non_null(strstr(ms_search_status(s), "empty"));
  ms_search_free(s);
  cm_model_free(model);
  sch_trace_free(t);
  tir_func_free(f);
}

/* A one-sketch space of GMM-4: its first loop split in two by a sampled
 * tile, the inner factor at most max_inner (-1: any). With any, three
 * traces, (1, 4), (2, 2) and (4, 1), and two programs: lowering drops unit
 * loops, so (1, 4) and (4, 1) are the same loop. With 2, two traces and two
 * programs. */
static sch_trace_t *tiny_space(const tir_func_t *f, int max_inner) {
  sch_t *sch = NULL;
  ET_OK(sch_create(&sch, f, 1, SCH_ERRORS_FAST));
  sch_rv_t b, tiles[2];
  const sch_rv_t *l;
  int nl;
  ET_OK(sch_get_block(sch, &b, "C"));
  ET_OK(sch_get_loops(sch, &l, &nl, b));
  et_tile(sch, l[0], 2, max_inner, NULL, tiles);
  sch_trace_t *t = sch_trace_copy(sch_get_trace(sch));
  sch_free(sch);
  return t;
}

/* The key of the program a candidate lowers to. */
static uint64_t lowered_key(const ms_ctx_t *ctx, const ms_candidate_t *c) {
  tir_func_t *lowered = NULL;
  ET_OK(mlc_lower(&lowered, sch_func(c->sch), &ctx->target, NULL));
  uint64_t key = tir_func_key(lowered);
  tir_func_free(lowered);
  return key;
}

/* The tiny space's three traces make two programs: the search hands out
 * one candidate per program, each once, then says the space is exhausted. */
static void test_tiny_space_is_exhausted(void **state) {
  tir_func_t *f = et_gmm(4, 4, 4);
  ms_ctx_t ctx;
  et_ctx(&ctx, f, 1, 1);
  sch_trace_t *t = tiny_space(f, -1);
  ms_space_t space = {1, &t};
  ms_search_options_t o = small_options(16);
  int nm = 0;
  const ms_mutator_prob_t *muts = ms_mutators_cpu_default(&ctx, &nm);
  ms_search_t *s = NULL;
  ET_OK(ms_search_create(&s, &ctx, &space, NULL, 0, muts, nm, &o, NULL));
  cm_model_t *model = random_model(2);
  hashes_t all = {0}, programs = {0};
  bool done = false;
  int calls = 0;
  for (; !done && calls < 10; calls++) {
    ms_candidate_t *c = NULL;
    int n = 0;
    ET_OK(ms_search_next(s, model, 1, 2, &c, &n, &done));
    assert_true(done == (n == 0));
    double secs[2];
    for (int i = 0; i < n; i++) {
      assert_false(has(&all, c[i].trace_hash));
      all.h[all.n++] = c[i].trace_hash;
      uint64_t key = lowered_key(&ctx, &c[i]);
      assert_false(has(&programs, key));
      programs.h[programs.n++] = key;
      secs[i] = fake_secs(c[i].trace_hash);
    }
    ET_OK(ms_search_report(s, c, secs, n));
    free_batch(c, n);
  }
  assert_true(done);
  assert_int_equal(all.n, 2);
  assert_non_null(strstr(ms_search_status(s), "exhausted"));
  ms_search_free(s);
  cm_model_free(model);
  sch_trace_free(t);
  tir_func_free(f);
}

/* The traces (JSON, mlc_free) one search over db hands out until done. */
static int tiny_space_traces(const ms_ctx_t *ctx, const ms_space_t *space, db_t *db, char **out, int max) {
  ms_search_options_t o = small_options(16);
  int nm = 0, n_out = 0;
  const ms_mutator_prob_t *muts = ms_mutators_cpu_default(ctx, &nm);
  ms_search_t *s = NULL;
  ET_OK(ms_search_create(&s, ctx, space, NULL, 0, muts, nm, &o, db));
  cm_model_t *model = random_model(2);
  bool done = false;
  for (int calls = 0; !done && calls < 10; calls++) {
    ms_candidate_t *c = NULL;
    int n = 0;
    ET_OK(ms_search_next(s, model, 1, 2, &c, &n, &done));
    double secs[2];
    for (int i = 0; i < n; i++) {
      secs[i] = fake_secs(c[i].trace_hash);
      if (n_out < max) assert_non_null(out[n_out++] = mlc_strdup(c[i].trace_json));
    }
    ET_OK(ms_search_report(s, c, secs, n));
    free_batch(c, n);
  }
  ms_search_free(s);
  cm_model_free(model);
  return n_out;
}

/* A trace whose record says `worker-lost` (the worker died on every
 * attempt) is measured again by a later search; one that timed out is not. */
static void test_worker_lost_traces_are_measured_again(void **state) {
  char dir[] = "/tmp/mlc-evolve-XXXXXX", uri[64];
  assert_non_null(mkdtemp(dir));
  snprintf(uri, sizeof uri, "file:%s", dir);
  tir_func_t *f = et_gmm(4, 4, 4);
  ms_ctx_t ctx;
  et_ctx(&ctx, f, 1, 1);
  sch_trace_t *t = tiny_space(f, 2);
  ms_space_t space = {1, &t};
  db_t *db = NULL;
  ET_OK(db_open(&db, uri));
  char target[256];
  mlc_target_str(&ctx.target, target, sizeof target);
  char *traces[8];
  int n = tiny_space_traces(&ctx, &space, db, traces, 8);
  assert_int_equal(n, 2);
  mlc_error_kind_t kinds[2] = {MLC_ERROR_KIND_WORKER_LOST, MLC_ERROR_KIND_TIMEOUT};
  for (int k = 0; k < 2; k++) {
    for (int i = 0; i < n; i++) {
      db_record_t r = {.workload_key = tir_func_key(f), .target = target, .device_key = "llvm-test",
                       .device_json = "{}", .trace_json = traces[i], .error_kind = kinds[k],
                       .error_msg = "lost", .compiler_version = "0.1.0", .worker_id = "w",
                       .created_at_us = k * 10 + i};
      db_record_finish(&r);
      ET_OK(db_commit_records(db, &r, 1));
    }
    char *again[8];
    int m = tiny_space_traces(&ctx, &space, db, again, 8);
    assert_int_equal(m, k == 0 ? 2 : 0); /* worker-lost: all again; timed out: none */
    for (int i = 0; i < m; i++) mlc_free(again[i]);
  }
  for (int i = 0; i < n; i++) mlc_free(traces[i]);
  db_close(db);
  sch_trace_free(t);
  tir_func_free(f);
  nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void test_bad_arguments(void **state) {
  tir_func_t *f = et_gmm(16, 16, 16);
  ms_ctx_t ctx;
  et_ctx(&ctx, f, 2, 1);
  sch_trace_t *t = et_gmm_sketch(f, 16, 32, 1);
  ms_space_t space = {1, &t};
  ms_search_t *s = (ms_search_t *)1;
  assert_int_equal(ms_search_create(&s, NULL, &space, NULL, 0, NULL, 0, NULL, NULL), MLC_EINVAL);
  assert_null(s);
  assert_int_equal(ms_search_create(&s, &ctx, NULL, NULL, 0, NULL, 0, NULL, NULL), MLC_EINVAL);
  ms_search_options_t o;
  ms_search_options_default(&o);
  o.eps_greedy = 1.5;
  assert_int_equal(ms_search_create(&s, &ctx, &space, NULL, 0, NULL, 0, &o, NULL), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "eps_greedy"));
  ms_search_options_default(&o);
  o.population = 0;
  assert_int_equal(ms_search_create(&s, &ctx, &space, NULL, 0, NULL, 0, &o, NULL), MLC_EINVAL);
  ms_search_options_default(&o);
  o.threads = -1;
  assert_int_equal(ms_search_create(&s, &ctx, &space, NULL, 0, NULL, 0, &o, NULL), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "threads (-1)"));
  ms_mutator_prob_t bad = {NULL, 1.0};
  assert_int_equal(ms_search_create(&s, &ctx, &space, NULL, 0, &bad, 1, NULL, NULL), MLC_EINVAL);
  /* NULL options are the defaults. */
  ET_OK(ms_search_create(&s, &ctx, &space, NULL, 0, NULL, 0, NULL, NULL));
  cm_model_t *model = random_model(1);
  ms_candidate_t *c;
  int n;
  bool done;
  assert_int_equal(ms_search_next(s, model, 1, 0, &c, &n, &done), MLC_EINVAL);
  assert_int_equal(ms_search_next(s, NULL, 1, 4, &c, &n, &done), MLC_EINVAL);
  ms_candidate_t empty = {0};
  double secs = 1;
  assert_int_equal(ms_search_report(s, &empty, &secs, 1), MLC_EINVAL);
  ET_OK(ms_search_report(s, NULL, NULL, 0));
  ms_search_free(s);
  ms_search_free(NULL);
  cm_model_free(model);
  sch_trace_free(t);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* Timing (MLC_SEARCH_TIMING=1)                                              */
/* ------------------------------------------------------------------------ */

static double clock_secs(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Lowered features of the batch, to train the model as the driver does. */
static void train(cm_model_t *model, const ms_ctx_t *ctx, const ms_candidate_t *c, int n, const double *secs) {
  cm_features_t feats[64];
  for (int i = 0; i < n; i++) {
    tir_func_t *lowered = NULL;
    ET_OK(mlc_lower(&lowered, sch_func(c[i].sch), &ctx->target, NULL));
    ET_OK(cm_extract(&feats[i], lowered, &ctx->target));
    tir_func_free(lowered);
  }
  ET_OK(cm_model_update(model, 1, feats, secs, n));
  for (int i = 0; i < n; i++) cm_features_free(&feats[i]);
}

/* The real thing at its real size: GMM-512, the CPU default rules, post-
 * processors and mutators, default options, batches of 64, XGBoost trained
 * from the third round on (100 samples). */
static void test_timing_gmm512(void **state) {
  if (!getenv("MLC_SEARCH_TIMING")) {
    print_message("skipped: a timing, run only with MLC_SEARCH_TIMING=1 (on a Release build)\n");
    skip();
  }
  tir_func_t *f = et_gmm(512, 512, 512);
  ms_ctx_t ctx;
  mlc_target_t target;
  ET_OK(mlc_target_parse(&target, "llvm -mcpu=skylake-avx512 -num-cores=2"));
  ms_ctx_init(&ctx, f, "gmm", &target, 1);
  int nr = 0, nm = 0, npp = 0;
  const ms_rule_t *const *rules = ms_rules_cpu_default(&ctx, &nr);
  ms_space_t space;
  ET_OK(ms_space_generate(&space, &ctx, rules, nr));
  const ms_mutator_prob_t *muts = ms_mutators_cpu_default(&ctx, &nm);
  const ms_postproc_t *const *pp = ms_postprocs_cpu_default(&ctx, &npp);
  ms_search_t *s = NULL;
  ET_OK(ms_search_create(&s, &ctx, &space, pp, npp, muts, nm, NULL, NULL));
  cm_model_t *model = NULL;
  ET_OK(cm_model_create(&model, CM_MODEL_XGB, 1));
  for (int round = 0; round < 3; round++) {
    ms_candidate_t *c = NULL;
    int n = 0;
    bool done;
    double t0 = clock_secs(CLOCK_MONOTONIC), c0 = clock_secs(CLOCK_PROCESS_CPUTIME_ID);
    ET_OK(ms_search_next(s, model, 1, 64, &c, &n, &done));
    printf("GMM-512, %d space traces, population 512, model trained on %lld: ms_search_next gave %d "
           "candidates in %.2f s (%.2f s of CPU)\n",
           space.n, (long long)cm_model_ntrained(model), n, clock_secs(CLOCK_MONOTONIC) - t0,
           clock_secs(CLOCK_PROCESS_CPUTIME_ID) - c0);
    double secs[64];
    for (int i = 0; i < n; i++) secs[i] = fake_secs(c[i].trace_hash);
    ET_OK(ms_search_report(s, c, secs, n));
    train(model, &ctx, c, n, secs);
    free_batch(c, n);
  }
  ms_search_free(s);
  cm_model_free(model);
  ms_space_free(&space);
  tir_func_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_options_default),
      cmocka_unit_test(test_candidate_hash_is_the_records),
      cmocka_unit_test(test_candidate_rejection_says_why),
      cmocka_unit_test(test_full_trace_replays_to_the_candidate),
      cmocka_unit_test(test_next_never_returns_a_measured_trace),
      cmocka_unit_test(test_same_seed_same_batches),
      cmocka_unit_test(test_gives_up_on_a_space_without_valid_candidates),
      cmocka_unit_test(test_tiny_space_is_exhausted),
      cmocka_unit_test(test_worker_lost_traces_are_measured_again),
      cmocka_unit_test(test_bad_arguments),
      cmocka_unit_test(test_timing_gmm512),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
