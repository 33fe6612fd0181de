# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32"), C: T.Buffer((4096,), "float32")):
    T.func_attr({"tir.is_scheduled": T.bool(True), "tir.noalias": T.bool(True)})
    for blockIdx_x in T.thread_binding(4, thread="blockIdx.x"):
        A_shared = T.decl_buffer((128,), scope="shared")
        B_shared = T.decl_buffer((512,), scope="shared")
        for threadIdx_x in T.thread_binding(64, thread="threadIdx.x"):
            C_local = T.decl_buffer((16,), scope="local")
            for j_c_init in range(16):
                C_local[j_c_init] = T.float32(0)
            for k_0 in range(8):
                T.tvm_storage_sync("shared")
                for ax_0 in range(2):
                    A_shared[ax_0 * 64 + threadIdx_x] = A[blockIdx_x * 1024 + (ax_0 * 64 + threadIdx_x) // 8 * 64 + k_0 * 8 + (ax_0 * 64 + threadIdx_x) % 8]
                for ax_0 in range(8):
                    B_shared[ax_0 * 64 + threadIdx_x] = B[k_0 * 512 + ax_0 * 64 + threadIdx_x]
                T.tvm_storage_sync("shared")
                for k_1, j_c in T.grid(8, 16):
                    C_local[j_c] = C_local[j_c] + A_shared[threadIdx_x // 4 * 8 + k_1] * B_shared[k_1 * 64 + threadIdx_x % 4 * 16 + j_c]
            for j_inner in range(16):
                C[blockIdx_x * 1024 + threadIdx_x // 4 * 64 + threadIdx_x % 4 * 16 + j_inner] = C_local[j_inner]
