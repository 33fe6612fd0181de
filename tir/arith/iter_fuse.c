/*
 * iter_fuse.c - the fusion half of the iteration-map analysis (TVM's
 * TryCombineSplitFromSameSource, TryFuseIters, NormalizeToIterOnBoundExpr and
 * CheckConstraints).
 *
 * A sum x1*c1 + ... + xn*cn is fused when, starting from the smallest scale,
 * each next scale equals the previous split's extent times its scale: then it
 * is one iterator (a mark whose source is the sum with scales divided by the
 * smallest) times that smallest scale. Marks are remembered by their
 * flattened form so every binding mentioning the same fused sum shares one
 * mark, and a predicate `sum < bound` shrinks that mark's extent to the bound.
 */
#include "tir/arith/iter_map.h"

#include <string.h>

/* Index of the split to start fusing from: the smallest constant scale
 * (extent 1 first on ties), else the last one; only unvisited splits of
 * `source` (any when NULL) at or before rbegin. -1 when none. */
static int find_base(im_ctx_t *c, const tir_iter_sum_t *s, const bool *visited,
                     const tir_iter_mark_t *source, int rbegin) {
  int best = -1, fallback = -1;
  int64_t best_scale = 0;
  (void)c;
  for (int i = rbegin; i >= 0; i--) {
    const tir_iter_split_t *sp = &s->args[i];
    if (visited[i] || (source && sp->source != source)) continue;
    if (fallback < 0) fallback = i;
    int64_t v;
    if (!tir_as_int(sp->scale, &v)) continue;
    if (best < 0 || v < best_scale ||
        (v == best_scale && im_is_const(sp->extent, 1) && !im_is_const(s->args[best].extent, 1))) {
      best = i;
      best_scale = v;
    }
  }
  return best >= 0 ? best : fallback;
}

/* Index of an unvisited split with exactly `scale` (extent 1 preferred), -1
 * when none. */
static int find_exact_scale(im_ctx_t *c, const tir_iter_sum_t *s, const bool *visited,
                            tir_expr_t *scale, const tir_iter_mark_t *source, int rbegin) {
  int matched = -1;
  for (int j = rbegin; j >= 0; j--) {
    const tir_iter_split_t *sp = &s->args[j];
    if (visited[j] || (source && sp->source != source)) continue;
    if (!im_equal(c, sp->scale, scale)) continue;
    if (im_is_const(sp->extent, 1)) return j;
    if (matched < 0) matched = j;
  }
  return matched;
}

/* Largest constant scale in [0, expected] (surjective fusion with gaps). */
static int find_smaller_closest(const tir_iter_sum_t *s, const bool *visited, tir_expr_t *expected,
                                tir_expr_t **matched_scale) {
  int64_t e, best_v = -1;
  int best = -1;
  if (!tir_as_int(expected, &e)) return -1;
  for (int j = s->nargs - 1; j >= 0; j--) {
    int64_t v;
    if (visited[j] || !tir_as_int(s->args[j].scale, &v) || v < 0 || v > e) continue;
    if (best < 0 || v > best_v) {
      best = j;
      best_v = v;
    }
  }
  if (best >= 0) *matched_scale = s->args[best].scale;
  return best;
}

/* Merges splits of one source with consecutive lower factors and scales:
 * floordiv(x, c*s) % m * s*t + floordiv(x, c) % s * t = floordiv(x, c) % (m*s) * t.
 * False when no source appears twice. */
static bool combine_same_source(im_ctx_t *c, const tir_iter_sum_t *in, tir_iter_sum_t *out) {
  int n = in->nargs;
  if (n <= 1) return false;
  int *hits = mlc_arena_alloc(c->arena, sizeof(int) * (size_t)n);
  bool *visited = mlc_arena_alloc(c->arena, sizeof(bool) * (size_t)n);
  tir_iter_split_t *rev = mlc_arena_alloc(c->arena, sizeof(*rev) * (size_t)n);
  if (!hits || !visited || !rev) return false;
  bool overlap = false;
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) {
      if (in->args[j].source != in->args[i].source) continue;
      hits[i]++;
      if (j != i) overlap = true;
    }
  }
  if (!overlap) return false;
  int nrev = 0;
  for (int rend = n - 1; rend >= 0;) {
    if (visited[rend]) {
      rend--;
      continue;
    }
    if (hits[rend] == 1) {
      rev[nrev++] = in->args[rend];
      visited[rend] = true;
      rend--;
      continue;
    }
    int m = find_base(c, in, visited, in->args[rend].source, rend);
    visited[m] = true;
    tir_iter_split_t rhs = in->args[m];
    for (;;) {
      tir_expr_t *lhs_scale = im_mul(c, rhs.extent, rhs.scale);
      int k = find_exact_scale(c, in, visited, lhs_scale, rhs.source, rend);
      if (k < 0 || !im_equal(c, in->args[k].lower_factor, im_mul(c, rhs.lower_factor, rhs.extent)))
        break;
      visited[k] = true;
      rhs.extent = im_mul(c, in->args[k].extent, rhs.extent);
    }
    rev[nrev++] = rhs;
  }
  *out = im_sum_new(c, nrev, in->base);
  for (int i = 0; i < nrev; i++) out->args[i] = rev[nrev - 1 - i];
  return true;
}

/* The longest registered constraint whose innermost split is `sp`. */
static const tir_iter_sum_t *constraint_starting_at(im_ctx_t *c, const tir_iter_split_t *sp) {
  const tir_iter_sum_t *best = NULL;
  for (int k = 0; k < c->nconstrained; k++) {
    const tir_iter_sum_t *f = &c->constrained[k];
    if (f->nargs > 0 && im_split_equal(c, sp, &f->args[f->nargs - 1], false) &&
        (!best || best->nargs < f->nargs))
      best = f;
  }
  return best;
}

typedef struct {
  tir_iter_split_t *flat, *grouped;
  int nflat, ngrouped;
  tir_expr_t *extra_base, *tail_extent, *expected_scale, *base_scale;
} fuse_state_t;

/* Consumes the splits of constraint f (innermost at the matched position),
 * grouping them as one split of the constrained mark. */
static bool take_constraint(im_ctx_t *c, const tir_iter_sum_t *s, bool *visited, fuse_state_t *st,
                            const tir_iter_sum_t *f, tir_expr_t *matched_scale, bool exact) {
  for (int it = f->nargs - 1; it >= 0; it--) {
    int k = 0;
    for (; k < s->nargs; k++)
      if (!visited[k] && im_split_equal(c, &s->args[k], &f->args[it], false) &&
          im_equal(c, im_mul(c, f->args[it].scale, matched_scale), s->args[k].scale))
        break;
    if (k == s->nargs) return im_fail(c, "the predicate's iterators do not match those of the sum");
    visited[k] = true;
    tir_iter_split_t sp = s->args[k];
    sp.scale = im_floordiv(c, sp.scale, st->base_scale);
    st->flat[st->nflat++] = sp;
  }
  im_fused_t *fu = NULL;
  for (int i = 0; i < c->nfused && !fu; i++)
    if (im_sum_equal(c, &c->fused[i].flat, f)) fu = &c->fused[i];
  if (!fu) return im_fail(c, "internal: constrained sum without a mark");
  st->grouped[st->ngrouped++] = im_split_of_mark(c, fu->mark, im_floordiv(c, matched_scale, st->base_scale));
  st->extra_base = im_add(c, st->extra_base, im_mul(c, fu->offset, matched_scale));
  if (!exact) st->tail_extent = im_add(c, st->tail_extent, im_sub(c, st->expected_scale, matched_scale));
  st->expected_scale = im_mul(c, fu->mark->extent, matched_scale);
  return true;
}

/* Walks the splits from the smallest scale up; false when they do not chain. */
static bool chain_splits(im_ctx_t *c, const tir_iter_sum_t *s, bool *visited, int base_index,
                         fuse_state_t *st) {
  for (int i = 0; i < s->nargs;) {
    tir_expr_t *matched_scale = NULL;
    int pos = i == 0 ? base_index
                     : find_exact_scale(c, s, visited, st->expected_scale, NULL, s->nargs - 1);
    bool exact = pos >= 0;
    if (exact) matched_scale = st->expected_scale;
    if (!exact && c->check != TIR_ITER_BIJECTIVE && im_is_const(st->base_scale, 1))
      pos = find_smaller_closest(s, visited, st->expected_scale, &matched_scale);
    if (pos < 0)
      return im_fail(c, "no iterator with scale %s to fuse with", im_str(c, st->expected_scale));
    const tir_iter_sum_t *f = constraint_starting_at(c, &s->args[pos]);
    if (f) {
      if (!take_constraint(c, s, visited, st, f, matched_scale, exact)) return false;
      i += f->nargs;
      continue;
    }
    visited[pos] = true;
    tir_iter_split_t sp = s->args[pos];
    sp.scale = im_floordiv(c, sp.scale, st->base_scale);
    st->flat[st->nflat++] = sp;
    st->grouped[st->ngrouped++] = sp;
    if (!exact) st->tail_extent = im_add(c, st->tail_extent, im_sub(c, st->expected_scale, matched_scale));
    st->expected_scale = im_mul(c, s->args[pos].extent, matched_scale);
    i++;
  }
  return true;
}

static tir_iter_sum_t reversed(im_ctx_t *c, const tir_iter_split_t *xs, int n, tir_expr_t *base) {
  tir_iter_sum_t s = im_sum_new(c, n, base);
  for (int i = 0; i < n; i++) s.args[i] = xs[n - 1 - i];
  return s;
}

bool im_try_fuse(im_ctx_t *c, const tir_iter_sum_t *sum, bool allow_early_skip, tir_iter_sum_t *out) {
  tir_iter_sum_t s = *sum, comb;
  if (combine_same_source(c, &s, &comb)) {
    s = comb;
    if (s.nargs <= 1 && allow_early_skip) {
      *out = s;
      return true;
    }
  }
  int n = s.nargs;
  bool *visited = mlc_arena_alloc(c->arena, sizeof(bool) * (size_t)(n + 1));
  fuse_state_t st = {mlc_arena_alloc(c->arena, sizeof(tir_iter_split_t) * (size_t)(n + 1)),
                     mlc_arena_alloc(c->arena, sizeof(tir_iter_split_t) * (size_t)(n + 1)), 0, 0,
                     NULL, NULL, NULL, NULL};
  if (!visited || !st.flat || !st.grouped) return im_fail(c, "out of memory");
  int base_index = find_base(c, &s, visited, NULL, n - 1);
  if (base_index < 0) return im_fail(c, "nothing to fuse");
  st.base_scale = s.args[base_index].scale;
  st.expected_scale = st.base_scale;
  st.extra_base = im_int(c, st.base_scale, 0);
  st.tail_extent = im_int(c, st.base_scale, 0);
  if (!chain_splits(c, &s, visited, base_index, &st)) return false;
  tir_iter_sum_t flat = reversed(c, st.flat, st.nflat, im_int(c, st.base_scale, 0));
  tir_expr_t *base = im_add(c, s.base, st.extra_base);
  for (int i = 0; i < c->nfused; i++) {
    if (!im_sum_equal(c, &c->fused[i].flat, &flat)) continue;
    if (!im_equal(c, st.extra_base, im_mul(c, c->fused[i].offset, st.base_scale)))
      return im_fail(c, "inconsistent offsets of one fused iterator");
    *out = im_sum_new(c, 1, base);
    out->args[0] = im_split_of_mark(c, c->fused[i].mark, st.base_scale);
    return true;
  }
  tir_iter_mark_t *mark = mlc_arena_alloc(c->arena, sizeof(*mark));
  tir_iter_sum_t *structured = mlc_arena_alloc(c->arena, sizeof(*structured));
  if (!mark || !structured) return im_fail(c, "out of memory");
  *structured = reversed(c, st.grouped, st.ngrouped, im_int(c, st.base_scale, 0));
  mark->sum = structured;
  mark->extent = im_add(c, im_floordiv(c, st.expected_scale, st.base_scale), st.tail_extent);
  if (c->nfused == c->capfused) {
    int cap = c->capfused ? c->capfused * 2 : 8;
    im_fused_t *f = mlc_arena_grow(c->arena, c->fused, (size_t)c->nfused, (size_t)cap, sizeof(*f));
    if (!f) return im_fail(c, "out of memory");
    c->fused = f;
    c->capfused = cap;
  }
  c->fused[c->nfused++] = (im_fused_t){flat, mark, im_floordiv(c, st.extra_base, st.base_scale)};
  *out = im_sum_new(c, 1, base);
  out->args[0] = im_split_of_mark(c, mark, st.base_scale);
  return true;
}

bool im_add_constraint(im_ctx_t *c, tir_iter_sum_t sum, tir_expr_t *lb, tir_expr_t *ub) {
  if (!im_is_const(sum.base, 0)) {
    if (lb) lb = im_sub(c, lb, sum.base);
    if (ub) ub = im_sub(c, ub, sum.base);
    sum.base = im_int(c, sum.base, 0);
  }
  tir_iter_sum_t f;
  if (!im_try_fuse(c, &sum, false, &f)) return false;
  if (f.nargs != 1 || !im_is_const(f.args[0].scale, 1) || !f.args[0].source->sum)
    return im_fail(c, "could not normalize iterators using the predicate");
  tir_iter_mark_t *mark = f.args[0].source;
  im_fused_t *fu = im_fused_of_mark(c, mark);
  if (!fu) return im_fail(c, "internal: fused mark without a flattened form");
  tir_expr_t *iter_min = fu->offset, *iter_max = im_add(c, iter_min, mark->extent);
  tir_expr_t *delta = im_int(c, iter_min, 0);
  if (lb) {
    tir_expr_t *m = arith_make(c->an, TIR_MAX, lb, iter_min);
    delta = im_sub(c, m, iter_min);
    iter_min = m;
  }
  if (ub) {
    tir_expr_t *le = arith_make(c->an, TIR_LE, ub, iter_max);
    bool proven;
    iter_max = arith_as_bool(le, &proven) && proven ? ub : arith_make(c->an, TIR_MIN, ub, iter_max);
  }
  if (!im_is_const(delta, 0)) mark->sum->base = im_sub(c, mark->sum->base, delta);
  mark->extent = im_sub(c, iter_max, iter_min);
  fu->offset = iter_min;
  if (c->nconstrained == c->capconstrained) {
    int cap = c->capconstrained ? c->capconstrained * 2 : 8;
    tir_iter_sum_t *a = mlc_arena_grow(c->arena, c->constrained, (size_t)c->nconstrained,
                                       (size_t)cap, sizeof(*a));
    if (!a) return im_fail(c, "out of memory");
    c->constrained = a;
    c->capconstrained = cap;
  }
  c->constrained[c->nconstrained++] = fu->flat;
  return true;
}

bool im_check_constraints(im_ctx_t *c) {
  for (int i = 0; i < c->nconstrained; i++) {
    for (int j = i + 1; j < c->nconstrained; j++) {
      int state = 0; /* 1: inclusion, -1: disjoint */
      const tir_iter_sum_t *a = &c->constrained[i], *b = &c->constrained[j];
      for (int x = 0; x < a->nargs; x++) {
        bool found = false;
        for (int y = 0; y < b->nargs && !found; y++) found = im_split_equal(c, &a->args[x], &b->args[y], true);
        if (state == 0) state = found ? 1 : -1;
        else if ((state == -1 && found) || (state == 1 && !found))
          return im_fail(c, "the predicate's constraints overlap without nesting");
      }
    }
  }
  return true;
}
