/*
 * llvm_types.c - TIR dtypes as LLVM types, constants, and the Cast rules.
 *
 * A value keeps its dtype's natural LLVM type: intN, half/float/double, i1
 * for bool (one byte, i8, in memory) and i8* for handles. bfloat16 has no
 * arithmetic on x86 and LLVM 14's bfloat type cannot be converted, so a
 * bfloat16 value is its i16 bit pattern: operations widen it to float32
 * (exact: a shift), compute, and round back to nearest even. That single
 * float32 rounding step is exact for + - * / sqrt (float32 has more than
 * 2 * 8 + 2 bits). Conversions from float64 to bfloat16 and float16 go
 * through a float rounded to odd, so the final rounding is correct as the
 * interpreter's is.
 */
#include "compiler/codegen/llvm_gen.h"

#include <string.h>

static LLVMTypeRef scalar_type(cg_t *cg, tir_dtype_t t) {
  switch (t.code) {
  case TIR_CODE_INT:
  case TIR_CODE_UINT:
    if (t.bits == 1) return t.code == TIR_CODE_UINT ? cg->t_i1 : NULL;
    if (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64)
      return LLVMIntTypeInContext(cg->ctx, t.bits);
    return NULL;
  case TIR_CODE_FLOAT:
    return t.bits == 16 ? cg->t_f16 : t.bits == 32 ? cg->t_f32 : t.bits == 64 ? cg->t_f64 : NULL;
  case TIR_CODE_BFLOAT: return t.bits == 16 ? cg->t_i16 : NULL;
  case TIR_CODE_HANDLE:
    if (t.bits == 64) return cg->t_ptr;
    return t.bits == 0 && t.lanes == 1 ? cg->t_void : NULL;
  default: return NULL;
  }
}

LLVMTypeRef cg_type(cg_t *cg, tir_dtype_t t) {
  LLVMTypeRef s = scalar_type(cg, t);
  if (!s || t.lanes == 0) {
    char buf[24];
    mlc_error_set(MLC_EUNSUPPORTED, "codegen: dtype %s is not supported", tir_dtype_str(t, buf));
    return NULL;
  }
  return t.lanes > 1 ? LLVMVectorType(s, t.lanes) : s;
}

LLVMTypeRef cg_mem_type(cg_t *cg, tir_dtype_t t) {
  if (tir_dtype_is_bool(t)) return t.lanes > 1 ? LLVMVectorType(cg->t_i8, t.lanes) : cg->t_i8;
  return cg_type(cg, t);
}

int cg_elem_bytes(tir_dtype_t t) { return t.bits <= 8 ? 1 : t.bits / 8; }

LLVMValueRef cg_i32(cg_t *cg, int64_t v) { return LLVMConstInt(cg->t_i32, (unsigned long long)v, 1); }
LLVMValueRef cg_i64(cg_t *cg, int64_t v) { return LLVMConstInt(cg->t_i64, (unsigned long long)v, 1); }

LLVMValueRef cg_splat(cg_t *cg, LLVMValueRef v, int lanes) {
  if (lanes <= 1) return v;
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(v), (unsigned)lanes);
  LLVMValueRef undef = LLVMGetUndef(vt);
  LLVMValueRef one = LLVMBuildInsertElement(cg->b, undef, v, cg_i32(cg, 0), "");
  LLVMValueRef mask = LLVMConstNull(LLVMVectorType(cg->t_i32, (unsigned)lanes));
  return LLVMBuildShuffleVector(cg->b, one, undef, mask, "");
}

LLVMValueRef cg_const_int(cg_t *cg, tir_dtype_t t, int64_t v) {
  LLVMTypeRef s = cg_type(cg, tir_dtype_scalar(t));
  if (!s) return NULL;
  if (LLVMGetTypeKind(s) != LLVMIntegerTypeKind) return cg_const_float(cg, t, (double)v);
  return cg_splat(cg, LLVMConstInt(s, (unsigned long long)v, 1), t.lanes);
}

LLVMValueRef cg_const_float(cg_t *cg, tir_dtype_t t, double v) {
  LLVMTypeRef s = cg_type(cg, tir_dtype_scalar(t));
  if (!s) return NULL;
  LLVMValueRef c;
  if (t.code == TIR_CODE_BFLOAT)
    c = LLVMConstInt(cg->t_i16, tir_f32_to_bf16((float)v), 0);
  else if (LLVMGetTypeKind(s) == LLVMIntegerTypeKind)
    c = LLVMConstInt(s, (unsigned long long)(int64_t)v, 1);
  else
    c = LLVMConstReal(s, v); /* v is already rounded to t: exact */
  return cg_splat(cg, c, t.lanes);
}

LLVMValueRef cg_iota(cg_t *cg, tir_dtype_t t, int lanes) {
  LLVMTypeRef s = cg_type(cg, tir_dtype_scalar(t));
  if (!s) return NULL;
  LLVMValueRef elems[1024];
  if (lanes > 1024) {
    mlc_error_set(MLC_EUNSUPPORTED, "codegen: vectors of %d lanes are not supported", lanes);
    return NULL;
  }
  for (int k = 0; k < lanes; k++)
    elems[k] = LLVMGetTypeKind(s) == LLVMIntegerTypeKind ? LLVMConstInt(s, (unsigned long long)k, 0)
                                                         : LLVMConstReal(s, k);
  return LLVMConstVector(elems, (unsigned)lanes);
}

static LLVMTypeRef vec_of(LLVMTypeRef s, int lanes) {
  return lanes > 1 ? LLVMVectorType(s, (unsigned)lanes) : s;
}

static LLVMValueRef splat_i32(cg_t *cg, int64_t v, int lanes) {
  return cg_splat(cg, cg_i32(cg, v), lanes);
}

/* ------------------------------------------------------------------------ */
/* bfloat16                                                                  */
/* ------------------------------------------------------------------------ */

LLVMValueRef cg_bf16_to_f32(cg_t *cg, LLVMValueRef bits, int lanes) {
  LLVMValueRef w = LLVMBuildZExt(cg->b, bits, vec_of(cg->t_i32, lanes), "");
  w = LLVMBuildShl(cg->b, w, splat_i32(cg, 16, lanes), "");
  return LLVMBuildBitCast(cg->b, w, vec_of(cg->t_f32, lanes), "");
}

/* Round to nearest even as tir_f32_to_bf16: add 0x7fff plus the kept lsb,
 * keep the top half; a NaN keeps its top half with the quiet bit set. */
LLVMValueRef cg_f32_to_bf16(cg_t *cg, LLVMValueRef f, int lanes) {
  LLVMBuilderRef b = cg->b;
  LLVMValueRef x = LLVMBuildBitCast(b, f, vec_of(cg->t_i32, lanes), "");
  LLVMValueRef hi = LLVMBuildLShr(b, x, splat_i32(cg, 16, lanes), "");
  LLVMValueRef lsb = LLVMBuildAnd(b, hi, splat_i32(cg, 1, lanes), "");
  LLVMValueRef bias = LLVMBuildAdd(b, lsb, splat_i32(cg, 0x7fff, lanes), "");
  LLVMValueRef rounded = LLVMBuildLShr(b, LLVMBuildAdd(b, x, bias, ""), splat_i32(cg, 16, lanes), "");
  LLVMValueRef quiet = LLVMBuildOr(b, hi, splat_i32(cg, 0x40, lanes), "");
  LLVMValueRef nan = LLVMBuildFCmp(b, LLVMRealUNO, f, f, "");
  LLVMValueRef r = LLVMBuildSelect(b, nan, quiet, rounded, "");
  return LLVMBuildTrunc(b, r, vec_of(cg->t_i16, lanes), "");
}

/* d (double) as a float rounded to odd: truncated toward zero with the last
 * bit set when inexact. NaN and exact values pass through. */
static LLVMValueRef f64_to_f32_odd(cg_t *cg, LLVMValueRef d, int lanes) {
  LLVMBuilderRef b = cg->b;
  LLVMTypeRef i32t = vec_of(cg->t_i32, lanes);
  LLVMValueRef f = LLVMBuildFPTrunc(b, d, vec_of(cg->t_f32, lanes), "");
  LLVMValueRef back = LLVMBuildFPExt(b, f, vec_of(cg->t_f64, lanes), "");
  LLVMValueRef inexact = LLVMBuildFCmp(b, LLVMRealONE, back, d, "");
  LLVMTypeRef ft = vec_of(cg->t_f64, lanes);
  LLVMValueRef abs_back = cg_call_intrinsic(cg, "llvm.fabs", &ft, 1, &back, 1);
  LLVMValueRef abs_d = cg_call_intrinsic(cg, "llvm.fabs", &ft, 1, &d, 1);
  if (!abs_back || !abs_d) return NULL;
  LLVMValueRef above = LLVMBuildAnd(b, inexact, LLVMBuildFCmp(b, LLVMRealOGT, abs_back, abs_d, ""), "");
  LLVMValueRef bits = LLVMBuildBitCast(b, f, i32t, "");
  LLVMValueRef down = LLVMBuildSub(b, bits, splat_i32(cg, 1, lanes), "");
  bits = LLVMBuildSelect(b, above, down, bits, "");
  bits = LLVMBuildOr(b, bits, LLVMBuildZExt(b, inexact, i32t, ""), "");
  return LLVMBuildBitCast(b, bits, vec_of(cg->t_f32, lanes), "");
}

LLVMValueRef cg_to_compute(cg_t *cg, LLVMValueRef v, tir_dtype_t t) {
  return t.code == TIR_CODE_BFLOAT ? cg_bf16_to_f32(cg, v, t.lanes) : v;
}

LLVMValueRef cg_from_compute(cg_t *cg, LLVMValueRef v, tir_dtype_t t) {
  return t.code == TIR_CODE_BFLOAT ? cg_f32_to_bf16(cg, v, t.lanes) : v;
}

/* ------------------------------------------------------------------------ */
/* Casts                                                                     */
/* ------------------------------------------------------------------------ */

LLVMValueRef cg_index64(cg_t *cg, LLVMValueRef v, tir_dtype_t t) {
  LLVMTypeRef i64t = vec_of(cg->t_i64, t.lanes);
  if (t.bits == 64) return v;
  if (t.code == TIR_CODE_INT) return LLVMBuildSExt(cg->b, v, i64t, "");
  return LLVMBuildZExt(cg->b, v, i64t, "");
}

/* A float (already in its computing type: bfloat16 as float) converted to
 * dtype `to`, a float dtype. */
static LLVMValueRef float_to_float(cg_t *cg, LLVMValueRef f, tir_dtype_t from, tir_dtype_t to) {
  int lanes = to.lanes;
  /* float64 -> 16 bits: through a float rounded to odd, which keeps the
   * final rounding correct and needs no __truncdfhf2 at run time. */
  if (to.bits == 16 && from.code == TIR_CODE_FLOAT && from.bits == 64 && !(f = f64_to_f32_odd(cg, f, lanes)))
    return NULL;
  if (to.code == TIR_CODE_BFLOAT) return cg_f32_to_bf16(cg, LLVMBuildFPCast(cg->b, f, vec_of(cg->t_f32, lanes), ""), lanes);
  LLVMTypeRef tt = cg_type(cg, to);
  return tt ? LLVMBuildFPCast(cg->b, f, tt, "") : NULL;
}

static LLVMValueRef int_to_float(cg_t *cg, LLVMValueRef v, tir_dtype_t from, tir_dtype_t to) {
  bool sign = from.code == TIR_CODE_INT;
  if (to.bits == 16) {
    /* Through double, exact for every integer up to 53 bits, then one
     * correct rounding (the interpreter converts through double too); no
     * integer -> half libcalls on CPUs without AVX512-FP16. */
    LLVMTypeRef dt = vec_of(cg->t_f64, to.lanes);
    LLVMValueRef d = sign ? LLVMBuildSIToFP(cg->b, v, dt, "") : LLVMBuildUIToFP(cg->b, v, dt, "");
    return float_to_float(cg, d, tir_dtype(TIR_CODE_FLOAT, 64, to.lanes), to);
  }
  LLVMTypeRef tt = cg_type(cg, to);
  if (!tt) return NULL;
  return sign ? LLVMBuildSIToFP(cg->b, v, tt, "") : LLVMBuildUIToFP(cg->b, v, tt, "");
}

static LLVMValueRef to_bool(cg_t *cg, LLVMValueRef v, tir_dtype_t from) {
  if (tir_dtype_is_bool(from)) return v;
  LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(v));
  if (tir_dtype_is_float(from)) {
    LLVMValueRef f = cg_to_compute(cg, v, from);
    return LLVMBuildFCmp(cg->b, LLVMRealUNE, f, LLVMConstNull(LLVMTypeOf(f)), "");
  }
  if (tir_dtype_is_handle(from)) return LLVMBuildIsNotNull(cg->b, v, "");
  return LLVMBuildICmp(cg->b, LLVMIntNE, v, zero, "");
}

LLVMValueRef cg_cast(cg_t *cg, LLVMValueRef v, tir_dtype_t from, tir_dtype_t to) {
  if (tir_dtype_eq(from, to)) return v;
  if (tir_dtype_is_bool(to)) return to_bool(cg, v, from);
  LLVMTypeRef tt = cg_type(cg, to);
  if (!tt) return NULL;
  bool from_int = tir_dtype_is_integer(from), to_int = tir_dtype_is_integer(to);
  if (tir_dtype_is_handle(from) && to_int) return LLVMBuildPtrToInt(cg->b, v, tt, "");
  if (from_int && tir_dtype_is_handle(to)) return LLVMBuildIntToPtr(cg->b, v, tt, "");
  if (from_int && to_int) {
    if (to.bits <= from.bits) return LLVMBuildTrunc(cg->b, v, tt, "");
    return from.code == TIR_CODE_INT ? LLVMBuildSExt(cg->b, v, tt, "") : LLVMBuildZExt(cg->b, v, tt, "");
  }
  if (from_int && tir_dtype_is_float(to)) return int_to_float(cg, v, from, to);
  if (tir_dtype_is_float(from) && to_int) {
    LLVMValueRef f = cg_to_compute(cg, v, from);
    return to.code == TIR_CODE_INT ? LLVMBuildFPToSI(cg->b, f, tt, "") : LLVMBuildFPToUI(cg->b, f, tt, "");
  }
  if (tir_dtype_is_float(from) && tir_dtype_is_float(to))
    return float_to_float(cg, cg_to_compute(cg, v, from), from, to);
  char a[24], b[24];
  mlc_error_set(MLC_EUNSUPPORTED, "codegen: cast from %s to %s is not supported",
                tir_dtype_str(from, a), tir_dtype_str(to, b));
  return NULL;
}
