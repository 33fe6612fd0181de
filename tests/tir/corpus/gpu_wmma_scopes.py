# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((32, 32), "float16"), B: T.Buffer((32, 32), "float16"), C: T.Buffer((32, 32), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    A_shared = T.alloc_buffer((32, 32), "float16", scope="shared")
    B_shared = T.alloc_buffer((32, 32), "float16", scope="shared")
    A_shared_wmma_matrix_a = T.alloc_buffer((32, 32), "float16", scope="wmma.matrix_a")
    B_shared_wmma_matrix_b = T.alloc_buffer((32, 32), "float16", scope="wmma.matrix_b")
    C_wmma_accumulator = T.alloc_buffer((32, 32), scope="wmma.accumulator")
    for i_0 in T.thread_binding(2, thread="blockIdx.y"):
        for j_0 in T.thread_binding(2, thread="blockIdx.x"):
            for i_1 in T.thread_binding(1, thread="threadIdx.y"):
                with T.block("C_init_o"):
                    v_i_o = T.axis.spatial(2, i_0 + i_1)
                    v_j_o = T.axis.spatial(2, j_0)
                    T.reads()
                    T.writes(C_wmma_accumulator[v_i_o * 16:v_i_o * 16 + 16, v_j_o * 16:v_j_o * 16 + 16])
                    for i_init, j_init in T.grid(16, 16):
                        with T.block("C_init"):
                            v_i_i_init, v_j_i_init = T.axis.remap("SS", [i_init, j_init])
                            T.reads()
                            T.writes(C_wmma_accumulator[v_i_o * 16 + v_i_i_init, v_j_o * 16 + v_j_i_init])
                            C_wmma_accumulator[v_i_o * 16 + v_i_i_init, v_j_o * 16 + v_j_i_init] = T.float32(0)
                for k_0 in range(2):
                    for ax0_ax1_fused_0 in T.thread_binding(32, thread="threadIdx.x"):
                        for ax0_ax1_fused_1 in T.vectorized(8):
                            with T.block("A_shared"):
                                v0 = T.axis.spatial(32, i_0 * 16 + (ax0_ax1_fused_0 * 8 + ax0_ax1_fused_1) // 16)
                                v1 = T.axis.spatial(32, k_0 * 16 + (ax0_ax1_fused_0 * 8 + ax0_ax1_fused_1) % 16)
                                T.reads(A[v0, v1])
                                T.writes(A_shared[v0, v1])
                                T.block_attr({"buffer_dim_align": [[0, 0, 32, 8]]})
                                A_shared[v0, v1] = A[v0, v1]
                    for ax0_ax1_fused_0 in T.thread_binding(32, thread="threadIdx.x"):
                        for ax0_ax1_fused_1 in T.vectorized(8):
                            with T.block("B_shared"):
                                v0 = T.axis.spatial(32, k_0 * 16 + (ax0_ax1_fused_0 * 8 + ax0_ax1_fused_1) // 16)
                                v1 = T.axis.spatial(32, j_0 * 16 + (ax0_ax1_fused_0 * 8 + ax0_ax1_fused_1) % 16)
                                T.reads(B[v0, v1])
                                T.writes(B_shared[v0, v1])
                                T.block_attr({"buffer_dim_align": [[0, 0, 32, 8]]})
                                B_shared[v0, v1] = B[v0, v1]
                    with T.block("A_shared_wmma.matrix_a_o"):
                        v0_o = T.axis.spatial(2, i_0 + i_1)
                        v1_o = T.axis.spatial(2, k_0)
                        T.reads(A_shared[v0_o * 16:v0_o * 16 + 16, v1_o * 16:v1_o * 16 + 16])
                        T.writes(A_shared_wmma_matrix_a[v0_o * 16:v0_o * 16 + 16, v1_o * 16:v1_o * 16 + 16])
                        for ax0, ax1 in T.grid(16, 16):
                            with T.block("A_shared_wmma.matrix_a"):
                                v0_i, v1_i = T.axis.remap("SS", [ax0, ax1])
                                T.reads(A_shared[v0_o * 16 + v0_i, v1_o * 16 + v1_i])
                                T.writes(A_shared_wmma_matrix_a[v0_o * 16 + v0_i, v1_o * 16 + v1_i])
                                A_shared_wmma_matrix_a[v0_o * 16 + v0_i, v1_o * 16 + v1_i] = A_shared[v0_o * 16 + v0_i, v1_o * 16 + v1_i]
                    with T.block("B_shared_wmma.matrix_b_o"):
                        v0_o = T.axis.spatial(2, k_0)
                        v1_o = T.axis.spatial(2, j_0)
                        T.reads(B_shared[v0_o * 16:v0_o * 16 + 16, v1_o * 16:v1_o * 16 + 16])
                        T.writes(B_shared_wmma_matrix_b[v0_o * 16:v0_o * 16 + 16, v1_o * 16:v1_o * 16 + 16])
                        for ax0, ax1 in T.grid(16, 16):
                            with T.block("B_shared_wmma.matrix_b"):
                                v0_i, v1_i = T.axis.remap("SS", [ax0, ax1])
                                T.reads(B_shared[v0_o * 16 + v0_i, v1_o * 16 + v1_i])
                                T.writes(B_shared_wmma_matrix_b[v0_o * 16 + v0_i, v1_o * 16 + v1_i])
                                B_shared_wmma_matrix_b[v0_o * 16 + v0_i, v1_o * 16 + v1_i] = B_shared[v0_o * 16 + v0_i, v1_o * 16 + v1_i]
                    with T.block("C_update_o"):
                        v_i_o = T.axis.spatial(2, i_0 + i_1)
                        v_j_o = T.axis.spatial(2, j_0)
                        v_k_o = T.axis.reduce(2, k_0)
                        T.reads(C_wmma_accumulator[v_i_o * 16:v_i_o * 16 + 16, v_j_o * 16:v_j_o * 16 + 16], A_shared_wmma_matrix_a[v_i_o * 16:v_i_o * 16 + 16, v_k_o * 16:v_k_o * 16 + 16], B_shared_wmma_matrix_b[v_k_o * 16:v_k_o * 16 + 16, v_j_o * 16:v_j_o * 16 + 16])
                        T.writes(C_wmma_accumulator[v_i_o * 16:v_i_o * 16 + 16, v_j_o * 16:v_j_o * 16 + 16])
                        for i, j, k in T.grid(16, 16, 16):
                            with T.block("C_update"):
                                v_i_i, v_j_i, v_k_i = T.axis.remap("SSR", [i, j, k])
                                T.reads(C_wmma_accumulator[v_i_o * 16 + v_i_i, v_j_o * 16 + v_j_i], A_shared_wmma_matrix_a[v_i_o * 16 + v_i_i, v_k_o * 16 + v_k_i], B_shared_wmma_matrix_b[v_k_o * 16 + v_k_i, v_j_o * 16 + v_j_i])
                                T.writes(C_wmma_accumulator[v_i_o * 16 + v_i_i, v_j_o * 16 + v_j_i])
                                C_wmma_accumulator[v_i_o * 16 + v_i_i, v_j_o * 16 + v_j_i] = C_wmma_accumulator[v_i_o * 16 + v_i_i, v_j_o * 16 + v_j_i] + T.Cast("float32", A_shared_wmma_matrix_a[v_i_o * 16 + v_i_i, v_k_o * 16 + v_k_i]) * T.Cast("float32", B_shared_wmma_matrix_b[v_k_o * 16 + v_k_i, v_j_o * 16 + v_j_i])
                with T.block("C_wmma.accumulator_o"):
                    v0_o = T.axis.spatial(2, i_0 + i_1)
                    v1_o = T.axis.spatial(2, j_0)
                    T.reads(C_wmma_accumulator[v0_o * 16:v0_o * 16 + 16, v1_o * 16:v1_o * 16 + 16])
                    T.writes(C[v0_o * 16:v0_o * 16 + 16, v1_o * 16:v1_o * 16 + 16])
                    for ax0, ax1 in T.grid(16, 16):
                        with T.block("C_wmma.accumulator"):
                            v0_i, v1_i = T.axis.remap("SS", [ax0, ax1])
                            T.reads(C_wmma_accumulator[v0_o * 16 + v0_i, v1_o * 16 + v1_i])
                            T.writes(C[v0_o * 16 + v0_i, v1_o * 16 + v1_i])
                            C[v0_o * 16 + v0_i, v1_o * 16 + v1_i] = C_wmma_accumulator[v0_o * 16 + v0_i, v1_o * 16 + v1_i]
