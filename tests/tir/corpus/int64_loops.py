# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(A: T.Buffer((T.int64(16), T.int64(64)), "float32"), B: T.Buffer((T.int64(64),), "float32"), T_add: T.Buffer((T.int64(16), T.int64(64)), "float32")):
        T.func_attr({"tir.noalias": T.bool(True)})
        # with T.block("root"):
        for ax0, ax1 in T.grid(T.int64(16), T.int64(64)):
            with T.block("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(A[v_ax0, v_ax1], B[v_ax1])
                T.writes(T_add[v_ax0, v_ax1])
                T_add[v_ax0, v_ax1] = A[v_ax0, v_ax1] + B[v_ax1]

    @T.prim_func(private=True)
    def sum_split(A: T.Buffer((T.int64(16), T.int64(64)), "float32"), A_red: T.Buffer((T.int64(16),), "float32")):
        T.func_attr({"tir.noalias": T.bool(True)})
        # with T.block("root"):
        for ax0 in range(T.int64(16)):
            for k1_0 in range(T.int64(4)):
                for k1_1 in T.vectorized(T.int64(16)):
                    with T.block("A_red"):
                        v_ax0 = T.axis.spatial(T.int64(16), ax0)
                        v_k1 = T.axis.reduce(T.int64(64), k1_0 * T.int64(16) + k1_1)
                        T.reads(A[v_ax0, v_k1])
                        T.writes(A_red[v_ax0])
                        with T.init():
                            A_red[v_ax0] = T.float32(0)
                        A_red[v_ax0] = A_red[v_ax0] + A[v_ax0, v_k1]

    @T.prim_func(private=True)
    def take(A: T.Buffer((T.int64(16), T.int64(64)), "float32"), indices: T.Buffer((T.int64(8),), "int64"), T_take: T.Buffer((T.int64(8), T.int64(64)), "float32")):
        T.func_attr({"tir.noalias": T.bool(True)})
        # with T.block("root"):
        for ax0, ax1 in T.grid(T.int64(8), T.int64(64)):
            with T.block("T_take"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(A[T.min(T.max(T.int64(0), indices[v_ax0]), T.int64(15)), v_ax1], indices[v_ax0])
                T.writes(T_take[v_ax0, v_ax1])
                T_take[v_ax0, v_ax1] = A[T.min(T.max(T.int64(0), indices[v_ax0]), T.int64(15)), v_ax1]
