/*
 * analysis.c - the block analyses the schedule rules decide with (rules.h),
 * after TVM's src/tir/schedule/analysis/analysis.cc: spatial blocks and
 * functions, trivial bindings, NeedsMultiLevelTiling, loop iteration types,
 * the read/write index pattern (AnalyzeReadWritePattern, IsWriteCache), and
 * searches for operators and branches.
 *
 * All of them read the program only, in time linear in what they look at
 * (a block's regions, a loop's direct child blocks): the rules call them on
 * every block of every fork.
 */
#include "search/space/rules.h"

#include <string.h>

bool ms_block_is_spatial(const tir_block_t *b) {
  for (int i = 0; i < b->niter_vars; i++)
    if (b->iter_vars[i].type != TIR_ITER_SPATIAL) return false;
  return true;
}

static bool visit_spatial(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  bool *all = v->payload;
  if (!ms_block_is_spatial(b)) *all = false;
  return *all;
}

bool ms_func_is_spatial(const tir_func_t *f) {
  bool all = true;
  tir_visitor_t v = {0};
  v.block = visit_spatial;
  v.payload = &all;
  tir_visit_stmt(&v, f->body);
  return all;
}

bool ms_block_is_tiled(const tir_block_t *b) {
  return tir_annot_get(b->annots, b->nannots, MS_ANN_TILING_STRUCTURE) != NULL;
}

bool ms_block_ann_int_is(const tir_block_t *b, const char *key, int64_t v) {
  int64_t got = 0;
  tir_expr_t *e = tir_annot_get(b->annots, b->nannots, key);
  return e && tir_as_int(e, &got) && got == v;
}

bool ms_is_trivial_binding(const sch_path_t *path) {
  tir_stmt_t *loops[SCH_MAX_DEPTH];
  int n = ms_block_loops(path, loops, SCH_MAX_DEPTH);
  const tir_stmt_t *realize = path->stmts[path->n - 1];
  if (n != realize->u.realize.n) return false;
  for (int i = 0; i < n; i++)
    if (realize->u.realize.iter_values[i] != loops[i]->u.loop.var) return false;
  return true;
}

/* Spatial block vars whose domain is not [0, 1): they must index a read. */
static int nontrivial_spatial_vars(const tir_block_t *b, tir_var_t **out) {
  int n = 0;
  for (int i = 0; i < b->niter_vars; i++) {
    const tir_iter_var_t *iv = &b->iter_vars[i];
    bool unit = tir_is_const_int(iv->dom.min, 0) && tir_is_const_int(iv->dom.extent, 1);
    if (iv->type == TIR_ITER_SPATIAL && !unit) out[n++] = iv->var;
  }
  return n;
}

/* Spatial vars of `vars` that no index of the region uses; -1 when an
 * extent is not constant (TVM gives up on the block then). */
static int unused_vars(const tir_region_t *r, tir_var_t **vars, int nvars) {
  int unused = 0;
  for (int d = 0; d < r->ndim; d++) {
    int64_t ext;
    if (!tir_as_int(r->ranges[d].extent, &ext)) return -1;
  }
  for (int k = 0; k < nvars; k++) {
    bool used = false;
    for (int d = 0; d < r->ndim && !used; d++) used = tir_expr_uses_var(r->ranges[d].min, vars[k]);
    if (!used) unused++;
  }
  return unused;
}

bool ms_needs_multi_level_tiling(const sch_path_t *path) {
  const tir_block_t *b = ms_path_block(path);
  if (ms_block_is_tiled(b)) return false;
  if (b->nwrites != 1 || b->nreads == 0 || ms_block_is_spatial(b) || !ms_is_trivial_binding(path)) return false;
  const tir_buffer_t *out = b->writes[0].buffer;
  tir_var_t *vars[64];
  if (b->niter_vars > 64) return false;
  int nvars = nontrivial_spatial_vars(b, vars);
  int total_unused = 0;
  for (int i = 0; i < b->nreads; i++) {
    const tir_buffer_t *buf = b->reads[i].buffer;
    for (int j = 0; j < i; j++)
      if (b->reads[j].buffer == buf) return false; /* a buffer read twice */
    if (buf == out) continue;                        /* the reduction's own output */
    int unused = unused_vars(&b->reads[i], vars, nvars);
    if (unused < 0) return false;
    total_unused += unused;
  }
  return total_unused >= 1;
}

/* ------------------------------------------------------------------------ */
/* Read/write index patterns                                                 */
/* ------------------------------------------------------------------------ */

/* `var`, `var + c`, `c + var` or `var - c` (AnalyzeVarWithShift); the var,
 * or NULL. *shifted says whether a constant was added. */
static const tir_var_t *var_with_shift(const tir_expr_t *e, bool *shifted) {
  *shifted = false;
  if (e->kind == TIR_VAR) return e;
  if (e->kind != TIR_ADD && e->kind != TIR_SUB) return NULL;
  const tir_expr_t *a = e->u.bin.a, *b = e->u.bin.b;
  *shifted = true;
  if (a->kind == TIR_VAR && b->kind == TIR_INT_IMM) return a;
  if (e->kind == TIR_ADD && b->kind == TIR_VAR && a->kind == TIR_INT_IMM) return b;
  return NULL;
}

/* Maps each read dimension to the write dimension its var indexes (-1 for
 * a constant index); false when some index is neither. */
static bool map_read_dims(const tir_region_t *read, const tir_region_t *write, int *mapped, ms_rw_pattern_t *p) {
  for (int i = 0; i < read->ndim; i++) {
    int64_t c;
    mapped[i] = -1;
    if (!tir_as_int(read->ranges[i].extent, &c)) return false;
    if (tir_as_int(read->ranges[i].min, &c)) {
      p->no_const_read = false;
      continue;
    }
    bool shifted;
    const tir_var_t *v = var_with_shift(read->ranges[i].min, &shifted);
    if (!v) return false;
    for (int d = 0; d < write->ndim; d++)
      if (write->ranges[d].min == v) mapped[i] = d;
    if (mapped[i] < 0) return false;
    if (shifted) p->no_shift_read = false;
  }
  return true;
}

ms_rw_pattern_t ms_analyze_rw_pattern(const tir_region_t *read, const tir_region_t *write) {
  ms_rw_pattern_t none = {false, false, false, false, false, false};
  ms_rw_pattern_t p = {true, true, true, true, true, true};
  if (write->ndim > TIR_MAX_DIMS || read->ndim > TIR_MAX_DIMS) return none;
  for (int d = 0; d < write->ndim; d++) {
    int64_t c;
    if (!tir_as_int(write->ranges[d].extent, &c) || write->ranges[d].min->kind != TIR_VAR) return none;
  }
  int mapped[TIR_MAX_DIMS], count[TIR_MAX_DIMS] = {0};
  if (!map_read_dims(read, write, mapped, &p)) return none;
  int last = -1;
  for (int i = 0; i < read->ndim; i++) {
    if (mapped[i] < 0) continue;
    count[mapped[i]]++;
    if (last > mapped[i]) p.ordered = false;
    last = mapped[i];
  }
  for (int d = 0; d < write->ndim; d++) {
    if (count[d] == 0) p.surjective = false;
    else if (count[d] >= 2) p.injective = false;
  }
  return p;
}

bool ms_block_is_write_cache(const tir_block_t *b) {
  if (b->nwrites != 1) return false;
  for (int i = 0; i < b->nreads; i++) {
    ms_rw_pattern_t p = ms_analyze_rw_pattern(&b->reads[i], &b->writes[0]);
    if (!(p.injective && p.ordered)) return false;
  }
  return true;
}

/* ------------------------------------------------------------------------ */
/* Operators and branches                                                    */
/* ------------------------------------------------------------------------ */

typedef struct {
  const tir_op_t *ops;
  int nops;
  bool found;
} op_search_t;

static bool find_op(tir_visitor_t *v, tir_expr_t *e) {
  op_search_t *s = v->payload;
  if (s->found) return false;
  if (e->kind == TIR_CALL)
    for (int i = 0; i < s->nops; i++)
      if (e->u.call.op == s->ops[i]) s->found = true;
  return !s->found;
}

bool ms_stmt_has_op(tir_stmt_t *s, const tir_op_t *ops, int nops) {
  op_search_t search = {ops, nops, false};
  if (nops == 0) return false;
  tir_visitor_t v = {0};
  v.expr = find_op;
  v.payload = &search;
  tir_visit_stmt(&v, s);
  return search.found;
}

static bool branch_expr(tir_visitor_t *v, tir_expr_t *e) {
  bool *found = v->payload;
  if (e->kind == TIR_SELECT || (e->kind == TIR_CALL && e->u.call.op == TIR_OP_IF_THEN_ELSE)) *found = true;
  return !*found;
}

static bool branch_stmt(tir_visitor_t *v, tir_stmt_t *s) {
  bool *found = v->payload;
  if (s->kind == TIR_IF) *found = true;
  if (s->kind == TIR_BLOCK_REALIZE && s->u.realize.predicate && !tir_is_const_int(s->u.realize.predicate, 1))
    *found = true;
  return !*found;
}

bool ms_stmt_has_if_then_else(tir_stmt_t *s) {
  bool found = false;
  tir_visitor_t v = {0};
  v.expr = branch_expr;
  v.stmt = branch_stmt;
  v.payload = &found;
  tir_visit_stmt(&v, s);
  return found;
}
