# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    T.func_attr({"note": "quote \" backslash \\ tab \t newline \n end", "tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in T.serial(16, annotations={"pragma_import_c": "extern \"C\" int f(void);\n", "software_pipeline_order": [0, 1, 2], "software_pipeline_stage": [0, 0, 1]}):
        for j in T.vectorized(16, annotations={"empty": "", "path": "C:\\tmp\\x.c"}):
            with T.block("B"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                T.reads(A[v_i, v_j])
                T.writes(B[v_i, v_j])
                T.block_attr({"apostrophe's": "it's \"fine\"", "flag": T.bool(False), "ratio": T.float32(0.25), "slash/key": "a/b", "unicode_escape": "\x01\x7f"})
                B[v_i, v_j] = A[v_i, v_j] * T.float32(0.25)
