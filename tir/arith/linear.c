/*
 * linear.c - linear forms of integer expressions: sum(coef * atom) + base.
 *
 * The simplifier turns every integer +, -, and multiplication by a constant
 * into a linear form, merges equal atoms (this is what cancels i + j - i), and
 * writes the form back canonically. Coefficients are kept modulo 2^bits of the
 * dtype (the ring the hardware computes in), so canonicalising is exact even
 * when values wrap.
 *
 * Term order (for deterministic text): descending coefficient as TVM does,
 * ties broken by arith_expr_cmp, which never looks at addresses: variables
 * come first, bound ones in bind order (outer loops first), then unbound ones
 * by name; any remaining tie keeps the order of first appearance in the input.
 */
#include "tir/arith/arith_internal.h"

#include <string.h>

/* ---- structural order and equality ------------------------------------- */

static int cmp_int(int64_t a, int64_t b) { return a < b ? -1 : a > b; }

static int cmp_dtype(tir_dtype_t a, tir_dtype_t b) {
  if (a.code != b.code) return cmp_int(a.code, b.code);
  if (a.bits != b.bits) return cmp_int(a.bits, b.bits);
  return cmp_int(a.lanes, b.lanes);
}

static int cmp_var(const tir_analyzer_t *an, const tir_expr_t *a, const tir_expr_t *b) {
  const arith_var_info_t *ia = arith_var_info(an, a), *ib = arith_var_info(an, b);
  int oa = ia ? ia->order : -1, ob = ib ? ib->order : -1;
  if (oa >= 0 || ob >= 0) {
    if (oa < 0) return 1; /* bound variables first */
    if (ob < 0) return -1;
    return cmp_int(oa, ob);
  }
  const char *na = a->u.var.name ? a->u.var.name : "", *nb = b->u.var.name ? b->u.var.name : "";
  int c = strcmp(na, nb);
  return c < 0 ? -1 : c > 0;
}

static int cmp_list(const tir_analyzer_t *an, tir_expr_t *const *a, int na, tir_expr_t *const *b,
                    int nb) {
  if (na != nb) return cmp_int(na, nb);
  for (int i = 0; i < na; i++) {
    int c = arith_expr_cmp(an, a[i], b[i]);
    if (c) return c;
  }
  return 0;
}

static int cmp_same_kind(const tir_analyzer_t *an, const tir_expr_t *a, const tir_expr_t *b) {
  switch (tir_expr_kind_shape(a->kind)) {
  case TIR_SHAPE_IMM:
    if (a->kind == TIR_INT_IMM) return cmp_int(a->u.int_value, b->u.int_value);
    if (a->kind == TIR_FLOAT_IMM)
      return a->u.float_value < b->u.float_value ? -1 : a->u.float_value > b->u.float_value;
    return strcmp(a->u.str_value, b->u.str_value) < 0 ? -1 : strcmp(a->u.str_value, b->u.str_value) > 0;
  case TIR_SHAPE_LEAF: return cmp_var(an, a, b);
  case TIR_SHAPE_BINARY: {
    int c = arith_expr_cmp(an, a->u.bin.a, b->u.bin.a);
    return c ? c : arith_expr_cmp(an, a->u.bin.b, b->u.bin.b);
  }
  case TIR_SHAPE_UNARY: return arith_expr_cmp(an, a->u.un.a, b->u.un.a);
  case TIR_SHAPE_SELECT: {
    tir_expr_t *const xa[3] = {a->u.select.cond, a->u.select.t, a->u.select.f};
    tir_expr_t *const xb[3] = {b->u.select.cond, b->u.select.t, b->u.select.f};
    return cmp_list(an, xa, 3, xb, 3);
  }
  case TIR_SHAPE_LOAD: {
    int c = strcmp(a->u.load.buffer->name ? a->u.load.buffer->name : "",
                   b->u.load.buffer->name ? b->u.load.buffer->name : "");
    if (c) return c < 0 ? -1 : 1;
    return cmp_list(an, a->u.load.indices, a->u.load.nindices, b->u.load.indices,
                    b->u.load.nindices);
  }
  case TIR_SHAPE_RAMP: {
    int c = arith_expr_cmp(an, a->u.ramp.base, b->u.ramp.base);
    if (!c) c = arith_expr_cmp(an, a->u.ramp.stride, b->u.ramp.stride);
    return c ? c : cmp_int(a->u.ramp.lanes, b->u.ramp.lanes);
  }
  case TIR_SHAPE_BROADCAST: {
    int c = arith_expr_cmp(an, a->u.broadcast.value, b->u.broadcast.value);
    return c ? c : cmp_int(a->u.broadcast.lanes, b->u.broadcast.lanes);
  }
  case TIR_SHAPE_CALL:
    if (a->u.call.op != b->u.call.op) return cmp_int(a->u.call.op, b->u.call.op);
    return cmp_list(an, a->u.call.args, a->u.call.nargs, b->u.call.args, b->u.call.nargs);
  }
  return 0;
}

/* Kind rank: variables first, then the other kinds in table order. */
static int kind_rank(tir_expr_kind_t k) { return k == TIR_VAR ? -1 : (int)k; }

int arith_expr_cmp(const tir_analyzer_t *an, const tir_expr_t *a, const tir_expr_t *b) {
  if (a == b) return 0;
  if (a->kind != b->kind) return cmp_int(kind_rank(a->kind), kind_rank(b->kind));
  int c = cmp_dtype(a->dtype, b->dtype);
  return c ? c : cmp_same_kind(an, a, b);
}

static bool equal_list(tir_expr_t *const *a, int na, tir_expr_t *const *b, int nb) {
  if (na != nb) return false;
  for (int i = 0; i < na; i++)
    if (!arith_expr_equal(a[i], b[i])) return false;
  return true;
}

bool arith_expr_equal(const tir_expr_t *a, const tir_expr_t *b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || !tir_dtype_eq(a->dtype, b->dtype)) return false;
  switch (tir_expr_kind_shape(a->kind)) {
  case TIR_SHAPE_IMM:
    if (a->kind == TIR_INT_IMM) return a->u.int_value == b->u.int_value;
    if (a->kind == TIR_FLOAT_IMM)
      return memcmp(&a->u.float_value, &b->u.float_value, sizeof(double)) == 0;
    return strcmp(a->u.str_value, b->u.str_value) == 0;
  case TIR_SHAPE_LEAF: return false; /* distinct variables */
  case TIR_SHAPE_BINARY:
    return arith_expr_equal(a->u.bin.a, b->u.bin.a) && arith_expr_equal(a->u.bin.b, b->u.bin.b);
  case TIR_SHAPE_UNARY: return arith_expr_equal(a->u.un.a, b->u.un.a);
  case TIR_SHAPE_SELECT:
    return arith_expr_equal(a->u.select.cond, b->u.select.cond) &&
           arith_expr_equal(a->u.select.t, b->u.select.t) &&
           arith_expr_equal(a->u.select.f, b->u.select.f);
  case TIR_SHAPE_LOAD:
    return a->u.load.buffer == b->u.load.buffer &&
           equal_list(a->u.load.indices, a->u.load.nindices, b->u.load.indices, b->u.load.nindices);
  case TIR_SHAPE_RAMP:
    return a->u.ramp.lanes == b->u.ramp.lanes && arith_expr_equal(a->u.ramp.base, b->u.ramp.base) &&
           arith_expr_equal(a->u.ramp.stride, b->u.ramp.stride);
  case TIR_SHAPE_BROADCAST:
    return a->u.broadcast.lanes == b->u.broadcast.lanes &&
           arith_expr_equal(a->u.broadcast.value, b->u.broadcast.value);
  case TIR_SHAPE_CALL:
    return a->u.call.op == b->u.call.op &&
           equal_list(a->u.call.args, a->u.call.nargs, b->u.call.args, b->u.call.nargs);
  }
  return false;
}

/* ---- building linear forms --------------------------------------------- */

void arith_lin_init(arith_lin_t *l, tir_dtype_t t) {
  memset(l, 0, sizeof(*l));
  l->dtype = t;
}

static int64_t coef_add(const arith_lin_t *l, int64_t a, int64_t b) {
  return arith_coef_wrap(l->dtype, (uint64_t)a + (uint64_t)b);
}

static int64_t coef_mul(const arith_lin_t *l, int64_t a, int64_t b) {
  return arith_coef_wrap(l->dtype, (uint64_t)a * (uint64_t)b);
}

void arith_lin_add_term(tir_analyzer_t *an, arith_lin_t *l, tir_expr_t *atom, int64_t coef) {
  if (coef == 0) return;
  for (int i = 0; i < l->n; i++) {
    if (arith_expr_equal(l->terms[i].atom, atom)) {
      l->terms[i].coef = coef_add(l, l->terms[i].coef, coef);
      return;
    }
  }
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 8;
    arith_term_t *t = mlc_arena_grow(an->arena, l->terms, (size_t)l->n, (size_t)cap, sizeof(*t));
    if (!t) return; /* only reachable without an OOM handler; callers guard with one */
    l->terms = t;
    l->cap = cap;
  }
  l->terms[l->n].atom = atom;
  l->terms[l->n].coef = arith_coef_wrap(l->dtype, (uint64_t)coef);
  l->n++;
}

void arith_lin_add_expr(tir_analyzer_t *an, arith_lin_t *l, tir_expr_t *e, int64_t scale) {
  int64_t c;
  switch (e->kind) {
  case TIR_INT_IMM: l->base = coef_add(l, l->base, coef_mul(l, e->u.int_value, scale)); return;
  case TIR_ADD:
    arith_lin_add_expr(an, l, e->u.bin.a, scale);
    arith_lin_add_expr(an, l, e->u.bin.b, scale);
    return;
  case TIR_SUB:
    arith_lin_add_expr(an, l, e->u.bin.a, scale);
    arith_lin_add_expr(an, l, e->u.bin.b, coef_mul(l, scale, -1));
    return;
  case TIR_MUL:
    if (tir_as_int(e->u.bin.b, &c)) {
      arith_lin_add_expr(an, l, e->u.bin.a, coef_mul(l, scale, c));
      return;
    }
    if (tir_as_int(e->u.bin.a, &c)) {
      arith_lin_add_expr(an, l, e->u.bin.b, coef_mul(l, scale, c));
      return;
    }
    break;
  default: break;
  }
  arith_lin_add_term(an, l, e, scale);
}

void arith_lin_add_lin(tir_analyzer_t *an, arith_lin_t *l, const arith_lin_t *o, int64_t scale) {
  for (int i = 0; i < o->n; i++)
    arith_lin_add_term(an, l, o->terms[i].atom, coef_mul(l, o->terms[i].coef, scale));
  l->base = coef_add(l, l->base, coef_mul(l, o->base, scale));
}

/* floordiv(x, c) with coefficient c*s and floormod(x, c) with s: x * s
 * (floordiv(x, c) * c + floormod(x, c) == x). Returns true when merged. */
static bool merge_div_mod(tir_analyzer_t *an, arith_lin_t *l, int i) {
  tir_expr_t *d = l->terms[i].atom;
  int64_t c;
  if (d->kind != TIR_FLOOR_DIV || !tir_as_int(d->u.bin.b, &c) || c <= 0) return false;
  for (int j = 0; j < l->n; j++) {
    tir_expr_t *m = l->terms[j].atom;
    if (j == i || m->kind != TIR_FLOOR_MOD || !tir_is_const_int(m->u.bin.b, c)) continue;
    if (l->terms[j].coef == 0 || !arith_expr_equal(d->u.bin.a, m->u.bin.a)) continue;
    int64_t s = l->terms[j].coef;
    if (coef_mul(l, s, c) != l->terms[i].coef) continue;
    l->terms[i].coef = 0;
    l->terms[j].coef = 0;
    arith_lin_add_expr(an, l, d->u.bin.a, s);
    return true;
  }
  return false;
}

void arith_lin_normalize(tir_analyzer_t *an, arith_lin_t *l) {
  for (int i = 0; i < l->n; i++)
    if (l->terms[i].coef != 0 && merge_div_mod(an, l, i)) i = -1; /* rescan after a merge */
  int n = 0;
  for (int i = 0; i < l->n; i++)
    if (l->terms[i].coef != 0) l->terms[n++] = l->terms[i];
  l->n = n;
}

/* ---- writing linear forms back ------------------------------------------ */

static bool term_before(const tir_analyzer_t *an, const arith_term_t *a, const arith_term_t *b) {
  if (a->coef != b->coef) return a->coef > b->coef;
  return arith_expr_cmp(an, a->atom, b->atom) < 0;
}

/* Stable insertion sort: ties keep their order of first appearance. */
static void sort_terms(const tir_analyzer_t *an, arith_term_t *t, int n) {
  for (int i = 1; i < n; i++) {
    arith_term_t x = t[i];
    int j = i - 1;
    while (j >= 0 && term_before(an, &x, &t[j])) {
      t[j + 1] = t[j];
      j--;
    }
    t[j + 1] = x;
  }
}

static tir_expr_t *konst(tir_analyzer_t *an, tir_dtype_t t, int64_t v) {
  return tir_int(an->arena, t, arith_int_norm(t, v));
}

static tir_expr_t *scaled(tir_analyzer_t *an, tir_expr_t *atom, int64_t coef) {
  if (coef == 1) return atom;
  return tir_binary(an->arena, TIR_MUL, atom, konst(an, atom->dtype, coef));
}

static tir_expr_t *append(tir_analyzer_t *an, tir_expr_t *acc, tir_expr_kind_t kind, tir_expr_t *x) {
  return acc ? tir_binary(an->arena, kind, acc, x) : x;
}

tir_expr_t *arith_lin_to_expr(tir_analyzer_t *an, arith_lin_t *l) {
  arith_lin_normalize(an, l);
  sort_terms(an, l->terms, l->n);
  tir_expr_t *acc = NULL;
  for (int i = 0; i < l->n; i++)
    if (l->terms[i].coef > 0) acc = append(an, acc, TIR_ADD, scaled(an, l->terms[i].atom, l->terms[i].coef));
  if (l->base > 0) acc = append(an, acc, TIR_ADD, konst(an, l->dtype, l->base));
  for (int i = 0; i < l->n; i++) {
    int64_t c = l->terms[i].coef;
    if (c >= 0) continue;
    if (!acc) {
      acc = scaled(an, l->terms[i].atom, c); /* leading negative term: x * -c */
      continue;
    }
    acc = tir_binary(an->arena, TIR_SUB, acc,
                     scaled(an, l->terms[i].atom, arith_coef_wrap(l->dtype, 0 - (uint64_t)c)));
  }
  if (l->base < 0 || !acc) {
    if (!acc) return konst(an, l->dtype, l->base);
    acc = tir_binary(an->arena, TIR_SUB, acc,
                     konst(an, l->dtype, arith_coef_wrap(l->dtype, 0 - (uint64_t)l->base)));
  }
  return acc;
}

tir_bound_t arith_lin_bound(tir_analyzer_t *an, const arith_lin_t *l) {
  bool ovf = false;
  tir_bound_t r = {l->base, l->base};
  for (int i = 0; i < l->n; i++) {
    tir_bound_t b = arith_bound_scale(tir_const_bound(an, l->terms[i].atom), l->terms[i].coef, &ovf);
    r.min = arith_ext_add(r.min, b.min, &ovf);
    r.max = arith_ext_add(r.max, b.max, &ovf);
  }
  return arith_bound_clamp(r, l->dtype, ovf);
}
