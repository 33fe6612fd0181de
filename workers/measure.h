/*
 * measure.h - honest measurement of one candidate kernel (DESIGN.md,
 * Measurement): replay the trace on the workload, lower, compile, load, fill
 * inputs with random values in [1, 10), warm up, time, and optionally check
 * the result against the reference interpreter. Each candidate runs in a
 * forked child so a crash or a hang is reported as an error kind and the
 * caller survives. Workers (step 6) and local tuning (step 5) call this.
 *
 * The same measurement also comes in two halves, for callers that build
 * many candidates at once and time them one at a time (the local runner of
 * mlc-tune, as TVM's LocalBuilder and LocalRunner): mlc_measure_build
 * compiles a candidate into an object file, mlc_measure_prebuilt loads that
 * object and times it. Together they give what mlc_measure gives.
 */
#ifndef MLC_WORKERS_MEASURE_H
#define MLC_WORKERS_MEASURE_H

#include "schedule/schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MLC_MEASURE_MAX_REPEAT 64

typedef struct {
  int number;            /* calls a repeat starts with (default 3); more follow
                            until the repeat lasts min_repeat_ms */
  int repeat;            /* repeats, each giving one run_secs entry (default 1) */
  int min_repeat_ms;     /* default 100 */
  bool flush_cache;      /* flush the caches between repeats (default false): the
                            CPU's caches, or on a GPU its L2 (mlc_rt_gpu_flush_l2) */
  double build_timeout_s;/* default 30; counted from the start of the job */
  double run_timeout_s;  /* default 30; counted from the end of the build */
  double slow_secs;      /* > 0: a warm-up call longer than this is the
                            measurement (run_secs = its time alone) and no
                            repeat follows: a candidate far slower than the
                            best known costs one call, not two or more
                            (default 0: off). On a GPU, whose warm-up also
                            loads the module, a first repeat whose mean call
                            is longer is the only one instead; the tuner sets
                            it per task (ms_job_t.slow_secs). */
  bool check_correctness;/* compare outputs with tir_interp_run (default false) */
  double rtol;           /* tolerance of that check for floats (default 1e-4;
                            1e-2 for float16/bfloat16) */
  uint64_t seed;         /* inputs' RNG seed (default 1) */
  bool in_process;       /* no fork (tests and debugging only) */
  const tir_func_t *reference; /* what the check runs in the interpreter
                            (default NULL: the workload itself, unscheduled);
                            same parameters (count, dtypes, shapes) as the
                            workload: checks a hand-written kernel against a
                            specification. Borrowed. */
  int device;            /* GPU targets: which device of the target's kind, as
                            the driver numbers them (default 0). Not sent on the
                            wire: a worker measures on its own --device. */
  mlc_target_kind_t prebuilt_kind; /* mlc_measure_prebuilt: the kind of target
                            the object was built for (default MLC_TARGET_LLVM:
                            the host CPU; cuda/rocm: run on GPU `device`) */
} mlc_measure_options_t;

/* The defaults above. */
void mlc_measure_options_default(mlc_measure_options_t *opts);

typedef struct {
  mlc_error_kind_t error;     /* MLC_ERROR_KIND_NONE when measured */
  char message[1024];         /* what went wrong (empty when measured) */
  int nrun_secs;
  double run_secs[MLC_MEASURE_MAX_REPEAT]; /* seconds per run, one per repeat */
  double build_secs;          /* replay + lower + codegen + load */
} mlc_measure_result_t;

/* Median of run_secs (the one statistic used everywhere); 0 when none. */
double mlc_measure_median(const mlc_measure_result_t *r);

/* Measures `trace` applied to `workload` for `target`: on the host CPU for
 * an llvm target; on GPU opts->device for a cuda or rocm target (the
 * driver loaded in the candidate's child, never in the caller: see
 * runtime.h on fork; buffers in device memory filled from the same random
 * host values, one warm-up launch and a sync, then repeats timed with GPU
 * events, the L2 flushed before each repeat with flush_cache, the check
 * run on outputs copied back; a driver that is missing or a device that
 * does not exist is a `run` error naming it). Returns MLC_OK whenever a result was produced, including
 * failed candidates (their error kind says why); an error status only when
 * the measurement itself could not be attempted (bad arguments, fork failed). */
int mlc_measure(mlc_measure_result_t *out, const tir_func_t *workload, const sch_trace_t *trace,
                const mlc_target_t *target, const mlc_measure_options_t *opts);

/* The first half of mlc_measure: replays `trace` on `workload`, lowers and
 * compiles it for `target` (an llvm target) and writes the object file to
 * obj_path (created or overwritten), in a forked child under
 * opts->build_timeout_s counted from the call (in process with
 * opts->in_process). *out says how it went, with mlc_measure's error kinds
 * and messages: NONE (built; build_secs is replay + lower + codegen + write,
 * nrun_secs 0), BUILD (the trace does not replay, the code does not compile,
 * or the file cannot be written), TIMEOUT or CRASH; after a failure nothing
 * is left at obj_path. Only opts' build fields matter here, but pass the
 * same opts to mlc_measure_prebuilt. Returns as mlc_measure does: MLC_OK
 * whenever *out was filled; MLC_EINVAL/MLC_EUNSUPPORTED for bad arguments
 * (as mlc_measure, and a NULL or empty obj_path), MLC_EIO when pipe or fork
 * failed. */
int mlc_measure_build(mlc_measure_result_t *out, const char *obj_path, const tir_func_t *workload,
                      const sch_trace_t *trace, const mlc_target_t *target,
                      const mlc_measure_options_t *opts);

/* The second half: loads the object mlc_measure_build wrote at obj_path
 * (mlc_jit_load_object), then warms up, times and optionally checks the
 * kernel (the workload's name is its symbol) exactly as mlc_measure does, in
 * a forked child: the load must end within opts->build_timeout_s of the
 * call, the rest within opts->run_timeout_s of the end of the load. `built`
 * (borrowed; may be NULL, or out itself) is that build's result: when it is
 * a failure it is copied to *out and nothing runs; otherwise
 * out->build_secs is its build_secs plus the load, as mlc_measure counts
 * them. A missing or bad object is a BUILD failure ("load: ..."). The file
 * is only read. Returns as mlc_measure does. */
int mlc_measure_prebuilt(mlc_measure_result_t *out, const mlc_measure_result_t *built, const char *obj_path,
                         const tir_func_t *workload, const mlc_measure_options_t *opts);

#ifdef __cplusplus
}
#endif
#endif /* MLC_WORKERS_MEASURE_H */
