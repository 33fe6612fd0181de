# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    C_local = T.alloc_buffer((64, 64), scope="local")
    for i_0_j_0_fused in T.parallel(16):
        for i_1, j_1, k_0, i_2, j_2, k_1 in T.grid(2, 2, 8, 8, 1, 8):
            for j_3 in T.vectorized(8):
                with T.block("C"):
                    v_i = T.axis.spatial(64, i_0_j_0_fused // 4 * 16 + i_1 * 8 + i_2)
                    v_j = T.axis.spatial(64, i_0_j_0_fused % 4 * 16 + j_1 * 8 + j_2 * 8 + j_3)
                    v_k = T.axis.reduce(64, k_0 * 8 + k_1)
                    T.reads(A[v_i, v_k], B[v_k, v_j])
                    T.writes(C_local[v_i, v_j])
                    T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})
                    with T.init():
                        C_local[v_i, v_j] = T.float32(0)
                    C_local[v_i, v_j] = C_local[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
        for ax0 in range(16):
            for ax1 in T.vectorized(16):
                with T.block("C_local"):
                    v0 = T.axis.spatial(64, i_0_j_0_fused // 4 * 16 + ax0)
                    v1 = T.axis.spatial(64, i_0_j_0_fused % 4 * 16 + ax1)
                    T.reads(C_local[v0, v1])
                    T.writes(C[v0, v1])
                    C[v0, v1] = C_local[v0, v1]
