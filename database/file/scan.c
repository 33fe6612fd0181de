/*
 * scan.c - a validating JSON scanner for record lines: it checks a text is
 * JSON (RFC 8259: grammar, string escapes, UTF-8, nesting up to 2048 levels
 * like jansson) and hands back where each top-level field's value is,
 * without building a tree.
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

enum { SCAN_MAX_DEPTH = 2048 };

typedef struct {
  const char *p, *end, *start;
  const char *why; /* first error, static text */
} scan_t;

static bool fail(scan_t *s, const char *why) {
  if (!s->why) s->why = why;
  return false;
}

static void skip_ws(scan_t *s) {
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')) s->p++;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static int hex_val(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

size_t fscan_utf8_len(const unsigned char *p, const unsigned char *end) {
  unsigned c = p[0];
  size_t n;
  unsigned min;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) n = 2, min = 0x80;
  else if ((c & 0xF0) == 0xE0) n = 3, min = 0x800;
  else if ((c & 0xF8) == 0xF0) n = 4, min = 0x10000;
  else return 0;
  if ((size_t)(end - p) < n) return 0;
  unsigned cp = c & (0xFFu >> (n + 1));
  for (size_t i = 1; i < n; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

/* A string literal; *escaped says whether it holds a backslash escape. */
static bool scan_string(scan_t *s, fspan_t *out) {
  const char *open = s->p++; /* the quote */
  bool escaped = false;
  while (s->p < s->end) {
    unsigned char c = (unsigned char)*s->p;
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') { /* the common case, inline */
      s->p++;
      continue;
    }
    if (c == '"') {
      if (out) *out = (fspan_t){open + 1, (size_t)(s->p - open - 1), escaped};
      s->p++;
      return true;
    }
    if (c < 0x20) return fail(s, "a control character in a string");
    if (c == '\\') {
      escaped = true;
      if (++s->p >= s->end) break;
      char e = *s->p;
      if (e == 'u') {
        if (s->end - s->p < 5) break;
        for (int i = 1; i <= 4; i++)
          if (hex_val(s->p[i]) < 0) return fail(s, "a bad \\u escape");
        s->p += 5;
      } else if (e && strchr("\"\\/bfnrt", e)) {
        s->p++;
      } else {
        return fail(s, "a bad escape in a string");
      }
      continue;
    }
    size_t n = fscan_utf8_len((const unsigned char *)s->p, (const unsigned char *)s->end);
    if (!n) return fail(s, "a string that is not UTF-8");
    s->p += n;
  }
  return fail(s, "an unterminated string");
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool scan_number(scan_t *s) {
  const char *p = s->p;
  if (p < s->end && *p == '-') p++;
  if (p >= s->end || !is_digit(*p)) return fail(s, "a bad number");
  if (*p == '0') p++;
  else while (p < s->end && is_digit(*p)) p++;
  if (p < s->end && *p == '.') {
    if (++p >= s->end || !is_digit(*p)) return fail(s, "a bad number");
    while (p < s->end && is_digit(*p)) p++;
  }
  if (p < s->end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < s->end && (*p == '+' || *p == '-')) p++;
    if (p >= s->end || !is_digit(*p)) return fail(s, "a bad number");
    while (p < s->end && is_digit(*p)) p++;
  }
  s->p = p;
  return true;
}

static bool scan_word(scan_t *s, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
    return fail(s, "an unexpected character");
  s->p += n;
  return true;
}

static bool scan_value(scan_t *s, int depth);

/* The members or elements of an object or array, after its opening bracket. */
static bool scan_container(scan_t *s, int depth, char close) {
  s->p++;
  skip_ws(s);
  if (s->p < s->end && *s->p == close) {
    s->p++;
    return true;
  }
  for (;;) {
    if (close == '}') {
      if (s->p >= s->end || *s->p != '"') return fail(s, "an object key that is not a string");
      if (!scan_string(s, NULL)) return false;
      skip_ws(s);
      if (s->p >= s->end || *s->p++ != ':') return fail(s, "a missing ':' in an object");
    }
    if (!scan_value(s, depth + 1)) return false;
    skip_ws(s);
    if (s->p >= s->end) return fail(s, "an unterminated object or array");
    char c = *s->p++;
    if (c == close) return true;
    if (c != ',') return fail(s, "a missing ',' between values");
    skip_ws(s);
  }
}

static bool scan_value(scan_t *s, int depth) {
  if (depth > SCAN_MAX_DEPTH) return fail(s, "nesting deeper than 2048 levels");
  skip_ws(s);
  if (s->p >= s->end) return fail(s, "a missing value");
  switch (*s->p) {
  case '{': return scan_container(s, depth, '}');
  case '[': return scan_container(s, depth, ']');
  case '"': return scan_string(s, NULL);
  case 't': return scan_word(s, "true");
  case 'f': return scan_word(s, "false");
  case 'n': return scan_word(s, "null");
  default: return scan_number(s);
  }
}

static int scan_error(const scan_t *s, const char *what) {
  return mlc_error_set(MLC_EPARSE, "%s is not JSON: %s at byte %zu", what,
                       s->why ? s->why : "trailing characters", (size_t)(s->p - s->start) + 1);
}

int fscan_json(const char *text, size_t len, const char *what) {
  scan_t s = {text, text + len, text, NULL};
  bool ok = scan_value(&s, 1);
  skip_ws(&s);
  if (!ok || s.p != s.end) return scan_error(&s, what);
  return MLC_OK;
}

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
static int field_of(const fspan_t *key) {
  for (int f = 0; f < FREC_COUNT; f++)
    if (!key->escaped && strlen(field_names[f]) == key->len &&
        memcmp(field_names[f], key->p, key->len) == 0)
      return f;
  return -1;
}

/* One member's value: strings and arrays of numbers are checked for their
 * field's kind; JSON fields take any value. */
static bool scan_field(scan_t *s, int f, fspan_t *out) {
  skip_ws(s);
  const char *start = s->p;
  char kind = f >= 0 ? field_kinds[f] : 'j';
  if (kind == 's') {
    if (s->p >= s->end || *s->p != '"') return fail(s, "a field that should be a string");
    return scan_string(s, out);
  }
  if (kind == 'n' && (s->p >= s->end || *s->p != '['))
    return fail(s, "run_secs that is not an array");
  if (!scan_value(s, 2)) return false;
  *out = (fspan_t){start, (size_t)(s->p - start), false};
  return true;
}

int fscan_record(fscan_record_t *out, const char *line, size_t len) {
  memset(out, 0, sizeof *out);
  scan_t s = {line, line + len, line, NULL};
  skip_ws(&s);
  if (s.p >= s.end || *s.p != '{') return mlc_error_set(MLC_EPARSE, "not a JSON object");
  s.p++;
  bool seen[FREC_COUNT] = {false};
  bool ok = true;
  skip_ws(&s);
  while (ok && s.p < s.end && *s.p != '}') {
    fspan_t key, ignored;
    if (*s.p != '"' || !scan_string(&s, &key)) {
      ok = fail(&s, "an object key that is not a string");
      break;
    }
    skip_ws(&s);
    if (s.p >= s.end || *s.p++ != ':') ok = fail(&s, "a missing ':' in an object");
    int f = field_of(&key);
    if (ok && f >= 0 && seen[f])
      return mlc_error_set(MLC_EPARSE, "field '%s' appears twice", field_names[f]);
    ok = ok && scan_field(&s, f, f >= 0 ? &out->f[f] : &ignored);
    if (f >= 0) seen[f] = true;
    skip_ws(&s);
    if (ok && s.p < s.end && *s.p == ',') {
      s.p++;
      skip_ws(&s);
      if (s.p < s.end && *s.p == '}') ok = fail(&s, "a trailing ','");
    } else if (ok && (s.p >= s.end || *s.p != '}')) {
      ok = fail(&s, "a missing ',' between values");
    }
  }
  if (ok && s.p >= s.end) ok = fail(&s, "an unterminated object");
  if (ok) {
    s.p++;
    skip_ws(&s);
  }
  if (!ok || s.p != s.end) return scan_error(&s, "the line");
  for (int f = 0; f < FREC_COUNT; f++)
    if (!seen[f]) return mlc_error_set(MLC_EPARSE, "missing field '%s'", field_names[f]);
  return MLC_OK;
}

const char *fscan_field_name(int f) { return field_names[f]; }

/* Appends the UTF-8 form of code point cp. */
static size_t put_utf8(char *o, unsigned cp) {
  if (cp < 0x80) return o[0] = (char)cp, 1;
  if (cp < 0x800) return o[0] = (char)(0xC0 | cp >> 6), o[1] = (char)(0x80 | (cp & 0x3F)), 2;
  if (cp < 0x10000) {
    o[0] = (char)(0xE0 | cp >> 12);
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (char)(0xF0 | cp >> 18);
  o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  o[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

static unsigned hex4(const char *p) {
  return (unsigned)(hex_val(p[0]) << 12 | hex_val(p[1]) << 8 | hex_val(p[2]) << 4 | hex_val(p[3]));
}

/* The string's text (escapes decoded; a lone surrogate becomes U+FFFD and
 * \u0000 is dropped: C strings cannot hold it). NULL when out of memory. */
char *fscan_string(mlc_arena_t *arena, const fspan_t *sp) {
  if (!sp->escaped) return mlc_arena_strndup(arena, sp->p, sp->len);
  char *out = mlc_arena_alloc(arena, sp->len + 1), *o = out;
  if (!out) return NULL;
  for (const char *p = sp->p, *end = sp->p + sp->len; p < end;) {
    if (*p != '\\') {
      *o++ = *p++;
      continue;
    }
    char e = p[1];
    p += 2;
    if (e != 'u') {
      static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
      *o++ = to[strchr(from, e) - from];
      continue;
    }
    unsigned cp = hex4(p);
    p += 4;
    if (cp >= 0xD800 && cp <= 0xDBFF && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
      unsigned lo = hex4(p + 2);
      if (lo >= 0xDC00 && lo <= 0xDFFF) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        p += 6;
      }
    }
    if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
    if (cp) o += put_utf8(o, cp); /* escaped forms are never shorter than UTF-8 */
  }
  *o = '\0';
  return out;
}
