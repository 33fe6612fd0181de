/*
 * test_reduction.c - decompose_reduction and rfactor: exact TVMScript of
 * the scheduled program (TVM's forms: `<name>_init` under `<var>_init` loops,
 * `<name>_update`; `<name>_rf` writing `<buf>_rf`), the interpreter's
 * outputs equal to the original's, the trace entry, and every precondition
 * failing with its message and the program unchanged.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "schedule/state.h"
#include "sched_testing.h"

static const char *const MATMUL =
    "@T.prim_func\n"
    "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\"), C: T.Buffer((32, 32), \"float32\")):\n"
    "    for i, j, k in T.grid(32, 32, 32):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

/* The loops of a block, outermost first (borrowed from the schedule). */
static const sch_rv_t *loops_of(sch_t *sch, const char *block, int *n) {
  sch_rv_t b;
  const sch_rv_t *loops;
  assert_int_equal(sch_get_block(sch, &b, block), MLC_OK);
  assert_int_equal(sch_get_loops(sch, &loops, n, b), MLC_OK);
  return loops;
}

static sch_rv_t block_of(sch_t *sch, const char *name) {
  sch_rv_t b;
  assert_int_equal(sch_get_block(sch, &b, name), MLC_OK);
  return b;
}

static char *print_of(sch_t *sch) { return tir_print_func(sch_func(sch)); }

/* ------------------------------------------------------------------------ */
/* decompose_reduction                                                       */
/* ------------------------------------------------------------------------ */

static void decompose_at_outermost_loop_gives_init_nest_before_it(void **state) {
  sch_t *sch = st_schedule(MATMUL);
  int n;
  const sch_rv_t *l = loops_of(sch, "C", &n);
  sch_rv_t init;
  assert_int_equal(sch_decompose_reduction(sch, &init, block_of(sch, "C"), l[0]), MLC_OK);
  st_check(sch, MATMUL,
           "# from tvm.script import tir as T\n"
           "\n"
           "@T.prim_func\n"
           "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\"), C: T.Buffer((32, 32), \"float32\")):\n"
           "    # with T.block(\"root\"):\n"
           "    for i_init, j_init in T.grid(32, 32):\n"
           "        with T.block(\"C_init\"):\n"
           "            vi, vj = T.axis.remap(\"SS\", [i_init, j_init])\n"
           "            T.reads()\n"
           "            T.writes(C[vi, vj])\n"
           "            C[vi, vj] = T.float32(0)\n"
           "    for i, j, k in T.grid(32, 32, 32):\n"
           "        with T.block(\"C_update\"):\n"
           "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
           "            T.reads(C[vi, vj], A[vi, vk], B[vk, vj])\n"
           "            T.writes(C[vi, vj])\n"
           "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n");
  /* The output names the init block; the block RV now names the update. */
  tir_block_t *b;
  assert_int_equal(sch_get_block_node(sch, init, &b), MLC_OK);
  assert_string_equal(b->name, "C_init");
  const sch_trace_t *t = sch_get_trace(sch);
  const sch_inst_t *last = &t->insts[t->n - 1];
  assert_ptr_equal(last->kind, &sch_inst_kinds[SCH_INST_DECOMPOSE_REDUCTION]);
  assert_int_equal(last->ninputs, 2);
  assert_int_equal(last->noutputs, 1);
  assert_int_equal(last->outputs[0], init);
  sch_free(sch);
}

static void decompose_at_reduction_loop_keeps_spatial_loops_shared(void **state) {
  sch_t *sch = st_schedule(MATMUL);
  int n;
  const sch_rv_t *l = loops_of(sch, "C", &n);
  sch_rv_t init;
  assert_int_equal(sch_decompose_reduction(sch, &init, block_of(sch, "C"), l[2]), MLC_OK);
  st_check(sch, MATMUL,
           "# from tvm.script import tir as T\n"
           "\n"
           "@T.prim_func\n"
           "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\"), C: T.Buffer((32, 32), \"float32\")):\n"
           "    # with T.block(\"root\"):\n"
           "    for i, j in T.grid(32, 32):\n"
           "        with T.block(\"C_init\"):\n"
           "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
           "            T.reads()\n"
           "            T.writes(C[vi, vj])\n"
           "            C[vi, vj] = T.float32(0)\n"
           "        for k in range(32):\n"
           "            with T.block(\"C_update\"):\n"
           "                vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
           "                T.reads(C[vi, vj], A[vi, vk], B[vk, vj])\n"
           "                T.writes(C[vi, vj])\n"
           "                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n");
  sch_free(sch);
}

/* TVM's test_reduction_decompose4: split loops, a predicate from a split
 * that does not divide; the init keeps only the loops its bindings use and
 * none of the predicate (it is about the reduction loops). */
static void decompose_after_splits_drops_reduction_predicate(void **state) {
  sch_t *sch = st_schedule(MATMUL);
  int n;
  const sch_rv_t *l = loops_of(sch, "C", &n);
  sch_rv_t i = l[0], k = l[2];
  const sch_rv_t *io, *ko;
  sch_arg_t fi[2] = {sch_arg_int(4), sch_arg_int(8)}, fk[2] = {sch_arg_int(5), sch_arg_int(7)};
  assert_int_equal(sch_split(sch, &io, i, fi, 2, true), MLC_OK);
  sch_rv_t i1 = io[1];
  assert_int_equal(sch_split(sch, &ko, k, fk, 2, true), MLC_OK);
  sch_rv_t init;
  assert_int_equal(sch_decompose_reduction(sch, &init, block_of(sch, "C"), i1), MLC_OK);
  st_check(sch, MATMUL,
           "# from tvm.script import tir as T\n"
           "\n"
           "@T.prim_func\n"
           "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\"), C: T.Buffer((32, 32), \"float32\")):\n"
           "    # with T.block(\"root\"):\n"
           "    for i_0 in range(4):\n"
           "        for i_1_init, j_init in T.grid(8, 32):\n"
           "            with T.block(\"C_init\"):\n"
           "                vi = T.axis.spatial(32, i_0 * 8 + i_1_init)\n"
           "                vj = T.axis.spatial(32, j_init)\n"
           "                T.reads()\n"
           "                T.writes(C[vi, vj])\n"
           "                C[vi, vj] = T.float32(0)\n"
           "        for i_1, j, k_0, k_1 in T.grid(8, 32, 5, 7):\n"
           "            with T.block(\"C_update\"):\n"
           "                vi = T.axis.spatial(32, i_0 * 8 + i_1)\n"
           "                vj = T.axis.spatial(32, j)\n"
           "                vk = T.axis.reduce(32, k_0 * 7 + k_1)\n"
           "                T.where(k_0 * 7 + k_1 < 32)\n"
           "                T.reads(C[vi, vj], A[vi, vk], B[vk, vj])\n"
           "                T.writes(C[vi, vj])\n"
           "                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n");
  sch_free(sch);
}

/* TVM's test_decompose_reduction_with_thread_binding: the init loop keeps
 * the thread binding. */
static void decompose_copies_thread_binding_of_init_loops(void **state) {
  static const char *const BOUND =
      "@T.prim_func\n"
      "def main(A: T.Buffer((32, 16), \"float32\"), B: T.Buffer((32,), \"float32\")):\n"
      "    for t in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
      "        for r in range(16):\n"
      "            with T.block(\"B\"):\n"
      "                vi, vr = T.axis.remap(\"SR\", [t, r])\n"
      "                with T.init():\n"
      "                    B[vi] = T.float32(0)\n"
      "                B[vi] = B[vi] + A[vi, vr]\n";
  sch_t *sch = st_schedule(BOUND);
  int n;
  const sch_rv_t *l = loops_of(sch, "B", &n);
  sch_rv_t init;
  assert_int_equal(sch_decompose_reduction(sch, &init, block_of(sch, "B"), l[0]), MLC_OK);
  st_check(sch, BOUND,
           "# from tvm.script import tir as T\n"
           "\n"
           "@T.prim_func\n"
           "def main(A: T.Buffer((32, 16), \"float32\"), B: T.Buffer((32,), \"float32\")):\n"
           "    # with T.block(\"root\"):\n"
           "    for t_init in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
           "        with T.block(\"B_init\"):\n"
           "            vi = T.axis.spatial(32, t_init)\n"
           "            T.reads()\n"
           "            T.writes(B[vi])\n"
           "            B[vi] = T.float32(0)\n"
           "    for t in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
           "        for r in range(16):\n"
           "            with T.block(\"B_update\"):\n"
           "                vi, vr = T.axis.remap(\"SR\", [t, r])\n"
           "                T.reads(B[vi], A[vi, vr])\n"
           "                T.writes(B[vi])\n"
           "                B[vi] = B[vi] + A[vi, vr]\n");
  sch_free(sch);
}

static void decompose_fails_for_loop_outside_the_block(void **state) {
  static const char *const TWO =
      "@T.prim_func\n"
      "def main(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16,), \"float32\"), C: T.Buffer((16,), \"float32\")):\n"
      "    for i, k in T.grid(16, 16):\n"
      "        with T.block(\"B\"):\n"
      "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
      "            with T.init():\n"
      "                B[vi] = T.float32(0)\n"
      "            B[vi] = B[vi] + A[vi, vk]\n"
      "    for i in range(16):\n"
      "        with T.block(\"C\"):\n"
      "            vi = T.axis.spatial(16, i)\n"
      "            C[vi] = B[vi] * T.float32(2)\n";
  sch_t *sch = st_schedule(TWO);
  char *before = print_of(sch);
  int n;
  const sch_rv_t *lc = loops_of(sch, "C", &n);
  sch_rv_t out, c_loop = lc[0];
  int rc = sch_decompose_reduction(sch, &out, block_of(sch, "B"), c_loop);
  st_assert_fails(sch, rc, "decompose_reduction: loop i is not an ancestor of block B", before);
  /* An elementwise block is not a reduction. */
  rc = sch_decompose_reduction(sch, &out, block_of(sch, "C"), c_loop);
  st_assert_fails(sch, rc, "decompose_reduction: block C is not a reduction block", before);
  assert_int_equal(sch_get_trace(sch)->n, 4); /* lookups only */
  mlc_free(before);
  sch_free(sch);
}

static void decompose_fails_below_a_reduction_loop(void **state) {
  static const char *const IKJ =
      "@T.prim_func\n"
      "def main(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
      "    for i, k, j in T.grid(16, 16, 16):\n"
      "        with T.block(\"C\"):\n"
      "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
      "            with T.init():\n"
      "                C[vi, vj] = T.float32(0)\n"
      "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";
  sch_t *sch = st_schedule(IKJ);
  char *before = print_of(sch);
  int n;
  const sch_rv_t *l = loops_of(sch, "C", &n);
  sch_rv_t out;
  int rc = sch_decompose_reduction(sch, &out, block_of(sch, "C"), l[2]);
  st_assert_fails(sch, rc, "decompose_reduction: loop j is below loop k, which the reduction iter var vk of block C uses",
                  before);
  mlc_free(before);
  sch_free(sch);
}

/* i split 3 x 3 > 8 with preserve_unit_iters off: the binding lost the
 * unit loop i_1, the predicate kept it. */
static const char *const SPLIT_UNIT_PRED =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((8, 8), \"int32\"), S: T.Buffer((8,), \"int32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i_0, i_1, i_2, k in T.grid(3, 1, 3, 8):\n"
    "        with T.block(\"S\"):\n"
    "            vi = T.axis.spatial(8, i_0 * 3 + i_2)\n"
    "            vk = T.axis.reduce(8, k)\n"
    "            T.where(i_0 * 3 + i_1 * 3 + i_2 < 8)\n"
    "            T.reads(A[vi, vk])\n"
    "            T.writes(S[vi])\n"
    "            with T.init():\n"
    "                S[vi] = 0\n"
    "            S[vi] = S[vi] + A[vi, vk]\n";

static const char *const EXP_UNIT_PRED_DECOMPOSED =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((8, 8), \"int32\"), S: T.Buffer((8,), \"int32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i_0 in range(3):\n"
    "        for i_2_init in range(3):\n"
    "            with T.block(\"S_init\"):\n"
    "                vi = T.axis.spatial(8, i_0 * 3 + i_2_init)\n"
    "                T.where(i_0 * 3 + i_2_init < 8)\n"
    "                T.reads()\n"
    "                T.writes(S[vi])\n"
    "                S[vi] = 0\n"
    "        for i_1, i_2, k in T.grid(1, 3, 8):\n"
    "            with T.block(\"S_update\"):\n"
    "                vi = T.axis.spatial(8, i_0 * 3 + i_2)\n"
    "                vk = T.axis.reduce(8, k)\n"
    "                T.where(i_0 * 3 + i_1 * 3 + i_2 < 8)\n"
    "                T.reads(S[vi], A[vi, vk])\n"
    "                T.writes(S[vi])\n"
    "                S[vi] = S[vi] + A[vi, vk]\n";

static void decompose_keeps_the_guard_through_a_dropped_unit_loop(void **state) {
  (void)state;
  /* The init nest does not copy i_1 (no binding uses it); the conjunct
   * naming it still guards the tail, with i_1 at its only value (it was
   * dropped, and S_init wrote S[8]). */
  sch_t *sch = st_schedule(SPLIT_UNIT_PRED);
  int n;
  const sch_rv_t *l = loops_of(sch, "S", &n);
  sch_rv_t init;
  assert_int_equal(sch_decompose_reduction(sch, &init, block_of(sch, "S"), l[1]), MLC_OK);
  st_check(sch, SPLIT_UNIT_PRED, EXP_UNIT_PRED_DECOMPOSED);
  sch_free(sch);
}

/* S recomputed under r (as compute_at under a consumer's loop leaves it). */
static const char *const RECOMPUTED_SUM =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 8), \"int32\"), S: T.Buffer((4,), \"int32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i, r, k in T.grid(4, 2, 8):\n"
    "        with T.block(\"S\"):\n"
    "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    "            T.reads(A[vi, vk])\n"
    "            T.writes(S[vi])\n"
    "            with T.init():\n"
    "                S[vi] = 0\n"
    "            S[vi] = S[vi] + A[vi, vk]\n";

static const char *const EXP_RECOMPUTED_SUM_AT_K =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 8), \"int32\"), S: T.Buffer((4,), \"int32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i, r in T.grid(4, 2):\n"
    "        with T.block(\"S_init\"):\n"
    "            vi = T.axis.spatial(4, i)\n"
    "            T.reads()\n"
    "            T.writes(S[vi])\n"
    "            S[vi] = 0\n"
    "        for k in range(8):\n"
    "            with T.block(\"S_update\"):\n"
    "                vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    "                T.reads(S[vi], A[vi, vk])\n"
    "                T.writes(S[vi])\n"
    "                S[vi] = S[vi] + A[vi, vk]\n";

static void decompose_rejects_loops_that_repeat_the_reduction(void **state) {
  (void)state;
  /* At loop i the init would run once per row and the updates twice. */
  sch_t *sch = st_schedule(RECOMPUTED_SUM);
  int n;
  const sch_rv_t *l = loops_of(sch, "S", &n);
  sch_rv_t b = block_of(sch, "S"), init;
  int ninsts = sch_get_trace(sch)->n;
  st_assert_fails(sch, sch_decompose_reduction(sch, &init, b, l[0]),
                  "decompose_reduction: the loops from i down repeat iterations of block S (it recomputes its "
                  "reduction, init included, under them); an init before loop i would run once",
                  RECOMPUTED_SUM);
  assert_int_equal(sch_get_trace(sch)->n, ninsts);
  /* Below r every iteration is a distinct one. */
  assert_int_equal(sch_decompose_reduction(sch, &init, b, l[2]), MLC_OK);
  st_check(sch, RECOMPUTED_SUM, EXP_RECOMPUTED_SUM_AT_K);
  sch_free(sch);
}

/* ------------------------------------------------------------------------ */
/* rfactor                                                                   */
/* ------------------------------------------------------------------------ */

static const char *const ROWSUM =
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 64), \"int32\"), B: T.Buffer((16,), \"int32\")):\n"
    "    for i, k_0, k_1 in T.grid(16, 16, 4):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            vk = T.axis.reduce(64, k_0 * 4 + k_1)\n"
    "            with T.init():\n"
    "                B[vi] = 0\n"
    "            B[vi] = B[vi] + A[vi, vk]\n";

static void rfactor_inner_loop_of_sum_makes_rf_and_write_back_blocks(void **state) {
  sch_t *sch = st_schedule(ROWSUM);
  int n;
  const sch_rv_t *l = loops_of(sch, "B", &n);
  sch_rv_t rf;
  assert_int_equal(sch_rfactor(sch, &rf, l[2], 0), MLC_OK);
  st_check(sch, ROWSUM,
           "# from tvm.script import tir as T\n"
           "\n"
           "@T.prim_func\n"
           "def main(A: T.Buffer((16, 64), \"int32\"), B: T.Buffer((16,), \"int32\")):\n"
           "    # with T.block(\"root\"):\n"
           "    B_rf = T.alloc_buffer((4, 16), \"int32\")\n"
           "    for i, k_0, k_1 in T.grid(16, 16, 4):\n"
           "        with T.block(\"B_rf\"):\n"
           "            vk_1, vi, vk_0 = T.axis.remap(\"SSR\", [k_1, i, k_0])\n"
           "            T.reads(A[vi, vk_0 * 4 + vk_1])\n"
           "            T.writes(B_rf[vk_1, vi])\n"
           "            with T.init():\n"
           "                B_rf[vk_1, vi] = 0\n"
           "            B_rf[vk_1, vi] = B_rf[vk_1, vi] + A[vi, vk_0 * 4 + vk_1]\n"
           "    for i, k_1 in T.grid(16, 4):\n"
           "        with T.block(\"B\"):\n"
           "            vk_1, vi = T.axis.remap(\"RS\", [k_1, i])\n"
           "            T.reads(B_rf[vk_1, vi])\n"
           "            T.writes(B[vi])\n"
           "            with T.init():\n"
           "                B[vi] = 0\n"
           "            B[vi] = B[vi] + B_rf[vk_1, vi]\n");
  tir_block_t *b;
  assert_int_equal(sch_get_block_node(sch, rf, &b), MLC_OK);
  assert_string_equal(b->name, "B_rf");
  const sch_inst_t *last = &sch_get_trace(sch)->insts[sch_get_trace(sch)->n - 1];
  assert_ptr_equal(last->kind, &sch_inst_kinds[SCH_INST_RFACTOR]);
  assert_int_equal(last->nattrs, 1);
  assert_int_equal(last->attrs[0].u.i, 0);
  assert_int_equal(last->outputs[0], rf);
  sch_free(sch);
}

static void rfactor_with_last_factor_axis_appends_the_dimension(void **state) {
  sch_t *sch = st_schedule(ROWSUM);
  int n;
  const sch_rv_t *l = loops_of(sch, "B", &n);
  sch_rv_t rf;
  assert_int_equal(sch_rfactor(sch, &rf, l[1], -1), MLC_OK);
  st_check(sch, ROWSUM,
           "# from tvm.script import tir as T\n"
           "\n"
           "@T.prim_func\n"
           "def main(A: T.Buffer((16, 64), \"int32\"), B: T.Buffer((16,), \"int32\")):\n"
           "    # with T.block(\"root\"):\n"
           "    B_rf = T.alloc_buffer((16, 16), \"int32\")\n"
           "    for i, k_0, k_1 in T.grid(16, 16, 4):\n"
           "        with T.block(\"B_rf\"):\n"
           "            vk_0, vi, vk_1 = T.axis.remap(\"SSR\", [k_0, i, k_1])\n"
           "            T.reads(A[vi, vk_0 * 4 + vk_1])\n"
           "            T.writes(B_rf[vi, vk_0])\n"
           "            with T.init():\n"
           "                B_rf[vi, vk_0] = 0\n"
           "            B_rf[vi, vk_0] = B_rf[vi, vk_0] + A[vi, vk_0 * 4 + vk_1]\n"
           "    for i, k_0 in T.grid(16, 16):\n"
           "        with T.block(\"B\"):\n"
           "            vk_0, vi = T.axis.remap(\"RS\", [k_0, i])\n"
           "            T.reads(B_rf[vi, vk_0])\n"
           "            T.writes(B[vi])\n"
           "            with T.init():\n"
           "                B[vi] = 0\n"
           "            B[vi] = B[vi] + B_rf[vi, vk_0]\n");
  sch_free(sch);
}

/* A float max reduction (identity: the lowest float32, as workloads write
 * it); max is exact, so outputs must match bit for bit. */
static void rfactor_of_max_reduction_keeps_max_combiner(void **state) {
  static const char *const ROWMAX =
      "@T.prim_func\n"
      "def main(A: T.Buffer((8, 32), \"float32\"), B: T.Buffer((8,), \"float32\")):\n"
      "    for i, k in T.grid(8, 32):\n"
      "        with T.block(\"B\"):\n"
      "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
      "            with T.init():\n"
      "                B[vi] = T.float32(-3.4028235e+38)\n"
      "            B[vi] = T.max(B[vi], A[vi, vk])\n";
  sch_t *sch = st_schedule(ROWMAX);
  int n;
  const sch_rv_t *l = loops_of(sch, "B", &n);
  sch_rv_t rf;
  assert_int_equal(sch_rfactor(sch, &rf, l[1], 1), MLC_OK);
  st_check(sch, ROWMAX,
           "# from tvm.script import tir as T\n"
           "\n"
           "@T.prim_func\n"
           "def main(A: T.Buffer((8, 32), \"float32\"), B: T.Buffer((8,), \"float32\")):\n"
           "    # with T.block(\"root\"):\n"
           "    B_rf = T.alloc_buffer((8, 32))\n"
           "    for i, k in T.grid(8, 32):\n"
           "        with T.block(\"B_rf\"):\n"
           "            vk, vi = T.axis.remap(\"SS\", [k, i])\n"
           "            T.reads(A[vi, vk])\n"
           "            T.writes(B_rf[vi, vk])\n"
           "            with T.init():\n"
           "                B_rf[vi, vk] = T.float32(-3.4028235e+38)\n"
           "            B_rf[vi, vk] = T.max(B_rf[vi, vk], A[vi, vk])\n"
           "    for i, k in T.grid(8, 32):\n"
           "        with T.block(\"B\"):\n"
           "            vk, vi = T.axis.remap(\"RS\", [k, i])\n"
           "            T.reads(B_rf[vi, vk])\n"
           "            T.writes(B[vi])\n"
           "            with T.init():\n"
           "                B[vi] = T.float32(-3.4028235e+38)\n"
           "            B[vi] = T.max(B[vi], B_rf[vi, vk])\n");
  sch_free(sch);
}

/* A float sum reassociates: the outputs agree to rounding. */
static void rfactor_of_float_matmul_computes_the_same_to_rounding(void **state) {
  sch_t *sch = st_schedule(MATMUL);
  int n;
  const sch_rv_t *l = loops_of(sch, "C", &n);
  const sch_rv_t *ko;
  sch_arg_t f[2] = {sch_arg_none(), sch_arg_int(8)};
  assert_int_equal(sch_split(sch, &ko, l[2], f, 2, true), MLC_OK);
  sch_rv_t rf;
  assert_int_equal(sch_rfactor(sch, &rf, ko[1], 0), MLC_OK);
  tir_func_t *orig = st_parse(MATMUL);
  st_assert_same_outputs(orig, sch_func(sch), 11, 1e-5);
  char *text = print_of(sch);
  assert_non_null(strstr(text, "C_rf = T.alloc_buffer((8, 32, 32))"));
  assert_non_null(strstr(text, "C[vi, vj] = C[vi, vj] + C_rf[vk_1, vi, vj]"));
  mlc_free(text);
  tir_func_free(orig);
  sch_free(sch);
}

/* A split by a non-dividing factor guards the block with T.where. */
static const char *const ROWSUM_8x16 =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((8, 16), \"int32\"), S: T.Buffer((8,), \"int32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i, k in T.grid(8, 16):\n"
    "        with T.block(\"S\"):\n"
    "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    "            T.reads(A[vi, vk])\n"
    "            T.writes(S[vi])\n"
    "            with T.init():\n"
    "                S[vi] = 0\n"
    "            S[vi] = S[vi] + A[vi, vk]\n";

static const char *const EXP_RF_SPATIAL_TAIL =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((8, 16), \"int32\"), S: T.Buffer((8,), \"int32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    S_rf = T.alloc_buffer((16, 8), \"int32\")\n"
    "    for i_0, i_1, k in T.grid(3, 3, 16):\n"
    "        with T.block(\"S_rf\"):\n"
    "            vk = T.axis.spatial(16, k)\n"
    "            vi = T.axis.spatial(8, i_0 * 3 + i_1)\n"
    "            T.where(i_0 * 3 + i_1 < 8)\n"
    "            T.reads(A[vi, vk])\n"
    "            T.writes(S_rf[vk, vi])\n"
    "            with T.init():\n"
    "                S_rf[vk, vi] = 0\n"
    "            S_rf[vk, vi] = S_rf[vk, vi] + A[vi, vk]\n"
    "    for i_0, i_1, k in T.grid(3, 3, 16):\n"
    "        with T.block(\"S\"):\n"
    "            vk = T.axis.reduce(16, k)\n"
    "            vi = T.axis.spatial(8, i_0 * 3 + i_1)\n"
    "            T.where(i_0 * 3 + i_1 < 8)\n"
    "            T.reads(S_rf[vk, vi])\n"
    "            T.writes(S[vi])\n"
    "            with T.init():\n"
    "                S[vi] = 0\n"
    "            S[vi] = S[vi] + S_rf[vk, vi]\n";

static const char *const EXP_RF_REDUCTION_TAIL =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((8, 16), \"int32\"), S: T.Buffer((8,), \"int32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    S_rf = T.alloc_buffer((8, 5), \"int32\")\n"
    "    for i, k_0, k_1 in T.grid(8, 4, 5):\n"
    "        with T.block(\"S_rf\"):\n"
    "            vk_1, vi, vk_0 = T.axis.remap(\"SSR\", [k_1, i, k_0])\n"
    "            T.where(k_0 * 5 + k_1 < 16)\n"
    "            T.reads(A[vi, vk_0 * 5 + vk_1])\n"
    "            T.writes(S_rf[vi, vk_1])\n"
    "            with T.init():\n"
    "                S_rf[vi, vk_1] = 0\n"
    "            S_rf[vi, vk_1] = S_rf[vi, vk_1] + A[vi, vk_0 * 5 + vk_1]\n"
    "    for i, k_1 in T.grid(8, 5):\n"
    "        with T.block(\"S\"):\n"
    "            vk_1, vi = T.axis.remap(\"RS\", [k_1, i])\n"
    "            T.reads(S_rf[vi, vk_1])\n"
    "            T.writes(S[vi])\n"
    "            with T.init():\n"
    "                S[vi] = 0\n"
    "            S[vi] = S[vi] + S_rf[vi, vk_1]\n";

static const sch_rv_t *split_loop(sch_t *sch, sch_rv_t loop, sch_arg_t f0, sch_arg_t f1) {
  const sch_rv_t *parts = NULL;
  sch_arg_t factors[2] = {f0, f1};
  assert_int_equal(sch_split(sch, &parts, loop, factors, 2, true), MLC_OK);
  return parts;
}

static void rfactor_under_a_spatial_tail_guards_the_write_back_too(void **state) {
  (void)state;
  /* i splits 3 x 3 = 9 > 8: both blocks run under i_0, i_1 and both need
   * T.where(i_0 * 3 + i_1 < 8) (the write-back had none, and reached
   * vi = 8). */
  sch_t *sch = st_schedule(ROWSUM_8x16);
  int n;
  const sch_rv_t *l = loops_of(sch, "S", &n);
  sch_rv_t k = l[1], rf;
  split_loop(sch, l[0], sch_arg_none(), sch_arg_int(3));
  assert_int_equal(sch_rfactor(sch, &rf, k, 0), MLC_OK);
  st_check(sch, ROWSUM_8x16, EXP_RF_SPATIAL_TAIL);
  sch_free(sch);
}

static void rfactor_under_a_reduction_tail_keeps_the_guard_in_the_rf_block(void **state) {
  (void)state;
  /* k splits 4 x 5 = 20 > 16: the rf block keeps T.where(k_0 * 5 + k_1 <
   * 16); the write-back, which no longer runs over k_0, drops it. */
  sch_t *sch = st_schedule(ROWSUM_8x16);
  int n;
  const sch_rv_t *l = loops_of(sch, "S", &n);
  const sch_rv_t *parts = split_loop(sch, l[1], sch_arg_none(), sch_arg_int(5));
  sch_rv_t rf;
  assert_int_equal(sch_rfactor(sch, &rf, parts[1], 1), MLC_OK);
  st_check(sch, ROWSUM_8x16, EXP_RF_REDUCTION_TAIL);
  sch_free(sch);
}

static const char *const EXP_RF_EMPTY_TILE =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((8, 16), \"int32\"), S: T.Buffer((8,), \"int32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    S_rf = T.alloc_buffer((5, 8), \"int32\")\n"
    "    for i, k_0, k_1 in T.grid(8, 5, 4):\n"
    "        with T.block(\"S_rf\"):\n"
    "            vk_0, vi, vk_1 = T.axis.remap(\"SSR\", [k_0, i, k_1])\n"
    "            T.where(k_0 * 4 + k_1 < 16)\n"
    "            T.reads(A[vi, vk_0 * 4 + vk_1])\n"
    "            T.writes(S_rf[vk_0, vi])\n"
    "            with T.init():\n"
    "                S_rf[vk_0, vi] = 0\n"
    "            S_rf[vk_0, vi] = S_rf[vk_0, vi] + A[vi, vk_0 * 4 + vk_1]\n"
    "    for i, k_0 in T.grid(8, 5):\n"
    "        with T.block(\"S\"):\n"
    "            vk_0, vi = T.axis.remap(\"RS\", [k_0, i])\n"
    "            T.where(k_0 * 4 < 16)\n"
    "            T.reads(S_rf[vk_0, vi])\n"
    "            T.writes(S[vi])\n"
    "            with T.init():\n"
    "                S[vi] = 0\n"
    "            S[vi] = S[vi] + S_rf[vk_0, vi]\n";

static void rfactor_of_a_wholly_empty_tile_skips_its_entry(void **state) {
  (void)state;
  /* k in 5 tiles of 4 over 16: tile 4 is past the end, so the rf block
   * never writes S_rf[4, ..] (not even its init); the write-back must not
   * read it. */
  sch_t *sch = st_schedule(ROWSUM_8x16);
  int n;
  const sch_rv_t *l = loops_of(sch, "S", &n);
  const sch_rv_t *parts = split_loop(sch, l[1], sch_arg_int(5), sch_arg_none());
  sch_rv_t rf;
  assert_int_equal(sch_rfactor(sch, &rf, parts[0], 0), MLC_OK);
  st_check(sch, ROWSUM_8x16, EXP_RF_EMPTY_TILE);
  sch_free(sch);
}

static void rfactor_rejects_spatial_and_non_serial_loops(void **state) {
  static const char *const PAR =
      "@T.prim_func\n"
      "def main(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16,), \"float32\")):\n"
      "    for i in range(16):\n"
      "        for k in T.parallel(16):\n"
      "            with T.block(\"B\"):\n"
      "                vi, vk = T.axis.remap(\"SR\", [i, k])\n"
      "                with T.init():\n"
      "                    B[vi] = T.float32(0)\n"
      "                B[vi] = B[vi] + A[vi, vk]\n";
  sch_t *sch = st_schedule(PAR);
  char *before = print_of(sch);
  int n;
  const sch_rv_t *l = loops_of(sch, "B", &n);
  sch_rv_t out;
  st_assert_fails(sch, sch_rfactor(sch, &out, l[1], 0), "rfactor: loop k is parallel, not serial", before);
  st_assert_fails(sch, sch_rfactor(sch, &out, l[0], 0), "rfactor: loop i feeds a spatial iter var of block B", before);
  mlc_free(before);
  sch_free(sch);
}

static void rfactor_rejects_unknown_reducers_and_bad_axes(void **state) {
  static const char *const WRONG_INIT =
      "@T.prim_func\n"
      "def main(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16,), \"float32\")):\n"
      "    for i, k in T.grid(16, 16):\n"
      "        with T.block(\"B\"):\n"
      "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
      "            with T.init():\n"
      "                B[vi] = T.float32(1)\n"
      "            B[vi] = B[vi] + A[vi, vk]\n";
  sch_t *sch = st_schedule(WRONG_INIT);
  char *before = print_of(sch);
  int n;
  const sch_rv_t *l = loops_of(sch, "B", &n);
  sch_rv_t out;
  st_assert_fails(sch, sch_rfactor(sch, &out, l[1], 0), "rfactor: block B is not a reduction rfactor knows", before);
  mlc_free(before);
  sch_free(sch);

  sch = st_schedule(ROWSUM);
  before = print_of(sch);
  l = loops_of(sch, "B", &n);
  st_assert_fails(sch, sch_rfactor(sch, &out, l[2], 2), "rfactor: factor_axis 2 is out of range [-2, 1] for buffer B",
                  before);
  st_assert_fails(sch, sch_rfactor(sch, &out, l[2], -3), "rfactor: factor_axis -3 is out of range", before);
  mlc_free(before);
  sch_free(sch);
}

static void rfactor_rejects_elementwise_blocks_and_shared_loops(void **state) {
  static const char *const TWO_BLOCKS =
      "@T.prim_func\n"
      "def main(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
      "    for i, j in T.grid(16, 16):\n"
      "        with T.block(\"B\"):\n"
      "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
      "            B[vi, vj] = A[vi, vj] * T.float32(2)\n"
      "        with T.block(\"C\"):\n"
      "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
      "            C[vi, vj] = A[vi, vj] + T.float32(1)\n"
      "    for i, j in T.grid(16, 16):\n"
      "        with T.block(\"D\"):\n"
      "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
      "            C[vi, vj] = C[vi, vj] + B[vi, vj]\n";
  sch_t *sch = st_schedule(TWO_BLOCKS);
  char *before = print_of(sch);
  int n;
  const sch_rv_t *lb = loops_of(sch, "B", &n);
  sch_rv_t out, shared = lb[1];
  st_assert_fails(sch, sch_rfactor(sch, &out, shared, 0), "rfactor: loop j does not have exactly one block under it",
                  before);
  const sch_rv_t *ld = loops_of(sch, "D", &n);
  st_assert_fails(sch, sch_rfactor(sch, &out, ld[1], 0), "rfactor: block D is not a reduction block", before);
  mlc_free(before);
  sch_free(sch);
}

/* decompose_reduction and rfactor replay from the trace's JSON to the same
 * program. */
static void reduction_traces_replay_from_json(void **state) {
  sch_t *sch = st_schedule(MATMUL);
  int n;
  const sch_rv_t *l = loops_of(sch, "C", &n);
  const sch_rv_t *ko;
  sch_arg_t f[2] = {sch_arg_none(), sch_arg_int(8)};
  assert_int_equal(sch_split(sch, &ko, l[2], f, 2, true), MLC_OK);
  sch_rv_t rf, init;
  assert_int_equal(sch_rfactor(sch, &rf, ko[1], 1), MLC_OK);
  /* The rfactor block sits under fresh copies of the loops (TVM's): the
   * split's k_0 was removed with the write-back nest's reduction loops. */
  sch_path_t path;
  assert_int_equal(sch_find_loop(sch, "test", ko[0], &path), MLC_ESCHEDULE);
  const sch_rv_t *lrf = loops_of(sch, "C_rf", &n);
  assert_int_equal(sch_decompose_reduction(sch, &init, rf, lrf[2]), MLC_OK);
  json_t *json = NULL;
  assert_int_equal(sch_trace_to_json(&json, sch_get_trace(sch)), MLC_OK);
  char *text = mlc_json_dumps(json);
  assert_non_null(strstr(text, "\"RFactor\""));
  assert_non_null(strstr(text, "\"DecomposeReduction\""));
  sch_trace_t *back = NULL;
  assert_int_equal(sch_trace_from_json(&back, json), MLC_OK);
  sch_t *fresh = st_schedule(MATMUL);
  assert_int_equal(sch_trace_apply(fresh, back, true), MLC_OK);
  char *a = print_of(sch), *b = print_of(fresh);
  assert_string_equal(a, b);
  assert_non_null(strstr(a, "with T.block(\"C_rf_init\")"));
  assert_non_null(strstr(a, "with T.block(\"C_rf_update\")"));
  mlc_free(a);
  mlc_free(b);
  mlc_free(text);
  json_decref(json);
  sch_trace_free(back);
  sch_free(fresh);
  sch_free(sch);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(decompose_at_outermost_loop_gives_init_nest_before_it),
      cmocka_unit_test(decompose_at_reduction_loop_keeps_spatial_loops_shared),
      cmocka_unit_test(decompose_after_splits_drops_reduction_predicate),
      cmocka_unit_test(decompose_copies_thread_binding_of_init_loops),
      cmocka_unit_test(decompose_fails_for_loop_outside_the_block),
      cmocka_unit_test(decompose_fails_below_a_reduction_loop),
      cmocka_unit_test(decompose_keeps_the_guard_through_a_dropped_unit_loop),
      cmocka_unit_test(decompose_rejects_loops_that_repeat_the_reduction),
      cmocka_unit_test(rfactor_inner_loop_of_sum_makes_rf_and_write_back_blocks),
      cmocka_unit_test(rfactor_with_last_factor_axis_appends_the_dimension),
      cmocka_unit_test(rfactor_of_max_reduction_keeps_max_combiner),
      cmocka_unit_test(rfactor_of_float_matmul_computes_the_same_to_rounding),
      cmocka_unit_test(rfactor_under_a_spatial_tail_guards_the_write_back_too),
      cmocka_unit_test(rfactor_under_a_reduction_tail_keeps_the_guard_in_the_rf_block),
      cmocka_unit_test(rfactor_of_a_wholly_empty_tile_skips_its_entry),
      cmocka_unit_test(rfactor_rejects_spatial_and_non_serial_loops),
      cmocka_unit_test(rfactor_rejects_unknown_reducers_and_bad_axes),
      cmocka_unit_test(rfactor_rejects_elementwise_blocks_and_shared_loops),
      cmocka_unit_test(reduction_traces_replay_from_json),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
