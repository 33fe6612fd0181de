# from tvm.script import tir as T

@T.prim_func
def main(p0: T.Buffer((32, 64), "float32"), p1: T.Buffer((48, 64), "float32"), p2: T.Buffer((1, 48), "float32"), T_relu: T.Buffer((32, 48), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    T_matmul_NT = T.alloc_buffer((32, 48))
    T_add = T.alloc_buffer((32, 48))
    for i0, i1, k in T.grid(32, 48, 64):
        with T.block("T_matmul_NT"):
            v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
            T.reads(p0[v_i0, v_k], p1[v_i1, v_k])
            T.writes(T_matmul_NT[v_i0, v_i1])
            with T.init():
                T_matmul_NT[v_i0, v_i1] = T.float32(0)
            T_matmul_NT[v_i0, v_i1] = T_matmul_NT[v_i0, v_i1] + p0[v_i0, v_k] * p1[v_i1, v_k]
    for ax0, ax1 in T.grid(32, 48):
        with T.block("T_add"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(T_matmul_NT[v_ax0, v_ax1], p2[0, v_ax1])
            T.writes(T_add[v_ax0, v_ax1])
            T_add[v_ax0, v_ax1] = T_matmul_NT[v_ax0, v_ax1] + p2[0, v_ax1]
    for ax0, ax1 in T.grid(32, 48):
        with T.block("T_relu"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(T_add[v_ax0, v_ax1])
            T.writes(T_relu[v_ax0, v_ax1])
            T_relu[v_ax0, v_ax1] = T.max(T_add[v_ax0, v_ax1], T.float32(0))
