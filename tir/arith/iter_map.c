/*
 * iter_map.c - tir_detect_iter_map (TVM's DetectIterMap): the entry point.
 *
 *  1. the predicate: a bound on a lone iterator narrows its domain; a bound on
 *     a sum (`i0 * 32 + i1 < 1000`, what split with a non-dividing factor
 *     produces) becomes a constraint fixing the extent of that sum's fused
 *     mark (iter_fuse.c);
 *  2. every binding is rewritten into an iter sum (iter_rewrite.c) and fused
 *     into one split of a mark plus a base;
 *  3. the coverage of every mark is checked at the requested level
 *     (iter_check.c).
 * Everything is allocated in the analyzer's arena.
 */
#include "tir/arith/iter_map.h"

#include <string.h>

typedef struct {
  tir_expr_t *iter, *lb, *ub; /* lb <= iter < ub; either bound may be NULL */
  int size;
} im_constraint_t;

typedef struct {
  im_constraint_t *items;
  int n, cap;
  tir_expr_t **mins, **exts;  /* the iterators' domains, narrowed */
} predicate_t;

static tir_expr_t *plus_one(im_ctx_t *c, tir_expr_t *e) { return im_add(c, e, im_int(c, e, 1)); }

static int count_nodes(tir_expr_t *e) {
  switch (tir_expr_kind_shape(e->kind)) {
  case TIR_SHAPE_BINARY: return 1 + count_nodes(e->u.bin.a) + count_nodes(e->u.bin.b);
  case TIR_SHAPE_UNARY: return 1 + count_nodes(e->u.un.a);
  default: return 1;
  }
}

/* Narrows iterator i's domain to [lb, ub). */
static void narrow_domain(im_ctx_t *c, predicate_t *p, int i, tir_expr_t *lb, tir_expr_t *ub) {
  tir_expr_t *min = p->mins[i], *end = im_add(c, p->mins[i], p->exts[i]);
  if (lb) min = arith_make(c->an, TIR_MAX, min, arith_simplify(c->an, tir_cast(c->arena, min->dtype, lb)));
  if (ub) end = arith_make(c->an, TIR_MIN, end, arith_simplify(c->an, tir_cast(c->arena, end->dtype, ub)));
  p->mins[i] = min;
  p->exts[i] = im_sub(c, end, min);
}

static bool push_constraint(im_ctx_t *c, predicate_t *p, tir_expr_t *iter, tir_expr_t *lb, tir_expr_t *ub) {
  int i = iter->kind == TIR_VAR ? im_var_index(c, iter) : -1;
  if (i >= 0) {
    narrow_domain(c, p, i, lb, ub);
    return true;
  }
  if (p->n == p->cap) {
    int cap = p->cap ? p->cap * 2 : 4;
    im_constraint_t *x = mlc_arena_grow(c->arena, p->items, (size_t)p->n, (size_t)cap, sizeof(*x));
    if (!x) return im_fail(c, "out of memory");
    p->items = x;
    p->cap = cap;
  }
  p->items[p->n++] = (im_constraint_t){iter, lb, ub, count_nodes(iter)};
  return true;
}

/* `lhs - rhs` split into the part with iterators and the rest: the
 * comparison becomes `iter OP bound`. */
static void separate_iters(im_ctx_t *c, tir_expr_t *lhs, tir_expr_t *rhs, tir_expr_t **iter,
                           tir_expr_t **bound) {
  arith_lin_t l, it, rest;
  tir_expr_t *d = arith_make(c->an, TIR_SUB, lhs, rhs);
  arith_lin_init(&l, d->dtype);
  arith_lin_add_expr(c->an, &l, d, 1);
  arith_lin_init(&it, d->dtype);
  arith_lin_init(&rest, d->dtype);
  for (int i = 0; i < l.n; i++)
    arith_lin_add_term(c->an, im_uses_iter(c, l.terms[i].atom) ? &it : &rest, l.terms[i].atom,
                       l.terms[i].coef);
  arith_lin_t neg;
  arith_lin_init(&neg, d->dtype);
  arith_lin_add_lin(c->an, &neg, &rest, -1);
  neg.base = arith_coef_wrap(d->dtype, 0 - (uint64_t)l.base);
  *iter = arith_lin_to_expr(c->an, &it);
  *bound = arith_lin_to_expr(c->an, &neg);
}

/* One comparison of the predicate (TVM's MatchBoundConstraints). */
static bool parse_compare(im_ctx_t *c, predicate_t *p, tir_expr_t *e) {
  tir_expr_t *lhs = e->u.bin.a, *rhs = e->u.bin.b, *iter, *bound;
  if (!tir_dtype_is_integer(lhs->dtype) || !tir_dtype_is_integer(rhs->dtype))
    return im_fail(c, "the predicate compares non-integers");
  bool lu = im_uses_iter(c, lhs), ru = im_uses_iter(c, rhs);
  if (!lu && !ru) return true; /* says nothing about the iterators */
  bool bound_left = false;
  if (!lu) {
    bound_left = true;
    iter = rhs;
    bound = lhs;
  } else if (!ru) {
    iter = lhs;
    bound = rhs;
  } else {
    separate_iters(c, lhs, rhs, &iter, &bound);
  }
  bool less = e->kind == TIR_LT || e->kind == TIR_LE, eq = e->kind == TIR_LE || e->kind == TIR_GE;
  tir_expr_t *lb = NULL, *ub = NULL;
  if (less == bound_left) /* bound < iter, iter > bound */
    lb = eq ? bound : plus_one(c, bound);
  else                    /* iter < bound, bound > iter */
    ub = eq ? plus_one(c, bound) : bound;
  return push_constraint(c, p, iter, lb, ub);
}

static bool parse_predicate(im_ctx_t *c, predicate_t *p, tir_expr_t *e, int depth) {
  bool v;
  if (!e || (arith_as_bool(e, &v) && v)) return true;
  if (depth > 64) return im_fail(c, "the predicate is too deep");
  if (e->kind == TIR_AND)
    return parse_predicate(c, p, e->u.bin.a, depth + 1) && parse_predicate(c, p, e->u.bin.b, depth + 1);
  if (e->kind >= TIR_LT && e->kind <= TIR_GE) return parse_compare(c, p, e);
  return im_fail(c, "could not parse the predicate as bounds on the iterators");
}

/* Marks and sums of the iterators: extent 1 means the constant min. */
static bool make_marks(im_ctx_t *c, const predicate_t *p) {
  for (int i = 0; i < c->nvars; i++) {
    tir_expr_t *min = p->mins[i], *ext = p->exts[i];
    if (im_is_const(ext, 1)) {
      c->var_plain[i] = min;
      continue;
    }
    tir_iter_mark_t *m = mlc_arena_alloc(c->arena, sizeof(*m));
    if (!m) return im_fail(c, "out of memory");
    m->var = c->vars[i];
    m->var_min = im_is_const(min, 0) ? NULL : min;
    m->extent = ext;
    c->marks[i] = m;
    c->var_sum[i] = im_sum_new(c, 1, min);
    c->var_sum[i].args[0] = im_split_of_mark(c, m, im_int(c, ext, 1));
  }
  return true;
}

static void sort_constraints(predicate_t *p) {
  for (int i = 1; i < p->n; i++) {
    im_constraint_t x = p->items[i];
    int j = i - 1;
    while (j >= 0 && p->items[j].size > x.size) {
      p->items[j + 1] = p->items[j];
      j--;
    }
    p->items[j + 1] = x;
  }
}

static bool apply_constraints(im_ctx_t *c, predicate_t *p) {
  sort_constraints(p); /* inner sums before the sums containing them */
  for (int i = 0; i < p->n; i++) {
    im_val_t v = im_rewrite(c, p->items[i].iter);
    if (c->failed) return false;
    if (v.iter && !im_add_constraint(c, v.sum, p->items[i].lb, p->items[i].ub)) return false;
  }
  return im_check_constraints(c);
}

/* A split of a mark that only wraps one split of another mark is a split of
 * that mark: floordiv(floormod(floordiv(x, l), e), l2) % e2 with l2*e2 | e is
 * floordiv(x, l*l2) % e2. TVM leaves such wrappers; callers want x. */
static tir_iter_split_t unwrap(im_ctx_t *c, tir_iter_split_t s) {
  for (;;) {
    const tir_iter_mark_t *m = s.source;
    if (!m->sum || m->sum->nargs != 1 || !im_is_const(m->sum->base, 0)) break;
    const tir_iter_split_t *in = &m->sum->args[0];
    if (!im_is_const(in->scale, 1) || !im_equal(c, in->extent, m->extent) ||
        !im_divisible(c, in->extent, im_mul(c, s.lower_factor, s.extent)))
      break;
    s.source = in->source;
    s.lower_factor = im_mul(c, in->lower_factor, s.lower_factor);
  }
  return s;
}

static int fail_binding(im_ctx_t *c, int b, tir_expr_t *e) {
  return mlc_error_set(MLC_EINVAL, "binding %d (%s): %s", b, im_str(c, e), c->why);
}

static int detect(im_ctx_t *c, tir_iter_map_t *out, tir_expr_t **bindings, int n,
                  const tir_range_t *doms, tir_expr_t *predicate) {
  predicate_t p = {NULL, 0, 0, mlc_arena_alloc(c->arena, sizeof(tir_expr_t *) * (size_t)(c->nvars + 1)),
                   mlc_arena_alloc(c->arena, sizeof(tir_expr_t *) * (size_t)(c->nvars + 1))};
  if (!p.mins || !p.exts) return mlc_error_set(MLC_ENOMEM, "detecting an iteration map");
  for (int i = 0; i < c->nvars; i++) {
    if (im_uses_iter(c, doms[i].min) || im_uses_iter(c, doms[i].extent))
      return mlc_error_set(MLC_EINVAL, "the domain of iterator %s mentions another iterator",
                           c->vars[i]->u.var.name);
    p.mins[i] = arith_simplify(c->an, tir_cast(c->arena, c->vars[i]->dtype, doms[i].min));
    p.exts[i] = arith_simplify(c->an, tir_cast(c->arena, c->vars[i]->dtype, doms[i].extent));
  }
  if (!parse_predicate(c, &p, predicate, 0) || !make_marks(c, &p) || !apply_constraints(c, &p))
    return mlc_error_set(MLC_EINVAL, "predicate (%s): %s", im_str(c, predicate), c->why);
  tir_iter_sum_t *sums = mlc_arena_alloc(c->arena, sizeof(*sums) * (size_t)(n + 1));
  if (!sums) return mlc_error_set(MLC_ENOMEM, "detecting an iteration map");
  for (int b = 0; b < n; b++) {
    im_val_t v = im_rewrite(c, bindings[b]);
    if (c->failed) return fail_binding(c, b, bindings[b]);
    sums[b] = v.iter ? v.sum : (tir_iter_sum_t){0, NULL, v.plain};
    if (v.iter && !im_try_fuse(c, &v.sum, true, &sums[b])) return fail_binding(c, b, bindings[b]);
  }
  if (!im_check_mapping(c, sums, n, c->check, false))
    return mlc_error_set(MLC_EINVAL, "%s", c->why);
  out->bijective = c->check == TIR_ITER_BIJECTIVE;
  for (int b = 0; b < n; b++)
    for (int i = 0; i < sums[b].nargs; i++) sums[b].args[i] = unwrap(c, sums[b].args[i]);
  out->n = n;
  out->sums = sums;
  return MLC_OK;
}

static int detect_level(tir_iter_map_t *out, tir_analyzer_t *an, tir_expr_t **bindings, int n,
                        tir_var_t **vars, const tir_range_t *doms, int nvars,
                        tir_expr_t *predicate, tir_iter_check_t check);

int tir_detect_iter_map(tir_iter_map_t *out, tir_analyzer_t *an, tir_expr_t **bindings, int n,
                        tir_var_t **vars, const tir_range_t *doms, int nvars,
                        tir_expr_t *predicate, tir_iter_check_t check) {
  int rc = detect_level(out, an, bindings, n, vars, doms, nvars, predicate, check);
  if (rc != MLC_OK || check == TIR_ITER_BIJECTIVE) return rc;
  /* Bijective is more than coverage: fusion must not have used the
   * surjective shortcuts either, so ask the question again. */
  tir_iter_map_t strict;
  out->bijective = detect_level(&strict, an, bindings, n, vars, doms, nvars, predicate,
                                TIR_ITER_BIJECTIVE) == MLC_OK;
  mlc_error_clear();
  return MLC_OK;
}

static int detect_level(tir_iter_map_t *out, tir_analyzer_t *an, tir_expr_t **bindings, int n,
                        tir_var_t **vars, const tir_range_t *doms, int nvars,
                        tir_expr_t *predicate, tir_iter_check_t check) {
  memset(out, 0, sizeof(*out));
  if (!an || n < 0 || nvars < 0) return mlc_error_set(MLC_EINVAL, "tir_detect_iter_map: bad arguments");
  im_ctx_t *c = mlc_arena_alloc(an->arena, sizeof(*c));
  tir_expr_t **plains = mlc_arena_alloc(an->arena, sizeof(tir_expr_t *) * (size_t)(nvars + 1));
  tir_iter_sum_t *sums = mlc_arena_alloc(an->arena, sizeof(tir_iter_sum_t) * (size_t)(nvars + 1));
  tir_iter_mark_t **marks = mlc_arena_alloc(an->arena, sizeof(tir_iter_mark_t *) * (size_t)(nvars + 1));
  if (!c || !plains || !sums || !marks) return mlc_error_set(MLC_ENOMEM, "detecting an iteration map");
  c->an = an;
  c->arena = an->arena;
  c->check = check;
  c->nvars = nvars;
  c->vars = vars;
  c->var_plain = plains;
  c->var_sum = sums;
  c->marks = marks;
  jmp_buf jb;
  jmp_buf *prev = mlc_arena_set_oom_handler(an->arena, &jb);
  if (prev) { /* the caller handles out of memory */
    mlc_arena_set_oom_handler(an->arena, prev);
    return detect(c, out, bindings, n, doms, predicate);
  }
  int depth = an->depth;
  if (setjmp(jb)) {
    mlc_arena_set_oom_handler(an->arena, NULL);
    an->depth = depth;
    memset(out, 0, sizeof(*out));
    return mlc_error_set(MLC_ENOMEM, "detecting an iteration map");
  }
  int rc = detect(c, out, bindings, n, doms, predicate);
  mlc_arena_set_oom_handler(an->arena, NULL);
  return rc;
}
