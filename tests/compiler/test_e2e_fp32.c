/*
 * test_e2e_fp32.c - every built-in workload in float32, at a small shape,
 * compiled for the host (mlc_build, `llvm -num-cores=2`, JIT) with no
 * schedule and with a generic tiled + vectorized + parallel schedule, gives
 * the reference interpreter's result on the same random inputs in [1, 10).
 * Tolerance: rtol 1e-5, 1e-4 for reductions over more than 64 terms
 * (e2e_helpers.h says why). The matrix is in docs/compiler/codegen.md,
 * "What is tested".
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "e2e_helpers.h"

static void test_every_builtin_workload_is_in_the_matrix(void **state) {
  (void)state;
  e2e_assert_every_workload_has_a_shape();
}

static void check_cell(void **state) { e2e_check_none_and_tiled((const e2e_spec_t *)*state, 1001); }

#define FP32_WORKLOADS(X) \
  X(GMM, "GMM") X(BMM, "BMM") X(GMV, "GMV") X(C1D, "C1D") X(C2D, "C2D") X(C3D, "C3D") X(DEP, "DEP") \
  X(DIL, "DIL") X(GRP, "GRP") X(T2D, "T2D") X(NRM, "NRM") X(SFM, "SFM") X(LN, "LN") X(DBR, "D+B+R")

enum {
#define ENUM_(e, name) W_##e,
  FP32_WORKLOADS(ENUM_)
#undef ENUM_
};

static e2e_spec_t specs[] = {
#define SPEC_(e, name) {name, {TIR_CODE_FLOAT, 32, 1}, "float32"},
    FP32_WORKLOADS(SPEC_)
#undef SPEC_
};

/* A hand trace of bench/traces/ applied to `workload` at `shape`: the
 * interpreter's result, and the IR has `needle`. */
static void check_hand_trace(const char *workload, const int64_t *shape, int nshape, const char *file,
                             const char *needle) {
  tir_func_t *f = NULL;
  tir_dtype_t none = {0, 0, 0};
  assert_int_equal(tir_workload_build(&f, workload, shape, nshape, tir_dt_FLOAT32(), none), MLC_OK);
  char path[4096];
  snprintf(path, sizeof path, "%s/../bench/traces/%s", MLC_TEST_DIR, file);
  char *text = NULL;
  size_t len = 0;
  assert_int_equal(mlc_read_file(&text, &len, path), MLC_OK);
  sch_trace_t *t = NULL;
  sch_t *sch = NULL;
  assert_int_equal(sch_trace_from_python(&t, text, len, path), MLC_OK);
  assert_int_equal(sch_create(&sch, f, 1, SCH_ERRORS_RICH), MLC_OK);
  int rc = sch_trace_apply(sch, t, true);
  if (rc != MLC_OK) fprintf(stderr, "%s: %s\n", path, mlc_error_last());
  assert_int_equal(rc, MLC_OK);
  e2e_case_t c;
  e2e_case_init(&c, workload, "float32", f, 1001);
  e2e_case_reference(&c);
  e2e_case_check_ir(&c, file, sch_func(sch), sch, needle);
  e2e_case_free(&c);
  sch_free(sch);
  sch_trace_free(t);
  mlc_free(text);
}

/* bench/traces/sfm_rows.py (rows of 1024 done whole per task, rfactored
 * reductions with their lanes moved under the reduction, inline exp in
 * vectors of 64) on softmax of 4 x 1024. */
static void test_softmax_hand_trace_matches_the_interpreter(void **state) {
  (void)state;
  int64_t shape[2] = {4, 1024};
  check_hand_trace("SFM", shape, 2, "sfm_rows.py", "<64 x float>");
}

/* bench/traces/bmm_avx512_fma.py (8 x 32 register tiles of FMA intrinsics,
 * parallel over batches and column halves) on BMM 2 x 16 x 128 x 8. */
static void test_bmm_hand_trace_matches_the_interpreter(void **state) {
  (void)state;
  int64_t shape[4] = {2, 16, 128, 8};
  check_hand_trace("BMM", shape, 4, "bmm_avx512_fma.py", "llvm.fma.v16f32");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_builtin_workload_is_in_the_matrix),
      cmocka_unit_test(test_softmax_hand_trace_matches_the_interpreter),
      cmocka_unit_test(test_bmm_hand_trace_matches_the_interpreter),
#define TEST_(e, name) \
  {name " float32: unscheduled and tiled+vectorized+parallel match the interpreter", check_cell, NULL, NULL, &specs[W_##e]},
      FP32_WORKLOADS(TEST_)
#undef TEST_
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
