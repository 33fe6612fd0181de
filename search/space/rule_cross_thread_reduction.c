/*
 * rule_cross_thread_reduction.c - CrossThreadReduction (MetaSchedule's
 * cross_thread_reduction.cc): on GPUs, a reduction with too little spatial
 * work for the threads of a block (softmax's row max and sum, norms, a
 * matrix-vector product with few rows) is computed by the threads of one
 * block together: its reduction loops are fused and split so the inner part
 * is bound to threadIdx.x (the code generator reduces across the threads).
 *
 * For a block that needs it (ms_needs_rfactor_or_cross_thread with the
 * target's max_threads_per_block and warp size), a fork:
 *   1. a thread count sampled among {4, 8, ..., 512} (uniform);
 *   2. when the block can be fused into its first consumer (one write; the
 *      consumers share a loop or there is one; the first does not need
 *      multi-level tiling; a data-parallel prefix of the loops to compute
 *      at), the consumer's innermost loop is split by that count and bound
 *      to threadIdx.x (or, when the consumer already runs on threads, their
 *      count from the trace is used), the block is computed at the
 *      consumer's loop, and its output is put in "shared" memory;
 *   3. the block's reduction loops are moved innermost, fused, split by the
 *      count and the inner part bound to threadIdx.x.
 * The rule returns the fork and then the schedule unchanged (TVM's order);
 * a fork whose primitive fails is dropped.
 */
#include "search/space/rules.h"

#include <string.h>

static const ms_cross_thread_params_t cuda_params = {
    .nthread_extents = 8,
    .thread_extents = {4, 8, 16, 32, 64, 128, 256, 512},
};

typedef struct {
  bool fusible;
  sch_rv_t target_loop, target_block, innermost;
} fuse_target_t;

/* The deepest loop or block common to the paths of the consumers (TVM's
 * srefs: sequences and other statements in between do not count). */
static tir_stmt_t *consumers_lca(sch_t *sch, const sch_rv_t *consumers, int n) {
  sch_path_t first, other;
  if (sch_find_block(sch, "CrossThreadReduction", consumers[0], &first) != MLC_OK) return NULL;
  int depth = first.n;
  for (int c = 1; c < n; c++) {
    if (sch_find_block(sch, "CrossThreadReduction", consumers[c], &other) != MLC_OK) return NULL;
    int d = 0;
    while (d < depth && d < other.n && first.stmts[d] == other.stmts[d]) d++;
    depth = d;
  }
  while (depth > 0 && first.stmts[depth - 1]->kind != TIR_FOR && first.stmts[depth - 1]->kind != TIR_BLOCK_REALIZE)
    depth--;
  return depth > 0 ? first.stmts[depth - 1] : NULL;
}

/* GetComputePosition: the deepest loop of the consumer's that is still data
 * parallel for the block and not below the consumers' common loop. */
static int compute_position(sch_t *sch, const sch_rv_t *bloops, int nb, const sch_rv_t *tloops, int nt,
                            const tir_stmt_t *lca) {
  for (int i = 0; i < nb && i < nt; i++) {
    tir_stmt_t *bl, *tl;
    if (sch_get_loop_node(sch, bloops[i], &bl) != MLC_OK || sch_get_loop_node(sch, tloops[i], &tl) != MLC_OK)
      return -1;
    if (sch_loop_binding_type(bl) != SCH_LOOP_DATA_PAR) return i - 1;
    if (tl == lca) return i;
  }
  return (nb < nt ? nb : nt) - 1;
}

/* GetComputeTargetLoopAndBlock. */
static fuse_target_t compute_target(sch_t *sch, sch_rv_t block) {
  fuse_target_t t = {false, SCH_RV_NONE, SCH_RV_NONE, SCH_RV_NONE};
  tir_block_t *b;
  const sch_rv_t *consumers, *bloops, *tloops;
  int nc, nb, nt;
  if (sch_get_block_node(sch, block, &b) != MLC_OK || b->nwrites != 1) return t;
  if (sch_get_consumers(sch, &consumers, &nc, block) != MLC_OK || nc == 0) return t;
  sch_path_t cpath;
  if (sch_find_block(sch, "CrossThreadReduction", consumers[0], &cpath) != MLC_OK ||
      ms_needs_multi_level_tiling(&cpath))
    return t;
  tir_stmt_t *lca = consumers_lca(sch, consumers, nc);
  if (!lca || (nc > 1 && lca->kind != TIR_FOR)) return t;
  if (sch_get_loops(sch, &bloops, &nb, block) != MLC_OK || sch_get_loops(sch, &tloops, &nt, consumers[0]) != MLC_OK)
    return t;
  int pos = compute_position(sch, bloops, nb, tloops, nt, lca);
  if (pos < 0) return t;
  t.fusible = true;
  t.target_loop = tloops[pos];
  t.target_block = consumers[0];
  t.innermost = tloops[nt - 1];
  return t;
}

/* InThreadScope: some loop above the block is bound to threadIdx. */
static bool in_thread_scope(sch_t *sch, sch_rv_t block) {
  sch_path_t path;
  if (sch_find_block(sch, "CrossThreadReduction", block, &path) != MLC_OK) return false;
  tir_stmt_t *loops[SCH_MAX_DEPTH];
  int n = ms_block_loops(&path, loops, SCH_MAX_DEPTH);
  for (int i = 0; i < n; i++)
    if (ms_loop_bound_to(loops[i], "threadIdx")) return true;
  return false;
}

/* GetThreadIdxExtentFromTrace: the split factor that made the first loop
 * the trace binds to threadIdx.x. */
static bool traced_thread_extent(const sch_t *sch, sch_arg_t *out) {
  const sch_trace_t *t = sch_get_trace(sch);
  for (int i = 0; i < t->n; i++) {
    const sch_inst_t *bind = &t->insts[i];
    if (strcmp(bind->kind->name, "Bind") != 0 || bind->nattrs < 1 || bind->attrs[0].kind != SCH_ARG_STR ||
        strcmp(bind->attrs[0].u.s, "threadIdx.x") != 0 || bind->ninputs < 1)
      continue;
    for (int j = 0; j < i; j++) {
      const sch_inst_t *split = &t->insts[j];
      if (strcmp(split->kind->name, "Split") != 0) continue;
      for (int k = 0; k < split->noutputs; k++)
        if (split->outputs[k] == bind->inputs[0].u.rv && 1 + k < split->ninputs &&
            split->inputs[1 + k].kind != SCH_ARG_NONE) {
          *out = split->inputs[1 + k];
          return true;
        }
    }
  }
  return false;
}

/* Step 2: fuse the block into its consumer; *extent may be replaced. */
static int fuse_into_consumer(sch_t *sch, sch_rv_t block, fuse_target_t *t, sch_arg_t *extent) {
  int rc;
  if (!in_thread_scope(sch, t->target_block)) {
    const sch_rv_t *split;
    sch_arg_t f[2] = {sch_arg_none(), *extent};
    if ((rc = sch_split(sch, &split, t->innermost, f, 2, true)) != MLC_OK) return rc;
    sch_rv_t outer = split[0], inner = split[1];
    if ((rc = sch_bind(sch, inner, "threadIdx.x")) != MLC_OK) return rc;
    if (t->innermost == t->target_loop) t->target_loop = outer;
  } else if (!traced_thread_extent(sch, extent)) {
    return mlc_error_set(MLC_ESCHEDULE, "CrossThreadReduction: no threadIdx.x extent in the trace");
  }
  if ((rc = sch_compute_at(sch, block, t->target_loop, true, -1)) != MLC_OK) return rc;
  return sch_set_scope(sch, block, 0, "shared");
}

/* Steps 1-3 on the fork. */
static int cross_thread(const ms_cross_thread_params_t *p, sch_t *sch, sch_rv_t block) {
  fuse_target_t t = compute_target(sch, block);
  double probs[MS_MAX_THREAD_EXTENTS];
  int n = p->nthread_extents;
  for (int i = 0; i < n; i++) probs[i] = 1.0 / n;
  sch_rv_t sampled, fused;
  int rc = sch_sample_categorical(sch, &sampled, p->thread_extents, probs, n, NULL);
  if (rc != MLC_OK) return rc;
  sch_arg_t extent = sch_arg_rv(sampled);
  if (t.fusible && (rc = fuse_into_consumer(sch, block, &t, &extent)) != MLC_OK) return rc;
  int nspatial;
  if ((rc = ms_reorder_and_fuse_reduction(sch, block, &fused, &nspatial)) != MLC_OK) return rc;
  const sch_rv_t *split;
  sch_arg_t f[2] = {sch_arg_none(), extent};
  if ((rc = sch_split(sch, &split, fused, f, 2, true)) != MLC_OK) return rc;
  return sch_bind(sch, split[1], "threadIdx.x");
}

static int cross_thread_apply(const ms_rule_t *self, const ms_ctx_t *ctx, sch_t *sch, const char *name,
                              sch_t ***out, int *nout, int *cap) {
  const mlc_target_t *tg = &ctx->target;
  sch_path_t path;
  if (!ms_target_is_gpu(tg) || tg->max_threads_per_block <= 0 || tg->thread_warp_size <= 0 ||
      !ms_find_block(sch, name, &path) ||
      !ms_needs_rfactor_or_cross_thread(sch, &path, tg->max_threads_per_block, tg->thread_warp_size))
    return ms_out_push(out, nout, cap, sch);
  sch_t *f = NULL;
  sch_rv_t block;
  int rc = ms_fork(&f, sch);
  if (rc == MLC_OK && (rc = ms_block_rv(f, name, &block)) == MLC_OK) rc = cross_thread(self->params, f, block);
  if (rc == MLC_ENOMEM) {
    sch_free(f);
    sch_free(sch);
    return rc;
  }
  if (rc != MLC_OK) {
    ms_drop_fork(f, "CrossThreadReduction"); /* a failed primitive drops only the fork */
  } else if ((rc = ms_out_push(out, nout, cap, f)) != MLC_OK) {
    sch_free(sch);
    return rc;
  }
  return ms_out_push(out, nout, cap, sch);
}

const ms_rule_t ms_rule_cross_thread_reduction = {"CrossThreadReduction", cross_thread_apply, NULL, &cuda_params};
