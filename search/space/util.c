/*
 * util.c - what the schedule rules share (rules.h): handing schedules out
 * of a rule, forking a schedule, and finding blocks by name.
 *
 * Rules receive a block by name because each fork of the design space is
 * its own schedule; the space generator has already recorded a get_block
 * for every block of the workload (TVM's BlockCollector), and a rule reuses
 * that random variable instead of recording another lookup, so the traces
 * read as TVM's do (`b0 = sch.get_block(name="C", ...)` once, at the top).
 */
#include "search/space/rules.h"

#include <string.h>

int ms_out_push(sch_t ***out, int *nout, int *cap, sch_t *s) {
  if (*nout == *cap) {
    int ncap = *cap ? *cap * 2 : 4;
    sch_t **grown = mlc_realloc(*out, sizeof(*grown) * (size_t)ncap);
    if (!grown) {
      sch_free(s);
      return mlc_error_set(MLC_ENOMEM, "design space: out of memory");
    }
    *out = grown;
    *cap = ncap;
  }
  (*out)[(*nout)++] = s;
  return MLC_OK;
}

int ms_fork(sch_t **out, sch_t *sch) {
  int rc = sch_copy(out, sch);
  if (rc != MLC_OK) return rc;
  sch_seed(*out, mlc_rng_fork_seed(sch_rng(sch)));
  return MLC_OK;
}

void ms_drop_fork(sch_t *sch, const char *rule) {
  MLC_DEBUG("%s: dropping a fork: %s", rule, sch_error(sch));
  sch_free(sch);
}

bool ms_find_block(const sch_t *sch, const char *name, sch_path_t *path) {
  return sch_find_block_by_name(sch, name, path);
}

/* The latest variable of the trace that names the block with `uid`. The
 * trace's variables are the schedule's, so the table says what each is. */
static sch_rv_t traced_block_rv(const sch_t *sch, uint32_t uid) {
  const sch_trace_t *t = sch_get_trace(sch);
  for (int i = t->n - 1; i >= 0; i--) {
    const sch_inst_t *inst = &t->insts[i];
    for (int k = 0; k < inst->noutputs; k++) {
      sch_rv_t rv = inst->outputs[k];
      if (!sch_rv_valid(sch, rv)) continue;
      const sch_rv_entry_t *e = &sch->rvs[rv];
      if (e->kind == SCH_RV_BLOCK && e->uid == uid) return rv;
    }
  }
  return SCH_RV_NONE;
}

int ms_block_rv(sch_t *sch, const char *name, sch_rv_t *out) {
  sch_path_t path;
  *out = SCH_RV_NONE;
  if (!ms_find_block(sch, name, &path))
    return mlc_error_set(MLC_ENOTFOUND, "design space: no block named \"%s\"", name);
  *out = traced_block_rv(sch, ms_path_block(&path)->uid);
  if (*out != SCH_RV_NONE) return MLC_OK;
  return sch_get_block(sch, out, name);
}

bool ms_is_root(const sch_path_t *path) { return sch_path_scope_depth(path, path->n - 1) < 0; }

bool ms_scope_is_root(const sch_path_t *path) {
  int scope = sch_path_scope_depth(path, path->n - 1);
  return scope >= 0 && sch_path_scope_depth(path, scope) < 0;
}

int ms_block_loops(const sch_path_t *path, tir_stmt_t **loops, int cap) {
  int scope = sch_path_scope_depth(path, path->n - 1);
  return sch_path_loops(path, scope, path->n - 1, loops, cap);
}
