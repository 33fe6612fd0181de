# GMM C = A @ B (fp32, row-major) for AVX-512 with explicit FMAs: the
# schedule of gmm_avx512.py with the register tile's multiply-adds
# tensorized by avx512_fp32_fma_16x4 (C[0:16] += A[k] * B[k, 0:16] for
# k < 4, one llvm.fma.v16f32 per k), so the FMAs need no -fast-math.
#
#   for j_0 in parallel(N / 256):            # one 256-column panel per task
#     B_global[16, K, 16] = B[:, panel]      # packed: each 16-column strip contiguous
#     for i_0, j_1 in grid(M / 8, 8):        # 8 x 32 register tile
#       C_global[8, 32] = 0
#       for k_0 in range(K / 4):
#         for i_1, j_2 in unroll(8), unroll(2):   # 16 accumulators (zmm)
#           avx512_fp32_fma_16x4(C_global[i_1, j_2 * 16 : +16],
#                                A[i, k_0 * 4 : +4], B_global[j_1 * 2 + j_2, k_0 * 4 : +4, 0:16])
#       C[tile] = C_global
b0 = sch.get_block(name="C", func_name="main")
l1, l2, l3 = sch.get_loops(block=b0)
l4, l5 = sch.split(loop=l1, factors=[None, 8], preserve_unit_iters=True, disable_predication=False)
l6, l7, l8, l9 = sch.split(loop=l2, factors=[None, 8, 2, 16], preserve_unit_iters=True, disable_predication=False)
l10, l11 = sch.split(loop=l3, factors=[None, 4], preserve_unit_iters=True, disable_predication=False)
sch.reorder(l6, l4, l7, l10, l5, l8, l11, l9)
b12 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="global")
sch.reverse_compute_at(block=b12, loop=l7, preserve_unit_loops=True, index=-1)
b13 = sch.cache_read(block=b0, read_buffer_index=1, storage_scope="global")
sch.compute_at(block=b13, loop=l6, preserve_unit_loops=True, index=-1)
sch.transform_layout(block=b13, buffer=("write", 0), index_map=lambda k, j: (j // 16, k, j % 16,), pad_value=None)
sch.parallel(loop=l6)
b14 = sch.decompose_reduction(block=b0, loop=l10)
sch.unroll(loop=l5)
sch.unroll(loop=l8)
b15 = sch.blockize(target=l11, preserve_unit_iters=True)
sch.tensorize(block_or_loop=b15, tensor_intrin="avx512_fp32_fma_16x4", preserve_unit_iters=True)
l16, l17, l18 = sch.get_loops(block=b13)
l19, l20 = sch.split(loop=l18, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)
sch.vectorize(loop=l20)
l21, l22, l23, l24, l25 = sch.get_loops(block=b12)
sch.unroll(loop=l24)
sch.vectorize(loop=l25)
l26, l27, l28, l29, l30, l31 = sch.get_loops(block=b14)
sch.unroll(loop=l29)
sch.unroll(loop=l30)
sch.vectorize(loop=l31)
