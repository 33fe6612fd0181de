# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    with T.block("root"):
        T.reads()
        T.writes()
        T.block_attr({"meta_schedule.parallel": 32, "meta_schedule.unroll_explicit": 16, "meta_schedule.vectorize": 64})
        C_global = T.alloc_buffer((64, 64))
        for i_0, j_0, i_1, j_1 in T.grid(2, 4, 4, 2):
            for k_0, i_2, j_2, k_1, i_3, j_3 in T.grid(16, 1, 1, 4, 8, 8):
                with T.block("C"):
                    v_i = T.axis.spatial(64, i_0 * 32 + i_1 * 8 + i_2 * 8 + i_3)
                    v_j = T.axis.spatial(64, j_0 * 16 + j_1 * 8 + j_2 * 8 + j_3)
                    v_k = T.axis.reduce(64, k_0 * 4 + k_1)
                    T.reads(A[v_i, v_k], B[v_k, v_j])
                    T.writes(C_global[v_i, v_j])
                    T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})
                    with T.init():
                        C_global[v_i, v_j] = T.float32(0)
                    C_global[v_i, v_j] = C_global[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
            for ax0, ax1 in T.grid(8, 8):
                with T.block("C_global"):
                    v0 = T.axis.spatial(64, i_0 * 32 + i_1 * 8 + ax0)
                    v1 = T.axis.spatial(64, j_0 * 16 + j_1 * 8 + ax1)
                    T.reads(C_global[v0, v1])
                    T.writes(C[v0, v1])
                    C[v0, v1] = C_global[v0, v1]
