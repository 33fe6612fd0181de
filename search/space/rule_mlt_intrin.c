/*
 * rule_mlt_intrin.c - MultiLevelTilingWithIntrin (MetaSchedule's
 * multi_level_tiling_with_intrin.cc) for the AVX-512 fp32 FMA micro-kernel
 * avx512_fp32_fma_16x4 (C[0:16] += A[k] * B[k, 0:16], k < 4).
 *
 * Exact floating point (docs/compiler/benchmark.md) means LLVM never fuses
 * a multiply and an add by itself, so a GEMM built from plain tiles runs at
 * half the FMA peak; this rule is how the design space gets FMAs. For a
 * reduction block the intrinsic can take (C[i, j] += A[i, k] * B[k, j],
 * or an implicit GEMM such as C2D's), it makes the sketches of the hand
 * trace bench/traces/gmm_avx512_fma.py:
 *
 *  1. the intrinsic's tile: the spatial loop feeding the description's
 *     spatial iterator split by 16, the reduction loop by 4, the two inner
 *     loops moved innermost in the description's order, blockized; the
 *     outer block is annotated meta_schedule.auto_tensorize (RewriteTensorize
 *     tensorizes it once RewriteReductionBlock has split off its init);
 *  2. the outer loops tiled as MultiLevelTiling does, "SSRSRS": each
 *     spatial loop in 4 by sample_perfect_tile (innermost factor at most
 *     64), each reduction loop in 2, reordered level by level;
 *  3. a write cache "may" at levels 1 and 2 (none, or cache_write in
 *     "global" computed under the last loop of the level: the register
 *     tile), or an elementwise consumer moved there instead;
 *  4. the operand read along the intrinsic's 16 lanes (B) packed or not:
 *     cache_read computed at the last loop of level 0 (the loops that
 *     become the parallel panel loop) and annotated
 *     meta_schedule.layout_rewrite_preproc = 16, which RewriteLayout turns
 *     into 16-wide contiguous strips. When the lanes run across the
 *     operand's rows (a dense layer's weights W[j, k]), the tile
 *     tensorizes only packed (W[j // 16, k, j % 16]), and only packed
 *     sketches are made (with meta_schedule.layout_rewrite_axis = 0).
 *
 * Unrolling the register tile, parallelizing the panels and vectorizing the
 * copies are left to ParallelizeVectorizeUnroll and the postprocessors.
 *
 * Which loops form the tile is found by trying: for each pair of a spatial
 * and a reduction iterator whose extents the intrinsic's divide (the last
 * ones first), the tile is made, its init decomposed and the intrinsic
 * tensorized on a copy of the schedule (TVM's CheckAutoTensorizeApplicable),
 * as it is and else with the lanes' operand packed; the first pair that
 * tensorizes is used. The rule applies only when the
 * target has the intrinsic's CPU feature (avx512f) and to blocks not yet
 * tiled, with trivial bindings; otherwise the schedule comes back as it was.
 */
#include "search/space/rules.h"

#include <string.h>

#include "search/postproc/postproc.h"

#define MLTI "MultiLevelTilingWithIntrin"
#define MAX_LEVELS 8
#define MAX_LOOPS 32

typedef struct {
  const char *intrin;       /* the tensor intrinsic */
  const char *feature;      /* the CPU feature the target must have */
  const char *structure;    /* "SSRSRS" */
  int max_innermost_factor; /* 64 */
  ms_reuse_t reuse_write;   /* may, levels 1 and 2, "global" */
  bool pack;                /* also fork with the lanes' operand packed */
} mlt_intrin_params_t;

static const mlt_intrin_params_t avx512_params = {
    "avx512_fp32_fma_16x4", "avx512f", "SSRSRS", 64, {MS_REUSE_MAY, 2, {1, 2}, "global"}, true,
};

/* The intrinsic's tile read off its description: one spatial iterator of
 * extent ext_s and one reduction iterator of extent ext_r, with the loop of
 * the spatial one outermost or not. */
typedef struct {
  int64_t ext_s, ext_r;
  bool s_outer;
} desc_shape_t;

/* The tile being built for one block. */
typedef struct {
  int s, r;                 /* the iter vars (indices) the intrinsic takes */
  char pack[128];           /* name of the operand to pack, "" for none */
  int pack_axis;            /* its dimension indexed by iter var s */
  bool must_pack;           /* the tile tensorizes only with it packed */
  sch_rv_t outer;           /* the blockized tile's outer block */
  int nlevels;
  int nper[MAX_LEVELS];
  sch_rv_t tiles[MAX_LEVELS][MAX_LOOPS];
} tile_t;

/* ------------------------------------------------------------------------ */
/* The description                                                           */
/* ------------------------------------------------------------------------ */

/* The loop of the description (0 outer, 1 inner) that binding v is, or -1. */
static int desc_loop_of(const tir_expr_t *v, const tir_stmt_t *const *loops) {
  for (int i = 0; i < 2; i++)
    if (v == loops[i]->u.loop.var) return i;
  return -1;
}

/* The description's shape: two loops over one block with one spatial and
 * one reduction iterator, each bound to a loop. false for other shapes
 * (intrinsics this rule does not know how to tile for). */
static bool read_desc(const sch_intrin_t *in, desc_shape_t *out) {
  tir_block_t *root = tir_func_root_block(in->desc);
  if (!root) return false;
  const tir_stmt_t *s = root->body, *loops[2];
  int nloops = 0;
  for (; s->kind == TIR_FOR; s = s->u.loop.body) {
    if (nloops == 2) return false;
    loops[nloops++] = s;
  }
  if (s->kind != TIR_BLOCK_REALIZE || nloops != 2 || s->u.realize.block->niter_vars != 2) return false;
  const tir_block_t *b = s->u.realize.block;
  int pos_s = -1, pos_r = -1;
  for (int i = 0; i < 2; i++) {
    int pos = desc_loop_of(s->u.realize.iter_values[i], loops);
    int64_t ext;
    if (pos < 0 || !tir_as_int(b->iter_vars[i].dom.extent, &ext)) return false;
    if (b->iter_vars[i].type == TIR_ITER_SPATIAL) {
      pos_s = pos;
      out->ext_s = ext;
    } else if (b->iter_vars[i].type == TIR_ITER_REDUCE) {
      pos_r = pos;
      out->ext_r = ext;
    }
  }
  if (pos_s < 0 || pos_r < 0) return false;
  out->s_outer = pos_s < pos_r;
  return true;
}

/* ------------------------------------------------------------------------ */
/* The intrinsic's tile                                                      */
/* ------------------------------------------------------------------------ */

/* A reduction block with trivial bindings, spatial and reduction iterators
 * only, one write: what the tile can be cut from. */
static bool block_fits(const sch_path_t *path) {
  const tir_block_t *b = ms_path_block(path);
  if (!b->init || b->nwrites != 1 || b->nreads < 2 || b->niter_vars > MAX_LOOPS || ms_block_is_tiled(b) ||
      !ms_is_trivial_binding(path))
    return false;
  for (int i = 0; i < b->niter_vars; i++)
    if (b->iter_vars[i].type != TIR_ITER_SPATIAL && b->iter_vars[i].type != TIR_ITER_REDUCE) return false;
  return true;
}

/* Splits iter var s's loop by ext_s and r's by ext_r, moves the inner parts
 * innermost (in the description's order) and blockizes them: t->outer. */
static int tile_for_intrin(sch_t *sch, sch_rv_t block, const desc_shape_t *d, tile_t *t) {
  const sch_rv_t *got, *ps, *pr;
  int n;
  if (sch_get_loops(sch, &got, &n, block) != MLC_OK || n > MAX_LOOPS) return MLC_ESCHEDULE;
  sch_rv_t loops[MAX_LOOPS];
  memcpy(loops, got, sizeof(sch_rv_t) * (size_t)n);
  sch_arg_t fs[2] = {sch_arg_none(), sch_arg_int(d->ext_s)}, fr[2] = {sch_arg_none(), sch_arg_int(d->ext_r)};
  if (sch_split(sch, &ps, loops[t->s], fs, 2, true) != MLC_OK) return MLC_ESCHEDULE;
  sch_rv_t s0 = ps[0], s1 = ps[1];
  if (sch_split(sch, &pr, loops[t->r], fr, 2, true) != MLC_OK) return MLC_ESCHEDULE;
  loops[t->s] = s0;
  loops[t->r] = pr[0];
  sch_rv_t order[MAX_LOOPS + 2];
  memcpy(order, loops, sizeof(sch_rv_t) * (size_t)n);
  order[n] = d->s_outer ? s1 : pr[1];
  order[n + 1] = d->s_outer ? pr[1] : s1;
  if (sch_reorder(sch, order, n + 2) != MLC_OK) return MLC_ESCHEDULE;
  return sch_blockize(sch, &t->outer, order[n], true);
}

/* Packs t->pack for the probe: copied at the root, in strips (RewriteLayout's layout). */
static bool pack_for_probe(sch_t *c, const desc_shape_t *d, const tile_t *t) {
  tir_block_t *ob;
  sch_rv_t copy;
  int idx = -1;
  if (sch_get_block_node(c, t->outer, &ob) != MLC_OK) return false;
  for (int i = 0; i < ob->nreads && idx < 0; i++)
    if (strcmp(ob->reads[i].buffer->name, t->pack) == 0) idx = i;
  if (idx < 0) return false;
  int ndim = ob->reads[idx].buffer->ndim;
  mlc_arena_t *a = mlc_arena_new();
  sch_index_map_t map;
  bool ok = a && pp_strip_index_map(a, ndim, t->pack_axis, d->ext_s, &map) == MLC_OK &&
            sch_cache_read(c, &copy, t->outer, idx, "global", &t->outer, 1) == MLC_OK &&
            sch_transform_layout(c, copy, 0, SCH_BUFFER_WRITE, &map) == MLC_OK;
  mlc_arena_free(a);
  return ok;
}

/* Whether the tile of pair (t->s, t->r) tensorizes (with t->pack packed
 * when `packed`): made, its init split off and the intrinsic applied, on a
 * copy. */
static bool tile_tensorizes(sch_t *sch, const char *block, const mlt_intrin_params_t *p, const desc_shape_t *d,
                            tile_t *t, bool packed) {
  sch_t *c = NULL;
  if (sch_copy(&c, sch) != MLC_OK) return false;
  sch_set_error_mode(c, SCH_ERRORS_FAST);
  sch_rv_t brv, init;
  const sch_rv_t *loops;
  int n;
  bool ok = ms_block_rv(c, block, &brv) == MLC_OK &&
            sch_annotate(c, brv, MS_ANN_TILING_STRUCTURE, sch_arg_str(p->structure)) == MLC_OK &&
            tile_for_intrin(c, brv, d, t) == MLC_OK && (!packed || pack_for_probe(c, d, t)) &&
            sch_get_loops(c, &loops, &n, t->outer) == MLC_OK && n > 0 &&
            sch_decompose_reduction(c, &init, t->outer, loops[0]) == MLC_OK &&
            sch_tensorize(c, t->outer, p->intrin, true) == MLC_OK;
  sch_free(c);
  return ok;
}

static bool divides(const tir_iter_var_t *iv, int64_t tile) {
  int64_t ext;
  return tir_is_const_int(iv->dom.min, 0) && tir_as_int(iv->dom.extent, &ext) && ext % tile == 0;
}

/* The operand read along the intrinsic's lanes: a read buffer (not the
 * output) with a dimension indexed by iter var s and not r (B[k, j] of a
 * GEMM, the weights W[j, k] of a dense layer, the HWIO weights of a
 * convolution), the last such dimension first. */
static void find_pack_operand(const tir_block_t *b, tile_t *t) {
  t->pack[0] = '\0';
  const tir_var_t *vs = b->iter_vars[t->s].var, *vr = b->iter_vars[t->r].var;
  for (int i = 0; i < b->nreads; i++) {
    const tir_region_t *r = &b->reads[i];
    if (r->buffer == b->writes[0].buffer || strlen(r->buffer->name) >= sizeof t->pack) continue;
    for (int dim = r->ndim - 1; dim >= 0; dim--) {
      tir_expr_t *idx = r->ranges[dim].min;
      if (!tir_expr_uses_var(idx, vs) || tir_expr_uses_var(idx, vr)) continue;
      strcpy(t->pack, r->buffer->name);
      t->pack_axis = dim;
      return;
    }
  }
}

/* The first pair of iterators (last ones first) whose tile tensorizes. */
static bool find_tile(sch_t *sch, const char *block, const mlt_intrin_params_t *p, const desc_shape_t *d,
                      tile_t *t) {
  sch_path_t path;
  if (!ms_find_block(sch, block, &path) || !block_fits(&path)) return false;
  const tir_block_t *b = ms_path_block(&path);
  for (int s = b->niter_vars - 1; s >= 0; s--) {
    if (b->iter_vars[s].type != TIR_ITER_SPATIAL || !divides(&b->iter_vars[s], d->ext_s)) continue;
    for (int r = b->niter_vars - 1; r >= 0; r--) {
      if (b->iter_vars[r].type != TIR_ITER_REDUCE || !divides(&b->iter_vars[r], d->ext_r)) continue;
      t->s = s;
      t->r = r;
      find_pack_operand(b, t);
      t->must_pack = false;
      if (tile_tensorizes(sch, block, p, d, t, false)) return true;
      t->must_pack = p->pack && t->pack[0] && tile_tensorizes(sch, block, p, d, t, true);
      if (t->must_pack) return true;
    }
  }
  return false;
}

/* ------------------------------------------------------------------------ */
/* Multi-level tiling of the outer loops                                     */
/* ------------------------------------------------------------------------ */

static int add_tile(tile_t *t, int level, sch_rv_t loop) {
  if (t->nper[level] == MAX_LOOPS) return MLC_ESCHEDULE;
  t->tiles[level][t->nper[level]++] = loop;
  return MLC_OK;
}

/* Splits one loop into the levels `idx` (sampled factors) and files the parts. */
static int tile_loop(sch_t *sch, const mlt_intrin_params_t *p, tile_t *t, sch_rv_t loop, const int *idx, int nidx) {
  if (nidx == 1) return add_tile(t, idx[0], loop);
  const sch_rv_t *vars, *parts;
  if (sch_sample_perfect_tile(sch, &vars, loop, nidx, p->max_innermost_factor, NULL) != MLC_OK) return MLC_ESCHEDULE;
  sch_arg_t factors[MAX_LEVELS];
  for (int i = 0; i < nidx; i++) factors[i] = sch_arg_rv(vars[i]);
  if (sch_split(sch, &parts, loop, factors, nidx, true) != MLC_OK) return MLC_ESCHEDULE;
  for (int i = 0; i < nidx; i++)
    if (add_tile(t, idx[i], parts[i]) != MLC_OK) return MLC_ESCHEDULE;
  return MLC_OK;
}

/* TVM's TileLoopNest on the outer block: levels per the structure, then
 * one reorder, outermost level first. */
static int tile_nest(sch_t *sch, const mlt_intrin_params_t *p, tile_t *t) {
  int sidx[MAX_LEVELS], ridx[MAX_LEVELS], ns = 0, nr = 0;
  t->nlevels = (int)strlen(p->structure);
  if (t->nlevels > MAX_LEVELS) return MLC_ESCHEDULE;
  for (int i = 0; i < t->nlevels; i++) {
    t->nper[i] = 0;
    if (p->structure[i] == 'S') sidx[ns++] = i;
    else ridx[nr++] = i;
  }
  const sch_rv_t *got;
  int n;
  if (sch_get_loops(sch, &got, &n, t->outer) != MLC_OK || n > MAX_LOOPS) return MLC_ESCHEDULE;
  sch_rv_t loops[MAX_LOOPS];
  memcpy(loops, got, sizeof(sch_rv_t) * (size_t)n);
  for (int i = 0; i < n; i++) {
    tir_stmt_t *node;
    if (sch_get_loop_node(sch, loops[i], &node) != MLC_OK) return MLC_ESCHEDULE;
    sch_loop_type_t type = sch_loop_binding_type(node);
    if (type == SCH_LOOP_OTHER) return MLC_ESCHEDULE;
    bool spatial = type == SCH_LOOP_DATA_PAR;
    int rc = tile_loop(sch, p, t, loops[i], spatial ? sidx : ridx, spatial ? ns : nr);
    if (rc != MLC_OK) return rc;
  }
  sch_rv_t order[MAX_LEVELS * MAX_LOOPS];
  int norder = 0;
  for (int l = 0; l < t->nlevels; l++)
    for (int i = 0; i < t->nper[l]; i++) order[norder++] = t->tiles[l][i];
  return sch_reorder(sch, order, norder);
}

/* The last loop of a 1-based level (levels without loops cannot hold a cache). */
static bool level_loop(const tile_t *t, int level, sch_rv_t *out) {
  if (level < 1 || level > t->nlevels || t->nper[level - 1] == 0) return false;
  *out = t->tiles[level - 1][t->nper[level - 1] - 1];
  return true;
}

/* ------------------------------------------------------------------------ */
/* Variants: write cache and packed operand                                  */
/* ------------------------------------------------------------------------ */

typedef struct {
  sch_t **v;
  int n, cap;
} sch_list_t;

static void list_free(sch_list_t *l) {
  for (int i = 0; i < l->n; i++) sch_free(l->v[i]);
  mlc_free(l->v);
}

/* A fork of s with `block` computed (reverse) at the last loop of `level`,
 * pushed onto l; a fork whose primitive fails is dropped. */
static int push_at_level(sch_list_t *l, sch_t *s, const tile_t *t, sch_rv_t block, int level) {
  sch_t *f;
  sch_rv_t loop;
  if (!level_loop(t, level, &loop)) return MLC_OK;
  int rc = ms_fork(&f, s);
  if (rc != MLC_OK) return rc;
  if (sch_reverse_compute_at(f, block, loop, true, -1) != MLC_OK) {
    ms_drop_fork(f, MLTI);
    return MLC_OK;
  }
  return ms_out_push(&l->v, &l->n, &l->cap, f);
}

/* An elementwise consumer already there serves as the write cache (TVM's
 * AddWriteReuse, case 1). */
static bool consumer_is_write_cache(sch_t *s, const tile_t *t, sch_rv_t *consumer) {
  const sch_rv_t *cs;
  int nc;
  tir_block_t *cb;
  if (sch_get_consumers(s, &cs, &nc, t->outer) != MLC_OK || nc != 1) return false;
  if (sch_get_block_node(s, cs[0], &cb) != MLC_OK || !ms_block_is_write_cache(cb)) return false;
  *consumer = cs[0];
  return true;
}

/* TVM's AddWriteReuse: takes base; pushes its variants onto l. */
static int add_write_reuse(sch_list_t *l, sch_t *base, const mlt_intrin_params_t *p, const tile_t *t) {
  const ms_reuse_t *cfg = &p->reuse_write;
  int rc = MLC_OK;
  sch_rv_t cache;
  if (cfg->req == MS_REUSE_NONE) return ms_out_push(&l->v, &l->n, &l->cap, base);
  if (cfg->req == MS_REUSE_MAY) {
    if (consumer_is_write_cache(base, t, &cache)) {
      for (int i = 0; i < cfg->nlevels && rc == MLC_OK; i++) rc = push_at_level(l, base, t, cache, cfg->levels[i]);
      if (rc != MLC_OK) {
        sch_free(base);
        return rc;
      }
      return ms_out_push(&l->v, &l->n, &l->cap, base);
    }
    sch_t *plain;
    if ((rc = ms_fork(&plain, base)) != MLC_OK || (rc = ms_out_push(&l->v, &l->n, &l->cap, plain)) != MLC_OK) {
      sch_free(base);
      return rc;
    }
  }
  if (sch_cache_write(base, &cache, t->outer, 0, cfg->scope, NULL, 0) != MLC_OK) {
    ms_drop_fork(base, MLTI);
    return MLC_OK;
  }
  for (int i = 0; i < cfg->nlevels && rc == MLC_OK; i++) rc = push_at_level(l, base, t, cache, cfg->levels[i]);
  sch_free(base);
  return rc;
}

/* The index of the read of buffer `name` by the outer block, or -1. */
static int read_index(sch_t *s, sch_rv_t block, const char *name) {
  tir_block_t *b;
  if (sch_get_block_node(s, block, &b) != MLC_OK) return -1;
  for (int i = 0; i < b->nreads; i++)
    if (strcmp(b->reads[i].buffer->name, name) == 0) return i;
  return -1;
}

/* The packed fork of s: the operand copied per level-0 tile and annotated
 * for RewriteLayout; NULL when a primitive fails (dropped). */
static sch_t *packed_fork(sch_t *s, const tile_t *t, const desc_shape_t *d, int *rc) {
  sch_t *f = NULL;
  sch_rv_t copy, loop;
  int idx = read_index(s, t->outer, t->pack);
  *rc = MLC_OK;
  if (idx < 0 || !level_loop(t, 1, &loop) || (*rc = ms_fork(&f, s)) != MLC_OK) return NULL;
  tir_block_t *ob;
  bool ok = sch_cache_read(f, &copy, t->outer, idx, "global", &t->outer, 1) == MLC_OK &&
            sch_compute_at(f, copy, loop, true, -1) == MLC_OK &&
            sch_annotate(f, copy, MS_ANN_LAYOUT_REWRITE, sch_arg_int(d->ext_s)) == MLC_OK &&
            sch_get_block_node(f, copy, &ob) == MLC_OK;
  if (ok && t->pack_axis != ob->writes[0].buffer->ndim - 1)
    ok = sch_annotate(f, copy, MS_ANN_LAYOUT_AXIS, sch_arg_int(t->pack_axis)) == MLC_OK;
  if (!ok) {
    ms_drop_fork(f, MLTI);
    return NULL;
  }
  return f;
}

/* Pushes s as it is (unless the tile needs the operand packed), then the
 * packed fork (when there is an operand to pack). Takes s. */
static int add_pack(sch_t ***out, int *nout, int *cap, sch_t *s, const mlt_intrin_params_t *p, const tile_t *t,
                    const desc_shape_t *d) {
  int rc = MLC_OK;
  sch_t *f = p->pack && t->pack[0] ? packed_fork(s, t, d, &rc) : NULL;
  if (rc == MLC_OK && !t->must_pack) {
    rc = ms_out_push(out, nout, cap, s);
    s = NULL;
  }
  sch_free(s);
  if (f && rc == MLC_OK) return ms_out_push(out, nout, cap, f);
  sch_free(f);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* The rule                                                                  */
/* ------------------------------------------------------------------------ */

static bool target_has(const ms_ctx_t *ctx, const mlt_intrin_params_t *p) {
  if (!ctx || ctx->target.kind != MLC_TARGET_LLVM) return false;
  return !p->feature || mlc_target_has_feature(&ctx->target, p->feature);
}

/* The tiled base schedule (a copy of sch), or NULL when a step fails. */
static sch_t *make_base(sch_t *sch, const char *block, const mlt_intrin_params_t *p, const desc_shape_t *d,
                        tile_t *t) {
  sch_t *base;
  sch_rv_t brv;
  if (sch_copy(&base, sch) != MLC_OK) return NULL;
  if (ms_block_rv(base, block, &brv) != MLC_OK ||
      sch_annotate(base, brv, MS_ANN_TILING_STRUCTURE, sch_arg_str(p->structure)) != MLC_OK ||
      tile_for_intrin(base, brv, d, t) != MLC_OK ||
      sch_annotate(base, t->outer, MS_ANN_AUTO_TENSORIZE, sch_arg_str(p->intrin)) != MLC_OK ||
      tile_nest(base, p, t) != MLC_OK) {
    ms_drop_fork(base, MLTI);
    return NULL;
  }
  return base;
}

static int mlt_intrin_apply(const ms_rule_t *self, const ms_ctx_t *ctx, sch_t *sch, const char *block, sch_t ***out,
                            int *nout, int *cap) {
  const mlt_intrin_params_t *p = self->params;
  const sch_intrin_t *in = sch_intrin_get(p->intrin);
  desc_shape_t d;
  tile_t t;
  memset(&t, 0, sizeof t);
  if (!target_has(ctx, p) || !in || !read_desc(in, &d) || !find_tile(sch, block, p, &d, &t))
    return ms_out_push(out, nout, cap, sch);
  sch_t *base = make_base(sch, block, p, &d, &t);
  if (!base) return ms_out_push(out, nout, cap, sch);
  sch_free(sch);
  sch_list_t written = {0};
  int rc = add_write_reuse(&written, base, p, &t);
  for (int i = 0; i < written.n && rc == MLC_OK; i++) {
    sch_t *s = written.v[i];
    written.v[i] = NULL;
    rc = add_pack(out, nout, cap, s, p, &t, &d);
  }
  list_free(&written);
  return rc;
}

const ms_rule_t ms_rule_mlt_intrin_avx512 = {MLTI, mlt_intrin_apply, NULL, &avx512_params};
