# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32"), C: T.Buffer((128,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    for i in T.parallel(32):
        cse_var_1: T.int32 = i * 8
        B[cse_var_1:cse_var_1 + 8] = A[cse_var_1:cse_var_1 + 8] * T.Broadcast(T.float32(2), 8)
    for i in range(16):
        C[i * 8:i * 8 + 8] = B[i * 16:i * 16 + 16:2] + B[i * 16 + 1:i * 16 + 1 + 16:2]
