/*
 * test_broker_failures.c - the farm when things die (heartbeats every
 * 100 ms, dead after 3 missed): a worker that takes a job and goes silent
 * has the job put back at the head of the queue and finished by another
 * worker; a job whose workers keep dying comes back as `worker-lost` after
 * MLC_RPC_MAX_RETRIES re-queues, where only the jobs a dead worker had
 * started count (not the ones it held prefetched); a broker stopped and
 * started again on the
 * same endpoint in the middle of a run still gets every job answered exactly
 * once (workers re-announce themselves, the client resubmits).
 */
#include "rpc_testing.h"

static void test_silent_worker_job_is_requeued_at_the_head(void **state) {
  (void)state;
  rpc_broker_t *b = t_broker(NULL, 0, NULL);
  const char *ep = rpc_broker_endpoint(b);
  void *ctx = zmq_ctx_new();
  t_fake_t *fake = t_fake(ctx, ep, "key-a", "hangs");
  t_wait_stat(ep, "key-a", "workers", 1);
  static t_batch_t batch;
  const char *keys[] = {"key-a"};
  t_batch_init(&batch, 6, keys, 1, "w");
  t_client_run_t run = {.batch = &batch, .timeout_ms = 15000};
  assert_int_equal(rpc_client_open(&run.client, ep, NULL, NULL), MLC_OK);
  assert_int_equal(pthread_create(&run.thread, NULL, t_client_main, &run), 0);
  /* the fake takes the first job and goes silent: declared dead, its job re-queued */
  t_wait_stat(ep, "key-a", "requeued", 1);
  assert_true(fake->got_job);
  assert_string_equal(fake->workload, "w0");
  assert_int_equal(t_stat(ep, "key-a", "workers"), 0);
  assert_int_equal(t_stat(ep, "key-a", "queued"), 6);
  t_worker_t *w = t_worker(ep, "key-a", "good", 1, 0, NULL);
  pthread_join(run.thread, NULL);
  assert_int_equal(run.status, MLC_OK);
  t_batch_check_echo(&batch);
  assert_int_equal(w->nrun, 6);
  assert_string_equal(w->order[0], "w0"); /* the re-queued job went first */
  for (int i = 0; i < 6; i++) assert_string_equal(batch.res[i].message, "good");
  rpc_client_close(run.client);
  t_worker_stop(w);
  t_fake_stop(fake);
  zmq_ctx_term(ctx);
  rpc_broker_stop(b);
}

static void test_retries_exhausted_give_worker_lost(void **state) {
  (void)state;
  rpc_broker_t *b = t_broker(NULL, 0, NULL);
  const char *ep = rpc_broker_endpoint(b);
  void *ctx = zmq_ctx_new();
  t_fake_t *fakes[MLC_RPC_MAX_RETRIES + 1];
  char id[16];
  for (int i = 0; i <= MLC_RPC_MAX_RETRIES; i++) {
    snprintf(id, sizeof id, "hang%d", i);
    fakes[i] = t_fake(ctx, ep, "key-a", id);
  }
  t_wait_stat(ep, "key-a", "workers", MLC_RPC_MAX_RETRIES + 1);
  static t_batch_t batch;
  const char *keys[] = {"key-a"};
  t_batch_init(&batch, 1, keys, 1, "w");
  rpc_client_t *c;
  assert_int_equal(rpc_client_open(&c, ep, NULL, NULL), MLC_OK);
  assert_int_equal(rpc_client_run(c, batch.jobs, 1, t_on_result, &batch, 15000, NULL), MLC_OK);
  assert_int_equal(batch.count[0], 1);
  assert_int_equal(batch.res[0].error, MLC_ERROR_KIND_WORKER_LOST);
  assert_non_null(strstr(batch.res[0].message, "gave up after 2 re-queues"));
  assert_string_equal(batch.res[0].device_key, "key-a");
  for (int i = 0; i <= MLC_RPC_MAX_RETRIES; i++) assert_true(fakes[i]->got_job); /* each one tried */
  json_t *s = t_stats(ep, NULL, "key-a");
  assert_int_equal(json_integer_value(json_object_get(s, "requeued")), MLC_RPC_MAX_RETRIES);
  assert_int_equal(json_integer_value(json_object_get(json_object_get(s, "failures"), "worker-lost")), 1);
  assert_int_equal(json_integer_value(json_object_get(s, "workers")), 0);
  json_decref(s);
  rpc_client_close(c);
  for (int i = 0; i <= MLC_RPC_MAX_RETRIES; i++) t_fake_stop(fakes[i]);
  zmq_ctx_term(ctx);
  rpc_broker_stop(b);
}

/* Three workers with prefetch 2 die in turn, each holding all three jobs:
 * the first job (the one each had started) runs out of retries, the two
 * prefetched ones never count one and are finished by a good worker. */
static void test_prefetched_jobs_count_no_retry(void **state) {
  (void)state;
  rpc_broker_t *b = t_broker(NULL, 0, NULL);
  const char *ep = rpc_broker_endpoint(b);
  void *ctx = zmq_ctx_new();
  static t_batch_t batch;
  const char *keys[] = {"key-a"};
  t_batch_init(&batch, 3, keys, 1, "w");
  t_client_run_t run = {.batch = &batch, .timeout_ms = 15000};
  assert_int_equal(rpc_client_open(&run.client, ep, NULL, NULL), MLC_OK);
  t_fake_t *fakes[MLC_RPC_MAX_RETRIES + 1];
  for (int i = 0; i <= MLC_RPC_MAX_RETRIES; i++) {
    char id[16];
    snprintf(id, sizeof id, "hang%d", i);
    fakes[i] = t_fake_prefetch(ctx, ep, "key-a", id, 2);
    t_wait_stat(ep, "key-a", "workers", 1);
    if (i == 0) assert_int_equal(pthread_create(&run.thread, NULL, t_client_main, &run), 0);
    /* it holds all three (one started, two prefetched), then dies with them */
    t_wait_stat(ep, "key-a", "requeued", i < MLC_RPC_MAX_RETRIES ? 3 * (i + 1) : 3 * i + 2);
    assert_int_equal(fakes[i]->njobs, 3);
    assert_string_equal(fakes[i]->workload, "w0");
  }
  t_worker_t *w = t_worker(ep, "key-a", "good", 1, 0, NULL);
  pthread_join(run.thread, NULL);
  assert_int_equal(run.status, MLC_OK);
  for (int i = 0; i < 3; i++) assert_int_equal(batch.count[i], 1);
  assert_int_equal(batch.res[0].error, MLC_ERROR_KIND_WORKER_LOST);
  for (int i = 1; i < 3; i++) {
    assert_int_equal(batch.res[i].error, MLC_ERROR_KIND_NONE);
    assert_true(batch.res[i].run_secs[0] == (double)i);
    assert_string_equal(batch.res[i].message, "good");
  }
  assert_int_equal(w->nrun, 2);
  rpc_client_close(run.client);
  t_worker_stop(w);
  for (int i = 0; i <= MLC_RPC_MAX_RETRIES; i++) t_fake_stop(fakes[i]);
  zmq_ctx_term(ctx);
  rpc_broker_stop(b);
}

static void test_broker_restart_mid_run(void **state) {
  (void)state;
  rpc_broker_t *b = t_broker(NULL, 0, NULL);
  char ep[256];
  snprintf(ep, sizeof ep, "%s", rpc_broker_endpoint(b));
  t_worker_t *w1 = t_worker(ep, "key-a", "a1", 1, 10, NULL);
  t_worker_t *w2 = t_worker(ep, "key-a", "a2", 1, 10, NULL);
  static t_batch_t batch;
  const char *keys[] = {"key-a"};
  t_batch_init(&batch, 60, keys, 1, "w");
  t_client_run_t run = {.batch = &batch, .timeout_ms = 20000};
  assert_int_equal(rpc_client_open(&run.client, ep, NULL, NULL), MLC_OK);
  assert_int_equal(pthread_create(&run.thread, NULL, t_client_main, &run), 0);
  int64_t deadline = t_now_ms() + 10000;
  while (batch.ndelivered < 10 && t_now_ms() < deadline) t_sleep_ms(5);
  assert_true(batch.ndelivered >= 10);
  assert_true(batch.ndelivered < 60);
  rpc_broker_stop(b); /* queued and running jobs die with it */
  b = t_broker(ep, 0, NULL);
  assert_string_equal(rpc_broker_endpoint(b), ep);
  pthread_join(run.thread, NULL);
  assert_int_equal(run.status, MLC_OK);
  t_batch_check_echo(&batch); /* exactly once each, though some ran twice */
  t_wait_stat(ep, "key-a", "workers", 2); /* both workers found the new broker */
  rpc_client_close(run.client);
  t_worker_stop(w1);
  t_worker_stop(w2);
  rpc_broker_stop(b);
}

int main(void) {
  if (!getenv("MLC_LOG")) mlc_log_set_level(MLC_LOG_ERROR);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_silent_worker_job_is_requeued_at_the_head),
      cmocka_unit_test(test_retries_exhausted_give_worker_lost),
      cmocka_unit_test(test_prefetched_jobs_count_no_retry),
      cmocka_unit_test(test_broker_restart_mid_run),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
