/*
 * test_codegen_vmath.c - the CPU's inline float32 exp, exp2, log, log2 and
 * tanh (compiler/codegen/llvm_vmath.c) against glibc, and sigmoid built on
 * that exp against a double reference: every 1,000th float bit
 * pattern plus the edge values (zeros, infinities, NaN, the overflow and
 * underflow thresholds, subnormals), through JIT-compiled kernels applying
 * T.exp & co. to a float32x16 vector and to scalars. The contract
 * (docs/compiler/codegen.md, "Math functions"): within 2 ulp of glibc
 * everywhere, special values exactly as glibc, and the scalar kernel's bits
 * equal the vector kernel's. The IR of a vector exp has no libm call. exp
 * and exp2 are also swept in each of their three forms (no FMA, FMA, FMA
 * with VSCALEFPS) where this CPU can run them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>

#include "raw_ir_helpers.h"

#define SWEEP_STEP 1000u
#define VEC 16

typedef struct {
  const char *name;     /* the TIR call, T.<name> */
  float (*libm)(float); /* glibc's */
} math_fn_t;

/* sigmoid's reference: 1 / (1 + e^-x) in double, rounded once; 0 where
 * float32 e^-x overflows (x < -88.72), as the formula gives in float32
 * with libm's expf too. */
static float sigmoid_ref(float x) {
  return isinf(expf(-x)) ? 0.0f : (float)(1.0 / (1.0 + exp(-(double)x)));
}

static const math_fn_t fns[] = {{"exp", expf},   {"exp2", exp2f}, {"log", logf},
                                {"log2", log2f}, {"tanh", tanhf}, {"sigmoid", sigmoid_ref}};

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof(f));
  return f;
}

static uint32_t to_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof(u));
  return u;
}

/* Floats mapped to integers in their order (-0 and +0 both 0), so the
 * difference of two is their distance in ulps, across binades and into
 * subnormals. */
static int64_t ordered(float f) {
  int32_t i = (int32_t)to_bits(f);
  return i < 0 ? -(int64_t)(i & 0x7fffffff) : (int64_t)i;
}

static const uint32_t edges[] = {
    0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7fa00000, /* sNaN */
    0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x80800000, 0x7f7fffff, 0xff7fffff,
    0x42b17217, 0x42b17218, 0x42b20000, /* exp: the last finite, the first +inf, 89 */
    0xc2aeac4f, 0xc2aeac50,             /* exp: around ln(FLT_MIN) = -87.3365 */
    0xc2cff1b4, 0xc2cff1b5, 0xc2cff1b6, /* exp: around ln(2^-150) = -103.972 */
    0xc2d00000, 0x43000000, 0x42fe0000, 0xc2fc0000, 0xc3150000, 0xc3160000, 0xc3170000,
    /* exp2: 128, 127, -126, -149, -150, -151 */
    0x3f800000, 0xbf800000, 0x3eb17218, 0xbeb17218, 0x3f3504f3, 0x3fb504f3, /* 1, ln2/2, sqrt(2)^+-1 */
    0x2edbe6ff, 0xaedbe6ff, 0x3f7fffff, 0x3f800001,                         /* 1e-10, next to 1 */
};

/* The sweep and the edges, padded to a multiple of VEC. */
static float *inputs(size_t *n) {
  size_t sweep = (size_t)(UINT32_MAX / SWEEP_STEP) + 1, nedge = sizeof(edges) / sizeof(edges[0]);
  size_t total = (sweep + nedge + VEC - 1) / VEC * VEC;
  float *x = aligned_alloc(64, total * sizeof(float));
  assert_non_null(x);
  for (size_t i = 0; i < sweep; i++) x[i] = from_bits((uint32_t)(i * SWEEP_STEP));
  for (size_t i = 0; i < nedge; i++) x[sweep + i] = from_bits(edges[i]);
  for (size_t i = sweep + nedge; i < total; i++) x[i] = 1.0f;
  *n = total;
  return x;
}

/* B = T.<fn>(A) over n floats, VEC lanes at a time (vector) or one by one,
 * built for target; the outputs go to out. */
static void run_kernel(const char *fn, bool vector, const char *target, const float *in, float *out, size_t n) {
  char src[1024];
  if (vector)
    snprintf(src, sizeof(src),
             "@T.prim_func\n"
             "def f(A: T.Buffer((%zu,), \"float32\"), B: T.Buffer((%zu,), \"float32\")):\n"
             "    T.func_attr({\"tir.noalias\": T.bool(True)})\n"
             "    for i in range(%zu):\n"
             "        B[T.Ramp(i * %d, 1, %d)] = T.%s(A[T.Ramp(i * %d, 1, %d)])\n",
             n, n, n / VEC, VEC, VEC, fn, VEC, VEC);
  else
    snprintf(src, sizeof(src),
             "@T.prim_func\n"
             "def f(A: T.Buffer((%zu,), \"float32\"), B: T.Buffer((%zu,), \"float32\")):\n"
             "    T.func_attr({\"tir.noalias\": T.bool(True)})\n"
             "    for i in range(%zu):\n"
             "        B[i] = T.%s(A[i])\n",
             n, n, n, fn);
  cgt_kernel_t k;
  cgt_build_for(&k, src, target);
  int64_t shape = (int64_t)n;
  DLTensor args[2];
  for (int i = 0; i < 2; i++)
    args[i] = (DLTensor){.data = i == 0 ? (void *)in : (void *)out, .device = {kDLCPU, 0}, .ndim = 1,
                         .dtype = {kDLFloat, 32, 1}, .shape = &shape};
  int32_t rc = k.fn(args, 2);
  if (rc != 0) fprintf(stderr, "generated code: %s\n", mlc_last_error());
  assert_int_equal(rc, 0);
  cgt_free(&k);
}

/* got is within max_ulp of glibc's result for every input; NaN where glibc
 * gives NaN; infinities and zeros exactly where glibc gives them. Returns
 * the largest distance seen. */
static int64_t check_against_libm(const math_fn_t *m, const float *in, const float *got, size_t n, int64_t max_ulp) {
  int64_t worst = 0;
  for (size_t i = 0; i < n; i++) {
    float want = m->libm(in[i]);
    bool ok;
    if (isnan(want) || isinf(want) || want == 0) {
      ok = isnan(want) ? isnan(got[i]) : to_bits(want) == to_bits(got[i]);
    } else {
      int64_t d = isnan(got[i]) ? INT64_MAX : llabs(ordered(got[i]) - ordered(want));
      if (d > worst) worst = d;
      ok = d <= max_ulp;
    }
    if (!ok) {
      fprintf(stderr, "%s(%.9g) [0x%08x]: generated %.9g [0x%08x], glibc %.9g [0x%08x]\n", m->name, in[i],
              to_bits(in[i]), got[i], to_bits(got[i]), want, to_bits(want));
      fail();
    }
  }
  return worst;
}

static void sweep_for(const math_fn_t *m, const char *target) {
  size_t n;
  float *x = inputs(&n);
  float *vec = aligned_alloc(64, n * sizeof(float)), *scl = aligned_alloc(64, n * sizeof(float));
  assert_non_null(vec);
  assert_non_null(scl);
  run_kernel(m->name, true, target, x, vec, n);
  int64_t worst = check_against_libm(m, x, vec, n, 2);
  run_kernel(m->name, false, target, x, scl, n);
  for (size_t i = 0; i < n; i++) {
    if (to_bits(vec[i]) != to_bits(scl[i]) && !(isnan(vec[i]) && isnan(scl[i]))) {
      fprintf(stderr, "%s(%.9g): vector %.9g, scalar %.9g\n", m->name, x[i], vec[i], scl[i]);
      fail();
    }
  }
  printf("%s on %s: %zu inputs, at most %lld ulp from the reference\n", m->name, target, n, (long long)worst);
  free(x);
  free(vec);
  free(scl);
}

static void sweep_one(const math_fn_t *m) { sweep_for(m, CGT_TARGET); }

/* exp and exp2 have three forms (llvm_vmath.c): without FMA, with FMA, and
 * with FMA and AVX-512's VSCALEFPS. The host target takes one of them;
 * these take the others on CPUs that can run them. */
static const struct {
  const char *target, *needs; /* the host feature the target's code uses */
} forms[] = {
    {"llvm -mcpu=x86-64 -num-cores=2", NULL},         /* no FMA */
    {"llvm -mcpu=haswell -num-cores=2", "fma"},       /* FMA, AVX2 */
    {"llvm -mcpu=skylake-avx512 -num-cores=2", "avx512f"}, /* FMA, VSCALEFPS */
};

static void sweep_every_form(const math_fn_t *m) {
  mlc_target_t host;
  mlc_target_host(&host);
  for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
    if (forms[i].needs && !mlc_target_has_feature(&host, forms[i].needs)) {
      printf("skipped %s on %s: this CPU has no %s\n", m->name, forms[i].target, forms[i].needs);
      continue;
    }
    sweep_for(m, forms[i].target);
  }
}

static void test_exp_and_exp2_within_2_ulp_in_each_form(void **state) {
  (void)state;
  sweep_every_form(&fns[0]);
  sweep_every_form(&fns[1]);
}

/* The IR of each form uses what it should: VSCALEFPS only with AVX-512, FMA
 * only with FMA. */
static void test_exp_forms_use_the_instructions_of_their_target(void **state) {
  (void)state;
  static const char src[] = "@T.prim_func\n"
                            "def f(A: T.Buffer((64,), \"float32\"), B: T.Buffer((64,), \"float32\")):\n"
                            "    for i in range(4):\n"
                            "        B[T.Ramp(i * 16, 1, 16)] = T.exp(A[T.Ramp(i * 16, 1, 16)])\n";
  const bool fma[] = {false, true, true}, scalef[] = {false, false, true};
  for (int i = 0; i < 3; i++) {
    char *ir = raw_ir_for(src, forms[i].target);
    assert_int_equal(strstr(ir, "@llvm.fma.v16f32") != NULL, fma[i]);
    assert_int_equal(strstr(ir, "@llvm.x86.avx512.mask.scalef.ps.512") != NULL, scalef[i]);
    assert_int_equal(strstr(ir, "fptosi <16 x float>") != NULL, !scalef[i]);
    LLVMDisposeMessage(ir);
  }
}

static void test_exp_within_2_ulp_of_glibc_over_every_1000th_float(void **state) {
  (void)state;
  sweep_one(&fns[0]);
}

static void test_exp2_within_2_ulp_of_glibc_over_every_1000th_float(void **state) {
  (void)state;
  sweep_one(&fns[1]);
}

static void test_log_within_2_ulp_of_glibc_over_every_1000th_float(void **state) {
  (void)state;
  sweep_one(&fns[2]);
}

static void test_log2_within_2_ulp_of_glibc_over_every_1000th_float(void **state) {
  (void)state;
  sweep_one(&fns[3]);
}

static void test_tanh_within_2_ulp_of_glibc_over_every_1000th_float(void **state) {
  (void)state;
  sweep_one(&fns[4]);
}

/* sigmoid is 1 / (1 + exp(-x)) with the inline exp. */
static void test_sigmoid_within_2_ulp_of_double_over_every_1000th_float(void **state) {
  (void)state;
  sweep_one(&fns[5]);
}

/* Under -fast-math the backend may contract into FMA: finite results stay
 * within 2 ulp (specials are not promised there). */
static void test_exp_under_fast_math_stays_within_2_ulp_on_finite_results(void **state) {
  (void)state;
  size_t n = 1 << 16;
  float *x = aligned_alloc(64, n * sizeof(float)), *y = aligned_alloc(64, n * sizeof(float));
  assert_non_null(x);
  assert_non_null(y);
  for (size_t i = 0; i < n; i++) x[i] = -87.0f + 175.0f * (float)i / (float)n; /* [-87, 88) */
  run_kernel("exp", true, CGT_TARGET " -fast-math", x, y, n);
  check_against_libm(&fns[0], x, y, n, 2);
  free(x);
  free(y);
}

/* The unoptimised IR of a float32x16 exp and log calls neither libm nor
 * the llvm.exp / llvm.log intrinsics (which LLVM 14 scalarises). */
static void test_vector_exp_and_log_are_inline_ir(void **state) {
  (void)state;
  static const char src[] = "@T.prim_func\n"
                            "def f(A: T.Buffer((64,), \"float32\"), B: T.Buffer((64,), \"float32\")):\n"
                            "    for i in range(4):\n"
                            "        B[T.Ramp(i * 16, 1, 16)] = T.exp(A[T.Ramp(i * 16, 1, 16)])"
                            " + T.log(A[T.Ramp(i * 16, 1, 16)]) + T.sigmoid(A[T.Ramp(i * 16, 1, 16)])\n";
  char *ir = raw_ir(src);
  assert_null(strstr(ir, "@llvm.exp"));
  assert_null(strstr(ir, "@llvm.log"));
  assert_null(strstr(ir, "@expf"));
  assert_null(strstr(ir, "@logf"));
  LLVMDisposeMessage(ir);
}

/* float64 stays libm (the intrinsic, which LLVM lowers to exp calls). */
static void test_float64_exp_still_matches_interpreter(void **state) {
  (void)state;
  cgt_check_against_interp("@T.prim_func\n"
                           "def f(A: T.Buffer((32,), \"float64\"), B: T.Buffer((32,), \"float64\")):\n"
                           "    for i in range(4):\n"
                           "        B[T.Ramp(i * 8, 1, 8)] = T.exp(A[T.Ramp(i * 8, 1, 8)])\n",
                           NULL, 0, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exp_within_2_ulp_of_glibc_over_every_1000th_float),
      cmocka_unit_test(test_exp2_within_2_ulp_of_glibc_over_every_1000th_float),
      cmocka_unit_test(test_log_within_2_ulp_of_glibc_over_every_1000th_float),
      cmocka_unit_test(test_log2_within_2_ulp_of_glibc_over_every_1000th_float),
      cmocka_unit_test(test_tanh_within_2_ulp_of_glibc_over_every_1000th_float),
      cmocka_unit_test(test_sigmoid_within_2_ulp_of_double_over_every_1000th_float),
      cmocka_unit_test(test_exp_under_fast_math_stays_within_2_ulp_on_finite_results),
      cmocka_unit_test(test_exp_and_exp2_within_2_ulp_in_each_form),
      cmocka_unit_test(test_exp_forms_use_the_instructions_of_their_target),
      cmocka_unit_test(test_vector_exp_and_log_are_inline_ir),
      cmocka_unit_test(test_float64_exp_still_matches_interpreter),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
