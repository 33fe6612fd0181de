# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64,), "float32"), C: T.Buffer((64, 64), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    D = T.alloc_buffer((64, 64))
    for i, j in T.grid(64, 64):
        with T.block("D"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            D[v_i, v_j] = A[v_i, v_j] * T.float32(2)
    for i, k in T.grid(64, 64):
        with T.block("B"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                B[v_i] = T.float32(0)
            B[v_i] = B[v_i] + D[v_i, v_k]
    for i in range(64):
        with T.block("C_row"):
            v_i = T.axis.spatial(64, i)
            for j in range(64):
                C[v_i, j] = D[v_i, j] - B[v_i]
