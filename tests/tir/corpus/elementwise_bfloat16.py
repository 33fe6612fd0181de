# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((32, 32), "bfloat16"), B: T.Buffer((32, 32), "bfloat16"), C: T.Buffer((32, 32), "bfloat16"), D: T.Buffer((32, 32), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, j in T.grid(32, 32):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j], B[v_i, v_j])
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = A[v_i, v_j] * B[v_i, v_j] + T.bfloat16(0.5)
    for i, j in T.grid(32, 32):
        with T.block("D"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(C[v_i, v_j])
            T.writes(D[v_i, v_j])
            D[v_i, v_j] = T.Cast("float32", C[v_i, v_j]) + T.Cast("float32", T.Cast("bfloat16", T.float32(3.140625)))
