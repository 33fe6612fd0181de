/*
 * test_compute_at.c - sch_compute_at and sch_reverse_compute_at
 * (schedule/primitive/compute_at.c), after TVM's
 * test_tir_schedule_compute_at.py: exact TVMScript for a producer moved into
 * a tiled consumer (tight tile), unit loops kept or dropped, a padding block
 * under a convolution's loop, a read cache whose tile needs a T.where, a
 * reduction block, a shared-memory cache relaxed over the threads that share
 * it, an epilogue and a relu moved under a tiled matmul, the insertion index,
 * the affine floordiv/floormod inverse; the interpreter giving the same
 * outputs; what is recorded; one negative test per precondition.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched_testing.h"
#include "schedule/state.h"

#define HEADER "# from tvm.script import tir as T\n\n@T.prim_func\n"
#define ROOT "    # with T.block(\"root\"):\n"

/* ------------------------------------------------------------------------ */
/* Programs                                                                  */
/* ------------------------------------------------------------------------ */

#define TWO_SIG "def main(A: T.Buffer((128, 128), \"float32\"), C: T.Buffer((128, 128), \"float32\")):\n"
#define B_BODY(ind)                                      \
  ind "T.reads(A[vi, vj])\n"                             \
  ind "T.writes(B[vi, vj])\n"                            \
  ind "B[vi, vj] = A[vi, vj] * T.float32(2)\n"
#define C_BODY(ind)                                      \
  ind "T.reads(B[vi, vj])\n"                             \
  ind "T.writes(C[vi, vj])\n"                            \
  ind "C[vi, vj] = B[vi, vj] + T.float32(1)\n"
#define I12 "            "
#define I16 "                "
#define I20 "                    "

/* TVM's two_elementwise: B = A * 2; C = B + 1. */
static const char *TWO =
    HEADER TWO_SIG ROOT
    "    B = T.alloc_buffer((128, 128))\n"
    "    for i, j in T.grid(128, 128):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    B_BODY(I12)
    "    for i, j in T.grid(128, 128):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    C_BODY(I12);

/* The same with C tiled 16 x 16. */
static const char *TILED_C =
    HEADER TWO_SIG ROOT
    "    B = T.alloc_buffer((128, 128))\n"
    "    for i, j in T.grid(128, 128):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    B_BODY(I12)
    "    for i_0, j_0, i_1, j_1 in T.grid(8, 8, 16, 16):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(128, i_0 * 16 + i_1)\n"
    "            vj = T.axis.spatial(128, j_0 * 16 + j_1)\n"
    C_BODY(I12);

/* TVM's tiled: B tiled, C plain. */
static const char *TILED_B =
    HEADER TWO_SIG ROOT
    "    B = T.alloc_buffer((128, 128))\n"
    "    for i_0, j_0, i_1, j_1 in T.grid(8, 8, 16, 16):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(128, i_0 * 16 + i_1)\n"
    "            vj = T.axis.spatial(128, j_0 * 16 + j_1)\n"
    B_BODY(I12)
    "    for i, j in T.grid(128, 128):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    C_BODY(I12);

/* A 3x3 convolution (NHWC, pad 1) with its padding block, as C2D builds it. */
#define CONV_SIG                                                                                \
  "def main(X: T.Buffer((1, 8, 8, 4), \"float32\"), W: T.Buffer((3, 3, 4, 8), \"float32\"), "  \
  "Y: T.Buffer((1, 8, 8, 8), \"float32\")):\n"
#define PAD_BODY(ind)                                                                                   \
  ind "T.reads(X[v_i0, v_i1 - 1, v_i2 - 1, v_i3])\n"                                                    \
  ind "T.writes(PadInput[v_i0, v_i1, v_i2, v_i3])\n"                                                    \
  ind "PadInput[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i1 and v_i1 < 9 and 1 <= v_i2 and "     \
      "v_i2 < 9, X[v_i0, v_i1 - 1, v_i2 - 1, v_i3], T.float32(0))\n"
#define CONV_BODY(ind)                                                                                  \
  ind "T.reads(PadInput[v_n, v_h + v_rh, v_w + v_rw, v_rc], W[v_rh, v_rw, v_rc, v_co])\n"               \
  ind "T.writes(Y[v_n, v_h, v_w, v_co])\n"                                                              \
  ind "with T.init():\n"                                                                                \
  ind "    Y[v_n, v_h, v_w, v_co] = T.float32(0)\n"                                                     \
  ind "Y[v_n, v_h, v_w, v_co] = Y[v_n, v_h, v_w, v_co] + PadInput[v_n, v_h + v_rh, v_w + v_rw, v_rc] " \
      "* W[v_rh, v_rw, v_rc, v_co]\n"

static const char *CONV =
    HEADER CONV_SIG ROOT
    "    PadInput = T.alloc_buffer((1, 10, 10, 4))\n"
    "    for i0, i1, i2, i3 in T.grid(1, 10, 10, 4):\n"
    "        with T.block(\"PadInput\"):\n"
    "            v_i0, v_i1, v_i2, v_i3 = T.axis.remap(\"SSSS\", [i0, i1, i2, i3])\n"
    PAD_BODY(I12)
    "    for n, h, w, co, rh, rw, rc in T.grid(1, 8, 8, 8, 3, 3, 4):\n"
    "        with T.block(\"conv\"):\n"
    "            v_n, v_h, v_w, v_co, v_rh, v_rw, v_rc = T.axis.remap(\"SSSSRRR\", [n, h, w, co, rh, rw, rc])\n"
    CONV_BODY(I12);

/* TVM's tiled_pooling_read_cache in one dimension: a cache of X read at
 * offsets -1..1 by a tiled max-pooling. */
#define POOL_SIG "def main(X: T.Buffer((32,), \"float32\"), Y: T.Buffer((32,), \"float32\")):\n"
#define CACHE_BODY(ind)          \
  ind "T.reads(X[v])\n"          \
  ind "T.writes(cache[v])\n"     \
  ind "cache[v] = X[v]\n"
#define POOL_BODY(ind)                                                                                  \
  ind "T.reads(cache[h + kh - 1])\n"                                                                    \
  ind "T.writes(Y[h])\n"                                                                                \
  ind "with T.init():\n"                                                                                \
  ind "    Y[h] = T.float32(0)\n"                                                                       \
  ind "Y[h] = T.max(Y[h], T.if_then_else(1 <= h + kh and h + kh < 33, cache[h + kh - 1], T.float32(0)))\n"

static const char *POOL =
    HEADER POOL_SIG ROOT
    "    cache = T.alloc_buffer((32,))\n"
    "    for i in range(32):\n"
    "        with T.block(\"cache\"):\n"
    "            v = T.axis.spatial(32, i)\n"
    CACHE_BODY(I12)
    "    for h_0, h_1, k in T.grid(4, 8, 3):\n"
    "        with T.block(\"pool\"):\n"
    "            h = T.axis.spatial(32, h_0 * 8 + h_1)\n"
    "            kh = T.axis.reduce(3, k)\n"
    POOL_BODY(I12);

/* TVM's multi_reduction: a row sum feeding a total. */
#define MR_SIG "def main(A: T.Buffer((16, 16), \"float32\"), C: T.Buffer((1,), \"float32\")):\n"
#define MR_B(ind)                          \
  ind "T.reads(A[vi, vk])\n"               \
  ind "T.writes(B[vi])\n"                  \
  ind "with T.init():\n"                   \
  ind "    B[vi] = T.float32(0)\n"         \
  ind "B[vi] = B[vi] + A[vi, vk]\n"
#define MR_C(ind)                          \
  ind "T.reads(B[vk])\n"                   \
  ind "T.writes(C[0])\n"                   \
  ind "with T.init():\n"                   \
  ind "    C[0] = T.float32(0)\n"          \
  ind "C[0] = C[0] + B[vk]\n"

static const char *MULTI_REDUCTION =
    HEADER MR_SIG ROOT
    "    B = T.alloc_buffer((16,))\n"
    "    for i, k in T.grid(16, 16):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    MR_B(I12)
    "    for k in range(16):\n"
    "        with T.block(\"C\"):\n"
    "            vk = T.axis.reduce(16, k)\n"
    MR_C(I12);

/* A GPU-style matmul: one block per 16 x 16 tile, 16 threads with 1 x 16
 * outputs each, k split by 4; A staged through shared memory. */
#define GPU_SIG                                                                                    \
  "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\"), "              \
  "C: T.Buffer((32, 32), \"float32\")):\n"
#define AS_BODY(ind)                 \
  ind "T.reads(A[v0, v1])\n"         \
  ind "T.writes(A_shared[v0, v1])\n" \
  ind "A_shared[v0, v1] = A[v0, v1]\n"
#define MM_BODY(ind)                                                      \
  ind "T.reads(A_shared[vi, vk], B[vk, vj])\n"                            \
  ind "T.writes(C[vi, vj])\n"                                             \
  ind "with T.init():\n"                                                  \
  ind "    C[vi, vj] = T.float32(0)\n"                                    \
  ind "C[vi, vj] = C[vi, vj] + A_shared[vi, vk] * B[vk, vj]\n"

static const char *GPU_MM =
    HEADER GPU_SIG ROOT
    "    A_shared = T.alloc_buffer((32, 32), scope=\"shared\")\n"
    "    for i, j in T.grid(32, 32):\n"
    "        with T.block(\"A_shared\"):\n"
    "            v0, v1 = T.axis.remap(\"SS\", [i, j])\n"
    AS_BODY(I12)
    "    for bx in T.thread_binding(4, thread=\"blockIdx.x\"):\n"
    "        for tx in T.thread_binding(16, thread=\"threadIdx.x\"):\n"
    "            for k_0, j, k_1 in T.grid(8, 16, 4):\n"
    "                with T.block(\"C\"):\n"
    "                    vi = T.axis.spatial(32, bx // 2 * 16 + tx)\n"
    "                    vj = T.axis.spatial(32, bx % 2 * 16 + j)\n"
    "                    vk = T.axis.reduce(32, k_0 * 4 + k_1)\n"
    MM_BODY(I20);

/* A tiled matmul into a local accumulator, then the write-back to C. */
#define MMT_SIG GPU_SIG
#define ACC_BODY(ind)                                                        \
  ind "T.reads(A[vi, vk], B[vk, vj])\n"                                      \
  ind "T.writes(C_local[vi, vj])\n"                                          \
  ind "with T.init():\n"                                                     \
  ind "    C_local[vi, vj] = T.float32(0)\n"                                 \
  ind "C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]\n"
#define WB_BODY(ind)                  \
  ind "T.reads(C_local[v0, v1])\n"    \
  ind "T.writes(C[v0, v1])\n"         \
  ind "C[v0, v1] = C_local[v0, v1]\n"

static const char *MATMUL_WB =
    HEADER MMT_SIG ROOT
    "    C_local = T.alloc_buffer((32, 32), scope=\"local\")\n"
    "    for i_0, j_0, i_1, j_1, k in T.grid(4, 4, 8, 8, 32):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(32, i_0 * 8 + i_1)\n"
    "            vj = T.axis.spatial(32, j_0 * 8 + j_1)\n"
    "            vk = T.axis.reduce(32, k)\n"
    ACC_BODY(I12)
    "    for i, j in T.grid(32, 32):\n"
    "        with T.block(\"C_local\"):\n"
    "            v0, v1 = T.axis.remap(\"SS\", [i, j])\n"
    WB_BODY(I12);

/* Matmul then relu, the relu reading the whole matmul output row-wise. */
#define RELU_SIG                                                                                   \
  "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\"), "              \
  "D: T.Buffer((32, 32), \"float32\")):\n"
#define MMC_BODY(ind)                                                        \
  ind "T.reads(A[vi, vk], B[vk, vj])\n"                                      \
  ind "T.writes(C[vi, vj])\n"                                                \
  ind "with T.init():\n"                                                     \
  ind "    C[vi, vj] = T.float32(0)\n"                                       \
  ind "C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n"
#define RELU_BODY(ind)                                   \
  ind "T.reads(C[vi, vj])\n"                             \
  ind "T.writes(D[vi, vj])\n"                            \
  ind "D[vi, vj] = T.max(C[vi, vj], T.float32(0))\n"

static const char *MATMUL_RELU =
    HEADER RELU_SIG ROOT
    "    C = T.alloc_buffer((32, 32))\n"
    "    for i_0, j_0, i_1, j_1, k in T.grid(4, 4, 8, 8, 32):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(32, i_0 * 8 + i_1)\n"
    "            vj = T.axis.spatial(32, j_0 * 8 + j_1)\n"
    "            vk = T.axis.reduce(32, k)\n"
    MMC_BODY(I12)
    "    for i, j in T.grid(32, 32):\n"
    "        with T.block(\"relu\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    RELU_BODY(I12);

/* TVM's floordiv_and_floormod_indices: Y reads temp through v // 16, v % 16. */
#define FDM_SIG "def main(X: T.Buffer((16, 16), \"float32\"), Y: T.Buffer((256,), \"float32\")):\n"
#define TEMP_BODY(ind)                                \
  ind "T.reads(X[v_j, v_i])\n"                        \
  ind "T.writes(temp[v_i, v_j])\n"                    \
  ind "temp[v_i, v_j] = X[v_j, v_i] + T.float32(1)\n"
#define Y_BODY(ind)                                   \
  ind "T.reads(temp[v_i // 16, v_i % 16])\n"          \
  ind "T.writes(Y[v_i])\n"                            \
  ind "Y[v_i] = temp[v_i // 16, v_i % 16]\n"

static const char *FLOORDIV_MOD =
    HEADER FDM_SIG ROOT
    "    temp = T.alloc_buffer((16, 16))\n"
    "    for i, j in T.grid(16, 16):\n"
    "        with T.block(\"A\"):\n"
    "            v_i, v_j = T.axis.remap(\"SS\", [i, j])\n"
    TEMP_BODY(I12)
    "    for i in range(256):\n"
    "        with T.block(\"B\"):\n"
    "            v_i = T.axis.spatial(256, i)\n"
    Y_BODY(I12);

/* TVM's test_reverse_compute_at_to_index: B tiled, C already under B's
 * loop, D at the root. */
#define IDX_SIG "def main(A: T.Buffer((128, 128), \"float32\"), D: T.Buffer((128, 128), \"float32\")):\n"
#define IDX_C_BODY(ind)                                   \
  ind "T.reads(B[vi, vj])\n"                              \
  ind "T.writes(C[vi, vj])\n"                             \
  ind "C[vi, vj] = B[vi, vj] + T.float32(1)\n"
#define IDX_D_BODY(ind)                                   \
  ind "T.reads(B[vi, vj])\n"                              \
  ind "T.writes(D[vi, vj])\n"                             \
  ind "D[vi, vj] = B[vi, vj] + T.float32(1)\n"
#define IDX_TILED_B                                                   \
  "    for i_0, j_0, i_1 in T.grid(8, 8, 16):\n"                      \
  "        for j_1 in range(16):\n"                                   \
  "            with T.block(\"B\"):\n"                                \
  "                vi = T.axis.spatial(128, i_0 * 16 + i_1)\n"        \
  "                vj = T.axis.spatial(128, j_0 * 16 + j_1)\n"        \
  B_BODY(I16)
#define IDX_NEST(name, body)                                          \
  "        for ax0 in range(16):\n"                                   \
  "            with T.block(\"" name "\"):\n"                         \
  "                vi = T.axis.spatial(128, i_0 * 16 + i_1)\n"        \
  "                vj = T.axis.spatial(128, j_0 * 16 + ax0)\n"        \
  body(I16)

static const char *TO_INDEX =
    HEADER IDX_SIG ROOT
    "    B = T.alloc_buffer((128, 128))\n"
    "    C = T.alloc_buffer((128, 128))\n"
    IDX_TILED_B
    IDX_NEST("C", IDX_C_BODY)
    "    for i, j in T.grid(128, 128):\n"
    "        with T.block(\"D\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    IDX_D_BODY(I12);

/* TVM's fail_all_consumers_under_loop: B has two consumers. */
#define FC_SIG                                                                                     \
  "def main(A: T.Buffer((128, 128), \"float32\"), C: T.Buffer((128, 128), \"float32\"), "          \
  "D: T.Buffer((128, 128), \"float32\")):\n"
static const char *TWO_CONSUMERS =
    HEADER FC_SIG ROOT
    "    B = T.alloc_buffer((128, 128))\n"
    "    for i, j in T.grid(128, 128):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    B_BODY(I12)
    "    for i, j in T.grid(128, 128):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    C_BODY(I12)
    "    for i, j in T.grid(128, 128):\n"
    "        with T.block(\"D\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    IDX_D_BODY(I12);

/* TVM's fail_all_producers_under_loop: D reads B and C. */
#define FP_SIG "def main(A: T.Buffer((128, 128), \"float32\"), D: T.Buffer((128, 128), \"float32\")):\n"
static const char *TWO_PRODUCERS =
    HEADER FP_SIG ROOT
    "    B = T.alloc_buffer((128, 128))\n"
    "    C = T.alloc_buffer((128, 128))\n"
    "    for i, j in T.grid(128, 128):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    B_BODY(I12)
    "    for i, j in T.grid(128, 128):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(A[vi, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            C[vi, vj] = A[vi, vj] + T.float32(1)\n"
    "    for i, j in T.grid(128, 128):\n"
    "        with T.block(\"D\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(B[vi, vj], C[vi, vj])\n"
    "            T.writes(D[vi, vj])\n"
    "            D[vi, vj] = B[vi, vj] + C[vi, vj]\n";

/* TVM's blockized_1: C is an outer block over 16 x 16 inner blocks. */
static const char *BLOCKIZED =
    HEADER TWO_SIG ROOT
    "    B = T.alloc_buffer((128, 128))\n"
    "    for i, j in T.grid(128, 128):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    B_BODY(I12)
    "    for i, j in T.grid(8, 8):\n"
    "        with T.block(\"C_outer\"):\n"
    "            vi_o, vj_o = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(B[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])\n"
    "            T.writes(C[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])\n"
    "            for i_i, j_i in T.grid(16, 16):\n"
    "                with T.block(\"C_inner\"):\n"
    "                    vi = T.axis.spatial(128, vi_o * 16 + i_i)\n"
    "                    vj = T.axis.spatial(128, vj_o * 16 + j_i)\n"
    C_BODY(I20);

/* TVM's blockized_2: B computed by 16 x 16 outer blocks, C tiled 32 x 32. */
static const char *BLOCKIZED_B =
    HEADER TWO_SIG ROOT
    "    B = T.alloc_buffer((128, 128))\n"
    "    for i_o, j_o in T.grid(8, 8):\n"
    "        with T.block(\"B_outer\"):\n"
    "            vio, vjo = T.axis.remap(\"SS\", [i_o, j_o])\n"
    "            T.reads(A[vio * 16:vio * 16 + 16, vjo * 16:vjo * 16 + 16])\n"
    "            T.writes(B[vio * 16:vio * 16 + 16, vjo * 16:vjo * 16 + 16])\n"
    "            for i_i, j_i in T.grid(16, 16):\n"
    "                with T.block(\"B_inner\"):\n"
    "                    vi = T.axis.spatial(128, vio * 16 + i_i)\n"
    "                    vj = T.axis.spatial(128, vjo * 16 + j_i)\n"
    B_BODY(I20)
    "    for i_o, j_o, i_i, j_i in T.grid(4, 4, 32, 32):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(128, i_o * 32 + i_i)\n"
    "            vj = T.axis.spatial(128, j_o * 32 + j_i)\n"
    C_BODY(I12);

/* TVM's compute_at_rev_iter: b0 writes Y mirrored, b1 reads it transposed. */
#define REV_SIG "def main(X: T.Buffer((10, 10), \"float32\"), Z: T.Buffer((10, 10), \"float32\")):\n"
#define B0_BODY(ind)                                   \
  ind "T.reads(X[vi, vj])\n"                           \
  ind "T.writes(Y[9 - vi, 9 - vj])\n"                  \
  ind "Y[9 - vi, 9 - vj] = X[vi, vj] + T.float32(1)\n"
#define B1_BODY(ind)                                   \
  ind "T.reads(Y[vj, vi])\n"                           \
  ind "T.writes(Z[vi, vj])\n"                          \
  ind "Z[vi, vj] = Y[vj, vi] + T.float32(2)\n"
static const char *REV_ITER =
    HEADER REV_SIG ROOT
    "    Y = T.alloc_buffer((10, 10))\n"
    "    for i, j in T.grid(10, 10):\n"
    "        with T.block(\"b0\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    B0_BODY(I12)
    "    for i, j in T.grid(10, 10):\n"
    "        with T.block(\"b1\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    B1_BODY(I12);

/* TVM's concat_two_elemwise: each input feeds part of the concatenation. */
#define CAT_SIG                                                                                    \
  "def main(x: T.Buffer((16,), \"float32\"), y: T.Buffer((8,), \"float32\"), "                     \
  "T_concat: T.Buffer((24,), \"float32\")):\n"
#define ADD1_BODY(ind)                                \
  ind "T.reads(x[ax])\n"                              \
  ind "T.writes(T_add_1[ax])\n"                       \
  ind "T_add_1[ax] = x[ax] + T.float32(1)\n"
#define ADD2_BODY(ind)                                \
  ind "T.reads(y[ax])\n"                              \
  ind "T.writes(T_add_2[ax])\n"                       \
  ind "T_add_2[ax] = y[ax] + T.float32(2)\n"
#define CAT_BODY(ind)                                                                       \
  ind "T.reads(T_add_2[ax - 16], T_add_1[ax])\n"                                            \
  ind "T.writes(T_concat[ax])\n"                                                            \
  ind "T_concat[ax] = T.if_then_else(16 <= ax, T_add_2[ax - 16], T_add_1[ax])\n"
static const char *CONCAT =
    HEADER CAT_SIG ROOT
    "    T_add_1 = T.alloc_buffer((16,))\n"
    "    T_add_2 = T.alloc_buffer((8,))\n"
    "    for i in range(16):\n"
    "        with T.block(\"T_add_1\"):\n"
    "            ax = T.axis.spatial(16, i)\n"
    ADD1_BODY(I12)
    "    for i in range(8):\n"
    "        with T.block(\"T_add_2\"):\n"
    "            ax = T.axis.spatial(8, i)\n"
    ADD2_BODY(I12)
    "    for i in range(24):\n"
    "        with T.block(\"T_concat\"):\n"
    "            ax = T.axis.spatial(24, i)\n"
    CAT_BODY(I12);

/* TVM's read_out_of_bound: C reads B[v] and B[v + 1]. */
#define OOB_SIG "def main(A: T.Buffer((16,), \"float32\"), C: T.Buffer((16,), \"float32\")):\n"
#define OOB_B_BODY(ind)   \
  ind "T.reads(A[v])\n"   \
  ind "T.writes(B[v])\n"  \
  ind "B[v] = A[v]\n"
#define OOB_C_BODY(ind)                                                        \
  ind "T.reads(B[v:v + 2])\n"                                                  \
  ind "T.writes(C[v])\n"                                                       \
  ind "C[v] = T.if_then_else(v < 15, T.max(B[v], B[v + 1]), B[v])\n"
static const char *OUT_OF_BOUND =
    HEADER OOB_SIG ROOT
    "    B = T.alloc_buffer((16,))\n"
    "    for i in range(16):\n"
    "        with T.block(\"B\"):\n"
    "            v = T.axis.spatial(16, i)\n"
    OOB_B_BODY(I12)
    "    for j in range(16):\n"
    "        with T.block(\"C\"):\n"
    "            v = T.axis.spatial(16, j)\n"
    OOB_C_BODY(I12);

/* TVM's fail_subtree_compact_dataflow: B written by two blocks. */
static const char *TWO_WRITERS =
    HEADER TWO_SIG ROOT
    "    B = T.alloc_buffer((128, 128))\n"
    "    for i in range(128):\n"
    "        for j in range(64):\n"
    "            with T.block(\"B_0\"):\n"
    "                vi = T.axis.spatial(128, i)\n"
    "                vj = T.axis.spatial(128, j)\n"
    B_BODY(I16)
    "        for j in range(64):\n"
    "            with T.block(\"B_1\"):\n"
    "                vi = T.axis.spatial(128, i)\n"
    "                vj = T.axis.spatial(128, j + 64)\n"
    B_BODY(I16)
    "    for i, j in T.grid(128, 128):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    C_BODY(I12);

/* A write-after-read in the scope: block D overwrites A after B read it. */
#define WAR_SIG "def main(A: T.Buffer((128, 128), \"float32\"), C: T.Buffer((128, 128), \"float32\")):\n"
static const char *WAR =
    HEADER WAR_SIG ROOT
    "    B = T.alloc_buffer((128, 128))\n"
    "    for i, j in T.grid(128, 128):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    B_BODY(I12)
    "    for i, j in T.grid(128, 128):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    C_BODY(I12)
    "    for i, j in T.grid(128, 128):\n"
    "        with T.block(\"D\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(C[vi, vj])\n"
    "            T.writes(A[vi, vj])\n"
    "            A[vi, vj] = C[vi, vj]\n";

/* Softmax's shape: M has no producer, and its consumer E runs before D. */
static const char *REDUCE_THEN_READ =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 8), \"float32\"), D: T.Buffer((4,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    M = T.alloc_buffer((4,))\n"
    "    E = T.alloc_buffer((4, 8))\n"
    "    for i, k in T.grid(4, 8):\n"
    "        with T.block(\"M\"):\n"
    "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    "            T.reads(A[vi, vk])\n"
    "            T.writes(M[vi])\n"
    "            with T.init():\n"
    "                M[vi] = T.float32(-3.4028235e+38)\n"
    "            M[vi] = T.max(M[vi], A[vi, vk])\n"
    "    for i, j in T.grid(4, 8):\n"
    "        with T.block(\"E\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(A[vi, vj], M[vi])\n"
    "            T.writes(E[vi, vj])\n"
    "            E[vi, vj] = A[vi, vj] - M[vi]\n"
    "    for i, k in T.grid(4, 8):\n"
    "        with T.block(\"D\"):\n"
    "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    "            T.reads(E[vi, vk])\n"
    "            T.writes(D[vi])\n"
    "            with T.init():\n"
    "                D[vi] = T.float32(0)\n"
    "            D[vi] = D[vi] + E[vi, vk]\n";

/* D's result is never read (no consumer); its producer A runs after Y. */
static const char *DEAD_END =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(X: T.Buffer((16,), \"float32\"), Y: T.Buffer((16,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    A = T.alloc_buffer((16,))\n"
    "    D = T.alloc_buffer((16,))\n"
    "    for i in range(16):\n"
    "        with T.block(\"Y\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.reads(X[vi])\n"
    "            T.writes(Y[vi])\n"
    "            Y[vi] = X[vi] + T.float32(1)\n"
    "    for i in range(16):\n"
    "        with T.block(\"A\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.reads(X[vi])\n"
    "            T.writes(A[vi])\n"
    "            A[vi] = X[vi] * T.float32(2)\n"
    "    for i in range(16):\n"
    "        with T.block(\"D\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.reads(A[vi])\n"
    "            T.writes(D[vi])\n"
    "            D[vi] = A[vi] + T.float32(1)\n";

/* P pads Y: it reads Y only for 1 <= vi < 7. */
static const char *PAD_AFTER =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(X: T.Buffer((6,), \"float32\"), P: T.Buffer((8,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    Y = T.alloc_buffer((6,))\n"
    "    for i in range(6):\n"
    "        with T.block(\"Y\"):\n"
    "            vi = T.axis.spatial(6, i)\n"
    "            T.reads(X[vi])\n"
    "            T.writes(Y[vi])\n"
    "            Y[vi] = X[vi] * T.float32(2)\n"
    "    for i in range(8):\n"
    "        with T.block(\"P\"):\n"
    "            vi = T.axis.spatial(8, i)\n"
    "            T.reads(Y[vi - 1])\n"
    "            T.writes(P[vi])\n"
    "            P[vi] = T.if_then_else(1 <= vi and vi < 7, Y[vi - 1], T.float32(0))\n";

/* D sums rows of E; N reads both. */
static const char *SUM_THEN_NORM =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 8), \"float32\"), N: T.Buffer((4, 8), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    E = T.alloc_buffer((4, 8))\n"
    "    D = T.alloc_buffer((4,))\n"
    "    for i, j in T.grid(4, 8):\n"
    "        with T.block(\"E\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(A[vi, vj])\n"
    "            T.writes(E[vi, vj])\n"
    "            E[vi, vj] = A[vi, vj] * T.float32(2)\n"
    "    for i, k in T.grid(4, 8):\n"
    "        with T.block(\"D\"):\n"
    "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    "            T.reads(E[vi, vk])\n"
    "            T.writes(D[vi])\n"
    "            with T.init():\n"
    "                D[vi] = T.float32(0)\n"
    "            D[vi] = D[vi] + E[vi, vk]\n"
    "    for i, j in T.grid(4, 8):\n"
    "        with T.block(\"N\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(E[vi, vj], D[vi])\n"
    "            T.writes(N[vi, vj])\n"
    "            N[vi, vj] = E[vi, vj] / D[vi]\n";

/* A's loop i_1 (2) split by 5: one tile, T.where keeps 2 of its 5. */
static const char *NESTED_TAIL =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(X: T.Buffer((16,), \"float32\"), C: T.Buffer((16,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    A = T.alloc_buffer((16,))\n"
    "    for i_0, i_1_0, i_1_1 in T.grid(8, 1, 5):\n"
    "        with T.block(\"A\"):\n"
    "            vi = T.axis.spatial(16, i_0 * 2 + i_1_1)\n"
    "            T.where(i_1_0 * 5 + i_1_1 < 2)\n"
    "            T.reads(X[vi])\n"
    "            T.writes(A[vi])\n"
    "            A[vi] = X[vi] * T.float32(2)\n"
    "    for i in range(16):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.reads(A[vi])\n"
    "            T.writes(C[vi])\n"
    "            C[vi] = A[vi] + T.float32(1)\n";

/* A's loop i_1 (4) split by 3: the second tile keeps 1 of its 3, and the
 * next tile's points lie right after it. */
static const char *NESTED_OVERSHOOT =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(X: T.Buffer((16,), \"float32\"), C: T.Buffer((16,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    A = T.alloc_buffer((16,))\n"
    "    for i_0, i_1_0, i_1_1 in T.grid(4, 2, 3):\n"
    "        with T.block(\"A\"):\n"
    "            vi = T.axis.spatial(16, i_0 * 4 + i_1_0 * 3 + i_1_1)\n"
    "            T.where(i_1_0 * 3 + i_1_1 < 4)\n"
    "            T.reads(X[vi])\n"
    "            T.writes(A[vi])\n"
    "            A[vi] = X[vi] * T.float32(2)\n"
    "    for i in range(16):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.reads(A[vi])\n"
    "            T.writes(C[vi])\n"
    "            C[vi] = A[vi] + T.float32(1)\n";

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static sch_rv_t block_of(sch_t *sch, const char *name) {
  sch_rv_t b;
  assert_int_equal(sch_get_block(sch, &b, name), MLC_OK);
  return b;
}

static sch_rv_t loop_of(sch_t *sch, const char *block, int index) {
  const sch_rv_t *loops;
  int n;
  assert_int_equal(sch_get_loops(sch, &loops, &n, block_of(sch, block)), MLC_OK);
  assert_true(index < n);
  return loops[index];
}

typedef int (*at_fn)(sch_t *, sch_rv_t, sch_rv_t, bool, int);

/* Moves `block` under loop `index` of block `at`; must succeed. */
static void move_ok(sch_t *sch, at_fn fn, const char *block, const char *at, int index, bool preserve, int pos) {
  int rc = fn(sch, block_of(sch, block), loop_of(sch, at, index), preserve, pos);
  if (rc != MLC_OK) fprintf(stderr, "%s\n", sch_error(sch));
  assert_int_equal(rc, MLC_OK);
}

/* A failing move: the error contains `needle`; program and trace unchanged. */
static void assert_move_fails(const char *src, at_fn fn, const char *block, const char *at, int index, int pos,
                              const char *needle) {
  sch_t *sch = st_schedule(src);
  sch_rv_t b = block_of(sch, block), l = loop_of(sch, at, index);
  int ninsts = sch_get_trace(sch)->n;
  st_assert_fails(sch, fn(sch, b, l, true, pos), needle, src);
  assert_int_equal(sch_get_trace(sch)->n, ninsts);
  sch_free(sch);
}

/* ------------------------------------------------------------------------ */
/* compute_at                                                                */
/* ------------------------------------------------------------------------ */

/* The tile of B that one iteration of j_0 needs: 16 x 16, nothing more. */
static void compute_at_into_a_tiled_consumer_computes_the_tile(void **state) {
  (void)state;
  sch_t *sch = st_schedule(TILED_C);
  move_ok(sch, sch_compute_at, "B", "C", 1, false, -1);
  st_check(sch, TILED_C,
           HEADER TWO_SIG ROOT
           "    B = T.alloc_buffer((128, 128))\n"
           "    for i_0, j_0 in T.grid(8, 8):\n"
           "        for ax0, ax1 in T.grid(16, 16):\n"
           "            with T.block(\"B\"):\n"
           "                vi = T.axis.spatial(128, i_0 * 16 + ax0)\n"
           "                vj = T.axis.spatial(128, j_0 * 16 + ax1)\n"
           B_BODY(I16)
           "        for i_1, j_1 in T.grid(16, 16):\n"
           "            with T.block(\"C\"):\n"
           "                vi = T.axis.spatial(128, i_0 * 16 + i_1)\n"
           "                vj = T.axis.spatial(128, j_0 * 16 + j_1)\n"
           C_BODY(I16));
  sch_free(sch);
}

/* TVM's test_compute_at_two_elementwise: the unit loop and `i + ax0` kept. */
static void compute_at_preserves_unit_loops_when_asked(void **state) {
  (void)state;
  sch_t *sch = st_schedule(TWO);
  move_ok(sch, sch_compute_at, "B", "C", 0, true, -1);
  st_check(sch, TWO,
           HEADER TWO_SIG ROOT
           "    B = T.alloc_buffer((128, 128))\n"
           "    for i in range(128):\n"
           "        for ax0, ax1 in T.grid(1, 128):\n"
           "            with T.block(\"B\"):\n"
           "                vi = T.axis.spatial(128, i + ax0)\n"
           "                vj = T.axis.spatial(128, ax1)\n"
           B_BODY(I16)
           "        for j in range(128):\n"
           "            with T.block(\"C\"):\n"
           "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
           C_BODY(I16));
  sch_free(sch);
}

static void compute_at_drops_unit_loops_by_default(void **state) {
  (void)state;
  sch_t *sch = st_schedule(TWO);
  move_ok(sch, sch_compute_at, "B", "C", 0, false, -1);
  st_check(sch, TWO,
           HEADER TWO_SIG ROOT
           "    B = T.alloc_buffer((128, 128))\n"
           "    for i in range(128):\n"
           "        for ax0 in range(128):\n"
           "            with T.block(\"B\"):\n"
           "                vi, vj = T.axis.remap(\"SS\", [i, ax0])\n"
           B_BODY(I16)
           "        for j in range(128):\n"
           "            with T.block(\"C\"):\n"
           "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
           C_BODY(I16));
  sch_free(sch);
}

/* compute_at records [block, loop] and [preserve_unit_loops, index]. */
static void compute_at_records_its_inputs_and_attrs(void **state) {
  (void)state;
  sch_t *sch = st_schedule(TWO);
  sch_rv_t b = block_of(sch, "B"), l = loop_of(sch, "C", 0);
  assert_int_equal(sch_compute_at(sch, b, l, true, -2), MLC_OK);
  const sch_trace_t *t = sch_get_trace(sch);
  const sch_inst_t *inst = &t->insts[t->n - 1];
  assert_ptr_equal(inst->kind, sch_inst_kind_find("ComputeAt"));
  assert_int_equal(inst->ninputs, 2);
  assert_int_equal(inst->inputs[0].u.rv, b);
  assert_int_equal(inst->inputs[1].u.rv, l);
  assert_int_equal(inst->nattrs, 2);
  assert_int_equal(inst->attrs[0].u.i, 1);
  assert_int_equal(inst->attrs[1].u.i, -2);
  assert_int_equal(inst->noutputs, 0);
  /* The block RV still names the moved block. */
  tir_block_t *node;
  assert_int_equal(sch_get_block_node(sch, b, &node), MLC_OK);
  assert_string_equal(node->name, "B");
  sch_free(sch);
}

/* The padding block under the convolution's h loop: 3 rows of the padded
 * input, all columns and channels. */
static void compute_at_of_padding_under_a_conv_loop(void **state) {
  (void)state;
  sch_t *sch = st_schedule(CONV);
  move_ok(sch, sch_compute_at, "PadInput", "conv", 1, false, -1);
  st_check(sch, CONV,
           HEADER CONV_SIG ROOT
           "    PadInput = T.alloc_buffer((1, 10, 10, 4))\n"
           "    for n, h in T.grid(1, 8):\n"
           "        for ax0, ax1, ax2 in T.grid(3, 10, 4):\n"
           "            with T.block(\"PadInput\"):\n"
           "                v_i0 = T.axis.spatial(1, 0)\n"
           "                v_i1 = T.axis.spatial(10, h + ax0)\n"
           "                v_i2 = T.axis.spatial(10, ax1)\n"
           "                v_i3 = T.axis.spatial(4, ax2)\n"
           PAD_BODY(I16)
           "        for w, co, rh, rw, rc in T.grid(8, 8, 3, 3, 4):\n"
           "            with T.block(\"conv\"):\n"
           "                v_n, v_h, v_w, v_co, v_rh, v_rw, v_rc = T.axis.remap(\"SSSSRRR\", [n, h, w, co, rh, rw, rc])\n"
           CONV_BODY(I16));
  sch_free(sch);
}

/* TVM's test_compute_at_tiled_pooling_read_cache: the tile reaches one row
 * outside the buffer at each end, so a predicate keeps it inside. */
static void compute_at_predicates_a_tile_that_leaves_the_buffer(void **state) {
  (void)state;
  sch_t *sch = st_schedule(POOL);
  move_ok(sch, sch_compute_at, "cache", "pool", 0, false, -1);
  st_check(sch, POOL,
           HEADER POOL_SIG ROOT
           "    cache = T.alloc_buffer((32,))\n"
           "    for h_0 in range(4):\n"
           "        for ax0 in range(10):\n"
           "            with T.block(\"cache\"):\n"
           "                v = T.axis.spatial(32, h_0 * 8 - 1 + ax0)\n"
           "                T.where(h_0 * 8 + ax0 >= 1 and h_0 * 8 + ax0 < 33)\n"
           CACHE_BODY(I16)
           "        for h_1, k in T.grid(8, 3):\n"
           "            with T.block(\"pool\"):\n"
           "                h = T.axis.spatial(32, h_0 * 8 + h_1)\n"
           "                kh = T.axis.reduce(3, k)\n"
           POOL_BODY(I16));
  sch_free(sch);
}

/* TVM's test_compute_at_reduction_block: B keeps its reduction loop. */
static void compute_at_of_a_reduction_block_keeps_its_reduction_loop(void **state) {
  (void)state;
  sch_t *sch = st_schedule(MULTI_REDUCTION);
  move_ok(sch, sch_compute_at, "B", "C", 0, false, -1);
  st_check(sch, MULTI_REDUCTION,
           HEADER MR_SIG ROOT
           "    B = T.alloc_buffer((16,))\n"
           "    for k in range(16):\n"
           "        for ax0 in range(16):\n"
           "            with T.block(\"B\"):\n"
           "                vi, vk = T.axis.remap(\"SR\", [k, ax0])\n"
           MR_B(I16)
           "        with T.block(\"C\"):\n"
           "            vk = T.axis.reduce(16, k)\n"
           MR_C(I12));
  sch_free(sch);
}

/* Shared memory is shared by the threads of a block: the tile of A_shared
 * under k_0 covers all 16 rows of the thread block, not one thread's row. */
static void compute_at_of_shared_memory_covers_all_threads(void **state) {
  (void)state;
  sch_t *sch = st_schedule(GPU_MM);
  move_ok(sch, sch_compute_at, "A_shared", "C", 2, false, -1);
  st_check(sch, GPU_MM,
           HEADER GPU_SIG ROOT
           "    A_shared = T.alloc_buffer((32, 32), scope=\"shared\")\n"
           "    for bx in T.thread_binding(4, thread=\"blockIdx.x\"):\n"
           "        for tx in T.thread_binding(16, thread=\"threadIdx.x\"):\n"
           "            for k_0 in range(8):\n"
           "                for ax0, ax1 in T.grid(16, 4):\n"
           "                    with T.block(\"A_shared\"):\n"
           "                        v0 = T.axis.spatial(32, bx // 2 * 16 + ax0)\n"
           "                        v1 = T.axis.spatial(32, k_0 * 4 + ax1)\n"
           AS_BODY("                        ")
           "                for j, k_1 in T.grid(16, 4):\n"
           "                    with T.block(\"C\"):\n"
           "                        vi = T.axis.spatial(32, bx // 2 * 16 + tx)\n"
           "                        vj = T.axis.spatial(32, bx % 2 * 16 + j)\n"
           "                        vk = T.axis.reduce(32, k_0 * 4 + k_1)\n"
           MM_BODY("                        "));
  sch_free(sch);
}

/* TVM's test_compute_at_to_index: with C already under D's loop, B goes
 * to the first valid position (index -2), before C. */
static void compute_at_index_chooses_the_position(void **state) {
  (void)state;
  sch_t *sch = st_schedule(TWO_PRODUCERS);
  move_ok(sch, sch_compute_at, "C", "D", 0, false, -1);
  move_ok(sch, sch_compute_at, "B", "D", 0, false, -2);
  st_check(sch, TWO_PRODUCERS,
           HEADER FP_SIG ROOT
           "    B = T.alloc_buffer((128, 128))\n"
           "    C = T.alloc_buffer((128, 128))\n"
           "    for i in range(128):\n"
           "        for ax0 in range(128):\n"
           "            with T.block(\"B\"):\n"
           "                vi, vj = T.axis.remap(\"SS\", [i, ax0])\n"
           B_BODY(I16)
           "        for ax0 in range(128):\n"
           "            with T.block(\"C\"):\n"
           "                vi, vj = T.axis.remap(\"SS\", [i, ax0])\n"
           "                T.reads(A[vi, vj])\n"
           "                T.writes(C[vi, vj])\n"
           "                C[vi, vj] = A[vi, vj] + T.float32(1)\n"
           "        for j in range(128):\n"
           "            with T.block(\"D\"):\n"
           "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
           "                T.reads(B[vi, vj], C[vi, vj])\n"
           "                T.writes(D[vi, vj])\n"
           "                D[vi, vj] = B[vi, vj] + C[vi, vj]\n");
  sch_free(sch);
}

/* TVM's test_compute_at_blockized_1: the consumer is an outer block whose
 * region over B is read as declared. */
static void compute_at_into_a_blockized_consumer(void **state) {
  (void)state;
  sch_t *sch = st_schedule(BLOCKIZED);
  move_ok(sch, sch_compute_at, "B", "C_outer", 1, true, -1);
  st_check(sch, BLOCKIZED,
           HEADER TWO_SIG ROOT
           "    B = T.alloc_buffer((128, 128))\n"
           "    for i, j in T.grid(8, 8):\n"
           "        for ax0, ax1 in T.grid(16, 16):\n"
           "            with T.block(\"B\"):\n"
           "                vi = T.axis.spatial(128, i * 16 + ax0)\n"
           "                vj = T.axis.spatial(128, j * 16 + ax1)\n"
           B_BODY(I16)
           "        with T.block(\"C_outer\"):\n"
           "            vi_o, vj_o = T.axis.remap(\"SS\", [i, j])\n"
           "            T.reads(B[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])\n"
           "            T.writes(C[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])\n"
           "            for i_i, j_i in T.grid(16, 16):\n"
           "                with T.block(\"C_inner\"):\n"
           "                    vi = T.axis.spatial(128, vi_o * 16 + i_i)\n"
           "                    vj = T.axis.spatial(128, vj_o * 16 + j_i)\n"
           C_BODY(I20));
  sch_free(sch);
}

/* TVM's test_compute_at_blockized_2: B_outer provides B[vio * 16 : +16], so
 * a 32 x 32 tile of C needs vio in [i_o * 2, i_o * 2 + 1]. */
static void compute_at_of_a_block_providing_tiles(void **state) {
  (void)state;
  sch_t *sch = st_schedule(BLOCKIZED_B);
  move_ok(sch, sch_compute_at, "B_outer", "C", 1, true, -1);
  st_check(sch, BLOCKIZED_B,
           HEADER TWO_SIG ROOT
           "    B = T.alloc_buffer((128, 128))\n"
           "    for i_o, j_o in T.grid(4, 4):\n"
           "        for ax0, ax1 in T.grid(2, 2):\n"
           "            with T.block(\"B_outer\"):\n"
           "                vio = T.axis.spatial(8, i_o * 2 + ax0)\n"
           "                vjo = T.axis.spatial(8, j_o * 2 + ax1)\n"
           "                T.reads(A[vio * 16:vio * 16 + 16, vjo * 16:vjo * 16 + 16])\n"
           "                T.writes(B[vio * 16:vio * 16 + 16, vjo * 16:vjo * 16 + 16])\n"
           "                for i_i, j_i in T.grid(16, 16):\n"
           "                    with T.block(\"B_inner\"):\n"
           "                        vi = T.axis.spatial(128, vio * 16 + i_i)\n"
           "                        vj = T.axis.spatial(128, vjo * 16 + j_i)\n"
           B_BODY("                        ")
           "        for i_i, j_i in T.grid(32, 32):\n"
           "            with T.block(\"C\"):\n"
           "                vi = T.axis.spatial(128, i_o * 32 + i_i)\n"
           "                vj = T.axis.spatial(128, j_o * 32 + j_i)\n"
           C_BODY(I16));
  sch_free(sch);
}

/* TVM's test_compute_at_rev_iter: the inverse of Y[9 - vi, 9 - vj] at the
 * transposed reads of one row i of Z. */
static void compute_at_inverts_a_mirrored_write(void **state) {
  (void)state;
  sch_t *sch = st_schedule(REV_ITER);
  move_ok(sch, sch_compute_at, "b0", "b1", 0, false, -1);
  st_check(sch, REV_ITER,
           HEADER REV_SIG ROOT
           "    Y = T.alloc_buffer((10, 10))\n"
           "    for i in range(10):\n"
           "        for ax0 in range(10):\n"
           "            with T.block(\"b0\"):\n"
           "                vi = T.axis.spatial(10, ax0)\n"
           "                vj = T.axis.spatial(10, 9 - i)\n"
           B0_BODY(I16)
           "        for j in range(10):\n"
           "            with T.block(\"b1\"):\n"
           "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
           B1_BODY(I16));
  sch_free(sch);
}

/* TVM's test_compute_at_concat: each producer runs only for the part of
 * the concatenation it feeds. */
static void compute_at_of_concat_inputs_predicates_each_part(void **state) {
  (void)state;
  sch_t *sch = st_schedule(CONCAT);
  move_ok(sch, sch_compute_at, "T_add_1", "T_concat", 0, false, -1);
  move_ok(sch, sch_compute_at, "T_add_2", "T_concat", 0, false, -1);
  st_check(sch, CONCAT,
           HEADER CAT_SIG ROOT
           "    T_add_1 = T.alloc_buffer((16,))\n"
           "    T_add_2 = T.alloc_buffer((8,))\n"
           "    for i in range(24):\n"
           "        with T.block(\"T_add_1\"):\n"
           "            ax = T.axis.spatial(16, i)\n"
           "            T.where(i < 16)\n"
           ADD1_BODY(I12)
           "        with T.block(\"T_add_2\"):\n"
           "            ax = T.axis.spatial(8, i - 16)\n"
           "            T.where(i >= 16)\n"
           ADD2_BODY(I12)
           "        with T.block(\"T_concat\"):\n"
           "            ax = T.axis.spatial(24, i)\n"
           CAT_BODY(I12));
  sch_free(sch);
}

/* TVM's read_out_of_bound: C at j needs B[j] and B[j + 1]; the last
 * iteration's B[16] does not exist. */
static void compute_at_predicates_a_read_past_the_end(void **state) {
  (void)state;
  sch_t *sch = st_schedule(OUT_OF_BOUND);
  move_ok(sch, sch_compute_at, "B", "C", 0, false, -1);
  st_check(sch, OUT_OF_BOUND,
           HEADER OOB_SIG ROOT
           "    B = T.alloc_buffer((16,))\n"
           "    for j in range(16):\n"
           "        for ax0 in range(2):\n"
           "            with T.block(\"B\"):\n"
           "                v = T.axis.spatial(16, j + ax0)\n"
           "                T.where(j + ax0 < 16)\n"
           OOB_B_BODY(I16)
           "        with T.block(\"C\"):\n"
           "            v = T.axis.spatial(16, j)\n"
           OOB_C_BODY(I12));
  sch_free(sch);
}

/* Replaying the recorded trace on the original program gives the same
 * program. */
static void compute_at_replays_from_its_trace(void **state) {
  (void)state;
  sch_t *sch = st_schedule(TWO_PRODUCERS);
  move_ok(sch, sch_compute_at, "C", "D", 0, true, -1);
  move_ok(sch, sch_compute_at, "B", "D", 0, false, -2);
  sch_t *fresh = st_schedule(TWO_PRODUCERS);
  int rc = sch_trace_apply(fresh, sch_get_trace(sch), true);
  if (rc != MLC_OK) fprintf(stderr, "%s\n", sch_error(fresh));
  assert_int_equal(rc, MLC_OK);
  char *want = tir_print_func(sch_func(sch));
  st_assert_script(sch_func(fresh), want);
  mlc_free(want);
  sch_free(fresh);
  sch_free(sch);
}

/* ------------------------------------------------------------------------ */
/* reverse_compute_at                                                        */
/* ------------------------------------------------------------------------ */

/* TVM's test_reverse_compute_at_tiled. */
static void reverse_compute_at_under_a_tiled_producer(void **state) {
  (void)state;
  sch_t *sch = st_schedule(TILED_B);
  move_ok(sch, sch_reverse_compute_at, "C", "B", 2, false, -1);
  st_check(sch, TILED_B,
           HEADER TWO_SIG ROOT
           "    B = T.alloc_buffer((128, 128))\n"
           "    for i_0, j_0, i_1 in T.grid(8, 8, 16):\n"
           "        for j_1 in range(16):\n"
           "            with T.block(\"B\"):\n"
           "                vi = T.axis.spatial(128, i_0 * 16 + i_1)\n"
           "                vj = T.axis.spatial(128, j_0 * 16 + j_1)\n"
           B_BODY(I16)
           "        for ax0 in range(16):\n"
           "            with T.block(\"C\"):\n"
           "                vi = T.axis.spatial(128, i_0 * 16 + i_1)\n"
           "                vj = T.axis.spatial(128, j_0 * 16 + ax0)\n"
           C_BODY(I16));
  sch_free(sch);
}

/* The write-back of a tiled matmul's accumulator, per 8 x 8 output tile. */
static void reverse_compute_at_of_an_epilogue_write_back(void **state) {
  (void)state;
  sch_t *sch = st_schedule(MATMUL_WB);
  move_ok(sch, sch_reverse_compute_at, "C_local", "C", 1, false, -1);
  st_check(sch, MATMUL_WB,
           HEADER MMT_SIG ROOT
           "    C_local = T.alloc_buffer((32, 32), scope=\"local\")\n"
           "    for i_0, j_0 in T.grid(4, 4):\n"
           "        for i_1, j_1, k in T.grid(8, 8, 32):\n"
           "            with T.block(\"C\"):\n"
           "                vi = T.axis.spatial(32, i_0 * 8 + i_1)\n"
           "                vj = T.axis.spatial(32, j_0 * 8 + j_1)\n"
           "                vk = T.axis.reduce(32, k)\n"
           ACC_BODY(I16)
           "        for ax0, ax1 in T.grid(8, 8):\n"
           "            with T.block(\"C_local\"):\n"
           "                v0 = T.axis.spatial(32, i_0 * 8 + ax0)\n"
           "                v1 = T.axis.spatial(32, j_0 * 8 + ax1)\n"
           WB_BODY(I16));
  sch_free(sch);
}

/* relu after the matmul, under the outermost tile loop: 8 whole rows. */
static void reverse_compute_at_of_relu_under_the_outer_loop(void **state) {
  (void)state;
  sch_t *sch = st_schedule(MATMUL_RELU);
  move_ok(sch, sch_reverse_compute_at, "relu", "C", 0, false, -1);
  st_check(sch, MATMUL_RELU,
           HEADER RELU_SIG ROOT
           "    C = T.alloc_buffer((32, 32))\n"
           "    for i_0 in range(4):\n"
           "        for j_0, i_1, j_1, k in T.grid(4, 8, 8, 32):\n"
           "            with T.block(\"C\"):\n"
           "                vi = T.axis.spatial(32, i_0 * 8 + i_1)\n"
           "                vj = T.axis.spatial(32, j_0 * 8 + j_1)\n"
           "                vk = T.axis.reduce(32, k)\n"
           MMC_BODY(I16)
           "        for ax0, ax1 in T.grid(8, 32):\n"
           "            with T.block(\"relu\"):\n"
           "                vi = T.axis.spatial(32, i_0 * 8 + ax0)\n"
           "                vj = T.axis.spatial(32, ax1)\n"
           RELU_BODY(I16));
  sch_free(sch);
}

/* TVM's floordiv_and_floormod_indices: the reads temp[v // 16, v % 16]
 * invert to v in [i * 16, i * 16 + 15]. */
static void reverse_compute_at_inverts_floordiv_floormod_reads(void **state) {
  (void)state;
  sch_t *sch = st_schedule(FLOORDIV_MOD);
  move_ok(sch, sch_reverse_compute_at, "B", "A", 0, false, -1);
  st_check(sch, FLOORDIV_MOD,
           HEADER FDM_SIG ROOT
           "    temp = T.alloc_buffer((16, 16))\n"
           "    for i in range(16):\n"
           "        for j in range(16):\n"
           "            with T.block(\"A\"):\n"
           "                v_i, v_j = T.axis.remap(\"SS\", [i, j])\n"
           TEMP_BODY(I16)
           "        for ax0 in range(16):\n"
           "            with T.block(\"B\"):\n"
           "                v_i = T.axis.spatial(256, i * 16 + ax0)\n"
           Y_BODY(I16));
  sch_free(sch);
}

/* TVM's test_reverse_compute_at_to_index: D between B's and C's loops. */
static void reverse_compute_at_index_places_between_siblings(void **state) {
  (void)state;
  sch_t *sch = st_schedule(TO_INDEX);
  move_ok(sch, sch_reverse_compute_at, "D", "B", 2, false, 1);
  st_check(sch, TO_INDEX,
           HEADER IDX_SIG ROOT
           "    B = T.alloc_buffer((128, 128))\n"
           "    C = T.alloc_buffer((128, 128))\n"
           IDX_TILED_B
           IDX_NEST("D", IDX_D_BODY)
           IDX_NEST("C", IDX_C_BODY));
  sch_free(sch);
}

/* With index -1 (the last valid position) D goes after C's nest: nothing
 * under the loop consumes D. */
static void reverse_compute_at_defaults_to_the_last_valid_position(void **state) {
  (void)state;
  sch_t *sch = st_schedule(TO_INDEX);
  move_ok(sch, sch_reverse_compute_at, "D", "B", 2, false, -1);
  st_check(sch, TO_INDEX,
           HEADER IDX_SIG ROOT
           "    B = T.alloc_buffer((128, 128))\n"
           "    C = T.alloc_buffer((128, 128))\n"
           IDX_TILED_B
           IDX_NEST("C", IDX_C_BODY)
           IDX_NEST("D", IDX_D_BODY));
  sch_free(sch);
}

static void reverse_compute_at_records_its_kind(void **state) {
  (void)state;
  sch_t *sch = st_schedule(TILED_B);
  move_ok(sch, sch_reverse_compute_at, "C", "B", 2, true, -1);
  const sch_trace_t *t = sch_get_trace(sch);
  const sch_inst_t *inst = &t->insts[t->n - 1];
  assert_ptr_equal(inst->kind, sch_inst_kind_find("ReverseComputeAt"));
  assert_int_equal(inst->ninputs, 2);
  assert_int_equal(inst->nattrs, 2);
  assert_int_equal(inst->attrs[0].u.i, 1);
  assert_int_equal(inst->attrs[1].u.i, -1);
  sch_free(sch);
}

/* ------------------------------------------------------------------------ */
/* The special locations of sample_compute_location                          */
/* ------------------------------------------------------------------------ */

/* The last instruction of the schedule's trace. */
static const sch_inst_t *last_inst(const sch_t *sch) {
  const sch_trace_t *t = sch_get_trace(sch);
  assert_true(t->n > 0);
  return &t->insts[t->n - 1];
}

/* The trace replays on a fresh schedule of src to the same program. */
static void assert_replays(const sch_t *sch, const char *src) {
  sch_t *fresh = st_schedule(src);
  assert_int_equal(sch_trace_apply(fresh, sch_get_trace(sch), true), MLC_OK);
  char *want = tir_print_func(sch_func(sch));
  st_assert_script(sch_func(fresh), want);
  mlc_free(want);
  sch_free(fresh);
}

static sch_rv_t sampled_location(sch_t *sch, sch_rv_t block, int64_t decision) {
  sch_rv_t loc = SCH_RV_NONE;
  assert_int_equal(sch_sample_compute_location(sch, &loc, block, &decision), MLC_OK);
  return loc;
}

/* TVM's ConcreteSchedule: compute_at to "root" leaves the block where it
 * is, and is recorded all the same. */
static void compute_at_the_root_location_is_a_recorded_no_op(void **state) {
  (void)state;
  sch_t *sch = st_schedule(TWO);
  sch_rv_t b = block_of(sch, "B"), c = block_of(sch, "C"), loc = sampled_location(sch, b, -1);
  assert_int_equal(sch_compute_at(sch, b, loc, true, -1), MLC_OK);
  st_check(sch, TWO, TWO);
  assert_ptr_equal(last_inst(sch)->kind, &sch_inst_kinds[SCH_INST_COMPUTE_AT]);
  assert_int_equal(last_inst(sch)->inputs[1].u.rv, loc);
  assert_int_equal(sch_reverse_compute_at(sch, c, sampled_location(sch, c, -1), true, -1), MLC_OK);
  st_check(sch, TWO, TWO);
  assert_ptr_equal(last_inst(sch)->kind, &sch_inst_kinds[SCH_INST_REVERSE_COMPUTE_AT]);
  assert_replays(sch, TWO);
  sch_free(sch);
}

static const char *TWO_INLINED =
    HEADER TWO_SIG ROOT
    "    for i, j in T.grid(128, 128):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(A[vi, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)\n";

/* compute_at to "inline" is compute_inline, recorded as ComputeAt. */
static void compute_at_the_inline_location_inlines_the_block(void **state) {
  (void)state;
  sch_t *sch = st_schedule(TWO);
  sch_rv_t b = block_of(sch, "B"), loc = sampled_location(sch, b, -2);
  assert_int_equal(sch_compute_at(sch, b, loc, true, -1), MLC_OK);
  st_check(sch, TWO, TWO_INLINED);
  const sch_trace_t *t = sch_get_trace(sch);
  assert_ptr_equal(last_inst(sch)->kind, &sch_inst_kinds[SCH_INST_COMPUTE_AT]);
  assert_ptr_equal(t->insts[t->n - 2].kind, &sch_inst_kinds[SCH_INST_SAMPLE_COMPUTE_LOCATION]);
  assert_replays(sch, TWO);
  sch_free(sch);
}

/* reverse_compute_at to "inline" is reverse_compute_inline. */
static void reverse_compute_at_the_inline_location_reverse_inlines_the_block(void **state) {
  (void)state;
  sch_t *sch = st_schedule(TWO);
  sch_rv_t b = block_of(sch, "B"), c = block_of(sch, "C");
  sch_rv_t loc = sampled_location(sch, b, -2); /* an "inline" loop RV */
  assert_int_equal(sch_reverse_compute_at(sch, c, loc, true, -1), MLC_OK);
  tir_block_t *node = NULL;
  assert_int_equal(sch_get_block_node(sch, b, &node), MLC_OK);
  assert_int_equal(sch_get_block_node(sch, c, &node), MLC_ESCHEDULE);
  tir_func_t *orig = st_parse(TWO);
  st_assert_same_outputs(orig, sch_func(sch), 3, 0.0);
  tir_func_free(orig);
  assert_ptr_equal(last_inst(sch)->kind, &sch_inst_kinds[SCH_INST_REVERSE_COMPUTE_AT]);
  assert_replays(sch, TWO);
  sch_free(sch);
}

/* An inline location that does not apply fails as the inline primitive
 * does, and leaves nothing behind. */
static void compute_at_the_inline_location_fails_as_compute_inline_does(void **state) {
  (void)state;
  sch_t *sch = st_schedule(TWO);
  sch_rv_t b = block_of(sch, "B"), c = block_of(sch, "C"), loc = sampled_location(sch, b, -2);
  int n = sch_get_trace(sch)->n;
  st_assert_fails(sch, sch_compute_at(sch, c, loc, true, -1), "compute_inline: block C is an output block", TWO);
  assert_int_equal(sch_get_trace(sch)->n, n);
  sch_free(sch);
}

/* ------------------------------------------------------------------------ */
/* Preconditions                                                             */
/* ------------------------------------------------------------------------ */

static void compute_at_rejects_a_loop_of_another_scope(void **state) {
  (void)state;
  assert_move_fails(BLOCKIZED, sch_compute_at, "B", "C_inner", 0, -1, "not under the same block scope");
}

static void compute_at_rejects_a_loop_above_the_block(void **state) {
  (void)state;
  assert_move_fails(TWO, sch_compute_at, "B", "B", 0, -1, "loop i is an ancestor of block B");
}

static void compute_at_rejects_an_output_block(void **state) {
  (void)state;
  assert_move_fails(TILED_B, sch_compute_at, "C", "B", 0, -1, "block C is an output block");
}

static void compute_at_rejects_a_consumer_outside_the_loop(void **state) {
  (void)state;
  assert_move_fails(TWO_CONSUMERS, sch_compute_at, "B", "C", 0, -1,
                    "compute_at: not all consumers of block B are under loop i");
}

static void reverse_compute_at_rejects_a_producer_outside_the_loop(void **state) {
  (void)state;
  assert_move_fails(TWO_PRODUCERS, sch_reverse_compute_at, "D", "C", 0, -1,
                    "reverse_compute_at: not all producers of block D are under loop i");
}

static void reverse_compute_at_rejects_a_consumer_that_runs_before_the_loop(void **state) {
  (void)state;
  /* M has no producer to pin it, but moving it under D's loop would put it
   * after E, which reads M (the property test's NaN on softmax). */
  assert_move_fails(REDUCE_THEN_READ, sch_reverse_compute_at, "M", "D", 0, -1,
                    "reverse_compute_at: consumer block E of block M is not under loop i and runs before it");
}

static void compute_at_rejects_a_producer_that_runs_after_the_loop(void **state) {
  (void)state;
  /* D has no consumer to pin it; under Y's loop it would read A before A
   * is written. */
  assert_move_fails(DEAD_END, sch_compute_at, "D", "Y", 0, -1,
                    "compute_at: producer block A of block D is not under loop i and runs after it");
}

static const char *EXP_NESTED_TAIL_RCA =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(X: T.Buffer((16,), \"float32\"), C: T.Buffer((16,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    A = T.alloc_buffer((16,))\n"
    "    for i_0, i_1_0 in T.grid(8, 1):\n"
    "        for i_1_1 in range(5):\n"
    "            with T.block(\"A\"):\n"
    "                vi = T.axis.spatial(16, i_0 * 2 + i_1_1)\n"
    "                T.where(i_1_0 * 5 + i_1_1 < 2)\n"
    "                T.reads(X[vi])\n"
    "                T.writes(A[vi])\n"
    "                A[vi] = X[vi] * T.float32(2)\n"
    "        for ax0 in range(2):\n"
    "            with T.block(\"C\"):\n"
    "                vi = T.axis.spatial(16, i_0 * 2 + ax0)\n"
    "                T.reads(A[vi])\n"
    "                T.writes(C[vi])\n"
    "                C[vi] = A[vi] + T.float32(1)\n";

static void reverse_compute_at_relaxes_the_producer_under_its_predicate(void **state) {
  (void)state;
  /* Under i_1_0 (extent 1) A writes 2 points, not 5: C covers those 2
   * (it covered 5 and read A ahead of its writes). */
  sch_t *sch = st_schedule(NESTED_TAIL);
  move_ok(sch, sch_reverse_compute_at, "C", "A", 1, true, -1);
  st_check(sch, NESTED_TAIL, EXP_NESTED_TAIL_RCA);
  sch_free(sch);
}

static void reverse_compute_at_rejects_a_producer_predicate_that_drops_points_inside(void **state) {
  (void)state;
  /* Under i_1_0 = 1, A writes vi = 4 i_0 + 3 only; C would cover 4 i_0 + 3
   * to 4 i_0 + 5 and read A[4 i_0 + 4] before the next i_0 writes it. */
  assert_move_fails(NESTED_OVERSHOOT, sch_reverse_compute_at, "C", "A", 1, -1,
                    "reverse_compute_at: the predicate of producer block A leaves part of what it writes under loop "
                    "i_1_0 unwritten in each iteration");
}

static void reverse_compute_at_rejects_a_consumer_with_iterations_that_read_nothing(void **state) {
  (void)state;
  /* Under Y's loop, P would run only where it reads Y: P[0] and P[7] (the
   * padding) would never be written. */
  assert_move_fails(PAD_AFTER, sch_reverse_compute_at, "P", "Y", 0, -1,
                    "reverse_compute_at: block P reads outside its producers' buffers for some values of vi (its "
                    "reads cover only part of its domain); those iterations would not run under loop i");
}

static void reverse_compute_at_rejects_a_producer_that_reduces_over_the_loop(void **state) {
  (void)state;
  /* D under E's column loop sums one column per iteration; N after it in
   * that iteration would divide by a partial sum. */
  sch_t *sch = st_schedule(SUM_THEN_NORM);
  move_ok(sch, sch_reverse_compute_at, "D", "E", 1, true, -1);
  char *before = tir_print_func(sch_func(sch));
  sch_rv_t n = block_of(sch, "N"), j = loop_of(sch, "E", 1);
  int ninsts = sch_get_trace(sch)->n;
  st_assert_fails(sch, sch_reverse_compute_at(sch, n, j, true, -1),
                  "reverse_compute_at: producer block D of block N reduces over loop j, so its result is not "
                  "complete within one iteration of loop j",
                  before);
  assert_int_equal(sch_get_trace(sch)->n, ninsts);
  /* Under the row loop, D is complete. */
  move_ok(sch, sch_reverse_compute_at, "N", "E", 0, true, -1);
  tir_func_t *orig = st_parse(SUM_THEN_NORM);
  st_assert_same_outputs(orig, sch_func(sch), 5, 0.0);
  tir_func_free(orig);
  mlc_free(before);
  sch_free(sch);
}

static void compute_at_rejects_an_incomplete_block(void **state) {
  (void)state;
  assert_move_fails(TWO_WRITERS, sch_compute_at, "B_0", "C", 0, -1,
                    "compute_at: block B_0 is neither a complete block");
}

static void compute_at_rejects_a_scope_that_is_not_a_stage_pipeline(void **state) {
  (void)state;
  assert_move_fails(WAR, sch_compute_at, "B", "C", 0, -1,
                    "compute_at: the scope of block B is not a stage pipeline: block D writes buffer A after "
                    "block B reads it");
}

static void compute_at_rejects_an_index_outside_the_valid_range(void **state) {
  (void)state;
  assert_move_fails(TWO, sch_compute_at, "B", "C", 0, 3,
                    "compute_at: index 3 is not a valid position under loop i (-1, -2, or 0 to 0)");
}

static void compute_at_rejects_a_block_rv_that_is_a_loop(void **state) {
  (void)state;
  sch_t *sch = st_schedule(TWO);
  sch_rv_t l = loop_of(sch, "C", 0);
  st_assert_fails(sch, sch_compute_at(sch, l, l, false, -1), "compute_at", TWO);
  sch_free(sch);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(compute_at_into_a_tiled_consumer_computes_the_tile),
      cmocka_unit_test(compute_at_preserves_unit_loops_when_asked),
      cmocka_unit_test(compute_at_drops_unit_loops_by_default),
      cmocka_unit_test(compute_at_records_its_inputs_and_attrs),
      cmocka_unit_test(compute_at_of_padding_under_a_conv_loop),
      cmocka_unit_test(compute_at_predicates_a_tile_that_leaves_the_buffer),
      cmocka_unit_test(compute_at_of_a_reduction_block_keeps_its_reduction_loop),
      cmocka_unit_test(compute_at_of_shared_memory_covers_all_threads),
      cmocka_unit_test(compute_at_index_chooses_the_position),
      cmocka_unit_test(compute_at_into_a_blockized_consumer),
      cmocka_unit_test(compute_at_of_a_block_providing_tiles),
      cmocka_unit_test(compute_at_inverts_a_mirrored_write),
      cmocka_unit_test(compute_at_of_concat_inputs_predicates_each_part),
      cmocka_unit_test(compute_at_predicates_a_read_past_the_end),
      cmocka_unit_test(compute_at_replays_from_its_trace),
      cmocka_unit_test(reverse_compute_at_under_a_tiled_producer),
      cmocka_unit_test(reverse_compute_at_of_an_epilogue_write_back),
      cmocka_unit_test(reverse_compute_at_of_relu_under_the_outer_loop),
      cmocka_unit_test(reverse_compute_at_inverts_floordiv_floormod_reads),
      cmocka_unit_test(reverse_compute_at_index_places_between_siblings),
      cmocka_unit_test(reverse_compute_at_defaults_to_the_last_valid_position),
      cmocka_unit_test(reverse_compute_at_records_its_kind),
      cmocka_unit_test(compute_at_the_root_location_is_a_recorded_no_op),
      cmocka_unit_test(compute_at_the_inline_location_inlines_the_block),
      cmocka_unit_test(reverse_compute_at_the_inline_location_reverse_inlines_the_block),
      cmocka_unit_test(compute_at_the_inline_location_fails_as_compute_inline_does),
      cmocka_unit_test(compute_at_rejects_a_loop_of_another_scope),
      cmocka_unit_test(compute_at_rejects_a_loop_above_the_block),
      cmocka_unit_test(compute_at_rejects_an_output_block),
      cmocka_unit_test(compute_at_rejects_a_consumer_outside_the_loop),
      cmocka_unit_test(reverse_compute_at_rejects_a_producer_outside_the_loop),
      cmocka_unit_test(reverse_compute_at_rejects_a_consumer_that_runs_before_the_loop),
      cmocka_unit_test(compute_at_rejects_a_producer_that_runs_after_the_loop),
      cmocka_unit_test(reverse_compute_at_relaxes_the_producer_under_its_predicate),
      cmocka_unit_test(reverse_compute_at_rejects_a_producer_predicate_that_drops_points_inside),
      cmocka_unit_test(reverse_compute_at_rejects_a_consumer_with_iterations_that_read_nothing),
      cmocka_unit_test(reverse_compute_at_rejects_a_producer_that_reduces_over_the_loop),
      cmocka_unit_test(compute_at_rejects_an_incomplete_block),
      cmocka_unit_test(compute_at_rejects_a_scope_that_is_not_a_stage_pipeline),
      cmocka_unit_test(compute_at_rejects_an_index_outside_the_valid_range),
      cmocka_unit_test(compute_at_rejects_a_block_rv_that_is_a_loop),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
