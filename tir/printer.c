/*
 * printer.c - canonical TVMScript for functions and modules (docs/tir.md,
 * "Canonical TVMScript"), and the public tir_print_* entry points.
 *
 * A function prints in two passes. The first is a dry run whose text is
 * thrown away: it finds the variables that are used without any definition
 * (free symbolic variables, a parameter's handle used in the body) and the
 * buffers used without any declaration (views, print_views.c). The second
 * declares those (`n = T.int32()` up front, `C_1 = T.Buffer(...)` as soon as
 * what the view names is defined) and prints for real. A dry run that found views
 * is run again with them declared, since their declarations may use free
 * variables too. Names are given in order of first printing
 * (print_names.c), so a dry run must not leak names into the real pass: each
 * pass has its own printer.
 */
#include "tir/print_priv.h"

#include <string.h>

#define INDENT_STEP 4

static bool var_listed(tir_var_t *const *vars, int n, const tir_var_t *v) {
  for (int i = 0; i < n; i++)
    if (vars[i] == v) return true;
  return false;
}

static tir_buffer_t *param_buffer(const tir_func_t *f, int i) {
  return f->buffer_map ? f->buffer_map[i] : NULL;
}

/* Parameter i prints as `A: T.Buffer(shape, dtype)`: its buffer is compact,
 * global and default-aligned, its shape is constants and scalar parameters
 * declared before it, and the handle itself is not used in the body. */
static bool param_is_plain(const tir_func_t *f, int i, tir_var_t *const *free_vars, int nfree) {
  const tir_buffer_t *b = param_buffer(f, i);
  if (!b || b->strides || b->elem_offset || b->align || b->offset_factor ||
      (b->scope && strcmp(b->scope, "global") != 0))
    return false;
  if (f->params[i] != b->data && var_listed(free_vars, nfree, f->params[i])) return false;
  for (int d = 0; d < b->ndim; d++) {
    const tir_expr_t *e = b->shape[d];
    if (e->kind == TIR_INT_IMM) continue;
    bool scalar_param = false;
    for (int j = 0; j < i && !scalar_param; j++)
      scalar_param = f->params[j] == e && !param_buffer(f, j);
    if (!scalar_param) return false;
  }
  return true;
}

static void put_signature(tir_printer_t *p, const tir_func_t *f, const bool *plain) {
  tir_printer_line(p);
  mlc_sb_printf(p->sb, "def %s(", tir_printer_identifier(p, f->name));
  for (int i = 0; i < f->nparams; i++) {
    if (i) mlc_sb_append(p->sb, ", ");
    if (plain[i]) {
      const tir_buffer_t *b = param_buffer(f, i);
      mlc_sb_printf(p->sb, "%s: T.Buffer(", tir_printer_define_buffer(p, b));
      tir_printer_buffer_args(p, b, true, false);
      mlc_sb_putc(p->sb, ')');
    } else {
      const tir_var_t *v = f->params[i];
      mlc_sb_printf(p->sb, "%s: ", tir_printer_define(p, v, v->u.var.name));
      tir_printer_dtype_annot(p->sb, v->dtype);
    }
  }
  mlc_sb_append(p->sb, "):\n");
}

/* `n = T.int32()` for a variable with no name yet; `scoped` names it in the
 * innermost open scope (a block's match_buffer), else for the function. */
static void declare_var(tir_printer_t *p, const tir_var_t *v, bool scoped) {
  if (tir_printer_name_of(p, v) || tir_ptrmap_get(&p->data_owner, v)) return;
  tir_printer_line(p);
  mlc_sb_printf(p->sb, "%s = ", scoped ? tir_printer_define_local(p, v)
                                       : tir_printer_define(p, v, v->u.var.name));
  tir_printer_dtype_annot(p->sb, v->dtype);
  mlc_sb_append(p->sb, "()\n");
}

typedef struct {
  tir_printer_t *p;
  bool scoped;
} declare_ctx_t;

static bool declare_visit(tir_visitor_t *vis, tir_expr_t *e) {
  declare_ctx_t *ctx = vis->payload;
  if (e->kind == TIR_VAR) declare_var(ctx->p, e, ctx->scoped);
  return true;
}

void tir_printer_declare_buffer_vars(tir_printer_t *p, const tir_buffer_t *b, bool scoped) {
  declare_ctx_t ctx = {p, scoped};
  tir_visitor_t vis = {.expr = declare_visit, .payload = &ctx};
  for (int d = 0; d < b->ndim; d++) tir_visit_expr(&vis, b->shape[d]);
  for (int d = 0; b->strides && d < b->ndim; d++) tir_visit_expr(&vis, b->strides[d]);
  tir_visit_expr(&vis, b->elem_offset);
}

static void put_preamble(tir_printer_t *p, const tir_func_t *f, const bool *plain,
                         tir_var_t *const *free_vars, int nfree) {
  if (f->nattrs) {
    tir_printer_line(p);
    mlc_sb_append(p->sb, "T.func_attr(");
    tir_printer_annots(p, f->attrs, f->nattrs);
    mlc_sb_append(p->sb, ")\n");
  }
  for (int i = 0; i < f->nparams; i++) {
    const tir_buffer_t *b = param_buffer(f, i);
    if (plain[i] || !b) continue;
    tir_printer_declare_buffer_vars(p, b, false);
    tir_printer_line(p);
    mlc_sb_printf(p->sb, "%s = T.match_buffer(", tir_printer_define_buffer(p, b));
    tir_printer_put_var(p, f->params[i]);
    mlc_sb_append(p->sb, ", ");
    tir_printer_buffer_args(p, b, false, false);
    mlc_sb_append(p->sb, ")\n");
  }
  for (int i = 0; i < nfree; i++) declare_var(p, free_vars[i], false);
  tir_printer_declare_views(p);
}

static bool find_block(tir_visitor_t *vis, tir_block_t *b, tir_stmt_t *realize) {
  *(bool *)vis->payload = true;
  return false;
}

static bool contains_block(const tir_stmt_t *s) {
  bool found = false;
  tir_visitor_t vis = {.block = find_block, .payload = &found};
  tir_visit_stmt(&vis, (tir_stmt_t *)s);
  return found;
}

/* The root block prints as the `# with T.block("root"):` comment when it has
 * nothing but allocations and a body, and the parser will re-create it: it
 * wraps a function body in a root block when there are root allocations, or
 * when the body holds blocks but is not itself one block without iter vars. */
static bool root_is_implicit(const tir_stmt_t *body) {
  if (!body || body->kind != TIR_BLOCK_REALIZE) return false;
  const tir_block_t *root = body->u.realize.block;
  if (!root->name || strcmp(root->name, "root") != 0 || root->niter_vars || root->nannots ||
      root->init || root->nmatch_buffers || root->nreads || root->nwrites ||
      !tir_printer_is_true(body->u.realize.predicate))
    return false;
  const tir_stmt_t *inner = root->body;
  if (root->nalloc_buffers) return true;
  if (!inner) return false;
  if (inner->kind == TIR_BLOCK_REALIZE) return inner->u.realize.block->niter_vars > 0;
  return contains_block(inner);
}

/* One function at p->indent: decorator, signature, preamble, body. */
static void put_func(tir_printer_t *p, const tir_func_t *f, tir_var_t *const *free_vars, int nfree) {
  bool stack_plain[32];
  bool *plain = f->nparams <= 32 ? stack_plain : mlc_calloc((size_t)f->nparams, sizeof(bool));
  if (!plain) {
    p->oom = true;
    return;
  }
  for (int i = 0; i < f->nparams; i++) plain[i] = param_is_plain(f, i, free_vars, nfree);
  tir_printer_line(p);
  mlc_sb_append(p->sb, "@T.prim_func\n");
  put_signature(p, f, plain);
  p->indent += INDENT_STEP;
  put_preamble(p, f, plain, free_vars, nfree);
  if (root_is_implicit(f->body)) {
    const tir_block_t *root = f->body->u.realize.block;
    tir_printer_line(p);
    mlc_sb_append(p->sb, "# with T.block(\"root\"):\n");
    tir_printer_alloc_buffers(p, root);
    tir_printer_declare_views(p);
    tir_printer_body(p, root->body);
  } else {
    tir_printer_body(p, f->body);
  }
  p->indent -= INDENT_STEP;
  if (plain != stack_plain) mlc_free(plain);
}

/* Dry runs until one finds no new view (views declared by a run are not
 * met undeclared by the next): the last one's free variables go to *dry,
 * which the caller finalises. False when out of memory. */
static bool dry_runs(tir_printer_t *dry, const tir_func_t *f, tir_print_views_t *views) {
  enum { MAX_DRY_RUNS = 4 }; /* 2 in practice; more only for malformed scoping */
  bool ok = true;
  int known = -1;
  for (int run = 0; ok && run < MAX_DRY_RUNS && views->n != known; run++) {
    known = views->n;
    tir_printer_fini(dry);
    mlc_strbuf_t scratch;
    mlc_sb_init(&scratch);
    ok = tir_printer_init(dry, &scratch);
    if (ok) {
      dry->collect_free = true;
      dry->views = views;
      put_func(dry, f, NULL, 0);
      ok = !dry->oom && !scratch.failed;
    }
    mlc_sb_free(&scratch);
  }
  return ok;
}

/* Prints f into sb at `indent`; false when out of memory. */
static bool print_func_at(mlc_strbuf_t *sb, const tir_func_t *f, int indent) {
  tir_printer_t dry, real;
  memset(&dry, 0, sizeof(dry));
  memset(&real, 0, sizeof(real));
  tir_print_views_t views = {0};
  bool ok = dry_runs(&dry, f, &views);
  if (ok) ok = tir_printer_init(&real, sb);
  if (ok) {
    real.indent = indent;
    real.views = &views;
    put_func(&real, f, dry.free_vars, dry.nfree);
    ok = !real.oom;
  }
  tir_printer_fini(&real);
  tir_printer_fini(&dry);
  tir_print_views_fini(&views);
  return ok && !sb->failed;
}

char *tir_print_func(const tir_func_t *f) {
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  mlc_sb_append(&sb, "# from tvm.script import tir as T\n\n");
  if (!print_func_at(&sb, f, 0)) {
    mlc_sb_free(&sb);
    return NULL;
  }
  return mlc_sb_take(&sb);
}

char *tir_print_module(const tir_module_t *m) {
  if (m->bare_func && m->nfuncs == 1) return tir_print_func(m->funcs[0]);
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  mlc_sb_append(&sb, "# from tvm.script import ir as I\n# from tvm.script import tir as T\n\n");
  mlc_sb_append(&sb, "@I.ir_module\nclass ");
  tir_printer_t names;
  if (!tir_printer_init(&names, &sb)) {
    mlc_sb_free(&sb);
    return NULL;
  }
  mlc_sb_printf(&sb, "%s:\n", tir_printer_identifier(&names, m->name));
  bool ok = !names.oom;
  tir_printer_fini(&names);
  if (m->nfuncs == 0) mlc_sb_append(&sb, "    pass\n");
  for (int i = 0; i < m->nfuncs && ok; i++) {
    if (i) mlc_sb_putc(&sb, '\n');
    ok = print_func_at(&sb, m->funcs[i], INDENT_STEP);
  }
  if (!ok) {
    mlc_sb_free(&sb);
    return NULL;
  }
  return mlc_sb_take(&sb);
}

void tir_print_expr(mlc_strbuf_t *sb, const tir_expr_t *e) {
  tir_printer_t p;
  bool ok = tir_printer_init(&p, sb);
  if (ok) tir_printer_expr(&p, e);
  if (!ok || p.oom) sb->failed = true;
  tir_printer_fini(&p);
}

void tir_print_stmt(mlc_strbuf_t *sb, const tir_stmt_t *s, int indent) {
  tir_printer_t p;
  bool ok = tir_printer_init(&p, sb);
  if (ok) {
    p.indent = indent;
    tir_printer_body(&p, s);
  }
  if (!ok || p.oom) sb->failed = true;
  tir_printer_fini(&p);
}
