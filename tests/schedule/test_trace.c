/*
 * test_trace.c - traces (schedule/trace/): the JSON form is TVM's layout
 * byte for byte and round-trips; the Python form is what TVM prints and
 * parses back to the same trace; JSON as TVM writes it (other versions'
 * layouts included) loads and replays; replay with decisions reproduces the
 * program exactly (structurally equal, same workload key) and re-records the
 * same trace, replay without decisions samples afresh; with_decision and
 * simplified; and every malformed trace is an error naming the instruction
 * (JSON) or the line and column (Python), never a crash.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "sched_testing.h"
#include "tests/lib/check_ok.h"

#define HEADER "# from tvm.script import tir as T\n\n@T.prim_func\n"

static const char *MM =
    HEADER
    "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\"), C: T.Buffer((32, 32), \"float32\")):\n"
    "    for i, j, k in T.grid(32, 32, 32):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            T.reads(A[vi, vk], B[vk, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

/* B = A * 2; C = B + 1. */
static const char *EW2 =
    HEADER
    "def main(A: T.Buffer((64, 64), \"float32\"), C: T.Buffer((64, 64), \"float32\")):\n"
    "    B = T.alloc_buffer((64, 64))\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(A[vi, vj])\n"
    "            T.writes(B[vi, vj])\n"
    "            B[vi, vj] = A[vi, vj] * T.float32(2)\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(B[vi, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            C[vi, vj] = B[vi, vj] + T.float32(1)\n";

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static sch_t *schedule_seeded(const char *src, uint64_t seed) {
  tir_func_t *f = st_parse(src);
  sch_t *sch;
  OK(sch_create(&sch, f, seed, SCH_ERRORS_FAST));
  tir_func_free(f);
  return sch;
}

static char *json_text(const sch_trace_t *t) {
  json_t *j;
  OK(sch_trace_to_json(&j, t));
  char *s = json_dumps(j, JSON_REAL_PRECISION(17));
  json_decref(j);
  assert_non_null(s);
  return s;
}

static sch_trace_t *trace_of_json_text(const char *text) {
  json_t *j = mlc_json_loads(text, "<test>");
  assert_non_null(j);
  sch_trace_t *t;
  OK(sch_trace_from_json(&t, j));
  json_decref(j);
  return t;
}

/* A JSON text that must not load: the error contains needle. */
static void assert_json_rejected(const char *text, const char *needle) {
  json_t *j = mlc_json_loads(text, "<test>");
  assert_non_null(j);
  sch_trace_t *t = (sch_trace_t *)1;
  int rc = sch_trace_from_json(&t, j);
  json_decref(j);
  assert_int_equal(rc, MLC_EPARSE);
  assert_null(t);
  if (!strstr(mlc_error_last(), needle)) {
    fprintf(stderr, "error: %s\nexpected it to contain: %s\n", mlc_error_last(), needle);
    fail();
  }
}

static void assert_python_rejected(const char *src, const char *needle) {
  sch_trace_t *t = (sch_trace_t *)1;
  int rc = sch_trace_from_python(&t, src, strlen(src), "S.py");
  assert_int_equal(rc, MLC_EPARSE);
  assert_null(t);
  if (!strstr(mlc_error_last(), needle)) {
    fprintf(stderr, "error: %s\nexpected it to contain: %s\n", mlc_error_last(), needle);
    fail();
  }
}

/* Splits loop into tiles sampled with `decision` (NULL: sampled). */
static const sch_rv_t *tile_loop(sch_t *sch, sch_rv_t loop, int n, const int64_t *decision) {
  const sch_rv_t *tiles, *loops;
  OK(sch_sample_perfect_tile(sch, &tiles, loop, n, 16, decision));
  sch_arg_t f[8];
  for (int i = 0; i < n; i++) f[i] = sch_arg_rv(tiles[i]);
  OK(sch_split(sch, &loops, loop, f, n, true));
  return loops;
}

/* The multi-level tiling of the matmul the tests share (SSRSRS-like),
 * with fixed decisions when `fixed`, sampled ones otherwise. */
static sch_t *tiled_matmul(uint64_t seed, bool fixed) {
  sch_t *sch = schedule_seeded(MM, seed);
  sch_rv_t b;
  const sch_rv_t *l;
  int n;
  OK(sch_get_block(sch, &b, "C"));
  OK(sch_get_loops(sch, &l, &n, b));
  sch_rv_t i = l[0], j = l[1], k = l[2];
  static const int64_t di[] = {2, 4, 4, 1}, dj[] = {2, 1, 2, 8}, dk[] = {4, 8};
  const sch_rv_t *si = tile_loop(sch, i, 4, fixed ? di : NULL);
  const sch_rv_t *sj = tile_loop(sch, j, 4, fixed ? dj : NULL);
  const sch_rv_t *sk = tile_loop(sch, k, 2, fixed ? dk : NULL);
  sch_rv_t order[10] = {si[0], sj[0], si[1], sj[1], sk[0], si[2], sj[2], sk[1], si[3], sj[3]};
  OK(sch_reorder(sch, order, 10));
  OK(sch_annotate(sch, b, "meta_schedule.tiling_structure", sch_arg_str("SSRSRS")));
  static const int64_t cand[] = {0, 16, 64, 512};
  static const double probs[] = {0.25, 0.25, 0.25, 0.25};
  static const int64_t two = 2;
  sch_rv_t v, fused;
  OK(sch_sample_categorical(sch, &v, cand, probs, 4, fixed ? &two : NULL));
  OK(sch_annotate(sch, b, "meta_schedule.unroll_explicit", sch_arg_rv(v)));
  sch_rv_t outer[2] = {si[0], sj[0]};
  OK(sch_fuse(sch, &fused, outer, 2, true));
  OK(sch_parallel(sch, fused));
  OK(sch_vectorize(sch, sj[3]));
  return sch;
}

static const char *TILED_JSON =
    "[[[\"GetBlock\", [], [\"C\", \"main\"], [\"b0\"]], "
    "[\"GetLoops\", [\"b0\"], [], [\"l1\", \"l2\", \"l3\"]], "
    "[\"SamplePerfectTile\", [\"l1\"], [4, 16], [\"v4\", \"v5\", \"v6\", \"v7\"]], "
    "[\"Split\", [\"l1\", \"v4\", \"v5\", \"v6\", \"v7\"], [1, 0], [\"l8\", \"l9\", \"l10\", \"l11\"]], "
    "[\"SamplePerfectTile\", [\"l2\"], [4, 16], [\"v12\", \"v13\", \"v14\", \"v15\"]], "
    "[\"Split\", [\"l2\", \"v12\", \"v13\", \"v14\", \"v15\"], [1, 0], [\"l16\", \"l17\", \"l18\", \"l19\"]], "
    "[\"SamplePerfectTile\", [\"l3\"], [2, 16], [\"v20\", \"v21\"]], "
    "[\"Split\", [\"l3\", \"v20\", \"v21\"], [1, 0], [\"l22\", \"l23\"]], "
    "[\"Reorder\", [\"l8\", \"l16\", \"l9\", \"l17\", \"l22\", \"l10\", \"l18\", \"l23\", \"l11\", \"l19\"], [], []], "
    "[\"Annotate\", [\"b0\", \"\\\"SSRSRS\\\"\"], [\"meta_schedule.tiling_structure\"], []], "
    "[\"SampleCategorical\", [], [[0, 16, 64, 512], [0.25, 0.25, 0.25, 0.25]], [\"v24\"]], "
    "[\"Annotate\", [\"b0\", \"v24\"], [\"meta_schedule.unroll_explicit\"], []], "
    "[\"Fuse\", [\"l8\", \"l16\"], [1], [\"l25\"]], "
    "[\"Parallel\", [\"l25\"], [], []], "
    "[\"Vectorize\", [\"l19\"], [], []]], "
    "[[2, [2, 4, 4, 1]], [4, [2, 1, 2, 8]], [6, [4, 8]], [10, 2]]]";

static const char *TILED_PYTHON =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "v4, v5, v6, v7 = sch.sample_perfect_tile(loop=l1, n=4, max_innermost_factor=16, decision=[2, 4, 4, 1])\n"
    "l8, l9, l10, l11 = sch.split(loop=l1, factors=[v4, v5, v6, v7], preserve_unit_iters=True, "
    "disable_predication=False)\n"
    "v12, v13, v14, v15 = sch.sample_perfect_tile(loop=l2, n=4, max_innermost_factor=16, decision=[2, 1, 2, 8])\n"
    "l16, l17, l18, l19 = sch.split(loop=l2, factors=[v12, v13, v14, v15], preserve_unit_iters=True, "
    "disable_predication=False)\n"
    "v20, v21 = sch.sample_perfect_tile(loop=l3, n=2, max_innermost_factor=16, decision=[4, 8])\n"
    "l22, l23 = sch.split(loop=l3, factors=[v20, v21], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.reorder(l8, l16, l9, l17, l22, l10, l18, l23, l11, l19)\n"
    "sch.annotate(block_or_loop=b0, ann_key=\"meta_schedule.tiling_structure\", ann_val=\"SSRSRS\")\n"
    "v24 = sch.sample_categorical(candidates=[0, 16, 64, 512], probs=[0.25, 0.25, 0.25, 0.25], decision=2)\n"
    "sch.annotate(block_or_loop=b0, ann_key=\"meta_schedule.unroll_explicit\", ann_val=v24)\n"
    "l25 = sch.fuse(l8, l16, preserve_unit_iters=True)\n"
    "sch.parallel(loop=l25)\n"
    "sch.vectorize(loop=l19)\n";

/* Replays t on a fresh schedule of src (seed), which must succeed. */
static sch_t *replayed(const char *src, const sch_trace_t *t, uint64_t seed, bool use_decisions) {
  sch_t *sch = schedule_seeded(src, seed);
  int rc = sch_trace_apply(sch, t, use_decisions);
  if (rc != MLC_OK) fprintf(stderr, "replay: %s\n", sch_error(sch));
  assert_int_equal(rc, MLC_OK);
  return sch;
}

static void assert_same_program(const tir_func_t *a, const tir_func_t *b) {
  char why[256] = "";
  if (!tir_func_equal(a, b, why, sizeof why)) {
    fprintf(stderr, "programs differ: %s\n", why);
    fail();
  }
  assert_true(tir_func_key(a) == tir_func_key(b));
  char *ta = tir_print_func(a), *tb = tir_print_func(b);
  assert_string_equal(ta, tb);
  mlc_free(ta);
  mlc_free(tb);
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                      */
/* ------------------------------------------------------------------------ */

static void trace_json_is_tvm_layout_exactly(void **state) {
  sch_t *sch = tiled_matmul(1, true);
  char *text = json_text(sch_get_trace(sch));
  assert_string_equal(text, TILED_JSON);
  free(text);
  sch_free(sch);
}

static void trace_json_round_trips(void **state) {
  sch_trace_t *t = trace_of_json_text(TILED_JSON);
  assert_int_equal(t->n, 15);
  assert_int_equal(t->nrvs, 26);
  char *again = json_text(t);
  assert_string_equal(again, TILED_JSON);
  free(again);
  sch_trace_free(t);
}

/* ------------------------------------------------------------------------ */
/* Python                                                                    */
/* ------------------------------------------------------------------------ */

static void trace_python_is_what_tvm_prints(void **state) {
  sch_t *sch = tiled_matmul(1, true);
  char *py = sch_trace_to_python(sch_get_trace(sch));
  assert_string_equal(py, TILED_PYTHON);
  mlc_free(py);
  sch_free(sch);
}

static void trace_python_parses_back_to_the_same_trace(void **state) {
  sch_trace_t *t;
  OK(sch_trace_from_python(&t, TILED_PYTHON, strlen(TILED_PYTHON), "S.py"));
  char *json = json_text(t);
  assert_string_equal(json, TILED_JSON);
  char *py = sch_trace_to_python(t);
  assert_string_equal(py, TILED_PYTHON);
  free(json);
  mlc_free(py);
  sch_trace_free(t);
}

/* What `print(sch.trace)` shows in TVM, with comments, indentation, TVM's
 * defaults left out, keywords in another order, positional arguments,
 * a call over two lines, rebinding a name, and single quotes. */
static void python_form_accepts_tvm_print_and_hand_written_scripts(void **state) {
  static const char *src =
      "# from tvm import tir\n"
      "def apply_trace(sch: tir.Schedule) -> None:\n"
      "  b0 = sch.get_block(name=\"C\")   # the matmul\n"
      "  i, j, k = sch.get_loops(b0)\n"
      "  v = sch.sample_perfect_tile(i, n=2, decision=[4, 8])\n"
      "  i0, i1 = sch.split(factors=v, loop=i)\n"
      "\n"
      "  j0, j1 = sch.split(j,\n"
      "                     [None, 8])\n"
      "  sch.reorder(i0, j0, k, i1, j1)\n"
      "  sch.annotate(b0, 'meta_schedule.tiling_structure', 'SSRSRS')\n"
      "  i0 = sch.fuse(i0, j0)\n"
      "  sch.parallel(loop=i0)\n";
  assert_python_rejected(src, "S.py:5:3: instruction 2 (SamplePerfectTile): has 1 output, expected 2");
  /* The same with the factors as a list. */
  static const char *fixed =
      "# from tvm import tir\n"
      "def apply_trace(sch: tir.Schedule) -> None:\n"
      "  b0 = sch.get_block(name=\"C\")   # the matmul\n"
      "  i, j, k = sch.get_loops(b0)\n"
      "  v0, v1 = sch.sample_perfect_tile(i, n=2, decision=[4, 8])\n"
      "  i0, i1 = sch.split(factors=[v0, v1], loop=i)\n"
      "\n"
      "  j0, j1 = sch.split(j,\n"
      "                     [None, 8])\n"
      "  sch.reorder(i0, j0, k, i1, j1)\n"
      "  sch.annotate(b0, 'meta_schedule.tiling_structure', 'SSRSRS')\n"
      "  i0 = sch.fuse(i0, j0)\n"
      "  sch.parallel(loop=i0)\n";
  sch_trace_t *t;
  OK(sch_trace_from_python(&t, fixed, strlen(fixed), "S.py"));
  char *py = sch_trace_to_python(t);
  assert_string_equal(py,
                      "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
                      "l1, l2, l3 = sch.get_loops(block=b0)\n"
                      "v4, v5 = sch.sample_perfect_tile(loop=l1, n=2, max_innermost_factor=16, decision=[4, 8])\n"
                      "l6, l7 = sch.split(loop=l1, factors=[v4, v5], preserve_unit_iters=True, "
                      "disable_predication=False)\n"
                      "l8, l9 = sch.split(loop=l2, factors=[None, 8], preserve_unit_iters=True, "
                      "disable_predication=False)\n"
                      "sch.reorder(l6, l8, l3, l7, l9)\n"
                      "sch.annotate(block_or_loop=b0, ann_key=\"meta_schedule.tiling_structure\", ann_val=\"SSRSRS\")\n"
                      "l10 = sch.fuse(l6, l8, preserve_unit_iters=True)\n"
                      "sch.parallel(loop=l10)\n");
  mlc_free(py);
  sch_t *sch = replayed(MM, t, 1, true);
  tir_func_t *orig = st_parse(MM);
  st_assert_same_outputs(orig, sch_func(sch), 5, 1e-5);
  tir_func_free(orig);
  sch_free(sch);
  sch_trace_free(t);
}

/* ------------------------------------------------------------------------ */
/* TVM's JSON                                                                */
/* ------------------------------------------------------------------------ */

/* As MetaSchedule's database stores it, mixing the layouts of TVM
 * versions: Split with one attribute (before disable_predication), Fuse with
 * none, JSON booleans, compute_at without index, cache_write without
 * consumer_blocks, rfactor-style extras absent. */
static const char *TVM_JSON =
    "[[[\"GetBlock\", [], [\"C\", \"main\"], [\"b0\"]],"
    " [\"Annotate\", [\"b0\", \"\\\"SSRSRS\\\"\"], [\"meta_schedule.tiling_structure\"], []],"
    " [\"GetLoops\", [\"b0\"], [], [\"l1\", \"l2\", \"l3\"]],"
    " [\"SamplePerfectTile\", [\"l1\"], [2, 64], [\"v4\", \"v5\"]],"
    " [\"Split\", [\"l1\", \"v4\", \"v5\"], [1], [\"l6\", \"l7\"]],"
    " [\"SamplePerfectTile\", [\"l2\"], [2, 64], [\"v8\", \"v9\"]],"
    " [\"Split\", [\"l2\", \"v8\", \"v9\"], [true, false], [\"l10\", \"l11\"]],"
    " [\"Split\", [\"l3\", \"None\", 16], [1, 0], [\"l12\", \"l13\"]],"
    " [\"Reorder\", [\"l6\", \"l10\", \"l12\", \"l7\", \"l13\", \"l11\"], [], []],"
    " [\"CacheWrite\", [\"b0\"], [0, \"global\"], [\"b14\"]],"
    " [\"ReverseComputeAt\", [\"b14\", \"l10\"], [1], []],"
    " [\"Fuse\", [\"l6\", \"l10\"], [], [\"l15\"]],"
    " [\"Parallel\", [\"l15\"], [], []],"
    " [\"SampleCategorical\", [], [[0, 16, 64, 512], [0.25, 0.25, 0.25, 0.25]], [\"v16\"]],"
    " [\"Annotate\", [\"b0\", \"v16\"], [\"meta_schedule.unroll_explicit\"], []],"
    " [\"EnterPostproc\", [], [], []]],"
    " [[3, [4, 8]], [5, [4, 8]], [13, 1]]]";

static void tvm_spelled_json_loads_and_replays(void **state) {
  sch_trace_t *t = trace_of_json_text(TVM_JSON);
  assert_int_equal(t->n, 16);
  /* Normalised to our layout: defaults filled in. */
  assert_int_equal(t->insts[4].nattrs, 2);
  assert_int_equal(t->insts[4].attrs[1].u.i, 0);
  assert_int_equal(t->insts[6].attrs[0].u.i, 1);
  assert_int_equal(t->insts[9].ninputs, 2);
  assert_int_equal(t->insts[9].inputs[1].kind, SCH_ARG_LIST);
  assert_int_equal(t->insts[10].attrs[1].u.i, -1);
  assert_int_equal(t->insts[11].attrs[0].u.i, 1);
  sch_t *sch = replayed(MM, t, 3, true);
  tir_func_t *orig = st_parse(MM);
  st_assert_same_outputs(orig, sch_func(sch), 5, 1e-5);
  tir_func_free(orig);
  /* The replay recorded every instruction, EnterPostproc included. */
  assert_int_equal(sch_get_trace(sch)->n, 16);
  /* And applying the same primitives directly gives the same program. */
  sch_t *direct = schedule_seeded(MM, 3);
  sch_rv_t b, cw, fused, v;
  const sch_rv_t *l, *ti, *tj, *si, *sj, *sk;
  int n;
  OK(sch_get_block(direct, &b, "C"));
  OK(sch_annotate(direct, b, "meta_schedule.tiling_structure", sch_arg_str("SSRSRS")));
  OK(sch_get_loops(direct, &l, &n, b));
  static const int64_t di[] = {4, 8}, dj[] = {4, 8}, one = 1;
  OK(sch_sample_perfect_tile(direct, &ti, l[0], 2, 64, di));
  sch_arg_t fi[2] = {sch_arg_rv(ti[0]), sch_arg_rv(ti[1])};
  OK(sch_split(direct, &si, l[0], fi, 2, true));
  OK(sch_sample_perfect_tile(direct, &tj, l[1], 2, 64, dj));
  sch_arg_t fj[2] = {sch_arg_rv(tj[0]), sch_arg_rv(tj[1])};
  OK(sch_split(direct, &sj, l[1], fj, 2, true));
  sch_arg_t fk[2] = {sch_arg_none(), sch_arg_int(16)};
  OK(sch_split(direct, &sk, l[2], fk, 2, true));
  sch_rv_t order[6] = {si[0], sj[0], sk[0], si[1], sk[1], sj[1]};
  OK(sch_reorder(direct, order, 6));
  OK(sch_cache_write(direct, &cw, b, 0, "global", NULL, 0));
  OK(sch_reverse_compute_at(direct, cw, sj[0], true, -1));
  sch_rv_t outer[2] = {si[0], sj[0]};
  OK(sch_fuse(direct, &fused, outer, 2, true));
  OK(sch_parallel(direct, fused));
  static const int64_t cand[] = {0, 16, 64, 512};
  static const double probs[] = {0.25, 0.25, 0.25, 0.25};
  OK(sch_sample_categorical(direct, &v, cand, probs, 4, &one));
  OK(sch_annotate(direct, b, "meta_schedule.unroll_explicit", sch_arg_rv(v)));
  assert_same_program(sch_func(direct), sch_func(sch));
  sch_free(direct);
  sch_free(sch);
  sch_trace_free(t);
}

/* ------------------------------------------------------------------------ */
/* Replay                                                                    */
/* ------------------------------------------------------------------------ */

static void replay_with_decisions_reproduces_the_program_exactly(void **state) {
  for (uint64_t seed = 1; seed <= 4; seed++) {
    sch_t *sch = tiled_matmul(seed, false); /* sampled decisions */
    char *json = json_text(sch_get_trace(sch));
    sch_trace_t *t = trace_of_json_text(json);
    sch_t *again = replayed(MM, t, 1000 + seed, true); /* another seed: decisions rule */
    assert_same_program(sch_func(sch), sch_func(again));
    /* The replay records the same trace. */
    char *json2 = json_text(sch_get_trace(again));
    assert_string_equal(json, json2);
    free(json);
    free(json2);
    sch_free(again);
    sch_trace_free(t);
    sch_free(sch);
  }
}

static void replay_without_decisions_samples_afresh(void **state) {
  sch_t *sch = tiled_matmul(1, true);
  const sch_trace_t *t = sch_get_trace(sch);
  char *recorded = json_text(t);
  int differ = 0;
  tir_func_t *orig = st_parse(MM);
  for (uint64_t seed = 1; seed <= 6; seed++) {
    sch_t *fresh = replayed(MM, t, seed, false);
    char *json = json_text(sch_get_trace(fresh));
    differ += strcmp(json, recorded) != 0;
    /* Same instructions; only decisions differ; the program is still right. */
    assert_int_equal(sch_get_trace(fresh)->n, t->n);
    if (seed == 1) st_assert_same_outputs(orig, sch_func(fresh), seed, 1e-5);
    /* Same seed, same fresh samples. */
    sch_t *twin = replayed(MM, t, seed, false);
    assert_same_program(sch_func(fresh), sch_func(twin));
    free(json);
    sch_free(twin);
    sch_free(fresh);
  }
  assert_true(differ >= 5);
  tir_func_free(orig);
  free(recorded);
  sch_free(sch);
}

static void replay_errors_name_the_instruction(void **state) {
  /* A block that does not exist. */
  sch_trace_t *t = trace_of_json_text("[[[\"GetBlock\", [], [\"D\", \"main\"], [\"b0\"]]], []]");
  sch_t *sch = schedule_seeded(MM, 1);
  assert_int_equal(sch_trace_apply(sch, t, true), MLC_ESCHEDULE);
  assert_non_null(strstr(sch_error(sch), "instruction 0 (GetBlock): get_block: "));
  assert_non_null(strstr(mlc_error_last(), "instruction 0 (GetBlock): get_block: "));
  sch_free(sch);
  sch_trace_free(t);
  /* A decision that does not fit the loop (32 is not 4 * 4). */
  t = trace_of_json_text(
      "[[[\"GetBlock\", [], [\"C\", \"main\"], [\"b0\"]], [\"GetLoops\", [\"b0\"], [], [\"l1\", \"l2\", \"l3\"]],"
      " [\"SamplePerfectTile\", [\"l1\"], [2, 64], [\"v4\", \"v5\"]]], [[2, [4, 4]]]]");
  sch = schedule_seeded(MM, 1);
  assert_int_equal(sch_trace_apply(sch, t, true), MLC_ESCHEDULE);
  assert_string_equal(sch_error(sch), "instruction 2 (SamplePerfectTile): sample_perfect_tile: decision factors of "
                                      "loop i multiply to 16, not its extent 32");
  sch_free(sch);
  /* Without decisions the same trace samples and applies. */
  sch = replayed(MM, t, 1, false);
  sch_free(sch);
  sch_trace_free(t);
  /* A trace expecting two loops where the block has three. */
  t = trace_of_json_text("[[[\"GetBlock\", [], [\"C\", \"main\"], [\"b0\"]], [\"GetLoops\", [\"b0\"], [], [\"l1\", \"l2\"]]], []]");
  sch = schedule_seeded(MM, 1);
  assert_int_equal(sch_trace_apply(sch, t, true), MLC_ESCHEDULE);
  assert_string_equal(sch_error(sch), "instruction 1 (GetLoops): get_loops: gives 3 results where the trace has 2");
  sch_free(sch);
  sch_trace_free(t);
  /* A primitive's precondition: split of a loop already split. */
  t = trace_of_json_text(
      "[[[\"GetBlock\", [], [\"C\", \"main\"], [\"b0\"]], [\"GetLoops\", [\"b0\"], [], [\"l1\", \"l2\", \"l3\"]],"
      " [\"Split\", [\"l1\", 8, 8], [1, 0], [\"l4\", \"l5\"]], [\"Split\", [\"l1\", 4, 16], [1, 0], [\"l6\", \"l7\"]]], []]");
  sch = schedule_seeded(MM, 1);
  assert_int_equal(sch_trace_apply(sch, t, true), MLC_ESCHEDULE);
  assert_non_null(strstr(sch_error(sch), "instruction 3 (Split): split: "));
  sch_free(sch);
  sch_trace_free(t);
}

/* ------------------------------------------------------------------------ */
/* with_decision and simplified                                              */
/* ------------------------------------------------------------------------ */

static int64_t loop_extent(sch_t *sch, sch_rv_t rv) {
  tir_stmt_t *loop;
  int64_t e = 0;
  OK(sch_get_loop_node(sch, rv, &loop));
  assert_true(tir_as_int(loop->u.loop.extent, &e));
  return e;
}

static void with_decision_changes_only_that_decision(void **state) {
  sch_trace_t *t = trace_of_json_text(TILED_JSON);
  sch_arg_t items[4] = {sch_arg_int(1), sch_arg_int(1), sch_arg_int(4), sch_arg_int(8)};
  sch_arg_t d = {SCH_ARG_LIST, {0}};
  d.u.list.n = 4;
  d.u.list.items = items;
  sch_trace_t *t2;
  OK(sch_trace_with_decision(&t2, t, 2, &d));
  char *a = json_text(t), *b = json_text(t2);
  assert_non_null(strstr(b, "[2, [1, 1, 4, 8]]"));
  assert_non_null(strstr(a, "[2, [2, 4, 4, 1]]")); /* the original is untouched */
  sch_t *sch = replayed(MM, t2, 1, true);
  const sch_rv_t *l;
  int n;
  sch_rv_t blk;
  OK(sch_get_block(sch, &blk, "C"));
  OK(sch_get_loops(sch, &l, &n, blk));
  /* fused(i0, j0) = 1 * 2, then i1 = 1, j1, k0, i2 = 4, j2, k1, i3 = 8, j3 */
  assert_int_equal(n, 9);
  assert_int_equal(loop_extent(sch, l[0]), 2);
  assert_int_equal(loop_extent(sch, l[1]), 1);
  assert_int_equal(loop_extent(sch, l[4]), 4);
  assert_int_equal(loop_extent(sch, l[7]), 8);
  free(a);
  free(b);
  sch_free(sch);
  sch_trace_free(t2);
  sch_trace_free(t);
}

static void with_decision_rejects_what_does_not_fit(void **state) {
  sch_trace_t *t = trace_of_json_text(TILED_JSON), *t2 = (sch_trace_t *)1;
  sch_arg_t one = sch_arg_int(1);
  assert_int_equal(sch_trace_with_decision(&t2, t, 3, &one), MLC_EINVAL);
  assert_null(t2);
  assert_string_equal(mlc_error_last(), "instruction 3 (Split): takes no decision");
  assert_int_equal(sch_trace_with_decision(&t2, t, 2, &one), MLC_EINVAL);
  assert_string_equal(mlc_error_last(), "instruction 2 (SamplePerfectTile): the decision must be a list of integers");
  sch_arg_t items[3] = {sch_arg_int(2), sch_arg_int(4), sch_arg_int(4)};
  sch_arg_t three = {SCH_ARG_LIST, {0}};
  three.u.list.n = 3;
  three.u.list.items = items;
  assert_int_equal(sch_trace_with_decision(&t2, t, 2, &three), MLC_EINVAL);
  assert_string_equal(mlc_error_last(), "instruction 2 (SamplePerfectTile): the decision has 3 factors, expected 4");
  assert_int_equal(sch_trace_with_decision(&t2, t, 15, &one), MLC_EINVAL);
  assert_int_equal(sch_trace_with_decision(&t2, t, -1, &one), MLC_EINVAL);
  OK(sch_trace_with_decision(&t2, t, 10, &one));
  sch_trace_free(t2);
  sch_trace_free(t);
}

static void simplified_drops_unused_pure_instructions_transitively(void **state) {
  sch_trace_t *t = trace_of_json_text(
      "[[[\"GetBlock\", [], [\"C\", \"main\"], [\"b0\"]],"
      " [\"GetBlock\", [], [\"C\", \"main\"], [\"b1\"]],"
      " [\"GetLoops\", [\"b1\"], [], [\"l2\", \"l3\", \"l4\"]],"
      " [\"GetLoops\", [\"b0\"], [], [\"l5\", \"l6\", \"l7\"]],"
      " [\"SamplePerfectTile\", [\"l5\"], [2, 64], [\"v8\", \"v9\"]],"
      " [\"SamplePerfectTile\", [\"l6\"], [2, 64], [\"v10\", \"v11\"]],"
      " [\"Split\", [\"l5\", \"v8\", \"v9\"], [1, 0], [\"l12\", \"l13\"]],"
      " [\"SampleCategorical\", [], [[1, 2], [0.5, 0.5]], [\"v14\"]],"
      " [\"EnterPostproc\", [], [], []]],"
      " [[4, [4, 8]], [5, [4, 8]], [7, 1]]]");
  sch_trace_t *s;
  OK(sch_trace_simplified(&s, t));
  char *json = json_text(s);
  assert_string_equal(json,
                      "[[[\"GetBlock\", [], [\"C\", \"main\"], [\"b0\"]], "
                      "[\"GetLoops\", [\"b0\"], [], [\"l1\", \"l2\", \"l3\"]], "
                      "[\"SamplePerfectTile\", [\"l1\"], [2, 64], [\"v4\", \"v5\"]], "
                      "[\"Split\", [\"l1\", \"v4\", \"v5\"], [1, 0], [\"l6\", \"l7\"]], "
                      "[\"EnterPostproc\", [], [], []]], "
                      "[[2, [4, 8]]]]");
  /* Same program either way. */
  sch_t *a = replayed(MM, t, 1, true), *b = replayed(MM, s, 1, true);
  assert_same_program(sch_func(a), sch_func(b));
  free(json);
  sch_free(a);
  sch_free(b);
  sch_trace_free(s);
  sch_trace_free(t);
}

/* Unlike TVM's Simplified, an RV used only inside a list input (cache_read's
 * consumer_blocks) keeps its definition. */
static void simplified_keeps_variables_used_inside_lists(void **state) {
  sch_t *sch = schedule_seeded(EW2, 1);
  sch_rv_t b, c, stage;
  OK(sch_get_block(sch, &b, "B"));
  OK(sch_get_block(sch, &c, "C"));
  OK(sch_cache_read(sch, &stage, c, 0, "local", &c, 1));
  sch_trace_t *s;
  OK(sch_trace_simplified(&s, sch_get_trace(sch)));
  char *json = json_text(s);
  assert_string_equal(json, "[[[\"GetBlock\", [], [\"C\", \"main\"], [\"b0\"]], "
                            "[\"CacheRead\", [\"b0\", [\"b0\"]], [0, \"local\"], [\"b1\"]]], []]");
  sch_t *again = replayed(EW2, s, 1, true);
  assert_same_program(sch_func(sch), sch_func(again));
  free(json);
  sch_free(again);
  sch_trace_free(s);
  sch_free(sch);
}

/* TVM's EnterPostprocTraits is not pure (kIsPure = false): it marks where
 * postprocessing starts and must survive simplification even if it ever
 * gets outputs. Lookups and sampling are pure. */
static void enter_postproc_is_not_pure(void **state) {
  (void)state;
  const sch_inst_kind_t *k = sch_inst_kind_find("EnterPostproc");
  assert_non_null(k);
  assert_false(k->is_pure);
  assert_true(sch_inst_kind_find("GetBlock")->is_pure);
  assert_true(sch_inst_kind_find("SampleCategorical")->is_pure);
  assert_false(sch_inst_kind_find("Split")->is_pure);
}

/* A kind's printer is given the decision and writes it last in the call;
 * without one it writes none. */
static void kind_printer_writes_the_decision_it_is_given(void **state) {
  (void)state;
  sch_trace_t *t = trace_of_json_text("[[[\"GetBlock\", [], [\"C\", \"main\"], [\"b0\"]],"
                                      " [\"GetLoops\", [\"b0\"], [], [\"l1\", \"l2\", \"l3\"]],"
                                      " [\"SamplePerfectTile\", [\"l1\"], [2, 64], [\"v4\", \"v5\"]]],"
                                      " [[2, [4, 8]]]]");
  const sch_inst_t *inst = &t->insts[2];
  const char *inputs[] = {"l1"}, *outputs[] = {"v4", "v5"};
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  inst->kind->to_python(&sb, inst, inputs, outputs, &t->decisions[2]);
  assert_string_equal(mlc_sb_str(&sb),
                      "v4, v5 = sch.sample_perfect_tile(loop=l1, n=2, max_innermost_factor=64, decision=[4, 8])");
  mlc_sb_reset(&sb);
  inst->kind->to_python(&sb, inst, inputs, outputs, NULL);
  assert_string_equal(mlc_sb_str(&sb), "v4, v5 = sch.sample_perfect_tile(loop=l1, n=2, max_innermost_factor=64)");
  mlc_sb_free(&sb);
  sch_trace_free(t);
}

/* ------------------------------------------------------------------------ */
/* Index maps                                                                */
/* ------------------------------------------------------------------------ */

static void transform_layout_replays_from_its_lambda_text(void **state) {
  static const char *py =
      "b0 = sch.get_block(name=\"B\", func_name=\"main\")\n"
      "sch.transform_layout(block=b0, buffer=(\"write\", 0), index_map=lambda i, j: (i // 16, j, i % 16,), "
      "pad_value=None)\n";
  sch_trace_t *t;
  OK(sch_trace_from_python(&t, py, strlen(py), "S.py"));
  char *back = sch_trace_to_python(t);
  assert_string_equal(back, py);
  char *json = json_text(t);
  assert_string_equal(json, "[[[\"GetBlock\", [], [\"B\", \"main\"], [\"b0\"]], "
                            "[\"TransformLayout\", [\"b0\"], [0, 1, \"lambda i, j: (i // 16, j, i % 16,)\"], []]], []]");
  sch_t *sch = replayed(EW2, t, 1, true);
  char *text = tir_print_func(sch_func(sch));
  assert_non_null(strstr(text, "T.alloc_buffer((4, 64, 16))"));
  mlc_free(text);
  tir_func_t *orig = st_parse(EW2);
  st_assert_same_outputs(orig, sch_func(sch), 2, 0.0);
  /* The replay recorded the same text again. */
  char *json2 = json_text(sch_get_trace(sch));
  assert_string_equal(json, json2);
  tir_func_free(orig);
  free(json);
  free(json2);
  mlc_free(back);
  sch_free(sch);
  sch_trace_free(t);
}

/* ------------------------------------------------------------------------ */
/* Malformed traces                                                          */
/* ------------------------------------------------------------------------ */

#define GB "[\"GetBlock\", [], [\"C\", \"main\"], [\"b0\"]]"
#define GL "[\"GetLoops\", [\"b0\"], [], [\"l1\", \"l2\", \"l3\"]]"

static void from_json_rejects_malformed_traces(void **state) {
  assert_json_rejected("{\"a\": 1}", "a trace should be [instructions, decisions]");
  assert_json_rejected("[[], [], []]", "a trace should be [instructions, decisions]");
  assert_json_rejected("[[[\"Frobnicate\", [], [], []]], []]", "instruction 0: unknown instruction kind \"Frobnicate\"");
  assert_json_rejected("[[[\"GetBlock\", [], [\"C\", \"main\"]]], []]",
                       "instruction 0: should be [kind, inputs, attrs, outputs]");
  assert_json_rejected("[[" GB ", [\"GetLoops\", [\"b0\", \"b0\"], [], [\"l1\"]]], []]",
                       "instruction 1 (GetLoops): has 2 inputs, which its layout (b) does not allow");
  assert_json_rejected("[[" GB ", [\"GetLoops\", [\"b9\"], [], [\"l1\"]]], []]",
                       "instruction 1 (GetLoops): random variable \"b9\" is not defined");
  assert_json_rejected("[[" GB ", " GL ", [\"GetLoops\", [\"l1\"], [], []]], []]",
                       "instruction 2 (GetLoops): input 0 should be a block random variable");
  assert_json_rejected("[[" GB ", " GL ", [\"Split\", [\"l1\", \"b0\"], [1, 0], [\"l4\"]]], []]",
                       "instruction 2 (Split): input 1 should be a factor");
  assert_json_rejected("[[" GB ", " GL ", [\"Split\", [\"l1\", 8, 8], [1, 0], [\"l4\"]]], []]",
                       "instruction 2 (Split): has 1 output, expected 2");
  assert_json_rejected("[[" GB ", " GL ", [\"Split\", [\"l1\", 8, 8], [1, 0, 0, 0], [\"l4\", \"l5\"]]], []]",
                       "instruction 2 (Split): has 4 attributes, expected 2");
  assert_json_rejected("[[" GB ", " GL ", [\"Split\", [\"l1\", 8, 8], [7, 0], [\"l4\", \"l5\"]]], []]",
                       "instruction 2 (Split): attribute 0 should be a bool");
  assert_json_rejected("[[" GB ", [\"GetBlock\", [], [\"C\", \"main\"], [\"b0\"]]], []]",
                       "instruction 1 (GetBlock): random variable \"b0\" is defined twice");
  assert_json_rejected("[[" GB ", " GL ", [\"SamplePerfectTile\", [\"l1\"], [2, 64], [\"v4\", \"v5\"]]], [[2, 3]]]",
                       "instruction 2 (SamplePerfectTile): the decision must be a list of integers");
  assert_json_rejected("[[" GB ", " GL ", [\"SamplePerfectTile\", [\"l1\"], [2, 64], [\"v4\", \"v5\"]]], "
                       "[[2, [1, 2, 32]]]]",
                       "instruction 2 (SamplePerfectTile): the decision has 3 factors, expected 2");
  assert_json_rejected("[[" GB "], [[0, 1]]]", "instruction 0 (GetBlock): takes no decision");
  assert_json_rejected("[[" GB "], [[5, 1]]]", "decision 0 names instruction 5, which does not exist");
  assert_json_rejected("[[" GB "], [[0, 1], [0, 2]]]", "instruction 0 has two decisions");
  assert_json_rejected("[[" GB "], [3]]", "decision 0 should be [instruction index, decision]");
  assert_json_rejected("[[[\"SampleCategorical\", [], [[1, 2], [0.5]], [\"v0\"]]], []]",
                       "instruction 0 (SampleCategorical): has 2 candidates but 1 probabilities");
  assert_json_rejected("[[[\"SampleCategorical\", [], [[1, 2], [0.5, \"x\"]], [\"v0\"]]], []]",
                       "instruction 0 (SampleCategorical): attribute 1 should be a list of numbers");
  assert_json_rejected("[[" GB ", [\"RFactor\", [\"b0\"], [0], [\"b1\"]]], []]",
                       "instruction 1 (RFactor): input 0 should be a loop random variable");
  assert_json_rejected("[[" GB ", " GL ", [\"RFactor\", [\"l1\"], [0, 1], [\"b4\"]]], []]",
                       "instruction 2 (RFactor): attribute 1 (a TVM option not supported here) must be its default");
  assert_json_rejected("[[" GB ", [\"TransformLayout\", [\"b0\"], [0, 1, \"{\\\"root\\\": 1}\", null], []]], []]",
                       "instruction 1 (TransformLayout): index maps in TVM's JSON-graph form are not supported");
}

static void from_python_errors_have_line_and_column(void **state) {
  assert_python_rejected("b0 = sch.get_block(name=\"C\")\nl1 = sch.frob(b0)\n", "S.py:2:10: unknown schedule method 'sch.frob'");
  assert_python_rejected("b0 = sch.get_block(nme=\"C\")\n", "S.py:1:20: sch.get_block() has no parameter 'nme'");
  assert_python_rejected("b0 = sch.get_block(name=\"C\")\nl1, l2 = sch.get_loops(block=b1)\n",
                         "S.py:2:30: name 'b1' is not defined");
  assert_python_rejected("b0 = sch.get_block(name=\"C\"\n", "S.py:2:1: expected ',' or ')'");
  assert_python_rejected("b0 = sch.get_block()\n", "S.py:1:20: sch.get_block() is missing 'name'");
  assert_python_rejected("b0 = sch.get_block(name=\"C\", name=\"D\")\n", "S.py:1:30: sch.get_block() got 'name' twice");
  assert_python_rejected("b0 = sch.get_block(name=\"C)\n", "S.py:1:25: unterminated string");
  assert_python_rejected("b0 = sch.get_block(name=\"C\")\nl1 = sch.get_loops(block=b0)\nsch.parallel(loop=b0)\n",
                         "S.py:3:19: loop should be a loop random variable");
  assert_python_rejected("b0 = sch.get_block(name=\"C\")\nl1, l2, l3 = sch.get_loops(block=b0)\n"
                         "v1, v2 = sch.sample_perfect_tile(loop=l1, n=3)\n",
                         "S.py:3:1: instruction 2 (SamplePerfectTile): has 2 outputs, expected 3");
  assert_python_rejected("x = 3\n", "S.py:1:5: expected a call sch.<method>(...)");
  assert_python_rejected("sch.get_block(name=\"C\") extra\n", "S.py:1:25: unexpected 'e' after the call");
  assert_python_rejected("v = sch.sample_categorical(candidates=[1, 2], probs=[0.5, 0.5], decision=[1])\n",
                         "S.py:1:74: decision should be an integer");
}

/* With allocation failing at every point in turn, the readers and printers
 * fail cleanly (MLC_ENOMEM / NULL) until they succeed; ASan sees no leak. */
static void readers_and_printers_survive_out_of_memory(void **state) {
  json_t *j = mlc_json_loads(TILED_JSON, "<test>");
  assert_non_null(j);
  int rc = MLC_ENOMEM;
  for (long n = 0; rc != MLC_OK; n++) {
    sch_trace_t *t = NULL;
    mlc_alloc_fail_after(n);
    rc = sch_trace_from_json(&t, j);
    mlc_alloc_fail_after(-1);
    assert_true(rc == MLC_OK || rc == MLC_ENOMEM);
    sch_trace_free(t);
  }
  json_decref(j);
  rc = MLC_ENOMEM;
  for (long n = 0; rc != MLC_OK; n++) {
    sch_trace_t *t = NULL;
    mlc_alloc_fail_after(n);
    rc = sch_trace_from_python(&t, TILED_PYTHON, strlen(TILED_PYTHON), "S.py");
    mlc_alloc_fail_after(-1);
    assert_true(rc == MLC_OK || rc == MLC_ENOMEM);
    sch_trace_free(t);
  }
  sch_trace_t *t = trace_of_json_text(TILED_JSON);
  char *py = NULL;
  for (long n = 0; !py; n++) {
    mlc_alloc_fail_after(n);
    py = sch_trace_to_python(t);
    json_t *out = NULL;
    rc = sch_trace_to_json(&out, t);
    mlc_alloc_fail_after(-1);
    assert_true(rc == MLC_OK || rc == MLC_ENOMEM);
    json_decref(out);
  }
  assert_string_equal(py, TILED_PYTHON);
  mlc_free(py);
  sch_trace_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(trace_json_is_tvm_layout_exactly),
      cmocka_unit_test(trace_json_round_trips),
      cmocka_unit_test(trace_python_is_what_tvm_prints),
      cmocka_unit_test(trace_python_parses_back_to_the_same_trace),
      cmocka_unit_test(python_form_accepts_tvm_print_and_hand_written_scripts),
      cmocka_unit_test(tvm_spelled_json_loads_and_replays),
      cmocka_unit_test(replay_with_decisions_reproduces_the_program_exactly),
      cmocka_unit_test(replay_without_decisions_samples_afresh),
      cmocka_unit_test(replay_errors_name_the_instruction),
      cmocka_unit_test(with_decision_changes_only_that_decision),
      cmocka_unit_test(with_decision_rejects_what_does_not_fit),
      cmocka_unit_test(simplified_drops_unused_pure_instructions_transitively),
      cmocka_unit_test(simplified_keeps_variables_used_inside_lists),
      cmocka_unit_test(enter_postproc_is_not_pure),
      cmocka_unit_test(kind_printer_writes_the_decision_it_is_given),
      cmocka_unit_test(transform_layout_replays_from_its_lambda_text),
      cmocka_unit_test(from_json_rejects_malformed_traces),
      cmocka_unit_test(from_python_errors_have_line_and_column),
      cmocka_unit_test(readers_and_printers_survive_out_of_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
