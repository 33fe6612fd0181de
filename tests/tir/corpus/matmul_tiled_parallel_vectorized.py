# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i_0_j_0_fused in T.parallel(8, annotations={"pragma_auto_unroll_max_step": 64, "pragma_unroll_explicit": 1}):
        for i_1, j_1, k_0, i_2, j_2 in T.grid(4, 2, 16, 2, 1):
            for k_1 in T.unroll(4):
                for i_3 in range(4):
                    for j_3 in T.vectorized(8):
                        with T.block("C"):
                            v_i = T.axis.spatial(64, i_0_j_0_fused // 4 * 32 + i_1 * 8 + i_2 * 4 + i_3)
                            v_j = T.axis.spatial(64, i_0_j_0_fused % 4 * 16 + j_1 * 8 + j_2 * 8 + j_3)
                            v_k = T.axis.reduce(64, k_0 * 4 + k_1)
                            T.reads(A[v_i, v_k], B[v_k, v_j])
                            T.writes(C[v_i, v_j])
                            T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})
                            with T.init():
                                C[v_i, v_j] = T.float32(0)
                            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
