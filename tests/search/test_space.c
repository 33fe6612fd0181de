/*
 * test_space.c - design-space generation (search/space/post_order_apply.c,
 * ms_space_generate) with MetaSchedule's CPU rules: the exact traces of the
 * space for a 128x128x128 matmul and a small convolution (pinned for one
 * seed: they must hold on every machine), MetaSchedule's sketch counts and
 * order, determinism per seed, and that every trace of the space replays,
 * with fresh samples, to a program the reference interpreter says computes
 * what the unscheduled one does. Also the rule sets and bad input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "search/search.h"
#include "tests/schedule/sched_testing.h"

#define TARGET "llvm -mcpu=skylake-avx512 -num-cores=2"

/* The CPU rules without MultiLevelTilingWithIntrin, in the default order. */
static const char *const CPU_RULES[] = {"AutoInline", "AddRFactor", "MultiLevelTiling", "ParallelizeVectorizeUnroll",
                                        "RandomComputeLocation"};
#define NCPU_RULES 5

static tir_func_t *workload(const char *name, const int64_t *shape, int n) {
  tir_func_t *f = NULL;
  tir_dtype_t acc = {0, 0, 0};
  if (tir_workload_build(&f, name, shape, n, tir_dt_FLOAT32(), acc) != MLC_OK) {
    fprintf(stderr, "%s: %s\n", name, mlc_error_last());
    fail();
  }
  return f;
}

static void cpu_ctx(ms_ctx_t *ctx, const tir_func_t *f, uint64_t seed) {
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, TARGET), MLC_OK);
  ms_ctx_init(ctx, f, f->name, &t, seed);
}

static void cpu_rules(const ms_rule_t **rules) {
  for (int i = 0; i < NCPU_RULES; i++) {
    rules[i] = ms_rule_find(CPU_RULES[i]);
    assert_non_null(rules[i]);
  }
}

static void generate(ms_space_t *space, const tir_func_t *f, uint64_t seed) {
  ms_ctx_t ctx;
  const ms_rule_t *rules[NCPU_RULES];
  cpu_ctx(&ctx, f, seed);
  cpu_rules(rules);
  int rc = ms_space_generate(space, &ctx, rules, NCPU_RULES);
  if (rc != MLC_OK) fprintf(stderr, "ms_space_generate: %s\n", mlc_error_last());
  assert_int_equal(rc, MLC_OK);
}

/* Sketch i of the space prints exactly as `expected`. */
static void assert_sketch(const ms_space_t *space, int i, const char *expected) {
  char *got = sch_trace_to_python(space->traces[i]);
  assert_non_null(got);
  if (strcmp(got, expected) != 0) {
    fprintf(stderr, "---- sketch %d: expected ----\n%s---- got ----\n%s", i, expected, got);
    mlc_free(got);
    fail();
  }
  mlc_free(got);
}

/* ParallelizeVectorizeUnroll on root block `root` with unroll variable v. */
#define PVU(root, v, decision)                                                                              \
  "sch.annotate(block_or_loop=" root ", ann_key=\"meta_schedule.parallel\", ann_val=32)\n"                  \
  "sch.annotate(block_or_loop=" root ", ann_key=\"meta_schedule.vectorize\", ann_val=64)\n" v               \
  " = sch.sample_categorical(candidates=[0, 16, 64, 512], probs=[0.25, 0.25, 0.25, 0.25], decision=" decision \
  ")\n"                                                                                                     \
  "sch.annotate(block_or_loop=" root ", ann_key=\"meta_schedule.unroll_explicit\", ann_val=" v ")\n"

/* ------------------------------------------------------------------------ */
/* Exact spaces                                                              */
/* ------------------------------------------------------------------------ */

/* GMM 128x128x128, seed 0: what every sketch shares (the tiling). */
static const char GMM_TILED[] =
    "b0 = sch.get_block(name=\"C\", func_name=\"gmm\")\n"
    "b1 = sch.get_block(name=\"root\", func_name=\"gmm\")\n"
    "sch.annotate(block_or_loop=b0, ann_key=\"meta_schedule.tiling_structure\", ann_val=\"SSRSRS\")\n"
    "l2, l3, l4 = sch.get_loops(block=b0)\n"
    "v5, v6, v7, v8 = sch.sample_perfect_tile(loop=l2, n=4, max_innermost_factor=64, decision=[4, 4, 8, 1])\n"
    "l9, l10, l11, l12 = sch.split(loop=l2, factors=[v5, v6, v7, v8], preserve_unit_iters=True, "
    "disable_predication=False)\n"
    "v13, v14, v15, v16 = sch.sample_perfect_tile(loop=l3, n=4, max_innermost_factor=64, decision=[64, 2, 1, 1])\n"
    "l17, l18, l19, l20 = sch.split(loop=l3, factors=[v13, v14, v15, v16], preserve_unit_iters=True, "
    "disable_predication=False)\n"
    "v21, v22 = sch.sample_perfect_tile(loop=l4, n=2, max_innermost_factor=64, decision=[128, 1])\n"
    "l23, l24 = sch.split(loop=l4, factors=[v21, v22], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.reorder(l9, l17, l10, l18, l23, l11, l19, l24, l12, l20)\n"
    "sch.get_consumers(block=b0)\n";

#define GMM_CACHE_AT(loop)                                                                    \
  "b25 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope=\"global\")\n"           \
  "sch.reverse_compute_at(block=b25, loop=" loop ", preserve_unit_loops=True, index=-1)\n"

/* MetaSchedule's three sketches, in its order: write cache under the last
 * loop of level 2 (l18 = j_1), of level 1 (l17 = j_0), no cache. */
static void gmm_space_is_three_sketches_in_metaschedule_order(void **state) {
  int64_t shape[3] = {128, 128, 128};
  tir_func_t *f = workload("GMM", shape, 3);
  ms_space_t space;
  generate(&space, f, 0);
  assert_int_equal(space.n, 3);
  char buf[4096];
  snprintf(buf, sizeof buf, "%s%s%s", GMM_TILED, GMM_CACHE_AT("l18"), PVU("b1", "v26", "2"));
  assert_sketch(&space, 0, buf);
  snprintf(buf, sizeof buf, "%s%s%s", GMM_TILED, GMM_CACHE_AT("l17"), PVU("b1", "v26", "2"));
  assert_sketch(&space, 1, buf);
  snprintf(buf, sizeof buf, "%s%s", GMM_TILED, PVU("b1", "v25", "1"));
  assert_sketch(&space, 2, buf);
  ms_space_free(&space);
  tir_func_free(f);
}

/* C2D N=1 H=W=8 CI=4 CO=8 3x3 stride 1 pad 1, seed 0: the padding block
 * is not inlined (it branches), the convolution is tiled (4 spatial levels
 * for n, h, w, co; 2 for rh, rw, rc), and the padding gets a sampled
 * compute location. */
static const char C2D_TILED[] =
    "b0 = sch.get_block(name=\"PadInput\", func_name=\"c2d\")\n"
    "b1 = sch.get_block(name=\"conv2d_nhwc\", func_name=\"c2d\")\n"
    "b2 = sch.get_block(name=\"root\", func_name=\"c2d\")\n"
    "sch.annotate(block_or_loop=b1, ann_key=\"meta_schedule.tiling_structure\", ann_val=\"SSRSRS\")\n"
    "l3, l4, l5, l6, l7, l8, l9 = sch.get_loops(block=b1)\n"
    "v10, v11, v12, v13 = sch.sample_perfect_tile(loop=l3, n=4, max_innermost_factor=64, decision=[1, 1, 1, 1])\n"
    "l14, l15, l16, l17 = sch.split(loop=l3, factors=[v10, v11, v12, v13], preserve_unit_iters=True, "
    "disable_predication=False)\n"
    "v18, v19, v20, v21 = sch.sample_perfect_tile(loop=l4, n=4, max_innermost_factor=64, decision=[2, 2, 1, 2])\n"
    "l22, l23, l24, l25 = sch.split(loop=l4, factors=[v18, v19, v20, v21], preserve_unit_iters=True, "
    "disable_predication=False)\n"
    "v26, v27, v28, v29 = sch.sample_perfect_tile(loop=l5, n=4, max_innermost_factor=64, decision=[2, 4, 1, 1])\n"
    "l30, l31, l32, l33 = sch.split(loop=l5, factors=[v26, v27, v28, v29], preserve_unit_iters=True, "
    "disable_predication=False)\n"
    "v34, v35, v36, v37 = sch.sample_perfect_tile(loop=l6, n=4, max_innermost_factor=64, decision=[1, 1, 1, 8])\n"
    "l38, l39, l40, l41 = sch.split(loop=l6, factors=[v34, v35, v36, v37], preserve_unit_iters=True, "
    "disable_predication=False)\n"
    "v42, v43 = sch.sample_perfect_tile(loop=l7, n=2, max_innermost_factor=64, decision=[3, 1])\n"
    "l44, l45 = sch.split(loop=l7, factors=[v42, v43], preserve_unit_iters=True, disable_predication=False)\n"
    "v46, v47 = sch.sample_perfect_tile(loop=l8, n=2, max_innermost_factor=64, decision=[1, 3])\n"
    "l48, l49 = sch.split(loop=l8, factors=[v46, v47], preserve_unit_iters=True, disable_predication=False)\n"
    "v50, v51 = sch.sample_perfect_tile(loop=l9, n=2, max_innermost_factor=64, decision=[2, 2])\n"
    "l52, l53 = sch.split(loop=l9, factors=[v50, v51], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.reorder(l14, l22, l30, l38, l15, l23, l31, l39, l44, l48, l52, l16, l24, l32, l40, l45, l49, l53, l17, "
    "l25, l33, l41)\n"
    "sch.get_consumers(block=b1)\n";

#define C2D_CACHE_AT(loop)                                                                    \
  "b54 = sch.cache_write(block=b1, write_buffer_index=0, storage_scope=\"global\")\n"           \
  "sch.reverse_compute_at(block=b54, loop=" loop ", preserve_unit_loops=True, index=-1)\n"
#define C2D_PAD_AT(l, decision)                                                 \
  l " = sch.sample_compute_location(block=b0, decision=" decision ")\n"         \
  "sch.compute_at(block=b0, loop=" l ", preserve_unit_loops=True, index=-1)\n"

static void c2d_space_is_exact(void **state) {
  int64_t shape[9] = {1, 8, 8, 4, 8, 3, 3, 1, 1};
  tir_func_t *f = workload("C2D", shape, 9);
  ms_space_t space;
  generate(&space, f, 0);
  assert_int_equal(space.n, 3);
  char buf[8192];
  snprintf(buf, sizeof buf, "%s%s%s%s", C2D_TILED, C2D_CACHE_AT("l39"), PVU("b2", "v55", "2"),
           C2D_PAD_AT("l56", "6"));
  assert_sketch(&space, 0, buf);
  snprintf(buf, sizeof buf, "%s%s%s%s", C2D_TILED, C2D_CACHE_AT("l38"), PVU("b2", "v55", "0"),
           C2D_PAD_AT("l56", "8"));
  assert_sketch(&space, 1, buf);
  snprintf(buf, sizeof buf, "%s%s%s", C2D_TILED, PVU("b2", "v54", "2"), C2D_PAD_AT("l55", "6"));
  assert_sketch(&space, 2, buf);
  ms_space_free(&space);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* Properties                                                                */
/* ------------------------------------------------------------------------ */

static char *space_json_text(const ms_space_t *space) {
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  for (int i = 0; i < space->n; i++) {
    json_t *j = NULL;
    assert_int_equal(sch_trace_to_json(&j, space->traces[i]), MLC_OK);
    char *text = mlc_json_dumps(j);
    mlc_sb_append(&sb, text);
    mlc_sb_append(&sb, "\n");
    free(text);
    json_decref(j);
  }
  return mlc_sb_take(&sb);
}

static void same_seed_same_space_other_seed_other_samples(void **state) {
  int64_t shape[3] = {64, 64, 64};
  tir_func_t *f = workload("GMM", shape, 3);
  ms_space_t a, b, c;
  generate(&a, f, 11);
  generate(&b, f, 11);
  generate(&c, f, 12);
  char *ta = space_json_text(&a), *tb = space_json_text(&b), *tc = space_json_text(&c);
  assert_string_equal(ta, tb);
  assert_int_equal(c.n, a.n);
  assert_true(strcmp(ta, tc) != 0);
  mlc_free(ta);
  mlc_free(tb);
  mlc_free(tc);
  ms_space_free(&a);
  ms_space_free(&b);
  ms_space_free(&c);
  tir_func_free(f);
}

/* Replays every sketch with its decisions and, from several seeds, without
 * them; each result must compute what f computes. rfactor reassociates the
 * sums, hence the tolerance. */
static void assert_space_keeps_meaning(const char *name, const int64_t *shape, int nshape, int expected_sketches) {
  tir_func_t *f = workload(name, shape, nshape);
  ms_space_t space;
  generate(&space, f, 5);
  if (expected_sketches > 0) assert_int_equal(space.n, expected_sketches);
  for (int i = 0; i < space.n; i++) {
    for (int seed = 0; seed < 4; seed++) {
      sch_t *sch;
      assert_int_equal(sch_create(&sch, f, 100 + (uint64_t)seed, SCH_ERRORS_RICH), MLC_OK);
      int rc = sch_trace_apply(sch, space.traces[i], seed == 0);
      if (rc != MLC_OK) fprintf(stderr, "%s sketch %d seed %d: %s\n", name, i, seed, sch_error(sch));
      assert_int_equal(rc, MLC_OK);
      st_assert_same_outputs(f, sch_func(sch), 3 + (uint64_t)seed, 1e-5);
      sch_free(sch);
    }
  }
  ms_space_free(&space);
  tir_func_free(f);
}

static void every_sketch_replays_to_the_same_computation(void **state) {
  int64_t gmm[3] = {32, 16, 24}, c2d[9] = {1, 6, 6, 4, 8, 3, 3, 1, 1}, dbr[3] = {8, 16, 12};
  int64_t sfm[2] = {4, 16}, nrm[3] = {1, 8, 8}, gmv[2] = {8, 64};
  assert_space_keeps_meaning("GMM", gmm, 3, 3);
  assert_space_keeps_meaning("C2D", c2d, 9, 3);
  assert_space_keeps_meaning("D+B+R", dbr, 3, 3);
  assert_space_keeps_meaning("SFM", sfm, 2, 9);
  assert_space_keeps_meaning("NRM", nrm, 3, 3);
  assert_space_keeps_meaning("GMV", gmv, 2, 0);
}

/* The space's traces go to the database as JSON: they must come back
 * unchanged (same text) and replay to the same program. */
static void sketches_round_trip_through_json(void **state) {
  int64_t shape[3] = {16, 16, 16};
  tir_func_t *f = workload("GMM", shape, 3);
  ms_space_t space;
  generate(&space, f, 3);
  for (int i = 0; i < space.n; i++) {
    json_t *j = NULL;
    sch_trace_t *back = NULL;
    assert_int_equal(sch_trace_to_json(&j, space.traces[i]), MLC_OK);
    assert_int_equal(sch_trace_from_json(&back, j), MLC_OK);
    char *p1 = sch_trace_to_python(space.traces[i]), *p2 = sch_trace_to_python(back);
    assert_string_equal(p1, p2);
    sch_t *s1, *s2;
    assert_int_equal(sch_create(&s1, f, 0, SCH_ERRORS_FAST), MLC_OK);
    assert_int_equal(sch_create(&s2, f, 0, SCH_ERRORS_FAST), MLC_OK);
    assert_int_equal(sch_trace_apply(s1, space.traces[i], true), MLC_OK);
    assert_int_equal(sch_trace_apply(s2, back, true), MLC_OK);
    assert_true(tir_func_equal(sch_func(s1), sch_func(s2), NULL, 0));
    sch_free(s1);
    sch_free(s2);
    mlc_free(p1);
    mlc_free(p2);
    sch_trace_free(back);
    json_decref(j);
  }
  ms_space_free(&space);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* Rule sets, context, bad input                                             */
/* ------------------------------------------------------------------------ */

static void cpu_defaults_are_metaschedules_in_order(void **state) {
  int64_t shape[3] = {8, 8, 8};
  tir_func_t *f = workload("GMM", shape, 3);
  ms_ctx_t ctx;
  cpu_ctx(&ctx, f, 0);
  assert_int_equal(ctx.num_cores, 2);
  assert_string_equal(ctx.task_name, "gmm");
  int n = 0;
  const ms_rule_t *const *rules = ms_rules_cpu_default(&ctx, &n);
  /* MultiLevelTilingWithIntrin comes third when it is built in (AVX-512). */
  const ms_rule_t *intrin = ms_rule_find("MultiLevelTilingWithIntrin");
  assert_int_equal(n, intrin ? 6 : 5);
  const char *order[6] = {"AutoInline", "AddRFactor", "MultiLevelTilingWithIntrin", "MultiLevelTiling",
                          "ParallelizeVectorizeUnroll", "RandomComputeLocation"};
  for (int i = 0, k = 0; i < n; i++, k++) {
    if (!intrin && k == 2) k++;
    assert_string_equal(rules[i]->name, order[k]);
    assert_ptr_equal(ms_rule_find(order[k]), rules[i]);
  }
  assert_null(ms_rule_find("NoSuchRule"));
  assert_null(ms_rule_find(NULL));
  tir_func_free(f);
}

/* No rules: one sketch that only looks the blocks up, in post-order. */
static void no_rules_give_the_block_lookups_only(void **state) {
  int64_t shape[3] = {8, 8, 8};
  tir_func_t *f = workload("D+B+R", shape, 3);
  ms_ctx_t ctx;
  cpu_ctx(&ctx, f, 0);
  ms_space_t space;
  assert_int_equal(ms_space_generate(&space, &ctx, NULL, 0), MLC_OK);
  assert_int_equal(space.n, 1);
  assert_sketch(&space, 0,
                "b0 = sch.get_block(name=\"T_matmul_NT\", func_name=\"dbr\")\n"
                "b1 = sch.get_block(name=\"T_add\", func_name=\"dbr\")\n"
                "b2 = sch.get_block(name=\"T_relu\", func_name=\"dbr\")\n"
                "b3 = sch.get_block(name=\"root\", func_name=\"dbr\")\n");
  ms_space_free(&space);
  tir_func_free(f);
}

static const char DUPLICATE_NAMES[] =
    "# from tvm.script import tir as T\n\n@T.prim_func\n"
    "def main(A: T.Buffer((4,), \"float32\"), B: T.Buffer((4,), \"float32\")):\n"
    "    for i in range(4):\n"
    "        with T.block(\"X\"):\n"
    "            vi = T.axis.spatial(4, i)\n"
    "            T.reads(A[vi])\n"
    "            T.writes(B[vi])\n"
    "            B[vi] = A[vi]\n"
    "    for i in range(4):\n"
    "        with T.block(\"X\"):\n"
    "            vi = T.axis.spatial(4, i)\n"
    "            T.reads(B[vi])\n"
    "            T.writes(A[vi])\n"
    "            A[vi] = B[vi]\n";

static void bad_input_is_refused_with_a_reason(void **state) {
  ms_space_t space;
  ms_ctx_t ctx;
  memset(&ctx, 0, sizeof ctx);
  assert_int_equal(ms_space_generate(&space, &ctx, NULL, 0), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "workload"));
  int64_t shape[3] = {8, 8, 8};
  tir_func_t *f = workload("GMM", shape, 3);
  cpu_ctx(&ctx, f, 0);
  assert_int_equal(ms_space_generate(&space, &ctx, NULL, 2), MLC_EINVAL);
  const ms_rule_t *holes[2] = {ms_rule_find("AutoInline"), NULL};
  assert_int_equal(ms_space_generate(&space, &ctx, holes, 2), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "rule 1"));
  assert_int_equal(space.n, 0);
  tir_func_free(f);
  tir_func_t *dup = st_parse(DUPLICATE_NAMES);
  cpu_ctx(&ctx, dup, 0);
  assert_int_equal(ms_space_generate(&space, &ctx, NULL, 0), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "two blocks named \"X\""));
  tir_func_free(dup);
  ms_space_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gmm_space_is_three_sketches_in_metaschedule_order),
      cmocka_unit_test(c2d_space_is_exact),
      cmocka_unit_test(same_seed_same_space_other_seed_other_samples),
      cmocka_unit_test(every_sketch_replays_to_the_same_computation),
      cmocka_unit_test(sketches_round_trip_through_json),
      cmocka_unit_test(cpu_defaults_are_metaschedules_in_order),
      cmocka_unit_test(no_rules_give_the_block_lookups_only),
      cmocka_unit_test(bad_input_is_refused_with_a_reason),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
