/*
 * broker_priv.h - private to the broker's files:
 *
 *   broker.c        lifecycle (sockets, threads), the loop, peers,
 *                   heartbeats and liveness, message dispatch
 *   broker_jobs.c   jobs: SUBMIT into per-client queues, fair dispatch to
 *                   workers, RESULT back, re-queueing a dead worker's jobs,
 *                   dropping a gone client's
 *   broker_stats.c  per device key statistics, the STATS reply, the
 *                   periodic log line, and rpc_broker_stats
 *
 * Data (all owned by the broker, touched only by its thread):
 *
 *   peers (by routing identity) ── a worker: device, capacity, running jobs
 *                               └─ a client: one queue per device key it
 *                                  uses, and its tracked jobs by id
 *   devices (by device key): the workers serving the key and the clients'
 *   queues for it, visited round robin so clients share the workers fairly.
 *
 * A job lives in exactly one place: its client's queue (queued), or a
 * worker's running list (in flight). When its client goes away while it
 * runs it is an orphan (queue NULL): its result will be dropped.
 */
#ifndef MLC_RPC_BROKER_PRIV_H
#define MLC_RPC_BROKER_PRIV_H

#include "rpc/map.h"
#include "rpc/rpc_priv.h"

typedef struct rb_peer rb_peer_t;
typedef struct rb_device rb_device_t;
typedef struct rb_queue rb_queue_t;
typedef struct rb_job rb_job_t;

struct rb_job {
  rb_job_t *prev, *next; /* in its queue while queued */
  rb_queue_t *queue;     /* its client's queue for its device key; NULL: orphan */
  rb_peer_t *worker;     /* running on; NULL while queued */
  char id[40];
  char *text;            /* the job's JSON: the JOB body */
  size_t len;
  int retries;           /* re-queues after a worker died holding it */
};

/* One client's jobs for one device key, FIFO. */
struct rb_queue {
  rb_peer_t *client;
  rb_device_t *device;
  rb_job_t *head, *tail;
  size_t n;
};

#define RB_RATE_SECS 10 /* jobs/s is measured over this many seconds */

struct rb_device {
  char key[64];
  MLC_VEC(rb_peer_t *) workers;
  MLC_VEC(rb_queue_t *) queues;
  size_t next_queue, next_worker; /* round-robin cursors */
  size_t queued;
  /* statistics */
  uint64_t done, requeued, failures[MLC_ERROR_KIND_COUNT];
  int64_t rate_sec[RB_RATE_SECS];
  uint64_t rate_count[RB_RATE_SECS];
};

typedef enum { RB_CLIENT = 1, RB_WORKER } rb_role_t;

struct rb_peer {
  uint8_t ident[RPC_MAX_IDENT];
  size_t ident_len;
  rb_role_t role;
  int64_t last_seen;
  char name[80]; /* for logs: the worker id, or the ZAP user id, or the identity in hex */
  /* a worker */
  rb_device_t *device;
  int capacity, prefetch;
  int runners; /* the last non-zero capacity: how many of the held jobs run */
  MLC_VEC(rb_job_t *) running;
  /* a client */
  MLC_VEC(rb_queue_t *) queues;
  size_t queued;
  rpc_map_t jobs; /* tracked (queued or running) jobs by id */
};

typedef struct {
  rpc_broker_options_t opts;
  char bind[1024], curve_keys[4096], endpoints[1024];
  void *ctx, *sock, *monitor;
  rpc_zap_t *zap;
  rpc_map_t peers, devices;
  int64_t started, next_beat, next_log;
  char beat[96]; /* the HEARTBEAT body, with the broker's timing */
  size_t beat_len;
  /* malformed messages: counted, logged at most a few a second */
  uint64_t malformed;
  int64_t log_window;
  int logged_in_window, suppressed;
} broker_t;

/* broker.c */
void broker_send_json(broker_t *b, rb_peer_t *p, rpc_cmd_t cmd, const json_t *body);
/* A peer that is gone (dead, said DISCONNECT, or unreachable): a worker's
 * running jobs go back to the head of their queues (count_retry: this counts
 * as a retry), a client's queued jobs are dropped. Frees p. */
void broker_peer_gone(broker_t *b, rb_peer_t *p, bool count_retry, const char *why);
int64_t broker_now(void);

/* broker_jobs.c */
rb_device_t *broker_device(broker_t *b, const char *key); /* found or created; NULL: OOM */
/* text: the body as it arrived (its jobs are forwarded as written). */
void broker_on_submit(broker_t *b, rb_peer_t *client, const rpc_submit_jobs_t *jobs, const char *text);
void broker_on_result(broker_t *b, rb_peer_t *worker, const json_t *body, zmq_msg_t *frame);
void broker_dispatch(broker_t *b, rb_device_t *d);
void broker_worker_jobs_back(broker_t *b, rb_peer_t *w, bool count_retry);
void broker_client_jobs_drop(broker_t *b, rb_peer_t *c);
void broker_device_remove_worker(rb_device_t *d, rb_peer_t *w);
void broker_free_devices(broker_t *b);

/* broker_stats.c */
json_t *broker_stats_json(broker_t *b);
void broker_log_stats(broker_t *b);
void broker_count_result(rb_device_t *d, mlc_error_kind_t kind, int64_t now_ms);

#endif /* MLC_RPC_BROKER_PRIV_H */
