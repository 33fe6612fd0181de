/*
 * broker.c - the broker (DESIGN.md, Wire protocol; docs/farm.md): one ROUTER
 * socket, a loop that validates and dispatches every message, the peers
 * (workers and clients) by routing identity, and liveness.
 *
 * Liveness is Paranoid Pirate's: the broker sends every peer a HEARTBEAT
 * each heartbeat_ms (its body carries heartbeat_ms and liveness, so workers
 * and clients adopt the farm's timing), and a peer it has not heard from for
 * liveness heartbeats is dead. A dead worker's jobs go back to the head of
 * their queues, a dead client's jobs are dropped (broker_jobs.c).
 *
 * A peer exists only once it has said who it is: READY makes a worker,
 * SUBMIT a client. Anything else from an identity the broker does not know,
 * a HEARTBEAT or RESULT from a peer of a broker that has since restarted,
 * is answered with DISCONNECT, which tells the peer to announce itself
 * again (a worker re-sends READY, a client resubmits what is unanswered).
 *
 * The loop never blocks on a peer: every send is non-blocking and a peer
 * that cannot be reached is treated as gone at the next heartbeat tick.
 */
#include "rpc/broker_priv.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

int64_t broker_now(void) { return rpc_now_ms(); }

void rpc_broker_options_default(rpc_broker_options_t *o) {
  o->bind = MLC_RPC_DEFAULT_BIND;
  o->curve_keys = NULL;
  o->queue_bound = 4096;
  o->heartbeat_ms = MLC_RPC_HEARTBEAT_MS;
  o->liveness = MLC_RPC_LIVENESS;
  o->stats_log_s = 60;
}

/* ------------------------------------------------------------------------ */
/* Peers                                                                     */
/* ------------------------------------------------------------------------ */

static rb_peer_t *peer_new(broker_t *b, const rpc_recv_t *r, rb_role_t role) {
  rb_peer_t *p = mlc_calloc(1, sizeof *p);
  if (!p) return NULL;
  memcpy(p->ident, r->ident, r->ident_len);
  p->ident_len = r->ident_len;
  p->role = role;
  p->last_seen = broker_now();
  if (r->user_id[0]) {
    snprintf(p->name, sizeof p->name, "%s", r->user_id);
  } else {
    int n = snprintf(p->name, sizeof p->name, "%s ", role == RB_CLIENT ? "client" : "worker");
    for (size_t i = 0; i < p->ident_len && n < (int)sizeof p->name - 3; i++)
      n += snprintf(p->name + n, sizeof p->name - (size_t)n, "%02x", p->ident[i]);
  }
  if (rpc_map_put(&b->peers, p->ident, p->ident_len, p) != MLC_OK) {
    mlc_free(p);
    return NULL;
  }
  /* the farm's timing right away: a client must not wait a default second
   * for its first beat while the broker counts a shorter one */
  rpc_send(b->sock, p->ident, p->ident_len, RPC_HEARTBEAT, b->beat, b->beat_len);
  return p;
}

static void peer_free(rb_peer_t *p) {
  mlc_vec_free(&p->running);
  mlc_vec_free(&p->queues);
  rpc_map_free(&p->jobs);
  mlc_free(p);
}

void broker_peer_gone(broker_t *b, rb_peer_t *p, bool count_retry, const char *why) {
  rpc_map_del(&b->peers, p->ident, p->ident_len);
  if (p->role == RB_WORKER) {
    rb_device_t *d = p->device;
    size_t n = p->running.len;
    broker_worker_jobs_back(b, p, count_retry);
    if (d) broker_device_remove_worker(d, p);
    mlc_log(n ? MLC_LOG_WARN : MLC_LOG_INFO, "broker: worker %s (%s) gone: %s; %zu running job%s re-queued", p->name,
            d ? d->key : "?", why, n, n == 1 ? "" : "s");
    peer_free(p);
    if (d) broker_dispatch(b, d);
  } else {
    size_t n = p->jobs.len;
    broker_client_jobs_drop(b, p);
    /* an idle client (between two batches of mlc-tune) leaving is routine */
    mlc_log(n ? MLC_LOG_INFO : MLC_LOG_DEBUG, "broker: client %s gone: %s; %zu unfinished job%s dropped", p->name,
            why, n, n == 1 ? "" : "s");
    peer_free(p);
  }
}

void broker_send_json(broker_t *b, rb_peer_t *p, rpc_cmd_t cmd, const json_t *body) {
  if (rpc_send_json(b->sock, p->ident, p->ident_len, cmd, body) != MLC_OK) {
    MLC_DEBUG("broker: to %s: %s", p->name, mlc_error_last());
    p->last_seen = 0; /* unreachable: reaped at the next tick */
  }
}

/* Under CURVE the ZAP handler named the key's role in the user id; without
 * CURVE there is none and anyone may be anything. */
static bool role_allowed(const rpc_recv_t *r, const char *prefix) {
  return !r->user_id[0] || strcmp(r->user_id, "server") == 0 || strncmp(r->user_id, prefix, strlen(prefix)) == 0;
}

static void reply_error(broker_t *b, const rpc_recv_t *r, const char *fmt, ...) MLC_PRINTF(3, 4);
static void reply_error(broker_t *b, const rpc_recv_t *r, const char *fmt, ...) {
  char msg[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  MLC_WARN("broker: %s", msg);
  rpc_send_error(b->sock, r->ident, r->ident_len, NULL, msg);
}

/* ------------------------------------------------------------------------ */
/* Messages                                                                  */
/* ------------------------------------------------------------------------ */

static void on_ready(broker_t *b, const rpc_recv_t *r, rb_peer_t *p) {
  const json_t *body = r->msg.body;
  if (!role_allowed(r, "worker:")) {
    reply_error(b, r, "READY from %s: only worker keys may serve", r->user_id);
    return;
  }
  if (p && p->role == RB_CLIENT) {
    reply_error(b, r, "READY from client %s: a client cannot serve", p->name);
    return;
  }
  rb_device_t *d = broker_device(b, json_string_value(json_object_get(body, "device_key")));
  if (!d) {
    reply_error(b, r, "READY: out of memory");
    return;
  }
  if (p && p->device != d) { /* re-announced for another key: start over */
    rb_device_t *old = p->device;
    broker_worker_jobs_back(b, p, false);
    broker_device_remove_worker(old, p);
    p->device = NULL;
    broker_dispatch(b, old);
  }
  if (!p && !(p = peer_new(b, r, RB_WORKER))) {
    reply_error(b, r, "READY: out of memory");
    return;
  }
  p->capacity = (int)json_integer_value(json_object_get(body, "capacity"));
  p->prefetch = (int)json_integer_value(json_object_get(body, "prefetch")); /* 0 when absent */
  if (p->capacity > 0) p->runners = p->capacity;
  snprintf(p->name, sizeof p->name, "%s", json_string_value(json_object_get(body, "worker_id")));
  if (!p->device) {
    if (mlc_vec_push(&d->workers, p) != MLC_OK) {
      broker_peer_gone(b, p, false, "out of memory");
      return;
    }
    p->device = d;
    MLC_INFO("broker: worker %s ready for %s (capacity %d, prefetch %d)", p->name, d->key, p->capacity,
             p->prefetch);
  }
  broker_dispatch(b, d);
}

static void on_malformed(broker_t *b, const rpc_recv_t *r, const rb_peer_t *p);

/* SUBMIT's body arrives unparsed (rpc_recv_raw): read here from its text,
 * without a tree; a malformed one is answered like any malformed message. */
static void on_submit(broker_t *b, rpc_recv_t *r, rb_peer_t *p) {
  const char *text = zmq_msg_data(&r->body);
  rpc_submit_jobs_t jobs;
  if (rpc_submit_scan(&jobs, text, zmq_msg_size(&r->body)) != MLC_OK) {
    snprintf(r->error, sizeof r->error, "%s", mlc_error_last());
    on_malformed(b, r, p);
    return;
  }
  if (!role_allowed(r, "client:")) {
    reply_error(b, r, "SUBMIT from %s: only client keys may submit", r->user_id);
  } else if (p && p->role == RB_WORKER) {
    reply_error(b, r, "SUBMIT from worker %s: a worker cannot submit", p->name);
  } else if (!p && !(p = peer_new(b, r, RB_CLIENT))) {
    reply_error(b, r, "SUBMIT: out of memory");
  } else {
    if (p->jobs.len == 0 && p->queues.len == 0) MLC_DEBUG("broker: client %s connected", p->name);
    broker_on_submit(b, p, &jobs, text);
  }
  mlc_vec_free(&jobs);
}

static void on_stats(broker_t *b, const rpc_recv_t *r) {
  json_t *stats = broker_stats_json(b);
  if (!stats) {
    reply_error(b, r, "STATS: out of memory");
    return;
  }
  if (rpc_send_json(b->sock, r->ident, r->ident_len, RPC_STATS, stats) != MLC_OK)
    MLC_DEBUG("broker: STATS reply: %s", mlc_error_last());
  json_decref(stats);
}

/* Logs at most a few malformed messages a second (a flood must not become
 * a flood of log lines), and answers every one with an ERROR. */
static void on_malformed(broker_t *b, const rpc_recv_t *r, const rb_peer_t *p) {
  b->malformed++;
  int64_t window = broker_now() / 1000;
  if (window != b->log_window) {
    if (b->suppressed) MLC_WARN("broker: %d more malformed messages were not logged", b->suppressed);
    b->log_window = window;
    b->logged_in_window = b->suppressed = 0;
  }
  if (b->logged_in_window++ < 5) MLC_WARN("broker: malformed message from %s: %s", p ? p->name : "a new peer", r->error);
  else b->suppressed++;
  rpc_send_error(b->sock, r->ident, r->ident_len, NULL, r->error);
}

static void handle(broker_t *b, rpc_recv_t *r) {
  rb_peer_t *p = rpc_map_get(&b->peers, r->ident, r->ident_len);
  if (p) p->last_seen = broker_now();
  if (r->decoded != MLC_OK) {
    on_malformed(b, r, p);
    return;
  }
  switch (r->msg.cmd) {
  case RPC_READY:
    on_ready(b, r, p);
    return;
  case RPC_SUBMIT:
    on_submit(b, r, p);
    return;
  case RPC_STATS:
    on_stats(b, r);
    return;
  case RPC_HEARTBEAT:
    if (!p) rpc_send(b->sock, r->ident, r->ident_len, RPC_DISCONNECT, "{}", 2); /* announce yourself */
    return;
  case RPC_RESULT:
    if (p && p->role == RB_WORKER) {
      broker_on_result(b, p, r->msg.body, &r->body);
      return;
    }
    if (!p) rpc_send(b->sock, r->ident, r->ident_len, RPC_DISCONNECT, "{}", 2);
    else reply_error(b, r, "RESULT from client %s: only workers send results", p->name);
    return;
  case RPC_DISCONNECT:
    if (p) broker_peer_gone(b, p, false, "said DISCONNECT");
    return;
  case RPC_ERROR:
    MLC_WARN("broker: %s reports: %s", p ? p->name : "a new peer",
             json_string_value(json_object_get(r->msg.body, "message")));
    return;
  default:
    reply_error(b, r, "%s is not a command the broker takes", rpc_cmd_name(r->msg.cmd));
    return;
  }
}

/* ------------------------------------------------------------------------ */
/* Timers: heartbeats, liveness, the periodic log line                       */
/* ------------------------------------------------------------------------ */

static void beat_and_reap(broker_t *b, int64_t now) {
  int64_t limit = (int64_t)b->opts.heartbeat_ms * b->opts.liveness;
  MLC_VEC(rb_peer_t *) dead = {0};
  for (size_t i = 0; i < b->peers.cap; i++) {
    rb_peer_t *p = b->peers.slots[i].value;
    if (!b->peers.slots[i].key) continue;
    if (now - p->last_seen > limit) {
      if (mlc_vec_push(&dead, p) != MLC_OK) break; /* the rest next tick */
    } else if (rpc_send(b->sock, p->ident, p->ident_len, RPC_HEARTBEAT, b->beat, b->beat_len) != MLC_OK) {
      p->last_seen = 0;
    }
  }
  for (size_t i = 0; i < dead.len; i++) {
    rb_peer_t *p = dead.data[i];
    char why[64];
    if (p->last_seen == 0) snprintf(why, sizeof why, "unreachable");
    else snprintf(why, sizeof why, "silent for %lld ms", (long long)(now - p->last_seen));
    broker_peer_gone(b, p, true, why);
  }
  mlc_vec_free(&dead);
}

static void timers(broker_t *b) {
  int64_t now = broker_now();
  if (now >= b->next_beat) {
    beat_and_reap(b, now);
    b->next_beat = now + b->opts.heartbeat_ms;
  }
  if (b->opts.stats_log_s > 0 && now >= b->next_log) {
    broker_log_stats(b);
    b->next_log = now + (int64_t)b->opts.stats_log_s * 1000;
  }
}

/* Handshake failures the ZAP handler never sees (a plaintext peer, a client
 * with the wrong server key): the socket monitor reports them. */
static void read_monitor(broker_t *b) {
  zmq_msg_t ev, addr;
  zmq_msg_init(&ev);
  zmq_msg_init(&addr);
  if (zmq_msg_recv(&ev, b->monitor, ZMQ_DONTWAIT) >= 0 && zmq_msg_more(&ev) &&
      zmq_msg_recv(&addr, b->monitor, 0) >= 0 && zmq_msg_size(&ev) >= 6) {
    uint16_t event;
    memcpy(&event, zmq_msg_data(&ev), sizeof event);
    if (event != ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) /* the ZAP handler logged those */
      MLC_WARN("broker: refused a connection on %.*s: handshake failed (a plaintext peer, or a wrong server key)",
               (int)zmq_msg_size(&addr), (const char *)zmq_msg_data(&addr));
  }
  zmq_msg_close(&ev);
  zmq_msg_close(&addr);
}

static int broker_loop(broker_t *b, volatile int *stop) {
  while (!*stop) {
    int64_t wait = b->next_beat - broker_now();
    zmq_pollitem_t items[2] = {{b->sock, 0, ZMQ_POLLIN, 0}, {b->monitor, 0, ZMQ_POLLIN, 0}};
    int rc = zmq_poll(items, b->monitor ? 2 : 1, wait < 0 ? 0 : wait > 100 ? 100 : (long)wait);
    if (rc < 0 && zmq_errno() != EINTR) return mlc_error_set(MLC_EIO, "broker: poll: %s", zmq_strerror(zmq_errno()));
    for (int i = 0; rc > 0 && (items[0].revents & ZMQ_POLLIN) && i < 512; i++) {
      rpc_recv_t r;
      int st = rpc_recv_raw(b->sock, true, 1u << RPC_SUBMIT, &r);
      if (st == MLC_ENOTFOUND) break;
      if (st != MLC_OK) return st;
      handle(b, &r);
      rpc_recv_free(&r);
    }
    if (rc > 0 && b->monitor && (items[1].revents & ZMQ_POLLIN)) read_monitor(b);
    timers(b);
  }
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Opening and closing                                                       */
/* ------------------------------------------------------------------------ */

static int options_take(broker_t *b, const rpc_broker_options_t *opts) {
  rpc_broker_options_default(&b->opts);
  if (opts) {
    if (opts->queue_bound < 0 || opts->heartbeat_ms < 0 || opts->liveness < 0 || opts->stats_log_s < 0)
      return mlc_error_set(MLC_EINVAL, "broker: negative queue bound, heartbeat, liveness or log interval");
    if (opts->bind) b->opts.bind = opts->bind;
    b->opts.curve_keys = opts->curve_keys;
    if (opts->queue_bound) b->opts.queue_bound = opts->queue_bound;
    if (opts->heartbeat_ms) b->opts.heartbeat_ms = opts->heartbeat_ms;
    if (opts->liveness) b->opts.liveness = opts->liveness;
    b->opts.stats_log_s = opts->stats_log_s;
  }
  if (strlen(b->opts.bind) >= sizeof b->bind) return mlc_error_set(MLC_EINVAL, "broker: bind list too long");
  snprintf(b->bind, sizeof b->bind, "%s", b->opts.bind);
  b->opts.bind = b->bind;
  if (b->opts.curve_keys) {
    snprintf(b->curve_keys, sizeof b->curve_keys, "%s", b->opts.curve_keys);
    b->opts.curve_keys = b->curve_keys;
  }
  b->beat_len = (size_t)snprintf(b->beat, sizeof b->beat, "{\"heartbeat_ms\":%d,\"liveness\":%d}",
                                 b->opts.heartbeat_ms, b->opts.liveness);
  return MLC_OK;
}

/* Binds every comma-separated endpoint; records what each resolved to. */
static int bind_all(broker_t *b) {
  char list[1024];
  snprintf(list, sizeof list, "%s", b->bind);
  size_t n = 0;
  for (char *save = NULL, *ep = strtok_r(list, ",", &save); ep; ep = strtok_r(NULL, ",", &save)) {
    ep += strspn(ep, " \t");
    ep[strcspn(ep, " \t")] = '\0';
    if (!*ep) continue;
    if (zmq_bind(b->sock, ep) != 0)
      return mlc_error_set(zmq_errno() == EINVAL || zmq_errno() == EPROTONOSUPPORT ? MLC_EINVAL : MLC_EIO,
                           "broker: cannot bind %s: %s", ep, zmq_strerror(zmq_errno()));
    char last[256];
    size_t len = sizeof last;
    if (zmq_getsockopt(b->sock, ZMQ_LAST_ENDPOINT, last, &len) != 0) snprintf(last, sizeof last, "%s", ep);
    n += (size_t)snprintf(b->endpoints + n, sizeof b->endpoints - n, "%s%s", n ? "," : "", last);
    if (n >= sizeof b->endpoints) return mlc_error_set(MLC_EINVAL, "broker: too many endpoints");
  }
  return n ? MLC_OK : mlc_error_set(MLC_EINVAL, "broker: no endpoint to bind");
}

static int monitor_open(broker_t *b) {
  char ep[64];
  snprintf(ep, sizeof ep, "inproc://mlc-broker-monitor-%p", (void *)b);
  int events = ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
  if (zmq_socket_monitor(b->sock, ep, events) != 0 || !(b->monitor = zmq_socket(b->ctx, ZMQ_PAIR)) ||
      zmq_connect(b->monitor, ep) != 0)
    return mlc_error_set(MLC_EIO, "broker: socket monitor: %s", zmq_strerror(zmq_errno()));
  int linger = 0;
  zmq_setsockopt(b->monitor, ZMQ_LINGER, &linger, sizeof linger);
  return MLC_OK;
}

static int sockets_open(broker_t *b) {
  if (!(b->ctx = zmq_ctx_new())) return mlc_error_set(MLC_EIO, "broker: zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
  int st = MLC_OK;
  if (b->opts.curve_keys) st = rpc_zap_start(&b->zap, b->ctx, b->opts.curve_keys);
  if (st == MLC_OK && !(b->sock = zmq_socket(b->ctx, ZMQ_ROUTER)))
    st = mlc_error_set(MLC_EIO, "broker: socket: %s", zmq_strerror(zmq_errno()));
  if (st == MLC_OK) st = rpc_socket_setup(b->sock, false);
  int one = 1, unlimited = 0;
  if (st == MLC_OK && (zmq_setsockopt(b->sock, ZMQ_ROUTER_MANDATORY, &one, sizeof one) != 0 ||
                       zmq_setsockopt(b->sock, ZMQ_SNDHWM, &unlimited, sizeof unlimited) != 0))
    st = mlc_error_set(MLC_EIO, "broker: socket options: %s", zmq_strerror(zmq_errno()));
  if (st == MLC_OK && b->opts.curve_keys && rpc_curve_server(b->sock, b->opts.curve_keys) != MLC_OK)
    st = mlc_error_set(MLC_EINVAL, "--curve-keys %s: %s", b->opts.curve_keys, mlc_error_last());
  if (st == MLC_OK && b->opts.curve_keys) st = monitor_open(b);
  if (st == MLC_OK) st = bind_all(b);
  return st;
}

static void broker_close(broker_t *b) {
  if (!b) return;
  /* an orderly goodbye: peers re-announce themselves to the next broker */
  for (size_t i = 0; i < b->peers.cap; i++)
    if (b->peers.slots[i].key) {
      rb_peer_t *p = b->peers.slots[i].value;
      if (b->sock) rpc_send(b->sock, p->ident, p->ident_len, RPC_DISCONNECT, "{}", 2);
    }
  for (size_t i = 0; i < b->peers.cap; i++)
    if (b->peers.slots[i].key) {
      rb_peer_t *p = b->peers.slots[i].value;
      if (p->role == RB_CLIENT) broker_client_jobs_drop(b, p);
      else broker_worker_jobs_back(b, p, false);
    }
  for (size_t i = 0; i < b->peers.cap; i++)
    if (b->peers.slots[i].key) peer_free(b->peers.slots[i].value);
  rpc_map_free(&b->peers);
  broker_free_devices(b);
  if (b->monitor) {
    zmq_socket_monitor(b->sock, NULL, 0);
    zmq_close(b->monitor);
  }
  if (b->sock) {
    int linger = 200; /* let the DISCONNECTs go out */
    zmq_setsockopt(b->sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(b->sock);
  }
  if (b->ctx) {
    zmq_ctx_shutdown(b->ctx);
    rpc_zap_stop(b->zap);
    zmq_ctx_term(b->ctx);
  }
  mlc_free(b);
}

static int broker_open(broker_t **out, const rpc_broker_options_t *opts) {
  *out = NULL;
  broker_t *b = mlc_calloc(1, sizeof *b);
  if (!b) return mlc_error_set(MLC_ENOMEM, "out of memory");
  int st = options_take(b, opts);
  if (st == MLC_OK) st = sockets_open(b);
  if (st != MLC_OK) {
    char detail[1024];
    snprintf(detail, sizeof detail, "%s", mlc_error_last());
    broker_close(b);
    return mlc_error_set(st, "%s", detail);
  }
  b->started = broker_now();
  b->next_beat = b->started + b->opts.heartbeat_ms;
  b->next_log = b->started + (int64_t)b->opts.stats_log_s * 1000;
  MLC_INFO("broker: listening on %s%s%s", b->endpoints, b->opts.curve_keys ? ", CURVE keys in " : "",
           b->opts.curve_keys ? b->opts.curve_keys : "");
  *out = b;
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Public entry points                                                       */
/* ------------------------------------------------------------------------ */

struct rpc_broker {
  broker_t *state;
  pthread_t thread;
  volatile int stop;
  int status;
};

static void *broker_thread(void *arg) {
  rpc_broker_t *rb = arg;
  pthread_setname_np(pthread_self(), "mlc-broker"); /* for top -H, and bench_farm's CPU account */
  rb->status = broker_loop(rb->state, &rb->stop);
  if (rb->status != MLC_OK) MLC_ERROR("broker: stopped: %s", mlc_error_last());
  return NULL;
}

int rpc_broker_start(rpc_broker_t **out, const rpc_broker_options_t *opts) {
  if (!out) return mlc_error_set(MLC_EINVAL, "rpc_broker_start: NULL out");
  *out = NULL;
  rpc_broker_t *rb = mlc_calloc(1, sizeof *rb);
  if (!rb) return mlc_error_set(MLC_ENOMEM, "out of memory");
  int st = broker_open(&rb->state, opts);
  if (st == MLC_OK && pthread_create(&rb->thread, NULL, broker_thread, rb) != 0) {
    broker_close(rb->state);
    st = mlc_error_set(MLC_EIO, "broker: cannot start its thread");
  }
  if (st != MLC_OK) {
    mlc_free(rb);
    return st;
  }
  *out = rb;
  return MLC_OK;
}

void rpc_broker_stop(rpc_broker_t *rb) {
  if (!rb) return;
  rb->stop = 1;
  pthread_join(rb->thread, NULL);
  broker_close(rb->state);
  mlc_free(rb);
}

const char *rpc_broker_endpoint(const rpc_broker_t *rb) { return rb ? rb->state->endpoints : ""; }

int rpc_broker_run(const rpc_broker_options_t *opts, volatile int *stop) {
  static volatile int never;
  broker_t *b;
  int st = broker_open(&b, opts);
  if (st != MLC_OK) return st;
  st = broker_loop(b, stop ? stop : &never);
  char detail[1024];
  snprintf(detail, sizeof detail, "%s", mlc_error_last());
  broker_close(b);
  return st == MLC_OK ? MLC_OK : mlc_error_set(st, "%s", detail);
}
