/*
 * iter_util.c - small pieces the iteration-map analysis is built from:
 * factor arithmetic (constants folded directly, anything symbolic through the
 * simplifier), equality of splits and sums, failure messages, and
 * tir_iter_sum_to_expr, which turns an iter sum back into an expression.
 */
#include "tir/arith/iter_map.h"

#include <stdio.h>

bool im_fail(im_ctx_t *c, const char *fmt, ...) {
  if (c->failed) return false;
  c->failed = true;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->why, sizeof(c->why), fmt, ap);
  va_end(ap);
  return false;
}

const char *im_str(im_ctx_t *c, const tir_expr_t *e) {
  if (!e) return "?";
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  tir_print_expr(&sb, e);
  char *s = mlc_arena_strdup(c->arena, mlc_sb_str(&sb));
  mlc_sb_free(&sb);
  return s ? s : "?";
}

const char *im_mark_str(im_ctx_t *c, const tir_iter_mark_t *m) {
  if (m->var) return m->var->u.var.name ? m->var->u.var.name : "?";
  return im_str(c, tir_iter_sum_to_expr(c->arena, m->sum));
}

bool im_is_const(const tir_expr_t *e, int64_t v) { return tir_is_const_int(e, v); }

tir_expr_t *im_int(im_ctx_t *c, const tir_expr_t *like, int64_t v) {
  return tir_int(c->arena, like ? like->dtype : tir_dt_INT32(), v);
}

/* b converted to a's dtype (iterators may mix int32 and int64). */
static tir_expr_t *like(im_ctx_t *c, tir_expr_t *a, tir_expr_t *b) {
  if (tir_dtype_eq(a->dtype, b->dtype)) return b;
  return arith_simplify(c->an, tir_cast(c->arena, a->dtype, b));
}

tir_expr_t *im_mul(im_ctx_t *c, tir_expr_t *a, tir_expr_t *b) {
  int64_t x, y, r;
  if (tir_as_int(a, &x) && tir_as_int(b, &y) && !__builtin_mul_overflow(x, y, &r))
    return im_int(c, a, r);
  if (im_is_const(a, 1)) return like(c, a, b);
  if (im_is_const(b, 1)) return a;
  return arith_make(c->an, TIR_MUL, a, like(c, a, b));
}

tir_expr_t *im_add(im_ctx_t *c, tir_expr_t *a, tir_expr_t *b) {
  int64_t x, y, r;
  if (tir_as_int(a, &x) && tir_as_int(b, &y) && !__builtin_add_overflow(x, y, &r))
    return im_int(c, a, r);
  return arith_make(c->an, TIR_ADD, a, like(c, a, b));
}

tir_expr_t *im_sub(im_ctx_t *c, tir_expr_t *a, tir_expr_t *b) {
  int64_t x, y, r;
  if (tir_as_int(a, &x) && tir_as_int(b, &y) && !__builtin_sub_overflow(x, y, &r))
    return im_int(c, a, r);
  return arith_make(c->an, TIR_SUB, a, like(c, a, b));
}

tir_expr_t *im_floordiv(im_ctx_t *c, tir_expr_t *a, tir_expr_t *b) {
  int64_t x, y;
  if (tir_as_int(a, &x) && tir_as_int(b, &y) && y != 0) return im_int(c, a, arith_floordiv(x, y));
  if (im_is_const(b, 1)) return a;
  return arith_make(c->an, TIR_FLOOR_DIV, a, like(c, a, b));
}

bool im_equal(im_ctx_t *c, tir_expr_t *a, tir_expr_t *b) {
  int64_t x, y;
  if (tir_as_int(a, &x) && tir_as_int(b, &y)) return x == y;
  return arith_prove_equal(c->an, a, like(c, a, b));
}

bool im_divisible(im_ctx_t *c, tir_expr_t *a, tir_expr_t *b) {
  int64_t x, y;
  if (tir_as_int(b, &y) && y == 0) return false;
  if (tir_as_int(a, &x) && tir_as_int(b, &y)) return x % y == 0;
  if (im_equal(c, a, b)) return true;
  tir_expr_t *m = arith_make(c->an, TIR_FLOOR_MOD, a, like(c, a, b));
  return m && im_is_const(m, 0);
}

tir_iter_split_t im_split_of_mark(im_ctx_t *c, tir_iter_mark_t *m, tir_expr_t *scale) {
  tir_iter_split_t s = {m, im_int(c, m->extent, 1), m->extent, scale};
  return s;
}

bool im_split_equal(im_ctx_t *c, const tir_iter_split_t *a, const tir_iter_split_t *b,
                    bool check_scale) {
  return a->source == b->source && im_equal(c, a->lower_factor, b->lower_factor) &&
         im_equal(c, a->extent, b->extent) && (!check_scale || im_equal(c, a->scale, b->scale));
}

bool im_sum_equal(im_ctx_t *c, const tir_iter_sum_t *a, const tir_iter_sum_t *b) {
  if (a->nargs != b->nargs || !im_equal(c, a->base, b->base)) return false;
  for (int i = 0; i < a->nargs; i++)
    if (!im_split_equal(c, &a->args[i], &b->args[i], true)) return false;
  return true;
}

tir_iter_sum_t im_sum_new(im_ctx_t *c, int n, tir_expr_t *base) {
  tir_iter_sum_t s = {n, n > 0 ? mlc_arena_alloc(c->arena, sizeof(tir_iter_split_t) * (size_t)n) : NULL,
                      base};
  if (n > 0 && !s.args) s.nargs = 0; /* only without an OOM handler */
  return s;
}

im_fused_t *im_fused_of_mark(im_ctx_t *c, const tir_iter_mark_t *m) {
  for (int i = 0; i < c->nfused; i++)
    if (c->fused[i].mark == m) return &c->fused[i];
  return NULL;
}

/* ---- back to expressions -------------------------------------------------- */

static bool same_value(const tir_expr_t *a, const tir_expr_t *b) {
  int64_t x, y;
  if (tir_as_int(a, &x) && tir_as_int(b, &y)) return x == y;
  return arith_expr_equal(a, b);
}

static tir_expr_t *scale_by(mlc_arena_t *a, tir_expr_t *x, tir_expr_t *scale) {
  return tir_is_const_int(scale, 1) ? x : tir_binary(a, TIR_MUL, x, scale);
}

static tir_expr_t *mark_to_expr(mlc_arena_t *a, const tir_iter_mark_t *m) {
  if (m->var) {
    if (!m->var_min || tir_is_const_int(m->var_min, 0)) return m->var;
    return tir_binary(a, TIR_SUB, m->var, m->var_min);
  }
  return tir_iter_sum_to_expr(a, m->sum);
}

static tir_expr_t *split_to_expr(mlc_arena_t *a, const tir_iter_split_t *s) {
  tir_expr_t *src = mark_to_expr(a, s->source);
  tir_expr_t *ext = s->source->extent;
  if (tir_is_const_int(s->lower_factor, 1) && same_value(s->extent, ext)) return scale_by(a, src, s->scale);
  int64_t lf, e, me, top;
  bool whole_top = tir_as_int(s->lower_factor, &lf) && tir_as_int(s->extent, &e) &&
                   tir_as_int(ext, &me) && !__builtin_mul_overflow(lf, e, &top) && top == me;
  if (whole_top) { /* the top digits: no modulo needed */
    if (e == 1 && me != 1) return tir_int(a, src->dtype, 0);
    return scale_by(a, tir_binary(a, TIR_FLOOR_DIV, src, s->lower_factor), s->scale);
  }
  tir_expr_t *x = src;
  if (tir_is_const_int(s->lower_factor, 1)) {
    x = tir_binary(a, TIR_FLOOR_MOD, x, s->extent);
  } else {
    x = tir_binary(a, TIR_FLOOR_DIV, x, s->lower_factor);
    x = tir_binary(a, TIR_FLOOR_MOD, x, s->extent);
  }
  return scale_by(a, x, s->scale);
}

tir_expr_t *tir_iter_sum_to_expr(mlc_arena_t *a, const tir_iter_sum_t *sum) {
  tir_expr_t *acc = NULL;
  for (int i = 0; i < sum->nargs; i++) {
    tir_expr_t *t = split_to_expr(a, &sum->args[i]);
    acc = acc ? tir_binary(a, TIR_ADD, acc, t) : t;
  }
  if (!acc) return sum->base;
  int64_t b;
  if (!sum->base || tir_is_const_int(sum->base, 0)) return acc;
  if (tir_as_int(sum->base, &b) && b < 0 && b != INT64_MIN) /* x - 10, not x + -10 */
    return tir_binary(a, TIR_SUB, acc, tir_int(a, sum->base->dtype, -b));
  return tir_binary(a, TIR_ADD, acc, sum->base);
}
