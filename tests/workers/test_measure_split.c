/*
 * test_measure_split.c - the measurement in two halves (mlc_measure_build
 * writes a candidate's object file, mlc_measure_prebuilt loads and times
 * it) gives what mlc_measure gives, candidate by candidate: the same error
 * kind and the same message for
 *
 *  a good candidate  GMM-64 tiled, parallel and vectorized: measured, and
 *                    checked against the interpreter (parallel loops call the
 *                    runtime, so the object's symbols resolve as a module's);
 *  build             a trace naming a block the workload does not have;
 *  crash             a scatter that stores 2^46 bytes past its buffer
 *                    (SIGSEGV during warm-up, in the run half);
 *  timeout           a build that cannot finish within 1 ms, and a loop of
 *                    2^62 additions under a 1 s run timeout;
 *
 * plus what only the halves can meet: a missing or corrupt object file, and
 * the arguments they refuse. The kernels are those of test_measure_faults.c;
 * nothing is injected. Every call leaves no child and no descriptor behind.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workers/measure.h"
#include "workers/measure_internal.h"

#define OK(x) assert_int_equal((x), MLC_OK)

static const char *GMM_TRACE =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "l4, l5 = sch.split(loop=l1, factors=[None, 16], preserve_unit_iters=True)\n"
    "l6, l7 = sch.split(loop=l2, factors=[None, 16], preserve_unit_iters=True)\n"
    "sch.reorder(l4, l6, l5, l3, l7)\n"
    "sch.parallel(loop=l4)\n"
    "sch.vectorize(loop=l7)\n";

static const char *MISSING_BLOCK_TRACE =
    "b0 = sch.get_block(name=\"D\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "sch.parallel(loop=l1)\n";

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

/* The objects' directory, made per test. */
typedef struct {
  char dir[256];
  char obj[300];
} fixture_t;

static int setup(void **state) {
  fixture_t *fx = calloc(1, sizeof *fx);
  if (!fx) return -1;
  const char *tmp = getenv("TMPDIR");
  snprintf(fx->dir, sizeof fx->dir, "%s/mlc-split-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(fx->dir)) return -1;
  snprintf(fx->obj, sizeof fx->obj, "%s/cand.o", fx->dir);
  *state = fx;
  return 0;
}

static int teardown(void **state) {
  fixture_t *fx = *state;
  unlink(fx->obj);
  int rc = rmdir(fx->dir); /* fails if a test left anything else behind */
  free(fx);
  return rc;
}

static tir_func_t *gmm(int64_t n) {
  tir_func_t *f = NULL;
  int64_t shape[3] = {n, n, n};
  tir_dtype_t none = {0, 0, 0};
  OK(tir_workload_build(&f, "GMM", shape, 3, tir_dt_FLOAT32(), none));
  return f;
}

static tir_func_t *parse(const char *src) {
  tir_func_t *f = NULL;
  tir_parse_error_t err;
  int rc = tir_parse_func(&f, src, strlen(src), "split.py", &err);
  if (rc != MLC_OK) fprintf(stderr, "parse: %s\n", mlc_error_last());
  OK(rc);
  return f;
}

static sch_trace_t *python_trace(const char *src) {
  sch_trace_t *t = NULL;
  int rc = sch_trace_from_python(&t, src, strlen(src), "trace.py");
  if (rc != MLC_OK) fprintf(stderr, "trace: %s\n", mlc_error_last());
  OK(rc);
  return t;
}

static mlc_measure_options_t quick(void) {
  mlc_measure_options_t o;
  mlc_measure_options_default(&o);
  o.min_repeat_ms = 1;
  return o;
}

static int open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  assert_non_null(d);
  int n = 0;
  while (readdir(d)) n++;
  closedir(d);
  return n;
}

static void assert_no_children(void) {
  errno = 0;
  assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
  assert_int_equal(errno, ECHILD);
}

static bool exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static void show(const char *what, const mlc_measure_result_t *r) {
  if (r->error == MLC_ERROR_KIND_NONE) fprintf(stderr, "    %s: ok, build %.3f s, %d runs\n", what, r->build_secs, r->nrun_secs);
  else fprintf(stderr, "    %s: %s: %s\n", what, mlc_error_kind_name(r->error), r->message);
}

/* Measures (f, t) whole and in halves; *built is the first half's result,
 * *split the second's. Checks that the halves left no child, no descriptor,
 * and an object file exactly when the build succeeded. */
static void measure_both(mlc_measure_result_t *whole, mlc_measure_result_t *built, mlc_measure_result_t *split,
                         const fixture_t *fx, const tir_func_t *f, const sch_trace_t *t,
                         const mlc_measure_options_t *o) {
  mlc_target_t target;
  mlc_target_host(&target);
  OK(mlc_measure(whole, f, t, &target, o));
  int fds = open_fds();
  OK(mlc_measure_build(built, fx->obj, f, t, &target, o));
  assert_int_equal(exists(fx->obj), built->error == MLC_ERROR_KIND_NONE);
  OK(mlc_measure_prebuilt(split, built, fx->obj, f, o));
  assert_int_equal(open_fds(), fds);
  assert_no_children();
  show("mlc_measure", whole);
  show("build", built);
  show("prebuilt", split);
}

/* The same error kind and message, and no times unless measured. */
static void assert_same_outcome(const mlc_measure_result_t *whole, const mlc_measure_result_t *split) {
  assert_int_equal(split->error, whole->error);
  assert_string_equal(split->message, whole->message);
  if (whole->error != MLC_ERROR_KIND_NONE) assert_int_equal(split->nrun_secs, 0);
}

/* ------------------------------------------------------------------------ */

static void good_gmm64_is_measured_and_checked_as_by_measure(void **state) {
  fixture_t *fx = *state;
  tir_func_t *f = gmm(64);
  sch_trace_t *t = python_trace(GMM_TRACE);
  mlc_measure_options_t o = quick();
  o.repeat = 2;
  o.check_correctness = true;
  mlc_measure_result_t whole, built, split;
  measure_both(&whole, &built, &split, fx, f, t, &o);
  assert_int_equal(whole.error, MLC_ERROR_KIND_NONE);
  assert_same_outcome(&whole, &split);
  assert_int_equal(built.nrun_secs, 0);
  assert_true(built.build_secs > 0);
  assert_int_equal(split.nrun_secs, 2);
  for (int i = 0; i < 2; i++) assert_true(split.run_secs[i] > 0 && split.run_secs[i] < 1.0);
  assert_true(split.build_secs > built.build_secs); /* build, then the load */
  assert_true(exists(fx->obj));                     /* only read */

  /* In process, the same; the build's result may be the output too. */
  o.in_process = true;
  mlc_measure_result_t again = built;
  OK(mlc_measure_prebuilt(&again, &again, fx->obj, f, &o));
  assert_int_equal(again.error, MLC_ERROR_KIND_NONE);
  assert_int_equal(again.nrun_secs, 2);
  assert_true(again.build_secs > built.build_secs);
  sch_trace_free(t);
  tir_func_free(f);
}

static void trace_that_does_not_replay_is_a_build_error_before_any_run(void **state) {
  fixture_t *fx = *state;
  tir_func_t *f = gmm(16);
  sch_trace_t *t = python_trace(MISSING_BLOCK_TRACE);
  mlc_measure_options_t o = quick();
  FILE *stale = fopen(fx->obj, "w"); /* a failed build leaves no file, not even an old one */
  assert_non_null(stale);
  fclose(stale);
  mlc_measure_result_t whole, built, split;
  measure_both(&whole, &built, &split, fx, f, t, &o);
  assert_int_equal(whole.error, MLC_ERROR_KIND_BUILD);
  assert_non_null(strstr(whole.message, "\"D\""));
  assert_same_outcome(&whole, &built);
  assert_same_outcome(&whole, &split);
  OK(mlc_measure_prebuilt(&built, &built, fx->obj, f, &o)); /* in place */
  assert_same_outcome(&whole, &built);
  sch_trace_free(t);
  tir_func_free(f);
}

static void segfaulting_kernel_crashes_in_the_run_half(void **state) {
  fixture_t *fx = *state;
  tir_func_t *f = parse(SCATTER);
  mlc_measure_options_t o = quick();
  mlc_measure_result_t whole, built, split;
  measure_both(&whole, &built, &split, fx, f, NULL, &o);
  assert_int_equal(whole.error, MLC_ERROR_KIND_CRASH);
  assert_int_equal(built.error, MLC_ERROR_KIND_NONE);
  assert_same_outcome(&whole, &split);
  assert_non_null(strstr(split.message, "during warm-up"));
  tir_func_free(f);
}

static void build_past_its_limit_is_a_timeout_leaving_no_object(void **state) {
  fixture_t *fx = *state;
  tir_func_t *f = gmm(64);
  sch_trace_t *t = python_trace(GMM_TRACE);
  mlc_measure_options_t o = quick();
  o.build_timeout_s = 1e-3; /* LLVM's O3 pipeline alone takes longer */
  mlc_measure_result_t whole, built, split;
  double t0 = measure_now();
  measure_both(&whole, &built, &split, fx, f, t, &o);
  assert_true(measure_now() - t0 < 3.0);
  assert_int_equal(whole.error, MLC_ERROR_KIND_TIMEOUT);
  assert_same_outcome(&whole, &built);
  assert_same_outcome(&whole, &split);
  sch_trace_free(t);
  tir_func_free(f);
}

static void endless_kernel_is_a_timeout_after_the_run_limit(void **state) {
  fixture_t *fx = *state;
  tir_func_t *f = parse(SPIN);
  mlc_measure_options_t o = quick();
  o.run_timeout_s = 1;
  mlc_measure_result_t whole, built, split;
  measure_both(&whole, &built, &split, fx, f, NULL, &o);
  assert_int_equal(whole.error, MLC_ERROR_KIND_TIMEOUT);
  assert_int_equal(built.error, MLC_ERROR_KIND_NONE);
  assert_same_outcome(&whole, &split);
  tir_func_free(f);
}

/* A missing or foreign file is the load's build error, never a crash. */
static void missing_or_corrupt_object_is_a_build_error(void **state) {
  fixture_t *fx = *state;
  tir_func_t *f = gmm(16);
  mlc_measure_options_t o = quick();
  mlc_measure_result_t r;
  OK(mlc_measure_prebuilt(&r, NULL, fx->obj, f, &o));
  show("missing", &r);
  assert_int_equal(r.error, MLC_ERROR_KIND_BUILD);
  assert_int_equal(strncmp(r.message, "load: ", 6), 0);
  static const char junk[] = "\177ELF but not really an object file: just text, long enough to hold an ELF header";
  OK(mlc_write_file(fx->obj, junk, sizeof junk));
  OK(mlc_measure_prebuilt(&r, NULL, fx->obj, f, &o));
  show("corrupt", &r);
  assert_int_equal(r.error, MLC_ERROR_KIND_BUILD);
  assert_non_null(strstr(r.message, "not a 64-bit relocatable object"));
  mlc_jit_t *jit = NULL;
  assert_int_equal(mlc_jit_load_object(&jit, fx->obj), MLC_EINVAL);
  assert_null(jit);
  assert_int_equal(mlc_jit_load_object(&jit, NULL), MLC_EINVAL);
  assert_no_children();
  tir_func_free(f);
}

static void bad_arguments_are_refused(void **state) {
  fixture_t *fx = *state;
  tir_func_t *f = gmm(16);
  mlc_target_t target, cuda;
  mlc_target_host(&target);
  OK(mlc_target_parse(&cuda, "cuda -arch=sm_80"));
  mlc_measure_options_t o = quick();
  mlc_measure_result_t r;
  assert_int_equal(mlc_measure_build(&r, NULL, f, NULL, &target, &o), MLC_EINVAL);
  assert_int_equal(mlc_measure_build(&r, "", f, NULL, &target, &o), MLC_EINVAL);
  /* A GPU target is built like any other: GMM with no loop bound to a GPU
   * thread does not compile for one (a build error; nothing left behind). */
  OK(mlc_measure_build(&r, fx->obj, f, NULL, &cuda, &o));
  assert_int_equal(r.error, MLC_ERROR_KIND_BUILD);
  assert_false(exists(fx->obj));
  cuda.kind = (mlc_target_kind_t)7; /* no such kind */
  assert_int_equal(mlc_measure_build(&r, fx->obj, f, NULL, &cuda, &o), MLC_EUNSUPPORTED);
  assert_int_equal(mlc_measure_prebuilt(&r, NULL, NULL, f, &o), MLC_EINVAL);
  assert_int_equal(mlc_measure_prebuilt(NULL, NULL, fx->obj, f, &o), MLC_EINVAL);
  o.repeat = 0;
  assert_int_equal(mlc_measure_prebuilt(&r, NULL, fx->obj, f, &o), MLC_EINVAL);
  assert_int_equal(mlc_measure_build(&r, fx->obj, f, NULL, &target, &o), MLC_EINVAL);
  assert_false(exists(fx->obj));
  assert_no_children();
  tir_func_free(f);
}

int main(void) {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
  const struct CMUnitTest tests[] = {
      T(good_gmm64_is_measured_and_checked_as_by_measure),
      T(trace_that_does_not_replay_is_a_build_error_before_any_run),
      T(segfaulting_kernel_crashes_in_the_run_half),
      T(build_past_its_limit_is_a_timeout_leaving_no_object),
      T(endless_kernel_is_a_timeout_after_the_run_limit),
      T(missing_or_corrupt_object_is_a_build_error),
      T(bad_arguments_are_refused),
  };
#undef T
  return cmocka_run_group_tests(tests, NULL, NULL);
}
