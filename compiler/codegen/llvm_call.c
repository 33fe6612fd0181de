/*
 * llvm_call.c - TIR calls: math, if_then_else, reinterpret, and calls to
 * LLVM intrinsics and external C functions.
 *
 * Math on float16 and bfloat16 is computed in float32 and rounded once at
 * the end (closer to the interpreter, which computes in double, than a
 * chain of half-precision steps). On CPUs, float32 exp, exp2, log, log2 and
 * tanh are polynomials generated inline (llvm_vmath.c: LLVM 14 would call libm
 * once per vector lane); other functions LLVM has an intrinsic for use it
 * (vectors stay vectors; LLVM expands or calls libm); the others call libm
 * lane by lane. rsqrt is 1 / sqrt(x), sigmoid 1 / (1 + exp(-x)), round
 * is nearbyint (round half to even, TVM's round).
 *
 * call_llvm_intrin / call_llvm_pure_intrin name the intrinsic in their
 * first argument. A name with the overload suffix ("llvm.fma.v16f32") is
 * declared with the call's types (the verifier checks them); a bare
 * overloaded name ("llvm.fma") is overloaded on the return type (or the
 * first operand's when void); non-overloaded intrinsics must be called with
 * their exact parameter types (reinterpret operands first, as the tensor
 * intrinsics of docs/schedule/reduction_tensorize.md do).
 */
#include "compiler/codegen/llvm_gen.h"
#include "compiler/codegen/llvm_vmath.h"

#include <stdio.h>
#include <string.h>

/* Unary math.  op           LLVM intrinsic     libm float  libm double */
#define CG_MATH_OPS(X)                                             \
  X(EXP,       "llvm.exp",        NULL,      NULL)                \
  X(EXP2,      "llvm.exp2",       NULL,      NULL)                \
  X(EXP10,     NULL,              "exp10f",  "exp10")             \
  X(LOG,       "llvm.log",        NULL,      NULL)                \
  X(LOG2,      "llvm.log2",       NULL,      NULL)                \
  X(LOG10,     "llvm.log10",      NULL,      NULL)                \
  X(LOG1P,     NULL,              "log1pf",  "log1p")             \
  X(SQRT,      "llvm.sqrt",       NULL,      NULL)                \
  X(TANH,      NULL,              "tanhf",   "tanh")              \
  X(FABS,      "llvm.fabs",       NULL,      NULL)                \
  X(ERF,       NULL,              "erff",    "erf")               \
  X(ROUND,     "llvm.nearbyint",  NULL,      NULL)                \
  X(NEARBYINT, "llvm.nearbyint",  NULL,      NULL)                \
  X(FLOOR,     "llvm.floor",      NULL,      NULL)                \
  X(CEIL,      "llvm.ceil",       NULL,      NULL)                \
  X(TRUNC,     "llvm.trunc",      NULL,      NULL)                \
  X(SIN,       "llvm.sin",        NULL,      NULL)                \
  X(COS,       "llvm.cos",        NULL,      NULL)

typedef struct {
  tir_op_t op;
  const char *intrinsic, *libm_f, *libm_d;
} math_op_t;

static const math_op_t math_ops[] = {
#define CG_MATH_ROW_(e, intrin, f, d) {TIR_OP_##e, intrin, f, d},
    CG_MATH_OPS(CG_MATH_ROW_)
#undef CG_MATH_ROW_
};

static const math_op_t *math_op_find(tir_op_t op) {
  for (size_t i = 0; i < sizeof(math_ops) / sizeof(math_ops[0]); i++)
    if (math_ops[i].op == op) return &math_ops[i];
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Math                                                                      */
/* ------------------------------------------------------------------------ */

/* x of float dtype t in the type math runs in: float for 16-bit floats. */
static LLVMValueRef math_enter(cg_t *cg, LLVMValueRef x, tir_dtype_t t) {
  if (t.code == TIR_CODE_BFLOAT) return cg_bf16_to_f32(cg, x, t.lanes);
  if (t.bits == 16)
    return LLVMBuildFPExt(cg->b, x, t.lanes > 1 ? LLVMVectorType(cg->t_f32, t.lanes) : cg->t_f32, "");
  return x;
}

static LLVMValueRef math_leave(cg_t *cg, LLVMValueRef x, tir_dtype_t t) {
  if (t.code == TIR_CODE_BFLOAT) return cg_f32_to_bf16(cg, x, t.lanes);
  if (t.bits == 16) return LLVMBuildFPTrunc(cg->b, x, cg_type(cg, t), "");
  return x;
}

/* A libm function of one float/double argument, lane by lane. */
static LLVMValueRef libm_call(cg_t *cg, const math_op_t *m, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  int lanes = lanes_of(x);
  LLVMTypeRef s = lanes > 1 ? LLVMGetElementType(t) : t;
  const char *name = s == cg->t_f64 ? m->libm_d : m->libm_f;
  LLVMValueRef fn = cg_extern_fn(cg, name, s, &s, 1, false);
  if (lanes == 1) return cg_call(cg, fn, &x, 1, "");
  LLVMValueRef out = LLVMGetUndef(t);
  for (int l = 0; l < lanes; l++) {
    LLVMValueRef lane = LLVMBuildExtractElement(cg->b, x, cg_i32(cg, l), "");
    lane = cg_call(cg, fn, &lane, 1, "");
    out = LLVMBuildInsertElement(cg->b, out, lane, cg_i32(cg, l), "");
  }
  return out;
}

static LLVMValueRef math1(cg_t *cg, const char *intrinsic, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  return cg_call_intrinsic(cg, intrinsic, &t, 1, &x, 1);
}

/* CPU code computes float32 exp, exp2, log, log2, tanh inline (llvm_vmath.c);
 * GPU code goes through its hook, which may come back to
 * cg_float_math_default and so to LLVM's intrinsics. */
static LLVMValueRef float_math(cg_t *cg, tir_op_t op, LLVMValueRef x) {
  if (cg->hooks && cg->hooks->math) return cg->hooks->math(cg, op, x, NULL);
  if (cg_vmath_handles(cg, op, x)) return cg_vmath(cg, op, x);
  return cg_float_math_default(cg, op, x, NULL);
}

/* A float math op on x (already in the math type). */
LLVMValueRef cg_float_math_default(cg_t *cg, tir_op_t op, LLVMValueRef x, LLVMValueRef y) {
  const math_op_t *m = math_op_find(op);
  LLVMValueRef r;
  switch (op) {
  case TIR_OP_POW: {
    LLVMValueRef args[2] = {x, y};
    LLVMTypeRef ty = LLVMTypeOf(x);
    return cg_call_intrinsic(cg, "llvm.pow", &ty, 1, args, 2);
  }
  case TIR_OP_ABS: return math1(cg, "llvm.fabs", x);
  case TIR_OP_RSQRT:
    r = float_math(cg, TIR_OP_SQRT, x);
    return r ? LLVMBuildFDiv(cg->b, cg_real_like(cg, x, 1.0), r, "") : NULL;
  case TIR_OP_SIGMOID:
    r = float_math(cg, TIR_OP_EXP, LLVMBuildFNeg(cg->b, x, ""));
    if (!r) return NULL;
    return LLVMBuildFDiv(cg->b, cg_real_like(cg, x, 1.0), LLVMBuildFAdd(cg->b, cg_real_like(cg, x, 1.0), r, ""), "");
  default: break;
  }
  if (!m) return fail_null(MLC_EUNSUPPORTED, "codegen: call %s is not supported", tir_op_name(op));
  return m->intrinsic ? math1(cg, m->intrinsic, x) : libm_call(cg, m, x);
}

static LLVMValueRef int_abs(cg_t *cg, LLVMValueRef x, tir_dtype_t t) {
  if (t.code != TIR_CODE_INT) return x;
  LLVMValueRef neg = LLVMBuildICmp(cg->b, LLVMIntSLT, x, LLVMConstNull(LLVMTypeOf(x)), "");
  return LLVMBuildSelect(cg->b, neg, LLVMBuildNeg(cg->b, x, ""), x, "");
}

static LLVMValueRef unary_math(cg_t *cg, const tir_expr_t *e) {
  tir_op_t op = e->u.call.op;
  const tir_expr_t *arg = e->u.call.args[0];
  tir_dtype_t t = arg->dtype;
  LLVMValueRef x = cg_expr(cg, arg);
  if (!x) return NULL;
  if (op == TIR_OP_ISNAN) {
    if (!tir_dtype_is_float(t)) return cg_const_int(cg, tir_dtype_lanes(tir_dt_BOOL(), t.lanes), 0);
    x = cg_to_compute(cg, x, t);
    return LLVMBuildFCmp(cg->b, LLVMRealUNO, x, x, "");
  }
  if (op == TIR_OP_ABS && tir_dtype_is_integer(t)) return int_abs(cg, x, t);
  if (!tir_dtype_is_float(t) || !tir_dtype_eq(t, e->dtype)) {
    char a[24], b[24];
    mlc_error_set(MLC_EUNSUPPORTED, "codegen: %s of %s giving %s is not supported", tir_op_name(op),
                  tir_dtype_str(t, a), tir_dtype_str(e->dtype, b));
    return NULL;
  }
  LLVMValueRef r = float_math(cg, op, math_enter(cg, x, t));
  return r ? math_leave(cg, r, t) : NULL;
}

static LLVMValueRef pow_call(cg_t *cg, const tir_expr_t *e) {
  tir_dtype_t t = e->dtype;
  LLVMValueRef a = cg_expr(cg, e->u.call.args[0]);
  LLVMValueRef b = a ? cg_expr(cg, e->u.call.args[1]) : NULL;
  if (!b) return NULL;
  if (!tir_dtype_is_float(t) || !tir_dtype_eq(e->u.call.args[0]->dtype, t) ||
      !tir_dtype_eq(e->u.call.args[1]->dtype, t))
    return fail_null(MLC_EUNSUPPORTED, "codegen: %s of these dtypes is not supported", "pow");
  LLVMValueRef x = math_enter(cg, a, t), y = math_enter(cg, b, t);
  LLVMValueRef r = cg->hooks && cg->hooks->math ? cg->hooks->math(cg, TIR_OP_POW, x, y)
                                                : cg_float_math_default(cg, TIR_OP_POW, x, y);
  return r ? math_leave(cg, r, t) : NULL;
}

/* ------------------------------------------------------------------------ */
/* Control and bits                                                          */
/* ------------------------------------------------------------------------ */

/* One side of an if_then_else into `bb`, ending with a branch to merge;
 * *end is the block the value comes from. */
static LLVMValueRef side(cg_t *cg, LLVMBasicBlockRef bb, const tir_expr_t *e, int lanes,
                         LLVMBasicBlockRef merge, LLVMBasicBlockRef *end) {
  LLVMPositionBuilderAtEnd(cg->b, bb);
  LLVMValueRef v = cg_expr(cg, e);
  if (!v) return NULL;
  if (lanes_of(v) != lanes) v = cg_splat(cg, v, lanes);
  *end = LLVMGetInsertBlock(cg->b);
  LLVMBuildBr(cg->b, merge);
  return v;
}

/* Only the side taken is evaluated (it may guard an out-of-bounds load). A
 * vector condition branches on all-true / all-false; mixed lanes evaluate
 * both sides and select. */
static LLVMValueRef if_then_else(cg_t *cg, const tir_expr_t *e) {
  tir_expr_t *const *a = e->u.call.args;
  int lanes = e->dtype.lanes;
  LLVMValueRef c = cg_expr(cg, a[0]);
  if (!c) return NULL;
  LLVMBasicBlockRef then_bb = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "ite.then");
  LLVMBasicBlockRef else_bb = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "ite.else");
  LLVMBasicBlockRef merge = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "ite.end");
  LLVMBasicBlockRef mixed_bb = NULL, ends[3];
  LLVMValueRef vals[3];
  int cl = lanes_of(c), n = 2;
  if (cl == 1) {
    LLVMBuildCondBr(cg->b, c, then_bb, else_bb);
  } else {
    LLVMTypeRef it = LLVMIntTypeInContext(cg->ctx, (unsigned)cl);
    LLVMValueRef bits = LLVMBuildBitCast(cg->b, c, it, "");
    LLVMValueRef all = LLVMBuildICmp(cg->b, LLVMIntEQ, bits, LLVMConstAllOnes(it), "");
    LLVMValueRef none = LLVMBuildICmp(cg->b, LLVMIntEQ, bits, LLVMConstNull(it), "");
    LLVMBasicBlockRef check = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "ite.notall");
    mixed_bb = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "ite.mixed");
    LLVMBuildCondBr(cg->b, all, then_bb, check);
    LLVMPositionBuilderAtEnd(cg->b, check);
    LLVMBuildCondBr(cg->b, none, else_bb, mixed_bb);
  }
  if (!(vals[0] = side(cg, then_bb, a[1], lanes, merge, &ends[0]))) return NULL;
  if (!(vals[1] = side(cg, else_bb, a[2], lanes, merge, &ends[1]))) return NULL;
  if (mixed_bb) {
    LLVMPositionBuilderAtEnd(cg->b, mixed_bb);
    LLVMValueRef t = cg_expr(cg, a[1]), f = t ? cg_expr(cg, a[2]) : NULL;
    if (!f) return NULL;
    vals[2] = LLVMBuildSelect(cg->b, c, cg_splat(cg, t, lanes_of(t) == lanes ? 1 : lanes),
                              cg_splat(cg, f, lanes_of(f) == lanes ? 1 : lanes), "");
    ends[2] = LLVMGetInsertBlock(cg->b);
    LLVMBuildBr(cg->b, merge);
    n = 3;
  }
  LLVMPositionBuilderAtEnd(cg->b, merge);
  LLVMValueRef phi = LLVMBuildPhi(cg->b, LLVMTypeOf(vals[0]), "");
  LLVMAddIncoming(phi, vals, ends, (unsigned)n);
  return phi;
}

static LLVMValueRef reinterpret(cg_t *cg, const tir_expr_t *e) {
  const tir_expr_t *arg = e->u.call.args[0];
  LLVMValueRef x = cg_expr(cg, arg);
  LLVMTypeRef to = x ? cg_type(cg, e->dtype) : NULL;
  if (!to) return NULL;
  if (tir_dtype_is_handle(arg->dtype) && !tir_dtype_is_handle(e->dtype)) return LLVMBuildPtrToInt(cg->b, x, to, "");
  if (!tir_dtype_is_handle(arg->dtype) && tir_dtype_is_handle(e->dtype)) return LLVMBuildIntToPtr(cg->b, x, to, "");
  if (arg->dtype.bits * arg->dtype.lanes != e->dtype.bits * e->dtype.lanes || tir_dtype_is_bool(e->dtype) ||
      tir_dtype_is_bool(arg->dtype)) {
    char a[24], b[24];
    mlc_error_set(MLC_EUNSUPPORTED, "codegen: cannot reinterpret %s as %s", tir_dtype_str(arg->dtype, a),
                  tir_dtype_str(e->dtype, b));
    return NULL;
  }
  return LLVMBuildBitCast(cg->b, x, to, "");
}

static LLVMValueRef likely(cg_t *cg, const tir_expr_t *e) {
  LLVMValueRef x = cg_expr(cg, e->u.call.args[0]);
  if (!x || LLVMTypeOf(x) != cg->t_i1) return x;
  LLVMValueRef args[2] = {x, LLVMConstInt(cg->t_i1, 1, 0)};
  return cg_call_intrinsic(cg, "llvm.expect", &cg->t_i1, 1, args, 2);
}

static LLVMValueRef assume(cg_t *cg, const tir_expr_t *e) {
  LLVMValueRef x = cg_expr(cg, e->u.call.args[0]);
  if (!x) return NULL;
  if (LLVMTypeOf(x) == cg->t_i1 && !cg_call_intrinsic(cg, "llvm.assume", NULL, 0, &x, 1)) return NULL;
  return cg_i32(cg, 0);
}

/* ------------------------------------------------------------------------ */
/* External functions and LLVM intrinsics                                    */
/* ------------------------------------------------------------------------ */

typedef struct {
  const char *name;
  int n;
  LLVMValueRef vals[64];
  LLVMTypeRef types[64];
  LLVMTypeRef ret;
} call_args_t;

static int eval_call_args(cg_t *cg, const tir_expr_t *e, call_args_t *ca) {
  tir_expr_t *const *a = e->u.call.args;
  const char *op = tir_op_name(e->u.call.op);
  if (e->u.call.nargs < 1 || a[0]->kind != TIR_STRING_IMM)
    return mlc_error_set(MLC_EINVAL, "codegen: %s needs the function name first", op);
  if (e->u.call.nargs > 65) return mlc_error_set(MLC_EUNSUPPORTED, "codegen: %s with over 64 arguments", op);
  ca->name = a[0]->u.str_value;
  ca->n = e->u.call.nargs - 1;
  if (!(ca->ret = cg_type(cg, e->dtype))) return mlc_error_last_code();
  for (int i = 0; i < ca->n; i++) {
    if (!(ca->vals[i] = cg_expr(cg, a[i + 1]))) return mlc_error_last_code();
    ca->types[i] = LLVMTypeOf(ca->vals[i]);
  }
  return MLC_OK;
}

static int type_mismatch(const char *name, const char *what, LLVMTypeRef got, LLVMTypeRef want) {
  char *g = LLVMPrintTypeToString(got), *w = LLVMPrintTypeToString(want);
  int rc = mlc_error_set(MLC_EUNSUPPORTED, "codegen: %s: %s is %s, the function takes %s", name, what, g, w);
  LLVMDisposeMessage(g);
  LLVMDisposeMessage(w);
  return rc;
}

/* The call's operand and result types must be the function's. */
static int check_signature(const call_args_t *ca, LLVMTypeRef fnty) {
  if ((int)LLVMCountParamTypes(fnty) != ca->n)
    return mlc_error_set(MLC_EUNSUPPORTED, "codegen: %s takes %u arguments, the call passes %d", ca->name,
                         LLVMCountParamTypes(fnty), ca->n);
  LLVMTypeRef params[64];
  LLVMGetParamTypes(fnty, params);
  for (int i = 0; i < ca->n; i++) {
    if (params[i] != ca->types[i]) {
      char what[32];
      snprintf(what, sizeof(what), "argument %d", i + 1);
      return type_mismatch(ca->name, what, ca->types[i], params[i]);
    }
  }
  LLVMTypeRef ret = LLVMGetReturnType(fnty);
  if (ret != ca->ret) return type_mismatch(ca->name, "the call's dtype", ca->ret, ret);
  return MLC_OK;
}

static LLVMValueRef call_checked(cg_t *cg, const call_args_t *ca, LLVMValueRef fn, LLVMTypeRef fnty) {
  if (check_signature(ca, fnty) != MLC_OK) return NULL;
  LLVMValueRef r = LLVMBuildCall2(cg->b, fnty, fn, (LLVMValueRef *)ca->vals, (unsigned)ca->n, "");
  return LLVMGetTypeKind(ca->ret) == LLVMVoidTypeKind ? cg_i32(cg, 0) : r;
}

static LLVMValueRef extern_call(cg_t *cg, const tir_expr_t *e) {
  bool done = false;
  LLVMValueRef r = cg->hooks && cg->hooks->extern_call ? cg->hooks->extern_call(cg, e, &done) : NULL;
  if (done) return r;
  call_args_t ca;
  if (eval_call_args(cg, e, &ca) != MLC_OK) return NULL;
  LLVMValueRef fn = cg_extern_fn(cg, ca.name, ca.ret, ca.types, ca.n, false);
  return call_checked(cg, &ca, fn, LLVMGlobalGetValueType(fn));
}

static LLVMValueRef llvm_intrin_call(cg_t *cg, const tir_expr_t *e) {
  call_args_t ca;
  if (eval_call_args(cg, e, &ca) != MLC_OK) return NULL;
  unsigned id = LLVMLookupIntrinsicID(ca.name, strlen(ca.name));
  if (id == 0) return fail_null(MLC_EUNSUPPORTED, "codegen: %s is not an LLVM intrinsic", ca.name);
  LLVMValueRef fn;
  LLVMTypeRef fnty;
  size_t base_len = 0;
  if (!LLVMIntrinsicIsOverloaded(id)) {
    fn = cg_intrinsic(cg, ca.name, NULL, 0, &fnty);
  } else if ((LLVMIntrinsicGetName(id, &base_len), strlen(ca.name) > base_len)) {
    /* Mangled name: declared by name, LLVM recognises the intrinsic. */
    fnty = LLVMFunctionType(ca.ret, ca.types, (unsigned)ca.n, false);
    fn = LLVMGetNamedFunction(cg->mod, ca.name);
    if (!fn) fn = LLVMAddFunction(cg->mod, ca.name, fnty);
    fnty = LLVMGlobalGetValueType(fn);
  } else {
    LLVMTypeRef ov = LLVMGetTypeKind(ca.ret) == LLVMVoidTypeKind && ca.n > 0 ? ca.types[0] : ca.ret;
    fn = cg_intrinsic(cg, ca.name, &ov, 1, &fnty);
  }
  return fn ? call_checked(cg, &ca, fn, fnty) : NULL;
}

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                  */
/* ------------------------------------------------------------------------ */

LLVMValueRef cg_call_expr(cg_t *cg, const tir_expr_t *e) {
  tir_op_t op = e->u.call.op;
  int want = tir_op_nargs(op);
  if (want >= 0 && e->u.call.nargs != want) {
    mlc_error_set(MLC_EINVAL, "codegen: %s takes %d arguments, got %d", tir_op_name(op), want, e->u.call.nargs);
    return NULL;
  }
  switch (op) {
  case TIR_OP_IF_THEN_ELSE: return if_then_else(cg, e);
  case TIR_OP_LIKELY: return likely(cg, e);
  case TIR_OP_REINTERPRET: return reinterpret(cg, e);
  case TIR_OP_ASSUME: return assume(cg, e);
  case TIR_OP_TVM_STORAGE_SYNC: /* one thread per task on CPU */
    return cg->hooks && cg->hooks->storage_sync ? cg->hooks->storage_sync(cg) : cg_i32(cg, 0);
  case TIR_OP_POW: return pow_call(cg, e);
  case TIR_OP_CALL_EXTERN:
  case TIR_OP_CALL_PURE_EXTERN: return extern_call(cg, e);
  case TIR_OP_CALL_LLVM_INTRIN:
  case TIR_OP_CALL_LLVM_PURE_INTRIN: return llvm_intrin_call(cg, e);
  case TIR_OP_LIST: return fail_null(MLC_EINVAL, "codegen: %s used as a value", "an annotation list");
  default: return unary_math(cg, e);
  }
}
