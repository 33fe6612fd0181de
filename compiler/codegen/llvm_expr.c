/*
 * llvm_expr.c - TIR expressions as LLVM values.
 *
 * Integers wrap around (no nsw/nuw flags: the interpreter defines overflow).
 * Truncating division is sdiv/srem (udiv/urem for unsigned) with a guard
 * for a divisor of -1, so INT_MIN / -1 wraps as the interpreter says
 * instead of trapping; floordiv/floormod fix the sign of the truncated
 * result (LLVM folds the guards away for constant divisors). Float min/max
 * are select(a < b, a, b) as TVM emits them (a NaN in a gives b); float
 * floordiv/floormod are computed in double as the interpreter does.
 * Comparisons are ordered except !=, which is true for NaN.
 *
 * Vectors: RAMP is base + stride * <0, 1, ...>, BROADCAST a splat. Buffer
 * accesses flatten their indices (lowered code is already 1-D) and become a
 * scalar access, one contiguous vector access (index RAMP with stride 1,
 * aligned as far as the buffer's alignment and the index's provable
 * multiple allow), a scalar access splatted or stored from the last lane
 * (all lanes at one address), or a masked gather/scatter.
 */
#include "compiler/codegen/llvm_gen.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* Arithmetic                                                                */
/* ------------------------------------------------------------------------ */

static LLVMValueRef int_cmp(cg_t *cg, tir_expr_kind_t k, bool sign, LLVMValueRef a, LLVMValueRef b) {
  LLVMIntPredicate p;
  switch (k) {
  case TIR_EQ: p = LLVMIntEQ; break;
  case TIR_NE: p = LLVMIntNE; break;
  case TIR_LT: p = sign ? LLVMIntSLT : LLVMIntULT; break;
  case TIR_LE: p = sign ? LLVMIntSLE : LLVMIntULE; break;
  case TIR_GT: p = sign ? LLVMIntSGT : LLVMIntUGT; break;
  default: p = sign ? LLVMIntSGE : LLVMIntUGE; break;
  }
  return LLVMBuildICmp(cg->b, p, a, b, "");
}

static LLVMValueRef float_cmp(cg_t *cg, tir_expr_kind_t k, LLVMValueRef a, LLVMValueRef b) {
  LLVMRealPredicate p;
  switch (k) {
  case TIR_EQ: p = LLVMRealOEQ; break;
  case TIR_NE: p = LLVMRealUNE; break;
  case TIR_LT: p = LLVMRealOLT; break;
  case TIR_LE: p = LLVMRealOLE; break;
  case TIR_GT: p = LLVMRealOGT; break;
  default: p = LLVMRealOGE; break;
  }
  return LLVMBuildFCmp(cg->b, p, a, b, "");
}

/* Signed truncating division and remainder, with b == -1 giving -a and 0
 * (x86 idiv traps on INT_MIN / -1). */
static void sdivrem(cg_t *cg, LLVMValueRef a, LLVMValueRef b, LLVMValueRef *q, LLVMValueRef *r) {
  LLVMBuilderRef B = cg->b;
  LLVMTypeRef t = LLVMTypeOf(b);
  int lanes = lanes_of(b);
  LLVMValueRef one = cg_splat(cg, LLVMConstInt(lanes > 1 ? LLVMGetElementType(t) : t, 1, 0), lanes);
  LLVMValueRef is_m1 = LLVMBuildICmp(B, LLVMIntEQ, b, LLVMConstAllOnes(t), "");
  LLVMValueRef safe = LLVMBuildSelect(B, is_m1, one, b, "");
  *q = LLVMBuildSelect(B, is_m1, LLVMBuildNeg(B, a, ""), LLVMBuildSDiv(B, a, safe, ""), "");
  *r = LLVMBuildSRem(B, a, safe, "");
}

static LLVMValueRef int_divmod(cg_t *cg, tir_expr_kind_t k, bool sign, LLVMValueRef a, LLVMValueRef b) {
  LLVMBuilderRef B = cg->b;
  bool div = k == TIR_DIV || k == TIR_FLOOR_DIV;
  if (!sign) return div ? LLVMBuildUDiv(B, a, b, "") : LLVMBuildURem(B, a, b, "");
  LLVMValueRef q, r;
  sdivrem(cg, a, b, &q, &r);
  if (k == TIR_DIV) return q;
  if (k == TIR_MOD) return r;
  /* Floor: when the remainder is nonzero and its sign differs from b's. */
  LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(a));
  LLVMValueRef nonzero = LLVMBuildICmp(B, LLVMIntNE, r, zero, "");
  LLVMValueRef signs = LLVMBuildICmp(B, LLVMIntSLT, LLVMBuildXor(B, r, b, ""), zero, "");
  LLVMValueRef adjust = LLVMBuildAnd(B, nonzero, signs, "");
  if (div) return LLVMBuildAdd(B, q, LLVMBuildSExt(B, adjust, LLVMTypeOf(q), ""), "");
  return LLVMBuildAdd(B, r, LLVMBuildSelect(B, adjust, b, zero, ""), "");
}

/* Signed arithmetic inside a buffer index is nsw: an index that overflows
 * is out of bounds anyway, and nsw lets LLVM widen i32 indices once and
 * fold constant offsets into addressing modes. Elsewhere integers wrap. */
static LLVMValueRef int_arith(cg_t *cg, tir_expr_kind_t k, bool sign, LLVMValueRef a, LLVMValueRef b) {
  bool nsw = sign && cg->index_depth > 0;
  switch (k) {
  case TIR_ADD: return nsw ? LLVMBuildNSWAdd(cg->b, a, b, "") : LLVMBuildAdd(cg->b, a, b, "");
  case TIR_SUB: return nsw ? LLVMBuildNSWSub(cg->b, a, b, "") : LLVMBuildSub(cg->b, a, b, "");
  case TIR_MUL: return nsw ? LLVMBuildNSWMul(cg->b, a, b, "") : LLVMBuildMul(cg->b, a, b, "");
  default: return int_divmod(cg, k, sign, a, b);
  }
}

static LLVMValueRef floor_of(cg_t *cg, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  return cg_call_intrinsic(cg, "llvm.floor", &t, 1, &x, 1);
}

/* floordiv / floormod of floats (a, b in the computing type), in double as
 * the interpreter computes them: floor(a / b), a - floor(a / b) * b, then
 * one conversion to t. Returns a value of dtype t. */
static LLVMValueRef float_floor_op(cg_t *cg, tir_expr_kind_t k, LLVMValueRef a, LLVMValueRef b, tir_dtype_t t) {
  int lanes = lanes_of(a);
  LLVMTypeRef dt = lanes > 1 ? LLVMVectorType(cg->t_f64, (unsigned)lanes) : cg->t_f64;
  LLVMValueRef da = LLVMBuildFPExt(cg->b, a, dt, ""), db = LLVMBuildFPExt(cg->b, b, dt, "");
  LLVMValueRef q = floor_of(cg, LLVMBuildFDiv(cg->b, da, db, ""));
  if (!q) return NULL;
  LLVMValueRef r = k == TIR_FLOOR_DIV ? q : LLVMBuildFSub(cg->b, da, LLVMBuildFMul(cg->b, q, db, ""), "");
  return cg_cast(cg, r, tir_dtype(TIR_CODE_FLOAT, 64, lanes), t);
}

static LLVMValueRef float_arith(cg_t *cg, tir_expr_kind_t k, LLVMValueRef a, LLVMValueRef b) {
  switch (k) {
  case TIR_ADD: return LLVMBuildFAdd(cg->b, a, b, "");
  case TIR_SUB: return LLVMBuildFSub(cg->b, a, b, "");
  case TIR_MUL: return LLVMBuildFMul(cg->b, a, b, "");
  case TIR_DIV: return LLVMBuildFDiv(cg->b, a, b, "");
  default: return LLVMBuildFRem(cg->b, a, b, ""); /* MOD: fmod, exact */
  }
}

/* MIN/MAX keep the original operand values (no re-rounding of bfloat16). */
static LLVMValueRef min_max(cg_t *cg, tir_expr_kind_t k, tir_dtype_t t, LLVMValueRef a, LLVMValueRef b) {
  tir_expr_kind_t cmp = k == TIR_MIN ? TIR_LT : TIR_GT;
  LLVMValueRef c;
  if (tir_dtype_is_float(t))
    c = float_cmp(cg, cmp, cg_to_compute(cg, a, t), cg_to_compute(cg, b, t));
  else
    c = int_cmp(cg, cmp, t.code == TIR_CODE_INT, a, b);
  return LLVMBuildSelect(cg->b, c, a, b, "");
}

static bool is_cmp(tir_expr_kind_t k) {
  return k == TIR_EQ || k == TIR_NE || k == TIR_LT || k == TIR_LE || k == TIR_GT || k == TIR_GE;
}

static LLVMValueRef binary(cg_t *cg, const tir_expr_t *e) {
  tir_expr_kind_t k = e->kind;
  tir_dtype_t t = e->u.bin.a->dtype;
  LLVMValueRef a = cg_expr(cg, e->u.bin.a), b = a ? cg_expr(cg, e->u.bin.b) : NULL;
  if (!b) return NULL;
  /* Operands of one operation have equal lanes in valid TIR; splat a
   * scalar operand anyway rather than build ill-typed IR. */
  int la = lanes_of(a), lb = lanes_of(b);
  if (la != lb) {
    if (la == 1) a = cg_splat(cg, a, lb), t.lanes = (uint16_t)lb;
    else if (lb == 1) b = cg_splat(cg, b, la);
    else return fail_null(MLC_EINVAL, "codegen: operands of %s have different lanes", tir_expr_kind_name(k));
  }
  if (k == TIR_AND) return LLVMBuildAnd(cg->b, a, b, "");
  if (k == TIR_OR) return LLVMBuildOr(cg->b, a, b, "");
  if (k == TIR_MIN || k == TIR_MAX) return min_max(cg, k, t, a, b);
  if (tir_dtype_is_float(t)) {
    LLVMValueRef fa = cg_to_compute(cg, a, t), fb = cg_to_compute(cg, b, t);
    if (is_cmp(k)) return float_cmp(cg, k, fa, fb);
    if (k == TIR_FLOOR_DIV || k == TIR_FLOOR_MOD) return float_floor_op(cg, k, fa, fb, t);
    return cg_from_compute(cg, float_arith(cg, k, fa, fb), t);
  }
  if (is_cmp(k)) return int_cmp(cg, k, t.code == TIR_CODE_INT, a, b);
  if (tir_dtype_is_handle(t)) return fail_null(MLC_EUNSUPPORTED, "codegen: %s of handles", tir_expr_kind_name(k));
  return int_arith(cg, k, t.code == TIR_CODE_INT, a, b);
}

/* ------------------------------------------------------------------------ */
/* Vectors, leaves, dispatch                                                 */
/* ------------------------------------------------------------------------ */

static LLVMValueRef ramp(cg_t *cg, const tir_expr_t *e) {
  int lanes = e->u.ramp.lanes;
  LLVMValueRef base = cg_expr(cg, e->u.ramp.base);
  LLVMValueRef stride = base ? cg_expr(cg, e->u.ramp.stride) : NULL;
  LLVMValueRef iota = stride ? cg_iota(cg, e->u.ramp.base->dtype, lanes) : NULL;
  if (!iota) return NULL;
  LLVMValueRef vb = cg_splat(cg, base, lanes), vs = cg_splat(cg, stride, lanes);
  if (tir_dtype_is_float(e->u.ramp.base->dtype))
    return LLVMBuildFAdd(cg->b, vb, LLVMBuildFMul(cg->b, vs, iota, ""), "");
  return LLVMBuildAdd(cg->b, vb, LLVMBuildMul(cg->b, vs, iota, ""), "");
}

static LLVMValueRef var_value(cg_t *cg, const tir_expr_t *e) {
  const cg_binding_t *bnd = cg_lookup(cg, e);
  if (!bnd) return fail_null(MLC_EINVAL, "codegen: variable %s is not defined", e->u.var.name);
  return bnd->value;
}

static LLVMValueRef select_expr(cg_t *cg, const tir_expr_t *e) {
  LLVMValueRef c = cg_expr(cg, e->u.select.cond);
  LLVMValueRef t = c ? cg_expr(cg, e->u.select.t) : NULL;
  LLVMValueRef f = t ? cg_expr(cg, e->u.select.f) : NULL;
  if (!f) return NULL;
  int lanes = e->dtype.lanes;
  if (lanes_of(t) != lanes) t = cg_splat(cg, t, lanes);
  if (lanes_of(f) != lanes) f = cg_splat(cg, f, lanes);
  return LLVMBuildSelect(cg->b, c, t, f, "");
}

LLVMValueRef cg_expr(cg_t *cg, const tir_expr_t *e) {
  LLVMValueRef v;
  switch (e->kind) {
  case TIR_INT_IMM: return cg_const_int(cg, e->dtype, e->u.int_value);
  case TIR_FLOAT_IMM: return cg_const_float(cg, e->dtype, e->u.float_value);
  case TIR_STRING_IMM: return cg_cstr(cg, e->u.str_value);
  case TIR_VAR: return var_value(cg, e);
  case TIR_NOT:
    v = cg_expr(cg, e->u.un.a);
    return v ? LLVMBuildNot(cg->b, v, "") : NULL;
  case TIR_CAST:
    v = cg_expr(cg, e->u.un.a);
    return v ? cg_cast(cg, v, e->u.un.a->dtype, e->dtype) : NULL;
  case TIR_SELECT: return select_expr(cg, e);
  case TIR_BUFFER_LOAD: return cg_buffer_load(cg, e);
  case TIR_RAMP: return ramp(cg, e);
  case TIR_BROADCAST:
    v = cg_expr(cg, e->u.broadcast.value);
    return v ? cg_splat(cg, v, e->u.broadcast.lanes) : NULL;
  case TIR_CALL: return cg_call_expr(cg, e);
  default:
    if (tir_expr_kind_shape(e->kind) == TIR_SHAPE_BINARY) return binary(cg, e);
    return fail_null(MLC_EUNSUPPORTED, "codegen: %s expressions are not supported",
                     tir_expr_kind_name(e->kind));
  }
}

/* ------------------------------------------------------------------------ */
/* Buffer accesses                                                           */
/* ------------------------------------------------------------------------ */

/* Alignment: an index is `coeff * k + rem` for some integer k. */
typedef struct { int64_t coeff, rem; } modset_t;

static int64_t gcd64(int64_t a, int64_t b) {
  a = a < 0 ? -a : a;
  b = b < 0 ? -b : b;
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static modset_t modset(const tir_expr_t *e, int depth) {
  modset_t any = {1, 0};
  int64_t c;
  if (tir_as_int(e, &c)) return (modset_t){0, c};
  if (depth > 32 || !tir_dtype_is_integer(e->dtype)) return any;
  switch (e->kind) {
  case TIR_CAST: return modset(e->u.un.a, depth + 1);
  case TIR_ADD:
  case TIR_SUB: {
    modset_t a = modset(e->u.bin.a, depth + 1), b = modset(e->u.bin.b, depth + 1);
    int64_t r;
    if ((e->kind == TIR_ADD ? __builtin_add_overflow(a.rem, b.rem, &r) : __builtin_sub_overflow(a.rem, b.rem, &r)))
      return any;
    return (modset_t){gcd64(a.coeff, b.coeff), r};
  }
  case TIR_MUL: {
    modset_t a = modset(e->u.bin.a, depth + 1), b = modset(e->u.bin.b, depth + 1);
    int64_t c1, c2, c3, r;
    if (__builtin_mul_overflow(a.coeff, b.coeff, &c1) || __builtin_mul_overflow(a.coeff, b.rem, &c2) ||
        __builtin_mul_overflow(b.coeff, a.rem, &c3) || __builtin_mul_overflow(a.rem, b.rem, &r))
      return any;
    return (modset_t){gcd64(gcd64(c1, c2), c3), r};
  }
  default: return any;
  }
}

/* The alignment in bytes of element `index` (scalar) of a buffer whose base
 * is aligned to base_align. */
static int access_align(int base_align, const tir_expr_t *index, int elem_bytes) {
  modset_t m = modset(index, 0);
  int64_t g = gcd64(m.coeff, m.rem), bytes;
  if (g == 0 || __builtin_mul_overflow(g, (int64_t)elem_bytes, &bytes)) return base_align;
  int64_t low = bytes & -bytes;
  return low < base_align ? (int)low : base_align;
}

typedef enum { ACC_SCALAR, ACC_CONTIGUOUS, ACC_SPLAT, ACC_GATHER } acc_kind_t;

typedef struct {
  acc_kind_t kind;
  int lanes;              /* index lanes */
  LLVMTypeRef elem;       /* memory type of one element */
  LLVMValueRef ptr;       /* element pointer (SCALAR, CONTIGUOUS, SPLAT) */
  LLVMValueRef ptrs;      /* vector of element pointers (GATHER) */
  int align;              /* bytes, for ptr */
} access_t;

static tir_expr_t *mul_folded(cg_t *cg, tir_expr_t *a, tir_expr_t *b) {
  int64_t x, y, r;
  if (tir_as_int(a, &x) && tir_as_int(b, &y) && !__builtin_mul_overflow(x, y, &r)) return tir_int(cg->arena, a->dtype, r);
  if (tir_is_const_int(b, 1)) return a;
  if (tir_is_const_int(a, 1)) return b;
  return tir_binary(cg->arena, TIR_MUL, a, b);
}

static tir_expr_t *add_folded(cg_t *cg, tir_expr_t *a, tir_expr_t *b) {
  if (!a || tir_is_const_int(a, 0)) return b;
  if (tir_is_const_int(b, 0)) return a;
  int64_t x, y, r;
  if (tir_as_int(a, &x) && tir_as_int(b, &y) && !__builtin_add_overflow(x, y, &r)) return tir_int(cg->arena, a->dtype, r);
  return tir_binary(cg->arena, TIR_ADD, a, b);
}

static tir_expr_t *as_dtype(cg_t *cg, tir_expr_t *e, tir_dtype_t t) {
  if (e->dtype.bits == t.bits && e->dtype.code == t.code) return e;
  int64_t v;
  if (tir_as_int(e, &v)) return tir_int(cg->arena, tir_dtype_lanes(t, e->dtype.lanes), v);
  return tir_cast(cg->arena, tir_dtype_lanes(t, e->dtype.lanes), e);
}

/* The flat element index of b[indices]: elem_offset + sum index_k *
 * stride_k (compact row-major strides when b has none), kept a RAMP when
 * one index is a RAMP and the others scalars (so contiguity survives). */
static tir_expr_t *flat_index(cg_t *cg, const tir_buffer_t *b, tir_expr_t *const *idx, int n) {
  if (n == 1 && (!b->elem_offset || tir_is_const_int(b->elem_offset, 0)) &&
      (!b->strides || tir_is_const_int(b->strides[0], 1)))
    return idx[0];
  tir_dtype_t it = n > 0 ? tir_dtype_scalar(idx[n - 1]->dtype) : tir_dt_INT32();
  for (int k = 0; k < n; k++)
    if (idx[k]->dtype.bits > it.bits) it = tir_dtype_scalar(idx[k]->dtype);
  tir_expr_t *stride = tir_int(cg->arena, it, 1), *base = NULL, *lane_stride = NULL;
  tir_expr_t *vec = NULL; /* sum of vector terms that are not a lone ramp */
  int lanes = 1;
  for (int k = n - 1; k >= 0; k--) {
    tir_expr_t *s = b->strides ? as_dtype(cg, b->strides[k], it) : stride;
    const tir_expr_t *x = idx[k];
    if (x->kind == TIR_RAMP && !lane_stride && !vec) {
      base = add_folded(cg, base, mul_folded(cg, as_dtype(cg, x->u.ramp.base, it), s));
      lane_stride = mul_folded(cg, as_dtype(cg, x->u.ramp.stride, it), s);
      lanes = x->u.ramp.lanes;
    } else if (x->dtype.lanes > 1) {
      lanes = x->dtype.lanes;
      tir_expr_t *term = tir_binary(cg->arena, TIR_MUL, as_dtype(cg, (tir_expr_t *)x, it),
                                    tir_broadcast(cg->arena, s, lanes));
      vec = vec ? tir_binary(cg->arena, TIR_ADD, vec, term) : term;
    } else {
      base = add_folded(cg, base, mul_folded(cg, as_dtype(cg, (tir_expr_t *)x, it), s));
    }
    if (!b->strides && k > 0) stride = mul_folded(cg, stride, as_dtype(cg, b->shape[k], it));
  }
  if (b->elem_offset) base = add_folded(cg, base, as_dtype(cg, b->elem_offset, it));
  if (!base) base = tir_int(cg->arena, it, 0);
  if (lane_stride && vec) { /* a ramp plus other vector terms: all vector */
    vec = tir_binary(cg->arena, TIR_ADD, vec, tir_ramp(cg->arena, tir_int(cg->arena, it, 0), lane_stride, lanes));
    lane_stride = NULL;
  }
  if (vec) return tir_binary(cg->arena, TIR_ADD, vec, tir_broadcast(cg->arena, base, lanes));
  if (lane_stride) return tir_ramp(cg->arena, base, lane_stride, lanes);
  return base;
}

static LLVMValueRef elem_ptr(cg_t *cg, LLVMValueRef base, LLVMTypeRef elem, LLVMValueRef index) {
  LLVMValueRef p = LLVMBuildBitCast(cg->b, base, LLVMPointerType(elem, 0), "");
  return LLVMBuildInBoundsGEP2(cg->b, elem, p, &index, 1, "");
}

static LLVMValueRef index_expr(cg_t *cg, const tir_expr_t *index) {
  cg->index_depth++;
  LLVMValueRef i = cg_expr(cg, index);
  cg->index_depth--;
  return i;
}

static int scalar_address(cg_t *cg, access_t *acc, LLVMValueRef base, int base_align,
                          const tir_expr_t *index, int elem_bytes) {
  LLVMValueRef i = index_expr(cg, index);
  if (!i) return mlc_error_last_code();
  acc->ptr = elem_ptr(cg, base, acc->elem, cg_index64(cg, i, index->dtype));
  acc->align = access_align(base_align, index, elem_bytes);
  return MLC_OK;
}

static int buffer_access(cg_t *cg, access_t *acc, tir_buffer_t *b, tir_expr_t *const *indices, int n) {
  memset(acc, 0, sizeof(*acc));
  if (!(acc->elem = cg_mem_type(cg, b->dtype))) return mlc_error_last_code();
  const cg_binding_t *bnd = cg_lookup(cg, b->data);
  if (!bnd)
    return mlc_error_set(MLC_EINVAL, "codegen: buffer %s: its data variable %s is not defined", b->name,
                         b->data->u.var.name);
  /* lower-cross-thread-reduction: a thread only touches its own slot, kept
   * in a one-element register (gpu_device.c) */
  tir_expr_t *own = NULL;
  if (strcmp(b->scope, MLC_CROSS_THREAD_SCOPE) == 0) {
    own = tir_i32(cg->arena, 0);
    indices = &own;
    n = 1;
  }
  const tir_expr_t *idx = flat_index(cg, b, indices, n);
  if (!idx || mlc_arena_failed(cg->arena)) return mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
  if (cg->hooks && cg->hooks->buffer_index && !(idx = cg->hooks->buffer_index(cg, b, idx))) return mlc_error_last_code();
  int eb = cg_elem_bytes(b->dtype) * b->dtype.lanes;
  int base_align = bnd->align > 0 ? bnd->align : cg_elem_bytes(b->dtype);
  acc->lanes = idx->dtype.lanes;
  if (acc->lanes == 1) {
    acc->kind = ACC_SCALAR;
    return scalar_address(cg, acc, bnd->value, base_align, idx, eb);
  }
  if (b->dtype.lanes > 1)
    return mlc_error_set(MLC_EUNSUPPORTED, "codegen: buffer %s of vector elements with a vector index", b->name);
  if (idx->kind == TIR_RAMP && (tir_is_const_int(idx->u.ramp.stride, 1) || tir_is_const_int(idx->u.ramp.stride, 0))) {
    acc->kind = tir_is_const_int(idx->u.ramp.stride, 1) ? ACC_CONTIGUOUS : ACC_SPLAT;
    return scalar_address(cg, acc, bnd->value, base_align, idx->u.ramp.base, eb);
  }
  if (idx->kind == TIR_BROADCAST) {
    acc->kind = ACC_SPLAT;
    return scalar_address(cg, acc, bnd->value, base_align, idx->u.broadcast.value, eb);
  }
  acc->kind = ACC_GATHER;
  LLVMValueRef vi = index_expr(cg, idx);
  if (!vi) return mlc_error_last_code();
  acc->ptrs = elem_ptr(cg, bnd->value, acc->elem, cg_index64(cg, vi, idx->dtype));
  acc->align = cg_elem_bytes(b->dtype);
  return MLC_OK;
}

static LLVMTypeRef vec_type(LLVMTypeRef elem, int lanes) { return LLVMVectorType(elem, (unsigned)lanes); }

static LLVMValueRef all_true(cg_t *cg, int lanes) {
  return cg_splat(cg, LLVMConstInt(cg->t_i1, 1, 0), lanes);
}

static LLVMValueRef load_access(cg_t *cg, const access_t *acc) {
  LLVMValueRef v;
  switch (acc->kind) {
  case ACC_SCALAR:
  case ACC_SPLAT:
    v = LLVMBuildLoad2(cg->b, acc->elem, acc->ptr, "");
    LLVMSetAlignment(v, (unsigned)acc->align);
    return acc->kind == ACC_SPLAT ? cg_splat(cg, v, acc->lanes) : v;
  case ACC_CONTIGUOUS: {
    LLVMTypeRef vt = vec_type(acc->elem, acc->lanes);
    LLVMValueRef p = LLVMBuildBitCast(cg->b, acc->ptr, LLVMPointerType(vt, 0), "");
    v = LLVMBuildLoad2(cg->b, vt, p, "");
    LLVMSetAlignment(v, (unsigned)acc->align);
    return v;
  }
  default: {
    LLVMTypeRef tys[2] = {vec_type(acc->elem, acc->lanes), LLVMTypeOf(acc->ptrs)};
    LLVMValueRef args[4] = {acc->ptrs, cg_i32(cg, acc->align), all_true(cg, acc->lanes),
                            LLVMGetUndef(tys[0])};
    return cg_call_intrinsic(cg, "llvm.masked.gather", tys, 2, args, 4);
  }
  }
}

LLVMValueRef cg_buffer_load(cg_t *cg, const tir_expr_t *e) {
  tir_buffer_t *b = e->u.load.buffer;
  access_t acc;
  if (buffer_access(cg, &acc, b, e->u.load.indices, e->u.load.nindices) != MLC_OK) return NULL;
  LLVMValueRef v = load_access(cg, &acc);
  if (v && tir_dtype_is_bool(b->dtype))
    v = LLVMBuildICmp(cg->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
  return v;
}

static int store_access(cg_t *cg, const access_t *acc, LLVMValueRef v) {
  LLVMValueRef st, p;
  switch (acc->kind) {
  case ACC_SCALAR: p = acc->ptr; break;
  case ACC_SPLAT: /* lanes stored in order to one address: the last wins */
    v = LLVMBuildExtractElement(cg->b, v, cg_i32(cg, acc->lanes - 1), "");
    p = acc->ptr;
    break;
  case ACC_CONTIGUOUS:
    p = LLVMBuildBitCast(cg->b, acc->ptr, LLVMPointerType(vec_type(acc->elem, acc->lanes), 0), "");
    break;
  default: {
    LLVMTypeRef tys[2] = {LLVMTypeOf(v), LLVMTypeOf(acc->ptrs)};
    LLVMValueRef args[4] = {v, acc->ptrs, cg_i32(cg, acc->align), all_true(cg, acc->lanes)};
    return cg_call_intrinsic(cg, "llvm.masked.scatter", tys, 2, args, 4) ? MLC_OK : mlc_error_last_code();
  }
  }
  st = LLVMBuildStore(cg->b, v, p);
  LLVMSetAlignment(st, (unsigned)acc->align);
  return MLC_OK;
}

int cg_buffer_store(cg_t *cg, const tir_stmt_t *s) {
  tir_buffer_t *b = s->u.store.buffer;
  LLVMValueRef v = cg_expr(cg, s->u.store.value);
  if (!v) return mlc_error_last_code();
  access_t acc;
  int rc = buffer_access(cg, &acc, b, s->u.store.indices, s->u.store.nindices);
  if (rc != MLC_OK) return rc;
  if (acc.lanes > 1 && lanes_of(v) == 1) v = cg_splat(cg, v, acc.lanes);
  if (lanes_of(v) != acc.lanes * b->dtype.lanes)
    return mlc_error_set(MLC_EINVAL, "codegen: store to %s: a value of %d lanes at %d addresses", b->name,
                         lanes_of(v), acc.lanes);
  if (tir_dtype_is_bool(b->dtype)) v = LLVMBuildZExt(cg->b, v, lanes_of(v) > 1 ? vec_type(cg->t_i8, lanes_of(v)) : cg->t_i8, "");
  return store_access(cg, &acc, v);
}
