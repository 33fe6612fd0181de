# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    for i_0 in range(8):
        with T.attr(i_0, "pragma_auto_unroll_max_step", 16):
            for i_1 in range(8):
                B[i_0 * 8 + i_1] = A[i_0 * 8 + i_1] * T.float32(2)
    for i in range(64):
        with T.attr(i, "pragma_import_llvm", "; empty module\n"):
            B[i] = B[i] + T.float32(1)
