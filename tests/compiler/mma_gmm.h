/*
 * mma_gmm.h - the GMM with B transposed (C = A B^T, float16 -> float32) and
 * the trace that schedules it for mma.sync (warp buffers in the ldmatrix /
 * mma layout, shared staging, the five mma intrinsics), shared by the tests
 * of the code generator (test_codegen_gpu_mma.c) and of the interpreter
 * (tests/tir/test_interp_mma.c).
 *
 * MMA_GMM_NT_FMT takes m, k, n, k, m, n, m, n, k; MMA_TRACE_FMT takes wm
 * (warps along M), tm (tiles per warp along M), wn (warps along N), the
 * tensorize steps (MMA_TENSORIZE, or "" to leave the warp-layout blocks
 * plain) and twice wm * wn (the fetches' threadIdx.y).
 */
#ifndef MLC_TESTS_MMA_GMM_H
#define MLC_TESTS_MMA_GMM_H

/* C[M, N] = A[M, K] B[N, K]^T, float16 -> float32. */
static const char *const MMA_GMM_NT_FMT =
    "@T.prim_func\n"
    "def main(A: T.Buffer((%d, %d), \"float16\"), B: T.Buffer((%d, %d), \"float16\"), C: T.Buffer((%d, %d), \"float32\")):\n"
    "    T.func_attr({\"tir.noalias\": T.bool(True)})\n"
    "    for i, j, k in T.grid(%d, %d, %d):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + T.Cast(\"float32\", A[vi, vk]) * T.Cast(\"float32\", B[vj, vk])\n";

/* Blocks of wm x wn warps, tm 16x8 tiles each (along M), k in steps of 16: A and B
 * staged in shared memory by all the block's threads (wm*wn warps of 32
 * lanes), then into warp buffers by ldmatrix, multiplied by mma.sync into
 * a warp accumulator, stored by the lanes. */
static const char *const MMA_TRACE_FMT =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "l4, l5, l6, l6b = sch.split(loop=l1, factors=[None, %d, %d, 16], preserve_unit_iters=True, disable_predication=False)\n"
    "l7, l8, l9 = sch.split(loop=l2, factors=[None, %d, 8], preserve_unit_iters=True, disable_predication=False)\n"
    "l10, l11 = sch.split(loop=l3, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.reorder(l4, l7, l5, l8, l10, l6, l6b, l9, l11)\n"
    "l12 = sch.fuse(l4, l7, preserve_unit_iters=True)\n"
    "sch.bind(loop=l12, thread_axis=\"blockIdx.x\")\n"
    "l13 = sch.fuse(l5, l8, preserve_unit_iters=True)\n"
    "sch.bind(loop=l13, thread_axis=\"threadIdx.y\")\n"
    "b14 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope=\"warp\")\n"
    "sch.reverse_compute_at(block=b14, loop=l13, preserve_unit_loops=True, index=-1)\n"
    "b17 = sch.cache_read(block=b0, read_buffer_index=0, storage_scope=\"warp\", consumer_blocks=[b0])\n"
    "sch.compute_at(block=b17, loop=l10, preserve_unit_loops=True, index=-1)\n"
    "b18 = sch.cache_read(block=b0, read_buffer_index=1, storage_scope=\"warp\", consumer_blocks=[b0])\n"
    "sch.compute_at(block=b18, loop=l10, preserve_unit_loops=True, index=-1)\n"
    "b15 = sch.cache_read(block=b17, read_buffer_index=0, storage_scope=\"shared\", consumer_blocks=[b17])\n"
    "sch.compute_at(block=b15, loop=l10, preserve_unit_loops=True, index=-1)\n"
    "b16 = sch.cache_read(block=b18, read_buffer_index=0, storage_scope=\"shared\", consumer_blocks=[b18])\n"
    "sch.compute_at(block=b16, loop=l10, preserve_unit_loops=True, index=-1)\n"
    "b19 = sch.decompose_reduction(block=b0, loop=l10)\n"
    "sch.transform_layout(block=b17, buffer=(\"write\", 0), index_map=lambda i, j: (i // 16, j // 16, i %% 8 * 4 + j %% 8 // 2, j %% 16 // 8 * 4 + i %% 16 // 8 * 2 + j %% 2))\n"
    "sch.transform_layout(block=b18, buffer=(\"write\", 0), index_map=lambda n, k: (n // 8, k // 16, n %% 8 * 4 + k %% 8 // 2, k %% 16 // 8 * 2 + k %% 2))\n"
    "sch.transform_layout(block=b14, buffer=(\"read\", 0), index_map=lambda i, j: (i // 16, j // 8, i %% 8 * 4 + j %% 8 // 2, i %% 16 // 8 * 2 + j %% 2))\n"
    "%s"
    "l60, l61, l62, l63, l64 = sch.get_loops(block=b15)\n"
    "l65 = sch.fuse(l63, l64, preserve_unit_iters=True)\n"
    "l66, l67, l68 = sch.split(loop=l65, factors=[None, %d, 32], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.bind(loop=l67, thread_axis=\"threadIdx.y\")\n"
    "sch.bind(loop=l68, thread_axis=\"threadIdx.x\")\n"
    "l70, l71, l72, l73, l74 = sch.get_loops(block=b16)\n"
    "l75 = sch.fuse(l73, l74, preserve_unit_iters=True)\n"
    "l76, l77, l78 = sch.split(loop=l75, factors=[None, %d, 32], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.bind(loop=l77, thread_axis=\"threadIdx.y\")\n"
    "sch.bind(loop=l78, thread_axis=\"threadIdx.x\")\n";

/* The five tensorize steps (left out: the warp-layout blocks stay plain). */
static const char *const MMA_TENSORIZE =
    "l30, l31, l32, l33, l34 = sch.get_loops(block=b17)\n"
    "l30b, l30c = sch.split(loop=l33, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.tensorize(block_or_loop=l30c, tensor_intrin=\"mma_ldmatrix_a_16x16_f16\")\n"
    "l35, l36, l37, l38, l39 = sch.get_loops(block=b18)\n"
    "sch.tensorize(block_or_loop=l38, tensor_intrin=\"mma_ldmatrix_b_8x16_f16\")\n"
    "l40, l41, l42, l43, l44, l45, l45b = sch.get_loops(block=b0)\n"
    "sch.tensorize(block_or_loop=l44, tensor_intrin=\"mma_sync_m16n8k16_f16f16f32\")\n"
    "l46, l47, l48, l48b, l49 = sch.get_loops(block=b19)\n"
    "sch.tensorize(block_or_loop=l48b, tensor_intrin=\"mma_fill_16x8_f32\")\n"
    "l50, l51, l52, l53 = sch.get_loops(block=b14)\n"
    "l52b, l52c = sch.split(loop=l52, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.tensorize(block_or_loop=l52c, tensor_intrin=\"mma_store_16x8_f32_global\")\n";

#endif /* MLC_TESTS_MMA_GMM_H */
