# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    B = T.alloc_buffer((64, 64))
    for i_0, j_0 in T.grid(4, 4):
        with T.block("B_o"):
            v_i_o, v_j_o = T.axis.remap("SS", [i_0, j_0])
            T.reads(A[v_i_o * 16:v_i_o * 16 + 16, v_j_o * 16:v_j_o * 16 + 16])
            T.writes(B[v_i_o * 16:v_i_o * 16 + 16, v_j_o * 16:v_j_o * 16 + 16])
            for i_1, j_1 in T.grid(16, 16):
                with T.block("B"):
                    v_i_i, v_j_i = T.axis.remap("SS", [i_1, j_1])
                    T.reads(A[v_i_o * 16 + v_i_i, v_j_o * 16 + v_j_i])
                    T.writes(B[v_i_o * 16 + v_i_i, v_j_o * 16 + v_j_i])
                    B[v_i_o * 16 + v_i_i, v_j_o * 16 + v_j_i] = A[v_i_o * 16 + v_i_i, v_j_o * 16 + v_j_i] * T.float32(2)
        with T.block("C_o"):
            v_i_o = T.axis.spatial(4, i_0)
            v_j_o = T.axis.spatial(4, j_0)
            T.reads(B[v_i_o * 16:v_i_o * 16 + 16, v_j_o * 16:v_j_o * 16 + 16])
            T.writes(C[v_i_o * 16:v_i_o * 16 + 16, v_j_o * 16:v_j_o * 16 + 16])
            for ax0, ax1 in T.grid(16, 16):
                with T.block("C"):
                    v_i_i, v_j_i = T.axis.remap("SS", [ax0, ax1])
                    T.reads(B[v_i_o * 16 + v_i_i, v_j_o * 16 + v_j_i])
                    T.writes(C[v_i_o * 16 + v_i_i, v_j_o * 16 + v_j_i])
                    C[v_i_o * 16 + v_i_i, v_j_o * 16 + v_j_i] = B[v_i_o * 16 + v_i_i, v_j_o * 16 + v_j_i] + T.float32(1)
