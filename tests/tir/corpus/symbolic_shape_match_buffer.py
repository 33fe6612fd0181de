# from tvm.script import tir as T

@T.prim_func
def main(var_A: T.handle, var_B: T.handle, var_C: T.handle):
    T.func_attr({"tir.noalias": T.bool(True)})
    n = T.int32()
    A = T.match_buffer(var_A, (n, 64))
    B = T.match_buffer(var_B, (64, 32))
    C = T.match_buffer(var_C, (n, 32))
    # with T.block("root"):
    for i, j, k in T.grid(n, 32, 64):
        with T.block("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
