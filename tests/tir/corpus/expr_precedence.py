# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32"), D: T.Buffer((64,), "float32"), E: T.Buffer((64,), "int32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in range(64):
        with T.block("D"):
            v_i = T.axis.spatial(64, i)
            T.reads(A[v_i], B[v_i], C[v_i], A[v_i * -1 + 63])
            T.writes(D[v_i])
            D[v_i] = A[v_i] - (B[v_i] - C[v_i]) + A[v_i] / (B[v_i] * C[v_i]) - (A[v_i] + B[v_i]) * C[v_i] + T.float32(-0.5) * A[v_i * -1 + 63] - A[v_i] / B[v_i] / C[v_i]
        with T.block("E"):
            v_i = T.axis.spatial(64, i)
            T.reads()
            T.writes(E[v_i])
            E[v_i] = (v_i + 1) // (2 * 2) + (v_i + 3) % 4 * 3 - v_i * (v_i // 8) + v_i * v_i // 8 - (v_i - (v_i - 7)) + -3 - (v_i % 5 - v_i // 3 % 2)
