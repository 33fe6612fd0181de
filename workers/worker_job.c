/*
 * worker_job.c - a farm job from the wire to a result (worker.h): decoding
 * (workload TVMScript, trace JSON, target string, measure options), the
 * device backends' table, opening a device, and worker_run_job, which every
 * backend shares: decode, refuse what the device cannot serve, measure,
 * describe where it ran.
 *
 * A job that cannot be measured here (bad text, a target this CPU lacks the
 * features for, a device key that is not this worker's) still gets a result:
 * a `build` error that says why. The tuner records it as a failed trial, as
 * it would a candidate that does not compile, and the run goes on; only a
 * worker that cannot measure at all (fork fails) is a transport problem.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "workers/worker.h"

/* ------------------------------------------------------------------------ */
/* Decoding                                                                  */
/* ------------------------------------------------------------------------ */

void worker_job_free(worker_job_t *job) {
  if (!job) return;
  tir_func_free(job->workload);
  sch_trace_free(job->trace);
  memset(job, 0, sizeof *job);
}

static int decode_workload(worker_job_t *out, const char *text) {
  if (!text) return mlc_error_set(MLC_EPARSE, "workload: missing");
  tir_parse_error_t perr;
  memset(&perr, 0, sizeof perr);
  int st = tir_parse_func(&out->workload, text, strlen(text), "workload", &perr);
  if (st != MLC_OK) return st; /* "workload:LINE:COL: ..." */
  st = tir_verify(out->workload, NULL);
  if (st != MLC_OK) mlc_error_prefix("workload: %s", out->workload->name);
  return st;
}

static int decode_trace(worker_job_t *out, const char *text) {
  return sch_trace_from_json_text(&out->trace, text, "trace");
}

int worker_job_decode(worker_job_t *out, const rpc_job_t *job) {
  if (!out || !job) return mlc_error_set(MLC_EINVAL, "job: NULL argument");
  memset(out, 0, sizeof *out);
  int st = decode_workload(out, job->workload);
  if (st == MLC_OK) st = decode_trace(out, job->trace_json);
  if (st == MLC_OK && (!job->target || mlc_target_parse(&out->target, job->target) != MLC_OK)) {
    st = job->target ? mlc_error_last_code() : mlc_error_set(MLC_EPARSE, "missing");
    mlc_error_prefix("target");
  }
  if (st == MLC_OK) st = mlc_measure_options_from_json(&out->opts, job->options);
  if (st != MLC_OK) worker_job_free(out);
  return st;
}

/* ------------------------------------------------------------------------ */
/* Devices                                                                   */
/* ------------------------------------------------------------------------ */

const worker_backend_t *worker_backend_for(mlc_target_kind_t kind) {
  static const worker_backend_t *const backends[] = {&worker_backend_cpu, &worker_backend_cuda, &worker_backend_rocm};
  for (size_t i = 0; i < sizeof backends / sizeof *backends; i++)
    if (backends[i]->kind == kind) return backends[i];
  return NULL;
}

static const char *kind_word(mlc_target_kind_t kind) {
  return kind == MLC_TARGET_LLVM ? "llvm" : kind == MLC_TARGET_CUDA ? "cuda" : "rocm";
}

int worker_device_open(worker_device_t *out, const mlc_target_t *target, int index, const char *worker_id) {
  if (!out) return mlc_error_set(MLC_EINVAL, "worker: NULL device");
  memset(out, 0, sizeof *out);
  mlc_target_kind_t kind = target ? target->kind : MLC_TARGET_LLVM;
  const worker_backend_t *b = worker_backend_for(kind);
  if (!b) return mlc_error_set(MLC_EUNSUPPORTED, "no %s device backend in this build", kind_word(kind));
  if (index < 0) return mlc_error_set(MLC_EINVAL, "device number %d is negative", index);
  out->backend = b;
  out->index = index;
  int st = b->discover(out, index, target);
  if (st != MLC_OK) return st;
  if (worker_id && *worker_id) {
    if (strlen(worker_id) >= sizeof out->worker_id)
      return mlc_error_set(MLC_ERANGE, "worker id longer than %zu bytes", sizeof out->worker_id - 1);
    snprintf(out->worker_id, sizeof out->worker_id, "%s", worker_id);
  } else {
    char host[40] = "localhost";
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    snprintf(out->worker_id, sizeof out->worker_id, "%s-%s%d-%ld", host, b->name, index, (long)getpid());
  }
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Running a job                                                             */
/* ------------------------------------------------------------------------ */

static void fail(rpc_result_t *out, mlc_error_kind_t kind, const char *fmt, ...) MLC_PRINTF(3, 4);
static void fail(rpc_result_t *out, mlc_error_kind_t kind, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  out->error = kind;
  vsnprintf(out->message, sizeof out->message, fmt, ap);
  va_end(ap);
  out->nrun_secs = 0;
}

static void copy_measurement(rpc_result_t *out, const mlc_measure_result_t *m) {
  out->error = m->error;
  snprintf(out->message, sizeof out->message, "%s", m->message);
  out->nrun_secs = m->error == MLC_ERROR_KIND_NONE ? m->nrun_secs : 0;
  for (int i = 0; i < out->nrun_secs; i++) out->run_secs[i] = m->run_secs[i];
  out->build_secs = m->build_secs;
}

/* Whether dev serves job (decoded as j); a `build` error in *out if not. */
static bool serves(worker_device_t *dev, const rpc_job_t *job, const worker_job_t *j, rpc_result_t *out) {
  if (strcmp(job->device_key, dev->device_key) != 0) {
    fail(out, MLC_ERROR_KIND_BUILD, "worker %s serves device key %s, not %s", dev->worker_id, dev->device_key,
         job->device_key);
    return false;
  }
  if (dev->backend->accepts(dev, &j->target) != MLC_OK) {
    fail(out, MLC_ERROR_KIND_BUILD, "worker %s cannot run target '%s': %s", dev->worker_id, job->target,
         mlc_error_last());
    return false;
  }
  return true;
}

int worker_run_job(worker_device_t *dev, const rpc_job_t *job, rpc_result_t *out) {
  if (!dev || !job || !out) return mlc_error_set(MLC_EINVAL, "worker: NULL argument");
  memset(out, 0, sizeof *out);
  snprintf(out->id, sizeof out->id, "%s", job->id);
  snprintf(out->worker_id, sizeof out->worker_id, "%s", dev->worker_id);
  snprintf(out->device_key, sizeof out->device_key, "%s", dev->device_key);
  out->device_json = mlc_strdup(dev->device_json);
  if (!out->device_json) return mlc_error_set(MLC_ENOMEM, "worker: out of memory");
  worker_job_t j;
  int st = worker_job_decode(&j, job);
  if (st == MLC_ENOMEM) return st;
  if (st != MLC_OK) {
    fail(out, MLC_ERROR_KIND_BUILD, "bad job: %s", mlc_error_last());
    return MLC_OK;
  }
  if (serves(dev, job, &j, out)) {
    mlc_measure_result_t m;
    memset(&m, 0, sizeof m);
    st = dev->backend->run(dev, &j, &m);
    if (st == MLC_OK) copy_measurement(out, &m);
    else fail(out, st == MLC_EIO || st == MLC_ENOMEM ? MLC_ERROR_KIND_CRASH : MLC_ERROR_KIND_BUILD, "%s",
              mlc_error_last());
    if (st != MLC_EIO && st != MLC_ENOMEM) st = MLC_OK; /* the candidate's failure, not the worker's */
  }
  worker_job_free(&j);
  return st;
}
