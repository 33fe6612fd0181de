/*
 * rule_add_rfactor.c - AddRFactor (MetaSchedule's add_rfactor.cc): for a
 * reduction whose spatial loops cannot keep the cores busy, factor the
 * reduction so part of it runs in parallel.
 *
 * When the block needs it (NeedsRFactorOrCrossThreadReduction, below), the
 * rule moves the reduction loops innermost, fuses them, splits the fused
 * loop in two with sample_perfect_tile, and forks: one schedule rfactors
 * the outer half, one the inner half (the new rfactor block's producer
 * marked with meta_schedule.random_compute_producer so RandomComputeLocation
 * places it), and the original schedule (before any of this) comes last.
 * A fork whose rfactor fails is dropped.
 */
#include "search/space/rules.h"

static const ms_add_rfactor_params_t cpu_params = {.max_jobs_per_core = 16, .max_innermost_factor = 64};

/* Conditions 3-5: every loop spatial or reduction, at least one reduction,
 * and the loops form a chain down to the block. */
static bool loops_reducible(const sch_path_t *path, tir_stmt_t **loops, int n) {
  bool has_reduce = false;
  for (int i = 0; i < n; i++) {
    sch_loop_type_t t = sch_loop_binding_type(loops[i]);
    if (t == SCH_LOOP_OTHER) return false;
    if (t == SCH_LOOP_REDUCE) has_reduce = true;
    tir_stmt_t *next = i + 1 < n ? loops[i + 1] : path->stmts[path->n - 1];
    if (loops[i]->u.loop.body != next) return false;
  }
  return has_reduce;
}

/* Products of the spatial and of the reduction loop extents; false when
 * one is not a constant. */
static bool loop_lengths(tir_stmt_t **loops, int n, int64_t *space, int64_t *reduce) {
  *space = *reduce = 1;
  for (int i = 0; i < n; i++) {
    int64_t ext;
    if (!tir_as_int(loops[i]->u.loop.extent, &ext)) return false;
    if (sch_loop_binding_type(loops[i]) == SCH_LOOP_REDUCE) *reduce *= ext;
    else *space *= ext;
  }
  return true;
}

/* TVM's NeedsRFactorOrCrossThreadReduction (rules.h); CrossThreadReduction
 * shares it. */
bool ms_needs_rfactor_or_cross_thread(sch_t *sch, const sch_path_t *path, int64_t max_parallel_extent,
                                      int64_t max_parallel_basic) {
  const tir_block_t *b = ms_path_block(path);
  if (b->nwrites == 0 || ms_is_root(path)) return false;
  if (!sch_is_reduction_block(sch, path) || !ms_is_trivial_binding(path) || ms_block_is_tiled(b)) return false;
  tir_stmt_t *loops[SCH_MAX_DEPTH];
  int n = ms_block_loops(path, loops, SCH_MAX_DEPTH);
  int64_t space, reduce;
  if (!loops_reducible(path, loops, n) || !loop_lengths(loops, n, &space, &reduce)) return false;
  /* With data reuse, rfactor only when the spatial loops give too little
   * parallelism; other reductions (norms, softmax sums) when the reduction
   * is longer than max_parallel_basic (AddRFactor passes 1: always). */
  if (ms_needs_multi_level_tiling(path)) return !(space >= reduce || space > max_parallel_extent);
  return reduce > max_parallel_basic;
}

/* ReorderAndFuseReductionLoops (rules.h). */
int ms_reorder_and_fuse_reduction(sch_t *sch, sch_rv_t block, sch_rv_t *fused, int *nspatial) {
  const sch_rv_t *loops;
  int n, rc;
  if ((rc = sch_get_loops(sch, &loops, &n, block)) != MLC_OK) return rc;
  sch_rv_t order[SCH_MAX_DEPTH], reduce[SCH_MAX_DEPTH];
  int norder = 0, nreduce = 0;
  for (int pass = 0; pass < 2; pass++) { /* spatial loops, then reduction loops */
    for (int i = 0; i < n && i < SCH_MAX_DEPTH; i++) {
      tir_stmt_t *loop;
      if ((rc = sch_get_loop_node(sch, loops[i], &loop)) != MLC_OK) return rc;
      bool is_reduce = sch_loop_binding_type(loop) == SCH_LOOP_REDUCE;
      if (is_reduce != (pass == 1)) continue;
      if (is_reduce) reduce[nreduce++] = loops[i];
      order[norder++] = loops[i];
    }
    if (pass == 0) *nspatial = norder;
  }
  if (norder != n || nreduce == 0)
    return mlc_error_set(MLC_ESCHEDULE, "reorder and fuse reduction loops: a loop is neither spatial nor a reduction");
  bool moved = false;
  for (int i = 0; i < n; i++) moved |= order[i] != loops[i];
  if (moved && (rc = sch_reorder(sch, order, norder)) != MLC_OK) return rc;
  if (nreduce == 1) {
    *fused = reduce[0];
    return MLC_OK;
  }
  return sch_fuse(sch, fused, reduce, nreduce, true);
}

/* The loops and split of the reduction, on sch; the two halves in split[]. */
static int split_reduction(const ms_add_rfactor_params_t *p, sch_t *sch, sch_rv_t block, const sch_rv_t **split,
                           int *nspatial) {
  sch_rv_t fused;
  const sch_rv_t *factors;
  int rc = ms_reorder_and_fuse_reduction(sch, block, &fused, nspatial);
  if (rc == MLC_OK) rc = sch_sample_perfect_tile(sch, &factors, fused, 2, p->max_innermost_factor, NULL);
  if (rc != MLC_OK) return rc;
  sch_arg_t args[2] = {sch_arg_rv(factors[0]), sch_arg_rv(factors[1])};
  return sch_split(sch, split, fused, args, 2, true);
}

/* One rfactor fork of the split schedule: rfactor at `loop`, mark it. */
static int rfactor_fork(sch_t *split_sch, sch_rv_t block, sch_rv_t loop, int nspatial, sch_t ***out, int *nout,
                        int *cap) {
  sch_t *f;
  int rc = ms_fork(&f, split_sch);
  if (rc != MLC_OK) return rc;
  sch_rv_t rf;
  const sch_rv_t *loops;
  int n;
  if (sch_rfactor(f, &rf, loop, nspatial) != MLC_OK || sch_get_loops(f, &loops, &n, rf) != MLC_OK ||
      n <= nspatial || sch_annotate(f, block, MS_ANN_RANDOM_COMPUTE_LOCATION, sch_arg_int(1)) != MLC_OK) {
    ms_drop_fork(f, "AddRFactor");
    return MLC_OK;
  }
  return ms_out_push(out, nout, cap, f);
}

static int add_rfactor_apply(const ms_rule_t *self, const ms_ctx_t *ctx, sch_t *sch, const char *name,
                             sch_t ***out, int *nout, int *cap) {
  const ms_add_rfactor_params_t *p = self->params;
  sch_path_t path;
  int64_t max_extent = (int64_t)p->max_jobs_per_core * ctx->num_cores;
  if (p->max_jobs_per_core < 0 || !ms_find_block(sch, name, &path) || !ms_needs_rfactor_or_cross_thread(sch, &path, max_extent, 1))
    return ms_out_push(out, nout, cap, sch);
  sch_t *orig;
  sch_rv_t block;
  int rc = ms_fork(&orig, sch);
  if (rc == MLC_OK && (rc = ms_block_rv(sch, name, &block)) != MLC_OK) sch_free(orig);
  if (rc != MLC_OK) {
    sch_free(sch);
    return rc;
  }
  const sch_rv_t *split = NULL;
  int nspatial = 0;
  if (split_reduction(p, sch, block, &split, &nspatial) == MLC_OK) {
    for (int i = 0; i < 2 && rc == MLC_OK; i++) rc = rfactor_fork(sch, block, split[i], nspatial, out, nout, cap);
  } else {
    MLC_DEBUG("AddRFactor: %s: %s", name, mlc_error_last());
  }
  sch_free(sch);
  if (rc != MLC_OK) {
    sch_free(orig);
    return rc;
  }
  return ms_out_push(out, nout, cap, orig);
}

const ms_rule_t ms_rule_add_rfactor = {"AddRFactor", add_rfactor_apply, NULL, &cpu_params};
