# GMM C = A @ B (fp32, row-major) for AVX-512: the hand-written schedule that
# bench/bench_gemm.c measures against OpenBLAS.
#
#   for j_0 in parallel(N / 256):            # one 256-column panel per task
#     B_global[8, K, 32] = B[:, panel]       # packed: each 32-column strip contiguous
#     for i_0, j_1 in grid(M / 8, 8):        # 8 x 32 register tile
#       C_local[8, 32] = 0
#       for k in range(K):
#         for i_1 in unroll(8):              # 8 rows x 2 zmm = 16 accumulators
#           C_local[i_1, 0:32] += A[i, k] * B_global[j_1, k, 0:32]
#       C[tile] = C_local
#
# A's 8 rows (8 x K floats, 32 KiB at K = 1024) stay in L1 across the 8
# strips of a panel, the packed panel (K x 256 floats, 1 MiB) in L2; A is
# read from L3 once per panel, so wider panels mean less L3 traffic (128
# columns measured the same on one thread, 10-30% slower on two).
b0 = sch.get_block(name="C", func_name="main")
l1, l2, l3 = sch.get_loops(block=b0)
l4, l5 = sch.split(loop=l1, factors=[None, 8], preserve_unit_iters=True, disable_predication=False)
l6, l7, l8 = sch.split(loop=l2, factors=[None, 8, 32], preserve_unit_iters=True, disable_predication=False)
sch.reorder(l6, l4, l7, l3, l5, l8)
b9 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="local")
sch.reverse_compute_at(block=b9, loop=l7, preserve_unit_loops=True, index=-1)
b10 = sch.cache_read(block=b0, read_buffer_index=1, storage_scope="global")
sch.compute_at(block=b10, loop=l6, preserve_unit_loops=True, index=-1)
sch.transform_layout(block=b10, buffer=("write", 0), index_map=lambda k, j: (j // 32, k, j % 32,), pad_value=None)
sch.parallel(loop=l6)
sch.unroll(loop=l5)
sch.vectorize(loop=l8)
b11 = sch.decompose_reduction(block=b0, loop=l3)
l12, l13, l14 = sch.get_loops(block=b10)
l15, l16 = sch.split(loop=l14, factors=[None, 32], preserve_unit_iters=True, disable_predication=False)
sch.vectorize(loop=l16)
l17, l18, l19, l20, l21 = sch.get_loops(block=b9)
sch.unroll(loop=l20)
sch.vectorize(loop=l21)
