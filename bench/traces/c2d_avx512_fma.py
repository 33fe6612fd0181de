# C2D (ResNet 3x3, 64 -> 64 channels, 56x56, NHWC, HWIO weights) for
# AVX-512 with explicit FMAs: an implicit GEMM (M = output pixels, N = 64
# output channels, K = 3 * 3 * 64) with an 8-pixel x 32-channel register
# tile whose multiply-adds are tensorized by avx512_fp32_fma_16x4.
#
#   for h in parallel(56):
#     PadInput[3 rows, 58, 64] = padded rows h .. h + 2 of the input
#     for w_0, co_0 in grid(7, 2):              # 8 pixels x 32 channels
#       conv_global[8, 32] = 0
#       for rh, rw, rc_0 in grid(3, 3, 16):
#         for w_1, co_1 in unroll(8), unroll(2):  # 16 accumulators
#           avx512_fp32_fma_16x4(conv_global[w_1, co_1 * 16 : +16],
#                                PadInput[rh, w + rw, rc_0 * 4 : +4],
#                                weight[rh, rw, rc_0 * 4 : +4, co : +16])
#       conv2d_nhwc[tile] = conv_global
b0 = sch.get_block(name="PadInput", func_name="main")
b1 = sch.get_block(name="conv2d_nhwc", func_name="main")
l2, l3, l4, l5, l6, l7, l8 = sch.get_loops(block=b1)
l9, l10 = sch.split(loop=l4, factors=[None, 8], preserve_unit_iters=True, disable_predication=False)
l11, l12, l13 = sch.split(loop=l5, factors=[None, 2, 16], preserve_unit_iters=True, disable_predication=False)
l14, l15 = sch.split(loop=l8, factors=[None, 4], preserve_unit_iters=True, disable_predication=False)
sch.reorder(l2, l3, l9, l11, l6, l7, l14, l10, l12, l15, l13)
b16 = sch.cache_write(block=b1, write_buffer_index=0, storage_scope="global")
sch.reverse_compute_at(block=b16, loop=l11, preserve_unit_loops=True, index=-1)
sch.compute_at(block=b0, loop=l3, preserve_unit_loops=True, index=-1)
sch.parallel(loop=l3)
b17 = sch.decompose_reduction(block=b1, loop=l6)
sch.unroll(loop=l10)
sch.unroll(loop=l12)
b18 = sch.blockize(target=l15, preserve_unit_iters=True)
sch.tensorize(block_or_loop=b18, tensor_intrin="avx512_fp32_fma_16x4", preserve_unit_iters=True)
l19, l20, l21, l22, l23, l24 = sch.get_loops(block=b0)
sch.vectorize(loop=l24)
l25, l26, l27, l28, l29, l30, l31, l32 = sch.get_loops(block=b16)
sch.unroll(loop=l31)
sch.vectorize(loop=l32)
l33, l34, l35, l36, l37, l38, l39 = sch.get_loops(block=b17)
sch.unroll(loop=l37)
sch.unroll(loop=l38)
sch.vectorize(loop=l39)
