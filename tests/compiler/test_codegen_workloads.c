/*
 * test_codegen_workloads.c - the code generator on what lowering really
 * produces: every built-in workload (small shapes) built unscheduled with
 * mlc_build and run through the ABI gives the interpreter's result on the
 * same random inputs, in float32 and, where meaningful, float16 -> float32
 * and int8 -> int32; and a tiled GMM (split, reorder, fused parallel outer
 * loop, vectorized inner loop, decomposed reduction) gives it too.
 *
 * Tolerances: float32 and float16 inputs accumulate in float32 in the same
 * order as the interpreter (no fast-math), so results agree exactly except
 * through math functions (exp, sqrt, rsqrt in SFM, NRM, LN): 1e-5 relative.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "schedule/schedule.h"
#include "test_codegen_helpers.h"
#include "small_workloads.h"

/* Builds f (scheduled or not) with mlc_build, runs it and the interpreter
 * on the same inputs, compares. */
static void check_built(tir_func_t *f, double lo, double hi, double rtol) {
  mlc_target_t target;
  assert_int_equal(mlc_target_parse(&target, CGT_TARGET), MLC_OK);
  mlc_module_t *m = NULL;
  if (mlc_build(&m, &f, 1, &target, NULL) != MLC_OK) {
    fprintf(stderr, "build of %s: %s\n", f->name, mlc_error_last());
    fail();
  }
  cgt_kernel_t k = {0};
  assert_int_equal(mlc_jit_load(&k.jit, m), MLC_OK);
  k.fn = (mlc_packed_fn_t)mlc_jit_lookup(k.jit, f->name);
  assert_non_null(k.fn);
  cgt_args_t a;
  cgt_args_init(&a, f, NULL, 0, 11);
  for (int i = 0; i < a.n; i++) cgt_fill(&a, i, lo, hi);
  cgt_run_interp(&a);
  cgt_run_jit(&k, &a);
  cgt_compare(&a, rtol);
  cgt_args_free(&a);
  mlc_jit_free(k.jit);
}

static void check_workload(const small_workload_t *w, tir_dtype_t in, double rtol) {
  tir_func_t *f = NULL;
  if (tir_workload_build(&f, w->name, w->shape, w->nshape, in, (tir_dtype_t){0, 0, 0}) != MLC_OK) {
    fprintf(stderr, "workload %s: %s\n", w->name, mlc_error_last());
    fail();
  }
  check_built(f, tir_dtype_is_integer(in) ? -20 : 1, tir_dtype_is_integer(in) ? 20 : 10, rtol);
  tir_func_free(f);
}

static void test_every_workload_unscheduled_in_float32_matches_interpreter(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
    check_workload(&workloads[i], tir_dt_FLOAT32(), 1e-5);
}

static void test_mixed_precision_workloads_match_interpreter(void **state) {
  (void)state;
  check_workload(&workloads[0], tir_dt_FLOAT16(), 1e-5);   /* GMM f16 -> f32 */
  check_workload(&workloads[4], tir_dt_FLOAT16(), 1e-5);   /* C2D f16 -> f32 */
  check_workload(&workloads[0], tir_dt_BFLOAT16(), 1e-5);  /* GMM bf16 -> f32 */
  check_workload(&workloads[0], tir_dt_INT8(), 0);         /* GMM s8 -> s32 */
  check_workload(&workloads[4], tir_dt_INT8(), 0);         /* C2D s8 -> s32 */
  check_workload(&workloads[13], tir_dt_UINT8(), 0);       /* D+B+R u8 -> s32 */
}

static const char *tiled_gmm_trace =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "l4, l5 = sch.split(loop=l1, factors=[None, 4], preserve_unit_iters=True, disable_predication=False)\n"
    "l6, l7 = sch.split(loop=l2, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)\n"
    "l8, l9 = sch.split(loop=l3, factors=[None, 4], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.reorder(l4, l6, l8, l5, l9, l7)\n"
    "l10 = sch.fuse(l4, l6, preserve_unit_iters=True)\n"
    "sch.parallel(loop=l10)\n"
    "sch.unroll(loop=l9)\n"
    "sch.vectorize(loop=l7)\n"
    "b11 = sch.decompose_reduction(block=b0, loop=l8)\n";

static void test_tiled_vectorized_parallel_gmm_matches_interpreter(void **state) {
  (void)state;
  static const tir_dtype_t dtypes[] = {{TIR_CODE_FLOAT, 32, 1}, {TIR_CODE_INT, 8, 1}, {TIR_CODE_FLOAT, 16, 1}};
  for (size_t d = 0; d < sizeof(dtypes) / sizeof(dtypes[0]); d++) {
    tir_func_t *f = NULL;
    int64_t shape[3] = {32, 32, 16};
    assert_int_equal(tir_workload_build(&f, "GMM", shape, 3, dtypes[d], (tir_dtype_t){0, 0, 0}), MLC_OK);
    sch_trace_t *t = NULL;
    assert_int_equal(sch_trace_from_python(&t, tiled_gmm_trace, strlen(tiled_gmm_trace), "S.py"), MLC_OK);
    sch_t *sch = NULL;
    assert_int_equal(sch_create(&sch, f, 1, SCH_ERRORS_RICH), MLC_OK);
    if (sch_trace_apply(sch, t, true) != MLC_OK) {
      fprintf(stderr, "trace: %s\n", sch_error(sch));
      fail();
    }
    check_built(sch_func(sch), tir_dtype_is_integer(dtypes[d]) ? -20 : 1, tir_dtype_is_integer(dtypes[d]) ? 20 : 10,
                1e-5);
    sch_free(sch);
    sch_trace_free(t);
    tir_func_free(f);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_workload_unscheduled_in_float32_matches_interpreter),
      cmocka_unit_test(test_mixed_precision_workloads_match_interpreter),
      cmocka_unit_test(test_tiled_vectorized_parallel_gmm_matches_interpreter),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
