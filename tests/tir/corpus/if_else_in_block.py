# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, j in T.grid(32, 32):
        with T.block("mask"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j])
            T.writes(B[v_i, v_j])
            if v_j <= v_i:
                B[v_i, v_j] = A[v_i, v_j]
            else:
                B[v_i, v_j] = T.float32(-3.4028234663852886e+38)
    for i in range(32):
        with T.block("C"):
            v_i = T.axis.spatial(32, i)
            T.reads(C[v_i], B[v_i, 0:32])
            T.writes(C[v_i])
            C[v_i] = T.float32(0)
            for j in range(32):
                if v_i % 2 == 0:
                    if j <= v_i:
                        C[v_i] = C[v_i] + B[v_i, j]
                else:
                    if j <= v_i:
                        C[v_i] = T.max(C[v_i], B[v_i, j])
