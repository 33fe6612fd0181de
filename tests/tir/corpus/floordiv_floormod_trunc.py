# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "int32"), B: T.Buffer((4, 16), "int32"), C: T.Buffer((64,), "int32"), D: T.Buffer((64,), "int32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in range(64):
        with T.block("B"):
            v_i = T.axis.spatial(64, i)
            T.reads(A[v_i])
            T.writes(B[v_i // 16, v_i % 16])
            B[v_i // 16, v_i % 16] = A[v_i] // 3 + A[v_i] % 3 * 100
    for i in range(64):
        with T.block("C"):
            v_i = T.axis.spatial(64, i)
            T.reads(A[v_i])
            T.writes(C[v_i])
            C[v_i] = T.truncdiv(A[v_i], 3) + T.truncmod(A[v_i], 3) * 100
    for i_0, i_1 in T.grid(8, 8):
        with T.block("D"):
            v_i = T.axis.spatial(64, i_0 * 8 + i_1)
            T.reads(B[v_i % 4, v_i // 4], C[(v_i + 7) % 64])
            T.writes(D[v_i])
            D[v_i] = B[v_i % 4, v_i // 4] - C[(v_i + 7) % 64] * (v_i // 4 % 3 - 1)
