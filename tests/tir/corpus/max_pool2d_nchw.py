# from tvm.script import tir as T

@T.prim_func
def main(data: T.Buffer((1, 4, 16, 16), "float32"), pool_max: T.Buffer((1, 4, 8, 8), "float32"), clip: T.Buffer((1, 4, 8, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    pad_temp = T.alloc_buffer((1, 4, 17, 17))
    for ax0, ax1, ax2, ax3 in T.grid(1, 4, 17, 17):
        with T.block("pad_temp"):
            v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
            T.reads(data[v_ax0, v_ax1, v_ax2 - 1, v_ax3 - 1])
            T.writes(pad_temp[v_ax0, v_ax1, v_ax2, v_ax3])
            pad_temp[v_ax0, v_ax1, v_ax2, v_ax3] = T.if_then_else(1 <= v_ax2 and 1 <= v_ax3, data[v_ax0, v_ax1, v_ax2 - 1, v_ax3 - 1], T.float32(-3.4028234663852886e+38))
    for ax0, ax1, ax2, ax3, rv0, rv1 in T.grid(1, 4, 8, 8, 3, 3):
        with T.block("pool_max"):
            v_ax0, v_ax1, v_ax2, v_ax3, v_rv0, v_rv1 = T.axis.remap("SSSSRR", [ax0, ax1, ax2, ax3, rv0, rv1])
            T.reads(pad_temp[v_ax0, v_ax1, v_ax2 * 2 + v_rv0, v_ax3 * 2 + v_rv1])
            T.writes(pool_max[v_ax0, v_ax1, v_ax2, v_ax3])
            T.block_attr({"schedule_rule": "meta_schedule.pool_max"})
            with T.init():
                pool_max[v_ax0, v_ax1, v_ax2, v_ax3] = T.float32(-3.4028234663852886e+38)
            pool_max[v_ax0, v_ax1, v_ax2, v_ax3] = T.max(pool_max[v_ax0, v_ax1, v_ax2, v_ax3], pad_temp[v_ax0, v_ax1, v_ax2 * 2 + v_rv0, v_ax3 * 2 + v_rv1])
    for i0, i1, i2, i3 in T.grid(1, 4, 8, 8):
        with T.block("clip"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(pool_max[v_i0, v_i1, v_i2, v_i3])
            T.writes(clip[v_i0, v_i1, v_i2, v_i3])
            clip[v_i0, v_i1, v_i2, v_i3] = T.max(T.min(pool_max[v_i0, v_i1, v_i2, v_i3], T.float32(6)), T.float32(0))
