/*
 * status.c - status messages, the per-thread last error, and panics.
 *
 * Functions report failure by returning a negative mlc_status_t; the human
 * detail ("unknown option '-foo' in target ...") goes into a per-thread buffer
 * so that threads do not see each other's errors and no allocation is needed
 * to report one (out-of-memory must be reportable too). Callers climbing the
 * stack add context with mlc_error_prefix.
 */
#include "support/support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Long enough for a path plus a sentence; longer details are truncated. */
#define MLC_ERROR_MAX 1024

typedef struct {
  int code;
  char msg[MLC_ERROR_MAX];
} last_error_t;

static _Thread_local last_error_t last_error;

const char *mlc_status_str(int status) {
  switch (status) {
#define MLC_STATUS_CASE_(name, value, msg) \
  case value:                              \
    return msg;
    MLC_STATUS_MAP(MLC_STATUS_CASE_)
#undef MLC_STATUS_CASE_
  }
  return "unknown status";
}

/* The arguments may point into last_error.msg itself (re-setting an error with
 * its own text is common), so format into a scratch buffer first. */
int mlc_error_setv(int code, const char *fmt, va_list ap) {
  char tmp[MLC_ERROR_MAX];
  if (fmt)
    vsnprintf(tmp, sizeof tmp, fmt, ap);
  else
    snprintf(tmp, sizeof tmp, "%s", mlc_status_str(code));
  memcpy(last_error.msg, tmp, sizeof tmp);
  last_error.code = code;
  return code;
}

int mlc_error_set(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mlc_error_setv(code, fmt, ap);
  va_end(ap);
  return code;
}

/* Appends as much of s as fits (details are cut, never overflowed). */
static void append_cut(char *dst, size_t *used, const char *s) {
  size_t n = strlen(s), room = MLC_ERROR_MAX - 1 - *used;
  if (n > room) n = room;
  memcpy(dst + *used, s, n);
  *used += n;
  dst[*used] = '\0';
}

void mlc_error_prefix(const char *fmt, ...) {
  char prefix[MLC_ERROR_MAX];
  char joined[MLC_ERROR_MAX];
  size_t used = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  append_cut(joined, &used, prefix);
  if (last_error.msg[0]) {
    append_cut(joined, &used, ": ");
    append_cut(joined, &used, last_error.msg);
  }
  memcpy(last_error.msg, joined, used + 1);
}

const char *mlc_error_last(void) { return last_error.msg; }

const char *mlc_error_or(const char *fallback) { return last_error.msg[0] ? last_error.msg : fallback; }

int mlc_error_last_code(void) { return last_error.code; }

void mlc_error_clear(void) {
  last_error.code = MLC_OK;
  last_error.msg[0] = '\0';
}

void mlc_panic_at(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  fflush(stdout);
  fprintf(stderr, "%s: internal error: %s:%d: ", mlc_log_program(), file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(stderr);
  abort();
}

/* ------------------------------------------------------------------------ */
/* Error kinds of measurements                                               */
/* ------------------------------------------------------------------------ */

static const char *const error_kind_names[] = {
#define ROW_(e, name, what) name,
    MLC_ERROR_KINDS(ROW_)
#undef ROW_
};

const char *mlc_error_kind_name(mlc_error_kind_t k) {
  return (unsigned)k < MLC_ERROR_KIND_COUNT ? error_kind_names[k] : "";
}

int mlc_error_kind_parse(mlc_error_kind_t *out, const char *name) {
  for (int i = 0; i < MLC_ERROR_KIND_COUNT; i++) {
    if (strcmp(error_kind_names[i], name) == 0) {
      *out = (mlc_error_kind_t)i;
      return MLC_OK;
    }
  }
  return mlc_error_set(MLC_EINVAL, "unknown error kind '%s'", name);
}
