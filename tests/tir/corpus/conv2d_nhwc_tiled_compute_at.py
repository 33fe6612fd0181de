# from tvm.script import tir as T

@T.prim_func
def main(inputs: T.Buffer((1, 8, 8, 8), "float32"), weight: T.Buffer((3, 3, 8, 16), "float32"), conv2d_nhwc: T.Buffer((1, 8, 8, 16), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    PadInput = T.alloc_buffer((1, 10, 10, 8))
    for n_0_h_0_w_0_co_0_fused in T.parallel(4, annotations={"pragma_auto_unroll_max_step": 16, "pragma_unroll_explicit": 1}):
        for n_1, h_1, w_1, co_1 in T.grid(1, 2, 2, 1):
            for ax0, ax1, ax2, ax3 in T.grid(1, 4, 6, 8):
                with T.block("PadInput"):
                    v_i0 = T.axis.spatial(1, ax0)
                    v_i1 = T.axis.spatial(10, n_0_h_0_w_0_co_0_fused // 2 * 4 + h_1 * 2 + ax1)
                    v_i2 = T.axis.spatial(10, w_1 * 4 + ax2)
                    v_i3 = T.axis.spatial(8, ax3)
                    T.reads(inputs[v_i0, v_i1 - 1, v_i2 - 1, v_i3])
                    T.writes(PadInput[v_i0, v_i1, v_i2, v_i3])
                    PadInput[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i1 and v_i1 < 9 and 1 <= v_i2 and v_i2 < 9, inputs[v_i0, v_i1 - 1, v_i2 - 1, v_i3], T.float32(0))
            for rh_0, rw_0, rc_0, n_2, h_2, w_2, co_2, rh_1, rw_1, rc_1, n_3, h_3, w_3 in T.grid(3, 1, 2, 1, 1, 4, 1, 1, 3, 4, 1, 2, 1):
                for co_3 in T.vectorized(8):
                    with T.block("conv2d_nhwc"):
                        v_n = T.axis.spatial(1, n_1 + n_2 + n_3)
                        v_h = T.axis.spatial(8, n_0_h_0_w_0_co_0_fused // 2 * 4 + h_1 * 2 + h_2 * 2 + h_3)
                        v_w = T.axis.spatial(8, w_1 * 4 + w_2 + w_3)
                        v_co = T.axis.spatial(16, n_0_h_0_w_0_co_0_fused % 2 * 8 + co_1 * 8 + co_2 * 8 + co_3)
                        v_rh = T.axis.reduce(3, rh_0 + rh_1)
                        v_rw = T.axis.reduce(3, rw_0 * 3 + rw_1)
                        v_rc = T.axis.reduce(8, rc_0 * 4 + rc_1)
                        T.reads(PadInput[v_n, v_h + v_rh, v_w + v_rw, v_rc], weight[v_rh, v_rw, v_rc, v_co])
                        T.writes(conv2d_nhwc[v_n, v_h, v_w, v_co])
                        T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})
                        with T.init():
                            conv2d_nhwc[v_n, v_h, v_w, v_co] = T.float32(0)
                        conv2d_nhwc[v_n, v_h, v_w, v_co] = conv2d_nhwc[v_n, v_h, v_w, v_co] + PadInput[v_n, v_h + v_rh, v_w + v_rw, v_rc] * weight[v_rh, v_rw, v_rc, v_co]
