/*
 * tensor_core.h - lowering pass "lower-tensor-core" and what the other
 * passes and the GPU code generator need to know about the WMMA calls of
 * the CUDA tensor intrinsics (docs/compiler/gpu.md#tensor-cores):
 * `T.call_extern("handle", "tvm_fill_fragment" | "tvm_load_matrix_sync" |
 * "tvm_mma_sync" | "tvm_store_matrix_sync", ...)`, whose BufferLoad
 * operands stand for 16x16 tiles, not values.
 *
 * The pass checks every such call and gives every fragment buffer (scope
 * wmma.matrix_a, wmma.matrix_b, wmma.accumulator) the layout
 * [..., R / 16, C / 16, 16, 16] of its [..., R, C] shape, so that once
 * flattened each 16x16 tile is 256 consecutive elements: fragment number
 * offset / 256, the convention of code generation and of the interpreter.
 */
#ifndef MLC_COMPILER_LOWER_TENSOR_CORE_H
#define MLC_COMPILER_LOWER_TENSOR_CORE_H

#include "compiler/compiler.h"

int mlc_pass_lower_tensor_core(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes);

#define LOWER_TC_DIM 16 /* m = n = k: the only WMMA shape generated */

/* Argument positions in the call's args (args[0] is the function name):
 * the fragment of fill/load/store is args[1]; load/store's memory operand,
 * row stride and layout string are args[5], args[6], args[7]; mma's
 * D, A, B, C are args[1..4]. */
enum { LOWER_TC_FRAG_ARG = 1, LOWER_TC_MEM_ARG = 5, LOWER_TC_STRIDE_ARG = 6, LOWER_TC_LAYOUT_ARG = 7 };

/* Which call is which, and which buffers are fragments: tir.h's
 * tir_wmma_op, tir_wmma_name, tir_wmma_is_fragment (shared with the
 * interpreter). */
/* True when argument `pos` of a call of kind op is a tile operand (a
 * fragment or a memory address). */
bool lower_tc_is_tile_arg(tir_wmma_op_t op, int pos);

#endif
