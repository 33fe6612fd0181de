# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i_0 in range(4):
        with T.block("rowsum_o"):
            v_i_o = T.axis.spatial(4, i_0)
            T.reads(B[v_i_o * 4:v_i_o * 4 + 4], A[v_i_o * 4:v_i_o * 4 + 4, 0:64])
            T.writes(B[v_i_o * 4:v_i_o * 4 + 4])
            A_1 = T.match_buffer(A[v_i_o * 4:v_i_o * 4 + 4, 0:64], (4, 64), offset_factor=1)
            B_1 = T.match_buffer(B[v_i_o * 4:v_i_o * 4 + 4], (4,), offset_factor=1)
            for i_1 in range(4):
                B_1[i_1] = T.float32(0)
                for k in range(64):
                    B_1[i_1] = B_1[i_1] + A_1[i_1, k]
    for i in range(16):
        with T.block("rowmax"):
            v_i = T.axis.spatial(16, i)
            T.reads(C[v_i], A[v_i, 0:64], B[v_i])
            T.writes(C[v_i])
            A_row = T.match_buffer(A[v_i, 0:64], (64,), offset_factor=1)
            C[v_i] = T.float32(-3.4028234663852886e+38)
            for k in range(64):
                C[v_i] = T.max(C[v_i], A_row[k] - B[v_i])
