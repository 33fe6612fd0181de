/*
 * print_stmt.c - statements in TVMScript: stores, lets, attributes, asserts,
 * loops (folded into T.grid where the spec allows), if/else, evaluations,
 * buffer declarations and blocks with their iter vars, regions and init.
 *
 * Each function here writes whole lines at p->indent. Let, assert and
 * decl_buffer print their body at their own indentation (Python has no
 * scope for them), the others one level deeper.
 */
#include "tir/print_priv.h"

#include <string.h>

#define INDENT_STEP 4
#define MAX_GRID 64 /* deeper perfect nests print as nested grids */

void tir_printer_line(tir_printer_t *p) { mlc_sb_indent(p->sb, p->indent); }

static void put_exprs(tir_printer_t *p, tir_expr_t *const *es, int n) {
  for (int i = 0; i < n; i++) {
    if (i) mlc_sb_append(p->sb, ", ");
    tir_printer_expr(p, es[i]);
  }
}

/* A Python tuple: `()`, `(a,)`, `(a, b)`. */
static void put_tuple(tir_printer_t *p, tir_expr_t *const *es, int n) {
  mlc_sb_putc(p->sb, '(');
  put_exprs(p, es, n);
  if (n == 1) mlc_sb_putc(p->sb, ',');
  mlc_sb_putc(p->sb, ')');
}

static void indented_body(tir_printer_t *p, const tir_stmt_t *s) {
  p->indent += INDENT_STEP;
  tir_printer_body(p, s);
  p->indent -= INDENT_STEP;
}

/* ------------------------------------------------------------------------ */
/* Buffers and regions                                                       */
/* ------------------------------------------------------------------------ */

void tir_printer_buffer_args(tir_printer_t *p, const tir_buffer_t *b, bool always_dtype,
                             bool with_data) {
  mlc_strbuf_t *sb = p->sb;
  put_tuple(p, b->shape, b->ndim);
  if (always_dtype || !tir_dtype_eq(b->dtype, tir_dt_FLOAT32())) {
    mlc_sb_append(sb, ", ");
    tir_printer_dtype_str(sb, b->dtype);
  }
  if (with_data && b->data) {
    mlc_sb_append(sb, ", data=");
    tir_printer_put_var(p, b->data);
  }
  if (b->strides) {
    mlc_sb_append(sb, ", strides=");
    put_tuple(p, b->strides, b->ndim);
  }
  if (b->elem_offset) {
    mlc_sb_append(sb, ", elem_offset=");
    tir_printer_expr(p, b->elem_offset);
  }
  if (b->scope && strcmp(b->scope, "global") != 0) {
    mlc_sb_append(sb, ", scope=");
    tir_printer_string(sb, b->scope);
  }
  if (b->align) mlc_sb_printf(sb, ", align=%d", b->align);
  if (b->offset_factor) mlc_sb_printf(sb, ", offset_factor=%d", b->offset_factor);
}

/* `A[vi, 0:16]`: extent-1 ranges as their index, others as min:stop. */
static void put_region(tir_printer_t *p, const tir_region_t *r) {
  tir_printer_put_buffer(p, r->buffer);
  mlc_sb_putc(p->sb, '[');
  if (r->ndim == 0) mlc_sb_append(p->sb, "()");
  for (int i = 0; i < r->ndim; i++) {
    const tir_range_t *range = &r->ranges[i];
    if (i) mlc_sb_append(p->sb, ", ");
    tir_printer_expr(p, range->min);
    if (!tir_is_const_int(range->extent, 1)) {
      mlc_sb_putc(p->sb, ':');
      tir_printer_stop(p, range->min, range->extent);
    }
  }
  mlc_sb_putc(p->sb, ']');
}

static void put_regions(tir_printer_t *p, const char *what, const tir_region_t *rs, int n) {
  tir_printer_line(p);
  mlc_sb_printf(p->sb, "T.%s(", what);
  for (int i = 0; i < n; i++) {
    if (i) mlc_sb_append(p->sb, ", ");
    put_region(p, &rs[i]);
  }
  mlc_sb_append(p->sb, ")\n");
}

void tir_printer_alloc_buffers(tir_printer_t *p, const tir_block_t *b) {
  for (int i = 0; i < b->nalloc_buffers; i++) {
    tir_printer_line(p);
    mlc_sb_printf(p->sb, "%s = T.alloc_buffer(", tir_printer_define_buffer(p, b->alloc_buffers[i]));
    tir_printer_buffer_args(p, b->alloc_buffers[i], false, false);
    mlc_sb_append(p->sb, ")\n");
  }
}

/* The symbolic variables a match buffer introduces (strides, elem_offset of
 * a tensorized region) are declared just before it, inside the block, as
 * TVM prints them; they belong to the block's scope. */
static void put_match_buffers(tir_printer_t *p, const tir_block_t *b) {
  for (int i = 0; i < b->nmatch_buffers; i++) {
    const tir_match_buffer_t *m = &b->match_buffers[i];
    tir_printer_declare_buffer_vars(p, m->buffer, true);
    tir_printer_line(p);
    mlc_sb_printf(p->sb, "%s = T.match_buffer(", tir_printer_define_buffer(p, m->buffer));
    put_region(p, &m->source);
    mlc_sb_append(p->sb, ", ");
    tir_printer_buffer_args(p, m->buffer, false, false);
    mlc_sb_append(p->sb, ")\n");
  }
}

/* ------------------------------------------------------------------------ */
/* Blocks                                                                    */
/* ------------------------------------------------------------------------ */

/* An iter var domain: `128`, or `(2, 10)` when the min is not 0. */
static void put_domain(tir_printer_t *p, const tir_range_t *dom) {
  if (tir_is_const_int(dom->min, 0)) {
    tir_printer_expr(p, dom->extent);
    return;
  }
  mlc_sb_putc(p->sb, '(');
  tir_printer_expr(p, dom->min);
  mlc_sb_append(p->sb, ", ");
  tir_printer_stop(p, dom->min, dom->extent);
  mlc_sb_putc(p->sb, ')');
}

/* Iter var i can join T.axis.remap: spatial or reduce, bound to exactly the
 * variable of an enclosing loop whose range is the iter var's domain. */
static bool remappable(const tir_printer_t *p, const tir_block_t *b, const tir_stmt_t *realize,
                       int i) {
  const tir_iter_var_t *iv = &b->iter_vars[i];
  if (iv->type != TIR_ITER_SPATIAL && iv->type != TIR_ITER_REDUCE) return false;
  if (!realize || i >= realize->u.realize.n) return false;
  const tir_expr_t *value = realize->u.realize.iter_values[i];
  if (!value || value->kind != TIR_VAR) return false;
  for (int k = p->nloops - 1; k >= 0; k--) {
    const tir_stmt_t *loop = p->loops[k];
    if (loop->u.loop.var != value) continue;
    return tir_expr_equal(loop->u.loop.min, iv->dom.min) &&
           tir_expr_equal(loop->u.loop.extent, iv->dom.extent);
  }
  return false;
}

/* `vi, vj = T.axis.remap("SR", [i, j])` when every iter var allows it (and
 * there are at least two, as TVM prints), else one line per iter var. */
static void put_iter_vars(tir_printer_t *p, const tir_block_t *b, const tir_stmt_t *realize) {
  int n = b->niter_vars;
  bool remap = n >= 2;
  for (int i = 0; i < n && remap; i++) remap = remappable(p, b, realize, i);
  if (remap) {
    tir_printer_line(p);
    for (int i = 0; i < n; i++)
      mlc_sb_printf(p->sb, "%s%s", i ? ", " : "",
                    tir_printer_define_local(p, b->iter_vars[i].var));
    mlc_sb_append(p->sb, " = T.axis.remap(\"");
    for (int i = 0; i < n; i++) mlc_sb_putc(p->sb, tir_iter_type_letter(b->iter_vars[i].type));
    mlc_sb_append(p->sb, "\", [");
    put_exprs(p, realize->u.realize.iter_values, n);
    mlc_sb_append(p->sb, "])\n");
    return;
  }
  for (int i = 0; i < n; i++) {
    const tir_iter_var_t *iv = &b->iter_vars[i];
    tir_printer_line(p);
    mlc_sb_printf(p->sb, "%s = T.axis.%s(", tir_printer_define_local(p, iv->var),
                  tir_iter_type_name(iv->type));
    put_domain(p, &iv->dom);
    mlc_sb_append(p->sb, ", ");
    tir_printer_expr(p, realize && i < realize->u.realize.n ? realize->u.realize.iter_values[i]
                                                            : NULL);
    mlc_sb_append(p->sb, ")\n");
  }
}

/* Everything inside `with T.block(...):`, in the spec's order. The iter vars'
 * names are the block's: released at its end. */
static void put_block_contents(tir_printer_t *p, const tir_block_t *b, const tir_stmt_t *realize) {
  int scope = tir_printer_scope_open(p);
  put_iter_vars(p, b, realize);
  if (realize && !tir_printer_is_true(realize->u.realize.predicate)) {
    tir_printer_line(p);
    mlc_sb_append(p->sb, "T.where(");
    tir_printer_expr(p, realize->u.realize.predicate);
    mlc_sb_append(p->sb, ")\n");
  }
  put_regions(p, "reads", b->reads, b->nreads);
  put_regions(p, "writes", b->writes, b->nwrites);
  if (b->nannots) {
    tir_printer_line(p);
    mlc_sb_append(p->sb, "T.block_attr(");
    tir_printer_annots(p, b->annots, b->nannots);
    mlc_sb_append(p->sb, ")\n");
  }
  tir_printer_alloc_buffers(p, b);
  put_match_buffers(p, b);
  tir_printer_declare_views(p);
  if (b->init) {
    tir_printer_line(p);
    mlc_sb_append(p->sb, "with T.init():\n");
    indented_body(p, b->init);
  }
  tir_printer_body(p, b->body);
  tir_printer_scope_close(p, scope);
}

static void put_block_realize(tir_printer_t *p, const tir_stmt_t *s) {
  const tir_block_t *b = s->u.realize.block;
  tir_printer_line(p);
  mlc_sb_append(p->sb, "with T.block(");
  tir_printer_string(p->sb, b->name ? b->name : "");
  mlc_sb_append(p->sb, "):\n");
  p->indent += INDENT_STEP;
  put_block_contents(p, b, s);
  p->indent -= INDENT_STEP;
}

/* ------------------------------------------------------------------------ */
/* Loops                                                                     */
/* ------------------------------------------------------------------------ */

static bool uses_any(const tir_expr_t *e, const tir_stmt_t *const *loops, int n) {
  for (int i = 0; i < n; i++)
    if (tir_expr_uses_var((tir_expr_t *)e, loops[i]->u.loop.var)) return true;
  return false;
}

/* The perfectly nested loops from s that fold into one T.grid: serial, min 0,
 * no annotations, extents free of the grid's own variables. */
static int grid_chain(const tir_stmt_t *s, const tir_stmt_t **chain) {
  int n = 0;
  for (; s && s->kind == TIR_FOR && n < MAX_GRID; s = s->u.loop.body) {
    if (s->u.loop.kind != TIR_FOR_SERIAL || !tir_is_const_int(s->u.loop.min, 0) ||
        s->u.loop.nannots || uses_any(s->u.loop.extent, chain, n))
      break;
    chain[n++] = s;
  }
  return n;
}

/* A loop body: its variables are defined, so views naming them may be. */
static void loop_body(tir_printer_t *p, const tir_stmt_t *body) {
  p->indent += INDENT_STEP;
  tir_printer_declare_views(p);
  tir_printer_body(p, body);
  p->indent -= INDENT_STEP;
}

static void put_grid(tir_printer_t *p, const tir_stmt_t *const *chain, int n) {
  int scope = tir_printer_scope_open(p);
  tir_printer_line(p);
  mlc_sb_append(p->sb, "for ");
  for (int i = 0; i < n; i++) {
    const tir_var_t *v = chain[i]->u.loop.var;
    mlc_sb_printf(p->sb, "%s%s", i ? ", " : "", tir_printer_define_local(p, v));
  }
  mlc_sb_append(p->sb, " in T.grid(");
  for (int i = 0; i < n; i++) {
    if (i) mlc_sb_append(p->sb, ", ");
    tir_printer_expr(p, chain[i]->u.loop.extent);
  }
  mlc_sb_append(p->sb, "):\n");
  for (int i = 0; i < n; i++) tir_printer_push_loop(p, chain[i]);
  loop_body(p, chain[n - 1]->u.loop.body);
  for (int i = 0; i < n; i++) tir_printer_pop_loop(p);
  tir_printer_scope_close(p, scope);
}

/* `range(n)`, `range(2, 10)`, `T.parallel(n)`, `T.serial(n, annotations={...})`,
 * `T.thread_binding(n, thread="threadIdx.x")`. */
static void put_loop_iter(tir_printer_t *p, const tir_stmt_t *s) {
  bool plain = s->u.loop.kind == TIR_FOR_SERIAL && !s->u.loop.nannots;
  if (plain) mlc_sb_append(p->sb, "range(");
  else mlc_sb_printf(p->sb, "T.%s(", tir_for_kind_name(s->u.loop.kind));
  if (!tir_is_const_int(s->u.loop.min, 0)) {
    tir_printer_expr(p, s->u.loop.min);
    mlc_sb_append(p->sb, ", ");
    tir_printer_stop(p, s->u.loop.min, s->u.loop.extent);
  } else {
    tir_printer_expr(p, s->u.loop.extent);
  }
  if (s->u.loop.kind == TIR_FOR_THREAD_BINDING) {
    mlc_sb_append(p->sb, ", thread=");
    tir_printer_string(p->sb, s->u.loop.thread_tag ? s->u.loop.thread_tag : "");
  }
  if (s->u.loop.nannots) {
    mlc_sb_append(p->sb, ", annotations=");
    tir_printer_annots(p, s->u.loop.annots, s->u.loop.nannots);
  }
  mlc_sb_putc(p->sb, ')');
}

static void put_for(tir_printer_t *p, const tir_stmt_t *s) {
  const tir_stmt_t *chain[MAX_GRID];
  int n = grid_chain(s, chain);
  if (n > 1) {
    put_grid(p, chain, n);
    return;
  }
  tir_printer_line(p);
  int scope = tir_printer_scope_open(p);
  mlc_sb_printf(p->sb, "for %s in ", tir_printer_define_local(p, s->u.loop.var));
  put_loop_iter(p, s);
  mlc_sb_append(p->sb, ":\n");
  tir_printer_push_loop(p, s);
  loop_body(p, s->u.loop.body);
  tir_printer_pop_loop(p);
  tir_printer_scope_close(p, scope);
}

/* ------------------------------------------------------------------------ */
/* Statements                                                                */
/* ------------------------------------------------------------------------ */

static void put_store(tir_printer_t *p, const tir_stmt_t *s) {
  tir_printer_line(p);
  tir_printer_put_buffer(p, s->u.store.buffer);
  mlc_sb_putc(p->sb, '[');
  if (s->u.store.nindices == 0) mlc_sb_append(p->sb, "()");
  put_exprs(p, s->u.store.indices, s->u.store.nindices);
  mlc_sb_append(p->sb, "] = ");
  tir_printer_expr(p, s->u.store.value);
  mlc_sb_putc(p->sb, '\n');
}

/* The variable's scope is the body, which prints after it at the same
 * indentation (the rest of the enclosing list). */
static void put_let(tir_printer_t *p, const tir_stmt_t *s) {
  const tir_var_t *v = s->u.let.var;
  tir_printer_line(p);
  int scope = tir_printer_scope_open(p);
  mlc_sb_printf(p->sb, "%s: ", tir_printer_define_local(p, v));
  tir_printer_dtype_annot(p->sb, v->dtype);
  mlc_sb_append(p->sb, " = ");
  tir_printer_expr(p, s->u.let.value);
  mlc_sb_putc(p->sb, '\n');
  tir_printer_declare_views(p);
  tir_printer_body(p, s->u.let.body);
  tir_printer_scope_close(p, scope);
}

static void put_attr(tir_printer_t *p, const tir_stmt_t *s) {
  tir_printer_line(p);
  mlc_sb_append(p->sb, "with T.attr(");
  /* No node is what TVM holds as the constant 0 (`T.attr(0, "async_scope", 1)`). */
  if (s->u.attr.node) tir_printer_put_var(p, s->u.attr.node);
  else mlc_sb_putc(p->sb, '0');
  mlc_sb_append(p->sb, ", ");
  tir_printer_string(p->sb, s->u.attr.key ? s->u.attr.key : "");
  mlc_sb_append(p->sb, ", ");
  tir_printer_expr(p, s->u.attr.value);
  mlc_sb_append(p->sb, "):\n");
  indented_body(p, s->u.attr.body);
}

static void put_assert(tir_printer_t *p, const tir_stmt_t *s) {
  tir_printer_line(p);
  mlc_sb_append(p->sb, "assert ");
  tir_printer_expr(p, s->u.assert_.cond);
  mlc_sb_append(p->sb, ", ");
  tir_printer_expr(p, s->u.assert_.message);
  mlc_sb_putc(p->sb, '\n');
  tir_printer_body(p, s->u.assert_.body);
}

static void put_if(tir_printer_t *p, const tir_stmt_t *s) {
  tir_printer_line(p);
  mlc_sb_append(p->sb, "if ");
  tir_printer_expr(p, s->u.if_.cond);
  mlc_sb_append(p->sb, ":\n");
  indented_body(p, s->u.if_.then_case);
  if (s->u.if_.else_case) {
    tir_printer_line(p);
    mlc_sb_append(p->sb, "else:\n");
    indented_body(p, s->u.if_.else_case);
  }
}

/* A call statement prints bare (`T.tvm_storage_sync("shared")`). */
static void put_evaluate(tir_printer_t *p, const tir_stmt_t *s) {
  const tir_expr_t *e = s->u.evaluate.value;
  bool bare = e && e->kind == TIR_CALL && e->u.call.op != TIR_OP_LIST;
  tir_printer_line(p);
  if (!bare) mlc_sb_append(p->sb, "T.evaluate(");
  tir_printer_expr(p, e);
  mlc_sb_append(p->sb, bare ? "\n" : ")\n");
}

static void put_allocate(tir_printer_t *p, const tir_stmt_t *s) {
  tir_printer_line(p);
  mlc_sb_printf(p->sb, "%s = T.decl_buffer(", tir_printer_define_buffer(p, s->u.allocate.buffer));
  tir_printer_buffer_args(p, s->u.allocate.buffer, false, false);
  mlc_sb_append(p->sb, ")\n");
  tir_printer_declare_views(p);
  tir_printer_body(p, s->u.allocate.body);
}

void tir_printer_stmt(tir_printer_t *p, const tir_stmt_t *s) {
  switch (s->kind) {
  case TIR_BUFFER_STORE: put_store(p, s); break;
  case TIR_LET: put_let(p, s); break;
  case TIR_ATTR: put_attr(p, s); break;
  case TIR_ASSERT: put_assert(p, s); break;
  case TIR_FOR: put_for(p, s); break;
  case TIR_IF: put_if(p, s); break;
  case TIR_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) tir_printer_stmt(p, s->u.seq.stmts[i]);
    break;
  case TIR_EVALUATE: put_evaluate(p, s); break;
  case TIR_ALLOCATE: put_allocate(p, s); break;
  case TIR_BLOCK_REALIZE: put_block_realize(p, s); break;
  case TIR_STMT_KIND_COUNT: break;
  }
}

void tir_printer_body(tir_printer_t *p, const tir_stmt_t *s) {
  if (!s || (s->kind == TIR_SEQ && s->u.seq.n == 0)) {
    tir_printer_line(p);
    mlc_sb_append(p->sb, "T.evaluate(0)\n");
    return;
  }
  tir_printer_stmt(p, s);
}
