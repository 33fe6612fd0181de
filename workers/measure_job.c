/*
 * measure_job.c - one measurement job, start to end: replay the trace on a
 * fresh schedule of the workload (with the trace's decisions), lower and
 * compile it (mlc_build), load it into the JIT, allocate the arguments, run
 * one warm-up call, time it, and check it against the reference interpreter
 * when asked. It runs in the forked child (measure_child.c) or in process,
 * and tells its runner which phase it is in, so that a crash or a timeout
 * can be blamed on a phase.
 *
 * The same steps also run as two jobs: BUILD stops after compiling and
 * writes the object file; PREBUILT loads such a file (mlc_jit_load_object)
 * and goes on from the warm-up. The machine code is the same bytes either
 * way (mlc_jit_load also links the object the module's target machine
 * emits), so the halves time what the whole job times.
 *
 * Every failure becomes the result's error kind and message; nothing here
 * returns an error status.
 */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "workers/measure_internal.h"

/* What the phases of one job share. */
typedef struct {
  const measure_reporter_t *rep;
  const char *name; /* the workload's, for log lines */
  double start;
} job_t;

static void enter(const job_t *job, measure_phase_t phase, double build_secs) {
  MLC_DEBUG("measure: %s: %s from %.3f s", job->name, measure_phase_name(phase),
            measure_now() - job->start);
  if (job->rep && job->rep->enter) job->rep->enter(phase, build_secs, job->rep->payload);
}

/* The schedule the trace describes (NULL trace: the workload as written). */
static sch_t *replay(mlc_measure_result_t *out, const tir_func_t *workload, const sch_trace_t *trace,
                     uint64_t seed) {
  sch_t *sch = NULL;
  mlc_error_clear();
  if (sch_create(&sch, workload, seed, SCH_ERRORS_FAST) != MLC_OK) {
    measure_fail(out, MLC_ERROR_KIND_BUILD, "schedule: %s", mlc_error_or("could not create the schedule"));
    return NULL;
  }
  if (trace && sch_trace_apply(sch, trace, true) != MLC_OK) {
    /* The last error names the instruction; sch_error only the primitive's complaint. */
    measure_fail(out, MLC_ERROR_KIND_BUILD, "trace: %s", mlc_error_or(sch_error(sch)));
    sch_free(sch);
    return NULL;
  }
  return sch;
}

/* Lowers and compiles the scheduled function; NULL after a failure. */
static mlc_module_t *build(mlc_measure_result_t *out, const tir_func_t *f, const mlc_target_t *target) {
  mlc_module_t *mod = NULL;
  mlc_strbuf_t notes;
  mlc_sb_init(&notes);
  mlc_lower_options_t lo = {.notes = &notes};
  tir_func_t *funcs[1] = {(tir_func_t *)f};
  mlc_error_clear();
  int rc = mlc_build(&mod, funcs, 1, target, &lo);
  if (notes.len) MLC_DEBUG("measure: %s: lowering notes:\n%s", f->name, mlc_sb_str(&notes));
  mlc_sb_free(&notes);
  if (rc == MLC_OK) return mod;
  measure_fail(out, MLC_ERROR_KIND_BUILD, "compile: %s", mlc_error_or(mlc_status_str(rc)));
  mlc_module_free(mod);
  return NULL;
}

/* The loaded kernel's entry point (NULL, and a failure, when absent). */
static mlc_packed_fn_t entry(mlc_measure_result_t *out, mlc_jit_t *jit, const char *name) {
  mlc_packed_fn_t fn = (mlc_packed_fn_t)mlc_jit_lookup(jit, name);
  if (!fn) measure_fail(out, MLC_ERROR_KIND_BUILD, "load: no symbol %s in the compiled module", name);
  return fn;
}

/* Lowers, compiles and loads the scheduled function; its entry point. */
static mlc_packed_fn_t compile(mlc_measure_result_t *out, mlc_jit_t **jit, const tir_func_t *f,
                               const mlc_target_t *target) {
  mlc_module_t *mod = build(out, f, target);
  if (!mod) return NULL;
  mlc_error_clear();
  if (mlc_jit_load(jit, mod) != MLC_OK) { /* the module is consumed either way */
    measure_fail(out, MLC_ERROR_KIND_BUILD, "load: %s", mlc_error_or("the JIT could not load the module"));
    return NULL;
  }
  return entry(out, *jit, f->name);
}

/* The kernel's error message after a nonzero return. */
static void kernel_failed(mlc_measure_result_t *out, int32_t rc) {
  const char *msg = mlc_last_error();
  if (msg && *msg) measure_fail(out, MLC_ERROR_KIND_RUN, "%s", msg);
  else measure_fail(out, MLC_ERROR_KIND_RUN, "the kernel returned %d", (int)rc);
}

static void job_enter(measure_phase_t phase, double build_secs, void *payload) {
  enter(payload, phase, build_secs);
}

/* The timed repeats after a warm-up of warm_secs; false when the kernel
 * failed (out says how). A slow kernel needs no batch of `number` calls to
 * hide the clock: a repeat starts with as many calls as the warm-up's time
 * says would last min_repeat_ms, when that is fewer (one when the warm-up
 * alone lasted that long; docs/compiler.md). A guess that falls short costs
 * nothing, since a short repeat goes on (measure_timer.c). A candidate of
 * seconds a call (a reduction recomputed under its consumer's loop) then
 * costs one call per repeat, and one of 60 ms two calls instead of three. */
static bool time_repeats(mlc_measure_result_t *out, mlc_packed_fn_t fn, measure_args_t *args,
                         const mlc_measure_options_t *opts, double warm_secs, const char *name) {
  mlc_measure_options_t timing = *opts;
  if (warm_secs > 0 && timing.min_repeat_ms > 0) {
    double calls = ceil(timing.min_repeat_ms * 1e-3 / warm_secs);
    if (calls < timing.number) timing.number = calls < 1 ? 1 : (int)calls;
  }
  int number;
  if (!measure_time(out, &number, fn, args->tensors, args->n, &timing)) return false;
  MLC_DEBUG("measure: %s: %d calls per repeat", name, number);
  return true;
}

/* Warm-up, timing and the check, on a built kernel (a GPU target's host
 * launcher goes to measure_gpu_run). */
static void run(mlc_measure_result_t *out, mlc_packed_fn_t fn, const tir_func_t *workload,
                const mlc_measure_options_t *opts, const job_t *job, mlc_target_kind_t kind) {
  if (kind != MLC_TARGET_LLVM) {
    measure_reporter_t rep = {.enter = job_enter, .payload = (void *)job};
    measure_gpu_run(out, fn, workload, kind, opts, &rep);
    return;
  }
  measure_args_t args;
  const tir_func_t *ref = opts->reference ? opts->reference : workload;
  if (measure_args_init(&args, workload, ref, opts->seed, opts->check_correctness) != MLC_OK) {
    measure_fail(out, MLC_ERROR_KIND_RUN, "arguments: %s", mlc_error_or("out of memory"));
    return;
  }
  double t0 = measure_now();
  int32_t rc = fn(args.tensors, args.n);
  double warm_secs = measure_now() - t0;
  if (rc != 0) {
    kernel_failed(out, rc);
    goto done;
  }
  enter(job, MEASURE_PHASE_TIMING, out->build_secs);
  if (opts->slow_secs > 0 && warm_secs > opts->slow_secs) {
    /* Far slower than the best known: its one call is the measurement. */
    out->run_secs[0] = warm_secs;
    out->nrun_secs = 1;
    MLC_DEBUG("measure: %s: the warm-up took %.3g s (more than %.3g s): timed by it alone", workload->name,
              warm_secs, opts->slow_secs);
  } else if (!time_repeats(out, fn, &args, opts, warm_secs, workload->name)) {
    goto done;
  }
  if (opts->check_correctness) {
    enter(job, MEASURE_PHASE_CHECK, out->build_secs);
    measure_check(out, &args, fn, ref, opts->rtol); /* clears run_secs on a failure */
  }
done:
  measure_args_free(&args);
}

/* FULL: the whole measurement. */
static void job_full(mlc_measure_result_t *out, const measure_job_t *j, const job_t *job) {
  mlc_jit_t *jit = NULL;
  sch_t *sch = replay(out, j->workload, j->trace, j->opts->seed);
  mlc_packed_fn_t fn = sch ? compile(out, &jit, sch_func(sch), j->target) : NULL;
  out->build_secs = measure_now() - job->start;
  if (fn) {
    enter(job, MEASURE_PHASE_WARMUP, out->build_secs);
    run(out, fn, j->workload, j->opts, job, j->target->kind);
  }
  mlc_jit_free(jit);
  sch_free(sch);
}

/* BUILD: replay, compile, write the object (nothing left behind on a
 * failure). */
static void job_build(mlc_measure_result_t *out, const measure_job_t *j, const job_t *job) {
  sch_t *sch = replay(out, j->workload, j->trace, j->opts->seed);
  mlc_module_t *mod = sch ? build(out, sch_func(sch), j->target) : NULL;
  if (mod) {
    mlc_error_clear();
    int rc = mlc_module_emit(mod, MLC_EMIT_OBJ, j->obj_path);
    if (rc != MLC_OK) measure_fail(out, MLC_ERROR_KIND_BUILD, "write: %s", mlc_error_or(mlc_status_str(rc)));
  }
  if (out->error != MLC_ERROR_KIND_NONE) unlink(j->obj_path);
  out->build_secs = measure_now() - job->start;
  mlc_module_free(mod);
  sch_free(sch);
}

/* PREBUILT: load the object, then as FULL from the warm-up on; build_secs
 * is the load. */
static void job_prebuilt(mlc_measure_result_t *out, const measure_job_t *j, const job_t *job) {
  mlc_jit_t *jit = NULL;
  mlc_packed_fn_t fn = NULL;
  mlc_error_clear();
  if (mlc_jit_load_object(&jit, j->obj_path) != MLC_OK)
    measure_fail(out, MLC_ERROR_KIND_BUILD, "load: %s", mlc_error_or("the JIT could not load the object"));
  else
    fn = entry(out, jit, j->workload->name);
  out->build_secs = measure_now() - job->start;
  if (fn) {
    enter(job, MEASURE_PHASE_WARMUP, out->build_secs);
    run(out, fn, j->workload, j->opts, job, j->opts->prebuilt_kind);
  }
  mlc_jit_free(jit);
}

void measure_job_run(mlc_measure_result_t *out, const measure_job_t *j, const measure_reporter_t *rep) {
  static void (*const kinds[])(mlc_measure_result_t *, const measure_job_t *, const job_t *) = {
      [MEASURE_JOB_FULL] = job_full, [MEASURE_JOB_BUILD] = job_build, [MEASURE_JOB_PREBUILT] = job_prebuilt};
  memset(out, 0, sizeof *out);
  job_t job = {.rep = rep, .name = j->workload->name, .start = measure_now()};
  kinds[j->kind](out, j, &job);
  MLC_DEBUG("measure: %s: done at %.3f s", job.name, measure_now() - job.start);
}
