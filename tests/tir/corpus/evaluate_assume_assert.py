# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    assert A[0] < 100, "A[0] must be small"
    for i in range(16):
        T.assume(i < 16 or A[i] == 0)
    for i in range(16):
        T.evaluate(0)
        B[i] = A[i] * 2 + 1
