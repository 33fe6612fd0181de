/*
 * annotate.c - the annotation primitives (TVM's for_kind.cc and
 * annotate.cc): parallel, vectorize, unroll and bind change a loop's kind;
 * annotate and unannotate edit the annotations of a loop or a block.
 *
 * parallel, vectorize and bind need, as TVM:
 * - compact dataflow under the loop: each block directly under it is a
 *   complete or a reduction block (judged among those blocks);
 * - every block under it (nested ones too, but not blocks inside an init)
 *   binds the loop variable only to data-parallel iter vars, except that
 *   bind to threadIdx.x/y/z may also feed reduce iter vars (cross-thread
 *   reduction).
 * unroll has no precondition. Each success replaces the one loop or block
 * (copy-on-write) and records itself.
 */
#include "schedule/analysis/analysis.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* Thread axes                                                               */
/* ------------------------------------------------------------------------ */

/* The thread axes bind accepts, with TVM's thread-scope rank: 0 for
 * blocks, 1 for threads; a reduction may only be bound to a rank-1 axis
 * with a dimension (threadIdx.*), not to a virtual thread. */
#define SCH_THREAD_AXES(X)           \
  X("blockIdx.x",  false)            \
  X("blockIdx.y",  false)            \
  X("blockIdx.z",  false)            \
  X("threadIdx.x", true)             \
  X("threadIdx.y", true)             \
  X("threadIdx.z", true)             \
  X("vthread",     false)            \
  X("vthread.x",   false)            \
  X("vthread.y",   false)            \
  X("vthread.z",   false)

typedef struct {
  const char *tag;
  bool allows_reduction;
} thread_axis_t;

static const thread_axis_t thread_axes[] = {
#define SCH_AXIS_(tag, red) {tag, red},
    SCH_THREAD_AXES(SCH_AXIS_)
#undef SCH_AXIS_
};

static const thread_axis_t *thread_axis_find(const char *tag) {
  for (size_t i = 0; i < sizeof thread_axes / sizeof thread_axes[0]; i++)
    if (tag && strcmp(thread_axes[i].tag, tag) == 0) return &thread_axes[i];
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Loop kinds                                                                */
/* ------------------------------------------------------------------------ */

typedef struct {
  sch_t *sch;
  const char *prim;
  tir_var_t *loop_var;
  bool allows_reduction;
  int rc;
} parallel_check_t;

/* Checks one block realize under the loop: iter vars whose binding uses the
 * loop variable must be data parallel (or reduce, for threadIdx). */
static int check_block_iters(parallel_check_t *c, tir_stmt_t *realize) {
  const tir_block_t *b = realize->u.realize.block;
  for (int i = 0; i < b->niter_vars && i < realize->u.realize.n; i++) {
    if (!tir_expr_uses_var(realize->u.realize.iter_values[i], c->loop_var)) continue;
    tir_iter_type_t t = b->iter_vars[i].type;
    if (t == TIR_ITER_SPATIAL || (t == TIR_ITER_REDUCE && c->allows_reduction)) continue;
    return sch_fail_at(c->sch, c->prim, realize,
                       "loop %s is bound to the %s iter var %s of block %s; only data-parallel iter vars%s may be",
                       c->loop_var->u.var.name, tir_iter_type_name(t), b->iter_vars[i].var->u.var.name, b->name,
                       strcmp(c->prim, "bind") == 0 ? " (or reduce ones, for threadIdx.x/y/z)" : "");
  }
  return MLC_OK;
}

static bool parallel_check_block(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  parallel_check_t *c = v->payload;
  if (c->rc != MLC_OK) return false;
  c->rc = check_block_iters(c, realize);
  /* Blocks inside an init are not checked (TVM has no sref for them). */
  if (c->rc == MLC_OK) tir_visit_stmt(v, b->body);
  return false;
}

static int check_parallelizable(sch_t *sch, const char *prim, const sch_path_t *path, bool allows_reduction) {
  int rc = sch_check_compact_dataflow(sch, prim, path, path->n - 1);
  if (rc != MLC_OK) return rc;
  tir_stmt_t *loop = path->stmts[path->n - 1];
  parallel_check_t c = {sch, prim, loop->u.loop.var, allows_reduction, MLC_OK};
  tir_visitor_t v = {0};
  v.block = parallel_check_block;
  v.payload = &c;
  tir_visit_stmt(&v, loop->u.loop.body);
  return c.rc;
}

/* The shared body of parallel, vectorize, unroll and bind. */
static int set_loop_kind(sch_t *sch, const char *prim, sch_inst_id_t inst, sch_rv_t loop_rv, tir_for_kind_t kind,
                         const char *thread_tag) {
  sch_path_t path;
  int rc = sch_find_loop(sch, prim, loop_rv, &path);
  if (rc != MLC_OK) return rc;
  if (kind != TIR_FOR_UNROLLED) {
    bool allows_reduction = false;
    if (kind == TIR_FOR_THREAD_BINDING) {
      const thread_axis_t *axis = thread_axis_find(thread_tag);
      if (!axis)
        return sch_fail(sch, prim,
                        "unknown thread axis \"%s\" (expected blockIdx.x/y/z, threadIdx.x/y/z, vthread or "
                        "vthread.x/y/z)",
                        thread_tag ? thread_tag : "");
      allows_reduction = axis->allows_reduction;
    }
    rc = check_parallelizable(sch, prim, &path, allows_reduction);
    if (rc != MLC_OK) return rc;
  }
  tir_stmt_t *loop = tir_stmt_copy(sch_arena(sch), path.stmts[path.n - 1]);
  loop->u.loop.kind = kind;
  loop->u.loop.thread_tag = thread_tag ? mlc_arena_strdup(sch_arena(sch), thread_tag) : NULL;
  sch_replace(sch, &path, path.n - 1, loop);
  sch_arg_t in = sch_arg_rv(loop_rv);
  sch_arg_t attr = sch_arg_str(thread_tag);
  sch_record(sch, inst, &in, 1, &attr, thread_tag ? 1 : 0, NULL, 0, NULL);
  return MLC_OK;
}

int sch_parallel(sch_t *sch, sch_rv_t loop) {
  return set_loop_kind(sch, "parallel", SCH_INST_PARALLEL, loop, TIR_FOR_PARALLEL, NULL);
}

int sch_vectorize(sch_t *sch, sch_rv_t loop) {
  return set_loop_kind(sch, "vectorize", SCH_INST_VECTORIZE, loop, TIR_FOR_VECTORIZED, NULL);
}

int sch_unroll(sch_t *sch, sch_rv_t loop) {
  return set_loop_kind(sch, "unroll", SCH_INST_UNROLL, loop, TIR_FOR_UNROLLED, NULL);
}

int sch_bind(sch_t *sch, sch_rv_t loop, const char *thread_axis) {
  if (!thread_axis) return sch_fail(sch, "bind", "no thread axis given");
  return set_loop_kind(sch, "bind", SCH_INST_BIND, loop, TIR_FOR_THREAD_BINDING, thread_axis);
}

/* ------------------------------------------------------------------------ */
/* Annotations                                                               */
/* ------------------------------------------------------------------------ */

/* The annotation value of an argument: ints as int32 (int64 when they do
 * not fit, as TVM converts Python ints), floats as float32, strings, and an
 * expression variable's integer value. NULL (with the error set) otherwise. */
static tir_expr_t *annotation_value(sch_t *sch, sch_arg_t value) {
  mlc_arena_t *a = sch_arena(sch);
  int64_t v = 0;
  switch (value.kind) {
  case SCH_ARG_INT: v = value.u.i; break;
  case SCH_ARG_FLOAT: return tir_float(a, tir_dt_FLOAT32(), value.u.f);
  case SCH_ARG_STR: return tir_string(a, value.u.s ? value.u.s : "");
  case SCH_ARG_RV:
    if (sch_rv_value(sch, value.u.rv, &v) != MLC_OK) {
      sch_fail(sch, "annotate", "random variable %d is not an expression variable", (int)value.u.rv);
      return NULL;
    }
    break;
  default:
    sch_fail(sch, "annotate", "the value must be an int, a float, a string or an expression variable");
    return NULL;
  }
  bool fits = v >= INT32_MIN && v <= INT32_MAX;
  return tir_int(a, fits ? tir_dt_INT32() : tir_dt_INT64(), v);
}

/* Annotations with `key` set (appended; an existing key is kept as is, as
 * TVM does) or removed. */
static tir_annot_t *annots_with(mlc_arena_t *a, const tir_annot_t *old, int n, const char *key, tir_expr_t *value,
                                int *nout) {
  tir_annot_t *out = mlc_arena_alloc(a, sizeof(*out) * (size_t)(n + 1));
  int k = 0;
  for (int i = 0; i < n; i++)
    if (value || strcmp(old[i].key, key) != 0) out[k++] = old[i];
  if (value) {
    out[k].key = mlc_arena_strdup(a, key);
    out[k].value = value;
    k++;
  }
  *nout = k;
  return k ? out : NULL;
}

/* Replaces the loop or block at the end of path with a copy whose
 * annotations are set (value) or unset (value NULL). */
static void rewrite_annots(sch_t *sch, const sch_path_t *path, const char *key, tir_expr_t *value) {
  mlc_arena_t *a = sch_arena(sch);
  tir_stmt_t *s = tir_stmt_copy(a, path->stmts[path->n - 1]);
  if (s->kind == TIR_FOR) {
    s->u.loop.annots = annots_with(a, s->u.loop.annots, s->u.loop.nannots, key, value, &s->u.loop.nannots);
  } else {
    tir_block_t *b = tir_block_copy(a, s->u.realize.block);
    b->annots = annots_with(a, b->annots, b->nannots, key, value, &b->nannots);
    s->u.realize.block = b;
  }
  sch_replace(sch, path, path->n - 1, s);
}

static void annots_of(tir_stmt_t *s, tir_annot_t **annots, int *n, const char **what, const char **name) {
  if (s->kind == TIR_FOR) {
    *annots = s->u.loop.annots;
    *n = s->u.loop.nannots;
    *what = "loop";
    *name = sch_loop_name(s);
  } else {
    *annots = s->u.realize.block->annots;
    *n = s->u.realize.block->nannots;
    *what = "block";
    *name = s->u.realize.block->name;
  }
}

int sch_annotate(sch_t *sch, sch_rv_t block_or_loop, const char *key, sch_arg_t value) {
  sch_path_t path;
  bool is_loop = false;
  if (!key || !*key) return sch_fail(sch, "annotate", "the annotation key is empty");
  int rc = sch_find_block_or_loop(sch, "annotate", block_or_loop, &path, &is_loop);
  if (rc != MLC_OK) return rc;
  tir_expr_t *v = annotation_value(sch, value);
  if (!v) return MLC_ESCHEDULE;
  tir_annot_t *annots;
  int n;
  const char *what, *name;
  annots_of(path.stmts[path.n - 1], &annots, &n, &what, &name);
  if (!tir_annot_get(annots, n, key)) rewrite_annots(sch, &path, key, v);
  sch_arg_t in[2] = {sch_arg_rv(block_or_loop), value};
  sch_arg_t attr = sch_arg_str(key);
  sch_record(sch, SCH_INST_ANNOTATE, in, 2, &attr, 1, NULL, 0, NULL);
  return MLC_OK;
}

int sch_unannotate(sch_t *sch, sch_rv_t block_or_loop, const char *key) {
  sch_path_t path;
  bool is_loop = false;
  int rc = sch_find_block_or_loop(sch, "unannotate", block_or_loop, &path, &is_loop);
  if (rc != MLC_OK) return rc;
  tir_annot_t *annots;
  int n;
  const char *what, *name;
  annots_of(path.stmts[path.n - 1], &annots, &n, &what, &name);
  if (!key || !tir_annot_get(annots, n, key))
    return sch_fail_at(sch, "unannotate", path.stmts[path.n - 1], "%s %s has no annotation \"%s\"", what, name,
                       key ? key : "");
  rewrite_annots(sch, &path, key, NULL);
  sch_arg_t in = sch_arg_rv(block_or_loop);
  sch_arg_t attr = sch_arg_str(key);
  sch_record(sch, SCH_INST_UNANNOTATE, &in, 1, &attr, 1, NULL, 0, NULL);
  return MLC_OK;
}
