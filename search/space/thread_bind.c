/*
 * thread_bind.c - binding a block's outer loops to GPU threads (rules.h:
 * ms_bind_block_thread_idx), MetaSchedule's BindBlockThreadIdx and
 * BindSpatialLoop (src/meta_schedule/schedule/cuda/thread_bind.cc), shared
 * by the AutoBind rule (which samples the thread count) and the
 * RewriteUnboundBlock postprocessor (which takes the largest allowed).
 *
 * For a block that is not the root, not multi-level tiled and not already
 * under both a blockIdx and a threadIdx loop: the leading loops that are
 * serial, single-child and data parallel for the blocks under them are
 * fused (a unit loop is added when there is none) and the fused loop is
 * split into [blockIdx.x, threadIdx.x] by the thread count (extent up to
 * max_threadblocks x max_threads_per_block), or into [blockIdx.x (max
 * thread blocks), threadIdx.x (max threads), serial rest] beyond that. A
 * block whose threadIdx loop is there but no blockIdx gets the loops above
 * it fused and bound to blockIdx.x.
 */
#include "search/space/rules.h"

#include <string.h>

#include "search/postproc/postproc.h"

bool ms_loop_bound_to(const tir_stmt_t *loop, const char *prefix) {
  const char *tag = loop->u.loop.thread_tag;
  return loop->u.loop.kind == TIR_FOR_THREAD_BINDING && tag && strncmp(tag, prefix, strlen(prefix)) == 0;
}

typedef struct {
  int block_idx, thread_idx, multi_child, spatial; /* -1: none */
} loop_marks_t;

static loop_marks_t mark_loops(tir_stmt_t **loops, int n) {
  loop_marks_t m = {-1, -1, -1, -1};
  for (int i = 0; i < n; i++) {
    tir_stmt_t *loop = loops[i];
    if (ms_loop_bound_to(loop, "blockIdx") && m.block_idx == -1) m.block_idx = i;
    if (ms_loop_bound_to(loop, "threadIdx") && m.thread_idx == -1) m.thread_idx = i;
    if (loop->u.loop.kind != TIR_FOR_SERIAL && m.multi_child == -1) m.multi_child = i;
    if (!pp_loop_single_child(loop) && m.multi_child == -1) m.multi_child = i + 1; /* TVM's IsSingleStmt */
    if (sch_loop_binding_type(loop) == SCH_LOOP_DATA_PAR && m.spatial == i - 1) m.spatial++;
  }
  if (m.multi_child == -1) m.multi_child = n;
  return m;
}

static int min3(int a, int b, int c) { return a < b ? (a < c ? a : c) : (b < c ? b : c); }

/* The thread count: sampled among `extents` up to max_extent (AutoBind), or
 * max_extent itself when none is given or none fits. */
static int thread_factor(sch_t *sch, const int64_t *extents, int nextents, int64_t max_extent, sch_arg_t *out) {
  int64_t fit[MS_MAX_THREAD_EXTENTS];
  double probs[MS_MAX_THREAD_EXTENTS];
  int n = 0;
  for (int i = 0; i < nextents && n < MS_MAX_THREAD_EXTENTS; i++)
    if (extents[i] <= max_extent) fit[n++] = extents[i];
  if (n <= 1) {
    *out = sch_arg_int(n == 1 ? fit[0] : max_extent);
    return MLC_OK;
  }
  for (int i = 0; i < n; i++) probs[i] = 1.0 / n;
  sch_rv_t rv;
  int rc = sch_sample_categorical(sch, &rv, fit, probs, n, NULL);
  if (rc == MLC_OK) *out = sch_arg_rv(rv);
  return rc;
}

/* BindSpatialLoop. */
static int bind_spatial_loop(sch_t *sch, sch_rv_t loop, const ms_thread_bind_t *tb) {
  tir_stmt_t *node;
  int64_t extent = INT64_MAX;
  int rc = sch_get_loop_node(sch, loop, &node);
  if (rc != MLC_OK) return rc;
  if (!tir_as_int(node->u.loop.extent, &extent)) extent = INT64_MAX;
  const sch_rv_t *split;
  if (extent <= tb->max_threadblocks * tb->max_threads_per_block) {
    sch_arg_t f[2] = {sch_arg_none(), sch_arg_none()};
    int64_t max = extent < tb->max_threads_per_block ? extent : tb->max_threads_per_block;
    if ((rc = thread_factor(sch, tb->extents, tb->nextents, max, &f[1])) != MLC_OK) return rc;
    if ((rc = sch_split(sch, &split, loop, f, 2, true)) != MLC_OK) return rc;
    sch_rv_t bx = split[0], tx = split[1];
    if ((rc = sch_bind(sch, bx, "blockIdx.x")) != MLC_OK) return rc;
    return sch_bind(sch, tx, "threadIdx.x");
  }
  sch_arg_t f[3] = {sch_arg_none(), sch_arg_int(tb->max_threadblocks), sch_arg_int(tb->max_threads_per_block)};
  if ((rc = sch_split(sch, &split, loop, f, 3, true)) != MLC_OK) return rc;
  sch_rv_t parts[3] = {split[1], split[2], split[0]};
  if ((rc = sch_reorder(sch, parts, 3)) != MLC_OK) return rc;
  if ((rc = sch_bind(sch, parts[0], "blockIdx.x")) != MLC_OK) return rc;
  return sch_bind(sch, parts[1], "threadIdx.x");
}

/* The loops to fuse: the first nfuse of the block's (a unit loop added in
 * front when none is spatial). */
static int fuse_leading(sch_t *sch, sch_rv_t block, int nfuse, bool add_unit, sch_rv_t *fused) {
  const sch_rv_t *loops;
  int n, rc;
  if ((rc = sch_get_loops(sch, &loops, &n, block)) != MLC_OK) return rc;
  if (add_unit) {
    sch_rv_t unit;
    if ((rc = sch_add_unit_loop(sch, &unit, n > 0 ? loops[0] : block)) != MLC_OK) return rc;
    if ((rc = sch_get_loops(sch, &loops, &n, block)) != MLC_OK) return rc;
  }
  if (nfuse < 1 || nfuse > n) return mlc_error_set(MLC_ESCHEDULE, "bind threads: %d loops to fuse of %d", nfuse, n);
  return sch_fuse(sch, fused, loops, nfuse, true);
}

int ms_bind_block_thread_idx(sch_t *sch, const char *name, const ms_thread_bind_t *tb) {
  sch_path_t path;
  if (!ms_find_block(sch, name, &path) || ms_is_root(&path) || ms_block_is_tiled(ms_path_block(&path)))
    return MLC_OK;
  tir_stmt_t *loops[SCH_MAX_DEPTH];
  int n = ms_block_loops(&path, loops, SCH_MAX_DEPTH);
  loop_marks_t m = mark_loops(loops, n);
  if (m.block_idx != -1) return MLC_OK; /* bound already (TVM rejects blockIdx without threadIdx) */
  bool add_unit = m.spatial == -1;
  if (add_unit) { /* the unit loop goes in front: every mark moves by one */
    m.spatial = 0;
    if (m.thread_idx != -1) m.thread_idx++;
    m.multi_child++;
  }
  sch_rv_t block, fused;
  int rc = ms_block_rv(sch, name, &block);
  if (rc != MLC_OK) return rc;
  if (m.thread_idx != -1) {
    int nfuse = min3(m.multi_child, m.thread_idx, m.spatial + 1);
    if (nfuse < 1) return MLC_OK; /* nothing above the threads to make blocks of */
    rc = fuse_leading(sch, block, nfuse, add_unit, &fused);
    return rc == MLC_OK ? sch_bind(sch, fused, "blockIdx.x") : rc;
  }
  int nfuse = m.multi_child < m.spatial + 1 ? m.multi_child : m.spatial + 1;
  if (nfuse < 1) return MLC_OK;
  rc = fuse_leading(sch, block, nfuse, add_unit, &fused);
  return rc == MLC_OK ? bind_spatial_loop(sch, fused, tb) : rc;
}
