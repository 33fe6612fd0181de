/*
 * test_worker_cpu.c - mlc-worker's job handling without sockets
 * (workers/worker.h, workers/measure_wire.h): the measure options as jobs
 * carry them (round trip, defaults, every refusal names its key), device
 * keys, the CPU backend's discovery (key, properties, worker id, targets it
 * refuses), and jobs off the wire: a GMM candidate measured and checked
 * against the interpreter, the same through the JSON codec and through the
 * measuring process, and bad jobs (text, trace, target, options, device key,
 * features this CPU lacks) answered with a `build` error that says why; the
 * program's usage errors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/cmd_worker.h"
#include "workers/worker.h"
#include "worker_test_helpers.h"

/* ------------------------------------------------------------------------ */
/* Measure options as JSON                                                   */
/* ------------------------------------------------------------------------ */

static void test_options_round_trip(void **state) {
  (void)state;
  mlc_measure_options_t o, back;
  mlc_measure_options_default(&o);
  o.number = 7;
  o.repeat = 5;
  o.min_repeat_ms = 3;
  o.flush_cache = true;
  o.build_timeout_s = 12.5;
  o.run_timeout_s = 0.25;
  o.check_correctness = true;
  o.rtol = 1e-3;
  o.seed = 123456789012345ull;
  o.slow_secs = 0.5;
  json_t *j = NULL;
  OK(mlc_measure_options_to_json(&j, &o));
  assert_int_equal(json_object_size(j), 10);
  OK(mlc_measure_options_from_json(&back, j));
  json_decref(j);
  assert_int_equal(back.number, 7);
  assert_int_equal(back.repeat, 5);
  assert_int_equal(back.min_repeat_ms, 3);
  assert_true(back.flush_cache && back.check_correctness && !back.in_process);
  assert_true(back.build_timeout_s == 12.5 && back.run_timeout_s == 0.25 && back.rtol == 1e-3);
  assert_true(back.seed == 123456789012345ull && back.slow_secs == 0.5);
  /* Missing keys, an empty object, NULL and null: the defaults. */
  mlc_measure_options_t def;
  mlc_measure_options_default(&def);
  json_t *partial = json_pack("{s:i}", "repeat", 2);
  OK(mlc_measure_options_from_json(&back, partial));
  json_decref(partial);
  assert_int_equal(back.repeat, 2);
  assert_int_equal(back.number, def.number);
  assert_int_equal(back.min_repeat_ms, def.min_repeat_ms);
  OK(mlc_measure_options_from_json(&back, NULL));
  assert_int_equal(back.min_repeat_ms, def.min_repeat_ms);
  json_t *null = json_null();
  OK(mlc_measure_options_from_json(&back, null));
  json_decref(null);
  assert_true(back.build_timeout_s == def.build_timeout_s);
}

static void refused(const char *text, const char *what) {
  json_t *j = mlc_json_loads(text, "test");
  assert_non_null(j);
  mlc_measure_options_t o;
  assert_int_equal(mlc_measure_options_from_json(&o, j), MLC_EPARSE);
  assert_error_has(what);
  json_decref(j);
}

static void test_options_refusals_name_the_key(void **state) {
  (void)state;
  refused("{\"numbr\":3}", "unknown key 'numbr'");
  refused("{\"number\":0}", "'number'");
  refused("{\"number\":\"3\"}", "'number' must be an integer");
  refused("{\"repeat\":65}", "'repeat'");
  refused("{\"min_repeat_ms\":-1}", "'min_repeat_ms'");
  refused("{\"build_timeout_s\":0}", "'build_timeout_s'");
  refused("{\"run_timeout_s\":\"x\"}", "'run_timeout_s' must be a number");
  refused("{\"rtol\":-0.5}", "'rtol'");
  refused("{\"slow_secs\":-1}", "'slow_secs'");
  refused("{\"seed\":-1}", "'seed'");
  refused("{\"check_correctness\":1}", "'check_correctness' must be true or false");
  refused("[1,2]", "expected a JSON object");
  /* What cannot travel is refused on the way out. */
  mlc_measure_options_t o;
  mlc_measure_options_default(&o);
  tir_func_t *f = tir_func_new("ref");
  o.reference = f;
  json_t *j = NULL;
  assert_int_equal(mlc_measure_options_to_json(&j, &o), MLC_EINVAL);
  assert_error_has("reference");
  assert_null(j);
  o.reference = NULL;
  o.seed = UINT64_MAX;
  assert_int_equal(mlc_measure_options_to_json(&j, &o), MLC_EINVAL);
  assert_error_has("seed");
  tir_func_free(f);
}

static void test_device_keys(void **state) {
  (void)state;
  static const struct {
    const char *target, *key;
  } cases[] = {{"llvm -mcpu=skylake-avx512", "llvm-skylake-avx512"},
               {"llvm -mcpu=znver4 -num-cores=2", "llvm-znver4"},
               {"cuda -arch=sm_90", "cuda-sm90"},
               {"cuda -arch=sm_90a", "cuda-sm90a"},
               {"rocm -mcpu=gfx90a", "rocm-gfx90a"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    mlc_target_t t;
    char key[64];
    OK(mlc_target_parse(&t, cases[i].target));
    OK(mlc_device_key(key, sizeof key, &t));
    assert_string_equal(key, cases[i].key);
  }
  mlc_target_t host;
  mlc_target_host(&host);
  char key[64], want[80];
  OK(mlc_device_key(key, sizeof key, &host));
  snprintf(want, sizeof want, "llvm-%s", host.mcpu);
  assert_string_equal(key, want);
  assert_int_equal(mlc_device_key(key, 6, &host), MLC_ERANGE);
}

/* ------------------------------------------------------------------------ */
/* The CPU device                                                            */
/* ------------------------------------------------------------------------ */

/* A CPU feature this host lacks, or NULL when it has them all. */
static const char *missing_feature(void) {
  static const char *const candidates[] = {"avx512f", "amx-tile", "avx512fp16", "avx512bw", "avx2", "fma"};
  mlc_target_t host;
  mlc_target_host(&host);
  for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++)
    if (!mlc_target_has_feature(&host, candidates[i])) return candidates[i];
  return NULL;
}

static void test_cpu_device_discovery(void **state) {
  (void)state;
  worker_device_t dev;
  OK(worker_device_open(&dev, NULL, 0, NULL));
  mlc_target_t host;
  mlc_target_host(&host);
  char want[80];
  snprintf(want, sizeof want, "llvm-%s", host.mcpu);
  assert_string_equal(dev.device_key, want);
  assert_string_equal(dev.backend->name, "cpu");
  json_t *props = mlc_json_loads(dev.device_json, "device");
  assert_non_null(props);
  assert_int_equal(json_integer_value(json_object_get(props, "cores")), mlc_cpu_host_cores());
  assert_string_equal(json_string_value(json_object_get(props, "mcpu")), host.mcpu);
  assert_non_null(json_string_value(json_object_get(props, "cpu")));
  json_decref(props);
  assert_non_null(strstr(dev.worker_id, "-cpu0-")); /* HOST-cpu0-PID */
  OK(worker_device_open(&dev, &host, 0, "rack7-w3"));
  assert_string_equal(dev.worker_id, "rack7-w3");
  /* A named CPU this machine can run announces that name. */
  mlc_target_t generic;
  OK(mlc_target_parse(&generic, "llvm -mcpu=x86-64"));
  OK(worker_device_open(&dev, &generic, 0, NULL));
  assert_string_equal(dev.device_key, "llvm-x86-64");
}

static void test_cpu_device_refusals(void **state) {
  (void)state;
  worker_device_t dev;
  mlc_target_t t;
  assert_int_equal(worker_device_open(&dev, NULL, 1, NULL), MLC_ENOTFOUND);
  assert_error_has("one device");
  /* GPU targets go to the GPU backends (tests/workers/test_worker_gpu.c). */
  OK(mlc_target_parse(&t, "llvm -mtriple=aarch64-linux-gnu"));
  assert_int_equal(worker_device_open(&dev, &t, 0, NULL), MLC_EUNSUPPORTED);
  assert_error_has("architecture");
  const char *lacks = missing_feature();
  if (lacks) {
    char text[128];
    snprintf(text, sizeof text, "llvm -mcpu=x86-64 -mattr=+%s", lacks);
    OK(mlc_target_parse(&t, text));
    assert_int_equal(worker_device_open(&dev, &t, 0, NULL), MLC_EUNSUPPORTED);
    assert_error_has(lacks);
  }
  char long_id[100];
  memset(long_id, 'w', sizeof long_id - 1);
  long_id[sizeof long_id - 1] = '\0';
  assert_int_equal(worker_device_open(&dev, NULL, 0, long_id), MLC_ERANGE);
}

/* ------------------------------------------------------------------------ */
/* Jobs                                                                      */
/* ------------------------------------------------------------------------ */

/* A TVM user's tiling of GMM-32. */
static const char *GMM_TRACE =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "l4, l5 = sch.split(loop=l1, factors=[None, 8], preserve_unit_iters=True)\n"
    "l6, l7 = sch.split(loop=l2, factors=[None, 8], preserve_unit_iters=True)\n"
    "sch.reorder(l4, l6, l5, l3, l7)\n"
    "sch.parallel(loop=l4)\n"
    "sch.vectorize(loop=l7)\n";

/* A job as the farm transport makes it: GMM-32 under GMM_TRACE, the host's
 * canonical target, quick options with the correctness check. Free with
 * rpc_job_free. */
static rpc_job_t make_job(const worker_device_t *dev) {
  char target[512];
  mlc_measure_options_t o;
  mlc_measure_options_default(&o);
  o.number = 1;
  o.min_repeat_ms = 1;
  o.repeat = 2;
  o.check_correctness = true;
  return gmm_job("test-1", dev->device_key, mlc_target_str(&dev->target, target, sizeof target), 32, GMM_TRACE, &o);
}

static void assert_measured(const rpc_result_t *r, const worker_device_t *dev, const char *id) {
  if (r->error != MLC_ERROR_KIND_NONE) fprintf(stderr, "result: %s\n", r->message);
  assert_int_equal(r->error, MLC_ERROR_KIND_NONE);
  assert_string_equal(r->id, id);
  assert_int_equal(r->nrun_secs, 2);
  assert_true(r->run_secs[0] > 0 && r->run_secs[1] > 0);
  assert_true(r->build_secs > 0);
  assert_string_equal(r->worker_id, dev->worker_id);
  assert_string_equal(r->device_key, dev->device_key);
  assert_non_null(r->device_json);
  assert_non_null(strstr(r->device_json, "\"cores\""));
}

static void test_job_measured_and_checked(void **state) {
  (void)state;
  worker_device_t dev;
  OK(worker_device_open(&dev, NULL, 0, "w-test"));
  rpc_job_t job = make_job(&dev);
  rpc_result_t r;
  OK(worker_run_job(&dev, &job, &r));
  assert_measured(&r, &dev, "test-1");
  rpc_result_free(&r);
  rpc_job_free(&job);
}

/* What the measuring process does: the job through the codec both ways. */
static void test_job_through_the_wire_codec(void **state) {
  (void)state;
  worker_device_t dev;
  OK(worker_device_open(&dev, NULL, 0, "w-codec"));
  rpc_job_t job = make_job(&dev), decoded;
  json_t *jj = rpc_job_to_json(&job);
  assert_non_null(jj);
  OK(rpc_job_from_json(&decoded, jj));
  json_decref(jj);
  assert_string_equal(decoded.trace_json, job.trace_json); /* canonical text survives */
  rpc_result_t r, back;
  OK(worker_run_job(&dev, &decoded, &r));
  json_t *rj = rpc_result_to_json(&r);
  assert_non_null(rj);
  OK(rpc_result_from_json(&back, rj));
  json_decref(rj);
  assert_measured(&back, &dev, "test-1");
  assert_true(back.run_secs[0] == r.run_secs[0]);
  rpc_result_free(&r);
  rpc_result_free(&back);
  rpc_job_free(&decoded);
  rpc_job_free(&job);
}

static void test_job_in_the_measuring_process(void **state) {
  (void)state;
  worker_device_t dev;
  OK(worker_device_open(&dev, NULL, 0, "w-server"));
  worker_server_t *s = NULL;
  OK(worker_server_start(&s, &dev));
  rpc_job_t job = make_job(&dev);
  rpc_result_t r;
  OK(worker_server_run(s, &job, &r));
  assert_measured(&r, &dev, "test-1");
  rpc_result_free(&r);
  /* A bad job is answered too, and the process serves the next one. */
  free(job.workload);
  job.workload = mlc_strdup("not TVMScript");
  OK(worker_server_run(s, &job, &r));
  assert_int_equal(r.error, MLC_ERROR_KIND_BUILD);
  assert_non_null(strstr(r.message, "workload"));
  rpc_result_free(&r);
  rpc_job_free(&job);
  worker_server_stop(s);
}

/* Runs job on dev: a `build` error whose message has `what`. */
static void assert_refused(worker_device_t *dev, rpc_job_t *job, const char *what) {
  rpc_result_t r;
  OK(worker_run_job(dev, job, &r));
  if (!strstr(r.message, what)) fprintf(stderr, "message '%s' lacks '%s'\n", r.message, what);
  assert_int_equal(r.error, MLC_ERROR_KIND_BUILD);
  assert_non_null(strstr(r.message, what));
  assert_int_equal(r.nrun_secs, 0);
  assert_string_equal(r.id, job->id);
  assert_string_equal(r.worker_id, dev->worker_id);
  rpc_result_free(&r);
}

/* The canonical trace JSON of a trace in Python form (a static buffer). */
static const char *trace_json_of(const char *python) {
  static char buf[4096];
  sch_trace_t *t = NULL;
  OK(sch_trace_from_python(&t, python, strlen(python), "trace.py"));
  json_t *tj = NULL;
  OK(sch_trace_to_json(&tj, t));
  char *text = mlc_json_dumps(tj);
  snprintf(buf, sizeof buf, "%s", text);
  free(text);
  json_decref(tj);
  sch_trace_free(t);
  return buf;
}

/* Replaces *slot (mlc_free'd) with a copy of text. */
static void replace(char **slot, const char *text) {
  mlc_free(*slot);
  *slot = mlc_strdup(text);
}

static void test_bad_jobs_get_build_errors(void **state) {
  (void)state;
  worker_device_t dev;
  OK(worker_device_open(&dev, NULL, 0, "w-bad"));
  rpc_job_t job = make_job(&dev);
  char *good_workload = mlc_strdup(job.workload), *good_trace = mlc_strdup(job.trace_json);
  char *good_target = mlc_strdup(job.target);

  replace(&job.workload, "@T.prim_func\ndef main(:\n");
  assert_refused(&dev, &job, "workload:2:");
  replace(&job.workload, good_workload);
  replace(&job.trace_json, "[[[\"NoSuchKind\",[],[],[]]],[]]");
  assert_refused(&dev, &job, "trace");
  replace(&job.trace_json, trace_json_of("b0 = sch.get_block(name=\"Q\", func_name=\"main\")\n"));
  assert_refused(&dev, &job, "Q"); /* decodes, but names no block of the workload */
  replace(&job.trace_json, good_trace);
  replace(&job.target, "llvm -mcpu");
  assert_refused(&dev, &job, "target");
  replace(&job.target, good_target);
  json_object_set_new(job.options, "flush_caches", json_true());
  assert_refused(&dev, &job, "unknown key 'flush_caches'");
  json_object_del(job.options, "flush_caches");
  snprintf(job.device_key, sizeof job.device_key, "cuda-sm90");
  assert_refused(&dev, &job, "serves device key");
  snprintf(job.device_key, sizeof job.device_key, "%s", dev.device_key);
  const char *lacks = missing_feature();
  if (lacks) {
    char text[128];
    snprintf(text, sizeof text, "llvm -mcpu=%s -mattr=+%s", dev.target.mcpu, lacks);
    replace(&job.target, text);
    assert_refused(&dev, &job, lacks);
  }
  mlc_free(good_workload);
  mlc_free(good_trace);
  mlc_free(good_target);
  rpc_job_free(&job);
}

/* ------------------------------------------------------------------------ */
/* The program's usage errors (none of them connects anywhere)               */
/* ------------------------------------------------------------------------ */

static int worker_main(int argc, const char *const *argv) { return mlc_worker_main(argc, (char **)argv); }

static void test_program_usage(void **state) {
  (void)state;
  const char *help[] = {"mlc-worker", "--help"};
  assert_int_equal(worker_main(2, help), MLC_WORKER_EXIT_OK);
  const char *none[] = {"mlc-worker"};
  assert_int_equal(worker_main(1, none), MLC_WORKER_EXIT_USAGE);
  const char *unknown[] = {"mlc-worker", "--broker", "ipc:///tmp/x", "--bogus"};
  assert_int_equal(worker_main(4, unknown), MLC_WORKER_EXIT_USAGE);
  const char *device[] = {"mlc-worker", "--broker", "ipc:///tmp/x", "--device", "1"};
  assert_int_equal(worker_main(5, device), MLC_WORKER_EXIT_USAGE);
  const char *baddev[] = {"mlc-worker", "--broker", "ipc:///tmp/x", "--device", "one"};
  assert_int_equal(worker_main(5, baddev), MLC_WORKER_EXIT_USAGE);
  const char *target[] = {"mlc-worker", "--broker", "ipc:///tmp/x", "--target", "cuda -arch=sm_90"};
  assert_int_equal(worker_main(5, target), MLC_WORKER_EXIT_USAGE);
  const char *bad_target[] = {"mlc-worker", "--broker=ipc:///tmp/x", "--target=llvm -frob"};
  assert_int_equal(worker_main(3, bad_target), MLC_WORKER_EXIT_USAGE);
  const char *keys[] = {"mlc-worker", "--broker", "ipc:///tmp/x", "--curve-keys", "/tmp"};
  assert_int_equal(worker_main(5, keys), MLC_WORKER_EXIT_USAGE);
  const char *value[] = {"mlc-worker", "--broker"};
  assert_int_equal(worker_main(2, value), MLC_WORKER_EXIT_USAGE);
}

int main(void) {
  mlc_log_set_level(MLC_LOG_WARN);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_options_round_trip),
      cmocka_unit_test(test_options_refusals_name_the_key),
      cmocka_unit_test(test_device_keys),
      cmocka_unit_test(test_cpu_device_discovery),
      cmocka_unit_test(test_cpu_device_refusals),
      cmocka_unit_test(test_job_measured_and_checked),
      cmocka_unit_test(test_job_through_the_wire_codec),
      cmocka_unit_test(test_job_in_the_measuring_process),
      cmocka_unit_test(test_bad_jobs_get_build_errors),
      cmocka_unit_test(test_program_usage),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
