/*
 * evolve_testing.h - what test_mutators.c and test_evolve.c share: small
 * workloads and design-space sketches built by hand with schedule
 * primitives (a MetaSchedule-like SSRSRS tiling of GMM with the parallel
 * and unroll annotations of ParallelizeVectorizeUnroll, and a sampled
 * compute location on dense + bias + relu), so the tests of the search do
 * not depend on the exact rules of search/space/.
 *
 * Header-only (static functions); include after <cmocka.h>.
 */
#ifndef MLC_TESTS_SEARCH_EVOLVE_TESTING_H
#define MLC_TESTS_SEARCH_EVOLVE_TESTING_H

#include <stdio.h>
#include <string.h>

#include "search/search.h"

#define ET_OK(call)                                                          \
  do {                                                                       \
    int rc_ = (call);                                                        \
    if (rc_ != MLC_OK) fprintf(stderr, "%s: %s\n", #call, mlc_error_last()); \
    assert_int_equal(rc_, MLC_OK);                                           \
  } while (0)

/* A built-in workload with the given shape (float32). */
static MLC_UNUSED tir_func_t *et_workload(const char *name, const int64_t *shape, int nshape) {
  tir_func_t *f = NULL;
  tir_dtype_t none = {0, 0, 0};
  ET_OK(tir_workload_build(&f, name, shape, nshape, tir_dt_FLOAT32(), none));
  return f;
}

static MLC_UNUSED tir_func_t *et_gmm(int64_t m, int64_t n, int64_t k) {
  int64_t shape[3] = {m, n, k};
  return et_workload("GMM", shape, 3);
}

/* An "llvm" target with `cores` cores (no host detection: reproducible). */
static MLC_UNUSED void et_ctx(ms_ctx_t *ctx, const tir_func_t *f, int cores, uint64_t seed) {
  memset(ctx, 0, sizeof(*ctx));
  ctx->workload = f;
  ctx->task_name = f->name;
  char spec[96];
  snprintf(spec, sizeof spec, "llvm -mcpu=skylake-avx512 -num-cores=%d", cores);
  ET_OK(mlc_target_parse(&ctx->target, spec));
  ctx->num_cores = cores;
  ctx->seed = seed;
}

/* Samples a perfect tile of loop into n parts (decision NULL: drawn) and
 * splits by it; the new loops go to out. */
static MLC_UNUSED void et_tile(sch_t *sch, sch_rv_t loop, int n, int max_inner, const int64_t *decision,
                               sch_rv_t *out) {
  const sch_rv_t *factors, *loops;
  ET_OK(sch_sample_perfect_tile(sch, &factors, loop, n, max_inner, decision));
  sch_arg_t f[8];
  for (int i = 0; i < n; i++) f[i] = sch_arg_rv(factors[i]);
  ET_OK(sch_split(sch, &loops, loop, f, n, true));
  memcpy(out, loops, sizeof(sch_rv_t) * (size_t)n);
}

/* The root annotations of ParallelizeVectorizeUnroll: the parallel extent
 * (an integer), and an unroll step sampled among {0, 16, 64, 512}. */
static MLC_UNUSED void et_root_annotations(sch_t *sch, int64_t max_parallel) {
  sch_rv_t root, v;
  ET_OK(sch_get_block(sch, &root, "root"));
  ET_OK(sch_annotate(sch, root, MS_ANN_PARALLEL, sch_arg_int(max_parallel)));
  static const int64_t steps[] = {0, 16, 64, 512};
  static const double probs[] = {0.25, 0.25, 0.25, 0.25};
  ET_OK(sch_sample_categorical(sch, &v, steps, probs, 4, NULL));
  ET_OK(sch_annotate(sch, root, MS_ANN_UNROLL_EXPLICIT, sch_arg_rv(v)));
}

/* Tile decisions of the GMM sketch: i and j in 4 factors, k in 2. */
typedef struct {
  int64_t i[4], j[4], k[2];
} et_tiles_t;

/* A design-space trace of GMM: i and j tiled 4 ways and k 2 ways (innermost
 * at most max_inner), reordered SSRSRS, then the root annotations. Tiles
 * from `tiles`, or sampled from `seed` when NULL; owned by the caller. */
static MLC_UNUSED sch_trace_t *et_gmm_sketch_tiles(const tir_func_t *f, int max_inner, int64_t max_parallel,
                                                   uint64_t seed, const et_tiles_t *tiles) {
  sch_t *sch = NULL;
  ET_OK(sch_create(&sch, f, seed, SCH_ERRORS_FAST));
  sch_rv_t c, loops[3], i[4], j[4], k[2];
  const sch_rv_t *l;
  int n;
  ET_OK(sch_get_block(sch, &c, "C"));
  ET_OK(sch_annotate(sch, c, MS_ANN_TILING_STRUCTURE, sch_arg_str("SSRSRS")));
  ET_OK(sch_get_loops(sch, &l, &n, c));
  assert_int_equal(n, 3);
  memcpy(loops, l, sizeof loops);
  et_tile(sch, loops[0], 4, max_inner, tiles ? tiles->i : NULL, i);
  et_tile(sch, loops[1], 4, max_inner, tiles ? tiles->j : NULL, j);
  et_tile(sch, loops[2], 2, max_inner, tiles ? tiles->k : NULL, k);
  sch_rv_t order[10] = {i[0], j[0], i[1], j[1], k[0], i[2], j[2], k[1], i[3], j[3]};
  ET_OK(sch_reorder(sch, order, 10));
  et_root_annotations(sch, max_parallel);
  sch_trace_t *t = sch_trace_copy(sch_get_trace(sch));
  sch_free(sch);
  assert_non_null(t);
  return t;
}

static MLC_UNUSED sch_trace_t *et_gmm_sketch(const tir_func_t *f, int max_inner, int64_t max_parallel,
                                             uint64_t seed) {
  return et_gmm_sketch_tiles(f, max_inner, max_parallel, seed, NULL);
}

/* A design-space trace of D+B+R: relu's outer loop tiled 2 ways, T_add at a
 * sampled compute location under relu, T_matmul_NT left in place. */
static MLC_UNUSED sch_trace_t *et_dbr_sketch(const tir_func_t *f, uint64_t seed) {
  sch_t *sch = NULL;
  ET_OK(sch_create(&sch, f, seed, SCH_ERRORS_FAST));
  sch_rv_t add, relu, loc, tiles[2];
  const sch_rv_t *l;
  int n;
  ET_OK(sch_get_block(sch, &add, "T_add"));
  ET_OK(sch_get_block(sch, &relu, "T_relu"));
  ET_OK(sch_get_loops(sch, &l, &n, relu));
  et_tile(sch, l[0], 2, 16, NULL, tiles);
  ET_OK(sch_sample_compute_location(sch, &loc, add, NULL));
  ET_OK(sch_compute_at(sch, add, loc, true, -1));
  sch_trace_t *t = sch_trace_copy(sch_get_trace(sch));
  sch_free(sch);
  assert_non_null(t);
  return t;
}

/* The canonical JSON text of t (mlc_free). */
static MLC_UNUSED char *et_json(const sch_trace_t *t) {
  json_t *j = NULL;
  ET_OK(sch_trace_to_json(&j, t));
  char *text = mlc_json_dumps(j);
  json_decref(j);
  assert_non_null(text);
  char *copy = mlc_strdup(text);
  free(text);
  return copy;
}

/* The program t makes on f (replayed with its decisions); owned. */
static MLC_UNUSED sch_t *et_replay(const tir_func_t *f, const sch_trace_t *t) {
  sch_t *sch = NULL;
  ET_OK(sch_create(&sch, f, 1, SCH_ERRORS_RICH));
  ET_OK(sch_trace_apply(sch, t, true));
  return sch;
}

#endif /* MLC_TESTS_SEARCH_EVOLVE_TESTING_H */
