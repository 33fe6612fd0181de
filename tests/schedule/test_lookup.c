/*
 * test_lookup.c - get_block, get_loops, get_child_blocks, get_producers and
 * get_consumers (schedule/primitive/get_block_loop.c): what they find, in
 * which order, what they record, and their errors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "schedule/state.h"
#include "sched_testing.h"

#define HEADER "# from tvm.script import tir as T\n\n@T.prim_func\n"

/* B = A * 2; C = B + 1; D = B + C, all in the root scope. */
static const char *CHAIN =
    HEADER
    "def main(A: T.Buffer((16, 16), \"float32\"), D: T.Buffer((16, 16), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    B = T.alloc_buffer((16, 16))\n"
    "    C = T.alloc_buffer((16, 16))\n"
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
    "            C[vi, vj] = B[vi, vj] + T.float32(1)\n"
    "    for i, j in T.grid(16, 16):\n"
    "        with T.block(\"D\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(B[vi, vj], C[vi, vj])\n"
    "            T.writes(D[vi, vj])\n"
    "            D[vi, vj] = B[vi, vj] + C[vi, vj]\n";

/* A decomposed reduction: init and update both write C (write-after-write),
 * then E reads C. */
static const char *DECOMPOSED =
    HEADER
    "def main(A: T.Buffer((16, 16), \"float32\"), E: T.Buffer((16,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    C = T.alloc_buffer((16,))\n"
    "    for i in range(16):\n"
    "        with T.block(\"init\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.reads()\n"
    "            T.writes(C[vi])\n"
    "            C[vi] = T.float32(0)\n"
    "    for i, k in T.grid(16, 16):\n"
    "        with T.block(\"update\"):\n"
    "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    "            T.reads(C[vi], A[vi, vk])\n"
    "            T.writes(C[vi])\n"
    "            C[vi] = C[vi] + A[vi, vk]\n"
    "    for i in range(16):\n"
    "        with T.block(\"E\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.reads(C[vi])\n"
    "            T.writes(E[vi])\n"
    "            E[vi] = C[vi] * T.float32(2)\n";

/* A block nested in another block, under an `if` and two loops. */
static const char *NESTED =
    HEADER
    "def main(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16, 16), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for io in range(4):\n"
    "        with T.block(\"outer\"):\n"
    "            vio = T.axis.spatial(4, io)\n"
    "            T.reads(A[vio * 4:vio * 4 + 4, 0:16])\n"
    "            T.writes(B[vio * 4:vio * 4 + 4, 0:16])\n"
    "            for ii in range(4):\n"
    "                if vio < 4:\n"
    "                    for j in range(16):\n"
    "                        with T.block(\"inner\"):\n"
    "                            vi = T.axis.spatial(16, vio * 4 + ii)\n"
    "                            vj = T.axis.spatial(16, j)\n"
    "                            T.reads(A[vi, vj])\n"
    "                            T.writes(B[vi, vj])\n"
    "                            B[vi, vj] = A[vi, vj] + T.float32(1)\n";

static sch_rv_t block_of(sch_t *sch, const char *name) {
  sch_rv_t b;
  assert_int_equal(sch_get_block(sch, &b, name), MLC_OK);
  return b;
}

static const char *block_name(sch_t *sch, sch_rv_t rv) {
  tir_block_t *b = NULL;
  assert_int_equal(sch_get_block_node(sch, rv, &b), MLC_OK);
  return b->name;
}

static const char *loop_name(sch_t *sch, sch_rv_t rv) {
  tir_stmt_t *l = NULL;
  assert_int_equal(sch_get_loop_node(sch, rv, &l), MLC_OK);
  return sch_loop_name(l);
}

/* Names of a list of block RVs, comma separated, into buf. */
static const char *block_names(sch_t *sch, const sch_rv_t *rvs, int n, char *buf, size_t len) {
  buf[0] = '\0';
  for (int i = 0; i < n; i++) {
    if (i) strncat(buf, ",", len - strlen(buf) - 1);
    strncat(buf, block_name(sch, rvs[i]), len - strlen(buf) - 1);
  }
  return buf;
}

static void get_block_finds_by_name_and_records(void **state) {
  sch_t *sch = st_schedule(CHAIN);
  sch_rv_t c = block_of(sch, "C");
  assert_int_equal(sch_rv_kind(sch, c), SCH_RV_BLOCK);
  assert_string_equal(block_name(sch, c), "C");
  sch_rv_t root = block_of(sch, "root");
  assert_string_equal(block_name(sch, root), "root");
  const sch_trace_t *t = sch_get_trace(sch);
  assert_int_equal(t->n, 2);
  const sch_inst_t *inst = &t->insts[0];
  assert_ptr_equal(inst->kind, &sch_inst_kinds[SCH_INST_GET_BLOCK]);
  assert_int_equal(inst->ninputs, 0);
  assert_int_equal(inst->nattrs, 2);
  assert_string_equal(inst->attrs[0].u.s, "C");
  assert_string_equal(inst->attrs[1].u.s, "main");
  assert_int_equal(inst->noutputs, 1);
  assert_int_equal(inst->outputs[0], c);
  sch_free(sch);
}

static void get_block_of_unknown_name_fails(void **state) {
  sch_t *sch = st_schedule(CHAIN);
  sch_rv_t b = 5;
  st_assert_fails(sch, sch_get_block(sch, &b, "X"), "get_block: no block named \"X\"", CHAIN);
  assert_string_equal(sch_error(sch), "get_block: no block named \"X\"");
  assert_int_equal(b, SCH_RV_NONE);
  assert_int_equal(sch_get_trace(sch)->n, 0);
  assert_int_equal(sch_get_trace(sch)->nrvs, 0);
  sch_free(sch);
}

static void get_loops_outer_first_and_records(void **state) {
  sch_t *sch = st_schedule(CHAIN);
  sch_rv_t d = block_of(sch, "D");
  const sch_rv_t *loops;
  int n;
  assert_int_equal(sch_get_loops(sch, &loops, &n, d), MLC_OK);
  assert_int_equal(n, 2);
  assert_string_equal(loop_name(sch, loops[0]), "i");
  assert_string_equal(loop_name(sch, loops[1]), "j");
  assert_int_equal(sch_rv_kind(sch, loops[0]), SCH_RV_LOOP);
  /* D's loops, not B's (same names, different loops). */
  tir_stmt_t *l0 = NULL;
  sch_get_loop_node(sch, loops[0], &l0);
  sch_path_t path;
  assert_true(sch_find_block_by_name(sch, "D", &path));
  assert_ptr_equal(path.stmts[path.n - 3], l0);
  const sch_inst_t *inst = &sch_get_trace(sch)->insts[1];
  assert_ptr_equal(inst->kind, &sch_inst_kinds[SCH_INST_GET_LOOPS]);
  assert_int_equal(inst->ninputs, 1);
  assert_int_equal(inst->inputs[0].u.rv, d);
  assert_int_equal(inst->noutputs, 2);
  assert_int_equal(inst->outputs[0], loops[0]);
  assert_int_equal(inst->outputs[1], loops[1]);
  sch_free(sch);
}

/* Loops stop at the enclosing block and pass over an `if`. */
static void get_loops_stops_at_enclosing_block(void **state) {
  sch_t *sch = st_schedule(NESTED);
  const sch_rv_t *loops;
  int n;
  assert_int_equal(sch_get_loops(sch, &loops, &n, block_of(sch, "inner")), MLC_OK);
  assert_int_equal(n, 2);
  assert_string_equal(loop_name(sch, loops[0]), "ii");
  assert_string_equal(loop_name(sch, loops[1]), "j");
  assert_int_equal(sch_get_loops(sch, &loops, &n, block_of(sch, "outer")), MLC_OK);
  assert_int_equal(n, 1);
  assert_string_equal(loop_name(sch, loops[0]), "io");
  assert_int_equal(sch_get_loops(sch, &loops, &n, block_of(sch, "root")), MLC_OK);
  assert_int_equal(n, 0);
  sch_free(sch);
}

static void get_loops_of_a_loop_rv_fails(void **state) {
  sch_t *sch = st_schedule(CHAIN);
  const sch_rv_t *loops;
  int n;
  assert_int_equal(sch_get_loops(sch, &loops, &n, block_of(sch, "B")), MLC_OK);
  int ntrace = sch_get_trace(sch)->n;
  st_assert_fails(sch, sch_get_loops(sch, &loops, &n, 1),
                  "get_loops: random variable 1 is a loop variable, expected a block", CHAIN);
  assert_int_equal(n, 0);
  assert_int_equal(sch_get_trace(sch)->n, ntrace);
  sch_free(sch);
}

static void get_child_blocks_of_block_and_loop(void **state) {
  sch_t *sch = st_schedule(NESTED);
  const sch_rv_t *kids;
  int n;
  char buf[128];
  assert_int_equal(sch_get_child_blocks(sch, &kids, &n, block_of(sch, "root")), MLC_OK);
  assert_string_equal(block_names(sch, kids, n, buf, sizeof buf), "outer"); /* not inner: nested deeper */
  assert_int_equal(sch_get_child_blocks(sch, &kids, &n, block_of(sch, "outer")), MLC_OK);
  assert_string_equal(block_names(sch, kids, n, buf, sizeof buf), "inner");
  const sch_rv_t *loops;
  int nloops;
  assert_int_equal(sch_get_loops(sch, &loops, &nloops, block_of(sch, "outer")), MLC_OK);
  assert_int_equal(sch_get_child_blocks(sch, &kids, &n, loops[0]), MLC_OK);
  assert_string_equal(block_names(sch, kids, n, buf, sizeof buf), "outer");
  const sch_inst_t *inst = &sch_get_trace(sch)->insts[sch_get_trace(sch)->n - 1];
  assert_ptr_equal(inst->kind, &sch_inst_kinds[SCH_INST_GET_CHILD_BLOCKS]);
  assert_int_equal(inst->inputs[0].u.rv, loops[0]);
  assert_int_equal(inst->noutputs, 1);
  sch_free(sch);

  sch = st_schedule(CHAIN);
  assert_int_equal(sch_get_child_blocks(sch, &kids, &n, block_of(sch, "root")), MLC_OK);
  assert_string_equal(block_names(sch, kids, n, buf, sizeof buf), "B,C,D");
  assert_int_equal(sch_get_child_blocks(sch, &kids, &n, block_of(sch, "C")), MLC_OK);
  assert_int_equal(n, 0);
  sch_free(sch);
}

static void producers_and_consumers_in_program_order(void **state) {
  sch_t *sch = st_schedule(CHAIN);
  const sch_rv_t *rvs;
  int n;
  char buf[128];
  assert_int_equal(sch_get_producers(sch, &rvs, &n, block_of(sch, "D")), MLC_OK);
  assert_string_equal(block_names(sch, rvs, n, buf, sizeof buf), "B,C");
  assert_int_equal(sch_get_producers(sch, &rvs, &n, block_of(sch, "C")), MLC_OK);
  assert_string_equal(block_names(sch, rvs, n, buf, sizeof buf), "B");
  assert_int_equal(sch_get_producers(sch, &rvs, &n, block_of(sch, "B")), MLC_OK);
  assert_int_equal(n, 0);
  assert_int_equal(sch_get_consumers(sch, &rvs, &n, block_of(sch, "B")), MLC_OK);
  assert_string_equal(block_names(sch, rvs, n, buf, sizeof buf), "C,D");
  assert_int_equal(sch_get_consumers(sch, &rvs, &n, block_of(sch, "D")), MLC_OK);
  assert_int_equal(n, 0);
  const sch_inst_t *inst = &sch_get_trace(sch)->insts[sch_get_trace(sch)->n - 1];
  assert_ptr_equal(inst->kind, &sch_inst_kinds[SCH_INST_GET_CONSUMERS]);
  assert_int_equal(inst->noutputs, 0);
  sch_free(sch);
}

/* As TVM, write-after-write edges count: init produces for update. */
static void producers_include_earlier_writers_of_the_output(void **state) {
  sch_t *sch = st_schedule(DECOMPOSED);
  const sch_rv_t *rvs;
  int n;
  char buf[128];
  assert_int_equal(sch_get_producers(sch, &rvs, &n, block_of(sch, "update")), MLC_OK);
  assert_string_equal(block_names(sch, rvs, n, buf, sizeof buf), "init");
  assert_int_equal(sch_get_consumers(sch, &rvs, &n, block_of(sch, "init")), MLC_OK);
  assert_string_equal(block_names(sch, rvs, n, buf, sizeof buf), "update,E");
  assert_int_equal(sch_get_producers(sch, &rvs, &n, block_of(sch, "E")), MLC_OK);
  assert_string_equal(block_names(sch, rvs, n, buf, sizeof buf), "init,update");
  sch_free(sch);
}

/* Dependences are within the block's own scope. */
static void producers_of_nested_block_are_in_its_scope(void **state) {
  sch_t *sch = st_schedule(NESTED);
  const sch_rv_t *rvs;
  int n;
  assert_int_equal(sch_get_producers(sch, &rvs, &n, block_of(sch, "inner")), MLC_OK);
  assert_int_equal(n, 0);
  int ntrace = sch_get_trace(sch)->n;
  st_assert_fails(sch, sch_get_consumers(sch, &rvs, &n, block_of(sch, "root")),
                  "get_consumers: block root is the root block, which has no scope", NESTED);
  assert_int_equal(sch_get_trace(sch)->n, ntrace + 1); /* the get_block only */
  sch_free(sch);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(get_block_finds_by_name_and_records),
      cmocka_unit_test(get_block_of_unknown_name_fails),
      cmocka_unit_test(get_loops_outer_first_and_records),
      cmocka_unit_test(get_loops_stops_at_enclosing_block),
      cmocka_unit_test(get_loops_of_a_loop_rv_fails),
      cmocka_unit_test(get_child_blocks_of_block_and_loop),
      cmocka_unit_test(producers_and_consumers_in_program_order),
      cmocka_unit_test(producers_include_earlier_writers_of_the_output),
      cmocka_unit_test(producers_of_nested_block_are_in_its_scope),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
