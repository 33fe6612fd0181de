# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32"), C: T.Buffer((256,), "float32"), D: T.Buffer((8,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    for i in T.parallel(32):
        C[T.Ramp(i * 8, 1, 8)] = A[T.Ramp(i * 8, 1, 8)] * B[T.Ramp(i * 8, 1, 8)] + T.Broadcast(T.float32(1), 8)
    acc = T.decl_buffer((1,), "float32x8", scope="local")
    acc[0] = T.Broadcast(T.float32(0), 8)
    for k in range(32):
        acc[0] = acc[0] + A[T.Ramp(k * 8, 1, 8)] * T.Broadcast(B[k * 8], 8)
    D[T.Ramp(0, 1, 8)] = T.max(acc[0], T.Broadcast(T.float32(0), 8))
