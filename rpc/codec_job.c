/*
 * codec_job.c - measurement jobs and results as the wire carries them.
 *
 *   job    {"id", "device_key", "workload": TVMScript, "trace": [TVM trace
 *          JSON], "target", "options": {...} (optional)}
 *   result {"id", "error": kind name ("" when measured), "message",
 *          "run_secs": [s, ...], "build_secs", "worker_id", "device_key",
 *          "device": {...} or null}
 *
 * The trace travels as JSON, not as a string holding JSON, so a peer cannot
 * smuggle in text that only fails later; the structs keep it as text because
 * that is what the database and the schedule library take. The shape checks
 * here are the codec's (codec.c calls them for SUBMIT, JOB and RESULT), so
 * rpc_*_to_json refuses exactly what a receiver would refuse.
 */
#include "rpc/rpc_priv.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Shapes                                                                    */
/* ------------------------------------------------------------------------ */

static int check_object(const json_t *j, const char *where) {
  if (json_is_object(j)) return MLC_OK;
  /* where ends with ". " or ": "; drop the separator for this message */
  size_t n = strlen(where);
  while (n && (where[n - 1] == ' ' || where[n - 1] == ':' || where[n - 1] == '.')) n--;
  return mlc_error_set(MLC_EPARSE, "%.*s: expected a JSON object", (int)n, where);
}

/* A non-negative number field (integers accepted). */
static int check_secs(const json_t *v, const char *where, const char *what) {
  if (!json_is_number(v)) return mlc_error_set(MLC_EPARSE, "%s%s: expected a number", where, what);
  double x = json_number_value(v);
  if (!(x >= 0) || !isfinite(x)) return mlc_error_set(MLC_EPARSE, "%s%s: must be a time >= 0", where, what);
  return MLC_OK;
}

int rpc_check_job(const json_t *j, const char *where) {
  int st = check_object(j, where);
  if (st == MLC_OK) st = rpc_check_str(j, "id", where, 40, false, true);
  if (st == MLC_OK) st = rpc_check_str(j, "device_key", where, 64, false, true);
  if (st == MLC_OK) st = rpc_check_str(j, "workload", where, 0, false, true);
  if (st == MLC_OK) st = rpc_check_str(j, "target", where, 0, false, true);
  if (st != MLC_OK) return st;
  const json_t *trace = json_object_get(j, "trace");
  if (!trace) return mlc_error_set(MLC_EPARSE, "%strace: missing", where);
  if (!json_is_array(trace)) return mlc_error_set(MLC_EPARSE, "%strace: expected a JSON array", where);
  const json_t *opts = json_object_get(j, "options");
  if (opts && !json_is_null(opts) && !json_is_object(opts))
    return mlc_error_set(MLC_EPARSE, "%soptions: expected a JSON object", where);
  return MLC_OK;
}

static int check_run_secs(const json_t *j, const char *where, bool measured) {
  const json_t *rs = json_object_get(j, "run_secs");
  if (!rs) return mlc_error_set(MLC_EPARSE, "%srun_secs: missing", where);
  if (!json_is_array(rs)) return mlc_error_set(MLC_EPARSE, "%srun_secs: expected a JSON array", where);
  size_t n = json_array_size(rs);
  if (n > 64) return mlc_error_set(MLC_EPARSE, "%srun_secs: %zu times, at most 64", where, n);
  if (measured && n == 0) return mlc_error_set(MLC_EPARSE, "%srun_secs: a measured result needs a time", where);
  for (size_t i = 0; i < n; i++) {
    char what[32];
    snprintf(what, sizeof what, "run_secs[%zu]", i);
    int st = check_secs(json_array_get(rs, i), where, what);
    if (st != MLC_OK) return st;
  }
  return MLC_OK;
}

int rpc_check_result(const json_t *j, const char *where) {
  int st = check_object(j, where);
  if (st == MLC_OK) st = rpc_check_str(j, "id", where, 40, false, true);
  if (st == MLC_OK) st = rpc_check_str(j, "error", where, 32, false, false);
  if (st == MLC_OK) st = rpc_check_str(j, "message", where, 0, false, false);
  if (st == MLC_OK) st = rpc_check_str(j, "worker_id", where, 64, false, false);
  if (st == MLC_OK) st = rpc_check_str(j, "device_key", where, 64, false, false);
  if (st != MLC_OK) return st;
  mlc_error_kind_t kind;
  const char *name = json_string_value(json_object_get(j, "error"));
  if (mlc_error_kind_parse(&kind, name) != MLC_OK)
    return mlc_error_set(MLC_EPARSE, "%serror: unknown error kind '%s'", where, name);
  if ((st = check_run_secs(j, where, kind == MLC_ERROR_KIND_NONE)) != MLC_OK) return st;
  const json_t *bs = json_object_get(j, "build_secs");
  if (!bs) return mlc_error_set(MLC_EPARSE, "%sbuild_secs: missing", where);
  if ((st = check_secs(bs, where, "build_secs")) != MLC_OK) return st;
  const json_t *dev = json_object_get(j, "device");
  if (dev && !json_is_null(dev) && !json_is_object(dev))
    return mlc_error_set(MLC_EPARSE, "%sdevice: expected a JSON object or null", where);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Text that must stay valid UTF-8                                           */
/* ------------------------------------------------------------------------ */

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
  if (s[0] < 0x80) return 1;
  size_t len = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
  if (len == 0 || len > n || s[0] > 0xf4) return 0;
  for (size_t i = 1; i < len; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  if (len == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0))) return 0; /* overlong, surrogate */
  if (len == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))) return 0;
  return len;
}

/* Copies at most cap-1 bytes of src (n bytes long) into dst as valid UTF-8:
 * invalid bytes become '?', NULs become spaces, and a cut never splits a
 * character. Messages come from compilers and kernels and may hold anything;
 * a result must still travel (JSON strings are UTF-8). */
static void copy_utf8(char *dst, size_t cap, const char *src, size_t n) {
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    size_t len = utf8_seq((const unsigned char *)src + i, n - i);
    if (o + (len ? len : 1) >= cap) break;
    if (len == 0 || src[i] == '\0') {
      dst[o++] = src[i] == '\0' ? ' ' : '?';
      i++;
    } else {
      memcpy(dst + o, src + i, len);
      o += len;
      i += len;
    }
  }
  dst[o] = '\0';
}

static void copy_field(char *dst, size_t cap, const json_t *obj, const char *key) {
  const json_t *v = json_object_get(obj, key);
  copy_utf8(dst, cap, json_is_string(v) ? json_string_value(v) : "", json_string_length(v));
}

/* A fixed-size field of a struct as a JSON string (valid UTF-8 whatever it holds). */
static json_t *field_string(const char *field, size_t cap) {
  char clean[1024];
  copy_utf8(clean, cap < sizeof clean ? cap + 1 : sizeof clean, field, strnlen(field, cap));
  return json_string(clean);
}

/* ------------------------------------------------------------------------ */
/* Jobs                                                                      */
/* ------------------------------------------------------------------------ */

/* Sets key to a new value; false when the value could not be made. */
static bool set_new(json_t *obj, const char *key, json_t *value) {
  return value && json_object_set_new(obj, key, value) == 0;
}

json_t *rpc_job_to_json(const rpc_job_t *job) {
  if (!job || !job->workload || !job->trace_json || !job->target) {
    mlc_error_set(MLC_EINVAL, "job: workload, trace and target are required");
    return NULL;
  }
  if (job->options && !json_is_object(job->options)) {
    mlc_error_set(MLC_EINVAL, "job %s: options: expected a JSON object", job->id);
    return NULL;
  }
  json_error_t err;
  json_t *trace = json_loads(job->trace_json, JSON_REJECT_DUPLICATES, &err);
  if (!trace || !json_is_array(trace)) {
    json_decref(trace);
    mlc_error_set(MLC_EINVAL, "job %s: trace: expected a JSON array%s%s", job->id, trace ? "" : ": ",
                  trace ? "" : err.text);
    return NULL;
  }
  json_t *j = json_object();
  /* json_object_set_new takes the value's reference even when it fails */
  bool ok = json_object_set_new(j, "trace", trace) == 0 &&
            set_new(j, "id", field_string(job->id, sizeof job->id)) &&
            set_new(j, "device_key", field_string(job->device_key, sizeof job->device_key)) &&
            set_new(j, "workload", json_string(job->workload)) && set_new(j, "target", json_string(job->target)) &&
            (!job->options || json_object_set(j, "options", job->options) == 0);
  if (!ok) {
    json_decref(j);
    mlc_error_set(MLC_EINVAL, "job %s: strings must be UTF-8 (or out of memory)", job->id);
    return NULL;
  }
  if (rpc_check_job(j, "job: ") != MLC_OK) {
    mlc_error_set(MLC_EINVAL, "%s", mlc_error_last());
    json_decref(j);
    return NULL;
  }
  return j;
}

/* Appends s (n bytes) as a JSON string; false when s is not valid UTF-8. */
static bool append_string(mlc_strbuf_t *sb, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  mlc_sb_putc(sb, '"');
  size_t run = 0, i = 0; /* s[run, i) is copied as it is */
  while (i < n) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x80) {
      size_t len = utf8_seq((const unsigned char *)s + i, n - i);
      if (!len) return false;
      i += len;
      continue;
    }
    if (c != '"' && c != '\\' && c >= 0x20) {
      i++;
      continue;
    }
    mlc_sb_appendn(sb, s + run, i - run);
    char esc[7] = {'\\', (char)c, 0};
    if (c < 0x20) {
      esc[1] = 'u', esc[2] = '0', esc[3] = '0', esc[4] = hex[c >> 4], esc[5] = hex[c & 15], esc[6] = 0;
      if (c == '\n') esc[1] = 'n', esc[2] = 0;
      if (c == '\t') esc[1] = 't', esc[2] = 0;
    }
    mlc_sb_append(sb, esc);
    run = ++i;
  }
  mlc_sb_appendn(sb, s + run, n - run);
  mlc_sb_putc(sb, '"');
  return true;
}

/* An identifier field of a job: 1 to cap-1 bytes, no control characters. */
static int check_ident(const char *s, size_t cap, const char *what, const char *id) {
  size_t n = strnlen(s, cap);
  if (n == 0 || n == cap) return mlc_error_set(MLC_EINVAL, "job %.40s: %s must have 1 to %zu bytes", id, what, cap - 1);
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
      return mlc_error_set(MLC_EINVAL, "job %.40s: %s: control character at byte %zu", id, what, i);
  return MLC_OK;
}

/* The trace text without surrounding whitespace, checked to be a JSON array
 * (by the scanner: a client checks every job it sends, and a tree would be
 * built only to be thrown away). */
static int trace_span(const rpc_job_t *job, size_t *start, size_t *end) {
  const char *s = job->trace_json;
  *start = strspn(s, " \t\r\n");
  *end = strlen(s);
  while (*end > *start && strchr(" \t\r\n", s[*end - 1])) (*end)--;
  if (mlc_json_check(s, *end, "the trace") != MLC_OK)
    return mlc_error_set(MLC_EINVAL, "job %.40s: trace: expected a JSON array: %s", job->id, mlc_error_last());
  if (s[*start] != '[') return mlc_error_set(MLC_EINVAL, "job %.40s: trace: expected a JSON array", job->id);
  return MLC_OK;
}

int rpc_job_text(char **text, size_t *len, const rpc_job_t *job) {
  *text = NULL;
  *len = 0;
  if (!job || !job->workload || !job->trace_json || !job->target || !*job->workload || !*job->target)
    return mlc_error_set(MLC_EINVAL, "job: workload, trace and target are required");
  if (job->options && !json_is_object(job->options))
    return mlc_error_set(MLC_EINVAL, "job %.40s: options: expected a JSON object", job->id);
  size_t ts = 0, te = 0;
  int st = check_ident(job->id, sizeof job->id, "id", job->id);
  if (st == MLC_OK) st = check_ident(job->device_key, sizeof job->device_key, "device_key", job->id);
  if (st == MLC_OK) st = trace_span(job, &ts, &te);
  if (st != MLC_OK) return st;
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  mlc_sb_append(&sb, "{\"id\":");
  bool utf8 = append_string(&sb, job->id, strlen(job->id));
  mlc_sb_append(&sb, ",\"device_key\":");
  utf8 = utf8 && append_string(&sb, job->device_key, strlen(job->device_key));
  mlc_sb_append(&sb, ",\"workload\":");
  utf8 = utf8 && append_string(&sb, job->workload, strlen(job->workload));
  mlc_sb_append(&sb, ",\"target\":");
  utf8 = utf8 && append_string(&sb, job->target, strlen(job->target));
  mlc_sb_append(&sb, ",\"trace\":");
  mlc_sb_appendn(&sb, job->trace_json + ts, te - ts);
  if (job->options) {
    char *o = mlc_json_dumps(job->options);
    if (!o) sb.failed = true;
    mlc_sb_append(&sb, ",\"options\":");
    mlc_sb_append(&sb, o ? o : "");
    mlc_free(o);
  }
  mlc_sb_putc(&sb, '}');
  if (!utf8) st = mlc_error_set(MLC_EINVAL, "job %.40s: id, device_key, workload and target must be UTF-8", job->id);
  else if (sb.failed) st = mlc_error_set(MLC_ENOMEM, "out of memory encoding job %.40s", job->id);
  else if (sb.len > MLC_RPC_MAX_MESSAGE)
    st = mlc_error_set(MLC_ERANGE, "job %.40s: %zu bytes, over the message limit", job->id, sb.len);
  if (st != MLC_OK) {
    mlc_sb_free(&sb);
    return st;
  }
  *len = sb.len;
  *text = mlc_sb_take(&sb);
  return MLC_OK;
}

int rpc_job_from_json(rpc_job_t *out, const json_t *j) {
  if (!out) return mlc_error_set(MLC_EINVAL, "rpc_job_from_json: NULL out");
  memset(out, 0, sizeof *out);
  int st = rpc_check_job(j, "job: ");
  if (st != MLC_OK) return st;
  copy_field(out->id, sizeof out->id, j, "id");
  copy_field(out->device_key, sizeof out->device_key, j, "device_key");
  out->workload = mlc_strdup(json_string_value(json_object_get(j, "workload")));
  out->target = mlc_strdup(json_string_value(json_object_get(j, "target")));
  out->trace_json = mlc_json_dumps(json_object_get(j, "trace"));
  const json_t *opts = json_object_get(j, "options");
  if (json_is_object(opts)) out->options = json_incref((json_t *)opts);
  if (!out->workload || !out->target || !out->trace_json) {
    rpc_job_free(out);
    return mlc_error_set(MLC_ENOMEM, "out of memory decoding a job");
  }
  return MLC_OK;
}

void rpc_job_free(rpc_job_t *job) {
  if (!job) return;
  mlc_free(job->workload);
  mlc_free(job->trace_json);
  mlc_free(job->target);
  json_decref(job->options);
  job->workload = job->trace_json = job->target = NULL;
  job->options = NULL;
}

/* ------------------------------------------------------------------------ */
/* Results                                                                   */
/* ------------------------------------------------------------------------ */

static json_t *run_secs_json(const rpc_result_t *r) {
  json_t *a = json_array();
  for (int i = 0; a && i < r->nrun_secs; i++) {
    if (!isfinite(r->run_secs[i]) || json_array_append_new(a, json_real(r->run_secs[i])) != 0) {
      json_decref(a);
      return NULL;
    }
  }
  return a;
}

static json_t *device_json(const rpc_result_t *r) {
  if (!r->device_json) return json_null();
  json_error_t err;
  json_t *d = json_loads(r->device_json, JSON_REJECT_DUPLICATES, &err);
  if (d && json_is_object(d)) return d;
  json_decref(d);
  return NULL;
}

json_t *rpc_result_to_json(const rpc_result_t *r) {
  if (!r) {
    mlc_error_set(MLC_EINVAL, "rpc_result_to_json: NULL result");
    return NULL;
  }
  if (r->nrun_secs < 0 || r->nrun_secs > 64 || (int)r->error < 0 || r->error >= MLC_ERROR_KIND_COUNT) {
    mlc_error_set(MLC_EINVAL, "result %.40s: %d run times or error kind %d out of range", r->id, r->nrun_secs,
                  (int)r->error);
    return NULL;
  }
  json_t *dev = device_json(r);
  if (!dev) {
    mlc_error_set(MLC_EINVAL, "result %.40s: device: expected a JSON object", r->id);
    return NULL;
  }
  json_t *j = json_object();
  bool ok = j && set_new(j, "id", field_string(r->id, sizeof r->id)) &&
            set_new(j, "error", json_string(mlc_error_kind_name(r->error))) &&
            set_new(j, "message", field_string(r->message, sizeof r->message)) &&
            set_new(j, "run_secs", run_secs_json(r)) && set_new(j, "build_secs", json_real(r->build_secs)) &&
            set_new(j, "worker_id", field_string(r->worker_id, sizeof r->worker_id)) &&
            set_new(j, "device_key", field_string(r->device_key, sizeof r->device_key));
  if (ok) ok = set_new(j, "device", dev);
  else json_decref(dev);
  if (!ok) {
    json_decref(j);
    mlc_error_set(MLC_EINVAL, "result %.40s: strings must be UTF-8 and times finite (or out of memory)", r->id);
    return NULL;
  }
  if (rpc_check_result(j, "result: ") != MLC_OK) {
    mlc_error_set(MLC_EINVAL, "%s", mlc_error_last());
    json_decref(j);
    return NULL;
  }
  return j;
}

int rpc_result_from_json(rpc_result_t *out, const json_t *j) {
  if (!out) return mlc_error_set(MLC_EINVAL, "rpc_result_from_json: NULL out");
  memset(out, 0, sizeof *out);
  int st = rpc_check_result(j, "result: ");
  if (st != MLC_OK) return st;
  copy_field(out->id, sizeof out->id, j, "id");
  copy_field(out->message, sizeof out->message, j, "message"); /* long messages are cut */
  copy_field(out->worker_id, sizeof out->worker_id, j, "worker_id");
  copy_field(out->device_key, sizeof out->device_key, j, "device_key");
  mlc_error_kind_parse(&out->error, json_string_value(json_object_get(j, "error")));
  const json_t *rs = json_object_get(j, "run_secs");
  out->nrun_secs = (int)json_array_size(rs);
  for (int i = 0; i < out->nrun_secs; i++) out->run_secs[i] = json_number_value(json_array_get(rs, (size_t)i));
  out->build_secs = json_number_value(json_object_get(j, "build_secs"));
  const json_t *dev = json_object_get(j, "device");
  if (json_is_object(dev)) {
    out->device_json = mlc_json_dumps(dev);
    if (!out->device_json) return mlc_error_set(MLC_ENOMEM, "out of memory decoding a result");
  }
  return MLC_OK;
}

void rpc_result_free(rpc_result_t *r) {
  if (!r) return;
  mlc_free(r->device_json);
  r->device_json = NULL;
}
