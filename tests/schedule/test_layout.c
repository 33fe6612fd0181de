/*
 * test_layout.c - set_scope, storage_align and transform_layout: the exact
 * TVMScript after each (TVM's expected outputs, adapted), the interpreter's
 * agreement on random inputs, what each records in the trace (and that the
 * trace replays to the same program), and every precondition's error.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "schedule/primitive/storage.h"
#include "sched_testing.h"

/* ---- programs (sources, then expected results) -------------------------- */

static const char SRC_EW[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((64, 64), \"float32\"), C: T.Buffer((64, 64), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
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

static const char SRC_SUB[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((64, 64), \"float32\"), C: T.Buffer((64, 64), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    B = T.alloc_buffer((64, 64))\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(A[vi, vj])\n"
    "            T.writes(B[vi, vj])\n"
    "            B_sub = T.match_buffer(B[vi, vj], (), offset_factor=1)\n"
    "            B_sub[()] = A[vi, vj] * T.float32(2)\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(B[vi, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            C[vi, vj] = B[vi, vj] + T.float32(1)\n";

static const char SRC_BADANNOT[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((64, 64), \"float32\"), C: T.Buffer((64, 64), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    B = T.alloc_buffer((64, 64))\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(A[vi, vj])\n"
    "            T.writes(B[vi, vj])\n"
    "            T.block_attr({\"buffer_dim_align\": [0]})\n"
    "            B[vi, vj] = A[vi, vj] * T.float32(2)\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(B[vi, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            C[vi, vj] = B[vi, vj] + T.float32(1)\n";

static const char EXP_EW_SS[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((64, 64), \"float32\"), C: T.Buffer((64, 64), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    B_shared = T.alloc_buffer((64, 64), scope=\"shared\")\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(A[vi, vj])\n"
    "            T.writes(B_shared[vi, vj])\n"
    "            B_shared[vi, vj] = A[vi, vj] * T.float32(2)\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(B_shared[vi, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            C[vi, vj] = B_shared[vi, vj] + T.float32(1)\n";

static const char EXP_SUB_SS[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((64, 64), \"float32\"), C: T.Buffer((64, 64), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    B_shared = T.alloc_buffer((64, 64), scope=\"shared\")\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(A[vi, vj])\n"
    "            T.writes(B_shared[vi, vj])\n"
    "            B_sub_shared = T.match_buffer(B_shared[vi, vj], (), scope=\"shared\", offset_factor=1)\n"
    "            B_sub_shared[()] = A[vi, vj] * T.float32(2)\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(B_shared[vi, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            C[vi, vj] = B_shared[vi, vj] + T.float32(1)\n";

static const char EXP_EW_SA[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((64, 64), \"float32\"), C: T.Buffer((64, 64), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    B = T.alloc_buffer((64, 64))\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(A[vi, vj])\n"
    "            T.writes(B[vi, vj])\n"
    "            T.block_attr({\"buffer_dim_align\": [[0, 0, 64, 63]]})\n"
    "            B[vi, vj] = A[vi, vj] * T.float32(2)\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(B[vi, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            C[vi, vj] = B[vi, vj] + T.float32(1)\n";

static const char EXP_EW_SA3[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((64, 64), \"float32\"), C: T.Buffer((64, 64), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    B = T.alloc_buffer((64, 64))\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(A[vi, vj])\n"
    "            T.writes(B[vi, vj])\n"
    "            T.block_attr({\"buffer_dim_align\": [[0, 0, 64, 1], [0, 1, 32, 8]]})\n"
    "            B[vi, vj] = A[vi, vj] * T.float32(2)\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(B[vi, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            C[vi, vj] = B[vi, vj] + T.float32(1)\n";

static const char EXP_EW_TL[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((64, 64), \"float32\"), C: T.Buffer((64, 64), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    B = T.alloc_buffer((16, 64, 4))\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(A[vi, vj])\n"
    "            T.writes(B[vi // 4, vj, vi % 4])\n"
    "            B[vi // 4, vj, vi % 4] = A[vi, vj] * T.float32(2)\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(B[vi // 4, vj, vi % 4])\n"
    "            T.writes(C[vi, vj])\n"
    "            C[vi, vj] = B[vi // 4, vj, vi % 4] + T.float32(1)\n";

static const char EXP_EW_TL2[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((64, 64), \"float32\"), C: T.Buffer((64, 64), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    B = T.alloc_buffer((8, 8, 64))\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(A[vi, vj])\n"
    "            T.writes(B[vi // 8, vj // 8, vi % 8 * 8 + vj % 8])\n"
    "            B[vi // 8, vj // 8, vi % 8 * 8 + vj % 8] = A[vi, vj] * T.float32(2)\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(B[vi // 8, vj // 8, vi % 8 * 8 + vj % 8])\n"
    "            T.writes(C[vi, vj])\n"
    "            C[vi, vj] = B[vi // 8, vj // 8, vi % 8 * 8 + vj % 8] + T.float32(1)\n";

static const char EXP_EW_TLP[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((4096,), \"float32\"), C: T.Buffer((64, 64), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    B = T.alloc_buffer((64, 64))\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(A[vi * 64 + vj])\n"
    "            T.writes(B[vi, vj])\n"
    "            B[vi, vj] = A[vi * 64 + vj] * T.float32(2)\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(B[vi, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            C[vi, vj] = B[vi, vj] + T.float32(1)\n";

/* ---- helpers ------------------------------------------------------------ */

static sch_rv_t block_rv(sch_t *sch, const char *name) {
  sch_rv_t rv = SCH_RV_NONE;
  assert_int_equal(sch_get_block(sch, &rv, name), MLC_OK);
  return rv;
}

static const sch_inst_t *last_inst(const sch_t *sch) {
  const sch_trace_t *t = sch_get_trace(sch);
  assert_true(t->n > 0);
  return &t->insts[t->n - 1];
}

/* A failing call leaves the program as it was and records nothing. */
static void assert_rejected(sch_t *sch, int rc, const char *needle, const char *src) {
  int n = sch_get_trace(sch)->n;
  st_assert_fails(sch, rc, needle, src);
  assert_int_equal(sch_get_trace(sch)->n, n);
}

/* The schedule's trace, replayed on a fresh schedule of src, gives the same
 * program. */
static void assert_trace_replays(const sch_t *sch, const char *src) {
  sch_t *fresh = st_schedule(src);
  assert_int_equal(sch_trace_apply(fresh, sch_get_trace(sch), true), MLC_OK);
  char *want = tir_print_func(sch_func(sch));
  st_assert_script(sch_func(fresh), want);
  mlc_free(want);
  sch_free(fresh);
}

/* Index maps built by hand, in an arena the test frees (the schedule must
 * not keep the map's nodes). */
typedef struct {
  mlc_arena_t *arena;
  tir_var_t *i, *j;
} maps_t;

static maps_t maps_new(void) {
  maps_t m = {mlc_arena_new(), NULL, NULL};
  assert_non_null(m.arena);
  m.i = tir_var(m.arena, "i", tir_dt_INT32());
  m.j = tir_var(m.arena, "j", tir_dt_INT32());
  return m;
}

static tir_expr_t *c32(maps_t *m, int64_t v) { return tir_i32(m->arena, v); }
static tir_expr_t *op(maps_t *m, tir_expr_kind_t k, tir_expr_t *a, tir_expr_t *b) {
  return tir_binary(m->arena, k, a, b);
}

static sch_index_map_t map_of(maps_t *m, int nsrc, tir_expr_t *d0, tir_expr_t *d1, tir_expr_t *d2) {
  sch_index_map_t map;
  map.nsrc = nsrc;
  map.src = mlc_arena_alloc(m->arena, sizeof(tir_var_t *) * 2);
  map.src[0] = m->i;
  map.src[1] = m->j;
  map.dst = mlc_arena_alloc(m->arena, sizeof(tir_expr_t *) * 3);
  map.dst[0] = d0;
  map.dst[1] = d1;
  map.dst[2] = d2;
  map.ndst = d2 ? 3 : d1 ? 2 : 1;
  return map;
}

/* lambda i, j: (i // 4, j, i % 4,) */
static sch_index_map_t map_split_i(maps_t *m) {
  return map_of(m, 2, op(m, TIR_FLOOR_DIV, m->i, c32(m, 4)), m->j, op(m, TIR_FLOOR_MOD, m->i, c32(m, 4)));
}

/* ---- set_scope ---------------------------------------------------------- */

static void test_set_scope_moves_an_intermediate_buffer(void **state) {
  (void)state;
  sch_t *sch = st_schedule(SRC_EW);
  assert_int_equal(sch_set_scope(sch, block_rv(sch, "B"), 0, "shared"), MLC_OK);
  st_check(sch, SRC_EW, EXP_EW_SS);
  const sch_inst_t *inst = last_inst(sch);
  if (inst->kind) assert_string_equal(inst->kind->name, "SetScope");
  assert_int_equal(inst->ninputs, 1);
  assert_int_equal(inst->nattrs, 2);
  assert_int_equal(inst->attrs[0].u.i, 0);
  assert_string_equal(inst->attrs[1].u.s, "shared");
  assert_trace_replays(sch, SRC_EW);
  sch_free(sch);
}

static void test_set_scope_moves_match_buffer_views_too(void **state) {
  (void)state;
  sch_t *sch = st_schedule(SRC_SUB);
  assert_int_equal(sch_set_scope(sch, block_rv(sch, "B"), 0, "shared"), MLC_OK);
  st_check(sch, SRC_SUB, EXP_SUB_SS);
  sch_free(sch);
}

static void test_set_scope_to_the_same_scope_changes_nothing_but_is_recorded(void **state) {
  (void)state;
  sch_t *sch = st_schedule(SRC_EW);
  int n = sch_get_trace(sch)->n;
  assert_int_equal(sch_set_scope(sch, block_rv(sch, "B"), 0, "global"), MLC_OK);
  st_check(sch, SRC_EW, SRC_EW);
  assert_int_equal(sch_get_trace(sch)->n, n + 2); /* get_block, set_scope */
  sch_free(sch);
}

static void test_set_scope_rejects_what_it_cannot_move(void **state) {
  (void)state;
  sch_t *sch = st_schedule(SRC_EW);
  assert_rejected(sch, sch_set_scope(sch, block_rv(sch, "C"), 0, "shared"),
                  "set_scope: buffer C is a function parameter", SRC_EW);
  assert_rejected(sch, sch_set_scope(sch, block_rv(sch, "B"), 1, "shared"),
                  "set_scope: write buffer index 1 is out of range for block B, which writes 1 buffer", SRC_EW);
  assert_rejected(sch, sch_set_scope(sch, block_rv(sch, "B"), -1, "shared"),
                  "set_scope: write buffer index -1 is out of range", SRC_EW);
  assert_rejected(sch, sch_set_scope(sch, block_rv(sch, "B"), 0, "test_scope"),
                  "set_scope: invalid storage scope \"test_scope\"", SRC_EW);
  sch_free(sch);
}

/* ---- storage_align ------------------------------------------------------ */

static void test_storage_align_annotates_the_writing_block(void **state) {
  (void)state;
  sch_t *sch = st_schedule(SRC_EW);
  assert_int_equal(sch_storage_align(sch, block_rv(sch, "B"), 0, 0, 64, 63), MLC_OK);
  st_check(sch, SRC_EW, EXP_EW_SA);
  const sch_inst_t *inst = last_inst(sch);
  if (inst->kind) assert_string_equal(inst->kind->name, "StorageAlign");
  assert_int_equal(inst->nattrs, 4);
  int64_t want[4] = {0, 0, 64, 63};
  for (int k = 0; k < 4; k++) assert_int_equal(inst->attrs[k].u.i, want[k]);
  assert_trace_replays(sch, SRC_EW);
  sch_free(sch);
}

static void test_storage_align_replaces_the_same_axis_and_appends_others(void **state) {
  (void)state;
  sch_t *sch = st_schedule(SRC_EW);
  sch_rv_t b = block_rv(sch, "B");
  assert_int_equal(sch_storage_align(sch, b, 0, 0, 64, 63), MLC_OK);
  assert_int_equal(sch_storage_align(sch, b, 0, 0, 64, 1), MLC_OK);
  /* axis -1 is the last axis, stored as 1; the trace keeps -1 as given. */
  assert_int_equal(sch_storage_align(sch, b, 0, -1, 32, 8), MLC_OK);
  st_check(sch, SRC_EW, EXP_EW_SA3);
  assert_int_equal(last_inst(sch)->attrs[1].u.i, -1);
  assert_trace_replays(sch, SRC_EW);
  sch_free(sch);
}

static void test_storage_align_rejects_bad_arguments(void **state) {
  (void)state;
  sch_t *sch = st_schedule(SRC_EW);
  sch_rv_t b = block_rv(sch, "B");
  assert_rejected(sch, sch_storage_align(sch, b, 0, 0, 0, 1), "storage_align: factor must be positive, got 0", SRC_EW);
  assert_rejected(sch, sch_storage_align(sch, b, 0, 0, -1, 1), "factor must be positive, got -1", SRC_EW);
  assert_rejected(sch, sch_storage_align(sch, b, 0, 2, 64, 1),
                  "storage_align: axis 2 is out of range for buffer B, which has 2 dimensions", SRC_EW);
  assert_rejected(sch, sch_storage_align(sch, b, 0, -3, 64, 1), "axis -3 is out of range", SRC_EW);
  assert_rejected(sch, sch_storage_align(sch, b, 1, 0, 64, 1),
                  "storage_align: write buffer index 1 is out of range for block B", SRC_EW);
  assert_rejected(sch, sch_storage_align(sch, block_rv(sch, "C"), 0, 0, 64, 1),
                  "storage_align: buffer C is a function parameter", SRC_EW);
  sch_free(sch);
  sch = st_schedule(SRC_BADANNOT);
  assert_rejected(sch, sch_storage_align(sch, block_rv(sch, "B"), 0, 0, 64, 1),
                  "storage_align: block B has a buffer_dim_align annotation that is not a list of "
                  "[buffer_index, axis, factor, offset]", SRC_BADANNOT);
  sch_free(sch);
}

/* ---- transform_layout --------------------------------------------------- */

static void test_transform_layout_splits_an_intermediate_buffer(void **state) {
  (void)state;
  maps_t m = maps_new();
  sch_index_map_t map = map_split_i(&m);
  sch_t *sch = st_schedule(SRC_EW);
  assert_int_equal(sch_transform_layout(sch, block_rv(sch, "B"), 0, SCH_BUFFER_WRITE, &map), MLC_OK);
  mlc_arena_free(m.arena); /* the schedule kept copies */
  st_check(sch, SRC_EW, EXP_EW_TL);
  const sch_inst_t *inst = last_inst(sch);
  if (inst->kind) assert_string_equal(inst->kind->name, "TransformLayout");
  assert_int_equal(inst->nattrs, 3);
  assert_int_equal(inst->attrs[0].u.i, 0);
  assert_int_equal(inst->attrs[1].u.i, 1);
  assert_string_equal(inst->attrs[2].u.s, "lambda i, j: (i // 4, j, i % 4,)");
  assert_trace_replays(sch, SRC_EW);
  sch_free(sch);
}

static void test_transform_layout_through_a_reader_gives_the_same_result(void **state) {
  (void)state;
  maps_t m = maps_new();
  sch_index_map_t map = map_split_i(&m);
  sch_t *sch = st_schedule(SRC_EW);
  assert_int_equal(sch_transform_layout(sch, block_rv(sch, "C"), 0, SCH_BUFFER_READ, &map), MLC_OK);
  st_check(sch, SRC_EW, EXP_EW_TL);
  assert_int_equal(last_inst(sch)->attrs[1].u.i, 0);
  sch_free(sch);
  mlc_arena_free(m.arena);
}

static void test_transform_layout_tiles_two_axes_into_one(void **state) {
  (void)state;
  /* lambda i, j: (i // 8, j // 8, i % 8 * 8 + j % 8,) */
  maps_t m = maps_new();
  tir_expr_t *inner = op(&m, TIR_ADD, op(&m, TIR_MUL, op(&m, TIR_FLOOR_MOD, m.i, c32(&m, 8)), c32(&m, 8)),
                         op(&m, TIR_FLOOR_MOD, m.j, c32(&m, 8)));
  sch_index_map_t map = map_of(&m, 2, op(&m, TIR_FLOOR_DIV, m.i, c32(&m, 8)), op(&m, TIR_FLOOR_DIV, m.j, c32(&m, 8)),
                               inner);
  sch_t *sch = st_schedule(SRC_EW);
  assert_int_equal(sch_transform_layout(sch, block_rv(sch, "B"), 0, SCH_BUFFER_WRITE, &map), MLC_OK);
  st_check(sch, SRC_EW, EXP_EW_TL2);
  assert_trace_replays(sch, SRC_EW);
  sch_free(sch);
  mlc_arena_free(m.arena);
}

/* Runs f on A (64x64, values a), returns C. */
static void run_ew(const tir_func_t *f, const float *a, int64_t a_ndim, float *c) {
  tir_arg_t args[2];
  memset(args, 0, sizeof args);
  args[0].data = (void *)a;
  args[0].dtype = tir_dt_FLOAT32();
  args[0].ndim = (int)a_ndim;
  args[0].shape[0] = a_ndim == 1 ? 4096 : 64;
  args[0].shape[1] = 64;
  args[1] = args[0];
  args[1].data = c;
  args[1].ndim = 2;
  args[1].shape[0] = 64;
  assert_int_equal(tir_interp_run(f, args, 2), MLC_OK);
}

static void test_transform_layout_reshapes_a_parameter(void **state) {
  (void)state;
  /* lambda i, j: (i * 64 + j,): A becomes a flat 4096-element parameter. */
  maps_t m = maps_new();
  sch_index_map_t map = map_of(&m, 2, op(&m, TIR_ADD, op(&m, TIR_MUL, m.i, c32(&m, 64)), m.j), NULL, NULL);
  sch_t *sch = st_schedule(SRC_EW);
  assert_int_equal(sch_transform_layout(sch, block_rv(sch, "B"), 0, SCH_BUFFER_READ, &map), MLC_OK);
  st_assert_script(sch_func(sch), EXP_EW_TLP);
  assert_int_equal(sch_func(sch)->buffer_map[0]->ndim, 1);
  /* Row-major data is the same bytes in either layout. */
  static float a[4096], c1[4096], c2[4096];
  for (int k = 0; k < 4096; k++) a[k] = (float)(k % 97);
  tir_func_t *orig = st_parse(SRC_EW);
  run_ew(orig, a, 2, c1);
  run_ew(sch_func(sch), a, 1, c2);
  assert_memory_equal(c1, c2, sizeof c1);
  tir_func_free(orig);
  assert_trace_replays(sch, SRC_EW);
  sch_free(sch);
  mlc_arena_free(m.arena);
}

static void test_transform_layout_rejects_maps_that_are_not_bijections(void **state) {
  (void)state;
  maps_t m = maps_new();
  sch_t *sch = st_schedule(SRC_EW);
  sch_rv_t b = block_rv(sch, "B");
  sch_index_map_t pad = map_of(&m, 2, op(&m, TIR_FLOOR_DIV, m.i, c32(&m, 3)), m.j, op(&m, TIR_FLOOR_MOD, m.i, c32(&m, 3)));
  assert_rejected(sch, sch_transform_layout(sch, b, 0, SCH_BUFFER_WRITE, &pad),
                  "transform_layout: the index map pads buffer B from 4096 to 4224 elements (padding is not "
                  "supported)", SRC_EW);
  sch_index_map_t sparse = map_of(&m, 2, op(&m, TIR_MUL, m.i, c32(&m, 2)), m.j, NULL);
  assert_rejected(sch, sch_transform_layout(sch, b, 0, SCH_BUFFER_WRITE, &sparse),
                  "the index map pads buffer B from 4096 to 8128 elements", SRC_EW);
  sch_index_map_t twice = map_of(&m, 2, m.i, m.i, NULL);
  assert_rejected(sch, sch_transform_layout(sch, b, 0, SCH_BUFFER_WRITE, &twice),
                  "transform_layout: the index map is not a bijection on buffer B: iterator i used twice", SRC_EW);
  sch_index_map_t shifted = map_of(&m, 2, op(&m, TIR_ADD, m.i, c32(&m, 1)), m.j, NULL);
  assert_rejected(sch, sch_transform_layout(sch, b, 0, SCH_BUFFER_WRITE, &shifted),
                  "transform_layout: output 0 of the index map does not start at 0 on buffer B", SRC_EW);
  sch_free(sch);
  mlc_arena_free(m.arena);
}

static void test_transform_layout_rejects_bad_targets(void **state) {
  (void)state;
  maps_t m = maps_new();
  sch_index_map_t one = map_of(&m, 1, m.i, NULL, NULL);
  sch_index_map_t ok = map_split_i(&m);
  sch_t *sch = st_schedule(SRC_EW);
  sch_rv_t b = block_rv(sch, "B");
  assert_rejected(sch, sch_transform_layout(sch, b, 0, SCH_BUFFER_WRITE, &one),
                  "transform_layout: the index map takes 1 indices but buffer B has 2 dimensions", SRC_EW);
  assert_rejected(sch, sch_transform_layout(sch, b, 1, SCH_BUFFER_WRITE, &ok),
                  "transform_layout: write buffer index 1 is out of range for block B, which writes 1 buffer", SRC_EW);
  assert_rejected(sch, sch_transform_layout(sch, b, 1, SCH_BUFFER_READ, &ok),
                  "transform_layout: read buffer index 1 is out of range for block B, which reads 1 buffer", SRC_EW);
  /* A map reading a variable that is not its own. */
  tir_var_t *k = tir_var(m.arena, "k", tir_dt_INT32());
  sch_index_map_t foreign = map_of(&m, 2, k, m.j, NULL);
  assert_rejected(sch, sch_transform_layout(sch, b, 0, SCH_BUFFER_WRITE, &foreign),
                  "transform_layout: the index map may only use its own variables", SRC_EW);
  sch_free(sch);
  /* B is viewed through a match_buffer in SRC_SUB: the view would go stale. */
  sch = st_schedule(SRC_SUB);
  assert_rejected(sch, sch_transform_layout(sch, block_rv(sch, "C"), 0, SCH_BUFFER_READ, &ok),
                  "transform_layout: buffer B is viewed by a match_buffer of block B", SRC_SUB);
  sch_free(sch);
  mlc_arena_free(m.arena);
}

/* ---- index map text ------------------------------------------------------ */

static void test_index_maps_print_as_tvm_lambdas(void **state) {
  (void)state;
  maps_t m = maps_new();
  sch_index_map_t map = map_split_i(&m);
  assert_string_equal(sch_index_map_str(m.arena, &map), "lambda i, j: (i // 4, j, i % 4,)");
  sch_index_map_t one = map_of(&m, 1, op(&m, TIR_MUL, m.i, c32(&m, 2)), NULL, NULL);
  assert_string_equal(sch_index_map_str(m.arena, &one), "lambda i: (i * 2,)");
  /* Names that would not read back are replaced. */
  m.j = tir_var(m.arena, "i", tir_dt_INT32());
  sch_index_map_t clash = map_of(&m, 2, m.j, m.i, NULL);
  assert_string_equal(sch_index_map_str(m.arena, &clash), "lambda i0, i1: (i1, i0,)");
  mlc_arena_free(m.arena);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_set_scope_moves_an_intermediate_buffer),
      cmocka_unit_test(test_set_scope_moves_match_buffer_views_too),
      cmocka_unit_test(test_set_scope_to_the_same_scope_changes_nothing_but_is_recorded),
      cmocka_unit_test(test_set_scope_rejects_what_it_cannot_move),
      cmocka_unit_test(test_storage_align_annotates_the_writing_block),
      cmocka_unit_test(test_storage_align_replaces_the_same_axis_and_appends_others),
      cmocka_unit_test(test_storage_align_rejects_bad_arguments),
      cmocka_unit_test(test_transform_layout_splits_an_intermediate_buffer),
      cmocka_unit_test(test_transform_layout_through_a_reader_gives_the_same_result),
      cmocka_unit_test(test_transform_layout_tiles_two_axes_into_one),
      cmocka_unit_test(test_transform_layout_reshapes_a_parameter),
      cmocka_unit_test(test_transform_layout_rejects_maps_that_are_not_bijections),
      cmocka_unit_test(test_transform_layout_rejects_bad_targets),
      cmocka_unit_test(test_index_maps_print_as_tvm_lambdas),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
