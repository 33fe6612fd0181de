# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16,), "uint8"), B: T.Buffer((16,), "int16"), C: T.Buffer((16,), "float64"), D: T.Buffer((16,), "bool"), E: T.Buffer((16,), "uint32"), F: T.Buffer((16,), "int64"), G: T.Buffer((16,), "int8"), H: T.Buffer((16,), "int32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in range(16):
        with T.block("B"):
            v_i = T.axis.spatial(16, i)
            T.reads(A[v_i])
            T.writes(B[v_i])
            B[v_i] = T.Cast("int16", A[v_i]) * T.int16(3) - T.int16(7)
        with T.block("C"):
            v_i = T.axis.spatial(16, i)
            T.reads(B[v_i])
            T.writes(C[v_i])
            C[v_i] = T.Cast("float64", B[v_i]) * T.float64(0.5) + T.float64(1.0000000000000001e-05)
        with T.block("D"):
            v_i = T.axis.spatial(16, i)
            T.reads(A[v_i])
            T.writes(D[v_i])
            D[v_i] = A[v_i] > T.uint8(4)
        with T.block("E"):
            v_i = T.axis.spatial(16, i)
            T.reads(A[v_i], D[v_i])
            T.writes(E[v_i])
            E[v_i] = T.Cast("uint32", A[v_i]) * T.uint32(1000) + T.Cast("uint32", D[v_i])
        with T.block("F"):
            v_i = T.axis.spatial(16, i)
            T.reads(E[v_i])
            T.writes(F[v_i])
            F[v_i] = T.Cast("int64", E[v_i]) - T.int64(5000000000)
        with T.block("G"):
            v_i = T.axis.spatial(16, i)
            T.reads(B[v_i])
            T.writes(G[v_i])
            G[v_i] = T.Cast("int8", B[v_i] % T.int16(100)) + T.int8(-1)
        with T.block("H"):
            v_i = T.axis.spatial(16, i)
            T.reads(C[v_i], D[v_i])
            T.writes(H[v_i])
            H[v_i] = T.reinterpret("int32", T.Cast("float32", C[v_i])) % 7 + T.Cast("int32", T.bool(True) and D[v_i])
