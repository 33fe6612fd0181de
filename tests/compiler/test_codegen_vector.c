/*
 * test_codegen_vector.c - vector code: contiguous RAMP loads and stores of
 * every dtype (aligned and unaligned), strided and indirect gathers,
 * scatters, broadcasts, vector select/compare/cast/math, vector
 * if_then_else with uniform and mixed conditions, and the LLVM intrinsics
 * the tensor intrinsics lower to (llvm.fma, AVX-512 VNNI), which the
 * interpreter cannot run and are checked against C loops. The IR before
 * optimisation shows single vector loads where the index is a stride-1
 * ramp, gathers otherwise, and the alignment the buffer declares.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "raw_ir_helpers.h"

static void test_contiguous_ramps_of_every_dtype_match_interpreter(void **state) {
  (void)state;
  static const struct { const char *dtype; int lanes; } cases[] = {
      {"float32", 16}, {"float64", 8}, {"float16", 32}, {"bfloat16", 16}, {"int8", 64},
      {"uint8", 32}, {"int16", 32}, {"int32", 16}, {"int64", 8}, {"uint64", 4}};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    char src[2048];
    int l = cases[c].lanes;
    /* Aligned (i * l) and unaligned (i * l + 3) bases. */
    snprintf(src, sizeof(src),
             "@T.prim_func\n"
             "def f(A: T.Buffer((%d,), \"%s\"), B: T.Buffer((%d,), \"%s\"), C: T.Buffer((%d,), \"%s\")):\n"
             "    T.func_attr({\"tir.noalias\": T.bool(True)})\n"
             "    for i in range(8):\n"
             "        C[T.Ramp(i * %d, 1, %d)] = A[T.Ramp(i * %d + 3, 1, %d)] * B[T.Ramp(i * %d, 1, %d)]"
             " + B[T.Ramp(i * %d + 1, 1, %d)]\n",
             l * 9, cases[c].dtype, l * 9, cases[c].dtype, l * 8, cases[c].dtype, l, l, l, l, l, l, l, l);
    cgt_check_against_interp(src, NULL, 0, 0);
  }
}

static void test_bool_vectors_load_and_store_as_bytes(void **state) {
  (void)state;
  cgt_check_against_interp("@T.prim_func\n"
                           "def f(A: T.Buffer((64,), \"float32\"), M: T.Buffer((64,), \"bool\"),"
                           " C: T.Buffer((64,), \"bool\"), D: T.Buffer((64,), \"float32\")):\n"
                           "    for i in range(4):\n"
                           "        C[T.Ramp(i * 16, 1, 16)] = A[T.Ramp(i * 16, 1, 16)] > T.Broadcast(T.float32(5), 16)"
                           " and M[T.Ramp(i * 16, 1, 16)]\n"
                           "        D[T.Ramp(i * 16, 1, 16)] = T.Select(C[T.Ramp(i * 16, 1, 16)],"
                           " A[T.Ramp(i * 16, 1, 16)], T.Broadcast(T.float32(-1), 16))\n",
                           NULL, 0, 0);
}

static void test_strided_and_indirect_gathers_and_scatters(void **state) {
  (void)state;
  const char *src = "@T.prim_func\n"
                    "def f(A: T.Buffer((256,), \"float32\"), Idx: T.Buffer((64,), \"int32\"),"
                    " B: T.Buffer((64,), \"float32\"), C: T.Buffer((64,), \"float32\"), D: T.Buffer((256,), \"float32\")):\n"
                    "    for i in range(8):\n"
                    "        B[T.Ramp(i * 8, 1, 8)] = A[T.Ramp(i * 16, 2, 8)]\n"
                    "        C[T.Ramp(i * 8, 1, 8)] = A[Idx[T.Ramp(i * 8, 1, 8)] * T.Broadcast(3, 8)]\n"
                    "    for i in range(256):\n"
                    "        D[i] = T.float32(0)\n"
                    "    for i in range(4):\n"
                    "        D[T.Ramp(i, 4, 16)] = A[T.Ramp(i * 16, 1, 16)]\n";
  cgt_kernel_t k;
  cgt_build(&k, src);
  cgt_args_t a;
  cgt_args_init(&a, k.f, NULL, 0, 5);
  cgt_fill(&a, 1, 0, 80); /* indices * 3 < 256 */
  cgt_run_interp(&a);
  cgt_run_jit(&k, &a);
  cgt_compare(&a, 0);
  cgt_args_free(&a);
  cgt_free(&k);
  char *ir = raw_ir(src);
  assert_non_null(strstr(ir, "@llvm.masked.gather.v8f32"));
  assert_non_null(strstr(ir, "@llvm.masked.scatter.v16f32"));
  LLVMDisposeMessage(ir);
}

static void test_broadcasts_and_broadcast_indices(void **state) {
  (void)state;
  cgt_check_against_interp("@T.prim_func\n"
                           "def f(A: T.Buffer((128,), \"float32\"), B: T.Buffer((8,), \"float32\"),"
                           " C: T.Buffer((128,), \"float32\"), D: T.Buffer((8,), \"float32\")):\n"
                           "    for i in range(8):\n"
                           "        C[T.Ramp(i * 16, 1, 16)] = A[T.Ramp(i * 16, 1, 16)] * T.Broadcast(B[i], 16)"
                           " + B[T.Broadcast(i, 16)]\n"
                           "        D[T.Broadcast(i, 4)] = A[T.Ramp(i * 16, 1, 4)]\n",
                           NULL, 0, 0);
}

static void test_vector_casts_compare_and_math(void **state) {
  (void)state;
  cgt_check_against_interp("@T.prim_func\n"
                           "def f(A: T.Buffer((128,), \"float16\"), B: T.Buffer((128,), \"float32\"),"
                           " C: T.Buffer((128,), \"float32\"), D: T.Buffer((128,), \"bfloat16\"),"
                           " E: T.Buffer((128,), \"int32\"), F: T.Buffer((128,), \"float32\")):\n"
                           "    for i in range(8):\n"
                           "        C[T.Ramp(i * 16, 1, 16)] = T.Cast(\"float32x16\", A[T.Ramp(i * 16, 1, 16)])"
                           " + T.exp(B[T.Ramp(i * 16, 1, 16)] * T.Broadcast(T.float32(0.25), 16))\n"
                           "        D[T.Ramp(i * 16, 1, 16)] = T.Cast(\"bfloat16x16\", B[T.Ramp(i * 16, 1, 16)]"
                           " - T.Cast(\"float32x16\", A[T.Ramp(i * 16, 1, 16)]))\n"
                           "        E[T.Ramp(i * 16, 1, 16)] = T.Cast(\"int32x16\", B[T.Ramp(i * 16, 1, 16)])"
                           " // T.Broadcast(3, 16) + T.Ramp(0, 1, 16)\n"
                           "        F[T.Ramp(i * 16, 1, 16)] = T.tanh(B[T.Ramp(i * 16, 1, 16)] * T.Broadcast(T.float32(-0.1), 16))"
                           " + T.max(B[T.Ramp(i * 16, 1, 16)], T.Broadcast(T.float32(5), 16))\n",
                           NULL, 0, 1e-6);
}

static void test_vector_if_then_else_with_uniform_conditions_matches_interpreter(void **state) {
  (void)state;
  cgt_check_against_interp("@T.prim_func\n"
                           "def f(A: T.Buffer((64,), \"float32\"), C: T.Buffer((96,), \"float32\")):\n"
                           "    for i in range(12):\n"
                           "        C[T.Ramp(i * 8, 1, 8)] = T.if_then_else(T.Broadcast(2 <= i and i < 10, 8),"
                           " A[T.Ramp(i * 8 - 16, 1, 8)], T.Broadcast(T.float32(0), 8))\n",
                           NULL, 0, 0);
}

static void test_vector_if_then_else_with_mixed_lanes_selects_per_lane(void **state) {
  (void)state;
  cgt_kernel_t k;
  cgt_build(&k, "@T.prim_func\n"
                "def f(A: T.Buffer((16,), \"int32\"), C: T.Buffer((16,), \"int32\")):\n"
                "    for i in range(2):\n"
                "        C[T.Ramp(i * 8, 1, 8)] = T.if_then_else(T.Ramp(i * 8, 1, 8) < T.Broadcast(5, 8),"
                " A[T.Ramp(i * 8, 1, 8)], T.Broadcast(-1, 8))\n");
  int32_t A[16], C[16];
  for (int i = 0; i < 16; i++) A[i] = 100 + i;
  int64_t shape[1] = {16};
  DLTensor args[2] = {{.data = A, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLInt, 32, 1}, .shape = shape},
                      {.data = C, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLInt, 32, 1}, .shape = shape}};
  assert_int_equal(k.fn(args, 2), 0);
  for (int i = 0; i < 16; i++) assert_int_equal(C[i], i < 5 ? 100 + i : -1);
  cgt_free(&k);
}

static void test_llvm_fma_intrinsic_as_the_avx512_micro_kernel_emits_it(void **state) {
  (void)state;
  /* The implementation of avx512_fp32_fma_16x4 after lowering, with the
   * mangled name and with the bare overloaded name. */
  cgt_kernel_t k;
  cgt_build(&k, "@T.prim_func\n"
                "def f(A: T.Buffer((4,), \"float32\"), B: T.Buffer((64,), \"float32\"), C: T.Buffer((32,), \"float32\")):\n"
                "    for k in range(4):\n"
                "        C[T.Ramp(0, 1, 16)] = T.call_llvm_pure_intrin(\"float32x16\", \"llvm.fma.v16f32\","
                " T.Broadcast(A[k], 16), B[T.Ramp(k * 16, 1, 16)], C[T.Ramp(0, 1, 16)])\n"
                "        C[T.Ramp(16, 1, 16)] = T.call_llvm_pure_intrin(\"float32x16\", \"llvm.fma\","
                " T.Broadcast(A[k], 16), B[T.Ramp(k * 16, 1, 16)], C[T.Ramp(16, 1, 16)])\n");
  float A[4] = {1, 2, 3, 4}, B[64], C[32], want[32];
  for (int i = 0; i < 64; i++) B[i] = (float)(i % 7) - 3;
  for (int j = 0; j < 32; j++) C[j] = want[j] = (float)j;
  for (int kk = 0; kk < 4; kk++)
    for (int j = 0; j < 32; j++) want[j] = fmaf(A[kk], B[kk * 16 + j % 16], want[j]);
  int64_t sa[1] = {4}, sb[1] = {64}, sc[1] = {32};
  DLTensor args[3] = {{.data = A, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = sa},
                      {.data = B, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = sb},
                      {.data = C, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = sc}};
  assert_int_equal(k.fn(args, 3), 0);
  assert_memory_equal(C, want, sizeof(want));
  cgt_free(&k);
}

static void test_vnni_intrinsic_computes_u8_s8_dot_products(void **state) {
  (void)state;
  mlc_target_t host;
  mlc_target_host(&host);
  if (!mlc_target_has_feature(&host, "avx512vnni")) {
    fprintf(stderr, "skipped: the host has no avx512vnni\n");
    skip();
  }
  /* x86_vnni_u8s8s32_16x4: C[i] += sum_k u8 A[k] * s8 B[i, k], i < 16, k < 4. */
  cgt_kernel_t k;
  cgt_build(&k, "@T.prim_func\n"
                "def f(A: T.Buffer((4,), \"uint8\"), B: T.Buffer((64,), \"int8\"), C: T.Buffer((16,), \"int32\")):\n"
                "    C[T.Ramp(0, 1, 16)] = T.call_llvm_pure_intrin(\"int32x16\", \"llvm.x86.avx512.vpdpbusd.512\","
                " C[T.Ramp(0, 1, 16)], T.Broadcast(T.reinterpret(\"int32\", A[T.Ramp(0, 1, 4)]), 16),"
                " T.reinterpret(\"int32x16\", B[T.Ramp(0, 1, 64)]))\n");
  uint8_t A[4] = {200, 3, 255, 7};
  int8_t B[64];
  int32_t C[16], want[16];
  for (int i = 0; i < 64; i++) B[i] = (int8_t)(i * 37 - 128);
  for (int i = 0; i < 16; i++) {
    C[i] = want[i] = 1000 * i;
    for (int kk = 0; kk < 4; kk++) want[i] += (int32_t)A[kk] * (int32_t)B[i * 4 + kk];
  }
  int64_t sa[1] = {4}, sb[1] = {64}, sc[1] = {16};
  DLTensor args[3] = {{.data = A, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLUInt, 8, 1}, .shape = sa},
                      {.data = B, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLInt, 8, 1}, .shape = sb},
                      {.data = C, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLInt, 32, 1}, .shape = sc}};
  assert_int_equal(k.fn(args, 3), 0);
  assert_memory_equal(C, want, sizeof(want));
  cgt_free(&k);
}

static void test_intrinsic_with_wrong_operand_types_is_a_codegen_error(void **state) {
  (void)state;
  cgt_kernel_t k;
  int rc = cgt_try_build_for(&k,
                             "@T.prim_func\n"
                             "def f(B: T.Buffer((64,), \"int8\"), C: T.Buffer((16,), \"int32\")):\n"
                             "    C[T.Ramp(0, 1, 16)] = T.call_llvm_pure_intrin(\"int32x16\","
                             " \"llvm.x86.avx512.vpdpbusd.512\", C[T.Ramp(0, 1, 16)], C[T.Ramp(0, 1, 16)],"
                             " B[T.Ramp(0, 1, 64)])\n",
                             CGT_TARGET);
  assert_int_equal(rc, MLC_EUNSUPPORTED);
  assert_non_null(strstr(mlc_error_last(), "llvm.x86.avx512.vpdpbusd.512: argument 3 is <64 x i8>, the function takes <16 x i32>"));
  tir_func_free(k.f);
  rc = cgt_try_build_for(&k,
                         "@T.prim_func\n"
                         "def f(C: T.Buffer((16,), \"int32\")):\n"
                         "    C[0] = T.call_llvm_pure_intrin(\"int32\", \"llvm.no.such.thing\", C[1])\n",
                         CGT_TARGET);
  assert_int_equal(rc, MLC_EUNSUPPORTED);
  assert_non_null(strstr(mlc_error_last(), "llvm.no.such.thing is not an LLVM intrinsic"));
  tir_func_free(k.f);
}

static void test_ir_has_one_vector_load_per_ramp_aligned_as_declared(void **state) {
  (void)state;
  char *ir = raw_ir("@T.prim_func\n"
                    "def f(A: T.Buffer((1024,), \"float32\", align=64), B: T.Buffer((1024,), \"float32\")):\n"
                    "    T.func_attr({\"tir.noalias\": T.bool(True)})\n"
                    "    for i in range(64):\n"
                    "        B[T.Ramp(i * 16, 1, 16)] = A[T.Ramp(i * 16, 1, 16)] + A[T.Ramp(i * 16 + 4, 1, 16)]\n");
  /* i * 16 floats from a 64-byte aligned base: 64; + 4 floats: 16. */
  assert_non_null(strstr(ir, "load <16 x float>, "));
  assert_non_null(strstr(ir, ", align 64\n"));
  assert_non_null(strstr(ir, ", align 16\n"));
  assert_non_null(strstr(ir, "store <16 x float> "));
  assert_null(strstr(ir, "masked.gather"));
  assert_non_null(strstr(ir, " noalias align 64 %A"));
  assert_non_null(strstr(ir, " noalias %B"));
  LLVMDisposeMessage(ir);
}

static void test_fast_math_only_when_the_target_asks(void **state) {
  (void)state;
  const char *src = "@T.prim_func\n"
                    "def f(A: T.Buffer((16,), \"float32\"), B: T.Buffer((16,), \"float32\")):\n"
                    "    B[T.Ramp(0, 1, 16)] = A[T.Ramp(0, 1, 16)] * A[T.Ramp(0, 1, 16)] + B[T.Ramp(0, 1, 16)]\n";
  char *exact = raw_ir(src), *fast = raw_ir_for(src, CGT_TARGET " -fast-math");
  assert_null(strstr(exact, "unsafe-fp-math"));
  assert_non_null(strstr(fast, "\"unsafe-fp-math\"=\"true\""));
  assert_non_null(strstr(fast, "\"no-nans-fp-math\"=\"true\""));
  /* Target CPU and features go on every function. */
  assert_non_null(strstr(exact, "\"target-cpu\"="));
  assert_non_null(strstr(exact, "+avx512f"));
  LLVMDisposeMessage(exact);
  LLVMDisposeMessage(fast);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_contiguous_ramps_of_every_dtype_match_interpreter),
      cmocka_unit_test(test_bool_vectors_load_and_store_as_bytes),
      cmocka_unit_test(test_strided_and_indirect_gathers_and_scatters),
      cmocka_unit_test(test_broadcasts_and_broadcast_indices),
      cmocka_unit_test(test_vector_casts_compare_and_math),
      cmocka_unit_test(test_vector_if_then_else_with_uniform_conditions_matches_interpreter),
      cmocka_unit_test(test_vector_if_then_else_with_mixed_lanes_selects_per_lane),
      cmocka_unit_test(test_llvm_fma_intrinsic_as_the_avx512_micro_kernel_emits_it),
      cmocka_unit_test(test_vnni_intrinsic_computes_u8_s8_dot_products),
      cmocka_unit_test(test_intrinsic_with_wrong_operand_types_is_a_codegen_error),
      cmocka_unit_test(test_ir_has_one_vector_load_per_ramp_aligned_as_declared),
      cmocka_unit_test(test_fast_math_only_when_the_target_asks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
