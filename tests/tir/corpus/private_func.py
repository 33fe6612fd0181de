# from tvm.script import tir as T

@T.prim_func(private=True)
def fused_multiply_add(x: T.Buffer((8, 16), "float32"), y: T.Buffer((8, 16), "float32"), z: T.Buffer((16,), "float32"), T_add: T.Buffer((8, 16), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    T_multiply = T.alloc_buffer((8, 16))
    for ax0, ax1 in T.grid(8, 16):
        with T.block("T_multiply"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(x[v_ax0, v_ax1], y[v_ax0, v_ax1])
            T.writes(T_multiply[v_ax0, v_ax1])
            T_multiply[v_ax0, v_ax1] = x[v_ax0, v_ax1] * y[v_ax0, v_ax1]
    for ax0, ax1 in T.grid(8, 16):
        with T.block("T_add"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(T_multiply[v_ax0, v_ax1], z[v_ax1])
            T.writes(T_add[v_ax0, v_ax1])
            T_add[v_ax0, v_ax1] = T_multiply[v_ax0, v_ax1] + z[v_ax1]
