/*
 * interp_call.c - calls (TIR_CALL_OPS) in the reference interpreter.
 *
 * Math is computed in double on the (already rounded) argument and the result
 * rounded to the call's dtype, so float32 results are within an ulp of the
 * correctly rounded value whatever libm the generated code uses. `round` is
 * TVM's round-half-to-even, the same as nearbyint. if_then_else evaluates only
 * the side it takes (it guards out-of-bounds loads in padding). External
 * functions and LLVM intrinsics cannot be interpreted and are errors, except
 * the WMMA tensor-core calls (tvm_mma_sync and friends, interp_wmma.c) and
 * the mma.sync calls of the warp layout (ptx_ldmatrix_x4 / _x2 and
 * ptx_mma_m16n8k16_row_col_f16f16f32, interp_mma.c).
 */
#include "tir/interp_internal.h"

#include <math.h>

/* A unary float function; false when op is not one. */
static bool math_unary(tir_op_t op, double x, double *out) {
  switch (op) {
  case TIR_OP_EXP: *out = exp(x); break;
  case TIR_OP_EXP2: *out = exp2(x); break;
  case TIR_OP_EXP10: *out = pow(10.0, x); break;
  case TIR_OP_LOG: *out = log(x); break;
  case TIR_OP_LOG2: *out = log2(x); break;
  case TIR_OP_LOG10: *out = log10(x); break;
  case TIR_OP_LOG1P: *out = log1p(x); break;
  case TIR_OP_SQRT: *out = sqrt(x); break;
  case TIR_OP_RSQRT: *out = 1.0 / sqrt(x); break;
  case TIR_OP_TANH: *out = tanh(x); break;
  case TIR_OP_SIGMOID: *out = 1.0 / (1.0 + exp(-x)); break;
  case TIR_OP_FABS:
  case TIR_OP_ABS: *out = fabs(x); break;
  case TIR_OP_ERF: *out = erf(x); break;
  case TIR_OP_ROUND:
  case TIR_OP_NEARBYINT: *out = nearbyint(x); break;
  case TIR_OP_FLOOR: *out = floor(x); break;
  case TIR_OP_CEIL: *out = ceil(x); break;
  case TIR_OP_TRUNC: *out = trunc(x); break;
  case TIR_OP_SIN: *out = sin(x); break;
  case TIR_OP_COS: *out = cos(x); break;
  default: return false;
  }
  return true;
}

static int bad_arg_type(interp_t *it, tir_op_t op, tir_dtype_t t) {
  char buf[24];
  return interp_fail(it, "%s of %s is not supported", tir_op_name(op), tir_dtype_str(t, buf));
}

/* One lane of a one-argument op; a's dtype is scalar. */
static int unary_lane(interp_t *it, tir_op_t op, tir_dtype_t rt, tir_dtype_t at,
                      interp_scalar_t a, interp_scalar_t *out) {
  interp_class_t c = interp_class(at);
  switch (op) {
  case TIR_OP_ISNAN: out->u = c == INTERP_FLOAT && isnan(a.f); return MLC_OK;
  case TIR_OP_REINTERPRET: return interp_reinterpret(it, rt, at, a, out);
  case TIR_OP_ABS:
    if (c == INTERP_INT) {
      *out = interp_wrap(rt, a.i < 0 ? 0 - a.u : a.u);
      return MLC_OK;
    }
    if (c == INTERP_UINT) {
      *out = a;
      return MLC_OK;
    }
    break;
  default: break;
  }
  double r;
  if (c != INTERP_FLOAT || interp_class(rt) != INTERP_FLOAT || !math_unary(op, a.f, &r))
    return bad_arg_type(it, op, at);
  out->f = interp_round(rt, r);
  return MLC_OK;
}

static int eval_unary_call(interp_t *it, const tir_expr_t *e, interp_value_t *out) {
  interp_value_t a;
  tir_op_t op = e->u.call.op;
  int rc = interp_eval(it, e->u.call.args[0], &a);
  if (rc != MLC_OK) return rc;
  tir_dtype_t rt = tir_dtype_scalar(op == TIR_OP_ISNAN ? tir_dt_BOOL() : e->dtype);
  if (!interp_dtype_supported(rt)) return bad_arg_type(it, op, rt);
  if ((rc = interp_value_alloc(it, out, tir_dtype_lanes(rt, a.t.lanes))) != MLC_OK) return rc;
  interp_scalar_t *o = interp_lanes(out);
  for (int l = 0; l < a.t.lanes && rc == MLC_OK; l++)
    rc = unary_lane(it, op, rt, tir_dtype_scalar(a.t), interp_lane(&a, l), &o[l]);
  return rc;
}

static int eval_pow(interp_t *it, const tir_expr_t *e, interp_value_t *out) {
  interp_value_t a, b;
  int rc = interp_eval(it, e->u.call.args[0], &a);
  if (rc == MLC_OK) rc = interp_eval(it, e->u.call.args[1], &b);
  if (rc != MLC_OK) return rc;
  tir_dtype_t rt = tir_dtype_scalar(e->dtype);
  if (interp_class(a.t) != INTERP_FLOAT || interp_class(b.t) != INTERP_FLOAT ||
      interp_class(rt) != INTERP_FLOAT)
    return bad_arg_type(it, TIR_OP_POW, a.t);
  if (a.t.lanes != b.t.lanes)
    return interp_fail(it, "pow of values with %d and %d lanes", a.t.lanes, b.t.lanes);
  if ((rc = interp_value_alloc(it, out, tir_dtype_lanes(rt, a.t.lanes))) != MLC_OK) return rc;
  interp_scalar_t *o = interp_lanes(out);
  for (int l = 0; l < a.t.lanes; l++)
    o[l].f = interp_round(rt, pow(interp_lane(&a, l).f, interp_lane(&b, l).f));
  return MLC_OK;
}

/* Only the taken side is evaluated. A vector condition must agree across its
 * lanes: TVM's vectorizer scalarizes if_then_else whose condition does not. */
static int eval_if_then_else(interp_t *it, const tir_expr_t *e, interp_value_t *out) {
  interp_value_t c;
  int rc = interp_eval(it, e->u.call.args[0], &c);
  if (rc != MLC_OK) return rc;
  tir_dtype_t ct = tir_dtype_scalar(c.t);
  bool first = interp_truthy(ct, interp_lane(&c, 0));
  for (int l = 1; l < c.t.lanes; l++) {
    if (interp_truthy(ct, c.v[l]) != first)
      return interp_fail(it, "if_then_else with a condition that differs across its %d lanes",
                         c.t.lanes);
  }
  return interp_eval(it, e->u.call.args[first ? 1 : 2], out);
}

static int extern_error(interp_t *it, const tir_expr_t *e) {
  const char *op = tir_op_name(e->u.call.op);
  const tir_expr_t *name = e->u.call.nargs > 0 ? e->u.call.args[0] : NULL;
  if (name && name->kind == TIR_STRING_IMM)
    return interp_fail(it, "cannot interpret %s(\"%s\")", op, name->u.str_value);
  return interp_fail(it, "cannot interpret %s", op);
}

int interp_eval_call(interp_t *it, const tir_expr_t *e, interp_value_t *out) {
  tir_op_t op = e->u.call.op;
  int want = tir_op_nargs(op);
  if (want >= 0 && e->u.call.nargs != want)
    return interp_fail(it, "%s takes %d arguments, got %d", tir_op_name(op), want,
                       e->u.call.nargs);
  switch (op) {
  case TIR_OP_IF_THEN_ELSE: return eval_if_then_else(it, e, out);
  case TIR_OP_LIKELY: return interp_eval(it, e->u.call.args[0], out);
  case TIR_OP_POW: return eval_pow(it, e, out);
  case TIR_OP_ASSUME:
  case TIR_OP_TVM_STORAGE_SYNC:
    /* No-ops: assume is a hint, and threads run one after another. */
    out->t = tir_dt_INT32();
    out->s.i = 0;
    return MLC_OK;
  case TIR_OP_CALL_EXTERN:
  case TIR_OP_CALL_PURE_EXTERN:
    if (tir_wmma_op(e) != TIR_WMMA_NONE) return interp_eval_wmma(it, e, out);
    if (tir_ptx_op(e) != TIR_PTX_NONE) return interp_eval_ptx(it, e, out);
    return extern_error(it, e);
  case TIR_OP_CALL_LLVM_INTRIN:
  case TIR_OP_CALL_LLVM_PURE_INTRIN: return extern_error(it, e);
  case TIR_OP_LIST: return interp_fail(it, "an annotation list used as a value");
  default: return eval_unary_call(it, e, out);
  }
}
