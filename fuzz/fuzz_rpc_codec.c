/*
 * fuzz_rpc_codec.c - libFuzzer target for the farm's wire codec
 * (rpc_msg_decode and the job/result decoders behind it).
 *
 * The input is cut into frames: byte 0 picks how many (0 to 4), then one
 * length byte per frame but the last, which takes the rest. Any input must
 * decode or fail with MLC_EPARSE: never crash, hang or leak (ASan and UBSan
 * are on in fuzz builds). When a message decodes, what a receiver then does
 * must work too: the body encodes and decodes again to an equal body, every
 * job in a JOB or SUBMIT converts to rpc_job_t and back to JSON, and a
 * RESULT converts to rpc_result_t and back (the codec's promise: a message
 * that decodes is safe to read); a JOB body read from its text
 * (rpc_job_decode, as workers do) agrees with the tree.
 *
 *   fuzz_rpc_codec -max_total_time=60 -dict=fuzz/rpc_codec.dict CORPUS_DIR tests/rpc/corpus
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc.h"
#include "rpc/rpc_priv.h"

static void fail(const char *what, const json_t *body) {
  char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
  fprintf(stderr, "%s\n--- body ---\n%s\n--- detail ---\n%s\n", what, text ? text : "(none)", mlc_error_last());
  abort();
}

static void check_job(const json_t *j, const json_t *body) {
  rpc_job_t job;
  if (rpc_job_from_json(&job, j) != MLC_OK) fail("a decoded job does not convert", body);
  json_t *back = rpc_job_to_json(&job);
  if (!back) fail("a decoded job does not encode again", body);
  if (!json_equal(json_object_get(back, "trace"), json_object_get(j, "trace")))
    fail("the trace changed on the way", body);
  json_decref(back);
  rpc_job_free(&job);
}

/* The broker reads a SUBMIT from its text (rpc_submit_scan) and forwards
 * each job as the bytes it arrived in: whatever the tree accepts, the scan
 * accepts, and each span holds exactly the job jansson parsed. */
static void check_submit_text(const char *text, size_t len, const json_t *tree) {
  rpc_submit_jobs_t jobs;
  int st = rpc_submit_scan(&jobs, text, len);
  if (st != MLC_OK && st != MLC_EPARSE) fail("rpc_submit_scan: a status other than MLC_EPARSE", tree);
  if (st != MLC_OK && tree && !memchr(text, '\0', len)) fail("rpc_submit_scan refused a SUBMIT the tree accepts", tree);
  if (st != MLC_OK) return;
  const json_t *want = tree ? json_object_get(tree, "jobs") : NULL;
  if (tree && jobs.len != json_array_size(want)) fail("rpc_submit_scan found another number of jobs", tree);
  for (size_t i = 0; tree && i < jobs.len; i++) {
    json_t *item = json_loadb(text + jobs.data[i].start, jobs.data[i].end - jobs.data[i].start, 0, NULL);
    if (!item || !json_equal(item, json_array_get(want, i)) ||
        strcmp(jobs.data[i].id, json_string_value(json_object_get(item, "id"))) ||
        strcmp(jobs.data[i].device_key, json_string_value(json_object_get(item, "device_key"))))
      fail("a job span is not the job", tree);
    json_decref(item);
  }
  mlc_vec_free(&jobs);
}

/* The worker decodes JOBs from their text (rpc_job_decode): whatever the
 * tree accepts, it must accept with the same values; on any other text it
 * may refuse (MLC_EPARSE with a detail) but never crash. */
static void check_job_text(const char *text, size_t len, const json_t *tree) {
  rpc_job_t job;
  int st = rpc_job_decode(&job, text, len, "JOB: ");
  if (st != MLC_OK && st != MLC_EPARSE) fail("rpc_job_decode: a status other than MLC_EPARSE", tree);
  /* jansson skips a NUL byte right after a number ("[3\0,1]" loads as [3,1]);
   * RFC 8259 has no place for one there, and the scanner refuses it */
  if (st != MLC_OK && tree && !memchr(text, '\0', len)) fail("rpc_job_decode refused a job the tree checks accept", tree);
  if (st != MLC_OK) return;
  if (tree) {
    rpc_job_t want;
    if (rpc_job_from_json(&want, tree) != MLC_OK) fail("a decoded job does not convert", tree);
    json_t *a = json_loads(job.trace_json, 0, NULL);
    if (strcmp(job.id, want.id) || strcmp(job.device_key, want.device_key) || strcmp(job.workload, want.workload) ||
        strcmp(job.target, want.target) || !json_equal(a, json_object_get(tree, "trace")) ||
        !(job.options == want.options || json_equal(job.options, want.options)))
      fail("rpc_job_decode and the tree disagree", tree);
    json_decref(a);
    rpc_job_free(&want);
  }
  rpc_job_free(&job);
}

static void check_message(const rpc_msg_t *m) {
  char *text;
  size_t len;
  if (rpc_msg_encode_body(&text, &len, m->body) != MLC_OK) fail("a decoded body does not encode", m->body);
  unsigned char c = (unsigned char)m->cmd;
  const void *frames[3] = {MLC_RPC_PROTOCOL, &c, text};
  size_t lens[3] = {strlen(MLC_RPC_PROTOCOL), 1, len};
  rpc_msg_t again;
  if (rpc_msg_decode(&again, frames, lens, 3) != MLC_OK) fail("a re-encoded body does not decode", m->body);
  if (again.cmd != m->cmd || !json_equal(again.body, m->body)) fail("re-encoding changed the message", m->body);
  json_decref(again.body);
  mlc_free(text);
  if (m->cmd == RPC_JOB) check_job(m->body, m->body);
  if (m->cmd == RPC_SUBMIT) {
    size_t i;
    const json_t *j;
    json_array_foreach(json_object_get(m->body, "jobs"), i, j) check_job(j, m->body);
  }
  if (m->cmd == RPC_RESULT) {
    rpc_result_t r;
    if (rpc_result_from_json(&r, m->body) != MLC_OK) fail("a decoded result does not convert", m->body);
    json_t *back = rpc_result_to_json(&r);
    if (!back) fail("a decoded result does not encode again", m->body);
    json_decref(back);
    rpc_result_free(&r);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  int nframes = data[0] % 5;
  size_t pos = 1;
  const void *frames[4];
  size_t lens[4];
  uint8_t *copies[4] = {NULL, NULL, NULL, NULL};
  for (int i = 0; i < nframes; i++) {
    size_t left = size - pos, len = left;
    if (i + 1 < nframes && left > 0) {
      len = data[pos++];
      left--;
      if (len > left) len = left;
    }
    /* exact-size copies, so ASan catches reads past a frame */
    copies[i] = malloc(len ? len : 1);
    if (!copies[i]) goto done;
    memcpy(copies[i], data + pos, len);
    frames[i] = copies[i];
    lens[i] = len;
    pos += len;
  }
  rpc_msg_t m;
  int st = rpc_msg_decode(&m, frames, lens, nframes);
  if (nframes == 3 && lens[0] == 5 && lens[1] == 1 && ((const uint8_t *)frames[1])[0] == RPC_JOB)
    check_job_text((const char *)frames[2], lens[2], st == MLC_OK ? m.body : NULL);
  if (nframes == 3 && lens[0] == 5 && lens[1] == 1 && ((const uint8_t *)frames[1])[0] == RPC_SUBMIT)
    check_submit_text((const char *)frames[2], lens[2], st == MLC_OK ? m.body : NULL);
  if (st == MLC_OK) {
    check_message(&m);
    json_decref(m.body);
  } else if (st != MLC_EPARSE) {
    fail("rpc_msg_decode: a status other than MLC_EPARSE", NULL);
  } else if (!*mlc_error_last()) {
    fail("rpc_msg_decode: MLC_EPARSE without a detail", NULL);
  }
done:
  for (int i = 0; i < 4; i++) free(copies[i]);
  return 0;
}
