# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8, 16, 2), "float32"), B: T.Buffer((4, 8, 16, 2), "float32"), C: T.Buffer((24,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for n, c, h, w in T.grid(4, 8, 16, 2):
        with T.block("B"):
            v_n, v_c, v_h, v_w = T.axis.remap("SSSS", [n, c, h, w])
            T.reads(A[v_n, v_c, v_h, v_w])
            T.writes(B[v_n, v_c, v_h, v_w])
            B[v_n, v_c, v_h, v_w] = A[v_n, v_c, v_h, v_w] + T.float32(1)
    for i in range(16):
        with T.block("C_head"):
            v_i = T.axis.spatial(16, i)
            T.reads(B[0, 0, v_i, 0])
            T.writes(C[v_i])
            C[v_i] = B[0, 0, v_i, 0]
    for i in range(16, 20):
        with T.block("C_mid"):
            v_i = T.axis.spatial((16, 20), i)
            T.reads(B[1, 1, v_i - 16, 1])
            T.writes(C[v_i])
            C[v_i] = B[1, 1, v_i - 16, 1]
    for i in T.serial(20, 24, annotations={"pragma_unroll_explicit": 0}):
        for j in T.unroll(2):
            with T.block("C_tail"):
                v_i, v_j = T.axis.remap("SR", [i, j])
                T.reads(B[2, 2, v_i - 20, v_j])
                T.writes(C[v_i])
                with T.init():
                    C[v_i] = T.float32(0)
                C[v_i] = C[v_i] + B[2, 2, v_i - 20, v_j]
