/*
 * test_blockize_tensorize.c - blockize (outer block `<name>_o` over the
 * divided bindings, init moved out, regions relaxed) and tensorize (match
 * against an intrinsic's description, body replaced by its implementation
 * with T.match_buffer tiles): exact TVMScript, the interpreter's outputs where
 * the result is interpretable (an "identity" intrinsic whose implementation
 * is its description), the x86 intrinsics' exact text, trace entries, and
 * the failures.
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

/* A 16x16x16 matmul tile as an intrinsic whose implementation is its own
 * description, so the tensorized program still runs in the interpreter. */
static const char *const MM16 =
    "@T.prim_func\n"
    "def mm16(a: T.handle, b: T.handle, c: T.handle):\n"
    "    s0 = T.int32()\n"
    "    s1 = T.int32()\n"
    "    s2 = T.int32()\n"
    "    A = T.match_buffer(a, (16, 16), strides=(s0, 1), offset_factor=1)\n"
    "    B = T.match_buffer(b, (16, 16), strides=(s1, 1), offset_factor=1)\n"
    "    C = T.match_buffer(c, (16, 16), strides=(s2, 1), offset_factor=1)\n"
    "    with T.block(\"root\"):\n"
    "        T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])\n"
    "        T.writes(C[0:16, 0:16])\n"
    "        for i, j, k in T.grid(16, 16, 16):\n"
    "            with T.block(\"mm16\"):\n"
    "                vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

static int register_test_intrinsic(void **state) {
  return sch_intrin_register("test_mm16", MM16, MM16) == MLC_OK ? 0 : -1;
}

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

/* MATMUL (32^3) tiled by 16 on every axis, loops i_0 j_0 k_0 i_1 j_1 k_1; the inner
 * loop RVs in tile[0..2]. With decompose, the init goes before k_0. */
static sch_t *tiled_matmul(sch_rv_t tile[3], bool decompose) {
  sch_t *sch = st_schedule(MATMUL);
  int n;
  const sch_rv_t *l = loops_of(sch, "C", &n);
  sch_rv_t axes[3] = {l[0], l[1], l[2]}, outer[3];
  sch_arg_t f[2] = {sch_arg_none(), sch_arg_int(16)};
  for (int a = 0; a < 3; a++) {
    const sch_rv_t *parts;
    assert_int_equal(sch_split(sch, &parts, axes[a], f, 2, true), MLC_OK);
    outer[a] = parts[0];
    tile[a] = parts[1];
  }
  sch_rv_t order[6] = {outer[0], outer[1], outer[2], tile[0], tile[1], tile[2]};
  assert_int_equal(sch_reorder(sch, order, 6), MLC_OK);
  if (decompose) {
    sch_rv_t init;
    assert_int_equal(sch_decompose_reduction(sch, &init, block_of(sch, "C"), outer[2]), MLC_OK);
  }
  return sch;
}

/* ------------------------------------------------------------------------ */
/* blockize                                                                  */
/* ------------------------------------------------------------------------ */

static void blockize_inner_tile_of_tiled_matmul(void **state) {
  sch_rv_t tile[3], outer;
  sch_t *sch = tiled_matmul(tile, false);
  assert_int_equal(sch_blockize(sch, &outer, tile[0], true), MLC_OK);
  st_check(sch, MATMUL,
           "# from tvm.script import tir as T\n"
           "\n"
           "@T.prim_func\n"
           "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\"), C: T.Buffer((32, 32), \"float32\")):\n"
           "    # with T.block(\"root\"):\n"
           "    for i_0, j_0, k_0 in T.grid(2, 2, 2):\n"
           "        with T.block(\"C_o\"):\n"
           "            vi_o, vj_o, vk_o = T.axis.remap(\"SSR\", [i_0, j_0, k_0])\n"
           "            T.reads(A[vi_o * 16:vi_o * 16 + 16, vk_o * 16:vk_o * 16 + 16], B[vk_o * 16:vk_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])\n"
           "            T.writes(C[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])\n"
           "            with T.init():\n"
           "                for i_1, j_1 in T.grid(16, 16):\n"
           "                    with T.block(\"C_init\"):\n"
           "                        vi_i_init, vj_i_init = T.axis.remap(\"SS\", [i_1, j_1])\n"
           "                        T.reads()\n"
           "                        T.writes(C[vi_o * 16 + vi_i_init, vj_o * 16 + vj_i_init])\n"
           "                        C[vi_o * 16 + vi_i_init, vj_o * 16 + vj_i_init] = T.float32(0)\n"
           "            for i_1, j_1, k_1 in T.grid(16, 16, 16):\n"
           "                with T.block(\"C\"):\n"
           "                    vi_i, vj_i, vk_i = T.axis.remap(\"SSR\", [i_1, j_1, k_1])\n"
           "                    T.reads(C[vi_o * 16 + vi_i, vj_o * 16 + vj_i], A[vi_o * 16 + vi_i, vk_o * 16 + vk_i], B[vk_o * 16 + vk_i, vj_o * 16 + vj_i])\n"
           "                    T.writes(C[vi_o * 16 + vi_i, vj_o * 16 + vj_i])\n"
           "                    C[vi_o * 16 + vi_i, vj_o * 16 + vj_i] = C[vi_o * 16 + vi_i, vj_o * 16 + vj_i] + A[vi_o * 16 + vi_i, vk_o * 16 + vk_i] * B[vk_o * 16 + vk_i, vj_o * 16 + vj_i]\n");
  const sch_inst_t *last = &sch_get_trace(sch)->insts[sch_get_trace(sch)->n - 1];
  assert_ptr_equal(last->kind, &sch_inst_kinds[SCH_INST_BLOCKIZE]);
  assert_int_equal(last->attrs[0].u.i, 1);
  assert_int_equal(last->outputs[0], outer);
  tir_block_t *b;
  assert_int_equal(sch_get_block_node(sch, outer, &b), MLC_OK);
  assert_string_equal(b->name, "C_o");
  /* The inner block keeps the name (and uid) of the original. */
  assert_int_equal(sch_get_block_node(sch, block_of(sch, "C"), &b), MLC_OK);
  assert_int_equal(b->niter_vars, 3);
  sch_free(sch);
}

/* TVM's test_reduction_decompose1: the outer block's init (a loop nest with
 * its own block) becomes `C_o_init`. */
static void blockize_then_decompose_moves_the_init_nest_out(void **state) {
  sch_rv_t tile[3], outer, init;
  sch_t *sch = tiled_matmul(tile, false);
  assert_int_equal(sch_blockize(sch, &outer, tile[0], true), MLC_OK);
  int n;
  const sch_rv_t *l = loops_of(sch, "C_o", &n);
  assert_int_equal(n, 3);
  assert_int_equal(sch_decompose_reduction(sch, &init, outer, l[2]), MLC_OK);
  st_check(sch, MATMUL,
           "# from tvm.script import tir as T\n"
           "\n"
           "@T.prim_func\n"
           "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\"), C: T.Buffer((32, 32), \"float32\")):\n"
           "    # with T.block(\"root\"):\n"
           "    for i_0, j_0 in T.grid(2, 2):\n"
           "        with T.block(\"C_o_init\"):\n"
           "            vi_o, vj_o = T.axis.remap(\"SS\", [i_0, j_0])\n"
           "            T.reads()\n"
           "            T.writes(C[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])\n"
           "            for i_1, j_1 in T.grid(16, 16):\n"
           "                with T.block(\"C_init\"):\n"
           "                    vi_i_init, vj_i_init = T.axis.remap(\"SS\", [i_1, j_1])\n"
           "                    T.reads()\n"
           "                    T.writes(C[vi_o * 16 + vi_i_init, vj_o * 16 + vj_i_init])\n"
           "                    C[vi_o * 16 + vi_i_init, vj_o * 16 + vj_i_init] = T.float32(0)\n"
           "        for k_0 in range(2):\n"
           "            with T.block(\"C_o_update\"):\n"
           "                vi_o, vj_o, vk_o = T.axis.remap(\"SSR\", [i_0, j_0, k_0])\n"
           "                T.reads(C[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16], A[vi_o * 16:vi_o * 16 + 16, vk_o * 16:vk_o * 16 + 16], B[vk_o * 16:vk_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])\n"
           "                T.writes(C[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])\n"
           "                for i_1, j_1, k_1 in T.grid(16, 16, 16):\n"
           "                    with T.block(\"C\"):\n"
           "                        vi_i, vj_i, vk_i = T.axis.remap(\"SSR\", [i_1, j_1, k_1])\n"
           "                        T.reads(C[vi_o * 16 + vi_i, vj_o * 16 + vj_i], A[vi_o * 16 + vi_i, vk_o * 16 + vk_i], B[vk_o * 16 + vk_i, vj_o * 16 + vj_i])\n"
           "                        T.writes(C[vi_o * 16 + vi_i, vj_o * 16 + vj_i])\n"
           "                        C[vi_o * 16 + vi_i, vj_o * 16 + vj_i] = C[vi_o * 16 + vi_i, vj_o * 16 + vj_i] + A[vi_o * 16 + vi_i, vk_o * 16 + vk_i] * B[vk_o * 16 + vk_i, vj_o * 16 + vj_i]\n");
  sch_free(sch);
}

static const char *const ELEMENTWISE =
    "@T.prim_func\n"
    "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\")):\n"
    "    for i, j in T.grid(32, 32):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            B[vi, vj] = A[vi, vj] * T.float32(2)\n";

/* TVM's test_blockize_outer / test_blockize_inner. */
static void blockize_outermost_and_innermost_loops_of_elementwise(void **state) {
  sch_t *sch = st_schedule(ELEMENTWISE);
  int n;
  const sch_rv_t *l = loops_of(sch, "B", &n);
  sch_rv_t outer;
  assert_int_equal(sch_blockize(sch, &outer, l[0], false), MLC_OK);
  st_check(sch, ELEMENTWISE,
           "# from tvm.script import tir as T\n"
           "\n"
           "@T.prim_func\n"
           "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\")):\n"
           "    # with T.block(\"root\"):\n"
           "    with T.block(\"B_o\"):\n"
           "        vi_o = T.axis.spatial(1, 0)\n"
           "        vj_o = T.axis.spatial(1, 0)\n"
           "        T.reads(A[0:32, 0:32])\n"
           "        T.writes(B[0:32, 0:32])\n"
           "        for i, j in T.grid(32, 32):\n"
           "            with T.block(\"B\"):\n"
           "                vi_i, vj_i = T.axis.remap(\"SS\", [i, j])\n"
           "                T.reads(A[vi_i, vj_i])\n"
           "                T.writes(B[vi_i, vj_i])\n"
           "                B[vi_i, vj_i] = A[vi_i, vj_i] * T.float32(2)\n");
  sch_free(sch);

  sch = st_schedule(ELEMENTWISE);
  l = loops_of(sch, "B", &n);
  assert_int_equal(sch_blockize(sch, &outer, l[1], true), MLC_OK);
  st_check(sch, ELEMENTWISE,
           "# from tvm.script import tir as T\n"
           "\n"
           "@T.prim_func\n"
           "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\")):\n"
           "    # with T.block(\"root\"):\n"
           "    for i in range(32):\n"
           "        with T.block(\"B_o\"):\n"
           "            vi_o = T.axis.spatial(32, i)\n"
           "            vj_o = T.axis.spatial(1, 0)\n"
           "            T.reads(A[vi_o, 0:32])\n"
           "            T.writes(B[vi_o, 0:32])\n"
           "            for j in range(32):\n"
           "                with T.block(\"B\"):\n"
           "                    vj_i = T.axis.spatial(32, j)\n"
           "                    T.reads(A[vi_o, vj_i])\n"
           "                    T.writes(B[vi_o, vj_i])\n"
           "                    B[vi_o, vj_i] = A[vi_o, vj_i] * T.float32(2)\n");
  sch_free(sch);
}

/* TVM's test_blockize_outer_int64_shape (int32 here): a unit outer loop
 * stays in the outer binding only with preserve_unit_iters. */
static void blockize_preserves_unit_iters_on_request(void **state) {
  static const char *const UNIT =
      "@T.prim_func\n"
      "def main(A: T.Buffer((16, 128), \"float32\"), B: T.Buffer((16, 128), \"float32\")):\n"
      "    for i0, j0, i1, j1 in T.grid(1, 8, 16, 16):\n"
      "        with T.block(\"B\"):\n"
      "            vi = T.axis.spatial(16, i0 * 16 + i1)\n"
      "            vj = T.axis.spatial(128, j0 * 16 + j1)\n"
      "            B[vi, vj] = A[vi, vj] + T.float32(1)\n";
  for (int preserve = 0; preserve < 2; preserve++) {
    sch_t *sch = st_schedule(UNIT);
    int n;
    const sch_rv_t *l = loops_of(sch, "B", &n);
    sch_rv_t outer;
    assert_int_equal(sch_blockize(sch, &outer, l[2], preserve), MLC_OK);
    char expected[4096];
    snprintf(expected, sizeof expected,
             "# from tvm.script import tir as T\n"
             "\n"
             "@T.prim_func\n"
             "def main(A: T.Buffer((16, 128), \"float32\"), B: T.Buffer((16, 128), \"float32\")):\n"
             "    # with T.block(\"root\"):\n"
             "    for i0, j0 in T.grid(1, 8):\n"
             "        with T.block(\"B_o\"):\n"
             "            %s\n"
             "            T.reads(A[0:16, vj_o * 16:vj_o * 16 + 16])\n"
             "            T.writes(B[0:16, vj_o * 16:vj_o * 16 + 16])\n"
             "            for i1, j1 in T.grid(16, 16):\n"
             "                with T.block(\"B\"):\n"
             "                    vi_i, vj_i = T.axis.remap(\"SS\", [i1, j1])\n"
             "                    T.reads(A[vi_i, vj_o * 16 + vj_i])\n"
             "                    T.writes(B[vi_i, vj_o * 16 + vj_i])\n"
             "                    B[vi_i, vj_o * 16 + vj_i] = A[vi_i, vj_o * 16 + vj_i] + T.float32(1)\n",
             preserve ? "vi_o, vj_o = T.axis.remap(\"SS\", [i0, j0])"
                      : "vi_o = T.axis.spatial(1, 0)\n            vj_o = T.axis.spatial(8, j0)");
    st_check(sch, UNIT, expected);
    sch_free(sch);
  }
}

static void blockize_fails_on_indivisible_bindings_and_shared_loops(void **state) {
  static const char *const SKEW =
      "@T.prim_func\n"
      "def main(A: T.Buffer((12,), \"float32\"), B: T.Buffer((12,), \"float32\"), C: T.Buffer((12,), \"float32\")):\n"
      "    for i, j in T.grid(6, 6):\n"
      "        with T.block(\"B\"):\n"
      "            vi = T.axis.spatial(12, i + j)\n"
      "            B[vi] = A[vi]\n"
      "    for i in range(12):\n"
      "        with T.block(\"C\"):\n"
      "            vi = T.axis.spatial(12, i)\n"
      "            C[vi] = B[vi]\n"
      "        with T.block(\"D\"):\n"
      "            vi = T.axis.spatial(12, i)\n"
      "            C[vi] = C[vi] + B[vi]\n";
  sch_t *sch = st_schedule(SKEW);
  char *before = tir_print_func(sch_func(sch));
  int n;
  const sch_rv_t *l = loops_of(sch, "B", &n);
  sch_rv_t out;
  st_assert_fails(sch, sch_blockize(sch, &out, l[1], true), "blockize: the binding of vi in block B cannot be divided at loop j",
                  before);
  l = loops_of(sch, "C", &n);
  st_assert_fails(sch, sch_blockize(sch, &out, l[0], true), "blockize: loop i does not have exactly one block under it",
                  before);
  mlc_free(before);
  sch_free(sch);
}

/* ------------------------------------------------------------------------ */
/* tensorize                                                                 */
/* ------------------------------------------------------------------------ */

static const char *const TENSORIZED_MATMUL =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\"), C: T.Buffer((32, 32), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i_0, j_0 in T.grid(2, 2):\n"
    "        for i_1_init, j_1_init in T.grid(16, 16):\n"
    "            with T.block(\"C_init\"):\n"
    "                vi = T.axis.spatial(32, i_0 * 16 + i_1_init)\n"
    "                vj = T.axis.spatial(32, j_0 * 16 + j_1_init)\n"
    "                T.reads()\n"
    "                T.writes(C[vi, vj])\n"
    "                C[vi, vj] = T.float32(0)\n"
    "        for k_0 in range(2):\n"
    "            with T.block(\"C_update_o\"):\n"
    "                vi_o, vj_o, vk_o = T.axis.remap(\"SSR\", [i_0, j_0, k_0])\n"
    "                T.reads(C[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16], A[vi_o * 16:vi_o * 16 + 16, vk_o * 16:vk_o * 16 + 16], B[vk_o * 16:vk_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])\n"
    "                T.writes(C[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])\n"
    "                s0 = T.int32()\n"
    "                A_1 = T.match_buffer(A[vi_o * 16:vi_o * 16 + 16, vk_o * 16:vk_o * 16 + 16], (16, 16), strides=(s0, 1), offset_factor=1)\n"
    "                s1 = T.int32()\n"
    "                B_1 = T.match_buffer(B[vk_o * 16:vk_o * 16 + 16, vj_o * 16:vj_o * 16 + 16], (16, 16), strides=(s1, 1), offset_factor=1)\n"
    "                s2 = T.int32()\n"
    "                C_1 = T.match_buffer(C[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16], (16, 16), strides=(s2, 1), offset_factor=1)\n"
    "                for i, j, k in T.grid(16, 16, 16):\n"
    "                    with T.block(\"mm16\"):\n"
    "                        vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "                        T.reads(C_1[vi, vj], A_1[vi, vk], B_1[vk, vj])\n"
    "                        T.writes(C_1[vi, vj])\n"
    "                        C_1[vi, vj] = C_1[vi, vj] + A_1[vi, vk] * B_1[vk, vj]\n";

static void tensorize_loop_with_identity_intrinsic_computes_the_same(void **state) {
  sch_rv_t tile[3];
  sch_t *sch = tiled_matmul(tile, true);
  assert_int_equal(sch_tensorize(sch, tile[0], "test_mm16", true), MLC_OK);
  st_check(sch, MATMUL, TENSORIZED_MATMUL);
  const sch_inst_t *last = &sch_get_trace(sch)->insts[sch_get_trace(sch)->n - 1];
  assert_ptr_equal(last->kind, &sch_inst_kinds[SCH_INST_TENSORIZE]);
  assert_int_equal(last->ninputs, 1);
  assert_int_equal(last->nattrs, 2);
  assert_string_equal(last->attrs[0].u.s, "test_mm16");
  assert_int_equal(last->attrs[1].u.i, 1);
  assert_int_equal(last->noutputs, 0);
  sch_free(sch);
}

static void tensorize_blockized_block_gives_the_same_program(void **state) {
  sch_rv_t tile[3], outer;
  sch_t *sch = tiled_matmul(tile, true);
  assert_int_equal(sch_blockize(sch, &outer, tile[0], true), MLC_OK);
  assert_int_equal(sch_tensorize(sch, outer, "test_mm16", true), MLC_OK);
  st_check(sch, MATMUL, TENSORIZED_MATMUL);
  sch_free(sch);
}

static void tensorize_fails_on_tile_shape_mismatch_and_unknown_names(void **state) {
  sch_t *sch = st_schedule(MATMUL);
  int n;
  const sch_rv_t *l = loops_of(sch, "C", &n);
  sch_rv_t axes[3] = {l[0], l[1], l[2]}, parts[6];
  for (int a = 0; a < 3; a++) {
    sch_arg_t f[2] = {sch_arg_none(), sch_arg_int(a == 2 ? 8 : 16)};
    const sch_rv_t *p;
    assert_int_equal(sch_split(sch, &p, axes[a], f, 2, true), MLC_OK);
    parts[a] = p[0];
    parts[a + 3] = p[1];
  }
  assert_int_equal(sch_reorder(sch, parts, 6), MLC_OK);
  sch_rv_t init;
  assert_int_equal(sch_decompose_reduction(sch, &init, block_of(sch, "C"), parts[2]), MLC_OK);
  char *before = tir_print_func(sch_func(sch));
  int ninst = sch_get_trace(sch)->n;
  st_assert_fails(sch, sch_tensorize(sch, parts[3], "test_mm16", true),
                  "tensorize: block C_update_o does not match intrinsic test_mm16: region of A differs in extent", before);
  st_assert_fails(sch, sch_tensorize(sch, parts[3], "no_such_intrin", true),
                  "tensorize: no tensor intrinsic is registered as \"no_such_intrin\"", before);
  /* The wrong dtypes: a float tile against the int8 VNNI description. */
  st_assert_fails(sch, sch_tensorize(sch, parts[4], "x86_vnni_u8s8s32_16x4", true),
                  "tensorize: block C_update_o does not match intrinsic x86_vnni_u8s8s32_16x4: buffer C differs in dtype or scope",
                  before);
  assert_int_equal(sch_get_trace(sch)->n, ninst);
  mlc_free(before);
  sch_free(sch);
}

/* Tensorize without decompose_reduction: the block still has its init, so
 * the outer block does not read C as the description does (TVM's behaviour:
 * decompose first). */
static void tensorize_needs_the_reduction_decomposed(void **state) {
  sch_rv_t tile[3];
  sch_t *sch = tiled_matmul(tile, false);
  char *before = tir_print_func(sch_func(sch));
  st_assert_fails(sch, sch_tensorize(sch, tile[0], "test_mm16", true),
                  "tensorize: block C_o does not match intrinsic test_mm16", before);
  mlc_free(before);
  sch_free(sch);
}

/* ------------------------------------------------------------------------ */
/* Built-in x86 intrinsics (not interpretable: exact text and structure)    */
/* ------------------------------------------------------------------------ */

/* The block named `name` and the number of its match buffers. */
static tir_block_t *find_block(sch_t *sch, const char *name) {
  tir_block_t *b;
  assert_int_equal(sch_get_block_node(sch, block_of(sch, name), &b), MLC_OK);
  return b;
}

static void tensorize_avx512_fp32_fma_on_gemm_row_tile(void **state) {
  static const char *const GEMM =
      "@T.prim_func\n"
      "def main(A: T.Buffer((32, 64), \"float32\"), B: T.Buffer((64, 64), \"float32\"), C: T.Buffer((32, 64), \"float32\")):\n"
      "    for i, j, k in T.grid(32, 64, 64):\n"
      "        with T.block(\"C\"):\n"
      "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
      "            with T.init():\n"
      "                C[vi, vj] = T.float32(0)\n"
      "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";
  sch_t *sch = st_schedule(GEMM);
  int n;
  const sch_rv_t *l = loops_of(sch, "C", &n);
  sch_rv_t i = l[0], j = l[1], k = l[2];
  const sch_rv_t *jp, *kp;
  sch_arg_t fj[2] = {sch_arg_none(), sch_arg_int(16)}, fk[2] = {sch_arg_none(), sch_arg_int(4)};
  assert_int_equal(sch_split(sch, &jp, j, fj, 2, true), MLC_OK);
  sch_rv_t j0 = jp[0], j1 = jp[1];
  assert_int_equal(sch_split(sch, &kp, k, fk, 2, true), MLC_OK);
  sch_rv_t k0 = kp[0], k1 = kp[1];
  sch_rv_t order[5] = {i, j0, k0, k1, j1};
  assert_int_equal(sch_reorder(sch, order, 5), MLC_OK);
  sch_rv_t init;
  assert_int_equal(sch_decompose_reduction(sch, &init, block_of(sch, "C"), k0), MLC_OK);
  assert_int_equal(sch_tensorize(sch, k1, "avx512_fp32_fma_16x4", true), MLC_OK);
  st_assert_script(sch_func(sch),
                   "# from tvm.script import tir as T\n"
                   "\n"
                   "@T.prim_func\n"
                   "def main(A: T.Buffer((32, 64), \"float32\"), B: T.Buffer((64, 64), \"float32\"), C: T.Buffer((32, 64), \"float32\")):\n"
                   "    # with T.block(\"root\"):\n"
                   "    for i, j_0 in T.grid(32, 4):\n"
                   "        for j_1_init in range(16):\n"
                   "            with T.block(\"C_init\"):\n"
                   "                vi = T.axis.spatial(32, i)\n"
                   "                vj = T.axis.spatial(64, j_0 * 16 + j_1_init)\n"
                   "                T.reads()\n"
                   "                T.writes(C[vi, vj])\n"
                   "                C[vi, vj] = T.float32(0)\n"
                   "        for k_0 in range(16):\n"
                   "            with T.block(\"C_update_o\"):\n"
                   "                vi_o, vj_o, vk_o = T.axis.remap(\"SSR\", [i, j_0, k_0])\n"
                   "                T.reads(C[vi_o, vj_o * 16:vj_o * 16 + 16], A[vi_o, vk_o * 4:vk_o * 4 + 4], B[vk_o * 4:vk_o * 4 + 4, vj_o * 16:vj_o * 16 + 16])\n"
                   "                T.writes(C[vi_o, vj_o * 16:vj_o * 16 + 16])\n"
                   "                A_1 = T.match_buffer(A[vi_o, vk_o * 4:vk_o * 4 + 4], (4,), offset_factor=1)\n"
                   "                s0 = T.int32()\n"
                   "                B_1 = T.match_buffer(B[vk_o * 4:vk_o * 4 + 4, vj_o * 16:vj_o * 16 + 16], (4, 16), strides=(s0, 1), offset_factor=1)\n"
                   "                C_1 = T.match_buffer(C[vi_o, vj_o * 16:vj_o * 16 + 16], (16,), offset_factor=1)\n"
                   "                for k in T.unroll(4):\n"
                   "                    C_1[T.Ramp(0, 1, 16)] = T.call_llvm_pure_intrin(\"float32x16\", \"llvm.fma.v16f32\", T.Broadcast(A_1[k], 16), B_1[k, T.Ramp(0, 1, 16)], C_1[T.Ramp(0, 1, 16)])\n");
  tir_block_t *b = find_block(sch, "C_update_o");
  assert_int_equal(b->nmatch_buffers, 3);
  assert_ptr_equal(b->match_buffers[1].source.buffer, sch_func(sch)->buffer_map[1]);
  assert_int_equal(b->body->kind, TIR_FOR);
  tir_expr_t *call = b->body->u.loop.body->u.store.value;
  assert_int_equal(call->u.call.op, TIR_OP_CALL_LLVM_PURE_INTRIN);
  assert_string_equal(call->u.call.args[0]->u.str_value, "llvm.fma.v16f32");
  /* The result verifies and prints back to the same program. */
  assert_int_equal(tir_verify(sch_func(sch), NULL), MLC_OK);
  sch_free(sch);
}

static void tensorize_vnni_on_packed_int8_gemm(void **state) {
  static const char *const PACKED =
      "@T.prim_func\n"
      "def main(X: T.Buffer((32, 64), \"uint8\"), W: T.Buffer((4, 16, 16, 4), \"int8\"), C: T.Buffer((32, 64), \"int32\")):\n"
      "    for i, j_0 in T.grid(32, 4):\n"
      "        for j_1_init in range(16):\n"
      "            with T.block(\"C_init\"):\n"
      "                vi = T.axis.spatial(32, i)\n"
      "                vj = T.axis.spatial(64, j_0 * 16 + j_1_init)\n"
      "                C[vi, vj] = 0\n"
      "        for k_0, j_1, k_1 in T.grid(16, 16, 4):\n"
      "            with T.block(\"C_update\"):\n"
      "                vi = T.axis.spatial(32, i)\n"
      "                vj = T.axis.spatial(64, j_0 * 16 + j_1)\n"
      "                vk = T.axis.reduce(64, k_0 * 4 + k_1)\n"
      "                C[vi, vj] = C[vi, vj] + T.Cast(\"int32\", X[vi, vk]) * T.Cast(\"int32\", W[vj // 16, vk // 4, vj % 16, vk % 4])\n";
  sch_t *sch = st_schedule(PACKED);
  int n;
  const sch_rv_t *l = loops_of(sch, "C_update", &n);
  assert_int_equal(sch_tensorize(sch, l[3], "x86_vnni_u8s8s32_16x4", true), MLC_OK);
  st_assert_script(sch_func(sch),
                   "# from tvm.script import tir as T\n"
                   "\n"
                   "@T.prim_func\n"
                   "def main(X: T.Buffer((32, 64), \"uint8\"), W: T.Buffer((4, 16, 16, 4), \"int8\"), C: T.Buffer((32, 64), \"int32\")):\n"
                   "    # with T.block(\"root\"):\n"
                   "    for i, j_0 in T.grid(32, 4):\n"
                   "        for j_1_init in range(16):\n"
                   "            with T.block(\"C_init\"):\n"
                   "                vi = T.axis.spatial(32, i)\n"
                   "                vj = T.axis.spatial(64, j_0 * 16 + j_1_init)\n"
                   "                T.reads()\n"
                   "                T.writes(C[vi, vj])\n"
                   "                C[vi, vj] = 0\n"
                   "        for k_0 in range(16):\n"
                   "            with T.block(\"C_update_o\"):\n"
                   "                vi_o, vj_o, vk_o = T.axis.remap(\"SSR\", [i, j_0, k_0])\n"
                   "                T.reads(C[vi_o, vj_o * 16:vj_o * 16 + 16], X[vi_o, vk_o * 4:vk_o * 4 + 4], W[vj_o, vk_o, 0:16, 0:4])\n"
                   "                T.writes(C[vi_o, vj_o * 16:vj_o * 16 + 16])\n"
                   "                A = T.match_buffer(X[vi_o, vk_o * 4:vk_o * 4 + 4], (4,), \"uint8\", offset_factor=1)\n"
                   "                B = T.match_buffer(W[vj_o, vk_o, 0:16, 0:4], (16, 4), \"int8\", offset_factor=1)\n"
                   "                C_1 = T.match_buffer(C[vi_o, vj_o * 16:vj_o * 16 + 16], (16,), \"int32\", offset_factor=1)\n"
                   "                C_1[T.Ramp(0, 1, 16)] = T.call_llvm_pure_intrin(\"int32x16\", \"llvm.x86.avx512.vpdpbusd.512\", C_1[T.Ramp(0, 1, 16)], T.Broadcast(T.reinterpret(\"int32\", A[T.Ramp(0, 1, 4)]), 16), T.reinterpret(\"int32x16\", B[0, T.Ramp(0, 1, 64)]))\n");
  tir_block_t *b = find_block(sch, "C_update_o");
  assert_int_equal(b->nmatch_buffers, 3);
  assert_string_equal(b->body->u.store.value->u.call.args[0]->u.str_value, "llvm.x86.avx512.vpdpbusd.512");
  sch_free(sch);
}

/* The recorded trace (split, reorder, decompose_reduction, tensorize)
 * replays on a fresh schedule, through its Python form too, to the same
 * program. */
static void tensorize_trace_replays_to_the_same_program(void **state) {
  sch_rv_t tile[3];
  sch_t *sch = tiled_matmul(tile, true);
  assert_int_equal(sch_tensorize(sch, tile[0], "test_mm16", true), MLC_OK);
  char *py = sch_trace_to_python(sch_get_trace(sch));
  assert_non_null(strstr(py, "sch.tensorize(block_or_loop=l"));
  assert_non_null(strstr(py, "tensor_intrin=\"test_mm16\""));
  sch_trace_t *back = NULL;
  assert_int_equal(sch_trace_from_python(&back, py, strlen(py), "<trace>"), MLC_OK);
  sch_t *fresh = st_schedule(MATMUL);
  assert_int_equal(sch_trace_apply(fresh, back, true), MLC_OK);
  assert_true(tir_func_equal(sch_func(sch), sch_func(fresh), NULL, 0));
  st_assert_script(sch_func(fresh), TENSORIZED_MATMUL);
  sch_trace_free(back);
  mlc_free(py);
  sch_free(fresh);
  sch_free(sch);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(blockize_inner_tile_of_tiled_matmul),
      cmocka_unit_test(blockize_then_decompose_moves_the_init_nest_out),
      cmocka_unit_test(blockize_outermost_and_innermost_loops_of_elementwise),
      cmocka_unit_test(blockize_preserves_unit_iters_on_request),
      cmocka_unit_test(blockize_fails_on_indivisible_bindings_and_shared_loops),
      cmocka_unit_test(tensorize_loop_with_identity_intrinsic_computes_the_same),
      cmocka_unit_test(tensorize_blockized_block_gives_the_same_program),
      cmocka_unit_test(tensorize_fails_on_tile_shape_mismatch_and_unknown_names),
      cmocka_unit_test(tensorize_needs_the_reduction_decomposed),
      cmocka_unit_test(tensorize_avx512_fp32_fma_on_gemm_row_tile),
      cmocka_unit_test(tensorize_vnni_on_packed_int8_gemm),
      cmocka_unit_test(tensorize_trace_replays_to_the_same_program),
  };
  return cmocka_run_group_tests(tests, register_test_intrinsic, NULL);
}
