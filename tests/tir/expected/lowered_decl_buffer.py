# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"), C: T.Buffer((1024,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    for i in T.parallel(32):
        C_local = T.decl_buffer((32,), scope="local")
        for j in range(32):
            C_local[j] = T.float32(0)
            for k in range(32):
                cse_var_1: T.int32 = i * 32 + k
                C_local[j] = C_local[j] + A[cse_var_1] * B[k * 32 + j]
        for j in T.vectorized(32):
            C[i * 32 + j] = C_local[j]
