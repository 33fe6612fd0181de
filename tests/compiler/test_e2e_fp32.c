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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_builtin_workload_is_in_the_matrix),
#define TEST_(e, name) \
  {name " float32: unscheduled and tiled+vectorized+parallel match the interpreter", check_cell, NULL, NULL, &specs[W_##e]},
      FP32_WORKLOADS(TEST_)
#undef TEST_
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
