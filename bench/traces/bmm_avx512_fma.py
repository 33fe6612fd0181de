# BMM Z[b] = X[b] @ Y[b] (fp32, 16 x 128 x 128 x 128) for AVX-512: the
# schedule of gmm_avx512_fma.py without the packing (each batch's Y is
# 64 KiB and stays in L2), parallel over (batch, half of the columns):
#
#   for b, j_0 in parallel(16, 2):           # 32 tasks of 128 x 64
#     for i_0, j_1 in grid(16, 2):            # 8 x 32 register tile
#       Z_global[8, 32] = 0
#       for k_0 in range(32):
#         for i_1, j_2 in unroll(8), unroll(2):   # 16 accumulators (zmm)
#           avx512_fp32_fma_16x4(Z_global[i_1, j_2 * 16 : +16],
#                                X[b, i, k_0 * 4 : +4], Y[b, k_0 * 4 : +4, j : +16])
#       Z[tile] = Z_global
#
# bench_workloads --only BMM --trials 0 --trace bench/traces/bmm_avx512_fma.py
b0 = sch.get_block(name="Z", func_name="bmm")
l0, l1, l2, l3 = sch.get_loops(block=b0)
l4, l5 = sch.split(loop=l1, factors=[None, 8], preserve_unit_iters=True, disable_predication=False)
l6, l7, l8, l9 = sch.split(loop=l2, factors=[None, 2, 2, 16], preserve_unit_iters=True, disable_predication=False)
l10, l11 = sch.split(loop=l3, factors=[None, 4], preserve_unit_iters=True, disable_predication=False)
sch.reorder(l0, l6, l4, l7, l10, l5, l8, l11, l9)
b12 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="global")
sch.reverse_compute_at(block=b12, loop=l7, preserve_unit_loops=True, index=-1)
l99 = sch.fuse(l0, l6, preserve_unit_iters=True)
sch.parallel(loop=l99)
b14 = sch.decompose_reduction(block=b0, loop=l10)
sch.unroll(loop=l5)
sch.unroll(loop=l8)
b15 = sch.blockize(target=l11, preserve_unit_iters=True)
sch.tensorize(block_or_loop=b15, tensor_intrin="avx512_fp32_fma_16x4", preserve_unit_iters=True)
l20, l21, l22, l23, l24, l25 = sch.get_loops(block=b12)
sch.unroll(loop=l24)
sch.vectorize(loop=l25)
l26, l27, l28, l29, l30, l31 = sch.get_loops(block=b14)
sch.unroll(loop=l29)
sch.unroll(loop=l30)
sch.vectorize(loop=l31)
