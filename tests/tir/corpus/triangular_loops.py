# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    for i, j in T.grid(16, 16):
        B[i, j] = T.float32(0)
    for i in range(16):
        for j in range(i + 1):
            for k in range(j, i + 1):
                B[i, j] = B[i, j] + A[i, k] * A[k, j]
