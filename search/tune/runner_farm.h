/*
 * runner_farm.h - the farm transport and the local farm (DESIGN.md, Wire
 * protocol: "For a single machine, mlc-tune starts a broker thread and N
 * local workers on ipc:// endpoints itself; the same code paths run on one
 * machine and on a fleet"). User guide: docs/farm.md.
 *
 * Interim private header: ms_runner_farm moves into search/search.h, beside
 * ms_runner_local, when its owner merges it.
 *
 * Errors: functions return an mlc status; the detail is in mlc_error_last().
 */
#ifndef MLC_SEARCH_TUNE_RUNNER_FARM_H
#define MLC_SEARCH_TUNE_RUNNER_FARM_H

#include "search/search.h"

/* Measures through an mlc-broker at `endpoint` (rpc_client_t): each batch is
 * one SUBMIT of jobs carrying the workload's canonical TVMScript, the full
 * trace JSON, the canonical target string and the measure options, addressed
 * to the device key of the job's target (mlc_device_key: "llvm-<mcpu>", as
 * ms_runner_local names the host). run() returns when every job has its
 * result; results come back in any order and each is delivered once, also
 * when a worker dies (the broker re-queues its job) or the broker restarts
 * (the client resubmits). run() fails (MLC_ETIMEOUT) only when the broker is
 * unreachable for MS_FARM_UNREACHABLE_MS.
 *
 * curve_keys/key_name: CURVE as for rpc_client_open (both NULL: plaintext).
 * target is copied (device_key is its key; device_json and worker_id are
 * filled from the results of each batch: the one worker's id, or
 * "<first id>+<n more>" when several measured it). opts is copied (NULL:
 * defaults) and must be sendable (mlc_measure_options_to_json: no
 * `reference`). The connection is made lazily by ZeroMQ: a broker that is
 * not up yet is not an error here. */
#define MS_FARM_UNREACHABLE_MS 60000
int ms_runner_farm(ms_runner_t **out, const char *endpoint, const char *curve_keys, const char *key_name,
                   const mlc_target_t *target, const mlc_measure_options_t *opts);

/* For a SIGINT handler (async-signal-safe: it only reads and sets flags).
 * When runner is a farm runner waiting for a batch of which nothing has come
 * back yet (no worker for its device key, say), makes run() give the batch
 * up at once: it returns MLC_OK with every job a CRASH result whose message
 * is "not measured: the tuner was interrupted" (ms_tune drops those: they
 * are neither recorded nor counted), and the broker drops the jobs when the
 * client goes. True when it did; false otherwise (not a farm runner, no
 * batch running, or results have come back: the batch is worth finishing). */
bool ms_runner_farm_interrupt(ms_runner_t *runner);

/* A local farm: a broker thread bound to an ipc:// endpoint in a fresh
 * private directory under $TMPDIR (or /tmp), and `workers` mlc-worker
 * processes connected to it, each announcing `target`. The workers are
 * fork+exec'd (only exec-safe calls between fork and exec, so the broker's
 * threads do not matter), in their own process group (a Ctrl-C at the
 * terminal is the tuner's to handle, not theirs) and with SIGTERM as their
 * parent-death signal; their log level is warn unless MLC_LOG says
 * otherwise. worker_exe: the mlc-worker to run; NULL looks beside the
 * running program (/proc/self/exe), then on $PATH. Returns once every
 * worker has said READY to the broker (MLC_ETIMEOUT after 30 s; a worker
 * that exits first is an MLC_EIO naming its exit status). */
typedef struct ms_local_farm ms_local_farm_t;
int ms_local_farm_start(ms_local_farm_t **out, int workers, const mlc_target_t *target, const char *worker_exe);
/* "ipc:///tmp/mlc-farm-XXXXXX/broker" (borrowed from the farm). */
const char *ms_local_farm_endpoint(const ms_local_farm_t *f);
/* SIGTERM to the workers (they finish their running job), SIGKILL after 5 s,
 * then the broker stops and the directory is removed. NULL is fine. */
void ms_local_farm_stop(ms_local_farm_t *f);

#endif /* MLC_SEARCH_TUNE_RUNNER_FARM_H */
