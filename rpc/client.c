/*
 * client.c - the client side of the protocol (rpc_client_*): what mlc-tune
 * uses to have candidates measured by a farm.
 *
 * rpc_client_run sends its jobs in SUBMIT batches and waits for one RESULT
 * per job. Each job has a state: pending (to send), sent (the broker has it,
 * or may), done (its result was delivered). The rules that keep "at most one
 * result per job" and "every job eventually answered" together:
 *   - a result is delivered only for a job that is not done, then the job is
 *     done; results for unknown or finished ids (a job measured twice after
 *     a resubmission, a previous run's job) are ignored;
 *   - BUSY makes the named jobs pending again, and the client keeps no more
 *     jobs outstanding than the broker last accepted (its queue bound) until
 *     results make room;
 *   - when the broker is silent for `liveness` heartbeats (it crashed, or the
 *     network is down) the client drops its socket, connects a fresh one and
 *     makes every sent job pending again; a DISCONNECT from the broker (it is
 *     stopping, or it restarted and does not know this client) does the same
 *     on the same socket. The broker ignores a resubmitted job it still
 *     tracks, so a resubmission never runs a job twice unless the broker
 *     really lost it.
 * Job ids are "<client id>-<counter>", the client id random per
 * rpc_client_open and the counter running across calls, so a result always
 * names its job and stale results of an earlier call are recognised.
 */
#include "rpc/rpc_priv.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define BATCH_JOBS 256
#define BATCH_BYTES (1u << 20)

struct rpc_client {
  void *ctx, *sock;
  void *monitor; /* sock's handshakes, with CURVE: a refused key ends a run */
  bool handshake_warned;
  char endpoint[512];
  char curve_keys[4096];
  char key_name[128];
  bool curve, named;
  char cid[17];
  uint64_t counter;
  int hb, liveness; /* the broker's, once it said */
};

enum { JOB_PENDING, JOB_SENT, JOB_DONE };

typedef struct {
  rpc_client_t *c;
  int n, ndone, npending, nsent, window, scan;
  uint64_t base;
  char **text;        /* each job's JSON */
  size_t *len;
  unsigned char *state;
  void (*on_result)(void *payload, int index, const rpc_result_t *r);
  void *payload;
  int64_t last_heard, last_connect, next_beat, busy_until;
} run_t;

/* ------------------------------------------------------------------------ */
/* Connection                                                                */
/* ------------------------------------------------------------------------ */

static int client_connect(rpc_client_t *c) {
  if (c->sock) zmq_close(c->sock);
  if (c->monitor) zmq_close(c->monitor);
  c->monitor = NULL;
  c->sock = zmq_socket(c->ctx, ZMQ_DEALER);
  if (!c->sock) return mlc_error_set(MLC_EIO, "client: socket: %s", zmq_strerror(zmq_errno()));
  int st = rpc_socket_setup(c->sock, true);
  if (st == MLC_OK && c->curve) st = rpc_monitor_open(&c->monitor, c->ctx, c->sock);
  if (st == MLC_OK && c->curve) st = rpc_curve_client(c->sock, c->curve_keys, c->named ? c->key_name : NULL);
  if (st == MLC_OK && zmq_connect(c->sock, c->endpoint) != 0)
    st = mlc_error_set(MLC_EINVAL, "client: cannot connect to %s: %s", c->endpoint, zmq_strerror(zmq_errno()));
  return st;
}

static void client_id(char out[17]) {
  uint64_t r = 0;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
    uint64_t mix[3] = {(uint64_t)rpc_now_ms(), (uint64_t)getpid(), (uint64_t)(uintptr_t)out};
    r = mlc_hash64(mix, sizeof mix, 0);
  }
  mlc_hash_hex(r, out);
}

int rpc_client_open(rpc_client_t **out, const char *endpoint, const char *curve_keys, const char *key_name) {
  if (!out) return mlc_error_set(MLC_EINVAL, "rpc_client_open: NULL out");
  *out = NULL;
  if (!endpoint || !*endpoint || strlen(endpoint) >= 512) return mlc_error_set(MLC_EINVAL, "client: bad broker endpoint");
  if ((curve_keys && strlen(curve_keys) >= 4096) || (key_name && strlen(key_name) >= 128))
    return mlc_error_set(MLC_EINVAL, "client: key directory or key name too long");
  rpc_client_t *c = mlc_calloc(1, sizeof *c);
  if (!c) return mlc_error_set(MLC_ENOMEM, "out of memory");
  snprintf(c->endpoint, sizeof c->endpoint, "%s", endpoint);
  c->curve = curve_keys != NULL;
  if (c->curve) snprintf(c->curve_keys, sizeof c->curve_keys, "%s", curve_keys);
  c->named = key_name != NULL;
  if (c->named) snprintf(c->key_name, sizeof c->key_name, "%s", key_name);
  c->hb = MLC_RPC_HEARTBEAT_MS;
  c->liveness = MLC_RPC_LIVENESS;
  client_id(c->cid);
  c->ctx = zmq_ctx_new();
  int st = c->ctx ? client_connect(c) : mlc_error_set(MLC_EIO, "client: zmq_ctx_new failed");
  if (st != MLC_OK) {
    char detail[1024];
    snprintf(detail, sizeof detail, "%s", mlc_error_last());
    rpc_client_close(c);
    return mlc_error_set(st, "%s", detail);
  }
  *out = c;
  return MLC_OK;
}

void rpc_client_close(rpc_client_t *c) {
  if (!c) return;
  if (c->monitor) zmq_close(c->monitor);
  if (c->sock) {
    int linger = 200; /* a DISCONNECT just sent still goes out */
    zmq_setsockopt(c->sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(c->sock);
  }
  if (c->ctx) zmq_ctx_term(c->ctx);
  mlc_free(c);
}

/* ------------------------------------------------------------------------ */
/* Jobs                                                                      */
/* ------------------------------------------------------------------------ */

/* The index of a job id of this run, or -1. */
static int job_index(const run_t *r, const char *id) {
  size_t n = strlen(r->c->cid);
  if (strncmp(id, r->c->cid, n) != 0 || id[n] != '-') return -1;
  char *end;
  errno = 0;
  unsigned long long k = strtoull(id + n + 1, &end, 10);
  if (errno || *end || k < r->base || k - r->base >= (unsigned long long)r->n) return -1;
  return (int)(k - r->base);
}

static void set_state(run_t *r, int i, int state) {
  int old = r->state[i];
  if (old == state) return;
  if (old == JOB_PENDING) r->npending--;
  if (old == JOB_SENT) r->nsent--;
  if (state == JOB_PENDING) {
    r->npending++;
    if (i < r->scan) r->scan = i;
  }
  if (state == JOB_SENT) r->nsent++;
  if (state == JOB_DONE) r->ndone++;
  r->state[i] = (unsigned char)state;
}

/* Every sent job pending again: the broker may have lost them. */
static void resubmit_all(run_t *r) {
  for (int i = 0; i < r->n; i++)
    if (r->state[i] == JOB_SENT) set_state(r, i, JOB_PENDING);
  r->window = INT_MAX;
  r->busy_until = 0;
}

/* Sends pending jobs in batches while the window allows. */
static void submit_pending(run_t *r, int64_t now) {
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  while (r->npending > 0 && r->nsent < r->window && now >= r->busy_until) {
    int batch[BATCH_JOBS], k = 0;
    mlc_sb_reset(&sb);
    mlc_sb_append(&sb, "{\"jobs\":[");
    for (int i = r->scan; i < r->n && k < BATCH_JOBS && r->nsent + k < r->window; i++) {
      if (r->state[i] != JOB_PENDING) continue;
      if (k && sb.len + r->len[i] > BATCH_BYTES) break;
      if (k) mlc_sb_putc(&sb, ',');
      mlc_sb_appendn(&sb, r->text[i], r->len[i]);
      batch[k++] = i;
    }
    mlc_sb_append(&sb, "]}");
    if (k == 0 || sb.failed || rpc_send(r->c->sock, NULL, 0, RPC_SUBMIT, sb.data, sb.len) != MLC_OK)
      break; /* not connected yet: POLLOUT brings us back */
    for (int j = 0; j < k; j++) set_state(r, batch[j], JOB_SENT);
    while (r->scan < r->n && r->state[r->scan] != JOB_PENDING) r->scan++;
  }
  mlc_sb_free(&sb);
}

static void on_busy(run_t *r, const json_t *body, int64_t now) {
  const json_t *ids = json_object_get(body, "ids"), *id;
  size_t k;
  json_array_foreach(ids, k, id) {
    int i = job_index(r, json_string_value(id));
    if (i >= 0 && r->state[i] == JOB_SENT) set_state(r, i, JOB_PENDING);
  }
  r->window = r->nsent > 0 ? r->nsent : 1;
  r->busy_until = now + (r->nsent > 0 ? r->c->hb : r->c->hb / 4);
  MLC_DEBUG("client: broker busy (%s); %d jobs outstanding", json_string_value(json_object_get(body, "reason")),
            r->nsent);
}

static void on_result(run_t *r, const json_t *body) {
  rpc_result_t res;
  if (rpc_result_from_json(&res, body) != MLC_OK) {
    MLC_WARN("client: unusable result: %s", mlc_error_last());
    return;
  }
  int i = job_index(r, res.id);
  if (i >= 0 && r->state[i] != JOB_DONE) {
    set_state(r, i, JOB_DONE);
    r->busy_until = 0; /* room at the broker */
    r->on_result(r->payload, i, &res);
  }
  rpc_result_free(&res);
}

static void on_message(run_t *r, rpc_recv_t *m, int64_t now) {
  if (m->decoded != MLC_OK) {
    MLC_WARN("client: malformed message from the broker: %s", m->error);
    return;
  }
  r->last_heard = now;
  const json_t *body = m->msg.body;
  switch (m->msg.cmd) {
  case RPC_RESULT: on_result(r, body); break;
  case RPC_BUSY: on_busy(r, body, now); break;
  case RPC_HEARTBEAT: {
    const json_t *hb = json_object_get(body, "heartbeat_ms"), *lv = json_object_get(body, "liveness");
    if (hb) r->c->hb = (int)json_integer_value(hb);
    if (lv) r->c->liveness = (int)json_integer_value(lv);
    if (r->next_beat > now + r->c->hb) r->next_beat = now + r->c->hb; /* a faster farm: beat sooner */
    break;
  }
  case RPC_DISCONNECT: resubmit_all(r); break;
  case RPC_ERROR:
    MLC_WARN("client: the broker says: %s", json_string_value(json_object_get(body, "message")));
    break;
  default: break; /* ACCEPTED: nothing to do; anything else is not for us */
  }
}

/* ------------------------------------------------------------------------ */
/* The run                                                                   */
/* ------------------------------------------------------------------------ */

static int run_loop(run_t *r, int timeout_ms, volatile int *stop) {
  rpc_client_t *c = r->c;
  while (r->ndone < r->n) {
    if (*stop) {
      rpc_send(c->sock, NULL, 0, RPC_DISCONNECT, "{}", 2); /* the broker drops what is left */
      return MLC_OK;
    }
    int64_t now = rpc_now_ms();
    submit_pending(r, now);
    bool want_out = r->npending > 0 && r->nsent < r->window && now >= r->busy_until;
    zmq_pollitem_t item = {c->sock, 0, (short)(ZMQ_POLLIN | (want_out ? ZMQ_POLLOUT : 0)), 0};
    int64_t wait = r->next_beat - now;
    if (r->busy_until > now && r->busy_until - now < wait) wait = r->busy_until - now;
    if (zmq_poll(&item, 1, wait < 0 ? 0 : wait > 50 ? 50 : (long)wait) < 0 && zmq_errno() != EINTR)
      return mlc_error_set(MLC_EIO, "client: poll: %s", zmq_strerror(zmq_errno()));
    rpc_recv_t m;
    for (int i = 0; i < 256 && rpc_recv(c->sock, false, &m) == MLC_OK; i++) {
      on_message(r, &m, rpc_now_ms());
      rpc_recv_free(&m);
    }
    int st = rpc_monitor_check(c->monitor, "client", c->endpoint, &c->handshake_warned);
    if (st != MLC_OK) return st;
    now = rpc_now_ms();
    if (timeout_ms > 0 && now - r->last_heard > timeout_ms)
      return mlc_error_set(MLC_ETIMEOUT, "client: no word from the broker at %s for %d ms (%d of %d jobs answered)",
                           c->endpoint, timeout_ms, r->ndone, r->n);
    int64_t since = r->last_heard > r->last_connect ? r->last_heard : r->last_connect;
    if (now - since > (int64_t)c->hb * c->liveness) {
      MLC_WARN("client: the broker at %s is silent; reconnecting and resubmitting %d jobs", c->endpoint, r->n - r->ndone);
      st = client_connect(c);
      if (st != MLC_OK) return st;
      r->last_connect = now;
      resubmit_all(r);
    }
    if (now >= r->next_beat) {
      rpc_send(c->sock, NULL, 0, RPC_HEARTBEAT, "{}", 2);
      r->next_beat = now + c->hb;
    }
  }
  return MLC_OK;
}

/* Ids and JSON texts of the jobs; MLC_EINVAL naming a job that cannot go. */
static int prepare(run_t *r, rpc_job_t *jobs) {
  for (int i = 0; i < r->n; i++) {
    snprintf(jobs[i].id, sizeof jobs[i].id, "%s-%llu", r->c->cid, (unsigned long long)(r->base + (uint64_t)i));
    int st = rpc_job_text(&r->text[i], &r->len[i], &jobs[i]);
    if (st == MLC_OK && r->len[i] > MLC_RPC_MAX_MESSAGE - 64)
      st = mlc_error_set(MLC_ERANGE, "%zu bytes, over the message limit", r->len[i]);
    if (st != MLC_OK) {
      mlc_error_prefix("client: job %d", i);
      return st == MLC_ENOMEM ? st : MLC_EINVAL;
    }
  }
  return MLC_OK;
}

int rpc_client_run(rpc_client_t *c, rpc_job_t *jobs, int n,
                   void (*on_result_fn)(void *payload, int index, const rpc_result_t *r), void *payload,
                   int timeout_ms, volatile int *stop) {
  static volatile int never;
  if (!c || n < 0 || (n > 0 && (!jobs || !on_result_fn)))
    return mlc_error_set(MLC_EINVAL, "rpc_client_run: NULL client, jobs or callback");
  if (n == 0) return MLC_OK;
  run_t r;
  memset(&r, 0, sizeof r);
  r.c = c;
  r.n = n;
  r.base = c->counter;
  c->counter += (uint64_t)n;
  r.on_result = on_result_fn;
  r.payload = payload;
  r.window = INT_MAX;
  r.text = mlc_calloc((size_t)n, sizeof *r.text);
  r.len = mlc_calloc((size_t)n, sizeof *r.len);
  r.state = mlc_calloc((size_t)n, 1);
  int st = r.text && r.len && r.state ? prepare(&r, jobs) : mlc_error_set(MLC_ENOMEM, "out of memory");
  if (st == MLC_OK) {
    r.npending = n;
    r.last_heard = r.last_connect = rpc_now_ms();
    r.next_beat = r.last_heard + c->hb;
    st = run_loop(&r, timeout_ms, stop ? stop : &never);
  }
  for (int i = 0; r.text && i < n; i++) mlc_free(r.text[i]);
  mlc_free(r.text);
  mlc_free(r.len);
  mlc_free(r.state);
  return st;
}
