/*
 * rule_mlt.c - MultiLevelTiling (MetaSchedule's multi_level_tiling.cc), the
 * rule that makes the loop nest of a reduction with data reuse (matmul,
 * convolutions) into the tiled form the search tunes.
 *
 * For a block that needs it (ms_needs_multi_level_tiling: one write, reads
 * with reuse, trivial binding, not yet tiled), with the CPU structure
 * "SSRSRS":
 *   1. annotate the block with meta_schedule.tiling_structure;
 *   2. TileLoopNest: each spatial loop is split into as many tiles as the
 *      structure has S levels (4), each reduction loop into as many as it
 *      has R levels (2), the factors drawn by sample_perfect_tile (max
 *      innermost factor 64); the tiles are reordered level by level
 *      (S0 S1 R0 S2 R1 S3, each level listing its loops in block order);
 *   3. AddWriteReuse: with "may" at levels {1, 2} in "global", three
 *      schedules: no cache; cache_write reverse_compute_at under the last
 *      loop of level 1; the same under level 2. When the block already has
 *      a single consumer that is an elementwise epilogue (IsWriteCache), the
 *      consumer itself is moved under those loops instead of a new cache,
 *      and the unmoved schedule comes last. "must" omits the schedule
 *      without the cache.
 * A fork whose primitive fails is dropped.
 *
 * On GPUs (ms_rule_mlt_cuda, "SSSRRSRS"; docs/search/gpu.md), as TVM's
 * DefaultCUDA: after the reorder the loops of levels 1-3 are fused and bound
 * to blockIdx.x, vthread.x and threadIdx.x, the block is annotated with the
 * thread counts its kernel may have (thread_extent_{low,high}_inclusive);
 * the write cache is `must` in "local" under the threadIdx.x loop, and
 * AddReadReuse puts a `must` read cache in "shared" for each input under the
 * last loop of level 4, its loops over the buffer fused and annotated for
 * RewriteCooperativeFetch with a sampled vector length.
 *
 * Departure from TVM: a block whose loops do not all have constant extents
 * is left alone (TVM would fail in sample_perfect_tile and lose the space).
 */
#include "search/space/rules.h"

#include <string.h>

#define MLT_MAX_LEVELS 16

static const ms_mlt_params_t cpu_params = {
    .structure = "SSRSRS",
    .max_innermost_factor = 64,
    .reuse_write = {MS_REUSE_MAY, 2, {1, 2}, "global"},
};

static const ms_mlt_params_t cuda_params = {
    .structure = "SSSRRSRS",
    .max_innermost_factor = 64,
    .reuse_write = {MS_REUSE_MUST, 1, {3}, "local"},
    .reuse_read = {MS_REUSE_MUST, 1, {4}, "shared"},
    .ntile_binds = 3,
    .tile_binds = {"blockIdx.x", "vthread.x", "threadIdx.x"},
    .nvector_load_lens = 6,
    .vector_load_lens = {1, 2, 3, 4, 8, 16},
};

/* A tiled schedule: the last loop of each level (where caches go). */
typedef struct {
  sch_t *sch;
  sch_rv_t block;
  int nlevels;
  sch_rv_t level_last[MLT_MAX_LEVELS];
  int64_t spatial_product; /* of the spatial loops tiled; -1 when not constant */
} mlt_state_t;

static bool const_loop_extents(const sch_path_t *path) {
  tir_stmt_t *loops[SCH_MAX_DEPTH];
  int n = ms_block_loops(path, loops, SCH_MAX_DEPTH);
  int64_t ext;
  for (int i = 0; i < n; i++)
    if (!tir_as_int(loops[i]->u.loop.extent, &ext)) return false;
  return true;
}

/* Positions of the levels of kind c ('S' or 'R') in the structure. */
static int level_indices(const char *structure, char c, int *out) {
  int n = 0;
  for (int i = 0; structure[i] && i < MLT_MAX_LEVELS; i++)
    if (structure[i] == c) out[n++] = i;
  return n;
}

/* Splits `loop` into nt tiles (sampled) and files them under their levels. */
static int tile_one_loop(sch_t *sch, sch_rv_t loop, const int *idx, int nt, int max_innermost, sch_rv_t *tiles,
                         int *ntiles, int cap) {
  if (nt == 1) {
    tiles[idx[0] * cap + ntiles[idx[0]]++] = loop;
    return MLC_OK;
  }
  const sch_rv_t *factors, *split;
  int rc = sch_sample_perfect_tile(sch, &factors, loop, nt, max_innermost, NULL);
  if (rc != MLC_OK) return rc;
  sch_arg_t args[MLT_MAX_LEVELS];
  for (int j = 0; j < nt; j++) args[j] = sch_arg_rv(factors[j]);
  if ((rc = sch_split(sch, &split, loop, args, nt, true)) != MLC_OK) return rc;
  for (int j = 0; j < nt; j++) tiles[idx[j] * cap + ntiles[idx[j]]++] = split[j];
  return MLC_OK;
}

/* Step 4 of TileLoopNest on GPUs: the loops of each of the first
 * ntile_binds levels fused and bound to that level's thread axis. */
static int bind_tiles(const ms_mlt_params_t *p, mlt_state_t *st, const sch_rv_t *tiles, const int *ntiles, int cap) {
  int n = p->ntile_binds < st->nlevels ? p->ntile_binds : st->nlevels;
  for (int l = 0; l < n; l++) {
    if (ntiles[l] == 0) continue;
    sch_rv_t fused;
    int rc = sch_fuse(st->sch, &fused, &tiles[l * cap], ntiles[l], true);
    if (rc == MLC_OK) rc = sch_bind(st->sch, fused, p->tile_binds[l]);
    if (rc != MLC_OK) return rc;
    st->level_last[l] = fused;
  }
  return MLC_OK;
}

/* The spatial loops' extent product (-1 when one is not constant). */
static int64_t spatial_product(const sch_t *sch, const sch_rv_t *loops, const tir_iter_type_t *types, int n) {
  int64_t prod = 1, ext;
  for (int i = 0; i < n; i++) {
    tir_stmt_t *loop;
    if (types[i] != TIR_ITER_SPATIAL) continue;
    if (sch_get_loop_node(sch, loops[i], &loop) != MLC_OK || !tir_as_int(loop->u.loop.extent, &ext)) return -1;
    prod *= ext;
  }
  return prod;
}

/* TileLoopNest: split every spatial/reduction loop and reorder by level. */
static int tile_loop_nest(const ms_mlt_params_t *p, mlt_state_t *st) {
  int s_idx[MLT_MAX_LEVELS], r_idx[MLT_MAX_LEVELS];
  int ns = level_indices(p->structure, 'S', s_idx), nr = level_indices(p->structure, 'R', r_idx);
  const sch_rv_t *loops;
  int n, rc;
  if ((rc = sch_get_loops(st->sch, &loops, &n, st->block)) != MLC_OK) return rc;
  tir_block_t *b;
  if ((rc = sch_get_block_node(st->sch, st->block, &b)) != MLC_OK) return rc;
  if (n != b->niter_vars || n > SCH_MAX_DEPTH)
    return mlc_error_set(MLC_ESCHEDULE, "MultiLevelTiling: binding not trivial");
  tir_iter_type_t types[SCH_MAX_DEPTH]; /* loop i binds iter var i (trivial binding) */
  for (int i = 0; i < n; i++) types[i] = b->iter_vars[i].type;
  if (p->ntile_binds > 0) st->spatial_product = spatial_product(st->sch, loops, types, n); /* GPU only */
  /* tiles[l * cap + k]: the k-th loop of level l (at most one per loop);
   * order: every tile, level by level. */
  int cap = n, ntiles[MLT_MAX_LEVELS] = {0}, norder = 0;
  size_t size = (size_t)st->nlevels * (size_t)cap + 1;
  sch_rv_t *tiles = mlc_calloc(2 * size, sizeof(*tiles));
  if (!tiles) return mlc_error_set(MLC_ENOMEM, "MultiLevelTiling: out of memory");
  sch_rv_t *order = tiles + size;
  for (int i = 0; i < n && rc == MLC_OK; i++) {
    bool s = types[i] == TIR_ITER_SPATIAL;
    int nt = s ? ns : types[i] == TIR_ITER_REDUCE ? nr : 0;
    if (nt == 0) continue; /* other kinds (or no level for this kind): left where it is */
    rc = tile_one_loop(st->sch, loops[i], s ? s_idx : r_idx, nt, p->max_innermost_factor, tiles, ntiles, cap);
  }
  for (int l = 0; l < st->nlevels && rc == MLC_OK; l++) {
    for (int k = 0; k < ntiles[l]; k++) order[norder++] = tiles[l * cap + k];
    st->level_last[l] = ntiles[l] ? tiles[l * cap + ntiles[l] - 1] : SCH_RV_NONE;
  }
  if (rc == MLC_OK) rc = sch_reorder(st->sch, order, norder);
  if (rc == MLC_OK) rc = bind_tiles(p, st, tiles, ntiles, cap);
  mlc_free(tiles);
  return rc;
}

/* A fork of st with `block` moved under the last loop of `level`; dropped
 * (not an error) when reverse_compute_at fails. */
static int place_fork(const mlt_state_t *st, sch_rv_t block, int level, sch_t ***out, int *nout, int *cap) {
  if (level < 1 || level > st->nlevels || st->level_last[level - 1] == SCH_RV_NONE) return MLC_OK;
  sch_t *f;
  int rc = ms_fork(&f, st->sch);
  if (rc != MLC_OK) return rc;
  if (sch_reverse_compute_at(f, block, st->level_last[level - 1], true, -1) != MLC_OK) {
    ms_drop_fork(f, "MultiLevelTiling");
    return MLC_OK;
  }
  return ms_out_push(out, nout, cap, f);
}

static int place_at_levels(const ms_reuse_t *r, const mlt_state_t *st, sch_rv_t block, sch_t ***out, int *nout,
                           int *cap) {
  int rc = MLC_OK;
  for (int i = 0; i < r->nlevels && rc == MLC_OK; i++) rc = place_fork(st, block, r->levels[i], out, nout, cap);
  return rc;
}

/* "may": an existing elementwise consumer is placed like a cache (case 1);
 * otherwise the uncached schedule is kept (case 2). *done when case 1 took
 * st (handed out). */
static int may_reuse(const ms_reuse_t *r, mlt_state_t *st, sch_t ***out, int *nout, int *cap, bool *done) {
  const sch_rv_t *consumers;
  int n, rc;
  *done = false;
  if ((rc = sch_get_consumers(st->sch, &consumers, &n, st->block)) != MLC_OK) return rc;
  tir_block_t *cb = NULL;
  if (n == 1 && sch_get_block_node(st->sch, consumers[0], &cb) == MLC_OK && ms_block_is_write_cache(cb)) {
    *done = true;
    if ((rc = place_at_levels(r, st, consumers[0], out, nout, cap)) != MLC_OK) {
      sch_free(st->sch);
      return rc;
    }
    return ms_out_push(out, nout, cap, st->sch);
  }
  sch_t *plain;
  if ((rc = ms_fork(&plain, st->sch)) != MLC_OK) return rc;
  return ms_out_push(out, nout, cap, plain);
}

/* AddWriteReuse; takes st->sch. */
static int add_write_reuse(const ms_reuse_t *r, mlt_state_t *st, sch_t ***out, int *nout, int *cap) {
  if (r->req == MS_REUSE_NONE) return ms_out_push(out, nout, cap, st->sch);
  int rc = MLC_OK;
  if (r->req == MS_REUSE_MAY) {
    bool done;
    rc = may_reuse(r, st, out, nout, cap, &done);
    if (done) return rc;
  }
  sch_rv_t cache;
  if (rc == MLC_OK && sch_cache_write(st->sch, &cache, st->block, 0, r->scope, NULL, 0) == MLC_OK)
    rc = place_at_levels(r, st, cache, out, nout, cap);
  else if (rc == MLC_OK || rc == MLC_ESCHEDULE)
    MLC_DEBUG("MultiLevelTiling: write cache: %s", sch_error(st->sch));
  sch_free(st->sch);
  return rc == MLC_ESCHEDULE ? MLC_OK : rc; /* a failed primitive only drops its fork */
}

/* ------------------------------------------------------------------------ */
/* AddReadReuse (GPU: shared-memory caches with cooperative fetch)          */
/* ------------------------------------------------------------------------ */

/* The vector lengths a fetch of `dtype` may use (TVM's filter: 16 bytes at
 * most for float32 and float16, any for int8). */
static int valid_vector_lens(const int *lens, int nlens, tir_dtype_t dtype, int64_t *out) {
  int n = 0;
  for (int i = 0; i < nlens; i++) {
    int v = lens[i];
    bool ok = true;
    if (dtype.code == TIR_CODE_FLOAT && dtype.bits == 32) ok = v <= 4;
    else if (dtype.code == TIR_CODE_FLOAT && dtype.bits == 16) ok = (v == 1 || v % 2 == 0) && v <= 8;
    else if (dtype.code == TIR_CODE_INT && dtype.bits == 8) ok = v <= 16;
    if (ok) out[n++] = v;
  }
  return n;
}

/* AnnotateCooperativeFetching: the fetch's vector length, sampled. */
static int annotate_fetch(const int *lens, int nlens, sch_t *sch, sch_rv_t cache) {
  tir_block_t *b;
  int rc = sch_get_block_node(sch, cache, &b);
  if (rc != MLC_OK) return rc;
  if (b->nwrites != 1) return mlc_error_set(MLC_ESCHEDULE, "MultiLevelTiling: read cache writes %d buffers", b->nwrites);
  int64_t valid[MS_MLT_MAX_VECTOR_LENS];
  double probs[MS_MLT_MAX_VECTOR_LENS];
  int n = valid_vector_lens(lens, nlens < MS_MLT_MAX_VECTOR_LENS ? nlens : MS_MLT_MAX_VECTOR_LENS,
                            b->writes[0].buffer->dtype, valid);
  if (n == 0) return MLC_OK;
  for (int i = 0; i < n; i++) probs[i] = 1.0 / n;
  sch_rv_t len;
  rc = sch_sample_categorical(sch, &len, valid, probs, n, NULL);
  if (rc == MLC_OK) rc = sch_annotate(sch, cache, MS_ANN_COOPERATIVE_FETCH, sch_arg_rv(len));
  return rc;
}

int ms_mlt_cooperative_read(sch_t *sch, sch_rv_t block, int read, int ndim, const char *scope, sch_rv_t loop,
                            const int *lens, int nlens) {
  sch_rv_t cache, fused;
  const sch_rv_t *loops;
  int n;
  int rc = sch_cache_read(sch, &cache, block, read, scope, &block, 1);
  if (rc == MLC_OK) rc = sch_compute_at(sch, cache, loop, true, -1);
  if (rc == MLC_OK) rc = sch_get_loops(sch, &loops, &n, cache);
  if (rc == MLC_OK && n < ndim) rc = mlc_error_set(MLC_ESCHEDULE, "MultiLevelTiling: read cache has %d loops", n);
  if (rc == MLC_OK) rc = sch_fuse(sch, &fused, loops + (n - ndim), ndim, true);
  if (rc == MLC_OK) rc = annotate_fetch(lens, nlens, sch, cache);
  return rc;
}

/* The read caches of one state at one level, on sch (a fork). */
static int cache_reads(const ms_mlt_params_t *p, sch_t *sch, sch_rv_t block, sch_rv_t loop) {
  tir_block_t *b;
  int rc = sch_get_block_node(sch, block, &b);
  if (rc != MLC_OK) return rc;
  int nreads = b->nreads, ndims[TIR_MAX_DIMS * 4];
  if (nreads > (int)(sizeof ndims / sizeof ndims[0]))
    return mlc_error_set(MLC_ESCHEDULE, "MultiLevelTiling: %d reads", nreads);
  for (int i = 0; i < nreads; i++) /* GetReadBufferNDims, before any cache */
    ndims[i] = b->reads[i].buffer == b->writes[0].buffer ? -1 : b->reads[i].buffer->ndim;
  for (int i = 0; i < nreads && rc == MLC_OK; i++)
    if (ndims[i] > 0)
      rc = ms_mlt_cooperative_read(sch, block, i, ndims[i], p->reuse_read.scope, loop, p->vector_load_lens,
                                   p->nvector_load_lens);
  return rc;
}

/* AddReadReuse on the schedules out[from .. *nout): each is replaced by one
 * fork per level (a fork whose primitive fails is dropped). */
static int add_read_reuse(const ms_mlt_params_t *p, const mlt_state_t *st, sch_t ***out, int *nout, int *cap,
                          int from) {
  const ms_reuse_t *r = &p->reuse_read;
  if (r->req == MS_REUSE_NONE) return MLC_OK;
  int end = *nout, rc = MLC_OK;
  sch_t **mine = mlc_malloc(sizeof(*mine) * (size_t)(end - from + 1));
  if (!mine) return mlc_error_set(MLC_ENOMEM, "MultiLevelTiling: out of memory");
  memcpy(mine, *out + from, sizeof(*mine) * (size_t)(end - from));
  *nout = from;
  for (int k = 0; k < end - from; k++) {
    for (int l = 0; l < r->nlevels && rc == MLC_OK; l++) {
      int level = r->levels[l];
      if (level < 1 || level > st->nlevels || st->level_last[level - 1] == SCH_RV_NONE) continue;
      sch_t *f;
      if ((rc = ms_fork(&f, mine[k])) != MLC_OK) break;
      int prc = cache_reads(p, f, st->block, st->level_last[level - 1]);
      if (prc == MLC_ENOMEM) rc = prc;
      if (prc != MLC_OK) ms_drop_fork(f, "MultiLevelTiling");
      else rc = ms_out_push(out, nout, cap, f);
    }
    sch_free(mine[k]);
  }
  mlc_free(mine);
  return rc;
}

int ms_mlt_annotate_thread_extents(sch_t *sch, sch_rv_t block, const mlc_target_t *t, int64_t spatial_product) {
  if (!ms_target_is_gpu(t) || t->thread_warp_size <= 0 || t->max_threads_per_block <= 0) return MLC_OK;
  int64_t low = spatial_product > 2 * (int64_t)t->thread_warp_size ? t->thread_warp_size : 1;
  int rc = sch_annotate(sch, block, MS_ANN_THREAD_EXTENT_LOW, sch_arg_int(low));
  if (rc == MLC_OK) rc = sch_annotate(sch, block, MS_ANN_THREAD_EXTENT_HIGH, sch_arg_int(t->max_threads_per_block));
  return rc;
}

static int mlt_apply(const ms_rule_t *self, const ms_ctx_t *ctx, sch_t *sch, const char *name, sch_t ***out,
                     int *nout, int *cap) {
  const ms_mlt_params_t *p = self->params;
  sch_path_t path;
  if (!ms_find_block(sch, name, &path) || ms_is_root(&path) || !ms_needs_multi_level_tiling(&path) ||
      !const_loop_extents(&path))
    return ms_out_push(out, nout, cap, sch);
  mlt_state_t st = {sch, SCH_RV_NONE, (int)strlen(p->structure), {0}, -1};
  if (st.nlevels > MLT_MAX_LEVELS) {
    sch_free(sch);
    return mlc_error_set(MLC_EINVAL, "MultiLevelTiling: structure \"%s\" has more than %d levels", p->structure,
                         MLT_MAX_LEVELS);
  }
  int rc = ms_block_rv(sch, name, &st.block);
  if (rc == MLC_OK) rc = sch_annotate(sch, st.block, MS_ANN_TILING_STRUCTURE, sch_arg_str(p->structure));
  if (rc == MLC_OK) rc = tile_loop_nest(p, &st);
  if (rc == MLC_OK && p->ntile_binds > 0)
    rc = ms_mlt_annotate_thread_extents(sch, st.block, &ctx->target, st.spatial_product);
  if (rc == MLC_ENOMEM) {
    sch_free(sch);
    return rc;
  }
  if (rc != MLC_OK) {
    ms_drop_fork(sch, "MultiLevelTiling");
    return MLC_OK;
  }
  int from = *nout;
  rc = add_write_reuse(&p->reuse_write, &st, out, nout, cap);
  if (rc == MLC_OK) rc = add_read_reuse(p, &st, out, nout, cap, from);
  return rc;
}

const ms_rule_t ms_rule_mlt = {"MultiLevelTiling", mlt_apply, NULL, &cpu_params};
const ms_rule_t ms_rule_mlt_cuda = {"MultiLevelTiling", mlt_apply, NULL, &cuda_params};
