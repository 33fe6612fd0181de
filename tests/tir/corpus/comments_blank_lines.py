# This file was pasted from a TVM session: comments and blank lines appear
# in odd places and must be ignored by the parser.

# from tvm.script import tir as T


@T.prim_func   # the decorator may carry a comment
def main(A: T.Buffer((32, 32), "float32"),  # first parameter
         B: T.Buffer((32, 32), "float32")):
    # leading comment in the body

    T.func_attr({"tir.noalias": T.bool(True)})  # attributes
    # with T.block("root"):

    C = T.alloc_buffer((32, 32))  # scratch
        # an over-indented comment line
    for i, j in T.grid(32, 32):  # loop comment

        with T.block("C"):
            # comment before the iter vars
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j])

            T.writes(C[v_i, v_j])
            C[v_i, v_j] = A[v_i, v_j] + T.float32(1)  # store comment
# a comment in column zero inside the function
    for i, j in T.grid(32, 32):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(C[v_i, v_j])
            T.writes(B[v_i, v_j])
            B[v_i, v_j] = C[v_i, v_j] * T.float32(2)

    # trailing comment after the last statement


# trailing comment at the end of the file
