# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i_0 in range(4):
        with T.block("B_o"):
            v_i_o = T.axis.spatial(4, i_0)
            v_k_o = T.axis.reduce(1, 0)
            T.reads(A[v_i_o * 16:v_i_o * 16 + 16, 0:64])
            T.writes(B[v_i_o * 16:v_i_o * 16 + 16])
            with T.init():
                for i_1 in range(16):
                    with T.block("B_init"):
                        v_i_i_init = T.axis.spatial(16, i_1)
                        T.reads()
                        T.writes(B[v_i_o * 16 + v_i_i_init])
                        B[v_i_o * 16 + v_i_i_init] = T.float32(0)
            for i_1, k in T.grid(16, 64):
                with T.block("B"):
                    v_i_i, v_k_i = T.axis.remap("SR", [i_1, k])
                    T.reads(B[v_i_o * 16 + v_i_i], A[v_i_o * 16 + v_i_i, v_k_i])
                    T.writes(B[v_i_o * 16 + v_i_i])
                    B[v_i_o * 16 + v_i_i] = B[v_i_o * 16 + v_i_i] + A[v_i_o * 16 + v_i_i, v_k_i]
