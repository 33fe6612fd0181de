/*
 * test_codegen_abi.c - the DLTensor ABI of generated functions: a correct
 * call, and each bad argument rejected with its exact message through
 * mlc_last_error(): num_args, NULL args, ndim, dtype (named and unnamed),
 * shape, device, NULL data, strides (compact accepted, others refused),
 * alignment, byte_offset (honoured; bound to a symbolic elem_offset),
 * symbolic shapes bound from the first tensor and checked after, shapes
 * that are expressions, scalar parameters as 0-d tensors, and declared
 * symbolic strides bound from the tensor.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_codegen_helpers.h"

static DLTensor tensor(void *data, DLDataType dt, int ndim, int64_t *shape) {
  return (DLTensor){.data = data, .device = {kDLCPU, 0}, .ndim = ndim, .dtype = dt, .shape = shape};
}

static const DLDataType F32 = {kDLFloat, 32, 1};

static const char *gmm_src = "@T.prim_func\n"
                             "def gmm(A: T.Buffer((4, 8), \"float32\"), B: T.Buffer((8, 3), \"float32\"),"
                             " C: T.Buffer((4, 3), \"float32\")):\n"
                             "    T.func_attr({\"tir.noalias\": T.bool(True)})\n"
                             "    for i, j in T.grid(4, 3):\n"
                             "        C[i, j] = T.float32(0)\n"
                             "        for k in range(8):\n"
                             "            C[i, j] = C[i, j] + A[i, k] * B[k, j]\n";

typedef struct {
  cgt_kernel_t k;
  float A[4 * 8 + 16], B[8 * 3], C[4 * 3];
  int64_t sa[2], sb[2], sc[2];
  DLTensor args[3];
} gmm_t;

static void gmm_setup(gmm_t *g) {
  cgt_build(&g->k, gmm_src);
  for (int i = 0; i < 4 * 8 + 16; i++) g->A[i] = (float)(i % 5);
  for (int i = 0; i < 8 * 3; i++) g->B[i] = (float)(i % 3) - 1;
  g->sa[0] = 4, g->sa[1] = 8, g->sb[0] = 8, g->sb[1] = 3, g->sc[0] = 4, g->sc[1] = 3;
  g->args[0] = tensor(g->A, F32, 2, g->sa);
  g->args[1] = tensor(g->B, F32, 2, g->sb);
  g->args[2] = tensor(g->C, F32, 2, g->sc);
}

static float gmm_expected(const float *A, const float *B, int i, int j) {
  float s = 0;
  for (int k = 0; k < 8; k++) s += A[i * 8 + k] * B[k * 3 + j];
  return s;
}

static void test_good_arguments_run_and_give_the_product(void **state) {
  (void)state;
  gmm_t g;
  gmm_setup(&g);
  assert_int_equal(g.k.fn(g.args, 3), 0);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 3; j++) assert_true(g.C[i * 3 + j] == gmm_expected(g.A, g.B, i, j));
  cgt_free(&g.k);
}

static void test_bad_counts_and_ranks_are_reported(void **state) {
  (void)state;
  gmm_t g;
  gmm_setup(&g);
  cgt_expect_error(&g.k, g.args, 2, "gmm: num_args is 2, expected 3");
  cgt_expect_error(&g.k, NULL, 3, "gmm: args is NULL");
  g.args[1].ndim = 1;
  cgt_expect_error(&g.k, g.args, 3, "gmm: argument 1 (B): ndim is 1, expected 2");
  cgt_free(&g.k);
}

static void test_bad_dtypes_are_named(void **state) {
  (void)state;
  gmm_t g;
  gmm_setup(&g);
  g.args[1].dtype = (DLDataType){kDLInt, 32, 1};
  cgt_expect_error(&g.k, g.args, 3, "gmm: argument 1 (B): dtype is int32, expected float32");
  g.args[1].dtype = (DLDataType){kDLFloat, 16, 1};
  cgt_expect_error(&g.k, g.args, 3, "gmm: argument 1 (B): dtype is float16, expected float32");
  g.args[1].dtype = (DLDataType){kDLBfloat, 16, 1};
  cgt_expect_error(&g.k, g.args, 3, "gmm: argument 1 (B): dtype is bfloat16, expected float32");
  g.args[1].dtype = (DLDataType){kDLFloat, 32, 4};
  cgt_expect_error(&g.k, g.args, 3, "gmm: argument 1 (B): dtype is (code 2, bits 32, lanes 4), expected float32");
  cgt_free(&g.k);
}

static void test_bad_shapes_devices_and_data_are_reported(void **state) {
  (void)state;
  gmm_t g;
  gmm_setup(&g);
  g.sb[0] = 7;
  cgt_expect_error(&g.k, g.args, 3, "gmm: argument 1 (B): shape[0] is 7, expected 8");
  g.sb[0] = 8;
  g.sc[1] = 1024;
  cgt_expect_error(&g.k, g.args, 3, "gmm: argument 2 (C): shape[1] is 1024, expected 3");
  g.sc[1] = 3;
  g.args[2].device.device_type = kDLCUDA;
  cgt_expect_error(&g.k, g.args, 3, "gmm: argument 2 (C): device_type is 2, expected 1 (CPU)");
  g.args[2].device.device_type = kDLCPU;
  g.args[0].data = NULL;
  cgt_expect_error(&g.k, g.args, 3, "gmm: argument 0 (A): data is NULL");
  g.args[0].data = g.A;
  g.args[1].shape = NULL;
  cgt_expect_error(&g.k, g.args, 3, "gmm: argument 1 (B): shape is NULL");
  g.args[1].shape = g.sb;
  assert_int_equal(g.k.fn(g.args, 3), 0);
  cgt_free(&g.k);
}

static void test_compact_strides_pass_and_others_are_refused(void **state) {
  (void)state;
  gmm_t g;
  gmm_setup(&g);
  int64_t compact[2] = {3, 1}, padded[2] = {4, 1};
  g.args[2].strides = compact;
  assert_int_equal(g.k.fn(g.args, 3), 0);
  g.args[2].strides = padded;
  cgt_expect_error(&g.k, g.args, 3, "gmm: argument 2 (C): strides[0] is 4, expected 3 (compact row-major)");
  cgt_free(&g.k);
  /* A dimension of extent 1 may have any stride. */
  cgt_kernel_t k;
  cgt_build(&k, "@T.prim_func\n"
                "def row(A: T.Buffer((1, 8), \"float32\"), B: T.Buffer((8,), \"float32\")):\n"
                "    for k in range(8):\n"
                "        B[k] = A[0, k]\n");
  int64_t s18[2] = {1, 8}, s8[1] = {8}, odd[2] = {99, 1};
  DLTensor args[2] = {tensor(g.A, F32, 2, s18), tensor(g.B, F32, 1, s8)};
  args[0].strides = odd;
  assert_int_equal(k.fn(args, 2), 0);
  assert_memory_equal(g.B, g.A, 8 * sizeof(float));
  cgt_free(&k);
}

static void test_byte_offset_is_honoured(void **state) {
  (void)state;
  gmm_t g;
  gmm_setup(&g);
  g.args[0].byte_offset = 16 * sizeof(float);
  assert_int_equal(g.k.fn(g.args, 3), 0);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 3; j++) assert_true(g.C[i * 3 + j] == gmm_expected(g.A + 16, g.B, i, j));
  cgt_free(&g.k);
}

static void test_declared_alignment_is_checked(void **state) {
  (void)state;
  cgt_kernel_t k;
  cgt_build(&k, "@T.prim_func\n"
                "def al(A: T.Buffer((16,), \"float32\", align=64), B: T.Buffer((16,), \"float32\")):\n"
                "    for i in range(16):\n"
                "        B[i] = A[i]\n");
  _Alignas(64) float A[32];
  float B[16];
  int64_t shape[1] = {16};
  DLTensor args[2] = {tensor(A, F32, 1, shape), tensor(B, F32, 1, shape)};
  for (int i = 0; i < 32; i++) A[i] = (float)i;
  assert_int_equal(k.fn(args, 2), 0);
  args[0].byte_offset = 4;
  assert_int_not_equal(k.fn(args, 2), 0);
  char want[128];
  snprintf(want, sizeof(want), "al: argument 0 (A): data (%p) is not 64-byte aligned", (void *)(A + 1));
  assert_string_equal(mlc_last_error(), want);
  args[0].byte_offset = 64;
  assert_int_equal(k.fn(args, 2), 0);
  assert_true(B[0] == 16 && B[15] == 31);
  cgt_free(&k);
}

static void test_symbolic_shapes_bind_from_the_first_tensor_and_are_checked_after(void **state) {
  (void)state;
  cgt_kernel_t k;
  cgt_build(&k, "@T.prim_func\n"
                "def sym(a: T.handle, b: T.handle, c: T.handle):\n"
                "    n = T.int32()\n"
                "    A = T.match_buffer(a, (n, 2))\n"
                "    B = T.match_buffer(b, (n,))\n"
                "    C = T.match_buffer(c, (n * 2,))\n"
                "    for i in range(n):\n"
                "        B[i] = A[i, 0] + A[i, 1]\n"
                "        C[i * 2] = A[i, 1]\n"
                "        C[i * 2 + 1] = A[i, 0]\n");
  float A[10], B[5], C[10];
  for (int i = 0; i < 10; i++) A[i] = (float)i;
  int64_t sa[2] = {5, 2}, sb[1] = {5}, sc[1] = {10};
  DLTensor args[3] = {tensor(A, F32, 2, sa), tensor(B, F32, 1, sb), tensor(C, F32, 1, sc)};
  assert_int_equal(k.fn(args, 3), 0);
  for (int i = 0; i < 5; i++) assert_true(B[i] == 4 * i + 1 && C[2 * i] == 2 * i + 1);
  sb[0] = 6;
  cgt_expect_error(&k, args, 3, "sym: argument 1 (B): shape[0] is 6, expected 5 (n)");
  sb[0] = 5;
  sc[0] = 7;
  cgt_expect_error(&k, args, 3, "sym: argument 2 (C): shape[0] is 7, expected 10 (n * 2)");
  sc[0] = 10;
  sa[0] = INT64_C(1) << 40;
  cgt_expect_error(&k, args, 3, "sym: argument 0 (A): shape[0] is 1099511627776, out of range for n (int32)");
  sa[0] = -1;
  cgt_expect_error(&k, args, 3, "sym: argument 0 (A): shape[0] is -1, out of range for n (int32)");
  /* A smaller n works on the same memory. */
  sa[0] = sb[0] = 2;
  sc[0] = 4;
  assert_int_equal(k.fn(args, 3), 0);
  cgt_free(&k);
}

static void test_scalar_parameters_are_zero_d_tensors(void **state) {
  (void)state;
  cgt_kernel_t k;
  cgt_build(&k, "@T.prim_func\n"
                "def sc(A: T.Buffer((n,), \"float32\"), s: T.float32, n: T.int32, flag: T.bool):\n"
                "    for i in range(n):\n"
                "        A[i] = T.Select(flag, s * T.Cast(\"float32\", i), s)\n");
  float A[6], s = 1.5f;
  int32_t n = 6;
  uint8_t flag = 1;
  int64_t shape[1] = {6};
  DLTensor args[4] = {tensor(A, F32, 1, shape), tensor(&s, F32, 0, NULL), tensor(&n, (DLDataType){kDLInt, 32, 1}, 0, NULL),
                      tensor(&flag, (DLDataType){kDLUInt, 1, 1}, 0, NULL)};
  assert_int_equal(k.fn(args, 4), 0);
  for (int i = 0; i < 6; i++) assert_true(A[i] == 1.5f * (float)i);
  flag = 0;
  args[3].dtype = (DLDataType){6, 8, 1}; /* kDLBool of DLPack >= 0.8 */
  assert_int_equal(k.fn(args, 4), 0);
  assert_true(A[5] == 1.5f);
  n = 5;
  cgt_expect_error(&k, args, 4, "sc: argument 0 (A): shape[0] is 6, expected 5 (n)");
  n = 6;
  args[1].ndim = 1;
  args[1].shape = shape;
  cgt_expect_error(&k, args, 4, "sc: argument 1 (s): ndim is 1, expected 0 (a scalar)");
  args[1] = tensor(&s, (DLDataType){kDLFloat, 64, 1}, 0, NULL);
  cgt_expect_error(&k, args, 4, "sc: argument 1 (s): dtype is float64, expected float32");
  args[1] = tensor(NULL, F32, 0, NULL);
  cgt_expect_error(&k, args, 4, "sc: argument 1 (s): data is NULL");
  cgt_free(&k);
}

static void test_declared_symbolic_strides_and_elem_offset_bind_from_the_tensor(void **state) {
  (void)state;
  cgt_kernel_t k;
  cgt_build(&k, "@T.prim_func\n"
                "def view(a: T.handle, B: T.Buffer((4, 4), \"float32\")):\n"
                "    s0 = T.int32()\n"
                "    off = T.int32()\n"
                "    A = T.match_buffer(a, (4, 4), strides=(s0, 1), elem_offset=off)\n"
                "    for i, j in T.grid(4, 4):\n"
                "        B[i, j] = A[i, j]\n");
  float A[64], B[16];
  for (int i = 0; i < 64; i++) A[i] = (float)i;
  int64_t shape[2] = {4, 4}, strides[2] = {8, 1};
  DLTensor args[2] = {tensor(A, F32, 2, shape), tensor(B, F32, 2, shape)};
  /* No strides: compact, s0 = 4; no offset: off = 0. */
  assert_int_equal(k.fn(args, 2), 0);
  for (int i = 0; i < 16; i++) assert_true(B[i] == (float)i);
  /* A 4x4 window at row 1, column 2 of an 8-wide matrix. */
  args[0].strides = strides;
  args[0].byte_offset = (8 + 2) * sizeof(float);
  assert_int_equal(k.fn(args, 2), 0);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) assert_true(B[i * 4 + j] == (float)((i + 1) * 8 + j + 2));
  args[0].byte_offset = 6;
  cgt_expect_error(&k, args, 2, "view: argument 0 (A): byte_offset is 6, not a multiple of the element size 4");
  strides[1] = 2;
  args[0].byte_offset = 0;
  cgt_expect_error(&k, args, 2, "view: argument 0 (A): strides[1] is 2, expected 1");
  cgt_free(&k);
}

static void test_two_functions_in_one_module_each_check_their_arguments(void **state) {
  (void)state;
  const char *srcs[2] = {"@T.prim_func\n"
                         "def scale(A: T.Buffer((4,), \"float32\"), B: T.Buffer((4,), \"float32\")):\n"
                         "    for i in range(4):\n"
                         "        B[i] = A[i] * T.float32(2)\n",
                         "@T.prim_func\n"
                         "def shift(A: T.Buffer((4,), \"int32\"), B: T.Buffer((4,), \"int32\")):\n"
                         "    for i in range(4):\n"
                         "        B[i] = A[i] + 1\n"};
  tir_func_t *f[2];
  tir_parse_error_t perr;
  for (int i = 0; i < 2; i++) assert_int_equal(tir_parse_func(&f[i], srcs[i], strlen(srcs[i]), "<test>", &perr), MLC_OK);
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, CGT_TARGET), MLC_OK);
  mlc_module_t *m = NULL;
  assert_int_equal(mlc_codegen(&m, f, 2, &t), MLC_OK);
  mlc_jit_t *jit = NULL;
  assert_int_equal(mlc_jit_load(&jit, m), MLC_OK);
  mlc_packed_fn_t scale = (mlc_packed_fn_t)mlc_jit_lookup(jit, "scale");
  mlc_packed_fn_t shift = (mlc_packed_fn_t)mlc_jit_lookup(jit, "shift");
  assert_non_null(scale);
  assert_non_null(shift);
  float fa[4] = {1, 2, 3, 4}, fb[4];
  int32_t ia[4] = {1, 2, 3, 4}, ib[4];
  int64_t shape[1] = {4};
  DLTensor fargs[2] = {tensor(fa, F32, 1, shape), tensor(fb, F32, 1, shape)};
  DLTensor iargs[2] = {tensor(ia, (DLDataType){kDLInt, 32, 1}, 1, shape), tensor(ib, (DLDataType){kDLInt, 32, 1}, 1, shape)};
  assert_int_equal(scale(fargs, 2), 0);
  assert_int_equal(shift(iargs, 2), 0);
  assert_true(fb[3] == 8 && ib[3] == 5);
  assert_int_not_equal(shift(fargs, 2), 0);
  assert_string_equal(mlc_last_error(), "shift: argument 0 (A): dtype is float32, expected int32");
  mlc_jit_free(jit);
  tir_func_free(f[0]);
  tir_func_free(f[1]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_good_arguments_run_and_give_the_product),
      cmocka_unit_test(test_bad_counts_and_ranks_are_reported),
      cmocka_unit_test(test_bad_dtypes_are_named),
      cmocka_unit_test(test_bad_shapes_devices_and_data_are_reported),
      cmocka_unit_test(test_compact_strides_pass_and_others_are_refused),
      cmocka_unit_test(test_byte_offset_is_honoured),
      cmocka_unit_test(test_declared_alignment_is_checked),
      cmocka_unit_test(test_symbolic_shapes_bind_from_the_first_tensor_and_are_checked_after),
      cmocka_unit_test(test_scalar_parameters_are_zero_d_tensors),
      cmocka_unit_test(test_declared_symbolic_strides_and_elem_offset_bind_from_the_tensor),
      cmocka_unit_test(test_two_functions_in_one_module_each_check_their_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
