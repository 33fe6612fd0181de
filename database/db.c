/*
 * db.c - the database front door: picks a backend by URI scheme and forwards
 * every public db_* call through its vtable, so callers never switch on the
 * backend (STYLE.md: QBE's Target). It also owns what every backend shares:
 * URI redaction (no message or db_uri ever shows a password), record content
 * ids and medians, argument checks, and the result/stats containers.
 *
 * Content id (db_record_finish): XXH64, seed 0, over this byte stream, where
 * u64 is 8 bytes little-endian and str is a u64 length then the bytes (a NULL
 * optional string counts as ""):
 *   str "mlc-record-v1", u64 workload_key, str target, str device_key,
 *   u64 trace_hash, u64 nrun_secs, u64 bits of each run_secs[i] (IEEE-754
 *   binary64), str error kind name ("" when measured), str error_msg,
 *   str worker_id
 * printed as 16 lower-case hex digits. created_at, compiler_version and the
 * device properties are left out on purpose: a retried commit of the same
 * result (later, from an upgraded worker binary) must be the same record.
 */
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "database/db_priv.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* URIs: scheme detection and password spans                                */
/* ------------------------------------------------------------------------ */

/* Length of the "scheme" in "scheme:rest" (RFC 3986: ALPHA *( ALPHA / DIGIT /
 * "+" / "-" / "." )), or 0 when uri has none (a bare path). */
static size_t uri_scheme_len(const char *uri) {
  if (!isalpha((unsigned char)uri[0])) return 0;
  size_t i = 1;
  while (isalnum((unsigned char)uri[i]) || uri[i] == '+' || uri[i] == '-' || uri[i] == '.') i++;
  return uri[i] == ':' ? i : 0;
}

/* A libpq key=value connection string starts with "keyword =". */
static bool uri_is_conninfo(const char *uri) {
  const char *p = uri;
  while (isspace((unsigned char)*p)) p++;
  const char *k = p;
  while (isalnum((unsigned char)*p) || *p == '_') p++;
  if (p == k) return false;
  while (isspace((unsigned char)*p)) p++;
  return *p == '=';
}

static bool key_is_password(const char *key, size_t len) {
  static const char word[] = "password";
  size_t wl = sizeof word - 1;
  return len >= wl && strncmp(key + len - wl, word, wl) == 0;
}

typedef struct {
  size_t start, len;
} span_t;

enum { MAX_SPANS = 8 };

/* URL query "k=v&k=v": the values of password keys. */
static int url_query_spans(const char *uri, size_t q, span_t *spans, int n) {
  while (uri[q] && uri[q] != '#') {
    if (n == MAX_SPANS - 1) { /* out of spans: hide the rest */
      spans[n++] = (span_t){q, strlen(uri) - q};
      break;
    }
    size_t k = q;
    while (uri[q] && uri[q] != '=' && uri[q] != '&' && uri[q] != '#') q++;
    size_t klen = q - k;
    if (uri[q] != '=') {
      if (uri[q] == '&') q++;
      continue;
    }
    size_t v = ++q;
    while (uri[q] && uri[q] != '&' && uri[q] != '#') q++;
    if (key_is_password(uri + k, klen)) spans[n++] = (span_t){v, q - v};
    if (uri[q] == '&') q++;
  }
  return n;
}

/* scheme://[user[:password]@]host...[?query]: the password is what follows
 * the first ':' of the user info, which ends at the last '@' before the
 * query (a password may hold '/' or '@' when not percent-encoded). */
static int url_spans(const char *uri, size_t auth, span_t *spans) {
  int n = 0;
  const char *qmark = strchr(uri + auth, '?');
  size_t end = qmark ? (size_t)(qmark - uri) : strlen(uri);
  size_t at = 0;
  for (size_t i = auth; i < end; i++)
    if (uri[i] == '@') at = i;
  if (at) {
    const char *colon = memchr(uri + auth, ':', at - auth);
    if (colon) {
      size_t s = (size_t)(colon - uri) + 1;
      spans[n++] = (span_t){s, at - s};
    }
  }
  if (qmark) n = url_query_spans(uri, end + 1, spans, n);
  return n;
}

/* libpq "key = value key='quoted \' value'": the values of password keys,
 * quotes included (so the redaction reads password=***). Text that does not
 * parse as key=value pairs is hidden to its end: libpq would refuse it, but
 * a password could be anywhere in it. */
static int conninfo_spans(const char *uri, span_t *spans) {
  int n = 0;
  size_t i = 0, end = strlen(uri);
  while (i < end) {
    while (isspace((unsigned char)uri[i])) i++;
    size_t k = i;
    while (uri[i] && uri[i] != '=' && !isspace((unsigned char)uri[i])) i++;
    size_t klen = i - k;
    while (isspace((unsigned char)uri[i])) i++;
    if (uri[i] != '=' || n == MAX_SPANS - 1) { /* malformed, or out of spans */
      if (uri[k]) spans[n++] = (span_t){k, end - k};
      break;
    }
    i++;
    while (isspace((unsigned char)uri[i])) i++;
    size_t v = i;
    if (uri[i] == '\'') {
      for (i++; uri[i] && uri[i] != '\''; i++)
        if (uri[i] == '\\' && uri[i + 1]) i++;
      if (uri[i] == '\'') i++;
    } else {
      while (uri[i] && !isspace((unsigned char)uri[i])) i++;
    }
    if (key_is_password(uri + k, klen)) spans[n++] = (span_t){v, i - v};
  }
  return n;
}

/* Where the passwords are in uri; returns how many (at most MAX_SPANS). */
static int uri_password_spans(const char *uri, span_t spans[MAX_SPANS]) {
  size_t slen = uri_scheme_len(uri);
  if (slen && strncmp(uri + slen, "://", 3) == 0) return url_spans(uri, slen + 3, spans);
  if (!slen && uri_is_conninfo(uri)) return conninfo_spans(uri, spans);
  return 0;
}

void db_uri_redact(char *out, size_t cap, const char *uri) {
  if (cap == 0) return;
  span_t spans[MAX_SPANS];
  int n = uri ? uri_password_spans(uri, spans) : 0;
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  size_t pos = 0;
  for (int i = 0; i < n; i++) {
    mlc_sb_appendn(&sb, uri + pos, spans[i].start - pos);
    mlc_sb_append(&sb, "***");
    pos = spans[i].start + spans[i].len;
  }
  if (uri) mlc_sb_append(&sb, uri + pos);
  /* On allocation failure say nothing rather than risk the raw text. */
  snprintf(out, cap, "%s", sb.failed ? "<uri>" : mlc_sb_str(&sb));
  mlc_sb_free(&sb);
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = (char)tolower((unsigned char)c);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decodes s[0..len) into out (NUL-terminated, at most len bytes). */
static void percent_decode(char *out, const char *s, size_t len) {
  size_t o = 0;
  for (size_t i = 0; i < len; i++) {
    int hi, lo;
    if (s[i] == '%' && i + 2 < len && (hi = hex_digit(s[i + 1])) >= 0 &&
        (lo = hex_digit(s[i + 2])) >= 0) {
      out[o++] = (char)(hi * 16 + lo);
      i += 2;
    } else {
      out[o++] = s[i];
    }
  }
  out[o] = '\0';
}

/* Replaces every occurrence of needle in sb's text with "***". */
static void replace_all(mlc_strbuf_t *sb, const char *needle) {
  size_t nlen = strlen(needle);
  if (nlen == 0 || sb->failed || !strstr(mlc_sb_str(sb), needle)) return;
  mlc_strbuf_t out;
  mlc_sb_init(&out);
  const char *p = mlc_sb_str(sb), *hit;
  while ((hit = strstr(p, needle)) != NULL) {
    mlc_sb_appendn(&out, p, (size_t)(hit - p));
    mlc_sb_append(&out, "***");
    p = hit + nlen;
  }
  mlc_sb_append(&out, p);
  mlc_sb_free(sb);
  *sb = out;
}

void db_error_scrub(const char *uri) {
  span_t spans[MAX_SPANS];
  int n = uri ? uri_password_spans(uri, spans) : 0;
  if (n == 0 || !*mlc_error_last()) return;
  int code = mlc_error_last_code();
  mlc_strbuf_t msg;
  mlc_sb_init(&msg);
  mlc_sb_append(&msg, mlc_error_last());
  for (int i = 0; i < n && !msg.failed; i++) {
    size_t len = spans[i].len;
    char *raw = mlc_malloc(len + 1), *dec = mlc_malloc(len + 1);
    if (raw && dec) {
      memcpy(raw, uri + spans[i].start, len);
      raw[len] = '\0';
      replace_all(&msg, raw);
      percent_decode(dec, raw, len);
      replace_all(&msg, dec);
    } else {
      msg.failed = true; /* withhold the message rather than risk it */
    }
    mlc_free(raw);
    mlc_free(dec);
  }
  mlc_error_set(code, "%s", msg.failed ? "(details withheld: they held a password)"
                                       : mlc_sb_str(&msg));
  mlc_sb_free(&msg);
}

const db_backend_t *db_backend_for_uri(const char *uri) {
  if (!uri) uri = DB_DEFAULT_URI;
  size_t slen = uri_scheme_len(uri);
  const char *want = NULL;
  if (!slen) {
    want = uri_is_conninfo(uri) ? "postgresql" : "file";
  } else if (slen == 4 && strncmp(uri, "file", 4) == 0) {
    want = "file";
  } else if ((slen == 10 && strncmp(uri, "postgresql", 10) == 0) ||
             (slen == 8 && strncmp(uri, "postgres", 8) == 0)) {
    want = "postgresql";
  }
  char shown[512];
  db_uri_redact(shown, sizeof shown, uri);
  if (!want) {
    mlc_error_set(MLC_EINVAL,
                  "unknown database scheme '%.*s' in '%s' (want file:DIR, postgresql://... or a "
                  "libpq key=value string)",
                  (int)slen, uri, shown);
    return NULL;
  }
  for (int i = 0; db_backends[i]; i++)
    if (strcmp(db_backends[i]->scheme, want) == 0) return db_backends[i];
  mlc_error_set(MLC_EUNSUPPORTED, "'%s': this build has no %s database backend", shown, want);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Records: content id, median, checks, orders                              */
/* ------------------------------------------------------------------------ */

static void hash_u64(XXH64_state_t *st, uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
  XXH64_update(st, b, sizeof b);
}

static void hash_str(XXH64_state_t *st, const char *s) {
  if (!s) s = "";
  size_t len = strlen(s);
  hash_u64(st, (uint64_t)len);
  if (len) XXH64_update(st, s, len);
}

/* The state lives on the stack so finishing a record cannot fail. */
void db_record_finish(db_record_t *r) {
  const char *trace = r->trace_json ? r->trace_json : "";
  r->trace_hash = mlc_hash64(trace, strlen(trace), 0);
  XXH64_state_t st;
  XXH64_reset(&st, 0);
  hash_str(&st, "mlc-record-v1");
  hash_u64(&st, r->workload_key);
  hash_str(&st, r->target);
  hash_str(&st, r->device_key);
  hash_u64(&st, r->trace_hash);
  int n = r->nrun_secs > 0 && r->run_secs ? r->nrun_secs : 0;
  hash_u64(&st, (uint64_t)n);
  for (int i = 0; i < n; i++) {
    uint64_t bits;
    memcpy(&bits, &r->run_secs[i], sizeof bits);
    hash_u64(&st, bits);
  }
  hash_str(&st, mlc_error_kind_name(r->error_kind));
  hash_str(&st, r->error_msg);
  hash_str(&st, r->worker_id);
  mlc_hash_hex(XXH64_digest(&st), r->id);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The k-th smallest (0-based) without extra memory: O(n^2), only used when
 * a copy could not be allocated. */
static double kth_smallest(const double *v, int n, int k) {
  for (int i = 0; i < n; i++) {
    int less = 0, equal = 0;
    for (int j = 0; j < n; j++) {
      less += v[j] < v[i];
      equal += v[j] == v[i];
    }
    if (less <= k && k < less + equal) return v[i];
  }
  return v[0];
}

/* Even counts take the mean of the two middle values. */
double db_record_median(const db_record_t *r) {
  int n = r->nrun_secs;
  if (r->error_kind != MLC_ERROR_KIND_NONE || n <= 0 || !r->run_secs) return INFINITY;
  double small[64];
  double *v = n <= 64 ? small : mlc_malloc((size_t)n * sizeof *v);
  if (!v)
    return (kth_smallest(r->run_secs, n, (n - 1) / 2) + kth_smallest(r->run_secs, n, n / 2)) / 2;
  memcpy(v, r->run_secs, (size_t)n * sizeof *v);
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  double m = (v[(n - 1) / 2] + v[n / 2]) / 2;
  if (v != small) mlc_free(v);
  return m;
}

static bool is_hex16(const char *s) {
  for (int i = 0; i < 16; i++)
    if (hex_digit(s[i]) < 0 || isupper((unsigned char)s[i])) return false;
  return s[16] == '\0';
}

int db_record_check(const db_record_t *r) {
  if (!is_hex16(r->id))
    return mlc_error_set(MLC_EINVAL, "record has no content id (call db_record_finish)");
  if (!r->target || !*r->target) return mlc_error_set(MLC_EINVAL, "record %s has no target", r->id);
  if (!r->device_key) return mlc_error_set(MLC_EINVAL, "record %s has no device key", r->id);
  if (!r->trace_json) return mlc_error_set(MLC_EINVAL, "record %s has no trace", r->id);
  if ((unsigned)r->error_kind >= MLC_ERROR_KIND_COUNT)
    return mlc_error_set(MLC_EINVAL, "record %s has an unknown error kind %d", r->id,
                         (int)r->error_kind);
  if (r->nrun_secs < 0 || (r->nrun_secs > 0 && !r->run_secs))
    return mlc_error_set(MLC_EINVAL, "record %s has a bad run_secs array", r->id);
  if (r->error_kind == MLC_ERROR_KIND_NONE && r->nrun_secs == 0)
    return mlc_error_set(MLC_EINVAL, "record %s is a measurement without run times", r->id);
  /* Year 1970 to 9999: what every backend can store and print as ISO 8601. */
  if (r->created_at_us < 0 || r->created_at_us >= INT64_C(253402300800000000))
    return mlc_error_set(MLC_EINVAL, "record %s: created_at %lld us is outside 1970..9999", r->id,
                         (long long)r->created_at_us);
  for (int i = 0; i < r->nrun_secs; i++)
    if (!isfinite(r->run_secs[i]) || r->run_secs[i] < 0)
      return mlc_error_set(MLC_EINVAL, "record %s: run_secs[%d] = %g is not a time", r->id, i,
                           r->run_secs[i]);
  return MLC_OK;
}

int db_record_cmp_time(const db_record_t *a, const db_record_t *b) {
  double ma = db_record_median(a), mb = db_record_median(b);
  if (ma != mb) return ma < mb ? -1 : 1;
  return strcmp(a->id, b->id);
}

int db_record_cmp_newest(const db_record_t *a, const db_record_t *b) {
  if (a->created_at_us != b->created_at_us) return a->created_at_us > b->created_at_us ? -1 : 1;
  return strcmp(a->id, b->id);
}

/* ------------------------------------------------------------------------ */
/* Results and stats                                                         */
/* ------------------------------------------------------------------------ */

int db_result_new(db_result_t **out) {
  *out = NULL;
  mlc_arena_t *arena = mlc_arena_new();
  db_result_t *r = arena ? mlc_arena_alloc(arena, sizeof *r) : NULL;
  if (!r) {
    mlc_arena_free(arena);
    return mlc_error_set(MLC_ENOMEM, "out of memory for a query result");
  }
  r->arena = arena;
  *out = r;
  return MLC_OK;
}

void db_result_free(db_result_t *r) {
  if (r) mlc_arena_free(r->arena); /* the struct lives in its own arena */
}

/* Arrays kept in an arena grow to 8, 16, 32...: a count of 0 or a power of two
 * from 8 up means the array is full. */
static bool arena_array_full(int n) { return n == 0 || (n >= 8 && (n & (n - 1)) == 0); }

static void *arena_array_room(mlc_arena_t *a, void *arr, int n, size_t elem) {
  if (!arena_array_full(n)) return arr;
  size_t cap = n == 0 ? 8 : (size_t)n * 2;
  return mlc_arena_grow(a, arr, (size_t)n, cap, elem);
}

static const char *arena_str(mlc_arena_t *a, const char *s) {
  return mlc_arena_strdup(a, s ? s : "");
}

db_record_t *db_result_push(db_result_t *r) {
  db_record_t *recs = arena_array_room(r->arena, r->records, r->nrecords, sizeof *recs);
  if (!recs) return NULL;
  r->records = recs;
  memset(&recs[r->nrecords], 0, sizeof *recs);
  return &recs[r->nrecords++];
}

int db_result_add_record(db_result_t *r, const db_record_t *src) {
  db_record_t *d = db_result_push(r);
  if (!d) return mlc_error_set(MLC_ENOMEM, "out of memory for a query result");
  *d = *src;
  d->target = arena_str(r->arena, src->target);
  d->device_key = arena_str(r->arena, src->device_key);
  d->device_json = arena_str(r->arena, src->device_json ? src->device_json : "{}");
  d->trace_json = arena_str(r->arena, src->trace_json);
  d->error_msg = arena_str(r->arena, src->error_msg);
  d->compiler_version = arena_str(r->arena, src->compiler_version);
  d->worker_id = arena_str(r->arena, src->worker_id);
  d->run_secs = src->nrun_secs > 0 ? mlc_arena_memdup(r->arena, src->run_secs,
                                                      (size_t)src->nrun_secs * sizeof(double))
                                   : NULL;
  if (mlc_arena_failed(r->arena))
    return mlc_error_set(MLC_ENOMEM, "out of memory for a query result");
  return MLC_OK;
}

int db_result_add_workload(db_result_t *r, uint64_t key, const char *name, const char *tvmscript) {
  db_workload_t *w = arena_array_room(r->arena, r->workloads, r->nworkloads, sizeof *w);
  if (!w) return mlc_error_set(MLC_ENOMEM, "out of memory for a query result");
  r->workloads = w;
  w[r->nworkloads] =
      (db_workload_t){key, arena_str(r->arena, name), arena_str(r->arena, tvmscript)};
  if (mlc_arena_failed(r->arena))
    return mlc_error_set(MLC_ENOMEM, "out of memory for a query result");
  r->nworkloads++;
  return MLC_OK;
}

int db_stats_begin(db_stats_t *s) {
  memset(s, 0, sizeof *s);
  s->arena = mlc_arena_new();
  return s->arena ? MLC_OK : mlc_error_set(MLC_ENOMEM, "out of memory for statistics");
}

void db_stats_free(db_stats_t *s) {
  if (!s) return;
  mlc_arena_free(s->arena);
  memset(s, 0, sizeof *s);
}

int db_stats_add_target(db_stats_t *s, const char *target, int64_t n) {
  int lo = 0, hi = s->ntargets;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (strcmp(s->targets[mid], target) < 0) lo = mid + 1;
    else hi = mid;
  }
  if (lo < s->ntargets && strcmp(s->targets[lo], target) == 0) {
    s->records_per_target[lo] += n;
    return MLC_OK;
  }
  const char **t = arena_array_room(s->arena, (void *)s->targets, s->ntargets, sizeof *t);
  int64_t *c = arena_array_room(s->arena, s->records_per_target, s->ntargets, sizeof *c);
  const char *copy = mlc_arena_strdup(s->arena, target);
  if (!t || !c || !copy) return mlc_error_set(MLC_ENOMEM, "out of memory for statistics");
  memmove(t + lo + 1, t + lo, (size_t)(s->ntargets - lo) * sizeof *t);
  memmove(c + lo + 1, c + lo, (size_t)(s->ntargets - lo) * sizeof *c);
  t[lo] = copy;
  c[lo] = n;
  s->targets = t;
  s->records_per_target = c;
  s->ntargets++;
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* The public API: checks, then the backend                                 */
/* ------------------------------------------------------------------------ */

static int open_uri(db_t **out, const char *uri, bool create) {
  *out = NULL;
  if (!uri) uri = DB_DEFAULT_URI;
  if (!*uri)
    return mlc_error_set(MLC_EINVAL, "empty database URI (want file:DIR or postgresql://...)");
  const db_backend_t *backend = db_backend_for_uri(uri);
  if (!backend) return mlc_error_last_code();
  db_t *db = NULL;
  int rc = backend->open(&db, uri, create);
  if (rc != MLC_OK) {
    db_error_scrub(uri);
    return rc;
  }
  db->backend = backend;
  if (uri_scheme_len(uri) == 0 && strcmp(backend->scheme, "file") == 0)
    snprintf(db->uri_redacted, sizeof db->uri_redacted, "file:%s", uri);
  else
    db_uri_redact(db->uri_redacted, sizeof db->uri_redacted, uri);
  *out = db;
  return MLC_OK;
}

int db_open(db_t **out, const char *uri) { return open_uri(out, uri, true); }

int db_open_existing(db_t **out, const char *uri) { return open_uri(out, uri, false); }

void db_close(db_t *db) {
  if (db) db->backend->close(db);
}

const char *db_uri(const db_t *db) { return db ? db->uri_redacted : ""; }

/* Adds the database to a failing call's detail, so a program's message says
 * which database failed without the caller repeating it. */
static int with_uri(const db_t *db, int rc) {
  if (rc != MLC_OK && rc != MLC_ENOMEM) mlc_error_prefix("%s", db->uri_redacted);
  return rc;
}

int db_init(db_t *db) {
  if (!db) return mlc_error_set(MLC_EINVAL, "db_init: no database");
  return with_uri(db, db->backend->init(db));
}

int db_schema_version(db_t *db, int *current, int *supported) {
  int cur = 0, sup = 0;
  if (current) *current = 0;
  if (supported) *supported = 0;
  if (!db) return mlc_error_set(MLC_EINVAL, "db_schema_version: no database");
  int rc = db->backend->schema_version(db, &cur, &sup);
  if (rc != MLC_OK) return with_uri(db, rc);
  if (current) *current = cur;
  if (supported) *supported = sup;
  return MLC_OK;
}

int db_commit_workload(db_t *db, uint64_t key, const char *name, const char *tvmscript) {
  if (!db || key == 0 || !tvmscript)
    return mlc_error_set(MLC_EINVAL,
                         "db_commit_workload: need a database, a nonzero key and a script");
  return with_uri(db, db->backend->commit_workload(db, key, name ? name : "", tvmscript));
}

int db_commit_records(db_t *db, const db_record_t *records, int n) {
  if (!db || n < 0 || (n > 0 && !records))
    return mlc_error_set(MLC_EINVAL, "db_commit_records: bad arguments");
  for (int i = 0; i < n; i++) {
    int rc = db_record_check(&records[i]);
    if (rc != MLC_OK) return rc;
  }
  if (n == 0) return MLC_OK;
  return with_uri(db, db->backend->commit_records(db, records, n));
}

int db_top_k(db_t *db, db_result_t **out, uint64_t key, const char *target, int k) {
  *out = NULL;
  if (!db || key == 0 || !target || k < 0)
    return mlc_error_set(MLC_EINVAL,
                         "db_top_k: need a database, a workload key, a target and k >= 0");
  if (k == 0) return db_result_new(out);
  db_filter_t f = {.workload_key = key, .target = target, .only_ok = 1, .limit = k};
  return with_uri(db, db->backend->query(db, out, &f, 1));
}

int db_best(db_t *db, db_result_t **out, bool *found, uint64_t key, const char *target) {
  *found = false;
  int rc = db_top_k(db, out, key, target, 1);
  if (rc != MLC_OK) return rc;
  *found = (*out)->nrecords > 0;
  if (!*found) { /* nothing to hand out: the caller need not free */
    db_result_free(*out);
    *out = NULL;
  }
  return MLC_OK;
}

int db_records(db_t *db, db_result_t **out, const db_filter_t *filter) {
  *out = NULL;
  db_filter_t all = {0};
  if (!db || (filter && (filter->limit < 0 || filter->only_ok < -1 || filter->only_ok > 1)))
    return mlc_error_set(MLC_EINVAL, "db_records: bad arguments");
  /* Backends index ids as stored (lower-case); a prefix or other spelling
   * would silently match nothing, so it is refused here. */
  if (filter && filter->id && !is_hex16(filter->id))
    return mlc_error_set(MLC_EINVAL,
                         "db_records: '%.32s' is not a record id (16 lower-case hex digits)",
                         filter->id);
  return with_uri(db, db->backend->query(db, out, filter ? filter : &all, 0));
}

int db_workloads(db_t *db, db_result_t **out) {
  *out = NULL;
  if (!db) return mlc_error_set(MLC_EINVAL, "db_workloads: no database");
  return with_uri(db, db->backend->workloads(db, out, 0));
}

int db_workload(db_t *db, db_result_t **out, uint64_t key) {
  *out = NULL;
  if (!db || key == 0) return mlc_error_set(MLC_EINVAL, "db_workload: need a database and a key");
  return with_uri(db, db->backend->workloads(db, out, key));
}

int db_stats(db_t *db, db_stats_t *out) {
  memset(out, 0, sizeof *out);
  if (!db) return mlc_error_set(MLC_EINVAL, "db_stats: no database");
  int rc = db->backend->stats(db, out);
  if (rc != MLC_OK) db_stats_free(out);
  return with_uri(db, rc);
}

static int lease_args(const db_t *db, uint64_t key, const char *target, const char *owner) {
  if (!db || key == 0 || !target || !*target || !owner || !*owner)
    return mlc_error_set(MLC_EINVAL,
                         "lease: need a database, a workload key, a target and an owner");
  return MLC_OK;
}

int db_lease_acquire(db_t *db, bool *got, uint64_t key, const char *target, const char *owner,
                     int ttl_s) {
  *got = false;
  int rc = lease_args(db, key, target, owner);
  if (rc != MLC_OK) return rc;
  if (ttl_s <= 0) return mlc_error_set(MLC_EINVAL, "lease: ttl must be positive, not %d s", ttl_s);
  return with_uri(db, db->backend->lease(db, got, key, target, owner, ttl_s, false));
}

int db_lease_release(db_t *db, uint64_t key, const char *target, const char *owner) {
  int rc = lease_args(db, key, target, owner);
  if (rc != MLC_OK) return rc;
  bool got = false;
  return with_uri(db, db->backend->lease(db, &got, key, target, owner, 0, true));
}

int db_lease_holder(db_t *db, bool *held, char *owner, size_t len, double *secs_left, uint64_t key,
                    const char *target) {
  if (held) *held = false;
  if (owner && len) owner[0] = '\0';
  if (secs_left) *secs_left = 0;
  if (!held || !owner || len == 0 || !secs_left) return mlc_error_set(MLC_EINVAL, "lease holder: NULL output");
  int rc = lease_args(db, key, target, "-");
  if (rc != MLC_OK) return rc;
  return with_uri(db, db->backend->lease_holder(db, held, owner, len, secs_left, key, target));
}

int db_prune(db_t *db, int64_t *removed, int keep) {
  int64_t dummy = 0;
  if (!removed) removed = &dummy;
  *removed = 0;
  if (!db || keep < 0) return mlc_error_set(MLC_EINVAL, "db_prune: need a database and keep >= 0");
  return with_uri(db, db->backend->prune(db, removed, keep));
}
