/*
 * tensor_core.c - the "lower-tensor-core" pass (after compact-buffers,
 * before flatten-buffers) and the classification of the WMMA calls that
 * compact-buffers, gpu-sync and the GPU code generator share.
 *
 * The CUDA tensor intrinsics (schedule/intrin/builtin_cuda.c) lower to
 * `tvm_fill_fragment(X, 16, 16, 16, v)`, `tvm_load_matrix_sync(X, 16, 16,
 * 16, ptr, stride, layout)`, `tvm_mma_sync(D, A, B, C)` and
 * `tvm_store_matrix_sync(X, 16, 16, 16, ptr, stride, layout)` whose operands
 * name the first element of a 16x16 tile. A fragment lives in the registers
 * of a warp, spread over its lanes in a way only the hardware knows, so
 * code generation needs a fragment *number* for each tile operand; TVM
 * takes `elem_offset // 256`, which is only right when every tile is 256
 * consecutive elements. This pass makes that so: a fragment buffer of
 * shape [..., R, C] becomes [..., R / 16, C / 16, 16, 16] and each access
 * [..., r, c] becomes [..., r // 16, c // 16, r % 16, c % 16], a change of
 * layout that the interpreter runs with the same results (its tile rule
 * for a fragment moves the last two indices; flattened, 16 * i + j).
 *
 * It also checks the calls (argument count, 16x16x16, operand kinds and
 * scopes, the layout string) so that code generation meets only calls it
 * can generate; anything else is MLC_EUNSUPPORTED naming the call.
 */
#include "compiler/lower/tensor_core.h"

#include <string.h>

#include "compiler/lower/lower_util.h"

bool lower_tc_is_tile_arg(tir_wmma_op_t op, int pos) {
  switch (op) {
  case TIR_WMMA_MMA: return pos >= 1 && pos <= 4;
  case TIR_WMMA_FILL: return pos == LOWER_TC_FRAG_ARG;
  case TIR_WMMA_LOAD:
  case TIR_WMMA_STORE: return pos == LOWER_TC_FRAG_ARG || pos == LOWER_TC_MEM_ARG;
  default: return false;
  }
}

/* ------------------------------------------------------------------------ */
/* Checking the calls                                                        */
/* ------------------------------------------------------------------------ */

typedef struct {
  const tir_func_t *f;
  int rc;
  bool fragments;     /* a fragment buffer is allocated (there is a layout to change) */
} check_t;

static int bad(check_t *c, const tir_expr_t *call, const char *what) {
  if (c->rc == MLC_OK)
    c->rc = mlc_error_set(MLC_EUNSUPPORTED, "%s: %s: %s", c->f->name, tir_wmma_name(tir_wmma_op(call)), what);
  return c->rc;
}

/* args[pos] is a load of a fragment buffer of `scope` (NULL: any). */
static void check_fragment(check_t *c, const tir_expr_t *call, int pos, const char *scope) {
  const tir_expr_t *x = call->u.call.args[pos];
  if (x->kind != TIR_BUFFER_LOAD || x->dtype.lanes != 1 || !tir_wmma_is_fragment(x->u.load.buffer))
    bad(c, call, "a fragment operand must be an element of a wmma.* buffer");
  else if (scope && strcmp(x->u.load.buffer->scope, scope) != 0)
    bad(c, call, scope[5] == 'a' ? "the operand must be a wmma.accumulator fragment"
                                 : "operands out of order (D, A, B, C: accumulator, matrix_a, matrix_b, accumulator)");
}

static void check_memory(check_t *c, const tir_expr_t *call) {
  const tir_expr_t *p = call->u.call.args[LOWER_TC_MEM_ARG], *l = call->u.call.args[LOWER_TC_LAYOUT_ARG];
  if (p->kind != TIR_BUFFER_LOAD || p->dtype.lanes != 1 || tir_wmma_is_fragment(p->u.load.buffer))
    bad(c, call, "the memory operand must be an element of a buffer outside fragments");
  else if (l->kind != TIR_STRING_IMM || (strcmp(l->u.str_value, "row_major") && strcmp(l->u.str_value, "col_major")))
    bad(c, call, "the layout must be \"row_major\" or \"col_major\"");
}

static void check_call(check_t *c, const tir_expr_t *e) {
  static const int nargs[4] = {6, 8, 5, 8};
  tir_wmma_op_t op = tir_wmma_op(e);
  if (op == TIR_WMMA_NONE) return;
  if (e->u.call.nargs != nargs[op]) {
    bad(c, e, "wrong number of arguments");
    return;
  }
  if (op == TIR_WMMA_MMA) {
    static const char *const scopes[4] = {"wmma.accumulator", "wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator"};
    for (int k = 0; k < 4; k++) check_fragment(c, e, 1 + k, scopes[k]);
    return;
  }
  for (int d = 2; d <= 4; d++)
    if (lower_const_or_neg(e->u.call.args[d]) != LOWER_TC_DIM)
      bad(c, e, "only 16x16x16 tiles (m = n = k = 16) are generated");
  check_fragment(c, e, LOWER_TC_FRAG_ARG, op == TIR_WMMA_LOAD ? NULL : "wmma.accumulator");
  if (op != TIR_WMMA_FILL) check_memory(c, e);
}

static bool check_expr(tir_visitor_t *v, tir_expr_t *e) {
  check_t *c = v->payload;
  if (e->kind == TIR_CALL) check_call(c, e);
  return c->rc == MLC_OK;
}

static bool check_stmt(tir_visitor_t *v, tir_stmt_t *s) {
  check_t *c = v->payload;
  if (s->kind == TIR_ALLOCATE && tir_wmma_is_fragment(s->u.allocate.buffer)) c->fragments = true;
  return c->rc == MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Fragment layout                                                           */
/* ------------------------------------------------------------------------ */

typedef struct {
  const tir_buffer_t *from;
  tir_buffer_t *to;
} relayout_t;

static tir_expr_t **tiled_indices(mlc_arena_t *a, tir_expr_t **idx, int n) {
  tir_expr_t **out = mlc_arena_alloc(a, sizeof(*out) * (size_t)(n + 2));
  memcpy(out, idx, sizeof(*out) * (size_t)(n - 2));
  for (int k = 0; k < 2; k++) {
    tir_expr_t *i = idx[n - 2 + k], *t = tir_int(a, tir_dtype_scalar(i->dtype), LOWER_TC_DIM);
    out[n - 2 + k] = tir_binary(a, TIR_FLOOR_DIV, i, t);
    out[n + k] = tir_binary(a, TIR_FLOOR_MOD, i, t);
  }
  return out;
}

static tir_expr_t *relayout_expr(tir_mutator_t *m, tir_expr_t *e) {
  relayout_t *r = m->payload;
  tir_expr_t *x = tir_mutate_expr_children(m, e);
  if (e->kind != TIR_BUFFER_LOAD || e->u.load.buffer != r->from) return x;
  int n = x->u.load.nindices;
  return tir_load(m->arena, r->to, tiled_indices(m->arena, x->u.load.indices, n), n + 2);
}

static tir_stmt_t *relayout_stmt(tir_mutator_t *m, tir_stmt_t *s) {
  relayout_t *r = m->payload;
  tir_stmt_t *x = tir_mutate_stmt_children(m, s);
  if (s->kind != TIR_BUFFER_STORE || s->u.store.buffer != r->from) return x;
  int n = x->u.store.nindices;
  return tir_store(m->arena, r->to, x->u.store.value, tiled_indices(m->arena, x->u.store.indices, n), n + 2);
}

typedef struct {
  const tir_func_t *f;
  int rc;
} lt_t;

/* The fragment buffer b as [..., R / 16, C / 16, 16, 16]; NULL (error set)
 * when its shape is not constant multiples of 16 in the last two
 * dimensions or it has explicit strides. */
static tir_buffer_t *tiled_buffer(mlc_arena_t *a, lt_t *lt, const tir_buffer_t *b) {
  int n = b->ndim;
  int64_t r = n >= 2 ? lower_const_or_neg(b->shape[n - 2]) : -1, c = n >= 2 ? lower_const_or_neg(b->shape[n - 1]) : -1;
  if (r <= 0 || c <= 0 || r % LOWER_TC_DIM || c % LOWER_TC_DIM || b->strides || n + 2 > TIR_MAX_DIMS) {
    lt->rc = mlc_error_set(MLC_EUNSUPPORTED, "%s: fragment buffer %s (scope %s) must be a whole number of 16x16 "
                           "tiles with a constant shape (every access to it tensorized)", lt->f->name, b->name, b->scope);
    return NULL;
  }
  tir_buffer_t *nb = tir_buffer_copy(a, b);
  nb->ndim = n + 2;
  nb->shape = mlc_arena_alloc(a, sizeof(*nb->shape) * (size_t)(n + 2));
  memcpy(nb->shape, b->shape, sizeof(*nb->shape) * (size_t)(n - 2));
  tir_dtype_t it = tir_dtype_scalar(b->shape[n - 1]->dtype);
  nb->shape[n - 2] = tir_int(a, it, r / LOWER_TC_DIM);
  nb->shape[n - 1] = tir_int(a, it, c / LOWER_TC_DIM);
  nb->shape[n] = nb->shape[n + 1] = tir_int(a, it, LOWER_TC_DIM);
  return nb;
}

static tir_stmt_t *lt_stmt(tir_mutator_t *m, tir_stmt_t *s) {
  lt_t *lt = m->payload;
  tir_stmt_t *x = tir_mutate_stmt_children(m, s);
  if (lt->rc != MLC_OK || x->kind != TIR_ALLOCATE || !tir_wmma_is_fragment(x->u.allocate.buffer)) return x;
  relayout_t r = {x->u.allocate.buffer, tiled_buffer(m->arena, lt, x->u.allocate.buffer)};
  if (!r.to) return x;
  tir_mutator_t rm = {.arena = m->arena, .expr = relayout_expr, .stmt = relayout_stmt, .payload = &r};
  return tir_allocate(m->arena, r.to, tir_mutate_stmt(&rm, x->u.allocate.body));
}

static int run(tir_func_t *f) {
  check_t c = {f, MLC_OK, false};
  tir_visitor_t v = {.expr = check_expr, .stmt = check_stmt, .payload = &c};
  tir_visit_stmt(&v, f->body);
  if (c.rc != MLC_OK || !c.fragments) return c.rc; /* CPU code: one walk, nothing to rewrite */
  lt_t lt = {f, MLC_OK};
  tir_mutator_t m = {.arena = f->arena, .stmt = lt_stmt, .payload = &lt};
  tir_stmt_t *body = tir_mutate_stmt(&m, f->body);
  if (lt.rc == MLC_OK) f->body = body;
  return lt.rc;
}

int mlc_pass_lower_tensor_core(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes) {
  (void)target;
  (void)notes;
  int rc;
  LOWER_GUARDED(rc, f->arena, run(f));
  return rc;
}
