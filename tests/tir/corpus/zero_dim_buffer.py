# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add_scalar(x: T.Buffer((T.int64(4), T.int64(8)), "float32"), p0: T.Buffer((), "float32"), T_add: T.Buffer((T.int64(4), T.int64(8)), "float32")):
        T.func_attr({"tir.noalias": T.bool(True)})
        # with T.block("root"):
        for ax0, ax1 in T.grid(T.int64(4), T.int64(8)):
            with T.block("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(x[v_ax0, v_ax1], p0[()])
                T.writes(T_add[v_ax0, v_ax1])
                T_add[v_ax0, v_ax1] = x[v_ax0, v_ax1] + p0[()]

    @T.prim_func(private=True)
    def sum_all(x: T.Buffer((T.int64(4), T.int64(8)), "float32"), x_red: T.Buffer((), "float32")):
        T.func_attr({"tir.noalias": T.bool(True)})
        # with T.block("root"):
        for k0, k1 in T.grid(T.int64(4), T.int64(8)):
            with T.block("x_red"):
                v_k0, v_k1 = T.axis.remap("RR", [k0, k1])
                T.reads(x[v_k0, v_k1])
                T.writes(x_red[()])
                with T.init():
                    x_red[()] = T.float32(0)
                x_red[()] = x_red[()] + x[v_k0, v_k1]
