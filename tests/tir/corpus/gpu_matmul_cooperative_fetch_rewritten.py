# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    C_local = T.alloc_buffer((32, 32), scope="local")
    A_shared = T.alloc_buffer((32, 32), scope="shared")
    B_shared = T.alloc_buffer((32, 32), scope="shared")
    for i_0_j_0_fused in T.thread_binding(4, thread="blockIdx.x", annotations={"pragma_auto_unroll_max_step": 64, "pragma_unroll_explicit": 1}):
        for i_1_j_1_fused in T.thread_binding(2, thread="vthread.x"):
            for i_2_j_2_fused in T.thread_binding(16, thread="threadIdx.x"):
                for i_3_init, j_3_init, i_4_init, j_4_init in T.grid(2, 1, 1, 4):
                    with T.block("C_init"):
                        v_i = T.axis.spatial(32, i_0_j_0_fused // 2 * 16 + i_1_j_1_fused * 8 + i_2_j_2_fused // 4 * 2 + i_3_init + i_4_init)
                        v_j = T.axis.spatial(32, i_0_j_0_fused % 2 * 16 + i_2_j_2_fused % 4 * 4 + j_3_init * 4 + j_4_init)
                        T.reads()
                        T.writes(C_local[v_i, v_j])
                        T.block_attr({"meta_schedule.thread_extent_high_inclusive": 1024, "meta_schedule.thread_extent_low_inclusive": 32, "meta_schedule.tiling_structure": "SSSRRSRS"})
                        C_local[v_i, v_j] = T.float32(0)
                for k_0 in range(4):
                    for ax0_ax1_fused_0 in range(2):
                        for ax0_ax1_fused_1 in T.thread_binding(16, thread="threadIdx.x"):
                            for ax0_ax1_fused_2 in T.vectorized(4):
                                with T.block("A_shared"):
                                    v0 = T.axis.spatial(32, i_0_j_0_fused // 2 * 16 + (ax0_ax1_fused_0 * 64 + ax0_ax1_fused_1 * 4 + ax0_ax1_fused_2) // 8)
                                    v1 = T.axis.spatial(32, k_0 * 8 + (ax0_ax1_fused_0 * 64 + ax0_ax1_fused_1 * 4 + ax0_ax1_fused_2) % 8)
                                    T.reads(A[v0, v1])
                                    T.writes(A_shared[v0, v1])
                                    A_shared[v0, v1] = A[v0, v1]
                    for ax0_ax1_fused_0 in range(8):
                        for ax0_ax1_fused_1 in T.thread_binding(16, thread="threadIdx.x"):
                            with T.block("B_shared"):
                                v0 = T.axis.spatial(32, k_0 * 8 + (ax0_ax1_fused_0 * 16 + ax0_ax1_fused_1) // 16)
                                v1 = T.axis.spatial(32, i_0_j_0_fused % 2 * 16 + (ax0_ax1_fused_0 * 16 + ax0_ax1_fused_1) % 16)
                                T.reads(B[v0, v1])
                                T.writes(B_shared[v0, v1])
                                B_shared[v0, v1] = B[v0, v1]
                    for k_1, i_3, j_3, k_2, i_4, j_4 in T.grid(2, 2, 1, 4, 1, 4):
                        with T.block("C_update"):
                            v_i = T.axis.spatial(32, i_0_j_0_fused // 2 * 16 + i_1_j_1_fused * 8 + i_2_j_2_fused // 4 * 2 + i_3 + i_4)
                            v_j = T.axis.spatial(32, i_0_j_0_fused % 2 * 16 + i_2_j_2_fused % 4 * 4 + j_3 * 4 + j_4)
                            v_k = T.axis.reduce(32, k_0 * 8 + k_1 * 4 + k_2)
                            T.reads(C_local[v_i, v_j], A_shared[v_i, v_k], B_shared[v_k, v_j])
                            T.writes(C_local[v_i, v_j])
                            T.block_attr({"meta_schedule.thread_extent_high_inclusive": 1024, "meta_schedule.thread_extent_low_inclusive": 32, "meta_schedule.tiling_structure": "SSSRRSRS"})
                            C_local[v_i, v_j] = C_local[v_i, v_j] + A_shared[v_i, v_k] * B_shared[v_k, v_j]
                for ax0, ax1 in T.grid(2, 4):
                    with T.block("C_local"):
                        v0 = T.axis.spatial(32, i_0_j_0_fused // 2 * 16 + i_1_j_1_fused * 8 + i_2_j_2_fused // 4 * 2 + ax0)
                        v1 = T.axis.spatial(32, i_0_j_0_fused % 2 * 16 + i_2_j_2_fused % 4 * 4 + ax1)
                        T.reads(C_local[v0, v1])
                        T.writes(C[v0, v1])
                        C[v0, v1] = C_local[v0, v1]
