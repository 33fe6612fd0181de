/*
 * test_e2e_int8.c - every built-in workload where integers are meaningful
 * (all but the normalisations NRM, SFM and LN) with int8 inputs (int32
 * accumulation and outputs, the library's default for narrow integers), at
 * a small shape, compiled for the host with no schedule and with a generic
 * tiled + vectorized + parallel schedule, gives exactly the reference
 * interpreter's result on the same random inputs in [-8, 8] (small, so no
 * int32 accumulation can overflow; signed, so sign extension is exercised).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "e2e_helpers.h"

static void check_cell(void **state) { e2e_check_none_and_tiled((const e2e_spec_t *)*state, 3003); }

#define INT8_WORKLOADS(X) \
  X(GMM, "GMM") X(BMM, "BMM") X(GMV, "GMV") X(C1D, "C1D") X(C2D, "C2D") X(C3D, "C3D") X(DEP, "DEP") \
  X(DIL, "DIL") X(GRP, "GRP") X(T2D, "T2D") X(DBR, "D+B+R")

enum {
#define ENUM_(e, name) W_##e,
  INT8_WORKLOADS(ENUM_)
#undef ENUM_
};

static e2e_spec_t specs[] = {
#define SPEC_(e, name) {name, {TIR_CODE_INT, 8, 1}, "int8->int32"},
    INT8_WORKLOADS(SPEC_)
#undef SPEC_
};

/* The library builds normalisations for float dtypes only, which is why
 * they are not in the int8 column. */
static void test_normalisations_have_no_int8_form(void **state) {
  (void)state;
  static const char *const names[] = {"NRM", "SFM", "LN"};
  for (int i = 0; i < 3; i++) {
    tir_func_t *f = NULL;
    const e2e_shape_t *s = e2e_shape_of(names[i]);
    assert_non_null(s);
    assert_int_equal(tir_workload_build(&f, names[i], s->shape, s->n, tir_dt_INT8(), (tir_dtype_t){0, 0, 0}),
                     MLC_EINVAL);
    assert_null(f);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_normalisations_have_no_int8_form),
#define TEST_(e, name)                                                                                         \
  {name " int8->int32: unscheduled and tiled+vectorized+parallel match the interpreter", check_cell, NULL, NULL, \
   &specs[W_##e]},
      INT8_WORKLOADS(TEST_)
#undef TEST_
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
