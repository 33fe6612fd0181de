# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i_0 in T.serial(8, annotations={"pragma_auto_unroll_max_step": T.int64(16), "pragma_unroll_explicit": T.int64(0)}):
        for j_0 in range(8):
            for i_1_init in range(8):
                for j_1_init in T.vectorized(8):
                    with T.block("C_init"):
                        v_i = T.axis.spatial(64, i_0 * 8 + i_1_init)
                        v_j = T.axis.spatial(64, j_0 * 8 + j_1_init)
                        T.reads()
                        T.writes(C[v_i, v_j])
                        C[v_i, v_j] = T.float32(0)
            for k_0, i_1, j_1, k_1 in T.grid(16, 8, 8, 4):
                with T.block("C_update"):
                    v_i = T.axis.spatial(64, i_0 * 8 + i_1)
                    v_j = T.axis.spatial(64, j_0 * 8 + j_1)
                    v_k = T.axis.reduce(64, k_0 * 4 + k_1)
                    T.reads(C[v_i, v_j], A[v_i, v_k], B[v_k, v_j])
                    T.writes(C[v_i, v_j])
                    C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
