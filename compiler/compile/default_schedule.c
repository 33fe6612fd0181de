/*
 * default_schedule.c - mlc_default_schedule (compiler.h): what a function
 * nobody tuned is compiled with, so that an untuned kernel is still tiled,
 * vectorized and parallel rather than the naive loop nest.
 *
 * The schedule is built from the program's structure alone, with the
 * public schedule primitives (compiler/ may not use search/'s rules: search
 * depends on compiler). Every block that heads a root-level loop nest of
 * its own (a perfect chain of loops down to the block) is scheduled in
 * program order:
 *
 *   1. tile: a matmul-like block (a reduction under at least two spatial
 *      loops: GMM, BMM, the convolutions) gets a register tile on its two
 *      innermost spatial loops (rows by 4 or 2, columns by a vector length)
 *      with the reduction loops moved between the outer loops and the tile:
 *      `outer spatial, reduce, rows, columns`, the order of each sum's terms
 *      unchanged; an element-wise block (spatial only) gets its innermost
 *      loop split by a vector length; other reductions (one spatial loop,
 *      as in softmax's row sums) keep their order: lanes across rows would
 *      be gathers and lanes across the reduction would reorder the sum;
 *   2. the column / innermost loop is vectorized, the row tile unrolled;
 *   3. the leading spatial loops (those above the reduction and the tile)
 *      are fused and made parallel when they have at least as many
 *      iterations as the target has cores;
 *   4. a reduction's init is split off at its first reduction loop
 *      (decompose_reduction) and its innermost loop vectorized. This comes
 *      last, as in MetaSchedule: once init and update are two blocks, the
 *      loops above them no longer hold a complete or reduction block, so
 *      parallel and vectorize would be refused.
 *
 * A vector length is the target's lanes for the block's output dtype
 * (16 float32 with AVX-512, 8 with AVX2), or half or a quarter of it (at
 * least 4), whichever divides the extent first; the lowering's vectorize
 * pass wants a constant extent, and these keep it a whole number of
 * registers or a clean part of one.
 *
 * GPU targets (cuda, rocm): each such block's spatial loops are moved
 * above its reduction loops; the innermost ones that fit in
 * max_threads_per_block are fused and bound to threadIdx.x, the others
 * fused and bound to blockIdx.x (whole loops: a fused loop split across
 * loop boundaries would not keep the bindings affine); reductions stay serial
 * in the thread. A block with no spatial loop runs on one thread (a unit
 * loop bound to blockIdx.x): cross-thread reductions are not generated yet.
 *
 * Every primitive either applies or fails leaving the schedule as it was
 * (schedule.h), so a step that does not apply is skipped (a debug log line
 * says why) and the rest goes on: the result always means what the
 * function means. Failures are raised in the schedule's FAST error mode
 * while this runs (they are expected and only logged).
 */
#include <stdio.h>
#include <string.h>

#include "compiler/compiler.h"

#define DS_MAX_LOOPS 32

typedef enum { ROLE_SPATIAL, ROLE_REDUCE, ROLE_OTHER } role_t;

/* What the steps of one block share. */
typedef struct {
  sch_t *sch;
  const mlc_target_t *target;
  const char *block; /* its name, for log lines */
} ds_t;

/* A block's loops, outermost first, with their constant extents and roles
 * (from the block's bindings: REDUCE when a reduce iter var's binding uses
 * the loop, SPATIAL when only spatial ones do or none, OTHER when a scan or
 * opaque one does or the extent is not a constant). */
typedef struct {
  int n;
  sch_rv_t rv[DS_MAX_LOOPS];
  int64_t extent[DS_MAX_LOOPS];
  role_t role[DS_MAX_LOOPS];
  tir_for_kind_t kind[DS_MAX_LOOPS];
  int nspatial, nreduce, nother;
  bool has_init;
  int out_bits; /* bits of the first written buffer's elements (0: none) */
} nest_t;

static void skipped(const ds_t *d, const char *step) {
  MLC_DEBUG("default schedule: %s: block %s: %s skipped: %s", sch_func(d->sch)->name, d->block, step,
            sch_error(d->sch));
}

/* ------------------------------------------------------------------------ */
/* Structure                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct {
  tir_visitor_t v;
  uint32_t uid;
  tir_stmt_t *realize;
} find_t;

static bool find_block(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  find_t *w = v->payload;
  if (b->uid == w->uid) w->realize = realize;
  return w->realize == NULL;
}

/* The BLOCK_REALIZE of block b in the schedule's program, or NULL. */
static tir_stmt_t *realize_of(sch_t *sch, const tir_block_t *b) {
  find_t w = {.uid = b->uid};
  w.v.block = find_block;
  w.v.payload = &w;
  tir_visit_stmt(&w.v, sch_func(sch)->body);
  return w.realize;
}

static role_t loop_role(const tir_stmt_t *loop, const tir_stmt_t *realize, const tir_block_t *b) {
  bool reduce = false, other = false;
  for (int k = 0; k < realize->u.realize.n; k++) {
    if (!tir_expr_uses_var(realize->u.realize.iter_values[k], loop->u.loop.var)) continue;
    tir_iter_type_t t = b->iter_vars[k].type;
    reduce |= t == TIR_ITER_REDUCE;
    other |= t != TIR_ITER_SPATIAL && t != TIR_ITER_REDUCE;
  }
  return other ? ROLE_OTHER : reduce ? ROLE_REDUCE : ROLE_SPATIAL;
}

/* Reads the block's loops; false when they cannot be read. */
static bool nest_of(sch_t *sch, sch_rv_t block, nest_t *nest) {
  memset(nest, 0, sizeof *nest);
  tir_block_t *b = NULL;
  const sch_rv_t *loops = NULL;
  if (sch_get_block_node(sch, block, &b) != MLC_OK || sch_get_loops(sch, &loops, &nest->n, block) != MLC_OK)
    return false;
  tir_stmt_t *realize = realize_of(sch, b);
  if (!realize || nest->n > DS_MAX_LOOPS) return false;
  nest->has_init = b->init != NULL;
  nest->out_bits = b->nwrites > 0 ? b->writes[0].buffer->dtype.bits : 0;
  for (int l = 0; l < nest->n; l++) {
    tir_stmt_t *loop = NULL;
    if (sch_get_loop_node(sch, loops[l], &loop) != MLC_OK) return false;
    nest->rv[l] = loops[l];
    nest->kind[l] = loop->u.loop.kind;
    bool constant = tir_as_int(loop->u.loop.extent, &nest->extent[l]);
    nest->role[l] = constant ? loop_role(loop, realize, b) : ROLE_OTHER;
    nest->nspatial += nest->role[l] == ROLE_SPATIAL;
    nest->nreduce += nest->role[l] == ROLE_REDUCE;
    nest->nother += nest->role[l] == ROLE_OTHER;
  }
  return true;
}

/* The block heading a perfect loop nest at s (loops down to one block), or
 * NULL when s is something else. */
static const char *nest_block(const tir_stmt_t *s) {
  while (s && s->kind == TIR_FOR) s = s->u.loop.body;
  return s && s->kind == TIR_BLOCK_REALIZE ? s->u.realize.block->name : NULL;
}

/* Names of the blocks that head root-level perfect loop nests, in program
 * order, copied into `a`. */
static int nest_blocks(const tir_func_t *f, mlc_arena_t *a, const char ***out, int *n) {
  const tir_block_t *root = tir_func_root_block(f);
  *out = NULL;
  *n = 0;
  if (!root || !root->body) return MLC_OK;
  const tir_stmt_t *body = root->body;
  int count = body->kind == TIR_SEQ ? body->u.seq.n : 1;
  tir_stmt_t *const *stmts = body->kind == TIR_SEQ ? body->u.seq.stmts : (tir_stmt_t *const *)&root->body;
  const char **names = mlc_arena_alloc(a, sizeof *names * (size_t)(count > 0 ? count : 1));
  if (!names) return mlc_error_set(MLC_ENOMEM, "default schedule: out of memory");
  for (int i = 0; i < count; i++) {
    const char *name = nest_block(stmts[i]);
    if (!name) continue;
    if (!(names[*n] = mlc_arena_strdup(a, name))) return mlc_error_set(MLC_ENOMEM, "default schedule: out of memory");
    (*n)++;
  }
  *out = names;
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Factors                                                                   */
/* ------------------------------------------------------------------------ */

/* SIMD lanes of the target for elements of `bits` (0 when too narrow to
 * vectorize). */
static int64_t target_lanes(const mlc_target_t *t, int bits) {
  int width = t->vector_width > 0 ? t->vector_width : 128;
  if (bits < 8 || bits > width) return 0;
  return width / bits;
}

/* The vector loop's extent for a loop of `extent`: lanes, lanes / 2 or
 * lanes / 4 (at least 4), the first that divides it; 0 when none does. */
static int64_t vector_factor(int64_t extent, int64_t lanes) {
  for (int64_t v = lanes; v >= 4 && v * 4 >= lanes; v /= 2)
    if (extent % v == 0) return v;
  return 0;
}

/* The row tile: 4 or 2 rows when they divide the extent, else 1. */
static int64_t row_factor(int64_t extent) {
  return extent % 4 == 0 ? 4 : extent % 2 == 0 ? 2 : 1;
}

/* Splits loop by [None, factor] when factor is a proper divisor: *outer
 * and *inner (SCH_RV_NONE for a side that does not exist: factor 1 leaves
 * the loop outer, factor == extent makes it the inner loop). False when the
 * split was refused (the loop stays outer). */
static bool split2(ds_t *d, sch_rv_t loop, int64_t extent, int64_t factor, sch_rv_t *outer, sch_rv_t *inner) {
  *outer = loop, *inner = SCH_RV_NONE;
  if (factor <= 1) return true;
  if (factor >= extent) {
    *outer = SCH_RV_NONE, *inner = loop;
    return true;
  }
  sch_arg_t factors[2] = {sch_arg_none(), sch_arg_int(factor)};
  const sch_rv_t *out = NULL;
  if (sch_split(d->sch, &out, loop, factors, 2, true) != MLC_OK) {
    skipped(d, "split");
    return false;
  }
  *outer = out[0], *inner = out[1];
  return true;
}

/* ------------------------------------------------------------------------ */
/* Steps                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct {
  sch_rv_t vec;  /* the loop to vectorize, or SCH_RV_NONE */
  sch_rv_t rows; /* the row tile to unroll, or SCH_RV_NONE */
} tile_t;

static void push(sch_rv_t *order, int *n, sch_rv_t rv) {
  if (rv != SCH_RV_NONE) order[(*n)++] = rv;
}

/* Step 1 for a matmul-like block: outer spatial loops, the reduction, the
 * register tile (rows, then the vector columns). */
static tile_t tile_matmul(ds_t *d, const nest_t *nest) {
  tile_t t = {SCH_RV_NONE, SCH_RV_NONE};
  int spatial[DS_MAX_LOOPS], ns = 0;
  for (int l = 0; l < nest->n; l++)
    if (nest->role[l] == ROLE_SPATIAL) spatial[ns++] = l;
  int r = spatial[ns - 2], c = spatial[ns - 1];
  sch_rv_t r_out, r_in, c_out, c_in;
  int64_t v = vector_factor(nest->extent[c], target_lanes(d->target, nest->out_bits));
  if (v == 0 || !split2(d, nest->rv[c], nest->extent[c], v, &c_out, &c_in)) c_out = nest->rv[c], c_in = SCH_RV_NONE;
  if (!split2(d, nest->rv[r], nest->extent[r], row_factor(nest->extent[r]), &r_out, &r_in)) r_in = SCH_RV_NONE;
  sch_rv_t order[2 * DS_MAX_LOOPS];
  int n = 0;
  for (int s = 0; s < ns - 2; s++) push(order, &n, nest->rv[spatial[s]]);
  push(order, &n, r_out);
  push(order, &n, c_out);
  for (int l = 0; l < nest->n; l++)
    if (nest->role[l] == ROLE_REDUCE) push(order, &n, nest->rv[l]);
  push(order, &n, r_in);
  push(order, &n, c_in);
  if (sch_reorder(d->sch, order, n) != MLC_OK) {
    skipped(d, "reorder");
    return t; /* the splits alone change nothing; leave the tile scalar */
  }
  t.vec = c_in;
  t.rows = r_in;
  return t;
}

/* Step 1 for an element-wise block: the innermost loop split by a vector
 * length. */
static tile_t tile_elementwise(ds_t *d, const nest_t *nest) {
  tile_t t = {SCH_RV_NONE, SCH_RV_NONE};
  int last = nest->n - 1;
  int64_t v = vector_factor(nest->extent[last], target_lanes(d->target, nest->out_bits));
  sch_rv_t outer, inner;
  if (v > 0 && split2(d, nest->rv[last], nest->extent[last], v, &outer, &inner)) t.vec = inner;
  return t;
}

/* Step 2: vectorize the vector loop, unroll the row tile. */
static void annotate_tile(ds_t *d, const tile_t *t) {
  if (t->vec != SCH_RV_NONE && sch_vectorize(d->sch, t->vec) != MLC_OK) skipped(d, "vectorize");
  if (t->rows != SCH_RV_NONE && sch_unroll(d->sch, t->rows) != MLC_OK) skipped(d, "unroll");
}

/* Step 3: the leading serial spatial loops fused and parallel when they
 * have at least the target's cores in iterations. */
static void parallel_outer(ds_t *d, sch_rv_t block) {
  nest_t nest;
  if (d->target->num_cores < 2 || !nest_of(d->sch, block, &nest)) return;
  int n = 0;
  int64_t iters = 1;
  while (n < nest.n && nest.role[n] == ROLE_SPATIAL && nest.kind[n] == TIR_FOR_SERIAL) iters *= nest.extent[n++];
  if (n == 0 || iters < d->target->num_cores) return;
  sch_rv_t loop = nest.rv[0];
  if (n > 1 && sch_fuse(d->sch, &loop, nest.rv, n, true) != MLC_OK) {
    skipped(d, "fuse");
    if (nest.extent[0] < d->target->num_cores) return;
    loop = nest.rv[0];
  }
  if (sch_parallel(d->sch, loop) != MLC_OK) skipped(d, "parallel");
}

/* Step 4: the init split off at the first reduction loop, its innermost
 * loop vectorized (unless decompose_reduction copied the vector loop's
 * kind already). */
static void decompose(ds_t *d, sch_rv_t block) {
  nest_t nest;
  if (!nest_of(d->sch, block, &nest) || !nest.has_init) return;
  int first = 0;
  while (first < nest.n && nest.role[first] != ROLE_REDUCE) first++;
  if (first == nest.n) return;
  sch_rv_t init;
  if (sch_decompose_reduction(d->sch, &init, block, nest.rv[first]) != MLC_OK) {
    skipped(d, "decompose_reduction");
    return;
  }
  nest_t in;
  if (!nest_of(d->sch, init, &in) || in.n == 0 || in.kind[in.n - 1] != TIR_FOR_SERIAL) return;
  int64_t v = vector_factor(in.extent[in.n - 1], target_lanes(d->target, in.out_bits));
  if (v == in.extent[in.n - 1] && sch_vectorize(d->sch, in.rv[in.n - 1]) != MLC_OK) skipped(d, "vectorize init");
}

/* One block, by name. */
static void schedule_block(sch_t *sch, const mlc_target_t *target, const char *name) {
  ds_t d = {sch, target, name};
  sch_rv_t block;
  nest_t nest;
  if (sch_get_block(sch, &block, name) != MLC_OK || !nest_of(sch, block, &nest) || nest.n == 0) return;
  if (nest.nother > 0) {
    MLC_DEBUG("default schedule: %s: block %s left as written: a loop with a non-constant extent or a scan/opaque "
              "iterator", sch_func(sch)->name, name);
    return;
  }
  tile_t t = {SCH_RV_NONE, SCH_RV_NONE};
  if (nest.nreduce > 0 && nest.nspatial >= 2) t = tile_matmul(&d, &nest);
  else if (nest.nreduce == 0) t = tile_elementwise(&d, &nest);
  annotate_tile(&d, &t);
  parallel_outer(&d, block);
  if (nest.nreduce > 0) decompose(&d, block);
}

/* ------------------------------------------------------------------------ */
/* GPU targets                                                               */
/* ------------------------------------------------------------------------ */

/* Threads per block for one loop's extent: all of it when it fits, else
 * its largest divisor not above max_threads (at least 32 when one exists;
 * a prime extent gets max_threads and a predicate). */
static int64_t gpu_threads(int64_t extent, int max_threads) {
  if (extent <= max_threads) return extent;
  for (int64_t t = max_threads; t >= 32; t--)
    if (extent % t == 0) return t;
  return max_threads;
}

/* Fuses loops[0..n) (one loop: itself) and binds the result to axis. */
static bool fuse_bind(ds_t *d, const sch_rv_t *loops, int n, const char *axis) {
  sch_rv_t fused = loops[0];
  if (n > 1 && sch_fuse(d->sch, &fused, loops, n, true) != MLC_OK) {
    skipped(d, "fuse");
    return false;
  }
  if (sch_bind(d->sch, fused, axis) == MLC_OK) return true;
  skipped(d, axis);
  return false;
}

/* Spatial loops first (reduction loops keep their order after them); the
 * innermost spatial loops whose extents multiply to at most
 * max_threads_per_block fused and bound to threadIdx.x, the others fused
 * and bound to blockIdx.x (an innermost loop too long for one block is split
 * by a divisor first). Whole loops are fused, never split across loop
 * boundaries, so the bindings stay affine. A block with no spatial loop
 * gets a unit loop bound to blockIdx.x: one thread runs it. */
static void gpu_schedule_block(sch_t *sch, const mlc_target_t *target, const char *name) {
  ds_t d = {sch, target, name};
  sch_rv_t block, unit;
  nest_t nest;
  if (sch_get_block(sch, &block, name) != MLC_OK || !nest_of(sch, block, &nest)) return;
  if (nest.nother > 0) {
    MLC_DEBUG("default schedule: %s: block %s left as written: a loop with a non-constant extent or a scan/opaque "
              "iterator", sch_func(sch)->name, name);
    return;
  }
  if (nest.nspatial == 0) {
    if (sch_add_unit_loop(sch, &unit, block) != MLC_OK || sch_bind(sch, unit, "blockIdx.x") != MLC_OK)
      skipped(&d, "bind one thread");
    return;
  }
  sch_rv_t order[DS_MAX_LOOPS + 1], sp[DS_MAX_LOOPS + 1];
  int64_t ext[DS_MAX_LOOPS + 1];
  int n = 0, ns = 0;
  for (int l = 0; l < nest.n; l++)
    if (nest.role[l] == ROLE_SPATIAL) ext[ns] = nest.extent[l], sp[ns++] = order[n++] = nest.rv[l];
  for (int l = 0; l < nest.n; l++)
    if (nest.role[l] != ROLE_SPATIAL) order[n++] = nest.rv[l];
  if (nest.nreduce > 0 && sch_reorder(sch, order, n) != MLC_OK) {
    skipped(&d, "reorder");
    return;
  }
  int max = target->max_threads_per_block > 0 ? target->max_threads_per_block : 1024;
  int first = ns;
  for (int64_t prod = 1; first > 0 && prod * ext[first - 1] <= max; first--) prod *= ext[first - 1];
  if (first == ns) { /* the innermost loop alone is too long: split it */
    sch_rv_t outer, inner;
    if (!split2(&d, sp[ns - 1], ext[ns - 1], gpu_threads(ext[ns - 1], max), &outer, &inner)) return;
    sp[ns - 1] = outer, sp[ns] = inner;
    ns++;
    first = ns - 1;
  }
  if (first > 0 && !fuse_bind(&d, sp, first, "blockIdx.x")) return;
  fuse_bind(&d, sp + first, ns - first, "threadIdx.x");
}

int mlc_default_schedule(sch_t *sch, const mlc_target_t *target) {
  if (!sch || !target) return mlc_error_set(MLC_EINVAL, "default schedule: NULL argument");
  mlc_arena_t *a = mlc_arena_new();
  if (!a) return mlc_error_set(MLC_ENOMEM, "default schedule: out of memory");
  const char **names = NULL;
  int n = 0;
  int st = nest_blocks(sch_func(sch), a, &names, &n);
  sch_error_mode_t mode = sch_error_mode(sch);
  sch_set_error_mode(sch, SCH_ERRORS_FAST);
  for (int i = 0; i < n && st == MLC_OK; i++) {
    if (target->kind == MLC_TARGET_LLVM) schedule_block(sch, target, names[i]);
    else gpu_schedule_block(sch, target, names[i]);
  }
  sch_set_error_mode(sch, mode);
  mlc_arena_free(a);
  return st;
}
