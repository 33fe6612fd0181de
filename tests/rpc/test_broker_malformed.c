/*
 * test_broker_malformed.c - a raw DEALER throws 1,000 malformed messages at
 * the broker (random frames, wrong tags, bad commands, bad JSON, wrong body
 * shapes, commands that are not for the broker, oversized bodies); every
 * one is answered with an ERROR, the log is not flooded, a message past
 * ZeroMQ's size limit only costs its sender the connection, and afterwards
 * the broker still routes a real client's jobs.
 */
#include "rpc_testing.h"

static const char *const bad_json[] = {"{", "}", "\xff\xfe\xfd", "[1,2]", "\"s\"", "{\"a\":}", "{\"a\":1,\"a\":1}", "nul", "{}x"};

static const struct {
  int cmd;
  const char *body;
} bad_shapes[] = {
    {RPC_READY, "{}"},
    {RPC_READY, "{\"device_key\":\"k\",\"device\":{},\"capacity\":-1,\"worker_id\":\"w\"}"},
    {RPC_READY, "{\"device_key\":[],\"device\":{},\"capacity\":1,\"worker_id\":\"w\"}"},
    {RPC_SUBMIT, "{\"jobs\":5}"},
    {RPC_SUBMIT, "{\"jobs\":[]}"},
    {RPC_SUBMIT, "{\"jobs\":[{\"id\":\"a\",\"device_key\":\"k\",\"workload\":\"w\",\"target\":\"t\",\"trace\":{}}]}"},
    {RPC_RESULT, "{\"id\":\"a\",\"error\":\"nope\"}"},
    {RPC_RESULT, "{\"id\":\"a\",\"error\":\"\",\"message\":\"\",\"worker_id\":\"\",\"device_key\":\"\",\"run_secs\":[-5],\"build_secs\":0}"},
    {RPC_HEARTBEAT, "{\"heartbeat_ms\":\"fast\"}"},
    {RPC_ERROR, "{\"message\":1}"},
    {RPC_STATS, "{\"k\":[]}"},
    {RPC_ACCEPTED, "{\"ids\":\"a\"}"},
};

/* Commands that decode but are not the broker's to take. */
static const struct {
  int cmd;
  const char *body;
} wrong_way[] = {
    {RPC_JOB, "{\"id\":\"a\",\"device_key\":\"k\",\"workload\":\"w\",\"target\":\"t\",\"trace\":[]}"},
    {RPC_ACCEPTED, "{\"ids\":[\"a\"]}"},
    {RPC_BUSY, "{\"ids\":[],\"reason\":\"r\"}"},
};

static void send_frames(void *s, int n, const void *const *data, const size_t *lens) {
  for (int i = 0; i < n; i++) assert_true(zmq_send(s, data[i], lens[i], i + 1 < n ? ZMQ_SNDMORE : 0) >= 0);
}

/* Sends malformed message number i (its kind from i, its bytes from rng). */
static void send_malformed(void *s, int i, mlc_rng_t *rng) {
  unsigned char bytes[4][64], cmd = (unsigned char)RPC_HEARTBEAT;
  const void *data[4];
  size_t lens[4];
  switch (i % 6) {
  case 0: { /* random frames */
    int n = 1 + (int)mlc_rng_below(rng, 4);
    for (int f = 0; f < n; f++) {
      lens[f] = mlc_rng_below(rng, 64);
      for (size_t k = 0; k < lens[f]; k++) bytes[f][k] = (unsigned char)mlc_rng_below(rng, 256);
      data[f] = bytes[f];
    }
    if (n == 3 && lens[0] == 5) lens[0] = 4; /* never the real tag by chance */
    send_frames(s, n, data, lens);
    return;
  }
  case 1: { /* wrong tag */
    static const char *const tags[] = {"MLC00", "", "MLC01X", "mlc01"};
    const char *tag = tags[mlc_rng_below(rng, 4)];
    data[0] = tag, lens[0] = strlen(tag), data[1] = &cmd, lens[1] = 1, data[2] = "{}", lens[2] = 2;
    send_frames(s, 3, data, lens);
    return;
  }
  case 2: { /* bad command: 0, past the last one, or two bytes */
    unsigned char c[2] = {(unsigned char)(RPC_CMD_COUNT + mlc_rng_below(rng, 256 - RPC_CMD_COUNT)), 1};
    if (mlc_rng_below(rng, 4) == 0) c[0] = 0;
    data[0] = MLC_RPC_PROTOCOL, lens[0] = 5, data[1] = c, lens[1] = 1 + mlc_rng_below(rng, 2), data[2] = "{}", lens[2] = 2;
    send_frames(s, 3, data, lens);
    return;
  }
  case 3: /* bad JSON */
    t_send(s, RPC_SUBMIT, bad_json[mlc_rng_below(rng, sizeof bad_json / sizeof bad_json[0])]);
    return;
  case 4: { /* wrong shapes */
    size_t k = mlc_rng_below(rng, sizeof bad_shapes / sizeof bad_shapes[0]);
    t_send(s, bad_shapes[k].cmd, bad_shapes[k].body);
    return;
  }
  default: { /* not for the broker */
    size_t k = mlc_rng_below(rng, sizeof wrong_way / sizeof wrong_way[0]);
    t_send(s, wrong_way[k].cmd, wrong_way[k].body);
    return;
  }
  }
}

/* Counts ERROR replies already waiting. */
static int drain_errors(void *s, int timeout_ms) {
  int n = 0;
  json_t *body;
  int cmd;
  while ((cmd = t_recv(s, timeout_ms, &body)) != 0) {
    assert_int_equal(cmd, RPC_ERROR);
    assert_true(strlen(json_string_value(json_object_get(body, "message"))) > 0);
    json_decref(body);
    n++;
  }
  return n;
}

static void send_oversized(void *s, size_t n) {
  char *big = malloc(n);
  assert_non_null(big);
  memset(big, ' ', n);
  big[0] = '{';
  big[n - 1] = '}';
  unsigned char cmd = RPC_HEARTBEAT;
  const void *data[3] = {MLC_RPC_PROTOCOL, &cmd, big};
  size_t lens[3] = {5, 1, n};
  send_frames(s, 3, data, lens);
  free(big);
}

static void test_malformed_flood_is_answered_and_survived(void **state) {
  (void)state;
  t_log_capture();
  rpc_broker_t *b = t_broker(NULL, 0, NULL);
  const char *ep = rpc_broker_endpoint(b);
  void *ctx = zmq_ctx_new();
  void *s = t_dealer(ctx, ep);
  mlc_rng_t rng;
  mlc_rng_seed(&rng, 7);
  int errors = 0;
  for (int i = 0; i < 998; i++) {
    send_malformed(s, i, &rng);
    if (i % 50 == 49) errors += drain_errors(s, 1);
  }
  /* two bodies over MLC_RPC_MAX_MESSAGE but within ZeroMQ's limit: refused by the codec */
  send_oversized(s, (size_t)MLC_RPC_MAX_MESSAGE + 1);
  send_oversized(s, (size_t)MLC_RPC_MAX_MESSAGE + 1000);
  errors += drain_errors(s, 1500);
  assert_int_equal(errors, 1000);
  /* past ZeroMQ's limit: the connection is dropped, nothing is read into memory */
  send_oversized(s, (size_t)MLC_RPC_MAX_MESSAGE + (1u << 20));
  t_sleep_ms(200);
  zmq_close(s);
  zmq_ctx_term(ctx);

  /* the broker still serves */
  t_worker_t *w = t_worker(ep, "key-a", "a1", 2, 0, NULL);
  static t_batch_t batch;
  const char *keys[] = {"key-a"};
  t_batch_init(&batch, 20, keys, 1, "w");
  rpc_client_t *c;
  assert_int_equal(rpc_client_open(&c, ep, NULL, NULL), MLC_OK);
  assert_int_equal(rpc_client_run(c, batch.jobs, batch.n, t_on_result, &batch, 10000, NULL), MLC_OK);
  t_batch_check_echo(&batch);
  rpc_client_close(c);
  t_worker_stop(w);
  rpc_broker_stop(b);
  mlc_log_set_sink(NULL, NULL);
  /* logged, but not a thousand times */
  int lines = 0;
  for (const char *p = t_log; (p = strstr(p, "malformed message from")) != NULL; p++) lines++;
  assert_true(lines >= 1);
  assert_true(lines <= 5 * 10);
}

int main(void) {
  if (!getenv("MLC_LOG")) mlc_log_set_level(MLC_LOG_ERROR);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_malformed_flood_is_answered_and_survived),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
