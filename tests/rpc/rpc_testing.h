/*
 * rpc_testing.h - what the farm's tests share: a broker on a fresh
 * endpoint with fast heartbeats, worker threads running rpc_worker_run with
 * an echo callback, a client run that counts results per job, raw DEALERs
 * for speaking the protocol by hand (fake and silent workers, malformed
 * input), and waiting on the broker's STATS.
 *
 * The echo callback answers job i (workload "w<i>", see make_jobs) with
 * run_secs = {i} and message = its worker id, after sleeping sleep_ms: so a
 * test can tell that each result belongs to its job and who ran it.
 */
#ifndef MLC_TESTS_RPC_TESTING_H
#define MLC_TESTS_RPC_TESTING_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "rpc/rpc.h"

#define TEST_HB_MS 100

static inline int64_t t_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void t_sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------------------ */
/* Broker                                                                    */
/* ------------------------------------------------------------------------ */

static inline rpc_broker_t *t_broker(const char *bind, int queue_bound, const char *curve_keys) {
  rpc_broker_options_t o;
  rpc_broker_options_default(&o);
  o.bind = bind ? bind : "tcp://127.0.0.1:*";
  o.heartbeat_ms = TEST_HB_MS;
  o.stats_log_s = 0;
  o.curve_keys = curve_keys;
  if (queue_bound) o.queue_bound = queue_bound;
  rpc_broker_t *b = NULL;
  int st = rpc_broker_start(&b, &o);
  if (st != MLC_OK) print_error("broker: %s\n", mlc_error_last());
  assert_int_equal(st, MLC_OK);
  return b;
}

/* The stats object of device key (a new reference; NULL when absent). */
static inline json_t *t_stats(const char *endpoint, const char *curve_keys, const char *key) {
  json_t *all = NULL;
  if (rpc_broker_stats(&all, endpoint, curve_keys, 3000) != MLC_OK) {
    print_error("stats: %s\n", mlc_error_last());
    fail();
  }
  json_t *d = json_incref(json_object_get(all, key));
  json_decref(all);
  return d;
}

static inline long long t_stat(const char *endpoint, const char *key, const char *field) {
  json_t *d = t_stats(endpoint, NULL, key);
  long long v = d ? (long long)json_integer_value(json_object_get(d, field)) : -1;
  json_decref(d);
  return v;
}

/* Waits until stats field of key equals want (or fails after 10 s). */
static inline void t_wait_stat(const char *endpoint, const char *key, const char *field, long long want) {
  int64_t deadline = t_now_ms() + 10000;
  long long v = -1;
  while (t_now_ms() < deadline) {
    if ((v = t_stat(endpoint, key, field)) == want) return;
    t_sleep_ms(20);
  }
  print_error("stats %s.%s: %lld, expected %lld\n", key, field, v, want);
  fail();
}

/* ------------------------------------------------------------------------ */
/* Workers                                                                   */
/* ------------------------------------------------------------------------ */

#define T_MAX_ORDER 512

typedef struct {
  pthread_t thread;
  rpc_worker_options_t o;
  char id[64], key[64];
  volatile int stop;
  int sleep_ms, status;
  pthread_mutex_t lock;
  int nrun;
  char order[T_MAX_ORDER][40]; /* workloads in the order this worker ran them */
} t_worker_t;

static inline int t_echo(void *payload, const rpc_job_t *job, rpc_result_t *out) {
  t_worker_t *w = payload;
  if (w->sleep_ms) t_sleep_ms(w->sleep_ms);
  pthread_mutex_lock(&w->lock);
  if (w->nrun < T_MAX_ORDER) snprintf(w->order[w->nrun], sizeof w->order[0], "%s", job->workload);
  w->nrun++;
  pthread_mutex_unlock(&w->lock);
  const char *digits = job->workload + strcspn(job->workload, "0123456789");
  out->nrun_secs = 1;
  out->run_secs[0] = atof(digits);
  snprintf(out->message, sizeof out->message, "%s", w->id);
  return MLC_OK;
}

static inline void *t_worker_main(void *arg) {
  t_worker_t *w = arg;
  w->status = rpc_worker_run(&w->o, &w->stop);
  if (w->status != MLC_OK) print_error("worker %s: %s\n", w->id, mlc_error_last());
  return NULL;
}

/* Starts a worker thread on endpoint for key (caller frees with t_worker_stop). */
static inline t_worker_t *t_worker_prefetch(const char *endpoint, const char *key, const char *id, int capacity,
                                            int prefetch, int sleep_ms, const char *curve_keys) {
  t_worker_t *w = calloc(1, sizeof *w);
  assert_non_null(w);
  snprintf(w->id, sizeof w->id, "%s", id);
  snprintf(w->key, sizeof w->key, "%s", key);
  pthread_mutex_init(&w->lock, NULL);
  w->sleep_ms = sleep_ms;
  w->o.broker = endpoint;
  w->o.curve_keys = curve_keys;
  w->o.key_name = curve_keys ? id : NULL;
  w->o.device_key = w->key;
  w->o.device_json = "{\"kind\":\"test\"}";
  w->o.worker_id = w->id;
  w->o.capacity = capacity;
  w->o.prefetch = prefetch;
  w->o.heartbeat_ms = TEST_HB_MS;
  w->o.run = t_echo;
  w->o.payload = w;
  assert_int_equal(pthread_create(&w->thread, NULL, t_worker_main, w), 0);
  return w;
}

static inline t_worker_t *t_worker(const char *endpoint, const char *key, const char *id, int capacity,
                                   int sleep_ms, const char *curve_keys) {
  return t_worker_prefetch(endpoint, key, id, capacity, 0, sleep_ms, curve_keys);
}

static inline void t_worker_stop(t_worker_t *w) {
  if (!w) return;
  w->stop = 1;
  pthread_join(w->thread, NULL);
  assert_int_equal(w->status, MLC_OK);
  pthread_mutex_destroy(&w->lock);
  free(w);
}

/* ------------------------------------------------------------------------ */
/* Clients                                                                   */
/* ------------------------------------------------------------------------ */

#define T_MAX_JOBS 256

typedef struct {
  rpc_job_t jobs[T_MAX_JOBS];
  char workloads[T_MAX_JOBS][16];
  int n;
  int count[T_MAX_JOBS];         /* results delivered per job */
  rpc_result_t res[T_MAX_JOBS];  /* the last one (device_json not kept) */
  int ndelivered;
  int stop_after;                /* set *stop after this many results (0: never) */
  volatile int stop;
} t_batch_t;

/* n jobs; job i goes to keys[i % nkeys] and has workload "<prefix><i>". */
static inline void t_batch_init(t_batch_t *b, int n, const char *const *keys, int nkeys, const char *prefix) {
  memset(b, 0, sizeof *b);
  assert_true(n <= T_MAX_JOBS);
  b->n = n;
  for (int i = 0; i < n; i++) {
    snprintf(b->workloads[i], sizeof b->workloads[i], "%s%d", prefix ? prefix : "w", i);
    snprintf(b->jobs[i].device_key, sizeof b->jobs[i].device_key, "%s", keys[i % nkeys]);
    b->jobs[i].workload = b->workloads[i];
    b->jobs[i].trace_json = "[[],[]]";
    b->jobs[i].target = "llvm";
  }
}

static inline void t_on_result(void *payload, int index, const rpc_result_t *r) {
  t_batch_t *b = payload;
  assert_true(index >= 0 && index < b->n);
  b->count[index]++;
  b->res[index] = *r;
  b->res[index].device_json = NULL;
  b->ndelivered++;
  if (b->stop_after && b->ndelivered >= b->stop_after) b->stop = 1;
}

/* Every job answered exactly once, by the echo of its own workload. */
static inline void t_batch_check_echo(const t_batch_t *b) {
  for (int i = 0; i < b->n; i++) {
    assert_int_equal(b->count[i], 1);
    assert_int_equal(b->res[i].error, MLC_ERROR_KIND_NONE);
    assert_int_equal(b->res[i].nrun_secs, 1);
    assert_true(b->res[i].run_secs[0] == (double)i);
    assert_string_equal(b->res[i].id, b->jobs[i].id);
  }
}

typedef struct {
  pthread_t thread;
  rpc_client_t *client;
  t_batch_t *batch;
  int timeout_ms, status;
} t_client_run_t;

static inline void *t_client_main(void *arg) {
  t_client_run_t *c = arg;
  c->status = rpc_client_run(c->client, c->batch->jobs, c->batch->n, t_on_result, c->batch, c->timeout_ms,
                             &c->batch->stop);
  if (c->status != MLC_OK) print_error("client: %s\n", mlc_error_last());
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Raw DEALERs                                                               */
/* ------------------------------------------------------------------------ */

static inline void *t_dealer(void *ctx, const char *endpoint) {
  void *s = zmq_socket(ctx, ZMQ_DEALER);
  int linger = 0;
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  assert_int_equal(zmq_connect(s, endpoint), 0);
  return s;
}

static inline void t_send(void *s, int cmd, const char *body) {
  unsigned char c = (unsigned char)cmd;
  assert_true(zmq_send(s, MLC_RPC_PROTOCOL, 5, ZMQ_SNDMORE) == 5);
  assert_true(zmq_send(s, &c, 1, ZMQ_SNDMORE) == 1);
  assert_true(zmq_send(s, body, strlen(body), 0) == (int)strlen(body));
}

/* Receives the next message that is not a HEARTBEAT within timeout_ms;
 * returns its command (0 on timeout) and body (caller decrefs). */
static inline int t_recv(void *s, int timeout_ms, json_t **body) {
  int64_t deadline = t_now_ms() + timeout_ms;
  *body = NULL;
  while (t_now_ms() < deadline) {
    zmq_pollitem_t item = {s, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, 50) <= 0) continue;
    zmq_msg_t f[3];
    int n = 0;
    const void *ptrs[3];
    size_t lens[3];
    for (int more = 1; more && n < 3; n++) {
      zmq_msg_init(&f[n]);
      zmq_msg_recv(&f[n], s, 0);
      more = zmq_msg_more(&f[n]);
      ptrs[n] = zmq_msg_data(&f[n]);
      lens[n] = zmq_msg_size(&f[n]);
    }
    rpc_msg_t m;
    int st = rpc_msg_decode(&m, ptrs, lens, n);
    for (int i = 0; i < n; i++) zmq_msg_close(&f[i]);
    assert_int_equal(st, MLC_OK);
    if (m.cmd == RPC_HEARTBEAT) {
      json_decref(m.body);
      continue;
    }
    *body = m.body;
    return m.cmd;
  }
  return 0;
}

/* A worker that announces itself (capacity 1, prefetch P), heartbeats until
 * it gets a JOB, and then goes silent (a hung or partitioned worker); it
 * still counts the JOBs that reach it (njobs). */
typedef struct {
  pthread_t thread;
  void *ctx;
  char endpoint[256], key[64], id[64];
  char job_id[40], workload[40];
  int prefetch;
  volatile int got_job, njobs, stop;
} t_fake_t;

static inline void *t_fake_main(void *arg) {
  t_fake_t *f = arg;
  void *s = t_dealer(f->ctx, f->endpoint);
  char ready[256];
  snprintf(ready, sizeof ready, "{\"device_key\":\"%s\",\"device\":{},\"capacity\":1,\"worker_id\":\"%s\",\"prefetch\":%d}",
           f->key, f->id, f->prefetch);
  t_send(s, RPC_READY, ready);
  int64_t next_beat = 0;
  while (!f->stop) {
    if (!f->got_job && t_now_ms() >= next_beat) {
      t_send(s, RPC_HEARTBEAT, "{}");
      next_beat = t_now_ms() + TEST_HB_MS;
    }
    json_t *body;
    int cmd = t_recv(s, 20, &body);
    if (cmd == RPC_JOB) f->njobs++;
    if (cmd == RPC_JOB && !f->got_job) {
      snprintf(f->job_id, sizeof f->job_id, "%s", json_string_value(json_object_get(body, "id")));
      snprintf(f->workload, sizeof f->workload, "%s", json_string_value(json_object_get(body, "workload")));
      f->got_job = 1; /* from now on: silence */
    }
    json_decref(body);
  }
  zmq_close(s);
  return NULL;
}

static inline t_fake_t *t_fake_prefetch(void *ctx, const char *endpoint, const char *key, const char *id,
                                        int prefetch) {
  t_fake_t *f = calloc(1, sizeof *f);
  assert_non_null(f);
  f->ctx = ctx;
  f->prefetch = prefetch;
  snprintf(f->endpoint, sizeof f->endpoint, "%s", endpoint);
  snprintf(f->key, sizeof f->key, "%s", key);
  snprintf(f->id, sizeof f->id, "%s", id);
  assert_int_equal(pthread_create(&f->thread, NULL, t_fake_main, f), 0);
  return f;
}

static inline t_fake_t *t_fake(void *ctx, const char *endpoint, const char *key, const char *id) {
  return t_fake_prefetch(ctx, endpoint, key, id, 0);
}

static inline void t_fake_stop(t_fake_t *f) {
  f->stop = 1;
  pthread_join(f->thread, NULL);
  free(f);
}

/* ------------------------------------------------------------------------ */
/* Log capture                                                               */
/* ------------------------------------------------------------------------ */

static char t_log[1 << 16];
static size_t t_log_len;

static inline void t_log_sink(mlc_log_level_t level, const char *line, void *payload) {
  (void)level;
  (void)payload;
  size_t n = strlen(line);
  if (t_log_len + n + 2 < sizeof t_log) {
    memcpy(t_log + t_log_len, line, n);
    t_log_len += n;
    t_log[t_log_len++] = '\n';
    t_log[t_log_len] = '\0';
  }
}

static inline void t_log_capture(void) {
  t_log_len = 0;
  t_log[0] = '\0';
  mlc_log_set_level(MLC_LOG_INFO);
  mlc_log_set_sink(t_log_sink, NULL);
}

#endif /* MLC_TESTS_RPC_TESTING_H */
