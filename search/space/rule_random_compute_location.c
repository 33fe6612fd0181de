/*
 * rule_random_compute_location.c - RandomComputeLocation (MetaSchedule's
 * random_compute_location.cc): a block the other rules left alone (not
 * inlined, not tiled) gets a sampled compute location among its consumer's
 * loops: sample_compute_location then compute_at, so the search can move
 * producers such as padding next to the code that reads them (the decision
 * can also be "root", leaving the block where it is, or "inline").
 *
 * Conditions (TVM's CheckConditions): not the root block; a direct child of
 * the root block; at least one loop above it, the outermost of which holds
 * no other block; not multi-level tiled; at least one consumer.
 *
 * A block AddRFactor marked (meta_schedule.random_compute_producer = 1) also
 * has its single producer, the rfactor block, placed after it: the
 * producer is looked up first (get_producers) because the block itself may
 * be inlined by its own sample.
 */
#include "search/space/rules.h"

static bool check_conditions(sch_t *sch, const sch_path_t *path) {
  if (ms_is_root(path) || !ms_scope_is_root(path)) return false;
  tir_stmt_t *loops[SCH_MAX_DEPTH];
  if (ms_block_loops(path, loops, SCH_MAX_DEPTH) == 0) return false;
  if (sch_child_blocks(loops[0], NULL, 0) > 1) return false;
  if (ms_block_is_tiled(ms_path_block(path))) return false;
  tir_stmt_t **consumers;
  int n = 0;
  return sch_block_consumers(sch, path, &consumers, &n) == MLC_OK && n > 0;
}

static int randomly_compute_at(sch_t *sch, sch_rv_t block) {
  sch_rv_t loc;
  int rc = sch_sample_compute_location(sch, &loc, block, NULL);
  return rc == MLC_OK ? sch_compute_at(sch, block, loc, true, -1) : rc;
}

static int place(sch_t *sch, const char *name, const sch_path_t *path) {
  sch_rv_t block, producer = SCH_RV_NONE;
  int rc = ms_block_rv(sch, name, &block);
  if (rc != MLC_OK) return rc;
  if (ms_block_ann_int_is(ms_path_block(path), MS_ANN_RANDOM_COMPUTE_LOCATION, 1)) {
    const sch_rv_t *producers;
    int n;
    if ((rc = sch_get_producers(sch, &producers, &n, block)) != MLC_OK) return rc;
    if ((rc = sch_unannotate(sch, block, MS_ANN_RANDOM_COMPUTE_LOCATION)) != MLC_OK) return rc;
    if (n == 1) producer = producers[0];
  }
  if ((rc = randomly_compute_at(sch, block)) != MLC_OK) return rc;
  return producer == SCH_RV_NONE ? MLC_OK : randomly_compute_at(sch, producer);
}

static int rcl_apply(const ms_rule_t *self, const ms_ctx_t *ctx, sch_t *sch, const char *name, sch_t ***out,
                     int *nout, int *cap) {
  sch_path_t path;
  if (!ms_find_block(sch, name, &path) || !check_conditions(sch, &path)) return ms_out_push(out, nout, cap, sch);
  int rc = place(sch, name, &path);
  if (rc == MLC_ENOMEM) {
    sch_free(sch);
    return rc;
  }
  if (rc != MLC_OK) {
    ms_drop_fork(sch, "RandomComputeLocation");
    return MLC_OK;
  }
  return ms_out_push(out, nout, cap, sch);
}

const ms_rule_t ms_rule_random_compute_location = {"RandomComputeLocation", rcl_apply, NULL, NULL};
