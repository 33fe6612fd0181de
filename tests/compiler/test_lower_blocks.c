/*
 * test_lower_blocks.c - the passes that take the blocks apart:
 * lower-init-block, plan-allocations and remove-blocks. Each case checks the
 * exact TVMScript after the pass (the earlier passes run first, as the
 * driver runs them) and that the interpreter computes the same outputs as
 * the unlowered function on random inputs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_lower_helpers.h"

static const char MM_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    for i, j, k in T.grid(16, 16, 16):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

static const char INIT2_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((8, 4, 4), \"float32\"), B: T.Buffer((8,), \"float32\"), C: T.Buffer((8,), \"float32\")):\n"
    "    for i, k, l in T.grid(8, 3, 4):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(8, i)\n"
    "            vk = T.axis.reduce((1, 4), k + 1)\n"
    "            vl = T.axis.reduce(4, l)\n"
    "            with T.init():\n"
    "                B[vi] = T.float32(0)\n"
    "            B[vi] = B[vi] + A[vi, vk, vl]\n"
    "    for i in range(8):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(8, i)\n"
    "            with T.init():\n"
    "                C[vi] = T.float32(1)\n"
    "            C[vi] = C[vi] + B[vi]\n";

static const char COMPUTEAT_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    B = T.alloc_buffer((16, 16))\n"
    "    for i_0 in range(4):\n"
    "        for ax0, ax1 in T.grid(4, 16):\n"
    "            with T.block(\"B\"):\n"
    "                vi = T.axis.spatial(16, i_0 * 4 + ax0)\n"
    "                vj = T.axis.spatial(16, ax1)\n"
    "                B[vi, vj] = A[vi, vj] * T.float32(2)\n"
    "        for i_1, j in T.grid(4, 16):\n"
    "            with T.block(\"C\"):\n"
    "                vi = T.axis.spatial(16, i_0 * 4 + i_1)\n"
    "                vj = T.axis.spatial(16, j)\n"
    "                C[vi, vj] = B[vi, vj] + T.float32(1)\n";

static const char SIBLINGS_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((16,), \"float32\"), C: T.Buffer((16,), \"float32\")):\n"
    "    B = T.alloc_buffer((16,))\n"
    "    for i in range(16):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            B[vi] = A[vi] + T.float32(1)\n"
    "    for i in range(16):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            C[vi] = B[15 - vi] * T.float32(2)\n";

static const char INBLOCK_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 4), \"float32\"), C: T.Buffer((4, 4), \"float32\")):\n"
    "    B = T.alloc_buffer((4,))\n"
    "    for i in range(4):\n"
    "        with T.block(\"outer\"):\n"
    "            vi = T.axis.spatial(4, i)\n"
    "            for j in range(4):\n"
    "                with T.block(\"B\"):\n"
    "                    vj = T.axis.spatial(4, j)\n"
    "                    B[vj] = A[vi, vj] + T.float32(1)\n"
    "            for j in range(4):\n"
    "                with T.block(\"C\"):\n"
    "                    vj = T.axis.spatial(4, j)\n"
    "                    C[vi, vj] = B[3 - vj] * T.float32(2)\n";

static const char WHERE_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((10,), \"float32\"), B: T.Buffer((10,), \"float32\")):\n"
    "    for i_0, i_1 in T.grid(3, 4):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(10, i_0 * 4 + i_1)\n"
    "            T.where(i_0 * 4 + i_1 < 10)\n"
    "            B[vi] = A[vi] + T.float32(1)\n";

static const char MATCH_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((8, 16), \"float32\"), C: T.Buffer((8, 16), \"float32\")):\n"
    "    for i_0, j_0 in T.grid(2, 4):\n"
    "        with T.block(\"tile\"):\n"
    "            vi_o, vj_o = T.axis.remap(\"SS\", [i_0, j_0])\n"
    "            T.reads(A[vi_o * 4:vi_o * 4 + 4, vj_o * 4:vj_o * 4 + 4], C[vi_o * 4:vi_o * 4 + 4, vj_o * 4:vj_o * 4 + 4])\n"
    "            T.writes(C[vi_o * 4:vi_o * 4 + 4, vj_o * 4:vj_o * 4 + 4])\n"
    "            s0 = T.int32()\n"
    "            A_1 = T.match_buffer(A[vi_o * 4:vi_o * 4 + 4, vj_o * 4:vj_o * 4 + 4], (4, 4), strides=(s0, 1), offset_factor=1)\n"
    "            A_2 = T.match_buffer(A[vi_o * 4 + 1, vj_o * 4:vj_o * 4 + 4], (4,), offset_factor=1)\n"
    "            s1 = T.int32()\n"
    "            C_1 = T.match_buffer(C[vi_o * 4:vi_o * 4 + 4, vj_o * 4:vj_o * 4 + 4], (4, 4), strides=(s1, 1), offset_factor=1)\n"
    "            for i, j in T.grid(4, 4):\n"
    "                C_1[i, j] = A_1[i, j] * T.Cast(\"float32\", s0) + A_2[j]\n";

static const char ALIGN_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    B = T.alloc_buffer((16, 16))\n"
    "    for i, j in T.grid(16, 16):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.block_attr({\"buffer_dim_align\": [[0, 0, 16, 1]]})\n"
    "            B[vi, vj] = A[vi, vj] + T.float32(1)\n"
    "    for i, j in T.grid(16, 16):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            C[vi, vj] = B[vj, vi]\n";

static const char UNIT_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((8,), \"float32\"), B: T.Buffer((8,), \"float32\")):\n"
    "    for i, j in T.grid(1, 8):\n"
    "        with T.block(\"B\"):\n"
    "            vj = T.axis.spatial(8, i * 8 + j)\n"
    "            T.block_attr({\"pragma_auto_unroll_max_step\": 16, \"meta_schedule.tiling_structure\": \"SSRSRS\"})\n"
    "            B[vj] = A[vj] + T.float32(1)\n"
    "    for k in T.serial(1, annotations={\"pragma_unroll_explicit\": 0}):\n"
    "        with T.block(\"B2\"):\n"
    "            vk = T.axis.spatial(1, k)\n"
    "            B[vk] = B[vk] + T.float32(1)\n";

static const char MM_INIT[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i, j, k in T.grid(16, 16, 16):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            T.reads(A[vi, vk], B[vk, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            if vk == 0:\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

static const char INIT2_INIT[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((8, 4, 4), \"float32\"), B: T.Buffer((8,), \"float32\"), C: T.Buffer((8,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i, k, l in T.grid(8, 3, 4):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(8, i)\n"
    "            vk = T.axis.reduce((1, 4), k + 1)\n"
    "            vl = T.axis.reduce(4, l)\n"
    "            T.reads(A[vi, vk, vl])\n"
    "            T.writes(B[vi])\n"
    "            if vk == 1 and vl == 0:\n"
    "                B[vi] = T.float32(0)\n"
    "            B[vi] = B[vi] + A[vi, vk, vl]\n"
    "    for i in range(8):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(8, i)\n"
    "            T.reads(B[vi])\n"
    "            T.writes(C[vi])\n"
    "            C[vi] = T.float32(1)\n"
    "            C[vi] = C[vi] + B[vi]\n";

static const char COMPUTEAT_PLAN[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i_0 in range(4):\n"
    "        with T.block(\"\"):\n"
    "            T.reads(A[i_0 * 4:i_0 * 4 + 4, 0:16])\n"
    "            T.writes(C[i_0 * 4:i_0 * 4 + 4, 0:16])\n"
    "            B = T.alloc_buffer((16, 16))\n"
    "            for ax0, ax1 in T.grid(4, 16):\n"
    "                with T.block(\"B\"):\n"
    "                    vi = T.axis.spatial(16, i_0 * 4 + ax0)\n"
    "                    vj = T.axis.spatial(16, ax1)\n"
    "                    T.reads(A[vi, vj])\n"
    "                    T.writes(B[vi, vj])\n"
    "                    B[vi, vj] = A[vi, vj] * T.float32(2)\n"
    "            for i_1, j in T.grid(4, 16):\n"
    "                with T.block(\"C\"):\n"
    "                    vi = T.axis.spatial(16, i_0 * 4 + i_1)\n"
    "                    vj = T.axis.spatial(16, j)\n"
    "                    T.reads(B[vi, vj])\n"
    "                    T.writes(C[vi, vj])\n"
    "                    C[vi, vj] = B[vi, vj] + T.float32(1)\n";

static const char INBLOCK_PLAN[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 4), \"float32\"), C: T.Buffer((4, 4), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i in range(4):\n"
    "        with T.block(\"outer\"):\n"
    "            vi = T.axis.spatial(4, i)\n"
    "            T.reads(A[vi, 0:4])\n"
    "            T.writes(C[vi, 0:4])\n"
    "            B = T.alloc_buffer((4,))\n"
    "            for j in range(4):\n"
    "                with T.block(\"B\"):\n"
    "                    vj = T.axis.spatial(4, j)\n"
    "                    T.reads(A[vi, vj])\n"
    "                    T.writes(B[vj])\n"
    "                    B[vj] = A[vi, vj] + T.float32(1)\n"
    "            for j in range(4):\n"
    "                with T.block(\"C\"):\n"
    "                    vj = T.axis.spatial(4, j)\n"
    "                    T.reads(B[3 - vj])\n"
    "                    T.writes(C[vi, vj])\n"
    "                    C[vi, vj] = B[3 - vj] * T.float32(2)\n";

static const char MM_RB[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    for i, j, k in T.grid(16, 16, 16):\n"
    "        if k == 0:\n"
    "            C[i, j] = T.float32(0)\n"
    "        C[i, j] = C[i, j] + A[i, k] * B[k, j]\n";

static const char INIT2_RB[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((8, 4, 4), \"float32\"), B: T.Buffer((8,), \"float32\"), C: T.Buffer((8,), \"float32\")):\n"
    "    for i, k, l in T.grid(8, 3, 4):\n"
    "        if k + 1 == 1 and l == 0:\n"
    "            B[i] = T.float32(0)\n"
    "        B[i] = B[i] + A[i, k + 1, l]\n"
    "    for i in range(8):\n"
    "        C[i] = T.float32(1)\n"
    "        C[i] = C[i] + B[i]\n";

static const char COMPUTEAT_RB[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    for i_0 in range(4):\n"
    "        B = T.decl_buffer((16, 16))\n"
    "        for ax0, ax1 in T.grid(4, 16):\n"
    "            B[i_0 * 4 + ax0, ax1] = A[i_0 * 4 + ax0, ax1] * T.float32(2)\n"
    "        for i_1, j in T.grid(4, 16):\n"
    "            C[i_0 * 4 + i_1, j] = B[i_0 * 4 + i_1, j] + T.float32(1)\n";

static const char SIBLINGS_RB[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((16,), \"float32\"), C: T.Buffer((16,), \"float32\")):\n"
    "    B = T.decl_buffer((16,))\n"
    "    for i in range(16):\n"
    "        B[i] = A[i] + T.float32(1)\n"
    "    for i in range(16):\n"
    "        C[i] = B[15 - i] * T.float32(2)\n";

static const char INBLOCK_RB[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 4), \"float32\"), C: T.Buffer((4, 4), \"float32\")):\n"
    "    for i in range(4):\n"
    "        B = T.decl_buffer((4,))\n"
    "        for j in range(4):\n"
    "            B[j] = A[i, j] + T.float32(1)\n"
    "        for j in range(4):\n"
    "            C[i, j] = B[3 - j] * T.float32(2)\n";

static const char WHERE_RB[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((10,), \"float32\"), B: T.Buffer((10,), \"float32\")):\n"
    "    for i_0, i_1 in T.grid(3, 4):\n"
    "        if i_0 * 4 + i_1 < 10:\n"
    "            B[i_0 * 4 + i_1] = A[i_0 * 4 + i_1] + T.float32(1)\n";

static const char MATCH_RB[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((8, 16), \"float32\"), C: T.Buffer((8, 16), \"float32\")):\n"
    "    for i_0, j_0, i, j in T.grid(2, 4, 4, 4):\n"
    "        C[i_0 * 4 + i, j_0 * 4 + j] = A[i_0 * 4 + i, j_0 * 4 + j] * T.Cast(\"float32\", 16) + A[i_0 * 4 + 1, j_0 * 4 + j]\n";

static const char ALIGN_RB[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    B = T.decl_buffer((16, 16))\n"
    "    with T.attr(B.data, \"buffer_dim_align\", [[0, 16, 1]]):\n"
    "        for i, j in T.grid(16, 16):\n"
    "            B[i, j] = A[i, j] + T.float32(1)\n"
    "        for i, j in T.grid(16, 16):\n"
    "            C[i, j] = B[j, i]\n";

static const char UNIT_RB[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((8,), \"float32\"), B: T.Buffer((8,), \"float32\")):\n"
    "    for j in range(8):\n"
    "        with T.attr(0, \"pragma_auto_unroll_max_step\", 16):\n"
    "            B[0 * 8 + j] = A[0 * 8 + j] + T.float32(1)\n"
    "    for k in T.serial(1, annotations={\"pragma_unroll_explicit\": 0}):\n"
    "        B[k] = B[k] + T.float32(1)\n";

static const char SCAN_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 8), \"float32\"), C: T.Buffer((4, 8), \"float32\")):\n"
    "    B = T.alloc_buffer((4, 8))\n"
    "    for i, j in T.grid(4, 8):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(4, i)\n"
    "            vj = T.axis.scan(8, j)\n"
    "            T.reads(A[vi, vj], B[vi, vj - 1])\n"
    "            T.writes(B[vi, vj])\n"
    "            B[vi, vj] = T.if_then_else(vj == 0, A[vi, vj], B[vi, vj - 1] + A[vi, vj])\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            C[vi, vj] = B[vi, vj] * T.float32(2)\n";

static const char SCAN_PLAN[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 8), \"float32\"), C: T.Buffer((4, 8), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i in range(4):\n"
    "        with T.block(\"\"):\n"
    "            T.reads(A[i, 0:8])\n"
    "            T.writes(C[i, 0:8])\n"
    "            B = T.alloc_buffer((4, 8))\n"
    "            for j in range(8):\n"
    "                with T.block(\"B\"):\n"
    "                    vi = T.axis.spatial(4, i)\n"
    "                    vj = T.axis.scan(8, j)\n"
    "                    T.reads(A[vi, vj], B[vi, vj - 1])\n"
    "                    T.writes(B[vi, vj])\n"
    "                    B[vi, vj] = T.if_then_else(vj == 0, A[vi, vj], B[vi, vj - 1] + A[vi, vj])\n"
    "                with T.block(\"C\"):\n"
    "                    vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "                    T.reads(B[vi, vj])\n"
    "                    T.writes(C[vi, vj])\n"
    "                    C[vi, vj] = B[vi, vj] * T.float32(2)\n";

/* ------------------------------------------------------------------------ */
/* lower-init-block                                                          */
/* ------------------------------------------------------------------------ */

static void init_is_guarded_by_the_reduction_iterator(void **state) {
  assert_null(lt_check(MM_SRC, MLC_PASS_LOWER_INIT_BLOCK, MM_INIT));
}

static void init_guard_uses_every_reduction_iterator_and_its_min(void **state) {
  /* vk's domain starts at 1; block C has no reduction iterator: its init
   * runs every time, unguarded. */
  assert_null(lt_check(INIT2_SRC, MLC_PASS_LOWER_INIT_BLOCK, INIT2_INIT));
}

/* ------------------------------------------------------------------------ */
/* plan-allocations                                                          */
/* ------------------------------------------------------------------------ */

static void allocation_moves_under_the_loop_that_holds_its_uses(void **state) {
  assert_null(lt_check(COMPUTEAT_SRC, MLC_PASS_PLAN_ALLOCATIONS, COMPUTEAT_PLAN));
}

static void allocation_moves_into_the_block_that_holds_its_uses(void **state) {
  /* ... and leaves that block's T.reads / T.writes. */
  assert_null(lt_check(INBLOCK_SRC, MLC_PASS_PLAN_ALLOCATIONS, INBLOCK_PLAN));
}

static void allocation_used_by_sibling_loops_stays_at_the_root(void **state) {
  tir_func_t *f = st_parse(SIBLINGS_SRC);
  tir_func_t *g = lt_before(f, MLC_PASS_PLAN_ALLOCATIONS);
  char *before = tir_print_func(g);
  lt_run(g, MLC_PASS_PLAN_ALLOCATIONS, NULL);
  st_assert_script(g, before);
  mlc_free(before);
  tir_func_free(g);
  tir_func_free(f);
}

static void global_allocation_is_planned_at_the_block_idx_loop(void **state) {
  static const char src[] =
      "@T.prim_func\n"
      "def main(A: T.Buffer((64,), \"float32\"), C: T.Buffer((64,), \"float32\")):\n"
      "    B = T.alloc_buffer((64,))\n"
      "    for bx in T.thread_binding(4, thread=\"blockIdx.x\"):\n"
      "        for tx in T.thread_binding(16, thread=\"threadIdx.x\"):\n"
      "            with T.block(\"B\"):\n"
      "                vi = T.axis.spatial(64, bx * 16 + tx)\n"
      "                B[vi] = A[vi] + T.float32(1)\n"
      "            with T.block(\"C\"):\n"
      "                vi = T.axis.spatial(64, bx * 16 + tx)\n"
      "                C[vi] = B[vi] * T.float32(2)\n";
  tir_func_t *f = st_parse(src);
  tir_func_t *g = lt_before(f, MLC_PASS_PLAN_ALLOCATIONS);
  lt_run(g, MLC_PASS_PLAN_ALLOCATIONS, NULL);
  /* Both uses are under threadIdx.x, but global memory is allocated
   * outside the kernel's threads: at the blockIdx.x loop (as TVM does). */
  tir_stmt_t *bx = tir_func_root_block(g)->body;
  assert_int_equal(bx->kind, TIR_FOR);
  assert_int_equal(bx->u.loop.body->kind, TIR_BLOCK_REALIZE);
  tir_block_t *opaque = bx->u.loop.body->u.realize.block;
  assert_int_equal(opaque->nalloc_buffers, 1);
  assert_string_equal(opaque->alloc_buffers[0]->name, "B");
  assert_int_equal(opaque->body->kind, TIR_FOR);
  assert_string_equal(opaque->body->u.loop.thread_tag, "threadIdx.x");
  st_assert_same_outputs(f, g, 3, 0.0);
  tir_func_free(g);
  tir_func_free(f);
}

static void scan_iterator_keeps_its_buffer_above_the_loop_it_carries_over(void **state) {
  /* Both uses are inside loop j, but vj is a scan over j: B[vi, vj - 1] is
   * the previous iteration's value, so B must live across j (TVM's
   * UpdateDominateScopeOfOpaqueIter). */
  assert_null(lt_check(SCAN_SRC, MLC_PASS_PLAN_ALLOCATIONS, SCAN_PLAN));
  assert_null(lt_check_through(SCAN_SRC, MLC_PASS_STORAGE_REWRITE));
}

/* ------------------------------------------------------------------------ */
/* remove-blocks                                                             */
/* ------------------------------------------------------------------------ */

static void blocks_become_loops_over_their_bindings(void **state) {
  assert_null(lt_check(MM_SRC, MLC_PASS_REMOVE_BLOCKS, MM_RB));
  assert_null(lt_check(INIT2_SRC, MLC_PASS_REMOVE_BLOCKS, INIT2_RB));
}

static void allocations_become_decl_buffers_where_planned(void **state) {
  assert_null(lt_check(COMPUTEAT_SRC, MLC_PASS_REMOVE_BLOCKS, COMPUTEAT_RB));
  assert_null(lt_check(SIBLINGS_SRC, MLC_PASS_REMOVE_BLOCKS, SIBLINGS_RB));
  assert_null(lt_check(INBLOCK_SRC, MLC_PASS_REMOVE_BLOCKS, INBLOCK_RB));
}

static void predicate_becomes_an_if(void **state) {
  assert_null(lt_check(WHERE_SRC, MLC_PASS_REMOVE_BLOCKS, WHERE_RB));
}

static void match_buffers_become_index_arithmetic_on_their_source(void **state) {
  /* s0 binds to A's stride 16; A_2 drops the region's leading dimension. */
  assert_null(lt_check(MATCH_SRC, MLC_PASS_REMOVE_BLOCKS, MATCH_RB));
}

static void storage_align_travels_as_an_attribute_of_the_allocation(void **state) {
  assert_null(lt_check(ALIGN_SRC, MLC_PASS_REMOVE_BLOCKS, ALIGN_RB));
}

static void unit_loops_go_and_block_pragmas_become_attributes(void **state) {
  /* The annotated unit loop stays; meta_schedule annotations are dropped. */
  assert_null(lt_check(UNIT_SRC, MLC_PASS_REMOVE_BLOCKS, UNIT_RB));
}

static void match_buffer_data_pointer_is_unsupported(void **state) {
  static const char src[] =
      "@T.prim_func\n"
      "def main(A: T.Buffer((8,), \"float32\")):\n"
      "    for i_0 in range(2):\n"
      "        with T.block(\"tile\"):\n"
      "            vi_o = T.axis.spatial(2, i_0)\n"
      "            T.reads(A[vi_o * 4:vi_o * 4 + 4])\n"
      "            T.writes(A[vi_o * 4:vi_o * 4 + 4])\n"
      "            A_1 = T.match_buffer(A[vi_o * 4:vi_o * 4 + 4], (4,), offset_factor=1)\n"
      "            T.evaluate(T.call_extern(\"int32\", \"zero4\", A_1.data))\n";
  tir_func_t *f = st_parse(src);
  tir_func_t *g = lt_before(f, MLC_PASS_REMOVE_BLOCKS);
  mlc_target_t t = lt_target();
  assert_int_equal(mlc_pass_fn_of(MLC_PASS_REMOVE_BLOCKS)(g, &t, NULL), MLC_EUNSUPPORTED);
  lt_assert_contains(mlc_error_last(), "match buffer A_1 is used through its data pointer");
  tir_func_free(g);
  tir_func_free(f);
}

static void remove_blocks_lowers_an_init_left_in_place(void **state) {
  /* Run without lower-init-block: the pass lowers the init itself. */
  tir_func_t *f = st_parse(MM_SRC);
  tir_func_t *g = tir_func_clone(f);
  lt_run(g, MLC_PASS_REMOVE_BLOCKS, NULL);
  st_assert_script(g, MM_RB);
  st_assert_same_outputs(f, g, 5, 0.0);
  tir_func_free(g);
  tir_func_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(init_is_guarded_by_the_reduction_iterator),
      cmocka_unit_test(init_guard_uses_every_reduction_iterator_and_its_min),
      cmocka_unit_test(allocation_moves_under_the_loop_that_holds_its_uses),
      cmocka_unit_test(allocation_moves_into_the_block_that_holds_its_uses),
      cmocka_unit_test(allocation_used_by_sibling_loops_stays_at_the_root),
      cmocka_unit_test(global_allocation_is_planned_at_the_block_idx_loop),
      cmocka_unit_test(scan_iterator_keeps_its_buffer_above_the_loop_it_carries_over),
      cmocka_unit_test(blocks_become_loops_over_their_bindings),
      cmocka_unit_test(allocations_become_decl_buffers_where_planned),
      cmocka_unit_test(predicate_becomes_an_if),
      cmocka_unit_test(match_buffers_become_index_arithmetic_on_their_source),
      cmocka_unit_test(storage_align_travels_as_an_attribute_of_the_allocation),
      cmocka_unit_test(unit_loops_go_and_block_pragmas_become_attributes),
      cmocka_unit_test(match_buffer_data_pointer_is_unsupported),
      cmocka_unit_test(remove_blocks_lowers_an_init_left_in_place),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
