/*
 * iter_check.c - coverage check of an iteration map (TVM's CheckMapping and
 * TryNormalizeSplits): every mark reached from the bindings (iterators and
 * fused marks, recursively) collects the splits that use it; ordered by lower
 * factor from 1 upwards, each split must start where the previous one ended
 * (lower_factor == previous lower_factor * previous extent).
 *
 * - bijective: no gaps, the last split ends at the mark's extent, and every
 *   iterator of extent > 1 is used;
 * - surjective: whole middle digits may be skipped (x in [0, 24):
 *   [x // 6, x % 2] passes), and the covered part must divide the extent;
 * - injective: only "no split overlaps another".
 */
#include "tir/arith/iter_map.h"

typedef struct {
  tir_iter_mark_t *mark;
  tir_iter_split_t *splits;
  int *binding;             /* per split: the binding it came from */
  int n, cap;
} mark_use_t;

typedef struct {
  mark_use_t *uses;
  int n, cap;
} collector_t;

static mark_use_t *use_of(collector_t *col, const tir_iter_mark_t *m) {
  for (int i = 0; i < col->n; i++)
    if (col->uses[i].mark == m) return &col->uses[i];
  return NULL;
}

static mark_use_t *add_mark(im_ctx_t *c, collector_t *col, tir_iter_mark_t *m) {
  if (col->n == col->cap) {
    int cap = col->cap ? col->cap * 2 : 8;
    mark_use_t *u = mlc_arena_grow(c->arena, col->uses, (size_t)col->n, (size_t)cap, sizeof(*u));
    if (!u) return NULL;
    col->uses = u;
    col->cap = cap;
  }
  mark_use_t *u = &col->uses[col->n++];
  *u = (mark_use_t){m, NULL, NULL, 0, 0};
  return u;
}

static void add_split(im_ctx_t *c, collector_t *col, const tir_iter_split_t *s, int binding) {
  mark_use_t *u = use_of(col, s->source);
  if (!u) return;
  if (u->n == u->cap) {
    int cap = u->cap ? u->cap * 2 : 4;
    tir_iter_split_t *sp = mlc_arena_grow(c->arena, u->splits, (size_t)u->n, (size_t)cap, sizeof(*sp));
    int *b = mlc_arena_grow(c->arena, u->binding, (size_t)u->n, (size_t)cap, sizeof(*b));
    if (!sp || !b) return;
    u->splits = sp;
    u->binding = b;
    u->cap = cap;
  }
  u->splits[u->n] = *s;
  u->binding[u->n] = binding;
  u->n++;
}

static void collect_mark(im_ctx_t *c, collector_t *col, tir_iter_mark_t *m, int binding) {
  if (use_of(col, m) || !add_mark(c, col, m) || !m->sum) return;
  for (int i = 0; i < m->sum->nargs; i++) {
    collect_mark(c, col, m->sum->args[i].source, binding);
    add_split(c, col, &m->sum->args[i], binding);
  }
}

/* Two splits starting at the same lower factor read the same digits. */
static bool report_duplicate(im_ctx_t *c, const mark_use_t *u) {
  for (int i = 0; i < u->n; i++) {
    for (int j = i + 1; j < u->n; j++) {
      if (!im_equal(c, u->splits[i].lower_factor, u->splits[j].lower_factor)) continue;
      const char *name = im_mark_str(c, u->mark);
      if (u->binding[i] == u->binding[j])
        return im_fail(c, "iterator %s used twice (binding %d)", name, u->binding[i]);
      return im_fail(c, "iterator %s used twice (bindings %d and %d)", name, u->binding[i], u->binding[j]);
    }
  }
  return false;
}

/* An unused split whose lower factor is the smallest multiple of `expected`
 * among the unused ones (surjective maps may skip middle digits). */
static int search_skip(im_ctx_t *c, const mark_use_t *u, const bool *used, tir_expr_t *expected) {
  int res = -1;
  for (int i = 0; i < u->n; i++) {
    if (used[i]) continue;
    if (!im_divisible(c, u->splits[i].lower_factor, expected)) return -1;
    if (res < 0 || im_divisible(c, u->splits[res].lower_factor, u->splits[i].lower_factor)) res = i;
  }
  return res;
}

static bool fail_coverage(im_ctx_t *c, const mark_use_t *u, tir_expr_t *covered, bool quiet,
                          const char *how) {
  if (quiet) return false;
  if (report_duplicate(c, u)) return false;
  return im_fail(c, "extents do not match: the splits of iterator %s %s %s of its extent %s",
                 im_mark_str(c, u->mark), how, im_str(c, covered), im_str(c, u->mark->extent));
}

static bool normalize_splits(im_ctx_t *c, const mark_use_t *u, tir_iter_check_t level, bool quiet) {
  bool *used = mlc_arena_alloc(c->arena, sizeof(bool) * (size_t)(u->n + 1));
  if (!used) return false;
  tir_expr_t *expected = im_int(c, u->mark->extent, 1);
  for (int i = 0; i < u->n; i++) {
    int j = 0;
    for (; j < u->n; j++)
      if (!used[j] && im_equal(c, u->splits[j].lower_factor, expected)) break;
    if (j == u->n) {
      if (level == TIR_ITER_BIJECTIVE) return fail_coverage(c, u, expected, quiet, "leave a gap at");
      j = search_skip(c, u, used, expected);
      if (j < 0) return fail_coverage(c, u, expected, quiet, "overlap after covering");
    }
    used[j] = true;
    expected = im_mul(c, u->splits[j].lower_factor, u->splits[j].extent);
  }
  if (level == TIR_ITER_INJECTIVE) return true;
  bool full = im_equal(c, expected, u->mark->extent);
  if (level == TIR_ITER_BIJECTIVE && !full) return fail_coverage(c, u, expected, quiet, "cover");
  if (!full && !im_divisible(c, u->mark->extent, expected))
    return fail_coverage(c, u, expected, quiet, "cover a non-divisor");
  return true;
}

/* A predicate bounds a fused sum; bindings that use its iterators without
 * going through that sum would see values the map does not describe. */
static bool check_constrained_used(im_ctx_t *c, collector_t *col, bool quiet) {
  for (int k = 0; k < c->nconstrained; k++) {
    const tir_iter_sum_t *flat = &c->constrained[k];
    im_fused_t *fu = NULL;
    for (int i = 0; i < c->nfused && !fu; i++)
      if (im_sum_equal(c, &c->fused[i].flat, flat)) fu = &c->fused[i];
    if (!fu || use_of(col, fu->mark)) continue;
    for (int a = 0; a < flat->nargs; a++) {
      if (!use_of(col, flat->args[a].source)) continue;
      if (quiet) return false;
      return im_fail(c, "the predicate bounds %s, but the bindings use iterator %s apart from it",
                     im_mark_str(c, fu->mark), im_mark_str(c, flat->args[a].source));
    }
  }
  return true;
}

bool im_check_mapping(im_ctx_t *c, const tir_iter_sum_t *sums, int n, tir_iter_check_t level, bool quiet) {
  collector_t col = {NULL, 0, 0};
  for (int b = 0; b < n; b++) {
    for (int i = 0; i < sums[b].nargs; i++) {
      collect_mark(c, &col, sums[b].args[i].source, b);
      add_split(c, &col, &sums[b].args[i], b);
    }
  }
  for (int i = 0; i < col.n; i++)
    if (!normalize_splits(c, &col.uses[i], level, quiet)) return false;
  if (!check_constrained_used(c, &col, quiet)) return false;
  if (level != TIR_ITER_BIJECTIVE) return true;
  for (int i = 0; i < c->nvars; i++) {
    if (c->marks[i] && !use_of(&col, c->marks[i]))
      return quiet ? false : im_fail(c, "iterator %s is not used by any binding", im_mark_str(c, c->marks[i]));
  }
  return true;
}
