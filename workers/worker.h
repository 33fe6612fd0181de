/*
 * worker.h - private to workers/: what mlc-worker is made of (DESIGN.md,
 * Measurement and Wire protocol; user guide docs/mlc-worker.md).
 *
 *   worker_job.c     a job off the wire decoded into what measurement takes
 *                    (workload, trace, target, options), the device backends'
 *                    table, and worker_run_job: decode, refuse what this
 *                    device cannot run, measure, fill the wire result
 *   worker_cpu.c     the CPU backend (llvm targets, mlc_measure)
 *   worker_server.c  the measuring process: jobs run in a single-threaded
 *                    process forked before ZeroMQ starts its threads
 *   cmd_worker.c     the program (cmd_worker.h)
 *
 * A device backend is a small vtable (STYLE.md): step 8 adds cuda and rocm
 * beside cpu without the worker switching on the kind anywhere else.
 */
#ifndef MLC_WORKERS_WORKER_H
#define MLC_WORKERS_WORKER_H

#include "rpc/rpc.h"
#include "schedule/schedule.h"
#include "workers/measure.h"
#include "workers/measure_wire.h"

/* A job decoded: everything owned (worker_job_free). */
typedef struct {
  tir_func_t *workload;
  sch_trace_t *trace;
  mlc_target_t target;
  mlc_measure_options_t opts;
} worker_job_t;

/* Decodes job: parses the workload TVMScript (exactly one function), the
 * trace JSON, the target string and the options (unknown keys refused).
 * MLC_EPARSE (or MLC_EINVAL) with "workload: FILE:LINE:COL: ...",
 * "trace: ...", "target: ..." or "measure options: ..." on bad input;
 * *out is then empty. */
int worker_job_decode(worker_job_t *out, const rpc_job_t *job);
void worker_job_free(worker_job_t *job); /* members; NULL is fine */

typedef struct worker_device worker_device_t;

/* One kind of device. */
typedef struct {
  const char *name;                 /* "cpu" */
  mlc_target_kind_t kind;           /* the targets it measures */
  /* Discovery: fills dev->target (target, or this device's own when NULL),
   * dev->device_key and dev->device_json for device number `index`.
   * MLC_ENOTFOUND when there is no such device, MLC_EUNSUPPORTED when it
   * cannot run target (the detail says why). */
  int (*discover)(worker_device_t *dev, int index, const mlc_target_t *target);
  /* MLC_OK when dev can run jobs for target, else MLC_EUNSUPPORTED with why. */
  int (*accepts)(const worker_device_t *dev, const mlc_target_t *target);
  /* Measures a decoded job: MLC_OK whenever *out holds a result (failed
   * candidates included); an error status only when the measurement could
   * not be attempted (fork failed, out of memory). */
  int (*run)(worker_device_t *dev, const worker_job_t *job, mlc_measure_result_t *out);
} worker_backend_t;

/* An opened device: plain data, closed with nothing to free. */
struct worker_device {
  const worker_backend_t *backend;
  int index;
  mlc_target_t target;        /* what it announces and measures for */
  char device_key[64];        /* mlc_device_key(&target) */
  char device_json[512];      /* properties announced in READY and in results */
  char worker_id[64];
};

extern const worker_backend_t worker_backend_cpu;
/* GPUs (worker_gpu.c): the driver is loaded at run time (runtime/runtime.h),
 * so these exist in every build; discover says "no CUDA driver ..." or
 * "no CUDA device" (MLC_ENOTFOUND) on a machine without one. Discovery and
 * measurement initialise the driver only in forked children: the measuring
 * process forks a child per candidate, and CUDA does not survive fork(). */
extern const worker_backend_t worker_backend_cuda;
extern const worker_backend_t worker_backend_rocm;

/* The backend for a kind of target. */
const worker_backend_t *worker_backend_for(mlc_target_kind_t kind);

/* Opens device `index` for target (NULL: the host CPU) under worker_id
 * (NULL: "<hostname>-<backend><index>-<pid>"). MLC_EUNSUPPORTED for a kind
 * with no backend or a target the device cannot run, MLC_ENOTFOUND for a
 * device number that does not exist. */
int worker_device_open(worker_device_t *out, const mlc_target_t *target, int index, const char *worker_id);

/* Runs one job off the wire on dev: *out gets the job's id, dev's worker id,
 * device key and properties (device_json: mlc_strdup'd, the result owns it),
 * and either run_secs or an error kind with its message. A job that does not
 * decode, or whose target or device key this device cannot serve, is a
 * `build` error naming why (the tuner records it as a failed trial). Returns
 * MLC_OK whenever *out holds a result; an error status only when
 * measurement could not be attempted at all. */
int worker_run_job(worker_device_t *dev, const rpc_job_t *job, rpc_result_t *out);

/* ------------------------------------------------------------------------ */
/* The measuring process (worker_server.c)                                   */
/* ------------------------------------------------------------------------ */

/* mlc_measure forks a child per candidate, and fork() from a process with
 * threads (ZeroMQ's I/O threads) can leave the child stuck on a lock one of
 * them held. So mlc-worker forks, before it opens any socket, a measuring
 * process with a single thread; the protocol thread hands it each job over a
 * pipe and reads the result back. */
typedef struct worker_server worker_server_t;

/* Forks the measuring process for dev (copied). Call before any thread
 * exists. MLC_EIO when pipe or fork fails. */
int worker_server_start(worker_server_t **out, const worker_device_t *dev);
/* Sends job, waits for its result (EINTR is retried: a signal asking the
 * worker to stop lets the running job finish). MLC_EIO when the measuring
 * process is gone (the result then says `crash`). */
int worker_server_run(worker_server_t *s, const rpc_job_t *job, rpc_result_t *out);
/* Closes the pipe (the process exits) and reaps it; NULL is fine. */
void worker_server_stop(worker_server_t *s);

#endif /* MLC_WORKERS_WORKER_H */
