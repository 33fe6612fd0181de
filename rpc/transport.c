/*
 * transport.c - the few things every socket of the farm does the same way:
 * its options, sending a message as frames, and receiving one into a
 * validated rpc_msg_t (the codec runs on every message, before any handler).
 *
 * Sends never block. A broker that blocked on one slow peer would stop
 * heartbeating everyone else; a worker or client whose broker is away must
 * keep its own clock running to notice. So a send that ZeroMQ cannot take now
 * fails with MLC_EIO and the caller decides (the broker treats an unreachable
 * worker as dead, a client keeps the job pending and tries again).
 */
#include "rpc/rpc_priv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int64_t rpc_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void rpc_sleep_ms(int ms) {
  if (ms <= 0) return;
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static int set_int(void *sock, int opt, int value, const char *name) {
  if (zmq_setsockopt(sock, opt, &value, sizeof value) == 0) return MLC_OK;
  return mlc_error_set(MLC_EIO, "setting %s: %s", name, zmq_strerror(zmq_errno()));
}

int rpc_socket_setup(void *sock, bool dealer) {
  /* Room for the largest body plus its small frames: a body between the two
   * limits is refused by the codec with an ERROR the sender can read; above
   * ZeroMQ drops the connection without reading it into memory. */
  int64_t maxmsg = (int64_t)MLC_RPC_MAX_MESSAGE + 65536;
  if (zmq_setsockopt(sock, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg) != 0)
    return mlc_error_set(MLC_EIO, "setting ZMQ_MAXMSGSIZE: %s", zmq_strerror(zmq_errno()));
  int st = set_int(sock, ZMQ_LINGER, 0, "ZMQ_LINGER");
  if (st == MLC_OK && dealer) st = set_int(sock, ZMQ_IMMEDIATE, 1, "ZMQ_IMMEDIATE");
  return st;
}

/* ------------------------------------------------------------------------ */
/* Handshake monitor                                                         */
/* ------------------------------------------------------------------------ */

int rpc_monitor_open(void **out, void *ctx, void *sock) {
  char ep[64];
  *out = NULL;
  snprintf(ep, sizeof ep, "inproc://mlc-monitor-%p", sock);
  int events = ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
               ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
  void *mon = NULL;
  if (zmq_socket_monitor(sock, ep, events) != 0 || !(mon = zmq_socket(ctx, ZMQ_PAIR)) || zmq_connect(mon, ep) != 0) {
    int e = zmq_errno();
    if (mon) zmq_close(mon);
    return mlc_error_set(MLC_EIO, "socket monitor: %s", zmq_strerror(e));
  }
  int linger = 0;
  zmq_setsockopt(mon, ZMQ_LINGER, &linger, sizeof linger);
  *out = mon;
  return MLC_OK;
}

int rpc_monitor_check(void *mon, const char *who, const char *endpoint, bool *warned) {
  if (!mon) return MLC_OK;
  for (;;) {
    zmq_msg_t ev, addr;
    zmq_msg_init(&ev);
    zmq_msg_init(&addr);
    bool got = zmq_msg_recv(&ev, mon, ZMQ_DONTWAIT) >= 0 && zmq_msg_more(&ev) && zmq_msg_recv(&addr, mon, 0) >= 0 &&
               zmq_msg_size(&ev) >= 6;
    uint16_t event = 0;
    uint32_t value = 0;
    if (got) {
      memcpy(&event, zmq_msg_data(&ev), sizeof event);
      memcpy(&value, (const char *)zmq_msg_data(&ev) + 2, sizeof value);
    }
    zmq_msg_close(&ev);
    zmq_msg_close(&addr);
    if (!got) return MLC_OK;
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
      return mlc_error_set(MLC_EAUTH,
                           "the broker at %s refused this %s's CURVE key (ZAP status %u): is its public key in "
                           "the broker's %s/ directory?",
                           endpoint, who, value, strcmp(who, "worker") == 0 ? "workers" : "clients");
    if (!*warned && (event & (ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)) &&
        (*warned = true))
      MLC_WARN("%s: the handshake with the broker at %s failed (a wrong server.pub, or CURVE on one side only)", who,
               endpoint);
  }
}

/* ------------------------------------------------------------------------ */
/* Sending                                                                   */
/* ------------------------------------------------------------------------ */

static int send_fail(rpc_cmd_t cmd) {
  int e = zmq_errno();
  return mlc_error_set(MLC_EIO, "sending %s: %s", rpc_cmd_name(cmd),
                       e == EAGAIN ? "no connection to the peer (yet)" : zmq_strerror(e));
}

/* Identity, tag and command frames, each with SNDMORE. */
static int send_head(void *sock, const void *ident, size_t ident_len, rpc_cmd_t cmd) {
  const int more = ZMQ_SNDMORE | ZMQ_DONTWAIT;
  unsigned char c = (unsigned char)cmd;
  if (ident && zmq_send(sock, ident, ident_len, more) < 0) return send_fail(cmd);
  if (zmq_send(sock, MLC_RPC_PROTOCOL, strlen(MLC_RPC_PROTOCOL), more) < 0) return send_fail(cmd);
  if (zmq_send(sock, &c, 1, more) < 0) return send_fail(cmd);
  return MLC_OK;
}

int rpc_send(void *sock, const void *ident, size_t ident_len, rpc_cmd_t cmd, const char *body, size_t len) {
  int st = send_head(sock, ident, ident_len, cmd);
  if (st == MLC_OK && zmq_send(sock, body, len, ZMQ_DONTWAIT) < 0) st = send_fail(cmd);
  return st;
}

int rpc_send_frame(void *sock, const void *ident, size_t ident_len, rpc_cmd_t cmd, zmq_msg_t *body) {
  int st = send_head(sock, ident, ident_len, cmd);
  if (st == MLC_OK && zmq_msg_send(body, sock, ZMQ_DONTWAIT) < 0) st = send_fail(cmd);
  zmq_msg_close(body); /* a no-op after a successful send */
  return st;
}

int rpc_send_json(void *sock, const void *ident, size_t ident_len, rpc_cmd_t cmd, const json_t *body) {
  char *text;
  size_t len;
  int st = rpc_msg_encode_body(&text, &len, body);
  if (st != MLC_OK) return st;
  st = rpc_send(sock, ident, ident_len, cmd, text, len);
  mlc_free(text);
  return st;
}

int rpc_send_error(void *sock, const void *ident, size_t ident_len, const char *id, const char *msg) {
  json_t *body = json_object();
  if (!body) return mlc_error_set(MLC_ENOMEM, "out of memory");
  /* json_string refuses invalid UTF-8: a detail quoting a peer's bytes must
   * still go out, so fall back to a plain text */
  json_t *m = json_string(msg);
  json_object_set_new(body, "message", m ? m : json_string("malformed message (detail not UTF-8)"));
  if (id) json_object_set_new(body, "id", json_string(id));
  int st = rpc_send_json(sock, ident, ident_len, RPC_ERROR, body);
  json_decref(body);
  return st;
}

/* ------------------------------------------------------------------------ */
/* Receiving                                                                 */
/* ------------------------------------------------------------------------ */

#define RECV_FRAMES 5 /* identity + 3, and one more to see that there are too many */

/* Reads the rest of a multipart message (frames[0] is in) into frames[1..];
 * frames beyond RECV_FRAMES are read, counted in *extra and thrown away. */
static int recv_rest(void *sock, zmq_msg_t *frames, int *n, int *extra) {
  bool more = zmq_msg_more(&frames[0]);
  while (more) {
    zmq_msg_t scratch, *m = *n < RECV_FRAMES ? &frames[*n] : &scratch;
    zmq_msg_init(m);
    if (zmq_msg_recv(m, sock, 0) < 0) {
      zmq_msg_close(m);
      return mlc_error_set(MLC_EIO, "receiving: %s", zmq_strerror(zmq_errno()));
    }
    more = zmq_msg_more(m);
    if (m == &scratch) {
      zmq_msg_close(m);
      (*extra)++;
    } else {
      (*n)++;
    }
  }
  return MLC_OK;
}

static void decode_frames(rpc_recv_t *r, zmq_msg_t *frames, int n, int base, int extra, unsigned raw_cmds) {
  const void *ptrs[RECV_FRAMES];
  size_t lens[RECV_FRAMES];
  for (int i = base; i < n; i++) {
    ptrs[i - base] = zmq_msg_data(&frames[i]);
    lens[i - base] = zmq_msg_size(&frames[i]);
  }
  r->decoded = rpc_msg_decode_raw(&r->msg, ptrs, lens, n - base + extra, raw_cmds);
  if (r->decoded != MLC_OK) {
    snprintf(r->error, sizeof r->error, "%s", mlc_error_last());
  } else {
    zmq_msg_init(&r->body);
    zmq_msg_move(&r->body, &frames[n - 1]);
    r->has_body = true;
  }
}

int rpc_recv_raw(void *sock, bool with_ident, unsigned raw_cmds, rpc_recv_t *r) {
  r->ident_len = 0;
  r->user_id[0] = r->error[0] = '\0';
  r->msg.cmd = 0;
  r->msg.body = NULL;
  r->has_body = false;
  r->decoded = MLC_EPARSE;
  zmq_msg_t frames[RECV_FRAMES];
  zmq_msg_init(&frames[0]);
  if (zmq_msg_recv(&frames[0], sock, ZMQ_DONTWAIT) < 0) {
    int e = zmq_errno();
    zmq_msg_close(&frames[0]);
    if (e == EAGAIN || e == EINTR) return MLC_ENOTFOUND;
    return mlc_error_set(MLC_EIO, "receiving: %s", zmq_strerror(e));
  }
  int n = 1, extra = 0;
  int st = recv_rest(sock, frames, &n, &extra);
  if (st == MLC_OK) {
    int base = 0;
    if (with_ident) {
      r->ident_len = zmq_msg_size(&frames[0]) < RPC_MAX_IDENT ? zmq_msg_size(&frames[0]) : RPC_MAX_IDENT;
      memcpy(r->ident, zmq_msg_data(&frames[0]), r->ident_len);
      base = 1;
    }
    /* the ZAP user id rides on the peer's frames (not on the identity the
     * ROUTER made up) */
    const char *uid = n > base ? zmq_msg_gets(&frames[n - 1], "User-Id") : NULL;
    if (uid) snprintf(r->user_id, sizeof r->user_id, "%s", uid);
    decode_frames(r, frames, n, base, extra, raw_cmds);
  }
  for (int i = 0; i < n; i++) zmq_msg_close(&frames[i]);
  return st;
}

int rpc_recv(void *sock, bool with_ident, rpc_recv_t *r) { return rpc_recv_raw(sock, with_ident, 0, r); }

void rpc_recv_free(rpc_recv_t *r) {
  json_decref(r->msg.body);
  r->msg.body = NULL;
  if (r->has_body) zmq_msg_close(&r->body);
  r->has_body = false;
}
