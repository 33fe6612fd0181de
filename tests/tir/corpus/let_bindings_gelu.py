# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16, 64), "float32"), C: T.Buffer((1024,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, j in T.grid(16, 64):
        with T.block("gelu"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j])
            T.writes(B[v_i, v_j])
            x: T.float32 = A[v_i, v_j] * T.float32(0.125)
            x3: T.float32 = x * x * x
            inner: T.float32 = T.float32(0.79788456080286541) * (x + T.float32(0.044714999999999998) * x3)
            B[v_i, v_j] = T.float32(0.5) * x * (T.float32(1) + T.tanh(inner))
    for i, j in T.grid(16, 64):
        with T.block("flatten"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(B[v_i, v_j])
            T.writes(C[v_i * 64 + v_j])
            idx: T.int32 = v_i * 64 + v_j
            C[idx] = B[v_i, v_j]
