/*
 * test_codegen_expr.c - generated code computes every scalar expression as
 * the reference interpreter does: arithmetic of every dtype (int8 wrapping,
 * truncating and flooring division of negatives, INT_MIN / -1), min/max,
 * comparisons and logic, select, casts between all dtypes, float16 and
 * bfloat16 rounding, math calls within a tolerance, if_then_else guarding
 * an out-of-bounds load, reinterpret.
 *
 * Each program is lowered TIR written by hand (flat buffers, no blocks),
 * built with mlc_codegen, run through the DLTensor ABI on random inputs and
 * compared with tir_interp_run on the same inputs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_codegen_helpers.h"

enum { N = 256 };

/* The target the helpers below build for. */
static const char *target = CGT_TARGET;

static const char *const int_dtypes[] = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"};
static const char *const float_dtypes[] = {"float16", "bfloat16", "float32", "float64"};

/* A program C_k[i] = op_k(A[i], B[i]) for the ops listed, outputs of dtype
 * out_dtype (the operands' when NULL). */
static char *binary_program(const char *dtype, const char *out_dtype, const char *const *ops, int nops) {
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  mlc_sb_printf(&sb, "@T.prim_func\ndef f(A: T.Buffer((%d,), \"%s\"), B: T.Buffer((%d,), \"%s\")", N, dtype, N, dtype);
  for (int k = 0; k < nops; k++) mlc_sb_printf(&sb, ", C%d: T.Buffer((%d,), \"%s\")", k, N, out_dtype ? out_dtype : dtype);
  mlc_sb_printf(&sb, "):\n    T.func_attr({\"tir.noalias\": T.bool(True)})\n    for i in range(%d):\n", N);
  for (int k = 0; k < nops; k++) mlc_sb_printf(&sb, "        C%d[i] = %s\n", k, ops[k]);
  return mlc_sb_take(&sb);
}

/* Input ranges: A in [alo, ahi], B in [blo, bhi]. */
typedef struct {
  double alo, ahi, blo, bhi;
} ranges_t;

/* Builds src once and runs it for each range set. */
static void check_binary_ranges(const char *src, const ranges_t *r, int nr, double rtol) {
  cgt_kernel_t k;
  cgt_build_for(&k, src, target);
  for (int i = 0; i < nr; i++) {
    cgt_args_t a;
    cgt_args_init(&a, k.f, NULL, 0, 7 + (uint64_t)i);
    cgt_fill(&a, 0, r[i].alo, r[i].ahi);
    cgt_fill(&a, 1, r[i].blo, r[i].bhi);
    cgt_run_interp(&a);
    cgt_run_jit(&k, &a);
    cgt_compare(&a, rtol);
    cgt_args_free(&a);
  }
  cgt_free(&k);
}

static void check_binary(const char *src, double alo, double ahi, double blo, double bhi, double rtol) {
  ranges_t r = {alo, ahi, blo, bhi};
  check_binary_ranges(src, &r, 1, rtol);
}

static void test_integer_arithmetic_of_every_int_dtype_matches_interpreter(void **state) {
  (void)state;
  static const char *const ops[] = {
      "A[i] + B[i]", "A[i] - B[i]", "A[i] * B[i]", "T.truncdiv(A[i], B[i])", "T.truncmod(A[i], B[i])",
      "A[i] // B[i]", "A[i] % B[i]", "T.min(A[i], B[i])", "T.max(A[i], B[i])"};
  for (size_t d = 0; d < sizeof(int_dtypes) / sizeof(int_dtypes[0]); d++) {
    char *src = binary_program(int_dtypes[d], NULL, ops, 9);
    bool sign = int_dtypes[d][0] == 'i';
    /* Signed: negative dividends and divisors of both signs (no zero). */
    static const ranges_t signed_ranges[] = {{-100, 100, 1, 17}, {-100, 100, -17, -1}};
    static const ranges_t unsigned_ranges[] = {{0, 250, 1, 17}};
    if (sign) check_binary_ranges(src, signed_ranges, 2, 0);
    else check_binary_ranges(src, unsigned_ranges, 1, 0);
    mlc_free(src);
  }
}

static void test_int8_arithmetic_wraps_around(void **state) {
  (void)state;
  static const char *const ops[] = {"A[i] + B[i]", "A[i] * B[i]", "A[i] - B[i] - B[i]"};
  char *src = binary_program("int8", NULL, ops, 3);
  static const ranges_t ranges[] = {{100, 127, 50, 120}, {-128, -100, 50, 120}};
  check_binary_ranges(src, ranges, 2, 0);
  mlc_free(src);
  src = binary_program("uint8", NULL, ops, 3);
  check_binary(src, 200, 255, 100, 255, 0);
  mlc_free(src);
}

static void test_floordiv_floormod_of_negatives_round_toward_minus_infinity(void **state) {
  (void)state;
  /* Exact expected values, not only agreement with the interpreter. */
  cgt_kernel_t k;
  cgt_build(&k, "@T.prim_func\n"
                "def f(A: T.Buffer((4,), \"int32\"), B: T.Buffer((4,), \"int32\"), Q: T.Buffer((4,), \"int32\"),"
                " R: T.Buffer((4,), \"int32\"), TQ: T.Buffer((4,), \"int32\"), TR: T.Buffer((4,), \"int32\")):\n"
                "    for i in range(4):\n"
                "        Q[i] = A[i] // B[i]\n"
                "        R[i] = A[i] % B[i]\n"
                "        TQ[i] = T.truncdiv(A[i], B[i])\n"
                "        TR[i] = T.truncmod(A[i], B[i])\n");
  int32_t A[4] = {-7, 7, -7, 7}, B[4] = {2, -2, -2, 2}, Q[4], R[4], TQ[4], TR[4];
  int64_t shape[1] = {4};
  int32_t *bufs[6] = {A, B, Q, R, TQ, TR};
  DLTensor args[6];
  for (int i = 0; i < 6; i++)
    args[i] = (DLTensor){.data = bufs[i], .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLInt, 32, 1}, .shape = shape};
  assert_int_equal(k.fn(args, 6), 0);
  int32_t wq[4] = {-4, -4, 3, 3}, wr[4] = {1, -1, -1, 1}, wtq[4] = {-3, -3, 3, 3}, wtr[4] = {-1, 1, -1, 1};
  assert_memory_equal(Q, wq, sizeof(wq));
  assert_memory_equal(R, wr, sizeof(wr));
  assert_memory_equal(TQ, wtq, sizeof(wtq));
  assert_memory_equal(TR, wtr, sizeof(wtr));
  cgt_free(&k);
}

static void test_int_min_divided_by_minus_one_wraps_instead_of_trapping(void **state) {
  (void)state;
  static const char *const ops[] = {"T.truncdiv(A[i], B[i])", "T.truncmod(A[i], B[i])", "A[i] // B[i]", "A[i] % B[i]"};
  char *src = binary_program("int32", NULL, ops, 4);
  cgt_kernel_t k;
  cgt_build(&k, src);
  cgt_args_t a;
  cgt_args_init(&a, k.f, NULL, 0, 1);
  for (int i = 0; i < N; i++) {
    cgt_set(a.in[0].data, a.in[0].dtype, (size_t)i, i % 2 ? INT32_MIN : -5 - i);
    cgt_set(a.in[1].data, a.in[1].dtype, (size_t)i, -1);
  }
  memcpy(a.dl[0].data, a.in[0].data, N * 4);
  memcpy(a.dl[1].data, a.in[1].data, N * 4);
  cgt_run_interp(&a);
  cgt_run_jit(&k, &a);
  cgt_compare(&a, 0);
  assert_int_equal(((int32_t *)a.dl[2].data)[1], INT32_MIN);
  cgt_args_free(&a);
  cgt_free(&k);
  mlc_free(src);
}

static void test_float_arithmetic_of_every_float_dtype_matches_interpreter(void **state) {
  (void)state;
  static const char *const ops[] = {"A[i] + B[i]", "A[i] - B[i]", "A[i] * B[i]", "A[i] / B[i]",
                                    "T.min(A[i], B[i])", "T.max(A[i], B[i])", "A[i] // B[i]", "A[i] % B[i]",
                                    "T.truncmod(A[i], B[i])", "A[i] * B[i] + A[i] / B[i] - B[i]"};
  for (size_t d = 0; d < sizeof(float_dtypes) / sizeof(float_dtypes[0]); d++) {
    char *src = binary_program(float_dtypes[d], NULL, ops, 10);
    /* + - * / round once, as the interpreter's do: exact agreement. */
    static const ranges_t ranges[] = {{-100, 100, 0.5, 30}, {-1e-3, 1e-3, -40, -0.25}};
    check_binary_ranges(src, ranges, 2, 0);
    mlc_free(src);
  }
}

static void test_comparisons_and_logic_give_bools(void **state) {
  (void)state;
  static const char *const iops[] = {"A[i] == B[i]", "A[i] != B[i]", "A[i] < B[i]", "A[i] <= B[i]", "A[i] > B[i]",
                                     "A[i] >= B[i]", "A[i] < B[i] and B[i] > A[i] - A[i] + A[i] // 2",
                                     "A[i] < B[i] or not A[i] == B[i] * 2"};
  static const char *const dts[] = {"int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "bfloat16",
                                    "float32", "float64"};
  for (size_t d = 0; d < sizeof(dts) / sizeof(dts[0]); d++) {
    char *src = binary_program(dts[d], "bool", iops, 8);
    check_binary(src, 0, 12, 0, 12, 0);
    mlc_free(src);
  }
}

static void test_select_and_nan_handling_of_min_max(void **state) {
  (void)state;
  cgt_kernel_t k;
  cgt_build(&k, "@T.prim_func\n"
                "def f(A: T.Buffer((4,), \"float32\"), B: T.Buffer((4,), \"float32\"), C: T.Buffer((4,), \"float32\"),"
                " D: T.Buffer((4,), \"float32\"), E: T.Buffer((4,), \"float32\"), F: T.Buffer((4,), \"bool\")):\n"
                "    for i in range(4):\n"
                "        C[i] = T.min(A[i], B[i])\n"
                "        D[i] = T.max(A[i], B[i])\n"
                "        E[i] = T.Select(A[i] < B[i], A[i] * T.float32(2), B[i])\n"
                "        F[i] = A[i] != A[i]\n");
  float A[4] = {NAN, 1, 2, -0.0f}, B[4] = {1, NAN, 3, 0}, C[4], D[4], E[4];
  uint8_t F[4];
  int64_t shape[1] = {4};
  void *bufs[6] = {A, B, C, D, E, F};
  DLTensor args[6];
  for (int i = 0; i < 6; i++)
    args[i] = (DLTensor){.data = bufs[i], .device = {kDLCPU, 0}, .ndim = 1,
                         .dtype = {i == 5 ? kDLUInt : kDLFloat, i == 5 ? 1 : 32, 1}, .shape = shape};
  assert_int_equal(k.fn(args, 6), 0);
  /* select(a < b, a, b): a NaN in a gives b, a NaN in b gives b. */
  assert_true(C[0] == 1 && isnan(C[1]) && C[2] == 2 && C[3] == 0);
  assert_true(D[0] == 1 && isnan(D[1]) && D[2] == 3 && D[3] == 0);
  assert_true(E[0] == 1 && isnan(E[1]) && E[2] == 4 && E[3] == 0);
  assert_true(F[0] == 1 && F[1] == 0 && F[2] == 0 && F[3] == 0);
  cgt_free(&k);
}

static const char *const all_dtypes[] = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                         "uint32", "uint64", "float16", "bfloat16", "float32", "float64"};
enum { NDT = sizeof(all_dtypes) / sizeof(all_dtypes[0]) };

/* One program: A_s of every dtype s, C_t[s * N + i] = Cast(t, A_s[i]). */
static char *cast_program(void) {
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  mlc_sb_printf(&sb, "@T.prim_func\ndef f(");
  for (int s = 0; s < NDT; s++) mlc_sb_printf(&sb, "%sA%d: T.Buffer((%d,), \"%s\")", s ? ", " : "", s, N, all_dtypes[s]);
  for (int t = 0; t < NDT; t++) mlc_sb_printf(&sb, ", C%d: T.Buffer((%d,), \"%s\")", t, N * NDT, all_dtypes[t]);
  mlc_sb_printf(&sb, "):\n    for i in range(%d):\n", N);
  for (int s = 0; s < NDT; s++)
    for (int t = 0; t < NDT; t++)
      mlc_sb_printf(&sb, "        C%d[%d + i] = T.Cast(\"%s\", A%d[i])\n", t, s * N, all_dtypes[t], s);
  return mlc_sb_take(&sb);
}

static void test_casts_between_all_dtypes_match_interpreter(void **state) {
  (void)state;
  char *src = cast_program();
  cgt_kernel_t k;
  cgt_build_for(&k, src, target);
  /* Values every target holds (float -> int of others is undefined). */
  static const double ranges[][2] = {{0, 120}, {0.0, 127.9}, {0, 1}};
  for (int r = 0; r < 3; r++) {
    cgt_args_t a;
    cgt_args_init(&a, k.f, NULL, 0, 3 + (uint64_t)r);
    for (int s = 0; s < NDT; s++) cgt_fill(&a, s, ranges[r][0], ranges[r][1]);
    cgt_run_interp(&a);
    cgt_run_jit(&k, &a);
    cgt_compare(&a, 0);
    cgt_args_free(&a);
  }
  cgt_free(&k);
  mlc_free(src);
}

/* Without AVX512-FP16 (and without F16C for x86-64) LLVM converts half
 * precision through float or runtime helpers: results must not change. */
static void test_half_precision_on_cpus_without_native_half_matches_interpreter(void **state) {
  static const char *const targets[] = {"llvm -mcpu=skylake-avx512 -num-cores=2", "llvm -mcpu=x86-64 -num-cores=2"};
  static const char *const ops[] = {"A[i] + B[i]", "A[i] * B[i] - A[i]", "A[i] / B[i]", "A[i] // B[i]",
                                    "A[i] % B[i]", "T.sqrt(B[i])", "T.exp(A[i] / B[i])", "T.max(A[i], B[i])"};
  (void)state;
  for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); t++) {
    target = targets[t];
    test_casts_between_all_dtypes_match_interpreter(NULL);
    for (int d = 0; d < 2; d++) {
      char *src = binary_program(float_dtypes[d], NULL, ops, 8);
      check_binary(src, -100, 100, 0.5, 30, 1e-2);
      mlc_free(src);
    }
  }
  target = CGT_TARGET;
}

static void test_narrowing_int_casts_and_large_float_rounding(void **state) {
  (void)state;
  static const char *const ops[] = {"T.Cast(\"int32\", T.Cast(\"int8\", A[i] * B[i]))",
                                    "T.Cast(\"int32\", T.Cast(\"uint16\", A[i] * B[i] * B[i]))",
                                    "T.Cast(\"int32\", T.Cast(\"float16\", A[i] * B[i] * B[i]))",
                                    "T.Cast(\"int32\", T.Cast(\"bfloat16\", A[i] * B[i] * B[i]))"};
  char *src = binary_program("int32", NULL, ops, 4);
  check_binary(src, -300, 300, -10, 10, 0);
  mlc_free(src);
  /* float64 -> float16/bfloat16 rounds once (no double rounding through float32). */
  static const char *const fops[] = {"T.Cast(\"float64\", T.Cast(\"bfloat16\", A[i] * B[i]))",
                                     "T.Cast(\"float64\", T.Cast(\"float16\", A[i] * B[i]))",
                                     "T.Cast(\"float64\", T.Cast(\"float32\", A[i] / B[i]))"};
  src = binary_program("float64", NULL, fops, 3);
  check_binary(src, -300, 300, 0.001, 3, 0);
  mlc_free(src);
}

static void test_math_calls_within_an_ulp(void **state) {
  (void)state;
  static const char *const ops[] = {"T.exp(A[i])", "T.exp2(A[i])", "T.exp10(A[i])", "T.log(B[i])",
                                    "T.log2(B[i])", "T.log10(B[i])", "T.log1p(B[i])", "T.sqrt(B[i])",
                                    "T.rsqrt(B[i])", "T.tanh(A[i])", "T.sigmoid(A[i])", "T.fabs(A[i])",
                                    "T.erf(A[i])", "T.pow(B[i], A[i])"};
  static const char *const rounding[] = {"T.round(A[i] * B[i])", "T.nearbyint(A[i] * B[i])", "T.floor(A[i])",
                                         "T.ceil(A[i])", "T.trunc(A[i])", "T.sin(A[i])", "T.cos(A[i])",
                                         "T.abs(A[i])"};
  static const double tol[] = {1e-2, 1e-2, 1e-6, 1e-12}; /* float16, bfloat16, float32, float64 */
  const char *all[22];
  memcpy(all, ops, sizeof(ops));
  memcpy(all + 14, rounding, sizeof(rounding));
  for (size_t d = 0; d < sizeof(float_dtypes) / sizeof(float_dtypes[0]); d++) {
    char *src = binary_program(float_dtypes[d], NULL, all, 22);
    check_binary(src, -4, 4, 0.1, 20, tol[d]);
    mlc_free(src);
  }
}

static void test_round_is_half_to_even_and_isnan_and_int_abs(void **state) {
  (void)state;
  cgt_kernel_t k;
  cgt_build(&k, "@T.prim_func\n"
                "def f(A: T.Buffer((4,), \"float32\"), R: T.Buffer((4,), \"float32\"), N: T.Buffer((4,), \"bool\"),"
                " I: T.Buffer((4,), \"int32\"), J: T.Buffer((4,), \"int32\")):\n"
                "    for i in range(4):\n"
                "        R[i] = T.round(A[i])\n"
                "        N[i] = T.isnan(A[i])\n"
                "        J[i] = T.abs(I[i])\n");
  float A[4] = {0.5f, 1.5f, -2.5f, NAN}, R[4];
  uint8_t Nb[4];
  int32_t I[4] = {-3, 4, INT32_MIN, 0}, J[4];
  int64_t shape[1] = {4};
  DLTensor args[5] = {
      {.data = A, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = shape},
      {.data = R, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = shape},
      {.data = Nb, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLUInt, 1, 1}, .shape = shape},
      {.data = I, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLInt, 32, 1}, .shape = shape},
      {.data = J, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLInt, 32, 1}, .shape = shape}};
  assert_int_equal(k.fn(args, 5), 0);
  assert_true(R[0] == 0.0f && R[1] == 2.0f && R[2] == -2.0f && isnan(R[3]));
  assert_true(Nb[0] == 0 && Nb[1] == 0 && Nb[2] == 0 && Nb[3] == 1);
  assert_true(J[0] == 3 && J[1] == 4 && J[2] == INT32_MIN && J[3] == 0);
  cgt_free(&k);
}

static void test_if_then_else_evaluates_only_the_taken_side(void **state) {
  (void)state;
  /* The padding pattern: the load of A[i - 2] is out of bounds when the
   * condition is false; only the taken side may run. */
  cgt_check_against_interp("@T.prim_func\n"
                           "def f(A: T.Buffer((64,), \"float32\"), B: T.Buffer((68,), \"float32\")):\n"
                           "    for i in range(68):\n"
                           "        B[i] = T.if_then_else(2 <= i and i < 66, A[i - 2], T.float32(0))\n",
                           NULL, 0, 0);
}

static void test_reinterpret_and_let_values(void **state) {
  (void)state;
  cgt_check_against_interp("@T.prim_func\n"
                           "def f(A: T.Buffer((64,), \"float32\"), B: T.Buffer((64,), \"int32\"),"
                           " C: T.Buffer((64,), \"float32\")):\n"
                           "    for i in range(64):\n"
                           "        x: T.int32 = T.reinterpret(\"int32\", A[i])\n"
                           "        B[i] = x\n"
                           "        C[i] = T.reinterpret(\"float32\", x + 1)\n",
                           NULL, 0, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_integer_arithmetic_of_every_int_dtype_matches_interpreter),
      cmocka_unit_test(test_int8_arithmetic_wraps_around),
      cmocka_unit_test(test_floordiv_floormod_of_negatives_round_toward_minus_infinity),
      cmocka_unit_test(test_int_min_divided_by_minus_one_wraps_instead_of_trapping),
      cmocka_unit_test(test_float_arithmetic_of_every_float_dtype_matches_interpreter),
      cmocka_unit_test(test_comparisons_and_logic_give_bools),
      cmocka_unit_test(test_select_and_nan_handling_of_min_max),
      cmocka_unit_test(test_casts_between_all_dtypes_match_interpreter),
      cmocka_unit_test(test_half_precision_on_cpus_without_native_half_matches_interpreter),
      cmocka_unit_test(test_narrowing_int_casts_and_large_float_rounding),
      cmocka_unit_test(test_math_calls_within_an_ulp),
      cmocka_unit_test(test_round_is_half_to_even_and_isnan_and_int_abs),
      cmocka_unit_test(test_if_then_else_evaluates_only_the_taken_side),
      cmocka_unit_test(test_reinterpret_and_let_values),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
