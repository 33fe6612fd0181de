/*
 * int_set.c - symbolic intervals (TVM's IntervalSet / EvalSet): the range of
 * an expression when some variables vary over their domains, with the other
 * variables kept as symbols. This is what region derivation, compute_at and
 * blockize use to turn an access `A[vi * 16 + vj]` under a loop over vj into
 * the region `A[vi * 16 : vi * 16 + 16]`.
 *
 * The expression is simplified first (so i - i cancels before relaxing), then
 * evaluated bottom-up on intervals whose ends are expressions (NULL meaning
 * unbounded). Ends that stay unbounded fall back to constant bounds computed
 * with the relaxed variables' domains in force.
 */
#include "tir/arith/arith_internal.h"

typedef struct {
  tir_expr_t *lo, *hi; /* inclusive; NULL when unbounded */
} ivl_t;

typedef struct {
  tir_analyzer_t *an;
  tir_var_t **vars;
  const tir_range_t *doms;
  int n;
  bool *active; /* domain being relaxed: breaks cycles */
  int depth;
} relax_ctx_t;

static int relaxed_index(const relax_ctx_t *c, const tir_expr_t *v) {
  for (int i = 0; i < c->n; i++)
    if (c->vars[i] == v) return i;
  return -1;
}

static bool uses_relaxed(const relax_ctx_t *c, tir_expr_t *e) {
  return tir_expr_uses_any_var(e, c->vars, c->n);
}

static ivl_t point(tir_expr_t *e) { return (ivl_t){e, e}; }
static ivl_t unbounded(void) { return (ivl_t){NULL, NULL}; }

static tir_expr_t *mk(relax_ctx_t *c, tir_expr_kind_t k, tir_expr_t *a, tir_expr_t *b) {
  return a && b ? arith_make(c->an, k, a, b) : NULL;
}

static ivl_t relax(relax_ctx_t *c, tir_expr_t *e);

static ivl_t relax_var(relax_ctx_t *c, int i) {
  if (c->active[i]) return unbounded();
  c->active[i] = true;
  const tir_range_t *d = &c->doms[i];
  tir_expr_t *last = arith_simplify(c->an, tir_binary(c->an->arena, TIR_SUB,
                                                      tir_binary(c->an->arena, TIR_ADD, d->min, d->extent),
                                                      tir_int(c->an->arena, d->min->dtype, 1)));
  ivl_t r = {relax(c, arith_simplify(c->an, d->min)).lo, relax(c, last).hi};
  c->active[i] = false;
  return r;
}

/* Sign of a point expression from its constant bounds: 1, -1, or 0 unknown. */
static int sign_of(relax_ctx_t *c, tir_expr_t *k) {
  tir_bound_t b = tir_const_bound(c->an, k);
  if (b.min >= 0) return 1;
  if (b.max <= 0) return -1;
  return 0;
}

static bool is_point(ivl_t x) { return x.lo && x.lo == x.hi; }

static ivl_t relax_mul(relax_ctx_t *c, ivl_t a, ivl_t b) {
  if (!is_point(b)) {
    ivl_t t = a;
    a = b;
    b = t;
  }
  if (is_point(b)) {
    int s = sign_of(c, b.lo);
    if (s > 0) return (ivl_t){mk(c, TIR_MUL, a.lo, b.lo), mk(c, TIR_MUL, a.hi, b.lo)};
    if (s < 0) return (ivl_t){mk(c, TIR_MUL, a.hi, b.lo), mk(c, TIR_MUL, a.lo, b.lo)};
    return unbounded();
  }
  int64_t v[4];
  if (!tir_as_int(a.lo, &v[0]) || !tir_as_int(a.hi, &v[1]) || !tir_as_int(b.lo, &v[2]) ||
      !tir_as_int(b.hi, &v[3]))
    return unbounded();
  bool ovf = false;
  int64_t p[4] = {arith_ext_mul(v[0], v[2], &ovf), arith_ext_mul(v[0], v[3], &ovf),
                  arith_ext_mul(v[1], v[2], &ovf), arith_ext_mul(v[1], v[3], &ovf)};
  if (ovf) return unbounded();
  int64_t lo = p[0], hi = p[0];
  for (int i = 1; i < 4; i++) {
    lo = p[i] < lo ? p[i] : lo;
    hi = p[i] > hi ? p[i] : hi;
  }
  return (ivl_t){tir_int(c->an->arena, a.lo->dtype, lo), tir_int(c->an->arena, a.lo->dtype, hi)};
}

static ivl_t relax_div(relax_ctx_t *c, tir_expr_t *e, ivl_t a, ivl_t b) {
  if (!is_point(b)) return unbounded();
  int s = sign_of(c, b.lo);
  if (s == 0 || tir_is_const_int(b.lo, 0)) return unbounded();
  if (e->kind == TIR_DIV && (!a.lo || tir_const_bound(c->an, a.lo).min < 0)) return unbounded();
  ivl_t r = {mk(c, e->kind, a.lo, b.lo), mk(c, e->kind, a.hi, b.lo)};
  if (s < 0) r = (ivl_t){r.hi, r.lo};
  return r;
}

static ivl_t relax_mod(relax_ctx_t *c, tir_expr_t *e, ivl_t a, ivl_t b) {
  if (!is_point(b) || sign_of(c, b.lo) <= 0 || tir_is_const_int(b.lo, 0)) return unbounded();
  tir_dtype_t t = e->dtype;
  if (a.lo && a.hi && e->kind == TIR_FLOOR_MOD) { /* both ends in one period: exact */
    tir_expr_t *qlo = mk(c, TIR_FLOOR_DIV, a.lo, b.lo), *qhi = mk(c, TIR_FLOOR_DIV, a.hi, b.lo);
    if (qlo && qhi && arith_prove_equal(c->an, qlo, qhi))
      return (ivl_t){mk(c, TIR_FLOOR_MOD, a.lo, b.lo), mk(c, TIR_FLOOR_MOD, a.hi, b.lo)};
  }
  tir_expr_t *top = mk(c, TIR_SUB, b.lo, tir_int(c->an->arena, t, 1));
  if (e->kind == TIR_FLOOR_MOD || (a.lo && tir_const_bound(c->an, a.lo).min >= 0))
    return (ivl_t){tir_int(c->an->arena, t, 0), top};
  return (ivl_t){mk(c, TIR_SUB, tir_int(c->an->arena, t, 0), top), top};
}

/* min/max of two ends where NULL is -inf (lo) or +inf (hi). */
static tir_expr_t *end_op(relax_ctx_t *c, tir_expr_kind_t k, tir_expr_t *x, tir_expr_t *y,
                          bool null_absorbs) {
  if (!x || !y) return null_absorbs ? NULL : (x ? x : y);
  return mk(c, k, x, y);
}

static ivl_t relax_minmax(relax_ctx_t *c, tir_expr_t *e, ivl_t a, ivl_t b) {
  if (e->kind == TIR_MIN)
    return (ivl_t){end_op(c, TIR_MIN, a.lo, b.lo, true), end_op(c, TIR_MIN, a.hi, b.hi, false)};
  return (ivl_t){end_op(c, TIR_MAX, a.lo, b.lo, false), end_op(c, TIR_MAX, a.hi, b.hi, true)};
}

static ivl_t relax_union(relax_ctx_t *c, ivl_t a, ivl_t b) {
  return (ivl_t){end_op(c, TIR_MIN, a.lo, b.lo, true), end_op(c, TIR_MAX, a.hi, b.hi, true)};
}

static ivl_t relax_binary(relax_ctx_t *c, tir_expr_t *e) {
  ivl_t a = relax(c, e->u.bin.a), b = relax(c, e->u.bin.b);
  switch (e->kind) {
  case TIR_ADD: return (ivl_t){mk(c, TIR_ADD, a.lo, b.lo), mk(c, TIR_ADD, a.hi, b.hi)};
  case TIR_SUB: return (ivl_t){mk(c, TIR_SUB, a.lo, b.hi), mk(c, TIR_SUB, a.hi, b.lo)};
  case TIR_MUL: return relax_mul(c, a, b);
  case TIR_FLOOR_DIV:
  case TIR_DIV: return relax_div(c, e, a, b);
  case TIR_FLOOR_MOD:
  case TIR_MOD: return relax_mod(c, e, a, b);
  case TIR_MIN:
  case TIR_MAX: return relax_minmax(c, e, a, b);
  default: return unbounded();
  }
}

static ivl_t relax_node(relax_ctx_t *c, tir_expr_t *e) {
  if (!uses_relaxed(c, e)) return point(e);
  if (!arith_is_int_scalar(e->dtype)) return unbounded();
  switch (tir_expr_kind_shape(e->kind)) {
  case TIR_SHAPE_LEAF: return relax_var(c, relaxed_index(c, e));
  case TIR_SHAPE_BINARY: return relax_binary(c, e);
  case TIR_SHAPE_SELECT: return relax_union(c, relax(c, e->u.select.t), relax(c, e->u.select.f));
  case TIR_SHAPE_CALL:
    if (e->u.call.op == TIR_OP_IF_THEN_ELSE && e->u.call.nargs == 3)
      return relax_union(c, relax(c, e->u.call.args[1]), relax(c, e->u.call.args[2]));
    return unbounded();
  case TIR_SHAPE_UNARY: {
    tir_expr_t *x = e->u.un.a;
    /* A widening integer cast keeps the order of values. */
    if (e->kind != TIR_CAST || !arith_is_int_scalar(x->dtype) || x->dtype.bits > e->dtype.bits ||
        (x->dtype.code == TIR_CODE_UINT) != (e->dtype.code == TIR_CODE_UINT))
      return unbounded();
    ivl_t r = relax(c, x);
    if (r.lo) r.lo = arith_simplify(c->an, tir_cast(c->an->arena, e->dtype, r.lo));
    if (r.hi) r.hi = arith_simplify(c->an, tir_cast(c->an->arena, e->dtype, r.hi));
    return r;
  }
  default: return unbounded();
  }
}

static ivl_t relax(relax_ctx_t *c, tir_expr_t *e) {
  if (!e || c->depth >= ARITH_MAX_DEPTH) return unbounded();
  c->depth++;
  ivl_t r = relax_node(c, e);
  c->depth--;
  return r;
}

/* Puts the relaxed variables' constant bounds in force (scoped). */
static void override_bounds(relax_ctx_t *c) {
  for (int i = 0; i < c->n; i++) {
    tir_bound_t b = arith_range_bound(c->an, c->doms[i].min, c->doms[i].extent);
    arith_var_tighten(c->an, c->vars[i], b.min, b.max, true);
  }
}

static int relax_guarded(tir_interval_t *out, relax_ctx_t *c, tir_expr_t *e) {
  tir_expr_t *s = arith_simplify(c->an, e);
  ivl_t r = relax(c, s);
  /* Constant bounds as a fallback, unless they only repeat the dtype's range
   * (a region over all of int32 helps nobody; the caller should know). */
  tir_bound_t b = tir_const_bound(c->an, s), all = arith_dtype_bound(s->dtype);
  if (!r.lo && b.min != ARITH_NEG_INF && b.min != all.min) r.lo = tir_int(c->an->arena, s->dtype, b.min);
  if (!r.hi && b.max != ARITH_POS_INF && b.max != all.max) r.hi = tir_int(c->an->arena, s->dtype, b.max);
  if (!r.lo || !r.hi) {
    mlc_strbuf_t sb;
    mlc_sb_init(&sb);
    tir_print_expr(&sb, e);
    int rc = mlc_error_set(MLC_EUNSUPPORTED, "cannot bound the %s of %s",
                           !r.lo && !r.hi ? "range" : !r.lo ? "minimum" : "maximum", mlc_sb_str(&sb));
    mlc_sb_free(&sb);
    return rc;
  }
  out->min = arith_simplify(c->an, r.lo);
  out->max = arith_simplify(c->an, r.hi);
  return MLC_OK;
}

static int relax_run(tir_interval_t *out, relax_ctx_t *c, tir_expr_t *e) {
  int mark = c->an->nsaved;
  override_bounds(c);
  int rc = relax_guarded(out, c, e);
  tir_analyzer_pop_constraint(c->an, mark);
  return rc;
}

int tir_relax_expr(tir_interval_t *out, tir_analyzer_t *an, tir_expr_t *e, tir_var_t **vars,
                   const tir_range_t *doms, int n) {
  bool active_small[16];
  bool *active = n <= 16 ? active_small : mlc_arena_alloc(an->arena, sizeof(bool) * (size_t)n);
  if (!active) return mlc_error_set(MLC_ENOMEM, "relaxing an expression");
  for (int i = 0; i < n; i++) active[i] = false;
  relax_ctx_t c = {an, vars, doms, n, active, 0};
  jmp_buf jb;
  jmp_buf *prev = mlc_arena_set_oom_handler(an->arena, &jb);
  if (prev) { /* the caller handles out of memory */
    mlc_arena_set_oom_handler(an->arena, prev);
    return relax_run(out, &c, e);
  }
  int mark = an->nsaved, depth = an->depth;
  if (setjmp(jb)) {
    mlc_arena_set_oom_handler(an->arena, NULL);
    tir_analyzer_pop_constraint(an, mark);
    an->depth = depth;
    return mlc_error_set(MLC_ENOMEM, "relaxing an expression");
  }
  int rc = relax_run(out, &c, e);
  mlc_arena_set_oom_handler(an->arena, NULL);
  return rc;
}

int tir_relax_range(tir_range_t *out, tir_analyzer_t *an, const tir_range_t *r, tir_var_t **vars,
                    const tir_range_t *doms, int n) {
  tir_interval_t lo, hi;
  int rc = tir_relax_expr(&lo, an, r->min, vars, doms, n);
  if (rc != MLC_OK) return rc;
  tir_expr_t *last = tir_binary(an->arena, TIR_SUB, tir_binary(an->arena, TIR_ADD, r->min, r->extent),
                                tir_int(an->arena, r->min->dtype, 1));
  if (!last) return mlc_error_set(MLC_ENOMEM, "relaxing a range");
  rc = tir_relax_expr(&hi, an, last, vars, doms, n);
  if (rc != MLC_OK) return rc;
  tir_expr_t *ext = tir_binary(an->arena, TIR_ADD, tir_binary(an->arena, TIR_SUB, hi.max, lo.min),
                               tir_int(an->arena, r->min->dtype, 1));
  if (!ext) return mlc_error_set(MLC_ENOMEM, "relaxing a range");
  out->min = lo.min;
  out->extent = tir_simplify(an, ext);
  return MLC_OK;
}
