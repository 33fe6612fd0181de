/*
 * measure_internal.h - private to workers/measure*.c: the phases a job goes
 * through, the job itself (run in a forked child or in process), the kernel's
 * arguments (random inputs, DLTensors, the correctness check) and the timer.
 *
 * measure.c        public API: defaults, validation, median, dispatch
 * measure_child.c  fork, the pipe protocol, deadlines, reaping
 * measure_job.c    replay -> build -> load -> warm-up -> time -> check, whole
 *                  or in two halves (build to an object file; run one)
 * measure_args.c   argument buffers and the comparison with the interpreter
 * measure_timer.c  repeats and their batches of calls, cache flush
 * measure_gpu.c    the same on a GPU: device buffers, event timing, the
 *                  check through copies
 */
#ifndef MLC_WORKERS_MEASURE_INTERNAL_H
#define MLC_WORKERS_MEASURE_INTERNAL_H

#include <dlpack/dlpack.h>

#include "compiler/compiler.h"
#include "workers/measure.h"

/* What a job is doing; a crash or a timeout names the phase it hit.
 *      enum     name */
#define MEASURE_PHASES(X)            \
  X(BUILD,  "build")                 \
  X(WARMUP, "warm-up")               \
  X(TIMING, "timing")                \
  X(CHECK,  "correctness check")

typedef enum {
#define MEASURE_ENUM_(e, name) MEASURE_PHASE_##e,
  MEASURE_PHASES(MEASURE_ENUM_)
#undef MEASURE_ENUM_
  MEASURE_PHASE_COUNT
} measure_phase_t;

const char *measure_phase_name(measure_phase_t phase);

/* How a job tells its runner that it entered a phase. Entering WARMUP means
 * the build finished (build_secs is then its duration): the forked runner
 * starts the run timeout from that moment. */
typedef struct {
  void (*enter)(measure_phase_t phase, double build_secs, void *payload);
  void *payload;
} measure_reporter_t;

/* Seconds on CLOCK_MONOTONIC. */
double measure_now(void);

/* Sets out's error kind and message (printf-style). */
void measure_fail(mlc_measure_result_t *out, mlc_error_kind_t kind, const char *fmt, ...)
    MLC_PRINTF(3, 4);

/* Checks that workload (and opts->reference) can be measured: every
 * parameter a buffer of constant shape or a scalar, the reference's
 * parameters equal to the workload's. MLC_EINVAL with a detail. */
int measure_validate(const tir_func_t *workload, const mlc_measure_options_t *opts);

/* What a job does (the public call behind it). */
typedef enum {
  MEASURE_JOB_FULL,     /* mlc_measure: replay, build, load, run */
  MEASURE_JOB_BUILD,    /* mlc_measure_build: replay, build, write obj_path */
  MEASURE_JOB_PREBUILT, /* mlc_measure_prebuilt: load obj_path, run */
} measure_job_kind_t;

/* One job; everything borrowed. */
typedef struct {
  measure_job_kind_t kind;
  const tir_func_t *workload;
  const sch_trace_t *trace;           /* FULL, BUILD (NULL: as written) */
  const mlc_target_t *target;         /* FULL, BUILD */
  const mlc_measure_options_t *opts;  /* validated */
  const char *obj_path;               /* BUILD writes it, PREBUILT reads it */
} measure_job_t;

/* Runs one job; fills *out (error kind and message, or run_secs, and
 * build_secs: for PREBUILT the load alone). A BUILD job that fails removes
 * what it wrote. Never fails otherwise. */
void measure_job_run(mlc_measure_result_t *out, const measure_job_t *job, const measure_reporter_t *rep);

/* Runs the job in a forked child and waits for it with the deadlines of
 * DESIGN.md (build timeout from `job_start`, run timeout from the end of the
 * build, i.e. of the load for PREBUILT). MLC_OK with *out filled, or MLC_EIO
 * when pipe/fork failed. */
int measure_forked(mlc_measure_result_t *out, const measure_job_t *job, double job_start);

/* ------------------------------------------------------------------------ */
/* Arguments (measure_args.c)                                               */
/* ------------------------------------------------------------------------ */

typedef struct {
  int n;                  /* parameters, in order */
  DLTensor *tensors;      /* n: what the kernel gets */
  int64_t *shapes;        /* n * TIR_MAX_DIMS */
  tir_dtype_t *dtypes;    /* n */
  size_t *counts;         /* elements per parameter (1 for scalars) */
  bool *is_output;        /* written by the reference */
  void **raw;             /* n: allocations behind tensors[i].data */
  void **saved;           /* n: the inputs' random values, for the check */
  uint64_t seed;
} measure_args_t;

/* Allocates one 64-byte-aligned buffer per parameter (scalars get a slot):
 * inputs random in [1, 10) from `seed`, outputs (what `reference`, or the
 * workload when NULL, writes) zeroed; with keep_inputs, copies of the inputs
 * for the check. MLC_ENOMEM on failure (a is then empty). The workload must
 * have passed measure_validate. */
int measure_args_init(measure_args_t *a, const tir_func_t *workload, const tir_func_t *reference,
                      uint64_t seed, bool keep_inputs);
void measure_args_free(measure_args_t *a);
/* count values of dtype t in [1, 10): integers 1..9, floats uniform (below
 * 10 after rounding; 16-bit floats as bits), bool 0 or 1. */
void measure_fill_random(void *data, size_t count, tir_dtype_t t, mlc_rng_t *rng);

/* Stores executed by f if every loop runs its whole extent (an upper bound:
 * both branches of an if count); saturates at UINT64_MAX. */
uint64_t measure_count_stores(const tir_func_t *f);
/* The check's budget in stores: MLC_MEASURE_CHECK_BUDGET or 2^26. */
uint64_t measure_check_budget(void);

/* The correctness check: resets every buffer (inputs to their random
 * values, outputs to fresh random values so a kernel that never initialises
 * an accumulator is caught), runs the kernel once and `reference` in the
 * interpreter on a copy of the same state, and compares every buffer (floats
 * within rtol relative to max(1, |expected|), integers exactly). Fills out
 * with WRONG_RESULT (or RUN when the kernel fails) and returns false on a
 * difference. */
bool measure_check(mlc_measure_result_t *out, measure_args_t *a, mlc_packed_fn_t fn,
                   const tir_func_t *reference, double rtol);

/* ------------------------------------------------------------------------ */
/* Timer (measure_timer.c)                                                  */
/* ------------------------------------------------------------------------ */

/* Times fn: opts->repeat repeats, each of back-to-back calls lasting at
 * least opts->min_repeat_ms (measure_repeats), the caches flushed before
 * each repeat when opts->flush_cache. Fills out->run_secs (seconds per
 * call) and *number_out (the calls of the last repeat).
 * A nonzero return from the kernel fails the measurement (kind RUN). */
bool measure_time(mlc_measure_result_t *out, int *number_out, mlc_packed_fn_t fn, DLTensor *args,
                  int nargs, const mlc_measure_options_t *opts);

/* One batch of `number` calls to time (the cache flush, when asked and
 * starts_repeat, before the clock starts): true with *secs the batch's
 * wall time, or false with out filled (kind RUN). */
typedef bool (*measure_batch_fn)(void *ctx, mlc_measure_result_t *out, int number, bool starts_repeat,
                                 double *secs);

/* The repeat loop behind measure_time (and measure_gpu_run's timing):
 * opts->repeat repeats, each lasting at least opts->min_repeat_ms: batches
 * of calls back to back, the first of opts->number calls (in later repeats,
 * of the calls the previous repeat took), the next ones sized to reach the
 * threshold (measure_timer.c). Fills out->run_secs / nrun_secs (the mean
 * call of each repeat) and *number_out (the calls of the last repeat; may
 * be NULL). With opts->slow_secs set, a first repeat whose mean call is
 * longer is the only one (one run_secs entry). False when a batch failed
 * (out filled by it). */
bool measure_repeats(mlc_measure_result_t *out, int *number_out, const mlc_measure_options_t *opts,
                     measure_batch_fn batch, void *ctx);

/* Bytes written to flush the caches: 5/4 of the last-level cache
 * (sysconf(_SC_LEVEL3_CACHE_SIZE), else /sys), 64 MiB when unknown. */
size_t measure_flush_bytes(void);

/* ------------------------------------------------------------------------ */
/* GPUs (measure_gpu.c)                                                      */
/* ------------------------------------------------------------------------ */

/* Warm-up, timing and the check of a GPU target's host launcher fn on GPU
 * opts->device of `kind` (cuda or rocm): buffers in device memory with the
 * random values of measure_args_init, one warm-up call and a sync, timing
 * with the runtime's event timers (batches of calls as measure_time makes them,
 * the L2 flushed before each repeat with flush_cache), and measure_check
 * through a wrapper that copies the state to the device, runs fn, syncs and
 * copies every buffer back. Tells rep when it enters TIMING and CHECK.
 * Fills out as run() does for the CPU (a missing driver or device, an
 * allocation or a launch that fails, a kernel fault: RUN). */
void measure_gpu_run(mlc_measure_result_t *out, mlc_packed_fn_t fn, const tir_func_t *workload,
                     mlc_target_kind_t kind, const mlc_measure_options_t *opts, const measure_reporter_t *rep);

#endif /* MLC_WORKERS_MEASURE_INTERNAL_H */
