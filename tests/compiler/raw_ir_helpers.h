/*
 * raw_ir_helpers.h - the unoptimised LLVM IR the code generator makes for a
 * lowered TVMScript function (cg_llvm_add_func on a fresh module), for the
 * tests that look at the instructions it chose (test_codegen_vector.c,
 * test_codegen_stmt.c, test_codegen_vmath.c). Include after <cmocka.h>.
 */
#ifndef MLC_TESTS_RAW_IR_HELPERS_H
#define MLC_TESTS_RAW_IR_HELPERS_H

#include <llvm-c/Core.h>

#include "compiler/codegen/codegen_internal.h"
#include "test_codegen_helpers.h"

/* The unoptimised IR of the lowered function in src for target
 * (free with LLVMDisposeMessage); a parse or codegen error fails the test. */
static MLC_UNUSED char *raw_ir_for(const char *src, const char *target) {
  tir_func_t *f = NULL;
  tir_parse_error_t perr;
  assert_int_equal(tir_parse_func(&f, src, strlen(src), "<test>", &perr), MLC_OK);
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, target), MLC_OK);
  mlc_module_t *m = mlc_calloc(1, sizeof(*m));
  assert_int_equal(cg_module_init(m, &t), MLC_OK);
  if (cg_llvm_add_func(m, f) != MLC_OK) {
    fprintf(stderr, "codegen: %s\n", mlc_error_last());
    fail();
  }
  char *ir = LLVMPrintModuleToString(m->mod);
  mlc_module_free(m);
  tir_func_free(f);
  return ir;
}

/* The same for CGT_TARGET. */
static MLC_UNUSED char *raw_ir(const char *src) { return raw_ir_for(src, CGT_TARGET); }

#endif /* MLC_TESTS_RAW_IR_HELPERS_H */
