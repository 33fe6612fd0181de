/*
 * test_annotate.c - parallel, vectorize, unroll, bind, annotate and
 * unannotate (schedule/primitive/annotate.c): exact TVMScript after each,
 * same outputs in the interpreter, every precondition's error, and what the
 * trace records. Cases adapted from TVM's test_tir_schedule_for_kind.py.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "schedule/state.h"
#include "sched_testing.h"

#define HEADER "# from tvm.script import tir as T\n\n@T.prim_func\n"

static const char *ELEMENTWISE =
    HEADER
    "def main(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128, 128), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i, j in T.grid(128, 128):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(A[vi, vj])\n"
    "            T.writes(B[vi, vj])\n"
    "            B[vi, vj] = A[vi, vj] * T.float32(2)\n";

static const char *SPLIT_PREDICATE =
    HEADER
    "def main(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128, 128), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i, j_0, j_1 in T.grid(128, 13, 10):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(128, i)\n"
    "            vj = T.axis.spatial(128, j_0 * 10 + j_1)\n"
    "            T.where(j_0 * 10 + j_1 < 128)\n"
    "            T.reads(A[vi, vj])\n"
    "            T.writes(B[vi, vj])\n"
    "            B[vi, vj] = A[vi, vj] * T.float32(2)\n";

static const char *COMPUTE_AT_SPLIT =
    HEADER
    "def main(A: T.Buffer((128, 128), \"float32\"), C: T.Buffer((128, 128), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    B = T.alloc_buffer((128, 128))\n"
    "    for i in range(128):\n"
    "        for j0 in range(128):\n"
    "            with T.block(\"B\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j0])\n"
    "                T.reads(A[vi, vj])\n"
    "                T.writes(B[vi, vj])\n"
    "                B[vi, vj] = A[vi, vj] * T.float32(2)\n"
    "        for j1o, j1i in T.grid(32, 4):\n"
    "            with T.block(\"C\"):\n"
    "                vi = T.axis.spatial(128, i)\n"
    "                vj = T.axis.spatial(128, j1o * 4 + j1i)\n"
    "                T.reads(B[vi, vj])\n"
    "                T.writes(C[vi, vj])\n"
    "                C[vi, vj] = B[vi, vj] + T.float32(1)\n";

static const char *MATMUL =
    HEADER
    "def main(A: T.Buffer((64, 64), \"float32\"), B: T.Buffer((64, 64), \"float32\"), C: T.Buffer((64, 64), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i, j, k in T.grid(64, 64, 64):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            T.reads(C[vi, vj], A[vi, vk], B[vj, vk])\n"
    "            T.writes(C[vi, vj])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]\n";

static const char *ROWSUM =
    HEADER
    "def main(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i, k in T.grid(128, 128):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    "            T.reads(B[vi], A[vi, vk])\n"
    "            T.writes(B[vi])\n"
    "            with T.init():\n"
    "                B[vi] = T.float32(0)\n"
    "            B[vi] = B[vi] + A[vi, vk]\n";

static const char *ROWSUM_NOT_QUASI_AFFINE =
    HEADER
    "def main(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i, k in T.grid(128, 16):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(128, i)\n"
    "            vk = T.axis.reduce(128, k * k // 2)\n"
    "            T.reads(B[vi], A[vi, vk])\n"
    "            T.writes(B[vi])\n"
    "            with T.init():\n"
    "                B[vi] = T.float32(0)\n"
    "            B[vi] = B[vi] + A[vi, vk]\n";

static const char *ROWSUM_NOT_COMPACT =
    HEADER
    "def main(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i, k in T.grid(128, 16):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    "            T.reads(B[vk], A[vi, vk])\n"
    "            T.writes(B[vk])\n"
    "            with T.init():\n"
    "                B[vk] = T.float32(0)\n"
    "            B[vk] = B[vk] + A[vi, vk]\n";

static const char *OPAQUE =
    HEADER
    "def main(A: T.Buffer((16,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i in range(15):\n"
    "        with T.block(\"opaque\"):\n"
    "            T.reads(A[i:i + 2])\n"
    "            T.writes(A[i + 1])\n"
    "            A[i + 1] = A[i + 1] + A[i]\n";

static const char *BLOCK_INSIDE_INIT =
    HEADER
    "def main(A: T.Buffer((16, 16, 16), \"float32\"), B: T.Buffer((16, 16), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i in range(16):\n"
    "        with T.block(\"outer\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.reads(B[vi, 0:16], A[vi, 0:16, 0:16])\n"
    "            T.writes(B[vi, 0:16])\n"
    "            with T.init():\n"
    "                for j in range(16):\n"
    "                    with T.block(\"init\"):\n"
    "                        vj = T.axis.spatial(16, j)\n"
    "                        T.reads()\n"
    "                        T.writes(B[vi, vj])\n"
    "                        B[vi, vj] = T.float32(0)\n"
    "            for k, j in T.grid(16, 16):\n"
    "                with T.block(\"inner\"):\n"
    "                    vj, vk = T.axis.remap(\"SR\", [j, k])\n"
    "                    T.reads(B[vi, vj], A[vi, vj, vk])\n"
    "                    T.writes(B[vi, vj])\n"
    "                    B[vi, vj] = B[vi, vj] + A[vi, vj, vk]\n";

static const char *SCATTER =
    HEADER
    "def main(A: T.Buffer((16,), \"float32\"), B: T.Buffer((16,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i in range(8):\n"
    "        with T.block(\"first_half\"):\n"
    "            vi = T.axis.spatial(16, i + 8)\n"
    "            T.reads(A[vi - 8])\n"
    "            T.writes(B[vi])\n"
    "            B[vi] = A[vi - 8]\n"
    "    for i in range(8):\n"
    "        with T.block(\"last_half\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.reads(A[vi + 8])\n"
    "            T.writes(B[vi])\n"
    "            B[vi] = A[vi + 8]\n";

/* The i-th loop above block `name` (get_block + get_loops). */
static sch_rv_t loop_of(sch_t *sch, const char *name, int i) {
  sch_rv_t b;
  const sch_rv_t *loops;
  int n;
  assert_int_equal(sch_get_block(sch, &b, name), MLC_OK);
  assert_int_equal(sch_get_loops(sch, &loops, &n, b), MLC_OK);
  assert_true(i < n);
  return loops[i];
}

static sch_rv_t block_of(sch_t *sch, const char *name) {
  sch_rv_t b;
  assert_int_equal(sch_get_block(sch, &b, name), MLC_OK);
  return b;
}

/* The last recorded instruction. */
static const sch_inst_t *last_inst(sch_t *sch) {
  const sch_trace_t *t = sch_get_trace(sch);
  assert_true(t->n > 0);
  return &t->insts[t->n - 1];
}

/* ------------------------------------------------------------------------ */
/* parallel                                                                  */
/* ------------------------------------------------------------------------ */

static void parallel_outer_loop_of_elementwise(void **state) {
  sch_t *sch = st_schedule(ELEMENTWISE);
  sch_rv_t i = loop_of(sch, "B", 0);
  int n_before = sch_get_trace(sch)->n;
  assert_int_equal(sch_parallel(sch, i), MLC_OK);
  st_check(sch, ELEMENTWISE,
           HEADER
           "def main(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128, 128), \"float32\")):\n"
           "    # with T.block(\"root\"):\n"
           "    for i in T.parallel(128):\n"
           "        for j in range(128):\n"
           "            with T.block(\"B\"):\n"
           "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
           "                T.reads(A[vi, vj])\n"
           "                T.writes(B[vi, vj])\n"
           "                B[vi, vj] = A[vi, vj] * T.float32(2)\n");
  assert_int_equal(sch_get_trace(sch)->n, n_before + 1);
  const sch_inst_t *inst = last_inst(sch);
  assert_ptr_equal(inst->kind, &sch_inst_kinds[SCH_INST_PARALLEL]);
  assert_int_equal(inst->ninputs, 1);
  assert_int_equal(inst->inputs[0].kind, SCH_ARG_RV);
  assert_int_equal(inst->inputs[0].u.rv, i);
  assert_int_equal(inst->nattrs, 0);
  assert_int_equal(inst->noutputs, 0);
  sch_free(sch);
}

static void parallel_loop_under_a_predicate(void **state) {
  sch_t *sch = st_schedule(SPLIT_PREDICATE);
  assert_int_equal(sch_parallel(sch, loop_of(sch, "B", 1)), MLC_OK);
  st_check(sch, SPLIT_PREDICATE,
           HEADER
           "def main(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128, 128), \"float32\")):\n"
           "    # with T.block(\"root\"):\n"
           "    for i in range(128):\n"
           "        for j_0 in T.parallel(13):\n"
           "            for j_1 in range(10):\n"
           "                with T.block(\"B\"):\n"
           "                    vi = T.axis.spatial(128, i)\n"
           "                    vj = T.axis.spatial(128, j_0 * 10 + j_1)\n"
           "                    T.where(j_0 * 10 + j_1 < 128)\n"
           "                    T.reads(A[vi, vj])\n"
           "                    T.writes(B[vi, vj])\n"
           "                    B[vi, vj] = A[vi, vj] * T.float32(2)\n");
  sch_free(sch);
}

/* Two blocks of the root scope write B; each loop's subtree has one. */
static void parallel_loops_of_blocks_sharing_an_output(void **state) {
  sch_t *sch = st_schedule(SCATTER);
  assert_int_equal(sch_parallel(sch, loop_of(sch, "first_half", 0)), MLC_OK);
  assert_int_equal(sch_parallel(sch, loop_of(sch, "last_half", 0)), MLC_OK);
  st_check(sch, SCATTER,
           HEADER
           "def main(A: T.Buffer((16,), \"float32\"), B: T.Buffer((16,), \"float32\")):\n"
           "    # with T.block(\"root\"):\n"
           "    for i in T.parallel(8):\n"
           "        with T.block(\"first_half\"):\n"
           "            vi = T.axis.spatial(16, i + 8)\n"
           "            T.reads(A[vi - 8])\n"
           "            T.writes(B[vi])\n"
           "            B[vi] = A[vi - 8]\n"
           "    for i in T.parallel(8):\n"
           "        with T.block(\"last_half\"):\n"
           "            vi = T.axis.spatial(16, i)\n"
           "            T.reads(A[vi + 8])\n"
           "            T.writes(B[vi])\n"
           "            B[vi] = A[vi + 8]\n");
  sch_free(sch);
}

static void parallel_reduction_loop_fails(void **state) {
  sch_t *sch = st_schedule(MATMUL);
  sch_rv_t k = loop_of(sch, "C", 2);
  int n_before = sch_get_trace(sch)->n;
  st_assert_fails(sch, sch_parallel(sch, k),
                  "parallel: loop k is bound to the reduce iter var vk of block C; only data-parallel iter vars "
                  "may be",
                  MATMUL);
  assert_int_equal(sch_get_trace(sch)->n, n_before);
  sch_free(sch);
}

static void parallel_over_non_affine_reduction_fails(void **state) {
  sch_t *sch = st_schedule(ROWSUM_NOT_QUASI_AFFINE);
  st_assert_fails(sch, sch_parallel(sch, loop_of(sch, "B", 0)),
                  "parallel: block B under loop i is neither a complete block (iter var vk is not data parallel) "
                  "nor a reduction block (its binding is not affine",
                  ROWSUM_NOT_QUASI_AFFINE);
  sch_free(sch);
}

static void parallel_over_reduction_indexing_output_by_reduce_var_fails(void **state) {
  sch_t *sch = st_schedule(ROWSUM_NOT_COMPACT);
  st_assert_fails(sch, sch_parallel(sch, loop_of(sch, "B", 0)),
                  "nor a reduction block (reduction iter var vk indexes the output B)", ROWSUM_NOT_COMPACT);
  sch_free(sch);
}

/* RICH errors show the offending block after the message line. */
static void failed_parallel_shows_block_in_rich_mode(void **state) {
  sch_t *sch = st_schedule(MATMUL);
  sch_rv_t k = loop_of(sch, "C", 2);
  assert_int_equal(sch_parallel(sch, k), MLC_ESCHEDULE);
  const char *nl = strchr(sch_error(sch), '\n');
  assert_non_null(nl);
  assert_true(strncmp(nl + 1, "with T.block(\"C\"):", 18) == 0);
  sch_set_error_mode(sch, SCH_ERRORS_FAST);
  assert_int_equal(sch_parallel(sch, k), MLC_ESCHEDULE);
  assert_null(strchr(sch_error(sch), '\n'));
  sch_free(sch);
}

/* ------------------------------------------------------------------------ */
/* vectorize, unroll                                                         */
/* ------------------------------------------------------------------------ */

static void vectorize_inner_loop_after_compute_at(void **state) {
  sch_t *sch = st_schedule(COMPUTE_AT_SPLIT);
  assert_int_equal(sch_vectorize(sch, loop_of(sch, "C", 2)), MLC_OK);
  st_check(sch, COMPUTE_AT_SPLIT,
           HEADER
           "def main(A: T.Buffer((128, 128), \"float32\"), C: T.Buffer((128, 128), \"float32\")):\n"
           "    # with T.block(\"root\"):\n"
           "    B = T.alloc_buffer((128, 128))\n"
           "    for i in range(128):\n"
           "        for j0 in range(128):\n"
           "            with T.block(\"B\"):\n"
           "                vi, vj = T.axis.remap(\"SS\", [i, j0])\n"
           "                T.reads(A[vi, vj])\n"
           "                T.writes(B[vi, vj])\n"
           "                B[vi, vj] = A[vi, vj] * T.float32(2)\n"
           "        for j1o in range(32):\n"
           "            for j1i in T.vectorized(4):\n"
           "                with T.block(\"C\"):\n"
           "                    vi = T.axis.spatial(128, i)\n"
           "                    vj = T.axis.spatial(128, j1o * 4 + j1i)\n"
           "                    T.reads(B[vi, vj])\n"
           "                    T.writes(C[vi, vj])\n"
           "                    C[vi, vj] = B[vi, vj] + T.float32(1)\n");
  sch_free(sch);
}

/* The outer loop covers two blocks: B and C are each complete among them. */
static void vectorize_loop_over_two_blocks(void **state) {
  sch_t *sch = st_schedule(COMPUTE_AT_SPLIT);
  assert_int_equal(sch_vectorize(sch, loop_of(sch, "C", 0)), MLC_OK);
  char *text = tir_print_func(sch_func(sch));
  assert_non_null(strstr(text, "    for i in T.vectorized(128):\n        for j0 in range(128):\n"));
  mlc_free(text);
  sch_free(sch);
}

static void vectorize_opaque_block_fails(void **state) {
  sch_t *sch = st_schedule(OPAQUE);
  st_assert_fails(sch, sch_vectorize(sch, loop_of(sch, "opaque", 0)),
                  "vectorize: block opaque under loop i is neither a complete block (it reads A, which it "
                  "writes) nor a reduction block (it has no init)",
                  OPAQUE);
  sch_free(sch);
}

static void unroll_loop_of_reduction(void **state) {
  sch_t *sch = st_schedule(ROWSUM);
  assert_int_equal(sch_unroll(sch, loop_of(sch, "B", 1)), MLC_OK);
  st_check(sch, ROWSUM,
           HEADER
           "def main(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128,), \"float32\")):\n"
           "    # with T.block(\"root\"):\n"
           "    for i in range(128):\n"
           "        for k in T.unroll(128):\n"
           "            with T.block(\"B\"):\n"
           "                vi, vk = T.axis.remap(\"SR\", [i, k])\n"
           "                T.reads(B[vi], A[vi, vk])\n"
           "                T.writes(B[vi])\n"
           "                with T.init():\n"
           "                    B[vi] = T.float32(0)\n"
           "                B[vi] = B[vi] + A[vi, vk]\n");
  sch_free(sch);
}

static void unroll_after_bind_drops_the_thread(void **state) {
  sch_t *sch = st_schedule(ROWSUM);
  sch_rv_t i = loop_of(sch, "B", 0);
  assert_int_equal(sch_bind(sch, i, "blockIdx.x"), MLC_OK);
  assert_int_equal(sch_unroll(sch, i), MLC_OK);
  tir_stmt_t *loop = NULL;
  assert_int_equal(sch_get_loop_node(sch, i, &loop), MLC_OK);
  assert_int_equal(loop->u.loop.kind, TIR_FOR_UNROLLED);
  assert_null(loop->u.loop.thread_tag);
  char *text = tir_print_func(sch_func(sch));
  assert_non_null(strstr(text, "    for i in T.unroll(128):\n        for k in range(128):\n"));
  mlc_free(text);
  sch_free(sch);
}

/* ------------------------------------------------------------------------ */
/* bind                                                                      */
/* ------------------------------------------------------------------------ */

static void bind_outer_loop_to_threadidx(void **state) {
  sch_t *sch = st_schedule(ELEMENTWISE);
  sch_rv_t i = loop_of(sch, "B", 0);
  assert_int_equal(sch_bind(sch, i, "blockIdx.x"), MLC_OK);
  assert_int_equal(sch_bind(sch, i, "threadIdx.x"), MLC_OK); /* rebinding replaces */
  st_check(sch, ELEMENTWISE,
           HEADER
           "def main(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128, 128), \"float32\")):\n"
           "    # with T.block(\"root\"):\n"
           "    for i in T.thread_binding(128, thread=\"threadIdx.x\"):\n"
           "        for j in range(128):\n"
           "            with T.block(\"B\"):\n"
           "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
           "                T.reads(A[vi, vj])\n"
           "                T.writes(B[vi, vj])\n"
           "                B[vi, vj] = A[vi, vj] * T.float32(2)\n");
  const sch_inst_t *inst = last_inst(sch);
  assert_ptr_equal(inst->kind, &sch_inst_kinds[SCH_INST_BIND]);
  assert_int_equal(inst->nattrs, 1);
  assert_string_equal(inst->attrs[0].u.s, "threadIdx.x");
  sch_free(sch);
}

static void bind_reduction_loop_to_threadidx_is_cross_thread_reduction(void **state) {
  sch_t *sch = st_schedule(ROWSUM);
  assert_int_equal(sch_bind(sch, loop_of(sch, "B", 1), "threadIdx.x"), MLC_OK);
  st_check(sch, ROWSUM,
           HEADER
           "def main(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128,), \"float32\")):\n"
           "    # with T.block(\"root\"):\n"
           "    for i in range(128):\n"
           "        for k in T.thread_binding(128, thread=\"threadIdx.x\"):\n"
           "            with T.block(\"B\"):\n"
           "                vi, vk = T.axis.remap(\"SR\", [i, k])\n"
           "                T.reads(B[vi], A[vi, vk])\n"
           "                T.writes(B[vi])\n"
           "                with T.init():\n"
           "                    B[vi] = T.float32(0)\n"
           "                B[vi] = B[vi] + A[vi, vk]\n");
  sch_free(sch);
}

static void bind_reduction_loop_to_blockidx_fails(void **state) {
  sch_t *sch = st_schedule(ROWSUM);
  st_assert_fails(sch, sch_bind(sch, loop_of(sch, "B", 1), "blockIdx.x"),
                  "bind: loop k is bound to the reduce iter var vk of block B; only data-parallel iter vars (or "
                  "reduce ones, for threadIdx.x/y/z) may be",
                  ROWSUM);
  st_assert_fails(sch, sch_bind(sch, loop_of(sch, "B", 1), "vthread.x"), "bind: loop k is bound to the reduce",
                  ROWSUM);
  sch_free(sch);
}

static void bind_unknown_thread_axis_fails(void **state) {
  sch_t *sch = st_schedule(ELEMENTWISE);
  st_assert_fails(sch, sch_bind(sch, loop_of(sch, "B", 0), "threadIdx.w"),
                  "bind: unknown thread axis \"threadIdx.w\" (expected blockIdx.x/y/z, threadIdx.x/y/z, vthread or "
                  "vthread.x/y/z)",
                  ELEMENTWISE);
  assert_int_equal(sch_bind(sch, loop_of(sch, "B", 0), "vthread"), MLC_OK);
  sch_free(sch);
}

/* The block inside the outer block's init is not checked (TVM). */
static void bind_loop_of_block_with_block_inside_init(void **state) {
  sch_t *sch = st_schedule(BLOCK_INSIDE_INIT);
  assert_int_equal(sch_bind(sch, loop_of(sch, "outer", 0), "threadIdx.x"), MLC_OK);
  char *text = tir_print_func(sch_func(sch));
  assert_non_null(strstr(text, "    for i in T.thread_binding(16, thread=\"threadIdx.x\"):\n"));
  mlc_free(text);
  tir_func_t *orig = st_parse(BLOCK_INSIDE_INIT);
  st_assert_same_outputs(orig, sch_func(sch), 3, 0.0);
  tir_func_free(orig);
  sch_free(sch);
}

/* ------------------------------------------------------------------------ */
/* annotate, unannotate                                                      */
/* ------------------------------------------------------------------------ */

static void annotate_loop_and_block_with_each_value_kind(void **state) {
  sch_t *sch = st_schedule(ELEMENTWISE);
  sch_rv_t b = block_of(sch, "B");
  sch_rv_t i = loop_of(sch, "B", 0);
  sch_rv_t v = sch_new_rv(sch, SCH_RV_EXPR, 0, 64);
  assert_int_equal(sch_annotate(sch, i, "pragma_auto_unroll_max_step", sch_arg_rv(v)), MLC_OK);
  assert_int_equal(sch_annotate(sch, i, "pragma_unroll_explicit", sch_arg_int(1)), MLC_OK);
  assert_int_equal(sch_annotate(sch, b, "meta_schedule.tiling_structure", sch_arg_str("SSRSRS")), MLC_OK);
  assert_int_equal(sch_annotate(sch, b, "ratio", sch_arg_float(0.5)), MLC_OK);
  assert_int_equal(sch_annotate(sch, b, "big", sch_arg_int(INT64_C(1) << 40)), MLC_OK);
  st_check(sch, ELEMENTWISE,
           HEADER
           "def main(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128, 128), \"float32\")):\n"
           "    # with T.block(\"root\"):\n"
           "    for i in T.serial(128, annotations={\"pragma_auto_unroll_max_step\": 64, "
           "\"pragma_unroll_explicit\": 1}):\n"
           "        for j in range(128):\n"
           "            with T.block(\"B\"):\n"
           "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
           "                T.reads(A[vi, vj])\n"
           "                T.writes(B[vi, vj])\n"
           "                T.block_attr({\"meta_schedule.tiling_structure\": \"SSRSRS\", \"ratio\": T.float32(0.5), "
           "\"big\": T.int64(1099511627776)})\n"
           "                B[vi, vj] = A[vi, vj] * T.float32(2)\n");
  /* annotate records (block_or_loop, value) | key. */
  const sch_trace_t *t = sch_get_trace(sch);
  const sch_inst_t *first = &t->insts[t->n - 5];
  assert_ptr_equal(first->kind, &sch_inst_kinds[SCH_INST_ANNOTATE]);
  assert_int_equal(first->ninputs, 2);
  assert_int_equal(first->inputs[0].u.rv, i);
  assert_int_equal(first->inputs[1].kind, SCH_ARG_RV);
  assert_int_equal(first->inputs[1].u.rv, v);
  assert_string_equal(first->attrs[0].u.s, "pragma_auto_unroll_max_step");
  assert_int_equal(t->insts[t->n - 3].inputs[1].kind, SCH_ARG_STR);
  assert_string_equal(t->insts[t->n - 3].inputs[1].u.s, "SSRSRS");
  sch_free(sch);
}

/* TVM keeps the first value when a key is annotated again. */
static void annotate_existing_key_keeps_first_value(void **state) {
  sch_t *sch = st_schedule(ELEMENTWISE);
  sch_rv_t i = loop_of(sch, "B", 0);
  assert_int_equal(sch_annotate(sch, i, "k", sch_arg_int(1)), MLC_OK);
  assert_int_equal(sch_annotate(sch, i, "k", sch_arg_int(2)), MLC_OK);
  char *text = tir_print_func(sch_func(sch));
  assert_non_null(strstr(text, "for i in T.serial(128, annotations={\"k\": 1}):"));
  mlc_free(text);
  sch_free(sch);
}

static void unannotate_removes_the_key(void **state) {
  sch_t *sch = st_schedule(ELEMENTWISE);
  sch_rv_t b = block_of(sch, "B");
  sch_rv_t i = loop_of(sch, "B", 0);
  assert_int_equal(sch_annotate(sch, b, "x", sch_arg_int(1)), MLC_OK);
  assert_int_equal(sch_annotate(sch, b, "y", sch_arg_str("z")), MLC_OK);
  assert_int_equal(sch_annotate(sch, i, "u", sch_arg_int(3)), MLC_OK);
  assert_int_equal(sch_unannotate(sch, b, "x"), MLC_OK);
  assert_int_equal(sch_unannotate(sch, i, "u"), MLC_OK);
  st_check(sch, ELEMENTWISE,
           HEADER
           "def main(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128, 128), \"float32\")):\n"
           "    # with T.block(\"root\"):\n"
           "    for i, j in T.grid(128, 128):\n"
           "        with T.block(\"B\"):\n"
           "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
           "            T.reads(A[vi, vj])\n"
           "            T.writes(B[vi, vj])\n"
           "            T.block_attr({\"y\": \"z\"})\n"
           "            B[vi, vj] = A[vi, vj] * T.float32(2)\n");
  const sch_inst_t *inst = last_inst(sch);
  assert_ptr_equal(inst->kind, &sch_inst_kinds[SCH_INST_UNANNOTATE]);
  assert_int_equal(inst->ninputs, 1);
  assert_string_equal(inst->attrs[0].u.s, "u");
  sch_free(sch);
}

static void unannotate_missing_key_fails(void **state) {
  sch_t *sch = st_schedule(ELEMENTWISE);
  sch_rv_t b = block_of(sch, "B");
  sch_rv_t i = loop_of(sch, "B", 0);
  int n_before = sch_get_trace(sch)->n;
  st_assert_fails(sch, sch_unannotate(sch, b, "nope"), "unannotate: block B has no annotation \"nope\"",
                  ELEMENTWISE);
  st_assert_fails(sch, sch_unannotate(sch, i, "nope"), "unannotate: loop i has no annotation \"nope\"",
                  ELEMENTWISE);
  assert_int_equal(sch_get_trace(sch)->n, n_before);
  sch_free(sch);
}

static void annotate_with_non_expression_rv_fails(void **state) {
  sch_t *sch = st_schedule(ELEMENTWISE);
  sch_rv_t b = block_of(sch, "B");
  st_assert_fails(sch, sch_annotate(sch, b, "k", sch_arg_rv(b)),
                  "annotate: random variable 0 is not an expression variable", ELEMENTWISE);
  st_assert_fails(sch, sch_annotate(sch, b, "k", sch_arg_none()),
                  "annotate: the value must be an int, a float, a string or an expression variable", ELEMENTWISE);
  st_assert_fails(sch, sch_parallel(sch, b), "parallel: random variable 0 is a block variable, expected a loop",
                  ELEMENTWISE);
  sch_free(sch);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(parallel_outer_loop_of_elementwise),
      cmocka_unit_test(parallel_loop_under_a_predicate),
      cmocka_unit_test(parallel_loops_of_blocks_sharing_an_output),
      cmocka_unit_test(parallel_reduction_loop_fails),
      cmocka_unit_test(parallel_over_non_affine_reduction_fails),
      cmocka_unit_test(parallel_over_reduction_indexing_output_by_reduce_var_fails),
      cmocka_unit_test(failed_parallel_shows_block_in_rich_mode),
      cmocka_unit_test(vectorize_inner_loop_after_compute_at),
      cmocka_unit_test(vectorize_loop_over_two_blocks),
      cmocka_unit_test(vectorize_opaque_block_fails),
      cmocka_unit_test(unroll_loop_of_reduction),
      cmocka_unit_test(unroll_after_bind_drops_the_thread),
      cmocka_unit_test(bind_outer_loop_to_threadidx),
      cmocka_unit_test(bind_reduction_loop_to_threadidx_is_cross_thread_reduction),
      cmocka_unit_test(bind_reduction_loop_to_blockidx_fails),
      cmocka_unit_test(bind_unknown_thread_axis_fails),
      cmocka_unit_test(bind_loop_of_block_with_block_inside_init),
      cmocka_unit_test(annotate_loop_and_block_with_each_value_kind),
      cmocka_unit_test(annotate_existing_key_keeps_first_value),
      cmocka_unit_test(unannotate_removes_the_key),
      cmocka_unit_test(unannotate_missing_key_fails),
      cmocka_unit_test(annotate_with_non_expression_rv_fails),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
