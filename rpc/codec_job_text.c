/*
 * codec_job_text.c - jobs read from their JSON text without a tree: the
 * shape checks of rpc_check_job (and check_submit's), done by support's
 * validating scanner (json_scan.c), for the hot paths that see every job:
 * the worker decoding each JOB and the broker reading each SUBMIT.
 *
 * Why: a job is mostly its trace, which these paths only pass on. Parsing
 * it into a jansson tree and freeing it again was the largest per-job cost
 * of the farm (bench_farm: ~15% of all CPU on the worker's thread alone).
 * The checks and their messages are rpc_check_job's; the differences are
 * in what jansson would also refuse deep inside the trace (a duplicate key
 * or \u0000 in an object within it), which the trace's own reader (the
 * schedule library, jansson) refuses when the job is replayed.
 */
#include "rpc/rpc_priv.h"

#include <string.h>

static const char *const fields[RPC_JF_COUNT] = {"id", "device_key", "workload", "target", "trace", "options"};

static int field_of(const mlc_jspan_t *key) {
  for (int f = 0; f < RPC_JF_COUNT; f++)
    if (!key->escaped && key->len == strlen(fields[f]) && memcmp(key->p, fields[f], key->len) == 0) return f;
  return -1;
}

/* A member's value: strings for the string fields, an array for the trace;
 * any JSON for options (checked after) and for keys this version does not
 * know (ignored, as in the tree checks). depth: the member's nesting. */
static int scan_field(mlc_jscan_t *s, int f, rpc_job_view_t *v, const char *where, int depth) {
  const char *start = s->p;
  if (f >= 0 && f < RPC_JF_TRACE) {
    if (s->p >= s->end || *s->p != '"') return mlc_error_set(MLC_EPARSE, "%s%s: expected a string", where, fields[f]);
    return mlc_jscan_string(s, &v->f[f]) ? MLC_OK : MLC_EPARSE;
  }
  if (f == RPC_JF_TRACE && (s->p >= s->end || *s->p != '['))
    return mlc_error_set(MLC_EPARSE, "%strace: expected a JSON array", where);
  if (!mlc_jscan_value(s, depth)) return MLC_EPARSE;
  if (f >= 0) v->f[f] = (mlc_jspan_t){start, (size_t)(s->p - start), false};
  return MLC_OK;
}

/* A string field's checks (rpc_check_str's). maxlen 0: any length, nothing
 * decoded; else the value is decoded into out (maxlen bytes). */
static int check_string(const rpc_job_view_t *v, int f, const char *where, size_t maxlen, char *out) {
  const mlc_jspan_t *sp = &v->f[f];
  if (!v->has[f]) return mlc_error_set(MLC_EPARSE, "%s%s: missing", where, fields[f]);
  if (sp->len == 0) return mlc_error_set(MLC_EPARSE, "%s%s: must not be empty", where, fields[f]);
  if (!maxlen) return MLC_OK;
  char buf[6 * 64 + 1]; /* "\uXXXX" is the longest escape: 6 bytes for 1 */
  if (sp->len >= sizeof buf) return mlc_error_set(MLC_EPARSE, "%s%s: longer than %zu bytes", where, fields[f], maxlen - 1);
  bool nul = false;
  size_t n = mlc_jspan_decode(buf, sp, &nul);
  if (n == 0 && !nul) return mlc_error_set(MLC_EPARSE, "%s%s: must not be empty", where, fields[f]);
  if (n >= maxlen) return mlc_error_set(MLC_EPARSE, "%s%s: longer than %zu bytes", where, fields[f], maxlen - 1);
  if (nul) return mlc_error_set(MLC_EPARSE, "%s%s: \\u0000 is not allowed", where, fields[f]);
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
      return mlc_error_set(MLC_EPARSE, "%s%s: control character at byte %zu", where, fields[f], i);
  memcpy(out, buf, n + 1);
  return MLC_OK;
}

/* where without its trailing separator ("JOB: " -> "JOB"), into buf. */
static const char *label(const char *where, char buf[64]) {
  size_t n = strlen(where);
  while (n && (where[n - 1] == ' ' || where[n - 1] == ':' || where[n - 1] == '.')) n--;
  snprintf(buf, 64, "%.*s", (int)n, where);
  return buf;
}

/* One job object at s->p, at nesting depth (1: the whole body), left just
 * after it. MLC_EPARSE with s->why set for bad JSON (the caller names the
 * text), or with the error set for a bad field. */
static int scan_job(mlc_jscan_t *s, rpc_job_view_t *v, const char *where, int depth) {
  memset(v, 0, sizeof *v);
  if (!mlc_jscan_at(s, '{')) {
    if (!mlc_jscan_value(s, depth)) return MLC_EPARSE;
    char what[64];
    return mlc_error_set(MLC_EPARSE, "%s: expected a JSON object", label(where, what));
  }
  s->p++;
  mlc_jspan_t key;
  for (bool first = true; mlc_jscan_member(s, first, &key); first = false) {
    int f = field_of(&key);
    if (f >= 0 && v->has[f]) return mlc_error_set(MLC_EPARSE, "%s%s: appears twice", where, fields[f]);
    int st = scan_field(s, f, v, where, depth + 1);
    if (st != MLC_OK) return st;
    if (f >= 0) v->has[f] = true;
  }
  if (s->why) return MLC_EPARSE;
  s->p++; /* the closing brace */
  int st = check_string(v, RPC_JF_ID, where, sizeof v->id, v->id);
  if (st == MLC_OK) st = check_string(v, RPC_JF_DEVICE_KEY, where, sizeof v->device_key, v->device_key);
  if (st == MLC_OK) st = check_string(v, RPC_JF_WORKLOAD, where, 0, NULL);
  if (st == MLC_OK) st = check_string(v, RPC_JF_TARGET, where, 0, NULL);
  if (st != MLC_OK) return st;
  if (!v->has[RPC_JF_TRACE]) return mlc_error_set(MLC_EPARSE, "%strace: missing", where);
  const mlc_jspan_t *o = &v->f[RPC_JF_OPTIONS];
  if (v->has[RPC_JF_OPTIONS] && o->p[0] != '{' && !(o->len == 4 && memcmp(o->p, "null", 4) == 0))
    return mlc_error_set(MLC_EPARSE, "%soptions: expected a JSON object", where);
  return MLC_OK;
}

int rpc_job_scan(rpc_job_view_t *v, const char *text, size_t len, const char *where) {
  mlc_jscan_t s;
  mlc_jscan_init(&s, text, len);
  char what[64];
  label(where, what);
  int st = scan_job(&s, v, where, 1);
  if (st == MLC_OK) {
    mlc_jscan_ws(&s);
    if (s.p != s.end) return mlc_jscan_error(&s, what); /* "trailing characters" */
  }
  return st != MLC_OK && s.why ? mlc_jscan_error(&s, what) : st;
}

/* A string field into a new heap string (NULL: out of memory); *nul set
 * when it held \u0000 (which jansson refuses too). */
static char *field_dup(const mlc_jspan_t *sp, bool *nul) {
  char *out = mlc_malloc(sp->len + 1);
  bool had = false;
  if (out) mlc_jspan_decode(out, sp, &had);
  *nul |= had;
  return out;
}

int rpc_job_decode(rpc_job_t *out, const char *text, size_t len, const char *where) {
  if (!out) return mlc_error_set(MLC_EINVAL, "rpc_job_decode: NULL out");
  memset(out, 0, sizeof *out);
  rpc_job_view_t v;
  int st = rpc_job_scan(&v, text, len, where);
  if (st != MLC_OK) return st;
  memcpy(out->id, v.id, sizeof out->id);
  memcpy(out->device_key, v.device_key, sizeof out->device_key);
  bool nul = false;
  out->workload = field_dup(&v.f[RPC_JF_WORKLOAD], &nul);
  out->target = field_dup(&v.f[RPC_JF_TARGET], &nul);
  if (nul) {
    rpc_job_free(out);
    return mlc_error_set(MLC_EPARSE, "%sworkload or target: \\u0000 is not allowed", where);
  }
  const mlc_jspan_t *t = &v.f[RPC_JF_TRACE];
  if ((out->trace_json = mlc_malloc(t->len + 1)) != NULL) {
    memcpy(out->trace_json, t->p, t->len);
    out->trace_json[t->len] = '\0';
  }
  const mlc_jspan_t *o = &v.f[RPC_JF_OPTIONS];
  if (v.has[RPC_JF_OPTIONS] && o->p[0] == '{') {
    json_error_t err;
    out->options = json_loadb(o->p, o->len, JSON_REJECT_DUPLICATES, &err);
    if (!out->options) {
      rpc_job_free(out);
      return mlc_error_set(MLC_EPARSE, "%soptions: %s", where, err.text);
    }
  }
  if (!out->workload || !out->target || !out->trace_json) {
    rpc_job_free(out);
    return mlc_error_set(MLC_ENOMEM, "out of memory decoding a job");
  }
  return MLC_OK;
}

/* The jobs array of a SUBMIT, s at its '[': each job checked where it
 * stands (one pass over the text) and its span, id and device key pushed.
 * MLC_EPARSE with s->why set for bad JSON, or with the error set for a bad
 * job. */
static int scan_jobs(mlc_jscan_t *s, const char *text, rpc_submit_jobs_t *jobs) {
  s->p++;
  if (mlc_jscan_at(s, ']')) {
    s->p++;
    return MLC_OK;
  }
  for (;;) {
    char where[48];
    snprintf(where, sizeof where, "SUBMIT: jobs[%zu].", jobs->len);
    mlc_jscan_ws(s);
    rpc_job_view_t v;
    rpc_submit_job_t j = {.start = (size_t)(s->p - text)};
    int st = scan_job(s, &v, where, 3);
    if (st != MLC_OK) return st;
    j.end = (size_t)(s->p - text);
    memcpy(j.id, v.id, sizeof j.id);
    memcpy(j.device_key, v.device_key, sizeof j.device_key);
    if (mlc_vec_push(jobs, j) != MLC_OK) return mlc_error_set(MLC_ENOMEM, "out of memory reading a SUBMIT");
    mlc_jscan_ws(s);
    if (s->p < s->end && *s->p == ']') {
      s->p++;
      return MLC_OK;
    }
    if (s->p >= s->end || *s->p != ',') {
      mlc_jscan_fail(s, "a missing ',' between values");
      return MLC_EPARSE;
    }
    s->p++;
  }
}

int rpc_submit_scan(rpc_submit_jobs_t *jobs, const char *text, size_t len) {
  memset(jobs, 0, sizeof *jobs);
  mlc_jscan_t s;
  mlc_jscan_init(&s, text, len);
  if (!mlc_jscan_at(&s, '{')) {
    if (mlc_jscan_value(&s, 1)) return mlc_error_set(MLC_EPARSE, "frame 2: SUBMIT body is not a JSON object");
    return mlc_jscan_error(&s, "SUBMIT");
  }
  s.p++;
  bool seen = false;
  int st = MLC_OK;
  mlc_jspan_t key;
  for (bool first = true; st == MLC_OK && mlc_jscan_member(&s, first, &key); first = false) {
    if (key.escaped || key.len != 4 || memcmp(key.p, "jobs", 4) != 0) {
      st = mlc_jscan_value(&s, 2) ? MLC_OK : MLC_EPARSE; /* other keys: ignored, as by the tree checks */
    } else if (seen) {
      st = mlc_error_set(MLC_EPARSE, "SUBMIT: jobs: appears twice");
    } else if (s.p >= s.end || *s.p != '[') {
      st = mlc_jscan_value(&s, 2) ? mlc_error_set(MLC_EPARSE, "SUBMIT: jobs: expected a JSON array") : MLC_EPARSE;
    } else {
      seen = true;
      st = scan_jobs(&s, text, jobs);
    }
  }
  if (s.why) st = mlc_jscan_error(&s, "SUBMIT");
  if (st == MLC_OK) {
    s.p++; /* the closing brace */
    mlc_jscan_ws(&s);
    if (s.p != s.end) st = mlc_jscan_error(&s, "SUBMIT"); /* "trailing characters" */
  }
  if (st == MLC_OK && !seen) st = mlc_error_set(MLC_EPARSE, "SUBMIT: jobs: missing");
  if (st == MLC_OK && jobs->len == 0) st = mlc_error_set(MLC_EPARSE, "SUBMIT: jobs: empty");
  if (st != MLC_OK) mlc_vec_free(jobs);
  return st;
}
