/*
 * test_postproc.c - the postprocessors (search/postproc/) on small
 * programs: the exact TVMScript each rewrite gives, the reference
 * interpreter's outputs unchanged by it, the recorded trace replaying (as
 * JSON) to the same program, and the rejections with their reasons. The
 * rule annotations the postprocessors read are written here by hand (what
 * ParallelizeVectorizeUnroll and MultiLevelTilingWithIntrin leave).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "search/search.h"
#include "tests/schedule/sched_testing.h"

#define OK(x) assert_int_equal((x), MLC_OK)

static tir_func_t *gmm(int64_t m, int64_t n, int64_t k) {
  tir_func_t *f = NULL;
  int64_t shape[3] = {m, n, k};
  tir_dtype_t none = {0, 0, 0};
  OK(tir_workload_build(&f, "GMM", shape, 3, tir_dt_FLOAT32(), none));
  return f;
}

/* A schedule of f with the design part given as TVM's Python form. */
static sch_t *designed(const tir_func_t *f, const char *design) {
  sch_t *sch = NULL;
  sch_trace_t *t = NULL;
  OK(sch_create(&sch, f, 1, SCH_ERRORS_RICH));
  int rc = sch_trace_from_python(&t, design, strlen(design), "design.py");
  if (rc == MLC_OK) rc = sch_trace_apply(sch, t, true);
  if (rc != MLC_OK) fprintf(stderr, "design: %s\n", mlc_error_last());
  OK(rc);
  sch_trace_free(t);
  return sch;
}

static ms_ctx_t ctx_of(const tir_func_t *f) {
  ms_ctx_t ctx;
  mlc_target_t t;
  OK(mlc_target_parse(&t, "llvm -mcpu=sapphirerapids -num-cores=2"));
  ms_ctx_init(&ctx, f, "main", &t, 1);
  return ctx;
}

static int run(const char *name, const tir_func_t *f, sch_t *sch) {
  const ms_postproc_t *pp = ms_postproc_find(name);
  assert_non_null(pp);
  ms_ctx_t ctx = ctx_of(f);
  return pp->apply(pp, &ctx, sch);
}

/* The recorded trace, through JSON, replays on a fresh schedule of f to
 * the same program. */
static void assert_replays(const tir_func_t *f, sch_t *sch) {
  json_t *j = NULL;
  sch_trace_t *back = NULL;
  sch_t *fresh = NULL;
  OK(sch_trace_to_json(&j, sch_get_trace(sch)));
  OK(sch_trace_from_json(&back, j));
  OK(sch_create(&fresh, f, 7, SCH_ERRORS_RICH));
  int rc = sch_trace_apply(fresh, back, true);
  if (rc != MLC_OK) fprintf(stderr, "replay: %s\n", mlc_error_last());
  OK(rc);
  char why[256] = "";
  if (!tir_func_equal(sch_func(fresh), sch_func(sch), why, sizeof why)) {
    fprintf(stderr, "the replay differs: %s\n", why);
    fail();
  }
  sch_free(fresh);
  sch_trace_free(back);
  json_decref(j);
}

/* The rewrite printed as expected, the interpreter's outputs as the
 * workload's, and the trace replaying. */
static void assert_rewrite(const tir_func_t *f, sch_t *sch, const char *expected) {
  st_assert_script(sch_func(sch), expected);
  st_assert_same_outputs(f, sch_func(sch), 11, 0.0);
  assert_replays(f, sch);
}

static void assert_rejects(int rc, const char *needle) {
  assert_int_equal(rc, MLC_ESCHEDULE);
  if (!strstr(mlc_error_last(), needle)) {
    fprintf(stderr, "error was: %s\nexpected it to contain: %s\n", mlc_error_last(), needle);
    fail();
  }
}

/* The ParallelizeVectorizeUnroll rule's root annotations. */
static const char *ROOT_ANNOTATIONS =
    "b90 = sch.get_block(name=\"root\", func_name=\"main\")\n"
    "sch.annotate(block_or_loop=b90, ann_key=\"meta_schedule.parallel\", ann_val=4)\n"
    "sch.annotate(block_or_loop=b90, ann_key=\"meta_schedule.vectorize\", ann_val=16)\n"
    "v91 = sch.sample_categorical(candidates=[0, 16, 64, 512], probs=[0.25, 0.25, 0.25, 0.25], decision=1)\n"
    "sch.annotate(block_or_loop=b90, ann_key=\"meta_schedule.unroll_explicit\", ann_val=v91)\n";

static char *with_root(const char *design) {
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  mlc_sb_append(&sb, design);
  mlc_sb_append(&sb, ROOT_ANNOTATIONS);
  return mlc_sb_take(&sb);
}

/* ------------------------------------------------------------------------ */
/* DisallowDynamicLoop                                                       */
/* ------------------------------------------------------------------------ */

static const char *DYNAMIC =
    "@T.prim_func\n"
    "def scale(a: T.handle, b: T.handle, n: T.int32):\n"
    "    A = T.match_buffer(a, (n,))\n"
    "    B = T.match_buffer(b, (n,))\n"
    "    for i in range(n):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(n, i)\n"
    "            B[vi] = A[vi] * T.float32(2)\n";

static void disallow_dynamic_loop_rejects_a_symbolic_extent(void **state) {
  sch_t *sch = st_schedule(DYNAMIC);
  tir_func_t *f = st_parse(DYNAMIC);
  assert_rejects(run("DisallowDynamicLoop", f, sch), "DisallowDynamicLoop: loop i has extent n, not a constant");
  sch_free(sch);
  tir_func_free(f);
  /* Static loops pass, untouched and unrecorded. */
  f = gmm(16, 16, 16);
  OK(sch_create(&sch, f, 1, SCH_ERRORS_RICH));
  OK(run("DisallowDynamicLoop", f, sch));
  assert_int_equal(sch_get_trace(sch)->n, 0);
  sch_free(sch);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* RewriteParallelVectorizeUnroll                                            */
/* ------------------------------------------------------------------------ */

/* GMM 32x32x8: i by 4, j by (2, 8), a write cache under j_0. */
static const char *TILED =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "l4, l5 = sch.split(loop=l1, factors=[None, 4], preserve_unit_iters=True)\n"
    "l6, l7, l8 = sch.split(loop=l2, factors=[None, 2, 8], preserve_unit_iters=True)\n"
    "sch.reorder(l4, l6, l5, l3, l7, l8)\n"
    "b9 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope=\"global\")\n"
    "sch.reverse_compute_at(block=b9, loop=l6, preserve_unit_loops=True, index=-1)\n";

/* Parallel limit 4: i_0 (8) alone (TVM takes the loop that passes the
 * limit). Vector limit 16: in C, j_1 and j_2 (2 x 8; C and B see them as
 * one contiguous run, A not at all), in the write-back the 16 of ax1 (ax0
 * is 32 apart). The unroll step goes on the outermost loop. The root's
 * annotations are gone. */
static const char *TILED_PVU =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def gmm(A: T.Buffer((32, 8), \"float32\"), B: T.Buffer((8, 32), \"float32\"), C: T.Buffer((32, 32), \"float32\")):\n"
    "    T.func_attr({\"global_symbol\": \"gmm\", \"tir.noalias\": T.bool(True)})\n"
    "    # with T.block(\"root\"):\n"
    "    C_global = T.alloc_buffer((32, 32))\n"
    "    for i_0 in T.parallel(8, annotations={\"pragma_auto_unroll_max_step\": 16, \"pragma_unroll_explicit\": 1}):\n"
    "        for j_0 in range(2):\n"
    "            for i_1, k in T.grid(4, 8):\n"
    "                for j_1_j_2_fused in T.vectorized(16):\n"
    "                    with T.block(\"C\"):\n"
    "                        v_i = T.axis.spatial(32, i_0 * 4 + i_1)\n"
    "                        v_j = T.axis.spatial(32, j_0 * 16 + j_1_j_2_fused)\n"
    "                        v_k = T.axis.reduce(8, k)\n"
    "                        T.reads(A[v_i, v_k], B[v_k, v_j])\n"
    "                        T.writes(C_global[v_i, v_j])\n"
    "                        with T.init():\n"
    "                            C_global[v_i, v_j] = T.float32(0)\n"
    "                        C_global[v_i, v_j] = C_global[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]\n"
    "            for ax0 in range(4):\n"
    "                for ax1 in T.vectorized(16):\n"
    "                    with T.block(\"C_global\"):\n"
    "                        v0 = T.axis.spatial(32, i_0 * 4 + ax0)\n"
    "                        v1 = T.axis.spatial(32, j_0 * 16 + ax1)\n"
    "                        T.reads(C_global[v0, v1])\n"
    "                        T.writes(C[v0, v1])\n"
    "                        C[v0, v1] = C_global[v0, v1]\n";

/* RewriteParallelVectorizeUnroll on f under `design` and the root
 * annotations: the schedule, for the caller's checks (sch_free). */
static sch_t *pvu(const tir_func_t *f, const char *design) {
  char *full = with_root(design);
  sch_t *sch = designed(f, full);
  mlc_free(full);
  OK(run("RewriteParallelVectorizeUnroll", f, sch));
  return sch;
}

/* pvu, then the rewrite as `expected`; takes f. */
static void assert_pvu(tir_func_t *f, const char *design, const char *expected) {
  sch_t *sch = pvu(f, design);
  assert_rewrite(f, sch, expected);
  sch_free(sch);
  tir_func_free(f);
}

static void rewrite_parallel_vectorize_unroll_exact(void **state) { assert_pvu(gmm(32, 32, 8), TILED, TILED_PVU); }

/* Softmax over rows of 64 with everything computed at the row loop and
 * the max reduction rfactored by 8 (what AddRFactor and
 * RandomComputeLocation give). TVM's plan vectorizes none of it: the
 * rows are longer than the limit and the rfactor block's innermost loop is
 * its reduction. */
static const char *SOFTMAX_AT_ROWS =
    "b0 = sch.get_block(name=\"T_softmax_maxelem\", func_name=\"main\")\n"
    "b1 = sch.get_block(name=\"T_softmax_exp\", func_name=\"main\")\n"
    "b2 = sch.get_block(name=\"T_softmax_expsum\", func_name=\"main\")\n"
    "b3 = sch.get_block(name=\"T_softmax_norm\", func_name=\"main\")\n"
    "l4, l5 = sch.get_loops(block=b0)\n"
    "l6, l7 = sch.split(loop=l5, factors=[None, 8], preserve_unit_iters=True)\n"
    "b8 = sch.rfactor(loop=l7, factor_axis=1)\n"
    "l9, l10 = sch.get_loops(block=b3)\n"
    "sch.compute_at(block=b2, loop=l9, preserve_unit_loops=True, index=-1)\n"
    "sch.compute_at(block=b1, loop=l9, preserve_unit_loops=True, index=-1)\n"
    "sch.compute_at(block=b0, loop=l9, preserve_unit_loops=True, index=-1)\n"
    "sch.compute_at(block=b8, loop=l9, preserve_unit_loops=True, index=-1)\n";

/* Parallel limit 4 takes the row loop (8). Vector limit 16: the rfactor
 * block's data-parallel loop (8) moves under its reduction and is
 * vectorized; the rows of exp and norm (64) are split by 16 and the inner
 * part vectorized; the cross-lane max and the sum stay scalar. */
static const char *SOFTMAX_PVU =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def sfm(A: T.Buffer((8, 64), \"float32\"), T_softmax_norm: T.Buffer((8, 64), \"float32\")):\n"
    "    T.func_attr({\"global_symbol\": \"sfm\", \"tir.noalias\": T.bool(True)})\n"
    "    # with T.block(\"root\"):\n"
    "    T_softmax_maxelem = T.alloc_buffer((8,))\n"
    "    T_softmax_exp = T.alloc_buffer((8, 64))\n"
    "    T_softmax_expsum = T.alloc_buffer((8,))\n"
    "    T_softmax_maxelem_rf = T.alloc_buffer((8, 8))\n"
    "    for i0 in T.parallel(8, annotations={\"pragma_auto_unroll_max_step\": 16, \"pragma_unroll_explicit\": 1}):\n"
    "        for ax1, ax2 in T.grid(1, 8):\n"
    "            for ax0 in T.vectorized(8):\n"
    "                with T.block(\"T_softmax_maxelem_rf\"):\n"
    "                    vk_1 = T.axis.spatial(8, ax0)\n"
    "                    v_i0 = T.axis.spatial(8, i0 + ax1)\n"
    "                    vk_0 = T.axis.reduce(8, ax2)\n"
    "                    T.reads(A[v_i0, vk_0 * 8 + vk_1])\n"
    "                    T.writes(T_softmax_maxelem_rf[v_i0, vk_1])\n"
    "                    with T.init():\n"
    "                        T_softmax_maxelem_rf[v_i0, vk_1] = T.float32(-3.4028235e+38)\n"
    "                    T_softmax_maxelem_rf[v_i0, vk_1] = T.max(T_softmax_maxelem_rf[v_i0, vk_1], A[v_i0, vk_0 * 8 + vk_1])\n"
    "        for ax0, ax1 in T.grid(8, 1):\n"
    "            with T.block(\"T_softmax_maxelem\"):\n"
    "                vk_1 = T.axis.reduce(8, ax0)\n"
    "                v_i0 = T.axis.spatial(8, i0 + ax1)\n"
    "                T.reads(T_softmax_maxelem_rf[v_i0, vk_1])\n"
    "                T.writes(T_softmax_maxelem[v_i0])\n"
    "                with T.init():\n"
    "                    T_softmax_maxelem[v_i0] = T.float32(-3.4028235e+38)\n"
    "                T_softmax_maxelem[v_i0] = T.max(T_softmax_maxelem[v_i0], T_softmax_maxelem_rf[v_i0, vk_1])\n"
    "        for ax0, ax1_0 in T.grid(1, 4):\n"
    "            for ax1_1 in T.vectorized(16):\n"
    "                with T.block(\"T_softmax_exp\"):\n"
    "                    v_i0 = T.axis.spatial(8, i0 + ax0)\n"
    "                    v_i1 = T.axis.spatial(64, ax1_0 * 16 + ax1_1)\n"
    "                    T.reads(A[v_i0, v_i1], T_softmax_maxelem[v_i0])\n"
    "                    T.writes(T_softmax_exp[v_i0, v_i1])\n"
    "                    T_softmax_exp[v_i0, v_i1] = T.exp(A[v_i0, v_i1] - T_softmax_maxelem[v_i0])\n"
    "        for ax0, ax1 in T.grid(1, 64):\n"
    "            with T.block(\"T_softmax_expsum\"):\n"
    "                v_i0 = T.axis.spatial(8, i0 + ax0)\n"
    "                v_k = T.axis.reduce(64, ax1)\n"
    "                T.reads(T_softmax_exp[v_i0, v_k])\n"
    "                T.writes(T_softmax_expsum[v_i0])\n"
    "                with T.init():\n"
    "                    T_softmax_expsum[v_i0] = T.float32(0)\n"
    "                T_softmax_expsum[v_i0] = T_softmax_expsum[v_i0] + T_softmax_exp[v_i0, v_k]\n"
    "        for i1_0 in range(4):\n"
    "            for i1_1 in T.vectorized(16):\n"
    "                with T.block(\"T_softmax_norm\"):\n"
    "                    v_i0 = T.axis.spatial(8, i0)\n"
    "                    v_i1 = T.axis.spatial(64, i1_0 * 16 + i1_1)\n"
    "                    T.reads(T_softmax_exp[v_i0, v_i1], T_softmax_expsum[v_i0])\n"
    "                    T.writes(T_softmax_norm[v_i0, v_i1])\n"
    "                    T.block_attr({\"axis\": 1})\n"
    "                    T_softmax_norm[v_i0, v_i1] = T_softmax_exp[v_i0, v_i1] / T_softmax_expsum[v_i0]\n";

static tir_func_t *softmax(int64_t m, int64_t n) {
  tir_func_t *f = NULL;
  int64_t shape[2] = {m, n};
  tir_dtype_t none = {0, 0, 0};
  OK(tir_workload_build(&f, "SFM", shape, 2, tir_dt_FLOAT32(), none));
  return f;
}

static void rewrite_parallel_vectorize_unroll_splits_and_reorders_to_vectorize(void **state) {
  assert_pvu(softmax(8, 64), SOFTMAX_AT_ROWS, SOFTMAX_PVU);
}

/* A column sum with a reduction loop outermost: nothing parallel; the
 * columns (16, contiguous in A and S) move under the inner reduction. */
static const char *COLSUM =
    "@T.prim_func\n"
    "def main(A: T.Buffer((32, 16), \"float32\"), S: T.Buffer((16,), \"float32\")):\n"
    "    for j, i in T.grid(16, 32):\n"
    "        with T.block(\"S\"):\n"
    "            vj, vi = T.axis.remap(\"SR\", [j, i])\n"
    "            with T.init():\n"
    "                S[vj] = T.float32(0)\n"
    "            S[vj] = S[vj] + A[vi, vj]\n";

static const char *COLSUM_SPLIT =
    "b0 = sch.get_block(name=\"S\", func_name=\"main\")\n"
    "l1, l2 = sch.get_loops(block=b0)\n"
    "l3, l4 = sch.split(loop=l2, factors=[4, 8], preserve_unit_iters=True)\n"
    "sch.reorder(l3, l1, l4)\n";

static const char *COLSUM_PVU =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((32, 16), \"float32\"), S: T.Buffer((16,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i_0 in T.serial(4, annotations={\"pragma_auto_unroll_max_step\": 16, \"pragma_unroll_explicit\": 1}):\n"
    "        for i_1 in range(8):\n"
    "            for j in T.vectorized(16):\n"
    "                with T.block(\"S\"):\n"
    "                    vj = T.axis.spatial(16, j)\n"
    "                    vi = T.axis.reduce(32, i_0 * 8 + i_1)\n"
    "                    T.reads(A[vi, vj])\n"
    "                    T.writes(S[vj])\n"
    "                    with T.init():\n"
    "                        S[vj] = T.float32(0)\n"
    "                    S[vj] = S[vj] + A[vi, vj]\n";

static void rewrite_parallel_vectorize_unroll_vectorizes_a_column_sum(void **state) {
  assert_pvu(st_parse(COLSUM), COLSUM_SPLIT, COLSUM_PVU);
}

/* Row sums with the same loops: A sees the data-parallel loop with stride
 * 32, so it stays where it is and nothing is vectorized. */
static const char *ROWSUM =
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 32), \"float32\"), S: T.Buffer((16,), \"float32\")):\n"
    "    for j, i in T.grid(16, 32):\n"
    "        with T.block(\"S\"):\n"
    "            vj, vi = T.axis.remap(\"SR\", [j, i])\n"
    "            with T.init():\n"
    "                S[vj] = T.float32(0)\n"
    "            S[vj] = S[vj] + A[vj, vi]\n";

static void rewrite_parallel_vectorize_unroll_leaves_strided_loops(void **state) {
  tir_func_t *f = st_parse(ROWSUM);
  sch_t *sch = pvu(f, COLSUM_SPLIT);
  char *got = tir_print_func(sch_func(sch));
  assert_null(strstr(got, "T.vectorized"));
  mlc_free(got);
  st_assert_same_outputs(f, sch_func(sch), 11, 0.0);
  sch_free(sch);
  tir_func_free(f);
}

/* No root annotations: nothing to do, nothing recorded. */
static void rewrite_parallel_vectorize_unroll_needs_the_root_annotations(void **state) {
  tir_func_t *f = gmm(32, 32, 8);
  sch_t *sch = designed(f, TILED);
  int before = sch_get_trace(sch)->n;
  OK(run("RewriteParallelVectorizeUnroll", f, sch));
  assert_int_equal(sch_get_trace(sch)->n, before);
  sch_free(sch);
  tir_func_free(f);
}

/* GMM 16x32x8 with the 16x4 tile of avx512_fp32_fma_16x4 blockized and
 * marked for it (what MultiLevelTilingWithIntrin makes), B copied per row
 * tile and marked for packing. */
static const char *INTRIN_TILE =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "l4, l5 = sch.split(loop=l2, factors=[None, 16], preserve_unit_iters=True)\n"
    "l6, l7 = sch.split(loop=l3, factors=[None, 4], preserve_unit_iters=True)\n"
    "sch.reorder(l1, l4, l6, l7, l5)\n"
    "b8 = sch.blockize(target=l7, preserve_unit_iters=True)\n"
    "sch.annotate(block_or_loop=b8, ann_key=\"meta_schedule.auto_tensorize\", ann_val=\"INTRIN\")\n";
static const char *PACK_B =
    "b20 = sch.cache_read(block=b8, read_buffer_index=1, storage_scope=\"global\")\n"
    "sch.compute_at(block=b20, loop=l1, preserve_unit_loops=True, index=-1)\n"
    "sch.annotate(block_or_loop=b20, ann_key=\"meta_schedule.layout_rewrite_preproc\", ann_val=16)\n";

/* The design with INTRIN replaced by `intrin` (+ more lines). */
static char *intrin_design(const char *intrin, const char *more) {
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  const char *at = strstr(INTRIN_TILE, "INTRIN");
  mlc_sb_appendn(&sb, INTRIN_TILE, (size_t)(at - INTRIN_TILE));
  mlc_sb_append(&sb, intrin);
  mlc_sb_append(&sb, at + 6);
  if (more) mlc_sb_append(&sb, more);
  return mlc_sb_take(&sb);
}

/* The blocks a tensor intrinsic will replace, and a copy waiting for its
 * layout, are not touched: the tile's inner loops stay serial and
 * unannotated, B_global's loops are not vectorized (only parallelized with
 * the rest). */
static const char *REWRITE_PARALLEL_VECTORIZE_UNROLL_LEAVES_TILES_AND_COPIES_EXPECTED =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def gmm(A: T.Buffer((16, 8), \"float32\"), B: T.Buffer((8, 32), \"float32\"), C: T.Buffer((16, 32), \"float32\")):\n"
    "    T.func_attr({\"global_symbol\": \"gmm\", \"tir.noalias\": T.bool(True)})\n"
    "    # with T.block(\"root\"):\n"
    "    B_global = T.alloc_buffer((8, 32))\n"
    "    for i in T.parallel(16, annotations={\"pragma_auto_unroll_max_step\": 16, \"pragma_unroll_explicit\": 1}):\n"
    "        for ax0, ax1 in T.grid(8, 32):\n"
    "            with T.block(\"B_global\"):\n"
    "                v0, v1 = T.axis.remap(\"SS\", [ax0, ax1])\n"
    "                T.reads(B[v0, v1])\n"
    "                T.writes(B_global[v0, v1])\n"
    "                T.block_attr({\"meta_schedule.layout_rewrite_preproc\": 16})\n"
    "                B_global[v0, v1] = B[v0, v1]\n"
    "        for j_0, k_0 in T.grid(2, 2):\n"
    "            with T.block(\"C_o\"):\n"
    "                v_i_o, v_j_o, v_k_o = T.axis.remap(\"SSR\", [i, j_0, k_0])\n"
    "                T.reads(A[v_i_o, v_k_o * 4:v_k_o * 4 + 4], B_global[v_k_o * 4:v_k_o * 4 + 4, v_j_o * 16:v_j_o * 16 + 16])\n"
    "                T.writes(C[v_i_o, v_j_o * 16:v_j_o * 16 + 16])\n"
    "                T.block_attr({\"meta_schedule.auto_tensorize\": \"avx512_fp32_fma_16x4\"})\n"
    "                with T.init():\n"
    "                    for j_1 in range(16):\n"
    "                        with T.block(\"C_init\"):\n"
    "                            v_j_i_init = T.axis.spatial(16, j_1)\n"
    "                            T.reads()\n"
    "                            T.writes(C[v_i_o, v_j_o * 16 + v_j_i_init])\n"
    "                            C[v_i_o, v_j_o * 16 + v_j_i_init] = T.float32(0)\n"
    "                for k_1, j_1 in T.grid(4, 16):\n"
    "                    with T.block(\"C\"):\n"
    "                        v_j_i, v_k_i = T.axis.remap(\"SR\", [j_1, k_1])\n"
    "                        T.reads(C[v_i_o, v_j_o * 16 + v_j_i], A[v_i_o, v_k_o * 4 + v_k_i], B_global[v_k_o * 4 + v_k_i, v_j_o * 16 + v_j_i])\n"
    "                        T.writes(C[v_i_o, v_j_o * 16 + v_j_i])\n"
    "                        C[v_i_o, v_j_o * 16 + v_j_i] = C[v_i_o, v_j_o * 16 + v_j_i] + A[v_i_o, v_k_o * 4 + v_k_i] * B_global[v_k_o * 4 + v_k_i, v_j_o * 16 + v_j_i]\n";

static void rewrite_parallel_vectorize_unroll_leaves_tiles_and_copies(void **state) {
  tir_func_t *f = gmm(16, 32, 8);
  char *d1 = intrin_design("avx512_fp32_fma_16x4", PACK_B);
  char *design = with_root(d1);
  sch_t *sch = designed(f, design);
  OK(run("RewriteParallelVectorizeUnroll", f, sch));
  assert_rewrite(f, sch, REWRITE_PARALLEL_VECTORIZE_UNROLL_LEAVES_TILES_AND_COPIES_EXPECTED);
  sch_free(sch);
  mlc_free(design);
  mlc_free(d1);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* RewriteReductionBlock                                                     */
/* ------------------------------------------------------------------------ */

static const char *SPLIT_K =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "l4, l5 = sch.split(loop=l3, factors=[None, 4], preserve_unit_iters=True)\n"
    "sch.reorder(l1, l4, l2, l5)\n";

static const char *REWRITE_REDUCTION_BLOCK_EXACT_EXPECTED =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def gmm(A: T.Buffer((8, 8), \"float32\"), B: T.Buffer((8, 8), \"float32\"), C: T.Buffer((8, 8), \"float32\")):\n"
    "    T.func_attr({\"global_symbol\": \"gmm\", \"tir.noalias\": T.bool(True)})\n"
    "    # with T.block(\"root\"):\n"
    "    for i in range(8):\n"
    "        for j_init in range(8):\n"
    "            with T.block(\"C_init\"):\n"
    "                v_i, v_j = T.axis.remap(\"SS\", [i, j_init])\n"
    "                T.reads()\n"
    "                T.writes(C[v_i, v_j])\n"
    "                C[v_i, v_j] = T.float32(0)\n"
    "        for k_0, j, k_1 in T.grid(2, 8, 4):\n"
    "            with T.block(\"C_update\"):\n"
    "                v_i = T.axis.spatial(8, i)\n"
    "                v_j = T.axis.spatial(8, j)\n"
    "                v_k = T.axis.reduce(8, k_0 * 4 + k_1)\n"
    "                T.reads(C[v_i, v_j], A[v_i, v_k], B[v_k, v_j])\n"
    "                T.writes(C[v_i, v_j])\n"
    "                C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]\n";

static void rewrite_reduction_block_exact(void **state) {
  tir_func_t *f = gmm(8, 8, 8);
  sch_t *sch = designed(f, SPLIT_K);
  OK(run("RewriteReductionBlock", f, sch));
  assert_rewrite(f, sch, REWRITE_REDUCTION_BLOCK_EXACT_EXPECTED);
  sch_free(sch);
  tir_func_free(f);
}

static const char *REWRITE_REDUCTION_BLOCK_MOVES_THE_TENSORIZE_MARK_EXPECTED =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def gmm(A: T.Buffer((16, 8), \"float32\"), B: T.Buffer((8, 32), \"float32\"), C: T.Buffer((16, 32), \"float32\")):\n"
    "    T.func_attr({\"global_symbol\": \"gmm\", \"tir.noalias\": T.bool(True)})\n"
    "    # with T.block(\"root\"):\n"
    "    for i, j_0 in T.grid(16, 2):\n"
    "        with T.block(\"C_o_init\"):\n"
    "            v_i_o, v_j_o = T.axis.remap(\"SS\", [i, j_0])\n"
    "            T.reads()\n"
    "            T.writes(C[v_i_o, v_j_o * 16:v_j_o * 16 + 16])\n"
    "            T.block_attr({\"meta_schedule.auto_tensorize\": \"\"})\n"
    "            for j_1 in range(16):\n"
    "                with T.block(\"C_init\"):\n"
    "                    v_j_i_init = T.axis.spatial(16, j_1)\n"
    "                    T.reads()\n"
    "                    T.writes(C[v_i_o, v_j_o * 16 + v_j_i_init])\n"
    "                    C[v_i_o, v_j_o * 16 + v_j_i_init] = T.float32(0)\n"
    "        for k_0 in range(2):\n"
    "            with T.block(\"C_o_update\"):\n"
    "                v_i_o, v_j_o, v_k_o = T.axis.remap(\"SSR\", [i, j_0, k_0])\n"
    "                T.reads(C[v_i_o, v_j_o * 16:v_j_o * 16 + 16], A[v_i_o, v_k_o * 4:v_k_o * 4 + 4], B[v_k_o * 4:v_k_o * 4 + 4, v_j_o * 16:v_j_o * 16 + 16])\n"
    "                T.writes(C[v_i_o, v_j_o * 16:v_j_o * 16 + 16])\n"
    "                T.block_attr({\"meta_schedule.auto_tensorize\": \"avx512_fp32_fma_16x4\"})\n"
    "                for k_1, j_1 in T.grid(4, 16):\n"
    "                    with T.block(\"C\"):\n"
    "                        v_j_i, v_k_i = T.axis.remap(\"SR\", [j_1, k_1])\n"
    "                        T.reads(C[v_i_o, v_j_o * 16 + v_j_i], A[v_i_o, v_k_o * 4 + v_k_i], B[v_k_o * 4 + v_k_i, v_j_o * 16 + v_j_i])\n"
    "                        T.writes(C[v_i_o, v_j_o * 16 + v_j_i])\n"
    "                        C[v_i_o, v_j_o * 16 + v_j_i] = C[v_i_o, v_j_o * 16 + v_j_i] + A[v_i_o, v_k_o * 4 + v_k_i] * B[v_k_o * 4 + v_k_i, v_j_o * 16 + v_j_i]\n";

static void rewrite_reduction_block_moves_the_tensorize_mark(void **state) {
  tir_func_t *f = gmm(16, 32, 8);
  char *design = intrin_design("avx512_fp32_fma_16x4", NULL);
  sch_t *sch = designed(f, design);
  OK(run("RewriteReductionBlock", f, sch));
  assert_rewrite(f, sch, REWRITE_REDUCTION_BLOCK_MOVES_THE_TENSORIZE_MARK_EXPECTED);
  sch_free(sch);
  mlc_free(design);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* RewriteLayout                                                             */
/* ------------------------------------------------------------------------ */

static const char *COPY_B =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "l4, l5 = sch.split(loop=l1, factors=[None, 4], preserve_unit_iters=True)\n"
    "b6 = sch.cache_read(block=b0, read_buffer_index=1, storage_scope=\"global\")\n"
    "sch.compute_at(block=b6, loop=l4, preserve_unit_loops=True, index=-1)\n"
    "sch.annotate(block_or_loop=b6, ann_key=\"meta_schedule.layout_rewrite_preproc\", ann_val=WIDTH)\n";

static char *copy_design(const char *width) {
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  const char *at = strstr(COPY_B, "WIDTH");
  mlc_sb_appendn(&sb, COPY_B, (size_t)(at - COPY_B));
  mlc_sb_append(&sb, width);
  mlc_sb_append(&sb, at + 5);
  return mlc_sb_take(&sb);
}

static const char *REWRITE_LAYOUT_PACKS_IN_STRIPS_EXPECTED =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def gmm(A: T.Buffer((16, 8), \"float32\"), B: T.Buffer((8, 32), \"float32\"), C: T.Buffer((16, 32), \"float32\")):\n"
    "    T.func_attr({\"global_symbol\": \"gmm\", \"tir.noalias\": T.bool(True)})\n"
    "    # with T.block(\"root\"):\n"
    "    B_global = T.alloc_buffer((2, 8, 16))\n"
    "    for i_0 in range(4):\n"
    "        for ax0, ax1_0 in T.grid(8, 2):\n"
    "            for ax1_1 in T.vectorized(16):\n"
    "                with T.block(\"B_global\"):\n"
    "                    v0 = T.axis.spatial(8, ax0)\n"
    "                    v1 = T.axis.spatial(32, ax1_0 * 16 + ax1_1)\n"
    "                    T.reads(B[v0, v1])\n"
    "                    T.writes(B_global[v1 // 16, v0, v1 % 16])\n"
    "                    B_global[v1 // 16, v0, v1 % 16] = B[v0, v1]\n"
    "        for i_1, j, k in T.grid(4, 32, 8):\n"
    "            with T.block(\"C\"):\n"
    "                v_i = T.axis.spatial(16, i_0 * 4 + i_1)\n"
    "                v_j = T.axis.spatial(32, j)\n"
    "                v_k = T.axis.reduce(8, k)\n"
    "                T.reads(A[v_i, v_k], B_global[v_j // 16, v_k, v_j % 16])\n"
    "                T.writes(C[v_i, v_j])\n"
    "                with T.init():\n"
    "                    C[v_i, v_j] = T.float32(0)\n"
    "                C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B_global[v_j // 16, v_k, v_j % 16]\n";

static void rewrite_layout_packs_in_strips(void **state) {
  tir_func_t *f = gmm(16, 32, 8);
  char *design = copy_design("16");
  sch_t *sch = designed(f, design);
  OK(run("RewriteLayout", f, sch));
  assert_rewrite(f, sch, REWRITE_LAYOUT_PACKS_IN_STRIPS_EXPECTED);
  sch_free(sch);
  mlc_free(design);
  tir_func_free(f);
}

/* Another axis than the last (a dense layer's weights W[j, k], packed along
 * j): A[i, k] of GMM 16x32x8 along i, copied at the root; the copy's
 * innermost loop runs along k, so it stays scalar. */
static const char *COPY_A =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "b1 = sch.cache_read(block=b0, read_buffer_index=0, storage_scope=\"global\")\n"
    "sch.annotate(block_or_loop=b1, ann_key=\"meta_schedule.layout_rewrite_preproc\", ann_val=16)\n"
    "sch.annotate(block_or_loop=b1, ann_key=\"meta_schedule.layout_rewrite_axis\", ann_val=AXIS)\n";

static char *copy_a_design(const char *axis) {
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  const char *at = strstr(COPY_A, "AXIS");
  mlc_sb_appendn(&sb, COPY_A, (size_t)(at - COPY_A));
  mlc_sb_append(&sb, axis);
  mlc_sb_append(&sb, at + 4);
  return mlc_sb_take(&sb);
}

static const char *REWRITE_LAYOUT_PACKS_ANOTHER_AXIS_EXPECTED =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def gmm(A: T.Buffer((16, 8), \"float32\"), B: T.Buffer((8, 32), \"float32\"), C: T.Buffer((16, 32), \"float32\")):\n"
    "    T.func_attr({\"global_symbol\": \"gmm\", \"tir.noalias\": T.bool(True)})\n"
    "    # with T.block(\"root\"):\n"
    "    A_global = T.alloc_buffer((1, 8, 16))\n"
    "    for ax0, ax1 in T.grid(16, 8):\n"
    "        with T.block(\"A_global\"):\n"
    "            v0, v1 = T.axis.remap(\"SS\", [ax0, ax1])\n"
    "            T.reads(A[v0, v1])\n"
    "            T.writes(A_global[0, v1, v0])\n"
    "            A_global[0, v1, v0] = A[v0, v1]\n"
    "    for i, j, k in T.grid(16, 32, 8):\n"
    "        with T.block(\"C\"):\n"
    "            v_i, v_j, v_k = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            T.reads(A_global[0, v_k, v_i], B[v_k, v_j])\n"
    "            T.writes(C[v_i, v_j])\n"
    "            with T.init():\n"
    "                C[v_i, v_j] = T.float32(0)\n"
    "            C[v_i, v_j] = C[v_i, v_j] + A_global[0, v_k, v_i] * B[v_k, v_j]\n";

static void rewrite_layout_packs_another_axis(void **state) {
  tir_func_t *f = gmm(16, 32, 8);
  char *design = copy_a_design("0");
  sch_t *sch = designed(f, design);
  OK(run("RewriteLayout", f, sch));
  assert_rewrite(f, sch, REWRITE_LAYOUT_PACKS_ANOTHER_AXIS_EXPECTED);
  sch_free(sch);
  mlc_free(design);
  design = copy_a_design("2");
  sch = designed(f, design);
  assert_rejects(run("RewriteLayout", f, sch),
                 "RewriteLayout: block A_global: meta_schedule.layout_rewrite_axis is not an axis of A_global");
  sch_free(sch);
  mlc_free(design);
  tir_func_free(f);
}

/* The layout must divide the buffer; width 1 only drops the annotation. */
static void rewrite_layout_checks_the_strip_width(void **state) {
  tir_func_t *f = gmm(16, 32, 8);
  char *design = copy_design("12");
  sch_t *sch = designed(f, design);
  assert_rejects(run("RewriteLayout", f, sch),
                 "RewriteLayout: block B_global: dimension 1 of B_global is not a multiple of the strip width 12");
  sch_free(sch);
  mlc_free(design);
  design = copy_design("1");
  sch = designed(f, design);
  OK(run("RewriteLayout", f, sch));
  char *text = tir_print_func(sch_func(sch));
  assert_null(strstr(text, MS_ANN_LAYOUT_REWRITE));
  assert_non_null(strstr(text, "B_global = T.alloc_buffer((8, 32))"));
  mlc_free(text);
  assert_replays(f, sch);
  sch_free(sch);
  mlc_free(design);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* RewriteTensorize                                                          */
/* ------------------------------------------------------------------------ */

/* An intrinsic whose implementation is its own description (the FMA
 * micro-kernel's), so the tensorized program still runs in the interpreter. */
static void register_identity_intrinsic(void) {
  if (sch_intrin_get("test_fma_16x4_identity")) return;
  const sch_intrin_t *fma = sch_intrin_get("avx512_fp32_fma_16x4");
  assert_non_null(fma);
  char *desc = tir_print_func(fma->desc);
  OK(sch_intrin_register("test_fma_16x4_identity", desc, desc));
  mlc_free(desc);
}

/* The reduction split off first (RewriteReductionBlock), then the tile
 * tensorized and the init's 16 lanes vectorized. */
static const char *REWRITE_TENSORIZE_EXACT_EXPECTED =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def gmm(A: T.Buffer((16, 8), \"float32\"), B: T.Buffer((8, 32), \"float32\"), C: T.Buffer((16, 32), \"float32\")):\n"
    "    T.func_attr({\"global_symbol\": \"gmm\", \"tir.noalias\": T.bool(True)})\n"
    "    # with T.block(\"root\"):\n"
    "    for i, j_0 in T.grid(16, 2):\n"
    "        with T.block(\"C_o_init\"):\n"
    "            v_i_o, v_j_o = T.axis.remap(\"SS\", [i, j_0])\n"
    "            T.reads()\n"
    "            T.writes(C[v_i_o, v_j_o * 16:v_j_o * 16 + 16])\n"
    "            for j_1 in T.vectorized(16):\n"
    "                with T.block(\"C_init\"):\n"
    "                    v_j_i_init = T.axis.spatial(16, j_1)\n"
    "                    T.reads()\n"
    "                    T.writes(C[v_i_o, v_j_o * 16 + v_j_i_init])\n"
    "                    C[v_i_o, v_j_o * 16 + v_j_i_init] = T.float32(0)\n"
    "        for k_0 in range(2):\n"
    "            with T.block(\"C_o_update\"):\n"
    "                v_i_o, v_j_o, v_k_o = T.axis.remap(\"SSR\", [i, j_0, k_0])\n"
    "                T.reads(C[v_i_o, v_j_o * 16:v_j_o * 16 + 16], A[v_i_o, v_k_o * 4:v_k_o * 4 + 4], B[v_k_o * 4:v_k_o * 4 + 4, v_j_o * 16:v_j_o * 16 + 16])\n"
    "                T.writes(C[v_i_o, v_j_o * 16:v_j_o * 16 + 16])\n"
    "                A_1 = T.match_buffer(A[v_i_o, v_k_o * 4:v_k_o * 4 + 4], (4,), offset_factor=1)\n"
    "                s0 = T.int32()\n"
    "                B_1 = T.match_buffer(B[v_k_o * 4:v_k_o * 4 + 4, v_j_o * 16:v_j_o * 16 + 16], (4, 16), strides=(s0, 1), offset_factor=1)\n"
    "                C_1 = T.match_buffer(C[v_i_o, v_j_o * 16:v_j_o * 16 + 16], (16,), offset_factor=1)\n"
    "                for k, j in T.grid(4, 16):\n"
    "                    with T.block(\"update\"):\n"
    "                        vj, vk = T.axis.remap(\"SR\", [j, k])\n"
    "                        T.reads(C_1[vj], A_1[vk], B_1[vk, vj])\n"
    "                        T.writes(C_1[vj])\n"
    "                        C_1[vj] = C_1[vj] + A_1[vk] * B_1[vk, vj]\n";

static void rewrite_tensorize_exact(void **state) {
  register_identity_intrinsic();
  tir_func_t *f = gmm(16, 32, 8);
  char *design = intrin_design("test_fma_16x4_identity", NULL);
  sch_t *sch = designed(f, design);
  OK(run("RewriteReductionBlock", f, sch));
  OK(run("RewriteTensorize", f, sch));
  assert_rewrite(f, sch, REWRITE_TENSORIZE_EXACT_EXPECTED);
  sch_free(sch);
  mlc_free(design);
  tir_func_free(f);
}

/* A tile the intrinsic does not take (its init still inside: the
 * description reads the accumulator), and an unknown intrinsic. */
static void rewrite_tensorize_rejects_what_does_not_match(void **state) {
  tir_func_t *f = gmm(16, 32, 8);
  char *design = intrin_design("avx512_fp32_fma_16x4", NULL);
  sch_t *sch = designed(f, design);
  assert_rejects(run("RewriteTensorize", f, sch), "RewriteTensorize: block C_o with avx512_fp32_fma_16x4: tensorize:");
  sch_free(sch);
  mlc_free(design);
  design = intrin_design("no_such_intrinsic", NULL);
  sch = designed(f, design);
  assert_rejects(run("RewriteTensorize", f, sch),
                 "RewriteTensorize: block C_o: no tensor intrinsic is registered as \"no_such_intrinsic\"");
  sch_free(sch);
  mlc_free(design);
  tir_func_free(f);
}

/* The tile with k_0 outside i and j_0: the calls inside it keep their
 * accumulators live across it. 16 rows x 2 vectors = 32 accumulators, with
 * the two operands more than AVX-512's 32 vector registers: rejected; split
 * to 8 x 2 = 16 (i_0 moved outside k_0), the tile is tensorized. A GPU
 * target is not held to the CPU's register file. */
static void rewrite_tensorize_rejects_a_register_tile_the_registers_cannot_hold(void **state) {
  register_identity_intrinsic();
  tir_func_t *f = gmm(16, 32, 8);
  const char *k_outside =
      "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
      "l1, l2, l3 = sch.get_loops(block=b0)\n"
      "l4, l5 = sch.split(loop=l2, factors=[None, 16], preserve_unit_iters=True)\n"
      "l6, l7 = sch.split(loop=l3, factors=[None, 4], preserve_unit_iters=True)\n"
      "%s"
      "b8 = sch.blockize(target=l7, preserve_unit_iters=True)\n"
      "sch.annotate(block_or_loop=b8, ann_key=\"meta_schedule.auto_tensorize\", ann_val=\"test_fma_16x4_identity\")\n";
  char design[1024];
  snprintf(design, sizeof design, k_outside, "sch.reorder(l6, l1, l4, l7, l5)\n");
  sch_t *sch = designed(f, design);
  OK(run("RewriteReductionBlock", f, sch));
  assert_rejects(run("RewriteTensorize", f, sch),
                 "RewriteTensorize: block C_o_update: its 32 test_fma_16x4_identity calls inside reduction loop k_0 "
                 "keep 32 accumulator vectors, more than the 30 of 32 vector registers left beside the operands");
  sch_free(sch);

  snprintf(design, sizeof design, k_outside,
           "l9, l10 = sch.split(loop=l1, factors=[2, 8], preserve_unit_iters=True)\n"
           "sch.reorder(l9, l6, l10, l4, l7, l5)\n");
  sch = designed(f, design);
  OK(run("RewriteReductionBlock", f, sch));
  OK(run("RewriteTensorize", f, sch));
  char *text = tir_print_func(sch_func(sch));
  assert_null(strstr(text, MS_ANN_AUTO_TENSORIZE));
  mlc_free(text);
  assert_replays(f, sch);
  sch_free(sch);

  /* The innermost reduction loop counts even when it runs once (k_0_1
   * here): the 8 x 2 calls inside it are the tile, though k_0_0 outside
   * sees 32. Memory-bound GEMMs win with such tiles, their accumulators in
   * L1 (docs/decisions.md). */
  snprintf(design, sizeof design, k_outside,
           "l9, l10 = sch.split(loop=l1, factors=[2, 8], preserve_unit_iters=True)\n"
           "l11, l12 = sch.split(loop=l6, factors=[2, 1], preserve_unit_iters=True)\n"
           "sch.reorder(l11, l9, l12, l10, l4, l7, l5)\n");
  sch = designed(f, design);
  OK(run("RewriteReductionBlock", f, sch));
  OK(run("RewriteTensorize", f, sch));
  sch_free(sch);

  snprintf(design, sizeof design, k_outside, "sch.reorder(l6, l1, l4, l7, l5)\n");
  sch = designed(f, design);
  ms_ctx_t ctx = ctx_of(f);
  OK(mlc_target_parse(&ctx.target, "cuda -arch=sm_80"));
  const ms_postproc_t *rrb = ms_postproc_find("RewriteReductionBlock"), *rt = ms_postproc_find("RewriteTensorize");
  OK(rrb->apply(rrb, &ctx, sch));
  OK(rt->apply(rt, &ctx, sch));
  sch_free(sch);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* The CPU postprocessors together                                           */
/* ------------------------------------------------------------------------ */

static void cpu_defaults_are_metaschedules_in_order(void **state) {
  static const char *const names[] = {"DisallowDynamicLoop", "RewriteParallelVectorizeUnroll",
                                      "RewriteReductionBlock", "RewriteLayout", "RewriteTensorize"};
  tir_func_t *f = gmm(8, 8, 8);
  ms_ctx_t ctx = ctx_of(f);
  int n;
  const ms_postproc_t *const *pp = ms_postprocs_cpu_default(&ctx, &n);
  assert_int_equal(n, 5);
  for (int i = 0; i < n; i++) {
    assert_string_equal(pp[i]->name, names[i]);
    assert_ptr_equal(ms_postproc_find(names[i]), pp[i]);
  }
  assert_non_null(ms_postproc_find("RewriteCooperativeFetch")); /* GPU ones are found by name too */
  assert_null(ms_postproc_find("RewriteNothing"));
  assert_null(ms_postproc_find(NULL));
  sch_t *sch = NULL;
  OK(sch_create(&sch, f, 1, SCH_ERRORS_FAST));
  assert_int_equal(ms_postprocs_apply(&ctx, NULL, 2, sch), MLC_EINVAL);
  assert_int_equal(ms_postprocs_apply(&ctx, pp, n, NULL), MLC_EINVAL);
  sch_free(sch);
  tir_func_free(f);
}

/* The whole pipeline on the intrinsic's tile with B packed (the identity
 * intrinsic, so the interpreter can run the result): EnterPostproc right
 * after the design, every postprocessor's rewrite, and a trace that
 * replays to the same program. */
static const char *POSTPROCS_APPLY_MARKS_AND_REPLAYS_EXPECTED =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def gmm(A: T.Buffer((16, 8), \"float32\"), B: T.Buffer((8, 32), \"float32\"), C: T.Buffer((16, 32), \"float32\")):\n"
    "    T.func_attr({\"global_symbol\": \"gmm\", \"tir.noalias\": T.bool(True)})\n"
    "    # with T.block(\"root\"):\n"
    "    B_global = T.alloc_buffer((2, 8, 16))\n"
    "    for i in T.parallel(16, annotations={\"pragma_auto_unroll_max_step\": 16, \"pragma_unroll_explicit\": 1}):\n"
    "        for ax0, ax1_0 in T.grid(8, 2):\n"
    "            for ax1_1 in T.vectorized(16):\n"
    "                with T.block(\"B_global\"):\n"
    "                    v0 = T.axis.spatial(8, ax0)\n"
    "                    v1 = T.axis.spatial(32, ax1_0 * 16 + ax1_1)\n"
    "                    T.reads(B[v0, v1])\n"
    "                    T.writes(B_global[v1 // 16, v0, v1 % 16])\n"
    "                    B_global[v1 // 16, v0, v1 % 16] = B[v0, v1]\n"
    "        for j_0 in range(2):\n"
    "            with T.block(\"C_o_init\"):\n"
    "                v_i_o, v_j_o = T.axis.remap(\"SS\", [i, j_0])\n"
    "                T.reads()\n"
    "                T.writes(C[v_i_o, v_j_o * 16:v_j_o * 16 + 16])\n"
    "                for j_1 in T.vectorized(16):\n"
    "                    with T.block(\"C_init\"):\n"
    "                        v_j_i_init = T.axis.spatial(16, j_1)\n"
    "                        T.reads()\n"
    "                        T.writes(C[v_i_o, v_j_o * 16 + v_j_i_init])\n"
    "                        C[v_i_o, v_j_o * 16 + v_j_i_init] = T.float32(0)\n"
    "            for k_0 in range(2):\n"
    "                with T.block(\"C_o_update\"):\n"
    "                    v_i_o, v_j_o, v_k_o = T.axis.remap(\"SSR\", [i, j_0, k_0])\n"
    "                    T.reads(C[v_i_o, v_j_o * 16:v_j_o * 16 + 16], A[v_i_o, v_k_o * 4:v_k_o * 4 + 4], B_global[v_j_o, v_k_o * 4:v_k_o * 4 + 4, 0:16])\n"
    "                    T.writes(C[v_i_o, v_j_o * 16:v_j_o * 16 + 16])\n"
    "                    A_1 = T.match_buffer(A[v_i_o, v_k_o * 4:v_k_o * 4 + 4], (4,), offset_factor=1)\n"
    "                    s0 = T.int32()\n"
    "                    B_1 = T.match_buffer(B_global[v_j_o, v_k_o * 4:v_k_o * 4 + 4, 0:16], (4, 16), strides=(s0, 1), offset_factor=1)\n"
    "                    C_1 = T.match_buffer(C[v_i_o, v_j_o * 16:v_j_o * 16 + 16], (16,), offset_factor=1)\n"
    "                    for k, j in T.grid(4, 16):\n"
    "                        with T.block(\"update\"):\n"
    "                            vj, vk = T.axis.remap(\"SR\", [j, k])\n"
    "                            T.reads(C_1[vj], A_1[vk], B_1[vk, vj])\n"
    "                            T.writes(C_1[vj])\n"
    "                            C_1[vj] = C_1[vj] + A_1[vk] * B_1[vk, vj]\n";

static void postprocs_apply_marks_and_replays(void **state) {
  register_identity_intrinsic();
  tir_func_t *f = gmm(16, 32, 8);
  char *d1 = intrin_design("test_fma_16x4_identity", PACK_B);
  char *design = with_root(d1);
  sch_t *sch = designed(f, design);
  int ndesign = sch_get_trace(sch)->n;
  ms_ctx_t ctx = ctx_of(f);
  int n;
  const ms_postproc_t *const *pp = ms_postprocs_cpu_default(&ctx, &n);
  OK(ms_postprocs_apply(&ctx, pp, n, sch));
  const sch_trace_t *t = sch_get_trace(sch);
  assert_string_equal(t->insts[ndesign].kind->name, "EnterPostproc");
  assert_rewrite(f, sch, POSTPROCS_APPLY_MARKS_AND_REPLAYS_EXPECTED);
  sch_free(sch);
  mlc_free(design);
  mlc_free(d1);
  tir_func_free(f);
}

/* A rejection stops the list: the reason names the postprocessor. */
static void postprocs_apply_stops_at_a_rejection(void **state) {
  tir_func_t *f = st_parse(DYNAMIC);
  sch_t *sch = st_schedule(DYNAMIC);
  ms_ctx_t ctx = ctx_of(f);
  int n;
  const ms_postproc_t *const *pp = ms_postprocs_cpu_default(&ctx, &n);
  assert_rejects(ms_postprocs_apply(&ctx, pp, n, sch), "DisallowDynamicLoop: loop i");
  sch_free(sch);
  tir_func_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(disallow_dynamic_loop_rejects_a_symbolic_extent),
      cmocka_unit_test(rewrite_parallel_vectorize_unroll_exact),
      cmocka_unit_test(rewrite_parallel_vectorize_unroll_needs_the_root_annotations),
      cmocka_unit_test(rewrite_parallel_vectorize_unroll_splits_and_reorders_to_vectorize),
      cmocka_unit_test(rewrite_parallel_vectorize_unroll_vectorizes_a_column_sum),
      cmocka_unit_test(rewrite_parallel_vectorize_unroll_leaves_strided_loops),
      cmocka_unit_test(rewrite_parallel_vectorize_unroll_leaves_tiles_and_copies),
      cmocka_unit_test(rewrite_reduction_block_exact),
      cmocka_unit_test(rewrite_reduction_block_moves_the_tensorize_mark),
      cmocka_unit_test(rewrite_layout_packs_in_strips),
      cmocka_unit_test(rewrite_layout_packs_another_axis),
      cmocka_unit_test(rewrite_layout_checks_the_strip_width),
      cmocka_unit_test(rewrite_tensorize_exact),
      cmocka_unit_test(rewrite_tensorize_rejects_what_does_not_match),
      cmocka_unit_test(rewrite_tensorize_rejects_a_register_tile_the_registers_cannot_hold),
      cmocka_unit_test(cpu_defaults_are_metaschedules_in_order),
      cmocka_unit_test(postprocs_apply_marks_and_replays),
      cmocka_unit_test(postprocs_apply_stops_at_a_rejection),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
