# from tvm.script import tir as T

@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": T.bool(True)})
    A_s0 = T.int32()
    A_elem_offset = T.int32()
    A = T.match_buffer(a, (16, 16), strides=(A_s0, 1), elem_offset=A_elem_offset, scope="global", align=64, offset_factor=1)
    B = T.match_buffer(b, (16, 16), "float16", align=64, offset_factor=1)
    C = T.match_buffer(c, (16, 16), strides=(32, 1), offset_factor=16)
    # with T.block("root"):
    for i, j in T.grid(16, 16):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j], B[v_i, v_j])
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = A[v_i, v_j] + T.Cast("float32", B[v_i, v_j])
