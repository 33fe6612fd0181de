/*
 * test_e2e_fp16.c - every built-in workload with float16 inputs (float32
 * accumulation and outputs, the library's default for 16-bit floats), at a
 * small shape, compiled for the host with no schedule and with a generic
 * tiled + vectorized + parallel schedule, gives the reference interpreter's
 * result on the same random inputs in [1, 10), within rtol 1e-3.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "e2e_helpers.h"

static void check_cell(void **state) { e2e_check_none_and_tiled((const e2e_spec_t *)*state, 2002); }

#define FP16_WORKLOADS(X) \
  X(GMM, "GMM") X(BMM, "BMM") X(GMV, "GMV") X(C1D, "C1D") X(C2D, "C2D") X(C3D, "C3D") X(DEP, "DEP") \
  X(DIL, "DIL") X(GRP, "GRP") X(T2D, "T2D") X(NRM, "NRM") X(SFM, "SFM") X(LN, "LN") X(DBR, "D+B+R")

enum {
#define ENUM_(e, name) W_##e,
  FP16_WORKLOADS(ENUM_)
#undef ENUM_
};

static e2e_spec_t specs[] = {
#define SPEC_(e, name) {name, {TIR_CODE_FLOAT, 16, 1}, "float16->float32"},
    FP16_WORKLOADS(SPEC_)
#undef SPEC_
};

int main(void) {
  const struct CMUnitTest tests[] = {
#define TEST_(e, name)                                                                                   \
  {name " float16->float32: unscheduled and tiled+vectorized+parallel match the interpreter", check_cell, \
   NULL, NULL, &specs[W_##e]},
      FP16_WORKLOADS(TEST_)
#undef TEST_
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
