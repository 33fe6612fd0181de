# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), C: T.Buffer((64,), "int32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in range(64):
        with T.block("B"):
            v_i = T.axis.spatial(64, i)
            T.reads(A[v_i])
            T.writes(B[v_i])
            B[v_i] = T.call_extern("float32", "expf", A[v_i]) + T.call_pure_extern("float32", "fmaf", A[v_i], A[v_i], T.float32(1))
    for i in range(64):
        with T.block("C"):
            v_i = T.axis.spatial(64, i)
            T.reads(B[v_i])
            T.writes(C[v_i])
            C[v_i] = T.call_extern("int32", "my_round", B[v_i], v_i)
    T.call_extern("int32", "my_flush_log")
