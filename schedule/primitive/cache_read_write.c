/*
 * cache_read_write.c - cache_read and cache_write, as TVM's
 * src/tir/schedule/primitive/cache_read_write.cc does them.
 *
 * cache_read(block, i, scope) gives the i-th buffer the block reads a copy in
 * `scope` (`A_shared`): a copy stage `for ax0, ax1 in T.grid(...)` with a
 * block named `A_shared` is inserted where the data is ready (at the start of
 * the scope for an input, else right after its only writer, before the first
 * consumer), and the consumers (all readers, or the ones given) read the
 * copy. cache_write(block, i, scope) makes the block write a cache
 * (`C_local`) and inserts a write-back stage `C = C_local` after it, before
 * its first consumer.
 *
 * Where the stage goes decides its shape (TVM's CacheLocDetector and
 * cache_full_region): inside a loop, the stage copies the region one
 * iteration of that loop touches, into a cache as large as the whole buffer
 * (bindings `i * 16 + ax0`); at the scope's level, the cache is only as large
 * as the region the scope touches, and accesses are shifted by its start.
 *
 * The file also holds the helpers both storage files share (storage.h).
 */
#include "schedule/primitive/storage.h"

#include "schedule/analysis/analysis.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* Shared helpers (storage.h)                                                */
/* ------------------------------------------------------------------------ */

/* The scopes runtime::StorageScope::Create accepts that mlc-tune targets. */
static const char *const valid_scopes[] = {
    "global", "shared", "shared.dyn", "local", "warp",
    "wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator",
};

bool sch_storage_scope_valid(const char *scope) {
  if (!scope) return false;
  for (size_t i = 0; i < sizeof valid_scopes / sizeof valid_scopes[0]; i++)
    if (strcmp(scope, valid_scopes[i]) == 0) return true;
  return false;
}

const char *sch_scoped_buffer_name(mlc_arena_t *a, const char *name, const char *scope) {
  char *s = mlc_arena_printf(a, "%s_%s", name, scope);
  for (char *p = s; p && *p; p++)
    if (*p == '.') *p = '_';
  return s;
}

int sch_nth_access_buffer(sch_t *sch, const char *prim, const sch_path_t *path, int index, bool is_write,
                          tir_buffer_t **out) {
  tir_stmt_t *realize = path->stmts[path->n - 1];
  const tir_block_t *b = realize->u.realize.block;
  int n = is_write ? b->nwrites : b->nreads;
  if (index < 0 || index >= n)
    return sch_fail_at(sch, prim, realize, "%s buffer index %d is out of range for block %s, which %s %d buffer%s",
                       is_write ? "write" : "read", index, b->name, is_write ? "writes" : "reads", n,
                       n == 1 ? "" : "s");
  *out = (is_write ? b->writes : b->reads)[index].buffer;
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Small IR helpers                                                          */
/* ------------------------------------------------------------------------ */

static const tir_region_t *region_of(const tir_region_t *rs, int n, const tir_buffer_t *buffer) {
  for (int i = 0; i < n; i++)
    if (rs[i].buffer == buffer) return &rs[i];
  return NULL;
}

static bool block_writes(const tir_block_t *b, const tir_buffer_t *buffer) {
  return region_of(b->writes, b->nwrites, buffer) != NULL;
}

static bool block_reads(const tir_block_t *b, const tir_buffer_t *buffer) {
  return region_of(b->reads, b->nreads, buffer) != NULL;
}

/* x + y, folding a zero x as TVM's operator+ does. */
static tir_expr_t *add_folded(mlc_arena_t *a, tir_expr_t *x, tir_expr_t *y) {
  return tir_is_const_int(x, 0) ? y : tir_binary(a, TIR_ADD, x, y);
}

/* Inserts `stage` at position pos of body (TVM's InsertCacheStage). */
static tir_stmt_t *insert_stage(mlc_arena_t *a, tir_stmt_t *body, int pos, tir_stmt_t *stage) {
  if (body->kind != TIR_SEQ) {
    tir_stmt_t *two[2] = {pos == 0 ? stage : body, pos == 0 ? body : stage};
    return tir_seq(a, two, 2);
  }
  int n = body->u.seq.n;
  if (pos > n) pos = n;
  tir_stmt_t **stmts = mlc_arena_alloc(a, sizeof(*stmts) * (size_t)(n + 1));
  if (!stmts) return body;
  memcpy(stmts, body->u.seq.stmts, sizeof(*stmts) * (size_t)pos);
  stmts[pos] = stage;
  memcpy(stmts + pos + 1, body->u.seq.stmts + pos, sizeof(*stmts) * (size_t)(n - pos));
  return tir_seq(a, stmts, n + 1);
}

/* ------------------------------------------------------------------------ */
/* The cache stage                                                           */
/* ------------------------------------------------------------------------ */

/* Everything one cache_read / cache_write needs between analysis and rewrite. */
typedef struct {
  bool is_read;
  tir_stmt_t *scope;         /* the scope's BLOCK_REALIZE */
  tir_buffer_t *buffer;      /* the buffer being cached */
  tir_buffer_t *cache;       /* the new buffer */
  tir_stmt_t *writer;        /* cache_write: the block; cache_read: the only writer or NULL */
  tir_stmt_t **consumers;    /* BLOCK_REALIZEs given by the user */
  int nconsumers;
  tir_stmt_t *loc;           /* a FOR or the scope's BLOCK_REALIZE: where the stage goes */
  int pos;                   /* position in loc's body */
  tir_range_t *region;       /* the cached region of buffer */
  bool full;                 /* the cache has the buffer's whole shape */
  tir_stmt_t *stage;
  tir_block_t *stage_block;
  tir_analyzer_t *an;
} cache_info_t;

/* The cache buffer: the buffer with the new scope and name, shaped like the
 * region unless the cache is full. */
static tir_buffer_t *make_cache_buffer(sch_t *sch, const cache_info_t *info, const char *scope) {
  mlc_arena_t *a = sch_arena(sch);
  tir_buffer_t *c = tir_buffer_copy(a, info->buffer);
  if (!c) return NULL;
  c->name = sch_scoped_buffer_name(a, info->buffer->name, scope);
  c->data = tir_var(a, c->name, tir_dt_HANDLE());
  c->scope = mlc_arena_strdup(a, scope);
  if (!info->full)
    for (int d = 0; d < c->ndim; d++) c->shape[d] = info->region[d].extent;
  return c;
}

static tir_region_t point_region(mlc_arena_t *a, tir_buffer_t *b, tir_expr_t **idx, int n) {
  tir_region_t r = {b, n, mlc_arena_alloc(a, sizeof(tir_range_t) * (size_t)(n ? n : 1))};
  for (int d = 0; r.ranges && d < n; d++) {
    r.ranges[d].min = idx[d];
    r.ranges[d].extent = tir_int(a, idx[d]->dtype, 1);
  }
  return r;
}

/* The copy block's predicate: `0 <= binding < shape` for each dimension
 * where a full cache's region (one iteration of the loop it sits in) may
 * run past the buffer, as the tiles of a split by a non-dividing factor do
 * at the last iteration, or a window over padding does at the edges; true
 * when every copy is provably in bounds. */
static tir_expr_t *in_bounds_predicate(sch_t *sch, const cache_info_t *info, tir_var_t **ax, tir_expr_t **binding) {
  mlc_arena_t *a = sch_arena(sch);
  tir_expr_t *pred = NULL;
  if (!info->full) return tir_bool(a, true);
  for (int d = 0; d < info->buffer->ndim; d++)
    tir_analyzer_bind(info->an, ax[d], tir_int(a, ax[d]->dtype, 0), info->region[d].extent);
  for (int d = 0; d < info->buffer->ndim; d++) {
    tir_expr_t *bounds[2] = {tir_binary(a, TIR_GE, binding[d], tir_int(a, binding[d]->dtype, 0)),
                             tir_binary(a, TIR_LT, binding[d], info->buffer->shape[d])};
    for (int k = 0; k < 2; k++) {
      if (tir_prove(info->an, bounds[k])) continue;
      tir_expr_t *cond = tir_simplify(info->an, bounds[k]);
      pred = pred ? tir_binary(a, TIR_AND, pred, cond) : cond;
    }
  }
  return pred ? pred : tir_bool(a, true);
}

/* The copy nest (TVM's MakeCacheStage): loops ax0.. over the region's
 * extents, a block v0.. copying between the buffer and the cache. */
static void make_cache_stage(sch_t *sch, cache_info_t *info, const char *scope) {
  mlc_arena_t *a = sch_arena(sch);
  int n = info->buffer->ndim;
  tir_var_t *ax[TIR_MAX_DIMS];
  tir_expr_t *binding[TIR_MAX_DIMS], *orig_idx[TIR_MAX_DIMS], *cache_idx[TIR_MAX_DIMS];
  const char *name = mlc_arena_printf(a, "%s_%s", info->buffer->name, scope); /* TVM keeps the dot */
  tir_block_t *b = name ? sch_new_block(sch, sch_unique_block_name(sch, name)) : NULL;
  if (!b) return;
  b->niter_vars = n;
  b->iter_vars = mlc_arena_alloc(a, sizeof(*b->iter_vars) * (size_t)(n ? n : 1));
  b->reads = mlc_arena_alloc(a, sizeof(tir_region_t));
  b->writes = mlc_arena_alloc(a, sizeof(tir_region_t));
  if (!b->iter_vars || !b->reads || !b->writes) return;
  for (int d = 0; d < n; d++) {
    const tir_range_t *r = &info->region[d];
    tir_dtype_t t = r->extent->dtype;
    ax[d] = tir_var(a, mlc_arena_printf(a, "ax%d", d), t);
    tir_var_t *v = tir_var(a, mlc_arena_printf(a, "v%d", d), t);
    b->iter_vars[d] = (tir_iter_var_t){v, {tir_int(a, t, 0), info->full ? info->buffer->shape[d] : r->extent},
                                       TIR_ITER_SPATIAL};
    binding[d] = info->full ? add_folded(a, r->min, ax[d]) : ax[d];
    orig_idx[d] = info->full ? v : add_folded(a, r->min, v);
    cache_idx[d] = v;
  }
  tir_buffer_t *src = info->is_read ? info->buffer : info->cache;
  tir_buffer_t *dst = info->is_read ? info->cache : info->buffer;
  tir_expr_t **src_idx = info->is_read ? orig_idx : cache_idx;
  tir_expr_t **dst_idx = info->is_read ? cache_idx : orig_idx;
  b->nreads = b->nwrites = 1;
  b->reads[0] = point_region(a, src, src_idx, n);
  b->writes[0] = point_region(a, dst, dst_idx, n);
  b->body = tir_store(a, dst, tir_load(a, src, src_idx, n), dst_idx, n);
  tir_stmt_t *s = tir_block_realize(a, binding, n, in_bounds_predicate(sch, info, ax, binding), b);
  for (int d = n - 1; d >= 0; d--)
    s = sch_new_loop(sch, ax[d], tir_int(a, ax[d]->dtype, 0), info->region[d].extent, TIR_FOR_SERIAL, s);
  info->stage = s;
  info->stage_block = b;
}

/* ------------------------------------------------------------------------ */
/* Where the stage goes (TVM's CacheLocDetector)                             */
/* ------------------------------------------------------------------------ */

/* Walks the scope looking for the lowest statement list that holds the
 * writer and, after it, a related block (a consumer): the stage goes right
 * before the item holding that consumer. */
typedef struct {
  tir_stmt_t *scope, *writer;
  tir_stmt_t **related;
  int nrelated;
  bool visited_block, visited_related;
  tir_stmt_t *loc;
  int pos;
} loc_detector_t;

static void detect_stmt(loc_detector_t *d, tir_stmt_t *s);

static void detect_seq(loc_detector_t *d, tir_stmt_t *s) {
  bool prev = d->visited_block;
  d->visited_block = false;
  for (int i = 0; i < s->u.seq.n && d->pos == -1; i++) {
    detect_stmt(d, s->u.seq.stmts[i]);
    if (d->visited_block && d->visited_related && d->pos == -1) {
      d->pos = i;
      break;
    }
    if (d->visited_related) break; /* a consumer before the writer: stop */
  }
  d->visited_block = d->visited_block || prev;
}

static void detect_block(loc_detector_t *d, tir_stmt_t *s) {
  if (s == d->scope) {
    detect_stmt(d, s->u.realize.block->init);
    detect_stmt(d, s->u.realize.block->body);
    if (d->visited_related && !d->loc) {
      d->loc = s;
      if (!d->visited_block && d->pos == -1) d->pos = 0;
    }
    return;
  }
  if (s == d->writer) {
    d->visited_block = true;
    return;
  }
  for (int i = 0; i < d->nrelated; i++)
    if (d->related[i] == s) d->visited_related = true;
}

static void detect_stmt(loc_detector_t *d, tir_stmt_t *s) {
  if (!s) return;
  switch (s->kind) {
  case TIR_SEQ: detect_seq(d, s); return;
  case TIR_BLOCK_REALIZE: detect_block(d, s); return;
  case TIR_FOR:
    detect_stmt(d, s->u.loop.body);
    if (d->visited_block && d->visited_related && !d->loc && d->pos != -1) d->loc = s;
    return;
  case TIR_LET: detect_stmt(d, s->u.let.body); return;
  case TIR_ATTR: detect_stmt(d, s->u.attr.body); return;
  case TIR_ASSERT: detect_stmt(d, s->u.assert_.body); return;
  case TIR_ALLOCATE: detect_stmt(d, s->u.allocate.body); return;
  case TIR_IF:
    detect_stmt(d, s->u.if_.then_case);
    detect_stmt(d, s->u.if_.else_case);
    return;
  default: return;
  }
}

/* Sets info->loc and info->pos for a stage that follows `writer` and comes
 * before the first of `related`; with none related, at the scope's end. */
static void detect_location(cache_info_t *info, tir_stmt_t *writer, tir_stmt_t **related, int nrelated) {
  tir_stmt_t *body = info->scope->u.realize.block->body;
  if (nrelated == 0) {
    info->loc = info->scope;
    info->pos = body->kind == TIR_SEQ ? body->u.seq.n : 1;
    return;
  }
  loc_detector_t d = {info->scope, writer, related, nrelated, false, false, NULL, -1};
  detect_stmt(&d, info->scope);
  info->loc = d.loc ? d.loc : info->scope;
  info->pos = d.pos < 0 ? 0 : d.pos;
}

/* Constant ranges cut to the buffer's shape (TVM's CoverRange keeps the
 * region inside [0, shape)): a relaxed region can overshoot where a split
 * by a non-dividing factor guards the block with a predicate the relaxation
 * could not use. Symbolic ranges are guarded by the copy's predicate. */
static void clip_to_buffer(mlc_arena_t *a, tir_range_t *region, const tir_buffer_t *buffer) {
  for (int d = 0; d < buffer->ndim; d++) {
    int64_t min, ext, dim;
    if (!tir_as_int(region[d].min, &min) || !tir_as_int(region[d].extent, &ext) ||
        !tir_as_int(buffer->shape[d], &dim))
      continue;
    int64_t lo = min < 0 ? 0 : min, hi = min + ext > dim ? dim : min + ext;
    if (hi <= lo || (lo == min && hi == min + ext)) continue;
    region[d].min = tir_int(a, region[d].min->dtype, lo);
    region[d].extent = tir_int(a, region[d].extent->dtype, hi - lo);
  }
}

/* The region of `buffer` the block at bpath writes, relaxed over the loops
 * below info->loc (TVM's RelaxBufferRegion); the whole buffer when it cannot
 * be bounded. */
static void relax_written_region(sch_t *sch, cache_info_t *info, const sch_path_t *bpath) {
  mlc_arena_t *a = sch_arena(sch);
  const tir_block_t *b = bpath->stmts[bpath->n - 1]->u.realize.block;
  const tir_region_t *r = region_of(b->writes, b->nwrites, info->buffer);
  int above = 0;
  while (above < bpath->n && bpath->stmts[above] != info->loc) above++;
  MLC_ASSERT(r && above < bpath->n);
  info->region = mlc_arena_alloc(a, sizeof(tir_range_t) * (size_t)(r->ndim ? r->ndim : 1));
  /* The stage's loops live under loc and the loops above it: what the
   * analyzer knows when it decides whether the copy needs a predicate. */
  for (int d = 0; d <= above; d++)
    if (bpath->stmts[d]->kind == TIR_FOR)
      tir_analyzer_bind(info->an, bpath->stmts[d]->u.loop.var, bpath->stmts[d]->u.loop.min,
                        bpath->stmts[d]->u.loop.extent);
  if (sch_relax_region(sch, bpath, above, r, info->region) == MLC_OK) {
    clip_to_buffer(a, info->region, info->buffer);
    return;
  }
  mlc_error_clear();
  tir_region_t full = tir_region_full(a, info->buffer);
  if (r->ndim) memcpy(info->region, full.ranges, sizeof(tir_range_t) * (size_t)r->ndim);
}

/* ------------------------------------------------------------------------ */
/* Rewriting the scope                                                       */
/* ------------------------------------------------------------------------ */

typedef struct {
  cache_info_t *info;
  tir_buffer_t *from, *to;  /* accesses to `from` become accesses to `to` */
  bool active;              /* inside a block whose accesses are redirected */
} rewriter_t;

static bool is_given_consumer(const cache_info_t *info, const tir_stmt_t *s) {
  for (int i = 0; i < info->nconsumers; i++)
    if (info->consumers[i] == s) return true;
  return false;
}

/* An index into the cache: shifted by the region's start when the cache is
 * compact (TVM's RewriteIndices). */
static tir_expr_t *cache_index(const cache_info_t *info, mlc_arena_t *a, tir_expr_t *idx, int d) {
  if (info->full || tir_is_const_int(info->region[d].min, 0)) return idx;
  return tir_simplify(info->an, tir_binary(a, TIR_SUB, idx, info->region[d].min));
}

static tir_expr_t **cache_indices(const cache_info_t *info, mlc_arena_t *a, tir_expr_t **idx, int n) {
  tir_expr_t **out = mlc_arena_alloc(a, sizeof(*out) * (size_t)(n ? n : 1));
  for (int d = 0; out && d < n; d++) out[d] = cache_index(info, a, idx[d], d);
  return out ? out : idx;
}

/* Regions of `from` retargeted to `to` (shifted into the cache when compact). */
static tir_region_t *retarget_regions(rewriter_t *rw, mlc_arena_t *a, tir_region_t *rs, int n) {
  if (!region_of(rs, n, rw->from)) return rs;
  tir_region_t *out = mlc_arena_memdup(a, rs, sizeof(*rs) * (size_t)n);
  for (int i = 0; out && i < n; i++) {
    if (out[i].buffer != rw->from) continue;
    out[i].buffer = rw->to;
    tir_range_t *ranges = mlc_arena_alloc(a, sizeof(*ranges) * (size_t)(out[i].ndim ? out[i].ndim : 1));
    for (int d = 0; ranges && d < out[i].ndim; d++)
      ranges[d] = (tir_range_t){cache_index(rw->info, a, rs[i].ranges[d].min, d), rs[i].ranges[d].extent};
    if (ranges) out[i].ranges = ranges;
  }
  return out ? out : rs;
}

/* The block with its regions (reads and, for cache_write, writes) and match
 * buffer sources redirected. */
static void retarget_block(rewriter_t *rw, mlc_arena_t *a, tir_block_t *b) {
  b->reads = retarget_regions(rw, a, b->reads, b->nreads);
  if (!rw->info->is_read) b->writes = retarget_regions(rw, a, b->writes, b->nwrites);
  for (int i = 0; i < b->nmatch_buffers; i++) {
    if (b->match_buffers[i].source.buffer != rw->from) continue;
    tir_match_buffer_t *mb = mlc_arena_memdup(a, b->match_buffers, sizeof(*mb) * (size_t)b->nmatch_buffers);
    if (!mb) return;
    mb[i].source = *retarget_regions(rw, a, &b->match_buffers[i].source, 1);
    b->match_buffers = mb;
  }
}

static tir_expr_t *rewrite_expr(tir_mutator_t *m, tir_expr_t *e) {
  rewriter_t *rw = m->payload;
  tir_expr_t *out = tir_mutate_expr_children(m, e);
  if (!rw->active || out->kind != TIR_BUFFER_LOAD || out->u.load.buffer != rw->from) return out;
  tir_expr_t *load = tir_expr_copy(m->arena, out);
  if (!load) return out;
  load->u.load.buffer = rw->to;
  load->u.load.indices = cache_indices(rw->info, m->arena, out->u.load.indices, out->u.load.nindices);
  return load;
}

static tir_stmt_t *rewrite_store(tir_mutator_t *m, tir_stmt_t *s) {
  rewriter_t *rw = m->payload;
  tir_stmt_t *out = tir_mutate_stmt_children(m, s);
  if (!rw->active || out->u.store.buffer != rw->from) return out;
  tir_stmt_t *st = tir_stmt_copy(m->arena, out);
  if (!st) return out;
  st->u.store.buffer = rw->to;
  st->u.store.indices = cache_indices(rw->info, m->arena, out->u.store.indices, out->u.store.nindices);
  return st;
}

static tir_stmt_t *rewrite_loop(tir_mutator_t *m, tir_stmt_t *s) {
  rewriter_t *rw = m->payload;
  tir_stmt_t *out = tir_mutate_stmt_children(m, s);
  if (s != rw->info->loc) return out;
  tir_stmt_t *loop = tir_stmt_copy(m->arena, out);
  if (!loop) return out;
  loop->u.loop.body = insert_stage(m->arena, out->u.loop.body, rw->info->pos, rw->info->stage);
  return loop;
}

/* Which blocks get their accesses redirected (TVM's CacheReadRewriter and
 * CacheWriteRewriter): cache_read, the consumers (every block but the writer,
 * or the given ones and what is nested in them); cache_write, the writer and
 * what is nested in it, and the given consumers. Returns false for a block
 * the rewrite leaves alone entirely. */
static bool block_redirected(rewriter_t *rw, tir_stmt_t *s, bool *active) {
  cache_info_t *info = rw->info;
  const tir_block_t *b = s->u.realize.block;
  if (info->is_read) {
    if (block_writes(b, info->buffer)) return false;
    *active = info->nconsumers == 0 || rw->active || is_given_consumer(info, s);
    return true;
  }
  *active = rw->active || s == info->writer || is_given_consumer(info, s);
  return *active;
}

static tir_stmt_t *rewrite_block(tir_mutator_t *m, tir_stmt_t *s) {
  rewriter_t *rw = m->payload;
  cache_info_t *info = rw->info;
  bool is_scope = s == info->scope, active = false;
  if (is_scope) active = info->is_read && info->nconsumers == 0;
  else if (!block_redirected(rw, s, &active)) return s;
  bool saved = rw->active;
  rw->active = active;
  tir_stmt_t *out = tir_mutate_stmt_children(m, s);
  rw->active = saved;
  bool touches = block_reads(s->u.realize.block, rw->from) || block_writes(s->u.realize.block, rw->from) ||
                 s->u.realize.block->nmatch_buffers > 0;
  if (!is_scope && !(active && touches)) return out;
  tir_block_t *b = tir_block_copy(m->arena, out->u.realize.block);
  tir_stmt_t *realize = tir_stmt_copy(m->arena, out);
  if (!b || !realize) return out;
  if (s == info->loc) b->body = insert_stage(m->arena, b->body, info->pos, info->stage);
  if (is_scope) {
    tir_buffer_t **allocs = mlc_arena_alloc(m->arena, sizeof(*allocs) * (size_t)(b->nalloc_buffers + 1));
    if (!allocs) return out;
    if (b->nalloc_buffers) memcpy(allocs, b->alloc_buffers, sizeof(*allocs) * (size_t)b->nalloc_buffers);
    allocs[b->nalloc_buffers++] = info->cache;
    b->alloc_buffers = allocs;
  } else {
    retarget_block(rw, m->arena, b);
  }
  realize->u.realize.block = b;
  return realize;
}

static tir_stmt_t *rewrite_stmt(tir_mutator_t *m, tir_stmt_t *s) {
  switch (s->kind) {
  case TIR_FOR: return rewrite_loop(m, s);
  case TIR_BLOCK_REALIZE: return rewrite_block(m, s);
  case TIR_BUFFER_STORE: return rewrite_store(m, s);
  default: return tir_mutate_stmt_children(m, s);
  }
}

/* The new scope: stage inserted, cache allocated, accesses redirected. For
 * cache_read stores are never redirected (the writer is left alone). */
static tir_stmt_t *rewrite_scope(sch_t *sch, cache_info_t *info) {
  rewriter_t rw = {info, info->buffer, info->cache, false};
  tir_mutator_t m = {0};
  m.arena = sch_arena(sch);
  m.expr = rewrite_expr;
  m.stmt = rewrite_stmt;
  m.payload = &rw;
  return tir_mutate_stmt(&m, info->scope);
}

/* ------------------------------------------------------------------------ */
/* Preconditions                                                             */
/* ------------------------------------------------------------------------ */

/* Finds the scope of the block at path and the given consumers, which must
 * be blocks in that scope reading the buffer. */
static int check_scope_and_consumers(sch_t *sch, const char *prim, cache_info_t *info, const sch_path_t *path,
                                     const sch_rv_t *consumer_blocks, int nconsumers) {
  tir_stmt_t *realize = path->stmts[path->n - 1];
  int scope_depth = sch_path_scope_depth(path, path->n - 1);
  if (scope_depth < 0)
    return sch_fail_at(sch, prim, realize, "block %s has no enclosing scope block", realize->u.realize.block->name);
  info->scope = path->stmts[scope_depth];
  info->nconsumers = nconsumers > 0 ? nconsumers : 0;
  if (info->nconsumers == 0) return MLC_OK;
  info->consumers = mlc_arena_alloc(sch_arena(sch), sizeof(tir_stmt_t *) * (size_t)nconsumers);
  if (!info->consumers) return mlc_error_set(MLC_ENOMEM, "%s: out of memory", prim);
  for (int i = 0; i < nconsumers; i++) {
    sch_path_t cpath;
    int rc = sch_find_block(sch, prim, consumer_blocks[i], &cpath);
    if (rc != MLC_OK) return rc;
    tir_stmt_t *c = cpath.stmts[cpath.n - 1];
    int cd = sch_path_scope_depth(&cpath, cpath.n - 1);
    if (cd < 0 || cpath.stmts[cd] != info->scope)
      return sch_fail_at(sch, prim, c, "consumer block %s is not in the scope of block %s",
                         c->u.realize.block->name, realize->u.realize.block->name);
    if (!block_reads(c->u.realize.block, info->buffer))
      return sch_fail_at(sch, prim, c, "consumer block %s does not read buffer %s", c->u.realize.block->name,
                         info->buffer->name);
    info->consumers[i] = c;
  }
  return MLC_OK;
}

/* The blocks of the scope that write info->buffer: how many, and the first. */
static int scope_writers(sch_t *sch, const cache_info_t *info, tir_stmt_t **first) {
  int n = sch_child_blocks(info->scope, NULL, 0), count = 0;
  tir_stmt_t **kids = mlc_arena_alloc(sch_arena(sch), sizeof(*kids) * (size_t)(n + 1));
  *first = NULL;
  if (!kids) return 0;
  sch_child_blocks(info->scope, kids, n);
  for (int i = 0; i < n; i++) {
    if (!block_writes(kids[i]->u.realize.block, info->buffer)) continue;
    if (!*first) *first = kids[i];
    count++;
  }
  return count;
}

/* ------------------------------------------------------------------------ */
/* Primitives                                                                */
/* ------------------------------------------------------------------------ */

/* Inserts the stage, records the instruction and returns the stage's RV. */
static int finish(sch_t *sch, cache_info_t *info, sch_rv_t *out, sch_inst_id_t kind, sch_rv_t block,
                  const sch_rv_t *consumer_blocks, int buffer_index, const char *scope) {
  mlc_arena_t *a = sch_arena(sch);
  info->cache = make_cache_buffer(sch, info, scope);
  if (info->cache) make_cache_stage(sch, info, scope);
  tir_stmt_t *new_scope = info->stage ? rewrite_scope(sch, info) : NULL;
  sch_arg_t *items = mlc_arena_alloc(a, sizeof(sch_arg_t) * (size_t)(info->nconsumers + 1));
  if (!new_scope || !items || mlc_arena_failed(a))
    return mlc_error_set(MLC_ENOMEM, "%s: out of memory", kind == SCH_INST_CACHE_READ ? "cache_read" : "cache_write");
  sch_path_t path;
  MLC_ASSERT(sch_find_uid(sch, info->scope->u.realize.block->uid, &path));
  sch_replace(sch, &path, path.n - 1, new_scope);
  *out = sch_new_rv(sch, SCH_RV_BLOCK, info->stage_block->uid, 0);
  for (int i = 0; i < info->nconsumers; i++) items[i] = sch_arg_rv(consumer_blocks[i]);
  sch_arg_t list = {SCH_ARG_LIST, {0}};
  list.u.list.n = info->nconsumers;
  list.u.list.items = items;
  sch_arg_t inputs[2] = {sch_arg_rv(block), list};
  sch_arg_t attrs[2] = {sch_arg_int(buffer_index), sch_arg_str(scope)};
  sch_record(sch, kind, inputs, 2, attrs, 2, out, 1, NULL);
  return MLC_OK;
}

/* The later blocks of the scope that read what the block at bpath writes
 * (TVM's RAW dependences), leaving out the consumers given to `except`. */
static int raw_consumers(sch_t *sch, const sch_path_t *bpath, tir_stmt_t ***out, const cache_info_t *except) {
  tir_stmt_t **all = NULL;
  int nall = 0, n = 0;
  if (sch_block_consumers(sch, bpath, &all, &nall) != MLC_OK) nall = 0;
  const tir_block_t *w = bpath->stmts[bpath->n - 1]->u.realize.block;
  for (int i = 0; i < nall; i++) {
    bool reads = false;
    for (int k = 0; k < w->nwrites; k++) reads |= block_reads(all[i]->u.realize.block, w->writes[k].buffer);
    if (reads && !(except && is_given_consumer(except, all[i]))) all[n++] = all[i];
  }
  *out = all;
  return n;
}

/* cache_read of a buffer with a writer in the scope: the stage follows the
 * writer and precedes the first consumer. */
static void locate_after_writer(sch_t *sch, cache_info_t *info, tir_stmt_t *writer) {
  sch_path_t wpath;
  MLC_ASSERT(sch_find_uid(sch, writer->u.realize.block->uid, &wpath));
  tir_stmt_t **related = info->consumers;
  int nrelated = info->nconsumers;
  if (nrelated == 0) nrelated = raw_consumers(sch, &wpath, &related, NULL);
  detect_location(info, writer, related, nrelated);
  relax_written_region(sch, info, &wpath);
  info->full = info->loc->kind == TIR_FOR;
}

/* cache_read of an input of the scope: the stage opens the scope and copies
 * the region the scope reads (all of it at the root). */
static void locate_at_scope_start(sch_t *sch, cache_info_t *info) {
  const tir_block_t *scope = info->scope->u.realize.block;
  const tir_region_t *r = region_of(scope->reads, scope->nreads, info->buffer);
  tir_region_t full;
  if (!r) {
    full = tir_region_full(sch_arena(sch), info->buffer);
    r = &full;
  }
  info->loc = info->scope;
  info->pos = 0;
  info->region = r->ranges;
  info->full = false;
}

int sch_cache_read(sch_t *sch, sch_rv_t *out, sch_rv_t block, int read_buffer_index, const char *scope,
                   const sch_rv_t *consumer_blocks, int nconsumers) {
  static const char prim[] = "cache_read";
  cache_info_t info = {.is_read = true};
  sch_path_t path;
  if (!sch_storage_scope_valid(scope))
    return sch_fail(sch, prim, "invalid storage scope \"%s\"", scope ? scope : "");
  int rc = sch_find_block(sch, prim, block, &path);
  if (rc == MLC_OK) rc = sch_nth_access_buffer(sch, prim, &path, read_buffer_index, false, &info.buffer);
  if (rc == MLC_OK) rc = check_scope_and_consumers(sch, prim, &info, &path, consumer_blocks, nconsumers);
  if (rc != MLC_OK) return rc;
  tir_stmt_t *writer = NULL;
  int nwriters = scope_writers(sch, &info, &writer);
  if (nwriters > 1)
    return sch_fail_at(sch, prim, info.scope, "buffer %s is written by %d blocks in the scope of block %s; "
                       "cache_read needs at most one writer", info.buffer->name, nwriters,
                       path.stmts[path.n - 1]->u.realize.block->name);
  info.an = tir_analyzer_new(sch_arena(sch));
  if (!info.an) return mlc_error_set(MLC_ENOMEM, "%s: out of memory", prim);
  if (writer) locate_after_writer(sch, &info, writer);
  else locate_at_scope_start(sch, &info);
  return finish(sch, &info, out, SCH_INST_CACHE_READ, block, consumer_blocks, read_buffer_index, scope);
}

int sch_cache_write(sch_t *sch, sch_rv_t *out, sch_rv_t block, int write_buffer_index, const char *scope,
                    const sch_rv_t *consumer_blocks, int nconsumers) {
  static const char prim[] = "cache_write";
  cache_info_t info = {.is_read = false};
  sch_path_t path;
  if (!sch_storage_scope_valid(scope))
    return sch_fail(sch, prim, "invalid storage scope \"%s\"", scope ? scope : "");
  int rc = sch_find_block(sch, prim, block, &path);
  if (rc == MLC_OK) rc = sch_nth_access_buffer(sch, prim, &path, write_buffer_index, true, &info.buffer);
  if (rc == MLC_OK) rc = check_scope_and_consumers(sch, prim, &info, &path, consumer_blocks, nconsumers);
  if (rc != MLC_OK) return rc;
  tir_stmt_t *first = NULL;
  int nwriters = scope_writers(sch, &info, &first);
  info.writer = path.stmts[path.n - 1];
  if (nwriters != 1)
    return sch_fail_at(sch, prim, info.scope, "buffer %s is written by %d blocks in the scope; cache_write "
                       "needs block %s to be its only writer", info.buffer->name, nwriters,
                       info.writer->u.realize.block->name);
  info.an = tir_analyzer_new(sch_arena(sch));
  if (!info.an) return mlc_error_set(MLC_ENOMEM, "%s: out of memory", prim);
  /* The write-back goes before the first consumer that keeps reading the
   * original buffer (given consumers read the cache). */
  tir_stmt_t **related = NULL;
  int nrelated = raw_consumers(sch, &path, &related, &info);
  detect_location(&info, info.writer, related, nrelated);
  relax_written_region(sch, &info, &path);
  info.full = info.loc->kind == TIR_FOR;
  return finish(sch, &info, out, SCH_INST_CACHE_WRITE, block, consumer_blocks, write_buffer_index, scope);
}
