/*
 * gpu_mma.c - mma.sync tensor cores on NVPTX: the calls of the warp-layout
 * intrinsics (tir_ptx_op; schedule/intrin/builtin_cuda.c) as LLVM's NVVM
 * intrinsics (docs/compiler/gpu.md#mmasync):
 *
 *   ptx_ldmatrix_x4(S[Ramp(p, 1, 8)])   float16x8  llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16
 *   ptx_ldmatrix_x2(S[Ramp(p, 1, 8)])   float16x4  llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.b16
 *   ptx_mma_m16n8k16_row_col_f16f16f32(a, b, c)
 *                                       float32x4  llvm.nvvm.mma.m16n8k16.row.col.f32.f32
 *
 * The operand of ldmatrix is the address of the lane's row (8 float16 in
 * shared memory, 16-byte aligned); the four (two) 32-bit registers it
 * returns are the lane's elements 2m, 2m + 1 of matrix m, i.e. the
 * float16x8 (x4) value in order. mma takes the lane's A registers (4 x
 * <2 x half>), B registers (2 x <2 x half>) and C (4 floats) and returns D.
 * The values travel as vectors of the call's dtype, so the warp buffers
 * they come from and go to (gpu_warp.c) are ordinary private arrays.
 */
#include "compiler/codegen/gpu.h"

#include <stdlib.h>
#include <string.h>

static LLVMValueRef refuse(const tir_expr_t *call, const char *why) {
  mlc_error_set(MLC_EUNSUPPORTED, "codegen: %s: %s", tir_ptx_name(tir_ptx_op(call)), why);
  return NULL;
}

/* The architecture's number (sm_80 -> 80), 0 when not "sm_<n>". */
static int sm_of(const cg_t *cg) {
  const char *arch = cg->m->target.arch;
  return strncmp(arch, "sm_", 3) == 0 ? atoi(arch + 3) : 0;
}

static bool has_dtype(const tir_expr_t *e, tir_dtype_t scalar, int lanes) {
  return tir_dtype_eq(e->dtype, tir_dtype_lanes(scalar, lanes));
}

/* The i32 registers r[0..n) as one vector of 2n float16. */
static LLVMValueRef halves(cg_t *cg, LLVMValueRef s, int n) {
  LLVMTypeRef v = LLVMVectorType(cg->t_i32, (unsigned)n);
  LLVMValueRef acc = LLVMGetUndef(v);
  for (int i = 0; i < n; i++)
    acc = LLVMBuildInsertElement(cg->b, acc, LLVMBuildExtractValue(cg->b, s, (unsigned)i, ""), cg_i32(cg, i), "");
  return LLVMBuildBitCast(cg->b, acc, LLVMVectorType(cg->t_f16, (unsigned)(2 * n)), "");
}

static LLVMValueRef ldmatrix(cg_t *cg, const tir_expr_t *call, int nregs) {
  if (sm_of(cg) < 75) return refuse(call, "ldmatrix needs sm_75 or newer");
  const tir_expr_t *x = call->u.call.args[1];
  if (call->u.call.nargs != 2 || x->kind != TIR_BUFFER_LOAD || !has_dtype(call, tir_dt_FLOAT16(), 2 * nregs) ||
      !has_dtype(x, tir_dt_FLOAT16(), 8))
    return refuse(call, "takes one load of 8 consecutive float16 (a row of an 8x8 matrix) and gives the lane's "
                        "float16 registers");
  const tir_buffer_t *b = x->u.load.buffer;
  if (strncmp(b->scope, "shared", 6) != 0) return refuse(call, "its operand must be in shared memory");
  /* the row's address: the load's first element */
  const tir_expr_t *idx = x->u.load.nindices == 1 ? x->u.load.indices[0] : NULL;
  if (!idx || idx->kind != TIR_RAMP || !tir_is_const_int(idx->u.ramp.stride, 1))
    return refuse(call, "its operand must be a lowered load of consecutive elements");
  const cg_binding_t *bnd = cg_lookup(cg, b->data);
  LLVMValueRef i = bnd ? cg_expr(cg, idx->u.ramp.base) : NULL;
  if (!i) return bnd ? NULL : refuse(call, "its buffer's data is not defined");
  i = cg_index64(cg, i, idx->u.ramp.base->dtype);
  LLVMValueRef p = LLVMBuildBitCast(cg->b, bnd->value, LLVMPointerType(cg->t_f16, 0), "");
  p = LLVMBuildInBoundsGEP2(cg->b, cg->t_f16, p, &i, 1, "");
  LLVMTypeRef shared_i8 = LLVMPointerType(cg->t_i8, 3);
  p = LLVMBuildAddrSpaceCast(cg->b, LLVMBuildBitCast(cg->b, p, cg->t_ptr, ""), shared_i8, "");
  const char *name = nregs == 4 ? "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16"
                                : "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.b16";
  /* overloaded on the pointer in some LLVM versions */
  int ntys = LLVMIntrinsicIsOverloaded(LLVMLookupIntrinsicID(name, strlen(name))) ? 1 : 0;
  LLVMValueRef r = cg_call_intrinsic(cg, name, &shared_i8, ntys, &p, 1);
  return r ? halves(cg, r, nregs) : NULL;
}

/* Elements [2i, 2i + 1] of a float16 vector as <2 x half>. */
static LLVMValueRef pair(cg_t *cg, LLVMValueRef v, int i) {
  LLVMValueRef mask[2] = {cg_i32(cg, 2 * i), cg_i32(cg, 2 * i + 1)};
  return LLVMBuildShuffleVector(cg->b, v, LLVMGetUndef(LLVMTypeOf(v)), LLVMConstVector(mask, 2), "");
}

static LLVMValueRef mma(cg_t *cg, const tir_expr_t *call) {
  if (sm_of(cg) < 80) return refuse(call, "mma.sync m16n8k16 with float16 operands needs sm_80 or newer");
  const tir_expr_t *const *arg = (const tir_expr_t *const *)call->u.call.args;
  if (call->u.call.nargs != 4 || !has_dtype(call, tir_dt_FLOAT32(), 4) || !has_dtype(arg[1], tir_dt_FLOAT16(), 8) ||
      !has_dtype(arg[2], tir_dt_FLOAT16(), 4) || !has_dtype(arg[3], tir_dt_FLOAT32(), 4))
    return refuse(call, "takes the lane's A (float16x8), B (float16x4) and C (float32x4) registers and gives D "
                        "(float32x4)");
  LLVMValueRef a = cg_expr(cg, arg[1]), b = a ? cg_expr(cg, arg[2]) : NULL, c = b ? cg_expr(cg, arg[3]) : NULL;
  if (!c) return NULL;
  LLVMValueRef in[10];
  for (int i = 0; i < 4; i++) in[i] = pair(cg, a, i);
  for (int i = 0; i < 2; i++) in[4 + i] = pair(cg, b, i);
  for (int i = 0; i < 4; i++) in[6 + i] = LLVMBuildExtractElement(cg->b, c, cg_i32(cg, i), "");
  LLVMValueRef d = cg_call_intrinsic(cg, "llvm.nvvm.mma.m16n8k16.row.col.f32.f32", NULL, 0, in, 10);
  if (!d) return NULL;
  LLVMValueRef out = LLVMGetUndef(LLVMVectorType(cg->t_f32, 4));
  for (int i = 0; i < 4; i++)
    out = LLVMBuildInsertElement(cg->b, out, LLVMBuildExtractValue(cg->b, d, (unsigned)i, ""), cg_i32(cg, i), "");
  return out;
}

LLVMValueRef cg_nvptx_mma(cg_t *cg, const tir_expr_t *call) {
  switch (tir_ptx_op(call)) {
  case TIR_PTX_LDMATRIX_X4: return ldmatrix(cg, call, 4);
  case TIR_PTX_LDMATRIX_X2: return ldmatrix(cg, call, 2);
  case TIR_PTX_MMA_M16N8K16: return mma(cg, call);
  default: mlc_error_set(MLC_EINTERNAL, "codegen: not an mma.sync call"); return NULL;
  }
}
