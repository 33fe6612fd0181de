/*
 * clone.c - deep copy of a function into a new arena.
 *
 * Unlike the mutator, which shares unchanged nodes, a clone must own every node
 * (immediates and strings included) so the source arena can be freed. Each
 * variable and buffer is copied once, the first time it is met, and mapped
 * thereafter, so the copy is structurally equal with fresh identities.
 */
#include "tir/tir.h"
#include "tir/ptrmap.h"

typedef struct {
  mlc_arena_t *a;
  tir_ptrmap_t vars, buffers;
} cloner_t;

static tir_expr_t *clone_expr(cloner_t *c, const tir_expr_t *e);
static tir_stmt_t *clone_stmt(cloner_t *c, const tir_stmt_t *s);

static const char *clone_str(cloner_t *c, const char *s) {
  return s ? mlc_arena_strdup(c->a, s) : NULL;
}

static tir_var_t *clone_var(cloner_t *c, const tir_var_t *v) {
  if (!v) return NULL;
  tir_var_t *out = tir_ptrmap_get(&c->vars, v);
  if (out) return out;
  out = tir_var(c->a, v->u.var.name, v->dtype);
  tir_ptrmap_put(&c->vars, v, out);
  return out;
}

static tir_expr_t **clone_exprs(cloner_t *c, tir_expr_t *const *xs, int n) {
  if (n <= 0 || !xs) return NULL;
  tir_expr_t **out = mlc_arena_alloc(c->a, sizeof(*out) * (size_t)n);
  if (!out) return NULL;
  for (int i = 0; i < n; i++) out[i] = clone_expr(c, xs[i]);
  return out;
}

static tir_buffer_t *clone_buffer(cloner_t *c, const tir_buffer_t *b) {
  if (!b) return NULL;
  tir_buffer_t *out = tir_ptrmap_get(&c->buffers, b);
  if (out) return out;
  out = mlc_arena_alloc(c->a, sizeof(*out));
  if (!out) return NULL;
  tir_ptrmap_put(&c->buffers, b, out);
  *out = *b;
  out->name = clone_str(c, b->name);
  out->data = clone_var(c, b->data);
  out->shape = clone_exprs(c, b->shape, b->ndim);
  out->strides = b->strides ? clone_exprs(c, b->strides, b->ndim) : NULL;
  out->elem_offset = clone_expr(c, b->elem_offset);
  out->scope = clone_str(c, b->scope);
  return out;
}

static tir_expr_t *clone_expr(cloner_t *c, const tir_expr_t *e) {
  if (!e) return NULL;
  if (e->kind == TIR_VAR) return clone_var(c, e);
  tir_expr_t *out = tir_expr_copy(c->a, e);
  if (!out) return NULL;
  switch (tir_expr_kind_shape(e->kind)) {
  case TIR_SHAPE_IMM:
    if (e->kind == TIR_STRING_IMM) out->u.str_value = clone_str(c, e->u.str_value);
    break;
  case TIR_SHAPE_LEAF: break;
  case TIR_SHAPE_BINARY:
    out->u.bin.a = clone_expr(c, e->u.bin.a);
    out->u.bin.b = clone_expr(c, e->u.bin.b);
    break;
  case TIR_SHAPE_UNARY: out->u.un.a = clone_expr(c, e->u.un.a); break;
  case TIR_SHAPE_SELECT:
    out->u.select.cond = clone_expr(c, e->u.select.cond);
    out->u.select.t = clone_expr(c, e->u.select.t);
    out->u.select.f = clone_expr(c, e->u.select.f);
    break;
  case TIR_SHAPE_LOAD:
    out->u.load.buffer = clone_buffer(c, e->u.load.buffer);
    out->u.load.indices = clone_exprs(c, e->u.load.indices, e->u.load.nindices);
    break;
  case TIR_SHAPE_RAMP:
    out->u.ramp.base = clone_expr(c, e->u.ramp.base);
    out->u.ramp.stride = clone_expr(c, e->u.ramp.stride);
    break;
  case TIR_SHAPE_BROADCAST: out->u.broadcast.value = clone_expr(c, e->u.broadcast.value); break;
  case TIR_SHAPE_CALL: out->u.call.args = clone_exprs(c, e->u.call.args, e->u.call.nargs); break;
  }
  return out;
}

static tir_annot_t *clone_annots(cloner_t *c, const tir_annot_t *as, int n) {
  if (n <= 0) return NULL;
  tir_annot_t *out = mlc_arena_alloc(c->a, sizeof(*out) * (size_t)n);
  if (!out) return NULL;
  for (int i = 0; i < n; i++) {
    out[i].key = clone_str(c, as[i].key);
    out[i].value = clone_expr(c, as[i].value);
  }
  return out;
}

static void clone_region(cloner_t *c, tir_region_t *out, const tir_region_t *r) {
  out->buffer = clone_buffer(c, r->buffer);
  out->ndim = r->ndim;
  out->ranges = NULL;
  if (r->ndim <= 0) return;
  out->ranges = mlc_arena_alloc(c->a, sizeof(*out->ranges) * (size_t)r->ndim);
  if (!out->ranges) return;
  for (int i = 0; i < r->ndim; i++) {
    out->ranges[i].min = clone_expr(c, r->ranges[i].min);
    out->ranges[i].extent = clone_expr(c, r->ranges[i].extent);
  }
}

static tir_region_t *clone_regions(cloner_t *c, const tir_region_t *rs, int n) {
  if (n <= 0) return NULL;
  tir_region_t *out = mlc_arena_alloc(c->a, sizeof(*out) * (size_t)n);
  if (!out) return NULL;
  for (int i = 0; i < n; i++) clone_region(c, &out[i], &rs[i]);
  return out;
}

static tir_block_t *clone_block(cloner_t *c, const tir_block_t *b) {
  tir_block_t *out = tir_block_new(c->a, b->name);
  if (!out) return NULL;
  out->uid = b->uid;
  out->niter_vars = b->niter_vars;
  if (b->niter_vars > 0) {
    out->iter_vars = mlc_arena_alloc(c->a, sizeof(*out->iter_vars) * (size_t)b->niter_vars);
    if (!out->iter_vars) return NULL;
    for (int i = 0; i < b->niter_vars; i++) {
      out->iter_vars[i].var = clone_var(c, b->iter_vars[i].var);
      out->iter_vars[i].dom.min = clone_expr(c, b->iter_vars[i].dom.min);
      out->iter_vars[i].dom.extent = clone_expr(c, b->iter_vars[i].dom.extent);
      out->iter_vars[i].type = b->iter_vars[i].type;
    }
  }
  /* Buffers defined by the block first, so their copies exist before uses. */
  out->nalloc_buffers = b->nalloc_buffers;
  if (b->nalloc_buffers > 0) {
    out->alloc_buffers = mlc_arena_alloc(c->a, sizeof(*out->alloc_buffers) * (size_t)b->nalloc_buffers);
    if (!out->alloc_buffers) return NULL;
    for (int i = 0; i < b->nalloc_buffers; i++) out->alloc_buffers[i] = clone_buffer(c, b->alloc_buffers[i]);
  }
  out->nmatch_buffers = b->nmatch_buffers;
  if (b->nmatch_buffers > 0) {
    out->match_buffers = mlc_arena_alloc(c->a, sizeof(*out->match_buffers) * (size_t)b->nmatch_buffers);
    if (!out->match_buffers) return NULL;
    for (int i = 0; i < b->nmatch_buffers; i++) {
      clone_region(c, &out->match_buffers[i].source, &b->match_buffers[i].source);
      out->match_buffers[i].buffer = clone_buffer(c, b->match_buffers[i].buffer);
    }
  }
  out->nreads = b->nreads;
  out->reads = clone_regions(c, b->reads, b->nreads);
  out->nwrites = b->nwrites;
  out->writes = clone_regions(c, b->writes, b->nwrites);
  out->nannots = b->nannots;
  out->annots = clone_annots(c, b->annots, b->nannots);
  out->init = clone_stmt(c, b->init);
  out->body = clone_stmt(c, b->body);
  return out;
}

static tir_stmt_t *clone_stmt(cloner_t *c, const tir_stmt_t *s) {
  if (!s) return NULL;
  tir_stmt_t *out = tir_stmt_copy(c->a, s);
  if (!out) return NULL;
  switch (s->kind) {
  case TIR_BUFFER_STORE:
    out->u.store.buffer = clone_buffer(c, s->u.store.buffer);
    out->u.store.value = clone_expr(c, s->u.store.value);
    out->u.store.indices = clone_exprs(c, s->u.store.indices, s->u.store.nindices);
    break;
  case TIR_LET:
    out->u.let.var = clone_var(c, s->u.let.var);
    out->u.let.value = clone_expr(c, s->u.let.value);
    out->u.let.body = clone_stmt(c, s->u.let.body);
    break;
  case TIR_ATTR:
    out->u.attr.node = clone_var(c, s->u.attr.node);
    out->u.attr.key = clone_str(c, s->u.attr.key);
    out->u.attr.value = clone_expr(c, s->u.attr.value);
    out->u.attr.body = clone_stmt(c, s->u.attr.body);
    break;
  case TIR_ASSERT:
    out->u.assert_.cond = clone_expr(c, s->u.assert_.cond);
    out->u.assert_.message = clone_expr(c, s->u.assert_.message);
    out->u.assert_.body = clone_stmt(c, s->u.assert_.body);
    break;
  case TIR_FOR:
    out->u.loop.var = clone_var(c, s->u.loop.var);
    out->u.loop.min = clone_expr(c, s->u.loop.min);
    out->u.loop.extent = clone_expr(c, s->u.loop.extent);
    out->u.loop.thread_tag = clone_str(c, s->u.loop.thread_tag);
    out->u.loop.annots = clone_annots(c, s->u.loop.annots, s->u.loop.nannots);
    out->u.loop.body = clone_stmt(c, s->u.loop.body);
    break;
  case TIR_IF:
    out->u.if_.cond = clone_expr(c, s->u.if_.cond);
    out->u.if_.then_case = clone_stmt(c, s->u.if_.then_case);
    out->u.if_.else_case = clone_stmt(c, s->u.if_.else_case);
    break;
  case TIR_SEQ:
    out->u.seq.stmts = mlc_arena_alloc(c->a, sizeof(*out->u.seq.stmts) * (size_t)(s->u.seq.n ? s->u.seq.n : 1));
    if (!out->u.seq.stmts) return NULL;
    for (int i = 0; i < s->u.seq.n; i++) out->u.seq.stmts[i] = clone_stmt(c, s->u.seq.stmts[i]);
    break;
  case TIR_EVALUATE: out->u.evaluate.value = clone_expr(c, s->u.evaluate.value); break;
  case TIR_ALLOCATE:
    out->u.allocate.buffer = clone_buffer(c, s->u.allocate.buffer);
    out->u.allocate.body = clone_stmt(c, s->u.allocate.body);
    break;
  case TIR_BLOCK_REALIZE:
    out->u.realize.iter_values = clone_exprs(c, s->u.realize.iter_values, s->u.realize.n);
    out->u.realize.predicate = clone_expr(c, s->u.realize.predicate);
    out->u.realize.block = clone_block(c, s->u.realize.block);
    break;
  case TIR_STMT_KIND_COUNT: break;
  }
  return out;
}

tir_func_t *tir_func_clone(const tir_func_t *f) {
  tir_func_t *out = tir_func_new(f->name);
  if (!out) return NULL;
  jmp_buf oom;
  jmp_buf *prev = mlc_arena_set_oom_handler(out->arena, &oom);
  if (setjmp(oom)) {
    tir_func_free(out);
    return NULL;
  }
  cloner_t c;
  c.a = out->arena;
  tir_ptrmap_init(&c.vars, c.a);
  tir_ptrmap_init(&c.buffers, c.a);
  out->nparams = f->nparams;
  if (f->nparams > 0) {
    out->params = mlc_arena_alloc(c.a, sizeof(*out->params) * (size_t)f->nparams);
    out->buffer_map = mlc_arena_alloc(c.a, sizeof(*out->buffer_map) * (size_t)f->nparams);
    for (int i = 0; i < f->nparams; i++) {
      out->params[i] = clone_var(&c, f->params[i]);
      out->buffer_map[i] = clone_buffer(&c, f->buffer_map ? f->buffer_map[i] : NULL);
    }
  }
  out->nattrs = f->nattrs;
  out->attrs = clone_annots(&c, f->attrs, f->nattrs);
  out->body = clone_stmt(&c, f->body);
  mlc_arena_set_oom_handler(out->arena, prev);
  return out;
}
