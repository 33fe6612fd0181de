/*
 * rpc_priv.h - private to rpc/: what the codec, the broker, the worker and the
 * client sides share.
 *
 *   codec.c        frames <-> rpc_msg_t, the body shape of every command
 *   codec_job.c    rpc_job_t and rpc_result_t <-> JSON (and their shapes)
 *   transport.c    sockets: options every socket gets, sending a message,
 *                  receiving one (validated), the clock
 *   curve.c        key files, rpc_keygen, CURVE on sockets, the ZAP handler
 *   map.c          a byte-keyed hash map (peers by identity, jobs by id)
 *   broker*.c      the broker (broker_priv.h)
 *   worker.c       rpc_worker_run
 *   client.c       rpc_client_*
 *   cmd_broker.c   the mlc-broker program (cmd_broker.h)
 */
#ifndef MLC_RPC_PRIV_H
#define MLC_RPC_PRIV_H

#include <stdint.h>
#include <zmq.h>

#include "rpc/rpc.h"

/* ------------------------------------------------------------------------ */
/* Codec internals shared with codec_job.c                                   */
/* ------------------------------------------------------------------------ */

/* Shape checks: MLC_OK, or MLC_EPARSE with "<where>: what was wrong". `where`
 * names the value ("JOB", "SUBMIT: jobs[3]"). */
int rpc_check_job(const json_t *j, const char *where);
int rpc_check_result(const json_t *j, const char *where);
/* A string field: present (unless optional), a string, no control
 * characters, shorter than maxlen (0: any length), non-empty when nonempty. */
int rpc_check_str(const json_t *obj, const char *key, const char *where, size_t maxlen, bool optional,
                  bool nonempty);

/* The job's JSON text, written directly (the same value rpc_job_to_json
 * makes, without building and printing a tree: a client encodes every job
 * it submits). Checks what rpc_job_to_json checks: MLC_EINVAL naming the
 * field, MLC_ERANGE over MLC_RPC_MAX_MESSAGE. *text: mlc_free. */
int rpc_job_text(char **text, size_t *len, const rpc_job_t *job);

/* Jobs read from their text without a tree (codec_job_text.c): the fields'
 * spans, strings as written (escapes not decoded), trace and options as
 * whole values. */
enum { RPC_JF_ID, RPC_JF_DEVICE_KEY, RPC_JF_WORKLOAD, RPC_JF_TARGET, RPC_JF_TRACE, RPC_JF_OPTIONS, RPC_JF_COUNT };
typedef struct {
  mlc_jspan_t f[RPC_JF_COUNT];
  bool has[RPC_JF_COUNT];
  char id[40], device_key[64]; /* decoded (checked identifiers) */
} rpc_job_view_t;
/* Checks text[0, len) is one job object (whitespace around allowed) with
 * rpc_check_job's rules and messages (`where` as there: "JOB: "), plus
 * "<where> is not JSON: <why> at byte N" for bad syntax. */
int rpc_job_scan(rpc_job_view_t *v, const char *text, size_t len, const char *where);
/* rpc_job_scan, then the job's fields into *out (rpc_job_free). */
int rpc_job_decode(rpc_job_t *out, const char *text, size_t len, const char *where);

/* The jobs of a SUBMIT read from its text (the broker's hot path): each
 * job's span in the text, its id and device key. */
typedef struct {
  size_t start, end;
  char id[40], device_key[64];
} rpc_submit_job_t;
typedef MLC_VEC(rpc_submit_job_t) rpc_submit_jobs_t;
/* Checks a SUBMIT body {"jobs": [job, ...]} with check_submit's rules and
 * messages ("SUBMIT: jobs[3].trace: expected a JSON array"; "SUBMIT is not
 * JSON: <why> at byte N" for bad syntax) and fills *jobs (mlc_vec_free). */
int rpc_submit_scan(rpc_submit_jobs_t *jobs, const char *text, size_t len);


/* ------------------------------------------------------------------------ */
/* Transport                                                                 */
/* ------------------------------------------------------------------------ */

int64_t rpc_now_ms(void); /* monotonic milliseconds */
void rpc_sleep_ms(int ms);

/* The options every socket of the farm gets: linger 0, ZMQ_MAXMSGSIZE just
 * above MLC_RPC_MAX_MESSAGE (larger messages disconnect their sender; ones
 * between the two are refused with an ERROR by the codec), and, for DEALERs,
 * ZMQ_IMMEDIATE so nothing queues behind a connection that is not up (a
 * restarted broker must not get a backlog of stale heartbeats). */
int rpc_socket_setup(void *sock, bool dealer);

/* Watches a connecting socket's handshakes (zmq_socket_monitor to an inproc
 * PAIR in ctx, *out; close it with zmq_close before or after sock). */
int rpc_monitor_open(void **out, void *ctx, void *sock);
/* Reads the monitor's pending events without blocking: MLC_EAUTH when the
 * broker at `endpoint` refused this side's key (its ZAP handler's status in
 * the message, e.g. "the broker at tcp://...:5555 refused this worker's
 * CURVE key (ZAP status 400): is its public key in the broker's workers/
 * directory?"); other handshake failures (a wrong server key, a plaintext
 * peer) are logged as a warning the first time (*warned false; set true)
 * and give MLC_OK. `who` is "worker" or "client". mon NULL: MLC_OK. */
int rpc_monitor_check(void *mon, const char *who, const char *endpoint, bool *warned);

/* Sends [identity][tag][cmd][body] (identity skipped when ident is NULL).
 * Never blocks: MLC_EIO with the reason when ZeroMQ cannot take it now
 * (no connection yet on a DEALER, a peer gone on the ROUTER). */
int rpc_send(void *sock, const void *ident, size_t ident_len, rpc_cmd_t cmd, const char *body, size_t len);
/* Sends a body frame as it is (forwarding); *body is consumed either way. */
int rpc_send_frame(void *sock, const void *ident, size_t ident_len, rpc_cmd_t cmd, zmq_msg_t *body);
/* Encodes body (borrowed) and sends it. */
int rpc_send_json(void *sock, const void *ident, size_t ident_len, rpc_cmd_t cmd, const json_t *body);
/* ERROR {"message": msg, "id": id (when not NULL)}. */
int rpc_send_error(void *sock, const void *ident, size_t ident_len, const char *id, const char *msg);

/* One received message: the routing identity (ROUTER sockets), the decoded
 * message, and the raw body frame (so a router can forward it unchanged). */
#define RPC_MAX_IDENT 255
typedef struct {
  uint8_t ident[RPC_MAX_IDENT];
  size_t ident_len;
  char user_id[80];   /* the ZAP user id ("client:NAME"); "" without CURVE */
  rpc_msg_t msg;      /* valid when decoded is MLC_OK */
  int decoded;        /* MLC_OK, or the codec's status (detail in error) */
  char error[512];
  bool has_body;      /* body holds the body frame */
  zmq_msg_t body;
} rpc_recv_t;

/* Receives one message without blocking: MLC_OK with *r filled (decoded says
 * whether it is valid), MLC_ENOTFOUND when nothing is waiting, MLC_EIO when
 * the socket failed (context terminated). with_ident: the first frame is a
 * routing identity. Free with rpc_recv_free. */
int rpc_recv(void *sock, bool with_ident, rpc_recv_t *r);
/* rpc_recv, leaving the bodies of the commands in raw_cmds (bit 1 << cmd)
 * unparsed and unchecked: msg.body is NULL and the caller reads and checks
 * the body frame itself (the worker's JOBs: rpc_job_decode). */
int rpc_recv_raw(void *sock, bool with_ident, unsigned raw_cmds, rpc_recv_t *r);
void rpc_recv_free(rpc_recv_t *r);

/* ------------------------------------------------------------------------ */
/* CURVE                                                                     */
/* ------------------------------------------------------------------------ */

#define RPC_Z85_LEN 40

/* Reads a Z85 key file (NAME.pub: the key; NAME.key: the secret key on its
 * first key line). Lines starting with '#' are comments. MLC_EIO or
 * MLC_EPARSE naming the path. */
int rpc_key_read(char key[RPC_Z85_LEN + 1], const char *path);
/* Makes sock a CURVE client of the broker whose keys are in dir: server.pub,
 * and the key pair `name` (dir/NAME.key, else dir/clients/NAME.key, else
 * dir/workers/NAME.key; name NULL: server.key, else the only *.key in dir). */
int rpc_curve_client(void *sock, const char *dir, const char *name);

/* The broker's side: sock becomes a CURVE server with dir/server.key, and a
 * ZAP handler thread in ctx admits the keys of dir/clients/NAME.pub,
 * dir/workers/NAME.pub and the server's own (user ids "client:NAME",
 * "worker:NAME", "server"), logging every refusal. Start the handler before
 * the socket binds. */
typedef struct rpc_zap rpc_zap_t;
int rpc_zap_start(rpc_zap_t **out, void *ctx, const char *dir);
/* Call after zmq_ctx_shutdown(ctx): joins the thread. NULL is fine. */
void rpc_zap_stop(rpc_zap_t *z);
int rpc_curve_server(void *sock, const char *dir);

#endif /* MLC_RPC_PRIV_H */
