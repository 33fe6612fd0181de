# Softmax over the rows of A[M, N] (fp32, M x 1024), each row done whole by
# one task so it stays in L1 between the passes:
#
#   for i0 in parallel(M):
#     maxelem_rf[32] = max over k_0 of A[i0, k_0 * 32 + 0:32]   # 2 zmm, vectorized
#     maxelem = max of maxelem_rf                                # 32 scalar steps
#     exp[0:1024] = exp(A[i0, :] - maxelem)                     # 16 x 64 lanes
#     expsum_rf[32] = sum over k_0 of exp[k_0 * 32 + 0:32]
#     expsum = sum of expsum_rf
#     norm[i0, 0:1024] = exp / expsum                            # 16 x 64 lanes
#
# The reductions are rfactored by 32 and the rfactor blocks' lanes moved
# under their reductions so they vectorize; every sum and max keeps its
# order per output element, so this is exact. A schedule the search can
# find (RewriteParallelVectorizeUnroll's split and reorder do the last
# steps for it); time it against oneDNN with
#   bench_workloads --only SFM --trials 0 --trace bench/traces/sfm_rows.py
b0 = sch.get_block(name="T_softmax_maxelem", func_name="sfm")
b1 = sch.get_block(name="T_softmax_exp", func_name="sfm")
b2 = sch.get_block(name="T_softmax_expsum", func_name="sfm")
b3 = sch.get_block(name="T_softmax_norm", func_name="sfm")
l5, l6 = sch.get_loops(block=b0)
l7, l8 = sch.split(loop=l6, factors=[32, 32], preserve_unit_iters=True, disable_predication=False)
b9 = sch.rfactor(loop=l8, factor_axis=1)
l10, l11 = sch.get_loops(block=b2)
l12, l13 = sch.split(loop=l11, factors=[32, 32], preserve_unit_iters=True, disable_predication=False)
b14 = sch.rfactor(loop=l13, factor_axis=1)
l15, l16 = sch.get_loops(block=b3)
sch.parallel(loop=l15)
l17, l18 = sch.split(loop=l16, factors=[16, 64], preserve_unit_iters=True, disable_predication=False)
sch.vectorize(loop=l18)
sch.compute_at(block=b2, loop=l15, preserve_unit_loops=True, index=-1)
sch.compute_at(block=b14, loop=l15, preserve_unit_loops=True, index=-1)
sch.compute_at(block=b1, loop=l15, preserve_unit_loops=True, index=-1)
sch.compute_at(block=b0, loop=l15, preserve_unit_loops=True, index=-1)
sch.compute_at(block=b9, loop=l15, preserve_unit_loops=True, index=-1)
l20, l21, l22, l23 = sch.get_loops(block=b9)
sch.reorder(l22, l23, l21)
sch.vectorize(loop=l21)
l24, l25, l26, l27 = sch.get_loops(block=b14)
sch.reorder(l26, l27, l25)
sch.vectorize(loop=l25)
l28, l29, l30 = sch.get_loops(block=b1)
l31, l32 = sch.split(loop=l30, factors=[16, 64], preserve_unit_iters=True, disable_predication=False)
sch.vectorize(loop=l32)
b33 = sch.decompose_reduction(block=b9, loop=l23)
b34 = sch.decompose_reduction(block=b14, loop=l27)
