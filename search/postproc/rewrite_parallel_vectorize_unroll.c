/*
 * rewrite_parallel_vectorize_unroll.c - the RewriteParallelVectorizeUnroll
 * postprocessor (MetaSchedule's rewrite_parallel_vectorize_unroll.cc).
 *
 * The ParallelizeVectorizeUnroll rule only leaves its decisions on the root
 * block: meta_schedule.parallel (the largest parallel extent),
 * meta_schedule.vectorize (the largest vector extent) and
 * meta_schedule.unroll_explicit / _implicit (the unroll step). Here they are
 * removed from the root and, for every block under it (depth first, the
 * last child first, as TVM walks them):
 *
 * - parallel: the outermost loops that are data parallel for the blocks
 *   under them, serial, unannotated and of constant extent are fused while
 *   the product stays within the limit (the loop that passes it, or one with
 *   more than one child, is the last taken) and the fused loop parallelized;
 * - vectorize: for a block with no block inside, the innermost data-parallel
 *   single-child loops, while their product stays within the limit and every
 *   buffer the block accesses sees them as one contiguous run (strides from
 *   the access indices), are fused and vectorized; vectorizing wins the
 *   loops both would take;
 * - unroll: the block's outermost loop gets pragma_auto_unroll_max_step = S
 *   and pragma_unroll_explicit = 1 (0 for implicit), which the compiler's
 *   unroll pass applies to the loop nests below (S = 0: nothing).
 *
 * Two extensions of TVM's vectorization, for what its plan cannot
 * vectorize (docs/decisions.md, "Vectorizing long and reduction-innermost
 * loops"), both only where every access of the block sees the loop with
 * stride 0 or 1 (at least one with 1) and only below the parallel loops:
 * - split: an innermost data-parallel loop longer than the limit (a row of
 *   1024 under a compute_at) is split by its largest divisor within the
 *   limit and the inner part vectorized (newer TVMs do this for a block
 *   whose loops all fuse; this does it for the innermost loop alone);
 * - reorder: a block whose innermost loops are reductions (an rfactor
 *   block after compute_at, a column sum) gets the nearest data-parallel
 *   loop above them, within the limit, moved innermost and vectorized. The
 *   order in which each output element accumulates is unchanged, so this
 *   is exact.
 *
 * Two departures from TVM, both about blocks other postprocessors own:
 * blocks inside a block annotated meta_schedule.auto_tensorize with an
 * intrinsic are left alone (the intrinsic replaces them; a vectorized or
 * annotated loop there would no longer match its description), and a block
 * annotated meta_schedule.layout_rewrite_preproc is not vectorized here
 * (RewriteLayout vectorizes it once its layout is settled). Loops already
 * parallel, vectorized, unrolled or bound end a run, as annotated ones do.
 */
#include "search/postproc/postproc.h"

#include <string.h>

#define PVU "RewriteParallelVectorizeUnroll"
#define STRIDE_UNKNOWN PP_COEF_UNKNOWN

typedef struct {
  int64_t max_parallel, max_vectorize, unroll_explicit, unroll_implicit; /* -1: absent */
  int num_parallel, num_vectorize;                                       /* -1: none */
  /* The extensions (file comment), when num_vectorize plans nothing: */
  int64_t split_factor; /* > 0: split the innermost loop, vectorize the inner part */
  int reorder_loop;     /* >= 0: move this loop innermost and vectorize it */
} parsed_t;

static const char *const root_keys[] = {MS_ANN_PARALLEL, MS_ANN_VECTORIZE, MS_ANN_UNROLL_EXPLICIT,
                                        MS_ANN_UNROLL_IMPLICIT};

/* The root's annotations; false when it has none of them. */
static bool parse_root(const tir_block_t *root, parsed_t *p) {
  int64_t *fields[] = {&p->max_parallel, &p->max_vectorize, &p->unroll_explicit, &p->unroll_implicit};
  bool found = false;
  for (int i = 0; i < 4; i++) {
    *fields[i] = -1;
    tir_expr_t *v = tir_annot_get(root->annots, root->nannots, root_keys[i]);
    if (!v) continue;
    found = true;
    if (!tir_as_int(v, fields[i])) *fields[i] = -1;
  }
  p->num_parallel = p->num_vectorize = -1;
  p->split_factor = 0;
  p->reorder_loop = -1;
  return found;
}

/* ------------------------------------------------------------------------ */
/* How many innermost loops the block's accesses see as one contiguous run   */
/* ------------------------------------------------------------------------ */

/* The memory stride of `var` in the access `r` (0 when unused): the
 * coefficient in the last index that uses it, times the extents after. */
static int64_t access_stride(tir_analyzer_t *an, mlc_arena_t *a, const tir_region_t *r, const tir_var_map_t *bind,
                             const tir_var_t *var) {
  int64_t buffer_stride = 1, ext;
  for (int d = r->ndim - 1; d >= 0; d--) {
    tir_expr_t *idx = tir_simplify(an, tir_substitute_expr(a, r->ranges[d].min, bind));
    int64_t c = pp_linear_coef(idx, var);
    if (c != 0) return c == STRIDE_UNKNOWN || buffer_stride == STRIDE_UNKNOWN ? STRIDE_UNKNOWN : c * buffer_stride;
    if (buffer_stride != STRIDE_UNKNOWN && tir_as_int(r->buffer->shape[d], &ext)) buffer_stride *= ext;
    else buffer_stride = STRIDE_UNKNOWN;
  }
  return 0;
}

/* TVM's count of fusible innermost loops for one access. */
static int fusible_for_access(const int64_t *strides, tir_stmt_t *const *loops, int n) {
  int fusible = 0, prev = -1;
  for (int i = n - 1; i >= 0; i--) {
    if (strides[i] == 0) {
      fusible++;
    } else if (prev == -1) {
      if (strides[i] != 1 && fusible != 0) break;
      fusible++;
      prev = i;
    } else {
      int64_t ext;
      if (strides[prev] == STRIDE_UNKNOWN || !tir_as_int(loops[prev]->u.loop.extent, &ext) ||
          strides[i] != strides[prev] * ext)
        break;
      fusible++;
      prev = i;
    }
  }
  return fusible;
}

/* The block's iteration variables bound to their values (into *bind) and
 * an analyzer, for access_stride; NULL when out of memory. */
static tir_analyzer_t *bind_block(mlc_arena_t *a, const pp_block_t *pb, tir_var_map_t *bind) {
  const tir_block_t *b = pb->block;
  for (int i = 0; i < b->niter_vars && i < pb->realize->u.realize.n; i++)
    tir_var_map_set(a, bind, b->iter_vars[i].var, pb->realize->u.realize.iter_values[i]);
  return tir_analyzer_new(a);
}

static int max_fusible_loops(mlc_arena_t *a, const pp_block_t *pb, tir_stmt_t *const *loops, int n) {
  tir_var_map_t bind = {0};
  tir_block_t *b = pb->block;
  tir_analyzer_t *an = bind_block(a, pb, &bind);
  int64_t *strides = mlc_arena_alloc(a, sizeof(int64_t) * (size_t)n);
  if (!an || !strides) return 0;
  int best = INT32_MAX;
  for (int r = 0; r < b->nreads + b->nwrites; r++) {
    const tir_region_t *reg = r < b->nreads ? &b->reads[r] : &b->writes[r - b->nreads];
    for (int i = 0; i < n; i++) strides[i] = access_stride(an, a, reg, &bind, loops[i]->u.loop.var);
    int f = fusible_for_access(strides, loops, n);
    if (f < best) best = f;
  }
  return best;
}

/* Whether every access of the block sees loop `loop` with stride 0 or 1,
 * and at least one with stride 1. */
static bool unit_stride_loop(mlc_arena_t *a, const pp_block_t *pb, const tir_stmt_t *loop) {
  tir_var_map_t bind = {0};
  const tir_block_t *b = pb->block;
  tir_analyzer_t *an = bind_block(a, pb, &bind);
  if (!an) return false;
  bool unit = false;
  for (int r = 0; r < b->nreads + b->nwrites; r++) {
    const tir_region_t *reg = r < b->nreads ? &b->reads[r] : &b->writes[r - b->nreads];
    int64_t st = access_stride(an, a, reg, &bind, loop->u.loop.var);
    if (st != 0 && st != 1) return false;
    unit |= st == 1;
  }
  return unit;
}

/* ------------------------------------------------------------------------ */
/* Counting the loops to parallelize and to vectorize                        */
/* ------------------------------------------------------------------------ */

/* A loop that ends a run: annotated, or not serial (TVM: annotated or bound). */
static bool loop_taken(const tir_stmt_t *loop) {
  return loop->u.loop.nannots > 0 || loop->u.loop.kind != TIR_FOR_SERIAL;
}

static int count_parallel(const parsed_t *p, tir_stmt_t *const *loops, const tir_iter_type_t *types, int n) {
  int num = 0;
  int64_t prod = 1, ext;
  for (int i = 0; i < n && types[i] == TIR_ITER_SPATIAL; i++) {
    if (loop_taken(loops[i]) || !tir_as_int(loops[i]->u.loop.extent, &ext)) break;
    num++;
    prod *= ext;
    if (prod > p->max_parallel || !pp_loop_single_child(loops[i])) break;
  }
  return prod == 1 ? -1 : num;
}

static int count_vectorize(const parsed_t *p, tir_stmt_t *const *loops, const tir_iter_type_t *types, int n,
                           int max_fusible) {
  int num = 0;
  int64_t prod = 1, ext;
  for (int i = n - 1; i >= 0 && types[i] == TIR_ITER_SPATIAL && num < max_fusible; i--) {
    if (loop_taken(loops[i]) || !pp_loop_single_child(loops[i])) break;
    if (!tir_as_int(loops[i]->u.loop.extent, &ext) || ext <= 0) break;
    prod *= ext;
    if (prod > p->max_vectorize) break;
    num++;
  }
  return prod == 1 ? -1 : num;
}

static bool has_nested_block(const tir_block_t *b) {
  pp_block_t *blocks;
  int n;
  mlc_arena_t *a = mlc_arena_new();
  bool nested = a && pp_collect_blocks(a, &(tir_func_t){.body = b->body}, &blocks, &n) == MLC_OK && n > 0;
  mlc_arena_free(a);
  return nested;
}

/* The largest divisor of ext in [2, limit], or 0. */
static int64_t largest_divisor(int64_t ext, int64_t limit) {
  for (int64_t d = limit < ext ? limit : ext; d >= 2; d--)
    if (ext % d == 0) return d;
  return 0;
}

/* Loops [from, n) form one chain of plain loops (reorder's precondition,
 * and nothing another postprocessor owns in between). */
static bool plain_chain(tir_stmt_t *const *loops, int from, int n) {
  for (int i = from; i < n; i++)
    if (loop_taken(loops[i]) || !pp_loop_single_child(loops[i])) return false;
  return true;
}

/* The extensions (file comment): fills q->split_factor or q->reorder_loop
 * when TVM's plan vectorizes nothing. The parallel loops stay outside. */
static void plan_extension(mlc_arena_t *a, const pp_block_t *pb, tir_stmt_t *const *loops,
                           const tir_iter_type_t *types, int n, parsed_t *q) {
  int first_free = q->num_parallel > 0 ? q->num_parallel : 0;
  int64_t ext;
  if (types[n - 1] == TIR_ITER_SPATIAL) {
    /* split: the innermost loop alone is over the limit. It may also be the
     * last parallel loop: its outer part stays parallel. */
    if (!plain_chain(loops, n - 1, n) || !tir_as_int(loops[n - 1]->u.loop.extent, &ext) || ext <= q->max_vectorize)
      return;
    int64_t d = largest_divisor(ext, q->max_vectorize);
    if (d > 0 && unit_stride_loop(a, pb, loops[n - 1])) q->split_factor = d;
    return;
  }
  /* reorder: the nearest data-parallel loop above the innermost reductions
   * (unit loops, which compute_at leaves, skipped). */
  int j = n - 1;
  while (j >= first_free && (types[j] != TIR_ITER_SPATIAL || (tir_as_int(loops[j]->u.loop.extent, &ext) && ext == 1)))
    j--;
  if (j < first_free || !plain_chain(loops, j, n) || !tir_as_int(loops[j]->u.loop.extent, &ext) || ext < 2 ||
      ext > q->max_vectorize)
    return;
  if (unit_stride_loop(a, pb, loops[j])) q->reorder_loop = j;
}

/* TVM's AdjustParallelVectorize: fills q->num_parallel / num_vectorize. */
static int adjust(sch_t *sch, const sch_rv_t *loop_rvs, int n, const pp_block_t *pb, parsed_t *q) {
  if (q->max_parallel == -1 && q->max_vectorize == -1) return MLC_OK;
  mlc_arena_t *a = mlc_arena_new();
  if (!a) return mlc_error_set(MLC_ENOMEM, PVU ": out of memory");
  tir_stmt_t **loops = mlc_arena_alloc(a, sizeof(*loops) * (size_t)n);
  tir_iter_type_t *types = mlc_arena_alloc(a, sizeof(*types) * (size_t)n);
  if (!loops || !types) {
    mlc_arena_free(a);
    return mlc_error_set(MLC_ENOMEM, PVU ": out of memory");
  }
  for (int i = 0; i < n; i++) {
    if (sch_get_loop_node(sch, loop_rvs[i], &loops[i]) != MLC_OK) {
      mlc_arena_free(a);
      return pp_fail_sch(PVU, sch, "block %s", pb->block->name);
    }
    types[i] = pp_loop_iter_type(loops[i]);
  }
  if (q->max_parallel != -1) q->num_parallel = count_parallel(q, loops, types, n);
  bool layout_block = tir_annot_get(pb->block->annots, pb->block->nannots, MS_ANN_LAYOUT_REWRITE) != NULL;
  bool can_vectorize = q->max_vectorize > 1 && !layout_block && !has_nested_block(pb->block);
  if (can_vectorize) q->num_vectorize = count_vectorize(q, loops, types, n, max_fusible_loops(a, pb, loops, n));
  if (q->num_parallel != -1 && q->num_vectorize != -1 && q->num_parallel > n - q->num_vectorize)
    q->num_parallel = n - q->num_vectorize;
  if (can_vectorize && q->num_vectorize <= 0) plan_extension(a, pb, loops, types, n, q);
  mlc_arena_free(a);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Rewriting one block                                                       */
/* ------------------------------------------------------------------------ */

/* Fuses loops[from, from + count) (one loop is taken as it is) into *out
 * and makes every entry of the range name it. */
static int fuse_range(sch_t *sch, sch_rv_t *loops, int from, int count, sch_rv_t *out) {
  *out = loops[from];
  if (count > 1 && sch_fuse(sch, out, loops + from, count, true) != MLC_OK) return MLC_ESCHEDULE;
  for (int i = from; i < from + count; i++) loops[i] = *out;
  return MLC_OK;
}

static int annotate_unroll(sch_t *sch, const parsed_t *q, sch_rv_t loop, const char *block) {
  if (q->unroll_explicit == -1 && q->unroll_implicit == -1) return MLC_OK;
  int64_t step = q->unroll_explicit + q->unroll_implicit + 1; /* the absent one is -1 */
  if (step <= 0) return MLC_OK;
  if (sch_annotate(sch, loop, "pragma_auto_unroll_max_step", sch_arg_int(step)) != MLC_OK ||
      sch_annotate(sch, loop, "pragma_unroll_explicit", sch_arg_int(q->unroll_explicit != -1)) != MLC_OK)
    return pp_fail_sch(PVU, sch, "block %s: unroll", block);
  return MLC_OK;
}

/* Carries out q's split or reorder (the vector loop is vectorized here);
 * loops (room for n + 1) and *n follow the new nest. */
static int vectorize_extension(sch_t *sch, sch_rv_t *loops, int *n, const parsed_t *q, const char *name) {
  int last = *n - 1;
  if (q->split_factor > 0) {
    const sch_rv_t *parts;
    sch_arg_t factors[2] = {sch_arg_none(), sch_arg_int(q->split_factor)};
    if (sch_split(sch, &parts, loops[last], factors, 2, true) != MLC_OK || sch_vectorize(sch, parts[1]) != MLC_OK)
      return pp_fail_sch(PVU, sch, "block %s: splitting its innermost loop by %lld to vectorize it", name,
                         (long long)q->split_factor);
    loops[last] = parts[0], loops[last + 1] = parts[1];
    (*n)++;
    return MLC_OK;
  }
  int j = q->reorder_loop;
  sch_rv_t moved = loops[j];
  for (int i = j; i < last; i++) loops[i] = loops[i + 1];
  loops[last] = moved;
  if (sch_reorder(sch, loops + j, *n - j) != MLC_OK || sch_vectorize(sch, moved) != MLC_OK)
    return pp_fail_sch(PVU, sch, "block %s: moving a data-parallel loop under its reductions to vectorize it", name);
  return MLC_OK;
}

static int rewrite_block(sch_t *sch, sch_rv_t block_rv, const pp_block_t *pb, const parsed_t *p) {
  const sch_rv_t *got;
  int n;
  if (sch_get_loops(sch, &got, &n, block_rv) != MLC_OK) return pp_fail_sch(PVU, sch, "block %s", pb->block->name);
  if (n == 0) return MLC_OK;
  sch_rv_t *loops = mlc_malloc(sizeof(*loops) * (size_t)(n + 1)); /* + 1: a split for the extensions */
  if (!loops) return mlc_error_set(MLC_ENOMEM, PVU ": out of memory");
  memcpy(loops, got, sizeof(*loops) * (size_t)n);
  parsed_t q = *p;
  const char *name = pb->block->name; /* lives in the program's arena */
  int rc = adjust(sch, loops, n, pb, &q);
  if (rc == MLC_OK && (q.split_factor > 0 || q.reorder_loop >= 0)) rc = vectorize_extension(sch, loops, &n, &q, name);
  sch_rv_t fused;
  if (rc == MLC_OK && q.num_parallel > 0 &&
      (fuse_range(sch, loops, 0, q.num_parallel, &fused) != MLC_OK || sch_parallel(sch, fused) != MLC_OK))
    rc = pp_fail_sch(PVU, sch, "block %s: parallelizing its %d outer loops", name, q.num_parallel);
  if (rc == MLC_OK && q.num_vectorize > 0 &&
      (fuse_range(sch, loops, n - q.num_vectorize, q.num_vectorize, &fused) != MLC_OK ||
       sch_vectorize(sch, fused) != MLC_OK))
    rc = pp_fail_sch(PVU, sch, "block %s: vectorizing its %d inner loops", name, q.num_vectorize);
  if (rc == MLC_OK) rc = annotate_unroll(sch, &q, loops[0], name);
  mlc_free(loops);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* The walk                                                                  */
/* ------------------------------------------------------------------------ */

typedef MLC_VEC(sch_rv_t) rv_stack_t;

static int push_children(sch_t *sch, rv_stack_t *stack, sch_rv_t block, const char *name) {
  const sch_rv_t *kids;
  int n;
  if (sch_get_child_blocks(sch, &kids, &n, block) != MLC_OK) return pp_fail_sch(PVU, sch, "block %s", name);
  for (int i = 0; i < n; i++)
    if (mlc_vec_push(stack, kids[i]) != MLC_OK) return mlc_error_set(MLC_ENOMEM, PVU ": out of memory");
  return MLC_OK;
}

/* The block's entry in a fresh collection of the program (which changes
 * with every fuse): *pb points into `a`. */
static int lookup_block(sch_t *sch, mlc_arena_t *a, sch_rv_t rv, pp_block_t *pb) {
  tir_block_t *b;
  pp_block_t *blocks;
  int n;
  if (sch_get_block_node(sch, rv, &b) != MLC_OK) return pp_fail_sch(PVU, sch, "a block vanished");
  int rc = pp_collect_blocks(a, sch_func(sch), &blocks, &n);
  if (rc != MLC_OK) return rc;
  pp_block_t *found = pp_find_block(blocks, n, b->uid);
  if (!found) return pp_fail(PVU, "block %s is not in the program", b->name);
  *pb = *found;
  return MLC_OK;
}

static int walk(sch_t *sch, sch_rv_t root_rv, const char *root_name, const parsed_t *p) {
  rv_stack_t stack = {0};
  int rc = push_children(sch, &stack, root_rv, root_name);
  while (rc == MLC_OK && stack.len > 0) {
    sch_rv_t rv = stack.data[--stack.len];
    mlc_arena_t *a = mlc_arena_new();
    pp_block_t pb = {0};
    rc = a ? lookup_block(sch, a, rv, &pb) : mlc_error_set(MLC_ENOMEM, PVU ": out of memory");
    const char *intrin = NULL;
    bool tensorized = rc == MLC_OK && pp_block_ann_str(pb.block, MS_ANN_AUTO_TENSORIZE, &intrin) && intrin[0];
    if (rc == MLC_OK && !tensorized) rc = push_children(sch, &stack, rv, pb.block->name);
    if (rc == MLC_OK) rc = rewrite_block(sch, rv, &pb, p);
    mlc_arena_free(a);
  }
  mlc_vec_free(&stack);
  return rc;
}

static int rewrite_parallel_vectorize_unroll(const ms_postproc_t *self, const ms_ctx_t *ctx, sch_t *sch) {
  tir_block_t *root = tir_func_root_block(sch_func(sch));
  parsed_t p;
  if (!root || !parse_root(root, &p)) return MLC_OK;
  if (p.unroll_explicit != -1 && p.unroll_implicit != -1)
    return pp_fail(PVU, "the root block has both %s and %s", MS_ANN_UNROLL_EXPLICIT, MS_ANN_UNROLL_IMPLICIT);
  const char *root_name = root->name;
  sch_rv_t root_rv;
  if (sch_get_block(sch, &root_rv, root_name) != MLC_OK) return pp_fail_sch(PVU, sch, "root block");
  for (int i = 0; i < 4; i++) {
    if (!tir_annot_get(root->annots, root->nannots, root_keys[i])) continue;
    if (sch_unannotate(sch, root_rv, root_keys[i]) != MLC_OK) return pp_fail_sch(PVU, sch, "root block");
  }
  return walk(sch, root_rv, root_name, &p);
}

const ms_postproc_t ms_postproc_rewrite_parallel_vectorize_unroll = {"RewriteParallelVectorizeUnroll",
                                                                     rewrite_parallel_vectorize_unroll};
