# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((12, 6), "float32"), B: T.Buffer((8, 4), "float32"), C: T.Buffer((8,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, j in T.grid(8, 4):
        with T.block("B"):
            v_i = T.axis.spatial((2, 10), i + 2)
            v_j = T.axis.spatial((1, 5), j + 1)
            T.reads(A[v_i, v_j])
            T.writes(B[v_i - 2, v_j - 1])
            B[v_i - 2, v_j - 1] = A[v_i, v_j] * T.float32(2)
    for i in range(2, 10):
        for k in range(1, 5):
            with T.block("C"):
                v_i = T.axis.spatial((2, 10), i)
                v_k = T.axis.reduce((1, 5), k)
                T.reads(B[v_i - 2, v_k - 1])
                T.writes(C[v_i - 2])
                with T.init():
                    C[v_i - 2] = T.float32(0)
                C[v_i - 2] = C[v_i - 2] + B[v_i - 2, v_k - 1]
