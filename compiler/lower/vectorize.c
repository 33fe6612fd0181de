/*
 * vectorize.c - the "vectorize" pass (TVM's VectorizeLoop, simplified).
 *
 * A loop of kind vectorized with a constant extent L becomes its body
 * computed on L lanes at once: the loop variable is the ramp
 * `T.Ramp(min, 1, L)`, and every expression that depends on it becomes a
 * vector expression. Affine index arithmetic stays affine (Ramp + x is a
 * ramp with base + x, Ramp * c one with stride * c; floordiv/floormod of a
 * ramp that does not cross a multiple of the divisor are a broadcast and a
 * ramp), loop-invariant operands are broadcast, loads and stores whose index
 * is a ramp become vector accesses (stride 1 = contiguous), a load at an
 * invariant index a broadcast of the scalar load. Inner loops keep running
 * serially around the vectorized body (as in TVM).
 *
 * When the body cannot be expressed that way the loop stays a serial loop
 * and a note says why: an extent that is not a constant, an index that is
 * not affine in the loop variable (a gather), a store to an invariant
 * location (a reduction across lanes), an `if` or if_then_else whose
 * condition differs between lanes (TVM scalarizes these; an
 * if_then_else whose branches read no memory becomes a select), calls that
 * are not element-wise math, allocations, nested vectors. L is the extent
 * as written, not the target's vector width: code generation splits wide
 * vectors into registers.
 */
#include "compiler/lower/vectorize.h"

#include <stdio.h>

#include "compiler/lower/lower_util.h"

typedef struct {
  mlc_arena_t *a;
  tir_analyzer_t *an;
  tir_var_t *var;     /* the loop variable */
  tir_expr_t *ramp;   /* its value on all lanes */
  int lanes;
  tir_var_map_t lets; /* let variables that became vectors */
  const char *why;    /* the first reason the loop cannot be vectorized */
} vec_t;

typedef struct {
  tir_analyzer_t *an;
  mlc_strbuf_t *notes;
} pass_t;

static void *fail(vec_t *v, const char *fmt, ...) MLC_PRINTF(2, 3);
static void *fail(vec_t *v, const char *fmt, ...) {
  if (v->why) return NULL;
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  v->why = mlc_arena_strdup(v->a, buf);
  return NULL;
}

static tir_expr_t *bcast(vec_t *v, tir_expr_t *e, int lanes) {
  return e->dtype.lanes == lanes ? e : tir_broadcast(v->a, e, lanes);
}

/* The scalar an operand stands for on every lane, or NULL. */
static tir_expr_t *uniform(tir_expr_t *e) {
  if (e->dtype.lanes == 1) return e;
  return e->kind == TIR_BROADCAST ? e->u.broadcast.value : NULL;
}

static tir_expr_t *vec_expr(vec_t *v, tir_expr_t *e);

/* ------------------------------------------------------------------------ */
/* Arithmetic                                                                */
/* ------------------------------------------------------------------------ */

/* Ramp op uniform (or uniform op ramp, or ramp op ramp) for + - *, kept
 * affine; NULL when the shapes do not allow it. */
static tir_expr_t *affine(vec_t *v, tir_expr_kind_t kind, tir_expr_t *x, tir_expr_t *y) {
  mlc_arena_t *a = v->a;
  tir_expr_t *ux = uniform(x), *uy = uniform(y);
  bool rx = x->kind == TIR_RAMP, ry = y->kind == TIR_RAMP;
  if (!tir_dtype_is_integer(x->dtype) || !tir_dtype_is_integer(y->dtype)) return NULL;
  int lanes = rx ? x->u.ramp.lanes : ry ? y->u.ramp.lanes : 0;
  switch (kind) {
  case TIR_ADD:
    if (rx && uy) return tir_ramp(a, lower_add(a, x->u.ramp.base, uy), x->u.ramp.stride, lanes);
    if (ux && ry) return tir_ramp(a, lower_add(a, ux, y->u.ramp.base), y->u.ramp.stride, lanes);
    if (rx && ry)
      return tir_ramp(a, lower_add(a, x->u.ramp.base, y->u.ramp.base), lower_add(a, x->u.ramp.stride, y->u.ramp.stride),
                      lanes);
    return NULL;
  case TIR_SUB:
    if (rx && uy) return tir_ramp(a, lower_sub(a, x->u.ramp.base, uy), x->u.ramp.stride, lanes);
    if (ux && ry)
      return tir_ramp(a, lower_sub(a, ux, y->u.ramp.base),
                      lower_sub(a, tir_int(a, y->u.ramp.stride->dtype, 0), y->u.ramp.stride), lanes);
    if (rx && ry)
      return tir_ramp(a, lower_sub(a, x->u.ramp.base, y->u.ramp.base), lower_sub(a, x->u.ramp.stride, y->u.ramp.stride),
                      lanes);
    return NULL;
  case TIR_MUL:
    if (rx && uy) return tir_ramp(a, lower_mul(a, x->u.ramp.base, uy), lower_mul(a, x->u.ramp.stride, uy), lanes);
    if (ux && ry) return tir_ramp(a, lower_mul(a, ux, y->u.ramp.base), lower_mul(a, ux, y->u.ramp.stride), lanes);
    return NULL;
  default: return NULL;
  }
}

/* floordiv / floormod of Ramp(b, s, L) by a constant c > 0 when all lanes
 * fall between two multiples of c: floordiv(b, c) is then the same on every
 * lane and floormod a ramp from floormod(b, c). */
static tir_expr_t *div_of_ramp(vec_t *v, tir_expr_kind_t kind, tir_expr_t *x, tir_expr_t *y) {
  mlc_arena_t *a = v->a;
  tir_expr_t *uy = uniform(y);
  int64_t c, s;
  if (x->kind != TIR_RAMP || !uy || !tir_as_int(uy, &c) || c <= 0 || !tir_as_int(x->u.ramp.stride, &s) || s < 0)
    return NULL;
  tir_expr_t *base = x->u.ramp.base, *cc = tir_int(a, base->dtype, c);
  tir_expr_t *last = lower_add(a, base, tir_int(a, base->dtype, s * (x->u.ramp.lanes - 1)));
  tir_expr_t *same = tir_binary(a, TIR_EQ, tir_binary(a, TIR_FLOOR_DIV, base, cc), tir_binary(a, TIR_FLOOR_DIV, last, cc));
  if (!tir_prove(v->an, same)) return NULL;
  if (kind == TIR_FLOOR_DIV) return tir_broadcast(a, tir_binary(a, TIR_FLOOR_DIV, base, cc), x->u.ramp.lanes);
  return tir_ramp(a, tir_binary(a, TIR_FLOOR_MOD, base, cc), x->u.ramp.stride, x->u.ramp.lanes);
}

static tir_expr_t *vec_binary(vec_t *v, tir_expr_t *e) {
  tir_expr_t *x = vec_expr(v, e->u.bin.a), *y = x ? vec_expr(v, e->u.bin.b) : NULL;
  if (!x || !y) return NULL;
  if (x == e->u.bin.a && y == e->u.bin.b) return e;
  int lx = x->dtype.lanes, ly = y->dtype.lanes, lanes = lx > ly ? lx : ly;
  if (lx == 1 && ly == 1) return tir_binary(v->a, e->kind, x, y);
  if (lx != ly && lx != 1 && ly != 1) return fail(v, "operands of %s have %d and %d lanes", tir_expr_kind_name(e->kind), lx, ly);
  tir_expr_t *r = affine(v, e->kind, x, y);
  if (!r && (e->kind == TIR_FLOOR_DIV || e->kind == TIR_FLOOR_MOD)) r = div_of_ramp(v, e->kind, x, y);
  if (r) return r;
  tir_expr_t *ux = uniform(x), *uy = uniform(y);
  if (ux && uy) return tir_broadcast(v->a, tir_binary(v->a, e->kind, ux, uy), lanes);
  return tir_binary(v->a, e->kind, bcast(v, x, lanes), bcast(v, y, lanes));
}

/* ------------------------------------------------------------------------ */
/* Loads, calls and the other expressions                                    */
/* ------------------------------------------------------------------------ */

/* Vectorized indices: at most one ramp; broadcasts are replaced by their
 * value. *ramp receives the ramp's lanes (0 for none), *bc the lanes of a
 * broadcast seen. NULL when not expressible. */
static tir_expr_t **vec_indices(vec_t *v, const tir_buffer_t *b, tir_expr_t **idx, int n, int *ramp, int *bc,
                                bool *changed) {
  tir_expr_t **out = mlc_arena_alloc(v->a, sizeof(*out) * (size_t)(n > 0 ? n : 1));
  *ramp = *bc = 0;
  *changed = false;
  for (int d = 0; d < n; d++) {
    out[d] = vec_expr(v, idx[d]);
    if (!out[d]) return NULL;
    *changed |= out[d] != idx[d];
    if (out[d]->dtype.lanes == 1) continue;
    if (out[d]->kind == TIR_BROADCAST) {
      *bc = out[d]->dtype.lanes;
      out[d] = out[d]->u.broadcast.value;
    } else if (out[d]->kind != TIR_RAMP) {
      return fail(v, "the index of %s is not affine in %s", b->name, v->var->u.var.name);
    } else if (*ramp) {
      return fail(v, "%s is indexed by %s in two dimensions", b->name, v->var->u.var.name);
    } else {
      *ramp = out[d]->dtype.lanes;
    }
  }
  if (*ramp && b->dtype.lanes != 1) return fail(v, "%s already holds vectors", b->name);
  return out;
}

static tir_expr_t *vec_load(vec_t *v, tir_expr_t *e) {
  int ramp, bc;
  bool changed;
  tir_buffer_t *b = e->u.load.buffer;
  tir_expr_t **idx = vec_indices(v, b, e->u.load.indices, e->u.load.nindices, &ramp, &bc, &changed);
  if (!idx) return NULL;
  if (!changed) return e;
  tir_expr_t *ld = tir_load(v->a, b, idx, e->u.load.nindices);
  return !ramp && bc ? tir_broadcast(v->a, ld, bc) : ld;
}

/* True when e reads memory or calls something impure. */
static bool has_effects_or_loads(tir_expr_t *e);

static tir_expr_t *vec_if_then_else(vec_t *v, tir_expr_t *e, tir_expr_t **args) {
  int lanes = args[1]->dtype.lanes > args[2]->dtype.lanes ? args[1]->dtype.lanes : args[2]->dtype.lanes;
  if (args[0]->dtype.lanes > lanes) lanes = args[0]->dtype.lanes;
  if (args[0]->dtype.lanes == 1) {
    tir_expr_t *xs[3] = {args[0], bcast(v, args[1], lanes), bcast(v, args[2], lanes)};
    return tir_call(v->a, tir_dtype_lanes(e->dtype, lanes), TIR_OP_IF_THEN_ELSE, xs, 3);
  }
  if (has_effects_or_loads(args[1]) || has_effects_or_loads(args[2]))
    return fail(v, "the condition of an if_then_else differs between lanes");
  return tir_select(v->a, args[0], bcast(v, args[1], lanes), bcast(v, args[2], lanes));
}

/* Element-wise math: one result per lane from the lanes of the arguments. */
static bool is_elementwise(tir_op_t op) {
  return tir_op_is_pure(op) && tir_op_nargs(op) > 0 && op != TIR_OP_REINTERPRET && op != TIR_OP_IF_THEN_ELSE;
}

static tir_expr_t *vec_call(vec_t *v, tir_expr_t *e) {
  int n = e->u.call.nargs, lanes = 1;
  tir_expr_t **args = mlc_arena_alloc(v->a, sizeof(*args) * (size_t)(n > 0 ? n : 1));
  bool changed = false;
  for (int i = 0; i < n; i++) {
    if (!(args[i] = vec_expr(v, e->u.call.args[i]))) return NULL;
    changed |= args[i] != e->u.call.args[i];
    if (args[i]->dtype.lanes > lanes) lanes = args[i]->dtype.lanes;
  }
  if (!changed) return e;
  if (e->u.call.op == TIR_OP_IF_THEN_ELSE && n == 3) return vec_if_then_else(v, e, args);
  if (!is_elementwise(e->u.call.op) || e->dtype.lanes != 1)
    return fail(v, "the call to %s is not element-wise", tir_op_name(e->u.call.op));
  for (int i = 0; i < n; i++) args[i] = bcast(v, args[i], lanes);
  return tir_call(v->a, tir_dtype_lanes(e->dtype, lanes), e->u.call.op, args, n);
}

static tir_expr_t *vec_select(vec_t *v, tir_expr_t *e) {
  tir_expr_t *c = vec_expr(v, e->u.select.cond), *t = c ? vec_expr(v, e->u.select.t) : NULL;
  tir_expr_t *f = t ? vec_expr(v, e->u.select.f) : NULL;
  if (!f) return NULL;
  if (c == e->u.select.cond && t == e->u.select.t && f == e->u.select.f) return e;
  int lanes = c->dtype.lanes;
  if (t->dtype.lanes > lanes) lanes = t->dtype.lanes;
  if (f->dtype.lanes > lanes) lanes = f->dtype.lanes;
  return tir_select(v->a, bcast(v, c, lanes), bcast(v, t, lanes), bcast(v, f, lanes));
}

static tir_expr_t *vec_unary(vec_t *v, tir_expr_t *e) {
  tir_expr_t *x = vec_expr(v, e->u.un.a);
  if (!x) return NULL;
  if (x == e->u.un.a) return e;
  if (x->kind == TIR_BROADCAST) { /* cast the scalar, then broadcast it */
    tir_expr_t *one = e->kind == TIR_NOT ? tir_not(v->a, x->u.broadcast.value)
                                         : tir_cast(v->a, e->dtype, x->u.broadcast.value);
    return tir_broadcast(v->a, one, x->u.broadcast.lanes);
  }
  if (e->kind == TIR_NOT) return tir_not(v->a, x);
  return tir_cast(v->a, tir_dtype_lanes(e->dtype, x->dtype.lanes), x);
}

static tir_expr_t *vec_expr(vec_t *v, tir_expr_t *e) {
  if (v->why) return NULL;
  switch (tir_expr_kind_shape(e->kind)) {
  case TIR_SHAPE_IMM: return e;
  case TIR_SHAPE_LEAF: {
    if (e == v->var) return v->ramp;
    tir_expr_t *to = tir_var_map_get(&v->lets, e);
    return to ? to : e;
  }
  case TIR_SHAPE_BINARY: return vec_binary(v, e);
  case TIR_SHAPE_UNARY: return vec_unary(v, e);
  case TIR_SHAPE_SELECT: return vec_select(v, e);
  case TIR_SHAPE_LOAD: return vec_load(v, e);
  case TIR_SHAPE_CALL: return vec_call(v, e);
  case TIR_SHAPE_RAMP:
  case TIR_SHAPE_BROADCAST:
    if (tir_expr_uses_var(e, v->var) || (v->lets.n && tir_expr_uses_any_var(e, v->lets.from, v->lets.n)))
      return fail(v, "it would nest vectors");
    return e;
  }
  return e;
}

typedef struct {
  tir_visitor_t base;
  bool found;
} effects_t;

static bool effects_expr(tir_visitor_t *vis, tir_expr_t *e) {
  effects_t *ef = (effects_t *)vis;
  if (e->kind == TIR_BUFFER_LOAD || (e->kind == TIR_CALL && !tir_op_is_pure(e->u.call.op))) ef->found = true;
  return !ef->found;
}

static bool has_effects_or_loads(tir_expr_t *e) {
  effects_t ef = {{.expr = effects_expr}, false};
  tir_visit_expr(&ef.base, e);
  return ef.found;
}

/* ------------------------------------------------------------------------ */
/* Statements                                                                */
/* ------------------------------------------------------------------------ */

static tir_stmt_t *vec_stmt(vec_t *v, tir_stmt_t *s);

static tir_stmt_t *vec_store(vec_t *v, tir_stmt_t *s) {
  tir_buffer_t *b = s->u.store.buffer;
  int ramp, bc;
  bool changed;
  tir_expr_t **idx = vec_indices(v, b, s->u.store.indices, s->u.store.nindices, &ramp, &bc, &changed);
  tir_expr_t *value = idx ? vec_expr(v, s->u.store.value) : NULL;
  if (!value) return NULL;
  if (!ramp && (value != s->u.store.value || changed))
    return fail(v, "the store to %s is at the same place on every lane", b->name);
  if (!ramp) return fail(v, "the store to %s does not depend on %s", b->name, v->var->u.var.name);
  if (value->dtype.lanes != 1 && value->dtype.lanes != ramp)
    return fail(v, "the value stored to %s has %d lanes, the index %d", b->name, value->dtype.lanes, ramp);
  return tir_store(v->a, b, bcast(v, value, ramp), idx, s->u.store.nindices);
}

static tir_stmt_t *vec_loop(vec_t *v, tir_stmt_t *s) {
  tir_expr_t *min = vec_expr(v, s->u.loop.min), *ext = min ? vec_expr(v, s->u.loop.extent) : NULL;
  if (!ext) return NULL;
  if (min != s->u.loop.min || ext != s->u.loop.extent)
    return fail(v, "the range of loop %s depends on %s", s->u.loop.var->u.var.name, v->var->u.var.name);
  tir_analyzer_bind(v->an, s->u.loop.var, s->u.loop.min, s->u.loop.extent);
  tir_stmt_t *body = vec_stmt(v, s->u.loop.body);
  if (!body) return NULL;
  tir_stmt_t *r = tir_stmt_copy(v->a, s);
  r->u.loop.body = body;
  return r;
}

static tir_stmt_t *vec_let(vec_t *v, tir_stmt_t *s) {
  tir_expr_t *value = vec_expr(v, s->u.let.value);
  if (!value) return NULL;
  tir_var_t *var = s->u.let.var;
  if (value->dtype.lanes > 1) {
    var = tir_var(v->a, var->u.var.name, value->dtype);
    tir_var_map_set(v->a, &v->lets, s->u.let.var, var);
  }
  tir_stmt_t *body = vec_stmt(v, s->u.let.body);
  return body ? tir_let_stmt(v->a, var, value, body) : NULL;
}

static tir_stmt_t *vec_if(vec_t *v, tir_stmt_t *s) {
  tir_expr_t *cond = vec_expr(v, s->u.if_.cond);
  if (!cond) return NULL;
  if (cond->dtype.lanes > 1) return fail(v, "the condition of an if differs between lanes");
  tir_stmt_t *then_case = vec_stmt(v, s->u.if_.then_case), *else_case = NULL;
  if (!then_case || (s->u.if_.else_case && !(else_case = vec_stmt(v, s->u.if_.else_case)))) return NULL;
  return tir_if(v->a, cond, then_case, else_case);
}

static tir_stmt_t *vec_seq(vec_t *v, tir_stmt_t *s) {
  tir_stmt_t **xs = mlc_arena_alloc(v->a, sizeof(*xs) * (size_t)(s->u.seq.n > 0 ? s->u.seq.n : 1));
  for (int i = 0; i < s->u.seq.n; i++)
    if (!(xs[i] = vec_stmt(v, s->u.seq.stmts[i]))) return NULL;
  return tir_seq(v->a, xs, s->u.seq.n);
}

static tir_stmt_t *vec_stmt(vec_t *v, tir_stmt_t *s) {
  if (v->why) return NULL;
  switch (s->kind) {
  case TIR_BUFFER_STORE: return vec_store(v, s);
  case TIR_SEQ: return vec_seq(v, s);
  case TIR_IF: return vec_if(v, s);
  case TIR_FOR: return vec_loop(v, s);
  case TIR_LET: return vec_let(v, s);
  case TIR_EVALUATE: {
    tir_expr_t *x = vec_expr(v, s->u.evaluate.value);
    if (!x) return NULL;
    if (x != s->u.evaluate.value || has_effects_or_loads(x)) return fail(v, "it evaluates a call on every lane");
    return s;
  }
  default: return fail(v, "the body contains a statement of kind %s", tir_stmt_kind_name(s->kind));
  }
}

/* ------------------------------------------------------------------------ */
/* The pass                                                                  */
/* ------------------------------------------------------------------------ */

static tir_stmt_t *keep_scalar(tir_mutator_t *m, tir_stmt_t *loop, const char *why) {
  pass_t *p = m->payload;
  lower_note(p->notes, "vectorize", "loop %s kept scalar: %s", loop->u.loop.var->u.var.name, why);
  tir_stmt_t *r = tir_stmt_copy(m->arena, loop);
  r->u.loop.kind = TIR_FOR_SERIAL;
  return r;
}

static tir_stmt_t *vectorize_loop(tir_mutator_t *m, tir_stmt_t *loop) {
  pass_t *p = m->payload;
  int64_t lanes = lower_const_or_neg(loop->u.loop.extent);
  if (lanes < 1) {
    char text[128];
    mlc_strbuf_t sb;
    mlc_sb_init(&sb);
    tir_print_expr(&sb, loop->u.loop.extent);
    snprintf(text, sizeof text, "%s", mlc_sb_str(&sb));
    mlc_sb_free(&sb); /* before allocating in the arena, which may jump */
    return keep_scalar(m, loop, mlc_arena_printf(m->arena, "its extent %s is not a constant", text));
  }
  if (lanes == 1) { /* one lane: the body with the variable at its min */
    tir_var_map_t map = {0};
    tir_var_map_set(m->arena, &map, loop->u.loop.var, loop->u.loop.min);
    return tir_substitute_stmt(m->arena, loop->u.loop.body, &map);
  }
  if (lanes > UINT16_MAX) return keep_scalar(m, loop, mlc_arena_printf(m->arena, "%lld lanes are too many", (long long)lanes));
  vec_t v = {m->arena, p->an, loop->u.loop.var, NULL, (int)lanes, {0}, NULL};
  v.ramp = tir_ramp(m->arena, loop->u.loop.min, tir_int(m->arena, loop->u.loop.var->dtype, 1), (int)lanes);
  tir_stmt_t *body = vec_stmt(&v, loop->u.loop.body);
  return body ? body : keep_scalar(m, loop, v.why);
}

static tir_stmt_t *vec_pass_stmt(tir_mutator_t *m, tir_stmt_t *s) {
  pass_t *p = m->payload;
  if (s->kind != TIR_FOR) return tir_mutate_stmt_children(m, s);
  tir_analyzer_bind(p->an, s->u.loop.var, s->u.loop.min, s->u.loop.extent);
  tir_stmt_t *r = tir_mutate_stmt_children(m, s);
  return r->u.loop.kind == TIR_FOR_VECTORIZED ? vectorize_loop(m, r) : r;
}

static int run(tir_func_t *f, mlc_strbuf_t *notes) {
  pass_t p = {tir_analyzer_new(f->arena), notes};
  tir_mutator_t m = {.arena = f->arena, .stmt = vec_pass_stmt, .payload = &p};
  f->body = tir_mutate_stmt(&m, f->body);
  return MLC_OK;
}

int mlc_pass_vectorize(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes) {
  int rc;
  LOWER_GUARDED(rc, f->arena, run(f, notes));
  return rc;
}
