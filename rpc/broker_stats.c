/*
 * broker_stats.c - what the broker tells about itself: per device key, the
 * workers alive and their capacity, jobs running and queued, the clients
 * with queued jobs, results per second over the last RB_RATE_SECS seconds,
 * and failures by kind. The same numbers make the STATS reply, the periodic
 * log line, and `mlc-broker stats` (through rpc_broker_stats, here too).
 */
#include "rpc/broker_priv.h"

#include <string.h>

void broker_count_result(rb_device_t *d, mlc_error_kind_t kind, int64_t now_ms) {
  d->done++;
  if (kind != MLC_ERROR_KIND_NONE && kind < MLC_ERROR_KIND_COUNT) d->failures[kind]++;
  int64_t sec = now_ms / 1000;
  int i = (int)(sec % RB_RATE_SECS);
  if (d->rate_sec[i] != sec) {
    d->rate_sec[i] = sec;
    d->rate_count[i] = 0;
  }
  d->rate_count[i]++;
}

/* Results per second over the last RB_RATE_SECS seconds (fewer when the
 * broker is younger than that). */
static double rate(const rb_device_t *d, int64_t now_ms, int64_t started_ms) {
  int64_t sec = now_ms / 1000;
  uint64_t n = 0;
  for (int i = 0; i < RB_RATE_SECS; i++)
    if (d->rate_sec[i] > sec - RB_RATE_SECS && d->rate_sec[i] <= sec) n += d->rate_count[i];
  double window = (double)(now_ms - started_ms) / 1000.0;
  if (window > RB_RATE_SECS) window = RB_RATE_SECS;
  if (window < 1) window = 1;
  return (double)n / window;
}

static size_t capacity(const rb_device_t *d, size_t *running) {
  size_t cap = 0;
  *running = 0;
  for (size_t i = 0; i < d->workers.len; i++) {
    cap += (size_t)d->workers.data[i]->capacity;
    *running += d->workers.data[i]->running.len;
  }
  return cap;
}

static size_t waiting_clients(const rb_device_t *d) {
  size_t n = 0;
  for (size_t i = 0; i < d->queues.len; i++) n += d->queues.data[i]->n > 0;
  return n;
}

static json_t *device_json(const broker_t *b, const rb_device_t *d, int64_t now) {
  json_t *failures = json_object();
  for (int k = 1; failures && k < MLC_ERROR_KIND_COUNT; k++)
    json_object_set_new(failures, mlc_error_kind_name((mlc_error_kind_t)k), json_integer((json_int_t)d->failures[k]));
  size_t running, cap = capacity(d, &running);
  return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:o*}", "workers", (json_int_t)d->workers.len,
                   "capacity", (json_int_t)cap, "running", (json_int_t)running, "queued", (json_int_t)d->queued,
                   "clients", (json_int_t)waiting_clients(d), "done", (json_int_t)d->done, "requeued",
                   (json_int_t)d->requeued, "jobs_per_s", rate(d, now, b->started), "failures", failures);
}

json_t *broker_stats_json(broker_t *b) {
  json_t *out = json_object();
  int64_t now = broker_now();
  for (size_t i = 0; out && i < b->devices.cap; i++) {
    const rb_device_t *d = b->devices.slots[i].value;
    if (!b->devices.slots[i].key) continue;
    json_t *dj = device_json(b, d, now);
    if (!dj || json_object_set_new(out, d->key, dj) != 0) {
      json_decref(out);
      return NULL;
    }
  }
  return out;
}

void broker_log_stats(broker_t *b) {
  int64_t now = broker_now();
  size_t ndev = 0;
  for (size_t i = 0; i < b->devices.cap; i++) {
    const rb_device_t *d = b->devices.slots[i].value;
    if (!b->devices.slots[i].key) continue;
    ndev++;
    char fails[256] = "";
    size_t n = 0;
    for (int k = 1; k < MLC_ERROR_KIND_COUNT; k++)
      if (d->failures[k] && n < sizeof fails)
        n += (size_t)snprintf(fails + n, sizeof fails - n, "%s %s %llu", n ? "," : "",
                              mlc_error_kind_name((mlc_error_kind_t)k), (unsigned long long)d->failures[k]);
    size_t running, cap = capacity(d, &running);
    MLC_INFO("broker: %s: %zu workers (%zu running of %zu), %zu queued, %.1f jobs/s, %llu done, failures:%s", d->key,
             d->workers.len, running, cap, d->queued, rate(d, now, b->started), (unsigned long long)d->done,
             n ? fails : " none");
  }
  if (!ndev) MLC_INFO("broker: no workers and no jobs yet (%zu peers)", b->peers.len);
  if (b->malformed) MLC_INFO("broker: %llu malformed messages refused so far", (unsigned long long)b->malformed);
}

/* ------------------------------------------------------------------------ */
/* rpc_broker_stats: a one-shot client                                       */
/* ------------------------------------------------------------------------ */

/* Waits for the STATS reply on sock until deadline. */
static int await_stats(json_t **out, void *sock, int64_t deadline, const char *endpoint) {
  for (;;) {
    int64_t left = deadline - rpc_now_ms();
    if (left <= 0) break;
    zmq_pollitem_t item = {sock, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, left > 100 ? 100 : (long)left) < 0 && zmq_errno() != EINTR) break;
    rpc_recv_t r;
    while (rpc_recv(sock, false, &r) == MLC_OK) {
      if (r.decoded == MLC_OK && r.msg.cmd == RPC_STATS) {
        *out = json_incref(r.msg.body);
        rpc_recv_free(&r);
        return MLC_OK;
      }
      if (r.decoded == MLC_OK && r.msg.cmd == RPC_ERROR) {
        int st = mlc_error_set(MLC_ERUNTIME, "broker %s: %s", endpoint,
                               json_string_value(json_object_get(r.msg.body, "message")));
        rpc_recv_free(&r);
        return st;
      }
      rpc_recv_free(&r); /* a heartbeat, or noise */
    }
  }
  return mlc_error_set(MLC_ETIMEOUT, "broker %s: no STATS reply (is it running, and is this key admitted?)",
                       endpoint);
}

int rpc_broker_stats(json_t **out, const char *endpoint, const char *curve_keys, int timeout_ms) {
  if (!out || !endpoint) return mlc_error_set(MLC_EINVAL, "rpc_broker_stats: NULL argument");
  *out = NULL;
  void *ctx = zmq_ctx_new(), *sock = ctx ? zmq_socket(ctx, ZMQ_DEALER) : NULL;
  int st = sock ? rpc_socket_setup(sock, true) : mlc_error_set(MLC_EIO, "socket: %s", zmq_strerror(zmq_errno()));
  if (st == MLC_OK && curve_keys) st = rpc_curve_client(sock, curve_keys, NULL);
  if (st == MLC_OK && zmq_connect(sock, endpoint) != 0)
    st = mlc_error_set(MLC_EINVAL, "cannot connect to %s: %s", endpoint, zmq_strerror(zmq_errno()));
  int64_t deadline = rpc_now_ms() + (timeout_ms > 0 ? timeout_ms : 5000);
  /* ZMQ_IMMEDIATE: the request is refused until the connection is up */
  while (st == MLC_OK && rpc_send(sock, NULL, 0, RPC_STATS, "{}", 2) != MLC_OK) {
    if (rpc_now_ms() >= deadline)
      st = mlc_error_set(MLC_ETIMEOUT, "broker %s: cannot connect (is it running, and is this key admitted?)",
                         endpoint);
    else rpc_sleep_ms(10);
  }
  if (st == MLC_OK) st = await_stats(out, sock, deadline, endpoint);
  if (sock) zmq_close(sock);
  if (ctx) zmq_ctx_term(ctx);
  return st;
}
