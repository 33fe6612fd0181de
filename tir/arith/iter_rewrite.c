/*
 * iter_rewrite.c - the rewriting half of the iteration-map analysis (TVM's
 * IterMapRewriter visitors): turns an expression into an iter sum. Iterators
 * become splits of their marks; + and - merge splits of one source, lower
 * factor and extent (so i - i vanishes); multiplying by an iterator-free
 * factor scales; floordiv/floormod by a positive constant first fuse the
 * dividend into one split, then split it further. Anything else that
 * mentions an iterator fails with a message saying what.
 *
 * Iterator padding (TVM's non-divisible splits without a predicate, e.g. an
 * offset that is not a multiple of the divisor) is not supported: such
 * bindings are rejected.
 */
#include "tir/arith/iter_map.h"

#include <string.h>

static im_val_t plain(tir_expr_t *e) { return (im_val_t){false, e, {0, NULL, NULL}}; }
static im_val_t iter(tir_iter_sum_t s) { return (im_val_t){true, NULL, s}; }

int im_var_index(const im_ctx_t *c, const tir_expr_t *v) {
  for (int i = 0; i < c->nvars; i++)
    if (c->vars[i] == v) return i;
  return -1;
}

bool im_uses_iter(const im_ctx_t *c, tir_expr_t *e) {
  return tir_expr_uses_any_var(e, c->vars, c->nvars);
}

static tir_iter_sum_t to_sum(im_ctx_t *c, im_val_t v) {
  return v.iter ? v.sum : (tir_iter_sum_t){0, NULL, v.plain};
}

/* ---- rewriting ------------------------------------------------------------ */


/* s + sign * o, merging splits of one source, lower factor and extent. */
static im_val_t add_sums(im_ctx_t *c, tir_iter_sum_t s, tir_iter_sum_t o, int sign) {
  tir_iter_sum_t r = im_sum_new(c, s.nargs + o.nargs, sign > 0 ? im_add(c, s.base, o.base)
                                                                : im_sub(c, s.base, o.base));
  r.nargs = 0;
  for (int i = 0; i < s.nargs; i++) r.args[r.nargs++] = s.args[i];
  for (int i = 0; i < o.nargs; i++) {
    tir_iter_split_t sp = o.args[i];
    int k = 0;
    for (; k < r.nargs; k++)
      if (im_split_equal(c, &r.args[k], &sp, false)) break;
    if (k < r.nargs) {
      r.args[k].scale = sign > 0 ? im_add(c, r.args[k].scale, sp.scale) : im_sub(c, r.args[k].scale, sp.scale);
    } else {
      if (sign < 0) sp.scale = im_sub(c, im_int(c, sp.scale, 0), sp.scale);
      r.args[r.nargs++] = sp;
    }
  }
  int n = 0; /* i - i: a split with scale 0 is gone */
  for (int i = 0; i < r.nargs; i++)
    if (!im_is_const(r.args[i].scale, 0)) r.args[n++] = r.args[i];
  r.nargs = n;
  return n ? iter(r) : plain(r.base);
}

static im_val_t rewrite_add(im_ctx_t *c, tir_expr_t *e) {
  im_val_t a = im_rewrite(c, e->u.bin.a), b = im_rewrite(c, e->u.bin.b);
  if (!a.iter && !b.iter) return plain(arith_make(c->an, e->kind, a.plain, b.plain));
  return add_sums(c, to_sum(c, a), to_sum(c, b), e->kind == TIR_SUB ? -1 : 1);
}

static im_val_t rewrite_mul(im_ctx_t *c, tir_expr_t *e) {
  im_val_t a = im_rewrite(c, e->u.bin.a), b = im_rewrite(c, e->u.bin.b);
  if (!a.iter && !b.iter) return plain(arith_make(c->an, TIR_MUL, a.plain, b.plain));
  if (a.iter && b.iter) {
    im_fail(c, "product of two iterators");
    return plain(e);
  }
  if (!a.iter) {
    im_val_t t = a;
    a = b;
    b = t;
  }
  if (im_is_const(b.plain, 0)) return plain(im_int(c, e, 0));
  tir_iter_sum_t r = im_sum_new(c, a.sum.nargs, im_mul(c, a.sum.base, b.plain));
  for (int i = 0; i < r.nargs; i++) {
    r.args[i] = a.sum.args[i];
    r.args[i].scale = im_mul(c, r.args[i].scale, b.plain);
  }
  return iter(r);
}

/* The dividend as one split plus a base. */
static bool preprocess_dividend(im_ctx_t *c, tir_iter_sum_t s, tir_iter_split_t *split, tir_expr_t **base) {
  if (s.nargs > 1) {
    tir_iter_sum_t f;
    if (!im_try_fuse(c, &s, true, &f)) return false;
    if (f.nargs != 1) return im_fail(c, "the dividend cannot be fused into one iterator");
    s = f;
  }
  *split = s.args[0];
  *base = s.base;
  return true;
}

static tir_expr_t *ceildiv(im_ctx_t *c, tir_expr_t *a, tir_expr_t *b) {
  return im_floordiv(c, im_sub(c, im_add(c, a, b), im_int(c, b, 1)), b);
}

/* Removes a split's scale s from floordiv/floormod by k: floordiv(x*s*q, k)
 * etc. Returns false (with a message) when s and k share nothing usable. */
static bool unscale(im_ctx_t *c, tir_iter_split_t *lhs, tir_expr_t **base, tir_expr_t **k, bool is_div,
                    im_val_t *done) {
  tir_expr_t *s = lhs->scale;
  done->iter = false;
  done->plain = NULL;
  if (im_divisible(c, s, *k) && im_divisible(c, *base, *k)) {
    if (!is_div) { /* floormod(x*k*q + base, k) with k | base: 0 */
      done->plain = im_int(c, s, 0);
      return true;
    }
    lhs->scale = im_floordiv(c, s, *k); /* floordiv(x*k*q + k*b, k) = x*q + b */
    tir_iter_sum_t r = im_sum_new(c, 1, im_floordiv(c, *base, *k));
    r.args[0] = *lhs;
    *done = iter(r);
    return true;
  }
  if (im_divisible(c, *k, s) && im_divisible(c, *base, s)) {
    /* floordiv(x*s + s*b, s*k') = floordiv(x + b, k'); floormod keeps the scale */
    *base = im_floordiv(c, *base, s);
    *k = im_floordiv(c, *k, s);
    if (is_div) lhs->scale = im_int(c, s, 1);
    return true;
  }
  return im_fail(c, "the scale %s and the divisor %s cannot be simplified", im_str(c, s), im_str(c, *k));
}

static im_val_t split_floordiv(im_ctx_t *c, tir_iter_split_t lhs, tir_expr_t *base, tir_expr_t *k) {
  if (im_is_const(k, 1)) {
    tir_iter_sum_t r = im_sum_new(c, 1, base);
    r.args[0] = lhs;
    return iter(r);
  }
  im_val_t done;
  if (!im_is_const(lhs.scale, 1)) {
    if (!unscale(c, &lhs, &base, &k, true, &done)) return plain(base);
    if (done.iter || done.plain) return done;
    if (im_is_const(k, 1)) {
      tir_iter_sum_t r = im_sum_new(c, 1, base);
      r.args[0] = lhs;
      return iter(r);
    }
  }
  if (!im_divisible(c, base, k)) {
    im_fail(c, "the offset %s is not a multiple of the divisor %s (iterator padding is not supported)",
            im_str(c, base), im_str(c, k));
    return plain(base);
  }
  tir_iter_split_t r = lhs;
  if (im_divisible(c, lhs.extent, k)) {
    r.lower_factor = im_mul(c, lhs.lower_factor, k);
    r.extent = im_floordiv(c, lhs.extent, k);
  } else if (im_equal(c, im_mul(c, lhs.lower_factor, lhs.extent), lhs.source->extent)) {
    /* the top digits of a mark by a non-divisor: floordiv(x, lf * k) */
    r.lower_factor = im_mul(c, lhs.lower_factor, k);
    r.extent = ceildiv(c, lhs.extent, k);
  } else { /* split of a split: a new mark over it */
    tir_iter_mark_t *m = mlc_arena_alloc(c->arena, sizeof(*m));
    tir_iter_sum_t *s = mlc_arena_alloc(c->arena, sizeof(*s));
    if (!m || !s) return plain(base);
    *s = im_sum_new(c, 1, im_int(c, k, 0));
    s->args[0] = lhs;
    s->args[0].scale = im_int(c, k, 1);
    m->sum = s;
    m->extent = lhs.extent;
    r = (tir_iter_split_t){m, k, ceildiv(c, lhs.extent, k), lhs.scale};
  }
  tir_iter_sum_t out = im_sum_new(c, 1, im_floordiv(c, base, k));
  out.args[0] = r;
  return iter(out);
}

static im_val_t split_floormod(im_ctx_t *c, tir_iter_split_t lhs, tir_expr_t *base, tir_expr_t *k) {
  if (im_is_const(k, 1)) return plain(im_int(c, k, 0));
  im_val_t done;
  if (!im_is_const(lhs.scale, 1)) {
    if (!unscale(c, &lhs, &base, &k, false, &done)) return plain(base);
    if (done.iter || done.plain) return done;
  }
  if (!im_divisible(c, base, k)) {
    im_fail(c, "the offset %s is not a multiple of the divisor %s (iterator padding is not supported)",
            im_str(c, base), im_str(c, k));
    return plain(base);
  }
  /* floormod(floormod(y, e), k) is floormod(y, k) only when k divides e, or
   * when the split is the top digits of its mark (then it never wraps). */
  int64_t e, kv;
  if (!im_divisible(c, lhs.extent, k) &&
      !im_equal(c, im_mul(c, lhs.lower_factor, lhs.extent), lhs.source->extent)) {
    if (tir_as_int(lhs.extent, &e) && tir_as_int(k, &kv) && e <= kv) { /* values below k: unchanged */
      tir_iter_sum_t out = im_sum_new(c, 1, im_int(c, k, 0));
      out.args[0] = lhs;
      return iter(out);
    }
    im_fail(c, "floormod by %s of a split of extent %s (iterator padding is not supported)",
            im_str(c, k), im_str(c, lhs.extent));
    return plain(base);
  }
  lhs.extent = k;
  tir_iter_sum_t out = im_sum_new(c, 1, im_int(c, k, 0));
  out.args[0] = lhs;
  return iter(out);
}

static im_val_t rewrite_div(im_ctx_t *c, tir_expr_t *e) {
  const char *op = e->kind == TIR_FLOOR_DIV ? "floordiv" : "floormod";
  im_val_t a = im_rewrite(c, e->u.bin.a), b = im_rewrite(c, e->u.bin.b);
  if (b.iter) {
    im_fail(c, "%s by an iterator (%s)", op, im_str(c, e->u.bin.b));
    return plain(e);
  }
  if (!a.iter) return plain(arith_make(c->an, e->kind, a.plain, b.plain));
  int64_t k;
  if (!tir_as_int(b.plain, &k)) {
    im_fail(c, "%s by non-constant %s", op, im_str(c, b.plain));
    return plain(e);
  }
  if (k <= 0) {
    im_fail(c, "%s by non-positive %s", op, im_str(c, b.plain));
    return plain(e);
  }
  tir_iter_split_t split = {0};
  tir_expr_t *base = NULL;
  if (!preprocess_dividend(c, a.sum, &split, &base)) return plain(e);
  tir_expr_t *kk = im_int(c, split.scale, k);
  return e->kind == TIR_FLOOR_DIV ? split_floordiv(c, split, base, kk) : split_floormod(c, split, base, kk);
}

im_val_t im_rewrite(im_ctx_t *c, tir_expr_t *e) {
  if (c->failed) return plain(e);
  switch (e->kind) {
  case TIR_INT_IMM: return plain(e);
  case TIR_VAR: {
    int i = im_var_index(c, e);
    if (i < 0) return plain(e);
    return c->var_plain[i] ? plain(c->var_plain[i]) : iter(c->var_sum[i]);
  }
  case TIR_ADD:
  case TIR_SUB: return rewrite_add(c, e);
  case TIR_MUL: return rewrite_mul(c, e);
  case TIR_FLOOR_DIV:
  case TIR_FLOOR_MOD: return rewrite_div(c, e);
  default:
    if (im_uses_iter(c, e)) {
      im_fail(c, "%s of iterators is not affine", tir_expr_kind_name(e->kind));
      return plain(e);
    }
    return plain(arith_simplify(c->an, e));
  }
}
