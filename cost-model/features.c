/*
 * features.c - cm_extract: per-store features of a lowered program, in the
 * layout of MetaSchedule's per_store_feature (164 columns, names in
 * features_names.c, meanings in docs/cost-model.md).
 *
 * Steps: features_walk.c records the stores and groups unrolled copies; for
 * each group this file builds the store's loop nest (its loops outermost
 * first, minus those an `if v == c` pins; the virtual loop of the copies;
 * the vector lanes innermost), counts its arithmetic, writes every access as
 * an affine form (features_access.c) and counts what each buffer touches
 * under each level; features_row.c turns that into the columns. Values are
 * log2(1 + |x|).
 */
#include <math.h>
#include <string.h>

#include "cost-model/features.h"

/* ------------------------------------------------------------------------ */
/* Arithmetic counts                                                         */
/* ------------------------------------------------------------------------ */

typedef struct {
  double *c;
  double w;                /* loop iterations around one evaluation */
  const fx_bind_t *binds;
  int depth;
} arith_t;

static void count_expr(arith_t *a, const tir_expr_t *e);

static void count_op(arith_t *a, int fcounter, int icounter, bool is_float, const tir_expr_t *e) {
  a->c[is_float ? fcounter : icounter] += a->w * e->dtype.lanes;
}

/* x + y * z (or - y * z) is one multiply-add. */
static bool count_mad(arith_t *a, const tir_expr_t *e) {
  const tir_expr_t *m = e->u.bin.b, *other = e->u.bin.a;
  if (m->kind != TIR_MUL && e->kind == TIR_ADD) {
    m = e->u.bin.a;
    other = e->u.bin.b;
  }
  if (m->kind != TIR_MUL) return false;
  count_op(a, FX_FLOAT_MAD, FX_INT_MAD, tir_dtype_is_float(e->dtype), e);
  count_expr(a, m->u.bin.a);
  count_expr(a, m->u.bin.b);
  count_expr(a, other);
  return true;
}

/* LLVM intrinsics that are multiply-adds: per lane, how many. */
static int intrin_mads(const tir_expr_t *e) {
  if (e->u.call.nargs < 1 || e->u.call.args[0]->kind != TIR_STRING_IMM) return 0;
  const char *name = e->u.call.args[0]->u.str_value;
  if (strstr(name, "vpdpbusd")) return 4; /* 4 u8 x s8 products per int32 lane */
  if (strstr(name, "vpdpwssd")) return 2;
  if (strstr(name, "fma") || strstr(name, "fmuladd")) return 1;
  return 0;
}

static void count_call(arith_t *a, const tir_expr_t *e) {
  tir_op_t op = e->u.call.op;
  bool is_float = tir_dtype_is_float(e->dtype);
  if (op == TIR_OP_IF_THEN_ELSE) {
    a->c[FX_SELECT_OP] += a->w * e->dtype.lanes;
  } else if (op == TIR_OP_CALL_LLVM_INTRIN || op == TIR_OP_CALL_LLVM_PURE_INTRIN) {
    int mads = intrin_mads(e);
    if (mads) a->c[is_float ? FX_FLOAT_MAD : FX_INT_MAD] += a->w * e->dtype.lanes * mads;
    else count_op(a, FX_FLOAT_OTHER_FUNC, FX_INT_OTHER_FUNC, is_float, e);
  } else if (op != TIR_OP_LIKELY && op != TIR_OP_REINTERPRET && op != TIR_OP_ASSUME && op != TIR_OP_LIST) {
    if (tir_op_is_pure(op)) count_op(a, FX_FLOAT_MATH_FUNC, FX_INT_MATH_FUNC, is_float, e);
    else count_op(a, FX_FLOAT_OTHER_FUNC, FX_INT_OTHER_FUNC, is_float, e);
  }
  for (int i = 0; i < e->u.call.nargs; i++) count_expr(a, e->u.call.args[i]);
}

static void count_var(arith_t *a, const tir_expr_t *e) {
  if (a->depth >= 8) return;
  for (const fx_bind_t *b = a->binds; b; b = b->up)
    if (b->var == e) {
      a->depth++;
      count_expr(a, b->value);
      a->depth--;
      return;
    }
}

static void count_expr(arith_t *a, const tir_expr_t *e) {
  if (!e) return;
  bool is_float = tir_dtype_is_float(e->dtype);
  switch (e->kind) {
  case TIR_ADD:
  case TIR_SUB:
    if (count_mad(a, e)) return;
    count_op(a, FX_FLOAT_ADD_SUB, FX_INT_ADD_SUB, is_float, e);
    break;
  case TIR_MUL: count_op(a, FX_FLOAT_MUL, FX_INT_MUL, is_float, e); break;
  case TIR_DIV:
  case TIR_MOD:
  case TIR_FLOOR_DIV:
  case TIR_FLOOR_MOD: count_op(a, FX_FLOAT_DIV_MOD, FX_INT_DIV_MOD, is_float, e); break;
  case TIR_MIN:
  case TIR_MAX:
  case TIR_EQ:
  case TIR_NE:
  case TIR_LT:
  case TIR_LE:
  case TIR_GT:
  case TIR_GE: count_op(a, FX_FLOAT_CMP, FX_INT_CMP, tir_dtype_is_float(e->u.bin.a->dtype), e); break;
  case TIR_AND:
  case TIR_OR:
  case TIR_NOT: a->c[FX_BOOL_OP] += a->w * e->dtype.lanes; break;
  case TIR_SELECT: a->c[FX_SELECT_OP] += a->w * e->dtype.lanes; break;
  case TIR_CALL: count_call(a, e); return;
  case TIR_VAR: count_var(a, e); return;
  default: break;
  }
  switch (tir_expr_kind_shape(e->kind)) {
  case TIR_SHAPE_BINARY: count_expr(a, e->u.bin.a); count_expr(a, e->u.bin.b); return;
  case TIR_SHAPE_UNARY: count_expr(a, e->u.un.a); return;
  case TIR_SHAPE_SELECT:
    count_expr(a, e->u.select.cond);
    count_expr(a, e->u.select.t);
    count_expr(a, e->u.select.f);
    return;
  case TIR_SHAPE_LOAD:
    for (int i = 0; i < e->u.load.nindices; i++) count_expr(a, e->u.load.indices[i]);
    return;
  case TIR_SHAPE_RAMP: count_expr(a, e->u.ramp.base); count_expr(a, e->u.ramp.stride); return;
  case TIR_SHAPE_BROADCAST: count_expr(a, e->u.broadcast.value); return;
  default: return;
  }
}

/* ------------------------------------------------------------------------ */
/* Accesses                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct {
  mlc_arena_t *arena;
  fx_access_t *items;
  int n, cap;
} access_list_t;

static void push_access(access_list_t *l, tir_buffer_t *b, bool is_write, int lanes, tir_expr_t *const *idx,
                        int nidx) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 8;
    l->items = mlc_arena_grow(l->arena, l->items, (size_t)l->n, (size_t)cap, sizeof(fx_access_t));
    l->cap = cap;
  }
  fx_access_t *a = &l->items[l->n++];
  a->buffer = b;
  a->is_write = is_write;
  a->lanes = lanes;
  a->indices = idx;
  a->nindices = nidx;
}

static bool load_hook(tir_visitor_t *v, tir_expr_t *e) {
  if (e->kind == TIR_BUFFER_LOAD)
    push_access(v->payload, e->u.load.buffer, false, e->dtype.lanes, e->u.load.indices, e->u.load.nindices);
  return true;
}

/* The store first, then its value's loads in pre-order. */
static access_list_t collect_accesses(mlc_arena_t *arena, tir_stmt_t *s) {
  access_list_t l = {arena, NULL, 0, 0};
  push_access(&l, s->u.store.buffer, true, s->u.store.value->dtype.lanes, s->u.store.indices,
              s->u.store.nindices);
  tir_visitor_t v;
  memset(&v, 0, sizeof v);
  v.expr = load_hook;
  v.payload = &l;
  tir_visit_expr(&v, s->u.store.value);
  return l;
}

/* ------------------------------------------------------------------------ */
/* The nest                                                                  */
/* ------------------------------------------------------------------------ */

static void add_level(fx_row_t *r, tir_var_t *var, int64_t extent, tir_for_kind_t kind, const char *tag, int id,
                      int depth) {
  if (r->nlevels == FX_MAX_LEVELS) return;
  fx_level_t *l = &r->levels[r->nlevels++];
  l->var = var;
  l->extent = extent;
  l->kind = kind;
  l->thread_tag = tag;
  l->id = id;
  l->stack_depth = depth;
  r->prod *= (double)extent;
}

static void add_copies_level(fx_row_t *r) {
  if (r->g->ncopies < 2 || r->nlevels == FX_MAX_LEVELS) return;
  r->copies_level = r->nlevels;
  add_level(r, NULL, r->g->ncopies, TIR_FOR_UNROLLED, NULL, r->ex->next_id++, -1);
}

static void build_nest(fx_row_t *r, const access_list_t *acc) {
  fx_walk_t *w = &r->ex->walk;
  int n;
  int *stack = fx_frame_loops(w, r->st->frame, &n);
  r->prod = 1;
  r->lane_level = r->copies_level = -1;
  for (int d = 0; d < n && r->nlevels < FX_MAX_LEVELS - 2; d++) {
    if (d == r->g->lca) add_copies_level(r);
    const fx_loop_t *l = &w->loops[stack[d]];
    if (fx_pinned(r->st->pins, l->var)) continue;
    add_level(r, l->var, l->extent, l->kind, l->thread_tag, stack[d], d + 1);
  }
  if (r->copies_level < 0) add_copies_level(r);
  int lanes = acc->items[0].lanes;
  for (int i = 1; i < acc->n && lanes == 1; i++)
    if (acc->items[i].lanes > lanes) lanes = acc->items[i].lanes;
  r->prod_scalar = r->prod;
  if (lanes > 1) {
    r->lane_level = r->nlevels;
    add_level(r, NULL, lanes, TIR_FOR_VECTORIZED, NULL, r->ex->next_id++, -1);
  }
  r->cx.levels = r->levels;
  r->cx.nlevels = r->nlevels;
  r->cx.lane_level = r->lane_level;
  r->cx.binds = r->st->binds;
}

/* ------------------------------------------------------------------------ */
/* Buffers                                                                   */
/* ------------------------------------------------------------------------ */

static int cmp_i64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

/* Access j of the copies, at their offsets: one atom of the virtual loop. */
static void add_copies_term(fx_row_t *r, fx_affine_t *form, int j, const access_list_t *copies) {
  int64_t offs[FX_MAX_LEVELS * 4];
  int n = 0;
  fx_nest_ctx_t cx = r->cx;
  for (int m = 0; m < r->g->ncopies && n < (int)(sizeof offs / sizeof offs[0]); m++) {
    if (copies[m].n <= j) return;
    const fx_access_t *a = &copies[m].items[j];
    fx_affine_t f;
    cx.binds = r->ex->walk.stores[r->g->members[m]].binds;
    fx_linearize_access(&f, &cx, a->buffer, a->indices, a->nindices);
    offs[n++] = f.c0;
  }
  qsort(offs, (size_t)n, sizeof offs[0], cmp_i64);
  int k = n ? 1 : 0;
  for (int i = 1; i < n; i++) k += offs[i] != offs[i - 1];
  if (k < 2) return;
  double gap = ceil(((double)offs[n - 1] - (double)offs[0]) / (k - 1));
  fx_affine_add_term(form, FX_ATOM_COPIES, 0, r->copies_level, 0, k, gap < 1 ? 1 : gap > 4e18 ? INT64_MAX : (int64_t)gap);
}

static fx_buf_t *buf_of(fx_row_t *r, const tir_buffer_t *b, int cap) {
  for (int i = 0; i < r->nbufs; i++)
    if (r->bufs[i].data == b->data) return &r->bufs[i];
  fx_buf_t *nb = &r->bufs[r->nbufs++];
  memset(nb, 0, sizeof *nb);
  nb->data = b->data;
  nb->order = r->nbufs - 1;
  nb->elem_bytes = tir_dtype_bytes(tir_dtype_scalar(b->dtype));
  if (nb->elem_bytes < 1) nb->elem_bytes = 1; /* handles and void: count elements */
  nb->forms = mlc_arena_alloc(r->ex->walk.arena, sizeof(fx_affine_t *) * (size_t)cap);
  return nb;
}

static void push_touched(fx_extract_t *ex, int id, const void *data, double bytes) {
  if (ex->ntouched == ex->captouched) {
    int cap = ex->captouched ? ex->captouched * 2 : 64;
    ex->touched = mlc_arena_grow(ex->walk.arena, ex->touched, (size_t)ex->ntouched, (size_t)cap,
                                 sizeof(fx_touched_t));
    ex->captouched = cap;
  }
  fx_touched_t *t = &ex->touched[ex->ntouched++];
  t->id = id;
  t->data = data;
  t->bytes = bytes;
}

static void build_buffers(fx_row_t *r, const access_list_t *acc) {
  mlc_arena_t *arena = r->ex->walk.arena;
  access_list_t *copies = NULL;
  if (r->g->ncopies > 1) {
    copies = mlc_arena_alloc(arena, sizeof(access_list_t) * (size_t)r->g->ncopies);
    for (int m = 0; m < r->g->ncopies; m++)
      copies[m] = collect_accesses(arena, r->ex->walk.stores[r->g->members[m]].store);
  }
  r->bufs = mlc_arena_alloc(arena, sizeof(fx_buf_t) * (size_t)acc->n);
  for (int j = 0; j < acc->n; j++) {
    const fx_access_t *a = &acc->items[j];
    fx_affine_t *form = mlc_arena_alloc(arena, sizeof *form);
    fx_linearize_access(form, &r->cx, a->buffer, a->indices, a->nindices);
    if (copies) add_copies_term(r, form, j, copies);
    if (j == 0) r->write_form = form;
    fx_buf_t *b = buf_of(r, a->buffer, acc->n);
    b->forms[b->nforms++] = form;
    b->read |= !a->is_write;
    b->write |= a->is_write;
    b->bytes += (double)b->elem_bytes * a->lanes * r->prod_scalar;
  }
  for (int i = 0; i < r->nbufs; i++) {
    fx_buf_t *b = &r->bufs[i];
    b->numel = mlc_arena_alloc(arena, sizeof(double) * (size_t)(r->nlevels + 1));
    for (int l = 0; l <= r->nlevels; l++) b->numel[l] = fx_unique_elems(b->forms, b->nforms, l);
    for (int l = 0; l < r->nlevels; l++)
      push_touched(r->ex, r->levels[l].id, b->data, b->numel[l] * b->elem_bytes);
  }
}

/* ------------------------------------------------------------------------ */
/* Extraction                                                                */
/* ------------------------------------------------------------------------ */

static void compute_row(fx_extract_t *ex, int group, bool is_gpu, float *out) {
  fx_row_t *r = mlc_arena_alloc(ex->walk.arena, sizeof *r);
  r->ex = ex;
  r->g = &ex->walk.groups[group];
  r->st = &ex->walk.stores[r->g->rep];
  access_list_t acc = collect_accesses(ex->walk.arena, r->st->store);
  build_nest(r, &acc);
  arith_t a = {r->arith, r->prod_scalar, r->st->binds, 0};
  count_expr(&a, r->st->store->u.store.value);
  build_buffers(r, &acc);
  memcpy(r->raw + FX_OFF_ARITH, r->arith, sizeof r->arith);
  fx_row_loop_features(r, is_gpu);
  fx_row_buffer_features(r);
  fx_row_outer_features(r);
  for (int k = 0; k < FX_DIM; k++) {
    double v = fabs(r->raw[k]);
    out[k] = isfinite(v) ? (float)log2(1.0 + v) : 0.0f;
  }
}

static int extract(fx_extract_t *ex, cm_features_t *out, const tir_func_t *lowered, bool is_gpu) {
  fx_walk(&ex->walk, lowered);
  ex->next_id = ex->walk.nloops;
  int nrows = ex->walk.ngroups > 0 ? ex->walk.ngroups : 1;
  float *rows = mlc_arena_alloc(ex->walk.arena, sizeof(float) * (size_t)nrows * CM_FEATURE_DIM);
  for (int g = 0; g < ex->walk.ngroups; g++) compute_row(ex, g, is_gpu, rows + (size_t)g * CM_FEATURE_DIM);
  out->data = mlc_malloc(sizeof(float) * (size_t)nrows * CM_FEATURE_DIM);
  if (!out->data) return mlc_error_set(MLC_ENOMEM, "cm_extract: out of memory for %d feature rows", nrows);
  memcpy(out->data, rows, sizeof(float) * (size_t)nrows * CM_FEATURE_DIM);
  out->nrows = nrows;
  return MLC_OK;
}

int cm_extract(cm_features_t *out, const tir_func_t *lowered, const mlc_target_t *target) {
  if (!out) return mlc_error_set(MLC_EINVAL, "cm_extract: no output");
  out->nrows = 0;
  out->data = NULL;
  if (!lowered || !lowered->body)
    return mlc_error_set(MLC_EINVAL, "cm_extract: %s", lowered ? "the function has no body" : "no function");
  fx_extract_t *ex = mlc_calloc(1, sizeof *ex);
  mlc_arena_t *arena = mlc_arena_new();
  if (!ex || !arena) {
    mlc_free(ex);
    mlc_arena_free(arena);
    return mlc_error_set(MLC_ENOMEM, "cm_extract: out of memory");
  }
  ex->walk.arena = arena;
  ex->walk.is_gpu = target && target->kind != MLC_TARGET_LLVM;
  jmp_buf oom;
  int rc;
  jmp_buf *prev = mlc_arena_set_oom_handler(arena, &oom);
  if (setjmp(oom) == 0) rc = extract(ex, out, lowered, ex->walk.is_gpu);
  else rc = mlc_error_set(MLC_ENOMEM, "cm_extract: out of memory extracting the features of %s",
                           lowered->name ? lowered->name : "a function");
  mlc_arena_set_oom_handler(arena, prev);
  mlc_arena_free(arena);
  mlc_free(ex);
  return rc;
}

void cm_features_free(cm_features_t *f) {
  if (!f) return;
  mlc_free(f->data);
  f->data = NULL;
  f->nrows = 0;
}
