/*
 * worker.c - the worker side of the protocol (rpc_worker_run): a DEALER that
 * announces READY with its device key and capacity, takes JOBs, runs each
 * through the caller's callback, and sends the RESULT back.
 *
 * Jobs run on runner threads (one per unit of capacity), never on the
 * thread that owns the socket (a worker with prefetch holds up to that many
 * more in the queue, started in the order they came): a measurement can take 30 s and more, and the
 * broker declares a worker dead after a few missed heartbeats. Runners get
 * jobs from a locked queue and hand each encoded result back over an inproc
 * PUSH/PULL pair the main loop polls beside the broker's socket.
 *
 * Liveness (Paranoid Pirate): the worker beats every heartbeat_ms (adopting
 * the broker's timing when the broker announces it) and counts the broker
 * dead after `liveness` beats of silence. It then drops the socket, waits
 * (1 s, doubling to 32 s while the broker stays away), connects a fresh one
 * and announces READY again. A DISCONNECT from the broker (it is stopping,
 * or it restarted and does not know this worker) is answered with READY at
 * once. Results of jobs that were running when the connection was lost are
 * still sent: a broker that no longer tracks them drops them.
 *
 * Stopping drains: the runners start no new job, the jobs already running
 * finish and their results go out (heartbeats continue meanwhile, for up to
 * DRAIN_MAX_MS), and only then DISCONNECT, upon which the broker re-queues
 * the jobs this worker held but never started.
 *
 * With a health file (options), the loops above rewrite it once a second:
 * probes read whether the worker is alive (fresh) and connected.
 */
#include "rpc/rpc_priv.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 32000
#define DRAIN_MAX_MS 120000 /* longer than a job's build and run deadlines */
#define HEALTH_EVERY_MS 1000

typedef struct job_node {
  struct job_node *next;
  rpc_job_t job;
} job_node_t;

typedef struct {
  const rpc_worker_options_t *o;
  void *ctx, *sock, *results; /* results: PULL from the runners */
  void *monitor;              /* sock's handshakes (a refused key ends the run) */
  bool handshake_warned;
  char results_ep[64];
  char *ready, *ready_drain;  /* the READY bodies: normal, and capacity 0 */
  size_t ready_len, ready_drain_len;
  int hb, liveness, backoff;
  int64_t last_heard, next_beat;
  /* runners */
  pthread_t *threads;
  int nthreads;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  job_node_t *head, *tail;
  bool quit;
  int running;                /* jobs a runner has taken and not yet answered */
  /* health file */
  bool heard;                 /* a message from the broker since connecting */
  int64_t jobs_done, next_health;
  bool health_warned;
} worker_t;

/* ------------------------------------------------------------------------ */
/* Runners                                                                   */
/* ------------------------------------------------------------------------ */

/* The RESULT body for a job whose result could not be encoded. */
static json_t *fallback_result(const worker_t *w, const rpc_job_t *job, const char *why) {
  rpc_result_t r;
  memset(&r, 0, sizeof r);
  snprintf(r.id, sizeof r.id, "%s", job->id);
  r.error = MLC_ERROR_KIND_RUN;
  snprintf(r.message, sizeof r.message, "worker %s: %s", w->o->worker_id, why);
  snprintf(r.worker_id, sizeof r.worker_id, "%s", w->o->worker_id);
  snprintf(r.device_key, sizeof r.device_key, "%s", w->o->device_key);
  return rpc_result_to_json(&r);
}

/* Runs job through the callback; the encoded RESULT body into *text. */
static int run_one(worker_t *w, const rpc_job_t *job, char **text, size_t *len) {
  rpc_result_t r;
  memset(&r, 0, sizeof r);
  snprintf(r.id, sizeof r.id, "%s", job->id);
  mlc_error_clear();
  int st = w->o->run(w->o->payload, job, &r);
  snprintf(r.id, sizeof r.id, "%s", job->id); /* the caller's, whatever the callback did */
  if (!r.worker_id[0]) snprintf(r.worker_id, sizeof r.worker_id, "%s", w->o->worker_id);
  if (!r.device_key[0]) snprintf(r.device_key, sizeof r.device_key, "%s", w->o->device_key);
  if (!r.device_json && w->o->device_json) r.device_json = mlc_strdup(w->o->device_json);
  if (st != MLC_OK && r.error == MLC_ERROR_KIND_NONE) {
    r.error = MLC_ERROR_KIND_RUN;
    r.nrun_secs = 0;
    snprintf(r.message, sizeof r.message, "worker %s could not run the job: %s", w->o->worker_id,
             mlc_error_or(mlc_status_str(st)));
  }
  json_t *j = rpc_result_to_json(&r);
  rpc_result_free(&r);
  if (!j) {
    char why[600];
    snprintf(why, sizeof why, "the job's result cannot be sent: %s", mlc_error_last());
    MLC_WARN("worker: job %s: %s", job->id, why);
    j = fallback_result(w, job, why);
  }
  st = j ? rpc_msg_encode_body(text, len, j) : MLC_ENOMEM;
  json_decref(j);
  return st;
}

static job_node_t *next_job(worker_t *w) {
  pthread_mutex_lock(&w->lock);
  while (!w->quit && !w->head) pthread_cond_wait(&w->cond, &w->lock);
  job_node_t *n = w->quit ? NULL : w->head;
  if (n) {
    w->head = n->next;
    if (!w->head) w->tail = NULL;
    w->running++;
  }
  pthread_mutex_unlock(&w->lock);
  return n;
}

static void job_done(worker_t *w) {
  pthread_mutex_lock(&w->lock);
  w->running--;
  pthread_mutex_unlock(&w->lock);
}

static int running_jobs(worker_t *w) {
  pthread_mutex_lock(&w->lock);
  int n = w->running;
  pthread_mutex_unlock(&w->lock);
  return n;
}

static void *runner_main(void *arg) {
  worker_t *w = arg;
  pthread_setname_np(pthread_self(), "mlc-runner");
  void *push = zmq_socket(w->ctx, ZMQ_PUSH);
  int linger = 1000;
  if (!push || zmq_setsockopt(push, ZMQ_LINGER, &linger, sizeof linger) != 0 || zmq_connect(push, w->results_ep) != 0) {
    MLC_ERROR("worker: runner: %s", zmq_strerror(zmq_errno()));
    if (push) zmq_close(push);
    return NULL;
  }
  job_node_t *n;
  while ((n = next_job(w)) != NULL) {
    char *text = NULL;
    size_t len = 0;
    if (run_one(w, &n->job, &text, &len) == MLC_OK) zmq_send(push, text, len, 0);
    else MLC_ERROR("worker: job %s: no result to send: %s", n->job.id, mlc_error_last());
    mlc_free(text);
    rpc_job_free(&n->job);
    mlc_free(n);
    job_done(w); /* after the push: the main loop forwards before it counts */
  }
  zmq_close(push);
  return NULL;
}

static int runners_start(worker_t *w) {
  w->threads = mlc_calloc((size_t)w->o->capacity, sizeof *w->threads);
  if (!w->threads) return mlc_error_set(MLC_ENOMEM, "out of memory");
  for (; w->nthreads < w->o->capacity; w->nthreads++)
    if (pthread_create(&w->threads[w->nthreads], NULL, runner_main, w) != 0)
      return mlc_error_set(MLC_EIO, "worker: cannot start a runner thread");
  return MLC_OK;
}

/* Tells the runners to take no new job. */
static void runners_quit(worker_t *w) {
  pthread_mutex_lock(&w->lock);
  w->quit = true;
  pthread_cond_broadcast(&w->cond);
  pthread_mutex_unlock(&w->lock);
}

/* Stops the runners after the jobs they are running; drops queued ones. */
static void runners_stop(worker_t *w) {
  runners_quit(w);
  for (int i = 0; i < w->nthreads; i++) pthread_join(w->threads[i], NULL);
  mlc_free(w->threads);
  while (w->head) {
    job_node_t *n = w->head;
    w->head = n->next;
    rpc_job_free(&n->job);
    mlc_free(n);
  }
}

/* ------------------------------------------------------------------------ */
/* The connection                                                            */
/* ------------------------------------------------------------------------ */

static void send_ready(worker_t *w) {
  if (rpc_send(w->sock, NULL, 0, RPC_READY, w->ready, w->ready_len) != MLC_OK)
    MLC_DEBUG("worker: READY: %s", mlc_error_last()); /* not connected yet: the beat answer brings it */
}

static int connect_broker(worker_t *w) {
  if (w->sock) zmq_close(w->sock);
  if (w->monitor) zmq_close(w->monitor);
  w->monitor = NULL;
  w->sock = zmq_socket(w->ctx, ZMQ_DEALER);
  if (!w->sock) return mlc_error_set(MLC_EIO, "worker: socket: %s", zmq_strerror(zmq_errno()));
  int st = rpc_socket_setup(w->sock, true);
  if (st == MLC_OK && w->o->curve_keys) st = rpc_monitor_open(&w->monitor, w->ctx, w->sock);
  if (st == MLC_OK && w->o->curve_keys) st = rpc_curve_client(w->sock, w->o->curve_keys, w->o->key_name);
  if (st == MLC_OK && zmq_connect(w->sock, w->o->broker) != 0)
    st = mlc_error_set(MLC_EINVAL, "worker: cannot connect to %s: %s", w->o->broker, zmq_strerror(zmq_errno()));
  if (st != MLC_OK) return st;
  /* With ZMQ_IMMEDIATE nothing can be sent before the connection is up:
   * wait for it a little, so READY is the first thing the broker hears. */
  zmq_pollitem_t item = {w->sock, 0, ZMQ_POLLOUT, 0};
  zmq_poll(&item, 1, 200);
  send_ready(w);
  w->last_heard = rpc_now_ms();
  w->heard = false;
  return MLC_OK;
}

static void adopt_timing(worker_t *w, const json_t *beat) {
  const json_t *hb = json_object_get(beat, "heartbeat_ms"), *lv = json_object_get(beat, "liveness");
  if (hb) w->hb = (int)json_integer_value(hb);
  if (lv) w->liveness = (int)json_integer_value(lv);
  int64_t now = rpc_now_ms();
  if (w->next_beat > now + w->hb) w->next_beat = now + w->hb; /* a faster farm: beat sooner */
}

/* A JOB's body arrives unparsed (rpc_recv_raw): decoded here from its text,
 * without a tree. A malformed one is answered like any malformed message. */
static void take_job(worker_t *w, rpc_recv_t *r) {
  job_node_t *n = mlc_calloc(1, sizeof *n);
  int st = n ? rpc_job_decode(&n->job, zmq_msg_data(&r->body), zmq_msg_size(&r->body), "JOB: ") : MLC_ENOMEM;
  if (st != MLC_OK) {
    const char *why = n ? mlc_error_last() : "out of memory";
    MLC_WARN("worker: cannot take a job: %s", why);
    if (st == MLC_EPARSE) rpc_send_error(w->sock, NULL, 0, NULL, why);
    mlc_free(n);
    return;
  }
  pthread_mutex_lock(&w->lock);
  if (w->tail) w->tail->next = n;
  else w->head = n;
  w->tail = n;
  pthread_cond_signal(&w->cond);
  pthread_mutex_unlock(&w->lock);
}

static void on_message(worker_t *w, rpc_recv_t *r) {
  if (r->decoded != MLC_OK) {
    MLC_WARN("worker: malformed message from the broker: %s", r->error);
    rpc_send_error(w->sock, NULL, 0, NULL, r->error);
    return;
  }
  w->last_heard = rpc_now_ms();
  w->heard = true;
  w->backoff = BACKOFF_MIN_MS;
  switch (r->msg.cmd) {
  case RPC_JOB: take_job(w, r); break;
  case RPC_HEARTBEAT: adopt_timing(w, r->msg.body); break;
  case RPC_DISCONNECT: send_ready(w); break; /* the broker forgot us: announce again */
  case RPC_ERROR:
    MLC_WARN("worker: the broker says: %s", json_string_value(json_object_get(r->msg.body, "message")));
    break;
  default: MLC_DEBUG("worker: ignored %s from the broker", rpc_cmd_name(r->msg.cmd)); break;
  }
}

/* Forwards the runners' results (dropped while there is no connection). */
static void forward_results(worker_t *w) {
  for (;;) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, w->results, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(&m);
      return;
    }
    if (!w->sock || rpc_send_frame(w->sock, NULL, 0, RPC_RESULT, &m) != MLC_OK)
      MLC_WARN("worker: a result was lost: %s", w->sock ? mlc_error_last() : "no connection to the broker");
    zmq_msg_close(&m);
    w->jobs_done++;
  }
}

/* ------------------------------------------------------------------------ */
/* Health file                                                               */
/* ------------------------------------------------------------------------ */

static void write_health(worker_t *w) {
  const char *path = w->o->health_file;
  int64_t now = rpc_now_ms();
  if (!path || now < w->next_health) return;
  w->next_health = now + HEALTH_EVERY_MS;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  bool connected = w->sock && w->heard && now - w->last_heard <= (int64_t)w->hb * w->liveness;
  json_t *j = json_pack("{s:s, s:s, s:s, s:b, s:i, s:I, s:I, s:I}", "worker_id", w->o->worker_id, "device_key",
                        w->o->device_key, "broker", w->o->broker, "connected", connected, "running",
                        running_jobs(w), "jobs_done", (json_int_t)w->jobs_done, "updated_at_ms",
                        (json_int_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, "pid", (json_int_t)getpid());
  char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
  json_decref(j);
  int st = MLC_ENOMEM;
  if (text) { /* mlc_write_file replaces path atomically (temporary file, rename) */
    mlc_strbuf_t line;
    mlc_sb_init(&line);
    mlc_sb_printf(&line, "%s\n", text);
    st = mlc_write_file(path, mlc_sb_str(&line), line.len);
    mlc_sb_free(&line);
  }
  free(text);
  if (st != MLC_OK && !w->health_warned) {
    MLC_WARN("worker: cannot write the health file %s: %s", path, mlc_error_or("out of memory"));
    w->health_warned = true;
  } else if (st == MLC_OK) {
    w->health_warned = false;
  }
}

/* The broker is silent: wait out the backoff (still forwarding nothing and
 * watching stop), then connect afresh. */
static int reconnect(worker_t *w, volatile int *stop) {
  MLC_WARN("worker: the broker at %s has been silent for %lld ms; reconnecting in %d s", w->o->broker,
           (long long)(rpc_now_ms() - w->last_heard), w->backoff / 1000);
  zmq_close(w->sock);
  w->sock = NULL;
  int64_t until = rpc_now_ms() + w->backoff;
  while (!*stop && rpc_now_ms() < until) {
    zmq_pollitem_t item = {w->results, 0, ZMQ_POLLIN, 0};
    zmq_poll(&item, 1, 100);
    forward_results(w);
    write_health(w);
  }
  w->backoff = w->backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : w->backoff * 2;
  return *stop ? MLC_OK : connect_broker(w);
}

/* Stopping: no new job starts; the running ones finish and their results are
 * forwarded, heartbeats going on meanwhile so the broker does not count the
 * worker dead. JOBs that arrive now stay queued here and are re-queued by the
 * broker at DISCONNECT. */
static void drain(worker_t *w) {
  runners_quit(w);
  /* Capacity 0 first: the broker sends nothing more, so no job reaches us
   * between the last result and DISCONNECT to be re-queued. */
  if (w->sock && rpc_send(w->sock, NULL, 0, RPC_READY, w->ready_drain, w->ready_drain_len) != MLC_OK)
    MLC_DEBUG("worker: READY (stopping): %s", mlc_error_last());
  int64_t until = rpc_now_ms() + DRAIN_MAX_MS;
  int n = running_jobs(w);
  if (n > 0) MLC_INFO("worker: stopping after %d running job%s", n, n == 1 ? "" : "s");
  while (rpc_now_ms() < until) {
    bool idle = running_jobs(w) == 0; /* read before forwarding: a result pushed before */
    zmq_pollitem_t item = {w->results, 0, ZMQ_POLLIN, 0};
    zmq_poll(&item, 1, idle ? 0 : 100);
    forward_results(w);
    write_health(w);
    rpc_recv_t r;
    while (w->sock && rpc_recv(w->sock, false, &r) == MLC_OK) rpc_recv_free(&r); /* beats only matter now */
    int64_t now = rpc_now_ms();
    if (w->sock && now >= w->next_beat) {
      rpc_send(w->sock, NULL, 0, RPC_HEARTBEAT, "{}", 2);
      w->next_beat = now + w->hb;
    }
    if (idle) return;
  }
  MLC_WARN("worker: jobs still running after %d s; stopping without their results", DRAIN_MAX_MS / 1000);
}

static int worker_loop(worker_t *w, volatile int *stop) {
  int st = connect_broker(w);
  while (st == MLC_OK && !*stop) {
    int64_t now = rpc_now_ms(), wait = w->next_beat - now;
    zmq_pollitem_t items[2] = {{w->sock, 0, ZMQ_POLLIN, 0}, {w->results, 0, ZMQ_POLLIN, 0}};
    if (zmq_poll(items, 2, wait < 0 ? 0 : wait > 100 ? 100 : (long)wait) < 0 && zmq_errno() != EINTR)
      return mlc_error_set(MLC_EIO, "worker: poll: %s", zmq_strerror(zmq_errno()));
    rpc_recv_t r;
    for (int i = 0; i < 64 && rpc_recv_raw(w->sock, false, 1u << RPC_JOB, &r) == MLC_OK; i++) {
      on_message(w, &r);
      rpc_recv_free(&r);
    }
    forward_results(w);
    write_health(w);
    if ((st = rpc_monitor_check(w->monitor, "worker", w->o->broker, &w->handshake_warned)) != MLC_OK) break;
    now = rpc_now_ms();
    if (now - w->last_heard > (int64_t)w->hb * w->liveness) {
      st = reconnect(w, stop);
      continue;
    }
    if (now >= w->next_beat) {
      rpc_send(w->sock, NULL, 0, RPC_HEARTBEAT, "{}", 2); /* fails while not connected: fine */
      w->next_beat = now + w->hb;
    }
  }
  if (st == MLC_OK) drain(w);
  char why[1024];
  snprintf(why, sizeof why, "%s", mlc_error_last());
  if (w->sock) rpc_send(w->sock, NULL, 0, RPC_DISCONNECT, "{}", 2); /* may fail: not connected */
  return st == MLC_OK ? MLC_OK : mlc_error_set(st, "%s", why);
}

/* ------------------------------------------------------------------------ */
/* Entry point                                                               */
/* ------------------------------------------------------------------------ */

static int check_options(const rpc_worker_options_t *o) {
  if (!o || !o->broker || !o->run) return mlc_error_set(MLC_EINVAL, "worker: a broker endpoint and a callback are needed");
  if (!o->device_key || !*o->device_key || strlen(o->device_key) >= 64)
    return mlc_error_set(MLC_EINVAL, "worker: the device key must have 1 to 63 bytes");
  if (!o->worker_id || !*o->worker_id || strlen(o->worker_id) >= 64)
    return mlc_error_set(MLC_EINVAL, "worker: the worker id must have 1 to 63 bytes");
  if (o->capacity < 1 || o->capacity > 1024) return mlc_error_set(MLC_EINVAL, "worker: capacity %d outside [1, 1024]", o->capacity);
  if (o->prefetch < 0 || o->prefetch > 1024)
    return mlc_error_set(MLC_EINVAL, "worker: prefetch %d outside [0, 1024]", o->prefetch);
  if (o->heartbeat_ms < 0 || o->liveness < 0) return mlc_error_set(MLC_EINVAL, "worker: negative heartbeat or liveness");
  return MLC_OK;
}

/* The READY body, which also validates device_json and the names. */
static int make_ready(worker_t *w) {
  const rpc_worker_options_t *o = w->o;
  json_error_t err;
  json_t *dev = o->device_json ? json_loads(o->device_json, JSON_REJECT_DUPLICATES, &err) : json_object();
  if (!json_is_object(dev)) {
    json_decref(dev);
    return mlc_error_set(MLC_EINVAL, "worker: device_json: expected a JSON object");
  }
  json_t *body = json_pack("{s:s, s:o, s:i, s:s, s:i}", "device_key", o->device_key, "device", dev, "capacity",
                           o->capacity, "worker_id", o->worker_id, "prefetch", o->prefetch);
  int st = body ? rpc_msg_encode_body(&w->ready, &w->ready_len, body)
                : mlc_error_set(MLC_EINVAL, "worker: device key and worker id must be UTF-8");
  if (st == MLC_OK && (json_object_set_new(body, "capacity", json_integer(0)) != 0 ||
                       json_object_set_new(body, "prefetch", json_integer(0)) != 0))
    st = mlc_error_set(MLC_ENOMEM, "out of memory");
  if (st == MLC_OK) st = rpc_msg_encode_body(&w->ready_drain, &w->ready_drain_len, body);
  json_decref(body);
  return st;
}

int rpc_worker_run(const rpc_worker_options_t *opts, volatile int *stop) {
  static volatile int never;
  int st = check_options(opts);
  if (st != MLC_OK) return st;
  worker_t w;
  memset(&w, 0, sizeof w);
  w.o = opts;
  w.hb = opts->heartbeat_ms ? opts->heartbeat_ms : MLC_RPC_HEARTBEAT_MS;
  w.liveness = opts->liveness ? opts->liveness : MLC_RPC_LIVENESS;
  w.backoff = BACKOFF_MIN_MS;
  pthread_mutex_init(&w.lock, NULL);
  pthread_cond_init(&w.cond, NULL);
  snprintf(w.results_ep, sizeof w.results_ep, "inproc://mlc-worker-results-%p", (void *)&w);
  st = make_ready(&w);
  if (st == MLC_OK && !(w.ctx = zmq_ctx_new())) st = mlc_error_set(MLC_EIO, "worker: zmq_ctx_new failed");
  if (st == MLC_OK && (!(w.results = zmq_socket(w.ctx, ZMQ_PULL)) || zmq_bind(w.results, w.results_ep) != 0))
    st = mlc_error_set(MLC_EIO, "worker: results socket: %s", zmq_strerror(zmq_errno()));
  if (st == MLC_OK) st = runners_start(&w);
  if (st == MLC_OK) {
    MLC_INFO("worker: %s serving %s through %s (capacity %d, prefetch %d)", opts->worker_id, opts->device_key,
             opts->broker, opts->capacity, opts->prefetch);
    st = worker_loop(&w, stop ? stop : &never);
  }
  char detail[1024];
  snprintf(detail, sizeof detail, "%s", mlc_error_last());
  runners_stop(&w);
  if (opts->health_file) unlink(opts->health_file);
  if (w.monitor) zmq_close(w.monitor);
  if (w.sock) {
    int linger = 200; /* let DISCONNECT go out */
    zmq_setsockopt(w.sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(w.sock);
  }
  if (w.results) zmq_close(w.results);
  if (w.ctx) zmq_ctx_term(w.ctx);
  mlc_free(w.ready);
  mlc_free(w.ready_drain);
  pthread_mutex_destroy(&w.lock);
  pthread_cond_destroy(&w.cond);
  return st == MLC_OK ? MLC_OK : mlc_error_set(st, "%s", detail);
}
