/*
 * get_block_loop.c - the lookup primitives (TVM's get_block_loop.cc):
 * get_block, get_loops, get_child_blocks, get_producers, get_consumers.
 *
 * They change nothing in the program; each makes random variables for what
 * it finds and records itself (pure instructions), so a trace can name
 * blocks and loops when it is replayed on a fresh schedule.
 */
#include "schedule/analysis/analysis.h"

#include <string.h>

/* RVs for a list of statements (loops or block realizes), in the arena. */
static sch_rv_t *rvs_for(sch_t *sch, tir_stmt_t **stmts, int n) {
  sch_rv_t *out = mlc_arena_alloc(sch_arena(sch), sizeof(*out) * (size_t)(n > 0 ? n : 1));
  for (int i = 0; i < n; i++)
    out[i] = stmts[i]->kind == TIR_FOR ? sch_rv_for_loop(sch, stmts[i])
                                       : sch_rv_for_block(sch, stmts[i]->u.realize.block);
  return out;
}

int sch_get_block(sch_t *sch, sch_rv_t *out, const char *name) {
  sch_path_t path;
  *out = SCH_RV_NONE;
  if (!sch_find_block_by_name(sch, name, &path)) return sch_fail(sch, "get_block", "no block named \"%s\"", name);
  *out = sch_rv_for_block(sch, path.stmts[path.n - 1]->u.realize.block);
  const char *fname = sch->func->name ? sch->func->name : "main";
  sch_arg_t attrs[2] = {sch_arg_str(name), sch_arg_str(fname)};
  sch_record(sch, SCH_INST_GET_BLOCK, NULL, 0, attrs, 2, out, 1, NULL);
  return MLC_OK;
}

/* As TVM: the loops directly above the block, up to the first enclosing
 * block (statements other than loops in between, such as an `if`, are
 * passed over), outermost first. */
int sch_get_loops(sch_t *sch, const sch_rv_t **out, int *n, sch_rv_t block) {
  sch_path_t path;
  *out = NULL;
  *n = 0;
  int rc = sch_find_block(sch, "get_loops", block, &path);
  if (rc != MLC_OK) return rc;
  int scope = sch_path_scope_depth(&path, path.n - 1);
  tir_stmt_t *loops[SCH_MAX_DEPTH];
  int nloops = sch_path_loops(&path, scope, path.n - 1, loops, SCH_MAX_DEPTH);
  sch_rv_t *rvs = rvs_for(sch, loops, nloops);
  sch_arg_t in = sch_arg_rv(block);
  sch_record(sch, SCH_INST_GET_LOOPS, &in, 1, NULL, 0, rvs, nloops, NULL);
  *out = rvs;
  *n = nloops;
  return MLC_OK;
}

int sch_get_child_blocks(sch_t *sch, const sch_rv_t **out, int *n, sch_rv_t block_or_loop) {
  sch_path_t path;
  bool is_loop = false;
  *out = NULL;
  *n = 0;
  int rc = sch_find_block_or_loop(sch, "get_child_blocks", block_or_loop, &path, &is_loop);
  if (rc != MLC_OK) return rc;
  tir_stmt_t *root = path.stmts[path.n - 1];
  int total = sch_child_blocks(root, NULL, 0);
  tir_stmt_t **kids = mlc_arena_alloc(sch_arena(sch), sizeof(*kids) * (size_t)(total + 1));
  sch_child_blocks(root, kids, total);
  sch_rv_t *rvs = rvs_for(sch, kids, total);
  sch_arg_t in = sch_arg_rv(block_or_loop);
  sch_record(sch, SCH_INST_GET_CHILD_BLOCKS, &in, 1, NULL, 0, rvs, total, NULL);
  *out = rvs;
  *n = total;
  return MLC_OK;
}

typedef int (*related_fn)(sch_t *sch, const sch_path_t *path, tir_stmt_t ***out, int *n);

static int get_related(sch_t *sch, const char *prim, sch_inst_id_t kind, related_fn fn, const sch_rv_t **out,
                       int *n, sch_rv_t block) {
  sch_path_t path;
  *out = NULL;
  *n = 0;
  int rc = sch_find_block(sch, prim, block, &path);
  if (rc != MLC_OK) return rc;
  tir_stmt_t **blocks = NULL;
  int nblocks = 0;
  rc = fn(sch, &path, &blocks, &nblocks);
  if (rc != MLC_OK) return rc;
  sch_rv_t *rvs = rvs_for(sch, blocks, nblocks);
  sch_arg_t in = sch_arg_rv(block);
  sch_record(sch, kind, &in, 1, NULL, 0, rvs, nblocks, NULL);
  *out = rvs;
  *n = nblocks;
  return MLC_OK;
}

int sch_get_producers(sch_t *sch, const sch_rv_t **out, int *n, sch_rv_t block) {
  return get_related(sch, "get_producers", SCH_INST_GET_PRODUCERS, sch_block_producers, out, n, block);
}

int sch_get_consumers(sch_t *sch, const sch_rv_t **out, int *n, sch_rv_t block) {
  return get_related(sch, "get_consumers", SCH_INST_GET_CONSUMERS, sch_block_consumers, out, n, block);
}
