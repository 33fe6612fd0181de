/*
 * test_codegen_gpu_reduce.c - cross-thread reductions (a reduction loop
 * bound to threadIdx.x, as MetaSchedule's CrossThreadReduction schedules
 * them): lowered by lower-cross-thread-reduction, checked against the
 * scheduled program in the interpreter, generated as warp shuffles
 * (shfl.sync.bfly in the PTX, assembled by ptxas for sm_80 and sm_90; a
 * shared-memory stage with barriers past a warp) and as ds_bpermute in a
 * gfx90a code object. Cases: a row sum at 32, 64, 128 and 256 threads,
 * max over float16 and min over int32, softmax and layer norm (built-in
 * workloads) with every block on one row per thread block, softmax's max
 * computed at its consumer into shared memory (the rule's fused form), and
 * the reductions it refuses.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "gpu_test_helpers.h"

/* rows x 512 reduced into rows, of dtype dt, with reducer `update`. */
static tir_func_t *row_reduce(const char *dt, const char *init, const char *update) {
  char src[2048];
  snprintf(src, sizeof src,
           "@T.prim_func\n"
           "def rowred(A: T.Buffer((4, 512), \"%s\"), B: T.Buffer((4,), \"%s\")):\n"
           "    T.func_attr({\"global_symbol\": \"rowred\", \"tir.noalias\": T.bool(True)})\n"
           "    for i, k in T.grid(4, 512):\n"
           "        with T.block(\"B\"):\n"
           "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
           "            with T.init():\n"
           "                B[vi] = %s\n"
           "            B[vi] = %s\n",
           dt, dt, init, update);
  tir_func_t *f = NULL;
  if (tir_parse_func(&f, src, strlen(src), "rowred.py", NULL) != MLC_OK) {
    fprintf(stderr, "parse: %s\n", mlc_error_last());
    fail();
  }
  return f;
}

/* Every block: its two loops, the first bound to blockIdx.x, the second
 * split by nthreads with the inner part bound to threadIdx.x. */
static sch_t *one_row_per_block(tir_func_t *f, const char *const *blocks, int nblocks, int nthreads,
                                const char *thread_tag) {
  mlc_strbuf_t py;
  mlc_sb_init(&py);
  for (int i = 0; i < nblocks; i++)
    mlc_sb_printf(&py,
                  "b%d = sch.get_block(name=\"%s\", func_name=\"main\")\n"
                  "l%d_0, l%d_1 = sch.get_loops(block=b%d)\n"
                  "l%d_2, l%d_3 = sch.split(loop=l%d_1, factors=[None, %d], preserve_unit_iters=True, "
                  "disable_predication=False)\n"
                  "sch.bind(loop=l%d_0, thread_axis=\"blockIdx.x\")\n"
                  "sch.bind(loop=l%d_3, thread_axis=\"%s\")\n",
                  i, blocks[i], i, i, i, i, i, i, nthreads, i, i, thread_tag);
  sch_t *sch = schedule_py(f, mlc_sb_str(&py));
  mlc_sb_free(&py);
  return sch;
}

/* Interpreter equality, ptxas, and the shuffles (and barriers past a warp). */
static void check_cuda(tir_func_t *f, int nthreads, double rtol) {
  check_lowered(f, rtol);
  int warp_steps = 0;
  for (int w = nthreads < 32 ? nthreads : 32; w > 1; w /= 2) warp_steps++;
  int shuffles = check_ptx_count(f, "shfl.sync.bfly.b32");
  if (shuffles < warp_steps) {
    fprintf(stderr, "%s at %d threads: %d shfl.sync.bfly, want >= %d\n", f->name, nthreads, shuffles, warp_steps);
    fail();
  }
  if (nthreads > 32) assert_true(check_ptx(f) >= 2);
}

static void test_row_sum_over_32_to_256_threads_shuffles_and_assembles(void **state) {
  (void)state;
  static const char *const blocks[] = {"B"};
  static const int threads[] = {32, 64, 128, 256};
  for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
    tir_func_t *f = row_reduce("float32", "T.float32(0)", "B[vi] + A[vi, vk]");
    sch_t *sch = one_row_per_block(f, blocks, 1, threads[i], "threadIdx.x");
    check_cuda(sch_func(sch), threads[i], 1e-5);
    sch_free(sch);
    tir_func_free(f);
  }
}

static void test_float16_max_and_int32_min_reduce_across_threads(void **state) {
  (void)state;
  static const char *const blocks[] = {"B"};
  tir_func_t *f = row_reduce("float16", "T.float16(-65504)", "T.max(B[vi], A[vi, vk])");
  sch_t *sch = one_row_per_block(f, blocks, 1, 64, "threadIdx.x");
  check_cuda(sch_func(sch), 64, 0.0);
  sch_free(sch);
  tir_func_free(f);
  f = row_reduce("int32", "T.int32(2147483647)", "T.min(B[vi], A[vi, vk])");
  sch = one_row_per_block(f, blocks, 1, 16, "threadIdx.x");
  check_cuda(sch_func(sch), 16, 0.0);
  sch_free(sch);
  tir_func_free(f);
}

static void test_softmax_and_layer_norm_reduce_across_threads(void **state) {
  (void)state;
  static const char *const sfm[] = {"T_softmax_maxelem", "T_softmax_exp", "T_softmax_expsum", "T_softmax_norm"};
  static const char *const ln[] = {"T_layer_norm_mean", "T_layer_norm_var", "T_layer_norm"};
  int64_t shape[2] = {4, 256};
  tir_func_t *f = NULL;
  assert_int_equal(tir_workload_build(&f, "SFM", shape, 2, tir_dt_FLOAT32(), (tir_dtype_t){0, 0, 0}), MLC_OK);
  sch_t *sch = one_row_per_block(f, sfm, 4, 64, "threadIdx.x");
  check_cuda(sch_func(sch), 64, 1e-5);
  sch_free(sch);
  tir_func_free(f);
  assert_int_equal(tir_workload_build(&f, "LN", shape, 2, tir_dt_FLOAT32(), (tir_dtype_t){0, 0, 0}), MLC_OK);
  sch = one_row_per_block(f, ln, 3, 128, "threadIdx.x");
  check_cuda(sch_func(sch), 128, 1e-5);
  sch_free(sch);
  tir_func_free(f);
}

/* CrossThreadReduction's fused form: the row max computed at the blockIdx
 * loop of its consumer into "shared", both on the same 64 threads. */
static const char *sfm_fused =
    "b1 = sch.get_block(name=\"T_softmax_exp\", func_name=\"main\")\n"
    "l0, l1 = sch.get_loops(block=b1)\n"
    "l2, l3 = sch.split(loop=l1, factors=[None, 64], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.bind(loop=l0, thread_axis=\"blockIdx.x\")\n"
    "sch.bind(loop=l3, thread_axis=\"threadIdx.x\")\n"
    "b0 = sch.get_block(name=\"T_softmax_maxelem\", func_name=\"main\")\n"
    "sch.compute_at(block=b0, loop=l0, preserve_unit_loops=True, index=-1)\n"
    "sch.set_scope(block=b0, buffer_index=0, storage_scope=\"shared\")\n"
    "l4, l5, l6 = sch.get_loops(block=b0)\n"
    "l7, l8 = sch.split(loop=l6, factors=[None, 64], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.bind(loop=l8, thread_axis=\"threadIdx.x\")\n";

static void test_softmax_max_fused_into_its_consumer_through_shared_memory(void **state) {
  (void)state;
  static const char *const rest[] = {"T_softmax_expsum", "T_softmax_norm"};
  int64_t shape[2] = {4, 256};
  tir_func_t *f = NULL;
  assert_int_equal(tir_workload_build(&f, "SFM", shape, 2, tir_dt_FLOAT32(), (tir_dtype_t){0, 0, 0}), MLC_OK);
  sch_t *sch = one_row_per_block(f, rest, 2, 64, "threadIdx.x");
  apply_py(sch, sfm_fused);
  check_cuda(sch_func(sch), 64, 1e-5);
  assert_true(check_ptx(sch_func(sch)) >= 1); /* the max in shared memory, then its readers */
  sch_free(sch);
  tir_func_free(f);
}

static void test_row_sum_for_gfx90a_uses_ds_bpermute(void **state) {
  (void)state;
  static const char *const blocks[] = {"B"};
  tir_func_t *f = row_reduce("float32", "T.float32(0)", "B[vi] + A[vi, vk]");
  sch_t *sch = one_row_per_block(f, blocks, 1, 256, "threadIdx.x"); /* 4 wavefronts of 64 */
  mlc_module_t *m = build_rocm_or_skip(sch_func(sch), "rocm -mcpu=gfx90a");
  if (m) {
    char *text = mlc_module_text(m, MLC_EMIT_ASM);
    assert_non_null(text);
    assert_true(count(text, "ds_bpermute_b32") >= 6); /* log2(64) steps, then the warps' slots */
    assert_non_null(strstr(text, "s_barrier"));
    mlc_free(text);
  }
  mlc_module_free(m);
  sch_free(sch);
  tir_func_free(f);
}

static void test_unsupported_cross_thread_reductions_are_refused(void **state) {
  (void)state;
  static const char *const blocks[] = {"B"};
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, "cuda -arch=sm_80"), MLC_OK);
  tir_func_t *f = row_reduce("float32", "T.float32(0)", "B[vi] + A[vi, vk]");
  sch_t *sch = one_row_per_block(f, blocks, 1, 32, "threadIdx.y");
  tir_func_t *low = NULL;
  assert_int_equal(mlc_lower(&low, sch_func(sch), &t, NULL), MLC_EUNSUPPORTED);
  assert_non_null(strstr(mlc_error_last(), "is bound to threadIdx.x"));
  sch_free(sch);
  tir_func_free(f);
  /* a product is not a reducer the allreduce knows */
  f = row_reduce("float32", "T.float32(1)", "B[vi] * A[vi, vk]");
  sch = one_row_per_block(f, blocks, 1, 32, "threadIdx.x");
  assert_int_equal(mlc_lower(&low, sch_func(sch), &t, NULL), MLC_EUNSUPPORTED);
  assert_non_null(strstr(mlc_error_last(), "sum, max or min"));
  assert_null(low);
  sch_free(sch);
  tir_func_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_row_sum_over_32_to_256_threads_shuffles_and_assembles),
      cmocka_unit_test(test_float16_max_and_int32_min_reduce_across_threads),
      cmocka_unit_test(test_softmax_and_layer_norm_reduce_across_threads),
      cmocka_unit_test(test_softmax_max_fused_into_its_consumer_through_shared_memory),
      cmocka_unit_test(test_row_sum_for_gfx90a_uses_ds_bpermute),
      cmocka_unit_test(test_unsupported_cross_thread_reductions_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
