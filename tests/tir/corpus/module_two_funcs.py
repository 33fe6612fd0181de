# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64,), "float32")):
        T.func_attr({"tir.noalias": T.bool(True)})
        # with T.block("root"):
        for i, k in T.grid(64, 64):
            with T.block("B"):
                v_i, v_k = T.axis.remap("SR", [i, k])
                T.reads(A[v_i, v_k])
                T.writes(B[v_i])
                with T.init():
                    B[v_i] = T.float32(0)
                B[v_i] = B[v_i] + A[v_i, v_k] * A[v_i, v_k]

    @T.prim_func
    def norm(B: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
        T.func_attr({"tir.noalias": T.bool(True)})
        # with T.block("root"):
        for i in range(64):
            with T.block("C"):
                v_i = T.axis.spatial(64, i)
                T.reads(B[v_i])
                T.writes(C[v_i])
                C[v_i] = T.sqrt(B[v_i])
