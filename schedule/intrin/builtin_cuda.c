/*
 * builtin_cuda.c - the built-in CUDA tensor-core intrinsics, as TVMScript.
 *
 * mma.sync m16n8k16 (fp16 x fp16 -> fp32), in TVM's warp layout: operands
 * live in "warp" buffers indexed [thread, element] (A 32x8, B 32x4, C 32x4
 * per 16x8x16 tile), with the PTX fragment layout as index maps (A[i, k] is
 * A_warp[i % 8 * 4 + k % 8 // 2, k // 8 * 4 + i // 8 * 2 + k % 2], ...):
 *   mma_ldmatrix_a_16x16_f16   shared A[16, 16] -> A_warp  (ldmatrix .x4)
 *   mma_ldmatrix_b_8x16_f16    shared B[8 (n), 16 (k)] -> B_warp (.x2)
 *   mma_sync_m16n8k16_f16f16f32 C_warp += A_warp * B_warp (B as [n, k])
 *   mma_fill_16x8_f32          C_warp = 0
 *   mma_store_16x8_f32_global  C_warp -> global C[16, 8]
 * The implementations are per-thread value computations under a
 * `threadIdx.x` loop of 32: `ptx_ldmatrix_x4(row)` returns the thread's 8
 * halves given the 8-element row whose address it supplies,
 * `ptx_mma_m16n8k16_row_col_f16f16f32(a, b, c)` the thread's 4 results.
 *
 * WMMA 16x16x16 (TVM's wmma intrinsics): wmma_load_16x16x16_f16_{a,b}_shared,
 * wmma_sync_16x16x16_f16f16f32, wmma_fill_16x16x16_f32,
 * wmma_store_16x16x16_f32_{global,shared}, calling tvm_load_matrix_sync,
 * tvm_mma_sync, tvm_fill_fragment and tvm_store_matrix_sync as call_extern.
 * An argument `X[0, 0]` of these calls stands for the fragment or the address
 * of X's tile (TVM's `X.data, X.elem_offset` or `X.access_ptr()`), the stride
 * argument is the tile's row stride.
 *
 * docs/schedule/reduction_tensorize.md says how code generation lowers them.
 */
#include "schedule/intrin/intrin.h"

typedef struct {
  const char *name, *desc, *impl;
} intrin_text_t;

static const intrin_text_t cuda_intrins[] = {
    {"mma_ldmatrix_a_16x16_f16",
     /* description */
     "@T.prim_func\n"
     "def mma_ldmatrix_a_16x16_f16_desc(a: T.handle, b: T.handle):\n"
     "    A = T.match_buffer(a, (16, 16), \"float16\", scope=\"shared\", offset_factor=16)\n"
     "    A_warp = T.match_buffer(b, (32, 8), \"float16\", scope=\"warp\", offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(A[0:16, 0:16])\n"
     "        T.writes(A_warp[0:32, 0:8])\n"
     "        for i, j in T.grid(16, 16):\n"
     "            with T.block(\"A_warp\"):\n"
     "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
     "                T.reads(A[vi, vj])\n"
     "                T.writes(A_warp[vi % 8 * 4 + vj % 8 // 2, vj // 8 * 4 + vi // 8 * 2 + vj % 2])\n"
     "                A_warp[vi % 8 * 4 + vj % 8 // 2, vj // 8 * 4 + vi // 8 * 2 + vj % 2] = A[vi, vj]\n",
     /* implementation */
     "@T.prim_func\n"
     "def mma_ldmatrix_a_16x16_f16_impl(a: T.handle, b: T.handle):\n"
     "    s0 = T.int32()\n"
     "    A = T.match_buffer(a, (16, 16), \"float16\", strides=(s0, 1), scope=\"shared\", offset_factor=16)\n"
     "    A_warp = T.match_buffer(b, (32, 8), \"float16\", scope=\"warp\", offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(A[0:16, 0:16])\n"
     "        T.writes(A_warp[0:32, 0:8])\n"
     "        for tx in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
     "            A_warp[tx, T.Ramp(0, 1, 8)] = T.call_extern(\"float16x8\", \"ptx_ldmatrix_x4\", A[tx % 16, T.Ramp(tx // 16 * 8, 1, 8)])\n"},
    {"mma_ldmatrix_b_8x16_f16",
     /* description */
     "@T.prim_func\n"
     "def mma_ldmatrix_b_8x16_f16_desc(a: T.handle, b: T.handle):\n"
     "    B = T.match_buffer(a, (8, 16), \"float16\", scope=\"shared\", offset_factor=16)\n"
     "    B_warp = T.match_buffer(b, (32, 4), \"float16\", scope=\"warp\", offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(B[0:8, 0:16])\n"
     "        T.writes(B_warp[0:32, 0:4])\n"
     "        for i, j in T.grid(8, 16):\n"
     "            with T.block(\"B_warp\"):\n"
     "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
     "                T.reads(B[vi, vj])\n"
     "                T.writes(B_warp[vi * 4 + vj % 8 // 2, vj // 8 * 2 + vj % 2])\n"
     "                B_warp[vi * 4 + vj % 8 // 2, vj // 8 * 2 + vj % 2] = B[vi, vj]\n",
     /* implementation */
     "@T.prim_func\n"
     "def mma_ldmatrix_b_8x16_f16_impl(a: T.handle, b: T.handle):\n"
     "    s0 = T.int32()\n"
     "    B = T.match_buffer(a, (8, 16), \"float16\", strides=(s0, 1), scope=\"shared\", offset_factor=16)\n"
     "    B_warp = T.match_buffer(b, (32, 4), \"float16\", scope=\"warp\", offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(B[0:8, 0:16])\n"
     "        T.writes(B_warp[0:32, 0:4])\n"
     "        for tx in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
     "            B_warp[tx, T.Ramp(0, 1, 4)] = T.call_extern(\"float16x4\", \"ptx_ldmatrix_x2\", B[tx % 8, T.Ramp(tx // 8 % 2 * 8, 1, 8)])\n"},
    {"mma_sync_m16n8k16_f16f16f32",
     /* description */
     "@T.prim_func\n"
     "def mma_sync_m16n8k16_f16f16f32_desc(a: T.handle, b: T.handle, c: T.handle):\n"
     "    A = T.match_buffer(a, (32, 8), \"float16\", scope=\"warp\", offset_factor=16)\n"
     "    B = T.match_buffer(b, (32, 4), \"float16\", scope=\"warp\", offset_factor=16)\n"
     "    C = T.match_buffer(c, (32, 4), scope=\"warp\", offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(C[0:32, 0:4], A[0:32, 0:8], B[0:32, 0:4])\n"
     "        T.writes(C[0:32, 0:4])\n"
     "        for i, j, k in T.grid(16, 8, 16):\n"
     "            with T.block(\"C\"):\n"
     "                vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
     "                T.reads(C[vi % 8 * 4 + vj // 2, vi // 8 * 2 + vj % 2], A[vi % 8 * 4 + vk % 8 // 2, vk // 8 * 4 + vi // 8 * 2 + vk % 2], B[vj * 4 + vk % 8 // 2, vk // 8 * 2 + vk % 2])\n"
     "                T.writes(C[vi % 8 * 4 + vj // 2, vi // 8 * 2 + vj % 2])\n"
     "                C[vi % 8 * 4 + vj // 2, vi // 8 * 2 + vj % 2] = C[vi % 8 * 4 + vj // 2, vi // 8 * 2 + vj % 2] + T.Cast(\"float32\", A[vi % 8 * 4 + vk % 8 // 2, vk // 8 * 4 + vi // 8 * 2 + vk % 2]) * T.Cast(\"float32\", B[vj * 4 + vk % 8 // 2, vk // 8 * 2 + vk % 2])\n",
     /* implementation */
     "@T.prim_func\n"
     "def mma_sync_m16n8k16_f16f16f32_impl(a: T.handle, b: T.handle, c: T.handle):\n"
     "    A = T.match_buffer(a, (32, 8), \"float16\", scope=\"warp\", offset_factor=16)\n"
     "    B = T.match_buffer(b, (32, 4), \"float16\", scope=\"warp\", offset_factor=16)\n"
     "    C = T.match_buffer(c, (32, 4), scope=\"warp\", offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(C[0:32, 0:4], A[0:32, 0:8], B[0:32, 0:4])\n"
     "        T.writes(C[0:32, 0:4])\n"
     "        for tx in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
     "            C[tx, T.Ramp(0, 1, 4)] = T.call_extern(\"float32x4\", \"ptx_mma_m16n8k16_row_col_f16f16f32\", A[tx, T.Ramp(0, 1, 8)], B[tx, T.Ramp(0, 1, 4)], C[tx, T.Ramp(0, 1, 4)])\n"},
    {"mma_store_16x8_f32_global",
     /* description */
     "@T.prim_func\n"
     "def mma_store_16x8_f32_global_desc(a: T.handle, c: T.handle):\n"
     "    C_warp = T.match_buffer(a, (32, 4), scope=\"warp\", offset_factor=16)\n"
     "    C = T.match_buffer(c, (16, 8), offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(C_warp[0:32, 0:4])\n"
     "        T.writes(C[0:16, 0:8])\n"
     "        for i, j in T.grid(16, 8):\n"
     "            with T.block(\"C_warp\"):\n"
     "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
     "                T.reads(C_warp[vi % 8 * 4 + vj // 2, vi // 8 * 2 + vj % 2])\n"
     "                T.writes(C[vi, vj])\n"
     "                C[vi, vj] = C_warp[vi % 8 * 4 + vj // 2, vi // 8 * 2 + vj % 2]\n",
     /* implementation */
     "@T.prim_func\n"
     "def mma_store_16x8_f32_global_impl(a: T.handle, c: T.handle):\n"
     "    C_warp = T.match_buffer(a, (32, 4), scope=\"warp\", offset_factor=16)\n"
     "    s0 = T.int32()\n"
     "    C = T.match_buffer(c, (16, 8), strides=(s0, 1), offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(C_warp[0:32, 0:4])\n"
     "        T.writes(C[0:16, 0:8])\n"
     "        for tx in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
     "            C[tx // 4, T.Ramp(tx % 4 * 2, 1, 2)] = C_warp[tx, T.Ramp(0, 1, 2)]\n"
     "            C[tx // 4 + 8, T.Ramp(tx % 4 * 2, 1, 2)] = C_warp[tx, T.Ramp(2, 1, 2)]\n"},
    {"mma_fill_16x8_f32",
     /* description */
     "@T.prim_func\n"
     "def mma_fill_16x8_f32_desc(c: T.handle):\n"
     "    C_warp = T.match_buffer(c, (32, 4), scope=\"warp\", offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads()\n"
     "        T.writes(C_warp[0:32, 0:4])\n"
     "        for i, j in T.grid(16, 8):\n"
     "            with T.block(\"C_warp\"):\n"
     "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
     "                T.reads()\n"
     "                T.writes(C_warp[vi % 8 * 4 + vj // 2, vi // 8 * 2 + vj % 2])\n"
     "                C_warp[vi % 8 * 4 + vj // 2, vi // 8 * 2 + vj % 2] = T.float32(0)\n",
     /* implementation */
     "@T.prim_func\n"
     "def mma_fill_16x8_f32_impl(c: T.handle):\n"
     "    C_warp = T.match_buffer(c, (32, 4), scope=\"warp\", offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads()\n"
     "        T.writes(C_warp[0:32, 0:4])\n"
     "        for tx in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
     "            C_warp[tx, T.Ramp(0, 1, 4)] = T.Broadcast(T.float32(0), 4)\n"},
    {"wmma_load_16x16x16_f16_a_shared",
     /* description */
     "@T.prim_func\n"
     "def wmma_load_16x16x16_f16_a_shared_desc(a: T.handle, c: T.handle):\n"
     "    A = T.match_buffer(a, (16, 16), \"float16\", scope=\"shared\", align=64, offset_factor=16)\n"
     "    C = T.match_buffer(c, (16, 16), \"float16\", scope=\"wmma.matrix_a\", align=64, offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(A[0:16, 0:16])\n"
     "        T.writes(C[0:16, 0:16])\n"
     "        for i, j in T.grid(16, 16):\n"
     "            with T.block(\"load\"):\n"
     "                vii, vjj = T.axis.remap(\"SS\", [i, j])\n"
     "                T.reads(A[vii, vjj])\n"
     "                T.writes(C[vii, vjj])\n"
     "                C[vii, vjj] = A[vii, vjj]\n",
     /* implementation */
     "@T.prim_func\n"
     "def wmma_load_16x16x16_f16_a_shared_impl(a: T.handle, c: T.handle):\n"
     "    s1 = T.int32()\n"
     "    s0 = T.int32()\n"
     "    A = T.match_buffer(a, (16, 16), \"float16\", strides=(s1, s0), scope=\"shared\", align=64, offset_factor=16)\n"
     "    C = T.match_buffer(c, (16, 16), \"float16\", scope=\"wmma.matrix_a\", align=64, offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(A[0:16, 0:16])\n"
     "        T.writes(C[0:16, 0:16])\n"
     "        T.call_extern(\"handle\", \"tvm_load_matrix_sync\", C[0, 0], 16, 16, 16, A[0, 0], s1, \"row_major\")\n"},
    {"wmma_load_16x16x16_f16_b_shared",
     /* description */
     "@T.prim_func\n"
     "def wmma_load_16x16x16_f16_b_shared_desc(a: T.handle, c: T.handle):\n"
     "    A = T.match_buffer(a, (16, 16), \"float16\", scope=\"shared\", align=64, offset_factor=16)\n"
     "    C = T.match_buffer(c, (16, 16), \"float16\", scope=\"wmma.matrix_b\", align=64, offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(A[0:16, 0:16])\n"
     "        T.writes(C[0:16, 0:16])\n"
     "        for i, j in T.grid(16, 16):\n"
     "            with T.block(\"load\"):\n"
     "                vii, vjj = T.axis.remap(\"SS\", [i, j])\n"
     "                T.reads(A[vii, vjj])\n"
     "                T.writes(C[vii, vjj])\n"
     "                C[vii, vjj] = A[vii, vjj]\n",
     /* implementation */
     "@T.prim_func\n"
     "def wmma_load_16x16x16_f16_b_shared_impl(a: T.handle, c: T.handle):\n"
     "    s1 = T.int32()\n"
     "    s0 = T.int32()\n"
     "    A = T.match_buffer(a, (16, 16), \"float16\", strides=(s1, s0), scope=\"shared\", align=64, offset_factor=16)\n"
     "    C = T.match_buffer(c, (16, 16), \"float16\", scope=\"wmma.matrix_b\", align=64, offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(A[0:16, 0:16])\n"
     "        T.writes(C[0:16, 0:16])\n"
     "        T.call_extern(\"handle\", \"tvm_load_matrix_sync\", C[0, 0], 16, 16, 16, A[0, 0], s1, \"row_major\")\n"},
    {"wmma_sync_16x16x16_f16f16f32",
     /* description */
     "@T.prim_func\n"
     "def wmma_sync_16x16x16_f16f16f32_desc(a: T.handle, b: T.handle, c: T.handle):\n"
     "    A = T.match_buffer(a, (16, 16), \"float16\", scope=\"wmma.matrix_a\", align=64, offset_factor=16)\n"
     "    B = T.match_buffer(b, (16, 16), \"float16\", scope=\"wmma.matrix_b\", align=64, offset_factor=16)\n"
     "    C = T.match_buffer(c, (16, 16), scope=\"wmma.accumulator\", align=64, offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])\n"
     "        T.writes(C[0:16, 0:16])\n"
     "        for i, j, k in T.grid(16, 16, 16):\n"
     "            with T.block(\"update\"):\n"
     "                vii, vjj, vkk = T.axis.remap(\"SSR\", [i, j, k])\n"
     "                T.reads(C[vii, vjj], A[vii, vkk], B[vkk, vjj])\n"
     "                T.writes(C[vii, vjj])\n"
     "                C[vii, vjj] = C[vii, vjj] + T.Cast(\"float32\", A[vii, vkk]) * T.Cast(\"float32\", B[vkk, vjj])\n",
     /* implementation */
     "@T.prim_func\n"
     "def wmma_sync_16x16x16_f16f16f32_impl(a: T.handle, b: T.handle, c: T.handle):\n"
     "    A = T.match_buffer(a, (16, 16), \"float16\", scope=\"wmma.matrix_a\", align=64, offset_factor=16)\n"
     "    B = T.match_buffer(b, (16, 16), \"float16\", scope=\"wmma.matrix_b\", align=64, offset_factor=16)\n"
     "    C = T.match_buffer(c, (16, 16), scope=\"wmma.accumulator\", align=64, offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])\n"
     "        T.writes(C[0:16, 0:16])\n"
     "        T.call_extern(\"handle\", \"tvm_mma_sync\", C[0, 0], A[0, 0], B[0, 0], C[0, 0])\n"},
    {"wmma_fill_16x16x16_f32",
     /* description */
     "@T.prim_func\n"
     "def wmma_fill_16x16x16_f32_desc(c: T.handle):\n"
     "    C = T.match_buffer(c, (16, 16), scope=\"wmma.accumulator\", align=64, offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads()\n"
     "        T.writes(C[0:16, 0:16])\n"
     "        for i, j in T.grid(16, 16):\n"
     "            with T.block(\"init\"):\n"
     "                vii, vjj = T.axis.remap(\"SS\", [i, j])\n"
     "                T.reads()\n"
     "                T.writes(C[vii, vjj])\n"
     "                C[vii, vjj] = T.float32(0)\n",
     /* implementation */
     "@T.prim_func\n"
     "def wmma_fill_16x16x16_f32_impl(c: T.handle):\n"
     "    C = T.match_buffer(c, (16, 16), scope=\"wmma.accumulator\", align=64, offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads()\n"
     "        T.writes(C[0:16, 0:16])\n"
     "        T.call_extern(\"handle\", \"tvm_fill_fragment\", C[0, 0], 16, 16, 16, T.float32(0))\n"},
    {"wmma_store_16x16x16_f32_global",
     /* description */
     "@T.prim_func\n"
     "def wmma_store_16x16x16_f32_global_desc(a: T.handle, c: T.handle):\n"
     "    A = T.match_buffer(a, (16, 16), scope=\"wmma.accumulator\", align=64, offset_factor=16)\n"
     "    C = T.match_buffer(c, (16, 16), align=64, offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(A[0:16, 0:16])\n"
     "        T.writes(C[0:16, 0:16])\n"
     "        for i, j in T.grid(16, 16):\n"
     "            with T.block(\"store\"):\n"
     "                vii, vjj = T.axis.remap(\"SS\", [i, j])\n"
     "                T.reads(A[vii, vjj])\n"
     "                T.writes(C[vii, vjj])\n"
     "                C[vii, vjj] = A[vii, vjj]\n",
     /* implementation */
     "@T.prim_func\n"
     "def wmma_store_16x16x16_f32_global_impl(a: T.handle, c: T.handle):\n"
     "    A = T.match_buffer(a, (16, 16), scope=\"wmma.accumulator\", align=64, offset_factor=16)\n"
     "    s1 = T.int32()\n"
     "    s0 = T.int32()\n"
     "    C = T.match_buffer(c, (16, 16), strides=(s1, s0), align=64, offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(A[0:16, 0:16])\n"
     "        T.writes(C[0:16, 0:16])\n"
     "        T.call_extern(\"handle\", \"tvm_store_matrix_sync\", A[0, 0], 16, 16, 16, C[0, 0], s1, \"row_major\")\n"},
    {"wmma_store_16x16x16_f32_shared",
     /* description */
     "@T.prim_func\n"
     "def wmma_store_16x16x16_f32_shared_desc(a: T.handle, c: T.handle):\n"
     "    A = T.match_buffer(a, (16, 16), scope=\"wmma.accumulator\", align=64, offset_factor=16)\n"
     "    C = T.match_buffer(c, (16, 16), scope=\"shared\", align=64, offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(A[0:16, 0:16])\n"
     "        T.writes(C[0:16, 0:16])\n"
     "        for i, j in T.grid(16, 16):\n"
     "            with T.block(\"store\"):\n"
     "                vii, vjj = T.axis.remap(\"SS\", [i, j])\n"
     "                T.reads(A[vii, vjj])\n"
     "                T.writes(C[vii, vjj])\n"
     "                C[vii, vjj] = A[vii, vjj]\n",
     /* implementation */
     "@T.prim_func\n"
     "def wmma_store_16x16x16_f32_shared_impl(a: T.handle, c: T.handle):\n"
     "    A = T.match_buffer(a, (16, 16), scope=\"wmma.accumulator\", align=64, offset_factor=16)\n"
     "    s1 = T.int32()\n"
     "    s0 = T.int32()\n"
     "    C = T.match_buffer(c, (16, 16), strides=(s1, s0), scope=\"shared\", align=64, offset_factor=16)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(A[0:16, 0:16])\n"
     "        T.writes(C[0:16, 0:16])\n"
     "        T.call_extern(\"handle\", \"tvm_store_matrix_sync\", A[0, 0], 16, 16, 16, C[0, 0], s1, \"row_major\")\n"},
};

int sch_intrin_register_cuda(sch_intrin_add_fn add) {
  for (size_t i = 0; i < sizeof(cuda_intrins) / sizeof(cuda_intrins[0]); i++) {
    int rc = add(cuda_intrins[i].name, cuda_intrins[i].desc, cuda_intrins[i].impl);
    if (rc != MLC_OK) return rc;
  }
  return MLC_OK;
}
