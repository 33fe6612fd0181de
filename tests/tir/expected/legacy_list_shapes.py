# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    # with T.block("root"):
    D = T.alloc_buffer((64, 64))
    for i0, i1 in T.grid(64, 64):
        with T.block("D"):
            i, j = T.axis.remap("SS", [i0, i1])
            T.reads(A[i, j], B[i, j])
            T.writes(D[i, j])
            D[i, j] = A[i, j] + B[i, j]
    for i0, i1 in T.grid(64, 64):
        with T.block("C"):
            i, k = T.axis.remap("SR", [i0, i1])
            T.reads(D[i, (k + i // 8) % 64])
            T.writes(C[i])
            with T.init():
                C[i] = T.float32(0)
            C[i] = C[i] + D[i, (k + i // 8) % 64]
