/*
 * json.c - thin helpers over jansson: canonical dumping, loading with error
 * positions, and typed field getters that produce uniform error texts.
 *
 * Canonical text matters because JSON is hashed and compared (trace JSON in
 * records, message bodies in tests): keys sorted, no whitespace, and reals at
 * 17 significant digits, which always round-trip a double exactly.
 */
#include "support/support.h"

#include <stdlib.h>

char *mlc_json_dumps(const json_t *json) {
  if (!json) return NULL;
  return json_dumps(json, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17) |
                              JSON_ENCODE_ANY);
}

/* Duplicate keys are rejected: a message or record with two values for one
 * field is ambiguous, and silently keeping one hides bugs. Top-level scalars
 * are accepted so any dumped value can be loaded back. */
json_t *mlc_json_loads(const char *text, const char *what) {
  json_error_t err;
  json_t *json = json_loads(text, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &err);
  if (!json)
    mlc_error_set(MLC_EPARSE, "%s:%d:%d: %s", what ? what : "<string>", err.line, err.column,
                  err.text);
  return json;
}

json_t *mlc_json_load_file(const char *path) {
  char *text = NULL;
  json_t *json = NULL;
  if (mlc_read_file(&text, NULL, path) != MLC_OK) goto done;
  json = mlc_json_loads(text, path);
done:
  mlc_free(text);
  return json;
}

/* The field `key` of object `obj`, or NULL with an MLC_EPARSE detail. */
static const json_t *json_field(const json_t *obj, const char *key) {
  if (!json_is_object(obj)) {
    mlc_error_set(MLC_EPARSE, "expected an object holding field '%s'", key);
    return NULL;
  }
  const json_t *v = json_object_get(obj, key);
  if (!v) mlc_error_set(MLC_EPARSE, "missing field '%s'", key);
  return v;
}

int mlc_json_get_int(const json_t *obj, const char *key, int64_t *out) {
  const json_t *v = json_field(obj, key);
  if (!v) return MLC_EPARSE;
  if (!json_is_integer(v)) return mlc_error_set(MLC_EPARSE, "field '%s' must be an integer", key);
  *out = (int64_t)json_integer_value(v);
  return MLC_OK;
}

int mlc_json_get_real(const json_t *obj, const char *key, double *out) {
  const json_t *v = json_field(obj, key);
  if (!v) return MLC_EPARSE;
  if (!json_is_number(v)) return mlc_error_set(MLC_EPARSE, "field '%s' must be a number", key);
  *out = json_number_value(v);
  return MLC_OK;
}

int mlc_json_get_str(const json_t *obj, const char *key, const char **out) {
  const json_t *v = json_field(obj, key);
  if (!v) return MLC_EPARSE;
  if (!json_is_string(v)) return mlc_error_set(MLC_EPARSE, "field '%s' must be a string", key);
  *out = json_string_value(v);
  return MLC_OK;
}
