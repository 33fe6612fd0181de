# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), T_softmax_norm: T.Buffer((64, 64), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    with T.block("root"):
        T.reads()
        T.writes()
        T.block_attr({"meta_schedule.unroll_explicit": 16})
        T_softmax_maxelem_shared = T.alloc_buffer((64,), scope="shared")
        T_softmax_expsum_shared = T.alloc_buffer((64,), scope="shared")
        for i0_fused in T.thread_binding(64, thread="blockIdx.x"):
            for ax0, ax1_0 in T.grid(1, 2):
                for ax1_1 in T.thread_binding(32, thread="threadIdx.x"):
                    with T.block("T_softmax_maxelem"):
                        v_i0 = T.axis.spatial(64, i0_fused + ax0)
                        v_k = T.axis.reduce(64, ax1_0 * 32 + ax1_1)
                        T.reads(A[v_i0, v_k])
                        T.writes(T_softmax_maxelem_shared[v_i0])
                        with T.init():
                            T_softmax_maxelem_shared[v_i0] = T.float32(-3.4028234663852886e+38)
                        T_softmax_maxelem_shared[v_i0] = T.max(T_softmax_maxelem_shared[v_i0], A[v_i0, v_k])
            for ax0, ax1_0 in T.grid(1, 2):
                for ax1_1 in T.thread_binding(32, thread="threadIdx.x"):
                    with T.block("T_softmax_expsum"):
                        v_i0 = T.axis.spatial(64, i0_fused + ax0)
                        v_k = T.axis.reduce(64, ax1_0 * 32 + ax1_1)
                        T.reads(A[v_i0, v_k], T_softmax_maxelem_shared[v_i0])
                        T.writes(T_softmax_expsum_shared[v_i0])
                        with T.init():
                            T_softmax_expsum_shared[v_i0] = T.float32(0)
                        T_softmax_expsum_shared[v_i0] = T_softmax_expsum_shared[v_i0] + T.exp(A[v_i0, v_k] - T_softmax_maxelem_shared[v_i0])
            for i1_0 in range(2):
                for i1_1 in T.thread_binding(32, thread="threadIdx.x"):
                    with T.block("T_softmax_norm"):
                        v_i0 = T.axis.spatial(64, i0_fused)
                        v_i1 = T.axis.spatial(64, i1_0 * 32 + i1_1)
                        T.reads(A[v_i0, v_i1], T_softmax_maxelem_shared[v_i0], T_softmax_expsum_shared[v_i0])
                        T.writes(T_softmax_norm[v_i0, v_i1])
                        T.block_attr({"axis": 1})
                        T_softmax_norm[v_i0, v_i1] = T.exp(A[v_i0, v_i1] - T_softmax_maxelem_shared[v_i0]) / T_softmax_expsum_shared[v_i0]
