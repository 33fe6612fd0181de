/*
 * test_rules.c - the schedule rules one by one (search/space/rule_*.c),
 * called directly on a block: what each produces (forks, annotations,
 * programs that compute what the original did), what each refuses
 * (MultiLevelTiling leaves elementwise blocks, AutoInline keeps branching
 * and exp blocks, AddRFactor leaves reductions with enough parallelism,
 * ParallelizeVectorizeUnroll touches only the root), and the block analyses
 * they decide with.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "search/space/rules.h"
#include "tests/schedule/sched_testing.h"

#define HEADER "# from tvm.script import tir as T\n\n@T.prim_func\n"

/* B = A * 2; C = B + 1: elementwise only. */
static const char ELEMENTWISE[] =
    HEADER
    "def main(A: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    B = T.alloc_buffer((16, 16))\n"
    "    for i, j in T.grid(16, 16):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(A[vi, vj])\n"
    "            T.writes(B[vi, vj])\n"
    "            B[vi, vj] = A[vi, vj] * T.float32(2)\n"
    "    for i, j in T.grid(16, 16):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(B[vi, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            C[vi, vj] = B[vi, vj] + T.float32(1)\n";

/* K = 1 (reads nothing); C = A + K. */
static const char CONST_TENSOR[] =
    HEADER
    "def main(A: T.Buffer((8,), \"float32\"), C: T.Buffer((8,), \"float32\")):\n"
    "    K = T.alloc_buffer((8,))\n"
    "    for i in range(8):\n"
    "        with T.block(\"K\"):\n"
    "            vi = T.axis.spatial(8, i)\n"
    "            T.reads()\n"
    "            T.writes(K[vi])\n"
    "            K[vi] = T.float32(1)\n"
    "    for i, k in T.grid(8, 4):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    "            T.reads(A[vi], K[vi])\n"
    "            T.writes(C[vi])\n"
    "            with T.init():\n"
    "                C[vi] = T.float32(0)\n"
    "            C[vi] = C[vi] + A[vi] * K[vi]\n";

static tir_func_t *workload(const char *name, const int64_t *shape, int n) {
  tir_func_t *f = NULL;
  tir_dtype_t acc = {0, 0, 0};
  if (tir_workload_build(&f, name, shape, n, tir_dt_FLOAT32(), acc) != MLC_OK) {
    fprintf(stderr, "%s: %s\n", name, mlc_error_last());
    fail();
  }
  return f;
}

static void ctx_for(ms_ctx_t *ctx, const tir_func_t *f, int cores) {
  mlc_target_t t;
  char spec[64];
  snprintf(spec, sizeof spec, "llvm -mcpu=skylake-avx512 -num-cores=%d", cores);
  assert_int_equal(mlc_target_parse(&t, spec), MLC_OK);
  ms_ctx_init(ctx, f, f->name, &t, 0);
}

static sch_t *schedule(const tir_func_t *f) {
  sch_t *sch = NULL;
  assert_int_equal(sch_create(&sch, f, 1, SCH_ERRORS_FAST), MLC_OK);
  return sch;
}

/* Applies a rule to one block; returns the schedules (caller frees). */
static sch_t **apply(const ms_rule_t *rule, const ms_ctx_t *ctx, sch_t *sch, const char *block, int *n) {
  sch_t **out = NULL;
  int cap = 0;
  *n = 0;
  int rc = rule->apply(rule, ctx, sch, block, &out, n, &cap);
  if (rc != MLC_OK) fprintf(stderr, "%s: %s\n", rule->name, mlc_error_last());
  assert_int_equal(rc, MLC_OK);
  return out;
}

static void free_all(sch_t **s, int n) {
  for (int i = 0; i < n; i++) sch_free(s[i]);
  mlc_free(s);
}

static bool trace_has(const sch_t *sch, const char *needle) {
  char *py = sch_trace_to_python(sch_get_trace(sch));
  bool found = strstr(py, needle) != NULL;
  mlc_free(py);
  return found;
}

/* As trace_has, printing the trace when the needle is missing. */
static void assert_trace_has(const sch_t *sch, const char *needle) {
  if (trace_has(sch, needle)) return;
  char *py = sch_trace_to_python(sch_get_trace(sch));
  fprintf(stderr, "---- trace ----\n%s---- lacks ----\n%s\n", py, needle);
  mlc_free(py);
  fail();
}

static bool has_block(const sch_t *sch, const char *name) {
  sch_path_t path;
  return ms_find_block(sch, name, &path);
}

/* The rule passed sch through untouched: same schedule, nothing recorded
 * beyond the block lookups, program unchanged. */
static void assert_untouched(const ms_rule_t *rule, const ms_ctx_t *ctx, const tir_func_t *f, const char *block) {
  sch_t *sch = schedule(f);
  int n;
  sch_t **out = apply(rule, ctx, sch, block, &n);
  assert_int_equal(n, 1);
  assert_ptr_equal(out[0], sch);
  const sch_trace_t *t = sch_get_trace(sch);
  for (int i = 0; i < t->n; i++) assert_string_equal(t->insts[i].kind->name, "GetBlock");
  assert_true(tir_func_equal(f, sch_func(sch), NULL, 0));
  free_all(out, n);
}

/* ------------------------------------------------------------------------ */
/* MultiLevelTiling                                                          */
/* ------------------------------------------------------------------------ */

static void mlt_refuses_elementwise_blocks_and_the_root(void **state) {
  tir_func_t *f = st_parse(ELEMENTWISE);
  ms_ctx_t ctx;
  ctx_for(&ctx, f, 2);
  assert_untouched(&ms_rule_mlt, &ctx, f, "B");
  assert_untouched(&ms_rule_mlt, &ctx, f, "C");
  assert_untouched(&ms_rule_mlt, &ctx, f, "root");
  assert_untouched(&ms_rule_mlt, &ctx, f, "no_such_block");
  tir_func_free(f);
}

/* No cache, cache under level 1, under level 2; each computes a matmul. */
static void mlt_forks_a_matmul_into_three_tilings(void **state) {
  int64_t shape[3] = {16, 8, 12};
  tir_func_t *f = workload("GMM", shape, 3);
  ms_ctx_t ctx;
  ctx_for(&ctx, f, 2);
  int n;
  sch_t **out = apply(&ms_rule_mlt, &ctx, schedule(f), "C", &n);
  assert_int_equal(n, 3);
  assert_false(has_block(out[0], "C_global"));
  for (int i = 0; i < n; i++) {
    tir_block_t *b;
    sch_path_t path;
    assert_true(ms_find_block(out[i], "C", &path));
    b = ms_path_block(&path);
    tir_expr_t *ann = tir_annot_get(b->annots, b->nannots, MS_ANN_TILING_STRUCTURE);
    assert_non_null(ann);
    assert_string_equal(ann->u.str_value, "SSRSRS");
    assert_int_equal(ms_block_loops(&path, (tir_stmt_t *[32]){0}, 32), 10); /* 4 + 4 + 2 */
    assert_trace_has(out[i], "sch.reorder(l8, l16, l9, l17, l22, l10, l18, l23, l11, l19)");
    if (i > 0) assert_true(has_block(out[i], "C_global"));
    st_assert_same_outputs(f, sch_func(out[i]), 9, 0.0);
  }
  /* The rule looked the block up itself (nothing had) and reuses it. */
  assert_trace_has(out[0], "b0 = sch.get_block(name=\"C\", func_name=\"gmm\")\n");
  assert_trace_has(out[1], "sch.reverse_compute_at(block=b24, loop=l16, preserve_unit_loops=True");
  assert_trace_has(out[2], "sch.reverse_compute_at(block=b24, loop=l17, preserve_unit_loops=True");
  /* Tiled once: the rule leaves a tiled block alone. */
  int n2;
  sch_t **again = apply(&ms_rule_mlt, &ctx, out[0], "C", &n2);
  assert_int_equal(n2, 1);
  mlc_free(again);
  free_all(out, n);
  tir_func_free(f);
}

/* After AutoInline, the relu (with the bias) is the matmul's only consumer
 * and elementwise: it is moved under the tiles instead of a new cache. */
static void mlt_places_an_elementwise_epilogue_like_a_cache(void **state) {
  int64_t shape[3] = {8, 16, 4};
  tir_func_t *f = workload("D+B+R", shape, 3);
  ms_ctx_t ctx;
  ctx_for(&ctx, f, 2);
  int n;
  sch_t **inl = apply(&ms_rule_auto_inline, &ctx, schedule(f), "T_add", &n);
  assert_int_equal(n, 1);
  sch_t **out = apply(&ms_rule_mlt, &ctx, inl[0], "T_matmul_NT", &n);
  mlc_free(inl);
  assert_int_equal(n, 3);
  assert_trace_has(out[0], "b25, = sch.get_consumers(block=b1)\nsch.reverse_compute_at(block=b25, loop=l17,");
  assert_trace_has(out[1], "b25, = sch.get_consumers(block=b1)\nsch.reverse_compute_at(block=b25, loop=l18,");
  assert_false(trace_has(out[2], "reverse_compute_at"));
  for (int i = 0; i < n; i++) {
    assert_false(has_block(out[i], "T_matmul_NT_global"));
    st_assert_same_outputs(f, sch_func(out[i]), 4, 0.0);
  }
  free_all(out, n);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* AutoInline                                                                */
/* ------------------------------------------------------------------------ */

static const char DBR_INLINED[] =
    "# from tvm.script import tir as T\n\n@T.prim_func\n"
    "def dbr(data: T.Buffer((4, 2), \"float32\"), weight: T.Buffer((8, 2), \"float32\"), bias: T.Buffer((8,), "
    "\"float32\"), T_relu: T.Buffer((4, 8), \"float32\")):\n"
    "    T.func_attr({\"global_symbol\": \"dbr\", \"tir.noalias\": T.bool(True)})\n"
    "    # with T.block(\"root\"):\n"
    "    T_matmul_NT = T.alloc_buffer((4, 8))\n"
    "    for i, j, k in T.grid(4, 8, 2):\n"
    "        with T.block(\"T_matmul_NT\"):\n"
    "            v_i, v_j, v_k = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            T.reads(data[v_i, v_k], weight[v_j, v_k])\n"
    "            T.writes(T_matmul_NT[v_i, v_j])\n"
    "            with T.init():\n"
    "                T_matmul_NT[v_i, v_j] = T.float32(0)\n"
    "            T_matmul_NT[v_i, v_j] = T_matmul_NT[v_i, v_j] + data[v_i, v_k] * weight[v_j, v_k]\n"
    "    for ax0, ax1 in T.grid(4, 8):\n"
    "        with T.block(\"T_relu\"):\n"
    "            v_ax0, v_ax1 = T.axis.remap(\"SS\", [ax0, ax1])\n"
    "            T.reads(T_matmul_NT[v_ax0, v_ax1], bias[v_ax1])\n"
    "            T.writes(T_relu[v_ax0, v_ax1])\n"
    "            T_relu[v_ax0, v_ax1] = T.max(T_matmul_NT[v_ax0, v_ax1] + bias[v_ax1], T.float32(0))\n";

/* The space of AutoInline alone on dense + bias + relu: the bias block goes
 * into the relu; the relu (the output) and the matmul (a reduction) stay. */
static void auto_inline_puts_the_bias_into_the_relu(void **state) {
  int64_t shape[3] = {4, 8, 2};
  tir_func_t *f = workload("D+B+R", shape, 3);
  ms_ctx_t ctx;
  ctx_for(&ctx, f, 2);
  const ms_rule_t *rules[1] = {&ms_rule_auto_inline};
  ms_space_t space;
  assert_int_equal(ms_space_generate(&space, &ctx, rules, 1), MLC_OK);
  assert_int_equal(space.n, 1);
  char *py = sch_trace_to_python(space.traces[0]);
  assert_string_equal(py,
                      "b0 = sch.get_block(name=\"T_matmul_NT\", func_name=\"dbr\")\n"
                      "b1 = sch.get_block(name=\"T_add\", func_name=\"dbr\")\n"
                      "b2 = sch.get_block(name=\"T_relu\", func_name=\"dbr\")\n"
                      "b3 = sch.get_block(name=\"root\", func_name=\"dbr\")\n"
                      "sch.compute_inline(block=b1)\n");
  mlc_free(py);
  sch_t *sch = schedule(f);
  assert_int_equal(sch_trace_apply(sch, space.traces[0], true), MLC_OK);
  st_assert_script(sch_func(sch), DBR_INLINED);
  st_assert_same_outputs(f, sch_func(sch), 2, 0.0);
  sch_free(sch);
  ms_space_free(&space);
  tir_func_free(f);
}

/* Padding branches (if_then_else) and softmax's exp is a disallowed
 * operator on CPU: both stay; so do outputs with nothing to go into. */
static void auto_inline_keeps_branches_exp_and_outputs(void **state) {
  int64_t c2d[9] = {1, 4, 4, 2, 4, 3, 3, 1, 1}, sfm[2] = {4, 8};
  tir_func_t *conv = workload("C2D", c2d, 9), *soft = workload("SFM", sfm, 2), *ew = st_parse(ELEMENTWISE);
  ms_ctx_t ctx;
  ctx_for(&ctx, conv, 2);
  assert_untouched(&ms_rule_auto_inline, &ctx, conv, "PadInput");
  assert_untouched(&ms_rule_auto_inline, &ctx, conv, "conv2d_nhwc");
  ctx_for(&ctx, soft, 2);
  assert_untouched(&ms_rule_auto_inline, &ctx, soft, "T_softmax_exp");
  assert_untouched(&ms_rule_auto_inline, &ctx, soft, "T_softmax_norm");
  ctx_for(&ctx, ew, 2);
  assert_untouched(&ms_rule_auto_inline, &ctx, ew, "C");
  assert_untouched(&ms_rule_auto_inline, &ctx, ew, "root");
  /* ... while B, elementwise with one consumer, goes. */
  int n;
  sch_t **out = apply(&ms_rule_auto_inline, &ctx, schedule(ew), "B", &n);
  assert_int_equal(n, 1);
  assert_false(has_block(out[0], "B"));
  st_assert_same_outputs(ew, sch_func(out[0]), 1, 0.0);
  free_all(out, n);
  tir_func_free(conv);
  tir_func_free(soft);
  tir_func_free(ew);
}

/* A block that reads nothing is inlined even into a reduction. */
static void auto_inline_inlines_constant_tensors(void **state) {
  tir_func_t *f = st_parse(CONST_TENSOR);
  ms_ctx_t ctx;
  ctx_for(&ctx, f, 2);
  int n;
  sch_t **out = apply(&ms_rule_auto_inline, &ctx, schedule(f), "K", &n);
  assert_int_equal(n, 1);
  assert_false(has_block(out[0], "K"));
  assert_trace_has(out[0], "sch.compute_inline(block=b0)");
  st_assert_same_outputs(f, sch_func(out[0]), 1, 0.0);
  free_all(out, n);
  tir_func_free(f);
}

/* With into_producer (off on CPU), the relu goes into the bias block
 * instead, which then writes the output; the matmul stays. */
static void auto_inline_into_producer_when_enabled(void **state) {
  int64_t shape[3] = {4, 8, 2};
  tir_func_t *f = workload("D+B+R", shape, 3);
  ms_ctx_t ctx;
  ctx_for(&ctx, f, 2);
  ms_auto_inline_params_t p = *(const ms_auto_inline_params_t *)ms_rule_auto_inline.params;
  p.into_producer = true;
  ms_rule_t rule = ms_rule_auto_inline;
  rule.params = &p;
  int n;
  sch_t **out = apply(&rule, &ctx, schedule(f), "T_relu", &n);
  assert_int_equal(n, 1);
  assert_trace_has(out[0], "sch.reverse_compute_inline(block=b0)");
  assert_false(has_block(out[0], "T_relu"));
  st_assert_same_outputs(f, sch_func(out[0]), 5, 0.0);
  free_all(out, n);
  /* The bias block's producer is a reduction, not complete: nothing. */
  assert_untouched(&rule, &ctx, f, "T_matmul_NT");
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* AddRFactor                                                                */
/* ------------------------------------------------------------------------ */

/* 8 rows and 64-long dot products on 2 cores: too little spatial work. */
static void add_rfactor_forks_reductions_short_of_parallelism(void **state) {
  int64_t shape[2] = {8, 64};
  tir_func_t *f = workload("GMV", shape, 2);
  ms_ctx_t ctx;
  ctx_for(&ctx, f, 2);
  int n;
  sch_t **out = apply(&ms_rule_add_rfactor, &ctx, schedule(f), "C", &n);
  assert_int_equal(n, 3);
  for (int i = 0; i < 2; i++) {
    assert_trace_has(out[i], "sch.rfactor(loop=");
    assert_trace_has(out[i], "ann_key=\"meta_schedule.random_compute_producer\", ann_val=1");
    assert_true(has_block(out[i], "C_rf"));
    st_assert_same_outputs(f, sch_func(out[i]), 6, 1e-5);
  }
  assert_trace_has(out[0], "sch.rfactor(loop=l5, factor_axis=1)");
  assert_trace_has(out[1], "sch.rfactor(loop=l6, factor_axis=1)");
  /* The original comes last, as it was before the rule. */
  assert_false(trace_has(out[2], "sample_perfect_tile"));
  assert_true(tir_func_equal(f, sch_func(out[2]), NULL, 0));
  free_all(out, n);
  tir_func_free(f);
}

static void add_rfactor_leaves_reductions_with_enough_parallelism(void **state) {
  int64_t gmm[3] = {16, 16, 16}, gmv[2] = {64, 8};
  tir_func_t *mm = workload("GMM", gmm, 3), *mv = workload("GMV", gmv, 2), *ew = st_parse(ELEMENTWISE);
  ms_ctx_t ctx;
  ctx_for(&ctx, mm, 2);
  assert_untouched(&ms_rule_add_rfactor, &ctx, mm, "C"); /* 256 spatial >= 16 reduced */
  ctx_for(&ctx, mv, 2);
  assert_untouched(&ms_rule_add_rfactor, &ctx, mv, "C"); /* 64 rows >= 8 reduced */
  ctx_for(&ctx, ew, 2);
  assert_untouched(&ms_rule_add_rfactor, &ctx, ew, "B");
  assert_untouched(&ms_rule_add_rfactor, &ctx, ew, "root");
  tir_func_free(mm);
  tir_func_free(mv);
  tir_func_free(ew);
}

/* ------------------------------------------------------------------------ */
/* ParallelizeVectorizeUnroll, RandomComputeLocation                         */
/* ------------------------------------------------------------------------ */

static void pvu_annotates_the_root_only(void **state) {
  int64_t shape[3] = {8, 8, 8};
  tir_func_t *f = workload("GMM", shape, 3), *ew = st_parse(ELEMENTWISE);
  ms_ctx_t ctx;
  ctx_for(&ctx, f, 3);
  assert_untouched(&ms_rule_pvu, &ctx, f, "C");
  int n;
  sch_t **out = apply(&ms_rule_pvu, &ctx, schedule(f), "root", &n);
  assert_int_equal(n, 1);
  assert_trace_has(out[0], "sch.annotate(block_or_loop=b0, ann_key=\"meta_schedule.parallel\", ann_val=48)\n"
                                "sch.annotate(block_or_loop=b0, ann_key=\"meta_schedule.vectorize\", ann_val=64)\n"
                                "v1 = sch.sample_categorical(candidates=[0, 16, 64, 512], "
                                "probs=[0.25, 0.25, 0.25, 0.25], decision=");
  assert_trace_has(out[0], "sch.annotate(block_or_loop=b0, ann_key=\"meta_schedule.unroll_explicit\", "
                                "ann_val=v1)\n");
  tir_block_t *root = tir_func_root_block(sch_func(out[0]));
  int64_t v;
  assert_true(tir_as_int(tir_annot_get(root->annots, root->nannots, MS_ANN_UNROLL_EXPLICIT), &v));
  assert_true(v == 0 || v == 16 || v == 64 || v == 512);
  free_all(out, n);
  /* All-spatial functions are not unrolled. */
  out = apply(&ms_rule_pvu, &ctx, schedule(ew), "root", &n);
  assert_false(trace_has(out[0], "sample_categorical"));
  assert_trace_has(out[0], "meta_schedule.vectorize");
  free_all(out, n);
  tir_func_free(f);
  tir_func_free(ew);
}

static void rcl_samples_a_location_for_producers_only(void **state) {
  int64_t shape[9] = {1, 4, 4, 2, 4, 3, 3, 1, 1};
  tir_func_t *f = workload("C2D", shape, 9), *ew = st_parse(ELEMENTWISE);
  ms_ctx_t ctx;
  ctx_for(&ctx, f, 2);
  assert_untouched(&ms_rule_random_compute_location, &ctx, f, "conv2d_nhwc"); /* no consumer */
  assert_untouched(&ms_rule_random_compute_location, &ctx, f, "root");
  for (uint64_t seed = 0; seed < 4; seed++) {
    sch_t *sch = schedule(f);
    sch_seed(sch, seed);
    int n;
    sch_t **out = apply(&ms_rule_random_compute_location, &ctx, sch, "PadInput", &n);
    assert_int_equal(n, 1);
    assert_trace_has(out[0], "l1 = sch.sample_compute_location(block=b0, decision=");
    assert_trace_has(out[0], "sch.compute_at(block=b0, loop=l1, preserve_unit_loops=True, index=-1)");
    st_assert_same_outputs(f, sch_func(out[0]), seed, 0.0);
    free_all(out, n);
  }
  /* Tiled blocks are not moved. */
  ctx_for(&ctx, ew, 2);
  sch_t *sch = schedule(ew);
  sch_rv_t b;
  assert_int_equal(sch_get_block(sch, &b, "B"), MLC_OK);
  assert_int_equal(sch_annotate(sch, b, MS_ANN_TILING_STRUCTURE, sch_arg_str("SSRSRS")), MLC_OK);
  int n;
  sch_t **out = apply(&ms_rule_random_compute_location, &ctx, sch, "B", &n);
  assert_false(trace_has(out[0], "sample_compute_location"));
  free_all(out, n);
  tir_func_free(f);
  tir_func_free(ew);
}

/* ------------------------------------------------------------------------ */
/* Analyses                                                                  */
/* ------------------------------------------------------------------------ */

static bool needs_mlt(const tir_func_t *f, const char *block) {
  sch_t *sch = schedule(f);
  sch_path_t path;
  assert_true(ms_find_block(sch, block, &path));
  bool r = ms_needs_multi_level_tiling(&path);
  sch_free(sch);
  return r;
}

static void analyses_decide_like_tvm(void **state) {
  int64_t gmm[3] = {8, 8, 8}, gmv[2] = {8, 8}, sfm[2] = {4, 8}, dbr[3] = {4, 8, 2};
  tir_func_t *mm = workload("GMM", gmm, 3), *mv = workload("GMV", gmv, 2), *soft = workload("SFM", sfm, 2);
  tir_func_t *d = workload("D+B+R", dbr, 3), *ew = st_parse(ELEMENTWISE);
  assert_true(needs_mlt(mm, "C"));
  assert_true(needs_mlt(mv, "C"));
  assert_false(needs_mlt(soft, "T_softmax_expsum")); /* no reuse: every read uses every spatial var */
  assert_false(needs_mlt(ew, "B"));
  assert_true(ms_func_is_spatial(ew));
  assert_false(ms_func_is_spatial(mm));
  /* T_add reads T_matmul_NT[i, j] (one to one) and bias[j] (not onto). */
  sch_t *sch = schedule(d);
  sch_path_t path;
  assert_true(ms_find_block(sch, "T_add", &path));
  tir_block_t *add = ms_path_block(&path);
  ms_rw_pattern_t p0 = ms_analyze_rw_pattern(&add->reads[0], &add->writes[0]);
  ms_rw_pattern_t p1 = ms_analyze_rw_pattern(&add->reads[1], &add->writes[0]);
  assert_true(p0.exists && p0.surjective && p0.injective && p0.ordered);
  assert_true(p1.exists && !p1.surjective && p1.injective && p1.ordered);
  assert_true(ms_block_is_write_cache(add));
  assert_true(ms_is_trivial_binding(&path));
  assert_false(ms_stmt_has_if_then_else(path.stmts[path.n - 1]));
  tir_stmt_t *loops[8];
  assert_true(ms_find_block(sch, "T_matmul_NT", &path));
  assert_int_equal(ms_block_loops(&path, loops, 8), 3);
  assert_int_equal(sch_loop_binding_type(loops[0]), SCH_LOOP_DATA_PAR);
  assert_int_equal(sch_loop_binding_type(loops[2]), SCH_LOOP_REDUCE);
  /* After a split the binding is no longer the loop variables. */
  sch_rv_t b;
  const sch_rv_t *ls, *split;
  int n;
  assert_int_equal(ms_block_rv(sch, "T_matmul_NT", &b), MLC_OK);
  assert_int_equal(sch_get_loops(sch, &ls, &n, b), MLC_OK);
  sch_arg_t factors[2] = {sch_arg_none(), sch_arg_int(2)};
  assert_int_equal(sch_split(sch, &split, ls[0], factors, 2, true), MLC_OK);
  assert_true(ms_find_block(sch, "T_matmul_NT", &path));
  assert_false(ms_is_trivial_binding(&path));
  /* ms_block_rv reuses the traced lookup instead of recording another. */
  int before = sch_get_trace(sch)->n;
  sch_rv_t again;
  assert_int_equal(ms_block_rv(sch, "T_matmul_NT", &again), MLC_OK);
  assert_int_equal(again, b);
  assert_int_equal(sch_get_trace(sch)->n, before);
  assert_int_equal(ms_block_rv(sch, "nope", &again), MLC_ENOTFOUND);
  sch_free(sch);
  int64_t c2d[9] = {1, 4, 4, 2, 4, 3, 3, 1, 1};
  tir_func_t *conv = workload("C2D", c2d, 9);
  sch = schedule(conv);
  assert_true(ms_find_block(sch, "PadInput", &path));
  assert_true(ms_stmt_has_if_then_else(path.stmts[path.n - 1]));
  const tir_op_t exp_op = TIR_OP_EXP;
  assert_false(ms_stmt_has_op(path.stmts[path.n - 1], &exp_op, 1));
  sch_free(sch);
  tir_func_free(conv);
  tir_func_free(mm);
  tir_func_free(mv);
  tir_func_free(soft);
  tir_func_free(d);
  tir_func_free(ew);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(mlt_refuses_elementwise_blocks_and_the_root),
      cmocka_unit_test(mlt_forks_a_matmul_into_three_tilings),
      cmocka_unit_test(mlt_places_an_elementwise_epilogue_like_a_cache),
      cmocka_unit_test(auto_inline_puts_the_bias_into_the_relu),
      cmocka_unit_test(auto_inline_keeps_branches_exp_and_outputs),
      cmocka_unit_test(auto_inline_inlines_constant_tensors),
      cmocka_unit_test(auto_inline_into_producer_when_enabled),
      cmocka_unit_test(add_rfactor_forks_reductions_short_of_parallelism),
      cmocka_unit_test(add_rfactor_leaves_reductions_with_enough_parallelism),
      cmocka_unit_test(pvu_annotates_the_root_only),
      cmocka_unit_test(rcl_samples_a_location_for_producers_only),
      cmocka_unit_test(analyses_decide_like_tvm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
