/*
 * test_measure_faults.c - candidates that go wrong, each reported as its
 * error kind while the caller (this process) survives, reaps every child
 * and leaks no descriptor:
 *
 *  crash         a scatter whose index comes from an input and lands 2^46
 *                bytes and more past its buffer (a gather/scatter bug the
 *                interpreter would reject; the code generator compiles it),
 *                so the store faults: SIGSEGV during warm-up;
 *  timeout       a loop of 2^62 float additions (no closed form, so the
 *                compiler must keep it) under a 1 s run timeout; and a build
 *                that cannot finish in 1 ms of the job's start;
 *  wrong-result  a kernel computing A + B checked against a reference
 *                computing A - B (the `reference` option: checking a kernel
 *                against a specification is what it is for);
 *  build         a trace naming a block the workload does not have;
 *  run           a kernel whose T.assert fails on the random inputs;
 *  crash         a kernel calling _exit(3): no result, an exit status.
 *
 * These are real kernels compiled by the real pipeline; nothing is injected.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "workers/measure.h"
#include "workers/measure_internal.h"

#define OK(x) assert_int_equal((x), MLC_OK)

static const char *SCATTER =
    "@T.prim_func\n"
    "def scatter(A: T.Buffer((16,), \"int64\"), B: T.Buffer((16,), \"float32\")):\n"
    "    for i in range(16):\n"
    "        with T.block(\"S\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.reads(A[vi])\n"
    "            T.writes(B[0:16])\n"
    "            B[A[vi] * T.int64(17592186044416)] = T.float32(1)\n";

static const char *SPIN =
    "@T.prim_func\n"
    "def spin(A: T.Buffer((16,), \"float32\")):\n"
    "    for i in range(T.int64(4611686018427387904)):\n"
    "        with T.block(\"S\"):\n"
    "            vi = T.axis.spatial(T.int64(4611686018427387904), i)\n"
    "            A[vi % T.int64(16)] = A[vi % T.int64(16)] + T.float32(1)\n";

#define ELEMENTWISE(name, op)                                                        \
  "@T.prim_func\n"                                                                   \
  "def " name "(A: T.Buffer((8, 8), \"float32\"), B: T.Buffer((8, 8), \"float32\"),\n" \
  "        C: T.Buffer((8, 8), \"float32\")):\n"                                     \
  "    for i, j in T.grid(8, 8):\n"                                                  \
  "        with T.block(\"C\"):\n"                                                   \
  "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"                              \
  "            C[vi, vj] = A[vi, vj] " op " B[vi, vj]\n"

static const char *ASSERTING =
    "@T.prim_func\n"
    "def checked(A: T.Buffer((16,), \"float32\"), B: T.Buffer((16,), \"float32\")):\n"
    "    assert A[0] < T.float32(0), \"A[0] must be negative\"\n"
    "    for i in range(16):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            B[vi] = A[vi]\n";

static const char *QUITS =
    "@T.prim_func\n"
    "def quits(A: T.Buffer((4,), \"float32\")):\n"
    "    T.call_extern(\"int32\", \"_exit\", 3)\n"
    "    for i in range(4):\n"
    "        with T.block(\"A\"):\n"
    "            vi = T.axis.spatial(4, i)\n"
    "            A[vi] = T.float32(1)\n";

static tir_func_t *parse(const char *src) {
  tir_func_t *f = NULL;
  tir_parse_error_t err;
  int rc = tir_parse_func(&f, src, strlen(src), "fault.py", &err);
  if (rc != MLC_OK) fprintf(stderr, "parse: %s\n", mlc_error_last());
  OK(rc);
  return f;
}

static int open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  assert_non_null(d);
  int n = 0;
  while (readdir(d)) n++;
  closedir(d);
  return n;
}

/* Measures f (no trace unless given) in a child and checks the caller's
 * state afterwards: no child left, no descriptor leaked. */
static void measure(mlc_measure_result_t *r, const tir_func_t *f, const sch_trace_t *t,
                    const mlc_measure_options_t *o) {
  mlc_target_t target;
  mlc_target_host(&target);
  int fds = open_fds();
  OK(mlc_measure(r, f, t, &target, o));
  assert_int_equal(open_fds(), fds);
  errno = 0;
  assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
  assert_int_equal(errno, ECHILD);
  assert_int_equal(r->nrun_secs, 0);
  fprintf(stderr, "    %s: %s\n", mlc_error_kind_name(r->error), r->message);
}

static void assert_contains(const char *s, const char *needle) {
  if (!strstr(s, needle)) {
    fprintf(stderr, "message: %s\nexpected it to contain: %s\n", s, needle);
    fail();
  }
}

static mlc_measure_options_t quick(void) {
  mlc_measure_options_t o;
  mlc_measure_options_default(&o);
  o.min_repeat_ms = 1;
  return o;
}

static void segfaulting_kernel_is_a_crash_naming_signal_and_phase(void **state) {
  tir_func_t *f = parse(SCATTER);
  mlc_measure_options_t o = quick();
  mlc_measure_result_t r;
  measure(&r, f, NULL, &o);
  assert_int_equal(r.error, MLC_ERROR_KIND_CRASH);
  char want[128];
  snprintf(want, sizeof want, "killed by signal %d (%s) during warm-up", SIGSEGV, strsignal(SIGSEGV));
  assert_string_equal(r.message, want);
  assert_true(r.build_secs > 0); /* the build finished before the crash */
  tir_func_free(f);
}

static void endless_kernel_is_a_timeout_after_the_run_limit(void **state) {
  tir_func_t *f = parse(SPIN);
  mlc_measure_options_t o = quick();
  o.run_timeout_s = 1;
  mlc_measure_result_t r;
  double t0 = measure_now();
  measure(&r, f, NULL, &o);
  double wall = measure_now() - t0;
  assert_int_equal(r.error, MLC_ERROR_KIND_TIMEOUT);
  assert_string_equal(r.message, "the run did not finish within 1 s of the end of the build (during warm-up)");
  /* The run limit counts from the end of the build, and is enforced. */
  assert_true(wall >= 1.0 + r.build_secs * 0.9);
  assert_true(wall < 1.0 + r.build_secs + 2.0);
  tir_func_free(f);
}

static void build_past_its_limit_is_a_timeout_counted_from_job_start(void **state) {
  tir_func_t *f = parse(ELEMENTWISE("add", "+"));
  mlc_measure_options_t o = quick();
  o.build_timeout_s = 1e-3; /* LLVM's O3 pipeline alone takes longer */
  mlc_measure_result_t r;
  double t0 = measure_now();
  measure(&r, f, NULL, &o);
  assert_int_equal(r.error, MLC_ERROR_KIND_TIMEOUT);
  assert_string_equal(r.message, "the build did not finish within 0.001 s of the job's start");
  assert_true(measure_now() - t0 < 1.0);
  tir_func_free(f);
}

static void kernel_checked_against_another_spec_is_a_wrong_result(void **state) {
  tir_func_t *add = parse(ELEMENTWISE("add", "+")), *sub = parse(ELEMENTWISE("sub", "-"));
  mlc_measure_options_t o = quick();
  o.check_correctness = true;
  o.reference = sub;
  mlc_measure_result_t r;
  measure(&r, add, NULL, &o);
  assert_int_equal(r.error, MLC_ERROR_KIND_WRONG_RESULT);
  assert_contains(r.message, "C[0, 0] is ");
  assert_contains(r.message, "the reference gives ");
  assert_contains(r.message, "64 of 64 elements differ");
  /* The same kernel against its own workload passes. */
  o.reference = NULL;
  mlc_measure_result_t good;
  mlc_target_t target;
  mlc_target_host(&target);
  OK(mlc_measure(&good, add, NULL, &target, &o));
  assert_int_equal(good.error, MLC_ERROR_KIND_NONE);
  assert_int_equal(good.nrun_secs, 1);
  tir_func_free(add);
  tir_func_free(sub);
}

static void trace_naming_a_missing_block_is_a_build_error(void **state) {
  tir_func_t *f = parse(ELEMENTWISE("add", "+"));
  static const char *src = "b0 = sch.get_block(name=\"D\", func_name=\"main\")\n"
                           "l1, l2 = sch.get_loops(block=b0)\n"
                           "sch.parallel(loop=l1)\n";
  sch_trace_t *t = NULL;
  int rc = sch_trace_from_python(&t, src, strlen(src), "trace.py");
  if (rc != MLC_OK) fprintf(stderr, "trace: %s\n", mlc_error_last());
  OK(rc);
  mlc_measure_options_t o = quick();
  mlc_measure_result_t r;
  measure(&r, f, t, &o);
  assert_int_equal(r.error, MLC_ERROR_KIND_BUILD);
  assert_contains(r.message, "trace: ");
  assert_contains(r.message, "\"D\"");
  sch_trace_free(t);
  tir_func_free(f);
}

static void failing_assert_in_the_kernel_is_a_run_error(void **state) {
  tir_func_t *f = parse(ASSERTING);
  mlc_measure_options_t o = quick();
  mlc_measure_result_t r;
  measure(&r, f, NULL, &o);
  assert_int_equal(r.error, MLC_ERROR_KIND_RUN);
  assert_contains(r.message, "A[0] must be negative");
  tir_func_free(f);
}

/* A kernel that ends its process (an extern call to _exit) sends no result. */
static void kernel_ending_the_process_is_a_crash_without_result(void **state) {
  tir_func_t *f = parse(QUITS);
  mlc_measure_options_t o = quick();
  mlc_measure_result_t r;
  measure(&r, f, NULL, &o);
  assert_int_equal(r.error, MLC_ERROR_KIND_CRASH);
  assert_string_equal(r.message, "exited with status 3 during warm-up without a result");
  tir_func_free(f);
}

/* Every fault above, one after another, in process order: the parent is
 * still fine and measures a good kernel afterwards. */
static void caller_still_measures_after_every_fault(void **state) {
  tir_func_t *f = parse(ELEMENTWISE("add", "+"));
  mlc_measure_options_t o = quick();
  o.check_correctness = true;
  mlc_measure_result_t r;
  mlc_target_t target;
  mlc_target_host(&target);
  OK(mlc_measure(&r, f, NULL, &target, &o));
  assert_int_equal(r.error, MLC_ERROR_KIND_NONE);
  assert_int_equal(r.nrun_secs, 1);
  assert_true(r.run_secs[0] > 0);
  tir_func_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(segfaulting_kernel_is_a_crash_naming_signal_and_phase),
      cmocka_unit_test(endless_kernel_is_a_timeout_after_the_run_limit),
      cmocka_unit_test(build_past_its_limit_is_a_timeout_counted_from_job_start),
      cmocka_unit_test(kernel_checked_against_another_spec_is_a_wrong_result),
      cmocka_unit_test(trace_naming_a_missing_block_is_a_build_error),
      cmocka_unit_test(failing_assert_in_the_kernel_is_a_run_error),
      cmocka_unit_test(kernel_ending_the_process_is_a_crash_without_result),
      cmocka_unit_test(caller_still_measures_after_every_fault),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
