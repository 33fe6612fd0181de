/*
 * measure.c - the measurement library's entry points (workers/measure.h):
 * option defaults, the median, argument validation, and the choice between
 * running the job in a forked child (the default: a crash or hang costs only
 * that candidate) and in process (tests and debugging).
 *
 * The job's clock starts when mlc_measure is called: a worker calls it when
 * it takes a job, so time spent queued never counts (DESIGN.md, Lessons).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
  opts->check_correctness = false;
  opts->rtol = 1e-4;
  opts->seed = 1;
  opts->in_process = false;
  opts->reference = NULL;
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
  if (!(o->rtol >= 0)) return mlc_error_set(MLC_EINVAL, "measure: rtol is %g, must be >= 0", o->rtol);
  return MLC_OK;
}

int mlc_measure(mlc_measure_result_t *out, const tir_func_t *workload, const sch_trace_t *trace,
                const mlc_target_t *target, const mlc_measure_options_t *opts) {
  double start = measure_now();
  mlc_measure_options_t o;
  if (opts) o = *opts;
  else mlc_measure_options_default(&o);
  if (!out || !workload || !target) return mlc_error_set(MLC_EINVAL, "measure: NULL argument");
  memset(out, 0, sizeof *out);
  if (target->kind != MLC_TARGET_LLVM)
    return mlc_error_set(MLC_EUNSUPPORTED, "measure: only llvm (CPU) targets are measured here");
  int rc = validate_options(&o);
  if (rc == MLC_OK) rc = measure_validate(workload, &o);
  if (rc != MLC_OK) return rc;
  if (o.in_process) {
    measure_job_run(out, workload, trace, target, &o, NULL);
    return MLC_OK;
  }
  return measure_forked(out, workload, trace, target, &o, start);
}
