/*
 * fold.c - constant folding of every operator on every scalar dtype.
 *
 * Integers are computed on uint64_t (so wrap-around is defined) and then
 * wrapped to the dtype's width, exactly as a value of that dtype would hold
 * (int8 127 + 1 is -128). Unsigned values are stored zero-extended, so their
 * division and comparisons use unsigned arithmetic. Floats are computed in
 * double and rounded to the dtype by tir_float (the interpreter's rounding);
 * a result that is not finite is not folded, so no inf/nan immediates appear.
 * Division by zero is never folded: it stays for the interpreter to report.
 */
#include "tir/arith/arith_internal.h"

#include <math.h>

int64_t arith_int_norm(tir_dtype_t t, int64_t v) {
  if (t.bits == 1) return v & 1;
  if (t.bits >= 64 || t.bits == 0) return v;
  uint64_t mask = (UINT64_C(1) << t.bits) - 1;
  uint64_t u = (uint64_t)v & mask;
  if (t.code == TIR_CODE_INT && ((u >> (t.bits - 1)) & 1u)) u |= ~mask;
  return (int64_t)u;
}

int64_t arith_coef_wrap(tir_dtype_t t, uint64_t v) {
  int bits = t.bits;
  if (bits >= 64 || bits == 0) return (int64_t)v;
  uint64_t mask = (UINT64_C(1) << bits) - 1;
  uint64_t u = v & mask;
  if ((u >> (bits - 1)) & 1u) u |= ~mask;
  return (int64_t)u;
}

bool arith_is_int_scalar(tir_dtype_t t) {
  return t.lanes == 1 && (t.code == TIR_CODE_INT || t.code == TIR_CODE_UINT) && t.bits > 1;
}

int64_t arith_floordiv(int64_t a, int64_t b) {
  if (b == -1) return (int64_t)(0 - (uint64_t)a); /* INT64_MIN / -1 wraps */
  int64_t q = a / b, r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) q--;
  return q;
}

int64_t arith_floormod(int64_t a, int64_t b) {
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

bool arith_as_bool(const tir_expr_t *e, bool *out) {
  if (!e || e->kind != TIR_INT_IMM) return false;
  *out = e->u.int_value != 0;
  return true;
}

/* Integer operators; false when not foldable. */
static bool fold_int(tir_expr_kind_t kind, tir_dtype_t t, int64_t x, int64_t y, int64_t *out) {
  bool u = t.code == TIR_CODE_UINT;
  uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
  switch (kind) {
  case TIR_ADD: *out = (int64_t)(ux + uy); return true;
  case TIR_SUB: *out = (int64_t)(ux - uy); return true;
  case TIR_MUL: *out = (int64_t)(ux * uy); return true;
  case TIR_DIV:
  case TIR_MOD:
  case TIR_FLOOR_DIV:
  case TIR_FLOOR_MOD:
    if (y == 0) return false;
    if (u) {
      *out = (int64_t)(kind == TIR_DIV || kind == TIR_FLOOR_DIV ? ux / uy : ux % uy);
    } else if (kind == TIR_FLOOR_DIV) {
      *out = arith_floordiv(x, y);
    } else if (kind == TIR_FLOOR_MOD) {
      *out = arith_floormod(x, y);
    } else if (y == -1) {
      *out = kind == TIR_DIV ? (int64_t)(0 - ux) : 0;
    } else {
      *out = kind == TIR_DIV ? x / y : x % y;
    }
    return true;
  case TIR_MIN: *out = (u ? ux < uy : x < y) ? x : y; return true;
  case TIR_MAX: *out = (u ? ux > uy : x > y) ? x : y; return true;
  case TIR_EQ: *out = x == y; return true;
  case TIR_NE: *out = x != y; return true;
  case TIR_LT: *out = u ? ux < uy : x < y; return true;
  case TIR_LE: *out = u ? ux <= uy : x <= y; return true;
  case TIR_GT: *out = u ? ux > uy : x > y; return true;
  case TIR_GE: *out = u ? ux >= uy : x >= y; return true;
  case TIR_AND: *out = x && y; return true;
  case TIR_OR: *out = x || y; return true;
  default: return false;
  }
}

static bool is_compare(tir_expr_kind_t kind) {
  return kind >= TIR_EQ && kind <= TIR_GE;
}

/* Float operators; *is_bool tells a comparison result. False when not foldable. */
static bool fold_float(tir_expr_kind_t kind, double x, double y, double *out) {
  switch (kind) {
  case TIR_ADD: *out = x + y; break;
  case TIR_SUB: *out = x - y; break;
  case TIR_MUL: *out = x * y; break;
  case TIR_DIV:
    if (y == 0) return false;
    *out = x / y;
    break;
  case TIR_MIN: *out = x < y ? x : y; break;
  case TIR_MAX: *out = x > y ? x : y; break;
  case TIR_EQ: *out = x == y; break;
  case TIR_NE: *out = x != y; break;
  case TIR_LT: *out = x < y; break;
  case TIR_LE: *out = x <= y; break;
  case TIR_GT: *out = x > y; break;
  case TIR_GE: *out = x >= y; break;
  default: return false; /* floordiv/floormod of floats: rounding is the interpreter's call */
  }
  return isfinite(*out);
}

tir_expr_t *arith_fold_binary(mlc_arena_t *a, tir_expr_kind_t kind, tir_expr_t *x, tir_expr_t *y) {
  if (x->dtype.lanes != 1 || y->dtype.lanes != 1) return NULL;
  if (x->kind == TIR_INT_IMM && y->kind == TIR_INT_IMM) {
    int64_t r;
    if (!fold_int(kind, x->dtype, x->u.int_value, y->u.int_value, &r)) return NULL;
    if (is_compare(kind) || kind == TIR_AND || kind == TIR_OR) return tir_bool(a, r != 0);
    return tir_int(a, x->dtype, arith_int_norm(x->dtype, r));
  }
  if (x->kind == TIR_FLOAT_IMM && y->kind == TIR_FLOAT_IMM) {
    double r;
    if (!fold_float(kind, x->u.float_value, y->u.float_value, &r)) return NULL;
    if (is_compare(kind)) return tir_bool(a, r != 0);
    return tir_float(a, x->dtype, r);
  }
  return NULL;
}

/* Cast of an integer immediate holding v (in dtype from) to t. */
static tir_expr_t *cast_int(mlc_arena_t *a, tir_dtype_t t, tir_dtype_t from, int64_t v) {
  if (tir_dtype_is_float(t)) {
    double d = from.code == TIR_CODE_UINT && from.bits == 64 ? (double)(uint64_t)v : (double)v;
    return tir_float(a, t, d);
  }
  if (tir_dtype_is_bool(t)) return tir_bool(a, v != 0);
  if (tir_dtype_is_integer(t)) return tir_int(a, t, arith_int_norm(t, v));
  return NULL;
}

/* Cast of a float immediate to t; NULL when the value does not fit (C leaves
 * that undefined, so it is not folded). */
static tir_expr_t *cast_float(mlc_arena_t *a, tir_dtype_t t, double v) {
  if (tir_dtype_is_float(t)) return tir_float(a, t, v);
  if (tir_dtype_is_bool(t)) return tir_bool(a, v != 0);
  if (!tir_dtype_is_integer(t) || !isfinite(v)) return NULL;
  double tv = trunc(v);
  if (t.code == TIR_CODE_UINT) {
    double lim = t.bits >= 64 ? 18446744073709551616.0 : ldexp(1.0, t.bits);
    if (tv < 0 || tv >= lim) return NULL;
    return tir_int(a, t, (int64_t)(uint64_t)tv);
  }
  double lim = ldexp(1.0, t.bits - 1);
  if (tv < -lim || tv >= lim) return NULL;
  return tir_int(a, t, (int64_t)tv);
}

tir_expr_t *arith_fold_unary(mlc_arena_t *a, tir_expr_kind_t kind, tir_dtype_t t, tir_expr_t *x) {
  if (x->dtype.lanes != 1 || t.lanes != 1) return NULL;
  if (kind == TIR_NOT) {
    bool b;
    return arith_as_bool(x, &b) ? tir_bool(a, !b) : NULL;
  }
  if (kind != TIR_CAST) return NULL;
  if (x->kind == TIR_INT_IMM) return cast_int(a, t, x->dtype, x->u.int_value);
  if (x->kind == TIR_FLOAT_IMM) return cast_float(a, t, x->u.float_value);
  return NULL;
}
