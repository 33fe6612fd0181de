# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 16), "float16"), B: T.Buffer((16, 16), "float16"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    A_warp = T.alloc_buffer((32, 8), "float16", scope="warp")
    B_warp = T.alloc_buffer((32, 8), "float16", scope="warp")
    C_warp = T.alloc_buffer((32, 8), scope="warp")
    for ax0, ax1 in T.grid(16, 16):
        with T.block("A_warp"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(A[v0, v1])
            T.writes(A_warp[v0 % 8 * 4 + v1 % 8 // 2, v1 // 8 * 4 + v0 // 8 * 2 + v1 % 2])
            A_warp[v0 % 8 * 4 + v1 % 8 // 2, v1 // 8 * 4 + v0 // 8 * 2 + v1 % 2] = A[v0, v1]
    for ax0, ax1 in T.grid(16, 16):
        with T.block("B_warp"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(B[v0, v1])
            T.writes(B_warp[v1 % 8 * 4 + v0 % 8 // 2, v0 // 8 * 4 + v1 // 8 * 2 + v0 % 2])
            B_warp[v1 % 8 * 4 + v0 % 8 // 2, v0 // 8 * 4 + v1 // 8 * 2 + v0 % 2] = B[v0, v1]
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A_warp[v_i % 8 * 4 + v_k % 8 // 2, v_k // 8 * 4 + v_i // 8 * 2 + v_k % 2], B_warp[v_j % 8 * 4 + v_k % 8 // 2, v_k // 8 * 4 + v_j // 8 * 2 + v_k % 2])
            T.writes(C_warp[v_i % 8 * 4 + v_j % 8 // 2, v_j // 8 * 4 + v_i // 8 * 2 + v_j % 2])
            with T.init():
                C_warp[v_i % 8 * 4 + v_j % 8 // 2, v_j // 8 * 4 + v_i // 8 * 2 + v_j % 2] = T.float32(0)
            C_warp[v_i % 8 * 4 + v_j % 8 // 2, v_j // 8 * 4 + v_i // 8 * 2 + v_j % 2] = C_warp[v_i % 8 * 4 + v_j % 8 // 2, v_j // 8 * 4 + v_i // 8 * 2 + v_j % 2] + T.Cast("float32", A_warp[v_i % 8 * 4 + v_k % 8 // 2, v_k // 8 * 4 + v_i // 8 * 2 + v_k % 2]) * T.Cast("float32", B_warp[v_j % 8 * 4 + v_k % 8 // 2, v_k // 8 * 4 + v_j // 8 * 2 + v_k % 2])
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        for local_id in range(8):
            with T.block("C_warp"):
                v_tx, v_local_id = T.axis.remap("SS", [tx, local_id])
                T.reads(C_warp[v_tx, v_local_id])
                T.writes(C[v_local_id % 4 // 2 * 8 + v_tx // 4, v_local_id // 4 * 8 + v_tx % 4 * 2 + v_local_id % 2])
                C[v_local_id % 4 // 2 * 8 + v_tx // 4, v_local_id // 4 * 8 + v_tx % 4 * 2 + v_local_id % 2] = C_warp[v_tx, v_local_id]
