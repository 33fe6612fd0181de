# GMM in the shape MetaSchedule's CPU design space gives (what the tuner of
# step 5 searches): SSRSRS multi-level tiling, a write cache at the second
# spatial level, fused parallel outer tiles, the innermost spatial loop
# vectorized and the inner reduction loop unrolled; decisions picked by
# hand for 1024^3 (i: 8 4 4 8, j: 4 4 2 32, k: 256 4), scaled down
# automatically for other sizes only through the first factor (None).
b0 = sch.get_block(name="C", func_name="main")
sch.annotate(block_or_loop=b0, ann_key="meta_schedule.tiling_structure", ann_val="SSRSRS")
l1, l2, l3 = sch.get_loops(block=b0)
l4, l5, l6, l7 = sch.split(loop=l1, factors=[None, 4, 4, 8], preserve_unit_iters=True, disable_predication=False)
l8, l9, l10, l11 = sch.split(loop=l2, factors=[None, 4, 2, 32], preserve_unit_iters=True, disable_predication=False)
l12, l13 = sch.split(loop=l3, factors=[None, 4], preserve_unit_iters=True, disable_predication=False)
sch.reorder(l4, l8, l5, l9, l12, l6, l10, l13, l7, l11)
b14 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="global")
sch.reverse_compute_at(block=b14, loop=l9, preserve_unit_loops=True, index=-1)
l15 = sch.fuse(l4, l8, preserve_unit_iters=True)
sch.parallel(loop=l15)
sch.vectorize(loop=l11)
sch.unroll(loop=l13)
l16, l17, l18, l19, l20 = sch.get_loops(block=b14)
sch.vectorize(loop=l20)
sch.unannotate(block_or_loop=b0, ann_key="meta_schedule.tiling_structure")
b21 = sch.decompose_reduction(block=b0, loop=l12)
