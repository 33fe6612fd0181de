# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 32, 16), "float32"), B: T.Buffer((4, 32, 16), "float32"), T_batch_matmul_NT: T.Buffer((4, 32, 32), "float32")):
    T.func_attr({"layout_free_buffers": [1], "tir.noalias": T.bool(True)})
    # with T.block("root"):
    for b, i, j, k in T.grid(4, 32, 32, 16):
        with T.block("T_batch_matmul_NT"):
            v_b, v_i, v_j, v_k = T.axis.remap("SSSR", [b, i, j, k])
            T.reads(A[v_b, v_i, v_k], B[v_b, v_j, v_k])
            T.writes(T_batch_matmul_NT[v_b, v_i, v_j])
            with T.init():
                T_batch_matmul_NT[v_b, v_i, v_j] = T.float32(0)
            T_batch_matmul_NT[v_b, v_i, v_j] = T_batch_matmul_NT[v_b, v_i, v_j] + A[v_b, v_i, v_k] * B[v_b, v_j, v_k]
