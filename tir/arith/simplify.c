/*
 * simplify.c - tir_simplify and tir_prove: a bottom-up rewriter in the spirit
 * of TVM's RewriteSimplifier + CanonicalSimplifier.
 *
 * Children are simplified first; then the node is folded when its operands are
 * immediates, integer +, -, * become a canonical linear form (linear.c), and
 * division, modulo, min/max and comparisons are decided from constant bounds
 * of linear forms (bound.c). A node whose children and rule leave it unchanged
 * is returned as is, so unchanged subtrees stay shared.
 *
 * Overflow: int32/int64 index arithmetic is assumed not to overflow (as TVM
 * does). For narrower integers and for unsigned ones, a rule that depends on
 * exact values (division splitting, comparisons, min/max) fires only when the
 * bounds prove the operands do not wrap.
 */
#include "tir/arith/arith_internal.h"

/* ---- small helpers ---------------------------------------------------- */

static tir_expr_t *konst(tir_analyzer_t *an, tir_dtype_t t, int64_t v) {
  return tir_int(an->arena, t, arith_int_norm(t, v));
}

static tir_expr_t *rebuild_bin(tir_analyzer_t *an, tir_expr_t *e, tir_expr_t *a, tir_expr_t *b) {
  if (a == e->u.bin.a && b == e->u.bin.b) return e;
  tir_expr_t *r = tir_expr_copy(an->arena, e);
  if (!r) return e;
  r->u.bin.a = a;
  r->u.bin.b = b;
  return r;
}

/* e itself when r is structurally equal to it (keeps sharing), else r. */
static tir_expr_t *same_or(tir_expr_t *e, tir_expr_t *r) {
  return r && !arith_expr_equal(e, r) ? r : e;
}

static int64_t gcd64(int64_t a, int64_t b) {
  uint64_t x = a < 0 ? 0 - (uint64_t)a : (uint64_t)a, y = b < 0 ? 0 - (uint64_t)b : (uint64_t)b;
  while (y) {
    uint64_t t = x % y;
    x = y;
    y = t;
  }
  return x > INT64_MAX ? 0 : (int64_t)x;
}

static void lin_of(tir_analyzer_t *an, arith_lin_t *l, tir_expr_t *e) {
  arith_lin_init(l, e->dtype);
  arith_lin_add_expr(an, l, e, 1);
  arith_lin_normalize(an, l);
}

/* True when the linear form's value is its exact integer value (no wrap):
 * assumed for int32/int64 as in TVM, proven from bounds otherwise. */
static bool lin_exact(tir_analyzer_t *an, const arith_lin_t *l) {
  if (l->dtype.code == TIR_CODE_INT && l->dtype.bits >= 32) return true;
  bool ovf = false;
  tir_bound_t r = {l->base, l->base}, d = arith_dtype_bound(l->dtype);
  for (int i = 0; i < l->n; i++) {
    tir_bound_t b = arith_bound_scale(tir_const_bound(an, l->terms[i].atom), l->terms[i].coef, &ovf);
    r.min = arith_ext_add(r.min, b.min, &ovf);
    r.max = arith_ext_add(r.max, b.max, &ovf);
  }
  return !ovf && r.min >= d.min && r.max <= d.max && r.min != ARITH_NEG_INF &&
         r.max != ARITH_POS_INF;
}

/* Bound of a - b as exact integers, or unknown when either side may wrap. */
static tir_bound_t diff_bound(tir_analyzer_t *an, tir_expr_t *a, tir_expr_t *b, arith_lin_t *d) {
  arith_lin_t la, lb;
  lin_of(an, &la, a);
  lin_of(an, &lb, b);
  arith_lin_init(d, tir_dt_INT64());
  tir_bound_t unknown = {ARITH_NEG_INF, ARITH_POS_INF};
  if (!lin_exact(an, &la) || !lin_exact(an, &lb)) return unknown;
  arith_lin_add_lin(an, d, &la, 1);
  arith_lin_add_lin(an, d, &lb, -1);
  arith_lin_normalize(an, d);
  return arith_lin_bound(an, d);
}

/* ---- + - * --------------------------------------------------------------- */

static tir_expr_t *simplify_linear(tir_analyzer_t *an, tir_expr_t *e, tir_expr_t *a, tir_expr_t *b) {
  arith_lin_t l;
  arith_lin_init(&l, e->dtype);
  arith_lin_add_expr(an, &l, a, 1);
  arith_lin_add_expr(an, &l, b, e->kind == TIR_SUB ? -1 : 1);
  return same_or(rebuild_bin(an, e, a, b), arith_lin_to_expr(an, &l));
}

/* Appends the non-constant factors of a product chain. */
static void collect_factors(tir_expr_t *x, tir_expr_t **out, int *n, int cap) {
  if (x->kind == TIR_MUL && *n < cap - 1) {
    collect_factors(x->u.bin.a, out, n, cap);
    collect_factors(x->u.bin.b, out, n, cap);
    return;
  }
  if (*n < cap) out[(*n)++] = x;
}

/* x * y with both non-constant: factors sorted into one left-leaning chain,
 * so n * m and m * n are one term. */
static tir_expr_t *product_atom(tir_analyzer_t *an, tir_expr_t *x, tir_expr_t *y) {
  tir_expr_t *f[32];
  int n = 0;
  collect_factors(x, f, &n, 16);
  int nx = n;
  collect_factors(y, f, &n, 32);
  if (n == 32 || nx == 16) return tir_binary(an->arena, TIR_MUL, x, y); /* too long to sort */
  for (int i = 1; i < n; i++) {
    tir_expr_t *t = f[i];
    int j = i - 1;
    while (j >= 0 && arith_expr_cmp(an, t, f[j]) < 0) {
      f[j + 1] = f[j];
      j--;
    }
    f[j + 1] = t;
  }
  tir_expr_t *acc = f[0];
  for (int i = 1; i < n; i++) acc = tir_binary(an->arena, TIR_MUL, acc, f[i]);
  return acc;
}

static tir_expr_t *simplify_mul(tir_analyzer_t *an, tir_expr_t *e, tir_expr_t *a, tir_expr_t *b) {
  int64_t c;
  arith_lin_t l;
  arith_lin_init(&l, e->dtype);
  if (tir_as_int(b, &c)) {
    arith_lin_add_expr(an, &l, a, c);
  } else if (tir_as_int(a, &c)) {
    arith_lin_add_expr(an, &l, b, c);
  } else {
    arith_lin_t la, lb;
    lin_of(an, &la, a);
    lin_of(an, &lb, b);
    if (la.n == 1 && la.base == 0 && lb.n == 1 && lb.base == 0) {
      int64_t coef = arith_coef_wrap(e->dtype, (uint64_t)la.terms[0].coef * (uint64_t)lb.terms[0].coef);
      arith_lin_add_term(an, &l, product_atom(an, la.terms[0].atom, lb.terms[0].atom), coef);
    } else {
      arith_lin_add_term(an, &l, product_atom(an, a, b), 1);
    }
  }
  return same_or(rebuild_bin(an, e, a, b), arith_lin_to_expr(an, &l));
}

/* ---- floordiv / floormod by a positive constant ------------------------- */

static tir_expr_t *floordiv_const(tir_analyzer_t *an, tir_expr_t *a, int64_t c);
static tir_expr_t *floormod_const(tir_analyzer_t *an, tir_expr_t *a, int64_t c);

/* gcd of c with every coefficient and the base of l. */
static int64_t lin_gcd(const arith_lin_t *l, int64_t c) {
  int64_t g = gcd64(c, l->base);
  for (int i = 0; i < l->n && g > 1; i++) g = gcd64(g, l->terms[i].coef);
  return g;
}

static void lin_divide(arith_lin_t *l, int64_t g) {
  for (int i = 0; i < l->n; i++) l->terms[i].coef /= g;
  l->base /= g;
}

/* floordiv(r, c) where r has no part divisible by c. */
static tir_expr_t *floordiv_rest(tir_analyzer_t *an, arith_lin_t *r, int64_t c) {
  int64_t g = lin_gcd(r, c);
  if (g > 1) { /* floordiv(g*x, g*c') = floordiv(x, c') */
    lin_divide(r, g);
    c /= g;
  }
  tir_expr_t *x = arith_lin_to_expr(an, r);
  if (c == 1) return x;
  int64_t c2, cc;
  if (x->kind == TIR_FLOOR_DIV && tir_as_int(x->u.bin.b, &c2) && c2 > 0 &&
      !__builtin_mul_overflow(c2, c, &cc) && arith_int_norm(x->dtype, cc) == cc)
    return floordiv_const(an, x->u.bin.a, cc); /* floordiv(floordiv(y, c2), c) */
  return tir_binary(an->arena, TIR_FLOOR_DIV, x, konst(an, x->dtype, c));
}

static tir_expr_t *floordiv_const(tir_analyzer_t *an, tir_expr_t *a, int64_t c) {
  if (c == 1) return a;
  if (a->kind == TIR_INT_IMM) return konst(an, a->dtype, arith_floordiv(a->u.int_value, c));
  arith_lin_t l, d, r;
  lin_of(an, &l, a);
  if (!lin_exact(an, &l)) return tir_binary(an->arena, TIR_FLOOR_DIV, a, konst(an, a->dtype, c));
  /* a = d * c + r: floordiv(a, c) = d + floordiv(r, c) */
  arith_lin_init(&d, a->dtype);
  arith_lin_init(&r, a->dtype);
  for (int i = 0; i < l.n; i++) {
    if (l.terms[i].coef % c == 0)
      arith_lin_add_term(an, &d, l.terms[i].atom, l.terms[i].coef / c);
    else
      arith_lin_add_term(an, &r, l.terms[i].atom, l.terms[i].coef);
  }
  if (l.base % c == 0) d.base = l.base / c;
  else r.base = l.base;
  tir_bound_t rb = arith_lin_bound(an, &r);
  if (r.n == 0 || (rb.min != ARITH_NEG_INF && rb.max != ARITH_POS_INF &&
                   arith_floordiv(rb.min, c) == arith_floordiv(rb.max, c))) {
    d.base += arith_floordiv(rb.min, c); /* r within one period: a constant */
    return arith_lin_to_expr(an, &d);
  }
  /* The dividend left in the result must not wrap (d may: + - * are exact
   * modulo 2^bits, the division is not). */
  if (!lin_exact(an, &r)) return tir_binary(an->arena, TIR_FLOOR_DIV, a, konst(an, a->dtype, c));
  arith_lin_add_expr(an, &d, floordiv_rest(an, &r, c), 1);
  return arith_lin_to_expr(an, &d);
}

static tir_expr_t *floormod_rest(tir_analyzer_t *an, arith_lin_t *r, int64_t c) {
  int64_t g = lin_gcd(r, c);
  if (g > 1) { /* floormod(g*x, g*c') = g * floormod(x, c') */
    lin_divide(r, g);
    tir_expr_t *inner = floormod_const(an, arith_lin_to_expr(an, r), c / g);
    arith_lin_t out;
    arith_lin_init(&out, r->dtype);
    arith_lin_add_expr(an, &out, inner, g);
    return arith_lin_to_expr(an, &out);
  }
  tir_expr_t *x = arith_lin_to_expr(an, r);
  int64_t c2;
  if (x->kind == TIR_FLOOR_MOD && tir_as_int(x->u.bin.b, &c2) && c2 > 0 && c2 % c == 0)
    x = x->u.bin.a; /* floormod(floormod(y, k*c), c) = floormod(y, c) */
  return tir_binary(an->arena, TIR_FLOOR_MOD, x, konst(an, x->dtype, c));
}

static tir_expr_t *floormod_const(tir_analyzer_t *an, tir_expr_t *a, int64_t c) {
  if (c == 1) return konst(an, a->dtype, 0);
  if (a->kind == TIR_INT_IMM) return konst(an, a->dtype, arith_floormod(a->u.int_value, c));
  arith_lin_t l, r;
  lin_of(an, &l, a);
  if (!lin_exact(an, &l)) return tir_binary(an->arena, TIR_FLOOR_MOD, a, konst(an, a->dtype, c));
  arith_lin_init(&r, a->dtype);
  for (int i = 0; i < l.n; i++) /* multiples of c vanish */
    if (l.terms[i].coef % c != 0) arith_lin_add_term(an, &r, l.terms[i].atom, l.terms[i].coef);
  r.base = arith_floormod(l.base, c);
  if (r.n == 0) return konst(an, a->dtype, r.base);
  tir_bound_t rb = arith_lin_bound(an, &r);
  if (rb.min != ARITH_NEG_INF && rb.max != ARITH_POS_INF &&
      arith_floordiv(rb.min, c) == arith_floordiv(rb.max, c)) {
    r.base -= arith_floordiv(rb.min, c) * c; /* within one period */
    return arith_lin_to_expr(an, &r);
  }
  if (!lin_exact(an, &r)) /* the reduced dividend would wrap */
    return tir_binary(an->arena, TIR_FLOOR_MOD, a, konst(an, a->dtype, c));
  return floormod_rest(an, &r, c);
}

/* ---- division and modulo ------------------------------------------------ */

static bool is_div_kind(tir_expr_kind_t k) { return k == TIR_FLOOR_DIV || k == TIR_DIV; }

/* Division by a non-constant: 0 <= a < b decides it. */
static tir_expr_t *div_by_expr(tir_analyzer_t *an, tir_expr_t *e, tir_expr_t *a, tir_expr_t *b) {
  tir_bound_t ba = tir_const_bound(an, a), bb = tir_const_bound(an, b);
  if (ba.min >= 0 && ba.max != ARITH_POS_INF && bb.min > ba.max)
    return is_div_kind(e->kind) ? konst(an, e->dtype, 0) : a;
  return rebuild_bin(an, e, a, b);
}

static tir_expr_t *simplify_div(tir_analyzer_t *an, tir_expr_t *e, tir_expr_t *a, tir_expr_t *b) {
  int64_t c;
  if (!tir_as_int(b, &c)) return div_by_expr(an, e, a, b);
  if (c <= 0) return rebuild_bin(an, e, a, b);
  bool trunc = e->kind == TIR_DIV || e->kind == TIR_MOD;
  if (trunc && c == 1) return e->kind == TIR_DIV ? a : konst(an, e->dtype, 0);
  /* Truncated and floor division agree on non-negative dividends. */
  if (trunc && (e->dtype.code == TIR_CODE_INT && tir_const_bound(an, a).min < 0))
    return rebuild_bin(an, e, a, b);
  tir_expr_t *r = is_div_kind(e->kind) ? floordiv_const(an, a, c) : floormod_const(an, a, c);
  if (trunc && (r->kind == TIR_FLOOR_DIV || r->kind == TIR_FLOOR_MOD) &&
      arith_expr_equal(r->u.bin.a, a) && tir_is_const_int(r->u.bin.b, c))
    return rebuild_bin(an, e, a, b); /* nothing gained: keep the truncated spelling */
  return same_or(rebuild_bin(an, e, a, b), r);
}

/* ---- min / max ----------------------------------------------------------- */

static tir_expr_t *simplify_minmax(tir_analyzer_t *an, tir_expr_t *e, tir_expr_t *a, tir_expr_t *b) {
  bool is_min = e->kind == TIR_MIN;
  if (arith_expr_equal(a, b)) return a;
  arith_lin_t d;
  tir_bound_t bd = diff_bound(an, a, b, &d);
  if (bd.max <= 0 && bd.max != ARITH_POS_INF) return is_min ? a : b; /* a <= b */
  if (bd.min >= 0 && bd.min != ARITH_NEG_INF) return is_min ? b : a; /* a >= b */
  /* min(min(x, c1), c2) = min(x, min(c1, c2)) */
  if (a->kind == e->kind && a->u.bin.b->kind == TIR_INT_IMM && b->kind == TIR_INT_IMM) {
    tir_expr_t *k = arith_fold_binary(an->arena, e->kind, a->u.bin.b, b);
    if (k) return rebuild_bin(an, e, a->u.bin.a, k);
  }
  /* Commutative: constants last, otherwise in term order. */
  if ((a->kind == TIR_INT_IMM && b->kind != TIR_INT_IMM) ||
      (b->kind != TIR_INT_IMM && arith_expr_cmp(an, a, b) > 0)) {
    tir_expr_t *t = a;
    a = b;
    b = t;
  }
  return rebuild_bin(an, e, a, b);
}

/* ---- comparisons --------------------------------------------------------- */

/* Whether `d OP 0` holds (1), fails (0) or is unknown (-1), for d in bd. */
static int decide(tir_expr_kind_t kind, tir_bound_t bd) {
  bool lo = bd.min != ARITH_NEG_INF, hi = bd.max != ARITH_POS_INF;
  switch (kind) {
  case TIR_LT: return hi && bd.max < 0 ? 1 : lo && bd.min >= 0 ? 0 : -1;
  case TIR_LE: return hi && bd.max <= 0 ? 1 : lo && bd.min > 0 ? 0 : -1;
  case TIR_GT: return lo && bd.min > 0 ? 1 : hi && bd.max <= 0 ? 0 : -1;
  case TIR_GE: return lo && bd.min >= 0 ? 1 : hi && bd.max < 0 ? 0 : -1;
  case TIR_EQ:
    if (lo && hi && bd.min == 0 && bd.max == 0) return 1;
    return (lo && bd.min > 0) || (hi && bd.max < 0) ? 0 : -1;
  case TIR_NE: {
    int eq = decide(TIR_EQ, bd);
    return eq < 0 ? -1 : !eq;
  }
  default: return -1;
  }
}

static tir_expr_t *simplify_compare(tir_analyzer_t *an, tir_expr_t *e, tir_expr_t *a, tir_expr_t *b) {
  if (arith_expr_equal(a, b))
    return tir_bool(an->arena, e->kind == TIR_EQ || e->kind == TIR_LE || e->kind == TIR_GE);
  arith_lin_t d;
  int r = decide(e->kind, diff_bound(an, a, b, &d));
  if (r >= 0) return tir_bool(an->arena, r == 1);
  /* x + k OP c  ->  x OP c - k (index types only, where overflow is ignored) */
  int64_t c;
  if (tir_as_int(b, &c) && a->dtype.code == TIR_CODE_INT && a->dtype.bits >= 32) {
    arith_lin_t la;
    lin_of(an, &la, a);
    int64_t nc;
    if (la.base != 0 && la.n > 0 && !__builtin_sub_overflow(c, la.base, &nc) &&
        arith_int_norm(a->dtype, nc) == nc) {
      la.base = 0;
      return rebuild_bin(an, e, arith_lin_to_expr(an, &la), konst(an, b->dtype, nc));
    }
  }
  return rebuild_bin(an, e, a, b);
}

/* ---- logic --------------------------------------------------------------- */

static tir_expr_t *simplify_logic(tir_analyzer_t *an, tir_expr_t *e, tir_expr_t *a, tir_expr_t *b) {
  bool ca, cb, and_ = e->kind == TIR_AND;
  bool ka = arith_as_bool(a, &ca), kb = arith_as_bool(b, &cb);
  /* x and False = False; x and True = x (dually for or). */
  if (ka && ca != and_) return a;
  if (kb && cb != and_) return b;
  if (ka) return b;
  if (kb) return a;
  if (arith_expr_equal(a, b)) return a;
  return rebuild_bin(an, e, a, b);
}

static tir_expr_t *simplify_not(tir_analyzer_t *an, tir_expr_t *e, tir_expr_t *a) {
  static const tir_expr_kind_t inverse[] = {[TIR_EQ] = TIR_NE, [TIR_NE] = TIR_EQ,
                                            [TIR_LT] = TIR_GE, [TIR_GE] = TIR_LT,
                                            [TIR_LE] = TIR_GT, [TIR_GT] = TIR_LE};
  tir_expr_t *f = arith_fold_unary(an->arena, TIR_NOT, e->dtype, a);
  if (f) return f;
  if (a->kind == TIR_NOT) return a->u.un.a;
  /* not (x < y) = x >= y; integers only (NaN breaks it for floats). */
  if (a->kind >= TIR_EQ && a->kind <= TIR_GE && tir_dtype_is_integer(a->u.bin.a->dtype))
    return tir_binary(an->arena, inverse[a->kind], a->u.bin.a, a->u.bin.b);
  if (a == e->u.un.a) return e;
  return tir_not(an->arena, a);
}

/* ---- dispatch ------------------------------------------------------------- */

static tir_expr_t *simplify_binary(tir_analyzer_t *an, tir_expr_t *e, tir_expr_t *a, tir_expr_t *b) {
  tir_expr_t *f = arith_fold_binary(an->arena, e->kind, a, b);
  if (f) return f;
  if (e->kind == TIR_AND || e->kind == TIR_OR) return simplify_logic(an, e, a, b);
  if (!arith_is_int_scalar(a->dtype) || !tir_dtype_eq(a->dtype, b->dtype))
    return rebuild_bin(an, e, a, b);
  switch (e->kind) {
  case TIR_ADD:
  case TIR_SUB: return simplify_linear(an, e, a, b);
  case TIR_MUL: return simplify_mul(an, e, a, b);
  case TIR_DIV:
  case TIR_MOD:
  case TIR_FLOOR_DIV:
  case TIR_FLOOR_MOD: return simplify_div(an, e, a, b);
  case TIR_MIN:
  case TIR_MAX: return simplify_minmax(an, e, a, b);
  default: return simplify_compare(an, e, a, b);
  }
}

static tir_expr_t *simplify_cast(tir_analyzer_t *an, tir_expr_t *e, tir_expr_t *a) {
  tir_expr_t *f = arith_fold_unary(an->arena, TIR_CAST, e->dtype, a);
  if (f) return f;
  if (tir_dtype_eq(a->dtype, e->dtype)) return a;
  if (a == e->u.un.a) return e;
  return tir_cast(an->arena, e->dtype, a);
}

static tir_expr_t *simplify_select(tir_analyzer_t *an, tir_expr_t *e) {
  tir_expr_t *c = arith_simplify(an, e->u.select.cond);
  bool v;
  if (arith_as_bool(c, &v)) return arith_simplify(an, v ? e->u.select.t : e->u.select.f);
  tir_expr_t *t = arith_simplify(an, e->u.select.t), *f = arith_simplify(an, e->u.select.f);
  if (arith_expr_equal(t, f)) return t;
  if (c == e->u.select.cond && t == e->u.select.t && f == e->u.select.f) return e;
  tir_expr_t *r = tir_expr_copy(an->arena, e);
  if (!r) return e;
  r->u.select.cond = c;
  r->u.select.t = t;
  r->u.select.f = f;
  return r;
}

/* Simplifies an array of children; a new array only when one changed. */
static tir_expr_t **simplify_list(tir_analyzer_t *an, tir_expr_t **xs, int n) {
  tir_expr_t **out = xs;
  for (int i = 0; i < n; i++) {
    tir_expr_t *x = arith_simplify(an, xs[i]);
    if (x != xs[i] && out == xs) {
      out = mlc_arena_memdup(an->arena, xs, sizeof(*xs) * (size_t)n);
      if (!out) return xs;
    }
    out[i] = x;
  }
  return out;
}

static tir_expr_t *simplify_call(tir_analyzer_t *an, tir_expr_t *e) {
  bool v;
  if (e->u.call.op == TIR_OP_IF_THEN_ELSE && e->u.call.nargs == 3) {
    tir_expr_t *c = arith_simplify(an, e->u.call.args[0]);
    if (arith_as_bool(c, &v)) return arith_simplify(an, e->u.call.args[v ? 1 : 2]);
  }
  tir_expr_t **args = simplify_list(an, e->u.call.args, e->u.call.nargs);
  if (e->u.call.op == TIR_OP_LIKELY && e->u.call.nargs == 1 && arith_as_bool(args[0], &v))
    return args[0];
  if (args == e->u.call.args) return e;
  tir_expr_t *r = tir_expr_copy(an->arena, e);
  if (!r) return e;
  r->u.call.args = args;
  return r;
}

static tir_expr_t *simplify_node(tir_analyzer_t *an, tir_expr_t *e) {
  tir_expr_t *r;
  switch (tir_expr_kind_shape(e->kind)) {
  case TIR_SHAPE_IMM:
  case TIR_SHAPE_LEAF: return e;
  case TIR_SHAPE_BINARY:
    return simplify_binary(an, e, arith_simplify(an, e->u.bin.a), arith_simplify(an, e->u.bin.b));
  case TIR_SHAPE_UNARY: {
    tir_expr_t *a = arith_simplify(an, e->u.un.a);
    return e->kind == TIR_NOT ? simplify_not(an, e, a) : simplify_cast(an, e, a);
  }
  case TIR_SHAPE_SELECT: return simplify_select(an, e);
  case TIR_SHAPE_CALL: return simplify_call(an, e);
  case TIR_SHAPE_LOAD: {
    tir_expr_t **idx = simplify_list(an, e->u.load.indices, e->u.load.nindices);
    if (idx == e->u.load.indices || !(r = tir_expr_copy(an->arena, e))) return e;
    r->u.load.indices = idx;
    return r;
  }
  case TIR_SHAPE_RAMP: {
    tir_expr_t *base = arith_simplify(an, e->u.ramp.base), *stride = arith_simplify(an, e->u.ramp.stride);
    if ((base == e->u.ramp.base && stride == e->u.ramp.stride) || !(r = tir_expr_copy(an->arena, e)))
      return e;
    r->u.ramp.base = base;
    r->u.ramp.stride = stride;
    return r;
  }
  case TIR_SHAPE_BROADCAST: {
    tir_expr_t *v = arith_simplify(an, e->u.broadcast.value);
    if (v == e->u.broadcast.value || !(r = tir_expr_copy(an->arena, e))) return e;
    r->u.broadcast.value = v;
    return r;
  }
  }
  return e;
}

tir_expr_t *arith_simplify(tir_analyzer_t *an, tir_expr_t *e) {
  if (!e || an->depth >= ARITH_MAX_DEPTH) return e;
  an->depth++;
  tir_expr_t *r = simplify_node(an, e);
  an->depth--;
  return r ? r : e;
}

/* ---- entry points ---------------------------------------------------------- */

tir_expr_t *arith_make(tir_analyzer_t *an, tir_expr_kind_t kind, tir_expr_t *a, tir_expr_t *b) {
  tir_expr_t *e = tir_binary(an->arena, kind, a, b);
  if (!e) return NULL;
  return simplify_binary(an, e, a, b);
}

tir_expr_t *arith_sub(tir_analyzer_t *an, tir_expr_t *a, tir_expr_t *b) {
  return arith_make(an, TIR_SUB, a, b);
}

bool arith_prove_equal(tir_analyzer_t *an, tir_expr_t *a, tir_expr_t *b) {
  if (arith_expr_equal(a, b)) return true;
  if (!arith_is_int_scalar(a->dtype) || !tir_dtype_eq(a->dtype, b->dtype)) return false;
  tir_expr_t *d = arith_sub(an, arith_simplify(an, a), arith_simplify(an, b));
  return d && tir_is_const_int(d, 0);
}

tir_expr_t *tir_simplify(tir_analyzer_t *an, tir_expr_t *e) {
  if (!an || !e) return e;
  jmp_buf jb;
  jmp_buf *prev = mlc_arena_set_oom_handler(an->arena, &jb);
  if (prev) { /* the caller handles out of memory: let it */
    mlc_arena_set_oom_handler(an->arena, prev);
    return arith_simplify(an, e);
  }
  int depth = an->depth;
  if (setjmp(jb)) {
    mlc_arena_set_oom_handler(an->arena, NULL);
    an->depth = depth;
    return e;
  }
  tir_expr_t *r = arith_simplify(an, e);
  mlc_arena_set_oom_handler(an->arena, NULL);
  return r;
}

bool tir_prove(tir_analyzer_t *an, tir_expr_t *cond) {
  bool v;
  tir_expr_t *s = tir_simplify(an, cond);
  return arith_as_bool(s, &v) && v;
}
