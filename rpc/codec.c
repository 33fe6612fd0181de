/*
 * codec.c - the wire format (DESIGN.md, Wire protocol): frames
 * [tag "MLC01"][command byte][JSON body] to a validated rpc_msg_t and back.
 *
 * Everything a peer sends passes through rpc_msg_decode before anyone looks
 * at it, so the checks here are the farm's whole defence against a confused
 * or hostile peer: frame count and sizes, the tag, the command, JSON that
 * parses (duplicate keys refused), and the body's shape for that command
 * (required keys with their JSON types and bounds). Keys a command does not
 * know are ignored, so a newer peer can add fields without breaking an older
 * one. A message that decodes is safe to read without further checks.
 * The job and result shapes are in codec_job.c. Fuzzed by
 * fuzz/fuzz_rpc_codec.c.
 */
#include "rpc/rpc_priv.h"

#include <string.h>

/* Shape of a body that is an object already: MLC_OK or MLC_EPARSE. */
typedef int (*check_fn)(const json_t *body);

static int check_ready(const json_t *b);
static int check_heartbeat(const json_t *b);
static int check_submit(const json_t *b);
static int check_accepted(const json_t *b);
static int check_busy(const json_t *b);
static int check_job(const json_t *b);
static int check_result(const json_t *b);
static int check_error(const json_t *b);
static int check_stats(const json_t *b);
static int check_any(const json_t *b);

/*   command          name          body shape */
#define RPC_CMD_TABLE(X)                        \
  X(RPC_READY,      "READY",      check_ready)     \
  X(RPC_HEARTBEAT,  "HEARTBEAT",  check_heartbeat) \
  X(RPC_SUBMIT,     "SUBMIT",     check_submit)    \
  X(RPC_ACCEPTED,   "ACCEPTED",   check_accepted)  \
  X(RPC_BUSY,       "BUSY",       check_busy)      \
  X(RPC_JOB,        "JOB",        check_job)       \
  X(RPC_RESULT,     "RESULT",     check_result)    \
  X(RPC_ERROR,      "ERROR",      check_error)     \
  X(RPC_STATS,      "STATS",      check_stats)     \
  X(RPC_DISCONNECT, "DISCONNECT", check_any)

static const struct {
  const char *name;
  check_fn check;
} cmd_table[RPC_CMD_COUNT] = {
#define RPC_CMD_ROW_(cmd, name, check) [cmd] = {name, check},
    RPC_CMD_TABLE(RPC_CMD_ROW_)
#undef RPC_CMD_ROW_
};

const char *rpc_cmd_name(rpc_cmd_t cmd) {
  if ((int)cmd < 1 || cmd >= RPC_CMD_COUNT) return "?";
  return cmd_table[cmd].name;
}

/* ------------------------------------------------------------------------ */
/* Field checks                                                              */
/* ------------------------------------------------------------------------ */

int rpc_check_str(const json_t *obj, const char *key, const char *where, size_t maxlen, bool optional,
                  bool nonempty) {
  const json_t *v = json_object_get(obj, key);
  if (!v) {
    if (optional) return MLC_OK;
    return mlc_error_set(MLC_EPARSE, "%s%s: missing", where, key);
  }
  if (!json_is_string(v)) return mlc_error_set(MLC_EPARSE, "%s%s: expected a string", where, key);
  size_t len = json_string_length(v);
  const char *s = json_string_value(v);
  if (nonempty && len == 0) return mlc_error_set(MLC_EPARSE, "%s%s: must not be empty", where, key);
  if (maxlen && len >= maxlen)
    return mlc_error_set(MLC_EPARSE, "%s%s: longer than %zu bytes", where, key, maxlen - 1);
  if (maxlen) { /* short identifiers: no control characters (they go into logs and keys) */
    for (size_t i = 0; i < len; i++)
      if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
        return mlc_error_set(MLC_EPARSE, "%s%s: control character at byte %zu", where, key, i);
  }
  return MLC_OK;
}

/* An integer field in [lo, hi]. */
static int check_int(const json_t *obj, const char *key, const char *where, int64_t lo, int64_t hi,
                     bool optional) {
  const json_t *v = json_object_get(obj, key);
  if (!v) return optional ? MLC_OK : mlc_error_set(MLC_EPARSE, "%s%s: missing", where, key);
  if (!json_is_integer(v)) return mlc_error_set(MLC_EPARSE, "%s%s: expected an integer", where, key);
  json_int_t x = json_integer_value(v);
  if (x < lo || x > hi)
    return mlc_error_set(MLC_EPARSE, "%s%s: %lld is outside [%lld, %lld]", where, key, (long long)x,
                         (long long)lo, (long long)hi);
  return MLC_OK;
}

/* A field that must be an array of short identifier strings. */
static int check_ids(const json_t *b, const char *where) {
  const json_t *ids = json_object_get(b, "ids");
  if (!ids) return mlc_error_set(MLC_EPARSE, "%sids: missing", where);
  if (!json_is_array(ids)) return mlc_error_set(MLC_EPARSE, "%sids: expected a JSON array", where);
  size_t i;
  const json_t *id;
  json_array_foreach(ids, i, id) {
    if (!json_is_string(id) || json_string_length(id) == 0 || json_string_length(id) >= 40)
      return mlc_error_set(MLC_EPARSE, "%sids[%zu]: expected a job id (a string of 1 to 39 bytes)", where, i);
  }
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Body shapes                                                               */
/* ------------------------------------------------------------------------ */

static int check_ready(const json_t *b) {
  const char *w = "READY: ";
  int st = rpc_check_str(b, "device_key", w, 64, false, true);
  if (st == MLC_OK) st = rpc_check_str(b, "worker_id", w, 64, false, true);
  /* capacity 0: a worker that is stopping (it takes no new job) */
  if (st == MLC_OK) st = check_int(b, "capacity", w, 0, 1024, false);
  if (st == MLC_OK) st = check_int(b, "prefetch", w, 0, 1024, true);
  if (st != MLC_OK) return st;
  const json_t *dev = json_object_get(b, "device");
  if (!dev) return mlc_error_set(MLC_EPARSE, "READY: device: missing");
  if (!json_is_object(dev)) return mlc_error_set(MLC_EPARSE, "READY: device: expected a JSON object");
  return MLC_OK;
}

/* {} from workers and clients; the broker adds how often it beats and how
 * many beats it tolerates missing, so peers adopt the farm's timing. */
static int check_heartbeat(const json_t *b) {
  int st = check_int(b, "heartbeat_ms", "HEARTBEAT: ", 1, 3600 * 1000, true);
  if (st == MLC_OK) st = check_int(b, "liveness", "HEARTBEAT: ", 1, 1000, true);
  return st;
}

static int check_submit(const json_t *b) {
  const json_t *jobs = json_object_get(b, "jobs");
  if (!jobs) return mlc_error_set(MLC_EPARSE, "SUBMIT: jobs: missing");
  if (!json_is_array(jobs)) return mlc_error_set(MLC_EPARSE, "SUBMIT: jobs: expected a JSON array");
  if (json_array_size(jobs) == 0) return mlc_error_set(MLC_EPARSE, "SUBMIT: jobs: empty");
  size_t i;
  const json_t *job;
  json_array_foreach(jobs, i, job) {
    char where[48];
    snprintf(where, sizeof where, "SUBMIT: jobs[%zu].", i);
    int st = rpc_check_job(job, where);
    if (st != MLC_OK) return st;
  }
  return MLC_OK;
}

static int check_accepted(const json_t *b) { return check_ids(b, "ACCEPTED: "); }

static int check_busy(const json_t *b) {
  int st = check_ids(b, "BUSY: ");
  return st == MLC_OK ? rpc_check_str(b, "reason", "BUSY: ", 0, false, false) : st;
}

static int check_job(const json_t *b) { return rpc_check_job(b, "JOB: "); }
static int check_result(const json_t *b) { return rpc_check_result(b, "RESULT: "); }

static int check_error(const json_t *b) {
  int st = rpc_check_str(b, "message", "ERROR: ", 0, false, false);
  return st == MLC_OK ? rpc_check_str(b, "id", "ERROR: ", 40, true, true) : st;
}

/* A request is {}; the reply maps each device key to an object. */
static int check_stats(const json_t *b) {
  const char *key;
  const json_t *v;
  json_object_foreach((json_t *)b, key, v) {
    if (!json_is_object(v)) return mlc_error_set(MLC_EPARSE, "STATS: %s: expected a JSON object", key);
  }
  return MLC_OK;
}

static int check_any(const json_t *b) { return MLC_OK; }

/* ------------------------------------------------------------------------ */
/* Decoding and encoding                                                     */
/* ------------------------------------------------------------------------ */

static int check_frames(const void *const *frames, const size_t *lens, int nframes, rpc_cmd_t *cmd) {
  if (nframes != 3)
    return mlc_error_set(MLC_EPARSE, "expected 3 frames (tag, command, body), got %d", nframes);
  if (!frames || !lens) return mlc_error_set(MLC_EINVAL, "rpc_msg_decode: NULL frames");
  for (int i = 0; i < 3; i++)
    if (lens[i] && !frames[i]) return mlc_error_set(MLC_EINVAL, "rpc_msg_decode: frame %d is NULL", i);
  if (lens[0] != strlen(MLC_RPC_PROTOCOL) || memcmp(frames[0], MLC_RPC_PROTOCOL, lens[0]) != 0)
    return mlc_error_set(MLC_EPARSE, "frame 0: not the protocol tag " MLC_RPC_PROTOCOL);
  if (lens[1] != 1) return mlc_error_set(MLC_EPARSE, "frame 1: the command must be one byte, got %zu", lens[1]);
  int c = ((const unsigned char *)frames[1])[0];
  if (c < 1 || c >= RPC_CMD_COUNT) return mlc_error_set(MLC_EPARSE, "frame 1: unknown command %d", c);
  if (lens[2] > MLC_RPC_MAX_MESSAGE)
    return mlc_error_set(MLC_EPARSE, "frame 2: body of %zu bytes exceeds the limit of %u bytes", lens[2],
                         MLC_RPC_MAX_MESSAGE);
  if (lens[2] == 0) return mlc_error_set(MLC_EPARSE, "frame 2: empty body");
  *cmd = (rpc_cmd_t)c;
  return MLC_OK;
}

int rpc_msg_decode(rpc_msg_t *out, const void *const *frames, const size_t *lens, int nframes) {
  return rpc_msg_decode_raw(out, frames, lens, nframes, 0);
}

int rpc_msg_decode_raw(rpc_msg_t *out, const void *const *frames, const size_t *lens, int nframes,
                       unsigned raw_cmds) {
  if (!out) return mlc_error_set(MLC_EINVAL, "rpc_msg_decode: NULL out");
  out->cmd = 0;
  out->body = NULL;
  rpc_cmd_t cmd = 0;
  int st = check_frames(frames, lens, nframes, &cmd);
  if (st != MLC_OK) return st;
  if (raw_cmds & (1u << cmd)) { /* the caller reads the text */
    out->cmd = cmd;
    return MLC_OK;
  }
  json_error_t err;
  json_t *body = json_loadb(frames[2], lens[2], JSON_REJECT_DUPLICATES, &err);
  if (!body)
    return mlc_error_set(MLC_EPARSE, "frame 2: body is not JSON: %d:%d: %s", err.line, err.column, err.text);
  if (!json_is_object(body)) {
    json_decref(body);
    return mlc_error_set(MLC_EPARSE, "frame 2: %s body is not a JSON object", rpc_cmd_name(cmd));
  }
  st = cmd_table[cmd].check(body);
  if (st != MLC_OK) {
    json_decref(body);
    return st;
  }
  out->cmd = cmd;
  out->body = body;
  return MLC_OK;
}

static int dump_into(const char *buffer, size_t size, void *data) {
  mlc_strbuf_t *sb = data;
  mlc_sb_appendn(sb, buffer, size);
  return sb->failed ? -1 : 0;
}

int rpc_msg_encode_body(char **text, size_t *len, const json_t *body) {
  if (!text || !len) return mlc_error_set(MLC_EINVAL, "rpc_msg_encode_body: NULL out");
  *text = NULL;
  *len = 0;
  if (!json_is_object(body)) return mlc_error_set(MLC_EINVAL, "rpc_msg_encode_body: the body must be a JSON object");
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  if (json_dump_callback(body, dump_into, &sb, JSON_COMPACT | JSON_REAL_PRECISION(17)) != 0 || sb.failed) {
    bool oom = sb.failed;
    mlc_sb_free(&sb);
    return oom ? mlc_error_set(MLC_ENOMEM, "out of memory encoding a message")
               : mlc_error_set(MLC_EINVAL, "rpc_msg_encode_body: the body cannot be encoded");
  }
  if (sb.len > MLC_RPC_MAX_MESSAGE) {
    size_t n = sb.len;
    mlc_sb_free(&sb);
    return mlc_error_set(MLC_ERANGE, "message body of %zu bytes exceeds the limit of %u bytes", n,
                         MLC_RPC_MAX_MESSAGE);
  }
  *len = sb.len;
  *text = mlc_sb_take(&sb);
  if (!*text) {
    /* an empty object never reaches here ("{}"), so NULL means out of memory */
    *len = 0;
    return mlc_error_set(MLC_ENOMEM, "out of memory encoding a message");
  }
  return MLC_OK;
}
