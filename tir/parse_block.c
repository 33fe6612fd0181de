/*
 * parse_block.c - blocks and buffers: `with T.block(...)` (and T.sblock) with
 * their header statements (T.axis.*, T.where, T.reads, T.writes,
 * T.block_attr, `with T.init()`), and the buffer declarations T.alloc_buffer,
 * T.decl_buffer, T.match_buffer and the arguments they share with T.Buffer,
 * and `X = T.Buffer(..., data=Y.data)` views of existing storage.
 *
 * Header statements fill the block_ctx_t of the innermost block while its body
 * is parsed; the block is built when the body ends. Regions omitted from the
 * script are derived from the body (tir_block_derive_regions), as TVM does,
 * except for the function's root block, whose regions stay empty; views of
 * the block's own storage are left out, like its allocations. A header
 * statement may not name a buffer declared inside the block: the header
 * prints before the block's declarations, so the text would not read back.
 */
#include "tir/parse_internal.h"
#include "tir/ptrmap.h"

#include <stdio.h>
#include <string.h>

static void require_block_list(parser_t *p, const tok_t *t, const char *what) {
  if (p->list != LIST_BLOCK || !p->blk)
    parse_fail(p, t, "'%s' is only allowed directly inside a block", what);
}

/* ------------------------------------------------------------------------ */
/* Derived regions and views                                                 */
/* ------------------------------------------------------------------------ */

/* Derived regions name every buffer the body accesses, views included. A
 * view over storage the block itself defines (an alloc_buffer, a
 * decl_buffer inside), or shaped by its iterators or inner loops, can only
 * be declared inside the block, after the header that would name it; like
 * the block's own allocations it is no access from outside, and its regions
 * are left out. */
typedef struct {
  tir_ptrmap_t defs; /* variables the block defines */
  bool local;        /* scratch: a visited expression uses one */
} local_ctx_t;

static void def_local(local_ctx_t *ctx, const tir_var_t *v) {
  if (v) tir_ptrmap_put(&ctx->defs, v, (void *)v); /* OOM longjmps (parser arenas) */
}

static void def_block_locals(local_ctx_t *ctx, const tir_block_t *b) {
  for (int i = 0; i < b->niter_vars; i++) def_local(ctx, b->iter_vars[i].var);
  for (int i = 0; i < b->nalloc_buffers; i++) def_local(ctx, b->alloc_buffers[i]->data);
  for (int i = 0; i < b->nmatch_buffers; i++) {
    const tir_buffer_t *m = b->match_buffers[i].buffer;
    def_local(ctx, m->data);
    for (int d = 0; d < m->ndim; d++)
      if (m->shape[d]->kind == TIR_VAR) def_local(ctx, m->shape[d]);
    for (int d = 0; m->strides && d < m->ndim; d++)
      if (m->strides[d]->kind == TIR_VAR) def_local(ctx, m->strides[d]);
    if (m->elem_offset && m->elem_offset->kind == TIR_VAR) def_local(ctx, m->elem_offset);
  }
}

static bool local_stmt(tir_visitor_t *vis, tir_stmt_t *s) {
  local_ctx_t *ctx = vis->payload;
  if (s->kind == TIR_FOR) def_local(ctx, s->u.loop.var);
  if (s->kind == TIR_LET) def_local(ctx, s->u.let.var);
  if (s->kind == TIR_ALLOCATE) def_local(ctx, s->u.allocate.buffer->data);
  return true;
}

static bool local_block(tir_visitor_t *vis, tir_block_t *b, tir_stmt_t *realize) {
  def_block_locals(vis->payload, b);
  return true;
}

static bool local_use(tir_visitor_t *vis, tir_expr_t *e) {
  local_ctx_t *ctx = vis->payload;
  if (e->kind == TIR_VAR && tir_ptrmap_get(&ctx->defs, e)) ctx->local = true;
  return !ctx->local;
}

static bool is_local_view(local_ctx_t *ctx, const tir_buffer_t *b) {
  tir_visitor_t vis = {.expr = local_use, .payload = ctx};
  ctx->local = false;
  tir_visit_expr(&vis, b->data);
  for (int d = 0; d < b->ndim; d++) tir_visit_expr(&vis, b->shape[d]);
  for (int d = 0; b->strides && d < b->ndim; d++) tir_visit_expr(&vis, b->strides[d]);
  tir_visit_expr(&vis, b->elem_offset);
  return ctx->local;
}

static void drop_local_views(local_ctx_t *ctx, tir_region_t *rs, int *n) {
  int kept = 0;
  for (int i = 0; i < *n; i++)
    if (!is_local_view(ctx, rs[i].buffer)) rs[kept++] = rs[i];
  *n = kept;
}

static void derive_regions(parser_t *p, tir_block_t *b, const block_ctx_t *ctx) {
  tir_region_t *reads = NULL, *writes = NULL;
  int nreads = 0, nwrites = 0;
  tir_block_derive_regions(p->arena, b, &reads, &nreads, &writes, &nwrites);
  local_ctx_t locals = {.local = false};
  tir_ptrmap_init(&locals.defs, p->tmp);
  def_block_locals(&locals, b);
  tir_visitor_t vis = {.stmt = local_stmt, .block = local_block, .payload = &locals};
  tir_visit_stmt(&vis, b->init);
  tir_visit_stmt(&vis, b->body);
  if (!ctx->has_reads) {
    drop_local_views(&locals, reads, &nreads);
    b->reads = reads;
    b->nreads = nreads;
  }
  if (!ctx->has_writes) {
    drop_local_views(&locals, writes, &nwrites);
    b->writes = writes;
    b->nwrites = nwrites;
  }
}

/* ------------------------------------------------------------------------ */
/* Blocks                                                                    */
/* ------------------------------------------------------------------------ */

static tir_block_t *finish_block(parser_t *p, const char *name, block_ctx_t *ctx, tir_stmt_t *body,
                                 bool is_root) {
  tir_block_t *b = tir_block_new(p->arena, name);
  b->niter_vars = ctx->iters.len;
  b->iter_vars = parse_dup(p, ctx->iters.data, ctx->iters.len, sizeof(*ctx->iters.data));
  b->nalloc_buffers = ctx->allocs.len;
  b->alloc_buffers = parse_dup(p, ctx->allocs.data, ctx->allocs.len, sizeof(*ctx->allocs.data));
  b->nmatch_buffers = ctx->matches.len;
  b->match_buffers = parse_dup(p, ctx->matches.data, ctx->matches.len, sizeof(*ctx->matches.data));
  b->nannots = ctx->annots.len;
  b->annots = parse_dup(p, ctx->annots.data, ctx->annots.len, sizeof(*ctx->annots.data));
  b->init = ctx->init;
  b->body = body;
  b->nreads = ctx->reads.len;
  b->reads = parse_dup(p, ctx->reads.data, ctx->reads.len, sizeof(*ctx->reads.data));
  b->nwrites = ctx->writes.len;
  b->writes = parse_dup(p, ctx->writes.data, ctx->writes.len, sizeof(*ctx->writes.data));
  if ((!ctx->has_reads || !ctx->has_writes) && !(is_root && b->niter_vars == 0))
    derive_regions(p, b, ctx);
  return b;
}

/* block = ("T.block" | "T.sblock") "(" STRING? ")" suite   (after "with") */
tir_stmt_t *parse_block(parser_t *p, const tok_t *with_tok) {
  const tok_t *first;
  parse_t_path(p, &first);
  expect_op(p, "(");
  const char *name = "";
  if (peek(p)->kind == TK_STRING) name = advance(p)->str;
  accept_op(p, ",");
  expect_op(p, ")");
  /* An explicit root block: named "root" at the top of the function body. */
  bool is_root = !p->blk && p->list == LIST_FUNC && strcmp(name, "root") == 0;
  block_ctx_t ctx = {.parent = p->blk, .scope = scope_mark(p)};
  p->blk = &ctx;
  p->fn->nblocks++;
  parse_enter(p, with_tok);
  tir_stmt_t *body = parse_suite(p, LIST_BLOCK);
  parse_leave(p);
  p->blk = ctx.parent;
  tir_block_t *b = finish_block(p, name, &ctx, body, is_root);
  return tir_block_realize(p->arena, ctx.bindings.data, ctx.bindings.len, ctx.where, b);
}

/* init = "T.init" "(" ")" suite   (after "with") */
tir_stmt_t *parse_init(parser_t *p, const tok_t *with_tok) {
  const tok_t *first;
  parse_t_path(p, &first);
  require_block_list(p, first, "T.init");
  if (p->blk->init) parse_fail(p, first, "duplicate 'T.init'");
  block_ctx_t *blk = p->blk;
  expect_op(p, "(");
  expect_op(p, ")");
  parse_enter(p, with_tok);
  blk->init = parse_suite(p, LIST_OTHER);
  parse_leave(p);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Block iterators                                                           */
/* ------------------------------------------------------------------------ */

/*      spelling    type */
#define AXIS_KINDS(X)                   \
  X("axis.spatial", TIR_ITER_SPATIAL)   \
  X("axis.S",       TIR_ITER_SPATIAL)   \
  X("axis.reduce",  TIR_ITER_REDUCE)    \
  X("axis.R",       TIR_ITER_REDUCE)    \
  X("axis.scan",    TIR_ITER_SCAN)      \
  X("axis.opaque",  TIR_ITER_OPAQUE)

static const struct {
  const char *name;
  tir_iter_type_t type;
} axis_kinds[] = {
#define ROW_(name, type) {name, type},
    AXIS_KINDS(ROW_)
#undef ROW_
};

static void add_iter(parser_t *p, const tok_t *name, tir_iter_type_t type, tir_expr_t *min,
                     tir_expr_t *extent, tir_expr_t *binding) {
  tir_iter_var_t iv = {tir_var(p->arena, tok_strdup(p, name), binding->dtype), {min, extent}, type};
  scope_declare(p, name, SYM_VAR)->var = iv.var;
  pvec_push(p, &p->blk->iters, iv);
  pvec_push(p, &p->blk->bindings, binding);
}

/* domain = "(" expr "," expr ")" | expr: a (min, stop) pair or an extent. */
static void parse_axis(parser_t *p, const tok_t *name, const tok_t *t, const char *path,
                       tir_iter_type_t type) {
  const char *op = mlc_arena_printf(p->tmp, "T.%s", path);
  expect_op(p, "(");
  pexpr_t min = {0}, stop = {0}, binding;
  bool pair = false;
  if (tok_is_op(peek(p), "(")) {
    int save = p->pos;
    advance(p);
    min = parse_pexpr(p);
    pair = accept_op(p, ",");
    if (pair) {
      stop = parse_pexpr(p);
      expect_op(p, ")");
    } else {
      p->pos = save; /* a parenthesised extent: read it again as one expression */
    }
  }
  if (!pair) stop = parse_index_pexpr(p, "the iterator's extent");
  expect_op(p, ",");
  binding = parse_index_pexpr(p, "the iterator's binding");
  accept_op(p, ",");
  expect_op(p, ")");
  if (!pair) {
    unify(p, t, op, &stop, &binding);
    add_iter(p, name, type, tir_int(p->arena, binding.e->dtype, 0), stop.e, binding.e);
    return;
  }
  unify(p, t, op, &min, &binding);
  unify(p, t, op, &stop, &binding);
  tir_expr_t *extent = range_extent(p, t, op, &min, &stop);
  add_iter(p, name, type, min.e, extent, binding.e);
}

static bool remap_type(char letter, tir_iter_type_t *out) {
  for (int i = TIR_ITER_SPATIAL; i <= TIR_ITER_OPAQUE; i++) {
    if (tir_iter_type_letter((tir_iter_type_t)i) == letter) {
      *out = (tir_iter_type_t)i;
      return true;
    }
  }
  return false;
}

/* remap = "T.axis.remap" "(" STRING "," ("[" names "]" | "(" names ")") ")" */
static void parse_remap(parser_t *p, const tok_t **targets, int n) {
  expect_op(p, "(");
  const tok_t *kinds = expect_string(p, "the iterator kinds");
  size_t nkinds = strlen(kinds->str);
  if (nkinds != (size_t)n)
    parse_fail(p, kinds, "T.axis.remap: %zu kind%s for %d variable%s", nkinds,
               nkinds == 1 ? "" : "s", n, n == 1 ? "" : "s");
  expect_op(p, ",");
  const tok_t *open = peek(p);
  const char *close = tok_is_op(open, "(") ? ")" : "]";
  if (!tok_is_op(open, "(")) expect_op(p, "[");
  else advance(p);
  PVEC(const tok_t *) names = {0};
  while (!tok_is_op(peek(p), close)) {
    pvec_push(p, &names, expect_name(p, "a loop variable"));
    if (!accept_op(p, ",")) break;
  }
  expect_op(p, close);
  accept_op(p, ",");
  expect_op(p, ")");
  if (names.len != n)
    parse_fail(p, open, "T.axis.remap: %d binding%s for %d variable%s", names.len,
               names.len == 1 ? "" : "s", n, n == 1 ? "" : "s");
  for (int i = 0; i < n; i++) {
    const tok_t *v = names.data[i];
    sym_t *s = scope_lookup(p, v->text, v->len);
    if (!s) parse_fail(p, v, "unknown name '%s'", tok_desc(p, v));
    if (s->kind != SYM_VAR || !s->loop_extent)
      parse_fail(p, v, "T.axis.remap: '%s' is not a loop variable", tok_desc(p, v));
    tir_iter_type_t type;
    if (!remap_type(kinds->str[i], &type))
      parse_fail(p, kinds, "T.axis.remap: unknown iterator kind '%c'", kinds->str[i]);
    add_iter(p, targets[i], type, s->loop_min, s->loop_extent, s->var);
  }
}

void parse_axis_assign(parser_t *p, const tok_t **targets, int n) {
  const tok_t *t;
  const char *path = parse_t_path(p, &t);
  char what[64];
  snprintf(what, sizeof what, "T.%s", path);
  require_block_list(p, t, what);
  p->blk->in_header = true;
  if (strcmp(path, "axis.remap") == 0) {
    parse_remap(p, targets, n);
    p->blk->in_header = false;
    return;
  }
  for (size_t i = 0; i < sizeof axis_kinds / sizeof *axis_kinds; i++) {
    if (strcmp(axis_kinds[i].name, path) != 0) continue;
    if (n != 1) parse_fail(p, t, "'T.%s' defines one variable but %d are assigned", path, n);
    parse_axis(p, targets[0], t, path, axis_kinds[i].type);
    p->blk->in_header = false;
    return;
  }
  parse_fail(p, t, "unknown function 'T.%s'", path);
}

/* ------------------------------------------------------------------------ */
/* Block header statements                                                   */
/* ------------------------------------------------------------------------ */

/* where = "T.where" "(" expr ")" */
void parse_where(parser_t *p, const tok_t *t) {
  require_block_list(p, t, "T.where");
  if (p->blk->where) parse_fail(p, t, "duplicate 'T.where'");
  p->blk->in_header = true;
  expect_op(p, "(");
  p->blk->where = parse_cond(p, "the block predicate");
  accept_op(p, ",");
  expect_op(p, ")");
  p->blk->in_header = false;
}

static tir_region_t parse_region_arg(parser_t *p) {
  const tok_t *name = expect_name(p, "a buffer region");
  sym_t *s = scope_lookup(p, name->text, name->len);
  if (!s) parse_fail(p, name, "unknown name '%s'", tok_desc(p, name));
  if (s->kind != SYM_BUFFER) parse_fail(p, name, "'%s' is not a buffer", tok_desc(p, name));
  check_header_buffer(p, name, s);
  return parse_region(p, name, s->buffer);
}

void check_header_buffer(parser_t *p, const tok_t *name, const sym_t *s) {
  if (p->blk && p->blk->in_header && s - p->syms.data >= p->blk->scope)
    parse_fail(p, name, "buffer '%s' is declared inside this block: its header cannot use it",
               tok_desc(p, name));
}

/* reads = ("T.reads" | "T.writes") "(" (region ("," region)* | "[" regions "]")? ")" */
void parse_reads_writes(parser_t *p, const tok_t *t, bool writes) {
  const char *what = writes ? "T.writes" : "T.reads";
  require_block_list(p, t, what);
  bool *given = writes ? &p->blk->has_writes : &p->blk->has_reads;
  if (*given) parse_fail(p, t, "duplicate '%s'", what);
  *given = true;
  p->blk->in_header = true;
  expect_op(p, "(");
  bool list = accept_op(p, "[");
  const char *close = list ? "]" : ")";
  while (!tok_is_op(peek(p), close)) {
    tir_region_t r = parse_region_arg(p);
    if (writes)
      pvec_push(p, &p->blk->writes, r);
    else
      pvec_push(p, &p->blk->reads, r);
    if (!accept_op(p, ",")) break;
  }
  expect_op(p, close);
  if (list) expect_op(p, ")");
  p->blk->in_header = false;
}

/* block_attr = "T.block_attr" "(" annotations ")" */
void parse_block_attr(parser_t *p, const tok_t *t) {
  require_block_list(p, t, "T.block_attr");
  p->blk->in_header = true;
  expect_op(p, "(");
  tir_annot_t *a;
  int n = parse_annotations(p, &a);
  accept_op(p, ",");
  expect_op(p, ")");
  p->blk->in_header = false;
  for (int i = 0; i < n; i++) pvec_push(p, &p->blk->annots, a[i]);
}

/* ------------------------------------------------------------------------ */
/* Buffer declarations                                                       */
/* ------------------------------------------------------------------------ */

/* exprs = "(" (expr ("," expr)* ","?)? ")" | "[" ... "]" | expr */
static void parse_expr_tuple(parser_t *p, void *vec, const char *what) {
  PVEC(tir_expr_t *) *v = vec;
  const tok_t *t = peek(p);
  const char *close = tok_is_op(t, "(") ? ")" : tok_is_op(t, "[") ? "]" : NULL;
  if (!close) {
    pvec_push(p, v, parse_index_pexpr(p, what).e);
    return;
  }
  advance(p);
  while (!tok_is_op(peek(p), close)) {
    if (v->len >= TIR_MAX_DIMS) parse_fail(p, peek(p), "too many dimensions (at most %d)", TIR_MAX_DIMS);
    pvec_push(p, v, parse_index_pexpr(p, what).e);
    if (!accept_op(p, ",")) break;
  }
  expect_op(p, close);
}

static bool accept_none(parser_t *p) {
  if (!tok_is_name(peek(p), "None")) return false;
  advance(p);
  return true;
}

static bool accept_empty_list(parser_t *p) {
  const tok_t *a = peek(p), *b = peek_at(p, 1);
  if (!(tok_is_op(a, "[") && tok_is_op(b, "]")) && !(tok_is_op(a, "(") && tok_is_op(b, ")")))
    return false;
  advance(p);
  advance(p);
  return true;
}

/* data_ref = NAME "." "data" | NAME: a buffer's data var or a handle variable. */
static tir_var_t *parse_data_ref(parser_t *p) {
  const tok_t *name = expect_name(p, "a buffer's data or a handle variable");
  sym_t *s = scope_lookup(p, name->text, name->len);
  if (!s) parse_fail(p, name, "unknown name '%s'", tok_desc(p, name));
  if (s->kind == SYM_BUFFER) {
    if (!tok_is_op(peek(p), "."))
      parse_fail(p, name, "data= takes a handle: write '%s.data'", tok_desc(p, name));
    return parse_buffer_data(p, name, s->buffer);
  }
  if (!tir_dtype_is_handle(s->var->dtype)) {
    char buf[24];
    parse_fail(p, name, "data= takes a handle, not '%s' of dtype %s", tok_desc(p, name),
               dtype_name(s->var->dtype, buf));
  }
  return s->var;
}

/* One `key=value` argument of a buffer declaration. */
static void parse_buffer_kwarg(parser_t *p, buffer_spec_t *spec, const tok_t *key) {
  if (tok_is_name(key, "shape")) {
    spec->shape.len = 0;
    parse_expr_tuple(p, &spec->shape, "a buffer shape");
  } else if (tok_is_name(key, "dtype")) {
    spec->dtype = parse_dtype_string(p);
  } else if (tok_is_name(key, "strides")) {
    spec->has_strides = !accept_none(p);
    if (spec->has_strides) parse_expr_tuple(p, &spec->strides, "a buffer stride");
  } else if (tok_is_name(key, "elem_offset")) {
    if (!accept_none(p)) spec->elem_offset = parse_index_pexpr(p, "elem_offset").e;
  } else if (tok_is_name(key, "scope")) {
    const tok_t *s = expect_string(p, "a storage scope");
    spec->scope = s->str[0] ? s->str : "global";
  } else if (tok_is_name(key, "align")) {
    int64_t v = parse_int_literal(p, "align");
    spec->align = v < 0 ? 0 : (int)(v > (1 << 30) ? 1 << 30 : v);
  } else if (tok_is_name(key, "offset_factor")) {
    int64_t v = parse_int_literal(p, "offset_factor");
    spec->offset_factor = v < 0 ? 0 : (int)(v > (1 << 30) ? 1 << 30 : v);
  } else if (tok_is_name(key, "buffer_type")) {
    expect_string(p, "a buffer type");
  } else if (tok_is_name(key, "data")) {
    if (!accept_none(p)) {
      spec->data = parse_data_ref(p);
      spec->data_tok = key;
    }
  } else if (tok_is_name(key, "axis_separators")) {
    if (!accept_none(p) && !accept_empty_list(p))
      parse_fail(p, key, "'axis_separators=' is not supported");
  } else {
    parse_fail(p, key, "unknown keyword argument '%s'", tok_desc(p, key));
  }
}

void parse_buffer_args(parser_t *p, buffer_spec_t *spec, const char *closer, const char *fn) {
  memset(spec, 0, sizeof *spec);
  spec->dtype = tir_dt_FLOAT32();
  spec->scope = "global";
  int npos = 0;
  while (!tok_is_op(peek(p), closer)) {
    if (at_kwarg(p)) {
      const tok_t *key = advance(p);
      advance(p);
      parse_buffer_kwarg(p, spec, key);
    } else if (npos == 0) {
      parse_expr_tuple(p, &spec->shape, "a buffer shape");
      npos++;
    } else if (npos == 1) {
      spec->dtype = parse_dtype_string(p);
      npos++;
    } else {
      parse_fail(p, peek(p), "too many positional arguments to '%s'", fn);
    }
    if (!accept_op(p, ",")) break;
  }
  if (spec->has_strides && spec->strides.len != spec->shape.len)
    parse_fail(p, peek(p), "'%s': %d strides for %d dimensions", fn, spec->strides.len,
               spec->shape.len);
}

tir_buffer_t *buffer_from_spec(parser_t *p, const tok_t *name, const buffer_spec_t *spec) {
  if (spec->data)
    parse_fail(p, spec->data_tok,
               "'data=' is only supported in a view, 'X = T.Buffer(..., data=Y.data)' in a body");
  tir_buffer_t *b = tir_buffer_new(p->arena, tok_strdup(p, name), spec->dtype, spec->shape.data,
                                   spec->shape.len, spec->scope);
  if (spec->has_strides) b->strides = parse_dup(p, spec->strides.data, spec->strides.len, sizeof(tir_expr_t *));
  b->elem_offset = spec->elem_offset;
  b->align = spec->align;
  b->offset_factor = spec->offset_factor;
  return b;
}

static tir_buffer_t *parse_buffer_call(parser_t *p, const tok_t *name, const char *fn) {
  buffer_spec_t spec;
  expect_op(p, "(");
  parse_buffer_args(p, &spec, ")", fn);
  expect_op(p, ")");
  return buffer_from_spec(p, name, &spec);
}

/* alloc = NAME "=" ("T.alloc_buffer" | "T.sblock_alloc_buffer") "(" buffer_args ")" */
void parse_alloc_buffer(parser_t *p, const tok_t *name, const tok_t *fn_tok) {
  tir_buffer_t *b = parse_buffer_call(p, name, "T.alloc_buffer");
  if (p->blk)
    pvec_push(p, &p->blk->allocs, b);
  else
    pvec_push(p, &p->fn->root_allocs, b);
  scope_declare(p, name, SYM_BUFFER)->buffer = b;
}

/* decl = NAME "=" "T.decl_buffer" "(" buffer_args ")"; the rest of the
 * statement list is its body. */
tir_stmt_t *parse_decl_buffer(parser_t *p, const tok_t *name, const tok_t *fn_tok) {
  tir_buffer_t *b = parse_buffer_call(p, name, "T.decl_buffer");
  scope_declare(p, name, SYM_BUFFER)->buffer = b;
  return tir_allocate(p->arena, b, NULL);
}

/* match = NAME "=" "T.match_buffer" "(" (NAME | region) "," buffer_args ")":
 * of a handle parameter at function level, of a region inside a block. */
void parse_match_buffer(parser_t *p, const tok_t *name, const tok_t *fn_tok) {
  buffer_spec_t spec;
  expect_op(p, "(");
  if (p->list == LIST_FUNC && !p->blk) {
    const tok_t *param = expect_name(p, "a handle parameter");
    sym_t *s = scope_lookup(p, param->text, param->len);
    if (!s || s->param_index < 0)
      parse_fail(p, param, "'%s' is not a handle parameter", tok_desc(p, param));
    if (p->fn->f->buffer_map[s->param_index])
      parse_fail(p, param, "parameter '%s' is already matched", tok_desc(p, param));
    expect_op(p, ",");
    parse_buffer_args(p, &spec, ")", "T.match_buffer");
    expect_op(p, ")");
    tir_buffer_t *b = buffer_from_spec(p, name, &spec);
    p->fn->f->buffer_map[s->param_index] = b;
    scope_declare(p, name, SYM_BUFFER)->buffer = b;
    return;
  }
  require_block_list(p, fn_tok, "T.match_buffer");
  tir_region_t source = parse_region_arg(p);
  expect_op(p, ",");
  parse_buffer_args(p, &spec, ")", "T.match_buffer");
  expect_op(p, ")");
  tir_match_buffer_t m = {buffer_from_spec(p, name, &spec), source};
  pvec_push(p, &p->blk->matches, m);
  scope_declare(p, name, SYM_BUFFER)->buffer = m.buffer;
}

/* view = NAME "=" "T.Buffer" "(" buffer_args ")" with data= among them.
 * A DeclBuffer without allocation, as TVM prints lowered code's flat views
 * of a parameter: a new buffer over the storage of data=, which the IR holds
 * only through the buffer's data var (no statement). Scoped like other
 * buffers: to the rest of the enclosing statement list. */
void parse_buffer_view(parser_t *p, const tok_t *name, const tok_t *fn_tok) {
  buffer_spec_t spec;
  expect_op(p, "(");
  parse_buffer_args(p, &spec, ")", "T.Buffer");
  expect_op(p, ")");
  tir_var_t *data = spec.data;
  if (!data)
    parse_fail(p, fn_tok, "a 'T.Buffer' in a body views existing storage: it needs data=Y.data");
  spec.data = NULL;
  tir_buffer_t *b = buffer_from_spec(p, name, &spec);
  b->data = data;
  scope_declare(p, name, SYM_BUFFER)->buffer = b;
}
