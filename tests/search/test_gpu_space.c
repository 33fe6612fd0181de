/*
 * test_gpu_space.c - the GPU design space (ScheduleRule/Postproc/Mutator::
 * DefaultCUDA; docs/search/gpu.md): the rule, postprocessor and mutator
 * sets each target kind gets; the exact instruction sequence of GMM's CUDA
 * sketch; that candidates of GMM, C2D, GMV and softmax (design decisions
 * and fresh samples) replay, pass every GPU postprocessor including
 * VerifyGPUCode for sm_80 and sm_90, and compute what the workload computes
 * (reference interpreter: thread-bound loops run one after another);
 * VerifyGPUCode's rejections with their reasons (threads per block, shared
 * memory, vthreads, vector width, the tiling's thread bounds, host stores);
 * RewriteUnboundBlock on an unscheduled program; MutateThreadBinding;
 * ms_tune for a cuda target with a stand-in runner; and, where the compiler
 * has a CUDA backend and ptxas is installed, PTX of design-space samples
 * assembled for sm_80 / sm_90.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_testing.h"
#include "tests/schedule/sched_testing.h"

static tir_func_t *workload(const char *name, const int64_t *shape, int n) {
  tir_func_t *f = NULL;
  tir_dtype_t acc = {0, 0, 0};
  OK(tir_workload_build(&f, name, shape, n, tir_dt_FLOAT32(), acc));
  return f;
}

/* ------------------------------------------------------------------------ */
/* Rule sets                                                                 */
/* ------------------------------------------------------------------------ */

static void target_kind_picks_the_defaults(void **state) {
  (void)state;
  int64_t shape[3] = {64, 64, 16};
  tir_func_t *f = workload("GMM", shape, 3);
  ms_ctx_t cuda, rocm, cpu;
  gpu_ctx(&cuda, f, "cuda -arch=sm_61", 0);
  gpu_ctx(&rocm, f, "rocm -mcpu=gfx90a", 0);
  gpu_ctx(&cpu, f, "llvm -mcpu=skylake -num-cores=2", 0);
  static const char *const rules[] = {"MultiLevelTiling", "AutoInline", "CrossThreadReduction",
                                      "ParallelizeVectorizeUnroll", "AutoBind"};
  static const char *const pps[] = {"DisallowDynamicLoop",          "RewriteCooperativeFetch",
                                    "RewriteUnboundBlock",          "RewriteParallelVectorizeUnroll",
                                    "RewriteReductionBlock",        "VerifyGPUCode"};
  int n;
  const ms_rule_t *const *r = ms_rules_default(&cuda, &n);
  assert_int_equal(n, 5);
  for (int i = 0; i < n; i++) assert_string_equal(r[i]->name, rules[i]);
  assert_ptr_equal(ms_rules_default(&rocm, &n), r);
  assert_ptr_equal(ms_rules_default(&cpu, &n), ms_rules_cpu_default(&cpu, &n));
  const ms_postproc_t *const *pp = ms_postprocs_default(&cuda, &n);
  assert_int_equal(n, 6);
  for (int i = 0; i < n; i++) assert_string_equal(pp[i]->name, pps[i]);
  assert_ptr_equal(ms_postprocs_default(&cpu, &n), ms_postprocs_cpu_default(&cpu, &n));
  const ms_mutator_prob_t *m = ms_mutators_default(&cuda, &n);
  assert_int_equal(n, 3);
  assert_string_equal(m[0].mutator->name, "MutateTileSize");
  assert_string_equal(m[1].mutator->name, "MutateUnroll");
  assert_string_equal(m[2].mutator->name, "MutateThreadBinding");
  assert_true(m[0].prob == 0.9 && m[1].prob == 0.08 && m[2].prob == 0.02);
  assert_ptr_equal(ms_mutator_find("MutateThreadBinding"), m[2].mutator);
  /* CPU and GPU variants share names: the target's comes first */
  assert_ptr_equal(ms_rule_find_for(&cuda, "MultiLevelTiling"), r[0]);
  assert_ptr_equal(ms_rule_find_for(&cpu, "MultiLevelTiling"), ms_rule_find("MultiLevelTiling"));
  assert_ptr_not_equal(r[0], ms_rule_find("MultiLevelTiling"));
  assert_int_equal(rocm.target.thread_warp_size, 64);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* The exact GMM sketch                                                      */
/* ------------------------------------------------------------------------ */

/* MetaSchedule's CUDA sketch of a matmul, instruction kinds in order. */
static const char *const GMM_KINDS[] = {
    "GetBlock", "GetBlock", "Annotate", "GetLoops",                                     /* lookups, structure */
    "SamplePerfectTile", "Split", "SamplePerfectTile", "Split", "SamplePerfectTile", "Split", /* i, j, k */
    "Reorder", "Fuse", "Bind", "Fuse", "Bind", "Fuse", "Bind",                           /* block/vthread/thread */
    "Annotate", "Annotate",                                                             /* thread extent bounds */
    "CacheWrite", "ReverseComputeAt",                                                   /* local write cache */
    "CacheRead", "ComputeAt", "GetLoops", "Fuse", "SampleCategorical", "Annotate",      /* A in shared */
    "CacheRead", "ComputeAt", "GetLoops", "Fuse", "SampleCategorical", "Annotate",      /* B in shared */
    "SampleCategorical", "Annotate",                                                    /* unroll */
};

static void gmm_sketch_is_metaschedules(void **state) {
  (void)state;
  int64_t shape[3] = {128, 128, 64};
  tir_func_t *f = workload("GMM", shape, 3);
  ms_ctx_t ctx;
  ms_space_t space;
  gpu_ctx(&ctx, f, SM80, 1);
  make_space(&space, &ctx, NULL, 0);
  assert_int_equal(space.n, 1);
  const sch_trace_t *t = space.traces[0];
  int n = (int)(sizeof GMM_KINDS / sizeof GMM_KINDS[0]);
  assert_int_equal(t->n, n);
  for (int i = 0; i < n; i++) assert_string_equal(t->insts[i].kind->name, GMM_KINDS[i]);
  char *py = sch_trace_to_python(t);
  assert_non_null(strstr(py, "sch.bind(loop=l31, thread_axis=\"blockIdx.x\")"));
  assert_non_null(strstr(py, "thread_axis=\"vthread.x\""));
  assert_non_null(strstr(py, "storage_scope=\"local\""));
  assert_non_null(strstr(py, "ann_key=\"meta_schedule.cooperative_fetch\""));
  assert_non_null(strstr(py, "candidates=[1, 2, 3, 4]")); /* float32: 16-byte fetches at most */
  assert_non_null(strstr(py, "candidates=[0, 16, 64, 512, 1024]"));
  mlc_free(py);
  ms_space_free(&space);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* Candidates keep the meaning and pass VerifyGPUCode                        */
/* ------------------------------------------------------------------------ */

/* Every sketch with its decisions and with up to `nseeds` fresh samples
 * each: a candidate is either rejected by a named postprocessor or (for the
 * first MAX_RUNS valid ones of a sketch) computes what f does. Small shapes
 * leave MultiLevelTiling few threads, so many samples are rejected for too
 * few threads per block, as on a real search. Returns how many were valid. */
#define MAX_RUNS 3
static int check_candidates(const tir_func_t *f, const char *target, int nseeds, double rtol, bool interpret) {
  ms_ctx_t ctx;
  ms_space_t space;
  gpu_ctx(&ctx, f, target, 11);
  make_space(&space, &ctx, NULL, 0);
  int npp, valid = 0;
  const ms_postproc_t *const *pp = ms_postprocs_default(&ctx, &npp);
  for (int i = 0; i < space.n; i++) {
    int runs = 0;
    for (int s = 0; s <= nseeds && runs < MAX_RUNS; s++) {
      ms_candidate_t c;
      int rc = ms_candidate_make(&c, &ctx, space.traces[i], s == 0, 1000 + (uint64_t)s, pp, npp);
      if (rc != MLC_OK) {
        const char *why = mlc_error_last();
        bool named = strncmp(why, "VerifyGPUCode: ", 15) == 0 || strncmp(why, "replay", 6) == 0;
        if (!named || getenv("GPU_SPACE_VERBOSE"))
          fprintf(stderr, "%s on %s, sketch %d seed %d: %s\n", f->name, target, i, s, why);
        assert_int_equal(rc, MLC_ESCHEDULE);
        assert_true(named);
        continue;
      }
      valid++;
      runs++;
      if (interpret) st_assert_same_outputs(f, sch_func(c.sch), 5 + (uint64_t)s, rtol);
      ms_candidate_free(&c);
    }
  }
  ms_space_free(&space);
  if (getenv("GPU_SPACE_VERBOSE")) fprintf(stderr, "%s %s: %d valid\n", f->name, target, valid);
  return valid;
}

static void check_workload(const char *name, const int64_t *shape, int nshape, int nseeds, double rtol,
                           bool interpret) {
  tir_func_t *f = workload(name, shape, nshape);
  int v80 = check_candidates(f, SM80, nseeds, rtol, interpret);
  int v90 = check_candidates(f, SM90, nseeds, rtol, interpret);
  if (v80 == 0 || v90 == 0) fprintf(stderr, "%s: no valid candidate (sm_80 %d, sm_90 %d)\n", name, v80, v90);
  assert_true(v80 > 0 && v90 > 0);
  tir_func_free(f);
}

/* Small shapes (at most two warps of outputs, so the tiling may use any
 * thread count) run in the interpreter, where thread loops are serial and
 * each thread redoes the block's cooperative fetch; realistic shapes are
 * checked for VerifyGPUCode (threads, shared memory) without running. */
static void gmm_candidates_keep_meaning(void **state) {
  (void)state;
  int64_t small[3] = {8, 8, 16}, large[3] = {512, 512, 512};
  check_workload("GMM", small, 3, 3, 1e-5, true);
  check_workload("GMM", large, 3, 48, 0, false);
  tir_func_t *f = workload("GMM", small, 3); /* ROCm: the same rules, its warp of 64 */
  assert_true(check_candidates(f, "rocm -mcpu=gfx90a", 3, 1e-5, true) > 0);
  tir_func_free(f);
}

static void c2d_candidates_keep_meaning(void **state) {
  (void)state;
  int64_t small[9] = {1, 4, 4, 4, 4, 3, 3, 1, 1}, large[9] = {1, 14, 14, 64, 64, 3, 3, 1, 1};
  check_workload("C2D", small, 9, 3, 1e-5, true);
  check_workload("C2D", large, 9, 16, 0, false);
}

/* Reductions without reuse: CrossThreadReduction's forks. */
static void reductions_use_cross_thread_reduction(void **state) {
  (void)state;
  int64_t sfm[2] = {4, 64}, gmv[2] = {4, 256};
  tir_func_t *f = workload("SFM", sfm, 2);
  ms_ctx_t ctx;
  ms_space_t space;
  gpu_ctx(&ctx, f, SM80, 3);
  make_space(&space, &ctx, NULL, 0);
  int with_ctr = 0, fused = 0;
  for (int i = 0; i < space.n; i++) {
    char *py = sch_trace_to_python(space.traces[i]);
    if (strstr(py, "candidates=[4, 8, 16, 32, 64, 128, 256, 512]")) with_ctr++;
    /* TVM's fused softmax: the sum computed in the normalisation's row loop,
     * the max in the same loop, both kept in shared memory */
    if (strstr(py, "sch.set_scope(block=b2, buffer_index=0, storage_scope=\"shared\")") &&
        strstr(py, "sch.set_scope(block=b0, buffer_index=0, storage_scope=\"shared\")"))
      fused++;
    mlc_free(py);
  }
  assert_int_equal(space.n, 4);
  assert_true(with_ctr == 3 && fused == 1);
  ms_space_free(&space);
  tir_func_free(f);
  check_workload("SFM", sfm, 2, 3, 1e-5, true);
  check_workload("GMV", gmv, 2, 3, 1e-5, true);
}

/* ------------------------------------------------------------------------ */
/* VerifyGPUCode and RewriteUnboundBlock                                     */
/* ------------------------------------------------------------------------ */

/* GMM-64x64x256's loops i, j fused and split [None, (vthreads,) threads],
 * bound to blockIdx.x (/ vthread.x) / threadIdx.x; with shared_b, all of B
 * read into shared memory per block; with vector, the column loop split by
 * it first and vectorized (inner); then the GPU postprocessors. */
typedef struct {
  int64_t threads, vthreads, vector;
  bool shared_b;
} bind_t;

static int bind_gmm(const char *target, bind_t o, ms_candidate_t *c) {
  int64_t shape[3] = {64, 64, 256};
  tir_func_t *f = workload("GMM", shape, 3);
  ms_ctx_t ctx;
  gpu_ctx(&ctx, f, target, 0);
  sch_t *sch;
  OK(sch_create(&sch, f, 0, SCH_ERRORS_FAST));
  sch_rv_t b, fused, cache, parts[3];
  const sch_rv_t *loops, *split;
  int n, np = 0;
  OK(sch_get_block(sch, &b, "C"));
  OK(sch_get_loops(sch, &loops, &n, b));
  sch_rv_t i = loops[0], j = loops[1], k = loops[2], jv = SCH_RV_NONE;
  if (o.vector) { /* C[i, j0 * v + jv]: the reduction outside the vector */
    sch_arg_t fv[2] = {sch_arg_none(), sch_arg_int(o.vector)};
    OK(sch_split(sch, &split, j, fv, 2, true));
    j = split[0];
    jv = split[1];
    sch_rv_t order[4] = {i, j, k, jv};
    OK(sch_reorder(sch, order, 4));
  }
  sch_rv_t ij[2] = {i, j};
  OK(sch_fuse(sch, &fused, ij, 2, true));
  sch_arg_t fs[3] = {sch_arg_none(), sch_arg_int(o.vthreads), sch_arg_int(o.threads)};
  if (o.vthreads) OK(sch_split(sch, &split, fused, fs, 3, true));
  else {
    fs[1] = fs[2];
    OK(sch_split(sch, &split, fused, fs, 2, true));
  }
  np = o.vthreads ? 3 : 2;
  memcpy(parts, split, sizeof(*parts) * (size_t)np);
  OK(sch_bind(sch, parts[0], "blockIdx.x"));
  if (o.vthreads) OK(sch_bind(sch, parts[1], "vthread.x"));
  OK(sch_bind(sch, parts[np - 1], "threadIdx.x"));
  if (o.vector) OK(sch_vectorize(sch, jv));
  if (o.shared_b) {
    OK(sch_cache_read(sch, &cache, b, 1, "shared", &b, 1));
    OK(sch_compute_at(sch, cache, parts[0], true, -1));
  }
  int npp;
  const ms_postproc_t *const *pp = ms_postprocs_default(&ctx, &npp);
  int rc = ms_candidate_make(c, &ctx, sch_get_trace(sch), true, 0, pp, npp);
  if (rc == MLC_OK) st_assert_same_outputs(f, sch_func(c->sch), 9, 1e-5);
  sch_free(sch);
  tir_func_free(f);
  return rc;
}

static void expect_rejection(const char *target, bind_t o, const char *why) {
  ms_candidate_t c;
  int rc = bind_gmm(target, o, &c);
  if (rc == MLC_OK) ms_candidate_free(&c);
  assert_int_equal(rc, MLC_ESCHEDULE);
  if (!strstr(mlc_error_last(), why)) fprintf(stderr, "got: %s\nwanted: %s\n", mlc_error_last(), why);
  assert_non_null(strstr(mlc_error_last(), why));
}

static void verify_gpu_code_rejects_with_the_reason(void **state) {
  (void)state;
  ms_candidate_t c;
  bind_t plain = {256, 0, 0, false}, many = {2048, 0, 0, false}, vth = {32, 16, 0, false};
  bind_t shared = {128, 0, 0, true}, vec = {32, 0, 4, false}, wide = {32, 0, 8, false};
  assert_int_equal(bind_gmm(SM80, plain, &c), MLC_OK);
  ms_candidate_free(&c);
  expect_rejection(SM80, many, "VerifyGPUCode: kernel 0: 2048 threads per block, more than "
                               "max_threads_per_block 1024 of cuda -arch=sm_80");
  expect_rejection(SM90, shared, "VerifyGPUCode: kernel 0: 65536 bytes of shared memory, more than "
                                 "max_shared_memory_per_block 49152");
  assert_int_equal(bind_gmm(SM90 " -max_shared_memory_per_block=98304", shared, &c), MLC_OK);
  ms_candidate_free(&c);
  expect_rejection(SM80, vth, "VerifyGPUCode: kernel 0: vthread.x extent 16, more than 8");
  assert_int_equal(bind_gmm(SM80, vec, &c), MLC_OK); /* 4 floats: 16 bytes */
  ms_candidate_free(&c);
  expect_rejection(SM80, wide, "VerifyGPUCode: kernel 0: a 8-lane 32-bit vector (32 bytes, more than 16)");
}

/* MultiLevelTiling's thread bounds: a tiling that gives a large matmul a
 * handful of threads is rejected. */
static void too_few_threads_for_the_tiling_are_rejected(void **state) {
  (void)state;
  int64_t shape[3] = {64, 64, 16};
  tir_func_t *f = workload("GMM", shape, 3);
  ms_ctx_t ctx;
  ms_space_t space;
  gpu_ctx(&ctx, f, SM80, 1);
  make_space(&space, &ctx, NULL, 0);
  /* i and j tiled [2, 4, 1, 4, 2] and [2, 2, 2, 4, 2]: 1 x 2 = 2 threads */
  int64_t di[5] = {2, 4, 1, 4, 2}, dj[5] = {2, 2, 2, 4, 2};
  sch_trace_t *t1, *t2;
  int tiles[2], nt = 0;
  for (int i = 0; i < space.traces[0]->n && nt < 2; i++)
    if (strcmp(space.traces[0]->insts[i].kind->name, "SamplePerfectTile") == 0) tiles[nt++] = i;
  assert_int_equal(nt, 2);
  sch_arg_t items[2][5];
  sch_arg_t d[2];
  for (int k = 0; k < 5; k++) {
    items[0][k] = sch_arg_int(di[k]);
    items[1][k] = sch_arg_int(dj[k]);
  }
  for (int j = 0; j < 2; j++) {
    d[j].kind = SCH_ARG_LIST;
    d[j].u.list.n = 5;
    d[j].u.list.items = items[j];
  }
  OK(sch_trace_with_decision(&t1, space.traces[0], tiles[0], &d[0]));
  OK(sch_trace_with_decision(&t2, t1, tiles[1], &d[1]));
  int npp;
  const ms_postproc_t *const *pp = ms_postprocs_default(&ctx, &npp);
  ms_candidate_t c;
  assert_int_equal(ms_candidate_make(&c, &ctx, t2, true, 0, pp, npp), MLC_ESCHEDULE);
  assert_non_null(strstr(mlc_error_last(), "runs on 2 threads, outside [32, 1024]"));
  sch_trace_free(t1);
  sch_trace_free(t2);
  ms_space_free(&space);
  tir_func_free(f);
}

/* Without RewriteUnboundBlock, an unbound program is rejected: its stores
 * would be host code. */
static void stores_outside_kernels_are_rejected(void **state) {
  (void)state;
  int64_t shape[3] = {8, 8, 8};
  tir_func_t *f = workload("GMM", shape, 3);
  ms_ctx_t ctx;
  gpu_ctx(&ctx, f, SM80, 0);
  sch_t *sch;
  OK(sch_create(&sch, f, 0, SCH_ERRORS_FAST));
  const ms_postproc_t *verify = ms_postproc_find("VerifyGPUCode");
  assert_non_null(verify);
  assert_int_equal(ms_postprocs_apply(&ctx, &verify, 1, sch), MLC_ESCHEDULE);
  assert_non_null(strstr(mlc_error_last(), "VerifyGPUCode: a store to C outside any kernel"));
  sch_free(sch);
  tir_func_free(f);
}

/* An unscheduled program: every block gets threads from the postprocessor. */
static void unbound_blocks_get_threads(void **state) {
  (void)state;
  int64_t shape[3] = {8, 16, 12};
  tir_func_t *f = workload("D+B+R", shape, 3);
  ms_ctx_t ctx;
  gpu_ctx(&ctx, f, SM80, 0);
  sch_trace_t *empty;
  sch_t *sch;
  OK(sch_create(&sch, f, 0, SCH_ERRORS_FAST));
  empty = sch_trace_copy(sch_get_trace(sch));
  sch_free(sch);
  int npp;
  const ms_postproc_t *const *pp = ms_postprocs_default(&ctx, &npp);
  ms_candidate_t c;
  OK(ms_candidate_make(&c, &ctx, empty, true, 0, pp, npp));
  char *py = sch_trace_to_python(c.trace);
  assert_non_null(strstr(py, "thread_axis=\"blockIdx.x\""));
  assert_non_null(strstr(py, "thread_axis=\"threadIdx.x\""));
  mlc_free(py);
  st_assert_same_outputs(f, sch_func(c.sch), 4, 1e-5);
  ms_candidate_free(&c);
  sch_trace_free(empty);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* MutateThreadBinding                                                       */
/* ------------------------------------------------------------------------ */

static void mutate_thread_binding_changes_a_thread_count(void **state) {
  (void)state;
  int64_t sfm[2] = {4, 64}, gmm[3] = {64, 64, 16};
  const ms_mutator_t *m = ms_mutator_find("MutateThreadBinding");
  assert_non_null(m);
  tir_func_t *f = workload("SFM", sfm, 2);
  ms_ctx_t ctx;
  ms_space_t space;
  gpu_ctx(&ctx, f, SM80, 3);
  make_space(&space, &ctx, NULL, 0);
  mlc_rng_t rng;
  mlc_rng_seed(&rng, 7);
  int changed = 0;
  for (int i = 0; i < space.n; i++) {
    sch_trace_t *out = NULL;
    int rc = m->apply(m, &ctx, space.traces[i], &rng, &out);
    if (rc == MLC_ENOTFOUND) continue;
    OK(rc);
    int diff = 0;
    for (int k = 0; k < out->n; k++)
      if (out->decisions[k].kind == SCH_ARG_INT && out->decisions[k].u.i != space.traces[i]->decisions[k].u.i) {
        assert_string_equal(out->insts[k].kind->name, "SampleCategorical");
        diff++;
      }
    assert_int_equal(diff, 1);
    changed++;
    sch_trace_free(out);
  }
  assert_true(changed > 0);
  ms_space_free(&space);
  tir_func_free(f);
  /* a matmul's CUDA sketch has no sampled thread count */
  f = workload("GMM", gmm, 3);
  gpu_ctx(&ctx, f, SM80, 3);
  make_space(&space, &ctx, NULL, 0);
  sch_trace_t *out = NULL;
  assert_int_equal(m->apply(m, &ctx, space.traces[0], &rng, &out), MLC_ENOTFOUND);
  assert_null(out);
  ms_space_free(&space);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* ms_tune for a cuda target, measured by a stand-in for a GPU worker        */
/* ------------------------------------------------------------------------ */

/* Times every job by its trace (a made-up but stable cost), after checking
 * that it replays on the workload: what the farm's cuda worker returns,
 * without a GPU. */
static int sim_run(ms_runner_t *self, const ms_job_t *jobs, int n, mlc_measure_result_t *results) {
  (void)self;
  for (int i = 0; i < n; i++) {
    memset(&results[i], 0, sizeof results[i]);
    sch_t *sch;
    OK(sch_create(&sch, jobs[i].workload, 0, SCH_ERRORS_FAST));
    OK(sch_trace_apply(sch, jobs[i].trace, true));
    sch_free(sch);
    uint64_t h;
    char *text;
    OK(ms_trace_text(&text, &h, jobs[i].trace));
    mlc_free(text);
    results[i].nrun_secs = 1;
    results[i].run_secs[0] = 1e-4 * (1.0 + (double)(h % 1000) / 1000.0);
  }
  return MLC_OK;
}

static void tune_cuda_target_end_to_end(void **state) {
  (void)state;
  char dir[] = "/tmp/mlc-test-gpu-tune-XXXXXX", uri[64], cmd[96];
  assert_non_null(mkdtemp(dir));
  snprintf(uri, sizeof uri, "file:%s", dir);
  db_t *db;
  OK(db_open(&db, uri));
  ms_runner_t runner = {.name = "sim", .run = sim_run, .free = NULL};
  snprintf(runner.device_key, sizeof runner.device_key, "cuda-sm90");
  snprintf(runner.device_json, sizeof runner.device_json, "{\"name\":\"simulated\"}");
  snprintf(runner.worker_id, sizeof runner.worker_id, "sim");
  int64_t shape[3] = {128, 128, 128};
  tir_func_t *f = workload("GMM", shape, 3);
  const char *name = "gmm";
  mlc_target_t t;
  OK(mlc_target_parse(&t, SM90));
  ms_tune_options_t o;
  ms_tune_options_default(&o);
  o.trials = 16;
  o.per_round = 8;
  o.seed = 3;
  o.search.population = 32;
  o.search.generations = 2;
  o.search.init_min_valid = 8;
  ms_tune_result_t res;
  OK(ms_tune(&res, &f, &name, 1, &t, db, &runner, &o));
  assert_int_equal(res.ntasks, 1);
  if (res.tasks[0].trials != 16) fprintf(stderr, "status: %s\n", res.tasks[0].status);
  assert_int_equal(res.tasks[0].trials, 16);
  assert_true(res.tasks[0].best_secs > 0);
  db_result_t *recs = NULL;
  db_filter_t filter = {.workload_key = res.tasks[0].key, .target = "cuda -arch=sm_90"};
  OK(db_records(db, &recs, &filter));
  assert_true(recs->nrecords >= 16); /* the trials and the default schedule */
  db_result_free(recs);
  ms_tune_result_free(&res);
  tir_func_free(f);
  db_close(db);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

/* The local runner for a GPU target needs that GPU here: without one it
 * says so at once (the probe runs in a child; this process never loads the
 * driver). */
static void local_runner_needs_the_gpu(void **state) {
  (void)state;
  mlc_target_t t, host;
  OK(mlc_target_parse(&t, SM90));
  mlc_target_host(&host);
  ms_runner_t *r = NULL;
  OK(ms_runner_local_target(&r, &host, 1, NULL));
  assert_int_equal(strncmp(r->device_key, "llvm-", 5), 0);
  ms_runner_free(r);
  r = NULL;
  int rc = ms_runner_local_target(&r, &t, 2, NULL);
  if (rc == MLC_OK) { /* a machine with an sm_90 GPU */
    assert_string_equal(r->device_key, "cuda-sm90");
    assert_non_null(strstr(r->device_json, "\"arch\":\"sm_90\""));
    ms_runner_free(r);
    return;
  }
  assert_null(r);
  if (rc == MLC_EUNSUPPORTED) { /* a GPU of another architecture */
    assert_non_null(strstr(mlc_error_last(), "cannot measure for 'cuda -arch=sm_90' here"));
    return;
  }
  assert_int_equal(rc, MLC_ENOTFOUND);
  assert_non_null(strstr(mlc_error_last(), "no CUDA device on this machine ("));
  assert_non_null(strstr(mlc_error_last(), "pass --farm ENDPOINT"));
}

/* ------------------------------------------------------------------------ */
/* PTX of design-space samples, assembled by ptxas                           */
/* ------------------------------------------------------------------------ */

/* Builds the candidate for target and assembles its PTX with ptxas: the
 * build's status (its error in mlc_error_last()). */
static int assemble(const ms_candidate_t *c, const char *target, const char *arch) {
  mlc_target_t t;
  OK(mlc_target_parse(&t, target));
  char path[32];
  int rc = write_device_code(c, &t, path, "mlc_gpu_space");
  if (rc != MLC_OK) return rc;
  char cmd[512];
  snprintf(cmd, sizeof cmd, PTXAS " -arch=%s %s -o /dev/null", arch, path);
  int st = system(cmd);
  if (st != 0) fprintf(stderr, "ptxas failed on %s (kept for a look)\n", path);
  else unlink(path);
  assert_int_equal(st, 0);
  return MLC_OK;
}

/* Up to two valid samples of the space of f for target assembled; how many.
 * *first_error: the first build error (borrowed text copied), "" if none. */
static int assemble_samples(const tir_func_t *f, const char *target, const char *arch, char *first_error,
                            size_t len) {
  ms_ctx_t ctx;
  ms_space_t space;
  gpu_ctx(&ctx, f, target, 21);
  make_space(&space, &ctx, NULL, 0);
  int npp, built = 0;
  const ms_postproc_t *const *pp = ms_postprocs_default(&ctx, &npp);
  for (int s = 0; s < 32 && built < 2; s++) {
    ms_candidate_t c;
    if (ms_candidate_make(&c, &ctx, space.traces[s % space.n], false, 500 + (uint64_t)s, pp, npp) != MLC_OK)
      continue;
    int rc = assemble(&c, target, arch);
    if (rc == MLC_OK) built++;
    else if (!first_error[0]) snprintf(first_error, len, "%s", mlc_error_last());
    ms_candidate_free(&c);
  }
  ms_space_free(&space);
  return built;
}

/* Where the compiler has its NVPTX backend and the CUDA toolkit is here:
 * samples of GMM, C2D and softmax's spaces give PTX that ptxas accepts for
 * sm_80 and sm_90. Skipped with the reason when either is missing. A
 * softmax sample whose cross-thread reduction the code generator does not
 * yet emit is tolerated (the other sketches must build). */
static void ptx_of_samples_assembles(void **state) {
  (void)state;
  SKIP_WITHOUT_PTXAS();
  static const struct { const char *name; int64_t shape[9]; int n; } cases[] = {
      {"GMM", {64, 64, 64}, 3}, {"C2D", {1, 8, 8, 16, 16, 3, 3, 1, 1}, 9}, {"SFM", {8, 128}, 2}};
  static const char *const targets[2][2] = {{SM80, "sm_80"}, {SM90, "sm_90"}};
  for (size_t w = 0; w < sizeof cases / sizeof cases[0]; w++) {
    tir_func_t *f = workload(cases[w].name, cases[w].shape, cases[w].n);
    for (int k = 0; k < 2; k++) {
      char why[512] = "";
      int built = assemble_samples(f, targets[k][0], targets[k][1], why, sizeof why);
      if (built == 0 && w == 0) { /* no CUDA backend in the compiler yet */
        fprintf(stderr, "skipped: mlc_build for %s: %s\n", targets[k][0], why);
        tir_func_free(f);
        skip();
      }
      if (why[0]) fprintf(stderr, "note: %s on %s: a sample did not build: %s\n", cases[w].name, targets[k][0], why);
      if (why[0]) assert_non_null(strstr(why, "cross-thread reduction"));
      assert_true(built > 0);
    }
    tir_func_free(f);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(target_kind_picks_the_defaults),
      cmocka_unit_test(gmm_sketch_is_metaschedules),
      cmocka_unit_test(gmm_candidates_keep_meaning),
      cmocka_unit_test(c2d_candidates_keep_meaning),
      cmocka_unit_test(reductions_use_cross_thread_reduction),
      cmocka_unit_test(verify_gpu_code_rejects_with_the_reason),
      cmocka_unit_test(too_few_threads_for_the_tiling_are_rejected),
      cmocka_unit_test(stores_outside_kernels_are_rejected),
      cmocka_unit_test(unbound_blocks_get_threads),
      cmocka_unit_test(mutate_thread_binding_changes_a_thread_count),
      cmocka_unit_test(tune_cuda_target_end_to_end),
      cmocka_unit_test(local_runner_needs_the_gpu),
      cmocka_unit_test(ptx_of_samples_assembles),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
