/*
 * test_measure.c - the measurement library on real kernels: GMM-128 under a
 * hand-written trace (split, reorder, parallel, vectorize) compiled, timed
 * in a forked child and checked against the interpreter; the same in
 * process; `number` growing until a repeat lasts min_repeat_ms (black box
 * through wall time, and white box through the timer on a C kernel); the
 * random inputs; the option defaults and the arguments refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "workers/measure.h"
#include "workers/measure_internal.h"

#define OK(x) assert_int_equal((x), MLC_OK)

/* A TVM user's tiling of GMM-128, in the form `print(sch.trace)` shows. */
static const char *GMM_TRACE =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "l4, l5 = sch.split(loop=l1, factors=[None, 16], preserve_unit_iters=True)\n"
    "l6, l7 = sch.split(loop=l2, factors=[None, 16], preserve_unit_iters=True)\n"
    "sch.reorder(l4, l6, l5, l3, l7)\n"
    "sch.parallel(loop=l4)\n"
    "sch.vectorize(loop=l7)\n";

static tir_func_t *gmm(int64_t n) {
  tir_func_t *f = NULL;
  int64_t shape[3] = {n, n, n};
  tir_dtype_t none = {0, 0, 0};
  OK(tir_workload_build(&f, "GMM", shape, 3, tir_dt_FLOAT32(), none));
  return f;
}

static sch_trace_t *python_trace(const char *src) {
  sch_trace_t *t = NULL;
  int rc = sch_trace_from_python(&t, src, strlen(src), "trace.py");
  if (rc != MLC_OK) fprintf(stderr, "trace: %s\n", mlc_error_last());
  OK(rc);
  return t;
}

static mlc_target_t host(void) {
  mlc_target_t t;
  mlc_target_host(&t);
  return t;
}

/* The default options with `repeat` repeats of at least min_repeat_ms. */
static mlc_measure_options_t timed_options(int repeat, double min_repeat_ms) {
  mlc_measure_options_t o;
  mlc_measure_options_default(&o);
  o.repeat = repeat;
  o.min_repeat_ms = min_repeat_ms;
  return o;
}

/* The default options with `repeat` repeats and the correctness check on. */
static mlc_measure_options_t checked_options(int repeat) {
  mlc_measure_options_t o;
  mlc_measure_options_default(&o);
  o.repeat = repeat;
  o.check_correctness = true;
  return o;
}

/* No child left behind: not running, not a zombie. */
static void assert_no_children(void) {
  errno = 0;
  assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
  assert_int_equal(errno, ECHILD);
}

static void assert_measured(const mlc_measure_result_t *r, int repeat) {
  if (r->error != MLC_ERROR_KIND_NONE)
    fprintf(stderr, "measure: %s: %s\n", mlc_error_kind_name(r->error), r->message);
  assert_int_equal(r->error, MLC_ERROR_KIND_NONE);
  assert_string_equal(r->message, "");
  assert_int_equal(r->nrun_secs, repeat);
  for (int i = 0; i < repeat; i++) assert_true(r->run_secs[i] > 0 && r->run_secs[i] < 1.0);
  assert_true(r->build_secs > 0);
}

/* ------------------------------------------------------------------------ */

static void defaults_are_designs(void **state) {
  mlc_measure_options_t o;
  memset(&o, 0x5a, sizeof o);
  mlc_measure_options_default(&o);
  assert_int_equal(o.number, 3);
  assert_int_equal(o.repeat, 1);
  assert_int_equal(o.min_repeat_ms, 100);
  assert_false(o.flush_cache);
  assert_true(o.build_timeout_s == 30 && o.run_timeout_s == 30);
  assert_false(o.check_correctness);
  assert_true(o.rtol == 1e-4);
  assert_int_equal(o.seed, 1);
  assert_false(o.in_process);
  assert_null(o.reference);
}

static void median_is_middle_value_or_mean_of_middle_two(void **state) {
  mlc_measure_result_t r = {0};
  assert_true(mlc_measure_median(&r) == 0);
  r.nrun_secs = 3;
  r.run_secs[0] = 3, r.run_secs[1] = 1, r.run_secs[2] = 2;
  assert_true(mlc_measure_median(&r) == 2);
  r.nrun_secs = 4;
  r.run_secs[3] = 10;
  assert_true(mlc_measure_median(&r) == 2.5);
  assert_true(r.run_secs[0] == 3); /* the result is not reordered */
}

/* The forked default: a tiled, parallel, vectorized GMM-128 gives all its
 * repeats and matches the interpreter. Each recorded repeat lasted at least
 * min_repeat_ms, so the wall time bounds the total from below; and since one
 * call is far shorter than min_repeat_ms / 3, `number` must have grown from 3. */
static void gmm128_hand_trace_is_timed_and_correct_in_a_child(void **state) {
  tir_func_t *f = gmm(128);
  sch_trace_t *t = python_trace(GMM_TRACE);
  mlc_target_t target = host();
  mlc_measure_options_t o = checked_options(3);
  mlc_measure_result_t r;
  double t0 = measure_now();
  OK(mlc_measure(&r, f, t, &target, &o));
  double wall = measure_now() - t0;
  assert_measured(&r, 3);
  assert_true(wall >= 3 * 0.100);
  /* 3 calls would fill at most half of a repeat: number grew at least 2x. */
  for (int i = 0; i < 3; i++) assert_true(r.run_secs[i] * 3 < 0.100 / 2);
  double med = mlc_measure_median(&r);
  assert_true(med > 0 && med < 0.100 / 6);
  assert_no_children();
  sch_trace_free(t);
  tir_func_free(f);
}

/* slow_secs: a warm-up longer than it is the measurement, one entry and no
 * repeat (the check still runs); a warm-up within it times the repeats as
 * usual. */
static void a_warm_up_longer_than_slow_secs_is_the_measurement(void **state) {
  tir_func_t *f = gmm(128);
  sch_trace_t *t = python_trace(GMM_TRACE);
  mlc_target_t target = host();
  mlc_measure_options_t o = checked_options(3);
  o.min_repeat_ms = 50;
  o.slow_secs = 1e-9; /* every call is longer */
  mlc_measure_result_t r;
  OK(mlc_measure(&r, f, t, &target, &o));
  assert_measured(&r, 1);
  assert_true(r.run_secs[0] < 0.050); /* one call, not a repeat of 50 ms */
  o.slow_secs = 10; /* no call is */
  OK(mlc_measure(&r, f, t, &target, &o));
  assert_measured(&r, 3);
  o.slow_secs = -1;
  assert_int_equal(mlc_measure(&r, f, t, &target, &o), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "slow_secs"));
  assert_no_children();
  sch_trace_free(t);
  tir_func_free(f);
  (void)state;
}

static void in_process_mode_measures_and_checks_too(void **state) {
  tir_func_t *f = gmm(64); /* the trace's 16-tiles fit; the interpreter is 8x quicker */
  sch_trace_t *t = python_trace(GMM_TRACE);
  mlc_target_t target = host();
  mlc_measure_options_t o = checked_options(2);
  o.in_process = true;
  o.min_repeat_ms = 10;
  o.flush_cache = true;
  mlc_measure_result_t r;
  OK(mlc_measure(&r, f, t, &target, &o));
  assert_measured(&r, 2);
  sch_trace_free(t);
  tir_func_free(f);
}

/* No trace at all: the workload as written (serial loops) is compiled. */
static void null_trace_measures_the_unscheduled_workload(void **state) {
  tir_func_t *f = gmm(32);
  mlc_target_t target = host();
  mlc_measure_options_t o;
  mlc_measure_options_default(&o);
  o.min_repeat_ms = 1;
  o.check_correctness = true;
  mlc_measure_result_t r;
  OK(mlc_measure(&r, f, NULL, &target, &o));
  assert_measured(&r, 1);
  tir_func_free(f);
}

/* Inputs of 16-bit floats and 8-bit integers are filled and compared in
 * their own dtypes (float16 inputs accumulate into float32, int8 into int32). */
static void float16_and_int8_workloads_are_checked_in_their_dtypes(void **state) {
  static const struct { const char *in; } cases[] = {{"float16"}, {"bfloat16"}, {"int8"}, {"float64"}};
  mlc_target_t target = host();
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    tir_dtype_t in, none = {0, 0, 0};
    OK(tir_dtype_parse(&in, cases[c].in, strlen(cases[c].in)));
    tir_func_t *f = NULL;
    int64_t shape[3] = {16, 16, 16};
    OK(tir_workload_build(&f, "GMM", shape, 3, in, none));
    mlc_measure_options_t o;
    mlc_measure_options_default(&o);
    o.min_repeat_ms = 1;
    o.check_correctness = true;
    mlc_measure_result_t r;
    OK(mlc_measure(&r, f, NULL, &target, &o));
    if (r.error != MLC_ERROR_KIND_NONE) fprintf(stderr, "%s: ", cases[c].in);
    assert_measured(&r, 1);
    tir_func_free(f);
  }
}

/* ------------------------------------------------------------------------ */
/* The timer on a C function with the kernel ABI                             */
/* ------------------------------------------------------------------------ */

static int calls;

/* About 20 us of work per call. */
static int32_t busy_kernel(DLTensor *args, int32_t nargs) {
  calls++;
  double t0 = measure_now();
  while (measure_now() - t0 < 20e-6) {
  }
  return 0;
}

static int32_t fails_on_fifth_call(DLTensor *args, int32_t nargs) {
  return ++calls == 5 ? mlc_rt_error("fifth call: out of luck") : 0;
}

static void timer_grows_number_until_a_repeat_lasts_min_repeat_ms(void **state) {
  mlc_measure_options_t o;
  mlc_measure_options_default(&o);
  o.repeat = 2;
  o.min_repeat_ms = 50;
  mlc_measure_result_t r = {0};
  int number = 0;
  calls = 0;
  assert_true(measure_time(&r, &number, busy_kernel, NULL, 0, &o));
  /* 3 calls take 60 us, 50 ms takes at most 2500: the repeats went on far
   * past the 3 calls to start from, and the chunks aimed at the threshold
   * (a call lasts 20 us or more, so more than 5000 would be 100 ms). */
  assert_true(number > 3 * 8);
  assert_true(number <= 5000);
  assert_true(r.run_secs[1] * number >= 0.050);
  assert_int_equal(r.nrun_secs, 2);
  for (int i = 0; i < 2; i++) assert_true(r.run_secs[i] >= 20e-6 && r.run_secs[i] < 1e-3);
  assert_true(calls > number); /* the first repeat's calls, then the second's */
}

/* A kernel on a simulated clock: every call lasts `call_secs`; records
 * each batch's size and whether it started a repeat. */
typedef struct {
  double call_secs;
  int nbatches, sizes[64];
  bool starts[64];
  int total;
} sim_kernel_t;

static bool sim_batch(void *ctx, mlc_measure_result_t *out, int number, bool starts_repeat, double *secs) {
  (void)out;
  sim_kernel_t *k = ctx;
  assert_true(k->nbatches < 64);
  k->sizes[k->nbatches] = number;
  k->starts[k->nbatches++] = starts_repeat;
  k->total += number;
  *secs = number * k->call_secs;
  return true;
}

/* A 10 ms kernel and a 100 ms repeat: 3 calls (30 ms) fall short, so the
 * repeat goes on with the 8 calls that reach 105% of the threshold, and
 * counts all 11 (TVM would throw the 3 away and time 12 afresh). The
 * second repeat starts with those 11 and needs no more. Only a repeat's
 * first batch may flush the caches. */
static void timer_continues_a_short_repeat_instead_of_starting_over(void **state) {
  mlc_measure_options_t o = timed_options(2, 100);
  sim_kernel_t k = {.call_secs = 0.010};
  mlc_measure_result_t r = {0};
  int number = 0;
  assert_true(measure_repeats(&r, &number, &o, sim_batch, &k));
  assert_int_equal(k.nbatches, 3);
  assert_int_equal(k.sizes[0], 3);
  assert_int_equal(k.sizes[1], 8);
  assert_int_equal(k.sizes[2], 11);
  assert_true(k.starts[0] && !k.starts[1] && k.starts[2]);
  assert_int_equal(number, 11);
  assert_int_equal(r.nrun_secs, 2);
  for (int i = 0; i < 2; i++) assert_float_equal(r.run_secs[i], 0.010, 1e-12);

  /* A clock that never sees time pass: each chunk doubles the calls so
   * far, up to the cap on calls, where the repeat ends all the same. */
  sim_kernel_t still = {.call_secs = 0};
  o.repeat = 1;
  o.min_repeat_ms = 1;
  o.number = 1;
  assert_true(measure_repeats(&r, &number, &o, sim_batch, &still));
  assert_int_equal(still.sizes[1], 1);
  assert_int_equal(still.sizes[2], 2);
  assert_int_equal(still.sizes[3], 4);
  assert_int_equal(still.total, INT_MAX / 2);
  assert_int_equal(number, INT_MAX / 2);
  assert_int_equal(r.nrun_secs, 1);
}

/* slow_secs: a first repeat whose mean call is longer ends the timing there
 * (how the GPU path honours it; the CPU path stops at its warm-up first). A
 * kernel within it gets every repeat. */
static void timer_stops_after_one_repeat_of_a_slow_kernel(void **state) {
  mlc_measure_options_t o = timed_options(3, 100);
  o.number = 1;
  o.slow_secs = 0.2;
  sim_kernel_t slow = {.call_secs = 0.5};
  mlc_measure_result_t r = {0};
  int number = 0;
  assert_true(measure_repeats(&r, &number, &o, sim_batch, &slow));
  assert_int_equal(slow.nbatches, 1);
  assert_int_equal(r.nrun_secs, 1);
  assert_float_equal(r.run_secs[0], 0.5, 1e-12);

  sim_kernel_t fast = {.call_secs = 0.15};
  assert_true(measure_repeats(&r, &number, &o, sim_batch, &fast));
  assert_int_equal(r.nrun_secs, 3);
  assert_int_equal(fast.total, 3);
  for (int i = 0; i < 3; i++) assert_float_equal(r.run_secs[i], 0.15, 1e-12);
}

static void timer_keeps_number_when_min_repeat_ms_is_zero(void **state) {
  mlc_measure_options_t o = timed_options(4, 0);
  mlc_measure_result_t r = {0};
  int number = 0;
  calls = 0;
  assert_true(measure_time(&r, &number, busy_kernel, NULL, 0, &o));
  assert_int_equal(number, 3);
  assert_int_equal(calls, 12);
  assert_int_equal(r.nrun_secs, 4);
}

static void timer_reports_a_kernel_error_as_run(void **state) {
  mlc_measure_options_t o;
  mlc_measure_options_default(&o);
  o.repeat = 3;
  o.min_repeat_ms = 0;
  mlc_measure_result_t r = {0};
  calls = 0;
  assert_false(measure_time(&r, NULL, fails_on_fifth_call, NULL, 0, &o));
  assert_int_equal(r.error, MLC_ERROR_KIND_RUN);
  assert_string_equal(r.message, "fifth call: out of luck");
  assert_int_equal(r.nrun_secs, 0);
}

static void flush_buffer_is_larger_than_the_last_level_cache(void **state) {
  long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  size_t bytes = measure_flush_bytes();
  if (llc > 0) assert_true(bytes > (size_t)llc);
  else assert_true(bytes >= ((size_t)64 << 20));
}

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */
/* ------------------------------------------------------------------------ */

static void inputs_are_random_in_1_10_outputs_zero_and_aligned(void **state) {
  tir_func_t *f = gmm(16);
  measure_args_t a, b;
  OK(measure_args_init(&a, f, NULL, 7, true));
  OK(measure_args_init(&b, f, NULL, 7, false));
  assert_int_equal(a.n, 3);
  assert_false(a.is_output[0]);
  assert_false(a.is_output[1]);
  assert_true(a.is_output[2]);
  for (int p = 0; p < 3; p++) {
    assert_int_equal((uintptr_t)a.tensors[p].data % 64, 0);
    assert_int_equal(a.tensors[p].ndim, 2);
    assert_int_equal(a.tensors[p].shape[0], 16);
    assert_int_equal(a.tensors[p].dtype.code, kDLFloat);
    assert_int_equal(a.tensors[p].dtype.bits, 32);
    assert_int_equal(a.tensors[p].device.device_type, kDLCPU);
    assert_null(a.tensors[p].strides);
    const float *x = a.tensors[p].data;
    for (int i = 0; i < 256; i++) {
      if (p < 2) assert_true(x[i] >= 1.0f && x[i] < 10.0f);
      else assert_true(x[i] == 0.0f);
    }
    /* Same seed, same values. */
    assert_memory_equal(a.tensors[p].data, b.tensors[p].data, 256 * sizeof(float));
  }
  assert_non_null(a.saved[0]);
  assert_null(a.saved[2]);
  assert_null(b.saved[0]);
  measure_args_free(&a);
  measure_args_free(&b);
  tir_func_free(f);
}

static void random_values_cover_dtypes_and_stay_below_ten(void **state) {
  mlc_rng_t rng;
  mlc_rng_seed(&rng, 3);
  int32_t ints[1000];
  measure_fill_random(ints, 1000, tir_dt_INT32(), &rng);
  bool seen[10] = {false};
  for (int i = 0; i < 1000; i++) {
    assert_true(ints[i] >= 1 && ints[i] <= 9);
    seen[ints[i]] = true;
  }
  for (int v = 1; v <= 9; v++) assert_true(seen[v]);
  uint16_t h[1000];
  measure_fill_random(h, 1000, tir_dt_FLOAT16(), &rng);
  for (int i = 0; i < 1000; i++) assert_true(tir_f16_to_f32(h[i]) >= 1 && tir_f16_to_f32(h[i]) < 10);
  measure_fill_random(h, 1000, tir_dt_BFLOAT16(), &rng);
  for (int i = 0; i < 1000; i++) assert_true(tir_bf16_to_f32(h[i]) >= 1 && tir_bf16_to_f32(h[i]) < 10);
  /* float32 and float64 are drawn in blocks of 256: the values are those
   * of one draw each, 1 + 9u rounded to the dtype, across block edges. */
  static float f[700];
  static double d[700];
  mlc_rng_t again;
  mlc_rng_seed(&rng, 5);
  mlc_rng_seed(&again, 5);
  measure_fill_random(f, 700, tir_dt_FLOAT32(), &rng);
  for (int i = 0; i < 700; i++) assert_true(f[i] == (float)(1.0 + 9.0 * mlc_rng_uniform(&again)));
  measure_fill_random(d, 700, tir_dt_FLOAT64(), &rng);
  for (int i = 0; i < 700; i++) assert_true(d[i] == 1.0 + 9.0 * mlc_rng_uniform(&again));
  assert_int_equal(mlc_rng_next(&rng), mlc_rng_next(&again));
}

static void reference_cost_counts_every_store(void **state) {
  tir_func_t *f = gmm(128);
  /* 128^3 updates plus 128^2 inits (counted as if every instance ran them). */
  assert_int_equal(measure_count_stores(f), 128 * 128 * 128 + 128 * 128 * 128);
  tir_func_free(f);
}

static void check_budget_reads_the_environment(void **state) {
  unsetenv("MLC_MEASURE_CHECK_BUDGET");
  assert_int_equal(measure_check_budget(), (uint64_t)1 << 26);
  setenv("MLC_MEASURE_CHECK_BUDGET", "1000", 1);
  assert_int_equal(measure_check_budget(), 1000);
  setenv("MLC_MEASURE_CHECK_BUDGET", "lots", 1);
  assert_int_equal(measure_check_budget(), (uint64_t)1 << 26);
  unsetenv("MLC_MEASURE_CHECK_BUDGET");
}

static char warned[512];
static void capture_warning(mlc_log_level_t level, const char *line, void *payload) {
  if (level == MLC_LOG_WARN) snprintf(warned, sizeof warned, "%s", line);
}

/* Above the budget the check is skipped with a warning; the time stands. */
static void check_over_budget_is_skipped_with_a_warning(void **state) {
  tir_func_t *f = gmm(64);
  mlc_target_t target = host();
  mlc_measure_options_t o;
  mlc_measure_options_default(&o);
  o.in_process = true;
  o.min_repeat_ms = 1;
  o.check_correctness = true;
  setenv("MLC_MEASURE_CHECK_BUDGET", "1000", 1);
  warned[0] = '\0';
  mlc_log_set_sink(capture_warning, NULL);
  mlc_measure_result_t r;
  OK(mlc_measure(&r, f, NULL, &target, &o));
  mlc_log_set_sink(NULL, NULL);
  unsetenv("MLC_MEASURE_CHECK_BUDGET");
  assert_measured(&r, 1);
  assert_non_null(strstr(warned, "correctness check of gmm skipped"));
  assert_non_null(strstr(warned, "524288 stores"));
  tir_func_free(f);
}

static char calls_line[512];
static void capture_calls(mlc_log_level_t level, const char *line, void *payload) {
  (void)payload;
  if (level == MLC_LOG_DEBUG && strstr(line, "calls per repeat")) snprintf(calls_line, sizeof calls_line, "%s", line);
}

/* The calls per repeat the timer settled on, from its debug line. */
static int calls_per_repeat(const tir_func_t *f, int number, int min_repeat_ms) {
  mlc_target_t target = host();
  mlc_measure_options_t o;
  mlc_measure_options_default(&o);
  o.in_process = true;
  o.number = number;
  o.min_repeat_ms = min_repeat_ms;
  calls_line[0] = '\0';
  mlc_log_level_t before = mlc_log_level();
  mlc_log_set_level(MLC_LOG_DEBUG);
  mlc_log_set_sink(capture_calls, NULL);
  mlc_measure_result_t r;
  OK(mlc_measure(&r, f, NULL, &target, &o));
  mlc_log_set_sink(NULL, NULL);
  mlc_log_set_level(before);
  assert_measured(&r, 1);
  const char *at = strstr(calls_line, " calls per repeat");
  assert_non_null(at);
  while (at > calls_line && at[-1] >= '0' && at[-1] <= '9') at--;
  return atoi(at);
}

/* A kernel whose warm-up call alone lasts min_repeat_ms is timed one call
 * per repeat, whatever `number` says; one whose warm-up says fewer than
 * `number` calls reach min_repeat_ms starts with that many; a fast one
 * keeps `number` (and goes on). The unscheduled GMM-256 takes milliseconds
 * a call, far above 1 ms. */
static void a_slow_kernel_is_timed_one_call_per_repeat(void **state) {
  tir_func_t *slow = gmm(256), *fast = gmm(8), *middle = gmm(128);
  assert_int_equal(calls_per_repeat(slow, 5, 1), 1);
  assert_true(calls_per_repeat(fast, 5, 1) >= 5);
  /* The unscheduled GMM-128 takes a millisecond or more a call: 20 ms
   * asks for about 20 calls, not the 200 `number` says. */
  assert_true(calls_per_repeat(middle, 200, 20) < 200);
  tir_func_free(middle);
  tir_func_free(slow);
  tir_func_free(fast);
}

/* ------------------------------------------------------------------------ */
/* Refused arguments                                                         */
/* ------------------------------------------------------------------------ */

static void bad_options_and_unmeasurable_workloads_are_refused(void **state) {
  tir_func_t *f = gmm(16), *other = gmm(32);
  mlc_target_t target = host(), cuda;
  OK(mlc_target_parse(&cuda, "cuda -arch=sm_80"));
  mlc_measure_options_t o;
  mlc_measure_result_t r;
  mlc_measure_options_default(&o);
  o.repeat = 0;
  assert_int_equal(mlc_measure(&r, f, NULL, &target, &o), MLC_EINVAL);
  o.repeat = MLC_MEASURE_MAX_REPEAT + 1;
  assert_int_equal(mlc_measure(&r, f, NULL, &target, &o), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "repeat is 65"));
  mlc_measure_options_default(&o);
  o.number = 0;
  assert_int_equal(mlc_measure(&r, f, NULL, &target, &o), MLC_EINVAL);
  mlc_measure_options_default(&o);
  o.run_timeout_s = 0;
  assert_int_equal(mlc_measure(&r, f, NULL, &target, &o), MLC_EINVAL);
  mlc_measure_options_default(&o);
  cuda.kind = (mlc_target_kind_t)7; /* no such kind (GPU targets are measured on GPUs) */
  assert_int_equal(mlc_measure(&r, f, NULL, &cuda, &o), MLC_EUNSUPPORTED);
  o.reference = other;
  assert_int_equal(mlc_measure(&r, f, NULL, &target, &o), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "reference parameter 0 (A)"));
  assert_no_children();
  tir_func_free(f);
  tir_func_free(other);
}

static void symbolic_shapes_cannot_be_measured(void **state) {
  static const char *src =
      "@T.prim_func\n"
      "def add(a: T.handle, b: T.handle):\n"
      "    n = T.int32()\n"
      "    A = T.match_buffer(a, (n,), \"float32\")\n"
      "    B = T.match_buffer(b, (n,), \"float32\")\n"
      "    for i in range(n):\n"
      "        with T.block(\"B\"):\n"
      "            vi = T.axis.spatial(n, i)\n"
      "            B[vi] = A[vi] + T.float32(1)\n";
  tir_func_t *f = NULL;
  tir_parse_error_t err;
  OK(tir_parse_func(&f, src, strlen(src), "add.py", &err));
  mlc_target_t target = host();
  mlc_measure_result_t r;
  assert_int_equal(mlc_measure(&r, f, NULL, &target, NULL), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "buffer A: dimension 0 is not a constant"));
  tir_func_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(defaults_are_designs),
      cmocka_unit_test(median_is_middle_value_or_mean_of_middle_two),
      cmocka_unit_test(gmm128_hand_trace_is_timed_and_correct_in_a_child),
      cmocka_unit_test(a_warm_up_longer_than_slow_secs_is_the_measurement),
      cmocka_unit_test(null_trace_measures_the_unscheduled_workload),
      cmocka_unit_test(float16_and_int8_workloads_are_checked_in_their_dtypes),
      cmocka_unit_test(timer_grows_number_until_a_repeat_lasts_min_repeat_ms),
      cmocka_unit_test(timer_continues_a_short_repeat_instead_of_starting_over),
      cmocka_unit_test(timer_stops_after_one_repeat_of_a_slow_kernel),
      cmocka_unit_test(timer_keeps_number_when_min_repeat_ms_is_zero),
      cmocka_unit_test(timer_reports_a_kernel_error_as_run),
      cmocka_unit_test(flush_buffer_is_larger_than_the_last_level_cache),
      cmocka_unit_test(inputs_are_random_in_1_10_outputs_zero_and_aligned),
      cmocka_unit_test(random_values_cover_dtypes_and_stay_below_ten),
      cmocka_unit_test(reference_cost_counts_every_store),
      cmocka_unit_test(check_budget_reads_the_environment),
      cmocka_unit_test(bad_options_and_unmeasurable_workloads_are_refused),
      cmocka_unit_test(symbolic_shapes_cannot_be_measured),
      /* In process last: it starts the runtime's thread pool in this process. */
      cmocka_unit_test(in_process_mode_measures_and_checks_too),
      cmocka_unit_test(check_over_budget_is_skipped_with_a_warning),
      cmocka_unit_test(a_slow_kernel_is_timed_one_call_per_repeat),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
