/*
 * block_kind.c - what kind of block a block is (TVM's analysis.cc): complete,
 * reduction, with an affine binding. These are the preconditions most
 * primitives start with (compute_at, compute_inline, rfactor, parallel...).
 *
 * Definitions, as TVM's:
 * - complete: (1) every iter var is data parallel, (2) the block is the only
 *   writer of each buffer it writes among the blocks of its scope
 *   ("dominant"), (3) it reads no buffer it writes;
 * - reduction: (1) it has an init, (2) its binding is affine, (3) its iter
 *   vars are data parallel or reduce, (4) dominant, (5) no reduce iter var
 *   indexes a buffer it writes.
 * The checks say which condition failed, in words, so the error names it.
 */
#include "schedule/analysis/analysis.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Dominance                                                                 */
/* ------------------------------------------------------------------------ */

static bool block_writes(const tir_block_t *b, const tir_buffer_t *buf) {
  for (int i = 0; i < b->nwrites; i++)
    if (b->writes[i].buffer == buf) return true;
  return false;
}

static bool block_reads(const tir_block_t *b, const tir_buffer_t *buf) {
  for (int i = 0; i < b->nreads; i++)
    if (b->reads[i].buffer == buf) return true;
  return false;
}

/* The statement whose child blocks form the block's scope: the enclosing
 * block's realize, or NULL for the root block. */
static tir_stmt_t *scope_of(const sch_path_t *path) {
  int d = sch_path_scope_depth(path, path->n - 1);
  return d < 0 ? NULL : path->stmts[d];
}

/* The first buffer `block` writes that another child block of `scope` also
 * writes, or NULL when the block is the only writer of all its outputs. */
static const tir_buffer_t *shared_output(tir_stmt_t *scope, const tir_block_t *block) {
  if (!scope) return NULL;
  tir_stmt_t *kids[256];
  int n = sch_child_blocks(scope, kids, 256);
  if (n > 256) n = 256;
  for (int w = 0; w < block->nwrites; w++) {
    const tir_buffer_t *buf = block->writes[w].buffer;
    for (int k = 0; k < n; k++) {
      const tir_block_t *other = kids[k]->u.realize.block;
      if (other != block && block_writes(other, buf)) return buf;
    }
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Complete blocks                                                           */
/* ------------------------------------------------------------------------ */

/* 0 when complete under `scope`, else the violated condition (1-3) with a
 * reason in why. */
static int complete_code(tir_stmt_t *scope, const tir_block_t *b, char *why, size_t len) {
  for (int i = 0; i < b->niter_vars; i++) {
    if (b->iter_vars[i].type != TIR_ITER_SPATIAL) {
      snprintf(why, len, "iter var %s is not data parallel", b->iter_vars[i].var->u.var.name);
      return 1;
    }
  }
  const tir_buffer_t *shared = shared_output(scope, b);
  if (shared) {
    snprintf(why, len, "another block of the scope also writes %s", shared->name);
    return 2;
  }
  for (int i = 0; i < b->nwrites; i++) {
    if (block_reads(b, b->writes[i].buffer)) {
      snprintf(why, len, "it reads %s, which it writes", b->writes[i].buffer->name);
      return 3;
    }
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Affine bindings                                                           */
/* ------------------------------------------------------------------------ */

/* The schedule's entry for the block, or NULL. */
static sch_affine_entry_t *affine_entry(sch_t *sch, uint32_t uid) {
  for (int i = 0; i < sch->naffine; i++)
    if (sch->affine[i].uid == uid) return &sch->affine[i];
  return NULL;
}

static bool same_loop(const sch_affine_loop_t *l, const tir_stmt_t *loop) {
  return l->var == loop->u.loop.var && l->min == loop->u.loop.min && l->extent == loop->u.loop.extent;
}

/* Whether the schedule remembers the block at the end of path, under these
 * loops, as affine (sch_affine_entry_t says when that holds). */
static bool affine_remembered(sch_t *sch, const tir_stmt_t *realize, tir_stmt_t **loops, int nloops) {
  sch_affine_entry_t *e = sch ? affine_entry(sch, realize->u.realize.block->uid) : NULL;
  if (!e || e->values != realize->u.realize.iter_values || e->nvalues != realize->u.realize.n ||
      e->predicate != realize->u.realize.predicate || e->nloops != nloops)
    return false;
  for (int i = 0; i < nloops; i++)
    if (!same_loop(&e->loops[i], loops[i])) return false;
  return true;
}

static void remember_affine(sch_t *sch, const tir_stmt_t *realize, tir_stmt_t **loops, int nloops) {
  if (!sch || nloops > SCH_AFFINE_MAX_LOOPS) return;
  sch_affine_entry_t *e = affine_entry(sch, realize->u.realize.block->uid);
  if (!e) {
    if (sch->naffine == sch->cap_affine) {
      int cap = sch->cap_affine ? sch->cap_affine * 2 : 8;
      sch_affine_entry_t *grown = mlc_realloc(sch->affine, sizeof(*grown) * (size_t)cap);
      if (!grown) return; /* only a cache */
      sch->affine = grown;
      sch->cap_affine = cap;
    }
    e = &sch->affine[sch->naffine++];
  }
  e->uid = realize->u.realize.block->uid;
  e->nvalues = realize->u.realize.n;
  e->values = realize->u.realize.iter_values;
  e->predicate = realize->u.realize.predicate;
  e->nloops = nloops;
  for (int i = 0; i < nloops; i++)
    e->loops[i] = (sch_affine_loop_t){loops[i]->u.loop.var, loops[i]->u.loop.min, loops[i]->u.loop.extent};
}

/* Whether the terms c * x of one binding (the loops it uses, with their
 * extents) are the exact digits of one fused iterator: ordered by
 * coefficient, 1, e_0, e_0 * e_1, ... (what tiling a loop makes). */
static bool exact_digits(int64_t *c, int64_t *e, int m) {
  for (int k = 1; k < m; k++) /* insertion sort by coefficient */
    for (int j = k; j > 0 && c[j - 1] > c[j]; j--) {
      int64_t tc = c[j], te = e[j];
      c[j] = c[j - 1], e[j] = e[j - 1];
      c[j - 1] = tc, e[j - 1] = te;
    }
  int64_t want = 1;
  for (int k = 0; k < m; k++) {
    if (c[k] != want || e[k] > (INT64_C(1) << 31)) return false;
    want *= e[k];
  }
  return true;
}

/* Bindings the iteration map is sure to accept, found without it: no
 * predicate, and each binding a constant plus the exact digits (scale 1,
 * strides the products of the inner extents) of loops that start at 0 and
 * that no other binding uses: `T.axis.remap("SSR", [i, j, k])` as the
 * workloads start, and `i_0 * 256 + i_1 * 32 + i_2 * 8 + i_3` after tiling
 * by perfect tiles. Anything else (fused loops' `f // 16`, predicates) goes
 * to the iteration map. */
static bool plainly_affine(const tir_stmt_t *realize, tir_stmt_t **loops, int nloops) {
  tir_expr_t *pred = realize->u.realize.predicate;
  tir_var_t *vars[SCH_MAX_DEPTH];
  int64_t coef[SCH_MAX_DEPTH], ext[SCH_MAX_DEPTH];
  bool used[SCH_MAX_DEPTH] = {false};
  if ((pred && !tir_is_const_int(pred, 1)) || nloops > SCH_MAX_DEPTH) return false;
  for (int k = 0; k < nloops; k++) {
    vars[k] = loops[k]->u.loop.var;
    if (!tir_is_const_int(loops[k]->u.loop.min, 0) || !tir_as_int(loops[k]->u.loop.extent, &ext[k]) || ext[k] < 1)
      return false;
  }
  for (int i = 0; i < realize->u.realize.n; i++) {
    if (!sch_linear_coefs(realize->u.realize.iter_values[i], vars, nloops, coef)) return false;
    int64_t c[SCH_MAX_DEPTH], e[SCH_MAX_DEPTH];
    int m = 0;
    for (int k = 0; k < nloops; k++) {
      if (coef[k] == 0 || ext[k] == 1) continue; /* unit loops are constants */
      if (used[k] || coef[k] < 0) return false;
      used[k] = true;
      c[m] = coef[k], e[m++] = ext[k];
    }
    if (!exact_digits(c, e, m)) return false;
  }
  return true;
}

/* TVM's IsAffineBinding: the bindings are a surjective iteration map of the
 * loops between the scope and the block (under the predicate), and each one
 * is a single split with scale 1 (no `2 * i`). Scratch expressions go to
 * arena a; a positive answer is remembered by sch (NULL: not remembered). */
static bool affine_binding(sch_t *sch, mlc_arena_t *a, const sch_path_t *path, char *why, size_t len) {
  tir_stmt_t *realize = path->stmts[path->n - 1];
  int scope = sch_path_scope_depth(path, path->n - 1);
  tir_stmt_t *loops[SCH_MAX_DEPTH];
  int nloops = sch_path_loops(path, scope, path->n - 1, loops, SCH_MAX_DEPTH);
  if (nloops == 0 || realize->u.realize.n == 0) return true;
  if (affine_remembered(sch, realize, loops, nloops)) return true;
  if (plainly_affine(realize, loops, nloops)) {
    remember_affine(sch, realize, loops, nloops);
    return true;
  }
  tir_var_t *vars[SCH_MAX_DEPTH];
  tir_range_t doms[SCH_MAX_DEPTH];
  for (int i = 0; i < nloops; i++) {
    vars[i] = loops[i]->u.loop.var;
    doms[i].min = loops[i]->u.loop.min;
    doms[i].extent = loops[i]->u.loop.extent;
  }
  tir_analyzer_t *an = tir_analyzer_new(a);
  if (!an) return false;
  tir_iter_map_t map;
  int rc = tir_detect_iter_map(&map, an, realize->u.realize.iter_values, realize->u.realize.n, vars, doms,
                               nloops, realize->u.realize.predicate, TIR_ITER_SURJECTIVE);
  if (rc != MLC_OK) {
    snprintf(why, len, "%s", mlc_error_last());
    return false;
  }
  for (int i = 0; i < map.n; i++) {
    const tir_iter_sum_t *s = &map.sums[i];
    if (s->nargs > 0 && !tir_is_const_int(s->args[0].scale, 1)) {
      snprintf(why, len, "binding %d is a scaled iterator", i);
      return false;
    }
  }
  remember_affine(sch, realize, loops, nloops);
  return true;
}

bool sch_has_affine_binding(sch_t *sch, const sch_path_t *block_path) {
  char why[256];
  return affine_binding(sch, sch_arena(sch), block_path, why, sizeof why);
}

int sch_check_affine_binding(sch_t *sch, const char *prim, const sch_path_t *block_path) {
  char why[256] = "";
  if (affine_binding(sch, sch_arena(sch), block_path, why, sizeof why)) return MLC_OK;
  tir_stmt_t *realize = block_path->stmts[block_path->n - 1];
  return sch_fail_at(sch, prim, realize, "block %s does not have an affine binding (%s)",
                     realize->u.realize.block->name, why);
}

/* ------------------------------------------------------------------------ */
/* Reduction blocks                                                          */
/* ------------------------------------------------------------------------ */

typedef struct {
  const tir_block_t *block;
  const char *bad_var; /* the first reduce iter var found in a store's indices */
  const char *bad_buffer;
} store_index_check_t;

/* As TVM: every store of the body (nested blocks included; the init is not
 * looked at) must be indexed without reduce iter vars. */
static bool visit_store(tir_visitor_t *v, tir_stmt_t *s) {
  store_index_check_t *c = v->payload;
  if (c->bad_var) return false;
  if (s->kind != TIR_BUFFER_STORE) return true;
  for (int i = 0; i < s->u.store.nindices && !c->bad_var; i++) {
    for (int k = 0; k < c->block->niter_vars; k++) {
      const tir_iter_var_t *iv = &c->block->iter_vars[k];
      if (iv->type == TIR_ITER_REDUCE && tir_expr_uses_var(s->u.store.indices[i], iv->var)) {
        c->bad_var = iv->var->u.var.name;
        c->bad_buffer = s->u.store.buffer->name;
        break;
      }
    }
  }
  return false;
}

/* Condition 5: no reduce iter var indexes a store (to an output). */
static bool reduce_vars_index_no_output(const tir_block_t *b, char *why, size_t len) {
  store_index_check_t c = {b, NULL, NULL};
  tir_visitor_t v = {0};
  v.stmt = visit_store;
  v.payload = &c;
  tir_visit_stmt(&v, b->body);
  if (!c.bad_var) return true;
  snprintf(why, len, "reduction iter var %s indexes the output %s", c.bad_var, c.bad_buffer);
  return false;
}

/* 0 when a reduction block under `scope`, else the violated condition (1-5). */
static int reduction_code(sch_t *sch, mlc_arena_t *a, tir_stmt_t *scope, const sch_path_t *path, char *why,
                          size_t len) {
  const tir_block_t *b = path->stmts[path->n - 1]->u.realize.block;
  if (!b->init) {
    snprintf(why, len, "it has no init");
    return 1;
  }
  char detail[200] = "";
  if (!affine_binding(sch, a, path, detail, sizeof detail)) {
    snprintf(why, len, "its binding is not affine: %s", detail);
    return 2;
  }
  for (int i = 0; i < b->niter_vars; i++) {
    tir_iter_type_t t = b->iter_vars[i].type;
    if (t != TIR_ITER_SPATIAL && t != TIR_ITER_REDUCE) {
      snprintf(why, len, "iter var %s is neither data parallel nor reduce", b->iter_vars[i].var->u.var.name);
      return 3;
    }
  }
  const tir_buffer_t *shared = shared_output(scope, b);
  if (shared) {
    snprintf(why, len, "another block of the scope also writes %s", shared->name);
    return 4;
  }
  return reduce_vars_index_no_output(b, why, len) ? 0 : 5;
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                              */
/* ------------------------------------------------------------------------ */

bool sch_is_complete_block(const sch_path_t *block_path) {
  char why[256];
  return complete_code(scope_of(block_path), block_path->stmts[block_path->n - 1]->u.realize.block, why,
                       sizeof why) == 0;
}

bool sch_is_reduction_block(sch_t *sch, const sch_path_t *block_path) {
  /* The affine check builds expressions: a scratch arena keeps them out of
   * the program's. */
  mlc_arena_t *a = mlc_arena_new();
  if (!a) return false;
  char why[256];
  bool ok = reduction_code(sch, a, scope_of(block_path), block_path, why, sizeof why) == 0;
  mlc_arena_free(a);
  return ok;
}

/* Shared by the scope-wide check and the loop-local one (compact dataflow). */
static int check_kind_under(sch_t *sch, const char *prim, tir_stmt_t *scope, const sch_path_t *path,
                            const char *where) {
  const tir_block_t *b = path->stmts[path->n - 1]->u.realize.block;
  char why_c[256], why_r[256];
  if (complete_code(scope, b, why_c, sizeof why_c) == 0) return MLC_OK;
  if (reduction_code(sch, sch_arena(sch), scope, path, why_r, sizeof why_r) == 0) return MLC_OK;
  return sch_fail_at(sch, prim, path->stmts[path->n - 1],
                     "block %s%s is neither a complete block (%s) nor a reduction block (%s)", b->name, where,
                     why_c, why_r);
}

int sch_check_complete_or_reduction(sch_t *sch, const char *prim, const sch_path_t *block_path) {
  return check_kind_under(sch, prim, scope_of(block_path), block_path, "");
}

int sch_check_compact_dataflow(sch_t *sch, const char *prim, const sch_path_t *path, int depth) {
  tir_stmt_t *root = path->stmts[depth];
  tir_stmt_t *kids[256];
  int n = sch_child_blocks(root, kids, 256);
  if (n > 256) n = 256;
  for (int k = 0; k < n; k++) {
    sch_path_t sub;
    if (!sch_find_uid(sch, kids[k]->u.realize.block->uid, &sub)) continue;
    char where[160] = "";
    if (root->kind == TIR_FOR) snprintf(where, sizeof where, " under loop %s", sch_loop_name(root));
    int rc = check_kind_under(sch, prim, root, &sub, where);
    if (rc != MLC_OK) return rc;
  }
  return MLC_OK;
}
