# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 1000), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((16, 1000), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for b, i_0, i_1 in T.grid(16, 32, 32):
        with T.block("B"):
            v_b = T.axis.spatial(16, b)
            v_i = T.axis.reduce(1000, i_0 * 32 + i_1)
            T.where(i_0 * 32 + i_1 < 1000)
            T.reads(A[v_b, v_i])
            T.writes(B[v_b])
            with T.init():
                B[v_b] = T.float32(0)
            B[v_b] = B[v_b] + A[v_b, v_i]
    for b_i_fused_0, b_i_fused_1 in T.grid(167, 96):
        with T.block("C"):
            v_b = T.axis.spatial(16, (b_i_fused_0 * 96 + b_i_fused_1) // 1000)
            v_i = T.axis.spatial(1000, (b_i_fused_0 * 96 + b_i_fused_1) % 1000)
            T.where(b_i_fused_0 * 96 + b_i_fused_1 < 16000)
            T.reads(A[v_b, v_i], B[v_b])
            T.writes(C[v_b, v_i])
            C[v_b, v_i] = A[v_b, v_i] / B[v_b]
