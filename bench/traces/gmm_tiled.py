# GMM: the simple tiled schedule of tests/compiler/test_codegen_workloads.c
# (4 x 16 tiles, fused parallel outer loop, vectorized j, unrolled k by 4,
# C accumulated in place): a baseline for what the hand traces add.
b0 = sch.get_block(name="C", func_name="main")
l1, l2, l3 = sch.get_loops(block=b0)
l4, l5 = sch.split(loop=l1, factors=[None, 4], preserve_unit_iters=True, disable_predication=False)
l6, l7 = sch.split(loop=l2, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)
l8, l9 = sch.split(loop=l3, factors=[None, 4], preserve_unit_iters=True, disable_predication=False)
sch.reorder(l4, l6, l8, l5, l9, l7)
l10 = sch.fuse(l4, l6, preserve_unit_iters=True)
sch.parallel(loop=l10)
sch.unroll(loop=l9)
sch.vectorize(loop=l7)
b11 = sch.decompose_reduction(block=b0, loop=l8)
