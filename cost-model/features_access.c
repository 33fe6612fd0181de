/*
 * features_access.c - memory footprints from flat indices.
 *
 * Lowered buffers are 1-D, so the hull of an index over the inner loops (what
 * tir_relax_expr gives) says little: a 32x32 tile of a 1024-wide matrix spans
 * 31 * 1024 + 32 elements but touches 1024. Instead an index is written as an
 * affine form c0 + sum(coef_i * atom_i) over the loops of the store's nest
 * (plus the ramp lanes and the copies of an unrolled body), and the number of
 * distinct elements is estimated from the coefficients: sorted by |coef|, an
 * atom whose coefficient is at least the span covered so far multiplies the
 * count (disjoint copies), a smaller one widens the span and the count grows
 * with the density (overlapping windows, as in a convolution's h + rh). The
 * estimate is exact for tiles of row-major buffers, dense ranges and sliding
 * windows with unit dilation.
 *
 * floordiv and floormod by constants (fused loops) become atoms of their own
 * with the extents their operand's range gives; anything else that is not
 * affine (a gather, min/max, a product of two loops) is an opaque atom
 * ranging over the product of the extents of the loops it uses.
 */
#include <math.h>
#include <string.h>

#include "cost-model/features.h"

#define MAX_BIND_DEPTH 8
#define EXTENT_CAP ((int64_t)1 << 40)

void fx_affine_add_term(fx_affine_t *f, fx_atom_kind_t kind, uint64_t key, int level, uint64_t mask,
                        int64_t extent, int64_t coef) {
  if (coef == 0 || extent <= 1) return;
  if (!mask && level >= 0 && level < FX_MAX_LEVELS) mask = (uint64_t)1 << level;
  for (int i = 0; i < f->nterms; i++) {
    fx_term_t *t = &f->terms[i];
    if (t->kind != kind || t->key != key) continue;
    t->coef = fx_wadd(t->coef, coef);
    t->mask |= mask;
    if (t->coef == 0) *t = f->terms[--f->nterms];
    return;
  }
  if (f->nterms == FX_MAX_TERMS) return; /* never seen in practice; the estimate only loses an atom */
  fx_term_t *t = &f->terms[f->nterms++];
  t->key = key;
  t->kind = kind;
  t->level = level;
  t->mask = mask;
  t->extent = extent;
  t->coef = coef;
}

static void add_form(fx_affine_t *out, const fx_affine_t *f, int64_t scale) {
  out->c0 = fx_wadd(out->c0, fx_wmul(f->c0, scale));
  for (int i = 0; i < f->nterms; i++) {
    const fx_term_t *t = &f->terms[i];
    fx_affine_add_term(out, t->kind, t->key, t->level, t->mask, t->extent, fx_wmul(t->coef, scale));
  }
}

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

/* The same floordiv/floormod written twice (a load and a store of one
 * element) must be one atom: its key hashes the operand's form, order-free. */
static uint64_t divmod_key(const fx_affine_t *a, int kind, int64_t c) {
  uint64_t sum = 0;
  for (int i = 0; i < a->nterms; i++)
    sum += mix(mix(a->terms[i].key, (uint64_t)a->terms[i].kind), (uint64_t)a->terms[i].coef);
  return mix(mix(mix(mix(0xd1f, (uint64_t)kind), (uint64_t)c), (uint64_t)a->c0), sum);
}

static int level_of(const fx_nest_ctx_t *cx, const tir_var_t *v) {
  for (int i = cx->nlevels - 1; i >= 0; i--)
    if (cx->levels[i].var == v) return i;
  return -1;
}

static const fx_bind_t *bind_of(const fx_bind_t *b, const tir_var_t *v) {
  for (; b; b = b->up)
    if (b->var == v) return b;
  return NULL;
}

/* [lo, hi] of a form over every atom (outer ones too), in doubles. */
static void form_range(const fx_affine_t *f, double *lo, double *hi) {
  *lo = *hi = (double)f->c0;
  for (int i = 0; i < f->nterms; i++) {
    double span = (double)f->terms[i].coef * (double)(f->terms[i].extent - 1);
    if (span < 0) *lo += span;
    else *hi += span;
  }
}

static int64_t clamp_extent(double e) { return e < 1 ? 1 : e > (double)EXTENT_CAP ? EXTENT_CAP : (int64_t)e; }

static int64_t floordiv64(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t floormod64(int64_t a, int64_t b) {
  return (int64_t)((uint64_t)a - (uint64_t)floordiv64(a, b) * (uint64_t)b);
}

typedef struct {
  const fx_nest_ctx_t *cx;
  uint64_t mask;
  int level;
  int64_t extent;
  int depth;
} uses_t;

static void uses_expr(uses_t *u, tir_expr_t *e);

static bool uses_hook(tir_visitor_t *v, tir_expr_t *e) {
  uses_t *u = v->payload;
  if (e->kind != TIR_VAR) return true;
  int l = level_of(u->cx, e);
  if (l >= 0 && l < FX_MAX_LEVELS && !(u->mask & ((uint64_t)1 << l))) {
    u->mask |= (uint64_t)1 << l;
    if (l > u->level) u->level = l;
    u->extent = u->extent > EXTENT_CAP / u->cx->levels[l].extent ? EXTENT_CAP : u->extent * u->cx->levels[l].extent;
  } else if (l < 0 && u->depth < MAX_BIND_DEPTH) {
    const fx_bind_t *b = bind_of(u->cx->binds, e);
    if (b) {
      u->depth++;
      uses_expr(u, b->value);
      u->depth--;
    }
  }
  return false;
}

static void uses_expr(uses_t *u, tir_expr_t *e) {
  tir_visitor_t v;
  memset(&v, 0, sizeof v);
  v.expr = uses_hook;
  v.payload = u;
  tir_visit_expr(&v, e);
}

/* An opaque atom for e: its loops' product of extents, innermost level. */
static void opaque(fx_affine_t *out, const fx_nest_ctx_t *cx, tir_expr_t *e) {
  uses_t u = {cx, 0, -1, 1, 0};
  uses_expr(&u, e);
  if (u.level < 0) return; /* invariant: an unknown constant, taken as 0 */
  fx_affine_add_term(out, FX_ATOM_OPAQUE, (uint64_t)(uintptr_t)e, u.level, u.mask, u.extent, 1);
}

static void lin(fx_affine_t *out, const fx_nest_ctx_t *cx, tir_expr_t *e, int depth);

/* floordiv / floormod of an affine operand by a positive constant. */
static void lin_divmod(fx_affine_t *out, const fx_nest_ctx_t *cx, tir_expr_t *e, int depth) {
  fx_affine_t a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  lin(&a, cx, e->u.bin.a, depth);
  lin(&b, cx, e->u.bin.b, depth);
  bool is_div = e->kind == TIR_FLOOR_DIV || e->kind == TIR_DIV;
  if (b.nterms || b.c0 <= 0) {
    opaque(out, cx, e);
    return;
  }
  int64_t c = b.c0;
  double lo, hi;
  if (!a.nterms) {
    out->c0 = fx_wadd(out->c0, is_div ? floordiv64(a.c0, c) : floormod64(a.c0, c));
    return;
  }
  form_range(&a, &lo, &hi);
  int level = -1;
  uint64_t mask = 0;
  for (int i = 0; i < a.nterms; i++) {
    if (a.terms[i].level > level) level = a.terms[i].level;
    mask |= a.terms[i].mask;
  }
  double first = floor(lo / (double)c), span = hi - lo + 1;
  int64_t extent = clamp_extent(is_div ? floor(hi / (double)c) - first + 1 : span < (double)c ? span : (double)c);
  if (is_div) out->c0 = fx_wadd(out->c0, fabs(first) < 4e18 ? (int64_t)first : 0);
  fx_affine_add_term(out, FX_ATOM_DIVMOD, divmod_key(&a, is_div, c), level, mask, extent, 1);
}

static void lin_var(fx_affine_t *out, const fx_nest_ctx_t *cx, tir_expr_t *e, int depth) {
  int l = level_of(cx, e);
  if (l >= 0) {
    fx_affine_add_term(out, FX_ATOM_LOOP, (uint64_t)(uintptr_t)e, l, 0, cx->levels[l].extent, 1);
    return;
  }
  const fx_bind_t *b = bind_of(cx->binds, e);
  if (b && depth < MAX_BIND_DEPTH) lin(out, cx, b->value, depth + 1);
  /* otherwise: a parameter, a pinned loop or a loop outside the nest: a constant */
}

static void lin_ramp(fx_affine_t *out, const fx_nest_ctx_t *cx, tir_expr_t *e, int depth) {
  fx_affine_t s;
  memset(&s, 0, sizeof s);
  lin(&s, cx, e->u.ramp.stride, depth);
  if (s.nterms) {
    opaque(out, cx, e);
    return;
  }
  lin(out, cx, e->u.ramp.base, depth);
  int level = cx->lane_level >= 0 ? cx->lane_level : cx->nlevels - 1;
  fx_affine_add_term(out, FX_ATOM_LANES, 0, level < 0 ? 0 : level, 0, e->u.ramp.lanes, s.c0);
}

static void lin(fx_affine_t *out, const fx_nest_ctx_t *cx, tir_expr_t *e, int depth) {
  fx_affine_t a, b;
  switch (e->kind) {
  case TIR_INT_IMM: out->c0 = fx_wadd(out->c0, e->u.int_value); return;
  case TIR_VAR: lin_var(out, cx, e, depth); return;
  case TIR_ADD:
  case TIR_SUB:
    lin(out, cx, e->u.bin.a, depth);
    memset(&b, 0, sizeof b);
    lin(&b, cx, e->u.bin.b, depth);
    add_form(out, &b, e->kind == TIR_ADD ? 1 : -1);
    return;
  case TIR_MUL:
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    lin(&a, cx, e->u.bin.a, depth);
    lin(&b, cx, e->u.bin.b, depth);
    if (!a.nterms) add_form(out, &b, a.c0);
    else if (!b.nterms) add_form(out, &a, b.c0);
    else opaque(out, cx, e);
    return;
  case TIR_DIV:
  case TIR_MOD:
  case TIR_FLOOR_DIV:
  case TIR_FLOOR_MOD: lin_divmod(out, cx, e, depth); return;
  case TIR_CAST: lin(out, cx, e->u.un.a, depth); return;
  case TIR_BROADCAST: lin(out, cx, e->u.broadcast.value, depth); return;
  case TIR_RAMP: lin_ramp(out, cx, e, depth); return;
  default: opaque(out, cx, e); return;
  }
}

void fx_linearize_access(fx_affine_t *out, const fx_nest_ctx_t *cx, const tir_buffer_t *b,
                         tir_expr_t *const *indices, int n) {
  memset(out, 0, sizeof *out);
  int64_t stride = 1;
  for (int d = n - 1; d >= 0; d--) {
    fx_affine_t f;
    memset(&f, 0, sizeof f);
    lin(&f, cx, indices[d], 0);
    int64_t s = stride, v;
    if (b->strides && d < b->ndim && tir_as_int(b->strides[d], &v)) s = v;
    add_form(out, &f, s);
    if (d < b->ndim && tir_as_int(b->shape[d], &v) && v > 0) stride = fx_wmul(stride, v);
  }
}

/* ------------------------------------------------------------------------ */
/* Counting                                                                  */
/* ------------------------------------------------------------------------ */

/* Distinct values of sum(coef_i * atom_i): see the comment at the top. */
static double count_terms(fx_term_t *t, int n) {
  for (int i = 1; i < n; i++) /* insertion sort by |coef| */
    for (int j = i; j > 0 && fx_abs(t[j].coef) < fx_abs(t[j - 1].coef); j--) {
      fx_term_t x = t[j];
      t[j] = t[j - 1];
      t[j - 1] = x;
    }
  double count = 1, span = 1;
  for (int i = 0; i < n; i++) {
    double c = (double)fx_abs(t[i].coef), e = (double)t[i].extent;
    if (e <= 1 || c == 0) continue;
    double ns = span + c * (e - 1);
    if (c >= span) count *= e;
    else count = count * e < count * ns / span ? count * e : count * ns / span;
    span = ns;
  }
  return count;
}

static bool same_terms(const fx_affine_t *a, const fx_affine_t *b) {
  if (a->nterms != b->nterms) return false;
  for (int i = 0; i < a->nterms; i++)
    if (a->terms[i].kind != b->terms[i].kind || a->terms[i].key != b->terms[i].key ||
        a->terms[i].coef != b->terms[i].coef)
      return false;
  return true;
}

static int cmp_i64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

/* One class of accesses with equal atoms: distinct offsets are one more atom. */
static double count_class(const fx_affine_t *const *forms, int n, const bool *in_class, int first,
                          int from_level) {
  int64_t offs[64];
  int noffs = 0;
  for (int i = first; i < n && noffs < 64; i++)
    if (in_class[i]) offs[noffs++] = forms[i]->c0;
  qsort(offs, (size_t)noffs, sizeof offs[0], cmp_i64);
  int ndistinct = noffs ? 1 : 0;
  for (int i = 1; i < noffs; i++) ndistinct += offs[i] != offs[i - 1];
  fx_term_t t[FX_MAX_TERMS + 1];
  int nt = 0;
  const fx_affine_t *f = forms[first];
  for (int i = 0; i < f->nterms; i++)
    if (f->terms[i].level >= from_level) t[nt++] = f->terms[i];
  if (ndistinct > 1) {
    int64_t gap = clamp_extent(ceil(((double)offs[noffs - 1] - (double)offs[0]) / (ndistinct - 1)));
    memset(&t[nt], 0, sizeof t[nt]);
    t[nt].kind = FX_ATOM_OPAQUE;
    t[nt].coef = gap > 0 ? gap : 1;
    t[nt].extent = ndistinct;
    nt++;
  }
  return count_terms(t, nt);
}

double fx_unique_elems(const fx_affine_t *const *forms, int n, int from_level) {
  bool done[256] = {false}, in_class[256];
  if (n > 256) n = 256;
  double total = 0;
  for (int i = 0; i < n; i++) {
    if (done[i]) continue;
    memset(in_class, 0, sizeof in_class);
    for (int j = i; j < n; j++)
      if (!done[j] && same_terms(forms[i], forms[j])) in_class[j] = done[j] = true;
    total += count_class(forms, n, in_class, i, from_level);
  }
  return total;
}

double fx_contiguous_elems(const fx_affine_t *form) {
  fx_term_t t[FX_MAX_TERMS];
  int n = form->nterms;
  memcpy(t, form->terms, sizeof(fx_term_t) * (size_t)n);
  count_terms(t, n); /* sorts */
  double run = 1;
  for (int i = 0; i < n; i++) {
    double c = (double)fx_abs(t[i].coef);
    if (c > run) break;
    run += c * (double)(t[i].extent - 1);
  }
  return run;
}
