# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((32,), "float32"), B: T.Buffer((32, 22), "float32"), C: T.Buffer((32,), "bool")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in range(32):
        with T.block("B"):
            v_i = T.axis.spatial(32, i)
            T.reads(A[v_i])
            T.writes(B[v_i, 0:22])
            B[v_i, 0] = T.exp(A[v_i] * T.float32(0.125))
            B[v_i, 1] = T.exp2(A[v_i])
            B[v_i, 2] = T.exp10(A[v_i] * T.float32(0.25))
            B[v_i, 3] = T.log(A[v_i])
            B[v_i, 4] = T.log2(A[v_i])
            B[v_i, 5] = T.log10(A[v_i])
            B[v_i, 6] = T.log1p(A[v_i])
            B[v_i, 7] = T.sqrt(A[v_i])
            B[v_i, 8] = T.rsqrt(A[v_i])
            B[v_i, 9] = T.tanh(A[v_i] - T.float32(5))
            B[v_i, 10] = T.sigmoid(A[v_i] - T.float32(5))
            B[v_i, 11] = T.fabs(T.float32(5) - A[v_i])
            B[v_i, 12] = T.erf(A[v_i] * T.float32(0.10000000149011612))
            B[v_i, 13] = T.pow(A[v_i], T.float32(1.5))
            B[v_i, 14] = T.round(A[v_i])
            B[v_i, 15] = T.nearbyint(A[v_i])
            B[v_i, 16] = T.floor(A[v_i])
            B[v_i, 17] = T.ceil(A[v_i])
            B[v_i, 18] = T.trunc(A[v_i])
            B[v_i, 19] = T.sin(A[v_i]) + T.cos(A[v_i])
            B[v_i, 20] = T.min(T.max(A[v_i], T.float32(2)), T.float32(6))
            B[v_i, 21] = T.if_then_else(T.likely(A[v_i] < T.float32(5)), A[v_i], T.float32(5))
    for i in range(32):
        with T.block("C"):
            v_i = T.axis.spatial(32, i)
            T.reads(B[v_i, 3])
            T.writes(C[v_i])
            C[v_i] = T.isnan(B[v_i, 3])
