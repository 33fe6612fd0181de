/*
 * llvm_vmath.h - float32 exp, exp2, log, log2 and tanh generated inline as
 * LLVM IR polynomials for CPU targets (llvm_vmath.c), so that vector lanes stay
 * vectors: LLVM 14 without a vector math library turns `llvm.exp` on
 * <16 x float> into sixteen calls to expf. Private to the LLVM generator;
 * llvm_call.c uses it for CPU code only (GPU targets keep their math hooks).
 * The accuracy contract (within 2 ulp of glibc over every float) is in
 * docs/compiler/codegen.md, "Math functions".
 */
#ifndef MLC_LLVM_VMATH_H
#define MLC_LLVM_VMATH_H

#include "compiler/codegen/llvm_gen.h"

/* True when cg_vmath generates op for values like x: float32 scalars or
 * vectors and op one of exp, exp2, log, log2, tanh. */
bool cg_vmath_handles(cg_t *cg, tir_op_t op, LLVMValueRef x);

/* op(x) computed inline at the builder's position (cg_vmath_handles must
 * hold). Never fails; special values (NaN, +-inf, 0, negatives for log,
 * overflow and underflow for exp, +-inf and -0 for tanh) give libm's
 * results. */
LLVMValueRef cg_vmath(cg_t *cg, tir_op_t op, LLVMValueRef x);

#endif /* MLC_LLVM_VMATH_H */
