/*
 * measure.c - the measurement library's entry points (workers/measure.h):
 * option defaults, the median, argument validation, and the choice between
 * running the job in a forked child (the default: a crash or hang costs only
 * that candidate) and in process (tests and debugging).
 *
 * The job's clock starts when mlc_measure is called: a worker calls it when
 * it takes a job, so time spent queued never counts (DESIGN.md, Lessons).
 * The two halves, mlc_measure_build and mlc_measure_prebuilt, each start
 * their own clock: a build waits for no other, and a run's deadlines are
 * counted from its own load.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "workers/measure_internal.h"

static const char *const phase_names[] = {
#define MEASURE_NAME_(e, name) name,
    MEASURE_PHASES(MEASURE_NAME_)
#undef MEASURE_NAME_
};

const char *measure_phase_name(measure_phase_t phase) {
  return (int)phase >= 0 && (int)phase < (int)MEASURE_PHASE_COUNT ? phase_names[phase] : "unknown phase";
}

double measure_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void measure_fail(mlc_measure_result_t *out, mlc_error_kind_t kind, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  out->error = kind;
  vsnprintf(out->message, sizeof out->message, fmt, ap);
  va_end(ap);
  out->nrun_secs = 0;
}

void mlc_measure_options_default(mlc_measure_options_t *opts) {
  memset(opts, 0, sizeof *opts);
  opts->number = 3;
  opts->repeat = 1;
  opts->min_repeat_ms = 100;
  opts->flush_cache = false;
  opts->build_timeout_s = 30;
  opts->run_timeout_s = 30;
  opts->slow_secs = 0;
  opts->check_correctness = false;
  opts->rtol = 1e-4;
  opts->seed = 1;
  opts->in_process = false;
  opts->reference = NULL;
  opts->device = 0;
  opts->prebuilt_kind = MLC_TARGET_LLVM;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double mlc_measure_median(const mlc_measure_result_t *r) {
  int n = r->nrun_secs;
  if (n <= 0 || n > MLC_MEASURE_MAX_REPEAT) return 0;
  double v[MLC_MEASURE_MAX_REPEAT];
  memcpy(v, r->run_secs, (size_t)n * sizeof *v);
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int validate_options(const mlc_measure_options_t *o) {
  if (o->number < 1) return mlc_error_set(MLC_EINVAL, "measure: number is %d, must be >= 1", o->number);
  if (o->repeat < 1 || o->repeat > MLC_MEASURE_MAX_REPEAT)
    return mlc_error_set(MLC_EINVAL, "measure: repeat is %d, must be in [1, %d]", o->repeat,
                         MLC_MEASURE_MAX_REPEAT);
  if (o->min_repeat_ms < 0)
    return mlc_error_set(MLC_EINVAL, "measure: min_repeat_ms is %d, must be >= 0", o->min_repeat_ms);
  if (!(o->build_timeout_s > 0) || !(o->run_timeout_s > 0))
    return mlc_error_set(MLC_EINVAL, "measure: timeouts must be positive (build %g s, run %g s)",
                         o->build_timeout_s, o->run_timeout_s);
  if (!(o->slow_secs >= 0) || !isfinite(o->slow_secs))
    return mlc_error_set(MLC_EINVAL, "measure: slow_secs is %g, must be >= 0 (0: off)", o->slow_secs);
  if (!(o->rtol >= 0)) return mlc_error_set(MLC_EINVAL, "measure: rtol is %g, must be >= 0", o->rtol);
  if (o->device < 0) return mlc_error_set(MLC_EINVAL, "measure: device is %d, must be >= 0", o->device);
  return MLC_OK;
}

/* Copies opts (or the defaults) into *o and checks the arguments every
 * entry point shares, in mlc_measure's order: NULLs, the target (unless
 * need_target is false), the options, the workload. Clears *out. */
static int prepare(mlc_measure_options_t *o, mlc_measure_result_t *out, const tir_func_t *workload,
                   const mlc_target_t *target, bool need_target, const mlc_measure_options_t *opts) {
  if (opts) *o = *opts;
  else mlc_measure_options_default(o);
  if (!out || !workload || (need_target && !target)) return mlc_error_set(MLC_EINVAL, "measure: NULL argument");
  memset(out, 0, sizeof *out);
  if (need_target && target->kind != MLC_TARGET_LLVM && target->kind != MLC_TARGET_CUDA &&
      target->kind != MLC_TARGET_ROCM)
    return mlc_error_set(MLC_EUNSUPPORTED, "measure: target kind %d is not measured here", (int)target->kind);
  int rc = validate_options(o);
  return rc == MLC_OK ? measure_validate(workload, o) : rc;
}

static int check_path(const char *obj_path) {
  return obj_path && *obj_path ? MLC_OK : mlc_error_set(MLC_EINVAL, "measure: no object file path");
}

/* Runs the job in a child, or in process when asked. */
static int dispatch(mlc_measure_result_t *out, const measure_job_t *job, double start) {
  if (!job->opts->in_process) return measure_forked(out, job, start);
  measure_job_run(out, job, NULL);
  return MLC_OK;
}

int mlc_measure(mlc_measure_result_t *out, const tir_func_t *workload, const sch_trace_t *trace,
                const mlc_target_t *target, const mlc_measure_options_t *opts) {
  double start = measure_now();
  mlc_measure_options_t o;
  int rc = prepare(&o, out, workload, target, true, opts);
  if (rc != MLC_OK) return rc;
  measure_job_t job = {MEASURE_JOB_FULL, workload, trace, target, &o, NULL};
  return dispatch(out, &job, start);
}

int mlc_measure_build(mlc_measure_result_t *out, const char *obj_path, const tir_func_t *workload,
                      const sch_trace_t *trace, const mlc_target_t *target,
                      const mlc_measure_options_t *opts) {
  double start = measure_now();
  mlc_measure_options_t o;
  int rc = prepare(&o, out, workload, target, true, opts);
  if (rc == MLC_OK) rc = check_path(obj_path);
  if (rc != MLC_OK) return rc;
  measure_job_t job = {MEASURE_JOB_BUILD, workload, trace, target, &o, obj_path};
  rc = dispatch(out, &job, start);
  /* A child killed while writing leaves part of a file. */
  if (rc == MLC_OK && out->error != MLC_ERROR_KIND_NONE) unlink(obj_path);
  return rc;
}

int mlc_measure_prebuilt(mlc_measure_result_t *out, const mlc_measure_result_t *built, const char *obj_path,
                         const tir_func_t *workload, const mlc_measure_options_t *opts) {
  double start = measure_now();
  mlc_measure_result_t b; /* built may be out itself */
  if (built) b = *built;
  mlc_measure_options_t o;
  int rc = prepare(&o, out, workload, NULL, false, opts);
  if (rc == MLC_OK) rc = check_path(obj_path);
  if (rc != MLC_OK) return rc;
  if (built && b.error != MLC_ERROR_KIND_NONE) {
    *out = b;
    out->message[sizeof out->message - 1] = '\0';
    out->nrun_secs = 0;
    return MLC_OK;
  }
  measure_job_t job = {MEASURE_JOB_PREBUILT, workload, NULL, NULL, &o, obj_path};
  rc = dispatch(out, &job, start);
  if (rc == MLC_OK && built) out->build_secs += b.build_secs;
  return rc;
}
