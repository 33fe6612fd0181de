/*
 * rewrite_layout.c - the RewriteLayout postprocessor (CPU).
 *
 * A rule that wants an operand packed (MultiLevelTilingWithIntrin: B of a
 * GEMM in 16-column strips, so each tensor-intrinsic tile reads one
 * contiguous 16-wide row per k) makes the copy with cache_read, computes it
 * where a tile of the operand is reused (the outer parallel loop) and
 * annotates the copy block with meta_schedule.layout_rewrite_preproc = W,
 * the strip width, and, when it is not the last axis of the buffer that is
 * to be packed, meta_schedule.layout_rewrite_axis = a (a dense layer's
 * weights W[j, k], packed along j). Here the copy's buffer gets the layout
 *
 *     (x0, ..., xa, ..., xn-1) -> (xa // W, x0, ..., xn-1 without xa, xa % W)
 *
 * (transform_layout; for a K x N matrix packed along N: N / W strips of
 * K x W, each contiguous), and the copy's innermost loop, when it runs
 * along axis a with step 1, is split by W and its inner part vectorized,
 * so packing costs one vector load and store per W elements (a copy that
 * transposes stays scalar). W = 1 asks for no packing (the annotations are
 * only removed).
 *
 * MetaSchedule's RewriteLayout rewrites the layout of weight parameters
 * ahead of time (a preprocessing block hoisted out of the kernel, for
 * weights known at compile time). mlc-tune compiles kernels that take their
 * weights as arguments, so the packing stays in the kernel, per panel,
 * which costs O(K x N) against the GEMM's O(M x N x K).
 */
#include "search/postproc/postproc.h"

#include <string.h>

#define RL "RewriteLayout"

static const pp_block_t *next_block(const pp_block_t *blocks, int n) {
  for (int i = 0; i < n; i++)
    if (tir_annot_get(blocks[i].block->annots, blocks[i].block->nannots, MS_ANN_LAYOUT_REWRITE)) return &blocks[i];
  return NULL;
}

/* The strip width and the axis, checked against the written buffer. */
static int strip_of(const pp_block_t *pb, int64_t *w, int64_t *axis) {
  const tir_block_t *b = pb->block;
  if (!pp_block_ann_int(b, MS_ANN_LAYOUT_REWRITE, w) || *w < 1)
    return pp_fail(RL, "block %s: %s is not a positive strip width", b->name, MS_ANN_LAYOUT_REWRITE);
  if (b->nwrites != 1) return pp_fail(RL, "block %s writes %d buffers, not one", b->name, b->nwrites);
  const tir_buffer_t *buf = b->writes[0].buffer;
  *axis = buf->ndim - 1;
  bool has_axis = tir_annot_get(b->annots, b->nannots, MS_ANN_LAYOUT_AXIS) != NULL;
  if (has_axis && (!pp_block_ann_int(b, MS_ANN_LAYOUT_AXIS, axis) || *axis < 0 || *axis >= buf->ndim))
    return pp_fail(RL, "block %s: %s is not an axis of %s", b->name, MS_ANN_LAYOUT_AXIS, buf->name);
  int64_t ext;
  if (*w > 1 && (!tir_as_int(buf->shape[*axis], &ext) || ext % *w != 0))
    return pp_fail(RL, "block %s: dimension %lld of %s is not a multiple of the strip width %lld", b->name,
                   (long long)*axis, buf->name, (long long)*w);
  return MLC_OK;
}

/* Whether the innermost loop of the copy walks the packed axis of the
 * written buffer with step 1, in whole strips of w (so a split by w
 * vectorizes). */
static bool inner_loop_packs(mlc_arena_t *a, const pp_block_t *pb, int64_t w, int64_t axis) {
  if (pb->nloops == 0) return false;
  const tir_stmt_t *loop = pb->loops[pb->nloops - 1];
  int64_t ext;
  if (loop->u.loop.kind != TIR_FOR_SERIAL || loop->u.loop.nannots > 0 || !tir_as_int(loop->u.loop.extent, &ext) ||
      ext % w != 0)
    return false;
  tir_var_map_t bind = {0};
  const tir_block_t *b = pb->block;
  for (int i = 0; i < b->niter_vars && i < pb->realize->u.realize.n; i++)
    tir_var_map_set(a, &bind, b->iter_vars[i].var, pb->realize->u.realize.iter_values[i]);
  const tir_region_t *wr = &b->writes[0];
  tir_analyzer_t *an = tir_analyzer_new(a);
  if (!an) return false;
  tir_expr_t *idx = tir_simplify(an, tir_substitute_expr(a, wr->ranges[axis].min, &bind));
  return pp_linear_coef(idx, loop->u.loop.var) == 1;
}

/* Splits the copy's innermost loop by w (when longer) and vectorizes it. */
static int vectorize_copy(sch_t *sch, sch_rv_t block, int64_t w, const char *name) {
  const sch_rv_t *loops, *parts;
  int n;
  tir_stmt_t *inner;
  if (sch_get_loops(sch, &loops, &n, block) != MLC_OK || sch_get_loop_node(sch, loops[n - 1], &inner) != MLC_OK)
    return pp_fail_sch(RL, sch, "block %s", name);
  sch_rv_t target = loops[n - 1];
  if (!tir_is_const_int(inner->u.loop.extent, w)) {
    sch_arg_t factors[2] = {sch_arg_none(), sch_arg_int(w)};
    if (sch_split(sch, &parts, target, factors, 2, true) != MLC_OK)
      return pp_fail_sch(RL, sch, "block %s: splitting its inner loop by %lld", name, (long long)w);
    target = parts[1];
  }
  if (sch_vectorize(sch, target) != MLC_OK) return pp_fail_sch(RL, sch, "block %s: vectorizing its copy", name);
  return MLC_OK;
}

/* Removes the block's layout annotations (recorded). */
static int unannotate(sch_t *sch, sch_rv_t block, const tir_block_t *b) {
  if (sch_unannotate(sch, block, MS_ANN_LAYOUT_REWRITE) != MLC_OK) return MLC_ESCHEDULE;
  bool has_axis = tir_annot_get(b->annots, b->nannots, MS_ANN_LAYOUT_AXIS) != NULL;
  return has_axis ? sch_unannotate(sch, block, MS_ANN_LAYOUT_AXIS) : MLC_OK;
}

static int rewrite_one(sch_t *sch, const pp_block_t *pb) {
  const char *name = pb->block->name;
  const tir_buffer_t *buf = pb->block->nwrites == 1 ? pb->block->writes[0].buffer : NULL;
  int64_t w, axis;
  int rc = strip_of(pb, &w, &axis);
  if (rc != MLC_OK) return rc;
  sch_rv_t block;
  if (sch_get_block(sch, &block, name) != MLC_OK || unannotate(sch, block, pb->block) != MLC_OK)
    return pp_fail_sch(RL, sch, "block %s", name);
  if (w == 1) return MLC_OK;
  mlc_arena_t *a = mlc_arena_new();
  if (!a) return mlc_error_set(MLC_ENOMEM, RL ": out of memory");
  bool vectorize = inner_loop_packs(a, pb, w, axis);
  sch_index_map_t map;
  rc = pp_strip_index_map(a, buf->ndim, (int)axis, w, &map);
  if (rc == MLC_OK && sch_transform_layout(sch, block, 0, SCH_BUFFER_WRITE, &map) != MLC_OK)
    rc = pp_fail_sch(RL, sch, "block %s: packing %s in strips of %lld", name, buf->name, (long long)w);
  mlc_arena_free(a);
  if (rc == MLC_OK && vectorize) rc = vectorize_copy(sch, block, w, name);
  return rc;
}

static int rewrite_layout(const ms_postproc_t *self, const ms_ctx_t *ctx, sch_t *sch) {
  int rc = MLC_OK;
  /* One block per round: each removes its annotation, so the loop ends. */
  while (rc == MLC_OK) {
    mlc_arena_t *a = mlc_arena_new();
    if (!a) return mlc_error_set(MLC_ENOMEM, RL ": out of memory");
    pp_block_t *blocks;
    int n;
    rc = pp_collect_blocks(a, sch_func(sch), &blocks, &n);
    const pp_block_t *pb = rc == MLC_OK ? next_block(blocks, n) : NULL;
    if (pb) rc = rewrite_one(sch, pb);
    mlc_arena_free(a);
    if (!pb) break;
  }
  return rc;
}

const ms_postproc_t ms_postproc_rewrite_layout = {"RewriteLayout", rewrite_layout};
