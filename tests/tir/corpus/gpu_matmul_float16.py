# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((32, 32), "float16"), B: T.Buffer((32, 32), "float16"), C: T.Buffer((32, 32), "float16")):
    T.func_attr({"tir.is_scheduled": T.bool(True), "tir.noalias": T.bool(True)})
    # with T.block("root"):
    C_local = T.alloc_buffer((32, 32), "float16", scope="local")
    A_shared = T.alloc_buffer((32, 32), "float16", scope="shared")
    B_shared = T.alloc_buffer((32, 32), "float16", scope="shared")
    for i_0 in T.thread_binding(2, thread="blockIdx.y"):
        for j_0 in T.thread_binding(2, thread="blockIdx.x"):
            for i_1 in T.thread_binding(4, thread="threadIdx.y"):
                for j_1 in T.thread_binding(4, thread="threadIdx.x"):
                    for i_2_init, j_2_init in T.grid(4, 4):
                        with T.block("C_init"):
                            v_i = T.axis.spatial(32, i_0 * 16 + i_1 * 4 + i_2_init)
                            v_j = T.axis.spatial(32, j_0 * 16 + j_1 * 4 + j_2_init)
                            T.reads()
                            T.writes(C_local[v_i, v_j])
                            C_local[v_i, v_j] = T.float16(0)
                    for k_0 in range(2):
                        for ax0_ax1_fused_0 in range(4):
                            for ax0_ax1_fused_1 in T.thread_binding(4, thread="threadIdx.y"):
                                for ax0_ax1_fused_2 in T.thread_binding(4, thread="threadIdx.x"):
                                    for ax0_ax1_fused_3 in T.vectorized(4):
                                        with T.block("A_shared"):
                                            v0 = T.axis.spatial(32, i_0 * 16 + (ax0_ax1_fused_0 * 64 + ax0_ax1_fused_1 * 16 + ax0_ax1_fused_2 * 4 + ax0_ax1_fused_3) // 16)
                                            v1 = T.axis.spatial(32, k_0 * 16 + (ax0_ax1_fused_0 * 64 + ax0_ax1_fused_1 * 16 + ax0_ax1_fused_2 * 4 + ax0_ax1_fused_3) % 16)
                                            T.reads(A[v0, v1])
                                            T.writes(A_shared[v0, v1])
                                            A_shared[v0, v1] = A[v0, v1]
                        for ax0_ax1_fused_0 in range(4):
                            for ax0_ax1_fused_1 in T.thread_binding(4, thread="threadIdx.y"):
                                for ax0_ax1_fused_2 in T.thread_binding(4, thread="threadIdx.x"):
                                    for ax0_ax1_fused_3 in T.vectorized(4):
                                        with T.block("B_shared"):
                                            v0 = T.axis.spatial(32, k_0 * 16 + (ax0_ax1_fused_0 * 64 + ax0_ax1_fused_1 * 16 + ax0_ax1_fused_2 * 4 + ax0_ax1_fused_3) // 16)
                                            v1 = T.axis.spatial(32, j_0 * 16 + (ax0_ax1_fused_0 * 64 + ax0_ax1_fused_1 * 16 + ax0_ax1_fused_2 * 4 + ax0_ax1_fused_3) % 16)
                                            T.reads(B[v0, v1])
                                            T.writes(B_shared[v0, v1])
                                            B_shared[v0, v1] = B[v0, v1]
                        for k_1 in T.unroll(16):
                            for i_2, j_2 in T.grid(4, 4):
                                with T.block("C_update"):
                                    v_i = T.axis.spatial(32, i_0 * 16 + i_1 * 4 + i_2)
                                    v_j = T.axis.spatial(32, j_0 * 16 + j_1 * 4 + j_2)
                                    v_k = T.axis.reduce(32, k_0 * 16 + k_1)
                                    T.reads(C_local[v_i, v_j], A_shared[v_i, v_k], B_shared[v_k, v_j])
                                    T.writes(C_local[v_i, v_j])
                                    C_local[v_i, v_j] = C_local[v_i, v_j] + A_shared[v_i, v_k] * B_shared[v_k, v_j]
                    for ax0, ax1 in T.grid(4, 4):
                        with T.block("C_local"):
                            v0 = T.axis.spatial(32, i_0 * 16 + i_1 * 4 + ax0)
                            v1 = T.axis.spatial(32, j_0 * 16 + j_1 * 4 + ax1)
                            T.reads(C_local[v0, v1])
                            T.writes(C[v0, v1])
                            C[v0, v1] = C_local[v0, v1]
