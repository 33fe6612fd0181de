# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((32, 32), "float16"), B: T.Buffer((32, 32), "float16"), C: T.Buffer((32, 32), "float16")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    C_acc = T.alloc_buffer((32, 32))
    for i, j, k in T.grid(32, 32, 32):
        with T.block("C_acc"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C_acc[v_i, v_j])
            with T.init():
                C_acc[v_i, v_j] = T.float32(0)
            C_acc[v_i, v_j] = C_acc[v_i, v_j] + T.Cast("float32", A[v_i, v_k]) * T.Cast("float32", B[v_k, v_j])
    for i, j in T.grid(32, 32):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(C_acc[v_i, v_j])
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = T.Cast("float16", C_acc[v_i, v_j] * T.float32(0.03125))
