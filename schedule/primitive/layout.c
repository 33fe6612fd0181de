/*
 * layout.c - the primitives that change how a buffer is stored rather than
 * how it is computed: set_scope, storage_align and transform_layout (TVM's
 * block_annotate.cc and layout_transformation.cc), and the lambda text of
 * index maps the trace records for transform_layout (storage.h).
 *
 * set_scope replaces an allocated buffer by a copy in another scope (named
 * `B_shared`, as TVM's WithScope names it) everywhere under its allocation.
 * storage_align only annotates the writing block with
 * `{"buffer_dim_align": [[buffer_index, axis, factor, offset]]}`; lowering
 * pads the buffer. transform_layout reshapes a buffer through an index map
 * `lambda i, j: (i // 16, j, i % 16,)`: the new shape is the map's image of
 * the old one, every access goes through the map (simplified with the loop
 * and block ranges in scope), and the regions of the blocks touching it are
 * derived again from their new accesses, as TVM's rewriter does.
 */
#include "schedule/primitive/storage.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

int sch_buffer_def_depth(const sch_path_t *path, const tir_buffer_t *buffer, bool *is_match) {
  for (int d = path->n - 1; d >= 0; d--) {
    const tir_stmt_t *s = path->stmts[d];
    if (s->kind != TIR_BLOCK_REALIZE) continue;
    const tir_block_t *b = s->u.realize.block;
    for (int i = 0; i < b->nalloc_buffers; i++) {
      if (b->alloc_buffers[i] != buffer) continue;
      *is_match = false;
      return d;
    }
    for (int i = 0; i < b->nmatch_buffers; i++) {
      if (b->match_buffers[i].buffer != buffer) continue;
      *is_match = true;
      return d;
    }
  }
  *is_match = false;
  return -1;
}

static bool is_param_buffer(const sch_t *sch, const tir_buffer_t *buffer) {
  const tir_func_t *f = sch->func;
  for (int i = 0; f->buffer_map && i < f->nparams; i++)
    if (f->buffer_map[i] == buffer) return true;
  return false;
}

/* A buffer no block defines: a parameter, or (in lowered code) a
 * T.decl_buffer, which these primitives do not handle. */
static int fail_not_block_buffer(sch_t *sch, const char *prim, const tir_buffer_t *buffer) {
  if (is_param_buffer(sch, buffer)) return sch_fail(sch, prim, "buffer %s is a function parameter", buffer->name);
  return sch_fail(sch, prim, "buffer %s is not allocated by a block", buffer->name);
}

/* The allocation site of an intermediate buffer, or a failure saying why the
 * buffer has none (a parameter, or a match_buffer view). */
static int allocation_site(sch_t *sch, const char *prim, const sch_path_t *path, const tir_buffer_t *buffer,
                           int *depth) {
  bool is_match = false;
  *depth = sch_buffer_def_depth(path, buffer, &is_match);
  if (*depth < 0) return fail_not_block_buffer(sch, prim, buffer);
  if (is_match)
    return sch_fail_at(sch, prim, path->stmts[*depth], "buffer %s is a match_buffer of block %s, not an allocation",
                       buffer->name, path->stmts[*depth]->u.realize.block->name);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Buffer substitution                                                       */
/* ------------------------------------------------------------------------ */

/* A small old -> new buffer map used as a mutator's buffer hook. */
typedef struct {
  int n, cap;
  tir_buffer_t **from, **to;
} buffer_map_t;

static void buffer_map_put(mlc_arena_t *a, buffer_map_t *m, tir_buffer_t *from, tir_buffer_t *to) {
  if (m->n == m->cap) {
    int cap = m->cap ? m->cap * 2 : 4;
    m->from = mlc_arena_grow(a, m->from, (size_t)m->n, (size_t)cap, sizeof(*m->from));
    m->to = mlc_arena_grow(a, m->to, (size_t)m->n, (size_t)cap, sizeof(*m->to));
    if (!m->from || !m->to) {
      m->n = m->cap = 0;
      return;
    }
    m->cap = cap;
  }
  m->from[m->n] = from;
  m->to[m->n++] = to;
}

static tir_buffer_t *buffer_map_get(const buffer_map_t *m, const tir_buffer_t *b) {
  for (int i = 0; i < m->n; i++)
    if (m->from[i] == b) return m->to[i];
  return NULL;
}

static tir_buffer_t *map_buffer_hook(tir_mutator_t *m, tir_buffer_t *b) {
  tir_buffer_t *to = buffer_map_get(m->payload, b);
  return to ? to : b;
}

/* TVM's WithScope: the same buffer in another scope, renamed `B_shared`. */
static tir_buffer_t *with_scope(mlc_arena_t *a, const tir_buffer_t *b, const char *scope) {
  tir_buffer_t *c = tir_buffer_copy(a, b);
  if (!c) return NULL;
  c->name = sch_scoped_buffer_name(a, b->name, scope);
  c->data = tir_var(a, c->name, tir_dt_HANDLE());
  c->scope = mlc_arena_strdup(a, scope);
  return c;
}

/* Match buffers viewing a buffer being moved move with it (TVM's
 * StorageScopeMutator::VisitMatchBufferRegion); pre-order, so views of views
 * follow. */
typedef struct {
  mlc_arena_t *arena;
  buffer_map_t *map;
  const char *scope;
} scope_scan_t;

static bool scan_match_buffers(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  scope_scan_t *scan = v->payload;
  for (int i = 0; i < b->nmatch_buffers; i++) {
    tir_buffer_t *src = buffer_map_get(scan->map, b->match_buffers[i].source.buffer);
    if (!src) continue;
    buffer_map_put(scan->arena, scan->map, b->match_buffers[i].buffer,
                   with_scope(scan->arena, b->match_buffers[i].buffer, src->scope));
  }
  return true;
}

/* ------------------------------------------------------------------------ */
/* set_scope                                                                 */
/* ------------------------------------------------------------------------ */

static void record_set_scope(sch_t *sch, sch_rv_t block, int buffer_index, const char *scope) {
  sch_arg_t inputs[1] = {sch_arg_rv(block)};
  sch_arg_t attrs[2] = {sch_arg_int(buffer_index), sch_arg_str(scope)};
  sch_record(sch, SCH_INST_SET_SCOPE, inputs, 1, attrs, 2, NULL, 0, NULL);
}

int sch_set_scope(sch_t *sch, sch_rv_t block, int buffer_index, const char *scope) {
  static const char prim[] = "set_scope";
  mlc_arena_t *a = sch_arena(sch);
  sch_path_t path;
  tir_buffer_t *buffer = NULL;
  int depth = -1;
  int rc = sch_find_block(sch, prim, block, &path);
  if (rc == MLC_OK) rc = sch_nth_access_buffer(sch, prim, &path, buffer_index, true, &buffer);
  if (rc != MLC_OK) return rc;
  if (scope && strcmp(buffer->scope, scope) == 0) { /* nothing to do, as TVM */
    record_set_scope(sch, block, buffer_index, scope);
    return MLC_OK;
  }
  if (!sch_storage_scope_valid(scope)) return sch_fail(sch, prim, "invalid storage scope \"%s\"", scope ? scope : "");
  rc = allocation_site(sch, prim, &path, buffer, &depth);
  if (rc != MLC_OK) return rc;
  buffer_map_t map = {0};
  buffer_map_put(a, &map, buffer, with_scope(a, buffer, scope));
  scope_scan_t scan = {a, &map, scope};
  tir_visitor_t v = {0};
  v.block = scan_match_buffers;
  v.payload = &scan;
  tir_visit_stmt(&v, path.stmts[depth]);
  tir_mutator_t m = {0};
  m.arena = a;
  m.buffer = map_buffer_hook;
  m.payload = &map;
  tir_stmt_t *site = tir_mutate_stmt(&m, path.stmts[depth]);
  if (mlc_arena_failed(a) || map.n == 0) return mlc_error_set(MLC_ENOMEM, "%s: out of memory", prim);
  sch_replace(sch, &path, depth, site);
  record_set_scope(sch, block, buffer_index, scope);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* storage_align                                                             */
/* ------------------------------------------------------------------------ */

static const char dim_align_key[] = "buffer_dim_align";

/* A list expression [x, y, ...] as the parser builds it. */
static tir_expr_t *list_expr(mlc_arena_t *a, tir_expr_t **items, int n) {
  return tir_call(a, tir_dt_HANDLE(), TIR_OP_LIST, items, n);
}

static bool is_list(const tir_expr_t *e) { return e && e->kind == TIR_CALL && e->u.call.op == TIR_OP_LIST; }

/* The annotation must be a list of [buffer_index, axis, factor, offset]. */
static bool dim_align_valid(const tir_expr_t *value) {
  if (!is_list(value)) return false;
  for (int i = 0; i < value->u.call.nargs; i++) {
    const tir_expr_t *t = value->u.call.args[i];
    if (!is_list(t) || t->u.call.nargs != 4) return false;
    for (int k = 0; k < 4; k++)
      if (t->u.call.args[k]->kind != TIR_INT_IMM) return false;
  }
  return true;
}

/* The annotation with the tuple for (buffer_index, axis) replaced, or added. */
static tir_expr_t *dim_align_update(mlc_arena_t *a, const tir_expr_t *old, const int64_t tuple[4]) {
  tir_expr_t *fields[4];
  for (int k = 0; k < 4; k++) fields[k] = tir_i32(a, tuple[k]);
  tir_expr_t *entry = list_expr(a, fields, 4);
  int n = old ? old->u.call.nargs : 0, k = n;
  tir_expr_t **items = mlc_arena_alloc(a, sizeof(*items) * (size_t)(n + 1));
  if (!items) return NULL;
  for (int i = 0; i < n; i++) {
    items[i] = old->u.call.args[i];
    int64_t bi = 0, ax = 0;
    tir_as_int(items[i]->u.call.args[0], &bi);
    tir_as_int(items[i]->u.call.args[1], &ax);
    if (k == n && bi == tuple[0] && ax == tuple[1]) k = i;
  }
  items[k] = entry;
  return list_expr(a, items, k == n ? n + 1 : n);
}

/* A copy of the block with annotation key set to value (kept in place when
 * present, appended otherwise). */
static tir_block_t *with_annotation(mlc_arena_t *a, const tir_block_t *b, const char *key, tir_expr_t *value) {
  tir_block_t *c = tir_block_copy(a, b);
  if (!c) return NULL;
  for (int i = 0; i < c->nannots; i++) {
    if (strcmp(c->annots[i].key, key) != 0) continue;
    c->annots[i].value = value;
    return c;
  }
  tir_annot_t *annots = mlc_arena_alloc(a, sizeof(*annots) * (size_t)(c->nannots + 1));
  if (!annots) return NULL;
  if (c->nannots) memcpy(annots, c->annots, sizeof(*annots) * (size_t)c->nannots);
  annots[c->nannots++] = (tir_annot_t){key, value};
  c->annots = annots;
  return c;
}

int sch_storage_align(sch_t *sch, sch_rv_t block, int buffer_index, int axis, int factor, int offset) {
  static const char prim[] = "storage_align";
  mlc_arena_t *a = sch_arena(sch);
  sch_path_t path;
  tir_buffer_t *buffer = NULL;
  int depth = -1;
  int rc = sch_find_block(sch, prim, block, &path);
  if (rc == MLC_OK) rc = sch_nth_access_buffer(sch, prim, &path, buffer_index, true, &buffer);
  if (rc != MLC_OK) return rc;
  tir_stmt_t *realize = path.stmts[path.n - 1];
  const tir_block_t *b = realize->u.realize.block;
  if (factor <= 0) return sch_fail(sch, prim, "factor must be positive, got %d", factor);
  if (axis < -buffer->ndim || axis >= buffer->ndim)
    return sch_fail(sch, prim, "axis %d is out of range for buffer %s, which has %d dimension%s", axis, buffer->name,
                    buffer->ndim, buffer->ndim == 1 ? "" : "s");
  rc = allocation_site(sch, prim, &path, buffer, &depth);
  if (rc != MLC_OK) return rc;
  tir_expr_t *old = tir_annot_get(b->annots, b->nannots, dim_align_key);
  if (old && !dim_align_valid(old))
    return sch_fail_at(sch, prim, realize, "block %s has a %s annotation that is not a list of "
                       "[buffer_index, axis, factor, offset]", b->name, dim_align_key);
  int64_t tuple[4] = {buffer_index, axis < 0 ? axis + buffer->ndim : axis, factor, offset};
  tir_expr_t *value = dim_align_update(a, old, tuple);
  tir_block_t *nb = value ? with_annotation(a, b, dim_align_key, value) : NULL;
  tir_stmt_t *nr = tir_stmt_copy(a, realize);
  if (!nb || !nr || mlc_arena_failed(a)) return mlc_error_set(MLC_ENOMEM, "%s: out of memory", prim);
  nr->u.realize.block = nb;
  sch_replace(sch, &path, path.n - 1, nr);
  sch_arg_t inputs[1] = {sch_arg_rv(block)};
  sch_arg_t attrs[4] = {sch_arg_int(buffer_index), sch_arg_int(axis), sch_arg_int(factor), sch_arg_int(offset)};
  sch_record(sch, SCH_INST_STORAGE_ALIGN, inputs, 1, attrs, 4, NULL, 0, NULL);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* transform_layout                                                          */
/* ------------------------------------------------------------------------ */

typedef struct {
  const sch_index_map_t *map;
  tir_buffer_t *old, *new_;
  tir_analyzer_t *an;       /* knows the loops and block iterators around */
} layout_t;

/* The map applied to indices, simplified with what the analyzer knows. */
static tir_expr_t **map_indices(tir_mutator_t *m, tir_expr_t **idx) {
  layout_t *lt = m->payload;
  tir_var_map_t vm = {0};
  for (int k = 0; k < lt->map->nsrc; k++) tir_var_map_set(m->arena, &vm, lt->map->src[k], idx[k]);
  tir_expr_t **out = mlc_arena_alloc(m->arena, sizeof(*out) * (size_t)lt->map->ndst);
  for (int k = 0; out && k < lt->map->ndst; k++)
    out[k] = tir_simplify(lt->an, tir_substitute_expr(m->arena, lt->map->dst[k], &vm));
  return out;
}

static tir_expr_t *layout_expr(tir_mutator_t *m, tir_expr_t *e) {
  layout_t *lt = m->payload;
  tir_expr_t *out = tir_mutate_expr_children(m, e);
  if (out->kind != TIR_BUFFER_LOAD || out->u.load.buffer != lt->old) return out;
  tir_expr_t *load = tir_expr_copy(m->arena, out);
  tir_expr_t **idx = map_indices(m, out->u.load.indices);
  if (!load || !idx) return out;
  load->u.load.buffer = lt->new_;
  load->u.load.indices = idx;
  load->u.load.nindices = lt->map->ndst;
  return load;
}

static tir_stmt_t *layout_store(tir_mutator_t *m, tir_stmt_t *s) {
  layout_t *lt = m->payload;
  tir_stmt_t *out = tir_mutate_stmt_children(m, s);
  if (out->u.store.buffer != lt->old) return out;
  tir_stmt_t *st = tir_stmt_copy(m->arena, out);
  tir_expr_t **idx = map_indices(m, out->u.store.indices);
  if (!st || !idx) return out;
  st->u.store.buffer = lt->new_;
  st->u.store.indices = idx;
  st->u.store.nindices = lt->map->ndst;
  return st;
}

/* The region of new_ among derived regions, or NULL. */
static const tir_region_t *find_region(const tir_region_t *rs, int n, const tir_buffer_t *b) {
  for (int i = 0; i < n; i++)
    if (rs[i].buffer == b) return &rs[i];
  return NULL;
}

/* The old buffer's regions become the new buffer's, derived from the block's
 * rewritten accesses (TVM re-runs GetBlockReadWriteRegion). */
static tir_region_t *relayout_regions(mlc_arena_t *a, layout_t *lt, tir_region_t *rs, int n,
                                      const tir_region_t *derived, int nderived, const tir_region_t *other,
                                      int nother) {
  if (!find_region(rs, n, lt->old)) return rs;
  tir_region_t *out = mlc_arena_memdup(a, rs, sizeof(*rs) * (size_t)n);
  for (int i = 0; out && i < n; i++) {
    if (out[i].buffer != lt->old) continue;
    const tir_region_t *r = find_region(derived, nderived, lt->new_);
    if (!r) r = find_region(other, nother, lt->new_);
    out[i] = r ? *r : tir_region_full(a, lt->new_);
  }
  return out ? out : rs;
}

static tir_stmt_t *layout_block(tir_mutator_t *m, tir_stmt_t *s) {
  layout_t *lt = m->payload;
  tir_block_t *b = s->u.realize.block;
  for (int i = 0; i < b->niter_vars; i++)
    tir_analyzer_bind(lt->an, b->iter_vars[i].var, b->iter_vars[i].dom.min, b->iter_vars[i].dom.extent);
  tir_stmt_t *out = tir_mutate_stmt_children(m, s);
  bool allocates = false;
  for (int i = 0; i < b->nalloc_buffers; i++) allocates |= b->alloc_buffers[i] == lt->old;
  if (!allocates && !find_region(b->reads, b->nreads, lt->old) && !find_region(b->writes, b->nwrites, lt->old))
    return out;
  tir_block_t *nb = tir_block_copy(m->arena, out->u.realize.block);
  tir_stmt_t *nr = tir_stmt_copy(m->arena, out);
  if (!nb || !nr) return out;
  for (int i = 0; i < nb->nalloc_buffers; i++)
    if (nb->alloc_buffers[i] == lt->old) nb->alloc_buffers[i] = lt->new_;
  tir_region_t *dr = NULL, *dw = NULL;
  int ndr = 0, ndw = 0;
  tir_block_derive_regions(m->arena, nb, &dr, &ndr, &dw, &ndw);
  nb->reads = relayout_regions(m->arena, lt, nb->reads, nb->nreads, dr, ndr, dw, ndw);
  nb->writes = relayout_regions(m->arena, lt, nb->writes, nb->nwrites, dw, ndw, dr, ndr);
  nr->u.realize.block = nb;
  return nr;
}

static tir_stmt_t *layout_stmt(tir_mutator_t *m, tir_stmt_t *s) {
  layout_t *lt = m->payload;
  switch (s->kind) {
  case TIR_FOR:
    tir_analyzer_bind(lt->an, s->u.loop.var, s->u.loop.min, s->u.loop.extent);
    return tir_mutate_stmt_children(m, s);
  case TIR_BLOCK_REALIZE: return layout_block(m, s);
  case TIR_BUFFER_STORE: return layout_store(m, s);
  default: return tir_mutate_stmt_children(m, s);
  }
}

/* A match buffer viewing the buffer would need its view re-derived; TVM
 * leaves it stale, we refuse. */
typedef struct {
  const tir_buffer_t *buffer;
  const tir_block_t *viewer;
} view_scan_t;

static bool scan_views(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  view_scan_t *scan = v->payload;
  for (int i = 0; i < b->nmatch_buffers && !scan->viewer; i++)
    if (b->match_buffers[i].source.buffer == scan->buffer) scan->viewer = b;
  return !scan->viewer;
}

/* The old index space: [0, extent) per dimension. */
static void old_domains(mlc_arena_t *a, const tir_buffer_t *old, tir_range_t *doms) {
  for (int d = 0; d < old->ndim; d++) doms[d] = (tir_range_t){tir_int(a, old->shape[d]->dtype, 0), old->shape[d]};
}

/* The new shape: each output's range over the old shape must start at 0. */
static int layout_shape(sch_t *sch, const char *prim, const layout_t *lt, tir_expr_t **shape) {
  mlc_arena_t *a = sch_arena(sch);
  const sch_index_map_t *map = lt->map;
  tir_range_t doms[TIR_MAX_DIMS];
  old_domains(a, lt->old, doms);
  for (int k = 0; k < map->ndst; k++) {
    tir_interval_t iv;
    if (tir_relax_expr(&iv, lt->an, map->dst[k], map->src, doms, map->nsrc) != MLC_OK)
      return sch_fail(sch, prim, "output %d of the index map cannot be bounded on buffer %s", k, lt->old->name);
    if (!tir_is_const_int(iv.min, 0))
      return sch_fail(sch, prim, "output %d of the index map does not start at 0 on buffer %s", k, lt->old->name);
    shape[k] = tir_simplify(lt->an, tir_binary(a, TIR_ADD, iv.max, tir_int(a, iv.max->dtype, 1)));
  }
  return MLC_OK;
}

/* The product of constant extents; false when one is not constant. */
static bool const_product(tir_expr_t *const *extents, int n, int64_t *out) {
  *out = 1;
  for (int i = 0; i < n; i++) {
    int64_t x;
    if (!tir_as_int(extents[i], &x)) return false;
    *out *= x;
  }
  return true;
}

/* The map must be a bijection from the old index space onto the new shape:
 * no padding (TVM refuses it without a pad value), no element stored twice. */
static int layout_check_bijective(sch_t *sch, const char *prim, const layout_t *lt, tir_expr_t **shape) {
  mlc_arena_t *a = sch_arena(sch);
  const sch_index_map_t *map = lt->map;
  int64_t before = 0, after = 0;
  if (const_product(lt->old->shape, lt->old->ndim, &before) && const_product(shape, map->ndst, &after) &&
      after > before)
    return sch_fail(sch, prim, "the index map pads buffer %s from %lld to %lld elements (padding is not supported)",
                    lt->old->name, (long long)before, (long long)after);
  tir_range_t doms[TIR_MAX_DIMS];
  old_domains(a, lt->old, doms);
  tir_iter_map_t im;
  if (tir_detect_iter_map(&im, lt->an, map->dst, map->ndst, map->src, doms, map->nsrc, NULL, TIR_ITER_BIJECTIVE) ==
      MLC_OK)
    return MLC_OK;
  char detail[256];
  snprintf(detail, sizeof detail, "%s", mlc_error_last());
  return sch_fail(sch, prim, "the index map is not a bijection on buffer %s: %s", lt->old->name, detail);
}

/* Every precondition on the map and the buffer; fills lt->new_. */
static int layout_prepare(sch_t *sch, const char *prim, layout_t *lt, const sch_path_t *path, int site) {
  mlc_arena_t *a = sch_arena(sch);
  const sch_index_map_t *map = lt->map;
  const tir_buffer_t *old = lt->old;
  if (map->nsrc != old->ndim)
    return sch_fail(sch, prim, "the index map takes %d indices but buffer %s has %d dimension%s", map->nsrc,
                    old->name, old->ndim, old->ndim == 1 ? "" : "s");
  if (map->ndst < 1 || map->ndst > TIR_MAX_DIMS)
    return sch_fail(sch, prim, "the index map gives %d indices (1 to %d allowed)", map->ndst, TIR_MAX_DIMS);
  if (old->strides) return sch_fail(sch, prim, "buffer %s has explicit strides", old->name);
  for (int d = 0; d < old->ndim; d++)
    if (!tir_dtype_eq(old->shape[d]->dtype, map->src[d]->dtype))
      return sch_fail(sch, prim, "buffer %s is indexed with a different integer type than the index map's variables",
                      old->name);
  view_scan_t scan = {old, NULL};
  tir_visitor_t v = {0};
  v.block = scan_views;
  v.payload = &scan;
  tir_visit_stmt(&v, path->stmts[site]);
  if (scan.viewer)
    return sch_fail(sch, prim, "buffer %s is viewed by a match_buffer of block %s", old->name, scan.viewer->name);
  tir_expr_t *shape[TIR_MAX_DIMS];
  int rc = layout_shape(sch, prim, lt, shape);
  if (rc == MLC_OK) rc = layout_check_bijective(sch, prim, lt, shape);
  if (rc != MLC_OK) return rc;
  lt->new_ = tir_buffer_copy(a, old);
  if (!lt->new_) return mlc_error_set(MLC_ENOMEM, "%s: out of memory", prim);
  lt->new_->ndim = map->ndst;
  lt->new_->shape = mlc_arena_memdup(a, shape, sizeof(*shape) * (size_t)map->ndst);
  return MLC_OK;
}

/* A parameter's new buffer replaces the old one in the function's buffer map
 * (a fresh array: the old one may be shared with an earlier version). */
static void replace_param_buffer(sch_t *sch, const tir_buffer_t *old, tir_buffer_t *new_) {
  tir_func_t *f = sch->func;
  tir_buffer_t **bm = mlc_arena_memdup(sch_arena(sch), f->buffer_map, sizeof(*bm) * (size_t)f->nparams);
  if (!bm) return;
  for (int i = 0; i < f->nparams; i++)
    if (bm[i] == old) bm[i] = new_;
  f->buffer_map = bm;
}

static void record_transform_layout(sch_t *sch, sch_rv_t block, int buffer_index, sch_buffer_kind_t kind,
                                    const char *map_text) {
  sch_arg_t inputs[1] = {sch_arg_rv(block)};
  sch_arg_t attrs[3] = {sch_arg_int(buffer_index), sch_arg_int(kind == SCH_BUFFER_WRITE ? 1 : 0),
                        sch_arg_str(map_text)};
  sch_record(sch, SCH_INST_TRANSFORM_LAYOUT, inputs, 1, attrs, 3, NULL, 0, NULL);
}

/* A copy of the caller's map in the schedule's arena (the program will hold
 * its nodes), with fresh source variables. */
typedef struct {
  tir_var_map_t vars;
  bool bad;
} map_copy_t;

static tir_expr_t *copy_map_expr(tir_mutator_t *m, tir_expr_t *e) {
  map_copy_t *c = m->payload;
  if (e->kind == TIR_VAR) {
    tir_expr_t *to = tir_var_map_get(&c->vars, e);
    c->bad |= !to;
    return to ? to : e;
  }
  c->bad |= e->kind == TIR_BUFFER_LOAD || e->kind == TIR_STRING_IMM;
  tir_expr_t *out = tir_mutate_expr_children(m, e);
  return out == e ? tir_expr_copy(m->arena, e) : out;
}

static int own_index_map(sch_t *sch, const sch_index_map_t *in, sch_index_map_t *out) {
  mlc_arena_t *a = sch_arena(sch);
  map_copy_t c = {{0}, false};
  out->nsrc = in->nsrc;
  out->ndst = in->ndst;
  out->src = mlc_arena_alloc(a, sizeof(*out->src) * (size_t)(in->nsrc ? in->nsrc : 1));
  out->dst = mlc_arena_alloc(a, sizeof(*out->dst) * (size_t)(in->ndst ? in->ndst : 1));
  if (!out->src || !out->dst) return MLC_ENOMEM;
  for (int i = 0; i < in->nsrc; i++) {
    out->src[i] = tir_var(a, in->src[i]->u.var.name, in->src[i]->dtype);
    tir_var_map_set(a, &c.vars, in->src[i], out->src[i]);
  }
  tir_mutator_t m = {0};
  m.arena = a;
  m.expr = copy_map_expr;
  m.payload = &c;
  for (int k = 0; k < in->ndst; k++) out->dst[k] = tir_mutate_expr(&m, in->dst[k]);
  return c.bad ? MLC_EINVAL : MLC_OK;
}

int sch_transform_layout(sch_t *sch, sch_rv_t block, int buffer_index, sch_buffer_kind_t kind,
                         const sch_index_map_t *index_map) {
  static const char prim[] = "transform_layout";
  mlc_arena_t *a = sch_arena(sch);
  sch_path_t path;
  sch_index_map_t map;
  if (own_index_map(sch, index_map, &map) != MLC_OK)
    return sch_fail(sch, prim, "the index map may only use its own variables and no buffer loads");
  const char *text = sch_index_map_str(a, &map);
  layout_t lt = {&map, NULL, NULL, NULL};
  int rc = sch_find_block(sch, prim, block, &path);
  if (rc == MLC_OK) rc = sch_nth_access_buffer(sch, prim, &path, buffer_index, kind == SCH_BUFFER_WRITE, &lt.old);
  if (rc != MLC_OK) return rc;
  bool is_match = false;
  int site = sch_buffer_def_depth(&path, lt.old, &is_match);
  if (is_match)
    return sch_fail_at(sch, prim, path.stmts[site], "buffer %s is a match_buffer of block %s, not an allocation "
                       "or a parameter", lt.old->name, path.stmts[site]->u.realize.block->name);
  bool is_param = site < 0;
  if (is_param && !is_param_buffer(sch, lt.old)) return fail_not_block_buffer(sch, prim, lt.old);
  if (is_param) site = 0; /* a parameter: rewrite the whole body */
  lt.an = tir_analyzer_new(a);
  if (!lt.an) return mlc_error_set(MLC_ENOMEM, "%s: out of memory", prim);
  rc = layout_prepare(sch, prim, &lt, &path, site);
  if (rc != MLC_OK) return rc;
  /* Binding the loops above the site lets the rewrite simplify with them. */
  for (int d = 0; d < site; d++)
    if (path.stmts[d]->kind == TIR_FOR)
      tir_analyzer_bind(lt.an, path.stmts[d]->u.loop.var, path.stmts[d]->u.loop.min, path.stmts[d]->u.loop.extent);
  tir_mutator_t m = {0};
  m.arena = a;
  m.expr = layout_expr;
  m.stmt = layout_stmt;
  m.payload = &lt;
  tir_stmt_t *new_site = tir_mutate_stmt(&m, path.stmts[site]);
  if (mlc_arena_failed(a)) return mlc_error_set(MLC_ENOMEM, "%s: out of memory", prim);
  sch_replace(sch, &path, site, new_site);
  if (is_param) replace_param_buffer(sch, lt.old, lt.new_);
  record_transform_layout(sch, block, buffer_index, kind, text);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Index maps as lambda text                                                 */
/* ------------------------------------------------------------------------ */

static bool is_identifier(const char *s) {
  if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return false;
  for (const char *p = s; *p; p++)
    if (!isalnum((unsigned char)*p) && *p != '_') return false;
  return strcmp(s, "lambda") != 0 && strcmp(s, "T") != 0;
}

/* Source variables print under their names when those are distinct
 * identifiers; otherwise all are renamed i0, i1, ... */
static bool names_printable(const sch_index_map_t *map) {
  for (int i = 0; i < map->nsrc; i++) {
    if (!is_identifier(map->src[i]->u.var.name)) return false;
    for (int j = 0; j < i; j++)
      if (strcmp(map->src[i]->u.var.name, map->src[j]->u.var.name) == 0) return false;
  }
  return true;
}

const char *sch_index_map_str(mlc_arena_t *a, const sch_index_map_t *map) {
  bool keep = names_printable(map);
  tir_var_map_t vm = {0};
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  mlc_sb_append(&sb, "lambda ");
  for (int i = 0; i < map->nsrc; i++) {
    const char *name = keep ? map->src[i]->u.var.name : mlc_arena_printf(a, "i%d", i);
    if (!keep) tir_var_map_set(a, &vm, map->src[i], tir_var(a, name, map->src[i]->dtype));
    mlc_sb_printf(&sb, "%s%s", i ? ", " : "", name);
  }
  mlc_sb_append(&sb, ": (");
  for (int k = 0; k < map->ndst; k++) {
    if (k) mlc_sb_putc(&sb, ' ');
    tir_print_expr(&sb, keep ? map->dst[k] : tir_substitute_expr(a, map->dst[k], &vm));
    mlc_sb_putc(&sb, ',');
  }
  mlc_sb_putc(&sb, ')');
  const char *out = sb.failed ? "" : mlc_arena_strdup(a, mlc_sb_str(&sb));
  mlc_sb_free(&sb);
  return out ? out : "";
}
