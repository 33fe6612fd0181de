/*
 * lower_util.c - helpers shared by the lowering passes (lower_util.h):
 * notes, folding index arithmetic, strides and spans of buffers, the guarded
 * init of a block, and copies with fresh definitions.
 */
#include "compiler/lower/lower_util.h"

#include <stdio.h>

void lower_note(mlc_strbuf_t *notes, const char *pass, const char *fmt, ...) {
  if (!notes) return;
  va_list ap;
  va_start(ap, fmt);
  mlc_sb_printf(notes, "%s: ", pass);
  mlc_sb_vprintf(notes, fmt, ap);
  mlc_sb_putc(notes, '\n');
  va_end(ap);
}

int64_t lower_const_or_neg(const tir_expr_t *e) {
  int64_t v;
  return e && tir_as_int(e, &v) ? v : -1;
}

/* ------------------------------------------------------------------------ */
/* Folding index arithmetic                                                  */
/* ------------------------------------------------------------------------ */

tir_expr_t *lower_cast_int(mlc_arena_t *a, tir_dtype_t t, tir_expr_t *x) {
  if (tir_dtype_eq(x->dtype, t)) return x;
  int64_t v;
  if (tir_as_int(x, &v)) return tir_int(a, t, v);
  return tir_cast(a, t, x);
}

/* Both operands in the wider of their integer dtypes (vectors keep theirs). */
static void unify(mlc_arena_t *a, tir_expr_t **x, tir_expr_t **y) {
  tir_dtype_t tx = (*x)->dtype, ty = (*y)->dtype;
  if (tir_dtype_eq(tx, ty) || tx.lanes != 1 || ty.lanes != 1) return;
  if (tx.bits >= ty.bits) *y = lower_cast_int(a, tx, *y);
  else *x = lower_cast_int(a, ty, *x);
}

tir_expr_t *lower_add(mlc_arena_t *a, tir_expr_t *x, tir_expr_t *y) {
  unify(a, &x, &y);
  int64_t u, v;
  bool cx = tir_as_int(x, &u), cy = tir_as_int(y, &v);
  if (cx && cy) return tir_int(a, x->dtype, u + v);
  if (cy && v == 0) return x;
  if (cx && u == 0) return y;
  return tir_binary(a, TIR_ADD, x, y);
}

tir_expr_t *lower_sub(mlc_arena_t *a, tir_expr_t *x, tir_expr_t *y) {
  unify(a, &x, &y);
  int64_t u, v;
  bool cx = tir_as_int(x, &u), cy = tir_as_int(y, &v);
  if (cx && cy) return tir_int(a, x->dtype, u - v);
  if (cy && v == 0) return x;
  return tir_binary(a, TIR_SUB, x, y);
}

tir_expr_t *lower_mul(mlc_arena_t *a, tir_expr_t *x, tir_expr_t *y) {
  unify(a, &x, &y);
  int64_t u, v;
  bool cx = tir_as_int(x, &u), cy = tir_as_int(y, &v);
  if (cx && cy) return tir_int(a, x->dtype, u * v);
  if ((cx && u == 0) || (cy && v == 0)) return tir_int(a, x->dtype, 0);
  if (cy && v == 1) return x;
  if (cx && u == 1) return y;
  return tir_binary(a, TIR_MUL, x, y);
}

/* ------------------------------------------------------------------------ */
/* Buffers                                                                   */
/* ------------------------------------------------------------------------ */

void lower_buffer_strides(mlc_arena_t *a, const tir_buffer_t *b, tir_expr_t **out) {
  if (b->strides) {
    for (int d = 0; d < b->ndim; d++) out[d] = b->strides[d];
    return;
  }
  tir_dtype_t t = b->ndim > 0 ? b->shape[b->ndim - 1]->dtype : tir_dt_INT32();
  tir_expr_t *stride = tir_int(a, t, 1);
  for (int d = b->ndim - 1; d >= 0; d--) {
    out[d] = stride;
    stride = lower_mul(a, stride, b->shape[d]);
  }
}

tir_expr_t *lower_buffer_span(mlc_arena_t *a, const tir_buffer_t *b) {
  tir_dtype_t t = b->ndim > 0 ? b->shape[0]->dtype : tir_dt_INT32();
  if (!b->strides) { /* compact: the product of the shape */
    tir_expr_t *n = tir_int(a, t, 1);
    for (int d = 0; d < b->ndim; d++) n = lower_mul(a, n, b->shape[d]);
    return b->elem_offset ? lower_add(a, b->elem_offset, n) : n;
  }
  tir_expr_t *span = tir_int(a, t, 1);
  for (int d = 0; d < b->ndim; d++) {
    if (lower_const_or_neg(b->shape[d]) == 0) return tir_int(a, t, 0);
    tir_expr_t *last = lower_sub(a, b->shape[d], tir_int(a, b->shape[d]->dtype, 1));
    span = lower_add(a, span, lower_mul(a, last, b->strides[d]));
  }
  return b->elem_offset ? lower_add(a, b->elem_offset, span) : span;
}

tir_buffer_t *lower_flat_buffer(mlc_arena_t *a, const tir_buffer_t *b, tir_expr_t *size) {
  tir_buffer_t *f = tir_buffer_copy(a, b);
  f->ndim = 1;
  f->shape = mlc_arena_alloc(a, sizeof(*f->shape));
  f->shape[0] = size;
  f->strides = NULL;
  f->elem_offset = NULL;
  return f;
}

/* ------------------------------------------------------------------------ */
/* Init                                                                      */
/* ------------------------------------------------------------------------ */

tir_stmt_t *lower_guarded_init(mlc_arena_t *a, const tir_block_t *b) {
  if (!b->init) return NULL;
  tir_expr_t *cond = NULL;
  for (int i = 0; i < b->niter_vars; i++) {
    const tir_iter_var_t *iv = &b->iter_vars[i];
    if (iv->type != TIR_ITER_REDUCE) continue;
    tir_expr_t *eq = tir_binary(a, TIR_EQ, iv->var, lower_cast_int(a, iv->var->dtype, iv->dom.min));
    cond = cond ? tir_binary(a, TIR_AND, cond, eq) : eq;
  }
  return cond ? tir_if(a, cond, b->init, NULL) : b->init;
}

/* ------------------------------------------------------------------------ */
/* Copies with fresh definitions                                             */
/* ------------------------------------------------------------------------ */

typedef struct {
  tir_var_map_t *vars;
  int nbufs, capbufs;
  tir_buffer_t **from, **to;
} fresh_t;

static tir_expr_t *fresh_expr(tir_mutator_t *m, tir_expr_t *e) {
  fresh_t *f = m->payload;
  if (e->kind == TIR_VAR) {
    tir_expr_t *to = tir_var_map_get(f->vars, e);
    return to ? to : e;
  }
  return tir_mutate_expr_children(m, e);
}

static tir_buffer_t *fresh_buffer(tir_mutator_t *m, tir_buffer_t *b) {
  fresh_t *f = m->payload;
  for (int i = 0; i < f->nbufs; i++)
    if (f->from[i] == b) return f->to[i];
  return b;
}

static void fresh_add_buffer(mlc_arena_t *a, fresh_t *f, tir_buffer_t *from, tir_buffer_t *to) {
  if (f->nbufs == f->capbufs) {
    int cap = f->capbufs ? f->capbufs * 2 : 8;
    f->from = mlc_arena_grow(a, f->from, (size_t)f->nbufs, (size_t)cap, sizeof(*f->from));
    f->to = mlc_arena_grow(a, f->to, (size_t)f->nbufs, (size_t)cap, sizeof(*f->to));
    f->capbufs = cap;
  }
  f->from[f->nbufs] = from;
  f->to[f->nbufs++] = to;
}

static tir_var_t *fresh_var(mlc_arena_t *a, fresh_t *f, tir_var_t *v) {
  tir_var_t *nv = tir_var(a, v->u.var.name, v->dtype);
  tir_var_map_set(a, f->vars, v, nv);
  return nv;
}

/* A fresh buffer for an allocation: new data variable, shape substituted. */
static tir_buffer_t *fresh_alloc(mlc_arena_t *a, fresh_t *f, tir_buffer_t *b) {
  tir_buffer_t *nb = tir_buffer_copy(a, b);
  for (int d = 0; d < b->ndim; d++) {
    nb->shape[d] = tir_substitute_expr(a, b->shape[d], f->vars);
    if (nb->strides) nb->strides[d] = tir_substitute_expr(a, b->strides[d], f->vars);
  }
  if (b->data) nb->data = fresh_var(a, f, b->data);
  fresh_add_buffer(a, f, b, nb);
  return nb;
}

static tir_stmt_t *fresh_stmt(tir_mutator_t *m, tir_stmt_t *s) {
  fresh_t *f = m->payload;
  tir_stmt_t *r;
  switch (s->kind) {
  case TIR_FOR: {
    tir_var_t *nv = fresh_var(m->arena, f, s->u.loop.var);
    r = tir_stmt_copy(m->arena, tir_mutate_stmt_children(m, s));
    r->u.loop.var = nv;
    return r;
  }
  case TIR_LET: {
    tir_expr_t *value = tir_mutate_expr(m, s->u.let.value);
    tir_var_t *nv = fresh_var(m->arena, f, s->u.let.var);
    return tir_let_stmt(m->arena, nv, value, tir_mutate_stmt(m, s->u.let.body));
  }
  case TIR_ALLOCATE:
    fresh_alloc(m->arena, f, s->u.allocate.buffer);
    return tir_mutate_stmt_children(m, s);
  case TIR_ATTR: {
    r = tir_mutate_stmt_children(m, s);
    tir_expr_t *node = s->u.attr.node ? tir_var_map_get(f->vars, s->u.attr.node) : NULL;
    if (!node || node->kind != TIR_VAR) return r;
    r = tir_stmt_copy(m->arena, r);
    r->u.attr.node = node;
    return r;
  }
  default: return tir_mutate_stmt_children(m, s);
  }
}

tir_stmt_t *lower_copy_fresh(mlc_arena_t *a, tir_stmt_t *s, tir_var_map_t *map) {
  fresh_t f = {map, 0, 0, NULL, NULL};
  tir_mutator_t m = {.arena = a, .expr = fresh_expr, .stmt = fresh_stmt, .buffer = fresh_buffer,
                     .payload = &f};
  return tir_mutate_stmt(&m, s);
}

/* ------------------------------------------------------------------------ */
/* Uses of a buffer                                                          */
/* ------------------------------------------------------------------------ */

typedef struct {
  tir_visitor_t base;
  const tir_buffer_t *b;
  bool found;
} touch_t;

static bool touch_expr(tir_visitor_t *v, tir_expr_t *e) {
  touch_t *t = (touch_t *)v;
  if ((e->kind == TIR_BUFFER_LOAD && e->u.load.buffer == t->b) || (e->kind == TIR_VAR && e == t->b->data))
    t->found = true;
  return !t->found;
}

static bool touch_stmt(tir_visitor_t *v, tir_stmt_t *s) {
  touch_t *t = (touch_t *)v;
  if ((s->kind == TIR_BUFFER_STORE && s->u.store.buffer == t->b) ||
      (s->kind == TIR_ATTR && s->u.attr.node && s->u.attr.node == t->b->data))
    t->found = true;
  return !t->found;
}

bool lower_expr_touches(tir_expr_t *e, const tir_buffer_t *b) {
  touch_t t = {{.expr = touch_expr, .stmt = touch_stmt}, b, false};
  tir_visit_expr(&t.base, e);
  return t.found;
}

bool lower_stmt_touches(tir_stmt_t *s, const tir_buffer_t *b) {
  touch_t t = {{.expr = touch_expr, .stmt = touch_stmt}, b, false};
  tir_visit_stmt(&t.base, s);
  return t.found;
}
