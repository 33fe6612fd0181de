/*
 * measure_gpu.c - timing a GPU target's kernel (measure_internal.h,
 * measure_gpu_run). The compiled function is the host launcher of the
 * DLPack ABI (compiler.h, GPU targets): it takes DLTensors whose data are
 * device pointers and launches the kernels through the runtime
 * (runtime/runtime.h) on the calling thread's stream. So here:
 *
 *   1. the host buffers of measure_args_init (random inputs in [1, 10),
 *      zeroed outputs) are mirrored in device memory and copied over;
 *      scalars stay 0-d host tensors, as the launcher reads them on the host;
 *   2. one warm-up call, then a sync, which is where a kernel's fault shows;
 *   3. repeats timed with the runtime's event timers around `number` calls,
 *      through the CPU path's repeat loop (measure_repeats: calls go on
 *      until one repeat lasts min_repeat_ms); with flush_cache the L2 is
 *      flushed (on the stream, before the start event) ahead of each repeat;
 *   4. the correctness check is measure_check itself, run through a wrapper
 *      with the packed signature that copies the host state to the device,
 *      calls the launcher, syncs and copies every buffer back, so the GPU
 *      kernel is held to exactly the CPU path's policy.
 *
 * The driver is loaded here, in the candidate's child: the measuring
 * process forks a child per candidate, and CUDA does not survive fork.
 */
#include <string.h>

#include "runtime/runtime.h"
#include "workers/measure_internal.h"

typedef struct {
  int32_t kind, device;
  mlc_packed_fn_t fn;
  measure_args_t *host;
  void **mem;          /* n: device buffers (NULL for scalars) */
  DLTensor *tensors;   /* n: what the launcher gets */
} gpu_args_t;

static int32_t runtime_kind(mlc_target_kind_t kind) {
  return kind == MLC_TARGET_CUDA ? MLC_RT_GPU_CUDA : MLC_RT_GPU_ROCM;
}

static const char *kind_name(int32_t kind) { return kind == MLC_RT_GPU_CUDA ? "CUDA" : "ROCm"; }

static size_t param_bytes(const measure_args_t *a, int p) {
  return a->counts[p] * (size_t)tir_dtype_bytes(a->dtypes[p]);
}

static bool is_buffer(const measure_args_t *a, int p) { return a->tensors[p].ndim > 0; }

/* A runtime failure as the result's RUN error. */
static bool failed(mlc_measure_result_t *out, const char *what) {
  measure_fail(out, MLC_ERROR_KIND_RUN, "%s: %s", what, *mlc_last_error() ? mlc_last_error() : "failed");
  return false;
}

static void gpu_args_free(gpu_args_t *g) {
  for (int p = 0; g->mem && p < g->host->n; p++) mlc_rt_gpu_free(g->kind, g->device, g->mem[p]);
  mlc_free(g->mem);
  mlc_free(g->tensors);
}

/* Device buffers mirroring g->host, with its current values. */
static bool gpu_args_init(mlc_measure_result_t *out, gpu_args_t *g) {
  const measure_args_t *a = g->host;
  size_t k = a->n ? (size_t)a->n : 1;
  g->mem = mlc_calloc(k, sizeof *g->mem);
  g->tensors = mlc_calloc(k, sizeof *g->tensors);
  if (!g->mem || !g->tensors) {
    measure_fail(out, MLC_ERROR_KIND_RUN, "arguments: out of memory");
    return false;
  }
  for (int p = 0; p < a->n; p++) {
    g->tensors[p] = a->tensors[p];
    if (!is_buffer(a, p)) continue;
    if (mlc_rt_gpu_alloc(g->kind, g->device, param_bytes(a, p), &g->mem[p]) != 0)
      return failed(out, "device memory");
    g->tensors[p].data = g->mem[p];
    g->tensors[p].device.device_type = (DLDeviceType)g->kind; /* kDLCUDA / kDLROCM */
    g->tensors[p].device.device_id = g->device;
  }
  return true;
}

/* Host values of every buffer to the device (to_device) or back. */
static int32_t transfer(const gpu_args_t *g, bool to_device) {
  const measure_args_t *a = g->host;
  for (int p = 0; p < a->n; p++) {
    if (!is_buffer(a, p)) continue;
    int32_t rc = to_device ? mlc_rt_gpu_copy_to_device(g->kind, g->device, g->mem[p], a->tensors[p].data,
                                                       param_bytes(a, p))
                           : mlc_rt_gpu_copy_to_host(g->kind, g->device, a->tensors[p].data, g->mem[p],
                                                     param_bytes(a, p));
    if (rc != 0) return rc;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The check: measure_check through copies                                   */
/* ------------------------------------------------------------------------ */

static _Thread_local const gpu_args_t *checking;

/* mlc_packed_fn_t over host tensors (measure_check's): the same state on the
 * device, one launch, everything back. */
static int32_t through_device(DLTensor *host_tensors, int32_t n) {
  const gpu_args_t *g = checking;
  (void)host_tensors; /* they are g->host->tensors */
  if (transfer(g, true) != 0) return -1;
  int32_t rc = g->fn(g->tensors, n);
  if (rc == 0) rc = mlc_rt_gpu_sync(g->kind, g->device);
  if (rc == 0) rc = transfer(g, false);
  return rc;
}

static void check(mlc_measure_result_t *out, const gpu_args_t *g, const tir_func_t *ref, double rtol) {
  checking = g;
  measure_check(out, g->host, through_device, ref, rtol);
  checking = NULL;
}

/* ------------------------------------------------------------------------ */
/* Timing                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct {
  const gpu_args_t *g;
  bool flush;
} gpu_batch_t;

/* measure_batch_fn on the GPU: seconds for `number` launches between two
 * events (after the L2 flush when asked, at a repeat's start). */
static bool timed_batch(void *ctx, mlc_measure_result_t *out, int number, bool starts_repeat, double *secs) {
  const gpu_batch_t *b = ctx;
  const gpu_args_t *g = b->g;
  if (b->flush && starts_repeat && mlc_rt_gpu_flush_l2(g->kind, g->device) != 0) return failed(out, "L2 flush");
  mlc_rt_gpu_timer_t *t = NULL;
  if (mlc_rt_gpu_timer_start(g->kind, g->device, &t) != 0) return failed(out, "timer");
  for (int i = 0; i < number; i++) {
    if (g->fn(g->tensors, g->host->n) != 0) {
      measure_fail(out, MLC_ERROR_KIND_RUN, "%s", *mlc_last_error() ? mlc_last_error() : "the kernel failed");
      mlc_rt_gpu_timer_stop(t, NULL);
      return false;
    }
  }
  if (mlc_rt_gpu_timer_stop(t, secs) != 0) return failed(out, "timer");
  return true;
}

/* The CPU path's repeat loop (measure_repeats) over event-timed batches. */
static bool time_kernel(mlc_measure_result_t *out, const gpu_args_t *g, const mlc_measure_options_t *opts) {
  gpu_batch_t b = {.g = g, .flush = opts->flush_cache};
  int number = 0;
  if (!measure_repeats(out, &number, opts, timed_batch, &b)) return false;
  MLC_DEBUG("measure: %d launches per repeat", number);
  return true;
}

/* ------------------------------------------------------------------------ */
/* The run                                                                   */
/* ------------------------------------------------------------------------ */

static void report(const measure_reporter_t *rep, measure_phase_t phase, double build_secs) {
  if (rep && rep->enter) rep->enter(phase, build_secs, rep->payload);
}

void measure_gpu_run(mlc_measure_result_t *out, mlc_packed_fn_t fn, const tir_func_t *workload,
                     mlc_target_kind_t kind, const mlc_measure_options_t *opts, const measure_reporter_t *rep) {
  gpu_args_t g = {.kind = runtime_kind(kind), .device = opts->device, .fn = fn};
  if (mlc_rt_gpu_init(g.kind) != 0) {
    measure_fail(out, MLC_ERROR_KIND_RUN, "no %s device: %s", kind_name(g.kind), mlc_last_error());
    return;
  }
  measure_args_t host;
  const tir_func_t *ref = opts->reference ? opts->reference : workload;
  if (measure_args_init(&host, workload, ref, opts->seed, opts->check_correctness) != MLC_OK) {
    measure_fail(out, MLC_ERROR_KIND_RUN, "arguments: %s", mlc_error_or("out of memory"));
    return;
  }
  g.host = &host;
  if (!gpu_args_init(out, &g)) goto done;
  if (transfer(&g, true) != 0) {
    failed(out, "copy to the device");
    goto done;
  }
  int32_t rc = fn(g.tensors, host.n);
  if (rc != 0 || mlc_rt_gpu_sync(g.kind, g.device) != 0) {
    failed(out, rc != 0 ? "launch" : "warm-up");
    goto done;
  }
  report(rep, MEASURE_PHASE_TIMING, out->build_secs);
  if (!time_kernel(out, &g, opts)) goto done;
  if (opts->check_correctness) {
    report(rep, MEASURE_PHASE_CHECK, out->build_secs);
    check(out, &g, ref, opts->rtol); /* clears run_secs on a failure */
  }
done:
  gpu_args_free(&g);
  measure_args_free(&host);
}
