# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 64), "float32"), gamma: T.Buffer((64,), "float32"), beta: T.Buffer((64,), "float32"), out: T.Buffer((8, 64), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    # with T.block("root"):
    mean = T.alloc_buffer((8,))
    var = T.alloc_buffer((8,))
    for i, k in T.grid(8, 64):
        with T.block("mean"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(A[v_i, v_k])
            T.writes(mean[v_i])
            with T.init():
                mean[v_i] = T.float32(0)
            mean[v_i] = mean[v_i] + A[v_i, v_k] / T.float32(64)
    for i, k in T.grid(8, 64):
        with T.block("var"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(A[v_i, v_k], mean[v_i])
            T.writes(var[v_i])
            with T.init():
                var[v_i] = T.float32(0)
            var[v_i] = var[v_i] + (A[v_i, v_k] - mean[v_i]) * (A[v_i, v_k] - mean[v_i]) / T.float32(64)
    for i, j in T.grid(8, 64):
        with T.block("out"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j], mean[v_i], var[v_i], gamma[v_j], beta[v_j])
            T.writes(out[v_i, v_j])
            out[v_i, v_j] = (A[v_i, v_j] - mean[v_i]) / T.sqrt(var[v_i] + T.float32(9.9999997473787516e-06)) * gamma[v_j] + beta[v_j]
