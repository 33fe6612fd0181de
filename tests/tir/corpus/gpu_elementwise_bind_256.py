# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((10, 100), "float32"), B: T.Buffer((64, 64), "float32"), compute: T.Buffer((10, 100), "float32"), T_add: T.Buffer((64, 64), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i0_i1_fused_0 in T.thread_binding(4, thread="blockIdx.x"):
        for i0_i1_fused_1 in T.thread_binding(256, thread="threadIdx.x"):
            with T.block("compute"):
                v_i0 = T.axis.spatial(10, (i0_i1_fused_0 * 256 + i0_i1_fused_1) // 100)
                v_i1 = T.axis.spatial(100, (i0_i1_fused_0 * 256 + i0_i1_fused_1) % 100)
                T.where(i0_i1_fused_0 * 256 + i0_i1_fused_1 < 1000)
                T.reads(A[v_i0, v_i1])
                T.writes(compute[v_i0, v_i1])
                compute[v_i0, v_i1] = T.sigmoid(A[v_i0, v_i1])
    for ax0_ax1_fused_0 in T.thread_binding(16, thread="blockIdx.x"):
        for ax0_ax1_fused_1 in T.thread_binding(256, thread="threadIdx.x"):
            with T.block("T_add"):
                v_ax0 = T.axis.spatial(64, (ax0_ax1_fused_0 * 256 + ax0_ax1_fused_1) // 64)
                v_ax1 = T.axis.spatial(64, (ax0_ax1_fused_0 * 256 + ax0_ax1_fused_1) % 64)
                T.reads(B[v_ax0, v_ax1])
                T.writes(T_add[v_ax0, v_ax1])
                T_add[v_ax0, v_ax1] = B[v_ax0, v_ax1] + T.float32(1)
