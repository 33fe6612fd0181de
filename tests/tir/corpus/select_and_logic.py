# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32"), M: T.Buffer((32, 32), "bool")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, j in T.grid(32, 32):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j], B[v_i, v_j])
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = T.Select(A[v_i, v_j] > B[v_i, v_j] and (v_i < 16 or v_j >= 16), A[v_i, v_j] - B[v_i, v_j], T.Select(not v_i == v_j, B[v_i, v_j], T.float32(0)))
    for i, j in T.grid(32, 32):
        with T.block("M"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j], B[v_i, v_j], C[v_i, v_j])
            T.writes(M[v_i, v_j])
            M[v_i, v_j] = not (A[v_i, v_j] <= B[v_i, v_j] or C[v_i, v_j] == T.float32(0)) and (v_i < 8) == (v_j != 3) or v_i + v_j == 63
