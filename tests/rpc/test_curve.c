/*
 * test_curve.c - CURVE and the ZAP handler: keys made by rpc_keygen; a
 * listed client and a listed worker get jobs done; a client or worker
 * whose key is not listed never reaches the broker and is told so (the run
 * ends with MLC_EAUTH), a plaintext client never reaches it either (both
 * refusals are logged by the broker); a client key cannot announce itself as a worker; the
 * broker's own key reads its stats; keygen refuses bad names and never
 * replaces a key.
 */
#include "rpc_testing.h"

#include <sys/stat.h>

static char dir[64], outsider[64];

/* DIR: server pair, clients/c1 pair, workers/w1 pair; OUTSIDER: server.pub
 * and a pair of its own that the broker does not list. */
static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/mlc-rpc-keys-XXXXXX");
  snprintf(outsider, sizeof outsider, "/tmp/mlc-rpc-outsider-XXXXXX");
  if (!mkdtemp(dir) || !mkdtemp(outsider)) return -1;
  char sub[128];
  if (rpc_keygen(dir, "server") != MLC_OK) return -1;
  snprintf(sub, sizeof sub, "%s/clients", dir);
  if (rpc_keygen(sub, "c1") != MLC_OK) return -1;
  snprintf(sub, sizeof sub, "%s/workers", dir);
  if (rpc_keygen(sub, "w1") != MLC_OK) return -1;
  if (rpc_keygen(outsider, "intruder") != MLC_OK) return -1;
  char cmd[256];
  snprintf(cmd, sizeof cmd, "cp %s/server.pub %s/", dir, outsider);
  return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s %s", dir, outsider);
  return system(cmd) == 0 ? 0 : -1;
}

static void test_keygen_writes_a_private_pair_and_never_replaces_it(void **state) {
  (void)state;
  char path[256], key[41], pub[41];
  struct stat st;
  snprintf(path, sizeof path, "%s/server.key", dir);
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  snprintf(path, sizeof path, "%s/server.pub", dir);
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0644);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char line[128];
  assert_non_null(fgets(line, sizeof line, f)); /* comment */
  assert_non_null(fgets(line, sizeof line, f));
  fclose(f);
  assert_int_equal(strlen(line), 41);
  memcpy(pub, line, 40);
  pub[40] = '\0';
  /* the secret's public half is the .pub */
  snprintf(path, sizeof path, "%s/server.key", dir);
  f = fopen(path, "r");
  assert_non_null(f);
  assert_non_null(fgets(line, sizeof line, f));
  assert_non_null(fgets(line, sizeof line, f));
  fclose(f);
  memcpy(key, line, 40);
  key[40] = '\0';
  char derived[41];
  assert_int_equal(zmq_curve_public(derived, key), 0);
  assert_string_equal(derived, pub);

  assert_int_equal(rpc_keygen(dir, "server"), MLC_EIO);
  assert_non_null(strstr(mlc_error_last(), "exists"));
  assert_int_equal(rpc_keygen(dir, "../evil"), MLC_EINVAL);
  assert_int_equal(rpc_keygen(dir, ".hidden"), MLC_EINVAL);
  assert_int_equal(rpc_keygen(dir, ""), MLC_EINVAL);
}

static void test_listed_client_and_worker_work(void **state) {
  (void)state;
  rpc_broker_t *b = t_broker(NULL, 0, dir);
  const char *ep = rpc_broker_endpoint(b);
  t_worker_t *w = t_worker(ep, "key-a", "w1", 1, 0, dir);
  static t_batch_t batch;
  const char *keys[] = {"key-a"};
  t_batch_init(&batch, 10, keys, 1, "w");
  rpc_client_t *c;
  assert_int_equal(rpc_client_open(&c, ep, dir, "c1"), MLC_OK);
  assert_int_equal(rpc_client_run(c, batch.jobs, batch.n, t_on_result, &batch, 10000, NULL), MLC_OK);
  t_batch_check_echo(&batch);
  /* the broker's own key (server.key in DIR) may read the stats */
  json_t *s = t_stats(ep, dir, "key-a");
  assert_int_equal(json_integer_value(json_object_get(s, "done")), 10);
  json_decref(s);
  rpc_client_close(c);
  t_worker_stop(w);
  rpc_broker_stop(b);
}

/* Ends a run that should have ended by itself, so a failure cannot hang. */
static void *stop_after_5s(void *arg) {
  volatile int *stop = arg;
  for (int i = 0; i < 500 && !*stop; i++) t_sleep_ms(10);
  *stop = 1;
  return NULL;
}

static void test_unlisted_and_plaintext_peers_are_refused(void **state) {
  (void)state;
  t_log_capture();
  rpc_broker_t *b = t_broker(NULL, 0, dir);
  const char *ep = rpc_broker_endpoint(b);
  t_worker_t *w = t_worker(ep, "key-a", "w1", 1, 0, dir);
  static t_batch_t batch;
  const char *keys[] = {"key-a"};
  t_batch_init(&batch, 2, keys, 1, "w");
  rpc_client_t *c;
  assert_int_equal(rpc_client_open(&c, ep, outsider, "intruder"), MLC_OK);
  /* the client learns at once that its key was refused, instead of timing out */
  assert_int_equal(rpc_client_run(c, batch.jobs, batch.n, t_on_result, &batch, 5000, NULL), MLC_EAUTH);
  assert_non_null(strstr(mlc_error_last(), "refused this client's CURVE key"));
  assert_non_null(strstr(mlc_error_last(), "clients/ directory"));
  assert_int_equal(batch.ndelivered, 0);
  rpc_client_close(c);
  assert_non_null(strstr(t_log, "is not listed in"));

  /* so does a worker, which stops (mlc-worker exits 1) instead of retrying forever */
  t_worker_t *intruder = calloc(1, sizeof *intruder);
  assert_non_null(intruder);
  intruder->o = (rpc_worker_options_t){.broker = ep, .curve_keys = outsider, .key_name = "intruder",
                                       .device_key = "key-a", .device_json = "{}", .worker_id = "intruder",
                                       .capacity = 1, .heartbeat_ms = TEST_HB_MS, .run = t_echo,
                                       .payload = intruder};
  pthread_t watchdog;
  assert_int_equal(pthread_create(&watchdog, NULL, stop_after_5s, (void *)&intruder->stop), 0);
  assert_int_equal(rpc_worker_run(&intruder->o, &intruder->stop), MLC_EAUTH);
  assert_non_null(strstr(mlc_error_last(), "refused this worker's CURVE key"));
  intruder->stop = 1;
  pthread_join(watchdog, NULL);
  free(intruder);

  assert_int_equal(rpc_client_open(&c, ep, NULL, NULL), MLC_OK); /* plaintext */
  assert_int_equal(rpc_client_run(c, batch.jobs, batch.n, t_on_result, &batch, 600, NULL), MLC_ETIMEOUT);
  assert_int_equal(batch.ndelivered, 0);
  rpc_client_close(c);
  assert_non_null(strstr(t_log, "handshake failed"));
  json_t *all = NULL;
  assert_int_equal(rpc_broker_stats(&all, ep, NULL, 300), MLC_ETIMEOUT);

  /* a listed client key may not serve as a worker */
  void *ctx = zmq_ctx_new();
  void *s = zmq_socket(ctx, ZMQ_DEALER);
  int linger = 0;
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  char server[41], pub[41], sec[41], path[256];
  FILE *f;
  snprintf(path, sizeof path, "%s/server.pub", dir);
  assert_non_null(f = fopen(path, "r"));
  assert_true(fscanf(f, "# %*[^\n]\n%40s", server) == 1);
  fclose(f);
  snprintf(path, sizeof path, "%s/clients/c1.key", dir);
  assert_non_null(f = fopen(path, "r"));
  assert_true(fscanf(f, "# %*[^\n]\n%40s\n%40s", sec, pub) == 2);
  fclose(f);
  zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, server, 40);
  zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, pub, 40);
  zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, sec, 40);
  assert_int_equal(zmq_connect(s, ep), 0);
  t_send(s, RPC_READY, "{\"device_key\":\"key-a\",\"device\":{},\"capacity\":1,\"worker_id\":\"sneaky\"}");
  json_t *body;
  int got = t_recv(s, 3000, &body);
  if (got != RPC_ERROR) print_error("log:\n%s\n", t_log);
  assert_int_equal(got, RPC_ERROR);
  assert_non_null(strstr(json_string_value(json_object_get(body, "message")), "only worker keys may serve"));
  json_decref(body);
  json_t *d = t_stats(ep, dir, "key-a");
  assert_int_equal(json_integer_value(json_object_get(d, "workers")), 1); /* still just w1 */
  json_decref(d);
  zmq_close(s);
  zmq_ctx_term(ctx);
  t_worker_stop(w);
  rpc_broker_stop(b);
  mlc_log_set_sink(NULL, NULL);
}

int main(void) {
  if (!getenv("MLC_LOG")) mlc_log_set_level(MLC_LOG_ERROR);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_keygen_writes_a_private_pair_and_never_replaces_it),
      cmocka_unit_test(test_listed_client_and_worker_work),
      cmocka_unit_test(test_unlisted_and_plaintext_peers_are_refused),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
