/*
 * analyzer.c - what an analyzer knows: variable bindings (constant or
 * expression ranges, with their constant bounds computed at bind time) and
 * constraint scopes that tighten bounds temporarily (inside an `if`).
 *
 * Each variable also gets its bind order, the key that orders terms of
 * canonical sums deterministically (addresses differ between runs; the order
 * in which a pass binds loops does not).
 */
#include "tir/arith/arith_internal.h"

tir_analyzer_t *tir_analyzer_new(mlc_arena_t *a) {
  tir_analyzer_t *an = mlc_arena_alloc(a, sizeof(*an));
  if (!an) return NULL;
  an->arena = a;
  tir_ptrmap_init(&an->index, a);
  return an;
}

arith_var_info_t *arith_var_info(const tir_analyzer_t *an, const tir_var_t *v) {
  uintptr_t k = (uintptr_t)tir_ptrmap_get(&an->index, v);
  return k ? &an->vars[k - 1] : NULL;
}

arith_var_info_t *arith_var_info_get_or_add(tir_analyzer_t *an, tir_var_t *v) {
  arith_var_info_t *info = arith_var_info(an, v);
  if (info) return info;
  if (an->nvars == an->capvars) {
    int cap = an->capvars ? an->capvars * 2 : 16;
    arith_var_info_t *vars = mlc_arena_grow(an->arena, an->vars, (size_t)an->nvars, (size_t)cap,
                                            sizeof(*vars));
    if (!vars) return NULL;
    an->vars = vars;
    an->capvars = cap;
  }
  if (!tir_ptrmap_put(&an->index, v, (void *)(uintptr_t)(an->nvars + 1))) return NULL;
  info = &an->vars[an->nvars++];
  info->var = v;
  info->min = info->extent = NULL;
  info->bound = arith_dtype_bound(v->dtype);
  info->order = -1; /* ordered by name until bound */
  return info;
}

/* Bounds of v in [min, min + extent): the lowest min and the highest
 * min + extent - 1 (simplified first, so `x` and `n - x` cancel). */
tir_bound_t arith_range_bound(tir_analyzer_t *an, tir_expr_t *min, tir_expr_t *extent) {
  tir_bound_t lo = tir_const_bound(an, min);
  tir_expr_t *last = tir_simplify(an, tir_binary(an->arena, TIR_SUB,
                                                 tir_binary(an->arena, TIR_ADD, min, extent),
                                                 tir_int(an->arena, min->dtype, 1)));
  tir_bound_t hi = last ? tir_const_bound(an, last) : arith_dtype_bound(min->dtype);
  tir_bound_t out = {lo.min, hi.max};
  if (out.min != ARITH_NEG_INF && out.max != ARITH_POS_INF && out.min > out.max)
    out.max = out.min; /* empty range: keep it well formed */
  return out;
}

void tir_analyzer_bind(tir_analyzer_t *an, tir_var_t *v, tir_expr_t *min, tir_expr_t *extent) {
  if (!an || !v || !min || !extent) return;
  tir_bound_t b = arith_range_bound(an, min, extent);
  arith_var_info_t *info = arith_var_info_get_or_add(an, v);
  if (!info) return;
  info->min = min;
  info->extent = extent;
  info->bound = b;
  if (info->order < 0) info->order = an->next_order++;
}

void tir_analyzer_bind_const(tir_analyzer_t *an, tir_var_t *v, int64_t min, int64_t extent) {
  if (!an || !v) return;
  tir_dtype_t t = tir_dtype_is_integer(v->dtype) ? v->dtype : tir_dt_INT64();
  tir_analyzer_bind(an, v, tir_int(an->arena, t, min), tir_int(an->arena, t, extent));
}

void arith_var_tighten(tir_analyzer_t *an, tir_var_t *v, int64_t lo, int64_t hi, bool replace) {
  arith_var_info_t *info = arith_var_info_get_or_add(an, v);
  if (!info) return;
  if (an->nsaved == an->capsaved) {
    int cap = an->capsaved ? an->capsaved * 2 : 16;
    arith_saved_t *s = mlc_arena_grow(an->arena, an->saved, (size_t)an->nsaved, (size_t)cap,
                                      sizeof(*s));
    if (!s) return; /* cannot restore later: do not tighten */
    an->saved = s;
    an->capsaved = cap;
  }
  an->saved[an->nsaved].index = (int)(info - an->vars);
  an->saved[an->nsaved].bound = info->bound;
  an->nsaved++;
  if (replace) {
    info->bound.min = lo;
    info->bound.max = hi;
    return;
  }
  if (lo > info->bound.min) info->bound.min = lo;
  if (hi < info->bound.max) info->bound.max = hi;
}

/* `var OP e` with e of known bounds: tightens var. `flip` reads it as
 * `e OP var`. */
static void constrain_compare(tir_analyzer_t *an, tir_expr_kind_t kind, tir_expr_t *var,
                              tir_expr_t *e, bool flip) {
  if (flip) {
    static const tir_expr_kind_t mirror[] = {[TIR_LT] = TIR_GT, [TIR_LE] = TIR_GE,
                                             [TIR_GT] = TIR_LT, [TIR_GE] = TIR_LE,
                                             [TIR_EQ] = TIR_EQ};
    kind = mirror[kind];
  }
  tir_bound_t b = tir_const_bound(an, e);
  int64_t lo = ARITH_NEG_INF, hi = ARITH_POS_INF;
  switch (kind) {
  case TIR_LT: if (b.max != ARITH_POS_INF && b.max != ARITH_NEG_INF) hi = b.max - 1; break;
  case TIR_LE: hi = b.max; break;
  case TIR_GT: if (b.min != ARITH_NEG_INF && b.min != ARITH_POS_INF) lo = b.min + 1; break;
  case TIR_GE: lo = b.min; break;
  case TIR_EQ: lo = b.min; hi = b.max; break;
  default: return;
  }
  arith_var_tighten(an, var, lo, hi, false);
}

static void constrain(tir_analyzer_t *an, tir_expr_t *cond, int depth) {
  if (!cond || depth > 64) return;
  if (cond->kind == TIR_AND) {
    constrain(an, cond->u.bin.a, depth + 1);
    constrain(an, cond->u.bin.b, depth + 1);
    return;
  }
  if (cond->kind == TIR_NOT) {
    tir_expr_t *c = cond->u.un.a;
    static const tir_expr_kind_t negate[] = {[TIR_LT] = TIR_GE, [TIR_LE] = TIR_GT,
                                             [TIR_GT] = TIR_LE, [TIR_GE] = TIR_LT};
    if (c->kind >= TIR_LT && c->kind <= TIR_GE) {
      tir_expr_t *n = tir_binary(an->arena, negate[c->kind], c->u.bin.a, c->u.bin.b);
      if (n) constrain(an, n, depth + 1);
    }
    return;
  }
  if (cond->kind < TIR_EQ || cond->kind > TIR_GE || cond->kind == TIR_NE) return;
  tir_expr_t *a = cond->u.bin.a, *b = cond->u.bin.b;
  if (!arith_is_int_scalar(a->dtype)) return;
  if (a->kind == TIR_VAR && !tir_expr_uses_var(b, a))
    constrain_compare(an, cond->kind, a, b, false);
  else if (b->kind == TIR_VAR && !tir_expr_uses_var(a, b))
    constrain_compare(an, cond->kind, b, a, true);
}

int tir_analyzer_push_constraint(tir_analyzer_t *an, tir_expr_t *cond) {
  int mark = an->nsaved;
  constrain(an, cond, 0);
  return mark;
}

void tir_analyzer_pop_constraint(tir_analyzer_t *an, int mark) {
  while (an->nsaved > mark) {
    arith_saved_t *s = &an->saved[--an->nsaved];
    an->vars[s->index].bound = s->bound;
  }
}
