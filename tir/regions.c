/*
 * regions.c - symbolic bounds of index expressions (regions.h) and what the
 * parser calls when a block omits T.reads / T.writes: the block's access
 * regions derived from its body, as TVM's GetBlockReadWriteRegion does.
 *
 * Derivation, in TVM's terms: every BufferLoad and BufferStore in the block's
 * init and body (in that order, pre-order, a store's write before the loads of
 * its value) adds an access; indices are relaxed over the loops inside the
 * block (the block's own iter vars stay symbolic); a nested block contributes
 * its declared regions with its iter vars replaced by their bindings; per
 * buffer the hull of its accesses is kept, in order of first access. Buffers
 * allocated in the block (its alloc_buffers and T.decl_buffer inside) are
 * left out. When the block has an init, the buffers it writes are left out of
 * its reads (TVM >= 0.9: a reduction reads C only to update it), so matmul
 * gets reads [A[vi, vk], B[vj, vk]] and writes [C[vi, vj]]; the update block
 * of a decomposed reduction (no init) gets reads [C, A, B].
 *
 * Where TVM's analyzer would produce a symbolic hull we cannot express as a
 * linear form (min of two unrelated expressions), the dimension falls back to
 * the whole buffer extent, which is always a correct cover. Conditions of
 * enclosing `if`s are not used to narrow ranges.
 */
#include "tir/regions.h"
#include "tir/ptrmap.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* Linear forms                                                              */
/* ------------------------------------------------------------------------ */

static tir_lin_t lin_unknown(void) {
  tir_lin_t l = {false, 0, NULL, 0};
  return l;
}

static tir_lin_t lin_const(int64_t c) {
  tir_lin_t l = {true, 0, NULL, c};
  return l;
}

static tir_lin_t lin_atom(tir_lin_env_t *env, tir_expr_t *atom) {
  tir_lin_t l = {true, 1, mlc_arena_alloc(env->arena, sizeof(tir_lin_term_t)), 0};
  l.terms[0].atom = atom;
  l.terms[0].coef = 1;
  return l;
}

static bool atom_eq(const tir_expr_t *a, const tir_expr_t *b) { return a == b || tir_expr_equal(a, b); }

/* Adds k * atom to r (whose terms array has room); false on overflow. */
static bool lin_add_term(tir_lin_t *r, tir_expr_t *atom, int64_t k) {
  for (int i = 0; i < r->n; i++) {
    if (!atom_eq(r->terms[i].atom, atom)) continue;
    if (__builtin_add_overflow(r->terms[i].coef, k, &r->terms[i].coef)) return false;
    if (r->terms[i].coef == 0) {
      memmove(&r->terms[i], &r->terms[i + 1], sizeof(*r->terms) * (size_t)(r->n - i - 1));
      r->n--;
    }
    return true;
  }
  if (k != 0) r->terms[r->n++] = (tir_lin_term_t){atom, k};
  return true;
}

/* ka * a + kb * b. */
static tir_lin_t lin_combine(tir_lin_env_t *env, const tir_lin_t *a, int64_t ka, const tir_lin_t *b,
                             int64_t kb) {
  if (!a->known || !b->known) return lin_unknown();
  tir_lin_t r = lin_const(0);
  int64_t ca, cb, k;
  if (__builtin_mul_overflow(a->c, ka, &ca) || __builtin_mul_overflow(b->c, kb, &cb) ||
      __builtin_add_overflow(ca, cb, &r.c))
    return lin_unknown();
  if (a->n + b->n == 0) return r;
  r.terms = mlc_arena_alloc(env->arena, sizeof(*r.terms) * (size_t)(a->n + b->n));
  for (int i = 0; i < a->n; i++)
    if (__builtin_mul_overflow(a->terms[i].coef, ka, &k) || !lin_add_term(&r, a->terms[i].atom, k))
      return lin_unknown();
  for (int i = 0; i < b->n; i++)
    if (__builtin_mul_overflow(b->terms[i].coef, kb, &k) || !lin_add_term(&r, b->terms[i].atom, k))
      return lin_unknown();
  return r;
}

static tir_lin_t lin_plus(tir_lin_env_t *env, const tir_lin_t *a, int64_t k) {
  tir_lin_t c = lin_const(k);
  return lin_combine(env, a, 1, &c, 1);
}

static tir_lin_t lin_scale(tir_lin_env_t *env, const tir_lin_t *a, int64_t k) {
  tir_lin_t zero = lin_const(0);
  return lin_combine(env, a, k, &zero, 0);
}

tir_lin_t tir_lin_sub_plus(tir_lin_env_t *env, const tir_lin_t *a, const tir_lin_t *b, int64_t k) {
  tir_lin_t d = lin_combine(env, a, 1, b, -1);
  return lin_plus(env, &d, k);
}

bool tir_lin_as_const(const tir_lin_t *a, int64_t *c) {
  if (!a->known || a->n) return false;
  *c = a->c;
  return true;
}

bool tir_lin_diff_const(const tir_lin_t *a, const tir_lin_t *b, int64_t *d) {
  if (!a->known || !b->known || a->n != b->n) return false;
  for (int i = 0; i < a->n; i++) {
    bool found = false;
    for (int j = 0; j < b->n && !found; j++)
      found = a->terms[i].coef == b->terms[j].coef && atom_eq(a->terms[i].atom, b->terms[j].atom);
    if (!found) return false;
  }
  return !__builtin_sub_overflow(a->c, b->c, d);
}

/* The smaller (want_min) or larger of two forms, when they differ by a
 * constant; unknown otherwise. */
static tir_lin_t lin_pick(const tir_lin_t *a, const tir_lin_t *b, bool want_min) {
  int64_t d;
  if (!tir_lin_diff_const(a, b, &d)) return lin_unknown();
  return (d <= 0) == want_min ? *a : *b;
}

static int64_t floordiv64(int64_t a, int64_t k) {
  int64_t q = a / k;
  return (a % k != 0 && (a < 0) != (k < 0)) ? q - 1 : q;
}

static int64_t floormod64(int64_t a, int64_t k) { return a - floordiv64(a, k) * k; }

static bool lin_divisible(const tir_lin_t *a, int64_t k) {
  for (int i = 0; i < a->n; i++)
    if (a->terms[i].coef % k) return false;
  return a->known;
}

/* floordiv(a, k) exactly, when every coefficient divides by k > 0. */
static tir_lin_t lin_floordiv(tir_lin_env_t *env, const tir_lin_t *a, int64_t k) {
  if (!lin_divisible(a, k)) return lin_unknown();
  tir_lin_t r = lin_const(floordiv64(a->c, k));
  if (a->n) {
    r.terms = mlc_arena_alloc(env->arena, sizeof(*r.terms) * (size_t)a->n);
    for (int i = 0; i < a->n; i++) r.terms[r.n++] = (tir_lin_term_t){a->terms[i].atom, a->terms[i].coef / k};
  }
  return r;
}

tir_expr_t *tir_lin_to_expr(mlc_arena_t *a, const tir_lin_t *l, tir_dtype_t t) {
  tir_expr_t *acc = NULL;
  for (int i = 0; i < l->n; i++) {
    tir_expr_t *atom = l->terms[i].atom;
    int64_t k = l->terms[i].coef;
    bool sub = acc && k < 0 && k != INT64_MIN;
    int64_t mag = sub ? -k : k;
    tir_expr_t *x = mag == 1 ? atom : tir_binary(a, TIR_MUL, atom, tir_int(a, atom->dtype, mag));
    acc = !acc ? x : tir_binary(a, sub ? TIR_SUB : TIR_ADD, acc, x);
  }
  if (!acc) return tir_int(a, t, l->c);
  if (l->c > 0) return tir_binary(a, TIR_ADD, acc, tir_int(a, acc->dtype, l->c));
  if (l->c < 0 && l->c != INT64_MIN) return tir_binary(a, TIR_SUB, acc, tir_int(a, acc->dtype, -l->c));
  return acc;
}

/* ------------------------------------------------------------------------ */
/* The environment                                                           */
/* ------------------------------------------------------------------------ */

void tir_lin_env_init(tir_lin_env_t *env, mlc_arena_t *arena) {
  memset(env, 0, sizeof *env);
  env->arena = arena;
}

static void env_push(tir_lin_env_t *env, tir_lin_binding_t b) {
  if (env->n == env->cap) {
    int cap = env->cap ? env->cap * 2 : 16;
    env->binds = mlc_arena_grow(env->arena, env->binds, (size_t)env->n, (size_t)cap, sizeof(*env->binds));
    env->cap = cap;
  }
  env->binds[env->n++] = b;
}

void tir_lin_env_push_range(tir_lin_env_t *env, const tir_var_t *v, tir_expr_t *min, tir_expr_t *extent) {
  env_push(env, (tir_lin_binding_t){v, min, extent, NULL});
}

void tir_lin_env_push_value(tir_lin_env_t *env, const tir_var_t *v, tir_expr_t *value) {
  env_push(env, (tir_lin_binding_t){v, NULL, NULL, value});
}

static const tir_lin_binding_t *env_find(const tir_lin_env_t *env, const tir_expr_t *v) {
  if (v->kind != TIR_VAR) return NULL;
  for (int i = env->n - 1; i >= 0; i--)
    if (env->binds[i].var == v) return &env->binds[i];
  return NULL;
}

/* Deep enough for any real loop nest; stops a malformed self-referencing range. */
#define LIN_MAX_DEPTH 64

/* ------------------------------------------------------------------------ */
/* Bounds                                                                    */
/* ------------------------------------------------------------------------ */

static tir_lin_bound_t bound_unknown(void) {
  tir_lin_bound_t r = {lin_unknown(), lin_unknown(), lin_unknown(), NULL};
  return r;
}

/* An exact value with no relaxed variable: lo == hi == the atom. */
static tir_lin_bound_t bound_atom(tir_lin_env_t *env, tir_expr_t *point) {
  tir_lin_bound_t r;
  r.exact = r.lo = r.hi = lin_atom(env, point);
  r.point = point;
  return r;
}

/* Bounds of a loop variable from its range. */
static void var_bounds(tir_lin_env_t *env, const tir_lin_binding_t *b, tir_lin_t *lo, tir_lin_t *hi) {
  tir_lin_bound_t r = tir_lin_relax_range(env, b->min, b->extent);
  *lo = r.lo;
  *hi = r.hi;
}

/* lo and hi of an exact form: each relaxed loop variable replaced by the end
 * of its range that makes the sum smallest (largest). */
static void bounds_from_exact(tir_lin_env_t *env, tir_lin_bound_t *r) {
  const tir_lin_t *x = &r->exact;
  tir_lin_t lo = lin_const(x->c), hi = lin_const(x->c);
  for (int i = 0; i < x->n && x->known; i++) {
    const tir_lin_binding_t *b = env_find(env, x->terms[i].atom);
    int64_t k = x->terms[i].coef;
    tir_lin_t vlo, vhi;
    if (b && !b->value) {
      var_bounds(env, b, &vlo, &vhi);
    } else {
      vlo = vhi = lin_atom(env, x->terms[i].atom);
    }
    lo = lin_combine(env, &lo, 1, k > 0 ? &vlo : &vhi, k);
    hi = lin_combine(env, &hi, 1, k > 0 ? &vhi : &vlo, k);
  }
  r->lo = x->known ? lo : lin_unknown();
  r->hi = x->known ? hi : lin_unknown();
}

static int kid_count(const tir_expr_t *e) {
  switch (tir_expr_kind_shape(e->kind)) {
  case TIR_SHAPE_IMM:
  case TIR_SHAPE_LEAF: return 0;
  case TIR_SHAPE_UNARY:
  case TIR_SHAPE_BROADCAST: return 1;
  case TIR_SHAPE_BINARY:
  case TIR_SHAPE_RAMP: return 2;
  case TIR_SHAPE_SELECT: return 3;
  case TIR_SHAPE_LOAD: return e->u.load.nindices;
  case TIR_SHAPE_CALL: return e->u.call.nargs;
  }
  return 0;
}

static tir_expr_t **kid_slot(tir_expr_t *e, int i) {
  switch (tir_expr_kind_shape(e->kind)) {
  case TIR_SHAPE_UNARY: return &e->u.un.a;
  case TIR_SHAPE_BROADCAST: return &e->u.broadcast.value;
  case TIR_SHAPE_BINARY: return i ? &e->u.bin.b : &e->u.bin.a;
  case TIR_SHAPE_RAMP: return i ? &e->u.ramp.stride : &e->u.ramp.base;
  case TIR_SHAPE_SELECT: return i == 0 ? &e->u.select.cond : i == 1 ? &e->u.select.t : &e->u.select.f;
  case TIR_SHAPE_LOAD: return &e->u.load.indices[i];
  case TIR_SHAPE_CALL: return &e->u.call.args[i];
  default: return NULL;
  }
}

/* e with its children replaced by kids (e itself when none changed). */
static tir_expr_t *rebuild(tir_lin_env_t *env, tir_expr_t *e, tir_expr_t **kids, int n) {
  int i = 0;
  while (i < n && *kid_slot(e, i) == kids[i]) i++;
  if (i == n) return e;
  tir_expr_t *c = tir_expr_copy(env->arena, e);
  if (c->kind == TIR_BUFFER_LOAD)
    c->u.load.indices = mlc_arena_memdup(env->arena, kids, sizeof(*kids) * (size_t)n);
  else if (c->kind == TIR_CALL)
    c->u.call.args = mlc_arena_memdup(env->arena, kids, sizeof(*kids) * (size_t)n);
  else
    for (i = 0; i < n; i++) *kid_slot(c, i) = kids[i];
  return c;
}

/* The point of e when every child has one (NULL otherwise). */
static tir_expr_t *point_of(tir_lin_env_t *env, tir_expr_t *e, const tir_lin_bound_t *kids, int n) {
  tir_expr_t *small[3], **pts = n <= 3 ? small : mlc_arena_alloc(env->arena, sizeof(*pts) * (size_t)n);
  for (int i = 0; i < n; i++) {
    if (!kids[i].point) return NULL;
    pts[i] = kids[i].point;
  }
  return rebuild(env, e, pts, n);
}

/* Any other node: exact (as an opaque atom) when its children are. */
static tir_lin_bound_t relax_generic(tir_lin_env_t *env, tir_expr_t *e) {
  int n = kid_count(e);
  tir_lin_bound_t small[3], *kids = n <= 3 ? small : mlc_arena_alloc(env->arena, sizeof(*kids) * (size_t)n);
  for (int i = 0; i < n; i++) kids[i] = tir_lin_relax(env, *kid_slot(e, i));
  tir_expr_t *p = point_of(env, e, kids, n);
  return p ? bound_atom(env, p) : bound_unknown();
}

static tir_lin_bound_t relax_var(tir_lin_env_t *env, tir_expr_t *e) {
  const tir_lin_binding_t *b = env_find(env, e);
  if (!b) return bound_atom(env, e);
  if (b->value) return tir_lin_relax(env, b->value);
  if (tir_is_const_int(b->extent, 1)) return tir_lin_relax(env, b->min);
  tir_lin_bound_t r = bound_unknown();
  r.exact = lin_atom(env, e);
  var_bounds(env, b, &r.lo, &r.hi);
  return r;
}

static tir_lin_bound_t relax_addsub(tir_lin_env_t *env, tir_expr_t *e) {
  tir_lin_bound_t k[2] = {tir_lin_relax(env, e->u.bin.a), tir_lin_relax(env, e->u.bin.b)};
  int64_t s = e->kind == TIR_ADD ? 1 : -1;
  tir_lin_bound_t r = bound_unknown();
  r.point = point_of(env, e, k, 2);
  r.exact = lin_combine(env, &k[0].exact, 1, &k[1].exact, s);
  if (r.exact.known) {
    bounds_from_exact(env, &r);
  } else {
    r.lo = lin_combine(env, &k[0].lo, 1, s > 0 ? &k[1].lo : &k[1].hi, s);
    r.hi = lin_combine(env, &k[0].hi, 1, s > 0 ? &k[1].hi : &k[1].lo, s);
  }
  return r;
}

static bool const_point(const tir_lin_bound_t *b, int64_t *k) { return tir_lin_as_const(&b->exact, k); }

static tir_lin_bound_t relax_mul(tir_lin_env_t *env, tir_expr_t *e) {
  tir_lin_bound_t k[2] = {tir_lin_relax(env, e->u.bin.a), tir_lin_relax(env, e->u.bin.b)};
  tir_lin_bound_t r = bound_unknown();
  r.point = point_of(env, e, k, 2);
  int64_t c;
  int var = const_point(&k[1], &c) ? 0 : const_point(&k[0], &c) ? 1 : -1;
  if (var < 0) return r.point ? bound_atom(env, r.point) : r;
  r.exact = lin_scale(env, &k[var].exact, c);
  if (r.exact.known) {
    bounds_from_exact(env, &r);
  } else {
    r.lo = lin_scale(env, c >= 0 ? &k[var].lo : &k[var].hi, c);
    r.hi = lin_scale(env, c >= 0 ? &k[var].hi : &k[var].lo, c);
  }
  return r;
}

/* The divisor of a division/modulo when it is a positive constant. */
static bool positive_divisor(tir_lin_env_t *env, tir_expr_t *e, int64_t *k) {
  tir_lin_bound_t b = tir_lin_relax(env, e->u.bin.b);
  return const_point(&b, k) && *k > 0;
}

/* Truncating division and modulo agree with the flooring ones when the
 * dividend is known non-negative. */
static bool nonneg(const tir_lin_bound_t *a) {
  int64_t c;
  return tir_lin_as_const(&a->lo, &c) && c >= 0;
}

static tir_lin_bound_t relax_div(tir_lin_env_t *env, tir_expr_t *e) {
  int64_t k;
  if (!positive_divisor(env, e, &k)) return relax_generic(env, e);
  tir_lin_bound_t a = tir_lin_relax(env, e->u.bin.a), r = bound_unknown();
  tir_lin_bound_t kids[2] = {a, tir_lin_relax(env, e->u.bin.b)};
  r.point = point_of(env, e, kids, 2);
  if (e->kind == TIR_DIV && !nonneg(&a)) return r.point ? bound_atom(env, r.point) : r;
  r.exact = lin_floordiv(env, &a.exact, k);
  if (r.exact.known) {
    bounds_from_exact(env, &r);
  } else if (r.point) {
    return bound_atom(env, r.point);
  } else {
    r.lo = lin_floordiv(env, &a.lo, k);
    r.hi = lin_floordiv(env, &a.hi, k);
  }
  return r;
}

static tir_lin_bound_t relax_mod(tir_lin_env_t *env, tir_expr_t *e) {
  int64_t k, d;
  if (!positive_divisor(env, e, &k)) return relax_generic(env, e);
  tir_lin_bound_t a = tir_lin_relax(env, e->u.bin.a), r = bound_unknown();
  tir_lin_bound_t kids[2] = {a, tir_lin_relax(env, e->u.bin.b)};
  r.point = point_of(env, e, kids, 2);
  if (e->kind == TIR_MOD && !nonneg(&a)) return r.point ? bound_atom(env, r.point) : r;
  if (a.exact.known && lin_divisible(&a.exact, k)) {
    r.exact = r.lo = r.hi = lin_const(floormod64(a.exact.c, k));
    return r;
  }
  if (r.point) return bound_atom(env, r.point);
  /* A window [lo, lo + d] that does not wrap around k stays contiguous. */
  r.lo = lin_const(0);
  r.hi = lin_const(k - 1);
  if (lin_divisible(&a.lo, k) && tir_lin_diff_const(&a.hi, &a.lo, &d)) {
    int64_t base = floormod64(a.lo.c, k);
    if (d >= 0 && d < k - base) {
      r.lo = lin_const(base);
      r.hi = lin_const(base + d);
    }
  }
  return r;
}

static tir_lin_bound_t relax_minmax(tir_lin_env_t *env, tir_expr_t *e) {
  tir_lin_bound_t k[2] = {tir_lin_relax(env, e->u.bin.a), tir_lin_relax(env, e->u.bin.b)};
  tir_lin_bound_t r = bound_unknown();
  r.point = point_of(env, e, k, 2);
  if (r.point) return bound_atom(env, r.point);
  bool is_min = e->kind == TIR_MIN;
  /* min(a, b) >= min(a.lo, b.lo), and <= either side's hi (max mirrored). */
  tir_lin_t tight = lin_pick(is_min ? &k[0].lo : &k[0].hi, is_min ? &k[1].lo : &k[1].hi, is_min);
  tir_lin_t loose = lin_pick(is_min ? &k[0].hi : &k[0].lo, is_min ? &k[1].hi : &k[1].lo, is_min);
  if (!loose.known && is_min) loose = k[0].hi.known ? k[0].hi : k[1].hi;
  if (!loose.known && !is_min) loose = k[0].lo.known ? k[0].lo : k[1].lo;
  r.lo = is_min ? tight : loose;
  r.hi = is_min ? loose : tight;
  return r;
}

/* Select and if_then_else: the hull of both values. */
static tir_lin_bound_t relax_choice(tir_lin_env_t *env, tir_expr_t *e, tir_expr_t *t, tir_expr_t *f) {
  tir_lin_bound_t r = relax_generic(env, e);
  if (r.point) return r;
  tir_lin_bound_t bt = tir_lin_relax(env, t), bf = tir_lin_relax(env, f);
  return tir_lin_union(env, &bt, &bf);
}

static tir_lin_bound_t relax_cast(tir_lin_env_t *env, tir_expr_t *e) {
  tir_lin_bound_t r = relax_generic(env, e);
  if (r.point || !tir_dtype_is_integer(e->u.un.a->dtype)) return r;
  /* Only constant bounds cross a cast: symbolic ones would mix dtypes. */
  tir_lin_bound_t a = tir_lin_relax(env, e->u.un.a);
  int64_t lo, hi;
  if (tir_lin_as_const(&a.lo, &lo) && tir_lin_as_const(&a.hi, &hi)) {
    r.lo = lin_const(lo);
    r.hi = lin_const(hi);
  }
  return r;
}

/* A vector index covers base + stride * [0, lanes): its lanes as a range. */
static tir_lin_bound_t relax_ramp(tir_lin_env_t *env, tir_expr_t *e) {
  tir_lin_bound_t base = tir_lin_relax(env, e->u.ramp.base);
  tir_lin_bound_t stride = tir_lin_relax(env, e->u.ramp.stride);
  tir_lin_bound_t r = bound_unknown();
  int64_t s, span;
  if (!const_point(&stride, &s) || __builtin_mul_overflow(s, (int64_t)e->u.ramp.lanes - 1, &span)) return r;
  r.lo = lin_plus(env, &base.lo, span < 0 ? span : 0);
  r.hi = lin_plus(env, &base.hi, span > 0 ? span : 0);
  return r;
}

static tir_lin_bound_t relax_kind(tir_lin_env_t *env, tir_expr_t *e) {
  switch (e->kind) {
  case TIR_INT_IMM: {
    tir_lin_bound_t r;
    r.exact = r.lo = r.hi = lin_const(e->u.int_value);
    r.point = e;
    return r;
  }
  case TIR_VAR: return relax_var(env, e);
  case TIR_ADD:
  case TIR_SUB: return relax_addsub(env, e);
  case TIR_MUL: return relax_mul(env, e);
  case TIR_DIV:
  case TIR_FLOOR_DIV: return relax_div(env, e);
  case TIR_MOD:
  case TIR_FLOOR_MOD: return relax_mod(env, e);
  case TIR_MIN:
  case TIR_MAX: return relax_minmax(env, e);
  case TIR_SELECT: return relax_choice(env, e, e->u.select.t, e->u.select.f);
  case TIR_CAST: return relax_cast(env, e);
  case TIR_CALL:
    if (e->u.call.op == TIR_OP_IF_THEN_ELSE && e->u.call.nargs == 3)
      return relax_choice(env, e, e->u.call.args[1], e->u.call.args[2]);
    return relax_generic(env, e);
  default: return relax_generic(env, e);
  }
}

tir_lin_bound_t tir_lin_relax(tir_lin_env_t *env, tir_expr_t *e) {
  if (!e || env->depth >= LIN_MAX_DEPTH) return bound_unknown();
  if (e->kind == TIR_BROADCAST) return tir_lin_relax(env, e->u.broadcast.value);
  if (e->kind == TIR_RAMP) {
    env->depth++;
    tir_lin_bound_t r = relax_ramp(env, e);
    env->depth--;
    return r;
  }
  /* Only scalar integers have linear bounds; anything else can still be an
   * exact opaque value. */
  if (!tir_dtype_is_integer(e->dtype) || e->dtype.lanes != 1 || tir_dtype_is_bool(e->dtype)) {
    env->depth++;
    tir_lin_bound_t r = e->kind == TIR_VAR ? relax_var(env, e) : relax_generic(env, e);
    env->depth--;
    return r;
  }
  env->depth++;
  tir_lin_bound_t r = relax_kind(env, e);
  env->depth--;
  return r;
}

tir_lin_bound_t tir_lin_relax_range(tir_lin_env_t *env, tir_expr_t *min, tir_expr_t *extent) {
  tir_lin_bound_t m = tir_lin_relax(env, min);
  tir_lin_bound_t x = tir_lin_relax(env, extent);
  int64_t c;
  if (const_point(&x, &c) && c == 1) return m;
  tir_lin_bound_t r = bound_unknown();
  r.lo = m.lo;
  r.hi = lin_combine(env, &m.hi, 1, &x.hi, 1);
  r.hi = lin_plus(env, &r.hi, -1);
  return r;
}

tir_lin_bound_t tir_lin_union(tir_lin_env_t *env, const tir_lin_bound_t *a, const tir_lin_bound_t *b) {
  tir_lin_bound_t r = bound_unknown();
  int64_t d;
  r.lo = lin_pick(&a->lo, &b->lo, true);
  r.hi = lin_pick(&a->hi, &b->hi, false);
  if (tir_lin_diff_const(&a->exact, &b->exact, &d) && d == 0) r.exact = a->exact;
  if (a->point && b->point && atom_eq(a->point, b->point)) r.point = a->point;
  (void)env;
  return r;
}

/* ------------------------------------------------------------------------ */
/* Deriving a block's regions                                                */
/* ------------------------------------------------------------------------ */

/* One buffer's accesses so far: per dimension the hull, and the dtype its
 * indices had (for the constants of the result). */
typedef struct {
  tir_buffer_t *buffer;
  int ndim;
  tir_lin_bound_t *dims;
  tir_dtype_t *dtypes;
} access_t;

typedef struct {
  access_t *items;
  int n, cap;
} access_list_t;

typedef struct {
  mlc_arena_t *arena;
  tir_lin_env_t env;
  const tir_block_t *block;
  tir_ptrmap_t local; /* buffers allocated inside the block: not accesses */
  access_list_t reads, writes;
} derive_t;

static void derive_stmt(derive_t *dv, tir_stmt_t *s);

static void merge_access(derive_t *dv, access_list_t *list, tir_buffer_t *buf, int ndim,
                         tir_lin_bound_t *dims, tir_dtype_t *dtypes) {
  for (int i = 0; i < list->n; i++) {
    access_t *acc = &list->items[i];
    if (acc->buffer != buf) continue;
    if (acc->ndim != ndim) return; /* malformed; the verifier reports it */
    for (int d = 0; d < ndim; d++) acc->dims[d] = tir_lin_union(&dv->env, &acc->dims[d], &dims[d]);
    return;
  }
  if (list->n == list->cap) {
    int cap = list->cap ? list->cap * 2 : 8;
    list->items = mlc_arena_grow(dv->arena, list->items, (size_t)list->n, (size_t)cap, sizeof(*list->items));
    list->cap = cap;
  }
  list->items[list->n++] = (access_t){buf, ndim, dims, dtypes};
}

static const tir_match_buffer_t *find_match(const tir_block_t *b, const tir_buffer_t *buf) {
  for (int i = 0; i < b->nmatch_buffers; i++)
    if (b->match_buffers[i].buffer == buf) return &b->match_buffers[i];
  return NULL;
}

static void add_region(derive_t *dv, access_list_t *list, const tir_region_t *r) {
  const tir_match_buffer_t *m = find_match(dv->block, r->buffer);
  if (m) r = &m->source;
  /* A malformed region (the verifier reports it) is no access. */
  if (!r->buffer || r->ndim != r->buffer->ndim || tir_ptrmap_get(&dv->local, r->buffer)) return;
  int n = r->ndim;
  tir_lin_bound_t *dims = mlc_arena_alloc(dv->arena, sizeof(*dims) * (size_t)(n ? n : 1));
  tir_dtype_t *dtypes = mlc_arena_alloc(dv->arena, sizeof(*dtypes) * (size_t)(n ? n : 1));
  for (int d = 0; d < n; d++) {
    dims[d] = tir_lin_relax_range(&dv->env, r->ranges[d].min, r->ranges[d].extent);
    dtypes[d] = r->ranges[d].min ? r->ranges[d].min->dtype : tir_dt_INT32();
  }
  merge_access(dv, list, r->buffer, n, dims, dtypes);
}

/* A load or store of buf at indices. Accesses through one of the block's
 * match buffers count as the whole matched source region (a cover). */
static void add_point(derive_t *dv, access_list_t *list, tir_buffer_t *buf, tir_expr_t **idx, int n) {
  const tir_match_buffer_t *m = find_match(dv->block, buf);
  if (m) {
    add_region(dv, list, &m->source);
    return;
  }
  if (!buf || n != buf->ndim || tir_ptrmap_get(&dv->local, buf)) return;
  tir_lin_bound_t *dims = mlc_arena_alloc(dv->arena, sizeof(*dims) * (size_t)(n ? n : 1));
  tir_dtype_t *dtypes = mlc_arena_alloc(dv->arena, sizeof(*dtypes) * (size_t)(n ? n : 1));
  for (int d = 0; d < n; d++) {
    dims[d] = tir_lin_relax(&dv->env, idx[d]);
    dtypes[d] = idx[d] ? idx[d]->dtype : tir_dt_INT32();
  }
  merge_access(dv, list, buf, n, dims, dtypes);
}

static bool derive_load(tir_visitor_t *v, tir_expr_t *e) {
  derive_t *dv = v->payload;
  if (e->kind == TIR_BUFFER_LOAD)
    add_point(dv, &dv->reads, e->u.load.buffer, e->u.load.indices, e->u.load.nindices);
  return true;
}

static void derive_expr(derive_t *dv, tir_expr_t *e) {
  tir_visitor_t v = {.expr = derive_load, .payload = dv};
  tir_visit_expr(&v, e);
}

/* A nested block: its declared regions, with its iter vars replaced by their
 * bindings and relaxed over the loops between the two blocks. */
static void derive_nested(derive_t *dv, tir_stmt_t *s) {
  const tir_block_t *nb = s->u.realize.block;
  int mark = dv->env.n;
  for (int i = 0; i < nb->niter_vars && i < s->u.realize.n; i++)
    tir_lin_env_push_value(&dv->env, nb->iter_vars[i].var, s->u.realize.iter_values[i]);
  for (int i = 0; i < nb->nalloc_buffers; i++) tir_ptrmap_put(&dv->local, nb->alloc_buffers[i], (void *)nb);
  for (int i = 0; i < nb->nreads; i++) add_region(dv, &dv->reads, &nb->reads[i]);
  for (int i = 0; i < nb->nwrites; i++) add_region(dv, &dv->writes, &nb->writes[i]);
  tir_lin_env_reset(&dv->env, mark);
}

static void derive_scoped(derive_t *dv, tir_stmt_t *s) {
  int mark = dv->env.n;
  if (s->kind == TIR_FOR) {
    derive_expr(dv, s->u.loop.min);
    derive_expr(dv, s->u.loop.extent);
    tir_lin_env_push_range(&dv->env, s->u.loop.var, s->u.loop.min, s->u.loop.extent);
    derive_stmt(dv, s->u.loop.body);
  } else {
    derive_expr(dv, s->u.let.value);
    tir_lin_env_push_value(&dv->env, s->u.let.var, s->u.let.value);
    derive_stmt(dv, s->u.let.body);
  }
  tir_lin_env_reset(&dv->env, mark);
}

static void derive_stmt(derive_t *dv, tir_stmt_t *s) {
  if (!s) return;
  switch (s->kind) {
  case TIR_BUFFER_STORE:
    add_point(dv, &dv->writes, s->u.store.buffer, s->u.store.indices, s->u.store.nindices);
    derive_expr(dv, s->u.store.value);
    for (int i = 0; i < s->u.store.nindices; i++) derive_expr(dv, s->u.store.indices[i]);
    break;
  case TIR_FOR:
  case TIR_LET: derive_scoped(dv, s); break;
  case TIR_ATTR:
    derive_expr(dv, s->u.attr.value);
    derive_stmt(dv, s->u.attr.body);
    break;
  case TIR_ASSERT:
    derive_expr(dv, s->u.assert_.cond);
    derive_expr(dv, s->u.assert_.message);
    derive_stmt(dv, s->u.assert_.body);
    break;
  case TIR_IF:
    derive_expr(dv, s->u.if_.cond);
    derive_stmt(dv, s->u.if_.then_case);
    derive_stmt(dv, s->u.if_.else_case);
    break;
  case TIR_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) derive_stmt(dv, s->u.seq.stmts[i]);
    break;
  case TIR_EVALUATE: derive_expr(dv, s->u.evaluate.value); break;
  case TIR_ALLOCATE:
    tir_ptrmap_put(&dv->local, s->u.allocate.buffer, s);
    derive_stmt(dv, s->u.allocate.body);
    break;
  case TIR_BLOCK_REALIZE: derive_nested(dv, s); break;
  case TIR_STMT_KIND_COUNT: break;
  }
}

/* One dimension of the result: a point keeps its index expression with
 * extent 1; a relaxed dimension is [lo, hi - lo + 1]; no bound covers the
 * whole dimension. */
static tir_range_t dim_range(derive_t *dv, const access_t *acc, int d) {
  const tir_lin_bound_t *b = &acc->dims[d];
  tir_dtype_t t = acc->dtypes[d];
  tir_range_t r;
  if (b->point) {
    r.min = b->point;
    r.extent = tir_int(dv->arena, t, 1);
    return r;
  }
  tir_lin_t ext = tir_lin_sub_plus(&dv->env, &b->hi, &b->lo, 1);
  int64_t c;
  if (!b->lo.known || !ext.known || (tir_lin_as_const(&ext, &c) && c < 1)) {
    tir_expr_t *shape = acc->buffer->shape[d];
    r.min = tir_int(dv->arena, shape->dtype, 0);
    r.extent = shape;
    return r;
  }
  r.min = tir_lin_to_expr(dv->arena, &b->lo, t);
  r.extent = tir_lin_to_expr(dv->arena, &ext, t);
  return r;
}

static bool written(const access_list_t *writes, const tir_buffer_t *buf) {
  for (int i = 0; i < writes->n; i++)
    if (writes->items[i].buffer == buf) return true;
  return false;
}

/* The accesses as regions; with skip_written, buffers also written are left
 * out (reads of a block with an init). */
static tir_region_t *to_regions(derive_t *dv, const access_list_t *list, bool skip_written, int *n) {
  tir_region_t *out = mlc_arena_alloc(dv->arena, sizeof(*out) * (size_t)(list->n ? list->n : 1));
  *n = 0;
  for (int i = 0; i < list->n; i++) {
    const access_t *acc = &list->items[i];
    if (skip_written && written(&dv->writes, acc->buffer)) continue;
    tir_region_t *r = &out[(*n)++];
    r->buffer = acc->buffer;
    r->ndim = acc->ndim;
    r->ranges = mlc_arena_alloc(dv->arena, sizeof(*r->ranges) * (size_t)(acc->ndim ? acc->ndim : 1));
    for (int d = 0; d < acc->ndim; d++) r->ranges[d] = dim_range(dv, acc, d);
  }
  return *n ? out : NULL;
}

void tir_block_derive_regions(mlc_arena_t *a, tir_block_t *b, tir_region_t **reads, int *nreads,
                              tir_region_t **writes, int *nwrites) {
  *reads = *writes = NULL;
  *nreads = *nwrites = 0;
  /* Everything lives in `a`; our own handler turns an allocation failure into
   * "no regions" (or hands it on to the caller's handler). */
  jmp_buf jb;
  jmp_buf *prev = mlc_arena_set_oom_handler(a, &jb);
  if (setjmp(jb)) {
    mlc_arena_set_oom_handler(a, prev);
    mlc_error_set(MLC_ENOMEM, "deriving the regions of block \"%s\": out of memory", b->name);
    if (prev) longjmp(*prev, 1);
    return;
  }
  derive_t dv = {.arena = a, .block = b};
  tir_lin_env_init(&dv.env, a);
  tir_ptrmap_init(&dv.local, a);
  for (int i = 0; i < b->nalloc_buffers; i++) tir_ptrmap_put(&dv.local, b->alloc_buffers[i], b);
  derive_stmt(&dv, b->init);
  derive_stmt(&dv, b->body);
  int nr, nw;
  tir_region_t *r = to_regions(&dv, &dv.reads, b->init != NULL, &nr);
  tir_region_t *w = to_regions(&dv, &dv.writes, false, &nw);
  mlc_arena_set_oom_handler(a, prev);
  *reads = r;
  *writes = w;
  *nreads = nr;
  *nwrites = nw;
}
