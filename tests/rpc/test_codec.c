/*
 * test_codec.c - the wire codec (rpc/codec.c, rpc/codec_job.c): jobs and
 * results survive encode -> frames -> decode exactly, every command's
 * minimal body decodes, and every malformed shape (frames, tag, command,
 * JSON, each field of each command) is refused with MLC_EPARSE and a detail
 * naming what was wrong.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc.h"
#include "rpc/rpc_priv.h"

/* Decodes [tag][cmd][body] built from strings. */
static int decode3(rpc_msg_t *m, const char *tag, int cmd, const char *body) {
  unsigned char c = (unsigned char)cmd;
  const void *frames[3] = {tag, &c, body};
  size_t lens[3] = {strlen(tag), 1, strlen(body)};
  return rpc_msg_decode(m, frames, lens, 3);
}

static void expect_refused(int cmd, const char *body, const char *detail) {
  rpc_msg_t m;
  int st = decode3(&m, MLC_RPC_PROTOCOL, cmd, body);
  if (st != MLC_EPARSE || !strstr(mlc_error_last(), detail)) {
    print_error("%s %s: status %d, detail '%s', expected '%s'\n", rpc_cmd_name((rpc_cmd_t)cmd), body, st,
                mlc_error_last(), detail);
    fail();
  }
  assert_null(m.body);
}

static void expect_ok(int cmd, const char *body) {
  rpc_msg_t m;
  int st = decode3(&m, MLC_RPC_PROTOCOL, cmd, body);
  if (st != MLC_OK) {
    print_error("%s %s: %s\n", rpc_cmd_name((rpc_cmd_t)cmd), body, mlc_error_last());
    fail();
  }
  assert_int_equal(m.cmd, cmd);
  json_decref(m.body);
}

static rpc_job_t sample_job(void) {
  rpc_job_t job;
  memset(&job, 0, sizeof job);
  snprintf(job.id, sizeof job.id, "abc-7");
  snprintf(job.device_key, sizeof job.device_key, "llvm-skylake-avx512");
  job.workload = "@T.prim_func\ndef main(A: T.Buffer((4,), \"float32\")):\n    T.evaluate(0)\n";
  job.trace_json = "[[[\"GetBlock\",[],[\"C\",\"main\"],[\"b0\"]]],[]]";
  job.target = "llvm -mcpu=skylake-avx512 -num-cores=2";
  job.options = json_pack("{s:i, s:i, s:f}", "number", 3, "repeat", 1, "min_repeat_ms", 100.0);
  return job;
}

/* Encodes body as a message's frames and decodes them again. */
static json_t *through_wire(rpc_cmd_t cmd, json_t *body) {
  char *text;
  size_t len;
  assert_int_equal(rpc_msg_encode_body(&text, &len, body), MLC_OK);
  unsigned char c = (unsigned char)cmd;
  const void *frames[3] = {MLC_RPC_PROTOCOL, &c, text};
  size_t lens[3] = {5, 1, len};
  rpc_msg_t m;
  assert_int_equal(rpc_msg_decode(&m, frames, lens, 3), MLC_OK);
  assert_int_equal(m.cmd, cmd);
  mlc_free(text);
  return m.body;
}

static void test_job_round_trips_through_the_wire(void **state) {
  (void)state;
  rpc_job_t job = sample_job();
  json_t *j = rpc_job_to_json(&job);
  assert_non_null(j);
  json_t *back = through_wire(RPC_JOB, j);
  rpc_job_t got;
  assert_int_equal(rpc_job_from_json(&got, back), MLC_OK);
  assert_string_equal(got.id, job.id);
  assert_string_equal(got.device_key, job.device_key);
  assert_string_equal(got.workload, job.workload);
  assert_string_equal(got.trace_json, job.trace_json);
  assert_string_equal(got.target, job.target);
  assert_true(json_equal(got.options, job.options));
  rpc_job_free(&got);
  assert_null(got.workload);
  json_decref(back);
  json_decref(j);
  json_decref(job.options);
}

static void test_result_round_trips_exactly(void **state) {
  (void)state;
  rpc_result_t r;
  memset(&r, 0, sizeof r);
  snprintf(r.id, sizeof r.id, "abc-8");
  r.nrun_secs = 3;
  r.run_secs[0] = 1.0 / 3.0;
  r.run_secs[1] = 2.5e-7;
  r.run_secs[2] = 0.125;
  r.build_secs = 0.75;
  snprintf(r.worker_id, sizeof r.worker_id, "host-cpu0-42");
  snprintf(r.device_key, sizeof r.device_key, "llvm-znver4");
  r.device_json = "{\"cpu\":\"AMD EPYC\",\"cores\":2}";
  json_t *j = rpc_result_to_json(&r);
  assert_non_null(j);
  json_t *back = through_wire(RPC_RESULT, j);
  rpc_result_t got;
  assert_int_equal(rpc_result_from_json(&got, back), MLC_OK);
  assert_string_equal(got.id, r.id);
  assert_int_equal(got.error, MLC_ERROR_KIND_NONE);
  assert_int_equal(got.nrun_secs, 3);
  for (int i = 0; i < 3; i++) assert_true(got.run_secs[i] == r.run_secs[i]);
  assert_true(got.build_secs == 0.75);
  assert_string_equal(got.worker_id, r.worker_id);
  assert_string_equal(got.device_key, r.device_key);
  json_t *dev = json_loads(got.device_json, 0, NULL);
  assert_int_equal(json_integer_value(json_object_get(dev, "cores")), 2);
  json_decref(dev);
  rpc_result_free(&got);
  json_decref(back);
  json_decref(j);
}

static void test_failed_result_carries_kind_and_message(void **state) {
  (void)state;
  rpc_result_t r;
  memset(&r, 0, sizeof r);
  snprintf(r.id, sizeof r.id, "x-1");
  r.error = MLC_ERROR_KIND_WORKER_LOST;
  snprintf(r.message, sizeof r.message, "gave up after 2 re-queues");
  json_t *j = rpc_result_to_json(&r);
  assert_non_null(j);
  assert_string_equal(json_string_value(json_object_get(j, "error")), "worker-lost");
  assert_true(json_is_null(json_object_get(j, "device")));
  rpc_result_t got;
  assert_int_equal(rpc_result_from_json(&got, j), MLC_OK);
  assert_int_equal(got.error, MLC_ERROR_KIND_WORKER_LOST);
  assert_string_equal(got.message, r.message);
  assert_null(got.device_json);
  json_decref(j);
}

static void test_every_command_has_a_minimal_body(void **state) {
  (void)state;
  static const char job[] =
      "{\"id\":\"c-1\",\"device_key\":\"k\",\"workload\":\"w\",\"trace\":[[],[]],\"target\":\"llvm\"}";
  static const char result[] =
      "{\"id\":\"c-1\",\"error\":\"build\",\"message\":\"m\",\"run_secs\":[],\"build_secs\":0,"
      "\"worker_id\":\"w\",\"device_key\":\"k\"}";
  char submit[256];
  snprintf(submit, sizeof submit, "{\"jobs\":[%s]}", job);
  expect_ok(RPC_READY, "{\"device_key\":\"k\",\"device\":{},\"capacity\":1,\"worker_id\":\"w\"}");
  /* capacity 0: a worker that is stopping */
  expect_ok(RPC_READY, "{\"device_key\":\"k\",\"device\":{},\"capacity\":0,\"worker_id\":\"w\"}");
  expect_ok(RPC_HEARTBEAT, "{}");
  expect_ok(RPC_HEARTBEAT, "{\"heartbeat_ms\":100,\"liveness\":3}");
  expect_ok(RPC_SUBMIT, submit);
  expect_ok(RPC_ACCEPTED, "{\"ids\":[\"c-1\"]}");
  expect_ok(RPC_BUSY, "{\"ids\":[],\"reason\":\"full\"}");
  expect_ok(RPC_JOB, job);
  expect_ok(RPC_RESULT, result);
  expect_ok(RPC_ERROR, "{\"message\":\"no\",\"id\":\"c-1\"}");
  expect_ok(RPC_STATS, "{}");
  expect_ok(RPC_STATS, "{\"k\":{\"workers\":1}}");
  expect_ok(RPC_DISCONNECT, "{}");
  expect_ok(RPC_DISCONNECT, "{\"future\":\"fields are ignored\"}");
  assert_string_equal(rpc_cmd_name(RPC_SUBMIT), "SUBMIT");
  assert_string_equal(rpc_cmd_name((rpc_cmd_t)0), "?");
  assert_string_equal(rpc_cmd_name(RPC_CMD_COUNT), "?");
}

static void test_bad_frames_are_refused(void **state) {
  (void)state;
  rpc_msg_t m;
  const void *two[2] = {MLC_RPC_PROTOCOL, "\x02"};
  size_t two_lens[2] = {5, 1};
  assert_int_equal(rpc_msg_decode(&m, two, two_lens, 2), MLC_EPARSE);
  assert_non_null(strstr(mlc_error_last(), "expected 3 frames"));
  assert_int_equal(decode3(&m, "MLC02", RPC_HEARTBEAT, "{}"), MLC_EPARSE);
  assert_non_null(strstr(mlc_error_last(), "frame 0"));
  assert_int_equal(decode3(&m, "MLC0", RPC_HEARTBEAT, "{}"), MLC_EPARSE);
  expect_refused(0, "{}", "unknown command 0");
  expect_refused(RPC_CMD_COUNT, "{}", "unknown command 11");
  expect_refused(200, "{}", "unknown command 200");
  const void *wide[3] = {MLC_RPC_PROTOCOL, "\x02\x02", "{}"};
  size_t wide_lens[3] = {5, 2, 2};
  assert_int_equal(rpc_msg_decode(&m, wide, wide_lens, 3), MLC_EPARSE);
  assert_non_null(strstr(mlc_error_last(), "one byte"));
  expect_refused(RPC_HEARTBEAT, "", "empty body");
  expect_refused(RPC_HEARTBEAT, "{", "not JSON");
  expect_refused(RPC_HEARTBEAT, "\xff\xfe", "not JSON");
  expect_refused(RPC_HEARTBEAT, "[]", "not a JSON object");
  expect_refused(RPC_HEARTBEAT, "42", "not JSON");
  expect_refused(RPC_HEARTBEAT, "{\"a\":1,\"a\":2}", "not JSON");
  expect_refused(RPC_HEARTBEAT, "{} {}", "not JSON");
  /* a NUL inside the body frame */
  const void *nul[3] = {MLC_RPC_PROTOCOL, "\x02", "{}\0"};
  size_t nul_lens[3] = {5, 1, 3};
  assert_int_equal(rpc_msg_decode(&m, nul, nul_lens, 3), MLC_EPARSE);
  assert_int_equal(rpc_msg_decode(NULL, nul, nul_lens, 3), MLC_EINVAL);
}

static void test_oversized_body_is_refused_before_parsing(void **state) {
  (void)state;
  size_t n = (size_t)MLC_RPC_MAX_MESSAGE + 1;
  char *big = malloc(n);
  assert_non_null(big);
  memset(big, ' ', n);
  big[0] = '{';
  big[n - 1] = '}';
  unsigned char c = RPC_HEARTBEAT;
  const void *frames[3] = {MLC_RPC_PROTOCOL, &c, big};
  size_t lens[3] = {5, 1, n};
  rpc_msg_t m;
  assert_int_equal(rpc_msg_decode(&m, frames, lens, 3), MLC_EPARSE);
  assert_non_null(strstr(mlc_error_last(), "exceeds the limit"));
  lens[2] = n - 1; /* at the limit: fine */
  big[n - 2] = '}';
  assert_int_equal(rpc_msg_decode(&m, frames, lens, 3), MLC_OK);
  json_decref(m.body);
  free(big);
}

static void test_every_malformed_shape_is_named(void **state) {
  (void)state;
  static const struct {
    int cmd;
    const char *body, *detail;
  } cases[] = {
      {RPC_READY, "{}", "READY: device_key: missing"},
      {RPC_READY, "{\"device_key\":5}", "READY: device_key: expected a string"},
      {RPC_READY, "{\"device_key\":\"\"}", "READY: device_key: must not be empty"},
      {RPC_READY, "{\"device_key\":\"0123456789012345678901234567890123456789012345678901234567890123\"}",
       "device_key: longer than 63 bytes"},
      {RPC_READY, "{\"device_key\":\"a\\nb\"}", "device_key: control character"},
      {RPC_READY, "{\"device_key\":\"k\",\"worker_id\":\"w\"}", "READY: capacity: missing"},
      {RPC_READY, "{\"device_key\":\"k\",\"worker_id\":\"w\",\"capacity\":-1}", "capacity: -1 is outside [0, 1024]"},
      {RPC_READY, "{\"device_key\":\"k\",\"worker_id\":\"w\",\"capacity\":\"1\"}", "capacity: expected an integer"},
      {RPC_READY, "{\"device_key\":\"k\",\"worker_id\":\"w\",\"capacity\":1}", "READY: device: missing"},
      {RPC_READY, "{\"device_key\":\"k\",\"worker_id\":\"w\",\"capacity\":1,\"device\":[]}", "device: expected a JSON object"},
      {RPC_HEARTBEAT, "{\"heartbeat_ms\":0}", "heartbeat_ms: 0 is outside"},
      {RPC_HEARTBEAT, "{\"liveness\":\"3\"}", "liveness: expected an integer"},
      {RPC_SUBMIT, "{}", "SUBMIT: jobs: missing"},
      {RPC_SUBMIT, "{\"jobs\":{}}", "SUBMIT: jobs: expected a JSON array"},
      {RPC_SUBMIT, "{\"jobs\":[]}", "SUBMIT: jobs: empty"},
      {RPC_SUBMIT, "{\"jobs\":[1]}", "SUBMIT: jobs[0]: expected a JSON object"},
      {RPC_SUBMIT, "{\"jobs\":[{}]}", "SUBMIT: jobs[0].id: missing"},
      {RPC_SUBMIT,
       "{\"jobs\":[{\"id\":\"a\",\"device_key\":\"k\",\"workload\":\"w\",\"target\":\"t\",\"trace\":[]},"
       "{\"id\":\"b\",\"device_key\":\"k\",\"workload\":\"w\",\"target\":\"t\",\"trace\":[]},"
       "{\"id\":\"c\",\"device_key\":\"k\",\"workload\":\"w\",\"target\":\"t\",\"trace\":[]},"
       "{\"id\":\"d\",\"device_key\":\"k\",\"workload\":\"w\",\"target\":\"t\",\"trace\":\"[]\"}]}",
       "SUBMIT: jobs[3].trace: expected a JSON array"},
      {RPC_SUBMIT, "{\"jobs\":[{\"id\":\"0123456789012345678901234567890123456789\"}]}", "jobs[0].id: longer than 39"},
      {RPC_SUBMIT, "{\"jobs\":[{\"id\":\"a\",\"device_key\":\"k\",\"workload\":\"w\",\"target\":\"t\",\"trace\":[],\"options\":5}]}",
       "jobs[0].options: expected a JSON object"},
      {RPC_ACCEPTED, "{}", "ACCEPTED: ids: missing"},
      {RPC_ACCEPTED, "{\"ids\":[1]}", "ACCEPTED: ids[0]: expected a job id"},
      {RPC_ACCEPTED, "{\"ids\":[\"\"]}", "ids[0]: expected a job id"},
      {RPC_BUSY, "{\"ids\":[]}", "BUSY: reason: missing"},
      {RPC_JOB, "{\"id\":\"a\",\"device_key\":\"k\",\"target\":\"t\",\"trace\":[]}", "JOB: workload: missing"},
      {RPC_JOB, "{\"id\":\"a\",\"device_key\":\"k\",\"workload\":\"w\",\"target\":5,\"trace\":[]}", "JOB: target: expected a string"},
      {RPC_JOB, "{\"id\":\"a\",\"device_key\":\"k\",\"workload\":\"w\",\"target\":\"t\"}", "JOB: trace: missing"},
      {RPC_RESULT, "{\"id\":\"a\",\"error\":\"bogus\",\"message\":\"\",\"worker_id\":\"\",\"device_key\":\"\"}",
       "RESULT: error: unknown error kind 'bogus'"},
      {RPC_RESULT, "{\"id\":\"a\",\"error\":\"\",\"message\":\"\",\"worker_id\":\"\",\"device_key\":\"\",\"run_secs\":[]}",
       "run_secs: a measured result needs a time"},
      {RPC_RESULT, "{\"id\":\"a\",\"error\":\"\",\"message\":\"\",\"worker_id\":\"\",\"device_key\":\"\",\"run_secs\":[-1]}",
       "run_secs[0]: must be a time >= 0"},
      {RPC_RESULT, "{\"id\":\"a\",\"error\":\"\",\"message\":\"\",\"worker_id\":\"\",\"device_key\":\"\",\"run_secs\":[\"1\"]}",
       "run_secs[0]: expected a number"},
      {RPC_RESULT, "{\"id\":\"a\",\"error\":\"\",\"message\":\"\",\"worker_id\":\"\",\"device_key\":\"\",\"run_secs\":[1]}",
       "RESULT: build_secs: missing"},
      {RPC_RESULT,
       "{\"id\":\"a\",\"error\":\"\",\"message\":\"\",\"worker_id\":\"\",\"device_key\":\"\",\"run_secs\":[1],"
       "\"build_secs\":0,\"device\":5}",
       "RESULT: device: expected a JSON object or null"},
      {RPC_RESULT, "{\"id\":\"a\",\"error\":\"\",\"message\":7}", "RESULT: message: expected a string"},
      {RPC_ERROR, "{}", "ERROR: message: missing"},
      {RPC_ERROR, "{\"message\":\"m\",\"id\":5}", "ERROR: id: expected a string"},
      {RPC_STATS, "{\"k\":1}", "STATS: k: expected a JSON object"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) expect_refused(cases[i].cmd, cases[i].body, cases[i].detail);

  /* 65 run times */
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  mlc_sb_append(&sb, "{\"id\":\"a\",\"error\":\"\",\"message\":\"\",\"worker_id\":\"\",\"device_key\":\"\",\"build_secs\":0,\"run_secs\":[1");
  for (int i = 1; i < 65; i++) mlc_sb_append(&sb, ",1");
  mlc_sb_append(&sb, "]}");
  expect_refused(RPC_RESULT, mlc_sb_str(&sb), "run_secs: 65 times, at most 64");
  mlc_sb_free(&sb);
}

static void test_encoders_refuse_what_receivers_would(void **state) {
  (void)state;
  rpc_job_t job = sample_job();
  job.trace_json = "{\"not\":\"a trace\"}";
  assert_null(rpc_job_to_json(&job));
  assert_int_equal(mlc_error_last_code(), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "trace: expected a JSON array"));
  job.trace_json = "[[],[]]";
  job.workload = NULL;
  assert_null(rpc_job_to_json(&job));
  job.workload = "w";
  job.device_key[0] = '\0';
  assert_null(rpc_job_to_json(&job));
  assert_non_null(strstr(mlc_error_last(), "device_key: must not be empty"));
  json_decref(job.options);

  rpc_result_t r;
  memset(&r, 0, sizeof r);
  snprintf(r.id, sizeof r.id, "a");
  assert_null(rpc_result_to_json(&r)); /* measured, but no time */
  r.nrun_secs = 65;
  assert_null(rpc_result_to_json(&r));
  r.nrun_secs = 1;
  r.run_secs[0] = NAN;
  assert_null(rpc_result_to_json(&r));
  r.run_secs[0] = 1e-3;
  r.device_json = "[1]";
  assert_null(rpc_result_to_json(&r));
  r.device_json = NULL;
  json_t *ok = rpc_result_to_json(&r);
  assert_non_null(ok);
  json_decref(ok);

  char *text;
  size_t len;
  json_t *arr = json_array();
  assert_int_equal(rpc_msg_encode_body(&text, &len, arr), MLC_EINVAL);
  json_decref(arr);
  json_t *huge = json_pack("{s:s%}", "x", "", (size_t)0);
  char *filler = malloc(MLC_RPC_MAX_MESSAGE);
  assert_non_null(filler);
  memset(filler, 'a', MLC_RPC_MAX_MESSAGE - 1);
  filler[MLC_RPC_MAX_MESSAGE - 1] = '\0';
  json_object_set_new(huge, "x", json_string(filler));
  assert_int_equal(rpc_msg_encode_body(&text, &len, huge), MLC_ERANGE);
  assert_null(text);
  free(filler);
  json_decref(huge);
}

static void test_messages_stay_valid_utf8(void **state) {
  (void)state;
  rpc_result_t r;
  memset(&r, 0, sizeof r);
  snprintf(r.id, sizeof r.id, "a");
  r.error = MLC_ERROR_KIND_BUILD;
  snprintf(r.message, sizeof r.message, "bad \xff byte: caf\xc3\xa9 \xed\xa0\x80");
  json_t *j = rpc_result_to_json(&r);
  assert_non_null(j);
  assert_string_equal(json_string_value(json_object_get(j, "message")), "bad ? byte: caf\xc3\xa9 ???");
  json_decref(j);
  /* a message cut to fit never splits a character */
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  for (int i = 0; i < 1000; i++) mlc_sb_append(&sb, "\xc3\xa9");
  snprintf(r.message, sizeof r.message, "%s", mlc_sb_str(&sb)); /* 1023 bytes: half an e-acute at the end */
  assert_non_null(j = rpc_result_to_json(&r));
  assert_int_equal(json_string_length(json_object_get(j, "message")), 1023);
  assert_int_equal(json_string_value(json_object_get(j, "message"))[1022], '?');
  json_object_set_new(j, "message", json_string(mlc_sb_str(&sb)));
  rpc_result_t got;
  assert_int_equal(rpc_result_from_json(&got, j), MLC_OK);
  assert_int_equal(strlen(got.message), 1022);
  json_t *again = rpc_result_to_json(&got);
  assert_non_null(again);
  json_decref(again);
  json_decref(j);
  mlc_sb_free(&sb);
}

/* The broker reads a SUBMIT from its text (rpc_submit_scan): each job's
 * span parses to the job jansson finds, with its id and device key decoded;
 * what the tree checks refuse, it refuses with the same detail. */
static void test_submit_scan_agrees_with_the_tree(void **state) {
  (void)state;
  const char *text = " { \"a\" : \"x]}\\\",\" , \"jobs\":[ {\"id\":\"1\",\"device_key\":\"k\\u0031\",\"workload\":\"w\","
                     "\"target\":\"t\",\"trace\":[[1,2],{\"k\":\"]\"}]} ,{\"id\":\"2\",\"device_key\":\"k\","
                     "\"workload\":\"w\",\"target\":\"t\",\"trace\":[]}] ,\"n\": -1.5e3 , \"o\":{\"jobs\":1}}";
  rpc_msg_t m;
  assert_int_equal(decode3(&m, MLC_RPC_PROTOCOL, RPC_SUBMIT, text), MLC_OK);
  rpc_submit_jobs_t jobs;
  assert_int_equal(rpc_submit_scan(&jobs, text, strlen(text)), MLC_OK);
  const json_t *want = json_object_get(m.body, "jobs");
  assert_int_equal(jobs.len, json_array_size(want));
  for (size_t i = 0; i < jobs.len; i++) {
    json_t *item = json_loadb(text + jobs.data[i].start, jobs.data[i].end - jobs.data[i].start, 0, NULL);
    assert_true(json_equal(item, json_array_get(want, i)));
    assert_string_equal(jobs.data[i].id, json_string_value(json_object_get(item, "id")));
    assert_string_equal(jobs.data[i].device_key, json_string_value(json_object_get(item, "device_key")));
    json_decref(item);
  }
  assert_string_equal(jobs.data[0].device_key, "k1");
  mlc_vec_free(&jobs);
  json_decref(m.body);
  static const struct {
    const char *body, *detail;
  } bad[] = {
      {"{}", "SUBMIT: jobs: missing"},
      {"{\"jobs\":{}}", "SUBMIT: jobs: expected a JSON array"},
      {"{\"jobs\":[]}", "SUBMIT: jobs: empty"},
      {"{\"jobs\":[1]}", "SUBMIT: jobs[0]: expected a JSON object"},
      {"{\"jobs\":[{}]}", "SUBMIT: jobs[0].id: missing"},
      {"{\"jobs\":[{\"id\":\"a\",\"device_key\":\"k\",\"workload\":\"w\",\"target\":\"t\",\"trace\":[]},"
       "{\"id\":\"b\",\"device_key\":\"k\",\"workload\":\"w\",\"target\":\"t\",\"trace\":5}]}",
       "SUBMIT: jobs[1].trace: expected a JSON array"},
      {"{\"jobs\":[{\"id\":\"a\",\"device_key\":\"k\",\"workload\":\"w\",\"target\":\"t\",\"trace\":[]} 5]}",
       "SUBMIT is not JSON: a missing ',' between values"},
      {"[1]", "SUBMIT body is not a JSON object"},
      {"{\"jobs\":[]} {", "SUBMIT is not JSON: trailing characters"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    assert_int_equal(decode3(&m, MLC_RPC_PROTOCOL, RPC_SUBMIT, bad[i].body), MLC_EPARSE);
    int st = rpc_submit_scan(&jobs, bad[i].body, strlen(bad[i].body));
    if (st != MLC_EPARSE || !strstr(mlc_error_last(), bad[i].detail)) {
      print_error("%s: status %d, '%s', expected '%s'\n", bad[i].body, st, mlc_error_last(), bad[i].detail);
      fail();
    }
    assert_null(jobs.data);
  }
}

static void test_job_text_is_the_job_json(void **state) {
  (void)state;
  rpc_job_t job = sample_job();
  job.workload = "quote \" backslash \\ tab \t newline \n bell \x07 e-acute \xc3\xa9";
  job.trace_json = "\n  [[[\"GetBlock\", [], [\"C\", \"main\"], [\"b0\"]]], []]  \n";
  snprintf(job.device_key, sizeof job.device_key, "key \"quoted\"");
  char *text;
  size_t len;
  assert_int_equal(rpc_job_text(&text, &len, &job), MLC_OK);
  assert_int_equal(strlen(text), len);
  json_t *from_text = json_loads(text, JSON_REJECT_DUPLICATES, NULL), *from_tree = rpc_job_to_json(&job);
  assert_non_null(from_text);
  assert_non_null(from_tree);
  assert_true(json_equal(from_text, from_tree));
  assert_int_equal(rpc_check_job(from_text, "job: "), MLC_OK);
  mlc_free(text);
  json_decref(from_text);
  json_decref(from_tree);
  /* what rpc_job_to_json refuses, rpc_job_text refuses */
  job.trace_json = "{}";
  assert_int_equal(rpc_job_text(&text, &len, &job), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "trace: expected a JSON array"));
  job.trace_json = "[]";
  job.workload = "bad \xff";
  assert_int_equal(rpc_job_text(&text, &len, &job), MLC_EINVAL);
  job.workload = "w";
  snprintf(job.id, sizeof job.id, "a\x01");
  assert_int_equal(rpc_job_text(&text, &len, &job), MLC_EINVAL);
  job.id[0] = '\0';
  assert_int_equal(rpc_job_text(&text, &len, &job), MLC_EINVAL);
  assert_null(text);
  json_decref(job.options);
}

/* The worker reads JOBs from their text (rpc_job_decode) instead of the
 * tree: it accepts what the tree checks accept, with the same values, and
 * refuses what they refuse, naming the field. */
#define JOB_REST "\"device_key\":\"k\",\"workload\":\"w\",\"target\":\"llvm\",\"trace\":[[],[]]"
static void test_job_text_decoding_agrees_with_the_tree(void **state) {
  (void)state;
  static const char *const good[] = {
      "{\"id\":\"j1\"," JOB_REST "}",
      " {\"id\":\"a\\u0062c\",\"device_key\":\"k\\\"1\",\"workload\":\"line\\nnext \\u00e9 \\ud83d\\ude00\","
      "\"target\":\"llvm\",\"trace\":[[[\"GetBlock\",[],[\"C\",\"main\"],[\"b0\"]]],[]],\"options\":null}\n",
      "{\"id\":\"j2\"," JOB_REST ",\"options\":{\"number\":3,\"check\":true},\"extra\":{\"x\":[1,2.5e3]}}",
  };
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    rpc_msg_t m;
    assert_int_equal(decode3(&m, MLC_RPC_PROTOCOL, RPC_JOB, good[i]), MLC_OK);
    rpc_job_t tree, text;
    assert_int_equal(rpc_job_from_json(&tree, m.body), MLC_OK);
    if (rpc_job_decode(&text, good[i], strlen(good[i]), "JOB: ") != MLC_OK) {
      print_error("%s: %s\n", good[i], mlc_error_last());
      fail();
    }
    assert_string_equal(text.id, tree.id);
    assert_string_equal(text.device_key, tree.device_key);
    assert_string_equal(text.workload, tree.workload);
    assert_string_equal(text.target, tree.target);
    json_t *a = json_loads(text.trace_json, 0, NULL), *b = json_loads(tree.trace_json, 0, NULL);
    assert_true(json_equal(a, b));
    assert_true(text.options == tree.options || json_equal(text.options, tree.options));
    json_decref(a);
    json_decref(b);
    rpc_job_free(&text);
    rpc_job_free(&tree);
    json_decref(m.body);
  }
  static const struct {
    const char *body, *detail;
  } bad[] = {
      {"[]", "JOB: expected a JSON object"},
      {"{" JOB_REST "}", "JOB: id: missing"},
      {"{\"id\":\"\"," JOB_REST "}", "JOB: id: must not be empty"},
      {"{\"id\":\"0123456789012345678901234567890123456789\"," JOB_REST "}", "JOB: id: longer than 39 bytes"},
      {"{\"id\":\"a\\u0001\"," JOB_REST "}", "JOB: id: control character at byte 1"},
      {"{\"id\":\"a\",\"device_key\":7,\"workload\":\"w\",\"target\":\"llvm\",\"trace\":[]}",
       "JOB: device_key: expected a string"},
      {"{\"id\":\"a\",\"device_key\":\"k\",\"workload\":\"w\",\"target\":\"llvm\",\"trace\":{}}",
       "JOB: trace: expected a JSON array"},
      {"{\"id\":\"a\",\"device_key\":\"k\",\"workload\":\"w\",\"target\":\"llvm\"}", "JOB: trace: missing"},
      {"{\"id\":\"a\"," JOB_REST ",\"options\":3}", "JOB: options: expected a JSON object"},
      {"{\"id\":\"a\",\"id\":\"b\"," JOB_REST "}", "JOB: id: appears twice"},
      {"{\"id\":\"a\"," JOB_REST, "JOB is not JSON: an unterminated object"},
      {"{\"id\":\"a\"," JOB_REST "} x", "JOB is not JSON: trailing characters at byte"},
      {"{\"id\":\"a\",\"device_key\":\"k\",\"workload\":\"w\",\"target\":\"llvm\",\"trace\":[1,]}",
       "JOB is not JSON: a bad number at byte 70"},
      {"{\"id\":\"a\\u0000b\"," JOB_REST "}", "JOB: id: \\u0000 is not allowed"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    rpc_msg_t m;
    assert_int_equal(decode3(&m, MLC_RPC_PROTOCOL, RPC_JOB, bad[i].body), MLC_EPARSE); /* the tree refuses it too */
    rpc_job_t job;
    int st = rpc_job_decode(&job, bad[i].body, strlen(bad[i].body), "JOB: ");
    if (st != MLC_EPARSE || !strstr(mlc_error_last(), bad[i].detail)) {
      print_error("%s: status %d, '%s', expected '%s'\n", bad[i].body, st, mlc_error_last(), bad[i].detail);
      fail();
    }
    assert_null(job.workload);
  }
}

/* A raw decode leaves the chosen command's body to the caller. */
static void test_raw_decode_leaves_the_body(void **state) {
  (void)state;
  unsigned char c = RPC_JOB;
  const char *body = "{not even json";
  const void *frames[3] = {MLC_RPC_PROTOCOL, &c, body};
  size_t lens[3] = {5, 1, strlen(body)};
  rpc_msg_t m;
  assert_int_equal(rpc_msg_decode_raw(&m, frames, lens, 3, 1u << RPC_JOB), MLC_OK);
  assert_int_equal(m.cmd, RPC_JOB);
  assert_null(m.body);
  assert_int_equal(rpc_msg_decode_raw(&m, frames, lens, 3, 1u << RPC_RESULT), MLC_EPARSE);
  lens[0] = 4; /* the frames are still checked */
  assert_int_equal(rpc_msg_decode_raw(&m, frames, lens, 3, 1u << RPC_JOB), MLC_EPARSE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_job_round_trips_through_the_wire),
      cmocka_unit_test(test_result_round_trips_exactly),
      cmocka_unit_test(test_failed_result_carries_kind_and_message),
      cmocka_unit_test(test_every_command_has_a_minimal_body),
      cmocka_unit_test(test_bad_frames_are_refused),
      cmocka_unit_test(test_oversized_body_is_refused_before_parsing),
      cmocka_unit_test(test_every_malformed_shape_is_named),
      cmocka_unit_test(test_encoders_refuse_what_receivers_would),
      cmocka_unit_test(test_messages_stay_valid_utf8),
      cmocka_unit_test(test_submit_scan_agrees_with_the_tree),
      cmocka_unit_test(test_job_text_is_the_job_json),
      cmocka_unit_test(test_job_text_decoding_agrees_with_the_tree),
      cmocka_unit_test(test_raw_decode_leaves_the_body),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
