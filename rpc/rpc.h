/*
 * rpc.h - the tuning farm's wire protocol over ZeroMQ (DESIGN.md, Wire
 * protocol): the message codec, the broker, and the worker and client sides.
 * Majordomo-style routing with Paranoid-Pirate liveness:
 *
 *   mlc-tune (client, DEALER) ──SUBMIT──► mlc-broker (ROUTER) ──JOB──► mlc-worker (DEALER)
 *                             ◄─RESULT──                     ◄RESULT──
 *
 * Every message is frames [protocol tag "MLC01"][command byte][JSON body]
 * (a ROUTER adds the peer's identity in front). Every message received is
 * validated (tag, command, JSON shape, size <= MLC_RPC_MAX_MESSAGE); a bad one
 * is answered with ERROR and logged, never crashes the receiver.
 *
 * This folder knows nothing of measurement: a worker runs jobs through a
 * callback (workers/ supplies mlc_measure), a client hands results to its
 * caller (search/ wraps it as an ms_runner_t).
 *
 * Errors: functions return an mlc status; the detail is in mlc_error_last().
 */
#ifndef MLC_RPC_H
#define MLC_RPC_H

#include "support/support.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MLC_RPC_PROTOCOL "MLC01"
#define MLC_RPC_MAX_MESSAGE (16u << 20)  /* bytes of one message's JSON body */
#define MLC_RPC_DEFAULT_BIND "tcp://*:5555"
#define MLC_RPC_HEARTBEAT_MS 1000        /* both ways */
#define MLC_RPC_LIVENESS 3               /* heartbeats missed: the peer is dead */
#define MLC_RPC_MAX_RETRIES 2            /* re-queues of a job whose worker died */

/* Commands (the byte after the tag). Bodies, as JSON objects:
 *   READY      worker→broker  {"device_key", "device":{...}, "capacity":N, "worker_id",
 *                             "prefetch":P optional, default 0}
 *                             (again with capacity 0 when the worker is stopping:
 *                             no new jobs; its running ones' results follow)
 *   HEARTBEAT  both ways      {}; the broker's carries {"heartbeat_ms", "liveness"},
 *                             which workers and clients adopt
 *   SUBMIT     client→broker  {"jobs":[job, ...]}                 (rpc_job_t)
 *   ACCEPTED   broker→client  {"ids":[...]}
 *   BUSY       broker→client  {"ids":[...], "reason":"..."}       (queue bound reached)
 *   JOB        broker→worker  job
 *   RESULT     worker→broker→client  result                      (rpc_result_t)
 *   ERROR      any            {"message":"...", "id":... optional}
 *   STATS      client→broker  {} ; reply STATS {per device key: ...}
 *   DISCONNECT any            {}   (orderly goodbye)
 */
typedef enum {
  RPC_READY = 1,
  RPC_HEARTBEAT,
  RPC_SUBMIT,
  RPC_ACCEPTED,
  RPC_BUSY,
  RPC_JOB,
  RPC_RESULT,
  RPC_ERROR,
  RPC_STATS,
  RPC_DISCONNECT,
  RPC_CMD_COUNT
} rpc_cmd_t;

const char *rpc_cmd_name(rpc_cmd_t cmd); /* "READY"; "?" when out of range */

/* ------------------------------------------------------------------------ */
/* Codec                                                                     */
/* ------------------------------------------------------------------------ */

/* A decoded message. body is owned (json_decref). */
typedef struct {
  rpc_cmd_t cmd;
  json_t *body;
} rpc_msg_t;

/* Decodes and validates the frames after any routing identity: frame 0 the
 * tag, frame 1 one command byte, frame 2 the JSON body (an object). The
 * command's body shape is checked (required keys and their JSON types), so a
 * message that decodes is safe to read. MLC_EPARSE with what was wrong
 * ("frame 2: body is not JSON: ...", "SUBMIT: jobs[3].trace: expected a
 * JSON array") on any violation. Fuzzed (fuzz/). */
int rpc_msg_decode(rpc_msg_t *out, const void *const *frames, const size_t *lens, int nframes);
/* rpc_msg_decode, except that the body of a command in raw_cmds (bit
 * 1 << cmd) is neither parsed nor checked: out->body is NULL and the caller
 * checks the body text itself before use. */
int rpc_msg_decode_raw(rpc_msg_t *out, const void *const *frames, const size_t *lens, int nframes,
                       unsigned raw_cmds);
/* Encodes body (borrowed) as the 3 frames; *text is the JSON (mlc_free). */
int rpc_msg_encode_body(char **text, size_t *len, const json_t *body);

/* A measurement job as the wire carries it. Strings owned by whoever filled
 * it (rpc_job_free for decoded ones). */
typedef struct {
  char id[40];              /* unique per client (client id + counter) */
  char device_key[64];      /* "llvm-sapphirerapids": routes the job */
  char *workload;           /* canonical TVMScript of the workload */
  char *trace_json;         /* the candidate's full trace, TVM's JSON layout */
  char *target;             /* canonical target string */
  json_t *options;          /* measure options object (number, repeat,
                               min_repeat_ms, timeouts, check, ...); may be NULL */
} rpc_job_t;

typedef struct {
  char id[40];
  mlc_error_kind_t error;   /* MLC_ERROR_KIND_NONE when measured; WORKER_LOST from the broker */
  char message[1024];
  int nrun_secs;
  double run_secs[64];
  double build_secs;
  char worker_id[64];
  char device_key[64];
  char *device_json;        /* the worker's properties (owned; may be NULL) */
} rpc_result_t;

json_t *rpc_job_to_json(const rpc_job_t *job);             /* new reference */
int rpc_job_from_json(rpc_job_t *out, const json_t *j);    /* validates */
void rpc_job_free(rpc_job_t *job);
json_t *rpc_result_to_json(const rpc_result_t *r);
int rpc_result_from_json(rpc_result_t *out, const json_t *j);
void rpc_result_free(rpc_result_t *r);

/* ------------------------------------------------------------------------ */
/* Security (CURVE + ZAP)                                                    */
/* ------------------------------------------------------------------------ */

/* A key directory (`--curve-keys DIR`): `server.key` (the broker's secret
 * and public key), `server.pub`, and `clients/NAME.pub` + `workers/NAME.pub`: the
 * public keys admitted. Z85 text files. rpc_keygen writes a pair NAME.key
 * (secret, mode 0600) and NAME.pub into dir. */
int rpc_keygen(const char *dir, const char *name);

/* ------------------------------------------------------------------------ */
/* Broker                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct {
  const char *bind;          /* default MLC_RPC_DEFAULT_BIND; several comma-separated */
  const char *curve_keys;    /* NULL: plaintext */
  int queue_bound;           /* jobs queued per client before BUSY (default 4096) */
  int heartbeat_ms;          /* default MLC_RPC_HEARTBEAT_MS */
  int liveness;              /* default MLC_RPC_LIVENESS */
  int stats_log_s;           /* periodic stats log line (default 60; 0 = none) */
} rpc_broker_options_t;

void rpc_broker_options_default(rpc_broker_options_t *o);

typedef struct rpc_broker rpc_broker_t;

/* Starts a broker on its own thread (mlc-tune's local farm, tests), bound
 * before it returns (errors binding come back here). */
int rpc_broker_start(rpc_broker_t **out, const rpc_broker_options_t *opts);
/* Stops and joins it; NULL is fine. */
void rpc_broker_stop(rpc_broker_t *b);
/* The endpoints it is bound to, as ZeroMQ resolved them (a wildcard port
 * such as "tcp://127.0.0.1:*" becomes the port it got), comma-separated.
 * Borrowed: valid until rpc_broker_stop. */
const char *rpc_broker_endpoint(const rpc_broker_t *b);
/* Runs a broker in the calling thread until *stop (mlc-broker). */
int rpc_broker_run(const rpc_broker_options_t *opts, volatile int *stop);
/* Asks a broker for its statistics (the STATS reply's JSON; new reference). */
int rpc_broker_stats(json_t **out, const char *endpoint, const char *curve_keys, int timeout_ms);

/* ------------------------------------------------------------------------ */
/* Worker side                                                               */
/* ------------------------------------------------------------------------ */

/* Runs one job: fills *out (its id is filled by the caller). Called on the
 * worker's runner thread, one job at a time per device; a worker with
 * capacity N has N runner threads, which call it concurrently. */
typedef int (*rpc_run_job_fn)(void *payload, const rpc_job_t *job, rpc_result_t *out);

typedef struct {
  const char *broker;        /* endpoint to connect to */
  const char *curve_keys;    /* NULL: plaintext; else the dir with server.pub and
                                this worker's key pair */
  const char *key_name;      /* this worker's key pair name in curve_keys */
  const char *device_key;
  const char *device_json;   /* properties announced in READY */
  const char *worker_id;
  int capacity;              /* jobs at once (1 per device) */
  /* Jobs the broker may send beyond capacity, 0..1024 (0: none, the
   * default). They wait in this worker's queue, so a runner that finishes
   * starts the next job without a round trip to the broker: worth it when
   * jobs take about as long as that round trip (sub-millisecond), not for
   * measurements of seconds, where a job queued here could have started on
   * another worker that fell idle. The broker fills workers with a free
   * runner first, and counts a retry against a lost worker's jobs only for
   * the ones it had started (the first `capacity` it held). */
  int prefetch;
  int heartbeat_ms, liveness;
  rpc_run_job_fn run;
  void *payload;
  /* NULL: none. Else a file rewritten (atomically: mlc_write_file) about once
   * a second while the worker runs, for probes (`mlc-worker health`): one
   * JSON line {"worker_id", "device_key", "broker", "connected" (a message
   * from the broker within the liveness window), "running" (jobs being
   * measured), "jobs_done", "updated_at_ms" (wall clock), "pid"}; removed
   * when rpc_worker_run returns. A write that fails is logged once. */
  const char *health_file;
} rpc_worker_options_t;

/* Connects, announces READY, runs jobs until *stop; reconnects with
 * exponential backoff (1 s .. 32 s) when the broker goes silent or restarts. */
int rpc_worker_run(const rpc_worker_options_t *opts, volatile int *stop);

/* ------------------------------------------------------------------------ */
/* Client side                                                               */
/* ------------------------------------------------------------------------ */

typedef struct rpc_client rpc_client_t;

/* Connects a DEALER to the broker (curve_keys/key_name as for workers). */
int rpc_client_open(rpc_client_t **out, const char *endpoint, const char *curve_keys,
                    const char *key_name);
void rpc_client_close(rpc_client_t *c); /* NULL is fine */

/* Submits jobs (ids filled by the client: *ids_out optional) and waits for
 * every one's result, calling on_result for each as it arrives (results may
 * come in any order). Handles BUSY (waits and resubmits), broker restarts
 * (resubmits what is unanswered; a job's result is delivered at most once
 * even if it is measured twice), heartbeats; gives up only when the broker is
 * unreachable for timeout_ms (MLC_ETIMEOUT, results delivered so far stand).
 * When *stop becomes non-zero it returns MLC_OK at once; results delivered
 * so far stand, the others are never delivered (the broker drops the jobs of
 * a client that says DISCONNECT). */
int rpc_client_run(rpc_client_t *c, rpc_job_t *jobs, int n,
                   void (*on_result)(void *payload, int index, const rpc_result_t *r), void *payload,
                   int timeout_ms, volatile int *stop);

#ifdef __cplusplus
}
#endif
#endif /* MLC_RPC_H */
