/*
 * interp_expr.c - expression evaluation for the reference interpreter.
 *
 * One evaluator per expression shape, dispatched through a table generated
 * from TIR_EXPR_KINDS. Scalars stay inline in the value struct (no allocation
 * on the hot path of a matmul); vectors get their lanes from the scratch
 * area, released when the statement ends. Every lane-wise operation requires
 * its operands to have equal lanes: the IR is checked, not silently
 * broadcast, since the interpreter is the oracle other passes are judged by.
 */
#include "tir/interp_internal.h"

#include <stdio.h>

static int lanes_mismatch(interp_t *it, const tir_expr_t *e, int a, int b) {
  return interp_fail(it, "%s of values with %d and %d lanes", tir_expr_kind_name(e->kind), a, b);
}

static int eval_imm(interp_t *it, const tir_expr_t *e, interp_value_t *out) {
  interp_scalar_t s;
  if (e->kind == TIR_INT_IMM && e->dtype.lanes == 1) { /* the hot case */
    out->t = e->dtype;
    out->s = interp_wrap(e->dtype, (uint64_t)e->u.int_value);
    return MLC_OK;
  }
  if (e->kind == TIR_FLOAT_IMM)
    s.f = e->u.float_value;
  else if (e->kind == TIR_INT_IMM)
    s = interp_wrap(e->dtype, (uint64_t)e->u.int_value);
  else
    return interp_fail(it, "string \"%s\" used as a value", e->u.str_value);
  if (!interp_dtype_supported(tir_dtype_scalar(e->dtype))) {
    char buf[24];
    return interp_fail(it, "unsupported dtype %s", tir_dtype_str(e->dtype, buf));
  }
  int rc = interp_value_alloc(it, out, e->dtype);
  if (rc != MLC_OK) return rc;
  interp_scalar_t *o = interp_lanes(out);
  for (int l = 0; l < e->dtype.lanes; l++) o[l] = s;
  return MLC_OK;
}

static int eval_var(interp_t *it, const tir_expr_t *e, interp_value_t *out) {
  const interp_var_slot_t *slot = interp_var_slot(it, e);
  if (!slot || !slot->bound) return interp_fail(it, "variable %s is not defined", e->u.var.name);
  *out = slot->val;
  return MLC_OK;
}

/* Comparisons, AND and OR give bool whatever the result dtype says; the
 * others need the result's class to be the operands' (else the IR is
 * ill-typed and there is no right answer to give). */
static bool kind_gives_bool(tir_expr_kind_t k) {
  return (k >= TIR_EQ && k <= TIR_GE) || k == TIR_AND || k == TIR_OR;
}

static int check_binary_types(interp_t *it, const tir_expr_t *e, tir_dtype_t a, tir_dtype_t b) {
  interp_class_t ca = interp_class(a), cb = interp_class(b);
  bool ok = ca == cb || (e->kind == TIR_AND || e->kind == TIR_OR);
  if (ok && !kind_gives_bool(e->kind)) ok = interp_class(e->dtype) == ca;
  if (ok) return MLC_OK;
  char x[24], y[24], z[24];
  return interp_fail(it, "ill-typed %s: %s and %s giving %s", tir_expr_kind_name(e->kind),
                     tir_dtype_str(a, x), tir_dtype_str(b, y), tir_dtype_str(e->dtype, z));
}

/* float32 and int32 +, -, * on scalars of the result's dtype: the inner loop
 * of most kernels, done here without the general dispatch. Same results as
 * interp_binop. */
static inline bool fast_binary(const tir_expr_t *e, const interp_value_t *a,
                               const interp_value_t *b, interp_value_t *out) {
  tir_dtype_t t = e->dtype;
  if (!tir_dtype_eq(a->t, t) || !tir_dtype_eq(b->t, t) || t.lanes != 1 || t.bits != 32) return false;
  if (t.code == TIR_CODE_FLOAT) {
    switch (e->kind) {
    case TIR_ADD: out->s.f = (float)(a->s.f + b->s.f); break;
    case TIR_SUB: out->s.f = (float)(a->s.f - b->s.f); break;
    case TIR_MUL: out->s.f = (float)(a->s.f * b->s.f); break;
    default: return false;
    }
  } else if (t.code == TIR_CODE_INT) {
    switch (e->kind) {
    case TIR_ADD: out->s = interp_wrap(t, a->s.u + b->s.u); break;
    case TIR_SUB: out->s = interp_wrap(t, a->s.u - b->s.u); break;
    case TIR_MUL: out->s = interp_wrap(t, a->s.u * b->s.u); break;
    default: return false;
    }
  } else {
    return false;
  }
  out->t = t;
  return true;
}

static int eval_binary(interp_t *it, const tir_expr_t *e, interp_value_t *out) {
  interp_value_t a, b;
  int rc = interp_eval(it, e->u.bin.a, &a);
  if (rc == MLC_OK) rc = interp_eval(it, e->u.bin.b, &b);
  if (rc != MLC_OK) return rc;
  if (fast_binary(e, &a, &b, out)) return MLC_OK;
  if ((rc = check_binary_types(it, e, a.t, b.t)) != MLC_OK) return rc;
  tir_dtype_t rt = tir_dtype_scalar(kind_gives_bool(e->kind) ? tir_dt_BOOL() : e->dtype);
  if (a.t.lanes == 1 && b.t.lanes == 1) {
    out->t = rt;
    return interp_binop(it, e->kind, rt, a.t, a.s, b.s, &out->s);
  }
  if (a.t.lanes != b.t.lanes) return lanes_mismatch(it, e, a.t.lanes, b.t.lanes);
  if ((rc = interp_value_alloc(it, out, tir_dtype_lanes(rt, a.t.lanes))) != MLC_OK) return rc;
  for (int l = 0; l < a.t.lanes && rc == MLC_OK; l++)
    rc = interp_binop(it, e->kind, rt, tir_dtype_scalar(a.t), a.v[l], b.v[l], &out->v[l]);
  return rc;
}

static int eval_unary(interp_t *it, const tir_expr_t *e, interp_value_t *out) {
  interp_value_t a;
  int rc = interp_eval(it, e->u.un.a, &a);
  if (rc != MLC_OK) return rc;
  tir_dtype_t to = tir_dtype_scalar(e->kind == TIR_NOT ? tir_dt_BOOL() : e->dtype);
  if (e->kind == TIR_CAST && !interp_dtype_supported(to)) {
    char buf[24];
    return interp_fail(it, "cast to unsupported dtype %s", tir_dtype_str(e->dtype, buf));
  }
  if ((rc = interp_value_alloc(it, out, tir_dtype_lanes(to, a.t.lanes))) != MLC_OK) return rc;
  interp_scalar_t *o = interp_lanes(out);
  tir_dtype_t from = tir_dtype_scalar(a.t);
  for (int l = 0; l < a.t.lanes && rc == MLC_OK; l++) {
    if (e->kind == TIR_NOT)
      o[l].u = !interp_truthy(from, interp_lane(&a, l));
    else
      rc = interp_cast(it, to, from, interp_lane(&a, l), &o[l]);
  }
  return rc;
}

/* Select evaluates both sides (as TVM defines it); only the lanes differ. */
static int eval_select(interp_t *it, const tir_expr_t *e, interp_value_t *out) {
  interp_value_t c, t, f;
  int rc = interp_eval(it, e->u.select.cond, &c);
  if (rc == MLC_OK) rc = interp_eval(it, e->u.select.t, &t);
  if (rc == MLC_OK) rc = interp_eval(it, e->u.select.f, &f);
  if (rc != MLC_OK) return rc;
  if (t.t.lanes != f.t.lanes) return lanes_mismatch(it, e, t.t.lanes, f.t.lanes);
  if (c.t.lanes != 1 && c.t.lanes != t.t.lanes) return lanes_mismatch(it, e, c.t.lanes, t.t.lanes);
  if (c.t.lanes == 1) {
    *out = interp_truthy(c.t, c.s) ? t : f;
    return MLC_OK;
  }
  if ((rc = interp_value_alloc(it, out, t.t)) != MLC_OK) return rc;
  for (int l = 0; l < t.t.lanes; l++)
    out->v[l] = interp_truthy(tir_dtype_scalar(c.t), c.v[l]) ? interp_lane(&t, l) : interp_lane(&f, l);
  return MLC_OK;
}

static int eval_ramp(interp_t *it, const tir_expr_t *e, interp_value_t *out) {
  interp_value_t base, stride;
  int rc = interp_eval(it, e->u.ramp.base, &base);
  if (rc == MLC_OK) rc = interp_eval(it, e->u.ramp.stride, &stride);
  if (rc != MLC_OK) return rc;
  int lanes = e->u.ramp.lanes;
  if (base.t.lanes != 1 || stride.t.lanes != 1 || lanes < 1)
    return interp_fail(it, "Ramp needs a scalar base and stride and lanes >= 1");
  tir_dtype_t t = base.t;
  if ((rc = interp_value_alloc(it, out, tir_dtype_lanes(t, lanes))) != MLC_OK) return rc;
  interp_scalar_t *o = interp_lanes(out);
  for (int l = 0; l < lanes && rc == MLC_OK; l++) {
    interp_scalar_t step = interp_wrap(t, (uint64_t)l);
    if (interp_class(t) == INTERP_FLOAT) step.f = (double)l;
    interp_scalar_t off;
    rc = interp_binop(it, TIR_MUL, t, t, step, stride.s, &off);
    if (rc == MLC_OK) rc = interp_binop(it, TIR_ADD, t, t, base.s, off, &o[l]);
  }
  return rc;
}

static int eval_broadcast(interp_t *it, const tir_expr_t *e, interp_value_t *out) {
  interp_value_t v;
  int rc = interp_eval(it, e->u.broadcast.value, &v);
  if (rc != MLC_OK) return rc;
  int lanes = e->u.broadcast.lanes;
  if (v.t.lanes != 1 || lanes < 1)
    return interp_fail(it, "Broadcast needs a scalar value and lanes >= 1");
  if ((rc = interp_value_alloc(it, out, tir_dtype_lanes(v.t, lanes))) != MLC_OK) return rc;
  interp_scalar_t *o = interp_lanes(out);
  for (int l = 0; l < lanes; l++) o[l] = v.s;
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Loads                                                                     */
/* ------------------------------------------------------------------------ */

/* A vector load: a ramp index, or a buffer of a vector dtype. */
static int eval_vector_load(interp_t *it, const tir_expr_t *e, interp_value_t *out) {
  const tir_buffer_t *b = e->u.load.buffer;
  interp_value_t idx[TIR_MAX_DIMS];
  int lanes;
  const interp_view_t *view;
  int rc = interp_eval_indices(it, b, e->u.load.indices, e->u.load.nindices, idx, &lanes);
  if (rc == MLC_OK) rc = interp_buffer_view_checked(it, b, e->u.load.nindices, &view);
  if (rc != MLC_OK) return rc;
  tir_dtype_t lane_t = tir_dtype_scalar(view->dtype);
  int per = view->dtype.lanes, size = interp_lane_bytes(lane_t);
  if ((rc = interp_value_alloc(it, out, tir_dtype_lanes(lane_t, lanes * per))) != MLC_OK) return rc;
  interp_scalar_t *o = interp_lanes(out);
  for (int l = 0; l < lanes; l++) {
    unsigned char *p;
    if ((rc = interp_access_lane(it, b, view, idx, l, &p)) != MLC_OK) return rc;
    for (int j = 0; j < per; j++) o[l * per + j] = interp_read(lane_t, p + j * size);
  }
  return MLC_OK;
}

static int eval_load(interp_t *it, const tir_expr_t *e, interp_value_t *out) {
  const tir_buffer_t *b = e->u.load.buffer;
  unsigned char *p;
  if (b->dtype.lanes != 1 || !interp_indices_scalar(e->u.load.indices, e->u.load.nindices))
    return eval_vector_load(it, e, out);
  int rc = interp_access_scalar(it, b, e->u.load.indices, e->u.load.nindices, &p);
  if (rc != MLC_OK) return rc;
  out->t = b->dtype;
  out->s = interp_read(b->dtype, p);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                  */
/* ------------------------------------------------------------------------ */

/* One evaluator per expression shape, indexed by kind (from TIR_EXPR_KINDS).
 * A table rather than a switch keeps interp_eval a small tail call, so the
 * deep recursion of an expression does not pay for the largest handler's
 * stack frame at every level. */
#define eval_IMM eval_imm
#define eval_LEAF eval_var
#define eval_BINARY eval_binary
#define eval_UNARY eval_unary
#define eval_SELECT eval_select
#define eval_LOAD eval_load
#define eval_RAMP eval_ramp
#define eval_BROADCAST eval_broadcast
#define eval_CALL interp_eval_call
typedef int (*eval_fn_t)(interp_t *it, const tir_expr_t *e, interp_value_t *out);
static const eval_fn_t eval_fns[TIR_EXPR_KIND_COUNT] = {
#define ROW_(e, name, shape, op) [TIR_##e] = eval_##shape,
    TIR_EXPR_KINDS(ROW_)
#undef ROW_
};

int interp_eval(interp_t *it, const tir_expr_t *e, interp_value_t *out) {
  return eval_fns[e->kind](it, e, out);
}

int interp_eval_int_slow(interp_t *it, const tir_expr_t *e, int64_t *out) {
  interp_value_t v;
  int rc = interp_eval(it, e, &v);
  if (rc != MLC_OK) return rc;
  interp_class_t c = interp_class(v.t);
  if (v.t.lanes != 1 || (c != INTERP_INT && c != INTERP_UINT)) {
    char buf[24];
    return interp_fail(it, "expected a scalar integer, got %s", tir_dtype_str(v.t, buf));
  }
  *out = v.s.i;
  return MLC_OK;
}

int interp_eval_bool(interp_t *it, const tir_expr_t *e, bool *out) {
  interp_value_t v;
  int rc = interp_eval(it, e, &v);
  if (rc != MLC_OK) return rc;
  if (v.t.lanes != 1) return interp_fail(it, "condition with %d lanes", v.t.lanes);
  *out = interp_truthy(v.t, v.s);
  return MLC_OK;
}
