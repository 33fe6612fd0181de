/*
 * test_lower_pipeline.c - the lowering driver and the whole pipeline: the
 * pass table, dumps after a pass or all of them, notes, and every built-in
 * workload (float32, float16 -> float32 and int8 -> int32 where the
 * workload allows) at small shapes under three schedules - none;
 * tiled + vectorized + parallel; cache_write / compute_at - lowered and run
 * by the interpreter against the unscheduled workload. The lowered programs
 * are also checked against the "Lowered TIR" contract of compiler.h. Last,
 * `mlc-sched lower` (mlc_lower_cmd) end to end.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "compiler/lower/lower_cmd.h"
#include "test_lower_helpers.h"

/* ------------------------------------------------------------------------ */
/* The pass table                                                            */
/* ------------------------------------------------------------------------ */

static void passes_are_listed_in_pipeline_order(void **state) {
  static const char *const names[] = {"lower-cross-thread-reduction", "lower-init-block", "plan-allocations",
                                      "remove-blocks",  "compact-buffers",  "lower-tensor-core",
                                      "flatten-buffers", "vectorize",      "unroll",           "simplify",
                                      "storage-rewrite", "gpu-sync"};
  assert_int_equal(MLC_PASS_COUNT, 12);
  for (int i = 0; i < MLC_PASS_COUNT; i++) {
    mlc_pass_id_t id;
    assert_string_equal(mlc_pass_name((mlc_pass_id_t)i), names[i]);
    assert_int_equal(mlc_pass_lookup(&id, names[i]), MLC_OK);
    assert_int_equal(id, i);
    assert_non_null(mlc_pass_fn_of((mlc_pass_id_t)i));
  }
  mlc_pass_id_t id;
  assert_int_equal(mlc_pass_lookup(&id, "vectorise"), MLC_ENOTFOUND);
  lt_assert_contains(mlc_error_last(), "unknown lowering pass 'vectorise'");
  assert_null(mlc_pass_fn_of(MLC_PASS_COUNT));
}

/* ------------------------------------------------------------------------ */
/* The driver                                                                */
/* ------------------------------------------------------------------------ */

typedef struct {
  int n;
  char names[16][32];
  char *last_text;
} dumps_t;

static void record_dump(const char *pass, const tir_func_t *f, void *payload) {
  dumps_t *d = payload;
  if (d->n < 16) snprintf(d->names[d->n], sizeof d->names[0], "%s", pass);
  d->n++;
  mlc_free(d->last_text);
  d->last_text = tir_print_func(f);
}

static tir_func_t *mm_with_symbolic_tail(void) {
  /* MM with a vectorized loop of symbolic extent appended (a note). */
  static const char src[] =
      "@T.prim_func\n"
      "def main(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\"), n: T.int32):\n"
      "    for i, j_0, k in T.grid(16, 2, 16):\n"
      "        for j_1 in T.vectorized(8):\n"
      "            with T.block(\"C\"):\n"
      "                vi = T.axis.spatial(16, i)\n"
      "                vj = T.axis.spatial(16, j_0 * 8 + j_1)\n"
      "                vk = T.axis.reduce(16, k)\n"
      "                with T.init():\n"
      "                    C[vi, vj] = T.float32(0)\n"
      "                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n"
      "    for i in T.vectorized(n):\n"
      "        with T.block(\"D\"):\n"
      "            vi = T.axis.spatial(16, i)\n"
      "            C[vi, 0] = C[vi, 0] * T.float32(2)\n";
  return st_parse(src);
}

static void dump_after_one_pass_shows_that_stage(void **state) {
  tir_func_t *f = mm_with_symbolic_tail(), *out = NULL;
  char *before = tir_print_func(f);
  dumps_t d = {0};
  mlc_strbuf_t notes;
  mlc_sb_init(&notes);
  mlc_target_t t = lt_target();
  mlc_lower_options_t opts = {.dump_after = "vectorize", .dump = record_dump, .payload = &d, .notes = &notes};
  assert_int_equal(mlc_lower(&out, f, &t, &opts), MLC_OK);
  assert_int_equal(d.n, 1);
  assert_string_equal(d.names[0], "vectorize");
  lt_assert_contains(d.last_text, "C_1[T.Ramp(i * 16 + j_0 * 8, 1, 8)] = C_1[T.Ramp(i * 16 + j_0 * 8, 1, 8)] + "
                                  "T.Broadcast(A_1[i * 16 + k], 8) * B_1[T.Ramp(k * 16 + j_0 * 8, 1, 8)]");
  assert_string_equal(mlc_sb_str(&notes), "vectorize: loop i kept scalar: its extent n is not a constant\n");
  st_assert_script(f, before); /* the input is left alone */
  st_assert_same_outputs(f, out, 9, 0.0);
  mlc_free(d.last_text);
  mlc_free(before);
  mlc_sb_free(&notes);
  tir_func_free(out);
  tir_func_free(f);
}

static void dump_after_all_shows_every_stage_in_order(void **state) {
  tir_func_t *f = mm_with_symbolic_tail(), *out = NULL;
  dumps_t d = {0};
  mlc_lower_options_t opts = {.dump_after = "all", .dump = record_dump, .payload = &d};
  assert_int_equal(mlc_lower(&out, f, NULL, &opts), MLC_OK); /* NULL target: the host */
  assert_int_equal(d.n, MLC_PASS_COUNT);
  for (int i = 0; i < MLC_PASS_COUNT; i++) assert_string_equal(d.names[i], mlc_pass_name((mlc_pass_id_t)i));
  char *final = tir_print_func(out);
  assert_string_equal(d.last_text, final); /* the last stage is the result */
  mlc_free(final);
  mlc_free(d.last_text);
  tir_func_free(out);
  tir_func_free(f);
}

static void unknown_dump_after_is_refused(void **state) {
  tir_func_t *f = mm_with_symbolic_tail(), *out = NULL;
  dumps_t d = {0};
  mlc_lower_options_t opts = {.dump_after = "flatten", .dump = record_dump, .payload = &d};
  assert_int_equal(mlc_lower(&out, f, NULL, &opts), MLC_EINVAL);
  assert_null(out);
  assert_int_equal(d.n, 0);
  lt_assert_contains(mlc_error_last(), "unknown pass 'flatten' to dump after (passes: lower-cross-thread-reduction, lower-init-block, ");
  tir_func_free(f);
}

static void failing_pass_is_named_in_the_error(void **state) {
  static const char src[] =
      "@T.prim_func\n"
      "def main(A: T.Buffer((8,), \"float32\")):\n"
      "    for i_0 in range(2):\n"
      "        with T.block(\"tile\"):\n"
      "            vi_o = T.axis.spatial(2, i_0)\n"
      "            T.reads(A[vi_o * 4:vi_o * 4 + 4])\n"
      "            T.writes(A[vi_o * 4:vi_o * 4 + 4])\n"
      "            A_1 = T.match_buffer(A[vi_o * 4:vi_o * 4 + 4], (4,), offset_factor=1)\n"
      "            T.evaluate(T.call_extern(\"int32\", \"zero4\", A_1.data))\n";
  tir_func_t *f = st_parse(src), *out = NULL;
  assert_int_equal(mlc_lower(&out, f, NULL, NULL), MLC_EUNSUPPORTED);
  assert_null(out);
  lt_assert_contains(mlc_error_last(), "lower main: remove-blocks: match buffer A_1 is used through its data pointer");
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* The lowered-TIR contract                                                  */
/* ------------------------------------------------------------------------ */

typedef struct {
  tir_visitor_t base;
  const char *problem;
} contract_t;

static bool contract_expr(tir_visitor_t *v, tir_expr_t *e) {
  contract_t *c = (contract_t *)v;
  if (e->kind == TIR_BUFFER_LOAD && (e->u.load.nindices != 1 || e->u.load.buffer->ndim != 1))
    c->problem = "a load is not 1-D";
  if (e->kind == TIR_BUFFER_LOAD && e->u.load.indices[0]->dtype.lanes > 1 && e->u.load.indices[0]->kind != TIR_RAMP)
    c->problem = "a vector load is not indexed by a ramp";
  return !c->problem;
}

static bool contract_stmt(tir_visitor_t *v, tir_stmt_t *s) {
  contract_t *c = (contract_t *)v;
  if (s->kind == TIR_BLOCK_REALIZE) c->problem = "a block is left";
  if (s->kind == TIR_BUFFER_STORE && (s->u.store.nindices != 1 || s->u.store.buffer->ndim != 1))
    c->problem = "a store is not 1-D";
  if (s->kind == TIR_ALLOCATE && s->u.allocate.buffer->ndim != 1) c->problem = "an allocation is not 1-D";
  if (s->kind == TIR_FOR && s->u.loop.kind == TIR_FOR_VECTORIZED) c->problem = "a vectorized loop is left";
  if (s->kind == TIR_FOR && s->u.loop.kind == TIR_FOR_UNROLLED) c->problem = "an unrolled loop is left";
  return !c->problem;
}

typedef struct {
  int vector_stores, parallel_loops, allocations;
} stats_t;

typedef struct {
  tir_visitor_t base;
  stats_t *st;
} count_t;

static bool count_stmt(tir_visitor_t *v, tir_stmt_t *s) {
  stats_t *st = ((count_t *)v)->st;
  if (s->kind == TIR_BUFFER_STORE && s->u.store.value->dtype.lanes > 1) st->vector_stores++;
  if (s->kind == TIR_FOR && s->u.loop.kind == TIR_FOR_PARALLEL) st->parallel_loops++;
  if (s->kind == TIR_ALLOCATE) st->allocations++;
  return true;
}

/* Lowered TIR as compiler.h promises it; adds up what it holds in st. */
static void assert_lowered_contract(const tir_func_t *f, stats_t *st) {
  contract_t c = {{.expr = contract_expr, .stmt = contract_stmt}, NULL};
  tir_visit_stmt(&c.base, f->body);
  if (c.problem) {
    char *text = tir_print_func(f);
    fprintf(stderr, "%s in:\n%s", c.problem, text);
    mlc_free(text);
    fail();
  }
  count_t n = {{.stmt = count_stmt}, st};
  tir_visit_stmt(&n.base, f->body);
}

/* ------------------------------------------------------------------------ */
/* Schedules built with the primitives                                       */
/* ------------------------------------------------------------------------ */

#define MAX_BLOCKS 16

typedef struct {
  tir_visitor_t base;
  int n;
  const char *names[MAX_BLOCKS];
} names_t;

static bool collect_block_name(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  names_t *nm = (names_t *)v;
  if (strcmp(b->name, "root") != 0 && nm->n < MAX_BLOCKS) nm->names[nm->n++] = b->name;
  return true;
}

static names_t block_names(const tir_func_t *f) {
  names_t nm = {{.block = collect_block_name}, 0, {0}};
  tir_visit_stmt(&nm.base, f->body);
  return nm;
}

typedef struct {
  tir_visitor_t base;
  const tir_block_t *block;
  tir_stmt_t *realize;
} find_t;

static bool find_realize(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  find_t *fd = (find_t *)v;
  if (b == fd->block) fd->realize = realize;
  return !fd->realize;
}

/* Whether loop `loop` feeds a reduction iterator of block `block`. */
static bool is_reduction_loop(sch_t *sch, sch_rv_t block, sch_rv_t loop) {
  tir_block_t *b;
  tir_stmt_t *l;
  assert_int_equal(sch_get_block_node(sch, block, &b), MLC_OK);
  assert_int_equal(sch_get_loop_node(sch, loop, &l), MLC_OK);
  find_t fd = {{.block = find_realize}, b, NULL};
  tir_visit_stmt(&fd.base, sch_func(sch)->body);
  assert_non_null(fd.realize);
  for (int i = 0; i < b->niter_vars; i++)
    if (b->iter_vars[i].type != TIR_ITER_SPATIAL && tir_expr_uses_var(fd.realize->u.realize.iter_values[i], l->u.loop.var))
      return true;
  return false;
}

static int64_t loop_extent(sch_t *sch, sch_rv_t loop) {
  tir_stmt_t *l;
  int64_t v = -1;
  assert_int_equal(sch_get_loop_node(sch, loop, &l), MLC_OK);
  tir_as_int(l->u.loop.extent, &v);
  return v;
}

/* Tiled + vectorized + parallel, per block: the last spatial loop split by
 * 4 (a predicate when 4 does not divide it), its inner part moved below the
 * reduction loops and vectorized; the first loop that iterates, when it is
 * spatial, split by 2 and its outer part parallel. Primitives that do not
 * apply are skipped. */
static void schedule_block_tvp(sch_t *sch, const char *name) {
  sch_rv_t b;
  const sch_rv_t *loops, *parts;
  int n;
  if (sch_get_block(sch, &b, name) != MLC_OK || sch_get_loops(sch, &loops, &n, b) != MLC_OK || n == 0) return;
  sch_rv_t ls[16];
  int nl = n < 16 ? n : 16, last = -1;
  memcpy(ls, loops, sizeof(*ls) * (size_t)nl);
  for (int i = 0; i < nl; i++)
    if (!is_reduction_loop(sch, b, ls[i]) && loop_extent(sch, ls[i]) > 1) last = i;
  if (last < 0) return;
  sch_arg_t f4[2] = {sch_arg_none(), sch_arg_int(4)};
  if (sch_split(sch, &parts, ls[last], f4, 2, true) != MLC_OK) return;
  sch_rv_t inner = parts[1], order[17];
  int no = 0;
  for (int i = last + 1; i < nl; i++) order[no++] = ls[i];
  order[no++] = inner;
  if (no > 1) sch_reorder(sch, order, no);
  sch_vectorize(sch, inner);
  if (sch_get_loops(sch, &loops, &n, b) != MLC_OK) return;
  int outer = 0; /* the first loop that iterates (batch loops are often 1) */
  while (outer < n - 1 && loop_extent(sch, loops[outer]) == 1) outer++;
  sch_rv_t first = loops[outer];
  if (first == inner || is_reduction_loop(sch, b, first)) return;
  sch_arg_t f2[2] = {sch_arg_none(), sch_arg_int(2)};
  if (loop_extent(sch, first) >= 4 && sch_split(sch, &parts, first, f2, 2, true) == MLC_OK) first = parts[0];
  sch_parallel(sch, first);
}

/* cache_write / compute_at: a reduction block writes into a local cache
 * written back under its outermost loop; a producer (PadInput, a softmax
 * stage) is computed at its consumer's second loop. */
static void schedule_block_cache(sch_t *sch, const char *name) {
  sch_rv_t b, cache;
  const sch_rv_t *loops, *consumers;
  int n, nc;
  if (sch_get_block(sch, &b, name) != MLC_OK || sch_get_loops(sch, &loops, &n, b) != MLC_OK || n == 0) return;
  tir_block_t *node;
  assert_int_equal(sch_get_block_node(sch, b, &node), MLC_OK);
  if (node->init && !is_reduction_loop(sch, b, loops[0]) &&
      sch_cache_write(sch, &cache, b, 0, "local", NULL, 0) == MLC_OK) {
    assert_int_equal(sch_get_loops(sch, &loops, &n, b), MLC_OK);
    sch_reverse_compute_at(sch, cache, loops[0], true, -1);
    return;
  }
  if (sch_get_consumers(sch, &consumers, &nc, b) != MLC_OK || nc != 1) return;
  sch_rv_t consumer = consumers[0];
  if (sch_get_loops(sch, &loops, &n, consumer) != MLC_OK || n == 0) return;
  sch_compute_at(sch, b, loops[n > 1 ? 1 : 0], true, -1);
}

typedef enum { SCHED_NONE, SCHED_TVP, SCHED_CACHE, SCHED_BOTH, SCHED_COUNT } sched_kind_t;
static const char *const SCHED_NAMES[] = {"none", "tiled+vectorized+parallel", "cache_write/compute_at",
                                          "cache_write/compute_at then tiled+vectorized+parallel"};

static sch_t *scheduled(const tir_func_t *f, sched_kind_t kind) {
  sch_t *sch = NULL;
  assert_int_equal(sch_create(&sch, f, 1, SCH_ERRORS_FAST), MLC_OK);
  names_t nm = block_names(f);
  if (kind == SCHED_CACHE || kind == SCHED_BOTH)
    for (int i = 0; i < nm.n; i++) schedule_block_cache(sch, nm.names[i]);
  if (kind == SCHED_TVP || kind == SCHED_BOTH) {
    nm = block_names(sch_func(sch)); /* the caches are blocks too */
    for (int i = 0; i < nm.n; i++) schedule_block_tvp(sch, nm.names[i]);
  }
  return sch;
}

/* ------------------------------------------------------------------------ */
/* Every workload under every schedule                                       */
/* ------------------------------------------------------------------------ */

typedef struct {
  const char *name;
  int64_t shape[12];
  int nshape;
  bool float_only;
} workload_t;

static const workload_t WORKLOADS[] = {
    {"GMM", {8, 12, 16}, 3, false},
    {"BMM", {2, 4, 8, 4}, 4, false},
    {"GMV", {8, 16}, 2, false},
    {"C1D", {1, 8, 4, 8, 3, 2, 1}, 7, false},
    {"C2D", {1, 6, 6, 4, 8, 3, 3, 1, 1}, 9, false},
    {"C3D", {1, 4, 4, 4, 2, 4, 3, 3, 3, 1, 1}, 11, false},
    {"DEP", {1, 6, 6, 8, 3, 3, 1, 1}, 8, false},
    {"DIL", {1, 8, 8, 4, 4, 3, 3, 1, 2, 2}, 10, false},
    {"GRP", {1, 6, 6, 8, 8, 3, 3, 2, 1, 2}, 10, false},
    {"T2D", {1, 4, 4, 4, 8, 4, 4, 2, 1}, 9, false},
    {"NRM", {4, 8, 8}, 3, true},
    {"SFM", {8, 16}, 2, true},
    {"LN", {8, 16}, 2, true},
    {"D+B+R", {8, 16, 8}, 3, false},
};

/* Lowers w (inputs of dtype `in`) under the schedules in `mask` (bit k for
 * sched_kind_t k); stats per schedule. */
static void lower_workload(const workload_t *w, tir_dtype_t in, unsigned mask, stats_t *stats) {
  tir_func_t *f = NULL;
  int rc = tir_workload_build(&f, w->name, w->shape, w->nshape, in, tir_dtype(0, 0, 0));
  if (rc != MLC_OK) fprintf(stderr, "%s: %s\n", w->name, mlc_error_last());
  assert_int_equal(rc, MLC_OK);
  mlc_target_t t = lt_target();
  for (int k = 0; k < SCHED_COUNT; k++) {
    if (!(mask & (1u << k))) continue;
    sch_t *sch = scheduled(f, (sched_kind_t)k);
    tir_func_t *out = NULL;
    rc = mlc_lower(&out, sch_func(sch), &t, NULL);
    if (rc != MLC_OK) fprintf(stderr, "%s (%s): %s\n", w->name, SCHED_NAMES[k], mlc_error_last());
    assert_int_equal(rc, MLC_OK);
    assert_lowered_contract(out, &stats[k]);
    st_assert_same_outputs(f, out, 21, 1e-5);
    tir_func_free(out);
    sch_free(sch);
  }
  tir_func_free(f);
}

static void every_workload_lowers_to_what_it_computes(void **state) {
  stats_t stats[SCHED_COUNT] = {{0}};
  for (size_t i = 0; i < sizeof WORKLOADS / sizeof WORKLOADS[0]; i++) lower_workload(&WORKLOADS[i], tir_dt_FLOAT32(), ~0u, stats);
  /* The schedules did what they say: vector stores and parallel loops in
   * every workload, a local cache for every reduction. */
  assert_true(stats[SCHED_TVP].vector_stores >= 30);
  assert_true(stats[SCHED_TVP].parallel_loops >= 20);
  assert_true(stats[SCHED_CACHE].allocations >= stats[SCHED_NONE].allocations + 14);
  assert_true(stats[SCHED_BOTH].vector_stores >= 30);
  assert_int_equal(stats[SCHED_NONE].vector_stores + stats[SCHED_NONE].parallel_loops, 0);
}

static void float16_and_int8_workloads_lower_to_what_they_compute(void **state) {
  stats_t stats[SCHED_COUNT] = {{0}};
  /* The schedules that vectorize: casts of the narrow inputs become vector
   * casts. */
  unsigned mask = 1u << SCHED_TVP | 1u << SCHED_BOTH;
  for (size_t i = 0; i < sizeof WORKLOADS / sizeof WORKLOADS[0]; i++) {
    lower_workload(&WORKLOADS[i], tir_dt_FLOAT16(), mask, stats);
    if (!WORKLOADS[i].float_only) lower_workload(&WORKLOADS[i], tir_dt_INT8(), mask, stats);
  }
  assert_true(stats[SCHED_TVP].vector_stores >= 50);
}

/* ------------------------------------------------------------------------ */
/* Out of memory                                                             */
/* ------------------------------------------------------------------------ */

static void out_of_memory_anywhere_is_an_error_without_leaks(void **state) {
  /* The cache + tiled + vectorized convolution exercises every pass; each
   * allocation in turn fails (the arena takes 64 KiB chunks, so there are
   * few): MLC_ENOMEM or success, never a crash, and LeakSanitizer sees
   * nothing left behind. */
  const workload_t *w = &WORKLOADS[4];
  tir_func_t *f = NULL;
  assert_int_equal(tir_workload_build(&f, w->name, w->shape, w->nshape, tir_dt_FLOAT32(), tir_dtype(0, 0, 0)), MLC_OK);
  sch_t *sch = scheduled(f, SCHED_BOTH);
  mlc_target_t t = lt_target();
  int failures = 0;
  for (long n = 0;; n++) {
    tir_func_t *out = NULL;
    mlc_strbuf_t notes;
    mlc_sb_init(&notes);
    mlc_lower_options_t opts = {.notes = &notes};
    mlc_alloc_fail_after(n);
    int rc = mlc_lower(&out, sch_func(sch), &t, &opts);
    mlc_alloc_fail_after(-1);
    mlc_sb_free(&notes);
    if (rc == MLC_OK) {
      st_assert_same_outputs(f, out, 1, 1e-5);
      tir_func_free(out);
      break;
    }
    assert_int_equal(rc, MLC_ENOMEM);
    assert_null(out);
    failures++;
  }
  assert_true(failures >= 4); /* the copy's arena, then chunks as passes grow it */
  sch_free(sch);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* Tensor intrinsics                                                         */
/* ------------------------------------------------------------------------ */

static const char TMM_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((32, 64), \"float32\"), B: T.Buffer((64, 64), \"float32\"), C: T.Buffer((32, 64), \"float32\")):\n"
    "    for i, j, k in T.grid(32, 64, 64):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

static const char TMM_TRACE[] =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "l4, l5 = sch.split(loop=l2, factors=[None, 16], preserve_unit_iters=True)\n"
    "l6, l7 = sch.split(loop=l3, factors=[None, 4], preserve_unit_iters=True)\n"
    "sch.reorder(l1, l4, l6, l7, l5)\n"
    "b8 = sch.decompose_reduction(block=b0, loop=l6)\n"
    "sch.tensorize(block_or_loop=l7, tensor_intrin=\"avx512_fp32_fma_16x4\", preserve_unit_iters=True)\n"
    "l9, l10, l11 = sch.get_loops(block=b8)\n"
    "sch.vectorize(loop=l11)\n";

static const char TMM_LOWERED[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((32, 64), \"float32\"), B: T.Buffer((64, 64), \"float32\"), C: T.Buffer((32, 64), \"float32\")):\n"
    "    C_1 = T.Buffer((2048,), data=C.data)\n"
    "    A_1 = T.Buffer((2048,), data=A.data)\n"
    "    B_1 = T.Buffer((4096,), data=B.data)\n"
    "    for i, j_0 in T.grid(32, 4):\n"
    "        C_1[T.Ramp(i * 64 + j_0 * 16, 1, 16)] = T.Broadcast(T.float32(0), 16)\n"
    "        for k_0 in range(16):\n"
    "            C_1[T.Ramp(i * 64 + j_0 * 16, 1, 16)] = T.call_llvm_pure_intrin(\"float32x16\", \"llvm.fma.v16f32\", T.Broadcast(A_1[i * 64 + k_0 * 4], 16), B_1[T.Ramp(k_0 * 256 + j_0 * 16, 1, 16)], C_1[T.Ramp(i * 64 + j_0 * 16, 1, 16)])\n"
    "            C_1[T.Ramp(i * 64 + j_0 * 16, 1, 16)] = T.call_llvm_pure_intrin(\"float32x16\", \"llvm.fma.v16f32\", T.Broadcast(A_1[i * 64 + k_0 * 4 + 1], 16), B_1[T.Ramp(k_0 * 256 + j_0 * 16 + 64, 1, 16)], C_1[T.Ramp(i * 64 + j_0 * 16, 1, 16)])\n"
    "            C_1[T.Ramp(i * 64 + j_0 * 16, 1, 16)] = T.call_llvm_pure_intrin(\"float32x16\", \"llvm.fma.v16f32\", T.Broadcast(A_1[i * 64 + k_0 * 4 + 2], 16), B_1[T.Ramp(k_0 * 256 + j_0 * 16 + 128, 1, 16)], C_1[T.Ramp(i * 64 + j_0 * 16, 1, 16)])\n"
    "            C_1[T.Ramp(i * 64 + j_0 * 16, 1, 16)] = T.call_llvm_pure_intrin(\"float32x16\", \"llvm.fma.v16f32\", T.Broadcast(A_1[i * 64 + k_0 * 4 + 3], 16), B_1[T.Ramp(k_0 * 256 + j_0 * 16 + 192, 1, 16)], C_1[T.Ramp(i * 64 + j_0 * 16, 1, 16)])\n";

static const char VNNI_SRC[] =
    "@T.prim_func\n"
    "def main(X: T.Buffer((32, 64), \"uint8\"), W: T.Buffer((4, 16, 16, 4), \"int8\"), C: T.Buffer((32, 64), \"int32\")):\n"
    "    for i, j_0 in T.grid(32, 4):\n"
    "        for j_1_init in range(16):\n"
    "            with T.block(\"C_init\"):\n"
    "                vi = T.axis.spatial(32, i)\n"
    "                vj = T.axis.spatial(64, j_0 * 16 + j_1_init)\n"
    "                C[vi, vj] = 0\n"
    "        for k_0, j_1, k_1 in T.grid(16, 16, 4):\n"
    "            with T.block(\"C_update\"):\n"
    "                vi = T.axis.spatial(32, i)\n"
    "                vj = T.axis.spatial(64, j_0 * 16 + j_1)\n"
    "                vk = T.axis.reduce(64, k_0 * 4 + k_1)\n"
    "                C[vi, vj] = C[vi, vj] + T.Cast(\"int32\", X[vi, vk]) * T.Cast(\"int32\", W[vj // 16, vk // 4, vj % 16, vk % 4])\n";

static const char VNNI_TRACE[] =
    "b0 = sch.get_block(name=\"C_update\", func_name=\"main\")\n"
    "l1, l2, l3, l4, l5 = sch.get_loops(block=b0)\n"
    "sch.tensorize(block_or_loop=l4, tensor_intrin=\"x86_vnni_u8s8s32_16x4\", preserve_unit_iters=True)\n"
    "b6 = sch.get_block(name=\"C_init\", func_name=\"main\")\n"
    "l7, l8, l9 = sch.get_loops(block=b6)\n"
    "sch.vectorize(loop=l9)\n";

static const char VNNI_LOWERED[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(X: T.Buffer((32, 64), \"uint8\"), W: T.Buffer((4, 16, 16, 4), \"int8\"), C: T.Buffer((32, 64), \"int32\")):\n"
    "    C_1 = T.Buffer((2048,), \"int32\", data=C.data)\n"
    "    X_1 = T.Buffer((2048,), \"uint8\", data=X.data)\n"
    "    W_1 = T.Buffer((4096,), \"int8\", data=W.data)\n"
    "    for i, j_0 in T.grid(32, 4):\n"
    "        C_1[T.Ramp(i * 64 + j_0 * 16, 1, 16)] = T.Broadcast(0, 16)\n"
    "        for k_0 in range(16):\n"
    "            C_1[T.Ramp(i * 64 + j_0 * 16, 1, 16)] = T.call_llvm_pure_intrin(\"int32x16\", \"llvm.x86.avx512.vpdpbusd.512\", C_1[T.Ramp(i * 64 + j_0 * 16, 1, 16)], T.Broadcast(T.reinterpret(\"int32\", X_1[T.Ramp(i * 64 + k_0 * 4, 1, 4)]), 16), T.reinterpret(\"int32x16\", W_1[T.Ramp(j_0 * 1024 + k_0 * 64, 1, 64)]))\n";

/* src scheduled by the trace (Python form) and lowered prints as expected.
 * The intrinsics' LLVM calls cannot be interpreted: the text is the check. */
static void assert_lowers_to(const char *src, const char *trace, const char *expected) {
  tir_func_t *f = st_parse(src), *out = NULL;
  sch_trace_t *t = NULL;
  assert_int_equal(sch_trace_from_python(&t, trace, strlen(trace), "<trace>"), MLC_OK);
  sch_t *sch = NULL;
  assert_int_equal(sch_create(&sch, f, 0, SCH_ERRORS_RICH), MLC_OK);
  int rc = sch_trace_apply(sch, t, true);
  if (rc != MLC_OK) fprintf(stderr, "%s\n", sch_error(sch));
  assert_int_equal(rc, MLC_OK);
  assert_int_equal(mlc_lower(&out, sch_func(sch), NULL, NULL), MLC_OK);
  st_assert_script(out, expected);
  tir_func_free(out);
  sch_free(sch);
  sch_trace_free(t);
  tir_func_free(f);
}

static void avx512_fma_kernel_lowers_to_vector_calls_on_flat_indices(void **state) {
  /* The match buffers became offsets into A, B and C; the unrolled k loop
   * four calls; B's stride 64 folded into the ramp bases. */
  assert_lowers_to(TMM_SRC, TMM_TRACE, TMM_LOWERED);
}

static void vnni_kernel_reads_its_packed_tile_as_one_64_byte_ramp(void **state) {
  /* W_1[Ramp(j_0 * 1024 + k_0 * 64, 1, 64)]: the intrinsic's B[0, Ramp(0,
   * 1, 64)] runs across the (16, 4) tile, which flattening makes exact. */
  assert_lowers_to(VNNI_SRC, VNNI_TRACE, VNNI_LOWERED);
}

/* ------------------------------------------------------------------------ */
/* mlc-sched lower                                                           */
/* ------------------------------------------------------------------------ */

static const char CMD_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    for i, j, k in T.grid(16, 16, 16):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

static const char CMD_TRACE[] =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "l4, l5 = sch.split(loop=l2, factors=[None, 8], preserve_unit_iters=True)\n"
    "sch.reorder(l3, l5)\n"
    "sch.vectorize(loop=l5)\n"
    "sch.parallel(loop=l1)\n";

static const char CMD_BAD_TRACE[] = "b0 = sch.get_block(name=\"D\", func_name=\"main\")\n";

typedef struct {
  char dir[64];
  char src[96], trace[96], bad_trace[96], out[96], err[96];
} cmd_files_t;

static void write_text(const char *path, const char *text) {
  assert_int_equal(mlc_write_file(path, text, strlen(text)), MLC_OK);
}

static cmd_files_t cmd_files(void) {
  cmd_files_t c;
  snprintf(c.dir, sizeof c.dir, "/tmp/mlc-lower-cmd-XXXXXX");
  assert_non_null(mkdtemp(c.dir));
  snprintf(c.src, sizeof c.src, "%s/mm.py", c.dir);
  snprintf(c.trace, sizeof c.trace, "%s/trace.py", c.dir);
  snprintf(c.bad_trace, sizeof c.bad_trace, "%s/bad.py", c.dir);
  snprintf(c.out, sizeof c.out, "%s/stdout", c.dir);
  snprintf(c.err, sizeof c.err, "%s/stderr", c.dir);
  write_text(c.src, CMD_SRC);
  write_text(c.trace, CMD_TRACE);
  write_text(c.bad_trace, CMD_BAD_TRACE);
  return c;
}

static void cmd_files_remove(const cmd_files_t *c) {
  const char *const paths[] = {c->src, c->trace, c->bad_trace, c->out, c->err};
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) unlink(paths[i]);
  rmdir(c->dir);
}

/* Runs `lower ARGS...` with stdout and stderr captured; returns the exit
 * status, *out and *err the texts (mlc_free). */
static int run_lower_cmd(const cmd_files_t *c, char **out, char **err, const char *const *args, int nargs) {
  char *argv[16];
  argv[0] = (char *)"lower";
  for (int i = 0; i < nargs; i++) argv[i + 1] = (char *)args[i];
  fflush(stdout);
  fflush(stderr);
  int saved_out = dup(1), saved_err = dup(2);
  int fo = open(c->out, O_WRONLY | O_CREAT | O_TRUNC, 0600), fe = open(c->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  assert_true(saved_out >= 0 && saved_err >= 0 && fo >= 0 && fe >= 0);
  dup2(fo, 1);
  dup2(fe, 2);
  int code = mlc_lower_cmd(nargs + 1, argv);
  fflush(stdout);
  fflush(stderr);
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  close(fo);
  close(fe);
  close(saved_out);
  close(saved_err);
  size_t len;
  assert_int_equal(mlc_read_file(out, &len, c->out), MLC_OK);
  assert_int_equal(mlc_read_file(err, &len, c->err), MLC_OK);
  return code;
}

static int count_lines_starting(const char *text, const char *prefix) {
  int n = 0;
  for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
    if (strncmp(p, prefix, strlen(prefix)) == 0) n++;
  return n;
}

static void lower_command_prints_the_lowered_function(void **state) {
  cmd_files_t c = cmd_files();
  char *out, *err;
  const char *args[] = {c.src, "--script", c.trace};
  assert_int_equal(run_lower_cmd(&c, &out, &err, args, 3), 0);
  lt_assert_contains(out, "for i in T.parallel(16):\n");
  lt_assert_contains(out, "C_1[T.Ramp(i * 16 + j_0 * 8, 1, 8)] = C_1[T.Ramp(i * 16 + j_0 * 8, 1, 8)] + "
                          "T.Broadcast(A_1[i * 16 + k], 8) * B_1[T.Ramp(k * 16 + j_0 * 8, 1, 8)]\n");
  assert_null(strstr(out, "T.block"));
  assert_int_equal(count_lines_starting(out, "# after"), 0);
  assert_string_equal(err, "");
  mlc_free(out);
  mlc_free(err);
  cmd_files_remove(&c);
}

static void lower_command_dumps_the_stages_asked_for(void **state) {
  cmd_files_t c = cmd_files();
  char *out, *err;
  const char *one[] = {c.src, "--dump-after", "remove-blocks"};
  assert_int_equal(run_lower_cmd(&c, &out, &err, one, 3), 0);
  assert_true(strncmp(out, "# after remove-blocks\n# from tvm.script import tir as T\n", 56) == 0);
  assert_int_equal(count_lines_starting(out, "# after"), 1);
  lt_assert_contains(out, "        if k == 0:\n            C[i, j] = T.float32(0)\n");
  mlc_free(out);
  mlc_free(err);
  const char *all[] = {c.src, "--script", c.trace, "--dump-after=all", "--func", "main"};
  assert_int_equal(run_lower_cmd(&c, &out, &err, all, 6), 0);
  assert_int_equal(count_lines_starting(out, "# after"), MLC_PASS_COUNT);
  lt_assert_contains(out, "# after storage-rewrite\n");
  mlc_free(out);
  mlc_free(err);
  cmd_files_remove(&c);
}

static void lower_command_reports_bad_input_and_failures(void **state) {
  cmd_files_t c = cmd_files();
  char *out, *err;
  const char *bad_pass[] = {c.src, "--dump-after", "vectorise"};
  assert_int_equal(run_lower_cmd(&c, &out, &err, bad_pass, 3), 2);
  lt_assert_contains(err, "mlc-sched: error: lower: --dump-after: unknown lowering pass 'vectorise'");
  mlc_free(out);
  mlc_free(err);
  const char *no_file[] = {"--dump-after", "all"};
  assert_int_equal(run_lower_cmd(&c, &out, &err, no_file, 2), 2);
  lt_assert_contains(err, "lower: missing FILE");
  mlc_free(out);
  mlc_free(err);
  const char *bad_opt[] = {c.src, "--fast"};
  assert_int_equal(run_lower_cmd(&c, &out, &err, bad_opt, 2), 2);
  lt_assert_contains(err, "lower: unknown option '--fast'");
  mlc_free(out);
  mlc_free(err);
  const char *bad_trace[] = {c.src, "--script", c.bad_trace};
  assert_int_equal(run_lower_cmd(&c, &out, &err, bad_trace, 3), 1);
  lt_assert_contains(err, "mlc-sched: error: ");
  assert_string_equal(out, "");
  mlc_free(out);
  mlc_free(err);
  const char *help[] = {"--help"};
  assert_int_equal(run_lower_cmd(&c, &out, &err, help, 1), 0);
  lt_assert_contains(out, "usage: mlc-sched lower FILE");
  mlc_free(out);
  mlc_free(err);
  cmd_files_remove(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(passes_are_listed_in_pipeline_order),
      cmocka_unit_test(dump_after_one_pass_shows_that_stage),
      cmocka_unit_test(dump_after_all_shows_every_stage_in_order),
      cmocka_unit_test(unknown_dump_after_is_refused),
      cmocka_unit_test(failing_pass_is_named_in_the_error),
      cmocka_unit_test(every_workload_lowers_to_what_it_computes),
      cmocka_unit_test(float16_and_int8_workloads_lower_to_what_they_compute),
      cmocka_unit_test(out_of_memory_anywhere_is_an_error_without_leaks),
      cmocka_unit_test(avx512_fma_kernel_lowers_to_vector_calls_on_flat_indices),
      cmocka_unit_test(vnni_kernel_reads_its_packed_tile_as_one_64_byte_ramp),
      cmocka_unit_test(lower_command_prints_the_lowered_function),
      cmocka_unit_test(lower_command_dumps_the_stages_asked_for),
      cmocka_unit_test(lower_command_reports_bad_input_and_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
