/*
 * test_codegen_stmt.c - statements in generated code: serial loops with
 * reductions, let, if/else, attr, allocations on the stack and the heap
 * (constant, large and symbolic sizes, inside parallel bodies), assert
 * failures with their message (freeing what was allocated), parallel loops
 * (results, more than one thread, nested parallel loops run serially, a
 * nonzero min, errors inside a task), unroll leftovers, int64 loops,
 * external calls, and the constructs the CPU generator refuses.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "raw_ir_helpers.h"
#include "runtime/runtime.h"

static void test_matmul_reduction_with_serial_loops_matches_interpreter(void **state) {
  (void)state;
  cgt_check_against_interp("@T.prim_func\n"
                           "def mm(A: T.Buffer((1024,), \"float32\"), B: T.Buffer((1024,), \"float32\"),"
                           " C: T.Buffer((1024,), \"float32\")):\n"
                           "    T.func_attr({\"tir.noalias\": T.bool(True)})\n"
                           "    for i, j in T.grid(32, 32):\n"
                           "        C[i * 32 + j] = T.float32(0)\n"
                           "        for k in range(32):\n"
                           "            C[i * 32 + j] = C[i * 32 + j] + A[i * 32 + k] * B[k * 32 + j]\n",
                           NULL, 0, 0);
}

static void test_local_accumulator_let_if_and_attr(void **state) {
  (void)state;
  cgt_check_against_interp("@T.prim_func\n"
                           "def f(A: T.Buffer((512,), \"int32\"), B: T.Buffer((16,), \"int32\")):\n"
                           "    for i in range(16):\n"
                           "        acc = T.decl_buffer((1,), \"int32\", scope=\"local\")\n"
                           "        acc[0] = 0\n"
                           "        for k in range(32):\n"
                           "            x: T.int32 = A[i * 32 + k] * 3\n"
                           "            with T.attr(0, \"pragma_note\", 1):\n"
                           "                if x % 2 == 0:\n"
                           "                    acc[0] = acc[0] + x\n"
                           "                else:\n"
                           "                    acc[0] = acc[0] - x // 2\n"
                           "        B[i] = acc[0]\n",
                           NULL, 0, 0);
}

static void test_stack_heap_and_symbolic_allocations(void **state) {
  (void)state;
  /* 256 B on the stack, 128 KiB and n * 4 bytes on the heap. */
  const char *src = "@T.prim_func\n"
                    "def f(a: T.handle, b: T.handle):\n"
                    "    n = T.int32()\n"
                    "    A = T.match_buffer(a, (n,))\n"
                    "    B = T.match_buffer(b, (n,))\n"
                    "    S = T.decl_buffer((64,), \"float32\")\n"
                    "    H = T.decl_buffer((32768,), \"float32\")\n"
                    "    V = T.decl_buffer((n,), \"float32\")\n"
                    "    for i in range(64):\n"
                    "        S[i] = T.float32(i)\n"
                    "    for i in range(32768):\n"
                    "        H[i] = T.float32(1)\n"
                    "    for i in range(n):\n"
                    "        V[i] = A[n - 1 - i] + S[i % 64] + H[i * 7 % 32768]\n"
                    "    for i in range(n):\n"
                    "        B[i] = V[i] * T.float32(2)\n";
  cgt_bind_t binds[] = {{"n", 1000}};
  cgt_check_against_interp(src, binds, 1, 0);
  binds[0].value = 7;
  cgt_check_against_interp(src, binds, 1, 0);
}

static void test_assert_failure_reports_its_message_and_frees_heap_buffers(void **state) {
  (void)state;
  cgt_kernel_t k;
  cgt_build(&k, "@T.prim_func\n"
                "def checked(A: T.Buffer((4,), \"float32\"), B: T.Buffer((4,), \"float32\")):\n"
                "    H = T.decl_buffer((40000,), \"float32\")\n"
                "    H[0] = A[0]\n"
                "    assert H[0] > T.float32(0), \"A[0] must be positive\"\n"
                "    for i in range(4):\n"
                "        B[i] = A[i] * H[0]\n");
  float A[4] = {2, 1, 1, 1}, B[4];
  int64_t shape[1] = {4};
  DLTensor args[2] = {{.data = A, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = shape},
                      {.data = B, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = shape}};
  assert_int_equal(k.fn(args, 2), 0);
  assert_true(B[0] == 4 && B[3] == 2);
  A[0] = -1;
  /* The heap buffer H is freed on the error path (ASan checks for leaks). */
  cgt_expect_error(&k, args, 2, "checked: assertion failed: A[0] must be positive");
  cgt_free(&k);
}

/* Under AddressSanitizer a failed allocation must return NULL, as libc's
 * does, rather than abort (for the test below). */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

static void test_failed_heap_allocation_is_reported(void **state) {
  (void)state;
  cgt_kernel_t k;
  cgt_build(&k, "@T.prim_func\n"
                "def big(a: T.handle):\n"
                "    n = T.int32()\n"
                "    A = T.match_buffer(a, (n,))\n"
                "    V = T.decl_buffer((n, n, n), \"float32\")\n"
                "    V[0, 0, 0] = A[0]\n"
                "    V[0, 0, 1] = A[1]\n"
                "    A[0] = V[0, 0, T.Cast(\"int32\", A[1])] + T.float32(1)\n");
  float A[2] = {1, 0};
  int64_t shape[1] = {2};
  DLTensor arg = {.data = A, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = shape};
  assert_int_equal(k.fn(&arg, 1), 0);
  assert_true(A[0] == 2);
  /* n = 600000: 8.64e17 bytes, more than any machine gives. (The load
   * at an unknown index keeps LLVM from eliding the allocation.) */
  float *big = calloc(600000, sizeof(float));
  assert_non_null(big);
  shape[0] = 600000;
  arg.data = big;
  int64_t bytes = INT64_C(600000) * 600000 * 600000 * 4;
  char want[128];
  snprintf(want, sizeof(want), "big: cannot allocate %lld bytes for buffer V", (long long)((bytes + 63) / 64 * 64));
  cgt_expect_error(&k, &arg, 1, want);
  free(big);
  cgt_free(&k);
}

/* The ids of the threads that ran each iteration, through pthread_self. */
static const char *thread_ids_src = "@T.prim_func\n"
                                    "def who(T_id: T.Buffer((64,), \"uint64\"), C: T.Buffer((64,), \"float32\")):\n"
                                    "    for i in T.parallel(64):\n"
                                    "        T_id[i] = T.call_extern(\"uint64\", \"pthread_self\")\n"
                                    "        C[i] = T.float32(i)\n";

static int distinct(const uint64_t *v, int n) {
  int d = 0;
  for (int i = 0; i < n; i++) {
    bool seen = false;
    for (int j = 0; j < i; j++) seen = seen || v[j] == v[i];
    d += !seen;
  }
  return d;
}

static void test_parallel_loop_runs_on_more_than_one_thread(void **state) {
  (void)state;
  mlc_rt_set_num_threads(2);
  cgt_kernel_t k;
  cgt_build(&k, thread_ids_src);
  uint64_t ids[64];
  float C[64];
  int64_t shape[1] = {64};
  DLTensor args[2] = {{.data = ids, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLUInt, 64, 1}, .shape = shape},
                      {.data = C, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = shape}};
  assert_int_equal(k.fn(args, 2), 0);
  for (int i = 0; i < 64; i++) assert_true(C[i] == (float)i);
  assert_int_equal(distinct(ids, 64), 2); /* stealing never empties a thread's chunk */
  /* Without work stealing, contiguous chunks: the first half on one thread,
   * the second on another. */
  mlc_rt_set_work_stealing(0);
  assert_int_equal(k.fn(args, 2), 0);
  mlc_rt_set_work_stealing(1);
  assert_true(ids[0] == ids[31] && ids[32] == ids[63] && ids[0] != ids[63]);
  cgt_free(&k);
  /* num_cores=1 runs it on the caller alone. */
  cgt_build_for(&k, thread_ids_src, "llvm -num-cores=1");
  assert_int_equal(k.fn(args, 2), 0);
  assert_int_equal(distinct(ids, 64), 1);
  cgt_free(&k);
}

static void test_parallel_loops_nested_offset_and_with_allocations_match_interpreter(void **state) {
  (void)state;
  mlc_rt_set_num_threads(2);
  cgt_check_against_interp("@T.prim_func\n"
                           "def f(a: T.handle, B: T.Buffer((8, 16), \"float32\"), c: T.handle, s: T.float32):\n"
                           "    m = T.int32()\n"
                           "    A = T.match_buffer(a, (m, 16))\n"
                           "    C = T.match_buffer(c, (m,))\n"
                           "    T.func_attr({\"tir.noalias\": T.bool(True)})\n"
                           "    for i in T.parallel(3, m):\n"
                           "        acc = T.decl_buffer((16,), \"float32\")\n"
                           "        big = T.decl_buffer((m * 1024,), \"float32\")\n"
                           "        for j in T.parallel(16):\n"
                           "            acc[j] = A[i, j] * s\n"
                           "            big[j * 64] = acc[j]\n"
                           "        C[i] = T.float32(0)\n"
                           "        for j in range(16):\n"
                           "            C[i] = C[i] + acc[j] + big[j * 64] * B[i % 8, j]\n",
                           (cgt_bind_t[]){{"m", 37}, {"s", 0.5}}, 2, 0);
}

static void test_error_inside_a_parallel_task_reaches_the_caller(void **state) {
  (void)state;
  mlc_rt_set_num_threads(2);
  cgt_kernel_t k;
  cgt_build(&k, "@T.prim_func\n"
                "def par(A: T.Buffer((64,), \"int32\"), B: T.Buffer((64,), \"int32\")):\n"
                "    for i in T.parallel(64):\n"
                "        assert A[i] != 13, \"thirteen is unlucky\"\n"
                "        B[i] = A[i] * 2\n");
  int32_t A[64], B[64];
  for (int i = 0; i < 64; i++) A[i] = i;
  int64_t shape[1] = {64};
  DLTensor args[2] = {{.data = A, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLInt, 32, 1}, .shape = shape},
                      {.data = B, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLInt, 32, 1}, .shape = shape}};
  cgt_expect_error(&k, args, 2, "par: assertion failed: thirteen is unlucky");
  A[13] = 12;
  assert_int_equal(k.fn(args, 2), 0);
  assert_int_equal(B[63], 126);
  A[50] = 13; /* in the worker's half */
  cgt_expect_error(&k, args, 2, "par: assertion failed: thirteen is unlucky");
  cgt_free(&k);
}

static void test_unroll_leftover_and_int64_loops(void **state) {
  (void)state;
  const char *src = "@T.prim_func\n"
                    "def f(a: T.handle, b: T.handle):\n"
                    "    n = T.int64()\n"
                    "    A = T.match_buffer(a, (n,))\n"
                    "    B = T.match_buffer(b, (n,))\n"
                    "    for i in T.unroll(n):\n"
                    "        B[i] = A[i] + T.float32(1)\n"
                    "    for i in T.vectorized(T.int64(3)):\n"
                    "        B[i] = B[i] * T.float32(2)\n"
                    "    for i in T.unroll(T.int64(2)):\n"
                    "        B[i + T.int64(3)] = B[i] - T.float32(1)\n";
  cgt_bind_t binds[] = {{"n", 21}};
  cgt_check_against_interp(src, binds, 1, 0);
  char *ir = raw_ir(src);
  assert_non_null(strstr(ir, "!\"llvm.loop.unroll.enable\""));
  assert_non_null(strstr(ir, "!\"llvm.loop.unroll.full\""));
  assert_non_null(strstr(ir, "phi i64"));
  LLVMDisposeMessage(ir);
}

static void test_call_extern_calls_a_c_function(void **state) {
  (void)state;
  cgt_kernel_t k;
  cgt_build(&k, "@T.prim_func\n"
                "def f(A: T.Buffer((8,), \"float64\"), B: T.Buffer((8,), \"float64\")):\n"
                "    for i in range(8):\n"
                "        B[i] = T.call_extern(\"float64\", \"hypot\", A[i], T.float64(4))\n");
  double A[8], B[8];
  for (int i = 0; i < 8; i++) A[i] = i;
  int64_t shape[1] = {8};
  DLTensor args[2] = {{.data = A, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 64, 1}, .shape = shape},
                      {.data = B, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 64, 1}, .shape = shape}};
  assert_int_equal(k.fn(args, 2), 0);
  for (int i = 0; i < 8; i++) assert_true(B[i] == hypot(i, 4));
  cgt_free(&k);
}

static void expect_codegen_error(const char *src, int code, const char *message) {
  cgt_kernel_t k;
  int rc = cgt_try_build_for(&k, src, CGT_TARGET);
  assert_int_equal(rc, code);
  if (!strstr(mlc_error_last(), message)) {
    fprintf(stderr, "error: %s\nexpected to contain: %s\n", mlc_error_last(), message);
    fail();
  }
  tir_func_free(k.f);
}

static void test_blocks_and_thread_bindings_are_refused(void **state) {
  (void)state;
  expect_codegen_error("@T.prim_func\n"
                       "def f(A: T.Buffer((4,), \"float32\")):\n"
                       "    for i in range(4):\n"
                       "        with T.block(\"B\"):\n"
                       "            vi = T.axis.spatial(4, i)\n"
                       "            A[vi] = T.float32(0)\n",
                       MLC_EUNSUPPORTED, "f: codegen: BlockRealize statements must be lowered first (mlc_lower)");
  expect_codegen_error("@T.prim_func\n"
                       "def g(A: T.Buffer((4,), \"float32\")):\n"
                       "    for tx in T.thread_binding(4, thread=\"threadIdx.x\"):\n"
                       "        A[tx] = T.float32(0)\n",
                       MLC_EUNSUPPORTED, "g: codegen: loop tx is bound to threadIdx.x, which the CPU target does not have");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matmul_reduction_with_serial_loops_matches_interpreter),
      cmocka_unit_test(test_local_accumulator_let_if_and_attr),
      cmocka_unit_test(test_stack_heap_and_symbolic_allocations),
      cmocka_unit_test(test_assert_failure_reports_its_message_and_frees_heap_buffers),
      cmocka_unit_test(test_failed_heap_allocation_is_reported),
      cmocka_unit_test(test_parallel_loop_runs_on_more_than_one_thread),
      cmocka_unit_test(test_parallel_loops_nested_offset_and_with_allocations_match_interpreter),
      cmocka_unit_test(test_error_inside_a_parallel_task_reaches_the_caller),
      cmocka_unit_test(test_unroll_leftover_and_int64_loops),
      cmocka_unit_test(test_call_extern_calls_a_c_function),
      cmocka_unit_test(test_blocks_and_thread_bindings_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
