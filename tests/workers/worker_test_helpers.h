/*
 * worker_test_helpers.h - shared by the mlc-worker tests (test_worker_cpu.c,
 * test_worker_gpu.c): a status check that prints the error detail, error
 * text checks, and a job for a GMM candidate as the farm transport makes
 * it. Include after <cmocka.h>.
 */
#ifndef MLC_TESTS_WORKER_TEST_HELPERS_H
#define MLC_TESTS_WORKER_TEST_HELPERS_H

#include <stdio.h>
#include <string.h>

#include "workers/worker.h"
#include "tests/lib/check_ok.h"

/* The error detail contains `what`. */
static MLC_UNUSED void assert_error_has(const char *what) {
  if (!strstr(mlc_error_last(), what)) fprintf(stderr, "error '%s' lacks '%s'\n", mlc_error_last(), what);
  assert_non_null(strstr(mlc_error_last(), what));
}

/* A job `id` for GMM-n (float32) under the Python trace py, for device key
 * `key` and target text `target`, with options o. Free with rpc_job_free. */
static MLC_UNUSED rpc_job_t gmm_job(const char *id, const char *key, const char *target, int64_t n, const char *py,
                                    const mlc_measure_options_t *o) {
  rpc_job_t job;
  memset(&job, 0, sizeof job);
  snprintf(job.id, sizeof job.id, "%s", id);
  snprintf(job.device_key, sizeof job.device_key, "%s", key);
  tir_func_t *f = NULL;
  int64_t shape[3] = {n, n, n};
  tir_dtype_t none = {0, 0, 0};
  OK(tir_workload_build(&f, "GMM", shape, 3, tir_dt_FLOAT32(), none));
  job.workload = tir_print_func(f);
  tir_func_free(f);
  sch_trace_t *t = NULL;
  OK(sch_trace_from_python(&t, py, strlen(py), "trace.py"));
  json_t *tj = NULL;
  OK(sch_trace_to_json(&tj, t));
  job.trace_json = mlc_json_dumps(tj);
  json_decref(tj);
  sch_trace_free(t);
  job.target = mlc_strdup(target);
  OK(mlc_measure_options_to_json(&job.options, o));
  return job;
}

#endif /* MLC_TESTS_WORKER_TEST_HELPERS_H */
