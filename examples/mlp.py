# mlp.py - a small MLP block for the tune -> query -> compile -> call example
# (examples/README.md):
#
#     H1 = relu(X  W1^T + b1)     dense_relu1   X[64, 256], W1[256, 256], b1[256]
#     H2 = relu(H1 W2^T + b2)     dense_relu2   H1[64, 256], W2[128, 256], b2[128]
#     Y  = softmax(H2, axis=1)    softmax       H2[64, 128]
#
# Three PrimFuncs, one exported C function each (mlc-compile). They are the
# built-in workloads `mlc-tir workload D+B+R --shape 64,256,256`,
# `... D+B+R --shape 64,128,256` and `... SFM --shape 64,128` with the
# parameters renamed: the workload key ignores names, so a database tuned for
# the built-in workloads serves this module too, and the other way round.
# X is a batch of 64 rows of 256 features; the weights are stored as
# [out_features, in_features] (data x weight^T), as in PyTorch's nn.Linear.
#
# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def dense_relu1(X: T.Buffer((64, 256), "float32"), W1: T.Buffer((256, 256), "float32"), b1: T.Buffer((256,), "float32"), H1: T.Buffer((64, 256), "float32")):
        T.func_attr({"global_symbol": "dense_relu1", "tir.noalias": T.bool(True)})
        # with T.block("root"):
        T_matmul_NT = T.alloc_buffer((64, 256))
        T_add = T.alloc_buffer((64, 256))
        for i, j, k in T.grid(64, 256, 256):
            with T.block("T_matmul_NT"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                T.reads(X[v_i, v_k], W1[v_j, v_k])
                T.writes(T_matmul_NT[v_i, v_j])
                with T.init():
                    T_matmul_NT[v_i, v_j] = T.float32(0)
                T_matmul_NT[v_i, v_j] = T_matmul_NT[v_i, v_j] + X[v_i, v_k] * W1[v_j, v_k]
        for ax0, ax1 in T.grid(64, 256):
            with T.block("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(T_matmul_NT[v_ax0, v_ax1], b1[v_ax1])
                T.writes(T_add[v_ax0, v_ax1])
                T_add[v_ax0, v_ax1] = T_matmul_NT[v_ax0, v_ax1] + b1[v_ax1]
        for ax0, ax1 in T.grid(64, 256):
            with T.block("T_relu"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(T_add[v_ax0, v_ax1])
                T.writes(H1[v_ax0, v_ax1])
                H1[v_ax0, v_ax1] = T.max(T_add[v_ax0, v_ax1], T.float32(0))

    @T.prim_func
    def dense_relu2(H1: T.Buffer((64, 256), "float32"), W2: T.Buffer((128, 256), "float32"), b2: T.Buffer((128,), "float32"), H2: T.Buffer((64, 128), "float32")):
        T.func_attr({"global_symbol": "dense_relu2", "tir.noalias": T.bool(True)})
        # with T.block("root"):
        T_matmul_NT = T.alloc_buffer((64, 128))
        T_add = T.alloc_buffer((64, 128))
        for i, j, k in T.grid(64, 128, 256):
            with T.block("T_matmul_NT"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                T.reads(H1[v_i, v_k], W2[v_j, v_k])
                T.writes(T_matmul_NT[v_i, v_j])
                with T.init():
                    T_matmul_NT[v_i, v_j] = T.float32(0)
                T_matmul_NT[v_i, v_j] = T_matmul_NT[v_i, v_j] + H1[v_i, v_k] * W2[v_j, v_k]
        for ax0, ax1 in T.grid(64, 128):
            with T.block("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(T_matmul_NT[v_ax0, v_ax1], b2[v_ax1])
                T.writes(T_add[v_ax0, v_ax1])
                T_add[v_ax0, v_ax1] = T_matmul_NT[v_ax0, v_ax1] + b2[v_ax1]
        for ax0, ax1 in T.grid(64, 128):
            with T.block("T_relu"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(T_add[v_ax0, v_ax1])
                T.writes(H2[v_ax0, v_ax1])
                H2[v_ax0, v_ax1] = T.max(T_add[v_ax0, v_ax1], T.float32(0))

    @T.prim_func
    def softmax(H2: T.Buffer((64, 128), "float32"), Y: T.Buffer((64, 128), "float32")):
        T.func_attr({"global_symbol": "softmax", "tir.noalias": T.bool(True)})
        # with T.block("root"):
        T_softmax_maxelem = T.alloc_buffer((64,))
        T_softmax_exp = T.alloc_buffer((64, 128))
        T_softmax_expsum = T.alloc_buffer((64,))
        for i0, k in T.grid(64, 128):
            with T.block("T_softmax_maxelem"):
                v_i0, v_k = T.axis.remap("SR", [i0, k])
                T.reads(H2[v_i0, v_k])
                T.writes(T_softmax_maxelem[v_i0])
                with T.init():
                    T_softmax_maxelem[v_i0] = T.float32(-3.4028235e+38)
                T_softmax_maxelem[v_i0] = T.max(T_softmax_maxelem[v_i0], H2[v_i0, v_k])
        for i0, i1 in T.grid(64, 128):
            with T.block("T_softmax_exp"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(H2[v_i0, v_i1], T_softmax_maxelem[v_i0])
                T.writes(T_softmax_exp[v_i0, v_i1])
                T_softmax_exp[v_i0, v_i1] = T.exp(H2[v_i0, v_i1] - T_softmax_maxelem[v_i0])
        for i0, k in T.grid(64, 128):
            with T.block("T_softmax_expsum"):
                v_i0, v_k = T.axis.remap("SR", [i0, k])
                T.reads(T_softmax_exp[v_i0, v_k])
                T.writes(T_softmax_expsum[v_i0])
                with T.init():
                    T_softmax_expsum[v_i0] = T.float32(0)
                T_softmax_expsum[v_i0] = T_softmax_expsum[v_i0] + T_softmax_exp[v_i0, v_k]
        for i0, i1 in T.grid(64, 128):
            with T.block("T_softmax_norm"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(T_softmax_exp[v_i0, v_i1], T_softmax_expsum[v_i0])
                T.writes(Y[v_i0, v_i1])
                T.block_attr({"axis": 1})
                Y[v_i0, v_i1] = T_softmax_exp[v_i0, v_i1] / T_softmax_expsum[v_i0]
