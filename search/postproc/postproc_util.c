/*
 * postproc_util.c - program-side analyses the postprocessors share (see
 * postproc.h): the blocks of a program with the loops above each, TVM's
 * loop iterator type, annotation lookups, and the error helpers.
 */
#include "search/postproc/postproc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define PP_MAX_LOOPS 256

typedef struct {
  mlc_arena_t *a;
  MLC_VEC(pp_block_t) blocks;
  tir_stmt_t *loops[PP_MAX_LOOPS]; /* the loops above the statement being walked, */
  int nloops;                       /* outermost first; those of the enclosing */
  int base;                         /* block start at loops[base] */
  bool failed;
} collect_t;

static void collect_stmt(collect_t *c, tir_stmt_t *s, tir_block_t *parent, bool in_init);

static void collect_block(collect_t *c, tir_stmt_t *realize, tir_block_t *parent, bool in_init) {
  tir_block_t *b = realize->u.realize.block;
  int n = c->nloops - c->base;
  pp_block_t e = {realize, b, parent, in_init, n, NULL};
  e.loops = mlc_arena_memdup(c->a, c->loops + c->base, sizeof(tir_stmt_t *) * (size_t)(n ? n : 1));
  if (!e.loops || mlc_vec_push(&c->blocks, e) != MLC_OK) {
    c->failed = true;
    return;
  }
  /* loops below a block start from it; the ones above stay in place for
   * the block's later siblings */
  int saved = c->base;
  c->base = c->nloops;
  if (b->init) collect_stmt(c, b->init, b, true);
  collect_stmt(c, b->body, b, in_init);
  c->base = saved;
}

static void collect_stmt(collect_t *c, tir_stmt_t *s, tir_block_t *parent, bool in_init) {
  if (!s || c->failed) return;
  switch (s->kind) {
  case TIR_FOR:
    if (c->nloops == PP_MAX_LOOPS) {
      c->failed = true;
      return;
    }
    c->loops[c->nloops++] = s;
    collect_stmt(c, s->u.loop.body, parent, in_init);
    c->nloops--;
    return;
  case TIR_BLOCK_REALIZE: collect_block(c, s, parent, in_init); return;
  case TIR_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) collect_stmt(c, s->u.seq.stmts[i], parent, in_init);
    return;
  case TIR_IF:
    collect_stmt(c, s->u.if_.then_case, parent, in_init);
    collect_stmt(c, s->u.if_.else_case, parent, in_init);
    return;
  case TIR_LET: collect_stmt(c, s->u.let.body, parent, in_init); return;
  case TIR_ATTR: collect_stmt(c, s->u.attr.body, parent, in_init); return;
  case TIR_ASSERT: collect_stmt(c, s->u.assert_.body, parent, in_init); return;
  case TIR_ALLOCATE: collect_stmt(c, s->u.allocate.body, parent, in_init); return;
  default: return;
  }
}

int pp_collect_blocks(mlc_arena_t *a, const tir_func_t *f, pp_block_t **out, int *n) {
  collect_t c = {.a = a};
  *out = NULL;
  *n = 0;
  collect_stmt(&c, f->body, NULL, false);
  if (c.failed) {
    mlc_vec_free(&c.blocks);
    return mlc_error_set(MLC_ENOMEM, "postproc: out of memory (or loops nested deeper than %d)", PP_MAX_LOOPS);
  }
  if (c.blocks.len) {
    *out = mlc_arena_memdup(a, c.blocks.data, sizeof(pp_block_t) * c.blocks.len);
    if (!*out) {
      mlc_vec_free(&c.blocks);
      return mlc_error_set(MLC_ENOMEM, "postproc: out of memory");
    }
  }
  *n = (int)c.blocks.len;
  mlc_vec_free(&c.blocks);
  return MLC_OK;
}

pp_block_t *pp_find_block(pp_block_t *blocks, int n, uint32_t uid) {
  for (int i = 0; i < n; i++)
    if (blocks[i].block->uid == uid) return &blocks[i];
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Loop iterator type                                                        */
/* ------------------------------------------------------------------------ */

typedef struct {
  const tir_var_t *var;
  int nspatial, nreduce, nother;
} iter_use_t;

static bool iter_use_block(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  iter_use_t *u = v->payload;
  for (int i = 0; i < b->niter_vars && i < realize->u.realize.n; i++) {
    if (!tir_expr_uses_var(realize->u.realize.iter_values[i], u->var)) continue;
    switch (b->iter_vars[i].type) {
    case TIR_ITER_SPATIAL: u->nspatial++; break;
    case TIR_ITER_REDUCE: u->nreduce++; break;
    default: u->nother++; break;
    }
  }
  return false; /* blocks nested deeper are the first block's business */
}

tir_iter_type_t pp_loop_iter_type(const tir_stmt_t *loop) {
  iter_use_t u = {loop->u.loop.var, 0, 0, 0};
  tir_visitor_t v = {.block = iter_use_block, .payload = &u};
  tir_visit_stmt(&v, loop->u.loop.body);
  if (u.nother || (u.nspatial && u.nreduce)) return TIR_ITER_OPAQUE;
  return u.nreduce ? TIR_ITER_REDUCE : TIR_ITER_SPATIAL;
}

bool pp_loop_single_child(const tir_stmt_t *loop) {
  const tir_stmt_t *body = loop->u.loop.body;
  return body->kind != TIR_SEQ || body->u.seq.n == 1;
}

int64_t pp_linear_coef(const tir_expr_t *e, const tir_var_t *v) {
  int64_t k, x, y;
  switch (e->kind) {
  case TIR_VAR: return e == v ? 1 : 0;
  case TIR_ADD:
  case TIR_SUB:
    x = pp_linear_coef(e->u.bin.a, v);
    y = pp_linear_coef(e->u.bin.b, v);
    if (x == PP_COEF_UNKNOWN || y == PP_COEF_UNKNOWN) return PP_COEF_UNKNOWN;
    return e->kind == TIR_ADD ? x + y : x - y;
  case TIR_MUL:
    if (tir_as_int(e->u.bin.b, &k)) x = pp_linear_coef(e->u.bin.a, v);
    else if (tir_as_int(e->u.bin.a, &k)) x = pp_linear_coef(e->u.bin.b, v);
    else return tir_expr_uses_var((tir_expr_t *)e, v) ? PP_COEF_UNKNOWN : 0;
    return x == PP_COEF_UNKNOWN ? x : x * k;
  default: return tir_expr_uses_var((tir_expr_t *)e, v) ? PP_COEF_UNKNOWN : 0;
  }
}

bool pp_block_ann_int(const tir_block_t *b, const char *key, int64_t *out) {
  tir_expr_t *v = tir_annot_get(b->annots, b->nannots, key);
  return v && tir_as_int(v, out);
}

bool pp_block_ann_str(const tir_block_t *b, const char *key, const char **out) {
  tir_expr_t *v = tir_annot_get(b->annots, b->nannots, key);
  if (!v || v->kind != TIR_STRING_IMM) return false;
  *out = v->u.str_value;
  return true;
}

int pp_strip_index_map(mlc_arena_t *a, int ndim, int axis, int64_t w, sch_index_map_t *map) {
  map->nsrc = ndim;
  map->ndst = ndim + 1;
  map->src = mlc_arena_alloc(a, sizeof(tir_var_t *) * (size_t)ndim);
  map->dst = mlc_arena_alloc(a, sizeof(tir_expr_t *) * (size_t)(ndim + 1));
  if (!map->src || !map->dst) return mlc_error_set(MLC_ENOMEM, "postproc: out of memory");
  for (int d = 0; d < ndim; d++) map->src[d] = tir_var(a, mlc_arena_printf(a, "x%d", d), tir_dt_INT32());
  tir_var_t *x = map->src[axis];
  int n = 0;
  map->dst[n++] = tir_binary(a, TIR_FLOOR_DIV, x, tir_i32(a, w));
  for (int d = 0; d < ndim; d++)
    if (d != axis) map->dst[n++] = map->src[d];
  map->dst[n] = tir_binary(a, TIR_FLOOR_MOD, x, tir_i32(a, w));
  return mlc_arena_failed(a) ? mlc_error_set(MLC_ENOMEM, "postproc: out of memory") : MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

int pp_fail(const char *postproc, const char *fmt, ...) {
  char what[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return mlc_error_set(MLC_ESCHEDULE, "%s: %s", postproc, what);
}

int pp_fail_sch(const char *postproc, const sch_t *sch, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return mlc_error_set(MLC_ESCHEDULE, "%s: %s: %s", postproc, what, sch_error(sch));
}
