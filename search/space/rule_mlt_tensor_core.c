/*
 * rule_mlt_tensor_core.c - MultiLevelTilingTensorCore (MetaSchedule's
 * multi_level_tiling_tensor_core.cc) with the WMMA 16x16x16 intrinsics of
 * schedule/intrin/builtin_cuda.c: the design space's tensor-core sketches
 * for CUDA targets of sm_70 and newer (docs/search/gpu.md).
 *
 * For a block that MultiLevelTiling would tile and whose computation is a
 * matmul the intrinsics take (C[i, j] += f32(A[i, k]) * f32(B[k, j]) over
 * float16 inputs, with any further loops, such as a batch, outside), one
 * sketch:
 *
 *  1. the intrinsic's tile (TVM's TileWithTensorIntrin): the loops of i, j
 *     and k split by 16, the inner parts moved innermost in the
 *     description's order and blockized; the outer block is annotated
 *     meta_schedule.auto_tensorize (the mma), .._init (the fill) and
 *     warp_execution (a warp runs each tile);
 *  2. the outer loops tiled "SSSRRSRS" (spatial in five, reduction in
 *     three, max innermost factor 4), levels 1-3 fused and bound to
 *     blockIdx.y, blockIdx.x and threadIdx.y (one warp per threadIdx.y);
 *  3. the accumulator: cache_write in "wmma.accumulator" under the
 *     threadIdx.y loop, its 16x16 tiles blockized for the store intrinsic
 *     (straight to the output: TVM stages it in shared memory first);
 *  4. the operands: cache_read in "shared" under the last loop of level 4
 *     (the outer reduction tile), fused and annotated for cooperative fetch
 *     (vector lengths filtered by dtype), and from there cache_read in
 *     "wmma.matrix_a" / "wmma.matrix_b" under the last loop of level 5, their
 *     16x16 tiles blockized for the load intrinsics.
 * RewriteCooperativeFetch splits the copies over threadIdx.y and the warp's
 * 32 lanes, RewriteReductionBlock moves the fill onto the init block, and
 * RewriteTensorize replaces every annotated tile by its intrinsic.
 *
 * Which loops form the tile is found by trying (TVM's
 * CheckAutoTensorizeApplicable): for each choice of the A-row and B-column
 * iterators (in block order) and the reduction iterator (the last first)
 * whose extents 16 divides and whose reads have the description's dtypes,
 * the sketch is built and, on a copy, its tiles tensorized after the init
 * is split off;
 * the first choice that tensorizes gives the sketch. A block no intrinsic
 * group takes, a target that is not cuda sm_70+, or a block not worth
 * tiling goes to the fallback rule (the GPU MultiLevelTiling), as TVM's
 * MultiLevelTilingTensorCore falls back to MultiLevelTiling.
 */
#include "search/space/rules.h"

#include <stdlib.h>
#include <string.h>

#include "search/postproc/postproc.h"

#define MLTC "MultiLevelTilingTensorCore"
#define MAX_LEVELS 8
#define MAX_LOOPS 16

static const ms_mlt_tc_params_t cuda_tc_params = {
    .ngroups = 1,
    .groups = {{"wmma_fill_16x16x16_f32", "wmma_load_16x16x16_f16_a_shared", "wmma_load_16x16x16_f16_b_shared",
                "wmma_sync_16x16x16_f16f16f32", "wmma_store_16x16x16_f32_global"}},
    .min_sm = 70,
    .structure = "SSSRRSRS",
    .max_innermost_factor = 4,
    .tile_binds = {"blockIdx.y", "blockIdx.x", "threadIdx.y"},
    .acc_level = 3,
    .read_level = 4,
    .frag_level = 5,
    .read_scope = "shared",
    .nvector_load_lens = 6,
    .vector_load_lens = {1, 2, 3, 4, 8, 16},
    .fallback = &ms_rule_mlt_cuda,
};

/* The compute intrinsic's tile: extents of its i, j, k loops and the dtypes
 * of its A, B and C. */
typedef struct {
  int64_t ext[3];
  tir_dtype_t a, b, c;
} desc_tile_t;

/* A two-dimensional tile of a buffer. */
typedef struct {
  int dims[2];    /* ascending */
  int64_t ext[2]; /* the intrinsic's tile along each */
} tc_tile2_t;

/* How the block maps onto the intrinsic: iter vars it = (i, j, k), the
 * reads of A and B, and the tiles of A (i, k), B (k, j) and C (i, j). */
typedef struct {
  int it[3];
  int ia, ib;
  tc_tile2_t a, b, c;
} tc_map_t;

/* The tiles of the outer block: the loops of each level; a bound level
 * holds its fused loop. */
typedef struct {
  sch_rv_t outer;
  int nlevels;
  int nper[MAX_LEVELS];
  sch_rv_t tiles[MAX_LEVELS][MAX_LOOPS];
  int64_t spatial_product;
} tc_state_t;

/* ------------------------------------------------------------------------ */
/* The description and the block                                             */
/* ------------------------------------------------------------------------ */

/* The compute description: three loops over one block reading C, A, B (C
 * the written buffer). false for other shapes. */
static bool read_desc(const sch_intrin_t *in, desc_tile_t *d) {
  tir_block_t *root = in ? tir_func_root_block(in->desc) : NULL;
  if (!root) return false;
  const tir_stmt_t *s = root->body;
  int n = 0;
  for (; s->kind == TIR_FOR; s = s->u.loop.body) {
    if (n == 3 || !tir_as_int(s->u.loop.extent, &d->ext[n])) return false;
    n++;
  }
  if (n != 3 || s->kind != TIR_BLOCK_REALIZE) return false;
  const tir_block_t *b = s->u.realize.block;
  if (b->nwrites != 1 || b->nreads != 3) return false;
  int k = 0;
  tir_dtype_t ab[2];
  for (int i = 0; i < 3; i++)
    if (b->reads[i].buffer != b->writes[0].buffer) {
      if (k == 2) return false;
      ab[k++] = b->reads[i].buffer->dtype;
    }
  d->a = ab[0];
  d->b = ab[1];
  d->c = b->writes[0].buffer->dtype;
  return k == 2;
}

/* The one dimension of region r whose index uses v, or -1 (none, or
 * several). */
static int dim_of(const tir_region_t *r, const tir_var_t *v) {
  int found = -1;
  for (int d = 0; d < r->ndim; d++)
    if (tir_expr_uses_var(r->ranges[d].min, v)) {
      if (found >= 0) return -1;
      found = d;
    }
  return found;
}

/* Region r is indexed by x and y (in different dimensions) and not by z;
 * the tile's dims ascending, with the extents ex, ey of x and y. */
static bool read_uses(const tir_region_t *r, const tir_var_t *x, const tir_var_t *y, const tir_var_t *z,
                      int64_t ex, int64_t ey, tc_tile2_t *t) {
  int dx = dim_of(r, x), dy = dim_of(r, y);
  if (dx < 0 || dy < 0 || dx == dy) return false;
  for (int d = 0; d < r->ndim; d++)
    if (tir_expr_uses_var(r->ranges[d].min, z)) return false;
  bool swap = dy < dx;
  t->dims[0] = swap ? dy : dx;
  t->dims[1] = swap ? dx : dy;
  t->ext[0] = swap ? ey : ex;
  t->ext[1] = swap ? ex : ey;
  return true;
}

/* The reads of A (i, k) and B (k, j) for the choice m->it, with the
 * description's dtypes. */
static bool find_operands(const tir_block_t *b, const desc_tile_t *d, tc_map_t *m) {
  const tir_var_t *vi = b->iter_vars[m->it[0]].var, *vj = b->iter_vars[m->it[1]].var,
                  *vk = b->iter_vars[m->it[2]].var;
  m->ia = m->ib = -1;
  for (int i = 0; i < b->nreads; i++) {
    const tir_region_t *r = &b->reads[i];
    if (r->buffer == b->writes[0].buffer) continue;
    if (m->ia < 0 && tir_dtype_eq(r->buffer->dtype, d->a) && read_uses(r, vi, vk, vj, d->ext[0], d->ext[2], &m->a))
      m->ia = i;
    else if (m->ib < 0 && tir_dtype_eq(r->buffer->dtype, d->b) &&
             read_uses(r, vk, vj, vi, d->ext[2], d->ext[1], &m->b))
      m->ib = i;
  }
  return m->ia >= 0 && m->ib >= 0 && tir_dtype_eq(b->writes[0].buffer->dtype, d->c) &&
         read_uses(&b->writes[0], vi, vj, vk, d->ext[0], d->ext[1], &m->c);
}

static bool divides(const tir_iter_var_t *iv, int64_t tile) {
  int64_t ext;
  return tir_is_const_int(iv->dom.min, 0) && tir_as_int(iv->dom.extent, &ext) && ext % tile == 0;
}

/* A reduction worth tiling, with trivial bindings and spatial/reduction
 * iterators only. */
static bool block_fits(const sch_path_t *path) {
  const tir_block_t *b = ms_path_block(path);
  if (ms_is_root(path) || !b->init || b->nwrites != 1 || b->niter_vars > MAX_LOOPS - 3 ||
      !ms_needs_multi_level_tiling(path))
    return false;
  for (int i = 0; i < b->niter_vars; i++)
    if (b->iter_vars[i].type != TIR_ITER_SPATIAL && b->iter_vars[i].type != TIR_ITER_REDUCE) return false;
  return true;
}

static bool target_fits(const ms_ctx_t *ctx, const ms_mlt_tc_params_t *p) {
  if (!ctx || ctx->target.kind != MLC_TARGET_CUDA || strncmp(ctx->target.arch, "sm_", 3) != 0) return false;
  return atoi(ctx->target.arch + 3) >= p->min_sm;
}

/* ------------------------------------------------------------------------ */
/* Building the sketch                                                       */
/* ------------------------------------------------------------------------ */

/* Splits `loop` by `ext`, the parts in *outer / *inner. */
static int split_by(sch_t *s, sch_rv_t loop, int64_t ext, sch_rv_t *outer, sch_rv_t *inner) {
  const sch_rv_t *parts;
  sch_arg_t f[2] = {sch_arg_none(), sch_arg_int(ext)};
  int rc = sch_split(s, &parts, loop, f, 2, true);
  if (rc != MLC_OK) return rc;
  *outer = parts[0];
  *inner = parts[1];
  return MLC_OK;
}

/* Step 1: the 16x16x16 tile of (i, j, k) blockized into st->outer. */
static int tile_for_intrin(sch_t *s, sch_rv_t block, const tc_map_t *m, const desc_tile_t *d, tc_state_t *st) {
  const sch_rv_t *got;
  int n, rc;
  if ((rc = sch_get_loops(s, &got, &n, block)) != MLC_OK) return rc;
  if (n > MAX_LOOPS - 3) return mlc_error_set(MLC_ESCHEDULE, MLTC ": %d loops", n);
  sch_rv_t order[MAX_LOOPS];
  memcpy(order, got, sizeof(sch_rv_t) * (size_t)n);
  for (int t = 0; t < 3; t++)
    if ((rc = split_by(s, order[m->it[t]], d->ext[t], &order[m->it[t]], &order[n + t])) != MLC_OK) return rc;
  if ((rc = sch_reorder(s, order, n + 3)) != MLC_OK) return rc;
  return sch_blockize(s, &st->outer, order[n], true);
}

static int add_tile(tc_state_t *st, int level, sch_rv_t loop) {
  if (st->nper[level] == MAX_LOOPS) return mlc_error_set(MLC_ESCHEDULE, MLTC ": too many loops");
  st->tiles[level][st->nper[level]++] = loop;
  return MLC_OK;
}

/* One loop of the outer block split into the levels idx (sampled factors). */
static int tile_loop(sch_t *s, const ms_mlt_tc_params_t *p, tc_state_t *st, sch_rv_t loop, const int *idx, int nidx) {
  if (nidx == 1) return add_tile(st, idx[0], loop);
  const sch_rv_t *vars, *parts;
  int rc = sch_sample_perfect_tile(s, &vars, loop, nidx, p->max_innermost_factor, NULL);
  sch_arg_t f[MAX_LEVELS];
  for (int i = 0; rc == MLC_OK && i < nidx; i++) f[i] = sch_arg_rv(vars[i]);
  if (rc == MLC_OK) rc = sch_split(s, &parts, loop, f, nidx, true);
  sch_rv_t copy[MAX_LEVELS];
  if (rc == MLC_OK) memcpy(copy, parts, sizeof(sch_rv_t) * (size_t)nidx);
  for (int i = 0; rc == MLC_OK && i < nidx; i++) rc = add_tile(st, idx[i], copy[i]);
  return rc;
}

/* The loops of the first levels fused and bound to the tile binds. */
static int bind_levels(sch_t *s, const ms_mlt_tc_params_t *p, tc_state_t *st) {
  for (int l = 0; l < MS_TC_NBINDS && l < st->nlevels; l++) {
    if (st->nper[l] == 0) continue;
    sch_rv_t fused;
    int rc = sch_fuse(s, &fused, st->tiles[l], st->nper[l], true);
    if (rc == MLC_OK) rc = sch_bind(s, fused, p->tile_binds[l]);
    if (rc != MLC_OK) return rc;
    st->nper[l] = 1;
    st->tiles[l][0] = fused;
  }
  return MLC_OK;
}

/* Step 2: TileLoopNest on the outer block, then the bindings. */
static int tile_nest(sch_t *s, const ms_mlt_tc_params_t *p, tc_state_t *st) {
  int sidx[MAX_LEVELS], ridx[MAX_LEVELS], ns = 0, nr = 0, n, rc;
  for (int i = 0; i < st->nlevels; i++) {
    st->nper[i] = 0;
    if (p->structure[i] == 'S') sidx[ns++] = i;
    else ridx[nr++] = i;
  }
  const sch_rv_t *got;
  if ((rc = sch_get_loops(s, &got, &n, st->outer)) != MLC_OK) return rc;
  if (n > MAX_LOOPS) return mlc_error_set(MLC_ESCHEDULE, MLTC ": %d loops", n);
  sch_rv_t loops[MAX_LOOPS];
  memcpy(loops, got, sizeof(sch_rv_t) * (size_t)n);
  st->spatial_product = 1;
  for (int i = 0; i < n; i++) {
    tir_stmt_t *node;
    int64_t ext;
    if ((rc = sch_get_loop_node(s, loops[i], &node)) != MLC_OK) return rc;
    sch_loop_type_t type = sch_loop_binding_type(node);
    if (type == SCH_LOOP_OTHER) return mlc_error_set(MLC_ESCHEDULE, MLTC ": a loop neither spatial nor reduction");
    bool spatial = type == SCH_LOOP_DATA_PAR;
    if (spatial && tir_as_int(node->u.loop.extent, &ext)) st->spatial_product *= ext;
    if ((rc = tile_loop(s, p, st, loops[i], spatial ? sidx : ridx, spatial ? ns : nr)) != MLC_OK) return rc;
  }
  sch_rv_t order[MAX_LEVELS * MAX_LOOPS];
  int norder = 0;
  for (int l = 0; l < st->nlevels; l++)
    for (int i = 0; i < st->nper[l]; i++) order[norder++] = st->tiles[l][i];
  if ((rc = sch_reorder(s, order, norder)) != MLC_OK) return rc;
  return bind_levels(s, p, st);
}

/* The last loop of a 1-based level. */
static int level_loop(const tc_state_t *st, int level, sch_rv_t *out) {
  if (level < 1 || level > st->nlevels || st->nper[level - 1] == 0)
    return mlc_error_set(MLC_ESCHEDULE, MLTC ": no loop at level %d", level);
  *out = st->tiles[level - 1][st->nper[level - 1] - 1];
  return MLC_OK;
}

/* A cache block's tiles (t: two dimensions and their extents) blockized
 * and annotated for `intrin`; the block has one loop per dimension of its
 * buffer (ndim), innermost. */
static int tile_cache(sch_t *s, sch_rv_t cache, int ndim, const tc_tile2_t *t, const char *intrin) {
  const sch_rv_t *got;
  int n, rc;
  if ((rc = sch_get_loops(s, &got, &n, cache)) != MLC_OK) return rc;
  if (n < ndim) return mlc_error_set(MLC_ESCHEDULE, MLTC ": cache has %d loops for %d dimensions", n, ndim);
  sch_rv_t l0 = got[n - ndim + t->dims[0]], l1 = got[n - ndim + t->dims[1]], o[4];
  if ((rc = split_by(s, l0, t->ext[0], &o[0], &o[2])) != MLC_OK ||
      (rc = split_by(s, l1, t->ext[1], &o[1], &o[3])) != MLC_OK)
    return rc;
  sch_rv_t tile;
  if ((rc = sch_reorder(s, o, 4)) == MLC_OK && (rc = sch_blockize(s, &tile, o[2], true)) == MLC_OK)
    rc = sch_annotate(s, tile, MS_ANN_AUTO_TENSORIZE, sch_arg_str(intrin));
  return rc;
}

/* Step 3: the accumulator fragment under the threadIdx.y loop, stored by
 * the store intrinsic. */
static int add_accumulator(sch_t *s, const ms_mlt_tc_params_t *p, const ms_tc_intrins_t *g, const tc_map_t *m,
                           const tc_state_t *st) {
  sch_rv_t cache, loop = 0;
  tir_block_t *b;
  int rc = level_loop(st, p->acc_level, &loop);
  if (rc == MLC_OK) rc = sch_cache_write(s, &cache, st->outer, 0, "wmma.accumulator", NULL, 0);
  if (rc == MLC_OK) rc = sch_reverse_compute_at(s, cache, loop, true, -1);
  if (rc == MLC_OK) rc = sch_get_block_node(s, st->outer, &b);
  if (rc == MLC_OK) rc = tile_cache(s, cache, b->writes[0].buffer->ndim, &m->c, g->store);
  return rc;
}

/* Step 4 for one operand (read `idx`, its tile dims, the fragment scope and
 * the load intrinsic): shared copy with cooperative fetch, then fragments. */
static int add_operand(sch_t *s, const ms_mlt_tc_params_t *p, const tc_state_t *st, int idx, const tc_tile2_t *t,
                       const char *scope, const char *intrin) {
  sch_rv_t frag, at_read = 0, at_frag = 0;
  tir_block_t *b;
  int rc = level_loop(st, p->read_level, &at_read);
  if (rc == MLC_OK) rc = level_loop(st, p->frag_level, &at_frag);
  if (rc == MLC_OK) rc = sch_get_block_node(s, st->outer, &b);
  if (rc != MLC_OK) return rc;
  int ndim = b->reads[idx].buffer->ndim;
  rc = ms_mlt_cooperative_read(s, st->outer, idx, ndim, p->read_scope, at_read, p->vector_load_lens,
                               p->nvector_load_lens);
  if (rc == MLC_OK) rc = sch_cache_read(s, &frag, st->outer, idx, scope, &st->outer, 1);
  if (rc == MLC_OK) rc = sch_compute_at(s, frag, at_frag, true, -1);
  if (rc == MLC_OK) rc = tile_cache(s, frag, ndim, t, intrin);
  return rc;
}

/* The whole sketch on s (steps 1-4). */
static int build(sch_t *s, const ms_ctx_t *ctx, const ms_mlt_tc_params_t *p, const ms_tc_intrins_t *g,
                 const char *name, const tc_map_t *m, const desc_tile_t *d) {
  tc_state_t st;
  memset(&st, 0, sizeof st);
  st.nlevels = (int)strlen(p->structure);
  sch_rv_t block;
  int rc = st.nlevels > MAX_LEVELS ? mlc_error_set(MLC_EINVAL, MLTC ": structure too long") : MLC_OK;
  if (rc == MLC_OK) rc = ms_block_rv(s, name, &block);
  if (rc == MLC_OK) rc = sch_annotate(s, block, MS_ANN_TILING_STRUCTURE, sch_arg_str(p->structure));
  if (rc == MLC_OK) rc = tile_for_intrin(s, block, m, d, &st);
  if (rc == MLC_OK) rc = sch_annotate(s, st.outer, MS_ANN_AUTO_TENSORIZE, sch_arg_str(g->compute));
  if (rc == MLC_OK) rc = sch_annotate(s, st.outer, MS_ANN_AUTO_TENSORIZE_INIT, sch_arg_str(g->init));
  if (rc == MLC_OK) rc = sch_annotate(s, st.outer, MS_ANN_WARP_EXECUTION, sch_arg_int(1));
  if (rc == MLC_OK) rc = tile_nest(s, p, &st);
  if (rc == MLC_OK) rc = ms_mlt_annotate_thread_extents(s, st.outer, &ctx->target, st.spatial_product);
  if (rc == MLC_OK) rc = add_accumulator(s, p, g, m, &st);
  if (rc == MLC_OK) rc = add_operand(s, p, &st, m->ia, &m->a, "wmma.matrix_a", g->load_a);
  if (rc == MLC_OK) rc = add_operand(s, p, &st, m->ib, &m->b, "wmma.matrix_b", g->load_b);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Finding the tile                                                          */
/* ------------------------------------------------------------------------ */

/* Whether the sketch's tiles tensorize: on a copy, the inits split off
 * (RewriteReductionBlock) and every annotated tile tensorized
 * (RewriteTensorize), as the postprocessors will. */
static bool tensorizes(const ms_ctx_t *ctx, const sch_t *sketch) {
  sch_t *c;
  if (sch_copy(&c, sketch) != MLC_OK) return false;
  sch_set_error_mode(c, SCH_ERRORS_FAST);
  const ms_postproc_t *rrb = &ms_postproc_rewrite_reduction_block, *rt = &ms_postproc_rewrite_tensorize;
  bool ok = rrb->apply(rrb, ctx, c) == MLC_OK && rt->apply(rt, ctx, c) == MLC_OK;
  if (!ok) MLC_DEBUG(MLTC ": does not tensorize: %s", mlc_error_last());
  sch_free(c);
  return ok;
}

/* The sketch for one choice of iterators and intrinsics, or NULL. */
static sch_t *try_choice(sch_t *sch, const ms_ctx_t *ctx, const ms_mlt_tc_params_t *p, const ms_tc_intrins_t *g,
                         const char *name, const tc_map_t *m, const desc_tile_t *d) {
  sch_t *s;
  if (sch_copy(&s, sch) != MLC_OK) return NULL;
  if (build(s, ctx, p, g, name, m, d) != MLC_OK) {
    ms_drop_fork(s, MLTC);
    return NULL;
  }
  if (tensorizes(ctx, s)) return s;
  sch_free(s);
  return NULL;
}

/* Spatial (i, j) and reduction (k) iterators whose extents the tile
 * divides (i and j in block order, the last k first); the first choice
 * that makes a sketch. */
static sch_t *find_sketch(sch_t *sch, const ms_ctx_t *ctx, const ms_mlt_tc_params_t *p, const ms_tc_intrins_t *g,
                          const char *name) {
  desc_tile_t d;
  sch_path_t path;
  if (!read_desc(sch_intrin_get(g->compute), &d) || !ms_find_block(sch, name, &path) || !block_fits(&path))
    return NULL;
  const tir_block_t *b = ms_path_block(&path);
  int nv = b->niter_vars;
  tc_map_t m;
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++)
      for (int k = nv - 1; k >= 0; k--) {
        const tir_iter_var_t *iv = b->iter_vars;
        if (i == j || iv[i].type != TIR_ITER_SPATIAL || iv[j].type != TIR_ITER_SPATIAL ||
            iv[k].type != TIR_ITER_REDUCE || !divides(&iv[i], d.ext[0]) || !divides(&iv[j], d.ext[1]) ||
            !divides(&iv[k], d.ext[2]))
          continue;
        m.it[0] = i, m.it[1] = j, m.it[2] = k;
        if (!find_operands(b, &d, &m)) continue;
        sch_t *s = try_choice(sch, ctx, p, g, name, &m, &d);
        if (s) return s;
        /* the path's nodes belong to sch, which the tries left unchanged */
      }
  return NULL;
}

static int mlt_tc_apply(const ms_rule_t *self, const ms_ctx_t *ctx, sch_t *sch, const char *name, sch_t ***out,
                        int *nout, int *cap) {
  const ms_mlt_tc_params_t *p = self->params;
  sch_t *sketch = NULL;
  for (int g = 0; g < p->ngroups && !sketch && target_fits(ctx, p); g++) sketch = find_sketch(sch, ctx, p, &p->groups[g], name);
  if (!sketch) return p->fallback->apply(p->fallback, ctx, sch, name, out, nout, cap);
  sch_free(sch);
  return ms_out_push(out, nout, cap, sketch);
}

const ms_rule_t ms_rule_mlt_tensor_core = {MLTC, mlt_tc_apply, NULL, &cuda_tc_params};
