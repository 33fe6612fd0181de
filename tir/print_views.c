/*
 * print_views.c - declarations for buffers that nothing declares.
 *
 * Lowered TIR reads and writes a parameter through a flat 1-D view: a second
 * buffer with its own shape that shares the parameter's data var (C_1 of
 * shape (4096,) over C's storage). The IR has no statement declaring such a
 * view, so without help the printer would write `C_1[i * 64 + j]` with no
 * definition of C_1, which no parser reads back. TVM prints these as a
 * DeclBuffer without allocation: `C_1 = T.Buffer((4096,), data=C.data)`.
 *
 * Where: as soon as everything the declaration names is defined, that is at
 * the first definition point (the end of the function preamble, the start of
 * a loop body, the line after a let or a `T.decl_buffer`, a block after its
 * buffer declarations) at which its data var and the variables of its shape,
 * strides and elem_offset all have names. A parameter's data is defined by
 * the signature, so lowering's views go in the preamble, after the
 * match_buffers and symbolic variables; a view of `X = T.decl_buffer(...)`
 * goes on the line after it. Those definitions enclose every use of the view
 * (a use is in their scope), so the declaration is in scope wherever the view
 * is used. Views that become declarable at one point print in order of first
 * use.
 *
 * How: the dry run of printer.c notes each buffer it prints with no name yet
 * (tir_printer_note_view), and as free variables those of its variables that
 * nothing defines (a data var of no buffer: `p = T.handle()`); the real run
 * declares them. A dry run that found views runs again with them declared.
 */
#include "tir/print_priv.h"

#include <string.h>

void tir_print_views_fini(tir_print_views_t *v) {
  mlc_free(v->bufs);
  memset(v, 0, sizeof(*v));
}

/* A variable with a name here: its own, or `X.data` through a named buffer. */
static bool var_available(const tir_printer_t *p, const tir_var_t *v) {
  if (tir_printer_name_of(p, v)) return true;
  const tir_buffer_t *owner = tir_ptrmap_get(&p->data_owner, v);
  return owner && tir_printer_name_of(p, owner);
}

typedef struct {
  tir_printer_t *p;
  bool all_available;
  bool collect; /* note the unavailable ones as free variables */
} avail_ctx_t;

static bool avail_visit(tir_visitor_t *vis, tir_expr_t *e) {
  avail_ctx_t *ctx = vis->payload;
  if (e->kind != TIR_VAR || var_available(ctx->p, e)) return true;
  ctx->all_available = false;
  if (ctx->collect) tir_printer_note_free(ctx->p, e);
  return true;
}

/* Whether every variable b's declaration names is available; with collect,
 * the others are noted as free variables. */
static bool view_available(tir_printer_t *p, const tir_buffer_t *b, bool collect) {
  avail_ctx_t ctx = {p, true, collect};
  tir_visitor_t vis = {.expr = avail_visit, .payload = &ctx};
  tir_visit_expr(&vis, b->data);
  for (int d = 0; d < b->ndim; d++) tir_visit_expr(&vis, b->shape[d]);
  for (int d = 0; b->strides && d < b->ndim; d++) tir_visit_expr(&vis, b->strides[d]);
  tir_visit_expr(&vis, b->elem_offset);
  return ctx.all_available;
}

void tir_printer_note_view(tir_printer_t *p, const tir_buffer_t *b) {
  tir_print_views_t *v = p->views;
  if (!v || !b->data) return; /* without a data var there is nothing to view */
  /* At a use, whatever encloses it is named: what is not, nothing defines. */
  view_available(p, b, true);
  for (int i = 0; i < v->n; i++)
    if (v->bufs[i] == b) return;
  if (v->n == v->cap) {
    int cap = v->cap ? v->cap * 2 : 8;
    const tir_buffer_t **grown = mlc_realloc(v->bufs, (size_t)cap * sizeof(*grown));
    if (!grown) {
      p->oom = true;
      return;
    }
    v->bufs = grown;
    v->cap = cap;
  }
  v->bufs[v->n++] = b;
}

/* `X = T.Buffer((shape), "dtype", data=Y.data, strides=..., ...)`. The view
 * is not made the owner of its data var: that stays the buffer (or the
 * variable) the storage belongs to, so `data=` never names the view itself. */
static void declare_view(tir_printer_t *p, const tir_buffer_t *b) {
  tir_printer_line(p);
  mlc_sb_printf(p->sb, "%s = T.Buffer(", tir_printer_define(p, b, b->name));
  tir_printer_buffer_args(p, b, false, true);
  mlc_sb_append(p->sb, ")\n");
}

void tir_printer_declare_views(tir_printer_t *p) {
  const tir_print_views_t *v = p->views;
  for (int i = 0; v && i < v->n; i++) {
    const tir_buffer_t *b = v->bufs[i];
    if (!tir_printer_name_of(p, b) && view_available(p, b, false)) declare_view(p, b);
  }
}
