# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), n: T.int32, alpha: T.float32):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in range(64):
        with T.block("B"):
            v_i = T.axis.spatial(64, i)
            T.reads(A[v_i])
            T.writes(B[v_i])
            if v_i < n:
                B[v_i] = A[v_i] * alpha + T.Cast("float32", n)
            else:
                B[v_i] = T.float32(0)
