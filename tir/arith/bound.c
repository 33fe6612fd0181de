/*
 * bound.c - constant integer bounds of expressions (TVM's ConstIntBound).
 *
 * Bounds are inclusive int64 pairs where INT64_MIN and INT64_MAX stand for
 * -inf and +inf, and arithmetic on them is extended-integer arithmetic: a
 * finite overflow makes the node's answer "its dtype's whole range" (the value
 * may have wrapped). A bound outside the node's dtype is likewise replaced by
 * the dtype's range, so every answer is sound for the wrapped value.
 */
#include "tir/arith/arith_internal.h"

typedef struct {
  tir_analyzer_t *an;
  bool ovf;
} bound_ctx_t;

tir_bound_t arith_dtype_bound(tir_dtype_t t) {
  tir_bound_t b = {ARITH_NEG_INF, ARITH_POS_INF};
  if (t.code == TIR_CODE_UINT) {
    b.min = 0;
    if (t.bits < 64) b.max = (int64_t)((UINT64_C(1) << t.bits) - 1);
  } else if (t.code == TIR_CODE_INT && t.bits < 64 && t.bits > 0) {
    b.min = -(INT64_C(1) << (t.bits - 1));
    b.max = (INT64_C(1) << (t.bits - 1)) - 1;
  }
  return b;
}

static bool is_inf(int64_t x) { return x == ARITH_NEG_INF || x == ARITH_POS_INF; }

int64_t arith_ext_neg(int64_t x) {
  if (x == ARITH_NEG_INF) return ARITH_POS_INF;
  if (x == ARITH_POS_INF) return ARITH_NEG_INF;
  return -x;
}

int64_t arith_ext_add(int64_t x, int64_t y, bool *ovf) {
  if (is_inf(x) || is_inf(y)) {
    if (is_inf(x) && is_inf(y) && x != y) {
      *ovf = true; /* inf - inf: nothing is known */
      return 0;
    }
    return is_inf(x) ? x : y;
  }
  int64_t r;
  if (__builtin_add_overflow(x, y, &r) || is_inf(r)) {
    *ovf = true;
    return 0;
  }
  return r;
}

int64_t arith_ext_mul(int64_t x, int64_t y, bool *ovf) {
  if (x == 0 || y == 0) return 0;
  if (is_inf(x) || is_inf(y)) return (x < 0) != (y < 0) ? ARITH_NEG_INF : ARITH_POS_INF;
  int64_t r;
  if (__builtin_mul_overflow(x, y, &r) || is_inf(r)) {
    *ovf = true;
    return 0;
  }
  return r;
}

static int64_t min2(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max2(int64_t a, int64_t b) { return a > b ? a : b; }

tir_bound_t arith_bound_scale(tir_bound_t b, int64_t coef, bool *ovf) {
  int64_t x = arith_ext_mul(b.min, coef, ovf), y = arith_ext_mul(b.max, coef, ovf);
  tir_bound_t r = {min2(x, y), max2(x, y)};
  return r;
}

tir_bound_t arith_bound_clamp(tir_bound_t b, tir_dtype_t t, bool ovf) {
  tir_bound_t d = arith_dtype_bound(t);
  if (ovf || b.min < d.min || b.max > d.max) return d;
  return b;
}

static tir_bound_t bound_of(bound_ctx_t *c, tir_expr_t *e);

static tir_bound_t bound_mul(bound_ctx_t *c, tir_bound_t a, tir_bound_t b) {
  int64_t p[4] = {arith_ext_mul(a.min, b.min, &c->ovf), arith_ext_mul(a.min, b.max, &c->ovf),
                  arith_ext_mul(a.max, b.min, &c->ovf), arith_ext_mul(a.max, b.max, &c->ovf)};
  tir_bound_t r = {p[0], p[0]};
  for (int i = 1; i < 4; i++) {
    r.min = min2(r.min, p[i]);
    r.max = max2(r.max, p[i]);
  }
  return r;
}

/* Floor or truncated division of a by b where b excludes 0: both are
 * monotone in each argument on each sign of b, so the corners bound it. */
static tir_bound_t bound_div(bound_ctx_t *c, tir_bound_t a, tir_bound_t b, bool floor) {
  tir_bound_t unknown = {ARITH_NEG_INF, ARITH_POS_INF};
  if (b.min <= 0 && b.max >= 0) return unknown;
  if (is_inf(a.min) || is_inf(a.max)) {
    /* An infinite dividend stays unbounded on that side; the other side is
     * still bounded by the finite corner when b's sign is known. */
    if (b.min > 0 && !is_inf(b.max)) {
      tir_bound_t r = unknown;
      if (!is_inf(a.min)) r.min = a.min >= 0 ? 0 : (floor ? arith_floordiv(a.min, b.min) : a.min / b.min);
      if (!is_inf(a.max)) r.max = a.max <= 0 ? 0 : a.max / b.min;
      return r;
    }
    return unknown;
  }
  int64_t bs[2] = {b.min, b.max};
  tir_bound_t r = {ARITH_POS_INF, ARITH_NEG_INF};
  for (int i = 0; i < 2; i++) {
    if (is_inf(bs[i])) { /* x / inf tends to 0 (or -1 for negative floor) */
      r.min = min2(r.min, min2(0, floor && (a.min < 0) ? -1 : 0));
      r.max = max2(r.max, max2(0, floor && (a.max < 0) ? -1 : 0));
      continue;
    }
    int64_t as[2] = {a.min, a.max};
    for (int j = 0; j < 2; j++) {
      int64_t q = floor ? arith_floordiv(as[j], bs[i]) : (bs[i] == -1 ? -as[j] : as[j] / bs[i]);
      if (bs[i] == -1 && as[j] == INT64_MIN) c->ovf = true;
      r.min = min2(r.min, q);
      r.max = max2(r.max, q);
    }
  }
  return r;
}

static tir_bound_t bound_floormod(tir_bound_t a, tir_bound_t b, const tir_expr_t *divisor) {
  tir_bound_t unknown = {ARITH_NEG_INF, ARITH_POS_INF};
  if (b.min <= 0) return unknown; /* only positive divisors are analysed */
  int64_t c;
  if (tir_as_int(divisor, &c) && !is_inf(a.min) && !is_inf(a.max) &&
      arith_floordiv(a.min, c) == arith_floordiv(a.max, c)) {
    tir_bound_t r = {arith_floormod(a.min, c), arith_floormod(a.max, c)};
    return r; /* within one period: exact */
  }
  int64_t top = is_inf(b.max) ? ARITH_POS_INF : b.max - 1;
  tir_bound_t r = {0, top};
  if (a.min >= 0 && a.max < top) r.max = a.max;
  return r;
}

static tir_bound_t bound_truncmod(tir_bound_t a, tir_bound_t b) {
  tir_bound_t unknown = {ARITH_NEG_INF, ARITH_POS_INF};
  if (b.min <= 0 && b.max >= 0) return unknown;
  if (is_inf(b.min) || is_inf(b.max)) return a.min >= 0 ? (tir_bound_t){0, a.max} : unknown;
  int64_t m = max2(b.max > 0 ? b.max : -b.min, b.min > 0 ? b.min : -b.max) - 1;
  tir_bound_t r = {max2(a.min, -m), min2(a.max, m)};
  if (a.min >= 0) r.min = 0;
  if (a.max <= 0) r.max = 0;
  return r;
}

static tir_bound_t bound_binary(bound_ctx_t *c, tir_expr_t *e) {
  tir_bound_t a = bound_of(c, e->u.bin.a), b = bound_of(c, e->u.bin.b), r;
  switch (e->kind) {
  case TIR_ADD:
    r.min = arith_ext_add(a.min, b.min, &c->ovf);
    r.max = arith_ext_add(a.max, b.max, &c->ovf);
    return r;
  case TIR_SUB:
    r.min = arith_ext_add(a.min, arith_ext_neg(b.max), &c->ovf);
    r.max = arith_ext_add(a.max, arith_ext_neg(b.min), &c->ovf);
    return r;
  case TIR_MUL: return bound_mul(c, a, b);
  case TIR_FLOOR_DIV: return bound_div(c, a, b, true);
  case TIR_DIV: return bound_div(c, a, b, false);
  case TIR_FLOOR_MOD: return bound_floormod(a, b, e->u.bin.b);
  case TIR_MOD: return bound_truncmod(a, b);
  case TIR_MIN: r.min = min2(a.min, b.min); r.max = min2(a.max, b.max); return r;
  case TIR_MAX: r.min = max2(a.min, b.min); r.max = max2(a.max, b.max); return r;
  default: return arith_dtype_bound(e->dtype); /* comparisons, and/or: [0, 1] */
  }
}

static tir_bound_t bound_union(tir_bound_t a, tir_bound_t b) {
  tir_bound_t r = {min2(a.min, b.min), max2(a.max, b.max)};
  return r;
}

static tir_bound_t bound_var(bound_ctx_t *c, tir_expr_t *e) {
  arith_var_info_t *info = arith_var_info(c->an, e);
  return info ? info->bound : arith_dtype_bound(e->dtype);
}

static tir_bound_t bound_cast(bound_ctx_t *c, tir_expr_t *e) {
  tir_expr_t *x = e->u.un.a;
  if (!tir_dtype_is_integer(x->dtype)) return arith_dtype_bound(e->dtype);
  tir_bound_t b = bound_of(c, x), d = arith_dtype_bound(e->dtype);
  if (b.min < d.min || b.max > d.max) return d;
  return b;
}

static tir_bound_t bound_of(bound_ctx_t *c, tir_expr_t *e) {
  tir_bound_t r = arith_dtype_bound(e->dtype);
  if (!tir_dtype_is_integer(e->dtype) || e->dtype.lanes != 1) return r;
  bool ovf_before = c->ovf;
  c->ovf = false;
  switch (tir_expr_kind_shape(e->kind)) {
  case TIR_SHAPE_IMM:
    if (e->kind == TIR_INT_IMM && !is_inf(e->u.int_value)) r.min = r.max = e->u.int_value;
    break;
  case TIR_SHAPE_LEAF: r = bound_var(c, e); break;
  case TIR_SHAPE_BINARY: r = bound_binary(c, e); break;
  case TIR_SHAPE_UNARY:
    if (e->kind == TIR_CAST) r = bound_cast(c, e);
    break;
  case TIR_SHAPE_SELECT: {
    bool cond;
    if (arith_as_bool(e->u.select.cond, &cond)) {
      r = bound_of(c, cond ? e->u.select.t : e->u.select.f);
    } else {
      r = bound_union(bound_of(c, e->u.select.t), bound_of(c, e->u.select.f));
    }
    break;
  }
  case TIR_SHAPE_CALL:
    if (e->u.call.op == TIR_OP_IF_THEN_ELSE && e->u.call.nargs == 3)
      r = bound_union(bound_of(c, e->u.call.args[1]), bound_of(c, e->u.call.args[2]));
    break;
  default: break;
  }
  r = arith_bound_clamp(r, e->dtype, c->ovf);
  c->ovf = ovf_before;
  return r;
}

tir_bound_t tir_const_bound(tir_analyzer_t *an, tir_expr_t *e) {
  bound_ctx_t c = {an, false};
  if (!e) return (tir_bound_t){ARITH_NEG_INF, ARITH_POS_INF};
  return bound_of(&c, e);
}
