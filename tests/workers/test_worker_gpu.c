/*
 * test_worker_gpu.c - mlc-worker's GPU backends (workers/worker_gpu.c) and
 * GPU measurement (workers/measure_gpu.c) on a machine with or without a
 * GPU:
 *  - discovery without a driver says so ("no CUDA device: no CUDA driver
 *    (...)"), through the probe child, for cuda and rocm;
 *  - discovery through a fake driver (tests/runtime/fake_cuda.c): key,
 *    properties, the device's own target, a device that does not exist, a
 *    target for another architecture;
 *  - accepts() and describe() on synthetic device records;
 *  - jobs for cuda targets: decoding, refusals by key and architecture;
 *  - a GPU candidate measured where no driver is (a `run` error naming it)
 *    and through the fake driver (which cannot run real PTX: the whole path
 *    up to the driver's refusal of the module);
 *  - with a real GPU, a bound GMM-128 measured and checked against the
 *    interpreter; skipped with the reason otherwise.
 * The test process never loads a driver itself: the probe and the
 * measurement run in forked children, as in the worker.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/runtime/fake_cuda.h"
#include "workers/worker_gpu.h"
#include "worker_test_helpers.h"

static void assert_has(const char *text, const char *what) {
  if (!strstr(text, what)) fprintf(stderr, "'%s' lacks '%s'\n", text, what);
  assert_non_null(strstr(text, what));
}

static mlc_target_t target_of(const char *text) {
  mlc_target_t t;
  OK(mlc_target_parse(&t, text));
  return t;
}

/* ------------------------------------------------------------------------ */
/* Discovery                                                                 */
/* ------------------------------------------------------------------------ */

static void test_discovery_without_driver_says_so(void **state) {
  use_driver("/nonexistent/libcuda.so.1", "/nonexistent/libamdhip64.so");
  worker_device_t dev;
  mlc_target_t t = target_of("cuda -arch=sm_90");
  assert_int_equal(worker_device_open(&dev, &t, 0, NULL), MLC_ENOTFOUND);
  assert_error_has("no CUDA device: no CUDA driver (/nonexistent/libcuda.so.1: cannot open shared object file");
  t = target_of("rocm -mcpu=gfx90a");
  assert_int_equal(worker_device_open(&dev, &t, 0, NULL), MLC_ENOTFOUND);
  assert_error_has("no ROCm device: no ROCm driver (/nonexistent/libamdhip64.so: cannot open");
  worker_gpu_probe_t p;
  OK(worker_gpu_probe(&p, MLC_TARGET_CUDA, 0));
  assert_false(p.ok);
  assert_int_equal(p.count, 0);
  assert_has(p.why, "no CUDA driver");
  use_driver(NULL, NULL);
}

static void test_discovery_through_fake_driver(void **state) {
  SKIP_WITHOUT_FAKE();
  use_driver(fake_path, NULL);
  worker_device_t dev;
  mlc_target_t t = target_of("cuda -arch=sm_90");
  OK(worker_device_open(&dev, &t, 0, NULL));
  assert_string_equal(dev.backend->name, "cuda");
  assert_string_equal(dev.device_key, "cuda-sm90");
  assert_non_null(strstr(dev.worker_id, "-cuda0-"));
  json_t *props = mlc_json_loads(dev.device_json, "device");
  assert_non_null(props);
  assert_string_equal(json_string_value(json_object_get(props, "name")), "Fake GPU 90");
  assert_string_equal(json_string_value(json_object_get(props, "arch")), "sm_90");
  assert_string_equal(json_string_value(json_object_get(props, "driver")), "12.4");
  assert_int_equal(json_integer_value(json_object_get(props, "memory_bytes")), (json_int_t)80 << 30);
  assert_int_equal(json_integer_value(json_object_get(props, "multiprocessors")), 132);
  assert_int_equal(json_integer_value(json_object_get(props, "clock_khz")), 1980000);
  assert_int_equal(json_integer_value(json_object_get(props, "l2_bytes")), 1 << 20);
  json_decref(props);
  /* Device 1 discovered with no target: the device's own, sm_80. */
  memset(&dev, 0, sizeof dev);
  dev.backend = &worker_backend_cuda;
  dev.index = 1;
  OK(worker_backend_cuda.discover(&dev, 1, NULL));
  assert_int_equal(dev.target.kind, MLC_TARGET_CUDA);
  assert_string_equal(dev.target.arch, "sm_80");
  assert_string_equal(dev.device_key, "cuda-sm80");
  /* sm_90 on the sm_80 card: refused with why. */
  t = target_of("cuda -arch=sm_90");
  assert_int_equal(worker_device_open(&dev, &t, 1, NULL), MLC_EUNSUPPORTED);
  assert_error_has("on CUDA device 1 (Fake GPU 80): the target is for sm_90, this device is sm_80");
  assert_int_equal(worker_device_open(&dev, &t, 2, NULL), MLC_ENOTFOUND);
  assert_error_has("CUDA device 2 does not exist (2 devices: 0..1)");
  use_driver(NULL, NULL);
}

/* ------------------------------------------------------------------------ */
/* Synthetic device records                                                  */
/* ------------------------------------------------------------------------ */

static void test_accepts_on_synthetic_devices(void **state) {
  mlc_target_t sm90 = target_of("cuda -arch=sm_90"), gfx = target_of("rocm -mcpu=gfx90a");
  mlc_target_t llvm = target_of("llvm -mcpu=x86-64");
  OK(worker_gpu_accepts_arch(MLC_TARGET_CUDA, "sm_90", &sm90));
  assert_int_equal(worker_gpu_accepts_arch(MLC_TARGET_CUDA, "sm_80", &sm90), MLC_EUNSUPPORTED);
  assert_error_has("the target is for sm_90, this device is sm_80");
  assert_int_equal(worker_gpu_accepts_arch(MLC_TARGET_CUDA, "sm_90", &llvm), MLC_EUNSUPPORTED);
  assert_error_has("not a cuda target");
  assert_int_equal(worker_gpu_accepts_arch(MLC_TARGET_CUDA, "sm_90", &gfx), MLC_EUNSUPPORTED);
  OK(worker_gpu_accepts_arch(MLC_TARGET_ROCM, "gfx90a", &gfx));
  assert_int_equal(worker_gpu_accepts_arch(MLC_TARGET_ROCM, "gfx942", &gfx), MLC_EUNSUPPORTED);
  assert_error_has("the target is for gfx90a, this device is gfx942");

  /* describe(): a probe's answer into the device. */
  worker_gpu_probe_t p;
  memset(&p, 0, sizeof p);
  p.ok = 1;
  p.count = 1;
  snprintf(p.props.name, sizeof p.props.name, "AMD Instinct MI250X");
  snprintf(p.props.arch, sizeof p.props.arch, "gfx90a");
  snprintf(p.props.driver_version, sizeof p.props.driver_version, "6.1");
  p.props.total_memory = (int64_t)64 << 30;
  p.props.multiprocessors = 110;
  worker_device_t dev;
  memset(&dev, 0, sizeof dev);
  dev.backend = &worker_backend_rocm;
  OK(worker_gpu_describe(&dev, &p, NULL));
  assert_int_equal(dev.target.kind, MLC_TARGET_ROCM);
  assert_string_equal(dev.target.mcpu, "gfx90a");
  assert_string_equal(dev.device_key, "rocm-gfx90a");
  assert_has(dev.device_json, "\"name\":\"AMD Instinct MI250X\"");
  OK(dev.backend->accepts(&dev, &gfx));
  mlc_target_t mi300 = target_of("rocm -mcpu=gfx942");
  assert_int_equal(dev.backend->accepts(&dev, &mi300), MLC_EUNSUPPORTED);
  /* No driver, and a device past the last. */
  memset(&p, 0, sizeof p);
  snprintf(p.why, sizeof p.why, "no ROCm driver (libamdhip64.so: cannot open shared object file)");
  assert_int_equal(worker_gpu_describe(&dev, &p, NULL), MLC_ENOTFOUND);
  assert_error_has("no ROCm device: no ROCm driver (libamdhip64.so");
  p.count = 2;
  dev.index = 4;
  snprintf(p.why, sizeof p.why, "ROCm device 4 does not exist (2 devices: 0..1)");
  assert_int_equal(worker_gpu_describe(&dev, &p, NULL), MLC_ENOTFOUND);
  assert_error_has("ROCm device 4 does not exist");
  /* A very long name does not fit the announcement: said, not cut. */
  memset(&p, 0, sizeof p);
  p.ok = p.count = 1;
  memset(p.props.name, 'n', sizeof p.props.name - 1);
  snprintf(p.props.arch, sizeof p.props.arch, "gfx90a");
  char small[64];
  assert_int_equal(worker_gpu_props_json(small, sizeof small, &p.props), MLC_ERANGE);
}

/* ------------------------------------------------------------------------ */
/* Jobs                                                                      */
/* ------------------------------------------------------------------------ */

/* GMM-N bound to blocks and threads: 16x16 tiles of C per block. */
static const char *GPU_TRACE =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "l4, l5 = sch.split(loop=l1, factors=[None, 16], preserve_unit_iters=True)\n"
    "l6, l7 = sch.split(loop=l2, factors=[None, 16], preserve_unit_iters=True)\n"
    "sch.reorder(l4, l6, l5, l7, l3)\n"
    "sch.bind(loop=l4, thread_axis=\"blockIdx.y\")\n"
    "sch.bind(loop=l6, thread_axis=\"blockIdx.x\")\n"
    "sch.bind(loop=l5, thread_axis=\"threadIdx.y\")\n"
    "sch.bind(loop=l7, thread_axis=\"threadIdx.x\")\n";

/* A cuda job for GMM-n under GPU_TRACE (free with rpc_job_free); slow_secs
 * as the tuner sets it (0: off). */
static rpc_job_t make_job(const char *key, const char *target, int64_t n, double slow_secs) {
  mlc_measure_options_t o;
  mlc_measure_options_default(&o);
  o.slow_secs = slow_secs;
  o.number = 1;
  o.min_repeat_ms = 10;
  o.repeat = 3;
  o.check_correctness = true;
  o.flush_cache = true;
  return gmm_job("gpu-1", key, target, n, GPU_TRACE, &o);
}

static void test_cuda_job_decoding(void **state) {
  rpc_job_t job = make_job("cuda-sm90", "cuda -arch=sm_90", 64, 0);
  worker_job_t j;
  OK(worker_job_decode(&j, &job));
  assert_int_equal(j.target.kind, MLC_TARGET_CUDA);
  assert_string_equal(j.target.arch, "sm_90");
  assert_true(j.opts.flush_cache && j.opts.check_correctness);
  assert_int_equal(j.opts.device, 0); /* not on the wire: the worker's own */
  assert_int_equal(worker_backend_for(j.target.kind), &worker_backend_cuda);
  assert_int_equal(worker_backend_for(MLC_TARGET_ROCM), &worker_backend_rocm);
  worker_job_free(&j);

  /* A synthetic sm_90 device refuses jobs for other keys and arches. */
  worker_device_t dev;
  memset(&dev, 0, sizeof dev);
  dev.backend = &worker_backend_cuda;
  dev.target = target_of("cuda -arch=sm_90");
  snprintf(dev.device_key, sizeof dev.device_key, "cuda-sm90");
  snprintf(dev.device_json, sizeof dev.device_json, "{\"name\":\"synthetic\"}");
  snprintf(dev.worker_id, sizeof dev.worker_id, "w-gpu");
  rpc_result_t r;
  snprintf(job.device_key, sizeof job.device_key, "cuda-sm80");
  OK(worker_run_job(&dev, &job, &r));
  assert_int_equal(r.error, MLC_ERROR_KIND_BUILD);
  assert_has(r.message, "serves device key cuda-sm90, not cuda-sm80");
  rpc_result_free(&r);
  snprintf(job.device_key, sizeof job.device_key, "cuda-sm90");
  mlc_free(job.target);
  job.target = mlc_strdup("cuda -arch=sm_80");
  OK(worker_run_job(&dev, &job, &r));
  assert_int_equal(r.error, MLC_ERROR_KIND_BUILD);
  assert_has(r.message, "the target is for sm_80, this device is sm_90");
  assert_string_equal(r.device_json, "{\"name\":\"synthetic\"}");
  rpc_result_free(&r);
  rpc_job_free(&job);
}

/* The job measured on a synthetic sm_90 device 0 of the current driver. */
static rpc_result_t measure_on(const char *target) {
  rpc_job_t job = make_job("cuda-sm90", target, 128, 0);
  worker_device_t dev;
  memset(&dev, 0, sizeof dev);
  dev.backend = &worker_backend_cuda;
  dev.target = target_of(target);
  snprintf(dev.device_key, sizeof dev.device_key, "cuda-sm90");
  snprintf(dev.device_json, sizeof dev.device_json, "{}");
  rpc_result_t r;
  OK(worker_run_job(&dev, &job, &r));
  rpc_job_free(&job);
  return r;
}

/* Skips (with why) when this build cannot compile the GPU candidate yet. */
static void skip_if_no_gpu_codegen(rpc_result_t *r) {
  if (r->error != MLC_ERROR_KIND_BUILD) return;
  printf("# skipped: the candidate does not build for cuda here: %s\n", r->message);
  rpc_result_free(r);
  skip();
}

static void test_measurement_without_driver_is_a_run_error(void **state) {
  use_driver("/nonexistent/libcuda.so.1", NULL);
  rpc_result_t r = measure_on("cuda -arch=sm_90");
  use_driver(NULL, NULL);
  skip_if_no_gpu_codegen(&r);
  assert_int_equal(r.error, MLC_ERROR_KIND_RUN);
  assert_has(r.message, "no CUDA device: no CUDA driver (/nonexistent/libcuda.so.1");
  assert_int_equal(r.nrun_secs, 0);
  rpc_result_free(&r);
}

static void test_measurement_through_fake_driver(void **state) {
  SKIP_WITHOUT_FAKE();
  use_driver(fake_path, NULL);
  rpc_result_t r = measure_on("cuda -arch=sm_90");
  use_driver(NULL, NULL);
  skip_if_no_gpu_codegen(&r);
  /* Buffers allocated and filled; the launcher's first launch reaches the
   * driver, which cannot load real PTX. */
  assert_int_equal(r.error, MLC_ERROR_KIND_RUN);
  assert_has(r.message, "cuModuleLoadData: CUDA_ERROR_INVALID_PTX");
  rpc_result_free(&r);
}

static void test_real_gpu_measures_bound_gmm(void **state) {
  use_driver(NULL, NULL);
  worker_gpu_probe_t p;
  OK(worker_gpu_probe(&p, MLC_TARGET_CUDA, 0));
  if (!p.ok) {
    printf("# skipped: %s\n", p.why);
    skip();
  }
  char target[64];
  snprintf(target, sizeof target, "cuda -arch=%s", p.props.arch);
  rpc_job_t job = make_job("", target, 128, 0);
  worker_device_t dev;
  mlc_target_t t = target_of(target);
  OK(worker_device_open(&dev, &t, 0, "w-real"));
  snprintf(job.device_key, sizeof job.device_key, "%s", dev.device_key);
  rpc_result_t r;
  OK(worker_run_job(&dev, &job, &r));
  if (r.error != MLC_ERROR_KIND_NONE) fprintf(stderr, "result: %s\n", r.message);
  assert_int_equal(r.error, MLC_ERROR_KIND_NONE);
  assert_int_equal(r.nrun_secs, 3);
  for (int i = 0; i < 3; i++) assert_true(r.run_secs[i] > 0 && r.run_secs[i] < 0.1);
  assert_has(r.device_json, p.props.name);
  printf("# GMM-128 on %s: %.2f us\n", p.props.name, r.run_secs[0] * 1e6);
  rpc_result_free(&r);
  rpc_job_free(&job);

  /* slow_secs below the kernel's time: its first repeat is the measurement. */
  job = make_job("", target, 128, 1e-9);
  snprintf(job.device_key, sizeof job.device_key, "%s", dev.device_key);
  OK(worker_run_job(&dev, &job, &r));
  assert_int_equal(r.error, MLC_ERROR_KIND_NONE);
  assert_int_equal(r.nrun_secs, 1);
  assert_true(r.run_secs[0] > 0 && r.run_secs[0] < 0.1);
  rpc_result_free(&r);
  rpc_job_free(&job);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_discovery_without_driver_says_so),
      cmocka_unit_test(test_discovery_through_fake_driver),
      cmocka_unit_test(test_accepts_on_synthetic_devices),
      cmocka_unit_test(test_cuda_job_decoding),
      cmocka_unit_test(test_measurement_without_driver_is_a_run_error),
      cmocka_unit_test(test_measurement_through_fake_driver),
      cmocka_unit_test(test_real_gpu_measures_bound_gmm),
  };
  return cmocka_run_group_tests(tests, fake_cuda_setup, fake_cuda_teardown);
}
