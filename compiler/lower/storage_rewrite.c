/*
 * storage_rewrite.c - the "storage-rewrite" pass (TVM's StorageRewrite,
 * simplified to one linear scan per statement list).
 *
 * After compaction a kernel often holds several small scratch buffers that
 * are never alive at the same time (one cache per stage). Within each
 * statement list (a function body, a loop body, a branch) this pass looks at
 * the allocations declared along it: the list is read as a sequence of
 * statements, ALLOCATE and nested sequences being transparent, and each
 * allocation lives from the first statement that touches it to the last.
 * Scanning allocations by their first use, one whose buffer is 1-D with a
 * constant size takes over the storage of an earlier one of the same scope
 * and dtype that is no longer alive (the best fitting size; the shared
 * buffer grows to the larger of the two). When anything was shared, the
 * list's allocations are all declared at its head, one per storage, and
 * accesses to a merged buffer use the storage's buffer with the same index.
 *
 * Buffers whose data pointer is used other than by loads and stores are
 * never shared. A fresh allocation's contents are undefined (the
 * interpreter poisons them), so handing a later allocation the leftovers of
 * an earlier one changes no defined result.
 */
#include "compiler/lower/storage_rewrite.h"

#include <stdlib.h>
#include <string.h>

#include "compiler/lower/lower_util.h"

typedef struct {
  tir_buffer_t *buf;
  int first, last; /* statement indices; -1 when unused */
  int64_t size;    /* elements; -1 when not constant or not mergeable */
  int storage;
} alloc_t;

typedef struct {
  tir_buffer_t *buf; /* the buffer all its allocations use */
  int64_t size;
  int last;
} storage_t;

typedef struct {
  mlc_arena_t *a;
  int nunits, capunits;
  tir_stmt_t **units;
  int nallocs, capallocs;
  alloc_t *allocs;
} chain_t;

/* ------------------------------------------------------------------------ */
/* Reading a statement list                                                  */
/* ------------------------------------------------------------------------ */

static void add_unit(chain_t *c, tir_stmt_t *s) {
  if (c->nunits == c->capunits) {
    int cap = c->capunits ? c->capunits * 2 : 8;
    c->units = mlc_arena_grow(c->a, c->units, (size_t)c->nunits, (size_t)cap, sizeof(*c->units));
    c->capunits = cap;
  }
  c->units[c->nunits++] = s;
}

static void add_alloc(chain_t *c, tir_buffer_t *b) {
  if (c->nallocs == c->capallocs) {
    int cap = c->capallocs ? c->capallocs * 2 : 4;
    c->allocs = mlc_arena_grow(c->a, c->allocs, (size_t)c->nallocs, (size_t)cap, sizeof(*c->allocs));
    c->capallocs = cap;
  }
  c->allocs[c->nallocs++] = (alloc_t){b, -1, -1, -1, -1};
}

static void read_chain(chain_t *c, tir_stmt_t *s) {
  if (s->kind == TIR_ALLOCATE) {
    add_alloc(c, s->u.allocate.buffer);
    read_chain(c, s->u.allocate.body);
  } else if (s->kind == TIR_SEQ) {
    for (int i = 0; i < s->u.seq.n; i++) read_chain(c, s->u.seq.stmts[i]);
  } else {
    add_unit(c, s);
  }
}

typedef struct {
  tir_visitor_t base;
  const tir_var_t *data;
  bool found;
} opaque_t;

static bool opaque_expr(tir_visitor_t *v, tir_expr_t *e) {
  opaque_t *o = (opaque_t *)v;
  if (e->kind == TIR_VAR && e == o->data) o->found = true;
  return !o->found;
}

static bool opaque_stmt(tir_visitor_t *v, tir_stmt_t *s) {
  opaque_t *o = (opaque_t *)v;
  if (s->kind == TIR_ATTR && s->u.attr.node == o->data) o->found = true;
  return !o->found;
}

/* The buffer's size when it may share storage, else -1. */
static int64_t mergeable_size(chain_t *c, const tir_buffer_t *b) {
  int64_t n = b->ndim == 1 && !b->strides && !b->elem_offset ? lower_const_or_neg(b->shape[0]) : -1;
  if (n <= 0) return -1;
  opaque_t o = {{.expr = opaque_expr, .stmt = opaque_stmt}, b->data, false};
  for (int i = 0; i < c->nunits && !o.found; i++) tir_visit_stmt(&o.base, c->units[i]);
  return o.found ? -1 : n;
}

static void live_ranges(chain_t *c) {
  for (int k = 0; k < c->nallocs; k++) {
    alloc_t *al = &c->allocs[k];
    for (int i = 0; i < c->nunits; i++) {
      if (!lower_stmt_touches(c->units[i], al->buf)) continue;
      if (al->first < 0) al->first = i;
      al->last = i;
    }
    al->size = mergeable_size(c, al->buf);
  }
}

/* ------------------------------------------------------------------------ */
/* Planning                                                                  */
/* ------------------------------------------------------------------------ */

static int by_first_use(const void *x, const void *y) {
  const alloc_t *a = *(alloc_t *const *)x, *b = *(alloc_t *const *)y;
  if (a->first != b->first) return a->first < b->first ? -1 : 1;
  return a < b ? -1 : a > b;
}

/* A dead storage of the same scope and dtype, the size closest to al's. */
static int best_free(const storage_t *st, int n, const alloc_t *al) {
  int best = -1;
  int64_t best_diff = INT64_MAX;
  for (int i = 0; i < n; i++) {
    const tir_buffer_t *b = st[i].buf;
    if (st[i].size < 0 || st[i].last >= al->first || !tir_dtype_eq(b->dtype, al->buf->dtype) ||
        strcmp(b->scope, al->buf->scope) != 0)
      continue;
    int64_t diff = st[i].size > al->size ? st[i].size - al->size : al->size - st[i].size;
    if (diff < best_diff) {
      best = i;
      best_diff = diff;
    }
  }
  return best;
}

/* Assigns storages; returns how many, *merged whether any is shared. */
static int plan(chain_t *c, storage_t *st, bool *merged) {
  alloc_t **order = mlc_arena_alloc(c->a, sizeof(*order) * (size_t)c->nallocs);
  for (int i = 0; i < c->nallocs; i++) order[i] = &c->allocs[i];
  qsort(order, (size_t)c->nallocs, sizeof(*order), by_first_use);
  int n = 0;
  *merged = false;
  for (int i = 0; i < c->nallocs; i++) {
    alloc_t *al = order[i];
    int k = al->size > 0 && al->first >= 0 ? best_free(st, n, al) : -1;
    if (k < 0) {
      st[n] = (storage_t){al->buf, al->first >= 0 ? al->size : -1, al->last};
      al->storage = n++;
      continue;
    }
    if (al->size > st[k].size) st[k].size = al->size;
    st[k].last = al->last;
    al->storage = k;
    *merged = true;
  }
  return n;
}

/* ------------------------------------------------------------------------ */
/* Rewriting                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct {
  chain_t *c;
  tir_buffer_t **to; /* per allocation */
} remap_t;

static tir_buffer_t *remap_buffer(tir_mutator_t *m, tir_buffer_t *b) {
  remap_t *r = m->payload;
  for (int i = 0; i < r->c->nallocs; i++)
    if (r->c->allocs[i].buf == b) return r->to[i];
  return b;
}

static tir_stmt_t *rebuild(chain_t *c, storage_t *st, int nst) {
  mlc_arena_t *a = c->a;
  for (int k = 0; k < nst; k++) {
    if (st[k].size < 0 || lower_const_or_neg(st[k].buf->shape[0]) == st[k].size) continue;
    tir_buffer_t *b = tir_buffer_copy(a, st[k].buf);
    b->shape[0] = tir_int(a, st[k].buf->shape[0]->dtype, st[k].size);
    st[k].buf = b;
  }
  remap_t r = {c, mlc_arena_alloc(a, sizeof(tir_buffer_t *) * (size_t)c->nallocs)};
  for (int i = 0; i < c->nallocs; i++) r.to[i] = st[c->allocs[i].storage].buf;
  tir_mutator_t m = {.arena = a, .buffer = remap_buffer, .payload = &r};
  tir_stmt_t **units = mlc_arena_alloc(a, sizeof(*units) * (size_t)(c->nunits > 0 ? c->nunits : 1));
  for (int i = 0; i < c->nunits; i++) units[i] = tir_mutate_stmt(&m, c->units[i]);
  tir_stmt_t *body = c->nunits ? tir_seq(a, units, c->nunits) : tir_evaluate(a, tir_i32(a, 0));
  for (int k = nst - 1; k >= 0; k--) body = tir_allocate(a, st[k].buf, body);
  return body;
}

/* The statement list s with its allocations shared where they can be. */
static tir_stmt_t *rewrite_list(mlc_arena_t *a, tir_stmt_t *s) {
  if (!s || (s->kind != TIR_ALLOCATE && s->kind != TIR_SEQ)) return s;
  chain_t c;
  memset(&c, 0, sizeof c);
  c.a = a;
  read_chain(&c, s);
  if (c.nallocs < 2) return s;
  live_ranges(&c);
  storage_t *st = mlc_arena_alloc(a, sizeof(*st) * (size_t)c.nallocs);
  bool merged;
  int nst = plan(&c, st, &merged);
  return merged ? rebuild(&c, st, nst) : s;
}

/* Bottom-up: the lists inside a statement are rewritten before the ones
 * around it. */
static tir_stmt_t *sr_stmt(tir_mutator_t *m, tir_stmt_t *s) {
  tir_stmt_t *r = tir_mutate_stmt_children(m, s), *x;
  tir_stmt_t **body = NULL, **other = NULL;
  switch (r->kind) {
  case TIR_FOR: body = &r->u.loop.body; break;
  case TIR_LET: body = &r->u.let.body; break;
  case TIR_ATTR: body = &r->u.attr.body; break;
  case TIR_ASSERT: body = &r->u.assert_.body; break;
  case TIR_IF:
    body = &r->u.if_.then_case;
    other = &r->u.if_.else_case;
    break;
  default: return r;
  }
  x = rewrite_list(m->arena, *body);
  tir_stmt_t *y = other ? rewrite_list(m->arena, *other) : NULL;
  if (x == *body && (!other || y == *other)) return r;
  r = r == s ? tir_stmt_copy(m->arena, r) : r;
  switch (r->kind) { /* the copy's fields */
  case TIR_FOR: r->u.loop.body = x; break;
  case TIR_LET: r->u.let.body = x; break;
  case TIR_ATTR: r->u.attr.body = x; break;
  case TIR_ASSERT: r->u.assert_.body = x; break;
  default:
    r->u.if_.then_case = x;
    r->u.if_.else_case = y;
  }
  return r;
}

static int run(tir_func_t *f) {
  tir_mutator_t m = {.arena = f->arena, .stmt = sr_stmt};
  f->body = rewrite_list(f->arena, tir_mutate_stmt(&m, f->body));
  return MLC_OK;
}

int mlc_pass_storage_rewrite(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes) {
  int rc;
  LOWER_GUARDED(rc, f->arena, run(f));
  return rc;
}
