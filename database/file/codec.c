/*
 * codec.c - the lines of the file database: records and workloads as JSON
 * objects, one per line, and the timestamps in them.
 *
 * A record line (docs/database.md "Record format"), keys in this order:
 *   {"id":"<16 hex>","workload":"<16 hex>","target":"...","device_key":"...",
 *    "device":{...},"trace":[...],"trace_hash":"<16 hex>","run_secs":[...],
 *    "error_kind":"","error_msg":"","compiler_version":"...","worker_id":"...",
 *    "created_at":"2024-05-01T12:34:56.123456Z"}
 * 64-bit values are hex strings (JSON numbers lose precision past 2^53); the
 * trace and device properties are JSON values, not strings, so the file reads
 * well and tools like jq can look inside. Lines are written by hand rather
 * than through jansson objects: committing is the hot path (the benchmark
 * wants 100,000 records/s), and the embedded JSON texts are only parsed to
 * check them, with the same flags the loader uses, so a line that was
 * accepted always loads.
 */
#include "database/file/file_priv.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */
/* ------------------------------------------------------------------------ */

/* A JSON string literal. Bytes that are not UTF-8 (a compiler's message
 * may hold anything) become U+FFFD: the record must stay loadable. */
static void put_str(mlc_strbuf_t *sb, const char *s) {
  const unsigned char *p = (const unsigned char *)(s ? s : ""), *end = p + strlen((const char *)p);
  mlc_sb_putc(sb, '"');
  while (*p) {
    const unsigned char *run = p;
    while (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
    mlc_sb_appendn(sb, (const char *)run, (size_t)(p - run));
    if (!*p) break;
    if (*p == '"' || *p == '\\') {
      mlc_sb_putc(sb, '\\');
      mlc_sb_putc(sb, (char)*p++);
    } else if (*p < 0x20) {
      mlc_sb_printf(sb, "\\u%04x", *p++);
    } else {
      size_t n = mlc_utf8_len(p, end);
      if (n) mlc_sb_appendn(sb, (const char *)p, n);
      else mlc_sb_append(sb, "\\ufffd");
      p += n ? n : 1;
    }
  }
  mlc_sb_putc(sb, '"');
}

static void put_hex(mlc_strbuf_t *sb, uint64_t v) {
  char buf[17];
  mlc_hash_hex(v, buf);
  mlc_sb_putc(sb, '"');
  mlc_sb_append(sb, buf);
  mlc_sb_putc(sb, '"');
}

/* A form of v that reads back as the same double (real.c), kept a real
 * for readers ("3.0", not "3"). */
static void put_real(mlc_strbuf_t *sb, double v) {
  char buf[FCODEC_REAL_MAX];
  fcodec_real(buf, v);
  mlc_sb_append(sb, buf);
  if (!strpbrk(buf, ".eEn")) mlc_sb_append(sb, ".0");
}

/* Embeds a JSON text after checking it is one. A newline can only be
 * whitespace between tokens (JSON strings cannot hold one raw), so turning
 * newlines into spaces keeps the value and the line whole. */
static int put_json(mlc_strbuf_t *sb, const char *text, const char *what, const char *id) {
  size_t len = strlen(text);
  if (mlc_json_check(text, len, what) != MLC_OK) {
    mlc_error_prefix("record %s", id);
    return mlc_error_set(MLC_EINVAL, "%s", mlc_error_last());
  }
  size_t at = sb->len;
  mlc_sb_appendn(sb, text, len);
  for (char *p = sb->failed ? NULL : memchr(sb->data + at, '\n', len); p;
       p = memchr(p, '\n', (size_t)(sb->data + sb->len - p)))
    *p = ' ';
  return MLC_OK;
}

/* One field's value. */
static int put_field(mlc_strbuf_t *sb, const db_record_t *r, int f) {
  char when[FCODEC_TIME_MAX];
  switch (f) {
  case FREC_ID: put_str(sb, r->id); break;
  case FREC_WORKLOAD: put_hex(sb, r->workload_key); break;
  case FREC_TARGET: put_str(sb, r->target); break;
  case FREC_DEVICE_KEY: put_str(sb, r->device_key); break;
  case FREC_DEVICE:
    return put_json(sb, r->device_json && *r->device_json ? r->device_json : "{}",
                    "the device properties", r->id);
  case FREC_TRACE: return put_json(sb, r->trace_json, "the trace", r->id);
  case FREC_TRACE_HASH: put_hex(sb, r->trace_hash); break;
  case FREC_RUN_SECS:
    mlc_sb_putc(sb, '[');
    for (int i = 0; i < r->nrun_secs; i++) {
      if (i) mlc_sb_putc(sb, ',');
      put_real(sb, r->run_secs[i]);
    }
    mlc_sb_putc(sb, ']');
    break;
  case FREC_ERROR_KIND: put_str(sb, mlc_error_kind_name(r->error_kind)); break;
  case FREC_ERROR_MSG: put_str(sb, r->error_msg); break;
  case FREC_COMPILER_VERSION: put_str(sb, r->compiler_version); break;
  case FREC_WORKER_ID: put_str(sb, r->worker_id); break;
  case FREC_CREATED_AT:
    fcodec_time_str(r->created_at_us, when);
    put_str(sb, when);
    break;
  }
  return MLC_OK;
}

int fcodec_record_line(mlc_strbuf_t *sb, const db_record_t *r) {
  for (int f = 0; f < FREC_COUNT; f++) {
    mlc_sb_append(sb, f ? ",\"" : "{\"");
    mlc_sb_append(sb, fscan_field_name(f));
    mlc_sb_append(sb, "\":");
    int rc = put_field(sb, r, f);
    if (rc != MLC_OK) return rc;
  }
  mlc_sb_append(sb, "}\n");
  return sb->failed ? mlc_error_set(MLC_ENOMEM, "out of memory encoding records") : MLC_OK;
}

int fcodec_workload_line(mlc_strbuf_t *sb, uint64_t key, const char *name, const char *tvmscript) {
  mlc_sb_append(sb, "{\"key\":");
  put_hex(sb, key);
  mlc_sb_append(sb, ",\"name\":");
  put_str(sb, name);
  mlc_sb_append(sb, ",\"tvmscript\":");
  put_str(sb, tvmscript);
  mlc_sb_append(sb, "}\n");
  return sb->failed ? mlc_error_set(MLC_ENOMEM, "out of memory encoding a workload") : MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */
/* ------------------------------------------------------------------------ */

int fcodec_hex_parse(const char *s, size_t len, uint64_t *v) {
  uint64_t x = 0;
  if (len != 16) return MLC_EPARSE;
  for (int i = 0; i < 16; i++) {
    char c = s[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return MLC_EPARSE;
    x = x << 4 | (uint64_t)d;
  }
  *v = x;
  return MLC_OK;
}

static int get_hex(const fscan_record_t *sc, int f, uint64_t *v) {
  const mlc_jspan_t *sp = &sc->f[f];
  if (sp->escaped || fcodec_hex_parse(sp->p, sp->len, v) != MLC_OK)
    return mlc_error_set(MLC_EPARSE, "field '%s' must be 16 hex digits", fscan_field_name(f));
  return MLC_OK;
}

static int get_kind(const fscan_record_t *sc, mlc_error_kind_t *kind) {
  const mlc_jspan_t *sp = &sc->f[FREC_ERROR_KIND];
  char name[32];
  if (!sp->escaped && sp->len < sizeof name) {
    memcpy(name, sp->p, sp->len);
    name[sp->len] = '\0';
    if (mlc_error_kind_parse(kind, name) == MLC_OK) return MLC_OK;
  }
  return mlc_error_set(MLC_EPARSE, "unknown error_kind '%.*s'", (int)(sp->len < 40 ? sp->len : 40),
                       sp->p);
}

static int get_time(const fscan_record_t *sc, int64_t *us) {
  const mlc_jspan_t *sp = &sc->f[FREC_CREATED_AT];
  if (sp->escaped || fcodec_time_parse(sp->p, sp->len, us) != MLC_OK)
    return mlc_error_set(MLC_EPARSE, "field 'created_at' is not a UTC time: '%.*s'",
                         (int)(sp->len < 40 ? sp->len : 40), sp->p);
  return MLC_OK;
}

/* run_secs (a JSON array, already scanned) into out[0..cap); *n is how many
 * there are (may exceed cap: call again with room). */
static int get_runs(const mlc_jspan_t *sp, double *out, size_t cap, size_t *n) {
  const char *p = sp->p + 1, *end = sp->p + sp->len - 1; /* inside the brackets */
  *n = 0;
  for (;;) {
    while (p < end && strchr(" \t\r\n,", *p)) p++;
    if (p >= end) return MLC_OK;
    char *stop;
    double v = strtod(p, &stop); /* the scanner checked the grammar */
    if (stop == p || (*p != '-' && (*p < '0' || *p > '9')))
      return mlc_error_set(MLC_EPARSE, "run_secs holds something that is not a number");
    if (*n < cap) out[*n] = v;
    (*n)++;
    p = stop;
  }
}

/* The string field f as a NUL-terminated string: in the line when it needs
 * no decoding (not terminated: *len says where it ends), else in scratch. */
static int get_span_str(const fscan_record_t *sc, int f, mlc_arena_t *scratch, const char **s,
                        size_t *len) {
  const mlc_jspan_t *sp = &sc->f[f];
  if (!sp->escaped) {
    *s = sp->p;
    *len = sp->len;
    return MLC_OK;
  }
  char *text = scratch ? mlc_jspan_string(scratch, sp) : NULL;
  if (!text) return mlc_error_set(MLC_ENOMEM, "out of memory loading records");
  *s = text;
  *len = strlen(text);
  return MLC_OK;
}

static int meta_from_scan(fcodec_meta_t *m, const fscan_record_t *sc, mlc_arena_t *scratch) {
  int rc;
  if ((rc = get_hex(sc, FREC_ID, &m->id)) != MLC_OK ||
      (rc = get_hex(sc, FREC_WORKLOAD, &m->workload)) != MLC_OK ||
      (rc = get_hex(sc, FREC_TRACE_HASH, &m->trace_hash)) != MLC_OK ||
      (rc = get_kind(sc, &m->error_kind)) != MLC_OK ||
      (rc = get_time(sc, &m->created_at_us)) != MLC_OK ||
      (rc = get_span_str(sc, FREC_TARGET, scratch, &m->target, &m->target_len)) != MLC_OK ||
      (rc = get_span_str(sc, FREC_DEVICE_KEY, scratch, &m->device_key, &m->device_key_len)) !=
          MLC_OK)
    return rc;
  double small[64];
  size_t n;
  if ((rc = get_runs(&sc->f[FREC_RUN_SECS], small, 64, &n)) != MLC_OK) return rc;
  double *runs = n <= 64 ? small : mlc_malloc(n * sizeof *runs);
  if (!runs) return mlc_error_set(MLC_ENOMEM, "out of memory loading records");
  if (runs != small) get_runs(&sc->f[FREC_RUN_SECS], runs, n, &n);
  db_record_t r = {.error_kind = m->error_kind, .nrun_secs = (int)n, .run_secs = runs};
  m->median = db_record_median(&r);
  if (runs != small) mlc_free(runs);
  return MLC_OK;
}

int fcodec_record_meta(fcodec_meta_t *m, const char *line, size_t len, mlc_arena_t *scratch) {
  fscan_record_t sc;
  int rc = fscan_record(&sc, line, len);
  return rc == MLC_OK ? meta_from_scan(m, &sc, scratch) : rc;
}

int fcodec_record_parse(db_record_t *r, const char *line, size_t len, mlc_arena_t *arena) {
  fscan_record_t sc;
  fcodec_meta_t m;
  memset(r, 0, sizeof *r);
  int rc = fscan_record(&sc, line, len);
  if (rc == MLC_OK) rc = meta_from_scan(&m, &sc, arena);
  if (rc != MLC_OK) return rc;
  mlc_hash_hex(m.id, r->id);
  r->workload_key = m.workload;
  r->trace_hash = m.trace_hash;
  r->error_kind = m.error_kind;
  r->created_at_us = m.created_at_us;
  r->target = mlc_jspan_string(arena, &sc.f[FREC_TARGET]);
  r->device_key = mlc_jspan_string(arena, &sc.f[FREC_DEVICE_KEY]);
  r->error_msg = mlc_jspan_string(arena, &sc.f[FREC_ERROR_MSG]);
  r->compiler_version = mlc_jspan_string(arena, &sc.f[FREC_COMPILER_VERSION]);
  r->worker_id = mlc_jspan_string(arena, &sc.f[FREC_WORKER_ID]);
  r->device_json = mlc_arena_strndup(arena, sc.f[FREC_DEVICE].p, sc.f[FREC_DEVICE].len);
  r->trace_json = mlc_arena_strndup(arena, sc.f[FREC_TRACE].p, sc.f[FREC_TRACE].len);
  size_t n;
  get_runs(&sc.f[FREC_RUN_SECS], NULL, 0, &n);
  double *runs = n ? mlc_arena_alloc(arena, n * sizeof *runs) : NULL;
  if (runs) get_runs(&sc.f[FREC_RUN_SECS], runs, n, &n);
  r->nrun_secs = (int)n;
  r->run_secs = runs;
  if (mlc_arena_failed(arena) || (n && !runs))
    return mlc_error_set(MLC_ENOMEM, "out of memory reading a record");
  return MLC_OK;
}

static int get_json_hex(const json_t *j, const char *key, uint64_t *v) {
  const char *s;
  int rc = mlc_json_get_str(j, key, &s);
  if (rc == MLC_OK && fcodec_hex_parse(s, strlen(s), v) != MLC_OK)
    rc = mlc_error_set(MLC_EPARSE, "field '%s' must be 16 hex digits", key);
  return rc;
}

int fcodec_workload_parse(const json_t *j, uint64_t *key, const char **name,
                          const char **tvmscript) {
  int rc;
  if ((rc = get_json_hex(j, "key", key)) != MLC_OK ||
      (rc = mlc_json_get_str(j, "name", name)) != MLC_OK ||
      (rc = mlc_json_get_str(j, "tvmscript", tvmscript)) != MLC_OK)
    return rc;
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Time: proleptic Gregorian UTC, microseconds                               */
/* ------------------------------------------------------------------------ */

/* Days since 1970-01-01 of a civil date, and back (H. Hinnant's algorithms:
 * exact for every year, no time zone or libc involved). */
static int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  *d = (int)(doy - (153 * mp + 2) / 5 + 1);
  *m = (int)(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2);
}

static int64_t floor_div(int64_t a, int64_t b) {
  return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* Writes v as n decimal digits (v < 10^n), without snprintf: this runs for
 * every record committed. */
static char *put_digits(char *p, int64_t v, int n) {
  for (int i = n - 1; i >= 0; i--, v /= 10) p[i] = (char)('0' + v % 10);
  return p + n;
}

void fcodec_time_str(int64_t us, char buf[FCODEC_TIME_MAX]) {
  int64_t secs = floor_div(us, 1000000), frac = us - secs * 1000000;
  int64_t days = floor_div(secs, 86400), sod = secs - days * 86400, y;
  int m, d;
  civil_from_days(days, &y, &m, &d);
  if (y < 0 || y > 9999) { /* outside what the fixed layout holds */
    snprintf(buf, FCODEC_TIME_MAX, "%04" PRId64 "-%02d-%02dT%02d:%02d:%02d.%06dZ", y, m, d,
             (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60), (int)frac);
    return;
  }
  char *p = put_digits(buf, y, 4);
  *p++ = '-';
  p = put_digits(p, m, 2);
  *p++ = '-';
  p = put_digits(p, d, 2);
  *p++ = 'T';
  p = put_digits(p, sod / 3600, 2);
  *p++ = ':';
  p = put_digits(p, sod / 60 % 60, 2);
  *p++ = ':';
  p = put_digits(p, sod % 60, 2);
  *p++ = '.';
  p = put_digits(p, frac, 6);
  *p++ = 'Z';
  *p = '\0';
}

/* Reads n decimal digits exactly. */
static bool digits(const char **p, int n, int64_t *out) {
  int64_t v = 0;
  for (int i = 0; i < n; i++) {
    char c = (*p)[i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *p += n;
  *out = v;
  return true;
}

static bool expect(const char **p, char c) { return **p == c ? (++*p, true) : false; }

/* "YYYY-MM-DDTHH:MM:SS[.ffffff]Z"; 1 to 6 fraction digits. */
int fcodec_time_parse(const char *s, size_t len, int64_t *us) {
  int64_t y, mo, d, h, mi, se, frac = 0;
  char buf[40];
  if (len >= sizeof buf) return MLC_EPARSE;
  memcpy(buf, s, len);
  buf[len] = '\0';
  const char *p = buf;
  if (!digits(&p, 4, &y) || !expect(&p, '-') || !digits(&p, 2, &mo) || !expect(&p, '-') ||
      !digits(&p, 2, &d) || !expect(&p, 'T') || !digits(&p, 2, &h) || !expect(&p, ':') ||
      !digits(&p, 2, &mi) || !expect(&p, ':') || !digits(&p, 2, &se))
    return MLC_EPARSE;
  if (expect(&p, '.')) {
    int n = 0;
    for (; p[n] >= '0' && p[n] <= '9' && n < 6; n++) frac = frac * 10 + (p[n] - '0');
    if (n == 0) return MLC_EPARSE;
    for (int k = n; k < 6; k++) frac *= 10;
    p += n;
  }
  if (!expect(&p, 'Z') || *p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
      se > 60)
    return MLC_EPARSE;
  int64_t days = days_from_civil(y, (int)mo, (int)d);
  *us = ((days * 86400 + h * 3600 + mi * 60 + se) * 1000000) + frac;
  return MLC_OK;
}

int64_t fcodec_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
