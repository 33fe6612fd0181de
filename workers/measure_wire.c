/*
 * measure_wire.c - measure options as JSON and device keys (measure_wire.h).
 *
 * The options are one table: each row names a JSON key, the field of
 * mlc_measure_options_t it fills (by offset), its JSON type and its range,
 * so the encoder, the decoder and their checks are one list. The ranges are
 * measure.c's own (validate_options), checked here too so a worker refuses a
 * bad job with the key's name before it parses anything else.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/measure_wire.h"

typedef enum { FIELD_INT, FIELD_BOOL, FIELD_REAL, FIELD_SEED } field_type_t;

typedef struct {
  const char *key;
  size_t offset;
  field_type_t type;
  double lo, hi;     /* FIELD_INT: inclusive; FIELD_REAL: lo exclusive when lo_open */
  bool lo_open;
} field_t;

#define OFF(f) offsetof(mlc_measure_options_t, f)
/*  key                  field               type        lo   hi                      lo_open */
static const field_t fields[] = {
    {"number",            OFF(number),            FIELD_INT,  1, 1e9,                    false},
    {"repeat",            OFF(repeat),            FIELD_INT,  1, MLC_MEASURE_MAX_REPEAT, false},
    {"min_repeat_ms",     OFF(min_repeat_ms),     FIELD_INT,  0, 1e9,                    false},
    {"flush_cache",       OFF(flush_cache),       FIELD_BOOL, 0, 0,                      false},
    {"build_timeout_s",   OFF(build_timeout_s),   FIELD_REAL, 0, 1e7,                    true},
    {"run_timeout_s",     OFF(run_timeout_s),     FIELD_REAL, 0, 1e7,                    true},
    {"slow_secs",         OFF(slow_secs),         FIELD_REAL, 0, 1e7,                    false},
    {"check_correctness", OFF(check_correctness), FIELD_BOOL, 0, 0,                      false},
    {"rtol",              OFF(rtol),              FIELD_REAL, 0, 1e300,                  false},
    {"seed",              OFF(seed),              FIELD_SEED, 0, 0,                      false},
};
#undef OFF
enum { NFIELDS = sizeof fields / sizeof *fields };

static json_t *field_to_json(const field_t *f, const mlc_measure_options_t *o) {
  const char *p = (const char *)o + f->offset;
  switch (f->type) {
  case FIELD_INT: return json_integer(*(const int *)p);
  case FIELD_BOOL: return json_boolean(*(const bool *)p);
  case FIELD_REAL: return json_real(*(const double *)p);
  default: return json_integer((json_int_t) * (const uint64_t *)p);
  }
}

int mlc_measure_options_to_json(json_t **out, const mlc_measure_options_t *opts) {
  if (!out || !opts) return mlc_error_set(MLC_EINVAL, "measure options: NULL argument");
  *out = NULL;
  if (opts->reference)
    return mlc_error_set(MLC_EINVAL, "measure options: a reference function cannot be sent to a worker");
  if (opts->seed > (uint64_t)INT64_MAX)
    return mlc_error_set(MLC_EINVAL, "measure options: seed %llu does not fit a JSON integer",
                         (unsigned long long)opts->seed);
  json_t *o = json_object();
  if (!o) return mlc_error_set(MLC_ENOMEM, "measure options: out of memory");
  for (int i = 0; i < NFIELDS; i++) {
    if (json_object_set_new(o, fields[i].key, field_to_json(&fields[i], opts)) != 0) {
      json_decref(o);
      return mlc_error_set(MLC_ENOMEM, "measure options: out of memory");
    }
  }
  *out = o;
  return MLC_OK;
}

static int bad(const field_t *f, const char *what) {
  return mlc_error_set(MLC_EPARSE, "measure options: '%s' %s", f->key, what);
}

/* Reads one value into the field of *o, checking its type and range. */
static int field_from_json(const field_t *f, const json_t *v, mlc_measure_options_t *o) {
  char *p = (char *)o + f->offset;
  char what[96];
  if (f->type == FIELD_BOOL) {
    if (!json_is_boolean(v)) return bad(f, "must be true or false");
    *(bool *)p = json_is_true(v);
    return MLC_OK;
  }
  if (f->type == FIELD_REAL) {
    double x = json_is_number(v) ? json_number_value(v) : NAN;
    if (!json_is_number(v)) return bad(f, "must be a number");
    if (!isfinite(x) || x > f->hi || (f->lo_open ? x <= f->lo : x < f->lo)) {
      snprintf(what, sizeof what, "is %g, must be %s %g", x, f->lo_open ? ">" : ">=", f->lo);
      return bad(f, what);
    }
    *(double *)p = x;
    return MLC_OK;
  }
  if (!json_is_integer(v)) return bad(f, "must be an integer");
  json_int_t x = json_integer_value(v);
  if (f->type == FIELD_SEED) {
    if (x < 0) return bad(f, "must be >= 0");
    *(uint64_t *)p = (uint64_t)x;
    return MLC_OK;
  }
  if ((double)x < f->lo || (double)x > f->hi) {
    snprintf(what, sizeof what, "is %lld, must be in [%.0f, %.0f]", (long long)x, f->lo, f->hi);
    return bad(f, what);
  }
  *(int *)p = (int)x;
  return MLC_OK;
}

static const field_t *find_field(const char *key) {
  for (int i = 0; i < NFIELDS; i++)
    if (strcmp(fields[i].key, key) == 0) return &fields[i];
  return NULL;
}

int mlc_measure_options_from_json(mlc_measure_options_t *out, const json_t *json) {
  if (!out) return mlc_error_set(MLC_EINVAL, "measure options: NULL argument");
  mlc_measure_options_t o;
  mlc_measure_options_default(&o);
  if (json && !json_is_null(json)) {
    if (!json_is_object(json)) return mlc_error_set(MLC_EPARSE, "measure options: expected a JSON object");
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)json, key, v) {
      const field_t *f = find_field(key);
      if (!f) return mlc_error_set(MLC_EPARSE, "measure options: unknown key '%s'", key);
      int st = field_from_json(f, v, &o);
      if (st != MLC_OK) return st;
    }
  }
  *out = o;
  return MLC_OK;
}

/* "sm_90" -> "sm90", "sm_90a" -> "sm90a". */
static void squeeze_arch(char *buf, size_t len, const char *arch) {
  size_t k = 0;
  for (const char *p = arch; *p && k + 1 < len; p++)
    if (*p != '_') buf[k++] = *p;
  buf[k] = '\0';
}

int mlc_device_key(char *buf, size_t len, const mlc_target_t *target) {
  if (!buf || len == 0 || !target) return mlc_error_set(MLC_EINVAL, "device key: NULL argument");
  char arch[sizeof target->arch];
  int n;
  switch (target->kind) {
  case MLC_TARGET_LLVM: n = snprintf(buf, len, "llvm-%s", target->mcpu[0] ? target->mcpu : "generic"); break;
  case MLC_TARGET_CUDA:
    squeeze_arch(arch, sizeof arch, target->arch);
    n = snprintf(buf, len, "cuda-%s", arch);
    break;
  case MLC_TARGET_ROCM: n = snprintf(buf, len, "rocm-%s", target->mcpu); break;
  default: return mlc_error_set(MLC_EINVAL, "device key: unknown target kind %d", (int)target->kind);
  }
  if (n < 0 || (size_t)n >= len) return mlc_error_set(MLC_ERANGE, "device key: longer than %zu bytes", len - 1);
  return MLC_OK;
}

int mlc_host_device_json(char *buf, size_t len) {
  if (!buf || len == 0) return mlc_error_set(MLC_EINVAL, "device description: NULL argument");
  mlc_target_t host;
  mlc_target_host(&host);
  char cpu[256];
  mlc_cpu_model(cpu, sizeof cpu);
  json_t *o = json_pack("{s:s, s:I, s:s}", "cpu", cpu, "cores", (json_int_t)mlc_cpu_host_cores(), "mcpu", host.mcpu);
  return mlc_device_json_dump(buf, len, o);
}

int mlc_device_json_dump(char *buf, size_t len, json_t *o) {
  if (!buf || len == 0) {
    json_decref(o);
    return mlc_error_set(MLC_EINVAL, "device description: NULL argument");
  }
  char *text = o ? mlc_json_dumps(o) : NULL;
  json_decref(o);
  if (!text) return mlc_error_set(MLC_ENOMEM, "device description: out of memory");
  int st = MLC_OK;
  if (strlen(text) >= len) st = mlc_error_set(MLC_ERANGE, "device description longer than %zu bytes", len - 1);
  else snprintf(buf, len, "%s", text);
  free(text);
  return st;
}
