# from tvm.script import tir as T

@T.prim_func
def main(var_A: T.handle, var_B: T.handle, var_C: T.handle):
    T.func_attr({"tir.noalias": T.bool(True)})
    m = T.int32()
    A = T.match_buffer(var_A, (m,))
    B = T.match_buffer(var_B, (m,))
    n = T.int64()
    C = T.match_buffer(var_C, (n, T.int64(4)), "int32")
    # with T.block("root"):
    for i_0, i_1 in T.grid((m + 31) // 32, 32):
        with T.block("B"):
            v_i = T.axis.spatial(m, i_0 * 32 + i_1)
            T.where(i_0 * 32 + i_1 < m)
            T.reads(A[v_i])
            T.writes(B[v_i])
            B[v_i] = A[v_i] * T.float32(2)
    for i, j in T.grid(n, T.int64(4)):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads()
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = T.Cast("int32", v_i * T.int64(4) + v_j)
