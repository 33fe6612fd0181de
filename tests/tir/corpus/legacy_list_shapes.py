# from tvm.script import tir as T
@T.prim_func
def main(a: T.handle, B: T.Buffer([64, 64], "float32"), C: T.Buffer([64], "float32")) -> None:
    # function attr dict
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    A = T.match_buffer(a, [64, 64], dtype="float32")
    # body
    # with T.block("root")
    D = T.alloc_buffer([64, 64], dtype="float32")
    for i0, i1 in T.grid(64, 64):
        with T.block("D"):
            i, j = T.axis.remap("SS", [i0, i1])
            T.reads(A[i, j], B[i, j])
            T.writes(D[i, j])
            D[i, j] = A[i, j] + B[i, j]
    for i0 in T.serial(0, 64):
        for i1 in T.serial(0, 64):
            with T.block("C"):
                i = T.axis.S(64, i0)
                k = T.axis.R(64, i1)
                T.reads(D[i, T.floormod(k + T.floordiv(i, 8), 64)])
                T.writes(C[i])
                with T.init():
                    C[i] = T.float32(0)
                C[i] = C[i] + D[i, T.floormod(k + T.floordiv(i, 8), 64)]
