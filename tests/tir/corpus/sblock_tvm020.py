# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def matmul_relu(A: T.Buffer((16, 32), "float32"), B: T.Buffer((32, 16), "float32"), compute: T.Buffer((16, 16), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.sblock("root"):
        matmul = T.sblock_alloc_buffer((16, 16))
        for i, j, k in T.grid(16, 16, 32):
            with T.sblock("matmul"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                T.reads(A[v_i, v_k], B[v_k, v_j])
                T.writes(matmul[v_i, v_j])
                with T.init():
                    matmul[v_i, v_j] = T.float32(0.0)
                matmul[v_i, v_j] = matmul[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
        for i0, i1 in T.grid(16, 16):
            with T.sblock("compute"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(matmul[v_i0, v_i1])
                T.writes(compute[v_i0, v_i1])
                compute[v_i0, v_i1] = T.max(matmul[v_i0, v_i1], T.float32(0.0))
