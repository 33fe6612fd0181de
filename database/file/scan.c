/*
 * scan.c - record lines read without a tree: support's validating scanner
 * (json_scan.c) checks a line is JSON and hands back where each top-level
 * field's value is.
 *
 * Why not jansson here: loading the index touches every line, and a record
 * line is mostly trace; parsing the trace into a tree only to throw it away
 * made loading ~10x slower than scanning it. The trace and device texts are
 * kept as the exact bytes that were committed, so reading a record back is a
 * copy, not a re-print.
 */
#include "database/file/file_priv.h"

#include <stdio.h>
#include <string.h>

static const char *const field_names[] = {
#define FREC_NAME_(e, name, kind) name,
    FREC_FIELDS(FREC_NAME_)
#undef FREC_NAME_
};
static const char field_kinds[] = {
#define FREC_KIND_(e, name, kind) kind,
    FREC_FIELDS(FREC_KIND_)
#undef FREC_KIND_
};

/* Which field a key names (-1 for a key this version does not know). */
static int field_of(const mlc_jspan_t *key) {
  for (int f = 0; f < FREC_COUNT; f++)
    if (!key->escaped && strlen(field_names[f]) == key->len &&
        memcmp(field_names[f], key->p, key->len) == 0)
      return f;
  return -1;
}

/* One member's value: strings and arrays of numbers are checked for their
 * field's kind; JSON fields take any value. */
static bool scan_field(mlc_jscan_t *s, int f, mlc_jspan_t *out) {
  mlc_jscan_ws(s);
  const char *start = s->p;
  char kind = f >= 0 ? field_kinds[f] : 'j';
  if (kind == 's') {
    if (s->p >= s->end || *s->p != '"') return mlc_jscan_fail(s, "a field that should be a string");
    return mlc_jscan_string(s, out);
  }
  if (kind == 'n' && (s->p >= s->end || *s->p != '['))
    return mlc_jscan_fail(s, "run_secs that is not an array");
  if (!mlc_jscan_value(s, 2)) return false;
  *out = (mlc_jspan_t){start, (size_t)(s->p - start), false};
  return true;
}

int fscan_record(fscan_record_t *out, const char *line, size_t len) {
  memset(out, 0, sizeof *out);
  mlc_jscan_t s;
  mlc_jscan_init(&s, line, len);
  if (!mlc_jscan_at(&s, '{')) return mlc_error_set(MLC_EPARSE, "not a JSON object");
  s.p++;
  bool seen[FREC_COUNT] = {false};
  mlc_jspan_t key, ignored;
  for (bool first = true; mlc_jscan_member(&s, first, &key); first = false) {
    int f = field_of(&key);
    if (f >= 0 && seen[f]) return mlc_error_set(MLC_EPARSE, "field '%s' appears twice", field_names[f]);
    if (!scan_field(&s, f, f >= 0 ? &out->f[f] : &ignored)) break;
    if (f >= 0) seen[f] = true;
  }
  if (!s.why) { /* at the closing brace */
    s.p++;
    mlc_jscan_ws(&s);
  }
  if (s.why || s.p != s.end) return mlc_jscan_error(&s, "the line");
  for (int f = 0; f < FREC_COUNT; f++)
    if (!seen[f]) return mlc_error_set(MLC_EPARSE, "missing field '%s'", field_names[f]);
  return MLC_OK;
}

const char *fscan_field_name(int f) { return field_names[f]; }
