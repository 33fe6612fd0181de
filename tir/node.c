/*
 * node.c - the node name tables (expanded from the X-macro lists in tir.h), the
 * builders, shallow copies, and functions/modules with their arenas.
 *
 * Builders copy the arrays they are given into the arena so callers can pass
 * stack arrays. When the arena cannot allocate, a builder returns NULL (or the
 * arena's out-of-memory handler longjmps; see support.h).
 */
#include "tir/tir.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Name tables                                                               */
/* ------------------------------------------------------------------------ */

static const struct {
  const char *name;
  tir_expr_shape_t shape;
  const char *pyop;
} expr_kinds[] = {
#define ROW_(e, name, shape, op) {name, TIR_SHAPE_##shape, op},
    TIR_EXPR_KINDS(ROW_)
#undef ROW_
};

static const char *const stmt_kinds[] = {
#define ROW_(e, name) name,
    TIR_STMT_KINDS(ROW_)
#undef ROW_
};

static const char *const for_kinds[] = {
#define ROW_(e, name) name,
    TIR_FOR_KINDS(ROW_)
#undef ROW_
};

static const struct {
  const char *name;
  char letter;
} iter_types[] = {
#define ROW_(e, name, letter) {name, letter},
    TIR_ITER_TYPES(ROW_)
#undef ROW_
};

static const struct {
  const char *name;
  int nargs;
  bool pure;
} call_ops[] = {
#define ROW_(e, name, nargs, pure) {name, nargs, pure},
    TIR_CALL_OPS(ROW_)
#undef ROW_
};

const char *tir_expr_kind_name(tir_expr_kind_t k) { return expr_kinds[k].name; }
tir_expr_shape_t tir_expr_kind_shape(tir_expr_kind_t k) { return expr_kinds[k].shape; }
const char *tir_expr_kind_pyop(tir_expr_kind_t k) { return expr_kinds[k].pyop; }
const char *tir_stmt_kind_name(tir_stmt_kind_t k) { return stmt_kinds[k]; }
const char *tir_for_kind_name(tir_for_kind_t k) { return for_kinds[k]; }
const char *tir_iter_type_name(tir_iter_type_t t) { return iter_types[t].name; }
char tir_iter_type_letter(tir_iter_type_t t) { return iter_types[t].letter; }
const char *tir_op_name(tir_op_t op) { return call_ops[op].name; }
int tir_op_nargs(tir_op_t op) { return call_ops[op].nargs; }
bool tir_op_is_pure(tir_op_t op) { return call_ops[op].pure; }

int tir_op_lookup(tir_op_t *out, const char *name, size_t len) {
  for (int i = 0; i < TIR_OP_COUNT; i++) {
    if (strlen(call_ops[i].name) == len && memcmp(call_ops[i].name, name, len) == 0) {
      *out = (tir_op_t)i;
      return MLC_OK;
    }
  }
  return MLC_ENOTFOUND;
}

/* ------------------------------------------------------------------------ */
/* Expressions                                                               */
/* ------------------------------------------------------------------------ */

static tir_expr_t *new_expr(mlc_arena_t *a, tir_expr_kind_t kind, tir_dtype_t t) {
  tir_expr_t *e = mlc_arena_alloc(a, sizeof(*e));
  if (e) {
    e->kind = kind;
    e->dtype = t;
  }
  return e;
}

/* Copies n pointers into the arena (NULL for n == 0). */
static void *dup_array(mlc_arena_t *a, const void *src, int n, size_t elem) {
  if (n <= 0 || !src) return NULL;
  return mlc_arena_memdup(a, src, (size_t)n * elem);
}

/* Wraps an integer to the dtype's width, as a value of that dtype would hold. */
static int64_t wrap_int(tir_dtype_t t, int64_t v) {
  if (t.bits >= 64 || t.bits == 0) return v;
  uint64_t mask = (UINT64_C(1) << t.bits) - 1;
  uint64_t u = (uint64_t)v & mask;
  if (t.code == TIR_CODE_INT && (u >> (t.bits - 1)) & 1u) u |= ~mask; /* sign-extend */
  return (int64_t)u;
}

tir_expr_t *tir_int(mlc_arena_t *a, tir_dtype_t t, int64_t v) {
  tir_expr_t *e = new_expr(a, TIR_INT_IMM, t);
  if (e) e->u.int_value = wrap_int(t, v);
  return e;
}

tir_expr_t *tir_i32(mlc_arena_t *a, int64_t v) { return tir_int(a, tir_dt_INT32(), v); }
tir_expr_t *tir_bool(mlc_arena_t *a, bool v) { return tir_int(a, tir_dt_BOOL(), v ? 1 : 0); }

/* Rounds a double to what a value of dtype t holds. */
static double round_float(tir_dtype_t t, double v) {
  if (t.code == TIR_CODE_BFLOAT) return tir_bf16_to_f32(tir_f32_to_bf16((float)v));
  switch (t.bits) {
  case 16: return tir_f16_to_f32(tir_f32_to_f16((float)v));
  case 32: return (double)(float)v;
  default: return v;
  }
}

tir_expr_t *tir_float(mlc_arena_t *a, tir_dtype_t t, double v) {
  tir_expr_t *e = new_expr(a, TIR_FLOAT_IMM, t);
  if (e) e->u.float_value = round_float(t, v);
  return e;
}

tir_expr_t *tir_string(mlc_arena_t *a, const char *s) {
  tir_expr_t *e = new_expr(a, TIR_STRING_IMM, tir_dt_HANDLE());
  if (e) e->u.str_value = mlc_arena_strdup(a, s);
  return e;
}

tir_var_t *tir_var(mlc_arena_t *a, const char *name, tir_dtype_t t) {
  tir_expr_t *e = new_expr(a, TIR_VAR, t);
  if (e) e->u.var.name = mlc_arena_strdup(a, name ? name : "v");
  return e;
}

static bool is_predicate_kind(tir_expr_kind_t k) {
  return (k >= TIR_EQ && k <= TIR_GE) || k == TIR_AND || k == TIR_OR;
}

tir_expr_t *tir_binary(mlc_arena_t *a, tir_expr_kind_t kind, tir_expr_t *x, tir_expr_t *y) {
  if (!x || !y) return NULL;
  tir_dtype_t t = x->dtype;
  if (is_predicate_kind(kind)) t = tir_dtype(TIR_CODE_UINT, 1, x->dtype.lanes);
  tir_expr_t *e = new_expr(a, kind, t);
  if (e) {
    e->u.bin.a = x;
    e->u.bin.b = y;
  }
  return e;
}

tir_expr_t *tir_not(mlc_arena_t *a, tir_expr_t *x) {
  if (!x) return NULL;
  tir_expr_t *e = new_expr(a, TIR_NOT, x->dtype);
  if (e) e->u.un.a = x;
  return e;
}

tir_expr_t *tir_cast(mlc_arena_t *a, tir_dtype_t t, tir_expr_t *x) {
  if (!x) return NULL;
  tir_expr_t *e = new_expr(a, TIR_CAST, t);
  if (e) e->u.un.a = x;
  return e;
}

tir_expr_t *tir_select(mlc_arena_t *a, tir_expr_t *c, tir_expr_t *t, tir_expr_t *f) {
  if (!c || !t || !f) return NULL;
  tir_expr_t *e = new_expr(a, TIR_SELECT, t->dtype);
  if (e) {
    e->u.select.cond = c;
    e->u.select.t = t;
    e->u.select.f = f;
  }
  return e;
}

tir_expr_t *tir_load(mlc_arena_t *a, tir_buffer_t *b, tir_expr_t **indices, int n) {
  if (!b) return NULL;
  int lanes = 1;
  for (int i = 0; i < n; i++)
    if (indices[i] && indices[i]->dtype.lanes > 1) lanes = indices[i]->dtype.lanes;
  tir_expr_t *e = new_expr(a, TIR_BUFFER_LOAD, tir_dtype_lanes(b->dtype, b->dtype.lanes * lanes));
  if (e) {
    e->u.load.buffer = b;
    e->u.load.indices = dup_array(a, indices, n, sizeof(*indices));
    e->u.load.nindices = n;
  }
  return e;
}

tir_expr_t *tir_ramp(mlc_arena_t *a, tir_expr_t *base, tir_expr_t *stride, int lanes) {
  if (!base || !stride) return NULL;
  tir_expr_t *e = new_expr(a, TIR_RAMP, tir_dtype_lanes(base->dtype, lanes));
  if (e) {
    e->u.ramp.base = base;
    e->u.ramp.stride = stride;
    e->u.ramp.lanes = lanes;
  }
  return e;
}

tir_expr_t *tir_broadcast(mlc_arena_t *a, tir_expr_t *value, int lanes) {
  if (!value) return NULL;
  tir_expr_t *e = new_expr(a, TIR_BROADCAST, tir_dtype_lanes(value->dtype, lanes));
  if (e) {
    e->u.broadcast.value = value;
    e->u.broadcast.lanes = lanes;
  }
  return e;
}

tir_expr_t *tir_call(mlc_arena_t *a, tir_dtype_t t, tir_op_t op, tir_expr_t **args, int n) {
  tir_expr_t *e = new_expr(a, TIR_CALL, t);
  if (e) {
    e->u.call.op = op;
    e->u.call.args = dup_array(a, args, n, sizeof(*args));
    e->u.call.nargs = n;
  }
  return e;
}

/* ------------------------------------------------------------------------ */
/* Statements                                                                */
/* ------------------------------------------------------------------------ */

static tir_stmt_t *new_stmt(mlc_arena_t *a, tir_stmt_kind_t kind) {
  tir_stmt_t *s = mlc_arena_alloc(a, sizeof(*s));
  if (s) s->kind = kind;
  return s;
}

tir_stmt_t *tir_store(mlc_arena_t *a, tir_buffer_t *b, tir_expr_t *value, tir_expr_t **indices, int n) {
  tir_stmt_t *s = new_stmt(a, TIR_BUFFER_STORE);
  if (s) {
    s->u.store.buffer = b;
    s->u.store.value = value;
    s->u.store.indices = dup_array(a, indices, n, sizeof(*indices));
    s->u.store.nindices = n;
  }
  return s;
}

tir_stmt_t *tir_let_stmt(mlc_arena_t *a, tir_var_t *v, tir_expr_t *value, tir_stmt_t *body) {
  tir_stmt_t *s = new_stmt(a, TIR_LET);
  if (s) {
    s->u.let.var = v;
    s->u.let.value = value;
    s->u.let.body = body;
  }
  return s;
}

tir_stmt_t *tir_attr_stmt(mlc_arena_t *a, tir_var_t *node, const char *key, tir_expr_t *value,
                          tir_stmt_t *body) {
  tir_stmt_t *s = new_stmt(a, TIR_ATTR);
  if (s) {
    s->u.attr.node = node;
    s->u.attr.key = mlc_arena_strdup(a, key);
    s->u.attr.value = value;
    s->u.attr.body = body;
  }
  return s;
}

tir_stmt_t *tir_assert_stmt(mlc_arena_t *a, tir_expr_t *cond, tir_expr_t *message, tir_stmt_t *body) {
  tir_stmt_t *s = new_stmt(a, TIR_ASSERT);
  if (s) {
    s->u.assert_.cond = cond;
    s->u.assert_.message = message;
    s->u.assert_.body = body;
  }
  return s;
}

tir_stmt_t *tir_for(mlc_arena_t *a, tir_var_t *v, tir_expr_t *min, tir_expr_t *extent,
                    tir_for_kind_t kind, tir_stmt_t *body) {
  tir_stmt_t *s = new_stmt(a, TIR_FOR);
  if (s) {
    s->u.loop.var = v;
    s->u.loop.min = min;
    s->u.loop.extent = extent;
    s->u.loop.kind = kind;
    s->u.loop.body = body;
  }
  return s;
}

tir_stmt_t *tir_if(mlc_arena_t *a, tir_expr_t *cond, tir_stmt_t *then_case, tir_stmt_t *else_case) {
  tir_stmt_t *s = new_stmt(a, TIR_IF);
  if (s) {
    s->u.if_.cond = cond;
    s->u.if_.then_case = then_case;
    s->u.if_.else_case = else_case;
  }
  return s;
}

tir_stmt_t *tir_seq(mlc_arena_t *a, tir_stmt_t **stmts, int n) {
  int total = 0;
  for (int i = 0; i < n; i++)
    total += stmts[i]->kind == TIR_SEQ ? stmts[i]->u.seq.n : 1;
  if (total == 1) return stmts[0]->kind == TIR_SEQ ? stmts[0]->u.seq.stmts[0] : stmts[0];
  tir_stmt_t *s = new_stmt(a, TIR_SEQ);
  if (!s) return NULL;
  tir_stmt_t **out = mlc_arena_alloc(a, sizeof(*out) * (size_t)(total > 0 ? total : 1));
  if (!out) return NULL;
  int k = 0;
  for (int i = 0; i < n; i++) {
    if (stmts[i]->kind == TIR_SEQ)
      for (int j = 0; j < stmts[i]->u.seq.n; j++) out[k++] = stmts[i]->u.seq.stmts[j];
    else
      out[k++] = stmts[i];
  }
  s->u.seq.stmts = out;
  s->u.seq.n = total;
  return s;
}

tir_stmt_t *tir_evaluate(mlc_arena_t *a, tir_expr_t *value) {
  tir_stmt_t *s = new_stmt(a, TIR_EVALUATE);
  if (s) s->u.evaluate.value = value;
  return s;
}

tir_stmt_t *tir_allocate(mlc_arena_t *a, tir_buffer_t *b, tir_stmt_t *body) {
  tir_stmt_t *s = new_stmt(a, TIR_ALLOCATE);
  if (s) {
    s->u.allocate.buffer = b;
    s->u.allocate.body = body;
  }
  return s;
}

tir_stmt_t *tir_block_realize(mlc_arena_t *a, tir_expr_t **values, int n, tir_expr_t *predicate,
                              tir_block_t *block) {
  tir_stmt_t *s = new_stmt(a, TIR_BLOCK_REALIZE);
  if (s) {
    s->u.realize.iter_values = dup_array(a, values, n, sizeof(*values));
    s->u.realize.n = n;
    s->u.realize.predicate = predicate ? predicate : tir_bool(a, true);
    s->u.realize.block = block;
  }
  return s;
}

tir_block_t *tir_block_new(mlc_arena_t *a, const char *name) {
  tir_block_t *b = mlc_arena_alloc(a, sizeof(*b));
  if (b) b->name = mlc_arena_strdup(a, name);
  return b;
}

tir_block_t *tir_block_copy(mlc_arena_t *a, const tir_block_t *b) {
  tir_block_t *c = mlc_arena_memdup(a, b, sizeof(*b));
  if (!c) return NULL;
  c->iter_vars = dup_array(a, b->iter_vars, b->niter_vars, sizeof(*b->iter_vars));
  c->reads = dup_array(a, b->reads, b->nreads, sizeof(*b->reads));
  c->writes = dup_array(a, b->writes, b->nwrites, sizeof(*b->writes));
  c->alloc_buffers = dup_array(a, b->alloc_buffers, b->nalloc_buffers, sizeof(*b->alloc_buffers));
  c->match_buffers = dup_array(a, b->match_buffers, b->nmatch_buffers, sizeof(*b->match_buffers));
  c->annots = dup_array(a, b->annots, b->nannots, sizeof(*b->annots));
  return c;
}

tir_stmt_t *tir_stmt_copy(mlc_arena_t *a, const tir_stmt_t *s) {
  return mlc_arena_memdup(a, s, sizeof(*s));
}

tir_expr_t *tir_expr_copy(mlc_arena_t *a, const tir_expr_t *e) {
  return mlc_arena_memdup(a, e, sizeof(*e));
}

tir_buffer_t *tir_buffer_new(mlc_arena_t *a, const char *name, tir_dtype_t t, tir_expr_t **shape,
                             int ndim, const char *scope) {
  tir_buffer_t *b = mlc_arena_alloc(a, sizeof(*b));
  if (!b) return NULL;
  b->name = mlc_arena_strdup(a, name);
  b->data = tir_var(a, name, tir_dt_HANDLE());
  b->dtype = t;
  b->ndim = ndim;
  b->shape = dup_array(a, shape, ndim, sizeof(*shape));
  b->scope = mlc_arena_strdup(a, scope ? scope : "global");
  return b;
}

tir_buffer_t *tir_buffer_copy(mlc_arena_t *a, const tir_buffer_t *b) {
  tir_buffer_t *c = mlc_arena_memdup(a, b, sizeof(*b));
  if (!c) return NULL;
  c->shape = dup_array(a, b->shape, b->ndim, sizeof(*b->shape));
  if (b->strides) c->strides = dup_array(a, b->strides, b->ndim, sizeof(*b->strides));
  return c;
}

tir_region_t tir_region_full(mlc_arena_t *a, tir_buffer_t *b) {
  tir_region_t r = {b, b->ndim, NULL};
  if (b->ndim > 0) {
    r.ranges = mlc_arena_alloc(a, sizeof(*r.ranges) * (size_t)b->ndim);
    if (!r.ranges) return r;
    for (int i = 0; i < b->ndim; i++) {
      r.ranges[i].min = tir_int(a, b->shape[i]->dtype, 0);
      r.ranges[i].extent = b->shape[i];
    }
  }
  return r;
}

/* ------------------------------------------------------------------------ */
/* Functions and modules                                                     */
/* ------------------------------------------------------------------------ */

tir_func_t *tir_func_new(const char *name) {
  mlc_arena_t *arena = mlc_arena_new();
  if (!arena) return NULL;
  tir_func_t *f = mlc_arena_alloc(arena, sizeof(*f));
  if (!f || !(f->name = mlc_arena_strdup(arena, name ? name : "main"))) {
    mlc_arena_free(arena);
    return NULL;
  }
  f->arena = arena;
  f->owns_arena = true;
  return f;
}

void tir_func_free(tir_func_t *f) {
  if (f && f->owns_arena) mlc_arena_free(f->arena);
}

tir_module_t *tir_module_new(const char *name) {
  mlc_arena_t *arena = mlc_arena_new();
  if (!arena) return NULL;
  tir_module_t *m = mlc_arena_alloc(arena, sizeof(*m));
  if (!m || !(m->name = mlc_arena_strdup(arena, name ? name : "Module"))) {
    mlc_arena_free(arena);
    return NULL;
  }
  m->arena = arena;
  return m;
}

void tir_module_free(tir_module_t *m) {
  if (m) mlc_arena_free(m->arena);
}

tir_func_t *tir_module_find(const tir_module_t *m, const char *name) {
  for (int i = 0; i < m->nfuncs; i++)
    if (strcmp(m->funcs[i]->name, name) == 0) return m->funcs[i];
  return NULL;
}

tir_block_t *tir_func_root_block(const tir_func_t *f) {
  if (f->body && f->body->kind == TIR_BLOCK_REALIZE) return f->body->u.realize.block;
  return NULL;
}

tir_expr_t *tir_annot_get(const tir_annot_t *annots, int n, const char *key) {
  for (int i = 0; i < n; i++)
    if (strcmp(annots[i].key, key) == 0) return annots[i].value;
  return NULL;
}

bool tir_as_int(const tir_expr_t *e, int64_t *out) {
  if (!e || e->kind != TIR_INT_IMM) return false;
  if (out) *out = e->u.int_value;
  return true;
}

bool tir_is_const_int(const tir_expr_t *e, int64_t v) {
  int64_t x;
  return tir_as_int(e, &x) && x == v;
}
