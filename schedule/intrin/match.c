/*
 * match.c - tensorize's two halves on the intrinsic side: matching a block
 * against an intrinsic's description (TVM's TensorizeComparator) and
 * instantiating the implementation in its place.
 *
 * Matching walks the block (lhs) and the description's root block (rhs)
 * together. The root's regions fix, for each desc buffer, the program buffer
 * it stands for (same dtype and scope) and the base: the minimums of that
 * buffer's region in the block, with leading dimensions the description does
 * not have required to be of extent 1. Below, loops and block iter vars are
 * matched by position (lhs variable -> rhs variable), extents must be equal,
 * and every buffer index is compared as `lhs - base == rhs` after renaming,
 * proved by the simplifier with the description's loop ranges bound. So a
 * 16x4 tile of a matmul matches a 16x4 description wherever it sits.
 *
 * Instantiation deep-copies the impl's body with fresh variables and blocks
 * and binds each impl parameter buffer to its tile with T.match_buffer (the
 * tile's region: the base, extents from the impl's root regions).
 */
#include "schedule/intrin/intrin.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Matching                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct {
  mlc_arena_t *a;
  tir_analyzer_t *an;       /* rhs (description) variables bound to their ranges */
  tir_var_map_t vars;       /* lhs variable -> rhs variable */
  const tir_func_t *desc;
  sch_intrin_match_t *m;
  tir_buffer_t *rhs_buf[SCH_INTRIN_MAX_BUFFERS]; /* desc buffers seen, parallel to lhs_buf */
  tir_buffer_t *lhs_buf[SCH_INTRIN_MAX_BUFFERS];
  tir_expr_t **base[SCH_INTRIN_MAX_BUFFERS];
  int nbase[SCH_INTRIN_MAX_BUFFERS];
  int nbufs;
  char *why;
  size_t why_len;
} matcher_t;

static bool mismatch(matcher_t *mt, const char *fmt, const char *arg) {
  if (mt->why && !mt->why[0]) snprintf(mt->why, mt->why_len, fmt, arg ? arg : "");
  return false;
}

static bool match_expr(matcher_t *mt, tir_expr_t *l, tir_expr_t *r);
static bool match_stmt(matcher_t *mt, tir_stmt_t *l, tir_stmt_t *r);

/* Pairs lhs variable l with rhs variable r (first time) or checks the pair. */
static bool def_equal(matcher_t *mt, tir_var_t *l, tir_var_t *r) {
  tir_expr_t *have = tir_var_map_get(&mt->vars, l);
  if (have) return have == r || mismatch(mt, "variable %s is matched twice", l->u.var.name);
  tir_var_map_set(mt->a, &mt->vars, l, r);
  return true;
}

/* lhs - lhs_base == rhs, for expressions over lhs variables (renamed to rhs
 * ones) and rhs variables; lhs_base may be NULL (0). */
static bool proves_equal(matcher_t *mt, tir_expr_t *l, tir_expr_t *lhs_base, tir_expr_t *r) {
  tir_expr_t *x = tir_substitute_expr(mt->a, l, &mt->vars);
  if (lhs_base) x = tir_binary(mt->a, TIR_SUB, x, tir_substitute_expr(mt->a, lhs_base, &mt->vars));
  if (!tir_dtype_eq(x->dtype, r->dtype)) x = tir_cast(mt->a, r->dtype, x);
  tir_expr_t *d = tir_simplify(mt->an, tir_binary(mt->a, TIR_SUB, x, r));
  return tir_is_const_int(d, 0);
}

/* The lhs buffer a desc buffer stands for: set on first sight (same dtype and
 * scope required), checked afterwards. Returns the slot or -1. */
static int match_buffer(matcher_t *mt, tir_buffer_t *l, tir_buffer_t *r) {
  for (int i = 0; i < mt->nbufs; i++) {
    if (mt->rhs_buf[i] != r) continue;
    if (mt->lhs_buf[i] == l) return i;
    mismatch(mt, "description buffer %s stands for two buffers", r->name);
    return -1;
  }
  if (!tir_dtype_eq(l->dtype, r->dtype) || strcmp(l->scope, r->scope) != 0) {
    mismatch(mt, "buffer %s differs in dtype or scope from the description's", l->name);
    return -1;
  }
  if (mt->nbufs == SCH_INTRIN_MAX_BUFFERS) {
    mismatch(mt, "too many buffers%s", NULL);
    return -1;
  }
  mt->rhs_buf[mt->nbufs] = r;
  mt->lhs_buf[mt->nbufs] = l;
  mt->base[mt->nbufs] = NULL;
  return mt->nbufs++;
}

/* A region of the scope block: the first one of a buffer sets its base. */
static bool match_scope_region(matcher_t *mt, const tir_region_t *l, const tir_region_t *r) {
  int k = match_buffer(mt, l->buffer, r->buffer);
  if (k < 0) return false;
  int off = l->ndim - r->ndim;
  if (off < 0) return mismatch(mt, "buffer %s has fewer dimensions than the description's", l->buffer->name);
  bool first = mt->base[k] == NULL;
  if (first) {
    mt->base[k] = mlc_arena_alloc(mt->a, sizeof(tir_expr_t *) * (size_t)(l->ndim ? l->ndim : 1));
    mt->nbase[k] = l->ndim;
  }
  for (int d = 0; d < l->ndim; d++) {
    const tir_range_t *lr = &l->ranges[d];
    if (first) mt->base[k][d] = lr->min;
    if (d < off) {
      if (!tir_is_const_int(tir_simplify(mt->an, lr->extent), 1))
        return mismatch(mt, "region of %s has a non-unit extent in a dimension the description lacks",
                        l->buffer->name);
      if (!first && !proves_equal(mt, lr->min, mt->base[k][d], tir_int(mt->a, lr->min->dtype, 0)))
        return mismatch(mt, "regions of %s start at different places", l->buffer->name);
      continue;
    }
    const tir_range_t *rr = &r->ranges[d - off];
    if (!proves_equal(mt, lr->extent, NULL, rr->extent))
      return mismatch(mt, "region of %s differs in extent from the description's", l->buffer->name);
    if (!first && !proves_equal(mt, lr->min, mt->base[k][d], rr->min))
      return mismatch(mt, "region of %s differs in position from the description's", l->buffer->name);
  }
  return true;
}

/* A region or access below the scope block: buffer already based. */
static int based_buffer(matcher_t *mt, tir_buffer_t *l, tir_buffer_t *r) {
  int k = match_buffer(mt, l, r);
  if (k >= 0 && !mt->base[k]) {
    mismatch(mt, "buffer %s is accessed but not in the block's regions", l->name);
    return -1;
  }
  return k;
}

static bool match_inner_region(matcher_t *mt, const tir_region_t *l, const tir_region_t *r) {
  int k = based_buffer(mt, l->buffer, r->buffer);
  if (k < 0) return false;
  int off = l->ndim - r->ndim;
  if (off < 0 || l->ndim != mt->nbase[k]) return mismatch(mt, "region of %s differs in rank", l->buffer->name);
  for (int d = 0; d < l->ndim; d++) {
    tir_expr_t *rmin = d < off ? tir_int(mt->a, l->ranges[d].min->dtype, 0) : r->ranges[d - off].min;
    tir_expr_t *rext = d < off ? tir_int(mt->a, l->ranges[d].extent->dtype, 1) : r->ranges[d - off].extent;
    if (!proves_equal(mt, l->ranges[d].extent, NULL, rext) || !proves_equal(mt, l->ranges[d].min, mt->base[k][d], rmin))
      return mismatch(mt, "a region of %s differs from the description's", l->buffer->name);
  }
  return true;
}

static bool match_access(matcher_t *mt, tir_buffer_t *lb, tir_expr_t **li, int ln, tir_buffer_t *rb,
                         tir_expr_t **ri, int rn) {
  int k = based_buffer(mt, lb, rb);
  if (k < 0) return false;
  int off = ln - rn;
  if (off < 0 || ln != mt->nbase[k]) return mismatch(mt, "an access to %s differs in rank", lb->name);
  for (int d = 0; d < ln; d++) {
    tir_expr_t *r = d < off ? tir_int(mt->a, li[d]->dtype, 0) : ri[d - off];
    if (!proves_equal(mt, li[d], mt->base[k][d], r))
      return mismatch(mt, "an index of %s differs from the description's", lb->name);
  }
  return true;
}

static bool match_exprs(matcher_t *mt, tir_expr_t **l, tir_expr_t **r, int n) {
  for (int i = 0; i < n; i++)
    if (!match_expr(mt, l[i], r[i])) return false;
  return true;
}

static bool match_expr(matcher_t *mt, tir_expr_t *l, tir_expr_t *r) {
  if (l == r) return true;
  if (l->kind != r->kind || l->dtype.code != r->dtype.code || l->dtype.lanes != r->dtype.lanes)
    return mismatch(mt, "expressions differ (%s)", tir_expr_kind_name(l->kind));
  switch (tir_expr_kind_shape(l->kind)) {
  case TIR_SHAPE_IMM:
    if (l->kind == TIR_INT_IMM && l->u.int_value == r->u.int_value) return true;
    if (l->kind == TIR_FLOAT_IMM && l->u.float_value == r->u.float_value) return true;
    if (l->kind == TIR_STRING_IMM && strcmp(l->u.str_value, r->u.str_value) == 0) return true;
    return mismatch(mt, "constants differ%s", NULL);
  case TIR_SHAPE_LEAF:
    return tir_var_map_get(&mt->vars, l) == r || mismatch(mt, "variable %s differs", l->u.var.name);
  case TIR_SHAPE_BINARY: return match_expr(mt, l->u.bin.a, r->u.bin.a) && match_expr(mt, l->u.bin.b, r->u.bin.b);
  case TIR_SHAPE_UNARY: return match_expr(mt, l->u.un.a, r->u.un.a);
  case TIR_SHAPE_SELECT:
    return match_expr(mt, l->u.select.cond, r->u.select.cond) && match_expr(mt, l->u.select.t, r->u.select.t) &&
           match_expr(mt, l->u.select.f, r->u.select.f);
  case TIR_SHAPE_LOAD:
    return match_access(mt, l->u.load.buffer, l->u.load.indices, l->u.load.nindices, r->u.load.buffer,
                        r->u.load.indices, r->u.load.nindices);
  case TIR_SHAPE_RAMP:
    return l->u.ramp.lanes == r->u.ramp.lanes && match_expr(mt, l->u.ramp.base, r->u.ramp.base) &&
           match_expr(mt, l->u.ramp.stride, r->u.ramp.stride);
  case TIR_SHAPE_BROADCAST:
    return l->u.broadcast.lanes == r->u.broadcast.lanes && match_expr(mt, l->u.broadcast.value, r->u.broadcast.value);
  case TIR_SHAPE_CALL:
    if (l->u.call.op != r->u.call.op || l->u.call.nargs != r->u.call.nargs)
      return mismatch(mt, "calls differ (%s)", tir_op_name(l->u.call.op));
    return match_exprs(mt, l->u.call.args, r->u.call.args, l->u.call.nargs);
  }
  return false;
}

static bool same_str(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool match_annots(matcher_t *mt, const tir_annot_t *l, int nl, const tir_annot_t *r, int nr) {
  if (nl != nr) return mismatch(mt, "annotations differ%s", NULL);
  for (int i = 0; i < nl; i++)
    if (strcmp(l[i].key, r[i].key) != 0 || !match_expr(mt, l[i].value, r[i].value))
      return mismatch(mt, "annotation %s differs", l[i].key);
  return true;
}

static bool match_loop(matcher_t *mt, tir_stmt_t *l, tir_stmt_t *r) {
  if (!def_equal(mt, l->u.loop.var, r->u.loop.var)) return false;
  if (!match_expr(mt, l->u.loop.min, r->u.loop.min) || !proves_equal(mt, l->u.loop.extent, NULL, r->u.loop.extent))
    return mismatch(mt, "loop %s differs in range from the description's", l->u.loop.var->u.var.name);
  if (l->u.loop.kind != r->u.loop.kind || !same_str(l->u.loop.thread_tag, r->u.loop.thread_tag))
    return mismatch(mt, "loop %s differs in kind from the description's", l->u.loop.var->u.var.name);
  if (!match_annots(mt, l->u.loop.annots, l->u.loop.nannots, r->u.loop.annots, r->u.loop.nannots)) return false;
  tir_analyzer_bind(mt->an, r->u.loop.var, r->u.loop.min, r->u.loop.extent);
  return match_stmt(mt, l->u.loop.body, r->u.loop.body);
}

static bool match_regions(matcher_t *mt, const tir_region_t *l, int nl, const tir_region_t *r, int nr, bool scope) {
  if (nl != nr) return mismatch(mt, "the number of read or written regions differs%s", NULL);
  for (int i = 0; i < nl; i++)
    if (!(scope ? match_scope_region(mt, &l[i], &r[i]) : match_inner_region(mt, &l[i], &r[i]))) return false;
  return true;
}

static bool match_block(matcher_t *mt, tir_stmt_t *l, tir_stmt_t *r, bool scope) {
  tir_block_t *lb = l->u.realize.block, *rb = r->u.realize.block;
  if (!scope) {
    if (l->u.realize.n != r->u.realize.n || lb->niter_vars != rb->niter_vars)
      return mismatch(mt, "block %s differs in iter vars from the description's", lb->name);
    for (int i = 0; i < lb->niter_vars; i++) {
      if (lb->iter_vars[i].type != rb->iter_vars[i].type ||
          !def_equal(mt, lb->iter_vars[i].var, rb->iter_vars[i].var))
        return mismatch(mt, "block %s differs in iter vars from the description's", lb->name);
      tir_analyzer_bind(mt->an, rb->iter_vars[i].var, rb->iter_vars[i].dom.min, rb->iter_vars[i].dom.extent);
    }
    if (!match_exprs(mt, l->u.realize.iter_values, r->u.realize.iter_values, l->u.realize.n)) return false;
    if (lb->nalloc_buffers || rb->nalloc_buffers || (lb->init != NULL) != (rb->init != NULL))
      return mismatch(mt, "block %s differs in allocations or init from the description's", lb->name);
  }
  if (!match_expr(mt, l->u.realize.predicate, r->u.realize.predicate)) return false;
  if (!match_regions(mt, lb->writes, lb->nwrites, rb->writes, rb->nwrites, scope)) return false;
  if (!match_regions(mt, lb->reads, lb->nreads, rb->reads, rb->nreads, scope)) return false;
  if (!scope && lb->init && !match_stmt(mt, lb->init, rb->init)) return false;
  return match_stmt(mt, lb->body, rb->body);
}

static bool match_stmt(matcher_t *mt, tir_stmt_t *l, tir_stmt_t *r) {
  if (l->kind != r->kind) return mismatch(mt, "the loop nest differs from the description's (%s)", tir_stmt_kind_name(l->kind));
  switch (l->kind) {
  case TIR_FOR: return match_loop(mt, l, r);
  case TIR_BLOCK_REALIZE: return match_block(mt, l, r, false);
  case TIR_SEQ:
    if (l->u.seq.n != r->u.seq.n) return mismatch(mt, "statement counts differ%s", NULL);
    for (int i = 0; i < l->u.seq.n; i++)
      if (!match_stmt(mt, l->u.seq.stmts[i], r->u.seq.stmts[i])) return false;
    return true;
  case TIR_BUFFER_STORE:
    return match_access(mt, l->u.store.buffer, l->u.store.indices, l->u.store.nindices, r->u.store.buffer,
                        r->u.store.indices, r->u.store.nindices) &&
           match_expr(mt, l->u.store.value, r->u.store.value);
  case TIR_EVALUATE: return match_expr(mt, l->u.evaluate.value, r->u.evaluate.value);
  case TIR_IF:
    if ((l->u.if_.else_case != NULL) != (r->u.if_.else_case != NULL)) return mismatch(mt, "if statements differ%s", NULL);
    return match_expr(mt, l->u.if_.cond, r->u.if_.cond) && match_stmt(mt, l->u.if_.then_case, r->u.if_.then_case) &&
           (!l->u.if_.else_case || match_stmt(mt, l->u.if_.else_case, r->u.if_.else_case));
  case TIR_LET:
    return match_expr(mt, l->u.let.value, r->u.let.value) && def_equal(mt, l->u.let.var, r->u.let.var) &&
           match_stmt(mt, l->u.let.body, r->u.let.body);
  default: return mismatch(mt, "a %s statement cannot be matched", tir_stmt_kind_name(l->kind));
  }
}

bool sch_intrin_match(sch_intrin_match_t *m, mlc_arena_t *a, const tir_stmt_t *realize,
                      const sch_intrin_t *intrin, char *why, size_t why_len) {
  matcher_t mt = {0};
  mt.a = a;
  mt.an = tir_analyzer_new(a);
  mt.desc = intrin->desc;
  mt.m = m;
  mt.why = why;
  mt.why_len = why_len;
  if (why && why_len) why[0] = '\0';
  if (!mt.an) return mismatch(&mt, "out of memory%s", NULL);
  if (!match_block(&mt, (tir_stmt_t *)realize, intrin->desc->body, true)) return false;
  m->nbuffers = intrin->desc->nparams;
  for (int p = 0; p < intrin->desc->nparams; p++) {
    tir_buffer_t *db = intrin->desc->buffer_map[p];
    int k = -1;
    for (int i = 0; i < mt.nbufs; i++)
      if (mt.rhs_buf[i] == db) k = i;
    if (k < 0 || !mt.base[k]) return mismatch(&mt, "description buffer %s is not used", db->name);
    m->cur[p] = mt.lhs_buf[k];
    m->base[p] = mt.base[k];
    m->nbase[p] = mt.nbase[k];
  }
  return true;
}

/* ------------------------------------------------------------------------ */
/* Instantiation                                                             */
/* ------------------------------------------------------------------------ */

/* A deep copy of the impl's body: every definition (loop, iter and let
 * variables, buffers, blocks) is fresh, so two tensorized tiles never share
 * a variable, and every node lives in the schedule's arena. */
typedef struct {
  sch_t *sch;
  tir_var_map_t vars;
  int nbufs, capbufs;
  tir_buffer_t **from, **to;
} copier_t;

static tir_var_t *fresh_var(copier_t *c, tir_var_t *v) {
  tir_var_t *nv = tir_var(sch_arena(c->sch), v->u.var.name, v->dtype);
  tir_var_map_set(sch_arena(c->sch), &c->vars, v, nv);
  return nv;
}

static tir_expr_t *copy_expr_hook(tir_mutator_t *mu, tir_expr_t *e) {
  copier_t *c = mu->payload;
  if (e->kind == TIR_VAR) {
    tir_expr_t *to = tir_var_map_get(&c->vars, e);
    return to ? to : e;
  }
  tir_expr_t *out = tir_mutate_expr_children(mu, e);
  return out == e ? tir_expr_copy(mu->arena, e) : out;
}

static void map_buffer(copier_t *c, tir_buffer_t *from, tir_buffer_t *to) {
  if (c->nbufs == c->capbufs) {
    int cap = c->capbufs ? c->capbufs * 2 : 8;
    c->from = mlc_arena_grow(sch_arena(c->sch), c->from, (size_t)c->nbufs, (size_t)cap, sizeof(*c->from));
    c->to = mlc_arena_grow(sch_arena(c->sch), c->to, (size_t)c->nbufs, (size_t)cap, sizeof(*c->to));
    c->capbufs = cap;
  }
  c->from[c->nbufs] = from;
  c->to[c->nbufs++] = to;
}

/* A fresh buffer like b: new data variable; variables in its strides and
 * elem_offset (symbolic, bound per match) fresh as well. */
static tir_buffer_t *fresh_buffer(copier_t *c, tir_mutator_t *mu, tir_buffer_t *b) {
  mlc_arena_t *a = sch_arena(c->sch);
  tir_buffer_t *nb = tir_buffer_copy(a, b);
  nb->data = fresh_var(c, b->data);
  nb->shape = mlc_arena_alloc(a, sizeof(tir_expr_t *) * (size_t)(b->ndim ? b->ndim : 1));
  for (int d = 0; d < b->ndim; d++) nb->shape[d] = tir_mutate_expr(mu, b->shape[d]);
  if (b->strides) {
    nb->strides = mlc_arena_alloc(a, sizeof(tir_expr_t *) * (size_t)b->ndim);
    for (int d = 0; d < b->ndim; d++) {
      tir_expr_t *s = b->strides[d];
      if (s->kind == TIR_VAR && !tir_var_map_get(&c->vars, s)) fresh_var(c, s);
      nb->strides[d] = tir_mutate_expr(mu, s);
    }
  }
  if (b->elem_offset) {
    if (b->elem_offset->kind == TIR_VAR && !tir_var_map_get(&c->vars, b->elem_offset)) fresh_var(c, b->elem_offset);
    nb->elem_offset = tir_mutate_expr(mu, b->elem_offset);
  }
  map_buffer(c, b, nb);
  return nb;
}

static tir_buffer_t *copy_buffer_hook(tir_mutator_t *mu, tir_buffer_t *b) {
  copier_t *c = mu->payload;
  for (int i = 0; i < c->nbufs; i++)
    if (c->from[i] == b) return c->to[i];
  return fresh_buffer(c, mu, b);
}

static tir_stmt_t *copy_stmt_hook(tir_mutator_t *mu, tir_stmt_t *s) {
  copier_t *c = mu->payload;
  mlc_arena_t *a = mu->arena;
  tir_var_t *nv = NULL;
  tir_var_t **ivs = NULL;
  if (s->kind == TIR_FOR) nv = fresh_var(c, s->u.loop.var);
  if (s->kind == TIR_LET) nv = fresh_var(c, s->u.let.var);
  if (s->kind == TIR_BLOCK_REALIZE) {
    tir_block_t *b = s->u.realize.block;
    ivs = mlc_arena_alloc(a, sizeof(*ivs) * (size_t)(b->niter_vars + 1));
    for (int i = 0; i < b->niter_vars; i++) ivs[i] = fresh_var(c, b->iter_vars[i].var);
  }
  tir_stmt_t *out = tir_mutate_stmt_children(mu, s);
  if (out == s) out = tir_stmt_copy(a, s);
  if (s->kind == TIR_FOR) {
    out->u.loop.var = nv;
    out->u.loop.uid = sch_new_uid(c->sch);
  } else if (s->kind == TIR_LET) {
    out->u.let.var = nv;
  } else if (s->kind == TIR_BLOCK_REALIZE) {
    tir_block_t *b = tir_block_copy(a, out->u.realize.block);
    if (b->niter_vars > 0)
      b->iter_vars = mlc_arena_memdup(a, b->iter_vars, sizeof(*b->iter_vars) * (size_t)b->niter_vars);
    for (int i = 0; i < b->niter_vars; i++) b->iter_vars[i].var = ivs[i];
    b->uid = sch_new_uid(c->sch);
    out->u.realize.block = b;
  }
  return out;
}

/* The region of the impl's root block that covers impl buffer b. */
static const tir_region_t *impl_region(const tir_block_t *root, const tir_buffer_t *b) {
  for (int i = 0; i < root->nreads; i++)
    if (root->reads[i].buffer == b) return &root->reads[i];
  for (int i = 0; i < root->nwrites; i++)
    if (root->writes[i].buffer == b) return &root->writes[i];
  return NULL;
}

/* T.match_buffer of impl parameter p to its tile of the program buffer. */
static tir_match_buffer_t tile_match(copier_t *c, tir_mutator_t *mu, const sch_intrin_t *intrin,
                                     const sch_intrin_match_t *m, int p) {
  mlc_arena_t *a = sch_arena(c->sch);
  tir_buffer_t *ib = intrin->impl->buffer_map[p];
  const tir_region_t *r = impl_region(intrin->impl->body->u.realize.block, ib);
  int nb = m->nbase[p], off = nb - (r ? r->ndim : ib->ndim);
  tir_match_buffer_t mb;
  mb.buffer = fresh_buffer(c, mu, ib);
  mb.source.buffer = m->cur[p];
  mb.source.ndim = nb;
  mb.source.ranges = mlc_arena_alloc(a, sizeof(tir_range_t) * (size_t)(nb ? nb : 1));
  for (int d = 0; d < nb; d++) {
    tir_expr_t *min = m->base[p][d];
    tir_expr_t *ext = d < off ? tir_int(a, min->dtype, 1) : r ? r->ranges[d - off].extent : ib->shape[d - off];
    if (!tir_dtype_eq(ext->dtype, min->dtype)) ext = tir_cast(a, min->dtype, ext);
    mb.source.ranges[d].min = min;
    mb.source.ranges[d].extent = ext;
  }
  return mb;
}

static tir_annot_t *merge_annots(mlc_arena_t *a, const tir_block_t *b, const tir_block_t *impl, int *n) {
  tir_annot_t *out = mlc_arena_alloc(a, sizeof(*out) * (size_t)(b->nannots + impl->nannots + 1));
  int k = 0;
  for (int i = 0; i < b->nannots; i++) out[k++] = b->annots[i];
  for (int i = 0; i < impl->nannots; i++)
    if (!tir_annot_get(b->annots, b->nannots, impl->annots[i].key)) out[k++] = impl->annots[i];
  *n = k;
  return out;
}

tir_stmt_t *sch_intrin_instantiate(sch_t *sch, const tir_stmt_t *realize, const sch_intrin_t *intrin,
                                   const sch_intrin_match_t *m) {
  mlc_arena_t *a = sch_arena(sch);
  copier_t c = {.sch = sch};
  tir_mutator_t mu = {.arena = a, .expr = copy_expr_hook, .stmt = copy_stmt_hook, .buffer = copy_buffer_hook,
                      .payload = &c};
  const tir_func_t *impl = intrin->impl;
  tir_block_t *b = tir_block_copy(a, realize->u.realize.block);
  b->nmatch_buffers = impl->nparams;
  b->match_buffers = mlc_arena_alloc(a, sizeof(tir_match_buffer_t) * (size_t)(impl->nparams + 1));
  for (int p = 0; p < impl->nparams; p++) b->match_buffers[p] = tile_match(&c, &mu, intrin, m, p);
  tir_block_t *impl_root = impl->body->u.realize.block;
  b->body = tir_mutate_stmt(&mu, impl_root->body);
  b->annots = merge_annots(a, b, impl_root, &b->nannots);
  tir_stmt_t *out = tir_stmt_copy(a, realize);
  out->u.realize.block = b;
  return out;
}
