/*
 * test_broker.c - the broker with real sockets (tcp on 127.0.0.1, ephemeral
 * ports), worker threads running rpc_worker_run and rpc_client_run: jobs go
 * to workers of their device key and each is answered exactly once by its
 * own echo; SUBMIT beyond the queue bound gets BUSY and the client still
 * finishes; a client that stops (DISCONNECT) has its queued jobs dropped;
 * two clients sharing one worker alternate.
 */
#include "rpc_testing.h"

static void test_jobs_are_routed_by_device_key_and_answered_once(void **state) {
  (void)state;
  rpc_broker_t *b = t_broker(NULL, 0, NULL);
  const char *ep = rpc_broker_endpoint(b);
  t_worker_t *a1 = t_worker(ep, "key-a", "a1", 1, 0, NULL);
  t_worker_t *a2 = t_worker(ep, "key-a", "a2", 2, 0, NULL);
  t_worker_t *b1 = t_worker(ep, "key-b", "b1", 1, 0, NULL);
  /* Every worker announced before the jobs go out (on a busy machine one
   * could otherwise connect after the others had taken every job). */
  t_wait_stat(ep, "key-a", "workers", 2);
  t_wait_stat(ep, "key-b", "workers", 1);
  static t_batch_t batch;
  const char *keys[] = {"key-a", "key-b"};
  t_batch_init(&batch, 120, keys, 2, "w");
  rpc_client_t *c;
  assert_int_equal(rpc_client_open(&c, ep, NULL, NULL), MLC_OK);
  assert_int_equal(rpc_client_run(c, batch.jobs, batch.n, t_on_result, &batch, 10000, NULL), MLC_OK);
  t_batch_check_echo(&batch);
  for (int i = 0; i < batch.n; i++) {
    const char *who = batch.res[i].message;
    if (i % 2 == 0) assert_true(strcmp(who, "a1") == 0 || strcmp(who, "a2") == 0);
    else assert_string_equal(who, "b1");
    assert_string_equal(batch.res[i].device_key, keys[i % 2]);
    assert_string_equal(batch.res[i].worker_id, who);
  }
  assert_int_equal(a1->nrun + a2->nrun, 60);
  assert_int_equal(b1->nrun, 60);
  assert_true(a1->nrun > 0 && a2->nrun > 0); /* both key-a workers took jobs */
  /* a second run on the same client: fresh ids, same guarantees */
  static t_batch_t again;
  t_batch_init(&again, 10, keys, 1, "w");
  assert_int_equal(rpc_client_run(c, again.jobs, again.n, t_on_result, &again, 10000, NULL), MLC_OK);
  t_batch_check_echo(&again);
  assert_string_not_equal(again.jobs[0].id, batch.jobs[0].id);

  json_t *sa = t_stats(ep, NULL, "key-a");
  assert_int_equal(json_integer_value(json_object_get(sa, "workers")), 2);
  assert_int_equal(json_integer_value(json_object_get(sa, "capacity")), 3);
  assert_int_equal(json_integer_value(json_object_get(sa, "done")), 70);
  assert_int_equal(json_integer_value(json_object_get(sa, "queued")), 0);
  assert_true(json_number_value(json_object_get(sa, "jobs_per_s")) > 0);
  json_decref(sa);
  assert_int_equal(t_stat(ep, "key-b", "done"), 60);
  rpc_client_close(c);
  t_worker_stop(a1);
  t_worker_stop(a2);
  t_worker_stop(b1);
  rpc_broker_stop(b);
}

static void test_submit_beyond_the_bound_gets_busy(void **state) {
  (void)state;
  rpc_broker_t *b = t_broker(NULL, 4, NULL);
  const char *ep = rpc_broker_endpoint(b);
  void *ctx = zmq_ctx_new();
  void *s = t_dealer(ctx, ep);
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  mlc_sb_append(&sb, "{\"jobs\":[");
  for (int i = 0; i < 10; i++)
    mlc_sb_printf(&sb, "%s{\"id\":\"raw-%d\",\"device_key\":\"nobody\",\"workload\":\"w\",\"trace\":[],\"target\":\"llvm\"}",
                  i ? "," : "", i);
  mlc_sb_append(&sb, "]}");
  t_send(s, RPC_SUBMIT, mlc_sb_str(&sb));
  json_t *body;
  assert_int_equal(t_recv(s, 3000, &body), RPC_ACCEPTED);
  assert_int_equal(json_array_size(json_object_get(body, "ids")), 4);
  assert_string_equal(json_string_value(json_array_get(json_object_get(body, "ids"), 0)), "raw-0");
  json_decref(body);
  assert_int_equal(t_recv(s, 3000, &body), RPC_BUSY);
  assert_int_equal(json_array_size(json_object_get(body, "ids")), 6);
  assert_string_equal(json_string_value(json_array_get(json_object_get(body, "ids"), 0)), "raw-4");
  assert_non_null(strstr(json_string_value(json_object_get(body, "reason")), "4 jobs queued per client"));
  json_decref(body);
  /* the same ids again: the four tracked ones are accepted without queueing twice */
  t_send(s, RPC_SUBMIT, mlc_sb_str(&sb));
  assert_int_equal(t_recv(s, 3000, &body), RPC_ACCEPTED);
  assert_int_equal(json_array_size(json_object_get(body, "ids")), 4);
  json_decref(body);
  json_decref(t_recv(s, 3000, &body) == RPC_BUSY ? body : NULL);
  assert_int_equal(t_stat(ep, "nobody", "queued"), 4);
  mlc_sb_free(&sb);
  zmq_close(s);
  zmq_ctx_term(ctx);

  /* a real client with more jobs than the bound still gets every result */
  t_worker_t *w = t_worker(ep, "key-a", "a1", 2, 0, NULL);
  static t_batch_t batch;
  const char *keys[] = {"key-a"};
  t_batch_init(&batch, 100, keys, 1, "w");
  rpc_client_t *c;
  assert_int_equal(rpc_client_open(&c, ep, NULL, NULL), MLC_OK);
  assert_int_equal(rpc_client_run(c, batch.jobs, batch.n, t_on_result, &batch, 10000, NULL), MLC_OK);
  t_batch_check_echo(&batch);
  assert_int_equal(w->nrun, 100);
  rpc_client_close(c);
  t_worker_stop(w);
  rpc_broker_stop(b);
}

static void test_client_disconnect_drops_its_queued_jobs(void **state) {
  (void)state;
  rpc_broker_t *b = t_broker(NULL, 0, NULL);
  const char *ep = rpc_broker_endpoint(b);
  t_worker_t *w = t_worker(ep, "key-a", "a1", 1, 30, NULL);
  static t_batch_t batch;
  const char *keys[] = {"key-a"};
  t_batch_init(&batch, 40, keys, 1, "w");
  batch.stop_after = 2;
  rpc_client_t *c;
  assert_int_equal(rpc_client_open(&c, ep, NULL, NULL), MLC_OK);
  assert_int_equal(rpc_client_run(c, batch.jobs, batch.n, t_on_result, &batch, 10000, &batch.stop), MLC_OK);
  assert_int_equal(batch.ndelivered, 2); /* nothing after stop */
  t_wait_stat(ep, "key-a", "queued", 0);
  t_wait_stat(ep, "key-a", "running", 0);
  t_sleep_ms(3 * 30);
  /* the job running when the client left may finish; nothing queued ran */
  assert_true(w->nrun <= 4);
  assert_true(t_stat(ep, "key-a", "done") <= 4);
  rpc_client_close(c);
  t_worker_stop(w);
  rpc_broker_stop(b);
}

/* The longest run of consecutive jobs of one client in a worker's order. */
static int longest_run(const t_worker_t *w, int n) {
  int best = 0, cur = 0;
  for (int i = 0; i < n; i++) {
    cur = i && w->order[i][0] == w->order[i - 1][0] ? cur + 1 : 1;
    if (cur > best) best = cur;
  }
  return best;
}

static void test_two_clients_share_workers_fairly(void **state) {
  (void)state;
  rpc_broker_t *b = t_broker(NULL, 0, NULL);
  const char *ep = rpc_broker_endpoint(b);
  static t_batch_t ba, bb;
  const char *keys[] = {"key-a"};
  t_batch_init(&ba, 20, keys, 1, "A");
  t_batch_init(&bb, 20, keys, 1, "B");
  t_client_run_t ra = {.batch = &ba, .timeout_ms = 15000}, rb = {.batch = &bb, .timeout_ms = 15000};
  assert_int_equal(rpc_client_open(&ra.client, ep, NULL, NULL), MLC_OK);
  assert_int_equal(rpc_client_open(&rb.client, ep, NULL, NULL), MLC_OK);
  /* A's whole backlog is queued before B arrives; no worker yet */
  assert_int_equal(pthread_create(&ra.thread, NULL, t_client_main, &ra), 0);
  t_wait_stat(ep, "key-a", "queued", 20);
  assert_int_equal(pthread_create(&rb.thread, NULL, t_client_main, &rb), 0);
  t_wait_stat(ep, "key-a", "queued", 40);
  t_worker_t *w = t_worker(ep, "key-a", "a1", 1, 2, NULL);
  pthread_join(ra.thread, NULL);
  pthread_join(rb.thread, NULL);
  assert_int_equal(ra.status, MLC_OK);
  assert_int_equal(rb.status, MLC_OK);
  t_batch_check_echo(&ba);
  t_batch_check_echo(&bb);
  assert_int_equal(w->nrun, 40);
  /* round robin: B's jobs interleave with A's instead of waiting for them */
  assert_true(longest_run(w, 40) <= 2);
  int a_first_half = 0;
  for (int i = 0; i < 20; i++) a_first_half += w->order[i][0] == 'A';
  assert_true(a_first_half >= 9 && a_first_half <= 11);
  rpc_client_close(ra.client);
  rpc_client_close(rb.client);
  t_worker_stop(w);
  rpc_broker_stop(b);
}

/* A worker with prefetch 3 holds four jobs (one running, three queued at
 * the worker); stopped, it finishes what it started and hands the rest
 * back, which another worker then runs: every job answered once. */
static void test_prefetch_holds_jobs_and_a_stopping_worker_hands_them_back(void **state) {
  (void)state;
  rpc_broker_t *b = t_broker(NULL, 0, NULL);
  const char *ep = rpc_broker_endpoint(b);
  t_worker_t *w1 = t_worker_prefetch(ep, "key-a", "p1", 1, 3, 100, NULL);
  t_wait_stat(ep, "key-a", "workers", 1);
  static t_batch_t batch;
  const char *keys[] = {"key-a"};
  t_batch_init(&batch, 8, keys, 1, "w");
  t_client_run_t run = {.batch = &batch, .timeout_ms = 15000};
  assert_int_equal(rpc_client_open(&run.client, ep, NULL, NULL), MLC_OK);
  assert_int_equal(pthread_create(&run.thread, NULL, t_client_main, &run), 0);
  t_wait_stat(ep, "key-a", "running", 4);
  assert_int_equal(t_stat(ep, "key-a", "queued"), 4);
  w1->stop = 1;
  pthread_join(w1->thread, NULL);
  assert_int_equal(w1->status, MLC_OK);
  int ran = w1->nrun;
  assert_true(ran >= 1 && ran <= 2); /* what it had started when told to stop */
  t_wait_stat(ep, "key-a", "queued", 8 - ran);
  assert_true(t_stat(ep, "key-a", "requeued") >= 2);
  t_worker_t *w2 = t_worker(ep, "key-a", "p2", 1, 0, NULL);
  pthread_join(run.thread, NULL);
  assert_int_equal(run.status, MLC_OK);
  t_batch_check_echo(&batch);
  assert_int_equal(w2->nrun, 8 - ran);
  rpc_client_close(run.client);
  t_worker_stop(w2);
  pthread_mutex_destroy(&w1->lock);
  free(w1);
  rpc_broker_stop(b);
}

static void test_bad_options_are_refused(void **state) {
  (void)state;
  rpc_broker_options_t o;
  rpc_broker_options_default(&o);
  o.bind = "nonsense://here";
  rpc_broker_t *b = NULL;
  assert_int_equal(rpc_broker_start(&b, &o), MLC_EINVAL);
  assert_null(b);
  assert_non_null(strstr(mlc_error_last(), "nonsense://here"));
  o.bind = "tcp://127.0.0.1:*";
  o.queue_bound = -1;
  assert_int_equal(rpc_broker_start(&b, &o), MLC_EINVAL);
  rpc_worker_options_t wo = {0};
  assert_int_equal(rpc_worker_run(&wo, NULL), MLC_EINVAL);
  wo = (rpc_worker_options_t){.broker = "tcp://127.0.0.1:1", .device_key = "k", .worker_id = "w", .capacity = 1,
                              .prefetch = 1025, .run = t_echo};
  assert_int_equal(rpc_worker_run(&wo, NULL), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "prefetch 1025"));
  rpc_client_t *c = NULL;
  assert_int_equal(rpc_client_open(&c, "", NULL, NULL), MLC_EINVAL);
  assert_int_equal(rpc_client_open(&c, "tcp://127.0.0.1:1", NULL, NULL), MLC_OK);
  rpc_job_t bad = {0};
  snprintf(bad.device_key, sizeof bad.device_key, "k");
  bad.workload = "w";
  bad.target = "llvm";
  bad.trace_json = "not json";
  static t_batch_t unused;
  assert_int_equal(rpc_client_run(c, &bad, 1, t_on_result, &unused, 1000, NULL), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "job 0"));
  /* no broker there: gives up after the timeout */
  static t_batch_t batch;
  const char *keys[] = {"k"};
  t_batch_init(&batch, 2, keys, 1, "w");
  assert_int_equal(rpc_client_run(c, batch.jobs, 2, t_on_result, &batch, 400, NULL), MLC_ETIMEOUT);
  rpc_client_close(c);
}

int main(void) {
  if (!getenv("MLC_LOG")) mlc_log_set_level(MLC_LOG_ERROR);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_jobs_are_routed_by_device_key_and_answered_once),
      cmocka_unit_test(test_submit_beyond_the_bound_gets_busy),
      cmocka_unit_test(test_client_disconnect_drops_its_queued_jobs),
      cmocka_unit_test(test_two_clients_share_workers_fairly),
      cmocka_unit_test(test_prefetch_holds_jobs_and_a_stopping_worker_hands_them_back),
      cmocka_unit_test(test_bad_options_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
