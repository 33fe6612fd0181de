/*
 * json_raw.c - byte spans inside JSON text that jansson has already
 * accepted, so a value can be forwarded as the text it arrived in instead of
 * being printed again from the parsed tree.
 *
 * Why: the broker re-sends every job of a SUBMIT as its own JOB body, and a
 * worker hands the trace to its callback as text. Printing a job again costs
 * about as much as parsing it, and the broker does it on its one thread for
 * every job of every client. The scanner here only ever runs on text that
 * parsed (the codec ran first), so it needs no error handling beyond "not
 * found": it skips strings (with their escapes) and nested containers.
 * Keys written with escapes are not matched; callers then fall back to
 * printing from the tree.
 */
#include "rpc/rpc_priv.h"

#include <string.h>

static size_t skip_ws(const char *s, size_t i, size_t n) {
  while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
  return i;
}

/* The end of the string starting at s[i] == '"' (just past its closing quote). */
static size_t skip_string(const char *s, size_t i, size_t n) {
  for (i++; i < n && s[i] != '"'; i++)
    if (s[i] == '\\') i++;
  return i + 1;
}

/* The end of the value starting at s[i] (trailing whitespace of a scalar may
 * be included; callers trim). */
static size_t skip_value(const char *s, size_t i, size_t n) {
  int depth = 0;
  while (i < n) {
    char c = s[i];
    if (c == '"') {
      i = skip_string(s, i, n);
      if (depth == 0) return i;
      continue;
    }
    if (c == '{' || c == '[') {
      depth++;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return i; /* the end of the enclosing container */
      if (--depth == 0) return i + 1;
    } else if (c == ',' && depth == 0) {
      return i;
    }
    i++;
  }
  return i;
}

static void trim(const char *s, size_t *start, size_t *end) {
  while (*end > *start && (s[*end - 1] == ' ' || s[*end - 1] == '\t' || s[*end - 1] == '\n' || s[*end - 1] == '\r'))
    (*end)--;
}

int rpc_json_raw_find(const char *s, size_t n, const char *key, size_t *start) {
  size_t klen = strlen(key), i = skip_ws(s, 0, n);
  if (i >= n || s[i] != '{') return MLC_ENOTFOUND;
  for (i = skip_ws(s, i + 1, n); i < n && s[i] == '"';) {
    size_t kstart = i + 1, kend = skip_string(s, i, n) - 1;
    bool match = kend - kstart == klen && memcmp(s + kstart, key, klen) == 0;
    i = skip_ws(s, kend + 1, n);
    if (i >= n || s[i] != ':') return MLC_ENOTFOUND;
    i = skip_ws(s, i + 1, n);
    if (match) {
      *start = i;
      return MLC_OK;
    }
    i = skip_ws(s, skip_value(s, i, n), n);
    if (i < n && s[i] == ',') i = skip_ws(s, i + 1, n);
  }
  return MLC_ENOTFOUND;
}

int rpc_json_raw_member(const char *s, size_t n, const char *key, size_t *start, size_t *end) {
  if (rpc_json_raw_find(s, n, key, start) != MLC_OK) return MLC_ENOTFOUND;
  *end = skip_value(s, *start, n);
  trim(s, start, end);
  return MLC_OK;
}

int rpc_json_raw_items(const char *s, size_t n, size_t *starts, size_t *ends, size_t count) {
  size_t i = skip_ws(s, 0, n), k = 0;
  if (i >= n || s[i] != '[') return MLC_ENOTFOUND;
  for (i = skip_ws(s, i + 1, n); i < n && s[i] != ']' && k < count; k++) {
    starts[k] = i;
    ends[k] = skip_value(s, i, n);
    trim(s, &starts[k], &ends[k]);
    i = skip_ws(s, ends[k], n);
    if (i < n && s[i] == ',') i = skip_ws(s, i + 1, n);
  }
  return k == count && i < n && s[i] == ']' ? MLC_OK : MLC_ENOTFOUND;
}
