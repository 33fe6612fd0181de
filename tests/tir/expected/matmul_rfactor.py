# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    B_rf = T.alloc_buffer((4, 64))
    for i, k_0, k_1 in T.grid(64, 16, 4):
        with T.block("B_rf"):
            vk_1, v_i, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])
            T.reads(A[v_i, vk_0 * 4 + vk_1])
            T.writes(B_rf[vk_1, v_i])
            with T.init():
                B_rf[vk_1, v_i] = T.float32(0)
            B_rf[vk_1, v_i] = B_rf[vk_1, v_i] + A[v_i, vk_0 * 4 + vk_1]
    for i_1, k_1_1 in T.grid(64, 4):
        with T.block("B"):
            vk_1, v_i = T.axis.remap("RS", [k_1_1, i_1])
            T.reads(B_rf[vk_1, v_i])
            T.writes(B[v_i])
            with T.init():
                B[v_i] = T.float32(0)
            B[v_i] = B[v_i] + B_rf[vk_1, v_i]
