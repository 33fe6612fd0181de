/*
 * test_fuse_reorder.c - sch_fuse, sch_reorder and sch_add_unit_loop
 * (schedule/primitive/loop_transformation.c, loop_reorder.c): exact
 * TVMScript after fusing two and three loops, fusing split loops back,
 * reordering a matmul fully and partly, a hand-written SSRSRS multi-level
 * tiling, unit loops above blocks and loops; the interpreter giving the same
 * outputs; what is recorded; and one negative test per precondition (error
 * text, program and trace unchanged).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched_testing.h"

/* ------------------------------------------------------------------------ */
/* Programs                                                                  */
/* ------------------------------------------------------------------------ */

#define HEADER "# from tvm.script import tir as T\n\n@T.prim_func\n"
#define ROOT "    # with T.block(\"root\"):\n"

#define EW_SIG "def main(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128, 128), \"float32\")):\n"
#define EW_BODY                                   \
  "            T.reads(A[vi, vj])\n"              \
  "            T.writes(B[vi, vj])\n"             \
  "            B[vi, vj] = A[vi, vj] * T.float32(2)\n"

/* B = A * 2 over 128 x 128. */
static const char *EW =
    HEADER EW_SIG ROOT
    "    for i, j in T.grid(128, 128):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    EW_BODY;

#define EW3_SIG "def main(A: T.Buffer((16, 16, 16), \"float32\"), B: T.Buffer((16, 16, 16), \"float32\")):\n"
#define EW3_BODY                                  \
  "            T.reads(A[vi, vj, vk])\n"          \
  "            T.writes(B[vi, vj, vk])\n"         \
  "            B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)\n"

static const char *EW3 =
    HEADER EW3_SIG ROOT
    "    for i, j, k in T.grid(16, 16, 16):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSS\", [i, j, k])\n"
    EW3_BODY;

#define MM_SIG \
  "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\"), C: T.Buffer((32, 32), \"float32\")):\n"
#define MM_BODY                                   \
  "            T.reads(A[vi, vk], B[vk, vj])\n"   \
  "            T.writes(C[vi, vj])\n"             \
  "            with T.init():\n"                  \
  "                C[vi, vj] = T.float32(0)\n"    \
  "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n"
#define MM_REMAP "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"

/* C = A x B, 32 x 32 x 32. */
static const char *MATMUL =
    HEADER MM_SIG ROOT
    "    for i, j, k in T.grid(32, 32, 32):\n"
    "        with T.block(\"C\"):\n"
    MM_REMAP MM_BODY;

/* TVM's elementwise_with_seq: two loops k under j. */
static const char *WITH_SEQ =
    HEADER "def main(A: T.Buffer((16, 16, 16), \"float32\"), B: T.Buffer((16, 16, 16), \"float32\")):\n"
    "    C = T.alloc_buffer((16, 16, 16))\n"
    "    for i, j in T.grid(16, 16):\n"
    "        for k in range(16):\n"
    "            with T.block(\"C\"):\n"
    "                vi, vj, vk = T.axis.remap(\"SSS\", [i, j, k])\n"
    "                C[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)\n"
    "        for k in range(16):\n"
    "            with T.block(\"B\"):\n"
    "                vi, vj, vk = T.axis.remap(\"SSS\", [i, j, k])\n"
    "                B[vi, vj, vk] = C[vi, vj, vk] * T.float32(2)\n";

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static const sch_rv_t *loops_of(sch_t *sch, const char *name, int expect_n) {
  sch_rv_t block;
  const sch_rv_t *loops;
  int n;
  assert_int_equal(sch_get_block(sch, &block, name), MLC_OK);
  assert_int_equal(sch_get_loops(sch, &loops, &n, block), MLC_OK);
  assert_int_equal(n, expect_n);
  return loops;
}

static sch_rv_t fuse_ok(sch_t *sch, const sch_rv_t *loops, int n, bool preserve) {
  sch_rv_t out = SCH_RV_NONE;
  int rc = sch_fuse(sch, &out, loops, n, preserve);
  if (rc != MLC_OK) fprintf(stderr, "fuse: %s\n", sch_error(sch));
  assert_int_equal(rc, MLC_OK);
  return out;
}

static void reorder_ok(sch_t *sch, const sch_rv_t *loops, int n) {
  int rc = sch_reorder(sch, loops, n);
  if (rc != MLC_OK) fprintf(stderr, "reorder: %s\n", sch_error(sch));
  assert_int_equal(rc, MLC_OK);
}

static const sch_rv_t *split_ok(sch_t *sch, sch_rv_t loop, const int64_t *factors, int n) {
  sch_arg_t args[8];
  for (int k = 0; k < n; k++) args[k] = factors[k] < 0 ? sch_arg_none() : sch_arg_int(factors[k]);
  const sch_rv_t *out = NULL;
  int rc = sch_split(sch, &out, loop, args, n, true);
  if (rc != MLC_OK) fprintf(stderr, "split: %s\n", sch_error(sch));
  assert_int_equal(rc, MLC_OK);
  return out;
}

static const sch_inst_t *last_inst(sch_t *sch) {
  const sch_trace_t *t = sch_get_trace(sch);
  assert_true(t->n > 0);
  return &t->insts[t->n - 1];
}

/* Remembers the program and trace length before a call expected to fail. */
typedef struct {
  char *text;
  int ninsts;
} before_t;

static before_t snapshot(sch_t *sch) {
  before_t b = {tir_print_func(sch_func(sch)), sch_get_trace(sch)->n};
  return b;
}

static void assert_failed(sch_t *sch, before_t *b, int rc, const char *needle) {
  st_assert_fails(sch, rc, needle, b->text);
  assert_int_equal(sch_get_trace(sch)->n, b->ninsts);
  mlc_free(b->text);
}

/* ------------------------------------------------------------------------ */
/* fuse                                                                      */
/* ------------------------------------------------------------------------ */

static void fuse_two_loops(void **state) {
  sch_t *sch = st_schedule(EW);
  const sch_rv_t *loops = loops_of(sch, "B", 2);
  sch_rv_t fused = fuse_ok(sch, loops, 2, true);
  st_check(sch, EW,
           HEADER EW_SIG ROOT
           "    for i_j_fused in range(16384):\n"
           "        with T.block(\"B\"):\n"
           "            vi = T.axis.spatial(128, i_j_fused // 128)\n"
           "            vj = T.axis.spatial(128, i_j_fused % 128)\n"
           EW_BODY);
  const sch_inst_t *inst = last_inst(sch);
  assert_ptr_equal(inst->kind, sch_inst_kind_find("Fuse"));
  assert_int_equal(inst->ninputs, 2);
  assert_int_equal(inst->inputs[0].u.rv, loops[0]);
  assert_int_equal(inst->inputs[1].u.rv, loops[1]);
  assert_int_equal(inst->nattrs, 1);
  assert_int_equal(inst->attrs[0].u.i, 1);
  assert_int_equal(inst->noutputs, 1);
  assert_int_equal(inst->outputs[0], fused);
  assert_int_equal(loops_of(sch, "B", 1)[0] >= 0, 1);
  sch_free(sch);
}

/* TVM's elementwise_fused: the middle loop is `f % (16 * 16) // 16`. */
static void fuse_three_loops(void **state) {
  sch_t *sch = st_schedule(EW3);
  const sch_rv_t *loops = loops_of(sch, "B", 3);
  fuse_ok(sch, loops, 3, true);
  st_check(sch, EW3,
           HEADER EW3_SIG ROOT
           "    for i_j_k_fused in range(4096):\n"
           "        with T.block(\"B\"):\n"
           "            vi = T.axis.spatial(16, i_j_k_fused // 256)\n"
           "            vj = T.axis.spatial(16, i_j_k_fused % 256 // 16)\n"
           "            vk = T.axis.spatial(16, i_j_k_fused % 16)\n"
           EW3_BODY);
  sch_free(sch);
}

/* Fusing the inner half of a split with the next loop. */
static void fuse_split_inner_loop_with_next(void **state) {
  sch_t *sch = st_schedule(EW);
  const sch_rv_t *loops = loops_of(sch, "B", 2);
  int64_t f[] = {-1, 16};
  const sch_rv_t *out = split_ok(sch, loops[0], f, 2);
  sch_rv_t pair[] = {out[1], loops[1]};
  fuse_ok(sch, pair, 2, true);
  st_check(sch, EW,
           HEADER EW_SIG ROOT
           "    for i_0, i_1_j_fused in T.grid(8, 2048):\n"
           "        with T.block(\"B\"):\n"
           "            vi = T.axis.spatial(128, i_0 * 16 + i_1_j_fused // 128)\n"
           "            vj = T.axis.spatial(128, i_1_j_fused % 128)\n"
           EW_BODY);
  sch_free(sch);
}

/* Fusing the two halves of a split gives the plain loop back (a unit outer
 * loop contributes 0). */
static void fuse_undoes_a_split(void **state) {
  sch_t *sch = st_schedule(EW);
  const sch_rv_t *loops = loops_of(sch, "B", 2);
  int64_t f[] = {1, 128};
  const sch_rv_t *out = split_ok(sch, loops[0], f, 2);
  fuse_ok(sch, out, 2, true);
  st_check(sch, EW,
           HEADER EW_SIG ROOT
           "    for i_0_i_1_fused, j in T.grid(128, 128):\n"
           "        with T.block(\"B\"):\n"
           "            vi, vj = T.axis.remap(\"SS\", [i_0_i_1_fused, j])\n"
           EW_BODY);
  sch_free(sch);
}

static void fuse_one_loop_renames_it(void **state) {
  sch_t *sch = st_schedule(EW);
  const sch_rv_t *loops = loops_of(sch, "B", 2);
  fuse_ok(sch, &loops[1], 1, true);
  st_check(sch, EW,
           HEADER EW_SIG ROOT
           "    for i, j_fused in T.grid(128, 128):\n"
           "        with T.block(\"B\"):\n"
           "            vi, vj = T.axis.remap(\"SS\", [i, j_fused])\n"
           EW_BODY);
  sch_free(sch);
}

static void fuse_rejects_loops_that_are_not_parent_and_child(void **state) {
  sch_t *sch = st_schedule(EW3);
  const sch_rv_t *loops = loops_of(sch, "B", 3);
  sch_rv_t ik[] = {loops[0], loops[2]}, ji[] = {loops[1], loops[0]};
  sch_rv_t out;
  before_t b = snapshot(sch);
  assert_failed(sch, &b, sch_fuse(sch, &out, ik, 2, true), "fuse: loops i and k are not adjacent (i is not the parent of k)");
  b = snapshot(sch);
  assert_failed(sch, &b, sch_fuse(sch, &out, ji, 2, true), "fuse: loops j and i are not adjacent (j is not the parent of i)");
  assert_int_equal(out, SCH_RV_NONE);
  sch_free(sch);
}

static void fuse_rejects_loop_with_siblings(void **state) {
  sch_t *sch = st_schedule(WITH_SEQ);
  const sch_rv_t *loops = loops_of(sch, "B", 3);
  sch_rv_t jk[] = {loops[1], loops[2]};
  sch_rv_t out;
  before_t b = snapshot(sch);
  assert_failed(sch, &b, sch_fuse(sch, &out, jk, 2, true), "fuse: loops j and k are not adjacent (k is not the only child of j)");
  sch_free(sch);
}

static void fuse_rejects_annotated_thread_bound_and_offset_loops(void **state) {
  static const char *src =
      HEADER EW3_SIG
      "    for i in T.serial(16, annotations={\"useless\": 1}):\n"
      "        for j in T.thread_binding(16, thread=\"threadIdx.x\"):\n"
      "            for k in range(0, 16):\n"
      "                for l in range(2, 3):\n"
      "                    with T.block(\"B\"):\n"
      "                        vi, vj, vk = T.axis.remap(\"SSS\", [i, j, k])\n"
      "                        B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)\n";
  sch_t *sch = st_schedule(src);
  const sch_rv_t *loops = loops_of(sch, "B", 4);
  sch_rv_t out;
  before_t b = snapshot(sch);
  assert_failed(sch, &b, sch_fuse(sch, &out, &loops[0], 2, true), "fuse: loop i has annotations");
  b = snapshot(sch);
  assert_failed(sch, &b, sch_fuse(sch, &out, &loops[1], 2, true), "fuse: loop j is bound to threadIdx.x");
  b = snapshot(sch);
  assert_failed(sch, &b, sch_fuse(sch, &out, &loops[2], 2, true), "fuse: loop l does not start at 0");
  sch_free(sch);
}

/* TVM's elementwise_dependent_loops. */
static void fuse_rejects_extent_depending_on_fused_loop(void **state) {
  static const char *src =
      HEADER EW3_SIG
      "    for i in range(16):\n"
      "        for j, k in T.grid(i, 16):\n"
      "            with T.block(\"B\"):\n"
      "                vi = T.axis.spatial(16, i)\n"
      "                vj = T.axis.spatial(i, j)\n"
      "                vk = T.axis.spatial(16, k)\n"
      "                B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)\n";
  sch_t *sch = st_schedule(src);
  const sch_rv_t *loops = loops_of(sch, "B", 3);
  sch_rv_t out;
  before_t b = snapshot(sch);
  assert_failed(sch, &b, sch_fuse(sch, &out, loops, 2, true), "fuse: the extent of loop j depends on loop i");
  b = snapshot(sch);
  assert_failed(sch, &b, sch_fuse(sch, &out, loops, 0, true), "fuse: no loops given");
  sch_free(sch);
}

/* ------------------------------------------------------------------------ */
/* reorder                                                                   */
/* ------------------------------------------------------------------------ */

static void reorder_matmul_reduction_loop_outermost(void **state) {
  sch_t *sch = st_schedule(MATMUL);
  const sch_rv_t *loops = loops_of(sch, "C", 3);
  sch_rv_t order[] = {loops[2], loops[0], loops[1]};
  reorder_ok(sch, order, 3);
  st_check(sch, MATMUL,
           HEADER MM_SIG ROOT
           "    for k, i, j in T.grid(32, 32, 32):\n"
           "        with T.block(\"C\"):\n"
           MM_REMAP MM_BODY);
  const sch_inst_t *inst = last_inst(sch);
  assert_ptr_equal(inst->kind, sch_inst_kind_find("Reorder"));
  assert_int_equal(inst->ninputs, 3);
  assert_int_equal(inst->inputs[0].u.rv, loops[2]);
  assert_int_equal(inst->nattrs, 0);
  assert_int_equal(inst->noutputs, 0);
  /* The loop RVs follow their loops. */
  const sch_rv_t *now = loops_of(sch, "C", 3);
  tir_stmt_t *a, *b;
  assert_int_equal(sch_get_loop_node(sch, now[0], &a), MLC_OK);
  assert_int_equal(sch_get_loop_node(sch, loops[2], &b), MLC_OK);
  assert_ptr_equal(a, b);
  sch_free(sch);
}

/* Only the given places are permuted: reorder(k, j) swaps j and k. */
static void reorder_partial_swaps_given_loops(void **state) {
  sch_t *sch = st_schedule(MATMUL);
  const sch_rv_t *loops = loops_of(sch, "C", 3);
  sch_rv_t order[] = {loops[2], loops[1]};
  reorder_ok(sch, order, 2);
  st_check(sch, MATMUL,
           HEADER MM_SIG ROOT
           "    for i, k, j in T.grid(32, 32, 32):\n"
           "        with T.block(\"C\"):\n"
           MM_REMAP MM_BODY);
  sch_free(sch);
}

/* TVM's test_reorder: reorder(k, i) leaves j where it is. */
static void reorder_keeps_loops_not_given_in_place(void **state) {
  sch_t *sch = st_schedule(EW3);
  const sch_rv_t *loops = loops_of(sch, "B", 3);
  sch_rv_t order[] = {loops[2], loops[0]};
  reorder_ok(sch, order, 2);
  st_check(sch, EW3,
           HEADER EW3_SIG ROOT
           "    for k, j, i in T.grid(16, 16, 16):\n"
           "        with T.block(\"B\"):\n"
           "            vi, vj, vk = T.axis.remap(\"SSS\", [i, j, k])\n"
           EW3_BODY);
  sch_free(sch);
}

/* The multi-level tiling MetaSchedule applies on CPU (SSRSRS), by hand:
 * i and j split in four, k in two, then interleaved. */
static void matmul_multi_level_tiling_ssrsrs(void **state) {
  sch_t *sch = st_schedule(MATMUL);
  const sch_rv_t *loops = loops_of(sch, "C", 3);
  int64_t fi[] = {2, 2, 4, 2}, fj[] = {2, 4, 2, 2}, fk[] = {4, 8};
  const sch_rv_t *i = split_ok(sch, loops[0], fi, 4);
  const sch_rv_t *j = split_ok(sch, loops[1], fj, 4);
  const sch_rv_t *k = split_ok(sch, loops[2], fk, 2);
  sch_rv_t order[] = {i[0], j[0], i[1], j[1], k[0], i[2], j[2], k[1], i[3], j[3]};
  reorder_ok(sch, order, 10);
  st_check(sch, MATMUL,
           HEADER MM_SIG ROOT
           "    for i_0, j_0, i_1, j_1, k_0, i_2, j_2, k_1, i_3, j_3 in T.grid(2, 2, 2, 4, 4, 4, 2, 8, 2, 2):\n"
           "        with T.block(\"C\"):\n"
           "            vi = T.axis.spatial(32, i_0 * 16 + i_1 * 8 + i_2 * 2 + i_3)\n"
           "            vj = T.axis.spatial(32, j_0 * 16 + j_1 * 4 + j_2 * 2 + j_3)\n"
           "            vk = T.axis.reduce(32, k_0 * 8 + k_1)\n"
           MM_BODY);
  sch_free(sch);
}

/* The same tiling with sampled tile sizes, then a fuse and a unit loop: the
 * recorded trace, through its JSON, replays to the same program. */
static void tiling_trace_replays_through_json(void **state) {
  sch_t *sch = st_schedule(MATMUL);
  const sch_rv_t *loops = loops_of(sch, "C", 3);
  const sch_rv_t *ti, *tj, *i, *j, *k;
  int64_t di[] = {2, 2, 4, 2}, dj[] = {2, 4, 2, 2};
  assert_int_equal(sch_sample_perfect_tile(sch, &ti, loops[0], 4, 16, di), MLC_OK);
  assert_int_equal(sch_sample_perfect_tile(sch, &tj, loops[1], 4, 16, dj), MLC_OK);
  sch_arg_t fi[4], fj[4], fk[] = {sch_arg_none(), sch_arg_int(8)};
  for (int n = 0; n < 4; n++) fi[n] = sch_arg_rv(ti[n]), fj[n] = sch_arg_rv(tj[n]);
  assert_int_equal(sch_split(sch, &i, loops[0], fi, 4, true), MLC_OK);
  assert_int_equal(sch_split(sch, &j, loops[1], fj, 4, true), MLC_OK);
  assert_int_equal(sch_split(sch, &k, loops[2], fk, 2, true), MLC_OK);
  sch_rv_t order[] = {i[0], j[0], i[1], j[1], k[0], i[2], j[2], k[1], i[3], j[3]};
  reorder_ok(sch, order, 10);
  sch_rv_t outer[] = {i[0], j[0]}, unit, block;
  fuse_ok(sch, outer, 2, true);
  assert_int_equal(sch_get_block(sch, &block, "C"), MLC_OK);
  assert_int_equal(sch_add_unit_loop(sch, &unit, block), MLC_OK);
  char *want = tir_print_func(sch_func(sch));

  json_t *json = NULL;
  sch_trace_t *back = NULL;
  assert_int_equal(sch_trace_to_json(&json, sch_get_trace(sch)), MLC_OK);
  assert_int_equal(sch_trace_from_json(&back, json), MLC_OK);
  sch_t *fresh = st_schedule(MATMUL);
  int rc = sch_trace_apply(fresh, back, true);
  if (rc != MLC_OK) fprintf(stderr, "replay: %s\n", sch_error(fresh));
  assert_int_equal(rc, MLC_OK);
  st_assert_script(sch_func(fresh), want);
  st_check(fresh, MATMUL, want);
  json_decref(json);
  sch_trace_free(back);
  mlc_free(want);
  sch_free(fresh);
  sch_free(sch);
}

/* TVM's test_reorder_with_partial_affineness: `v0 * v0 + v1` is not affine
 * in v0, so v0 cannot move, but the loops below it can. */
static void reorder_needs_affinity_only_below_the_top_loop(void **state) {
  static const char *sig = "def main(A: T.Buffer((14, 4), \"float32\"), B: T.Buffer((14, 4), \"float32\")):\n";
  static const char *tail =
      "        with T.block(\"block\"):\n"
      "            i = T.axis.spatial(14, v0 * v0 + v1)\n"
      "            j = T.axis.spatial(4, v2)\n"
      "            T.reads(A[i, j])\n"
      "            T.writes(B[i, j])\n"
      "            B[i, j] = A[i, j] + T.float32(1)\n";
  char src[2048], want[2048];
  snprintf(src, sizeof src, "%s%s%s    for v0, v1, v2 in T.grid(3, 4, 4):\n%s", HEADER, sig, ROOT, tail);
  snprintf(want, sizeof want, "%s%s%s    for v0, v2, v1 in T.grid(3, 4, 4):\n%s", HEADER, sig, ROOT, tail);
  sch_t *sch = st_schedule(src);
  const sch_rv_t *loops = loops_of(sch, "block", 3);
  sch_rv_t all[] = {loops[0], loops[2], loops[1]};
  before_t b = snapshot(sch);
  assert_failed(sch, &b, sch_reorder(sch, all, 3), "reorder: block block does not have an affine binding under loop v0");
  sch_rv_t inner[] = {loops[2], loops[1]};
  reorder_ok(sch, inner, 2);
  st_check(sch, src, want);
  sch_free(sch);
}

static void reorder_of_one_loop_is_recorded_no_op(void **state) {
  sch_t *sch = st_schedule(MATMUL);
  const sch_rv_t *loops = loops_of(sch, "C", 3);
  int n = sch_get_trace(sch)->n;
  reorder_ok(sch, &loops[1], 1);
  st_assert_script(sch_func(sch), MATMUL);
  assert_int_equal(sch_get_trace(sch)->n, n + 1);
  sch_free(sch);
}

static void reorder_rejects_loop_given_twice(void **state) {
  sch_t *sch = st_schedule(EW3);
  const sch_rv_t *loops = loops_of(sch, "B", 3);
  sch_rv_t order[] = {loops[2], loops[0], loops[0]};
  before_t b = snapshot(sch);
  assert_failed(sch, &b, sch_reorder(sch, order, 3), "reorder: loop i given twice");
  sch_free(sch);
}

static void reorder_rejects_loops_on_different_branches(void **state) {
  sch_t *sch = st_schedule(WITH_SEQ);
  const sch_rv_t *kb = loops_of(sch, "B", 3);
  const sch_rv_t *kc = loops_of(sch, "C", 3);
  sch_rv_t order[] = {kb[2], kb[0], kc[2]};
  before_t b = snapshot(sch);
  assert_failed(sch, &b, sch_reorder(sch, order, 3), "are not in one chain");
  /* k of B and i: the chain i -> j -> k is broken by j's two children. */
  sch_rv_t ki[] = {kb[2], kb[0]};
  b = snapshot(sch);
  assert_failed(sch, &b, sch_reorder(sch, ki, 2),
                "reorder: loops i and k are not in one chain (the body of loop j is not a single loop)");
  sch_free(sch);
}

/* TVM's elementwise_with_loops_not_same_scope. */
static void reorder_rejects_loops_of_different_scopes(void **state) {
  static const char *src =
      HEADER EW3_SIG
      "    for i, j in T.grid(16, 16):\n"
      "        with T.block(\"A\"):\n"
      "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
      "            for k in range(16):\n"
      "                with T.block(\"B\"):\n"
      "                    vk = T.axis.spatial(16, k)\n"
      "                    T.reads(A[vi, vj, vk])\n"
      "                    T.writes(B[vi, vj, vk])\n"
      "                    B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)\n";
  sch_t *sch = st_schedule(src);
  const sch_rv_t *ij = loops_of(sch, "A", 2);
  const sch_rv_t *k = loops_of(sch, "B", 1); /* get_loops stops at block A */
  sch_rv_t order[] = {k[0], ij[0]};
  before_t b = snapshot(sch);
  assert_failed(sch, &b, sch_reorder(sch, order, 2),
                "reorder: loops i and k are not in the same block scope (block A is between them)");
  sch_free(sch);
}

static void reorder_rejects_scan_iter_var(void **state) {
  static const char *src =
      HEADER EW3_SIG
      "    for i, j, k in T.grid(16, 16, 16):\n"
      "        with T.block(\"B\"):\n"
      "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
      "            vk = T.axis.scan(16, k)\n"
      "            B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)\n";
  sch_t *sch = st_schedule(src);
  const sch_rv_t *loops = loops_of(sch, "B", 3);
  sch_rv_t order[] = {loops[2], loops[0]};
  before_t b = snapshot(sch);
  assert_failed(sch, &b, sch_reorder(sch, order, 2), "reorder: block B has iter var vk of type scan, not spatial or reduce");
  sch_free(sch);
}

/* TVM's elementwise_not_affine (`l * 16`) and elementwise_predicate (a
 * predicate that couples all loops). */
static void reorder_rejects_non_affine_bindings(void **state) {
  static const char *scaled =
      HEADER "def main(A: T.Buffer((8, 8, 8, 128), \"float32\"), B: T.Buffer((8, 8, 8, 128), \"float32\")):\n"
      "    for i, j, k, l in T.grid(8, 8, 8, 8):\n"
      "        with T.block(\"B\"):\n"
      "            vi, vj, vk = T.axis.remap(\"SSS\", [i, j, k])\n"
      "            vl = T.axis.spatial(128, l * 16)\n"
      "            B[vi, vj, vk, vl] = A[vi, vj, vk, vl] * T.float32(2)\n";
  static const char *coupled =
      HEADER "def main(A: T.Buffer((8, 8, 8, 8), \"float32\"), B: T.Buffer((8, 8, 8, 8), \"float32\")):\n"
      "    for i, j, k, l in T.grid(8, 8, 8, 8):\n"
      "        with T.block(\"B\"):\n"
      "            T.where(i * 512 + j * 64 + k * 8 + l < 100)\n"
      "            vi, vj, vk, vl = T.axis.remap(\"SSSS\", [i, j, k, l])\n"
      "            B[vi, vj, vk, vl] = A[vi, vj, vk, vl] * T.float32(2)\n";
  const char *srcs[] = {scaled, coupled};
  for (int s = 0; s < 2; s++) {
    sch_t *sch = st_schedule(srcs[s]);
    const sch_rv_t *loops = loops_of(sch, "B", 4);
    sch_rv_t order[] = {loops[3], loops[0]};
    before_t b = snapshot(sch);
    assert_failed(sch, &b, sch_reorder(sch, order, 2), "reorder: block B does not have an affine binding under loop i");
    sch_free(sch);
  }
}

/* TVM's elementwise_dependent_loop: k's extent is i, so moving i inside k is
 * wrong. With iter vars, the block's bindings are not affine either (a loop
 * range using another loop), which is checked first, as in TVM; an opaque
 * block has no bindings to check and meets the dependence check. */
/* A fused `j, k` loop split by 3 (not dividing 32): both parts feed the
 * spatial vj and the reduction vk. */
static const char *const MIXED_REDUCTION =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 16), \"float32\"), B: T.Buffer((16, 2), \"float32\"), C: T.Buffer((4, 2), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i, f in T.grid(4, 32):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(4, i)\n"
    "            vj = T.axis.spatial(2, f // 16)\n"
    "            vk = T.axis.reduce(16, f % 16)\n"
    "            T.reads(A[vi, vk], B[vk, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

static const char *const EXP_MIXED_SPATIAL_OUTSIDE =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 16), \"float32\"), B: T.Buffer((16, 2), \"float32\"), C: T.Buffer((4, 2), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for f_0, i, f_1 in T.grid(11, 4, 3):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(4, i)\n"
    "            vj = T.axis.spatial(2, (f_0 * 3 + f_1) // 16)\n"
    "            vk = T.axis.reduce(16, (f_0 * 3 + f_1) % 16)\n"
    "            T.where(f_0 * 3 + f_1 < 32)\n"
    "            T.reads(A[vi, vk], B[vk, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

static void reorder_rejects_swapping_loops_that_feed_both_spatial_and_reduction(void **state) {
  (void)state;
  /* f_1 outside f_0 visits (vj, vk = 3) before (vj, vk = 0), whose init
   * would then discard it. */
  sch_t *sch = st_schedule(MIXED_REDUCTION);
  const sch_rv_t *l = loops_of(sch, "C", 2);
  sch_rv_t i = l[0];
  static const int64_t by3[] = {-1, 3};
  const sch_rv_t *f = split_ok(sch, l[1], by3, 2);
  before_t b = snapshot(sch);
  sch_rv_t swap[2] = {f[1], f[0]};
  assert_failed(sch, &b, sch_reorder(sch, swap, 2),
                "reorder: loops f_0 and f_1 both feed spatial and reduction iter vars of block C; swapping them "
                "would run its init after some of its updates");
  /* A loop that feeds only spatial iter vars may cross them. */
  sch_rv_t fi[2] = {f[0], i};
  reorder_ok(sch, fi, 2);
  st_check(sch, MIXED_REDUCTION, EXP_MIXED_SPATIAL_OUTSIDE);
  sch_free(sch);
}

#define DEP_HEAD                                                                                               \
  HEADER "def main(A: T.Buffer((8, 8, 8, 8), \"float32\"), B: T.Buffer((8, 8, 8, 8), \"float32\")):\n"       \
  "    for i in range(8):\n"                                                                                    \
  "        for j, k, l in T.grid(8, i, 8):\n"                                                                   \
  "            with T.block(\"B\"):\n"

static void reorder_rejects_range_depending_on_inner_loop(void **state) {
  static const char *with_iters =
      DEP_HEAD
      "                vi, vj, vk, vl = T.axis.remap(\"SSSS\", [i, j, k, l])\n"
      "                B[vi, vj, vk, vl] = A[vi, vj, vk, vl] * T.float32(2)\n";
  static const char *opaque =
      DEP_HEAD
      "                B[i, j, k, l] = A[i, j, k, l] * T.float32(2)\n";
  const char *srcs[] = {with_iters, opaque};
  const char *errors[] = {"reorder: block B does not have an affine binding under loop i",
                          "reorder: the extent of loop k depends on loop i, which would be inside it"};
  for (int s = 0; s < 2; s++) {
    sch_t *sch = st_schedule(srcs[s]);
    const sch_rv_t *loops = loops_of(sch, "B", 4);
    sch_rv_t order[] = {loops[3], loops[0]};
    before_t b = snapshot(sch);
    assert_failed(sch, &b, sch_reorder(sch, order, 2), errors[s]);
    sch_free(sch);
  }
}

/* ------------------------------------------------------------------------ */
/* add_unit_loop                                                             */
/* ------------------------------------------------------------------------ */

static void add_unit_loop_above_block(void **state) {
  sch_t *sch = st_schedule(EW);
  sch_rv_t block, loop;
  assert_int_equal(sch_get_block(sch, &block, "B"), MLC_OK);
  assert_int_equal(sch_add_unit_loop(sch, &loop, block), MLC_OK);
  st_check(sch, EW,
           HEADER EW_SIG ROOT
           "    for i, j, u in T.grid(128, 128, 1):\n"
           "        with T.block(\"B\"):\n"
           "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
           EW_BODY);
  const sch_inst_t *inst = last_inst(sch);
  assert_ptr_equal(inst->kind, sch_inst_kind_find("AddUnitLoop"));
  assert_int_equal(inst->inputs[0].u.rv, block);
  assert_int_equal(inst->outputs[0], loop);
  assert_int_equal(loops_of(sch, "B", 3)[2] >= 0, 1);
  sch_free(sch);
}

static void add_unit_loop_above_loop(void **state) {
  sch_t *sch = st_schedule(EW);
  const sch_rv_t *loops = loops_of(sch, "B", 2);
  sch_rv_t loop;
  assert_int_equal(sch_add_unit_loop(sch, &loop, loops[0]), MLC_OK);
  st_check(sch, EW,
           HEADER EW_SIG ROOT
           "    for u, i, j in T.grid(1, 128, 128):\n"
           "        with T.block(\"B\"):\n"
           "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
           EW_BODY);
  tir_stmt_t *node;
  assert_int_equal(sch_get_loop_node(sch, loop, &node), MLC_OK);
  assert_true(tir_is_const_int(node->u.loop.extent, 1));
  sch_free(sch);
}

static void add_unit_loop_rejects_root_block(void **state) {
  sch_t *sch = st_schedule(EW);
  sch_rv_t root = sch_rv_for_block(sch, tir_func_root_block(sch_func(sch)));
  sch_rv_t loop;
  before_t b = snapshot(sch);
  assert_failed(sch, &b, sch_add_unit_loop(sch, &loop, root), "add_unit_loop: cannot add a loop above the root block root");
  assert_int_equal(loop, SCH_RV_NONE);
  sch_free(sch);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fuse_two_loops),
      cmocka_unit_test(fuse_three_loops),
      cmocka_unit_test(fuse_split_inner_loop_with_next),
      cmocka_unit_test(fuse_undoes_a_split),
      cmocka_unit_test(fuse_one_loop_renames_it),
      cmocka_unit_test(fuse_rejects_loops_that_are_not_parent_and_child),
      cmocka_unit_test(fuse_rejects_loop_with_siblings),
      cmocka_unit_test(fuse_rejects_annotated_thread_bound_and_offset_loops),
      cmocka_unit_test(fuse_rejects_extent_depending_on_fused_loop),
      cmocka_unit_test(reorder_matmul_reduction_loop_outermost),
      cmocka_unit_test(reorder_partial_swaps_given_loops),
      cmocka_unit_test(reorder_keeps_loops_not_given_in_place),
      cmocka_unit_test(matmul_multi_level_tiling_ssrsrs),
      cmocka_unit_test(tiling_trace_replays_through_json),
      cmocka_unit_test(reorder_needs_affinity_only_below_the_top_loop),
      cmocka_unit_test(reorder_of_one_loop_is_recorded_no_op),
      cmocka_unit_test(reorder_rejects_loop_given_twice),
      cmocka_unit_test(reorder_rejects_loops_on_different_branches),
      cmocka_unit_test(reorder_rejects_loops_of_different_scopes),
      cmocka_unit_test(reorder_rejects_scan_iter_var),
      cmocka_unit_test(reorder_rejects_non_affine_bindings),
      cmocka_unit_test(reorder_rejects_range_depending_on_inner_loop),
      cmocka_unit_test(reorder_rejects_swapping_loops_that_feed_both_spatial_and_reduction),
      cmocka_unit_test(add_unit_loop_above_block),
      cmocka_unit_test(add_unit_loop_above_loop),
      cmocka_unit_test(add_unit_loop_rejects_root_block),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
