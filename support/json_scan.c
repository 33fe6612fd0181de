/*
 * json_scan.c - a validating JSON scanner that builds no tree (support.h,
 * "JSON scanning"): it checks a text is JSON (RFC 8259: grammar, string
 * escapes, UTF-8, nesting up to 2048 levels like jansson) and says where
 * values are, so a caller can keep or forward the bytes it was sent.
 *
 * Why beside jansson: the hot paths hold JSON that is mostly a trace they
 * only pass on. Parsing a trace into a tree to throw it away made loading
 * the file database ~10x slower than scanning it, and was the largest
 * per-job cost of the farm (the client checking each job's trace, the worker
 * decoding each JOB). Everything that needs the values still uses jansson.
 */
#include "support/support.h"

#include <stdio.h>
#include <string.h>

enum { JSCAN_MAX_DEPTH = 2048 };

void mlc_jscan_init(mlc_jscan_t *s, const char *text, size_t len) {
  *s = (mlc_jscan_t){text, text + len, text, NULL};
}

bool mlc_jscan_fail(mlc_jscan_t *s, const char *why) {
  if (!s->why) s->why = why;
  return false;
}

void mlc_jscan_ws(mlc_jscan_t *s) {
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')) s->p++;
}

bool mlc_jscan_at(mlc_jscan_t *s, char c) {
  mlc_jscan_ws(s);
  return s->p < s->end && *s->p == c;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static int hex_val(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

size_t mlc_utf8_len(const unsigned char *p, const unsigned char *end) {
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

/* Bytes a string holds as they are: printable ASCII but the quote and the
 * backslash (the common case, one table load per byte). */
static const unsigned char plain[256] = {
#define R16(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
    R16(0), R16(0), /* control characters */
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,             /* 0x22 '"' */
    R16(1), R16(1),
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,             /* 0x5c '\\' */
    R16(1), R16(1),
    R16(0), R16(0), R16(0), R16(0), R16(0), R16(0), R16(0), R16(0), /* UTF-8 */
#undef R16
};

bool mlc_jscan_string(mlc_jscan_t *s, mlc_jspan_t *out) {
  const char *open = s->p++; /* the quote */
  bool escaped = false;
  while (s->p < s->end) {
    const char *p = s->p, *end = s->end;
    while (p < end && plain[(unsigned char)*p]) p++;
    s->p = p;
    if (p >= end) break;
    unsigned char c = (unsigned char)*p;
    if (c == '"') {
      if (out) *out = (mlc_jspan_t){open + 1, (size_t)(s->p - open - 1), escaped};
      s->p++;
      return true;
    }
    if (c < 0x20) return mlc_jscan_fail(s, "a control character in a string");
    if (c == '\\') {
      escaped = true;
      if (++s->p >= s->end) break;
      char e = *s->p;
      if (e == 'u') {
        if (s->end - s->p < 5) break;
        for (int i = 1; i <= 4; i++)
          if (hex_val(s->p[i]) < 0) return mlc_jscan_fail(s, "a bad \\u escape");
        s->p += 5;
      } else if (e && strchr("\"\\/bfnrt", e)) {
        s->p++;
      } else {
        return mlc_jscan_fail(s, "a bad escape in a string");
      }
      continue;
    }
    size_t n = mlc_utf8_len((const unsigned char *)s->p, (const unsigned char *)s->end);
    if (!n) return mlc_jscan_fail(s, "a string that is not UTF-8");
    s->p += n;
  }
  return mlc_jscan_fail(s, "an unterminated string");
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool scan_number(mlc_jscan_t *s) {
  const char *p = s->p;
  if (p < s->end && *p == '-') p++;
  if (p >= s->end || !is_digit(*p)) return mlc_jscan_fail(s, "a bad number");
  if (*p == '0') p++;
  else while (p < s->end && is_digit(*p)) p++;
  if (p < s->end && *p == '.') {
    if (++p >= s->end || !is_digit(*p)) return mlc_jscan_fail(s, "a bad number");
    while (p < s->end && is_digit(*p)) p++;
  }
  if (p < s->end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < s->end && (*p == '+' || *p == '-')) p++;
    if (p >= s->end || !is_digit(*p)) return mlc_jscan_fail(s, "a bad number");
    while (p < s->end && is_digit(*p)) p++;
  }
  s->p = p;
  return true;
}

static bool scan_word(mlc_jscan_t *s, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0) return mlc_jscan_fail(s, "an unexpected character");
  s->p += n;
  return true;
}

/* The members or elements of an object or array, after its opening bracket. */
static bool scan_container(mlc_jscan_t *s, int depth, char close) {
  s->p++;
  mlc_jscan_ws(s);
  if (s->p < s->end && *s->p == close) {
    s->p++;
    return true;
  }
  for (;;) {
    if (close == '}') {
      if (s->p >= s->end || *s->p != '"') return mlc_jscan_fail(s, "an object key that is not a string");
      if (!mlc_jscan_string(s, NULL)) return false;
      mlc_jscan_ws(s);
      if (s->p >= s->end || *s->p++ != ':') return mlc_jscan_fail(s, "a missing ':' in an object");
    }
    if (!mlc_jscan_value(s, depth + 1)) return false;
    mlc_jscan_ws(s);
    if (s->p >= s->end) return mlc_jscan_fail(s, "an unterminated object or array");
    char c = *s->p++;
    if (c == close) return true;
    if (c != ',') return mlc_jscan_fail(s, "a missing ',' between values");
    mlc_jscan_ws(s);
  }
}

bool mlc_jscan_value(mlc_jscan_t *s, int depth) {
  if (depth > JSCAN_MAX_DEPTH) return mlc_jscan_fail(s, "nesting deeper than 2048 levels");
  mlc_jscan_ws(s);
  if (s->p >= s->end) return mlc_jscan_fail(s, "a missing value");
  switch (*s->p) {
  case '{': return scan_container(s, depth, '}');
  case '[': return scan_container(s, depth, ']');
  case '"': return mlc_jscan_string(s, NULL);
  case 't': return scan_word(s, "true");
  case 'f': return scan_word(s, "false");
  case 'n': return scan_word(s, "null");
  default: return scan_number(s);
  }
}

bool mlc_jscan_member(mlc_jscan_t *s, bool first, mlc_jspan_t *key) {
  mlc_jscan_ws(s);
  if (s->p >= s->end) return mlc_jscan_fail(s, "an unterminated object");
  if (*s->p == '}') return false; /* the end: s->why stays NULL */
  if (!first) {
    if (*s->p != ',') return mlc_jscan_fail(s, "a missing ',' between values");
    s->p++;
    mlc_jscan_ws(s);
    if (s->p < s->end && *s->p == '}') return mlc_jscan_fail(s, "a trailing ','");
  }
  if (s->p >= s->end || *s->p != '"' || !mlc_jscan_string(s, key))
    return mlc_jscan_fail(s, "an object key that is not a string");
  mlc_jscan_ws(s);
  if (s->p >= s->end || *s->p++ != ':') return mlc_jscan_fail(s, "a missing ':' in an object");
  mlc_jscan_ws(s);
  return true;
}

int mlc_jscan_error(const mlc_jscan_t *s, const char *what) {
  return mlc_error_set(MLC_EPARSE, "%s is not JSON: %s at byte %zu", what, s->why ? s->why : "trailing characters",
                       (size_t)(s->p - s->start) + 1);
}

int mlc_json_check(const char *text, size_t len, const char *what) {
  mlc_jscan_t s;
  mlc_jscan_init(&s, text, len);
  bool ok = mlc_jscan_value(&s, 1);
  mlc_jscan_ws(&s);
  if (!ok || s.p != s.end) return mlc_jscan_error(&s, what);
  return MLC_OK;
}

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

size_t mlc_jspan_decode(char *out, const mlc_jspan_t *sp, bool *had_nul) {
  char *o = out;
  if (had_nul) *had_nul = false;
  if (!sp->escaped) {
    memcpy(out, sp->p, sp->len);
    out[sp->len] = '\0';
    return sp->len;
  }
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
    else if (had_nul) *had_nul = true;
  }
  *o = '\0';
  return (size_t)(o - out);
}

char *mlc_jspan_string(mlc_arena_t *arena, const mlc_jspan_t *sp) {
  char *out = mlc_arena_alloc(arena, sp->len + 1);
  if (out) mlc_jspan_decode(out, sp, NULL);
  return out;
}
