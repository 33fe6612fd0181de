# from tvm.script import tir as T

@T.prim_func
def main(placeholder: T.Buffer((1, 8, 8, 16), "float32"), placeholder_1: T.Buffer((3, 3, 16, 1), "float32"), depth_conv2d_nhwc: T.Buffer((1, 4, 4, 16), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    PaddedInput = T.alloc_buffer((1, 10, 10, 16))
    for i0, i1, i2, i3 in T.grid(1, 10, 10, 16):
        with T.block("PaddedInput"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(placeholder[v_i0, v_i1 - 1, v_i2 - 1, v_i3])
            T.writes(PaddedInput[v_i0, v_i1, v_i2, v_i3])
            PaddedInput[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i1 and v_i1 < 9 and 1 <= v_i2 and v_i2 < 9, placeholder[v_i0, v_i1 - 1, v_i2 - 1, v_i3], T.float32(0))
    for b, i, j, c, di, dj in T.grid(1, 4, 4, 16, 3, 3):
        with T.block("depth_conv2d_nhwc"):
            v_b, v_i, v_j, v_c, v_di, v_dj = T.axis.remap("SSSSRR", [b, i, j, c, di, dj])
            T.reads(PaddedInput[v_b, v_i * 2 + v_di, v_j * 2 + v_dj, v_c], placeholder_1[v_di, v_dj, v_c, 0])
            T.writes(depth_conv2d_nhwc[v_b, v_i, v_j, v_c])
            with T.init():
                depth_conv2d_nhwc[v_b, v_i, v_j, v_c] = T.float32(0)
            depth_conv2d_nhwc[v_b, v_i, v_j, v_c] = depth_conv2d_nhwc[v_b, v_i, v_j, v_c] + PaddedInput[v_b, v_i * 2 + v_di, v_j * 2 + v_dj, v_c] * placeholder_1[v_di, v_dj, v_c, 0]
