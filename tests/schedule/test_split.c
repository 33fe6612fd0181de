/*
 * test_split.c - sch_split (schedule/primitive/loop_transformation.c): exact
 * TVMScript after each split (divisible, inferred, overshooting with a
 * T.where, several ways, unit factors kept or dropped, sampled factors,
 * opaque blocks), the interpreter giving the same outputs, what is recorded
 * in the trace, and one negative test per precondition (error text, program
 * and trace unchanged).
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
#define EW_SIG "def main(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128, 128), \"float32\")):\n"
#define ROOT "    # with T.block(\"root\"):\n"
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

/* The same with i split: `for <grid>:` then the two iter var lines. */
#define EW_SPLIT(grid, vi, vj)                     \
  HEADER EW_SIG ROOT                               \
  "    for " grid ":\n"                            \
  "        with T.block(\"B\"):\n"                 \
  "            vi = T.axis.spatial(128, " vi ")\n" \
  "            vj = T.axis.spatial(128, " vj ")\n"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

/* The loops above block `name`, outermost first (n of them). */
static const sch_rv_t *loops_of(sch_t *sch, const char *name, int expect_n) {
  sch_rv_t block;
  const sch_rv_t *loops;
  int n;
  assert_int_equal(sch_get_block(sch, &block, name), MLC_OK);
  assert_int_equal(sch_get_loops(sch, &loops, &n, block), MLC_OK);
  assert_int_equal(n, expect_n);
  return loops;
}

static const sch_rv_t *split_ok(sch_t *sch, sch_rv_t loop, const sch_arg_t *factors, int n, bool preserve) {
  const sch_rv_t *out = NULL;
  int rc = sch_split(sch, &out, loop, factors, n, preserve);
  if (rc != MLC_OK) fprintf(stderr, "split: %s\n", sch_error(sch));
  assert_int_equal(rc, MLC_OK);
  assert_non_null(out);
  return out;
}

/* The loop an RV names: its variable's name and its extent. */
static void assert_loop(sch_t *sch, sch_rv_t rv, const char *name, int64_t extent) {
  tir_stmt_t *loop;
  int64_t got;
  assert_int_equal(sch_get_loop_node(sch, rv, &loop), MLC_OK);
  assert_string_equal(loop->u.loop.var->u.var.name, name);
  assert_true(tir_as_int(loop->u.loop.extent, &got));
  assert_int_equal(got, extent);
}

static const sch_inst_t *last_inst(sch_t *sch) {
  const sch_trace_t *t = sch_get_trace(sch);
  assert_true(t->n > 0);
  return &t->insts[t->n - 1];
}

/* A failing split: the message contains `needle`; program and trace as before. */
static void assert_split_fails(const char *src, int loop_index, int nloops, const sch_arg_t *factors, int n,
                               const char *needle) {
  sch_t *sch = st_schedule(src);
  sch_rv_t loop = loops_of(sch, "B", nloops)[loop_index];
  char *before = tir_print_func(sch_func(sch));
  int ninsts = sch_get_trace(sch)->n;
  const sch_rv_t *out = (const sch_rv_t *)1;
  int rc = sch_split(sch, &out, loop, factors, n, true);
  st_assert_fails(sch, rc, needle, before);
  assert_null(out);
  assert_int_equal(sch_get_trace(sch)->n, ninsts);
  mlc_free(before);
  sch_free(sch);
}

/* ------------------------------------------------------------------------ */
/* Positive cases                                                            */
/* ------------------------------------------------------------------------ */

static void split_by_dividing_factors_gives_exact_tiles(void **state) {
  sch_t *sch = st_schedule(EW);
  const sch_rv_t *loops = loops_of(sch, "B", 2);
  sch_arg_t f[] = {sch_arg_int(8), sch_arg_int(16)};
  const sch_rv_t *out = split_ok(sch, loops[0], f, 2, true);
  st_check(sch, EW, EW_SPLIT("i_0, i_1, j in T.grid(8, 16, 128)", "i_0 * 16 + i_1", "j") EW_BODY);
  assert_loop(sch, out[0], "i_0", 8);
  assert_loop(sch, out[1], "i_1", 16);
  /* The RVs of the new loops are what get_loops gives now. */
  const sch_rv_t *now = loops_of(sch, "B", 3);
  tir_stmt_t *a, *b;
  assert_int_equal(sch_get_loop_node(sch, now[1], &a), MLC_OK);
  assert_int_equal(sch_get_loop_node(sch, out[1], &b), MLC_OK);
  assert_ptr_equal(a, b);
  sch_free(sch);
}

static void split_records_loop_factors_and_attrs(void **state) {
  sch_t *sch = st_schedule(EW);
  const sch_rv_t *loops = loops_of(sch, "B", 2);
  sch_arg_t f[] = {sch_arg_none(), sch_arg_int(16)};
  const sch_rv_t *out = split_ok(sch, loops[0], f, 2, true);
  const sch_inst_t *inst = last_inst(sch);
  assert_ptr_equal(inst->kind, sch_inst_kind_find("Split"));
  assert_int_equal(inst->ninputs, 3);
  assert_int_equal(inst->inputs[0].kind, SCH_ARG_RV);
  assert_int_equal(inst->inputs[0].u.rv, loops[0]);
  assert_int_equal(inst->inputs[1].kind, SCH_ARG_NONE);
  assert_int_equal(inst->inputs[2].kind, SCH_ARG_INT);
  assert_int_equal(inst->inputs[2].u.i, 16);
  assert_int_equal(inst->nattrs, 2);
  assert_int_equal(inst->attrs[0].u.i, 1); /* preserve_unit_iters */
  assert_int_equal(inst->attrs[1].u.i, 0); /* disable_predication */
  assert_int_equal(inst->noutputs, 2);
  assert_int_equal(inst->outputs[0], out[0]);
  assert_int_equal(inst->outputs[1], out[1]);
  sch_free(sch);
}

static void split_infers_the_none_factor(void **state) {
  sch_t *sch = st_schedule(EW);
  const sch_rv_t *loops = loops_of(sch, "B", 2);
  sch_arg_t f[] = {sch_arg_int(4), sch_arg_none()};
  const sch_rv_t *out = split_ok(sch, loops[1], f, 2, true);
  st_check(sch, EW, EW_SPLIT("i, j_0, j_1 in T.grid(128, 4, 32)", "i", "j_0 * 32 + j_1") EW_BODY);
  assert_loop(sch, out[1], "j_1", 32);
  sch_free(sch);
}

static void split_overshooting_factors_add_a_predicate(void **state) {
  sch_t *sch = st_schedule(EW);
  const sch_rv_t *loops = loops_of(sch, "B", 2);
  sch_arg_t f[] = {sch_arg_none(), sch_arg_int(10)};
  split_ok(sch, loops[0], f, 2, true);
  st_check(sch, EW,
           EW_SPLIT("i_0, i_1, j in T.grid(13, 10, 128)", "i_0 * 10 + i_1", "j")
           "            T.where(i_0 * 10 + i_1 < 128)\n" EW_BODY);
  sch_free(sch);
}

static void split_predicates_are_conjoined(void **state) {
  sch_t *sch = st_schedule(EW);
  const sch_rv_t *loops = loops_of(sch, "B", 2);
  sch_arg_t fi[] = {sch_arg_none(), sch_arg_int(10)};
  sch_arg_t fj[] = {sch_arg_int(3), sch_arg_none()};
  split_ok(sch, loops[0], fi, 2, true);
  split_ok(sch, loops[1], fj, 2, true);
  st_check(sch, EW,
           EW_SPLIT("i_0, i_1, j_0, j_1 in T.grid(13, 10, 3, 43)", "i_0 * 10 + i_1", "j_0 * 43 + j_1")
           "            T.where(i_0 * 10 + i_1 < 128 and j_0 * 43 + j_1 < 128)\n" EW_BODY);
  sch_free(sch);
}

static void split_three_ways(void **state) {
  sch_t *sch = st_schedule(EW);
  const sch_rv_t *loops = loops_of(sch, "B", 2);
  sch_arg_t f[] = {sch_arg_int(2), sch_arg_int(4), sch_arg_int(16)};
  const sch_rv_t *out = split_ok(sch, loops[0], f, 3, true);
  st_check(sch, EW, EW_SPLIT("i_0, i_1, i_2, j in T.grid(2, 4, 16, 128)", "i_0 * 64 + i_1 * 16 + i_2", "j") EW_BODY);
  assert_loop(sch, out[2], "i_2", 16);
  sch_free(sch);
}

/* TVM's elementwise_split_case0: a factor of 1 keeps its loop, and by default
 * its variable in the binding. */
static void split_keeps_unit_iters_by_default(void **state) {
  sch_t *sch = st_schedule(EW);
  const sch_rv_t *loops = loops_of(sch, "B", 2);
  sch_arg_t f[] = {sch_arg_int(2), sch_arg_int(1), sch_arg_int(64)};
  split_ok(sch, loops[0], f, 3, true);
  st_check(sch, EW, EW_SPLIT("i_0, i_1, i_2, j in T.grid(2, 1, 64, 128)", "i_0 * 64 + i_1 * 64 + i_2", "j") EW_BODY);
  sch_free(sch);
}

static void split_without_preserve_unit_iters_drops_them_from_bindings(void **state) {
  sch_t *sch = st_schedule(EW);
  const sch_rv_t *loops = loops_of(sch, "B", 2);
  sch_arg_t f[] = {sch_arg_int(2), sch_arg_int(1), sch_arg_int(64)};
  split_ok(sch, loops[0], f, 3, false);
  st_check(sch, EW, EW_SPLIT("i_0, i_1, i_2, j in T.grid(2, 1, 64, 128)", "i_0 * 64 + i_2", "j") EW_BODY);
  assert_int_equal(last_inst(sch)->attrs[0].u.i, 0);
  sch_free(sch);
}

/* Factors from sample_perfect_tile: the split uses their sampled values and
 * records the RVs. */
static void split_by_sampled_expression_factors(void **state) {
  sch_t *sch = st_schedule(EW);
  const sch_rv_t *loops = loops_of(sch, "B", 2);
  const sch_rv_t *tiles;
  int64_t decision[] = {4, 32};
  assert_int_equal(sch_sample_perfect_tile(sch, &tiles, loops[0], 2, 64, decision), MLC_OK);
  sch_arg_t f[] = {sch_arg_rv(tiles[0]), sch_arg_rv(tiles[1])};
  split_ok(sch, loops[0], f, 2, true);
  st_check(sch, EW, EW_SPLIT("i_0, i_1, j in T.grid(4, 32, 128)", "i_0 * 32 + i_1", "j") EW_BODY);
  const sch_inst_t *inst = last_inst(sch);
  assert_int_equal(inst->inputs[1].kind, SCH_ARG_RV);
  assert_int_equal(inst->inputs[1].u.rv, tiles[0]);
  assert_int_equal(inst->inputs[2].u.rv, tiles[1]);
  sch_free(sch);
}

/* Splitting a split loop again: names nest, the binding stays one sum. */
static void split_of_a_split_loop(void **state) {
  sch_t *sch = st_schedule(EW);
  const sch_rv_t *loops = loops_of(sch, "B", 2);
  sch_arg_t f1[] = {sch_arg_none(), sch_arg_int(16)};
  const sch_rv_t *out = split_ok(sch, loops[0], f1, 2, true);
  sch_arg_t f2[] = {sch_arg_int(4), sch_arg_int(4)};
  split_ok(sch, out[1], f2, 2, true);
  st_check(sch, EW,
           EW_SPLIT("i_0, i_1_0, i_1_1, j in T.grid(8, 4, 4, 128)", "i_0 * 16 + i_1_0 * 4 + i_1_1", "j") EW_BODY);
  sch_free(sch);
}

/* TVM's elementwise_with_opaque_block: every use of the loop variable is
 * rewritten (the opaque block's regions, the inner block's bindings), and the
 * predicate goes to the block directly under the loops only. */
#define OPAQUE_HEAD                                                                                             \
  HEADER "def main(A: T.Buffer((64, 64), \"float32\"), B: T.Buffer((64, 64), \"float32\")):\n" ROOT
#define OPAQUE_INNER                                    \
  "                T.reads(A[vi, vj])\n"                \
  "                T.writes(B[vi, vj])\n"               \
  "                B[vi, vj] = A[vi, vj] * T.float32(2)\n"

static const char *OPAQUE =
    OPAQUE_HEAD
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"opaque\"):\n"
    "            T.reads(A[i, j])\n"
    "            T.writes(B[i, j])\n"
    "            with T.block(\"B\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    OPAQUE_INNER;

static void split_rewrites_every_use_under_the_loop(void **state) {
  sch_t *sch = st_schedule(OPAQUE);
  const sch_rv_t *loops = loops_of(sch, "opaque", 2);
  sch_arg_t f[] = {sch_arg_none(), sch_arg_int(10)};
  split_ok(sch, loops[0], f, 2, true);
  st_check(sch, OPAQUE,
           OPAQUE_HEAD
           "    for i_0, i_1, j in T.grid(7, 10, 64):\n"
           "        with T.block(\"opaque\"):\n"
           "            T.where(i_0 * 10 + i_1 < 64)\n"
           "            T.reads(A[i_0 * 10 + i_1, j])\n"
           "            T.writes(B[i_0 * 10 + i_1, j])\n"
           "            with T.block(\"B\"):\n"
           "                vi = T.axis.spatial(64, i_0 * 10 + i_1)\n"
           "                vj = T.axis.spatial(64, j)\n"
           OPAQUE_INNER);
  sch_free(sch);
}

/* Two blocks under the split loop: both get the guard. */
#define TWO_HEAD                                                                                          \
  HEADER "def main(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16, 16), \"float32\")):\n" ROOT      \
  "    C = T.alloc_buffer((16, 16))\n"
#define TWO_C_BODY                                  \
  "                T.reads(A[vi, vj])\n"            \
  "                T.writes(C[vi, vj])\n"           \
  "                C[vi, vj] = A[vi, vj] * T.float32(2)\n"
#define TWO_B_BODY                                  \
  "                T.reads(C[vi, vj])\n"            \
  "                T.writes(B[vi, vj])\n"           \
  "                B[vi, vj] = C[vi, vj] + T.float32(1)\n"

static const char *TWO =
    TWO_HEAD
    "    for i in range(16):\n"
    "        for j in range(16):\n"
    "            with T.block(\"C\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    TWO_C_BODY
    "        for j in range(16):\n"
    "            with T.block(\"B\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    TWO_B_BODY;

static void split_guards_every_block_under_the_loop(void **state) {
  sch_t *sch = st_schedule(TWO);
  const sch_rv_t *loops = loops_of(sch, "B", 2);
  sch_arg_t f[] = {sch_arg_none(), sch_arg_int(5)};
  split_ok(sch, loops[0], f, 2, true);
  st_check(sch, TWO,
           TWO_HEAD
           "    for i_0, i_1 in T.grid(4, 5):\n"
           "        for j in range(16):\n"
           "            with T.block(\"C\"):\n"
           "                vi = T.axis.spatial(16, i_0 * 5 + i_1)\n"
           "                vj = T.axis.spatial(16, j)\n"
           "                T.where(i_0 * 5 + i_1 < 16)\n"
           TWO_C_BODY
           "        for j in range(16):\n"
           "            with T.block(\"B\"):\n"
           "                vi = T.axis.spatial(16, i_0 * 5 + i_1)\n"
           "                vj = T.axis.spatial(16, j)\n"
           "                T.where(i_0 * 5 + i_1 < 16)\n"
           TWO_B_BODY);
  sch_free(sch);
}

/* A reduction loop splits like any other; its iter var stays a reduce one. */
static const char *MATMUL =
    HEADER "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\"), C: T.Buffer((32, 32), \"float32\")):\n"
    ROOT
    "    for i, j, k in T.grid(32, 32, 32):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            T.reads(A[vi, vk], B[vk, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

static void split_reduction_loop(void **state) {
  sch_t *sch = st_schedule(MATMUL);
  const sch_rv_t *loops = loops_of(sch, "C", 3);
  sch_arg_t f[] = {sch_arg_none(), sch_arg_int(8)};
  split_ok(sch, loops[2], f, 2, true);
  st_check(sch, MATMUL,
           HEADER "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\"), C: T.Buffer((32, 32), \"float32\")):\n"
           ROOT
           "    for i, j, k_0, k_1 in T.grid(32, 32, 4, 8):\n"
           "        with T.block(\"C\"):\n"
           "            vi = T.axis.spatial(32, i)\n"
           "            vj = T.axis.spatial(32, j)\n"
           "            vk = T.axis.reduce(32, k_0 * 8 + k_1)\n"
           "            T.reads(A[vi, vk], B[vk, vj])\n"
           "            T.writes(C[vi, vj])\n"
           "            with T.init():\n"
           "                C[vi, vj] = T.float32(0)\n"
           "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n");
  sch_free(sch);
}

/* ------------------------------------------------------------------------ */
/* Negative cases                                                            */
/* ------------------------------------------------------------------------ */

static void split_rejects_non_constant_extent(void **state) {
  static const char *src =
      HEADER "def main(a: T.handle, b: T.handle, n: T.int32):\n"
      "    A = T.match_buffer(a, (n,))\n"
      "    B = T.match_buffer(b, (n,))\n"
      "    for i in range(n):\n"
      "        with T.block(\"B\"):\n"
      "            vi = T.axis.spatial(n, i)\n"
      "            B[vi] = A[vi] * T.float32(2)\n";
  sch_arg_t f[] = {sch_arg_none(), sch_arg_int(16)};
  assert_split_fails(src, 0, 1, f, 2, "split: loop i has non-constant extent n");
}

static void split_rejects_non_positive_factors(void **state) {
  sch_arg_t zero[] = {sch_arg_int(0), sch_arg_none()};
  assert_split_fails(EW, 0, 2, zero, 2, "split: factor 0 at position 0 is not positive");
  sch_arg_t neg[] = {sch_arg_none(), sch_arg_int(-16)};
  assert_split_fails(EW, 1, 2, neg, 2, "split: factor -16 at position 1 is not positive");
}

static void split_rejects_two_none_factors(void **state) {
  sch_arg_t f[] = {sch_arg_none(), sch_arg_int(4), sch_arg_none()};
  assert_split_fails(EW, 0, 2, f, 3, "split: more than one factor is None");
}

static void split_rejects_factors_short_of_the_extent(void **state) {
  sch_arg_t f[] = {sch_arg_int(4), sch_arg_int(16)};
  assert_split_fails(EW, 0, 2, f, 2, "split: the product of the factors (64) is less than the extent of loop i (128)");
}

static void split_rejects_no_factors(void **state) {
  assert_split_fails(EW, 0, 2, NULL, 0, "split: no factors given");
}

static void split_rejects_annotated_loop(void **state) {
  static const char *src =
      HEADER EW_SIG
      "    for i in range(128):\n"
      "        for j in T.serial(128, annotations={\"useless\": 1}):\n"
      "            with T.block(\"B\"):\n"
      "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
      "                B[vi, vj] = A[vi, vj] * T.float32(2)\n";
  sch_arg_t f[] = {sch_arg_none(), sch_arg_int(16)};
  assert_split_fails(src, 1, 2, f, 2, "split: loop j has annotations");
}

static void split_rejects_thread_bound_loop(void **state) {
  static const char *src =
      HEADER EW_SIG
      "    for i in range(128):\n"
      "        for j in T.thread_binding(128, thread=\"threadIdx.x\"):\n"
      "            with T.block(\"B\"):\n"
      "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
      "                B[vi, vj] = A[vi, vj] * T.float32(2)\n";
  sch_arg_t f[] = {sch_arg_none(), sch_arg_int(16)};
  assert_split_fails(src, 1, 2, f, 2, "split: loop j is bound to threadIdx.x");
}

static void split_rejects_loop_not_starting_at_zero(void **state) {
  static const char *src =
      HEADER EW_SIG
      "    for i, j in T.grid(128, 128):\n"
      "        for k in range(10, 20):\n"
      "            with T.block(\"B\"):\n"
      "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
      "                vk = T.axis.spatial(128, k)\n"
      "                B[vi, vj] = A[vi, vk] * T.float32(2)\n";
  sch_arg_t f[] = {sch_arg_none(), sch_arg_int(2)};
  assert_split_fails(src, 2, 3, f, 2, "split: loop k does not start at 0");
}

static void split_rejects_a_loop_rv_as_factor(void **state) {
  sch_t *sch = st_schedule(EW);
  const sch_rv_t *loops = loops_of(sch, "B", 2);
  sch_arg_t f[] = {sch_arg_rv(loops[1]), sch_arg_none()};
  const sch_rv_t *out;
  st_assert_fails(sch, sch_split(sch, &out, loops[0], f, 2, true),
                  "split: factor at position 0 is not an integer, an expression variable or None", NULL);
  st_assert_script(sch_func(sch), EW);
  sch_free(sch);
}

/* After a split the old loop is gone: its RV no longer names anything. */
static void split_rejects_a_loop_that_was_split(void **state) {
  sch_t *sch = st_schedule(EW);
  const sch_rv_t *loops = loops_of(sch, "B", 2);
  sch_arg_t f[] = {sch_arg_none(), sch_arg_int(16)};
  split_ok(sch, loops[0], f, 2, true);
  char *before = tir_print_func(sch_func(sch));
  const sch_rv_t *out;
  st_assert_fails(sch, sch_split(sch, &out, loops[0], f, 2, true), "no longer exists", before);
  assert_int_equal(sch_get_trace(sch)->n, 3); /* get_block, get_loops, split */
  mlc_free(before);
  sch_free(sch);
}

/* In FAST mode (what the search uses) the error is the one line, no IR. */
static void split_error_in_fast_mode_is_one_line(void **state) {
  sch_t *sch = st_schedule(EW);
  sch_set_error_mode(sch, SCH_ERRORS_FAST);
  const sch_rv_t *loops = loops_of(sch, "B", 2);
  sch_arg_t f[] = {sch_arg_int(4), sch_arg_int(16)};
  const sch_rv_t *out;
  assert_int_equal(sch_split(sch, &out, loops[0], f, 2, true), MLC_ESCHEDULE);
  assert_string_equal(sch_error(sch), "split: the product of the factors (64) is less than the extent of loop i (128)");
  assert_string_equal(mlc_error_last(), sch_error(sch));
  sch_free(sch);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(split_by_dividing_factors_gives_exact_tiles),
      cmocka_unit_test(split_records_loop_factors_and_attrs),
      cmocka_unit_test(split_infers_the_none_factor),
      cmocka_unit_test(split_overshooting_factors_add_a_predicate),
      cmocka_unit_test(split_predicates_are_conjoined),
      cmocka_unit_test(split_three_ways),
      cmocka_unit_test(split_keeps_unit_iters_by_default),
      cmocka_unit_test(split_without_preserve_unit_iters_drops_them_from_bindings),
      cmocka_unit_test(split_by_sampled_expression_factors),
      cmocka_unit_test(split_of_a_split_loop),
      cmocka_unit_test(split_rewrites_every_use_under_the_loop),
      cmocka_unit_test(split_guards_every_block_under_the_loop),
      cmocka_unit_test(split_reduction_loop),
      cmocka_unit_test(split_rejects_non_constant_extent),
      cmocka_unit_test(split_rejects_non_positive_factors),
      cmocka_unit_test(split_rejects_two_none_factors),
      cmocka_unit_test(split_rejects_factors_short_of_the_extent),
      cmocka_unit_test(split_rejects_no_factors),
      cmocka_unit_test(split_rejects_annotated_loop),
      cmocka_unit_test(split_rejects_thread_bound_loop),
      cmocka_unit_test(split_rejects_loop_not_starting_at_zero),
      cmocka_unit_test(split_rejects_a_loop_rv_as_factor),
      cmocka_unit_test(split_rejects_a_loop_that_was_split),
      cmocka_unit_test(split_error_in_fast_mode_is_one_line),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
