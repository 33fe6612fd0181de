/*
 * strbuf.c - a growable NUL-terminated string (printers, error texts, JSON).
 *
 * Allocation failure is sticky: once an append fails, `failed` is set, later
 * appends do nothing and mlc_sb_take returns NULL. A printer can therefore
 * append without checking each call and test once at the end.
 */
#include "support/support.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

void mlc_sb_init(mlc_strbuf_t *sb) {
  sb->data = NULL;
  sb->len = sb->cap = 0;
  sb->failed = false;
}

void mlc_sb_free(mlc_strbuf_t *sb) {
  mlc_free(sb->data);
  mlc_sb_init(sb);
}

/* Resetting discards the contents, and with them any earlier failure. */
void mlc_sb_reset(mlc_strbuf_t *sb) {
  sb->len = 0;
  sb->failed = false;
  if (sb->data) sb->data[0] = '\0';
}

/* Room for `extra` more characters plus the NUL; false (and sticky) if not. */
static bool sb_reserve(mlc_strbuf_t *sb, size_t extra) {
  if (sb->failed) return false;
  if (extra > SIZE_MAX - sb->len - 1) goto fail;
  size_t need = sb->len + extra + 1;
  if (need <= sb->cap) return true;
  size_t cap = sb->cap ? sb->cap : 64;
  while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
  char *p = mlc_realloc(sb->data, cap);
  if (!p) goto fail;
  sb->data = p;
  sb->cap = cap;
  return true;
fail:
  sb->failed = true;
  return false;
}

void mlc_sb_appendn(mlc_strbuf_t *sb, const char *s, size_t n) {
  if (!sb_reserve(sb, n)) return;
  memcpy(sb->data + sb->len, s, n);
  sb->len += n;
  sb->data[sb->len] = '\0';
}

void mlc_sb_append(mlc_strbuf_t *sb, const char *s) { mlc_sb_appendn(sb, s, strlen(s)); }

void mlc_sb_putc(mlc_strbuf_t *sb, char c) { mlc_sb_appendn(sb, &c, 1); }

void mlc_sb_indent(mlc_strbuf_t *sb, int spaces) {
  if (spaces <= 0 || !sb_reserve(sb, (size_t)spaces)) return;
  memset(sb->data + sb->len, ' ', (size_t)spaces);
  sb->len += (size_t)spaces;
  sb->data[sb->len] = '\0';
}

/* Formats straight into the spare capacity; only when that is too small does
 * it grow and format a second time. */
void mlc_sb_vprintf(mlc_strbuf_t *sb, const char *fmt, va_list ap) {
  if (sb->failed) return;
  va_list ap2;
  va_copy(ap2, ap);
  size_t room = sb->cap > sb->len ? sb->cap - sb->len : 0;
  int n = vsnprintf(room ? sb->data + sb->len : NULL, room, fmt, ap);
  if (n < 0) {
    sb->failed = true;
  } else if ((size_t)n < room) {
    sb->len += (size_t)n;
  } else if (sb_reserve(sb, (size_t)n)) {
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap2);
    sb->len += (size_t)n;
  }
  if (sb->failed && sb->data) sb->data[sb->len] = '\0'; /* drop a truncated attempt */
  va_end(ap2);
}

void mlc_sb_printf(mlc_strbuf_t *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mlc_sb_vprintf(sb, fmt, ap);
  va_end(ap);
}

const char *mlc_sb_str(const mlc_strbuf_t *sb) { return sb->data ? sb->data : ""; }

char *mlc_sb_take(mlc_strbuf_t *sb) {
  char *s = NULL;
  if (!sb->failed) s = sb->data ? sb->data : mlc_strdup("");
  if (sb->failed) mlc_free(sb->data);
  mlc_sb_init(sb);
  return s;
}
